/* SPDX-License-Identifier: BSD-3-Clause */
/* ICMP over IPv4: echo replies, built in the request's own mbuf as l3fwd-style apps do. */
#include <rte_icmp.h>

#include "net_private.h"

#define IP4_HLEN ((uint32_t)sizeof(struct rte_ipv4_hdr))
#define ICMP_HLEN ((uint32_t)sizeof(struct rte_icmp_hdr))
#define ICMP_DEST_UNREACH 3

/* Turn the echo request *mp (IP header at @l3, @ihl bytes, @tot long) into its reply. */
static int
icmp_echo(struct roce_net *n, struct rte_mbuf **mp, uint32_t l3, uint32_t ihl, uint32_t tot)
{
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_icmp_hdr *icmp;
	struct rte_mbuf *m;
	uint8_t *p;

	if (tot > n->conf.mtu)
		return ROCE_NET_C_ICMP_TOO_BIG;
	m = net_mbuf_own(n, *mp);
	if (m == NULL)
		return ROCE_NET_C_REPLY_NOMBUF;
	*mp = m;
	if (ihl > IP4_HLEN) {
		/* Options (record route, timestamps) are not echoed: slide L2 and IP up. */
		p = rte_pktmbuf_mtod(m, uint8_t *);
		memmove(p + ihl - IP4_HLEN, p, l3 + IP4_HLEN);
		rte_pktmbuf_adj(m, (uint16_t)(ihl - IP4_HLEN));
		tot -= ihl - IP4_HLEN;
	}
	p = rte_pktmbuf_mtod(m, uint8_t *);
	eth = (struct rte_ether_hdr *)p;
	ip = (struct rte_ipv4_hdr *)(p + l3);
	icmp = (struct rte_icmp_hdr *)(p + l3 + IP4_HLEN);
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&n->conf.mac, &eth->src_addr);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)tot);
	ip->time_to_live = NET_TTL;
	ip->dst_addr = ip->src_addr;
	ip->src_addr = n->conf.ip4;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	icmp->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	icmp->icmp_cksum = 0;
	icmp->icmp_cksum = (uint16_t)~net_cksum_mbuf(m, l3 + IP4_HLEN, tot - IP4_HLEN);
	net_mbuf_trim(m, l3 + tot);
	return ROCE_NET_C_ECHO_REPLY_TX;
}

/* Addresses, lengths and checksum of an ICMP message to us; @return NET_OK or a counter. */
static int
icmp_check(const struct roce_net *n, const struct rte_mbuf *m, uint32_t l3, uint32_t l4)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip;
	uint32_t tot;

	if (!rte_is_same_ether_addr(&eth->dst_addr, &n->conf.mac))
		return ROCE_NET_C_L2_DST;
	/* The classifier checked the IP header, its length and checksum; be safe anyway. */
	if (l4 < l3 + IP4_HLEN || m->data_len < l4)
		return ROCE_NET_C_SPLIT;
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, l3);
	if (ip->dst_addr != n->conf.ip4)
		return ROCE_NET_C_IP4_DST;
	if (!net_ip4_unicast(n, ip->src_addr) || ip->src_addr == n->conf.ip4)
		return ROCE_NET_C_IP4_SRC;
	tot = rte_be_to_cpu_16(ip->total_length);
	if (tot < l4 - l3 + ICMP_HLEN || l3 + tot > m->pkt_len)
		return ROCE_NET_C_ICMP_SHORT;
	if (m->data_len < l4 + ICMP_HLEN)
		return ROCE_NET_C_SPLIT;
	if (net_cksum_mbuf(m, l4, l3 + tot - l4) != 0xffff)
		return ROCE_NET_C_ICMP_CSUM;
	return NET_OK;
}

int
net_icmp_input(struct roce_net *n, struct rte_mbuf **mp, const struct roce_pkt_meta *meta,
		uint64_t now)
{
	uint32_t l3 = meta->l3_off, l4 = meta->l4_off;
	const struct rte_ipv4_hdr *ip;
	int c;

	RTE_SET_USED(now);
	if (n->conf.ip4 == 0)
		return ROCE_NET_C_NO_IP4;
	c = icmp_check(n, *mp, l3, l4);
	if (c != NET_OK)
		return c;
	ip = rte_pktmbuf_mtod_offset(*mp, const struct rte_ipv4_hdr *, l3);
	switch (*rte_pktmbuf_mtod_offset(*mp, const uint8_t *, l4)) {
	case RTE_IP_ICMP_ECHO_REQUEST:
		return icmp_echo(n, mp, l3, l4 - l3, rte_be_to_cpu_16(ip->total_length));
	case ICMP_DEST_UNREACH:
		return ROCE_NET_C_ICMP_UNREACH_RX;
	default:
		return ROCE_NET_C_ICMP_OTHER;
	}
}
