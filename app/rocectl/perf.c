/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocectl perf: perftest-style bandwidth and latency tests. rocectl plays the perftest process;
 * lib/perf's session driver does the work (the MR, the QPs spread over the workers, the
 * out-of-band exchange with the peer, a stock ib_*_bw/lat or another rocectl perf, the traffic
 * jobs) through perf_ctl.c, which speaks to the local roced over its control socket. This
 * file holds the options (perftest's, and ours) and the output: perftest's text (header,
 * table, perftest's --out_json file), or one JSON document.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf_ctl.h"
#include "roce_perf_session.h"
#include "rocectl.h"

#define PERF_SANE_MAX (1u << 30)	/* tx depth, packets in flight: the daemon says more */
#define PERF_MAX_PORT 255		/* port index: the daemon says how many it has */
#define PERF_STALL_MS 10000		/* --stall-timeout's default */
#define PERF_DEF_CQ_MOD 100		/* perftest's DEF_CQ_MOD, and its MAX_CQ_MOD */
#define PERF_MAX_CQ_MOD 1024
#define DIM(a) (sizeof(a) / sizeof((a)[0]))
#define STR_(x) #x
#define STR(x) STR_(x)
#define PERF_LINE "---------------------------------------------------------------------------------------\n"
/* perftest's file name for --out_json */
#define PERF_JSON_FILE "perftest_out.json"

static const char *const verb_names[] = { "write", "read", "send", "atomic" };
const char *const rc_perf_tests[] = { "write", "read", "send", "atomic", NULL };
/* perftest's testsStr[] and atomicTypesStr[] */
static const char *const verb_titles[] = { "RDMA_Write", "RDMA_Read", "Send", "Atomic" };
static const char *const atomic_names[] = { "FETCH_AND_ADD", "CMP_AND_SWAP" };

/* What the command line asks: the session's options and how to show its results. */
struct perf_cli {
	struct roce_perf_opts o;
	bool json;			/* one JSON document on stdout */
	bool live;			/* live lines on stderr */
	const char *out_json;		/* perftest's --out_json file, or NULL */
	const char *cc;			/* --cc: "dcqcn", "off", or NULL (leave it) */
	const char *cc_profile;		/* the profile dcqcn loads */
	json_t *results;		/* array of result objects */
	bool interrupted;		/* a result was partial */
	bool header_done;
	bool size_opt;			/* -s was given */
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
		"usage: rocectl perf write|read|send|atomic [HOST] [OPTION...]\n"
		"  No HOST: the server, waiting for the client; HOST: the client of that server\n"
		"  (--server and --client HOST say the same). The peer is a stock\n"
		"  ib_<verb>_<bw|lat> (perftest 6.06 or 6.29+) or another rocectl perf.\n"
		"perftest's options:\n"
		"  --bw | --lat           bandwidth (default) or latency test\n"
		"  -s, --size N           message size (K, M suffixes; default 65536 bw, 2 lat)\n"
		"  -a, --all              every size from 2 B to 8 MiB\n"
		"  -n, --iters N          iterations per QP (default 5000 write bw, else 1000)\n"
		"  -D, --duration SECS    run this long instead; with --run_infinitely the interval\n"
		"  -q, --qp N             QPs, 1.." STR(ROCE_PERF_OOB_MAX_QPS) " (bw tests)\n"
		"  -t, --tx-depth N       send queue depth (default 128; 1 for latency)\n"
		"  -m, --mtu N            path MTU 256..4096 (default: the largest the port takes)\n"
		"  -p, --port N           TCP port of the side channel (default 18515)\n"
		"  -b, --bidirectional    both sides send (bandwidth tests)\n"
		"  -A, --atomic_type T    CMP_AND_SWAP or FETCH_AND_ADD (default)\n"
		"  -l, --post_list N      post N work requests at once (bw)\n"
		"  -Q, --cq-mod N         a completion every N work requests, 1..1024 (bw;\n"
		"                         default 100, at most the tx depth)\n"
		"  -c, --connection RC|UD RC (default) or UD (send only; messages up to the MTU)\n"
		"  -R, --rdma_cm          connect through roced's connection manager, the side\n"
		"                         channel SENDs on a CM-connected QP, -p its port (RC)\n"
		"      --run_infinitely   run until ^C, a result line every -D seconds (default 5)\n"
		"      --rate_limit R     pace to R --rate_units (bw): g Gb/s (default), M MiB/s,\n"
		"      --rate_units U       p messages/s; --rate_limit_type is accepted, roced\n"
		"                           paces in software\n"
		"      --report_gbits     bandwidth in Gb/s instead of MB/s\n"
		"      --out_json         write perftest's JSON report to perftest_out.json\n"
		"      --out_json_file F  ... to F\n"
		"  -d, --ib-dev, -i, --ib-port, -x, --gid-index, -F, --CPU-freq: accepted, with a\n"
		"  note that they do not apply (roced's port is --port-index, its GID its address)\n"
		"rocedp's options:\n"
		"      --port-index N     roced's port to test on (default 0)\n"
		"      --rate GBPS        pace to GBPS Gb/s in all (bw)\n"
		"      --verify           check the data (between two rocectl perf)\n"
		"      --json             one JSON document on stdout instead of the text\n"
		"      --live             a live line per second on stderr (default: when stderr\n"
		"                         is a terminal; --no-live: never)\n"
		"      --cc dcqcn|off     the daemon's congestion control for the run (restored\n"
		"      --cc-profile P       after it): DCQCN with profile mlx5 (default) or paper\n"
		"      --stall-timeout S  end a run whose jobs complete nothing for S seconds\n"
		"                         (default 10; 0: never)\n"
		"      --no-sr            do not offer selective repeat to a rocectl perf peer\n"
		"      --max-inflight N   packets in flight per QP at most (default 512)\n"
		"      --oob-timeout S    deadline of each side-channel message (default 60)\n"
		"      --allow-gid-peer   send RoCE traffic wherever the peer's key says\n"
		"  Two rocectl perf agree on the test, -s/-a, -n/-D, -q and -A: a value given on one\n"
		"  side only is taken by the other, different values given on both are refused.\n"
		"  ^C prints what ran so far, marked interrupted; a second ^C leaves at once.\n");
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
parse_secs(const char *s, double *v, double min, double max)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(d >= min && d <= max))
		return -EINVAL;
	*v = d;
	return 0;
}

static int
perf_bad(const char *what, const char *val)
{
	fprintf(stderr, "rocectl perf: bad %s '%s'\n", what, val);
	return -EINVAL;
}

static int
perf_refuse(const char *msg)
{
	fprintf(stderr, "rocectl perf: %s\n", msg);
	return -EINVAL;
}

/* perftest's device and GID options: rocedp has neither a device list nor a GID table. */
static void
perf_note(int c, const char *arg)
{
	switch (c) {
	case 'd':
		fprintf(stderr, "rocectl perf: -d %s does not apply: the test runs on a port of "
				"the local roced (--port-index)\n", arg);
		break;
	case 'i':
		fprintf(stderr, "rocectl perf: -i %s does not apply: roced's ports are picked with "
				"--port-index (from 0)\n", arg);
		break;
	case 'x':
		fprintf(stderr, "rocectl perf: -x %s does not apply: a roced port has one GID, its "
				"IPv4 address as ::ffff:a.b.c.d (RoCE v2)\n", arg);
		break;
	case 'F':
		fprintf(stderr, "rocectl perf: -F does not apply: roced times with its TSC, there "
				"is no CPU frequency check to skip\n");
		break;
	case 'T':
		fprintf(stderr, "rocectl perf: --rate_limit_type %s does not apply: roced paces "
				"each QP in software\n", arg);
		break;
	}
}

/* Long options without a short one. */
enum {
	OPT_BW = 256, OPT_LAT, OPT_RATE, OPT_VERIFY, OPT_GBITS, OPT_JSON, OPT_SERVER,
	OPT_CLIENT, OPT_PORT_INDEX, OPT_NO_SR, OPT_INFLIGHT, OPT_OOB_TIMEOUT, OPT_GID_PEER,
	OPT_INFINITE, OPT_RATE_LIMIT, OPT_RATE_UNITS, OPT_RATE_TYPE, OPT_OUT_JSON,
	OPT_OUT_JSON_FILE, OPT_CC, OPT_CC_PROFILE, OPT_STALL, OPT_LIVE, OPT_NO_LIVE,
};

static const struct option perf_longopts[] = {
	{ "bw", no_argument, NULL, OPT_BW }, { "lat", no_argument, NULL, OPT_LAT },
	{ "size", required_argument, NULL, 's' }, { "all", no_argument, NULL, 'a' },
	{ "iters", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'D' },
	{ "qp", required_argument, NULL, 'q' },
	{ "tx-depth", required_argument, NULL, 't' },
	{ "mtu", required_argument, NULL, 'm' }, { "port", required_argument, NULL, 'p' },
	{ "bidirectional", no_argument, NULL, 'b' },
	{ "atomic_type", required_argument, NULL, 'A' },
	{ "post_list", required_argument, NULL, 'l' },
	{ "cq-mod", required_argument, NULL, 'Q' },
	{ "connection", required_argument, NULL, 'c' },
	{ "ib-dev", required_argument, NULL, 'd' }, { "ib-port", required_argument, NULL, 'i' },
	{ "gid-index", required_argument, NULL, 'x' }, { "CPU-freq", no_argument, NULL, 'F' },
	{ "rdma_cm", no_argument, NULL, 'R' }, { "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "run_infinitely", no_argument, NULL, OPT_INFINITE },
	{ "rate_limit", required_argument, NULL, OPT_RATE_LIMIT },
	{ "rate_units", required_argument, NULL, OPT_RATE_UNITS },
	{ "rate_limit_type", required_argument, NULL, OPT_RATE_TYPE },
	{ "report_gbits", no_argument, NULL, OPT_GBITS },
	{ "report-gbits", no_argument, NULL, OPT_GBITS },
	{ "out_json", no_argument, NULL, OPT_OUT_JSON },
	{ "out_json_file", required_argument, NULL, OPT_OUT_JSON_FILE },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "verify", no_argument, NULL, OPT_VERIFY }, { "json", no_argument, NULL, OPT_JSON },
	{ "server", no_argument, NULL, OPT_SERVER },
	{ "client", required_argument, NULL, OPT_CLIENT },
	{ "port-index", required_argument, NULL, OPT_PORT_INDEX },
	{ "no-sr", no_argument, NULL, OPT_NO_SR },
	{ "max-inflight", required_argument, NULL, OPT_INFLIGHT },
	{ "oob-timeout", required_argument, NULL, OPT_OOB_TIMEOUT },
	{ "allow-gid-peer", no_argument, NULL, OPT_GID_PEER },
	{ "cc", required_argument, NULL, OPT_CC },
	{ "cc-profile", required_argument, NULL, OPT_CC_PROFILE },
	{ "stall-timeout", required_argument, NULL, OPT_STALL },
	{ "live", no_argument, NULL, OPT_LIVE }, { "no-live", no_argument, NULL, OPT_NO_LIVE },
	{ NULL, 0, NULL, 0 },
};

const char *
rc_perf_option(unsigned int i)
{
	static char buf[DIM(perf_longopts)][40];

	if (i >= DIM(perf_longopts) - 1)
		return NULL;
	snprintf(buf[i], sizeof(buf[i]), "--%s", perf_longopts[i].name);
	return buf[i];
}

/* What the rate options said, turned into the session's pacing once the size is known. */
struct perf_rate {
	double limit;			/* --rate_limit, 0: none */
	char units;			/* 'g', 'M', 'p' */
};

/* One option; @return 0, 1 (help or version printed: exit 0), or -EINVAL (said why). */
static int
perf_opt(struct perf_cli *cli, struct perf_rate *rate, int c, const char *arg)
{
	struct roce_perf_opts *o = &cli->o;
	uint64_t v;
	double d;

	switch (c) {
	case OPT_BW: o->lat = false; break;
	case OPT_LAT: o->lat = true; break;
	case 's':
		if (parse_u64(arg, &o->size, 1, ROCE_PERF_PAR_MAX_SIZE) < 0)
			return perf_bad("size", arg);
		o->given |= ROCE_PERF_PAR_SET_SIZE;
		cli->size_opt = true;
		break;
	case 'a': o->all = true; o->given |= ROCE_PERF_PAR_SET_SIZE; break;
	case 'n':
		if (parse_u64(arg, &o->iters, 5, UINT32_MAX) < 0)
			return perf_bad("iterations (at least 5)", arg);
		o->given |= ROCE_PERF_PAR_SET_ITERS;
		break;
	case 'D':
		if (parse_secs(arg, &o->duration, 0.001, 86400) < 0)
			return perf_bad("duration", arg);
		o->given |= ROCE_PERF_PAR_SET_DURATION;
		break;
	case 'q':
		if (parse_u64(arg, &v, 1, ROCE_PERF_OOB_MAX_QPS) < 0)
			return perf_bad("number of QPs (1.." STR(ROCE_PERF_OOB_MAX_QPS) ")", arg);
		o->qps = (unsigned int)v;
		o->given |= ROCE_PERF_PAR_SET_QPS;
		break;
	case 't':
		if (parse_u64(arg, &v, 1, PERF_SANE_MAX) < 0)
			return perf_bad("tx depth", arg);
		o->tx_depth = (unsigned int)v;
		break;
	case 'm':
		if (parse_u64(arg, &v, 256, 4096) < 0 || (v & (v - 1)) != 0)
			return perf_bad("MTU (256, 512, 1024, 2048, 4096)", arg);
		o->mtu = (unsigned int)v;
		break;
	case 'p':
		if (parse_u64(arg, &v, 1, 65535) < 0)
			return perf_bad("TCP port", arg);
		o->tcp_port = (unsigned int)v;
		break;
	case 'b': o->duplex = true; break;
	case 'A':
		if (strcmp(arg, "CMP_AND_SWAP") != 0 && strcmp(arg, "FETCH_AND_ADD") != 0)
			return perf_bad("atomic type (CMP_AND_SWAP, FETCH_AND_ADD)", arg);
		o->cas = strcmp(arg, "CMP_AND_SWAP") == 0;
		o->given |= ROCE_PERF_PAR_SET_ATOMIC;
		break;
	case 'l':
		if (parse_u64(arg, &v, 1, PERF_SANE_MAX) < 0)
			return perf_bad("post list size", arg);
		o->post_list = (unsigned int)v;
		break;
	case 'Q':
		if (parse_u64(arg, &v, 1, PERF_MAX_CQ_MOD) < 0)
			return perf_bad("CQ moderation (1.." STR(PERF_MAX_CQ_MOD) ")", arg);
		o->cq_mod = (unsigned int)v;
		break;
	case 'c':
		if (strcmp(arg, "RC") == 0) {
			o->conn = ROCE_PERF_CONN_RC;
			break;
		}
		if (strcmp(arg, "UD") == 0) {
			/* perftest's parser: UD for the send tests only */
			if (o->verb != ROCE_PERF_VERB_SEND)
				return perf_refuse("-c UD: UD connection only possible in SEND "
						"verb");
			o->conn = ROCE_PERF_CONN_UD;
			break;
		}
		if (strcmp(arg, "UC") == 0 || strcmp(arg, "XRC") == 0 || strcmp(arg, "DC") == 0 ||
				strcmp(arg, "SRD") == 0 || strcmp(arg, "RawEth") == 0) {
			fprintf(stderr, "rocectl perf: -c %s: rocedp runs RC and UD QPs only\n",
					arg);
			return -EINVAL;
		}
		fprintf(stderr, "rocectl perf: -c %s: Invalid Connection type. Please choose "
				"from {RC,UD}\n", arg);
		return -EINVAL;
	case 'R': o->rdma_cm = true; break;
	case 'd': case 'i': case 'x': case 'F':
		perf_note(c, arg);
		break;
	case OPT_RATE_TYPE:
		if (strcmp(arg, "HW") != 0 && strcmp(arg, "SW") != 0 && strcmp(arg, "PP") != 0)
			return perf_bad("rate limit type (HW, SW, PP)", arg);
		perf_note('T', arg);
		break;
	case OPT_INFINITE: o->infinite = true; break;
	case OPT_RATE_LIMIT:
		if (parse_secs(arg, &rate->limit, 1e-9, 1e12) < 0)
			return perf_bad("rate limit", arg);
		break;
	case OPT_RATE_UNITS:
		if (strcmp(arg, "g") != 0 && strcmp(arg, "M") != 0 && strcmp(arg, "p") != 0)
			return perf_bad("rate units (g: Gb/s, M: MiB/s, p: messages/s)", arg);
		rate->units = arg[0];
		break;
	case OPT_RATE:
		if (parse_secs(arg, &o->rate_gbps, 1e-6, 10000) < 0)
			return perf_bad("rate", arg);
		break;
	case OPT_GBITS: o->gbits = true; break;
	case OPT_OUT_JSON: cli->out_json = cli->out_json != NULL ? cli->out_json :
		PERF_JSON_FILE; break;
	case OPT_OUT_JSON_FILE: cli->out_json = arg; break;
	case OPT_VERIFY: o->verify = true; break;
	case OPT_JSON: cli->json = true; break;
	case OPT_SERVER: o->server = true; break;
	case OPT_CLIENT: o->peer = arg; break;
	case OPT_PORT_INDEX:
		if (parse_u64(arg, &v, 0, PERF_MAX_PORT) < 0)
			return perf_bad("port index", arg);
		o->port = (unsigned int)v;
		break;
	case OPT_NO_SR: o->no_sr = true; break;
	case OPT_INFLIGHT:
		if (parse_u64(arg, &v, 1, PERF_SANE_MAX) < 0)
			return perf_bad("packets in flight", arg);
		o->inflight = (unsigned int)v;
		break;
	case OPT_OOB_TIMEOUT:
		if (parse_secs(arg, &d, 0.1, 86400) < 0)
			return perf_bad("side-channel timeout (0.1 to 86400 s)", arg);
		o->oob_ms = (int)(d * 1000);
		break;
	case OPT_GID_PEER: o->allow_gid_peer = true; break;
	case OPT_CC:
		if (strcmp(arg, "dcqcn") != 0 && strcmp(arg, "off") != 0)
			return perf_bad("congestion control (dcqcn, off)", arg);
		cli->cc = arg;
		break;
	case OPT_CC_PROFILE:
		if (strcmp(arg, "mlx5") != 0 && strcmp(arg, "paper") != 0)
			return perf_bad("DCQCN profile (mlx5, paper)", arg);
		cli->cc_profile = arg;
		break;
	case OPT_STALL:
		if (parse_secs(arg, &d, 0, 86400) < 0)
			return perf_bad("stall timeout (0 to 86400 s)", arg);
		o->stall_ms = (unsigned int)(d * 1000);
		break;
	case OPT_LIVE: cli->live = true; break;
	case OPT_NO_LIVE: cli->live = false; break;
	case 'h':
		rc_perf_usage(stdout);
		return 1;
	case 'V':
		printf("Version: %u.%02u (rocectl perf speaks perftest %u.%02u's side channel)\n",
				ROCE_PERF_OOB_VERSION / 100, ROCE_PERF_OOB_VERSION % 100,
				ROCE_PERF_OOB_VERSION / 100, ROCE_PERF_OOB_VERSION % 100);
		return 1;
	default:
		fprintf(stderr, "rocectl perf: rocectl help perf lists the options\n");
		return -EINVAL;
	}
	return 0;
}

/* What the options say together, as perftest checks them. */
static int
perf_check(struct perf_cli *cli, const struct perf_rate *rate)
{
	struct roce_perf_opts *o = &cli->o;
	bool lat = o->lat;

	if (o->server == (o->peer != NULL))
		return perf_refuse("give a HOST to be the client, none to be the server (or "
				"--server, --client HOST)");
	if (o->all && cli->size_opt)
		return perf_refuse("-a and -s exclude each other");
	if (o->duration > 0 && (o->given & ROCE_PERF_PAR_SET_ITERS))
		return perf_refuse("-D excludes -n");
	if (o->duration > 0 && o->all && !o->infinite)
		return perf_refuse("-D excludes -a");
	if (lat && (o->given & ROCE_PERF_PAR_SET_QPS) && o->qps != 1)
		return perf_refuse("latency tests use one QP");
	if (o->duplex && lat)
		return perf_refuse("-b: bidirectional is only available in bandwidth tests");
	if (o->duplex && o->infinite && o->verb == ROCE_PERF_VERB_SEND)
		return perf_refuse("--run_infinitely is not supported in the bidirectional send "
				"test (-b), as perftest");
	if (o->infinite && lat)
		return perf_refuse("--run_infinitely exists only in bandwidth tests");
	if (o->infinite && (o->all || (o->given & ROCE_PERF_PAR_SET_ITERS)))
		return perf_refuse("--run_infinitely excludes -n and -a (-D sets its interval)");
	if ((o->given & ROCE_PERF_PAR_SET_ATOMIC) && o->verb != ROCE_PERF_VERB_ATOMIC)
		return perf_refuse("-A: only the atomic tests have an atomic type");
	if (o->post_list > 1 && lat)
		return perf_refuse("-l: post lists are for bandwidth tests");
	if ((rate->limit > 0 || o->rate_gbps > 0) && lat)
		return perf_refuse("--rate_limit, --rate: bandwidth tests only");
	if (rate->limit > 0 && o->rate_gbps > 0)
		return perf_refuse("--rate and --rate_limit: give one");
	if (cli->cc_profile != NULL && cli->cc != NULL && strcmp(cli->cc, "off") == 0)
		return perf_refuse("--cc-profile with --cc off");
	if (o->conn == ROCE_PERF_CONN_UD && o->verify)
		return perf_refuse("--verify: RC only (a UD receive holds the GRH area, then the "
				"data)");
	/* perftest posts both sides' receives before the barrier; a bidi job posts its own
	 * as it starts, after it, which RC's RNR retries cover and UD would drop */
	if (o->conn == ROCE_PERF_CONN_UD && o->duplex)
		return perf_refuse("-b with -c UD: not in rocectl perf yet (the peer's first "
				"datagrams could find no receive posted); RC has -b");
	if (o->rdma_cm && o->conn == ROCE_PERF_CONN_UD)
		return perf_refuse("-R with -c UD: not in rocectl perf yet (rdma_cm's UD mode "
				"resolves a service ID, SIDR); -R runs RC");
	if (o->rdma_cm && o->infinite)
		return perf_refuse("-R with --run_infinitely: not in rocectl perf yet (its end "
				"is a side-channel message the CM's channel does not watch for)");
	return 0;
}

/* perftest's defaults, then the values that depend on others. */
static void
perf_defaults(struct perf_cli *cli, const struct perf_rate *rate)
{
	struct roce_perf_opts *o = &cli->o;

	if (!(o->given & ROCE_PERF_PAR_SET_SIZE) || o->all)
		o->size = o->lat ? 2 : 65536;
	/* perftest's atomic tests have one size, -a or not */
	if (o->verb == ROCE_PERF_VERB_ATOMIC) {
		o->size = 8;
		o->all = false;
		o->given &= ~ROCE_PERF_PAR_SET_SIZE;
	}
	if (!(o->given & ROCE_PERF_PAR_SET_ITERS))
		o->iters = o->verb == ROCE_PERF_VERB_WRITE && !o->lat ? 5000 : 1000;
	if (o->lat)
		o->tx_depth = 1;
	/* perftest: no deeper than a counted run's iterations, no moderation beyond the depth */
	if (!o->lat && o->duration == 0 && !o->infinite && o->tx_depth > o->iters)
		o->tx_depth = (unsigned int)o->iters;
	if (o->cq_mod == 0)
		o->cq_mod = PERF_DEF_CQ_MOD;
	if (o->cq_mod > o->tx_depth)
		o->cq_mod = o->tx_depth;
	if (rate->limit > 0) {
		if (rate->units == 'p')
			o->rate_pps = rate->limit;
		else if (rate->units == 'M')
			o->rate_gbps = rate->limit * 1048576 * 8 / 1e9;
		else
			o->rate_gbps = rate->limit;
	}
	if (cli->cc == NULL && cli->cc_profile != NULL)
		cli->cc = "dcqcn";
	if (cli->cc != NULL && strcmp(cli->cc, "dcqcn") == 0 && cli->cc_profile == NULL)
		cli->cc_profile = "mlx5";
}

static int
perf_parse(int argc, char **argv, struct perf_cli *cli)
{
	struct roce_perf_opts *o = &cli->o;
	struct perf_rate rate = { 0, 'g' };
	unsigned int i;
	int c, ret;

	if (argc < 2) {
		rc_perf_usage(stderr);
		return -EINVAL;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
			strcmp(argv[1], "help") == 0) {
		rc_perf_usage(stdout);
		return 1;
	}
	for (i = 0; i < DIM(verb_names); i++)
		if (strcmp(argv[1], verb_names[i]) == 0)
			break;
	if (i == DIM(verb_names)) {
		fprintf(stderr, "rocectl perf: '%s' is not a test: write, read, send or atomic "
				"(rocectl help perf)\n", argv[1]);
		return -EINVAL;
	}
	o->verb = (enum roce_perf_verb)i;
	o->qps = 1;
	o->tx_depth = 128;
	o->tcp_port = ROCE_PERF_TCP_PORT;
	o->inflight = ROCE_PERF_INFLIGHT;
	o->oob_ms = ROCE_PERF_OOB_MS;
	o->stall_ms = PERF_STALL_MS;
	cli->live = isatty(STDERR_FILENO);
	/* 0: a fresh scan, in GNU getopt's permuting order (rocectl's own stops at the command) */
	optind = 0;
	opterr = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "s:an:D:q:t:m:p:bA:l:Q:c:d:i:x:FRhV",
			perf_longopts, NULL)) != -1)
		if ((ret = perf_opt(cli, &rate, c, optarg)) != 0)
			return ret;
	/* perftest's positional server name */
	if (optind < argc - 1) {
		if (o->peer != NULL || o->server) {
			fprintf(stderr, "rocectl perf: '%s': the peer is given twice (HOST, "
					"--client, --server)\n", argv[optind + 1]);
			return -EINVAL;
		}
		o->peer = argv[optind + 1];
		optind++;
	}
	if (optind < argc - 1) {
		fprintf(stderr, "rocectl perf: unexpected argument '%s'\n", argv[optind + 1]);
		return -EINVAL;
	}
	if (o->peer == NULL)
		o->server = true;
	if ((ret = perf_check(cli, &rate)) != 0)
		return ret;
	perf_defaults(cli, &rate);
	if (o->post_list > o->tx_depth) {
		fprintf(stderr, "rocectl perf: -l %u: more than the tx depth %u\n", o->post_list,
				o->tx_depth);
		return -EINVAL;
	}
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

	(void)tcp_port;
	if (!cli->json)
		printf("\n************************************\n"
				"* Waiting for client to connect... *\n"
				"************************************\n");
	fflush(stdout);
}

static void
ev_error(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "rocectl perf: %s\n", msg);
}

static void
ev_note(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "rocectl perf: note: %s\n", msg);
}

/* Live lines go to stderr, so stdout keeps perftest's text (or one JSON document). */
static void
ev_progress(void *arg, const struct roce_perf_progress *pr)
{
	const struct perf_cli *cli = arg;

	if (!cli->live)
		return;
	if (pr->lat)
		fprintf(stderr, " [%5.1f s] %" PRIu64 " iterations  t_typical %.2f usec  t_avg "
				"%.2f usec (so far)  %" PRIu64 " errors\n", pr->secs, pr->msgs,
				pr->t_typical, pr->t_avg, pr->errors);
	else
		fprintf(stderr, " [%5.1f s] %10.2f %s  %10.6f Mpps  %" PRIu64 " msgs  %" PRIu64
				" errors\n", pr->secs, pr->bw, unit_name(cli), pr->mpps, pr->msgs,
				pr->errors);
}

static void
print_key(FILE *f, const char *what, const struct roce_perf_key *k, bool reads)
{
	unsigned int i;

	fprintf(f, " %s address: LID %#04x QPN %#06x PSN %#08x", what, k->lid, k->qpn, k->psn);
	if (reads)
		fprintf(f, " OUT %#04x", k->out_reads);
	fprintf(f, " RKey %#08x VAddr %#016" PRIx64 "\n GID: ", k->rkey, k->vaddr);
	/* perftest prints the GID bytes in decimal */
	for (i = 0; i < 16; i++)
		fprintf(f, "%02d%s", k->gid[i], i == 15 ? "\n" : ":");
}

static const char *
conn_name(const struct roce_perf_session *s)
{
	return s->o.conn == ROCE_PERF_CONN_UD ? "UD" : "RC";
}

/* Selective repeat is RC's: agreed with a rocectl perf peer, it has nothing to do in UD. */
static bool
sr_on(const struct roce_perf_session *s)
{
	return (s->oob.agreed.caps & ROCE_PERF_CAP_SR) && s->o.conn == ROCE_PERF_CONN_RC;
}

static bool
reads_test(const struct roce_perf_session *s)
{
	return s->o.verb == ROCE_PERF_VERB_READ || s->o.verb == ROCE_PERF_VERB_ATOMIC;
}

/* perftest's test title: "RDMA_Write Bidirectional BW", "Atomic FETCH_AND_ADD Latency". */
static void
test_title(const struct roce_perf_session *s, char *b, size_t n, const char *sep)
{
	snprintf(b, n, "%s%s%s%s%s%s%s", verb_titles[s->o.verb], sep,
			s->o.verb == ROCE_PERF_VERB_ATOMIC ? atomic_names[s->o.cas] : "",
			s->o.verb == ROCE_PERF_VERB_ATOMIC ? sep : "",
			!s->o.lat && s->o.duplex ? "Bidirectional" : "",
			!s->o.lat && s->o.duplex ? sep : "",
			!s->o.lat && s->o.post_list > 1 ? "Post List" : "");
	if (!s->o.lat && s->o.post_list > 1)
		snprintf(b + strlen(b), n - strlen(b), "%s", sep);
	snprintf(b + strlen(b), n - strlen(b), "%s", s->o.lat ? "Latency" : "BW");
}

/* The lines of perftest's ctx_print_test_info(), with rocedp's values. */
static void
print_info(const struct perf_cli *cli, const struct roce_perf_session *s, FILE *f)
{
	char title[96];

	test_title(s, title, sizeof(title), " ");
	fprintf(f, PERF_LINE "                    %s Test\n", title);
	fprintf(f, " Dual-port       : OFF\t\tDevice         : roced:%s\n",
			s->device[0] != '\0' ? s->device : "?");
	fprintf(f, " Number of qps   : %u\t\tTransport type : IB\n", s->nqp);
	fprintf(f, " Connection type : %s\t\tUsing SRQ      : OFF\n", conn_name(s));
	fprintf(f, " PCIe relax order: Unsupported\n");
	fprintf(f, " ibv_wr* API     : OFF\n");
	if (!s->o.server || s->o.duplex)
		fprintf(f, " TX depth        : %u\n", s->o.tx_depth);
	if (s->o.post_list > 1)
		fprintf(f, " Post List       : %u\n", s->o.post_list);
	if (s->o.verb == ROCE_PERF_VERB_SEND && (s->o.server || s->o.duplex))
		fprintf(f, " RX depth        : %u\n", s->rq_depth);
	if (!s->o.lat)
		fprintf(f, " CQ Moderation   : %u\n", s->o.cq_mod);
	fprintf(f, " Mtu             : %u[B]\n", 128u << s->oob.agreed.mtu);
	fprintf(f, " Link type       : Ethernet\n");
	fprintf(f, " GID index       : 0\n");
	if (reads_test(s))
		fprintf(f, " Outstand reads  : %u\n", s->out_reads);
	else
		/* latency jobs send up to 64 bytes inline, bandwidth jobs never */
		fprintf(f, " Max inline data : %u[B]\n", s->o.lat ? 64 : 0);
	fprintf(f, " rdma_cm QPs\t : %s\n", s->o.rdma_cm ? "ON" : "OFF");
	fprintf(f, " Data ex. method : %s\n", s->o.rdma_cm ? "rdma_cm" : "Ethernet");
	fprintf(f, " Selective repeat: %s\n", sr_on(s) ? "ON" : "OFF");
	fprintf(f, " Peer version    : %u.%02u%s\n", s->oob.peer.version / 100,
			s->oob.peer.version % 100, s->oob.agreed.caps & ROCE_PERF_CAP_PARAMS ?
			" (rocectl perf)" : "");
	if (cli->cc != NULL)
		fprintf(f, " Congestion ctrl : %s%s%s\n", strcmp(cli->cc, "off") == 0 ? "OFF" :
				"DCQCN, profile ", cli->cc_profile != NULL ? cli->cc_profile : "",
				"");
	fprintf(f, PERF_LINE);
}

static void
ev_header(void *arg, const struct roce_perf_session *s)
{
	struct perf_cli *cli = arg;
	FILE *f = stdout;
	unsigned int i;

	cli->header_done = true;
	if (cli->json)
		return;
	print_info(cli, s, f);
	for (i = 0; i < s->nqp; i++) {
		print_key(f, "local", &s->qp[i].local, reads_test(s));
		print_key(f, "remote", &s->qp[i].peer, reads_test(s));
	}
	fprintf(f, PERF_LINE);
	if (s->o.lat)
		fprintf(f, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
				"t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   "
				"99.9%% percentile[usec] \n");
	else
		fprintf(f, " #bytes     #iterations    BW peak[%s]    BW average[%s]   "
				"MsgRate[Mpps]\n", unit_name(cli), unit_name(cli));
	fflush(f);
}

static const char *
mark(const struct roce_perf_result *r)
{
	return r->interrupted ? "  (interrupted)" : "";
}

static json_t *
bw_json(const struct perf_cli *cli, const struct roce_perf_result *r)
{
	return json_pack("{s:o, s:o, s:f, s:f, s:f, s:s}", "bytes",
			json_integer((json_int_t)r->size), "iterations",
			json_integer((json_int_t)r->iters), "bw_peak", r->bw_peak, "bw_avg",
			r->bw_avg, "msg_rate_mpps", r->msg_rate, "unit", unit_name(cli));
}

static void
bw_result(struct perf_cli *cli, const struct roce_perf_result *r)
{
	/* perftest's REPORT_FMT, and REPORT_FMT_EXT below 0.1 Gb/s */
	if (cli->json)
		;
	else if (cli->o.gbits && r->bw_avg < 0.1)
		printf(" %-7" PRIu64 "    %" PRIu64 "           %-7.6f            %-7.6f            "
				"%-7.6f%s\n", r->size, r->iters, r->bw_peak, r->bw_avg, r->msg_rate,
				mark(r));
	else
		printf(" %-7" PRIu64 "    %-10" PRIu64 "       %-7.2f            %-7.2f\t\t   "
				"%-7.6f%s\n", r->size, r->iters, r->bw_peak, r->bw_avg, r->msg_rate,
				mark(r));
	json_array_append_new(cli->results, bw_json(cli, r));
}

static const char *const lat_keys[] = { "min", "max", "median", "avg", "stdev", "p99", "p999" };

static void
lat_values(const struct roce_perf_result *r, double v[DIM(lat_keys)])
{
	v[0] = r->min;
	v[1] = r->max;
	v[2] = r->median;
	v[3] = r->avg;
	v[4] = r->stdev;
	v[5] = r->p99;
	v[6] = r->p999;
}

static void
lat_result(struct perf_cli *cli, const struct roce_perf_result *r)
{
	double v[DIM(lat_keys)];
	json_t *o;
	unsigned int i;

	lat_values(r, v);
	o = json_pack("{s:o, s:o}", "bytes", json_integer((json_int_t)r->size), "iterations",
			json_integer((json_int_t)r->iters));
	for (i = 0; i < DIM(lat_keys); i++)
		json_object_set_new(o, lat_keys[i], json_real(v[i]));
	json_object_set_new(o, "unit", json_string("usec"));
	json_object_set_new(o, "samples", json_integer((json_int_t)r->samples));
	json_array_append_new(cli->results, o);
	if (!cli->json)
		printf(" %-7" PRIu64 " %" PRIu64 "          %-7.2f        %-7.2f      %-7.2f  \t"
				"       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f%s\n", r->size,
				r->iters, v[0], v[1], v[2], v[3], v[4], v[5], v[6], mark(r));
}

static void
ev_result(void *arg, const struct roce_perf_result *r)
{
	struct perf_cli *cli = arg;
	json_t *last;

	if (cli->o.lat)
		lat_result(cli, r);
	else
		bw_result(cli, r);
	last = json_array_get(cli->results, json_array_size(cli->results) - 1);
	if (r->interrupted) {
		json_object_set_new(last, "interrupted", json_true());
		cli->interrupted = true;
	}
	if (r->interval)
		json_object_set_new(last, "interval_s", json_real(r->seconds));
	if (r->duplex)
		json_object_set_new(last, "bidirectional", json_true());
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
	json_t *doc = json_pack("{s:s, s:s, s:s, s:b, s:o, s:o}", "test",
			roce_perf_test_name(roce_perf_session_test(s)), "connection", conn_name(s),
			"role", s->o.server ? "server" : "client", "ok", ret == 0, "results",
			json_incref(cli->results), "qps", json_array());
	unsigned int i;

	json_object_set_new(doc, "rdma_cm", json_boolean(s->o.rdma_cm));
	for (i = 0; i < s->nqp; i++)
		json_array_append_new(json_object_get(doc, "qps"), json_pack("{s:o, s:o}",
				"local", key_json(&s->qp[i].local), "remote",
				key_json(&s->qp[i].peer)));
	if (s->oob.peer.version != 0) {
		char v[16];

		snprintf(v, sizeof(v), "%u.%02u", s->oob.peer.version / 100,
				s->oob.peer.version % 100);
		json_object_set_new(doc, "peer_version", json_string(v));
		json_object_set_new(doc, "peer_rocedp", json_boolean(s->oob.agreed.caps &
				ROCE_PERF_CAP_PARAMS));
		json_object_set_new(doc, "mtu", json_integer(128 << s->oob.agreed.mtu));
		json_object_set_new(doc, "sr", json_boolean(sr_on(s)));
	}
	if (s->o.duplex)
		json_object_set_new(doc, "bidirectional", json_true());
	if (s->o.infinite)
		json_object_set_new(doc, "run_infinitely", json_true());
	if (cli->cc != NULL)
		json_object_set_new(doc, "cc", json_string(strcmp(cli->cc, "off") == 0 ? "off" :
				cli->cc_profile));
	if (s->verified != NULL)
		json_object_set_new(doc, "verify", json_string(s->verified));
	json_object_set_new(doc, "qp_heap_bytes", json_real(s->qp_bytes));
	if (ret == -EINTR || cli->interrupted)
		json_object_set_new(doc, "interrupted", json_true());
	if (ret != 0)
		json_object_set_new(doc, "error", json_string(strerror(-ret)));
	json_dumpf(doc, stdout, JSON_COMPACT | JSON_REAL_PRECISION(9));
	putchar('\n');
	json_decref(doc);
}

/* ---- perftest's --out_json file ---- */

/* perftest's write_test_info_to_file(): its keys, rocedp's values. */
static json_t *
out_json_info(const struct roce_perf_session *s)
{
	json_t *o = json_object();
	char title[96], test[112];

	test_title(s, title, sizeof(title), "_");
	snprintf(test, sizeof(test), "%s_Test", title);
	json_object_set_new(o, "test", json_string(test));
	json_object_set_new(o, "Dual_port", json_string("OFF"));
	snprintf(title, sizeof(title), "roced:%s", s->device);
	json_object_set_new(o, "Device", json_string(title));
	json_object_set_new(o, "Number_of_qps", json_integer(s->nqp));
	json_object_set_new(o, "Transport_type", json_string("IB"));
	json_object_set_new(o, "Connection_type", json_string(conn_name(s)));
	json_object_set_new(o, "Using_SRQ", json_string("OFF"));
	json_object_set_new(o, "PCIe_relax_order", json_string("Unsupported"));
	json_object_set_new(o, "ibv_wr_API", json_string("OFF"));
	if (!s->o.server || s->o.duplex)
		json_object_set_new(o, "TX_depth", json_integer(s->o.tx_depth));
	if (s->o.post_list > 1)
		json_object_set_new(o, "Post_List", json_integer(s->o.post_list));
	if (s->o.verb == ROCE_PERF_VERB_SEND && (s->o.server || s->o.duplex))
		json_object_set_new(o, "RX_depth", json_integer(s->rq_depth));
	if (!s->o.lat)
		json_object_set_new(o, "CQ_Moderation", json_integer(s->o.cq_mod));
	json_object_set_new(o, "Mtu", json_integer(128 << s->oob.agreed.mtu));
	json_object_set_new(o, "Link_type", json_string("Ethernet"));
	json_object_set_new(o, "GID_index", json_integer(0));
	if (reads_test(s))
		json_object_set_new(o, "Outstand_reads", json_integer(s->out_reads));
	else
		json_object_set_new(o, "Max_inline_data", json_integer(s->o.lat ? 64 : 0));
	json_object_set_new(o, "rdma_cm_QPs", json_string(s->o.rdma_cm ? "ON" : "OFF"));
	json_object_set_new(o, "Data_ex_method", json_string(s->o.rdma_cm ? "rdma_cm" :
			"Ethernet"));
	return o;
}

/* perftest's REPORT_FMT_JSON / REPORT_FMT_LAT_JSON keys, of the last result line. */
static json_t *
out_json_results(const struct perf_cli *cli, const json_t *r)
{
	static const char *const lat_names[] = { "t_min", "t_max", "t_typical", "t_avg",
		"t_stdev", "percentile_99", "percentile_99.9" };
	json_t *o = json_pack("{s:O, s:O}", "MsgSize", json_object_get(r, "bytes"),
			"n_iterations", json_object_get(r, "iterations"));
	unsigned int i;

	if (cli->o.lat) {
		for (i = 0; i < DIM(lat_keys); i++)
			json_object_set(o, lat_names[i], json_object_get(r, lat_keys[i]));
	} else {
		json_object_set(o, "BW_peak", json_object_get(r, "bw_peak"));
		json_object_set(o, "BW_average", json_object_get(r, "bw_avg"));
		json_object_set(o, "MsgRate", json_object_get(r, "msg_rate_mpps"));
	}
	return o;
}

/*
 * perftest writes {test_info, results} of its last report line (valid JSON since perftest
 * 6.20; 6.06 wrote bare keys). rocedp adds its own object: every line, the unit, whether the
 * run was interrupted.
 */
static int
write_out_json(const struct perf_cli *cli, const struct roce_perf_session *s, int ret)
{
	size_t n = json_array_size(cli->results);
	json_t *doc;
	FILE *f;

	if (cli->out_json == NULL || n == 0 || !cli->header_done)
		return 0;
	doc = json_pack("{s:o, s:o, s:{s:O, s:s, s:b, s:s}}", "test_info", out_json_info(s),
			"results", out_json_results(cli, json_array_get(cli->results, n - 1)),
			"rocedp", "results", cli->results, "unit", cli->o.lat ? "usec" :
			unit_name(cli), "interrupted", ret == -EINTR || cli->interrupted, "role",
			s->o.server ? "server" : "client");
	f = fopen(cli->out_json, "w");
	if (f == NULL || json_dumpf(doc, f, JSON_INDENT(1) | JSON_REAL_PRECISION(9)) != 0 ||
			fputc('\n', f) == EOF || fclose(f) != 0) {
		fprintf(stderr, "rocectl perf: --out_json_file %s: %s\n", cli->out_json,
				strerror(errno));
		json_decref(doc);
		return -EIO;
	}
	json_decref(doc);
	return 0;
}

/* ---- main ---- */

static void
print_end(const struct perf_cli *cli, const struct roce_perf_session *s, int ret)
{
	bool footer = ret == 0 || (cli->interrupted && cli->header_done);

	if (!cli->json && footer)
		printf(PERF_LINE);
	if (!cli->json && s->o.verify && ret == 0)
		printf(" Data verified: %s\n", s->verified);
	if (cli->json)
		print_json(cli, s, ret);
}

/* --cc: the daemon's congestion control for this run; *saved gets what to put back. */
static int
cc_begin(struct perf_cli *cli, struct roce_ctl_client *ctl, json_t **saved)
{
	*saved = NULL;
	if (cli->cc == NULL)
		return 0;
	*saved = rc_perf_cc_save(ctl);
	if (*saved == NULL)
		return -EIO;
	return rc_perf_cc_set(ctl, strcmp(cli->cc, "off") == 0 ? "off" : cli->cc_profile);
}

static int
cc_end(struct roce_ctl_client *ctl, json_t *saved)
{
	int ret;

	if (saved == NULL)
		return 0;
	ret = rc_perf_cc_restore(ctl, saved);
	json_decref(saved);
	return ret;
}

int
rc_perf(const struct rc_opts *rc, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = perf_sigint }, old, old_term;
	struct perf_cli cli;
	struct roce_perf_events ev = { ev_waiting, ev_header, ev_progress, ev_result, ev_error,
		&cli, ev_note };
	struct roce_ctl_client *ctl;
	struct roce_perf_session *s;
	json_t *cc_saved;
	int ret, ret2;

	memset(&cli, 0, sizeof(cli));
	ret = perf_parse(argc, argv, &cli);
	if (ret != 0)
		return ret > 0 ? RC_EXIT_OK : RC_EXIT_USAGE;
	cli.json |= rc->json;
	ctl = roce_ctl_client_connect(rc->socket, rc->timeout_ms);
	if (ctl == NULL) {
		fprintf(stderr, "rocectl perf: cannot connect to roced at %s: %s\n", rc->socket,
				strerror(errno));
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
	ret = cc_begin(&cli, ctl, &cc_saved);
	if (ret == 0)
		ret = roce_perf_session_run(s);
	print_end(&cli, s, ret);
	ret2 = write_out_json(&cli, s, ret);
	roce_perf_session_destroy(s);
	/* the QPs are gone: put the daemon's congestion control back as it was */
	if (cc_end(ctl, cc_saved) != 0 && ret == 0)
		ret = -EIO;
	sigaction(SIGINT, &old, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	perf_session = NULL;
	json_decref(cli.results);
	roce_ctl_client_close(ctl);
	return ret == 0 && ret2 == 0 ? RC_EXIT_OK : RC_EXIT_FAILED;
}
