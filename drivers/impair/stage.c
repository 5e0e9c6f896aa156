/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One queue's impairment: the per-packet decisions, the reorder hold, the delay line and the
 * burst (judge what comes in, put out what is due: a burst may shrink or grow). Runs on the
 * lcore polling or transmitting on the queue; nothing here is shared.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_malloc.h>

#include "impair_private.h"
#include "roce_pfc.h"

#define LINE_MASK (ROCE_IMPAIR_LINE_SIZE - 1)

_Static_assert((ROCE_IMPAIR_LINE_SIZE & LINE_MASK) == 0, "line size: a power of two");

/* ---- PRNG: splitmix64 seeds one xorshift64* stream per impairment ---- */

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 bits. */
static inline double
draw(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return (double)((x * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
}

double
impair_draw(uint64_t *s)
{
	return draw(s);
}

void
impair_stage_reset(struct roce_impair_stage *st, const struct impair_cfg *cfg, uint64_t now)
{
	uint64_t x = cfg->spec.seed;
	unsigned int i;

	/* Mix the seed first, then the queue's identity, so nearby seeds give unrelated streams. */
	x = splitmix64(&x) ^ ((uint64_t)cfg->spec.port << 48) ^ ((uint64_t)st->dir << 40) ^
		((uint64_t)st->queue << 24);
	for (i = 0; i < S_NUM; i++) {
		st->rng[i] = splitmix64(&x);
		if (st->rng[i] == 0)
			st->rng[i] = 1;
	}
	st->ge_bad = 0;
	st->tokens = cfg->burst;
	st->last_refill = now;
	st->gen = cfg->gen;
	memcpy(st->mac, cfg->mac, sizeof(st->mac));
	bneck_reset(&st->bq, now);
}

void
impair_cfg_set_link(struct impair_cfg *c, const uint8_t mac[6], uint64_t link_mbps)
{
	uint64_t pause_ns;

	memcpy(c->mac, mac, sizeof(c->mac));
	c->link_mbps = link_mbps != 0 ? link_mbps : 100000;
	/* Refresh at half the pause time the peer reckons at the link's speed. */
	pause_ns = roce_pfc_quanta_ns(c->spec.pfc_quanta, c->link_mbps);
	c->pfc_refresh_cyc = RTE_MAX(pause_ns / 2 * c->hz / 1000000000, (uint64_t)1);
}

struct impair_cfg *
impair_cfg_new(const struct roce_impair_spec *spec, uint64_t hz, uint64_t gen)
{
	struct impair_cfg *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	c->spec = *spec;
	c->gen = gen;
	c->hz = hz;
	/* At most 1e9 ns times a few GHz: fits in 64 bits. */
	c->delay_cyc = spec->delay_ns * hz / 1000000000;
	c->jitter_cyc = spec->jitter_ns * hz / 1000000000;
	c->reorder_timeout_cyc = spec->reorder_timeout_ns * hz / 1000000000;
	c->rate_bpc = spec->rate_bps > 0 ? (double)spec->rate_bps / 8 / (double)hz : 0;
	c->burst = spec->rate_burst;
	c->bneck_cpb = spec->bneck_bps > 0 ? 8.0 * (double)hz / (double)spec->bneck_bps : 0;
	roce_pfc_dscp_map_default(c->dscp2prio);
	impair_cfg_set_link(c, (const uint8_t[6]){ 0x02, 0, 0, 0, 0, 0 }, 0);
	return c;
}

struct roce_impair_stage *
impair_stage_alloc(enum roce_impair_dir dir, uint16_t queue, int socket)
{
	struct roce_impair_stage *st;

	st = rte_zmalloc_socket("roce_impair_stage", sizeof(*st), RTE_CACHE_LINE_SIZE, socket);
	if (st == NULL)
		return NULL;
	st->dir = (uint8_t)dir;
	st->queue = queue;
	bneck_init(&st->bq);
	return st;
}

/* ---- delay line and reorder hold ---- */

static inline int
line_empty(const struct roce_impair_stage *st)
{
	return st->line_head == st->line_tail;
}

static inline struct rte_mbuf *
line_pop(struct roce_impair_stage *st)
{
	return st->line[st->line_head++ & LINE_MASK].m;
}

/* The oldest packet of the line, stamped with its due time when @cfg asks for it. */
static inline struct rte_mbuf *
line_pop_stamped(struct roce_impair_stage *st, const struct impair_cfg *cfg)
{
	const struct impair_slot *e = &st->line[st->line_head++ & LINE_MASK];

	if (cfg != NULL && cfg->arrival_ns_per_cyc != 0 && roce_impair_arrival_off >= 0) {
		*RTE_MBUF_DYNFIELD(e->m, roce_impair_arrival_off, uint64_t *) =
			(uint64_t)((double)e->due * cfg->arrival_ns_per_cyc);
		e->m->ol_flags |= roce_impair_arrival_flag;
	}
	return e->m;
}

/* Is the oldest packet of the line due? */
static inline int
line_due(const struct roce_impair_stage *st, uint64_t now)
{
	return !line_empty(st) && (int64_t)(now - st->line[st->line_head & LINE_MASK].due) >= 0;
}

/* Into the delay line; due times never go down, so packets leave in order. */
static void
emit(struct roce_impair_stage *st, const struct impair_cfg *cfg, struct rte_mbuf *m,
		uint64_t now)
{
	uint64_t due = now;

	if (cfg != NULL && (cfg->delay_cyc | cfg->jitter_cyc) != 0) {
		due += cfg->delay_cyc;
		if (cfg->jitter_cyc != 0)
			due += (uint64_t)(draw(&st->rng[S_JITTER]) * (double)(cfg->jitter_cyc + 1));
		st->cnt[ROCE_IMPAIR_C_DELAYED]++;
	}
	if ((int64_t)(due - st->last_due) < 0)
		due = st->last_due;
	st->last_due = due;
	if (st->line_tail - st->line_head == ROCE_IMPAIR_LINE_SIZE) {
		st->cnt[ROCE_IMPAIR_C_OVERFLOW]++;
		rte_pktmbuf_free(m);
		return;
	}
	st->line[st->line_tail & LINE_MASK].m = m;
	st->line[st->line_tail & LINE_MASK].due = due;
	st->line_tail++;
}

/*
 * Held packets whose count of later packets ran out or whose timeout passed (all of them when
 * @force). Counts and deadlines grow from the oldest to the newest, so only the front matters.
 */
static void
held_release(struct roce_impair_stage *st, const struct impair_cfg *cfg, uint64_t now,
		int force)
{
	while (st->nb_held != 0) {
		struct impair_held *h = &st->held[st->held_head];

		if (!force && h->left != 0 && (int64_t)(now - h->deadline) < 0)
			break;
		emit(st, cfg, h->m, now);
		st->held_head = (uint16_t)((st->held_head + 1) % ROCE_IMPAIR_MAX_DEPTH);
		st->nb_held--;
	}
}

/* Hold a packet back, or send it and count it against the held ones. */
static void
reorder_in(struct roce_impair_stage *st, const struct impair_cfg *cfg, struct rte_mbuf *m,
		uint64_t now)
{
	unsigned int i;

	if (cfg->spec.reorder > 0 && draw(&st->rng[S_REORDER]) < cfg->spec.reorder &&
			st->nb_held < ROCE_IMPAIR_MAX_DEPTH) {
		struct impair_held *h =
			&st->held[(st->held_head + st->nb_held) % ROCE_IMPAIR_MAX_DEPTH];

		h->m = m;
		h->left = cfg->spec.reorder_depth;
		h->deadline = now + cfg->reorder_timeout_cyc;
		st->nb_held++;
		st->cnt[ROCE_IMPAIR_C_REORDERED]++;
		return;
	}
	emit(st, cfg, m, now);
	if (st->nb_held == 0)
		return;
	for (i = 0; i < st->nb_held; i++) {
		struct impair_held *h = &st->held[(st->held_head + i) % ROCE_IMPAIR_MAX_DEPTH];

		if (h->left != 0)
			h->left--;
	}
	held_release(st, cfg, now, 0);
}

/* ---- ECN ---- */

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), m the 16-bit word holding TOS. */
static int
mark_ipv4(uint8_t *ip, uint32_t len)
{
	uint16_t old, new, ck;
	uint32_t sum;

	if (len < 20 || (ip[0] >> 4) != 4 || (ip[0] & 0xf) < 5)
		return 0;
	if ((ip[1] & 3) == 0 || (ip[1] & 3) == 3)
		return 0;
	old = (uint16_t)(ip[0] << 8 | ip[1]);
	ip[1] |= 3;
	new = (uint16_t)(ip[0] << 8 | ip[1]);
	ck = (uint16_t)(ip[10] << 8 | ip[11]);
	sum = (uint32_t)(uint16_t)~ck + (uint16_t)~old + new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	ck = (uint16_t)~sum;
	ip[10] = (uint8_t)(ck >> 8);
	ip[11] = (uint8_t)ck;
	return 1;
}

/* Traffic class: the low 4 bits of byte 0 and the high 4 of byte 1; ECN is its low 2 bits. */
static int
mark_ipv6(uint8_t *ip, uint32_t len)
{
	unsigned int ecn;

	if (len < 40 || (ip[0] >> 4) != 6)
		return 0;
	ecn = (ip[1] >> 4) & 3;
	if (ecn == 0 || ecn == 3)
		return 0;
	ip[1] |= 0x30;
	return 1;
}

/* The IP header of a frame (up to two VLAN tags): offset, and 4 or 6; 0 when not IP. */
static int
l3_find(const struct rte_mbuf *m, uint32_t *l3)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = m->data_len, off = RTE_ETHER_HDR_LEN;
	uint16_t type;
	int tags;

	if (len < off)
		return 0;
	memcpy(&type, p + 12, 2);
	for (tags = 0; tags < 2 && (type == RTE_BE16(RTE_ETHER_TYPE_VLAN) ||
			type == RTE_BE16(RTE_ETHER_TYPE_QINQ)); tags++) {
		if (len < off + 4)
			return 0;
		memcpy(&type, p + off + 2, 2);
		off += 4;
	}
	*l3 = off;
	if (type == RTE_BE16(RTE_ETHER_TYPE_IPV4))
		return 4;
	if (type == RTE_BE16(RTE_ETHER_TYPE_IPV6))
		return 6;
	return 0;
}

/* Whether bneck_to= sends @m past the bottleneck: its destination is outside the prefix. */
static int
bneck_to_other(const struct roce_impair_spec *s, const struct rte_mbuf *m)
{
	unsigned int whole = s->bneck_to_len / 8, bits = s->bneck_to_len % 8;
	const uint8_t *ip, *dst;
	uint32_t off = 0;
	int v;

	if (s->bneck_to_fam == 0)
		return 0;
	v = l3_find(m, &off);
	ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
	if (v == 4 && s->bneck_to_fam == 4 && m->data_len >= off + 20 && (ip[0] >> 4) == 4)
		dst = ip + 16;
	else if (v == 6 && s->bneck_to_fam == 6 && m->data_len >= off + 40 && (ip[0] >> 4) == 6)
		dst = ip + 24;
	else
		return 1;       /* another family, or not IP: another destination */
	return memcmp(dst, s->bneck_to, whole) != 0 || (bits != 0 &&
			((dst[whole] ^ s->bneck_to[whole]) & (uint8_t)(0xff00 >> bits)) != 0);
}

int
impair_ecn_of(const struct rte_mbuf *m)
{
	const uint8_t *ip;
	uint32_t off = 0;
	int v = l3_find(m, &off);

	ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
	if (v == 4 && m->data_len >= off + 20 && (ip[0] >> 4) == 4)
		return ip[1] & 3;
	if (v == 6 && m->data_len >= off + 40 && (ip[0] >> 4) == 6)
		return (ip[1] >> 4) & 3;
	return -1;
}

/*
 * Set CE on an ECT(0)/ECT(1) IPv4 or IPv6 packet (up to two VLAN tags). The RoCE ICRC
 * masks TOS and traffic class, so it stays valid; the IPv4 checksum is updated.
 */
int
impair_mark_ce(struct rte_mbuf *m)
{
	uint32_t off = 0;
	int v;

	/* Shared data (clones) must not change under the other users. */
	if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
		return 0;
	v = l3_find(m, &off);
	if (v == 4)
		return mark_ipv4(rte_pktmbuf_mtod_offset(m, uint8_t *, off), m->data_len - off);
	if (v == 6)
		return mark_ipv6(rte_pktmbuf_mtod_offset(m, uint8_t *, off), m->data_len - off);
	return 0;
}

/* ---- per packet ---- */

/* Policer: a token bucket of bytes, refilled by elapsed time. */
static int
rate_ok(struct roce_impair_stage *st, const struct impair_cfg *cfg, uint32_t len,
		uint64_t now)
{
	double t = st->tokens + (double)(now - st->last_refill) * cfg->rate_bpc;

	st->last_refill = now;
	if (t > cfg->burst)
		t = cfg->burst;
	if (t < len) {
		st->tokens = t;
		return 0;
	}
	st->tokens = t - len;
	return 1;
}

static void
drop(struct roce_impair_stage *st, struct rte_mbuf *m, enum roce_impair_counter c)
{
	st->cnt[c]++;
	rte_pktmbuf_free(m);
}

/*
 * Every stream draws once per packet seen whether or not an earlier stage dropped it, so each
 * impairment's decisions depend only on the seed and the packet's index.
 */
static void
process(struct roce_impair_stage *st, const struct impair_cfg *cfg, struct rte_mbuf *m,
		uint64_t now)
{
	const struct roce_impair_spec *s = &cfg->spec;
	double ge_t = 0, ge_l = 0, u_loss = 1, u_ecn = 1, u_dup = 1;
	struct rte_mbuf *d = NULL;

	st->cnt[ROCE_IMPAIR_C_SEEN]++;
	if (s->ge_p > 0 || s->ge_k > 0) {
		ge_t = draw(&st->rng[S_GE]);
		ge_l = draw(&st->rng[S_GE]);
		st->ge_bad = st->ge_bad ? !(ge_t < s->ge_r) : ge_t < s->ge_p;
	}
	if (s->loss > 0)
		u_loss = draw(&st->rng[S_LOSS]);
	if (s->ecn > 0)
		u_ecn = draw(&st->rng[S_ECN]);
	if (s->dup > 0)
		u_dup = draw(&st->rng[S_DUP]);
	if (s->rate_bps > 0 && !rate_ok(st, cfg, m->pkt_len, now)) {
		drop(st, m, ROCE_IMPAIR_C_RATE_DROPPED);
		return;
	}
	if ((s->ge_p > 0 || s->ge_k > 0) && ge_l < (st->ge_bad ? s->ge_h : s->ge_k)) {
		drop(st, m, ROCE_IMPAIR_C_DROPPED_BURST);
		return;
	}
	if (u_loss < s->loss) {
		drop(st, m, ROCE_IMPAIR_C_DROPPED_UNIFORM);
		return;
	}
	if (u_ecn < s->ecn && impair_mark_ce(m))
		st->cnt[ROCE_IMPAIR_C_CE_MARKED]++;
	if (u_dup < s->dup) {
		d = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
		st->cnt[d != NULL ? ROCE_IMPAIR_C_DUPLICATED : ROCE_IMPAIR_C_NOMEM]++;
	}
	if (s->bneck_bps > 0) {
		if (!bneck_to_other(s, m)) {
			bneck_enqueue(st, cfg, m, now);
			if (d != NULL)
				bneck_enqueue(st, cfg, d, now);
			return;
		}
		st->cnt[ROCE_IMPAIR_C_BNECK_PAST] += 1u + (d != NULL);
	}
	reorder_in(st, cfg, m, now);
	if (d != NULL)
		reorder_in(st, cfg, d, now);
}

void
impair_pass(struct roce_impair_stage *st, const struct impair_cfg *cfg, struct rte_mbuf *m,
		uint64_t now)
{
	if (cfg == NULL)
		emit(st, NULL, m, now);
	else
		reorder_in(st, cfg, m, now);
}

/* Common start of a burst; @return whether there is nothing to do at all. */
static int
burst_begin(struct roce_impair_stage *st, const struct impair_cfg *cfg, uint64_t now)
{
	if (cfg == NULL) {
		if (st->nb_held == 0 && line_empty(st) && st->bq.nb == 0 && st->bq.paused == 0)
			return 1;
		/* Cleared: let everything held go, resume what the bottleneck paused. */
		held_release(st, NULL, now, 1);
		bneck_flush(st, now);
		return 0;
	}
	if (cfg->gen != st->gen)
		impair_stage_reset(st, cfg, now);
	held_release(st, cfg, now, 0);
	/* What left the bottleneck before now, before anything new queues behind it. */
	if (st->bq.nb != 0)
		bneck_drain(st, cfg, now);
	return 0;
}

uint16_t
impair_burst(struct roce_impair_stage *st, const struct impair_cfg *cfg,
		struct rte_mbuf **pkts, uint16_t n, uint16_t max, uint64_t now)
{
	uint16_t i, k = 0;

	/* Nothing configured, nothing held: the burst passes as it is, if it fits. */
	if (burst_begin(st, cfg, now) && n <= max)
		return n;
	for (i = 0; i < n; i++) {
		if (cfg == NULL)
			emit(st, NULL, pkts[i], now);
		else
			process(st, cfg, pkts[i], now);
	}
	if (cfg != NULL ? cfg->spec.pfc_xoff != 0 || st->bq.paused != 0 : st->bq.paused != 0)
		bneck_pfc(st, cfg, now);
	while (k < max && (cfg == NULL ? !line_empty(st) : line_due(st, now)))
		pkts[k++] = line_pop_stamped(st, cfg);
	st->cnt[ROCE_IMPAIR_C_PASSED] += k;
	return k;
}

/* ---- standalone stages ---- */

struct roce_impair_stage *
roce_impair_stage_create(const struct roce_impair_spec *spec, enum roce_impair_dir dir,
		uint16_t queue, uint64_t hz)
{
	struct roce_impair_stage *st;
	struct impair_cfg *cfg;

	if (spec == NULL || hz == 0 || dir >= ROCE_IMPAIR_NB_DIRS) {
		rte_errno = EINVAL;
		return NULL;
	}
	cfg = impair_cfg_new(spec, hz, 1);
	st = cfg != NULL ? impair_stage_alloc(dir, queue, SOCKET_ID_ANY) : NULL;
	if (st == NULL) {
		free(cfg);
		rte_errno = ENOMEM;
		return NULL;
	}
	if (dir == ROCE_IMPAIR_RX && roce_impair_arrival_register() == 0)
		cfg->arrival_ns_per_cyc = 1e9 / (double)hz;
	st->own = cfg;
	return st;
}

uint16_t
roce_impair_stage_burst(struct roce_impair_stage *st, struct rte_mbuf **pkts, uint16_t n,
		uint16_t max, uint64_t now)
{
	return impair_burst(st, st->own, pkts, n, max, now);
}

void
roce_impair_stage_counters(const struct roce_impair_stage *st,
		uint64_t cnt[ROCE_IMPAIR_CNT_NUM])
{
	unsigned int i;

	for (i = 0; i < ROCE_IMPAIR_CNT_NUM; i++)
		cnt[i] += __atomic_load_n(&st->cnt[i], __ATOMIC_RELAXED);
}

unsigned int
roce_impair_stage_held(const struct roce_impair_stage *st)
{
	return impair_stage_held(st);
}

void
roce_impair_stage_free(struct roce_impair_stage *st)
{
	if (st == NULL)
		return;
	while (st->nb_held != 0) {
		rte_pktmbuf_free(st->held[st->held_head].m);
		st->held_head = (uint16_t)((st->held_head + 1) % ROCE_IMPAIR_MAX_DEPTH);
		st->nb_held--;
	}
	while (!line_empty(st))
		rte_pktmbuf_free(line_pop(st));
	bneck_free(&st->bq);
	free((void *)(uintptr_t)st->own);
	rte_free(st);
}

void
roce_impair_stage_set_link(struct roce_impair_stage *st, const uint8_t mac[6],
		uint64_t link_mbps)
{
	impair_cfg_set_link((struct impair_cfg *)(uintptr_t)st->own, mac, link_mbps);
	memcpy(st->mac, mac, sizeof(st->mac));
}

uint16_t
impair_ctrl_take(struct roce_impair_stage *st, struct rte_mbuf **pkts, uint16_t max)
{
	struct impair_bneck *bq = &st->bq;
	uint16_t n = RTE_MIN(max, bq->nb_ctrl);

	if (n == 0)
		return 0;
	memcpy(pkts, bq->ctrl, n * sizeof(pkts[0]));
	bq->nb_ctrl = (uint16_t)(bq->nb_ctrl - n);
	memmove(bq->ctrl, bq->ctrl + n, bq->nb_ctrl * sizeof(bq->ctrl[0]));
	return n;
}

uint16_t
roce_impair_stage_ctrl(struct roce_impair_stage *st, struct rte_mbuf **pkts, uint16_t max)
{
	return impair_ctrl_take(st, pkts, max);
}

void
roce_impair_stage_queue_stats(const struct roce_impair_stage *st,
		struct roce_impair_qstats *qs)
{
	uint64_t hist[QHIST_NB] = {0};

	memset(qs, 0, sizeof(*qs));
	bneck_stats_add(&st->bq, hist, qs);
	bneck_stats_finish(hist, qs);
}
