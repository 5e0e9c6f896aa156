/* SPDX-License-Identifier: BSD-3-Clause */
/* ARP (RFC 826) over Ethernet for IPv4: answer for our address, learn as Linux does. */
#include <rte_arp.h>

#include "net_private.h"

#define ARP_LEN ((uint32_t)sizeof(struct rte_arp_hdr))

static const struct rte_ether_addr mac_bcast = {{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }};
static const struct rte_ether_addr mac_zero;

/* Our ARP message into the empty mbuf @m, padded to the shortest frame. */
static void
arp_build(const struct roce_net *n, struct rte_mbuf *m, uint16_t op,
		const struct rte_ether_addr *eth_dst, const struct rte_ether_addr *tha,
		rte_be32_t tip)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t l2 = net_l2_hdr(n, p, eth_dst, RTE_ETHER_TYPE_ARP);
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(p + l2);

	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = sizeof(rte_be32_t);
	arp->arp_opcode = rte_cpu_to_be_16(op);
	rte_ether_addr_copy(&n->conf.mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = n->conf.ip4;
	rte_ether_addr_copy(tha, &arp->arp_data.arp_tha);
	arp->arp_data.arp_tip = tip;
	memset(p + l2 + ARP_LEN, 0, NET_ETH_MIN - l2 - ARP_LEN);
	m->data_len = NET_ETH_MIN;
	m->pkt_len = NET_ETH_MIN;
}

void
net_arp_solicit(struct roce_net *n, rte_be32_t tip, const struct rte_ether_addr *dst)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(n->conf.mp);

	if (m == NULL) {
		n->c[ROCE_NET_C_NO_MBUF]++;
		return;
	}
	/* Linux leaves the target hardware address zero in probes too. */
	arp_build(n, m, RTE_ARP_OP_REQUEST, dst != NULL ? dst : &mac_bcast, &mac_zero, tip);
	n->c[ROCE_NET_C_ARP_REQ_TX]++;
	net_tx_push(n, m);
}

/* Replace the request *mp with our reply to @sha/@sip. */
static int
arp_reply(struct roce_net *n, struct rte_mbuf **mp, const struct rte_ether_addr *sha,
		rte_be32_t sip)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(n->conf.mp);

	if (m == NULL)
		return ROCE_NET_C_REPLY_NOMBUF;
	arp_build(n, m, RTE_ARP_OP_REPLY, sha, sha, sip);
	rte_pktmbuf_free(*mp);
	*mp = m;
	return ROCE_NET_C_ARP_REPLY_TX;
}

/* The fixed part of an Ethernet/IPv4 ARP message. */
static int
arp_check(const struct roce_net *n, const struct rte_mbuf *m, uint32_t l3)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_arp_hdr *arp;

	if (m->pkt_len < l3 + ARP_LEN)
		return ROCE_NET_C_ARP_SHORT;
	if (m->data_len < l3 + ARP_LEN)
		return ROCE_NET_C_SPLIT;
	if (!rte_is_same_ether_addr(&eth->dst_addr, &n->conf.mac) &&
			!rte_is_broadcast_ether_addr(&eth->dst_addr))
		return ROCE_NET_C_L2_DST;
	arp = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *, l3);
	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
			arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
			arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != sizeof(rte_be32_t))
		return ROCE_NET_C_ARP_FORMAT;
	if (arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) &&
			arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REPLY))
		return ROCE_NET_C_ARP_OP;
	return NET_OK;
}

int
net_arp_input(struct roce_net *n, struct rte_mbuf **mp, const struct roce_pkt_meta *meta,
		uint64_t now)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(*mp, const struct rte_ether_hdr *);
	const struct rte_arp_hdr *arp;
	struct rte_ether_addr sha;
	rte_be32_t sip, tip;
	uint8_t key[16];
	bool request, to_us;
	int c;

	if (n->conf.ip4 == 0)
		return ROCE_NET_C_NO_IP4;
	c = arp_check(n, *mp, meta->l3_off);
	if (c != NET_OK)
		return c;
	arp = rte_pktmbuf_mtod_offset(*mp, const struct rte_arp_hdr *, meta->l3_off);
	request = arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	rte_ether_addr_copy(&arp->arp_data.arp_sha, &sha);
	sip = arp->arp_data.arp_sip;
	tip = arp->arp_data.arp_tip;
	if (!rte_is_valid_assigned_ether_addr(&sha))
		return ROCE_NET_C_ARP_SENDER;
	if (sip == n->conf.ip4)
		return ROCE_NET_C_ARP_CONFLICT;
	/* An address probe (RFC 5227): defend our address, learn nothing. */
	if (sip == 0)
		return request && tip == n->conf.ip4 ? arp_reply(n, mp, &sha, sip) :
			ROCE_NET_C_ARP_NOT_US;
	if (!net_ip4_unicast(n, sip))
		return ROCE_NET_C_ARP_SENDER;
	net_key4(sip, key);
	if (request && tip == n->conf.ip4) {
		/* The asker will talk to us: remember it (STALE), as Linux does. */
		net_neigh_learn(n, key, &sha, false, true, true, now);
		return arp_reply(n, mp, &sha, sip);
	}
	/* Anything else only refreshes an entry we have (Linux without arp_accept); a reply
	 * unicast to us confirms the neighbour, the rest are sightings.
	 */
	to_us = rte_is_same_ether_addr(&eth->dst_addr, &n->conf.mac);
	c = net_neigh_learn(n, key, &sha, !request && to_us, true, false, now);
	if (request)
		return ROCE_NET_C_ARP_NOT_US;
	return c ? ROCE_NET_C_ARP_REPLY_RX : ROCE_NET_C_ARP_UNSOLICITED;
}
