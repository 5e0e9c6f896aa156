/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control commands (doc/control-protocol.md: cc.show, cc.set, cc.trace): the
 * daemon-wide profile, ECN codepoint and knobs, a QP's own knobs and state, and its trace.
 * The knob table (names, units, ranges) is lib/cc's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roced_cmd.h"

/* ECN codepoints by value, as cc.set takes them (CE is the fabric's). */
static const char *const ecn_names[] = {
	[ROCE_ECN_NOT_ECT] = "not_ect",
	[ROCE_ECN_ECT1] = "ect1",
	[ROCE_ECN_ECT0] = "ect0",
};

static const char *
ecn_name(uint8_t ecn)
{
	return ecn < RTE_DIM(ecn_names) ? ecn_names[ecn] : "ce";
}

#define KNOB_ARG(n, N, u, lo, hi, d) " " #n
const char roced_cc_set_args[] = "qpn profile ecn trace_len pace_burst reset"
	ROCE_CC_KNOBS(KNOB_ARG);
#undef KNOB_ARG

static json_t *
knobs_json(const struct roce_cc_params *p)
{
	json_t *o = json_object();
	unsigned int k;

	for (k = 0; k < ROCE_CC_KNOB_NUM; k++)
		json_object_set_new(o, roce_cc_knob(k)->name, json_integer(p->v[k]));
	return o;
}

/* The knob table: {name: {unit, min, max, description}}. */
static json_t *
knob_table_json(void)
{
	json_t *o = json_object();
	unsigned int k;

	for (k = 0; k < ROCE_CC_KNOB_NUM; k++) {
		const struct roce_cc_knob_desc *d = roce_cc_knob(k);

		json_object_set_new(o, d->name, json_pack("{s:s, s:I, s:I, s:s}", "unit", d->unit,
				"min", (json_int_t)d->min, "max", (json_int_t)d->max,
				"description", d->description));
	}
	return o;
}

json_t *
roced_cc_qp_json(const struct roce_dp_cc_qp *q)
{
	const struct roce_cc_qp_state *s = &q->st;

	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:s, s:o, s:o, s:o, s:b, s:s, s:o, s:I}",
			"rate_mbps", s->rate_mbps, "target_mbps", s->target_mbps,
			"alpha", s->alpha, "pace_mbps", s->pace_mbps, "limit_mbps", s->limit_mbps,
			"stage", roce_cc_stage_name(s->stage), "cnps", roce_ctl_u64(s->cnps),
			"reductions", roce_ctl_u64(s->reductions),
			"np_cnps", roce_ctl_u64(s->np_cnps), "own_knobs", q->own, "ecn",
			ecn_name(q->ecn),
			"trace_next", roce_ctl_u64(s->trace_next), "trace_len",
			(json_int_t)s->trace_len);
}

int
roced_cmd_cc_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_cc_conf c;
	struct roce_dp_cc_qp q;
	json_t *profiles;
	bool describe = false;
	uint32_t qpn;
	unsigned int i;
	int ret;

	if (roce_ctl_arg_bool(req, reply, "describe", &describe, false) < 0)
		return -EINVAL;
	ret = roce_ctl_arg_u32(req, reply, "qpn", &qpn, false, 0, 0xFFFFFF);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		json_t *o;

		if (roce_dp_cc_qp_get(st->dp, qpn, &q) != 0)
			return roce_ctl_error(reply, -ENOENT,
					"QP 0x%06x has no congestion control (no such QP, or congestion "
					"control was off when it went to RTR)", qpn);
		o = roced_cc_qp_json(&q);
		json_object_set_new(reply, "qpn", json_integer(qpn));
		json_object_set_new(reply, "now_ns", roce_ctl_u64(q.now_ns));
		json_object_update(reply, o);
		json_decref(o);
		json_object_set_new(reply, "knobs", knobs_json(&q.params));
		return 0;
	}
	roce_dp_cc_get(st->dp, &c);
	profiles = json_array();
	for (i = 0; roce_cc_profile_name(i) != NULL; i++)
		json_array_append_new(profiles, json_string(roce_cc_profile_name(i)));
	json_object_set_new(reply, "profile", json_string(c.profile));
	json_object_set_new(reply, "on", json_boolean(c.params.v[ROCE_CC_RP_ENABLE] ||
			c.params.v[ROCE_CC_NP_ENABLE]));
	json_object_set_new(reply, "ecn", json_string(ecn_names[c.ecn]));
	json_object_set_new(reply, "line_mbps", roce_ctl_u64(c.line_mbps));
	json_object_set_new(reply, "trace_len", json_integer(c.trace_len));
	json_object_set_new(reply, "pace_burst", json_integer(c.pace_burst));
	json_object_set_new(reply, "profiles", profiles);
	json_object_set_new(reply, "knobs", knobs_json(&c.params));
	if (describe)
		json_object_set_new(reply, "knob_table", knob_table_json());
	return 0;
}

/* Every knob named in @p req into @p p, each checked against its range. */
static int
knob_args(json_t *req, json_t *reply, struct roce_cc_params *p, unsigned int *nb)
{
	unsigned int k;

	*nb = 0;
	for (k = 0; k < ROCE_CC_KNOB_NUM; k++) {
		const struct roce_cc_knob_desc *d = roce_cc_knob(k);
		uint64_t v;
		int ret;

		ret = roce_ctl_arg_u64(req, reply, d->name, &v, false, d->min, d->max);
		if (ret < 0)
			return ret;
		if (ret == 1) {
			p->v[k] = (uint32_t)v;
			(*nb)++;
		}
	}
	return 0;
}

/* A profile's knobs into @p p, or the error naming the profiles. */
static int
load_profile(json_t *reply, const char *profile, uint64_t line_mbps, struct roce_cc_params *p)
{
	char names[64] = "";
	unsigned int i;

	if (roce_cc_profile(profile, line_mbps, p) == 0)
		return 0;
	for (i = 0; roce_cc_profile_name(i) != NULL; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				i != 0 ? ", " : "", roce_cc_profile_name(i));
	return roce_ctl_error(reply, -EINVAL, "profile: one of %s", names);
}

/*
 * cc.set with qpn: the QP's own knobs (from its current ones, or the daemon's for a QP not
 * tracked yet, then the profile, then the knobs given) and maybe its own codepoint; reset:
 * the daemon's again. A QP connected with congestion control off is tracked from now on,
 * once its knobs turn the reaction or notification point on.
 */
static int
cc_set_qp(struct roced_state *st, json_t *req, json_t *reply, const struct roce_dp_cc_conf *c,
		const char *profile, int ecn, int ht, bool reset)
{
	struct roce_dp_qp_info qi;
	struct roce_cc_params p;
	struct roce_dp_cc_qp q;
	unsigned int nb;
	bool tracked;
	int ret;

	if (ht)
		return roce_ctl_error(reply, -EINVAL,
				"trace_len and pace_burst are daemon-wide: not with qpn");
	if ((ret = roced_arg_qp(st, req, reply, &qi)) < 0)
		return ret;
	tracked = roce_dp_cc_qp_get(st->dp, qi.qpn, &q) == 0;
	p = tracked ? q.params : c->params;
	/* The profile first, then the knobs over it. */
	if ((profile != NULL && !reset &&
				(ret = load_profile(reply, profile, c->line_mbps, &p)) < 0) ||
			(ret = knob_args(req, reply, &p, &nb)) < 0)
		return ret;
	if (reset) {
		if (profile != NULL || ecn >= 0 || nb != 0)
			return roce_ctl_error(reply, -EINVAL,
					"reset: no profile, ecn or knobs with it");
		if (!tracked)
			return roce_ctl_error(reply, -ENOENT, "QP 0x%06x has no congestion control",
					qi.qpn);
		ret = roce_dp_cc_qp_set(st->dp, qi.qpn, NULL, -1);
	} else {
		if (!tracked && !p.v[ROCE_CC_RP_ENABLE] && !p.v[ROCE_CC_NP_ENABLE])
			return roce_ctl_error(reply, -ENOENT,
					"QP 0x%06x has no congestion control (it went to RTR with "
					"congestion control off): profile=mlx5 or paper, or "
					"rp_enable=1 or np_enable=1, starts it", qi.qpn);
		if (!tracked && (qi.attr.qp_state < ROCE_QPS_RTR ||
					qi.attr.qp_state == ROCE_QPS_ERR))
			return roce_ctl_error(reply, -EINVAL, "QP 0x%06x is %s: congestion control "
					"starts once it is connected", qi.qpn,
					roce_qp_state_name(qi.attr.qp_state));
		ret = roce_dp_cc_qp_set(st->dp, qi.qpn, &p, ecn);
	}
	if (ret != 0)
		return roce_ctl_error(reply, ret, "QP 0x%06x: %s", qi.qpn, strerror(-ret));
	json_object_set_new(reply, "qpn", json_integer(qi.qpn));
	json_object_set_new(reply, "tracked", json_boolean(roce_dp_cc_qp_get(st->dp, qi.qpn,
				&q) == 0));
	if (json_is_true(json_object_get(reply, "tracked"))) {
		json_object_set_new(reply, "own_knobs", json_boolean(q.own));
		json_object_set_new(reply, "ecn", json_string(ecn_name(q.ecn)));
		json_object_set_new(reply, "knobs", knobs_json(&q.params));
	}
	return 0;
}

int
roced_cmd_cc_set(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_cc_conf c;
	const char *profile = NULL;
	unsigned int ecn = 0, nb;
	uint32_t trace_len, burst;
	bool reset = false;
	int ret, hq, he, ht, hb;

	roce_dp_cc_get(st->dp, &c);
	hq = json_object_get(req, "qpn") != NULL;
	if ((ret = roce_ctl_arg_str(req, reply, "profile", &profile, false,
				sizeof(c.profile) - 1)) < 0 ||
			(he = roce_ctl_arg_enum(req, reply, "ecn", ecn_names, RTE_DIM(ecn_names),
				&ecn, false)) < 0 ||
			(ht = roce_ctl_arg_u32(req, reply, "trace_len", &trace_len, false, 0,
				ROCE_CC_TRACE_LEN_MAX)) < 0 ||
			(hb = roce_ctl_arg_u32(req, reply, "pace_burst", &burst, false, 1,
				ROCE_CC_BURST_MAX)) < 0 ||
			(ret = roce_ctl_arg_bool(req, reply, "reset", &reset, false)) < 0)
		return -EINVAL;
	if (ht && (trace_len & (trace_len - 1)) != 0)
		return roce_ctl_error(reply, -EINVAL, "trace_len: 0 or a power of 2 up to %u",
				ROCE_CC_TRACE_LEN_MAX);
	if (hq)
		return cc_set_qp(st, req, reply, &c, profile, he ? (int)ecn : -1, ht || hb, reset);
	if (reset)
		return roce_ctl_error(reply, -EINVAL, "reset: only with qpn");
	if (profile != NULL && (ret = load_profile(reply, profile, c.line_mbps, &c.params)) < 0)
		return ret;
	if (profile != NULL)
		snprintf(c.profile, sizeof(c.profile), "%s", profile);
	if (he)
		c.ecn = (uint8_t)ecn;
	if (ht)
		c.trace_len = trace_len;
	if (hb)
		c.pace_burst = burst;
	if ((ret = knob_args(req, reply, &c.params, &nb)) < 0)
		return ret;
	ret = roce_dp_cc_set(st->dp, &c);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "workers: %s", strerror(-ret));
	json_object_set_new(reply, "profile", json_string(c.profile));
	json_object_set_new(reply, "on", json_boolean(c.params.v[ROCE_CC_RP_ENABLE] ||
			c.params.v[ROCE_CC_NP_ENABLE]));
	json_object_set_new(reply, "ecn", json_string(ecn_names[c.ecn]));
	json_object_set_new(reply, "trace_len", json_integer(c.trace_len));
	json_object_set_new(reply, "pace_burst", json_integer(c.pace_burst));
	json_object_set_new(reply, "knobs", knobs_json(&c.params));
	return 0;
}

/* cc.trace reads at most this many entries a request (about 150 bytes of JSON each). */
#define TRACE_LIMIT_MAX 4096
#define TRACE_LIMIT_DEFAULT 1024

static uint64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static json_t *
trace_entry_json(const struct roce_cc_trace_entry *e)
{
	return json_pack("{s:o, s:o, s:s, s:s, s:f, s:f, s:f, s:o}",
			"seq", roce_ctl_u64(e->seq), "time_ns", roce_ctl_u64(e->time_ns),
			"event", roce_cc_event_name(e->event), "stage",
			roce_cc_stage_name(e->stage), "rate_mbps", e->rate_mbps,
			"target_mbps", e->target_mbps, "alpha", e->alpha,
			"cnps", roce_ctl_u64(e->cnps));
}

/*
 * The bottleneck queues of the QP's port (drivers/impair: rx, the switch queue in front of
 * us; tx, the one after our transmit) at the time of a read: a reader following the trace
 * samples them alongside.
 */
static json_t *
trace_queues(struct roced_state *st, uint32_t qpn)
{
	enum roce_impair_dir dirs[] = { ROCE_IMPAIR_RX, ROCE_IMPAIR_TX };
	json_t *list = json_array();
	struct roce_dp_qp_info qi;
	unsigned int i;

	if (roce_dp_qp_query(st->dp, qpn, &qi) != 0 || qi.port >= ROCE_DP_MAX_PORTS ||
			st->impair[qi.port] == NULL)
		return list;
	for (i = 0; i < RTE_DIM(dirs); i++) {
		struct roce_impair_qstats q;
		struct roce_impair_spec s;
		int bneck = roce_impair_get(st->impair[qi.port], dirs[i], &s) == 0 &&
			s.bneck_bps > 0;

		if (!roce_impair_queue_stats(st->impair[qi.port], dirs[i], &q) ||
				(!bneck && q.depth == 0))
			continue;
		json_array_append_new(list, json_pack("{s:i, s:s, s:o, s:o, s:o, s:o, s:o, s:i, "
				"s:o, s:o}", "port", qi.port, "dir", roce_impair_dir_name(dirs[i]),
				"depth_bytes", roce_ctl_u64(q.depth), "p50_bytes",
				roce_ctl_u64(q.p50), "p99_bytes", roce_ctl_u64(q.p99), "max_bytes",
				roce_ctl_u64(q.max), "samples", roce_ctl_u64(q.samples), "paused",
				q.paused, "kmin_bytes", roce_ctl_u64(bneck ? s.red_kmin : 0),
				"kmax_bytes", roce_ctl_u64(bneck ? s.red_kmax : 0)));
	}
	return list;
}

/*
 * cc.trace: a QP's trace from a cursor on, and its state at the same instant. Times are
 * roce_dp_now()'s (the TSC in ns); unix_ns is that instant on the wall clock, so traces of
 * several daemons line up.
 */
int
roced_cmd_cc_trace(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_cc_trace_entry *tr;
	struct roce_dp_cc_conf c;
	struct roce_dp_cc_qp q;
	uint64_t cursor = 0, from, lost, wall;
	uint32_t qpn, limit = TRACE_LIMIT_DEFAULT;
	json_t *entries, *o;
	int ret, n, i;

	if ((ret = roce_ctl_arg_u32(req, reply, "qpn", &qpn, true, 0, 0xFFFFFF)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "cursor", &cursor, false, 0,
				UINT64_MAX)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "limit", &limit, false, 1,
				TRACE_LIMIT_MAX)) < 0)
		return -EINVAL;
	tr = malloc(limit * sizeof(*tr));
	if (tr == NULL)
		return roce_ctl_error(reply, -ENOMEM, "no memory");
	from = cursor;
	/* The wall clock's offset from the daemon's, taken next to the read. */
	wall = clock_ns(CLOCK_REALTIME) - roce_dp_now();
	n = roce_dp_cc_trace(st->dp, qpn, &cursor, tr, limit, &q);
	if (n < 0) {
		free(tr);
		return roce_ctl_error(reply, -ENOENT,
				"QP 0x%06x has no congestion control (no such QP, or congestion "
				"control was off when it went to RTR)", qpn);
	}
	roce_dp_cc_get(st->dp, &c);
	entries = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(entries, trace_entry_json(&tr[i]));
	/* Entries between the cursor asked for and the first one given are gone. */
	lost = n > 0 ? (tr[0].seq > from ? tr[0].seq - from : 0) :
		(cursor > from ? cursor - from : 0);
	free(tr);
	json_object_set_new(reply, "qpn", json_integer(qpn));
	json_object_set_new(reply, "now_ns", roce_ctl_u64(q.now_ns));
	json_object_set_new(reply, "unix_ns", roce_ctl_u64(q.now_ns + wall));
	json_object_set_new(reply, "line_mbps", roce_ctl_u64(c.line_mbps));
	json_object_set_new(reply, "trace_len", json_integer(q.st.trace_len));
	json_object_set_new(reply, "cursor", roce_ctl_u64(cursor));
	json_object_set_new(reply, "lost", roce_ctl_u64(lost));
	/* The QP was tracked afresh (RTR again): its sequence numbers started over. */
	json_object_set_new(reply, "restarted", json_boolean(from > q.st.trace_next));
	json_object_set_new(reply, "more", json_boolean(cursor < q.st.trace_next));
	o = roced_cc_qp_json(&q);
	json_object_set_new(reply, "state", o);
	json_object_set_new(reply, "queue", trace_queues(st, qpn));
	json_object_set_new(reply, "entries", entries);
	return 0;
}
