/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder: checks each request in the order IBA 9.7.5 gives (PSN, opcode sequence, opcode
 * for this QP, resources, length, rkey/bounds/access), executes it, and answers with ACKs,
 * NAKs, READ responses and atomic ACKs. Duplicates are answered, never executed again.
 * Go-back-N's PSN handling is here; selective repeat places out of order (sr_resp.c) with the
 * same checks and executors.
 */
#include <string.h>

#include "transport_private.h"

static const struct {
	uint8_t syndrome;
	enum roce_xport_counter cnt;
} resp_err_nak[] = {
	[RESP_ERR_INV] = { ROCE_AETH_NAK | ROCE_NAK_INVALID_REQ, ROCE_XC_NAK_INV_TX },
	[RESP_ERR_ACC] = { ROCE_AETH_NAK | ROCE_NAK_REM_ACCESS_ERR, ROCE_XC_NAK_ACC_TX },
	[RESP_ERR_OP] = { ROCE_AETH_NAK | ROCE_NAK_REM_OP_ERR, ROCE_XC_NAK_OP_TX },
	[RESP_ERR_RNR] = { ROCE_AETH_RNR_NAK, ROCE_XC_NAK_RNR_TX },
};

/* Build and queue the held ACK/NAK: an SR ACK is built from the state at that time. */
static int
resp_held_ack_out(struct roce_qp *qp)
{
	const struct resp_state *rs = &qp->resp;

	return rs->ack_sr ? sr_sack_now(qp) : qp_send_ack(qp, ROCE_OPCODE(RC, ACK), rs->ack_psn,
			rs->ack_syndrome, rs->ack_msn, 0);
}

/* Send a held ACK now, before a response for a later PSN that goes out at once. */
static void
resp_flush_ack(struct roce_qp *qp)
{
	struct resp_state *rs = &qp->resp;

	if (!rs->ack_pending || rs->sending_reads)
		return;
	if (resp_held_ack_out(qp) == 0)
		rs->ack_pending = 0;
}

/*
 * Positive ACKs are coalesced: one per QP and rx burst goes out when the engine polls, in
 * the same worker loop, which halves the packets of small-message streams. NAKs go at once
 * (they acknowledge everything before their PSN, so a held ACK is dropped), except while
 * READ responses for earlier PSNs are going out: responses leave in PSN order.
 */
static void
resp_send_ack(struct roce_qp *qp, uint32_t psn, uint8_t syndrome)
{
	struct resp_state *rs = &qp->resp;

	if (rs->sending_reads || syndrome == ACK_SYNDROME)
		return resp_hold_ack(qp, 0, psn, syndrome);
	rs->ack_pending = 0;
	qp_send_ack(qp, ROCE_OPCODE(RC, ACK), psn, syndrome, rs->msn, 0);
}

void
resp_nak(struct roce_qp *qp, uint32_t psn, enum resp_err err)
{
	uint8_t syn = resp_err_nak[err].syndrome;

	RTE_BUILD_BUG_ON(ROCE_XC_NUM > UINT8_MAX);     /* nak_cnt */
	if (err == RESP_ERR_RNR)
		syn |= qp->attr.min_rnr_timer;
	if (err == RESP_ERR_RNR) {
		qp->cnt[resp_err_nak[err].cnt]++;
		return resp_send_ack(qp, psn, syn);
	}
	/*
	 * Fatal: the QP stops once the NAK is out, and nothing after it matters. READ
	 * responses for earlier PSNs go first (PSN order); until then requests are dropped.
	 */
	if (qp->resp.sending_reads) {
		resp_hold_ack(qp, 0, psn, syn);
		qp->resp.nak_fatal = 1;
		qp->resp.nak_cnt = resp_err_nak[err].cnt;
		return;
	}
	qp->cnt[resp_err_nak[err].cnt]++;
	qp_send_ack(qp, ROCE_OPCODE(RC, ACK), psn, syn, qp->resp.msn, 0);
	qp_to_error(qp);
}

/* Complete the current receive WQE. */
void
resp_complete_recv(struct roce_qp *qp, enum roce_wc_status status, enum roce_wc_opcode op,
		uint32_t byte_len, const struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	struct roce_wc lost, *wc = cq_slot(qp->recv_cq);

	*(wc != NULL ? wc : &lost) = (struct roce_wc){
		.wr_id = rq_wqe(qp, qp->resp.rq_tail)->wr.wr_id,
		.status = status,
		.opcode = op,
		.byte_len = byte_len,
		.qp_num = qp->qpn,
		.src_qp = qp->attr.dest_qp_num,
	};
	qp->resp.rq_tail++;
	qp->resp.recv_off = 0;
	qp->cnt[ROCE_XC_RECV_COMPLETED]++;
	if (wc == NULL) {
		qp->cnt[ROCE_XC_CQ_OVERRUN]++;
		return;
	}
	if (m != NULL && (meta->mask & ROCE_M_IMMDT)) {
		wc->imm_data = roce_immdt_imm(roce_pkt_hdr(m, meta, ROCE_HDR_IMMDT));
		wc->wc_flags |= ROCE_WC_WITH_IMM;
	}
	if (m != NULL && (meta->mask & ROCE_M_IETH)) {
		wc->invalidated_rkey = roce_ieth_rkey(roce_pkt_hdr(m, meta, ROCE_HDR_IETH));
		wc->wc_flags |= ROCE_WC_WITH_INV;
	}
	cq_commit(qp->recv_cq);
}

/* Opcode sequence: a message in progress continues; otherwise one starts. */
static enum resp_err
check_sequence(const struct roce_qp *qp, uint32_t mask)
{
	uint32_t in = qp->resp.in_msg;

	if (in != 0)
		return (mask & in) && (mask & (ROCE_M_MIDDLE | ROCE_M_LAST)) &&
			!(mask & ROCE_M_FIRST) ? RESP_OK : RESP_ERR_INV;
	return mask & ROCE_M_FIRST ? RESP_OK : RESP_ERR_INV;
}

static void
resp_ack(struct roce_qp *qp, uint32_t psn)
{
	resp_send_ack(qp, psn, ACK_SYNDROME);
}

/* IBA: a SEND with Invalidate that completes takes the named key away. @return 0 or -EINVAL. */
int
resp_invalidate_key(struct roce_qp *qp, uint32_t rkey)
{
	if (mr_invalidate_remote(qp, rkey) != 0) {
		qp->cnt[ROCE_XC_INVALIDATE_ERR]++;
		return -EINVAL;
	}
	qp->cnt[ROCE_XC_INVALIDATED]++;
	return 0;
}

static int
resp_invalidate(struct roce_qp *qp, const struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	return resp_invalidate_key(qp, roce_ieth_rkey(roce_pkt_hdr(m, meta, ROCE_HDR_IETH)));
}

static enum resp_err
exec_send(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	struct resp_state *rs = &qp->resp;
	struct recv_wqe *rwqe = rq_wqe(qp, rs->rq_tail);

	if (rs->recv_off + meta->payload_len > rwqe->length) {
		resp_complete_recv(qp, ROCE_WC_LOC_LEN_ERR, ROCE_WC_RECV, rs->recv_off, NULL,
				NULL);
		return RESP_ERR_OP;
	}
	if (sge_scatter(qp, rwqe->wr.sg_list, rwqe->wr.num_sge, rs->recv_off, m,
			meta->payload_off, meta->payload_len) != 0) {
		resp_complete_recv(qp, ROCE_WC_LOC_PROT_ERR, ROCE_WC_RECV, rs->recv_off, NULL,
				NULL);
		return RESP_ERR_OP;
	}
	rs->recv_off += meta->payload_len;
	rs->in_msg = meta->mask & ROCE_M_LAST ? 0 : ROCE_M_SEND;
	if ((meta->mask & ROCE_M_IETH) && resp_invalidate(qp, m, meta) != 0) {
		resp_complete_recv(qp, ROCE_WC_REM_INV_REQ_ERR, ROCE_WC_RECV, rs->recv_off, m,
				meta);
		return RESP_ERR_INV;
	}
	if (meta->mask & ROCE_M_LAST) {
		rs->msn = roce_psn_add(rs->msn, 1);
		resp_complete_recv(qp, ROCE_WC_SUCCESS, ROCE_WC_RECV, rs->recv_off, m, meta);
	}
	return RESP_OK;
}

static enum resp_err
exec_write(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	struct resp_state *rs = &qp->resp;
	uint32_t plen = meta->payload_len;

	if (meta->mask & ROCE_M_FIRST) {
		const struct roce_reth *reth = roce_pkt_hdr(m, meta, ROCE_HDR_RETH);
		uint32_t len = roce_reth_len(reth);

		/* Only carries the whole message; First starts one longer than a packet. */
		if ((meta->mask & ROCE_M_LAST) ? plen != len : len <= plen)
			return RESP_ERR_INV;
		rs->wr_mr = NULL;
		rs->wr_dst = resp_mr(qp, roce_reth_rkey(reth), roce_reth_va(reth), len,
				ROCE_ACCESS_REMOTE_WRITE, &rs->wr_mr);
		if (rs->wr_dst == NULL && len != 0)
			return RESP_ERR_ACC;
		rs->wr_len = len;
		rs->wr_off = 0;
		rs->wr_revoked = 0;
	} else if (rs->wr_revoked) {
		return RESP_ERR_ACC;
	} else if (rs->wr_off + plen > rs->wr_len ||
			((meta->mask & ROCE_M_LAST) && rs->wr_off + plen != rs->wr_len)) {
		return RESP_ERR_INV;
	}
	if ((meta->mask & ROCE_M_RWR) && rs->rq_tail == rs->rq_head)
		return RESP_ERR_RNR;
	if (plen != 0)
		pkt_copy_out(m, meta->payload_off, rs->wr_dst + rs->wr_off, plen);
	rs->wr_off += plen;
	rs->in_msg = meta->mask & ROCE_M_LAST ? 0 : ROCE_M_WRITE;
	if (meta->mask & ROCE_M_LAST) {
		rs->msn = roce_psn_add(rs->msn, 1);
		if (meta->mask & ROCE_M_IMM)
			resp_complete_recv(qp, ROCE_WC_SUCCESS, ROCE_WC_RECV_RDMA_WITH_IMM,
					rs->wr_len, m, meta);
	}
	return RESP_OK;
}

/*
 * The resource slot a new READ/atomic takes: the oldest. The requester keeps at most
 * max_dest_rd_atomic outstanding, so the request it held has completed there and a
 * duplicate being served again is no longer wanted; an original still streaming means the
 * requester broke the limit (NULL).
 */
static struct resp_res *
res_take(struct roce_qp *qp)
{
	struct resp_res *res = &qp->resp.res[qp->resp.res_head % qp->resp.nb_res];

	if (res->sending && !res->dup)
		return NULL;
	qp->resp.res_head++;
	memset(res, 0, sizeof(*res));
	res->valid = 1;
	return res;
}

/* Execute a READ of @len bytes at @va/@rkey whose request has PSN @psn. */
enum resp_err
resp_exec_read_at(struct roce_qp *qp, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len)
{
	uint32_t npkts = pkts_of(len, qp->mtu);
	struct roce_mr *mr = NULL;
	struct resp_res *res;
	uint8_t *data;

	if (len > ROCE_MAX_MSG_SIZE || npkts >= ROCE_PSN_HALF)
		return RESP_ERR_INV;
	data = resp_mr(qp, rkey, va, len, ROCE_ACCESS_REMOTE_READ, &mr);
	if (data == NULL && len != 0)
		return RESP_ERR_ACC;
	res = res_take(qp);
	if (res == NULL)
		return RESP_ERR_INV;
	resp_flush_ack(qp);
	qp->resp.msn = roce_psn_add(qp->resp.msn, 1);
	res->first_psn = psn;
	res->last_psn = roce_psn_add(psn, npkts - 1);
	res->va = va;
	res->rkey = rkey;
	res->len = len;
	res->msn = qp->resp.msn;
	res->data = data;
	res->mr = mr;
	res->next_psn = psn;
	res->end_psn = res->last_psn;
	res->offset = 0;
	res->sending = 1;
	qp->resp.sending_reads = 1;
	qp->resp.epsn = roce_psn_add(psn, npkts);
	engine_activate(qp);
	return RESP_OK;
}

enum resp_err
resp_exec_read(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	const struct roce_reth *reth = roce_pkt_hdr(m, meta, ROCE_HDR_RETH);

	return resp_exec_read_at(qp, meta->psn, roce_reth_va(reth), roce_reth_rkey(reth),
			roce_reth_len(reth));
}

/* Execute an atomic (@opcode CMP_SWAP or FETCH_ADD) whose request has PSN @psn. */
enum resp_err
resp_exec_atomic_at(struct roce_qp *qp, uint32_t psn, uint8_t opcode, uint64_t va,
		uint32_t rkey, uint64_t swap_add, uint64_t compare)
{
	struct resp_res *res;
	uint64_t *p, orig;

	if ((va & 7) != 0)
		return RESP_ERR_INV;
	p = (uint64_t *)resp_mr(qp, rkey, va, 8, ROCE_ACCESS_REMOTE_ATOMIC, NULL);
	if (p == NULL)
		return RESP_ERR_ACC;
	res = res_take(qp);
	if (res == NULL)
		return RESP_ERR_INV;
	/* The local buffer may be misaligned even when the VA is not: copy. */
	memcpy(&orig, p, sizeof(orig));
	if (opcode == ROCE_OPCODE(RC, CMP_SWAP)) {
		if (orig == compare)
			memcpy(p, &swap_add, sizeof(swap_add));
	} else {
		uint64_t v = orig + swap_add;

		memcpy(p, &v, sizeof(v));
	}
	qp->resp.msn = roce_psn_add(qp->resp.msn, 1);
	res->atomic = 1;
	res->first_psn = res->last_psn = psn;
	res->orig = orig;
	res->msn = qp->resp.msn;
	qp->resp.epsn = roce_psn_add(psn, 1);
	if (qp->resp.sending_reads) {
		/* Its ACK goes out after the READ responses before it. */
		res->sending = 1;
		res->next_psn = res->end_psn = psn;
		return RESP_OK;
	}
	resp_flush_ack(qp);
	qp_send_ack(qp, ROCE_OPCODE(RC, ATOMIC_ACK), psn, ACK_SYNDROME, res->msn, orig);
	return RESP_OK;
}

enum resp_err
resp_exec_atomic(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	const struct roce_atmeth *ath = roce_pkt_hdr(m, meta, ROCE_HDR_ATMETH);

	return resp_exec_atomic_at(qp, meta->psn, meta->opcode, roce_atmeth_va(ath),
			roce_atmeth_rkey(ath), roce_atmeth_swap_add(ath), roce_atmeth_compare(ath));
}

/* The resource that executed the READ or atomic at @psn, if still kept. */
static struct resp_res *
res_find(struct roce_qp *qp, uint32_t psn, int atomic)
{
	uint32_t i;

	for (i = 0; i < qp->resp.nb_res; i++) {
		struct resp_res *res = &qp->resp.res[i];

		if (res->valid && res->atomic == atomic &&
				roce_psn_in(psn, res->first_psn, res->last_psn))
			return res;
	}
	return NULL;
}

/* A duplicate READ: serve it again from its PSN, the rkey and range checked again. */
static void
dup_read(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	const struct roce_reth *reth = roce_pkt_hdr(m, meta, ROCE_HDR_RETH);
	struct resp_res *res = res_find(qp, meta->psn, 0);
	uint64_t va = roce_reth_va(reth);
	uint32_t len = roce_reth_len(reth), off, rest, end;
	uint8_t *data;

	if (res == NULL) {
		qp->cnt[ROCE_XC_OOS_DROP]++;
		return;
	}
	/*
	 * The key and the original range are checked again (the MR may have gone since); the
	 * range, not the request, is the base: a zero length would resolve to the MR's start.
	 */
	off = (uint32_t)roce_psn_diff(meta->psn, res->first_psn) * qp->mtu;
	rest = res->len - off;
	data = resp_mr(qp, res->rkey, res->va, res->len, ROCE_ACCESS_REMOTE_READ, &res->mr);
	/* Selective repeat asks again for a missing range only; go-back-N for the rest. */
	if (roce_reth_rkey(reth) != res->rkey || va != res->va + off ||
			(qp->ops->dup_read_part ? len > rest : len != rest) ||
			(data == NULL && res->len != 0)) {
		qp->cnt[ROCE_XC_OOS_DROP]++;
		return;
	}
	qp->cnt[ROCE_XC_DUP_READ]++;
	end = roce_psn_add(meta->psn, pkts_of(len, qp->mtu) - 1);
	res->data = data;
	/*
	 * A stream still going out (the requester timed out on a slow responder, or asks again
	 * for a lost response while the rest streams) is not cut short: it ends at the later of
	 * the two ends. Go-back-N has everything before what it asks and goes there. Selective
	 * repeat's range ahead of the stream goes out anyway; one wholly behind it goes first,
	 * then the stream resumes where it was (a detour); a range asked during a detour makes
	 * one stream from the earliest point, so nothing is skipped.
	 */
	res->dup = 1;
	if (res->sending) {
		uint32_t from = meta->psn;

		if (roce_psn_before(res->end_psn, end))
			res->end_psn = end;
		if (res->detour) {
			res->detour = 0;
			if (roce_psn_before(res->next_psn, from))
				from = res->next_psn;
		} else if (qp->ops->dup_read_part && !roce_psn_before(from, res->next_psn)) {
			return;
		} else if (qp->ops->dup_read_part && roce_psn_before(end, res->next_psn)) {
			/* Wholly behind the stream: serve it, then go on from where it was. */
			res->detour = 1;
			res->detour_end = end;
			res->resume_psn = res->next_psn;
			res->resume_off = res->offset;
		}
		off = (uint32_t)roce_psn_diff(from, res->first_psn) * qp->mtu;
		res->next_psn = from;
		res->offset = off;
		resp_flush_ack(qp);
		return;
	}
	res->end_psn = end;
	resp_flush_ack(qp);
	res->next_psn = meta->psn;
	res->offset = off;
	res->sending = 1;
	qp->resp.sending_reads = 1;
	engine_activate(qp);
}

void
resp_duplicate(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	struct resp_res *res;

	if (meta->mask & ROCE_M_READ)
		return dup_read(qp, m, meta);
	if (meta->mask & ROCE_M_ATOMIC) {
		res = res_find(qp, meta->psn, 1);
		if (res == NULL) {
			qp->cnt[ROCE_XC_OOS_DROP]++;
			return;
		}
		qp->cnt[ROCE_XC_DUP_ATOMIC]++;
		resp_flush_ack(qp);
		qp_send_ack(qp, ROCE_OPCODE(RC, ATOMIC_ACK), meta->psn, ACK_SYNDROME, res->msn,
				res->orig);
		return;
	}
	/* SEND/WRITE: as rxe, re-ACK each duplicate with the last in-order PSN. */
	qp->cnt[ROCE_XC_DUP_REQ]++;
	resp_ack(qp, roce_psn_add(qp->resp.epsn, ROCE_PSN_MASK));
}

/* Checks of a new request before it executes. */
enum resp_err
resp_check(const struct roce_qp *qp, const struct roce_pkt_meta *meta)
{
	uint32_t mask = meta->mask;
	enum resp_err err;

	err = check_sequence(qp, mask);
	if (err == RESP_OK)
		err = resp_check_access(qp, mask);
	if (err == RESP_OK && (mask & ROCE_M_SEND) && (mask & ROCE_M_FIRST) &&
			qp->resp.rq_tail == qp->resp.rq_head)
		err = RESP_ERR_RNR;
	if (err == RESP_OK)
		err = resp_check_length(qp, mask, meta->payload_len);
	return err;
}

void
gbn_resp_rx(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	struct resp_state *rs = &qp->resp;
	int32_t diff = roce_psn_diff(meta->psn, rs->epsn);
	enum resp_err err;

	if (meta->mask & ROCE_M_SR) {
		qp->cnt[ROCE_XC_SR_REJECT]++;
		return;
	}

	if (diff > 0) {
		/* A gap: one NAK, then drop until the expected PSN comes back. */
		qp->cnt[ROCE_XC_OOS_DROP]++;
		if (!rs->nak_sent) {
			rs->nak_sent = 1;
			qp->cnt[ROCE_XC_NAK_SEQ_TX]++;
			resp_send_ack(qp, rs->epsn, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR);
		}
		return;
	}
	if (diff < 0)
		return resp_duplicate(qp, m, meta);
	rs->nak_sent = 0;
	err = resp_check(qp, meta);
	if (err == RESP_OK) {
		if (meta->mask & ROCE_M_SEND)
			err = exec_send(qp, m, meta);
		else if (meta->mask & ROCE_M_WRITE)
			err = exec_write(qp, m, meta);
		else if (meta->mask & ROCE_M_READ)
			err = resp_exec_read(qp, m, meta);
		else
			err = resp_exec_atomic(qp, m, meta);
	}
	if (err != RESP_OK)
		return resp_nak(qp, meta->psn, err);
	if (meta->mask & (ROCE_M_SEND | ROCE_M_WRITE)) {
		rs->epsn = roce_psn_add(meta->psn, 1);
		if (meta->flags & ROCE_PKT_F_ACKREQ)
			resp_ack(qp, meta->psn);
	}
}

/* Next packet of a READ response stream. @return 0, or -1 when out of mbufs or room. */
static int
resp_read_pkt(struct roce_qp *qp, struct resp_res *res)
{
	static const uint8_t op[2][2] = {
		/* [first][last] */
		{ ROCE_OPCODE(RC, READ_RESP_MIDDLE), ROCE_OPCODE(RC, READ_RESP_LAST) },
		{ ROCE_OPCODE(RC, READ_RESP_FIRST), ROCE_OPCODE(RC, READ_RESP_ONLY) },
	};
	uint32_t len = RTE_MIN(qp->mtu, res->len - res->offset);
	int first = res->next_psn == res->first_psn, last = res->next_psn == res->last_psn;
	struct roce_pkt_desc d;
	struct tx_piece pc;
	struct rte_mbuf *m;

	if (res->atomic) {
		if (qp_send_ack(qp, ROCE_OPCODE(RC, ATOMIC_ACK), res->first_psn, ACK_SYNDROME,
				res->msn, res->orig) != 0)
			return -1;
		res->sending = 0;
		return 0;
	}
	if (unlikely(res->data == NULL && res->len != 0)) {
		/* Its MR was deregistered under the stream: a remote access error, now (it is
		 * the next response PSN). */
		qp->resp.sending_reads = 0;
		resp_nak(qp, res->next_psn, RESP_ERR_ACC);
		return -1;
	}
	pkt_desc_zero(&d);
	d.opcode = op[first][last];
	d.dest_qpn = qp->attr.dest_qp_num;
	d.psn = res->next_psn;
	d.syndrome = ACK_SYNDROME;
	d.msn = res->msn;
	pc = (struct tx_piece){ res->mr, len != 0 ? res->data + res->offset : NULL, len };
	m = qp_build_data(qp, &qp->attr.ah, &d, &pc, len != 0, len);
	if (m == NULL)
		return -1;
	if (qp_tx(qp, m, ROCE_XC_TX_RESP) != 0)
		return -1;
	qp->cnt[ROCE_XC_TX_BYTES] += len;
	res->offset += len;
	if (unlikely(res->detour) && res->next_psn == res->detour_end) {
		res->detour = 0;
		res->next_psn = res->resume_psn;
		res->offset = res->resume_off;
		return 0;
	}
	if (res->next_psn == res->end_psn)
		res->sending = 0;
	res->next_psn = roce_psn_add(res->next_psn, 1);
	return 0;
}

void
resp_mr_revoke(struct roce_qp *qp, const struct roce_mr *mr)
{
	struct resp_state *rs = &qp->resp;
	uint32_t i;

	if (rs->wr_mr == mr) {
		rs->wr_mr = NULL;
		rs->wr_dst = NULL;
		rs->wr_revoked = 1;
	}
	for (i = 0; i < rs->nb_res; i++) {
		struct resp_res *res = &rs->res[i];

		if (res->mr == mr) {
			res->mr = NULL;
			res->data = NULL;
		}
	}
}

uint32_t
resp_send(struct roce_qp *qp, uint32_t budget)
{
	struct resp_state *rs = &qp->resp;
	uint32_t sent = 0, i;

	if ((!rs->sending_reads && !rs->ack_pending) || qp->state == ROCE_QPS_ERR)
		return 0;
	/* Streams go out oldest first: responses stay in PSN order. */
	for (i = 0; i < rs->nb_res && sent < budget; i++) {
		struct resp_res *res = &rs->res[(rs->res_head + i) % rs->nb_res];

		while (res->sending && sent < budget) {
			if (resp_read_pkt(qp, res) != 0)
				return sent;
			sent++;
		}
		if (res->sending)
			return sent;
	}
	rs->sending_reads = 0;
	for (i = 0; i < rs->nb_res; i++)
		rs->sending_reads |= rs->res[i].sending;
	if (!rs->sending_reads && rs->ack_pending && sent < budget &&
			resp_held_ack_out(qp) == 0) {
		rs->ack_pending = 0;
		sent++;
		if (rs->nak_fatal) {
			qp->cnt[rs->nak_cnt]++;
			qp_to_error(qp);
		}
	}
	return sent;
}
