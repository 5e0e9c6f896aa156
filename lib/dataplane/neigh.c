/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The workers' neighbour tables, for the control thread: every worker has a lib/net instance,
 * with its own table, on each port it reads a queue of; these read and flush them on their
 * workers.
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "dp_private.h"

#define NEIGH_RPC_MS 5000
/* Entries read per worker and port: the table's size, roce_net_conf.neigh_max's default. */
#define NEIGH_DUMP_MAX 256

struct neigh_rpc {
	unsigned int ports;             /* bit mask of the ports to read or flush */
	const uint8_t *ip;              /* this neighbour only; NULL: every entry */
	bool ipv6;
	struct roce_dp_neigh *out;      /* list: where entries go, how many fit, how many seen */
	unsigned int max;
	unsigned int n;
	struct roce_net_neigh_info info[NEIGH_DUMP_MAX];
};

static bool
entry_is(const struct roce_net_neigh_info *e, const struct neigh_rpc *r)
{
	return r->ip == NULL ||
		(e->ipv6 == r->ipv6 && memcmp(e->ip, r->ip, r->ipv6 ? 16 : 4) == 0);
}

static uint64_t
since(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}

static int
list_on_worker(struct roce_worker *w, void *arg)
{
	struct neigh_rpc *r = arg;
	uint64_t now = roce_dp_now();
	unsigned int p, i, nb;

	for (p = 0; p < ROCE_DP_MAX_PORTS; p++) {
		if (w->net[p] == NULL || !(r->ports & (1u << p)))
			continue;
		nb = RTE_MIN(roce_net_neigh_dump(w->net[p], now, r->info, NEIGH_DUMP_MAX),
				(uint32_t)NEIGH_DUMP_MAX);
		for (i = 0; i < nb; i++) {
			struct roce_dp_neigh *e;

			if (!entry_is(&r->info[i], r))
				continue;
			if (r->n < r->max) {
				e = &r->out[r->n];
				e->info = r->info[i];
				e->port = (uint16_t)p;
				e->worker = (uint16_t)w->idx;
				e->age_ns = since(now, r->info[i].updated);
				e->idle_ns = since(now, r->info[i].used);
			}
			r->n++;
		}
	}
	return 0;
}

static int
flush_on_worker(struct roce_worker *w, void *arg)
{
	struct neigh_rpc *r = arg;
	unsigned int p;
	int ret;

	for (p = 0; p < ROCE_DP_MAX_PORTS; p++) {
		if (w->net[p] == NULL || !(r->ports & (1u << p)))
			continue;
		if (r->ip == NULL) {
			r->n += roce_net_neigh_flush(w->net[p]);
			continue;
		}
		ret = roce_net_neigh_del(w->net[p], r->ip, r->ipv6);
		if (ret == 0)
			r->n++;
		else if (ret != -ENOENT)
			return ret;
	}
	return 0;
}

/* Run @fn on every worker; @return the entries it counted, or the first -errno. */
static int
each_worker(struct roce_dp *dp, roce_dp_fn fn, struct neigh_rpc *r)
{
	unsigned int i;
	int ret;

	for (i = 0; i < dp->conf.nb_workers; i++) {
		ret = roce_dp_call(dp, i, fn, r, NEIGH_RPC_MS);
		if (ret != 0)
			return ret;
	}
	return (int)r->n;
}

int
roce_dp_neigh_list(struct roce_dp *dp, unsigned int ports, const uint8_t *ip, bool ipv6,
		struct roce_dp_neigh *out, unsigned int max)
{
	struct neigh_rpc *r = rte_zmalloc("roce_neigh", sizeof(*r), 0);
	int ret;

	if (r == NULL)
		return -ENOMEM;
	*r = (struct neigh_rpc){ .ports = ports, .ip = ip, .ipv6 = ipv6, .out = out, .max = max };
	ret = each_worker(dp, list_on_worker, r);
	rte_free(r);
	return ret;
}

int
roce_dp_neigh_flush(struct roce_dp *dp, unsigned int ports, const uint8_t *ip, bool ipv6)
{
	struct neigh_rpc r = { .ports = ports, .ip = ip, .ipv6 = ipv6 };

	return each_worker(dp, flush_on_worker, &r);
}
