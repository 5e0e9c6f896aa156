/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The impairment spec string: comma-separated key=value items, values with ':'-separated
 * fields. Outside input (command line, configuration file, control socket): every number is
 * range-checked, nothing is accepted silently, and each error names its key.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impair_private.h"

#define MAX_FIELDS 4
#define DEF_SEED 1
#define DEF_DEPTH 3
#define DEF_REORDER_TIMEOUT_NS 1000000ull
#define DEF_BURST 65536
#define DEF_BNECK_BUFFER (256u << 10)
#define MAX_BNECK_BUFFER (64u << 20)
#define DEF_PFC_PRIOS 0xff
#define DEF_PFC_QUANTA 65535
#define MIN_RATE 1000ull
#define MAX_RATE 10000000000000ull  /* 10 Tbit/s */

void
roce_impair_spec_init(struct roce_impair_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->dirs = ROCE_IMPAIR_DIR_RX;
	spec->seed = DEF_SEED;
	spec->ge_h = 1;
	spec->reorder_depth = DEF_DEPTH;
	spec->reorder_timeout_ns = DEF_REORDER_TIMEOUT_NS;
	spec->rate_burst = DEF_BURST;
	spec->bneck_buffer = DEF_BNECK_BUFFER;
	spec->pfc_prios = DEF_PFC_PRIOS;
	spec->pfc_quanta = DEF_PFC_QUANTA;
}

static int
ge_active(const struct roce_impair_spec *s)
{
	return s->ge_p > 0 || s->ge_k > 0;
}

int
roce_impair_spec_active(const struct roce_impair_spec *s)
{
	return s->loss > 0 || ge_active(s) || s->reorder > 0 || s->dup > 0 || s->delay_ns > 0 ||
		s->jitter_ns > 0 || s->ecn > 0 || s->rate_bps > 0 || s->bneck_bps > 0;
}

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A non-negative decimal (no sign, no hex, no inf/nan) and what follows it. */
static int
parse_real(const char *s, double *v, const char **rest)
{
	char *end;

	if (!isdigit((unsigned char)s[0]) && !(s[0] == '.' && isdigit((unsigned char)s[1])))
		return -EINVAL;
	/* strtod would take hex floats: digits and one dot and an exponent only. */
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	if (errno != 0 || !isfinite(*v) || *v < 0)
		return -EINVAL;
	*rest = end;
	return 0;
}

/* 0..1, or 0%..100%. */
static int
parse_prob(const char *s, double *p)
{
	const char *rest;

	if (parse_real(s, p, &rest) != 0)
		return -EINVAL;
	if (strcmp(rest, "%") == 0)
		*p /= 100;
	else if (*rest != '\0')
		return -EINVAL;
	return *p <= 1 ? 0 : -EINVAL;
}

/* NUMBER[ns|us|ms|s], bare: microseconds. */
static int
parse_time(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = { { "", 1e3 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	const char *rest;
	unsigned int i;
	double v;

	if (parse_real(s, &v, &rest) != 0)
		return -EINVAL;
	for (i = 0; i < RTE_DIM(units); i++) {
		if (strcmp(rest, units[i].unit) != 0)
			continue;
		v *= units[i].mult;
		if (v > (double)ROCE_IMPAIR_MAX_DELAY_NS)
			return -EINVAL;
		*ns = (uint64_t)llround(v);
		return 0;
	}
	return -EINVAL;
}

/* NUMBER[k|m|g|t] bit/s (powers of 1000). */
static int
parse_rate(const char *s, uint64_t *bps)
{
	static const char suffixes[] = "kmgt";
	const char *rest, *p;
	double v;

	if (parse_real(s, &v, &rest) != 0)
		return -EINVAL;
	if (*rest != '\0') {
		p = strchr(suffixes, tolower((unsigned char)*rest));
		if (p == NULL || rest[1] != '\0')
			return -EINVAL;
		v *= pow(1000, (double)(p - suffixes + 1));
	}
	if (v < (double)MIN_RATE || v > (double)MAX_RATE)
		return -EINVAL;
	*bps = (uint64_t)llround(v);
	return 0;
}

/* An integer with an optional k or m suffix (powers of 1024), in [min, max]. */
static int
parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	unsigned int shift = 0;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
	if (errno != 0)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'm' || *end == 'M')
		shift = 20;
	if (shift != 0)
		end++;
	if (*end != '\0' || *v > max >> shift)
		return -EINVAL;
	*v <<= shift;
	return *v >= min ? 0 : -EINVAL;
}

/* Split @val at ':' into at most MAX_FIELDS non-empty fields; @return how many, or -1. */
static int
split_fields(char *val, char **f)
{
	int n = 0;

	for (;;) {
		char *c = strchr(val, ':');

		if (n == MAX_FIELDS)
			return -1;
		if (c != NULL)
			*c = '\0';
		if (*val == '\0')
			return -1;
		f[n++] = val;
		if (c == NULL)
			return n;
		val = c + 1;
	}
}

static int
key_dir(struct roce_impair_spec *s, char **f, int n)
{
	if (n != 1)
		return -EINVAL;
	if (strcmp(f[0], "rx") == 0)
		s->dirs = ROCE_IMPAIR_DIR_RX;
	else if (strcmp(f[0], "tx") == 0)
		s->dirs = ROCE_IMPAIR_DIR_TX;
	else if (strcmp(f[0], "both") == 0)
		s->dirs = ROCE_IMPAIR_DIR_RX | ROCE_IMPAIR_DIR_TX;
	else
		return -EINVAL;
	return 0;
}

static int
key_port(struct roce_impair_spec *s, char **f, int n)
{
	uint64_t v;

	if (n != 1 || parse_size(f[0], 0, UINT16_MAX, &v) != 0 || strpbrk(f[0], "kKmM"))
		return -EINVAL;
	s->port = (uint16_t)v;
	s->has_port = 1;
	return 0;
}

static int
key_seed(struct roce_impair_spec *s, char **f, int n)
{
	char *end;

	if (n != 1 || !isdigit((unsigned char)f[0][0]))
		return -EINVAL;
	errno = 0;
	s->seed = strtoull(f[0], &end, f[0][0] == '0' && (f[0][1] == 'x' || f[0][1] == 'X') ?
			16 : 10);
	return errno != 0 || *end != '\0' ? -EINVAL : 0;
}

static int
key_loss(struct roce_impair_spec *s, char **f, int n)
{
	return n == 1 ? parse_prob(f[0], &s->loss) : -EINVAL;
}

static int
key_dup(struct roce_impair_spec *s, char **f, int n)
{
	return n == 1 ? parse_prob(f[0], &s->dup) : -EINVAL;
}

static int
key_ecn(struct roce_impair_spec *s, char **f, int n)
{
	return n == 1 ? parse_prob(f[0], &s->ecn) : -EINVAL;
}

/* ge=p:r[:h[:k]] */
static int
key_ge(struct roce_impair_spec *s, char **f, int n)
{
	double *dst[MAX_FIELDS] = { &s->ge_p, &s->ge_r, &s->ge_h, &s->ge_k };
	int i;

	if (n < 2)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (parse_prob(f[i], dst[i]) != 0)
			return -EINVAL;
	return 0;
}

/* reorder=prob[:depth[:timeout]] */
static int
key_reorder(struct roce_impair_spec *s, char **f, int n)
{
	uint64_t v;

	if (n > 3 || parse_prob(f[0], &s->reorder) != 0)
		return -EINVAL;
	if (n > 1) {
		if (parse_size(f[1], 1, ROCE_IMPAIR_MAX_DEPTH, &v) != 0 || strpbrk(f[1], "kKmM"))
			return -EINVAL;
		s->reorder_depth = (uint16_t)v;
	}
	if (n > 2 && (parse_time(f[2], &s->reorder_timeout_ns) != 0 ||
			s->reorder_timeout_ns == 0))
		return -EINVAL;
	return 0;
}

/* delay=time[:jitter] */
static int
key_delay(struct roce_impair_spec *s, char **f, int n)
{
	if (n > 2 || parse_time(f[0], &s->delay_ns) != 0)
		return -EINVAL;
	if (n > 1 && parse_time(f[1], &s->jitter_ns) != 0)
		return -EINVAL;
	return s->delay_ns + s->jitter_ns <= ROCE_IMPAIR_MAX_DELAY_NS ? 0 : -EINVAL;
}

/* rate=bits[:burst] */
static int
key_rate(struct roce_impair_spec *s, char **f, int n)
{
	uint64_t v;

	if (n > 2 || parse_rate(f[0], &s->rate_bps) != 0)
		return -EINVAL;
	if (n > 1) {
		if (parse_size(f[1], 64, 64u << 20, &v) != 0)
			return -EINVAL;
		s->rate_burst = (uint32_t)v;
	}
	return 0;
}

/* bneck=rate[:buffer] */
static int
key_bneck(struct roce_impair_spec *s, char **f, int n)
{
	uint64_t v;

	if (n > 2 || parse_rate(f[0], &s->bneck_bps) != 0)
		return -EINVAL;
	if (n > 1) {
		if (parse_size(f[1], 1024, MAX_BNECK_BUFFER, &v) != 0)
			return -EINVAL;
		s->bneck_buffer = (uint32_t)v;
	}
	return 0;
}

/* red=kmin:kmax:pmax (kmin <= kmax, kmax > 0; bounded by the buffer once all is parsed) */
static int
key_red(struct roce_impair_spec *s, char **f, int n)
{
	uint64_t lo, hi;

	if ((n != 3 && n != 4) || parse_size(f[0], 0, MAX_BNECK_BUFFER, &lo) != 0 ||
			parse_size(f[1], 1, MAX_BNECK_BUFFER, &hi) != 0 || lo > hi ||
			parse_prob(f[2], &s->red_pmax) != 0)
		return -EINVAL;
	if (n == 4 && strcmp(f[3], "deq") != 0 && strcmp(f[3], "enq") != 0)
		return -EINVAL;
	s->red_deq = n == 4 && strcmp(f[3], "deq") == 0;
	s->red_kmin = (uint32_t)lo;
	s->red_kmax = (uint32_t)hi;
	return 0;
}

/* lossless=xoff:xon[:prios[:quanta]] (xon < xoff; xoff below the buffer, checked later) */
static int
key_lossless(struct roce_impair_spec *s, char **f, int n)
{
	uint64_t off, on, v;

	if (parse_size(f[0], 1, MAX_BNECK_BUFFER, &off) != 0 || n < 2 ||
			parse_size(f[1], 0, MAX_BNECK_BUFFER, &on) != 0 || on >= off)
		return -EINVAL;
	if (n > 2) {
		if (parse_size(f[2], 1, 0xff, &v) != 0 || strpbrk(f[2], "kKmM"))
			return -EINVAL;
		s->pfc_prios = (uint8_t)v;
	}
	if (n > 3) {
		if (parse_size(f[3], 1, 0xffff, &v) != 0 || strpbrk(f[3], "kKmM"))
			return -EINVAL;
		s->pfc_quanta = (uint16_t)v;
	}
	s->pfc_xoff = (uint32_t)off;
	s->pfc_xon = (uint32_t)on;
	return 0;
}

/* bneck_to=addr[/len]: an IPv4 or IPv6 address or prefix (given whole: IPv6 has colons) */
static int
key_bneck_to(struct roce_impair_spec *s, char **f, int n)
{
	char addr[INET6_ADDRSTRLEN];
	const char *slash = strchr(f[0], '/');
	size_t alen = slash != NULL ? (size_t)(slash - f[0]) : strlen(f[0]);
	uint64_t len;

	if (n != 1 || alen == 0 || alen >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, f[0], alen);
	addr[alen] = '\0';
	memset(s->bneck_to, 0, sizeof(s->bneck_to));
	if (inet_pton(AF_INET, addr, s->bneck_to) == 1)
		s->bneck_to_fam = 4;
	else if (inet_pton(AF_INET6, addr, s->bneck_to) == 1)
		s->bneck_to_fam = 6;
	else
		return -EINVAL;
	s->bneck_to_len = s->bneck_to_fam == 4 ? 32 : 128;
	if (slash != NULL) {
		char *end;

		if (!isdigit((unsigned char)slash[1]))
			return -EINVAL;
		errno = 0;
		len = strtoull(slash + 1, &end, 10);
		if (errno != 0 || *end != '\0' || len > s->bneck_to_len)
			return -EINVAL;
		s->bneck_to_len = (uint8_t)len;
	}
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(struct roce_impair_spec *s, char **f, int n);
	const char *expect;
	int whole;      /* the value is one field, colons and all */
} keys[] = {
	{ "port", key_port, "a port index 0-65535", 0 },
	{ "dir", key_dir, "rx, tx or both", 0 },
	{ "seed", key_seed, "an unsigned 64-bit integer", 0 },
	{ "loss", key_loss, "a probability (0..1 or 0%..100%)", 0 },
	{ "ge", key_ge, "p:r[:h[:k]], four probabilities", 0 },
	{ "reorder", key_reorder, "prob[:depth 1-64[:timeout]]", 0 },
	{ "dup", key_dup, "a probability (0..1 or 0%..100%)", 0 },
	{ "delay", key_delay, "time[:jitter], ns/us/ms/s (bare: us), together at most 1 s", 0 },
	{ "ecn", key_ecn, "a probability (0..1 or 0%..100%)", 0 },
	{ "rate", key_rate, "bits[:burst], k/m/g/t bit/s from 1k to 10t, burst 64 B-64 MiB",
		0 },
	{ "bneck", key_bneck, "rate[:buffer], k/m/g/t bit/s from 1k to 10t, buffer 1 KiB-64 "
		"MiB", 0 },
	{ "red", key_red, "kmin:kmax:pmax[:enq|deq], bytes (k, m) with kmin <= kmax, kmax > 0, "
		"and a probability", 0 },
	{ "lossless", key_lossless, "xoff:xon[:prios[:quanta]], bytes with xon < xoff, a "
		"priority mask 1-0xff, quanta 1-65535", 0 },
	{ "bneck_to", key_bneck_to, "an IPv4 or IPv6 address[/prefix length]", 1 },
};

static int
parse_item(struct roce_impair_spec *s, char *item, unsigned int *seen, char *err,
		size_t errlen)
{
	char *eq = strchr(item, '='), *f[MAX_FIELDS] = { NULL };
	char shown[64];
	unsigned int i;
	int n;

	if (eq == NULL)
		return fail(err, errlen, "'%.40s': not key=value", item);
	*eq = '\0';
	for (i = 0; i < RTE_DIM(keys); i++)
		if (strcmp(item, keys[i].name) == 0)
			break;
	if (i == RTE_DIM(keys))
		return fail(err, errlen, "unknown key '%.40s' (port dir seed loss ge reorder dup "
				"delay ecn rate bneck red lossless bneck_to)", item);
	if (*seen & (1u << i))
		return fail(err, errlen, "%s: given twice", keys[i].name);
	*seen |= 1u << i;
	snprintf(shown, sizeof(shown), "%s", eq + 1);
	if (keys[i].whole) {
		f[0] = eq + 1;
		n = *f[0] != '\0';
	} else {
		n = split_fields(eq + 1, f);
	}
	if (n < 1 || keys[i].fn(s, f, n) != 0)
		return fail(err, errlen, "%s: '%s' is not %s", keys[i].name, shown,
				keys[i].expect);
	return 0;
}

/* What the bottleneck's keys say together. */
static int
check_bneck(const struct roce_impair_spec *s, char *err, size_t errlen)
{
	if ((s->red_kmax != 0 || s->pfc_xoff != 0 || s->bneck_to_fam != 0) && s->bneck_bps == 0)
		return fail(err, errlen, "%s: needs a bottleneck (bneck=rate:buffer)",
				s->red_kmax != 0 ? "red" :
				s->pfc_xoff != 0 ? "lossless" : "bneck_to");
	if (s->red_kmax > s->bneck_buffer)
		return fail(err, errlen, "red: kmax %u is above the buffer (%u bytes)",
				s->red_kmax, s->bneck_buffer);
	if (s->pfc_xoff >= s->bneck_buffer)
		return fail(err, errlen, "lossless: xoff %u leaves no headroom in the buffer "
				"(%u bytes)", s->pfc_xoff, s->bneck_buffer);
	return 0;
}

int
roce_impair_parse(const char *str, struct roce_impair_spec *spec, char *err, size_t errlen)
{
	char buf[ROCE_IMPAIR_SPEC_MAX + 1], *item;
	struct roce_impair_spec s;
	unsigned int seen = 0;
	size_t len = strlen(str);
	int ret;

	roce_impair_spec_init(&s);
	if (len > ROCE_IMPAIR_SPEC_MAX)
		return fail(err, errlen, "longer than %d bytes", ROCE_IMPAIR_SPEC_MAX);
	if (len == 0 || strcmp(str, "none") == 0) {
		*spec = s;
		return 0;
	}
	memcpy(buf, str, len + 1);
	for (item = buf;;) {
		char *comma = strchr(item, ',');

		if (comma != NULL)
			*comma = '\0';
		if (*item == '\0')
			return fail(err, errlen, "empty item (two commas, or one at an end)");
		ret = parse_item(&s, item, &seen, err, errlen);
		if (ret != 0)
			return ret;
		if (comma == NULL)
			break;
		item = comma + 1;
	}
	ret = check_bneck(&s, err, errlen);
	if (ret != 0)
		return ret;
	*spec = s;
	return 0;
}

/* A time in the largest unit that keeps it an integer. */
static void
fmt_time(char *b, size_t n, uint64_t ns)
{
	if (ns != 0 && ns % 1000000000 == 0)
		snprintf(b, n, "%" PRIu64 "s", ns / 1000000000);
	else if (ns != 0 && ns % 1000000 == 0)
		snprintf(b, n, "%" PRIu64 "ms", ns / 1000000);
	else if (ns % 1000 == 0)
		snprintf(b, n, "%" PRIu64 "us", ns / 1000);
	else
		snprintf(b, n, "%" PRIu64 "ns", ns);
}

static void
fmt_rate(char *b, size_t n, uint64_t bps)
{
	static const char suffixes[] = "tgmk";
	uint64_t div = 1000000000000ull;
	unsigned int i;

	for (i = 0; i < 4; i++, div /= 1000)
		if (bps % div == 0) {
			snprintf(b, n, "%" PRIu64 "%c", bps / div, suffixes[i]);
			return;
		}
	snprintf(b, n, "%" PRIu64, bps);
}

/* A byte size in KiB or MiB when it is a whole number of them, as parse_size reads it. */
static void
fmt_size(char *b, size_t n, uint64_t v)
{
	if (v != 0 && v % (1u << 20) == 0)
		snprintf(b, n, "%" PRIu64 "m", v >> 20);
	else if (v != 0 && v % 1024 == 0)
		snprintf(b, n, "%" PRIu64 "k", v >> 10);
	else
		snprintf(b, n, "%" PRIu64, v);
}

/* Appends to a buffer, remembering whether it overflowed. */
struct out {
	char *buf;
	size_t len;
	size_t pos;
};

static void
put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->buf + RTE_MIN(o->pos, o->len), o->pos < o->len ? o->len - o->pos : 0,
			fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

int
roce_impair_format(const struct roce_impair_spec *s, int with_target, char *buf, size_t len)
{
	static const char *const dirs[] = { "none", "rx", "tx", "both" };
	struct out o = { buf, len, 0 };
	char t1[32], t2[32];

	if (len > 0)
		buf[0] = '\0';
	if (with_target)
		put(&o, ",port=%u,dir=%s", s->port, dirs[s->dirs & 3]);
	if (s->seed != DEF_SEED)
		put(&o, ",seed=%" PRIu64, s->seed);
	if (s->loss > 0)
		put(&o, ",loss=%.10g", s->loss);
	if (ge_active(s))
		put(&o, ",ge=%.10g:%.10g:%.10g:%.10g", s->ge_p, s->ge_r, s->ge_h, s->ge_k);
	if (s->reorder > 0) {
		fmt_time(t1, sizeof(t1), s->reorder_timeout_ns);
		put(&o, ",reorder=%.10g:%u:%s", s->reorder, s->reorder_depth, t1);
	}
	if (s->dup > 0)
		put(&o, ",dup=%.10g", s->dup);
	if (s->delay_ns > 0 || s->jitter_ns > 0) {
		fmt_time(t1, sizeof(t1), s->delay_ns);
		fmt_time(t2, sizeof(t2), s->jitter_ns);
		put(&o, s->jitter_ns ? ",delay=%s:%s" : ",delay=%s", t1, t2);
	}
	if (s->ecn > 0)
		put(&o, ",ecn=%.10g", s->ecn);
	if (s->rate_bps > 0) {
		fmt_rate(t1, sizeof(t1), s->rate_bps);
		put(&o, ",rate=%s:%u", t1, s->rate_burst);
	}
	if (s->bneck_bps > 0) {
		fmt_rate(t1, sizeof(t1), s->bneck_bps);
		fmt_size(t2, sizeof(t2), s->bneck_buffer);
		put(&o, ",bneck=%s:%s", t1, t2);
	}
	if (s->red_kmax > 0) {
		fmt_size(t1, sizeof(t1), s->red_kmin);
		fmt_size(t2, sizeof(t2), s->red_kmax);
		put(&o, ",red=%s:%s:%.10g%s", t1, t2, s->red_pmax, s->red_deq ? ":deq" : "");
	}
	if (s->pfc_xoff > 0) {
		fmt_size(t1, sizeof(t1), s->pfc_xoff);
		fmt_size(t2, sizeof(t2), s->pfc_xon);
		put(&o, ",lossless=%s:%s:0x%02x:%u", t1, t2, s->pfc_prios, s->pfc_quanta);
	}
	if (s->bneck_to_fam != 0) {
		char a[INET6_ADDRSTRLEN];

		inet_ntop(s->bneck_to_fam == 4 ? AF_INET : AF_INET6, s->bneck_to, a, sizeof(a));
		put(&o, s->bneck_to_len == (s->bneck_to_fam == 4 ? 32 : 128) ? ",bneck_to=%s" :
				",bneck_to=%s/%u", a, s->bneck_to_len);
	}
	if (o.pos == 0)
		put(&o, ",none");
	if (o.pos >= len)
		return -ENOSPC;
	/* Drop the leading comma. */
	memmove(buf, buf + 1, o.pos);
	return (int)o.pos - 1;
}
