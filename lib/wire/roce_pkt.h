/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_PKT_H
#define ROCE_PKT_H

/**
 * @file
 * Per-packet metadata filled by the classifier, kept in an mbuf dynamic field.
 */

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "roce_hdr.h"
#include "roce_opcode.h"

/** What a received frame is, for the dataplane's dispatch. */
enum roce_pkt_type {
	ROCE_PKT_DROP = 0,  /**< malformed: see roce_pkt_meta::reason */
	ROCE_PKT_ROCE,      /**< valid RoCEv2 packet, ICRC checked (unless ROCE_PKT_F_ICRC_PENDING) */
	ROCE_PKT_ARP,
	ROCE_PKT_ICMP,      /**< ICMP over IPv4 */
	ROCE_PKT_ICMP6,     /**< ICMPv6, including neighbour discovery */
	ROCE_PKT_UDP,       /**< UDP to a port other than 4791 */
	ROCE_PKT_OTHER,     /**< any other well-formed frame */
	ROCE_PKT_TYPE_NUM
};

/** roce_pkt_meta::flags */
#define ROCE_PKT_F_IPV6   0x01
#define ROCE_PKT_F_VLAN   0x02
#define ROCE_PKT_F_ACKREQ 0x04
#define ROCE_PKT_F_SE     0x08
#define ROCE_PKT_F_MIGREQ 0x10
#define ROCE_PKT_F_FECN   0x20
#define ROCE_PKT_F_BECN   0x40
/** ROCE_PKT_ROCE whose ICRC is still to be checked (ROCE_CLASSIFY_DEFER_ICRC): nothing may act
 *  on it before roce_classify_icrc(). */
#define ROCE_PKT_F_ICRC_PENDING 0x80

/** ECN codepoints in roce_pkt_meta::tos. */
#define ROCE_ECN_MASK   0x03
#define ROCE_ECN_NOT_ECT 0x00
#define ROCE_ECN_ECT1   0x01
#define ROCE_ECN_ECT0   0x02
#define ROCE_ECN_CE     0x03

/**
 * Classifier output. BTH fields are valid only for ROCE_PKT_ROCE; the L3 fields for every
 * IP packet. Offsets count from the start of the frame; all headers up to payload_off lie in
 * the first segment.
 */
struct roce_pkt_meta {
	uint32_t mask;        /**< roce_opcode_info[opcode].mask */
	uint32_t qpn;         /**< BTH destination QP */
	uint32_t psn;         /**< BTH PSN */
	uint16_t payload_off; /**< first payload byte (after the extension headers) */
	uint16_t payload_len; /**< payload bytes, pad and ICRC excluded */
	uint8_t l3_off;       /**< IPv4/IPv6 header */
	uint8_t l4_off;       /**< UDP header; the BTH follows 8 bytes later */
	uint8_t opcode;       /**< BTH opcode */
	uint8_t type;         /**< enum roce_pkt_type */
	uint8_t flags;        /**< ROCE_PKT_F_* */
	uint8_t tos;          /**< IPv4 TOS or IPv6 traffic class: DSCP(7:2), ECN(1:0) */
	uint8_t reason;       /**< enum roce_drop_reason when type is ROCE_PKT_DROP */
	uint8_t rsvd;
};

_Static_assert(sizeof(struct roce_pkt_meta) == 24, "metadata must stay within the dynfield budget");

/** Offset of the metadata dynfield, valid after roce_pkt_meta_register(). */
extern int roce_pkt_meta_offset;

/**
 * Register the metadata dynfield. Idempotent; call after rte_eal_init().
 *
 * @return
 *   0 on success, -errno from rte_mbuf_dynfield_register() on failure.
 */
int roce_pkt_meta_register(void);

/** @return the metadata of an mbuf. */
static inline struct roce_pkt_meta *
roce_pkt_meta(const struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, roce_pkt_meta_offset, struct roce_pkt_meta *);
}

/** @return the BTH of a classified RoCE packet. */
static inline struct roce_bth *
roce_pkt_bth(const struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	return rte_pktmbuf_mtod_offset(m, struct roce_bth *, meta->l4_off + 8);
}

/**
 * Extension header of a classified RoCE packet.
 *
 * @param m
 *   The packet.
 * @param meta
 *   Its metadata.
 * @param hdr
 *   Which header; the opcode must have it (test meta->mask first).
 * @return
 *   Pointer to the header in the first segment.
 */
static inline void *
roce_pkt_hdr(const struct rte_mbuf *m, const struct roce_pkt_meta *meta, enum roce_hdr hdr)
{
	return rte_pktmbuf_mtod_offset(m, uint8_t *,
			meta->l4_off + 8 + roce_opcode_info[meta->opcode].offset[hdr]);
}

#endif /* ROCE_PKT_H */
