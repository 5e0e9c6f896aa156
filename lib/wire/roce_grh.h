/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_GRH_H
#define ROCE_GRH_H

/**
 * @file
 * The 40-byte GRH area at the start of every UD receive buffer. RoCEv2 has no GRH on the
 * wire; verbs still hand the receiver 40 bytes before the payload, and Linux fills them with
 * the packet's IP header (drivers/infiniband/sw/rxe/rxe_resp.c, union rdma_network_hdr):
 * for IPv4, 20 zero bytes then the 20-byte IPv4 header; for IPv6, the 40-byte IPv6 header.
 * rdma-core's ibv_init_ah_from_wc() reads the sender's address back from there.
 */

#include <stdint.h>

#include <rte_mbuf.h>

#include "roce_pkt.h"

/** Bytes of the GRH area. */
#define ROCE_GRH_LEN 40

/**
 * Fill the GRH area for a classified RoCE packet, as Linux does.
 *
 * @param grh
 *   ROCE_GRH_LEN bytes.
 * @param m
 *   The packet (its IP header lies in the first segment, as the classifier checked).
 * @param meta
 *   Its metadata.
 */
void roce_grh_fill(uint8_t *grh, const struct rte_mbuf *m, const struct roce_pkt_meta *meta);

/**
 * The sender's GID in a GRH area: its IPv6 source address, or its IPv4 source as an
 * IPv4-mapped address (::ffff:a.b.c.d), as RoCEv2 GIDs are.
 *
 * @param grh
 *   ROCE_GRH_LEN bytes.
 * @param sgid
 *   16 bytes, filled.
 * @return
 *   4 or 6 (the IP version found), or 0 when the area holds neither an IPv4 header after 20
 *   zero bytes nor an IPv6 header (@p sgid is then zeroed).
 */
int roce_grh_sgid(const uint8_t *grh, uint8_t *sgid);

#endif /* ROCE_GRH_H */
