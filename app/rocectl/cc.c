/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cc trace: a QP's congestion control trace (cc.trace) as a table, CSV rows or JSON lines (one
 * reply a line). Without --follow it reads what the ring held at the first request, in as
 * many requests as the limit takes; with --follow it goes on from the cursor the daemon gave,
 * every 0.2 s (or --watch SECS), until ^C, --count N requests, or the QP is gone.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rocectl.h"

#define FOLLOW_EVERY_S 0.2

struct trace_out {
	bool csv;
	bool started;            /* header printed, base time taken */
	uint64_t base_ns;        /* table: times are shown from the first entry on */
};

static uint64_t
u64(const json_t *o, const char *key)
{
	return (uint64_t)json_integer_value(json_object_get(o, key));
}

static double
real(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static const char *
str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "?";
}

static void
print_header(struct trace_out *t, const json_t *reply)
{
	const json_t *e = json_array_get(json_object_get(reply, "entries"), 0);

	t->started = true;
	if (t->csv) {
		printf("qpn,seq,time_ns,unix_ns,event,stage,rate_mbps,target_mbps,alpha,cnps\n");
		return;
	}
	t->base_ns = e != NULL ? u64(e, "time_ns") : u64(reply, "now_ns");
	printf("QP 0x%06" PRIx64 ": %" PRIu64 " entries kept, line rate %" PRIu64 " Mb/s; times "
			"from %" PRIu64 " ns\n", u64(reply, "qpn"), u64(reply, "trace_len"),
			u64(reply, "line_mbps"), t->base_ns);
	printf("%8s  %12s  %-5s  %-13s  %12s  %12s  %8s  %8s\n", "seq", "time_us", "event", "stage",
			"rate_mbps", "target_mbps", "alpha", "cnps");
}

static void
print_entries(struct trace_out *t, const json_t *reply)
{
	const json_t *entries = json_object_get(reply, "entries"), *e;
	/* The wall clock at an entry: its time on the daemon's clock plus the offset. */
	uint64_t wall = u64(reply, "unix_ns") - u64(reply, "now_ns");
	uint64_t lost = u64(reply, "lost");
	size_t i;

	if (!t->started)
		print_header(t, reply);
	if (json_is_true(json_object_get(reply, "restarted")))
		fprintf(stderr, "rocectl: cc trace: the QP was tracked afresh (it went to RTR "
				"again): its trace starts over\n");
	if (lost != 0)
		fprintf(stderr, "rocectl: cc trace: %" PRIu64 " entries lost (overwritten before "
				"they were read; the ring holds %" PRIu64 ": cc set trace_len=N)\n",
				lost, u64(reply, "trace_len"));
	json_array_foreach(entries, i, e) {
		uint64_t tn = u64(e, "time_ns");

		if (t->csv)
			printf("%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%s,%.10g,%.10g,"
					"%.10g,%" PRIu64 "\n", u64(reply, "qpn"), u64(e, "seq"), tn,
					tn + wall, str(e, "event"), str(e, "stage"),
					real(e, "rate_mbps"), real(e, "target_mbps"), real(e, "alpha"),
					u64(e, "cnps"));
		else
			printf("%8" PRIu64 "  %12.3f  %-5s  %-13s  %12.3f  %12.3f  %8.6f  %8" PRIu64
					"\n", u64(e, "seq"),
					((double)tn - (double)t->base_ns) / 1e3, str(e, "event"),
					str(e, "stage"), real(e, "rate_mbps"), real(e, "target_mbps"),
					real(e, "alpha"), u64(e, "cnps"));
	}
}

/* The state after the last entry, for a table read once. */
static void
print_state(const json_t *reply)
{
	const json_t *s = json_object_get(reply, "state"), *q;
	size_t i;

	printf("now (%" PRIu64 " ns): rate %.3f Mb/s, target %.3f Mb/s, alpha %.6f, stage %s, "
			"%" PRIu64 " CNPs; next seq %" PRIu64 "\n", u64(reply, "now_ns"),
			real(s, "rate_mbps"), real(s, "target_mbps"), real(s, "alpha"),
			str(s, "stage"), u64(s, "cnps"), u64(reply, "cursor"));
	json_array_foreach(json_object_get(reply, "queue"), i, q)
		printf("queue of port %" PRIu64 " %s: %" PRIu64 " bytes now; p50 %" PRIu64 ", p99 %"
				PRIu64 ", max %" PRIu64 " bytes over %" PRIu64 " arrivals\n",
				u64(q, "port"), str(q, "dir"), u64(q, "depth_bytes"),
				u64(q, "p50_bytes"), u64(q, "p99_bytes"), u64(q, "max_bytes"),
				u64(q, "samples"));
}

static void
nap(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

int
rc_cc_trace(struct roce_ctl_client **client, const struct rc_opts *o, const struct rc_cmd *cmd,
		json_t *args)
{
	struct sigaction sa = { .sa_handler = rc_on_sigint }, old;
	struct trace_out t = { .csv = json_is_true(json_object_get(args, "csv")) };
	bool follow = json_is_true(json_object_get(args, "follow")) || o->watch > 0 ||
		o->count != 0;
	double every = o->watch > 0 ? o->watch : FOLLOW_EVERY_S;
	uint64_t cursor = u64(args, "cursor"), end = 0;
	unsigned long reads = 0;
	json_t *reply = NULL;
	int rc = RC_EXIT_OK;

	json_object_del(args, "csv");
	json_object_del(args, "follow");
	if (t.csv && o->json) {
		fprintf(stderr, "rocectl: cc trace: --csv or --json, not both\n");
		return RC_EXIT_USAGE;
	}
	rc_interrupted = 0;
	if (follow)
		sigaction(SIGINT, &sa, &old);
	for (;;) {
		bool more;

		json_object_set_new(args, "cursor", roce_ctl_u64(cursor));
		rc = rc_request(client, o, cmd->cmd, args, &reply);
		if (rc != RC_EXIT_OK)
			break;
		if (!o->json)
			print_entries(&t, reply);
		/* Read once: what the ring held at the first request, however many it takes. */
		if (reads++ == 0)
			end = u64(json_object_get(reply, "state"), "trace_next");
		cursor = u64(reply, "cursor");
		more = json_is_true(json_object_get(reply, "more"));
		/* Tracked afresh: its new trace from the start. */
		if (json_is_true(json_object_get(reply, "restarted"))) {
			cursor = 0;
			more = true;
		}
		fflush(stdout);
		if (!follow && (!more || cursor >= end)) {
			if (!o->json && !t.csv)
				print_state(reply);
			break;
		}
		json_decref(reply);
		reply = NULL;
		if (follow && ((o->count != 0 && reads >= o->count) || rc_interrupted))
			break;
		if (follow && !more)
			nap(every);
		if (rc_interrupted)
			break;
	}
	json_decref(reply);
	if (follow)
		sigaction(SIGINT, &old, NULL);
	return rc;
}
