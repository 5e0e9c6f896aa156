/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour commands (doc/control-protocol.md: neigh.show, neigh.flush). Every worker has a
 * lib/net instance, with its own neighbour table, on each port it reads a queue of; the
 * dataplane reads and flushes them (roce_dp_neigh_list(), roce_dp_neigh_flush()). A connected
 * QP keeps the MAC it was connected with: a flush only makes the next resolution ask again.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roced_cmd.h"

/* Entries listed at most. */
#define NEIGH_LIST_MAX 4096

/* What a neighbour command is about: the ports (bit mask) and maybe one IP. */
struct neigh_target {
	unsigned int ports;
	const uint8_t *ip;
	bool ipv6;
	uint8_t buf[16];
};

/* One entry: {ip, mac (null while unknown), state, age_ms, used_ms, port, worker}. */
static json_t *
entry_json(const struct roce_dp_neigh *n)
{
	const struct roce_net_neigh_info *e = &n->info;
	char ip[INET6_ADDRSTRLEN], mac[RTE_ETHER_ADDR_FMT_SIZE];

	inet_ntop(e->ipv6 ? AF_INET6 : AF_INET, e->ip, ip, sizeof(ip));
	rte_ether_format_addr(mac, sizeof(mac), &e->mac);
	return json_pack("{s:s, s:o, s:s, s:I, s:I, s:i, s:i}", "ip", ip,
			"mac", rte_is_zero_ether_addr(&e->mac) ? json_null() : json_string(mac),
			"state", roce_net_neigh_state_name(e->state),
			"age_ms", (json_int_t)(n->age_ns / 1000000),
			"used_ms", (json_int_t)(n->idle_ns / 1000000), "port", (int)n->port,
			"worker", (int)n->worker);
}

/* Optional "ip" and "port" (default: every port). */
static int
arg_target(struct roced_state *st, json_t *req, json_t *reply, struct neigh_target *t)
{
	uint32_t port = 0;
	int family, hp, hi;

	if ((hi = roce_ctl_arg_ip(req, reply, "ip", &family, t->buf, false)) < 0 ||
			(hp = roce_ctl_arg_u32(req, reply, "port", &port, false, 0,
				st->conf.nb_ports - 1)) < 0)
		return -EINVAL;
	t->ports = hp ? 1u << port : (1u << st->conf.nb_ports) - 1;
	t->ip = hi ? t->buf : NULL;
	t->ipv6 = hi && family == AF_INET6;
	return 0;
}

int
roced_cmd_neigh_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_neigh *e;
	struct neigh_target t;
	json_t *list;
	int ret, i;

	ret = arg_target(st, req, reply, &t);
	if (ret < 0)
		return ret;
	e = malloc(NEIGH_LIST_MAX * sizeof(*e));
	if (e == NULL)
		return roce_ctl_error(reply, -ENOMEM, "no memory");
	ret = roce_dp_neigh_list(st->dp, t.ports, t.ip, t.ipv6, e, NEIGH_LIST_MAX);
	if (ret < 0) {
		free(e);
		return roce_ctl_error(reply, ret, "workers: %s", strerror(-ret));
	}
	list = json_array();
	for (i = 0; i < RTE_MIN(ret, (int)NEIGH_LIST_MAX); i++)
		json_array_append_new(list, entry_json(&e[i]));
	free(e);
	json_object_set_new(reply, "neighbours", list);
	return 0;
}

int
roced_cmd_neigh_flush(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	char txt[INET6_ADDRSTRLEN];
	struct neigh_target t;
	int ret;

	ret = arg_target(st, req, reply, &t);
	if (ret < 0)
		return ret;
	ret = roce_dp_neigh_flush(st->dp, t.ports, t.ip, t.ipv6);
	if (t.ip != NULL)
		inet_ntop(t.ipv6 ? AF_INET6 : AF_INET, t.ip, txt, sizeof(txt));
	if (ret == -EINVAL && t.ip != NULL)
		return roce_ctl_error(reply, ret, "ip: %s cannot be a neighbour", txt);
	if (ret < 0)
		return roce_ctl_error(reply, ret, "workers: %s", strerror(-ret));
	if (t.ip != NULL && ret == 0)
		return roce_ctl_error(reply, -ENOENT, "no neighbour entry for %s", txt);
	json_object_set_new(reply, "flushed", json_integer(ret));
	return 0;
}
