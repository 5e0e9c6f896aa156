/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv6 neighbour discovery (RFC 4861): solicitations and advertisements. */
#include "net_private.h"

#define IP6_HLEN ((uint32_t)sizeof(struct rte_ipv6_hdr))

static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };

/* An NS or NA with our link-layer address option, in a fresh mbuf; NULL when none. */
static struct rte_mbuf *
nd_build(const struct roce_net *n, const struct rte_ether_addr *eth_dst, const uint8_t *src,
		const uint8_t *dst, uint8_t type, uint32_t flags, const uint8_t *target)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(n->conf.mp);
	struct rte_ipv6_hdr *ip6;
	struct net_nd_msg *msg;
	struct net_nd_lla *opt;
	uint32_t l2;
	uint8_t *p;

	if (m == NULL)
		return NULL;
	p = rte_pktmbuf_mtod(m, uint8_t *);
	l2 = net_l2_hdr(n, p, eth_dst, RTE_ETHER_TYPE_IPV6);
	ip6 = (struct rte_ipv6_hdr *)(p + l2);
	msg = (struct net_nd_msg *)(ip6 + 1);
	opt = (struct net_nd_lla *)(msg + 1);
	ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip6->payload_len = rte_cpu_to_be_16(NET_ND_LEN + NET_ND_LLA_LEN);
	ip6->proto = IPPROTO_ICMPV6;
	ip6->hop_limits = NET_ND_HOPLIMIT;
	memcpy(ip6->src_addr, src, 16);
	memcpy(ip6->dst_addr, dst, 16);
	msg->type = type;
	msg->code = 0;
	msg->cksum = 0;
	msg->flags = rte_cpu_to_be_32(flags);
	memcpy(msg->target, target, 16);
	opt->type = type == NET_ND_NS ? NET_ND_OPT_SLLA : NET_ND_OPT_TLLA;
	opt->len = 1;
	rte_ether_addr_copy(&n->conf.mac, &opt->mac);
	m->data_len = (uint16_t)(l2 + IP6_HLEN + NET_ND_LEN + NET_ND_LLA_LEN);
	m->pkt_len = m->data_len;
	msg->cksum = (rte_be16_t)~net_icmp6_sum(m, ip6, l2 + IP6_HLEN);
	return m;
}

void
net_nd_solicit(struct roce_net *n, const uint8_t *target, const struct rte_ether_addr *dst)
{
	struct rte_ether_addr eth_dst;
	const uint8_t *ip_dst = target;
	struct rte_mbuf *m;
	uint8_t group[16];

	if (dst == NULL) {
		net_ip6_snm(target, group);
		net_mac_mcast6(group, &eth_dst);
		ip_dst = group;
	} else {
		eth_dst = *dst;
	}
	m = nd_build(n, &eth_dst, net_ip6_src(n, target), ip_dst, NET_ND_NS, 0, target);
	if (m == NULL) {
		n->c[ROCE_NET_C_NO_MBUF]++;
		return;
	}
	n->c[ROCE_NET_C_NS_TX]++;
	net_tx_push(n, m);
}

/*
 * Options of an ND message in [off, end): every option well formed, and the Ethernet
 * link-layer address option of type @want (the first one) copied to @lla.
 * @return NET_OK (*found 1 when there was one) or ROCE_NET_C_ND_OPTION.
 */
static int
nd_options(const uint8_t *p, uint32_t off, uint32_t end, uint8_t want,
		struct rte_ether_addr *lla, bool *found)
{
	*found = false;
	while (off < end) {
		uint32_t len;

		if (end - off < 2)
			return ROCE_NET_C_ND_OPTION;
		len = p[off + 1] * 8u;
		if (len == 0 || len > end - off)
			return ROCE_NET_C_ND_OPTION;
		if (p[off] == want && !*found) {
			if (len != NET_ND_LLA_LEN)
				return ROCE_NET_C_ND_OPTION;
			memcpy(lla, p + off + 2, RTE_ETHER_ADDR_LEN);
			if (!rte_is_valid_assigned_ether_addr(lla))
				return ROCE_NET_C_ND_OPTION;
			*found = true;
		}
		off += len;
	}
	return NET_OK;
}

/* What NS and NA share: hop limit, code, length, a unicast target, options. */
static int
nd_check(const struct rte_mbuf *m, uint32_t l4, uint8_t want, struct rte_ether_addr *lla,
		bool *found)
{
	const struct rte_ipv6_hdr *ip6;
	const struct net_nd_msg *msg;
	uint32_t plen;

	ip6 = rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, l4 - IP6_HLEN);
	msg = rte_pktmbuf_mtod_offset(m, const struct net_nd_msg *, l4);
	plen = rte_be_to_cpu_16(ip6->payload_len);
	/* 255 proves the sender is on the link: no router forwarded it. */
	if (ip6->hop_limits != NET_ND_HOPLIMIT)
		return ROCE_NET_C_ND_HOPLIMIT;
	if (msg->code != 0 || plen < NET_ND_LEN)
		return ROCE_NET_C_ND_INVALID;
	if (m->data_len < l4 + plen)
		return ROCE_NET_C_SPLIT;
	if (!net_ip6_unicast(msg->target))
		return ROCE_NET_C_ND_INVALID;
	return nd_options(rte_pktmbuf_mtod(m, const uint8_t *), l4 + NET_ND_LEN, l4 + plen, want,
			lla, found);
}

int
net_nd_ns_input(struct roce_net *n, struct rte_mbuf **mp, uint32_t l4, uint64_t now)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(*mp, const struct rte_ether_hdr *);
	const struct rte_ipv6_hdr *ip6;
	const struct net_nd_msg *msg;
	struct rte_ether_addr lla, eth_dst;
	uint8_t target[16], peer[16], snm[16];
	struct rte_mbuf *m;
	bool found, dad;
	int c;

	c = nd_check(*mp, l4, NET_ND_OPT_SLLA, &lla, &found);
	if (c != NET_OK)
		return c;
	ip6 = rte_pktmbuf_mtod_offset(*mp, const struct rte_ipv6_hdr *, l4 - IP6_HLEN);
	msg = rte_pktmbuf_mtod_offset(*mp, const struct net_nd_msg *, l4);
	memcpy(target, msg->target, 16);
	memcpy(peer, ip6->src_addr, 16);
	/* Duplicate address detection: from ::, to the target's group, no address option. */
	dad = net_ip6_unspec(peer);
	net_ip6_snm(target, snm);
	if (dad && (memcmp(ip6->dst_addr, snm, 16) != 0 || found))
		return ROCE_NET_C_ND_INVALID;
	if (net_ip6_ours(n, target) == NULL)
		return ROCE_NET_C_NS_NOT_US;
	if (dad) {
		/* Defend the address: tell every node, not soliciting. */
		net_mac_mcast6(all_nodes, &eth_dst);
		memcpy(peer, all_nodes, 16);
	} else {
		if (found)
			net_neigh_learn(n, peer, &lla, false, true, true, now);
		eth_dst = found ? lla : eth->src_addr;
	}
	m = nd_build(n, &eth_dst, target, peer, NET_ND_NA,
			NET_NA_F_OVERRIDE | (dad ? 0 : NET_NA_F_SOLICITED), target);
	if (m == NULL)
		return ROCE_NET_C_REPLY_NOMBUF;
	rte_pktmbuf_free(*mp);
	*mp = m;
	return ROCE_NET_C_NA_TX;
}

int
net_nd_na_input(struct roce_net *n, struct rte_mbuf **mp, uint32_t l4, uint64_t now)
{
	const struct rte_ipv6_hdr *ip6;
	const struct net_nd_msg *msg;
	struct rte_ether_addr lla;
	uint32_t flags;
	bool found;
	int c;

	c = nd_check(*mp, l4, NET_ND_OPT_TLLA, &lla, &found);
	if (c != NET_OK)
		return c;
	ip6 = rte_pktmbuf_mtod_offset(*mp, const struct rte_ipv6_hdr *, l4 - IP6_HLEN);
	msg = rte_pktmbuf_mtod_offset(*mp, const struct net_nd_msg *, l4);
	flags = rte_be_to_cpu_32(msg->flags);
	if ((flags & NET_NA_F_SOLICITED) && net_ip6_mcast(ip6->dst_addr))
		return ROCE_NET_C_ND_INVALID;
	if (net_ip6_ours(n, msg->target) != NULL)
		return ROCE_NET_C_DAD_CONFLICT;
	/* Only entries we have; O=0 does not replace a known MAC (RFC 4861 7.2.5). */
	c = net_neigh_learn(n, msg->target, found ? &lla : NULL, flags & NET_NA_F_SOLICITED,
			flags & NET_NA_F_OVERRIDE, false, now);
	return c ? ROCE_NET_C_NA_RX : ROCE_NET_C_NA_UNSOLICITED;
}
