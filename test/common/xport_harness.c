/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "roce_test.h"
#include "xport_harness.h"

#define BURST 32

/* splitmix64: the link's own generator, so runs repeat whatever else draws numbers. */
static uint64_t
xh_rand(struct xh *h)
{
	uint64_t z = (h->seed += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int
xh_chance(struct xh *h, double p)
{
	return p > 0 && (double)(xh_rand(h) >> 11) / (double)(1ull << 53) < p;
}

void
xh_init(struct xh *h, uint64_t seed, const struct roce_engine_conf *conf)
{
	struct roce_engine_conf c = conf != NULL ? *conf : (struct roce_engine_conf){0};
	static struct rte_mempool *mp;
	int i;

	memset(h, 0, sizeof(*h));
	h->seed = seed;
	if (mp == NULL)
		mp = rt_pool(32768, 4608);
	h->mp = mp;
	c.mp = mp;
	if (c.zc_mp == NULL)
		c.zc_mp = xh_zc_pool();
	for (i = 0; i < 2; i++) {
		c.qpn_base = 0x100 + i * 0x1000;
		h->eng[i] = roce_engine_create(&c);
		h->pd[i] = roce_pd_alloc(SOCKET_ID_ANY);
		if (h->eng[i] == NULL || h->pd[i] == NULL) {
			fprintf(stderr, "xh_init: cannot create engine %d\n", i);
			exit(2);
		}
		h->impair[i].delay_ns = 1000;
	}
}

struct rte_mempool *
xh_zc_pool(void)
{
	static struct rte_mempool *zc;

	/* Two per packet in flight (the payload, then pad and ICRC): the headroom is room. */
	if (zc == NULL)
		zc = rt_pool(2 * 32768, 0);
	return zc;
}

void
xh_zc(struct xh *h, uint16_t max_segs, uint32_t min_len)
{
	struct roce_tx_zc z = { .max_segs = max_segs, .min_len = min_len };
	uint8_t port;
	int i;

	for (i = 0; i < 2; i++)
		for (port = 0; port < ROCE_ENGINE_MAX_PORTS; port++)
			if (roce_engine_set_tx_zc(h->eng[i], port, &z) != 0) {
				fprintf(stderr, "xh_zc: roce_engine_set_tx_zc refused\n");
				exit(2);
			}
	h->zc = 1;
}

void
xh_fini(struct xh *h)
{
	uint32_t i;

	for (i = 0; i < h->nb_inflight; i++)
		rte_pktmbuf_free(h->inflight[i].m);
	h->nb_inflight = 0;
	for (i = 0; i < 2; i++)
		roce_engine_destroy(h->eng[i]);
	/* Every packet is freed now: nothing may reference them. */
	for (i = 0; i < h->nb_late; i++) {
		RT_CHECK(roce_mr_tx_refs(h->late[i].mr) == 0 && roce_mr_dereg(h->late[i].mr) == 0,
				"xh_fini: an MR still referenced by %u segments with every packet "
				"freed", roce_mr_tx_refs(h->late[i].mr));
		free(h->late[i].buf);
	}
	h->nb_late = 0;
	for (i = 0; i < 2; i++)
		roce_pd_free(h->pd[i]);
}

static void
make_path(struct roce_path *p, int side, uint32_t sqpn, uint32_t dqpn, int ipv6)
{
	memset(p, 0, sizeof(*p));
	p->src_mac.addr_bytes[0] = 0x02;
	p->src_mac.addr_bytes[5] = (uint8_t)(side + 1);
	p->dst_mac.addr_bytes[0] = 0x02;
	p->dst_mac.addr_bytes[5] = (uint8_t)(2 - side);
	p->ipv6 = (uint8_t)ipv6;
	if (ipv6) {
		p->src_ip[0] = 0xfd;
		p->src_ip[15] = (uint8_t)(side + 1);
		p->dst_ip[0] = 0xfd;
		p->dst_ip[15] = (uint8_t)(2 - side);
	} else {
		p->src_ip[0] = 10;
		p->src_ip[3] = (uint8_t)(side + 1);
		p->dst_ip[0] = 10;
		p->dst_ip[3] = (uint8_t)(2 - side);
	}
	p->udp_sport = roce_udp_sport(sqpn, dqpn);
	roce_path_init(p);
}

#define DEF(v, d) ((v) == 0 ? (d) : (v) == XH_ZERO ? 0 : (v))

int
xh_qp_connect(struct xh *h, struct xh_qp *p, const struct xh_qp_conf *conf)
{
	struct xh_qp_conf c = conf != NULL ? *conf : (struct xh_qp_conf){0};
	uint32_t all = ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_WRITE |
		ROCE_ACCESS_REMOTE_READ | ROCE_ACCESS_REMOTE_ATOMIC;
	int i, ret;

	memset(p, 0, sizeof(*p));
	p->len = c.buf_len != 0 ? c.buf_len : 1 << 20;
	for (i = 0; i < 2; i++) {
		struct roce_qp_init_attr ia = {
			.max_send_wr = c.sq_depth != 0 ? c.sq_depth : 128,
			.max_recv_wr = c.rq_depth != 0 ? c.rq_depth : 128,
			.max_inline_data = 64,
		};

		p->cq[i] = roce_cq_create(4096, SOCKET_ID_ANY);
		ia.send_cq = ia.recv_cq = p->cq[i];
		struct roce_mr_attr ma = { .tx_dma = h->zc, .rkey = c.rkey[i], .iova = c.iova[i] };

		p->buf[i] = calloc(1, p->len);
		/* Nothing DMAs here: the buffer's address stands for its bus address. */
		ma.tx_iova = (uintptr_t)p->buf[i];
		p->mr[i] = roce_mr_reg(h->pd[i], p->buf[i], p->len,
				c.mr_access != 0 ? c.mr_access : all, &ma);
		p->qp[i] = roce_qp_create(h->eng[i], h->pd[i], &ia);
		if (p->cq[i] == NULL || p->buf[i] == NULL || p->mr[i] == NULL || p->qp[i] == NULL)
			return -ENOMEM;
	}
	for (i = 0; i < 2; i++) {
		struct roce_qp_attr a = {
			.qp_state = ROCE_QPS_INIT,
			.qp_access_flags = c.access != 0 ? c.access : all,
			.port_num = c.port_num,
		};
		uint32_t psn_me = c.psn[i] != 0 ? c.psn[i] : xh_rand(h) & ROCE_PSN_MASK;
		uint32_t psn_peer = c.psn[1 - i] != 0 ? c.psn[1 - i] : 0;

		RTE_SET_USED(psn_peer);
		ret = roce_qp_modify(p->qp[i], &a, ROCE_QP_STATE | ROCE_QP_ACCESS_FLAGS |
				(c.port_num != 0 ? ROCE_QP_PORT : 0));
		if (ret != 0)
			return ret;
		c.psn[i] = psn_me;
	}
	for (i = 0; i < 2; i++) {
		struct roce_qp_attr a = {
			.qp_state = ROCE_QPS_RTR,
			.path_mtu = c.mtu != 0 ? c.mtu : ROCE_MTU_1024,
			.dest_qp_num = roce_qp_num(p->qp[1 - i]),
			.rq_psn = c.psn[1 - i],
			.max_dest_rd_atomic = DEF(c.max_rd_atomic, 16),
			.min_rnr_timer = DEF(c.min_rnr_timer, 12),
		};

		int ext = 0;

		make_path(&a.ah, i, roce_qp_num(p->qp[i]), roce_qp_num(p->qp[1 - i]), c.ipv6);
		/* The extensions only when asked: the default stays byte-for-byte IBA. */
		if (c.sr || c.sr_rto_us || c.max_inflight) {
			a.sr = c.sr == 1 || (c.sr == 2 && i == 0);
			a.sr_rto_us = c.sr_rto_us;
			a.max_inflight = c.max_inflight;
			ext = ROCE_QP_SR | ROCE_QP_SR_RTO | ROCE_QP_MAX_INFLIGHT;
		}
		ret = roce_qp_modify(p->qp[i], &a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU |
				ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC |
				ROCE_QP_MIN_RNR_TIMER | ext);
		if (ret != 0)
			return ret;
		a.qp_state = ROCE_QPS_RTS;
		a.sq_psn = c.psn[i];
		a.timeout = DEF(c.timeout, 14);
		a.retry_cnt = DEF(c.retry_cnt, 7);
		a.rnr_retry = DEF(c.rnr_retry, 7);
		a.max_rd_atomic = DEF(c.max_rd_atomic, 16);
		ret = roce_qp_modify(p->qp[i], &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN |
				ROCE_QP_TIMEOUT | ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY |
				ROCE_QP_MAX_QP_RD_ATOMIC);
		if (ret != 0)
			return ret;
	}
	return 0;
}

void
xh_qp_destroy(struct xh *h, struct xh_qp *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (p->qp[i] != NULL)
			roce_qp_destroy(p->qp[i]);
		if (p->cq[i] != NULL)
			roce_cq_destroy(p->cq[i]);
		if (p->mr[i] != NULL && roce_mr_dereg(p->mr[i]) == -EBUSY) {
			/* Packets still read it: its memory stays (leaked past 64 of them). */
			RT_CHECK(h->nb_late < RTE_DIM(h->late), "xh_qp_destroy: too many MRs in use");
			if (h->nb_late < RTE_DIM(h->late)) {
				h->late[h->nb_late].mr = p->mr[i];
				h->late[h->nb_late++].buf = p->buf[i];
			}
			continue;
		}
		free(p->buf[i]);
	}
	memset(p, 0, sizeof(*p));
}

static void
enqueue(struct xh *h, struct rte_mbuf *m, int to, uint64_t due)
{
	if (h->nb_inflight == XH_MAX_INFLIGHT) {
		rte_pktmbuf_free(m);
		h->dropped++;
		return;
	}
	h->inflight[h->nb_inflight++] = (struct xh_pkt){ .due = due, .m = m, .to = to };
}

/* Whether the next packet from @from is lost: uniform, or a Gilbert-Elliott chain. */
static int
xh_lost(struct xh *h, int from)
{
	const struct xh_impair *imp = &h->impair[from];

	if (imp->ge_p <= 0)
		return xh_chance(h, imp->loss);
	if (h->ge_bad[from] ? xh_chance(h, imp->ge_r) : xh_chance(h, imp->ge_p))
		h->ge_bad[from] ^= 1;
	return xh_chance(h, h->ge_bad[from] ? imp->ge_loss : imp->loss);
}

/* When a packet of @len bytes sent now leaves a link of the configured rate. */
static uint64_t
xh_serialise(struct xh *h, int from, uint32_t len)
{
	const struct xh_impair *imp = &h->impair[from];
	uint64_t start;

	if (imp->rate_gbps <= 0)
		return h->now;
	start = RTE_MAX(h->now, h->busy_until[from]);
	h->busy_until[from] = start + (uint64_t)(len * 8 / imp->rate_gbps + 0.5);
	return h->busy_until[from];
}

/* Whether the link from @from queues as much as it may: the engine keeps the rest. */
static int
xh_backlogged(const struct xh *h, int from)
{
	const struct xh_impair *imp = &h->impair[from];

	return imp->backlog_ns != 0 && imp->rate_gbps > 0 &&
		h->busy_until[from] > h->now + imp->backlog_ns;
}

/* Take what engine @from sent and put it on the link, impaired. */
static unsigned int
collect(struct xh *h, int from)
{
	const struct xh_impair *imp = &h->impair[from];
	struct rte_mbuf *pkts[BURST];
	unsigned int total = 0;
	uint16_t n, i;

	while (!xh_backlogged(h, from) && (n = roce_engine_tx(h->eng[from], pkts, BURST)) != 0) {
		total += n;
		for (i = 0; i < n; i++) {
			struct rte_mbuf *m = pkts[i];
			uint64_t due = xh_serialise(h, from, m->pkt_len) + imp->delay_ns;

			if ((h->tap != NULL && h->tap(h->tap_arg, from, m) == XH_DROP) ||
					xh_lost(h, from)) {
				rte_pktmbuf_free(m);
				h->dropped++;
				continue;
			}
			if (xh_chance(h, imp->dup)) {
				struct rte_mbuf *c = rte_pktmbuf_copy(m, h->mp, 0, UINT32_MAX);

				if (c != NULL)
					enqueue(h, c, 1 - from, due + imp->delay_ns / 2);
			}
			if (xh_chance(h, imp->reorder))
				due += imp->reorder_ns;
			enqueue(h, m, 1 - from, due);
		}
	}
	return total;
}

static inline int
xh_stalled(const struct xh *h, int side)
{
	return h->now < h->stall_until[side];
}

/* Hand every due packet to its engine, in the order they were sent. */
static unsigned int
deliver(struct xh *h)
{
	struct rte_mbuf *burst[2][BURST];
	unsigned int nb[2] = {0, 0}, moved = 0, i = 0, k;

	while (i < h->nb_inflight) {
		struct xh_pkt *p = &h->inflight[i];
		int to = p->to;

		if (p->due > h->now || xh_stalled(h, to)) {
			i++;
			continue;
		}
		burst[to][nb[to]++] = p->m;
		memmove(p, p + 1, (h->nb_inflight - i - 1) * sizeof(*p));
		h->nb_inflight--;
		moved++;
		if (nb[to] == BURST) {
			roce_classify_burst(burst[to], BURST, ROCE_CLASSIFY_DEFER_ICRC, &h->wire);
			roce_engine_rx_wire(h->eng[to], burst[to], BURST, h->now, &h->wire);
			nb[to] = 0;
		}
	}
	for (k = 0; k < 2; k++) {
		if (nb[k] == 0)
			continue;
		roce_classify_burst(burst[k], nb[k], ROCE_CLASSIFY_DEFER_ICRC, &h->wire);
		roce_engine_rx_wire(h->eng[k], burst[k], nb[k], h->now, &h->wire);
	}
	h->delivered += moved;
	return moved;
}

static uint64_t
next_event(const struct xh *h)
{
	uint64_t t = UINT64_MAX;
	uint32_t i;
	int k;

	/* A stalled engine's timers run when it does. */
	for (k = 0; k < 2; k++)
		t = RTE_MIN(t, RTE_MAX(roce_engine_next_timer(h->eng[k]),
				xh_stalled(h, k) ? h->stall_until[k] : 0));
	for (i = 0; i < h->nb_inflight; i++)
		t = RTE_MIN(t, xh_stalled(h, h->inflight[i].to) ?
				h->stall_until[h->inflight[i].to] : h->inflight[i].due);
	/* A backlogged link takes more from its engine once its queue has drained enough. */
	for (k = 0; k < 2; k++)
		if (xh_backlogged(h, k))
			t = RTE_MIN(t, h->busy_until[k] - h->impair[k].backlog_ns);
	return t;
}

void
xh_step(struct xh *h, uint64_t quantum_ns)
{
	unsigned int busy;
	int k;
	uint64_t next;

	busy = 0;
	for (k = 0; k < 2; k++) {
		if (xh_stalled(h, k))
			continue;
		roce_engine_poll(h->eng[k], h->now);
		busy += collect(h, k);
	}
	busy += deliver(h);
	if (busy != 0) {
		h->now += quantum_ns;
		return;
	}
	/* Idle: jump to the next packet arrival or timer. */
	next = next_event(h);
	if (next != UINT64_MAX && next > h->now)
		h->now = next;
	else
		h->now += quantum_ns;
}

int
xh_run(struct xh *h, int (*done)(void *arg), void *arg, uint64_t timeout_ns)
{
	uint64_t end = h->now + timeout_ns;

	while (!done(arg)) {
		if (h->now >= end)
			return -ETIMEDOUT;
		xh_step(h, 1000);
	}
	return 0;
}

void
xh_settle(struct xh *h, uint64_t idle_ns)
{
	uint64_t end = h->now + idle_ns;

	while (h->now < end) {
		uint64_t before = h->delivered;

		xh_step(h, 1000);
		if (h->delivered != before || h->nb_inflight != 0)
			end = h->now + idle_ns;
		if (next_event(h) == UINT64_MAX && h->nb_inflight == 0)
			xh_step(h, 1000);
		if (next_event(h) == UINT64_MAX && h->nb_inflight == 0 && h->delivered == before)
			return;
	}
}

int
xh_poll_cq(struct xh *h, struct roce_cq *cq, struct roce_wc *wc, int max, uint64_t timeout_ns)
{
	uint64_t end = h->now + timeout_ns;
	int n = 0;

	for (;;) {
		n += roce_cq_poll(cq, wc + n, max - n);
		if (n == max || h->now >= end)
			return n;
		xh_step(h, 1000);
	}
}

uint64_t
xh_counter(const struct xh *h, int side, enum roce_xport_counter c)
{
	uint64_t cnt[ROCE_XC_NUM];

	roce_engine_counters(h->eng[side], cnt);
	return cnt[c];
}
