/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_ICRC_H
#define ROCE_ICRC_H

/**
 * @file
 * RoCEv2 invariant CRC (IBA annex A17.3.3).
 *
 * CRC-32 (Ethernet polynomial, reflected, as zlib and ISA-L crc32_gzip_refl compute it) over
 * 8 bytes of 0xFF standing in for the LRH, the IP header with its variant fields set to ones
 * (IPv4: TOS, TTL, header checksum; IPv6: traffic class, flow label, hop limit), the UDP header
 * with its checksum set to ones, the BTH with its FECN/BECN/reserved byte set to ones, then the
 * rest of the packet up to the ICRC. The ICRC goes on the wire least significant byte first.
 */

#include <stdint.h>

#include <rte_mbuf.h>

/**
 * Compute the ICRC of a packet in an mbuf chain.
 *
 * @param m
 *   The packet. The IP, UDP and BTH headers must lie in the first segment; the rest may span
 *   segments.
 * @param l3_off
 *   Offset of the IP header; an IPv4 header must have IHL 5.
 * @param ipv6
 *   Non-zero for IPv6.
 * @param icrc_off
 *   Offset of the ICRC: the CRC covers [l3_off, icrc_off).
 * @return
 *   The ICRC in CPU order, as the wire's little-endian 4 bytes read.
 */
uint32_t roce_icrc_compute(const struct rte_mbuf *m, uint32_t l3_off, int ipv6,
		uint32_t icrc_off);

/**
 * Compute the ICRC of a contiguous packet.
 *
 * @param l3
 *   The IP header (IPv4 with IHL 5, or IPv6).
 * @param len
 *   Bytes from the IP header to the ICRC, exclusive.
 * @param ipv6
 *   Non-zero for IPv6.
 * @return
 *   The ICRC in CPU order.
 */
uint32_t roce_icrc_compute_buf(const void *l3, uint32_t len, int ipv6);

/** @return the ICRC stored at @p icrc_off (CPU order); the 4 bytes may span segments. */
uint32_t roce_icrc_read(const struct rte_mbuf *m, uint32_t icrc_off);

/** Store @p icrc at @p icrc_off, which may span segments. */
void roce_icrc_write(struct rte_mbuf *m, uint32_t icrc_off, uint32_t icrc);

#endif /* ROCE_ICRC_H */
