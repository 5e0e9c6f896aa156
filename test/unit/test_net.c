/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Net tests: ARP, ICMP and ICMPv6 echo, neighbour discovery and resolution. Every frame is
 * made here byte by byte, goes through the real classifier, and every reply is checked field
 * by field, its checksums recomputed here. The malformed matrix feeds truncations, bad
 * lengths, bad checksums and every single-bit flip of valid frames; each frame must end in
 * exactly one input counter and no mbuf may leak.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "roce_net.h"
#include "roce_test.h"
#include "roce_wire.h"

#define SEC 1000000000ull
#define MS 1000000ull
#define T0 (100 * SEC)
#define FRAME_MAX 2048
#define OUT_MAX 64

static struct rte_mempool *pool;
static struct roce_wire_stats wstats;

static const struct rte_ether_addr our_mac = {{ 0x02, 0, 0, 0, 0, 0x01 }};
static const struct rte_ether_addr peer_mac = {{ 0x02, 0, 0, 0, 0, 0x02 }};
static const struct rte_ether_addr peer2_mac = {{ 0x02, 0, 0, 0, 0, 0x03 }};
static const struct rte_ether_addr gw_mac = {{ 0x02, 0, 0, 0, 0, 0xfe }};
static const struct rte_ether_addr bcast_mac = {{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }};
static const struct rte_ether_addr zero_mac;

static const uint8_t our_ip[4] = { 10, 0, 0, 1 };
static const uint8_t peer_ip[4] = { 10, 0, 0, 2 };
static const uint8_t other_ip[4] = { 10, 0, 0, 3 };
static const uint8_t gw_ip[4] = { 10, 0, 0, 254 };
static const uint8_t far_ip[4] = { 192, 168, 7, 5 };
static const uint8_t our_ip6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t peer_ip6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
static const uint8_t far_ip6[16] = { 0x20, 0x01, 0x0d, 0xb9, [15] = 9 };
static const uint8_t peer_ll[16] = { 0xfe, 0x80, [8] = 0x00, [15] = 2 };
static const uint8_t gw_ll[16] = { 0xfe, 0x80, [15] = 0xfe };
static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
static const uint8_t unspec[16];
/* fe80::ff:fe00:1: modified EUI-64 of 02:00:00:00:00:01 (the U/L bit flips 02 to 00). */
static const uint8_t our_ll[16] = { 0xfe, 0x80, [11] = 0xff, [12] = 0xfe, [15] = 0x01 };

/* ---- frame writer and checksums, independent of the library ---- */

struct fb {
	uint8_t b[FRAME_MAX];
	uint32_t len;
};

static void
put(struct fb *f, const void *p, uint32_t n)
{
	memcpy(f->b + f->len, p, n);
	f->len += n;
}

static void
put8(struct fb *f, uint8_t v)
{
	f->b[f->len++] = v;
}

static void
put16(struct fb *f, uint16_t v)
{
	put8(f, v >> 8);
	put8(f, v & 0xff);
}

static void
put32(struct fb *f, uint32_t v)
{
	put16(f, v >> 16);
	put16(f, v & 0xffff);
}

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)rd16(p) << 16 | rd16(p + 2);
}

static uint32_t
sum16(const uint8_t *p, uint32_t len, uint32_t s)
{
	uint32_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += rd16(p + i);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	return s;
}

static uint16_t
fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* ICMPv6 checksum over the pseudo-header of @src/@dst and @len bytes of @msg. */
static uint16_t
icmp6_csum(const uint8_t *src, const uint8_t *dst, const uint8_t *msg, uint32_t len)
{
	uint32_t s = sum16(src, 16, 0);

	s = sum16(dst, 16, s);
	s += len >> 16;
	s += len & 0xffff;
	s += 58;
	return (uint16_t)~fold(sum16(msg, len, s));
}

static void
eth_hdr(struct fb *f, const struct rte_ether_addr *dst, const struct rte_ether_addr *src,
		int vlan, uint16_t type)
{
	f->len = 0;
	put(f, dst, 6);
	put(f, src, 6);
	if (vlan >= 0) {
		put16(f, 0x8100);
		put16(f, (uint16_t)(0x6000 | vlan));
	}
	put16(f, type);
}

static void
pad60(struct fb *f)
{
	while (f->len < 60)
		put8(f, 0);
}

static void
mk_arp(struct fb *f, int vlan, const struct rte_ether_addr *eth_dst,
		const struct rte_ether_addr *sha, uint16_t op, const uint8_t *sip,
		const struct rte_ether_addr *tha, const uint8_t *tip)
{
	eth_hdr(f, eth_dst, sha, vlan, 0x0806);
	put16(f, 1);
	put16(f, 0x0800);
	put8(f, 6);
	put8(f, 4);
	put16(f, op);
	put(f, sha, 6);
	put(f, sip, 4);
	put(f, tha, 6);
	put(f, tip, 4);
	pad60(f);
}

/* IPv4 header of @opt_words 4-byte NOP options, then @l4 (@l4_len bytes). */
static void
mk_ip4(struct fb *f, int vlan, const struct rte_ether_addr *eth_dst,
		const struct rte_ether_addr *eth_src, const uint8_t *src, const uint8_t *dst,
		uint8_t proto, const uint8_t *l4, uint32_t l4_len, unsigned int opt_words)
{
	uint32_t l3, ihl = 20 + 4 * opt_words, i;
	uint16_t ck;

	eth_hdr(f, eth_dst, eth_src, vlan, 0x0800);
	l3 = f->len;
	put8(f, (uint8_t)(0x40 | ihl / 4));
	put8(f, 0);
	put16(f, (uint16_t)(ihl + l4_len));
	put16(f, 0x1234);
	put16(f, 0x4000);       /* DF */
	put8(f, 61);
	put8(f, proto);
	put16(f, 0);
	put(f, src, 4);
	put(f, dst, 4);
	for (i = 0; i < opt_words * 4; i++)
		put8(f, 1);
	ck = (uint16_t)~fold(sum16(f->b + l3, ihl, 0));
	f->b[l3 + 10] = ck >> 8;
	f->b[l3 + 11] = ck & 0xff;
	put(f, l4, l4_len);
	pad60(f);
}

static uint32_t
mk_echo_msg(uint8_t *msg, uint8_t type, uint16_t id, uint16_t seq, uint32_t dlen, int v6)
{
	uint32_t i;

	msg[0] = type;
	msg[1] = 0;
	msg[2] = msg[3] = 0;
	msg[4] = id >> 8;
	msg[5] = id & 0xff;
	msg[6] = seq >> 8;
	msg[7] = seq & 0xff;
	for (i = 0; i < dlen; i++)
		msg[8 + i] = (uint8_t)(i * 13 + 7);
	if (!v6) {
		uint16_t ck = (uint16_t)~fold(sum16(msg, 8 + dlen, 0));

		msg[2] = ck >> 8;
		msg[3] = ck & 0xff;
	}
	return 8 + dlen;
}

static void
mk_icmp_echo(struct fb *f, const uint8_t *src, const uint8_t *dst, uint16_t id, uint16_t seq,
		uint32_t dlen, unsigned int opt_words)
{
	uint8_t msg[FRAME_MAX];
	uint32_t len = mk_echo_msg(msg, 8, id, seq, dlen, 0);

	mk_ip4(f, -1, &our_mac, &peer_mac, src, dst, 1, msg, len, opt_words);
}

/* IPv6 with an ICMPv6 message whose checksum is set here (unless @bad_csum). */
static void
mk_ip6(struct fb *f, int vlan, const struct rte_ether_addr *eth_dst,
		const struct rte_ether_addr *eth_src, const uint8_t *src, const uint8_t *dst,
		uint8_t hop, uint8_t *msg, uint32_t len)
{
	uint16_t ck;

	msg[2] = msg[3] = 0;
	ck = icmp6_csum(src, dst, msg, len);
	msg[2] = ck >> 8;
	msg[3] = ck & 0xff;
	eth_hdr(f, eth_dst, eth_src, vlan, 0x86DD);
	put32(f, 0x60000000);
	put16(f, (uint16_t)len);
	put8(f, 58);
	put8(f, hop);
	put(f, src, 16);
	put(f, dst, 16);
	put(f, msg, len);
}

/* NS or NA message with an optional link-layer address option (@opt 1 or 2, 0: none). */
static uint32_t
mk_nd_msg(uint8_t *msg, uint8_t type, uint32_t flags, const uint8_t *target, uint8_t opt,
		const struct rte_ether_addr *mac)
{
	memset(msg, 0, 32);
	msg[0] = type;
	msg[4] = flags >> 24;
	memcpy(msg + 8, target, 16);
	if (opt == 0)
		return 24;
	msg[24] = opt;
	msg[25] = 1;
	memcpy(msg + 26, mac, 6);
	return 32;
}

static void
snm_of(const uint8_t *target, uint8_t *g)
{
	static const uint8_t pfx[13] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };

	memcpy(g, pfx, 13);
	memcpy(g + 13, target + 13, 3);
}

static void
mcast_mac(const uint8_t *group, struct rte_ether_addr *mac)
{
	mac->addr_bytes[0] = mac->addr_bytes[1] = 0x33;
	memcpy(&mac->addr_bytes[2], group + 12, 4);
}

/* NS from @src (@sll option when not NULL) for @target, to its solicited-node group. */
static void
mk_ns(struct fb *f, const uint8_t *src, const uint8_t *target,
		const struct rte_ether_addr *sll, uint8_t hop)
{
	uint8_t msg[64], g[16];
	struct rte_ether_addr gm;
	uint32_t len = mk_nd_msg(msg, 135, 0, target, sll ? 1 : 0, sll);

	snm_of(target, g);
	mcast_mac(g, &gm);
	mk_ip6(f, -1, &gm, &peer_mac, src, g, hop, msg, len);
}

static void
mk_na(struct fb *f, const struct rte_ether_addr *eth_src, const uint8_t *src,
		const uint8_t *target, uint32_t flags, const struct rte_ether_addr *tll)
{
	uint8_t msg[64];
	uint32_t len = mk_nd_msg(msg, 136, flags, target, tll ? 2 : 0, tll);

	mk_ip6(f, -1, &our_mac, eth_src, src, our_ll, 255, msg, len);
}

static void
mk_echo6(struct fb *f, const struct rte_ether_addr *eth_dst, const uint8_t *src,
		const uint8_t *dst, uint32_t dlen)
{
	uint8_t msg[FRAME_MAX];
	uint32_t len = mk_echo_msg(msg, 128, 0x77, 3, dlen, 1);

	mk_ip6(f, -1, eth_dst, &peer_mac, src, dst, 64, msg, len);
}

/* ---- driving an instance ---- */

static struct roce_net_conf
base_conf(void)
{
	struct roce_net_conf c = {
		.mac = our_mac,
		.ip4_prefix_len = 24,
		.ip6_prefix_len = 64,
		.mp = pool,
		.socket_id = SOCKET_ID_ANY,
	};

	memcpy(&c.ip4, our_ip, 4);
	memcpy(&c.gw4, gw_ip, 4);
	memcpy(c.ip6, our_ip6, 16);
	return c;
}

static struct roce_net *
mk_net(const struct roce_net_conf *c)
{
	struct roce_net *n = roce_net_create(c);

	RT_CHECK(n != NULL, "create: %s", rte_strerror(rte_errno));
	if (n == NULL)
		exit(1);
	return n;
}

static uint64_t
cnt(const struct roce_net *n, enum roce_net_counter c)
{
	uint64_t v[ROCE_NET_C_NUM];

	roce_net_counters(n, v);
	return v[c];
}

/* Frames received so far, as the input counters add up. */
static uint64_t
input_sum(const struct roce_net *n)
{
	uint64_t v[ROCE_NET_C_NUM], s = 0;
	int i;

	roce_net_counters(n, v);
	for (i = 0; i <= ROCE_NET_C_LAST_INPUT; i++)
		s += v[i];
	return s;
}

/* Classify the frame in @f (segments of @seg bytes, 0: one) and give it to @n. */
static uint16_t
inject_seg(struct roce_net *n, const struct fb *f, uint32_t seg, uint64_t now,
		struct rte_mbuf **out)
{
	struct rte_mbuf *m = rt_mbuf(pool, f->b, f->len, seg);

	if (m == NULL) {
		RT_CHECK(0, "no mbuf for %u bytes", f->len);
		return 0;
	}
	roce_classify_burst(&m, 1, 0, &wstats);
	return roce_net_input(n, &m, 1, now, out, OUT_MAX);
}

static uint16_t
inject(struct roce_net *n, const struct fb *f, uint64_t now, struct rte_mbuf **out)
{
	return inject_seg(n, f, 0, now, out);
}

static void
free_all(struct rte_mbuf **m, uint16_t k)
{
	uint16_t i;

	for (i = 0; i < k; i++)
		rte_pktmbuf_free(m[i]);
}

/* Inject, expect no reply, and that @c counted it. */
static void
expect_drop(struct roce_net *n, const struct fb *f, enum roce_net_counter c, const char *what)
{
	struct rte_mbuf *out[OUT_MAX];
	uint64_t before = cnt(n, c), sum = input_sum(n);
	uint16_t k = inject(n, f, T0, out);

	RT_CHECK(k == 0 && cnt(n, c) == before + 1 && input_sum(n) == sum + 1,
			"%s: %u replies, %s %lu -> %lu", what, k,
			roce_counter_name(&roce_net_counter_family, c),
			(unsigned long)before, (unsigned long)cnt(n, c));
	free_all(out, k);
}

static void
check_no_leak(const char *what)
{
	RT_CHECK(rte_mempool_in_use_count(pool) == 0, "%s: %u mbufs in use", what,
			rte_mempool_in_use_count(pool));
}

static uint32_t
copy_frame(const struct rte_mbuf *m, uint8_t *b)
{
	return rt_mbuf_copy(m, b, FRAME_MAX);
}

/* A RoCE SEND ONLY to @dst built by the wire builders, destination MAC zero. */
static struct rte_mbuf *
roce_frame(int v6, const uint8_t *dst, uint32_t psn)
{
	struct roce_path path = { .src_mac = our_mac, .ipv6 = (uint8_t)v6, .udp_sport = 0xC001 };
	struct roce_pkt_desc d = { .opcode = ROCE_OP_SEND_ONLY, .dest_qpn = 0x12, .psn = psn };
	static const uint8_t payload[16] = { 1, 2, 3 };
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	memcpy(path.src_ip, v6 ? our_ip6 : our_ip, v6 ? 16 : 4);
	memcpy(path.dst_ip, dst, v6 ? 16 : 4);
	if (m == NULL || roce_path_init(&path) != 0 ||
			roce_build_pkt(m, &path, &d, payload, sizeof(payload)) != 0) {
		RT_CHECK(0, "cannot build a RoCE frame");
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

static bool
mac_is(const uint8_t *p, const struct rte_ether_addr *mac)
{
	return memcmp(p, mac, 6) == 0;
}

/* ---- configuration ---- */

static void
test_create(void)
{
	struct roce_net_conf c = base_conf();
	struct rte_ether_addr mc[4], ll_mac = {{ 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 }};
	static const uint8_t ll_want[16] = { 0xfe, 0x80, [8] = 0x50, 0x54, 0x00, 0xff, 0xfe,
		0x12, 0x34, 0x56 };
	uint8_t ll[16];
	struct roce_net *n;
	unsigned int i;

	/* 2001:db8::1 and fe80::ff:fe00:1 share their solicited-node group. */
	n = mk_net(&c);
	RT_CHECK(roce_net_mc_addrs(n, mc, 4) == 2, "two groups");
	RT_CHECK(mc[0].addr_bytes[0] == 0x33 && mc[0].addr_bytes[5] == 1 &&
			mc[1].addr_bytes[2] == 0xff && mc[1].addr_bytes[5] == 0x01, "group MACs");
	roce_net_free(n);
	c.ip6[15] = 0x42;
	n = mk_net(&c);
	RT_CHECK(roce_net_mc_addrs(n, mc, 2) == 3 && mc[1].addr_bytes[5] == 0x01,
			"three groups, two stored");
	RT_CHECK(roce_net_mc_addrs(n, mc, 4) == 3 && mc[2].addr_bytes[2] == 0xff &&
			mc[2].addr_bytes[5] == 0x42, "global group");
	roce_net_free(n);
	roce_net_ll_addr(&ll_mac, ll);
	RT_CHECK(memcmp(ll, ll_want, 16) == 0, "EUI-64 link-local");

	/* Each of these configurations is refused. */
	for (i = 0; i < 11; i++) {
		c = base_conf();
		switch (i) {
		case 0: c.mac.addr_bytes[0] = 0x01; break;          /* multicast MAC */
		case 1: memset(&c.mac, 0, 6); break;
		case 2: c.ip4_prefix_len = 33; break;
		case 3: c.gw4 = rte_cpu_to_be_32(0x0a000105); c.ip4_prefix_len = 30; break;
		case 4: c.gw4 = c.ip4; break;
		case 5: c.mp = NULL; break;
		case 6: c.vlan = 1; c.vlan_tci = 0; break;
		case 7: c.ip6[0] = 0xff; break;
		case 8: memcpy(c.ip6, our_ll, 16); break;
		case 9: c.ip6_prefix_len = 129; break;
		case 10: memcpy(c.gw6, far_ip6, 16); break;          /* off our prefix */
		}
		n = roce_net_create(&c);
		RT_CHECK(n == NULL && rte_errno == EINVAL, "conf %u accepted", i);
		roce_net_free(n);
	}
	RT_CHECK(roce_net_create(NULL) == NULL && rte_errno == EINVAL, "NULL conf");

	/* Create and free give all memory back. */
	{
		struct rte_malloc_socket_stats st0, st1;

		c = base_conf();
		rte_malloc_get_socket_stats(0, &st0);
		for (i = 0; i < 100; i++)
			roce_net_free(mk_net(&c));
		rte_malloc_get_socket_stats(0, &st1);
		RT_CHECK(st0.heap_allocsz_bytes == st1.heap_allocsz_bytes, "heap %zu -> %zu",
				st0.heap_allocsz_bytes, st1.heap_allocsz_bytes);
	}
	for (i = 0; i < ROCE_NET_C_NUM; i++)
		RT_CHECK(roce_counter_name(&roce_net_counter_family, i) != NULL &&
				roce_counter_description(&roce_net_counter_family, i) != NULL,
				"counter %u named", i);
	RT_CHECK(roce_counter_name(&roce_net_counter_family, ROCE_NET_C_NUM) == NULL,
			"out of range name");
	RT_CHECK(strcmp(roce_net_neigh_state_name(ROCE_NET_NEIGH_REACHABLE), "REACHABLE") == 0,
			"state name");
	check_no_leak("create");
}

/* ---- ARP ---- */

/* The reply @b (@len bytes) to @sha/@sip, field by field. */
static void
check_arp_reply(const uint8_t *b, uint32_t len, int vlan, const struct rte_ether_addr *sha,
		const uint8_t *sip)
{
	uint32_t l3 = vlan >= 0 ? 18 : 14, i;

	RT_CHECK(len == 60, "ARP reply %u bytes", len);
	RT_CHECK(mac_is(b, sha) && mac_is(b + 6, &our_mac), "ARP reply MACs");
	if (vlan >= 0)
		RT_CHECK(rd16(b + 12) == 0x8100 && (rd16(b + 14) & 0xfff) == vlan, "VLAN tag");
	RT_CHECK(rd16(b + l3 - 2) == 0x0806, "ethertype %04x", rd16(b + l3 - 2));
	RT_CHECK(rd16(b + l3) == 1 && rd16(b + l3 + 2) == 0x0800 && b[l3 + 4] == 6 &&
			b[l3 + 5] == 4, "ARP format");
	RT_CHECK(rd16(b + l3 + 6) == 2, "op %u", rd16(b + l3 + 6));
	RT_CHECK(mac_is(b + l3 + 8, &our_mac), "sha");
	RT_CHECK(memcmp(b + l3 + 14, our_ip, 4) == 0, "spa");
	RT_CHECK(mac_is(b + l3 + 18, sha), "tha");
	RT_CHECK(memcmp(b + l3 + 24, sip, 4) == 0, "tpa");
	for (i = l3 + 28; i < len; i++)
		RT_CHECK(b[i] == 0, "pad byte %u = %02x", i, b[i]);
}

static void
test_arp_reply(void)
{
	struct roce_net_conf c = base_conf();
	struct rte_mbuf *out[OUT_MAX];
	struct roce_net_neigh_info ni;
	uint8_t b[FRAME_MAX];
	struct roce_net *n;
	struct fb f;
	uint16_t k;

	n = mk_net(&c);
	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	k = inject(n, &f, T0, out);
	RT_CHECK(k == 1, "one reply, got %u", k);
	if (k == 1)
		check_arp_reply(b, copy_frame(out[0], b), -1, &peer_mac, peer_ip);
	free_all(out, k);
	RT_CHECK(cnt(n, ROCE_NET_C_ARP_REPLY_TX) == 1 && cnt(n, ROCE_NET_C_LEARNED) == 1,
			"counted");
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip, 0, T0, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_STALE &&
			rte_is_same_ether_addr(&ni.mac, &peer_mac),
			"asker learned STALE (state %u)", ni.state);

	/* Unicast request (a Linux NUD probe), its padding in a second segment. */
	mk_arp(&f, -1, &our_mac, &peer2_mac, 1, other_ip, &zero_mac, our_ip);
	k = inject_seg(n, &f, 50, T0, out);
	RT_CHECK(k == 1, "unicast request answered");
	if (k == 1)
		check_arp_reply(b, copy_frame(out[0], b), -1, &peer2_mac, other_ip);
	free_all(out, k);

	/* Address probe (RFC 5227): answered with tpa 0, nobody learned. */
	mk_arp(&f, -1, &bcast_mac, &peer2_mac, 1, (const uint8_t[4]){ 0 }, &zero_mac, our_ip);
	RT_CHECK(roce_net_neigh_del(n, other_ip, 0) == 0, "del");
	k = inject(n, &f, T0, out);
	RT_CHECK(k == 1, "probe answered");
	if (k == 1)
		check_arp_reply(b, copy_frame(out[0], b), -1, &peer2_mac,
				(const uint8_t[4]){ 0 });
	free_all(out, k);
	RT_CHECK(roce_net_neigh_lookup(n, other_ip, 0, T0, &ni) == -ENOENT, "probe not learned");
	roce_net_free(n);

	/* Tagged: our VLAN is answered tagged, another VLAN or an untagged frame dropped. */
	c.vlan = 1;
	c.vlan_tci = 0x2000 | 100;
	n = mk_net(&c);
	mk_arp(&f, 100, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	k = inject(n, &f, T0, out);
	RT_CHECK(k == 1, "tagged reply");
	if (k == 1) {
		check_arp_reply(b, copy_frame(out[0], b), 100, &peer_mac, peer_ip);
		RT_CHECK(rd16(b + 14) == (0x2000 | 100), "our PCP in the tag: %04x", rd16(b + 14));
	}
	free_all(out, k);
	mk_arp(&f, 101, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	expect_drop(n, &f, ROCE_NET_C_VLAN, "other VLAN");
	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	expect_drop(n, &f, ROCE_NET_C_VLAN, "untagged");
	roce_net_free(n);

	/* Untagged configuration: priority-tagged (VID 0) frames are ours, VID 5 is not. */
	c = base_conf();
	n = mk_net(&c);
	mk_arp(&f, 0, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	k = inject(n, &f, T0, out);
	RT_CHECK(k == 1, "priority-tagged request answered");
	free_all(out, k);
	mk_arp(&f, 5, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	expect_drop(n, &f, ROCE_NET_C_VLAN, "tagged, unconfigured");
	roce_net_free(n);
	check_no_leak("arp_reply");
}

static void
test_arp_ignored(void)
{
	struct roce_net_conf c = base_conf();
	struct roce_net_neigh_info ni;
	struct roce_net *n = mk_net(&c);
	static const uint8_t five[4] = { 10, 0, 0, 5 };
	struct fb f;

	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, other_ip);
	expect_drop(n, &f, ROCE_NET_C_ARP_NOT_US, "other target");
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip, 0, T0, &ni) == -ENOENT, "not learned");
	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, five, &zero_mac, five);
	expect_drop(n, &f, ROCE_NET_C_ARP_NOT_US, "gratuitous request");
	mk_arp(&f, -1, &bcast_mac, &peer_mac, 2, five, &bcast_mac, five);
	expect_drop(n, &f, ROCE_NET_C_ARP_UNSOLICITED, "gratuitous reply");
	RT_CHECK(roce_net_neigh_lookup(n, five, 0, T0, &ni) == -ENOENT, "gratuitous not learned");
	mk_arp(&f, -1, &our_mac, &peer_mac, 2, peer_ip, &our_mac, our_ip);
	expect_drop(n, &f, ROCE_NET_C_ARP_UNSOLICITED, "unsolicited reply");

	/* A gratuitous ARP does update an entry we have (a peer's failover). */
	RT_CHECK(roce_net_neigh_add(n, five, 0, &peer_mac, 0, T0) == 0, "add");
	mk_arp(&f, -1, &bcast_mac, &peer2_mac, 1, five, &zero_mac, five);
	expect_drop(n, &f, ROCE_NET_C_ARP_NOT_US, "gratuitous update");
	RT_CHECK(roce_net_neigh_lookup(n, five, 0, T0, &ni) == 0 &&
			rte_is_same_ether_addr(&ni.mac, &peer2_mac) &&
			ni.state == ROCE_NET_NEIGH_STALE && cnt(n, ROCE_NET_C_MAC_CHANGED) == 1,
			"MAC moved, STALE (state %u)", ni.state);

	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, our_ip, &zero_mac, our_ip);
	expect_drop(n, &f, ROCE_NET_C_ARP_CONFLICT, "our address elsewhere");
	mk_arp(&f, -1, &peer2_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	expect_drop(n, &f, ROCE_NET_C_L2_DST, "unicast to another MAC");
	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, (const uint8_t[4]){ 224, 0, 0, 1 }, &zero_mac,
			our_ip);
	expect_drop(n, &f, ROCE_NET_C_ARP_SENDER, "multicast sender IP");
	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, (const uint8_t[4]){ 10, 0, 0, 255 }, &zero_mac,
			our_ip);
	expect_drop(n, &f, ROCE_NET_C_ARP_SENDER, "subnet broadcast sender IP");
	mk_arp(&f, -1, &bcast_mac, &our_mac, 1, peer_ip, &zero_mac, our_ip);
	expect_drop(n, &f, ROCE_NET_C_L2_SRC, "our own frame looped back");
	roce_net_free(n);

	/* No IPv4 address: ARP and ICMP are not ours to answer. */
	c.ip4 = 0;
	c.gw4 = 0;
	n = mk_net(&c);
	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	expect_drop(n, &f, ROCE_NET_C_NO_IP4, "no IPv4");
	roce_net_free(n);
	check_no_leak("arp_ignored");
}

/* ---- ICMP ---- */

static void
check_echo_reply(const uint8_t *b, uint32_t len, const uint8_t *req, uint32_t req_len,
		uint32_t req_ihl)
{
	uint32_t tot = rd16(b + 16), rtot = rd16(req + 16), icmp_len = tot - 20;

	RT_CHECK(mac_is(b, &peer_mac) && mac_is(b + 6, &our_mac) && rd16(b + 12) == 0x0800,
			"echo reply L2");
	RT_CHECK(b[14] == 0x45 && tot == rtot - (req_ihl - 20), "IHL %02x total %u", b[14], tot);
	RT_CHECK(len == (14 + tot < 60 ? 60 : 14 + tot), "frame %u bytes for IP %u", len, tot);
	RT_CHECK(fold(sum16(b + 14, 20, 0)) == 0xffff, "IP checksum");
	RT_CHECK(b[22] == 64 && b[23] == 1, "TTL %u proto %u", b[22], b[23]);
	RT_CHECK(memcmp(b + 26, our_ip, 4) == 0 && memcmp(b + 30, peer_ip, 4) == 0, "IP swap");
	RT_CHECK(rd16(b + 18) == rd16(req + 18), "IP id kept");
	RT_CHECK(b[34] == 0 && b[35] == 0, "type %u code %u", b[34], b[35]);
	RT_CHECK(fold(sum16(b + 34, icmp_len, 0)) == 0xffff, "ICMP checksum");
	RT_CHECK(memcmp(b + 38, req + 14 + req_ihl + 4, icmp_len - 4) == 0 &&
			req_len >= 14 + req_ihl + icmp_len, "id, seq and payload kept");
}

static void
test_icmp_echo(void)
{
	static const uint32_t dlens[] = { 0, 1, 18, 56, 1000, 1464 };
	/* ICMP headers must be in the first segment (50 bytes with options); odd lengths pair
	 * the checksum bytes the other way round.
	 */
	static const uint32_t segs[] = { 0, 50, 51, 333 };
	struct roce_net_conf c = base_conf();
	struct rte_mbuf *out[OUT_MAX];
	uint8_t b[FRAME_MAX];
	struct roce_net *n = mk_net(&c);
	unsigned int i, s, o;
	struct fb f;
	uint16_t k;

	for (i = 0; i < RTE_DIM(dlens); i++)
		for (s = 0; s < RTE_DIM(segs); s++)
			for (o = 0; o < 3; o += 2) {
				mk_icmp_echo(&f, peer_ip, our_ip, 0x4242, (uint16_t)i, dlens[i], o);
				k = inject_seg(n, &f, segs[s], T0, out);
				RT_CHECK(k == 1, "echo %u bytes seg %u opt %u: %u replies (%lu)",
						dlens[i], segs[s], o, k,
						(unsigned long)cnt(n, ROCE_NET_C_SPLIT));
				if (k == 1)
					check_echo_reply(b, copy_frame(out[0], b), f.b, f.len,
							20 + 4 * o);
				free_all(out, k);
			}
	mk_icmp_echo(&f, peer_ip, other_ip, 1, 1, 56, 0);
	expect_drop(n, &f, ROCE_NET_C_IP4_DST, "echo to another IP");
	mk_icmp_echo(&f, (const uint8_t[4]){ 10, 0, 0, 255 }, our_ip, 1, 1, 56, 0);
	expect_drop(n, &f, ROCE_NET_C_IP4_SRC, "echo from the broadcast address");
	mk_icmp_echo(&f, (const uint8_t[4]){ 127, 0, 0, 1 }, our_ip, 1, 1, 56, 0);
	expect_drop(n, &f, ROCE_NET_C_IP4_SRC, "echo from loopback");
	mk_icmp_echo(&f, peer_ip, our_ip, 1, 1, 56, 0);
	f.b[40]++;
	expect_drop(n, &f, ROCE_NET_C_ICMP_CSUM, "ICMP checksum");
	mk_icmp_echo(&f, peer_ip, our_ip, 1, 1, 56, 0);
	memcpy(f.b, &peer2_mac, 6);
	expect_drop(n, &f, ROCE_NET_C_L2_DST, "echo to another MAC");
	{
		uint8_t msg[8] = { 3, 3 };
		uint16_t ck = (uint16_t)~fold(sum16(msg, 8, 0));

		msg[2] = ck >> 8;
		msg[3] = ck & 0xff;
		mk_ip4(&f, -1, &our_mac, &peer_mac, peer_ip, our_ip, 1, msg, 8, 0);
		expect_drop(n, &f, ROCE_NET_C_ICMP_UNREACH_RX, "port unreachable");
		msg[0] = 13;
		msg[1] = 0;
		msg[2] = msg[3] = 0;
		ck = (uint16_t)~fold(sum16(msg, 8, 0));
		msg[2] = ck >> 8;
		msg[3] = ck & 0xff;
		mk_ip4(&f, -1, &our_mac, &peer_mac, peer_ip, our_ip, 1, msg, 8, 0);
		expect_drop(n, &f, ROCE_NET_C_ICMP_OTHER, "timestamp request");
		mk_ip4(&f, -1, &our_mac, &peer_mac, peer_ip, our_ip, 1, msg, 4, 0);
		expect_drop(n, &f, ROCE_NET_C_ICMP_SHORT, "4-byte ICMP");
	}
	roce_net_free(n);

	c.mtu = 576;
	n = mk_net(&c);
	mk_icmp_echo(&f, peer_ip, our_ip, 1, 1, 548, 0);
	k = inject(n, &f, T0, out);
	RT_CHECK(k == 1, "echo of exactly the MTU");
	free_all(out, k);
	mk_icmp_echo(&f, peer_ip, our_ip, 1, 1, 549, 0);
	expect_drop(n, &f, ROCE_NET_C_ICMP_TOO_BIG, "echo over the MTU");
	roce_net_free(n);
	check_no_leak("icmp_echo");
}

/* A reply that is a clone (refcnt 2) is answered from a copy; the original is untouched. */
static void
test_icmp_shared(void)
{
	struct roce_net_conf c = base_conf();
	struct roce_net *n = mk_net(&c);
	struct rte_mbuf *out[OUT_MAX], *m;
	uint8_t b[FRAME_MAX];
	struct fb f;
	uint16_t k;

	mk_icmp_echo(&f, peer_ip, our_ip, 9, 9, 100, 0);
	m = rt_mbuf(pool, f.b, f.len, 0);
	roce_classify_burst(&m, 1, 0, &wstats);
	rte_mbuf_refcnt_update(m, 1);
	k = roce_net_input(n, &m, 1, T0, out, OUT_MAX);
	RT_CHECK(k == 1 && out[0] != m, "answered from a copy");
	if (k == 1)
		check_echo_reply(b, copy_frame(out[0], b), f.b, f.len, 20);
	RT_CHECK(rt_mbuf_copy(m, b, FRAME_MAX) == f.len && memcmp(b, f.b, f.len) == 0,
			"shared request untouched");
	free_all(out, k);
	rte_pktmbuf_free(m);
	roce_net_free(n);
	check_no_leak("icmp_shared");
}

/* ---- IPv6 ---- */

/* The NA @b answering a solicitation for @target from @dst (ff02::1 for DAD). */
static void
check_na(const uint8_t *b, uint32_t len, const struct rte_ether_addr *eth_dst,
		const uint8_t *target, const uint8_t *dst, uint32_t flags)
{
	const uint8_t *ip6 = b + 14, *msg = b + 54;

	RT_CHECK(len == 86, "NA %u bytes", len);
	RT_CHECK(mac_is(b, eth_dst) && mac_is(b + 6, &our_mac) && rd16(b + 12) == 0x86DD,
			"NA L2");
	RT_CHECK(rd32(ip6) == 0x60000000 && rd16(ip6 + 4) == 32 && ip6[6] == 58 &&
			ip6[7] == 255, "NA IPv6 header");
	RT_CHECK(memcmp(ip6 + 8, target, 16) == 0 && memcmp(ip6 + 24, dst, 16) == 0,
			"NA addresses");
	RT_CHECK(msg[0] == 136 && msg[1] == 0 && rd32(msg + 4) == flags, "NA type/flags %08x",
			rd32(msg + 4));
	RT_CHECK(memcmp(msg + 8, target, 16) == 0, "NA target");
	RT_CHECK(msg[24] == 2 && msg[25] == 1 && mac_is(msg + 26, &our_mac), "TLLA option");
	RT_CHECK(icmp6_csum(ip6 + 8, ip6 + 24, msg, 32) == 0, "NA checksum");
}

static void
test_ns_na(void)
{
	struct roce_net_conf c = base_conf();
	struct roce_net *n = mk_net(&c);
	struct rte_mbuf *out[OUT_MAX];
	struct roce_net_neigh_info ni;
	uint8_t b[FRAME_MAX], msg[64], g[16];
	struct rte_ether_addr gm;
	struct fb f;
	uint16_t k;
	uint32_t len;

	mk_ns(&f, peer_ll, our_ll, &peer_mac, 255);
	k = inject(n, &f, T0, out);
	RT_CHECK(k == 1, "NS answered");
	if (k == 1)
		check_na(b, copy_frame(out[0], b), &peer_mac, our_ll, peer_ll, 0x60000000);
	free_all(out, k);
	RT_CHECK(roce_net_neigh_lookup(n, peer_ll, 1, T0, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_STALE &&
			rte_is_same_ether_addr(&ni.mac, &peer_mac),
			"solicitor learned");

	/* For the global address, unicast, no source option: answer to the frame's source. */
	len = mk_nd_msg(msg, 135, 0, our_ip6, 0, NULL);
	mk_ip6(&f, -1, &our_mac, &peer2_mac, peer_ip6, our_ip6, 255, msg, len);
	k = inject(n, &f, T0, out);
	RT_CHECK(k == 1, "unicast NS answered");
	if (k == 1)
		check_na(b, copy_frame(out[0], b), &peer2_mac, our_ip6, peer_ip6, 0x60000000);
	free_all(out, k);
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip6, 1, T0, &ni) == -ENOENT, "nothing to learn");

	/* DAD for our address: defend it to all nodes, not solicited. */
	mk_ns(&f, unspec, our_ip6, NULL, 255);
	k = inject(n, &f, T0, out);
	RT_CHECK(k == 1, "DAD answered");
	if (k == 1) {
		struct rte_ether_addr an;

		mcast_mac(all_nodes, &an);
		check_na(b, copy_frame(out[0], b), &an, our_ip6, all_nodes, 0x20000000);
	}
	free_all(out, k);

	mk_ns(&f, peer_ll, our_ll, &peer_mac, 64);
	expect_drop(n, &f, ROCE_NET_C_ND_HOPLIMIT, "NS hop limit 64");
	mk_ns(&f, peer_ll, peer_ip6, &peer_mac, 255);
	expect_drop(n, &f, ROCE_NET_C_IP6_DST, "NS to a group we are not in");
	len = mk_nd_msg(msg, 135, 0, peer_ip6, 1, &peer_mac);
	mk_ip6(&f, -1, &our_mac, &peer_mac, peer_ll, our_ll, 255, msg, len);
	expect_drop(n, &f, ROCE_NET_C_NS_NOT_US, "NS for another target");
	mk_ns(&f, peer_ll, our_ll, &peer_mac, 255);
	f.b[f.len - 1] ^= 0x10;
	expect_drop(n, &f, ROCE_NET_C_ICMP6_CSUM, "NS checksum");
	mk_ns(&f, unspec, our_ll, &peer_mac, 255);
	expect_drop(n, &f, ROCE_NET_C_ND_INVALID, "DAD with a source option");
	len = mk_nd_msg(msg, 135, 0, our_ll, 1, &peer_mac);
	msg[25] = 0;
	snm_of(our_ll, g);
	mcast_mac(g, &gm);
	mk_ip6(&f, -1, &gm, &peer_mac, peer_ll, g, 255, msg, len);
	expect_drop(n, &f, ROCE_NET_C_ND_OPTION, "option length 0");
	len = mk_nd_msg(msg, 135, 0, our_ll, 1, &peer_mac);
	msg[25] = 2;
	mk_ip6(&f, -1, &gm, &peer_mac, peer_ll, g, 255, msg, len);
	expect_drop(n, &f, ROCE_NET_C_ND_OPTION, "option past the message");
	len = mk_nd_msg(msg, 135, 0, our_ll, 1, &peer_mac);
	msg[1] = 1;
	mk_ip6(&f, -1, &gm, &peer_mac, peer_ll, g, 255, msg, len);
	expect_drop(n, &f, ROCE_NET_C_ND_INVALID, "code 1");
	len = mk_nd_msg(msg, 135, 0, all_nodes, 0, NULL);
	mk_ip6(&f, -1, &our_mac, &peer_mac, peer_ll, our_ll, 255, msg, len);
	expect_drop(n, &f, ROCE_NET_C_ND_INVALID, "multicast target");
	mk_ip6(&f, -1, &our_mac, &peer_mac, peer_ll, our_ll, 255, msg, 16);
	expect_drop(n, &f, ROCE_NET_C_ND_INVALID, "16-byte NS");
	mk_ns(&f, peer_ll, our_ll, &peer_mac, 255);
	memcpy(f.b, &our_mac, 6);
	expect_drop(n, &f, ROCE_NET_C_L2_DST, "group on our unicast MAC");
	mk_ns(&f, our_ip6, our_ll, &peer_mac, 255);
	expect_drop(n, &f, ROCE_NET_C_DAD_CONFLICT, "NS from our own address");
	len = mk_nd_msg(msg, 136, 0x60000000, peer_ll, 2, &peer_mac);
	mk_ip6(&f, -1, &gm, &peer_mac, peer_ll, g, 255, msg, len);
	expect_drop(n, &f, ROCE_NET_C_ND_INVALID, "solicited NA to a group");
	mk_na(&f, &peer_mac, peer_ll, our_ll, 0x20000000, &peer_mac);
	expect_drop(n, &f, ROCE_NET_C_DAD_CONFLICT, "NA for our address");
	roce_net_free(n);
	check_no_leak("ns_na");
}

static void
test_echo6(void)
{
	static const uint32_t segs[] = { 0, 62, 63, 101 };
	struct roce_net_conf c = base_conf();
	struct roce_net *n = mk_net(&c);
	struct rte_mbuf *out[OUT_MAX];
	struct rte_ether_addr an;
	uint8_t b[FRAME_MAX];
	unsigned int s;
	struct fb f;
	uint16_t k;
	struct {
		const struct rte_ether_addr *eth;
		const uint8_t *src, *dst, *want_src;
	} cases[] = {
		{ &our_mac, peer_ll, our_ll, our_ll },
		{ &our_mac, peer_ip6, our_ip6, our_ip6 },
		{ &an, peer_ll, all_nodes, our_ll },
		{ &an, peer_ip6, all_nodes, our_ip6 },
	};
	unsigned int i;

	mcast_mac(all_nodes, &an);
	for (i = 0; i < RTE_DIM(cases); i++)
		for (s = 0; s < RTE_DIM(segs); s++) {
			uint32_t len;

			mk_echo6(&f, cases[i].eth, cases[i].src, cases[i].dst, 200);
			k = inject_seg(n, &f, segs[s], T0, out);
			RT_CHECK(k == 1, "echo6 case %u seg %u answered", i, segs[s]);
			if (k != 1) {
				free_all(out, k);
				continue;
			}
			len = copy_frame(out[0], b);
			RT_CHECK(len == f.len && mac_is(b, &peer_mac) && mac_is(b + 6, &our_mac),
					"echo6 L2, %u bytes", len);
			RT_CHECK(b[20] == 58 && b[21] == 64, "next header %u hop %u", b[20], b[21]);
			RT_CHECK(memcmp(b + 22, cases[i].want_src, 16) == 0 &&
					memcmp(b + 38, cases[i].src, 16) == 0, "echo6 %u addresses",
					i);
			RT_CHECK(b[54] == 129 && b[55] == 0, "echo reply type");
			RT_CHECK(icmp6_csum(b + 22, b + 38, b + 54, rd16(b + 18)) == 0,
					"echo6 checksum");
			RT_CHECK(memcmp(b + 58, f.b + 58, f.len - 58) == 0, "id, seq, payload");
			free_all(out, k);
		}
	mk_echo6(&f, &our_mac, peer_ll, our_ll, 20);
	f.b[f.len - 1]++;
	expect_drop(n, &f, ROCE_NET_C_ICMP6_CSUM, "echo6 checksum");
	mk_echo6(&f, &our_mac, unspec, our_ll, 20);
	expect_drop(n, &f, ROCE_NET_C_IP6_SRC, "echo6 from ::");
	mk_echo6(&f, &our_mac, peer_ll, peer_ip6, 20);
	expect_drop(n, &f, ROCE_NET_C_IP6_DST, "echo6 to another address");
	{
		uint8_t msg[8] = { 1, 4 };

		mk_ip6(&f, -1, &our_mac, &peer_mac, peer_ll, our_ll, 64, msg, 8);
		expect_drop(n, &f, ROCE_NET_C_ICMP_UNREACH_RX, "ICMPv6 port unreachable");
		msg[0] = 134;
		msg[1] = 0;
		mk_ip6(&f, -1, &an, &peer_mac, peer_ll, all_nodes, 255, msg, 8);
		expect_drop(n, &f, ROCE_NET_C_ICMP6_OTHER, "router advertisement");
		mk_ip6(&f, -1, &our_mac, &peer_mac, peer_ll, our_ll, 64, msg, 2);
		expect_drop(n, &f, ROCE_NET_C_ICMP6_SHORT, "2-byte ICMPv6");
		msg[0] = 128;
		mk_ip6(&f, -1, &our_mac, &peer_mac, peer_ll, our_ll, 64, msg, 6);
		expect_drop(n, &f, ROCE_NET_C_ICMP6_SHORT, "6-byte echo");
	}
	roce_net_free(n);
	check_no_leak("echo6");
}

/* ---- resolution ---- */

/* The ARP request @b for @tip, broadcast or unicast to @dst. */
static void
check_arp_request(const uint8_t *b, uint32_t len, const struct rte_ether_addr *dst,
		const uint8_t *tip)
{
	RT_CHECK(len == 60 && mac_is(b, dst) && mac_is(b + 6, &our_mac) && rd16(b + 12) == 0x0806,
			"request L2");
	RT_CHECK(rd16(b + 14) == 1 && rd16(b + 16) == 0x0800 && b[18] == 6 && b[19] == 4 &&
			rd16(b + 20) == 1, "request format");
	RT_CHECK(mac_is(b + 22, &our_mac) && memcmp(b + 28, our_ip, 4) == 0 &&
			mac_is(b + 32, &zero_mac) && memcmp(b + 38, tip, 4) == 0,
			"request addresses");
}

/* Collect what the instance has to send; @return how many, checking each is an ARP
 * request for @tip to @dst.
 */
static uint16_t
expect_requests(struct roce_net *n, const struct rte_ether_addr *dst, const uint8_t *tip)
{
	struct rte_mbuf *out[OUT_MAX];
	uint8_t b[FRAME_MAX];
	uint16_t k = roce_net_tx(n, out, OUT_MAX), i;

	for (i = 0; i < k; i++)
		check_arp_request(b, copy_frame(out[i], b), dst, tip);
	free_all(out, k);
	return k;
}

static void
test_resolve_v4(void)
{
	struct roce_net_conf c = base_conf();
	struct roce_net *n = mk_net(&c);
	struct rte_mbuf *out[OUT_MAX], *m;
	struct roce_net_neigh_info ni;
	struct rte_ether_addr mac;
	uint8_t b[FRAME_MAX];
	uint64_t now = T0;
	struct fb f;
	uint16_t k, i;
	int ret;

	/* Ten frames: eight wait, two are dropped; one request goes out. */
	for (i = 0; i < 10; i++) {
		m = roce_frame(0, peer_ip, i);
		RT_CHECK(roce_net_output(n, m, peer_ip, 0, now) == ROCE_NET_HELD, "held %u", i);
	}
	RT_CHECK(cnt(n, ROCE_NET_C_QUEUED) == 8 && cnt(n, ROCE_NET_C_QUEUE_FULL) == 2,
			"queued %lu", (unsigned long)cnt(n, ROCE_NET_C_QUEUED));
	RT_CHECK(expect_requests(n, &bcast_mac, peer_ip) == 1, "one request");
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip, 0, now, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_INCOMPLETE && ni.queued == 8 && ni.probes == 1,
			"INCOMPLETE with 8 queued");
	RT_CHECK(roce_net_resolve(n, peer_ip, 0, now, &mac) == -EAGAIN, "resolving");

	/* The reply releases the eight, in order, with the MAC set. */
	now += 200 * MS;
	mk_arp(&f, -1, &our_mac, &peer_mac, 2, peer_ip, &our_mac, our_ip);
	k = inject(n, &f, now, out);
	RT_CHECK(k == 8, "8 frames released, got %u", k);
	for (i = 0; i < k; i++) {
		uint32_t len = copy_frame(out[i], b);
		struct rte_mbuf *cm = out[i];

		RT_CHECK(mac_is(b, &peer_mac) && mac_is(b + 6, &our_mac), "flushed MACs %u", i);
		/* Still a valid RoCE packet, in the order queued. */
		roce_classify_burst(&cm, 1, 0, &wstats);
		RT_CHECK(roce_pkt_meta(cm)->type == ROCE_PKT_ROCE &&
				roce_pkt_meta(cm)->psn == i && len > 60, "flushed frame %u", i);
	}
	free_all(out, k);
	RT_CHECK(cnt(n, ROCE_NET_C_ARP_REPLY_RX) == 1 && cnt(n, ROCE_NET_C_FLUSHED) == 8,
			"reply counted");
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip, 0, now, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_REACHABLE && ni.queued == 0, "REACHABLE");

	/* Known now: frames go at once, nothing is sent on the side. */
	m = roce_frame(0, peer_ip, 100);
	RT_CHECK(roce_net_output(n, m, peer_ip, 0, now) == ROCE_NET_SEND, "sent at once");
	RT_CHECK(mac_is(rte_pktmbuf_mtod(m, uint8_t *), &peer_mac), "MAC set");
	rte_pktmbuf_free(m);
	RT_CHECK(roce_net_resolve(n, peer_ip, 0, now, &mac) == 0 &&
			rte_is_same_ether_addr(&mac, &peer_mac), "resolve");
	RT_CHECK(expect_requests(n, &bcast_mac, peer_ip) == 0, "no request");

	/* 30 s later the entry is STALE; using it sends and probes by unicast, 3 times. */
	now += 30 * SEC;
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip, 0, now, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_STALE, "STALE after 30 s (%u)", ni.state);
	m = roce_frame(0, peer_ip, 101);
	RT_CHECK(roce_net_output(n, m, peer_ip, 0, now) == ROCE_NET_SEND, "STALE still sends");
	rte_pktmbuf_free(m);
	RT_CHECK(expect_requests(n, &peer_mac, peer_ip) == 1, "unicast probe");
	for (i = 0; i < 2; i++) {
		now += SEC;
		roce_net_poll(n, now);
		RT_CHECK(expect_requests(n, &peer_mac, peer_ip) == 1, "probe %u", i + 2);
	}
	/* A reply to the probe makes it REACHABLE again. */
	k = inject(n, &f, now, out);
	RT_CHECK(k == 0, "nothing queued");
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip, 0, now, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_REACHABLE, "probe answered");
	now += SEC;
	roce_net_poll(n, now);
	RT_CHECK(expect_requests(n, &peer_mac, peer_ip) == 0, "no more probes");

	/* Unanswered probes: FAILED. */
	now += 31 * SEC;
	RT_CHECK(roce_net_resolve(n, peer_ip, 0, now, &mac) == 0, "STALE resolves");
	for (i = 0; i < 3; i++) {
		now += SEC;
		roce_net_poll(n, now);
	}
	RT_CHECK(expect_requests(n, &peer_mac, peer_ip) == 3, "three unicast probes");
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip, 0, now, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_FAILED, "FAILED after unanswered probes (%u)",
			ni.state);

	/* A silent neighbour: three requests a second apart, then FAILED; queue freed. */
	for (i = 0; i < 3; i++)
		RT_CHECK(roce_net_output(n, roce_frame(0, other_ip, i), other_ip, 0, now) ==
				ROCE_NET_HELD, "held");
	RT_CHECK(expect_requests(n, &bcast_mac, other_ip) == 1, "first request");
	roce_net_poll(n, now + 999 * MS);
	RT_CHECK(expect_requests(n, &bcast_mac, other_ip) == 0, "not before 1 s");
	RT_CHECK(roce_net_next_timer(n) <= now + SEC, "timer armed");
	roce_net_poll(n, now + SEC);
	RT_CHECK(expect_requests(n, &bcast_mac, other_ip) == 1, "second request");
	roce_net_poll(n, now + 2 * SEC);
	RT_CHECK(expect_requests(n, &bcast_mac, other_ip) == 1, "third request");
	ret = (int)cnt(n, ROCE_NET_C_FAILED_DROP);
	roce_net_poll(n, now + 3 * SEC);
	RT_CHECK(expect_requests(n, &bcast_mac, other_ip) == 0, "no fourth request");
	RT_CHECK(cnt(n, ROCE_NET_C_FAILED_DROP) == (uint64_t)ret + 3 &&
			cnt(n, ROCE_NET_C_RESOLVE_FAILED) == 2, "3 freed, failures %lu",
			(unsigned long)cnt(n, ROCE_NET_C_RESOLVE_FAILED));
	now += 3 * SEC;
	RT_CHECK(roce_net_output(n, roce_frame(0, other_ip, 9), other_ip, 0, now) ==
			ROCE_NET_HELD && cnt(n, ROCE_NET_C_UNREACH_DROP) == 1,
			"dropped while FAILED");
	RT_CHECK(roce_net_resolve(n, other_ip, 0, now, &mac) == -EHOSTUNREACH, "unreachable");
	/* After the hold-down, the entry goes and resolution starts over. */
	roce_net_poll(n, now + 5 * SEC);
	RT_CHECK(roce_net_neigh_lookup(n, other_ip, 0, now + 5 * SEC, &ni) == -ENOENT,
			"FAILED entry gone");
	RT_CHECK(roce_net_resolve(n, other_ip, 0, now + 5 * SEC, &mac) == -EAGAIN &&
			expect_requests(n, &bcast_mac, other_ip) == 1, "starts over");
	RT_CHECK(roce_net_next_timer(n) == now + 6 * SEC, "next timer");

	/* Bad destinations. */
	RT_CHECK(roce_net_resolve(n, our_ip, 0, now, &mac) == -EINVAL, "ourselves");
	RT_CHECK(roce_net_resolve(n, (const uint8_t[4]){ 224, 0, 0, 5 }, 0, now, &mac) ==
			-EINVAL, "multicast");
	RT_CHECK(roce_net_resolve(n, (const uint8_t[4]){ 10, 0, 0, 255 }, 0, now, &mac) ==
			-EINVAL, "subnet broadcast");
	RT_CHECK(roce_net_output(n, roce_frame(0, peer_ip, 0), (const uint8_t[4]){ 0 }, 0, now) ==
			ROCE_NET_HELD && cnt(n, ROCE_NET_C_BAD_DST) == 4, "0.0.0.0 dropped");
	roce_net_free(n);
	check_no_leak("resolve_v4");
}

/* NS @b for @target to its group (or unicast to @dst), from @src. */
static void
check_ns(const uint8_t *b, uint32_t len, const uint8_t *target, const uint8_t *src,
		const struct rte_ether_addr *dst)
{
	const uint8_t *ip6 = b + 14, *msg = b + 54;
	struct rte_ether_addr gm;
	uint8_t g[16];

	snm_of(target, g);
	mcast_mac(g, &gm);
	RT_CHECK(len == 86 && mac_is(b, dst ? dst : &gm) && mac_is(b + 6, &our_mac) &&
			rd16(b + 12) == 0x86DD, "NS L2");
	RT_CHECK(rd16(ip6 + 4) == 32 && ip6[6] == 58 && ip6[7] == 255, "NS IPv6 header");
	RT_CHECK(memcmp(ip6 + 8, src, 16) == 0 && memcmp(ip6 + 24, dst ? target : g, 16) == 0,
			"NS addresses");
	RT_CHECK(msg[0] == 135 && msg[1] == 0 && rd32(msg + 4) == 0 &&
			memcmp(msg + 8, target, 16) == 0, "NS body");
	RT_CHECK(msg[24] == 1 && msg[25] == 1 && mac_is(msg + 26, &our_mac), "SLLA option");
	RT_CHECK(icmp6_csum(ip6 + 8, ip6 + 24, msg, 32) == 0, "NS checksum");
}

static uint16_t
expect_ns(struct roce_net *n, const uint8_t *target, const uint8_t *src,
		const struct rte_ether_addr *dst)
{
	struct rte_mbuf *out[OUT_MAX];
	uint8_t b[FRAME_MAX];
	uint16_t k = roce_net_tx(n, out, OUT_MAX), i;

	for (i = 0; i < k; i++)
		check_ns(b, copy_frame(out[i], b), target, src, dst);
	free_all(out, k);
	return k;
}

static void
test_resolve_v6(void)
{
	struct roce_net_conf c = base_conf();
	struct roce_net *n = mk_net(&c);
	struct rte_mbuf *out[OUT_MAX];
	struct roce_net_neigh_info ni;
	uint8_t b[FRAME_MAX];
	uint64_t now = T0;
	struct fb f;
	uint16_t k, i;

	for (i = 0; i < 3; i++)
		RT_CHECK(roce_net_output(n, roce_frame(1, peer_ip6, i), peer_ip6, 1, now) ==
				ROCE_NET_HELD, "held");
	RT_CHECK(expect_ns(n, peer_ip6, our_ip6, NULL) == 1, "NS from the global address");
	/* An NA without an address option does not resolve. */
	mk_na(&f, &peer_mac, peer_ip6, peer_ip6, 0x60000000, NULL);
	expect_drop(n, &f, ROCE_NET_C_NA_UNSOLICITED, "NA without TLLA");
	mk_na(&f, &peer_mac, peer_ip6, peer_ip6, 0x60000000, &peer_mac);
	k = inject(n, &f, now, out);
	RT_CHECK(k == 3, "3 released, got %u", k);
	for (i = 0; i < k; i++) {
		copy_frame(out[i], b);
		RT_CHECK(mac_is(b, &peer_mac) && rd16(b + 12) == 0x86DD, "flushed v6 %u", i);
	}
	free_all(out, k);
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip6, 1, now, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_REACHABLE, "REACHABLE");

	/* O=0 with another MAC: keep the MAC, stop trusting it. */
	mk_na(&f, &peer2_mac, peer_ip6, peer_ip6, 0x40000000, &peer2_mac);
	expect_drop(n, &f, ROCE_NET_C_NA_RX, "NA without override");
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip6, 1, now, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_STALE &&
			rte_is_same_ether_addr(&ni.mac, &peer_mac),
			"kept MAC, STALE");
	/* O=1: replaced. */
	mk_na(&f, &peer2_mac, peer_ip6, peer_ip6, 0x20000000, &peer2_mac);
	expect_drop(n, &f, ROCE_NET_C_NA_RX, "NA with override");
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip6, 1, now, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_STALE &&
			rte_is_same_ether_addr(&ni.mac, &peer2_mac),
			"new MAC, STALE (unsolicited)");
	mk_na(&f, &peer2_mac, peer_ll, peer_ll, 0x60000000, &peer2_mac);
	expect_drop(n, &f, ROCE_NET_C_NA_UNSOLICITED, "NA for no entry");

	/* Link-local targets are asked from our link-local address. */
	RT_CHECK(roce_net_output(n, roce_frame(1, peer_ll, 0), peer_ll, 1, now) == ROCE_NET_HELD,
			"held");
	RT_CHECK(expect_ns(n, peer_ll, our_ll, NULL) == 1, "NS from link-local");
	/* Its NS to us resolves it too (STALE), and flushes the queue. */
	mk_ns(&f, peer_ll, our_ll, &peer_mac, 255);
	k = inject(n, &f, now, out);
	RT_CHECK(k == 2, "NA + released frame, got %u", k);
	free_all(out, k);
	RT_CHECK(roce_net_neigh_lookup(n, peer_ll, 1, now, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_STALE, "learned from NS");
	/* Probing a STALE IPv6 neighbour is a unicast NS to its address. */
	{
		struct rte_mbuf *m = roce_frame(1, peer_ll, 1);

		RT_CHECK(roce_net_output(n, m, peer_ll, 1, now) == ROCE_NET_SEND, "STALE sends");
		rte_pktmbuf_free(m);

		k = roce_net_tx(n, &m, 1);
		RT_CHECK(k == 1, "probe");
		if (k == 1) {
			check_ns(b, copy_frame(m, b), peer_ll, our_ll, &peer_mac);
			rte_pktmbuf_free(m);
		}
	}
	roce_net_free(n);
	check_no_leak("resolve_v6");
}

static void
test_gateway(void)
{
	struct roce_net_conf c = base_conf();
	struct roce_net *n = mk_net(&c);
	struct rte_mbuf *out[OUT_MAX];
	struct rte_ether_addr mac;
	uint8_t b[FRAME_MAX];
	struct fb f;
	uint16_t k;

	RT_CHECK(roce_net_output(n, roce_frame(0, far_ip, 1), far_ip, 0, T0) == ROCE_NET_HELD,
			"held");
	RT_CHECK(expect_requests(n, &bcast_mac, gw_ip) == 1, "asks for the gateway");
	mk_arp(&f, -1, &our_mac, &gw_mac, 2, gw_ip, &our_mac, our_ip);
	k = inject(n, &f, T0, out);
	RT_CHECK(k == 1, "released");
	if (k == 1) {
		copy_frame(out[0], b);
		RT_CHECK(mac_is(b, &gw_mac) && memcmp(b + 30, far_ip, 4) == 0,
				"to the gateway's MAC, IP unchanged");
	}
	free_all(out, k);
	RT_CHECK(roce_net_resolve(n, (const uint8_t[4]){ 8, 8, 8, 8 }, 0, T0, &mac) == 0 &&
			rte_is_same_ether_addr(&mac, &gw_mac), "any far address");
	roce_net_free(n);

	/* No gateway: off-subnet is unreachable. */
	c.gw4 = 0;
	n = mk_net(&c);
	RT_CHECK(roce_net_resolve(n, far_ip, 0, T0, &mac) == -ENETUNREACH, "no route");
	RT_CHECK(roce_net_output(n, roce_frame(0, far_ip, 1), far_ip, 0, T0) == ROCE_NET_HELD &&
			cnt(n, ROCE_NET_C_NO_ROUTE) == 2, "counted");
	roce_net_free(n);

	/* IPv6 gateway (link-local) for what is off our /64. */
	c = base_conf();
	memcpy(c.gw6, gw_ll, 16);
	n = mk_net(&c);
	RT_CHECK(roce_net_resolve(n, far_ip6, 1, T0, &mac) == -EAGAIN, "resolving gw6");
	RT_CHECK(expect_ns(n, gw_ll, our_ll, NULL) == 1, "NS for the gateway");
	RT_CHECK(roce_net_resolve(n, peer_ip6, 1, T0, &mac) == -EAGAIN, "on-link resolves itself");
	RT_CHECK(expect_ns(n, peer_ip6, our_ip6, NULL) == 1, "NS for the peer");
	roce_net_free(n);
	check_no_leak("gateway");
}

static void
test_path(void)
{
	struct roce_net_conf c = base_conf();
	struct roce_net *n = mk_net(&c);
	struct roce_path path = { .src_mac = our_mac, .udp_sport = 0xC123 };
	struct rte_mbuf *out[OUT_MAX];
	struct fb f;
	uint16_t k;

	memcpy(path.src_ip, our_ip, 4);
	memcpy(path.dst_ip, peer_ip, 4);
	RT_CHECK(roce_net_path_resolve(n, &path, T0) == -EAGAIN, "first call starts");
	RT_CHECK(roce_net_path_resolve(n, &path, T0) == -EAGAIN, "still waiting");
	RT_CHECK(expect_requests(n, &bcast_mac, peer_ip) == 1, "one request");
	mk_arp(&f, -1, &our_mac, &peer_mac, 2, peer_ip, &our_mac, our_ip);
	k = inject(n, &f, T0, out);
	free_all(out, k);
	RT_CHECK(roce_net_path_resolve(n, &path, T0) == 0, "resolved");
	RT_CHECK(rte_is_same_ether_addr(&path.dst_mac, &peer_mac) &&
			mac_is(path.tmpl, &peer_mac) && path.hdr_len == 42, "path and template");
	roce_net_free(n);
	check_no_leak("path");
}

static void
test_table_full(void)
{
	struct roce_net_conf c = base_conf();
	struct roce_net_neigh_info ni[8];
	struct rte_ether_addr mac;
	struct roce_net *n;
	uint8_t ip[4] = { 10, 0, 0, 10 };
	struct rte_mbuf *out[OUT_MAX];
	struct fb f;
	uint16_t k;
	unsigned int i;

	c.neigh_max = 4;
	n = mk_net(&c);
	for (i = 0; i < 4; i++) {
		ip[3] = (uint8_t)(10 + i);
		RT_CHECK(roce_net_resolve(n, ip, 0, T0, &mac) == -EAGAIN, "resolving %u", i);
	}
	ip[3] = 20;
	RT_CHECK(roce_net_resolve(n, ip, 0, T0, &mac) == -ENOSPC &&
			cnt(n, ROCE_NET_C_TABLE_FULL) == 1, "table full");
	RT_CHECK(roce_net_output(n, roce_frame(0, ip, 0), ip, 0, T0) == ROCE_NET_HELD &&
			cnt(n, ROCE_NET_C_TABLE_FULL) == 2, "frame dropped");
	RT_CHECK(roce_net_neigh_add(n, ip, 0, &peer_mac, 1, T0) == -ENOSPC, "add refused");
	/* Learning never pushes anyone out. */
	free_all(out, roce_net_tx(n, out, OUT_MAX));
	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	k = inject(n, &f, T0, out);
	RT_CHECK(k == 1 && cnt(n, ROCE_NET_C_LEARNED) == 0 && cnt(n, ROCE_NET_C_LEARN_FULL) == 1,
			"answered, not learned, counted");
	free_all(out, k);
	RT_CHECK(roce_net_neigh_dump(n, T0, ni, 8) == 4, "4 entries");

	/* Let them fail; FAILED entries are reclaimed first. */
	for (i = 1; i <= 3; i++)
		roce_net_poll(n, T0 + i * SEC);
	RT_CHECK(roce_net_neigh_dump(n, T0 + 3 * SEC, ni, 8) == 4 &&
			ni[0].state == ROCE_NET_NEIGH_FAILED, "FAILED");
	RT_CHECK(roce_net_neigh_add(n, ip, 0, &peer_mac, 0, T0 + 3 * SEC) == 0 &&
			cnt(n, ROCE_NET_C_EVICTED) == 1, "evicted a FAILED one");
	/* STALE entries go too, least recently used first; REACHABLE ones never. */
	for (i = 0; i < 3; i++) {
		ip[3] = (uint8_t)(30 + i);
		RT_CHECK(roce_net_neigh_add(n, ip, 0, &peer_mac, 0, T0 + (4 + i) * SEC) == 0,
				"add %u", i);
	}
	ip[3] = 40;
	RT_CHECK(roce_net_neigh_add(n, ip, 0, &peer_mac, 0, T0 + 10 * SEC) == -ENOSPC,
			"all REACHABLE: full");
	RT_CHECK(roce_net_neigh_add(n, ip, 0, &peer_mac, 0, T0 + 40 * SEC) == 0,
			"STALE reclaimed");
	ip[3] = 20;     /* the oldest */
	RT_CHECK(roce_net_neigh_lookup(n, ip, 0, T0 + 40 * SEC, &ni[0]) == -ENOENT,
			"LRU went first");
	ip[3] = 40;
	RT_CHECK(roce_net_neigh_del(n, ip, 0) == 0 && roce_net_neigh_del(n, ip, 0) == -ENOENT,
			"del");
	RT_CHECK(roce_net_neigh_dump(n, T0, ni, 8) == 3, "3 entries");
	roce_net_free(n);
	check_no_leak("table_full");
}

/* The entry of @ip is there (1) or not (0). */
static int
has_neigh(const struct roce_net *n, const uint8_t *ip, int v6, uint64_t now)
{
	struct roce_net_neigh_info ni;

	return roce_net_neigh_lookup(n, ip, v6, now, &ni) == 0;
}

/*
 * Expiry as Linux's: REACHABLE for reachable_ns after a confirmation, then STALE; an entry
 * neither used nor confirmed for gc_stale_ns goes, one in use is probed instead, and one that
 * went resolves again on its next use. Time is only what the calls are given.
 */
static void
test_expiry(void)
{
	struct roce_net_conf c = base_conf();
	struct roce_net *n = mk_net(&c);
	struct rte_mbuf *out[OUT_MAX], *m;
	struct roce_net_neigh_info ni;
	struct rte_ether_addr mac;
	uint8_t b[FRAME_MAX];
	uint64_t now = T0, t;
	unsigned int i, probes = 0;
	struct fb req, rep;
	uint16_t k;

	/* Learned from its request (STALE) and never used: gone 60 s later. */
	mk_arp(&req, -1, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	free_all(out, inject(n, &req, now, out));
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip, 0, now, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_STALE && ni.used == now && ni.updated == now,
			"learned STALE at %lu (%u)", (unsigned long)ni.updated, ni.state);
	RT_CHECK(roce_net_next_timer(n) == now + 60 * SEC, "expiry armed: %lu",
			(unsigned long)roce_net_next_timer(n));
	roce_net_poll(n, now + 60 * SEC - 1);
	RT_CHECK(has_neigh(n, peer_ip, 0, now + 60 * SEC - 1), "kept until gc_stale_ns");
	roce_net_poll(n, now + 60 * SEC);
	RT_CHECK(!has_neigh(n, peer_ip, 0, now + 60 * SEC) &&
			cnt(n, ROCE_NET_C_EXPIRED) == 1, "unused entry expired");
	RT_CHECK(roce_net_next_timer(n) == UINT64_MAX, "nothing pending");

	/* Resolved and in use for two minutes: probed each time it turns STALE, never gone. */
	now += 100 * SEC;
	RT_CHECK(roce_net_resolve(n, peer_ip, 0, now, &mac) == -EAGAIN &&
			expect_requests(n, &bcast_mac, peer_ip) == 1, "resolving");
	mk_arp(&rep, -1, &our_mac, &peer_mac, 2, peer_ip, &our_mac, our_ip);
	free_all(out, inject(n, &rep, now, out));
	for (i = 1; i <= 12; i++) {
		t = now + i * 10 * SEC;
		roce_net_poll(n, t);
		m = roce_frame(0, peer_ip, i);
		RT_CHECK(roce_net_output(n, m, peer_ip, 0, t) == ROCE_NET_SEND, "sent at %u0 s", i);
		rte_pktmbuf_free(m);
		k = expect_requests(n, &peer_mac, peer_ip);
		probes += k;
		if (k != 0)
			free_all(out, inject(n, &rep, t, out));
	}
	RT_CHECK(probes == 4 && cnt(n, ROCE_NET_C_EXPIRED) == 1, "4 probes (%u), still there",
			probes);
	/* Unused from then on: it goes gc_stale_ns after the last use and confirmation. */
	now = t;
	roce_net_poll(n, now + 60 * SEC - 1);
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip, 0, now + 60 * SEC - 1, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_STALE, "STALE, kept (%u)", ni.state);
	roce_net_poll(n, now + 60 * SEC);
	RT_CHECK(!has_neigh(n, peer_ip, 0, now) && cnt(n, ROCE_NET_C_EXPIRED) == 2, "expired");
	/* The next frame resolves it from scratch: queued, broadcast, released. */
	now += 61 * SEC;
	RT_CHECK(roce_net_output(n, roce_frame(0, peer_ip, 99), peer_ip, 0, now) ==
			ROCE_NET_HELD && cnt(n, ROCE_NET_C_QUEUED) == 1, "queued");
	RT_CHECK(expect_requests(n, &bcast_mac, peer_ip) == 1, "resolved again");
	k = inject(n, &rep, now, out);
	RT_CHECK(k == 1, "released");
	if (k == 1) {
		copy_frame(out[0], b);
		RT_CHECK(mac_is(b, &peer_mac), "with its MAC");
	}
	free_all(out, k);

	/* PERMANENT entries never go. */
	RT_CHECK(roce_net_neigh_add(n, other_ip, 0, &peer2_mac, 1, now) == 0, "add permanent");
	roce_net_poll(n, now + 1000 * SEC);
	RT_CHECK(roce_net_neigh_lookup(n, other_ip, 0, now + 1000 * SEC, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_PERMANENT && !has_neigh(n, peer_ip, 0, now),
			"permanent kept, the other expired");
	roce_net_free(n);

	/* Both times are configurable; an entry goes no sooner than it turns STALE. */
	c.reachable_ns = 2 * SEC;
	c.gc_stale_ns = 5 * SEC;
	n = mk_net(&c);
	RT_CHECK(roce_net_neigh_add(n, peer_ip, 0, &peer_mac, 0, T0) == 0, "add");
	RT_CHECK(roce_net_neigh_lookup(n, peer_ip, 0, T0 + 2 * SEC, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_STALE, "STALE after 2 s");
	roce_net_poll(n, T0 + 5 * SEC - 1);
	RT_CHECK(has_neigh(n, peer_ip, 0, T0), "kept until 5 s");
	roce_net_poll(n, T0 + 5 * SEC);
	RT_CHECK(!has_neigh(n, peer_ip, 0, T0), "gone at 5 s");
	roce_net_free(n);
	c.reachable_ns = 10 * SEC;
	c.gc_stale_ns = 3 * SEC;
	n = mk_net(&c);
	RT_CHECK(roce_net_neigh_add(n, peer_ip, 0, &peer_mac, 0, T0) == 0, "add");
	for (i = 3; i < 10; i++)
		roce_net_poll(n, T0 + i * SEC);
	RT_CHECK(has_neigh(n, peer_ip, 0, T0), "REACHABLE is not collected");
	roce_net_poll(n, T0 + 10 * SEC);
	RT_CHECK(!has_neigh(n, peer_ip, 0, T0), "gone once STALE");
	roce_net_free(n);
	check_no_leak("expiry");
}

/* Only senders on our prefixes are learned; the rest are answered all the same. */
static void
test_learn_offlink(void)
{
	static const uint8_t off4[4] = { 10, 0, 1, 7 };
	struct roce_net_conf c = base_conf();
	struct rte_mbuf *out[OUT_MAX];
	struct rte_ether_addr mac;
	struct roce_net *n;
	struct fb f;
	uint16_t k;

	memcpy(c.gw6, gw_ll, 16);
	n = mk_net(&c);
	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, off4, &zero_mac, our_ip);
	k = inject(n, &f, T0, out);
	free_all(out, k);
	RT_CHECK(k == 1 && cnt(n, ROCE_NET_C_ARP_REPLY_TX) == 1, "off-subnet ARP answered");
	RT_CHECK(!has_neigh(n, off4, 0, T0) && cnt(n, ROCE_NET_C_LEARN_OFFLINK) == 1 &&
			cnt(n, ROCE_NET_C_LEARNED) == 0, "not learned, counted");
	mk_ns(&f, far_ip6, our_ip6, &peer_mac, 255);
	k = inject(n, &f, T0, out);
	free_all(out, k);
	RT_CHECK(k == 1 && !has_neigh(n, far_ip6, 1, T0) &&
			cnt(n, ROCE_NET_C_LEARN_OFFLINK) == 2, "NS from off our /64: answered");

	/* The subnet, our IPv6 prefix and link-local addresses are learned. */
	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	free_all(out, inject(n, &f, T0, out));
	mk_ns(&f, peer_ip6, our_ip6, &peer_mac, 255);
	free_all(out, inject(n, &f, T0, out));
	mk_ns(&f, peer_ll, our_ll, &peer2_mac, 255);
	free_all(out, inject(n, &f, T0, out));
	RT_CHECK(has_neigh(n, peer_ip, 0, T0) && has_neigh(n, peer_ip6, 1, T0) &&
			has_neigh(n, peer_ll, 1, T0) && cnt(n, ROCE_NET_C_LEARNED) == 3 &&
			cnt(n, ROCE_NET_C_LEARN_OFFLINK) == 2, "on-link senders learned");
	/* Traffic to the off-subnet sender goes through the gateway. */
	RT_CHECK(roce_net_resolve(n, off4, 0, T0, &mac) == -EAGAIN &&
			expect_requests(n, &bcast_mac, gw_ip) == 1, "via the gateway");
	roce_net_free(n);

	/* A /0 puts every IPv4 sender on the link. */
	c.ip4_prefix_len = 0;
	n = mk_net(&c);
	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, far_ip, &zero_mac, our_ip);
	free_all(out, inject(n, &f, T0, out));
	RT_CHECK(has_neigh(n, far_ip, 0, T0) && cnt(n, ROCE_NET_C_LEARN_OFFLINK) == 0, "/0");
	roce_net_free(n);
	check_no_leak("learn_offlink");
}

/* A full table gives way to learning only with entries nobody uses; refusals are counted. */
static void
test_learn_full(void)
{
	struct roce_net_conf c = base_conf();
	uint8_t ip[4] = { 10, 0, 0, 10 }, sip[4] = { 10, 0, 0, 50 };
	struct rte_mbuf *out[OUT_MAX];
	struct rte_ether_addr mac;
	struct roce_net *n;
	unsigned int i;
	struct fb f;
	uint16_t k;

	c.neigh_max = 4;
	n = mk_net(&c);
	for (i = 0; i < 4; i++) {
		ip[3] = (uint8_t)(10 + i);
		RT_CHECK(roce_net_neigh_add(n, ip, 0, &peer_mac, 0, T0) == 0, "add %u", i);
	}
	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	k = inject(n, &f, T0 + SEC, out);
	free_all(out, k);
	RT_CHECK(k == 1 && cnt(n, ROCE_NET_C_LEARN_FULL) == 1 && cnt(n, ROCE_NET_C_LEARNED) == 0,
			"fresh entries: answered, not learned, counted");
	/* .10 is used at 20 s; at 31 s the other three are STALE and idle for 31 s. */
	ip[3] = 10;
	RT_CHECK(roce_net_resolve(n, ip, 0, T0 + 20 * SEC, &mac) == 0, "in use");
	for (i = 0; i < 4; i++) {
		sip[3] = (uint8_t)(50 + i);
		mk_arp(&f, -1, &bcast_mac, &peer2_mac, 1, sip, &zero_mac, our_ip);
		free_all(out, inject(n, &f, T0 + 31 * SEC, out));
	}
	RT_CHECK(cnt(n, ROCE_NET_C_LEARNED) == 3 && cnt(n, ROCE_NET_C_EVICTED) == 3 &&
			cnt(n, ROCE_NET_C_LEARN_FULL) == 2, "3 idle entries gave way: learned %lu",
			(unsigned long)cnt(n, ROCE_NET_C_LEARNED));
	RT_CHECK(has_neigh(n, ip, 0, T0) && !has_neigh(n, sip, 0, T0), "the one in use stayed");
	roce_net_free(n);
	check_no_leak("learn_full");
}

/* Flush: every entry but PERMANENT ones, their queues freed; the next use resolves again. */
static void
test_flush(void)
{
	static const uint8_t pending[4] = { 10, 0, 0, 20 };
	struct roce_net_conf c = base_conf();
	struct roce_net *n = mk_net(&c);
	struct roce_net_neigh_info ni[8];
	struct rte_mbuf *out[OUT_MAX];
	uint64_t dropped;
	unsigned int i;
	struct fb f;

	RT_CHECK(roce_net_neigh_add(n, peer_ip, 0, &peer_mac, 1, T0) == 0 &&
			roce_net_neigh_add(n, peer_ll, 1, &peer_mac, 0, T0) == 0, "add");
	mk_arp(&f, -1, &bcast_mac, &peer2_mac, 1, other_ip, &zero_mac, our_ip);
	free_all(out, inject(n, &f, T0, out));
	for (i = 0; i < 3; i++)
		RT_CHECK(roce_net_output(n, roce_frame(0, pending, i), pending, 0, T0) ==
				ROCE_NET_HELD, "queued %u", i);
	free_all(out, roce_net_tx(n, out, OUT_MAX));
	RT_CHECK(roce_net_neigh_dump(n, T0, ni, 8) == 4, "4 entries");
	dropped = cnt(n, ROCE_NET_C_FAILED_DROP);
	RT_CHECK(roce_net_neigh_flush(n) == 3, "3 flushed");
	RT_CHECK(cnt(n, ROCE_NET_C_FAILED_DROP) == dropped + 3, "queued frames freed");
	RT_CHECK(roce_net_neigh_dump(n, T0, ni, 8) == 1 && ni[0].state == ROCE_NET_NEIGH_PERMANENT,
			"PERMANENT kept");
	RT_CHECK(roce_net_output(n, roce_frame(0, other_ip, 0), other_ip, 0, T0) ==
			ROCE_NET_HELD && expect_requests(n, &bcast_mac, other_ip) == 1,
			"resolves again");
	RT_CHECK(roce_net_neigh_del(n, peer_ip, 0) == 0 && roce_net_neigh_flush(n) == 1 &&
			roce_net_neigh_flush(n) == 0 && roce_net_neigh_dump(n, T0, ni, 8) == 0,
			"empty");
	roce_net_free(n);
	check_no_leak("flush");
}

/* Full tx ring, empty pool, bad arguments, restarts without a poll. */
static void
test_edges(void)
{
	struct rte_mempool *small = rt_pool(16, 256);
	struct roce_net_conf c = base_conf();
	struct rte_mbuf *out[OUT_MAX], *taken[32], *m;
	static const uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 };
	struct roce_net_neigh_info ni;
	struct rte_ether_addr mac;
	unsigned int nb_taken = 0, i;
	uint64_t now = T0;
	struct roce_net *n;
	struct fb f;
	uint16_t k;

	c.mp = small;
	c.tx_ring_size = 4;
	n = mk_net(&c);
	/* One request and eight released frames into a ring of four. */
	for (i = 0; i < 8; i++)
		RT_CHECK(roce_net_output(n, roce_frame(0, peer_ip, i), peer_ip, 0, now) ==
				ROCE_NET_HELD, "held");
	RT_CHECK(roce_net_neigh_add(n, peer_ip, 0, &peer_mac, 0, now) == 0, "add");
	RT_CHECK(cnt(n, ROCE_NET_C_TX_FULL) == 5 && cnt(n, ROCE_NET_C_FLUSHED) == 8,
			"tx full %lu", (unsigned long)cnt(n, ROCE_NET_C_TX_FULL));
	k = roce_net_tx(n, out, OUT_MAX);
	RT_CHECK(k == 4, "four kept");
	free_all(out, k);

	/* No mbuf for requests or replies; an echo needs none. */
	while (nb_taken < RTE_DIM(taken) && (m = rte_pktmbuf_alloc(small)) != NULL)
		taken[nb_taken++] = m;
	RT_CHECK(roce_net_resolve(n, other_ip, 0, now, &mac) == -EAGAIN &&
			cnt(n, ROCE_NET_C_NO_MBUF) == 1, "request without mbuf");
	mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	expect_drop(n, &f, ROCE_NET_C_REPLY_NOMBUF, "ARP reply without mbuf");
	mk_ns(&f, peer_ll, our_ll, &peer_mac, 255);
	expect_drop(n, &f, ROCE_NET_C_REPLY_NOMBUF, "NA without mbuf");
	mk_icmp_echo(&f, peer_ip, our_ip, 1, 1, 10, 0);
	k = inject(n, &f, now, out);
	RT_CHECK(k == 1, "echo answered in place");
	free_all(out, k);
	free_all(taken, (uint16_t)nb_taken);

	/* Runt frames and addresses that are no neighbour's. */
	m = rte_pktmbuf_alloc(pool);
	memset(rte_pktmbuf_append(m, 10), 0, 10);
	RT_CHECK(roce_net_output(n, m, peer_ip, 0, now) == ROCE_NET_HELD &&
			cnt(n, ROCE_NET_C_BAD_FRAME) == 1, "runt");
	RT_CHECK(roce_net_resolve(n, all_nodes, 1, now, &mac) == -EINVAL &&
			roce_net_resolve(n, our_ll, 1, now, &mac) == -EINVAL &&
			roce_net_resolve(n, mapped, 1, now, &mac) == -EINVAL &&
			roce_net_neigh_add(n, mapped, 1, &peer_mac, 0, now) == -EINVAL &&
			roce_net_neigh_add(n, peer_ll, 1, &bcast_mac, 0, now) == -EINVAL &&
			roce_net_neigh_lookup(n, unspec, 1, now, &ni) == -EINVAL &&
			roce_net_neigh_del(n, our_ip, 0) == -EINVAL, "bad addresses");

	/* An NA without an address option confirms the MAC we have. */
	RT_CHECK(roce_net_neigh_add(n, peer_ll, 1, &peer_mac, 0, now) == 0, "add v6");
	now += 31 * SEC;
	mk_na(&f, &peer_mac, peer_ll, peer_ll, 0x40000000, NULL);
	k = inject(n, &f, now, out);
	RT_CHECK(k == 0 && roce_net_neigh_lookup(n, peer_ll, 1, now, &ni) == 0 &&
			ni.state == ROCE_NET_NEIGH_REACHABLE, "confirmed (%u)", ni.state);

	/* A FAILED neighbour asked for after its hold-down, before any poll, starts over. */
	free_all(out, roce_net_tx(n, out, OUT_MAX));
	for (i = 1; i <= 3; i++)
		roce_net_poll(n, now + i * SEC);
	RT_CHECK(roce_net_resolve(n, other_ip, 0, now + 3 * SEC, &mac) == -EHOSTUNREACH,
			"FAILED");
	free_all(out, roce_net_tx(n, out, OUT_MAX));
	RT_CHECK(roce_net_resolve(n, other_ip, 0, now + 9 * SEC, &mac) == -EAGAIN, "restarted");
	k = roce_net_tx(n, out, OUT_MAX);
	RT_CHECK(k == 1, "with a request");
	free_all(out, k);
	roce_net_free(n);
	rte_mempool_free(small);
	check_no_leak("edges");
}

/* ---- malformed matrix ---- */

/* Feed @f as given; @return replies. Each frame must count once; nothing may leak. */
static uint16_t
feed_checked(struct roce_net *n, const struct fb *f, uint32_t seg, const char *what)
{
	struct rte_mbuf *out[OUT_MAX];
	uint64_t sum = input_sum(n);
	uint16_t k = inject_seg(n, f, seg, T0, out);

	RT_CHECK(input_sum(n) == sum + 1, "%s: counted %lu times", what,
			(unsigned long)(input_sum(n) - sum));
	RT_CHECK(k <= 1, "%s: %u frames out", what, k);
	free_all(out, k);
	return k;
}

static void
test_malformed(void)
{
	struct roce_net_conf c = base_conf();
	struct roce_net *n;
	struct fb valid[5], f;
	/* Bytes each message needs before it can be answered. */
	const uint32_t need[5] = { 42, 0, 86, 0, 42 };
	unsigned int v, i, bit, answered;
	uint32_t len, seg;

	n = mk_net(&c);
	mk_arp(&valid[0], -1, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	mk_icmp_echo(&valid[1], peer_ip, our_ip, 1, 2, 64, 1);
	mk_ns(&valid[2], peer_ll, our_ll, &peer_mac, 255);
	mk_echo6(&valid[3], &our_mac, peer_ll, our_ll, 32);
	mk_arp(&valid[4], 7, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
	for (v = 0; v < 5; v++) {
		/* Every truncation: answered only when the whole message is there. */
		for (len = 0; len < valid[v].len; len++) {
			f = valid[v];
			f.len = len;
			answered = feed_checked(n, &f, 0, "truncated");
			RT_CHECK(answered == (v != 4 && need[v] != 0 && len >= need[v]),
					"frame %u cut to %u: %u", v, len, answered);
		}
		/* Every segmentation answers, or counts the split. */
		for (seg = 1; seg <= valid[v].len; seg += seg < 20 ? 1 : 7)
			feed_checked(n, &valid[v], seg, "segmented");
		/* Every single-bit flip. */
		for (i = 0; i < valid[v].len; i++)
			for (bit = 0; bit < 8; bit++) {
				f = valid[v];
				f.b[i] ^= (uint8_t)(1 << bit);
				feed_checked(n, &f, 0, "bit flip");
			}
	}
	RT_CHECK(cnt(n, ROCE_NET_C_ARP_SHORT) > 0 && cnt(n, ROCE_NET_C_NOT_NET) > 0 &&
			cnt(n, ROCE_NET_C_ARP_FORMAT) > 0 && cnt(n, ROCE_NET_C_ICMP_CSUM) > 0 &&
			cnt(n, ROCE_NET_C_ICMP6_CSUM) > 0 && cnt(n, ROCE_NET_C_ND_HOPLIMIT) > 0 &&
			cnt(n, ROCE_NET_C_SPLIT) > 0, "the matrix reached the checks");

	/* ARP with the wrong sizes and types. */
	for (i = 0; i < 6; i++) {
		static const struct { uint32_t off; uint8_t val; } bad[] = {
			{ 15, 6 }, { 16, 0x86 }, { 18, 5 }, { 18, 7 }, { 19, 16 }, { 21, 3 },
		};

		f = valid[0];
		f.b[bad[i].off] = bad[i].val;
		expect_drop(n, &f, i == 5 ? ROCE_NET_C_ARP_OP : ROCE_NET_C_ARP_FORMAT, "ARP sizes");
	}
	/* ICMP whose IP length leaves less than its header (checksum made right). */
	{
		uint8_t msg[4] = { 8, 0, 0xf7, 0xff };

		mk_ip4(&f, -1, &our_mac, &peer_mac, peer_ip, our_ip, 1, msg, 4, 0);
		expect_drop(n, &f, ROCE_NET_C_ICMP_SHORT, "truncated ICMP");
	}
	roce_net_free(n);
	check_no_leak("malformed");
}

/* ---- independent decoder ---- */

/* scapy decodes one ARP reply and one NA as we expect, checksums included. */
static void
test_scapy(void)
{
	static const char *script =
		"import sys\n"
		"from scapy.all import Ether, ARP, IPv6, ICMPv6ND_NA, ICMPv6NDOptDstLLAddr\n"
		"a = Ether(bytes.fromhex(sys.argv[1]))\n"
		"assert a[ARP].op == 2 and a[ARP].hwsrc == '02:00:00:00:00:01'\n"
		"assert a[ARP].psrc == '10.0.0.1' and a[ARP].pdst == '10.0.0.2'\n"
		"assert a[ARP].hwdst == '02:00:00:00:00:02' and a.dst == '02:00:00:00:00:02'\n"
		"na = Ether(bytes.fromhex(sys.argv[2]))\n"
		"ck = na[ICMPv6ND_NA].cksum\n"
		"del na[ICMPv6ND_NA].cksum\n"
		"assert Ether(bytes(na))[ICMPv6ND_NA].cksum == ck, 'checksum'\n"
		"f = na[ICMPv6ND_NA]\n"
		"assert f.S == 1 and f.O == 1 and f.R == 0\n"
		"assert na[ICMPv6ND_NA].tgt == 'fe80::ff:fe00:1' and na[IPv6].hlim == 255\n"
		"assert na[ICMPv6NDOptDstLLAddr].lladdr == '02:00:00:00:00:01'\n"
		"print('scapy ok')\n";
	struct roce_net_conf c = base_conf();
	struct roce_net *n;
	struct rte_mbuf *out[OUT_MAX];
	char cmd[4096], hex[2][400];
	uint8_t b[FRAME_MAX];
	struct fb f;
	uint32_t len, i;
	uint16_t k;
	FILE *p;
	int v;

	if (access("/usr/bin/python3", X_OK) != 0) {
		printf("test_scapy: no /usr/bin/python3, skipped\n");
		return;
	}
	n = mk_net(&c);
	for (v = 0; v < 2; v++) {
		if (v == 0)
			mk_arp(&f, -1, &bcast_mac, &peer_mac, 1, peer_ip, &zero_mac, our_ip);
		else
			mk_ns(&f, peer_ll, our_ll, &peer_mac, 255);
		k = inject(n, &f, T0, out);
		RT_CHECK(k == 1, "reply %d", v);
		len = k == 1 ? copy_frame(out[0], b) : 0;
		for (i = 0; i < len; i++)
			snprintf(hex[v] + 2 * i, 3, "%02x", b[i]);
		hex[v][2 * len] = 0;
		free_all(out, k);
	}
	roce_net_free(n);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c \"$ROCE_NET_PY\" %s %s 2>&1", hex[0],
			hex[1]);
	setenv("ROCE_NET_PY", script, 1);
	p = popen(cmd, "r");
	RT_CHECK(p != NULL, "popen");
	if (p != NULL) {
		char line[512] = "", last[512] = "";
		int st;

		while (fgets(line, sizeof(line), p) != NULL)
			snprintf(last, sizeof(last), "%s", line);
		st = pclose(p);
		if (strstr(last, "No module named") != NULL) {
			printf("test_scapy: scapy missing, skipped\n");
			return;
		}
		RT_CHECK(st == 0 && strncmp(last, "scapy ok", 8) == 0, "scapy: %s", last);
	}
	check_no_leak("scapy");
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	pool = rt_pool(1024, FRAME_MAX);
	RT_RUN(test_create);
	RT_RUN(test_arp_reply);
	RT_RUN(test_arp_ignored);
	RT_RUN(test_icmp_echo);
	RT_RUN(test_icmp_shared);
	RT_RUN(test_ns_na);
	RT_RUN(test_echo6);
	RT_RUN(test_resolve_v4);
	RT_RUN(test_resolve_v6);
	RT_RUN(test_gateway);
	RT_RUN(test_path);
	RT_RUN(test_table_full);
	RT_RUN(test_expiry);
	RT_RUN(test_learn_offlink);
	RT_RUN(test_learn_full);
	RT_RUN(test_flush);
	RT_RUN(test_edges);
	RT_RUN(test_malformed);
	RT_RUN(test_scapy);
	return rt_report("test_net");
}
