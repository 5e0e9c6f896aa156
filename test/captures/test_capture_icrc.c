/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ground truth for the classifier and the ICRC, on every packet of every shared capture:
 *
 * - every classifier implementation, on one segment and on several segment layouts, gives
 *   the same metadata byte for byte, and verdict ROCE while the headers lie in the first
 *   segment, HDR_SPLIT when they do not;
 * - roce_icrc_compute() over one segment and over chains equals the stored ICRC and a bitwise
 *   CRC-32 written here from the spec;
 * - flipping any one bit from the IP header to the end of the ICRC breaks the ICRC check,
 *   except in the variant fields, whose flips leave the ICRC unchanged (the masking), and no
 *   flipped header makes the classifier accept the packet.
 */
#include <glob.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_vect.h>

#include "roce_pcapfile.h"
#include "roce_test.h"
#include "roce_wire.h"

#define BURST 32u
#define ETH_HLEN 14
#define VLAN_HLEN 4
#define IP4_HLEN 20
#define IP6_HLEN 40
#define UDP_HLEN 8
#define BTH_LEN 12
#define MASKED_LEN (IP6_HLEN + UDP_HLEN + BTH_LEN)
#define RT_SKIP 77 /* meson's exit status for a skipped test */

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifdef UNDER_ASAN
#define FLIP_STRIDE 7 /* co-prime with 8: every bit position of a byte still gets flipped */
#else
#define FLIP_STRIDE 1
#endif

/* How a layout sizes the first segment. */
enum first_seg {
	FIRST_WHOLE,  /* the whole frame */
	FIRST_FIXED,  /* seg bytes, like the following segments */
	FIRST_HDRS,   /* exactly the frame's headers (payload_off) plus adj */
};

struct layout {
	const char *name;
	enum first_seg first;
	int adj;
	uint32_t seg;  /* size of the segments after the first */
};

static const struct layout layouts[] = {
	{ "one segment", FIRST_WHOLE, 0, 0 },
	{ "64-byte segments", FIRST_FIXED, 0, 64 },
	{ "100-byte segments", FIRST_FIXED, 0, 100 },
	{ "1000-byte segments", FIRST_FIXED, 0, 1000 },
	{ "headers, then 3-byte segments", FIRST_HDRS, 0, 3 },
	{ "headers + 1 byte, then 64-byte segments", FIRST_HDRS, 1, 64 },
	{ "headers - 1 byte, then 64-byte segments", FIRST_HDRS, -1, 64 },
};

/* Bits the ICRC treats as ones, by byte from the IP header (IBA A17.3.3), per IP version. */
static const uint8_t variant_v4[MASKED_LEN] = {
	[1] = 0xFF,                               /* TOS */
	[8] = 0xFF,                               /* TTL */
	[10] = 0xFF, [11] = 0xFF,                 /* header checksum */
	[IP4_HLEN + 6] = 0xFF, [IP4_HLEN + 7] = 0xFF,     /* UDP checksum */
	[IP4_HLEN + UDP_HLEN + 4] = 0xFF,                /* BTH FECN, BECN, resv6a */
};
static const uint8_t variant_v6[MASKED_LEN] = {
	[0] = 0x0F,                               /* traffic class, high nibble */
	[1] = 0xFF, [2] = 0xFF, [3] = 0xFF,       /* its low nibble, flow label */
	[7] = 0xFF,                               /* hop limit */
	[IP6_HLEN + 6] = 0xFF, [IP6_HLEN + 7] = 0xFF,
	[IP6_HLEN + UDP_HLEN + 4] = 0xFF,
};

struct capture {
	char *path;
	uint32_t nb;
	uint8_t **data;
	uint32_t *len;
	struct roce_pkt_meta *ref;  /* scalar classifier, one segment */
};

static roce_classify_fn impls[ROCE_CLASSIFY_IMPL_NUM];
static struct rte_mempool *pool_whole, *pool_mid, *pool_small;
static uint64_t nb_pkts, nb_classified, nb_icrc, nb_flips, nb_masked_flips;

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Bitwise reflected CRC-32 (polynomial 0x04C11DB7), as zlib computes it. */
static uint32_t
ref_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
	unsigned int k;

	crc = ~crc;
	while (n-- > 0) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = crc >> 1 ^ (0xEDB88320u & -(crc & 1));
	}
	return ~crc;
}

static uint8_t
variant_mask(uint32_t rel, int ipv6)
{
	return rel < MASKED_LEN ? (ipv6 ? variant_v6 : variant_v4)[rel] : 0;
}

/* ICRC from the spec: ones for the LRH, variant bits set, CRC-32 up to the ICRC. */
static uint32_t
ref_icrc(const uint8_t *frame, uint32_t l3_off, int ipv6, uint32_t icrc_off)
{
	static const uint8_t lrh[8] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
	static uint8_t buf[ROCE_PCAP_SNAP_MAX];
	uint32_t i, n = icrc_off - l3_off;

	memcpy(buf, frame + l3_off, n);
	for (i = 0; i < n; i++)
		buf[i] |= variant_mask(i, ipv6);
	return ref_crc32(ref_crc32(0, lrh, sizeof(lrh)), buf, n);
}

/* Whether a frame is sent to UDP port 4791 and so must classify as ROCE. */
static int
is_udp4791(const uint8_t *p, uint32_t len)
{
	uint32_t off = ETH_HLEN, l4;
	uint16_t et;

	if (len < off)
		return 0;
	et = rd16(p + 12);
	if ((et == RTE_ETHER_TYPE_VLAN || et == RTE_ETHER_TYPE_QINQ) && len >= off + VLAN_HLEN) {
		et = rd16(p + 16);
		off += VLAN_HLEN;
	}
	if (et == RTE_ETHER_TYPE_IPV4 && len >= off + IP4_HLEN && p[off + 9] == IPPROTO_UDP)
		l4 = off + (p[off] & 0x0F) * 4;
	else if (et == RTE_ETHER_TYPE_IPV6 && len >= off + IP6_HLEN && p[off + 6] == IPPROTO_UDP)
		l4 = off + IP6_HLEN;
	else
		return 0;
	return len >= l4 + 4 && rd16(p + l4 + 2) == ROCE_UDP_PORT;
}

/* Chain of a first segment of @first bytes, then segments of @seg bytes. */
static struct rte_mbuf *
chain(struct rte_mempool *mp, const uint8_t *data, uint32_t len, uint32_t first, uint32_t seg)
{
	struct rte_mbuf *head = NULL, *m;
	uint32_t done = 0;

	do {
		uint32_t n = RTE_MIN(head == NULL ? first : seg, len - done);

		m = rte_pktmbuf_alloc(mp);
		if (m == NULL || n > rte_pktmbuf_tailroom(m))
			goto fail;
		memcpy(rte_pktmbuf_append(m, n), data + done, n);
		done += n;
		if (head == NULL)
			head = m;
		else if (rte_pktmbuf_chain(head, m) != 0)
			goto fail;
	} while (done < len);
	return head;
fail:
	if (m != head)
		rte_pktmbuf_free(m);
	rte_pktmbuf_free(head);
	return NULL;
}

static uint32_t
layout_first(const struct layout *l, const struct roce_pkt_meta *ref, uint32_t len)
{
	switch (l->first) {
	case FIRST_FIXED:
		return l->seg;
	case FIRST_HDRS:
		return ref->type == ROCE_PKT_ROCE ? (uint32_t)(ref->payload_off + l->adj) : l->seg;
	default:
		return len;
	}
}

static struct rte_mempool *
layout_pool(uint32_t first, uint32_t seg)
{
	uint32_t room = RTE_MAX(first, seg);

	return room <= 128 ? pool_small : room <= 1024 ? pool_mid : pool_whole;
}

static int
load(struct capture *cap, const char *path)
{
	struct roce_pcap_rec *rec = malloc(sizeof(*rec));
	struct roce_pcap pc;
	int ret;

	memset(cap, 0, sizeof(*cap));
	cap->path = strdup(path);
	if (rec == NULL || roce_pcap_open(&pc, path) != 0) {
		free(rec);
		return -1;
	}
	while ((ret = roce_pcap_next(&pc, rec)) > 0) {
		cap->data = realloc(cap->data, (cap->nb + 1) * sizeof(*cap->data));
		cap->len = realloc(cap->len, (cap->nb + 1) * sizeof(*cap->len));
		if (cap->data == NULL || cap->len == NULL)
			abort();
		RT_CHECK(rec->caplen == rec->origlen, "%s #%u: truncated capture", path,
			cap->nb + 1);
		cap->data[cap->nb] = malloc(rec->caplen + 1);
		if (cap->data[cap->nb] == NULL)
			abort();
		memcpy(cap->data[cap->nb], rec->data, rec->caplen);
		cap->len[cap->nb++] = rec->caplen;
	}
	roce_pcap_close(&pc);
	free(rec);
	cap->ref = calloc(cap->nb + 1, sizeof(*cap->ref));
	return ret == 0 ? 0 : -1;
}

static void
unload(struct capture *cap)
{
	uint32_t i;

	for (i = 0; i < cap->nb; i++)
		free(cap->data[i]);
	free(cap->data);
	free(cap->len);
	free(cap->ref);
	free(cap->path);
}

/* Classify @n packets with one implementation into @out; poisoned first, so that a meta
 * left unwritten shows.
 */
static void
classify(roce_classify_fn fn, struct rte_mbuf **m, uint16_t n, struct roce_pkt_meta *out)
{
	struct roce_wire_stats stats = { 0 };
	uint16_t i, roce = 0, ret;

	for (i = 0; i < n; i++)
		memset(roce_pkt_meta(m[i]), 0xA5, sizeof(struct roce_pkt_meta));
	ret = fn(m, n, 0, &stats);
	RT_CHECK(ret == stats.type[ROCE_PKT_ROCE], "returned %u, counted %" PRIu64 " ROCE", ret,
		stats.type[ROCE_PKT_ROCE]);
	for (i = 0; i < n; i++) {
		out[i] = *roce_pkt_meta(m[i]);
		roce += out[i].type == ROCE_PKT_ROCE;
	}
	RT_CHECK(stats.type[ROCE_PKT_ROCE] == roce, "ROCE counter %" PRIu64 " != %u",
		stats.type[ROCE_PKT_ROCE], roce);
	nb_classified += n;
}

/* The reference: scalar, one segment; every UDP/4791 frame must be valid RoCE. */
static void
check_reference(struct capture *cap)
{
	uint32_t i;

	for (i = 0; i < cap->nb; i++) {
		struct rte_mbuf *m = chain(pool_whole, cap->data[i], cap->len[i], cap->len[i], 0);

		RT_CHECK(m != NULL, "%s #%u: no mbuf", cap->path, i + 1);
		if (m == NULL)
			continue;
		classify(impls[ROCE_CLASSIFY_SCALAR], &m, 1, &cap->ref[i]);
		if (is_udp4791(cap->data[i], cap->len[i]))
			RT_CHECK(cap->ref[i].type == ROCE_PKT_ROCE, "%s #%u: UDP/4791 frame "
				"is %s %s", cap->path, i + 1, roce_pkt_type_name(cap->ref[i].type),
				roce_drop_reason_name(cap->ref[i].reason));
		rte_pktmbuf_free(m);
	}
}

/* What a layout must give: the reference, or HDR_SPLIT when the headers do not fit. */
static void
check_expected(const struct capture *cap, uint32_t i, const struct layout *l,
		uint32_t first, const struct roce_pkt_meta *got)
{
	const struct roce_pkt_meta *ref = &cap->ref[i];

	if (ref->type != ROCE_PKT_ROCE)
		return;
	if (first >= ref->payload_off)
		RT_CHECK(memcmp(got, ref, sizeof(*ref)) == 0, "%s #%u, %s: metadata differs from "
			"one segment (type %s reason %s)", cap->path, i + 1, l->name,
			roce_pkt_type_name(got->type), roce_drop_reason_name(got->reason));
	else
		RT_CHECK(got->type == ROCE_PKT_DROP && got->reason == ROCE_DROP_HDR_SPLIT,
			"%s #%u, %s: headers end at %u beyond the first segment (%u): got %s %s",
			cap->path, i + 1, l->name, ref->payload_off, first,
			roce_pkt_type_name(got->type), roce_drop_reason_name(got->reason));
}

/* ICRC of a chain: computed over the segments equals the stored one. */
static void
check_chain_icrc(const struct capture *cap, uint32_t i, const struct layout *l,
		uint32_t first, const struct rte_mbuf *m)
{
	const struct roce_pkt_meta *ref = &cap->ref[i];
	uint32_t icrc_off;

	if (ref->type != ROCE_PKT_ROCE || first < ref->payload_off)
		return;
	icrc_off = ref->l4_off + rd16(cap->data[i] + ref->l4_off + 4) - ROCE_ICRC_LEN;
	RT_CHECK(roce_icrc_compute(m, ref->l3_off, ref->flags & ROCE_PKT_F_IPV6, icrc_off) ==
		roce_icrc_read(m, icrc_off), "%s #%u, %s: ICRC over segments", cap->path, i + 1,
		l->name);
	nb_icrc++;
}

/* One burst, one layout: every implementation agrees with scalar and with the expectation. */
static void
check_burst_layout(const struct capture *cap, uint32_t base, uint16_t n, const struct layout *l)
{
	struct roce_pkt_meta scalar[BURST], got[BURST];
	struct rte_mbuf *m[BURST];
	uint32_t first[BURST];
	uint16_t i;
	int k;

	for (i = 0; i < n; i++) {
		uint32_t p = base + i;

		first[i] = layout_first(l, &cap->ref[p], cap->len[p]);
		m[i] = chain(layout_pool(first[i], l->seg), cap->data[p], cap->len[p], first[i],
			l->seg);
		RT_CHECK(m[i] != NULL, "%s #%u, %s: no mbufs", cap->path, p + 1, l->name);
		if (m[i] == NULL) {
			rte_pktmbuf_free_bulk(m, i);
			return;
		}
	}
	classify(impls[ROCE_CLASSIFY_SCALAR], m, n, scalar);
	for (i = 0; i < n; i++) {
		check_expected(cap, base + i, l, first[i], &scalar[i]);
		check_chain_icrc(cap, base + i, l, first[i], m[i]);
	}
	for (k = ROCE_CLASSIFY_SCALAR + 1; k < ROCE_CLASSIFY_IMPL_NUM; k++) {
		if (impls[k] == NULL)
			continue;
		classify(impls[k], m, n, got);
		for (i = 0; i < n; i++)
			RT_CHECK(memcmp(&got[i], &scalar[i], sizeof(got[i])) == 0, "%s #%u, %s: %s "
				"metadata differs from scalar", cap->path, base + i + 1, l->name,
				roce_classify_impl_name(k));
	}
	rte_pktmbuf_free_bulk(m, n);
}

static void
check_layouts(const struct capture *cap)
{
	uint32_t base;
	unsigned int l;

	for (base = 0; base < cap->nb; base += BURST)
		for (l = 0; l < RTE_DIM(layouts); l++)
			check_burst_layout(cap, base, RTE_MIN(BURST, cap->nb - base), &layouts[l]);
}

/* Flipped header bits: the classifier must not accept the packet, unless the bit is variant
 * and nothing else guards it (IPv4's variant fields are under the header checksum).
 */
static void
check_flip_verdict(const struct capture *cap, uint32_t i, struct rte_mbuf *m, uint32_t rel,
		int masked)
{
	const struct roce_pkt_meta *ref = &cap->ref[i];
	int ipv6 = ref->flags & ROCE_PKT_F_IPV6;
	struct roce_pkt_meta meta;

	classify(impls[ROCE_CLASSIFY_SCALAR], &m, 1, &meta);
	if (!masked)
		RT_CHECK(meta.type != ROCE_PKT_ROCE, "%s #%u: flipped bit in byte %u of the IP "
			"header onwards, still ROCE", cap->path, i + 1, rel);
	else if (!ipv6 && rel < IP4_HLEN)
		RT_CHECK(meta.type == ROCE_PKT_DROP && meta.reason == ROCE_DROP_IP4_CSUM,
			"%s #%u: flipped IPv4 variant byte %u: %s %s", cap->path, i + 1, rel,
			roce_pkt_type_name(meta.type), roce_drop_reason_name(meta.reason));
	else
		RT_CHECK(meta.type == ROCE_PKT_ROCE, "%s #%u: flipped variant byte %u: %s %s",
			cap->path, i + 1, rel, roce_pkt_type_name(meta.type),
			roce_drop_reason_name(meta.reason));
}

/* Every bit from the IP header to the end of the ICRC, one at a time. */
static void
check_flips(const struct capture *cap, uint32_t i, struct rte_mbuf *m, uint32_t icrc_off)
{
	const struct roce_pkt_meta *ref = &cap->ref[i];
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	int ipv6 = ref->flags & ROCE_PKT_F_IPV6;
	uint32_t bit, end = (icrc_off + ROCE_ICRC_LEN) * 8;

	for (bit = ref->l3_off * 8; bit < end; bit += FLIP_STRIDE) {
		uint32_t byte = bit / 8, rel = byte - ref->l3_off;
		uint8_t b = (uint8_t)(1u << (bit % 8));
		int masked = (variant_mask(rel, ipv6) & b) != 0;
		int same;

		p[byte] ^= b;
		same = roce_icrc_compute(m, ref->l3_off, ipv6, icrc_off) ==
			roce_icrc_read(m, icrc_off);
		if (byte < ref->payload_off)
			check_flip_verdict(cap, i, m, rel, masked);
		p[byte] ^= b;
		RT_CHECK(same == masked, "%s #%u: bit %u of byte %u from the IP header: ICRC %s",
			cap->path, i + 1, bit % 8, rel, masked ? "changed by a variant bit" :
			"blind to the flip");
		nb_flips += !masked;
		nb_masked_flips += masked;
	}
}

static void
check_icrc(const struct capture *cap)
{
	uint32_t i;

	for (i = 0; i < cap->nb; i++) {
		const struct roce_pkt_meta *ref = &cap->ref[i];
		const uint8_t *d = cap->data[i];
		struct rte_mbuf *m;
		uint32_t icrc_off, stored;
		int ipv6 = ref->flags & ROCE_PKT_F_IPV6;

		if (ref->type != ROCE_PKT_ROCE)
			continue;
		icrc_off = ref->l4_off + rd16(d + ref->l4_off + 4) - ROCE_ICRC_LEN;
		RT_CHECK(icrc_off == ref->payload_off + ref->payload_len +
			roce_bth_pad((const struct roce_bth *)(d + ref->l4_off + UDP_HLEN)),
			"%s #%u: payload_off + payload_len + pad is not the ICRC", cap->path,
			i + 1);
		m = chain(pool_whole, d, cap->len[i], cap->len[i], 0);
		RT_CHECK(m != NULL, "%s #%u: no mbuf", cap->path, i + 1);
		if (m == NULL)
			continue;
		stored = roce_icrc_read(m, icrc_off);
		RT_CHECK(roce_icrc_compute(m, ref->l3_off, ipv6, icrc_off) == stored,
			"%s #%u: roce_icrc_compute", cap->path, i + 1);
		RT_CHECK(roce_icrc_compute_buf(d + ref->l3_off, icrc_off - ref->l3_off, ipv6) ==
			stored, "%s #%u: roce_icrc_compute_buf", cap->path, i + 1);
		RT_CHECK(ref_icrc(d, ref->l3_off, ipv6, icrc_off) == stored,
			"%s #%u: the stored ICRC is not the spec's CRC-32", cap->path, i + 1);
		nb_icrc += 3;
		check_flips(cap, i, m, icrc_off);
		rte_pktmbuf_free(m);
	}
}

static void
check_file(const char *path)
{
	struct capture cap;

	RT_CHECK(load(&cap, path) == 0, "%s: cannot read", path);
	nb_pkts += cap.nb;
	check_reference(&cap);
	check_layouts(&cap);
	check_icrc(&cap);
	unload(&cap);
}

static unsigned int
check_all(void)
{
	static const char *const patterns[] = { "*.pcap", "errors/*.pcap",
		"perftest-oob/*.roce.pcap" };
	char pat[4096];
	unsigned int p, nb_files = 0;
	size_t i;

	for (p = 0; p < RTE_DIM(patterns); p++) {
		glob_t g;

		snprintf(pat, sizeof(pat), "%s/%s", rt_captures_dir(), patterns[p]);
		if (glob(pat, 0, NULL, &g) != 0)
			continue;
		for (i = 0; i < g.gl_pathc; i++)
			check_file(g.gl_pathv[i]);
		nb_files += g.gl_pathc;
		globfree(&g);
	}
	return nb_files;
}

int
main(int argc, char **argv)
{
	struct timespec t0, t1;
	unsigned int nb_files;
	int k;

	(void)argc;
	if (access(rt_captures_dir(), R_OK | X_OK) != 0) {
		printf("no captures at %s: skipped\n", rt_captures_dir());
		return RT_SKIP;
	}
	rt_eal_init(argv[0]);
	/* DPDK caps SIMD at 256 bits by default; test AVX-512 too where the CPU has it. */
	rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	for (k = ROCE_CLASSIFY_SCALAR; k < ROCE_CLASSIFY_IMPL_NUM; k++) {
		impls[k] = roce_classify_get(k);
		printf("classifier %-7s %s\n", roce_classify_impl_name(k),
			impls[k] != NULL ? "tested" : "not available: skipped");
	}
	pool_whole = rt_pool(4 * BURST, 10240);
	pool_mid = rt_pool(8192, 1024);
	pool_small = rt_pool(65536, 128);
	if (FLIP_STRIDE != 1)
		printf("AddressSanitizer build: flipping every %dth bit only\n", FLIP_STRIDE);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	nb_files = check_all();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	RT_CHECK(nb_files > 0, "no capture found in %s", rt_captures_dir());
	printf("%u files, %" PRIu64 " packets, %zu layouts: %" PRIu64 " classifications, %"
		PRIu64 " ICRC checks, %" PRIu64 " bit flips caught, %" PRIu64 " variant bit "
		"flips ignored, %.1f s\n", nb_files, nb_pkts, RTE_DIM(layouts), nb_classified,
		nb_icrc, nb_flips, nb_masked_flips,
		(double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return rt_report("test_capture_icrc");
}
