/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCED_CMD_H
#define ROCED_CMD_H

/* The control commands: their state (none of the dataplane's objects) and the command table. */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_log.h>

#include "roce_ctl.h"
#include "roced.h"

extern int roced_logtype;
#define ROCED_LOG(level, ...) rte_log(RTE_LOG_ ## level, roced_logtype, "roced: " __VA_ARGS__)

struct roced_state {
	struct roced_conf conf;
	struct roce_dp *dp;
	struct roce_ctl_server *srv;
	int shutdown;
	uint64_t start_ns;
	struct roce_impair *impair[ROCE_DP_MAX_PORTS];   /* cmd_impair.c */
	json_t *stats_prev;          /* the last stats sample served (cmd_stats.c) */
	char capture_file[PATH_MAX];                     /* cmd_capture.c: the last one's */
	struct roced_cm *cm;                             /* cmd_cm.c */
};

extern const struct roce_ctl_cmd roced_cmds[];
extern const unsigned int roced_nb_cmds;

/* Statistics and counters (cmd_stats.c). */
int roced_cmd_stats(void *arg, json_t *req, json_t *reply);
int roced_cmd_counters(void *arg, json_t *req, json_t *reply);
int roced_cmd_counters_clear(void *arg, json_t *req, json_t *reply);
int roced_cmd_stats_stages(void *arg, json_t *req, json_t *reply);
void roced_stats_fini(struct roced_state *st);

/* A control client went: release its PDs and what is in them (cmd_verbs.c). */
void roced_client_closed(void *arg, uint64_t client);

/* Verbs commands (cmd_verbs.c): JSON to and from the dataplane's verbs façade. */
#define ROCED_DUMP_MAX 4096            /* mr.dump bytes at most */
#define ROCED_MR_MAX (1ull << 32)       /* mr.reg bytes at most */
#define ROCED_RD_ATOMIC_MAX 128         /* qp.connect max_rd_atomic, max_dest_rd_atomic */
#define ROCED_ACCESS_NAMES 17
extern const char *const roced_access_names[ROCED_ACCESS_NAMES];
json_t *roced_ip_json(const uint8_t *ip, int v6);
json_t *roced_mac_json(const struct rte_ether_addr *mac);
/* "qpn": a QP the asking client may use. */
int roced_arg_qp(struct roced_state *st, json_t *req, json_t *reply, struct roce_dp_qp_info *q);
bool roced_qp_connected(const struct roce_dp_qp_info *q);
/* A UD QP's job (job.start): the AH "ah" of its PD and port, "remote.qpn", "remote.qkey"
 * (default: a controlled Q_Key, the QP's own), all needed only when the job @p sends.
 * @return 0 with the WR's fields set, or the error replied. */
int roced_arg_ud_job(struct roced_state *st, json_t *req, json_t *reply,
		const struct roce_dp_qp_info *q, bool sends, struct roce_ah **ah, uint32_t *rqpn,
		uint32_t *qkey);
/* "lkey", "offset", "length" (default @def_len): a local SGE, and its MR in @m. */
int roced_arg_local(struct roced_state *st, json_t *req, json_t *reply, struct roce_sge *sge,
		uint64_t def_len, struct roce_dp_mr_info *m);
int roced_arg_mr_range(struct roced_state *st, json_t *req, json_t *reply, const char *key,
		struct roce_dp_mr_info *m, uint64_t *off, uint64_t *len, uint64_t max_len);
int roced_cmd_pd_create(void *arg, json_t *req, json_t *reply);
int roced_cmd_pd_destroy(void *arg, json_t *req, json_t *reply);
int roced_cmd_pd_show(void *arg, json_t *req, json_t *reply);
int roced_cmd_mr_reg(void *arg, json_t *req, json_t *reply);
int roced_cmd_mr_dereg(void *arg, json_t *req, json_t *reply);
int roced_cmd_mr_show(void *arg, json_t *req, json_t *reply);
int roced_cmd_mr_fill(void *arg, json_t *req, json_t *reply);
int roced_cmd_mr_dump(void *arg, json_t *req, json_t *reply);
int roced_cmd_mr_write(void *arg, json_t *req, json_t *reply);
int roced_cmd_mr_digest(void *arg, json_t *req, json_t *reply);
int roced_cmd_qp_create(void *arg, json_t *req, json_t *reply);
int roced_cmd_qp_connect(void *arg, json_t *req, json_t *reply);
int roced_cmd_qp_show(void *arg, json_t *req, json_t *reply);
int roced_cmd_qp_destroy(void *arg, json_t *req, json_t *reply);
int roced_cmd_post_write(void *arg, json_t *req, json_t *reply);
int roced_cmd_post_read(void *arg, json_t *req, json_t *reply);
int roced_cmd_post_send(void *arg, json_t *req, json_t *reply);
int roced_cmd_post_cas(void *arg, json_t *req, json_t *reply);
int roced_cmd_post_faa(void *arg, json_t *req, json_t *reply);
int roced_cmd_post_recv(void *arg, json_t *req, json_t *reply);
int roced_cmd_cq_poll(void *arg, json_t *req, json_t *reply);
int roced_cmd_ah_create(void *arg, json_t *req, json_t *reply);
int roced_cmd_ah_destroy(void *arg, json_t *req, json_t *reply);
int roced_cmd_ah_show(void *arg, json_t *req, json_t *reply);

/* Move every QP to ERR, print the final counters, free the dataplane. */
void roced_shutdown(struct roced_state *st);

/* Impairment (cmd_impair.c): the ports' handles and the specs they start with. */
int roced_impair_init(struct roced_state *st, char *err, size_t errlen);
/* After the workers stopped, before the ports close. */
void roced_impair_fini(struct roced_state *st);
int roced_cmd_impair_set(void *arg, json_t *req, json_t *reply);
int roced_cmd_impair_show(void *arg, json_t *req, json_t *reply);
int roced_cmd_impair_clear(void *arg, json_t *req, json_t *reply);

/* PFC (cmd_pfc.c): each port's set up from its [portN] keys, once the ports are started. */
int roced_pfc_init(struct roced_state *st, char *err, size_t errlen);
int roced_cmd_pfc_show(void *arg, json_t *req, json_t *reply);
int roced_cmd_pfc_set(void *arg, json_t *req, json_t *reply);

/* Congestion control (cmd_cc.c); the state of a QP's, as qp.show adds it. */
extern const char roced_cc_set_args[];
json_t *roced_cc_qp_json(const struct roce_dp_cc_qp *q);
int roced_cmd_cc_show(void *arg, json_t *req, json_t *reply);
int roced_cmd_cc_set(void *arg, json_t *req, json_t *reply);
int roced_cmd_cc_trace(void *arg, json_t *req, json_t *reply);

/* Packet capture to pcapng (cmd_capture.c), and rte_pdump for dpdk-dumpcap. */
int roced_pdump_init(void);
int roced_cmd_capture_start(void *arg, json_t *req, json_t *reply);
int roced_cmd_capture_stop(void *arg, json_t *req, json_t *reply);
int roced_cmd_capture_show(void *arg, json_t *req, json_t *reply);

/* The connection manager over QP1 (cmd_cm.c): made once the ports are started. */
struct roced_cm;
int roced_cm_init(struct roced_state *st, char *err, size_t errlen);
void roced_cm_fini(struct roced_state *st);
/* Run its timers; @return when it wants to run next (ns, roce_dp_now()'s clock). */
uint64_t roced_cm_poll(struct roced_state *st);
/* QPs were destroyed: the connections they carried go too (before their numbers come back). */
void roced_cm_prune(struct roced_state *st);
/* Drop the listeners control client @p client owned (cm.listen owned=true). */
void roced_cm_client_closed(struct roced_state *st, uint64_t client);
int roced_cmd_cm_listen(void *arg, json_t *req, json_t *reply);
int roced_cmd_cm_unlisten(void *arg, json_t *req, json_t *reply);
int roced_cmd_cm_connect(void *arg, json_t *req, json_t *reply);
int roced_cmd_cm_accept(void *arg, json_t *req, json_t *reply);
int roced_cmd_cm_reject(void *arg, json_t *req, json_t *reply);
int roced_cmd_cm_disconnect(void *arg, json_t *req, json_t *reply);
int roced_cmd_cm_show(void *arg, json_t *req, json_t *reply);
int roced_cmd_cm_events(void *arg, json_t *req, json_t *reply);

/* Neighbour tables of the workers' lib/net instances (cmd_neigh.c). */
int roced_cmd_neigh_show(void *arg, json_t *req, json_t *reply);
int roced_cmd_neigh_flush(void *arg, json_t *req, json_t *reply);

/* QP1 and the GSI agent (cmd_gsi.c). */
int roced_cmd_gsi_show(void *arg, json_t *req, json_t *reply);
int roced_cmd_gsi_sidr(void *arg, json_t *req, json_t *reply);

#endif /* ROCED_CMD_H */
