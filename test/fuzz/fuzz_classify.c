/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the receive classifier. The first input byte picks how the frame is laid
 * out (segment length, exact-size or pool buffers, burst length, NO_ICRC); in the second, bit 0
 * asks for the IPv4 header checksum and bit 1 for the ICRC to be made right, so that mutations
 * get past them to the checks behind; the rest is the frame. Every available implementation
 * classifies it, in a burst of that one packet so that the vector loop sees it, then once more
 * with the ICRC left pending and checked after (ROCE_CLASSIFY_DEFER_ICRC, roce_classify_icrc()),
 * which must give the same metadata and counts. Aborts when they disagree, when the counters are off, or when a verdict breaks what the transport relies
 * on (offsets inside the frame, headers in the first segment, known opcode, pad rules, ICRC as
 * the reference model computes it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_vect.h>

#include "exact_mbuf.h"
#include "roce_test.h"
#include "roce_wire.h"
#include "wire_ref.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FRAME_MAX 8192
#define MAX_SEGS 16
#define BURST_MAX 6

#define FUZZ_ASSERT(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_classify: %s: ", #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

static struct rte_mempool *pool;
static struct rte_mempool *ext_pool;
static roce_classify_fn impl_fn[ROCE_CLASSIFY_IMPL_NUM];
static unsigned int nb_impl;

/* Selector byte: bits 0-3 segment length, 4 exact buffers, 5 NO_ICRC, 6-7 burst length. */
static const uint16_t seg_lens[16] = { 0, 0, 0, 0, 1, 7, 14, 18, 34, 42, 54, 58, 64, 66, 100, 256 };
static const uint8_t bursts[4] = { 1, 4, 5, 6 };

struct layout {
	uint32_t seg_len;
	int exact;
	unsigned int flags;
	unsigned int burst;
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const enum roce_classify_impl all[] = {
		ROCE_CLASSIFY_SCALAR, ROCE_CLASSIFY_AVX2, ROCE_CLASSIFY_AVX512,
	};
	unsigned int i;

	RTE_SET_USED(argc);
	rt_eal_init((*argv)[0]);
	/* The EAL stops at 256 bits unless told otherwise; fuzz the AVX-512 version too. */
	rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	for (i = 0; i < RTE_DIM(all); i++)
		if (roce_classify_get(all[i]) != NULL)
			impl_fn[nb_impl++] = roce_classify_get(all[i]);
	pool = rt_pool(4 * MAX_SEGS, FRAME_MAX);
	ext_pool = rt_pool(4 * MAX_SEGS, 0);
	return 0;
}

static struct layout
layout_of(uint8_t sel, uint32_t len)
{
	struct layout l = {
		.seg_len = seg_lens[sel & 15],
		.exact = sel >> 4 & 1,
		.flags = sel & 0x20 ? ROCE_CLASSIFY_NO_ICRC : 0,
		.burst = bursts[sel >> 6],
	};

	/* Bound the chain: tiny segments of a long frame would empty the pool. */
	if (l.seg_len != 0 && len / l.seg_len >= MAX_SEGS)
		l.seg_len = len / (MAX_SEGS - 1) + 1;
	return l;
}

static struct rte_mbuf *
make_mbuf(const struct layout *l, const uint8_t *data, uint32_t len)
{
	struct rte_mbuf *m = l->exact ? exact_mbuf(ext_pool, data, len, l->seg_len) :
		rt_mbuf(pool, data, len, l->seg_len);

	FUZZ_ASSERT(m != NULL, "out of mbufs (%u bytes, segments of %u)", len, l->seg_len);
	return m;
}

static void
check_counts(const struct roce_wire_stats *st, const struct roce_pkt_meta *meta,
		unsigned int n, uint16_t ret)
{
	uint64_t types = 0, drops = 0;
	unsigned int i;

	FUZZ_ASSERT(meta->type < ROCE_PKT_TYPE_NUM && meta->reason < ROCE_DROP_NUM,
			"type %u reason %u", meta->type, meta->reason);
	for (i = 0; i < ROCE_PKT_TYPE_NUM; i++)
		types += st->type[i];
	for (i = 0; i < ROCE_DROP_NUM; i++)
		drops += st->drop[i];
	FUZZ_ASSERT(types == n && drops == n && st->type[meta->type] == n &&
			st->drop[meta->reason] == n, "counters");
	FUZZ_ASSERT(ret == (meta->type == ROCE_PKT_ROCE ? n : 0), "returned %u", ret);
	FUZZ_ASSERT((meta->type == ROCE_PKT_DROP) == (meta->reason != ROCE_DROP_NONE),
			"type %u with reason %u", meta->type, meta->reason);
}

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)rd16(p) << 16 | rd16(p + 2);
}

/* What a RoCE verdict promises about the frame @b of @len bytes. */
static void
check_roce(const struct rte_mbuf *m, const struct roce_pkt_meta *meta, const uint8_t *b,
		uint32_t len, unsigned int flags)
{
	int ipv6 = !!(meta->flags & ROCE_PKT_F_IPV6);
	uint32_t l3 = meta->l3_off, l4 = meta->l4_off, udp_len, pad;
	const struct ref_op *op = ref_op(meta->opcode);
	const uint8_t *bth;

	FUZZ_ASSERT(op != NULL && meta->mask == roce_opcode_info[meta->opcode].mask &&
			meta->mask == ref_mask(op), "opcode 0x%02x mask 0x%x", meta->opcode,
			meta->mask);
	FUZZ_ASSERT(l3 == (meta->flags & ROCE_PKT_F_VLAN ? 18u : 14u) &&
			l4 == l3 + (ipv6 ? 40u : 20u), "offsets %u/%u", l3, l4);
	FUZZ_ASSERT(meta->payload_off == l4 + 8 + ref_hdrs_len(op->hdrs) &&
			meta->payload_off <= m->data_len, "payload_off %u", meta->payload_off);
	bth = b + l4 + 8;
	udp_len = rd16(b + l4 + 4);
	pad = bth[1] >> 4 & 3;
	FUZZ_ASSERT(rd16(b + l4 + 2) == ROCE_UDP_PORT, "UDP port %u", rd16(b + l4 + 2));
	FUZZ_ASSERT(meta->payload_off + meta->payload_len + pad + ROCE_ICRC_LEN == l4 + udp_len &&
			l4 + udp_len <= len, "payload %u+%u pad %u, UDP length %u, frame %u",
			meta->payload_off, meta->payload_len, pad, udp_len, len);
	FUZZ_ASSERT((meta->payload_len + pad) % 4 == 0 &&
			(pad == 0 || (meta->mask & ROCE_M_LAST)) &&
			(meta->payload_len + pad == 0 || (meta->mask & ROCE_M_PAYLOAD)),
			"pad %u on %s with %u bytes", pad, op->name, meta->payload_len);
	FUZZ_ASSERT((bth[1] & 0x0F) == 0 && meta->opcode == bth[0] &&
			meta->qpn == (rd32(bth + 4) & 0xFFFFFF) &&
			meta->psn == (rd32(bth + 8) & 0xFFFFFF), "BTH fields");
	FUZZ_ASSERT(ipv6 ? b[l3] >> 4 == 6 : (b[l3] == 0x45 && (rd16(b + l3 + 6) & 0x3FFF) == 0),
			"IP header");
	if (!(flags & ROCE_CLASSIFY_NO_ICRC)) {
		uint32_t off = l4 + udp_len - ROCE_ICRC_LEN;
		uint32_t icrc = (uint32_t)b[off] | (uint32_t)b[off + 1] << 8 |
			(uint32_t)b[off + 2] << 16 | (uint32_t)b[off + 3] << 24;

		FUZZ_ASSERT(icrc == ref_icrc(b + l3, off - l3, ipv6), "ICRC 0x%08x", icrc);
	}
}

static void
check_verdict(const struct rte_mbuf *m, const struct roce_pkt_meta *meta, const uint8_t *b,
		uint32_t len, unsigned int flags)
{
	FUZZ_ASSERT(meta->rsvd == 0, "rsvd %u", meta->rsvd);
	if (meta->type == ROCE_PKT_ROCE) {
		check_roce(m, meta, b, len, flags);
		return;
	}
	FUZZ_ASSERT(meta->mask == 0 && meta->qpn == 0 && meta->psn == 0 && meta->opcode == 0 &&
			meta->payload_off == 0 && meta->payload_len == 0,
			"BTH fields on a %s packet", roce_pkt_type_name(meta->type));
	FUZZ_ASSERT(meta->l4_off <= len && meta->l3_off <= len, "offsets past the frame");
}

/* One implementation over a burst of the same packet; @return its metadata. */
static struct roce_pkt_meta
run_impl(roce_classify_fn fn, const struct layout *l, struct rte_mbuf *m, const uint8_t *b,
		uint32_t len)
{
	struct rte_mbuf *pkts[BURST_MAX];
	struct roce_wire_stats st;
	unsigned int k;
	uint16_t ret;

	memset(&st, 0, sizeof(st));
	/* Poison the metadata: the classifier must write every byte of it. */
	memset(roce_pkt_meta(m), 0xA5, sizeof(struct roce_pkt_meta));
	for (k = 0; k < l->burst; k++)
		pkts[k] = m;
	ret = fn(pkts, l->burst, l->flags, &st);
	check_counts(&st, roce_pkt_meta(m), l->burst, ret);
	check_verdict(m, roce_pkt_meta(m), b, len, l->flags);
	return *roce_pkt_meta(m);
}

/*
 * The packet once more with its ICRC left pending (ROCE_CLASSIFY_DEFER_ICRC) and checked
 * after (roce_classify_icrc()): the same metadata and counts as @ref, the immediate verdict.
 */
static void
run_deferred(roce_classify_fn fn, const struct layout *l, struct rte_mbuf *m,
		const struct roce_pkt_meta *ref)
{
	struct roce_pkt_meta *meta = roce_pkt_meta(m);
	struct roce_wire_stats st;
	int pending, ok;
	uint16_t ret;

	memset(&st, 0, sizeof(st));
	memset(meta, 0xA5, sizeof(*meta));
	ret = fn(&m, 1, l->flags | ROCE_CLASSIFY_DEFER_ICRC, &st);
	pending = !!(meta->flags & ROCE_PKT_F_ICRC_PENDING);
	FUZZ_ASSERT(!pending || (ret == 1 && meta->type == ROCE_PKT_ROCE &&
			meta->payload_len >= ROCE_CLASSIFY_DEFER_MIN &&
			!(l->flags & ROCE_CLASSIFY_NO_ICRC)), "pending on %u bytes, type %u",
			meta->payload_len, meta->type);
	ok = roce_classify_icrc(m, &st);
	FUZZ_ASSERT(ok == !(pending && ref->reason == ROCE_DROP_ICRC),
			"deferred check %d, immediate reason %u", ok, ref->reason);
	check_counts(&st, meta, 1, (uint16_t)(ret - !ok));
	FUZZ_ASSERT(memcmp(meta, ref, sizeof(*meta)) == 0,
			"deferred: type %u reason %u flags 0x%x, immediate: %u/%u 0x%x", meta->type,
			meta->reason, meta->flags, ref->type, ref->reason, ref->flags);
}

/* Where the IP and UDP headers are, as the classifier finds them; 0 when not IP. */
static uint32_t
find_l3(const uint8_t *b, uint32_t len, int *ipv6)
{
	uint32_t l3 = 14;
	uint16_t et;

	if (len < 18)
		return 0;
	et = rd16(b + 12);
	if (et == 0x8100 || et == 0x88A8) {
		et = rd16(b + 16);
		l3 = 18;
	}
	*ipv6 = et == 0x86DD;
	return et == 0x0800 || et == 0x86DD ? l3 : 0;
}

/* Make the IPv4 header checksum right. */
static void
fix_ip4_csum(uint8_t *b, uint32_t len)
{
	uint32_t l3, ihl, sum = 0, i;
	int ipv6;

	l3 = find_l3(b, len, &ipv6);
	if (l3 == 0 || ipv6 || len < l3 + 20)
		return;
	ihl = (b[l3] & 0x0F) * 4;
	if (ihl < 20 || l3 + ihl > len)
		return;
	b[l3 + 10] = b[l3 + 11] = 0;
	for (i = 0; i < ihl; i += 2)
		sum += rd16(b + l3 + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	b[l3 + 10] = (uint8_t)(~sum >> 8);
	b[l3 + 11] = (uint8_t)~sum;
}

/* Make the ICRC at the end of the UDP datagram right (IPv4 without options, or IPv6). */
static void
fix_icrc(uint8_t *b, uint32_t len)
{
	uint32_t l3, l4, off, icrc;
	int ipv6;

	l3 = find_l3(b, len, &ipv6);
	if (l3 == 0 || (!ipv6 && (len < l3 + 1 || b[l3] != 0x45)))
		return;
	l4 = l3 + (ipv6 ? 40 : 20);
	if (len < l4 + 8)
		return;
	off = l4 + rd16(b + l4 + 4) - ROCE_ICRC_LEN;
	if (off < l4 + 8 + 12 || off + ROCE_ICRC_LEN > len)
		return;
	icrc = ref_icrc(b + l3, off - l3, ipv6);
	b[off] = icrc & 0xFF;
	b[off + 1] = icrc >> 8 & 0xFF;
	b[off + 2] = icrc >> 16 & 0xFF;
	b[off + 3] = icrc >> 24;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t copy[FRAME_MAX], frame[FRAME_MAX];
	struct roce_pkt_meta ref, meta;
	const uint8_t *b = frame;
	uint32_t len = size - 2;
	struct rte_mbuf *m;
	struct layout l;
	unsigned int i;

	if (size < 2 || size - 2 > FRAME_MAX)
		return 0;
	memcpy(frame, data + 2, len);
	if (data[1] & 1)
		fix_ip4_csum(frame, len);
	if (data[1] & 2)
		fix_icrc(frame, len);
	l = layout_of(data[0], len);
	m = make_mbuf(&l, b, len);
	ref = run_impl(impl_fn[0], &l, m, b, len);
	run_deferred(impl_fn[0], &l, m, &ref);
	for (i = 1; i < nb_impl; i++) {
		meta = run_impl(impl_fn[i], &l, m, b, len);
		FUZZ_ASSERT(memcmp(&meta, &ref, sizeof(meta)) == 0,
				"implementation %u: type %u reason %u, scalar: %u/%u", i,
				meta.type, meta.reason, ref.type, ref.reason);
		run_deferred(impl_fn[i], &l, m, &ref);
	}
	FUZZ_ASSERT(rt_mbuf_copy(m, copy, sizeof(copy)) == len && memcmp(copy, b, len) == 0,
			"the classifier changed the packet");
	rte_pktmbuf_free(m);
	return 0;
}
