/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rates from samples: `stats` as testpmd's "show port stats" (throughput since the previous
 * sample) and `top`, the QPs sorted by their rate. Each sample carries the daemon's monotonic
 * clock (clock_ns); the previous one is this process's last sample under --watch, else the
 * previous `stats` request the daemon served (its "previous" member). And `stats stages`, the
 * stage stamps' table.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rocectl.h"

static uint64_t
u64_of(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

/* @p cur - @p prev; @p cur alone when the counters were cleared in between. */
static uint64_t
since(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;
}

/* (cur - prev) per second over @p dt_ns; 0 without a usable interval. */
static double
rate(uint64_t cur, uint64_t prev, uint64_t dt_ns)
{
	return dt_ns == 0 || cur < prev ? 0 : (double)(cur - prev) * 1e9 / (double)dt_ns;
}

/* The element of array @p a whose @p key is @p id. */
static const json_t *
find_by(const json_t *a, const char *key, uint64_t id)
{
	size_t i;
	json_t *e;

	json_array_foreach(a, i, e)
		if (u64_of(e, key) == id)
			return e;
	return NULL;
}

static void
port_block(const json_t *p, const json_t *pp, uint64_t dt)
{
	static const char border[] = "########################";

	printf("\n  %s NIC statistics for port %-2d %s\n", border, (int)u64_of(p, "port"), border);
	printf("  RX-packets: %-10" PRIu64 " RX-missed: %-10" PRIu64 " RX-bytes:  %" PRIu64 "\n",
			u64_of(p, "ipackets"), u64_of(p, "imissed"), u64_of(p, "ibytes"));
	printf("  RX-errors: %" PRIu64 "\n", u64_of(p, "ierrors"));
	printf("  RX-nombuf:  %-10" PRIu64 "\n", u64_of(p, "rx_nombuf"));
	printf("  TX-packets: %-10" PRIu64 " TX-errors: %-10" PRIu64 " TX-bytes:  %" PRIu64 "\n",
			u64_of(p, "opackets"), u64_of(p, "oerrors"), u64_of(p, "obytes"));
	if (pp != NULL && dt != 0) {
		printf("\n  Throughput (since last show, %.3f s)\n", (double)dt * 1e-9);
		printf("  Rx-pps: %12.0f          Rx-bps: %12.0f\n",
				rate(u64_of(p, "ipackets"), u64_of(pp, "ipackets"), dt),
				8 * rate(u64_of(p, "ibytes"), u64_of(pp, "ibytes"), dt));
		printf("  Tx-pps: %12.0f          Tx-bps: %12.0f\n",
				rate(u64_of(p, "opackets"), u64_of(pp, "opackets"), dt),
				8 * rate(u64_of(p, "obytes"), u64_of(pp, "obytes"), dt));
	} else {
		printf("\n  Throughput: no earlier sample (rocectl stats --watch SECS)\n");
	}
	if (json_object_size(json_object_get(p, "xstats")) != 0) {
		const char *name;
		json_t *v;

		printf("\n  Extended statistics (non-zero):\n");
		json_object_foreach(json_object_get(p, "xstats"), name, v)
			printf("  %-40s %" PRIu64 "\n", name, (uint64_t)json_integer_value(v));
	}
	printf("  %s############################%s\n", border, border);
}

static void
print_stats(const json_t *reply, const json_t *prev)
{
	const json_t *ports = json_object_get(reply, "ports");
	const json_t *workers = json_object_get(reply, "workers");
	const json_t *s = json_object_get(reply, "stats");
	uint64_t now = u64_of(reply, "clock_ns"), then = u64_of(prev, "clock_ns");
	uint64_t dt = prev != NULL && now > then ? now - then : 0;
	size_t i;
	json_t *e;

	json_array_foreach(ports, i, e)
		port_block(e, dt ? find_by(json_object_get(prev, "ports"), "port",
				u64_of(e, "port")) : NULL, dt);
	printf("\n  Workers: busy = time in loop turns that did work (%s)\n",
			dt ? "since last show" : "since counters clear");
	json_array_foreach(workers, i, e) {
		const json_t *pw = dt ? find_by(json_object_get(prev, "workers"), "worker",
				u64_of(e, "worker")) : NULL;
		uint64_t loop = since(u64_of(e, "loop_ns"), pw ? u64_of(pw, "loop_ns") : 0);
		uint64_t busy = since(u64_of(e, "busy_ns"), pw ? u64_of(pw, "busy_ns") : 0);

		printf("  worker %-2d lcore %-3d busy %5.1f %%\n", (int)u64_of(e, "worker"),
				(int)u64_of(e, "lcore"), loop ? 100.0 * (double)busy / (double)loop : 0);
	}
	printf("\n  RoCE: retransmits %" PRIu64 "  timeouts %" PRIu64 "  CNPs received %" PRIu64
			"  sent %" PRIu64 "\n", u64_of(s, "retransmits"), u64_of(s, "timeouts"),
			u64_of(s, "cnp_rx"), u64_of(s, "cnp_tx"));
}

/* The previous sample of a command: this process's own under --watch. */
static json_t *
take_prev(json_t **slot, const json_t *reply)
{
	json_t *prev = *slot;

	*slot = json_deep_copy(reply);
	return prev;
}

void
rc_print_stats(const json_t *reply)
{
	static json_t *last;
	json_t *prev = take_prev(&last, reply);

	print_stats(reply, prev != NULL ? prev : json_object_get(reply, "previous"));
	json_decref(prev);
}

/* ---- top ---- */

struct top_row {
	const json_t *qp;
	double tx_bps, rx_bps, msg_s;
};

static int
by_rate(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	double rx = x->tx_bps + x->rx_bps, ry = y->tx_bps + y->rx_bps;

	if (rx != ry)
		return rx < ry ? 1 : -1;
	return u64_of(x->qp, "qpn") < u64_of(y->qp, "qpn") ? -1 : 1;
}

/* Rows the terminal has room for (all when stdout is not one). */
static size_t
rows_fit(size_t n)
{
	struct winsize ws;

	if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 ||
			ws.ws_row < 8)
		return n;
	return n < (size_t)ws.ws_row - 6 ? n : (size_t)ws.ws_row - 6;
}

static void
print_top(const json_t *reply, const json_t *prev)
{
	const json_t *qps = json_object_get(reply, "qps"), *pq = json_object_get(prev, "qps");
	uint64_t now = u64_of(reply, "clock_ns"), then = u64_of(prev, "clock_ns");
	uint64_t dt = prev != NULL && now > then ? now - then : 0;
	size_t i, n = json_array_size(qps), shown;
	double tx = 0, rx = 0;
	struct top_row *rows;
	json_t *q;

	rows = calloc(n + 1, sizeof(*rows));
	if (rows == NULL)
		return;
	json_array_foreach(qps, i, q) {
		const json_t *p = dt ? find_by(pq, "qpn", u64_of(q, "qpn")) : NULL;

		rows[i].qp = q;
		if (p == NULL)
			continue;
		rows[i].tx_bps = 8 * rate(u64_of(q, "tx_bytes"), u64_of(p, "tx_bytes"), dt);
		rows[i].rx_bps = 8 * rate(u64_of(q, "rx_bytes"), u64_of(p, "rx_bytes"), dt);
		rows[i].msg_s = rate(u64_of(q, "wqe_completed") + u64_of(q, "recv_completed"),
				u64_of(p, "wqe_completed") + u64_of(p, "recv_completed"), dt);
		tx += rows[i].tx_bps;
		rx += rows[i].rx_bps;
	}
	qsort(rows, n, sizeof(*rows), by_rate);
	shown = rows_fit(n);
	printf("QPs: %zu (%zu shown)   payload TX %.3f Gbit/s   RX %.3f Gbit/s%s\n", n, shown,
			tx * 1e-9, rx * 1e-9, dt ? "" : "   (rates from the next sample on)");
	printf("%-8s %-5s %4s %3s %-15s %9s %9s %10s %9s %9s %8s %8s %11s\n", "QPN", "STATE",
			"PORT", "WKR", "PEER", "TX Gb/s", "RX Gb/s", "MSG/s", "RETRANS", "TIMEOUTS",
			"CNP RX", "CNP TX", "CC Mb/s");
	for (i = 0; i < shown; i++) {
		const json_t *r = json_object_get(rows[i].qp, "remote");
		const json_t *cc = json_object_get(rows[i].qp, "cc");
		const char *ip = json_string_value(json_object_get(r, "ip"));
		char cct[24] = "-";

		if (json_is_number(json_object_get(cc, "rate_mbps")))
			snprintf(cct, sizeof(cct), "%.1f",
					json_number_value(json_object_get(cc, "rate_mbps")));
		printf("0x%06" PRIx64 " %-5s %4d %3d %-15s %9.3f %9.3f %10.0f %9" PRIu64 " %9"
				PRIu64 " %8" PRIu64 " %8" PRIu64 " %11s\n",
				u64_of(rows[i].qp, "qpn"),
				json_string_value(json_object_get(rows[i].qp, "state")) ?: "?",
				(int)u64_of(rows[i].qp, "port"), (int)u64_of(rows[i].qp, "worker"),
				ip != NULL ? ip : "-", rows[i].tx_bps * 1e-9, rows[i].rx_bps * 1e-9,
				rows[i].msg_s, u64_of(rows[i].qp, "retransmits"),
				u64_of(rows[i].qp, "timeouts"), u64_of(rows[i].qp, "cnp_rx"),
				u64_of(rows[i].qp, "cnp_tx"), cct);
	}
	free(rows);
}

void
rc_print_top(const json_t *reply)
{
	static json_t *last;
	json_t *prev = take_prev(&last, reply);

	print_top(reply, prev);
	json_decref(prev);
}

static double
real_of(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

/* stats stages: per stage, samples, mean cycles, and the mean and quantiles in ns. */
void
rc_print_stages(const json_t *reply)
{
	double hz = (double)u64_of(reply, "tsc_hz"), ns = hz > 0 ? 1e9 / hz : 0;
	const json_t *e;
	size_t i;

	printf("TSC %.3f GHz, %" PRIu64 " stamps out of order%s\n", hz / 1e9,
			u64_of(reply, "backwards"), json_object_get(reply, "worker") != NULL ?
			"" : ", every worker");
	printf("%-14s %12s %10s %9s %9s %9s %10s\n", "stage", "count", "mean cyc", "mean ns",
			"p50 ns", "p99 ns", "max ns");
	json_array_foreach(json_object_get(reply, "stages"), i, e) {
		printf("%-14s %12" PRIu64 " %10.1f %9.1f %9.1f %9.1f %10.1f\n",
				json_string_value(json_object_get(e, "name")), u64_of(e, "count"),
				real_of(e, "mean"), real_of(e, "mean") * ns,
				real_of(e, "median") * ns, real_of(e, "p99") * ns,
				real_of(e, "max") * ns);
	}
}
