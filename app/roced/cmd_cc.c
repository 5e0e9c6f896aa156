/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control commands (doc/control-protocol.md: cc.show, cc.set): the daemon-wide
 * profile, ECN codepoint and knobs, and a QP's own knobs and state. The knob table (names,
 * units, ranges) is lib/cc's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "roced_cmd.h"

/* ECN codepoints by value, as cc.set takes them. */
static const char *const ecn_names[] = {
	[ROCE_ECN_NOT_ECT] = "not_ect",
	[ROCE_ECN_ECT1] = "ect1",
	[ROCE_ECN_ECT0] = "ect0",
};

#define KNOB_ARG(n, N, u, lo, hi, d) " " #n
const char roced_cc_set_args[] = "qpn profile ecn reset" ROCE_CC_KNOBS(KNOB_ARG);
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

	return json_pack("{s:f, s:f, s:f, s:f, s:s, s:o, s:o, s:o, s:b}",
			"rate_mbps", s->rate_mbps, "target_mbps", s->target_mbps,
			"alpha", s->alpha, "pace_mbps", s->pace_mbps,
			"stage", roce_cc_stage_name(s->stage), "cnps", roce_ctl_u64(s->cnps),
			"reductions", roce_ctl_u64(s->reductions),
			"np_cnps", roce_ctl_u64(s->np_cnps), "own_knobs", q->own);
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

int
roced_cmd_cc_set(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_cc_conf c;
	struct roce_dp_qp_info qi;
	struct roce_dp_cc_qp q;
	const char *profile = NULL;
	unsigned int ecn = 0, nb;
	bool reset = false;
	int ret, hq, he;

	roce_dp_cc_get(st->dp, &c);
	hq = json_object_get(req, "qpn") != NULL;
	if ((ret = roce_ctl_arg_str(req, reply, "profile", &profile, false,
				sizeof(c.profile) - 1)) < 0 ||
			(he = roce_ctl_arg_enum(req, reply, "ecn", ecn_names, RTE_DIM(ecn_names),
				&ecn, false)) < 0 ||
			(ret = roce_ctl_arg_bool(req, reply, "reset", &reset, false)) < 0)
		return -EINVAL;
	if (hq) {
		if (profile != NULL || he)
			return roce_ctl_error(reply, -EINVAL,
					"profile and ecn are daemon-wide: not with qpn");
		if ((ret = roced_arg_qp(st, req, reply, &qi)) < 0)
			return ret;
		if (roce_dp_cc_qp_get(st->dp, qi.qpn, &q) != 0)
			return roce_ctl_error(reply, -ENOENT,
					"QP 0x%06x has no congestion control (it went to RTR with "
					"congestion control off)", qi.qpn);
		if (reset) {
			ret = roce_dp_cc_qp_set(st->dp, qi.qpn, NULL);
		} else {
			if ((ret = knob_args(req, reply, &q.params, &nb)) < 0)
				return ret;
			ret = roce_dp_cc_qp_set(st->dp, qi.qpn, &q.params);
		}
		if (ret != 0)
			return roce_ctl_error(reply, ret, "QP 0x%06x: %s", qi.qpn, strerror(-ret));
		if (roce_dp_cc_qp_get(st->dp, qi.qpn, &q) == 0) {
			json_object_set_new(reply, "qpn", json_integer(qi.qpn));
			json_object_set_new(reply, "own_knobs", json_boolean(q.own));
			json_object_set_new(reply, "knobs", knobs_json(&q.params));
		}
		return 0;
	}
	if (reset)
		return roce_ctl_error(reply, -EINVAL, "reset: only with qpn");
	if (profile != NULL) {
		ret = roce_cc_profile(profile, c.line_mbps, &c.params);
		if (ret != 0) {
			char names[64] = "";
			unsigned int i;

			for (i = 0; roce_cc_profile_name(i) != NULL; i++)
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
						i != 0 ? ", " : "", roce_cc_profile_name(i));
			return roce_ctl_error(reply, -EINVAL, "profile: one of %s", names);
		}
		snprintf(c.profile, sizeof(c.profile), "%s", profile);
	}
	if (he)
		c.ecn = (uint8_t)ecn;
	if ((ret = knob_args(req, reply, &c.params, &nb)) < 0)
		return ret;
	ret = roce_dp_cc_set(st->dp, &c);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "workers: %s", strerror(-ret));
	json_object_set_new(reply, "profile", json_string(c.profile));
	json_object_set_new(reply, "on", json_boolean(c.params.v[ROCE_CC_RP_ENABLE] ||
			c.params.v[ROCE_CC_NP_ENABLE]));
	json_object_set_new(reply, "ecn", json_string(ecn_names[c.ecn]));
	json_object_set_new(reply, "knobs", knobs_json(&c.params));
	return 0;
}
