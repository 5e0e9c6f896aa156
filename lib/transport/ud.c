/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unreliable Datagram (IBA 9.8, 10.2.5; rxe_req.c, rxe_recv.c, rxe_resp.c for what Linux
 * does): each send work request is one SEND Only (with immediate or not) to the address,
 * QPN and Q_Key it names, with a DETH giving the Q_Key and our QPN; it completes once
 * queued for the wire, with no ACK and no retransmission. Its PSN counts up from the
 * sq_psn of RTR->RTS by one per datagram; the receiver ignores it. A datagram received
 * takes one receive WQE whole: the GRH area (roce_grh.h), then the payload.
 *
 * Errors, as rxe's responder has them for UD (class D: dropped, counted, the QP goes on)
 * except where a completion is due: a Q_Key that is not the QP's, a datagram longer than
 * the path MTU, or no receive WQE drop it; a receive buffer too short for it completes
 * with LOC_LEN_ERR and puts the QP in ERR (rxe: LOC_QP_OP_ERR, from its copy routine's
 * EINVAL); a send longer than the path MTU completes with LOC_LEN_ERR, nothing sent, the
 * QP in ERR (rxe: nothing sent, success reported, IBA C10-93.1.1).
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "transport_private.h"

/* ---- address handles ---- */

struct roce_ah *
roce_ah_create(struct roce_pd *pd, const struct roce_ah_attr *attr)
{
	struct roce_ah *ah;

	if (pd == NULL || attr == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	ah = rte_zmalloc_socket("roce_ah", sizeof(*ah), 0, pd->socket_id);
	if (ah == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ah->pd = pd;
	ah->attr = *attr;
	/* Any valid port for the template: each QP puts its own there (ud_post_send()). */
	ah->attr.path.udp_sport = ROCE_UDP_SPORT_BASE;
	if (roce_path_init(&ah->attr.path) != 0) {
		rte_free(ah);
		rte_errno = EINVAL;
		return NULL;
	}
	pd->nb_ah++;
	return ah;
}

int
roce_ah_destroy(struct roce_ah *ah)
{
	if (ah == NULL)
		return 0;
	ah->pd->nb_ah--;
	rte_free(ah);
	return 0;
}

const struct roce_ah_attr *
roce_ah_attr(const struct roce_ah *ah)
{
	return &ah->attr;
}

/* ---- QP ---- */

int
ud_setup(struct roce_qp *qp)
{
	qp->ud_dest = rte_zmalloc_socket("roce_ud_dest", qp->sq_size * sizeof(qp->ud_dest[0]), 0,
			qp->eng->conf.socket_id);
	if (qp->ud_dest == NULL)
		return -ENOMEM;
	/* rxe's MTU for a 1500-byte Ethernet MTU; the dataplane sets the port's own. */
	qp->attr.path_mtu = ROCE_MTU_1024;
	qp->mtu = roce_mtu_bytes(ROCE_MTU_1024);
	return 0;
}

void
ud_free(struct roce_qp *qp)
{
	rte_free(qp->ud_dest);
	qp->ud_dest = NULL;
}

static inline struct ud_dest *
ud_dest_of(const struct roce_qp *qp, uint32_t idx)
{
	return &qp->ud_dest[idx & (qp->sq_size - 1)];
}

/* The DETH Q_Key of a datagram: QP1's, the QP's own for a controlled one, else the WR's. */
static inline uint32_t
ud_send_qkey(const struct roce_qp *qp, uint32_t wr_qkey)
{
	if (qp->qpn == ROCE_GSI_QPN)
		return ROCE_GSI_QKEY;
	return wr_qkey & ROCE_QKEY_CONTROLLED ? qp->attr.qkey : wr_qkey;
}

int
ud_post_send(struct roce_qp *qp, const struct roce_send_wr *wr)
{
	const struct roce_ah *ah = wr->ud.ah;
	struct ud_dest *d;
	int64_t len;

	if (qp->state == ROCE_QPS_RESET)
		return -EPERM;
	if ((wr->opcode != ROCE_WR_SEND && wr->opcode != ROCE_WR_SEND_WITH_IMM) ||
			wr->num_sge > ROCE_MAX_SGE || ah == NULL || ah->pd != qp->pd ||
			wr->ud.remote_qpn > ROCE_24BIT_MASK ||
			(ah->attr.port_num != 0 && qp->attr.port_num != 0 &&
			 ah->attr.port_num != qp->attr.port_num))
		return -EINVAL;
	len = wr_length(wr);
	if (len < 0 || ((wr->send_flags & ROCE_SEND_INLINE) && len > qp->max_inline))
		return -EINVAL;
	if (qp->req.sq_head - qp->req.sq_tail >= qp->sq_size)
		return -ENOMEM;
	/* The address is copied now: the AH may go as soon as the WR is posted. */
	d = ud_dest_of(qp, qp->req.sq_head);
	d->path = ah->attr.path;
	roce_path_set_udp_sport(&d->path, roce_udp_sport_qpn(qp->qpn));
	d->remote_qpn = wr->ud.remote_qpn;
	d->qkey = ud_send_qkey(qp, wr->ud.remote_qkey);
	return sq_push(qp, wr, WQE_SEND, (uint32_t)len);
}

/* Complete the send WQE at the cursor with @status; the QP goes to ERR (the rest flushed). */
static void
ud_send_fail(struct roce_qp *qp, struct send_wqe *wqe, enum roce_wc_status status)
{
	qp_complete_send(qp, wqe, status, 0);
	qp->req.sq_cur++;
	qp->req.sq_tail = qp->req.sq_cur;
	qp_to_error(qp);
}

/*
 * Send the datagram of the WQE at the cursor. @return 0 when it went (and completed),
 * -EAGAIN when it must wait for an mbuf or ring room, another -errno when it failed (the
 * WQE completed in error, the QP in ERR).
 */
static int
ud_xmit(struct roce_qp *qp, struct send_wqe *wqe, const struct ud_dest *d)
{
	const struct roce_send_wr *wr = &wqe->wr;
	struct req_state *r = &qp->req;
	struct roce_pkt_desc desc;
	uint64_t nombuf = qp->cnt[ROCE_XC_TX_NOMBUF];
	struct tx_piece pc[ROCE_MAX_SGE];
	uint32_t len = wqe->length;
	struct rte_mbuf *m;
	int npc = 0;

	if (len > qp->mtu) {
		qp->cnt[ROCE_XC_UD_TX_TOO_LONG]++;
		ud_send_fail(qp, wqe, ROCE_WC_LOC_LEN_ERR);
		return -EMSGSIZE;
	}
	if (len != 0 && (wr->send_flags & ROCE_SEND_INLINE)) {
		pc[0] = (struct tx_piece){ NULL, wqe->inline_data, len };
		npc = 1;
	} else if (len != 0) {
		npc = sge_pieces(qp, wr->sg_list, wr->num_sge, 0, len, pc);
		if (npc < 0) {
			ud_send_fail(qp, wqe, ROCE_WC_LOC_PROT_ERR);
			return -EACCES;
		}
	}
	pkt_desc_zero(&desc);
	desc.opcode = wr->opcode == ROCE_WR_SEND_WITH_IMM ? ROCE_OPCODE(UD, SEND_ONLY_IMM) :
		ROCE_OPCODE(UD, SEND_ONLY);
	desc.se = !!(wr->send_flags & ROCE_SEND_SOLICITED);
	/* rxe's QP1 sets AckReq on its MADs (../shared/captures/roce_rdma_cm_*.pcap), its
	 * other UD QPs do not (roce_ud_send_64B.pcap); nothing answers it. */
	desc.ackreq = qp->qpn == ROCE_GSI_QPN;
	desc.dest_qpn = d->remote_qpn;
	desc.psn = r->psn;
	desc.imm = wr->imm_data;
	desc.qkey = d->qkey;
	desc.src_qpn = qp->qpn;
	m = qp_build_data(qp, &d->path, &desc, pc, (unsigned int)npc, len);
	if (m == NULL) {
		/* Out of mbufs: try again later. The builder refuses nothing a valid WR makes. */
		if (qp->cnt[ROCE_XC_TX_NOMBUF] != nombuf)
			return -EAGAIN;
		ud_send_fail(qp, wqe, ROCE_WC_LOC_QP_OP_ERR);
		return -EINVAL;
	}
	if (qp_tx(qp, m, ROCE_XC_TX_REQ) != 0)
		return -EAGAIN;
	qp->cnt[ROCE_XC_TX_BYTES] += len;
	wqe->started = 1;
	wqe->first_psn = r->psn;
	wqe->npkts = 1;
	r->psn = r->psn_next_new = r->una = roce_psn_add(r->psn, 1);
	r->sq_cur++;
	/* Sent is done: nothing will acknowledge it. */
	qp_complete_send(qp, wqe, ROCE_WC_SUCCESS, 0);
	r->sq_tail = r->sq_cur;
	return 0;
}

static uint32_t
ud_req_send(struct roce_qp *qp, uint32_t budget)
{
	struct req_state *r = &qp->req;
	uint32_t sent = 0;

	while (sent < budget && qp->state == ROCE_QPS_RTS && r->sq_cur != r->sq_head) {
		if (ud_xmit(qp, sq_wqe(qp, r->sq_cur), ud_dest_of(qp, r->sq_cur)) != 0)
			break;
		sent++;
	}
	return sent;
}

static int
ud_req_has_work(const struct roce_qp *qp)
{
	return qp->state == ROCE_QPS_RTS && qp->req.sq_cur != qp->req.sq_head;
}

/* Nothing is acknowledged, so nothing is ever retransmitted. */
static uint64_t
ud_retry_ns(const struct roce_qp *qp)
{
	RTE_SET_USED(qp);
	return 0;
}

static void
ud_timeout(struct roce_qp *qp)
{
	RTE_SET_USED(qp);
}

/* Complete the receive WQE at the tail with an error, then the QP goes to ERR. */
static void
ud_recv_fail(struct roce_qp *qp, enum roce_wc_status status)
{
	struct roce_wc wc = {
		.wr_id = rq_wqe(qp, qp->resp.rq_tail)->wr.wr_id,
		.status = status,
		.opcode = ROCE_WC_RECV,
		.qp_num = qp->qpn,
	};

	qp->resp.rq_tail++;
	qp->cnt[ROCE_XC_RECV_COMPLETED]++;
	if (cq_push(qp->recv_cq, &wc) != 0)
		qp->cnt[ROCE_XC_CQ_OVERRUN]++;
	qp_to_error(qp);
}

void
ud_rx(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	const struct roce_deth *deth = roce_pkt_hdr(m, meta, ROCE_HDR_DETH);
	uint32_t qkey = qp->qpn == ROCE_GSI_QPN ? ROCE_GSI_QKEY : qp->attr.qkey;
	uint32_t plen = meta->payload_len, need = ROCE_GRH_LEN + plen;
	struct resp_state *rs = &qp->resp;
	const struct recv_wqe *rwqe;
	uint8_t grh[ROCE_GRH_LEN];
	struct roce_wc wc;

	/* rxe takes datagrams from RTR until ERR: in RTS, SQD and SQE too. */
	if (qp->state < ROCE_QPS_RTR || qp->state == ROCE_QPS_ERR) {
		qp->cnt[ROCE_XC_STATE_DROP]++;
		return;
	}
	if (unlikely(!roce_pkey_match(roce_bth_pkey(roce_pkt_bth(m, meta)), ROCE_PKEY_DEFAULT))) {
		qp->cnt[ROCE_XC_BAD_PKEY]++;
		return;
	}
	qp->cnt[ROCE_XC_RX_PKTS]++;
	qp->cnt[ROCE_XC_RX_BYTES] += plen;
	/* Counted; congestion control (CNPs) runs on RC QPs only. */
	if (unlikely((meta->tos & ROCE_ECN_MASK) == ROCE_ECN_CE))
		qp->cnt[ROCE_XC_CE_RX]++;
	/* rxe's order: keys, then a receive WQE, then the length. */
	if (roce_deth_qkey(deth) != qkey) {
		qp->cnt[ROCE_XC_UD_QKEY_DROP]++;
		return;
	}
	if (rs->rq_tail == rs->rq_head) {
		qp->cnt[ROCE_XC_UD_NO_RECV]++;
		return;
	}
	if (plen > qp->mtu) {
		qp->cnt[ROCE_XC_UD_RX_TOO_LONG]++;
		return;
	}
	rwqe = rq_wqe(qp, rs->rq_tail);
	if (need > rwqe->length) {
		qp->cnt[ROCE_XC_UD_RECV_LEN_ERR]++;
		return ud_recv_fail(qp, ROCE_WC_LOC_LEN_ERR);
	}
	roce_grh_fill(grh, m, meta);
	if (sge_scatter_buf(qp, rwqe->wr.sg_list, rwqe->wr.num_sge, grh, ROCE_GRH_LEN) != 0 ||
			sge_scatter(qp, rwqe->wr.sg_list, rwqe->wr.num_sge, ROCE_GRH_LEN, m,
				meta->payload_off, plen) != 0)
		return ud_recv_fail(qp, ROCE_WC_LOC_PROT_ERR);
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = rwqe->wr.wr_id;
	wc.status = ROCE_WC_SUCCESS;
	wc.opcode = ROCE_WC_RECV;
	wc.byte_len = need;
	wc.qp_num = qp->qpn;
	wc.src_qp = roce_deth_sqp(deth);
	wc.wc_flags = ROCE_WC_GRH;
	wc.qkey = qkey;
	wc.network_hdr_type = meta->flags & ROCE_PKT_F_IPV6 ? ROCE_NETWORK_IPV6 :
		ROCE_NETWORK_IPV4;
	roce_grh_sgid(grh, wc.sgid);
	if (meta->mask & ROCE_M_IMMDT) {
		wc.imm_data = roce_immdt_imm(roce_pkt_hdr(m, meta, ROCE_HDR_IMMDT));
		wc.wc_flags |= ROCE_WC_WITH_IMM;
	}
	rs->rq_tail++;
	qp->cnt[ROCE_XC_RECV_COMPLETED]++;
	if (cq_push(qp->recv_cq, &wc) != 0)
		qp->cnt[ROCE_XC_CQ_OVERRUN]++;
}

/*
 * The engine hands UD datagrams to ud_rx() itself (they carry no ACK, READ or atomic to
 * tell apart), so resp_rx and comp_rx are never reached through this table; they point at
 * ud_rx all the same.
 */
const struct xport_ops xport_ud = {
	.resp_rx = ud_rx,
	.comp_rx = ud_rx,
	.req_send = ud_req_send,
	.req_has_work = ud_req_has_work,
	.retry_ns = ud_retry_ns,
	.timeout = ud_timeout,
	.data_transport = ROCE_TRANSPORT_UD,
	.dup_read_part = 0,
};
