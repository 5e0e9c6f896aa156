/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pacer: each paced QP has a token bucket of `burst` of its packets that fills at its
 * rate (the lower of its DCQCN rate and its cap). After each turn the engine asks when the
 * QP may send again: at once while the bucket still holds the QP's largest turn, else when
 * it will. So over any interval T a QP sends at most rate * T + one bucket, its turns are of
 * half a bucket (roce_cc_pacer()), and a wake-up up to half a bucket late loses no rate: the
 * tokens were still filling. The arithmetic is in bytes and ns as doubles: no rounding adds
 * up over a run; only the time handed to the engine is rounded, up.
 */

#include <errno.h>
#include <math.h>
#include <string.h>

#include <rte_common.h>

#include "cc_private.h"

/* Bytes the bucket holds: the burst in the QP's packets, at least its largest turn. */
static inline double
pace_cap(const struct roce_cc *cc, const struct cc_qp *q)
{
	return RTE_MAX((double)cc->conf.burst * q->pkt_max, (double)q->turn_max);
}

/* Tokens up to @at at the current rate. @return 1 when the bucket overflowed. */
static inline int
pace_fill(const struct roce_cc *cc, struct cc_qp *q, uint64_t at)
{
	double cap = pace_cap(cc, q), t;

	if (at <= q->tok_at)
		return 0;
	t = q->tokens + (double)(at - q->tok_at) / q->ns_per_byte;
	q->tokens = RTE_MIN(cap, t);
	q->tok_at = at;
	return t > cap;
}

void
pace_rate(struct roce_cc *cc, struct cc_qp *q, uint64_t at)
{
	double r = q->limited ? q->rc : 0;

	if (q->limit_mbps != 0 && (r == 0 || q->limit_mbps < r))
		r = q->limit_mbps;
	/* What the bucket gained at the old rate, then the new one. */
	if (q->pacing && q->ns_per_byte > 0)
		pace_fill(cc, q, at);
	/* 8 bits a byte at r Mb/s: 8000 / r ns. */
	q->ns_per_byte = r > 0 ? 8000.0 / r : 0;
	/* Not paced: it starts with a full bucket when it is again. */
	if (r == 0)
		q->pacing = 0;
}

uint64_t
pace_turn(struct roce_cc *cc, struct cc_qp *q, uint64_t wire, uint32_t pkts, uint64_t now)
{
	double need;

	q->pkt_max = RTE_MAX(q->pkt_max, (uint32_t)((wire + pkts - 1) / RTE_MAX(pkts, 1u)));
	q->turn_max = RTE_MAX(q->turn_max, (uint32_t)RTE_MIN(wire, UINT32_MAX));
	if (!q->pacing) {
		q->pacing = 1;
		q->tokens = pace_cap(cc, q);
		q->tok_at = now;
	} else if (pace_fill(cc, q, now)) {
		cc->cnt[ROCE_CCC_PACE_FULL]++;
	}
	q->tokens -= (double)wire;
	need = RTE_MIN((double)q->turn_max, pace_cap(cc, q));
	if (q->tokens >= need)
		return 0;
	cc->cnt[ROCE_CCC_PACED]++;
	return now + (uint64_t)ceil((need - q->tokens) * q->ns_per_byte);
}

uint64_t
roce_cc_sent(struct roce_cc *cc, uint32_t qpn, uint32_t pkts, uint64_t bytes, uint64_t now)
{
	struct cc_qp *q = cc_qp_lookup(cc, qpn);
	uint64_t wire;

	if (q == NULL)
		return 0;
	/* An unlimited QP without a cap: one branch, nothing else. */
	if (!q->limited && !q->held && q->ns_per_byte == 0)
		return 0;
	wire = bytes + (uint64_t)pkts * cc->conf.pkt_overhead;
	now = cc_time(cc, now);
	rp_advance(cc, q, now);
	rp_bytes(cc, q, wire, now);
	if (q->ns_per_byte == 0)
		return 0;
	return pace_turn(cc, q, wire, pkts, now);
}

int
roce_cc_qp_set_limit(struct roce_cc *cc, uint32_t qpn, uint64_t bps)
{
	struct cc_qp *q = cc_qp_lookup(cc, qpn);

	if (q == NULL)
		return -ENOENT;
	q->limit_mbps = (double)bps / 1e6;
	pace_rate(cc, q, cc->clock);
	return 0;
}

int
roce_cc_set_burst(struct roce_cc *cc, uint32_t burst)
{
	if (burst == 0 || burst > ROCE_CC_BURST_MAX)
		return -EINVAL;
	cc->conf.burst = burst;
	return 0;
}

uint32_t
roce_cc_get_burst(const struct roce_cc *cc)
{
	return cc->conf.burst;
}

static uint64_t
pacer_next(void *ctx, const struct roce_qp *qp, uint32_t pkts, uint64_t bytes, uint64_t now)
{
	return roce_cc_sent(ctx, roce_qp_num(qp), pkts, bytes, now);
}

void
roce_cc_pacer(struct roce_cc *cc, struct roce_pacer *pacer)
{
	memset(pacer, 0, sizeof(*pacer));
	pacer->next = pacer_next;
	pacer->ctx = cc;
	/* Turns of half a bucket: the other half absorbs late wake-ups. */
	pacer->burst = (cc->conf.burst + 1) / 2;
	/* QPs congestion control does not track are not asked about (roce_qp_set_paced()). */
	pacer->marked_only = 1;
}
