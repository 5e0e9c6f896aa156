/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Traffic jobs: keep a QP busy with one operation for a count or a duration (bandwidth), keep
 * its receive queue full, or play one side of a perftest latency ping-pong; and account for
 * the completions. They run inside the worker loop that owns the QP, one job per QP.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "dp_private.h"
#include "roce_grh.h"
#include "stages.h"

static struct dp_job *
job_find(struct roce_worker *w, uint32_t qpn)
{
	uint32_t i;

	for (i = 0; i < w->nb_jobs; i++)
		if (w->jobs[i].conf.qpn == qpn)
			return &w->jobs[i];
	return NULL;
}


/*
 * A bandwidth job whose own requests carry its data (WRITE, SEND) keeps its rate through the
 * worker's pacer: its packets leave at the rate, in the pacer's bursts. The rate is of
 * payload, as perftest's; the pacer's limit is on the wire, so the job converts with its
 * message's packets (the pacer's per-packet overhead; a RETH is not counted). READ and
 * atomics, whose data are the peer's responses, keep posting at the rate instead.
 */
static void
job_pace_begin(struct dp_job *job)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_qp_attr a;
	uint64_t pkts, wire;
	uint32_t mtu;

	if (c->rate_bps == 0 || c->size == 0 ||
			(c->mode != ROCE_GEN_BW && c->mode != ROCE_GEN_BW_BIDI) ||
			(c->op != ROCE_WR_RDMA_WRITE && c->op != ROCE_WR_RDMA_WRITE_WITH_IMM &&
			 c->op != ROCE_WR_SEND && c->op != ROCE_WR_SEND_WITH_IMM) ||
			roce_qp_query(job->qp, &a) != 0 || (mtu = roce_mtu_bytes(a.path_mtu)) == 0)
		return;
	pkts = (c->size + mtu - 1) / mtu;
	wire = c->size + pkts * ROCE_CC_PKT_OVERHEAD_DEFAULT;
	/* Without a pacer (no memory, no room): posts at the rate, as before. */
	if (dp_cc_pace(job->w, job->qp, (uint64_t)((double)c->rate_bps * wire / c->size + 0.5))
			== 0)
		job->paced = 1;
}

static void
job_pace_end(struct dp_job *job)
{
	if (!job->paced)
		return;
	job->paced = 0;
	dp_cc_unpace(job->w, job->qp);
}

static void
job_free(struct dp_job *job)
{
	job_pace_end(job);
	rte_free(job->hist);
	memset(job, 0, sizeof(*job));
}

/*
 * Parking: a bandwidth or receive job with all it may post in flight has nothing to do until
 * a completion arrives, so its CQ is armed and the worker loop skips it (thousands of QPs
 * would otherwise cost a CQ poll each per loop). Its CQ was drained by the step that parks
 * it and only the engine, on this thread, adds completions: none can be missed.
 */
static void
job_wake(void *arg)
{
	struct dp_job *job = arg;

	job->w->job_parked[job - job->w->jobs] = 0;
}

static void
job_park(struct roce_worker *w, uint32_t i)
{
	w->job_parked[i] = 1;
	roce_cq_req_notify(w->jobs[i].conf.cq, job_wake, &w->jobs[i]);
}

static void
job_unpark(struct roce_worker *w, uint32_t i)
{
	w->job_parked[i] = 0;
	if (w->jobs[i].conf.cq != NULL)
		roce_cq_req_notify(w->jobs[i].conf.cq, NULL, NULL);
}

/* Whether a job only waits for completions. */
static int
job_waits(const struct dp_job *job, uint64_t now)
{
	uint64_t inflight = job->st.posted - job->st.completed - job->st.errors;
	uint32_t batch = job->conf.post_list > 1 ? job->conf.post_list : 1;
	int posting = dp_job_posting(job, now);

	/* a moderated job's unsignaled tail completes without a CQE to wake it (bw_tail) */
	return job->eng->parks && (job->conf.rate_bps == 0 || job->paced) && job->st.running &&
		!job->stopping && inflight != 0 && (posting || job->conf.cq_mod <= 1) &&
		(inflight + batch > job->conf.depth || !posting);
}

/* Remove job @p i, keeping the array dense. */
static void
job_remove(struct roce_worker *w, uint32_t i)
{
	job_unpark(w, i);
	job_free(&w->jobs[i]);
	if (i != --w->nb_jobs) {
		w->jobs[i] = w->jobs[w->nb_jobs];
		memset(&w->jobs[w->nb_jobs], 0, sizeof(w->jobs[0]));
		/* Its CQ's callback knows it by address. */
		if (w->job_parked[w->nb_jobs] && w->jobs[i].st.running)
			job_park(w, i);
		else
			w->job_parked[i] = w->job_parked[w->nb_jobs];
	}
	w->job_parked[w->nb_jobs] = 0;
}

static const struct dp_gen_engine *const engines[];

static int
gen_check(const struct roce_gen_conf *c)
{
	const struct dp_gen_engine *e;

	if ((unsigned int)c->mode >= ROCE_GEN_MODE_NUM)
		return -EINVAL;
	/* only a bandwidth job counts one completion as many */
	if (c->cq_mod > 1 && c->mode != ROCE_GEN_BW)
		return -EINVAL;
	e = engines[c->mode];
	return e->check != NULL ? e->check(c) : 0;
}

/* The modes whose messages a UD QP can carry: SENDs (with an AH) and receives. */
static int
gen_check_ud(const struct roce_gen_conf *c)
{
	bool sends = c->mode != ROCE_GEN_RECV;

	if (c->mode != ROCE_GEN_BW && c->mode != ROCE_GEN_RECV && c->mode != ROCE_GEN_LAT_SEND &&
			c->mode != ROCE_GEN_BW_BIDI && c->mode != ROCE_GEN_LAT_RTT &&
			c->mode != ROCE_GEN_PINGPONG)
		return -EINVAL;
	if (sends && ((c->op != ROCE_WR_SEND && c->op != ROCE_WR_SEND_WITH_IMM) ||
			c->ah == NULL || c->remote_qpn > ROCE_24BIT_MASK))
		return -EINVAL;
	return c->size > UINT32_MAX - ROCE_GRH_LEN ? -EINVAL : 0;
}

static int
gen_start(struct roce_worker *w, void *arg)
{
	const struct roce_gen_conf *c = arg;
	struct roce_qp *qp = roce_engine_qp(w->eng, c->qpn);
	struct dp_job *job = job_find(w, c->qpn);
	int ret = gen_check(c);

	if (ret != 0)
		return ret;
	if (qp == NULL)
		return -ENOENT;
	if (roce_qp_type(qp) == ROCE_QPT_UD && (ret = gen_check_ud(c)) != 0)
		return ret;
	if (job != NULL && job->st.running)
		return -EBUSY;
	if (job == NULL) {
		if (w->nb_jobs == w->max_jobs)
			return -ENOSPC;
		job = &w->jobs[w->nb_jobs++];
	} else {
		job_unpark(w, (uint32_t)(job - w->jobs));
		job_free(job);
	}
	w->job_parked[job - w->jobs] = 0;
	job->conf = *c;
	job->eng = engines[c->mode];
	job->w = w;
	job->qp = qp;
	job->recv_len = c->size + (roce_qp_type(qp) == ROCE_QPT_UD ? ROCE_GRH_LEN : 0);
	if (job->conf.cq == NULL) {
		struct roce_qp_init_attr init;

		/* The QP's own CQ: the job consumes its completions. */
		roce_qp_query_init(qp, &init);
		job->conf.cq = init.send_cq;
	}
	if (job->conf.depth == 0)
		job->conf.depth = 64;
	if (job->eng->latency) {
		job->hist = rte_zmalloc_socket("roce_hist", sizeof(*job->hist), 0, w->socket);
		if (job->hist == NULL) {
			memset(job, 0, sizeof(*job));
			w->nb_jobs--;
			return -ENOMEM;
		}
	}
	job->st.running = 1;
	job->st.start_ns = job->st.end_ns = job->win_ns = roce_dp_now();
	job_pace_begin(job);
	return 0;
}

static int
gen_stop(struct roce_worker *w, void *arg)
{
	struct dp_job *job = job_find(w, *(const uint32_t *)arg);

	if (job == NULL)
		return -ENOENT;
	job->stopping = 1;
	job_unpark(w, (uint32_t)(job - w->jobs));
	return 0;
}

struct gen_query {
	uint32_t qpn;
	struct roce_gen_stats st;
	struct roce_hist *hist;
};

static int
gen_query(struct roce_worker *w, void *arg)
{
	struct gen_query *q = arg;
	struct dp_job *job = job_find(w, q->qpn);

	if (job == NULL)
		return -ENOENT;
	q->st = job->st;
	if (q->hist != NULL) {
		if (job->hist != NULL)
			*q->hist = *job->hist;
		else
			memset(q->hist, 0, sizeof(*q->hist));
	}
	return 0;
}

/* Peak rate: the best window of at least ROCE_GEN_PEAK_NS that ended with a completion. */
static void
job_window(struct dp_job *job, uint64_t now)
{
	uint64_t dt = now - job->win_ns, bps;

	if (dt < ROCE_GEN_PEAK_NS)
		return;
	bps = (job->st.bytes - job->win_bytes) * 1000000000ull / dt;
	if (bps > job->st.peak_bps)
		job->st.peak_bps = bps;
	job->win_ns = now;
	job->win_bytes = job->st.bytes;
}

void
dp_job_error(struct dp_job *job, enum roce_wc_status status)
{
	if (job->st.errors++ == 0)
		job->st.first_error = status;
}

static void
gen_mr_revoke(struct roce_worker *w, uint32_t lkey)
{
	uint32_t i;

	for (i = 0; i < w->nb_jobs; i++) {
		struct dp_job *job = &w->jobs[i];

		if (!job->st.running || job->conf.lkey != lkey)
			continue;
		/* Latency and mixed jobs hold host pointers into it: they stop here. */
		dp_job_error(job, ROCE_WC_LOC_PROT_ERR);
		job->st.running = 0;
		job->st.end_ns = roce_dp_now();
		job->conf.post_byte = NULL;
		job->conf.poll_byte = NULL;
		job->conf.lbuf = NULL;
	}
}

/* An AH going away: the jobs sending through it stop, in error, as those of a revoked MR. */
static void
gen_ah_revoke(struct roce_worker *w, const struct roce_ah *ah)
{
	uint32_t i;

	for (i = 0; i < w->nb_jobs; i++) {
		struct dp_job *job = &w->jobs[i];

		if (job->conf.ah != ah)
			continue;
		job->conf.ah = NULL;
		if (!job->st.running)
			continue;
		dp_job_error(job, ROCE_WC_LOC_QP_OP_ERR);
		job->st.running = 0;
		job->st.end_ns = roce_dp_now();
	}
}

int
dp_job_posting(const struct dp_job *job, uint64_t now)
{
	const struct roce_gen_conf *c = &job->conf;

	return !job->stopping && job->st.errors == 0 &&
		(c->count == 0 || job->st.posted < c->count) &&
		(c->duration_ns == 0 || now < job->st.start_ns + c->duration_ns);
}

/*
 * Whether the next send asks for its completion. With CQ moderation, every cq_mod-th does,
 * and so does the one that fills the window (the job then waits for a completion: one must
 * come whatever cq_mod and the post list are) and the last of a counted job.
 */
static inline int
job_signals(const struct dp_job *job)
{
	const struct roce_gen_conf *c = &job->conf;
	uint64_t n = job->st.posted + 1;
	uint32_t batch = c->post_list > 1 ? c->post_list : 1;

	return c->cq_mod <= 1 || n % c->cq_mod == 0 || n == c->count ||
		n - job->st.completed - job->st.errors + batch > c->depth;
}

/* The fields one message needs, set one by one: zeroing whole WRs (eight SGEs each) showed
 * in profiles of small-message streams. */
static int
job_post_one(struct dp_job *job)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_send_wr wr;

	wr.wr_id = job->st.posted;
	wr.opcode = c->op;
	wr.send_flags = job_signals(job) ? ROCE_SEND_SIGNALED : 0;
	if ((c->op == ROCE_WR_SEND || c->op == ROCE_WR_RDMA_WRITE) && c->size <= 64 &&
			job->eng->latency)
		wr.send_flags |= ROCE_SEND_INLINE;
	wr.num_sge = 1;
	wr.sg_list[0] = (struct roce_sge){ c->laddr, c->size, c->lkey };
	wr.imm_data = 0;
	wr.remote_addr = c->raddr;
	wr.rkey = c->rkey;
	wr.compare_add = 1;
	wr.swap = 0;
	/* read by UD QPs only */
	wr.ud.ah = c->ah;
	wr.ud.remote_qpn = c->remote_qpn;
	wr.ud.remote_qkey = c->remote_qkey;
	return roce_post_send(job->qp, &wr);
}

static int
job_post_recv(struct dp_job *job)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_recv_wr rwr;

	rwr.wr_id = job->st.posted;
	rwr.num_sge = 1;
	rwr.sg_list[0] = (struct roce_sge){ c->laddr, job->recv_len, c->lkey };
	return roce_post_recv(job->qp, &rwr);
}

/* ---- bandwidth and receive jobs ---- */

/*
 * Account a send job's completion of work request @p wc->wr_id (the job's post index): the
 * RC and UD send queues complete in order, so the unsignaled ones before it succeeded.
 */
static void
bw_account_send(struct dp_job *job, const struct roce_wc *wc)
{
	uint64_t done = job->st.completed + job->st.errors;
	/* bounded: a CQ shared with other work may hold completions of other WRs */
	uint64_t ok = wc->wr_id >= done && wc->wr_id < job->st.posted ? wc->wr_id - done : 0;

	if (wc->status == ROCE_WC_SUCCESS)
		ok++;
	else
		dp_job_error(job, wc->status);
	job->st.completed += ok;
	job->st.bytes += ok * job->conf.size;
}

static void
bw_complete(struct dp_job *job, uint64_t now, bool recv)
{
	struct roce_wc wc[DP_BURST];
	int n, i;

	while ((n = roce_cq_poll(job->conf.cq, wc, DP_BURST)) > 0) {
		for (i = 0; i < n; i++) {
			if (!recv) {
				bw_account_send(job, &wc[i]);
			} else if (wc[i].status == ROCE_WC_SUCCESS) {
				job->st.completed++;
				/* a UD receive's byte_len counts the GRH area too */
				job->st.bytes += wc[i].byte_len - (job->recv_len - job->conf.size);
			} else {
				dp_job_error(job, wc[i].status);
			}
		}
		job->st.end_ns = now;
		job_window(job, now);
	}
}

/* A moderated send job that has stopped posting: its unsignaled tail is done once the send
 * queue is empty (an error would have completed with a status, polled before this). */
static void
bw_tail(struct dp_job *job, uint64_t now)
{
	uint64_t left = job->st.posted - job->st.completed - job->st.errors;

	if (left == 0 || roce_qp_sq_outstanding(job->qp) != 0)
		return;
	job->st.completed += left;
	job->st.bytes += left * job->conf.size;
	job->st.end_ns = now;
}

/* Pacing: whether the next message stays within the job's rate since it started (the pacer
 * holds a paced job's QP to it instead). */
static int
bw_paced(const struct dp_job *job, uint64_t now)
{
	const struct roce_gen_conf *c = &job->conf;

	return c->rate_bps == 0 || job->paced || (double)job->st.posted * c->size * 8e9 <=
		(double)c->rate_bps * (double)(now - job->st.start_ns);
}

/* Keep @depth work requests in flight, posted by @post (sends, or receives with @recv), in
 * lists of conf.post_list when it is set (the last one may be shorter). */
static void
stream_step(struct dp_job *job, uint64_t now, int (*post)(struct dp_job *job), bool recv)
{
	uint32_t batch = job->conf.post_list > 1 ? job->conf.post_list : 1, i;

	bw_complete(job, now, recv);
	while (dp_job_posting(job, now) && bw_paced(job, now) &&
			job->st.posted - job->st.completed - job->st.errors + batch <=
			job->conf.depth) {
		for (i = 0; i < batch && dp_job_posting(job, now); i++) {
			if (post(job) != 0)
				goto full;
			job->st.posted++;
		}
	}
full:
	if (!recv && job->conf.cq_mod > 1 && !dp_job_posting(job, now))
		bw_tail(job, now);
	/* Done once nothing more may go and everything posted has completed; a stopped
	 * receive job leaves its receives posted. */
	if (!dp_job_posting(job, now) && (job->st.completed + job->st.errors == job->st.posted ||
			(job->stopping && recv)))
		job->st.running = 0;
}

static void
bw_step(struct dp_job *job, uint64_t now)
{
	stream_step(job, now, job_post_one, false);
}

static void
recv_step(struct dp_job *job, uint64_t now)
{
	stream_step(job, now, job_post_recv, true);
}

/* ---- latency ping-pong (perftest's run_iter_lat*, without blocking) ---- */

/* Post the next message; the sample is the time since the previous post. */
static void
lat_send(struct dp_job *job, uint64_t now)
{
	if (job->conf.mode == ROCE_GEN_LAT_WRITE)
		*job->conf.post_byte = (uint8_t)(job->st.posted + 1);
	if (job_post_one(job) != 0) {
		dp_job_error(job, ROCE_WC_GENERAL_ERR);
		return;
	}
	DP_STAGE(job->w, post, job->st.posted != 0 || !job->conf.initiator);
	if (job->st.posted > 0)
		roce_hist_add(job->hist, now - job->last_post_ns);
	job->last_post_ns = now;
	job->st.posted++;
	job->st.bytes += job->conf.size;
	job->lat_wait_cq = 1;
}

/* Consume completions: our send's, and for LAT_SEND the peer's message (then re-post). */
static void
lat_complete(struct dp_job *job, uint64_t now)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_wc wc[DP_BURST];
	int n, i;

	while ((n = roce_cq_poll(c->cq, wc, DP_BURST)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].status != ROCE_WC_SUCCESS) {
				dp_job_error(job, wc[i].status);
			} else if (wc[i].opcode & ROCE_WC_RECV) {
				struct roce_recv_wr rwr;

				/* field by field: a zeroed WR (eight SGEs) is a rep stos */
				rwr.wr_id = 0;
				rwr.num_sge = 1;
				rwr.sg_list[0] = (struct roce_sge){ c->recv_laddr, job->recv_len,
					c->lkey };
				job->st.received++;
				/* with a count, exactly that many receives in all: one left posted
				 * would take the next job's (larger) message */
				if (c->count != 0 && job->recv_posted >= c->count)
					continue;
				if (roce_post_recv(job->qp, &rwr) != 0)
					dp_job_error(job, ROCE_WC_GENERAL_ERR);
				job->recv_posted++;
			} else {
				job->st.completed++;
				job->lat_wait_cq = 0;
			}
		}
		job->st.end_ns = now;
	}
}

/* Note the peer's messages: up to @p want for LAT_WRITE (the byte shows only the latest). */
static void
lat_seen(struct dp_job *job, uint64_t want)
{
	if (job->conf.mode == ROCE_GEN_LAT_SEND)
		job->seen = job->st.received;
	else if (job->seen < want && *job->conf.poll_byte == (uint8_t)want)
		job->seen = want;
}

static void
lat_step(struct dp_job *job, uint64_t now)
{
	const struct roce_gen_conf *c = &job->conf;
	uint64_t want;

	lat_complete(job, now);
	if (job->st.errors != 0) {
		job->st.running = 0;
		return;
	}
	if (job->lat_wait_cq)
		return;
	/* Before message k we need the peer's k (or k - 1 when we opened the exchange). */
	want = c->initiator ? job->st.posted : job->st.posted + 1;
	if (c->mode != ROCE_GEN_LAT_RTT)
		lat_seen(job, want);
	if (!dp_job_posting(job, now)) {
		/* The opener waits for the answer to its last message, unless time is up. */
		if (c->mode == ROCE_GEN_LAT_RTT || !c->initiator || job->seen >= want ||
				job->stopping || (c->count != 0 && job->st.posted < c->count))
			job->st.running = 0;
		return;
	}
	if (c->mode != ROCE_GEN_LAT_RTT && !(job->st.posted == 0 && c->initiator) &&
			job->seen < want)
		return;
	lat_send(job, now);
}

/* LAT_SEND: keep receives posted for the peer's messages. */
static int
lat_prepost(struct dp_job *job)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_recv_wr rwr = { .num_sge = 1,
		.sg_list = {{ c->recv_laddr, job->recv_len, c->lkey }} };
	uint32_t i;

	for (i = 0; i < c->depth && (c->count == 0 || job->recv_posted < c->count); i++) {
		if (roce_post_recv(job->qp, &rwr) != 0)
			return i == 0 ? -ENOMEM : 0;
		job->recv_posted++;
	}
	return 0;
}

/* ---- bidirectional SEND (perftest's send_bw -b): ours and the peer's on one QP ---- */

static int
bidi_post_recv(struct dp_job *job)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_recv_wr rwr = { .wr_id = job->recv_posted, .num_sge = 1,
		.sg_list = {{ c->recv_laddr, job->recv_len, c->lkey }} };
	int ret = roce_post_recv(job->qp, &rwr);

	if (ret == 0)
		job->recv_posted++;
	return ret;
}

/* Receives for the peer's messages: as many as the queue holds, never more than the count. */
static int
bidi_begin(struct dp_job *job)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_qp_init_attr init;
	uint32_t i;

	roce_qp_query_init(job->qp, &init);
	for (i = 0; i < init.max_recv_wr && (c->count == 0 || job->recv_posted < c->count); i++)
		if (bidi_post_recv(job) != 0)
			return i == 0 ? -ENOMEM : 0;
	return 0;
}

static void
bidi_step(struct dp_job *job, uint64_t now)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_wc wc[DP_BURST];
	int n, i;

	while ((n = roce_cq_poll(c->cq, wc, DP_BURST)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].status != ROCE_WC_SUCCESS) {
				dp_job_error(job, wc[i].status);
			} else if (wc[i].opcode & ROCE_WC_RECV) {
				job->st.received++;
				if (!job->stopping && (c->count == 0 ||
						job->recv_posted < c->count) &&
						bidi_post_recv(job) != 0)
					dp_job_error(job, ROCE_WC_GENERAL_ERR);
			} else {
				job->st.completed++;
				job->st.bytes += c->size;
			}
		}
		job->st.end_ns = now;
		job_window(job, now);
	}
	while (dp_job_posting(job, now) && bw_paced(job, now) &&
			job->st.posted - job->st.completed - job->st.errors < c->depth) {
		if (job_post_one(job) != 0)
			break;
		job->st.posted++;
	}
	/* ours sent and completed, and with a count the peer's received too */
	if (!dp_job_posting(job, now) && job->st.completed + job->st.errors == job->st.posted &&
			(c->count == 0 || job->stopping || job->st.errors != 0 ||
			job->st.received >= c->count))
		job->st.running = 0;
}

static int
lat_write_check(const struct roce_gen_conf *c)
{
	return c->post_byte == NULL || c->poll_byte == NULL || c->size == 0 ? -EINVAL : 0;
}

static const struct dp_gen_engine gen_bw = {
	.name = "bw", .step = bw_step, .parks = 1,
};
static const struct dp_gen_engine gen_recv = {
	.name = "recv", .step = recv_step, .parks = 1,
};
static const struct dp_gen_engine gen_lat_write = {
	.name = "lat_write", .check = lat_write_check, .step = lat_step, .latency = 1,
};
static const struct dp_gen_engine gen_lat_send = {
	.name = "lat_send", .begin = lat_prepost, .step = lat_step, .latency = 1,
};
static const struct dp_gen_engine gen_bw_bidi = {
	.name = "bw_bidi", .begin = bidi_begin, .step = bidi_step,
};
static const struct dp_gen_engine gen_lat_rtt = {
	.name = "lat_rtt", .step = lat_step, .latency = 1,
};

/* The engine of each mode. */
static const struct dp_gen_engine *const engines[ROCE_GEN_MODE_NUM] = {
	[ROCE_GEN_BW] = &gen_bw,
	[ROCE_GEN_RECV] = &gen_recv,
	[ROCE_GEN_LAT_WRITE] = &gen_lat_write,
	[ROCE_GEN_LAT_SEND] = &gen_lat_send,
	[ROCE_GEN_LAT_RTT] = &gen_lat_rtt,
	[ROCE_GEN_MIXED] = &dp_gen_mixed,
	[ROCE_GEN_MIXED_RECV] = &dp_gen_mixed_recv,
	[ROCE_GEN_BW_BIDI] = &gen_bw_bidi,
	[ROCE_GEN_PINGPONG] = &dp_gen_pingpong,
};

/* Progress of a job: what it posted, completed and received. */
static uint64_t
job_progress(const struct dp_job *job)
{
	return job->st.posted + job->st.completed + job->st.received + job->st.errors;
}

static unsigned int
gen_poll(struct roce_worker *w, uint64_t now)
{
	unsigned int work = 0;
	uint32_t i;

	for (i = 0; i < w->nb_jobs; i++) {
		struct dp_job *job;
		uint64_t before;

		if (w->job_parked[i])
			continue;
		job = &w->jobs[i];
		if (!job->st.running) {
			w->job_parked[i] = 1;   /* finished: nothing until it starts again */
			job_pace_end(job);
			continue;
		}
		before = job_progress(job);
		job->eng->step(job, now);
		/* A latency job watches memory for the peer's write: it must not be put to
		 * sleep. Others only count when they moved, so a worker waiting for ACKs may
		 * still yield a CPU it shares with the workers that carry its traffic. */
		work += job->eng->latency || job_progress(job) != before;
		if (job_waits(job, now))
			job_park(w, i);
	}
	return work;
}

static int
gen_prepare(struct roce_worker *w, void *arg)
{
	const struct roce_gen_conf *c = arg;
	struct dp_job *job;
	int ret = gen_start(w, arg);

	if (ret != 0)
		return ret;
	job = job_find(w, c->qpn);
	if (job->eng->begin == NULL)
		return 0;
	ret = job->eng->begin(job);
	if (ret != 0)
		job_remove(w, (uint32_t)(job - w->jobs));
	return ret;
}

static void
gen_qp_gone(struct roce_worker *w, uint32_t qpn)
{
	struct dp_job *job = job_find(w, qpn);

	if (job != NULL)
		job_remove(w, (uint32_t)(job - w->jobs));
}

static int
gen_init(struct roce_worker *w)
{
	uint32_t max_jobs = w->dp->conf.max_qps != 0 ? w->dp->conf.max_qps : 1024;

	w->jobs = rte_zmalloc_socket("roce_jobs", max_jobs * sizeof(w->jobs[0]), 0, w->socket);
	w->job_parked = rte_zmalloc_socket("roce_jobs", max_jobs, 0, w->socket);
	w->max_jobs = max_jobs;
	return w->jobs == NULL || w->job_parked == NULL ? -ENOMEM : 0;
}

static void
gen_fini(struct roce_worker *w)
{
	while (w->nb_jobs > 0)
		job_remove(w, w->nb_jobs - 1);
	rte_free(w->jobs);
	rte_free(w->job_parked);
	w->jobs = NULL;
	w->job_parked = NULL;
}

int
roce_dp_gen_start(struct roce_dp *dp, const struct roce_gen_conf *conf)
{
	int owner = roce_dp_qpn_owner(dp, conf->qpn);

	if (owner < 0)
		return -ENOENT;
	/* A paced job may start the worker's pacer with the daemon's settings. */
	dp_cc_conf_init(dp);
	return roce_dp_call(dp, (unsigned int)owner, gen_prepare, (void *)(uintptr_t)conf, 5000);
}

int
roce_dp_gen_stop(struct roce_dp *dp, uint32_t qpn)
{
	int owner = roce_dp_qpn_owner(dp, qpn);

	if (owner < 0)
		return -ENOENT;
	return roce_dp_call(dp, (unsigned int)owner, gen_stop, &qpn, 5000);
}

struct gen_total_rpc {
	const uint32_t *qpns;
	uint32_t nb_qpns;
	struct roce_gen_total *t;
};

static int
qpn_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int
gen_total(struct roce_worker *w, void *arg)
{
	const struct gen_total_rpc *r = arg;
	struct roce_gen_total *t = r->t;
	uint32_t i;

	for (i = 0; i < w->nb_jobs; i++) {
		const struct roce_gen_stats *s = &w->jobs[i].st;

		if (r->qpns != NULL && bsearch(&w->jobs[i].conf.qpn, r->qpns, r->nb_qpns,
				sizeof(r->qpns[0]), qpn_cmp) == NULL)
			continue;
		t->jobs++;
		t->running += s->running;
		t->posted += s->posted;
		t->completed += s->completed;
		t->received += s->received;
		t->bytes += s->bytes;
		t->peak_bps += s->peak_bps;
		t->verify_errors += s->verify_errors;
		t->max_ns = RTE_MAX(t->max_ns, s->end_ns - s->start_ns);
		if (s->errors != 0 && t->errors == 0)
			t->first_error = s->first_error;
		t->errors += s->errors;
	}
	return 0;
}

int
roce_dp_gen_total(struct roce_dp *dp, uint32_t *qpns, uint32_t nb_qpns,
		struct roce_gen_total *total)
{
	struct gen_total_rpc r = { qpns, nb_qpns, total };
	unsigned int i;
	int ret;

	memset(total, 0, sizeof(*total));
	if (qpns != NULL)
		qsort(qpns, nb_qpns, sizeof(*qpns), qpn_cmp);
	for (i = 0; i < roce_dp_nb_workers(dp); i++) {
		ret = roce_dp_call(dp, i, gen_total, &r, 5000);
		if (ret != 0)
			return ret;
	}
	return 0;
}

int
roce_dp_gen_stats(struct roce_dp *dp, uint32_t qpn, struct roce_gen_stats *st,
		struct roce_hist *hist)
{
	struct gen_query q = { .qpn = qpn, .hist = hist };
	int owner = roce_dp_qpn_owner(dp, qpn), ret;

	if (owner < 0)
		return -ENOENT;
	ret = roce_dp_call(dp, (unsigned int)owner, gen_query, &q, 5000);
	if (ret == 0)
		*st = q.st;
	return ret;
}

const struct dp_service dp_gen_service = {
	.name = "traffic generator",
	.init = gen_init,
	.fini = gen_fini,
	.poll = gen_poll,
	.mr_revoke = gen_mr_revoke,
	.qp_gone = gen_qp_gone,
	.ah_revoke = gen_ah_revoke,
};
