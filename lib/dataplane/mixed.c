/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mixed verified traffic: a requester job posts a deterministic sequence of WRITE, SEND, READ,
 * WRITE_WITH_IMM, FETCH_ADD and CMP_SWAP of varying lengths, and checks every completion; the
 * peer's receive job checks every message it is given. Together they prove each message
 * arrived exactly once, in order, with its data: the checks need no channel between the two
 * sides, because message i's operation, length and bytes are functions of (seed, i).
 *
 * Requester region (local): ROCE_MIX_SLOTS slots of @c size: message i's source, READ target
 * or atomic result is slot i % ROCE_MIX_SLOTS (at most ROCE_MIX_SLOTS in flight).
 * Receiver region (remote): [READ source: size][ROCE_MIX_WSLOTS write slots of size]
 * [FETCH_ADD counter, CMP_SWAP counter][receive buffers: depth x size].
 */
#include <errno.h>
#include <string.h>

#include "dp_private.h"

/* One period of the sequence. */
static const enum roce_wr_opcode mix_ops[] = {
	ROCE_WR_RDMA_WRITE, ROCE_WR_SEND, ROCE_WR_RDMA_READ, ROCE_WR_RDMA_WRITE_WITH_IMM,
	ROCE_WR_ATOMIC_FETCH_AND_ADD, ROCE_WR_SEND, ROCE_WR_RDMA_WRITE,
	ROCE_WR_ATOMIC_CMP_AND_SWP,
};
#define MIX_PERIOD RTE_DIM(mix_ops)

static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static enum roce_wr_opcode
mix_op(uint64_t i)
{
	return mix_ops[i % MIX_PERIOD];
}

/* Payload length of message i: 8 (its header) .. size. */
static uint32_t
mix_len(const struct roce_gen_conf *c, uint64_t i)
{
	return 8 + (uint32_t)(mix64(c->seed ^ (i << 1)) % (c->size - 7));
}

/* Bytes of message i: its index, then a keyed stream. */
static void
mix_fill(uint8_t *p, uint32_t len, uint64_t seed, uint64_t i)
{
	memcpy(p, &i, 8);
	dp_pattern_xorshift(p + 8, len - 8, mix64(seed ^ i) | 1);
}

static int
mix_check(const uint8_t *p, uint32_t len, uint64_t seed, uint64_t i)
{
	uint8_t want[ROCE_MIX_MAX_SIZE];

	mix_fill(want, len, seed, i);
	return memcmp(p, want, len) == 0;
}

/* The latest WRITE-type message before i, or UINT64_MAX. */
static uint64_t
mix_last_write(uint64_t i)
{
	while (i-- > 0)
		if (mix_op(i) == ROCE_WR_RDMA_WRITE || mix_op(i) == ROCE_WR_RDMA_WRITE_WITH_IMM)
			return i;
	return UINT64_MAX;
}

static uint64_t
remote_slot(const struct roce_gen_conf *c, uint64_t i)
{
	return c->raddr + c->size + (i % ROCE_MIX_WSLOTS) * c->size;
}

static uint64_t
remote_atomic(const struct roce_gen_conf *c, enum roce_wr_opcode op)
{
	return c->raddr + c->size * (1 + ROCE_MIX_WSLOTS) +
		(op == ROCE_WR_ATOMIC_CMP_AND_SWP ? 8 : 0);
}

static void
mix_error(struct dp_job *job, uint64_t i)
{
	if (job->st.verify_errors++ == 0)
		job->st.first_bad = i;
}

/* Build message i's work request; its source bytes go into its local slot. */
static void
mix_wr(struct dp_job *job, uint64_t i, struct roce_send_wr *wr)
{
	const struct roce_gen_conf *c = &job->conf;
	uint64_t slot = (i % ROCE_MIX_SLOTS) * c->size, w;
	enum roce_wr_opcode op = mix_op(i);
	uint32_t len = mix_len(c, i);

	*wr = (struct roce_send_wr){
		.wr_id = i, .opcode = op, .send_flags = ROCE_SEND_SIGNALED, .num_sge = 1,
		.sg_list = {{ c->laddr + slot, len, c->lkey }}, .rkey = c->rkey,
		.imm_data = (uint32_t)i,
	};
	switch (op) {
	case ROCE_WR_RDMA_WRITE:
	case ROCE_WR_RDMA_WRITE_WITH_IMM:
		wr->remote_addr = remote_slot(c, i);
		/* fall through */
	case ROCE_WR_SEND:
		mix_fill(c->lbuf + slot, len, c->seed, i);
		break;
	case ROCE_WR_RDMA_READ:
		/* Read back the latest write: RC executes it after that write, before any later. */
		w = mix_last_write(i);
		wr->remote_addr = w == UINT64_MAX ? c->raddr : remote_slot(c, w);
		wr->sg_list[0].length = w == UINT64_MAX ? c->size : mix_len(c, w);
		memset(c->lbuf + slot, 0, wr->sg_list[0].length);
		break;
	default:
		/* One FETCH_ADD and one CMP_SWAP per period: counter k before message i. */
		wr->remote_addr = remote_atomic(c, op);
		wr->sg_list[0].length = 8;
		wr->compare_add = op == ROCE_WR_ATOMIC_FETCH_AND_ADD ? 1 : i / MIX_PERIOD;
		wr->swap = i / MIX_PERIOD + 1;
		break;
	}
}

/* A requester's completion of message i: in order, and READ/atomic results right. */
static void
mix_completed(struct dp_job *job, const struct roce_wc *wc)
{
	const struct roce_gen_conf *c = &job->conf;
	uint64_t i = wc->wr_id, w, v;
	const uint8_t *slot = c->lbuf + (i % ROCE_MIX_SLOTS) * c->size;

	job->st.bytes += wc->opcode == ROCE_WC_RDMA_READ ? wc->byte_len : mix_len(c, i);
	if (i != job->st.completed++) {
		mix_error(job, i);
		return;
	}
	switch (mix_op(i)) {
	case ROCE_WR_RDMA_READ:
		w = mix_last_write(i);
		if (w == UINT64_MAX ? !mix_check(slot, c->size, c->seed, UINT64_MAX) :
				!mix_check(slot, mix_len(c, w), c->seed, w))
			mix_error(job, i);
		break;
	case ROCE_WR_ATOMIC_FETCH_AND_ADD:
	case ROCE_WR_ATOMIC_CMP_AND_SWP:
		memcpy(&v, slot, 8);
		if (v != i / MIX_PERIOD)
			mix_error(job, i);
		break;
	default:
		break;
	}
}

/* Poll the job's CQ: failures are counted, every success goes to @p fn. */
static void
mix_poll(struct dp_job *job, uint64_t now, void (*fn)(struct dp_job *, const struct roce_wc *))
{
	struct roce_wc wc[DP_BURST];
	int n, k;

	while ((n = roce_cq_poll(job->conf.cq, wc, DP_BURST)) > 0) {
		for (k = 0; k < n; k++) {
			if (wc[k].status != ROCE_WC_SUCCESS)
				dp_job_error(job, wc[k].status);
			else
				fn(job, &wc[k]);
		}
		job->st.end_ns = now;
	}
}

static void
mix_step(struct dp_job *job, uint64_t now)
{
	struct roce_send_wr wr;

	mix_poll(job, now, mix_completed);
	while (dp_job_posting(job, now) &&
			job->st.posted - job->st.completed - job->st.errors < job->conf.depth) {
		mix_wr(job, job->st.posted, &wr);
		if (roce_post_send(job->qp, &wr) != 0)
			break;
		job->st.posted++;
	}
	if (!dp_job_posting(job, now) && job->st.completed + job->st.errors == job->st.posted)
		job->st.running = 0;
}

/* ---- the receiving side ---- */

static uint64_t
recv_buf(const struct roce_gen_conf *c, uint64_t k)
{
	return (uint64_t)c->size * (1 + ROCE_MIX_WSLOTS) + 16 + (k % c->depth) * c->size;
}

static int
mix_post_recv(struct dp_job *job, uint64_t k)
{
	const struct roce_gen_conf *c = &job->conf;
	struct roce_recv_wr rwr = { .wr_id = k, .num_sge = 1,
		.sg_list = {{ c->laddr + recv_buf(c, k), c->size, c->lkey }} };

	return roce_post_recv(job->qp, &rwr);
}

/* The next message that consumes a receive, from @p i on. */
static uint64_t
mix_next_consumer(uint64_t i)
{
	while (mix_op(i) != ROCE_WR_SEND && mix_op(i) != ROCE_WR_RDMA_WRITE_WITH_IMM)
		i++;
	return i;
}

static void
mix_received(struct dp_job *job, const struct roce_wc *wc)
{
	const struct roce_gen_conf *c = &job->conf;
	uint64_t i = mix_next_consumer(job->next), hdr;
	const uint8_t *p;

	job->next = i + 1;
	if (wc->opcode == ROCE_WC_RECV_RDMA_WITH_IMM) {
		/* The data went to the write slot; a later write may have reused it already. */
		p = c->lbuf + c->size + (i % ROCE_MIX_WSLOTS) * c->size;
		memcpy(&hdr, p, 8);
		if (mix_op(i) != ROCE_WR_RDMA_WRITE_WITH_IMM || wc->imm_data != (uint32_t)i ||
				wc->byte_len != mix_len(c, i) || hdr < i ||
				(hdr == i && !mix_check(p, wc->byte_len, c->seed, i)))
			mix_error(job, i);
	} else {
		p = c->lbuf + recv_buf(c, wc->wr_id);
		if (mix_op(i) != ROCE_WR_SEND || wc->byte_len != mix_len(c, i) ||
				!mix_check(p, wc->byte_len, c->seed, i))
			mix_error(job, i);
	}
	job->st.bytes += wc->byte_len;
	job->st.completed++;
	if (mix_post_recv(job, job->st.posted) == 0)
		job->st.posted++;
}

static int
mix_recv_start(struct dp_job *job)
{
	const struct roce_gen_conf *c = &job->conf;
	uint32_t k;

	/* READs before the first write read this; the counters start at zero. */
	mix_fill(c->lbuf, c->size, c->seed, UINT64_MAX);
	memset(c->lbuf + c->size * (1 + ROCE_MIX_WSLOTS), 0, 16);
	for (k = 0; k < c->depth; k++)
		if (mix_post_recv(job, k) != 0)
			return -ENOMEM;
	job->st.posted = c->depth;
	return 0;
}

static void
mix_recv_step(struct dp_job *job, uint64_t now)
{
	mix_poll(job, now, mix_received);
	if (job->stopping || job->st.errors != 0 ||
			(job->conf.count != 0 && job->st.completed >= job->conf.count))
		job->st.running = 0;
}

static int
mix_conf_check(const struct roce_gen_conf *c)
{
	return c->lbuf == NULL || c->size < 16 || c->size > ROCE_MIX_MAX_SIZE ||
		(c->mode == ROCE_GEN_MIXED && c->depth > ROCE_MIX_SLOTS) ? -EINVAL : 0;
}

const struct dp_gen_engine dp_gen_mixed = {
	.name = "mixed", .check = mix_conf_check, .step = mix_step,
};

const struct dp_gen_engine dp_gen_mixed_recv = {
	.name = "mixed_recv", .check = mix_conf_check, .begin = mix_recv_start,
	.step = mix_recv_step,
};
