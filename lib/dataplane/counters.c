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
#include <rte_telemetry.h>

#include "dp_private.h"

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
/* Telemetry drops what does not fit one dictionary. */
static_assert(NB_STATS - 1 + ROCE_IMPAIR_NB_DIRS * ROCE_IMPAIR_CNT_NUM <=
		RTE_TEL_MAX_DICT_ENTRIES, "the daemon's counters fit one telemetry dictionary");

const struct roce_counter_group *
roce_dp_counter_group(unsigned int i)
{
	if (i < RTE_DIM(groups))
		return &groups[i];
	i -= RTE_DIM(groups);
	return i < ROCE_IMPAIR_NB_DIRS ? &roce_impair_counter_group[i] : NULL;
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
		roce_counters_add((uint64_t *)sum, (const uint64_t *)&s, NB_STATS);
	}
	return 0;
}

int
roce_dp_counters_emit(struct roce_dp *dp, unsigned int first, unsigned int last,
		unsigned int flags, roce_counter_sink sink, void *arg)
{
	uint64_t imp[ROCE_IMPAIR_CNT_NUM];
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
	for (i = 0; i < ROCE_IMPAIR_NB_DIRS; i++)
		if (roce_impair_counters_total(i, imp))
			roce_counters_emit(&roce_impair_counter_group[i], imp, flags, sink, arg);
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
