/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connection manager in the daemon (doc/connection-manager.md, doc/control-protocol.md:
 * cm.*): lib/cm's state machine on the control thread, fed by the GSI agent's hook (QP1's
 * connection messages) and sending through it, and the RC QPs of its connections programmed
 * through the verbs façade as librdmacm programs them (RTR and RTS on the REP at the active
 * side, before the REP at the passive side; ERR on a DREQ).
 *
 * Listeners and connections belong to the daemon, not to the control client that made them:
 * a `rocectl cm listen` outlives its connection. A listener with accept=auto creates the QP of
 * each connection itself (in the listener's PD) and destroys it when the connection's time
 * wait ends; with accept=manual a client answers each connect_request with cm.accept naming
 * a QP of its own. What happens is queued as events (rdma_cm's names) that cm.events reads.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ether.h>

#include "roce_cm.h"
#include "roce_dp_gsi.h"
#include "roce_dp_verbs.h"
#include "roced_cmd.h"

#define CM_MAX_CONNS 1024
#define CM_MAX_LISTENS 64
#define CM_EVENTS 256                 /* the event ring: older ones are lost */
#define CM_UPDATA_MAX (ROCE_CM_REQ_PDATA_LEN - ROCE_CMA_HDR_LEN)   /* 56: rdma_cm's limit */
/* How long programming a QP may wait for the peer's MAC. A peer whose REQ came has resolved
 * us, and we learned it then; our own REQ went to a resolved MAC: the wait is for the odd
 * case, and kept short on the passive side, where a REQ from a spoofed address costs it. */
#define CM_RESOLVE_ACTIVE_MS 1000
#define CM_RESOLVE_PASSIVE_MS 50

struct cm_listen {
	uint8_t used;
	uint8_t manual;
	uint8_t bound;                /* 1: only REQs to bound_gid (rdma_bind_addr to an IP) */
	uint8_t bound_gid[16];
	uint16_t tcp_port;
	uint32_t pdn;
	uint32_t sq_depth, rq_depth;
	uint32_t backlog;
	uint8_t owned;                /* goes when its control client closes */
	uint64_t owner;               /* that client */
};

struct cm_conn {
	struct roce_cm_conn *c;       /* NULL: the slot is free */
	uint32_t id;                  /* the client's handle: slot + generation */
	uint32_t qpn;                 /* 0 until known (manual accept) */
	uint16_t port;                /* dataplane port index */
	uint16_t tcp_port;            /* the service's */
	uint8_t active;
	uint8_t own_qp;               /* created here (accept=auto): destroyed here */
	uint8_t told_disc;            /* "disconnected" queued */
	uint8_t v6;
	uint8_t rip[16];              /* the peer's IP (IPv4 in the first 4 bytes) */
	uint32_t rqpn;
	int listen;                   /* its listener's slot, -1 for an active one */
};

struct cm_event {
	uint64_t seq;
	uint64_t time_ns;
	enum roce_cm_event_type type;
	const char *name;             /* rdma_cm's event name */
	uint32_t id, qpn, rqpn;
	uint16_t tcp_port;
	uint16_t reason;              /* rejected: the REJ's reason; else 0 */
	int status;
	uint8_t v6;
	uint8_t rip[16];
	uint8_t pdata_len;
	uint8_t pdata[CM_UPDATA_MAX];
};

struct roced_cm {
	struct roced_state *st;
	struct roce_cm *cm;
	struct cm_listen listens[CM_MAX_LISTENS];
	struct cm_conn conns[CM_MAX_CONNS];
	uint32_t gen;
	struct cm_event ev[CM_EVENTS];
	uint64_t seq;                 /* the last event's */
	uint64_t qp_errors;           /* QPs that could not be created or programmed */
	uint64_t not_bound;           /* REQs to another address than their listener's */
};

/* ---- addresses: the GSI agent's and lib/cm's ---- */

static void
gid_of(uint8_t gid[16], const uint8_t *ip, int v6)
{
	if (v6)
		memcpy(gid, ip, 16);
	else
		roce_cma_ip4_mapped(gid, ip);
}

static int
ip_of(const uint8_t gid[16], uint8_t ip[16])
{
	int v4 = roce_cma_is_ip4_mapped(gid);

	memset(ip, 0, 16);
	memcpy(ip, v4 ? gid + 12 : gid, v4 ? 4 : 16);
	return !v4;
}

/* Our GID on a port: its IPv4 address, or its IPv6 one for an IPv6 peer. */
static void
local_gid(struct roced_cm *m, uint16_t port, int v6, uint8_t gid[16])
{
	const struct roce_dp_addr *a = roce_dp_addr(m->st->dp, port);

	gid_of(gid, v6 ? a->ip6 : a->ip4, v6);
}

static void
cm_addr_of(const struct roce_dp_gsi_addr *g, struct roce_cm_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->port = (uint8_t)(g->port + 1);
	gid_of(a->local_gid, g->local_ip, g->ipv6);
	gid_of(a->remote_gid, g->ip, g->ipv6);
	a->remote_qpn = g->qpn;
	a->qkey = ROCE_CM_QP1_QKEY;
	a->pkey = g->pkey;
}

/* ---- lib/cm's ops ---- */

static int
cm_send(void *ctx, const struct roce_cm_addr *dest, const uint8_t *mad)
{
	struct roced_cm *m = ctx;
	struct roce_dp_gsi_addr g = {0};

	g.port = (uint16_t)(dest->port - 1);
	g.ipv6 = (uint8_t)ip_of(dest->remote_gid, g.ip);
	ip_of(dest->local_gid, g.local_ip);
	g.qpn = dest->remote_qpn;
	g.pkey = dest->pkey;
	return roce_dp_gsi_send(m->st->dp, &g, mad);
}

static void
gsi_recv(void *ctx, const struct roce_dp_gsi_addr *src, const struct roce_cm_msg *msg,
		const uint8_t *mad)
{
	struct roced_cm *m = ctx;
	struct roce_cm_addr a;

	RTE_SET_USED(msg);
	cm_addr_of(src, &a);
	roce_cm_input(m->cm, &a, mad, ROCE_MAD_SIZE, roce_dp_now());
}

/* ---- events for the clients ---- */

static const char *const ev_names[ROCE_CM_EV_MAX] = {
	[ROCE_CM_EV_REQ] = "connect_request",
	[ROCE_CM_EV_REP] = "connect_response",
	[ROCE_CM_EV_ESTABLISHED] = "established",
	[ROCE_CM_EV_REJECTED] = "rejected",
	[ROCE_CM_EV_TIMEOUT] = "unreachable",
	[ROCE_CM_EV_DREQ] = "disconnected",
	[ROCE_CM_EV_DISCONNECTED] = "disconnected",
	[ROCE_CM_EV_TIMEWAIT_EXIT] = "timewait_exit",
};

static struct cm_event *
queue_event(struct roced_cm *m, const struct cm_conn *k, enum roce_cm_event_type type,
		const char *name)
{
	struct cm_event *e = &m->ev[++m->seq % CM_EVENTS];

	memset(e, 0, sizeof(*e));
	e->seq = m->seq;
	e->time_ns = roce_dp_now();
	e->type = type;
	e->name = name != NULL ? name : ev_names[type];
	e->id = k->id;
	e->qpn = k->qpn;
	e->rqpn = k->rqpn;
	e->tcp_port = k->tcp_port;
	e->v6 = k->v6;
	memcpy(e->rip, k->rip, sizeof(e->rip));
	return e;
}

/* ---- connections ---- */

static struct cm_conn *
conn_alloc(struct roced_cm *m)
{
	unsigned int i;

	for (i = 0; i < CM_MAX_CONNS; i++)
		if (m->conns[i].c == NULL && m->conns[i].id == 0) {
			memset(&m->conns[i], 0, sizeof(m->conns[i]));
			m->gen = (m->gen + 1) & 0x3FFFFF;
			m->conns[i].id = (m->gen << 10 | i) + 1;
			m->conns[i].listen = -1;
			return &m->conns[i];
		}
	return NULL;
}

static struct cm_conn *
conn_find(struct roced_cm *m, uint32_t id)
{
	unsigned int i = (id - 1) & (CM_MAX_CONNS - 1);

	if (id == 0 || m->conns[i].id != id || m->conns[i].c == NULL)
		return NULL;
	return &m->conns[i];
}

/* The handle is gone: the QP made for it goes with it. */
static void
conn_release(struct roced_cm *m, struct cm_conn *k)
{
	if (k->own_qp && k->qpn != 0)
		roce_dp_qp_destroy(m->st->dp, k->qpn);
	memset(k, 0, sizeof(*k));
}

/* Put what the CM says into the connection's QP: RTR, then RTS (rdma_init_qp_attr()). */
static int
program_qp(struct roced_cm *m, struct cm_conn *k, const struct roce_cm_qp_attr *q)
{
	struct roce_dp *dp = m->st->dp;
	struct roce_qp_attr a = {0};
	uint32_t mtu = 128u << q->path_mtu;
	int ret;

	if (mtu > roce_dp_path_mtu_max(dp, k->port, k->v6, false))
		return -EMSGSIZE;
	ret = roce_dp_path(dp, k->port, k->rip, k->v6,
			rte_is_zero_ether_addr((const void *)q->remote_mac) ? NULL : q->remote_mac,
			(uint8_t)(q->route.traffic_class >> 2),
			k->active ? CM_RESOLVE_ACTIVE_MS : CM_RESOLVE_PASSIVE_MS, &a.ah);
	if (ret != 0)
		return ret;
	a.ah.udp_sport = roce_udp_sport(k->qpn, q->dest_qp_num);
	a.qp_state = ROCE_QPS_RTR;
	a.path_mtu = (enum roce_mtu)q->path_mtu;
	a.dest_qp_num = q->dest_qp_num;
	a.rq_psn = q->rq_psn;
	a.max_dest_rd_atomic = q->max_dest_rd_atomic;
	a.min_rnr_timer = q->min_rnr_timer;
	ret = roce_dp_qp_modify(dp, k->qpn, &a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU |
			ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC |
			ROCE_QP_MIN_RNR_TIMER);
	if (ret != 0)
		return ret;
	a.qp_state = ROCE_QPS_RTS;
	a.sq_psn = q->sq_psn;
	a.timeout = q->timeout;
	a.retry_cnt = q->retry_cnt;
	a.rnr_retry = q->rnr_retry;
	a.max_rd_atomic = q->max_rd_atomic;
	return roce_dp_qp_modify(dp, k->qpn, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN | ROCE_QP_TIMEOUT |
			ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY | ROCE_QP_MAX_QP_RD_ATOMIC);
}

static void
qp_error(struct roced_cm *m, uint32_t qpn)
{
	struct roce_qp_attr a = { .qp_state = ROCE_QPS_ERR };

	if (qpn != 0)
		roce_dp_qp_modify(m->st->dp, qpn, &a, ROCE_QP_STATE);
}

/* Passive side: the QP takes the CM's attributes, then the REP goes. */
static int
accept_conn(struct roced_cm *m, struct cm_conn *k, const struct roce_cm_accept_params *ap)
{
	struct roce_cm_accept_params p = *ap;
	struct roce_cm_qp_attr q;
	struct roce_dp_qp_info qi;
	int ret;

	if ((ret = roce_dp_qp_query(m->st->dp, k->qpn, &qi)) != 0)
		return ret;
	p.qp_num = k->qpn;
	p.starting_psn = qi.psn;
	/* The REP's values are the QP's: what roce_cm_accept() would put in the attributes. */
	if ((ret = roce_cm_conn_qp_attr(k->c, &q)) != 0)
		return ret;
	q.qp_num = k->qpn;
	/* the PSN the REP announces is the one the peer starts sending with, as Linux's CM has
	 * it: what we receive first (we send from the REQ's) */
	q.rq_psn = qi.psn;
	q.max_dest_rd_atomic = p.responder_resources;
	q.max_rd_atomic = p.initiator_depth;
	if ((ret = program_qp(m, k, &q)) != 0)
		return ret;
	return roce_cm_accept(k->c, &p, roce_dp_now());
}

static void
ev_req(struct roced_cm *m, const struct roce_cm_event *ev)
{
	const struct roce_cm_req_info *r = ev->req;
	struct cm_listen *l = r->listen_ctx;
	struct roce_cm_accept_params p;
	struct roce_dp_qp_init qi = {0};
	struct cm_event *e;
	struct cm_conn *k;
	int ret;

	/* A listener bound to an address has no service at the others: REJ 8, as rdma_cm's
	 * cma_find_listener() finding nobody for the REQ's destination makes ib_cm answer. */
	if (l->bound && memcmp(r->src.local_gid, l->bound_gid, 16) != 0) {
		m->not_bound++;
		roce_cm_reject(ev->conn, ROCE_CM_REJ_INVALID_SERVICE_ID, NULL, 0, NULL, 0,
				roce_dp_now());
		return;
	}
	k = conn_alloc(m);
	if (k == NULL) {
		roce_cm_reject(ev->conn, ROCE_CM_REJ_NO_QP, NULL, 0, NULL, 0, roce_dp_now());
		return;
	}
	k->c = ev->conn;
	k->port = (uint16_t)(r->src.port - 1);
	k->v6 = (uint8_t)ip_of(r->src.remote_gid, k->rip);
	k->rqpn = r->remote_qpn;
	k->tcp_port = l->tcp_port;
	k->listen = (int)(l - m->listens);
	roce_cm_conn_set_ctx(ev->conn, k);
	e = queue_event(m, k, ROCE_CM_EV_REQ, NULL);
	/* What the application put after the RDMA CM's header; a MAD is fixed size, so the
	 * zeros after it are the area's, not the application's: trimmed. */
	if (ev->private_data_len > ROCE_CMA_HDR_LEN) {
		e->pdata_len = (uint8_t)RTE_MIN(ev->private_data_len - ROCE_CMA_HDR_LEN,
				sizeof(e->pdata));
		memcpy(e->pdata, ev->private_data + ROCE_CMA_HDR_LEN, e->pdata_len);
		while (e->pdata_len > 0 && e->pdata[e->pdata_len - 1] == 0)
			e->pdata_len--;
	}
	if (l->manual)
		return;
	qi.pdn = l->pdn;
	qi.port = k->port;
	qi.worker = -1;
	qi.sq_depth = l->sq_depth;
	qi.rq_depth = l->rq_depth;
	qi.type = ROCE_QPT_RC;
	qi.access = ev->qp.qp_access_flags;
	roce_cm_accept_params_init(&p, r);
	ret = roce_dp_qp_create(m->st->dp, &qi, &k->qpn);
	if (ret == 0) {
		k->own_qp = 1;
		ret = accept_conn(m, k, &p);
	}
	if (ret != 0) {
		m->qp_errors++;
		ROCED_LOG(WARNING, "cm: cannot accept a connection on port %u: %s\n",
				l->tcp_port, strerror(-ret));
		queue_event(m, k, ROCE_CM_EV_REJECTED, "connect_error")->status = ret;
		roce_cm_reject(k->c, ROCE_CM_REJ_NO_QP, NULL, 0, NULL, 0, roce_dp_now());
		conn_release(m, k);
	}
}

static void
ev_rep(struct roced_cm *m, struct cm_conn *k, const struct roce_cm_event *ev)
{
	int ret;

	k->rqpn = ev->qp.dest_qp_num;
	ret = program_qp(m, k, &ev->qp);
	if (ret == 0)
		ret = roce_cm_rtu(k->c, NULL, 0, roce_dp_now());
	if (ret != 0) {
		m->qp_errors++;
		queue_event(m, k, ROCE_CM_EV_REJECTED, "connect_error")->status = ret;
		roce_cm_reject(k->c, ROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0, roce_dp_now());
		conn_release(m, k);
	}
}

static void
cm_event(void *ctx, const struct roce_cm_event *ev)
{
	struct roced_cm *m = ctx;
	struct cm_conn *k = ev->conn_ctx;
	struct cm_event *e;

	if (ev->type == ROCE_CM_EV_REQ) {
		ev_req(m, ev);
		return;
	}
	if (k == NULL || k->c != ev->conn)
		return;
	switch (ev->type) {
	case ROCE_CM_EV_REP:
		ev_rep(m, k, ev);
		return;
	case ROCE_CM_EV_DREQ:
	case ROCE_CM_EV_DISCONNECTED:
		/* No more work on the QP; to a DREQ, the DREP. */
		qp_error(m, k->qpn);
		if (!k->told_disc)
			queue_event(m, k, ev->type, NULL)->status = ev->status;
		k->told_disc = 1;
		if (ev->type == ROCE_CM_EV_DREQ)
			roce_cm_disconnect(k->c, NULL, 0, roce_dp_now());
		return;
	case ROCE_CM_EV_REJECTED:
		e = queue_event(m, k, ev->type, NULL);
		e->reason = ev->rej_reason;
		break;
	default:
		queue_event(m, k, ev->type, NULL)->status = ev->status;
		break;
	}
	if (ev->released)
		conn_release(m, k);
}

/* ---- life ---- */

int
roced_cm_init(struct roced_state *st, char *err, size_t errlen)
{
	static const struct roce_cm_ops ops = { .send = cm_send, .event = cm_event };
	const struct roce_port *p = roce_dp_port(st->dp, 0);
	struct roce_cm_conf conf = {
		.max_conns = CM_MAX_CONNS,
		.max_listeners = CM_MAX_LISTENS,
		.hi_tid = 1,
		.ack_delay = ROCE_CM_RXE_ACK_DELAY,
	};
	struct roce_dp_gsi_hook hook;
	struct roced_cm *m;

	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		snprintf(err, errlen, "cm: no memory");
		return -ENOMEM;
	}
	m->st = st;
	/* The CA GUID as rxe makes its node GUID: the first port's MAC as an EUI-64. */
	if (p != NULL) {
		const uint8_t *a = p->mac.addr_bytes;

		conf.ca_guid = (uint64_t)(a[0] ^ 2) << 56 | (uint64_t)a[1] << 48 |
			(uint64_t)a[2] << 40 | 0xFFFEull << 24 | (uint64_t)a[3] << 16 |
			(uint64_t)a[4] << 8 | a[5];
	}
	m->cm = roce_cm_create(&conf, &ops, m);
	if (m->cm == NULL) {
		snprintf(err, errlen, "cm: %s", strerror(errno));
		free(m);
		return -errno;
	}
	hook.recv = gsi_recv;
	hook.ctx = m;
	roce_dp_gsi_set_hook(st->dp, &hook);
	st->cm = m;
	return 0;
}

void
roced_cm_fini(struct roced_state *st)
{
	struct roced_cm *m = st->cm;

	if (m == NULL)
		return;
	roce_dp_gsi_set_hook(st->dp, NULL);
	roce_cm_free(m->cm);
	free(m);
	st->cm = NULL;
}

/*
 * As rdma_destroy_qp() then rdma_destroy_id(): a connection whose QP is gone is let go (a
 * DREQ when established, a REJ before), so that no later DREQ of the peer's can put another
 * QP that gets the number in ERR. QP numbers come back only after the worker's whole range,
 * so checking right after a destroy cannot mistake a new QP for the old one.
 */
void
roced_cm_prune(struct roced_state *st)
{
	struct roced_cm *m = st->cm;
	struct roce_dp_qp_info qi;
	unsigned int i;

	if (m == NULL)
		return;
	for (i = 0; i < CM_MAX_CONNS; i++) {
		struct cm_conn *k = &m->conns[i];

		if (k->c == NULL || k->qpn == 0 || roce_dp_qp_query(st->dp, k->qpn, &qi) == 0)
			continue;
		k->own_qp = 0;
		roce_cm_destroy(k->c, roce_dp_now());
		conn_release(m, k);
	}
}

uint64_t
roced_cm_poll(struct roced_state *st)
{
	struct roced_cm *m = st->cm;
	uint64_t now = roce_dp_now();

	if (m == NULL)
		return UINT64_MAX;
	if (roce_cm_next_deadline(m->cm) <= now)
		roce_cm_tick(m->cm, now);
	return roce_cm_next_deadline(m->cm);
}

/* ---- commands ---- */

static const char *const accept_names[] = { "auto", "manual" };

/* "private_data": hex, up to @max bytes. @return bytes, or -errno with the reply set. */
static int
arg_pdata(json_t *req, json_t *reply, uint8_t *out, size_t max)
{
	const char *s = NULL;
	size_t n, i;
	int ret;

	if ((ret = roce_ctl_arg_str(req, reply, "private_data", &s, false, 2 * max)) < 0)
		return ret;
	if (ret == 0)
		return 0;
	n = strlen(s);
	if (n % 2 != 0)
		return roce_ctl_error(reply, -EINVAL, "private_data: an even number of hex digits");
	for (i = 0; i < n / 2; i++) {
		unsigned int b;

		if (sscanf(s + 2 * i, "%2x", &b) != 1 || !isxdigit((unsigned char)s[2 * i]) ||
				!isxdigit((unsigned char)s[2 * i + 1]))
			return roce_ctl_error(reply, -EINVAL, "private_data: hex digits only");
		out[i] = (uint8_t)b;
	}
	return (int)(n / 2);
}

static json_t *
hex_json(const uint8_t *p, size_t n)
{
	char s[2 * CM_UPDATA_MAX + 1];
	size_t i;

	for (i = 0; i < n && i < CM_UPDATA_MAX; i++)
		snprintf(s + 2 * i, 3, "%02x", p[i]);
	s[2 * i] = '\0';
	return json_string(s);
}

static struct roced_cm *
cm_of(void *arg, json_t *reply)
{
	struct roced_state *st = arg;

	if (st->cm == NULL)
		roce_ctl_error(reply, -ENODEV, "no connection manager");
	return st->cm;
}

static int
arg_conn(struct roced_cm *m, json_t *req, json_t *reply, struct cm_conn **k)
{
	uint32_t id;
	int ret;

	/* "conn": "id" is the envelope's. */
	if ((ret = roce_ctl_arg_u32(req, reply, "conn", &id, true, 1, UINT32_MAX)) < 0)
		return ret;
	*k = conn_find(m, id);
	if (*k == NULL)
		return roce_ctl_error(reply, -ENOENT, "no connection %u", id);
	return 0;
}

static json_t *
listen_obj(const struct cm_listen *l)
{
	char ip[INET6_ADDRSTRLEN] = "";
	uint8_t a[16];
	int v6 = l->bound ? ip_of(l->bound_gid, a) : 0;

	if (l->bound)
		inet_ntop(v6 ? AF_INET6 : AF_INET, a, ip, sizeof(ip));
	return json_pack("{s:i, s:o, s:s, s:i, s:b, s:s?}", "port", l->tcp_port, "service_id",
			roce_ctl_u64(ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_TCP, l->tcp_port)), "accept",
			accept_names[l->manual], "backlog", l->backlog, "owned", l->owned, "ip",
			l->bound ? ip : NULL);
}

/* "ip": listen on one of roced's addresses only (default: all of them). */
static int
arg_bind(struct roced_cm *m, json_t *req, json_t *reply, struct cm_listen *l)
{
	const struct roce_dp_addr *a;
	char txt[INET6_ADDRSTRLEN];
	uint8_t ip[16] = {0};
	unsigned int i;
	int family, ret;

	if ((ret = roce_ctl_arg_ip(req, reply, "ip", &family, ip, false)) <= 0)
		return ret;
	for (i = 0; roce_dp_port(m->st->dp, i) != NULL; i++) {
		a = roce_dp_addr(m->st->dp, i);
		if (family == AF_INET ? memcmp(a->ip4, ip, 4) != 0 : memcmp(a->ip6, ip, 16) != 0)
			continue;
		l->bound = 1;
		gid_of(l->bound_gid, ip, family == AF_INET6);
		return 0;
	}
	return roce_ctl_error(reply, -EADDRNOTAVAIL, "ip %s: not an address of roced's ports",
			inet_ntop(family, ip, txt, sizeof(txt)));
}

int
roced_cmd_cm_listen(void *arg, json_t *req, json_t *reply)
{
	struct roced_cm *m = cm_of(arg, reply);
	struct cm_listen l = { .used = 1, .sq_depth = 128, .rq_depth = 128, .backlog = 16 };
	uint32_t tcp_port, i, free_slot = CM_MAX_LISTENS;
	unsigned int acc = 0;
	bool owned = false;
	int ret;

	if (m == NULL)
		return -ENODEV;
	if ((ret = roce_ctl_arg_u32(req, reply, "port", &tcp_port, true, 1, 65535)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "backlog", &l.backlog, false, 1,
				CM_MAX_CONNS)) < 0 ||
			(ret = roce_ctl_arg_enum(req, reply, "accept", accept_names,
				RTE_DIM(accept_names), &acc, false)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "pd", &l.pdn, false, 0,
				ROCE_DP_MAX_PDS - 1)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "sq_depth", &l.sq_depth, false, 1,
				32768)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "rq_depth", &l.rq_depth, false, 1,
				32768)) < 0)
		return ret;
	if ((ret = arg_bind(m, req, reply, &l)) < 0 ||
			(ret = roce_ctl_arg_bool(req, reply, "owned", &owned, false)) < 0)
		return ret;
	l.owned = owned;
	l.owner = roce_ctl_server_client(m->st->srv);
	l.manual = acc == 1;
	l.tcp_port = (uint16_t)tcp_port;
	for (i = 0; i < CM_MAX_LISTENS; i++)
		if (!m->listens[i].used && free_slot == CM_MAX_LISTENS)
			free_slot = i;
	if (free_slot == CM_MAX_LISTENS)
		return roce_ctl_error(reply, -ENOSPC, "%u listeners already", CM_MAX_LISTENS);
	m->listens[free_slot] = l;
	ret = roce_cm_listen(m->cm, ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_TCP, tcp_port), l.backlog,
			&m->listens[free_slot]);
	if (ret != 0) {
		m->listens[free_slot].used = 0;
		return roce_ctl_error(reply, ret, ret == -EADDRINUSE ?
				"port %u: listened on already" : "port %u: %s", tcp_port,
				strerror(-ret));
	}
	json_object_set_new(reply, "listen", listen_obj(&m->listens[free_slot]));
	return 0;
}

/*
 * The listeners a closed control client owned go, as a process's listening rdma_cm IDs go with
 * it; the connection requests they hold that nobody accepted get a REJ, as ib_cm sends when
 * such an ID is destroyed (accepted connections stay: their QPs decide, roced_cm_prune()).
 */
void
roced_cm_client_closed(struct roced_state *st, uint64_t client)
{
	struct roced_cm *m = st->cm;
	unsigned int i, j;

	if (m == NULL)
		return;
	for (i = 0; i < CM_MAX_LISTENS; i++) {
		struct cm_listen *l = &m->listens[i];

		if (!l->used || !l->owned || l->owner != client)
			continue;
		roce_cm_unlisten(m->cm, ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_TCP, l->tcp_port));
		l->used = 0;
		for (j = 0; j < CM_MAX_CONNS; j++) {
			struct cm_conn *k = &m->conns[j];

			if (k->c == NULL || k->listen != (int)i || k->qpn != 0)
				continue;
			roce_cm_destroy(k->c, roce_dp_now());
			conn_release(m, k);
		}
		ROCED_LOG(INFO, "control client %" PRIu64 " went: stopped listening on port %u\n",
				client, l->tcp_port);
	}
}

int
roced_cmd_cm_unlisten(void *arg, json_t *req, json_t *reply)
{
	struct roced_cm *m = cm_of(arg, reply);
	uint32_t tcp_port, i;
	int ret;

	if (m == NULL)
		return -ENODEV;
	if ((ret = roce_ctl_arg_u32(req, reply, "port", &tcp_port, true, 1, 65535)) < 0)
		return ret;
	ret = roce_cm_unlisten(m->cm, ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_TCP, tcp_port));
	if (ret != 0)
		return roce_ctl_error(reply, ret, "port %u: nobody listens", tcp_port);
	for (i = 0; i < CM_MAX_LISTENS; i++)
		if (m->listens[i].used && m->listens[i].tcp_port == tcp_port)
			m->listens[i].used = 0;
	return 0;
}

/* The connection parameters both cm.connect and cm.accept take. */
static int
arg_rd(json_t *req, json_t *reply, uint8_t *rr, uint8_t *id)
{
	uint32_t a = *rr, b = *id;
	int ret;

	if ((ret = roce_ctl_arg_u32(req, reply, "responder_resources", &a, false, 0,
				ROCED_RD_ATOMIC_MAX)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "initiator_depth", &b, false, 0,
				ROCED_RD_ATOMIC_MAX)) < 0)
		return ret;
	*rr = (uint8_t)a;
	*id = (uint8_t)b;
	return 0;
}

static json_t *
conn_json(const struct roced_cm *m, const struct cm_conn *k)
{
	struct roce_cm_conn_info ci;
	char ip[INET6_ADDRSTRLEN];

	roce_cm_conn_info(k->c, &ci);
	inet_ntop(k->v6 ? AF_INET6 : AF_INET, k->rip, ip, sizeof(ip));
	return json_pack("{s:i, s:s, s:s, s:i, s:i, s:s, s:i, s:i, s:s, s:i}", "conn", k->id,
			"state", roce_cm_state_name(ci.state), "role", k->active ? "active" :
			"passive", "qpn", k->qpn, "port", k->port, "remote_ip", ip,
			"remote_qpn", ci.remote_qpn, "service_port", k->tcp_port,
			"qp", k->own_qp ? "daemon" : "client",
			"listener", k->listen >= 0 ? m->listens[k->listen].tcp_port : 0);
}

int
roced_cmd_cm_connect(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roced_cm *m = cm_of(arg, reply);
	uint8_t pdata[ROCE_CM_REQ_PDATA_LEN] = {0};
	struct roce_cm_connect_params p;
	struct roce_cma_hdr h = { .cma_version = ROCE_CMA_VERSION };
	struct roce_dp_qp_info q;
	uint32_t tcp_port, mtu = 0, retry = 7, rnr = 7, pmax;
	uint8_t ip[16] = {0};
	struct cm_conn *k;
	int family, ret, n;

	if (m == NULL)
		return -ENODEV;
	roce_cm_connect_params_init(&p);
	p.responder_resources = p.initiator_depth = 16;
	if ((ret = roced_arg_qp(st, req, reply, &q)) < 0 ||
			(ret = roce_ctl_arg_ip(req, reply, "ip", &family, ip, true)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "port", &tcp_port, true, 1, 65535)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "mtu", &mtu, false, 256, 4096)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "retry_count", &retry, false, 0, 7)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "rnr_retry_count", &rnr, false, 0,
				7)) < 0 ||
			(ret = arg_rd(req, reply, &p.responder_resources, &p.initiator_depth)) < 0 ||
			(n = arg_pdata(req, reply, pdata + ROCE_CMA_HDR_LEN, CM_UPDATA_MAX)) < 0)
		return ret < 0 ? ret : n;
	if (q.init.qp_type != ROCE_QPT_RC || q.attr.qp_state != ROCE_QPS_INIT)
		return roce_ctl_error(reply, -EINVAL, "QP 0x%06x: an RC QP in INIT connects", q.qpn);
	pmax = roce_dp_path_mtu_max(st->dp, q.port, family == AF_INET6, false);
	if (mtu == 0)
		mtu = pmax;     /* as rdma_cm takes the netdev's MTU */
	if (!rte_is_power_of_2(mtu) || mtu > pmax)
		return roce_ctl_error(reply, -EMSGSIZE, "mtu %u: a power of two up to %u on port "
				"%u", mtu, pmax, q.port);
	k = conn_alloc(m);
	if (k == NULL)
		return roce_ctl_error(reply, -ENOSPC, "%u connections already", CM_MAX_CONNS);
	k->active = 1;
	k->qpn = q.qpn;
	k->port = q.port;
	k->v6 = family == AF_INET6;
	memcpy(k->rip, ip, 16);
	k->tcp_port = (uint16_t)tcp_port;
	p.dest.port = (uint8_t)(q.port + 1);
	local_gid(m, q.port, k->v6, p.dest.local_gid);
	gid_of(p.dest.remote_gid, ip, k->v6);
	memcpy(p.route.local_gid, p.dest.local_gid, 16);
	memcpy(p.route.remote_gid, p.dest.remote_gid, 16);
	p.route.path_mtu = (uint8_t)(rte_log2_u32(mtu) - 7);
	/* rdma_cm's source port: an ephemeral one, here from the QPN. */
	h.ip_version = k->v6 ? 6 : 4;
	h.port = (uint16_t)(0xC000 | (q.qpn & 0x3FFF));
	memcpy(h.src_addr, p.dest.local_gid, 16);
	memcpy(h.dst_addr, p.dest.remote_gid, 16);
	p.route.flow_label = roce_cma_flow_label(h.port, (uint16_t)tcp_port);
	roce_cma_hdr_build(&h, pdata, sizeof(pdata));
	p.service_id = ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_TCP, tcp_port);
	p.qp_num = q.qpn;
	p.starting_psn = q.psn;
	p.retry_count = (uint8_t)retry;
	p.rnr_retry_count = (uint8_t)rnr;
	p.private_data = pdata;
	p.private_data_len = ROCE_CMA_HDR_LEN + (size_t)n;
	ret = roce_cm_connect(m->cm, &p, k, roce_dp_now(), &k->c);
	if (ret != 0) {
		memset(k, 0, sizeof(*k));
		return roce_ctl_error(reply, ret, "cannot connect: %s", strerror(-ret));
	}
	json_object_set_new(reply, "conn", conn_json(m, k));
	return 0;
}

int
roced_cmd_cm_accept(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roced_cm *m = cm_of(arg, reply);
	uint8_t pdata[ROCE_CM_REP_PDATA_LEN];
	struct roce_cm_accept_params p;
	struct roce_cm_qp_attr qa;
	struct roce_dp_qp_info q;
	struct cm_conn *k;
	int ret, n = 0;

	if (m == NULL)
		return -ENODEV;
	if ((ret = arg_conn(m, req, reply, &k)) < 0 || (ret = roced_arg_qp(st, req, reply, &q)) < 0)
		return ret;
	if (k->active || k->qpn != 0 || roce_cm_conn_state(k->c) != ROCE_CM_REQ_RCVD)
		return roce_ctl_error(reply, -EINVAL, "connection %u: not a request waiting for "
				"an answer", k->id);
	if (q.init.qp_type != ROCE_QPT_RC || q.attr.qp_state != ROCE_QPS_INIT || q.port != k->port)
		return roce_ctl_error(reply, -EINVAL, "QP 0x%06x: an RC QP in INIT on port %u "
				"accepts", q.qpn, k->port);
	memset(&p, 0, sizeof(p));
	p.rnr_retry_count = 7;
	if ((ret = roce_cm_conn_qp_attr(k->c, &qa)) != 0)
		return roce_ctl_error(reply, ret, "connection %u: %s", k->id, strerror(-ret));
	/* librdmacm's defaults: the REQ's, crossed (roce_cm_accept_params_init()). */
	p.responder_resources = qa.max_dest_rd_atomic;
	p.initiator_depth = qa.max_rd_atomic;
	if ((ret = arg_rd(req, reply, &p.responder_resources, &p.initiator_depth)) < 0 ||
			(n = arg_pdata(req, reply, pdata, sizeof(pdata))) < 0)
		return ret < 0 ? ret : n;
	p.private_data = pdata;
	p.private_data_len = (size_t)n;
	k->qpn = q.qpn;
	ret = accept_conn(m, k, &p);
	if (ret != 0) {
		k->qpn = 0;
		return roce_ctl_error(reply, ret, "cannot accept: %s", strerror(-ret));
	}
	json_object_set_new(reply, "conn", conn_json(m, k));
	return 0;
}

int
roced_cmd_cm_reject(void *arg, json_t *req, json_t *reply)
{
	struct roced_cm *m = cm_of(arg, reply);
	uint8_t pdata[ROCE_CM_REJ_PDATA_LEN];
	uint32_t reason = ROCE_CM_REJ_CONSUMER_DEFINED;
	struct cm_conn *k;
	int ret, n = 0;

	if (m == NULL)
		return -ENODEV;
	if ((ret = arg_conn(m, req, reply, &k)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "reason", &reason, false, 1, 33)) < 0 ||
			(n = arg_pdata(req, reply, pdata, sizeof(pdata))) < 0)
		return ret < 0 ? ret : n;
	ret = roce_cm_reject(k->c, (uint16_t)reason, NULL, 0, pdata, (size_t)n, roce_dp_now());
	if (ret != 0)
		return roce_ctl_error(reply, ret, "connection %u: in %s, nothing to reject", k->id,
				roce_cm_state_name(roce_cm_conn_state(k->c)));
	conn_release(m, k);
	return 0;
}

int
roced_cmd_cm_disconnect(void *arg, json_t *req, json_t *reply)
{
	struct roced_cm *m = cm_of(arg, reply);
	struct cm_conn *k;
	int ret;

	if (m == NULL)
		return -ENODEV;
	if ((ret = arg_conn(m, req, reply, &k)) < 0)
		return ret;
	/* Before established there is nothing to disconnect: the handle goes (a REJ). */
	if (roce_cm_conn_state(k->c) < ROCE_CM_ESTABLISHED) {
		roce_cm_destroy(k->c, roce_dp_now());
		conn_release(m, k);
		return 0;
	}
	qp_error(m, k->qpn);
	ret = roce_cm_disconnect(k->c, NULL, 0, roce_dp_now());
	if (ret != 0)
		return roce_ctl_error(reply, ret, "connection %u: in %s, not connected", k->id,
				roce_cm_state_name(roce_cm_conn_state(k->c)));
	return 0;
}

static int
listen_json(void *arg, const struct roce_cm_listen_info *li)
{
	json_t *o = listen_obj(li->ctx);

	json_object_set_new(o, "pending", json_integer(li->pending));
	json_object_set_new(o, "requests", roce_ctl_u64(li->reqs));
	json_object_set_new(o, "dropped", roce_ctl_u64(li->dropped));
	json_array_append_new(arg, o);
	return 0;
}

int
roced_cmd_cm_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_cm *m = cm_of(arg, reply);
	json_t *ls = json_array(), *cs = json_array(), *cnt = json_object();
	struct roce_cm_stats s;
	unsigned int i;

	RTE_SET_USED(req);
	if (m == NULL) {
		json_decref(ls);
		json_decref(cs);
		json_decref(cnt);
		return -ENODEV;
	}
	roce_cm_listen_foreach(m->cm, listen_json, ls);
	for (i = 0; i < CM_MAX_CONNS; i++)
		if (m->conns[i].c != NULL)
			json_array_append_new(cs, conn_json(m, &m->conns[i]));
	roce_cm_stats(m->cm, &s);
	for (i = 0; i < ROCE_CM_CNT_MAX; i++)
		if (roce_cm_counter_name(i) != NULL)
			json_object_set_new(cnt, roce_cm_counter_name(i), roce_ctl_u64(s.cnt[i]));
	json_object_set_new(cnt, "established", roce_ctl_u64(s.established));
	json_object_set_new(cnt, "qp_errors", roce_ctl_u64(m->qp_errors));
	json_object_set_new(cnt, "not_bound", roce_ctl_u64(m->not_bound));
	json_object_set_new(reply, "listeners", ls);
	json_object_set_new(reply, "conns", cs);
	json_object_set_new(reply, "counters", cnt);
	json_object_set_new(reply, "orphans", json_integer((json_int_t)roce_cm_nb_conns(m->cm) -
			(json_int_t)json_array_size(cs)));
	return 0;
}

int
roced_cmd_cm_events(void *arg, json_t *req, json_t *reply)
{
	struct roced_cm *m = cm_of(arg, reply);
	uint64_t since = 0, first, lost, s;
	uint32_t max = 64, id = 0;
	json_t *list;
	int ret;

	if (m == NULL)
		return -ENODEV;
	if ((ret = roce_ctl_arg_u64(req, reply, "since", &since, false, 0, UINT64_MAX)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "max", &max, false, 1, CM_EVENTS)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "conn", &id, false, 1, UINT32_MAX)) < 0)
		return ret;
	first = m->seq >= CM_EVENTS ? m->seq - CM_EVENTS + 1 : 1;
	lost = since + 1 < first ? first - since - 1 : 0;
	list = json_array();
	for (s = RTE_MAX(since + 1, first); s <= m->seq && json_array_size(list) < max; s++) {
		const struct cm_event *e = &m->ev[s % CM_EVENTS];
		char ip[INET6_ADDRSTRLEN];
		json_t *o;

		since = s;
		if (id != 0 && e->id != id)
			continue;
		inet_ntop(e->v6 ? AF_INET6 : AF_INET, e->rip, ip, sizeof(ip));
		o = json_pack("{s:o, s:o, s:s, s:i, s:i, s:i, s:s, s:i}", "seq", roce_ctl_u64(e->seq),
				"time_ns", roce_ctl_u64(e->time_ns), "event", e->name, "conn", e->id,
				"qpn", e->qpn, "remote_qpn", e->rqpn, "remote_ip", ip,
				"service_port", e->tcp_port);
		if (e->type == ROCE_CM_EV_REJECTED)
			json_object_set_new(o, "reason", json_integer(e->reason));
		if (e->status != 0)
			json_object_set_new(o, "status", json_string(strerror(-e->status)));
		if (e->pdata_len != 0)
			json_object_set_new(o, "private_data", hex_json(e->pdata, e->pdata_len));
		json_array_append_new(list, o);
	}
	json_object_set_new(reply, "events", list);
	json_object_set_new(reply, "next", roce_ctl_u64(since));
	json_object_set_new(reply, "lost", roce_ctl_u64(lost));
	return 0;
}
