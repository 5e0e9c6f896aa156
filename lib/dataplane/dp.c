/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "dp_private.h"

RTE_LOG_REGISTER(roce_dp_logtype, roce.dataplane, INFO);

/* roce_dp_call() spins this long for an answer, then sleeps this long between looks. */
#define RPC_SPIN_NS 20000
#define RPC_SLEEP_US 20

/* Requests left in a stopped worker's ring: withdrawn ones, nobody waits for them. */
static void
rpc_drain(struct rte_ring *r)
{
	void *rpc;

	while (r != NULL && rte_ring_dequeue(r, &rpc) == 0)
		free(rpc);
}

uint64_t
roce_dp_now(void)
{
	/* A multiply, not a divide: every worker loop reads the clock. */
	static double ns_per_tsc;

	if (unlikely(ns_per_tsc == 0))
		ns_per_tsc = 1e9 / (double)rte_get_tsc_hz();
	return (uint64_t)((double)rte_rdtsc() * ns_per_tsc);
}

/* Whether a port may send zero-copy, so that the workers need small mbufs. */
static int
dp_wants_zc(const struct roce_dp *dp)
{
	unsigned int p;

	for (p = 0; p < dp->conf.nb_ports; p++)
		if (roce_port_tx_zc_wanted(dp->conf.port_ids[p],
				(enum roce_port_tx_copy)dp->conf.tx_copy[p]))
			return 1;
	return 0;
}

/* Mempool, rings and engine of one worker, on its NUMA node; @zc: a port sends zero-copy. */
static int
worker_init(struct roce_dp *dp, struct roce_worker *w, unsigned int idx, int zc)
{
	const struct roce_dp_conf *c = &dp->conf;
	struct roce_engine_conf ec = {0};
	char name[RTE_MEMPOOL_NAMESIZE];
	unsigned int p;

	w->dp = dp;
	w->idx = idx;
	w->lcore = c->worker_lcores[idx];
	w->socket = (int)rte_lcore_to_socket_id(w->lcore);
	snprintf(name, sizeof(name), "roce_mp_%u", idx);
	w->mp = rte_pktmbuf_pool_create(name, c->nb_mbufs, 256, 0,
			c->mbuf_data_room + RTE_PKTMBUF_HEADROOM, w->socket);
	snprintf(name, sizeof(name), "roce_in_%u", idx);
	w->inbound = rte_ring_create(name, DP_RING_SIZE, w->socket, RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "roce_rpc_%u", idx);
	/* Producers: the control lcore and the telemetry thread. */
	w->rpc = rte_ring_create(name, 64, w->socket, RING_F_SC_DEQ);
	for (p = 0; p < dp->nb_ports; p++) {
		snprintf(name, sizeof(name), "roce_tx_%u_%u", idx, p);
		w->txr[p] = rte_ring_create(name, DP_RING_SIZE, w->socket, RING_F_SC_DEQ);
		if (w->txr[p] == NULL)
			return -rte_errno;
	}
	if (w->mp == NULL || w->inbound == NULL || w->rpc == NULL)
		return -rte_errno;
	if (zc) {
		/* Two per frame of one piece (payload, pad and ICRC), one more per SGE; short
		 * of them, payloads go copied (TX_COPY_NOMBUF). */
		snprintf(name, sizeof(name), "roce_zc_%u", idx);
		w->zc_mp = rte_pktmbuf_pool_create(name, 2 * c->nb_mbufs, 256, 0,
				RTE_PKTMBUF_HEADROOM, w->socket);
		if (w->zc_mp == NULL)
			return -rte_errno;
	}
	ec.mp = w->mp;
	ec.zc_mp = w->zc_mp;
	ec.socket_id = w->socket;
	ec.max_qps = c->max_qps;
	ec.qpn_base = ROCE_DP_QPN_BASE(idx);
	ec.qpn_count = 1u << ROCE_DP_QPN_SHIFT;
	w->eng = roce_engine_create(&ec);
	if (w->eng == NULL)
		return -rte_errno;
	return dp_services_init(w);
}

/* Why roce_dp_create() fails: into the caller's buffer, else the log. */
static void __rte_format_printf(2, 3)
dp_fail(const struct roce_dp *dp, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (dp->conf.err != NULL && dp->conf.err_len > 0)
		snprintf(dp->conf.err, dp->conf.err_len, "%s", msg);
	else
		ROCE_LOG(ERR, "%s\n", msg);
}

/* The ARP/ND/ICMP instance of a worker on a port it reads. */
static int
worker_net_init(struct roce_dp *dp, struct roce_worker *w, unsigned int p)
{
	const struct roce_dp_addr *a = &dp->conf.addr[p];
	struct roce_net_conf nc = {
		.mac = dp->ports[p].mac,
		.vlan = a->vlan != 0,
		.vlan_tci = a->vlan,
		.ip4_prefix_len = a->prefix4,
		.ip6_prefix_len = a->prefix6,
		.mtu = dp->conf.mtu,
		.mp = w->mp,
		.socket_id = w->socket,
	};

	if (w->rxq[p] < 0)
		return 0;
	memcpy(&nc.ip4, a->ip4, 4);
	memcpy(&nc.gw4, a->gw4, 4);
	memcpy(nc.ip6, a->ip6, 16);
	w->net[p] = roce_net_create(&nc);
	if (w->net[p] == NULL) {
		dp_fail(dp, "port %u: bad addresses for ARP/ND: %s", dp->ports[p].port_id,
				rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}

/* How worker @w's engine builds payload packets for port @p: copied or zero-copy. */
static int
worker_tx_zc_init(struct roce_dp *dp, struct roce_worker *w, unsigned int p)
{
	uint32_t min = dp->conf.tx_zc_min[p];
	struct roce_tx_zc zc = { .max_segs = dp->ports[p].tx_max_segs };

	if (min == 0)
		min = dp->conf.tx_copy[p] == ROCE_PORT_TX_COPY_NEVER ? 1 : ROCE_DP_TX_ZC_MIN;
	zc.min_len = min;
	return roce_engine_set_tx_zc(w->eng, (uint8_t)p, &zc);
}

/* Ports: a queue pair per worker where the PMD has them, else worker 0 reads them all. */
static int
ports_init(struct roce_dp *dp)
{
	struct rte_mempool *mps[ROCE_DP_MAX_WORKERS];
	unsigned int p, i;
	int ret;

	for (i = 0; i < dp->conf.nb_workers; i++)
		mps[i] = dp->workers[i].mp;
	for (p = 0; p < dp->conf.nb_ports; p++) {
		char err[256] = "";

		ret = roce_port_setup(dp->conf.port_ids[p], dp->conf.nb_workers,
				dp->conf.queues[p], dp->conf.mtu,
				(enum roce_port_tx_copy)dp->conf.tx_copy[p], mps, &dp->ports[p],
				err, sizeof(err));
		if (ret != 0) {
			dp_fail(dp, "port %u: %s", dp->conf.port_ids[p],
					err[0] != '\0' ? err : strerror(-ret));
			return ret;
		}
		dp->nb_ports++;
		for (i = 0; i < dp->conf.nb_workers; i++) {
			struct roce_worker *w = &dp->workers[i];
			/* Without a queue of its own: through the ring of the one owning queue q. */
			uint16_t q = (uint16_t)(i % dp->ports[p].nb_queues);

			w->rxq[p] = i < dp->ports[p].nb_queues ? (int)i : -1;
			roce_txq_init(&w->txq[p], dp->ports[p].port_id, q,
					w->rxq[p] < 0 ? dp->workers[q].txr[p] : NULL,
					&dp->port_paused[p], w->cnt);
			ret = worker_net_init(dp, w, p);
			if (ret == 0)
				ret = worker_tx_zc_init(dp, w, p);
			if (ret != 0)
				return ret;
		}
		ret = dp_pfc_port_init(dp, p);
		if (ret != 0)
			return ret;
		ROCE_LOG(INFO, "port %u (%s, %s): %u queue(s)%s, MTU %u, %s transmit\n",
				dp->ports[p].port_id, dp->ports[p].name,
				dp->ports[p].profile->family, dp->ports[p].nb_queues,
				dp->ports[p].rss ? ", RSS" : "", dp->ports[p].mtu,
				dp->ports[p].tx_max_segs != 0 ? "zero-copy" : "copy");
	}
	return 0;
}

struct roce_dp *
roce_dp_create(const struct roce_dp_conf *conf)
{
	struct roce_dp *dp;
	unsigned int i;
	int ret, zc;

	if (conf->nb_workers == 0 || conf->nb_workers > ROCE_DP_MAX_WORKERS ||
			conf->nb_ports > ROCE_DP_MAX_PORTS) {
		rte_errno = EINVAL;
		return NULL;
	}
	ret = roce_pkt_meta_register();
	if (ret != 0) {
		rte_errno = -ret;
		return NULL;
	}
	dp = rte_zmalloc("roce_dp", sizeof(*dp), RTE_CACHE_LINE_SIZE);
	if (dp == NULL)
		goto nomem;
	dp->conf = *conf;
	dp->workers = rte_zmalloc("roce_workers", conf->nb_workers * sizeof(dp->workers[0]),
			RTE_CACHE_LINE_SIZE);
	if (dp->workers == NULL || dp_verbs_init(dp) != 0 || dp_quiesce_init(dp) != 0 ||
			dp_capture_init(dp) != 0 || dp_gsi_init(dp) != 0)
		goto nomem;
	/* The rings are per port, so count the ports first. */
	dp->nb_ports = conf->nb_ports;
	zc = dp_wants_zc(dp);
	for (i = 0; i < conf->nb_workers; i++) {
		ret = worker_init(dp, &dp->workers[i], i, zc);
		if (ret != 0) {
			dp_fail(dp, "worker %u: %s%s", i, strerror(-ret), ret == -ENOMEM ?
					" (its mbufs and QP table: give the EAL more memory, -m or "
					"hugepages, or lower mbufs or max_qps)" : "");
			rte_errno = -ret;
			roce_dp_destroy(dp);
			return NULL;
		}
	}
	dp->nb_ports = 0;
	ret = ports_init(dp);
	if (ret != 0) {
		roce_dp_destroy(dp);
		rte_errno = -ret;
		return NULL;
	}
	dp_port_watch_init(dp);
	return dp;
nomem:
	roce_dp_destroy(dp);
	rte_errno = ENOMEM;
	return NULL;
}

int
roce_dp_start(struct roce_dp *dp)
{
	unsigned int i;
	int ret;

	dp->stop = 0;
	for (i = 0; i < dp->conf.nb_workers; i++) {
		ret = rte_eal_remote_launch(dp_worker_main, &dp->workers[i],
				dp->workers[i].lcore);
		if (ret != 0) {
			ROCE_LOG(ERR, "cannot launch worker %u on lcore %u\n", i,
					dp->workers[i].lcore);
			dp->stop = 1;
			rte_eal_mp_wait_lcore();
			return ret;
		}
	}
	dp->started = 1;
	dp_telemetry_attach(dp);
	return 0;
}

void
roce_dp_stop(struct roce_dp *dp)
{
	if (!dp->started)
		return;
	dp_telemetry_detach(dp);
	dp->stop = 1;
	rte_eal_mp_wait_lcore();
	dp->started = 0;
}

void
roce_dp_destroy(struct roce_dp *dp)
{
	unsigned int i, p;

	if (dp == NULL)
		return;
	roce_dp_stop(dp);
	dp_capture_fini(dp);
	for (p = 0; p < dp->nb_ports; p++)
		roce_port_close(&dp->ports[p]);
	for (i = 0; dp->workers != NULL && i < dp->conf.nb_workers; i++) {
		struct roce_worker *w = &dp->workers[i];

		for (p = 0; p < ROCE_DP_MAX_PORTS; p++) {
			roce_net_free(w->net[p]);
			roce_txq_fini(&w->txq[p]);
		}
		dp_services_fini(w);
		roce_engine_destroy(w->eng);
		rte_ring_free(w->inbound);
		rpc_drain(w->rpc);
		rte_ring_free(w->rpc);
		for (p = 0; p < ROCE_DP_MAX_PORTS; p++)
			rte_ring_free(w->txr[p]);
		rte_mempool_free(w->mp);
		rte_mempool_free(w->zc_mp);
	}
	dp_gsi_fini(dp);
	dp_verbs_fini(dp);
	dp_quiesce_fini(dp);
	dp_counters_fini(dp);
	rte_free(dp->workers);
	rte_free(dp);
}

int
roce_dp_call(struct roce_dp *dp, unsigned int idx, roce_dp_fn fn, void *arg,
		unsigned int timeout_ms)
{
	uint64_t end = roce_dp_now() + (uint64_t)timeout_ms * 1000000, spin_end;
	struct roce_worker *w;
	struct dp_rpc *rpc;
	uint32_t st;
	int ret;

	if (idx >= dp->conf.nb_workers)
		return -EINVAL;
	w = &dp->workers[idx];
	/* Not started (or stopped): the worker is idle, the caller may run it in place. */
	if (!dp->started)
		return fn(w, arg);
	rpc = malloc(sizeof(*rpc));
	if (rpc == NULL)
		return -ENOMEM;
	*rpc = (struct dp_rpc){ .fn = fn, .arg = arg, .state = DP_RPC_QUEUED };
	if (rte_ring_enqueue(w->rpc, rpc) != 0) {
		free(rpc);
		return -EBUSY;
	}
	spin_end = roce_dp_now() + RPC_SPIN_NS;
	while ((st = __atomic_load_n(&rpc->state, __ATOMIC_ACQUIRE)) != DP_RPC_DONE) {
		uint64_t now = roce_dp_now();

		/* Withdrawn if the worker has not taken it: it frees it when it does. One it is
		 * running finishes soon (the worker is scheduled), and arg must live till then. */
		if (now > end && st == DP_RPC_QUEUED &&
				__atomic_compare_exchange_n(&rpc->state, &st, DP_RPC_CANCELLED, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			ROCE_LOG(ERR, "worker %u did not answer in %u ms\n", idx, timeout_ms);
			return -ETIMEDOUT;
		}
		/*
		 * Spin only briefly, then sleep: a control thread spinning for long starves a worker
		 * sharing its CPU, and with group scheduling the load it puts on its CPU takes CPU
		 * share from the daemon's workers on the others (a worker went unscheduled for
		 * seconds while the control thread spun on its answer).
		 */
		if (now < spin_end)
			rte_pause();
		else
			rte_delay_us_sleep(RPC_SLEEP_US);
	}
	ret = rpc->ret;
	free(rpc);
	return ret;
}

unsigned int
roce_dp_nb_workers(const struct roce_dp *dp)
{
	return dp->conf.nb_workers;
}

int
roce_dp_worker_lcore(const struct roce_dp *dp, unsigned int idx)
{
	return idx < dp->conf.nb_workers ? (int)dp->conf.worker_lcores[idx] : -EINVAL;
}

int
roce_dp_qpn_owner(const struct roce_dp *dp, uint32_t qpn)
{
	return roce_dp_qpn_worker(qpn, dp->conf.nb_workers);
}

const struct roce_port *
roce_dp_port(const struct roce_dp *dp, unsigned int i)
{
	return i < dp->nb_ports ? &dp->ports[i] : NULL;
}

uint32_t
roce_dp_path_mtu_max(const struct roce_dp *dp, unsigned int i, bool ipv6, bool sr)
{
	uint32_t hdr = 0, mtu, op;

	if (i >= dp->nb_ports)
		return 0;
	for (op = 0; op < RTE_DIM(roce_opcode_info); op++) {
		uint32_t mask = roce_opcode_info[op].mask;

		if ((mask & ROCE_M_PAYLOAD) && (sr || !(mask & ROCE_M_SR)))
			hdr = RTE_MAX(hdr, (uint32_t)roce_opcode_info[op].length);
	}
	hdr += (ipv6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr)) +
		sizeof(struct rte_udp_hdr) + ROCE_ICRC_LEN;
	for (mtu = 4096; mtu >= 256; mtu /= 2)
		if (mtu + hdr <= dp->ports[i].mtu)
			return mtu;
	return 0;
}

const struct roce_dp_addr *
roce_dp_addr(const struct roce_dp *dp, unsigned int i)
{
	return &dp->conf.addr[i];
}

static int
stats_on_worker(struct roce_worker *w, void *arg)
{
	struct roce_worker_stats *st = arg;

	uint64_t net[ROCE_NET_C_NUM];
	unsigned int p, c;

	memcpy(st->dp, w->cnt, sizeof(st->dp));
	memset(st->net, 0, sizeof(st->net));
	for (p = 0; p < ROCE_DP_MAX_PORTS; p++) {
		if (w->net[p] == NULL)
			continue;
		roce_net_counters(w->net[p], net);
		for (c = 0; c < ROCE_NET_C_NUM; c++)
			st->net[c] += net[c];
	}
	st->wire = w->wire;
	roce_engine_counters(w->eng, st->xport);
	dp_cc_counters(w, st->cc);
	return 0;
}

int
roce_dp_worker_stats(struct roce_dp *dp, unsigned int idx, struct roce_worker_stats *st)
{
	return roce_dp_call(dp, idx, stats_on_worker, st, 1000);
}

struct tx_impair_rpc {
	unsigned int port;
	struct roce_impair *im;
};

static int
tx_impair_on_worker(struct roce_worker *w, void *arg)
{
	const struct tx_impair_rpc *r = arg;

	/* Only the worker transmitting on a queue of the port touches its stage. */
	if (w->rxq[r->port] < 0)
		return 0;
	return roce_txq_set_impair(&w->txq[r->port], r->im);
}

int
roce_dp_tx_impair(struct roce_dp *dp, unsigned int port, struct roce_impair *im)
{
	struct tx_impair_rpc r = { port, im };
	unsigned int i;
	int ret;

	if (port >= dp->nb_ports || im == NULL)
		return -EINVAL;
	for (i = 0; i < dp->conf.nb_workers; i++) {
		ret = roce_dp_call(dp, i, tx_impair_on_worker, &r, 1000);
		if (ret != 0)
			return ret;
	}
	return 0;
}

struct resolve_rpc {
	unsigned int port;
	const uint8_t *ip;
	int ipv6;
	struct rte_ether_addr *mac;
};

static int
resolve_on_worker(struct roce_worker *w, void *arg)
{
	struct resolve_rpc *r = arg;

	if (w->net[r->port] == NULL)
		return -ENODEV;
	return roce_net_resolve(w->net[r->port], r->ip, r->ipv6, roce_dp_now(), r->mac);
}

int
roce_dp_resolve(struct roce_dp *dp, unsigned int port, const uint8_t *ip, int ipv6,
		struct rte_ether_addr *mac, unsigned int timeout_ms)
{
	struct resolve_rpc r = { port, ip, ipv6, mac };
	uint64_t end = roce_dp_now() + (uint64_t)timeout_ms * 1000000;
	struct timespec ts = { 0, 10 * 1000000 };
	int ret;

	if (port >= dp->nb_ports)
		return -EINVAL;
	/* Worker 0 reads every port's first queue, where ARP and ND replies arrive. */
	while ((ret = roce_dp_call(dp, 0, resolve_on_worker, &r, 1000)) == -EAGAIN &&
			roce_dp_now() < end)
		nanosleep(&ts, NULL);
	return ret == -EAGAIN ? -ETIMEDOUT : ret;
}
