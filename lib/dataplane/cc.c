/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control in the workers (roce_dp_cc.h): each worker's lib/cc instance is the
 * pacer of its engine and hears CNPs and CE marks through the engine's callbacks; QPs are
 * tracked from RTR to their destruction. Everything here but roce_dp_cc_get/set and the
 * control-side checks runs on the worker owning the instance.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>

#include "dp_private.h"

/* Line rate when no port reports one (memif, af_packet without speed). */
#define CC_LINE_MBPS_DEFAULT 10000

static int
params_on(const struct roce_cc_params *p)
{
	return p->v[ROCE_CC_RP_ENABLE] != 0 || p->v[ROCE_CC_NP_ENABLE] != 0;
}

/* Reaction point: a CNP for one of our QPs. */
static void
cc_cnp_rx(void *ctx, struct roce_qp *qp, uint64_t now)
{
	struct roce_worker *w = ctx;

	roce_cc_cnp_rx(w->cc, roce_qp_num(qp), now);
}

/* Notification point: a CE-marked packet for one of our QPs; maybe a CNP to its peer. */
static void
cc_ce_rx(void *ctx, struct roce_qp *qp, const struct rte_mbuf *m, uint64_t now)
{
	struct roce_worker *w = ctx;
	uint32_t qpn = roce_qp_num(qp);
	struct roce_path path;
	struct rte_mbuf *cnp;
	uint64_t at;

	/* When the packet reached the host, if the link model says: the CNP interval runs on
	 * the packets' times as a NIC's does, not on the burst's one. */
	if (!roce_impair_arrival(m, &at) || at > now)
		at = now;
	if (roce_cc_np_ce(w->cc, qpn, at) != 1)
		return;
	cnp = rte_pktmbuf_alloc(w->mp);
	if (unlikely(cnp == NULL)) {
		w->cnt[ROCE_DP_CNP_DROP]++;
		return;
	}
	if (unlikely(roce_cc_cnp_path(roce_cc_qp_params(w->cc, qpn), roce_qp_path(qp),
				&path) != 0 ||
			roce_cc_cnp_build(cnp, &path, roce_qp_dest_qpn(qp)) != 0)) {
		rte_pktmbuf_free(cnp);
		w->cnt[ROCE_DP_CNP_DROP]++;
		return;
	}
	roce_qp_send_cnp(qp, cnp);
}

int
dp_cc_qp_modify(struct roce_worker *w, struct roce_qp *qp, const struct roce_qp_attr *attr,
		int mask)
{
	uint32_t qpn = roce_qp_num(qp);
	struct roce_qp_attr a;
	int ret;

	if (w->cc == NULL || !(mask & ROCE_QP_STATE) || attr->qp_state != ROCE_QPS_RTR)
		return roce_qp_modify(qp, attr, mask);
	a = *attr;
	if (w->cc_on && (mask & ROCE_QP_AV))
		a.ah.ecn = w->cc_ecn;
	ret = roce_qp_modify(qp, &a, mask);
	if (ret != 0)
		return ret;
	/* Into RTR again: it starts afresh, or without congestion control if it is off now. */
	roce_cc_qp_remove(w->cc, qpn);
	roce_qp_set_paced(qp, 0);
	if (!w->cc_on)
		return 0;
	ret = roce_cc_qp_add(w->cc, qpn);
	if (ret != 0) {
		ROCE_LOG(WARNING, "QP 0x%06x runs without congestion control: %s\n", qpn,
				strerror(-ret));
		return 0;
	}
	roce_qp_set_paced(qp, 1);
	return 0;
}

static void
cc_qp_gone(struct roce_worker *w, uint32_t qpn)
{
	if (w->cc != NULL)
		roce_cc_qp_remove(w->cc, qpn);
}

static void
cc_fini(struct roce_worker *w)
{
	if (w->eng != NULL && w->cc != NULL) {
		roce_engine_set_pacer(w->eng, NULL);
		roce_engine_set_cc(w->eng, NULL);
	}
	roce_cc_free(w->cc);
	w->cc = NULL;
}

/*
 * QPs the pacer holds back are work to come: the worker must not sleep (--idle-sleep) past
 * their times, which a sleep's wake-up (tens of us late) would do, costing them rate.
 */
static unsigned int
cc_poll(struct roce_worker *w, uint64_t now)
{
	RTE_SET_USED(now);
	return w->cc != NULL && roce_engine_pace_held(w->eng) != 0;
}

const struct dp_service dp_cc_service = {
	.name = "cc",
	.fini = cc_fini,
	.poll = cc_poll,
	.qp_gone = cc_qp_gone,
};

void
dp_cc_counters(const struct roce_worker *w, uint64_t *out)
{
	if (w->cc != NULL)
		roce_cc_counters(w->cc, out);
	else
		memset(out, 0, ROCE_CCC_NUM * sizeof(*out));
}

/* ---- control ---- */

static uint64_t
line_mbps(const struct roce_dp *dp)
{
	uint64_t best = 0;
	unsigned int p;

	for (p = 0; p < dp->nb_ports; p++) {
		struct rte_eth_link link;

		if (rte_eth_link_get_nowait(dp->ports[p].port_id, &link) == 0 &&
				link.link_speed != RTE_ETH_SPEED_NUM_NONE &&
				link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
			best = RTE_MAX(best, (uint64_t)link.link_speed);
	}
	return best != 0 ? best : CC_LINE_MBPS_DEFAULT;
}

static void
conf_init(struct roce_dp *dp)
{
	struct roce_dp_cc_conf *c = &dp->cc;

	if (c->line_mbps != 0)
		return;
	c->line_mbps = line_mbps(dp);
	roce_cc_profile("off", c->line_mbps, &c->params);
	snprintf(c->profile, sizeof(c->profile), "off");
	c->ecn = ROCE_ECN_ECT0;
	c->trace_len = ROCE_DP_CC_TRACE_LEN_DEFAULT;
	c->pace_burst = ROCE_CC_BURST_DEFAULT;
}

void
dp_cc_conf_init(struct roce_dp *dp)
{
	conf_init(dp);
}

int
roce_dp_cc_get(struct roce_dp *dp, struct roce_dp_cc_conf *conf)
{
	conf_init(dp);
	*conf = dp->cc;
	return 0;
}

/* The worker's instance, with the daemon's settings: the engine's pacer and callbacks. */
static int
cc_start(struct roce_worker *w, const struct roce_dp_cc_conf *c)
{
	struct roce_engine_cc hooks = { cc_cnp_rx, cc_ce_rx, w };
	struct roce_cc_conf cf = {
		.line_mbps = c->line_mbps,
		.params = &c->params,
		.max_qps = w->dp->conf.max_qps,
		.trace_len = c->trace_len,
		.burst = c->pace_burst,
		.socket_id = w->socket,
	};
	struct roce_pacer pacer;

	w->cc = roce_cc_create(&cf);
	if (w->cc == NULL)
		return -rte_errno;
	/* The conf's 0 is the library's default; ours means no trace. */
	if (c->trace_len == 0)
		roce_cc_set_trace_len(w->cc, 0);
	roce_cc_pacer(w->cc, &pacer);
	roce_engine_set_pacer(w->eng, &pacer);
	roce_engine_set_cc(w->eng, &hooks);
	return 0;
}

/* ---- pacing: a traffic job's rate ---- */

/* Knobs that leave a QP's reaction and notification points off: paced, nothing else. */
static int
pace_only(const struct roce_cc_params *p)
{
	return !p->v[ROCE_CC_RP_ENABLE] && !p->v[ROCE_CC_NP_ENABLE];
}

int
dp_cc_pace(struct roce_worker *w, struct roce_qp *qp, uint64_t bps)
{
	uint32_t qpn = roce_qp_num(qp);
	struct roce_cc_params off;
	int ret;

	/* The daemon's settings were read on the control side first (dp_cc_conf_init()). */
	if (w->cc == NULL && (ret = cc_start(w, &w->dp->cc)) != 0)
		return ret;
	if (roce_cc_qp_params(w->cc, qpn) == NULL) {
		/* Not tracked: paced only, its ECN codepoint as it is. */
		off = *roce_cc_get_params(w->cc);
		off.v[ROCE_CC_RP_ENABLE] = off.v[ROCE_CC_NP_ENABLE] = 0;
		if ((ret = roce_cc_qp_add(w->cc, qpn)) != 0)
			return ret;
		if ((ret = roce_cc_qp_set_params(w->cc, qpn, &off)) != 0) {
			roce_cc_qp_remove(w->cc, qpn);
			return ret;
		}
		roce_qp_set_paced(qp, 1);
	}
	return roce_cc_qp_set_limit(w->cc, qpn, bps);
}

void
dp_cc_unpace(struct roce_worker *w, struct roce_qp *qp)
{
	uint32_t qpn = roce_qp_num(qp);
	const struct roce_cc_params *p;

	if (w->cc == NULL || (p = roce_cc_qp_params(w->cc, qpn)) == NULL)
		return;
	roce_cc_qp_set_limit(w->cc, qpn, 0);
	/* Tracked only to be paced: back to untracked. */
	if (p != roce_cc_get_params(w->cc) && pace_only(p)) {
		roce_cc_qp_remove(w->cc, qpn);
		roce_qp_set_paced(qp, 0);
	}
}

static int
set_on_worker(struct roce_worker *w, void *arg)
{
	const struct roce_dp_cc_conf *c = arg;
	struct roce_pacer pacer;
	int ret;

	if (w->cc == NULL) {
		w->cc_on = 0;
		if (!params_on(&c->params))
			return 0;
		if ((ret = cc_start(w, c)) != 0)
			return ret;
	}
	if (roce_cc_set_params(w->cc, &c->params) != 0)
		return -EINVAL;
	if (roce_cc_get_trace_len(w->cc) != c->trace_len &&
			(ret = roce_cc_set_trace_len(w->cc, c->trace_len)) != 0)
		return ret;
	if (roce_cc_get_burst(w->cc) != c->pace_burst) {
		if ((ret = roce_cc_set_burst(w->cc, c->pace_burst)) != 0)
			return ret;
		/* The same pacer with other turns: the QPs it holds stay held. */
		roce_cc_pacer(w->cc, &pacer);
		roce_engine_set_pacer(w->eng, &pacer);
	}
	w->cc_on = (uint8_t)params_on(&c->params);
	w->cc_ecn = c->ecn;
	return 0;
}

int
roce_dp_cc_set(struct roce_dp *dp, const struct roce_dp_cc_conf *conf)
{
	struct roce_dp_cc_conf c = *conf;
	unsigned int i;
	int ret;

	conf_init(dp);
	c.line_mbps = dp->cc.line_mbps;
	if (roce_cc_params_check(&c.params, NULL) != 0 || c.ecn > ROCE_ECN_ECT0 ||
			(c.trace_len & (c.trace_len - 1)) != 0 || c.trace_len > ROCE_CC_TRACE_LEN_MAX ||
			c.pace_burst == 0 || c.pace_burst > ROCE_CC_BURST_MAX)
		return -EINVAL;
	c.profile[sizeof(c.profile) - 1] = '\0';
	for (i = 0; i < dp->conf.nb_workers; i++) {
		ret = roce_dp_call(dp, i, set_on_worker, &c, 1000);
		if (ret != 0)
			return ret;
	}
	dp->cc = c;
	return 0;
}

struct qp_rpc {
	uint32_t qpn;
	const struct roce_cc_params *set;   /* qp_set: the knobs, or NULL */
	int ecn;                            /* qp_set: its codepoint, or -1 */
	const struct roce_dp_cc_conf *conf; /* qp_set: the daemon's settings */
	struct roce_dp_cc_qp *out;          /* qp_get, trace: the state (may be NULL) */
	uint64_t *cursor;                   /* trace */
	struct roce_cc_trace_entry *tr;
	unsigned int max;
};

static int
qp_state(struct roce_worker *w, uint32_t qpn, uint64_t now, struct roce_dp_cc_qp *out)
{
	const struct roce_cc_params *p;
	int ret;

	ret = roce_cc_qp_get(w->cc, qpn, now, &out->st);
	if (ret != 0)
		return ret;
	p = roce_cc_qp_params(w->cc, qpn);
	out->params = *p;
	out->own = p != roce_cc_get_params(w->cc);
	out->now_ns = now;
	out->ecn = roce_qp_path(roce_engine_qp(w->eng, qpn))->ecn;
	return 0;
}

static int
qp_get_on_worker(struct roce_worker *w, void *arg)
{
	struct qp_rpc *c = arg;

	return w->cc == NULL ? -ENOENT : qp_state(w, c->qpn, roce_dp_now(), c->out);
}

static int
trace_on_worker(struct roce_worker *w, void *arg)
{
	struct qp_rpc *c = arg;
	uint64_t now = roce_dp_now();
	int n;

	if (w->cc == NULL)
		return -ENOENT;
	n = roce_cc_trace_read(w->cc, c->qpn, now, c->cursor, c->tr, c->max);
	if (n >= 0 && c->out != NULL)
		qp_state(w, c->qpn, now, c->out);
	return n;
}

/* A QP no longer tracked: unpaced, Not-ECT, as if connected with congestion control off. */
static void
qp_untrack(struct roce_worker *w, struct roce_qp *qp)
{
	roce_cc_qp_remove(w->cc, roce_qp_num(qp));
	roce_qp_set_paced(qp, 0);
	roce_qp_set_ecn(qp, ROCE_ECN_NOT_ECT);
}

static int
qp_set_on_worker(struct roce_worker *w, void *arg)
{
	struct qp_rpc *c = arg;
	struct roce_qp *qp = roce_engine_qp(w->eng, c->qpn);
	int ecn = c->ecn, tracked, ret;
	enum roce_qp_state qs;

	if (qp == NULL)
		return -ENOENT;
	tracked = w->cc != NULL && roce_cc_qp_params(w->cc, c->qpn) != NULL;
	if (c->set == NULL) {
		/* The daemon's knobs and codepoint again; with congestion control off
		 * daemon-wide, none at all. */
		if (!tracked)
			return -ENOENT;
		if (!w->cc_on) {
			qp_untrack(w, qp);
			return 0;
		}
		roce_cc_qp_set_params(w->cc, c->qpn, NULL);
		return roce_qp_set_ecn(qp, w->cc_ecn);
	}
	if (!tracked) {
		/* Connected while congestion control was off: tracked from now on. */
		qs = roce_qp_state(qp);
		if (qs < ROCE_QPS_RTR || qs == ROCE_QPS_ERR)
			return -EINVAL;
		if (w->cc == NULL && (ret = cc_start(w, c->conf)) != 0)
			return ret;
		if ((ret = roce_cc_qp_add(w->cc, c->qpn)) != 0)
			return ret;
		roce_qp_set_paced(qp, 1);
		if (ecn < 0)
			ecn = c->conf->ecn;
	}
	ret = roce_cc_qp_set_params(w->cc, c->qpn, c->set);
	if (ret == 0 && ecn >= 0)
		ret = roce_qp_set_ecn(qp, (uint8_t)ecn);
	if (ret != 0 && !tracked)
		qp_untrack(w, qp);
	return ret;
}

int
roce_dp_cc_qp_get(struct roce_dp *dp, uint32_t qpn, struct roce_dp_cc_qp *out)
{
	struct qp_rpc c = { .qpn = qpn, .out = out };
	int w = roce_dp_qpn_owner(dp, qpn);

	return w < 0 ? -ENOENT : roce_dp_call(dp, (unsigned int)w, qp_get_on_worker, &c, 1000);
}

int
roce_dp_cc_trace(struct roce_dp *dp, uint32_t qpn, uint64_t *cursor,
		struct roce_cc_trace_entry *out, unsigned int max, struct roce_dp_cc_qp *st)
{
	struct qp_rpc c = { .qpn = qpn, .out = st, .cursor = cursor, .tr = out, .max = max };
	int w = roce_dp_qpn_owner(dp, qpn);

	return w < 0 ? -ENOENT : roce_dp_call(dp, (unsigned int)w, trace_on_worker, &c, 1000);
}

int
roce_dp_cc_qp_set(struct roce_dp *dp, uint32_t qpn, const struct roce_cc_params *p, int ecn)
{
	struct qp_rpc c = { .qpn = qpn, .set = p, .ecn = ecn, .conf = &dp->cc };
	int w = roce_dp_qpn_owner(dp, qpn);

	conf_init(dp);
	if ((p != NULL && roce_cc_params_check(p, NULL) != 0) || ecn >= ROCE_ECN_CE)
		return -EINVAL;
	return w < 0 ? -ENOENT : roce_dp_call(dp, (unsigned int)w, qp_set_on_worker, &c, 1000);
}
