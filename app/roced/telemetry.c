/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK telemetry commands under /roce/, so that dpdk-telemetry.py shows the counters. They run
 * on the telemetry thread and read workers through roce_dp_call() like the control lcore does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "roced_telemetry.h"

/* NULL once the daemon stops: commands then fail instead of reading freed workers. */
static struct roce_dp *volatile tm_dp;

/* Counters of one worker, or of all summed when @idx is -1: the control socket's set. */
static int
worker_counters(int idx, struct rte_tel_data *d)
{
	unsigned int first = idx < 0 ? 0 : (unsigned int)idx;
	unsigned int last = idx < 0 ? roce_dp_nb_workers(tm_dp) : first + 1;

	if (tm_dp == NULL)
		return -ENODEV;
	if (last > roce_dp_nb_workers(tm_dp))
		return -EINVAL;
	rte_tel_data_start_dict(d);
	return roce_dp_counters_emit(tm_dp, first, last, 0, roce_counters_tel_sink, d) != 0 ?
		-EIO : 0;
}

static int
tm_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	return worker_counters(-1, d);
}

static int
tm_worker(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char *end;
	long idx;

	RTE_SET_USED(cmd);
	if (params == NULL || *params == '\0')
		return -EINVAL;
	idx = strtol(params, &end, 10);
	if (*end != '\0' || idx < 0)
		return -EINVAL;
	return worker_counters((int)idx, d);
}

static int
tm_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (tm_dp == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "workers", (int)roce_dp_nb_workers(tm_dp));
	rte_tel_data_add_dict_string(d, "classifier",
			roce_classify_impl_name(ROCE_CLASSIFY_AUTO));
	return 0;
}

void
roced_telemetry_init(struct roce_dp *dp)
{
	tm_dp = dp;
	rte_telemetry_register_cmd("/roce/info", tm_info, "rocedp summary");
	rte_telemetry_register_cmd("/roce/counters", tm_counters,
			"every counter, summed over workers");
	rte_telemetry_register_cmd("/roce/worker", tm_worker,
			"counters of one worker. Parameters: int worker index");
}

void
roced_telemetry_fini(void)
{
	tm_dp = NULL;
}
