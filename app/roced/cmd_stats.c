/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Statistics commands: stats (traffic totals, the ports' ethdev statistics and the workers'
 * busy time, time-stamped so that a client turns two samples into rates as testpmd's "show
 * port stats" does), counters, counters.clear, and the stage stamps (stats.stages) of a build
 * with them.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "roce_dp_stages.h"

#include "roced_cmd.h"

/* Where the counter sink writes: {name: value}, and {name: description} when asked. */
struct counters_out {
	json_t *values;
	json_t *descs;
	const char *match;           /* a glob the names must match, or NULL */
};

static void
counters_sink(void *arg, const char *name, const char *description, uint64_t value)
{
	struct counters_out *o = arg;

	if (o->match != NULL && fnmatch(o->match, name, FNM_CASEFOLD) != 0)
		return;
	json_object_set_new(o->values, name, roce_ctl_u64(value));
	if (o->descs != NULL && description != NULL)
		json_object_set_new(o->descs, name, json_string(description));
}

/* Counters of workers [first, last), summed (the dataplane's emitter, as telemetry). */
static int
counters_json(struct roced_state *st, struct counters_out *o, unsigned int first,
		unsigned int last, unsigned int flags)
{
	return roce_dp_counters_emit(st->dp, first, last, flags, counters_sink, o);
}

/* One QP's transport counters. */
static int
qp_counters_json(struct roced_state *st, uint32_t qpn, struct counters_out *o, json_t *reply,
		unsigned int flags)
{
	static const struct roce_counter_group xport = { &roce_xport_counter_family, "", NULL };
	struct roce_dp_qp_info q;

	if (roce_dp_qp_query(st->dp, qpn, &q) != 0)
		return roce_ctl_error(reply, -ENOENT, "no QP 0x%06x", qpn);
	roce_counters_emit(&xport, q.cnt, flags, counters_sink, o);
	return 0;
}

/* When the sample was taken: wall clock (seconds, for people and plots) and the dataplane's
 * monotonic clock (ns, for rates between samples). */
static void
timestamp(json_t *reply)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	json_object_set_new(reply, "time", json_real((double)ts.tv_sec + ts.tv_nsec * 1e-9));
	json_object_set_new(reply, "clock_ns", roce_ctl_u64(roce_dp_now()));
}

/*
 * Selectors: a QP, a worker, or a port. Port counters are the sums of the workers that read
 * the port's queues; with one port that is every worker. "nonzero" leaves zeros out,
 * "describe" adds {name: description} as "descriptions".
 */
int
roced_cmd_counters(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	unsigned int nw = roce_dp_nb_workers(st->dp), flags = 0;
	struct counters_out o = { NULL, NULL, NULL };
	uint32_t qpn, worker, port;
	bool nonzero = false, describe = false;
	int hq, hw, hp, ret;

	if ((hq = roce_ctl_arg_u32(req, reply, "qpn", &qpn, false, 0, 0xFFFFFF)) < 0 ||
			(hw = roce_ctl_arg_u32(req, reply, "worker", &worker, false, 0,
				UINT32_MAX)) < 0 ||
			(hp = roce_ctl_arg_u32(req, reply, "port", &port, false, 0, UINT32_MAX)) < 0 ||
			roce_ctl_arg_bool(req, reply, "nonzero", &nonzero, false) < 0 ||
			roce_ctl_arg_bool(req, reply, "describe", &describe, false) < 0 ||
			roce_ctl_arg_str(req, reply, "match", &o.match, false, 128) < 0)
		return -EINVAL;
	if (hq + hw + hp > 1)
		return roce_ctl_error(reply, -EINVAL, "at most one of qpn, worker, port");
	if (nonzero)
		flags |= ROCE_COUNTERS_NONZERO;
	o.values = json_object();
	if (describe)
		o.descs = json_object();
	timestamp(reply);
	if (hq) {
		ret = qp_counters_json(st, qpn, &o, reply, flags);
		json_object_set_new(reply, "scope", json_string("qp"));
		json_object_set_new(reply, "qpn", json_integer(qpn));
	} else if (hw) {
		ret = worker >= nw ? roce_ctl_error(reply, -ENOENT, "no worker %u", worker) :
			counters_json(st, &o, worker, worker + 1, flags);
		json_object_set_new(reply, "scope", json_string("worker"));
		json_object_set_new(reply, "worker", json_integer(worker));
	} else if (hp) {
		ret = port >= st->conf.nb_ports ? roce_ctl_error(reply, -ENOENT, "no port %u",
				port) : counters_json(st, &o, 0, nw, flags);
		json_object_set_new(reply, "scope", json_string("port"));
		json_object_set_new(reply, "port", json_integer(port));
	} else {
		ret = counters_json(st, &o, 0, nw, flags);
	}
	json_object_set_new(reply, "counters", o.values);
	if (o.descs != NULL)
		json_object_set_new(reply, "descriptions", o.descs);
	return ret;
}

int
roced_cmd_counters_clear(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	int ret;

	RTE_SET_USED(req);
	ret = roce_dp_counters_clear(st->dp);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "counters not cleared: %s", strerror(-ret));
	roced_stats_fini(st);
	timestamp(reply);
	return 0;
}

/* One port's ethdev statistics (struct rte_eth_stats names), and its xstats when asked. */
static json_t *
port_stats_json(struct roced_state *st, unsigned int i, bool xstats)
{
	struct rte_eth_stats es = {0};
	struct counters_out x = { NULL, NULL, NULL };
	json_t *o;

	roce_dp_port_stats(st->dp, i, &es);
	o = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "port", i,
			"ipackets", roce_ctl_u64(es.ipackets), "opackets", roce_ctl_u64(es.opackets),
			"ibytes", roce_ctl_u64(es.ibytes), "obytes", roce_ctl_u64(es.obytes),
			"imissed", roce_ctl_u64(es.imissed), "ierrors", roce_ctl_u64(es.ierrors),
			"oerrors", roce_ctl_u64(es.oerrors), "rx_nombuf", roce_ctl_u64(es.rx_nombuf));
	if (xstats) {
		x.values = json_object();
		roce_dp_port_xstats(st->dp, i, ROCE_COUNTERS_NONZERO, counters_sink, &x);
		json_object_set_new(o, "xstats", x.values);
	}
	return o;
}

/* A worker's loop time and the part of it that did work, since the last counters.clear. */
static int
worker_json(struct roced_state *st, unsigned int w, json_t *list)
{
	struct roce_worker_stats s;
	int ret;

	ret = roce_dp_counters_sum(st->dp, w, w + 1, &s);
	if (ret != 0)
		return ret;
	json_array_append_new(list, json_pack("{s:i, s:i, s:o, s:o}", "worker", w,
			"lcore", roce_dp_worker_lcore(st->dp, w),
			"loop_ns", roce_ctl_u64(s.dp[ROCE_DP_LOOP_NS]),
			"busy_ns", roce_ctl_u64(s.dp[ROCE_DP_BUSY_NS])));
	return 0;
}

int
roced_cmd_stats(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	unsigned int nw = roce_dp_nb_workers(st->dp), i;
	json_t *c = json_object(), *ports, *workers;
	struct counters_out o = { c, NULL, NULL };
	bool xstats = false;
	int ret;

	if (roce_ctl_arg_bool(req, reply, "xstats", &xstats, false) < 0) {
		json_decref(c);
		return -EINVAL;
	}
	timestamp(reply);
	ret = counters_json(st, &o, 0, nw, 0);
	if (ret == 0)
		json_object_set_new(reply, "stats", json_pack(
				"{s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O}",
				"rx_pkts", json_object_get(c, "PORT_RX_PKTS"),
				"tx_pkts", json_object_get(c, "PORT_TX_PKTS"),
				"rx_bytes", json_object_get(c, "PORT_RX_BYTES"),
				"tx_bytes", json_object_get(c, "PORT_TX_BYTES"),
				"retransmits", json_object_get(c, "RETRANSMITS"),
				"timeouts", json_object_get(c, "TIMEOUTS"),
				"cnp_rx", json_object_get(c, "CNP_RX"),
				"cnp_tx", json_object_get(c, "CNP_TX")));
	json_decref(c);
	if (ret != 0)
		return ret;
	ports = json_array();
	for (i = 0; i < st->conf.nb_ports; i++)
		json_array_append_new(ports, port_stats_json(st, i, xstats));
	json_object_set_new(reply, "ports", ports);
	workers = json_array();
	for (i = 0; i < nw && ret == 0; i++)
		ret = worker_json(st, i, workers);
	json_object_set_new(reply, "workers", workers);
	if (ret != 0)
		return ret;
	/* The sample before this one, so that one request gives rates as testpmd's "show port
	 * stats" does ("since last show", whoever asked). */
	if (st->stats_prev != NULL)
		json_object_set_new(reply, "previous", st->stats_prev);
	st->stats_prev = json_pack("{s:O, s:O, s:O}", "clock_ns",
			json_object_get(reply, "clock_ns"), "ports", ports, "workers", workers);
	return 0;
}

/* One stage: its histogram's summary in TSC cycles. */
static json_t *
stage_json(enum roce_dp_stage i, const struct roce_hist *h)
{
	struct roce_hist_summary s;

	roce_hist_summarize(h, &s);
	return json_pack("{s:s, s:s, s:o, s:f, s:f, s:f, s:f, s:f, s:f}",
			"name", roce_dp_stage_desc[i].name,
			"description", roce_dp_stage_desc[i].description,
			"count", roce_ctl_u64(s.n), "min", s.min, "mean", s.avg, "median", s.median,
			"p99", s.p99, "p999", s.p999, "max", s.max);
}

/*
 * Where the workers' time goes (roce_dp_stages.h): every stage's histogram, in TSC cycles,
 * merged over the workers or of one; with clear, they start from zero after this reading.
 */
int
roced_cmd_stats_stages(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	unsigned int nw = roce_dp_nb_workers(st->dp), first = 0, last = nw, i;
	struct roce_dp_stages *s;
	bool clear = false;
	uint32_t worker;
	json_t *list;
	int hw, ret;

	if ((hw = roce_ctl_arg_u32(req, reply, "worker", &worker, false, 0, UINT32_MAX)) < 0 ||
			roce_ctl_arg_bool(req, reply, "clear", &clear, false) < 0)
		return -EINVAL;
	if (!roce_dp_stages_built())
		return roce_ctl_error(reply, -ENOTSUP, "stage stamps are not built in: meson "
				"setup -Dstage_stamps=true");
	if (hw) {
		if (worker >= nw)
			return roce_ctl_error(reply, -ENOENT, "no worker %u", worker);
		first = worker;
		last = worker + 1;
	}
	s = rte_malloc("roced_stages", sizeof(*s), 0);
	if (s == NULL)
		return roce_ctl_error(reply, -ENOMEM, "no memory for the stages");
	ret = roce_dp_stages_read(st->dp, first, last, s, clear);
	if (ret != 0) {
		rte_free(s);
		return roce_ctl_error(reply, ret, "stages not read: %s", strerror(-ret));
	}
	timestamp(reply);
	list = json_array();
	for (i = 0; i < ROCE_STAGE_NUM; i++)
		json_array_append_new(list, stage_json(i, &s->h[i]));
	json_object_set_new(reply, "scope", json_string(hw ? "worker" : "all"));
	if (hw)
		json_object_set_new(reply, "worker", json_integer(worker));
	json_object_set_new(reply, "tsc_hz", roce_ctl_u64(s->tsc_hz));
	json_object_set_new(reply, "backwards", roce_ctl_u64(s->backwards));
	json_object_set_new(reply, "stages", list);
	rte_free(s);
	return 0;
}

void
roced_stats_fini(struct roced_state *st)
{
	json_decref(st->stats_prev);
	st->stats_prev = NULL;
}
