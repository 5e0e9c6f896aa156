/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completer: ACKs, NAKs, READ responses and atomic ACKs coming back to the requester; the
 * local ACK timer and the RNR timer. The go-back-N paths are here, selective repeat's in
 * sr_comp.c; completing, failing and the retry budgets are shared.
 */
#include <string.h>

#include "transport_private.h"

/* Complete the oldest WQE and move past it. */
void
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
void
comp_fail(struct roce_qp *qp, enum roce_wc_status status, uint32_t vendor_err)
{
	if (qp->req.sq_tail != qp->req.sq_head)
		comp_pop(qp, status, vendor_err);
	qp_to_error(qp);
}

/* Progress resets the retry budgets and restarts the ACK timer. */
void
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
int
comp_use_retry(struct roce_qp *qp)
{
	if (qp->attr.retry_cnt == 7 && qp->eng->conf.retry7_infinite)
		return 1;
	if (qp->req.retry_left == 0)
		return 0;
	qp->req.retry_left--;
	return 1;
}

void
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
int
comp_rnr_spend(struct roce_qp *qp, uint8_t syndrome)
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
void
comp_rnr_wait(struct roce_qp *qp, uint8_t syndrome)
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
	if (comp_rnr_spend(qp, syndrome) != 0)
		return;
	req_rewind(qp, psn);
	comp_rnr_wait(qp, syndrome);
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
 * window (RACK, RFC 8985): the READ is then re-issued from it, once. When the late response
 * still comes after a re-issue, the re-served copy shows the re-issue was needless and the
 * window doubles (up to half the ACK timeout); 32 gaps closed by their own late response
 * halve it again. Re-issues spend no retry; the ACK timeout still does.
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
	struct send_wqe *wqe;
	uint64_t orig;
	int oos;

	wqe = comp_rd_atomic_wqe(qp, meta->psn, WQE_ATOMIC, &oos);
	if (wqe == NULL) {
		if (!oos)
			comp_fail(qp, ROCE_WC_BAD_RESP_ERR, 0);
		return;
	}
	orig = roce_atmack_orig(roce_pkt_hdr(m, meta, ROCE_HDR_ATMACK));
	if (sge_scatter_buf(qp, wqe->wr.sg_list, wqe->wr.num_sge, &orig, sizeof(orig)) != 0)
		return comp_fail(qp, ROCE_WC_LOC_PROT_ERR, 0);
	comp_pop(qp, ROCE_WC_SUCCESS, 0);
	comp_progress(qp);
}

void
gbn_comp_rx(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	struct req_state *r = &qp->req;
	uint8_t syndrome = 0;

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
	if (meta->mask & ROCE_M_AETH)
		syndrome = roce_aeth_syndrome(roce_pkt_hdr(m, meta, ROCE_HDR_AETH));
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

/* Go back to the oldest PSN not acknowledged. */
void
gbn_timeout(struct roce_qp *qp)
{
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
comp_retry_timeout(struct roce_timer *t, void *arg)
{
	struct roce_qp *qp = arg;

	RTE_SET_USED(t);
	/* Waiting out an RNR timer is no silence: its end re-arms this timer (comp_rnr_done). */
	if ((qp->state != ROCE_QPS_RTS && qp->state != ROCE_QPS_SQD) ||
			qp->req.una == qp->req.psn_next_new || qp->req.rnr_wait)
		return;
	qp->ops->timeout(qp);
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
