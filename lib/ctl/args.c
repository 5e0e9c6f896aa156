/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handler helpers: error messages, typed and range-checked arguments, result values. Every
 * failure names the argument and says what it must be, so handlers need no messages of their
 * own for bad input.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ctl_private.h"

const char *
ctl_reply_message(const json_t *reply)
{
	return json_string_value(json_object_get(json_object_get(reply, "error"), "message"));
}

int
roce_ctl_verror(json_t *reply, int err, const char *fmt, va_list ap)
{
	char msg[CTL_MAX_MESSAGE];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	json_object_set_new(reply, "error", json_pack("{s:o}", "message", ctl_text(msg)));
	return err;
}

int
roce_ctl_error(json_t *reply, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = roce_ctl_verror(reply, err, fmt, ap);
	va_end(ap);
	return err;
}

/*
 * Find argument @name (dotted: in nested objects). @return 1 and *out when present, 0 when
 * absent and optional, -EINVAL with a message otherwise.
 */
static int
arg_lookup(const json_t *req, json_t *reply, const char *name, bool required,
		const json_t **out)
{
	const json_t *cur = req;
	const char *p = name;

	for (;;) {
		size_t n = strcspn(p, ".");

		if (!json_is_object(cur))
			return roce_ctl_error(reply, -EINVAL, "argument \"%.*s\" must be an object",
					(int)(p - 1 - name), name);
		cur = json_object_getn(cur, p, n);
		if (cur == NULL || json_is_null(cur)) {
			if (required)
				return roce_ctl_error(reply, -EINVAL, "missing argument \"%s\"",
						name);
			return 0;
		}
		if (p[n] == '\0')
			break;
		p += n + 1;
	}
	*out = cur;
	return 1;
}

/* Decimal, or hex after "0x"; no sign, no spaces, no octal. */
static bool
parse_u64(const char *s, uint64_t *v)
{
	int base = 10;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!isxdigit((unsigned char)s[0]) || (base == 10 && !isdigit((unsigned char)s[0])))
		return false;
	errno = 0;
	*v = strtoull(s, &end, base);
	return errno == 0 && *end == '\0';
}

int
roce_ctl_arg_u64(const json_t *req, json_t *reply, const char *name, uint64_t *v,
		bool required, uint64_t min, uint64_t max)
{
	const json_t *j = NULL;
	int rc = arg_lookup(req, reply, name, required, &j);
	uint64_t u = 0;
	bool good;

	if (rc <= 0)
		return rc;
	if (json_is_integer(j)) {
		good = json_integer_value(j) >= 0;
		u = (uint64_t)json_integer_value(j);
	} else {
		good = json_is_string(j) && parse_u64(json_string_value(j), &u);
	}
	if (!good || u < min || u > max)
		return roce_ctl_error(reply, -EINVAL,
				"argument \"%s\" must be an integer from %" PRIu64 " to %" PRIu64,
				name, min, max);
	*v = u;
	return 1;
}

int
roce_ctl_arg_u32(const json_t *req, json_t *reply, const char *name, uint32_t *v,
		bool required, uint32_t min, uint32_t max)
{
	uint64_t u;
	int rc = roce_ctl_arg_u64(req, reply, name, &u, required, min, max);

	if (rc == 1)
		*v = (uint32_t)u;
	return rc;
}

int
roce_ctl_arg_int(const json_t *req, json_t *reply, const char *name, int *v, bool required,
		int min, int max)
{
	const json_t *j = NULL;
	int rc = arg_lookup(req, reply, name, required, &j);

	if (rc <= 0)
		return rc;
	if (!json_is_integer(j) || json_integer_value(j) < min || json_integer_value(j) > max)
		return roce_ctl_error(reply, -EINVAL,
				"argument \"%s\" must be an integer from %d to %d", name, min, max);
	*v = (int)json_integer_value(j);
	return 1;
}

int
roce_ctl_arg_bool(const json_t *req, json_t *reply, const char *name, bool *v, bool required)
{
	const json_t *j = NULL;
	int rc = arg_lookup(req, reply, name, required, &j);

	if (rc <= 0)
		return rc;
	if (!json_is_boolean(j))
		return roce_ctl_error(reply, -EINVAL, "argument \"%s\" must be true or false",
				name);
	*v = json_is_true(j);
	return 1;
}

int
roce_ctl_arg_str(const json_t *req, json_t *reply, const char *name, const char **v,
		bool required, size_t max_len)
{
	const json_t *j = NULL;
	int rc = arg_lookup(req, reply, name, required, &j);

	if (rc <= 0)
		return rc;
	if (!json_is_string(j))
		return roce_ctl_error(reply, -EINVAL, "argument \"%s\" must be a string", name);
	if (max_len > 0 && json_string_length(j) > max_len)
		return roce_ctl_error(reply, -EINVAL,
				"argument \"%s\" must be at most %zu bytes long", name, max_len);
	*v = json_string_value(j);
	return 1;
}

/* Index of @s in @names, or -1. */
static int
name_index(const char *const *names, unsigned int nb, const char *s)
{
	unsigned int i;

	for (i = 0; i < nb; i++)
		if (names[i] != NULL && strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

/* "a, b, c" into @buf. */
static const char *
name_list(const char *const *names, unsigned int nb, char *buf, size_t cap)
{
	size_t len = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < nb && len < cap; i++)
		if (names[i] != NULL)
			len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "",
					names[i]);
	return buf;
}

int
roce_ctl_arg_enum(const json_t *req, json_t *reply, const char *name,
		const char *const *names, unsigned int nb, unsigned int *idx, bool required)
{
	const json_t *j = NULL;
	int rc = arg_lookup(req, reply, name, required, &j), i = -1;
	char list[256];

	if (rc <= 0)
		return rc;
	if (json_is_string(j))
		i = name_index(names, nb, json_string_value(j));
	if (i < 0)
		return roce_ctl_error(reply, -EINVAL, "argument \"%s\" must be one of: %s", name,
				name_list(names, nb, list, sizeof(list)));
	*idx = (unsigned int)i;
	return 1;
}

int
roce_ctl_arg_flags(const json_t *req, json_t *reply, const char *name,
		const char *const *names, unsigned int nb, uint64_t *flags, bool required)
{
	const json_t *j = NULL, *e;
	int rc = arg_lookup(req, reply, name, required, &j);
	uint64_t f = 0;
	char list[256];
	size_t k;

	if (rc <= 0)
		return rc;
	if (nb > 64)
		nb = 64;
	if (!json_is_array(j))
		goto bad;
	json_array_foreach(j, k, e) {
		int i = json_is_string(e) ? name_index(names, nb, json_string_value(e)) : -1;

		if (i < 0)
			goto bad;
		f |= UINT64_C(1) << i;
	}
	*flags = f;
	return 1;
bad:
	return roce_ctl_error(reply, -EINVAL, "argument \"%s\" must be an array of: %s", name,
			name_list(names, nb, list, sizeof(list)));
}

int
roce_ctl_arg_ip(const json_t *req, json_t *reply, const char *name, int *family,
		uint8_t addr[16], bool required)
{
	const json_t *j = NULL;
	int rc = arg_lookup(req, reply, name, required, &j);
	uint8_t a[16];

	if (rc <= 0)
		return rc;
	if (json_is_string(j) && inet_pton(AF_INET, json_string_value(j), a) == 1) {
		*family = AF_INET;
		memcpy(addr, a, 4);
		return 1;
	}
	if (json_is_string(j) && inet_pton(AF_INET6, json_string_value(j), a) == 1) {
		*family = AF_INET6;
		memcpy(addr, a, 16);
		return 1;
	}
	return roce_ctl_error(reply, -EINVAL, "argument \"%s\" must be an IPv4 or IPv6 address",
			name);
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int
roce_ctl_arg_mac(const json_t *req, json_t *reply, const char *name, uint8_t mac[6],
		bool required)
{
	const json_t *j = NULL;
	int rc = arg_lookup(req, reply, name, required, &j);
	const char *s;
	uint8_t m[6];
	int i;

	if (rc <= 0)
		return rc;
	s = json_string_value(j);
	if (s == NULL || strlen(s) != 17)
		goto bad;
	for (i = 0; i < 6; i++) {
		int hi = hexval(s[3 * i]), lo = hexval(s[3 * i + 1]);

		if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
			goto bad;
		m[i] = (uint8_t)(hi << 4 | lo);
	}
	memcpy(mac, m, 6);
	return 1;
bad:
	return roce_ctl_error(reply, -EINVAL,
			"argument \"%s\" must be a MAC address like 02:00:00:00:00:01", name);
}

json_t *
roce_ctl_u64(uint64_t v)
{
	if (v <= INT64_MAX)
		return json_integer((json_int_t)v);
	return json_sprintf("0x%" PRIx64, v);
}

json_t *
roce_ctl_flags(const char *const *names, unsigned int nb, uint64_t flags)
{
	json_t *a = json_array();
	unsigned int i;

	for (i = 0; i < nb && i < 64; i++)
		if ((flags >> i & 1) && names[i] != NULL)
			json_array_append_new(a, json_string(names[i]));
	return a;
}

int
roce_ctl_reply_status(const json_t *reply, const char **code, const char **message)
{
	const json_t *ok = json_object_get(reply, "ok");
	const json_t *err = json_object_get(reply, "error");
	const char *c = json_string_value(json_object_get(err, "code"));
	int e;

	if (code != NULL)
		*code = NULL;
	if (message != NULL)
		*message = NULL;
	if (json_is_true(ok))
		return 0;
	if (!json_is_false(ok) || c == NULL)
		return -EPROTO;
	if (code != NULL)
		*code = c;
	if (message != NULL)
		*message = json_string_value(json_object_get(err, "message"));
	e = roce_ctl_errno_value(c);
	return e != 0 ? -e : -EIO;
}
