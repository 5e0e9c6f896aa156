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
#include <sys/un.h>

#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_version.h>

#include "roce_ctl.h"
#include "roce_dp_gsi.h"
#include "roce_port.h"
#include "roced.h"
#include "roced_cmd.h"

#ifndef ROCEDP_VERSION
#define ROCEDP_VERSION "unknown"
#endif

RTE_LOG_REGISTER(roced_logtype, roce.roced, INFO);

/*
 * The control loop's longest sleep: port and MR upkeep run this often. Clients, MADs (the
 * workers wake it) and the CM's timers end it sooner; each wake-up takes tens of
 * microseconds from the worker sharing the CPU.
 */
#define ROCED_IDLE_MS 100

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
		"EAL options (before --), the ones roced needs most; roced -h lists them all:\n"
		"  -l, --lcores LIST     main lcore, then one per worker: give each its own core\n"
		"  -a PCI, --vdev DEV    the ports' devices (net_memif0,role=server,socket=PATH ...)\n"
		"  --no-huge -m MB       run without hugepages; --file-prefix NAME for each roced\n"
		"roced options (after --):\n"
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
		"      --tx-copy MODE    payloads of port 0: auto (zero-copy where the PMD pays),\n"
		"                        always (copied) or never (zero-copy, else an error)\n"
		"      --tx-zc-min N     copy payloads shorter than N bytes (default %d)\n"
		"      --queues N        queue pairs of port 0 (default: one per worker where RSS\n"
		"                        spreads RoCE, else 1; memif: as many on both ends)\n"
		"  -h, --help            this text\n"
		"      --version         roced's and DPDK's versions\n"
		"Options override the file. See roced(8).\n", prog, ROCED_DEFAULT_SOCKET,
		ROCE_DP_TX_ZC_MIN);
}

/* EAL's -h prints its usage, then this. */
static void
usage_hook(const char *prog)
{
	RTE_SET_USED(prog);
	usage("roced");
}

/*
 * --help and --version among roced's options (after "--"), and --version anywhere, are
 * answered before rte_eal_init(): they must work without hugepages, devices or root. -h or
 * --help before "--" goes to the EAL, which lists its options without memory, then roced's
 * (only then: the EAL also prints its usage, and the hook, after a bad option).
 */
static void
early_options(int argc, char **argv)
{
	bool app = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (!app && strcmp(argv[i], "--") == 0) {
			app = true;
			continue;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("roced %s (%s)\n", ROCEDP_VERSION, rte_version());
			exit(0);
		}
		if (strcmp(argv[i], "-h") != 0 && strcmp(argv[i], "--help") != 0)
			continue;
		if (app) {
			usage("roced");
			exit(0);
		}
		rte_set_application_usage_hook(usage_hook);
	}
}

/* What to do when rte_eal_init() failed, by its rte_errno. */
static const char *
eal_hint(int err)
{
	switch (err) {
	case EACCES:
		/* 22.11 says EACCES for no hugepages at all as for hugepages it may not open. */
		return "no hugepages it may use (none reserved, or not root): reserve them as root "
			"(dpdk-hugepages.py --setup 2G), or give --no-huge -m 512 for virtual "
			"devices";
	case ENOMEM:
		return "not the memory -m asks for: reserve more hugepages (dpdk-hugepages.py "
			"--setup 2G) or give a smaller -m";
	case EINVAL:
		return "an EAL option is wrong: roced -h lists them; roced's own go after --";
	case ENODEV:
		return "a device of -a or --vdev cannot be used: see the lines above";
	case EALREADY:
		return "initialised twice";
	default:
		return "see the EAL's lines above (another roced with the same --file-prefix? give "
			"each its own)";
	}
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

/*
 * The --vdev behind a port device the EAL did not create: the one of that name, or for a
 * port number the first --vdev without an ethdev. NULL: none was given.
 */
static const struct rte_devargs *
vdev_not_started(const char *device, bool numeric)
{
	struct rte_devargs *da;
	uint16_t id;

	RTE_EAL_DEVARGS_FOREACH("vdev", da) {
		if (strcmp(da->name, device) == 0)
			return da;
		if (numeric && rte_eth_dev_get_port_by_name(da->name, &id) != 0)
			return da;
	}
	return NULL;
}

/* A port device that is not an ethdev: why, and what to give instead. */
static void
no_ethdev(unsigned int p, const char *device, bool numeric)
{
	const struct rte_devargs *da = vdev_not_started(device, numeric);
	char names[256] = "", why[400];
	size_t len = 0;
	uint16_t id;

	if (da != NULL) {
		roce_port_probe_failed(da->name, da->args, why, sizeof(why));
		die("[port%u] device: %s", p, why);
	}
	RTE_ETH_FOREACH_DEV(id) {
		char name[RTE_ETH_NAME_MAX_LEN];

		if (rte_eth_dev_get_name_by_port(id, name) == 0 && len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%u %s",
					len > 0 ? ", " : "", id, name);
	}
	if (len == 0)
		die("[port%u] device: no ethdev '%s' (the EAL has none: give it the device with "
				"--vdev or -a before --)", p, device);
	die("[port%u] device: no ethdev '%s' (there are: %s; or give the EAL another with "
			"--vdev or -a before --)", p, device, names);
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
	die("[port%u] gateway %s is not on the port's subnet %s/%u: give a gateway inside it, or "
			"the address's real prefix length", p,
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
			no_ethdev(p, c->ports[p].device, *end == '\0');
		if (c->ports[p].addr.prefix4 == 0)
			die("[port%u] ipv4: missing (e.g. --ip 10.0.0.1/24)", p);
		gateway_check(p, &c->ports[p].addr);
		dc->port_ids[p] = id;
		dc->addr[p] = c->ports[p].addr;
		dc->tx_copy[p] = c->ports[p].tx_copy;
		dc->tx_zc_min[p] = c->ports[p].tx_zc_min;
		dc->queues[p] = c->ports[p].queues;
	}
	dc->nb_ports = c->nb_ports;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (i == c->nb_workers)
			break;
		dc->worker_lcores[i++] = lcore;
	}
	if (i < c->nb_workers)
		die("workers: %u wanted but only %u lcores besides the main one: give the EAL %u "
				"with -l (e.g. -l 0-%u)", c->nb_workers, i, c->nb_workers + 1,
				c->nb_workers);
	dc->nb_workers = c->nb_workers;
	dc->mtu = c->mtu;
	dc->nb_mbufs = c->nb_mbufs;
	dc->mbuf_data_room = c->mbuf_size;
	dc->max_qps = c->max_qps;
	dc->idle_sleep_us = c->idle_sleep_us;
}

/* The control socket could not be bound: who holds it, or what is wrong with the path. */
static void
socket_die(const char *path, int err)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], comm[64] = "", proc[64];
	char *slash;
	FILE *f;
	int pid;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';         /* "/x.sock": the root directory */
	else
		*slash = '\0';
	switch (err) {
	case EADDRINUSE:
		pid = roce_ctl_socket_owner(path);
		if (pid <= 0)
			die("control socket %s: a live server answers on it: stop it or give this "
					"roced another --socket", path);
		snprintf(proc, sizeof(proc), "/proc/%d/comm", pid);
		f = fopen(proc, "r");
		if (f == NULL || fgets(comm, sizeof(comm), f) == NULL)
			snprintf(comm, sizeof(comm), "a process");
		if (f != NULL)
			fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
		die("control socket %s: %s (pid %d) already serves it: stop it (rocectl -s %s "
				"shutdown) or give this roced another --socket", path, comm, pid, path);
		break;
	case ENOENT:
		die("control socket %s: no directory %s: create it (mkdir -p %s) or give another "
				"--socket", path, dir, dir);
		break;
	case EACCES:
	case EPERM:
	case EROFS:
		die("control socket %s: %s: run roced as a user who may create files in %s, or "
				"give another --socket", path, strerror(err), dir);
		break;
	case EEXIST:
		die("control socket %s: the file exists and is not a socket: remove it or give "
				"another --socket", path);
		break;
	case ENAMETOOLONG:
		die("control socket %s: longer than %zu bytes: give a shorter --socket", path,
				sizeof(dir) - 1);
		break;
	default:
		die("control socket %s: %s", path, strerror(err));
	}
}

/* The loop's sleep until the CM's next deadline (@p next ns, UINT64_MAX: none), rounded up. */
static int
idle_ms(uint64_t next)
{
	uint64_t now = roce_dp_now();

	if (next <= now)
		return 0;
	if (next - now >= ROCED_IDLE_MS * 1000000ull)
		return ROCED_IDLE_MS;
	return (int)((next - now + 999999) / 1000000);
}

int
main(int argc, char **argv)
{
	struct roce_ctl_conf cc = { .on_close = roced_client_closed };
	struct roced_state st = {0};
	struct roce_ctl_server *srv;
	struct roce_dp_conf dc;
	unsigned int gsi_work = 0;
	uint64_t cm_next = UINT64_MAX;
	char err[512];
	int ret;

	early_options(argc, argv);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "roced: EAL initialisation failed: %s\n", eal_hint(rte_errno));
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
		socket_die(st.conf.socket, errno);
	st.srv = bound_srv = srv;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	build_dp_conf(&st.conf, &dc);
	err[0] = '\0';
	dc.err = err;
	dc.err_len = sizeof(err);
	st.dp = roce_dp_create(&dc);
	if (st.dp == NULL)
		die("%s", err[0] != '\0' ? err : rte_strerror(rte_errno));
	if (roced_impair_init(&st, err, sizeof(err)) != 0)
		die("%s", err);
	if (roced_pfc_init(&st, err, sizeof(err)) != 0)
		die("%s", err);
	ret = roce_dp_start(st.dp);
	if (ret != 0)
		die("cannot start the workers: %s", strerror(-ret));
	roced_quiesce_attach(st.dp);
	if (roced_cm_init(&st, err, sizeof(err)) != 0)
		die("%s", err);
	roced_pdump_init();
	printf("roced: serving %s with %u worker(s)\n", st.conf.socket, dc.nb_workers);
	fflush(stdout);
	roce_ctl_server_watch(srv, roce_dp_gsi_wake_fd(st.dp));
	while (!quit && !st.shutdown) {
		roce_ctl_server_poll(srv, gsi_work != 0 ? 0 :
				roce_dp_gsi_idle(st.dp, idle_ms(cm_next)));
		roce_dp_port_watch(st.dp, roce_dp_now());
		gsi_work = roce_dp_gsi_poll(st.dp);
		/* The CM's timers: resends, timeouts, time wait. */
		cm_next = roced_cm_poll(&st);
	}
	roce_ctl_server_flush(srv, 1000);
	roce_ctl_server_destroy(srv);
	roced_shutdown(&st);
	rte_eal_cleanup();
	return 0;
}
