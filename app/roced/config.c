/* SPDX-License-Identifier: BSD-3-Clause */
/* roced configuration: an INI file (rte_cfgfile) and the options after "--". */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_common.h>

#include "roced.h"

/* PFC of a port: as roce_dp_pfc_conf_defaults() (written out: this file links alone). */
static void
pfc_defaults(struct roce_dp_pfc_conf *pc)
{
	unsigned int d;

	memset(pc, 0, sizeof(*pc));
	pc->mode = ROCE_DP_PFC_AUTO;
	pc->prios = 0xff;
	for (d = 0; d < 64; d++)
		pc->dscp2prio[d] = (uint8_t)(d >> 3);
	pc->watchdog_ms = ROCE_DP_PFC_WATCHDOG_MS;
}

void
roced_conf_defaults(struct roced_conf *c)
{
	unsigned int p;

	memset(c, 0, sizeof(*c));
	for (p = 0; p < ROCE_DP_MAX_PORTS; p++)
		pfc_defaults(&c->ports[p].pfc);
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

/* Digits and ranges of priorities 0-7, comma-separated. */
int
roced_parse_prios(const char *s, uint8_t *mask)
{
	uint8_t m = 0;

	for (;;) {
		unsigned int lo, hi;

		if (s[0] < '0' || s[0] > '7')
			return -EINVAL;
		lo = hi = (unsigned int)(s[0] - '0');
		s++;
		if (s[0] == '-') {
			if (s[1] < '0' || s[1] > '7' || (unsigned int)(s[1] - '0') < lo)
				return -EINVAL;
			hi = (unsigned int)(s[1] - '0');
			s += 2;
		}
		while (lo <= hi)
			m |= (uint8_t)(1u << lo++);
		if (s[0] == '\0')
			break;
		if (s[0] != ',')
			return -EINVAL;
		s++;
	}
	*mask = m;
	return 0;
}

int
roced_parse_dscp2prio(const char *s, uint8_t map[64])
{
	uint8_t m[64];

	memcpy(m, map, sizeof(m));
	for (;;) {
		char *end;
		unsigned long d, p;

		if (s[0] < '0' || s[0] > '9')
			return -EINVAL;
		errno = 0;
		d = strtoul(s, &end, 10);
		if (errno != 0 || d > 63 || end[0] != ':' || end[1] < '0' || end[1] > '7')
			return -EINVAL;
		p = (unsigned long)(end[1] - '0');
		m[d] = (uint8_t)p;
		s = end + 2;
		if (s[0] == '\0')
			break;
		if (s[0] != ',')
			return -EINVAL;
		s++;
	}
	memcpy(map, m, sizeof(m));
	return 0;
}

/* pfc_water = HIGH:LOW, in the PMD's unit. */
static int
parse_water(const char *s, struct roce_dp_pfc_conf *pc)
{
	char buf[32], *colon;
	uint64_t hi, lo;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (colon == NULL)
		return -EINVAL;
	*colon = '\0';
	if (parse_uint(buf, 0, UINT32_MAX, &hi) != 0 || parse_uint(colon + 1, 0, UINT32_MAX,
			&lo) != 0 || (hi != 0 && lo >= hi))
		return -EINVAL;
	pc->high_water = (uint32_t)hi;
	pc->low_water = (uint32_t)lo;
	return 0;
}

/* A PFC key of a port (pfc, pfc_prios, dscp2prio, pfc_watchdog_ms, pfc_water); 1: not one. */
static int
set_pfc_key(struct roce_dp_pfc_conf *pc, const char *name, const char *val)
{
	static const char *const modes[ROCE_DP_PFC_NB_MODES] = { "sw", "hw", "off", "auto" };
	uint64_t v;
	unsigned int i;

	if (strcmp(name, "pfc") == 0) {
		for (i = 0; i < ROCE_DP_PFC_NB_MODES; i++)
			if (strcmp(val, modes[i]) == 0) {
				pc->mode = (uint8_t)i;
				return 0;
			}
		return -EINVAL;
	}
	if (strcmp(name, "pfc_prios") == 0)
		return roced_parse_prios(val, &pc->prios);
	if (strcmp(name, "dscp2prio") == 0)
		return roced_parse_dscp2prio(val, pc->dscp2prio);
	if (strcmp(name, "pfc_watchdog_ms") == 0) {
		if (parse_uint(val, 0, ROCE_DP_PFC_WATCHDOG_MAX_MS, &v) != 0)
			return -EINVAL;
		pc->watchdog_ms = (uint32_t)v;
		return 0;
	}
	if (strcmp(name, "pfc_water") == 0)
		return parse_water(val, pc);
	return 1;
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
			snprintf(err, errlen, "empty or longer than %zu bytes", k->size - 1);
			return -EINVAL;
		}
		strcpy(dst, val);
		return 0;
	}
	if (parse_uint(val, k->min, k->max, &v) != 0) {
		snprintf(err, errlen, "'%s' is not a number in %lu..%lu", val,
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
		snprintf(err, errlen, "more than %d specs for one port", ROCED_MAX_IMPAIR);
		return -EINVAL;
	}
	if (roce_impair_parse(val, &p->impair[p->nb_impair], sub, sizeof(sub)) != 0) {
		snprintf(err, errlen, "%s", sub);
		return -EINVAL;
	}
	p->nb_impair++;
	return 0;
}

#define ROCED_KEYS "socket, log_level, workers, mtu, mbufs, mbuf_size, max_qps, idle_sleep_us"
#define PORT_KEYS "device, ipv4, ipv6, gateway, vlan, impair, pfc, pfc_prios, dscp2prio, " \
	"pfc_watchdog_ms, pfc_water, tx_copy, tx_zc_min, queues"

/*
 * A port key: device, ipv4, gateway, ipv6, vlan, impair, and the PFC ones. @return 0, -EINVAL
 * with what is wrong with the value in @err, or -ENOENT for a key that is none of them.
 */
static int
set_port_key(struct roced_port_conf *p, const char *name, const char *val, char *err,
		size_t errlen)
{
	struct roce_dp_addr *a = &p->addr;
	uint64_t v;
	int ret;

	if (strcmp(name, "device") == 0) {
		if (strlen(val) >= sizeof(p->device) || val[0] == '\0') {
			snprintf(err, errlen, "empty or longer than %zu bytes",
					sizeof(p->device) - 1);
			return -EINVAL;
		}
		strcpy(p->device, val);
	} else if (strcmp(name, "ipv4") == 0 || strcmp(name, "ipv6") == 0) {
		int v4 = name[3] == '4';

		/* Without a prefix the address would be a /32 (/128): no neighbour on-link. */
		if (strchr(val, '/') == NULL) {
			snprintf(err, errlen, "'%s' needs a prefix length (e.g. %s/%s)", val, val,
					v4 ? "24" : "64");
			return -EINVAL;
		}
		if ((v4 ? roced_parse_ip4(val, a->ip4, &a->prefix4) :
				roced_parse_ip6(val, a->ip6, &a->prefix6)) != 0) {
			snprintf(err, errlen, "'%s' is not an %s address and prefix length "
					"(e.g. %s)", val, v4 ? "IPv4" : "IPv6",
					v4 ? "10.0.0.1/24" : "fd00::1/64");
			return -EINVAL;
		}
	} else if (strcmp(name, "gateway") == 0) {
		if (strchr(val, '/') != NULL || roced_parse_ip4(val, a->gw4, NULL) != 0) {
			snprintf(err, errlen, "'%s' is not an IPv4 address (e.g. 10.0.0.254)", val);
			return -EINVAL;
		}
	} else if (strcmp(name, "vlan") == 0) {
		if (parse_uint(val, 0, 4094, &v) != 0) {
			snprintf(err, errlen, "'%s' is not a VLAN ID in 0..4094", val);
			return -EINVAL;
		}
		a->vlan = (uint16_t)v;
	} else if (strcmp(name, "impair") == 0) {
		return add_impair(p, val, err, errlen);
	} else if (strcmp(name, "tx_copy") == 0) {
		static const char *const modes[] = { "auto", "always", "never" };

		for (v = 0; v < RTE_DIM(modes) && strcmp(val, modes[v]) != 0; v++)
			;
		if (v == RTE_DIM(modes)) {
			snprintf(err, errlen, "'%s' is not auto, always or never", val);
			return -EINVAL;
		}
		p->tx_copy = (uint8_t)v;
	} else if (strcmp(name, "tx_zc_min") == 0) {
		if (parse_uint(val, 1, 65536, &v) != 0) {
			snprintf(err, errlen, "'%s' is not a payload length in 1..65536", val);
			return -EINVAL;
		}
		p->tx_zc_min = (uint32_t)v;
	} else if (strcmp(name, "queues") == 0) {
		if (parse_uint(val, 1, ROCE_DP_MAX_WORKERS, &v) != 0) {
			snprintf(err, errlen, "'%s' is not a queue count in 1..%d", val,
					ROCE_DP_MAX_WORKERS);
			return -EINVAL;
		}
		p->queues = (uint16_t)v;
	} else if ((ret = set_pfc_key(&p->pfc, name, val)) != 1) {
		if (ret != 0)
			snprintf(err, errlen, "'%s' is not %s", val,
					strcmp(name, "pfc") == 0 ? "auto, hw, sw or off" :
					strcmp(name, "pfc_prios") == 0 ?
					"a list of priorities 0-7 (3, 3,4, 0-7)" :
					strcmp(name, "dscp2prio") == 0 ?
					"DSCP:PRIO pairs, DSCP 0-63, priority 0-7 (26:3,48:6)" :
					strcmp(name, "pfc_watchdog_ms") == 0 ? "a time in ms, 0-8000" :
					"HIGH:LOW in the PMD's unit, LOW below HIGH");
		return ret;
	} else {
		return -ENOENT;
	}
	return 0;
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

/*
 * Section @index of @cf: [roced] or [portN]. A section given twice continues where it was.
 * On an error, *@bad_entry is the entry at fault (-1: the section itself).
 */
static int
load_section(struct roced_conf *c, struct rte_cfgfile *cf, int index, int *bad_entry, char *err,
		size_t errlen)
{
	char sect[CFG_NAME_LEN], sub[256];
	int n = rte_cfgfile_section_num_entries_by_index(cf, sect, index), i, port = -1;
	struct rte_cfgfile_entry *e;
	uint64_t v;

	*bad_entry = -1;
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
		snprintf(err, errlen, "unknown section [%s] (the sections are [roced] and "
				"[port0]..[port%d])", sect, ROCE_DP_MAX_PORTS - 1);
		free(e);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		const struct key *k = port < 0 ? key_find(e[i].name) : NULL;
		int ret;

		if (too_long(e[i].name, CFG_NAME_LEN)) {
			snprintf(err, errlen, "[%s] key '%.20s...' longer than %d bytes", sect,
					e[i].name, CFG_NAME_LEN - 2);
			ret = -EINVAL;
		} else if (too_long(e[i].value, CFG_VALUE_LEN)) {
			snprintf(err, errlen, "[%s] %s: value longer than %d bytes", sect, e[i].name,
					CFG_VALUE_LEN - 2);
			ret = -EINVAL;
		} else {
			ret = port >= 0 ? set_port_key(&c->ports[port], e[i].name, e[i].value, sub,
					sizeof(sub)) : k == NULL ? -ENOENT :
				set_key(c, k, e[i].value, sub, sizeof(sub));
			if (ret == -ENOENT)
				snprintf(err, errlen, "[%s] unknown key '%s' (the keys of [%s] are %s)",
						sect, e[i].name, port >= 0 ? "portN" : "roced",
						port >= 0 ? PORT_KEYS : ROCED_KEYS);
			else if (ret != 0)
				snprintf(err, errlen, "[%s] %s: %s", sect, e[i].name, sub);
			ret = ret == -ENOENT ? -EINVAL : ret;
		}
		if (ret != 0) {
			*bad_entry = i;
			free(e);
			return ret;
		}
	}
	free(e);
	return 0;
}

/* Apply every section; on an error, which section and entry (see load_section). */
static int
conf_apply(struct roced_conf *c, struct rte_cfgfile *cf, int *bad_sect, int *bad_entry,
		char *err, size_t errlen)
{
	int n = rte_cfgfile_num_sections(cf, NULL, 0), i, ret = 0;

	for (i = 0; i < n && ret == 0; i++) {
		ret = load_section(c, cf, i, bad_entry, err, errlen);
		*bad_sect = i;
	}
	return ret;
}

int
roced_conf_apply(struct roced_conf *c, struct rte_cfgfile *cf, char *err, size_t errlen)
{
	int s, e;

	return conf_apply(c, cf, &s, &e, err, errlen);
}

/* Longest line rte_cfgfile_load() reads whole (its buffer less the newline and the NUL). */
#define MAX_LINE (CFG_NAME_LEN + CFG_VALUE_LEN + 2)

/* Leading and trailing white space off, as rte_cfgfile strips them. */
static char *
strip(char *s, size_t *len)
{
	while (*len > 0 && isspace((unsigned char)s[*len - 1]))
		s[--*len] = '\0';
	while (*len > 0 && isspace((unsigned char)*s)) {
		s++;
		--*len;
	}
	return s;
}

/*
 * Read @f line by line as rte_cfgfile_load() does (a ; not after a backslash starts a comment,
 * [section], key = value), naming the first line it would refuse or silently skip: longer than
 * its buffer, a NUL byte, [ without ], an empty value, a key before any section, a line that is
 * none of these (rte_cfgfile skips those without a word: "mtu 9000" would do nothing).
 * With @want_sect >= 0, find instead the line of that section's header (@want_entry < 0) or of
 * its entry @want_entry, counted as rte_cfgfile counts them.
 * @return the line number found, 0 for a file without a fault, or -EINVAL with @err set.
 */
static int
conf_scan(FILE *f, int want_sect, int want_entry, char *err, size_t errlen)
{
	int lineno = 0, sect = -1, entry = 0, ret = 0;
	char *buf = NULL, *line, *eq, *key, *val;
	size_t cap = 0, len, klen, vlen;
	ssize_t n;

	while (ret == 0 && (n = getline(&buf, &cap, f)) > 0) {
		lineno++;
		len = (size_t)n;
		if (memchr(buf, '\0', len) != NULL) {
			snprintf(err, errlen, "line %d: a NUL byte (not a text file)", lineno);
			ret = -EINVAL;
			break;
		}
		if (len - (buf[len - 1] == '\n') > MAX_LINE) {
			snprintf(err, errlen, "line %d: longer than %d bytes", lineno, MAX_LINE);
			ret = -EINVAL;
			break;
		}
		line = memchr(buf, ';', len);
		if (line != NULL && (line == buf || line[-1] != '\\')) {
			*line = '\0';
			len = (size_t)(line - buf);
		}
		line = strip(buf, &len);
		if (len == 0)
			continue;
		if (line[0] == '[') {
			if (memchr(line, ']', len) == NULL) {
				snprintf(err, errlen, "line %d: '%.40s' has no closing ']'", lineno,
						line);
				ret = -EINVAL;
			}
			sect++;
			entry = 0;
			if (ret == 0 && sect == want_sect && want_entry < 0)
				ret = lineno;
			continue;
		}
		eq = memchr(line, '=', len);
		if (line[0] == '#') {
			/* rte_cfgfile would skip it, or read "# a = b" as a key named "# a". */
			snprintf(err, errlen, "line %d: comments start with ';' here, not '#'",
					lineno);
			ret = -EINVAL;
			break;
		}
		if (eq == NULL) {
			snprintf(err, errlen, "line %d: '%.40s' is neither [section], key = value "
					"nor a ; comment", lineno, line);
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		klen = (size_t)(eq - line);
		vlen = len - klen - 1;
		key = strip(line, &klen);
		val = strip(eq + 1, &vlen);
		if (klen == 0)
			snprintf(err, errlen, "line %d: '=' without a key before it", lineno);
		else if (vlen == 0)
			snprintf(err, errlen, "line %d: %.40s has no value (give one, or comment the "
					"line out with ;)", lineno, key);
		else if (sect < 0)
			snprintf(err, errlen, "line %d: %.40s = %.40s before any [section] (put it "
					"under [roced] or [portN])", lineno, key, val);
		if (klen == 0 || vlen == 0 || sect < 0) {
			ret = -EINVAL;
			break;
		}
		if (sect == want_sect && entry == want_entry)
			ret = lineno;
		entry++;
	}
	free(buf);
	return ret;
}

/* Line of entry @entry of section @sect (-1: its header) in @path, or 0. */
static int
conf_line(const char *path, int sect, int entry)
{
	FILE *f = fopen(path, "r");
	char err[8];
	int line;

	if (f == NULL)
		return 0;
	line = conf_scan(f, sect, entry, err, sizeof(err));
	fclose(f);
	return line > 0 ? line : 0;
}

int
roced_conf_load(struct roced_conf *c, const char *path, char *err, size_t errlen)
{
	struct rte_cfgfile *cf;
	FILE *f = fopen(path, "r");
	int ret, sect = -1, entry = -1, line;
	char sub[400];

	if (f == NULL) {
		snprintf(err, errlen, "%s: cannot read the file: %s", path, strerror(errno));
		return -EINVAL;
	}
	ret = conf_scan(f, -1, -1, sub, sizeof(sub));
	fclose(f);
	if (ret < 0) {
		snprintf(err, errlen, "%s: %s", path, sub);
		return -EINVAL;
	}
	cf = rte_cfgfile_load(path, 0);
	if (cf == NULL) {
		snprintf(err, errlen, "%s: rte_cfgfile cannot read it (see its line above)", path);
		return -EINVAL;
	}
	ret = conf_apply(c, cf, &sect, &entry, sub, sizeof(sub));
	rte_cfgfile_close(cf);
	if (ret == 0)
		return 0;
	line = conf_line(path, sect, entry);
	if (line > 0)
		snprintf(err, errlen, "%s: line %d: %s", path, line, sub);
	else
		snprintf(err, errlen, "%s: %s", path, sub);
	return ret;
}

#define OPT_IMPAIR 256
#define OPT_MBUF_SIZE 257
#define OPT_TX_COPY 258
#define OPT_TX_ZC_MIN 259
#define OPT_QUEUES 260

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
	{ "tx-copy", required_argument, NULL, OPT_TX_COPY },
	{ "tx-zc-min", required_argument, NULL, OPT_TX_ZC_MIN },
	{ "queues", required_argument, NULL, OPT_QUEUES },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * Every option with a letter: the same as long_opts, as --help lists them. The leading ':'
 * makes getopt quiet and tell a missing value (':') from an unknown option ('?').
 */
static const char short_opts[] = ":c:s:w:p:i:6:g:m:I:Q:L:h";

/* The option getopt_long() just refused, as typed. */
static void
bad_option(int opt, char **argv, char *err, size_t errlen)
{
	const char *typed = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };

	/* A short option inside a group (-xyz) is not argv[optind - 1] itself. */
	if (optopt != 0 && strncmp(typed, "--", 2) != 0)
		typed = shortopt;
	if (opt == ':')
		snprintf(err, errlen, "option %s needs a value (roced -- --help lists the "
				"options)", typed);
	else
		snprintf(err, errlen, "unknown option '%s' (roced -- --help lists roced's "
				"options; EAL options go before --)", typed);
}

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
	{ OPT_TX_COPY, "tx_copy" }, { OPT_TX_ZC_MIN, "tx_zc_min" }, { OPT_QUEUES, "queues" },
};

/* --impair SPEC: the spec's port= (default 0) says which port. */
static int
opt_impair(struct roced_conf *c, const char *val, char *err, size_t errlen)
{
	struct roce_impair_spec s;
	char sub[200];

	if (roce_impair_parse(val, &s, sub, sizeof(sub)) != 0) {
		snprintf(err, errlen, "%s", sub);
		return -EINVAL;
	}
	if (s.port >= ROCE_DP_MAX_PORTS) {
		snprintf(err, errlen, "port=%u: ports are 0..%d", s.port, ROCE_DP_MAX_PORTS - 1);
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
		if (opt == '?' || opt == ':') {
			bad_option(opt, argv, err, errlen);
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
		snprintf(err, errlen, "unexpected argument '%s' (roced's options take no "
				"positional arguments; EAL options go before --)", argv[optind]);
		return -EINVAL;
	}
	return 0;
bad:
	/* The option by its long name, then what is wrong with its value. */
	for (i = 0; long_opts[i].name != NULL && long_opts[i].val != opt; i++)
		;
	snprintf(err, errlen, "option --%s: %s", long_opts[i].name != NULL ? long_opts[i].name :
			"?", sub);
	return -EINVAL;
}
