/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_CLASSIFY_VEC_H
#define ROCE_CLASSIFY_VEC_H

/*
 * Common skeleton of the vector classifiers. Each ISA file defines VEC_MATCH4(pkts, i), which
 * returns a 4-bit mask of the packets pkts[i..i+3] whose first 64 bytes match the common
 * RoCEv2 template (untagged IPv4, IHL 5, no fragment, UDP, dport 4791, BTH TVer 0), then
 * includes this file to get classify_vec_burst().
 *
 * A matching packet finishes here: the IP checksum and length checks and the shared BTH stage.
 * Every check is one the scalar path makes in the same order, and a packet that fails one is
 * classified again from scratch by classify_one(), so both paths agree on every input.
 */

#include "wire_private.h"

#define TMPL_L4 (ETH_HLEN + IP4_HLEN)

/* Finish a template-matching packet, or return ROCE_PKT_TYPE_NUM to fall back. */
static inline enum roce_pkt_type
vec_finish(const struct rte_mbuf *m, unsigned int flags, struct roce_pkt_meta *meta)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t tot = rd16(p + ETH_HLEN + 2);
	uint32_t udp_len = rd16(p + TMPL_L4 + 4);

	if (tot < IP4_HLEN || ETH_HLEN + tot > m->pkt_len ||
			!ip4_cksum_ok(p + ETH_HLEN, IP4_HLEN) ||
			tot < IP4_HLEN + UDP_HLEN || udp_len != tot - IP4_HLEN)
		return ROCE_PKT_TYPE_NUM;
	memset(meta, 0, sizeof(*meta));
	meta->l3_off = ETH_HLEN;
	meta->l4_off = TMPL_L4;
	meta->tos = p[ETH_HLEN + 1];
	return classify_bth(m, p, udp_len, flags, meta);
}

static inline void
vec_one(struct rte_mbuf *m, int match, unsigned int flags, struct roce_wire_stats *stats,
		uint16_t *nb_roce)
{
	struct roce_pkt_meta *meta = roce_pkt_meta(m);
	enum roce_pkt_type t = ROCE_PKT_TYPE_NUM;

	if (match)
		t = vec_finish(m, flags, meta);
	if (t == ROCE_PKT_TYPE_NUM)
		t = classify_one(m, flags, meta);
	*nb_roce += t == ROCE_PKT_ROCE;
	classify_count(stats, meta);
}

static inline uint16_t
classify_vec_burst(struct rte_mbuf **pkts, uint16_t nb_pkts, unsigned int flags,
		struct roce_wire_stats *stats)
{
	uint16_t i = 0, nb_roce = 0;
	unsigned int k;

	for (k = 0; k < RTE_MIN(nb_pkts, 8u); k++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[k], void *));
	for (; i + 4 <= nb_pkts; i += 4) {
		unsigned int match;

		for (k = i + 8; k < RTE_MIN(i + 12u, nb_pkts); k++)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[k], void *));
		match = VEC_MATCH4(pkts, i);
		for (k = 0; k < 4; k++)
			vec_one(pkts[i + k], match >> k & 1, flags, stats, &nb_roce);
	}
	for (; i < nb_pkts; i++)
		vec_one(pkts[i], 0, flags, stats, &nb_roce);
	return nb_roce;
}

#endif /* ROCE_CLASSIFY_VEC_H */
