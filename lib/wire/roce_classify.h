/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_CLASSIFY_H
#define ROCE_CLASSIFY_H

/**
 * @file
 * Receive classifier: validates Ethernet/VLAN/IPv4/IPv6/UDP/BTH and the ICRC of a burst,
 * fills each packet's roce_pkt_meta, and counts every rejection by reason.
 *
 * Scalar, AVX2 and AVX-512 versions give identical metadata and verdicts; the best one the
 * CPU and the EAL's max SIMD bitwidth allow is picked at the first call.
 */

#include <stdint.h>

#include <rte_mbuf.h>

#include "roce_counters.h"
#include "roce_pkt.h"

/** Every drop reason, with what it means. */
#define ROCE_DROP_REASONS(X) \
	X(L2_SHORT, "frame shorter than its Ethernet/VLAN header") \
	X(VLAN_DEPTH, "more than one VLAN tag") \
	X(HDR_SPLIT, "headers not contiguous in the first segment") \
	X(IP4_SHORT, "shorter than an IPv4 header") \
	X(IP4_VERSION, "IPv4 ethertype but version is not 4") \
	X(IP4_IHL, "IPv4 header length below 20 bytes") \
	X(IP4_LEN, "IPv4 total length inconsistent with the frame") \
	X(IP4_CSUM, "IPv4 header checksum wrong") \
	X(IP4_FRAG, "IPv4 fragment") \
	X(IP4_OPTIONS, "IPv4 options on RoCEv2 (IHL must be 5)") \
	X(IP6_SHORT, "shorter than an IPv6 header") \
	X(IP6_VERSION, "IPv6 ethertype but version is not 6") \
	X(IP6_LEN, "IPv6 payload length inconsistent with the frame") \
	X(UDP_SHORT, "shorter than a UDP header") \
	X(UDP_LEN, "UDP length inconsistent with the IP length") \
	X(BTH_SHORT, "UDP payload shorter than BTH and ICRC") \
	X(BTH_TVER, "BTH transport header version not 0") \
	X(OPCODE, "opcode unknown or unsupported") \
	X(HDR_SHORT, "shorter than the opcode's extension headers") \
	X(PAYLOAD, "payload on an opcode that carries none") \
	X(PAD, "pad count wrong for the opcode or the length") \
	X(ICRC, "invariant CRC mismatch")

/** Drop reasons, as enum ROCE_DROP_<name>. */
enum roce_drop_reason {
	ROCE_DROP_NONE = 0,
#define ROCE_DROP_ENUM(n, d) ROCE_DROP_##n,
	ROCE_DROP_REASONS(ROCE_DROP_ENUM)
#undef ROCE_DROP_ENUM
	ROCE_DROP_NUM
};

/** Classifier counters, owned by one lcore; sum them on read. */
struct roce_wire_stats {
	uint64_t type[ROCE_PKT_TYPE_NUM];  /**< packets by enum roce_pkt_type */
	uint64_t drop[ROCE_DROP_NUM];      /**< drops by reason; [ROCE_DROP_NONE]: not dropped */
};

/** The counters of roce_wire_stats::type, by enum roce_pkt_type. */
extern const struct roce_counter_family roce_wire_type_counter_family;

/** The counters of roce_wire_stats::drop from drop[1]: ROCE_DROP_NONE is no counter. */
extern const struct roce_counter_family roce_wire_drop_counter_family;

/** roce_classify_burst() flags. */
#define ROCE_CLASSIFY_NO_ICRC 0x1 /**< the NIC checked the ICRC: skip it */
/**
 * Leave the ICRC of packets carrying at least ROCE_CLASSIFY_DEFER_MIN payload bytes to
 * roce_classify_icrc(), to be called on each right before its payload is used (copied into
 * an MR), so that one read of the payload from far caches serves both. Such a packet comes out
 * as ROCE_PKT_ROCE with ROCE_PKT_F_ICRC_PENDING and is not counted yet; every one of them must
 * go through roce_classify_icrc() before anything acts on it, dropped or not.
 */
#define ROCE_CLASSIFY_DEFER_ICRC 0x2

/** Shortest payload whose ICRC ROCE_CLASSIFY_DEFER_ICRC defers: shorter packets are hot. */
#define ROCE_CLASSIFY_DEFER_MIN 256u

/** Classifier implementations. */
enum roce_classify_impl {
	ROCE_CLASSIFY_AUTO = 0,
	ROCE_CLASSIFY_SCALAR,
	ROCE_CLASSIFY_AVX2,
	ROCE_CLASSIFY_AVX512,
	ROCE_CLASSIFY_IMPL_NUM
};

/** Signature of every classifier implementation. */
typedef uint16_t (*roce_classify_fn)(struct rte_mbuf **pkts, uint16_t nb_pkts,
		unsigned int flags, struct roce_wire_stats *stats);

/**
 * Classify a burst: fill roce_pkt_meta of every packet and count it.
 *
 * @param pkts
 *   Received frames; they are not modified.
 * @param nb_pkts
 *   Number of frames.
 * @param flags
 *   ROCE_CLASSIFY_* flags.
 * @param stats
 *   Counters of the calling lcore.
 * @return
 *   Number of packets classified as ROCE_PKT_ROCE.
 */
uint16_t roce_classify_burst(struct rte_mbuf **pkts, uint16_t nb_pkts, unsigned int flags,
		struct roce_wire_stats *stats);

/**
 * Get one implementation, for tests and benchmarks.
 *
 * @param impl
 *   Which one; ROCE_CLASSIFY_AUTO returns the one roce_classify_burst() uses.
 * @return
 *   The function, or NULL when this CPU or build cannot run it.
 */
roce_classify_fn roce_classify_get(enum roce_classify_impl impl);

/**
 * Choose the implementation roce_classify_burst() uses.
 *
 * @return
 *   0, or -ENOTSUP when this CPU or build cannot run it.
 */
int roce_classify_select(enum roce_classify_impl impl);

/**
 * Check the ICRC roce_classify_burst() left pending (ROCE_CLASSIFY_DEFER_ICRC) and count the
 * packet as roce_classify_burst() would have: ROCE_PKT_ROCE, or ROCE_PKT_DROP with reason
 * ROCE_DROP_ICRC. Use roce_classify_icrc() instead, which skips packets with nothing pending.
 *
 * @return
 *   1 when the ICRC is right (the flag is cleared), 0 when it is wrong: the caller drops the
 *   packet.
 */
int roce_classify_icrc_pending(struct rte_mbuf *m, struct roce_wire_stats *stats);

/**
 * Finish the classification of a packet roce_classify_burst() gave ROCE_CLASSIFY_DEFER_ICRC.
 *
 * @param m
 *   A classified packet; one with no ICRC check pending is left as it is.
 * @param stats
 *   Counters of the calling lcore (the same family roce_classify_burst() counts in).
 * @return
 *   1: the packet is what its metadata says (ICRC checked when it is RoCE); 0: its ICRC is
 *   wrong, it is now ROCE_PKT_DROP / ROCE_DROP_ICRC, counted: the caller drops it.
 */
static inline int
roce_classify_icrc(struct rte_mbuf *m, struct roce_wire_stats *stats)
{
	if (likely(!(roce_pkt_meta(m)->flags & ROCE_PKT_F_ICRC_PENDING)))
		return 1;
	return roce_classify_icrc_pending(m, stats);
}

/** @return the name of an implementation ("scalar", "avx2", "avx512"). */
const char *roce_classify_impl_name(enum roce_classify_impl impl);

/** @return the short name of a drop reason, e.g. "IP4_CSUM", or "UNKNOWN". */
const char *roce_drop_reason_name(enum roce_drop_reason reason);

/** @return a one-line description of a drop reason. */
const char *roce_drop_reason_desc(enum roce_drop_reason reason);

/** @return the name of a packet type, e.g. "ROCE", or "UNKNOWN". */
const char *roce_pkt_type_name(enum roce_pkt_type type);

#endif /* ROCE_CLASSIFY_H */
