/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completer: ACKs, NAKs, READ responses and atomic ACKs coming back to the requester; the
 * local ACK timer and the RNR timer.
 */
#include <string.h>

#include "transport_private.h"

static inline int
is_rd_atomic(const struct send_wqe *wqe)
{
	return wqe->cls == WQE_READ || wqe->cls == WQE_ATOMIC;
}

static inline uint32_t
last_psn(const struct send_wqe *wqe)
{
	return roce_psn_add(wqe->first_psn, wqe->npkts - 1);
}

/* Complete the oldest WQE and move past it. */
static void
comp_pop(struct roce_qp *qp, enum roce_wc_status status, uint32_t vendor_err)
{
	struct req_state *r = &qp->req;
	struct send_wqe *wqe = sq_wqe(qp, r->sq_tail);
	uint32_t next = roce_psn_add(last_psn(wqe), 1);

	if (r->sq_tail == r->sq_cur) {
		/* Completed while the cursor sat on it (after a rewind): skip it. */
		r->sq_cur++;
		if (roce_psn_before(r->psn, next))
			r->psn = next;
	} else if (is_rd_atomic(wqe) && r->rd_inflight != 0) {
		r->rd_inflight--;
	}
	qp_complete_send(qp, wqe, status, vendor_err);
	r->sq_tail++;
	if (roce_psn_before(r->una, next))
		r->una = next;
}

/* Fail the oldest WQE and the QP. */
static void
comp_fail(struct roce_qp *qp, enum roce_wc_status status, uint32_t vendor_err)
{
	if (qp->req.sq_tail != qp->req.sq_head)
		comp_pop(qp, status, vendor_err);
	qp_to_error(qp);
}

/* Progress resets the retry budgets and restarts the ACK timer. */
static void
comp_progress(struct roce_qp *qp)
{
	qp->req.retry_left = qp->attr.retry_cnt;
	qp->req.rnr_left = qp->attr.rnr_retry;
	qp->req.rewound_at_valid = 0;
	req_arm_retry(qp);
	engine_activate(qp);
}

/*
 * Acknowledge every PSN up to and including @psn. SEND/WRITE WQEs it covers complete; a
 * READ or atomic it reaches has lost its response (an ACK implies nothing for it), so the
 * requester goes back to it. @return 1 when such a retry is needed.
 */
static int
comp_ack_upto(struct roce_qp *qp, uint32_t psn)
{
	struct req_state *r = &qp->req;
	uint32_t old_una = r->una;

	while (r->sq_tail != r->sq_head && sq_wqe(qp, r->sq_tail)->started) {
		struct send_wqe *wqe = sq_wqe(qp, r->sq_tail);

		if (roce_psn_before(psn, wqe->first_psn))
			break;
		if (is_rd_atomic(wqe))
			return 1;
		if (roce_psn_before(psn, last_psn(wqe))) {
			r->una = roce_psn_add(psn, 1);
			/* A cursor gone back into this WQE skips what is now acknowledged. */
			if (r->sq_cur == r->sq_tail && roce_psn_before(r->psn, r->una))
				r->psn = r->una;
			break;
		}
		comp_pop(qp, ROCE_WC_SUCCESS, 0);
	}
	if (r->una != old_una)
		comp_progress(qp);
	return 0;
}

/* Go back to @psn, at most once per distinct point of loss. */
static void
comp_go_back(struct roce_qp *qp, uint32_t psn)
{
	if (qp->req.rewound_at_valid && qp->req.rewound_at == psn)
		return;
	req_rewind(qp, psn);
}

/* Retry budget for a sequence error or timeout; @return 0 when exhausted. */
static int
comp_use_retry(struct roce_qp *qp)
{
	if (qp->attr.retry_cnt == 7 && qp->eng->conf.retry7_infinite)
		return 1;
	if (qp->req.retry_left == 0)
		return 0;
	qp->req.retry_left--;
	return 1;
}

static void
comp_nak(struct roce_qp *qp, uint32_t psn, uint8_t syndrome)
{
	static const struct {
		enum roce_xport_counter cnt;
		enum roce_wc_status status;
	} fatal[] = {
		[ROCE_NAK_INVALID_REQ] = { ROCE_XC_NAK_INV_RX, ROCE_WC_REM_INV_REQ_ERR },
		[ROCE_NAK_REM_ACCESS_ERR] = { ROCE_XC_NAK_ACC_RX, ROCE_WC_REM_ACCESS_ERR },
		[ROCE_NAK_REM_OP_ERR] = { ROCE_XC_NAK_OP_RX, ROCE_WC_REM_OP_ERR },
		[ROCE_NAK_INVALID_RD_REQ] = { ROCE_XC_NAK_INV_RX, ROCE_WC_REM_INV_RD_REQ_ERR },
	};
	uint8_t code = syndrome & ~ROCE_AETH_TYPE_MASK;

	/* A NAK acknowledges everything before its PSN. */
	if (psn != qp->req.una && comp_ack_upto(qp, roce_psn_add(psn, ROCE_PSN_MASK)))
		return comp_go_back(qp, qp->req.una);
	if (code == ROCE_NAK_PSN_SEQ_ERR) {
		qp->cnt[ROCE_XC_NAK_SEQ_RX]++;
		/*
		 * A NAK for the point we already went back to (an RNR NAK's PSN, which pipelined
		 * requests follow with a sequence NAK) retries nothing: it spends no retry.
		 */
		if (qp->req.rewound_at_valid && qp->req.rewound_at == psn)
			return;
		if (!comp_use_retry(qp)) {
			qp->cnt[ROCE_XC_RETRY_EXC]++;
			return comp_fail(qp, ROCE_WC_RETRY_EXC_ERR, syndrome);
		}
		return comp_go_back(qp, psn);
	}
	if (code < RTE_DIM(fatal) && fatal[code].status != ROCE_WC_SUCCESS) {
		qp->cnt[fatal[code].cnt]++;
		return comp_fail(qp, fatal[code].status, syndrome);
	}
	qp->cnt[ROCE_XC_BAD_RESP]++;
	comp_fail(qp, ROCE_WC_BAD_RESP_ERR, syndrome);
}

/* An RNR NAK spends one of rnr_retry (7: unlimited); @return non-zero when none was left
 * and the QP has failed. */
static int
rnr_spend(struct roce_qp *qp, uint8_t syndrome)
{
	if (qp->attr.rnr_retry == 7)
		return 0;
	if (qp->req.rnr_left == 0) {
		qp->cnt[ROCE_XC_RNR_RETRY_EXC]++;
		comp_fail(qp, ROCE_WC_RNR_RETRY_EXC_ERR, syndrome);
		return -1;
	}
	qp->req.rnr_left--;
	return 0;
}

/* Send nothing until the NAK's RNR timer has passed; it replaces the retry timer. */
static void
rnr_wait(struct roce_qp *qp, uint8_t syndrome)
{
	qp->req.rnr_wait = 1;
	roce_timer_cancel(&qp->eng->wheel, &qp->req.retry_timer);
	roce_timer_arm(&qp->eng->wheel, &qp->req.rnr_timer,
			qp->eng->now + rnr_timer_ns(syndrome & ~ROCE_AETH_TYPE_MASK));
}

static void
comp_rnr(struct roce_qp *qp, uint32_t psn, uint8_t syndrome)
{
	qp->cnt[ROCE_XC_NAK_RNR_RX]++;
	if (psn != qp->req.una && comp_ack_upto(qp, roce_psn_add(psn, ROCE_PSN_MASK)))
		return comp_go_back(qp, qp->req.una);
	if (rnr_spend(qp, syndrome) != 0)
		return;
	req_rewind(qp, psn);
	rnr_wait(qp, syndrome);
}

/* ACK opcode: ACK, RNR NAK or NAK by syndrome. */
static void
comp_ack(struct roce_qp *qp, uint32_t psn, uint8_t syndrome)
{
	switch (syndrome & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		if (comp_ack_upto(qp, psn))
			comp_go_back(qp, qp->req.una);
		break;
	case ROCE_AETH_RNR_NAK:
		comp_rnr(qp, psn, syndrome);
		break;
	case ROCE_AETH_NAK:
		comp_nak(qp, psn, syndrome);
		break;
	default:
		qp->cnt[ROCE_XC_BAD_RESP]++;
		comp_fail(qp, ROCE_WC_BAD_RESP_ERR, syndrome);
	}
}

/*
 * A READ response or atomic ACK at @psn implicitly acknowledges the SEND/WRITE WQEs before
 * it. @return the oldest WQE left (the one the response must answer), or NULL.
 */
static struct send_wqe *
comp_implied_ack(struct roce_qp *qp, uint32_t psn)
{
	struct req_state *r = &qp->req;

	while (r->sq_tail != r->sq_head && sq_wqe(qp, r->sq_tail)->started) {
		struct send_wqe *wqe = sq_wqe(qp, r->sq_tail);

		if (is_rd_atomic(wqe) || !roce_psn_before(last_psn(wqe), psn))
			return wqe;
		comp_pop(qp, ROCE_WC_SUCCESS, 0);
		comp_progress(qp);
	}
	return NULL;
}

/*
 * Go-back-N READ responses and reordering. Responses come in PSN order unless the path
 * reorders or loses them; going back at the first one past a gap (as we used to) turns every
 * reordering into a re-issue of the rest of the READ, and a reordering path into a storm. So a
 * response past a gap, in one of the READs at the head of the send queue, is placed (bit
 * PSN - una of rd_ooo), and the gap becomes a loss only once it has outlived the reordering
 * window (RACK, RFC 8985): the READ is then re-issued from it, once. When the late response still comes after a re-issue, the
 * re-served copy shows the re-issue was needless and the window doubles (up to half the ACK
 * timeout); 32 gaps closed by their own late response halve it again. Re-issues spend no
 * retry; the ACK timeout still does.
 */
#define RD_REO_MIN_NS (20 * 1000ull)
#define RD_OOO_SPAN (RD_OOO_WORDS * 64)
#define RD_CLEAN_TO_SHRINK 32

static uint64_t
rd_reo_ns(const struct roce_qp *qp)
{
	return qp->req.rd_reo_ns != 0 ? qp->req.rd_reo_ns : RD_REO_MIN_NS;
}

static int
rd_ooo_test(const struct req_state *r, uint32_t i)
{
	return (r->rd_ooo[i / 64] >> (i % 64)) & 1;
}

static int
rd_ooo_any(const struct req_state *r)
{
	unsigned int w;

	for (w = 0; w < RD_OOO_WORDS; w++)
		if (r->rd_ooo[w] != 0)
			return 1;
	return 0;
}

/* una moved on by one PSN. */
static void
rd_ooo_shift(struct req_state *r)
{
	unsigned int w;

	for (w = 0; w < RD_OOO_WORDS; w++)
		r->rd_ooo[w] = (r->rd_ooo[w] >> 1) |
			(w + 1 < RD_OOO_WORDS ? r->rd_ooo[w + 1] << 63 : 0);
}

static void
rd_gap_open(struct roce_qp *qp)
{
	struct req_state *r = &qp->req;

	if (r->rd_gap_open && r->rd_gap_psn == r->una)
		return;
	r->rd_gap_open = 1;
	r->rd_gap_psn = r->una;
	roce_timer_arm(&qp->eng->wheel, &r->rd_reo_timer, qp->eng->now + rd_reo_ns(qp));
}

/* una went past the gap: the late response (or a re-served one) closed it. */
static void
rd_gap_settle(struct roce_qp *qp)
{
	struct req_state *r = &qp->req;

	if (!r->rd_gap_open || !roce_psn_before(r->rd_gap_psn, r->una))
		return;
	r->rd_gap_open = 0;
	roce_timer_cancel(&qp->eng->wheel, &r->rd_reo_timer);
	if (!r->rd_reissued_valid || r->rd_reissued != r->rd_gap_psn) {
		qp->cnt[ROCE_XC_READ_REORDERED]++;
		if (++r->rd_clean >= RD_CLEAN_TO_SHRINK && rd_reo_ns(qp) > RD_REO_MIN_NS) {
			r->rd_reo_ns = (uint32_t)RTE_MAX(rd_reo_ns(qp) / 2, RD_REO_MIN_NS);
			r->rd_clean = 0;
		}
	}
	if (rd_ooo_any(r))
		rd_gap_open(qp);
}

/*
 * A response older than una: a re-served copy of where a re-issue went back to means the
 * original was only late.
 */
static void
rd_stale(struct roce_qp *qp, uint32_t psn)
{
	struct req_state *r = &qp->req;
	uint64_t cap = ack_timeout_ns(qp->attr.timeout) / 2;

	if (!r->rd_reissued_valid || psn != r->rd_reissued)
		return;
	r->rd_reissued_valid = 0;
	qp->cnt[ROCE_XC_READ_SPURIOUS]++;
	if (cap == 0)
		cap = 100ull * 1000 * 1000;
	r->rd_reo_ns = (uint32_t)RTE_MIN(rd_reo_ns(qp) * 2, RTE_MIN(cap, (uint64_t)UINT32_MAX));
	r->rd_clean = 0;
}

void
comp_rd_reo_timeout(struct roce_timer *t, void *arg)
{
	struct roce_qp *qp = arg;
	struct req_state *r = &qp->req;

	RTE_SET_USED(t);
	if ((qp->state != ROCE_QPS_RTS && qp->state != ROCE_QPS_SQD) || !r->rd_gap_open ||
			r->rd_gap_psn != r->una)
		return;
	r->rd_gap_open = 0;
	r->rd_reissued = r->una;
	r->rd_reissued_valid = 1;
	qp->cnt[ROCE_XC_READ_REISSUE]++;
	comp_go_back(qp, r->una);
}

/* The READ holding @psn if only READs come before it in the send queue, else NULL. */
static struct send_wqe *
rd_ahead_wqe(struct roce_qp *qp, uint32_t psn)
{
	uint32_t i;

	for (i = qp->req.sq_tail; i != qp->req.sq_head; i++) {
		struct send_wqe *wqe = sq_wqe(qp, i);

		if (!wqe->started || wqe->cls != WQE_READ || roce_psn_before(psn, wqe->first_psn))
			return NULL;
		if (!roce_psn_before(last_psn(wqe), psn))
			return wqe;
	}
	return NULL;
}

/*
 * The WQE a response at @psn answers. A response past the first missing PSN opens a gap
 * (*oos set): a READ's behind READs only is returned to be placed ahead, others dropped
 * (NULL). NULL with *oos clear: bad response.
 */
static struct send_wqe *
comp_rd_atomic_wqe(struct roce_qp *qp, uint32_t psn, enum wqe_class cls, int *oos)
{
	struct send_wqe *wqe = comp_implied_ack(qp, psn);

	*oos = 0;
	if (wqe != NULL && psn != qp->req.una && roce_psn_before(qp->req.una, psn)) {
		*oos = 1;
		qp->cnt[ROCE_XC_RESP_OOS]++;
		rd_gap_open(qp);
		if (cls == WQE_READ && roce_psn_diff(psn, qp->req.una) < (int32_t)RD_OOO_SPAN)
			return rd_ahead_wqe(qp, psn);
		return NULL;
	}
	if (wqe == NULL || wqe->cls != cls ||
			!roce_psn_in(psn, wqe->first_psn, last_psn(wqe))) {
		qp->cnt[ROCE_XC_BAD_RESP]++;
		return NULL;
	}
	return wqe;
}

static void
comp_read_resp(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	struct req_state *r = &qp->req;
	uint32_t idx, off, want, ahead;
	struct send_wqe *wqe;
	int oos;

	wqe = comp_rd_atomic_wqe(qp, meta->psn, WQE_READ, &oos);
	if (wqe == NULL) {
		if (!oos)
			comp_fail(qp, ROCE_WC_BAD_RESP_ERR, 0);
		return;
	}
	ahead = (uint32_t)roce_psn_diff(meta->psn, r->una);
	if (oos && rd_ooo_test(r, ahead)) {
		qp->cnt[ROCE_XC_STALE_RESP]++;
		return;
	}
	idx = (uint32_t)roce_psn_diff(meta->psn, wqe->first_psn);
	off = idx * qp->mtu;
	want = RTE_MIN(qp->mtu, wqe->length - off);
	/* The last packet ends the READ; responses resumed mid-READ may start as Middle. */
	if (!!(meta->mask & ROCE_M_LAST) != (idx == wqe->npkts - 1) ||
			meta->payload_len != want) {
		qp->cnt[ROCE_XC_BAD_RESP]++;
		return comp_fail(qp, ROCE_WC_BAD_RESP_ERR, 0);
	}
	if (sge_scatter(qp, wqe->wr.sg_list, wqe->wr.num_sge, off, m, meta->payload_off,
			want) != 0)
		return comp_fail(qp, ROCE_WC_LOC_PROT_ERR, 0);
	r->rd_ooo[ahead / 64] |= 1ull << (ahead % 64);
	if (oos) {
		qp->cnt[ROCE_XC_READ_OOO_PLACED]++;
		return;
	}
	/* una moves over this response and the ones placed ahead of it. */
	while (rd_ooo_test(r, 0)) {
		rd_ooo_shift(r);
		r->una = roce_psn_add(r->una, 1);
	}
	if (r->sq_cur == r->sq_tail && roce_psn_before(r->psn, r->una))
		r->psn = r->una;
	/* Every READ una went past is complete, in order. */
	while (r->sq_tail != r->sq_head && sq_wqe(qp, r->sq_tail)->started &&
			sq_wqe(qp, r->sq_tail)->cls == WQE_READ &&
			roce_psn_before(last_psn(sq_wqe(qp, r->sq_tail)), r->una))
		comp_pop(qp, ROCE_WC_SUCCESS, 0);
	if (r->sq_tail == r->sq_head || sq_wqe(qp, r->sq_tail)->cls != WQE_READ)
		memset(r->rd_ooo, 0, sizeof(r->rd_ooo));
	rd_gap_settle(qp);
	comp_progress(qp);
}

static void
comp_atomic_ack(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	const struct roce_atmack *ack;
	struct send_wqe *wqe;
	uint64_t orig;
	int oos;

	wqe = comp_rd_atomic_wqe(qp, meta->psn, WQE_ATOMIC, &oos);
	if (wqe == NULL) {
		if (!oos)
			comp_fail(qp, ROCE_WC_BAD_RESP_ERR, 0);
		return;
	}
	ack = roce_pkt_hdr(m, meta, ROCE_HDR_ATMACK);
	orig = rte_be_to_cpu_64(ack->orig);
	if (sge_scatter_buf(qp, wqe->wr.sg_list, wqe->wr.num_sge, &orig, sizeof(orig)) != 0)
		return comp_fail(qp, ROCE_WC_LOC_PROT_ERR, 0);
	comp_pop(qp, ROCE_WC_SUCCESS, 0);
	comp_progress(qp);
}

/*
 * ---- selective repeat ----
 *
 * Every PSN in flight has a slot (sr_tx_slot). ACKs and SACK bits mark SEND/WRITE PSNs done
 * and READ/atomic requests received; responses mark READ/atomic PSNs done. una moves over
 * done PSNs and WQEs complete in order behind it. A PSN is lost when packets sent at least
 * SR_DUPTHRESH transmissions after it have arrived (SACK evidence), when responses after it
 * arrived (READ/atomic), or when the RTO expires.
 */
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
	while (r->sq_tail != r->sq_head && sq_wqe(qp, r->sq_tail)->started &&
			roce_psn_before(last_psn(sq_wqe(qp, r->sq_tail)), r->una))
		comp_pop(qp, ROCE_WC_SUCCESS, 0);
	sr_scan(qp);
	if (progress || r->una != old) {
		qp->sr.backoff = 0;
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
	const struct roce_atmack *ack;
	uint64_t orig;

	if (sr_tx_slot(qp, meta->psn)->flags & SR_TX_DONE) {
		qp->cnt[ROCE_XC_STALE_RESP]++;
		return;
	}
	if (wqe == NULL) {
		qp->cnt[ROCE_XC_BAD_RESP]++;
		return comp_fail(qp, ROCE_WC_BAD_RESP_ERR, 0);
	}
	ack = roce_pkt_hdr(m, meta, ROCE_HDR_ATMACK);
	orig = rte_be_to_cpu_64(ack->orig);
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
		if (rnr_spend(qp, syndrome) != 0)
			return;
		sr_mark_from(qp, psn);
		rnr_wait(qp, syndrome);
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

/* An SR ACK: cumulative PSN in the BTH, then a SACK bitmap from the PSN after it. */
static void
sr_sack(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
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
}

/* Completer of an SR QP. */
static void
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
		return sr_sack(qp, m, meta);
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

static void
sr_timeout(struct roce_qp *qp)
{
	qp->cnt[ROCE_XC_TIMEOUTS]++;
	qp->cnt[ROCE_XC_SR_TIMEOUTS]++;
	if (!comp_use_retry(qp)) {
		qp->cnt[ROCE_XC_RETRY_EXC]++;
		return comp_fail(qp, ROCE_WC_RETRY_EXC_ERR, 0);
	}
	sr_mark_oldest(qp);
	if (qp->sr.backoff < 255)
		qp->sr.backoff++;
	engine_activate(qp);
	req_arm_retry(qp);
}

void
comp_rx(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	struct req_state *r = &qp->req;
	const struct roce_aeth *aeth;
	uint8_t syndrome = 0;

	if (qp->state != ROCE_QPS_RTS && qp->state != ROCE_QPS_SQD) {
		qp->cnt[ROCE_XC_STATE_DROP]++;
		return;
	}
	if (qp->sr.on)
		return sr_comp_rx(qp, m, meta);
	if (meta->mask & ROCE_M_SR) {
		qp->cnt[ROCE_XC_SR_REJECT]++;
		return;
	}
	if (!roce_psn_before(meta->psn, r->psn_next_new)) {
		qp->cnt[ROCE_XC_GHOST_ACK]++;
		return;
	}
	if (roce_psn_before(meta->psn, r->una)) {
		qp->cnt[ROCE_XC_STALE_RESP]++;
		if (meta->mask & ROCE_M_READ)
			rd_stale(qp, meta->psn);
		return;
	}
	if (meta->mask & ROCE_M_AETH) {
		aeth = roce_pkt_hdr(m, meta, ROCE_HDR_AETH);
		syndrome = roce_aeth_syndrome(aeth);
	}
	if (meta->mask & ROCE_M_READ) {
		if ((syndrome & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK)
			return comp_fail(qp, ROCE_WC_BAD_RESP_ERR, syndrome);
		comp_read_resp(qp, m, meta);
	} else if (meta->mask & ROCE_M_ATOMIC) {
		comp_atomic_ack(qp, m, meta);
	} else {
		comp_ack(qp, meta->psn, syndrome);
	}
}

void
comp_retry_timeout(struct roce_timer *t, void *arg)
{
	struct roce_qp *qp = arg;

	RTE_SET_USED(t);
	if ((qp->state != ROCE_QPS_RTS && qp->state != ROCE_QPS_SQD) ||
			qp->req.una == qp->req.psn_next_new)
		return;
	if (qp->sr.on)
		return sr_timeout(qp);
	qp->cnt[ROCE_XC_TIMEOUTS]++;
	if (!comp_use_retry(qp)) {
		qp->cnt[ROCE_XC_RETRY_EXC]++;
		return comp_fail(qp, ROCE_WC_RETRY_EXC_ERR, 0);
	}
	/* Unlike a NAK, a timeout may resend the same point again. */
	qp->req.rewound_at_valid = 0;
	req_rewind(qp, qp->req.una);
	req_arm_retry(qp);
}

void
comp_rnr_done(struct roce_timer *t, void *arg)
{
	struct roce_qp *qp = arg;

	RTE_SET_USED(t);
	qp->req.rnr_wait = 0;
	engine_activate(qp);
	req_arm_retry(qp);
}
