/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCED_CMD_H
#define ROCED_CMD_H

/* The control lcore's view of the daemon: MRs and QPs it created, and the command table. */

#include <stdint.h>

#include <rte_log.h>

#include "roce_ctl.h"
#include "roced.h"

extern int roced_logtype;
#define ROCED_LOG(level, ...) rte_log(RTE_LOG_ ## level, roced_logtype, "roced: " __VA_ARGS__)

#define ROCED_MAX_MRS 256
#define ROCED_MAX_QPS 32768

struct roced_mr {
	struct roce_mr *mr;
	uint8_t *buf;
	uint64_t len;
	uint32_t access;
	uint32_t id;
	uint64_t owner;               /* control client that owns it (freed when it goes), or 0 */
};

struct roced_qp {
	struct roce_qp *qp;
	struct roce_cq *cq;
	uint32_t qpn;
	uint32_t psn;
	uint16_t port;
	uint16_t worker;
	uint32_t sq_depth;
	uint32_t rq_depth;
	uint8_t connected;
	uint8_t sr;                   /* selective repeat agreed with the peer */
	uint32_t remote_qpn;
	uint32_t remote_psn;
	uint8_t remote_ip[16];
	uint8_t remote_ipv6;
	struct rte_ether_addr remote_mac;
	uint64_t owner;               /* control client that owns it (freed when it goes), or 0 */
};

struct roced_state {
	struct roced_conf conf;
	struct roce_dp *dp;
	struct roce_ctl_server *srv;
	int shutdown;
	uint32_t next_mr_id;
	uint32_t next_worker;
	struct roced_mr mrs[ROCED_MAX_MRS];
	struct roced_qp qps[ROCED_MAX_QPS];
	uint64_t start_ns;
	struct roce_impair *impair[ROCE_DP_MAX_PORTS];   /* cmd_impair.c */
};

extern const struct roce_ctl_cmd roced_cmds[];
extern const unsigned int roced_nb_cmds;

/* A control client went: free the QPs and MRs it created with owned=true. */
void roced_client_closed(void *arg, uint64_t client);

/* Move every QP to ERR, print the final counters, free the dataplane. */
void roced_shutdown(struct roced_state *st);

/* Impairment (cmd_impair.c): the ports' handles and the specs they start with. */
int roced_impair_init(struct roced_state *st, char *err, size_t errlen);
/* After the workers stopped, before the ports close. */
void roced_impair_fini(struct roced_state *st);
int roced_cmd_impair_set(void *arg, json_t *req, json_t *reply);
int roced_cmd_impair_show(void *arg, json_t *req, json_t *reply);
int roced_cmd_impair_clear(void *arg, json_t *req, json_t *reply);

/* Neighbour tables of the workers' lib/net instances (cmd_neigh.c). */
int roced_cmd_neigh_show(void *arg, json_t *req, json_t *reply);
int roced_cmd_neigh_flush(void *arg, json_t *req, json_t *reply);

#endif /* ROCED_CMD_H */
