/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective-repeat requester: every PSN in flight has a slot (sr_tx_slot), the window is
 * never exceeded, and what the completer (sr_comp.c) finds lost is resent alone, before
 * anything new, with the same packet builder as the first transmission (req_build).
 */
#include "transport_private.h"

/*
 * SR's retransmit timeout: the configured one, or more when the measured path is slower;
 * before the first round trip is measured, no less than the IBA ACK timeout (as RFC 6298
 * starts at 1 s), so thousands of QPs starting at once do not resend what is only queued.
 */
static uint64_t
sr_rto_ns(const struct roce_qp *qp)
{
	uint64_t est = qp->sr.srtt_ns != 0 ? qp->sr.srtt_ns + 4 * qp->sr.rttvar_ns :
		ack_timeout_ns(qp->attr.timeout);

	return est > qp->sr.rto_ns ? est : qp->sr.rto_ns;
}

/*
 * PSNs the READ request at the cursor covers: the rest of the READ, at most the window, so a
 * READ longer than the window goes as several requests, one window each.
 */
static inline uint32_t
sr_read_span(const struct roce_qp *qp, const struct send_wqe *wqe)
{
	uint32_t left = wqe->started ? psns_left(wqe, qp->req.psn) : pkts_of(wqe->length, qp->mtu);

	return RTE_MIN(left, qp->inflight);
}

/*
 * Every PSN in flight needs its slot: the packet at the cursor goes only within the window.
 * A new SEND or WRITE_WITH_IMM also needs a credit (sr_state::rsn_limit), unless none is
 * outstanding: then it goes as the limited WQE, whatever the last credits said (an ACK that
 * carried them may have been lost, a READ response acknowledging the same).
 */
static inline int
sr_fits(const struct roce_qp *qp, const struct send_wqe *wqe)
{
	const struct req_state *r = &qp->req;
	uint32_t need = wqe->cls == WQE_READ ? sr_read_span(qp, wqe) : 1;

	if (!wqe->started && !qp->sr.credit_inval && wqe_takes_recv(wqe) &&
			(int32_t)(r->next_rsn - qp->sr.rsn_limit) > 0 && r->next_rsn != qp->sr.rsn_una)
		return 0;
	return (uint32_t)roce_psn_diff(r->psn, r->una) + need <= qp->inflight;
}

/* Resends are due; while an RNR probe is out, only the probe (sr_state::rnr_probe). */
static inline int
sr_may_resend(const struct roce_qp *qp)
{
	return qp->sr.nb_pending != 0 && qp->state == ROCE_QPS_RTS && !qp->req.rnr_wait &&
		(!qp->sr.rnr_probe || (sr_tx_slot(qp, qp->sr.rnr_psn)->flags & SR_TX_PENDING));
}

/* SR: note the first transmission of @npsn PSNs from @psn of @wqe in their slots. */
static void
sr_record(struct roce_qp *qp, const struct send_wqe *wqe, uint32_t psn, uint32_t npsn)
{
	uint8_t kind = wqe->cls == WQE_READ ? SR_K_READ_HEAD :
		wqe->cls == WQE_ATOMIC ? SR_K_ATOMIC : SR_K_DATA;
	uint32_t seq = ++qp->sr.tx_seq, i;

	/* The first PSN outstanding: silence counts from now (sr_spend_retry). */
	if (psn == qp->req.una)
		qp->sr.live_ns = qp->eng->now;
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
		if (s->rnr_probe && !roce_psn_before(psn, roce_psn_add(s->rnr_psn, 1)))
			break;  /* the probe is out: nothing after it until it is answered */
	}
	return sent;
}

uint32_t
sr_req_send(struct roce_qp *qp, uint32_t budget)
{
	struct send_wqe *wqe;
	uint32_t sent = 0;

	/* What is missing goes before anything new. */
	if (sr_may_resend(qp)) {
		sent = sr_resend(qp, budget);
		if (sent != 0 && !qp->req.retry_timer.armed)
			req_arm_retry(qp);
	}
	while (sent < budget && !qp->sr.rnr_probe && (wqe = req_next(qp)) != NULL &&
			sr_fits(qp, wqe)) {
		uint32_t psn = qp->req.psn, npsn = req_xmit(qp, wqe, qp->inflight);

		if (npsn == 0)
			break;
		sr_record(qp, wqe, psn, npsn);
		sent++;
	}
	return sent;
}

int
sr_req_has_work(const struct roce_qp *qp)
{
	const struct send_wqe *wqe;

	if (sr_may_resend(qp))
		return 1;
	if (qp->sr.rnr_probe)
		return 0;
	wqe = req_next(qp);
	return wqe != NULL && sr_fits(qp, wqe);
}

/* A short RTO, doubled per expiry without progress (at most 64 times). */
uint64_t
sr_retry_ns(const struct roce_qp *qp)
{
	return sr_rto_ns(qp) << RTE_MIN(qp->sr.backoff, 6);
}
