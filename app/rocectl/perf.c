/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocectl perf: perftest-style bandwidth and latency tests. rocectl plays the perftest process:
 * it talks perftest's out-of-band exchange over TCP with the peer (a stock ib_*_bw/lat or
 * another rocectl perf) and drives the local roced over its control socket: one MR, the QPs
 * (spread over the workers), their connection, and traffic jobs that run on the workers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "roce_perf_oob.h"
#include "rocectl.h"

#define PERF_PORT 18515
#define PERF_PAGE 4096u
#define PERF_BIG_PAGE 65536u
#define PERF_MAX_SIZE (8u << 20)	/* -a sweeps 2 B .. 8 MiB, as perftest */
#define PERF_OUT_READS 16		/* READ/atomics we accept and issue at once */
#define PERF_REQ_MS 10000
#define PERF_OOB_MS 60000		/* default deadline of each side-channel message */
/* Selective repeat: a software peer on a busy host can take a millisecond to answer. */
#define PERF_SR_RTO_US 2000
/* Packets in flight per QP: a few times a fast link's bandwidth-delay product, so a lossy
 * path is not flooded (and selective repeat's window stays within its SACK bitmap). */
#define PERF_INFLIGHT 512
#define DIM(a) (sizeof(a) / sizeof((a)[0]))
#define STR_(x) #x
#define STR(x) STR_(x)
#define PERF_LINE "---------------------------------------------------------------------------------------\n"

enum perf_verb { PERF_WRITE, PERF_READ, PERF_SEND, PERF_ATOMIC };

static const char *const verb_names[] = { "write", "read", "send", "atomic" };
static const char *const verb_titles[] = { "RDMA_Write", "RDMA_Read", "Send", "Atomic" };
static const char *const job_ops[] = { "write", "read", "send", "faa" };
/* What the peer may do to our QPs and MR, as perftest grants for each verb. */
static const char *const verb_rights[] = { "remote_write", "remote_read", NULL,
	"remote_atomic" };

/* perftest's test of each verb, bandwidth and latency (atomic_lat talks as read_lat does). */
static const enum roce_perf_test perf_tests[][2] = {
	[PERF_WRITE] = { ROCE_PERF_WRITE_BW, ROCE_PERF_WRITE_LAT },
	[PERF_READ] = { ROCE_PERF_READ_BW, ROCE_PERF_READ_LAT },
	[PERF_SEND] = { ROCE_PERF_SEND_BW, ROCE_PERF_SEND_LAT },
	[PERF_ATOMIC] = { ROCE_PERF_ATOMIC_BW, ROCE_PERF_READ_LAT },
};

struct perf_opts {
	enum perf_verb verb;
	bool lat;
	uint64_t size;
	bool all;
	uint64_t iters;
	double duration;
	unsigned int qps;
	unsigned int tx_depth;
	unsigned int mtu;		/* bytes; 0: from the port's MTU */
	double rate_gbps;
	bool verify;
	bool gbits;
	bool json;
	bool server;
	bool no_sr;			/* do not offer selective repeat */
	unsigned int inflight;		/* packets in flight per QP at most */
	int oob_ms;			/* deadline of each side-channel message */
	bool allow_gid_peer;		/* RoCE traffic may go wherever the peer's GID says */
	const char *peer;
	unsigned int tcp_port;
	unsigned int port;		/* roced port index */
};

struct perf_qp {
	uint32_t qpn;
	struct roce_perf_key local;
	struct roce_perf_key peer;
};

/* One size's results (bandwidth) or latency summary. */
struct perf_result {
	uint64_t size;
	uint64_t iters;
	uint64_t bytes;
	double secs;
	double peak_bps;	/* bytes/s */
	double avg_bps;
	double msg_rate;	/* messages/s */
	uint64_t errors;
	json_t *rtt;		/* latency: the job's rtt_ns summary */
};

struct perf {
	struct perf_opts o;
	const struct rc_opts *rc;
	struct roce_ctl_client *ctl;
	uint64_t mr_iova;
	uint32_t mr_key;
	uint64_t slot;			/* bytes per QP: our half, then the peer's half */
	struct perf_qp *qp;
	unsigned int nqp;
	uint8_t gid[16];
	char ip[INET6_ADDRSTRLEN];
	unsigned int prefix;		/* of our port's IPv4 address */
	uint8_t tcp_gid[16];		/* the side channel's peer, in GID form */
	char tcp_ip[INET6_ADDRSTRLEN];
	bool traffic_done;		/* the traffic hook has returned */
	bool hook_failed;		/* a hook failed and said why */
	uint8_t mtu_enum;
	struct roce_perf_oob_result oob;
	json_t *results;		/* array of result objects */
	double qp_bytes;		/* daemon heap per QP (with its CQ) */
	const char *verified;		/* "ok", "failed", or NULL: not asked */
};

static volatile sig_atomic_t perf_interrupted;
static volatile sig_atomic_t perf_oob_fd = -1;	/* the side channel, while it runs */

static void
perf_sigint(int sig)
{
	(void)sig;
	perf_interrupted = 1;
	/* The exchange retries poll() on EINTR: shutting its socket (async-signal-safe) is what
	 * ends a wait for the peer. */
	if (perf_oob_fd >= 0)
		shutdown(perf_oob_fd, SHUT_RDWR);
}

static uint64_t
ju64(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	if (json_is_string(v))
		return strtoull(json_string_value(v), NULL, 0);
	return 0;
}

static double
jreal(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* Live lines and progress go to stderr with --json, so stdout stays one JSON document. */
static FILE *
perf_out(const struct perf *p)
{
	return p->o.json ? stderr : stdout;
}

/* One control request; prints the daemon's error. @return 0 or -errno. */
static int
perf_req(struct perf *p, const char *cmd, json_t *args, json_t **reply)
{
	const char *code, *msg;
	json_t *r = NULL;
	int ret;

	ret = roce_ctl_client_request(p->ctl, cmd, args, &r, PERF_REQ_MS);
	json_decref(args);
	if (ret != 0) {
		fprintf(stderr, "rocectl perf: %s: %s\n", cmd, strerror(-ret));
		return ret;
	}
	ret = roce_ctl_reply_status(r, &code, &msg);
	if (ret != 0) {
		fprintf(stderr, "rocectl perf: %s: %s\n", cmd, msg != NULL ? msg : "failed");
		json_decref(r);
		return ret;
	}
	if (reply != NULL)
		*reply = r;
	else
		json_decref(r);
	return 0;
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
perf_parse(int argc, char **argv, struct perf_opts *o)
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
	o->verb = (enum perf_verb)i;
	o->qps = 1;
	o->tx_depth = 128;
	o->tcp_port = PERF_PORT;
	o->inflight = PERF_INFLIGHT;
	o->oob_ms = PERF_OOB_MS;
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
			if (parse_u64(optarg, &v, 1, 16384) < 0)
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
		case 'j': o->json = true; break;
		case 'S': o->server = true; break;
		case 'N': o->no_sr = true; break;
		case 'F':
			if (parse_u64(optarg, &v, 1, 65536) < 0)
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
			if (parse_u64(optarg, &v, 0, 3) < 0)
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
	if (o->verb == PERF_ATOMIC)
		o->size = 8;
	if (!iters_set)
		o->iters = o->verb == PERF_WRITE && !o->lat ? 5000 : 1000;
	if (o->lat)
		o->tx_depth = 1;
	return 0;
}

/* ---- setup: MR, QPs, local keys ---- */

static enum roce_perf_test
perf_test(const struct perf *p)
{
	return perf_tests[p->o.verb][p->o.lat];
}

static uint64_t
perf_max_size(const struct perf *p)
{
	return p->o.all ? PERF_MAX_SIZE : p->o.size;
}

/* Our port's IPv4 address (the GID) and the IB MTU its IP MTU allows. */
static int
perf_port(struct perf *p)
{
	json_t *r, *port;
	const char *ip;
	uint64_t ipmtu;
	unsigned int mtu;
	int ret;

	ret = perf_req(p, "port.show", json_pack("{s:i}", "port", p->o.port), &r);
	if (ret != 0)
		return ret;
	port = json_array_get(json_object_get(r, "ports"), 0);
	ip = json_string_value(json_object_get(port, "ip"));
	/* The MTU roced was configured with: some PMDs (memif) report a default they ignore. */
	ipmtu = ju64(port, "ip_mtu");
	if (ip == NULL || inet_pton(AF_INET, ip, p->gid + 12) != 1) {
		fprintf(stderr, "rocectl perf: port %u has no IPv4 address\n", p->o.port);
		json_decref(r);
		return -EADDRNOTAVAIL;
	}
	snprintf(p->ip, sizeof(p->ip), "%s", ip);
	p->prefix = (unsigned int)ju64(port, "prefix");
	memset(p->gid, 0, 10);
	p->gid[10] = p->gid[11] = 0xff;
	json_decref(r);
	/* IP + UDP + BTH + RETH + ICRC = 20 + 8 + 12 + 16 + 4: the largest IB MTU that fits. */
	for (mtu = 4096; mtu > 256 && mtu + 60 > ipmtu; mtu /= 2)
		;
	if (p->o.mtu != 0 && p->o.mtu > mtu) {
		fprintf(stderr, "rocectl perf: MTU %u does not fit port %u's IP MTU %" PRIu64 "\n",
				p->o.mtu, p->o.port, ipmtu);
		return -EINVAL;
	}
	if (p->o.mtu != 0)
		mtu = p->o.mtu;
	p->mtu_enum = (uint8_t)(__builtin_ctz(mtu) - 7);
	return 0;
}

static int
heap_bytes(struct perf *p, uint64_t *bytes)
{
	json_t *r;
	int ret = perf_req(p, "status", json_object(), &r);

	if (ret == 0) {
		*bytes = ju64(r, "heap_bytes");
		json_decref(r);
	}
	return ret;
}

/* The access list of our MR (@mr: local_write too) or QPs for the verb under test. */
static json_t *
rights(const struct perf *p, bool mr)
{
	json_t *a = json_array();

	if (mr)
		json_array_append_new(a, json_string("local_write"));
	if (verb_rights[p->o.verb] != NULL)
		json_array_append_new(a, json_string(verb_rights[p->o.verb]));
	return a;
}

static int
perf_setup(struct perf *p)
{
	uint64_t max = perf_max_size(p), heap0, heap1;
	json_t *r;
	unsigned int i;
	int ret;

	ret = perf_port(p);
	if (ret != 0)
		return ret;
	/* perftest walks small messages through a buffer of the agreed page size: give each
	 * QP's half 64 KiB (the largest page of Linux hosts) unless there are very many QPs. */
	if (max < PERF_BIG_PAGE && p->o.qps <= 256)
		max = PERF_BIG_PAGE;
	p->slot = 2 * ((max + PERF_PAGE - 1) / PERF_PAGE * PERF_PAGE);
	/* --verify: one more slot, scratch for the pattern the data is compared with. In our
	 * connection's own PD: roced frees it and the QPs if we die without tearing down. */
	ret = perf_req(p, "mr.reg", json_pack("{s:o, s:o}", "size", json_integer(
			(json_int_t)(p->slot * (p->o.qps + p->o.verify))), "access",
			rights(p, true)), &r);
	if (ret != 0)
		return ret;
	p->mr_iova = ju64(json_object_get(r, "mr"), "iova");
	p->mr_key = (uint32_t)ju64(json_object_get(r, "mr"), "rkey");
	json_decref(r);
	p->qp = calloc(p->o.qps, sizeof(*p->qp));
	if (p->qp == NULL)
		return -ENOMEM;
	if ((ret = heap_bytes(p, &heap0)) != 0)
		return ret;
	for (i = 0; i < p->o.qps; i++) {
		struct roce_perf_key *k = &p->qp[i].local;
		json_t *q;

		ret = perf_req(p, "qp.create", json_pack("{s:i, s:i, s:i, s:o}", "port", p->o.port,
				"sq_depth", p->o.tx_depth, "rq_depth",
				p->o.tx_depth < 128 ? 128 : p->o.tx_depth, "access", rights(p, false)),
				&r);
		if (ret != 0)
			return ret;
		q = json_object_get(r, "qp");
		p->qp[i].qpn = (uint32_t)ju64(q, "qpn");
		p->nqp++;
		k->out_reads = p->o.verb == PERF_READ || p->o.verb == PERF_ATOMIC ?
			PERF_OUT_READS : 1;
		k->qpn = p->qp[i].qpn;
		k->psn = (uint32_t)ju64(q, "psn");
		k->rkey = p->o.verb == PERF_SEND ? 0 : p->mr_key;
		/* The peer's half of our slot: what it writes, reads or adds to. */
		k->vaddr = p->mr_iova + i * p->slot + p->slot / 2;
		memcpy(k->gid, p->gid, 16);
		json_decref(r);
	}
	if ((ret = heap_bytes(p, &heap1)) != 0)
		return ret;
	p->qp_bytes = ((double)heap1 - (double)heap0) / p->nqp;
	return 0;
}

static void
perf_teardown(struct perf *p)
{
	unsigned int i;

	if (p->ctl == NULL)
		return;
	for (i = 0; i < p->nqp; i++)
		perf_req(p, "qp.destroy", json_pack("{s:i}", "qpn", p->qp[i].qpn), NULL);
	if (p->mr_key != 0 && perf_req(p, "mr.dereg", json_pack("{s:o}", "rkey",
			json_integer(p->mr_key)), NULL) != 0)
		fprintf(stderr, "rocectl perf: could not deregister MR 0x%x\n", p->mr_key);
}

/* ---- jobs ---- */

static uint64_t
local_off(const struct perf *p, unsigned int i)
{
	return i * p->slot;
}

static int
job_start(struct perf *p, unsigned int i, uint64_t size, bool recv)
{
	const struct roce_perf_key *peer = &p->qp[i].peer;
	json_t *a = json_pack("{s:i, s:s, s:o, s:o, s:o}", "qpn", p->qp[i].qpn,
			"op", recv ? "recv" : job_ops[p->o.verb], "lkey", json_integer(p->mr_key),
			"offset", json_integer((json_int_t)(recv ? local_off(p, i) + p->slot / 2 :
				local_off(p, i))),
			"length", json_integer((json_int_t)size));

	if (p->o.duration > 0)
		json_object_set_new(a, "duration_ms",
				json_integer((json_int_t)(p->o.duration * 1000)));
	else
		json_object_set_new(a, "count", json_integer((json_int_t)p->o.iters));
	if (!recv && p->o.verb != PERF_SEND) {
		/* above 2^63 - 1 a "0x" string: JSON integers here are signed 64-bit */
		json_object_set_new(a, "remote_addr", roce_ctl_u64(peer->vaddr));
		json_object_set_new(a, "rkey", json_integer(peer->rkey));
	}
	if (!recv)
		json_object_set_new(a, "depth", json_integer(p->o.tx_depth));
	if (p->o.rate_gbps > 0 && !p->o.lat)
		json_object_set_new(a, "rate_mbps", json_integer((json_int_t)fmax(1,
				p->o.rate_gbps * 1000 / p->o.qps)));
	if (p->o.lat) {
		json_object_set_new(a, "mode", json_string("lat"));
		/* perftest: the write_lat server and the send_lat client open the ping-pong. */
		json_object_set_new(a, "initiator", json_boolean(p->o.verb == PERF_WRITE ?
				p->o.server : !p->o.server));
		json_object_set_new(a, "recv_offset",
				json_integer((json_int_t)(local_off(p, i) + p->slot / 2)));
	}
	return perf_req(p, "job.start", a, NULL);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static double
unit_div(const struct perf *p)
{
	/* perftest: MB/sec is 2^20 bytes, Gb/sec 10^9 bits. */
	return p->o.gbits ? 125e6 : 1048576.0;
}

static const char *
unit_name(const struct perf *p)
{
	return p->o.gbits ? "Gb/sec" : "MB/sec";
}

/*
 * Wait for every QP's job to end, printing a live line each second; sum their results.
 * @return 0, -EINTR, -EIO (a job failed) or an error of the control socket.
 */
static int
jobs_wait(struct perf *p, uint64_t size, struct perf_result *res)
{
	double t0 = now_s(), next = t0 + 1, last_bytes = 0, last_t = t0;
	uint64_t end = 0;
	const char *first_error = NULL;
	bool running = true;
	unsigned int i;
	int ret;

	while (running) {
		uint64_t bytes = 0, msgs = 0;
		double peak = 0, t;

		/* Each poll is an RPC to the workers: rarely enough not to disturb what it measures. */
		sleep_ms(100);
		if (perf_interrupted) {
			for (i = 0; i < p->nqp; i++)
				perf_req(p, "job.stop", json_pack("{s:i}", "qpn", p->qp[i].qpn), NULL);
			return -EINTR;
		}
		running = false;
		res->errors = 0;
		/* Bandwidth: one query adds up the jobs of all our QPs (a query per QP is an
		 * RPC into a worker each: thousands of them would disturb what they measure).
		 * Latency runs one QP and wants its histogram. */
		for (i = 0; i < (p->o.lat ? p->nqp : 1); i++) {
			json_t *r, *j;
			double secs;

			if (p->o.lat)
				ret = perf_req(p, "job.show", json_pack("{s:i}", "qpn",
							p->qp[i].qpn), &r);
			else
				ret = perf_req(p, "job.total", json_pack("{s:b}", "owned", 1), &r);
			if (ret != 0)
				return ret;
			j = json_object_get(r, p->o.lat ? "job" : "total");
			/* job.show says whether its job runs, job.total how many do */
			running |= json_is_true(json_object_get(j, "running")) ||
				ju64(j, "running") != 0;
			bytes += ju64(j, "bytes");
			msgs += ju64(j, "completed");
			res->errors += ju64(j, "errors");
			if (res->errors != 0 && first_error == NULL)
				first_error = strdup(json_string_value(json_object_get(j,
							"first_error")));
			peak += jreal(j, "peak_gbps") * 125e6;
			secs = jreal(j, "seconds");
			/* The jobs run side by side: the longest one is the test's time. */
			if (secs > 0 && (uint64_t)(secs * 1e9) > end)
				end = (uint64_t)(secs * 1e9);
			if (p->o.lat) {
				json_decref(res->rtt);
				res->rtt = json_incref(json_object_get(j, "rtt_ns"));
			}
			json_decref(r);
		}
		res->bytes = bytes;
		res->iters = msgs;
		res->peak_bps = peak;
		t = now_s();
		if (t >= next || !running) {
			if (t >= next && running)
				fprintf(perf_out(p), " [%5.1f s] %10.2f %s  %10.6f Mpps  %" PRIu64
						" msgs  %" PRIu64 " errors\n", t - t0,
						(bytes - last_bytes) / (t - last_t) / unit_div(p),
						unit_name(p), 0.0 + (double)msgs / (t - t0) / 1e6,
						msgs, res->errors);
			last_bytes = (double)bytes;
			last_t = t;
			next = t + 1;
		}
	}
	res->size = size;
	res->secs = (double)end / 1e9;
	res->avg_bps = res->secs > 0 ? (double)res->bytes / res->secs : 0;
	res->msg_rate = res->secs > 0 ? (double)res->iters / res->secs : 0;
	if (res->peak_bps < res->avg_bps)
		res->peak_bps = res->avg_bps;
	if (res->errors != 0) {
		fprintf(stderr, "rocectl perf: %" PRIu64 " work requests failed (first: %s)\n",
				res->errors, first_error != NULL ? first_error : "?");
		free((void *)(uintptr_t)first_error);
		return -EIO;
	}
	return 0;
}

/* ---- data verification (--verify, between two rocectl perf) ---- */

/*
 * The sender fills its source with "random:SEED", SEED from the client's QP key, which both
 * sides know; the receiver compares the CRC-32 of what landed with that of the same pattern
 * written into its scratch slot (after the QPs' slots).
 */
static uint32_t
verify_seed(const struct perf *p, unsigned int i)
{
	const struct roce_perf_key *c = p->o.server ? &p->qp[i].peer : &p->qp[i].local;

	return (c->qpn << 8) ^ c->psn;
}

static int
verify_fill(struct perf *p, uint64_t off, uint64_t len, uint32_t seed)
{
	char pat[32];

	snprintf(pat, sizeof(pat), "random:%u", seed);
	return perf_req(p, "mr.fill", json_pack("{s:o, s:s, s:o, s:o}", "rkey",
			json_integer(p->mr_key), "pattern", pat, "offset", json_integer((json_int_t)off),
			"length", json_integer((json_int_t)len)), NULL);
}

static int
verify_digest(struct perf *p, uint64_t off, uint64_t len, char *crc, size_t crclen)
{
	json_t *r;
	int ret = perf_req(p, "mr.digest", json_pack("{s:o, s:o, s:o}", "rkey",
			json_integer(p->mr_key), "offset", json_integer((json_int_t)off), "length",
			json_integer((json_int_t)len)), &r);

	if (ret == 0) {
		snprintf(crc, crclen, "%s", json_string_value(json_object_get(r, "crc32")));
		json_decref(r);
	}
	return ret;
}

/* Where QP i's data comes from and where it lands, on this side. */
static bool
verify_sends(const struct perf *p)
{
	if (p->o.lat)
		return p->o.verb != PERF_READ || p->o.server;
	return p->o.verb == PERF_READ ? p->o.server : !p->o.server;
}

static bool
verify_receives(const struct perf *p)
{
	if (p->o.lat)
		return p->o.verb != PERF_READ || !p->o.server;
	return p->o.verb == PERF_READ ? !p->o.server : p->o.server;
}

/* Before the traffic: fill what we send from (READ: what the peer reads). */
static int
verify_prepare(struct perf *p)
{
	unsigned int i;
	int ret;

	if (!p->o.verify || p->o.verb == PERF_ATOMIC || !verify_sends(p))
		return 0;
	for (i = 0; i < p->nqp; i++) {
		uint64_t off = local_off(p, i) + (p->o.verb == PERF_READ ? p->slot / 2 : 0);

		ret = verify_fill(p, off, perf_max_size(p), verify_seed(p, i));
		if (ret != 0)
			return ret;
	}
	return 0;
}

/*
 * Atomics: the targets' sum is the number of fetch-and-adds of 1 the client did. A rocectl
 * client always adds to the first word of our half; perftest steps its target by the cache line
 * size through the cycle buffer (64 targets for 64 B lines and 4 KiB pages), so add up every
 * 8-byte word of the half (zeroed at registration; only the peer's atomics land there).
 */
#define PERF_DUMP_MAX 4096u	/* roced's mr.dump limit */

static int
verify_atomic(struct perf *p)
{
	uint64_t sum = 0, off, len;
	unsigned int i, b, w;
	json_t *r;
	int ret;

	for (i = 0; i < p->nqp; i++) {
		for (off = 0; off < p->slot / 2; off += len) {
			const char *hex;
			size_t words;

			len = p->slot / 2 - off < PERF_DUMP_MAX ? p->slot / 2 - off : PERF_DUMP_MAX;
			ret = perf_req(p, "mr.dump", json_pack("{s:o, s:o, s:o}", "rkey",
					json_integer(p->mr_key), "offset", json_integer((json_int_t)(
					local_off(p, i) + p->slot / 2 + off)), "length",
					json_integer((json_int_t)len)), &r);
			if (ret != 0)
				return ret;
			hex = json_string_value(json_object_get(r, "hex"));
			words = hex != NULL ? strlen(hex) / 16 : 0;
			for (w = 0; w < words; w++) {
				uint64_t v = 0;

				for (b = 0; b < 8; b++)
					v |= (uint64_t)strtoul((char[]){ hex[16 * w + 2 * b],
							hex[16 * w + 2 * b + 1], 0 }, NULL, 16) << (8 * b);
				sum += v;
			}
			json_decref(r);
		}
	}
	if (sum != p->oob.peer_report.iters) {
		fprintf(stderr, "rocectl perf: verify: the targets add up to %" PRIu64
				", the client did %" PRIu64 " fetch-and-adds\n", sum,
				p->oob.peer_report.iters);
		return -EBADMSG;
	}
	return 0;
}

/* After the traffic: compare what landed with the pattern. @return 0 or -EBADMSG. */
static int
verify_check(struct perf *p, uint64_t size)
{
	uint64_t scratch = p->nqp * p->slot, len = p->o.lat && p->o.verb != PERF_READ ?
		size - 1 : size;
	char want[16], got[16];
	unsigned int i;
	int ret;

	if (!p->o.verify || !verify_receives(p))
		return 0;
	if (p->o.verb == PERF_ATOMIC)
		return p->o.lat ? 0 : verify_atomic(p);
	/* Only a rocectl perf --verify peer sends the pattern; a stock perftest's bytes are its
	 * own business. */
	if (!(p->oob.agreed.caps & ROCE_PERF_CAP_PATTERN)) {
		p->verified = "skipped: the peer is not a rocectl perf --verify";
		return 0;
	}
	for (i = 0; i < p->nqp; i++) {
		uint64_t off = local_off(p, i) + (p->o.verb == PERF_READ ? 0 : p->slot / 2);

		if ((ret = verify_fill(p, scratch, size, verify_seed(p, i))) != 0 ||
				(ret = verify_digest(p, scratch, len, want, sizeof(want))) != 0 ||
				(ret = verify_digest(p, off, len, got, sizeof(got))) != 0)
			return ret;
		if (strcmp(want, got) != 0) {
			fprintf(stderr, "rocectl perf: verify: QP 0x%06x received CRC-32 %s, the "
					"pattern has %s (is the peer a rocectl perf --verify?)\n",
					p->qp[i].qpn, got, want);
			return -EBADMSG;
		}
	}
	return 0;
}

/* ---- reports ---- */

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
print_header(const struct perf *p)
{
	FILE *f = stdout;
	unsigned int i;

	if (p->o.json)
		return;
	fprintf(f, PERF_LINE "                    %s %s Test (rocedp)\n", verb_titles[p->o.verb],
			p->o.lat ? "Latency" : "BW");
	fprintf(f, " Number of qps   : %u\t\tTransport type : IB\n", p->nqp);
	fprintf(f, " Connection type : RC\t\tUsing SRQ      : OFF\n");
	fprintf(f, " TX depth        : %u\n", p->o.tx_depth);
	fprintf(f, " Mtu             : %u[B]\n", 128u << p->oob.agreed.mtu);
	fprintf(f, " Link type       : Ethernet\n");
	fprintf(f, " Selective repeat: %s\n", p->oob.agreed.caps & ROCE_PERF_CAP_SR ? "ON" : "OFF");
	fprintf(f, " Peer version    : %u.%02u\n", p->oob.peer.version / 100,
			p->oob.peer.version % 100);
	fprintf(f, " Data ex. method : Ethernet\n" PERF_LINE);
	for (i = 0; i < p->nqp; i++) {
		print_key(f, "local", &p->qp[i].local);
		print_key(f, "remote", &p->qp[i].peer);
	}
	fprintf(f, PERF_LINE);
	if (p->o.lat)
		fprintf(f, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
				"t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   "
				"99.9%% percentile[usec]\n");
	else
		fprintf(f, " #bytes     #iterations    BW peak[%s]    BW average[%s]   "
				"MsgRate[Mpps]\n", unit_name(p), unit_name(p));
	fflush(f);
}

static void
add_bw_result(struct perf *p, uint64_t size, uint64_t iters, double peak, double avg,
		double rate)
{
	if (!p->o.json)
		printf(" %-10" PRIu64 " %-10" PRIu64 "       %-10.2f         %-10.2f           "
				"%-.6f\n", size, iters, peak, avg, rate);
	json_array_append_new(p->results, json_pack("{s:o, s:o, s:f, s:f, s:f, s:s}", "bytes",
			json_integer((json_int_t)size), "iterations", json_integer((json_int_t)iters),
			"bw_peak", peak, "bw_avg", avg, "msg_rate_mpps", rate, "unit",
			unit_name(p)));
	fflush(stdout);
}

static void
add_lat_result(struct perf *p, const struct perf_result *r)
{
	/* rtt_ns holds post-to-post times: a round trip, halved for write/send as perftest. */
	double div = (p->o.verb == PERF_WRITE || p->o.verb == PERF_SEND ? 2 : 1) * 1000;
	static const char *const keys[] = { "min", "max", "median", "avg", "stdev", "p99",
		"p999" };
	double v[DIM(keys)];
	json_t *o;
	unsigned int i;

	o = json_pack("{s:o, s:o}", "bytes", json_integer((json_int_t)r->size), "iterations",
			json_integer((json_int_t)r->iters));
	for (i = 0; i < DIM(keys); i++) {
		v[i] = jreal(r->rtt, keys[i]) / div;
		json_object_set_new(o, keys[i], json_real(v[i]));
	}
	json_object_set_new(o, "unit", json_string("usec"));
	json_object_set_new(o, "samples", json_integer((json_int_t)ju64(r->rtt, "samples")));
	json_array_append_new(p->results, o);
	if (!p->o.json)
		printf(" %-7" PRIu64 " %-10" PRIu64 "  %-13.2f  %-13.2f %-16.2f %-14.2f %-15.2f "
				"%-22.2f %-.2f\n", r->size, r->iters, v[0], v[1], v[2], v[3],
				v[4], v[5], v[6]);
	fflush(stdout);
}

/* ---- the out-of-band exchange's hooks ---- */

static void
gid_ip(const uint8_t *gid, char *buf, size_t len)
{
	static const uint8_t v4map[12] = { [10] = 0xff, [11] = 0xff };

	if (memcmp(gid, v4map, 12) == 0)
		inet_ntop(AF_INET, gid + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, gid, buf, (socklen_t)len);
}

static uint64_t
nb_sizes(const struct perf *p)
{
	return p->o.all ? 23 : 1;
}

/*
 * The peer's key alone says where our RoCE traffic goes: refuse a GID that is neither the side
 * channel's peer nor on our port's subnet, or a perftest peer could aim us at a third host.
 */
static int
check_peer_gid(const struct perf *p, const struct roce_perf_key *k)
{
	char ip[INET6_ADDRSTRLEN];

	if (p->o.allow_gid_peer || roce_perf_gid_check(k->gid, p->tcp_gid, p->gid + 12,
			p->prefix) == 0)
		return 0;
	gid_ip(k->gid, ip, sizeof(ip));
	fprintf(stderr, "rocectl perf: the peer's key sends RoCE traffic to %s, which is neither "
			"the side channel's peer %s nor on port %u's subnet %s/%u; refused "
			"(--allow-gid-peer sends it there)\n", ip, p->tcp_ip, p->o.port, p->ip,
			p->prefix);
	return -EPERM;
}

static int
connect_peer(struct perf *p, const struct roce_perf_key *peer, unsigned int nqps)
{
	unsigned int i;
	int ret;

	if (p->oob.agreed.page_size > p->slot / 2) {
		fprintf(stderr, "rocectl perf: the peer's page size %u would take its messages "
				"beyond the %" PRIu64 " bytes per QP we offer; use fewer QPs\n",
				p->oob.agreed.page_size, p->slot / 2);
		return -ENOTSUP;
	}
	/* perftest does not say how many QPs it has: with fewer than ours, its barrier keys
	 * stand in for the missing ones, all with its first QP's number. */
	for (i = 1; i < nqps; i++) {
		if (peer[i].qpn == peer[0].qpn && memcmp(peer[i].gid, peer[0].gid, 16) == 0) {
			fprintf(stderr, "rocectl perf: the peer has fewer QPs than our %u: give "
					"both sides the same -q\n", nqps);
			return -EPROTO;
		}
	}
	for (i = 0; i < nqps; i++)
		if ((ret = check_peer_gid(p, &peer[i])) != 0)
			return ret;
	for (i = 0; i < nqps; i++) {
		char ip[INET6_ADDRSTRLEN];
		unsigned int rd = peer[i].out_reads < PERF_OUT_READS ? peer[i].out_reads :
			PERF_OUT_READS;

		p->qp[i].peer = peer[i];
		gid_ip(peer[i].gid, ip, sizeof(ip));
		ret = perf_req(p, "qp.connect", json_pack("{s:i, s:{s:i, s:i, s:s}, s:i, s:i, s:i, s:i, s:b}",
				"qpn", p->qp[i].qpn, "remote", "qpn", peer[i].qpn, "psn",
				peer[i].psn, "ip", ip, "mtu", 128 << p->oob.agreed.mtu,
				"max_rd_atomic", rd == 0 ? 1 : rd, "sr_rto_us", PERF_SR_RTO_US,
				"max_inflight", p->o.inflight,
				"sr", (p->oob.agreed.caps & ROCE_PERF_CAP_SR) != 0), NULL);
		if (ret != 0)
			return ret;
	}
	if ((ret = verify_prepare(p)) != 0)
		return ret;
	print_header(p);
	/* perftest's send_bw server posts its receives before the last barrier. */
	if (p->o.server && p->o.verb == PERF_SEND && !p->o.lat) {
		uint64_t iters = p->o.iters;

		p->o.iters *= nb_sizes(p);
		for (i = 0; i < nqps && ret == 0; i++)
			ret = job_start(p, i, perf_max_size(p), true);
		p->o.iters = iters;
	}
	return ret;
}

/* Whatever fails in a hook says so where it fails; the exchange adds no line of its own. */
static int
hook_connect(void *arg, const struct roce_perf_key *peer, unsigned int nqps)
{
	struct perf *p = arg;
	int ret = connect_peer(p, peer, nqps);

	p->hook_failed = ret != 0;
	return ret;
}

/* Run every QP's job at one size and report it. */
static int
run_size(struct perf *p, uint64_t size, struct perf_result *res)
{
	unsigned int i;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	for (i = 0; i < p->nqp && ret == 0; i++)
		ret = job_start(p, i, size, false);
	if (ret == 0)
		ret = jobs_wait(p, size, res);
	if (ret == 0 && p->o.lat)
		add_lat_result(p, res);
	else if (ret == 0)
		add_bw_result(p, size, res->iters, res->peak_bps / unit_div(p),
				res->avg_bps / unit_div(p), res->msg_rate / 1e6);
	return ret;
}

static bool
perf_passive(const struct perf *p)
{
	/* perftest's bw servers (and the read_lat one) only wait for the client. */
	return p->o.server && (!p->o.lat || p->o.verb == PERF_READ || p->o.verb == PERF_ATOMIC);
}

static int
run_traffic(struct perf *p, struct roce_perf_report *rep)
{
	struct perf_result res = {0};
	uint64_t size = p->o.all ? 2 : p->o.size;
	int ret = 0;

	if (perf_passive(p))
		return 0;
	for (; ret == 0 && size <= perf_max_size(p); size *= 2) {
		ret = run_size(p, size, &res);
		if (ret == 0 && (ret = verify_check(p, size)) != 0)
			p->verified = "failed";
		json_decref(res.rtt);
		res.rtt = NULL;
	}
	rep->size = res.size;
	rep->iters = res.iters;
	rep->bw_peak = res.peak_bps / unit_div(p);
	rep->bw_avg = res.avg_bps / unit_div(p);
	rep->msg_rate = res.msg_rate / 1e6;
	return ret;
}

static int
hook_traffic(void *arg, struct roce_perf_report *rep)
{
	struct perf *p = arg;
	int ret = run_traffic(p, rep);

	p->hook_failed = ret != 0;
	p->traffic_done = true;
	return ret;
}

/* After the exchange, a passive server reports: the client's numbers, or its receives. */
static int
server_report(struct perf *p)
{
	const struct roce_perf_report *r = &p->oob.peer_report;
	struct perf_result res = {0};
	unsigned int i;
	int ret;

	if (!perf_passive(p) || p->o.lat)
		return 0;
	if (p->o.verb != PERF_SEND) {
		add_bw_result(p, r->size, r->iters, r->bw_peak, r->bw_avg, r->msg_rate);
		return 0;
	}
	/* Receive side: the client has finished, so whatever arrived is all there will be. */
	for (i = 0; i < p->nqp; i++)
		perf_req(p, "job.stop", json_pack("{s:i}", "qpn", p->qp[i].qpn), NULL);
	ret = jobs_wait(p, perf_max_size(p), &res);
	if (ret == 0)
		add_bw_result(p, p->o.all ? 0 : p->o.size, res.iters, res.peak_bps / unit_div(p),
				res.avg_bps / unit_div(p), res.msg_rate / 1e6);
	return ret;
}

/* ---- TCP ---- */

static int
tcp_client(const struct perf *p)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai, *a;
	char port[8];
	int fd = -1, ret, tries;

	snprintf(port, sizeof(port), "%u", p->o.tcp_port);
	ret = getaddrinfo(p->o.peer, port, &hints, &ai);
	if (ret != 0) {
		fprintf(stderr, "rocectl perf: %s: %s\n", p->o.peer, gai_strerror(ret));
		return -EHOSTUNREACH;
	}
	/* perftest retries while the server is not listening yet. */
	for (tries = 0; fd < 0 && tries < 50 && !perf_interrupted; tries++) {
		for (a = ai; a != NULL && fd < 0; a = a->ai_next) {
			fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
			if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
				ret = -errno;
				close(fd);
				fd = -1;
			}
		}
		if (fd < 0)
			sleep_ms(100);
	}
	freeaddrinfo(ai);
	if (fd < 0)
		fprintf(stderr, "rocectl perf: cannot connect to %s port %u: %s\n", p->o.peer,
				p->o.tcp_port, strerror(-ret));
	return fd < 0 ? ret : fd;
}

static int
tcp_server(const struct perf *p)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(p->o.tcp_port),
		.sin6_addr = IN6ADDR_ANY_INIT };
	struct pollfd pfd = { .events = POLLIN };
	int one = 1, zero = 0, fd, ret;

	pfd.fd = fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 1) != 0) {
		ret = -errno;
		fprintf(stderr, "rocectl perf: cannot listen on TCP port %u: %s\n",
				p->o.tcp_port, strerror(-ret));
		close(fd);
		return ret;
	}
	if (!p->o.json)
		printf(" Waiting for a client on TCP port %u\n", p->o.tcp_port);
	fflush(stdout);
	while ((ret = poll(&pfd, 1, 200)) == 0 && !perf_interrupted)
		;
	if (ret < 0 || perf_interrupted) {
		close(fd);
		return -EINTR;
	}
	ret = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* ---- main ---- */

/* The one line saying why the exchange failed. */
static void
oob_fail(const struct perf *p, int err)
{
	const char *why;
	char buf[128];

	switch (err) {
	case -EPROTONOSUPPORT:
		why = "the peer's perftest version is not supported";
		break;
	case -EPROTO:
		why = "the peer sent a malformed message (or a perftest version below 5.70)";
		break;
	case -ECONNRESET:
		why = "the peer closed the connection";
		break;
	case -ETIMEDOUT:
		if (!p->traffic_done)
			snprintf(buf, sizeof(buf), "the peer did not send a whole message within "
					"%g s", p->o.oob_ms / 1e3);
		else if (perf_passive(p))
			snprintf(buf, sizeof(buf), "the peer did not end its %g s of traffic and "
					"the test within %g s more", p->o.duration,
					p->o.oob_ms / 1e3);
		else
			snprintf(buf, sizeof(buf), "the peer did not end the test within %g s "
					"of the end of our traffic", p->o.oob_ms / 1e3);
		why = buf;
		break;
	default:
		why = strerror(-err);
		break;
	}
	fprintf(stderr, "rocectl perf: out-of-band exchange with the peer failed: %s\n", why);
}

/*
 * The first message after the traffic, counted from the end of ours: as long as any other
 * when we ran traffic, since the peer ends with us. A passive server waits for the client's
 * whole traffic instead, which -D bounds and -n does not (Ctrl-C still ends it).
 */
static int
traffic_wait_ms(const struct perf *p)
{
	if (!perf_passive(p))
		return 0;
	return p->o.duration > 0 ? (int)(p->o.duration * 1000) + p->o.oob_ms : -1;
}

/* The side channel's peer, in GID form (IPv4 as ::ffff:a.b.c.d), and as text. */
static int
tcp_peer(struct perf *p, int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	memset(p->tcp_gid, 0, sizeof(p->tcp_gid));
	if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0) {
		int ret = -errno;

		fprintf(stderr, "rocectl perf: side channel: %s\n", strerror(-ret));
		return ret;
	}
	if (ss.ss_family == AF_INET) {
		p->tcp_gid[10] = p->tcp_gid[11] = 0xff;
		memcpy(p->tcp_gid + 12, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	} else if (ss.ss_family == AF_INET6) {
		memcpy(p->tcp_gid, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	} else {
		fprintf(stderr, "rocectl perf: side channel: not an IP socket\n");
		return -EAFNOSUPPORT;
	}
	gid_ip(p->tcp_gid, p->tcp_ip, sizeof(p->tcp_ip));
	return 0;
}

static int
perf_exchange(struct perf *p)
{
	struct roce_perf_key *keys = calloc(p->nqp, sizeof(*keys));
	struct roce_perf_oob_cfg cfg = {
		.test = perf_test(p),
		.role = p->o.server ? ROCE_PERF_SERVER : ROCE_PERF_CLIENT,
		.nqps = p->nqp,
		.timeout_ms = p->o.oob_ms,
		.traffic_timeout_ms = traffic_wait_ms(p),
		.local = { .page_size = PERF_PAGE, .cache_line = 64, .mtu = p->mtu_enum,
			.caps = (p->o.verify ? ROCE_PERF_CAP_PATTERN : 0) |
				(p->o.no_sr ? 0 : ROCE_PERF_CAP_SR) },
		.keys = keys,
		.hooks = { hook_connect, hook_traffic, p },
	};
	unsigned int i;
	int fd, ret;

	if (keys == NULL)
		return -ENOMEM;
	for (i = 0; i < p->nqp; i++)
		keys[i] = p->qp[i].local;
	fd = p->o.server ? tcp_server(p) : tcp_client(p);
	if (fd < 0) {
		free(keys);
		return fd;
	}
	ret = tcp_peer(p, fd);
	if (ret == 0) {
		perf_oob_fd = fd;
		ret = roce_perf_oob_run(fd, &cfg, &p->oob);
		perf_oob_fd = -1;
	}
	close(fd);
	free(keys);
	/* Ctrl-C shut the socket: whatever the exchange saw then, it was interrupted */
	if (ret != 0 && perf_interrupted)
		ret = -EINTR;
	if (ret != 0 && ret != -EINTR && !p->hook_failed)
		oob_fail(p, ret);
	return ret;
}

static void
print_json(struct perf *p, int ret)
{
	json_t *doc = json_pack("{s:s, s:s, s:b, s:o, s:o}", "test",
			roce_perf_test_name(perf_test(p)), "role", p->o.server ? "server" : "client",
			"ok", ret == 0, "results", json_incref(p->results), "qps", json_array());
	unsigned int i;

	for (i = 0; i < p->nqp; i++)
		json_array_append_new(json_object_get(doc, "qps"), json_pack(
				"{s:{s:i, s:i, s:i, s:o}, s:{s:i, s:i, s:i, s:o}}",
				"local", "qpn", p->qp[i].local.qpn, "psn", p->qp[i].local.psn, "rkey",
				p->qp[i].local.rkey, "vaddr", roce_ctl_u64(p->qp[i].local.vaddr),
				"remote", "qpn", p->qp[i].peer.qpn, "psn", p->qp[i].peer.psn, "rkey",
				p->qp[i].peer.rkey, "vaddr", roce_ctl_u64(p->qp[i].peer.vaddr)));
	if (p->oob.peer.version != 0) {
		char v[16];

		snprintf(v, sizeof(v), "%u.%02u", p->oob.peer.version / 100,
				p->oob.peer.version % 100);
		json_object_set_new(doc, "peer_version", json_string(v));
		json_object_set_new(doc, "mtu", json_integer(128 << p->oob.agreed.mtu));
		json_object_set_new(doc, "sr", json_boolean(p->oob.agreed.caps & ROCE_PERF_CAP_SR));
	}
	if (p->verified != NULL)
		json_object_set_new(doc, "verify", json_string(p->verified));
	json_object_set_new(doc, "qp_heap_bytes", json_real(p->qp_bytes));
	if (ret != 0)
		json_object_set_new(doc, "error", json_string(strerror(-ret)));
	json_dumpf(doc, stdout, JSON_COMPACT | JSON_REAL_PRECISION(9));
	putchar('\n');
	json_decref(doc);
}

int
rc_perf(const struct rc_opts *rc, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = perf_sigint }, old;
	/* static: the exchange's result holds a key per possible QP */
	static struct perf p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.rc = rc;
	ret = perf_parse(argc, argv, &p.o);
	if (ret != 0)
		return ret > 0 ? RC_EXIT_OK : RC_EXIT_USAGE;
	p.o.json |= rc->json;
	p.ctl = roce_ctl_client_connect(rc->socket, rc->timeout_ms);
	if (p.ctl == NULL) {
		fprintf(stderr, "rocectl perf: cannot connect to roced: %s\n", strerror(errno));
		return RC_EXIT_CONNECT;
	}
	p.results = json_array();
	perf_interrupted = 0;
	sigaction(SIGINT, &sa, &old);
	sigaction(SIGTERM, &sa, NULL);
	ret = perf_setup(&p);
	if (ret == 0)
		ret = perf_exchange(&p);
	if (ret == 0 && (ret = server_report(&p)) == 0 && p.o.server && p.o.verify && !p.o.lat) {
		ret = verify_check(&p, p.o.all ? PERF_MAX_SIZE : p.o.size);
		if (ret != 0)
			p.verified = "failed";
	}
	if (p.o.verify && p.verified == NULL)
		p.verified = ret == 0 ? (verify_receives(&p) ? "ok" : "sent") : "failed";
	if (!p.o.json && ret == 0)
		printf(PERF_LINE);
	if (!p.o.json && p.o.verify && ret == 0)
		printf(" Data verified: %s\n", p.verified);
	if (p.o.json)
		print_json(&p, ret);
	perf_teardown(&p);
	sigaction(SIGINT, &old, NULL);
	json_decref(p.results);
	free(p.qp);
	roce_ctl_client_close(p.ctl);
	return ret == 0 ? RC_EXIT_OK : RC_EXIT_FAILED;
}
