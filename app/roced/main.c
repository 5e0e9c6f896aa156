/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roced: EAL, configuration, ports and workers, then the control loop on the main lcore until
 * SIGINT, SIGTERM or a "shutdown" request.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "roce_ctl.h"
#include "roced.h"
#include "roced_cmd.h"

RTE_LOG_REGISTER(roced_logtype, roce.roced, INFO);

static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	quit = 1;
}

static void
usage(const char *prog)
{
	printf("usage: %s [EAL options] -- [options]\n"
		"  -c, --config FILE     INI configuration (see config/roced.conf)\n"
		"  -s, --socket PATH     control socket (default %s)\n"
		"  -w, --workers N       worker lcores (default 1; the main lcore serves control)\n"
		"  -p, --port DEVICE     ethdev of port 0, e.g. net_memif0 or 0\n"
		"  -i, --ip A.B.C.D/LEN  IPv4 address of port 0\n"
		"  -6, --ip6 ADDR/LEN    IPv6 address of port 0\n"
		"  -g, --gateway A.B.C.D IPv4 gateway of port 0\n"
		"  -m, --mtu N           IP MTU of the ports (default 1500)\n"
		"  -I, --idle-sleep US   sleep this long when a worker is idle (default 0)\n"
		"  -Q, --max-qps N       QPs per worker (default 4096)\n"
		"  -L, --log-level LVL   emerg..debug (default info)\n"
		"      --mbuf-size N     mbuf data room in bytes (default 4608)\n"
		"      --impair SPEC     impair a port, e.g. port=0,dir=rx,loss=0.01,seed=7\n"
		"                        (repeatable; see roced(8))\n"
		"  -h, --help            this text\n"
		"Options override the file. See roced(8).\n", prog, ROCED_DEFAULT_SOCKET);
}

/* The control socket once bound: die() removes it. */
static struct roce_ctl_server *bound_srv;

static void
die(const char *fmt, ...)
{
	va_list ap;

	roce_ctl_server_destroy(bound_srv);
	fprintf(stderr, "roced: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	rte_eal_cleanup();
	exit(2);
}

static const char *const levels[] = {
	NULL, "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

static int
log_level(const char *name)
{
	unsigned int i;

	for (i = 1; i < RTE_DIM(levels); i++)
		if (strcmp(levels[i], name) == 0)
			return (int)i;
	return -1;
}

/* Whether the EAL was asked for a virtual device of this name (--vdev). */
static bool
vdev_given(const char *name)
{
	struct rte_devargs *da;

	RTE_EAL_DEVARGS_FOREACH("vdev", da)
		if (strcmp(da->name, name) == 0)
			return true;
	return false;
}

/* A gateway must be on the port's subnet: ARP could never reach it otherwise. */
static void
gateway_check(unsigned int p, const struct roce_dp_addr *a)
{
	uint32_t ip, gw, mask = a->prefix4 == 0 ? 0 : ~0u << (32 - a->prefix4);
	char net[INET_ADDRSTRLEN], txt[INET_ADDRSTRLEN];

	memcpy(&ip, a->ip4, 4);
	memcpy(&gw, a->gw4, 4);
	if (gw == 0 || (ntohl(ip) & mask) == (ntohl(gw) & mask))
		return;
	ip = htonl(ntohl(ip) & mask);
	die("[port%u] gateway %s is not on the port's subnet %s/%u", p,
			inet_ntop(AF_INET, a->gw4, txt, sizeof(txt)),
			inet_ntop(AF_INET, &ip, net, sizeof(net)), a->prefix4);
}

/* Port device names to ethdev ids, worker lcores, and the dataplane configuration. */
static void
build_dp_conf(const struct roced_conf *c, struct roce_dp_conf *dc)
{
	unsigned int lcore, i = 0, p;

	memset(dc, 0, sizeof(*dc));
	if (c->nb_ports == 0)
		die("no port: give --port DEVICE (and --vdev/-a for the EAL) or a [port0] section");
	for (p = 0; p < c->nb_ports; p++) {
		uint16_t id;
		char *end;
		unsigned long n = strtoul(c->ports[p].device, &end, 10);

		if (c->ports[p].device[0] == '\0')
			die("[port%u] device: missing", p);
		if (*end == '\0' && n < RTE_MAX_ETHPORTS && rte_eth_dev_is_valid_port(n))
			id = (uint16_t)n;
		else if (rte_eth_dev_get_port_by_name(c->ports[p].device, &id) != 0)
			die("[port%u] device: no ethdev '%s' (%u available; %s)", p,
					c->ports[p].device, rte_eth_dev_count_avail(),
					vdev_given(c->ports[p].device) ? "its --vdev was given but the "
					"PMD did not start: see the EAL lines above (an interface or "
					"socket that is not there?)" : "add --vdev or -a");
		if (c->ports[p].addr.prefix4 == 0)
			die("[port%u] ipv4: missing (e.g. --ip 10.0.0.1/24)", p);
		gateway_check(p, &c->ports[p].addr);
		dc->port_ids[p] = id;
		dc->addr[p] = c->ports[p].addr;
	}
	dc->nb_ports = c->nb_ports;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (i == c->nb_workers)
			break;
		dc->worker_lcores[i++] = lcore;
	}
	if (i < c->nb_workers)
		die("workers: %u wanted but only %u lcores besides the main one (use -l/--lcores)",
				c->nb_workers, i);
	dc->nb_workers = c->nb_workers;
	dc->mtu = c->mtu;
	dc->nb_mbufs = c->nb_mbufs;
	dc->mbuf_data_room = c->mbuf_size;
	dc->max_qps = c->max_qps;
	dc->idle_sleep_us = c->idle_sleep_us;
}

int
main(int argc, char **argv)
{
	struct roce_ctl_conf cc = { .on_close = roced_client_closed };
	struct roced_state st = {0};
	struct roce_ctl_server *srv;
	struct roce_dp_conf dc;
	char err[512];
	int ret;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "roced: EAL initialisation failed (see the EAL messages above)\n");
		return 2;
	}
	argc -= ret;
	argv += ret;
	roced_conf_defaults(&st.conf);
	ret = roced_conf_args(&st.conf, argc, argv, err, sizeof(err));
	if (ret > 0) {
		usage("roced");
		rte_eal_cleanup();
		return 0;
	}
	if (ret < 0)
		die("%s", err);
	if (log_level(st.conf.log_level) < 0)
		die("log_level: '%s' is not one of emerg..debug", st.conf.log_level);
	rte_log_set_level_pattern("roce*", (uint32_t)log_level(st.conf.log_level));
	/*
	 * The control socket and the signal handlers come first: a socket that cannot be bound
	 * (missing directory, a live daemon on it) must stop roced before any worker polls.
	 */
	srv = roce_ctl_server_create(st.conf.socket, roced_cmds, roced_nb_cmds, &st, &cc);
	if (srv == NULL)
		die("control socket %s: %s", st.conf.socket, strerror(errno));
	st.srv = bound_srv = srv;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	build_dp_conf(&st.conf, &dc);
	st.dp = roce_dp_create(&dc);
	if (st.dp == NULL)
		die("dataplane: %s", rte_strerror(rte_errno));
	if (roced_impair_init(&st, err, sizeof(err)) != 0)
		die("%s", err);
	ret = roce_dp_start(st.dp);
	if (ret != 0)
		die("cannot start the workers: %s", strerror(-ret));
	roced_quiesce_attach(st.dp);
	printf("roced: serving %s with %u worker(s)\n", st.conf.socket, dc.nb_workers);
	fflush(stdout);
	while (!quit && !st.shutdown) {
		roce_ctl_server_poll(srv, 100);
		roce_dp_port_watch(st.dp, roce_dp_now());
	}
	roce_ctl_server_flush(srv, 1000);
	roce_ctl_server_destroy(srv);
	roced_shutdown(&st);
	rte_eal_cleanup();
	return 0;
}
