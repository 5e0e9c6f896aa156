/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_BUILD_H
#define ROCE_BUILD_H

/**
 * @file
 * Packet builders: complete RoCEv2 frames for every opcode of the table, with IPv4 header
 * checksum, UDP length, pad and ICRC.
 *
 * A roce_path holds what is fixed for a QP (addresses, VLAN, DSCP/ECN, UDP source port) and
 * a prebuilt Ethernet/IP/UDP template; roce_pkt_desc holds the per-packet BTH and extension
 * header fields.
 */

#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "roce_hdr.h"

/** Longest Ethernet + VLAN + IPv6 + UDP prefix. */
#define ROCE_PATH_HDR_MAX (14 + 4 + 40 + 8)

/** Addressing of one direction of a QP. Fill the public fields, then roce_path_init(). */
struct roce_path {
	struct rte_ether_addr src_mac;
	struct rte_ether_addr dst_mac;
	uint8_t ipv6;          /**< 0: IPv4, 1: IPv6 */
	uint8_t vlan;          /**< 1: one 802.1Q tag with vlan_tci */
	uint16_t vlan_tci;     /**< PCP(15:13) DEI(12) VID(11:0) */
	uint8_t src_ip[16];    /**< IPv4 in the first 4 bytes, network order */
	uint8_t dst_ip[16];
	uint8_t dscp;          /**< 0-63 */
	uint8_t ecn;           /**< ROCE_ECN_*: ECT(0) for DCQCN */
	uint8_t ttl;           /**< IPv4 TTL / IPv6 hop limit; 0 means 64 */
	uint32_t flow_label;   /**< IPv6 only, 20 bits */
	uint16_t udp_sport;    /**< from roce_udp_sport() */
	/* Filled by roce_path_init(). */
	uint8_t hdr_len;       /**< Ethernet to UDP, inclusive */
	uint8_t l3_off;
	uint8_t tmpl[ROCE_PATH_HDR_MAX];
	uint16_t ip4_sum;      /**< IPv4: ones' complement sum of tmpl's header, length 0 */
};

/** Per-packet fields. Only the headers the opcode carries are read. */
struct roce_pkt_desc {
	uint8_t opcode;
	uint8_t se;            /**< solicited event */
	uint8_t ackreq;
	uint8_t migreq;
	uint8_t fecn;
	uint8_t becn;
	uint16_t pkey;         /**< 0 means ROCE_PKEY_DEFAULT */
	uint32_t dest_qpn;
	uint32_t psn;
	uint64_t va;           /**< RETH or AtomicETH virtual address */
	uint32_t rkey;         /**< RETH or AtomicETH rkey */
	uint32_t dma_len;      /**< RETH DMA length */
	uint64_t swap_add;     /**< AtomicETH swap or add value */
	uint64_t compare;      /**< AtomicETH compare value */
	uint8_t syndrome;      /**< AETH */
	uint32_t msn;          /**< AETH */
	uint64_t orig;         /**< AtomicAckETH original value */
	uint32_t imm;          /**< ImmDt, stored big-endian on the wire */
	uint32_t inv_rkey;     /**< IETH */
	uint32_t qkey;         /**< DETH */
	uint32_t src_qpn;      /**< DETH */
	uint32_t sr_rsn;       /**< SRETH receive WQE sequence number (24 bits) */
	uint32_t sr_off;       /**< SRETH byte offset in the message */
};

/**
 * UDP source port of a QP: stable for the QP pair, in 0xC000-0xFFFF, spread for ECMP/RSS.
 *
 * @param src_qpn
 *   Local QP number.
 * @param dst_qpn
 *   Remote QP number.
 * @return
 *   The port, host order.
 */
uint16_t roce_udp_sport(uint32_t src_qpn, uint32_t dst_qpn);

/**
 * UDP source port Linux rxe gives a QP of its own accord (a UD QP, or any QP whose address
 * has no flow label): 0xC000 plus the top 14 bits of the QPN times the 32-bit golden ratio
 * (the kernel's hash_32(qpn, 14)). A UD QP sends every datagram from it, whatever the
 * destination, so what we send matches rxe's packets byte for byte.
 *
 * @param qpn
 *   Local QP number.
 * @return
 *   The port, host order.
 */
uint16_t roce_udp_sport_qpn(uint32_t qpn);

/**
 * Check a path and prebuild its header template.
 *
 * @return
 *   0, or -EINVAL when a field is out of range.
 */
int roce_path_init(struct roce_path *path);

/**
 * Change the UDP source port of an initialised path (its field and its template), as
 * roce_path_init() would have built it with @p sport.
 */
void roce_path_set_udp_sport(struct roce_path *path, uint16_t sport);

/**
 * Frame length of a packet, from the first Ethernet byte to the ICRC, inclusive.
 *
 * @return
 *   The length, or 0 when the opcode is unknown.
 */
uint32_t roce_frame_len(const struct roce_path *path, uint8_t opcode, uint32_t payload_len);

/**
 * Write all headers of a packet into an empty mbuf and reserve its payload, pad and ICRC.
 * The caller copies the payload to the returned pointer, then calls roce_build_finish().
 *
 * @param m
 *   An mbuf with data_len 0 and room for roce_frame_len() bytes in one segment.
 * @param path
 *   Initialised path.
 * @param desc
 *   Packet fields.
 * @param payload_len
 *   Payload bytes; the pad is added.
 * @return
 *   The payload area, or NULL (rte_errno EINVAL: unknown opcode, payload on an opcode
 *   that carries none, a payload that is not a multiple of 4 on a FIRST or MIDDLE packet,
 *   or an IP packet over 65535 bytes; ENOSPC: no room).
 */
void *roce_build_hdrs(struct rte_mbuf *m, const struct roce_path *path,
		const struct roce_pkt_desc *desc, uint32_t payload_len);

/**
 * Write the headers of a packet whose payload the caller chains after them as segments of
 * their own (zero-copy transmit: payload attached from memory the packet does not own,
 * rte_pktmbuf_attach_extbuf()). @p m gets the headers only, with the IP and UDP lengths and
 * the BTH pad count of a packet carrying @p payload_len payload bytes; the caller chains
 * segments holding exactly those bytes after it, then calls roce_build_finish_tail().
 *
 * @param m
 *   An empty mbuf with room for the headers.
 * @return
 *   0, -EINVAL (as roce_build_hdrs()), or -ENOSPC (no room).
 */
int roce_build_hdrs_only(struct rte_mbuf *m, const struct roce_path *path,
		const struct roce_pkt_desc *desc, uint32_t payload_len);

/**
 * End a packet begun with roce_build_hdrs_only(): its pad and ICRC go into @p tail, chained
 * last, and the ICRC is computed over the whole chain (headers, payload segments, pad). The
 * frame is byte for byte the one roce_build_pkt() makes of the same payload.
 *
 * @param m
 *   The headers' mbuf with the payload segments chained after it.
 * @param tail
 *   An empty mbuf with room for 7 bytes (pad and ICRC); chained to @p m on success.
 * @param path
 *   The path @p m was built with.
 * @return
 *   0, -EINVAL (the chain does not hold the payload the headers announce, or @p tail is not
 *   empty), -ENOSPC (no room in @p tail, or too many segments).
 */
int roce_build_finish_tail(struct rte_mbuf *m, struct rte_mbuf *tail,
		const struct roce_path *path);

/**
 * Compute and store the ICRC of a packet made by roce_build_hdrs().
 *
 * @param m
 *   The packet, its payload written.
 * @param path
 *   The path it was built with.
 */
void roce_build_finish(struct rte_mbuf *m, const struct roce_path *path);

/**
 * Build a complete packet: headers, a copy of the payload, pad, ICRC.
 *
 * @return
 *   0, -EINVAL (as roce_build_hdrs()), -ENOSPC (no room).
 */
int roce_build_pkt(struct rte_mbuf *m, const struct roce_path *path,
		const struct roce_pkt_desc *desc, const void *payload, uint32_t payload_len);

#endif /* ROCE_BUILD_H */
