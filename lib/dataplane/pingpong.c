/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma-core's ibv_rc_pingpong and ibv_ud_pingpong (libibverbs/examples) as a traffic job: the
 * loop of their main(), without blocking, on the worker that owns the QP. Both sides keep
 * conf.depth receives posted, topped up when only one is left, as theirs are; a side posts
 * its next SEND once its previous one completed and the peer's message arrived, the
 * initiator (their client) first. Receives land where the SENDs read from (UD: after the
 * 40-byte GRH area), so the passive side sends back what it got: what their -c checks on
 * the client. Done after conf.count SENDs completed and as many messages arrived.
 *
 * The clock: the initiator's starts after its first post, as theirs; the passive side's with
 * the first message (theirs starts when the TCP exchange ends, just before it arrives).
 */
#include <errno.h>

#include "dp_private.h"
#include "stages.h"

/* What the next SEND waits for: their PINGPONG_RECV_WRID and PINGPONG_SEND_WRID. */
#define PP_RECV 1u
#define PP_SEND 2u

/* Post up to @n receives. @return how many went. */
static uint64_t
pp_post_recvs(struct dp_job *job, uint64_t n)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_recv_wr rwr = { .wr_id = PP_RECV, .num_sge = 1,
		.sg_list = {{ c->recv_laddr, job->recv_len, c->lkey }} };
	uint64_t i;

	for (i = 0; i < n; i++) {
		if (roce_post_recv(job->qp, &rwr) != 0)
			break;
		job->recv_posted++;
	}
	return i;
}

static int
pp_post_send(struct dp_job *job, uint64_t now)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_send_wr wr;

	wr.wr_id = PP_SEND;
	wr.opcode = ROCE_WR_SEND;
	/* As theirs: inline when the QP takes that much (an MR's iova is its address). */
	wr.send_flags = ROCE_SEND_SIGNALED | (job->pp_inline ? ROCE_SEND_INLINE : 0);
	wr.num_sge = 1;
	wr.sg_list[0] = (struct roce_sge){ c->laddr, c->size, c->lkey };
	wr.imm_data = 0;
	wr.ud.ah = c->ah;
	wr.ud.remote_qpn = c->remote_qpn;
	wr.ud.remote_qkey = c->remote_qkey;
	if (roce_post_send(job->qp, &wr) != 0)
		return -ENOMEM;
	DP_STAGE(job->w, post, job->st.posted != 0 || !c->initiator);
	job->last_post_ns = now;
	job->st.posted++;
	job->pp_pending = PP_RECV | PP_SEND;
	return 0;
}

static int
pp_begin(struct dp_job *job)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_qp_init_attr init;

	roce_qp_query_init(job->qp, &init);
	if (c->size == 0 || c->depth == 0 || c->depth > init.max_recv_wr)
		return -EINVAL;
	job->pp_inline = c->size <= init.max_inline_data;
	if (pp_post_recvs(job, c->depth) < c->depth)
		return -ENOMEM;
	job->pp_pending = PP_RECV;
	if (c->initiator) {
		job->st.start_ns = roce_dp_now();
		if (pp_post_send(job, job->st.start_ns) != 0)
			return -ENOMEM;
	}
	return 0;
}

/* Whether the job is done: as many SENDs completed and messages arrived as asked. */
static int
pp_done(const struct dp_job *job)
{
	const struct roce_gen_conf *c = &job->conf;

	return c->count != 0 && job->st.completed >= c->count && job->st.received >= c->count;
}

static void
pp_stop(struct dp_job *job, uint64_t now, enum roce_wc_status status)
{
	if (status != ROCE_WC_SUCCESS)
		dp_job_error(job, status);
	job->st.running = 0;
	job->st.end_ns = now;
}

/* A message arrived: count it, keep the receive queue topped up. @return 0 or -ENOMEM. */
static int
pp_received(struct dp_job *job, const struct roce_wc *wc, uint64_t now)
{
	const struct roce_gen_conf *c = &job->conf;
	uint64_t left;

	if (job->st.received++ == 0 && !c->initiator)
		job->st.start_ns = now;
	/* the payload, without the GRH area of a UD receive */
	job->st.bytes += wc->byte_len - (job->recv_len - c->size);
	left = job->recv_posted - job->st.received;
	if (left <= 1 && pp_post_recvs(job, c->depth - left) < c->depth - left)
		return -ENOMEM;
	return 0;
}

static void
pp_step(struct dp_job *job, uint64_t now)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_wc wc[DP_BURST];
	int n, i;

	if (job->stopping) {
		pp_stop(job, now, ROCE_WC_SUCCESS);
		return;
	}
	while ((n = roce_cq_poll(c->cq, wc, DP_BURST)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].status != ROCE_WC_SUCCESS) {
				pp_stop(job, now, wc[i].status);
				return;
			}
			if (wc[i].opcode & ROCE_WC_RECV) {
				if (pp_received(job, &wc[i], now) != 0) {
					pp_stop(job, now, ROCE_WC_GENERAL_ERR);
					return;
				}
				job->pp_pending &= ~PP_RECV;
			} else {
				job->st.completed++;
				job->st.bytes += c->size;
				job->pp_pending &= ~PP_SEND;
			}
			if (job->pp_pending == 0 && (c->count == 0 ||
					job->st.completed < c->count) &&
					pp_post_send(job, now) != 0) {
				pp_stop(job, now, ROCE_WC_GENERAL_ERR);
				return;
			}
		}
		job->st.end_ns = now;
	}
	if (pp_done(job))
		pp_stop(job, now, ROCE_WC_SUCCESS);
}

const struct dp_gen_engine dp_gen_pingpong = {
	/* Not a latency engine: it waits on its CQ, so an idle worker may sleep (--idle-sleep). */
	.name = "pingpong", .begin = pp_begin, .step = pp_step,
};
