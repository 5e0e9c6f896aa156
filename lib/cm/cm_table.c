/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM's tables: connection slots and their local communication IDs, the lookups Linux
 * does in its xarray and rb-trees, listeners, counters, and what a show command reads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cm_sm_private.h"

#define CM_MAX_CONNS (1u << 20)
#define CM_MAX_LISTENERS 4096u

static const char *const counter_names[ROCE_CM_CNT_MAX] = {
	[ROCE_CM_BAD_LEN] = "bad_len",
	[ROCE_CM_BAD_BASE_VERSION] = "bad_base_version",
	[ROCE_CM_BAD_CLASS] = "bad_class",
	[ROCE_CM_BAD_CLASS_VERSION] = "bad_class_version",
	[ROCE_CM_BAD_METHOD] = "bad_method",
	[ROCE_CM_BAD_ATTR] = "bad_attr",
	[ROCE_CM_BAD_FIELD] = "bad_field",
	[ROCE_CM_CNT_ALT_PATH] = "alt_path",
	[ROCE_CM_CNT_SIDR_REQ] = "sidr_req",
	[ROCE_CM_CNT_SIDR_REP] = "sidr_rep",
	[ROCE_CM_CNT_UNKNOWN_CONN] = "unknown_conn",
	[ROCE_CM_CNT_BAD_STATE] = "bad_state",
	[ROCE_CM_CNT_DUPLICATE] = "duplicate",
	[ROCE_CM_CNT_NO_LISTENER] = "no_listener",
	[ROCE_CM_CNT_STALE] = "stale",
	[ROCE_CM_CNT_BAD_REQ] = "bad_req",
	[ROCE_CM_CNT_BACKLOG_FULL] = "backlog_full",
	[ROCE_CM_CNT_CONNS_FULL] = "conns_full",
	[ROCE_CM_CNT_DREQ_UNKNOWN] = "dreq_unknown",
	[ROCE_CM_CNT_DREQ_QPN] = "dreq_qpn",
	[ROCE_CM_CNT_TIMEOUT_REQ] = "timeout_req",
	[ROCE_CM_CNT_TIMEOUT_REP] = "timeout_rep",
	[ROCE_CM_CNT_TIMEOUT_DREQ] = "timeout_dreq",
	[ROCE_CM_CNT_SEND_FAILED] = "send_failed",
};

static const char *const state_names[ROCE_CM_STATE_MAX] = {
	[ROCE_CM_IDLE] = "IDLE",
	[ROCE_CM_REQ_SENT] = "REQ_SENT",
	[ROCE_CM_REQ_RCVD] = "REQ_RCVD",
	[ROCE_CM_MRA_REQ_SENT] = "MRA_REQ_SENT",
	[ROCE_CM_MRA_REQ_RCVD] = "MRA_REQ_RCVD",
	[ROCE_CM_REP_SENT] = "REP_SENT",
	[ROCE_CM_REP_RCVD] = "REP_RCVD",
	[ROCE_CM_MRA_REP_SENT] = "MRA_REP_SENT",
	[ROCE_CM_MRA_REP_RCVD] = "MRA_REP_RCVD",
	[ROCE_CM_ESTABLISHED] = "ESTABLISHED",
	[ROCE_CM_DREQ_SENT] = "DREQ_SENT",
	[ROCE_CM_DREQ_RCVD] = "DREQ_RCVD",
	[ROCE_CM_TIMEWAIT] = "TIMEWAIT",
};

static const char *const event_names[ROCE_CM_EV_MAX] = {
	[ROCE_CM_EV_REQ] = "REQ",
	[ROCE_CM_EV_REP] = "REP",
	[ROCE_CM_EV_ESTABLISHED] = "ESTABLISHED",
	[ROCE_CM_EV_REJECTED] = "REJECTED",
	[ROCE_CM_EV_TIMEOUT] = "TIMEOUT",
	[ROCE_CM_EV_DREQ] = "DREQ",
	[ROCE_CM_EV_DISCONNECTED] = "DISCONNECTED",
	[ROCE_CM_EV_TIMEWAIT_EXIT] = "TIMEWAIT_EXIT",
};

const char *
roce_cm_counter_name(enum roce_cm_counter c)
{
	return (unsigned int)c < ROCE_CM_CNT_MAX ? counter_names[c] : NULL;
}

const char *
roce_cm_state_name(enum roce_cm_state s)
{
	return (unsigned int)s < ROCE_CM_STATE_MAX ? state_names[s] : NULL;
}

const char *
roce_cm_event_name(enum roce_cm_event_type t)
{
	return (unsigned int)t < ROCE_CM_EV_MAX ? event_names[t] : NULL;
}

/* Linux's cm.random_id_operand: a random 32-bit value, or the caller's seed. */
static uint32_t
id_operand(uint32_t seed)
{
	uint32_t v = 0;

	if (seed != 0)
		return seed * 2654435761u;
	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		v = (uint32_t)ts.tv_nsec * 2654435761u ^ (uint32_t)ts.tv_sec;
	}
	return v;
}

struct roce_cm *
roce_cm_create(const struct roce_cm_conf *conf, const struct roce_cm_ops *ops, void *ctx)
{
	struct roce_cm *cm;
	uint32_t i;

	if (conf == NULL || ops == NULL || ops->send == NULL || conf->max_conns == 0 ||
			conf->max_conns > CM_MAX_CONNS || conf->max_listeners == 0 ||
			conf->max_listeners > CM_MAX_LISTENERS || conf->ack_delay > 31) {
		errno = EINVAL;
		return NULL;
	}
	cm = calloc(1, sizeof(*cm));
	if (cm == NULL)
		return NULL;
	cm->conns = calloc(conf->max_conns, sizeof(*cm->conns));
	cm->listeners = calloc(conf->max_listeners, sizeof(*cm->listeners));
	if (cm->conns == NULL || cm->listeners == NULL) {
		roce_cm_free(cm);
		errno = ENOMEM;
		return NULL;
	}
	cm->conf = *conf;
	cm->ops = *ops;
	cm->ctx = ctx;
	cm->id_operand = id_operand(conf->seed);
	while ((1u << cm->idx_bits) < conf->max_conns)
		cm->idx_bits++;
	for (i = 0; i < conf->max_conns; i++) {
		cm->conns[i].cm = cm;
		cm->conns[i].idx = i;
		cm->conns[i].listener = -1;
		/* Generations start apart, so IDs do not start at the same values. */
		cm->conns[i].gen = cm->id_operand >> 7 ^ i;
	}
	return cm;
}

void
roce_cm_free(struct roce_cm *cm)
{
	if (cm == NULL)
		return;
	free(cm->conns);
	free(cm->listeners);
	free(cm);
}

/* The slot's next local communication ID: (generation, slot) scrambled, never 0. */
static uint32_t
make_local_id(struct roce_cm *cm, struct roce_cm_conn *c)
{
	uint32_t id;

	do {
		c->gen++;
		id = ((uint32_t)((uint64_t)c->gen << cm->idx_bits) | c->idx) ^ cm->id_operand;
	} while (id == 0);
	return id;
}

struct roce_cm_conn *
cm_conn_alloc(struct roce_cm *cm)
{
	uint32_t n = cm->conf.max_conns, i;

	if (cm->nb_conns == n)
		return NULL;
	for (i = 0; i < n; i++) {
		struct roce_cm_conn *c = &cm->conns[(cm->next_slot + i) % n];
		uint32_t gen, idx;

		if (c->used)
			continue;
		cm->next_slot = (c->idx + 1) % n;
		gen = c->gen;
		idx = c->idx;
		memset(c, 0, sizeof(*c));
		c->cm = cm;
		c->idx = idx;
		c->gen = gen;
		c->listener = -1;
		c->used = 1;
		c->state = ROCE_CM_IDLE;
		c->deadline = UINT64_MAX;
		c->local_id = make_local_id(cm, c);
		cm->nb_conns++;
		return c;
	}
	return NULL;
}

void
cm_conn_free(struct roce_cm_conn *c)
{
	if (!c->used)
		return;
	cm_set_state(c, ROCE_CM_IDLE);
	c->used = 0;
	c->ctx = NULL;
	c->cm->nb_conns--;
}

/* cm_acquire_id(): the connection whose local ID is @local_id and remote ID @remote_id. */
struct roce_cm_conn *
cm_conn_lookup(struct roce_cm *cm, uint32_t local_id, uint32_t remote_id)
{
	uint32_t idx = (local_id ^ cm->id_operand) & ((1u << cm->idx_bits) - 1);
	struct roce_cm_conn *c;

	if (idx >= cm->conf.max_conns)
		return NULL;
	c = &cm->conns[idx];
	if (!c->used || c->local_id != local_id || c->remote_id != remote_id ||
			c->state == ROCE_CM_IDLE)
		return NULL;
	return c;
}

/* cm_find_remote_id()/cm_insert_remote_id(): a connection in the tables with the peer's
 * (comm ID, CA GUID). A linear walk: REQs and REPs are rare next to the slots' count. */
struct roce_cm_conn *
cm_find_remote_id(struct roce_cm *cm, uint32_t remote_id, uint64_t guid)
{
	uint32_t i;

	for (i = 0; i < cm->conf.max_conns; i++) {
		struct roce_cm_conn *c = &cm->conns[i];

		if (c->used && c->in_tables && c->remote_id == remote_id &&
				c->remote_ca_guid == guid)
			return c;
	}
	return NULL;
}

/* cm_insert_remote_qpn(): the same by the peer's (QPN, CA GUID): a stale connection. */
struct roce_cm_conn *
cm_find_remote_qpn(struct roce_cm *cm, uint32_t qpn, uint64_t guid)
{
	uint32_t i;

	for (i = 0; i < cm->conf.max_conns; i++) {
		struct roce_cm_conn *c = &cm->conns[i];

		if (c->used && c->in_tables && c->remote_qpn == qpn && c->remote_ca_guid == guid)
			return c;
	}
	return NULL;
}

struct cm_listener *
cm_find_listener(struct roce_cm *cm, uint64_t service_id)
{
	uint32_t i;

	for (i = 0; i < cm->conf.max_listeners; i++)
		if (cm->listeners[i].used && cm->listeners[i].service_id == service_id)
			return &cm->listeners[i];
	return NULL;
}

/* A passive connection counts against its listener's backlog until established. */
static int
state_pending(enum roce_cm_state s)
{
	return s == ROCE_CM_REQ_RCVD || s == ROCE_CM_MRA_REQ_SENT || s == ROCE_CM_REP_SENT ||
		s == ROCE_CM_MRA_REP_RCVD;
}

void
cm_set_state(struct roce_cm_conn *c, enum roce_cm_state s)
{
	if (c->listener >= 0) {
		struct cm_listener *l = &c->cm->listeners[c->listener];

		if (state_pending(c->state) && !state_pending(s))
			l->pending--;
		else if (!state_pending(c->state) && state_pending(s))
			l->pending++;
	}
	c->state = s;
}

int
roce_cm_listen(struct roce_cm *cm, uint64_t service_id, uint32_t backlog, void *ctx)
{
	struct cm_listener *l = NULL;
	uint32_t i;

	if (backlog == 0)
		return -EINVAL;
	if (cm_find_listener(cm, service_id) != NULL)
		return -EADDRINUSE;
	for (i = 0; i < cm->conf.max_listeners && l == NULL; i++)
		if (!cm->listeners[i].used)
			l = &cm->listeners[i];
	if (l == NULL)
		return -ENOSPC;
	memset(l, 0, sizeof(*l));
	l->used = 1;
	l->service_id = service_id;
	l->backlog = backlog;
	l->ctx = ctx;
	return 0;
}

int
roce_cm_unlisten(struct roce_cm *cm, uint64_t service_id)
{
	struct cm_listener *l = cm_find_listener(cm, service_id);
	int32_t slot;
	uint32_t i;

	if (l == NULL)
		return -ENOENT;
	slot = (int32_t)(l - cm->listeners);
	for (i = 0; i < cm->conf.max_conns; i++)
		if (cm->conns[i].used && cm->conns[i].listener == slot)
			cm->conns[i].listener = -1;
	l->used = 0;
	return 0;
}

void *
roce_cm_conn_ctx(const struct roce_cm_conn *c)
{
	return c->ctx;
}

void
roce_cm_conn_set_ctx(struct roce_cm_conn *c, void *ctx)
{
	c->ctx = ctx;
}

enum roce_cm_state
roce_cm_conn_state(const struct roce_cm_conn *c)
{
	return c->state;
}

/* ib_cm_init_qp_attr()'s INIT, RTR and RTS attributes at once. */
void
cm_fill_qp_attr(const struct roce_cm_conn *c, struct roce_cm_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_num = c->local_qpn;
	a->dest_qp_num = c->remote_qpn;
	a->rq_psn = c->rq_psn;
	a->sq_psn = c->sq_psn;
	a->path_mtu = c->path_mtu;
	a->max_rd_atomic = c->initiator_depth;
	a->max_dest_rd_atomic = c->responder_resources;
	a->timeout = c->av_timeout;
	a->retry_cnt = c->retry_count;
	a->rnr_retry = c->rnr_retry_count;
	a->min_rnr_timer = 0;
	a->port = c->peer.port;
	a->qp_access_flags = ROCE_CM_ACCESS_REMOTE_WRITE;
	if (c->responder_resources != 0)
		a->qp_access_flags |= ROCE_CM_ACCESS_REMOTE_READ | ROCE_CM_ACCESS_REMOTE_ATOMIC;
	a->route = c->route;
	memcpy(a->remote_mac, c->peer.remote_mac, sizeof(a->remote_mac));
}

int
roce_cm_conn_qp_attr(const struct roce_cm_conn *c, struct roce_cm_qp_attr *attr)
{
	switch (c->state) {
	case ROCE_CM_IDLE:
	case ROCE_CM_DREQ_SENT:
	case ROCE_CM_DREQ_RCVD:
	case ROCE_CM_TIMEWAIT:
	case ROCE_CM_STATE_MAX:
		return -EINVAL;
	default:
		cm_fill_qp_attr(c, attr);
		return 0;
	}
}

void
roce_cm_conn_info(const struct roce_cm_conn *c, struct roce_cm_conn_info *info)
{
	memset(info, 0, sizeof(*info));
	info->conn = c;
	info->ctx = c->ctx;
	info->state = c->state;
	info->active = c->active;
	info->orphan = c->orphan;
	info->service_id = c->service_id;
	info->local_comm_id = c->local_id;
	info->remote_comm_id = c->remote_id;
	info->remote_ca_guid = c->remote_ca_guid;
	info->local_qpn = c->local_qpn;
	info->remote_qpn = c->remote_qpn;
	info->peer = c->peer;
	info->retries_left = c->msg_pending ? c->retries_left : 0;
	info->deadline = c->deadline;
}

unsigned int
roce_cm_foreach(const struct roce_cm *cm,
		int (*cb)(void *arg, const struct roce_cm_conn_info *info), void *arg)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 0; i < cm->conf.max_conns; i++) {
		struct roce_cm_conn_info info;

		if (!cm->conns[i].used)
			continue;
		roce_cm_conn_info(&cm->conns[i], &info);
		n++;
		if (cb(arg, &info) != 0)
			break;
	}
	return n;
}

unsigned int
roce_cm_listen_foreach(const struct roce_cm *cm,
		int (*cb)(void *arg, const struct roce_cm_listen_info *info), void *arg)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 0; i < cm->conf.max_listeners; i++) {
		const struct cm_listener *l = &cm->listeners[i];
		struct roce_cm_listen_info info;

		if (!l->used)
			continue;
		info.service_id = l->service_id;
		info.ctx = l->ctx;
		info.backlog = l->backlog;
		info.pending = l->pending;
		info.reqs = l->reqs;
		info.dropped = l->dropped;
		n++;
		if (cb(arg, &info) != 0)
			break;
	}
	return n;
}

void
roce_cm_stats(const struct roce_cm *cm, struct roce_cm_stats *st)
{
	*st = cm->st;
}

uint32_t
roce_cm_nb_conns(const struct roce_cm *cm)
{
	return cm->nb_conns;
}

uint64_t
roce_cm_next_deadline(const struct roce_cm *cm)
{
	uint64_t next = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < cm->conf.max_conns; i++)
		if (cm->conns[i].used && cm->conns[i].deadline < next)
			next = cm->conns[i].deadline;
	return next;
}
