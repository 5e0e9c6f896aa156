/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP1 of every port, on worker ROCE_DP_GSI_WORKER (roce_dp_gsi.h): created with the worker,
 * kept in RTS with ROCE_DP_GSI_RECV_WQES receives posted, and polled by the worker loop as a
 * service. What it receives goes, copied with its GRH area, into a ring the agent
 * (gsi_agent.c) drains on the control thread; the buffer is posted again at once. Sends come
 * from the agent through roce_dp_call(), inline (a MAD is ROCE_MAX_INLINE bytes), so no send
 * buffer outlives the call.
 *
 * QP1's path MTU is 256: a datagram longer than a MAD is dropped by the transport
 * (UD_RX_TOO_LONG), and none can be longer than its receive buffer, which would put QP1 in
 * ERR (UD_RECV_LEN_ERR).
 */
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_atomic.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "dp_private.h"

#define GSI_RING 256               /* datagrams waiting for the agent */
#define GSI_POLL DP_BURST          /* completions taken per port and loop: an rx burst */
#define GSI_SEND_WQES 64

static_assert(sizeof(struct dp_gsi_rx) % 4 == 0, "ring elements are multiples of 4 bytes");
static_assert(ROCE_MAD_SIZE <= ROCE_MAX_INLINE, "a MAD is sent inline");

/* A counter of the worker's side: the agent and telemetry read them as they go. */
static inline void
gsi_count_w(struct dp_gsi *g, enum roce_dp_gsi_counter c)
{
	__atomic_fetch_add(&g->cnt[c], 1, __ATOMIC_RELAXED);
}

int
dp_gsi_init(struct roce_dp *dp)
{
	struct dp_gsi *g;

	g = rte_zmalloc("roce_gsi", sizeof(*g), RTE_CACHE_LINE_SIZE);
	if (g == NULL)
		return -ENOMEM;
	dp->gsi = g;
	g->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->wake_fd < 0)
		return -errno;
	g->rx = rte_ring_create_elem("roce_gsi_rx", sizeof(struct dp_gsi_rx), GSI_RING,
			SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	g->pd = roce_pd_alloc(SOCKET_ID_ANY);
	if (g->rx == NULL || g->pd == NULL)
		return -ENOMEM;
	return 0;
}

/* After the workers' services let go of the QP1s. */
void
dp_gsi_fini(struct roce_dp *dp)
{
	struct dp_gsi *g = dp->gsi;

	if (g == NULL)
		return;
	rte_ring_free(g->rx);
	if (g->wake_fd >= 0)
		close(g->wake_fd);
	if (g->pd != NULL)
		roce_pd_free(g->pd);
	rte_free(g);
	dp->gsi = NULL;
}

static int
gsi_post_recv(struct dp_gsi_qp *q, uint32_t i)
{
	struct roce_recv_wr wr = {
		.wr_id = i,
		.num_sge = 1,
		.sg_list[0] = {
			.addr = (uintptr_t)(q->buf + (size_t)i * ROCE_DP_GSI_BUF),
			.length = ROCE_DP_GSI_BUF,
			.lkey = roce_mr_lkey(q->mr),
		},
	};
	int ret = roce_post_recv(q->qp, &wr);

	if (ret == 0)
		q->posted++;
	return ret;
}

static void
gsi_qp_free(struct dp_gsi_qp *q)
{
	if (q->qp != NULL)
		roce_qp_destroy(q->qp);
	if (q->cq != NULL)
		roce_cq_destroy(q->cq);
	if (q->mr != NULL)
		roce_mr_dereg(q->mr);
	rte_free(q->buf);
	memset(q, 0, sizeof(*q));
}

/* Port @p's QP1 on @w, in RTS with its receives posted. */
static int
gsi_qp_create(struct roce_worker *w, struct dp_gsi *g, unsigned int p)
{
	struct dp_gsi_qp *q = &g->qp[p];
	struct roce_qp_init_attr ia = {
		.max_send_wr = GSI_SEND_WQES,
		.max_recv_wr = ROCE_DP_GSI_RECV_WQES,
		.max_inline_data = ROCE_MAD_SIZE,
		.qp_num = ROCE_GSI_QPN,
		.qp_type = ROCE_QPT_UD,
		.port_num = (uint8_t)(p + 1),
	};
	struct roce_qp_attr a = {
		.qp_state = ROCE_QPS_INIT,
		.port_num = (uint8_t)(p + 1),
		.qkey = ROCE_GSI_QKEY,
		.path_mtu = ROCE_MTU_256,
		.sq_psn = 0,              /* rxe's QP1 counts from 0 */
	};
	uint32_t i;
	int ret;

	q->buf = rte_zmalloc_socket("roce_gsi_buf", ROCE_DP_GSI_RECV_WQES * ROCE_DP_GSI_BUF, 64,
			w->socket);
	q->cq = roce_cq_create(2 * (GSI_SEND_WQES + ROCE_DP_GSI_RECV_WQES), w->socket);
	if (q->buf == NULL || q->cq == NULL)
		goto nomem;
	q->mr = roce_mr_reg(g->pd, q->buf, ROCE_DP_GSI_RECV_WQES * ROCE_DP_GSI_BUF,
			ROCE_ACCESS_LOCAL_WRITE, NULL);
	if (q->mr == NULL)
		goto nomem;
	ia.send_cq = ia.recv_cq = q->cq;
	q->qp = roce_qp_create(w->eng, g->pd, &ia);
	if (q->qp == NULL) {
		ret = -rte_errno;
		goto fail;
	}
	ret = roce_qp_modify(q->qp, &a, ROCE_QP_STATE | ROCE_QP_PORT | ROCE_QP_QKEY |
			ROCE_QP_PKEY_INDEX | ROCE_QP_PATH_MTU);
	a.qp_state = ROCE_QPS_RTR;
	if (ret == 0)
		ret = roce_qp_modify(q->qp, &a, ROCE_QP_STATE);
	a.qp_state = ROCE_QPS_RTS;
	if (ret == 0)
		ret = roce_qp_modify(q->qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN);
	for (i = 0; ret == 0 && i < ROCE_DP_GSI_RECV_WQES; i++)
		ret = gsi_post_recv(q, i);
	if (ret != 0)
		goto fail;
	return 0;
nomem:
	ret = -ENOMEM;
fail:
	gsi_qp_free(q);
	return ret;
}

static void
gsi_service_fini(struct roce_worker *w)
{
	struct dp_gsi *g = w->dp->gsi;
	unsigned int p;

	if (g == NULL || w->idx != ROCE_DP_GSI_WORKER)
		return;
	for (p = 0; p < ROCE_DP_MAX_PORTS; p++)
		gsi_qp_free(&g->qp[p]);
}

static int
gsi_service_init(struct roce_worker *w)
{
	struct dp_gsi *g = w->dp->gsi;
	unsigned int p;
	int ret;

	if (g == NULL)
		return -ENOMEM;
	if (w->idx != ROCE_DP_GSI_WORKER)
		return 0;
	for (p = 0; p < w->dp->nb_ports; p++) {
		ret = gsi_qp_create(w, g, p);
		if (ret != 0) {
			ROCE_LOG(ERR, "port %u: QP1: %s\n", p, strerror(-ret));
			gsi_service_fini(w);
			return ret;
		}
	}
	return 0;
}

/*
 * Wake the agent if it sleeps: the fence orders the enqueue before the flag's load, as
 * roce_dp_gsi_idle() orders the flag's store before its look at the ring, so either it sees
 * the MAD or we see it sleeping. One write per MAD at most, and only while it sleeps.
 */
static void
gsi_wake(struct dp_gsi *g)
{
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&g->agent_sleeps, __ATOMIC_RELAXED))
		(void)eventfd_write(g->wake_fd, 1);
}

/* A receive completion of port @p's QP1: to the agent's ring, and the buffer back. */
static void
gsi_recv_done(struct dp_gsi *g, unsigned int p, const struct roce_wc *wc)
{
	struct dp_gsi_qp *q = &g->qp[p];
	const uint8_t *buf;
	struct dp_gsi_rx rx;

	q->posted--;
	if (wc->status != ROCE_WC_SUCCESS || wc->wr_id >= ROCE_DP_GSI_RECV_WQES) {
		gsi_count_w(g, ROCE_DP_GSI_C_RECV_ERR);
		return;
	}
	buf = q->buf + (size_t)wc->wr_id * ROCE_DP_GSI_BUF;
	memset(&rx, 0, sizeof(rx));
	rx.port = (uint16_t)p;
	/* The path MTU keeps byte_len within the buffer: GRH area + at most 256. */
	rx.len = (uint16_t)(RTE_MIN(wc->byte_len, (uint32_t)ROCE_DP_GSI_BUF) - ROCE_GRH_LEN);
	rx.ipv6 = wc->network_hdr_type == ROCE_NETWORK_IPV6;
	rx.src_qp = wc->src_qp;
	memcpy(rx.grh, buf, ROCE_GRH_LEN);
	memcpy(rx.mad, buf + ROCE_GRH_LEN, rx.len);
	if (rte_ring_enqueue_elem(g->rx, &rx, sizeof(rx)) != 0)
		gsi_count_w(g, ROCE_DP_GSI_C_RX_RING_FULL);
	else
		gsi_wake(g);
	if (roce_qp_state(q->qp) != ROCE_QPS_ERR)
		gsi_post_recv(q, (uint32_t)wc->wr_id);
}

static unsigned int
gsi_service_poll(struct roce_worker *w, uint64_t now)
{
	struct dp_gsi *g = w->dp->gsi;
	struct roce_wc wc[GSI_POLL];
	unsigned int p, work = 0;
	int n, i;

	RTE_SET_USED(now);
	if (w->idx != ROCE_DP_GSI_WORKER)
		return 0;
	for (p = 0; p < w->dp->nb_ports; p++) {
		if (g->qp[p].qp == NULL)
			continue;
		n = roce_cq_poll(g->qp[p].cq, wc, GSI_POLL);
		for (i = 0; i < n; i++) {
			if (wc[i].opcode & ROCE_WC_RECV)
				gsi_recv_done(g, p, &wc[i]);
			else if (wc[i].status != ROCE_WC_SUCCESS)
				gsi_count_w(g, ROCE_DP_GSI_C_TX_ERR);
		}
		work += (unsigned int)n;
	}
	return work;
}

const struct dp_service dp_gsi_service = {
	.name = "gsi",
	.init = gsi_service_init,
	.fini = gsi_service_fini,
	.poll = gsi_service_poll,
};

unsigned int
dp_gsi_rx_take(struct roce_dp *dp, struct dp_gsi_rx *rx, unsigned int max)
{
	return rte_ring_dequeue_burst_elem(dp->gsi->rx, rx, sizeof(*rx), max, NULL);
}

struct gsi_send_rpc {
	unsigned int port;
	const struct roce_path *path;
	uint32_t qpn;
	const uint8_t *mad;
};

static int
gsi_send_on_worker(struct roce_worker *w, void *arg)
{
	const struct gsi_send_rpc *r = arg;
	struct dp_gsi *g = w->dp->gsi;
	struct roce_ah_attr aa = { .path = *r->path, .port_num = (uint8_t)(r->port + 1) };
	struct roce_send_wr wr = {
		.opcode = ROCE_WR_SEND,
		.send_flags = ROCE_SEND_INLINE,
		.num_sge = 1,
		.sg_list[0] = { .addr = (uintptr_t)r->mad, .length = ROCE_MAD_SIZE },
		.ud = { .remote_qpn = r->qpn, .remote_qkey = ROCE_GSI_QKEY },
	};
	struct roce_qp *qp = g->qp[r->port].qp;
	int ret;

	if (qp == NULL)
		return -ENODEV;
	wr.ud.ah = roce_ah_create(g->pd, &aa);
	if (wr.ud.ah == NULL)
		return -rte_errno;
	/* The WR copies the address and the inline MAD: the AH may go at once. */
	ret = roce_post_send(qp, &wr);
	roce_ah_destroy(wr.ud.ah);
	return ret;
}

int
dp_gsi_post(struct roce_dp *dp, unsigned int port, const struct roce_path *path, uint32_t qpn,
		const uint8_t *mad)
{
	struct gsi_send_rpc r = { port, path, qpn, mad };

	if (port >= dp->nb_ports)
		return -EINVAL;
	return roce_dp_call(dp, ROCE_DP_GSI_WORKER, gsi_send_on_worker, &r, 1000);
}

struct gsi_query_rpc {
	unsigned int port;
	struct roce_dp_gsi_port *out;
};

static int
gsi_query_on_worker(struct roce_worker *w, void *arg)
{
	const struct gsi_query_rpc *r = arg;
	const struct dp_gsi_qp *q = &w->dp->gsi->qp[r->port];
	struct roce_dp_gsi_port *o = r->out;
	uint64_t c[ROCE_XC_NUM];

	memset(o, 0, sizeof(*o));
	if (q->qp == NULL)
		return 0;
	roce_qp_counters(q->qp, c);
	o->ok = 1;
	o->state = (uint8_t)roce_qp_state(q->qp);
	o->recv_posted = q->posted;
	o->rx_pkts = c[ROCE_XC_RX_PKTS];
	o->tx_pkts = c[ROCE_XC_TX_PKTS];
	o->qkey_drop = c[ROCE_XC_UD_QKEY_DROP];
	o->no_recv = c[ROCE_XC_UD_NO_RECV];
	o->too_long = c[ROCE_XC_UD_RX_TOO_LONG];
	o->bad_pkey = c[ROCE_XC_BAD_PKEY];
	return 0;
}

int
roce_dp_gsi_port_query(struct roce_dp *dp, unsigned int port, struct roce_dp_gsi_port *out)
{
	struct gsi_query_rpc r = { port, out };

	if (port >= dp->nb_ports)
		return -EINVAL;
	return roce_dp_call(dp, ROCE_DP_GSI_WORKER, gsi_query_on_worker, &r, 1000);
}
