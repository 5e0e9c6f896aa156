/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective-repeat responder. Any request PSN inside the window [epsn, epsn + window) is
 * taken: SEND and WRITE packets are placed at once (SRETH offset and receive WQE number, RETH
 * on every WRITE packet), READ and atomic requests wait in the defer table. A flag byte per
 * PSN records arrivals; epsn moves over them in PSN order, and that is when MSNs count,
 * receive WQEs complete and deferred READs/atomics execute, so completions and atomics keep
 * IBA's order. Errors and RNR are answered only for the packet at epsn (as IBA would see
 * them); out of order they drop the packet, which the requester resends until it is the one
 * at epsn.
 */
#include <string.h>

#include "transport_private.h"

/* Most PSNs one SACK bitmap reports (128 bytes, within the smallest MTU). */
#define SR_SACK_BITS 1024u

/*
 * Build and queue an SR ACK: cumulative PSN epsn - 1, then a bitmap from epsn. Its AETH
 * credits are the receive WQEs posted beyond the ones completed (all before epsn), so the
 * requester sends no SEND that would find none.
 */
int
sr_sack_now(struct roce_qp *qp)
{
	struct resp_state *rs = &qp->resp;
	struct sr_state *s = &qp->sr;
	uint8_t credit = sr_credit_code(rs->rq_head - rs->rq_tail);
	struct roce_pkt_desc d;
	int32_t span = roce_psn_diff(s->rx_hi, rs->epsn);
	uint32_t nbits = span >= 0 ? RTE_MIN((uint32_t)span + 1, SR_SACK_BITS) : 0, i, bytes;
	struct rte_mbuf *m = qp_pkt_alloc(qp);
	uint8_t *bits;

	if (m == NULL)
		return -ENOMEM;
	pkt_desc_zero(&d);
	d.opcode = ROCE_OPCODE(SR, ACK);
	d.dest_qpn = qp->attr.dest_qp_num;
	d.psn = roce_psn_add(rs->epsn, ROCE_PSN_MASK);
	d.syndrome = ROCE_AETH_ACK | credit;
	d.msn = rs->msn;
	bytes = (nbits + 31) / 32 * 4;
	bits = roce_build_hdrs(m, &qp->attr.ah, &d, bytes);
	if (bits == NULL) {
		rte_pktmbuf_free(m);
		return -EINVAL;
	}
	memset(bits, 0, bytes);
	for (i = 0; i < nbits; i++)
		if (s->rx[(rs->epsn + i) & s->mask] & SR_RX_RCVD)
			bits[i >> 3] |= 1 << (i & 7);
	roce_build_finish(m, &qp->attr.ah);
	if (qp_tx(qp, m, ROCE_XC_TX_RESP) != 0)
		return -ENOSPC;
	qp->cnt[ROCE_XC_SR_SACK_TX]++;
	s->credit_sent = rs->rq_tail + sr_credit_count(credit);
	s->credit_told = 1;
	return 0;
}

/* An SR ACK when the engine polls, built then from the latest state (coalesced). */
static void
sr_ack(struct roce_qp *qp)
{
	resp_hold_ack(qp, 1, 0, ACK_SYNDROME);
}

/*
 * Receives were posted. Once a quarter of the receive queue more than the last SR ACK told
 * is there, an SR ACK tells it now: a requester held to those credits would otherwise wait
 * for the next ACK (the receives taken by one burst are posted again after its ACK left).
 */
void
sr_recv_posted(struct roce_qp *qp)
{
	const struct resp_state *rs = &qp->resp;
	const struct sr_state *s = &qp->sr;

	if (s->credit_told && !rs->ack_pending && (int32_t)(rs->rq_head - s->credit_sent) >=
			(int32_t)RTE_MAX(qp->rq_size / 4, 1u))
		sr_ack(qp);
}

/* Complete the oldest receive WQE with what its message's last packet left there. */
static enum resp_err
sr_complete_recv(struct roce_qp *qp)
{
	struct resp_state *rs = &qp->resp;
	enum resp_err err = RESP_OK;
	const struct recv_wqe *rwqe;
	struct roce_wc lost, *wc;

	if (rs->rq_tail == rs->rq_head)
		return RESP_OK;
	rwqe = rq_wqe(qp, rs->rq_tail);
	wc = cq_slot(qp->recv_cq);
	*(wc != NULL ? wc : &lost) = (struct roce_wc){
		.wr_id = rwqe->wr.wr_id,
		.status = ROCE_WC_SUCCESS,
		.opcode = rwqe->sr_op,
		.byte_len = rwqe->sr_len,
		.imm_data = rwqe->sr_imm,
		.invalidated_rkey = rwqe->sr_inv,
		.qp_num = qp->qpn,
		.src_qp = qp->attr.dest_qp_num,
		.wc_flags = rwqe->sr_flags,
	};
	/* In PSN order, as the completion: what was placed before it still had the key. */
	if ((rwqe->sr_flags & ROCE_WC_WITH_INV) && resp_invalidate_key(qp, rwqe->sr_inv) != 0) {
		if (wc != NULL)
			wc->status = ROCE_WC_REM_INV_REQ_ERR;
		err = RESP_ERR_INV;
	}
	rs->rq_tail++;
	rs->recv_off = 0;
	qp->cnt[ROCE_XC_RECV_COMPLETED]++;
	if (wc != NULL)
		cq_commit(qp->recv_cq);
	else
		qp->cnt[ROCE_XC_CQ_OVERRUN]++;
	return err;
}

/* Note in @rwqe the completion of a message ending with this packet. */
static void
sr_note_recv(struct recv_wqe *rwqe, const struct rte_mbuf *m, const struct roce_pkt_meta *meta,
		uint32_t len, enum roce_wc_opcode op)
{
	rwqe->sr_len = len;
	rwqe->sr_op = op;
	rwqe->sr_flags = 0;
	if (meta->mask & ROCE_M_IMMDT) {
		rwqe->sr_imm = roce_immdt_imm(roce_pkt_hdr(m, meta, ROCE_HDR_IMMDT));
		rwqe->sr_flags |= ROCE_WC_WITH_IMM;
	}
	if (meta->mask & ROCE_M_IETH) {
		rwqe->sr_inv = roce_ieth_rkey(roce_pkt_hdr(m, meta, ROCE_HDR_IETH));
		rwqe->sr_flags |= ROCE_WC_WITH_INV;
	}
}

static enum resp_err
sr_place_write(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta,
		uint32_t off, struct recv_wqe *rwqe)
{
	const struct roce_reth *reth = roce_pkt_hdr(m, meta, ROCE_HDR_RETH);
	uint32_t len = roce_reth_len(reth), plen = meta->payload_len;
	uint64_t end = (uint64_t)off + plen;
	uint8_t *dst;

	if (len > ROCE_MAX_MSG_SIZE || end > len || ((meta->mask & ROCE_M_LAST) && end != len))
		return RESP_ERR_INV;
	dst = resp_mr(qp, roce_reth_rkey(reth), roce_reth_va(reth), len, ROCE_ACCESS_REMOTE_WRITE,
			NULL);
	if (dst == NULL && len != 0)
		return RESP_ERR_ACC;
	if (plen != 0)
		pkt_copy_out(m, meta->payload_off, dst + off, plen);
	if (rwqe != NULL && (meta->mask & ROCE_M_LAST))
		sr_note_recv(rwqe, m, meta, len, ROCE_WC_RECV_RDMA_WITH_IMM);
	return RESP_OK;
}

static enum resp_err
sr_place_send(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta,
		uint32_t off, struct recv_wqe *rwqe, int in_order)
{
	uint64_t end = (uint64_t)off + meta->payload_len;

	if (end > rwqe->length) {
		if (in_order)
			resp_complete_recv(qp, ROCE_WC_LOC_LEN_ERR, ROCE_WC_RECV, off, NULL, NULL);
		return RESP_ERR_OP;
	}
	if (sge_scatter(qp, rwqe->wr.sg_list, rwqe->wr.num_sge, off, m, meta->payload_off,
			meta->payload_len) != 0) {
		if (in_order)
			resp_complete_recv(qp, ROCE_WC_LOC_PROT_ERR, ROCE_WC_RECV, off, NULL,
					NULL);
		return RESP_ERR_OP;
	}
	if (meta->mask & ROCE_M_LAST)
		sr_note_recv(rwqe, m, meta, (uint32_t)end, ROCE_WC_RECV);
	return RESP_OK;
}

/* Check and place an SR SEND/WRITE packet; *@flags gets what passing it will do. */
static enum resp_err
sr_place(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta, int in_order,
		uint8_t *flags)
{
	const struct roce_sreth *sh = roce_pkt_hdr(m, meta, ROCE_HDR_SRETH);
	uint32_t off = roce_sreth_off(sh), mask = meta->mask;
	struct resp_state *rs = &qp->resp;
	struct recv_wqe *rwqe = NULL;
	enum resp_err err;

	err = resp_check_access(qp, mask);
	if (err == RESP_OK)
		err = resp_check_length(qp, mask, meta->payload_len);
	if (err != RESP_OK)
		return err;
	if (((mask & ROCE_M_FIRST) && off != 0) || off % qp->mtu != 0)
		return RESP_ERR_INV;
	if (mask & ROCE_M_RWR) {
		/* The receive WQE is named by number: earlier messages may still be missing. */
		uint32_t n = (roce_sreth_rsn(sh) - rs->rq_tail) & ROCE_24BIT_MASK;

		if (n >= rs->rq_head - rs->rq_tail)
			return RESP_ERR_RNR;
		rwqe = rq_wqe(qp, rs->rq_tail + n);
	}
	err = mask & ROCE_M_WRITE ? sr_place_write(qp, m, meta, off, rwqe) :
		sr_place_send(qp, m, meta, off, rwqe, in_order);
	if (err != RESP_OK)
		return err;
	*flags |= (mask & ROCE_M_LAST ? SR_RX_LAST : 0) | (mask & ROCE_M_COMP ? SR_RX_COMP : 0);
	return RESP_OK;
}

/* Keep an out-of-order READ/atomic request until the PSNs before it are in. */
static enum resp_err
sr_defer(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	struct sr_defer *e = NULL;
	enum resp_err err;
	uint32_t i;

	err = resp_check_access(qp, meta->mask);
	if (err != RESP_OK)
		return err;
	for (i = 0; i < qp->sr.nb_defer && e == NULL; i++)
		if (!qp->sr.defer[i].valid)
			e = &qp->sr.defer[i];
	if (e == NULL)
		return RESP_ERR_INV;
	memset(e, 0, sizeof(*e));
	e->valid = 1;
	e->opcode = meta->opcode;
	e->psn = meta->psn;
	if (meta->mask & ROCE_M_READ) {
		const struct roce_reth *reth = roce_pkt_hdr(m, meta, ROCE_HDR_RETH);

		e->va = roce_reth_va(reth);
		e->rkey = roce_reth_rkey(reth);
		e->len = roce_reth_len(reth);
	} else {
		const struct roce_atmeth *ath = roce_pkt_hdr(m, meta, ROCE_HDR_ATMETH);

		e->va = roce_atmeth_va(ath);
		e->rkey = roce_atmeth_rkey(ath);
		e->swap_add = roce_atmeth_swap_add(ath);
		e->compare = roce_atmeth_compare(ath);
	}
	return RESP_OK;
}

static struct sr_defer *
sr_defer_find(struct roce_qp *qp, uint32_t psn)
{
	uint32_t i;

	for (i = 0; i < qp->sr.nb_defer; i++)
		if (qp->sr.defer[i].valid && qp->sr.defer[i].psn == psn)
			return &qp->sr.defer[i];
	return NULL;
}

/* Forget the flags of the @n PSNs from @psn a READ covers (they carry no packet). */
static void
sr_rx_skip(struct roce_qp *qp, uint32_t psn, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < RTE_MIN(n, qp->sr.mask + 1); i++) {
		uint8_t *f = &qp->sr.rx[(psn + i) & qp->sr.mask];
		struct sr_defer *e;

		if ((*f & SR_RX_DEFER) && (e = sr_defer_find(qp, roce_psn_add(psn, i))) != NULL)
			e->valid = 0;
		*f = 0;
	}
}

/* Execute the READ/atomic the packet at epsn left in the defer table. */
static enum resp_err
sr_exec_deferred(struct roce_qp *qp, struct sr_defer *e)
{
	uint32_t psn = e->psn;
	enum resp_err err;

	e->valid = 0;
	if (roce_opcode_info[e->opcode].mask & ROCE_M_READ)
		err = resp_exec_read_at(qp, psn, e->va, e->rkey, e->len);
	else
		err = resp_exec_atomic_at(qp, psn, e->opcode, e->va, e->rkey, e->swap_add,
				e->compare);
	if (err == RESP_OK)
		sr_rx_skip(qp, roce_psn_add(psn, 1), roce_psn_diff(qp->resp.epsn, psn) - 1);
	return err;
}

/* Move epsn over what has arrived, in PSN order. */
static void
sr_advance(struct roce_qp *qp)
{
	struct resp_state *rs = &qp->resp;
	struct sr_state *s = &qp->sr;

	while (qp->state != ROCE_QPS_ERR) {
		uint8_t *slot = &s->rx[rs->epsn & s->mask], f = *slot;
		uint32_t psn = rs->epsn;
		struct sr_defer *e;
		enum resp_err err;

		if (!(f & SR_RX_RCVD))
			break;
		*slot = 0;
		if (f & SR_RX_DEFER) {
			e = sr_defer_find(qp, psn);
			if (e == NULL)
				break; /* lost to a slot reuse: the requester sends it again */
			err = sr_exec_deferred(qp, e);
			if (err != RESP_OK)
				return resp_nak(qp, psn, err);
			continue;
		}
		if (f & SR_RX_LAST)
			rs->msn = roce_psn_add(rs->msn, 1);
		if ((f & SR_RX_COMP) && sr_complete_recv(qp) != RESP_OK)
			return resp_nak(qp, psn, RESP_ERR_INV);
		rs->epsn = roce_psn_add(psn, 1);
	}
}

/* A READ or atomic at epsn: executed at once, as IBA does. */
static void
sr_exec_now(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	enum resp_err err = resp_check(qp, meta);

	if (err == RESP_OK)
		err = meta->mask & ROCE_M_READ ? resp_exec_read(qp, m, meta) :
			resp_exec_atomic(qp, m, meta);
	if (err != RESP_OK)
		return resp_nak(qp, meta->psn, err);
	sr_rx_skip(qp, meta->psn, roce_psn_diff(qp->resp.epsn, meta->psn));
}

void
sr_resp_rx(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	struct resp_state *rs = &qp->resp;
	struct sr_state *s = &qp->sr;
	int32_t diff = roce_psn_diff(meta->psn, rs->epsn);
	uint8_t flags = SR_RX_RCVD, *slot;
	int had_gap = roce_psn_diff(s->rx_hi, rs->epsn) > 0;
	enum resp_err err;

	if ((meta->mask & (ROCE_M_SEND | ROCE_M_WRITE)) && !(meta->mask & ROCE_M_SR)) {
		qp->cnt[ROCE_XC_SR_REJECT]++;
		return;
	}
	if (diff < 0) {
		if (meta->mask & (ROCE_M_READ | ROCE_M_ATOMIC))
			return resp_duplicate(qp, m, meta);
		qp->cnt[ROCE_XC_DUP_REQ]++;
		qp->cnt[ROCE_XC_SR_DUP]++;
		return sr_ack(qp);
	}
	if ((uint32_t)diff > s->mask) {
		qp->cnt[ROCE_XC_SR_WINDOW_DROP]++;
		return;
	}
	slot = &s->rx[meta->psn & s->mask];
	if (*slot & SR_RX_RCVD) {
		qp->cnt[ROCE_XC_SR_DUP]++;
		if (meta->flags & ROCE_PKT_F_ACKREQ)
			sr_ack(qp);
		return;
	}
	if (diff == 0 && (meta->mask & (ROCE_M_READ | ROCE_M_ATOMIC))) {
		sr_exec_now(qp, m, meta);
	} else {
		if (meta->mask & (ROCE_M_READ | ROCE_M_ATOMIC)) {
			err = sr_defer(qp, m, meta);
			flags |= SR_RX_DEFER;
		} else {
			err = sr_place(qp, m, meta, diff == 0, &flags);
		}
		if (err != RESP_OK) {
			if (diff == 0)
				return resp_nak(qp, meta->psn, err);
			qp->cnt[ROCE_XC_SR_OOO_DROP]++;
			return;
		}
		*slot = flags;
		if (diff != 0) {
			qp->cnt[ROCE_XC_SR_OOO_PLACED]++;
			if (roce_psn_before(s->rx_hi, meta->psn))
				s->rx_hi = meta->psn;
			/* Tell the requester about the gap now, then every fourth arrival. */
			if ((meta->flags & ROCE_PKT_F_ACKREQ) || (s->ooo++ & 3) == 0)
				sr_ack(qp);
			return;
		}
	}
	if (qp->state == ROCE_QPS_ERR)
		return;
	sr_advance(qp);
	if (qp->state == ROCE_QPS_ERR)
		return;
	if (roce_psn_before(s->rx_hi, rs->epsn)) {
		s->ooo = 0;
		s->rx_hi = roce_psn_add(rs->epsn, ROCE_PSN_MASK);
	}
	/* ACK when asked, and at once when a gap closed: the requester learns what is in. */
	if ((meta->flags & ROCE_PKT_F_ACKREQ) || had_gap)
		sr_ack(qp);
}
