/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * -R, perftest's rdma_cm mode (perftest 6.06, src/perftest_communication.c): the side channel
 * is an RC QP the daemon's connection manager connects (perftest's communication QP: its
 * rdma_server_connect() / rdma_client_connect()), its messages SENDs of the sizes they have
 * over TCP (roce_perf_oob_run_chan()); the test's QPs get CM connections of their own, one per
 * QP to the same port, between two barriers after the prologue (create_rdma_cm_connection());
 * the end is the CM's disconnects, as perftest makes them.
 *
 * The server listens with manual accept: the first connect_request is the side channel's, for
 * which it makes a QP, posts its receives and accepts (perftest posts one receive before
 * rdma_accept()); the next o.qps requests from the same peer are the test QPs', accepted in
 * the order they came. The client connects its side channel QP after posting its receives,
 * waits for established, and later connects every test QP, retrying a REJ as perftest does
 * (its server listens for the test QPs only after the first barrier). At the end the client
 * disconnects the test QPs (DREQ) and waits for the DREPs, then the side channel; the server
 * waits for those DREQs, then disconnects the side channel (perftest's server exits, and its
 * kernel sends that DREQ) and stops listening.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf_private.h"
#include "roce_perf_session.h"

#define RCM_SLOT 64		/* bytes per message buffer: the largest message is 64 */
#define RCM_RX 16		/* receives kept posted on the side channel's QP */
#define RCM_SEND_WR UINT64_C(0x5e4d)
#define RCM_MR_SIZE (RCM_SLOT * (1 + RCM_RX))
#define RCM_WC (RCM_RX + 1)		/* completions held: every receive and the SEND */
#define RCM_EVENTS 64
#define RCM_PUMP_MS 50		/* CM events between two polls of the side channel */
#define RCM_CONNECT_TRIES 50	/* REJs (nobody listens yet) retried, RCM_RETRY_MS apart */
#define RCM_RETRY_MS 100
#define RCM_PENDING 64		/* connect_requests not yet answered */
#define RCM_DISC_MS 3000	/* how long the end waits for the peer's DREQs or DREPs */
/* perftest's connections: retry_count 7 (--retry_count), rnr_retry_count 7 */
#define RCM_RETRY 7
#define RCM_RNR_RETRY 7

struct rcm_conn {
	uint32_t conn;		/* 0: none */
	uint32_t qpn;
	uint32_t remote_qpn;
	bool established;
	bool disconnected;	/* disconnected, rejected, unreachable or in error: over */
	bool rejected;
	bool unreachable;
	unsigned int reason;
};

struct perf_rcm {
	uint64_t since;			/* the CM events read so far */
	bool listening;
	struct roce_perf_mr mr;		/* the side channel's buffers */
	bool have_mr;
	uint32_t qpn;			/* the side channel's QP; 0: none */
	struct rcm_conn ctl;
	struct rcm_conn *test;		/* one per test QP */
	unsigned int ntest;
	struct roce_perf_cm_event pending[RCM_PENDING];	/* connect_requests to answer */
	unsigned int npending;
	struct roce_perf_wc wc[RCM_WC];	/* completions polled, not yet taken */
	unsigned int nwc;
	char peer_ip[46];
	int64_t last_pump;
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct rcm_conn *
conn_of(struct perf_rcm *r, uint32_t conn)
{
	unsigned int i;

	if (conn == 0)
		return NULL;
	if (r->ctl.conn == conn)
		return &r->ctl;
	for (i = 0; i < r->ntest; i++)
		if (r->test[i].conn == conn)
			return &r->test[i];
	return NULL;
}

static void
conn_event(struct rcm_conn *k, const struct roce_perf_cm_event *e)
{
	switch (e->type) {
	case ROCE_PERF_CM_ESTABLISHED:
		k->established = true;
		if (e->remote_qpn != 0)
			k->remote_qpn = e->remote_qpn;
		break;
	case ROCE_PERF_CM_REJECTED:
		k->rejected = true;
		k->reason = e->reason;
		k->disconnected = true;
		break;
	case ROCE_PERF_CM_UNREACHABLE:
		k->unreachable = true;
		k->disconnected = true;
		break;
	case ROCE_PERF_CM_CONNECT_ERROR:
	case ROCE_PERF_CM_DISCONNECTED:
	case ROCE_PERF_CM_TIMEWAIT_EXIT:
		k->disconnected = true;
		break;
	default:
		break;
	}
}

/* Read what the CM said: our connections' states, and the requests for our port. */
static int
pump(struct roce_perf_session *s)
{
	struct perf_rcm *r = s->rcm;
	struct roce_perf_cm_event ev[RCM_EVENTS];
	unsigned int n, i;
	int ret;

	r->last_pump = now_ms();
	do {
		n = 0;
		if ((ret = s->ops->cm_events(s->ctx, &r->since, ev, RCM_EVENTS, &n)) != 0)
			return ret;
		for (i = 0; i < n; i++) {
			struct rcm_conn *k = conn_of(r, ev[i].conn);

			if (k != NULL) {
				conn_event(k, &ev[i]);
			} else if (ev[i].type == ROCE_PERF_CM_CONNECT_REQUEST &&
					ev[i].service_port == s->o.tcp_port && r->listening) {
				if (r->npending < RCM_PENDING)
					r->pending[r->npending++] = ev[i];
				else
					s->ops->cm_reject(s->ctx, ev[i].conn);
			}
		}
	} while (n == RCM_EVENTS);
	return 0;
}

/* Skip every event so far: only what happens from now on is ours. */
static int
skip_events(struct roce_perf_session *s)
{
	struct perf_rcm *r = s->rcm;
	struct roce_perf_cm_event ev[RCM_EVENTS];
	unsigned int n;
	int ret;

	r->since = 0;
	do {
		n = 0;
		if ((ret = s->ops->cm_events(s->ctx, &r->since, ev, RCM_EVENTS, &n)) != 0)
			return ret;
	} while (n == RCM_EVENTS);
	return 0;
}

/* The oldest connect_request from @p ip (any with NULL); the others from elsewhere are
 * rejected: only the side channel's peer connects the test's QPs. */
static bool
take_request(struct roce_perf_session *s, const char *ip, struct roce_perf_cm_event *out)
{
	struct perf_rcm *r = s->rcm;
	unsigned int i, j = 0;
	bool found = false;

	for (i = 0; i < r->npending; i++) {
		const struct roce_perf_cm_event *e = &r->pending[i];

		if (!found && (ip == NULL || strcmp(e->remote_ip, ip) == 0)) {
			*out = *e;
			found = true;
			continue;
		}
		if (ip != NULL && strcmp(e->remote_ip, ip) != 0) {
			perf_sess_note(s, "a connect request from %s, not the peer %s: rejected",
					e->remote_ip, ip);
			s->ops->cm_reject(s->ctx, e->conn);
			continue;
		}
		r->pending[j++] = *e;
	}
	r->npending = j;
	return found;
}

/* ---- the side channel: SENDs and receives on the CM-connected QP ---- */

static uint64_t
rx_off(unsigned int slot)
{
	return (uint64_t)RCM_SLOT * (1 + slot);
}

static int
post_rx(struct roce_perf_session *s, unsigned int slot)
{
	struct perf_rcm *r = s->rcm;

	return s->ops->post_recv(s->ctx, r->qpn, r->mr.key, rx_off(slot), RCM_SLOT, slot);
}

/* Its QP and buffers, with every receive posted: before the CM connects it, as perftest. */
static int
chan_setup(struct roce_perf_session *s)
{
	struct perf_rcm *r = s->rcm;
	struct roce_perf_qp_conf conf = {
		.port = s->o.port, .sq_depth = 4, .rq_depth = RCM_RX,
	};
	uint32_t psn;
	unsigned int i;
	int ret;

	if ((ret = s->ops->mr_create(s->ctx, RCM_MR_SIZE, ROCE_PERF_ACC_LOCAL_WRITE, &r->mr)) != 0)
		return ret;
	r->have_mr = true;
	if ((ret = s->ops->qp_create(s->ctx, &conf, &r->qpn, &psn)) != 0)
		return ret;
	for (i = 0; i < RCM_RX; i++)
		if ((ret = post_rx(s, i)) != 0)
			return ret;
	return 0;
}

/* The next completion (receives: @p recv), until @p deadline (< 0: none). */
static int
chan_wait(struct roce_perf_session *s, bool recv, int64_t deadline, struct roce_perf_wc *out)
{
	struct perf_rcm *r = s->rcm;
	unsigned int i, n;
	int ret;

	for (;;) {
		for (i = 0; i < r->nwc; i++) {
			if (r->wc[i].status != 0) {
				perf_sess_err(s, "the side channel's %s failed: status %d",
						r->wc[i].recv ? "receive" : "SEND",
						r->wc[i].status);
				return -ECONNRESET;
			}
			if (r->wc[i].recv == recv) {
				*out = r->wc[i];
				memmove(&r->wc[i], &r->wc[i + 1],
						(r->nwc - i - 1) * sizeof(r->wc[0]));
				r->nwc--;
				return 0;
			}
		}
		if (s->interrupted)
			return -EINTR;
		n = 0;
		if (r->nwc < RCM_WC)
			if ((ret = s->ops->cq_poll(s->ctx, r->qpn, r->wc + r->nwc,
					RCM_WC - r->nwc, &n)) != 0)
				return ret;
		r->nwc += n;
		if (n != 0)
			continue;
		if (now_ms() - r->last_pump >= RCM_PUMP_MS) {
			if ((ret = pump(s)) != 0)
				return ret;
			if (r->ctl.disconnected)
				return -ECONNRESET;
		}
		if (deadline >= 0 && now_ms() > deadline)
			return -ETIMEDOUT;
		perf_sess_sleep_ms(1);
	}
}

static int
chan_send(struct roce_perf_session *s, const void *out, size_t len, int64_t deadline)
{
	struct perf_rcm *r = s->rcm;
	struct roce_perf_wc wc;
	int ret;

	if ((ret = s->ops->mr_write(s->ctx, r->mr.key, 0, out, len)) != 0 ||
			(ret = s->ops->post_send(s->ctx, r->qpn, r->mr.key, 0, (uint32_t)len,
				RCM_SEND_WR)) != 0)
		return ret;
	/* as perftest: the SEND is done once the peer acknowledged it */
	return chan_wait(s, false, deadline, &wc);
}

static int
chan_recv(struct roce_perf_session *s, void *in, size_t len, int64_t deadline)
{
	struct perf_rcm *r = s->rcm;
	struct roce_perf_wc wc;
	uint64_t got = 0;
	int ret;

	if ((ret = chan_wait(s, true, deadline, &wc)) != 0)
		return ret;
	if (wc.wr_id >= RCM_RX) {
		perf_sess_err(s, "the side channel's QP completed a receive it did not post");
		return -EPROTO;
	}
	/* perftest reads what it expects whatever came; a message of another size is not the
	 * step's: refused */
	if (wc.byte_len != len) {
		ROCE_PERF_LOG("a %u-byte message from the peer where %zu were expected: refused",
				wc.byte_len, len);
		return -EPROTO;
	}
	if ((ret = s->ops->mr_read(s->ctx, r->mr.key, rx_off((unsigned int)wc.wr_id), len, in,
			&got)) != 0)
		return ret;
	if (got != len)
		return -EIO;
	return post_rx(s, (unsigned int)wc.wr_id);
}

static int
chan_xchg(void *ctx, enum roce_perf_role role, const void *out, void *in, size_t len,
		int timeout_ms)
{
	struct roce_perf_session *s = ctx;
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	int ret;

	if (len > RCM_SLOT)
		return -EINVAL;
	if (role == ROCE_PERF_CLIENT) {
		ret = chan_send(s, out, len, deadline);
		return ret != 0 ? ret : chan_recv(s, in, len, deadline);
	}
	ret = chan_recv(s, in, len, deadline);
	return ret != 0 ? ret : chan_send(s, out, len, deadline);
}

/* ---- connections ---- */

/* Wait until @p k is established, or over. @return 0, -ECONNREFUSED (rejected: k->reason),
 * -EHOSTUNREACH, -ECONNRESET, -ETIMEDOUT or -EINTR. */
static int
wait_established(struct roce_perf_session *s, struct rcm_conn *k, int64_t deadline)
{
	int ret;

	for (;;) {
		if ((ret = pump(s)) != 0)
			return ret;
		if (k->established)
			return 0;
		if (k->rejected)
			return -ECONNREFUSED;
		if (k->unreachable)
			return -EHOSTUNREACH;
		if (k->disconnected)
			return -ECONNRESET;
		if (s->interrupted)
			return -EINTR;
		if (deadline >= 0 && now_ms() > deadline)
			return -ETIMEDOUT;
		perf_sess_sleep_ms(10);
	}
}

static int
connect_one(struct roce_perf_session *s, struct rcm_conn *k, uint32_t qpn, unsigned int mtu,
		unsigned int rd)
{
	struct roce_perf_cm_connect c = {
		.qpn = qpn, .ip = s->rcm->peer_ip, .tcp_port = s->o.tcp_port, .mtu = mtu,
		.rd_atomic = rd, .retry_count = RCM_RETRY, .rnr_retry_count = RCM_RNR_RETRY,
	};

	memset(k, 0, sizeof(*k));
	k->qpn = qpn;
	return s->ops->cm_connect(s->ctx, &c, &k->conn);
}

static const char *
conn_fail(int ret)
{
	switch (ret) {
	case -ECONNREFUSED:
		return "rejected";
	case -EHOSTUNREACH:
		return "unanswered";
	case -ETIMEDOUT:
		return "not established in time";
	default:
		return strerror(-ret);
	}
}

/* Connect @p n QPs (@p k[i] for qpns[i]), retrying each REJ as perftest does: its server
 * listens a moment after it answered us. */
static int
connect_all(struct roce_perf_session *s, struct rcm_conn *k, const uint32_t *qpns,
		unsigned int n, unsigned int mtu, unsigned int rd, const char *what)
{
	unsigned int i, tries;
	int ret = 0;

	for (i = 0; i < n; i++)
		if ((ret = connect_one(s, &k[i], qpns[i], mtu, rd)) != 0)
			return ret;
	for (i = 0; i < n; i++) {
		for (tries = 1;; tries++) {
			ret = wait_established(s, &k[i], now_ms() + s->o.oob_ms);
			if (ret != -ECONNREFUSED || tries >= RCM_CONNECT_TRIES || s->interrupted)
				break;
			perf_sess_sleep_ms(RCM_RETRY_MS);
			if ((ret = connect_one(s, &k[i], qpns[i], mtu, rd)) != 0)
				return ret;
		}
		if (ret == -EINTR)
			return ret;
		if (ret != 0) {
			if (ret == -ECONNREFUSED)
				perf_sess_err(s, "%s: %s port %u rejected the connection (reason "
						"%u)", what, s->rcm->peer_ip, s->o.tcp_port,
						k[i].reason);
			else
				perf_sess_err(s, "%s: the connection to %s port %u: %s", what,
						s->rcm->peer_ip, s->o.tcp_port, conn_fail(ret));
			return ret;
		}
	}
	return 0;
}

/* The next connect_request from @p ip (NULL: anyone), until @p deadline (< 0: none). */
static int
wait_request(struct roce_perf_session *s, const char *ip, int64_t deadline,
		struct roce_perf_cm_event *req)
{
	int ret;

	for (;;) {
		if ((ret = pump(s)) != 0)
			return ret;
		if (take_request(s, ip, req))
			return 0;
		if (s->interrupted)
			return -EINTR;
		if (deadline >= 0 && now_ms() > deadline)
			return -ETIMEDOUT;
		perf_sess_sleep_ms(10);
	}
}

static int
accept_one(struct roce_perf_session *s, struct rcm_conn *k, const struct roce_perf_cm_event *req,
		uint32_t qpn, unsigned int rd)
{
	int ret;

	memset(k, 0, sizeof(*k));
	k->conn = req->conn;
	k->qpn = qpn;
	k->remote_qpn = req->remote_qpn;
	ret = s->ops->cm_accept(s->ctx, req->conn, qpn, rd);
	if (ret != 0) {
		s->ops->cm_reject(s->ctx, req->conn);
		k->conn = 0;
	}
	return ret;
}

/* The side channel's peer, in GID form and as text, for the session's peer checks. */
static void
set_peer(struct roce_perf_session *s, const char *ip)
{
	snprintf(s->rcm->peer_ip, sizeof(s->rcm->peer_ip), "%s", ip);
	snprintf(s->tcp_ip, sizeof(s->tcp_ip), "%s", ip);
	memset(s->tcp_gid, 0, sizeof(s->tcp_gid));
	s->tcp_gid[10] = s->tcp_gid[11] = 0xff;
	inet_pton(AF_INET, ip, s->tcp_gid + 12);
}

static int
open_server(struct roce_perf_session *s)
{
	struct perf_rcm *r = s->rcm;
	struct roce_perf_cm_event req;
	int ret;

	if ((ret = s->ops->cm_listen(s->ctx, s->o.tcp_port, s->o.qps + 1)) != 0)
		return ret;
	r->listening = true;
	if (s->ev.waiting != NULL)
		s->ev.waiting(s->ev.arg, s->o.tcp_port);
	if ((ret = wait_request(s, NULL, -1, &req)) != 0)
		return ret;
	set_peer(s, req.remote_ip);
	/* perftest's rdma_server_connect(): its one receive posted, then rdma_accept() */
	if ((ret = chan_setup(s)) != 0) {
		s->ops->cm_reject(s->ctx, req.conn);
		return ret;
	}
	return accept_one(s, &r->ctl, &req, r->qpn, 0);
}

/* The peer's IPv4 address: the CM connects to an address, not a name. */
static int
resolve_peer(struct roce_perf_session *s)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	char ip[INET_ADDRSTRLEN];
	int ret = getaddrinfo(s->o.peer, NULL, &hints, &ai);

	if (ret != 0) {
		perf_sess_err(s, "%s: %s (-R connects to an IPv4 address)", s->o.peer,
				gai_strerror(ret));
		return -EHOSTUNREACH;
	}
	inet_ntop(AF_INET, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, ip, sizeof(ip));
	freeaddrinfo(ai);
	set_peer(s, ip);
	return 0;
}

static int
open_client(struct roce_perf_session *s)
{
	struct perf_rcm *r = s->rcm;
	int ret;

	if ((ret = resolve_peer(s)) != 0 || (ret = chan_setup(s)) != 0)
		return ret;
	/* perftest's communication QP: no READs, retry and RNR retry 7 */
	return connect_all(s, &r->ctl, &r->qpn, 1, 0, 0, "side channel");
}

/* ---- the test QPs' connections (the exchange's cm_connect hook) ---- */

static unsigned int
test_rd(const struct roce_perf_session *s)
{
	/* perftest: responder resources and initiator depth are its out_reads for READ and
	 * atomics, 0 otherwise */
	if (s->o.verb != ROCE_PERF_VERB_READ && s->o.verb != ROCE_PERF_VERB_ATOMIC)
		return 0;
	return s->nqp > 0 ? s->qp[0].local.out_reads : 0;
}

static int
hook_cm_connect(void *arg)
{
	struct roce_perf_session *s = arg;
	struct perf_rcm *r = s->rcm;
	struct rcm_conn *k;
	struct roce_perf_cm_event req;
	uint32_t *qpns;
	unsigned int i;
	int ret = 0;

	k = calloc(s->nqp, sizeof(*k));
	qpns = calloc(s->nqp, sizeof(*qpns));
	if (k == NULL || qpns == NULL) {
		free(k);
		free(qpns);
		return -ENOMEM;
	}
	free(r->test);
	r->test = k;
	r->ntest = s->nqp;
	for (i = 0; i < s->nqp; i++)
		qpns[i] = s->qp[i].qpn;
	if (!s->o.server) {
		ret = connect_all(s, k, qpns, s->nqp, 128u << s->oob.agreed.mtu, test_rd(s),
				"test QP");
	} else {
		/* in the order the requests came, as perftest's connection_index */
		for (i = 0; i < s->nqp && ret == 0; i++) {
			ret = wait_request(s, r->peer_ip, now_ms() + s->o.oob_ms, &req);
			if (ret == -ETIMEDOUT)
				perf_sess_err(s, "the peer connected %u of its %u test QPs within "
						"%g s", i, s->nqp, s->o.oob_ms / 1e3);
			if (ret == 0)
				ret = accept_one(s, &k[i], &req, qpns[i], test_rd(s));
		}
	}
	free(qpns);
	s->hook_failed = ret < 0 && ret != -EINTR;
	return ret;
}

uint32_t
perf_sess_rcm_peer_qpn(const struct roce_perf_session *s, unsigned int i)
{
	const struct perf_rcm *r = s->rcm;

	return r != NULL && i < r->ntest ? r->test[i].remote_qpn : 0;
}

/* ---- the end: the disconnects ---- */

static bool
tests_over(const struct perf_rcm *r)
{
	unsigned int i;

	for (i = 0; i < r->ntest; i++)
		if (r->test[i].conn != 0 && !r->test[i].disconnected)
			return false;
	return true;
}

static void
disconnect(struct roce_perf_session *s, struct rcm_conn *k)
{
	if (k->conn != 0 && !k->disconnected)
		s->ops->cm_disconnect(s->ctx, k->conn);
}

/* Wait until @p done, up to @p ms. */
static void
wait_until(struct roce_perf_session *s, bool (*done)(const struct perf_rcm *r), int ms)
{
	int64_t end = now_ms() + ms;

	while (pump(s) == 0 && !done(s->rcm) && now_ms() < end && s->interrupted < 2)
		perf_sess_sleep_ms(10);
}

static bool
ctl_over(const struct perf_rcm *r)
{
	return r->ctl.conn == 0 || r->ctl.disconnected;
}

static void
close_conns(struct roce_perf_session *s)
{
	struct perf_rcm *r = s->rcm;
	unsigned int i;

	pump(s);
	if (!s->o.server) {
		/* perftest's rdma_cm_disconnect_nodes(): a DREQ per test QP, then the DREPs */
		for (i = 0; i < r->ntest; i++)
			disconnect(s, &r->test[i]);
		wait_until(s, tests_over, RCM_DISC_MS);
		/* its server's exit disconnects the side channel: a moment for that DREQ */
		wait_until(s, ctl_over, 100);
	} else {
		wait_until(s, tests_over, RCM_DISC_MS);
		for (i = 0; i < r->ntest; i++)
			disconnect(s, &r->test[i]);
	}
	disconnect(s, &r->ctl);
	wait_until(s, ctl_over, RCM_DISC_MS);
	/* what never connected goes too */
	for (i = 0; i < r->ntest; i++)
		if (r->test[i].conn != 0 && !r->test[i].established && !r->test[i].disconnected)
			s->ops->cm_disconnect(s->ctx, r->test[i].conn);
	while (r->npending > 0)
		s->ops->cm_reject(s->ctx, r->pending[--r->npending].conn);
	if (r->listening)
		s->ops->cm_unlisten(s->ctx, s->o.tcp_port);
	r->listening = false;
}

int
perf_sess_rcm_exchange(struct roce_perf_session *s, struct roce_perf_oob_cfg *cfg)
{
	struct roce_perf_oob_chan ch = { ROCE_PERF_OOB_RDMA_CM, chan_xchg, s };
	int ret;

	if (s->rcm == NULL) {
		s->rcm = calloc(1, sizeof(*s->rcm));
		if (s->rcm == NULL)
			return -ENOMEM;
	}
	cfg->hooks.cm_connect = hook_cm_connect;
	ret = skip_events(s);
	if (ret == 0)
		ret = s->o.server ? open_server(s) : open_client(s);
	if (ret == 0)
		ret = roce_perf_oob_run_chan(&ch, cfg, &s->oob);
	close_conns(s);
	return ret;
}

void
perf_sess_rcm_teardown(struct roce_perf_session *s)
{
	struct perf_rcm *r = s->rcm;

	if (r == NULL)
		return;
	if (r->listening)
		s->ops->cm_unlisten(s->ctx, s->o.tcp_port);
	if (r->qpn != 0)
		s->ops->qp_destroy(s->ctx, r->qpn);
	if (r->have_mr && s->ops->mr_destroy(s->ctx, r->mr.key) != 0)
		perf_sess_err(s, "could not deregister MR 0x%x", r->mr.key);
	free(r->test);
	free(r);
	s->rcm = NULL;
}
