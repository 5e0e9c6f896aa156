/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bottleneck stage: a switch egress queue on the stage's clock (see roce_impair.h).
 * Eight per-priority FIFOs share a buffer and a wire drained at the configured rate, served
 * by deficit round robin; RED marks or drops on enqueue, a full buffer drops, and in lossless
 * mode PFC frames pause a priority at XOFF and resume it at XON. Runs on the lcore that owns
 * the stage; nothing here is shared but the counters and samples a reader loads.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "impair_private.h"
#include "roce_pfc.h"

_Static_assert(ROCE_IMPAIR_BNECK_SLOTS < BNECK_NONE, "slot indexes fit 16 bits");

void
bneck_init(struct impair_bneck *bq)
{
	unsigned int i;

	memset(bq, 0, offsetof(struct impair_bneck, slot));
	for (i = 0; i < BNECK_NB_PRIO; i++)
		bq->head[i] = bq->tail[i] = BNECK_NONE;
	for (i = 0; i < ROCE_IMPAIR_BNECK_SLOTS; i++)
		bq->slot[i].next = (uint16_t)(i + 1 < ROCE_IMPAIR_BNECK_SLOTS ? i + 1 : BNECK_NONE);
	bq->free_head = 0;
	bq->serving = BNECK_NONE;
}

void
bneck_reset(struct impair_bneck *bq, uint64_t now)
{
	/* The wire is free from now: a new rate applies to what is queued from here on. */
	bq->t_free = now;
	bq->frac = 0;
	bq->serving = BNECK_NONE;
	__atomic_store_n(&bq->q_samples, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&bq->q_max, 0, __ATOMIC_RELAXED);
	memset(bq->qhist, 0, sizeof(bq->qhist));
}

/* ---- depth samples ---- */

static inline unsigned int
qhist_index(uint64_t v)
{
	unsigned int msb, shift;

	if (v < 2 * QHIST_SUB)
		return (unsigned int)v;
	msb = 63 - (unsigned int)__builtin_clzll(v);
	shift = msb - 6;
	if (shift + 1 >= QHIST_NB / QHIST_SUB)
		return QHIST_NB - 1;
	return (shift + 1) * QHIST_SUB + (unsigned int)((v >> shift) - QHIST_SUB);
}

/* The largest value a bucket holds: percentiles are reported on the safe side. */
static inline uint64_t
qhist_value(unsigned int i)
{
	unsigned int shift;

	if (i < 2 * QHIST_SUB)
		return i;
	shift = i / QHIST_SUB - 1;
	return (((uint64_t)(i % QHIST_SUB) + QHIST_SUB) << shift) + ((1ull << shift) - 1);
}

static inline void
sample(struct impair_bneck *bq, uint32_t depth)
{
	unsigned int i = qhist_index(depth);

	/* Plain increments of the owner's counters; readers load them relaxed. */
	__atomic_store_n(&bq->qhist[i], bq->qhist[i] + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&bq->q_samples, bq->q_samples + 1, __ATOMIC_RELAXED);
	if (depth > bq->q_max)
		__atomic_store_n(&bq->q_max, depth, __ATOMIC_RELAXED);
}

void
bneck_stats_add(const struct impair_bneck *bq, uint64_t hist[QHIST_NB],
		struct roce_impair_qstats *qs)
{
	unsigned int i;
	uint64_t max;

	for (i = 0; i < QHIST_NB; i++)
		hist[i] += __atomic_load_n(&bq->qhist[i], __ATOMIC_RELAXED);
	qs->samples += __atomic_load_n(&bq->q_samples, __ATOMIC_RELAXED);
	max = __atomic_load_n(&bq->q_max, __ATOMIC_RELAXED);
	if (max > qs->max)
		qs->max = max;
	for (i = 0; i < BNECK_NB_PRIO; i++) {
		uint64_t d = __atomic_load_n(&bq->depth[i], __ATOMIC_RELAXED);

		qs->depth_prio[i] += d;
		qs->depth += d;
	}
	qs->paused |= __atomic_load_n(&bq->paused, __ATOMIC_RELAXED);
}

static uint64_t
percentile(const uint64_t hist[QHIST_NB], uint64_t total, double q)
{
	uint64_t rank = (uint64_t)((double)total * q), seen = 0;
	unsigned int i;

	if (rank >= total)
		rank = total - 1;
	for (i = 0; i < QHIST_NB; i++) {
		seen += hist[i];
		if (seen > rank)
			return qhist_value(i);
	}
	return qhist_value(QHIST_NB - 1);
}

void
bneck_stats_finish(const uint64_t hist[QHIST_NB], struct roce_impair_qstats *qs)
{
	uint64_t total = 0;
	unsigned int i;

	for (i = 0; i < QHIST_NB; i++)
		total += hist[i];
	if (total == 0)
		return;
	qs->p50 = percentile(hist, total, 0.50);
	qs->p99 = percentile(hist, total, 0.99);
	/* A bucket's top may pass the largest sample seen. */
	qs->p50 = RTE_MIN(qs->p50, qs->max);
	qs->p99 = RTE_MIN(qs->p99, qs->max);
}

/* ---- the FIFOs ---- */

static inline void
q_push(struct impair_bneck *bq, unsigned int prio, struct rte_mbuf *m)
{
	uint16_t i = bq->free_head;

	bq->free_head = bq->slot[i].next;
	bq->slot[i].m = m;
	bq->slot[i].prio = (uint8_t)prio;
	bq->slot[i].next = BNECK_NONE;
	if (bq->tail[prio] == BNECK_NONE)
		bq->head[prio] = i;
	else
		bq->slot[bq->tail[prio]].next = i;
	bq->tail[prio] = i;
	bq->nb++;
	bq->total += m->pkt_len;
	__atomic_store_n(&bq->depth[prio], bq->depth[prio] + m->pkt_len, __ATOMIC_RELAXED);
}

static inline struct rte_mbuf *
q_pop(struct impair_bneck *bq, unsigned int prio)
{
	uint16_t i = bq->head[prio];
	struct rte_mbuf *m = bq->slot[i].m;

	bq->head[prio] = bq->slot[i].next;
	if (bq->head[prio] == BNECK_NONE)
		bq->tail[prio] = BNECK_NONE;
	bq->slot[i].next = bq->free_head;
	bq->free_head = i;
	bq->nb--;
	bq->total -= m->pkt_len;
	__atomic_store_n(&bq->depth[prio], bq->depth[prio] - m->pkt_len, __ATOMIC_RELAXED);
	return m;
}

/* Deficit round robin: the priority whose head goes on the wire next. */
static unsigned int
drr_pick(struct impair_bneck *bq)
{
	for (;;) {
		unsigned int p = bq->rr;

		if (bq->head[p] != BNECK_NONE) {
			uint32_t len = bq->slot[bq->head[p]].m->pkt_len;

			if (bq->deficit[p] >= len) {
				bq->deficit[p] -= len;
				return p;
			}
		} else {
			bq->deficit[p] = 0;
		}
		bq->rr = (uint8_t)((p + 1) % BNECK_NB_PRIO);
		if (bq->head[bq->rr] != BNECK_NONE)
			bq->deficit[bq->rr] += BNECK_QUANTUM;
	}
}

static inline int
lossless(const struct roce_impair_spec *s, unsigned int prio)
{
	return s->pfc_xoff != 0 && (s->pfc_prios & (1u << prio));
}

/* RED: 0 below kmin, rising linearly to pmax at kmax, 1 from kmax. */
static inline double
red_prob(const struct roce_impair_spec *s, uint32_t q)
{
	if (q >= s->red_kmax)
		return 1;
	if (q <= s->red_kmin)
		return 0;
	return s->red_pmax * (double)(q - s->red_kmin) / (double)(s->red_kmax - s->red_kmin);
}

/*
 * red=...:deq: an ECT frame leaving with @q bytes of its priority behind it is marked with
 * RED's probability at @q, so the mark reaches the receiver without the queue's delay
 * ("mark-front", Liu and Jain, Computer Networks 35, 2001).
 */
static void
red_mark_leaving(struct roce_impair_stage *st, const struct impair_cfg *cfg, struct rte_mbuf *m,
		uint32_t q)
{
	if (impair_draw(&st->rng[S_RED]) < red_prob(&cfg->spec, q) && impair_ecn_of(m) > 0 &&
			impair_mark_ce(m))
		st->cnt[ROCE_IMPAIR_C_RED_MARKED]++;
}

void
bneck_enqueue(struct roce_impair_stage *st, const struct impair_cfg *cfg, struct rte_mbuf *m,
		uint64_t now)
{
	const struct roce_impair_spec *s = &cfg->spec;
	struct impair_bneck *bq = &st->bq;
	unsigned int prio = roce_pfc_prio_of(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len,
			cfg->dscp2prio);
	uint32_t q = bq->depth[prio];

	bq->pool = m->pool;
	sample(bq, q);
	if (s->red_kmax != 0) {
		double u = impair_draw(&st->rng[S_RED]);

		if (u < red_prob(s, q)) {
			int ecn = impair_ecn_of(m);

			if (ecn > 0 && s->red_deq) {
				/* Marked, or not, as it leaves (bneck_drain()). */
			} else if (ecn > 0) {
				/* ECT: marked; CE already: left as it is. */
				if (impair_mark_ce(m))
					st->cnt[ROCE_IMPAIR_C_RED_MARKED]++;
			} else if (!lossless(s, prio)) {
				st->cnt[ROCE_IMPAIR_C_RED_DROPPED]++;
				rte_pktmbuf_free(m);
				return;
			}
		}
	}
	if (bq->total + m->pkt_len > s->bneck_buffer || bq->free_head == BNECK_NONE) {
		st->cnt[lossless(s, prio) ? ROCE_IMPAIR_C_HEADROOM_DROPPED :
			ROCE_IMPAIR_C_TAIL_DROPPED]++;
		rte_pktmbuf_free(m);
		return;
	}
	/* An idle wire starts sending at the first arrival. */
	if (bq->nb == 0 && (int64_t)(now - bq->t_free) > 0) {
		bq->t_free = now;
		bq->frac = 0;
	}
	q_push(bq, prio, m);
	st->cnt[ROCE_IMPAIR_C_BNECK_IN]++;
}

void
bneck_drain(struct roce_impair_stage *st, const struct impair_cfg *cfg, uint64_t now)
{
	struct impair_bneck *bq = &st->bq;

	while (bq->nb != 0) {
		struct rte_mbuf *m;

		if (bq->serving == BNECK_NONE) {
			double t = (double)(bq->slot[bq->head[bq->serving = (uint16_t)drr_pick(bq)]]
					.m->pkt_len + ROCE_IMPAIR_WIRE_OVERHEAD) * cfg->bneck_cpb +
				bq->frac;
			uint64_t whole = (uint64_t)t;

			bq->frac = t - (double)whole;
			bq->dep = bq->t_free + whole;
		}
		if ((int64_t)(now - bq->dep) < 0)
			break;
		m = q_pop(bq, bq->serving);
		if (cfg->spec.red_deq)
			red_mark_leaving(st, cfg, m, bq->depth[bq->serving]);
		bq->serving = BNECK_NONE;
		bq->t_free = bq->dep;
		st->cnt[ROCE_IMPAIR_C_BNECK_OUT]++;
		st->cnt[ROCE_IMPAIR_C_BNECK_OUT_BYTES] += m->pkt_len;
		impair_pass(st, cfg, m, bq->dep);
	}
}

void
bneck_flush(struct roce_impair_stage *st, uint64_t now)
{
	struct impair_bneck *bq = &st->bq;
	unsigned int p;

	for (p = 0; p < BNECK_NB_PRIO; p++)
		while (bq->head[p] != BNECK_NONE)
			impair_pass(st, NULL, q_pop(bq, p), now);
	bq->serving = BNECK_NONE;
	if (bq->paused != 0)
		bneck_pfc(st, NULL, now);
}

/* One PFC frame into the stage's outbox: @pause priorities for @quantum, @resume priorities
 * with time 0, from @mac. @return 0, or -1 (counted) when it could not be made. */
static int
pfc_make(struct roce_impair_stage *st, const uint8_t *mac, uint16_t quantum, uint8_t pause,
		uint8_t resume)
{
	struct impair_bneck *bq = &st->bq;
	uint16_t quanta[ROCE_PFC_NB_PRIO] = {0};
	struct rte_mbuf *m = NULL;
	unsigned int p;
	uint8_t *buf;

	if (bq->nb_ctrl < ROCE_IMPAIR_CTRL_MAX && bq->pool != NULL)
		m = rte_pktmbuf_alloc(bq->pool);
	buf = m != NULL ? (uint8_t *)rte_pktmbuf_append(m, ROCE_PFC_FRAME_LEN) : NULL;
	if (buf == NULL) {
		rte_pktmbuf_free(m);
		st->cnt[ROCE_IMPAIR_C_PFC_NOMEM]++;
		return -1;
	}
	for (p = 0; p < ROCE_PFC_NB_PRIO; p++)
		if (pause & (1u << p))
			quanta[p] = quantum;
	roce_pfc_build(buf, ROCE_PFC_FRAME_LEN, mac, (uint8_t)(pause | resume), quanta);
	bq->ctrl[bq->nb_ctrl++] = m;
	st->cnt[pause != 0 ? ROCE_IMPAIR_C_PFC_PAUSE_TX : ROCE_IMPAIR_C_PFC_RESUME_TX]++;
	return 0;
}

void
bneck_pfc(struct roce_impair_stage *st, const struct impair_cfg *cfg, uint64_t now)
{
	struct impair_bneck *bq = &st->bq;
	uint8_t want = 0, resume;
	unsigned int p;

	if (cfg != NULL && cfg->spec.pfc_xoff != 0) {
		const struct roce_impair_spec *s = &cfg->spec;

		/* Hysteresis: paused from XOFF up, until XON or below. */
		for (p = 0; p < BNECK_NB_PRIO; p++) {
			if (!lossless(s, p))
				continue;
			if (bq->paused & (1u << p) ? bq->depth[p] > s->pfc_xon :
					bq->depth[p] >= s->pfc_xoff)
				want |= (uint8_t)(1u << p);
		}
	} else if (bq->paused == 0) {
		return;
	}
	resume = bq->paused & (uint8_t)~want;
	/* A change, or the pauses would run out: every paused priority is refreshed at once. */
	if (want == bq->paused && (want == 0 || (int64_t)(now - bq->refresh_at) < 0))
		return;
	/* Cleared (no configuration): the resume comes from the last one's MAC. */
	if (pfc_make(st, cfg != NULL ? cfg->mac : st->mac, want != 0 ? cfg->spec.pfc_quanta : 0,
			want, resume) != 0)
		return;
	__atomic_store_n(&bq->paused, want, __ATOMIC_RELAXED);
	if (want != 0)
		bq->refresh_at = now + cfg->pfc_refresh_cyc;
}

void
bneck_free(struct impair_bneck *bq)
{
	unsigned int p;

	for (p = 0; p < BNECK_NB_PRIO; p++)
		while (bq->head[p] != BNECK_NONE)
			rte_pktmbuf_free(q_pop(bq, p));
	rte_pktmbuf_free_bulk(bq->ctrl, bq->nb_ctrl);
	bq->nb_ctrl = 0;
}
