/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce_dp_call() against a worker that does not take its request in time (starved of CPU,
 * or busy in a long request): the caller gets -ETIMEDOUT and goes on, the request is never
 * run (the caller's argument may be gone by then: the worker must not touch it), RPC_LATE
 * counts it, and the worker answers the next request. It used to stop the daemon.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <rte_lcore.h>

#include "dp_private.h"
#include "roce_dataplane.h"
#include "roce_test.h"

struct holder {
	struct roce_dp *dp;
	volatile int held, release;
	int ret;
};

/* Holds the worker until released: what a starved worker looks like to its callers. */
static int
hold(struct roce_worker *w, void *arg)
{
	struct holder *h = arg;

	RTE_SET_USED(w);
	h->held = 1;
	while (!h->release)
		rte_pause();
	return 7;
}

static int
bump(struct roce_worker *w, void *arg)
{
	RTE_SET_USED(w);
	return ++*(int *)arg;
}

static void *
holder_main(void *arg)
{
	struct holder *h = arg;

	h->ret = roce_dp_call(h->dp, 0, hold, h, 10000);
	return NULL;
}

/* On a started dataplane the sum is itself a request to the worker. */
static uint64_t
rpc_count(struct roce_dp *dp, enum roce_dp_counter c)
{
	struct roce_worker_stats st;

	return roce_dp_counters_sum(dp, 0, 1, &st) == 0 ? st.dp[c] : UINT64_MAX;
}

static void
test_timeout(void)
{
	struct roce_dp_conf c = { .nb_workers = 1, .nb_mbufs = 512, .mbuf_data_room = 256,
		.max_qps = 16, .worker_lcores = { 1 } };
	struct holder h = { 0 };
	double t0, waited;
	pthread_t th;
	int x = 0, ret;

	h.dp = roce_dp_create(&c);
	RT_CHECK(h.dp != NULL, "dataplane: %s", rte_strerror(rte_errno));
	if (h.dp == NULL)
		return;
	RT_CHECK(roce_dp_start(h.dp) == 0, "workers started");
	RT_CHECK(roce_dp_call(h.dp, 0, bump, &x, 1000) == 1 && x == 1, "a call is answered");

	/* The worker is held by another caller's request; ours waits behind it. */
	RT_CHECK(pthread_create(&th, NULL, holder_main, &h) == 0, "holder thread");
	while (!h.held)
		rte_pause();
	t0 = rt_now();
	ret = roce_dp_call(h.dp, 0, bump, &x, 200);
	waited = rt_now() - t0;
	RT_CHECK(ret == -ETIMEDOUT, "timed out: %d", ret);
	RT_CHECK(waited >= 0.19 && waited < 5, "after its timeout: %.3f s", waited);

	/* Released: the holder's call completes, the withdrawn ones never run. */
	h.release = 1;
	pthread_join(th, NULL);
	RT_CHECK(h.ret == 7, "the running request finished: %d", h.ret);
	RT_CHECK(roce_dp_call(h.dp, 0, bump, &x, 1000) == 2 && x == 2,
			"withdrawn requests did not run, the next one does: x %d", x);
	RT_CHECK(rpc_count(h.dp, ROCE_DP_RPC_LATE) >= 1, "RPC_LATE %" PRIu64,
			rpc_count(h.dp, ROCE_DP_RPC_LATE));
	roce_dp_destroy(h.dp);
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	/* The worker's lcore floats over both CPUs: the test runs on one. */
	rt_eal_init_lcores(argv[0], "0,1@(0-1)");
	RT_RUN(test_timeout);
	return rt_report("test_dp_call");
}
