/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the control server's request parser and dispatcher (lib/ctl), fed as a
 * client stream over a real UNIX socket. The first input byte sets the size of the pieces the
 * rest is written in (so lines are split across reads in many ways); the server is polled
 * between pieces, then the client half-closes and reads until the server hangs up.
 *
 * Invariants: every reply line is a JSON object with v 1, a boolean ok, an error object with
 * a known-shape code and message when not ok, and the id of its request (null when the
 * request has no integer id); one reply per non-blank line, in order; a line over the limit
 * gets E2BIG and ends the connection; the server always closes a client that half-closed.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "roce_ctl.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LINE 256
#define MAX_REPLIES 4096

#define FUZZ_ASSERT(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_ctl: %s: ", #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

static const char *const words[] = { "alpha", "beta", NULL, "delta" };

static int
h_types(void *arg, json_t *req, json_t *reply)
{
	uint64_t n = 0, f = 0;
	uint32_t u = 0;
	int i = 0, fam, rc;
	bool b;
	const char *s;
	unsigned int e;
	uint8_t ip[16], mac[6];

	(void)arg;
	if ((rc = roce_ctl_arg_u64(req, reply, "n", &n, false, 3, UINT64_MAX - 3)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "u", &u, false, 1, 0xffffff)) < 0 ||
			(rc = roce_ctl_arg_int(req, reply, "i", &i, false, -5, 5)) < 0 ||
			(rc = roce_ctl_arg_bool(req, reply, "b", &b, false)) < 0 ||
			(rc = roce_ctl_arg_str(req, reply, "s", &s, false, 16)) < 0 ||
			(rc = roce_ctl_arg_enum(req, reply, "e", words, 4, &e, false)) < 0 ||
			(rc = roce_ctl_arg_flags(req, reply, "f", words, 4, &f, false)) < 0 ||
			(rc = roce_ctl_arg_ip(req, reply, "r.ip", &fam, ip, false)) < 0 ||
			(rc = roce_ctl_arg_mac(req, reply, "r.mac", mac, false)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "r.x.y", &u, false, 0, 9)) < 0)
		return rc;
	json_object_set_new(reply, "n", roce_ctl_u64(n));
	json_object_set_new(reply, "f", roce_ctl_flags(words, 4, f));
	return 0;
}

/* Fails with the errno and message the request asks for. */
static int
h_fail(void *arg, json_t *req, json_t *reply)
{
	const char *s = "x";
	int err = EINVAL;

	(void)arg;
	roce_ctl_arg_int(req, reply, "errno", &err, false, 0, 200);
	roce_ctl_arg_str(req, reply, "s", &s, false, 0);
	json_object_set_new(reply, "junk", json_true());
	return err == 0 ? 0 : roce_ctl_error(reply, -err, "%s", s);
}

static int
h_echo(void *arg, json_t *req, json_t *reply)
{
	(void)arg;
	json_object_set(reply, "req", req);
	json_object_set_new(reply, "v", json_integer(7));
	return 0;
}

static const struct roce_ctl_cmd cmds[] = {
	{ "types", h_types, "helpers", "n u i b s e f r" },
	{ "fail", h_fail, "error replies", "errno s" },
	{ "echo", h_echo, "echo", NULL },
};

static struct roce_ctl_server *srv;
static char dir[] = "/tmp/roce-fuzz-ctl-XXXXXX";
static char path[sizeof(dir) + 16];

static void
quiet(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	(void)msg;
}

static void
cleanup(void)
{
	roce_ctl_server_destroy(srv);
	rmdir(dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct roce_ctl_conf conf = { .max_line = MAX_LINE, .max_clients = 4, .log = quiet };

	(void)argc;
	(void)argv;
	FUZZ_ASSERT(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/ctl.sock", dir);
	srv = roce_ctl_server_create(path, cmds, sizeof(cmds) / sizeof(cmds[0]), NULL, &conf);
	FUZZ_ASSERT(srv != NULL, "server: %s", strerror(errno));
	atexit(cleanup);
	return 0;
}

/* What the server must answer to the stream: ids (or null) and maybe E2BIG at the end. */
struct expected {
	int64_t id[MAX_REPLIES];
	bool null_id[MAX_REPLIES];
	unsigned int nb;
	bool e2big;
};

static bool
blank(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t')
			return false;
	return true;
}

static void
expect_stream(const uint8_t *p, size_t n, struct expected *x)
{
	size_t off = 0;

	x->nb = 0;
	x->e2big = false;
	while (off < n && x->nb < MAX_REPLIES) {
		const uint8_t *nl = memchr(p + off, '\n', n - off);
		size_t len = nl != NULL ? (size_t)(nl - (p + off)) : n - off;
		json_t *req, *id;

		if (len > MAX_LINE) {
			x->e2big = true;
			return;
		}
		if (nl == NULL)
			return;      /* unterminated at EOF: dropped */
		if (len > 0 && p[off + len - 1] == '\r')
			len--;
		if (!blank(p + off, len)) {
			req = json_loadb((const char *)p + off, len, JSON_REJECT_DUPLICATES, NULL);
			id = json_object_get(req, "id");
			x->null_id[x->nb] = !json_is_integer(id);
			x->id[x->nb++] = json_integer_value(id);
			json_decref(req);
		}
		off = (size_t)(nl - p) + 1;
	}
}

static void
check_reply(const char *line, size_t len, const struct expected *x, unsigned int k)
{
	json_t *rep = json_loadb(line, len, 0, NULL), *id, *ok, *err;
	bool last_e2big = x->e2big && k == x->nb;

	FUZZ_ASSERT(json_is_object(rep), "reply %u is not an object: %.*s", k, (int)len, line);
	FUZZ_ASSERT(k < x->nb + x->e2big, "reply %u of %u", k, x->nb + x->e2big);
	id = json_object_get(rep, "id");
	ok = json_object_get(rep, "ok");
	err = json_object_get(rep, "error");
	FUZZ_ASSERT(json_integer_value(json_object_get(rep, "v")) == ROCE_CTL_VERSION, "v");
	FUZZ_ASSERT(json_is_boolean(ok), "ok");
	if (last_e2big || x->null_id[k])
		FUZZ_ASSERT(json_is_null(id), "id should be null: %.*s", (int)len, line);
	else
		FUZZ_ASSERT(json_is_integer(id) && json_integer_value(id) == x->id[k],
				"id should be %lld: %.*s", (long long)x->id[k], (int)len, line);
	if (json_is_true(ok)) {
		FUZZ_ASSERT(err == NULL && !last_e2big, "ok reply with an error");
	} else {
		const char *c = json_string_value(json_object_get(err, "code"));

		FUZZ_ASSERT(c != NULL && c[0] == 'E', "code");
		FUZZ_ASSERT(json_is_string(json_object_get(err, "message")), "message");
		FUZZ_ASSERT(json_object_size(rep) == 4, "error reply members");
		FUZZ_ASSERT(!last_e2big || strcmp(c, "E2BIG") == 0, "E2BIG expected, got %s", c);
	}
	json_decref(rep);
}

/* Read what the server sent; check complete lines. @return false at EOF. */
static bool
drain(int fd, char *buf, size_t *len, size_t cap, const struct expected *x, unsigned int *k)
{
	ssize_t n = recv(fd, buf + *len, cap - *len, MSG_DONTWAIT);
	char *nl;

	if (n == 0 || (n < 0 && errno != EAGAIN))
		return false;
	if (n > 0)
		*len += (size_t)n;
	while ((nl = memchr(buf, '\n', *len)) != NULL) {
		size_t l = (size_t)(nl - buf);

		check_reply(buf, l, x, (*k)++);
		memmove(buf, nl + 1, *len - l - 1);
		*len -= l + 1;
	}
	FUZZ_ASSERT(*len < cap, "reply line too long");
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct expected x;
	static char buf[1 << 20];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct roce_ctl_stats st;
	size_t piece, off = 1, len = 0;
	unsigned int k = 0, spins = 0;
	int fd;

	if (size == 0)
		return 0;
	/* Half the inputs go in one write, the others in pieces of 1, 9, 17 ... 505 bytes. */
	piece = data[0] & 0x80 ? 1 + (size_t)(data[0] & 0x3f) * 8 : size;
	expect_stream(data + 1, size - 1, &x);
	if (x.nb == MAX_REPLIES)
		return 0;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	FUZZ_ASSERT(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect: %s",
			strerror(errno));
	while (off < size) {
		size_t n = size - off < piece ? size - off : piece;
		ssize_t w = send(fd, data + off, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
			break;          /* the server hung up (E2BIG) */
		if (w > 0)
			off += (size_t)w;
		/* Read replies only when there are new ones or the socket is full: syscalls are
		 * most of the cost of an input. */
		if (roce_ctl_server_poll(srv, 0) > 0 || w <= 0)
			drain(fd, buf, &len, sizeof(buf), &x, &k);
	}
	shutdown(fd, SHUT_WR);
	while (drain(fd, buf, &len, sizeof(buf), &x, &k)) {
		/* One thread does both ends: the data is already in the socket, no waiting. */
		roce_ctl_server_poll(srv, 0);
		FUZZ_ASSERT(++spins < 100000, "server never closed the client");
	}
	FUZZ_ASSERT(len == 0, "unterminated reply at EOF");
	FUZZ_ASSERT(k == x.nb + x.e2big, "%u replies, expected %u", k, x.nb + x.e2big);
	close(fd);
	roce_ctl_server_poll(srv, 0);
	roce_ctl_server_stats(srv, &st);
	FUZZ_ASSERT(st.clients == 0, "%u clients left", st.clients);
	return 0;
}
