/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include <rte_cpuflags.h>
#include <rte_debug.h>
#include <rte_errno.h>
#include <rte_vect.h>

#include "wire_private.h"

RTE_LOG_REGISTER(roce_wire_logtype, roce.wire, INFO);

int roce_pkt_meta_offset = -1;

int
roce_pkt_meta_register(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "roce_pkt_meta",
		.size = sizeof(struct roce_pkt_meta),
		.align = __alignof__(struct roce_pkt_meta),
	};
	int off;

	if (roce_pkt_meta_offset >= 0)
		return 0;
	off = rte_mbuf_dynfield_register(&desc);
	if (off < 0)
		return -rte_errno;
	roce_pkt_meta_offset = off;
	return 0;
}

/* Prefetch this many packets ahead of the one being classified. */
#define PREFETCH_AHEAD 4

/* ~25 ns/packet for a 1 KiB WRITE, nearly all of it ICRC (bench/wire). */
uint16_t
roce_classify_burst_scalar(struct rte_mbuf **pkts, uint16_t nb_pkts, unsigned int flags,
		struct roce_wire_stats *stats)
{
	uint16_t i, nb_roce = 0;

	for (i = 0; i < RTE_MIN(nb_pkts, PREFETCH_AHEAD); i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (i = 0; i < nb_pkts; i++) {
		struct roce_pkt_meta *meta = roce_pkt_meta(pkts[i]);

		if (i + PREFETCH_AHEAD < nb_pkts)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + PREFETCH_AHEAD], void *));
		nb_roce += classify_one(pkts[i], flags, meta) == ROCE_PKT_ROCE;
		classify_count(stats, meta);
	}
	return nb_roce;
}

int
roce_classify_icrc_pending(struct rte_mbuf *m, struct roce_wire_stats *stats)
{
	struct roce_pkt_meta *meta = roce_pkt_meta(m);
	const uint8_t *udp = rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->l4_off);

	/* The classifier checked the UDP length against the frame and the headers' room. */
	meta->flags &= ~ROCE_PKT_F_ICRC_PENDING;
	if (unlikely(!classify_icrc_ok(m, meta, meta->l4_off + rd16(udp + 4)))) {
		/* What the classifier leaves of an ICRC drop: the L3 fields, no BTH fields. */
		struct roce_pkt_meta drop = {
			.l3_off = meta->l3_off,
			.l4_off = meta->l4_off,
			.tos = meta->tos,
			.flags = meta->flags & (ROCE_PKT_F_IPV6 | ROCE_PKT_F_VLAN),
		};

		*meta = drop;
		classify_drop(meta, ROCE_DROP_ICRC);
		classify_count(stats, meta);
		return 0;
	}
	classify_count(stats, meta);
	return 1;
}

static const char *const impl_names[ROCE_CLASSIFY_IMPL_NUM] = {
	[ROCE_CLASSIFY_AUTO] = "auto",
	[ROCE_CLASSIFY_SCALAR] = "scalar",
	[ROCE_CLASSIFY_AVX2] = "avx2",
	[ROCE_CLASSIFY_AVX512] = "avx512",
};

static roce_classify_fn classify_selected;

static int
impl_usable(enum roce_classify_impl impl)
{
	uint16_t simd = rte_vect_get_max_simd_bitwidth();

	switch (impl) {
	case ROCE_CLASSIFY_SCALAR:
		return 1;
	case ROCE_CLASSIFY_AVX2:
		return simd >= RTE_VECT_SIMD_256 && rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) > 0;
	case ROCE_CLASSIFY_AVX512:
		return simd >= RTE_VECT_SIMD_512 &&
			rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512F) > 0 &&
			rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512BW) > 0;
	default:
		return 0;
	}
}

static roce_classify_fn
impl_fn(enum roce_classify_impl impl)
{
	switch (impl) {
	case ROCE_CLASSIFY_SCALAR:
		return roce_classify_burst_scalar;
	case ROCE_CLASSIFY_AVX2:
		return roce_classify_burst_avx2;
	case ROCE_CLASSIFY_AVX512:
		return roce_classify_burst_avx512;
	default:
		return NULL;
	}
}

/* The widest implementation this CPU and the EAL's SIMD limit allow. */
static enum roce_classify_impl
impl_best(void)
{
	if (impl_usable(ROCE_CLASSIFY_AVX512))
		return ROCE_CLASSIFY_AVX512;
	if (impl_usable(ROCE_CLASSIFY_AVX2))
		return ROCE_CLASSIFY_AVX2;
	return ROCE_CLASSIFY_SCALAR;
}

roce_classify_fn
roce_classify_get(enum roce_classify_impl impl)
{
	if (impl == ROCE_CLASSIFY_AUTO)
		impl = impl_best();
	if (impl <= ROCE_CLASSIFY_AUTO || impl >= ROCE_CLASSIFY_IMPL_NUM || !impl_usable(impl))
		return NULL;
	return impl_fn(impl);
}

int
roce_classify_select(enum roce_classify_impl impl)
{
	roce_classify_fn fn = roce_classify_get(impl);

	if (fn == NULL)
		return -ENOTSUP;
	classify_selected = fn;
	ROCE_LOG(DEBUG, "classifier: %s\n", roce_classify_impl_name(impl));
	return 0;
}

uint16_t
roce_classify_burst(struct rte_mbuf **pkts, uint16_t nb_pkts, unsigned int flags,
		struct roce_wire_stats *stats)
{
	/* First call: pick the implementation; the dynfield must exist before anything runs. */
	if (unlikely(classify_selected == NULL)) {
		if (roce_pkt_meta_register() != 0)
			rte_panic("cannot register the packet metadata dynfield\n");
		classify_selected = roce_classify_get(ROCE_CLASSIFY_AUTO);
	}
	return classify_selected(pkts, nb_pkts, flags, stats);
}

const char *
roce_classify_impl_name(enum roce_classify_impl impl)
{
	if (impl == ROCE_CLASSIFY_AUTO)
		impl = impl_best();
	return impl < ROCE_CLASSIFY_IMPL_NUM ? impl_names[impl] : "unknown";
}

/* Drop reasons, ROCE_DROP_NONE first: the counter family leaves it out. */
static const struct roce_counter_desc drop_desc[ROCE_DROP_NUM] = {
	[ROCE_DROP_NONE] = { "NONE", "not dropped" },
	ROCE_DROP_REASONS(ROCE_COUNTER_DESC)
};

const struct roce_counter_family roce_wire_drop_counter_family = {
	.name = "wire drops",
	.about = "per worker (struct roce_wire_stats::drop): frames the classifier rejected, "
		"by reason",
	.desc = &drop_desc[1],
	.nb = ROCE_DROP_NUM - 1,
};

const char *
roce_drop_reason_name(enum roce_drop_reason reason)
{
	return (unsigned int)reason < ROCE_DROP_NUM ? drop_desc[reason].name : "UNKNOWN";
}

const char *
roce_drop_reason_desc(enum roce_drop_reason reason)
{
	return (unsigned int)reason < ROCE_DROP_NUM ? drop_desc[reason].description :
		"unknown reason";
}

static const struct roce_counter_desc type_desc[ROCE_PKT_TYPE_NUM] = {
	[ROCE_PKT_DROP] = { "DROP", "frames rejected as malformed (by reason: DROP_*)" },
	[ROCE_PKT_ROCE] = { "ROCE", "valid RoCEv2 packets, ICRC checked" },
	[ROCE_PKT_ARP] = { "ARP", "ARP frames" },
	[ROCE_PKT_ICMP] = { "ICMP", "ICMP over IPv4" },
	[ROCE_PKT_ICMP6] = { "ICMP6", "ICMPv6, neighbour discovery included" },
	[ROCE_PKT_UDP] = { "UDP", "UDP to a port other than 4791" },
	[ROCE_PKT_OTHER] = { "OTHER", "any other well-formed frame" },
};

const struct roce_counter_family roce_wire_type_counter_family = {
	.name = "wire types",
	.about = "per worker (struct roce_wire_stats::type): frames the classifier saw, by "
		"packet type",
	.desc = type_desc,
	.nb = ROCE_PKT_TYPE_NUM,
};

const char *
roce_pkt_type_name(enum roce_pkt_type type)
{
	return (unsigned int)type < ROCE_PKT_TYPE_NUM ? type_desc[type].name : "UNKNOWN";
}
