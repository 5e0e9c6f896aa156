/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP1 commands (doc/control-protocol.md: gsi.show, gsi.sidr): each port's QP1 and what the
 * GSI agent did (roce_dp_gsi.h), and a service ID resolution at a peer, which shows whether
 * its CM answers on QP1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "roce_dp_gsi.h"
#include "roced_cmd.h"

/* SIDR_REP statuses by number (IBA table 121). */
static const char *const sidr_status_names[] = {
	[ROCE_CM_SIDR_SUCCESS] = "success",
	[ROCE_CM_SIDR_UNSUPPORTED] = "unsupported",
	[ROCE_CM_SIDR_REJECT] = "reject",
	[ROCE_CM_SIDR_NO_QP] = "no_qp",
	[ROCE_CM_SIDR_REDIRECT] = "redirect",
	[ROCE_CM_SIDR_UNSUPPORTED_VERSION] = "unsupported_version",
};

static void
gsi_counter_sink(void *arg, const char *name, const char *description, uint64_t value)
{
	RTE_SET_USED(description);
	json_object_set_new(arg, name, roce_ctl_u64(value));
}

static json_t *
port_json(unsigned int p, const struct roce_dp_gsi_port *g)
{
	return json_pack("{s:i, s:i, s:s, s:I, s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "port", (int)p,
			"qpn", ROCE_GSI_QPN,
			"state", roce_qp_state_name((enum roce_qp_state)g->state),
			"qkey", (json_int_t)ROCE_GSI_QKEY, "recv_posted", (int)g->recv_posted,
			"rx_pkts", roce_ctl_u64(g->rx_pkts), "tx_pkts", roce_ctl_u64(g->tx_pkts),
			"qkey_drop", roce_ctl_u64(g->qkey_drop), "no_recv", roce_ctl_u64(g->no_recv),
			"too_long", roce_ctl_u64(g->too_long), "bad_pkey", roce_ctl_u64(g->bad_pkey));
}

int
roced_cmd_gsi_show(void *arg, json_t *req, json_t *reply)
{
	static const struct roce_counter_group plain = { &roce_dp_gsi_counter_family, "", NULL };
	struct roced_state *st = arg;
	uint64_t cnt[ROCE_DP_GSI_C_NUM];
	struct roce_dp_gsi_port g;
	uint32_t port = 0;
	unsigned int p, first = 0, last = st->conf.nb_ports;
	json_t *ports, *counters;
	int ret;

	ret = roce_ctl_arg_u32(req, reply, "port", &port, false, 0, st->conf.nb_ports - 1);
	if (ret < 0)
		return ret;
	if (ret > 0) {
		first = port;
		last = port + 1;
	}
	ports = json_array();
	for (p = first; p < last; p++) {
		ret = roce_dp_gsi_port_query(st->dp, p, &g);
		if (ret != 0) {
			json_decref(ports);
			return roce_ctl_error(reply, ret, "port %u: QP1: %s", p, strerror(-ret));
		}
		if (g.ok)
			json_array_append_new(ports, port_json(p, &g));
	}
	json_object_set_new(reply, "ports", ports);
	/* The agent's own counters since the daemon started (counters shows GSI_ ones since
	 * the last counters.clear). */
	counters = json_object();
	roce_dp_gsi_counters(st->dp, cnt);
	roce_counters_emit(&plain, cnt, 0, gsi_counter_sink, counters);
	json_object_set_new(reply, "counters", counters);
	return 0;
}

int
roced_cmd_gsi_sidr(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_gsi_addr dst = { .qpn = ROCE_GSI_QPN };
	struct roce_dp_gsi_sidr_result r;
	uint32_t port = 0, timeout_ms = 1000;
	uint64_t service_id = 0;
	char ip[INET6_ADDRSTRLEN];
	char sid[24];
	int family, ret;

	if (roce_ctl_arg_ip(req, reply, "ip", &family, dst.ip, true) < 0 ||
			roce_ctl_arg_u32(req, reply, "port", &port, false, 0,
				st->conf.nb_ports - 1) < 0 ||
			roce_ctl_arg_u64(req, reply, "service_id", &service_id, false, 0,
				UINT64_MAX) < 0 ||
			roce_ctl_arg_u32(req, reply, "timeout_ms", &timeout_ms, false, 1, 10000) < 0)
		return -EINVAL;
	dst.port = (uint16_t)port;
	dst.ipv6 = family == AF_INET6;
	inet_ntop(family, dst.ip, ip, sizeof(ip));
	ret = roce_dp_gsi_sidr(st->dp, &dst, service_id, timeout_ms, &r);
	if (ret == -ETIMEDOUT)
		return roce_ctl_error(reply, ret, "no SIDR_REP from %s in %u ms (its QP1 is not "
				"reachable, or its CM does not answer)", ip, timeout_ms);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "SIDR_REQ to %s: %s", ip, strerror(-ret));
	snprintf(sid, sizeof(sid), "0x%016" PRIx64, r.service_id);
	json_object_set_new(reply, "sidr", json_pack("{s:s, s:i, s:I, s:i, s:s, s:I, s:I, s:s, "
			"s:f}", "ip", ip, "port", (int)port, "request_id", (json_int_t)r.request_id,
			"status", (int)r.status,
			"status_name", r.status < RTE_DIM(sidr_status_names) ?
				sidr_status_names[r.status] : "unknown",
			"qpn", (json_int_t)r.qpn, "qkey", (json_int_t)r.qkey, "service_id", sid,
			"rtt_us", (double)r.rtt_ns / 1000.0));
	return 0;
}
