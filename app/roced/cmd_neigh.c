/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour commands (doc/control-protocol.md: neigh.show, neigh.flush). Every worker has a
 * lib/net instance, with its own neighbour table, on each port it reads a queue of; these
 * commands read and flush the tables on their workers through roce_dp_call(). A connected QP
 * keeps the MAC it was connected with: a flush only makes the next resolution ask again.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roced_cmd.h"

#define NEIGH_RPC_MS 5000
/* Entries read per worker and port: the table's size, roce_net_conf.neigh_max's default. */
#define NEIGH_DUMP_MAX 256

struct neigh_rpc {
	unsigned int ports;             /* bit mask of the ports to read or flush */
	const uint8_t *ip;              /* flush: this neighbour only; NULL: every entry */
	int ipv6;
	uint64_t now;                   /* the worker's clock when it read its tables */
	uint32_t nb[ROCE_DP_MAX_PORTS];
	uint32_t flushed;
	struct roce_net_neigh_info info[ROCE_DP_MAX_PORTS][NEIGH_DUMP_MAX];
};

static int
show_on_worker(struct roce_worker *w, void *arg)
{
	struct neigh_rpc *r = arg;
	unsigned int p;

	r->now = roce_dp_now();
	for (p = 0; p < ROCE_DP_MAX_PORTS; p++) {
		struct roce_net *net = roce_worker_net(w, p);

		r->nb[p] = 0;
		if (net != NULL && (r->ports & (1u << p)))
			r->nb[p] = RTE_MIN(roce_net_neigh_dump(net, r->now, r->info[p],
						NEIGH_DUMP_MAX), (uint32_t)NEIGH_DUMP_MAX);
	}
	return 0;
}

static int
flush_on_worker(struct roce_worker *w, void *arg)
{
	struct neigh_rpc *r = arg;
	unsigned int p;
	int ret;

	r->flushed = 0;
	for (p = 0; p < ROCE_DP_MAX_PORTS; p++) {
		struct roce_net *net = roce_worker_net(w, p);

		if (net == NULL || !(r->ports & (1u << p)))
			continue;
		if (r->ip == NULL) {
			r->flushed += roce_net_neigh_flush(net);
			continue;
		}
		ret = roce_net_neigh_del(net, r->ip, r->ipv6);
		if (ret == 0)
			r->flushed++;
		else if (ret != -ENOENT)
			return ret;
	}
	return 0;
}

static uint64_t
ms_since(uint64_t now, uint64_t t)
{
	return now > t ? (now - t) / 1000000 : 0;
}

/* One entry: {ip, mac (null while unknown), state, age_ms, used_ms, port, worker}. */
static json_t *
entry_json(const struct roce_net_neigh_info *e, uint64_t now, unsigned int port,
		unsigned int worker)
{
	char ip[INET6_ADDRSTRLEN], mac[RTE_ETHER_ADDR_FMT_SIZE];

	inet_ntop(e->ipv6 ? AF_INET6 : AF_INET, e->ip, ip, sizeof(ip));
	rte_ether_format_addr(mac, sizeof(mac), &e->mac);
	return json_pack("{s:s, s:o, s:s, s:I, s:I, s:i, s:i}", "ip", ip,
			"mac", rte_is_zero_ether_addr(&e->mac) ? json_null() : json_string(mac),
			"state", roce_net_neigh_state_name(e->state),
			"age_ms", (json_int_t)ms_since(now, e->updated),
			"used_ms", (json_int_t)ms_since(now, e->used), "port", (int)port,
			"worker", (int)worker);
}

/* Optional "ip" and "port": r->ip and r->ports (default: every port). */
static int
arg_target(struct roced_state *st, json_t *req, json_t *reply, struct neigh_rpc *r,
		uint8_t *ip)
{
	uint32_t port = 0;
	int family, hp, hi;

	if ((hi = roce_ctl_arg_ip(req, reply, "ip", &family, ip, false)) < 0 ||
			(hp = roce_ctl_arg_u32(req, reply, "port", &port, false, 0,
				st->conf.nb_ports - 1)) < 0)
		return -EINVAL;
	r->ports = hp ? 1u << port : (1u << st->conf.nb_ports) - 1;
	r->ip = hi ? ip : NULL;
	r->ipv6 = hi && family == AF_INET6;
	return 0;
}

static bool
entry_is(const struct roce_net_neigh_info *e, const struct neigh_rpc *r)
{
	return r->ip == NULL ||
		(e->ipv6 == r->ipv6 && memcmp(e->ip, r->ip, r->ipv6 ? 16 : 4) == 0);
}

int
roced_cmd_neigh_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct neigh_rpc *r = calloc(1, sizeof(*r));
	unsigned int w, p, i;
	uint8_t ip[16];
	json_t *list;
	int ret;

	if (r == NULL)
		return -ENOMEM;
	ret = arg_target(st, req, reply, r, ip);
	if (ret < 0)
		goto out;
	list = json_array();
	for (w = 0; w < roce_dp_nb_workers(st->dp); w++) {
		ret = roce_dp_call(st->dp, w, show_on_worker, r, NEIGH_RPC_MS);
		if (ret != 0) {
			json_decref(list);
			ret = roce_ctl_error(reply, ret, "worker %u: %s", w, strerror(-ret));
			goto out;
		}
		for (p = 0; p < ROCE_DP_MAX_PORTS; p++)
			for (i = 0; i < r->nb[p]; i++)
				if (entry_is(&r->info[p][i], r))
					json_array_append_new(list,
							entry_json(&r->info[p][i], r->now, p, w));
	}
	json_object_set_new(reply, "neighbours", list);
out:
	free(r);
	return ret;
}

int
roced_cmd_neigh_flush(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct neigh_rpc *r = calloc(1, sizeof(*r));
	char txt[INET6_ADDRSTRLEN];
	unsigned int w, flushed = 0;
	uint8_t ip[16];
	int ret;

	if (r == NULL)
		return -ENOMEM;
	ret = arg_target(st, req, reply, r, ip);
	if (ret < 0)
		goto out;
	for (w = 0; w < roce_dp_nb_workers(st->dp); w++) {
		ret = roce_dp_call(st->dp, w, flush_on_worker, r, NEIGH_RPC_MS);
		if (ret == -EINVAL && r->ip != NULL) {
			ret = roce_ctl_error(reply, ret, "ip: %s cannot be a neighbour",
					inet_ntop(r->ipv6 ? AF_INET6 : AF_INET, ip, txt,
						sizeof(txt)));
			goto out;
		}
		if (ret != 0) {
			ret = roce_ctl_error(reply, ret, "worker %u: %s", w, strerror(-ret));
			goto out;
		}
		flushed += r->flushed;
	}
	if (r->ip != NULL && flushed == 0) {
		ret = roce_ctl_error(reply, -ENOENT, "no neighbour entry for %s",
				inet_ntop(r->ipv6 ? AF_INET6 : AF_INET, ip, txt, sizeof(txt)));
		goto out;
	}
	json_object_set_new(reply, "flushed", json_integer(flushed));
out:
	free(r);
	return ret;
}
