/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM connection state machine, after Linux's drivers/infiniband/core/cm.c: the message
 * handlers (cm_req_handler() ... cm_drep_handler()), the user's calls (ib_send_cm_*()), and
 * the MAD layer's part that Linux keeps below the CM: a message awaiting an answer is resent
 * every timeout, max_cm_retries times, then reported as timed out.
 */
#include <errno.h>
#include <string.h>

#include "cm_sm_private.h"
#include "cm_private.h"

/* cm_convert_to_ms(): 4.096 us * 2^t, approximated as 2^(t - 8) ms. */
uint64_t
roce_cm_timeout_ns(uint8_t iba_time)
{
	unsigned int sh = iba_time > 8 ? iba_time - 8u : 0;

	return (uint64_t)1000000 << sh;
}

/* cm_ack_timeout(): 4.096 us * 2^t >= ACK delay + 2 * packet life time, rounded. */
uint8_t
roce_cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time)
{
	int ack_timeout = packet_life_time + 1;

	if (ack_timeout >= ca_ack_delay)
		ack_timeout += (ca_ack_delay >= ack_timeout - 1);
	else
		ack_timeout = ca_ack_delay + (ack_timeout >= ca_ack_delay - 1);
	return (uint8_t)(ack_timeout < 31 ? ack_timeout : 31);
}

void
roce_cm_connect_params_init(struct roce_cm_connect_params *p)
{
	memset(p, 0, sizeof(*p));
	p->dest.remote_qpn = 1;
	p->dest.qkey = ROCE_CM_QP1_QKEY;
	p->dest.pkey = ROCE_CM_DEFAULT_PKEY;
	p->dest.port = 1;
	p->route.hop_limit = 64;
	p->route.packet_life_time = ROCE_CM_CMA_PACKET_LIFETIME;
	p->route.path_mtu = 3;
	p->route.pkey = ROCE_CM_DEFAULT_PKEY;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
	p->remote_cm_response_timeout = ROCE_CM_CMA_RESPONSE_TIMEOUT;
	p->local_cm_response_timeout = ROCE_CM_CMA_RESPONSE_TIMEOUT;
	p->max_cm_retries = ROCE_CM_CMA_MAX_CM_RETRIES;
}

void
roce_cm_accept_params_init(struct roce_cm_accept_params *p, const struct roce_cm_req_info *req)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = req->responder_resources;
	p->initiator_depth = req->initiator_depth;
	p->rnr_retry_count = 7;
}

/* cm_form_tid(): the agent's high 32 bits over the local comm ID as Linux stores it (a
 * big-endian u32 read on a little-endian host). */
static uint64_t
form_tid(const struct roce_cm *cm, uint32_t local_id)
{
	uint32_t le = (local_id >> 24) | ((local_id >> 8) & 0xFF00u) |
		((local_id << 8) & 0xFF0000u) | (local_id << 24);

	return (uint64_t)cm->conf.hi_tid << 32 | le;
}

static void
send_raw(struct roce_cm *cm, const struct roce_cm_addr *dest, const uint8_t *mad,
		int retry)
{
	unsigned int slot = cm_attr_slot(cm_get_be16(mad + 16));

	if (cm->ops.send(cm->ctx, dest, mad) != 0) {
		cm_count(cm, ROCE_CM_CNT_SEND_FAILED);
		return;
	}
	if (slot < ROCE_CM_NB_ATTRS) {
		cm->st.tx[slot]++;
		if (retry)
			cm->st.tx_retries[slot]++;
	}
}

/* Build @m into @out and send it. Every message built here has its fields in range. */
static int
send_msg(struct roce_cm *cm, const struct roce_cm_addr *dest, const struct roce_cm_msg *m,
		uint8_t *out)
{
	uint8_t buf[ROCE_MAD_SIZE];
	int rc;

	if (out == NULL)
		out = buf;
	rc = roce_cm_build(m, out, ROCE_MAD_SIZE);
	if (rc < 0)
		return -EINVAL;
	send_raw(cm, dest, out, 0);
	return 0;
}

/* Post a message that awaits an answer: sent now, resent on its timer. */
static int
post_msg(struct roce_cm_conn *c, const struct roce_cm_msg *m, uint64_t timeout_ns,
		uint64_t now)
{
	uint8_t buf[ROCE_MAD_SIZE];

	if (roce_cm_build(m, buf, sizeof(buf)) < 0)
		return -EINVAL;
	memcpy(c->msg, buf, sizeof(buf));
	c->msg_attr = m->hdr.attr_id;
	c->msg_pending = 1;
	c->retries_left = c->max_cm_retries;
	c->msg_timeout_ns = timeout_ns;
	c->deadline = now + timeout_ns;
	send_raw(c->cm, &c->peer, c->msg, 0);
	return 0;
}

/* ib_cancel_mad() */
static void
cancel_msg(struct roce_cm_conn *c)
{
	c->msg_pending = 0;
	if (c->state != ROCE_CM_TIMEWAIT)
		c->deadline = UINT64_MAX;
}

/* Send an answer (RTU, MRA, DREP) and keep it for duplicates. */
static int
send_resp(struct roce_cm_conn *c, const struct roce_cm_msg *m)
{
	int rc = send_msg(c->cm, &c->peer, m, c->resp);

	if (rc == 0)
		c->resp_attr = m->hdr.attr_id;
	return rc;
}

static void
resend_resp(struct roce_cm_conn *c, uint16_t attr)
{
	if (c->resp_attr == attr)
		send_raw(c->cm, &c->peer, c->resp, 1);
}

/* cm_enter_timewait(): out of the tables, the timer on the ACK timeout. */
static void
enter_timewait(struct roce_cm_conn *c, uint64_t now)
{
	c->in_tables = 0;
	c->msg_pending = 0;
	cm_set_state(c, ROCE_CM_TIMEWAIT);
	c->deadline = now + roce_cm_timeout_ns(c->av_timeout);
}

/* cm_reset_to_idle(): the slot is freed once the event about it (if any) is told. */
static void
reset_to_idle(struct roce_cm_conn *c)
{
	c->in_tables = 0;
	c->msg_pending = 0;
	c->deadline = UINT64_MAX;
	cm_set_state(c, ROCE_CM_IDLE);
}

/* Tell the user @ev about @c (unless it let the handle go); then a released handle is the
 * library's, and an idle connection is freed. The callback may have destroyed @c and
 * even reused its slot: the generation says. */
static void
emit(struct roce_cm_conn *c, struct roce_cm_event *ev)
{
	struct roce_cm *cm = c->cm;
	uint32_t gen = c->gen;

	if (!c->orphan && cm->ops.event != NULL) {
		ev->conn = c;
		ev->conn_ctx = c->ctx;
		cm->ops.event(cm->ctx, ev);
	}
	if (!c->used || c->gen != gen)
		return;
	if (ev->released) {
		c->orphan = 1;
		c->ctx = NULL;
	}
	if (c->state == ROCE_CM_IDLE)
		cm_conn_free(c);
}

/* The user let @c go: no more events; an idle one is freed now. */
static void
release(struct roce_cm_conn *c)
{
	c->orphan = 1;
	c->ctx = NULL;
	if (c->state == ROCE_CM_IDLE)
		cm_conn_free(c);
}

static void
event_init(struct roce_cm_event *ev, enum roce_cm_event_type type)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
}

/* cm_issue_rej(): a REJ answering a received message, with no connection of ours. */
static void
issue_rej(struct roce_cm *cm, const struct roce_cm_addr *src, uint64_t tid,
		uint32_t their_id, uint32_t our_id, uint16_t reason, uint8_t msg_rejected)
{
	struct roce_cm_msg m;

	memset(&m, 0, sizeof(m));
	roce_cm_hdr_init(&m.hdr, ROCE_CM_ATTR_REJ, tid);
	m.rej.remote_comm_id = their_id;
	m.rej.local_comm_id = our_id;
	m.rej.message_rejected = msg_rejected;
	m.rej.reason = reason;
	send_msg(cm, src, &m, NULL);
}

/* cm_format_rej(): what the connection's state says the REJ rejects. */
static void
format_rej(const struct roce_cm_conn *c, struct roce_cm_msg *m, uint16_t reason,
		const void *ari, size_t ari_len, const void *pdata, size_t pdata_len)
{
	memset(m, 0, sizeof(*m));
	roce_cm_hdr_init(&m->hdr, ROCE_CM_ATTR_REJ, c->tid);
	m->rej.remote_comm_id = c->remote_id;
	m->rej.local_comm_id = c->local_id;
	switch (c->state) {
	case ROCE_CM_REQ_RCVD:
		m->rej.local_comm_id = 0;
		m->rej.message_rejected = ROCE_CM_MSG_REF_REQ;
		break;
	case ROCE_CM_MRA_REQ_SENT:
		m->rej.message_rejected = ROCE_CM_MSG_REF_REQ;
		break;
	case ROCE_CM_REP_RCVD:
	case ROCE_CM_MRA_REP_SENT:
		m->rej.message_rejected = ROCE_CM_MSG_REF_REP;
		break;
	default:
		m->rej.message_rejected = ROCE_CM_MSG_REF_OTHER;
		break;
	}
	m->rej.reason = reason;
	if (ari != NULL && ari_len != 0) {
		m->rej.ari_length = (uint8_t)ari_len;
		memcpy(m->rej.ari, ari, ari_len);
	}
	if (pdata != NULL && pdata_len != 0)
		memcpy(m->rej.private_data, pdata, pdata_len);
}

static void
format_dreq(const struct roce_cm_conn *c, struct roce_cm_msg *m, const void *pdata,
		size_t pdata_len)
{
	memset(m, 0, sizeof(*m));
	roce_cm_hdr_init(&m->hdr, ROCE_CM_ATTR_DREQ, form_tid(c->cm, c->local_id));
	m->dreq.local_comm_id = c->local_id;
	m->dreq.remote_comm_id = c->remote_id;
	m->dreq.remote_qpn_eecn = c->remote_qpn;
	if (pdata != NULL && pdata_len != 0)
		memcpy(m->dreq.private_data, pdata, pdata_len);
}

static void
format_drep(const struct roce_cm_conn *c, struct roce_cm_msg *m, uint64_t tid,
		const void *pdata, size_t pdata_len)
{
	memset(m, 0, sizeof(*m));
	roce_cm_hdr_init(&m->hdr, ROCE_CM_ATTR_DREP, tid);
	m->drep.local_comm_id = c->local_id;
	m->drep.remote_comm_id = c->remote_id;
	if (pdata != NULL && pdata_len != 0)
		memcpy(m->drep.private_data, pdata, pdata_len);
}

/* ib_send_cm_dreq() in ESTABLISHED: DREQ_SENT. */
static int
send_dreq(struct roce_cm_conn *c, const void *pdata, size_t pdata_len, uint64_t now)
{
	struct roce_cm_msg m;

	format_dreq(c, &m, pdata, pdata_len);
	if (post_msg(c, &m, c->timeout_ns, now) != 0)
		return -EINVAL;
	cm_set_state(c, ROCE_CM_DREQ_SENT);
	return 0;
}

static int
mtu_ok(uint8_t mtu)
{
	return mtu >= 1 && mtu <= 5;
}

/* ------------------------------------------------------------------ received messages */

/* cm_dup_req_handler(); a REP_SENT connection also resends its REP at once (Linux leaves
 * it to the REP's own timer): a lost REP is recovered at the peer's next REQ. */
static void
dup_req(struct roce_cm_conn *c)
{
	c->cm->st.rx_dup[cm_attr_slot(ROCE_CM_ATTR_REQ)]++;
	cm_count(c->cm, ROCE_CM_CNT_DUPLICATE);
	switch (c->state) {
	case ROCE_CM_MRA_REQ_SENT:
		resend_resp(c, ROCE_CM_ATTR_MRA);
		break;
	case ROCE_CM_REP_SENT:
	case ROCE_CM_MRA_REP_RCVD:
		if (c->msg_pending && c->msg_attr == ROCE_CM_ATTR_REP)
			send_raw(c->cm, &c->peer, c->msg, 1);
		break;
	default:
		break;
	}
}

static void
fill_req_info(struct roce_cm_req_info *ri, const struct roce_cm_req *req,
		const struct roce_cm_addr *src, void *listen_ctx)
{
	memset(ri, 0, sizeof(*ri));
	ri->listen_ctx = listen_ctx;
	ri->service_id = req->service_id;
	if (roce_cma_service_id_parse(req->service_id, &ri->port_space, &ri->service_port) != 0) {
		ri->port_space = 0;
		ri->service_port = 0;
	}
	ri->cma_valid = roce_cma_hdr_parse(&ri->cma, req->private_data,
			sizeof(req->private_data)) == 0;
	ri->remote_ca_guid = req->local_ca_guid;
	ri->remote_comm_id = req->local_comm_id;
	ri->remote_qpn = req->local_qpn;
	ri->starting_psn = req->starting_psn;
	ri->responder_resources = req->initiator_depth;
	ri->initiator_depth = req->responder_resources;
	ri->retry_count = req->retry_count;
	ri->rnr_retry_count = req->rnr_retry_count;
	ri->path_mtu = req->path_mtu;
	ri->flow_control = req->e2e_flow_control;
	ri->srq = req->srq;
	ri->local_ack_timeout = req->primary.local_ack_timeout;
	ri->src = *src;
}

/* cm_req_handler() with cm_match_req(), and rdma_cm's checks of an RDMA_PS_TCP REQ. */
static void
req_handler(struct roce_cm *cm, const struct roce_cm_addr *src, const struct roce_cm_msg *m,
		uint64_t now)
{
	const struct roce_cm_req *req = &m->req;
	struct roce_cm_req_info ri;
	struct roce_cm_event ev;
	struct roce_cm_conn *c;
	struct cm_listener *l;
	uint8_t t;

	(void)now;
	c = cm_find_remote_id(cm, req->local_comm_id, req->local_ca_guid);
	if (c != NULL) {
		dup_req(c);
		return;
	}
	c = cm_find_remote_qpn(cm, req->local_qpn, req->local_ca_guid);
	if (c != NULL) {
		/* The peer reuses a QP a live connection of ours has: that one is stale. */
		cm_count(cm, ROCE_CM_CNT_STALE);
		issue_rej(cm, src, m->hdr.tid, req->local_comm_id, 0, ROCE_CM_REJ_STALE_CONN,
				ROCE_CM_MSG_REF_REQ);
		if (c->state == ROCE_CM_ESTABLISHED)
			send_dreq(c, NULL, 0, now);
		return;
	}
	l = cm_find_listener(cm, req->service_id);
	if (l == NULL) {
		cm_count(cm, ROCE_CM_CNT_NO_LISTENER);
		issue_rej(cm, src, m->hdr.tid, req->local_comm_id, 0,
				ROCE_CM_REJ_INVALID_SERVICE_ID, ROCE_CM_MSG_REF_REQ);
		return;
	}
	if (req->transport_type != ROCE_CM_TRANSPORT_RC || req->ext_transport_type != 0) {
		/* rdma_cm's cma_check_req_qp_type() fails it; ib_cm rejects "consumer defined". */
		cm_count(cm, ROCE_CM_CNT_BAD_REQ);
		issue_rej(cm, src, m->hdr.tid, req->local_comm_id, 0,
				ROCE_CM_REJ_CONSUMER_DEFINED, ROCE_CM_MSG_REF_REQ);
		return;
	}
	if (!mtu_ok(req->path_mtu)) {
		cm_count(cm, ROCE_CM_CNT_BAD_REQ);
		issue_rej(cm, src, m->hdr.tid, req->local_comm_id, 0, ROCE_CM_REJ_INVALID_MTU,
				ROCE_CM_MSG_REF_REQ);
		return;
	}
	if (l->pending >= l->backlog) {
		cm_count(cm, ROCE_CM_CNT_BACKLOG_FULL);
		l->dropped++;
		return;
	}
	c = cm_conn_alloc(cm);
	if (c == NULL) {
		cm_count(cm, ROCE_CM_CNT_CONNS_FULL);
		l->dropped++;
		return;
	}
	c->active = 0;
	c->listener = (int32_t)(l - cm->listeners);
	c->ctx = l->ctx;
	c->remote_id = req->local_comm_id;
	c->remote_ca_guid = req->local_ca_guid;
	c->service_id = req->service_id;
	c->tid = m->hdr.tid;
	c->timeout_ns = roce_cm_timeout_ns(req->local_cm_response_timeout);
	c->max_cm_retries = req->max_cm_retries;
	c->remote_qpn = req->local_qpn;
	c->initiator_depth = req->responder_resources;
	c->responder_resources = req->initiator_depth;
	c->path_mtu = req->path_mtu;
	c->sq_psn = req->starting_psn;
	c->retry_count = req->retry_count;
	c->rnr_retry_count = req->rnr_retry_count;
	/* The path's packet life time is the ACK timeout less one, av.timeout one more. */
	t = req->primary.local_ack_timeout;
	c->av_timeout = (uint8_t)(t - (t > 0) + 1);
	c->peer = *src;
	memcpy(c->route.local_gid, req->primary.remote_gid, 16);
	memcpy(c->route.remote_gid, req->primary.local_gid, 16);
	c->route.flow_label = req->primary.flow_label;
	c->route.traffic_class = req->primary.traffic_class;
	c->route.hop_limit = req->primary.hop_limit;
	c->route.sl = req->primary.sl;
	c->route.packet_rate = req->primary.packet_rate;
	c->route.packet_life_time = (uint8_t)(t - (t > 0));
	c->route.path_mtu = req->path_mtu;
	c->route.pkey = req->pkey;
	c->in_tables = 1;
	cm_set_state(c, ROCE_CM_REQ_RCVD);
	l->reqs++;

	fill_req_info(&ri, req, src, l->ctx);
	event_init(&ev, ROCE_CM_EV_REQ);
	ev.req = &ri;
	ev.private_data = req->private_data;
	ev.private_data_len = sizeof(req->private_data);
	cm_fill_qp_attr(c, &ev.qp);
	emit(c, &ev);
}

/* cm_acquire_mraed_id() and cm_mra_handler(): the answer's wait gets the MRA's time. */
static void
mra_handler(struct roce_cm *cm, const struct roce_cm_addr *src, const struct roce_cm_msg *m,
		uint64_t now)
{
	const struct roce_cm_mra *mra = &m->mra;
	struct roce_cm_conn *c;
	uint64_t timeout;

	(void)src;
	if (mra->message_mraed == ROCE_CM_MSG_REF_REQ)
		c = cm_conn_lookup(cm, mra->remote_comm_id, 0);
	else
		c = cm_conn_lookup(cm, mra->remote_comm_id, mra->local_comm_id);
	if (c == NULL) {
		cm_count(cm, ROCE_CM_CNT_UNKNOWN_CONN);
		return;
	}
	timeout = roce_cm_timeout_ns(mra->service_timeout) + roce_cm_timeout_ns(c->av_timeout);
	switch (c->state) {
	case ROCE_CM_REQ_SENT:
		if (mra->message_mraed != ROCE_CM_MSG_REF_REQ || !c->msg_pending)
			goto bad;
		cm_set_state(c, ROCE_CM_MRA_REQ_RCVD);
		break;
	case ROCE_CM_REP_SENT:
		if (mra->message_mraed != ROCE_CM_MSG_REF_REP || !c->msg_pending)
			goto bad;
		cm_set_state(c, ROCE_CM_MRA_REP_RCVD);
		break;
	case ROCE_CM_MRA_REQ_RCVD:
	case ROCE_CM_MRA_REP_RCVD:
		cm->st.rx_dup[cm_attr_slot(ROCE_CM_ATTR_MRA)]++;
		cm_count(cm, ROCE_CM_CNT_DUPLICATE);
		return;
	default:
		goto bad;
	}
	/* ib_modify_mad(): the wait starts again, with the new timeout for the resends. */
	c->msg_timeout_ns = timeout;
	c->deadline = now + timeout;
	return;
bad:
	cm_count(cm, ROCE_CM_CNT_BAD_STATE);
}

/* cm_acquire_rejected_id() */
static struct roce_cm_conn *
rejected_conn(struct roce_cm *cm, const struct roce_cm_rej *rej)
{
	struct roce_cm_conn *c;

	if (rej->reason == ROCE_CM_REJ_TIMEOUT) {
		/* The ARI is the rejecting side's CA GUID. */
		c = cm_find_remote_id(cm, rej->local_comm_id, cm_get_be64(rej->ari));
		return c != NULL ? cm_conn_lookup(cm, c->local_id, rej->local_comm_id) : NULL;
	}
	if (rej->message_rejected == ROCE_CM_MSG_REF_REQ)
		return cm_conn_lookup(cm, rej->remote_comm_id, 0);
	return cm_conn_lookup(cm, rej->remote_comm_id, rej->local_comm_id);
}

/* cm_rej_handler() */
static void
rej_handler(struct roce_cm *cm, const struct roce_cm_addr *src, const struct roce_cm_msg *m,
		uint64_t now)
{
	const struct roce_cm_rej *rej = &m->rej;
	struct roce_cm_event ev;
	struct roce_cm_conn *c;

	(void)src;
	c = rejected_conn(cm, rej);
	if (c == NULL) {
		cm_count(cm, ROCE_CM_CNT_UNKNOWN_CONN);
		return;
	}
	switch (c->state) {
	case ROCE_CM_REQ_SENT:
	case ROCE_CM_MRA_REQ_RCVD:
	case ROCE_CM_REP_SENT:
	case ROCE_CM_MRA_REP_RCVD:
	case ROCE_CM_REQ_RCVD:
	case ROCE_CM_MRA_REQ_SENT:
		if (rej->reason == ROCE_CM_REJ_STALE_CONN)
			enter_timewait(c, now);
		else
			reset_to_idle(c);
		break;
	case ROCE_CM_DREQ_SENT:
	case ROCE_CM_REP_RCVD:
	case ROCE_CM_MRA_REP_SENT:
	case ROCE_CM_ESTABLISHED:
		enter_timewait(c, now);
		break;
	default:
		cm_count(cm, ROCE_CM_CNT_BAD_STATE);
		return;
	}
	event_init(&ev, ROCE_CM_EV_REJECTED);
	ev.released = 1;
	ev.rej_reason = rej->reason;
	ev.rej_ari_len = rej->ari_length;
	ev.rej_ari = rej->ari;
	ev.private_data = rej->private_data;
	ev.private_data_len = sizeof(rej->private_data);
	emit(c, &ev);
}

/* cm_dup_rep_handler(): the RTU or MRA again. */
static void
dup_rep(struct roce_cm *cm, const struct roce_cm_rep *rep)
{
	struct roce_cm_conn *c = cm_conn_lookup(cm, rep->remote_comm_id, rep->local_comm_id);

	if (c == NULL) {
		cm_count(cm, ROCE_CM_CNT_UNKNOWN_CONN);
		return;
	}
	cm->st.rx_dup[cm_attr_slot(ROCE_CM_ATTR_REP)]++;
	cm_count(cm, ROCE_CM_CNT_DUPLICATE);
	if (c->state == ROCE_CM_ESTABLISHED)
		resend_resp(c, ROCE_CM_ATTR_RTU);
	else if (c->state == ROCE_CM_MRA_REP_SENT)
		resend_resp(c, ROCE_CM_ATTR_MRA);
}

/* cm_rep_handler() */
static void
rep_handler(struct roce_cm *cm, const struct roce_cm_addr *src, const struct roce_cm_msg *m,
		uint64_t now)
{
	const struct roce_cm_rep *rep = &m->rep;
	struct roce_cm_event ev;
	struct roce_cm_conn *c, *s;

	c = cm_conn_lookup(cm, rep->remote_comm_id, 0);
	if (c == NULL) {
		dup_rep(cm, rep);
		return;
	}
	if (c->state != ROCE_CM_REQ_SENT && c->state != ROCE_CM_MRA_REQ_RCVD) {
		cm_count(cm, ROCE_CM_CNT_BAD_STATE);
		return;
	}
	if (cm_find_remote_id(cm, rep->local_comm_id, rep->local_ca_guid) != NULL) {
		cm->st.rx_dup[cm_attr_slot(ROCE_CM_ATTR_REP)]++;
		cm_count(cm, ROCE_CM_CNT_DUPLICATE);
		return;
	}
	s = cm_find_remote_qpn(cm, rep->local_qpn, rep->local_ca_guid);
	if (s != NULL) {
		cm_count(cm, ROCE_CM_CNT_STALE);
		issue_rej(cm, src, m->hdr.tid, rep->local_comm_id, rep->remote_comm_id,
				ROCE_CM_REJ_STALE_CONN, ROCE_CM_MSG_REF_REP);
		if (s->state == ROCE_CM_ESTABLISHED)
			send_dreq(s, NULL, 0, now);
		return;
	}
	c->remote_id = rep->local_comm_id;
	c->remote_ca_guid = rep->local_ca_guid;
	c->remote_qpn = rep->local_qpn;
	c->in_tables = 1;
	c->initiator_depth = rep->responder_resources;
	c->responder_resources = rep->initiator_depth;
	c->sq_psn = rep->starting_psn;
	c->rnr_retry_count = rep->rnr_retry_count;
	c->av_timeout = roce_cm_ack_timeout(rep->target_ack_delay, (uint8_t)(c->av_timeout - 1));
	cancel_msg(c);
	cm_set_state(c, ROCE_CM_REP_RCVD);

	event_init(&ev, ROCE_CM_EV_REP);
	ev.private_data = rep->private_data;
	ev.private_data_len = sizeof(rep->private_data);
	cm_fill_qp_attr(c, &ev.qp);
	emit(c, &ev);
}

static void
established(struct roce_cm_conn *c, const uint8_t *pdata, size_t pdata_len)
{
	struct roce_cm_event ev;

	cancel_msg(c);
	cm_set_state(c, ROCE_CM_ESTABLISHED);
	c->cm->st.established++;
	event_init(&ev, ROCE_CM_EV_ESTABLISHED);
	ev.private_data = pdata;
	ev.private_data_len = pdata_len;
	cm_fill_qp_attr(c, &ev.qp);
	emit(c, &ev);
}

/* cm_rtu_handler() */
static void
rtu_handler(struct roce_cm *cm, const struct roce_cm_addr *src, const struct roce_cm_msg *m,
		uint64_t now)
{
	const struct roce_cm_rtu *rtu = &m->rtu;
	struct roce_cm_conn *c;

	(void)src;
	(void)now;
	c = cm_conn_lookup(cm, rtu->remote_comm_id, rtu->local_comm_id);
	if (c == NULL) {
		cm_count(cm, ROCE_CM_CNT_UNKNOWN_CONN);
		return;
	}
	if (c->state != ROCE_CM_REP_SENT && c->state != ROCE_CM_MRA_REP_RCVD) {
		cm->st.rx_dup[cm_attr_slot(ROCE_CM_ATTR_RTU)]++;
		cm_count(cm, ROCE_CM_CNT_DUPLICATE);
		return;
	}
	established(c, rtu->private_data, sizeof(rtu->private_data));
}

/* cm_issue_drep(): a DREQ for no connection of ours is answered all the same. */
static void
issue_drep(struct roce_cm *cm, const struct roce_cm_addr *src, const struct roce_cm_msg *m)
{
	struct roce_cm_msg r;

	memset(&r, 0, sizeof(r));
	roce_cm_hdr_init(&r.hdr, ROCE_CM_ATTR_DREP, m->hdr.tid);
	r.drep.remote_comm_id = m->dreq.local_comm_id;
	r.drep.local_comm_id = m->dreq.remote_comm_id;
	send_msg(cm, src, &r, NULL);
}

/* cm_dreq_handler() */
static void
dreq_handler(struct roce_cm *cm, const struct roce_cm_addr *src, const struct roce_cm_msg *m,
		uint64_t now)
{
	const struct roce_cm_dreq *dreq = &m->dreq;
	struct roce_cm_event ev;
	struct roce_cm_conn *c;

	(void)now;
	c = cm_conn_lookup(cm, dreq->remote_comm_id, dreq->local_comm_id);
	if (c == NULL) {
		cm->st.rx_dup[cm_attr_slot(ROCE_CM_ATTR_DREQ)]++;
		cm_count(cm, ROCE_CM_CNT_DREQ_UNKNOWN);
		issue_drep(cm, src, m);
		return;
	}
	if (c->local_qpn != dreq->remote_qpn_eecn) {
		cm_count(cm, ROCE_CM_CNT_DREQ_QPN);
		return;
	}
	switch (c->state) {
	case ROCE_CM_REP_SENT:
	case ROCE_CM_DREQ_SENT:
	case ROCE_CM_MRA_REP_RCVD:
	case ROCE_CM_ESTABLISHED:
		cancel_msg(c);
		break;
	case ROCE_CM_TIMEWAIT: {
		struct roce_cm_msg r;

		cm->st.rx_dup[cm_attr_slot(ROCE_CM_ATTR_DREQ)]++;
		cm_count(cm, ROCE_CM_CNT_DUPLICATE);
		if (c->resp_attr == ROCE_CM_ATTR_DREP) {
			/* The DREP we sent, for this DREQ's transaction. */
			cm_put_be64(c->resp + 8, m->hdr.tid);
			send_raw(cm, &c->peer, c->resp, 1);
		} else {
			format_drep(c, &r, m->hdr.tid, NULL, 0);
			send_resp(c, &r);
		}
		return;
	}
	case ROCE_CM_DREQ_RCVD:
		cm->st.rx_dup[cm_attr_slot(ROCE_CM_ATTR_DREQ)]++;
		cm_count(cm, ROCE_CM_CNT_DUPLICATE);
		return;
	default:
		cm_count(cm, ROCE_CM_CNT_BAD_STATE);
		return;
	}
	cm_set_state(c, ROCE_CM_DREQ_RCVD);
	c->tid = m->hdr.tid;
	event_init(&ev, ROCE_CM_EV_DREQ);
	ev.private_data = dreq->private_data;
	ev.private_data_len = sizeof(dreq->private_data);
	emit(c, &ev);
}

/* cm_drep_handler() */
static void
drep_handler(struct roce_cm *cm, const struct roce_cm_addr *src, const struct roce_cm_msg *m,
		uint64_t now)
{
	const struct roce_cm_drep *drep = &m->drep;
	struct roce_cm_event ev;
	struct roce_cm_conn *c;

	(void)src;
	c = cm_conn_lookup(cm, drep->remote_comm_id, drep->local_comm_id);
	if (c == NULL) {
		cm_count(cm, ROCE_CM_CNT_UNKNOWN_CONN);
		return;
	}
	if (c->state != ROCE_CM_DREQ_SENT && c->state != ROCE_CM_DREQ_RCVD) {
		if (c->state == ROCE_CM_TIMEWAIT) {
			cm->st.rx_dup[cm_attr_slot(ROCE_CM_ATTR_DREP)]++;
			cm_count(cm, ROCE_CM_CNT_DUPLICATE);
		} else {
			cm_count(cm, ROCE_CM_CNT_BAD_STATE);
		}
		return;
	}
	enter_timewait(c, now);
	event_init(&ev, ROCE_CM_EV_DISCONNECTED);
	ev.private_data = drep->private_data;
	ev.private_data_len = sizeof(drep->private_data);
	emit(c, &ev);
}

/* cm_sidr_req_handler() with no SIDR listener: status "unsupported". */
static void
sidr_req_handler(struct roce_cm *cm, const struct roce_cm_addr *src,
		const struct roce_cm_msg *m, uint64_t now)
{
	struct roce_cm_msg r;

	(void)now;
	cm_count(cm, ROCE_CM_CNT_SIDR_REQ);
	memset(&r, 0, sizeof(r));
	roce_cm_hdr_init(&r.hdr, ROCE_CM_ATTR_SIDR_REP, m->hdr.tid);
	r.sidr_rep.request_id = m->sidr_req.request_id;
	r.sidr_rep.status = ROCE_CM_SIDR_UNSUPPORTED;
	r.sidr_rep.service_id = m->sidr_req.service_id;
	send_msg(cm, src, &r, NULL);
}

static void
sidr_rep_handler(struct roce_cm *cm, const struct roce_cm_addr *src,
		const struct roce_cm_msg *m, uint64_t now)
{
	(void)src;
	(void)m;
	(void)now;
	cm_count(cm, ROCE_CM_CNT_SIDR_REP);
}

/* cm_lap_handler()/cm_apr_handler() on RoCE: "not supported for RoCE link layer". */
static void
alt_path_handler(struct roce_cm *cm, const struct roce_cm_addr *src,
		const struct roce_cm_msg *m, uint64_t now)
{
	(void)src;
	(void)m;
	(void)now;
	cm_count(cm, ROCE_CM_CNT_ALT_PATH);
}

typedef void (*cm_handler)(struct roce_cm *cm, const struct roce_cm_addr *src,
		const struct roce_cm_msg *m, uint64_t now);

/* By attribute ID - ROCE_CM_ATTR_REQ, as cm_recv_handler()'s switch. */
static const cm_handler handlers[ROCE_CM_NB_ATTRS] = {
	[ROCE_CM_ATTR_REQ - ROCE_CM_ATTR_REQ] = req_handler,
	[ROCE_CM_ATTR_MRA - ROCE_CM_ATTR_REQ] = mra_handler,
	[ROCE_CM_ATTR_REJ - ROCE_CM_ATTR_REQ] = rej_handler,
	[ROCE_CM_ATTR_REP - ROCE_CM_ATTR_REQ] = rep_handler,
	[ROCE_CM_ATTR_RTU - ROCE_CM_ATTR_REQ] = rtu_handler,
	[ROCE_CM_ATTR_DREQ - ROCE_CM_ATTR_REQ] = dreq_handler,
	[ROCE_CM_ATTR_DREP - ROCE_CM_ATTR_REQ] = drep_handler,
	[ROCE_CM_ATTR_SIDR_REQ - ROCE_CM_ATTR_REQ] = sidr_req_handler,
	[ROCE_CM_ATTR_SIDR_REP - ROCE_CM_ATTR_REQ] = sidr_rep_handler,
	[ROCE_CM_ATTR_LAP - ROCE_CM_ATTR_REQ] = alt_path_handler,
	[ROCE_CM_ATTR_APR - ROCE_CM_ATTR_REQ] = alt_path_handler,
};

void
roce_cm_input(struct roce_cm *cm, const struct roce_cm_addr *src, const void *mad,
		size_t len, uint64_t now)
{
	struct roce_cm_msg m;
	enum roce_cm_verdict v;
	unsigned int slot;

	cm->st.rx_mads++;
	v = roce_cm_parse(&m, mad, len);
	if (v != ROCE_CM_OK) {
		cm_count(cm, ROCE_CM_CNT_VERDICT(v));
		return;
	}
	/* roce_cm_parse() takes only the attributes of the table. */
	slot = cm_attr_slot(m.hdr.attr_id);
	cm->st.rx[slot]++;
	handlers[slot](cm, src, &m, now);
}

/* ------------------------------------------------------------------ timers */

/* The MAD layer's timeout of a message with no retries left: cm_process_send_error(). */
static void
msg_timed_out(struct roce_cm_conn *c, uint64_t now)
{
	struct roce_cm_event ev;

	switch (c->state) {
	case ROCE_CM_REQ_SENT:
	case ROCE_CM_MRA_REQ_RCVD:
	case ROCE_CM_REP_SENT:
	case ROCE_CM_MRA_REP_RCVD:
		event_init(&ev, ROCE_CM_EV_TIMEOUT);
		ev.timed_out_attr = c->msg_attr;
		ev.status = -ETIMEDOUT;
		ev.released = 1;
		cm_count(c->cm, c->msg_attr == ROCE_CM_ATTR_REQ ? ROCE_CM_CNT_TIMEOUT_REQ :
				ROCE_CM_CNT_TIMEOUT_REP);
		reset_to_idle(c);
		emit(c, &ev);
		break;
	case ROCE_CM_DREQ_SENT:
		cm_count(c->cm, ROCE_CM_CNT_TIMEOUT_DREQ);
		enter_timewait(c, now);
		event_init(&ev, ROCE_CM_EV_DISCONNECTED);
		ev.status = -ETIMEDOUT;
		emit(c, &ev);
		break;
	default:
		cancel_msg(c);
		break;
	}
}

static void
conn_timer(struct roce_cm_conn *c, uint64_t now)
{
	struct roce_cm_event ev;

	if (c->state == ROCE_CM_TIMEWAIT) {
		/* cm_timewait_handler() */
		reset_to_idle(c);
		event_init(&ev, ROCE_CM_EV_TIMEWAIT_EXIT);
		ev.released = 1;
		emit(c, &ev);
		return;
	}
	if (!c->msg_pending) {
		c->deadline = UINT64_MAX;
		return;
	}
	if (c->retries_left > 0) {
		c->retries_left--;
		c->deadline = now + c->msg_timeout_ns;
		send_raw(c->cm, &c->peer, c->msg, 1);
		return;
	}
	msg_timed_out(c, now);
}

void
roce_cm_tick(struct roce_cm *cm, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < cm->conf.max_conns; i++) {
		struct roce_cm_conn *c = &cm->conns[i];

		if (c->used && c->deadline <= now)
			conn_timer(c, now);
	}
}

/* ------------------------------------------------------------------ the user's calls */

int
roce_cm_connect(struct roce_cm *cm, const struct roce_cm_connect_params *p, void *ctx,
		uint64_t now, struct roce_cm_conn **out)
{
	const struct roce_cm_route *r = &p->route;
	struct roce_cm_conn *c;
	struct roce_cm_msg m;
	struct roce_cm_req *req = &m.req;

	if (p->private_data_len > ROCE_CM_REQ_PDATA_LEN ||
			(p->private_data == NULL && p->private_data_len != 0) ||
			!mtu_ok(r->path_mtu) || r->packet_life_time > 31 ||
			p->remote_cm_response_timeout > 31 || p->local_cm_response_timeout > 31)
		return -EINVAL;
	c = cm_conn_alloc(cm);
	if (c == NULL)
		return -ENOSPC;

	memset(&m, 0, sizeof(m));
	roce_cm_hdr_init(&m.hdr, ROCE_CM_ATTR_REQ, form_tid(cm, c->local_id));
	req->local_comm_id = c->local_id;
	req->service_id = p->service_id;
	req->local_ca_guid = cm->conf.ca_guid;
	req->local_qpn = p->qp_num;
	req->responder_resources = p->responder_resources;
	req->initiator_depth = p->initiator_depth;
	req->remote_cm_response_timeout = p->remote_cm_response_timeout;
	req->transport_type = ROCE_CM_TRANSPORT_RC;
	req->e2e_flow_control = p->flow_control;
	req->starting_psn = p->starting_psn;
	req->local_cm_response_timeout = p->local_cm_response_timeout;
	req->retry_count = p->retry_count;
	req->pkey = r->pkey;
	req->path_mtu = r->path_mtu;
	req->rnr_retry_count = p->rnr_retry_count;
	req->max_cm_retries = p->max_cm_retries;
	req->srq = p->srq;
	memcpy(req->primary.local_gid, r->local_gid, 16);
	memcpy(req->primary.remote_gid, r->remote_gid, 16);
	/* RoCE paths have no LIDs; a routed one (hop limit over 1) says "permissive". */
	req->primary.local_lid = r->hop_limit <= 1 ? 0 : 0xFFFF;
	req->primary.remote_lid = r->hop_limit <= 1 ? 0 : 0xFFFF;
	req->primary.flow_label = r->flow_label;
	req->primary.packet_rate = r->packet_rate;
	req->primary.traffic_class = r->traffic_class;
	req->primary.hop_limit = r->hop_limit;
	req->primary.sl = r->sl;
	req->primary.subnet_local = r->hop_limit <= 1;
	req->primary.local_ack_timeout = roce_cm_ack_timeout(cm->conf.ack_delay,
			r->packet_life_time);
	if (p->private_data_len != 0)
		memcpy(req->private_data, p->private_data, p->private_data_len);

	c->active = 1;
	c->ctx = ctx;
	c->service_id = p->service_id;
	c->tid = m.hdr.tid;
	c->peer = p->dest;
	c->route = *r;
	c->timeout_ns = 2 * roce_cm_timeout_ns(r->packet_life_time) +
		roce_cm_timeout_ns(p->remote_cm_response_timeout);
	c->max_cm_retries = p->max_cm_retries;
	c->initiator_depth = p->initiator_depth;
	c->responder_resources = p->responder_resources;
	c->retry_count = p->retry_count;
	c->rnr_retry_count = p->rnr_retry_count;
	c->path_mtu = r->path_mtu;
	c->local_qpn = p->qp_num;
	c->rq_psn = p->starting_psn;
	c->av_timeout = (uint8_t)(r->packet_life_time + 1);
	/* Every field's width is checked by the build. */
	if (post_msg(c, &m, c->timeout_ns, now) != 0) {
		cm_conn_free(c);
		return -EINVAL;
	}
	cm_set_state(c, ROCE_CM_REQ_SENT);
	*out = c;
	return 0;
}

int
roce_cm_accept(struct roce_cm_conn *c, const struct roce_cm_accept_params *p, uint64_t now)
{
	struct roce_cm_msg m;
	struct roce_cm_rep *rep = &m.rep;

	if (c->state != ROCE_CM_REQ_RCVD && c->state != ROCE_CM_MRA_REQ_SENT)
		return -EINVAL;
	if (p->private_data_len > ROCE_CM_REP_PDATA_LEN ||
			(p->private_data == NULL && p->private_data_len != 0))
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	roce_cm_hdr_init(&m.hdr, ROCE_CM_ATTR_REP, c->tid);
	rep->local_comm_id = c->local_id;
	rep->remote_comm_id = c->remote_id;
	rep->local_qpn = p->qp_num;
	rep->starting_psn = p->starting_psn;
	rep->responder_resources = p->responder_resources;
	rep->initiator_depth = p->initiator_depth;
	rep->target_ack_delay = c->cm->conf.ack_delay;
	rep->e2e_flow_control = p->flow_control;
	rep->rnr_retry_count = p->rnr_retry_count;
	rep->srq = p->srq;
	rep->local_ca_guid = c->cm->conf.ca_guid;
	if (p->private_data_len != 0)
		memcpy(rep->private_data, p->private_data, p->private_data_len);
	if (post_msg(c, &m, c->timeout_ns, now) != 0)
		return -EINVAL;
	cm_set_state(c, ROCE_CM_REP_SENT);
	c->initiator_depth = p->initiator_depth;
	c->responder_resources = p->responder_resources;
	c->rq_psn = p->starting_psn;
	c->local_qpn = p->qp_num;
	return 0;
}

int
roce_cm_reject(struct roce_cm_conn *c, uint16_t reason, const void *ari, size_t ari_len,
		const void *pdata, size_t pdata_len, uint64_t now)
{
	struct roce_cm_msg m;
	int timewait;

	if (ari_len > ROCE_CM_REJ_ARI_LEN || pdata_len > ROCE_CM_REJ_PDATA_LEN ||
			(ari == NULL && ari_len != 0) || (pdata == NULL && pdata_len != 0))
		return -EINVAL;
	switch (c->state) {
	case ROCE_CM_REQ_SENT:
	case ROCE_CM_MRA_REQ_RCVD:
	case ROCE_CM_REQ_RCVD:
	case ROCE_CM_MRA_REQ_SENT:
	case ROCE_CM_REP_RCVD:
	case ROCE_CM_MRA_REP_SENT:
		timewait = 0;
		break;
	case ROCE_CM_REP_SENT:
	case ROCE_CM_MRA_REP_RCVD:
		timewait = 1;
		break;
	default:
		return -EINVAL;
	}
	format_rej(c, &m, reason, ari, ari_len, pdata, pdata_len);
	send_msg(c->cm, &c->peer, &m, NULL);
	if (timewait)
		enter_timewait(c, now);
	else
		reset_to_idle(c);
	release(c);
	return 0;
}

int
roce_cm_mra(struct roce_cm_conn *c, uint8_t service_timeout, uint64_t now)
{
	enum roce_cm_state next;
	struct roce_cm_msg m;

	(void)now;
	if (service_timeout > 31)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	roce_cm_hdr_init(&m.hdr, ROCE_CM_ATTR_MRA, c->tid);
	if (c->state == ROCE_CM_REQ_RCVD) {
		next = ROCE_CM_MRA_REQ_SENT;
		m.mra.message_mraed = ROCE_CM_MSG_REF_REQ;
	} else if (c->state == ROCE_CM_REP_RCVD) {
		next = ROCE_CM_MRA_REP_SENT;
		m.mra.message_mraed = ROCE_CM_MSG_REF_REP;
	} else {
		return -EINVAL;
	}
	m.mra.local_comm_id = c->local_id;
	m.mra.remote_comm_id = c->remote_id;
	m.mra.service_timeout = service_timeout;
	if (send_resp(c, &m) != 0)
		return -EINVAL;
	c->service_timeout = service_timeout;
	cm_set_state(c, next);
	return 0;
}

int
roce_cm_rtu(struct roce_cm_conn *c, const void *pdata, size_t pdata_len, uint64_t now)
{
	struct roce_cm_msg m;

	(void)now;
	if (c->state != ROCE_CM_REP_RCVD && c->state != ROCE_CM_MRA_REP_SENT)
		return -EINVAL;
	if (pdata_len > ROCE_CM_RTU_PDATA_LEN || (pdata == NULL && pdata_len != 0))
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	roce_cm_hdr_init(&m.hdr, ROCE_CM_ATTR_RTU, c->tid);
	m.rtu.local_comm_id = c->local_id;
	m.rtu.remote_comm_id = c->remote_id;
	if (pdata_len != 0)
		memcpy(m.rtu.private_data, pdata, pdata_len);
	if (send_resp(c, &m) != 0)
		return -EINVAL;
	established(c, NULL, 0);
	return 0;
}

int
roce_cm_established(struct roce_cm_conn *c, uint64_t now)
{
	(void)now;
	if (c->state == ROCE_CM_ESTABLISHED)
		return -EISCONN;
	if (c->state != ROCE_CM_REP_SENT && c->state != ROCE_CM_MRA_REP_RCVD)
		return -EINVAL;
	established(c, NULL, 0);
	return 0;
}

int
roce_cm_disconnect(struct roce_cm_conn *c, const void *pdata, size_t pdata_len,
		uint64_t now)
{
	struct roce_cm_msg m;

	if (pdata == NULL && pdata_len != 0)
		return -EINVAL;
	if (c->state == ROCE_CM_ESTABLISHED) {
		if (pdata_len > ROCE_CM_DREQ_PDATA_LEN)
			return -EINVAL;
		return send_dreq(c, pdata, pdata_len, now);
	}
	if (c->state == ROCE_CM_DREQ_RCVD) {
		/* ib_send_cm_drep(): time wait first, then the DREP. */
		if (pdata_len > ROCE_CM_DREP_PDATA_LEN)
			return -EINVAL;
		enter_timewait(c, now);
		format_drep(c, &m, c->tid, pdata, pdata_len);
		send_resp(c, &m);
		return 0;
	}
	return -EINVAL;
}

/* cm_destroy_id() */
void
roce_cm_destroy(struct roce_cm_conn *c, uint64_t now)
{
	uint8_t guid[8];

	switch (c->state) {
	case ROCE_CM_REQ_SENT:
	case ROCE_CM_MRA_REQ_RCVD:
		cm_put_be64(guid, c->cm->conf.ca_guid);
		roce_cm_reject(c, ROCE_CM_REJ_TIMEOUT, guid, sizeof(guid), NULL, 0, now);
		return;
	case ROCE_CM_REQ_RCVD:
	case ROCE_CM_MRA_REQ_SENT:
	case ROCE_CM_REP_SENT:
	case ROCE_CM_MRA_REP_RCVD:
	case ROCE_CM_REP_RCVD:
	case ROCE_CM_MRA_REP_SENT:
		roce_cm_reject(c, ROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0, now);
		return;
	case ROCE_CM_ESTABLISHED:
		/* One DREQ, not resent: the connection goes to time wait at once. */
		send_dreq(c, NULL, 0, now);
		enter_timewait(c, now);
		break;
	case ROCE_CM_DREQ_SENT:
		enter_timewait(c, now);
		break;
	case ROCE_CM_DREQ_RCVD:
		roce_cm_disconnect(c, NULL, 0, now);
		break;
	default:
		break;
	}
	release(c);
}
