/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requester: turns send WQEs into request packets. A packet is a pure function of its WQE and
 * PSN (req_build), so go-back-N, here, is a rewind of the cursor (req_rewind) and selective
 * repeat (sr_req.c) can resend any single PSN of an outstanding WQE.
 */
#include <string.h>

#include "transport_private.h"

/* Opcode of packet @idx of @npkts for each WR opcode: [wr opcode][position]. */
enum pos { POS_ONLY, POS_FIRST, POS_MIDDLE, POS_LAST, POS_NUM };

static const uint8_t req_opcode[ROCE_WR_SEND_WITH_INV + 1][POS_NUM] = {
	[ROCE_WR_RDMA_WRITE] = {
		ROCE_OPCODE(RC, WRITE_ONLY), ROCE_OPCODE(RC, WRITE_FIRST),
		ROCE_OPCODE(RC, WRITE_MIDDLE), ROCE_OPCODE(RC, WRITE_LAST) },
	[ROCE_WR_RDMA_WRITE_WITH_IMM] = {
		ROCE_OPCODE(RC, WRITE_ONLY_IMM), ROCE_OPCODE(RC, WRITE_FIRST),
		ROCE_OPCODE(RC, WRITE_MIDDLE), ROCE_OPCODE(RC, WRITE_LAST_IMM) },
	[ROCE_WR_SEND] = {
		ROCE_OPCODE(RC, SEND_ONLY), ROCE_OPCODE(RC, SEND_FIRST),
		ROCE_OPCODE(RC, SEND_MIDDLE), ROCE_OPCODE(RC, SEND_LAST) },
	[ROCE_WR_SEND_WITH_IMM] = {
		ROCE_OPCODE(RC, SEND_ONLY_IMM), ROCE_OPCODE(RC, SEND_FIRST),
		ROCE_OPCODE(RC, SEND_MIDDLE), ROCE_OPCODE(RC, SEND_LAST_IMM) },
	[ROCE_WR_SEND_WITH_INV] = {
		ROCE_OPCODE(RC, SEND_ONLY_INV), ROCE_OPCODE(RC, SEND_FIRST),
		ROCE_OPCODE(RC, SEND_MIDDLE), ROCE_OPCODE(RC, SEND_LAST_INV) },
	[ROCE_WR_RDMA_READ] = {
		ROCE_OPCODE(RC, READ_REQ), ROCE_OPCODE(RC, READ_REQ),
		ROCE_OPCODE(RC, READ_REQ), ROCE_OPCODE(RC, READ_REQ) },
	[ROCE_WR_ATOMIC_CMP_AND_SWP] = {
		ROCE_OPCODE(RC, CMP_SWAP), ROCE_OPCODE(RC, CMP_SWAP),
		ROCE_OPCODE(RC, CMP_SWAP), ROCE_OPCODE(RC, CMP_SWAP) },
	[ROCE_WR_ATOMIC_FETCH_AND_ADD] = {
		ROCE_OPCODE(RC, FETCH_ADD), ROCE_OPCODE(RC, FETCH_ADD),
		ROCE_OPCODE(RC, FETCH_ADD), ROCE_OPCODE(RC, FETCH_ADD) },
};

static inline enum pos
pos_of(uint32_t idx, uint32_t npkts)
{
	if (npkts == 1)
		return POS_ONLY;
	return idx == 0 ? POS_FIRST : idx == npkts - 1 ? POS_LAST : POS_MIDDLE;
}

/*
 * The WQE at the cursor if state, RNR wait, its local buffers, fence and READ/atomic limits
 * let it go now; whether the window has room is the mode's to judge.
 */
struct send_wqe *
req_next(const struct roce_qp *qp)
{
	const struct req_state *r = &qp->req;
	struct send_wqe *wqe;

	if (qp->state != ROCE_QPS_RTS || r->rnr_wait || r->sq_cur == r->sq_head)
		return NULL;
	wqe = sq_wqe(qp, r->sq_cur);
	if (wqe->bad)
		return NULL;
	if (r->psn != r->psn_next_new || wqe->started)
		return wqe; /* a retransmission: limits were met when it first went */
	if ((wqe->wr.send_flags & ROCE_SEND_FENCE) && r->rd_inflight != 0)
		return NULL;
	if (is_rd_atomic(wqe) && r->rd_inflight >= RTE_MAX(qp->attr.max_rd_atomic, 1u))
		return NULL;
	return wqe;
}

/* Fields of the request packet at @psn of @wqe, and its payload range. */
static void
req_desc(const struct roce_qp *qp, const struct send_wqe *wqe, uint32_t psn, uint32_t span,
		struct roce_pkt_desc *d, uint32_t *off, uint32_t *len)
{
	const struct roce_send_wr *wr = &wqe->wr;
	uint32_t idx = (uint32_t)roce_psn_diff(psn, wqe->first_psn);
	enum pos pos = pos_of(idx, wqe->npkts);

	pkt_desc_zero(d);
	d->opcode = req_opcode[wr->opcode][pos];
	d->dest_qpn = qp->attr.dest_qp_num;
	d->psn = psn;
	*off = idx * qp->mtu;
	*len = 0;
	switch (wqe->cls) {
	case WQE_READ:
		/* A re-issued READ asks from the first missing byte: the rest (go-back-N) or the
		 * @span PSNs missing (selective repeat).
		 */
		d->va = wr->remote_addr + *off;
		d->rkey = wr->rkey;
		d->dma_len = RTE_MIN((uint64_t)wqe->length - *off, (uint64_t)span * qp->mtu);
		d->ackreq = 1;
		return;
	case WQE_ATOMIC:
		d->va = wr->remote_addr;
		d->rkey = wr->rkey;
		/* FETCH_ADD has no compare operand: its Compare Data stays zero, as rxe sends. */
		d->swap_add = wr->opcode == ROCE_WR_ATOMIC_CMP_AND_SWP ? wr->swap : wr->compare_add;
		d->compare = wr->opcode == ROCE_WR_ATOMIC_CMP_AND_SWP ? wr->compare_add : 0;
		d->ackreq = 1;
		return;
	default:
		break;
	}
	*len = RTE_MIN(qp->mtu, wqe->length - *off);
	d->va = wr->remote_addr;
	d->rkey = wr->rkey;
	d->dma_len = wqe->length;
	d->imm = wr->imm_data;
	d->inv_rkey = wr->imm_data;
	if (pos == POS_ONLY || pos == POS_LAST) {
		d->ackreq = 1;
		d->se = !!(wr->send_flags & ROCE_SEND_SOLICITED);
	}
	/*
	 * req_opcode[] holds RC opcodes (transport bits 0). SR packets can each be placed alone:
	 * RETH (whole message) and SRETH, which RC opcodes do not carry.
	 */
	d->opcode |= qp->ops->data_transport;
	d->sr_rsn = wqe->rsn;
	d->sr_off = *off;
}

/* Build the request packet at @psn of @wqe; NULL when out of mbufs or on a local error. */
struct rte_mbuf *
req_build(struct roce_qp *qp, const struct send_wqe *wqe, uint32_t psn, uint32_t span,
		int resend, int *bad_sge)
{
	struct tx_piece pc[ROCE_MAX_SGE];
	struct roce_pkt_desc d;
	struct rte_mbuf *m;
	uint32_t off, len;
	int npc = 0;

	req_desc(qp, wqe, psn, span, &d, &off, &len);
	/* A single resend asks for an ACK: the SACK after it tells what is still missing. */
	if (resend)
		d.ackreq = 1;
	/* At least twice per window, or a full window would wait for the ACK timer. */
	if (!d.ackreq && ++qp->req.since_ackreq >=
			RTE_MIN(qp->eng->conf.ack_every, RTE_MAX(qp->inflight / 2, 1u)))
		d.ackreq = 1;
	if (d.ackreq)
		qp->req.since_ackreq = 0;
	/* Found again for every packet, resends too: an MR deregistered meanwhile fails here. */
	if (len != 0 && (wqe->wr.send_flags & ROCE_SEND_INLINE)) {
		pc[0] = (struct tx_piece){ NULL, wqe->inline_data + off, len };
		npc = 1;
	} else if (len != 0) {
		npc = sge_pieces(qp, wqe->wr.sg_list, wqe->wr.num_sge, off, len, pc);
		if (npc < 0) {
			*bad_sge = 1;
			return NULL;
		}
	}
	m = qp_build_data(qp, &qp->attr.ah, &d, pc, (unsigned int)npc, len);
	if (m == NULL)
		return NULL;
	qp->cnt[ROCE_XC_TX_BYTES] += len;
	return m;
}

/* First transmission of a WQE: give it its PSNs and check its local buffers. */
static void
req_start(struct roce_qp *qp, struct send_wqe *wqe)
{
	uint32_t access = is_rd_atomic(wqe) ? ROCE_ACCESS_LOCAL_WRITE : 0;

	wqe->started = 1;
	wqe->first_psn = qp->req.psn_next_new;
	if (wqe_takes_recv(wqe))
		wqe->rsn = qp->req.next_rsn++;
	wqe->npkts = wqe->cls == WQE_ATOMIC ? 1 : pkts_of(wqe->length, qp->mtu);
	/* The build of a one-packet SEND or WRITE checks the same SGEs (req_build()). */
	if (!(wqe->wr.send_flags & ROCE_SEND_INLINE) && (wqe->npkts > 1 || access != 0) &&
			sge_check(qp, wqe->wr.sg_list, wqe->wr.num_sge, access) != 0)
		wqe->bad = 1;
}

/* Move the cursor past the packet just sent. */
static void
req_advance(struct roce_qp *qp, struct send_wqe *wqe, uint32_t npsn)
{
	struct req_state *r = &qp->req;

	r->psn = roce_psn_add(r->psn, npsn);
	if (roce_psn_diff(r->psn, r->psn_next_new) > 0)
		r->psn_next_new = r->psn;
	if (roce_psn_diff(r->psn, wqe->first_psn) >= (int32_t)wqe->npkts) {
		r->sq_cur++;
		if (is_rd_atomic(wqe))
			r->rd_inflight++;
	}
}

/*
 * Send the packet at the cursor, of @wqe (req_next()), and move past it; a READ request
 * covers at most @max_span PSNs. @return the PSNs it covers, 0 when it could not go (out of
 * mbufs or ring room, or a local buffer failed its check: wqe->bad).
 */
uint32_t
req_xmit(struct roce_qp *qp, struct send_wqe *wqe, uint32_t max_span)
{
	struct req_state *r = &qp->req;
	int retrans = wqe->started, bad = 0;
	struct rte_mbuf *m;
	uint32_t npsn;

	if (!wqe->started) {
		req_start(qp, wqe);
		if (wqe->bad)
			return 0;
	}
	npsn = wqe->cls == WQE_READ ? RTE_MIN(psns_left(wqe, r->psn), max_span) : 1;
	m = req_build(qp, wqe, r->psn, npsn, 0, &bad);
	if (m == NULL) {
		wqe->bad = bad;
		return 0;
	}
	if (qp_tx(qp, m, ROCE_XC_TX_REQ) != 0)
		return 0;
	if (retrans && roce_psn_before(r->psn, r->psn_next_new))
		qp->cnt[ROCE_XC_RETRANSMITS]++;
	req_advance(qp, wqe, npsn);
	if (!r->retry_timer.armed)
		req_arm_retry(qp);
	return npsn;
}

/*
 * Go-back-N's window: unacknowledged PSNs stay within max_inflight, but the packet at una
 * always goes (a READ longer than the window would never start otherwise).
 */
static inline int
gbn_fits(const struct roce_qp *qp, const struct send_wqe *wqe)
{
	const struct req_state *r = &qp->req;
	uint32_t need = wqe->started && wqe->cls == WQE_READ ? psns_left(wqe, r->psn) : 1;

	return r->psn == r->una || (uint32_t)roce_psn_diff(r->psn, r->una) + need <= qp->inflight;
}

uint32_t
gbn_req_send(struct roce_qp *qp, uint32_t budget)
{
	struct send_wqe *wqe;
	uint32_t sent = 0;

	while (sent < budget && (wqe = req_next(qp)) != NULL && gbn_fits(qp, wqe) &&
			req_xmit(qp, wqe, UINT32_MAX) != 0)
		sent++;
	return sent;
}

int
gbn_req_has_work(const struct roce_qp *qp)
{
	const struct send_wqe *wqe = req_next(qp);

	return wqe != NULL && gbn_fits(qp, wqe);
}

uint32_t
req_send(struct roce_qp *qp, uint32_t budget)
{
	struct req_state *r = &qp->req;
	uint32_t sent = qp->ops->req_send(qp, budget);

	/* A WQE with a bad local buffer fails once everything before it has completed. */
	if (r->sq_cur != r->sq_head && sq_wqe(qp, r->sq_cur)->bad && r->sq_tail == r->sq_cur) {
		qp_complete_send(qp, sq_wqe(qp, r->sq_cur), ROCE_WC_LOC_PROT_ERR, 0);
		r->sq_tail++;
		qp_to_error(qp);
	}
	return sent;
}

uint64_t
gbn_retry_ns(const struct roce_qp *qp)
{
	return ack_timeout_ns(qp->attr.timeout);
}

void
req_arm_retry(struct roce_qp *qp)
{
	uint64_t t = qp->ops->retry_ns(qp);

	if (t != 0 && qp->req.una != qp->req.psn_next_new)
		roce_timer_arm(&qp->eng->wheel, &qp->req.retry_timer, qp->eng->now + t);
	else
		roce_timer_cancel(&qp->eng->wheel, &qp->req.retry_timer);
}

void
req_rewind(struct roce_qp *qp, uint32_t psn)
{
	struct req_state *r = &qp->req;
	uint32_t i;

	r->rd_inflight = 0;
	for (i = r->sq_tail; i != r->sq_head; i++) {
		struct send_wqe *wqe = sq_wqe(qp, i);

		if (!wqe->started || roce_psn_diff(psn, wqe->first_psn) < (int32_t)wqe->npkts)
			break;
		if (is_rd_atomic(wqe))
			r->rd_inflight++;
	}
	r->sq_cur = i;
	if (i != r->sq_head && sq_wqe(qp, i)->started &&
			roce_psn_diff(psn, sq_wqe(qp, i)->first_psn) >= 0)
		r->psn = psn;
	else
		r->psn = r->psn_next_new;
	r->since_ackreq = 0;
	r->rewound_at = psn;
	r->rewound_at_valid = 1;
	engine_activate(qp);
}
