/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_flow.h>

#include "roce_port.h"

#define NB_RXD 1024
#define NB_TXD 1024

static const struct roce_port_profile profiles[] = {
	{ "net_memif", "memif", 1, 0, 0, 1, 0 },
	{ "net_af_packet", "af_packet", 1, 0, 0, 1, 1 },
	{ "net_af_xdp", "af_xdp", 0, 0, 0, 1, 0 },
	{ "net_tap", "tap", 1, 1, 0, 1, 0 },
	{ "net_ring", "ring", 1, 0, 0, 0, 0 },
	{ "net_null", "null", 1, 0, 0, 0, 0 },
	/* From the mlx5 and ice guides: RSS on UDP ports, flow isolation on mlx5. Untested. */
	{ "mlx5_pci", "mlx5", 0, 1, 1, 1, 0 },
	{ "net_ice", "ice", 0, 1, 0, 1, 0 },
};

static const struct roce_port_profile generic = { "", "generic", 0, 1, 0, 1, 0 };

const struct roce_port_profile *
roce_port_profile_find(const char *driver)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(profiles); i++)
		if (strncmp(driver, profiles[i].driver, strlen(profiles[i].driver)) == 0)
			return &profiles[i];
	return &generic;
}

/* RSS on the UDP ports: a RoCE peer puts per-QP entropy in the source port. */
static void
conf_rss(const struct rte_eth_dev_info *info, struct rte_eth_conf *conf)
{
	uint64_t hf = info->flow_type_rss_offloads &
		(RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV6_UDP);

	if (hf == 0)
		return;
	conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf->rx_adv_conf.rss_conf.rss_hf = hf;
}

/*
 * Flow isolation (mlx5): only what these rules match reaches DPDK, the kernel keeps the rest
 * of the traffic (ssh, its own ARP). RoCEv2 is spread over the queues by RSS, ARP and ICMP
 * (echo, neighbour discovery) go to queue 0, where worker 0 answers them. From the mlx5 guide;
 * untested here (no ConnectX in CI).
 */
static int
port_isolate_flows(uint16_t port_id, uint16_t nq)
{
	static const struct rte_flow_attr attr = { .ingress = 1 };
	static const struct rte_flow_item_udp udp_spec = {
		.hdr.dst_port = RTE_BE16(4791) };
	static const struct rte_flow_item_udp udp_mask = {
		.hdr.dst_port = RTE_BE16(0xFFFF) };
	static const struct rte_flow_item_eth arp_spec = {
		.hdr.ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP) };
	static const struct rte_flow_item_eth arp_mask = {
		.hdr.ether_type = RTE_BE16(0xFFFF) };
	static const struct rte_flow_item_ipv4 icmp_spec = { .hdr.next_proto_id = IPPROTO_ICMP };
	static const struct rte_flow_item_ipv4 icmp_mask = { .hdr.next_proto_id = 0xFF };
	static const struct rte_flow_item_ipv6 icmp6_spec = { .hdr.proto = IPPROTO_ICMPV6 };
	static const struct rte_flow_item_ipv6 icmp6_mask = { .hdr.proto = 0xFF };
	const struct rte_flow_item patterns[][4] = {
		{ { .type = RTE_FLOW_ITEM_TYPE_ETH }, { .type = RTE_FLOW_ITEM_TYPE_IPV4 },
		  { .type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &udp_spec, .mask = &udp_mask },
		  { .type = RTE_FLOW_ITEM_TYPE_END } },
		{ { .type = RTE_FLOW_ITEM_TYPE_ETH }, { .type = RTE_FLOW_ITEM_TYPE_IPV6 },
		  { .type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &udp_spec, .mask = &udp_mask },
		  { .type = RTE_FLOW_ITEM_TYPE_END } },
		{ { .type = RTE_FLOW_ITEM_TYPE_ETH, .spec = &arp_spec, .mask = &arp_mask },
		  { .type = RTE_FLOW_ITEM_TYPE_END } },
		{ { .type = RTE_FLOW_ITEM_TYPE_ETH },
		  { .type = RTE_FLOW_ITEM_TYPE_IPV4, .spec = &icmp_spec, .mask = &icmp_mask },
		  { .type = RTE_FLOW_ITEM_TYPE_END } },
		{ { .type = RTE_FLOW_ITEM_TYPE_ETH },
		  { .type = RTE_FLOW_ITEM_TYPE_IPV6, .spec = &icmp6_spec, .mask = &icmp6_mask },
		  { .type = RTE_FLOW_ITEM_TYPE_END } },
	};
	uint16_t queues[RTE_MAX_QUEUES_PER_PORT];
	struct rte_flow_action_rss rss = {
		.types = RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV6_UDP,
		.queue_num = nq,
		.queue = queues,
	};
	struct rte_flow_action_queue q0 = { .index = 0 };
	struct rte_flow_action to_rss[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_RSS, .conf = &rss },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_action to_q0[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &q0 },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_error err;
	unsigned int i;

	for (i = 0; i < nq; i++)
		queues[i] = (uint16_t)i;
	for (i = 0; i < RTE_DIM(patterns); i++)
		if (rte_flow_create(port_id, &attr, patterns[i], i < 2 ? to_rss : to_q0,
				&err) == NULL)
			return -EIO;
	return 0;
}

int
roce_port_setup(uint16_t port_id, uint16_t nb_workers, uint16_t mtu,
		struct rte_mempool *const *mps, struct roce_port *port)
{
	struct rte_eth_conf conf = {0};
	struct rte_eth_dev_info info;
	uint16_t q, nq, max;
	int ret;

	if (!rte_eth_dev_is_valid_port(port_id))
		return -ENODEV;
	ret = rte_eth_dev_info_get(port_id, &info);
	if (ret != 0)
		return ret;
	memset(port, 0, sizeof(*port));
	port->port_id = port_id;
	port->profile = roce_port_profile_find(info.driver_name);
	max = RTE_MIN(info.max_rx_queues, info.max_tx_queues);
	if (port->profile->max_queues != 0)
		max = RTE_MIN(max, port->profile->max_queues);
	nq = RTE_MAX(RTE_MIN(nb_workers, max), 1);
	if (nq > 1 && port->profile->rss)
		conf_rss(&info, &conf);
	port->rss = conf.rxmode.mq_mode == RTE_ETH_MQ_RX_RSS;
	if (!port->rss)
		nq = 1;
	if (port->profile->isolate) {
		struct rte_flow_error err;

		/* Before configure, as rte_flow_isolate() asks. */
		ret = rte_flow_isolate(port_id, 1, &err);
		if (ret != 0)
			return ret;
	}
	ret = rte_eth_dev_configure(port_id, nq, nq, &conf);
	if (ret != 0)
		return ret;
	for (q = 0; q < nq; q++) {
		int socket = rte_eth_dev_socket_id(port_id);

		ret = rte_eth_rx_queue_setup(port_id, q, NB_RXD, socket, NULL, mps[q]);
		if (ret == 0)
			ret = rte_eth_tx_queue_setup(port_id, q, NB_TXD, socket, NULL);
		if (ret != 0)
			return ret;
	}
	/* Not every virtual PMD takes an MTU; the frames we build decide what we send. */
	if (port->profile->set_mtu && mtu != 0)
		rte_eth_dev_set_mtu(port_id, mtu);
	rte_eth_dev_get_mtu(port_id, &port->mtu);
	ret = rte_eth_dev_start(port_id);
	if (ret != 0)
		return ret;
	if (port->profile->isolate) {
		ret = port_isolate_flows(port_id, nq);
		if (ret != 0)
			return ret;
	}
	/* IPv6 neighbour solicitations go to solicited-node multicast addresses. */
	rte_eth_allmulticast_enable(port_id);
	rte_eth_macaddr_get(port_id, &port->mac);
	if (rte_is_zero_ether_addr(&port->mac)) {
		/* Some virtual PMDs (ring) have no address: make up a locally administered one. */
		rte_eth_random_addr(port->mac.addr_bytes);
		rte_eth_dev_default_mac_addr_set(port_id, &port->mac);
	}
	rte_eth_dev_get_name_by_port(port_id, port->name);
	port->nb_queues = nq;
	return 0;
}

void
roce_port_close(struct roce_port *port)
{
	rte_eth_dev_stop(port->port_id);
	rte_eth_dev_close(port->port_id);
}
