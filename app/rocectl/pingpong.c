/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocectl pingpong: rdma-core's ibv_rc_pingpong and ibv_ud_pingpong, against them or another
 * rocectl pingpong, in both roles (no HOST: the server). rocectl plays their process: its
 * options, their TCP exchange (pingpong_oob.c) and their output lines; roced holds the MR,
 * the QP (and on UD the address handle), in this connection's own PD, and runs the exchange
 * itself as a job (job.start op=pingpong, lib/dataplane/pingpong.c): a control round trip
 * per message would time the control socket, not the QP. The job keeps the receives posted,
 * posts each SEND once the last one completed and the peer's message arrived, and sends from
 * where it receives, so the server sends back what it got, which their -c (and ours) checks
 * on the client.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "pingpong.h"
#include "rocectl.h"

#define PP_QKEY 0x11111111u	/* ud_pingpong's Q_Key */
#define PP_GRH 40u		/* the GRH area before a UD receive's data */
#define PP_OOB_MS 60000		/* each read of the TCP exchange */
#define PP_STALL_MS 10000	/* --stall-timeout's default */
#define PP_WAIT_US 2000		/* between two job.show while the job runs */
#define PP_MAX_SIZE (1u << 30)
#define PP_MAX_DEPTH 65536u

/* What the command line asks. */
struct pp_opts {
	bool ud;
	const char *host;		/* NULL: the server */
	unsigned int tcp_port;
	unsigned int port;		/* roced's port index */
	uint32_t size;
	unsigned int mtu;		/* RC: the path MTU */
	uint32_t rx_depth;
	uint32_t iters;
	bool chk;
	int stall_ms;			/* 0: never */
	bool json;
};

/* One run: what roced holds for it, and the two addresses. */
struct pp_run {
	const struct pp_opts *o;
	struct roce_ctl_client *ctl;
	struct rc_opts rc;		/* rc_request()'s, without --json */
	uint32_t mr_key;
	uint64_t mr_iova;
	uint32_t qpn;
	uint32_t ahn;
	unsigned int qp_mtu;
	struct rc_pp_dest local;
	struct rc_pp_dest remote;
	uint32_t *page_crc;		/* -c on the client: each page's CRC before the run */
	unsigned int pages;
	json_t *result;			/* --json: the document */
};

static volatile int pp_stop;

static void
pp_sigint(int sig)
{
	(void)sig;
	pp_stop = 1;
}

static void
pp_usage(FILE *f)
{
	fprintf(f,
		"usage: rocectl pingpong [rc|ud] [HOST] [OPTION...]\n"
		"  rdma-core's ibv_rc_pingpong (rc, the default) or ibv_ud_pingpong (ud) on a port of\n"
		"  roced, against them or another rocectl pingpong. No HOST: the server, waiting\n"
		"  for the client; HOST: the client of that server.\n"
		"their options:\n"
		"  -p, --port=PORT        TCP port of the exchange (default 18515)\n"
		"  -i, --ib-port=PORT     roced's port PORT - 1 (default 1: port 0)\n"
		"  -s, --size=SIZE        message size (default 4096 rc, 1024 ud)\n"
		"  -m, --mtu=SIZE         rc: path MTU 256..4096 (default 1024)\n"
		"  -r, --rx-depth=DEPTH   receives kept posted (default 500)\n"
		"  -n, --iters=ITERS      exchanges (default 1000)\n"
		"  -c, --chk              the client checks the data the server sent back\n"
		"  -d, -g, -l, -e, -N, -U are accepted: the device is roced's port, its GID the\n"
		"  port's IPv4 address (always sent), the SL is not carried without a VLAN, the\n"
		"  worker polls (no events); -o, -O, -P (on-demand paging), -t (completion time\n"
		"  stamps) and -j (device memory) are refused as by a device without them.\n"
		"rocedp's options:\n"
		"      --port-index=N     roced's port (as -i N+1)\n"
		"      --stall-timeout=S  give up when nothing moves for S seconds (default 10;\n"
		"                         0: never)\n"
		"      --json             one JSON document instead of their lines\n"
		"Exit status: 0 done (and the data checked), 1 failed, 2 usage, 3 roced not reached.\n");
}

static int
pp_bad(const char *what, const char *val)
{
	fprintf(stderr, "rocectl pingpong: bad %s '%s'\n", what, val);
	return -EINVAL;
}

static int
pp_u32(const char *s, uint32_t *v, uint32_t min, uint32_t max)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || x < min || x > max)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

/* Options without a short one. */
enum { OPT_PORT_INDEX = 256, OPT_STALL, OPT_JSON };

static const struct option pp_longopts[] = {
	{ "port", required_argument, NULL, 'p' }, { "ib-dev", required_argument, NULL, 'd' },
	{ "ib-port", required_argument, NULL, 'i' }, { "size", required_argument, NULL, 's' },
	{ "mtu", required_argument, NULL, 'm' }, { "rx-depth", required_argument, NULL, 'r' },
	{ "iters", required_argument, NULL, 'n' }, { "sl", required_argument, NULL, 'l' },
	{ "events", no_argument, NULL, 'e' }, { "gid-idx", required_argument, NULL, 'g' },
	{ "odp", no_argument, NULL, 'o' }, { "iodp", no_argument, NULL, 'O' },
	{ "prefetch", no_argument, NULL, 'P' }, { "ts", no_argument, NULL, 't' },
	{ "chk", no_argument, NULL, 'c' }, { "dm", no_argument, NULL, 'j' },
	{ "new_send", no_argument, NULL, 'N' },
	{ "allow-cc-unprotected", no_argument, NULL, 'U' },
	{ "port-index", required_argument, NULL, OPT_PORT_INDEX },
	{ "stall-timeout", required_argument, NULL, OPT_STALL },
	{ "json", no_argument, NULL, OPT_JSON }, { "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * The features their tools check for after opening the device, with the words they print
 * when it has none: roced has none of them. @return 1 (said), or 0.
 */
static int
pp_refused(int c)
{
	static const struct {
		int opt;
		const char *msg;
	} refused[] = {
		{ 'o', "The device isn't ODP capable or does not support RC send and receive "
			"with ODP" },
		{ 'O', "The device doesn't support implicit ODP" },
		{ 'P', "prefetch is valid only with on-demand memory region" },
		{ 't', "The device isn't completion timestamp capable" },
		{ 'j', "Device doesn't support dm allocation" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (refused[i].opt == c) {
			fprintf(stderr, "%s\n", refused[i].msg);
			return 1;
		}
	return 0;
}

/* One option. @return 0, 1 (help printed), -EINVAL (usage, said), -ENOTSUP (refused). */
static int
pp_opt(struct pp_opts *o, int c, const char *arg)
{
	uint32_t v;

	switch (c) {
	case 'p':
		if (pp_u32(arg, &v, 1, 65535) < 0)
			return pp_bad("TCP port", arg);
		o->tcp_port = v;
		break;
	case 'i':
		if (pp_u32(arg, &v, 1, 256) < 0)
			return pp_bad("IB port (from 1)", arg);
		o->port = v - 1;
		break;
	case OPT_PORT_INDEX:
		if (pp_u32(arg, &v, 0, 255) < 0)
			return pp_bad("port index", arg);
		o->port = v;
		break;
	case 's':
		if (pp_u32(arg, &o->size, 1, PP_MAX_SIZE) < 0)
			return pp_bad("size", arg);
		break;
	case 'm':
		if (pp_u32(arg, &v, 256, 4096) < 0 || (v & (v - 1)) != 0)
			return pp_bad("MTU (256, 512, 1024, 2048, 4096)", arg);
		o->mtu = v;
		break;
	case 'r':
		if (pp_u32(arg, &o->rx_depth, 1, PP_MAX_DEPTH) < 0)
			return pp_bad("rx depth", arg);
		break;
	case 'n':
		if (pp_u32(arg, &o->iters, 1, INT32_MAX) < 0)
			return pp_bad("iterations", arg);
		break;
	case 'l':
		if (pp_u32(arg, &v, 0, 15) < 0)
			return pp_bad("service level (0-15)", arg);
		break;
	case 'g':
		if (pp_u32(arg, &v, 0, 65535) < 0)
			return pp_bad("GID index", arg);
		break;
	case 'c': o->chk = true; break;
	case 'd': case 'e': case 'N': case 'U': break;
	case OPT_STALL:
		if (pp_u32(arg, &v, 0, 86400) < 0)
			return pp_bad("stall timeout (seconds)", arg);
		o->stall_ms = (int)v * 1000;
		break;
	case OPT_JSON: o->json = true; break;
	case 'h':
		pp_usage(stdout);
		return 1;
	default:
		if (pp_refused(c))
			return -ENOTSUP;
		pp_usage(stderr);
		return -EINVAL;
	}
	return 0;
}

/* @argv: "pingpong" [rc|ud] [HOST] [OPTION...]. @return as pp_opt(). */
static int
pp_getopt(int argc, char **argv, struct pp_opts *o)
{
	int c, ret;

	/* ud_pingpong has no -m and none of rc_pingpong's device features */
	optind = 0;
	opterr = 1;
	while ((c = getopt_long(argc, argv, o->ud ? "p:d:i:s:r:n:l:eg:ch" :
			"p:d:i:s:m:r:n:l:eg:oOPtcjNUh", pp_longopts, NULL)) != -1)
		if ((ret = pp_opt(o, c, optarg)) != 0)
			return ret;
	if (optind < argc)
		o->host = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "rocectl pingpong: unexpected argument '%s'\n", argv[optind]);
		pp_usage(stderr);
		return -EINVAL;
	}
	return 0;
}

static int
pp_parse(int argc, char **argv, struct pp_opts *o)
{
	char **av = calloc((size_t)argc + 1, sizeof(*av));
	int n = 0, i, ret;

	if (av == NULL)
		return -ENOMEM;
	o->tcp_port = RC_PP_TCP_PORT;
	o->mtu = 1024;
	o->rx_depth = 500;
	o->iters = 1000;
	o->stall_ms = PP_STALL_MS;
	o->ud = argc > 1 && strcmp(argv[1], "ud") == 0;
	/* getopt's messages name the command; the transport word is not an argument of it */
	av[n++] = (char *)"rocectl pingpong";
	for (i = argc > 1 && (o->ud || strcmp(argv[1], "rc") == 0) ? 2 : 1; i < argc; i++)
		av[n++] = argv[i];
	ret = pp_getopt(n, av, o);
	free(av);
	if (ret == 0 && o->size == 0)
		o->size = o->ud ? 1024 : 4096;
	return ret;
}

/* ---- requests ---- */

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

/* One request (it steals @args); an error is said. @return the exit code. */
static int
pp_req(struct pp_run *r, const char *cmd, json_t *args, json_t **reply)
{
	json_t *rep = NULL;
	int ret = rc_request(&r->ctl, &r->rc, cmd, args, &rep);

	json_decref(args);
	if (ret == RC_EXIT_OK && reply != NULL)
		*reply = rep;
	else
		json_decref(rep);
	return ret;
}

/* Our GID: the port's IPv4 address as ::ffff:a.b.c.d (RoCE v2). */
static int
pp_local_gid(struct pp_run *r)
{
	const char *ip;
	json_t *rep;
	int ret = pp_req(r, "port.show", json_pack("{s:i}", "port", r->o->port), &rep);

	if (ret != RC_EXIT_OK)
		return ret;
	ip = json_string_value(json_object_get(json_array_get(json_object_get(rep, "ports"), 0),
			"ip"));
	memset(r->local.gid, 0, sizeof(r->local.gid));
	r->local.gid[10] = r->local.gid[11] = 0xff;
	if (ip == NULL || inet_pton(AF_INET, ip, r->local.gid + 12) != 1) {
		fprintf(stderr, "rocectl pingpong: roced's port %u has no IPv4 address\n",
				r->o->port);
		ret = RC_EXIT_FAILED;
	}
	json_decref(rep);
	return ret;
}

/* The MR (their buffer: size, and on UD the GRH area before it), filled as theirs. */
static int
pp_mr(struct pp_run *r)
{
	uint64_t len = (uint64_t)r->o->size + (r->o->ud ? PP_GRH : 0);
	json_t *rep;
	int ret = pp_req(r, "mr.reg", json_pack("{s:I, s:[s]}", "size", (json_int_t)len,
			"access", "local_write"), &rep);

	if (ret != RC_EXIT_OK)
		return ret;
	r->mr_key = (uint32_t)ju64(json_object_get(rep, "mr"), "rkey");
	r->mr_iova = ju64(json_object_get(rep, "mr"), "iova");
	json_decref(rep);
	return pp_req(r, "mr.fill", json_pack("{s:i, s:s}", "rkey", r->mr_key, "pattern",
			"byte:0x7b"), NULL);
}

static int
pp_qp(struct pp_run *r)
{
	json_t *args = json_pack("{s:s, s:i, s:i, s:i}", "type", r->o->ud ? "ud" : "rc", "port",
			r->o->port, "sq_depth", 1, "rq_depth", r->o->rx_depth);
	const json_t *q;
	json_t *rep;
	int ret;

	if (r->o->ud)
		json_object_set_new(args, "qkey", json_integer(PP_QKEY));
	ret = pp_req(r, "qp.create", args, &rep);
	if (ret != RC_EXIT_OK)
		return ret;
	q = json_object_get(rep, "qp");
	r->qpn = (uint32_t)ju64(q, "qpn");
	r->local.qpn = r->qpn;
	r->local.psn = (uint32_t)ju64(q, "psn") & 0xffffff;
	r->qp_mtu = (unsigned int)ju64(q, "mtu");
	json_decref(rep);
	/* their check, before anything is printed */
	if (r->o->ud && r->o->size > r->qp_mtu) {
		fprintf(stderr, "Requested size larger than port MTU (%u)\n", r->qp_mtu);
		return RC_EXIT_FAILED;
	}
	return RC_EXIT_OK;
}

/* The peer's GID as the address roced wants: a.b.c.d when IPv4-mapped. */
static int
pp_remote_ip(const struct rc_pp_dest *d, char *buf, size_t len)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t zero[16];

	if (memcmp(d->gid, zero, sizeof(zero)) == 0) {
		fprintf(stderr, "rocectl pingpong: the peer sent no GID: on RoCE it needs -g, the "
				"index of its RoCE v2 GID\n");
		return -EDESTADDRREQ;
	}
	if (memcmp(d->gid, mapped, sizeof(mapped)) == 0)
		inet_ntop(AF_INET, d->gid + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, d->gid, buf, (socklen_t)len);
	return 0;
}

/*
 * Make the QP ready for the peer and start the job: RC connects (their pp_connect_ctx()
 * attributes), UD makes the address handle; the job posts the receives, and the client's
 * its first SEND. @return the exit code.
 */
static int
pp_start(struct pp_run *r)
{
	char ip[INET6_ADDRSTRLEN];
	json_t *rep, *job;
	int ret;

	if (pp_remote_ip(&r->remote, ip, sizeof(ip)) != 0)
		return RC_EXIT_FAILED;
	if (r->o->ud) {
		ret = pp_req(r, "ah.create", json_pack("{s:s, s:i}", "ip", ip, "port",
				r->o->port), &rep);
		if (ret != RC_EXIT_OK)
			return ret;
		r->ahn = (uint32_t)ju64(json_object_get(rep, "ah"), "ah");
		json_decref(rep);
	} else {
		ret = pp_req(r, "qp.connect", json_pack("{s:i, s:{s:i, s:i, s:s}, s:i, s:i, s:i, "
				"s:i, s:i, s:i, s:i}", "qpn", r->qpn, "remote", "qpn",
				r->remote.qpn, "psn", r->remote.psn, "ip", ip, "mtu", r->o->mtu,
				"timeout", 14, "retry_cnt", 7, "rnr_retry", 7, "min_rnr_timer", 12,
				"max_rd_atomic", 1, "max_dest_rd_atomic", 1), NULL);
		if (ret != RC_EXIT_OK)
			return ret;
	}
	job = json_pack("{s:i, s:s, s:i, s:i, s:i, s:i, s:i, s:b}", "qpn", r->qpn, "op",
			"pingpong", "lkey", r->mr_key, "offset", r->o->ud ? PP_GRH : 0,
			"length", r->o->size, "count", r->o->iters, "depth", r->o->rx_depth,
			"initiator", r->o->host != NULL);
	if (r->o->ud) {
		json_object_set_new(job, "ah", json_integer(r->ahn));
		json_object_set_new(job, "remote", json_pack("{s:i, s:I}", "qpn", r->remote.qpn,
				"qkey", (json_int_t)PP_QKEY));
	}
	return pp_req(r, "job.start", job, NULL);
}

/* The server, between the client's address and its answer: as theirs, ready first. */
static int
pp_server_ready(void *arg, const struct rc_pp_dest *remote)
{
	struct pp_run *r = arg;

	(void)remote;
	return pp_start(r) == RC_EXIT_OK ? 0 : -EIO;
}

/* ---- the data check (-c) ---- */

/* CRC-32 of the message's bytes in page @i. */
static int
pp_page_crc(struct pp_run *r, unsigned int i, uint32_t *crc)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), off = i * page;
	uint64_t len = r->o->size - off < page ? r->o->size - off : page;
	const char *hex;
	json_t *rep;
	int ret = pp_req(r, "mr.digest", json_pack("{s:i, s:I, s:I}", "rkey", r->mr_key,
			"offset", (json_int_t)(off + (r->o->ud ? PP_GRH : 0)), "length",
			(json_int_t)len), &rep);

	if (ret != RC_EXIT_OK)
		return ret;
	hex = json_string_value(json_object_get(rep, "crc32"));
	*crc = hex != NULL ? (uint32_t)strtoul(hex, NULL, 16) : 0;
	json_decref(rep);
	return hex != NULL ? RC_EXIT_OK : RC_EXIT_CONNECT;
}

/* Before the client's run: the message made of a pattern of this run, each page's CRC kept. */
static int
pp_chk_prepare(struct pp_run *r)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	char pat[32];
	unsigned int i;
	int ret;

	snprintf(pat, sizeof(pat), "random:%u", (unsigned int)(time(NULL) ^ getpid()) | 1);
	ret = pp_req(r, "mr.fill", json_pack("{s:i, s:s, s:i, s:i}", "rkey", r->mr_key,
			"pattern", pat, "offset", r->o->ud ? PP_GRH : 0, "length", r->o->size),
			NULL);
	r->pages = (unsigned int)((r->o->size + page - 1) / page);
	r->page_crc = calloc(r->pages, sizeof(*r->page_crc));
	if (r->page_crc == NULL)
		return RC_EXIT_FAILED;
	for (i = 0; ret == RC_EXIT_OK && i < r->pages; i++)
		ret = pp_page_crc(r, i, &r->page_crc[i]);
	return ret;
}

/* After it: what came back must be what went, page by page (their "invalid data in page"). */
static int
pp_chk(struct pp_run *r, json_t *bad)
{
	unsigned int i;
	uint32_t crc;
	int ret;

	for (i = 0; i < r->pages; i++) {
		ret = pp_page_crc(r, i, &crc);
		if (ret != RC_EXIT_OK)
			return ret;
		if (crc == r->page_crc[i])
			continue;
		json_array_append_new(bad, json_integer(i));
		if (!r->o->json)
			printf("invalid data in page %u\n", i);
	}
	return json_array_size(bad) == 0 ? RC_EXIT_OK : RC_EXIT_FAILED;
}

/* ---- the run ---- */

static void
print_dest(const struct pp_run *r, const char *what, const struct rc_pp_dest *d, bool local)
{
	char gid[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, d->gid, gid, sizeof(gid));
	if (r->o->json) {
		json_object_set_new(r->result, what, json_pack("{s:i, s:i, s:i, s:s}", "lid",
				d->lid, "qpn", d->qpn, "psn", d->psn, "gid", gid));
		return;
	}
	/* their lines; ud_pingpong's local one has a colon before the GID */
	if (local)
		printf("  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %s\n", d->lid,
				d->qpn, d->psn, r->o->ud ? ":" : ",", gid);
	else
		printf("  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", d->lid,
				d->qpn, d->psn, gid);
	fflush(stdout);
}

static void
sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for the job; *job gets its last job.show. @return the exit code. */
static int
pp_wait(struct pp_run *r, json_t **job)
{
	uint64_t moved = 0, m;
	int64_t since = now_ms();
	json_t *rep;
	int ret;

	*job = NULL;
	for (;;) {
		ret = pp_req(r, "job.show", json_pack("{s:i}", "qpn", r->qpn), &rep);
		if (ret != RC_EXIT_OK)
			return ret;
		json_decref(*job);
		*job = json_incref(json_object_get(rep, "job"));
		json_decref(rep);
		if (!json_is_true(json_object_get(*job, "running")))
			return RC_EXIT_OK;
		m = ju64(*job, "completed") + ju64(*job, "received");
		if (m != moved) {
			moved = m;
			since = now_ms();
		}
		if (pp_stop || (r->o->stall_ms != 0 && now_ms() - since > r->o->stall_ms)) {
			fprintf(stderr, "rocectl pingpong: %s after %" PRIu64 " sends and %" PRIu64
					" receives\n", pp_stop ? "interrupted" : "nothing moved for "
					"--stall-timeout", ju64(*job, "completed"),
					ju64(*job, "received"));
			pp_req(r, "job.stop", json_pack("{s:i}", "qpn", r->qpn), NULL);
			return RC_EXIT_FAILED;
		}
		sleep_us(PP_WAIT_US);
	}
}

/* Their two result lines, from the job's time. */
static void
pp_report(struct pp_run *r, const json_t *job)
{
	/* their float microseconds */
	float usec = (float)(json_number_value(json_object_get(job, "seconds")) * 1e6);
	long long bytes = (long long)r->o->size * r->o->iters * 2;

	if (r->o->json) {
		json_object_set_new(r->result, "bytes", json_integer(bytes));
		json_object_set_new(r->result, "iters", json_integer(r->o->iters));
		json_object_set_new(r->result, "seconds", json_real(usec / 1e6));
		json_object_set_new(r->result, "mbit_per_sec", json_real(bytes * 8. / usec));
		json_object_set_new(r->result, "usec_per_iter", json_real(usec / r->o->iters));
		return;
	}
	printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec / 1000000.,
			bytes * 8. / usec);
	printf("%u iters in %.2f seconds = %.2f usec/iter\n", r->o->iters, usec / 1000000.,
			usec / r->o->iters);
}

/* The job ended: its errors, their lines, the data check. @return the exit code. */
static int
pp_finish(struct pp_run *r, const json_t *job)
{
	const char *err = json_string_value(json_object_get(job, "first_error"));
	json_t *bad;
	int ret;

	if (ju64(job, "errors") != 0) {
		fprintf(stderr, "Failed status %s after %" PRIu64 " sends and %" PRIu64
				" receives\n", err != NULL ? err : "?", ju64(job, "completed"),
				ju64(job, "received"));
		return RC_EXIT_FAILED;
	}
	if (ju64(job, "completed") < r->o->iters || ju64(job, "received") < r->o->iters) {
		fprintf(stderr, "rocectl pingpong: the job stopped after %" PRIu64 " sends and %"
				PRIu64 " receives\n", ju64(job, "completed"), ju64(job, "received"));
		return RC_EXIT_FAILED;
	}
	pp_report(r, job);
	if (r->o->host == NULL || !r->o->chk)
		return RC_EXIT_OK;
	bad = json_array();
	ret = pp_chk(r, bad);
	if (r->o->json) {
		json_object_set_new(r->result, "check", json_string(ret == RC_EXIT_OK ? "ok" :
				"failed"));
		json_object_set_new(r->result, "invalid_pages", bad);
	} else {
		json_decref(bad);
	}
	return ret;
}

/* Everything this run made goes, as their pp_close_ctx(). @return the exit code. */
static int
pp_teardown(struct pp_run *r)
{
	int ret = RC_EXIT_OK;

	if (r->qpn != 0 && pp_req(r, "qp.destroy", json_pack("{s:i}", "qpn", r->qpn), NULL) !=
			RC_EXIT_OK)
		ret = RC_EXIT_FAILED;
	if (r->ahn != 0 && pp_req(r, "ah.destroy", json_pack("{s:i}", "ah", r->ahn), NULL) !=
			RC_EXIT_OK)
		ret = RC_EXIT_FAILED;
	if (r->mr_key != 0 && pp_req(r, "mr.dereg", json_pack("{s:i}", "rkey", r->mr_key),
			NULL) != RC_EXIT_OK)
		ret = RC_EXIT_FAILED;
	return ret;
}

static int
pp_run(struct pp_run *r)
{
	const struct pp_opts *o = r->o;
	json_t *job = NULL;
	int ret;

	if ((ret = pp_local_gid(r)) != RC_EXIT_OK || (ret = pp_mr(r)) != RC_EXIT_OK ||
			(ret = pp_qp(r)) != RC_EXIT_OK)
		return ret;
	print_dest(r, "local", &r->local, true);
	if (o->host != NULL) {
		if (rc_pp_client_exchange(o->host, o->tcp_port, &r->local, &r->remote, PP_OOB_MS,
				&pp_stop) != 0)
			return RC_EXIT_FAILED;
	} else {
		ret = rc_pp_server_exchange(o->tcp_port, &r->local, &r->remote, pp_server_ready, r,
				PP_OOB_MS, &pp_stop);
		if (ret != 0) {
			if (ret == -EINTR)
				fprintf(stderr, "rocectl pingpong: interrupted\n");
			return RC_EXIT_FAILED;
		}
	}
	print_dest(r, "remote", &r->remote, false);
	if (o->host != NULL && ((o->chk && (ret = pp_chk_prepare(r)) != RC_EXIT_OK) ||
			(ret = pp_start(r)) != RC_EXIT_OK))
		return ret;
	ret = pp_wait(r, &job);
	if (ret == RC_EXIT_OK)
		ret = pp_finish(r, job);
	json_decref(job);
	return ret;
}

int
rc_pingpong(const struct rc_opts *rc, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = pp_sigint }, old_int, old_term;
	struct pp_opts o = { 0 };
	struct pp_run r = { .o = &o, .rc = *rc };
	int ret, ret2;

	ret = pp_parse(argc, argv, &o);
	if (ret != 0)
		return ret > 0 ? RC_EXIT_OK : ret == -ENOTSUP || ret == -ENOMEM ? RC_EXIT_FAILED :
			RC_EXIT_USAGE;
	o.json |= rc->json;
	r.rc.json = false;
	r.rc.watch = 0;
	r.result = json_pack("{s:s, s:s}", "transport", o.ud ? "ud" : "rc", "role",
			o.host != NULL ? "client" : "server");
	pp_stop = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	ret = pp_run(&r);
	ret2 = r.ctl != NULL ? pp_teardown(&r) : RC_EXIT_OK;
	if (ret == RC_EXIT_OK && ret2 != RC_EXIT_OK) {
		fprintf(stderr, "rocectl pingpong: Couldn't release what roced holds for the run\n");
		ret = ret2;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (o.json) {
		json_object_set_new(r.result, "ok", json_boolean(ret == RC_EXIT_OK));
		json_dumpf(r.result, stdout, JSON_COMPACT | JSON_REAL_PRECISION(9));
		putchar('\n');
	}
	json_decref(r.result);
	free(r.page_crc);
	roce_ctl_client_close(r.ctl);
	return ret;
}

void
rc_pingpong_usage(FILE *f)
{
	pp_usage(f);
}
