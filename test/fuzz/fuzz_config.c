/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: roced's configuration file (app/roced/config.c, `--config FILE`), read
 * as roced reads it: the input is the file (a memfd opened by its /proc path), read by
 * rte_cfgfile_load() and applied over the defaults by roced_conf_apply(), the two halves of
 * roced_conf_load() after its own line-by-line reading (which names the line at fault), and by
 * roced_conf_load() whole; an accepted file is written back and read again by roced_conf_load().
 * Seeds: config/roced.conf and roced-memif.conf, hand-written edge cases, and regress-* (inputs
 * this target once failed on).
 *
 * Invariants: a file rte_cfgfile cannot read is refused; roced_conf_load() accepts nothing the
 * two halves refuse, reads what it accepts as they do, and names the file in its one-line
 * message; roced_conf_apply() returns 0, -EINVAL
 * or -ENOMEM, with a one-line message when it fails; what it accepts is in range (every
 * [roced] key, ports, prefixes, VLAN, impairment specs) and leaves the ports past nb_ports
 * untouched; every [roced] key holds the value of its last occurrence across all [roced]
 * sections, and every port's device the last device= of its sections (a reference model over
 * rte_cfgfile's own view of the file); a file in which rte_cfgfile holds a name or value at
 * its length limit (it may have been cut short) is refused; an accepted configuration written
 * back as a file loads to the same one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_common.h>
#include <rte_log.h>

#include "roced.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_config: %s: ", #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

/* Longest line rte_cfgfile_load() reads (its buffer less the newline and the NUL). */
#define MAX_LINE (CFG_NAME_LEN + CFG_VALUE_LEN + 2)

static int fd = -1;
static char path[64];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* rte_cfgfile logs every rejected line; the fuzzer would print millions. */
	rte_log_set_global_level(RTE_LOG_EMERG);
	fd = memfd_create("fuzz_config", 0);
	if (fd < 0) {
		perror("memfd_create");
		exit(1);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return 0;
}

/* The file's content: written over the last one, then cut to size (no page freed). */
static void
put_file(const void *data, size_t size)
{
	FUZZ_ASSERT(pwrite(fd, data, size, 0) == (ssize_t)size, "%s", strerror(errno));
	FUZZ_ASSERT(ftruncate(fd, size) == 0, "%s", strerror(errno));
}

/* [roced] keys: the reference model's view of struct roced_conf. */
enum kind { K_STR, K_U16, K_U32 };

static const struct {
	const char *name;
	enum kind kind;
	size_t off;
} keys[] = {
	{ "socket", K_STR, offsetof(struct roced_conf, socket) },
	{ "log_level", K_STR, offsetof(struct roced_conf, log_level) },
	{ "workers", K_U16, offsetof(struct roced_conf, nb_workers) },
	{ "mtu", K_U16, offsetof(struct roced_conf, mtu) },
	{ "mbufs", K_U32, offsetof(struct roced_conf, nb_mbufs) },
	{ "mbuf_size", K_U16, offsetof(struct roced_conf, mbuf_size) },
	{ "max_qps", K_U32, offsetof(struct roced_conf, max_qps) },
	{ "idle_sleep_us", K_U32, offsetof(struct roced_conf, idle_sleep_us) },
};

/* What rte_cfgfile made of the file: the last value of each key, names at their limit. */
struct model {
	int at_limit;                         /* a name or value of the longest length */
	char last[RTE_DIM(keys)][CFG_VALUE_LEN];
	char device[ROCE_DP_MAX_PORTS][CFG_VALUE_LEN];
};

/* "portN" as config.c reads it (strtoull base 0, no sign), or -1. */
static int
port_of(const char *sect)
{
	char *end;
	unsigned long long v;

	if (strncmp(sect, "port", 4) != 0 || sect[4] == '\0' || sect[4] == '-')
		return -1;
	errno = 0;
	v = strtoull(sect + 4, &end, 0);
	return errno != 0 || *end != '\0' || v >= ROCE_DP_MAX_PORTS ? -1 : (int)v;
}

static void
model_load(struct model *m, struct rte_cfgfile *cf)
{
	struct rte_cfgfile_entry *e;
	char sect[CFG_NAME_LEN];
	int s, n, i, port;
	unsigned int k;

	memset(m, 0, sizeof(*m));
	for (s = 0; s < rte_cfgfile_num_sections(cf, NULL, 0); s++) {
		n = rte_cfgfile_section_num_entries_by_index(cf, sect, s);
		e = calloc(RTE_MAX(n, 1), sizeof(*e));
		FUZZ_ASSERT(e != NULL, "calloc");
		n = rte_cfgfile_section_entries_by_index(cf, s, sect, e, n);
		if (strlen(sect) >= CFG_NAME_LEN - 1)
			m->at_limit = 1;
		port = port_of(sect);
		for (i = 0; i < n; i++) {
			if (strlen(e[i].name) >= CFG_NAME_LEN - 1 ||
					strlen(e[i].value) >= CFG_VALUE_LEN - 1)
				m->at_limit = 1;
			if (port >= 0 && strcmp(e[i].name, "device") == 0)
				strcpy(m->device[port], e[i].value);
			if (strcmp(sect, "roced") != 0)
				continue;
			for (k = 0; k < RTE_DIM(keys); k++)
				if (strcmp(e[i].name, keys[k].name) == 0)
					strcpy(m->last[k], e[i].value);
		}
		free(e);
	}
}

static int
str_ok(const char *s, size_t size)
{
	return s[0] != '\0' && strnlen(s, size) < size;
}

static void
check_range(const struct roced_conf *c)
{
	char canon[ROCE_IMPAIR_SPEC_MAX + 1];
	struct roced_conf d;
	unsigned int i, j;

	roced_conf_defaults(&d);
	FUZZ_ASSERT(str_ok(c->socket, sizeof(c->socket)), "socket");
	FUZZ_ASSERT(str_ok(c->log_level, sizeof(c->log_level)), "log_level");
	FUZZ_ASSERT(c->nb_workers >= 1 && c->nb_workers <= ROCE_DP_MAX_WORKERS, "%u",
			c->nb_workers);
	FUZZ_ASSERT(c->mtu >= 576 && c->mtu <= 9216, "%u", c->mtu);
	FUZZ_ASSERT(c->nb_mbufs >= 1024 && c->nb_mbufs <= 1u << 24, "%u", c->nb_mbufs);
	FUZZ_ASSERT(c->mbuf_size >= 2048 && c->mbuf_size <= 10240, "%u", c->mbuf_size);
	FUZZ_ASSERT(c->max_qps >= 1 && c->max_qps <= 1u << 16, "%u", c->max_qps);
	FUZZ_ASSERT(c->idle_sleep_us <= 1000000, "%u", c->idle_sleep_us);
	FUZZ_ASSERT(c->nb_ports <= ROCE_DP_MAX_PORTS, "%u", c->nb_ports);
	for (i = 0; i < ROCE_DP_MAX_PORTS; i++) {
		const struct roced_port_conf *p = &c->ports[i];

		if (i >= c->nb_ports) {
			FUZZ_ASSERT(memcmp(p, &d.ports[i], sizeof(*p)) == 0,
					"port %u past nb_ports %u set", i, c->nb_ports);
			continue;
		}
		FUZZ_ASSERT(p->pfc.mode < ROCE_DP_PFC_NB_MODES && p->pfc.prios != 0 &&
				p->pfc.watchdog_ms <= ROCE_DP_PFC_WATCHDOG_MAX_MS &&
				(p->pfc.high_water == 0 || p->pfc.low_water < p->pfc.high_water),
				"pfc of port %u", i);
		for (j = 0; j < 64; j++)
			FUZZ_ASSERT(p->pfc.dscp2prio[j] < 8, "dscp2prio[%u] %u", j,
					p->pfc.dscp2prio[j]);
		FUZZ_ASSERT(strnlen(p->device, sizeof(p->device)) < sizeof(p->device), "device");
		FUZZ_ASSERT(p->addr.prefix4 <= 32 && p->addr.prefix6 <= 128, "%u %u",
				p->addr.prefix4, p->addr.prefix6);
		FUZZ_ASSERT(p->addr.vlan <= 4094, "%u", p->addr.vlan);
		FUZZ_ASSERT(p->nb_impair <= ROCED_MAX_IMPAIR, "%u", p->nb_impair);
		for (j = 0; j < p->nb_impair; j++)
			FUZZ_ASSERT(roce_impair_format(&p->impair[j], 1, canon, sizeof(canon)) > 0,
					"impair spec %u of port %u does not format", j, i);
	}
}

/* The reference model: each [roced] key as its last occurrence says, or the default. */
static void
check_model(const struct roced_conf *c, const struct model *m)
{
	struct roced_conf d;
	unsigned int k;

	roced_conf_defaults(&d);
	for (k = 0; k < RTE_DIM(keys); k++) {
		const void *got = (const uint8_t *)c + keys[k].off;
		const void *def = (const uint8_t *)&d + keys[k].off;
		uint64_t want, have;

		if (keys[k].kind == K_STR) {
			const char *w = m->last[k][0] != '\0' ? m->last[k] : def;

			FUZZ_ASSERT(strcmp(got, w) == 0, "%s is '%s', the file says '%s'",
					keys[k].name, (const char *)got, w);
			continue;
		}
		if (keys[k].kind == K_U16) {
			have = *(const uint16_t *)got;
			want = *(const uint16_t *)def;
		} else {
			have = *(const uint32_t *)got;
			want = *(const uint32_t *)def;
		}
		if (m->last[k][0] != '\0')
			want = strtoull(m->last[k], NULL, 0);
		FUZZ_ASSERT(have == want, "%s is %lu, the file says '%s'", keys[k].name,
				(unsigned long)have, m->last[k]);
	}
	for (k = 0; k < ROCE_DP_MAX_PORTS; k++)
		FUZZ_ASSERT(strcmp(c->ports[k].device, m->device[k]) == 0,
				"port %u device '%s', the file says '%s'", k, c->ports[k].device,
				m->device[k]);
}

/* Append "key = value\n", with the value's ';' escaped as rte_cfgfile reads them. */
struct out {
	char *buf;
	size_t len, pos;
	int too_long;                         /* a line rte_cfgfile could not read */
};

static void
put_kv(struct out *o, const char *key, const char *val)
{
	size_t start = o->pos;
	int n = snprintf(o->buf + o->pos, o->len - o->pos, "%s = ", key);

	FUZZ_ASSERT(n > 0 && (size_t)n < o->len - o->pos, "output full");
	o->pos += n;
	for (; *val != '\0'; val++) {
		FUZZ_ASSERT(o->pos + 3 < o->len, "output full");
		if (*val == ';')
			o->buf[o->pos++] = '\\';
		o->buf[o->pos++] = *val;
	}
	if (o->pos - start > MAX_LINE)
		o->too_long = 1;
	o->buf[o->pos++] = '\n';
	o->buf[o->pos] = '\0';
}

static void
put_line(struct out *o, const char *line)
{
	int n = snprintf(o->buf + o->pos, o->len - o->pos, "%s\n", line);

	FUZZ_ASSERT(n > 0 && (size_t)n < o->len - o->pos, "output full");
	o->pos += n;
}

static void
put_num(struct out *o, const char *key, unsigned long v)
{
	char s[24];

	snprintf(s, sizeof(s), "%lu", v);
	put_kv(o, key, s);
}

static void
put_addr(struct out *o, const char *key, int af, const void *ip, unsigned int prefix)
{
	char s[INET6_ADDRSTRLEN + 8];

	FUZZ_ASSERT(inet_ntop(af, ip, s, sizeof(s)) != NULL, "inet_ntop");
	if (prefix != 0)
		snprintf(s + strlen(s), sizeof(s) - strlen(s), "/%u", prefix);
	put_kv(o, key, s);
}

/* The configuration as a file roced reads back to the same configuration. */
/* A port's PFC keys, as roced reads them back. */
static void
write_pfc(struct out *o, const struct roce_dp_pfc_conf *pc)
{
	static const char *const modes[] = { "sw", "hw", "off", "auto" };
	char v[64 * 6 + 1], w[32];
	size_t n = 0;
	unsigned int i;

	put_kv(o, "pfc", modes[pc->mode]);
	for (i = 0; i < 8; i++)
		if (pc->prios & (1u << i))
			n += (size_t)snprintf(v + n, sizeof(v) - n, "%s%u", n ? "," : "", i);
	put_kv(o, "pfc_prios", v);
	/* The DSCPs off the default map (DSCP / 8): what the file changed. */
	for (i = 0, n = 0; i < 64; i++)
		if (pc->dscp2prio[i] != i >> 3)
			n += (size_t)snprintf(v + n, sizeof(v) - n, "%s%u:%u", n ? "," : "", i,
					pc->dscp2prio[i]);
	if (n >= CFG_VALUE_LEN - 1)
		o->too_long = 1;
	if (n != 0)
		put_kv(o, "dscp2prio", v);
	put_num(o, "pfc_watchdog_ms", pc->watchdog_ms);
	snprintf(w, sizeof(w), "%u:%u", pc->high_water, pc->low_water);
	put_kv(o, "pfc_water", w);
}

static void
write_conf(const struct roced_conf *c, struct out *o)
{
	char spec[ROCE_IMPAIR_SPEC_MAX + 64], sect[16];
	static const uint8_t none[4];
	unsigned int i, j;

	put_line(o, "[roced]");
	put_kv(o, "socket", c->socket);
	put_kv(o, "log_level", c->log_level);
	put_num(o, "workers", c->nb_workers);
	put_num(o, "mtu", c->mtu);
	put_num(o, "mbufs", c->nb_mbufs);
	put_num(o, "mbuf_size", c->mbuf_size);
	put_num(o, "max_qps", c->max_qps);
	put_num(o, "idle_sleep_us", c->idle_sleep_us);
	for (i = 0; i < c->nb_ports; i++) {
		const struct roced_port_conf *p = &c->ports[i];

		snprintf(sect, sizeof(sect), "[port%u]", i);
		put_line(o, sect);
		if (p->device[0] != '\0')
			put_kv(o, "device", p->device);
		if (p->addr.prefix4 != 0)
			put_addr(o, "ipv4", AF_INET, p->addr.ip4, p->addr.prefix4);
		if (memcmp(p->addr.gw4, none, 4) != 0)
			put_addr(o, "gateway", AF_INET, p->addr.gw4, 0);
		if (p->addr.prefix6 != 0)
			put_addr(o, "ipv6", AF_INET6, p->addr.ip6, p->addr.prefix6);
		put_num(o, "vlan", p->addr.vlan);
		write_pfc(o, &p->pfc);
		for (j = 0; j < p->nb_impair; j++) {
			const struct roce_impair_spec *s = &p->impair[j];

			/*
			 * The canonical form with its target, "port=N,dir=D,...", without port=
			 * when the file had none: roced checks a given port= against the port.
			 */
			FUZZ_ASSERT(roce_impair_format(s, 1, spec, sizeof(spec)) > 0,
					"impair format");
			put_kv(o, "impair", s->has_port ? spec : strchr(spec, ',') + 1);
		}
	}
}

static int
same_spec(const struct roce_impair_spec *a, const struct roce_impair_spec *b)
{
	char x[ROCE_IMPAIR_SPEC_MAX + 1], y[ROCE_IMPAIR_SPEC_MAX + 1];

	roce_impair_format(a, 1, x, sizeof(x));
	roce_impair_format(b, 1, y, sizeof(y));
	return a->has_port == b->has_port && strcmp(x, y) == 0;
}

static void
check_same(const struct roced_conf *a, const struct roced_conf *b, const char *text)
{
	unsigned int i, j;

	FUZZ_ASSERT(strcmp(a->socket, b->socket) == 0 &&
			strcmp(a->log_level, b->log_level) == 0 &&
			a->nb_workers == b->nb_workers && a->mtu == b->mtu &&
			a->nb_mbufs == b->nb_mbufs && a->mbuf_size == b->mbuf_size &&
			a->max_qps == b->max_qps && a->idle_sleep_us == b->idle_sleep_us &&
			a->nb_ports == b->nb_ports, "[roced] differs after writing:\n%s", text);
	for (i = 0; i < a->nb_ports; i++) {
		const struct roced_port_conf *p = &a->ports[i], *q = &b->ports[i];

		FUZZ_ASSERT(strcmp(p->device, q->device) == 0 &&
				memcmp(&p->addr, &q->addr, sizeof(p->addr)) == 0 &&
				memcmp(&p->pfc, &q->pfc, sizeof(p->pfc)) == 0 &&
				p->nb_impair == q->nb_impair,
				"[port%u] differs after writing:\n%s", i, text);
		for (j = 0; j < p->nb_impair; j++)
			FUZZ_ASSERT(same_spec(&p->impair[j], &q->impair[j]),
					"[port%u] impair %u differs after writing:\n%s", i, j, text);
	}
}

/*
 * roced_conf_load() of the same input: it reads the file line by line first and may refuse
 * more than rte_cfgfile (lines it would skip without a word), never less than the two halves;
 * what it accepts is what they give.
 */
static void
check_load(int applied, const struct roced_conf *c)
{
	static struct roced_conf via;
	char err[512];
	int ret;

	roced_conf_defaults(&via);
	memset(err, 0, sizeof(err));
	ret = roced_conf_load(&via, path, err, sizeof(err));
	FUZZ_ASSERT(ret == 0 || ret == -EINVAL || ret == -ENOMEM, "load returned %d", ret);
	if (ret != 0) {
		FUZZ_ASSERT(strncmp(err, path, strlen(path)) == 0 && err[strlen(path)] == ':' &&
				strnlen(err, sizeof(err)) < sizeof(err) &&
				strchr(err, '\n') == NULL, "load's message '%s'", err);
		/* Its own reading names every line rte_cfgfile refuses: never the fallback. */
		FUZZ_ASSERT(strcmp(err + strlen(path), ": rte_cfgfile cannot read it (see its line "
				"above)") != 0,
				"the line-by-line reading missed what rte_cfgfile refuses");
		return;
	}
	FUZZ_ASSERT(applied == 0, "load accepted what rte_cfgfile or apply refuses");
	check_same(c, &via, "(the fuzz input)");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[16384];
	struct roced_conf c, again;
	struct out o = { text, sizeof(text), 0, 0 };
	struct rte_cfgfile *cf;
	static struct model m;
	char err[512];
	int ret;

	put_file(data, size);
	roced_conf_defaults(&c);
	cf = rte_cfgfile_load(path, 0);
	if (cf == NULL) {
		check_load(-EINVAL, &c);
		return 0;
	}
	model_load(&m, cf);
	memset(err, 0, sizeof(err));
	ret = roced_conf_apply(&c, cf, err, sizeof(err));
	rte_cfgfile_close(cf);
	FUZZ_ASSERT(ret == 0 || ret == -EINVAL || ret == -ENOMEM, "returned %d", ret);
	check_load(ret, &c);
	if (ret != 0) {
		FUZZ_ASSERT(err[0] != '\0' && strnlen(err, sizeof(err)) < sizeof(err) &&
				strchr(err, '\n') == NULL, "message '%s'", err);
		return 0;
	}
	FUZZ_ASSERT(!m.at_limit, "accepted a name or value rte_cfgfile may have cut short");
	check_range(&c);
	check_model(&c, &m);

	write_conf(&c, &o);
	if (o.too_long)
		return 0;
	put_file(text, o.pos);
	roced_conf_defaults(&again);
	ret = roced_conf_load(&again, path, err, sizeof(err));
	FUZZ_ASSERT(ret == 0, "written back, it is refused (%s):\n%s", err, text);
	check_same(&c, &again, text);
	return 0;
}
