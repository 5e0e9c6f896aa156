/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Impairment commands (doc/control-protocol.md: impair.set, impair.show, impair.clear) and the
 * ports' impairment handles. They run on the control lcore; drivers/impair publishes the
 * configuration to the queues without stopping them: rx callbacks, and the tx stages the
 * workers call before sending (attached to the dataplane when tx is first impaired).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "roced_cmd.h"

static const char *const dir_names[] = { "rx", "tx", "both" };

/*
 * Configure port @p, and put the handle in the workers' transmit objects: its tx stages once
 * tx is impaired, and the PFC frames an rx bottleneck makes, which leave through them.
 */
static int
impair_apply(struct roced_state *st, unsigned int p, const struct roce_impair_spec *s)
{
	int ret = roce_impair_set(st->impair[p], s);

	if (ret == 0 && ((s->dirs & ROCE_IMPAIR_DIR_TX) || s->pfc_xoff != 0))
		ret = roce_dp_tx_impair(st->dp, p, st->impair[p]);
	return ret;
}

int
roced_impair_init(struct roced_state *st, char *err, size_t errlen)
{
	unsigned int p, i;
	int ret;

	for (p = 0; p < ROCE_DP_MAX_PORTS; p++) {
		struct roced_port_conf *pc = &st->conf.ports[p];
		const struct roce_port *port = roce_dp_port(st->dp, p);

		if (port == NULL) {
			if (pc->nb_impair == 0)
				continue;
			snprintf(err, errlen, "impair: port %u is not configured", p);
			return -EINVAL;
		}
		st->impair[p] = roce_impair_create(port->port_id, port->nb_queues,
				rte_eth_dev_socket_id(port->port_id));
		if (st->impair[p] == NULL) {
			snprintf(err, errlen, "impair: port %u: %s", p, rte_strerror(rte_errno));
			return -rte_errno;
		}
		for (i = 0; i < pc->nb_impair; i++) {
			if (pc->impair[i].has_port && pc->impair[i].port != p) {
				snprintf(err, errlen, "[port%u] impair: port=%u names another port",
						p, pc->impair[i].port);
				return -EINVAL;
			}
			pc->impair[i].port = (uint16_t)p;
			ret = impair_apply(st, p, &pc->impair[i]);
			if (ret != 0) {
				snprintf(err, errlen, "impair: port %u: %s", p, strerror(-ret));
				return ret;
			}
		}
	}
	return 0;
}

void
roced_impair_fini(struct roced_state *st)
{
	unsigned int p;

	for (p = 0; p < ROCE_DP_MAX_PORTS; p++) {
		roce_impair_destroy(st->impair[p]);
		st->impair[p] = NULL;
	}
}

/* The bottleneck's queue: depth samples since the configuration, depth now, paused. */
static json_t *
queue_json(const struct roce_impair_qstats *q)
{
	json_t *prio = json_array();
	unsigned int i;

	for (i = 0; i < RTE_DIM(q->depth_prio); i++)
		json_array_append_new(prio, roce_ctl_u64(q->depth_prio[i]));
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:i}", "samples",
			roce_ctl_u64(q->samples), "p50_bytes", roce_ctl_u64(q->p50), "p99_bytes",
			roce_ctl_u64(q->p99), "max_bytes", roce_ctl_u64(q->max), "depth_bytes",
			roce_ctl_u64(q->depth), "depth_prio", prio, "paused", q->paused);
}

/* One port and direction: {port, dir, active, spec, counters[, queue]}. */
static json_t *
entry_json(struct roced_state *st, unsigned int p, enum roce_impair_dir dir)
{
	char text[ROCE_IMPAIR_SPEC_MAX];
	struct roce_impair_spec s;
	struct roce_impair_qstats q;
	uint64_t c[ROCE_IMPAIR_CNT_NUM];
	json_t *cnt = json_object(), *e;
	int active = roce_impair_get(st->impair[p], dir, &s) == 0;
	unsigned int i;

	if (!active || roce_impair_format(&s, 0, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "none");
	roce_impair_counters(st->impair[p], dir, c);
	for (i = 0; i < ROCE_IMPAIR_CNT_NUM; i++)
		json_object_set_new(cnt, roce_impair_counter_family.desc[i].name,
				roce_ctl_u64(c[i]));
	e = json_pack("{s:i, s:s, s:b, s:s, s:o}", "port", p, "dir", roce_impair_dir_name(dir),
			"active", active, "spec", text, "counters", cnt);
	/* A bottleneck's queue, while there is one or something is still queued. */
	if (roce_impair_queue_stats(st->impair[p], dir, &q) &&
			((active && s.bneck_bps > 0) || q.depth != 0 || q.paused != 0))
		json_object_set_new(e, "queue", queue_json(&q));
	return e;
}

/* Optional "port" and "dir": *ports and *dirs get bit masks (default: all). */
static int
arg_target(struct roced_state *st, json_t *req, json_t *reply, unsigned int *ports,
		unsigned int *dirs)
{
	uint32_t port = 0;
	unsigned int dir = 2;
	int hp, ret;

	if ((hp = roce_ctl_arg_u32(req, reply, "port", &port, false, 0,
				st->conf.nb_ports - 1)) < 0 ||
			(ret = roce_ctl_arg_enum(req, reply, "dir", dir_names, RTE_DIM(dir_names),
				&dir, false)) < 0)
		return -EINVAL;
	*ports = hp ? 1u << port : (1u << st->conf.nb_ports) - 1;
	*dirs = dir == 2 ? ROCE_IMPAIR_DIR_RX | ROCE_IMPAIR_DIR_TX : 1u << dir;
	return 0;
}

int
roced_cmd_impair_set(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_impair_spec s;
	unsigned int dir = 3, d;
	uint32_t port;
	const char *text;
	char err[200];
	json_t *list;
	int ret;

	ret = roce_ctl_arg_str(req, reply, "spec", &text, true, ROCE_IMPAIR_SPEC_MAX);
	if (ret < 0)
		return ret;
	if (roce_impair_parse(text, &s, err, sizeof(err)) != 0)
		return roce_ctl_error(reply, -EINVAL, "spec: %s", err);
	/* "port" and "dir" arguments win over port= and dir= in the spec. */
	port = s.port;
	if ((ret = roce_ctl_arg_u32(req, reply, "port", &port, false, 0,
				st->conf.nb_ports - 1)) < 0 ||
			(ret = roce_ctl_arg_enum(req, reply, "dir", dir_names, RTE_DIM(dir_names),
				&dir, false)) < 0)
		return ret;
	if (port >= st->conf.nb_ports || st->impair[port] == NULL)
		return roce_ctl_error(reply, -ENOENT, "no port %u", port);
	if (dir != 3)
		s.dirs = (uint8_t)(dir == 2 ? ROCE_IMPAIR_DIR_RX | ROCE_IMPAIR_DIR_TX : 1u << dir);
	s.port = (uint16_t)port;
	s.has_port = 1;
	ret = impair_apply(st, port, &s);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "port %u: %s", port, strerror(-ret));
	list = json_array();
	for (d = 0; d < ROCE_IMPAIR_NB_DIRS; d++)
		if (s.dirs & (1u << d))
			json_array_append_new(list, entry_json(st, port, d));
	json_object_set_new(reply, "impair", list);
	return 0;
}

int
roced_cmd_impair_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	unsigned int ports, dirs, p, d;
	json_t *list;

	if (arg_target(st, req, reply, &ports, &dirs) < 0)
		return -EINVAL;
	list = json_array();
	for (p = 0; p < st->conf.nb_ports; p++)
		for (d = 0; d < ROCE_IMPAIR_NB_DIRS; d++)
			if ((ports & (1u << p)) && (dirs & (1u << d)) && st->impair[p] != NULL)
				json_array_append_new(list, entry_json(st, p, d));
	json_object_set_new(reply, "impair", list);
	return 0;
}

int
roced_cmd_impair_clear(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	unsigned int ports, dirs, p, d, n = 0;
	struct roce_impair_spec s;

	if (arg_target(st, req, reply, &ports, &dirs) < 0)
		return -EINVAL;
	for (p = 0; p < st->conf.nb_ports; p++) {
		if (!(ports & (1u << p)) || st->impair[p] == NULL)
			continue;
		for (d = 0; d < ROCE_IMPAIR_NB_DIRS; d++)
			n += (dirs & (1u << d)) && roce_impair_get(st->impair[p], d, &s) == 0;
		roce_impair_clear(st->impair[p], dirs);
	}
	json_object_set_new(reply, "cleared", json_integer(n));
	return 0;
}
