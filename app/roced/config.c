/* SPDX-License-Identifier: BSD-3-Clause */
/* roced configuration: an INI file (rte_cfgfile) and the options after "--". */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_common.h>

#include "roced.h"

void
roced_conf_defaults(struct roced_conf *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->socket, sizeof(c->socket), "%s", ROCED_DEFAULT_SOCKET);
	snprintf(c->log_level, sizeof(c->log_level), "info");
	c->nb_workers = 1;
	c->mtu = 1500;
	c->nb_mbufs = 16384;
	c->mbuf_size = 4608;
	c->max_qps = 4096;
}

static int
parse_prefixed(const char *s, int af, void *ip, uint8_t *prefix, unsigned int max)
{
	char buf[64], *slash, *end;
	unsigned long len = max;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash != NULL) {
		*slash = '\0';
		errno = 0;
		len = strtoul(slash + 1, &end, 10);
		if (errno != 0 || *end != '\0' || slash[1] == '\0' || len > max || len == 0)
			return -EINVAL;
	}
	if (inet_pton(af, buf, ip) != 1)
		return -EINVAL;
	if (prefix != NULL)
		*prefix = (uint8_t)len;
	return 0;
}

int
roced_parse_ip4(const char *s, uint8_t ip[4], uint8_t *prefix)
{
	return parse_prefixed(s, AF_INET, ip, prefix, 32);
}

int
roced_parse_ip6(const char *s, uint8_t ip[16], uint8_t *prefix)
{
	return parse_prefixed(s, AF_INET6, ip, prefix, 128);
}

static int
parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	char *end;

	errno = 0;
	if (*s == '\0' || *s == '-')
		return -EINVAL;
	*v = strtoull(s, &end, 0);
	return errno != 0 || *end != '\0' || *v < min || *v > max ? -EINVAL : 0;
}

/* One "key = value" of [roced], or one option: the table says where it goes and its range. */
enum kind { K_STR, K_U16, K_U32 };

struct key {
	const char *name;
	enum kind kind;
	size_t off;
	size_t size;
	uint64_t min, max;
};

#define KSTR(n, f) { n, K_STR, offsetof(struct roced_conf, f), \
	sizeof(((struct roced_conf *)0)->f), 0, 0 }
#define KNUM(n, k, f, lo, hi) { n, k, offsetof(struct roced_conf, f), 0, lo, hi }

static const struct key keys[] = {
	KSTR("socket", socket),
	KSTR("log_level", log_level),
	KNUM("workers", K_U16, nb_workers, 1, ROCE_DP_MAX_WORKERS),
	KNUM("mtu", K_U16, mtu, 576, 9216),
	KNUM("mbufs", K_U32, nb_mbufs, 1024, 1u << 24),
	KNUM("mbuf_size", K_U16, mbuf_size, 2048, 10240),
	KNUM("max_qps", K_U32, max_qps, 1, 1u << 16),
	KNUM("idle_sleep_us", K_U32, idle_sleep_us, 0, 1000000),
};

static int
set_key(struct roced_conf *c, const struct key *k, const char *val, char *err, size_t errlen)
{
	void *dst = (uint8_t *)c + k->off;
	uint64_t v;

	if (k->kind == K_STR) {
		if (strlen(val) >= k->size || val[0] == '\0') {
			snprintf(err, errlen, "%s: empty or longer than %zu bytes", k->name,
					k->size - 1);
			return -EINVAL;
		}
		strcpy(dst, val);
		return 0;
	}
	if (parse_uint(val, k->min, k->max, &v) != 0) {
		snprintf(err, errlen, "%s: '%s' is not a number in %lu..%lu", k->name, val,
				(unsigned long)k->min, (unsigned long)k->max);
		return -EINVAL;
	}
	if (k->kind == K_U16)
		*(uint16_t *)dst = (uint16_t)v;
	else
		*(uint32_t *)dst = (uint32_t)v;
	return 0;
}

static const struct key *
key_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(keys); i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

/* One impairment spec more for a port (port= in it is checked against the port at start). */
static int
add_impair(struct roced_port_conf *p, const char *val, char *err, size_t errlen)
{
	char sub[200];

	if (p->nb_impair == ROCED_MAX_IMPAIR) {
		snprintf(err, errlen, "impair: more than %d specs for one port", ROCED_MAX_IMPAIR);
		return -EINVAL;
	}
	if (roce_impair_parse(val, &p->impair[p->nb_impair], sub, sizeof(sub)) != 0) {
		snprintf(err, errlen, "impair: %s", sub);
		return -EINVAL;
	}
	p->nb_impair++;
	return 0;
}

/* A port key: device, ipv4, gateway, ipv6, vlan, impair. */
static int
set_port_key(struct roced_port_conf *p, const char *name, const char *val, char *err,
		size_t errlen)
{
	struct roce_dp_addr *a = &p->addr;
	uint64_t v;
	int ret = 0;

	if (strcmp(name, "device") == 0) {
		if (strlen(val) >= sizeof(p->device) || val[0] == '\0')
			ret = -EINVAL;
		else
			strcpy(p->device, val);
	} else if (strcmp(name, "ipv4") == 0 || strcmp(name, "ipv6") == 0) {
		/* Without a prefix the address would be a /32 (/128): no neighbour on-link. */
		if (strchr(val, '/') == NULL) {
			snprintf(err, errlen, "%s: '%s' needs a prefix length (e.g. %s/%s)", name,
					val, val, name[3] == '4' ? "24" : "64");
			return -EINVAL;
		}
		ret = name[3] == '4' ? roced_parse_ip4(val, a->ip4, &a->prefix4) :
			roced_parse_ip6(val, a->ip6, &a->prefix6);
	} else if (strcmp(name, "gateway") == 0) {
		ret = roced_parse_ip4(val, a->gw4, NULL);
	} else if (strcmp(name, "vlan") == 0) {
		ret = parse_uint(val, 0, 4094, &v);
		if (ret == 0)
			a->vlan = (uint16_t)v;
	} else if (strcmp(name, "impair") == 0) {
		return add_impair(p, val, err, errlen);
	} else {
		snprintf(err, errlen, "unknown key '%s'", name);
		return -EINVAL;
	}
	if (ret != 0)
		snprintf(err, errlen, "%s: invalid value '%s'", name, val);
	return ret;
}

/*
 * rte_cfgfile cuts longer names and values to CFG_NAME_LEN - 1 and CFG_VALUE_LEN - 1 bytes
 * without a word: one that long may have been cut, and is refused.
 */
static int
too_long(const char *s, size_t limit)
{
	return strnlen(s, limit) >= limit - 1;
}

/* Section @index of @cf: [roced] or [portN]. A section given twice continues where it was. */
static int
load_section(struct roced_conf *c, struct rte_cfgfile *cf, int index, char *err, size_t errlen)
{
	char sect[CFG_NAME_LEN], sub[256];
	int n = rte_cfgfile_section_num_entries_by_index(cf, sect, index), i, port = -1;
	struct rte_cfgfile_entry *e;
	uint64_t v;

	e = calloc(RTE_MAX(n, 1), sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	n = rte_cfgfile_section_entries_by_index(cf, index, sect, e, n);
	if (too_long(sect, CFG_NAME_LEN)) {
		snprintf(err, errlen, "[%.20s...]: section name longer than %d bytes", sect,
				CFG_NAME_LEN - 2);
		free(e);
		return -EINVAL;
	}
	if (strncmp(sect, "port", 4) == 0) {
		if (parse_uint(sect + 4, 0, ROCE_DP_MAX_PORTS - 1, &v) != 0) {
			snprintf(err, errlen, "[%s]: ports are [port0]..[port%d]", sect,
					ROCE_DP_MAX_PORTS - 1);
			free(e);
			return -EINVAL;
		}
		port = (int)v;
		c->nb_ports = RTE_MAX(c->nb_ports, (uint16_t)(port + 1));
	} else if (strcmp(sect, "roced") != 0) {
		snprintf(err, errlen, "unknown section [%s]", sect);
		free(e);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		const struct key *k = port < 0 ? key_find(e[i].name) : NULL;
		int ret;

		if (too_long(e[i].name, CFG_NAME_LEN)) {
			snprintf(sub, sizeof(sub), "key '%.20s...' too long", e[i].name);
			ret = -EINVAL;
		} else if (too_long(e[i].value, CFG_VALUE_LEN)) {
			snprintf(sub, sizeof(sub), "%s: value longer than %d bytes", e[i].name,
					CFG_VALUE_LEN - 2);
			ret = -EINVAL;
		} else if (port >= 0) {
			ret = set_port_key(&c->ports[port], e[i].name, e[i].value, sub,
					sizeof(sub));
		} else if (k == NULL) {
			snprintf(sub, sizeof(sub), "unknown key '%s'", e[i].name);
			ret = -EINVAL;
		} else {
			ret = set_key(c, k, e[i].value, sub, sizeof(sub));
		}
		if (ret != 0) {
			snprintf(err, errlen, "[%s] %s", sect, sub);
			free(e);
			return ret;
		}
	}
	free(e);
	return 0;
}

int
roced_conf_apply(struct roced_conf *c, struct rte_cfgfile *cf, char *err, size_t errlen)
{
	int n = rte_cfgfile_num_sections(cf, NULL, 0), i, ret = 0;

	for (i = 0; i < n && ret == 0; i++)
		ret = load_section(c, cf, i, err, errlen);
	return ret;
}

int
roced_conf_load(struct roced_conf *c, const char *path, char *err, size_t errlen)
{
	struct rte_cfgfile *cf = rte_cfgfile_load(path, 0);
	char sub[400];
	int ret;

	if (cf == NULL) {
		if (access(path, R_OK) != 0)
			snprintf(err, errlen, "%s: cannot read the file: %s", path, strerror(errno));
		else
			snprintf(err, errlen, "%s: not an INI file (a line is neither [section], "
					"key = value nor a ; comment)", path);
		return -EINVAL;
	}
	ret = roced_conf_apply(c, cf, sub, sizeof(sub));
	rte_cfgfile_close(cf);
	if (ret != 0)
		snprintf(err, errlen, "%s: %s", path, sub);
	return ret;
}

#define OPT_IMPAIR 256
#define OPT_MBUF_SIZE 257

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "socket", required_argument, NULL, 's' },
	{ "workers", required_argument, NULL, 'w' },
	{ "port", required_argument, NULL, 'p' },
	{ "ip", required_argument, NULL, 'i' },
	{ "ip6", required_argument, NULL, '6' },
	{ "gateway", required_argument, NULL, 'g' },
	{ "mtu", required_argument, NULL, 'm' },
	{ "idle-sleep", required_argument, NULL, 'I' },
	{ "max-qps", required_argument, NULL, 'Q' },
	{ "log-level", required_argument, NULL, 'L' },
	{ "impair", required_argument, NULL, OPT_IMPAIR },
	{ "mbuf-size", required_argument, NULL, OPT_MBUF_SIZE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Every option with a letter: the same as long_opts, as --help lists them. */
static const char short_opts[] = "c:s:w:p:i:6:g:m:I:Q:L:h";

/* Option letter -> [roced] key, for the options that are plain keys. */
static const struct {
	int opt;
	const char *key;
} opt_keys[] = {
	{ 's', "socket" }, { 'w', "workers" }, { 'm', "mtu" }, { 'I', "idle_sleep_us" },
	{ 'L', "log_level" }, { 'Q', "max_qps" }, { OPT_MBUF_SIZE, "mbuf_size" },
};

/* Port options apply to port 0, as a one-port appliance is the common case. */
static const struct {
	int opt;
	const char *key;
} opt_port_keys[] = {
	{ 'p', "device" }, { 'i', "ipv4" }, { '6', "ipv6" }, { 'g', "gateway" },
};

/* --impair SPEC: the spec's port= (default 0) says which port. */
static int
opt_impair(struct roced_conf *c, const char *val, char *err, size_t errlen)
{
	struct roce_impair_spec s;
	char sub[200];

	if (roce_impair_parse(val, &s, sub, sizeof(sub)) != 0) {
		snprintf(err, errlen, "impair: %s", sub);
		return -EINVAL;
	}
	if (s.port >= ROCE_DP_MAX_PORTS) {
		snprintf(err, errlen, "impair: port=%u: ports are 0..%d", s.port,
				ROCE_DP_MAX_PORTS - 1);
		return -EINVAL;
	}
	return add_impair(&c->ports[s.port], val, err, errlen);
}

int
roced_conf_args(struct roced_conf *c, int argc, char **argv, char *err, size_t errlen)
{
	char sub[256];
	unsigned int i;
	int opt;

	optind = 1;
	/* --config first, so that the other options override the file. */
	while ((opt = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		if (opt == 'c' && roced_conf_load(c, optarg, err, errlen) != 0)
			return -EINVAL;
		if (opt == '?') {
			snprintf(err, errlen, "unknown option (see --help)");
			return -EINVAL;
		}
		if (opt == 'h')
			return 1;
	}
	optind = 1;
	while ((opt = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		for (i = 0; i < RTE_DIM(opt_keys); i++)
			if (opt_keys[i].opt == opt &&
					set_key(c, key_find(opt_keys[i].key), optarg, sub,
						sizeof(sub)) != 0)
				goto bad;
		if (opt == OPT_IMPAIR && opt_impair(c, optarg, sub, sizeof(sub)) != 0)
			goto bad;
		for (i = 0; i < RTE_DIM(opt_port_keys); i++) {
			if (opt_port_keys[i].opt != opt)
				continue;
			c->nb_ports = RTE_MAX(c->nb_ports, 1);
			if (set_port_key(&c->ports[0], opt_port_keys[i].key, optarg, sub,
					sizeof(sub)) != 0)
				goto bad;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return 0;
bad:
	/* The option as the user typed it, then what its key said (--ip: ipv4: ...). */
	for (i = 0; long_opts[i].name != NULL && long_opts[i].val != opt; i++)
		;
	snprintf(err, errlen, "option --%s: %s", long_opts[i].name != NULL ? long_opts[i].name :
			"?", sub);
	return -EINVAL;
}
