/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DP_STAGES_H
#define DP_STAGES_H

/*
 * The worker's stage stamps (roce_dp_stages.h): hooks the worker loop and the latency jobs
 * call. Without ROCE_STAGE_STAMPS every hook is an empty macro whose arguments are never
 * evaluated, so the default build carries no stamp, no branch and no memory for them.
 */

#include "dp_private.h"
#include "roce_dp_stages.h"

/* Receive bursts a response's build may follow, before marks are merged. */
#define DP_STAGE_MARKS 16

#ifdef ROCE_STAGE_STAMPS

#include <rte_cycles.h>
#include <rte_udp.h>

#include "roce_opcode.h"

/* Frames the engine queued up to (not including) position @upto were built at @tsc, after
 * the transport was done with the receive burst of @xport. */
struct dp_stage_mark {
	uint64_t upto;
	uint64_t tsc;
	uint64_t xport;
};

struct dp_stages {
	struct roce_dp_stages s;
	uint64_t loop;          /* this loop turn began */
	uint64_t rx_call;       /* the port rx burst was called */
	uint64_t rx;            /* ... and returned frames */
	uint64_t cls;           /* ... and was classified */
	uint64_t last_rx;       /* the latest burst that reached our engine: returned */
	uint64_t last_xport;    /* ... and the engine was done with it */
	uint64_t post;          /* a latency job's post, waiting for its first packet */
	uint64_t post_rx;       /* the rx burst that post answered, or 0 */
	uint64_t taken;         /* frames taken from the engine so far */
	uint64_t marked;        /* frames the engine had queued at the latest mark */
	uint32_t mark_head;
	uint32_t nb_marks;
	struct dp_stage_mark mark[DP_STAGE_MARKS];
	uint8_t rx_new;         /* a burst reached the engine since the latest post */
	uint8_t post_wait;      /* the post's first packet is not built yet */
	/* The batch taken from the engine, until it is handed over (dp_stage_tx_sent). */
	uint64_t lat_rx;        /* the latency packet's answered rx burst, or 0 */
	uint64_t take;          /* taken */
	uint8_t kind[ROCE_TXQ_BURST];  /* DP_STAGE_RESP, _REQ or _LAT */
	uint64_t built[ROCE_TXQ_BURST];
};

enum { DP_STAGE_RESP, DP_STAGE_REQ, DP_STAGE_LAT };

static inline uint64_t
dp_stage_now(void)
{
	return rte_rdtsc();
}

/* @n samples of the interval [@from, @to] shared out over them. */
static inline void
dp_stage_add(struct dp_stages *st, enum roce_dp_stage s, uint64_t from, uint64_t to,
		uint32_t n)
{
	if (unlikely(to < from)) {
		st->s.backwards++;
		return;
	}
	roce_hist_add_n(&st->s.h[s], (to - from) / n, n);
}

/* A loop turn begins. */
static inline void
dp_stage_loop(struct dp_stages *st)
{
	uint64_t t = dp_stage_now();

	if (st->loop != 0)
		dp_stage_add(st, ROCE_STAGE_LOOP, st->loop, t, 1);
	st->loop = t;
}

/* A port's rx burst is called, */
static inline void
dp_stage_rx_call(struct dp_stages *st)
{
	st->rx_call = dp_stage_now();
}

/* ... and returned @n frames. */
static inline void
dp_stage_rx(struct dp_stages *st, uint16_t n)
{
	st->rx = dp_stage_now();
	dp_stage_add(st, ROCE_STAGE_RX_PMD, st->rx_call, st->rx, n);
}

static inline void
dp_stage_classified(struct dp_stages *st, uint16_t n)
{
	uint64_t t = dp_stage_now();

	dp_stage_add(st, ROCE_STAGE_RX_CLASSIFY, st->rx, t, n);
	st->cls = t;
}

/* What the engine queued since the latest mark was built now. */
static inline void
dp_stage_mark_at(struct dp_stages *st, const struct roce_engine *eng, uint64_t t)
{
	uint64_t built = st->taken + roce_engine_tx_pending(eng);
	struct dp_stage_mark *m;

	if (built == st->marked)
		return;
	st->marked = built;
	if (st->nb_marks == DP_STAGE_MARKS) {
		/* Backpressure: the newest mark takes these too (their build time is its). */
		st->mark[(st->mark_head + st->nb_marks - 1) % DP_STAGE_MARKS].upto = built;
		return;
	}
	m = &st->mark[(st->mark_head + st->nb_marks++) % DP_STAGE_MARKS];
	*m = (struct dp_stage_mark){ built, t, st->last_xport };
}

static inline void
dp_stage_built(struct dp_stages *st, const struct roce_engine *eng)
{
	dp_stage_mark_at(st, eng, dp_stage_now());
}

/* The engine is done with the @n frames of this port burst it was given. */
static inline void
dp_stage_engine_rx(struct dp_stages *st, const struct roce_engine *eng, uint16_t n)
{
	uint64_t t = dp_stage_now();

	dp_stage_add(st, ROCE_STAGE_RX_TRANSPORT, st->cls, t, n);
	st->last_rx = st->rx;
	st->last_xport = t;
	st->rx_new = 1;
	dp_stage_mark_at(st, eng, t);
}

/* A latency job posted its next message, in answer to one received (@answer) or not (the
 * opener's first). */
static inline void
dp_stage_post(struct dp_stages *st, bool answer)
{
	uint64_t t = dp_stage_now();

	st->post_rx = 0;
	if (answer && st->rx_new) {
		dp_stage_add(st, ROCE_STAGE_REQ_JOB, st->last_xport, t, 1);
		st->post_rx = st->last_rx;
	}
	st->rx_new = 0;
	st->post = t;
	st->post_wait = 1;
}

static inline int
dp_stage_is_req(const struct rte_mbuf *m)
{
	const uint8_t *bth = rte_pktmbuf_mtod_offset(m, const uint8_t *,
			m->l2_len + m->l3_len + sizeof(struct rte_udp_hdr));

	return (roce_opcode_info[bth[0]].mask & ROCE_M_REQ) != 0;
}

/* @n frames taken from the engine: their build times and kinds, before they are sent. */
static inline void
dp_stage_tx_take(struct dp_stages *st, struct rte_mbuf *const *pkts, uint16_t n)
{
	uint64_t now = dp_stage_now();
	uint16_t i;

	st->take = now;
	st->lat_rx = 0;
	for (i = 0; i < n; i++, st->taken++) {
		const struct dp_stage_mark *m = NULL;
		uint64_t built = now;

		while (st->nb_marks != 0 && st->mark[st->mark_head].upto <= st->taken) {
			st->mark_head = (st->mark_head + 1) % DP_STAGE_MARKS;
			st->nb_marks--;
		}
		if (st->nb_marks != 0) {
			m = &st->mark[st->mark_head];
			built = m->tsc;
		}
		st->built[i] = built;
		if (!dp_stage_is_req(pkts[i])) {
			st->kind[i] = DP_STAGE_RESP;
			if (m != NULL && m->xport != 0)
				dp_stage_add(st, ROCE_STAGE_RESP_BUILD, m->xport, built, 1);
		} else if (st->post_wait && built >= st->post) {
			st->kind[i] = DP_STAGE_LAT;
			st->post_wait = 0;
			st->lat_rx = st->post_rx;
			dp_stage_add(st, ROCE_STAGE_REQ_BUILD, st->post, built, 1);
		} else {
			st->kind[i] = DP_STAGE_REQ;
		}
	}
	if (st->nb_marks == 0)
		st->marked = st->taken;
}

/* The @n frames of dp_stage_tx_take() were handed to the transmit objects. */
static inline void
dp_stage_tx_sent(struct dp_stages *st, uint16_t n)
{
	uint64_t t = dp_stage_now();
	uint16_t i;

	dp_stage_add(st, ROCE_STAGE_TX_PMD, st->take, t, n);
	for (i = 0; i < n; i++) {
		dp_stage_add(st, st->kind[i] == DP_STAGE_RESP ? ROCE_STAGE_RESP_WAIT :
				ROCE_STAGE_REQ_WAIT, st->built[i], st->take, 1);
		if (st->kind[i] == DP_STAGE_LAT && st->lat_rx != 0)
			dp_stage_add(st, ROCE_STAGE_LAT_TURN, st->lat_rx, t, 1);
	}
}

/* The worker's stamps: allocated when its loop starts, freed when it ends. */
int dp_stages_init(struct roce_worker *w);
void dp_stages_fini(struct roce_worker *w);

/* A hook on the worker's stamps: DP_STAGE(w, rx) calls dp_stage_rx(w->stages). */
#define DP_STAGE(w, hook, ...) do { \
	if ((w)->stages != NULL) \
		dp_stage_##hook((w)->stages, ##__VA_ARGS__); \
} while (0)
#define DP_STAGES_INIT(w) dp_stages_init(w)
#define DP_STAGES_FINI(w) dp_stages_fini(w)

#else /* !ROCE_STAGE_STAMPS */

#define DP_STAGE(w, hook, ...) do { } while (0)
#define DP_STAGES_INIT(w) do { } while (0)
#define DP_STAGES_FINI(w) do { } while (0)

#endif /* ROCE_STAGE_STAMPS */

#endif /* DP_STAGES_H */
