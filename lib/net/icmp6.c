/* SPDX-License-Identifier: BSD-3-Clause */
/* ICMPv6: checks common to every message, dispatch by type, echo replies. */
#include <rte_icmp.h>

#include "net_private.h"

#define IP6_HLEN ((uint32_t)sizeof(struct rte_ipv6_hdr))
#define ICMP6_HLEN 4u
#define ICMP6_ECHO_HLEN 8u

static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };

uint16_t
net_icmp6_sum(const struct rte_mbuf *m, const struct rte_ipv6_hdr *ip6, uint32_t l4)
{
	uint32_t sum = net_cksum_mbuf(m, l4, rte_be_to_cpu_16(ip6->payload_len));

	sum += rte_ipv6_phdr_cksum(ip6, 0);
	return (uint16_t)((sum & 0xffff) + (sum >> 16));
}

/* A multicast group we are in: all-nodes, or the solicited-node group of one of ours. */
static bool
icmp6_group(const struct roce_net *n, const uint8_t *ip)
{
	uint8_t g[16];

	if (memcmp(ip, all_nodes, 16) == 0)
		return true;
	net_ip6_snm(n->ll6, g);
	if (memcmp(ip, g, 16) == 0)
		return true;
	net_ip6_snm(n->conf.ip6, g);
	return n->has_ip6 && memcmp(ip, g, 16) == 0;
}

/* Destination: ours on our MAC, or one of our groups on the group's MAC. */
static int
icmp6_dst(const struct roce_net *n, const struct rte_ether_hdr *eth, const uint8_t *dst)
{
	struct rte_ether_addr want;

	if (net_ip6_ours(n, dst) != NULL)
		want = n->conf.mac;
	else if (icmp6_group(n, dst))
		net_mac_mcast6(dst, &want);
	else
		return ROCE_NET_C_IP6_DST;
	return rte_is_same_ether_addr(&eth->dst_addr, &want) ? NET_OK : ROCE_NET_C_L2_DST;
}

static int
icmp6_check(const struct roce_net *n, const struct rte_mbuf *m, uint32_t l3, uint32_t l4)
{
	const struct rte_ipv6_hdr *ip6;
	uint32_t plen;
	int c;

	/* The classifier checked the header and the payload length; be safe anyway. */
	if (l4 != l3 + IP6_HLEN || m->data_len < l4)
		return ROCE_NET_C_SPLIT;
	ip6 = rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, l3);
	plen = rte_be_to_cpu_16(ip6->payload_len);
	if (plen < ICMP6_HLEN || l4 + plen > m->pkt_len)
		return ROCE_NET_C_ICMP6_SHORT;
	if (m->data_len < l4 + ICMP6_HLEN)
		return ROCE_NET_C_SPLIT;
	c = icmp6_dst(n, rte_pktmbuf_mtod(m, const struct rte_ether_hdr *), ip6->dst_addr);
	if (c != NET_OK)
		return c;
	/* Unspecified is checked by type: only a DAD solicitation may come from it. */
	if (net_ip6_mcast(ip6->src_addr) || net_ip6_v4mapped(ip6->src_addr) ||
			net_ip6_loopback(ip6->src_addr))
		return ROCE_NET_C_IP6_SRC;
	if (net_ip6_ours(n, ip6->src_addr) != NULL)
		return ROCE_NET_C_DAD_CONFLICT;
	if (net_icmp6_sum(m, ip6, l4) != 0xffff)
		return ROCE_NET_C_ICMP6_CSUM;
	return NET_OK;
}

/* Turn the echo request *mp into its reply. */
static int
icmp6_echo(struct roce_net *n, struct rte_mbuf **mp, uint32_t l3)
{
	uint32_t l4 = l3 + IP6_HLEN, plen;
	struct rte_ether_hdr *eth;
	struct rte_ipv6_hdr *ip6;
	struct rte_icmp_hdr *icmp;
	struct rte_mbuf *m = *mp;
	const uint8_t *src;
	uint8_t peer[16];

	ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, l3);
	plen = rte_be_to_cpu_16(ip6->payload_len);
	if (plen < ICMP6_ECHO_HLEN)
		return ROCE_NET_C_ICMP6_SHORT;
	if (m->data_len < l4 + ICMP6_ECHO_HLEN)
		return ROCE_NET_C_SPLIT;
	if (IP6_HLEN + plen > n->conf.mtu)
		return ROCE_NET_C_ICMP_TOO_BIG;
	m = net_mbuf_own(n, m);
	if (m == NULL)
		return ROCE_NET_C_REPLY_NOMBUF;
	*mp = m;
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, l3);
	icmp = rte_pktmbuf_mtod_offset(m, struct rte_icmp_hdr *, l4);
	/* From the address asked, or for a group (ping ff02::1) the one matching the asker. */
	memcpy(peer, ip6->src_addr, 16);
	src = net_ip6_ours(n, ip6->dst_addr);
	if (src == NULL)
		src = net_ip6_src(n, peer);
	memcpy(ip6->src_addr, src, 16);
	memcpy(ip6->dst_addr, peer, 16);
	ip6->hop_limits = NET_TTL;
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&n->conf.mac, &eth->src_addr);
	icmp->icmp_type = NET_ICMP6_ECHO_REPLY;
	icmp->icmp_cksum = 0;
	icmp->icmp_cksum = (rte_be16_t)~net_icmp6_sum(m, ip6, l4);
	net_mbuf_trim(m, l4 + plen);
	return ROCE_NET_C_ECHO6_REPLY_TX;
}

int
net_icmp6_input(struct roce_net *n, struct rte_mbuf **mp, const struct roce_pkt_meta *meta,
		uint64_t now)
{
	uint32_t l3 = meta->l3_off, l4 = meta->l4_off;
	const struct rte_ipv6_hdr *ip6;
	uint8_t type;
	int c;

	c = icmp6_check(n, *mp, l3, l4);
	if (c != NET_OK)
		return c;
	ip6 = rte_pktmbuf_mtod_offset(*mp, const struct rte_ipv6_hdr *, l3);
	type = *rte_pktmbuf_mtod_offset(*mp, const uint8_t *, l4);
	if (net_ip6_unspec(ip6->src_addr) && type != NET_ND_NS)
		return ROCE_NET_C_IP6_SRC;
	switch (type) {
	case NET_ICMP6_ECHO_REQUEST:
		return icmp6_echo(n, mp, l3);
	case NET_ND_NS:
		return net_nd_ns_input(n, mp, l4, now);
	case NET_ND_NA:
		return net_nd_na_input(n, mp, l4, now);
	case NET_ICMP6_UNREACH:
		return ROCE_NET_C_ICMP_UNREACH_RX;
	default:
		return ROCE_NET_C_ICMP6_OTHER;
	}
}
