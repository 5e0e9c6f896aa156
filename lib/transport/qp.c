/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "transport_private.h"

/* Largest headers a packet of any opcode needs: Ethernet, VLAN, IPv6, UDP, BTH + AtomicETH. */
#define MAX_HDRS (ROCE_PATH_HDR_MAX + 12 + 28 + ROCE_ICRC_LEN + 4)
#define MAX_RD_ATOMIC 128

static const char *const state_names[ROCE_QPS_NUM] = {
	[ROCE_QPS_RESET] = "RESET", [ROCE_QPS_INIT] = "INIT", [ROCE_QPS_RTR] = "RTR",
	[ROCE_QPS_RTS] = "RTS", [ROCE_QPS_SQD] = "SQD", [ROCE_QPS_SQE] = "SQE",
	[ROCE_QPS_ERR] = "ERR",
};

const char *
roce_qp_state_name(enum roce_qp_state state)
{
	return (unsigned int)state < ROCE_QPS_NUM ? state_names[state] : "UNKNOWN";
}

/* As ibv_wc_status_str(). */
static const char *const wc_status_str[ROCE_WC_STATUS_NUM] = {
	[ROCE_WC_SUCCESS] = "success",
	[ROCE_WC_LOC_LEN_ERR] = "local length error",
	[ROCE_WC_LOC_QP_OP_ERR] = "local QP operation error",
	[ROCE_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
	[ROCE_WC_LOC_PROT_ERR] = "local protection error",
	[ROCE_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
	[ROCE_WC_MW_BIND_ERR] = "memory management operation error",
	[ROCE_WC_BAD_RESP_ERR] = "bad response error",
	[ROCE_WC_LOC_ACCESS_ERR] = "local access error",
	[ROCE_WC_REM_INV_REQ_ERR] = "remote invalid request error",
	[ROCE_WC_REM_ACCESS_ERR] = "remote access error",
	[ROCE_WC_REM_OP_ERR] = "remote operation error",
	[ROCE_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
	[ROCE_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
	[ROCE_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
	[ROCE_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
	[ROCE_WC_REM_ABORT_ERR] = "aborted error",
	[ROCE_WC_INV_EECN_ERR] = "invalid EE context number",
	[ROCE_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
	[ROCE_WC_FATAL_ERR] = "fatal error",
	[ROCE_WC_RESP_TIMEOUT_ERR] = "response timeout error",
	[ROCE_WC_GENERAL_ERR] = "general error",
};

const char *
roce_wc_status_str(enum roce_wc_status status)
{
	return (unsigned int)status < ROCE_WC_STATUS_NUM ? wc_status_str[status] :
		"unknown";
}

/* IBA table 45: RNR NAK timer codes, in microseconds. */
static const uint32_t rnr_timer_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880,
	163840, 245760, 327680, 491520,
};

uint64_t
rnr_timer_ns(uint8_t code)
{
	return (uint64_t)rnr_timer_us[code & 31] * 1000;
}

/* The two transport modes; INIT->RTR picks one (roce_qp_attr::sr), RESET goes back to IBA's. */
static const struct xport_ops xport_gbn = {
	.resp_rx = gbn_resp_rx,
	.comp_rx = gbn_comp_rx,
	.req_send = gbn_req_send,
	.req_has_work = gbn_req_has_work,
	.retry_ns = gbn_retry_ns,
	.timeout = gbn_timeout,
	.data_transport = ROCE_TRANSPORT_RC,
	.dup_read_part = 0,
};

static const struct xport_ops xport_sr = {
	.resp_rx = sr_resp_rx,
	.comp_rx = sr_comp_rx,
	.req_send = sr_req_send,
	.req_has_work = sr_req_has_work,
	.retry_ns = sr_retry_ns,
	.timeout = sr_timeout,
	.data_transport = ROCE_TRANSPORT_SR,
	.dup_read_part = 1,
};

struct roce_qp *
roce_qp_create(struct roce_engine *eng, struct roce_pd *pd, const struct roce_qp_init_attr *ia)
{
	int socket = eng->conf.socket_id;
	struct roce_qp *qp;
	int ret;

	enum roce_qp_type type = ia != NULL && ia->qp_type != 0 ? ia->qp_type : ROCE_QPT_RC;

	if (pd == NULL || ia == NULL || ia->send_cq == NULL || ia->recv_cq == NULL ||
			ia->max_send_wr == 0 || ia->max_send_wr > (1u << 16) ||
			ia->max_recv_wr == 0 || ia->max_recv_wr > (1u << 16) ||
			ia->max_inline_data > ROCE_MAX_INLINE || ia->qp_num > ROCE_24BIT_MASK ||
			(type != ROCE_QPT_RC && type != ROCE_QPT_UD) ||
			(ia->qp_num == ROCE_GSI_QPN && (type != ROCE_QPT_UD || ia->port_num == 0))) {
		rte_errno = EINVAL;
		return NULL;
	}
	qp = rte_zmalloc_socket("roce_qp", sizeof(*qp), RTE_CACHE_LINE_SIZE, socket);
	if (qp == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	qp->eng = eng;
	qp->pd = pd;
	qp->send_cq = ia->send_cq;
	qp->recv_cq = ia->recv_cq;
	qp->sq_sig_all = ia->sq_sig_all;
	qp->max_inline = ia->max_inline_data;
	qp->context = ia->qp_context;
	qp->sq_size = rte_align32pow2(ia->max_send_wr);
	qp->rq_size = rte_align32pow2(ia->max_recv_wr);
	qp->sq = rte_zmalloc_socket("roce_sq", qp->sq_size * sizeof(qp->sq[0]), 0, socket);
	qp->rq = rte_zmalloc_socket("roce_rq", qp->rq_size * sizeof(qp->rq[0]), 0, socket);
	qp->qpn = ia->qp_num != 0 ? ia->qp_num : engine_qpn_pick(eng);
	qp->key = qp->qpn == ROCE_GSI_QPN ? gsi_key(ia->port_num) : qp->qpn;
	qp->state = ROCE_QPS_RESET;
	qp->ops = &xport_gbn;
	qp->transport = ROCE_TRANSPORT_RC;
	roce_timer_init(&qp->req.retry_timer, comp_retry_timeout, qp);
	roce_timer_init(&qp->req.rnr_timer, comp_rnr_done, qp);
	roce_timer_init(&qp->req.rd_reo_timer, comp_rd_reo_timeout, qp);
	roce_timer_init(&qp->pace_timer, engine_pace_done, qp);
	ret = qp->sq == NULL || qp->rq == NULL ? -ENOMEM : qp->qpn == 0 ? -ENOSPC : 0;
	if (ret == 0 && type == ROCE_QPT_UD) {
		qp->transport = ROCE_TRANSPORT_UD;
		qp->ops = &xport_ud;
		if (qp->qpn == ROCE_GSI_QPN) {
			qp->attr.port_num = ia->port_num;
			qp->attr.qkey = ROCE_GSI_QKEY;
		}
		ret = ud_setup(qp);
	}
	if (ret == 0)
		ret = engine_qp_insert(eng, qp);
	if (ret != 0) {
		ud_free(qp);
		rte_free(qp->sq);
		rte_free(qp->rq);
		rte_free(qp);
		rte_errno = -ret;
		return NULL;
	}
	return qp;
}

static void
qp_stop(struct roce_qp *qp)
{
	roce_timer_cancel(&qp->eng->wheel, &qp->req.retry_timer);
	roce_timer_cancel(&qp->eng->wheel, &qp->req.rnr_timer);
	roce_timer_cancel(&qp->eng->wheel, &qp->req.rd_reo_timer);
	roce_timer_cancel(&qp->eng->wheel, &qp->pace_timer);
	engine_pace_release(qp);
	engine_deactivate(qp);
}

int
roce_qp_destroy(struct roce_qp *qp)
{
	struct roce_engine *eng = qp->eng;
	unsigned int c;

	qp_stop(qp);
	engine_qp_remove(eng, qp);
	for (c = 0; c < ROCE_XC_NUM; c++)
		eng->cnt[c] += qp->cnt[c];
	rte_free(qp->resp.res);
	sr_free(qp);
	ud_free(qp);
	rte_free(qp->sq);
	rte_free(qp->rq);
	rte_free(qp);
	return 0;
}

uint32_t
roce_qp_num(const struct roce_qp *qp)
{
	return qp->qpn;
}

enum roce_qp_state
roce_qp_state(const struct roce_qp *qp)
{
	return qp->state;
}

uint32_t
roce_qp_sq_outstanding(const struct roce_qp *qp)
{
	return qp->req.sq_head - qp->req.sq_tail;
}

enum roce_qp_type
roce_qp_type(const struct roce_qp *qp)
{
	return qp->transport == ROCE_TRANSPORT_UD ? ROCE_QPT_UD : ROCE_QPT_RC;
}

uint64_t
roce_qp_context(const struct roce_qp *qp)
{
	return qp->context;
}

struct roce_pd *
roce_qp_pd(const struct roce_qp *qp)
{
	return qp->pd;
}

void
roce_qp_query_init(const struct roce_qp *qp, struct roce_qp_init_attr *init)
{
	memset(init, 0, sizeof(*init));
	init->send_cq = qp->send_cq;
	init->recv_cq = qp->recv_cq;
	init->max_send_wr = qp->sq_size;
	init->max_recv_wr = qp->rq_size;
	init->max_inline_data = qp->max_inline;
	init->sq_sig_all = qp->sq_sig_all;
	init->qp_num = qp->qpn;
	init->qp_context = qp->context;
	init->qp_type = roce_qp_type(qp);
	init->port_num = qp->qpn == ROCE_GSI_QPN ? qp->attr.port_num : 0;
}

int
roce_qp_query(const struct roce_qp *qp, struct roce_qp_attr *attr)
{
	*attr = qp->attr;
	attr->qp_state = qp->state;
	return 0;
}

/* Attributes each transition requires and allows (IBA table 91, RC). */
struct transition {
	int required;
	int allowed;
};

#define RTR_REQ (ROCE_QP_AV | ROCE_QP_PATH_MTU | ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN | \
		ROCE_QP_MAX_DEST_RD_ATOMIC | ROCE_QP_MIN_RNR_TIMER)
#define RTS_REQ (ROCE_QP_SQ_PSN | ROCE_QP_TIMEOUT | ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY | \
		ROCE_QP_MAX_QP_RD_ATOMIC)
#define INIT_OPT (ROCE_QP_PKEY_INDEX | ROCE_QP_PORT | ROCE_QP_ACCESS_FLAGS)
#define RTR_OPT (ROCE_QP_SR | ROCE_QP_MAX_INFLIGHT | ROCE_QP_SR_RTO)
#define RTS_OPT (ROCE_QP_ACCESS_FLAGS | ROCE_QP_MIN_RNR_TIMER | ROCE_QP_SR_RTO)

static const struct transition rc_transitions[ROCE_QPS_NUM][ROCE_QPS_NUM] = {
	[ROCE_QPS_RESET][ROCE_QPS_INIT] = { 0, INIT_OPT },
	[ROCE_QPS_INIT][ROCE_QPS_INIT] = { 0, INIT_OPT },
	[ROCE_QPS_INIT][ROCE_QPS_RTR] = { RTR_REQ, RTR_REQ | INIT_OPT | RTR_OPT },
	[ROCE_QPS_RTR][ROCE_QPS_RTS] = { RTS_REQ, RTS_REQ | RTS_OPT },
	[ROCE_QPS_RTS][ROCE_QPS_RTS] = { 0, RTS_OPT },
	[ROCE_QPS_RTS][ROCE_QPS_SQD] = { 0, 0 },
	[ROCE_QPS_SQD][ROCE_QPS_SQD] = { 0, RTS_OPT },
	[ROCE_QPS_SQD][ROCE_QPS_RTS] = { 0, RTS_OPT },
	[ROCE_QPS_SQE][ROCE_QPS_RTS] = { 0, RTS_OPT },
};

/* UD (IBA table 91), with the path MTU everywhere (rocedp's: verbs take the port's). */
#define UD_INIT_OPT (ROCE_QP_PKEY_INDEX | ROCE_QP_PORT | ROCE_QP_QKEY | ROCE_QP_PATH_MTU)
#define UD_RTR_OPT (ROCE_QP_PKEY_INDEX | ROCE_QP_QKEY | ROCE_QP_PATH_MTU)
#define UD_RTS_OPT (ROCE_QP_QKEY | ROCE_QP_PATH_MTU)

static const struct transition ud_transitions[ROCE_QPS_NUM][ROCE_QPS_NUM] = {
	[ROCE_QPS_RESET][ROCE_QPS_INIT] = { 0, UD_INIT_OPT },
	[ROCE_QPS_INIT][ROCE_QPS_INIT] = { 0, UD_INIT_OPT },
	[ROCE_QPS_INIT][ROCE_QPS_RTR] = { 0, UD_RTR_OPT },
	[ROCE_QPS_RTR][ROCE_QPS_RTS] = { ROCE_QP_SQ_PSN, ROCE_QP_SQ_PSN | UD_RTS_OPT },
	[ROCE_QPS_RTS][ROCE_QPS_RTS] = { 0, UD_RTS_OPT },
	[ROCE_QPS_RTS][ROCE_QPS_SQD] = { 0, 0 },
	[ROCE_QPS_SQD][ROCE_QPS_SQD] = { 0, UD_RTS_OPT | ROCE_QP_PKEY_INDEX },
	[ROCE_QPS_SQD][ROCE_QPS_RTS] = { 0, UD_RTS_OPT },
	[ROCE_QPS_SQE][ROCE_QPS_RTS] = { 0, UD_RTS_OPT },
};

/* Range checks of the attributes in @mask. */
static int
attr_check(const struct roce_qp *qp, const struct roce_qp_attr *a, int mask)
{
	uint32_t room = rte_pktmbuf_data_room_size(qp->eng->mp) - RTE_PKTMBUF_HEADROOM;

	if ((mask & ROCE_QP_PATH_MTU) &&
			(roce_mtu_bytes(a->path_mtu) == 0 ||
			 roce_mtu_bytes(a->path_mtu) + MAX_HDRS > room))
		return -EINVAL;
	if (((mask & ROCE_QP_RQ_PSN) && a->rq_psn > ROCE_PSN_MASK) ||
			((mask & ROCE_QP_SQ_PSN) && a->sq_psn > ROCE_PSN_MASK) ||
			((mask & ROCE_QP_DEST_QPN) && a->dest_qp_num > ROCE_24BIT_MASK) ||
			((mask & ROCE_QP_TIMEOUT) && a->timeout > 31) ||
			((mask & ROCE_QP_RETRY_CNT) && a->retry_cnt > 7) ||
			((mask & ROCE_QP_RNR_RETRY) && a->rnr_retry > 7) ||
			((mask & ROCE_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31) ||
			((mask & ROCE_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > MAX_RD_ATOMIC) ||
			((mask & ROCE_QP_MAX_DEST_RD_ATOMIC) &&
			 a->max_dest_rd_atomic > MAX_RD_ATOMIC) ||
			((mask & ROCE_QP_ACCESS_FLAGS) && (a->qp_access_flags & ~0xFu)) ||
			((mask & ROCE_QP_SR) && a->sr > 1) ||
			((mask & ROCE_QP_MAX_INFLIGHT) &&
			 a->max_inflight > ROCE_MAX_INFLIGHT_MAX) ||
			((mask & ROCE_QP_SR_RTO) && a->sr_rto_us > 1000000))
		return -EINVAL;
	/* QP1 keeps its port (its table key) and its Q_Key. */
	if (qp->qpn == ROCE_GSI_QPN &&
			(((mask & ROCE_QP_PORT) && a->port_num != qp->attr.port_num) ||
			 ((mask & ROCE_QP_QKEY) && a->qkey != ROCE_GSI_QKEY)))
		return -EINVAL;
	return 0;
}

/* Copy the attributes in @mask; the resource ring is sized on the way into RTR. */
static int
attr_apply(struct roce_qp *qp, const struct roce_qp_attr *a, int mask)
{
	struct roce_qp_attr *q = &qp->attr;

	if (mask & ROCE_QP_AV) {
		struct roce_path ah = a->ah;

		if (roce_path_init(&ah) != 0)
			return -EINVAL;
		q->ah = ah;
	}
	if (mask & ROCE_QP_MAX_DEST_RD_ATOMIC) {
		uint32_t n = RTE_MAX(a->max_dest_rd_atomic, 1);
		struct resp_res *res = rte_zmalloc_socket("roce_res", n * sizeof(*res), 0,
				qp->eng->conf.socket_id);

		if (res == NULL)
			return -ENOMEM;
		rte_free(qp->resp.res);
		qp->resp.res = res;
		qp->resp.nb_res = n;
		qp->resp.res_head = 0;
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	}
#define COPY(bit, field) do { if (mask & (bit)) q->field = a->field; } while (0)
	COPY(ROCE_QP_ACCESS_FLAGS, qp_access_flags);
	COPY(ROCE_QP_PKEY_INDEX, pkey_index);
	COPY(ROCE_QP_QKEY, qkey);
	COPY(ROCE_QP_PORT, port_num);
	COPY(ROCE_QP_PATH_MTU, path_mtu);
	COPY(ROCE_QP_TIMEOUT, timeout);
	COPY(ROCE_QP_RETRY_CNT, retry_cnt);
	COPY(ROCE_QP_RNR_RETRY, rnr_retry);
	COPY(ROCE_QP_RQ_PSN, rq_psn);
	COPY(ROCE_QP_MAX_QP_RD_ATOMIC, max_rd_atomic);
	COPY(ROCE_QP_MIN_RNR_TIMER, min_rnr_timer);
	COPY(ROCE_QP_SQ_PSN, sq_psn);
	COPY(ROCE_QP_DEST_QPN, dest_qp_num);
	COPY(ROCE_QP_SR, sr);
	COPY(ROCE_QP_MAX_INFLIGHT, max_inflight);
	COPY(ROCE_QP_SR_RTO, sr_rto_us);
#undef COPY
	if (mask & ROCE_QP_SR_RTO)
		qp->sr.rto_ns = (uint64_t)(a->sr_rto_us != 0 ? a->sr_rto_us :
				ROCE_SR_RTO_DEFAULT_US) * 1000;
	if (mask & ROCE_QP_PATH_MTU)
		qp->mtu = roce_mtu_bytes(a->path_mtu);
	return 0;
}

/* Back to RESET: forget all work, without completions. */
static void
qp_reset(struct roce_qp *qp)
{
	struct resp_res *res = qp->resp.res;
	uint32_t nb_res = qp->resp.nb_res;

	qp_stop(qp);
	memset(&qp->req, 0, offsetof(struct req_state, retry_timer));
	memset(&qp->resp, 0, sizeof(qp->resp));
	qp->resp.res = res;
	qp->resp.nb_res = nb_res;
	if (res != NULL)
		memset(res, 0, nb_res * sizeof(*res));
	sr_clear(qp);
	/* A QP used again speaks IBA unless its next connection asks for SR again. */
	qp->attr.sr = 0;
	if (qp->transport == ROCE_TRANSPORT_RC)
		qp->ops = &xport_gbn;
}

static void
enter_state(struct roce_qp *qp, enum roce_qp_state from, enum roce_qp_state to)
{
	qp->state = to;
	switch (to) {
	case ROCE_QPS_RESET:
		qp_reset(qp);
		break;
	case ROCE_QPS_RTR:
		qp->resp.epsn = qp->attr.rq_psn;
		qp->sr.rx_hi = roce_psn_add(qp->resp.epsn, ROCE_PSN_MASK);
		break;
	case ROCE_QPS_RTS:
		if (from == ROCE_QPS_RTR) {
			qp->req.psn = qp->req.psn_next_new = qp->req.una = qp->attr.sq_psn;
			qp->req.sq_cur = qp->req.sq_tail;
			qp->sr.hi_done = roce_psn_add(qp->req.una, ROCE_PSN_MASK);
		}
		qp->req.retry_left = qp->attr.retry_cnt;
		qp->req.rnr_left = qp->attr.rnr_retry;
		if (req_has_work(qp))
			engine_activate(qp);
		break;
	default:
		break;
	}
}

int
roce_qp_modify(struct roce_qp *qp, const struct roce_qp_attr *attr, int mask)
{
	enum roce_qp_state to = (mask & ROCE_QP_STATE) ? attr->qp_state : qp->state;
	enum roce_qp_state from = qp->state;
	const struct transition *t;
	int rc = qp->transport == ROCE_TRANSPORT_RC, ret;

	if ((unsigned int)to >= ROCE_QPS_NUM)
		return -EINVAL;
	if (to == ROCE_QPS_RESET || to == ROCE_QPS_ERR) {
		if (to == ROCE_QPS_ERR)
			qp_to_error(qp);
		else
			enter_state(qp, from, to);
		return 0;
	}
	t = rc ? &rc_transitions[from][to] : &ud_transitions[from][to];
	if ((t->required == 0 && t->allowed == 0 && !(from == ROCE_QPS_RTS &&
			to == ROCE_QPS_SQD)) ||
			(mask & t->required) != t->required ||
			(mask & ~(t->allowed | ROCE_QP_STATE)) != 0)
		return -EINVAL;
	ret = attr_check(qp, attr, mask);
	if (ret == 0)
		ret = attr_apply(qp, attr, mask);
	if (ret == 0 && rc && from == ROCE_QPS_INIT && to == ROCE_QPS_RTR) {
		qp->inflight = qp->attr.max_inflight != 0 ? qp->attr.max_inflight :
			qp->eng->conf.max_inflight;
		/* Every PSN of the SR window has a slot: keep the arrays bounded. */
		if (qp->attr.sr)
			qp->inflight = RTE_MIN(qp->inflight, ROCE_MAX_INFLIGHT_MAX);
		ret = sr_setup(qp);
		if (ret == 0)
			qp->ops = qp->attr.sr ? &xport_sr : &xport_gbn;
	}
	if (ret != 0)
		return ret;
	if (to != from)
		enter_state(qp, from, to);
	return 0;
}

void
qp_complete_send(struct roce_qp *qp, struct send_wqe *wqe, enum roce_wc_status status,
		uint32_t vendor_err)
{
	static const enum roce_wc_opcode wc_op[] = {
		[ROCE_WR_RDMA_WRITE] = ROCE_WC_RDMA_WRITE,
		[ROCE_WR_RDMA_WRITE_WITH_IMM] = ROCE_WC_RDMA_WRITE,
		[ROCE_WR_SEND] = ROCE_WC_SEND,
		[ROCE_WR_SEND_WITH_IMM] = ROCE_WC_SEND,
		[ROCE_WR_RDMA_READ] = ROCE_WC_RDMA_READ,
		[ROCE_WR_ATOMIC_CMP_AND_SWP] = ROCE_WC_COMP_SWAP,
		[ROCE_WR_ATOMIC_FETCH_AND_ADD] = ROCE_WC_FETCH_ADD,
		[ROCE_WR_SEND_WITH_INV] = ROCE_WC_SEND,
	};

	wqe->done = 1;
	qp->cnt[ROCE_XC_WQE_COMPLETED]++;
	if (wqe->signaled || status != ROCE_WC_SUCCESS) {
		struct roce_wc *wc = cq_slot(qp->send_cq);

		if (wc == NULL) {
			qp->cnt[ROCE_XC_CQ_OVERRUN]++;
			return;
		}
		*wc = (struct roce_wc){
			.wr_id = wqe->wr.wr_id,
			.status = status,
			.opcode = wc_op[wqe->wr.opcode],
			.vendor_err = vendor_err,
			.byte_len = wqe->length,
			.qp_num = qp->qpn,
		};
		cq_commit(qp->send_cq);
	}
}

/* Complete every receive WQE with WR_FLUSH_ERR. */
static void
flush_recv(struct roce_qp *qp)
{
	for (; qp->resp.rq_tail != qp->resp.rq_head; qp->resp.rq_tail++) {
		struct roce_wc wc = {
			.wr_id = rq_wqe(qp, qp->resp.rq_tail)->wr.wr_id,
			.status = ROCE_WC_WR_FLUSH_ERR,
			.opcode = ROCE_WC_RECV,
			.qp_num = qp->qpn,
		};

		if (cq_push(qp->recv_cq, &wc) != 0)
			qp->cnt[ROCE_XC_CQ_OVERRUN]++;
	}
}

void
qp_to_error(struct roce_qp *qp)
{
	qp->state = ROCE_QPS_ERR;
	qp_stop(qp);
	for (; qp->req.sq_tail != qp->req.sq_head; qp->req.sq_tail++) {
		struct send_wqe *wqe = sq_wqe(qp, qp->req.sq_tail);

		if (!wqe->done)
			qp_complete_send(qp, wqe, ROCE_WC_WR_FLUSH_ERR, 0);
	}
	qp->req.sq_cur = qp->req.sq_tail;
	qp->req.rd_inflight = 0;
	flush_recv(qp);
	qp->resp.sending_reads = 0;
	qp->resp.ack_pending = 0;
}

int64_t
wr_length(const struct roce_send_wr *wr)
{
	uint64_t len = 0;
	unsigned int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len > ROCE_MAX_MSG_SIZE ? -1 : (int64_t)len;
}

static int
wr_class(enum roce_wr_opcode op)
{
	switch (op) {
	case ROCE_WR_SEND:
	case ROCE_WR_SEND_WITH_IMM:
	case ROCE_WR_SEND_WITH_INV:
		return WQE_SEND;
	case ROCE_WR_RDMA_WRITE:
	case ROCE_WR_RDMA_WRITE_WITH_IMM:
		return WQE_WRITE;
	case ROCE_WR_RDMA_READ:
		return WQE_READ;
	case ROCE_WR_ATOMIC_CMP_AND_SWP:
	case ROCE_WR_ATOMIC_FETCH_AND_ADD:
		return WQE_ATOMIC;
	default:
		return -1;
	}
}

/*
 * Copy a WR without its unused SGEs and, but for atomics, its operands (small-message streams
 * post millions a second). The caller has just stored the WR field by field: a wide load over
 * two of those stores (compare_add and swap, which the compiler joins) cannot be forwarded
 * and waits for the store buffer to drain, behind the last packet's stores into the PMD's ring.
 */
static void
wqe_copy_send_wr(struct roce_send_wr *d, const struct roce_send_wr *wr, int cls)
{
	d->wr_id = wr->wr_id;
	d->opcode = wr->opcode;
	d->send_flags = wr->send_flags;
	d->num_sge = wr->num_sge;
	if (wr->num_sge == 1)
		d->sg_list[0] = wr->sg_list[0];
	else
		memcpy(d->sg_list, wr->sg_list, wr->num_sge * sizeof(wr->sg_list[0]));
	d->imm_data = wr->imm_data;
	d->remote_addr = wr->remote_addr;
	d->rkey = wr->rkey;
	if (cls == WQE_ATOMIC) {
		d->compare_add = wr->compare_add;
		d->swap = wr->swap;
	}
}

/* Queue a checked send WR at the SQ head (RC here, UD from ud_post_send()). */
static inline int
wqe_push(struct roce_qp *qp, const struct roce_send_wr *wr, int cls, uint32_t len)
{
	struct send_wqe *wqe = sq_wqe(qp, qp->req.sq_head);

	wqe_copy_send_wr(&wqe->wr, wr, cls);
	wqe->length = len;
	wqe->first_psn = 0;
	wqe->npkts = 0;
	wqe->cls = cls;
	wqe->started = 0;
	wqe->done = 0;
	wqe->bad = 0;
	wqe->signaled = qp->sq_sig_all || (wr->send_flags & ROCE_SEND_SIGNALED);
	wqe->rsn = 0;
	if (wr->send_flags & ROCE_SEND_INLINE) {
		uint32_t off = 0;
		unsigned int i;

		/* Inline SGEs are local addresses, copied now: no lkey. */
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(wqe->inline_data + off,
					(const void *)(uintptr_t)wr->sg_list[i].addr,
					wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
	}
	qp->req.sq_head++;
	if (qp->state == ROCE_QPS_ERR) {
		/* Work posted to a QP in error is flushed at once. */
		qp->req.sq_tail++;
		qp->req.sq_cur = qp->req.sq_tail;
		qp_complete_send(qp, wqe, ROCE_WC_WR_FLUSH_ERR, 0);
		return 0;
	}
	if (qp->state == ROCE_QPS_RTS)
		engine_activate(qp);
	return 0;
}

int
roce_post_send(struct roce_qp *qp, const struct roce_send_wr *wr)
{
	int cls = wr_class(wr->opcode);
	int64_t len;

	if (unlikely(qp->transport != ROCE_TRANSPORT_RC))
		return ud_post_send(qp, wr);
	if (qp->state == ROCE_QPS_RESET)
		return -EPERM;
	if (cls < 0 || wr->num_sge > ROCE_MAX_SGE)
		return -EINVAL;
	len = wr_length(wr);
	if (len < 0 || ((wr->send_flags & ROCE_SEND_INLINE) &&
			(len > qp->max_inline || cls == WQE_READ || cls == WQE_ATOMIC)))
		return -EINVAL;
	if (cls == WQE_ATOMIC && (len != 8 || (wr->remote_addr & 7) != 0))
		return -EINVAL;
	if (qp->req.sq_head - qp->req.sq_tail >= qp->sq_size)
		return -ENOMEM;
	return wqe_push(qp, wr, cls, (uint32_t)len);
}

int
sq_push(struct roce_qp *qp, const struct roce_send_wr *wr, int cls, uint32_t len)
{
	return wqe_push(qp, wr, cls, len);
}

int
roce_post_recv(struct roce_qp *qp, const struct roce_recv_wr *wr)
{
	struct recv_wqe *wqe;
	uint64_t len = 0;
	unsigned int i;

	if (qp->state == ROCE_QPS_RESET)
		return -EPERM;
	if (wr->num_sge > ROCE_MAX_SGE)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > ROCE_MAX_MSG_SIZE)
		return -EINVAL;
	if (qp->resp.rq_head - qp->resp.rq_tail >= qp->rq_size)
		return -ENOMEM;
	wqe = rq_wqe(qp, qp->resp.rq_head++);
	wqe->wr.wr_id = wr->wr_id;
	wqe->wr.num_sge = wr->num_sge;
	memcpy(wqe->wr.sg_list, wr->sg_list, wr->num_sge * sizeof(wr->sg_list[0]));
	wqe->length = (uint32_t)len;
	if (qp->state == ROCE_QPS_ERR)
		flush_recv(qp);
	else if (qp->attr.sr)
		sr_recv_posted(qp);
	return 0;
}

struct rte_mbuf *
qp_pkt_alloc(struct roce_qp *qp)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(qp->eng->mp);

	if (m == NULL)
		qp->cnt[ROCE_XC_TX_NOMBUF]++;
	return m;
}

int
qp_send_ack(struct roce_qp *qp, uint8_t opcode, uint32_t psn, uint8_t syndrome, uint32_t msn,
		uint64_t orig)
{
	struct rte_mbuf *m = qp_pkt_alloc(qp);
	struct roce_pkt_desc d;

	if (m == NULL)
		return -ENOMEM;
	pkt_desc_zero(&d);
	d.opcode = opcode;
	d.dest_qpn = qp->attr.dest_qp_num;
	d.psn = psn;
	d.syndrome = syndrome;
	d.msn = msn;
	d.orig = orig;
	if (roce_build_pkt(m, &qp->attr.ah, &d, NULL, 0) != 0) {
		rte_pktmbuf_free(m);
		return -EINVAL;
	}
	return qp_tx(qp, m, ROCE_XC_TX_RESP);
}

void
roce_qp_counters(const struct roce_qp *qp, uint64_t *out)
{
	memcpy(out, qp->cnt, sizeof(qp->cnt));
}
