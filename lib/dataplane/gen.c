/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Traffic jobs: keep a QP's send queue full of one operation for a count or a duration, and
 * account for the completions. They run inside the worker loop that owns the QP.
 */
#include <errno.h>
#include <string.h>

#include "dp_private.h"

static struct dp_job *
job_find(struct roce_worker *w, uint32_t qpn)
{
	uint32_t i;

	for (i = 0; i < DP_MAX_JOBS; i++)
		if (w->jobs[i].used && w->jobs[i].conf.qpn == qpn)
			return &w->jobs[i];
	return NULL;
}

static int
gen_start(struct roce_worker *w, void *arg)
{
	const struct roce_gen_conf *c = arg;
	struct roce_qp *qp = roce_engine_qp(w->eng, c->qpn);
	struct dp_job *job = job_find(w, c->qpn);
	uint32_t i;

	if (qp == NULL)
		return -ENOENT;
	if (job != NULL && job->st.running)
		return -EBUSY;
	for (i = 0; job == NULL && i < DP_MAX_JOBS; i++)
		if (!w->jobs[i].used)
			job = &w->jobs[i];
	if (job == NULL)
		return -ENOSPC;
	memset(job, 0, sizeof(*job));
	job->used = 1;
	job->conf = *c;
	job->qp = qp;
	if (job->conf.depth == 0)
		job->conf.depth = 64;
	job->st.running = 1;
	job->st.start_ns = job->st.end_ns = roce_dp_now();
	return 0;
}

static int
gen_stop(struct roce_worker *w, void *arg)
{
	struct dp_job *job = job_find(w, *(const uint32_t *)arg);

	if (job == NULL)
		return -ENOENT;
	job->stopping = 1;
	return 0;
}

struct gen_query {
	uint32_t qpn;
	struct roce_gen_stats st;
};

static int
gen_query(struct roce_worker *w, void *arg)
{
	struct gen_query *q = arg;
	struct dp_job *job = job_find(w, q->qpn);

	if (job == NULL)
		return -ENOENT;
	q->st = job->st;
	return 0;
}

static void
job_complete(struct dp_job *job, uint64_t now)
{
	struct roce_wc wc[DP_BURST];
	int n, i;

	while ((n = roce_cq_poll(job->conf.cq, wc, DP_BURST)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].status == ROCE_WC_SUCCESS) {
				job->st.completed++;
				job->st.bytes += job->conf.size;
			} else if (job->st.errors++ == 0) {
				job->st.first_error = wc[i].status;
			}
		}
		job->st.end_ns = now;
	}
}

/* Whether the job may post more. */
static int
job_posting(const struct dp_job *job, uint64_t now)
{
	const struct roce_gen_conf *c = &job->conf;

	return !job->stopping && job->st.errors == 0 &&
		(c->count == 0 || job->st.posted < c->count) &&
		(c->duration_ns == 0 || now < job->st.start_ns + c->duration_ns);
}

static void
job_post(struct dp_job *job, uint64_t now)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_send_wr wr = {
		.opcode = c->op,
		.send_flags = ROCE_SEND_SIGNALED,
		.num_sge = 1,
		.sg_list = {{ c->laddr, c->size, c->lkey }},
		.remote_addr = c->raddr,
		.rkey = c->rkey,
		.compare_add = 1,
	};

	struct roce_recv_wr rwr = { .num_sge = 1, .sg_list = {{ c->laddr, c->size, c->lkey }} };

	while (job_posting(job, now) &&
			job->st.posted - job->st.completed - job->st.errors < c->depth) {
		wr.wr_id = rwr.wr_id = job->st.posted;
		if ((c->recv ? roce_post_recv(job->qp, &rwr) : roce_post_send(job->qp, &wr)) != 0)
			break;
		job->st.posted++;
	}
}

void
dp_gen_poll(struct roce_worker *w, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < DP_MAX_JOBS; i++) {
		struct dp_job *job = &w->jobs[i];

		if (!job->used || !job->st.running)
			continue;
		job_complete(job, now);
		job_post(job, now);
		/* Done once nothing more may go and everything posted has completed. */
		if (!job_posting(job, now) &&
				job->st.completed + job->st.errors == job->st.posted)
			job->st.running = 0;
	}
}

void
roce_worker_gen_forget(struct roce_worker *w, uint32_t qpn)
{
	struct dp_job *job = job_find(w, qpn);

	if (job != NULL)
		memset(job, 0, sizeof(*job));
}

int
roce_dp_gen_start(struct roce_dp *dp, const struct roce_gen_conf *conf)
{
	int owner = roce_dp_qpn_owner(dp, conf->qpn);

	if (owner < 0)
		return -ENOENT;
	return roce_dp_call(dp, (unsigned int)owner, gen_start, (void *)(uintptr_t)conf, 5000);
}

int
roce_dp_gen_stop(struct roce_dp *dp, uint32_t qpn)
{
	int owner = roce_dp_qpn_owner(dp, qpn);

	if (owner < 0)
		return -ENOENT;
	return roce_dp_call(dp, (unsigned int)owner, gen_stop, &qpn, 5000);
}

int
roce_dp_gen_stats(struct roce_dp *dp, uint32_t qpn, struct roce_gen_stats *st)
{
	struct gen_query q = { .qpn = qpn };
	int owner = roce_dp_qpn_owner(dp, qpn), ret;

	if (owner < 0)
		return -ENOENT;
	ret = roce_dp_call(dp, (unsigned int)owner, gen_query, &q, 5000);
	if (ret == 0)
		*st = q.st;
	return ret;
}
