/* SPDX-License-Identifier: BSD-3-Clause */
/* Instance, configuration, input dispatch, tx ring, counters. */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "net_private.h"

RTE_LOG_REGISTER(roce_net_logtype, roce.net, INFO);

static const struct roce_counter_desc counter_desc[ROCE_NET_C_NUM] = {
	ROCE_NET_COUNTERS(ROCE_COUNTER_DESC)
};

const struct roce_counter_family roce_net_counter_family = {
	.name = "net",
	.about = "per roce_net instance (one per port a worker reads), summed over them",
	.desc = counter_desc,
	.nb = ROCE_NET_C_NUM,
};

static const char *const state_name[] = {
	[ROCE_NET_NEIGH_NONE] = "NONE",
	[ROCE_NET_NEIGH_INCOMPLETE] = "INCOMPLETE",
	[ROCE_NET_NEIGH_REACHABLE] = "REACHABLE",
	[ROCE_NET_NEIGH_STALE] = "STALE",
	[ROCE_NET_NEIGH_PROBE] = "PROBE",
	[ROCE_NET_NEIGH_FAILED] = "FAILED",
	[ROCE_NET_NEIGH_PERMANENT] = "PERMANENT",
};

static const net_input_fn input_fn[ROCE_PKT_TYPE_NUM] = {
	[ROCE_PKT_ARP] = net_arp_input,
	[ROCE_PKT_ICMP] = net_icmp_input,
	[ROCE_PKT_ICMP6] = net_icmp6_input,
};

#define SEC 1000000000ull

static void
conf_defaults(struct roce_net_conf *c)
{
	if (c->mtu == 0)
		c->mtu = 1500;
	if (c->neigh_max == 0)
		c->neigh_max = 256;
	if (c->tx_ring_size == 0)
		c->tx_ring_size = 1024;
	if (c->reachable_ns == 0)
		c->reachable_ns = 30 * SEC;
	if (c->retrans_ns == 0)
		c->retrans_ns = SEC;
	if (c->failed_ns == 0)
		c->failed_ns = 5 * SEC;
	if (c->gc_stale_ns == 0)
		c->gc_stale_ns = 60 * SEC;
	if (c->max_probes == 0)
		c->max_probes = 3;
}

static rte_be32_t
prefix_mask(uint8_t len)
{
	return rte_cpu_to_be_32(len == 0 ? 0 : ~0u << (32 - len));
}

static int
conf_check_ip4(const struct roce_net_conf *c)
{
	if (c->ip4 == 0)
		return c->gw4 == 0 ? 0 : -EINVAL;
	if (c->ip4_prefix_len > 32)
		return -EINVAL;
	if (c->gw4 != 0 && (((c->gw4 ^ c->ip4) & prefix_mask(c->ip4_prefix_len)) != 0 ||
			c->gw4 == c->ip4))
		return -EINVAL;
	return 0;
}

static int
conf_check_ip6(const struct roce_net_conf *c)
{
	bool has_ip6 = !net_ip6_unspec(c->ip6), has_gw6 = !net_ip6_unspec(c->gw6);

	if (has_ip6 && (!net_ip6_unicast(c->ip6) || net_ip6_linklocal(c->ip6) ||
			c->ip6_prefix_len > 128))
		return -EINVAL;
	if (has_gw6 && (!net_ip6_unicast(c->gw6) || (has_ip6 && memcmp(c->gw6, c->ip6, 16) == 0)))
		return -EINVAL;
	/* A global gateway must be on our prefix to be reachable. */
	if (has_gw6 && !net_ip6_linklocal(c->gw6) &&
			(!has_ip6 || !net_ip6_prefix_eq(c->gw6, c->ip6, c->ip6_prefix_len)))
		return -EINVAL;
	return 0;
}

static int
conf_check(const struct roce_net_conf *c)
{
	if (c == NULL || !rte_is_valid_assigned_ether_addr(&c->mac) || c->mp == NULL ||
			c->neigh_max > 65536)
		return -EINVAL;
	if (c->vlan && ((c->vlan_tci & 0xfff) == 0 || (c->vlan_tci & 0xfff) == 0xfff))
		return -EINVAL;
	if (rte_pktmbuf_data_room_size(c->mp) < RTE_PKTMBUF_HEADROOM + NET_MBUF_MIN)
		return -EINVAL;
	if (conf_check_ip4(c) != 0 || conf_check_ip6(c) != 0)
		return -EINVAL;
	return 0;
}

struct roce_net *
roce_net_create(const struct roce_net_conf *conf)
{
	struct roce_net *n;
	int ret = conf_check(conf);

	if (ret != 0) {
		rte_errno = -ret;
		return NULL;
	}
	n = rte_zmalloc_socket("roce_net", sizeof(*n), RTE_CACHE_LINE_SIZE, conf->socket_id);
	if (n == NULL)
		goto nomem;
	n->conf = *conf;
	conf_defaults(&n->conf);
	n->mask4 = prefix_mask(n->conf.ip4_prefix_len);
	n->has_ip6 = !net_ip6_unspec(n->conf.ip6);
	n->has_gw6 = !net_ip6_unspec(n->conf.gw6);
	roce_net_ll_addr(&n->conf.mac, n->ll6);
	n->tx_mask = rte_align32pow2(n->conf.tx_ring_size) - 1;
	n->tx = rte_zmalloc_socket("roce_net_tx", (n->tx_mask + 1) * sizeof(n->tx[0]), 0,
			conf->socket_id);
	if (n->tx == NULL || net_neigh_init(n) != 0)
		goto nomem;
	n->next_due = UINT64_MAX;
	return n;
nomem:
	roce_net_free(n);
	rte_errno = ENOMEM;
	return NULL;
}

void
roce_net_free(struct roce_net *n)
{
	if (n == NULL)
		return;
	net_neigh_fini(n);
	if (n->tx != NULL)
		while (n->tx_tail != n->tx_head)
			rte_pktmbuf_free(n->tx[n->tx_tail++ & n->tx_mask]);
	rte_free(n->tx);
	rte_free(n);
}

void
net_tx_push(struct roce_net *n, struct rte_mbuf *m)
{
	if (n->tx_head - n->tx_tail > n->tx_mask) {
		n->c[ROCE_NET_C_TX_FULL]++;
		rte_pktmbuf_free(m);
		return;
	}
	n->tx[n->tx_head++ & n->tx_mask] = m;
}

uint16_t
roce_net_tx(struct roce_net *n, struct rte_mbuf **out, uint16_t max)
{
	uint16_t k = 0;

	while (k < max && n->tx_tail != n->tx_head)
		out[k++] = n->tx[n->tx_tail++ & n->tx_mask];
	return k;
}

/* Untagged frames when no VLAN is configured (priority tags, VID 0, too); else our VID. */
static bool
vlan_ok(const struct roce_net *n, const uint8_t *p, const struct roce_pkt_meta *meta)
{
	uint16_t vid;

	if (!(meta->flags & ROCE_PKT_F_VLAN))
		return !n->conf.vlan;
	vid = (uint16_t)((p[14] << 8 | p[15]) & 0xfff);
	return vid == (n->conf.vlan ? (n->conf.vlan_tci & 0xfff) : 0);
}

static int
input_one(struct roce_net *n, struct rte_mbuf **mp, uint64_t now)
{
	const struct roce_pkt_meta *meta = roce_pkt_meta(*mp);
	const struct rte_ether_hdr *eth;
	net_input_fn fn;

	fn = meta->type < RTE_DIM(input_fn) ? input_fn[meta->type] : NULL;
	/* The classifier put the L2 header of these types in the first segment. */
	if (fn == NULL || (*mp)->data_len < meta->l3_off || meta->l3_off < RTE_ETHER_HDR_LEN)
		return ROCE_NET_C_NOT_NET;
	eth = rte_pktmbuf_mtod(*mp, const struct rte_ether_hdr *);
	if (!vlan_ok(n, (const uint8_t *)eth, meta))
		return ROCE_NET_C_VLAN;
	/* Never answer to a group, nor to ourselves (a looped frame). */
	if (!rte_is_valid_assigned_ether_addr(&eth->src_addr) ||
			rte_is_same_ether_addr(&eth->src_addr, &n->conf.mac))
		return ROCE_NET_C_L2_SRC;
	return fn(n, mp, meta, now);
}

uint16_t
roce_net_input(struct roce_net *n, struct rte_mbuf **pkts, uint16_t nb_pkts, uint64_t now,
		struct rte_mbuf **out, uint16_t out_max)
{
	uint16_t i;

	for (i = 0; i < nb_pkts; i++) {
		struct rte_mbuf *m = pkts[i];
		int c = input_one(n, &m, now);

		n->c[c]++;
		if (c <= ROCE_NET_C_LAST_REPLY)
			net_tx_push(n, m);
		else
			rte_pktmbuf_free(m);
	}
	return roce_net_tx(n, out, out_max);
}

void
roce_net_poll(struct roce_net *n, uint64_t now)
{
	if (now >= n->next_due)
		net_neigh_timers(n, now);
}

uint64_t
roce_net_next_timer(const struct roce_net *n)
{
	return n->next_due;
}

uint32_t
net_l2_hdr(const struct roce_net *n, uint8_t *p, const struct rte_ether_addr *dst,
		uint16_t ether_type)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
	struct rte_vlan_hdr *vh;

	rte_ether_addr_copy(dst, &eth->dst_addr);
	rte_ether_addr_copy(&n->conf.mac, &eth->src_addr);
	if (!n->conf.vlan) {
		eth->ether_type = rte_cpu_to_be_16(ether_type);
		return RTE_ETHER_HDR_LEN;
	}
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
	vh = (struct rte_vlan_hdr *)(eth + 1);
	vh->vlan_tci = rte_cpu_to_be_16(n->conf.vlan_tci);
	vh->eth_proto = rte_cpu_to_be_16(ether_type);
	return RTE_ETHER_HDR_LEN + sizeof(*vh);
}

void
net_mbuf_trim(struct rte_mbuf *m, uint32_t len)
{
	struct rte_mbuf *seg = m;
	uint32_t left = len, pad;
	uint16_t segs = 1;

	while (left > seg->data_len) {
		left -= seg->data_len;
		seg = seg->next;
		segs++;
	}
	seg->data_len = (uint16_t)left;
	rte_pktmbuf_free(seg->next);
	seg->next = NULL;
	m->nb_segs = segs;
	m->pkt_len = len;
	/* Pad as Linux does: a PMD that does not would send a runt. */
	pad = len < NET_ETH_MIN ? NET_ETH_MIN - len : 0;
	if (pad != 0 && rte_pktmbuf_tailroom(seg) >= pad) {
		memset(rte_pktmbuf_mtod_offset(seg, uint8_t *, seg->data_len), 0, pad);
		seg->data_len += pad;
		m->pkt_len += pad;
	}
}

uint16_t
net_cksum_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	const struct rte_mbuf *seg = m;
	uint32_t sum = 0, done = 0;

	while (seg != NULL && off >= seg->data_len) {
		off -= seg->data_len;
		seg = seg->next;
	}
	for (; seg != NULL && done < len; seg = seg->next, off = 0) {
		uint32_t k = RTE_MIN((uint32_t)seg->data_len - off, len - done);
		uint16_t s = __rte_raw_cksum_reduce(__rte_raw_cksum(
				rte_pktmbuf_mtod_offset(seg, const void *, off), k, 0));

		/* A chunk starting at an odd byte pairs its bytes the other way round. */
		sum += done & 1 ? rte_bswap16(s) : s;
		done += k;
	}
	return __rte_raw_cksum_reduce(sum);
}

/* 1 when the first segment's data is ours alone. */
static bool
mbuf_writable(const struct rte_mbuf *m)
{
	if (rte_mbuf_refcnt_read(m) != 1 || RTE_MBUF_CLONED(m))
		return false;
	return !RTE_MBUF_HAS_EXTBUF(m) || rte_mbuf_ext_refcnt_read(m->shinfo) == 1;
}

struct rte_mbuf *
net_mbuf_own(struct roce_net *n, struct rte_mbuf *m)
{
	if (!mbuf_writable(m)) {
		/* A clone (port mirroring, a capture tap): answer from a private copy. */
		struct rte_mbuf *c = rte_pktmbuf_copy(m, n->conf.mp, 0, UINT32_MAX);

		if (c == NULL)
			return NULL;
		rte_pktmbuf_free(m);
		m = c;
	}
	/* Receive offload flags mean nothing on transmit; keep how the buffer is held. */
	m->ol_flags &= RTE_MBUF_F_EXTERNAL | RTE_MBUF_F_INDIRECT;
	return m;
}

bool
net_ip4_unicast(const struct roce_net *n, rte_be32_t a)
{
	uint32_t h = rte_be_to_cpu_32(a);

	/* 0/8 "this network", 127/8 loopback, 224/4 multicast, 240/4 reserved and broadcast. */
	if ((h >> 24) == 0 || (h >> 24) == 127 || (h >> 28) >= 0xe)
		return false;
	/* Our subnet's directed broadcast (a /31 or /32 has none). */
	if (n->conf.ip4 != 0 && n->conf.ip4_prefix_len < 31 &&
			((a ^ n->conf.ip4) & n->mask4) == 0 && (a | n->mask4) == UINT32_MAX)
		return false;
	return true;
}

const uint8_t *
net_ip6_ours(const struct roce_net *n, const uint8_t *ip)
{
	if (memcmp(ip, n->ll6, 16) == 0)
		return n->ll6;
	if (n->has_ip6 && memcmp(ip, n->conf.ip6, 16) == 0)
		return n->conf.ip6;
	return NULL;
}

const uint8_t *
net_ip6_src(const struct roce_net *n, const uint8_t *dst)
{
	return n->has_ip6 && !net_ip6_linklocal(dst) ? n->conf.ip6 : n->ll6;
}

void
roce_net_ll_addr(const struct rte_ether_addr *mac, uint8_t *ip6)
{
	const uint8_t *b = mac->addr_bytes;

	memset(ip6, 0, 16);
	ip6[0] = 0xfe;
	ip6[1] = 0x80;
	ip6[8] = b[0] ^ 0x02;
	ip6[9] = b[1];
	ip6[10] = b[2];
	ip6[11] = 0xff;
	ip6[12] = 0xfe;
	ip6[13] = b[3];
	ip6[14] = b[4];
	ip6[15] = b[5];
}

uint16_t
roce_net_mc_addrs(const struct roce_net *n, struct rte_ether_addr *macs, uint16_t max)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };
	struct rte_ether_addr list[3];
	uint8_t snm[16];
	uint16_t k = 0, i;

	net_mac_mcast6(all_nodes, &list[k++]);
	net_ip6_snm(n->ll6, snm);
	net_mac_mcast6(snm, &list[k++]);
	if (n->has_ip6 && memcmp(n->conf.ip6 + 13, n->ll6 + 13, 3) != 0) {
		net_ip6_snm(n->conf.ip6, snm);
		net_mac_mcast6(snm, &list[k++]);
	}
	for (i = 0; i < k && i < max; i++)
		macs[i] = list[i];
	return k;
}

void
roce_net_counters(const struct roce_net *n, uint64_t *out)
{
	memcpy(out, n->c, sizeof(n->c));
}

const char *
roce_net_neigh_state_name(enum roce_net_neigh_state s)
{
	return (unsigned int)s < RTE_DIM(state_name) ? state_name[s] : NULL;
}
