/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour table: fixed capacity, chained hash on the address, a free list, and a per-entry
 * queue of frames waiting for resolution. States follow Linux's NUD states without DELAY:
 *
 *   (none) --output--> INCOMPLETE --reply--> REACHABLE --reachable_ns--> STALE
 *   STALE --output--> PROBE (unicast requests) --reply--> REACHABLE
 *   INCOMPLETE/PROBE --max_probes unanswered--> FAILED --failed_ns--> (none)
 *   STALE --gc_stale_ns without use or confirmation--> (none)
 *
 * REACHABLE turns STALE lazily, when the entry is next looked at. INCOMPLETE, PROBE and FAILED
 * entries have a deadline, REACHABLE and STALE ones a collection time that use pushes back;
 * roce_net_poll() scans the table only when the earliest of them is due (a use since then
 * only costs a scan that finds nothing to do).
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "net_private.h"

static inline uint32_t
neigh_hash(const uint8_t *key)
{
	uint64_t a, b;

	memcpy(&a, key, 8);
	memcpy(&b, key + 8, 8);
	return (uint32_t)(((a ^ (b * 0x9E3779B97F4A7C15ull)) * 0xC2B2AE3D27D4EB4Full) >> 32);
}

int
net_neigh_init(struct roce_net *n)
{
	uint32_t cap = n->conf.neigh_max, nb_buckets = rte_align32pow2(cap), i;

	n->neigh = rte_zmalloc_socket("roce_net_neigh", cap * sizeof(n->neigh[0]),
			RTE_CACHE_LINE_SIZE, n->conf.socket_id);
	n->bucket = rte_malloc_socket("roce_net_bucket", nb_buckets * sizeof(n->bucket[0]), 0,
			n->conf.socket_id);
	if (n->neigh == NULL || n->bucket == NULL)
		return -ENOMEM;
	n->bucket_mask = nb_buckets - 1;
	for (i = 0; i < nb_buckets; i++)
		n->bucket[i] = NET_NIL;
	for (i = 0; i < cap; i++)
		n->neigh[i].next = i + 1 < cap ? i + 1 : NET_NIL;
	n->free_head = 0;
	return 0;
}

static void
neigh_drop_queue(struct roce_net *n, struct net_neigh *e)
{
	while (e->nq > 0) {
		rte_pktmbuf_free(e->q[--e->nq]);
		n->c[ROCE_NET_C_FAILED_DROP]++;
	}
}

void
net_neigh_fini(struct roce_net *n)
{
	uint32_t i;

	if (n->neigh != NULL)
		for (i = 0; i < n->conf.neigh_max; i++)
			neigh_drop_queue(n, &n->neigh[i]);
	rte_free(n->neigh);
	rte_free(n->bucket);
}

static struct net_neigh *
neigh_find(const struct roce_net *n, const uint8_t *key)
{
	uint32_t i;

	for (i = n->bucket[neigh_hash(key) & n->bucket_mask]; i != NET_NIL; i = n->neigh[i].next)
		if (memcmp(n->neigh[i].ip, key, 16) == 0)
			return &n->neigh[i];
	return NULL;
}

/* Back to the free list; queued frames are freed. */
static void
neigh_release(struct roce_net *n, struct net_neigh *e)
{
	uint32_t idx = (uint32_t)(e - n->neigh);
	uint32_t *link = &n->bucket[neigh_hash(e->ip) & n->bucket_mask];

	while (*link != idx)
		link = &n->neigh[*link].next;
	*link = e->next;
	neigh_drop_queue(n, e);
	memset(e, 0, sizeof(*e));
	e->next = n->free_head;
	n->free_head = idx;
	n->nb_used--;
}

/* State as of @now: REACHABLE entries not confirmed for reachable_ns are STALE. */
static enum roce_net_neigh_state
neigh_state_at(const struct roce_net *n, const struct net_neigh *e, uint64_t now)
{
	if (e->state == ROCE_NET_NEIGH_REACHABLE &&
			now >= net_after(e->confirmed, n->conf.reachable_ns))
		return ROCE_NET_NEIGH_STALE;
	return e->state;
}

static bool
neigh_has_mac(enum roce_net_neigh_state s)
{
	static const bool has[ROCE_NET_NEIGH_STATE_NUM] = {
		[ROCE_NET_NEIGH_REACHABLE] = true,
		[ROCE_NET_NEIGH_STALE] = true,
		[ROCE_NET_NEIGH_PROBE] = true,
		[ROCE_NET_NEIGH_PERMANENT] = true,
	};

	return has[s];
}

static bool
neigh_timed(enum roce_net_neigh_state s)
{
	return s == ROCE_NET_NEIGH_INCOMPLETE || s == ROCE_NET_NEIGH_PROBE ||
		s == ROCE_NET_NEIGH_FAILED;
}

/*
 * When roce_net_poll() removes a REACHABLE or STALE entry, as Linux's periodic gc: gc_stale_ns
 * after its last use or confirmation, and not before it is STALE. UINT64_MAX for the others.
 */
static uint64_t
neigh_gc_time(const struct roce_net *n, const struct net_neigh *e)
{
	uint64_t t;

	if (e->state != ROCE_NET_NEIGH_REACHABLE && e->state != ROCE_NET_NEIGH_STALE)
		return UINT64_MAX;
	t = net_after(RTE_MAX(e->used, e->confirmed), n->conf.gc_stale_ns);
	if (e->state == ROCE_NET_NEIGH_REACHABLE)
		t = RTE_MAX(t, net_after(e->confirmed, n->conf.reachable_ns));
	return t;
}

static void
neigh_due(struct roce_net *n, uint64_t t)
{
	if (t < n->next_due)
		n->next_due = t;
}

/*
 * Least recently used entry that can go: FAILED first, then STALE ones not used for @idle_ns;
 * never one being resolved or probed.
 */
static struct net_neigh *
neigh_victim(struct roce_net *n, uint64_t idle_ns, uint64_t now)
{
	struct net_neigh *best = NULL;
	uint32_t i;

	for (i = 0; i < n->conf.neigh_max; i++) {
		struct net_neigh *e = &n->neigh[i];
		enum roce_net_neigh_state s = neigh_state_at(n, e, now);

		if (s == ROCE_NET_NEIGH_FAILED)
			return e;
		if (s == ROCE_NET_NEIGH_STALE && now >= net_after(e->used, idle_ns) &&
				(best == NULL || e->used < best->used))
			best = e;
	}
	return best;
}

/* A new entry (state NONE) for @key, from the free list or in place of a reclaimable one
 * (neigh_victim()).
 */
static struct net_neigh *
neigh_new(struct roce_net *n, const uint8_t *key, uint64_t idle_ns, uint64_t now)
{
	uint32_t *head = &n->bucket[neigh_hash(key) & n->bucket_mask];
	struct net_neigh *e;
	uint32_t idx;

	if (n->free_head == NET_NIL) {
		struct net_neigh *victim = neigh_victim(n, idle_ns, now);

		if (victim == NULL)
			return NULL;
		neigh_release(n, victim);
		n->c[ROCE_NET_C_EVICTED]++;
	}
	idx = n->free_head;
	e = &n->neigh[idx];
	n->free_head = e->next;
	memcpy(e->ip, key, 16);
	e->next = *head;
	*head = idx;
	/* A new entry counts as used: collected gc_stale_ns later if nothing uses it. */
	e->used = now;
	e->updated = now;
	n->nb_used++;
	return e;
}

static void
neigh_arm(struct roce_net *n, struct net_neigh *e, uint64_t deadline)
{
	e->deadline = deadline;
	neigh_due(n, deadline);
}

/* One request: broadcast (resolving) or unicast to the known MAC (probing). */
static void
neigh_solicit(struct roce_net *n, struct net_neigh *e, uint64_t now)
{
	const struct rte_ether_addr *dst =
		e->state == ROCE_NET_NEIGH_PROBE ? &e->mac : NULL;

	if (net_ip6_v4mapped(e->ip)) {
		rte_be32_t a;

		memcpy(&a, e->ip + 12, 4);
		net_arp_solicit(n, a, dst);
	} else {
		net_nd_solicit(n, e->ip, dst);
	}
	e->probes++;
	neigh_arm(n, e, net_after(now, n->conf.retrans_ns));
}

static void
neigh_start(struct roce_net *n, struct net_neigh *e, enum roce_net_neigh_state s, uint64_t now)
{
	e->state = s;
	e->probes = 0;
	neigh_solicit(n, e, now);
}

static void
neigh_fail(struct roce_net *n, struct net_neigh *e, uint64_t now)
{
	neigh_drop_queue(n, e);
	n->c[ROCE_NET_C_RESOLVE_FAILED]++;
	e->state = ROCE_NET_NEIGH_FAILED;
	neigh_arm(n, e, net_after(now, n->conf.failed_ns));
}

/* Queued frames leave with the MAC now known. */
static void
neigh_flush(struct roce_net *n, struct net_neigh *e)
{
	uint8_t i;

	for (i = 0; i < e->nq; i++) {
		struct rte_ether_hdr *eth = rte_pktmbuf_mtod(e->q[i], struct rte_ether_hdr *);

		rte_ether_addr_copy(&e->mac, &eth->dst_addr);
		net_tx_push(n, e->q[i]);
	}
	n->c[ROCE_NET_C_FLUSHED] += e->nq;
	e->nq = 0;
}

/* Set a MAC and state; frames waiting for the entry go out. */
static void
neigh_set(struct roce_net *n, struct net_neigh *e, const struct rte_ether_addr *mac,
		enum roce_net_neigh_state s, uint64_t now)
{
	if (neigh_has_mac(e->state) && !rte_is_same_ether_addr(mac, &e->mac))
		n->c[ROCE_NET_C_MAC_CHANGED]++;
	e->mac = *mac;
	if (s == ROCE_NET_NEIGH_REACHABLE || s == ROCE_NET_NEIGH_PERMANENT)
		e->confirmed = now;
	e->updated = now;
	e->state = s;
	e->probes = 0;
	neigh_due(n, neigh_gc_time(n, e));
	if (e->nq != 0)
		neigh_flush(n, e);
}

static bool
neigh_update(struct roce_net *n, struct net_neigh *e, const struct rte_ether_addr *mac,
		bool reachable, bool override, uint64_t now)
{
	enum roce_net_neigh_state s = neigh_state_at(n, e, now);
	bool had = neigh_has_mac(s), differs;

	if (s == ROCE_NET_NEIGH_PERMANENT)
		return true;
	if (mac == NULL) {
		if (!had)
			return false;
		mac = &e->mac;
	}
	differs = had && !rte_is_same_ether_addr(mac, &e->mac);
	if (differs && !override) {
		/* Keep the MAC we use, but do not trust it any longer. */
		if (s == ROCE_NET_NEIGH_REACHABLE) {
			e->state = ROCE_NET_NEIGH_STALE;
			neigh_due(n, neigh_gc_time(n, e));
		}
		return true;
	}
	if (reachable)
		neigh_set(n, e, mac, ROCE_NET_NEIGH_REACHABLE, now);
	else if (s == ROCE_NET_NEIGH_REACHABLE && !differs)
		return true;    /* an unconfirmed sighting does not demote a confirmed entry */
	else
		neigh_set(n, e, mac, ROCE_NET_NEIGH_STALE, now);
	return true;
}

/* 1 when @key is on a prefix of ours: the IPv4 subnet, fe80::/10 or the IPv6 prefix. */
static bool
neigh_connected(const struct roce_net *n, const uint8_t *key)
{
	rte_be32_t a;

	if (net_ip6_v4mapped(key)) {
		memcpy(&a, key + 12, 4);
		return ((a ^ n->conf.ip4) & n->mask4) == 0;
	}
	return net_ip6_linklocal(key) ||
		(n->has_ip6 && net_ip6_prefix_eq(key, n->conf.ip6, n->conf.ip6_prefix_len));
}

int
net_neigh_learn(struct roce_net *n, const uint8_t *key, const struct rte_ether_addr *mac,
		bool reachable, bool override, bool create, uint64_t now)
{
	struct net_neigh *e = neigh_find(n, key);

	if (e == NULL) {
		if (!create || mac == NULL)
			return 0;
		/* Off our prefixes we send through the gateway (or, on IPv6 without one,
		 * resolve on first use): such an entry would only take room.
		 */
		if (!neigh_connected(n, key)) {
			n->c[ROCE_NET_C_LEARN_OFFLINK]++;
			return 0;
		}
		/* Only entries idle for a reachable time give way, so that a flood of senders
		 * cannot push out the peers we talk to.
		 */
		e = neigh_new(n, key, n->conf.reachable_ns, now);
		if (e == NULL) {
			n->c[ROCE_NET_C_LEARN_FULL]++;
			return 0;
		}
		n->c[ROCE_NET_C_LEARNED]++;
	}
	return neigh_update(n, e, mac, reachable, override, now);
}

/* Next hop of @ip as a table key, or -errno (counted). */
static int
neigh_nexthop(struct roce_net *n, const uint8_t *ip, int ipv6, uint8_t *key)
{
	rte_be32_t a;

	if (ipv6) {
		if (!net_ip6_unicast(ip) || net_ip6_ours(n, ip) != NULL)
			goto bad;
		if (n->has_gw6 && !net_ip6_linklocal(ip) && !(n->has_ip6 &&
				net_ip6_prefix_eq(ip, n->conf.ip6, n->conf.ip6_prefix_len)))
			ip = n->conf.gw6;
		memcpy(key, ip, 16);
		return 0;
	}
	memcpy(&a, ip, 4);
	if (n->conf.ip4 == 0 || a == n->conf.ip4 || !net_ip4_unicast(n, a))
		goto bad;
	if (((a ^ n->conf.ip4) & n->mask4) != 0) {
		if (n->conf.gw4 == 0) {
			n->c[ROCE_NET_C_NO_ROUTE]++;
			return -ENETUNREACH;
		}
		a = n->conf.gw4;
	}
	net_key4(a, key);
	return 0;
bad:
	n->c[ROCE_NET_C_BAD_DST]++;
	return -EINVAL;
}

/* The entry of next hop @key if it can be sent to now; starts resolution or a probe. */
static int
neigh_resolve(struct roce_net *n, const uint8_t *key, uint64_t now, struct net_neigh **ep)
{
	struct net_neigh *e = neigh_find(n, key);

	if (e == NULL) {
		e = neigh_new(n, key, 0, now);
		if (e == NULL) {
			n->c[ROCE_NET_C_TABLE_FULL]++;
			return -ENOSPC;
		}
		neigh_start(n, e, ROCE_NET_NEIGH_INCOMPLETE, now);
	}
	*ep = e;
	e->used = now;
	e->state = neigh_state_at(n, e, now);
	switch (e->state) {
	case ROCE_NET_NEIGH_STALE:
		neigh_start(n, e, ROCE_NET_NEIGH_PROBE, now);
		return 0;
	case ROCE_NET_NEIGH_FAILED:
		if (now < e->deadline)
			return -EHOSTUNREACH;
		neigh_start(n, e, ROCE_NET_NEIGH_INCOMPLETE, now);
		return -EAGAIN;
	case ROCE_NET_NEIGH_INCOMPLETE:
		return -EAGAIN;
	default:
		return 0;
	}
}

int
roce_net_output(struct roce_net *n, struct rte_mbuf *m, const uint8_t *ip, int ipv6,
		uint64_t now)
{
	struct net_neigh *e = NULL;
	uint8_t key[16];
	int ret;

	if (m->data_len < RTE_ETHER_HDR_LEN) {
		n->c[ROCE_NET_C_BAD_FRAME]++;
		rte_pktmbuf_free(m);
		return ROCE_NET_HELD;
	}
	ret = neigh_nexthop(n, ip, ipv6, key);
	if (ret == 0)
		ret = neigh_resolve(n, key, now, &e);
	if (ret == 0) {
		rte_ether_addr_copy(&e->mac,
				&rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->dst_addr);
		return ROCE_NET_SEND;
	}
	if (ret == -EAGAIN && e->nq < ROCE_NET_QUEUE_LEN) {
		e->q[e->nq++] = m;
		n->c[ROCE_NET_C_QUEUED]++;
		return ROCE_NET_HELD;
	}
	if (ret == -EAGAIN)
		n->c[ROCE_NET_C_QUEUE_FULL]++;
	else if (ret == -EHOSTUNREACH)
		n->c[ROCE_NET_C_UNREACH_DROP]++;
	rte_pktmbuf_free(m);
	return ROCE_NET_HELD;
}

int
roce_net_resolve(struct roce_net *n, const uint8_t *ip, int ipv6, uint64_t now,
		struct rte_ether_addr *mac)
{
	struct net_neigh *e;
	uint8_t key[16];
	int ret;

	ret = neigh_nexthop(n, ip, ipv6, key);
	if (ret == 0)
		ret = neigh_resolve(n, key, now, &e);
	if (ret == 0)
		*mac = e->mac;
	return ret;
}

int
roce_net_path_resolve(struct roce_net *n, struct roce_path *path, uint64_t now)
{
	struct rte_ether_addr mac;
	int ret = roce_net_resolve(n, path->dst_ip, path->ipv6, now, &mac);

	if (ret != 0)
		return ret;
	path->dst_mac = mac;
	return roce_path_init(path);
}

static void
neigh_expire(struct roce_net *n, struct net_neigh *e, uint64_t now)
{
	switch (e->state) {
	case ROCE_NET_NEIGH_INCOMPLETE:
	case ROCE_NET_NEIGH_PROBE:
		if (e->probes < n->conf.max_probes)
			neigh_solicit(n, e, now);
		else
			neigh_fail(n, e, now);
		break;
	case ROCE_NET_NEIGH_FAILED:
		neigh_release(n, e);
		break;
	default:
		break;
	}
}

void
net_neigh_timers(struct roce_net *n, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < n->conf.neigh_max; i++) {
		struct net_neigh *e = &n->neigh[i];
		uint64_t t;

		if (neigh_timed(e->state)) {
			if (now >= e->deadline)
				neigh_expire(n, e, now);
		} else if (now >= neigh_gc_time(n, e)) {
			neigh_release(n, e);
			n->c[ROCE_NET_C_EXPIRED]++;
		}
		t = neigh_timed(e->state) ? e->deadline : neigh_gc_time(n, e);
		if (t < next)
			next = t;
	}
	n->next_due = next;
}

/* Table key of a neighbour given by the control path (no next-hop lookup). */
static int
neigh_key(const struct roce_net *n, const uint8_t *ip, int ipv6, uint8_t *key)
{
	rte_be32_t a;

	if (ipv6) {
		if (!net_ip6_unicast(ip) || net_ip6_ours(n, ip) != NULL)
			return -EINVAL;
		memcpy(key, ip, 16);
		return 0;
	}
	memcpy(&a, ip, 4);
	if (!net_ip4_unicast(n, a) || a == n->conf.ip4)
		return -EINVAL;
	net_key4(a, key);
	return 0;
}

int
roce_net_neigh_add(struct roce_net *n, const uint8_t *ip, int ipv6,
		const struct rte_ether_addr *mac, int permanent, uint64_t now)
{
	struct net_neigh *e;
	uint8_t key[16];

	if (mac == NULL || !rte_is_valid_assigned_ether_addr(mac) ||
			neigh_key(n, ip, ipv6, key) != 0)
		return -EINVAL;
	e = neigh_find(n, key);
	if (e == NULL) {
		e = neigh_new(n, key, 0, now);
		if (e == NULL) {
			n->c[ROCE_NET_C_TABLE_FULL]++;
			return -ENOSPC;
		}
	}
	e->used = now;
	neigh_set(n, e, mac, permanent ? ROCE_NET_NEIGH_PERMANENT : ROCE_NET_NEIGH_REACHABLE,
			now);
	return 0;
}

int
roce_net_neigh_del(struct roce_net *n, const uint8_t *ip, int ipv6)
{
	struct net_neigh *e;
	uint8_t key[16];

	if (neigh_key(n, ip, ipv6, key) != 0)
		return -EINVAL;
	e = neigh_find(n, key);
	if (e == NULL)
		return -ENOENT;
	neigh_release(n, e);
	return 0;
}

uint32_t
roce_net_neigh_flush(struct roce_net *n)
{
	uint32_t i, k = 0;

	for (i = 0; i < n->conf.neigh_max; i++) {
		struct net_neigh *e = &n->neigh[i];

		if (e->state == ROCE_NET_NEIGH_NONE || e->state == ROCE_NET_NEIGH_PERMANENT)
			continue;
		neigh_release(n, e);
		k++;
	}
	return k;
}

static void
neigh_info(const struct roce_net *n, const struct net_neigh *e, uint64_t now,
		struct roce_net_neigh_info *info)
{
	memset(info, 0, sizeof(*info));
	info->ipv6 = !net_ip6_v4mapped(e->ip);
	memcpy(info->ip, info->ipv6 ? e->ip : e->ip + 12, info->ipv6 ? 16 : 4);
	info->state = neigh_state_at(n, e, now);
	info->probes = e->probes;
	info->queued = e->nq;
	if (neigh_has_mac(e->state))
		info->mac = e->mac;
	info->confirmed = e->confirmed;
	info->deadline = neigh_timed(e->state) ? e->deadline : 0;
	info->used = e->used;
	info->updated = e->updated;
}

int
roce_net_neigh_lookup(const struct roce_net *n, const uint8_t *ip, int ipv6, uint64_t now,
		struct roce_net_neigh_info *info)
{
	const struct net_neigh *e;
	uint8_t key[16];

	if (neigh_key(n, ip, ipv6, key) != 0)
		return -EINVAL;
	e = neigh_find(n, key);
	if (e == NULL)
		return -ENOENT;
	neigh_info(n, e, now, info);
	return 0;
}

uint32_t
roce_net_neigh_dump(const struct roce_net *n, uint64_t now, struct roce_net_neigh_info *info,
		uint32_t max)
{
	uint32_t i, k = 0;

	for (i = 0; i < n->conf.neigh_max; i++) {
		if (n->neigh[i].state == ROCE_NET_NEIGH_NONE)
			continue;
		if (k < max)
			neigh_info(n, &n->neigh[i], now, &info[k]);
		k++;
	}
	return k;
}
