/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCED_H
#define ROCED_H

/* roced: configuration, the control lcore's command handlers, and what they share. */

#include <stdint.h>

#include "roce_dataplane.h"
#include "roce_dp_pfc.h"
#include "roce_impair.h"

#define ROCED_DEFAULT_SOCKET "/run/roced.sock"

/* Impairment specs a port starts with ([portN] impair = SPEC, --impair SPEC). */
#define ROCED_MAX_IMPAIR 4

struct roced_port_conf {
	char device[64];              /* ethdev name, e.g. net_memif0, or a port number */
	struct roce_dp_addr addr;
	uint8_t nb_impair;
	struct roce_impair_spec impair[ROCED_MAX_IMPAIR];
	struct roce_dp_pfc_conf pfc;  /* pfc, pfc_prios, dscp2prio, pfc_watchdog_ms, pfc_water */
	uint8_t tx_copy;              /* enum roce_port_tx_copy */
	uint32_t tx_zc_min;           /* 0: the default */
	uint16_t queues;              /* queue pairs, 0: the port's choice */
};

struct roced_conf {
	char socket[108];
	char log_level[16];
	uint16_t nb_workers;
	uint16_t mtu;
	uint32_t nb_mbufs;
	uint16_t mbuf_size;
	uint32_t max_qps;
	uint32_t idle_sleep_us;
	uint16_t nb_ports;
	struct roced_port_conf ports[ROCE_DP_MAX_PORTS];
};

/* Defaults, then the config file, then the command line. Errors: one line, exit code 2. */
void roced_conf_defaults(struct roced_conf *c);
int roced_conf_load(struct roced_conf *c, const char *path, char *err, size_t errlen);
/* roced_conf_load() of a file rte_cfgfile_load() has read (no path in @err). */
struct rte_cfgfile;
int roced_conf_apply(struct roced_conf *c, struct rte_cfgfile *cf, char *err, size_t errlen);
int roced_conf_args(struct roced_conf *c, int argc, char **argv, char *err, size_t errlen);

/* Priorities "3", "3,4", "0-7" (a bit each), at least one; @return 0 or -EINVAL. */
int roced_parse_prios(const char *s, uint8_t *mask);
/* "D:P[,D:P...]" over @map (64 entries): DSCP D goes to priority P; @return 0 or -EINVAL. */
int roced_parse_dscp2prio(const char *s, uint8_t map[64]);

/* Parse "a.b.c.d/len" or "x::y/len" into @addr; @return 0 or -EINVAL. */
/*
 * quiesce.c: while attached, an munmap() on the EAL interrupt thread first waits for the
 * workers of @p dp (roce_dp_quiesce()). Detach before the dataplane goes.
 */
void roced_quiesce_attach(struct roce_dp *dp);
void roced_quiesce_detach(void);

int roced_parse_ip4(const char *s, uint8_t ip[4], uint8_t *prefix);
int roced_parse_ip6(const char *s, uint8_t ip[16], uint8_t *prefix);

#endif /* ROCED_H */
