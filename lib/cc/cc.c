/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The instance: QPN table, the pacer, the notification point, traces and counters.
 */

#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>


#include "cc_private.h"

RTE_LOG_REGISTER(roce_cc_logtype, roce.cc, INFO);

static const struct roce_counter_desc cc_counter_desc[] = {
	ROCE_CC_COUNTERS(ROCE_COUNTER_DESC)
};

const struct roce_counter_family roce_cc_counter_family = {
	.name = "cc",
	.about = "per engine (one struct roce_cc a worker, once congestion control is on): DCQCN "
		"reaction point, notification point, pacer",
	.desc = cc_counter_desc,
	.nb = RTE_DIM(cc_counter_desc),
};

static const char *const stage_names[] = {
	[ROCE_CC_STAGE_FULL] = "full",
	[ROCE_CC_STAGE_FAST_RECOVERY] = "fast_recovery",
	[ROCE_CC_STAGE_ADDITIVE] = "additive",
	[ROCE_CC_STAGE_HYPER] = "hyper",
};

const char *
roce_cc_stage_name(enum roce_cc_stage s)
{
	return (unsigned int)s < RTE_DIM(stage_names) ? stage_names[s] : "?";
}

static const char *const event_names[] = {
	[ROCE_CC_EV_CNP] = "cnp",
	[ROCE_CC_EV_TIMER] = "timer",
	[ROCE_CC_EV_BYTES] = "bytes",
	[ROCE_CC_EV_FULL] = "full",
};

const char *
roce_cc_event_name(enum roce_cc_event e)
{
	return (unsigned int)e < RTE_DIM(event_names) ? event_names[e] : "?";
}

static inline uint32_t
slot_hash(const struct roce_cc *cc, uint32_t qpn)
{
	return (uint32_t)(qpn * 2654435761u) >> cc->slot_shift;
}

/* @return the slot holding @qpn, or the free slot where it would go. */
static inline uint32_t
slot_find(const struct roce_cc *cc, uint32_t qpn)
{
	uint32_t i = slot_hash(cc, qpn);

	while (cc->slots[i].idx != CC_EMPTY && cc->slots[i].qpn != qpn)
		i = (i + 1) & cc->slot_mask;
	return i;
}

struct cc_qp *
cc_qp_lookup(const struct roce_cc *cc, uint32_t qpn)
{
	const struct cc_slot *s = &cc->slots[slot_find(cc, qpn)];

	return s->idx == CC_EMPTY ? NULL : &cc->qps[s->idx];
}

#define qp_lookup cc_qp_lookup

/* Linear probing deletion: move later entries of the run back into the hole. */
static void
slot_delete(struct roce_cc *cc, uint32_t i)
{
	uint32_t j = i;

	cc->slots[i].idx = CC_EMPTY;
	for (;;) {
		uint32_t h;

		j = (j + 1) & cc->slot_mask;
		if (cc->slots[j].idx == CC_EMPTY)
			return;
		h = slot_hash(cc, cc->slots[j].qpn);
		/* Leave it when its home lies cyclically in (i, j]. */
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		cc->slots[i] = cc->slots[j];
		cc->slots[j].idx = CC_EMPTY;
		i = j;
	}
}

struct roce_cc *
roce_cc_create(const struct roce_cc_conf *conf)
{
	struct roce_cc *cc;
	uint32_t nslots, i;

	if (conf == NULL || conf->line_mbps == 0 ||
			(conf->trace_len & (conf->trace_len - 1)) != 0 ||
			conf->trace_len > ROCE_CC_TRACE_LEN_MAX || conf->burst > ROCE_CC_BURST_MAX ||
			(conf->params != NULL && roce_cc_params_check(conf->params, NULL) != 0)) {
		rte_errno = EINVAL;
		return NULL;
	}
	cc = rte_zmalloc_socket("roce_cc", sizeof(*cc), 0, conf->socket_id);
	if (cc == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	cc->conf = *conf;
	if (cc->conf.max_qps == 0)
		cc->conf.max_qps = 1024;
	if (cc->conf.trace_len == 0)
		cc->conf.trace_len = 256;
	if (cc->conf.pkt_overhead == 0)
		cc->conf.pkt_overhead = ROCE_CC_PKT_OVERHEAD_DEFAULT;
	if (cc->conf.burst == 0)
		cc->conf.burst = ROCE_CC_BURST_DEFAULT;
	if (conf->params != NULL)
		cc->params = *conf->params;
	else
		roce_cc_profile("mlx5", conf->line_mbps, &cc->params);
	cc->conf.params = NULL;
	/* Half full at most: short probe runs. */
	nslots = rte_align32pow2(cc->conf.max_qps * 2);
	cc->slot_mask = nslots - 1;
	cc->slot_shift = 32 - rte_log2_u32(nslots);
	cc->slots = rte_malloc_socket("roce_cc_slots", nslots * sizeof(*cc->slots), 0,
			conf->socket_id);
	cc->qps = rte_zmalloc_socket("roce_cc_qps", cc->conf.max_qps * sizeof(*cc->qps),
			RTE_CACHE_LINE_SIZE, conf->socket_id);
	cc->free_idx = rte_malloc_socket("roce_cc_free", cc->conf.max_qps * sizeof(uint32_t), 0,
			conf->socket_id);
	if (cc->slots == NULL || cc->qps == NULL || cc->free_idx == NULL) {
		roce_cc_free(cc);
		rte_errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < nslots; i++)
		cc->slots[i].idx = CC_EMPTY;
	for (i = 0; i < cc->conf.max_qps; i++)
		cc->free_idx[i] = cc->conf.max_qps - 1 - i;
	cc->nb_free = cc->conf.max_qps;
	return cc;
}

void
roce_cc_free(struct roce_cc *cc)
{
	uint32_t i;

	if (cc == NULL)
		return;
	/* Untracked entries have both NULL (roce_cc_qp_remove()). */
	for (i = 0; cc->qps != NULL && i < cc->conf.max_qps; i++) {
		rte_free(cc->qps[i].own);
		rte_free(cc->qps[i].trace);
	}
	rte_free(cc->free_idx);
	rte_free(cc->qps);
	rte_free(cc->slots);
	rte_free(cc);
}

int
roce_cc_set_params(struct roce_cc *cc, const struct roce_cc_params *p)
{
	if (roce_cc_params_check(p, NULL) != 0)
		return -EINVAL;
	cc->params = *p;
	return 0;
}

const struct roce_cc_params *
roce_cc_get_params(const struct roce_cc *cc)
{
	return &cc->params;
}

static size_t
trace_bytes(uint32_t len)
{
	return (size_t)len * sizeof(struct cc_trace_rec);
}

/* Give @q a ring of @len (0: none), keeping the newest entries that fit. */
static int
trace_resize(struct roce_cc *cc, struct cc_qp *q, uint32_t len)
{
	struct cc_trace_rec *r = NULL;
	uint64_t seq, from = q->trace_seq;

	if (len == q->trace_len && (len == 0 || q->trace != NULL))
		return 0;
	if (len != 0) {
		r = rte_malloc_socket("roce_cc_trace", trace_bytes(len), 0, cc->conf.socket_id);
		if (r == NULL)
			return -ENOMEM;
		from = RTE_MAX(q->trace_from, q->trace_seq - RTE_MIN(q->trace_seq,
				(uint64_t)RTE_MIN(len, q->trace_len)));
		for (seq = from; seq < q->trace_seq; seq++)
			r[seq & (len - 1)] = q->trace[seq & (q->trace_len - 1)];
	}
	rte_free(q->trace);
	q->trace = r;
	q->trace_len = len;
	q->trace_from = from;
	return 0;
}

int
roce_cc_set_trace_len(struct roce_cc *cc, uint32_t len)
{
	uint32_t i;
	int ret = 0;

	if ((len & (len - 1)) != 0 || len > ROCE_CC_TRACE_LEN_MAX)
		return -EINVAL;
	cc->conf.trace_len = len;
	for (i = 0; i <= cc->slot_mask; i++)
		if (cc->slots[i].idx != CC_EMPTY &&
				trace_resize(cc, &cc->qps[cc->slots[i].idx], len) != 0)
			ret = -ENOMEM;
	return ret;
}

uint32_t
roce_cc_get_trace_len(const struct roce_cc *cc)
{
	return cc->conf.trace_len;
}

int
roce_cc_qp_add(struct roce_cc *cc, uint32_t qpn)
{
	uint32_t s = slot_find(cc, qpn), idx;
	struct cc_qp *q;

	if (cc->slots[s].idx != CC_EMPTY)
		return -EEXIST;
	if (cc->nb_free == 0)
		return -ENOSPC;
	idx = cc->free_idx[--cc->nb_free];
	q = &cc->qps[idx];
	memset(q, 0, sizeof(*q));
	q->qpn = qpn;
	q->p = &cc->params;
	/* Its own ring, so that only tracked QPs cost memory; without one it runs untraced. */
	if (trace_resize(cc, q, cc->conf.trace_len) != 0)
		cc->cnt[ROCE_CCC_TRACE_NO_MEMORY]++;
	rp_init(cc, q);
	cc->slots[s].qpn = qpn;
	cc->slots[s].idx = idx;
	return 0;
}

int
roce_cc_qp_remove(struct roce_cc *cc, uint32_t qpn)
{
	uint32_t s = slot_find(cc, qpn), idx = cc->slots[s].idx;

	if (idx == CC_EMPTY)
		return -ENOENT;
	rte_free(cc->qps[idx].own);
	cc->qps[idx].own = NULL;
	rte_free(cc->qps[idx].trace);
	cc->qps[idx].trace = NULL;
	slot_delete(cc, s);
	cc->free_idx[cc->nb_free++] = idx;
	return 0;
}

int
roce_cc_qp_set_params(struct roce_cc *cc, uint32_t qpn, const struct roce_cc_params *p)
{
	struct cc_qp *q = qp_lookup(cc, qpn);

	if (q == NULL)
		return -ENOENT;
	if (p == NULL) {
		rte_free(q->own);
		q->own = NULL;
		q->p = &cc->params;
		return 0;
	}
	if (roce_cc_params_check(p, NULL) != 0)
		return -EINVAL;
	if (q->own == NULL) {
		q->own = rte_malloc("roce_cc_qp_params", sizeof(*q->own), 0);
		if (q->own == NULL)
			return -ENOMEM;
	}
	*q->own = *p;
	q->p = q->own;
	return 0;
}

const struct roce_cc_params *
roce_cc_qp_params(const struct roce_cc *cc, uint32_t qpn)
{
	const struct cc_qp *q = qp_lookup(cc, qpn);

	return q != NULL ? q->p : NULL;
}

int
roce_cc_cnp_rx(struct roce_cc *cc, uint32_t qpn, uint64_t now)
{
	struct cc_qp *q = qp_lookup(cc, qpn);

	if (q == NULL) {
		cc->cnt[ROCE_CCC_CNP_UNKNOWN_QP]++;
		return -ENOENT;
	}
	cc->cnt[ROCE_CCC_CNP_RX]++;
	rp_cnp(cc, q, cc_time(cc, now));
	return 0;
}

int
roce_cc_np_ce(struct roce_cc *cc, uint32_t qpn, uint64_t now)
{
	struct cc_qp *q = qp_lookup(cc, qpn);
	uint64_t gap;

	if (q == NULL) {
		cc->cnt[ROCE_CCC_CE_UNKNOWN_QP]++;
		return -ENOENT;
	}
	cc->cnt[ROCE_CCC_CE_RX]++;
	/* The packet's own time, which may be older than the instance's clock (a burst's
	 * packets arrived one by one before the burst was taken); never before the last CNP. */
	cc_time(cc, now);
	if (!q->p->v[ROCE_CC_NP_ENABLE]) {
		cc->cnt[ROCE_CCC_CE_NP_OFF]++;
		return 0;
	}
	gap = q->p->v[ROCE_CC_NP_MIN_TIME_BETWEEN_CNPS] * 1000ull;
	if (q->np_any && gap != 0 && (int64_t)(now - q->np_last) < (int64_t)gap) {
		cc->cnt[ROCE_CCC_CNP_SUPPRESSED]++;
		return 0;
	}
	q->np_any = 1;
	q->np_last = now;
	q->np_cnps++;
	cc->cnt[ROCE_CCC_CNP_TX]++;
	return 1;
}

int
roce_cc_qp_get(struct roce_cc *cc, uint32_t qpn, uint64_t now, struct roce_cc_qp_state *st)
{
	struct cc_qp *q = qp_lookup(cc, qpn);

	if (q == NULL)
		return -ENOENT;
	rp_advance(cc, q, cc_time(cc, now));
	st->rate_mbps = q->rc;
	st->target_mbps = q->rt;
	st->alpha = q->alpha;
	st->pace_mbps = q->ns_per_byte > 0 ? 8000.0 / q->ns_per_byte : 0;
	st->limit_mbps = q->limit_mbps;
	st->cnps = q->cnps;
	st->reductions = q->reductions;
	st->timer_stage = q->t;
	st->byte_stage = q->bc;
	st->byte_count = q->bytes;
	st->stage = q->stage;
	st->np_cnps = q->np_cnps;
	st->trace_next = q->trace_seq;
	st->trace_len = q->trace_len;
	return 0;
}

int
roce_cc_trace_read(struct roce_cc *cc, uint32_t qpn, uint64_t now, uint64_t *cursor,
		struct roce_cc_trace_entry *out, unsigned int max)
{
	struct cc_qp *q = qp_lookup(cc, qpn);
	uint64_t seq, oldest;
	unsigned int n = 0;

	if (q == NULL)
		return -ENOENT;
	rp_advance(cc, q, cc_time(cc, now));
	oldest = RTE_MAX(q->trace_from, q->trace_seq - RTE_MIN(q->trace_seq,
			(uint64_t)q->trace_len));
	/* A cursor past the end (the QP was tracked again since) waits for what comes next. */
	for (seq = RTE_MAX(RTE_MIN(*cursor, q->trace_seq), oldest); seq < q->trace_seq && n < max;
			seq++) {
		const struct cc_trace_rec *r = &q->trace[seq & (q->trace_len - 1)];
		struct roce_cc_trace_entry *e = &out[n++];

		e->seq = seq;
		e->time_ns = r->time_ns;
		e->rate_mbps = r->rc;
		e->target_mbps = r->rt;
		e->alpha = r->alpha;
		/* The count kept is its low 32 bits; the QP's own count has the rest. */
		e->cnps = q->cnps - (uint32_t)((uint32_t)q->cnps - r->cnps);
		e->event = r->event;
		e->stage = r->stage;
	}
	*cursor = seq;
	return (int)n;
}

void
roce_cc_counters(const struct roce_cc *cc, uint64_t *out)
{
	memcpy(out, cc->cnt, sizeof(cc->cnt));
}
