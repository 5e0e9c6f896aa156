/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cm's connection state machine: roce_cm instances wired to each other through a fake
 * network on a virtual clock. The whole exchange (REQ, REP, RTU, DREQ, DREP; REJ) with each
 * message lost once, duplicated and delayed past the resends (reordered): connections
 * established exactly once or failed with the right event, no events after a handle is
 * released, no slot left behind. Then the timers to exhaustion at their virtual times, REJ 8
 * for unknown services, stale connections, DREQs for nothing, MRA, backlog and slot limits,
 * malformed MADs counted. Last, the captured rdma_cm exchanges of rxe replayed in both roles:
 * what we send must be what rxe sent, field by field, communication IDs aside.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "roce_test.h"
#include "roce_classify.h"
#include "roce_opcode.h"
#include "roce_pcapfile.h"
#include "roce_pkt.h"
#include "roce_transport.h"
#include "roce_cm.h"

#define SEC 1000000000ull
#define MS 1000000ull
#define NB_SIDES 4
#define MAX_PKTS 2048
#define MAX_HANDLES 64
#define LATENCY (50 * 1000ull)	/* 50 us one way */

/* ------------------------------------------------------------------ the fake network */

enum fault { F_PASS, F_DROP, F_DUP, F_DELAY };
static const char *const fault_names[] = { "pass", "drop", "dup", "delay" };
#define DELAY (7 * SEC)		/* past the REQ's (6.1 s) and REP's (4.1 s) resends */

struct pkt {
	uint64_t at;
	uint64_t seq;
	int to;
	struct roce_cm_addr src;
	uint8_t mad[ROCE_MAD_SIZE];
};

enum policy { P_ACCEPT, P_REJECT, P_IGNORE, P_MRA };

struct side {
	struct roce_cm *cm;
	uint8_t ip[4];
	uint64_t guid;
	enum policy policy;
	uint32_t qpn, psn;
	uint8_t rr, id;			/* what it accepts with / connects with */
	unsigned int ev[ROCE_CM_EV_MAX];
	struct roce_cm_conn *handles[MAX_HANDLES];
	unsigned int nb_handles;
	unsigned int stray;		/* events for handles not live */
	struct roce_cm_conn *last;	/* the last handle an event named */
	struct roce_cm_qp_attr est_qp;
	uint64_t est_at, timeout_at, exit_at;
	uint16_t rej_reason, timeout_attr;
	int disc_status;
	uint8_t sent_last[ROCE_MAD_SIZE];	/* the last MAD it sent */
	unsigned int nb_sent;
	int auto_disconnect;		/* answer a DREQ with roce_cm_disconnect() */
	int no_qp_check;		/* its QPNs and PSNs are not qpn and psn */
	struct roce_cm_req_info req;	/* the last REQ event's */
};

static struct side sides[NB_SIDES];
static struct pkt q[MAX_PKTS];
static unsigned int nq;
static uint64_t seq, now;
/* The fault: applied to the @f_occ-th message of attribute @f_attr on the network. */
static uint16_t f_attr;
static unsigned int f_occ, f_seen;
static enum fault f_what;
static int net_down[NB_SIDES];	/* everything to this side is lost */

static int
side_of_gid(const uint8_t gid[16])
{
	int i;

	for (i = 0; i < NB_SIDES; i++)
		if (sides[i].cm != NULL && memcmp(gid + 12, sides[i].ip, 4) == 0)
			return i;
	return -1;
}

static void
gid_of(uint8_t gid[16], const uint8_t ip[4])
{
	roce_cma_ip4_mapped(gid, ip);
}

static void
enqueue(int to, const struct roce_cm_addr *src, const uint8_t *mad, uint64_t at)
{
	if (nq == MAX_PKTS) {
		RT_CHECK(0, "network queue full");
		return;
	}
	q[nq].at = at;
	q[nq].seq = seq++;
	q[nq].to = to;
	q[nq].src = *src;
	memcpy(q[nq].mad, mad, ROCE_MAD_SIZE);
	nq++;
}

static int
net_send(void *ctx, const struct roce_cm_addr *dest, const uint8_t *mad)
{
	struct side *s = ctx;
	struct roce_cm_addr src;
	int to = side_of_gid(dest->remote_gid);
	uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);
	enum fault f = F_PASS;

	memcpy(s->sent_last, mad, ROCE_MAD_SIZE);
	s->nb_sent++;
	RT_CHECK(dest->remote_qpn == 1 && dest->qkey == ROCE_CM_QP1_QKEY &&
			dest->pkey == ROCE_CM_DEFAULT_PKEY && dest->port == 1,
			"MADs go to QP1 (qpn %u qkey %#x)", dest->remote_qpn, dest->qkey);
	RT_CHECK(memcmp(dest->local_gid + 12, s->ip, 4) == 0, "sent from our own GID");
	if (to < 0 || net_down[to])
		return 0;	/* lost on the way */
	if (attr == f_attr && ++f_seen == f_occ)
		f = f_what;
	memset(&src, 0, sizeof(src));
	src.port = 1;
	memcpy(src.local_gid, dest->remote_gid, 16);
	memcpy(src.remote_gid, dest->local_gid, 16);
	src.remote_qpn = 1;
	src.qkey = ROCE_CM_QP1_QKEY;
	src.pkey = ROCE_CM_DEFAULT_PKEY;
	src.remote_mac[5] = (uint8_t)(s - sides + 1);
	switch (f) {
	case F_DROP:
		break;
	case F_DUP:
		enqueue(to, &src, mad, now + LATENCY);
		enqueue(to, &src, mad, now + LATENCY + 1000);
		break;
	case F_DELAY:
		enqueue(to, &src, mad, now + DELAY);
		break;
	default:
		enqueue(to, &src, mad, now + LATENCY);
		break;
	}
	return 0;
}

static int
handle_idx(const struct side *s, const struct roce_cm_conn *c)
{
	unsigned int i;

	for (i = 0; i < s->nb_handles; i++)
		if (s->handles[i] == c)
			return (int)i;
	return -1;
}

static void
handle_drop(struct side *s, const struct roce_cm_conn *c)
{
	int i = handle_idx(s, c);

	if (i >= 0)
		s->handles[i] = s->handles[--s->nb_handles];
}

static void
handle_add(struct side *s, struct roce_cm_conn *c)
{
	if (s->nb_handles < MAX_HANDLES)
		s->handles[s->nb_handles++] = c;
}

/* The crossing librdmacm expects, checked on both ends once established. */
static void
check_qp(const struct side *s, const struct roce_cm_qp_attr *a)
{
	RT_CHECK(a->qp_num == s->qpn && a->rq_psn == s->psn, "%s: our QPN %#x and PSN %#x",
			s->ip[3] == 1 ? "A" : "B", a->qp_num, a->rq_psn);
	RT_CHECK(a->path_mtu == 3 && a->retry_cnt == 7 && a->rnr_retry == 7 &&
			a->min_rnr_timer == 0 && a->timeout == 19 && a->port == 1,
			"mtu %u retry %u rnr %u timer %u timeout %u", a->path_mtu, a->retry_cnt,
			a->rnr_retry, a->min_rnr_timer, a->timeout);
	RT_CHECK(memcmp(a->route.local_gid + 12, s->ip, 4) == 0 &&
			side_of_gid(a->route.remote_gid) >= 0 &&
			side_of_gid(a->route.remote_gid) != s - sides, "route's GIDs");
	RT_CHECK(a->qp_access_flags == (ROCE_CM_ACCESS_REMOTE_WRITE |
			(a->max_dest_rd_atomic ? ROCE_CM_ACCESS_REMOTE_READ |
			ROCE_CM_ACCESS_REMOTE_ATOMIC : 0)), "access %#x", a->qp_access_flags);
}

static void
on_event(void *ctx, const struct roce_cm_event *ev)
{
	struct side *s = ctx;
	struct roce_cm_conn *c = ev->conn;
	struct roce_cm_accept_params ap;

	RT_CHECK(ev->type < ROCE_CM_EV_MAX, "event type %d", ev->type);
	s->ev[ev->type]++;
	s->last = c;
	if (ev->type == ROCE_CM_EV_REQ)
		handle_add(s, c);
	else if (handle_idx(s, c) < 0)
		s->stray++;
	switch (ev->type) {
	case ROCE_CM_EV_REQ:
		RT_CHECK(ev->req != NULL && ev->req->remote_qpn != 0 &&
				ev->req->src.remote_qpn == 1 && ev->conn_ctx == s,
				"REQ event complete");
		s->req = *ev->req;
		RT_CHECK(ev->qp.max_dest_rd_atomic == ev->req->responder_resources &&
				ev->qp.max_rd_atomic == ev->req->initiator_depth &&
				ev->qp.dest_qp_num == ev->req->remote_qpn &&
				ev->qp.sq_psn == ev->req->starting_psn, "REQ event's QP attrs");
		switch (s->policy) {
		case P_ACCEPT:
			roce_cm_accept_params_init(&ap, ev->req);
			ap.qp_num = s->qpn;
			ap.starting_psn = s->psn;
			ap.responder_resources = s->rr;
			ap.initiator_depth = s->id;
			RT_CHECK(roce_cm_accept(c, &ap, now) == 0, "accept");
			break;
		case P_REJECT:
			RT_CHECK(roce_cm_reject(c, ROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, "no", 2,
					now) == 0, "reject");
			handle_drop(s, c);
			break;
		case P_MRA:
			RT_CHECK(roce_cm_mra(c, 24, now) == 0, "MRA");
			break;
		default:
			break;
		}
		break;
	case ROCE_CM_EV_REP:
		if (s->policy != P_IGNORE)
			RT_CHECK(roce_cm_rtu(c, NULL, 0, now) == 0, "RTU");
		break;
	case ROCE_CM_EV_ESTABLISHED:
		s->est_qp = ev->qp;
		s->est_at = now;
		if (!s->no_qp_check)
			check_qp(s, &ev->qp);
		break;
	case ROCE_CM_EV_DREQ:
		if (s->auto_disconnect)
			RT_CHECK(roce_cm_disconnect(c, NULL, 0, now) == 0, "DREP");
		break;
	case ROCE_CM_EV_REJECTED:
		s->rej_reason = ev->rej_reason;
		break;
	case ROCE_CM_EV_TIMEOUT:
		if (s->timeout_at == 0)
			s->timeout_at = now;
		s->timeout_attr = ev->timed_out_attr;
		break;
	case ROCE_CM_EV_DISCONNECTED:
		s->disc_status = ev->status;
		break;
	case ROCE_CM_EV_TIMEWAIT_EXIT:
		s->exit_at = now;
		break;
	default:
		break;
	}
	if (ev->released)
		handle_drop(s, c);
}

static const struct roce_cm_ops ops = { .send = net_send, .event = on_event };

static void
side_init(int i, uint32_t max_conns, uint32_t seed)
{
	struct side *s = &sides[i];
	struct roce_cm_conf conf = {
		.max_conns = max_conns, .max_listeners = 4, .hi_tid = 2,
		.ack_delay = ROCE_CM_RXE_ACK_DELAY, .seed = seed,
	};

	if (s->cm != NULL)
		roce_cm_free(s->cm);
	memset(s, 0, sizeof(*s));
	s->ip[0] = 10;
	s->ip[3] = (uint8_t)(i + 1);
	s->guid = 0x0200000000000000ull | (uint64_t)(i + 1);
	s->qpn = 0x100 * (i + 1) + 0x11;
	s->psn = 0x10000 * (i + 1) + 0x123;
	s->rr = 1;
	s->id = 1;
	s->auto_disconnect = 1;
	conf.ca_guid = s->guid;
	s->cm = roce_cm_create(&conf, &ops, s);
	RT_CHECK(s->cm != NULL, "roce_cm_create");
}

static void
net_reset(void)
{
	int i;

	for (i = 0; i < NB_SIDES; i++) {
		if (sides[i].cm != NULL)
			roce_cm_free(sides[i].cm);
		memset(&sides[i], 0, sizeof(sides[i]));
		net_down[i] = 0;
	}
	nq = 0;
	now = 1000 * SEC;	/* any origin */
	f_attr = 0;
	f_occ = 0;
	f_seen = 0;
	f_what = F_PASS;
}

static uint64_t
next_event_time(void)
{
	uint64_t t = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < nq; i++)
		if (q[i].at < t)
			t = q[i].at;
	for (i = 0; i < NB_SIDES; i++)
		if (sides[i].cm != NULL) {
			uint64_t d = roce_cm_next_deadline(sides[i].cm);

			if (d < t)
				t = d;
		}
	return t;
}

/* Run the virtual clock to @until: packets delivered and timers run in time order. */
static void
run_until(uint64_t until)
{
	for (;;) {
		uint64_t t = next_event_time();
		unsigned int i, best = 0;
		int found = 0;

		if (t > until)
			break;
		now = t;
		for (i = 0; i < nq; i++) {
			if (q[i].at > now)
				continue;
			if (!found || q[i].seq < q[best].seq)
				best = i;
			found = 1;
		}
		if (found) {
			struct pkt p = q[best];

			q[best] = q[--nq];
			if (sides[p.to].cm != NULL)
				roce_cm_input(sides[p.to].cm, &p.src, p.mad, ROCE_MAD_SIZE, now);
			continue;
		}
		for (i = 0; i < NB_SIDES; i++)
			if (sides[i].cm != NULL)
				roce_cm_tick(sides[i].cm, now);
	}
	if (until > now)
		now = until;
}

static void
run_for(uint64_t d)
{
	run_until(now + d);
}

static void
connect_params(struct roce_cm_connect_params *p, int from, int to, uint16_t port)
{
	struct roce_cma_hdr h;
	static uint8_t pd[ROCE_CM_REQ_PDATA_LEN];

	roce_cm_connect_params_init(p);
	gid_of(p->dest.local_gid, sides[from].ip);
	gid_of(p->dest.remote_gid, sides[to].ip);
	memcpy(p->route.local_gid, p->dest.local_gid, 16);
	memcpy(p->route.remote_gid, p->dest.remote_gid, 16);
	p->route.flow_label = roce_cma_flow_label(40000, port);
	p->service_id = ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_TCP, port);
	p->qp_num = sides[from].qpn;
	p->starting_psn = sides[from].psn;
	p->responder_resources = sides[from].rr;
	p->initiator_depth = sides[from].id;
	memset(&h, 0, sizeof(h));
	h.ip_version = 4;
	h.port = 40000;
	memcpy(h.src_addr, p->dest.local_gid, 16);
	memcpy(h.dst_addr, p->dest.remote_gid, 16);
	memset(pd, 0, sizeof(pd));
	RT_CHECK(roce_cma_hdr_build(&h, pd, sizeof(pd)) == ROCE_CMA_HDR_LEN, "cma_hdr");
	pd[ROCE_CMA_HDR_LEN] = 0x5A;
	p->private_data = pd;
	p->private_data_len = sizeof(pd);
}

static struct roce_cm_conn *
do_connect(int from, int to, uint16_t port)
{
	struct roce_cm_connect_params p;
	struct roce_cm_conn *c = NULL;

	connect_params(&p, from, to, port);
	RT_CHECK(roce_cm_connect(sides[from].cm, &p, &sides[from], now, &c) == 0 && c != NULL,
			"connect");
	if (c != NULL)
		handle_add(&sides[from], c);
	return c;
}

static uint64_t
stat_cnt(int side, enum roce_cm_counter c)
{
	struct roce_cm_stats st;

	roce_cm_stats(sides[side].cm, &st);
	return st.cnt[c];
}

static uint64_t
stat_tx(int side, uint16_t attr, int retries)
{
	struct roce_cm_stats st;

	roce_cm_stats(sides[side].cm, &st);
	return retries ? st.tx_retries[attr - ROCE_CM_ATTR_REQ] : st.tx[attr - ROCE_CM_ATTR_REQ];
}

/* ------------------------------------------------------------------ the exchange */

#define A 0
#define B 1
#define PORT 7174

static void
setup_pair(void)
{
	net_reset();
	side_init(A, 16, 1);
	side_init(B, 16, 2);
	RT_CHECK(roce_cm_listen(sides[B].cm, ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_TCP, PORT), 8,
			&sides[B]) == 0, "listen");
}

/* Connect, wait until both ends are established (or a minute), A disconnects, wait for
 * time wait to end everywhere. */
static void
exchange(const char *what)
{
	struct roce_cm_conn *c;
	uint64_t t0 = now;
	unsigned int i;

	c = do_connect(A, B, PORT);
	for (i = 0; i < 600 && (sides[A].ev[ROCE_CM_EV_ESTABLISHED] == 0 ||
			sides[B].ev[ROCE_CM_EV_ESTABLISHED] == 0); i++)
		run_for(100 * MS);
	RT_CHECK(sides[A].ev[ROCE_CM_EV_ESTABLISHED] == 1 &&
			sides[B].ev[ROCE_CM_EV_ESTABLISHED] == 1,
			"%s: established once each (A %u, B %u)", what,
			sides[A].ev[ROCE_CM_EV_ESTABLISHED], sides[B].ev[ROCE_CM_EV_ESTABLISHED]);
	RT_CHECK(sides[A].est_qp.dest_qp_num == sides[B].qpn &&
			sides[B].est_qp.dest_qp_num == sides[A].qpn &&
			sides[A].est_qp.sq_psn == sides[B].psn &&
			sides[B].est_qp.sq_psn == sides[A].psn, "%s: QPNs and PSNs crossed", what);
	/* What the network still holds (a delayed copy) arrives while established. */
	run_for(DELAY + SEC);
	if (c != NULL && handle_idx(&sides[A], c) >= 0)
		RT_CHECK(roce_cm_disconnect(c, NULL, 0, now) == 0, "%s: disconnect", what);
	run_for(120 * SEC);
	RT_CHECK(sides[A].ev[ROCE_CM_EV_REP] == 1 && sides[B].ev[ROCE_CM_EV_REQ] == 1 &&
			sides[B].ev[ROCE_CM_EV_DREQ] == 1 &&
			sides[A].ev[ROCE_CM_EV_DISCONNECTED] == 1 &&
			sides[A].ev[ROCE_CM_EV_TIMEWAIT_EXIT] == 1 &&
			sides[B].ev[ROCE_CM_EV_TIMEWAIT_EXIT] == 1,
			"%s: REP %u REQ %u DREQ %u DISCONNECTED %u exits %u/%u", what,
			sides[A].ev[ROCE_CM_EV_REP], sides[B].ev[ROCE_CM_EV_REQ],
			sides[B].ev[ROCE_CM_EV_DREQ], sides[A].ev[ROCE_CM_EV_DISCONNECTED],
			sides[A].ev[ROCE_CM_EV_TIMEWAIT_EXIT],
			sides[B].ev[ROCE_CM_EV_TIMEWAIT_EXIT]);
	RT_CHECK(sides[A].disc_status == 0, "%s: DREQ answered", what);
	for (i = 0; i < 2; i++) {
		struct side *s = &sides[i];

		RT_CHECK(s->ev[ROCE_CM_EV_REJECTED] == 0 && s->ev[ROCE_CM_EV_TIMEOUT] == 0 &&
				s->stray == 0 && s->nb_handles == 0,
				"%s: side %u: rejected %u timeout %u stray %u handles %u", what, i,
				s->ev[ROCE_CM_EV_REJECTED], s->ev[ROCE_CM_EV_TIMEOUT], s->stray,
				s->nb_handles);
		RT_CHECK(roce_cm_nb_conns(s->cm) == 0 && roce_cm_next_deadline(s->cm) ==
				UINT64_MAX, "%s: side %u: no connection left (%u)", what, i,
				roce_cm_nb_conns(s->cm));
	}
	RT_CHECK(nq == 0, "%s: network drained", what);
	(void)t0;
}

static void
test_clean_exchange(void)
{
	struct roce_cm_stats st;

	setup_pair();
	exchange("clean");
	roce_cm_stats(sides[A].cm, &st);
	RT_CHECK(st.tx[0] == 1 && st.tx[ROCE_CM_ATTR_RTU - 0x10] == 1 &&
			st.tx[ROCE_CM_ATTR_DREQ - 0x10] == 1 &&
			st.rx[ROCE_CM_ATTR_REP - 0x10] == 1 &&
			st.rx[ROCE_CM_ATTR_DREP - 0x10] == 1 && st.established == 1,
			"A's counters: one of each");
	roce_cm_stats(sides[B].cm, &st);
	RT_CHECK(st.tx[ROCE_CM_ATTR_REP - 0x10] == 1 && st.tx[ROCE_CM_ATTR_DREP - 0x10] == 1 &&
			st.rx[0] == 1 && st.established == 1, "B's counters: one of each");
	RT_CHECK(sides[A].est_qp.max_rd_atomic == 1 && sides[A].est_qp.max_dest_rd_atomic == 1,
			"rd_atomic");
}

/* Each message of the exchange dropped, duplicated and delayed once. */
static void
test_faults(void)
{
	static const uint16_t attrs[] = { ROCE_CM_ATTR_REQ, ROCE_CM_ATTR_REP, ROCE_CM_ATTR_RTU,
		ROCE_CM_ATTR_DREQ, ROCE_CM_ATTR_DREP };
	unsigned int a, f, occ;

	for (a = 0; a < RTE_DIM(attrs); a++) {
		for (f = F_DROP; f <= F_DELAY; f++) {
			for (occ = 1; occ <= 2; occ++) {
				char what[64];

				snprintf(what, sizeof(what), "%s #%u %s",
						roce_cm_attr_name(attrs[a]), occ, fault_names[f]);
				setup_pair();
				f_attr = attrs[a];
				f_occ = occ;
				f_what = (enum fault)f;
				exchange(what);
				/* A duplicate REQ has the REP resent at once. */
				if (attrs[a] == ROCE_CM_ATTR_REQ && occ == 1 && f == F_DUP)
					RT_CHECK(stat_tx(B, ROCE_CM_ATTR_REP, 1) == 1 &&
							stat_tx(A, ROCE_CM_ATTR_RTU, 1) == 1,
							"%s: REP and RTU resent once", what);
				if (attrs[a] == ROCE_CM_ATTR_DREQ && occ == 1 && f == F_DROP)
					RT_CHECK(stat_cnt(B, ROCE_CM_CNT_DREQ_UNKNOWN) == 0 &&
							stat_tx(A, ROCE_CM_ATTR_DREQ, 1) == 1,
							"%s: one DREQ resent", what);
				if (attrs[a] == ROCE_CM_ATTR_DREP && occ == 1 && f == F_DROP)
					RT_CHECK(stat_cnt(B, ROCE_CM_CNT_DREQ_UNKNOWN) == 1,
							"%s: resent DREQ finds nothing", what);
			}
		}
	}
}

/* Asymmetric rd_atomic: what A may have in flight is what B accepts, and the other way. */
static void
test_crossing(void)
{
	setup_pair();
	sides[A].rr = 4;
	sides[A].id = 2;
	sides[B].rr = 2;
	sides[B].id = 0;
	do_connect(A, B, PORT);
	run_for(SEC);
	RT_CHECK(sides[A].est_qp.max_rd_atomic == 2 && sides[A].est_qp.max_dest_rd_atomic == 0 &&
			sides[B].est_qp.max_rd_atomic == 0 &&
			sides[B].est_qp.max_dest_rd_atomic == 2,
			"A rd %u dest %u, B rd %u dest %u", sides[A].est_qp.max_rd_atomic,
			sides[A].est_qp.max_dest_rd_atomic, sides[B].est_qp.max_rd_atomic,
			sides[B].est_qp.max_dest_rd_atomic);
	RT_CHECK(sides[B].req.responder_resources == 2 && sides[B].req.initiator_depth == 4,
			"REQ info crossed: %u %u", sides[B].req.responder_resources,
			sides[B].req.initiator_depth);
	RT_CHECK(sides[A].est_qp.qp_access_flags == ROCE_CM_ACCESS_REMOTE_WRITE,
			"no responder resources: no remote read");
	RT_CHECK(ROCE_CM_ACCESS_REMOTE_WRITE == ROCE_ACCESS_REMOTE_WRITE &&
			ROCE_CM_ACCESS_REMOTE_READ == ROCE_ACCESS_REMOTE_READ &&
			ROCE_CM_ACCESS_REMOTE_ATOMIC == ROCE_ACCESS_REMOTE_ATOMIC &&
			sides[A].est_qp.path_mtu == ROCE_MTU_1024, "lib/transport's values");
}

/* The REQ with nobody there: sent 1 + 15 times, 6.144 s apart, then TIMEOUT. */
static void
test_req_timeout(void)
{
	uint64_t t0;
	uint64_t to = 2 * roce_cm_timeout_ns(ROCE_CM_CMA_PACKET_LIFETIME) +
		roce_cm_timeout_ns(ROCE_CM_CMA_RESPONSE_TIMEOUT);

	setup_pair();
	net_down[B] = 1;
	t0 = now;
	do_connect(A, B, PORT);
	RT_CHECK(to == 6144 * MS, "REQ timeout %" PRIu64, to);
	run_for(200 * SEC);
	RT_CHECK(sides[A].ev[ROCE_CM_EV_TIMEOUT] == 1 &&
			sides[A].timeout_attr == ROCE_CM_ATTR_REQ &&
			sides[A].timeout_at - t0 == 16 * to,
			"timeout after %" PRIu64 " ns, want %" PRIu64,
			sides[A].timeout_at - t0, 16 * to);
	RT_CHECK(stat_tx(A, ROCE_CM_ATTR_REQ, 0) == 16 && stat_tx(A, ROCE_CM_ATTR_REQ, 1) == 15 &&
			stat_cnt(A, ROCE_CM_CNT_TIMEOUT_REQ) == 1, "16 REQs, 15 of them resends");
	RT_CHECK(roce_cm_nb_conns(sides[A].cm) == 0 && sides[A].nb_handles == 0,
			"the slot is free");
}

/* The REP never reaches A: B resends it every 4.096 s (the REQ's local CM response
 * timeout), and times out after 16; A times out on its REQ. */
static void
test_rep_timeout(void)
{
	uint64_t t0;

	setup_pair();
	net_down[A] = 1;
	t0 = now;
	do_connect(A, B, PORT);
	run_for(200 * SEC);
	RT_CHECK(sides[B].ev[ROCE_CM_EV_TIMEOUT] >= 1 &&
			sides[B].timeout_attr == ROCE_CM_ATTR_REP &&
			sides[B].timeout_at - t0 == LATENCY + 16 * 4096 * MS,
			"REP timeout after %" PRIu64, sides[B].timeout_at - t0);
	RT_CHECK(sides[A].ev[ROCE_CM_EV_TIMEOUT] == 1 &&
			sides[A].timeout_attr == ROCE_CM_ATTR_REQ, "and the REQ's");
	/* The REQ's resends that found B in REP_SENT had the REP resent too. */
	RT_CHECK(stat_tx(B, ROCE_CM_ATTR_REP, 0) > 16 &&
			stat_cnt(B, ROCE_CM_CNT_DUPLICATE) > 0, "REP resent for duplicate REQs");
	RT_CHECK(roce_cm_nb_conns(sides[A].cm) == 0 && roce_cm_nb_conns(sides[B].cm) == 0,
			"no slot left");
}

/* B rejects: A gets REJECTED once, whatever happens to the REJ. */
static void
test_reject(void)
{
	unsigned int f;

	for (f = F_PASS; f <= F_DELAY; f++) {
		setup_pair();
		sides[B].policy = P_REJECT;
		f_attr = ROCE_CM_ATTR_REJ;
		f_occ = 1;
		f_what = (enum fault)f;
		do_connect(A, B, PORT);
		run_for(60 * SEC);
		RT_CHECK(sides[A].ev[ROCE_CM_EV_REJECTED] == 1 &&
				sides[A].rej_reason == ROCE_CM_REJ_CONSUMER_DEFINED &&
				sides[A].ev[ROCE_CM_EV_TIMEOUT] == 0 &&
				sides[A].ev[ROCE_CM_EV_REP] == 0,
				"REJ %s: rejected %u (reason %u)", fault_names[f],
				sides[A].ev[ROCE_CM_EV_REJECTED], sides[A].rej_reason);
		RT_CHECK(roce_cm_nb_conns(sides[A].cm) == 0 && roce_cm_nb_conns(sides[B].cm) == 0 &&
				sides[A].nb_handles == 0 && sides[A].stray == 0 &&
				sides[B].stray == 0,
				"REJ %s: nothing left", fault_names[f]);
		if (f == F_DUP)
			RT_CHECK(stat_cnt(A, ROCE_CM_CNT_UNKNOWN_CONN) == 1, "the copy: unknown");
	}
}

/* No listener: REJ reason 8 (cm_match_req()). */
static void
test_no_listener(void)
{
	setup_pair();
	do_connect(A, B, PORT + 1);
	run_for(SEC);
	RT_CHECK(sides[A].ev[ROCE_CM_EV_REJECTED] == 1 &&
			sides[A].rej_reason == ROCE_CM_REJ_INVALID_SERVICE_ID,
			"REJ reason %u", sides[A].rej_reason);
	RT_CHECK(stat_cnt(B, ROCE_CM_CNT_NO_LISTENER) == 1 && roce_cm_nb_conns(sides[B].cm) == 0 &&
			roce_cm_nb_conns(sides[A].cm) == 0, "counted, nothing kept");
	RT_CHECK(roce_cm_unlisten(sides[B].cm, ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_TCP, PORT)) == 0 &&
			roce_cm_unlisten(sides[B].cm, 5) == -ENOENT, "unlisten");
	RT_CHECK(roce_cm_listen(sides[B].cm, 7, 0, NULL) == -EINVAL &&
			roce_cm_listen(sides[B].cm, 7, 1, NULL) == 0 &&
			roce_cm_listen(sides[B].cm, 7, 1, NULL) == -EADDRINUSE, "listen refusals");
}

/* A restarts (same CA GUID, same QPN) while its old connection is up at B: the new REQ is
 * refused as stale (REJ 10) and B disconnects the old one. */
static void
test_stale(void)
{
	setup_pair();
	side_init(2, 16, 3);
	/* Side 2 is A after a restart: another IP would do, the GUID and QPN are what count. */
	sides[2].guid = sides[A].guid;
	roce_cm_free(sides[2].cm);
	{
		struct roce_cm_conf conf = { .max_conns = 4, .max_listeners = 1, .hi_tid = 2,
			.ack_delay = 15, .seed = 9, .ca_guid = sides[A].guid };

		sides[2].cm = roce_cm_create(&conf, &ops, &sides[2]);
	}
	sides[2].qpn = sides[A].qpn;
	sides[A].auto_disconnect = 1;
	do_connect(A, B, PORT);
	run_for(SEC);
	RT_CHECK(sides[B].ev[ROCE_CM_EV_ESTABLISHED] == 1, "first connection up");
	do_connect(2, B, PORT);
	run_for(SEC);
	RT_CHECK(sides[2].ev[ROCE_CM_EV_REJECTED] == 1 &&
			sides[2].rej_reason == ROCE_CM_REJ_STALE_CONN, "REJ stale (reason %u)",
			sides[2].rej_reason);
	RT_CHECK(roce_cm_nb_conns(sides[2].cm) == 1 && sides[2].nb_handles == 0,
			"the rejected side waits in time wait without its handle");
	RT_CHECK(stat_cnt(B, ROCE_CM_CNT_STALE) == 1 && sides[A].ev[ROCE_CM_EV_DREQ] == 1 &&
			sides[B].ev[ROCE_CM_EV_DISCONNECTED] == 1, "old connection disconnected");
	run_for(30 * SEC);
	RT_CHECK(roce_cm_nb_conns(sides[A].cm) == 0 && roce_cm_nb_conns(sides[B].cm) == 0 &&
			roce_cm_nb_conns(sides[2].cm) == 0, "all gone after time wait");
	/* Now the restarted side connects. */
	do_connect(2, B, PORT);
	run_for(SEC);
	RT_CHECK(sides[2].ev[ROCE_CM_EV_ESTABLISHED] == 1 &&
			sides[B].ev[ROCE_CM_EV_ESTABLISHED] == 2,
			"then it connects");
}

/* A DREQ for no connection is answered with a DREP (cm_issue_drep()). */
static void
test_dreq_unknown(void)
{
	struct roce_cm_msg m, r;
	struct roce_cm_addr src;
	uint8_t mad[ROCE_MAD_SIZE];

	setup_pair();
	memset(&m, 0, sizeof(m));
	roce_cm_hdr_init(&m.hdr, ROCE_CM_ATTR_DREQ, 0x0000000212345678ull);
	m.dreq.local_comm_id = 0xAABBCCDD;
	m.dreq.remote_comm_id = 0x11223344;
	m.dreq.remote_qpn_eecn = 0x77;
	RT_CHECK(roce_cm_build(&m, mad, sizeof(mad)) == ROCE_MAD_SIZE, "DREQ built");
	memset(&src, 0, sizeof(src));
	src.port = 1;
	gid_of(src.local_gid, sides[B].ip);
	gid_of(src.remote_gid, sides[A].ip);
	src.remote_qpn = 1;
	src.qkey = ROCE_CM_QP1_QKEY;
	src.pkey = 0xFFFF;
	roce_cm_input(sides[B].cm, &src, mad, sizeof(mad), now);
	RT_CHECK(sides[B].nb_sent == 1 && roce_cm_parse(&r, sides[B].sent_last, ROCE_MAD_SIZE) ==
			ROCE_CM_OK && r.hdr.attr_id == ROCE_CM_ATTR_DREP &&
			r.hdr.tid == m.hdr.tid && r.drep.local_comm_id == 0x11223344 &&
			r.drep.remote_comm_id == 0xAABBCCDD, "DREP answers it");
	RT_CHECK(stat_cnt(B, ROCE_CM_CNT_DREQ_UNKNOWN) == 1 && roce_cm_nb_conns(sides[B].cm) == 0,
			"counted, no connection made");
}

/* MRA: B asks for time; A's REQ is not resent within it, then B accepts. */
static void
test_mra(void)
{
	setup_pair();
	sides[B].policy = P_MRA;
	do_connect(A, B, PORT);
	run_for(30 * SEC);
	RT_CHECK(roce_cm_conn_state(sides[A].handles[0]) == ROCE_CM_MRA_REQ_RCVD &&
			roce_cm_conn_state(sides[B].handles[0]) == ROCE_CM_MRA_REQ_SENT,
			"MRA_REQ_RCVD / MRA_REQ_SENT");
	RT_CHECK(stat_tx(A, ROCE_CM_ATTR_REQ, 1) == 0, "no REQ resent in 30 s");
	{
		struct roce_cm_accept_params ap = { .qp_num = sides[B].qpn,
			.starting_psn = sides[B].psn, .responder_resources = 1,
			.initiator_depth = 1, .rnr_retry_count = 7 };

		RT_CHECK(roce_cm_accept(sides[B].handles[0], &ap, now) == 0, "accept after MRA");
	}
	run_for(SEC);
	RT_CHECK(sides[A].ev[ROCE_CM_EV_ESTABLISHED] == 1 &&
			sides[B].ev[ROCE_CM_EV_ESTABLISHED] == 1, "established");
	/* Past the MRA's time (2^16 ms + 2 s) no REQ was resent either: the REP stopped it. */
	run_for(100 * SEC);
	RT_CHECK(stat_tx(A, ROCE_CM_ATTR_REQ, 1) == 0 && sides[A].ev[ROCE_CM_EV_TIMEOUT] == 0,
			"no timeout");
}

static int
copy_listen_info(void *arg, const struct roce_cm_listen_info *info)
{
	*(struct roce_cm_listen_info *)arg = *info;
	return 0;
}

/* The backlog bounds connections not yet established; over it REQs are dropped (and
 * retried by the peer); slots bound everything. */
static void
test_backlog(void)
{
	struct roce_cm_listen_info li;
	unsigned int i;

	net_reset();
	side_init(A, 16, 1);
	side_init(B, 3, 2);
	RT_CHECK(roce_cm_listen(sides[B].cm, ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_TCP, PORT), 2,
			&sides[B]) == 0, "listen, backlog 2");
	sides[B].policy = P_IGNORE;
	sides[A].no_qp_check = 1;
	sides[B].no_qp_check = 1;
	for (i = 0; i < 5; i++) {
		sides[A].qpn++;
		do_connect(A, B, PORT);
	}
	run_for(SEC);
	RT_CHECK(sides[B].ev[ROCE_CM_EV_REQ] == 2 && roce_cm_nb_conns(sides[B].cm) == 2 &&
			stat_cnt(B, ROCE_CM_CNT_BACKLOG_FULL) == 3, "2 pending, 3 dropped (%u)",
			sides[B].ev[ROCE_CM_EV_REQ]);
	RT_CHECK(roce_cm_listen_foreach(sides[B].cm, copy_listen_info, &li) == 1 &&
			li.pending == 2 && li.dropped == 3 && li.reqs == 2,
			"listener: pending %u dropped %" PRIu64, li.pending, li.dropped);
	/* Accept both: established, they no longer count; a resent REQ gets the third slot. */
	sides[B].policy = P_ACCEPT;
	for (i = 0; i < 2; i++) {
		struct roce_cm_accept_params ap = { .qp_num = 0x500 + i, .starting_psn = 1,
			.rnr_retry_count = 7 };

		RT_CHECK(roce_cm_accept(sides[B].handles[i], &ap, now) == 0, "accept %u", i);
	}
	run_for(20 * SEC);
	RT_CHECK(sides[B].ev[ROCE_CM_EV_ESTABLISHED] == 3 && roce_cm_nb_conns(sides[B].cm) == 3,
			"3 established (%u), all slots taken", sides[B].ev[ROCE_CM_EV_ESTABLISHED]);
	RT_CHECK(stat_cnt(B, ROCE_CM_CNT_CONNS_FULL) > 0, "then the slots are full (%" PRIu64 ")",
			stat_cnt(B, ROCE_CM_CNT_CONNS_FULL));
	run_for(200 * SEC);
	RT_CHECK(sides[A].ev[ROCE_CM_EV_TIMEOUT] == 2 && sides[A].ev[ROCE_CM_EV_ESTABLISHED] == 3,
			"the other two time out at A (%u)", sides[A].ev[ROCE_CM_EV_TIMEOUT]);
}

/* Garbage is counted under its reason and changes nothing; then a connection works. */
static void
test_malformed(void)
{
	struct roce_cm_addr src;
	struct roce_cm_msg m, r;
	uint8_t mad[ROCE_MAD_SIZE + 1];
	static const struct {
		unsigned int off;
		uint8_t val;
		enum roce_cm_counter cnt;
	} mods[] = {
		{ 0, 2, ROCE_CM_CNT_VERDICT(ROCE_CM_BAD_BASE_VERSION) },
		{ 1, 0x04, ROCE_CM_CNT_VERDICT(ROCE_CM_BAD_CLASS) },
		{ 2, 1, ROCE_CM_CNT_VERDICT(ROCE_CM_BAD_CLASS_VERSION) },
		{ 3, 0x81, ROCE_CM_CNT_VERDICT(ROCE_CM_BAD_METHOD) },
		{ 17, 0x1B, ROCE_CM_CNT_VERDICT(ROCE_CM_BAD_ATTR) },
		{ 17, 0x01, ROCE_CM_CNT_VERDICT(ROCE_CM_BAD_ATTR) },
	};
	unsigned int i;

	setup_pair();
	memset(&src, 0, sizeof(src));
	src.port = 1;
	gid_of(src.local_gid, sides[B].ip);
	gid_of(src.remote_gid, sides[A].ip);
	src.remote_qpn = 1;
	src.qkey = ROCE_CM_QP1_QKEY;
	src.pkey = ROCE_CM_DEFAULT_PKEY;
	memset(&m, 0, sizeof(m));
	roce_cm_hdr_init(&m.hdr, ROCE_CM_ATTR_RTU, 5);
	RT_CHECK(roce_cm_build(&m, mad, ROCE_MAD_SIZE) == ROCE_MAD_SIZE, "RTU");
	roce_cm_input(sides[B].cm, &src, mad, ROCE_MAD_SIZE - 1, now);
	roce_cm_input(sides[B].cm, &src, mad, ROCE_MAD_SIZE + 1, now);
	roce_cm_input(sides[B].cm, &src, mad, 0, now);
	RT_CHECK(stat_cnt(B, ROCE_CM_CNT_VERDICT(ROCE_CM_BAD_LEN)) == 3, "bad_len");
	for (i = 0; i < RTE_DIM(mods); i++) {
		uint8_t b[ROCE_MAD_SIZE];
		uint64_t before = stat_cnt(B, mods[i].cnt);

		memcpy(b, mad, sizeof(b));
		b[mods[i].off] = mods[i].val;
		roce_cm_input(sides[B].cm, &src, b, sizeof(b), now);
		RT_CHECK(stat_cnt(B, mods[i].cnt) == before + 1, "%s",
				roce_cm_counter_name(mods[i].cnt));
	}
	/* A REJ with an ARI length over 72. */
	memset(&m, 0, sizeof(m));
	roce_cm_hdr_init(&m.hdr, ROCE_CM_ATTR_REJ, 5);
	RT_CHECK(roce_cm_build(&m, mad, ROCE_MAD_SIZE) == ROCE_MAD_SIZE, "REJ");
	mad[ROCE_MAD_HDR_LEN + 9] = 0xFE;
	roce_cm_input(sides[B].cm, &src, mad, ROCE_MAD_SIZE, now);
	RT_CHECK(stat_cnt(B, ROCE_CM_CNT_VERDICT(ROCE_CM_BAD_FIELD)) == 1, "bad_field");
	/* Well-formed messages for nothing: counted, nothing sent. */
	{
		static const uint16_t attrs[] = { ROCE_CM_ATTR_MRA, ROCE_CM_ATTR_REJ,
			ROCE_CM_ATTR_REP, ROCE_CM_ATTR_RTU, ROCE_CM_ATTR_DREP };

		for (i = 0; i < RTE_DIM(attrs); i++) {
			memset(&m, 0, sizeof(m));
			roce_cm_hdr_init(&m.hdr, attrs[i], 5);
			m.rtu.local_comm_id = 0x99;	/* the same offset in every one */
			m.rtu.remote_comm_id = 0x12345;
			RT_CHECK(roce_cm_build(&m, mad, ROCE_MAD_SIZE) == ROCE_MAD_SIZE, "built");
			roce_cm_input(sides[B].cm, &src, mad, ROCE_MAD_SIZE, now);
		}
		RT_CHECK(stat_cnt(B, ROCE_CM_CNT_UNKNOWN_CONN) == RTE_DIM(attrs) &&
				sides[B].nb_sent == 0, "unknown_conn %" PRIu64,
				stat_cnt(B, ROCE_CM_CNT_UNKNOWN_CONN));
	}
	/* LAP and APR dropped; SIDR_REQ answered "unsupported"; SIDR_REP dropped. */
	memset(&m, 0, sizeof(m));
	roce_cm_hdr_init(&m.hdr, ROCE_CM_ATTR_LAP, 6);
	roce_cm_build(&m, mad, ROCE_MAD_SIZE);
	roce_cm_input(sides[B].cm, &src, mad, ROCE_MAD_SIZE, now);
	roce_cm_hdr_init(&m.hdr, ROCE_CM_ATTR_APR, 6);
	roce_cm_build(&m, mad, ROCE_MAD_SIZE);
	roce_cm_input(sides[B].cm, &src, mad, ROCE_MAD_SIZE, now);
	RT_CHECK(stat_cnt(B, ROCE_CM_CNT_ALT_PATH) == 2 && sides[B].nb_sent == 0, "alt_path");
	memset(&m, 0, sizeof(m));
	roce_cm_hdr_init(&m.hdr, ROCE_CM_ATTR_SIDR_REQ, 0x0000000200000042ull);
	m.sidr_req.request_id = 0x4242;
	m.sidr_req.service_id = ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_UDP, 7);
	roce_cm_build(&m, mad, ROCE_MAD_SIZE);
	roce_cm_input(sides[B].cm, &src, mad, ROCE_MAD_SIZE, now);
	RT_CHECK(sides[B].nb_sent == 1 && roce_cm_parse(&r, sides[B].sent_last, ROCE_MAD_SIZE) ==
			ROCE_CM_OK && r.hdr.attr_id == ROCE_CM_ATTR_SIDR_REP &&
			r.hdr.tid == m.hdr.tid && r.sidr_rep.request_id == 0x4242 &&
			r.sidr_rep.status == ROCE_CM_SIDR_UNSUPPORTED &&
			r.sidr_rep.service_id == m.sidr_req.service_id, "SIDR_REP unsupported");
	memset(&m, 0, sizeof(m));
	roce_cm_hdr_init(&m.hdr, ROCE_CM_ATTR_SIDR_REP, 6);
	roce_cm_build(&m, mad, ROCE_MAD_SIZE);
	roce_cm_input(sides[B].cm, &src, mad, ROCE_MAD_SIZE, now);
	RT_CHECK(stat_cnt(B, ROCE_CM_CNT_SIDR_REQ) == 1 && stat_cnt(B, ROCE_CM_CNT_SIDR_REP) == 1,
			"sidr counted");
	/* A UC REQ and a REQ with MTU code 7 are refused. */
	{
		struct roce_cm_connect_params p;
		struct roce_cm_conn *c;

		connect_params(&p, A, B, PORT);
		RT_CHECK(roce_cm_connect(sides[A].cm, &p, NULL, now, &c) == 0, "REQ");
		RT_CHECK(roce_cm_parse(&m, sides[A].sent_last, ROCE_MAD_SIZE) == ROCE_CM_OK, "REQ");
		nq = 0;
		roce_cm_destroy(c, now);
		nq = 0;
		m.req.transport_type = ROCE_CM_TRANSPORT_UC;
		roce_cm_build(&m, mad, ROCE_MAD_SIZE);
		roce_cm_input(sides[B].cm, &src, mad, ROCE_MAD_SIZE, now);
		RT_CHECK(roce_cm_parse(&r, sides[B].sent_last, ROCE_MAD_SIZE) == ROCE_CM_OK &&
				r.hdr.attr_id == ROCE_CM_ATTR_REJ &&
				r.rej.reason == ROCE_CM_REJ_CONSUMER_DEFINED &&
				r.rej.remote_comm_id == m.req.local_comm_id &&
				r.rej.message_rejected == ROCE_CM_MSG_REF_REQ, "UC: REJ 28");
		m.req.transport_type = ROCE_CM_TRANSPORT_RC;
		m.req.path_mtu = 7;
		roce_cm_build(&m, mad, ROCE_MAD_SIZE);
		roce_cm_input(sides[B].cm, &src, mad, ROCE_MAD_SIZE, now);
		RT_CHECK(roce_cm_parse(&r, sides[B].sent_last, ROCE_MAD_SIZE) == ROCE_CM_OK &&
				r.rej.reason == ROCE_CM_REJ_INVALID_MTU, "MTU 7: REJ 26");
		RT_CHECK(stat_cnt(B, ROCE_CM_CNT_BAD_REQ) == 2 &&
				roce_cm_nb_conns(sides[B].cm) == 0,
				"bad_req, nothing kept");
	}
	for (i = 0; i < ROCE_CM_CNT_MAX; i++)
		RT_CHECK(i == ROCE_CM_OK || roce_cm_counter_name(i) != NULL, "counter %u named", i);
	/* And it still serves. */
	nq = 0;
	sides[A].nb_handles = 0;
	exchange("after garbage");
}

/* The user's calls refuse what their state does not take, and bad parameters. */
static void
test_api_refusals(void)
{
	struct roce_cm_connect_params p;
	struct roce_cm_accept_params ap;
	struct roce_cm_conn *c = NULL;
	struct roce_cm_conf conf = { .max_conns = 0, .max_listeners = 1 };

	RT_CHECK(roce_cm_create(&conf, &ops, NULL) == NULL && errno == EINVAL, "0 slots");
	conf.max_conns = 1;
	RT_CHECK(roce_cm_create(&conf, NULL, NULL) == NULL, "no ops");
	setup_pair();
	connect_params(&p, A, B, PORT);
	p.private_data_len = ROCE_CM_REQ_PDATA_LEN + 1;
	RT_CHECK(roce_cm_connect(sides[A].cm, &p, NULL, now, &c) == -EINVAL, "pdata 93");
	connect_params(&p, A, B, PORT);
	p.qp_num = 1u << 24;
	RT_CHECK(roce_cm_connect(sides[A].cm, &p, NULL, now, &c) == -EINVAL, "QPN 25 bits");
	RT_CHECK(roce_cm_nb_conns(sides[A].cm) == 0 && sides[A].nb_sent == 0,
			"nothing kept, nothing sent");
	connect_params(&p, A, B, PORT);
	p.route.path_mtu = 6;
	RT_CHECK(roce_cm_connect(sides[A].cm, &p, NULL, now, &c) == -EINVAL, "MTU 6");
	connect_params(&p, A, B, PORT);
	RT_CHECK(roce_cm_connect(sides[A].cm, &p, NULL, now, &c) == 0, "connect");
	memset(&ap, 0, sizeof(ap));
	RT_CHECK(roce_cm_accept(c, &ap, now) == -EINVAL &&
			roce_cm_rtu(c, NULL, 0, now) == -EINVAL &&
			roce_cm_disconnect(c, NULL, 0, now) == -EINVAL &&
			roce_cm_established(c, now) == -EINVAL && roce_cm_mra(c, 1, now) == -EINVAL,
			"REQ_SENT refuses");
	{
		struct roce_cm_conn_info info;
		struct roce_cm_qp_attr qa;

		roce_cm_conn_info(c, &info);
		RT_CHECK(info.state == ROCE_CM_REQ_SENT && info.active && info.retries_left == 15 &&
				info.deadline == now + 6144 * MS && info.local_qpn == sides[A].qpn,
				"info");
		RT_CHECK(roce_cm_conn_qp_attr(c, &qa) == 0 && qa.qp_num == sides[A].qpn, "qp attr");
		RT_CHECK(strcmp(roce_cm_state_name(info.state), "REQ_SENT") == 0 &&
				roce_cm_state_name(ROCE_CM_STATE_MAX) == NULL &&
				strcmp(roce_cm_event_name(ROCE_CM_EV_TIMEWAIT_EXIT),
				"TIMEWAIT_EXIT") == 0,
				"names");
	}
	/* Destroyed in REQ_SENT: a REJ "timeout" with our GUID as ARI, which B (REQ_RCVD or
	 * REP_SENT by then) finds by GUID and remote ID. */
	run_for(LATENCY + 1000);
	RT_CHECK(sides[B].ev[ROCE_CM_EV_REQ] == 1, "B got it");
	roce_cm_destroy(c, now);
	handle_drop(&sides[A], c);
	run_for(SEC);
	RT_CHECK(sides[B].ev[ROCE_CM_EV_REJECTED] == 1 &&
			sides[B].rej_reason == ROCE_CM_REJ_TIMEOUT, "B rejected: reason %u",
			sides[B].rej_reason);
	run_for(10 * SEC);
	RT_CHECK(roce_cm_nb_conns(sides[A].cm) == 0 && roce_cm_nb_conns(sides[B].cm) == 0 &&
			sides[A].stray == 0, "nothing left");
}

/* B's QP gets a packet before the RTU (IB_EVENT_COMM_EST): established at once. */
static void
test_comm_est(void)
{
	struct roce_cm_conn *b;

	setup_pair();
	f_attr = ROCE_CM_ATTR_RTU;
	f_occ = 1;
	f_what = F_DROP;
	do_connect(A, B, PORT);
	run_for(SEC);
	RT_CHECK(sides[A].ev[ROCE_CM_EV_ESTABLISHED] == 1 &&
			sides[B].ev[ROCE_CM_EV_ESTABLISHED] == 0, "RTU lost");
	b = sides[B].handles[0];
	RT_CHECK(roce_cm_established(b, now) == 0 && sides[B].ev[ROCE_CM_EV_ESTABLISHED] == 1 &&
			roce_cm_established(b, now) == -EISCONN, "COMM_EST");
	run_for(10 * SEC);
	RT_CHECK(sides[B].ev[ROCE_CM_EV_ESTABLISHED] == 1 && stat_tx(B, ROCE_CM_ATTR_REP, 1) == 0,
			"no REP resent after");
}

/* Both ends disconnect at once: each answers the other's DREQ. */
static void
test_simultaneous_disconnect(void)
{
	struct roce_cm_conn *a, *b;

	setup_pair();
	a = do_connect(A, B, PORT);
	run_for(SEC);
	b = sides[B].handles[0];
	RT_CHECK(roce_cm_disconnect(a, NULL, 0, now) == 0 &&
			roce_cm_disconnect(b, NULL, 0, now) == 0,
			"both send a DREQ");
	run_for(60 * SEC);
	RT_CHECK(sides[A].ev[ROCE_CM_EV_TIMEWAIT_EXIT] == 1 &&
			sides[B].ev[ROCE_CM_EV_TIMEWAIT_EXIT] == 1 && sides[A].nb_handles == 0 &&
			sides[B].nb_handles == 0 && roce_cm_nb_conns(sides[A].cm) == 0 &&
			roce_cm_nb_conns(sides[B].cm) == 0 && sides[A].stray == 0 &&
			sides[B].stray == 0, "both through time wait");
}

/* Comm IDs: unique among live connections, never 0, different across instances. */
static void
test_comm_ids(void)
{
	uint32_t ids[64];
	unsigned int i, j, dup = 0, zero = 0;

	net_reset();
	side_init(A, 64, 0);
	side_init(B, 64, 0);
	net_down[B] = 1;
	for (i = 0; i < 64; i++) {
		struct roce_cm_conn_info info;
		struct roce_cm_conn *c = do_connect(A, B, PORT);

		roce_cm_conn_info(c, &info);
		ids[i] = info.local_comm_id;
		zero += ids[i] == 0;
	}
	for (i = 0; i < 64; i++)
		for (j = i + 1; j < 64; j++)
			dup += ids[i] == ids[j];
	RT_CHECK(dup == 0 && zero == 0, "64 unique IDs");
	/* Freed and taken again: a slot's next ID is another. */
	roce_cm_destroy(sides[A].handles[0], now);
	{
		struct roce_cm_conn_info info;
		struct roce_cm_conn *c;

		handle_drop(&sides[A], sides[A].handles[0]);
		c = do_connect(A, B, PORT);
		roce_cm_conn_info(c, &info);
		for (i = 0; i < 64; i++)
			RT_CHECK(info.local_comm_id != ids[i], "reused slot, new ID");
	}
}

/* ------------------------------------------------------------------ replay */

struct cap {
	unsigned int frame;
	uint8_t src_ip[4];
	uint8_t mad[ROCE_MAD_SIZE];
};

#define MAX_CAP 16
static struct rte_mempool *pool;

static unsigned int
load_caps(const char *name, struct cap *caps)
{
	static struct roce_pcap_rec rec;
	struct roce_pcap pc;
	char path[512];
	unsigned int frame = 0, n = 0;

	snprintf(path, sizeof(path), "%s/%s", rt_captures_dir(), name);
	if (roce_pcap_open(&pc, path) != 0) {
		RT_CHECK(0, "cannot open %s", path);
		return 0;
	}
	while (roce_pcap_next(&pc, &rec) == 1) {
		struct roce_wire_stats st = {0};
		const struct roce_pkt_meta *meta;
		struct rte_mbuf *m;
		uint8_t buf[2048];

		frame++;
		if (rec.caplen > sizeof(buf) || rec.caplen < 34)
			continue;
		m = rt_mbuf(pool, rec.data, rec.caplen, 0);
		if (m == NULL || roce_classify_burst(&m, 1, 0, &st) != 1) {
			rte_pktmbuf_free(m);
			continue;
		}
		meta = roce_pkt_meta(m);
		if (meta->opcode == ROCE_OPCODE(UD, SEND_ONLY) && meta->qpn == 1 &&
				meta->payload_len == ROCE_MAD_SIZE && n < MAX_CAP) {
			rt_mbuf_copy(m, buf, sizeof(buf));
			caps[n].frame = frame;
			memcpy(caps[n].src_ip, buf + 14 + 12, 4);	/* IPv4 source */
			memcpy(caps[n].mad, buf + meta->payload_off, ROCE_MAD_SIZE);
			n++;
		}
		rte_pktmbuf_free(m);
	}
	roce_pcap_close(&pc);
	return n;
}

/* Our comm IDs next to the captured side's, as we learn them. */
struct idmap {
	uint32_t cap[8], ours[8];
	struct roce_cm_conn *conn[8];
	unsigned int n;
};

static uint32_t
map_to_ours(const struct idmap *mp, uint32_t cap)
{
	unsigned int i;

	for (i = 0; i < mp->n; i++)
		if (mp->cap[i] == cap)
			return mp->ours[i];
	return cap;
}

static uint32_t
bswap32(uint32_t v)
{
	return (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
}

/* The local and remote comm ID of a connection message (REQ: local only). */
static uint32_t *
msg_local_id(struct roce_cm_msg *m)
{
	return m->hdr.attr_id == ROCE_CM_ATTR_REQ ? &m->req.local_comm_id : &m->rtu.local_comm_id;
}

/* Compare what we sent with what rxe sent: our comm ID and the TID formed from it are
 * the only differences allowed. */
static void
compare_sent(const char *cap_name, const struct cap *want, const uint8_t *ours,
		uint32_t our_id)
{
	struct roce_cm_msg w, o;
	uint8_t wb[ROCE_MAD_SIZE], ob[ROCE_MAD_SIZE];
	uint32_t cap_id;
	unsigned int i;

	RT_CHECK(roce_cm_parse(&w, want->mad, ROCE_MAD_SIZE) == ROCE_CM_OK &&
			roce_cm_parse(&o, ours, ROCE_MAD_SIZE) == ROCE_CM_OK, "%s frame %u parsed",
			cap_name, want->frame);
	RT_CHECK(o.hdr.attr_id == w.hdr.attr_id, "%s frame %u: we sent %s, rxe %s", cap_name,
			want->frame, roce_cm_attr_name(o.hdr.attr_id),
			roce_cm_attr_name(w.hdr.attr_id));
	if (o.hdr.attr_id != w.hdr.attr_id)
		return;
	cap_id = *msg_local_id(&w);
	RT_CHECK(*msg_local_id(&o) == our_id, "%s frame %u: our comm ID", cap_name, want->frame);
	*msg_local_id(&o) = cap_id;
	if ((uint32_t)w.hdr.tid == bswap32(cap_id)) {
		/* A TID of the sender's own (cm_form_tid()): from our ID the same way. */
		RT_CHECK(o.hdr.tid == ((w.hdr.tid & 0xFFFFFFFF00000000ull) | bswap32(our_id)),
				"%s frame %u: TID %#" PRIx64 " formed from %#x", cap_name,
				want->frame, o.hdr.tid, our_id);
		o.hdr.tid = w.hdr.tid;
	}
	roce_cm_build(&w, wb, sizeof(wb));
	roce_cm_build(&o, ob, sizeof(ob));
	for (i = 0; i < ROCE_MAD_SIZE && wb[i] == ob[i]; i++)
		;
	RT_CHECK(i == ROCE_MAD_SIZE, "%s frame %u (%s): byte %u differs: ours %#x, rxe's %#x",
			cap_name, want->frame, roce_cm_attr_name(w.hdr.attr_id), i,
			i < ROCE_MAD_SIZE ? ob[i] : 0, i < ROCE_MAD_SIZE ? wb[i] : 0);
}

/*
 * Replay @pcap with us in the role of @us_ip: the peer's MADs go in (comm IDs of our side
 * replaced by ours), ours come out of the calls rdma_cm would make and are compared.
 */
static void
replay(const char *pcap, const uint8_t us_ip[4], unsigned int want_mads)
{
	struct cap caps[MAX_CAP];
	struct idmap mp = { .n = 0 };
	unsigned int n = load_caps(pcap, caps), i, k;
	struct roce_cm_conf conf = { .max_conns = 8, .max_listeners = 2, .hi_tid = 2,
		.ack_delay = ROCE_CM_RXE_ACK_DELAY, .seed = 77 };
	uint8_t peer_ip[4] = { 0 };
	struct side *s;
	int listening = 0;

	RT_CHECK(n == want_mads, "%s: %u MADs", pcap, n);
	/* Our CA GUID is the captured side's. */
	for (i = 0; i < n; i++) {
		struct roce_cm_msg m;

		if (memcmp(caps[i].src_ip, us_ip, 4) != 0 ||
				roce_cm_parse(&m, caps[i].mad, ROCE_MAD_SIZE) != ROCE_CM_OK)
			continue;
		if (m.hdr.attr_id == ROCE_CM_ATTR_REQ)
			conf.ca_guid = m.req.local_ca_guid;
		else if (m.hdr.attr_id == ROCE_CM_ATTR_REP)
			conf.ca_guid = m.rep.local_ca_guid;
	}
	for (i = 0; i < n; i++)
		if (memcmp(caps[i].src_ip, us_ip, 4) != 0)
			memcpy(peer_ip, caps[i].src_ip, 4);
	net_reset();
	s = &sides[0];
	memcpy(s->ip, us_ip, 4);
	s->no_qp_check = 1;
	s->cm = roce_cm_create(&conf, &ops, s);
	RT_CHECK(s->cm != NULL, "instance");
	for (i = 0; i < n; i++) {
		const struct cap *cp = &caps[i];
		struct roce_cm_msg m;
		struct roce_cm_addr peer;
		unsigned int sent = s->nb_sent;

		roce_cm_parse(&m, cp->mad, ROCE_MAD_SIZE);
		memset(&peer, 0, sizeof(peer));
		peer.port = 1;
		gid_of(peer.local_gid, us_ip);
		gid_of(peer.remote_gid, peer_ip);
		peer.remote_qpn = 1;
		peer.qkey = ROCE_CM_QP1_QKEY;
		peer.pkey = ROCE_CM_DEFAULT_PKEY;
		if (memcmp(cp->src_ip, us_ip, 4) != 0) {
			/* The peer's: in, with our comm IDs where it names ours. */
			uint8_t mad[ROCE_MAD_SIZE];
			unsigned int before[ROCE_CM_EV_MAX];

			if (m.hdr.attr_id == ROCE_CM_ATTR_REQ && !listening) {
				RT_CHECK(roce_cm_listen(s->cm, m.req.service_id, 4, s) == 0,
						"listen");
				listening = 1;
			}
			if (m.hdr.attr_id != ROCE_CM_ATTR_REQ)
				m.rtu.remote_comm_id = map_to_ours(&mp, m.rtu.remote_comm_id);
			roce_cm_build(&m, mad, sizeof(mad));
			memcpy(before, s->ev, sizeof(before));
			s->policy = P_IGNORE;
			s->auto_disconnect = 0;
			roce_cm_input(s->cm, &peer, mad, sizeof(mad), now);
			switch (m.hdr.attr_id) {
			case ROCE_CM_ATTR_REQ:
				RT_CHECK(s->ev[ROCE_CM_EV_REQ] == before[ROCE_CM_EV_REQ] + 1,
						"frame %u: REQ event", cp->frame);
				break;
			case ROCE_CM_ATTR_REP:
				RT_CHECK(s->ev[ROCE_CM_EV_REP] == before[ROCE_CM_EV_REP] + 1,
						"frame %u: REP event", cp->frame);
				break;
			case ROCE_CM_ATTR_RTU:
				RT_CHECK(s->ev[ROCE_CM_EV_ESTABLISHED] ==
						before[ROCE_CM_EV_ESTABLISHED] + 1,
						"frame %u: established", cp->frame);
				break;
			case ROCE_CM_ATTR_DREQ:
				RT_CHECK(s->ev[ROCE_CM_EV_DREQ] == before[ROCE_CM_EV_DREQ] + 1,
						"frame %u: DREQ event", cp->frame);
				break;
			case ROCE_CM_ATTR_DREP:
				RT_CHECK(s->ev[ROCE_CM_EV_DISCONNECTED] ==
						before[ROCE_CM_EV_DISCONNECTED] + 1,
						"frame %u: disconnected", cp->frame);
				break;
			default:
				break;
			}
			RT_CHECK(s->nb_sent == sent, "frame %u: nothing sent back", cp->frame);
			now += MS;
			continue;
		}
		/* Ours: what rdma_cm would call now. */
		switch (m.hdr.attr_id) {
		case ROCE_CM_ATTR_REQ: {
			struct roce_cm_connect_params p;
			struct roce_cma_hdr h;
			struct roce_cm_conn *c = NULL;

			roce_cm_connect_params_init(&p);
			p.dest = peer;
			memcpy(p.route.local_gid, m.req.primary.local_gid, 16);
			memcpy(p.route.remote_gid, m.req.primary.remote_gid, 16);
			RT_CHECK(roce_cma_hdr_parse(&h, m.req.private_data,
					sizeof(m.req.private_data)) == 0, "cma_hdr");
			p.route.flow_label = roce_cma_flow_label(h.port,
					(uint16_t)m.req.service_id);
			RT_CHECK(p.route.flow_label == m.req.primary.flow_label,
					"frame %u: rdma_cm's flow label %#x", cp->frame,
					p.route.flow_label);
			p.route.traffic_class = m.req.primary.traffic_class;
			p.route.hop_limit = m.req.primary.hop_limit;
			p.route.sl = m.req.primary.sl;
			p.service_id = m.req.service_id;
			p.qp_num = m.req.local_qpn;
			p.starting_psn = m.req.starting_psn;
			p.responder_resources = m.req.responder_resources;
			p.initiator_depth = m.req.initiator_depth;
			p.private_data = m.req.private_data;
			p.private_data_len = sizeof(m.req.private_data);
			RT_CHECK(roce_cm_connect(s->cm, &p, s, now, &c) == 0, "connect");
			if (c == NULL || mp.n == RTE_DIM(mp.cap))
				break;
			handle_add(s, c);
			{
				struct roce_cm_conn_info info;

				roce_cm_conn_info(c, &info);
				mp.cap[mp.n] = m.req.local_comm_id;
				mp.ours[mp.n] = info.local_comm_id;
				mp.conn[mp.n++] = c;
				compare_sent(pcap, cp, s->sent_last, info.local_comm_id);
			}
			break;
		}
		case ROCE_CM_ATTR_REP: {
			struct roce_cm_accept_params ap;
			struct roce_cm_conn_info info;
			struct roce_cm_conn *c = NULL;

			/* The REQ it answers: the pending connection whose remote ID is its. */
			for (k = 0; k < s->nb_handles; k++) {
				roce_cm_conn_info(s->handles[k], &info);
				if (info.remote_comm_id == m.rep.remote_comm_id &&
						info.state == ROCE_CM_REQ_RCVD)
					c = s->handles[k];
			}
			RT_CHECK(c != NULL, "frame %u: the REQ's connection", cp->frame);
			if (c == NULL || mp.n == RTE_DIM(mp.cap))
				break;
			memset(&ap, 0, sizeof(ap));
			ap.qp_num = m.rep.local_qpn;
			ap.starting_psn = m.rep.starting_psn;
			ap.responder_resources = m.rep.responder_resources;
			ap.initiator_depth = m.rep.initiator_depth;
			ap.rnr_retry_count = m.rep.rnr_retry_count;
			ap.flow_control = m.rep.e2e_flow_control;
			ap.srq = m.rep.srq;
			ap.private_data = m.rep.private_data;
			ap.private_data_len = sizeof(m.rep.private_data);
			RT_CHECK(roce_cm_accept(c, &ap, now) == 0, "accept");
			roce_cm_conn_info(c, &info);
			mp.cap[mp.n] = m.rep.local_comm_id;
			mp.ours[mp.n] = info.local_comm_id;
			mp.conn[mp.n++] = c;
			compare_sent(pcap, cp, s->sent_last, info.local_comm_id);
			break;
		}
		case ROCE_CM_ATTR_RTU:
		case ROCE_CM_ATTR_DREQ:
		case ROCE_CM_ATTR_DREP: {
			uint32_t ours = map_to_ours(&mp, m.rtu.local_comm_id);
			struct roce_cm_conn *c = NULL;
			int rc;

			for (k = 0; k < mp.n; k++)
				if (mp.ours[k] == ours)
					c = mp.conn[k];
			RT_CHECK(c != NULL, "frame %u: our connection", cp->frame);
			if (c == NULL)
				break;
			if (m.hdr.attr_id == ROCE_CM_ATTR_RTU)
				rc = roce_cm_rtu(c, NULL, 0, now);
			else
				rc = roce_cm_disconnect(c, NULL, 0, now);
			RT_CHECK(rc == 0, "frame %u: %s sent", cp->frame,
					roce_cm_attr_name(m.hdr.attr_id));
			compare_sent(pcap, cp, s->sent_last, ours);
			if (m.hdr.attr_id == ROCE_CM_ATTR_RTU ||
					m.hdr.attr_id == ROCE_CM_ATTR_DREP) {
				struct roce_cm_qp_attr qa;
				struct roce_cm_conn_info info;

				roce_cm_conn_info(c, &info);
				RT_CHECK(m.hdr.attr_id == ROCE_CM_ATTR_DREP ?
						info.state == ROCE_CM_TIMEWAIT &&
						info.deadline == now + roce_cm_timeout_ns(19) :
						roce_cm_conn_qp_attr(c, &qa) == 0 &&
						qa.timeout == 19 &&
						qa.retry_cnt == 7 && qa.rnr_retry == 7 &&
						qa.path_mtu == 3, "frame %u: after it", cp->frame);
			}
			break;
		}
		default:
			RT_CHECK(0, "frame %u: attribute %#x", cp->frame, m.hdr.attr_id);
		}
		RT_CHECK(s->nb_sent == sent + 1, "frame %u: one MAD sent", cp->frame);
		now += MS;
	}
	run_for(30 * SEC);
	RT_CHECK(roce_cm_nb_conns(s->cm) == 0 && s->stray == 0 && s->nb_handles == 0,
			"%s: every connection through time wait (%u left, %u handles)", pcap,
			roce_cm_nb_conns(s->cm), s->nb_handles);
}

static const uint8_t ip_server[4] = { 10, 99, 0, 1 };
static const uint8_t ip_client[4] = { 10, 99, 0, 2 };

/*
 * The PSNs as rxe puts them on the wire in roce_rdma_cm_rping.pcap: the client's REQ announces
 * 0xf6a8e6, the server's REP 0x8f0e05, and the client's first SEND (frame 4) carries PSN
 * 0x8f0e05, the server's first READ request (frame 6) 0xf6a8e6: each side sends from the PSN
 * the other announced, and receives from its own.
 */
static void
test_replay_rping_passive(void)
{
	replay("roce_rdma_cm_rping.pcap", ip_server, 5);
	RT_CHECK(sides[0].est_qp.dest_qp_num == 0x4a && sides[0].est_qp.sq_psn == 0xf6a8e6 &&
			sides[0].est_qp.rq_psn == 0x8f0e05 && sides[0].est_qp.max_rd_atomic == 1 &&
			sides[0].est_qp.max_dest_rd_atomic == 1 && sides[0].est_qp.timeout == 19,
			"rping server's QP: dest %#x sq %#x rq %#x", sides[0].est_qp.dest_qp_num,
			sides[0].est_qp.sq_psn, sides[0].est_qp.rq_psn);
}

static void
test_replay_rping_active(void)
{
	replay("roce_rdma_cm_rping.pcap", ip_client, 5);
	RT_CHECK(sides[0].est_qp.dest_qp_num == 0x4a && sides[0].est_qp.sq_psn == 0x8f0e05 &&
			sides[0].est_qp.rq_psn == 0xf6a8e6 && sides[0].est_qp.timeout == 19,
			"rping client's QP: dest %#x sq %#x rq %#x timeout %u",
			sides[0].est_qp.dest_qp_num, sides[0].est_qp.sq_psn, sides[0].est_qp.rq_psn,
			sides[0].est_qp.timeout);
}

static void
test_replay_write_bw(void)
{
	replay("roce_rdma_cm_ib_write_bw_R.pcap", ip_server, 10);
	replay("roce_rdma_cm_ib_write_bw_R.pcap", ip_client, 10);
}

int
main(int argc, char **argv)
{
	(void)argc;
	rt_eal_init(argv[0]);
	pool = rt_pool(64, 2048);
	RT_RUN(test_clean_exchange);
	RT_RUN(test_faults);
	RT_RUN(test_crossing);
	RT_RUN(test_req_timeout);
	RT_RUN(test_rep_timeout);
	RT_RUN(test_reject);
	RT_RUN(test_no_listener);
	RT_RUN(test_stale);
	RT_RUN(test_dreq_unknown);
	RT_RUN(test_mra);
	RT_RUN(test_backlog);
	RT_RUN(test_malformed);
	RT_RUN(test_api_refusals);
	RT_RUN(test_comm_est);
	RT_RUN(test_simultaneous_disconnect);
	RT_RUN(test_comm_ids);
	RT_RUN(test_replay_rping_passive);
	RT_RUN(test_replay_rping_active);
	RT_RUN(test_replay_write_bw);
	net_reset();
	return rt_report("cm_sm");
}
