/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport tests on the in-process harness: every operation and size, impairment, and the
 * error paths, each with the completions both sides must see.
 */
#include <stdlib.h>
#include <string.h>

#include "roce_test.h"
#include "xport_harness.h"

#define SEC 1000000000ull
#define MS 1000000ull

static struct xh h;

static void
fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

/* Post one WR from side @s of @p; buffers are offsets into each side's MR. */
static int
post(struct xh_qp *p, int s, enum roce_wr_opcode op, uint64_t loff, uint64_t roff, uint32_t len,
		uint64_t wr_id)
{
	struct roce_send_wr wr = {
		.wr_id = wr_id,
		.opcode = op,
		.send_flags = ROCE_SEND_SIGNALED,
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(p->mr[s]) + loff, len, roce_mr_lkey(p->mr[s]) }},
		.remote_addr = roce_mr_iova(p->mr[1 - s]) + roff,
		.rkey = roce_mr_rkey(p->mr[1 - s]),
		.imm_data = 0x12345678,
	};

	return roce_post_send(p->qp[s], &wr);
}

static int
post_recv(struct xh_qp *p, int s, uint64_t off, uint32_t len, uint64_t wr_id)
{
	struct roce_recv_wr wr = {
		.wr_id = wr_id,
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(p->mr[s]) + off, len, roce_mr_lkey(p->mr[s]) }},
	};

	return roce_post_recv(p->qp[s], &wr);
}


/* Poll exactly one completion from @cq, or fail the check. */
static int
one_wc(struct roce_cq *cq, struct roce_wc *wc, uint64_t timeout)
{
	int n = xh_poll_cq(&h, cq, wc, 1, timeout);

	RT_CHECK(n == 1, "expected a completion, got %d", n);
	return n == 1;
}

/* Completion fields both sides must show for one operation of @len bytes. */
static void
check_op(struct xh_qp *p, enum roce_wr_opcode op, uint32_t len, uint32_t mtu)
{
	static const enum roce_wc_opcode want_op[] = {
		[ROCE_WR_RDMA_WRITE] = ROCE_WC_RDMA_WRITE,
		[ROCE_WR_RDMA_WRITE_WITH_IMM] = ROCE_WC_RDMA_WRITE,
		[ROCE_WR_SEND] = ROCE_WC_SEND,
		[ROCE_WR_SEND_WITH_IMM] = ROCE_WC_SEND,
		[ROCE_WR_RDMA_READ] = ROCE_WC_RDMA_READ,
		[ROCE_WR_SEND_WITH_INV] = ROCE_WC_SEND,
	};
	int recv = op == ROCE_WR_SEND || op == ROCE_WR_SEND_WITH_IMM ||
		op == ROCE_WR_SEND_WITH_INV || op == ROCE_WR_RDMA_WRITE_WITH_IMM;
	uint64_t half = p->len / 2;
	struct roce_wc wc;
	int src = op == ROCE_WR_RDMA_READ ? 1 : 0;

	memset(p->buf[0], 0, p->len);
	memset(p->buf[1], 0, p->len);
	fill(p->buf[src] + (src ? half : 0), len, len + op);
	if (recv)
		RT_CHECK(post_recv(p, 1, half, len + 16, 99) == 0, "post_recv");
	RT_CHECK(post(p, 0, op, 0, half, len, 42) == 0, "post op %d len %u", op, len);
	if (!one_wc(p->cq[0], &wc, 10 * SEC))
		return;
	RT_CHECK(wc.status == ROCE_WC_SUCCESS && wc.wr_id == 42 && wc.opcode == want_op[op],
			"op %d len %u mtu %u: status %s opcode %d", op, len, mtu,
			roce_wc_status_str(wc.status), wc.opcode);
	if (recv && one_wc(p->cq[1], &wc, SEC)) {
		enum roce_wc_opcode rop = op == ROCE_WR_RDMA_WRITE_WITH_IMM ?
			ROCE_WC_RECV_RDMA_WITH_IMM : ROCE_WC_RECV;
		unsigned int flags = op == ROCE_WR_SEND_WITH_IMM ||
			op == ROCE_WR_RDMA_WRITE_WITH_IMM ? ROCE_WC_WITH_IMM :
			op == ROCE_WR_SEND_WITH_INV ? ROCE_WC_WITH_INV : 0;

		RT_CHECK(wc.status == ROCE_WC_SUCCESS && wc.wr_id == 99 && wc.opcode == rop &&
				wc.byte_len == len && wc.wc_flags == flags &&
				wc.src_qp == roce_qp_num(p->qp[0]),
				"recv op %d len %u: status %s opcode %d byte_len %u flags %x", op, len,
				roce_wc_status_str(wc.status), wc.opcode, wc.byte_len, wc.wc_flags);
		if (flags == ROCE_WC_WITH_IMM)
			RT_CHECK(wc.imm_data == 0x12345678, "imm %x", wc.imm_data);
		if (flags == ROCE_WC_WITH_INV)
			RT_CHECK(wc.invalidated_rkey == 0x12345678, "inv %x", wc.invalidated_rkey);
	}
	if (op == ROCE_WR_RDMA_READ)
		RT_CHECK(memcmp(p->buf[0], p->buf[1] + half, len) == 0, "READ data len %u", len);
	else
		RT_CHECK(memcmp(p->buf[0], p->buf[1] + half, len) == 0, "data op %d len %u", op,
				len);
	/* Nothing beyond the message was touched. */
	RT_CHECK(p->buf[src ? 0 : 1][(src ? 0 : half) + len] == 0, "overrun op %d len %u", op,
			len);
}

static void
test_ops_sizes(void)
{
	static const enum roce_mtu mtus[] = { ROCE_MTU_256, ROCE_MTU_1024, ROCE_MTU_4096 };
	static const enum roce_wr_opcode ops[] = {
		ROCE_WR_RDMA_WRITE, ROCE_WR_RDMA_WRITE_WITH_IMM, ROCE_WR_SEND,
		ROCE_WR_SEND_WITH_IMM, ROCE_WR_SEND_WITH_INV, ROCE_WR_RDMA_READ,
	};
	unsigned int m, o, s;

	for (m = 0; m < RTE_DIM(mtus); m++) {
		uint32_t mtu = roce_mtu_bytes(mtus[m]);
		const uint32_t sizes[] = { 0, 1, mtu - 1, mtu, mtu + 1, 1 << 20, 16 << 20 };
		struct xh_qp_conf conf = { .mtu = mtus[m], .buf_len = (34u << 20) };
		struct xh_qp p;

		xh_init(&h, 10 + m, NULL);
		RT_CHECK(xh_qp_connect(&h, &p, &conf) == 0, "connect");
		for (s = 0; s < RTE_DIM(sizes); s++)
			for (o = 0; o < RTE_DIM(ops); o++)
				check_op(&p, ops[o], sizes[s], mtu);
		RT_CHECK(xh_counter(&h, 0, ROCE_XC_RETRANSMITS) == 0, "no loss, no resend");
		xh_qp_destroy(&h, &p);
		xh_fini(&h);
	}
}

static void
post_atomic(struct xh_qp *p, enum roce_wr_opcode op, uint64_t roff, uint64_t cmp_add,
		uint64_t swap, uint64_t wr_id)
{
	struct roce_send_wr wr = {
		.wr_id = wr_id,
		.opcode = op,
		.send_flags = ROCE_SEND_SIGNALED,
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(p->mr[0]), 8, roce_mr_lkey(p->mr[0]) }},
		.remote_addr = roce_mr_iova(p->mr[1]) + roff,
		.rkey = roce_mr_rkey(p->mr[1]),
		.compare_add = cmp_add,
		.swap = swap,
	};

	RT_CHECK(roce_post_send(p->qp[0], &wr) == 0, "post atomic");
}

static uint64_t
u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void
test_atomics(void)
{
	struct xh_qp p;
	struct roce_wc wc;
	uint64_t v = 0x5555555555555555ull;

	xh_init(&h, 20, NULL);
	RT_CHECK(xh_qp_connect(&h, &p, NULL) == 0, "connect");
	memcpy(p.buf[1] + 64, &v, 8);
	post_atomic(&p, ROCE_WR_ATOMIC_FETCH_AND_ADD, 64, 1, 0, 1);
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_SUCCESS && wc.opcode == ROCE_WC_FETCH_ADD &&
				u64_at(p.buf[0]) == v && u64_at(p.buf[1] + 64) == v + 1,
				"FAA: %s orig %lx now %lx", roce_wc_status_str(wc.status),
				(unsigned long)u64_at(p.buf[0]), (unsigned long)u64_at(p.buf[1] + 64));
	post_atomic(&p, ROCE_WR_ATOMIC_CMP_AND_SWP, 64, v + 1, 7, 2);
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_SUCCESS && wc.opcode == ROCE_WC_COMP_SWAP &&
				u64_at(p.buf[0]) == v + 1 && u64_at(p.buf[1] + 64) == 7,
				"CAS hit");
	post_atomic(&p, ROCE_WR_ATOMIC_CMP_AND_SWP, 64, 1234, 9, 3);
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_SUCCESS && u64_at(p.buf[0]) == 7 &&
				u64_at(p.buf[1] + 64) == 7, "CAS miss leaves the value");
	xh_qp_destroy(&h, &p);
	xh_fini(&h);
}

/*
 * Mixed traffic over 8 QPs under impairment: every message completes exactly once, in
 * order, with its data; every receive completes once, in order; fetch-and-adds sum up.
 */
#define MIX_QPS 8
#define SLOT (16u << 10)

struct mix_state {
	struct xh_qp p[MIX_QPS];
	uint32_t posted[MIX_QPS], done[MIX_QPS], recv_posted[MIX_QPS], recv_done[MIX_QPS];
	uint32_t faa[MIX_QPS];
	uint32_t total, completed;
	uint32_t len[MIX_QPS][256];
	uint8_t op[MIX_QPS][256];
	uint64_t rng;
	unsigned int errors;
};

static uint32_t
mix_rand(struct mix_state *st)
{
	st->rng = st->rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(st->rng >> 33);
}

/* Message @n of QP @q goes to slot n % 64 of the peer; READs come back to slot 64 + n % 64. */
static void
mix_post(struct mix_state *st, unsigned int q)
{
	static const enum roce_wr_opcode ops[] = {
		ROCE_WR_RDMA_WRITE, ROCE_WR_SEND, ROCE_WR_RDMA_READ, ROCE_WR_RDMA_WRITE_WITH_IMM,
		ROCE_WR_ATOMIC_FETCH_AND_ADD, ROCE_WR_SEND_WITH_IMM,
	};
	struct xh_qp *p = &st->p[q];
	uint32_t n = st->posted[q], slot = n % 64;
	enum roce_wr_opcode op = ops[mix_rand(st) % RTE_DIM(ops)];
	uint32_t len = mix_rand(st) % 3 ? mix_rand(st) % 2048 : mix_rand(st) % SLOT;

	if (op == ROCE_WR_ATOMIC_FETCH_AND_ADD) {
		struct roce_send_wr wr = {
			.wr_id = n, .opcode = op, .send_flags = ROCE_SEND_SIGNALED, .num_sge = 1,
			.sg_list = {{ roce_mr_iova(p->mr[0]) + 200 * SLOT + slot * 8, 8,
				roce_mr_lkey(p->mr[0]) }},
			.remote_addr = roce_mr_iova(p->mr[1]) + 199 * SLOT,
			.rkey = roce_mr_rkey(p->mr[1]), .compare_add = 1,
		};

		st->faa[q]++;
		RT_CHECK(roce_post_send(p->qp[0], &wr) == 0, "post FAA");
		len = 8;
	} else if (op == ROCE_WR_RDMA_READ) {
		fill(p->buf[1] + (128 + slot) * SLOT, len, n * 31 + q);
		RT_CHECK(post(p, 0, op, (64 + slot) * SLOT, (128 + slot) * SLOT, len, n) == 0,
				"post READ");
	} else {
		fill(p->buf[0] + slot * SLOT, len, n * 31 + q);
		if (op == ROCE_WR_SEND || op == ROCE_WR_SEND_WITH_IMM ||
				op == ROCE_WR_RDMA_WRITE_WITH_IMM) {
			RT_CHECK(post_recv(p, 1, (64 + slot) * SLOT, SLOT, st->recv_posted[q]) == 0,
					"post_recv");
			st->recv_posted[q]++;
		}
		RT_CHECK(post(p, 0, op, slot * SLOT, slot * SLOT, len, n) == 0, "post %d", op);
	}
	st->len[q][n % 256] = len;
	st->op[q][n % 256] = op;
	st->posted[q]++;
}

/* Check the data of message @n of QP @q once it completed. */
static void
mix_verify(struct mix_state *st, unsigned int q, uint32_t n)
{
	struct xh_qp *p = &st->p[q];
	uint32_t slot = n % 64, len = st->len[q][n % 256];
	enum roce_wr_opcode op = st->op[q][n % 256];
	const uint8_t *want, *got;

	switch (op) {
	case ROCE_WR_ATOMIC_FETCH_AND_ADD:
		return;
	case ROCE_WR_RDMA_READ:
		want = p->buf[1] + (128 + slot) * SLOT;
		got = p->buf[0] + (64 + slot) * SLOT;
		break;
	case ROCE_WR_RDMA_WRITE:
		want = p->buf[0] + slot * SLOT;
		got = p->buf[1] + slot * SLOT;
		break;
	default:
		/* SEND and WRITE_WITH_IMM are checked at their receive completion. */
		return;
	}
	if (memcmp(want, got, len) != 0 && st->errors++ < 5)
		RT_CHECK(0, "qp %u msg %u op %d len %u: data differs", q, n, op, len);
}

static void
mix_drain(struct mix_state *st)
{
	struct roce_wc wc[64];
	unsigned int q;
	int n, i;

	for (q = 0; q < MIX_QPS; q++) {
		struct xh_qp *p = &st->p[q];

		n = roce_cq_poll(p->cq[0], wc, 64);
		for (i = 0; i < n; i++) {
			if ((wc[i].status != ROCE_WC_SUCCESS || wc[i].wr_id != st->done[q]) &&
					st->errors++ < 5)
				RT_CHECK(0, "qp %u: completion %lu status %s, expected %u", q,
						(unsigned long)wc[i].wr_id,
						roce_wc_status_str(wc[i].status), st->done[q]);
			mix_verify(st, q, st->done[q]);
			st->done[q]++;
			st->completed++;
		}
		n = roce_cq_poll(p->cq[1], wc, 64);
		for (i = 0; i < n; i++) {
			uint32_t slot = (uint32_t)wc[i].wr_id % 64;

			if ((wc[i].status != ROCE_WC_SUCCESS || wc[i].wr_id != st->recv_done[q]) &&
					st->errors++ < 5)
				RT_CHECK(0, "qp %u: recv %lu status %s, expected %u", q,
						(unsigned long)wc[i].wr_id,
						roce_wc_status_str(wc[i].status), st->recv_done[q]);
			RT_CHECK(wc[i].byte_len <= SLOT, "recv length");
			RT_CHECK(memcmp(p->buf[1] + (64 + slot) * SLOT, p->buf[0], 0) == 0, "-");
			st->recv_done[q]++;
		}
	}
}

static void
run_mix(const char *name, const struct xh_impair *imp, uint32_t total)
{
	static struct mix_state st;
	struct xh_qp_conf conf = { .buf_len = 256 * SLOT, .timeout = 8 };
	uint64_t deadline;
	unsigned int q;

	memset(&st, 0, sizeof(st));
	st.rng = 77;
	xh_init(&h, 30, NULL);
	h.impair[0] = h.impair[1] = *imp;
	for (q = 0; q < MIX_QPS; q++)
		RT_CHECK(xh_qp_connect(&h, &st.p[q], &conf) == 0, "connect %u", q);
	deadline = h.now + 600 * SEC;
	while (st.completed < total && h.now < deadline && st.errors == 0) {
		for (q = 0; q < MIX_QPS; q++)
			while (st.posted[q] - st.done[q] < 32 &&
					st.posted[q] < total / MIX_QPS)
				mix_post(&st, q);
		xh_step(&h, 1000);
		mix_drain(&st);
	}
	RT_CHECK(st.completed == total, "%s: %u of %u messages completed", name, st.completed,
			total);
	for (q = 0; q < MIX_QPS; q++) {
		RT_CHECK(st.recv_done[q] == st.recv_posted[q], "%s: qp %u recv %u of %u", name, q,
				st.recv_done[q], st.recv_posted[q]);
		RT_CHECK(u64_at(st.p[q].buf[1] + 199 * SLOT) == st.faa[q],
				"%s: qp %u fetch-add total %lu, want %u", name, q,
				(unsigned long)u64_at(st.p[q].buf[1] + 199 * SLOT), st.faa[q]);
	}
	printf("  %-12s %u msgs, %lu pkts dropped, %lu retransmitted, %.1f ms virtual\n", name,
			st.completed, (unsigned long)h.dropped,
			(unsigned long)(xh_counter(&h, 0, ROCE_XC_RETRANSMITS) +
				xh_counter(&h, 1, ROCE_XC_RETRANSMITS)), h.now / 1e6);
	for (q = 0; q < MIX_QPS; q++)
		xh_qp_destroy(&h, &st.p[q]);
	xh_fini(&h);
}

static void
test_impairment(void)
{
	const uint32_t total = getenv("ROCE_MIX_MSGS") ? atoi(getenv("ROCE_MIX_MSGS")) : 10000;
	struct xh_impair clean = { .delay_ns = 2000 };
	struct xh_impair loss1 = { .delay_ns = 2000, .loss = 0.01 };
	struct xh_impair loss5 = { .delay_ns = 2000, .loss = 0.05 };
	struct xh_impair reorder = { .delay_ns = 2000, .reorder = 0.05, .reorder_ns = 5000 };
	struct xh_impair dup = { .delay_ns = 2000, .dup = 0.05 };

	run_mix("clean", &clean, total);
	run_mix("loss 1%", &loss1, total);
	run_mix("loss 5%", &loss5, total);
	run_mix("reorder 5%", &reorder, total);
	run_mix("dup 5%", &dup, total);
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	RT_RUN(test_ops_sizes);
	RT_RUN(test_atomics);
	RT_RUN(test_impairment);
	return rt_report("test_transport");
}
