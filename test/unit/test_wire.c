/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/wire: the opcode table against the IBA reference model (wire_ref.c), every builder read
 * back by every classifier implementation in several segment layouts, chained builds (the
 * payload attached in segments, as zero-copy transmit makes them) byte for byte the copied
 * ones, the malformed-input
 * matrix (each case one exact drop reason), non-RoCE traffic, mixed bursts, and the ICRC of
 * the shared rxe captures.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_vect.h>

#include "exact_mbuf.h"
#include "roce_pcapfile.h"
#include "roce_test.h"
#include "roce_wire.h"
#include "wire_ref.h"

#define FRAME_MAX 8192
#define MBUF_ROOM 8192
#define BURST 5         /* four for the vector loop, one for its scalar tail */
#define MASK24 0xFFFFFFu
#define ETH_LEN 14
#define VLAN_LEN 4
#define UDP_LEN 8
#define BTH_LEN 12
#define ICRC_LEN 4

/* A frame under test and where its IP and UDP headers are. */
struct frame {
	uint32_t len;
	uint32_t l3;
	uint32_t l4;
	int ipv6;
	uint8_t b[FRAME_MAX];
};

/* How a frame is put into mbufs. */
struct layout {
	uint32_t seg_len;  /* bytes per segment; 0: one segment */
	uint8_t exact;     /* exact-size external buffers instead of roomy pool buffers */
};

static const struct layout default_layouts[] = { { 0, 0 }, { 0, 1 } };

static struct rte_mempool *pool;
static struct rte_mempool *ext_pool;
static roce_classify_fn impl_fn[ROCE_CLASSIFY_IMPL_NUM];
static enum roce_classify_impl impl_id[ROCE_CLASSIFY_IMPL_NUM];
static unsigned int nb_impl;
static uint8_t pattern[FRAME_MAX];
static char ctx[1200];   /* what is being checked, for failure messages */

/* --- byte access and a deterministic generator --- */

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xFF;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xFFFF);
}

static uint32_t
get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		(uint32_t)p[3] << 24;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static const char *
meta_str(const struct roce_pkt_meta *m)
{
	static char s[4][200];
	static unsigned int k;
	char *p = s[k++ & 3];

	snprintf(p, sizeof(s[0]), "%s/%s op=0x%02x mask=0x%x qpn=0x%x psn=0x%x l3=%u l4=%u "
			"pay=%u+%u fl=0x%x tos=0x%x rsvd=%u",
			roce_pkt_type_name(m->type), roce_drop_reason_name(m->reason), m->opcode,
			m->mask, m->qpn, m->psn, m->l3_off, m->l4_off, m->payload_off,
			m->payload_len, m->flags, m->tos, m->rsvd);
	return p;
}

/* --- frames --- */

static int
frame_is_vlan(const struct frame *f)
{
	return f->l3 == ETH_LEN + VLAN_LEN;
}

static uint32_t
frame_bth(const struct frame *f)
{
	return f->l4 + UDP_LEN;
}

static uint8_t
frame_tos(const struct frame *f)
{
	const uint8_t *ip = f->b + f->l3;

	return f->ipv6 ? (uint8_t)(get16(ip) >> 4) : ip[1];
}

/* Internet checksum of an IPv4 header, computed here rather than by DPDK. */
static uint16_t
ip4_csum(const uint8_t *ip, uint32_t len)
{
	uint32_t sum = 0, i;

	for (i = 0; i < len; i += 2)
		sum += get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

static void
ip_fix_csum(struct frame *f)
{
	uint8_t *ip = f->b + f->l3;

	if (f->ipv6)
		return;
	put16(ip + 10, 0);
	put16(ip + 10, ip4_csum(ip, (ip[0] & 0x0F) * 4));
}

/* Make the IP and UDP lengths describe the frame as it is now. */
static void
fix_lengths(struct frame *f)
{
	if (f->ipv6)
		put16(f->b + f->l3 + 4, f->len - f->l4);
	else
		put16(f->b + f->l3 + 2, f->len - f->l3);
	put16(f->b + f->l4 + 4, f->len - f->l4);
	ip_fix_csum(f);
}

static void
fix_icrc(struct frame *f)
{
	uint32_t icrc = ref_icrc(f->b + f->l3, f->len - ICRC_LEN - f->l3, f->ipv6);
	uint8_t *p = f->b + f->len - ICRC_LEN;

	p[0] = icrc & 0xFF;
	p[1] = icrc >> 8 & 0xFF;
	p[2] = icrc >> 16 & 0xFF;
	p[3] = icrc >> 24;
}

static void
frame_insert(struct frame *f, uint32_t off, const uint8_t *bytes, uint32_t n)
{
	memmove(f->b + off + n, f->b + off, f->len - off);
	memcpy(f->b + off, bytes, n);
	f->len += n;
	if (off <= f->l3)
		f->l3 += n;
	if (off <= f->l4)
		f->l4 += n;
}

/* --- paths, descriptors, builders --- */

static const struct rte_ether_addr mac_a = { { 0x02, 0x00, 0x00, 0xAA, 0x00, 0x01 } };
static const struct rte_ether_addr mac_b = { { 0x02, 0x00, 0x00, 0xBB, 0x00, 0x02 } };
static const uint8_t ip4_a[4] = { 10, 99, 0, 1 };
static const uint8_t ip4_b[4] = { 10, 99, 0, 2 };
static const uint8_t ip6_a[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
static const uint8_t ip6_b[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };

static int
path_make(struct roce_path *p, int ipv6, int vlan, uint8_t tos, uint32_t flow, uint8_t ttl)
{
	memset(p, 0, sizeof(*p));
	p->src_mac = mac_a;
	p->dst_mac = mac_b;
	p->ipv6 = ipv6;
	p->vlan = vlan;
	p->vlan_tci = 0xA064;  /* PCP 5, VID 100 */
	memcpy(p->src_ip, ipv6 ? ip6_a : ip4_a, ipv6 ? 16 : 4);
	memcpy(p->dst_ip, ipv6 ? ip6_b : ip4_b, ipv6 ? 16 : 4);
	p->dscp = tos >> 2;
	p->ecn = tos & ROCE_ECN_MASK;
	p->flow_label = flow;
	p->ttl = ttl;
	p->udp_sport = roce_udp_sport(0x11, 0x22);
	return roce_path_init(p);
}

/* Every field random, 24-bit ones with garbage above bit 23 that the builder must drop. */
static void
desc_random(struct roce_pkt_desc *d, uint8_t opcode)
{
	uint64_t r = rng();

	memset(d, 0, sizeof(*d));
	d->opcode = opcode;
	d->se = r & 1;
	d->ackreq = r >> 1 & 1;
	d->migreq = r >> 2 & 1;
	d->fecn = r >> 3 & 1;
	d->becn = r >> 4 & 1;
	d->pkey = r >> 5 & 1 ? (uint16_t)(r >> 16) : 0;
	d->dest_qpn = (uint32_t)rng();
	d->psn = (uint32_t)rng();
	d->va = rng();
	d->rkey = (uint32_t)rng();
	d->dma_len = (uint32_t)rng();
	d->swap_add = rng();
	d->compare = rng();
	d->syndrome = (uint8_t)rng();
	d->msn = (uint32_t)rng();
	d->orig = rng();
	d->imm = (uint32_t)rng();
	d->inv_rkey = (uint32_t)rng();
	d->qkey = (uint32_t)rng();
	d->src_qpn = (uint32_t)rng();
	d->sr_rsn = (uint32_t)rng();
	d->sr_off = (uint32_t)rng();
}

/* Build a packet with the library and copy it out. @return 0, or -errno from the builder. */
static int
build_frame(const struct roce_path *path, const struct roce_pkt_desc *d, const uint8_t *pay,
		uint32_t plen, struct frame *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	int ret;

	if (m == NULL) {
		fprintf(stderr, "mbuf pool empty\n");
		exit(2);
	}
	ret = roce_build_pkt(m, path, d, pay, plen);
	if (ret == 0) {
		RT_CHECK(m->nb_segs == 1 && m->pkt_len == m->data_len, "%s: built %u segments",
				ctx, m->nb_segs);
		RT_CHECK(m->pkt_len == roce_frame_len(path, d->opcode, plen),
				"%s: built %u bytes, roce_frame_len says %u", ctx, m->pkt_len,
				roce_frame_len(path, d->opcode, plen));
		RT_CHECK(m->l2_len == path->l3_off &&
				m->l3_len == (path->ipv6 ? 40u : 20u), "%s: l2_len %u l3_len %u",
				ctx, m->l2_len, m->l3_len);
		f->len = rt_mbuf_copy(m, f->b, sizeof(f->b));
		f->l3 = path->vlan ? ETH_LEN + VLAN_LEN : ETH_LEN;
		f->l4 = f->l3 + (path->ipv6 ? 40 : 20);
		f->ipv6 = path->ipv6;
	}
	rte_pktmbuf_free(m);
	return ret;
}

/* --- classification with every implementation --- */

typedef void (*meta_check_fn)(const struct rte_mbuf *m, const struct roce_pkt_meta *meta,
		const void *arg);

static struct rte_mbuf *
layout_mbuf(const struct layout *lay, const uint8_t *data, uint32_t len)
{
	struct rte_mbuf *m = lay->exact ? exact_mbuf(ext_pool, data, len, lay->seg_len) :
		rt_mbuf(pool, data, len, lay->seg_len);

	if (m == NULL) {
		fprintf(stderr, "out of mbufs\n");
		exit(2);
	}
	/* Poison the metadata: the classifier must write every byte of it. */
	memset(roce_pkt_meta(m), 0xA5, sizeof(struct roce_pkt_meta));
	return m;
}

static void
check_counts(const struct roce_wire_stats *st, const struct roce_pkt_meta *meta, uint64_t n,
		uint16_t ret, const char *impl)
{
	uint64_t types = 0, drops = 0;
	unsigned int i;

	if (meta->type >= ROCE_PKT_TYPE_NUM || meta->reason >= ROCE_DROP_NUM) {
		RT_CHECK(0, "%s: %s: type %u reason %u out of range", ctx, impl, meta->type,
				meta->reason);
		return;
	}
	for (i = 0; i < ROCE_PKT_TYPE_NUM; i++)
		types += st->type[i];
	for (i = 0; i < ROCE_DROP_NUM; i++)
		drops += st->drop[i];
	RT_CHECK(types == n && drops == n, "%s: %s: counted %lu types %lu reasons for %lu", ctx,
			impl, (unsigned long)types, (unsigned long)drops, (unsigned long)n);
	RT_CHECK(st->type[meta->type] == n && st->drop[meta->reason] == n,
			"%s: %s: type/reason counters %lu/%lu, want %lu", ctx, impl,
			(unsigned long)st->type[meta->type],
			(unsigned long)st->drop[meta->reason], (unsigned long)n);
	RT_CHECK(ret == (meta->type == ROCE_PKT_ROCE ? n : 0), "%s: %s: returned %u", ctx, impl,
			ret);
	RT_CHECK((meta->type == ROCE_PKT_DROP) == (meta->reason != ROCE_DROP_NONE),
			"%s: %s: %s", ctx, impl, meta_str(meta));
}

static void
check_untouched(const struct rte_mbuf *m, const uint8_t *data, uint32_t len)
{
	static uint8_t copy[FRAME_MAX];

	RT_CHECK(m->pkt_len == len && rt_mbuf_copy(m, copy, sizeof(copy)) == len &&
			memcmp(copy, data, len) == 0, "%s: classifier changed the packet", ctx);
}

/*
 * Classify a frame laid out as @lay with every implementation, BURST copies each. All copies
 * and all implementations must give the same metadata, count each copy once, and leave the
 * bytes alone; @check (if any) looks at each implementation's first copy.
 * @return the metadata.
 */
static struct roce_pkt_meta
classify(const uint8_t *data, uint32_t len, const struct layout *lay, unsigned int flags,
		meta_check_fn check, const void *arg)
{
	struct roce_pkt_meta ref;
	unsigned int i, k;

	memset(&ref, 0, sizeof(ref));
	for (i = 0; i < nb_impl; i++) {
		const char *name = roce_classify_impl_name(impl_id[i]);
		struct rte_mbuf *pkts[BURST];
		struct roce_pkt_meta meta;
		struct roce_wire_stats st;
		uint16_t ret;

		memset(&st, 0, sizeof(st));
		for (k = 0; k < BURST; k++)
			pkts[k] = layout_mbuf(lay, data, len);
		ret = impl_fn[i](pkts, BURST, flags, &st);
		meta = *roce_pkt_meta(pkts[0]);
		if (i == 0)
			ref = meta;
		RT_CHECK(memcmp(&meta, &ref, sizeof(ref)) == 0, "%s: %s gives %s, %s gives %s",
				ctx, name, meta_str(&meta), roce_classify_impl_name(impl_id[0]),
				meta_str(&ref));
		for (k = 1; k < BURST; k++)
			RT_CHECK(memcmp(roce_pkt_meta(pkts[k]), &meta, sizeof(meta)) == 0,
					"%s: %s: copy %u gives %s, copy 0 %s", ctx, name, k,
					meta_str(roce_pkt_meta(pkts[k])), meta_str(&meta));
		check_counts(&st, &meta, BURST, ret, name);
		check_untouched(pkts[0], data, len);
		if (check != NULL)
			check(pkts[0], &meta, arg);
		for (k = 0; k < BURST; k++)
			rte_pktmbuf_free(pkts[k]);
	}
	return ref;
}

static struct roce_pkt_meta
expect_drop(const struct frame *f, const struct layout *lay, unsigned int flags,
		enum roce_drop_reason why)
{
	struct roce_pkt_meta m = classify(f->b, f->len, lay, flags, NULL, NULL);

	RT_CHECK(m.type == ROCE_PKT_DROP && m.reason == why, "%s%s: want DROP/%s, got %s", ctx,
			lay->exact ? " (exact)" : "", roce_drop_reason_name(why), meta_str(&m));
	return m;
}

/* --- what the metadata of a frame must be, read from the frame's own bytes --- */

/* Flags the classifier must report for a RoCE frame. */
static uint8_t
frame_roce_flags(const struct frame *f)
{
	const uint8_t *bth = f->b + frame_bth(f);

	return (frame_is_vlan(f) ? ROCE_PKT_F_VLAN : 0) | (f->ipv6 ? ROCE_PKT_F_IPV6 : 0) |
		(bth[8] & 0x80 ? ROCE_PKT_F_ACKREQ : 0) | (bth[1] & 0x80 ? ROCE_PKT_F_SE : 0) |
		(bth[1] & 0x40 ? ROCE_PKT_F_MIGREQ : 0) | (bth[4] & 0x80 ? ROCE_PKT_F_FECN : 0) |
		(bth[4] & 0x40 ? ROCE_PKT_F_BECN : 0);
}

static void
check_roce_vs_frame(const struct frame *f, const struct roce_pkt_meta *m)
{
	const uint8_t *bth = f->b + frame_bth(f);
	const struct ref_op *op = ref_op(bth[0]);
	uint32_t hlen, pad = bth[1] >> 4 & 3, udp = get16(f->b + f->l4 + 4);

	if (m->type != ROCE_PKT_ROCE || op == NULL) {
		RT_CHECK(0, "%s: want ROCE, got %s", ctx, meta_str(m));
		return;
	}
	hlen = ref_hdrs_len(op->hdrs);
	RT_CHECK(m->opcode == bth[0] && m->mask == ref_mask(op) &&
			m->qpn == (get32(bth + 4) & MASK24) &&
			m->psn == (get32(bth + 8) & MASK24) && m->l3_off == f->l3 &&
			m->l4_off == f->l4 && m->payload_off == frame_bth(f) + hlen &&
			m->payload_len == udp - UDP_LEN - hlen - ICRC_LEN - pad &&
			m->flags == frame_roce_flags(f) && m->tos == frame_tos(f) &&
			m->reason == ROCE_DROP_NONE && m->rsvd == 0,
			"%s: %s", ctx, meta_str(m));
}

/* A frame that is not RoCE: only the L2/L3 fields may be set. */
static void
check_other_vs_frame(const struct frame *f, const struct roce_pkt_meta *m)
{
	uint16_t et = get16(f->b + f->l3 - 2);
	int ip = et == 0x0800 || et == 0x86DD;

	RT_CHECK(m->l3_off == f->l3 && m->l4_off == (ip ? f->l4 : 0) &&
			m->tos == (ip ? frame_tos(f) : 0) &&
			m->flags == ((frame_is_vlan(f) ? ROCE_PKT_F_VLAN : 0) |
				(et == 0x86DD ? ROCE_PKT_F_IPV6 : 0)) &&
			m->mask == 0 && m->qpn == 0 && m->psn == 0 && m->opcode == 0 &&
			m->payload_off == 0 && m->payload_len == 0 && m->reason == 0 &&
			m->rsvd == 0,
			"%s: %s", ctx, meta_str(m));
}

static void
expect_type(const struct frame *f, const struct layout *lay, unsigned int flags,
		enum roce_pkt_type type)
{
	struct roce_pkt_meta m = classify(f->b, f->len, lay, flags, NULL, NULL);

	if (m.type != type) {
		RT_CHECK(0, "%s%s: want %s, got %s", ctx, lay->exact ? " (exact)" : "",
				roce_pkt_type_name(type), meta_str(&m));
		return;
	}
	if (type == ROCE_PKT_ROCE)
		check_roce_vs_frame(f, &m);
	else
		check_other_vs_frame(f, &m);
}

static void
expect_all(const struct frame *f, unsigned int flags, enum roce_pkt_type type,
		enum roce_drop_reason why)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(default_layouts); i++) {
		if (type == ROCE_PKT_DROP)
			expect_drop(f, &default_layouts[i], flags, why);
		else
			expect_type(f, &default_layouts[i], flags, type);
	}
}

/* --- opcode table --- */

static unsigned int
popcount(uint32_t v)
{
	return (unsigned int)__builtin_popcount(v);
}

/* Class bits that must hold whatever the reference says. */
static void
check_class_sanity(uint8_t op, uint32_t m)
{
	uint32_t pos = m & (ROCE_M_FIRST | ROCE_M_MIDDLE | ROCE_M_LAST);
	uint32_t fam = m & (ROCE_M_SEND | ROCE_M_WRITE | ROCE_M_READ | ROCE_M_ATOMIC);
	int payload = ((m & ROCE_M_REQ) && (m & (ROCE_M_SEND | ROCE_M_WRITE))) ||
		((m & ROCE_M_RESP) && (m & (ROCE_M_READ | ROCE_M_SR)));

	RT_CHECK(popcount(m & (ROCE_M_REQ | ROCE_M_RESP | ROCE_M_CNP)) == 1,
			"0x%02x: not exactly one of REQ/RESP/CNP", op);
	if (m & ROCE_M_CNP)
		RT_CHECK(pos == 0 && fam == 0 && op == ROCE_OPCODE_CNP, "0x%02x: CNP class", op);
	else
		RT_CHECK(pos == ROCE_M_FIRST || pos == ROCE_M_MIDDLE || pos == ROCE_M_LAST ||
				pos == ROCE_M_ONLY, "0x%02x: position bits 0x%x", op, pos);
	RT_CHECK(popcount(fam) <= 1 && (!(m & ROCE_M_REQ) || fam != 0),
			"0x%02x: family bits 0x%x", op, fam);
	RT_CHECK(!!(m & ROCE_M_PAYLOAD) == payload, "0x%02x: PAYLOAD bit", op);
	RT_CHECK(!!(m & ROCE_M_IMM) == !!(m & ROCE_M_IMMDT), "0x%02x: IMM without ImmDt", op);
	RT_CHECK(!!(m & ROCE_M_INV) == !!(m & ROCE_M_IETH), "0x%02x: INV without IETH", op);
	RT_CHECK(!(m & ROCE_M_RWR) || (m & ROCE_M_REQ), "0x%02x: RWR on a response", op);
	RT_CHECK(!!(m & ROCE_M_COMP) == ((m & ROCE_M_RWR) && (m & ROCE_M_LAST)),
			"0x%02x: COMP", op);
	RT_CHECK(!!(m & ROCE_M_DETH) == ((op & ROCE_TRANSPORT_MASK) == ROCE_TRANSPORT_UD),
			"0x%02x: DETH outside UD", op);
	/* Selective repeat puts what placement needs on every packet, Middle included. */
	RT_CHECK(pos != ROCE_M_MIDDLE || (m & 0xFF) == 0 || (m & ROCE_M_SR),
			"0x%02x: headers on MIDDLE", op);
	RT_CHECK(!!(m & ROCE_M_SR) == ((op & 0xC0) == ROCE_TRANSPORT_SR) &&
			(!(m & ROCE_M_SRETH) || (m & ROCE_M_SR)),
			"0x%02x: SR bit outside the manufacturer range", op);
}

static void
check_known_opcode(const struct ref_op *ref, const struct roce_opcode_info *info)
{
	uint8_t op = ref->opcode;
	unsigned int h, end = 0;

	RT_CHECK(info->name != NULL && strcmp(info->name, ref->name) == 0 &&
			strcmp(roce_opcode_name(op), ref->name) == 0, "0x%02x: name %s, want %s",
			op, info->name != NULL ? info->name : "NULL", ref->name);
	RT_CHECK(info->mask == ref_mask(ref), "0x%02x %s: mask 0x%x, want 0x%x", op, ref->name,
			info->mask, ref_mask(ref));
	RT_CHECK(info->length == ref_hdrs_len(ref->hdrs), "0x%02x %s: length %u, want %u", op,
			ref->name, info->length, ref_hdrs_len(ref->hdrs));
	for (h = 0; h < ROCE_HDR_NUM; h++) {
		int off = ref_hdr_off(ref->hdrs, h);

		if (off < 0)
			continue;
		RT_CHECK(info->offset[h] == off, "0x%02x %s: header %u at %u, want %d", op,
				ref->name, h, info->offset[h], off);
		end = RTE_MAX(end, (unsigned int)info->offset[h] + roce_hdr_len[h]);
	}
	RT_CHECK(end == 0 || end == info->length, "0x%02x: headers end at %u, length %u", op,
			end, info->length);
	check_class_sanity(op, info->mask);
}

static void
test_opcode_table(void)
{
	unsigned int op, h, known = 0;

	for (h = 0; h < ROCE_HDR_NUM; h++)
		RT_CHECK(roce_hdr_len[h] == ref_hdr_size(h), "header %u: %u bytes, IBA says %u",
				h, roce_hdr_len[h], ref_hdr_size(h));
	for (op = 0; op < 256; op++) {
		const struct roce_opcode_info *info = &roce_opcode_info[op];
		const struct ref_op *ref = ref_op(op);

		if (ref != NULL) {
			known++;
			check_known_opcode(ref, info);
			continue;
		}
		RT_CHECK(info->mask == 0 && info->name == NULL &&
				strcmp(roce_opcode_name(op), "UNKNOWN") == 0,
				"0x%02x (RD, XRC or reserved) is in the table: mask 0x%x", op,
				info->mask);
	}
	RT_CHECK(known == ref_nb_ops, "%u known opcodes, want %u", known, ref_nb_ops);
}

/* --- builders --- */

/* What a built packet must read back as. */
struct built {
	const struct roce_path *path;
	const struct roce_pkt_desc *d;
	const uint8_t *pay;
	uint32_t plen;
	uint32_t split;  /* the layout cuts the headers: expect HDR_SPLIT */
};

static void
chk_deth(const uint8_t *h, const struct roce_pkt_desc *d)
{
	RT_CHECK(get32(h) == d->qkey && get32(h + 4) == (d->src_qpn & MASK24), "%s: DETH", ctx);
}

static void
chk_reth(const uint8_t *h, const struct roce_pkt_desc *d)
{
	RT_CHECK(get64(h) == d->va && get32(h + 8) == d->rkey && get32(h + 12) == d->dma_len,
			"%s: RETH", ctx);
}

static void
chk_atmeth(const uint8_t *h, const struct roce_pkt_desc *d)
{
	RT_CHECK(get64(h) == d->va && get32(h + 8) == d->rkey && get64(h + 12) == d->swap_add &&
			get64(h + 20) == d->compare, "%s: AtomicETH", ctx);
}

static void
chk_aeth(const uint8_t *h, const struct roce_pkt_desc *d)
{
	RT_CHECK(get32(h) == ((uint32_t)d->syndrome << 24 | (d->msn & MASK24)), "%s: AETH", ctx);
}

static void
chk_atmack(const uint8_t *h, const struct roce_pkt_desc *d)
{
	RT_CHECK(get64(h) == d->orig, "%s: AtomicAckETH", ctx);
}

static void
chk_immdt(const uint8_t *h, const struct roce_pkt_desc *d)
{
	RT_CHECK(get32(h) == d->imm, "%s: ImmDt", ctx);
}

static void
chk_ieth(const uint8_t *h, const struct roce_pkt_desc *d)
{
	RT_CHECK(get32(h) == d->inv_rkey, "%s: IETH", ctx);
}

static void
chk_cnp(const uint8_t *h, const struct roce_pkt_desc *d)
{
	static const uint8_t zero[16];

	RTE_SET_USED(d);
	RT_CHECK(memcmp(h, zero, sizeof(zero)) == 0, "%s: CNP reserved bytes", ctx);
}

static void
chk_sreth(const uint8_t *h, const struct roce_pkt_desc *d)
{
	RT_CHECK(get32(h) == (d->sr_rsn & MASK24) && get32(h + 4) == d->sr_off, "%s: SRETH", ctx);
}

static void (*const ext_check[ROCE_HDR_NUM])(const uint8_t *, const struct roce_pkt_desc *) = {
	[ROCE_HDR_DETH] = chk_deth,
	[ROCE_HDR_RETH] = chk_reth,
	[ROCE_HDR_ATMETH] = chk_atmeth,
	[ROCE_HDR_AETH] = chk_aeth,
	[ROCE_HDR_ATMACK] = chk_atmack,
	[ROCE_HDR_IMMDT] = chk_immdt,
	[ROCE_HDR_IETH] = chk_ieth,
	[ROCE_HDR_CNP] = chk_cnp,
	[ROCE_HDR_SRETH] = chk_sreth,
};

static void
check_l2(const struct frame *f, const struct roce_path *p)
{
	const uint8_t *b = f->b;

	RT_CHECK(memcmp(b, &p->dst_mac, 6) == 0 && memcmp(b + 6, &p->src_mac, 6) == 0,
			"%s: MACs", ctx);
	if (p->vlan)
		RT_CHECK(get16(b + 12) == 0x8100 && get16(b + 14) == p->vlan_tci, "%s: VLAN tag",
				ctx);
	RT_CHECK(get16(b + f->l3 - 2) == (p->ipv6 ? 0x86DD : 0x0800), "%s: ethertype", ctx);
}

static void
check_l3(const struct frame *f, const struct roce_path *p)
{
	const uint8_t *ip = f->b + f->l3;
	uint8_t tos = p->dscp << 2 | p->ecn, ttl = p->ttl != 0 ? p->ttl : 64;

	if (p->ipv6) {
		RT_CHECK(get32(ip) == (6u << 28 | (uint32_t)tos << 20 | p->flow_label) &&
				get16(ip + 4) == f->len - f->l4 && ip[6] == 17 && ip[7] == ttl &&
				memcmp(ip + 8, p->src_ip, 16) == 0 &&
				memcmp(ip + 24, p->dst_ip, 16) == 0, "%s: IPv6 header", ctx);
		return;
	}
	RT_CHECK(ip[0] == 0x45 && ip[1] == tos && get16(ip + 2) == f->len - f->l3 &&
			get16(ip + 6) == 0x4000 && ip[8] == ttl && ip[9] == 17 &&
			memcmp(ip + 12, p->src_ip, 4) == 0 && memcmp(ip + 16, p->dst_ip, 4) == 0,
			"%s: IPv4 header", ctx);
	RT_CHECK(ip4_csum(ip, 20) == 0, "%s: IPv4 checksum", ctx);
}

static void
check_bth(const uint8_t *bth, const struct roce_pkt_desc *d, uint32_t pad)
{
	uint8_t flags = (d->se ? 0x80 : 0) | (d->migreq ? 0x40 : 0) | pad << 4;

	RT_CHECK(bth[0] == d->opcode && bth[1] == flags &&
			get16(bth + 2) == (d->pkey != 0 ? d->pkey : 0xFFFF) &&
			get32(bth + 4) == ((d->fecn ? 1u << 31 : 0) | (d->becn ? 1u << 30 : 0) |
				(d->dest_qpn & MASK24)) &&
			get32(bth + 8) == ((d->ackreq ? 1u << 31 : 0) | (d->psn & MASK24)),
			"%s: BTH", ctx);
}

/* The flat bytes of a built frame, field by field. */
static void
check_built_frame(const struct frame *f, const struct built *e)
{
	const struct ref_op *op = ref_op(e->d->opcode);
	uint32_t bth = frame_bth(f), pad = -e->plen & 3, h;
	uint32_t pay = bth + ref_hdrs_len(op->hdrs);
	static const uint8_t zero[4];

	RT_CHECK(f->len == pay + e->plen + pad + ICRC_LEN, "%s: %u bytes", ctx, f->len);
	if (f->len != pay + e->plen + pad + ICRC_LEN)
		return;
	check_l2(f, e->path);
	check_l3(f, e->path);
	RT_CHECK(get16(f->b + f->l4) == e->path->udp_sport && get16(f->b + f->l4 + 2) == 4791 &&
			get16(f->b + f->l4 + 4) == f->len - f->l4 && get16(f->b + f->l4 + 6) == 0,
			"%s: UDP header", ctx);
	check_bth(f->b + bth, e->d, pad);
	for (h = 0; h < ROCE_HDR_NUM; h++)
		if (ref_hdr_off(op->hdrs, h) >= 0)
			ext_check[h](f->b + bth + ref_hdr_off(op->hdrs, h), e->d);
	RT_CHECK(memcmp(f->b + pay, e->pay, e->plen) == 0, "%s: payload", ctx);
	RT_CHECK(memcmp(f->b + pay + e->plen, zero, pad) == 0, "%s: pad bytes", ctx);
	RT_CHECK(get_le32(f->b + f->len - ICRC_LEN) ==
			ref_icrc(f->b + f->l3, f->len - ICRC_LEN - f->l3, f->ipv6),
			"%s: ICRC 0x%08x, reference 0x%08x", ctx,
			get_le32(f->b + f->len - ICRC_LEN),
			ref_icrc(f->b + f->l3, f->len - ICRC_LEN - f->l3, f->ipv6));
}

/* The headers through the metadata accessors, as the transport will read them. */
static void
check_accessors(const struct rte_mbuf *m, const struct roce_pkt_meta *meta, const struct built *e)
{
	const struct ref_op *op = ref_op(e->d->opcode);
	const struct roce_bth *bth = roce_pkt_bth(m, meta);
	uint32_t h;

	RT_CHECK(roce_bth_qpn(bth) == (e->d->dest_qpn & MASK24) &&
			roce_bth_psn(bth) == (e->d->psn & MASK24) &&
			roce_bth_ackreq(bth) == !!e->d->ackreq &&
			roce_bth_pad(bth) == (-e->plen & 3),
			"%s: BTH accessors", ctx);
	for (h = 0; h < ROCE_HDR_NUM; h++) {
		int off = ref_hdr_off(op->hdrs, h);
		const uint8_t *p;

		if (off < 0)
			continue;
		p = roce_pkt_hdr(m, meta, h);
		RT_CHECK(p == rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->l4_off + 8 + off) &&
				meta->l4_off + 8 + off + ref_hdr_size(h) <= m->data_len,
				"%s: header %u pointer", ctx, h);
		ext_check[h](p, e->d);
	}
	if (op->hdrs & ROCE_M_AETH) {
		const struct roce_aeth *a = roce_pkt_hdr(m, meta, ROCE_HDR_AETH);

		RT_CHECK(roce_aeth_syndrome(a) == e->d->syndrome &&
				roce_aeth_msn(a) == (e->d->msn & MASK24),
				"%s: AETH accessors", ctx);
	}
	if (op->hdrs & ROCE_M_DETH)
		RT_CHECK(roce_deth_sqp(roce_pkt_hdr(m, meta, ROCE_HDR_DETH)) ==
				(e->d->src_qpn & MASK24), "%s: DETH accessor", ctx);
}

static void
check_built_meta(const struct rte_mbuf *m, const struct roce_pkt_meta *meta, const void *arg)
{
	const struct built *e = arg;
	const struct roce_pkt_desc *d = e->d;
	const struct ref_op *op = ref_op(d->opcode);
	uint32_t l3 = e->path->vlan ? 18 : 14, l4 = l3 + (e->path->ipv6 ? 40 : 20);
	uint8_t flags = (e->path->vlan ? ROCE_PKT_F_VLAN : 0) |
		(e->path->ipv6 ? ROCE_PKT_F_IPV6 : 0) | (d->ackreq ? ROCE_PKT_F_ACKREQ : 0) |
		(d->se ? ROCE_PKT_F_SE : 0) | (d->migreq ? ROCE_PKT_F_MIGREQ : 0) |
		(d->fecn ? ROCE_PKT_F_FECN : 0) | (d->becn ? ROCE_PKT_F_BECN : 0);
	static uint8_t buf[FRAME_MAX];

	if (e->split) {
		RT_CHECK(meta->type == ROCE_PKT_DROP && meta->reason == ROCE_DROP_HDR_SPLIT,
				"%s: want HDR_SPLIT, got %s", ctx, meta_str(meta));
		return;
	}
	if (meta->type != ROCE_PKT_ROCE) {
		RT_CHECK(0, "%s: want ROCE, got %s", ctx, meta_str(meta));
		return;
	}
	RT_CHECK(meta->opcode == d->opcode && meta->mask == ref_mask(op) &&
			meta->qpn == (d->dest_qpn & MASK24) && meta->psn == (d->psn & MASK24) &&
			meta->l3_off == l3 && meta->l4_off == l4 &&
			meta->payload_off == l4 + 8 + ref_hdrs_len(op->hdrs) &&
			meta->payload_len == e->plen && meta->flags == flags &&
			meta->tos == (e->path->dscp << 2 | e->path->ecn) &&
			meta->reason == ROCE_DROP_NONE && meta->rsvd == 0,
			"%s: %s", ctx, meta_str(meta));
	check_accessors(m, meta, e);
	RT_CHECK(rte_pktmbuf_read(m, meta->payload_off, e->plen, buf) != NULL &&
			memcmp(rte_pktmbuf_read(m, meta->payload_off, e->plen, buf), e->pay,
				e->plen) == 0, "%s: payload through the metadata", ctx);
}

static const uint32_t payload_sizes[] = { 0, 1, 2, 3, 4, 255, 1024, 4096 };

/* DSCP/ECN, IPv6 flow label, TTL. */
static const struct {
	uint8_t tos;
	uint32_t flow;
	uint8_t ttl;
} l3_variants[] = {
	{ 0, 0, 0 },
	{ 26 << 2 | ROCE_ECN_ECT0, 0x12345, 1 },
	{ 63 << 2 | ROCE_ECN_CE, 0xFFFFF, 255 },
};

/* Segment layouts: one buffer, cut right at and after the payload start, inside the ICRC. */
static unsigned int
built_layouts(const struct frame *f, uint32_t pay_off, struct layout *lay)
{
	unsigned int n = 0;

	lay[n++] = (struct layout){ 0, 0 };
	lay[n++] = (struct layout){ 0, 1 };
	lay[n++] = (struct layout){ pay_off, 0 };
	lay[n++] = (struct layout){ pay_off + 1, 1 };
	lay[n++] = (struct layout){ f->len - 2, 0 };
	lay[n++] = (struct layout){ 64, 1 };
	return n;
}

static void
build_and_classify(const struct ref_op *op, uint32_t plen, int l2l3, unsigned int v)
{
	static struct frame f;
	struct layout lay[8];
	struct roce_pkt_desc d;
	struct roce_path path;
	struct built e = { &path, &d, pattern + (rng() & 63), plen, 0 };
	unsigned int i, n;
	uint32_t pay_off;

	if (path_make(&path, l2l3 >> 1, l2l3 & 1, l3_variants[v].tos, l3_variants[v].flow,
				l3_variants[v].ttl) != 0) {
		RT_CHECK(0, "path_make failed");
		return;
	}
	desc_random(&d, op->opcode);
	snprintf(ctx, sizeof(ctx), "build %s+%u %s%s tos 0x%02x", op->name, plen,
			path.ipv6 ? "ip6" : "ip4", path.vlan ? " vlan" : "", l3_variants[v].tos);
	if (build_frame(&path, &d, e.pay, plen, &f) != 0) {
		RT_CHECK(0, "%s: builder failed: %s", ctx, rte_strerror(rte_errno));
		return;
	}
	check_built_frame(&f, &e);
	pay_off = frame_bth(&f) + ref_hdrs_len(op->hdrs);
	n = built_layouts(&f, pay_off, lay);
	for (i = 0; i < n; i++) {
		e.split = lay[i].seg_len != 0 && lay[i].seg_len < pay_off;
		classify(f.b, f.len, &lay[i], 0, check_built_meta, &e);
	}
}

static void
test_builders(void)
{
	unsigned int i, s, l2l3, v;

	for (i = 0; i < ref_nb_ops; i++) {
		const struct ref_op *op = &ref_ops[i];
		int payload = !!(ref_mask(op) & ROCE_M_PAYLOAD);

		for (s = 0; s < (payload ? RTE_DIM(payload_sizes) : 1); s++) {
			/* Only the last packet of a message may be padded. */
			if (payload_sizes[s] % 4 != 0 && !(ref_mask(op) & ROCE_M_LAST))
				continue;
			for (l2l3 = 0; l2l3 < 4; l2l3++)
				for (v = 0; v < RTE_DIM(l3_variants); v++)
					build_and_classify(op, payload_sizes[s], l2l3, v);
		}
	}
}

/* --- chained builds (zero-copy transmit: payload segments attached over memory) --- */

/* What the payload segments of a chained frame are attached over, and their references. */
static struct rte_mbuf_ext_shared_info chain_shinfo;
static uint32_t chain_freed;

static void
chain_free_cb(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
	chain_freed++;
}

/* An mbuf of @mp whose one segment is the @n bytes at @p, attached, not copied. */
static struct rte_mbuf *
attach_seg(struct rte_mempool *mp, uint8_t *p, uint32_t n)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

	if (m == NULL) {
		fprintf(stderr, "out of mbufs\n");
		exit(2);
	}
	rte_mbuf_ext_refcnt_update(&chain_shinfo, 1);
	rte_pktmbuf_attach_extbuf(m, p, (rte_iova_t)(uintptr_t)p, (uint16_t)n, &chain_shinfo);
	rte_pktmbuf_append(m, (uint16_t)n);
	return m;
}

/* @plen bytes at @pay as @nseg attached segments chained after the headers' mbuf @h. */
static void
chain_payload(struct rte_mbuf *h, uint8_t *pay, uint32_t plen, unsigned int nseg)
{
	uint32_t off = 0, k;

	for (k = 0; k < nseg && off < plen; k++) {
		/* Uneven pieces (a third less, then more), the last one takes the rest. */
		uint32_t even = RTE_MAX(1u, plen / nseg);
		uint32_t n = k + 1 == nseg ? plen - off :
			RTE_MIN(plen - off, k & 1 ? even + even / 3 : even - even / 3);

		RT_CHECK(rte_pktmbuf_chain(h, attach_seg(ext_pool, pay + off, n)) == 0,
				"%s: chain", ctx);
		off += n;
	}
}

/* A small mbuf for the pad and ICRC: all its room, no headroom. */
static struct rte_mbuf *
tail_mbuf(struct rte_mempool *mp)
{
	struct rte_mbuf *t = rte_pktmbuf_alloc(mp);

	if (t == NULL) {
		fprintf(stderr, "out of mbufs\n");
		exit(2);
	}
	t->data_off = 0;
	return t;
}

/* A chained build of @op with @plen payload bytes in @nseg segments against the copy. */
static void
chain_one(struct rte_mempool *tails, const struct ref_op *op, uint32_t plen, int l2l3,
		unsigned int nseg)
{
	static uint8_t copy[FRAME_MAX];
	static struct frame f;
	uint8_t *pay = pattern + (rng() & 63);
	struct roce_pkt_desc d;
	struct roce_path path;
	struct built e = { &path, &d, pay, plen, 0 };
	struct rte_mbuf *h, *pkts[1];
	struct roce_wire_stats st;
	uint16_t before = rte_mbuf_ext_refcnt_read(&chain_shinfo);
	unsigned int i;
	int ret;

	path_make(&path, l2l3 >> 1, l2l3 & 1, 26 << 2 | ROCE_ECN_ECT0, 0x12345, 7);
	desc_random(&d, op->opcode);
	snprintf(ctx, sizeof(ctx), "chain %s+%u %s%s in %u segments", op->name, plen,
			path.ipv6 ? "ip6" : "ip4", path.vlan ? " vlan" : "", nseg);
	if (build_frame(&path, &d, pay, plen, &f) != 0) {
		RT_CHECK(0, "%s: copy build failed", ctx);
		return;
	}
	h = rte_pktmbuf_alloc(pool);
	ret = roce_build_hdrs_only(h, &path, &d, plen);
	RT_CHECK(ret == 0 && h->nb_segs == 1 && h->pkt_len == path.hdr_len +
			ref_hdrs_len(op->hdrs), "%s: headers: %d, %u bytes", ctx, ret, h->pkt_len);
	chain_payload(h, pay, plen, nseg);
	ret = roce_build_finish_tail(h, tail_mbuf(tails), &path);
	RT_CHECK(ret == 0, "%s: finish_tail: %d", ctx, ret);
	RT_CHECK(h->pkt_len == f.len && rt_mbuf_copy(h, copy, sizeof(copy)) == f.len &&
			memcmp(copy, f.b, f.len) == 0, "%s: %u bytes in %u segments differ from "
			"the copied frame's %u", ctx, h->pkt_len, h->nb_segs, f.len);
	RT_CHECK(roce_icrc_read(h, h->pkt_len - ICRC_LEN) == roce_icrc_compute(h,
			path.l3_off, path.ipv6, h->pkt_len - ICRC_LEN) &&
			roce_icrc_read(h, h->pkt_len - ICRC_LEN) == ref_icrc(f.b + f.l3,
			f.len - ICRC_LEN - f.l3, f.ipv6), "%s: ICRC", ctx);
	RT_CHECK(h->l2_len == path.l3_off, "%s: l2_len %u", ctx, h->l2_len);
	/* Every classifier reads the chain as it reads the copy, the payload in place. */
	for (i = 0; i < nb_impl; i++) {
		memset(&st, 0, sizeof(st));
		pkts[0] = h;
		impl_fn[i](pkts, 1, 0, &st);
		check_built_meta(h, roce_pkt_meta(h), &e);
	}
	rte_pktmbuf_free(h);
	RT_CHECK(rte_mbuf_ext_refcnt_read(&chain_shinfo) == before, "%s: references %u, were %u",
			ctx, rte_mbuf_ext_refcnt_read(&chain_shinfo), before);
}

static void
test_build_chain(void)
{
	static const uint32_t sizes[] = { 1, 2, 3, 4, 5, 64, 255, 256, 257, 1024, 4093, 4096 };
	struct rte_mempool *tails = rt_pool(64, 16);
	const uint8_t write_only = ROCE_OPCODE(RC, WRITE_ONLY);
	struct roce_pkt_desc d;
	struct roce_path path;
	struct rte_mbuf *h, *t;
	unsigned int i, s, l2l3, nseg;

	chain_shinfo.free_cb = chain_free_cb;
	rte_mbuf_ext_refcnt_set(&chain_shinfo, 1);
	for (i = 0; i < ref_nb_ops; i++) {
		const struct ref_op *op = &ref_ops[i];

		if (!(ref_mask(op) & ROCE_M_PAYLOAD))
			continue;
		for (s = 0; s < RTE_DIM(sizes); s++) {
			if (sizes[s] % 4 != 0 && !(ref_mask(op) & ROCE_M_LAST))
				continue;
			for (l2l3 = 0; l2l3 < 4; l2l3++)
				for (nseg = 1; nseg <= 3; nseg++)
					chain_one(tails, op, sizes[s], (int)l2l3, nseg);
		}
	}
	RT_CHECK(chain_freed == 0 && rte_mbuf_ext_refcnt_read(&chain_shinfo) == 1,
			"chains: %u base frees, %u references", chain_freed,
			rte_mbuf_ext_refcnt_read(&chain_shinfo));

	/* Refusals: a payload one byte short, a tail in use or without room, a bad opcode. */
	path_make(&path, 0, 0, 0, 0, 0);
	desc_random(&d, write_only);
	h = rte_pktmbuf_alloc(pool);
	RT_CHECK(roce_build_hdrs_only(h, &path, &d, 100) == 0, "headers of 100");
	chain_payload(h, pattern, 99, 1);
	t = tail_mbuf(tails);
	RT_CHECK(roce_build_finish_tail(h, t, &path) == -EINVAL && t->data_len == 0 &&
			h->nb_segs == 2, "a payload short of one byte: refused");
	rte_pktmbuf_chain(h, attach_seg(ext_pool, pattern + 99, 1));
	rte_pktmbuf_append(t, 1);
	RT_CHECK(roce_build_finish_tail(h, t, &path) == -EINVAL, "a tail in use: refused");
	rte_pktmbuf_trim(t, 1);
	t->data_off = t->buf_len;
	RT_CHECK(roce_build_finish_tail(h, t, &path) == -ENOSPC && h->nb_segs == 3,
			"a tail without room: refused");
	t->data_off = 0;
	RT_CHECK(roce_build_finish_tail(h, t, &path) == 0 && h->nb_segs == 4 &&
			h->pkt_len == roce_frame_len(&path, write_only, 100), "then it goes");
	rte_pktmbuf_free(h);
	h = rte_pktmbuf_alloc(pool);
	desc_random(&d, ROCE_OPCODE(RC, WRITE_FIRST));
	RT_CHECK(roce_build_hdrs_only(h, &path, &d, 101) == -EINVAL && h->pkt_len == 0,
			"a padded WRITE First: refused, nothing written");
	desc_random(&d, ROCE_OPCODE(RC, ACK));
	RT_CHECK(roce_build_hdrs_only(h, &path, &d, 4) == -EINVAL && h->pkt_len == 0,
			"payload on an ACK: refused");
	rte_pktmbuf_free(h);
	RT_CHECK(rte_mbuf_ext_refcnt_read(&chain_shinfo) == 1, "references %u after the refusals",
			rte_mbuf_ext_refcnt_read(&chain_shinfo));
	rte_mempool_free(tails);
}

/* roce_build_hdrs() must refuse, set rte_errno, and leave the mbuf empty. */
static void
expect_build_error(const struct roce_path *path, uint8_t opcode, uint32_t plen,
		struct rte_mempool *mp, int err)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct roce_pkt_desc d;

	desc_random(&d, opcode);
	rte_errno = 0;
	RT_CHECK(roce_build_hdrs(m, path, &d, plen) == NULL && rte_errno == err &&
			m->pkt_len == 0 && m->data_len == 0,
			"build 0x%02x+%u: want %s, got rte_errno %d, %u bytes", opcode, plen,
			strerror(err), rte_errno, m->pkt_len);
	if (plen <= sizeof(pattern))
		RT_CHECK(roce_build_pkt(m, path, &d, pattern, plen) == -err && m->pkt_len == 0,
				"build_pkt 0x%02x+%u: want -%s", opcode, plen, strerror(err));
	rte_pktmbuf_free(m);
}

/* The largest payload that fits @room bytes for @opcode, or UINT32_MAX when none does. */
static uint32_t
fit_payload(const struct roce_path *path, uint8_t opcode, uint32_t room)
{
	uint32_t plen;

	for (plen = room; plen != UINT32_MAX; plen--)
		if (roce_frame_len(path, opcode, plen) <= room)
			return plen;
	return UINT32_MAX;
}

static void
test_build_errors(void)
{
	struct rte_mempool *small = rt_pool(64, 200);
	const uint8_t send = ROCE_OPCODE(RC, SEND_ONLY);
	struct roce_path path;
	struct rte_mbuf *m;
	unsigned int op;
	uint32_t room, plen;

	path_make(&path, 1, 1, 0, 0, 0);
	for (op = 0; op < 256; op++) {
		const struct ref_op *ref = ref_op(op);

		if (ref == NULL) {
			RT_CHECK(roce_frame_len(&path, op, 0) == 0, "frame_len of 0x%02x", op);
			expect_build_error(&path, op, 0, pool, EINVAL);
		} else if (!(ref_mask(ref) & ROCE_M_PAYLOAD)) {
			expect_build_error(&path, op, 1, pool, EINVAL);
			expect_build_error(&path, op, 4, pool, EINVAL);
		} else if (!(ref_mask(ref) & ROCE_M_LAST)) {
			/* A pad on FIRST or MIDDLE would be dropped by every receiver. */
			for (plen = 1; plen < 4; plen++)
				expect_build_error(&path, op, 1024 + plen, pool, EINVAL);
		}
	}
	/* Lengths the IP header cannot carry, including ones that wrap 32 bits. */
	expect_build_error(&path, send, 65536, pool, EINVAL);
	expect_build_error(&path, send, UINT32_MAX - 50, pool, EINVAL);
	expect_build_error(&path, send, UINT32_MAX, pool, EINVAL);
	/* Room: the largest payload that fits builds, four bytes more do not. */
	m = rte_pktmbuf_alloc(small);
	room = rte_pktmbuf_tailroom(m);
	rte_pktmbuf_free(m);
	plen = fit_payload(&path, send, room);
	RT_CHECK(plen != UINT32_MAX, "nothing fits %u bytes", room);
	m = rte_pktmbuf_alloc(small);
	RT_CHECK(roce_build_pkt(m, &path, &(struct roce_pkt_desc){ .opcode = send }, pattern,
				plen) == 0, "%u-byte payload in %u bytes of room", plen, room);
	rte_pktmbuf_free(m);
	expect_build_error(&path, send, plen + 4, small, ENOSPC);
	expect_build_error(&path, ROCE_OPCODE(RC, WRITE_ONLY), 4096, small, ENOSPC);
	rte_mempool_free(small);
}

static void
test_path_init(void)
{
	static const struct {
		int ipv6, vlan;
		uint8_t l3_off, hdr_len;
	} sizes[] = { { 0, 0, 14, 42 }, { 0, 1, 18, 46 }, { 1, 0, 14, 62 }, { 1, 1, 18, 66 } };
	struct roce_path p;
	unsigned int i;

	for (i = 0; i < RTE_DIM(sizes); i++) {
		RT_CHECK(path_make(&p, sizes[i].ipv6, sizes[i].vlan, 0xFF, 0xFFFFF, 255) == 0 &&
				p.l3_off == sizes[i].l3_off && p.hdr_len == sizes[i].hdr_len,
				"path ipv6=%d vlan=%d: l3_off %u hdr_len %u", sizes[i].ipv6,
				sizes[i].vlan, p.l3_off, p.hdr_len);
	}
	path_make(&p, 0, 0, 0, 0, 0);
	p.dscp = 64;
	RT_CHECK(roce_path_init(&p) == -EINVAL, "dscp 64 accepted");
	path_make(&p, 0, 0, 0, 0, 0);
	p.ecn = 4;
	RT_CHECK(roce_path_init(&p) == -EINVAL, "ecn 4 accepted");
	path_make(&p, 1, 0, 0, 0, 0);
	p.flow_label = 0x100000;
	RT_CHECK(roce_path_init(&p) == -EINVAL, "flow label 0x100000 accepted");
	path_make(&p, 0, 0, 0, 0, 0);
	p.udp_sport = 0;
	RT_CHECK(roce_path_init(&p) == -EINVAL, "UDP source port 0 accepted");
	path_make(&p, 0, 0, 0, 0, 0);
	p.ipv6 = 2;
	RT_CHECK(roce_path_init(&p) == -EINVAL, "ipv6 = 2 accepted");
	path_make(&p, 0, 0, 0, 0, 0);
	p.vlan = 2;
	RT_CHECK(roce_path_init(&p) == -EINVAL, "vlan = 2 accepted");
}

static void
test_udp_sport(void)
{
	static uint8_t seen[0x4000];
	unsigned int lo[16] = { 0 }, hi[16] = { 0 }, distinct = 0, i;
	const unsigned int n = 4096;

	for (i = 0; i < n; i++) {
		uint16_t p = roce_udp_sport(i + 1, 0x40);

		RT_CHECK(p >= 0xC000, "sport(%u) = 0x%04x below 0xC000", i + 1, p);
		RT_CHECK(p == roce_udp_sport(i + 1, 0x40) &&
				p == roce_udp_sport((i + 1) | 0xFF000000u, 0x40 | 0x7F000000u),
				"sport(%u) not stable", i + 1);
		distinct += !seen[p & 0x3FFF];
		seen[p & 0x3FFF] = 1;
		lo[p & 15]++;
		hi[(p >> 10) & 15]++;
	}
	/* 4096 draws from 16384 values: about 3625 distinct if uniform. */
	RT_CHECK(distinct > 3400, "only %u distinct ports for %u QPs", distinct, n);
	for (i = 0; i < 16; i++)
		RT_CHECK(lo[i] > 160 && lo[i] < 352 && hi[i] > 160 && hi[i] < 352,
				"ports not spread: low nibble %u: %u, high bits %u: %u", i,
				lo[i], i, hi[i]);
	RT_CHECK(roce_udp_sport(5, 6) != roce_udp_sport(5, 7) ||
			roce_udp_sport(5, 8) != roce_udp_sport(5, 9),
			"destination QP does not change the port");
}

/* roce_icrc_*(): against the reference, over chains cut anywhere after the BTH. */
static void
icrc_on_chains(const struct frame *f)
{
	uint32_t icrc_off = f->len - ICRC_LEN, want = get_le32(f->b + icrc_off);
	/* Also around the 256 bytes after the IP header that go through one CRC call. */
	uint32_t cuts[] = { frame_bth(f) + BTH_LEN, frame_bth(f) + BTH_LEN + 1, icrc_off - 1,
		icrc_off, icrc_off + 1, icrc_off + 3, f->l3 + 255, f->l3 + 256, f->l3 + 257 };
	static uint8_t out[FRAME_MAX];
	unsigned int i;

	RT_CHECK(roce_icrc_compute_buf(f->b + f->l3, icrc_off - f->l3, f->ipv6) == want,
			"%s: roce_icrc_compute_buf", ctx);
	for (i = 0; i < RTE_DIM(cuts); i++) {
		struct rte_mbuf *m;

		if (cuts[i] >= f->len)
			continue;
		m = exact_mbuf(ext_pool, f->b, f->len, cuts[i]);
		RT_CHECK(roce_icrc_compute(m, f->l3, f->ipv6, icrc_off) == want &&
				roce_icrc_read(m, icrc_off) == want,
				"%s: roce_icrc_compute/read, segments of %u", ctx, cuts[i]);
		rte_pktmbuf_free(m);
	}
	for (i = 1; i <= 8; i++) {
		struct rte_mbuf *m = exact_mbuf(ext_pool, f->b, f->len, i);

		roce_icrc_write(m, icrc_off, 0x11223344);
		rt_mbuf_copy(m, out, sizeof(out));
		RT_CHECK(get_le32(out + icrc_off) == 0x11223344 &&
				memcmp(out, f->b, icrc_off) == 0 &&
				roce_icrc_read(m, icrc_off) == 0x11223344,
				"%s: roce_icrc_write, segments of %u", ctx, i);
		rte_pktmbuf_free(m);
	}
}

static void
test_icrc_api(void)
{
	/* 175-177 and 195-197: headers and payload just below, at and above 256 bytes. */
	static const uint32_t sizes[] = { 0, 1, 3, 64, 175, 176, 177, 195, 196, 197, 1021 };
	static struct frame f;
	struct roce_pkt_desc d;
	struct roce_path path;
	unsigned int l2l3, s;

	for (l2l3 = 0; l2l3 < 4; l2l3++) {
		for (s = 0; s < RTE_DIM(sizes); s++) {
			path_make(&path, l2l3 >> 1, l2l3 & 1, 0xFF, 0xABCDE, 7);
			desc_random(&d, ROCE_OPCODE(UC, WRITE_ONLY_IMM));
			snprintf(ctx, sizeof(ctx), "icrc l2l3 %u payload %u", l2l3, sizes[s]);
			if (build_frame(&path, &d, pattern, sizes[s], &f) == 0)
				icrc_on_chains(&f);
		}
	}
}

/* --- malformed frames --- */

enum base_id {
	B_SEND4, B_WRITE6, B_ACK4V, B_UD6V, B_CAS4, B_READ6, B_CNP4, B_AACK4V, B_FIRST4,
	B_RMID6V, B_EMPTY4, B_NUM
};

/* Valid frames the matrix starts from. */
static const struct {
	const char *name;
	uint8_t opcode;
	uint8_t ipv6;
	uint8_t vlan;
	uint32_t plen;
} bases[B_NUM] = {
	[B_SEND4] = { "ip4 RC_SEND_ONLY+13", ROCE_OPCODE(RC, SEND_ONLY), 0, 0, 13 },
	[B_WRITE6] = { "ip6 RC_WRITE_FIRST+8", ROCE_OPCODE(RC, WRITE_FIRST), 1, 0, 8 },
	[B_ACK4V] = { "ip4 vlan RC_ACK", ROCE_OPCODE(RC, ACK), 0, 1, 0 },
	[B_UD6V] = { "ip6 vlan UD_SEND_ONLY_IMM+5", ROCE_OPCODE(UD, SEND_ONLY_IMM), 1, 1, 5 },
	[B_CAS4] = { "ip4 RC_CMP_SWAP", ROCE_OPCODE(RC, CMP_SWAP), 0, 0, 0 },
	[B_READ6] = { "ip6 RC_READ_REQ", ROCE_OPCODE(RC, READ_REQ), 1, 0, 0 },
	[B_CNP4] = { "ip4 CNP", ROCE_OPCODE_CNP, 0, 0, 0 },
	[B_AACK4V] = { "ip4 vlan RC_ATOMIC_ACK", ROCE_OPCODE(RC, ATOMIC_ACK), 0, 1, 0 },
	[B_FIRST4] = { "ip4 UC_SEND_FIRST+8", ROCE_OPCODE(UC, SEND_FIRST), 0, 0, 8 },
	[B_RMID6V] = { "ip6 vlan RC_READ_RESP_MIDDLE+12", ROCE_OPCODE(RC, READ_RESP_MIDDLE),
		1, 1, 12 },
	[B_EMPTY4] = { "ip4 RC_SEND_LAST+0", ROCE_OPCODE(RC, SEND_LAST), 0, 0, 0 },
};

#define BM(x) (1u << B_##x)
#define B_IP4 (BM(SEND4) | BM(ACK4V) | BM(CAS4) | BM(CNP4) | BM(AACK4V) | BM(FIRST4) | \
		BM(EMPTY4))
#define B_IP6 (BM(WRITE6) | BM(UD6V) | BM(READ6) | BM(RMID6V))
#define B_ALL (B_IP4 | B_IP6)
#define B_TAGGED (BM(ACK4V) | BM(UD6V) | BM(AACK4V) | BM(RMID6V))
#define B_UNTAGGED (B_ALL & ~B_TAGGED)
#define B_NOPAY (BM(ACK4V) | BM(CAS4) | BM(READ6) | BM(CNP4) | BM(AACK4V))
#define B_PAY (B_ALL & ~B_NOPAY)
#define B_DATA (B_PAY & ~BM(EMPTY4))

static void
make_base(enum base_id id, struct frame *f)
{
	struct roce_pkt_desc d;
	struct roce_path path;

	path_make(&path, bases[id].ipv6, bases[id].vlan, 26 << 2 | ROCE_ECN_ECT0, 0x5A5A5, 0);
	memset(&d, 0, sizeof(d));
	d.opcode = bases[id].opcode;
	d.ackreq = 1;
	d.dest_qpn = 0x123456;
	d.psn = 0xFFFFFE;
	d.va = 0x1122334455667788ull;
	d.rkey = 0xCAFE;
	d.dma_len = 8;
	d.syndrome = ROCE_AETH_CREDIT_INVALID;
	d.msn = 42;
	d.imm = 0xDEADBEEF;
	d.qkey = 0x11111111;
	d.src_qpn = 0x654321;
	if (build_frame(&path, &d, pattern, bases[id].plen, f) != 0) {
		fprintf(stderr, "cannot build base frame %s\n", bases[id].name);
		exit(2);
	}
}

/* Where the short-frame checks fail for a frame cut to @n bytes in segments of @seg. */
static enum roce_drop_reason
trunc_reason(const struct frame *f, uint32_t n, uint32_t seg)
{
	const struct {
		uint32_t need;
		enum roce_drop_reason why;
	} steps[] = {
		{ ETH_LEN, ROCE_DROP_L2_SHORT },
		{ f->l3, ROCE_DROP_L2_SHORT },
		{ f->l4, f->ipv6 ? ROCE_DROP_IP6_SHORT : ROCE_DROP_IP4_SHORT },
	};
	uint32_t data = seg != 0 ? RTE_MIN(seg, n) : n;
	unsigned int i;

	for (i = 0; i < RTE_DIM(steps); i++) {
		if (steps[i].need > n)
			return steps[i].why;
		if (steps[i].need > data)
			return ROCE_DROP_HDR_SPLIT;
	}
	/* The frame now ends before the IP packet does. */
	return f->ipv6 ? ROCE_DROP_IP6_LEN : ROCE_DROP_IP4_LEN;
}

/* Every prefix of every base frame, the IP length left as it was. */
static void
test_truncation(void)
{
	static const struct layout lays[] = { { 0, 0 }, { 0, 1 }, { 16, 0 }, { 30, 1 } };
	static struct frame f, t;
	unsigned int b, i;
	uint32_t n;

	for (b = 0; b < B_NUM; b++) {
		make_base(b, &f);
		for (n = 0; n < f.len; n++) {
			t = f;
			t.len = n;
			for (i = 0; i < RTE_DIM(lays); i++) {
				snprintf(ctx, sizeof(ctx), "%s cut to %u, segments of %u",
						bases[b].name, n, lays[i].seg_len);
				expect_drop(&t, &lays[i], 0, trunc_reason(&f, n, lays[i].seg_len));
			}
		}
	}
}

/* What a frame whose IP and UDP lengths were shrunk to @n bytes must give. */
static enum roce_drop_reason
shrunk_reason(const struct frame *f, uint32_t n, unsigned int flags)
{
	const uint8_t *bth = f->b + frame_bth(f);
	const struct ref_op *op = ref_op(bth[0]);
	uint32_t roce, hlen, rem, pad = bth[1] >> 4 & 3;

	if (n - f->l4 < UDP_LEN)
		return ROCE_DROP_UDP_SHORT;
	roce = n - f->l4 - UDP_LEN;
	if (roce < BTH_LEN + ICRC_LEN)
		return ROCE_DROP_BTH_SHORT;
	hlen = ref_hdrs_len(op->hdrs);
	if (roce < hlen + ICRC_LEN)
		return ROCE_DROP_HDR_SHORT;
	rem = roce - hlen - ICRC_LEN;
	if (!(ref_mask(op) & ROCE_M_PAYLOAD) && rem != 0)
		return ROCE_DROP_PAYLOAD;
	if ((rem & 3) != 0 || pad > rem ||
			(pad != 0 && !(ref_mask(op) & ROCE_M_LAST)))
		return ROCE_DROP_PAD;
	/* The ICRC is now read from the wrong place. */
	return flags & ROCE_CLASSIFY_NO_ICRC ? ROCE_DROP_NONE : ROCE_DROP_ICRC;
}

/* Every prefix from the UDP header on, with IP and UDP lengths (and checksum) made to match. */
static void
test_truncation_consistent(void)
{
	static const unsigned int flag_sets[] = { 0, ROCE_CLASSIFY_NO_ICRC };
	static struct frame f, t;
	unsigned int b, k;
	uint32_t n;

	for (b = 0; b < B_NUM; b++) {
		make_base(b, &f);
		for (n = f.l4; n < f.len; n++) {
			for (k = 0; k < RTE_DIM(flag_sets); k++) {
				enum roce_drop_reason why = shrunk_reason(&f, n, flag_sets[k]);

				t = f;
				t.len = n;
				fix_lengths(&t);
				snprintf(ctx, sizeof(ctx), "%s shrunk to %u, flags %u",
						bases[b].name, n, flag_sets[k]);
				if (why == ROCE_DROP_NONE)
					expect_all(&t, flag_sets[k], ROCE_PKT_ROCE, why);
				else
					expect_all(&t, flag_sets[k], ROCE_PKT_DROP, why);
			}
		}
	}
}

/* Mutations: each changes one thing in a valid frame. */

static void
m_ip_len_add(struct frame *f, int arg)
{
	uint32_t off = f->l3 + (f->ipv6 ? 4 : 2);

	put16(f->b + off, (uint16_t)(get16(f->b + off) + arg));
	ip_fix_csum(f);
}

static void
m_ip4_len_set(struct frame *f, int arg)
{
	put16(f->b + f->l3 + 2, arg);
	ip_fix_csum(f);
}

/* IP length leaving @arg bytes for the UDP datagram. */
static void
m_l4_len_set(struct frame *f, int arg)
{
	if (f->ipv6)
		put16(f->b + f->l3 + 4, arg);
	else
		put16(f->b + f->l3 + 2, 20 + arg);
	ip_fix_csum(f);
}

/* IP and UDP lengths both leaving @arg bytes for the datagram; the rest is trailer. */
static void
m_l4_udp_len_set(struct frame *f, int arg)
{
	m_l4_len_set(f, arg);
	put16(f->b + f->l4 + 4, arg);
}

static void
m_udp_len_add(struct frame *f, int arg)
{
	put16(f->b + f->l4 + 4, (uint16_t)(get16(f->b + f->l4 + 4) + arg));
}

static void
m_udp_len_set(struct frame *f, int arg)
{
	put16(f->b + f->l4 + 4, arg);
}

/* @arg words of IPv4 options (NOPs), lengths and checksum made right. */
static void
m_ip4_opts(struct frame *f, int arg)
{
	static const uint8_t nops[40] = {
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	};

	frame_insert(f, f->l4, nops, arg * 4);
	f->b[f->l3] = 0x45 + arg;
	fix_lengths(f);
}

static void
m_ip4_opts_dport(struct frame *f, int arg)
{
	m_ip4_opts(f, 1);
	put16(f->b + f->l4 + 2, arg);
}

static void
m_ihl(struct frame *f, int arg)
{
	f->b[f->l3] = 0x40 | arg;
	ip_fix_csum(f);
}

static void
m_ihl15_cut(struct frame *f, int arg)
{
	f->b[f->l3] = 0x4F;
	f->len = f->l3 + arg;
}

/* Replace the IPv4 flags and fragment offset; the ICRC covers them, so fix it. */
static void
m_frag(struct frame *f, int arg)
{
	put16(f->b + f->l3 + 6, arg);
	ip_fix_csum(f);
	fix_icrc(f);
}

static void
m_version(struct frame *f, int arg)
{
	f->b[f->l3] = (uint8_t)(arg << 4 | (f->b[f->l3] & 0x0F));
	ip_fix_csum(f);
}

static void
m_csum_xor(struct frame *f, int arg)
{
	put16(f->b + f->l3 + 10, get16(f->b + f->l3 + 10) ^ arg);
}

/* Change a header byte without fixing the checksum. */
static void
m_ip4_stale(struct frame *f, int arg)
{
	f->b[f->l3 + arg] ^= 0x10;
}

static void
m_vlan_at(struct frame *f, uint32_t off, int tpid)
{
	uint8_t tag[4] = { tpid >> 8, tpid & 0xFF, 0x00, 0x05 };

	frame_insert(f, off, tag, sizeof(tag));
}

static void
m_vlan_outer(struct frame *f, int arg)
{
	m_vlan_at(f, 12, arg);
}

static void
m_vlan_inner(struct frame *f, int arg)
{
	m_vlan_at(f, 16, arg);
}

static void
m_tver(struct frame *f, int arg)
{
	uint8_t *bth = f->b + frame_bth(f);

	bth[1] = (bth[1] & 0xF0) | arg;
	fix_icrc(f);
}

static void
m_opcode(struct frame *f, int arg)
{
	f->b[frame_bth(f)] = arg;
	fix_icrc(f);
}

static void
m_pad(struct frame *f, int arg)
{
	uint8_t *bth = f->b + frame_bth(f);

	bth[1] = (bth[1] & ~0x30) | arg << 4;
	fix_icrc(f);
}

/* @arg more payload bytes before the ICRC, lengths and ICRC made right. */
static void
m_append(struct frame *f, int arg)
{
	frame_insert(f, f->len - ICRC_LEN, pattern, arg);
	fix_lengths(f);
	fix_icrc(f);
}

static void
m_icrc_xor(struct frame *f, int arg)
{
	f->b[f->len - ICRC_LEN + arg] ^= 0x01;
}

static void
m_bth_xor(struct frame *f, int arg)
{
	f->b[frame_bth(f) + arg] ^= 0x01;
}

static void
m_payload_xor(struct frame *f, int arg)
{
	const struct ref_op *op = ref_op(f->b[frame_bth(f)]);

	f->b[frame_bth(f) + ref_hdrs_len(op->hdrs) + arg] ^= 0x80;
}

static void
m_ext_xor(struct frame *f, int arg)
{
	f->b[frame_bth(f) + BTH_LEN + arg] ^= 0x01;
}

static void
m_ip_src_xor(struct frame *f, int arg)
{
	f->b[f->l3 + (f->ipv6 ? 8 : 12) + arg] ^= 0x01;
	ip_fix_csum(f);
}

static void
m_sport(struct frame *f, int arg)
{
	put16(f->b + f->l4, arg);
}

/* Variant fields: the ICRC must not see them. */
static void
m_tos(struct frame *f, int arg)
{
	uint8_t *ip = f->b + f->l3;

	if (f->ipv6)
		put16(ip, (uint16_t)(0x6000 | arg << 4 | (get16(ip) & 0x000F)));
	else
		ip[1] = arg;
	ip_fix_csum(f);
}

static void
m_ttl(struct frame *f, int arg)
{
	f->b[f->l3 + (f->ipv6 ? 7 : 8)] = arg;
	ip_fix_csum(f);
}

static void
m_flow(struct frame *f, int arg)
{
	uint8_t *ip = f->b + f->l3;

	put32(ip, (get32(ip) & 0xFFF00000u) | (uint32_t)arg);
}

static void
m_udp_csum(struct frame *f, int arg)
{
	put16(f->b + f->l4 + 6, arg);
}

static void
m_bth_resv(struct frame *f, int arg)
{
	uint8_t *bth = f->b + frame_bth(f);

	bth[4] = arg;
}

/* Ethernet padding or trailing bytes after the IP packet. */
static void
m_trailer(struct frame *f, int arg)
{
	memset(f->b + f->len, arg & 1 ? 0xFF : 0x00, arg);
	f->len += arg;
}

static void
m_ip4_proto(struct frame *f, int arg)
{
	f->b[f->l3 + 9] = arg;
	ip_fix_csum(f);
}

static void
m_ip6_nh(struct frame *f, int arg)
{
	f->b[f->l3 + 6] = arg;
}

static void
m_dport(struct frame *f, int arg)
{
	put16(f->b + f->l4 + 2, arg);
}

static void
m_ethertype(struct frame *f, int arg)
{
	put16(f->b + f->l3 - 2, arg);
}

struct mutation {
	const char *name;
	void (*apply)(struct frame *f, int arg);
	int lo, hi;           /* each argument in [lo, hi] */
	uint32_t bases;       /* BM() of the base frames it applies to */
	unsigned int flags;   /* classifier flags */
	uint8_t type;
	uint8_t reason;
};

#define DROP(r) ROCE_PKT_DROP, ROCE_DROP_##r
#define PASS(t) ROCE_PKT_##t, ROCE_DROP_NONE
#define NOCRC ROCE_CLASSIFY_NO_ICRC
#define OPC(t, o) ROCE_OPCODE(t, o), ROCE_OPCODE(t, o)

static const struct mutation mutations[] = {
	{ "ip length +n", m_ip_len_add, 1, 3, B_IP4, 0, DROP(IP4_LEN) },
	{ "ip length +n", m_ip_len_add, 1000, 1000, B_IP4, 0, DROP(IP4_LEN) },
	{ "ip length +n", m_ip_len_add, 1, 3, B_IP6, 0, DROP(IP6_LEN) },
	{ "ip length +n", m_ip_len_add, 1000, 1000, B_IP6, 0, DROP(IP6_LEN) },
	{ "ip length -n", m_ip_len_add, -4, -1, B_ALL, 0, DROP(UDP_LEN) },
	{ "ip4 length below IHL", m_ip4_len_set, 0, 19, B_IP4, 0, DROP(IP4_LEN) },
	{ "ip length below UDP header", m_l4_len_set, 0, 7, B_ALL, 0, DROP(UDP_SHORT) },
	{ "ip and udp length below UDP header", m_l4_udp_len_set, 0, 7, B_ALL, 0,
		DROP(UDP_SHORT) },
	{ "ip and udp length below BTH", m_l4_udp_len_set, 8, 23, B_ALL, 0, DROP(BTH_SHORT) },
	{ "ip and udp length below BTH", m_l4_udp_len_set, 8, 23, B_ALL, NOCRC, DROP(BTH_SHORT) },
	{ "udp length +-n", m_udp_len_add, -3, -1, B_ALL, 0, DROP(UDP_LEN) },
	{ "udp length +-n", m_udp_len_add, 1, 3, B_ALL, 0, DROP(UDP_LEN) },
	{ "udp length set", m_udp_len_set, 0, 8, B_ALL, 0, DROP(UDP_LEN) },
	{ "udp length set", m_udp_len_set, 0xFFFF, 0xFFFF, B_ALL, 0, DROP(UDP_LEN) },
	{ "ip4 options on 4791", m_ip4_opts, 1, 10, B_IP4, 0, DROP(IP4_OPTIONS) },
	{ "ip4 options, other port", m_ip4_opts_dport, 53, 53, B_IP4, 0, PASS(UDP) },
	{ "ip4 IHL < 5", m_ihl, 0, 4, B_IP4, 0, DROP(IP4_IHL) },
	{ "ip4 IHL 15, cut", m_ihl15_cut, 20, 59, BM(SEND4) | BM(CAS4), 0, DROP(IP4_SHORT) },
	{ "ip4 fragment", m_frag, 0x2000, 0x2000, B_IP4, 0, DROP(IP4_FRAG) },
	{ "ip4 fragment", m_frag, 0x6000, 0x6000, B_IP4, 0, DROP(IP4_FRAG) },
	{ "ip4 fragment", m_frag, 0x0001, 0x0003, B_IP4, 0, DROP(IP4_FRAG) },
	{ "ip4 fragment", m_frag, 0x1FFF, 0x1FFF, B_IP4, 0, DROP(IP4_FRAG) },
	{ "ip4 fragment", m_frag, 0x4100, 0x4100, B_IP4, 0, DROP(IP4_FRAG) },
	{ "ip4 DF clear", m_frag, 0, 0, B_IP4, 0, PASS(ROCE) },
	{ "ip4 version", m_version, 0, 3, B_IP4, 0, DROP(IP4_VERSION) },
	{ "ip4 version", m_version, 5, 15, B_IP4, 0, DROP(IP4_VERSION) },
	{ "ip6 version", m_version, 0, 5, B_IP6, 0, DROP(IP6_VERSION) },
	{ "ip6 version", m_version, 7, 15, B_IP6, 0, DROP(IP6_VERSION) },
	{ "ip4 checksum", m_csum_xor, 1, 16, B_IP4, 0, DROP(IP4_CSUM) },
	{ "ip4 checksum", m_csum_xor, 0x8000, 0x8000, B_IP4, 0, DROP(IP4_CSUM) },
	{ "ip4 stale checksum", m_ip4_stale, 1, 1, B_IP4, 0, DROP(IP4_CSUM) },
	{ "ip4 stale checksum", m_ip4_stale, 8, 8, B_IP4, 0, DROP(IP4_CSUM) },
	{ "ip4 stale checksum", m_ip4_stale, 12, 19, B_IP4, 0, DROP(IP4_CSUM) },
	{ "vlan tag added", m_vlan_outer, 0x8100, 0x8100, B_UNTAGGED, 0, PASS(ROCE) },
	{ "qinq tag added", m_vlan_outer, 0x88A8, 0x88A8, B_UNTAGGED, 0, PASS(ROCE) },
	{ "second vlan tag", m_vlan_outer, 0x8100, 0x8100, B_TAGGED, 0, DROP(VLAN_DEPTH) },
	{ "outer qinq tag", m_vlan_outer, 0x88A8, 0x88A8, B_TAGGED, 0, DROP(VLAN_DEPTH) },
	{ "inner qinq tag", m_vlan_inner, 0x88A8, 0x88A8, B_TAGGED, 0, DROP(VLAN_DEPTH) },
	{ "inner vlan tag", m_vlan_inner, 0x8100, 0x8100, B_TAGGED, 0, DROP(VLAN_DEPTH) },
	{ "bth tver", m_tver, 1, 15, B_ALL, 0, DROP(BTH_TVER) },
	{ "bth tver, no icrc", m_tver, 1, 15, B_ALL, NOCRC, DROP(BTH_TVER) },
	{ "opcode needs more", m_opcode, OPC(RC, CMP_SWAP), BM(SEND4) | BM(AACK4V), 0,
		DROP(HDR_SHORT) },
	{ "opcode needs more", m_opcode, OPC(RC, WRITE_ONLY_IMM), BM(SEND4), 0, DROP(HDR_SHORT) },
	{ "opcode needs more", m_opcode, OPC(UD, SEND_ONLY), BM(ACK4V), 0, DROP(HDR_SHORT) },
	{ "opcode needs more", m_opcode, OPC(RC, ATOMIC_ACK), BM(ACK4V), 0, DROP(HDR_SHORT) },
	{ "opcode needs more", m_opcode, ROCE_OPCODE_CNP, ROCE_OPCODE_CNP, BM(ACK4V), 0,
		DROP(HDR_SHORT) },
	{ "opcode needs more", m_opcode, OPC(RC, WRITE_FIRST), BM(EMPTY4), 0, DROP(HDR_SHORT) },
	{ "opcode without payload", m_opcode, OPC(RC, ACK), BM(SEND4), 0, DROP(PAYLOAD) },
	{ "opcode without payload", m_opcode, OPC(RC, READ_REQ), BM(WRITE6), 0, DROP(PAYLOAD) },
	{ "payload on no-payload opcode", m_append, 1, 8, B_NOPAY, 0, DROP(PAYLOAD) },
	{ "payload on no-payload opcode", m_append, 1, 8, B_NOPAY, NOCRC, DROP(PAYLOAD) },
	{ "pad on no-payload opcode", m_pad, 1, 3, B_NOPAY, 0, DROP(PAD) },
	{ "pad on FIRST", m_pad, 1, 3, BM(FIRST4) | BM(WRITE6), 0, DROP(PAD) },
	{ "pad on MIDDLE", m_pad, 1, 3, BM(RMID6V), 0, DROP(PAD) },
	{ "pad > payload", m_pad, 1, 3, BM(EMPTY4), 0, DROP(PAD) },
	{ "pad on LAST/ONLY", m_pad, 0, 3, BM(SEND4) | BM(UD6V), 0, PASS(ROCE) },
	{ "misaligned payload", m_append, 1, 3, B_PAY, 0, DROP(PAD) },
	{ "misaligned payload", m_append, 5, 7, B_PAY, NOCRC, DROP(PAD) },
	{ "4 more payload bytes", m_append, 4, 4, B_PAY, 0, PASS(ROCE) },
	{ "icrc byte", m_icrc_xor, 0, 3, B_ALL, 0, DROP(ICRC) },
	{ "icrc byte, no icrc", m_icrc_xor, 0, 3, B_ALL, NOCRC, PASS(ROCE) },
	{ "bth byte", m_bth_xor, 2, 3, B_ALL, 0, DROP(ICRC) },
	{ "bth byte", m_bth_xor, 5, 11, B_ALL, 0, DROP(ICRC) },
	{ "bth byte, no icrc", m_bth_xor, 5, 11, B_ALL, NOCRC, PASS(ROCE) },
	{ "extension header byte", m_ext_xor, 0, 3, B_NOPAY | BM(WRITE6) | BM(UD6V), 0,
		DROP(ICRC) },
	{ "payload byte", m_payload_xor, 0, 0, B_DATA, 0, DROP(ICRC) },
	{ "payload byte, no icrc", m_payload_xor, 0, 0, B_DATA, NOCRC, PASS(ROCE) },
	{ "ip source", m_ip_src_xor, 0, 3, B_ALL, 0, DROP(ICRC) },
	{ "udp source port", m_sport, 0x1234, 0x1234, B_ALL, 0, DROP(ICRC) },
	{ "tos/traffic class", m_tos, 0, 255, B_ALL, 0, PASS(ROCE) },
	{ "ttl/hop limit", m_ttl, 0, 255, B_ALL, 0, PASS(ROCE) },
	{ "ip6 flow label", m_flow, 0, 3, B_IP6, 0, PASS(ROCE) },
	{ "ip6 flow label", m_flow, 0xFFFFC, 0xFFFFF, B_IP6, 0, PASS(ROCE) },
	{ "udp checksum", m_udp_csum, 1, 3, B_ALL, 0, PASS(ROCE) },
	{ "udp checksum", m_udp_csum, 0xFFFF, 0xFFFF, B_ALL, 0, PASS(ROCE) },
	{ "bth fecn/becn/resv6", m_bth_resv, 0, 255, B_ALL, 0, PASS(ROCE) },
	{ "trailer after the ip packet", m_trailer, 1, 64, B_ALL, 0, PASS(ROCE) },
	{ "ip4 protocol icmp", m_ip4_proto, 1, 1, B_IP4, 0, PASS(ICMP) },
	{ "ip4 protocol other", m_ip4_proto, 6, 6, B_IP4, 0, PASS(OTHER) },
	{ "ip4 protocol other", m_ip4_proto, 0, 0, B_IP4, 0, PASS(OTHER) },
	{ "ip6 next header icmp6", m_ip6_nh, 58, 58, B_IP6, 0, PASS(ICMP6) },
	{ "ip6 next header other", m_ip6_nh, 6, 6, B_IP6, 0, PASS(OTHER) },
	{ "ip6 next header other", m_ip6_nh, 0, 0, B_IP6, 0, PASS(OTHER) },
	{ "ip6 next header other", m_ip6_nh, 44, 44, B_IP6, 0, PASS(OTHER) },
	{ "udp port", m_dport, 4790, 4790, B_ALL, 0, PASS(UDP) },
	{ "udp port", m_dport, 4792, 4792, B_ALL, 0, PASS(UDP) },
	{ "udp port", m_dport, 0, 0, B_ALL, 0, PASS(UDP) },
	{ "udp port", m_dport, 0xB712, 0xB712, B_ALL, 0, PASS(UDP) },
	{ "ethertype arp", m_ethertype, 0x0806, 0x0806, B_ALL, 0, PASS(ARP) },
	{ "ethertype roce v1", m_ethertype, 0x8915, 0x8915, B_ALL, 0, PASS(OTHER) },
	{ "ethertype ipv6 on ipv4", m_ethertype, 0x86DD, 0x86DD, B_IP4, 0, DROP(IP6_VERSION) },
	{ "ethertype ipv4 on ipv6", m_ethertype, 0x0800, 0x0800, B_IP6, 0, DROP(IP4_VERSION) },
};

static void
run_mutation(const struct mutation *mu, const struct frame *bf, enum base_id b)
{
	static struct frame f;
	int arg;

	for (arg = mu->lo; arg <= mu->hi; arg++) {
		f = *bf;
		mu->apply(&f, arg);
		snprintf(ctx, sizeof(ctx), "%s (%d) on %s", mu->name, arg, bases[b].name);
		expect_all(&f, mu->flags, mu->type, mu->reason);
	}
}

static void
test_mutations(void)
{
	static struct frame bf[B_NUM];
	unsigned int i, b;

	for (b = 0; b < B_NUM; b++) {
		make_base(b, &bf[b]);
		snprintf(ctx, sizeof(ctx), "base %s", bases[b].name);
		expect_all(&bf[b], 0, ROCE_PKT_ROCE, ROCE_DROP_NONE);
	}
	for (i = 0; i < RTE_DIM(mutations); i++)
		for (b = 0; b < B_NUM; b++)
			if (mutations[i].bases & 1u << b)
				run_mutation(&mutations[i], &bf[b], b);
}

static void
test_unknown_opcodes(void)
{
	static const enum base_id on[] = { B_SEND4, B_WRITE6, B_ACK4V };
	static struct frame bf, f;
	unsigned int op, i;

	for (i = 0; i < RTE_DIM(on); i++) {
		make_base(on[i], &bf);
		for (op = 0; op < 256; op++) {
			if (ref_op(op) != NULL)
				continue;
			f = bf;
			m_opcode(&f, op);
			snprintf(ctx, sizeof(ctx), "opcode 0x%02x on %s", op, bases[on[i]].name);
			expect_all(&f, 0, ROCE_PKT_DROP, ROCE_DROP_OPCODE);
			expect_all(&f, ROCE_CLASSIFY_NO_ICRC, ROCE_PKT_DROP, ROCE_DROP_OPCODE);
		}
	}
}

/* Every first-segment length: short of the payload is HDR_SPLIT, the rest RoCE. */
static void
test_hdr_split(void)
{
	static struct frame f;
	unsigned int b, ex;
	uint32_t s, pay_off;

	for (b = 0; b < B_NUM; b++) {
		make_base(b, &f);
		pay_off = frame_bth(&f) + ref_hdrs_len(ref_op(bases[b].opcode)->hdrs);
		for (s = 1; s < f.len; s++) {
			for (ex = 0; ex < 2; ex++) {
				struct layout lay = { s, ex };

				snprintf(ctx, sizeof(ctx), "%s in segments of %u", bases[b].name,
						s);
				if (s < pay_off)
					expect_drop(&f, &lay, 0, ROCE_DROP_HDR_SPLIT);
				else
					expect_type(&f, &lay, 0, ROCE_PKT_ROCE);
			}
		}
	}
}

/* --- traffic that is not RoCE --- */

static uint32_t
mk_l2(struct frame *f, int vlan, uint16_t et)
{
	uint32_t l3 = vlan ? ETH_LEN + VLAN_LEN : ETH_LEN;

	memset(f, 0, sizeof(*f));
	memcpy(f->b, &mac_b, 6);
	memcpy(f->b + 6, &mac_a, 6);
	if (vlan) {
		put16(f->b + 12, 0x8100);
		put16(f->b + 14, 0x0007);
	}
	put16(f->b + l3 - 2, et);
	f->l3 = f->l4 = l3;
	return l3;
}

static void
mk_arp(struct frame *f, int vlan)
{
	uint32_t l3 = mk_l2(f, vlan, 0x0806);
	uint8_t *a = f->b + l3;

	put16(a, 1);
	put16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, 1);
	memcpy(a + 8, &mac_a, 6);
	memcpy(a + 14, ip4_a, 4);
	memcpy(a + 24, ip4_b, 4);
	f->len = l3 + 28;
}

/* IPv4 carrying @l4len bytes of protocol @proto; a UDP header when proto is 17. */
static void
mk_ip4(struct frame *f, int vlan, uint8_t proto, uint16_t dport, uint32_t l4len)
{
	uint32_t l3 = mk_l2(f, vlan, 0x0800);
	uint8_t *ip = f->b + l3;

	ip[0] = 0x45;
	ip[1] = 0xB8;
	put16(ip + 2, 20 + l4len);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, ip4_a, 4);
	memcpy(ip + 16, ip4_b, 4);
	f->l4 = l3 + 20;
	f->len = f->l4 + l4len;
	memcpy(f->b + f->l4, pattern, l4len);
	if (proto == 17) {
		put16(f->b + f->l4, 4791);
		put16(f->b + f->l4 + 2, dport);
		put16(f->b + f->l4 + 4, l4len);
	}
	ip_fix_csum(f);
}

static void
mk_ip6(struct frame *f, int vlan, uint8_t nh, uint16_t dport, uint32_t l4len)
{
	uint32_t l3 = mk_l2(f, vlan, 0x86DD);
	uint8_t *ip = f->b + l3;

	put32(ip, 6u << 28 | 0x2Eu << 20 | 0xBEEF);
	put16(ip + 4, l4len);
	ip[6] = nh;
	ip[7] = 255;
	memcpy(ip + 8, ip6_a, 16);
	memcpy(ip + 24, ip6_b, 16);
	f->ipv6 = 1;
	f->l4 = l3 + 40;
	f->len = f->l4 + l4len;
	memcpy(f->b + f->l4, pattern, l4len);
	if (nh == 17) {
		put16(f->b + f->l4 + 2, dport);
		put16(f->b + f->l4 + 4, l4len);
	}
}

static void
mk_icmp4(struct frame *f, int vlan)
{
	mk_ip4(f, vlan, 1, 0, 64);
}

static void
mk_icmp6(struct frame *f, int vlan)
{
	mk_ip6(f, vlan, 58, 0, 32);
}

static void
mk_udp4(struct frame *f, int vlan)
{
	mk_ip4(f, vlan, 17, 53, 40);
}

static void
mk_udp6(struct frame *f, int vlan)
{
	mk_ip6(f, vlan, 17, 4789, 50);
}

static void
mk_tcp4(struct frame *f, int vlan)
{
	mk_ip4(f, vlan, 6, 0, 20);
}

static void
mk_tcp6(struct frame *f, int vlan)
{
	mk_ip6(f, vlan, 6, 0, 20);
}

static void
mk_lldp(struct frame *f, int vlan)
{
	mk_l2(f, vlan, 0x88CC);
	f->len = 60;
}

static void
mk_bare_l2(struct frame *f, int vlan)
{
	f->len = mk_l2(f, vlan, 0x0000);
}

/* An empty UDP datagram to 4791: too short for a BTH. */
static void
mk_udp4_empty(struct frame *f, int vlan)
{
	mk_ip4(f, vlan, 17, 4791, 8);
}

static void
mk_udp6_bth_only(struct frame *f, int vlan)
{
	mk_ip6(f, vlan, 17, 4791, 8 + 12 + 3);
}

static void
mk_icmp4_frag(struct frame *f, int vlan)
{
	mk_ip4(f, vlan, 1, 0, 64);
	put16(f->b + f->l3 + 6, 0x2000);
	ip_fix_csum(f);
}

static void
mk_icmp4_badsum(struct frame *f, int vlan)
{
	mk_ip4(f, vlan, 1, 0, 64);
	f->b[f->l3 + 11] ^= 0xFF;
}

static const struct {
	const char *name;
	void (*mk)(struct frame *f, int vlan);
	uint8_t type;
	uint8_t reason;
} others[] = {
	{ "arp", mk_arp, PASS(ARP) },
	{ "icmp", mk_icmp4, PASS(ICMP) },
	{ "icmpv6", mk_icmp6, PASS(ICMP6) },
	{ "udp4 dns", mk_udp4, PASS(UDP) },
	{ "udp6 vxlan", mk_udp6, PASS(UDP) },
	{ "tcp4", mk_tcp4, PASS(OTHER) },
	{ "tcp6", mk_tcp6, PASS(OTHER) },
	{ "lldp", mk_lldp, PASS(OTHER) },
	{ "bare ethernet header", mk_bare_l2, PASS(OTHER) },
	{ "udp4 4791, no bth", mk_udp4_empty, DROP(BTH_SHORT) },
	{ "udp6 4791, bth without icrc", mk_udp6_bth_only, DROP(BTH_SHORT) },
	{ "icmp fragment", mk_icmp4_frag, DROP(IP4_FRAG) },
	{ "icmp bad checksum", mk_icmp4_badsum, DROP(IP4_CSUM) },
};

static void
test_non_roce(void)
{
	static struct frame f;
	unsigned int i, vlan;

	for (i = 0; i < RTE_DIM(others); i++) {
		for (vlan = 0; vlan < 2; vlan++) {
			others[i].mk(&f, vlan);
			snprintf(ctx, sizeof(ctx), "%s%s", others[i].name, vlan ? " vlan" : "");
			expect_all(&f, 0, others[i].type, others[i].reason);
		}
	}
}

/* --- bursts --- */

#define MIX_MAX 64

struct mix {
	unsigned int n;
	struct frame f[MIX_MAX];
	struct roce_pkt_meta want[MIX_MAX];
};

static void
mix_add(struct mix *mx, const struct frame *f)
{
	if (mx->n == MIX_MAX)
		return;
	mx->f[mx->n] = *f;
	snprintf(ctx, sizeof(ctx), "mix frame %u", mx->n);
	mx->want[mx->n] = classify(f->b, f->len, &default_layouts[0], 0, NULL, NULL);
	mx->n++;
}

static void
mix_fill(struct mix *mx)
{
	static struct frame f;
	unsigned int b, i;

	mx->n = 0;
	for (b = 0; b < B_NUM; b++) {
		make_base(b, &f);
		mix_add(mx, &f);
		m_icrc_xor(&f, 1);
		mix_add(mx, &f);
		make_base(b, &f);
		f.len -= 3;
		mix_add(mx, &f);
		make_base(b, &f);
		m_tver(&f, 2);
		mix_add(mx, &f);
	}
	for (i = 0; i < RTE_DIM(others); i++) {
		others[i].mk(&f, i & 1);
		mix_add(mx, &f);
	}
}

static void
check_burst(struct mix *mx, const unsigned int *pick, uint16_t n, unsigned int impl,
		roce_classify_fn fn)
{
	struct rte_mbuf *pkts[MIX_MAX * 2];
	uint64_t types[ROCE_PKT_TYPE_NUM] = { 0 }, drops[ROCE_DROP_NUM] = { 0 };
	struct roce_wire_stats st;
	uint16_t i, nb_roce = 0, ret;

	memset(&st, 0, sizeof(st));
	for (i = 0; i < n; i++) {
		const struct frame *f = &mx->f[pick[i]];

		pkts[i] = layout_mbuf(&default_layouts[i & 1], f->b, f->len);
		types[mx->want[pick[i]].type]++;
		drops[mx->want[pick[i]].reason]++;
		nb_roce += mx->want[pick[i]].type == ROCE_PKT_ROCE;
	}
	ret = fn(pkts, n, 0, &st);
	RT_CHECK(ret == nb_roce, "burst of %u, impl %u: returned %u, want %u", n, impl, ret,
			nb_roce);
	RT_CHECK(memcmp(st.type, types, sizeof(types)) == 0 &&
			memcmp(st.drop, drops, sizeof(drops)) == 0,
			"burst of %u, impl %u: counters", n, impl);
	for (i = 0; i < n; i++) {
		RT_CHECK(memcmp(roce_pkt_meta(pkts[i]), &mx->want[pick[i]],
					sizeof(struct roce_pkt_meta)) == 0,
				"burst of %u, impl %u, packet %u (frame %u): %s, want %s", n,
				impl, i, pick[i], meta_str(roce_pkt_meta(pkts[i])),
				meta_str(&mx->want[pick[i]]));
		rte_pktmbuf_free(pkts[i]);
	}
}

static void
test_bursts(void)
{
	static const uint16_t sizes[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 31, 32, 33, 63, 127 };
	static struct mix mx;
	unsigned int pick[MIX_MAX * 2], s, i, r;

	mix_fill(&mx);
	for (s = 0; s < RTE_DIM(sizes); s++) {
		for (r = 0; r < 4; r++) {
			for (i = 0; i < sizes[s]; i++)
				pick[i] = rng() % mx.n;
			for (i = 0; i < nb_impl; i++)
				check_burst(&mx, pick, sizes[s], impl_id[i], impl_fn[i]);
			check_burst(&mx, pick, sizes[s], ROCE_CLASSIFY_AUTO, roce_classify_burst);
		}
	}
}

/* --- implementation selection and names --- */

static void
test_impl_api(void)
{
	unsigned int i;
	const char *names[ROCE_DROP_NUM];

	RT_CHECK(roce_pkt_meta_register() == 0 && roce_pkt_meta_offset >= 0, "dynfield");
	RT_CHECK(roce_classify_get(ROCE_CLASSIFY_SCALAR) != NULL, "no scalar classifier");
	RT_CHECK(roce_classify_get(ROCE_CLASSIFY_AUTO) == impl_fn[nb_impl - 1],
			"auto is not the widest usable implementation");
	RT_CHECK(roce_classify_get(ROCE_CLASSIFY_IMPL_NUM) == NULL &&
			roce_classify_select(ROCE_CLASSIFY_IMPL_NUM) == -ENOTSUP,
			"out-of-range implementation accepted");
	for (i = 0; i < nb_impl; i++)
		RT_CHECK(roce_classify_select(impl_id[i]) == 0, "cannot select %s",
				roce_classify_impl_name(impl_id[i]));
	/* Limit the EAL's SIMD width: the vector versions must become unavailable. */
	if (rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_128) == 0) {
		RT_CHECK(roce_classify_get(ROCE_CLASSIFY_AVX2) == NULL &&
				roce_classify_get(ROCE_CLASSIFY_AVX512) == NULL &&
				roce_classify_select(ROCE_CLASSIFY_AVX2) == -ENOTSUP &&
				roce_classify_get(ROCE_CLASSIFY_AUTO) ==
				roce_classify_get(ROCE_CLASSIFY_SCALAR),
				"vector classifier beyond the SIMD limit");
		rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	}
	RT_CHECK(strcmp(roce_classify_impl_name(ROCE_CLASSIFY_SCALAR), "scalar") == 0 &&
			strcmp(roce_classify_impl_name(ROCE_CLASSIFY_AVX2), "avx2") == 0 &&
			strcmp(roce_classify_impl_name(ROCE_CLASSIFY_AVX512), "avx512") == 0,
			"implementation names");
	for (i = 0; i < ROCE_DROP_NUM; i++) {
		names[i] = roce_drop_reason_name(i);
		RT_CHECK(strcmp(names[i], "UNKNOWN") != 0 && roce_drop_reason_desc(i)[0] != 0,
				"drop reason %u has no name", i);
		RT_CHECK(i == 0 || strcmp(names[i], names[i - 1]) != 0, "drop reason names");
	}
	RT_CHECK(strcmp(roce_drop_reason_name(ROCE_DROP_NUM), "UNKNOWN") == 0 &&
			strcmp(roce_pkt_type_name(ROCE_PKT_TYPE_NUM), "UNKNOWN") == 0,
			"names out of range");
	for (i = 0; i < ROCE_PKT_TYPE_NUM; i++)
		RT_CHECK(strcmp(roce_pkt_type_name(i), "UNKNOWN") != 0, "type %u name", i);
}

/* --- the shared rxe captures: every frame RoCE, ICRC as the reference computes it --- */

static void
capture_file(const char *path, unsigned int *frames)
{
	static struct roce_pcap_rec rec;
	static struct frame f;
	struct roce_pkt_meta m;
	struct roce_pcap pc;
	int ret;

	if (roce_pcap_open(&pc, path) != 0) {
		RT_CHECK(0, "cannot open %s", path);
		return;
	}
	while ((ret = roce_pcap_next(&pc, &rec)) == 1) {
		snprintf(ctx, sizeof(ctx), "%s frame %lu", path, (unsigned long)pc.records);
		m = classify(rec.data, rec.caplen, &default_layouts[1], 0, NULL, NULL);
		if (m.type != ROCE_PKT_ROCE || rec.caplen > sizeof(f.b)) {
			RT_CHECK(0, "%s: %s", ctx, meta_str(&m));
			continue;
		}
		memcpy(f.b, rec.data, rec.caplen);
		f.len = m.l4_off + get16(f.b + m.l4_off + 4);
		f.l3 = m.l3_off;
		f.l4 = m.l4_off;
		f.ipv6 = !!(m.flags & ROCE_PKT_F_IPV6);
		check_roce_vs_frame(&f, &m);
		RT_CHECK(get_le32(f.b + f.len - 4) ==
				ref_icrc(f.b + f.l3, f.len - 4 - f.l3, f.ipv6),
				"%s: reference ICRC", ctx);
		(*frames)++;
	}
	RT_CHECK(ret == 0, "%s: damaged record", path);
	roce_pcap_close(&pc);
}

static void
capture_dir(const char *dir, unsigned int *files, unsigned int *frames)
{
	char path[1024];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);

		if (n < 6 || strcmp(e->d_name + n - 5, ".pcap") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		capture_file(path, frames);
		(*files)++;
	}
	closedir(d);
}

static void
test_captures(void)
{
	char dir[1024];
	unsigned int files = 0, frames = 0;

	capture_dir(rt_captures_dir(), &files, &frames);
	snprintf(dir, sizeof(dir), "%s/errors", rt_captures_dir());
	capture_dir(dir, &files, &frames);
	if (files == 0) {
		printf("  no captures in %s: skipped\n", rt_captures_dir());
		return;
	}
	printf("  %u frames in %u captures\n", frames, files);
}

static void
find_impls(void)
{
	static const enum roce_classify_impl all[] = {
		ROCE_CLASSIFY_SCALAR, ROCE_CLASSIFY_AVX2, ROCE_CLASSIFY_AVX512,
	};
	unsigned int i;

	/* The EAL stops at 256 bits unless told otherwise; the AVX-512 version is tested too. */
	rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	for (i = 0; i < RTE_DIM(all); i++) {
		roce_classify_fn fn = roce_classify_get(all[i]);

		if (fn == NULL)
			continue;
		impl_id[nb_impl] = all[i];
		impl_fn[nb_impl++] = fn;
	}
	printf("classifiers:");
	for (i = 0; i < nb_impl; i++)
		printf(" %s", roce_classify_impl_name(impl_id[i]));
	printf("\n");
}

/*
 * The IPv4 header checksum: random headers with a right checksum pass, and of the 65536 values
 * of the checksum field only the right one does (the classifier sums 32-bit words for IHL 5).
 */
static void
test_ip4_checksum(void)
{
	static const enum base_id ids[] = { B_SEND4, B_ACK4V };
	unsigned int i, k;

	for (i = 0; i < RTE_DIM(ids); i++) {
		struct frame f;
		uint8_t *ip;
		uint16_t good;
		uint32_t v;

		for (k = 0; k < 200; k++) {
			make_base(ids[i], &f);
			ip = f.b + f.l3;
			ip[1] = (uint8_t)rng();          /* TOS */
			put16(ip + 4, (uint16_t)rng());  /* identification */
			ip[8] = (uint8_t)rng();          /* TTL */
			ip_fix_csum(&f);
			fix_icrc(&f);
			snprintf(ctx, sizeof(ctx), "%s random header %u", bases[ids[i]].name, k);
			expect_all(&f, 0, ROCE_PKT_ROCE, ROCE_DROP_NONE);
		}
		good = (uint16_t)(ip[10] << 8 | ip[11]);
		for (v = 0; v < 65536; v++) {
			if (v == good)
				continue;
			put16(ip + 10, (uint16_t)v);
			snprintf(ctx, sizeof(ctx), "%s checksum 0x%04x", bases[ids[i]].name, v);
			expect_drop(&f, &default_layouts[0], 0, ROCE_DROP_IP4_CSUM);
		}
	}
}

int
main(int argc, char **argv)
{
	unsigned int i;

	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	pool = rt_pool(4095, MBUF_ROOM);
	ext_pool = rt_pool(4095, 0);
	for (i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)rng();
	find_impls();

	RT_RUN(test_opcode_table);
	RT_RUN(test_path_init);
	RT_RUN(test_udp_sport);
	RT_RUN(test_build_errors);
	RT_RUN(test_icrc_api);
	RT_RUN(test_ip4_checksum);
	RT_RUN(test_builders);
	RT_RUN(test_build_chain);
	RT_RUN(test_truncation);
	RT_RUN(test_truncation_consistent);
	RT_RUN(test_mutations);
	RT_RUN(test_unknown_opcodes);
	RT_RUN(test_hdr_split);
	RT_RUN(test_non_roce);
	RT_RUN(test_bursts);
	RT_RUN(test_impl_api);
	RT_RUN(test_captures);
	return rt_report("test_wire");
}
