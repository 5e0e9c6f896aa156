/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN reaction point of one QP. Rates are in Mb/s (double), times in ns. The equations and
 * the order of simultaneous events are in doc/congestion-control.md; the unit test checks
 * them against a model of its own.
 */

#include <math.h>

#include <rte_common.h>

#include "cc_private.h"

#define US 1000ull
/* RC this close to the maximum counts as there: rates resolve to 1 Mb/s, as the knobs. */
#define FULL_EPS_MBPS 1.0

static inline uint32_t
kv(const struct cc_qp *q, enum roce_cc_knob k)
{
	return q->p->v[k];
}

double
rp_max_mbps(const struct roce_cc *cc, const struct cc_qp *q)
{
	uint64_t m = kv(q, ROCE_CC_RP_MAX_RATE);

	return (double)(m == 0 || m > cc->conf.line_mbps ? cc->conf.line_mbps : m);
}

static void
trace(struct roce_cc *cc, struct cc_qp *q, enum roce_cc_event ev, uint64_t at)
{
	struct cc_trace_rec *e;

	RTE_SET_USED(cc);
	/* Counted even without a ring: a reader's cursor then shows what it did not get. */
	if (q->trace_len == 0) {
		q->trace_seq++;
		return;
	}
	e = &q->trace[q->trace_seq++ & (q->trace_len - 1)];
	e->time_ns = at;
	e->rc = q->rc;
	e->rt = q->rt;
	e->alpha = q->alpha;
	e->cnps = (uint32_t)q->cnps;
	e->event = (uint8_t)ev;
	e->stage = q->stage;
}

void
rp_init(struct roce_cc *cc, struct cc_qp *q)
{
	q->limited = q->held = q->inc_timer = q->inc_byte = q->cut_once = 0;
	q->stage = ROCE_CC_STAGE_FULL;
	q->rc = q->rt = (double)cc->conf.line_mbps;
	q->alpha = kv(q, ROCE_CC_RP_INITIAL_ALPHA_VALUE) / 1024.0;
	q->t = q->bc = 0;
	q->bytes = 0;
	q->cnps = q->reductions = 0;
	pace_rate(cc, q, cc->clock);
}

/* Back at the maximum rate: no longer limited (mlx5's rp_max_rate says as much). */
static void
go_full(struct roce_cc *cc, struct cc_qp *q, uint64_t at)
{
	q->limited = 0;
	q->stage = ROCE_CC_STAGE_FULL;
	q->rc = q->rt = (double)cc->conf.line_mbps;
	cc->cnt[ROCE_CCC_RATE_FULL]++;
	trace(cc, q, ROCE_CC_EV_FULL, at);
	pace_rate(cc, q, at);
}

/* One increase event (T or BC already counted): the stage follows from max/min(T, BC). */
static void
increase(struct roce_cc *cc, struct cc_qp *q, enum roce_cc_event ev, uint64_t at)
{
	uint32_t f = kv(q, ROCE_CC_RP_THRESHOLD);
	uint32_t hi = RTE_MAX(q->t, q->bc), lo = RTE_MIN(q->t, q->bc);
	double maxr = rp_max_mbps(cc, q);

	if (hi <= f) {
		q->stage = ROCE_CC_STAGE_FAST_RECOVERY;
		cc->cnt[ROCE_CCC_FAST_RECOVERY]++;
	} else if (lo > f) {
		q->stage = ROCE_CC_STAGE_HYPER;
		q->rt += (double)(lo - f) * kv(q, ROCE_CC_RP_HAI_RATE);
		cc->cnt[ROCE_CCC_HYPER_INC]++;
	} else {
		q->stage = ROCE_CC_STAGE_ADDITIVE;
		q->rt += kv(q, ROCE_CC_RP_AI_RATE);
		cc->cnt[ROCE_CCC_ADDITIVE_INC]++;
	}
	if (q->rt > maxr)
		q->rt = maxr;
	q->rc = (q->rt + q->rc) / 2;
	trace(cc, q, ev, at);
	if (q->rc >= maxr - FULL_EPS_MBPS)
		go_full(cc, q, at);
	else
		pace_rate(cc, q, at);
}

/* A rate reduction at @at: for a CNP, or for the CNPs the monitor period held. */
static void
reduce(struct roce_cc *cc, struct cc_qp *q, uint64_t at)
{
	double g = kv(q, ROCE_CC_RP_DCE_TCP_G) / 1024.0, minr = kv(q, ROCE_CC_RP_MIN_RATE);
	uint32_t first_rate = kv(q, ROCE_CC_RP_RATE_TO_SET_ON_FIRST_CNP);
	int first = !q->limited;

	if (first || kv(q, ROCE_CC_RP_CLAMP_TGT_RATE) || q->inc_byte ||
			(kv(q, ROCE_CC_RP_CLAMP_TGT_RATE_ATI) && q->inc_timer))
		q->rt = RTE_MIN(q->rc, rp_max_mbps(cc, q));
	if (first && first_rate != 0) {
		q->rc = q->rt = RTE_MIN((double)first_rate, rp_max_mbps(cc, q));
	} else {
		double fac = 1.0 - q->alpha * ldexp(1.0, 10 - (int)kv(q, ROCE_CC_RP_GD));
		double floor_fac = kv(q, ROCE_CC_RP_MIN_DEC_FAC) / 100.0;

		q->rc *= RTE_MAX(fac, floor_fac);
	}
	if (q->rc < minr) {
		q->rc = minr;
		cc->cnt[ROCE_CCC_RATE_MIN_CLAMP]++;
	}
	q->alpha = q->alpha * g + (1.0 - g);
	q->limited = 1;
	q->held = q->inc_timer = q->inc_byte = 0;
	q->cut_once = 1;
	q->t = q->bc = 0;
	q->bytes = 0;
	q->timer_at = at + kv(q, ROCE_CC_RP_TIME_RESET) * US;
	q->alpha_at = at + kv(q, ROCE_CC_RP_DCE_TCP_RTT) * US;
	q->last_cut = at;
	q->stage = ROCE_CC_STAGE_FAST_RECOVERY;
	q->reductions++;
	cc->cnt[ROCE_CCC_RATE_REDUCE]++;
	trace(cc, q, ROCE_CC_EV_CNP, at);
	pace_rate(cc, q, at);
}

/* Up to this many expiries at once are multiplied out: pow() took a fifth of a paced
 * sender's worker with one-packet turns (a call every microsecond or two). */
#define ALPHA_DECAY_MUL_MAX 16

/*
 * Decay alpha for every alpha timer expiry up to @lim, in one step: alpha * (g/1024)^n.
 */
static void
alpha_decay(struct cc_qp *q, uint64_t lim)
{
	uint64_t k = kv(q, ROCE_CC_RP_DCE_TCP_RTT) * US;
	uint64_t n = (lim - q->alpha_at) / k + 1, i;
	double g = kv(q, ROCE_CC_RP_DCE_TCP_G) / 1024.0, f = 1.0;

	if (n <= ALPHA_DECAY_MUL_MAX)
		for (i = 0; i < n; i++)
			f *= g;
	else
		f = pow(g, (double)n);
	q->alpha *= f;
	q->alpha_at += n * k;
}

void
rp_advance(struct roce_cc *cc, struct cc_qp *q, uint64_t now)
{
	for (;;) {
		uint64_t next = UINT64_MAX, held_at = q->held ? q->held_at : UINT64_MAX;

		if (q->limited)
			next = RTE_MIN(q->alpha_at, q->timer_at);
		next = RTE_MIN(next, held_at);
		if (next > now)
			return;
		/* At one instant: alpha timer, then rate timer, then a held reduction. */
		if (q->limited && q->alpha_at == next) {
			alpha_decay(q, RTE_MIN(RTE_MIN(q->timer_at, held_at), now));
		} else if (q->limited && q->timer_at == next) {
			q->t++;
			q->inc_timer = 1;
			q->timer_at += kv(q, ROCE_CC_RP_TIME_RESET) * US;
			cc->cnt[ROCE_CCC_INC_TIMER]++;
			increase(cc, q, ROCE_CC_EV_TIMER, next);
		} else {
			reduce(cc, q, next);
		}
	}
}

void
rp_cnp(struct roce_cc *cc, struct cc_qp *q, uint64_t now)
{
	uint64_t period = kv(q, ROCE_CC_RP_RATE_REDUCE_MONITOR_PERIOD) * US;

	rp_advance(cc, q, now);
	q->cnps++;
	if (!kv(q, ROCE_CC_RP_ENABLE)) {
		cc->cnt[ROCE_CCC_CNP_IGNORED]++;
		return;
	}
	if (q->cut_once && period != 0 && now < q->last_cut + period) {
		if (!q->held) {
			q->held = 1;
			q->held_at = q->last_cut + period;
		}
		cc->cnt[ROCE_CCC_CNP_HELD]++;
		return;
	}
	reduce(cc, q, now);
}

void
rp_bytes(struct roce_cc *cc, struct cc_qp *q, uint64_t bytes, uint64_t now)
{
	uint64_t b = kv(q, ROCE_CC_RP_BYTE_RESET);

	if (!q->limited || b == 0)
		return;
	q->bytes += bytes;
	while (q->limited && q->bytes >= b) {
		q->bytes -= b;
		q->bc++;
		q->inc_byte = 1;
		cc->cnt[ROCE_CCC_INC_BYTE]++;
		increase(cc, q, ROCE_CC_EV_BYTES, now);
	}
}
