/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The daemon's counters as one set: the workers' snapshots summed, then published group by
 * group to whatever sink asks (the control socket's JSON, telemetry), so both show the same
 * names. The telemetry commands /roce/info, /roce/counters and /roce/worker are registered by
 * the library itself (RTE_INIT, as DPDK's lib/ring) and read the dataplane that is running.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "dp_private.h"
#include "roce_dp_capture.h"

static const struct roce_counter_desc dp_desc[ROCE_DP_CNT_NUM] = {
	ROCE_DP_COUNTERS(ROCE_COUNTER_DESC)
};

const struct roce_counter_family roce_dp_counter_family = {
	.name = "dataplane",
	.about = "per worker: ports, hand-offs between workers, control requests",
	.desc = dp_desc,
	.nb = ROCE_DP_CNT_NUM,
};

/* The groups of a worker snapshot, in publishing order, and where their values are. */
static const struct roce_counter_group groups[] = {
	{ &roce_dp_counter_family, "", NULL },
	{ &roce_xport_counter_family, "", NULL },
	{ &roce_net_counter_family, "NET_", NULL },
	{ &roce_cc_counter_family, "CC_", NULL },
	{ &roce_wire_type_counter_family, "RX_", NULL },
	{ &roce_wire_drop_counter_family, "DROP_", NULL },
};

static const size_t group_off[RTE_DIM(groups)] = {
	offsetof(struct roce_worker_stats, dp),
	offsetof(struct roce_worker_stats, xport),
	offsetof(struct roce_worker_stats, net),
	offsetof(struct roce_worker_stats, cc),
	offsetof(struct roce_worker_stats, wire.type),
	offsetof(struct roce_worker_stats, wire.drop[1]),
};

#define NB_STATS (ROCE_DP_CNT_NUM + ROCE_NET_C_NUM + ROCE_XC_NUM + ROCE_CCC_NUM + \
		ROCE_PKT_TYPE_NUM + ROCE_DROP_NUM)
/* Summed as one array: a member that is not a counter would be added up too. */
static_assert(sizeof(struct roce_worker_stats) == NB_STATS * sizeof(uint64_t),
		"struct roce_worker_stats holds uint64_t counters only");
/*
 * Telemetry drops what does not fit one dictionary. Everything fits but with a direction
 * impaired and a capture run, or both directions impaired: then /roce/counters loses the
 * last ones (the end of the CAPTURE_ or GSI_ group); the counters command has them all.
 */
static_assert(NB_STATS - 1 + ROCE_IMPAIR_CNT_NUM + ROCE_DP_PFC_CNT_NUM + ROCE_DP_GSI_C_NUM <=
		RTE_TEL_MAX_DICT_ENTRIES,
		"the daemon's counters, one direction impaired, fit one telemetry dictionary");

/* The ports' PFC, summed over the ports (pfc.show has each one's). */
static const struct roce_counter_group pfc_group = { &roce_dp_pfc_counter_family, "PFC_",
	"in the daemon-wide sums, summed over the ports" };

const struct roce_counter_group *
roce_dp_counter_group(unsigned int i)
{
	if (i < RTE_DIM(groups))
		return &groups[i];
	i -= RTE_DIM(groups);
	if (i < ROCE_IMPAIR_NB_DIRS)
		return &roce_impair_counter_group[i];
	if (i == ROCE_IMPAIR_NB_DIRS)
		return &pfc_group;
	if (i == ROCE_IMPAIR_NB_DIRS + 1)
		return &roce_dp_gsi_counter_group;
	return i == ROCE_IMPAIR_NB_DIRS + 2 ? &roce_capture_counter_group : NULL;
}

/* The baselines of roce_dp_counters_clear(): written by the control thread, read by it and by
 * telemetry's. */
static pthread_mutex_t base_lock = PTHREAD_MUTEX_INITIALIZER;

/* @p v minus its baseline; a counter below its baseline started again (a port restart
 * resets the PMD's), and counts from zero. */
static inline uint64_t
since_base(uint64_t v, uint64_t base)
{
	return v >= base ? v - base : v;
}

static void
sub_base(uint64_t *v, const uint64_t *base, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		v[i] = since_base(v[i], base[i]);
}

int
roce_dp_counters_sum(struct roce_dp *dp, unsigned int first, unsigned int last,
		struct roce_worker_stats *sum)
{
	struct roce_worker_stats s;
	unsigned int w;
	int ret;

	memset(sum, 0, sizeof(*sum));
	if (last > dp->conf.nb_workers)
		return -EINVAL;
	for (w = first; w < last; w++) {
		ret = roce_dp_worker_stats(dp, w, &s);
		if (ret != 0)
			return ret;
		pthread_mutex_lock(&base_lock);
		sub_base((uint64_t *)&s, (const uint64_t *)&dp->workers[w].cnt_base, NB_STATS);
		pthread_mutex_unlock(&base_lock);
		roce_counters_add((uint64_t *)sum, (const uint64_t *)&s, NB_STATS);
	}
	return 0;
}

/* The PMD's xstats of port @p p, in @p *out (malloc'ed, @p *nb entries). */
static int
xstats_read(const struct roce_dp *dp, unsigned int p, struct rte_eth_xstat **out,
		unsigned int *nb)
{
	uint16_t port_id = dp->ports[p].port_id;
	struct rte_eth_xstat *x;
	int n, m;

	*out = NULL;
	*nb = 0;
	n = rte_eth_xstats_get(port_id, NULL, 0);
	if (n <= 0)
		return n;
	x = calloc((size_t)n, sizeof(*x));
	if (x == NULL)
		return -ENOMEM;
	m = rte_eth_xstats_get(port_id, x, (unsigned int)n);
	if (m < 0 || m > n) {
		free(x);
		return m < 0 ? m : -EAGAIN;
	}
	*out = x;
	*nb = (unsigned int)m;
	return 0;
}

/* The ports' PFC counters added up. */
static void
pfc_sum(struct roce_dp *dp, uint64_t sum[ROCE_DP_PFC_CNT_NUM])
{
	struct roce_dp_pfc_state ps;
	unsigned int p;

	memset(sum, 0, sizeof(uint64_t) * ROCE_DP_PFC_CNT_NUM);
	for (p = 0; p < dp->nb_ports; p++) {
		roce_dp_pfc_read(&dp->pfc[p], roce_dp_now(), &ps);
		roce_counters_add(sum, ps.cnt, ROCE_DP_PFC_CNT_NUM);
	}
}

int
roce_dp_counters_clear(struct roce_dp *dp)
{
	struct roce_worker_stats *snap;
	struct rte_eth_stats es[ROCE_DP_MAX_PORTS];
	struct rte_eth_xstat *xs[ROCE_DP_MAX_PORTS] = { NULL };
	unsigned int nxs[ROCE_DP_MAX_PORTS] = { 0 };
	uint64_t imp[ROCE_IMPAIR_NB_DIRS][ROCE_IMPAIR_CNT_NUM], pfc[ROCE_DP_PFC_CNT_NUM];
	uint64_t cap[ROCE_CAPTURE_CNT_NUM], gsi[ROCE_DP_GSI_C_NUM];
	unsigned int w, p, d;
	int ret = 0;

	snap = calloc(dp->conf.nb_workers, sizeof(*snap));
	if (snap == NULL)
		return -ENOMEM;
	/* Everything read first, so that a failure changes nothing. */
	for (w = 0; w < dp->conf.nb_workers && ret == 0; w++)
		ret = roce_dp_worker_stats(dp, w, &snap[w]);
	for (p = 0; p < dp->nb_ports && ret == 0; p++) {
		ret = rte_eth_stats_get(dp->ports[p].port_id, &es[p]);
		if (ret == 0)
			ret = xstats_read(dp, p, &xs[p], &nxs[p]);
	}
	for (d = 0; d < ROCE_IMPAIR_NB_DIRS; d++)
		roce_impair_counters_total(d, imp[d]);
	pfc_sum(dp, pfc);
	roce_dp_gsi_counters(dp, gsi);
	roce_dp_capture_counters(dp, cap);
	if (ret == 0) {
		pthread_mutex_lock(&base_lock);
		for (w = 0; w < dp->conf.nb_workers; w++)
			dp->workers[w].cnt_base = snap[w];
		for (p = 0; p < dp->nb_ports; p++) {
			dp->port_base[p] = es[p];
			free(dp->xstat_base[p]);
			dp->xstat_base[p] = xs[p];
			dp->nb_xstat_base[p] = nxs[p];
			xs[p] = NULL;
		}
		memcpy(dp->impair_base, imp, sizeof(imp));
		memcpy(dp->pfc_base, pfc, sizeof(pfc));
		memcpy(dp->gsi_base, gsi, sizeof(gsi));
		memcpy(dp->capture_base, cap, sizeof(cap));
		pthread_mutex_unlock(&base_lock);
	}
	for (p = 0; p < dp->nb_ports; p++)
		free(xs[p]);
	free(snap);
	return ret;
}

void
dp_counters_fini(struct roce_dp *dp)
{
	unsigned int p;

	for (p = 0; p < ROCE_DP_MAX_PORTS; p++) {
		free(dp->xstat_base[p]);
		dp->xstat_base[p] = NULL;
	}
}

int
roce_dp_port_stats(struct roce_dp *dp, unsigned int i, struct rte_eth_stats *st)
{
	const struct rte_eth_stats *b;
	int ret;

	if (i >= dp->nb_ports)
		return -EINVAL;
	ret = rte_eth_stats_get(dp->ports[i].port_id, st);
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&base_lock);
	b = &dp->port_base[i];
	st->ipackets = since_base(st->ipackets, b->ipackets);
	st->opackets = since_base(st->opackets, b->opackets);
	st->ibytes = since_base(st->ibytes, b->ibytes);
	st->obytes = since_base(st->obytes, b->obytes);
	st->imissed = since_base(st->imissed, b->imissed);
	st->ierrors = since_base(st->ierrors, b->ierrors);
	st->oerrors = since_base(st->oerrors, b->oerrors);
	st->rx_nombuf = since_base(st->rx_nombuf, b->rx_nombuf);
	pthread_mutex_unlock(&base_lock);
	return 0;
}

/* The baseline of xstat @p id of port @p p (0 when it has none). Under base_lock. */
static uint64_t
xstat_base_of(const struct roce_dp *dp, unsigned int p, uint64_t id)
{
	unsigned int j;

	for (j = 0; j < dp->nb_xstat_base[p]; j++)
		if (dp->xstat_base[p][j].id == id)
			return dp->xstat_base[p][j].value;
	return 0;
}

int
roce_dp_port_xstats(struct roce_dp *dp, unsigned int i, unsigned int flags,
		roce_counter_sink sink, void *arg)
{
	struct rte_eth_xstat_name *names = NULL;
	struct rte_eth_xstat *x;
	unsigned int nb, j;
	uint64_t v;
	int ret, n;

	if (i >= dp->nb_ports)
		return -EINVAL;
	ret = xstats_read(dp, i, &x, &nb);
	if (ret != 0 || nb == 0)
		return ret;
	n = rte_eth_xstats_get_names(dp->ports[i].port_id, NULL, 0);
	if (n > 0)
		names = calloc((size_t)n, sizeof(*names));
	if (names == NULL || rte_eth_xstats_get_names(dp->ports[i].port_id, names,
			(unsigned int)n) != n) {
		free(names);
		free(x);
		return n < 0 ? n : -ENOMEM;
	}
	pthread_mutex_lock(&base_lock);
	for (j = 0; j < nb; j++) {
		if (x[j].id >= (uint64_t)n)
			continue;
		v = since_base(x[j].value, xstat_base_of(dp, i, x[j].id));
		if (v != 0 || !(flags & ROCE_COUNTERS_NONZERO))
			sink(arg, names[x[j].id].name, NULL, v);
	}
	pthread_mutex_unlock(&base_lock);
	free(names);
	free(x);
	return 0;
}

int
roce_dp_counters_emit(struct roce_dp *dp, unsigned int first, unsigned int last,
		unsigned int flags, roce_counter_sink sink, void *arg)
{
	uint64_t imp[ROCE_IMPAIR_CNT_NUM], pfc[ROCE_DP_PFC_CNT_NUM];
	uint64_t cap[ROCE_CAPTURE_CNT_NUM], gsi[ROCE_DP_GSI_C_NUM];
	struct roce_worker_stats sum;
	unsigned int i;
	int ret;

	ret = roce_dp_counters_sum(dp, first, last, &sum);
	if (ret != 0)
		return ret;
	for (i = 0; i < RTE_DIM(groups); i++)
		roce_counters_emit(&groups[i],
				(const uint64_t *)(const void *)((const char *)&sum + group_off[i]),
				flags, sink, arg);
	/* Impairment counts per port queue, not per worker: in the daemon-wide sums only. */
	if (first != 0 || last != dp->conf.nb_workers)
		return 0;
	for (i = 0; i < ROCE_IMPAIR_NB_DIRS; i++) {
		if (!roce_impair_counters_total(i, imp))
			continue;
		pthread_mutex_lock(&base_lock);
		sub_base(imp, dp->impair_base[i], ROCE_IMPAIR_CNT_NUM);
		pthread_mutex_unlock(&base_lock);
		roce_counters_emit(&roce_impair_counter_group[i], imp, flags, sink, arg);
	}
	pfc_sum(dp, pfc);
	pthread_mutex_lock(&base_lock);
	sub_base(pfc, dp->pfc_base, ROCE_DP_PFC_CNT_NUM);
	pthread_mutex_unlock(&base_lock);
	roce_counters_emit(&pfc_group, pfc, flags, sink, arg);
	/* One agent serves every port's QP1. */
	roce_dp_gsi_counters(dp, gsi);
	pthread_mutex_lock(&base_lock);
	sub_base(gsi, dp->gsi_base, ROCE_DP_GSI_C_NUM);
	pthread_mutex_unlock(&base_lock);
	roce_counters_emit(&roce_dp_gsi_counter_group, gsi, flags, sink, arg);
	/* Captures count per port queue too. */
	if (roce_dp_capture_counters(dp, cap)) {
		pthread_mutex_lock(&base_lock);
		sub_base(cap, dp->capture_base, ROCE_CAPTURE_CNT_NUM);
		pthread_mutex_unlock(&base_lock);
		roce_counters_emit(&roce_capture_counter_group, cap, flags, sink, arg);
	}
	return 0;
}

/* ---- telemetry ---- */

/* The started dataplane, or NULL; a command holds the lock while it reads the workers, so
 * roce_dp_stop() cannot pull them away in the middle. */
static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct roce_dp *tel_dp;

void
dp_telemetry_attach(struct roce_dp *dp)
{
	pthread_mutex_lock(&tel_lock);
	tel_dp = dp;
	pthread_mutex_unlock(&tel_lock);
}

void
dp_telemetry_detach(struct roce_dp *dp)
{
	pthread_mutex_lock(&tel_lock);
	if (tel_dp == dp)
		tel_dp = NULL;
	pthread_mutex_unlock(&tel_lock);
}

/* Counters of one worker, or of all summed when @p idx is -1. */
static int
tel_counters_of(long idx, struct rte_tel_data *d)
{
	unsigned int nw;
	int ret = -ENODEV;

	pthread_mutex_lock(&tel_lock);
	if (tel_dp != NULL) {
		nw = roce_dp_nb_workers(tel_dp);
		ret = -EINVAL;
		if (idx < (long)nw) {
			rte_tel_data_start_dict(d);
			ret = idx < 0 ? roce_dp_counters_emit(tel_dp, 0, nw, 0,
					roce_counters_tel_sink, d) :
				roce_dp_counters_emit(tel_dp, (unsigned int)idx,
					(unsigned int)idx + 1, 0, roce_counters_tel_sink, d);
		}
	}
	pthread_mutex_unlock(&tel_lock);
	return ret;
}

static int
tel_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	return tel_counters_of(-1, d);
}

static int
tel_worker(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char *end;
	long idx;

	RTE_SET_USED(cmd);
	if (params == NULL || *params == '\0')
		return -EINVAL;
	idx = strtol(params, &end, 10);
	if (*end != '\0' || idx < 0)
		return -EINVAL;
	return tel_counters_of(idx, d);
}

static int
tel_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int ret = -ENODEV;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	pthread_mutex_lock(&tel_lock);
	if (tel_dp != NULL) {
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_int(d, "workers", (int)roce_dp_nb_workers(tel_dp));
		rte_tel_data_add_dict_string(d, "classifier",
				roce_classify_impl_name(ROCE_CLASSIFY_AUTO));
		ret = 0;
	}
	pthread_mutex_unlock(&tel_lock);
	return ret;
}

RTE_INIT(dp_telemetry_init)
{
	rte_telemetry_register_cmd("/roce/info", tel_info, "rocedp summary");
	rte_telemetry_register_cmd("/roce/counters", tel_counters,
			"every counter, summed over workers (as the control socket's counters)");
	rte_telemetry_register_cmd("/roce/worker", tel_worker,
			"counters of one worker. Parameters: int worker index");
}
