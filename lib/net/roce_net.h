/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_NET_H
#define ROCE_NET_H

/**
 * @file
 * Local addresses, ARP and IPv6 neighbour discovery, ICMP/ICMPv6 echo, and the neighbour
 * table, for one port of one worker lcore.
 *
 * It answers what a Linux host on the link sends to find and ping us (ARP requests, ICMP echo,
 * neighbour solicitations, ICMPv6 echo), learns peers on our prefixes from what they send, and
 * resolves the MACs of the peers we send RoCE to: unresolved frames wait in a small
 * per-neighbour queue while ARP requests or solicitations go out, and leave with the MAC
 * filled in. As in Linux, an entry is REACHABLE for reachable_ns after a confirmation, then
 * STALE: the next use probes it again, and one neither used nor confirmed for gc_stale_ns is
 * removed (the next use resolves it from scratch).
 *
 * Nothing here locks or logs on the fast path; every outcome is counted
 * (roce_net_counters.h). Time is the caller's clock in ns, as in the transport.
 *
 * A worker loop calls, per port:
 * @code
 *	nb = rte_eth_rx_burst(...);  roce_classify_burst(pkts, nb, ...);
 *	ntx = roce_net_input(net, arp_icmp_pkts, k, now, txb, 32);   send txb[0..ntx)
 *	for each frame to a peer: if (roce_net_output(net, m, ip, v6, now) == ROCE_NET_SEND) send m
 *	roce_net_poll(net, now);
 *	ntx = roce_net_tx(net, txb, 32);                            send txb[0..ntx)
 * @endcode
 */

#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "roce_build.h"
#include "roce_net_counters.h"

/** Frames one neighbour entry holds while it resolves; more are dropped and counted. */
#define ROCE_NET_QUEUE_LEN 8

struct roce_net;

/** Configuration of one instance. Zero means "default" where a default is given. */
struct roce_net_conf {
	struct rte_ether_addr mac;  /**< our MAC: unicast, not zero */
	uint8_t vlan;               /**< 1: frames carry one 802.1Q tag with vlan_tci's VID */
	uint16_t vlan_tci;          /**< PCP(15:13) DEI(12) VID(11:0) of the frames we build */
	rte_be32_t ip4;             /**< IPv4 address, network order; 0: no IPv4 */
	uint8_t ip4_prefix_len;     /**< 0-32; 0 puts every IPv4 destination on the link */
	rte_be32_t gw4;             /**< IPv4 gateway inside the prefix; 0: none */
	uint8_t ip6[16];            /**< global IPv6 address; all zero: link-local only */
	uint8_t ip6_prefix_len;     /**< 0-128, prefix of ip6 */
	uint8_t gw6[16];            /**< IPv6 gateway (often link-local); zero: all on-link */
	uint16_t mtu;               /**< IP MTU (default 1500) */
	uint32_t neigh_max;         /**< neighbour entries (default 256) */
	uint32_t tx_ring_size;      /**< frames buffered for roce_net_tx() (default 1024) */
	uint64_t reachable_ns;      /**< an entry is REACHABLE this long after a reply (30 s) */
	uint64_t retrans_ns;        /**< interval between requests (default 1 s) */
	uint64_t failed_ns;         /**< how long a failed neighbour stays FAILED (default 5 s) */
	/** A STALE entry goes this long after its last use or confirmation (default 60 s, as
	 * Linux's gc_stale_time); using it keeps it.
	 */
	uint64_t gc_stale_ns;
	uint8_t max_probes;         /**< requests before giving up (default 3) */
	/** Pool of the frames we build (requests and ARP/NA replies): one segment of at least
	 * 128 bytes (RTE_PKTMBUF_HEADROOM excluded). Required.
	 */
	struct rte_mempool *mp;
	int socket_id;              /**< NUMA socket of the instance's memory */
};

/** Neighbour entry states (as Linux's NUD states, without DELAY). */
enum roce_net_neigh_state {
	ROCE_NET_NEIGH_NONE = 0,    /**< no entry */
	ROCE_NET_NEIGH_INCOMPLETE,  /**< requests sent, no answer yet; frames wait in the queue */
	ROCE_NET_NEIGH_REACHABLE,   /**< MAC confirmed within reachable_ns */
	ROCE_NET_NEIGH_STALE,       /**< MAC known but not confirmed lately; used, then probed;
				     *   removed when unused for gc_stale_ns */
	ROCE_NET_NEIGH_PROBE,       /**< MAC in use, unicast requests sent to confirm it */
	ROCE_NET_NEIGH_FAILED,      /**< no answer: frames to it are dropped until failed_ns */
	ROCE_NET_NEIGH_PERMANENT,   /**< set by roce_net_neigh_add(), never expires */
	ROCE_NET_NEIGH_STATE_NUM
};

/** What roce_net_neigh_lookup() and roce_net_neigh_dump() report about an entry. */
struct roce_net_neigh_info {
	uint8_t ip[16];             /**< IPv4 in the first 4 bytes (network order) or IPv6 */
	uint8_t ipv6;               /**< 0: IPv4, 1: IPv6 */
	uint8_t state;              /**< enum roce_net_neigh_state, as of @c now */
	uint8_t probes;             /**< requests sent in the current round */
	uint8_t queued;             /**< frames waiting for resolution */
	struct rte_ether_addr mac;  /**< valid in REACHABLE, STALE, PROBE, PERMANENT */
	uint64_t confirmed;         /**< time of the last confirmation */
	uint64_t deadline;          /**< next request (INCOMPLETE, PROBE) or end of FAILED */
	uint64_t used;              /**< time of the last output through it, or of its creation */
	uint64_t updated;           /**< last time a frame or roce_net_neigh_add() set its MAC or
				     *   state (learned, confirmed, seen), or its creation */
};

/** roce_net_output() verdicts. */
enum roce_net_verdict {
	ROCE_NET_HELD = 0,  /**< the instance kept the frame: queued until resolved, or dropped */
	ROCE_NET_SEND = 1,  /**< destination MAC written: transmit the frame now */
};

/**
 * Create an instance.
 *
 * @param conf
 *   Configuration; copied.
 * @return
 *   The instance, or NULL with rte_errno set: EINVAL (bad MAC, VLAN ID, prefix length, a
 *   gateway outside its prefix or equal to our address, a global IPv6 address that is not
 *   unicast, no pool or a pool with too small buffers, neigh_max above 65536), ENOMEM.
 */
struct roce_net *roce_net_create(const struct roce_net_conf *conf);

/** Free an instance, the frames it queues and its tx ring. NULL is ignored. */
void roce_net_free(struct roce_net *n);

/**
 * Handle received ARP, ICMP and ICMPv6 frames, then collect what is ready to send.
 *
 * Answers ARP requests, ICMP and ICMPv6 echo requests and neighbour solicitations for our
 * addresses; learns neighbours from ARP and neighbour advertisements; drops the rest. Every
 * frame is consumed and counted once (roce_net_counters.h).
 *
 * @param n
 *   The instance.
 * @param pkts
 *   Frames classified by roce_classify_burst(); other types are dropped and counted as
 *   NOT_NET. Headers must be in the first segment as the classifier checked; an ICMP payload
 *   may span segments.
 * @param nb_pkts
 *   Number of frames.
 * @param now
 *   Current time, in ns.
 * @param out
 *   Where to store frames to transmit: replies, and frames that waited for a neighbour this
 *   input resolved. What does not fit stays for roce_net_tx().
 * @param out_max
 *   Room in @p out.
 * @return
 *   Number of frames stored in @p out; the caller owns them.
 */
uint16_t roce_net_input(struct roce_net *n, struct rte_mbuf **pkts, uint16_t nb_pkts,
		uint64_t now, struct rte_mbuf **out, uint16_t out_max);

/**
 * Address a frame to a peer: write the destination MAC of its next hop (the peer, or the
 * gateway off the prefix) into its Ethernet header, or hold the frame while the next hop is
 * resolved (an ARP request or a solicitation goes out through roce_net_tx()).
 *
 * @param n
 *   The instance.
 * @param m
 *   A complete frame starting with its Ethernet header (and VLAN tag if any).
 * @param ip
 *   Destination IP: IPv4 in the first 4 bytes (network order), or 16 bytes of IPv6.
 * @param ipv6
 *   0: IPv4, 1: IPv6.
 * @param now
 *   Current time, in ns.
 * @return
 *   ROCE_NET_SEND: @p m is addressed, send it. ROCE_NET_HELD: the instance took @p m: queued
 *   (it comes out of roce_net_tx() or roce_net_input() once resolved, or is freed when
 *   resolution fails) or dropped (full queue or table, failed neighbour, no route, bad
 *   destination; each counted).
 */
int roce_net_output(struct roce_net *n, struct rte_mbuf *m, const uint8_t *ip, int ipv6,
		uint64_t now);

/**
 * Look up the MAC of a destination's next hop, starting resolution when it is unknown.
 *
 * @param n
 *   The instance.
 * @param ip
 *   Destination IP, as in roce_net_output().
 * @param ipv6
 *   0: IPv4, 1: IPv6.
 * @param now
 *   Current time, in ns.
 * @param mac
 *   Filled on success.
 * @return
 *   0, -EAGAIN (resolution in progress: ask again later), -EHOSTUNREACH (the next hop failed
 *   to resolve a short while ago), -ENETUNREACH (off the prefix and no gateway), -EINVAL
 *   (multicast, broadcast, unspecified or own address, or that family is not configured),
 *   -ENOSPC (neighbour table full).
 */
int roce_net_resolve(struct roce_net *n, const uint8_t *ip, int ipv6, uint64_t now,
		struct rte_ether_addr *mac);

/**
 * Fill a path's destination MAC from its next hop's entry, and prebuild its template again.
 * Call until it returns 0 (it starts resolution on the first call).
 *
 * @param n
 *   The instance.
 * @param path
 *   A path with dst_ip and ipv6 set.
 * @param now
 *   Current time, in ns.
 * @return
 *   0 (dst_mac set, roce_path_init() done), or as roce_net_resolve(), or -EINVAL from
 *   roce_path_init().
 */
int roce_net_path_resolve(struct roce_net *n, struct roce_path *path, uint64_t now);

/**
 * Run due timers: resend requests, give up on neighbours that do not answer (their queued
 * frames are freed), end FAILED hold-downs, remove STALE entries unused for gc_stale_ns
 * (counted EXPIRED). Cheap when nothing is due.
 *
 * @param n
 *   The instance.
 * @param now
 *   Current time, in ns.
 */
void roce_net_poll(struct roce_net *n, uint64_t now);

/**
 * @return the time roce_net_poll() next has work (a request, the end of a hold-down, or the
 * collection of an entry that may have been used since), or UINT64_MAX when nothing is pending.
 */
uint64_t roce_net_next_timer(const struct roce_net *n);

/**
 * Collect frames to transmit: requests, replies and resolved frames not yet collected.
 *
 * @param n
 *   The instance.
 * @param out
 *   Where to store them.
 * @param max
 *   Room in @p out.
 * @return
 *   Number of frames stored; the caller owns them.
 */
uint16_t roce_net_tx(struct roce_net *n, struct rte_mbuf **out, uint16_t max);

/**
 * Add or replace a neighbour, e.g. a static entry or one learned by another instance.
 * Frames waiting for it are released to roce_net_tx().
 *
 * @param n
 *   The instance.
 * @param ip
 *   Neighbour IP, as in roce_net_output() (no gateway lookup: this is the next hop itself).
 * @param ipv6
 *   0: IPv4, 1: IPv6.
 * @param mac
 *   Its MAC: unicast, not zero.
 * @param permanent
 *   1: PERMANENT (never expires, never replaced by what is received); 0: REACHABLE.
 * @param now
 *   Current time, in ns.
 * @return
 *   0, -EINVAL (bad address or MAC), -ENOSPC (table full).
 */
int roce_net_neigh_add(struct roce_net *n, const uint8_t *ip, int ipv6,
		const struct rte_ether_addr *mac, int permanent, uint64_t now);

/**
 * Delete a neighbour entry; frames waiting for it are freed and counted.
 *
 * @return
 *   0, -ENOENT (no such entry), -EINVAL (bad address).
 */
int roce_net_neigh_del(struct roce_net *n, const uint8_t *ip, int ipv6);

/**
 * Delete every entry but PERMANENT ones, as `ip neigh flush`: frames waiting for them are freed
 * and counted; the next frame to a peer resolves it again.
 *
 * @param n
 *   The instance.
 * @return
 *   Number of entries deleted.
 */
uint32_t roce_net_neigh_flush(struct roce_net *n);

/**
 * Report one neighbour entry.
 *
 * @param n
 *   The instance.
 * @param ip
 *   Neighbour IP, as in roce_net_output().
 * @param ipv6
 *   0: IPv4, 1: IPv6.
 * @param now
 *   Current time, in ns (REACHABLE entries older than reachable_ns read STALE).
 * @param info
 *   Filled on success.
 * @return
 *   0, -ENOENT (no such entry), -EINVAL (bad address).
 */
int roce_net_neigh_lookup(const struct roce_net *n, const uint8_t *ip, int ipv6, uint64_t now,
		struct roce_net_neigh_info *info);

/**
 * Report every neighbour entry.
 *
 * @param n
 *   The instance.
 * @param now
 *   Current time, in ns.
 * @param info
 *   Array of @p max entries.
 * @param max
 *   Room in @p info.
 * @return
 *   Number of entries in use; those beyond @p max are not reported.
 */
uint32_t roce_net_neigh_dump(const struct roce_net *n, uint64_t now,
		struct roce_net_neigh_info *info, uint32_t max);

/** @return the name of a state, e.g. "REACHABLE", or NULL when out of range. */
const char *roce_net_neigh_state_name(enum roce_net_neigh_state s);

/**
 * The link-local address (fe80::/64, modified EUI-64) derived from a MAC.
 *
 * @param mac
 *   The MAC.
 * @param ip6
 *   16 bytes, filled.
 */
void roce_net_ll_addr(const struct rte_ether_addr *mac, uint8_t *ip6);

/**
 * Multicast MACs the port must accept for IPv6 neighbour discovery to reach us: all-nodes
 * and the solicited-node groups of our link-local and global addresses. Give them to
 * rte_eth_dev_set_mc_addr_list() (or enable all-multicast).
 *
 * @param n
 *   The instance.
 * @param macs
 *   Array of @p max MACs.
 * @param max
 *   Room in @p macs; 3 is always enough.
 * @return
 *   Number of MACs needed; those beyond @p max are not stored.
 */
uint16_t roce_net_mc_addrs(const struct roce_net *n, struct rte_ether_addr *macs, uint16_t max);

#endif /* ROCE_NET_H */
