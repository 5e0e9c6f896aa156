/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_NET_PRIVATE_H
#define ROCE_NET_PRIVATE_H

#include <stdbool.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "roce_net.h"
#include "roce_pkt.h"

extern int roce_net_logtype;
#define ROCE_LOG(level, ...) \
	rte_log(RTE_LOG_##level, roce_net_logtype, "net: " __VA_ARGS__)

#define NET_NIL UINT32_MAX
#define NET_OK (-1)             /* checks passed: not a counter */
#define NET_ETH_MIN 60          /* shortest Ethernet frame, FCS excluded */
#define NET_MBUF_MIN 128        /* room our own frames need */

#define NET_ICMP6_UNREACH 1
#define NET_ICMP6_ECHO_REQUEST 128
#define NET_ICMP6_ECHO_REPLY 129
#define NET_ND_NS 135
#define NET_ND_NA 136
#define NET_ND_OPT_SLLA 1
#define NET_ND_OPT_TLLA 2
#define NET_NA_F_ROUTER 0x80000000u
#define NET_NA_F_SOLICITED 0x40000000u
#define NET_NA_F_OVERRIDE 0x20000000u
#define NET_ND_HOPLIMIT 255
#define NET_TTL 64

/* NS and NA (RFC 4861 4.3, 4.4): for NS, flags is the reserved word. */
struct net_nd_msg {
	uint8_t type;
	uint8_t code;
	rte_be16_t cksum;
	rte_be32_t flags;
	uint8_t target[16];
} __rte_packed __rte_aligned(2);

/* Source/target link-layer address option for Ethernet. */
struct net_nd_lla {
	uint8_t type;
	uint8_t len;            /* units of 8 bytes: 1 */
	struct rte_ether_addr mac;
} __rte_packed __rte_aligned(2);

#define NET_ND_LEN ((uint32_t)sizeof(struct net_nd_msg))
#define NET_ND_LLA_LEN ((uint32_t)sizeof(struct net_nd_lla))

/*
 * A neighbour. The key is the IPv6 address, or ::ffff:a.b.c.d for IPv4: one compare for both
 * families; IPv4-mapped addresses are refused wherever IPv6 comes in, so keys cannot collide.
 */
struct net_neigh {
	uint8_t ip[16];
	struct rte_ether_addr mac;
	uint8_t state;          /* enum roce_net_neigh_state */
	uint8_t probes;         /* requests sent in this INCOMPLETE or PROBE round */
	uint8_t nq;             /* frames in q[] */
	uint32_t next;          /* hash chain, or free list */
	uint64_t confirmed;     /* last confirmation */
	uint64_t used;          /* creation or last output: the least recently used is evicted,
				 * and an entry unused for gc_stale_ns removed */
	uint64_t updated;       /* last change of MAC or state by a frame or the control path */
	uint64_t deadline;      /* INCOMPLETE, PROBE: next request; FAILED: end of hold-down */
	struct rte_mbuf *q[ROCE_NET_QUEUE_LEN];
};

struct roce_net {
	struct roce_net_conf conf;      /* defaults filled in */
	rte_be32_t mask4;
	uint8_t has_ip6;                /* a global IPv6 address is configured */
	uint8_t has_gw6;
	uint8_t ll6[16];                /* our link-local address */
	uint64_t next_due;              /* earliest deadline or collection time of any entry */
	struct net_neigh *neigh;
	uint32_t *bucket;
	uint32_t bucket_mask;
	uint32_t free_head;
	uint32_t nb_used;
	uint32_t tx_mask;
	uint32_t tx_head;
	uint32_t tx_tail;
	struct rte_mbuf **tx;
	uint64_t c[ROCE_NET_C_NUM];
};

/* Input handlers: *mp is the frame. Return the counter of the outcome; when it is a reply
 * counter (<= ROCE_NET_C_LAST_REPLY) *mp is the frame to send, else *mp (which may have been
 * replaced, or be NULL) is freed by the caller.
 */
typedef int (*net_input_fn)(struct roce_net *n, struct rte_mbuf **mp,
		const struct roce_pkt_meta *meta, uint64_t now);

/* arp.c */
int net_arp_input(struct roce_net *n, struct rte_mbuf **mp, const struct roce_pkt_meta *meta,
		uint64_t now);
/* Send an ARP request for @tip: broadcast, or unicast to @dst (a probe). */
void net_arp_solicit(struct roce_net *n, rte_be32_t tip, const struct rte_ether_addr *dst);

/* icmp.c */
int net_icmp_input(struct roce_net *n, struct rte_mbuf **mp, const struct roce_pkt_meta *meta,
		uint64_t now);

/* icmp6.c */
int net_icmp6_input(struct roce_net *n, struct rte_mbuf **mp, const struct roce_pkt_meta *meta,
		uint64_t now);

/* Ones' complement sum (not complemented, memory order) of @len bytes at @off of a chain
 * holding them. rte_raw_cksum_mbuf() of DPDK 22.11 loses carries on odd-length segments.
 */
uint16_t net_cksum_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len);
/* Ones' complement sum of the IPv6 pseudo-header and the ICMPv6 message at @l4 (0xffff when
 * the checksum in it is right).
 */
uint16_t net_icmp6_sum(const struct rte_mbuf *m, const struct rte_ipv6_hdr *ip6, uint32_t l4);
/* Make @m, a received frame, ours to modify in place: @return it, or a copy (@m freed), or
 * NULL when there is no mbuf for the copy (@m untouched).
 */
struct rte_mbuf *net_mbuf_own(struct roce_net *n, struct rte_mbuf *m);

/* nd.c: @l4 is the ICMPv6 offset; the checksum and addresses are checked. */
int net_nd_ns_input(struct roce_net *n, struct rte_mbuf **mp, uint32_t l4, uint64_t now);
int net_nd_na_input(struct roce_net *n, struct rte_mbuf **mp, uint32_t l4, uint64_t now);
/* Send a solicitation for @target: to its solicited-node group, or unicast to @dst. */
void net_nd_solicit(struct roce_net *n, const uint8_t *target, const struct rte_ether_addr *dst);

/* neigh.c */
int net_neigh_init(struct roce_net *n);
void net_neigh_fini(struct roce_net *n);
/*
 * Update an entry from a received frame, as Linux's neigh_update(): @mac NULL keeps the
 * known MAC; @override 0 does not replace a different MAC (a REACHABLE entry turns STALE);
 * @reachable confirms it. @create makes the entry (STALE) from a free slot when there is none.
 * @return 1 when an entry exists afterwards, 0 when none does.
 */
int net_neigh_learn(struct roce_net *n, const uint8_t *key, const struct rte_ether_addr *mac,
		bool reachable, bool override, bool create, uint64_t now);
void net_neigh_timers(struct roce_net *n, uint64_t now);

/* net.c */
void net_tx_push(struct roce_net *n, struct rte_mbuf *m);
/* Write our Ethernet (and VLAN) header to @dst; @return its length. */
uint32_t net_l2_hdr(const struct roce_net *n, uint8_t *p, const struct rte_ether_addr *dst,
		uint16_t ether_type);
/* Keep the first @len bytes of @m (<= pkt_len), then zero-pad to NET_ETH_MIN if there is
 * room.
 */
void net_mbuf_trim(struct rte_mbuf *m, uint32_t len);
/* 1 when @a (network order) can be a unicast host on our link or beyond. */
bool net_ip4_unicast(const struct roce_net *n, rte_be32_t a);
/* Our IPv6 address that @ip is, or NULL. */
const uint8_t *net_ip6_ours(const struct roce_net *n, const uint8_t *ip);
/* Source address for a packet to @dst: link-local unless @dst is global and we have one. */
const uint8_t *net_ip6_src(const struct roce_net *n, const uint8_t *dst);

static inline bool
net_ip6_mcast(const uint8_t *ip)
{
	return ip[0] == 0xff;
}

static inline bool
net_ip6_unspec(const uint8_t *ip)
{
	static const uint8_t zero[16];

	return memcmp(ip, zero, 16) == 0;
}

static inline bool
net_ip6_v4mapped(const uint8_t *ip)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(ip, pfx, 12) == 0;
}

static inline bool
net_ip6_loopback(const uint8_t *ip)
{
	static const uint8_t lo[16] = { [15] = 1 };

	return memcmp(ip, lo, 16) == 0;
}

/* A unicast address a neighbour may have. */
static inline bool
net_ip6_unicast(const uint8_t *ip)
{
	return !net_ip6_mcast(ip) && !net_ip6_unspec(ip) && !net_ip6_v4mapped(ip) &&
		!net_ip6_loopback(ip);
}

static inline bool
net_ip6_linklocal(const uint8_t *ip)
{
	return ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80;
}

/* 1 when the first @len bits of @a and @b are equal (@len <= 128). */
static inline bool
net_ip6_prefix_eq(const uint8_t *a, const uint8_t *b, uint8_t len)
{
	uint8_t bytes = len / 8, bits = len % 8;

	if (memcmp(a, b, bytes) != 0)
		return false;
	return bits == 0 || ((a[bytes] ^ b[bytes]) & (0xff << (8 - bits))) == 0;
}

/* ff02::1:ffXX:XXXX of @target. */
static inline void
net_ip6_snm(const uint8_t *target, uint8_t *out)
{
	static const uint8_t pfx[13] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };

	memcpy(out, pfx, sizeof(pfx));
	memcpy(out + 13, target + 13, 3);
}

/* 33:33 followed by the low 32 bits of a multicast IPv6 address. */
static inline void
net_mac_mcast6(const uint8_t *ip, struct rte_ether_addr *mac)
{
	mac->addr_bytes[0] = 0x33;
	mac->addr_bytes[1] = 0x33;
	memcpy(&mac->addr_bytes[2], ip + 12, 4);
}

static inline void
net_key4(rte_be32_t a, uint8_t *key)
{
	memset(key, 0, 10);
	key[10] = 0xff;
	key[11] = 0xff;
	memcpy(key + 12, &a, 4);
}

static inline uint64_t
net_after(uint64_t now, uint64_t delta)
{
	return now > UINT64_MAX - delta ? UINT64_MAX : now + delta;
}

#endif /* ROCE_NET_PRIVATE_H */
