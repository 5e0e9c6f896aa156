/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The perftest session driver: setup (limits, port, MR, QPs and their keys), the out-of-band
 * exchange with its connect and traffic hooks, the jobs and their polling, the passive
 * server's report, teardown. The daemon is behind struct roce_perf_backend_ops.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
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

/* The job each verb runs, and what the peer may do to our QPs and MR, as perftest grants. */
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

uint64_t
perf_sess_max_size(const struct roce_perf_session *s)
{
	return s->o.all ? ROCE_PERF_MAX_SIZE : s->o.size;
}

uint64_t
perf_sess_local_off(const struct roce_perf_session *s, unsigned int i)
{
	return i * s->slot;
}

static uint64_t
nb_sizes(const struct roce_perf_session *s)
{
	return s->o.all ? ROCE_PERF_NB_SIZES : 1;
}

/* perftest's bw servers (and the read_lat one) only wait for the client. */
static bool
passive(const struct roce_perf_session *s)
{
	return s->o.server && (!s->o.lat || s->o.verb == ROCE_PERF_VERB_READ ||
			s->o.verb == ROCE_PERF_VERB_ATOMIC);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

static int
setup_mr(struct roce_perf_session *s)
{
	uint64_t max = perf_sess_max_size(s), size;
	int ret;

	/* perftest walks small messages through a buffer of the agreed page size: give each
	 * QP's half 64 KiB (the largest page of Linux hosts) unless there are very many QPs. */
	if (max < PERF_BIG_PAGE && s->o.qps <= 256)
		max = PERF_BIG_PAGE;
	s->slot = 2 * ((max + PERF_PAGE - 1) / PERF_PAGE * PERF_PAGE);
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
		.access = verb_info[s->o.verb].rights,
	};
	struct roce_perf_key *k = &s->qp[i].local;
	uint32_t psn;
	int ret;

	if (conf.rq_depth > s->daemon.max_qp_depth)
		conf.rq_depth = s->daemon.max_qp_depth;
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
	return 0;
}

void
roce_perf_session_teardown(struct roce_perf_session *s)
{
	unsigned int i;

	for (i = 0; i < s->nqp; i++)
		s->ops->qp_destroy(s->ctx, s->qp[i].qpn);
	s->nqp = 0;
	if (s->have_mr && s->ops->mr_destroy(s->ctx, s->mr.key) != 0)
		perf_sess_err(s, "could not deregister MR 0x%x", s->mr.key);
	s->have_mr = false;
}

/* ---- jobs ---- */

static int
job_start(struct roce_perf_session *s, unsigned int i, uint64_t size, bool recv)
{
	const struct roce_perf_key *peer = &s->qp[i].peer;
	uint64_t off = perf_sess_local_off(s, i);
	struct roce_perf_job j = {
		.qpn = s->qp[i].qpn,
		.op = recv ? ROCE_PERF_JOB_RECV : verb_info[s->o.verb].op,
		.lkey = s->mr.key,
		.offset = recv ? off + s->slot / 2 : off,
		.length = size,
		.remote = !recv && s->o.verb != ROCE_PERF_VERB_SEND,
		.remote_addr = peer->vaddr,
		.rkey = peer->rkey,
		.depth = recv ? 0 : s->o.tx_depth,
		.lat = s->o.lat,
		/* perftest: the write_lat server and the send_lat client open the ping-pong. */
		.initiator = s->o.verb == ROCE_PERF_VERB_WRITE ? s->o.server : !s->o.server,
		.recv_offset = off + s->slot / 2,
	};

	if (s->o.duration > 0)
		j.duration_ms = (uint64_t)(s->o.duration * 1000);
	else
		j.count = s->o.iters;
	if (s->o.rate_gbps > 0 && !s->o.lat) {
		double mbps = s->o.rate_gbps * 1000 / s->o.qps;

		j.rate_mbps = mbps > 1 ? (uint64_t)mbps : 1;
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

/* What one poll of the jobs saw, and the run's result so far (bytes/s, messages/s). */
struct jobs_poll {
	uint64_t running;
	uint64_t bytes;
	uint64_t msgs;
	uint64_t errors;
	double peak_bps;
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

/*
 * Wait for every QP's job to end, telling a live line each second; sum their results.
 * @return 0, -EINTR, -EIO (a job failed) or an error of the backend.
 */
static int
jobs_wait(struct roce_perf_session *s, uint64_t size, struct roce_perf_result *res,
		struct roce_perf_rtt *rtt)
{
	double t0 = now_s(), next = t0 + 1, last_bytes = 0, last_t = t0, t, secs;
	unsigned int poll_ms = s->o.poll_ms != 0 ? s->o.poll_ms : PERF_POLL_MS;
	struct jobs_poll jp;
	int ret;

	memset(&jp, 0, sizeof(jp));
	do {
		/* Each poll is an RPC to the workers: rarely enough not to disturb what it
		 * measures. */
		perf_sess_sleep_ms(poll_ms);
		if (s->interrupted) {
			jobs_stop(s);
			return -EINTR;
		}
		if ((ret = jobs_poll(s, &jp)) != 0)
			return ret;
		t = now_s();
		if (t >= next && jp.running != 0 && s->ev.progress != NULL) {
			struct roce_perf_progress pr = {
				.secs = t - t0,
				.bw = (jp.bytes - last_bytes) / (t - last_t) / unit_div(s),
				.mpps = (double)jp.msgs / (t - t0) / 1e6,
				.msgs = jp.msgs,
				.errors = jp.errors,
			};

			s->ev.progress(s->ev.arg, &pr);
		}
		if (t >= next || jp.running == 0) {
			last_bytes = (double)jp.bytes;
			last_t = t;
			next = t + 1;
		}
	} while (jp.running != 0);
	secs = (double)(uint64_t)(jp.end_s * 1e9) / 1e9;
	memset(res, 0, sizeof(*res));
	res->size = size;
	res->iters = jp.msgs;
	res->bw_avg = secs > 0 ? (double)jp.bytes / secs : 0;
	res->msg_rate = secs > 0 ? (double)jp.msgs / secs : 0;
	res->bw_peak = jp.peak_bps < res->bw_avg ? res->bw_avg : jp.peak_bps;
	*rtt = jp.rtt;
	if (jp.errors != 0) {
		perf_sess_err(s, "%" PRIu64 " work requests failed (first: %s)", jp.errors,
				jp.first_error[0] != '\0' ? jp.first_error : "?");
		return -EIO;
	}
	return 0;
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
emit_result(const struct roce_perf_session *s, const struct roce_perf_result *r)
{
	if (s->ev.result != NULL)
		s->ev.result(s->ev.arg, r);
}

/* rtt holds post-to-post times: a round trip, halved for write/send as perftest. */
static void
lat_result(const struct roce_perf_session *s, struct roce_perf_result *r,
		const struct roce_perf_rtt *rtt)
{
	double div = (s->o.verb == ROCE_PERF_VERB_WRITE || s->o.verb == ROCE_PERF_VERB_SEND ?
			2 : 1) * 1000;

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
	s->qp[i].peer = *peer;
	memcpy(c.remote_gid, peer->gid, 16);
	perf_sess_gid_str(peer->gid, c.remote_ip, sizeof(c.remote_ip));
	return s->ops->qp_connect(s->ctx, &c);
}

static int
connect_peer(struct roce_perf_session *s, const struct roce_perf_key *peer, unsigned int nqps)
{
	unsigned int i;
	int ret;

	if ((ret = check_peer(s, peer, nqps)) != 0)
		return ret;
	for (i = 0; i < nqps; i++)
		if ((ret = connect_qp(s, i, &peer[i])) != 0)
			return ret;
	if ((ret = perf_sess_verify_prepare(s)) != 0)
		return ret;
	if (s->ev.header != NULL)
		s->ev.header(s->ev.arg, s);
	/* perftest's send_bw server posts its receives before the last barrier. */
	if (s->o.server && s->o.verb == ROCE_PERF_VERB_SEND && !s->o.lat) {
		uint64_t iters = s->o.iters;

		s->o.iters *= nb_sizes(s);
		for (i = 0; i < nqps && ret == 0; i++)
			ret = job_start(s, i, perf_sess_max_size(s), true);
		s->o.iters = iters;
	}
	return ret;
}

/* Whatever fails in a hook says so where it fails; the exchange adds no line of its own. */
static int
hook_connect(void *arg, const struct roce_perf_key *peer, unsigned int nqps)
{
	struct roce_perf_session *s = arg;
	int ret = connect_peer(s, peer, nqps);

	s->hook_failed = ret != 0;
	return ret;
}

/* Run every QP's job at one size and report it. */
static int
run_size(struct roce_perf_session *s, uint64_t size, struct roce_perf_result *res)
{
	struct roce_perf_rtt rtt;
	unsigned int i;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	for (i = 0; i < s->nqp && ret == 0; i++)
		ret = job_start(s, i, size, false);
	if (ret == 0)
		ret = jobs_wait(s, size, res, &rtt);
	if (ret != 0)
		return ret;
	if (s->o.lat)
		lat_result(s, res, &rtt);
	else
		bw_units(s, res);
	emit_result(s, res);
	return 0;
}

static int
run_traffic(struct roce_perf_session *s, struct roce_perf_report *rep)
{
	struct roce_perf_result res;
	uint64_t size = s->o.all ? 2 : s->o.size;
	int ret = 0;

	memset(&res, 0, sizeof(res));
	if (passive(s))
		return 0;
	for (; ret == 0 && size <= perf_sess_max_size(s); size *= 2) {
		ret = run_size(s, size, &res);
		if (ret == 0 && (ret = perf_sess_verify_check(s, size)) != 0)
			s->verified = "failed";
	}
	rep->size = res.size;
	rep->iters = res.iters;
	rep->bw_peak = s->o.lat ? 0 : res.bw_peak;
	rep->bw_avg = s->o.lat ? 0 : res.bw_avg;
	rep->msg_rate = s->o.lat ? 0 : res.msg_rate;
	return ret;
}

static int
hook_traffic(void *arg, struct roce_perf_report *rep)
{
	struct roce_perf_session *s = arg;
	int ret = run_traffic(s, rep);

	s->hook_failed = ret != 0;
	s->traffic_done = true;
	return ret;
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
	ret = jobs_wait(s, perf_sess_max_size(s), &res, &rtt);
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
		why = "the peer closed the connection";
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
	return s->o.duration > 0 ? (int)(s->o.duration * 1000) + s->o.oob_ms : -1;
}

static int
exchange(struct roce_perf_session *s)
{
	struct roce_perf_key *keys = calloc(s->nqp, sizeof(*keys));
	struct roce_perf_oob_cfg cfg = {
		.test = roce_perf_session_test(s),
		.role = s->o.server ? ROCE_PERF_SERVER : ROCE_PERF_CLIENT,
		.nqps = s->nqp,
		.timeout_ms = s->o.oob_ms,
		.traffic_timeout_ms = traffic_wait_ms(s),
		.local = { .page_size = PERF_PAGE, .cache_line = 64, .mtu = s->mtu_enum,
			.caps = (s->o.verify ? ROCE_PERF_CAP_PATTERN : 0) |
				(s->o.no_sr ? 0 : ROCE_PERF_CAP_SR) },
		.keys = keys,
		.hooks = { hook_connect, hook_traffic, s },
	};
	unsigned int i;
	int fd, ret;

	if (keys == NULL)
		return -ENOMEM;
	for (i = 0; i < s->nqp; i++)
		keys[i] = s->qp[i].local;
	fd = perf_sess_tcp_open(s);
	if (fd < 0) {
		free(keys);
		return s->interrupted ? -EINTR : fd;
	}
	s->oob_fd = fd;
	/* an interrupt between the open and here has not seen the socket */
	if (s->interrupted)
		shutdown(fd, SHUT_RDWR);
	ret = roce_perf_oob_run(fd, &cfg, &s->oob);
	s->oob_fd = -1;
	close(fd);
	free(keys);
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
	if (ret == 0 && (ret = server_report(s)) == 0 && s->o.server && s->o.verify &&
			!s->o.lat) {
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

	s->interrupted = 1;
	/* The exchange retries poll() on EINTR: shutting its socket (async-signal-safe) is
	 * what ends a wait for the peer. */
	if (fd >= 0)
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
opts_valid(const struct roce_perf_opts *o)
{
	return (unsigned int)o->verb < ROCE_PERF_VERB_MAX && o->qps >= 1 &&
		o->qps <= ROCE_PERF_OOB_MAX_QPS && o->tx_depth >= 1 && o->size >= 1 &&
		(o->server || o->peer != NULL) && (!o->lat || o->qps == 1) &&
		(o->mtu == 0 || (o->mtu >= 256 && o->mtu <= 4096 && (o->mtu & (o->mtu - 1)) == 0));
}

struct roce_perf_session *
roce_perf_session_create(const struct roce_perf_opts *o, const struct roce_perf_backend_ops *ops,
		void *ctx, const struct roce_perf_events *ev)
{
	struct roce_perf_session *s;

	if (o == NULL || !opts_valid(o) || !ops_valid(ops)) {
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
	return s;
}

void
roce_perf_session_destroy(struct roce_perf_session *s)
{
	if (s == NULL)
		return;
	roce_perf_session_teardown(s);
	free(s->qp);
	free(s);
}
