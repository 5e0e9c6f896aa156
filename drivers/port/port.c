/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_kvargs.h>
#include <rte_log.h>

#include "roce_port.h"

RTE_LOG_REGISTER(roce_port_logtype, roce.port, INFO);
#define PORT_LOG(level, ...) \
	rte_log(RTE_LOG_##level, roce_port_logtype, "port: " __VA_ARGS__)

#define NB_RXD 1024
#define NB_TXD 1024

#define MTU_ETHDEV ROCE_PORT_MTU_ETHDEV
#define MTU_ANY ROCE_PORT_MTU_ANY
#define MTU_KERNEL ROCE_PORT_MTU_KERNEL
#define ZC_COPY ROCE_PORT_ZC_COPY
#define ZC_ON ROCE_PORT_ZC_ON
#define ZC_REFUSE ROCE_PORT_ZC_REFUSE

/* Ethernet header and one VLAN tag: what a frame adds to the IP MTU. */
#define L2_OVERHEAD (RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN)

static const struct roce_port_profile profiles[] = {
	{ "net_memif", "memif", 1, 0, 0, MTU_ANY, 0, 1, ZC_ON, 1 },
	{ "net_af_packet", "af_packet", 1, 0, 0, MTU_KERNEL, 1, 0, ZC_COPY, 0 },
	{ "net_af_xdp", "af_xdp", 0, 0, 0, MTU_ETHDEV, 0, 0, ZC_COPY, 0 },
	/*
	 * tap drops on transmit what exceeds its ethdev MTU (dev->data->mtu), so the MTU goes
	 * through rte_eth_dev_set_mtu(), which also sets the kernel side; 22.11's tap reports
	 * frames of 1522 bytes at most, so it refuses more than 1504.
	 */
	{ "net_tap", "tap", 1, 1, 0, MTU_ETHDEV, 0, 0, ZC_COPY, 0 },
	{ "net_ring", "ring", 1, 0, 0, MTU_ANY, 0, 0, ZC_REFUSE, 0 },
	{ "net_null", "null", 1, 0, 0, MTU_ANY, 0, 0, ZC_COPY, 0 },
	/*
	 * From the mlx5 and ice guides: RSS on UDP ports, flow isolation on mlx5; the NIC
	 * gathers chained segments by DMA, so payloads go zero-copy. Untested.
	 */
	{ "mlx5_pci", "mlx5", 0, 1, 1, MTU_ETHDEV, 0, 0, ZC_ON, 0 },
	{ "net_ice", "ice", 0, 1, 0, MTU_ETHDEV, 0, 0, ZC_ON, 0 },
};

static const struct roce_port_profile generic = {
	"", "generic", 0, 1, 0, MTU_ETHDEV, 0, 0, ZC_COPY, 0
};

/* af_packet (TPACKET_V2): a frame slot holds the tpacket2 header, then up to framesz - 32 bytes. */
#define AFP_FRAME_HDR 32
#define AFP_DEFAULT_FRAMESZ 2048
#define AFP_DEFAULT_BLOCKSZ 4096

/*
 * The largest IP MTU rte_eth_dev_set_mtu() lets through: max_mtu, and a frame (MTU plus the
 * overhead ethdev assumes) within max_rx_pktlen, as 22.11's eth_dev_validate_mtu() checks.
 */
static uint32_t
ethdev_max_mtu(const struct rte_eth_dev_info *info)
{
	uint32_t over = info->max_mtu != UINT16_MAX && info->max_rx_pktlen > info->max_mtu ?
		info->max_rx_pktlen - info->max_mtu : RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;

	if (info->max_rx_pktlen <= over)
		return 0;
	return RTE_MIN((uint32_t)info->max_mtu, info->max_rx_pktlen - over);
}

static int
mtu_ethdev(uint16_t port_id, const struct rte_eth_dev_info *info, uint16_t mtu,
		const struct roce_port *port, char *err, size_t len)
{
	uint32_t max = ethdev_max_mtu(info);
	uint16_t now = 0;
	int ret = rte_eth_dev_set_mtu(port_id, mtu);

	if (ret == 0)
		return 0;
	if (ret == -ENOTSUP) {
		/* Without mtu_set, the PMD says what it carries in max_rx_pktlen (pcap: any). */
		if ((rte_eth_dev_get_mtu(port_id, &now) == 0 && now == mtu) ||
				info->max_rx_pktlen >= (uint32_t)mtu + L2_OVERHEAD)
			return 0;
		snprintf(err, len, "%s (%s): the PMD cannot change its MTU (%u): use --mtu %u",
				port->name, info->driver_name, now, now);
	} else if (mtu < info->min_mtu) {
		snprintf(err, len, "%s (%s): --mtu %u refused: the PMD takes IP MTUs from %u: "
				"use --mtu %u or more", port->name, info->driver_name, mtu,
				info->min_mtu, info->min_mtu);
	} else if (mtu > max) {
		snprintf(err, len, "%s (%s): --mtu %u refused: the PMD takes IP MTUs up to %u "
				"(frames of %u bytes): use --mtu %u or less", port->name,
				info->driver_name, mtu, max, info->max_rx_pktlen, max);
	} else {
		snprintf(err, len, "%s (%s): --mtu %u refused by the PMD: %s", port->name,
				info->driver_name, mtu, strerror(-ret));
	}
	return -EMSGSIZE;
}

static int
mtu_any(uint16_t port_id, const struct rte_eth_dev_info *info, uint16_t mtu,
		const struct roce_port *port, char *err, size_t len)
{
	(void)info;
	(void)port;
	(void)err;
	(void)len;
	/* Where the PMD has an MTU at all, keep it in step; it does not limit frames. */
	rte_eth_dev_set_mtu(port_id, mtu);
	return 0;
}

/* Key @key of devargs @args ("iface=x,qpairs=1") copied to @out, or @def. */
static const char *
kv_get(const char *args, const char *key, const char *def, char *out, size_t len)
{
	struct rte_kvargs *kv = args != NULL ? rte_kvargs_parse(args, NULL) : NULL;
	const char *v = kv != NULL ? rte_kvargs_get(kv, key) : NULL;

	snprintf(out, len, "%s", v != NULL ? v : def);
	rte_kvargs_free(kv);
	return out;
}

static const char *
devarg_args(const struct rte_eth_dev_info *info)
{
	const struct rte_devargs *da = rte_dev_devargs(info->device);

	return da != NULL ? da->args : NULL;
}

/* A numeric key of the port's devargs (af_packet's framesz=, blocksz=), or @def. */
static unsigned int
devarg_uint(const struct rte_eth_dev_info *info, const char *key, unsigned int def)
{
	char v[32];

	if (kv_get(devarg_args(info), key, "", v, sizeof(v))[0] == '\0')
		return def;
	return (unsigned int)strtoul(v, NULL, 0);
}

static unsigned int
gcd(unsigned int a, unsigned int b)
{
	return b == 0 ? a : gcd(b, a % b);
}

/*
 * af_packet: a frame slot must hold the frame after its tpacket2 header, an mbuf what the slot
 * holds, and slots must tile the block (the PMD places slot i at i * framesz, the kernel never
 * lets one cross a block).
 */
static int
mtu_afp(const struct rte_eth_dev_info *info, uint16_t mtu, const struct roce_port *port,
		char *err, size_t len)
{
	unsigned int fsz = devarg_uint(info, "framesz", AFP_DEFAULT_FRAMESZ);
	unsigned int bsz = devarg_uint(info, "blocksz", AFP_DEFAULT_BLOCKSZ);
	unsigned int room = rte_pktmbuf_data_room_size(port->mp0) - RTE_PKTMBUF_HEADROOM;
	unsigned int need = mtu + L2_OVERHEAD + AFP_FRAME_HDR, want_f, want_b;

	if (fsz >= need && fsz != 0 && bsz % fsz == 0 && room >= fsz - AFP_FRAME_HDR)
		return 0;
	want_f = RTE_MAX(RTE_ALIGN_CEIL(need, 1024), fsz);
	want_b = want_f / gcd(want_f, 4096) * 4096;
	snprintf(err, len, "%s (af_packet): MTU %u needs framesz=%u,blocksz=%u in its --vdev "
			"(now %u and %u) and roced --mbuf-size %u (now %u)", port->name, mtu,
			want_f, want_b, fsz, bsz, want_f - AFP_FRAME_HDR, room);
	return -EMSGSIZE;
}

/* The kernel interface's MTU: raised to @mtu where lower (what the PMD's own mtu_set does). */
static int
kernel_mtu(const struct rte_eth_dev_info *info, uint16_t mtu, char *ifname, char *err,
		size_t len)
{
	struct ifreq ifr;
	int s, ret = 0;

	if (info->if_index == 0 || if_indextoname(info->if_index, ifname) == NULL) {
		snprintf(err, len, "%s: no kernel interface to set MTU %u on", info->driver_name,
				mtu);
		return -ENODEV;
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (s < 0 || ioctl(s, SIOCGIFMTU, &ifr) != 0) {
		ret = -errno;
		snprintf(err, len, "%s: cannot read the MTU of interface %s: %s",
				info->driver_name, ifname, strerror(-ret));
	} else if (ifr.ifr_mtu < mtu) {
		ifr.ifr_mtu = mtu;
		if (ioctl(s, SIOCSIFMTU, &ifr) != 0) {
			ret = -errno;
			snprintf(err, len, "%s: cannot set interface %s to MTU %u (%s): set it "
					"first (ip link set dev %s mtu %u)", info->driver_name,
					ifname, mtu, strerror(-ret), ifname, mtu);
		}
	}
	if (s >= 0)
		close(s);
	return ret;
}

static int
mtu_kernel(uint16_t port_id, const struct rte_eth_dev_info *info, uint16_t mtu,
		const struct roce_port *port, char *err, size_t len)
{
	char ifname[IF_NAMESIZE] = "";
	int ret;

	(void)port_id;
	if (strstr(info->driver_name, "af_packet") != NULL) {
		ret = mtu_afp(info, mtu, port, err, len);
		if (ret != 0)
			return ret;
	}
	ret = kernel_mtu(info, mtu, ifname, err, len);
	return ret == 0 ? 0 : -EMSGSIZE;
}

typedef int (*mtu_fn)(uint16_t port_id, const struct rte_eth_dev_info *info, uint16_t mtu,
		const struct roce_port *port, char *err, size_t len);

static const mtu_fn mtu_ops[] = {
	[ROCE_PORT_MTU_ETHDEV] = mtu_ethdev,
	[ROCE_PORT_MTU_ANY] = mtu_any,
	[ROCE_PORT_MTU_KERNEL] = mtu_kernel,
};

const struct roce_port_profile *
roce_port_profile_find(const char *driver)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(profiles); i++)
		if (strncmp(driver, profiles[i].driver, strlen(profiles[i].driver)) == 0)
			return &profiles[i];
	return &generic;
}

/* Once per profile and process: a profile nobody ran here is a guess, and says so. */
static void
warn_untested(const struct roce_port *port, const char *driver)
{
	static uint8_t warned[RTE_DIM(profiles) + 1];
	size_t i = port->profile == &generic ? RTE_DIM(profiles) :
		(size_t)(port->profile - profiles);

	if (port->profile->tested || warned[i])
		return;
	warned[i] = 1;
	if (port->profile == &generic)
		PORT_LOG(WARNING, "%s (%s): no profile for this PMD: generic settings (RSS on "
				"UDP where offered, MTU through ethdev), untested here\n", port->name,
				driver);
	else
		PORT_LOG(WARNING, "%s (%s): the %s profile is written from the DPDK guide and "
				"untested here: check counters and data before trusting results\n",
				port->name, driver, port->profile->family);
}

/* Why a memif port did not start: its client connects to the server at start. */
static void
start_failed_memif(const struct roce_port *port, const struct rte_eth_dev_info *info, int ret,
		char *err, size_t len)
{
	const char *args = devarg_args(info);
	char role[16], sock[108];

	kv_get(args, "role", "client", role, sizeof(role));
	kv_get(args, "socket", "/run/memif.sock", sock, sizeof(sock));
	/* 22.11's memif returns -1 for every failure: its errno (EPERM) means nothing. */
	if (strcmp(role, "client") == 0 || strcmp(role, "slave") == 0)
		snprintf(err, len, "%s (%s): cannot start: no memif server on %s (a client "
				"connects at start): start the roced with role=server on that "
				"socket first", port->name, info->driver_name, sock);
	else
		snprintf(err, len, "%s (%s): cannot start (%s): see the PMD's lines above",
				port->name, info->driver_name, strerror(-ret));
}

/* Devices a vdev's PMD failed to probe: what it needs, by the vdev's name. */
static void
probe_failed_afp(const char *name, const char *args, char *err, size_t len)
{
	char ifname[IF_NAMESIZE + 8];
	int s;

	if (kv_get(args, "iface", "", ifname, sizeof(ifname))[0] == '\0') {
		snprintf(err, len, "%s did not start: its --vdev needs iface=IFNAME", name);
		return;
	}
	if (if_nametoindex(ifname) == 0) {
		snprintf(err, len, "%s did not start: no interface '%s' in this network "
				"namespace: create it (ip link) or fix iface= in its --vdev", name,
				ifname);
		return;
	}
	s = socket(AF_PACKET, SOCK_RAW, 0);
	if (s < 0) {
		snprintf(err, len, "%s did not start: an AF_PACKET socket needs CAP_NET_RAW (%s): "
				"run roced as root", name, strerror(errno));
		return;
	}
	close(s);
	snprintf(err, len, "%s did not start on interface '%s': see the PMD's lines above", name,
			ifname);
}

static void
probe_failed_memif(const char *name, const char *args, char *err, size_t len)
{
	char sock[108], dir[108], *slash;
	struct stat stb;

	kv_get(args, "socket", "/run/memif.sock", sock, sizeof(sock));
	snprintf(dir, sizeof(dir), "%s", sock);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir)
		*slash = '\0';
	if (slash != NULL && stat(dir, &stb) != 0)
		snprintf(err, len, "%s did not start: the directory of socket=%s does not exist: "
				"create %s or give another socket= in its --vdev", name, sock, dir);
	else
		snprintf(err, len, "%s did not start with socket=%s: see the PMD's lines above",
				name, sock);
}

static void
probe_failed_tap(const char *name, const char *args, char *err, size_t len)
{
	int fd = open("/dev/net/tun", O_RDWR);

	(void)args;
	if (fd < 0)
		snprintf(err, len, "%s did not start: cannot open /dev/net/tun (%s): tap needs "
				"root (CAP_NET_ADMIN) and the tun module", name, strerror(errno));
	else
		snprintf(err, len, "%s did not start: see the PMD's lines above", name);
	if (fd >= 0)
		close(fd);
}

static const struct {
	const char *prefix;
	void (*explain)(const char *name, const char *args, char *err, size_t len);
} probe_explainers[] = {
	{ "net_af_packet", probe_failed_afp },
	{ "eth_af_packet", probe_failed_afp },
	{ "net_memif", probe_failed_memif },
	{ "net_tap", probe_failed_tap },
};

void
roce_port_probe_failed(const char *name, const char *args, char *err, size_t len)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(probe_explainers); i++)
		if (strncmp(name, probe_explainers[i].prefix,
				strlen(probe_explainers[i].prefix)) == 0) {
			probe_explainers[i].explain(name, args, err, len);
			return;
		}
	snprintf(err, len, "%s did not start: see the EAL's and the PMD's lines above", name);
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
 * How many queue pairs: @want (0: auto) checked against the workers, the PMD and whether it
 * can spread traffic at all. @return the count, or -EINVAL with @err.
 */
static int
port_queues(const struct rte_eth_dev_info *info, const struct roce_port *port,
		uint16_t nb_workers, uint16_t want, char *err, size_t len)
{
	const struct roce_port_profile *pf = port->profile;
	uint16_t max = RTE_MIN(info->max_rx_queues, info->max_tx_queues);
	bool rss = pf->rss && (info->flow_type_rss_offloads &
		(RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV6_UDP)) != 0;

	if (pf->max_queues != 0)
		max = RTE_MIN(max, pf->max_queues);
	if (want == 0)
		return rss ? RTE_MAX(RTE_MIN(nb_workers, max), 1) : 1;
	if (want > nb_workers) {
		snprintf(err, len, "%s (%s): queues=%u: more than the %u worker(s)", port->name,
				info->driver_name, want, nb_workers);
		return -EINVAL;
	}
	if (want > max) {
		snprintf(err, len, "%s (%s): queues=%u: the PMD has %u queue pair(s) at most",
				port->name, info->driver_name, want, max);
		return -EINVAL;
	}
	if (want > 1 && !rss && !pf->pairs) {
		snprintf(err, len, "%s (%s): queues=%u: the PMD cannot spread RoCE over queues "
				"(no RSS on UDP, no queue pairs): use queues=1", port->name,
				info->driver_name, want);
		return -EINVAL;
	}
	return want;
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

/* Why a port of @prof cannot send zero-copy, or NULL. */
static const char *
tx_zc_refusal(const struct rte_eth_dev_info *info, const struct roce_port_profile *prof)
{
	char v[8];

	if (prof->zc == ZC_REFUSE)
		return "hands the mbufs themselves to its reader, which would read the MR";
	if (!(info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS))
		return "cannot send chained mbufs (no MULTI_SEGS transmit offload)";
	if (info->tx_desc_lim.nb_mtu_seg_max < ROCE_PORT_ZC_MIN_SEGS)
		return "takes fewer than 3 segments per frame";
	/* 22.11's memif zero-copy transmit takes segments of its own region only. */
	if (strcmp(kv_get(devarg_args(info), "zero-copy", "no", v, sizeof(v)), "yes") == 0)
		return "runs with zero-copy=yes, whose transmit reads only its own memory";
	return NULL;
}

/*
 * Segments a frame may take with @mode (0: payloads copied), or -ENOTSUP with the reason in
 * @err for tx_copy never where the PMD cannot.
 */
static int
tx_zc_segs(const struct rte_eth_dev_info *info, const struct roce_port_profile *prof,
		enum roce_port_tx_copy mode, const char *name, char *err, size_t len)
{
	const char *why;

	if (mode == ROCE_PORT_TX_COPY_ALWAYS || (mode == ROCE_PORT_TX_COPY_AUTO &&
			prof->zc != ZC_ON))
		return 0;
	why = tx_zc_refusal(info, prof);
	if (why == NULL)
		return info->tx_desc_lim.nb_mtu_seg_max;
	if (mode == ROCE_PORT_TX_COPY_AUTO)
		return 0;
	snprintf(err, len, "%s (%s): tx_copy=never, but the PMD %s: set tx_copy=auto or always",
			name, info->driver_name, why);
	return -ENOTSUP;
}

int
roce_port_tx_zc_wanted(uint16_t port_id, enum roce_port_tx_copy tx_copy)
{
	struct rte_eth_dev_info info;

	if (rte_eth_dev_info_get(port_id, &info) != 0)
		return 0;
	return tx_zc_segs(&info, roce_port_profile_find(info.driver_name), tx_copy, "", NULL,
			0) != 0;
}

int
roce_port_setup(uint16_t port_id, uint16_t nb_workers, uint16_t nb_queues, uint16_t mtu,
		enum roce_port_tx_copy tx_copy, struct rte_mempool *const *mps,
		struct roce_port *port, char *err, size_t err_len)
{
	struct rte_eth_conf conf = {0};
	struct rte_eth_dev_info info;
	uint16_t q, nq;
	int ret;

	if (!rte_eth_dev_is_valid_port(port_id))
		return -ENODEV;
	ret = rte_eth_dev_info_get(port_id, &info);
	if (ret != 0)
		return ret;
	memset(port, 0, sizeof(*port));
	port->port_id = port_id;
	port->mp0 = mps[0];
	rte_eth_dev_get_name_by_port(port_id, port->name);
	port->profile = roce_port_profile_find(info.driver_name);
	warn_untested(port, info.driver_name);
	ret = port_queues(&info, port, nb_workers, nb_queues, err, err_len);
	if (ret < 0)
		return ret;
	nq = (uint16_t)ret;
	if (nq > 1 && port->profile->rss)
		conf_rss(&info, &conf);
	port->rss = conf.rxmode.mq_mode == RTE_ETH_MQ_RX_RSS;
	/* Zero-copy frames are chains: the PMD must take them. */
	ret = tx_zc_segs(&info, port->profile, tx_copy, port->name, err, err_len);
	if (ret < 0)
		return ret;
	port->tx_max_segs = (uint16_t)ret;
	if (ret != 0)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
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
	/* Before the queues: af_packet's receive queues fail on frames their mbufs cannot hold. */
	if (mtu != 0) {
		ret = mtu_ops[port->profile->mtu](port_id, &info, mtu, port, err, err_len);
		if (ret != 0)
			return ret;
		port->mtu = mtu;
	} else {
		rte_eth_dev_get_mtu(port_id, &port->mtu);
	}
	for (q = 0; q < nq; q++) {
		int socket = rte_eth_dev_socket_id(port_id);

		ret = rte_eth_rx_queue_setup(port_id, q, NB_RXD, socket, NULL, mps[q]);
		if (ret == 0)
			ret = rte_eth_tx_queue_setup(port_id, q, NB_TXD, socket, NULL);
		if (ret != 0)
			return ret;
	}
	ret = rte_eth_dev_start(port_id);
	if (ret != 0) {
		if (strstr(info.driver_name, "memif") != NULL)
			start_failed_memif(port, &info, ret, err, err_len);
		else
			snprintf(err, err_len, "%s (%s): cannot start: %s", port->name,
					info.driver_name, strerror(-ret));
		return ret;
	}
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
	port->nb_queues = nq;
	return 0;
}

void
roce_port_close(struct roce_port *port)
{
	rte_eth_dev_stop(port->port_id);
	if (!port->profile->no_close)
		rte_eth_dev_close(port->port_id);
}
