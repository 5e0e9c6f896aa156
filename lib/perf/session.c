/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The perftest session driver: setup (limits, port, MR, QPs and their keys), the out-of-band
 * exchange with its hooks (the parameters agreed with another rocectl perf, connect, receives
 * before a size's barrier, traffic, the peer's report), the jobs and their polling (live
 * lines, an aggregate peak, a stall timeout, interrupts, --run_infinitely's intervals), the
 * passive server's report, teardown. The daemon is behind struct roce_perf_backend_ops.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "perf_private.h"
#include "roce_perf_session.h"

#define PERF_PAGE 4096u
#define PERF_BIG_PAGE 65536u
#define PERF_POLL_MS 100
/* The aggregate peak: the best window of at least this long between two polls. */
#define PERF_PEAK_WINDOW_S 0.09
/* Jobs told to stop finish their outstanding work within this long, or are left. */
#define PERF_STOP_WAIT_S 3.0
/* Selective repeat: a software peer on a busy host can take a millisecond to answer. */
#define PERF_SR_RTO_US 2000

/* What a daemon that reports no limits allows: roced's before it said so. */
static const struct roce_perf_daemon daemon_defaults = {
	.max_qps = ROCE_PERF_OOB_MAX_QPS,
	.max_qp_depth = 16384,
	.max_mr_size = UINT64_C(1) << 32,
	.max_rd_atomic = 128,
	.max_inflight = 65536,
	.mr_read_max = 4096,
};

/* perftest's test of each verb, bandwidth and latency (atomic_lat talks as read_lat does). */
static const enum roce_perf_test verb_tests[ROCE_PERF_VERB_MAX][2] = {
	[ROCE_PERF_VERB_WRITE] = { ROCE_PERF_WRITE_BW, ROCE_PERF_WRITE_LAT },
	[ROCE_PERF_VERB_READ] = { ROCE_PERF_READ_BW, ROCE_PERF_READ_LAT },
	[ROCE_PERF_VERB_SEND] = { ROCE_PERF_SEND_BW, ROCE_PERF_SEND_LAT },
	[ROCE_PERF_VERB_ATOMIC] = { ROCE_PERF_ATOMIC_BW, ROCE_PERF_READ_LAT },
};

/* The job each verb runs (atomics: fetch-and-add unless o.cas), and what the peer may do to
 * our QPs and MR, as perftest grants. */
static const struct {
	enum roce_perf_job_op op;
	unsigned int rights;
} verb_info[ROCE_PERF_VERB_MAX] = {
	[ROCE_PERF_VERB_WRITE] = { ROCE_PERF_JOB_WRITE, ROCE_PERF_ACC_REMOTE_WRITE },
	[ROCE_PERF_VERB_READ] = { ROCE_PERF_JOB_READ, ROCE_PERF_ACC_REMOTE_READ },
	[ROCE_PERF_VERB_SEND] = { ROCE_PERF_JOB_SEND, 0 },
	[ROCE_PERF_VERB_ATOMIC] = { ROCE_PERF_JOB_FAA, ROCE_PERF_ACC_REMOTE_ATOMIC },
};

void
perf_sess_err(const struct roce_perf_session *s, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (s->ev.error != NULL)
		s->ev.error(s->ev.arg, msg);
	else
		ROCE_PERF_LOG("%s", msg);
}

void
perf_sess_note(const struct roce_perf_session *s, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (s->ev.note != NULL)
		s->ev.note(s->ev.arg, msg);
	else
		ROCE_PERF_LOG("%s", msg);
}

enum roce_perf_test
roce_perf_session_test(const struct roce_perf_session *s)
{
	return verb_tests[s->o.verb][s->o.lat];
}

const char *
roce_perf_unit_name(bool gbits)
{
	return gbits ? "Gb/sec" : "MB/sec";
}

static double
unit_div(const struct roce_perf_session *s)
{
	/* perftest: MB/sec is 2^20 bytes, Gb/sec 10^9 bits. */
	return s->o.gbits ? 125e6 : 1048576.0;
}

static bool
is_ud(const struct roce_perf_session *s)
{
	return s->o.conn == ROCE_PERF_CONN_UD;
}

/* The sizes of a -a sweep: 2 B .. 8 MiB; UD: 2 B .. the agreed MTU (4096 until agreed). */
static unsigned int
sweep_sizes(const struct roce_perf_session *s)
{
	if (s->nb_sizes != 0)
		return s->nb_sizes;
	return is_ud(s) ? 12 : ROCE_PERF_NB_SIZES;
}

uint64_t
perf_sess_max_size(const struct roce_perf_session *s)
{
	return s->o.all ? UINT64_C(1) << sweep_sizes(s) : s->o.size;
}

uint64_t
perf_sess_local_off(const struct roce_perf_session *s, unsigned int i)
{
	return i * s->slot;
}

static uint64_t
nb_sizes(const struct roce_perf_session *s)
{
	return s->o.all ? sweep_sizes(s) : 1;
}

/* perftest's bw servers (and the read_lat one) only wait for the client; with -b both send. */
static bool
passive(const struct roce_perf_session *s)
{
	return s->o.server && !s->o.duplex && (!s->o.lat || s->o.verb == ROCE_PERF_VERB_READ ||
			s->o.verb == ROCE_PERF_VERB_ATOMIC);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
infinite_interval(const struct roce_perf_session *s)
{
	return s->o.duration > 0 ? s->o.duration : ROCE_PERF_INFINITE_INTERVAL;
}

static bool
peer_is_rocedp(const struct roce_perf_session *s)
{
	return (s->oob.agreed.caps & ROCE_PERF_CAP_PARAMS) != 0;
}

/* ---- setup: limits, port, MR, QPs, local keys ---- */

/* The daemon's limits, and whether the options fit them. */
static int
setup_limits(struct roce_perf_session *s)
{
	const struct roce_perf_daemon *d = &s->daemon;
	int ret;

	s->daemon = daemon_defaults;
	if ((ret = s->ops->status(s->ctx, &s->daemon)) != 0)
		return ret;
	if (d->ports != 0 && s->o.port >= d->ports) {
		perf_sess_err(s, "port index %u: the daemon has %u port%s", s->o.port, d->ports,
				d->ports == 1 ? "" : "s");
		return -EINVAL;
	}
	if (s->o.qps > d->max_qps) {
		perf_sess_err(s, "%u QPs: the daemon holds at most %u", s->o.qps, d->max_qps);
		return -E2BIG;
	}
	if (s->o.tx_depth > d->max_qp_depth) {
		perf_sess_err(s, "tx depth %u: the daemon's queues hold at most %u",
				s->o.tx_depth, d->max_qp_depth);
		return -E2BIG;
	}
	if (s->o.inflight > d->max_inflight) {
		perf_sess_err(s, "%u packets in flight: the daemon allows at most %u",
				s->o.inflight, d->max_inflight);
		return -E2BIG;
	}
	return 0;
}

/* Our port's IPv4 address (the GID) and the IB MTU its IP MTU allows. */
static int
setup_port(struct roce_perf_session *s)
{
	struct roce_perf_port pi;
	unsigned int mtu;
	int ret;

	memset(&pi, 0, sizeof(pi));
	if ((ret = s->ops->port_info(s->ctx, s->o.port, &pi)) != 0)
		return ret;
	if (pi.ip[0] == '\0' || inet_pton(AF_INET, pi.ip, s->gid + 12) != 1) {
		perf_sess_err(s, "port %u has no IPv4 address", s->o.port);
		return -EADDRNOTAVAIL;
	}
	snprintf(s->ip, sizeof(s->ip), "%s", pi.ip);
	snprintf(s->device, sizeof(s->device), "%s", pi.device);
	s->prefix = pi.prefix;
	memset(s->gid, 0, 10);
	s->gid[10] = s->gid[11] = 0xff;
	/* IP + UDP + BTH + RETH + ICRC = 20 + 8 + 12 + 16 + 4: the largest IB MTU that fits. */
	for (mtu = 4096; mtu > 256 && mtu + 60 > pi.ip_mtu; mtu /= 2)
		;
	if (s->o.mtu != 0 && s->o.mtu > mtu) {
		perf_sess_err(s, "MTU %u does not fit port %u's IP MTU %u", s->o.mtu, s->o.port,
				pi.ip_mtu);
		return -EINVAL;
	}
	if (s->o.mtu != 0)
		mtu = s->o.mtu;
	s->mtu_enum = (uint8_t)(__builtin_ctz(mtu) - 7);
	return 0;
}

/* Bytes per QP: our half, then the peer's. */
static uint64_t
slot_bytes(const struct roce_perf_session *s)
{
	uint64_t max = perf_sess_max_size(s);

	/* perftest walks small messages through a buffer of the agreed page size: give each
	 * QP's half 64 KiB (the largest page of Linux hosts) unless there are very many QPs. */
	if (max < PERF_BIG_PAGE && s->o.qps <= 256)
		max = PERF_BIG_PAGE;
	return 2 * ((max + PERF_PAGE - 1) / PERF_PAGE * PERF_PAGE);
}

static int
setup_mr(struct roce_perf_session *s)
{
	uint64_t size;
	int ret;

	s->slot = slot_bytes(s);
	/* --verify: one more slot, scratch for the pattern the data is compared with */
	size = s->slot * (s->o.qps + s->o.verify);
	if (size > s->daemon.max_mr_size) {
		perf_sess_err(s, "%u QPs of %" PRIu64 " bytes need an MR of %" PRIu64 " bytes, "
				"the daemon's largest is %" PRIu64 ": use fewer QPs or smaller "
				"messages", s->o.qps, s->slot, size, s->daemon.max_mr_size);
		return -E2BIG;
	}
	ret = s->ops->mr_create(s->ctx, size, ROCE_PERF_ACC_LOCAL_WRITE |
			verb_info[s->o.verb].rights, &s->mr);
	s->have_mr = ret == 0;
	return ret;
}

static unsigned int
out_reads(const struct roce_perf_session *s)
{
	return s->daemon.max_rd_atomic < ROCE_PERF_OUT_READS ? s->daemon.max_rd_atomic :
		ROCE_PERF_OUT_READS;
}

static int
setup_qp(struct roce_perf_session *s, unsigned int i)
{
	struct roce_perf_qp_conf conf = {
		.port = s->o.port,
		.sq_depth = s->o.tx_depth,
		.rq_depth = s->o.tx_depth < 128 ? 128 : s->o.tx_depth,
		.access = is_ud(s) ? 0 : verb_info[s->o.verb].rights,
		.ud = is_ud(s),
		.qkey = is_ud(s) ? ROCE_PERF_UD_QKEY : 0,
		.mtu = is_ud(s) ? s->o.mtu : 0,
	};
	struct roce_perf_key *k = &s->qp[i].local;
	uint32_t psn;
	int ret;

	/* UD drops what finds no receive: as perftest, receives for a whole run of
	 * iterations (up to UC_MAX_RX), 512 for a timed one */
	if (is_ud(s)) {
		uint64_t rx = s->o.duration > 0 || s->o.infinite ? 512 : s->o.iters * nb_sizes(s);

		rx = rx < ROCE_PERF_UD_MAX_RX ? rx : ROCE_PERF_UD_MAX_RX;
		if (rx > conf.rq_depth)
			conf.rq_depth = (unsigned int)rx;
	}
	if (conf.rq_depth > s->daemon.max_qp_depth)
		conf.rq_depth = s->daemon.max_qp_depth;
	s->rq_depth = conf.rq_depth;
	if ((ret = s->ops->qp_create(s->ctx, &conf, &s->qp[i].qpn, &psn)) != 0)
		return ret;
	s->nqp++;
	k->out_reads = s->o.verb == ROCE_PERF_VERB_READ || s->o.verb == ROCE_PERF_VERB_ATOMIC ?
		out_reads(s) : 1;
	k->qpn = s->qp[i].qpn;
	k->psn = psn;
	k->rkey = s->o.verb == ROCE_PERF_VERB_SEND ? 0 : s->mr.key;
	/* The peer's half of our slot: what it writes, reads or adds to. */
	k->vaddr = s->mr.iova + perf_sess_local_off(s, i) + s->slot / 2;
	memcpy(k->gid, s->gid, 16);
	return 0;
}

static int
heap_bytes(struct roce_perf_session *s, uint64_t *bytes)
{
	struct roce_perf_daemon d = s->daemon;
	int ret = s->ops->status(s->ctx, &d);

	*bytes = d.heap_bytes;
	return ret;
}

static int
setup(struct roce_perf_session *s)
{
	struct roce_perf_key *keys;
	uint64_t heap0, heap1;
	unsigned int i;
	int ret;

	if ((ret = setup_limits(s)) != 0 || (ret = setup_port(s)) != 0 ||
			(ret = setup_mr(s)) != 0 || (ret = heap_bytes(s, &heap0)) != 0)
		return ret;
	for (i = 0; i < s->o.qps; i++)
		if ((ret = setup_qp(s, i)) != 0)
			return ret;
	if ((ret = heap_bytes(s, &heap1)) != 0)
		return ret;
	s->qp_bytes = ((double)heap1 - (double)heap0) / s->nqp;
	keys = realloc(s->keys, s->nqp * sizeof(*keys));
	if (keys == NULL)
		return -ENOMEM;
	s->keys = keys;
	for (i = 0; i < s->nqp; i++)
		keys[i] = s->qp[i].local;
	return 0;
}

void
roce_perf_session_teardown(struct roce_perf_session *s)
{
	unsigned int i;

	perf_sess_rcm_teardown(s);
	for (i = 0; i < s->nqp; i++) {
		s->ops->qp_destroy(s->ctx, s->qp[i].qpn);
		if (s->qp[i].ah != 0)
			s->ops->ah_destroy(s->ctx, s->qp[i].ah);
		s->qp[i].ah = 0;
	}
	s->nqp = 0;
	if (s->have_mr && s->ops->mr_destroy(s->ctx, s->mr.key) != 0)
		perf_sess_err(s, "could not deregister MR 0x%x", s->mr.key);
	s->have_mr = false;
}

/* The QPs and MR again, for parameters adopted from the peer (more QPs, larger messages). */
static int
resetup(struct roce_perf_session *s)
{
	struct roce_perf_qp *qp;

	roce_perf_session_teardown(s);
	qp = calloc(s->o.qps, sizeof(*qp));
	if (qp == NULL)
		return -ENOMEM;
	free(s->qp);
	s->qp = qp;
	return setup(s);
}

/* ---- the parameters two rocectl perf agree on ---- */

static void
params_of(const struct roce_perf_session *s, struct roce_perf_params *p)
{
	memset(p, 0, sizeof(*p));
	p->test = (uint32_t)roce_perf_session_test(s);
	p->flags = (s->o.given & (ROCE_PERF_PAR_SET_SIZE | ROCE_PERF_PAR_SET_ITERS |
			ROCE_PERF_PAR_SET_DURATION | ROCE_PERF_PAR_SET_QPS |
			ROCE_PERF_PAR_SET_ATOMIC)) |
		(s->o.duplex ? ROCE_PERF_PAR_DUPLEX : 0) | (s->o.all ? ROCE_PERF_PAR_ALL : 0) |
		(s->o.infinite ? ROCE_PERF_PAR_INFINITE : 0) | (s->o.cas ? ROCE_PERF_PAR_CAS : 0) |
		(s->o.lat && s->o.verb == ROCE_PERF_VERB_ATOMIC ? ROCE_PERF_PAR_ATOMIC_LAT : 0);
	p->size = s->o.all ? ROCE_PERF_MAX_SIZE : s->o.size;
	p->iters = s->o.duration > 0 ? 0 : s->o.iters;
	p->duration_ms = (uint32_t)(s->o.duration * 1000);
	p->qps = s->o.qps;
	p->conn = s->o.conn;
}

static const char *
test_str(const struct roce_perf_params *p)
{
	return p->flags & ROCE_PERF_PAR_ATOMIC_LAT ? "atomic_lat" :
		roce_perf_test_name((enum roce_perf_test)p->test);
}

static void
size_str(const struct roce_perf_params *p, char *b, size_t n)
{
	if (p->flags & ROCE_PERF_PAR_ALL)
		snprintf(b, n, "-a");
	else
		snprintf(b, n, "-s %" PRIu64, p->size);
}

static void
length_str(const struct roce_perf_params *p, char *b, size_t n)
{
	if (p->duration_ms != 0)
		snprintf(b, n, "-D %g", p->duration_ms / 1e3);
	else
		snprintf(b, n, "-n %" PRIu64, p->iters);
}

static void
qps_str(const struct roce_perf_params *p, char *b, size_t n)
{
	snprintf(b, n, "-q %u", p->qps);
}

static void
atomic_str(const struct roce_perf_params *p, char *b, size_t n)
{
	snprintf(b, n, "-A %s", p->flags & ROCE_PERF_PAR_CAS ? "CMP_AND_SWAP" : "FETCH_AND_ADD");
}

/* One agreed value: equal, or given on one side only (the other adopts it). */
struct agree_field {
	const char *what;	/* for the refusal */
	unsigned int set;	/* ROCE_PERF_PAR_SET_* */
	bool (*same)(const struct roce_perf_params *a, const struct roce_perf_params *b);
	void (*str)(const struct roce_perf_params *p, char *b, size_t n);
	void (*adopt)(struct roce_perf_session *s, const struct roce_perf_params *p);
};

static bool
same_size(const struct roce_perf_params *a, const struct roce_perf_params *b)
{
	return (a->flags & ROCE_PERF_PAR_ALL) == (b->flags & ROCE_PERF_PAR_ALL) &&
		((a->flags & ROCE_PERF_PAR_ALL) || a->size == b->size);
}

static void
adopt_size(struct roce_perf_session *s, const struct roce_perf_params *p)
{
	s->o.all = (p->flags & ROCE_PERF_PAR_ALL) != 0;
	if (!s->o.all)
		s->o.size = p->size;
}

static bool
same_length(const struct roce_perf_params *a, const struct roce_perf_params *b)
{
	return a->duration_ms == b->duration_ms && (a->duration_ms != 0 || a->iters == b->iters);
}

static void
adopt_length(struct roce_perf_session *s, const struct roce_perf_params *p)
{
	s->o.duration = p->duration_ms / 1e3;
	if (p->duration_ms == 0)
		s->o.iters = p->iters;
}

static bool
same_qps(const struct roce_perf_params *a, const struct roce_perf_params *b)
{
	return a->qps == b->qps;
}

static void
adopt_qps(struct roce_perf_session *s, const struct roce_perf_params *p)
{
	s->o.qps = p->qps;
}

static bool
same_atomic(const struct roce_perf_params *a, const struct roce_perf_params *b)
{
	return (a->flags & ROCE_PERF_PAR_CAS) == (b->flags & ROCE_PERF_PAR_CAS);
}

static void
adopt_atomic(struct roce_perf_session *s, const struct roce_perf_params *p)
{
	s->o.cas = (p->flags & ROCE_PERF_PAR_CAS) != 0;
}

static const struct agree_field agree_fields[] = {
	{ "message size (-s, or -a)", ROCE_PERF_PAR_SET_SIZE, same_size, size_str, adopt_size },
	{ "length (-n or -D)", ROCE_PERF_PAR_SET_DURATION | ROCE_PERF_PAR_SET_ITERS,
		same_length, length_str, adopt_length },
	{ "number of QPs (-q)", ROCE_PERF_PAR_SET_QPS, same_qps, qps_str, adopt_qps },
	{ "atomic type (-A)", ROCE_PERF_PAR_SET_ATOMIC, same_atomic, atomic_str, adopt_atomic },
};

/* A flag both sides must give, or neither. */
static int
agree_flag(const struct roce_perf_session *s, const struct roce_perf_params *mine,
		const struct roce_perf_params *peer, unsigned int flag, const char *opt)
{
	if (((mine->flags ^ peer->flags) & flag) == 0)
		return 0;
	perf_sess_err(s, "the peer runs %s %s, this side %s: give %s to both sides or neither",
			peer->flags & flag ? "with" : "without", opt,
			mine->flags & flag ? "with it" : "without", opt);
	return -ECANCELED;
}

/*
 * Two rocectl perf: the same test and flags; each value equal, or given on one side only
 * (the other side adopts it). Both sides decide alike from the same two messages, so both
 * refuse a mismatch, at once.
 */
static int
agree_params(struct roce_perf_session *s, const struct roce_perf_params *peer)
{
	struct roce_perf_params mine, theirs = *peer;
	char a[48], b[48];
	unsigned int i;
	int ret;

	params_of(s, &mine);
	peer = &theirs;
	if (mine.test != peer->test || ((mine.flags ^ peer->flags) & ROCE_PERF_PAR_ATOMIC_LAT)) {
		perf_sess_err(s, "the peer runs %s, this side %s: give both sides the same test",
				test_str(peer), test_str(&mine));
		return -ECANCELED;
	}
	if (mine.conn != peer->conn) {
		perf_sess_err(s, "the peer runs -c %s, this side -c %s: give both sides the same "
				"connection type", peer->conn == ROCE_PERF_CONN_UD ? "UD" : "RC",
				mine.conn == ROCE_PERF_CONN_UD ? "UD" : "RC");
		return -ECANCELED;
	}
	/* A half-duplex bw server only waits, whether the client stops or not: it follows a
	 * client's --run_infinitely, and the client takes it as given. */
	if (!s->o.lat && !s->o.duplex && ((mine.flags ^ peer->flags) & ROCE_PERF_PAR_INFINITE)) {
		if (passive(s)) {
			s->o.infinite = (peer->flags & ROCE_PERF_PAR_INFINITE) != 0;
			if (s->o.infinite) {
				perf_sess_note(s, "the peer runs --run_infinitely: waiting until "
						"it stops");
				s->o.duration = 0;
			}
			mine.flags ^= ROCE_PERF_PAR_INFINITE;
		} else if (!s->o.server) {
			theirs.flags ^= ROCE_PERF_PAR_INFINITE;
		}
	}
	if ((ret = agree_flag(s, &mine, peer, ROCE_PERF_PAR_DUPLEX, "-b")) != 0 ||
			(ret = agree_flag(s, &mine, peer, ROCE_PERF_PAR_INFINITE,
				"--run_infinitely")) != 0)
		return ret;
	for (i = 0; i < sizeof(agree_fields) / sizeof(agree_fields[0]); i++) {
		const struct agree_field *f = &agree_fields[i];
		bool mine_set = (mine.flags & f->set) != 0, peer_set = (peer->flags & f->set) != 0;

		/* -D is --run_infinitely's print interval: each side its own */
		if (f->adopt == adopt_length && s->o.infinite)
			continue;
		if (f->adopt == adopt_atomic && s->o.verb != ROCE_PERF_VERB_ATOMIC)
			continue;
		if (f->same(&mine, peer))
			continue;
		if (peer_set && !mine_set) {
			f->str(peer, a, sizeof(a));
			perf_sess_note(s, "taking the peer's %s (not given here)", a);
			f->adopt(s, peer);
			s->o.given |= peer->flags & f->set;
			continue;
		}
		if (mine_set && !peer_set)
			continue;
		f->str(peer, a, sizeof(a));
		f->str(&mine, b, sizeof(b));
		perf_sess_err(s, "the peer runs %s, this side %s: give both sides the same %s "
				"(or give it on one side only)", a, b, f->what);
		return -ECANCELED;
	}
	if (s->o.all && s->o.duration > 0 && !s->o.infinite) {
		perf_sess_err(s, "one side gave -a, the other -D, which excludes it: give both "
				"sides the same options");
		return -ECANCELED;
	}
	return 0;
}

/* ---- jobs ---- */

static enum roce_perf_job_op
verb_op(const struct roce_perf_session *s)
{
	if (s->o.verb == ROCE_PERF_VERB_ATOMIC && s->o.cas)
		return ROCE_PERF_JOB_CAS;
	return verb_info[s->o.verb].op;
}

/* The pacing of one QP's job, in Mb/s; 0: none. */
static uint64_t
job_rate_mbps(const struct roce_perf_session *s, uint64_t size)
{
	double mbps;

	if (s->o.lat)
		return 0;
	if (s->o.rate_pps > 0)
		mbps = s->o.rate_pps * (double)size * 8 / 1e6 / s->o.qps;
	else if (s->o.rate_gbps > 0)
		mbps = s->o.rate_gbps * 1000 / s->o.qps;
	else
		return 0;
	return mbps > 1 ? (uint64_t)mbps : 1;
}

/* Start QP i's job: @p size bytes, @p count operations (0 with a duration, or none). */
static int
job_start(struct roce_perf_session *s, unsigned int i, uint64_t size, bool recv,
		uint64_t count)
{
	const struct roce_perf_key *peer = &s->qp[i].peer;
	uint64_t off = perf_sess_local_off(s, i);
	struct roce_perf_job j = {
		.qpn = s->qp[i].qpn,
		.op = recv ? ROCE_PERF_JOB_RECV : verb_op(s),
		.lkey = s->mr.key,
		.offset = recv ? off + s->slot / 2 : off,
		.length = size,
		.count = count,
		.remote = !recv && s->o.verb != ROCE_PERF_VERB_SEND,
		.remote_addr = peer->vaddr,
		.rkey = peer->rkey,
		.depth = recv ? 0 : s->o.tx_depth,
		.rate_mbps = recv ? 0 : job_rate_mbps(s, size),
		.post_list = recv || s->o.lat ? 0 : s->o.post_list,
		/* the bidirectional send job (bidi) completes every message */
		.cq_mod = recv || s->o.lat || (s->o.duplex && s->o.verb == ROCE_PERF_VERB_SEND) ?
			0 : s->o.cq_mod,
		.lat = s->o.lat,
		.bidi = !recv && s->o.duplex && s->o.verb == ROCE_PERF_VERB_SEND,
		/* perftest: the write_lat server and the send_lat client open the ping-pong. */
		.initiator = s->o.verb == ROCE_PERF_VERB_WRITE ? s->o.server : !s->o.server,
		.recv_offset = off + s->slot / 2,
		.ah = recv ? 0 : s->qp[i].ah,
		.remote_qpn = recv || !is_ud(s) ? 0 : peer->qpn,
		.remote_qkey = recv || !is_ud(s) ? 0 : ROCE_PERF_UD_QKEY,
	};

	if (!recv && s->o.infinite) {
		j.count = 0;
	} else if (!recv && s->o.duration > 0) {
		j.count = 0;
		j.duration_ms = (uint64_t)(s->o.duration * 1000);
	}
	return s->ops->job_start(s->ctx, &j);
}

static void
jobs_stop(struct roce_perf_session *s)
{
	unsigned int i;

	for (i = 0; i < s->nqp; i++)
		s->ops->job_stop(s->ctx, s->qp[i].qpn);
}

/* What one poll of the jobs saw. */
struct jobs_poll {
	uint64_t running;
	uint64_t bytes;
	uint64_t msgs;
	uint64_t errors;
	double peak_bps;		/* the daemon's: one job's, or their sum */
	double end_s;			/* the longest job's time */
	char first_error[48];
	struct roce_perf_rtt rtt;
};

/*
 * Bandwidth: one query adds up the jobs of all our QPs (a query per QP is an RPC into a worker
 * each: thousands of them would disturb what they measure). Latency runs one QP and wants its
 * histogram.
 */
static int
jobs_poll(struct roce_perf_session *s, struct jobs_poll *jp)
{
	struct roce_perf_job_stats st;
	int ret;

	memset(&st, 0, sizeof(st));
	ret = s->o.lat ? s->ops->job_show(s->ctx, s->qp[0].qpn, &st) :
		s->ops->job_total(s->ctx, &st);
	if (ret != 0)
		return ret;
	jp->running = st.running;
	jp->bytes = st.bytes;
	jp->msgs = st.completed;
	jp->errors = st.errors;
	if (st.errors != 0 && jp->first_error[0] == '\0')
		snprintf(jp->first_error, sizeof(jp->first_error), "%s", st.first_error);
	jp->peak_bps = st.peak_gbps * 125e6;
	if (st.seconds > jp->end_s)
		jp->end_s = st.seconds;
	jp->rtt = st.rtt;
	return 0;
}

/* Whether the peer wrote to the side channel (1), closed it (2), or neither (0). */
static int
peer_ready(const struct roce_perf_session *s)
{
	struct pollfd p = { .fd = s->oob_fd, .events = POLLIN };
	char c;
	ssize_t n;

	if (p.fd < 0 || poll(&p, 1, 0) <= 0)
		return 0;
	n = recv(p.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n > 0)
		return 1;
	return n < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : 2;
}

/* rtt holds post-to-post times: a round trip, halved for write/send as perftest. */
static double
lat_div(const struct roce_perf_session *s)
{
	return (s->o.verb == ROCE_PERF_VERB_WRITE || s->o.verb == ROCE_PERF_VERB_SEND ? 2 : 1) *
		1000.0;
}

static void
emit_result(const struct roce_perf_session *s, const struct roce_perf_result *r)
{
	if (s->ev.result != NULL)
		s->ev.result(s->ev.arg, r);
}

/* Why a wait for the jobs ended. */
enum stop_why {
	STOP_NONE,		/* they ended by themselves */
	STOP_INTR,		/* interrupted */
	STOP_PEER,		/* --run_infinitely: the peer ended the test */
	STOP_PEER_GONE,		/* --run_infinitely: the peer closed the side channel */
	STOP_STALL,		/* no progress for o.stall_ms */
};

/* The state of one wait for the jobs. */
struct jobs_wait {
	double t0, stop_t;
	double live_t, live_bytes, live_msgs;	/* the last live line */
	double win_t, win_bytes, peak_bps;	/* the aggregate peak */
	double ival_t, ival_bytes, ival_msgs, ival_peak;	/* --run_infinitely */
	double stall_t;
	uint64_t stall_mark;
	enum stop_why why;
	bool stopping;
};

static void
wait_stop(struct roce_perf_session *s, struct jobs_wait *w, enum stop_why why, double t)
{
	if (w->stopping)
		return;
	jobs_stop(s);
	w->stopping = true;
	w->why = why;
	w->stop_t = t;
}

static void
live_line(struct roce_perf_session *s, struct jobs_wait *w, const struct jobs_poll *jp,
		double t)
{
	struct roce_perf_progress pr = {
		.secs = t - w->t0,
		.bw = (jp->bytes - w->live_bytes) / (t - w->live_t) / unit_div(s),
		.mpps = (jp->msgs - w->live_msgs) / (t - w->live_t) / 1e6,
		.msgs = jp->msgs,
		.errors = jp->errors,
		.lat = s->o.lat,
		.t_typical = jp->rtt.median / lat_div(s),
		.t_avg = jp->rtt.avg / lat_div(s),
	};

	if (s->ev.progress != NULL)
		s->ev.progress(s->ev.arg, &pr);
	w->live_t = t;
	w->live_bytes = (double)jp->bytes;
	w->live_msgs = (double)jp->msgs;
}

/* --run_infinitely: the line of the interval that ends now, as perftest prints one. */
static void
interval_line(struct roce_perf_session *s, struct jobs_wait *w, const struct jobs_poll *jp,
		uint64_t size, double t)
{
	double dt = t - w->ival_t, bps = (jp->bytes - w->ival_bytes) / dt;
	struct roce_perf_result r = {
		.size = size,
		.iters = (uint64_t)(jp->msgs - w->ival_msgs),
		.bw_avg = bps / unit_div(s),
		.bw_peak = (w->ival_peak > bps ? w->ival_peak : bps) / unit_div(s),
		.msg_rate = (jp->msgs - w->ival_msgs) / dt / 1e6,
		.seconds = dt,
		.interval = true,
	};

	emit_result(s, &r);
	w->ival_t = t;
	w->ival_bytes = (double)jp->bytes;
	w->ival_msgs = (double)jp->msgs;
	w->ival_peak = 0;
}

/* One poll's bookkeeping: progress, the peak window, the live line, the interval line. */
static void
wait_account(struct roce_perf_session *s, struct jobs_wait *w, const struct jobs_poll *jp,
		uint64_t size, double t)
{
	uint64_t mark = jp->msgs + jp->bytes + jp->rtt.samples + jp->errors;

	if (mark != w->stall_mark) {
		w->stall_mark = mark;
		w->stall_t = t;
	} else if (s->o.stall_ms != 0 && jp->running != 0 &&
			(t - w->stall_t) * 1000 >= s->o.stall_ms) {
		wait_stop(s, w, STOP_STALL, t);
	}
	if (t - w->win_t >= PERF_PEAK_WINDOW_S) {
		double bps = (jp->bytes - w->win_bytes) / (t - w->win_t);

		if (bps > w->peak_bps)
			w->peak_bps = bps;
		if (bps > w->ival_peak)
			w->ival_peak = bps;
		w->win_t = t;
		w->win_bytes = (double)jp->bytes;
	}
	if (w->stopping)
		return;
	if (t - w->live_t >= 1 && jp->running != 0)
		live_line(s, w, jp, t);
	if (s->o.infinite && t - w->ival_t >= infinite_interval(s))
		interval_line(s, w, jp, size, t);
}

/* Whether to stop the jobs now: an interrupt, or (--run_infinitely) the peer. */
static void
wait_check(struct roce_perf_session *s, struct jobs_wait *w, double t)
{
	int pr;

	if (w->stopping)
		return;
	if (s->interrupted) {
		wait_stop(s, w, STOP_INTR, t);
		return;
	}
	/* A peer that went away does not answer our traffic: stop it. A message from the peer
	 * (it finished first) is for the exchange, except that --run_infinitely ends then. */
	pr = peer_ready(s);
	/* write_lat ends without a word after the traffic: the peer's close is its end */
	if (pr == 2 && roce_perf_session_test(s) == ROCE_PERF_WRITE_LAT)
		return;
	if (pr == 2 || (pr == 1 && s->o.infinite))
		wait_stop(s, w, pr == 1 ? STOP_PEER : STOP_PEER_GONE, t);
}

/* The run's result from the last poll: bytes/s and messages/s (units are the caller's). */
static void
wait_result(const struct roce_perf_session *s, const struct jobs_wait *w,
		const struct jobs_poll *jp, uint64_t size, struct roce_perf_result *res)
{
	double secs = (double)(uint64_t)(jp->end_s * 1e9) / 1e9;
	/* One job: its own 10 ms windows; more: the daemon adds their peaks up, which is not
	 * the aggregate's, so take ours (between two polls) over the sum of the bytes. */
	double peak = s->nqp == 1 ? jp->peak_bps : w->peak_bps;

	memset(res, 0, sizeof(*res));
	res->size = size;
	res->iters = jp->msgs;
	res->seconds = secs;
	res->bw_avg = secs > 0 ? (double)jp->bytes / secs : 0;
	res->msg_rate = secs > 0 ? (double)jp->msgs / secs : 0;
	res->bw_peak = peak < res->bw_avg ? res->bw_avg : peak;
	/* cut short, unless it had done all its iterations anyway */
	res->interrupted = (w->why == STOP_INTR || w->why == STOP_PEER_GONE) && !s->o.infinite &&
		!(s->o.duration == 0 && jp->msgs >= s->o.iters * s->nqp);
}

/*
 * Wait for every QP's job to end, telling a live line each second; sum their results. The jobs
 * were stopped already when @p stopped (the passive send_bw server's receives).
 * @return 0, -EINTR (res holds the partial result), -ETIMEDOUT (no progress), -EIO (a job
 *   failed) or an error of the backend.
 */
static int
jobs_wait(struct roce_perf_session *s, uint64_t size, struct roce_perf_result *res,
		struct roce_perf_rtt *rtt, bool stopped)
{
	unsigned int poll_ms = s->o.poll_ms != 0 ? s->o.poll_ms : PERF_POLL_MS;
	struct jobs_poll jp;
	struct jobs_wait w;
	double t;
	int ret;

	memset(&jp, 0, sizeof(jp));
	memset(&w, 0, sizeof(w));
	w.t0 = w.live_t = w.win_t = w.ival_t = w.stall_t = now_s();
	w.stall_mark = UINT64_MAX;
	w.stopping = stopped;
	w.stop_t = w.t0;
	do {
		/* Each poll is an RPC to the workers: rarely enough not to disturb what it
		 * measures; faster once stopping, to be done soon. */
		perf_sess_sleep_ms(w.stopping ? 20 : poll_ms);
		wait_check(s, &w, now_s());
		if ((ret = jobs_poll(s, &jp)) != 0)
			return ret;
		t = now_s();
		wait_account(s, &w, &jp, size, t);
	} while (jp.running != 0 && !(w.stopping && t - w.stop_t > PERF_STOP_WAIT_S));
	if (s->o.infinite && jp.msgs > w.ival_msgs && t - w.ival_t > 0.05)
		interval_line(s, &w, &jp, size, t);
	wait_result(s, &w, &jp, size, res);
	*rtt = jp.rtt;
	s->peer_ended = w.why == STOP_PEER_GONE;
	if (w.why == STOP_STALL) {
		perf_sess_err(s, "no progress for %g s: %" PRIu64 " messages completed, the jobs "
				"stalled (is the peer running the same test? --stall-timeout "
				"changes the limit)", s->o.stall_ms / 1e3, jp.msgs);
		return -ETIMEDOUT;
	}
	if (jp.errors != 0) {
		perf_sess_err(s, "%" PRIu64 " work requests failed (first: %s)", jp.errors,
				jp.first_error[0] != '\0' ? jp.first_error : "?");
		return -EIO;
	}
	if (w.why == STOP_PEER_GONE && !s->o.infinite) {
		perf_sess_err(s, "the peer closed the side channel during the traffic (after %"
				PRIu64 " messages)", jp.msgs);
		return -ECONNRESET;
	}
	return w.why == STOP_INTR && !s->o.infinite ? -EINTR : 0;
}

/* ---- results ---- */

/* Bytes/s and messages/s into the report unit and Mpps. */
static void
bw_units(const struct roce_perf_session *s, struct roce_perf_result *r)
{
	r->bw_peak /= unit_div(s);
	r->bw_avg /= unit_div(s);
	r->msg_rate /= 1e6;
}

static void
lat_result(const struct roce_perf_session *s, struct roce_perf_result *r,
		const struct roce_perf_rtt *rtt)
{
	double div = lat_div(s);

	r->min = rtt->min / div;
	r->max = rtt->max / div;
	r->median = rtt->median / div;
	r->avg = rtt->avg / div;
	r->stdev = rtt->stdev / div;
	r->p99 = rtt->p99 / div;
	r->p999 = rtt->p999 / div;
	r->samples = rtt->samples;
}

/* ---- the out-of-band exchange's hooks ---- */

/*
 * The peer's key alone says where our RoCE traffic goes: refuse a GID that is neither the side
 * channel's peer nor on our port's subnet, or a perftest peer could aim us at a third host.
 */
static int
check_peer_gid(const struct roce_perf_session *s, const struct roce_perf_key *k)
{
	char ip[INET6_ADDRSTRLEN];

	if (s->o.allow_gid_peer || roce_perf_gid_check(k->gid, s->tcp_gid, s->gid + 12,
			s->prefix) == 0)
		return 0;
	perf_sess_gid_str(k->gid, ip, sizeof(ip));
	perf_sess_err(s, "the peer's key sends RoCE traffic to %s, which is neither the side "
			"channel's peer %s nor on port %u's subnet %s/%u; refused "
			"(--allow-gid-peer sends it there)", ip, s->tcp_ip, s->o.port, s->ip,
			s->prefix);
	return -EPERM;
}

/* The peer's keys are usable: as many QPs as ours, GIDs we may send to, pages that fit. */
static int
check_peer(const struct roce_perf_session *s, const struct roce_perf_key *peer,
		unsigned int nqps)
{
	unsigned int i;
	int ret;

	if (s->oob.agreed.page_size > s->slot / 2) {
		perf_sess_err(s, "the peer's page size %u would take its messages beyond the %"
				PRIu64 " bytes per QP we offer; use fewer QPs",
				s->oob.agreed.page_size, s->slot / 2);
		return -ENOTSUP;
	}
	/* perftest does not say how many QPs it has: with fewer than ours, its barrier keys
	 * stand in for the missing ones, all with its first QP's number. */
	for (i = 1; i < nqps; i++) {
		if (peer[i].qpn == peer[0].qpn && memcmp(peer[i].gid, peer[0].gid, 16) == 0) {
			perf_sess_err(s, "the peer has fewer QPs than our %u: give both sides the "
					"same -q", nqps);
			return -EPROTO;
		}
	}
	for (i = 0; i < nqps; i++)
		if ((ret = check_peer_gid(s, &peer[i])) != 0)
			return ret;
	return 0;
}

/*
 * -c UD: nothing to connect (the QP is in RTS); as perftest, the sides that send (a bw
 * client, both latency sides, -b) make an address handle to the peer's GID.
 */
static int
connect_ud(struct roce_perf_session *s, unsigned int i, const struct roce_perf_key *peer)
{
	char ip[INET6_ADDRSTRLEN];

	s->qp[i].peer = *peer;
	s->out_reads = 1;
	if (passive(s))
		return 0;
	perf_sess_gid_str(peer->gid, ip, sizeof(ip));
	return s->ops->ah_create(s->ctx, s->o.port, ip, &s->qp[i].ah);
}

static int
connect_qp(struct roce_perf_session *s, unsigned int i, const struct roce_perf_key *peer)
{
	struct roce_perf_qp_connect c = {
		.qpn = s->qp[i].qpn,
		.remote_qpn = peer->qpn,
		.remote_psn = peer->psn,
		.mtu = 128u << s->oob.agreed.mtu,
		.max_rd_atomic = peer->out_reads < out_reads(s) ? peer->out_reads : out_reads(s),
		.sr_rto_us = PERF_SR_RTO_US,
		.max_inflight = s->o.inflight,
		.sr = (s->oob.agreed.caps & ROCE_PERF_CAP_SR) != 0,
	};

	if (c.max_rd_atomic == 0)
		c.max_rd_atomic = 1;
	s->out_reads = c.max_rd_atomic;
	s->qp[i].peer = *peer;
	memcpy(c.remote_gid, peer->gid, 16);
	perf_sess_gid_str(peer->gid, c.remote_ip, sizeof(c.remote_ip));
	return s->ops->qp_connect(s->ctx, &c);
}

/*
 * -R: the CM connected the QPs already. Each QP takes the key of the peer QP its connection
 * reached (perftest's connections and keys may not come in the same order), else the key of
 * its index.
 */
static int
connect_rcm(struct roce_perf_session *s, unsigned int i, const struct roce_perf_key *peer,
		unsigned int nqps)
{
	uint32_t rqpn = perf_sess_rcm_peer_qpn(s, i);
	const struct roce_perf_key *k = &peer[i];
	unsigned int j;

	for (j = 0; j < nqps; j++)
		if (rqpn != 0 && peer[j].qpn == rqpn)
			k = &peer[j];
	if (rqpn != 0 && k->qpn != rqpn)
		perf_sess_note(s, "the peer's keys do not name QP 0x%06x, which our QP 0x%06x is "
				"connected to: using its key %u", rqpn, s->qp[i].qpn, i);
	s->qp[i].peer = *k;
	s->out_reads = k->out_reads < out_reads(s) ? k->out_reads : out_reads(s);
	if (s->out_reads == 0)
		s->out_reads = 1;
	return 0;
}

static int
connect_peer(struct roce_perf_session *s, const struct roce_perf_key *peer, unsigned int nqps)
{
	unsigned int i;
	int ret;

	if ((ret = check_peer(s, peer, nqps)) != 0)
		return ret;
	for (i = 0; i < nqps; i++) {
		if (s->o.rdma_cm)
			ret = connect_rcm(s, i, peer, nqps);
		else
			ret = (is_ud(s) ? connect_ud : connect_qp)(s, i, &peer[i]);
		if (ret != 0)
			return ret;
	}
	if ((ret = perf_sess_verify_prepare(s)) != 0)
		return ret;
	if (s->ev.header != NULL)
		s->ev.header(s->ev.arg, s);
	return 0;
}

/* Whatever fails in a hook says so where it fails; the exchange adds no line of its own. */
static int
hook_failed(struct roce_perf_session *s, int ret)
{
	s->hook_failed = ret < 0;
	return ret;
}

static struct roce_perf_oob_mode
mode_of(const struct roce_perf_session *s)
{
	return (struct roce_perf_oob_mode){ .duplex = s->o.duplex, .all = s->o.all,
		.infinite = s->o.infinite, .duration = s->o.duration > 0,
		.nb_sizes = s->o.all ? (unsigned int)nb_sizes(s) : 0 };
}

/* -b: each line adds the peer's report, except send_bw -b -D's, which exchanges none. */
static bool
duplex_report(const struct roce_perf_session *s)
{
	return s->o.duplex && !(s->o.verb == ROCE_PERF_VERB_SEND && s->o.duration > 0);
}

static int traffic_wait_ms(const struct roce_perf_session *s);

/*
 * -c UD: a datagram is one packet, so messages go up to the agreed MTU, as perftest 6.06's
 * check_mtu(): a size the user gave above it is refused, the default (and -a's sweep) is
 * brought down to it, saying so.
 */
static int
ud_fit_mtu(struct roce_perf_session *s)
{
	unsigned int mtu = 128u << s->oob.agreed.mtu;

	s->nb_sizes = (unsigned int)__builtin_ctz(mtu);
	if (!s->o.all && s->o.size <= mtu)
		return 0;
	if (!s->o.all && (s->o.given & ROCE_PERF_PAR_SET_SIZE)) {
		perf_sess_err(s, "Max message size in UD cannot be greater than MTU: -s %" PRIu64
				", MTU %u", s->o.size, mtu);
		return -EMSGSIZE;
	}
	perf_sess_note(s, "Max msg size in UD is MTU %u: changing to this MTU", mtu);
	if (!s->o.all)
		s->o.size = mtu;
	return 0;
}

static int
hook_agree(void *arg, const struct roce_perf_params *peer, struct roce_perf_oob_setup *setup)
{
	struct roce_perf_session *s = arg;
	unsigned int nqp = s->nqp;
	uint64_t slot = s->slot;
	int ret = 0;

	if (peer != NULL)
		ret = agree_params(s, peer);
	if (ret == 0 && is_ud(s))
		ret = ud_fit_mtu(s);
	if (ret == 0 && (s->o.qps != nqp || slot_bytes(s) > slot))
		ret = resetup(s);
	if (ret != 0)
		return hook_failed(s, ret);
	setup->keys = s->keys;
	setup->nqps = s->nqp;
	setup->mode = mode_of(s);
	setup->traffic_timeout_ms = traffic_wait_ms(s);
	s->next_size = s->o.all ? 2 : s->o.size;
	return 0;
}

static int
hook_connect(void *arg, const struct roce_perf_key *peer, unsigned int nqps)
{
	struct roce_perf_session *s = arg;

	return hook_failed(s, connect_peer(s, peer, nqps));
}

/*
 * Before a size's barrier, where perftest posts receives: the send_bw server's receive job
 * (once, for every size), the send_lat server's half of the ping-pong (it waits for the
 * client's first message, so its receive is posted before the client sends).
 */
static int
hook_prepare(void *arg)
{
	struct roce_perf_session *s = arg;
	unsigned int i;
	int ret = 0;

	if (s->o.verb != ROCE_PERF_VERB_SEND || !s->o.server || s->o.duplex)
		return 0;
	if (s->o.lat) {
		ret = job_start(s, 0, s->next_size, false, s->o.iters);
		s->lat_started = ret == 0;
	} else if (!s->recv_started) {
		for (i = 0; i < s->nqp && ret == 0; i++)
			ret = job_start(s, i, perf_sess_max_size(s), true, s->o.infinite ||
					s->o.duration > 0 ? 0 : s->o.iters * nb_sizes(s));
		s->recv_started = true;
	}
	return hook_failed(s, ret);
}

/* Run every QP's job at one size and report it (a partial one when interrupted). */
static int
run_size(struct roce_perf_session *s, uint64_t size, struct roce_perf_result *res)
{
	struct roce_perf_rtt rtt;
	unsigned int i;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	for (i = 0; i < s->nqp && ret == 0; i++)
		if (!(i == 0 && s->lat_started))
			ret = job_start(s, i, size, false, s->o.iters);
	s->lat_started = false;
	/* While jobs run, an interrupt stops them (their outstanding work completes: the peer
	 * is still there) and shows what ran; the side channel closes after that. */
	s->soft_stop = 1;
	if (ret == 0)
		ret = jobs_wait(s, size, res, &rtt, false);
	s->soft_stop = 0;
	/* interrupted, or the peer went: what ran is still shown */
	if (ret != 0 && ret != -EINTR && ret != -ECONNRESET)
		return ret;
	if (s->o.lat)
		lat_result(s, res, &rtt);
	else
		bw_units(s, res);
	s->last = *res;
	/* -b: printed with the peer's numbers added, after the report exchange;
	 * --run_infinitely: its intervals were the lines */
	if ((!duplex_report(s) && !s->o.infinite) || ret != 0)
		emit_result(s, res);
	return ret;
}

/* --run_infinitely: how the exchange goes on once our traffic stopped. */
static int
infinite_next(const struct roce_perf_session *s, bool by_peer)
{
	if (s->peer_ended)
		return ROCE_PERF_OOB_END;
	if (by_peer)
		return 0;
	/* Another rocectl perf watches the side channel: the server, which answers, writes
	 * its next message first. */
	if (peer_is_rocedp(s))
		return s->o.server ? ROCE_PERF_OOB_FIRST : 0;
	/* perftest never leaves its traffic, except a half-duplex bw server, which waits for
	 * the client's end as after -n or -D */
	return !s->o.duplex && s->o.verb != ROCE_PERF_VERB_SEND && !s->o.server ? 0 :
		ROCE_PERF_OOB_END;
}

/* A passive server under --run_infinitely: until the client ends the test, or an interrupt. */
static int
passive_wait(struct roce_perf_session *s)
{
	int pr;

	s->soft_stop = 1;
	for (;;) {
		if (s->interrupted) {
			s->soft_stop = 0;
			return infinite_next(s, false);
		}
		pr = peer_ready(s);
		if (pr != 0) {
			s->soft_stop = 0;
			s->peer_ended = pr == 2;
			return infinite_next(s, true);
		}
		perf_sess_sleep_ms(PERF_POLL_MS);
	}
}

static int
run_traffic(struct roce_perf_session *s, struct roce_perf_report *rep, unsigned int sizes)
{
	struct roce_perf_result res;
	unsigned int k;
	int ret = 0;

	memset(&res, 0, sizeof(res));
	if (passive(s))
		return s->o.infinite ? passive_wait(s) : 0;
	for (k = 0; k < sizes && ret == 0; k++) {
		ret = run_size(s, s->next_size, &res);
		if (ret == 0 && !s->o.duplex && (ret = perf_sess_verify_check(s, s->next_size)) != 0)
			s->verified = "failed";
		if (s->o.all)
			s->next_size *= 2;
	}
	rep->size = res.size;
	rep->iters = res.iters;
	rep->bw_peak = s->o.lat ? 0 : res.bw_peak;
	rep->bw_avg = s->o.lat ? 0 : res.bw_avg;
	rep->msg_rate = s->o.lat ? 0 : res.msg_rate;
	if (ret != 0 || !s->o.infinite)
		return ret;
	return infinite_next(s, !s->interrupted);
}

static int
hook_traffic(void *arg, struct roce_perf_report *rep, unsigned int sizes)
{
	struct roce_perf_session *s = arg;
	int ret = run_traffic(s, rep, sizes);

	s->traffic_done = true;
	return hook_failed(s, ret);
}

/* -b: our numbers and the peer's added up, as perftest prints them. */
static int
hook_report(void *arg, const struct roce_perf_report *peer)
{
	struct roce_perf_session *s = arg;
	struct roce_perf_result r = s->last;

	if (!duplex_report(s))
		return 0;
	r.bw_peak += peer->bw_peak;
	r.bw_avg += peer->bw_avg;
	r.msg_rate += peer->msg_rate;
	r.duplex = true;
	emit_result(s, &r);
	return 0;
}

/* After the exchange, a passive server reports: the client's numbers, or its receives. */
static int
server_report(struct roce_perf_session *s)
{
	const struct roce_perf_report *r = &s->oob.peer_report;
	struct roce_perf_result res;
	struct roce_perf_rtt rtt;
	int ret;

	if (!passive(s) || s->o.lat)
		return 0;
	memset(&res, 0, sizeof(res));
	if (s->o.verb != ROCE_PERF_VERB_SEND) {
		/* a client that went away sent no report */
		if (s->peer_ended)
			return 0;
		res.size = r->size;
		res.iters = r->iters;
		res.bw_peak = r->bw_peak;
		res.bw_avg = r->bw_avg;
		res.msg_rate = r->msg_rate;
		emit_result(s, &res);
		return 0;
	}
	/* Receive side: the client has finished, so whatever arrived is all there will be. */
	jobs_stop(s);
	ret = jobs_wait(s, perf_sess_max_size(s), &res, &rtt, true);
	if (ret != 0)
		return ret;
	res.size = s->o.all ? 0 : s->o.size;
	bw_units(s, &res);
	emit_result(s, &res);
	return 0;
}

/* ---- the exchange ---- */

/* The one line saying why the exchange failed. */
static void
oob_fail(const struct roce_perf_session *s, int err)
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
		why = s->o.rdma_cm ? "the peer disconnected the side channel" :
			"the peer closed the connection";
		break;
	case -ETIMEDOUT:
		if (!s->traffic_done)
			snprintf(buf, sizeof(buf), "the peer did not send a whole message within "
					"%g s", s->o.oob_ms / 1e3);
		else if (passive(s))
			snprintf(buf, sizeof(buf), "the peer did not end its %g s of traffic and "
					"the test within %g s more", s->o.duration,
					s->o.oob_ms / 1e3);
		else
			snprintf(buf, sizeof(buf), "the peer did not end the test within %g s "
					"of the end of our traffic", s->o.oob_ms / 1e3);
		why = buf;
		break;
	default:
		why = strerror(-err);
		break;
	}
	perf_sess_err(s, "out-of-band exchange with the peer failed: %s", why);
}

/*
 * The first message after the traffic, counted from the end of ours: as long as any other
 * when we ran traffic, since the peer ends with us. A passive server waits for the client's
 * whole traffic instead, which -D bounds and -n does not (an interrupt still ends it).
 */
static int
traffic_wait_ms(const struct roce_perf_session *s)
{
	if (!passive(s))
		return 0;
	return s->o.duration > 0 && !s->o.infinite ? (int)(s->o.duration * 1000) + s->o.oob_ms :
		-1;
}

static int
exchange(struct roce_perf_session *s)
{
	struct roce_perf_oob_cfg cfg = {
		.test = roce_perf_session_test(s),
		.role = s->o.server ? ROCE_PERF_SERVER : ROCE_PERF_CLIENT,
		.nqps = s->nqp,
		.timeout_ms = s->o.oob_ms,
		.traffic_timeout_ms = traffic_wait_ms(s),
		.local = { .page_size = PERF_PAGE, .cache_line = 64, .mtu = s->mtu_enum,
			.caps = ROCE_PERF_CAP_PARAMS |
				(s->o.verify ? ROCE_PERF_CAP_PATTERN : 0) |
				(s->o.no_sr ? 0 : ROCE_PERF_CAP_SR) },
		.keys = s->keys,
		.mode = mode_of(s),
		.hooks = { hook_agree, hook_connect, hook_prepare, hook_traffic, hook_report, s,
			NULL },
	};
	int fd, ret;

	params_of(s, &cfg.params);
	if (s->o.rdma_cm) {
		/* the CM programs the QPs: go-back-N, whatever the peer */
		cfg.local.caps &= ~ROCE_PERF_CAP_SR;
		ret = perf_sess_rcm_exchange(s, &cfg);
		if (ret != 0 && s->interrupted)
			ret = -EINTR;
		if (ret != 0 && ret != -EINTR && !s->hook_failed)
			oob_fail(s, ret);
		return ret;
	}
	fd = perf_sess_tcp_open(s);
	if (fd < 0)
		return s->interrupted ? -EINTR : fd;
	s->oob_fd = fd;
	/* an interrupt between the open and here has not seen the socket */
	if (s->interrupted)
		shutdown(fd, SHUT_RDWR);
	ret = roce_perf_oob_run(fd, &cfg, &s->oob);
	s->oob_fd = -1;
	close(fd);
	/* An interrupt shut the socket: whatever the exchange saw then, it was interrupted. */
	if (ret != 0 && s->interrupted)
		ret = -EINTR;
	if (ret != 0 && ret != -EINTR && !s->hook_failed)
		oob_fail(s, ret);
	return ret;
}

int
roce_perf_session_run(struct roce_perf_session *s)
{
	int ret = setup(s);

	if (ret == 0)
		ret = exchange(s);
	if (ret == 0)
		ret = server_report(s);
	/* what landed is complete once the exchange is: the server's half-duplex bw data, and
	 * both sides' with -b */
	if (ret == 0 && s->o.verify && !s->o.lat && (s->o.server || s->o.duplex) &&
			!s->peer_ended) {
		ret = perf_sess_verify_check(s, perf_sess_max_size(s));
		if (ret != 0)
			s->verified = "failed";
	}
	if (s->o.verify && s->verified == NULL)
		s->verified = ret == 0 ? (perf_sess_verify_receives(s) ? "ok" : "sent") :
			"failed";
	return ret;
}

void
roce_perf_session_interrupt(struct roce_perf_session *s)
{
	int fd = s->oob_fd;

	s->interrupted++;
	/* The exchange retries poll() on EINTR: shutting its socket (async-signal-safe) is
	 * what ends a wait for the peer. Running jobs stop softly, once (soft_stop). */
	if (fd >= 0 && (!s->soft_stop || s->interrupted > 1))
		shutdown(fd, SHUT_RDWR);
}

/* ---- life cycle ---- */

static bool
ops_valid(const struct roce_perf_backend_ops *ops)
{
	return ops != NULL && ops->status != NULL && ops->port_info != NULL &&
		ops->mr_create != NULL && ops->mr_destroy != NULL && ops->mr_fill != NULL &&
		ops->mr_digest != NULL && ops->mr_read != NULL && ops->qp_create != NULL &&
		ops->qp_connect != NULL && ops->qp_destroy != NULL && ops->job_start != NULL &&
		ops->job_stop != NULL && ops->job_show != NULL && ops->job_total != NULL;
}

static bool
rcm_ops_valid(const struct roce_perf_backend_ops *ops)
{
	return ops->cm_listen != NULL && ops->cm_unlisten != NULL && ops->cm_connect != NULL &&
		ops->cm_accept != NULL && ops->cm_reject != NULL && ops->cm_disconnect != NULL &&
		ops->cm_events != NULL && ops->post_send != NULL && ops->post_recv != NULL &&
		ops->cq_poll != NULL && ops->mr_write != NULL;
}

static bool
opts_valid(const struct roce_perf_opts *o)
{
	return (unsigned int)o->verb < ROCE_PERF_VERB_MAX && o->qps >= 1 &&
		o->qps <= ROCE_PERF_OOB_MAX_QPS && o->tx_depth >= 1 && o->size >= 1 &&
		o->size <= ROCE_PERF_PAR_MAX_SIZE &&
		(o->server || o->peer != NULL) && (!o->lat || o->qps == 1) &&
		(o->mtu == 0 || (o->mtu >= 256 && o->mtu <= 4096 && (o->mtu & (o->mtu - 1)) == 0)) &&
		!(o->lat && (o->duplex || o->infinite)) &&
		!(o->duplex && o->infinite && o->verb == ROCE_PERF_VERB_SEND) &&
		(o->conn == ROCE_PERF_CONN_RC || (o->conn == ROCE_PERF_CONN_UD &&
			o->verb == ROCE_PERF_VERB_SEND && !o->verify && !o->duplex)) &&
		!(o->rdma_cm && (o->conn != ROCE_PERF_CONN_RC || o->infinite)) &&
		o->duration * 1000 <= ROCE_PERF_PAR_MAX_DURATION_MS;
}

struct roce_perf_session *
roce_perf_session_create(const struct roce_perf_opts *o, const struct roce_perf_backend_ops *ops,
		void *ctx, const struct roce_perf_events *ev)
{
	struct roce_perf_session *s;

	if (o == NULL || !opts_valid(o) || !ops_valid(ops) || (o->conn == ROCE_PERF_CONN_UD &&
			(ops->ah_create == NULL || ops->ah_destroy == NULL)) ||
			(o->rdma_cm && !rcm_ops_valid(ops))) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->qp = calloc(o->qps, sizeof(*s->qp));
	if (s->qp == NULL) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->o = *o;
	s->ops = ops;
	s->ctx = ctx;
	if (ev != NULL)
		s->ev = *ev;
	s->oob_fd = -1;
	s->next_size = o->all ? 2 : o->size;
	return s;
}

void
roce_perf_session_destroy(struct roce_perf_session *s)
{
	if (s == NULL)
		return;
	roce_perf_session_teardown(s);
	free(s->keys);
	free(s->qp);
	free(s);
}
