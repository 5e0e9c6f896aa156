/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worker loop: RPCs from the control lcore, packets other workers handed over, port rx,
 * classification, the transport engine, traffic jobs, transmit (through the tx impairment
 * stage of a port queue that has one).
 */
#include <string.h>
#include <time.h>

#include <rte_ethdev.h>

#include "dp_private.h"

/* Run what the control lcore asked for. */
static unsigned int
rpc_poll(struct roce_worker *w)
{
	struct dp_rpc *rpc = NULL;
	unsigned int n = 0;

	while (rte_ring_dequeue(w->rpc, (void **)&rpc) == 0) {
		rpc->ret = rpc->fn(w, rpc->arg);
		rte_atomic_thread_fence(__ATOMIC_RELEASE);
		rpc->done = 1;
		w->cnt[ROCE_DP_RPC]++;
		n++;
	}
	return n;
}

static uint16_t tx_queue(struct roce_worker *w, unsigned int p, struct rte_mbuf **pkts,
		uint16_t n);

/*
 * Port @p's queue impairs tx: its stage takes @n frames, judges each once, and keeps them
 * until tx_impair_out() sends them (so they are never lost to a full queue either).
 */
static inline void
tx_impair_in(struct roce_worker *w, unsigned int p, struct rte_mbuf **pkts, uint16_t n,
		uint64_t now)
{
	roce_impair_tx_prepare(w->timp[p], (uint16_t)w->rxq[p], pkts, n, 0, now);
}

/*
 * Send what port @p's tx stage has due, after what the port did not take last time (judged
 * already: it waits in ipend and is never judged again). @return frames sent.
 */
static unsigned int
tx_impair_out(struct roce_worker *w, unsigned int p, uint64_t now)
{
	struct rte_mbuf **pkts = w->ipend[p];
	uint16_t n = w->nb_ipend[p], sent;
	unsigned int total = 0;

	for (;;) {
		if (n == 0) {
			n = roce_impair_tx_poll(w->timp[p], (uint16_t)w->rxq[p], pkts, DP_BURST,
					now);
			if (n == 0)
				break;
		}
		sent = tx_queue(w, p, pkts, n);
		total += sent;
		n -= sent;
		if (n != 0) {
			memmove(pkts, pkts + sent, n * sizeof(pkts[0]));
			break;
		}
	}
	w->nb_ipend[p] = n;
	return total;
}

/* Send what lib/net built on port @p; a full queue loses it (the peer asks again). */
static void
tx_net(struct roce_worker *w, unsigned int p, struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	uint16_t sent;

	if (unlikely(w->timp[p] != NULL)) {
		tx_impair_in(w, p, pkts, n, now);
		return;
	}
	sent = tx_queue(w, p, pkts, n);
	if (sent < n) {
		w->cnt[ROCE_DP_PORT_TX_DROP] += n - sent;
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	}
}

/* Which frames lib/net answers; the rest of what is not RoCE is dropped. */
static const uint8_t type_is_net[ROCE_PKT_TYPE_NUM] = {
	[ROCE_PKT_ARP] = 1, [ROCE_PKT_ICMP] = 1, [ROCE_PKT_ICMP6] = 1,
};

/*
 * RoCE is unicast to the port's MAC on the port's VLAN (or untagged, or priority-tagged with VID
 * 0 when the port has none). @return the counter to drop under, or -1 to accept.
 */
static inline int
roce_l2_drop(const struct roce_worker *w, unsigned int p, const struct rte_mbuf *m,
		const struct roce_pkt_meta *meta)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint16_t vid = 0;

	if (!rte_is_same_ether_addr(&eth->dst_addr, &w->dp->ports[p].mac))
		return ROCE_DP_ROCE_L2_DST;
	if (meta->flags & ROCE_PKT_F_VLAN)
		vid = rte_be_to_cpu_16(((const struct rte_vlan_hdr *)(eth + 1))->vlan_tci) & 0xfff;
	return vid == w->dp->conf.addr[p].vlan ? -1 : ROCE_DP_ROCE_VLAN;
}

/*
 * Frames from port @p: RoCE to its engine (ours in one batch, others to their owner's
 * inbound ring), ARP/ICMP/ND to lib/net, the rest dropped and counted.
 */
static void
rx_dispatch(struct roce_worker *w, unsigned int p, struct rte_mbuf **pkts, uint16_t n,
		uint64_t now)
{
	struct rte_mbuf *mine[DP_BURST], *net[DP_BURST], *out[DP_BURST];
	uint16_t i, nb_mine = 0, nb_net = 0, nb_out;

	for (i = 0; i < n; i++) {
		const struct roce_pkt_meta *meta = roce_pkt_meta(pkts[i]);
		int owner, drop;

		if (meta->type != ROCE_PKT_ROCE) {
			if (type_is_net[meta->type] && w->net[p] != NULL) {
				net[nb_net++] = pkts[i];
				continue;
			}
			w->cnt[ROCE_DP_OTHER_DROP]++;
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		drop = roce_l2_drop(w, p, pkts[i], meta);
		if (unlikely(drop >= 0)) {
			w->cnt[drop]++;
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		owner = roce_dp_qpn_owner(w->dp, meta->qpn);
		if (owner == (int)w->idx) {
			mine[nb_mine++] = pkts[i];
		} else if (owner < 0) {
			w->cnt[ROCE_DP_NOT_OURS]++;
			rte_pktmbuf_free(pkts[i]);
		} else if (rte_ring_enqueue(w->dp->workers[owner].inbound, pkts[i]) != 0) {
			w->cnt[ROCE_DP_HANDOFF_DROP]++;
			rte_pktmbuf_free(pkts[i]);
		} else {
			w->cnt[ROCE_DP_HANDOFF]++;
		}
	}
	if (nb_mine != 0)
		roce_engine_rx(w->eng, mine, nb_mine, now);
	if (nb_net != 0) {
		w->cnt[ROCE_DP_NET_PKTS] += nb_net;
		nb_out = roce_net_input(w->net[p], net, nb_net, now, out, DP_BURST);
		if (nb_out != 0)
			tx_net(w, p, out, nb_out, now);
	}
}

/* ARP/ND timers and the frames lib/net has ready. */
static unsigned int
net_poll(struct roce_worker *w, uint64_t now)
{
	struct rte_mbuf *out[DP_BURST];
	unsigned int p, total = 0;
	uint16_t n;

	for (p = 0; p < w->dp->nb_ports; p++) {
		if (w->net[p] == NULL)
			continue;
		roce_net_poll(w->net[p], now);
		while ((n = roce_net_tx(w->net[p], out, DP_BURST)) != 0) {
			tx_net(w, p, out, n, now);
			total += n;
		}
	}
	return total;
}

/* Taken from the workers for a restart (quiesce.c): frames wait meanwhile. */
static inline bool
port_paused(const struct roce_worker *w, unsigned int p)
{
	return unlikely(__atomic_load_n(&w->dp->port_paused[p], __ATOMIC_ACQUIRE) != 0);
}

static unsigned int
rx_poll(struct roce_worker *w, uint64_t now)
{
	struct rte_mbuf *pkts[DP_BURST];
	unsigned int p, total = 0;
	uint16_t n, i;

	n = (uint16_t)rte_ring_dequeue_burst(w->inbound, (void **)pkts, DP_BURST, NULL);
	if (n != 0) {
		roce_engine_rx(w->eng, pkts, n, now);
		total += n;
	}
	for (p = 0; p < w->dp->nb_ports; p++) {
		if (w->rxq[p] < 0 || port_paused(w, p))
			continue;
		n = rte_eth_rx_burst(w->dp->ports[p].port_id, (uint16_t)w->rxq[p], pkts, DP_BURST);
		if (n == 0)
			continue;
		w->cnt[ROCE_DP_PORT_RX_PKTS] += n;
		for (i = 0; i < n; i++)
			w->cnt[ROCE_DP_PORT_RX_BYTES] += pkts[i]->pkt_len;
		roce_classify_burst(pkts, n, 0, &w->wire);
		rx_dispatch(w, p, pkts, n, now);
		total += n;
	}
	return total;
}

/* Put a burst on port @p's queue; @return how many it took (counted here). */
static uint16_t
tx_queue(struct roce_worker *w, unsigned int p, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent, i;

	if (port_paused(w, p))
		return 0;
	sent = rte_eth_tx_burst(w->dp->ports[p].port_id, (uint16_t)w->rxq[p], pkts, n);
	for (i = 0; i < sent; i++)
		w->cnt[ROCE_DP_PORT_TX_BYTES] += pkts[i]->pkt_len;
	w->cnt[ROCE_DP_PORT_TX_PKTS] += sent;
	return sent;
}

/*
 * Our queue of port 0 impairs tx: the engine's frames go through its stage a burst at a time,
 * and the engine is drained only while the port takes what the stage puts out, so
 * backpressure works as without impairment (w->pend is only scratch here).
 */
static unsigned int
tx_roce_impaired(struct roce_worker *w, uint64_t now)
{
	unsigned int total = 0;
	uint16_t n;

	for (;;) {
		total += tx_impair_out(w, 0, now);
		if (w->nb_ipend[0] != 0)
			return total;
		n = roce_engine_tx(w->eng, w->pend, DP_BURST);
		if (n == 0)
			return total;
		tx_impair_in(w, 0, w->pend, n, now);
		total += n;
	}
}

/*
 * RoCE frames leave on port 0 for now: on our own queue, or through the ring of the worker
 * owning it. What the queue does not take waits in w->pend and the engine is not drained
 * meanwhile, so a slow port slows the QPs down instead of dropping their packets.
 */
static unsigned int
tx_roce(struct roce_worker *w, uint64_t now)
{
	unsigned int total = 0;
	uint16_t n, sent;

	for (;;) {
		if (w->nb_pend == 0) {
			if (unlikely(w->timp[0] != NULL))
				return total + tx_roce_impaired(w, now);
			w->nb_pend = roce_engine_tx(w->eng, w->pend, DP_BURST);
			if (w->nb_pend == 0)
				return total;
		}
		if (w->rxq[0] >= 0)
			sent = tx_queue(w, 0, w->pend, w->nb_pend);
		else
			sent = (uint16_t)rte_ring_enqueue_burst(w->dp->workers[0].txr[0],
					(void **)w->pend, w->nb_pend, NULL);
		n = w->nb_pend - sent;
		memmove(w->pend, w->pend + sent, n * sizeof(w->pend[0]));
		w->nb_pend = n;
		total += sent;
		if (n != 0)
			return total;
	}
}

/*
 * Frames other workers queued for the port queues we own. What the queue refuses waits in
 * w->rpend and the ring is not drained meanwhile, so the other workers feel the backpressure
 * (their enqueue fails and their engines wait) instead of losing packets here.
 */
static unsigned int
tx_rings(struct roce_worker *w, uint64_t now)
{
	unsigned int p, total = 0;
	uint16_t n, sent;

	for (p = 0; p < w->dp->nb_ports; p++) {
		if (w->rxq[p] < 0)
			continue;
		if (w->nb_rpend[p] == 0) {
			n = (uint16_t)rte_ring_dequeue_burst(w->txr[p], (void **)w->rpend[p],
					DP_BURST, NULL);
			if (n == 0)
				continue;
			if (unlikely(w->timp[p] != NULL)) {
				tx_impair_in(w, p, w->rpend[p], n, now);
				total += n;
				continue;
			}
			w->nb_rpend[p] = n;
		}
		sent = tx_queue(w, p, w->rpend[p], w->nb_rpend[p]);
		n = w->nb_rpend[p] - sent;
		memmove(w->rpend[p], w->rpend[p] + sent, n * sizeof(w->rpend[p][0]));
		w->nb_rpend[p] = n;
		total += sent;
	}
	return total;
}

/*
 * Held frames of impaired tx queues that fell due, even when nothing else is sent. @return
 * frames sent, or 1 while frames are held: the worker must not sleep past their time.
 */
static unsigned int
tx_impair_poll(struct roce_worker *w, uint64_t now)
{
	unsigned int p, total = 0;

	for (p = 0; p < w->dp->nb_ports; p++) {
		if (w->timp[p] == NULL)
			continue;
		total += tx_impair_out(w, p, now);
		if (total == 0 && (w->nb_ipend[p] != 0 ||
				roce_impair_tx_held(w->timp[p], (uint16_t)w->rxq[p]) != 0))
			total = 1;
	}
	return total;
}

static void
idle_sleep(const struct roce_worker *w)
{
	struct timespec ts = { 0, (long)w->dp->conf.idle_sleep_us * 1000 };

	nanosleep(&ts, NULL);
}

int
dp_worker_main(void *arg)
{
	struct roce_worker *w = arg;
	unsigned int idle = 0;

	ROCE_LOG(INFO, "worker %u on lcore %u (socket %d)\n", w->idx, w->lcore, w->socket);
	rte_rcu_qsbr_thread_online(w->dp->qsbr, w->idx);
	while (!w->dp->stop) {
		uint64_t now = roce_dp_now();
		unsigned int work;

		/* Between PMD calls: see roce_dp_quiesce(). */
		rte_rcu_qsbr_quiescent(w->dp->qsbr, w->idx);
		work = rpc_poll(w);
		work += rx_poll(w, now);
		roce_engine_poll(w->eng, now);
		work += dp_gen_poll(w, now);
		/* Other workers' frames first: our engine would otherwise fill the queue every
		 * time and starve the QPs of the workers that send through us. */
		work += tx_rings(w, now);
		work += tx_roce(w, now) + net_poll(w, now);
		if (unlikely(w->nb_timp != 0))
			work += tx_impair_poll(w, now);
		if (work != 0) {
			idle = 0;
		} else if (w->dp->conf.idle_sleep_us != 0 && ++idle > 1000) {
			idle_sleep(w);
		}
	}
	rte_rcu_qsbr_thread_offline(w->dp->qsbr, w->idx);
	rpc_poll(w);
	return 0;
}
