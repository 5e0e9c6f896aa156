/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocectl perf: perftest-style bandwidth and latency tests. rocectl plays the perftest process;
 * lib/perf's session driver does the work (the MR, the QPs spread over the workers, the
 * out-of-band exchange with the peer, a stock ib_*_bw/lat or another rocectl perf, the traffic
 * jobs) through perf_ctl.c, which speaks to the local roced over its control socket. This
 * file holds the options and the output: perftest's text, or one JSON document.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "perf_ctl.h"
#include "roce_perf_session.h"
#include "rocectl.h"

#define PERF_SANE_MAX (1u << 30)	/* tx depth, packets in flight: the daemon says more */
#define PERF_MAX_PORT 255		/* port index: the daemon says how many it has */
#define DIM(a) (sizeof(a) / sizeof((a)[0]))
#define STR_(x) #x
#define STR(x) STR_(x)
#define PERF_LINE "---------------------------------------------------------------------------------------\n"

static const char *const verb_names[] = { "write", "read", "send", "atomic" };
static const char *const verb_titles[] = { "RDMA_Write", "RDMA_Read", "Send", "Atomic" };

/* What the command line asks: the session's options and how to show its results. */
struct perf_cli {
	struct roce_perf_opts o;
	bool json;
	json_t *results;		/* array of result objects */
};

/* The session, for the signal handler. */
static struct roce_perf_session *volatile perf_session;

static void
perf_sigint(int sig)
{
	struct roce_perf_session *s = perf_session;

	(void)sig;
	if (s != NULL)
		roce_perf_session_interrupt(s);
}

/* ---- options ---- */

void
rc_perf_usage(FILE *f)
{
	fprintf(f,
		"usage: rocectl perf write|read|send|atomic [--bw|--lat] [-s SIZE | -a]\n"
		"         [-n ITERS | -D SECS] [-q QPS] [-t TX_DEPTH] [-m|--mtu N] [--rate GBPS]\n"
		"         [--verify] [--report-gbits] [--json] (--server | --client PEER)\n"
		"         [-p TCP_PORT] [-i PORT_INDEX] [--no-sr] [--max-inflight PKTS]\n"
		"         [--oob-timeout SECS] [--allow-gid-peer]\n"
		"  perftest's meanings and defaults: 65536 B for bw, 2 B for lat; 5000 iterations\n"
		"  for write bw, 1000 otherwise; tx depth 128; TCP port 18515. -a sweeps 2 B..8 MiB.\n"
		"  The peer is a stock ib_<verb>_<bw|lat> or another rocectl perf; with the latter the\n"
		"  QPs use selective repeat unless either side says --no-sr.\n"
		"  Each side-channel message must arrive within --oob-timeout (default 60 s), and\n"
		"  the peer must end the test that long after our traffic. RoCE traffic goes to the\n"
		"  peer's GID only when it is the side channel's peer or on our port's subnet,\n"
		"  unless --allow-gid-peer.\n");
}

static int
parse_u64(const char *s, uint64_t *v, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno != 0 || end == s || s[0] == '-')
		return -EINVAL;
	switch (*end) {
	case 'K': case 'k': x <<= 10; end++; break;
	case 'M': case 'm': x <<= 20; end++; break;
	case 'G': case 'g': x <<= 30; end++; break;
	default: break;
	}
	if (*end != '\0' || x < min || x > max)
		return -EINVAL;
	*v = x;
	return 0;
}

static int
perf_bad(const char *what, const char *val)
{
	fprintf(stderr, "rocectl perf: bad %s '%s'\n", what, val);
	return -EINVAL;
}

static int
perf_parse(int argc, char **argv, struct perf_cli *cli)
{
	static const struct option longopts[] = {
		{ "bw", no_argument, NULL, 'B' }, { "lat", no_argument, NULL, 'L' },
		{ "size", required_argument, NULL, 's' }, { "all", no_argument, NULL, 'a' },
		{ "iters", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'D' },
		{ "qp", required_argument, NULL, 'q' },
		{ "tx-depth", required_argument, NULL, 't' },
		{ "mtu", required_argument, NULL, 'm' }, { "rate", required_argument, NULL, 'R' },
		{ "verify", no_argument, NULL, 'V' }, { "report-gbits", no_argument, NULL, 'G' },
		{ "report_gbits", no_argument, NULL, 'G' }, { "json", no_argument, NULL, 'j' },
		{ "server", no_argument, NULL, 'S' }, { "client", required_argument, NULL, 'C' },
		{ "port", required_argument, NULL, 'p' },
		{ "ib-port", required_argument, NULL, 'i' }, { "help", no_argument, NULL, 'h' },
		{ "no-sr", no_argument, NULL, 'N' },
		{ "max-inflight", required_argument, NULL, 'F' },
		{ "oob-timeout", required_argument, NULL, 'O' },
		{ "allow-gid-peer", no_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	struct roce_perf_opts *o = &cli->o;
	bool size_set = false, iters_set = false;
	unsigned int i;
	uint64_t v;
	char *end;
	double d;
	int c;

	if (argc < 2) {
		rc_perf_usage(stderr);
		return -EINVAL;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		rc_perf_usage(stdout);
		return 1;
	}
	for (i = 0; i < DIM(verb_names); i++)
		if (strcmp(argv[1], verb_names[i]) == 0)
			break;
	if (i == DIM(verb_names)) {
		rc_perf_usage(stderr);
		return -EINVAL;
	}
	o->verb = (enum roce_perf_verb)i;
	o->qps = 1;
	o->tx_depth = 128;
	o->tcp_port = ROCE_PERF_TCP_PORT;
	o->inflight = ROCE_PERF_INFLIGHT;
	o->oob_ms = ROCE_PERF_OOB_MS;
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "s:an:D:q:t:m:p:i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'B': o->lat = false; break;
		case 'L': o->lat = true; break;
		case 's':
			if (parse_u64(optarg, &o->size, 1, 1u << 31) < 0)
				return perf_bad("size", optarg);
			size_set = true;
			break;
		case 'a': o->all = true; break;
		case 'n':
			if (parse_u64(optarg, &o->iters, 5, UINT32_MAX) < 0)
				return perf_bad("iterations (at least 5)", optarg);
			iters_set = true;
			break;
		case 'D':
			o->duration = strtod(optarg, NULL);
			if (!(o->duration > 0 && o->duration <= 86400))
				return perf_bad("duration", optarg);
			break;
		case 'q':
			if (parse_u64(optarg, &v, 1, ROCE_PERF_OOB_MAX_QPS) < 0)
				return perf_bad("number of QPs (1.." STR(ROCE_PERF_OOB_MAX_QPS) ")",
						optarg);
			o->qps = (unsigned int)v;
			break;
		case 't':
			if (parse_u64(optarg, &v, 1, PERF_SANE_MAX) < 0)
				return perf_bad("tx depth", optarg);
			o->tx_depth = (unsigned int)v;
			break;
		case 'm':
			if (parse_u64(optarg, &v, 256, 4096) < 0 || (v & (v - 1)) != 0)
				return perf_bad("MTU (256, 512, 1024, 2048, 4096)", optarg);
			o->mtu = (unsigned int)v;
			break;
		case 'R':
			o->rate_gbps = strtod(optarg, NULL);
			if (!(o->rate_gbps > 0 && o->rate_gbps <= 10000))
				return perf_bad("rate", optarg);
			break;
		case 'V': o->verify = true; break;
		case 'G': o->gbits = true; break;
		case 'j': cli->json = true; break;
		case 'S': o->server = true; break;
		case 'N': o->no_sr = true; break;
		case 'F':
			if (parse_u64(optarg, &v, 1, PERF_SANE_MAX) < 0)
				return perf_bad("packets in flight", optarg);
			o->inflight = (unsigned int)v;
			break;
		case 'O':
			d = strtod(optarg, &end);
			if (end == optarg || *end != '\0' || !(d >= 0.1 && d <= 86400))
				return perf_bad("side-channel timeout (0.1 to 86400 s)", optarg);
			o->oob_ms = (int)(d * 1000);
			break;
		case 'A': o->allow_gid_peer = true; break;
		case 'C': o->peer = optarg; break;
		case 'p':
			if (parse_u64(optarg, &v, 1, 65535) < 0)
				return perf_bad("TCP port", optarg);
			o->tcp_port = (unsigned int)v;
			break;
		case 'i':
			if (parse_u64(optarg, &v, 0, PERF_MAX_PORT) < 0)
				return perf_bad("port index", optarg);
			o->port = (unsigned int)v;
			break;
		case 'h':
			rc_perf_usage(stdout);
			return 1;
		default:
			rc_perf_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "rocectl perf: unexpected argument '%s'\n", argv[optind + 1]);
		return -EINVAL;
	}
	if (o->server == (o->peer != NULL)) {
		fprintf(stderr, "rocectl perf: give exactly one of --server and --client PEER\n");
		return -EINVAL;
	}
	if (o->all && size_set) {
		fprintf(stderr, "rocectl perf: -a and -s exclude each other\n");
		return -EINVAL;
	}
	if (o->duration > 0 && (iters_set || o->all)) {
		fprintf(stderr, "rocectl perf: -D excludes -n and -a\n");
		return -EINVAL;
	}
	if (o->lat && o->qps != 1) {
		fprintf(stderr, "rocectl perf: latency tests use one QP\n");
		return -EINVAL;
	}
	if (!size_set)
		o->size = o->lat ? 2 : 65536;
	if (o->verb == ROCE_PERF_VERB_ATOMIC)
		o->size = 8;
	if (!iters_set)
		o->iters = o->verb == ROCE_PERF_VERB_WRITE && !o->lat ? 5000 : 1000;
	if (o->lat)
		o->tx_depth = 1;
	return 0;
}

/* ---- output ---- */

static const char *
unit_name(const struct perf_cli *cli)
{
	return roce_perf_unit_name(cli->o.gbits);
}

static void
ev_waiting(void *arg, unsigned int tcp_port)
{
	const struct perf_cli *cli = arg;

	if (!cli->json)
		printf(" Waiting for a client on TCP port %u\n", tcp_port);
	fflush(stdout);
}

static void
ev_error(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "rocectl perf: %s\n", msg);
}

/* Live lines go to stderr with --json, so stdout stays one JSON document. */
static void
ev_progress(void *arg, const struct roce_perf_progress *pr)
{
	const struct perf_cli *cli = arg;

	fprintf(cli->json ? stderr : stdout, " [%5.1f s] %10.2f %s  %10.6f Mpps  %" PRIu64
			" msgs  %" PRIu64 " errors\n", pr->secs, pr->bw, unit_name(cli),
			0.0 + pr->mpps, pr->msgs, pr->errors);
}

static void
print_key(FILE *f, const char *what, const struct roce_perf_key *k)
{
	unsigned int i;

	fprintf(f, " %s address: LID %#04x QPN %#06x PSN %#08x RKey %#08x VAddr %#016" PRIx64
			"\n GID: ", what, k->lid, k->qpn, k->psn, k->rkey, k->vaddr);
	/* perftest prints the GID bytes in decimal */
	for (i = 0; i < 16; i++)
		fprintf(f, "%02d%s", k->gid[i], i == 15 ? "\n" : ":");
}

static void
ev_header(void *arg, const struct roce_perf_session *s)
{
	const struct perf_cli *cli = arg;
	FILE *f = stdout;
	unsigned int i;

	if (cli->json)
		return;
	fprintf(f, PERF_LINE "                    %s %s Test (rocedp)\n", verb_titles[s->o.verb],
			s->o.lat ? "Latency" : "BW");
	fprintf(f, " Number of qps   : %u\t\tTransport type : IB\n", s->nqp);
	fprintf(f, " Connection type : RC\t\tUsing SRQ      : OFF\n");
	fprintf(f, " TX depth        : %u\n", s->o.tx_depth);
	fprintf(f, " Mtu             : %u[B]\n", 128u << s->oob.agreed.mtu);
	fprintf(f, " Link type       : Ethernet\n");
	fprintf(f, " Selective repeat: %s\n", s->oob.agreed.caps & ROCE_PERF_CAP_SR ? "ON" : "OFF");
	fprintf(f, " Peer version    : %u.%02u\n", s->oob.peer.version / 100,
			s->oob.peer.version % 100);
	fprintf(f, " Data ex. method : Ethernet\n" PERF_LINE);
	for (i = 0; i < s->nqp; i++) {
		print_key(f, "local", &s->qp[i].local);
		print_key(f, "remote", &s->qp[i].peer);
	}
	fprintf(f, PERF_LINE);
	if (s->o.lat)
		fprintf(f, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
				"t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   "
				"99.9%% percentile[usec]\n");
	else
		fprintf(f, " #bytes     #iterations    BW peak[%s]    BW average[%s]   "
				"MsgRate[Mpps]\n", unit_name(cli), unit_name(cli));
	fflush(f);
}

static void
bw_result(struct perf_cli *cli, const struct roce_perf_result *r)
{
	if (!cli->json)
		printf(" %-10" PRIu64 " %-10" PRIu64 "       %-10.2f         %-10.2f           "
				"%-.6f\n", r->size, r->iters, r->bw_peak, r->bw_avg, r->msg_rate);
	json_array_append_new(cli->results, json_pack("{s:o, s:o, s:f, s:f, s:f, s:s}", "bytes",
			json_integer((json_int_t)r->size), "iterations",
			json_integer((json_int_t)r->iters), "bw_peak", r->bw_peak, "bw_avg",
			r->bw_avg, "msg_rate_mpps", r->msg_rate, "unit", unit_name(cli)));
}

static void
lat_result(struct perf_cli *cli, const struct roce_perf_result *r)
{
	static const char *const keys[] = { "min", "max", "median", "avg", "stdev", "p99",
		"p999" };
	const double v[DIM(keys)] = { r->min, r->max, r->median, r->avg, r->stdev, r->p99,
		r->p999 };
	json_t *o;
	unsigned int i;

	o = json_pack("{s:o, s:o}", "bytes", json_integer((json_int_t)r->size), "iterations",
			json_integer((json_int_t)r->iters));
	for (i = 0; i < DIM(keys); i++)
		json_object_set_new(o, keys[i], json_real(v[i]));
	json_object_set_new(o, "unit", json_string("usec"));
	json_object_set_new(o, "samples", json_integer((json_int_t)r->samples));
	json_array_append_new(cli->results, o);
	if (!cli->json)
		printf(" %-7" PRIu64 " %-10" PRIu64 "  %-13.2f  %-13.2f %-16.2f %-14.2f %-15.2f "
				"%-22.2f %-.2f\n", r->size, r->iters, v[0], v[1], v[2], v[3],
				v[4], v[5], v[6]);
}

static void
ev_result(void *arg, const struct roce_perf_result *r)
{
	struct perf_cli *cli = arg;

	if (cli->o.lat)
		lat_result(cli, r);
	else
		bw_result(cli, r);
	fflush(stdout);
}

static json_t *
key_json(const struct roce_perf_key *k)
{
	return json_pack("{s:i, s:i, s:i, s:o}", "qpn", k->qpn, "psn", k->psn, "rkey", k->rkey,
			"vaddr", roce_ctl_u64(k->vaddr));
}

static void
print_json(const struct perf_cli *cli, const struct roce_perf_session *s, int ret)
{
	json_t *doc = json_pack("{s:s, s:s, s:b, s:o, s:o}", "test",
			roce_perf_test_name(roce_perf_session_test(s)), "role",
			s->o.server ? "server" : "client", "ok", ret == 0, "results",
			json_incref(cli->results), "qps", json_array());
	unsigned int i;

	for (i = 0; i < s->nqp; i++)
		json_array_append_new(json_object_get(doc, "qps"), json_pack("{s:o, s:o}",
				"local", key_json(&s->qp[i].local), "remote",
				key_json(&s->qp[i].peer)));
	if (s->oob.peer.version != 0) {
		char v[16];

		snprintf(v, sizeof(v), "%u.%02u", s->oob.peer.version / 100,
				s->oob.peer.version % 100);
		json_object_set_new(doc, "peer_version", json_string(v));
		json_object_set_new(doc, "mtu", json_integer(128 << s->oob.agreed.mtu));
		json_object_set_new(doc, "sr", json_boolean(s->oob.agreed.caps & ROCE_PERF_CAP_SR));
	}
	if (s->verified != NULL)
		json_object_set_new(doc, "verify", json_string(s->verified));
	json_object_set_new(doc, "qp_heap_bytes", json_real(s->qp_bytes));
	if (ret != 0)
		json_object_set_new(doc, "error", json_string(strerror(-ret)));
	json_dumpf(doc, stdout, JSON_COMPACT | JSON_REAL_PRECISION(9));
	putchar('\n');
	json_decref(doc);
}

/* ---- main ---- */

static void
print_end(const struct perf_cli *cli, const struct roce_perf_session *s, int ret)
{
	if (!cli->json && ret == 0)
		printf(PERF_LINE);
	if (!cli->json && s->o.verify && ret == 0)
		printf(" Data verified: %s\n", s->verified);
	if (cli->json)
		print_json(cli, s, ret);
}

int
rc_perf(const struct rc_opts *rc, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = perf_sigint }, old, old_term;
	struct perf_cli cli;
	struct roce_perf_events ev = { ev_waiting, ev_header, ev_progress, ev_result, ev_error,
		&cli };
	struct roce_ctl_client *ctl;
	struct roce_perf_session *s;
	int ret;

	memset(&cli, 0, sizeof(cli));
	ret = perf_parse(argc, argv, &cli);
	if (ret != 0)
		return ret > 0 ? RC_EXIT_OK : RC_EXIT_USAGE;
	cli.json |= rc->json;
	ctl = roce_ctl_client_connect(rc->socket, rc->timeout_ms);
	if (ctl == NULL) {
		fprintf(stderr, "rocectl perf: cannot connect to roced: %s\n", strerror(errno));
		return RC_EXIT_CONNECT;
	}
	s = roce_perf_session_create(&cli.o, &rc_perf_ctl_ops, ctl, &ev);
	if (s == NULL) {
		fprintf(stderr, "rocectl perf: %s\n", strerror(errno));
		roce_ctl_client_close(ctl);
		return RC_EXIT_FAILED;
	}
	cli.results = json_array();
	perf_session = s;
	sigaction(SIGINT, &sa, &old);
	sigaction(SIGTERM, &sa, &old_term);
	ret = roce_perf_session_run(s);
	print_end(&cli, s, ret);
	roce_perf_session_destroy(s);
	sigaction(SIGINT, &old, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	perf_session = NULL;
	json_decref(cli.results);
	roce_ctl_client_close(ctl);
	return ret == 0 ? RC_EXIT_OK : RC_EXIT_FAILED;
}
