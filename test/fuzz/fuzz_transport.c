/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a connected RC QP pair, then arbitrary packets at its responder and its
 * completer. The input is a list of records; most become well-formed frames (right addresses,
 * QPN and ICRC, fuzzed opcode, PSN, extension headers and payload) so they reach the transport
 * rather than die in the classifier. MRs are exactly the size of their heap buffers, so ASan
 * catches any access outside a registered region.
 *
 * The first input byte chooses the mode: bit 0 set, both QPs use selective repeat (window of 64
 * PSNs, RTO 10 us), so SR data packets, SR ACKs with fuzzed SACK bitmaps, out-of-order
 * placement, the defer table and single resends are all reached; else go-back-N.
 *
 * Record: kind(1) then per kind:
 *   0 packet to the responder / 1 packet to the completer:
 *     opcode(1) psn_delta(2, signed, from the expected PSN) flags(1) ext(28) paylen(2) payload
 *   2 post a send WR on the requester: op(1) len(2) off(2)
 *   3 post a receive on the responder: len(2)
 *   4 advance time: ms(1)
 */
#include <stdlib.h>
#include <string.h>

#include "roce_test.h"
#include "roce_transport.h"
#include "roce_wire.h"

#define MR_LEN 8192
#define BURST 32

static struct rte_mempool *mp;

struct fz {
	struct roce_engine *eng[2];
	struct roce_pd *pd[2];
	struct roce_cq *cq[2];
	uint8_t *buf[2];
	struct roce_mr *mr[2];
	struct roce_qp *qp[2];
	struct roce_qp_attr attr[2];
	uint64_t now;
};

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	RTE_SET_USED(argc);
	rt_eal_init((*argv)[0]);
	mp = rt_pool(4096, 4608);
	return 0;
}

static int
fz_setup(struct fz *f, int sr)
{
	int i;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < 2; i++) {
		struct roce_engine_conf c = { .mp = mp, .max_qps = 4, .qpn_base = 0x100 + i * 16,
			.tx_ring_size = 256 };
		struct roce_qp_init_attr ia = { .max_send_wr = 16, .max_recv_wr = 16,
			.max_inline_data = 64 };

		f->eng[i] = roce_engine_create(&c);
		f->pd[i] = roce_pd_alloc(SOCKET_ID_ANY);
		f->cq[i] = roce_cq_create(64, SOCKET_ID_ANY);
		f->buf[i] = malloc(MR_LEN);
		if (f->eng[i] == NULL || f->pd[i] == NULL || f->cq[i] == NULL || f->buf[i] == NULL)
			return -1;
		memset(f->buf[i], 0xA5, MR_LEN);
		f->mr[i] = roce_mr_reg(f->pd[i], f->buf[i], MR_LEN, 0xF, NULL);
		ia.send_cq = ia.recv_cq = f->cq[i];
		f->qp[i] = roce_qp_create(f->eng[i], f->pd[i], &ia);
		if (f->mr[i] == NULL || f->qp[i] == NULL)
			return -1;
	}
	for (i = 0; i < 2; i++) {
		struct roce_qp_attr *a = &f->attr[i];

		a->qp_state = ROCE_QPS_INIT;
		a->qp_access_flags = 0xE;
		if (roce_qp_modify(f->qp[i], a, ROCE_QP_STATE | ROCE_QP_ACCESS_FLAGS) != 0)
			return -1;
		a->qp_state = ROCE_QPS_RTR;
		a->path_mtu = ROCE_MTU_1024;
		a->dest_qp_num = roce_qp_num(f->qp[1 - i]);
		a->rq_psn = 0x100;
		a->max_dest_rd_atomic = 4;
		a->min_rnr_timer = 1;
		a->ah.src_ip[0] = a->ah.dst_ip[0] = 10;
		a->ah.src_ip[3] = (uint8_t)(1 + i);
		a->ah.dst_ip[3] = (uint8_t)(2 - i);
		a->ah.udp_sport = 0xC000;
		roce_path_init(&a->ah);
		a->sr = (uint8_t)sr;
		a->max_inflight = 64;
		a->sr_rto_us = 10;
		if (roce_qp_modify(f->qp[i], a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU |
				ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC |
				ROCE_QP_MIN_RNR_TIMER | (sr ? ROCE_QP_SR | ROCE_QP_MAX_INFLIGHT |
				ROCE_QP_SR_RTO : 0)) != 0)
			return -1;
		a->qp_state = ROCE_QPS_RTS;
		a->sq_psn = 0x100;
		a->timeout = 1;
		a->retry_cnt = 2;
		a->rnr_retry = 2;
		a->max_rd_atomic = 4;
		if (roce_qp_modify(f->qp[i], a, ROCE_QP_STATE | ROCE_QP_SQ_PSN | ROCE_QP_TIMEOUT |
				ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY | ROCE_QP_MAX_QP_RD_ATOMIC) != 0)
			return -1;
	}
	return 0;
}

static void
fz_teardown(struct fz *f)
{
	int i;

	for (i = 0; i < 2; i++) {
		roce_engine_destroy(f->eng[i]);
		if (f->mr[i] != NULL)
			roce_mr_dereg(f->mr[i]);
		roce_pd_free(f->pd[i]);
		roce_cq_destroy(f->cq[i]);
		free(f->buf[i]);
	}
}

/* Drop whatever the engines sent and drain completions: only the transport's safety counts. */
static void
fz_drain(struct fz *f)
{
	struct rte_mbuf *pkts[BURST];
	struct roce_wc wc[16];
	uint16_t n;
	int i;

	for (i = 0; i < 2; i++) {
		roce_engine_poll(f->eng[i], f->now);
		while ((n = roce_engine_tx(f->eng[i], pkts, BURST)) != 0)
			rte_pktmbuf_free_bulk(pkts, n);
		while (roce_cq_poll(f->cq[i], wc, 16) > 0)
			;
	}
}

static uint64_t
take(const uint8_t **p, size_t *left, unsigned int n)
{
	uint64_t v = 0;

	while (n-- > 0) {
		v = v << 8 | (*left > 0 ? **p : 0);
		if (*left > 0) {
			(*p)++;
			(*left)--;
		}
	}
	return v;
}

/* A well-formed frame from side @from's QP to the other side, with fuzzed transport fields. */
static void
fz_packet(struct fz *f, int to, const uint8_t **p, size_t *left)
{
	int from = 1 - to;
	struct roce_pkt_desc d = { .dest_qpn = roce_qp_num(f->qp[to]) };
	struct roce_wire_stats st = {0};
	uint8_t flags, ext[28];
	struct rte_mbuf *m;
	uint32_t len;

	d.opcode = (uint8_t)take(p, left, 1);
	d.psn = (0x100 + (int16_t)take(p, left, 2)) & ROCE_PSN_MASK;
	flags = (uint8_t)take(p, left, 1);
	d.ackreq = flags & 1;
	d.se = !!(flags & 2);
	memset(ext, 0, sizeof(ext));
	len = RTE_MIN(*left, sizeof(ext));
	memcpy(ext, *p, len);
	*p += len;
	*left -= len;
	/* Extension fields from the fuzzed bytes; half the time aim inside the MR. */
	memcpy(&d.va, ext, 8);
	memcpy(&d.rkey, ext + 8, 4);
	memcpy(&d.dma_len, ext + 12, 4);
	memcpy(&d.swap_add, ext + 16, 8);
	memcpy(&d.imm, ext + 24, 4);
	d.compare = d.swap_add ^ d.va;
	d.syndrome = ext[0];
	d.msn = d.rkey;
	d.orig = d.swap_add;
	/* SRETH: mostly a posted receive and an MTU-aligned offset, sometimes anything. */
	d.sr_rsn = flags & 8 ? d.imm : d.imm & 3;
	d.sr_off = flags & 16 ? d.dma_len : (d.dma_len % 8) * 1024;
	if (flags & 4) {
		d.va = roce_mr_iova(f->mr[to]) + (d.va % (MR_LEN + 64));
		d.rkey = roce_mr_rkey(f->mr[to]);
		d.dma_len %= 2 * MR_LEN;
	}
	len = (uint32_t)take(p, left, 2) % 1100;
	len = RTE_MIN(len, *left);
	m = rte_pktmbuf_alloc(mp);
	if (m == NULL)
		return;
	if (!(roce_opcode_info[d.opcode].mask & ROCE_M_PAYLOAD))
		len = 0;
	if (roce_build_pkt(m, &f->attr[from].ah, &d, *p, len) != 0) {
		rte_pktmbuf_free(m);
		return;
	}
	*p += len;
	*left -= len;
	/* As the dataplane: the ICRC of a long payload is checked by the engine (roce_engine_rx). */
	if (roce_classify_burst(&m, 1, ROCE_CLASSIFY_DEFER_ICRC, &st) != 1) {
		rte_pktmbuf_free(m);
		return;
	}
	roce_engine_rx(f->eng[to], &m, 1, f->now);
}

static void
fz_post(struct fz *f, const uint8_t **p, size_t *left)
{
	static const enum roce_wr_opcode ops[] = {
		ROCE_WR_RDMA_WRITE, ROCE_WR_RDMA_WRITE_WITH_IMM, ROCE_WR_SEND,
		ROCE_WR_SEND_WITH_IMM, ROCE_WR_RDMA_READ, ROCE_WR_ATOMIC_CMP_AND_SWP,
		ROCE_WR_ATOMIC_FETCH_AND_ADD, ROCE_WR_SEND_WITH_INV,
	};
	enum roce_wr_opcode op = ops[take(p, left, 1) % RTE_DIM(ops)];
	uint32_t len = (uint32_t)take(p, left, 2) % (MR_LEN / 2);
	uint32_t off = (uint32_t)take(p, left, 2) % (MR_LEN / 2);
	struct roce_send_wr wr = {
		.opcode = op,
		.send_flags = ROCE_SEND_SIGNALED,
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(f->mr[0]) + off, len, roce_mr_lkey(f->mr[0]) }},
		.remote_addr = roce_mr_iova(f->mr[1]) + (off & ~7u),
		.rkey = roce_mr_rkey(f->mr[1]),
	};

	if (op == ROCE_WR_ATOMIC_CMP_AND_SWP || op == ROCE_WR_ATOMIC_FETCH_AND_ADD)
		wr.sg_list[0].length = 8;
	roce_post_send(f->qp[0], &wr);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data;
	size_t left = size;
	struct fz f;

	if (fz_setup(&f, (int)(take(&p, &left, 1) & 1)) != 0)
		abort();
	while (left > 0) {
		struct roce_recv_wr rwr = { .num_sge = 1 };

		switch (take(&p, &left, 1) % 5) {
		case 0:
			fz_packet(&f, 1, &p, &left);
			break;
		case 1:
			fz_packet(&f, 0, &p, &left);
			break;
		case 2:
			fz_post(&f, &p, &left);
			break;
		case 3:
			rwr.sg_list[0] = (struct roce_sge){ roce_mr_iova(f.mr[1]),
				(uint32_t)take(&p, &left, 2) % MR_LEN, roce_mr_lkey(f.mr[1]) };
			roce_post_recv(f.qp[1], &rwr);
			break;
		default:
			f.now += take(&p, &left, 1) * 1000000ull;
			break;
		}
		fz_drain(&f);
	}
	fz_teardown(&f);
	return 0;
}
