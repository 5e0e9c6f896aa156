/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_NET_COUNTERS_H
#define ROCE_NET_COUNTERS_H

/**
 * @file
 * Counters of one roce_net instance (one port of one worker); sum the instances on read.
 *
 * Every frame given to roce_net_input() adds one to exactly one counter of the first three
 * groups (answered, taken in, dropped), so their sum is the number of frames received.
 */

#include <stdint.h>

#include "roce_counters.h"

struct roce_net;

/** Every net counter, with what it counts. The reply counters come first (see below). */
#define ROCE_NET_COUNTERS(X) \
	/* Answered: the frame came back as the reply. */ \
	X(ARP_REPLY_TX, "ARP requests for our IPv4 address answered") \
	X(ECHO_REPLY_TX, "ICMP echo requests answered") \
	X(ECHO6_REPLY_TX, "ICMPv6 echo requests answered") \
	X(NA_TX, "neighbour solicitations for our addresses answered (NA sent)") \
	/* Taken in: well formed, nothing to answer. */ \
	X(ARP_REPLY_RX, "ARP replies that refreshed or resolved an entry") \
	X(ARP_UNSOLICITED, "ARP replies from a sender we have no entry for (ignored)") \
	X(ARP_NOT_US, "ARP requests for another address, gratuitous ARP (an entry is refreshed)") \
	X(NA_RX, "neighbour advertisements that refreshed or resolved an entry") \
	X(NA_UNSOLICITED, "neighbour advertisements for a target we have no entry for, or " \
		"without a usable link-layer address (ignored)") \
	X(NS_NOT_US, "neighbour solicitations for a target that is not ours") \
	X(ICMP_UNREACH_RX, "ICMP/ICMPv6 destination unreachable received (a peer's port closed?)") \
	X(ICMP_OTHER, "ICMP messages of other types (ignored)") \
	X(ICMP6_OTHER, "ICMPv6 messages of other types: router discovery, redirect, MLD " \
		"(ignored)") \
	/* Dropped: malformed, or not for us. */ \
	X(NOT_NET, "frames the classifier did not mark ARP, ICMP or ICMPv6") \
	X(VLAN, "VLAN tag missing, unexpected or with another VID than ours") \
	X(L2_SRC, "Ethernet source multicast, zero or our own MAC") \
	X(L2_DST, "Ethernet destination neither our MAC nor an accepted broadcast/multicast") \
	X(NO_IP4, "ARP or ICMP while no IPv4 address is configured") \
	X(SPLIT, "headers or ND message not in the first segment") \
	X(ARP_SHORT, "shorter than an Ethernet/IPv4 ARP message") \
	X(ARP_FORMAT, "ARP hardware or protocol type, or address length, not Ethernet/IPv4") \
	X(ARP_OP, "ARP operation neither request nor reply") \
	X(ARP_SENDER, "ARP sender MAC or IPv4 address not a unicast host address") \
	X(ARP_CONFLICT, "ARP from another host that uses our IPv4 address") \
	X(IP4_DST, "IPv4 packet not addressed to our address") \
	X(IP4_SRC, "IPv4 source not a unicast host address") \
	X(ICMP_SHORT, "ICMP message shorter than its header") \
	X(ICMP_CSUM, "ICMP checksum wrong") \
	X(ICMP_TOO_BIG, "echo request longer than our MTU") \
	X(IP6_DST, "IPv6 packet neither to our addresses nor to a group we are in") \
	X(IP6_SRC, "IPv6 source multicast, IPv4-mapped, loopback, or unspecified outside DAD") \
	X(ICMP6_SHORT, "ICMPv6 message shorter than its type's header") \
	X(ICMP6_CSUM, "ICMPv6 checksum wrong") \
	X(ND_HOPLIMIT, "neighbour discovery message with a hop limit other than 255") \
	X(ND_INVALID, "neighbour discovery message failing RFC 4861 checks (code, length, " \
		"target, DAD rules, S flag to a multicast group)") \
	X(ND_OPTION, "neighbour discovery option of length 0, past the message, or a bad " \
		"link-layer address option") \
	X(DAD_CONFLICT, "another host uses one of our IPv6 addresses (as source or in an NA)") \
	X(REPLY_NOMBUF, "requests not answered for want of an mbuf") \
	/* Resolution and output. */ \
	X(LEARNED, "entries created from an ARP request or a solicitation addressed to us") \
	X(LEARN_OFFLINK, "senders not learned: outside our IPv4 subnet, fe80::/10 and our IPv6 " \
		"prefix") \
	X(LEARN_FULL, "senders not learned: table full, no entry FAILED or STALE and unused " \
		"for reachable_ns") \
	X(MAC_CHANGED, "entries whose MAC changed") \
	X(QUEUED, "frames queued waiting for resolution") \
	X(FLUSHED, "queued frames sent once their neighbour resolved") \
	X(QUEUE_FULL, "frames dropped: the entry's queue was full") \
	X(RESOLVE_FAILED, "resolutions given up after the last unanswered request") \
	X(FAILED_DROP, "queued frames freed: resolution failed or the entry was deleted") \
	X(UNREACH_DROP, "frames dropped: their neighbour failed to resolve a short while ago") \
	X(NO_ROUTE, "frames or lookups off the IPv4/IPv6 prefix with no gateway") \
	X(BAD_DST, "frames or lookups for multicast, unspecified, own or unconfigured addresses") \
	X(BAD_FRAME, "frames given for output shorter than an Ethernet header") \
	X(TABLE_FULL, "resolutions refused: no free entry and none stale enough to reclaim") \
	X(EVICTED, "stale or failed entries reclaimed for new neighbours") \
	X(EXPIRED, "STALE entries removed, neither used nor confirmed for gc_stale_ns") \
	X(ARP_REQ_TX, "ARP requests sent (broadcast and unicast probes)") \
	X(NS_TX, "neighbour solicitations sent (multicast and unicast probes)") \
	X(NO_MBUF, "requests not sent for want of an mbuf") \
	X(TX_FULL, "frames dropped because the tx queue was full")

/** Counter indexes, as ROCE_NET_C_<name>. */
enum roce_net_counter {
#define ROCE_NET_C_ENUM(n, d) ROCE_NET_C_##n,
	ROCE_NET_COUNTERS(ROCE_NET_C_ENUM)
#undef ROCE_NET_C_ENUM
	ROCE_NET_C_NUM
};

/** Counters up to this one mean the received frame was turned into a reply. */
#define ROCE_NET_C_LAST_REPLY ROCE_NET_C_NA_TX
/** Last counter an input frame can end in; from ROCE_NET_C_LEARNED on they count events. */
#define ROCE_NET_C_LAST_INPUT ROCE_NET_C_REPLY_NOMBUF

/** The net counters' names and descriptions, by enum roce_net_counter. */
extern const struct roce_counter_family roce_net_counter_family;

/**
 * Copy an instance's counters.
 *
 * @param n
 *   The instance.
 * @param out
 *   ROCE_NET_C_NUM entries, indexed by enum roce_net_counter.
 */
void roce_net_counters(const struct roce_net *n, uint64_t *out);

#endif /* ROCE_NET_COUNTERS_H */
