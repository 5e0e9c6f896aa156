/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: lib/net. Input: a selector byte, an operations byte, then a frame.
 *
 * Selector: bits 0-3 segment length, bit 4 which instance (plain, or VLAN 100 with a 4-entry
 * table, an 8-frame tx ring and MTU 576), bit 5 make the IPv4 header, ICMP and ICMPv6
 * checksums right so that mutations get past them, bit 6 feed the frame twice, bit 7 step
 * the clock 31 s first (entries go STALE).
 * Operations: bits 0-2 a resolution call after the input (output, resolve, add, delete, path),
 * bits 3-7 the host part of its address.
 *
 * Each input runs on a fresh instance that already waits for 10.0.0.2 and fe80::2 (frames
 * queued), so that ARP replies and advertisements in the corpus resolve them. The frame is
 * classified, given to roce_net_input(), then the operation runs and the clock steps through
 * retries and failures. Aborts when a frame is not counted exactly once, when something we
 * send is not well formed (our source MAC, chain lengths, the classifier's verdict, ICMP and
 * ICMPv6 checksums), or when an mbuf leaks.
 *
 * Seeds (corpus/fuzz_net/): ARP request and reply, ICMP echo with options, NS, NA, ICMPv6
 * echo, a tagged ARP request, made with scapy and the selector/operation bytes prepended.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_net.h"
#include "roce_test.h"
#include "roce_wire.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FRAME_MAX 2048
#define MAX_SEGS 16
#define OUT_MAX 64
#define SEC 1000000000ull
#define T0 (1000 * SEC)

#define FUZZ_ASSERT(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_net: %s: ", #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

static struct rte_mempool *pool;
static struct roce_net_conf confs[2];
static struct roce_wire_stats wstats;
static const uint16_t seg_lens[16] = {
	0, 0, 0, 0, 1, 13, 14, 18, 41, 42, 53, 54, 62, 63, 86, 101,
};
static const struct rte_ether_addr our_mac = {{ 0x02, 0, 0, 0, 0, 0x01 }};
static const struct rte_ether_addr some_mac = {{ 0x02, 0, 0, 0, 0, 0x33 }};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const uint8_t ip6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const uint8_t gw6[16] = { 0xfe, 0x80, [15] = 0xfe };
	int i;

	RTE_SET_USED(argc);
	rt_eal_init((*argv)[0]);
	pool = rt_pool(1024, FRAME_MAX);
	for (i = 0; i < 2; i++) {
		struct roce_net_conf *c = &confs[i];

		c->mac = our_mac;
		c->ip4 = rte_cpu_to_be_32(0x0a000001);
		c->ip4_prefix_len = 24;
		c->gw4 = rte_cpu_to_be_32(0x0a0000fe);
		memcpy(c->ip6, ip6, 16);
		c->ip6_prefix_len = 64;
		memcpy(c->gw6, gw6, 16);
		c->mp = pool;
		c->socket_id = SOCKET_ID_ANY;
	}
	confs[1].vlan = 1;
	confs[1].vlan_tci = 100;
	confs[1].neigh_max = 4;
	confs[1].tx_ring_size = 8;
	confs[1].mtu = 576;
	return 0;
}

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
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

static void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* ICMPv6 sum over the pseudo-header and @len bytes at @l4 (0xffff when right). */
static uint16_t
icmp6_sum(const uint8_t *b, uint32_t l3, uint32_t len)
{
	uint32_t s = sum16(b + l3 + 8, 32, 0);

	s += len >> 16;
	s += len & 0xffff;
	s += 58;
	return fold(sum16(b + l3 + 40, len, s));
}

/* IPv4 header, ICMP and ICMPv6 checksums made right where the frame has room for them. */
static void
fix_csums(uint8_t *b, uint32_t len)
{
	uint32_t l3 = 14, ihl, tot, plen;
	uint16_t et;

	if (len < 18)
		return;
	et = rd16(b + 12);
	if (et == 0x8100 || et == 0x88A8) {
		et = rd16(b + 16);
		l3 = 18;
	}
	if (et == 0x0800 && len >= l3 + 20) {
		ihl = (b[l3] & 0x0F) * 4u;
		if (ihl < 20 || l3 + ihl > len)
			return;
		wr16(b + l3 + 10, 0);
		wr16(b + l3 + 10, (uint16_t)~fold(sum16(b + l3, ihl, 0)));
		tot = rd16(b + l3 + 2);
		if (b[l3 + 9] == 1 && tot >= ihl + 4 && l3 + tot <= len) {
			wr16(b + l3 + ihl + 2, 0);
			wr16(b + l3 + ihl + 2, (uint16_t)~fold(sum16(b + l3 + ihl, tot - ihl, 0)));
		}
	} else if (et == 0x86DD && len >= l3 + 40) {
		plen = rd16(b + l3 + 4);
		if (b[l3 + 6] == 58 && plen >= 4 && l3 + 40 + plen <= len) {
			wr16(b + l3 + 42, 0);
			wr16(b + l3 + 42, (uint16_t)~icmp6_sum(b, l3, plen));
		}
	}
}

static struct rte_mbuf *
make_mbuf(const uint8_t *b, uint32_t len, uint32_t seg)
{
	struct rte_mbuf *m;

	if (seg != 0 && len / seg >= MAX_SEGS)
		seg = len / (MAX_SEGS - 1) + 1;
	m = rt_mbuf(pool, b, len, seg);
	FUZZ_ASSERT(m != NULL, "out of mbufs (%u bytes)", len);
	return m;
}

/* A RoCE SEND ONLY to @ip (IPv4 or IPv6), destination MAC zero. */
static struct rte_mbuf *
roce_frame(const uint8_t *ip, int v6)
{
	static const uint8_t payload[8];
	struct roce_path path = { .src_mac = our_mac, .ipv6 = (uint8_t)v6, .udp_sport = 0xC001 };
	struct roce_pkt_desc d = { .opcode = ROCE_OP_SEND_ONLY, .dest_qpn = 0x12 };
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	FUZZ_ASSERT(m != NULL, "out of mbufs");
	path.src_ip[0] = 10;
	path.src_ip[3] = 1;
	memcpy(path.dst_ip, ip, v6 ? 16 : 4);
	FUZZ_ASSERT(roce_path_init(&path) == 0 &&
			roce_build_pkt(m, &path, &d, payload, sizeof(payload)) == 0, "build");
	return m;
}

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

/* Something we send: ours, consistent, and what the classifier (and checksums) accept. */
static void
check_sent(struct rte_mbuf *m)
{
	static uint8_t b[FRAME_MAX];
	const struct roce_pkt_meta *meta;
	const struct rte_mbuf *s;
	uint32_t len = 0, l3, l4, tot;

	for (s = m; s != NULL; s = s->next)
		len += s->data_len;
	FUZZ_ASSERT(len == m->pkt_len && m->pkt_len >= 14 && m->pkt_len <= FRAME_MAX,
			"chain %u, pkt_len %u", len, m->pkt_len);
	FUZZ_ASSERT(rt_mbuf_copy(m, b, sizeof(b)) == m->pkt_len, "copy");
	FUZZ_ASSERT(memcmp(b + 6, &our_mac, 6) == 0, "source MAC");
	roce_classify_burst(&m, 1, 0, &wstats);
	meta = roce_pkt_meta(m);
	FUZZ_ASSERT(meta->type == ROCE_PKT_ARP || meta->type == ROCE_PKT_ICMP ||
			meta->type == ROCE_PKT_ICMP6 || meta->type == ROCE_PKT_ROCE,
			"sent a %s frame (reason %u)", roce_pkt_type_name(meta->type),
			meta->reason);
	l3 = meta->l3_off;
	l4 = meta->l4_off;
	if (meta->type == ROCE_PKT_ICMP) {
		tot = rd16(b + l3 + 2);
		FUZZ_ASSERT(b[l3] == 0x45 && b[l4] == 0 &&
				fold(sum16(b + l4, tot - 20, 0)) == 0xffff, "echo reply");
	} else if (meta->type == ROCE_PKT_ICMP6) {
		tot = rd16(b + l3 + 4);
		FUZZ_ASSERT(icmp6_sum(b, l3, tot) == 0xffff &&
				(b[l4] == 129 || b[l4] == 135 || b[l4] == 136), "ICMPv6 type %u",
				b[l4]);
	}
}

static void
drain(struct roce_net *n)
{
	struct rte_mbuf *out[OUT_MAX];
	uint16_t k, i;

	while ((k = roce_net_tx(n, out, OUT_MAX)) != 0)
		for (i = 0; i < k; i++) {
			check_sent(out[i]);
			rte_pktmbuf_free(out[i]);
		}
}

static void
send_or_free(struct roce_net *n, struct rte_mbuf *m, const uint8_t *ip, int v6, uint64_t now)
{
	if (roce_net_output(n, m, ip, v6, now) == ROCE_NET_SEND) {
		check_sent(m);
		rte_pktmbuf_free(m);
	}
}

/* The operation byte's resolution call. */
static void
operate(struct roce_net *n, uint8_t op, uint64_t now)
{
	uint8_t ip4[4] = { 10, 0, 0, (uint8_t)(op >> 3) };
	uint8_t ip6[16] = { 0xfe, 0x80, [15] = (uint8_t)(op >> 3) };
	static const uint8_t far4[4] = { 192, 168, 1, 1 };
	static const uint8_t far6[16] = { 0x20, 0x01, 0x0d, 0xb9, [15] = 1 };
	static const uint8_t global[4] = { 0x20, 0x01, 0x0d, 0xb8 };
	struct roce_path path = { .src_mac = our_mac, .ipv6 = 1, .udp_sport = 0xC002 };
	struct rte_ether_addr mac;
	int ret;

	if (op & 0x80)
		memcpy(ip6, global, 4);
	switch (op & 7) {
	case 1:
		send_or_free(n, roce_frame(ip4, 0), ip4, 0, now);
		break;
	case 2:
		send_or_free(n, roce_frame(ip6, 1), ip6, 1, now);
		break;
	case 3:
		ret = roce_net_resolve(n, ip4, 0, now, &mac);
		FUZZ_ASSERT(ret == 0 || ret == -EAGAIN || ret == -EHOSTUNREACH || ret == -EINVAL ||
				ret == -ENOSPC, "resolve %d", ret);
		break;
	case 4:
		ret = roce_net_neigh_add(n, ip4, 0, &some_mac, op & 0x40, now);
		FUZZ_ASSERT(ret == 0 || ret == -EINVAL || ret == -ENOSPC, "add %d", ret);
		break;
	case 5:
		ret = roce_net_neigh_del(n, ip6, 1);
		FUZZ_ASSERT(ret == 0 || ret == -EINVAL || ret == -ENOENT, "del %d", ret);
		break;
	case 6:
		memcpy(path.dst_ip, ip6, 16);
		ret = roce_net_path_resolve(n, &path, now);
		FUZZ_ASSERT(ret != 0 || rte_is_valid_assigned_ether_addr(&path.dst_mac), "path");
		break;
	case 7:
		send_or_free(n, roce_frame(far4, 0), far4, 0, now);
		send_or_free(n, roce_frame(far6, 1), far6, 1, now);
		break;
	default:
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t peer4[4] = { 10, 0, 0, 2 };
	static const uint8_t peer6[16] = { 0xfe, 0x80, [15] = 2 };
	static uint8_t frame[FRAME_MAX];
	struct rte_mbuf *out[OUT_MAX], *pkts[2];
	struct roce_net_neigh_info dump[8];
	uint64_t now = T0, before;
	uint32_t len, seg;
	struct roce_net *n;
	uint8_t sel, op;
	uint16_t k, i, copies;

	if (size < 2 || size - 2 > FRAME_MAX)
		return 0;
	sel = data[0];
	op = data[1];
	len = size - 2;
	memcpy(frame, data + 2, len);
	if (sel & 0x20)
		fix_csums(frame, len);
	seg = seg_lens[sel & 15];
	copies = sel & 0x40 ? 2 : 1;

	n = roce_net_create(&confs[sel >> 4 & 1]);
	FUZZ_ASSERT(n != NULL, "create");
	send_or_free(n, roce_frame(peer4, 0), peer4, 0, now);
	send_or_free(n, roce_frame(peer6, 1), peer6, 1, now);
	if (sel & 0x80) {
		struct rte_ether_addr m2 = some_mac;

		roce_net_neigh_add(n, peer4, 0, &m2, 0, now);
		now += 31 * SEC;
	}
	for (i = 0; i < copies; i++) {
		pkts[i] = make_mbuf(frame, len, seg);
		roce_classify_burst(&pkts[i], 1, 0, &wstats);
	}
	before = input_sum(n);
	k = roce_net_input(n, pkts, copies, now, out, OUT_MAX);
	FUZZ_ASSERT(input_sum(n) == before + copies, "counted %lu times for %u frames",
			(unsigned long)(input_sum(n) - before), copies);
	for (i = 0; i < k; i++) {
		check_sent(out[i]);
		rte_pktmbuf_free(out[i]);
	}
	operate(n, op, now);
	for (i = 0; i < 8; i++) {
		now += 1100 * 1000 * 1000ull;
		roce_net_poll(n, now);
		drain(n);
		if (i == 3)
			operate(n, op ^ 0x07, now);
	}
	FUZZ_ASSERT(roce_net_neigh_dump(n, now, dump, 8) <= (sel & 0x10 ? 4u : 256u), "dump");
	roce_net_free(n);
	FUZZ_ASSERT(rte_mempool_in_use_count(pool) == 0, "%u mbufs leaked",
			rte_mempool_in_use_count(pool));
	return 0;
}
