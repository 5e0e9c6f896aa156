/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requester: turns send WQEs into request packets. A packet is a pure function of its WQE and
 * PSN (req_build), so go-back-N is a rewind of the cursor (req_rewind) and selective repeat
 * can resend any single PSN of an outstanding WQE.
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

static inline int
is_rd_atomic(const struct send_wqe *wqe)
{
	return wqe->cls == WQE_READ || wqe->cls == WQE_ATOMIC;
}

/* PSNs from @psn to the end of @wqe: a READ request covers all of them at once. */
static inline uint32_t
psns_left(const struct send_wqe *wqe, uint32_t psn)
{
	return wqe->npkts - (uint32_t)roce_psn_diff(psn, wqe->first_psn);
}

/*
 * PSNs the READ request at @psn covers: the rest of the READ; with selective repeat at most
 * the window, so a READ longer than the window goes as several requests, one window each
 * (every PSN in flight has its own slot).
 */
static inline uint32_t
read_span(const struct roce_qp *qp, const struct send_wqe *wqe, uint32_t psn)
{
	uint32_t left = wqe->started ? psns_left(wqe, psn) : pkts_of(wqe->length, qp->mtu);

	return qp->sr.on ? RTE_MIN(left, qp->inflight) : left;
}

/* Whether the next packet may go now: window, READ/atomic limit, fence, RNR wait. */
static int
req_can_send(const struct roce_qp *qp)
{
	const struct req_state *r = &qp->req;
	const struct send_wqe *wqe;
	uint32_t need;

	if (qp->state != ROCE_QPS_RTS || r->rnr_wait || r->sq_cur == r->sq_head)
		return 0;
	wqe = sq_wqe(qp, r->sq_cur);
	if (wqe->bad)
		return 0;
	if (qp->sr.on) {
		/* Every PSN in flight needs its slot: the window is never exceeded. */
		need = wqe->cls == WQE_READ ? read_span(qp, wqe, r->psn) : 1;
		if ((uint32_t)roce_psn_diff(r->psn, r->una) + need > qp->inflight)
			return 0;
	} else {
		need = wqe->started && wqe->cls == WQE_READ ? psns_left(wqe, r->psn) : 1;
		if (r->psn != r->una &&
				(uint32_t)roce_psn_diff(r->psn, r->una) + need > qp->inflight)
			return 0;
	}
	if (r->psn != r->psn_next_new || wqe->started)
		return 1; /* a retransmission: limits were met when it first went */
	if ((wqe->wr.send_flags & ROCE_SEND_FENCE) && r->rd_inflight != 0)
		return 0;
	if (is_rd_atomic(wqe) && r->rd_inflight >= RTE_MAX(qp->attr.max_rd_atomic, 1u))
		return 0;
	return 1;
}

int
req_has_work(const struct roce_qp *qp)
{
	if (qp->sr.on && qp->sr.nb_pending != 0 && qp->state == ROCE_QPS_RTS &&
			!qp->req.rnr_wait)
		return 1;
	return req_can_send(qp);
}

/* SR opcode of an RC SEND/WRITE opcode: the same operation in the manufacturer range. */
static inline uint8_t
sr_opcode(uint8_t rc)
{
	return ROCE_TRANSPORT_SR | (rc & ~ROCE_TRANSPORT_MASK);
}

/* Fields of the request packet at @psn of @wqe, and its payload range. */
static void
req_desc(const struct roce_qp *qp, const struct send_wqe *wqe, uint32_t psn, uint32_t span,
		struct roce_pkt_desc *d, uint32_t *off, uint32_t *len)
{
	const struct roce_send_wr *wr = &wqe->wr;
	uint32_t idx = (uint32_t)roce_psn_diff(psn, wqe->first_psn);
	enum pos pos = pos_of(idx, wqe->npkts);

	memset(d, 0, sizeof(*d));
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
	if (qp->sr.on) {
		/* Every SR packet can be placed alone: RETH (whole message) and SRETH. */
		d->opcode = sr_opcode(d->opcode);
		d->sr_rsn = wqe->rsn;
		d->sr_off = *off;
	}
}

/* Build the request packet at @psn of @wqe; NULL when out of mbufs or on a local error. */
static struct rte_mbuf *
req_build(struct roce_qp *qp, const struct send_wqe *wqe, uint32_t psn, uint32_t span,
		int resend, int *bad_sge)
{
	struct roce_pkt_desc d;
	struct rte_mbuf *m;
	uint32_t off, len;
	uint8_t *payload;

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
	m = qp_pkt_alloc(qp);
	if (m == NULL)
		return NULL;
	payload = roce_build_hdrs(m, &qp->attr.ah, &d, len);
	if (payload == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	if (len != 0) {
		if (wqe->wr.send_flags & ROCE_SEND_INLINE)
			memcpy(payload, wqe->inline_data + off, len);
		else if (sge_gather(qp, wqe->wr.sg_list, wqe->wr.num_sge, off, payload, len)) {
			*bad_sge = 1;
			rte_pktmbuf_free(m);
			return NULL;
		}
	}
	roce_build_finish(m, &qp->attr.ah);
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
	if (wqe->cls == WQE_SEND || wqe->wr.opcode == ROCE_WR_RDMA_WRITE_WITH_IMM)
		wqe->rsn = qp->req.next_rsn++;
	wqe->npkts = wqe->cls == WQE_ATOMIC ? 1 : pkts_of(wqe->length, qp->mtu);
	if (!(wqe->wr.send_flags & ROCE_SEND_INLINE) &&
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

/* SR: note the first transmission of @npsn PSNs from @psn of @wqe in their slots. */
static void
sr_record(struct roce_qp *qp, const struct send_wqe *wqe, uint32_t psn, uint32_t npsn)
{
	uint8_t kind = wqe->cls == WQE_READ ? SR_K_READ_HEAD :
		wqe->cls == WQE_ATOMIC ? SR_K_ATOMIC : SR_K_DATA;
	uint32_t seq = ++qp->sr.tx_seq, i;

	if (!qp->sr.rtt_on && npsn != 0) {
		qp->sr.rtt_on = 1;
		qp->sr.rtt_psn = roce_psn_add(psn, npsn - 1);
		qp->sr.rtt_t0 = qp->eng->now;
	}
	for (i = 0; i < npsn; i++) {
		struct sr_tx_slot *t = sr_tx_slot(qp, roce_psn_add(psn, i));

		t->tx_seq = seq;
		t->flags = 0;
		t->kind = i == 0 ? kind : SR_K_READ_BODY;
	}
}

void
sr_mark_pending(struct roce_qp *qp, uint32_t psn)
{
	struct sr_tx_slot *t = sr_tx_slot(qp, psn);

	if (t->flags & (SR_TX_DONE | SR_TX_PENDING))
		return;
	t->flags |= SR_TX_PENDING;
	qp->sr.nb_pending++;
}

/* The outstanding WQE holding @psn, searching on from *@idx (PSNs asked in rising order). */
static struct send_wqe *
sr_wqe_of(struct roce_qp *qp, uint32_t *idx, uint32_t psn)
{
	for (; *idx != qp->req.sq_head; (*idx)++) {
		struct send_wqe *wqe = sq_wqe(qp, *idx);

		if (!wqe->started || roce_psn_before(psn, wqe->first_psn))
			return NULL;
		if (roce_psn_diff(psn, wqe->first_psn) < (int32_t)wqe->npkts)
			return wqe;
	}
	return NULL;
}

/*
 * Missing READ responses asked again from @psn: the pending PSNs that follow it, up to the
 * end of the READ request they belong to (a request never spans two responder resources).
 */
static uint32_t
sr_read_run(struct roce_qp *qp, const struct send_wqe *wqe, uint32_t psn)
{
	uint32_t left = psns_left(wqe, psn), n = 1;

	while (n < left) {
		const struct sr_tx_slot *t = sr_tx_slot(qp, roce_psn_add(psn, n));

		if (t->kind != SR_K_READ_BODY || !(t->flags & SR_TX_PENDING))
			break;
		n++;
	}
	return n;
}

/* SR: resend the pending PSNs, oldest first. @return packets sent. */
static uint32_t
sr_resend(struct roce_qp *qp, uint32_t budget)
{
	struct req_state *r = &qp->req;
	struct sr_state *s = &qp->sr;
	uint32_t sent = 0, idx = r->sq_tail, psn = r->una;

	while (s->nb_pending != 0 && sent < budget && roce_psn_before(psn, r->psn_next_new)) {
		struct sr_tx_slot *t = sr_tx_slot(qp, psn);
		uint32_t span = 1, seq, i;
		struct send_wqe *wqe;
		struct rte_mbuf *m;
		int bad = 0;

		if (!(t->flags & SR_TX_PENDING)) {
			psn = roce_psn_add(psn, 1);
			continue;
		}
		wqe = sr_wqe_of(qp, &idx, psn);
		if (wqe == NULL) {
			t->flags &= ~SR_TX_PENDING;
			s->nb_pending--;
			continue;
		}
		if (wqe->cls == WQE_READ)
			span = sr_read_run(qp, wqe, psn);
		m = req_build(qp, wqe, psn, span, 1, &bad);
		if (m == NULL || qp_tx(qp, m, ROCE_XC_TX_REQ) != 0)
			break;
		qp->cnt[ROCE_XC_RETRANSMITS]++;
		qp->cnt[ROCE_XC_SR_RETRANSMITS]++;
		if (wqe->cls == WQE_READ)
			qp->cnt[ROCE_XC_SR_READ_REREQ]++;
		seq = ++s->tx_seq;
		for (i = 0; i < span; i++) {
			if (s->rtt_on && s->rtt_psn == roce_psn_add(psn, i))
				s->rtt_on = 0;	/* Karn: a resent PSN times nothing */
			t = sr_tx_slot(qp, roce_psn_add(psn, i));
			if (t->flags & SR_TX_PENDING)
				s->nb_pending--;
			t->flags = (t->flags & ~SR_TX_PENDING) | SR_TX_RTX;
			t->tx_seq = seq;
		}
		psn = roce_psn_add(psn, span);
		sent++;
	}
	return sent;
}

uint32_t
req_send(struct roce_qp *qp, uint32_t budget)
{
	struct req_state *r = &qp->req;
	uint32_t sent = 0;

	/* Selective repeat: what is missing goes before anything new. */
	if (qp->sr.on && qp->sr.nb_pending != 0 && !r->rnr_wait && qp->state == ROCE_QPS_RTS) {
		sent = sr_resend(qp, budget);
		if (sent != 0 && !r->retry_timer.armed)
			req_arm_retry(qp);
	}
	while (sent < budget && req_can_send(qp)) {
		struct send_wqe *wqe = sq_wqe(qp, r->sq_cur);
		int retrans = wqe->started, bad = 0;
		struct rte_mbuf *m;
		uint32_t npsn;

		if (!wqe->started) {
			req_start(qp, wqe);
			if (wqe->bad)
				break;
		}
		npsn = wqe->cls == WQE_READ ? read_span(qp, wqe, r->psn) : 1;
		m = req_build(qp, wqe, r->psn, npsn, 0, &bad);
		if (m == NULL) {
			wqe->bad = bad;
			break;
		}
		if (qp_tx(qp, m, ROCE_XC_TX_REQ) != 0)
			break;
		if (retrans && roce_psn_before(r->psn, r->psn_next_new))
			qp->cnt[ROCE_XC_RETRANSMITS]++;
		if (qp->sr.on)
			sr_record(qp, wqe, r->psn, npsn);
		req_advance(qp, wqe, npsn);
		sent++;
		if (!r->retry_timer.armed)
			req_arm_retry(qp);
	}
	/* A WQE with a bad local buffer fails once everything before it has completed. */
	if (r->sq_cur != r->sq_head && sq_wqe(qp, r->sq_cur)->bad && r->sq_tail == r->sq_cur) {
		qp_complete_send(qp, sq_wqe(qp, r->sq_cur), ROCE_WC_LOC_PROT_ERR, 0);
		r->sq_tail++;
		qp_to_error(qp);
	}
	return sent;
}

void
req_arm_retry(struct roce_qp *qp)
{
	/* SR: a short RTO, doubled per expiry without progress (at most 64 times). */
	uint64_t t = qp->sr.on ? sr_rto_ns(qp) << RTE_MIN(qp->sr.backoff, 6) :
		ack_timeout_ns(qp->attr.timeout);

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
