/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective-repeat completer. Every PSN in flight has a slot (sr_tx_slot). ACKs and SACK
 * bits mark SEND/WRITE PSNs done and READ/atomic requests received; responses mark
 * READ/atomic PSNs done. una moves over done PSNs and WQEs complete in order behind it. A PSN
 * is lost when packets sent at least SR_DUPTHRESH transmissions after it have arrived (SACK
 * evidence), when responses after it arrived (READ/atomic), or when the RTO expires.
 */
#include "transport_private.h"

#define SR_DUPTHRESH 3
/* Most SACK bytes read from an SR ACK. */
#define SR_SACK_MAX 256

static inline int
seq_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/* RFC 6298's smoothing of a round-trip sample. */
static void
sr_rtt_sample(struct sr_state *s, uint64_t rtt)
{
	uint64_t err;

	if (s->srtt_ns == 0) {
		s->srtt_ns = rtt;
		s->rttvar_ns = rtt / 2;
		return;
	}
	err = rtt > s->srtt_ns ? rtt - s->srtt_ns : s->srtt_ns - rtt;
	s->rttvar_ns = (3 * s->rttvar_ns + err) / 4;
	s->srtt_ns = (7 * s->srtt_ns + rtt) / 8;
}

/* @psn is acknowledged or answered; @evidence: its own transmission arrived. */
static int
sr_done(struct roce_qp *qp, uint32_t psn, int evidence)
{
	struct sr_state *s = &qp->sr;
	struct sr_tx_slot *t = sr_tx_slot(qp, psn);

	if (t->flags & SR_TX_DONE)
		return 0;
	if (s->rtt_on && psn == s->rtt_psn) {
		if (!(t->flags & SR_TX_RTX))
			sr_rtt_sample(s, qp->eng->now - s->rtt_t0);
		s->rtt_on = 0;
	}
	if (t->flags & SR_TX_PENDING)
		s->nb_pending--;
	t->flags = (t->flags & ~SR_TX_PENDING) | SR_TX_DONE;
	if (evidence && seq_after(t->tx_seq, s->hi_seq))
		s->hi_seq = t->tx_seq;
	if (roce_psn_before(s->hi_done, psn))
		s->hi_done = psn;
	return 1;
}

/* All not-done PSNs of the READ request at @head (its head and body) are to be resent. */
static void
sr_mark_read(struct roce_qp *qp, uint32_t head)
{
	uint32_t psn = head;

	do {
		sr_mark_pending(qp, psn);
		psn = roce_psn_add(psn, 1);
	} while (roce_psn_before(psn, qp->req.psn_next_new) &&
			sr_tx_slot(qp, psn)->kind == SR_K_READ_BODY);
}

/*
 * The responder reports @psn received: cumulatively (@cum) or in a SACK. SEND/WRITE PSNs are
 * done; a READ/atomic request is known received, and a cumulative ACK past it means its
 * responses have all gone out before this ACK, so a missing one was lost.
 */
static int
sr_ack_psn(struct roce_qp *qp, uint32_t psn, int cum)
{
	struct sr_state *s = &qp->sr;
	struct sr_tx_slot *t = sr_tx_slot(qp, psn);

	if (t->kind == SR_K_DATA)
		return sr_done(qp, psn, 1);
	if (t->kind != SR_K_READ_BODY && !(t->flags & SR_TX_REQ_RCVD)) {
		t->flags |= SR_TX_REQ_RCVD;
		if (seq_after(t->tx_seq, s->hi_seq))
			s->hi_seq = t->tx_seq;
	}
	if (cum && !(t->flags & (SR_TX_DONE | SR_TX_PENDING | SR_TX_RTX))) {
		sr_mark_pending(qp, psn);
		qp->cnt[ROCE_XC_SR_FAST_RETRANS]++;
	}
	return 0;
}

/* Everything up to and including @upto arrived. */
static int
sr_cum(struct roce_qp *qp, uint32_t upto)
{
	uint32_t psn;
	int progress = 0;

	for (psn = qp->req.una; roce_psn_diff(upto, psn) >= 0; psn = roce_psn_add(psn, 1))
		progress |= sr_ack_psn(qp, psn, 1);
	return progress;
}

/* PSNs sent well before one that arrived and still missing: lost, resend them. */
static void
sr_scan(struct roce_qp *qp)
{
	struct sr_state *s = &qp->sr;
	uint32_t psn;

	for (psn = qp->req.una; roce_psn_before(psn, s->hi_done); psn = roce_psn_add(psn, 1)) {
		struct sr_tx_slot *t = sr_tx_slot(qp, psn);

		if ((t->flags & (SR_TX_DONE | SR_TX_PENDING)) || t->kind == SR_K_READ_BODY ||
				(t->kind != SR_K_DATA && (t->flags & SR_TX_REQ_RCVD)) ||
				seq_after(t->tx_seq + SR_DUPTHRESH, s->hi_seq))
			continue;
		if (t->kind == SR_K_READ_HEAD)
			sr_mark_read(qp, psn);
		else
			sr_mark_pending(qp, psn);
		qp->cnt[ROCE_XC_SR_FAST_RETRANS]++;
	}
}

/* A response at @psn: READ/atomic answers before it that are still missing were lost. */
static void
sr_resp_gap(struct roce_qp *qp, uint32_t psn)
{
	uint32_t end = roce_psn_add(psn, ROCE_PSN_MASK + 1 - SR_DUPTHRESH), p;

	for (p = qp->req.una; roce_psn_diff(end, p) >= 0; p = roce_psn_add(p, 1)) {
		struct sr_tx_slot *t = sr_tx_slot(qp, p);

		if (t->kind == SR_K_DATA || (t->flags & (SR_TX_DONE | SR_TX_PENDING | SR_TX_RTX)))
			continue;
		sr_mark_pending(qp, p);
		qp->cnt[ROCE_XC_SR_FAST_RETRANS]++;
	}
}

/* Move una over done PSNs, complete the WQEs behind it, find losses, restart the RTO. */
static void
sr_settle(struct roce_qp *qp, int progress)
{
	struct req_state *r = &qp->req;
	uint32_t old = r->una;

	while (r->una != r->psn_next_new && (sr_tx_slot(qp, r->una)->flags & SR_TX_DONE))
		r->una = roce_psn_add(r->una, 1);
	if (roce_psn_before(qp->sr.hi_done, r->una))
		qp->sr.hi_done = roce_psn_add(r->una, ROCE_PSN_MASK);
	/* The RNR probe answered: receives are there, what waited behind it goes. */
	if (unlikely(qp->sr.rnr_probe) && (roce_psn_before(qp->sr.rnr_psn, r->una) ||
			(sr_tx_slot(qp, qp->sr.rnr_psn)->flags & SR_TX_DONE))) {
		qp->sr.rnr_probe = 0;
		engine_activate(qp);
	}
	while (r->sq_tail != r->sq_head && sq_wqe(qp, r->sq_tail)->started &&
			roce_psn_before(last_psn(sq_wqe(qp, r->sq_tail)), r->una)) {
		const struct send_wqe *wqe = sq_wqe(qp, r->sq_tail);

		if (wqe_takes_recv(wqe))
			qp->sr.rsn_una = wqe->rsn + 1;
		comp_pop(qp, ROCE_WC_SUCCESS, 0);
	}
	sr_scan(qp);
	if (progress || r->una != old) {
		qp->sr.backoff = 0;
		qp->sr.live_ns = qp->eng->now;
		comp_progress(qp);
	}
	if (qp->sr.nb_pending != 0)
		engine_activate(qp);
}

/* The outstanding WQE of class @cls holding @psn, or NULL. */
static struct send_wqe *
sr_wqe(struct roce_qp *qp, uint32_t psn, enum wqe_class cls)
{
	uint32_t i;

	for (i = qp->req.sq_tail; i != qp->req.sq_head; i++) {
		struct send_wqe *wqe = sq_wqe(qp, i);

		if (!wqe->started || roce_psn_before(psn, wqe->first_psn))
			return NULL;
		if (roce_psn_diff(psn, wqe->first_psn) < (int32_t)wqe->npkts)
			return wqe->cls == cls ? wqe : NULL;
	}
	return NULL;
}

/* A READ response: placed wherever it falls, whatever is missing before it. */
static void
sr_read_resp(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	const struct sr_tx_slot *t = sr_tx_slot(qp, meta->psn);
	struct send_wqe *wqe = sr_wqe(qp, meta->psn, WQE_READ);
	uint32_t off, want;

	if (t->flags & SR_TX_DONE) {
		qp->cnt[ROCE_XC_STALE_RESP]++;
		return;
	}
	if (wqe == NULL) {
		qp->cnt[ROCE_XC_BAD_RESP]++;
		return comp_fail(qp, ROCE_WC_BAD_RESP_ERR, 0);
	}
	off = (uint32_t)roce_psn_diff(meta->psn, wqe->first_psn) * qp->mtu;
	want = RTE_MIN(qp->mtu, wqe->length - off);
	if (meta->payload_len != want) {
		qp->cnt[ROCE_XC_BAD_RESP]++;
		return comp_fail(qp, ROCE_WC_BAD_RESP_ERR, 0);
	}
	if (sge_scatter(qp, wqe->wr.sg_list, wqe->wr.num_sge, off, m, meta->payload_off,
			want) != 0)
		return comp_fail(qp, ROCE_WC_LOC_PROT_ERR, 0);
	if (meta->psn != qp->req.una)
		qp->cnt[ROCE_XC_SR_RESP_OOO]++;
	sr_done(qp, meta->psn, 0);
	/* It implies everything before the READ arrived (IBA 9.7.5.1.2). */
	sr_cum(qp, roce_psn_add(wqe->first_psn, ROCE_PSN_MASK));
	sr_resp_gap(qp, meta->psn);
	sr_settle(qp, 1);
}

static void
sr_atomic_ack(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	struct send_wqe *wqe = sr_wqe(qp, meta->psn, WQE_ATOMIC);
	uint64_t orig;

	if (sr_tx_slot(qp, meta->psn)->flags & SR_TX_DONE) {
		qp->cnt[ROCE_XC_STALE_RESP]++;
		return;
	}
	if (wqe == NULL) {
		qp->cnt[ROCE_XC_BAD_RESP]++;
		return comp_fail(qp, ROCE_WC_BAD_RESP_ERR, 0);
	}
	orig = roce_atmack_orig(roce_pkt_hdr(m, meta, ROCE_HDR_ATMACK));
	if (sge_scatter_buf(qp, wqe->wr.sg_list, wqe->wr.num_sge, &orig, sizeof(orig)) != 0)
		return comp_fail(qp, ROCE_WC_LOC_PROT_ERR, 0);
	sr_done(qp, meta->psn, 0);
	sr_cum(qp, roce_psn_add(wqe->first_psn, ROCE_PSN_MASK));
	sr_resp_gap(qp, meta->psn);
	sr_settle(qp, 1);
}

/* Everything from @psn not yet done is to be resent. */
static void
sr_mark_from(struct roce_qp *qp, uint32_t psn)
{
	if (roce_psn_before(psn, qp->req.una))
		psn = qp->req.una;
	for (; roce_psn_before(psn, qp->req.psn_next_new); psn = roce_psn_add(psn, 1))
		sr_mark_pending(qp, psn);
}

/* An IBA ACK or NAK on an SR QP: cumulative ACK, RNR wait, or a fatal NAK. */
static void
sr_ack_nak(struct roce_qp *qp, uint32_t psn, uint8_t syndrome)
{
	uint32_t before = roce_psn_add(psn, ROCE_PSN_MASK);
	int progress;

	switch (syndrome & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		return sr_settle(qp, sr_cum(qp, psn));
	case ROCE_AETH_RNR_NAK:
		qp->cnt[ROCE_XC_NAK_RNR_RX]++;
		progress = sr_cum(qp, before);
		sr_settle(qp, progress);
		if (comp_rnr_spend(qp, syndrome) != 0)
			return;
		/* The responder is there, only short of receives: no ACK timeout is running. */
		qp->sr.live_ns = qp->eng->now;
		sr_mark_from(qp, psn);
		qp->sr.rnr_probe = 1;
		qp->sr.rnr_psn = psn;
		comp_rnr_wait(qp, syndrome);
		return;
	default:
		sr_settle(qp, sr_cum(qp, before));
		if ((syndrome & ~ROCE_AETH_TYPE_MASK) == ROCE_NAK_PSN_SEQ_ERR &&
				(syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK) {
			/* An SR responder sends none; resend from it all the same. */
			qp->cnt[ROCE_XC_NAK_SEQ_RX]++;
			sr_mark_from(qp, psn);
			return;
		}
		comp_nak(qp, qp->req.una, syndrome);
	}
}

/*
 * The credits of an SR ACK, once its PSNs are settled: RSNs up to rsn_una + credits may go
 * (the last one without a receive WQE for sure: the limited WQE). The limit never goes back
 * (receive WQEs are never taken away; an older ACK may come late).
 */
static void
sr_credits(struct roce_qp *qp, uint8_t syndrome)
{
	struct sr_state *s = &qp->sr;
	uint8_t code = syndrome & ~ROCE_AETH_TYPE_MASK;
	uint32_t limit;

	if (code == ROCE_AETH_CREDIT_INVALID) {
		if (!s->credit_inval)
			engine_activate(qp);
		s->credit_inval = 1;
		return;
	}
	s->credit_inval = 0;
	limit = s->rsn_una + sr_credit_count(code);
	if ((int32_t)(limit - s->rsn_limit) > 0) {
		s->rsn_limit = limit;
		engine_activate(qp);
	}
}

/* An SR ACK: cumulative PSN in the BTH, then a SACK bitmap from the PSN after it. */
static void
sr_sack(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta,
		uint8_t syndrome)
{
	struct req_state *r = &qp->req;
	uint8_t bits[SR_SACK_MAX];
	uint32_t nbits = RTE_MIN(meta->payload_len, sizeof(bits)) * 8, base, i;
	int progress;

	qp->cnt[ROCE_XC_SR_SACK_RX]++;
	pkt_copy_out(m, meta->payload_off, bits, nbits / 8);
	progress = sr_cum(qp, meta->psn);
	base = roce_psn_add(meta->psn, 1);
	for (i = 0; i < nbits; i++) {
		uint32_t psn = roce_psn_add(base, i);

		if (!(bits[i >> 3] >> (i & 7) & 1) || roce_psn_before(psn, r->una))
			continue;
		if (!roce_psn_before(psn, r->psn_next_new))
			break;
		progress |= sr_ack_psn(qp, psn, 0);
	}
	sr_settle(qp, progress);
	if (qp->state != ROCE_QPS_ERR)
		sr_credits(qp, syndrome);
}

/* Completer of an SR QP. */
void
sr_comp_rx(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	struct req_state *r = &qp->req;
	uint8_t syndrome = 0;

	if (meta->mask & ROCE_M_AETH)
		syndrome = roce_aeth_syndrome(roce_pkt_hdr(m, meta, ROCE_HDR_AETH));
	if (!roce_psn_before(meta->psn, r->psn_next_new)) {
		qp->cnt[ROCE_XC_GHOST_ACK]++;
		return;
	}
	if (meta->mask & ROCE_M_SR) {
		if ((syndrome & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK) {
			qp->cnt[ROCE_XC_BAD_RESP]++;
			return;
		}
		return sr_sack(qp, m, meta, syndrome);
	}
	/* A cumulative ACK for PSNs before una is old news; responses are judged per PSN. */
	if (roce_psn_before(meta->psn, r->una)) {
		qp->cnt[ROCE_XC_STALE_RESP]++;
		return;
	}
	if (meta->mask & ROCE_M_READ) {
		if ((syndrome & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK)
			return comp_fail(qp, ROCE_WC_BAD_RESP_ERR, syndrome);
		sr_read_resp(qp, m, meta);
	} else if (meta->mask & ROCE_M_ATOMIC) {
		sr_atomic_ack(qp, m, meta);
	} else {
		sr_ack_nak(qp, meta->psn, syndrome);
	}
}

/*
 * RTO: the oldest PSN not yet answered goes again, alone; the SR ACK it draws shows, with its
 * bitmap, what else is missing (everything sent before it and not acknowledged then counts as
 * lost). Resending the whole window here would double the load exactly when the path is only
 * slow (deep queues, a descheduled peer), not lossy.
 */
static void
sr_mark_oldest(struct roce_qp *qp)
{
	uint32_t psn;

	for (psn = qp->req.una; roce_psn_before(psn, qp->req.psn_next_new);
			psn = roce_psn_add(psn, 1)) {
		if (!(sr_tx_slot(qp, psn)->flags & SR_TX_DONE)) {
			sr_mark_pending(qp, psn);
			return;
		}
	}
}

/*
 * An RTO expiry spends one of retry_cnt only once the IBA ACK timeout has passed without
 * progress (or since the last one it spent): the QP fails after as long a silence as in
 * go-back-N, however short the RTO. A timeout of 0 (infinite) never spends one.
 */
static int
sr_spend_retry(struct roce_qp *qp)
{
	uint64_t ack = ack_timeout_ns(qp->attr.timeout), now = qp->eng->now;

	if (ack == 0 || now - qp->sr.live_ns < ack)
		return 1;
	qp->sr.live_ns = now;
	return comp_use_retry(qp);
}

void
sr_timeout(struct roce_qp *qp)
{
	qp->cnt[ROCE_XC_TIMEOUTS]++;
	qp->cnt[ROCE_XC_SR_TIMEOUTS]++;
	if (!sr_spend_retry(qp)) {
		qp->cnt[ROCE_XC_RETRY_EXC]++;
		return comp_fail(qp, ROCE_WC_RETRY_EXC_ERR, 0);
	}
	sr_mark_oldest(qp);
	/* An RNR probe unanswered goes again too: nothing else may go before its answer. */
	if (qp->sr.rnr_probe)
		sr_mark_pending(qp, qp->sr.rnr_psn);
	if (qp->sr.backoff < 255)
		qp->sr.backoff++;
	engine_activate(qp);
	req_arm_retry(qp);
}
