/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_WIRE_PRIVATE_H
#define ROCE_WIRE_PRIVATE_H

/*
 * Classifier stages shared by the scalar and vector versions. The vector versions check the
 * common case (untagged IPv4, IHL 5, UDP 4791) for several packets at once and then call the
 * same BTH stage, so both give identical results by construction; anything else goes through
 * classify_one().
 */

#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "roce_classify.h"
#include "roce_hdr.h"
#include "roce_icrc.h"
#include "roce_opcode.h"
#include "roce_pkt.h"

extern int roce_wire_logtype;
#define ROCE_LOG(level, ...) \
	rte_log(RTE_LOG_##level, roce_wire_logtype, "wire: " __VA_ARGS__)

#define ETH_HLEN 14
#define VLAN_HLEN 4
#define IP4_HLEN 20
#define IP6_HLEN 40
#define UDP_HLEN 8
#define BTH_LEN 12
#define ETHER_TYPE_IPV4 0x0800
#define ETHER_TYPE_IPV6 0x86DD
#define ETHER_TYPE_ARP 0x0806
#define ETHER_TYPE_VLAN 0x8100
#define ETHER_TYPE_QINQ 0x88A8
#define IP_PROTO_ICMP 1
#define IP_PROTO_UDP 17
#define IP_PROTO_ICMP6 58
#define IP4_FRAG_MASK 0x3FFF /* MF flag and fragment offset */

uint16_t roce_classify_burst_scalar(struct rte_mbuf **pkts, uint16_t nb_pkts,
		unsigned int flags, struct roce_wire_stats *stats);
uint16_t roce_classify_burst_avx2(struct rte_mbuf **pkts, uint16_t nb_pkts,
		unsigned int flags, struct roce_wire_stats *stats);
uint16_t roce_classify_burst_avx512(struct rte_mbuf **pkts, uint16_t nb_pkts,
		unsigned int flags, struct roce_wire_stats *stats);

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline enum roce_pkt_type
classify_drop(struct roce_pkt_meta *meta, enum roce_drop_reason reason)
{
	meta->type = ROCE_PKT_DROP;
	meta->reason = reason;
	return ROCE_PKT_DROP;
}

/*
 * Whether an IPv4 header's checksum is right. IHL 5 (every RoCEv2 packet) takes five 32-bit
 * adds instead of rte_raw_cksum()'s ten 16-bit steps; the ones' complement sum does not care
 * about byte order, and a correct header sums to 0xFFFF.
 */
static inline int
ip4_cksum_ok(const uint8_t *ip, uint32_t ihl)
{
	uint32_t w[5];
	uint64_t sum;

	if (ihl != IP4_HLEN)
		return rte_raw_cksum(ip, ihl) == 0xFFFF;
	memcpy(w, ip, sizeof(w));
	sum = (uint64_t)w[0] + w[1] + w[2] + w[3] + w[4];
	sum = (sum & 0xFFFFFFFF) + (sum >> 32);
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	return sum == 0xFFFF;
}

/* 0 when @len bytes are in the first segment; else why not (short packet or split headers). */
static inline enum roce_drop_reason
classify_need(const struct rte_mbuf *m, uint32_t len, enum roce_drop_reason short_reason)
{
	if (len > m->pkt_len)
		return short_reason;
	if (len > m->data_len)
		return ROCE_DROP_HDR_SPLIT;
	return ROCE_DROP_NONE;
}

/* Whether the ICRC of the RoCE packet whose UDP payload ends at @end is right. */
static inline int
classify_icrc_ok(const struct rte_mbuf *m, const struct roce_pkt_meta *meta, uint32_t end)
{
	uint32_t icrc_off = end - ROCE_ICRC_LEN;

	return roce_icrc_compute(m, meta->l3_off, meta->flags & ROCE_PKT_F_IPV6, icrc_off) ==
		roce_icrc_read(m, icrc_off);
}

/*
 * BTH stage: l3_off, l4_off, flags and tos of @meta are set; @udp_len is the checked UDP
 * length. Validates the BTH, the opcode's headers, pad and ICRC, and fills the BTH fields.
 */
static inline enum roce_pkt_type
classify_bth(const struct rte_mbuf *m, const uint8_t *p, uint32_t udp_len, unsigned int flags,
		struct roce_pkt_meta *meta)
{
	uint32_t bth_off = meta->l4_off + UDP_HLEN;
	uint32_t roce_len = udp_len - UDP_HLEN;
	const struct roce_opcode_info *info;
	const struct roce_bth *bth;
	enum roce_drop_reason why;
	uint32_t rem, pad, apsn, qpn;

	if (roce_len < BTH_LEN + ROCE_ICRC_LEN)
		return classify_drop(meta, ROCE_DROP_BTH_SHORT);
	why = classify_need(m, bth_off + BTH_LEN, ROCE_DROP_BTH_SHORT);
	if (why != ROCE_DROP_NONE)
		return classify_drop(meta, why);
	bth = (const struct roce_bth *)(p + bth_off);
	if ((bth->flags & ROCE_BTH_TVER_MASK) != 0)
		return classify_drop(meta, ROCE_DROP_BTH_TVER);
	info = &roce_opcode_info[bth->opcode];
	if (info->mask == 0)
		return classify_drop(meta, ROCE_DROP_OPCODE);
	if (roce_len < (uint32_t)info->length + ROCE_ICRC_LEN)
		return classify_drop(meta, ROCE_DROP_HDR_SHORT);
	why = classify_need(m, bth_off + info->length, ROCE_DROP_HDR_SHORT);
	if (why != ROCE_DROP_NONE)
		return classify_drop(meta, why);

	/* Payload plus pad: a multiple of 4, pad only on the last packet of a message. */
	rem = roce_len - info->length - ROCE_ICRC_LEN;
	pad = roce_bth_pad(bth);
	if (!(info->mask & ROCE_M_PAYLOAD)) {
		if (rem != 0)
			return classify_drop(meta, ROCE_DROP_PAYLOAD);
		if (pad != 0)
			return classify_drop(meta, ROCE_DROP_PAD);
	} else if ((rem & 3) != 0 || pad > rem ||
			(pad != 0 && !(info->mask & ROCE_M_LAST))) {
		return classify_drop(meta, ROCE_DROP_PAD);
	}

	if ((flags & ROCE_CLASSIFY_DEFER_ICRC) && rem - pad >= ROCE_CLASSIFY_DEFER_MIN &&
			!(flags & ROCE_CLASSIFY_NO_ICRC))
		meta->flags |= ROCE_PKT_F_ICRC_PENDING;
	else if (!(flags & ROCE_CLASSIFY_NO_ICRC) && !classify_icrc_ok(m, meta, bth_off + roce_len))
		return classify_drop(meta, ROCE_DROP_ICRC);

	qpn = rte_be_to_cpu_32(bth->qpn);
	apsn = rte_be_to_cpu_32(bth->apsn);
	meta->opcode = bth->opcode;
	meta->mask = info->mask;
	meta->qpn = qpn & ROCE_24BIT_MASK;
	meta->psn = apsn & ROCE_24BIT_MASK;
	meta->payload_off = bth_off + info->length;
	meta->payload_len = rem - pad;
	meta->flags |= (apsn & ROCE_BTH_ACKREQ ? ROCE_PKT_F_ACKREQ : 0) |
		(bth->flags & ROCE_BTH_SE ? ROCE_PKT_F_SE : 0) |
		(bth->flags & ROCE_BTH_MIGREQ ? ROCE_PKT_F_MIGREQ : 0) |
		(qpn & ROCE_BTH_FECN ? ROCE_PKT_F_FECN : 0) |
		(qpn & ROCE_BTH_BECN ? ROCE_PKT_F_BECN : 0);
	meta->type = ROCE_PKT_ROCE;
	return ROCE_PKT_ROCE;
}

/* UDP stage: @l4_end is where the IP packet ends. */
static inline enum roce_pkt_type
classify_udp(const struct rte_mbuf *m, const uint8_t *p, uint32_t l4_end, unsigned int flags,
		struct roce_pkt_meta *meta)
{
	uint32_t l4 = meta->l4_off;
	enum roce_drop_reason why;
	uint32_t udp_len;

	if (l4 + UDP_HLEN > l4_end)
		return classify_drop(meta, ROCE_DROP_UDP_SHORT);
	why = classify_need(m, l4 + UDP_HLEN, ROCE_DROP_UDP_SHORT);
	if (why != ROCE_DROP_NONE)
		return classify_drop(meta, why);
	udp_len = rd16(p + l4 + 4);
	if (udp_len != l4_end - l4)
		return classify_drop(meta, ROCE_DROP_UDP_LEN);
	if (rd16(p + l4 + 2) != ROCE_UDP_PORT) {
		meta->type = ROCE_PKT_UDP;
		return ROCE_PKT_UDP;
	}
	if (!(meta->flags & ROCE_PKT_F_IPV6) && l4 - meta->l3_off != IP4_HLEN)
		return classify_drop(meta, ROCE_DROP_IP4_OPTIONS);
	return classify_bth(m, p, udp_len, flags, meta);
}

static inline enum roce_pkt_type
classify_ip4(const struct rte_mbuf *m, const uint8_t *p, unsigned int flags,
		struct roce_pkt_meta *meta)
{
	uint32_t l3 = meta->l3_off, ihl, tot;
	enum roce_drop_reason why;

	why = classify_need(m, l3 + IP4_HLEN, ROCE_DROP_IP4_SHORT);
	if (why != ROCE_DROP_NONE)
		return classify_drop(meta, why);
	if (p[l3] >> 4 != 4)
		return classify_drop(meta, ROCE_DROP_IP4_VERSION);
	ihl = (p[l3] & 0x0F) * 4;
	if (ihl < IP4_HLEN)
		return classify_drop(meta, ROCE_DROP_IP4_IHL);
	why = classify_need(m, l3 + ihl, ROCE_DROP_IP4_SHORT);
	if (why != ROCE_DROP_NONE)
		return classify_drop(meta, why);
	tot = rd16(p + l3 + 2);
	if (tot < ihl || l3 + tot > m->pkt_len)
		return classify_drop(meta, ROCE_DROP_IP4_LEN);
	if (!ip4_cksum_ok(p + l3, ihl))
		return classify_drop(meta, ROCE_DROP_IP4_CSUM);
	if (rd16(p + l3 + 6) & IP4_FRAG_MASK)
		return classify_drop(meta, ROCE_DROP_IP4_FRAG);
	meta->tos = p[l3 + 1];
	meta->l4_off = l3 + ihl;
	switch (p[l3 + 9]) {
	case IP_PROTO_UDP:
		return classify_udp(m, p, l3 + tot, flags, meta);
	case IP_PROTO_ICMP:
		meta->type = ROCE_PKT_ICMP;
		return ROCE_PKT_ICMP;
	default:
		meta->type = ROCE_PKT_OTHER;
		return ROCE_PKT_OTHER;
	}
}

static inline enum roce_pkt_type
classify_ip6(const struct rte_mbuf *m, const uint8_t *p, unsigned int flags,
		struct roce_pkt_meta *meta)
{
	uint32_t l3 = meta->l3_off, end;
	enum roce_drop_reason why;

	why = classify_need(m, l3 + IP6_HLEN, ROCE_DROP_IP6_SHORT);
	if (why != ROCE_DROP_NONE)
		return classify_drop(meta, why);
	if (p[l3] >> 4 != 6)
		return classify_drop(meta, ROCE_DROP_IP6_VERSION);
	end = l3 + IP6_HLEN + rd16(p + l3 + 4);
	if (end > m->pkt_len)
		return classify_drop(meta, ROCE_DROP_IP6_LEN);
	meta->flags |= ROCE_PKT_F_IPV6;
	meta->tos = (uint8_t)(rd16(p + l3) >> 4);
	meta->l4_off = l3 + IP6_HLEN;
	/* Extension headers are not walked: RoCEv2 never uses them. */
	switch (p[l3 + 6]) {
	case IP_PROTO_UDP:
		return classify_udp(m, p, end, flags, meta);
	case IP_PROTO_ICMP6:
		meta->type = ROCE_PKT_ICMP6;
		return ROCE_PKT_ICMP6;
	default:
		meta->type = ROCE_PKT_OTHER;
		return ROCE_PKT_OTHER;
	}
}

/* Classify one frame from its first byte. */
static inline enum roce_pkt_type
classify_one(const struct rte_mbuf *m, unsigned int flags, struct roce_pkt_meta *meta)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t l3 = ETH_HLEN;
	enum roce_drop_reason why;
	uint16_t et;

	memset(meta, 0, sizeof(*meta));
	why = classify_need(m, ETH_HLEN, ROCE_DROP_L2_SHORT);
	if (why != ROCE_DROP_NONE)
		return classify_drop(meta, why);
	et = rd16(p + 12);
	if (et == ETHER_TYPE_VLAN || et == ETHER_TYPE_QINQ) {
		why = classify_need(m, ETH_HLEN + VLAN_HLEN, ROCE_DROP_L2_SHORT);
		if (why != ROCE_DROP_NONE)
			return classify_drop(meta, why);
		et = rd16(p + 16);
		if (et == ETHER_TYPE_VLAN || et == ETHER_TYPE_QINQ)
			return classify_drop(meta, ROCE_DROP_VLAN_DEPTH);
		meta->flags = ROCE_PKT_F_VLAN;
		l3 += VLAN_HLEN;
	}
	meta->l3_off = l3;
	switch (et) {
	case ETHER_TYPE_IPV4:
		return classify_ip4(m, p, flags, meta);
	case ETHER_TYPE_IPV6:
		return classify_ip6(m, p, flags, meta);
	case ETHER_TYPE_ARP:
		meta->type = ROCE_PKT_ARP;
		return ROCE_PKT_ARP;
	default:
		meta->type = ROCE_PKT_OTHER;
		return ROCE_PKT_OTHER;
	}
}

/* Vector classifiers load the first 64 bytes: they must lie inside the data buffer, and the
 * headers up to the BTH in the first segment.
 */
static inline int
classify_vec_loadable(const struct rte_mbuf *m)
{
	return m->data_len >= ETH_HLEN + IP4_HLEN + UDP_HLEN + BTH_LEN &&
		(uint32_t)m->buf_len - m->data_off >= 64;
}

/* Count one classified packet; one whose ICRC is pending, once roce_classify_icrc() knows. */
static inline void
classify_count(struct roce_wire_stats *stats, const struct roce_pkt_meta *meta)
{
	if (meta->flags & ROCE_PKT_F_ICRC_PENDING)
		return;
	stats->type[meta->type]++;
	stats->drop[meta->reason]++;
}

#endif /* ROCE_WIRE_PRIVATE_H */
