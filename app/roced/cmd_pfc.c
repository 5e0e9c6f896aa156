/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PFC of the ports (doc/control-protocol.md: pfc.show, pfc.set): set up at start from the
 * [portN] pfc keys (hardware where the PMD has it, else in software: one log line per port
 * says which), then read and changed by the control commands. The dataplane honours the
 * pauses (lib/dataplane roce_dp_pfc.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "roced_cmd.h"

int
roced_pfc_init(struct roced_state *st, char *err, size_t errlen)
{
	unsigned int p;
	char msg[320];
	int ret;

	for (p = 0; p < st->conf.nb_ports && roce_dp_port(st->dp, p) != NULL; p++) {
		msg[0] = '\0';
		ret = roce_dp_pfc_setup(st->dp, p, &st->conf.ports[p].pfc, msg, sizeof(msg));
		if (ret != 0) {
			snprintf(err, errlen, "%s", msg[0] != '\0' ? msg : strerror(-ret));
			return ret;
		}
		ROCED_LOG(INFO, "%s\n", msg);
	}
	return 0;
}

static json_t *
mask_json(uint8_t mask)
{
	json_t *a = json_array();
	unsigned int i;

	for (i = 0; i < ROCE_PFC_NB_PRIO; i++)
		if (mask & (1u << i))
			json_array_append_new(a, json_integer(i));
	return a;
}

/* One port: mode, priorities, link, watchdog, per priority, counters, DSCP map. */
static json_t *
port_json(struct roced_state *st, unsigned int p)
{
	struct roce_dp_pfc_state ps;
	json_t *prio = json_array(), *cnt = json_object(), *map = json_array();
	unsigned int i;

	roce_dp_pfc_read(roce_dp_port_pfc(st->dp, p), roce_dp_now(), &ps);
	for (i = 0; i < ROCE_PFC_NB_PRIO; i++)
		json_array_append_new(prio, json_pack("{s:i, s:b, s:o, s:o, s:o, s:o}", "prio", i,
				"paused", (ps.paused >> i) & 1, "paused_left_ns",
				roce_ctl_u64(ps.paused_left_ns[i]), "paused_ns",
				roce_ctl_u64(ps.paused_ns[i]), "pauses", roce_ctl_u64(ps.pauses[i]),
				"resumes", roce_ctl_u64(ps.resumes[i])));
	for (i = 0; i < ROCE_DP_PFC_CNT_NUM; i++)
		json_object_set_new(cnt, roce_dp_pfc_counter_family.desc[i].name,
				roce_ctl_u64(ps.cnt[i]));
	for (i = 0; i < 64; i++)
		json_array_append_new(map, json_integer(ps.dscp2prio[i]));
	return json_pack("{s:i, s:s, s:o, s:o, s:b, s:i, s:o, s:o, s:o, s:o, s:o}", "port", p,
			"mode", roce_dp_pfc_mode_name(ps.mode), "prios", mask_json(ps.prios),
			"link_mbps", roce_ctl_u64(ps.link_mbps), "link_fixed",
			ps.link_fixed_mbps != 0, "watchdog_ms", (int)(ps.watchdog_ns / 1000000),
			"paused", mask_json(ps.paused), "storm", mask_json(ps.storm), "priorities",
			prio, "counters", cnt, "dscp2prio", map);
}

/* "port": one port (default every port); *first and *last get the range. */
static int
arg_ports(struct roced_state *st, json_t *req, json_t *reply, unsigned int *first,
		unsigned int *last)
{
	uint32_t port = 0;
	int hp = roce_ctl_arg_u32(req, reply, "port", &port, false, 0, UINT32_MAX);

	if (hp < 0)
		return hp;
	if (hp && roce_dp_port(st->dp, port) == NULL)
		return roce_ctl_error(reply, -ENOENT, "no port %u", port);
	*first = hp ? port : 0;
	*last = hp ? port + 1 : st->conf.nb_ports;
	return 0;
}

int
roced_cmd_pfc_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	unsigned int first, last, p;
	json_t *list;
	int ret = arg_ports(st, req, reply, &first, &last);

	if (ret != 0)
		return ret;
	list = json_array();
	for (p = first; p < last && roce_dp_port(st->dp, p) != NULL; p++)
		json_array_append_new(list, port_json(st, p));
	json_object_set_new(reply, "pfc", list);
	return 0;
}

int
roced_cmd_pfc_set(void *arg, json_t *req, json_t *reply)
{
	static const char *const modes[] = { "sw", NULL, "off" };
	struct roced_state *st = arg;
	unsigned int first, last, p, mode = 0;
	const char *prios_s = NULL, *map_s = NULL;
	uint32_t wd = 0, link = 0;
	int hm, hw, hl, ret;
	json_t *list;

	ret = arg_ports(st, req, reply, &first, &last);
	if (ret != 0)
		return ret;
	if ((hm = roce_ctl_arg_enum(req, reply, "mode", modes, RTE_DIM(modes), &mode,
				false)) < 0 ||
			(hw = roce_ctl_arg_u32(req, reply, "watchdog_ms", &wd, false, 0,
				ROCE_DP_PFC_WATCHDOG_MAX_MS)) < 0 ||
			(hl = roce_ctl_arg_u32(req, reply, "link_mbps", &link, false, 0,
				10000000)) < 0 ||
			roce_ctl_arg_str(req, reply, "prios", &prios_s, false, 32) < 0 ||
			roce_ctl_arg_str(req, reply, "dscp2prio", &map_s, false, 512) < 0)
		return -EINVAL;
	/* Check everything before changing anything. */
	for (p = first; p < last; p++) {
		struct roce_dp_pfc_conf c = st->conf.ports[p].pfc;
		struct roce_dp_pfc_state ps;

		roce_dp_pfc_read(roce_dp_port_pfc(st->dp, p), roce_dp_now(), &ps);
		if (hm && ps.mode == ROCE_DP_PFC_HW)
			return roce_ctl_error(reply, -EBUSY, "port %u: PFC is in the NIC (set at "
					"start, [port%u] pfc = hw or auto)", p, p);
		if (prios_s != NULL && roced_parse_prios(prios_s, &c.prios) != 0)
			return roce_ctl_error(reply, -EINVAL, "prios: '%s' is not a list of "
					"priorities 0-7 (3, 3,4, 0-7)", prios_s);
		if (map_s != NULL && roced_parse_dscp2prio(map_s, c.dscp2prio) != 0)
			return roce_ctl_error(reply, -EINVAL, "dscp2prio: '%s' is not DSCP:PRIO "
					"pairs (26:3,48:6), DSCP 0-63, priority 0-7", map_s);
	}
	list = json_array();
	for (p = first; p < last; p++) {
		struct roce_dp_pfc_conf *c = &st->conf.ports[p].pfc;
		struct roce_dp_pfc *pp = roce_dp_port_pfc(st->dp, p);
		struct roce_dp_pfc_state ps;

		roce_dp_pfc_read(pp, roce_dp_now(), &ps);
		if (prios_s != NULL)
			roced_parse_prios(prios_s, &c->prios);
		if (map_s != NULL) {
			roced_parse_dscp2prio(map_s, c->dscp2prio);
			roce_dp_pfc_set_dscp_map(pp, c->dscp2prio);
		}
		if (hw)
			c->watchdog_ms = wd;
		if (hl)
			roce_dp_pfc_fix_link(pp, link);
		roce_dp_pfc_configure(pp, hm ? (enum roce_dp_pfc_mode)mode : ps.mode, c->prios,
				(uint64_t)c->watchdog_ms * 1000000, roce_dp_now());
		json_array_append_new(list, port_json(st, p));
	}
	json_object_set_new(reply, "pfc", list);
	return 0;
}
