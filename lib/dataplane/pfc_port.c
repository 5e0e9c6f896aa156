/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ports' PFC in the dataplane: one roce_dp_pfc per port, honoured by the transmit objects
 * with a queue of the port, fed by the workers' receive path (worker.c) and by the port's tx
 * bottleneck (txq.c); the link speed its pause times run at, kept up to date from the control
 * thread.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>

#include "dp_private.h"

struct roce_dp_pfc *
roce_dp_port_pfc(struct roce_dp *dp, unsigned int port)
{
	return port < dp->nb_ports ? &dp->pfc[port] : NULL;
}

/* The speed the port reports, in Mb/s; 0 when it reports none. */
static uint64_t
link_mbps(uint16_t port_id)
{
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(port_id, &link) != 0 ||
			link.link_speed == RTE_ETH_SPEED_NUM_NONE ||
			link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN)
		return 0;
	return link.link_speed;
}

int
dp_pfc_port_init(struct roce_dp *dp, unsigned int p)
{
	unsigned int i;
	int ret;

	roce_dp_pfc_init(&dp->pfc[p]);
	roce_dp_pfc_set_link(&dp->pfc[p], link_mbps(dp->ports[p].port_id));
	for (i = 0; i < dp->conf.nb_workers; i++) {
		struct roce_worker *w = &dp->workers[i];

		/* Those handing frames to another worker's ring: the owner honours for them. */
		if (w->rxq[p] < 0)
			continue;
		ret = roce_txq_set_pfc(&w->txq[p], &dp->pfc[p], w->socket);
		if (ret != 0)
			return ret;
	}
	return 0;
}

void
dp_pfc_watch(struct roce_dp *dp)
{
	unsigned int p;

	for (p = 0; p < dp->nb_ports; p++)
		roce_dp_pfc_set_link(&dp->pfc[p], link_mbps(dp->ports[p].port_id));
}

/* "3" or "3,4" or "0-7". */
static void
prio_list(uint8_t prios, char *b, size_t n)
{
	size_t o = 0;
	unsigned int p;

	b[0] = '\0';
	if (prios == 0xff) {
		snprintf(b, n, "0-7");
		return;
	}
	for (p = 0; p < ROCE_PFC_NB_PRIO && o < n; p++)
		if (prios & (1u << p))
			o += (size_t)snprintf(b + o, n - o, "%s%u", o ? "," : "", p);
}

/*
 * Hardware PFC on every priority of @prios: per priority, else per queue (the queue-based
 * variant, one priority only). @return 0, or the first -errno, with @how saying what was
 * used or refused.
 */
static int
hw_pfc(uint16_t id, uint16_t nb_queues, const struct roce_dp_pfc_conf *c, uint8_t prios,
		char *how, size_t n)
{
	struct rte_eth_pfc_queue_info qi;
	unsigned int p, q;
	int ret = -ENOTSUP;

	for (p = 0; p < ROCE_PFC_NB_PRIO; p++) {
		struct rte_eth_pfc_conf pc;

		if (!(prios & (1u << p)))
			continue;
		memset(&pc, 0, sizeof(pc));
		pc.fc.mode = RTE_ETH_FC_FULL;
		pc.fc.high_water = c->high_water;
		pc.fc.low_water = c->low_water;
		pc.fc.pause_time = UINT16_MAX;
		pc.fc.send_xon = 1;
		pc.priority = (uint8_t)p;
		ret = rte_eth_dev_priority_flow_ctrl_set(id, &pc);
		if (ret != 0)
			break;
	}
	if (ret == 0) {
		snprintf(how, n, "rte_eth_dev_priority_flow_ctrl_set");
		return 0;
	}
	if (ret != -ENOTSUP && ret != -ENOSYS) {
		snprintf(how, n, "rte_eth_dev_priority_flow_ctrl_set refused priority %u: %s", p,
				rte_strerror(-ret));
		return ret;
	}
	/* The queue-based variant pauses whole queues: only with one lossless priority. */
	if (rte_eth_dev_priority_flow_ctrl_queue_info_get(id, &qi) != 0 || qi.tc_max == 0 ||
			qi.mode_capa != RTE_ETH_FC_FULL) {
		snprintf(how, n, "the PMD has no priority flow control");
		return -ENOTSUP;
	}
	if (__builtin_popcount(prios) != 1 || (unsigned int)__builtin_ctz(prios) >= qi.tc_max) {
		snprintf(how, n, "the PMD has only queue-based PFC, for one priority below %u",
				qi.tc_max);
		return -ENOTSUP;
	}
	for (q = 0; q < nb_queues; q++) {
		struct rte_eth_pfc_queue_conf qc;

		memset(&qc, 0, sizeof(qc));
		qc.mode = RTE_ETH_FC_FULL;
		qc.rx_pause.tx_qid = (uint16_t)q;
		qc.rx_pause.tc = (uint8_t)__builtin_ctz(prios);
		qc.tx_pause.rx_qid = (uint16_t)q;
		qc.tx_pause.tc = (uint8_t)__builtin_ctz(prios);
		qc.tx_pause.pause_time = UINT16_MAX;
		ret = rte_eth_dev_priority_flow_ctrl_queue_configure(id, &qc);
		if (ret != 0) {
			snprintf(how, n, "rte_eth_dev_priority_flow_ctrl_queue_configure refused "
					"queue %u: %s", q, rte_strerror(-ret));
			return ret;
		}
	}
	snprintf(how, n, "rte_eth_dev_priority_flow_ctrl_queue_configure, %u queue(s)",
			nb_queues);
	return 0;
}

int
roce_dp_pfc_setup(struct roce_dp *dp, unsigned int port, const struct roce_dp_pfc_conf *c,
		char *msg, size_t len)
{
	const struct roce_port *pt;
	uint8_t prios = c->prios != 0 ? c->prios : 0xff, mode = c->mode;
	char list[24], how[160] = "";
	unsigned int d;
	int ret = 0;

	if (port >= dp->nb_ports || mode >= ROCE_DP_PFC_NB_MODES ||
			c->watchdog_ms > ROCE_DP_PFC_WATCHDOG_MAX_MS)
		return -EINVAL;
	for (d = 0; d < 64; d++)
		if (c->dscp2prio[d] >= ROCE_PFC_NB_PRIO)
			return -EINVAL;
	pt = &dp->ports[port];
	prio_list(prios, list, sizeof(list));
	roce_dp_pfc_set_dscp_map(&dp->pfc[port], c->dscp2prio);
	if (mode == ROCE_DP_PFC_HW || mode == ROCE_DP_PFC_AUTO) {
		ret = hw_pfc(pt->port_id, pt->nb_queues, c, prios, how, sizeof(how));
		if (ret == 0)
			mode = ROCE_DP_PFC_HW;
		else if (mode == ROCE_DP_PFC_AUTO)
			mode = ROCE_DP_PFC_SW;
	}
	switch (mode) {
	case ROCE_DP_PFC_HW:
		if (ret == 0)
			snprintf(msg, len, "port %u (%s): PFC in the NIC on priorities %s (%s)", port,
					pt->profile->family, list, how);
		else
			snprintf(msg, len, "port %u (%s): pfc = hw, but %s", port,
					pt->profile->family, how);
		break;
	case ROCE_DP_PFC_SW:
		snprintf(msg, len, "port %u (%s): PFC in software on priorities %s: the workers "
				"honour the pauses received%s%s", port, pt->profile->family, list,
				how[0] != '\0' ? "; " : "", how);
		break;
	default:
		snprintf(msg, len, "port %u (%s): PFC off: pauses received are counted, not "
				"honoured", port, pt->profile->family);
		break;
	}
	if (ret != 0 && mode == ROCE_DP_PFC_HW)
		return ret;
	roce_dp_pfc_configure(&dp->pfc[port], mode, prios,
			(uint64_t)c->watchdog_ms * 1000000, roce_dp_now());
	return 0;
}
