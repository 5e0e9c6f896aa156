/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worker loop: RPCs from the control lcore, packets other workers handed over, port rx,
 * classification, the transport engine, traffic jobs, transmit (through the transmit object
 * of each port, roce_txq.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ethdev.h>

#include "dp_private.h"
#include "stages.h"

/* Run what the control lcore asked for. */
static unsigned int
rpc_poll(struct roce_worker *w)
{
	struct dp_rpc *rpc = NULL;
	unsigned int n = 0;

	while (rte_ring_dequeue(w->rpc, (void **)&rpc) == 0) {
		uint32_t queued = DP_RPC_QUEUED;

		n++;
		if (!__atomic_compare_exchange_n(&rpc->state, &queued, DP_RPC_RUNNING, false,
				__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
			/* Cancelled: its caller is gone, and so may be what arg pointed to. */
			free(rpc);
			w->cnt[ROCE_DP_RPC_LATE]++;
			continue;
		}
		rpc->ret = rpc->fn(w, rpc->arg);
		__atomic_store_n(&rpc->state, DP_RPC_DONE, __ATOMIC_RELEASE);
		w->cnt[ROCE_DP_RPC]++;
	}
	return n;
}

/* Send what lib/net built on port @p; a full queue loses it (the peer asks again). */
static inline void
tx_net(struct roce_worker *w, unsigned int p, struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	roce_txq_send_or_drop(&w->txq[p], pkts, n, now);
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

/* Hand the packets of other workers' QPs to their owners' inbound rings, a burst per owner. */
static void
handoff(struct roce_worker *w, struct rte_mbuf **pkts, uint8_t *owner, uint16_t n)
{
	struct rte_mbuf *batch[DP_BURST];
	uint16_t i, left, nb, sent;

	while (n != 0) {
		uint8_t o = owner[0];

		for (i = 0, nb = 0, left = 0; i < n; i++) {
			if (owner[i] == o) {
				batch[nb++] = pkts[i];
			} else {
				pkts[left] = pkts[i];
				owner[left++] = owner[i];
			}
		}
		n = left;
		sent = (uint16_t)rte_ring_enqueue_burst(w->dp->workers[o].inbound, (void **)batch,
				nb, NULL);
		w->cnt[ROCE_DP_HANDOFF] += sent;
		if (sent < nb) {
			w->cnt[ROCE_DP_HANDOFF_DROP] += nb - sent;
			rte_pktmbuf_free_bulk(batch + sent, nb - sent);
		}
	}
}

/*
 * Frames from port @p: RoCE to its engine (ours in one batch, others to their owners'
 * inbound rings), ARP/ICMP/ND to lib/net, the rest dropped and counted.
 */
static void
rx_dispatch(struct roce_worker *w, unsigned int p, struct rte_mbuf **pkts, uint16_t n,
		uint64_t now)
{
	struct rte_mbuf *mine[DP_BURST], *net[DP_BURST], *out[DP_BURST], *other[DP_BURST];
	uint16_t i, nb_mine = 0, nb_net = 0, nb_out, nb_other = 0;
	uint8_t owner_of[DP_BURST];

	for (i = 0; i < n; i++) {
		const struct roce_pkt_meta *meta = roce_pkt_meta(pkts[i]);
		int owner, drop;

		if (meta->type != ROCE_PKT_ROCE) {
			if (type_is_net[meta->type] && w->net[p] != NULL) {
				net[nb_net++] = pkts[i];
				continue;
			}
			/* PFC frames pause our transmit (roce_dp_pfc.h); counted there. */
			if (meta->type == ROCE_PKT_OTHER &&
					roce_dp_pfc_input(&w->dp->pfc[p], pkts[i], now)) {
				rte_pktmbuf_free(pkts[i]);
				continue;
			}
			w->cnt[ROCE_DP_OTHER_DROP]++;
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		drop = roce_l2_drop(w, p, pkts[i], meta);
		owner = drop < 0 ? roce_dp_qpn_owner(w->dp, meta->qpn) : -1;
		/* Only our engine checks a pending ICRC late (roce_engine_rx_wire(), right before
		 * the packet's payload is copied): a frame dropped or handed over is checked now,
		 * and a wrong ICRC stays its reason as before. */
		if (owner != (int)w->idx && !roce_classify_icrc(pkts[i], &w->wire)) {
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		if (unlikely(drop >= 0)) {
			w->cnt[drop]++;
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		/* The dataplane's port index, where the PMD put its ethdev id: QPN 1 goes to the
		 * QP1 of the port it came in on (roce_engine_rx()), here or at its owner. */
		pkts[i]->port = (uint16_t)p;
		if (owner == (int)w->idx) {
			mine[nb_mine++] = pkts[i];
		} else if (owner < 0) {
			w->cnt[ROCE_DP_NOT_OURS]++;
			rte_pktmbuf_free(pkts[i]);
		} else {
			owner_of[nb_other] = (uint8_t)owner;
			other[nb_other++] = pkts[i];
		}
	}
	if (nb_other != 0)
		handoff(w, other, owner_of, nb_other);
	if (nb_mine != 0) {
		roce_engine_rx_wire(w->eng, mine, nb_mine, now, &w->wire);
		DP_STAGE(w, engine_rx, w->eng, nb_mine);
	}
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
		roce_engine_rx_wire(w->eng, pkts, n, now, &w->wire);
		DP_STAGE(w, built, w->eng);
		total += n;
	}
	for (p = 0; p < w->dp->nb_ports; p++) {
		if (w->rxq[p] < 0 || port_paused(w, p))
			continue;
		DP_STAGE(w, rx_call);
		n = rte_eth_rx_burst(w->dp->ports[p].port_id, (uint16_t)w->rxq[p], pkts, DP_BURST);
		if (n == 0)
			continue;
		DP_STAGE(w, rx, n);
		w->cnt[ROCE_DP_PORT_RX_PKTS] += n;
		for (i = 0; i < n; i++)
			w->cnt[ROCE_DP_PORT_RX_BYTES] += pkts[i]->pkt_len;
		roce_classify_burst(pkts, n, ROCE_CLASSIFY_DEFER_ICRC, &w->wire);
		DP_STAGE(w, classified, n);
		rx_dispatch(w, p, pkts, n, now);
		total += n;
	}
	return total;
}

static inline bool
txq_all_ready(const struct roce_worker *w)
{
	unsigned int p;

	for (p = 0; p < w->dp->nb_ports; p++)
		if (!roce_txq_ready(&w->txq[p]))
			return false;
	return true;
}

/*
 * RoCE frames leave on their QP's port (the mbuf's port, roce_engine_tx()), through our queue
 * or the ring of the worker owning one. The engine is drained a burst at a time while every
 * port's transmit object is ready, so a slow port slows the QPs down instead of dropping
 * their packets (a slow port holds back every QP of the worker, as one send ring would).
 */
static unsigned int
tx_roce(struct roce_worker *w, uint64_t now)
{
	struct rte_mbuf *pkts[DP_BURST], *by_port[ROCE_DP_MAX_PORTS][DP_BURST];
	uint16_t nb[ROCE_DP_MAX_PORTS], n, i;
	unsigned int p, total = 0, nb_ports = w->dp->nb_ports;

	while (txq_all_ready(w) && (n = roce_engine_tx(w->eng, pkts, DP_BURST)) != 0) {
		DP_STAGE(w, tx_take, pkts, n);
		if (nb_ports == 1) {
			total += roce_txq_send(&w->txq[0], pkts, n, now);
			DP_STAGE(w, tx_sent, n);
			continue;
		}
		memset(nb, 0, sizeof(nb));
		for (i = 0; i < n; i++) {
			p = pkts[i]->port;
			if (unlikely(p >= nb_ports)) {
				w->cnt[ROCE_DP_PORT_TX_DROP]++;
				rte_pktmbuf_free(pkts[i]);
				continue;
			}
			by_port[p][nb[p]++] = pkts[i];
		}
		for (p = 0; p < nb_ports; p++)
			if (nb[p] != 0)
				total += roce_txq_send(&w->txq[p], by_port[p], nb[p], now);
		DP_STAGE(w, tx_sent, n);
	}
	return total;
}

/*
 * Frames other workers queued for the port queues we own, a burst per port and loop. While
 * our object of the port holds refused frames the ring is not drained, so the other workers
 * feel the backpressure (their handoff waits and their engines with it) instead of losing
 * packets here.
 */
static unsigned int
tx_rings(struct roce_worker *w, uint64_t now)
{
	struct rte_mbuf *pkts[DP_BURST];
	unsigned int p, total = 0;
	uint16_t n;

	for (p = 0; p < w->dp->nb_ports; p++) {
		if (w->rxq[p] < 0 || !roce_txq_ready(&w->txq[p]))
			continue;
		n = (uint16_t)rte_ring_dequeue_burst(w->txr[p], (void **)pkts, DP_BURST, NULL);
		if (n != 0)
			total += roce_txq_send(&w->txq[p], pkts, n, now);
	}
	return total;
}

/*
 * What waits in the transmit objects: frames the queues refused, held frames of impaired
 * queues that fell due. @return frames sent, or 1 while frames wait: the worker must not sleep
 * past their time.
 */
static unsigned int
tx_flush(struct roce_worker *w, uint64_t now)
{
	unsigned int p, total = 0, held = 0;

	for (p = 0; p < w->dp->nb_ports; p++) {
		total += roce_txq_flush(&w->txq[p], now);
		held |= roce_txq_held(&w->txq[p]);
	}
	return total != 0 ? total : held;
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
	unsigned int idle = 0, work = 0;
	uint64_t prev = roce_dp_now();

	ROCE_LOG(INFO, "worker %u on lcore %u (socket %d)\n", w->idx, w->lcore, w->socket);
	DP_STAGES_INIT(w);
	rte_rcu_qsbr_thread_online(w->dp->qsbr, w->idx);
	while (!w->dp->stop) {
		uint64_t now = roce_dp_now();

		DP_STAGE(w, loop);
		/* The turn that just ended, for the busy fraction (sleeps count as idle). */
		w->cnt[ROCE_DP_LOOP_NS] += now - prev;
		if (work != 0)
			w->cnt[ROCE_DP_BUSY_NS] += now - prev;
		prev = now;

		/* Between PMD calls: see roce_dp_quiesce(). */
		rte_rcu_qsbr_quiescent(w->dp->qsbr, w->idx);
		work = rpc_poll(w);
		work += rx_poll(w, now);
		/* The jobs see what this turn brought and post before the engine builds: a
		 * latency job's answer leaves in this turn, with the ACKs of the same poll. */
		work += dp_services_poll(w, now);
		roce_engine_poll(w->eng, now);
		DP_STAGE(w, built, w->eng);
		/* What waits first, then other workers' frames: our engine would otherwise fill
		 * the queue every time and starve the QPs of the workers that send through us. */
		work += tx_flush(w, now);
		work += tx_rings(w, now);
		work += tx_roce(w, now) + net_poll(w, now);
		if (work != 0) {
			idle = 0;
		} else if (w->dp->conf.idle_sleep_us != 0 && ++idle > 1000) {
			idle_sleep(w);
		}
	}
	rte_rcu_qsbr_thread_offline(w->dp->qsbr, w->idx);
	rpc_poll(w);
	DP_STAGES_FINI(w);
	return 0;
}
