/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Quiescent points of the workers, and ports taken away from them.
 *
 * Every worker reports a quiescent state (rte_rcu_qsbr) once per loop, outside every PMD call.
 * roce_dp_quiesce() returns once each running worker has passed one since it was called: no
 * worker is then inside an rx/tx burst that began before. A port is paused by a flag the
 * workers test before each burst; after the flag and a grace period the port is ours to stop
 * and start (a memif client reconnecting to a restarted server).
 */
#include <errno.h>
#include <string.h>

#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "dp_private.h"

/* A memif client whose link stayed down this long is restarted to reconnect. */
#define RECONNECT_NS (1000ull * 1000 * 1000)

int
dp_quiesce_init(struct roce_dp *dp)
{
	size_t sz = rte_rcu_qsbr_get_memsize(dp->conf.nb_workers);
	unsigned int i;

	dp->qsbr = rte_zmalloc("roce_dp_qsbr", sz, RTE_CACHE_LINE_SIZE);
	if (dp->qsbr == NULL)
		return -ENOMEM;
	if (rte_rcu_qsbr_init(dp->qsbr, dp->conf.nb_workers) != 0)
		return -rte_errno;
	for (i = 0; i < dp->conf.nb_workers; i++)
		rte_rcu_qsbr_thread_register(dp->qsbr, i);
	return 0;
}

void
dp_quiesce_fini(struct roce_dp *dp)
{
	rte_free(dp->qsbr);
	dp->qsbr = NULL;
}

void
roce_dp_quiesce(struct roce_dp *dp)
{
	if (dp == NULL || dp->qsbr == NULL)
		return;
	rte_rcu_qsbr_synchronize(dp->qsbr, RTE_QSBR_THRID_INVALID);
	__atomic_fetch_add(&dp->quiesces, 1, __ATOMIC_RELAXED);
}

void
roce_dp_quiesce_stats(const struct roce_dp *dp, uint64_t *quiesces, uint64_t *restarts)
{
	unsigned int p;

	*quiesces = __atomic_load_n(&dp->quiesces, __ATOMIC_RELAXED);
	*restarts = 0;
	for (p = 0; p < dp->nb_ports; p++)
		*restarts += dp->restarts[p];
}

/* Whether a memif port is the client side (role=client in its devargs; server is the default). */
static bool
memif_client(uint16_t port_id)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;
	struct rte_kvargs *kv;
	const char *role;
	bool client;

	if (rte_eth_dev_info_get(port_id, &info) != 0 || strstr(info.driver_name, "memif") == NULL)
		return false;
	da = rte_dev_devargs(info.device);
	kv = da != NULL && da->args != NULL ? rte_kvargs_parse(da->args, NULL) : NULL;
	role = kv != NULL ? rte_kvargs_get(kv, "role") : NULL;
	client = role != NULL && strcmp(role, "client") == 0;
	rte_kvargs_free(kv);
	return client;
}

/* Stop and start port @p with no worker touching it. */
static int
port_restart(struct roce_dp *dp, unsigned int p)
{
	uint16_t id = dp->ports[p].port_id;
	int ret;

	__atomic_store_n(&dp->port_paused[p], 1, __ATOMIC_RELEASE);
	roce_dp_quiesce(dp);
	ret = rte_eth_dev_stop(id);
	if (ret == 0)
		ret = rte_eth_dev_start(id);
	__atomic_store_n(&dp->port_paused[p], 0, __ATOMIC_RELEASE);
	return ret;
}

unsigned int
roce_dp_port_watch(struct roce_dp *dp, uint64_t now_ns)
{
	unsigned int p, restarted = 0;

	dp_pfc_watch(dp);
	dp_mr_reap(dp);
	for (p = 0; p < dp->nb_ports; p++) {
		struct rte_eth_link link;

		if (!dp->reconnect[p])
			continue;
		if (rte_eth_link_get_nowait(dp->ports[p].port_id, &link) != 0 ||
				link.link_status == RTE_ETH_LINK_UP) {
			dp->down_since[p] = 0;
			continue;
		}
		if (dp->down_since[p] == 0) {
			dp->down_since[p] = now_ns;
			continue;
		}
		if (now_ns - dp->down_since[p] < RECONNECT_NS)
			continue;
		if (port_restart(dp, p) != 0)
			ROCE_LOG(WARNING, "port %u: restart to reconnect failed\n", p);
		dp->down_since[p] = now_ns;
		dp->restarts[p]++;
		restarted++;
	}
	return restarted;
}

void
dp_port_watch_init(struct roce_dp *dp)
{
	unsigned int p;

	for (p = 0; p < dp->nb_ports; p++)
		dp->reconnect[p] = memif_client(dp->ports[p].port_id);
}
