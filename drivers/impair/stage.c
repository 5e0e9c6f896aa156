/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One queue's impairment: the per-packet decisions, the reorder hold, the delay line and the
 * two burst semantics (rx may shrink or grow a burst, tx keeps its length). Runs on the lcore
 * polling the queue; nothing here is shared.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>

#include "impair_private.h"

#define LINE_MASK (ROCE_IMPAIR_LINE_SIZE - 1)
#define VOID_LEN 60
#define ETHER_TYPE_VOID 0x88B5      /* IEEE 802 local experimental */

_Static_assert((ROCE_IMPAIR_LINE_SIZE & LINE_MASK) == 0, "line size: a power of two");

/* ol_flags bits on what a tx stage handed on, so that a retried packet is not judged twice. */
static uint64_t done_flag;
static uint64_t void_flag;

int
impair_flags_register(void)
{
	static const struct rte_mbuf_dynflag done = { .name = "roce_impair_done" };
	static const struct rte_mbuf_dynflag vd = { .name = "roce_impair_void" };
	int a, b;

	if (done_flag != 0)
		return 0;
	a = rte_mbuf_dynflag_register(&done);
	b = rte_mbuf_dynflag_register(&vd);
	if (a < 0 || b < 0)
		return -rte_errno;
	void_flag = UINT64_C(1) << b;
	done_flag = UINT64_C(1) << a;
	return 0;
}

int
roce_impair_is_void(const struct rte_mbuf *m)
{
	return void_flag != 0 && (m->ol_flags & void_flag) != 0;
}

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

/*
 * Set CE on an ECT(0)/ECT(1) IPv4 or IPv6 packet (up to two VLAN tags). The RoCE ICRC
 * masks TOS and traffic class, so it stays valid; the IPv4 checksum is updated.
 */
static int
mark_ce(struct rte_mbuf *m)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t len = m->data_len, off = RTE_ETHER_HDR_LEN;
	uint16_t type;
	int tags;

	/* Shared data (clones) must not change under the other users. */
	if (len < off || !RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
		return 0;
	memcpy(&type, p + 12, 2);
	for (tags = 0; tags < 2 && (type == RTE_BE16(RTE_ETHER_TYPE_VLAN) ||
			type == RTE_BE16(RTE_ETHER_TYPE_QINQ)); tags++) {
		if (len < off + 4)
			return 0;
		memcpy(&type, p + off + 2, 2);
		off += 4;
	}
	if (type == RTE_BE16(RTE_ETHER_TYPE_IPV4))
		return mark_ipv4(p + off, len - off);
	if (type == RTE_BE16(RTE_ETHER_TYPE_IPV6))
		return mark_ipv6(p + off, len - off);
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
	if (u_ecn < s->ecn && mark_ce(m))
		st->cnt[ROCE_IMPAIR_C_CE_MARKED]++;
	if (u_dup < s->dup) {
		d = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
		st->cnt[d != NULL ? ROCE_IMPAIR_C_DUPLICATED : ROCE_IMPAIR_C_NOMEM]++;
	}
	reorder_in(st, cfg, m, now);
	if (d != NULL)
		reorder_in(st, cfg, d, now);
}

/* Common start of a burst; @return whether there is nothing to do at all. */
static int
burst_begin(struct roce_impair_stage *st, const struct impair_cfg *cfg, uint64_t now)
{
	if (cfg == NULL) {
		if (st->nb_held == 0 && line_empty(st))
			return 1;
		/* Cleared: let everything held go. */
		held_release(st, NULL, now, 1);
		return 0;
	}
	if (cfg->gen != st->gen)
		impair_stage_reset(st, cfg, now);
	held_release(st, cfg, now, 0);
	return 0;
}

uint16_t
impair_rx(struct roce_impair_stage *st, const struct impair_cfg *cfg, struct rte_mbuf **pkts,
		uint16_t n, uint16_t max, uint64_t now)
{
	uint16_t i, k = 0;

	if (burst_begin(st, cfg, now))
		return n;
	for (i = 0; i < n; i++) {
		if (cfg == NULL)
			emit(st, NULL, pkts[i], now);
		else
			process(st, cfg, pkts[i], now);
	}
	while (k < max && (cfg == NULL ? !line_empty(st) : line_due(st, now)))
		pkts[k++] = line_pop(st);
	st->cnt[ROCE_IMPAIR_C_PASSED] += k;
	return k;
}

/* A frame receivers discard, to fill a tx slot (see roce_impair.h). */
static struct rte_mbuf *
make_void(struct roce_impair_stage *st)
{
	struct rte_ether_hdr *eh;
	struct rte_mbuf *m;

	m = st->void_pool != NULL ? rte_pktmbuf_alloc(st->void_pool) : NULL;
	eh = m != NULL ? (struct rte_ether_hdr *)rte_pktmbuf_append(m, VOID_LEN) : NULL;
	if (eh == NULL) {
		rte_pktmbuf_free(m);
		st->cnt[ROCE_IMPAIR_C_NOMEM]++;
		return NULL;
	}
	memset(eh, 0, VOID_LEN);
	eh->dst_addr = st->void_mac;
	eh->src_addr = st->void_mac;
	eh->ether_type = RTE_BE16(ETHER_TYPE_VOID);
	m->ol_flags |= done_flag | void_flag;
	return m;
}

/* The first packet a tx queue sees tells where void frames come from and their address. */
static void
void_source(struct roce_impair_stage *st, const struct rte_mbuf *m)
{
	if (st->void_pool != NULL || m->pool == NULL)
		return;
	st->void_pool = m->pool;
	if (m->data_len >= RTE_ETHER_HDR_LEN)
		st->void_mac = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *)->src_addr;
}

/*
 * Slots of the burst, in order: packets handed on before and given back by the caller (they
 * are older than anything in the line), then what the line has due, then void frames.
 */
uint16_t
impair_tx(struct roce_impair_stage *st, const struct impair_cfg *cfg, struct rte_mbuf **pkts,
		uint16_t n, uint64_t now)
{
	uint16_t i, k = 0;
	struct rte_mbuf *m;

	if (n == 0 || burst_begin(st, cfg, now))
		return n;
	for (i = 0; i < n; i++) {
		m = pkts[i];
		if (m->ol_flags & void_flag) {
			rte_pktmbuf_free(m);
		} else if (m->ol_flags & done_flag) {
			pkts[k++] = m;
		} else {
			void_source(st, m);
			if (cfg == NULL)
				emit(st, NULL, m, now);
			else
				process(st, cfg, m, now);
		}
	}
	while (k < n && (cfg == NULL ? !line_empty(st) : line_due(st, now))) {
		m = line_pop(st);
		m->ol_flags |= done_flag;
		pkts[k++] = m;
		st->cnt[ROCE_IMPAIR_C_PASSED]++;
	}
	while (k < n) {
		m = make_void(st);
		if (m != NULL) {
			st->cnt[ROCE_IMPAIR_C_VOIDS]++;
		} else if (!line_empty(st) || st->nb_held != 0) {
			/* No mbuf: rather send a held packet early than shorten the burst. */
			if (line_empty(st))
				held_release(st, cfg, now, 1);
			m = line_pop(st);
			m->ol_flags |= done_flag;
			st->cnt[ROCE_IMPAIR_C_EARLY]++;
		} else {
			break;
		}
		pkts[k++] = m;
	}
	return k;
}

uint16_t
impair_tx_pump(struct roce_impair_stage *st, const struct impair_cfg *cfg,
		struct rte_mbuf **pkts, uint16_t max, uint64_t now)
{
	uint16_t k = 0;

	if (burst_begin(st, cfg, now))
		return 0;
	while (k < max && (cfg == NULL ? !line_empty(st) : line_due(st, now))) {
		pkts[k] = line_pop(st);
		pkts[k++]->ol_flags |= done_flag;
	}
	st->cnt[ROCE_IMPAIR_C_PASSED] += k;
	return k;
}

void
impair_tx_unpump(struct roce_impair_stage *st, struct rte_mbuf **pkts, uint16_t n)
{
	/* Back to the head, newest first; they are older than anything in the line. */
	while (n-- > 0) {
		if (st->line_tail - st->line_head == ROCE_IMPAIR_LINE_SIZE) {
			st->cnt[ROCE_IMPAIR_C_OVERFLOW]++;
			rte_pktmbuf_free(pkts[n]);
			continue;
		}
		st->line_head--;
		st->line[st->line_head & LINE_MASK].m = pkts[n];
		st->line[st->line_head & LINE_MASK].due = 0;
		st->cnt[ROCE_IMPAIR_C_PASSED]--;
	}
}

/* ---- standalone stages ---- */

struct roce_impair_stage *
roce_impair_stage_create(const struct roce_impair_spec *spec, enum roce_impair_dir dir,
		uint16_t queue, uint64_t hz)
{
	struct roce_impair_stage *st;
	struct impair_cfg *cfg;
	int ret;

	if (spec == NULL || hz == 0 || dir >= ROCE_IMPAIR_NB_DIRS) {
		rte_errno = EINVAL;
		return NULL;
	}
	ret = impair_flags_register();
	if (ret != 0) {
		rte_errno = -ret;
		return NULL;
	}
	cfg = impair_cfg_new(spec, hz, 1);
	st = cfg != NULL ? impair_stage_alloc(dir, queue, SOCKET_ID_ANY) : NULL;
	if (st == NULL) {
		free(cfg);
		rte_errno = ENOMEM;
		return NULL;
	}
	st->own = cfg;
	return st;
}

uint16_t
roce_impair_stage_rx(struct roce_impair_stage *st, struct rte_mbuf **pkts, uint16_t n,
		uint16_t max, uint64_t now)
{
	return impair_rx(st, st->own, pkts, n, max, now);
}

uint16_t
roce_impair_stage_tx(struct roce_impair_stage *st, struct rte_mbuf **pkts, uint16_t n,
		uint64_t now)
{
	return impair_tx(st, st->own, pkts, n, now);
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
	return st->nb_held + (st->line_tail - st->line_head);
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
	free((void *)(uintptr_t)st->own);
	rte_free(st);
}
