/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control protocol tests: a lib/ctl server with mock handlers runs in a thread; the test
 * drives it with raw sockets (to send anything at all) and with the client API. Every reply
 * must be one valid JSON object with v 1, the request's id (null when there is none) and ok;
 * the server must keep serving everyone whatever one client sends or how it leaves.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "roce_ctl.h"
#include "roce_test.h"

/* expect(): the reply's id must be null. */
#define NULL_ID INT64_MIN

static char tmpdir[64];
static char sock_path[128];

/* --- mock handlers --- */

static int
h_echo(void *arg, json_t *req, json_t *reply)
{
	(void)arg;
	json_object_set(reply, "req", req);
	return 0;
}

static int
h_add(void *arg, json_t *req, json_t *reply)
{
	uint64_t a, b = 0;
	int rc;

	(void)arg;
	if ((rc = roce_ctl_arg_u64(req, reply, "a", &a, true, 0, 1000)) < 0 ||
			(rc = roce_ctl_arg_u64(req, reply, "b", &b, false, 0, 1000)) < 0)
		return rc;
	json_object_set_new(reply, "sum", json_integer((json_int_t)(a + b)));
	return 0;
}

static const char *const colours[] = { "red", NULL, "green", "blue" };

/* Every helper; echoes what it parsed. */
static int
h_types(void *arg, json_t *req, json_t *reply)
{
	uint64_t n = 7, f = 0;
	uint32_t u = 0, q = 0;
	int i = 0, fam = 0, rc;
	bool b = false;
	const char *s = "";
	unsigned int e = 0;
	uint8_t ip[16] = { 0 }, mac[6] = { 0 };

	(void)arg;
	if ((rc = roce_ctl_arg_u64(req, reply, "n", &n, false, 5, UINT64_MAX)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "u", &u, false, 0, 0xffffff)) < 0 ||
			(rc = roce_ctl_arg_int(req, reply, "i", &i, false, -1, 7)) < 0 ||
			(rc = roce_ctl_arg_bool(req, reply, "b", &b, false)) < 0 ||
			(rc = roce_ctl_arg_str(req, reply, "s", &s, false, 8)) < 0 ||
			(rc = roce_ctl_arg_enum(req, reply, "e", colours, 4, &e, false)) < 0 ||
			(rc = roce_ctl_arg_flags(req, reply, "f", colours, 4, &f, false)) < 0 ||
			(rc = roce_ctl_arg_ip(req, reply, "ip", &fam, ip, false)) < 0 ||
			(rc = roce_ctl_arg_mac(req, reply, "mac", mac, false)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "remote.qpn", &q, false, 1,
			0xffffff)) < 0)
		return rc;
	json_object_set_new(reply, "n", roce_ctl_u64(n));
	json_object_set_new(reply, "u", json_integer(u));
	json_object_set_new(reply, "i", json_integer(i));
	json_object_set_new(reply, "b", json_boolean(b));
	json_object_set_new(reply, "s", json_string(s));
	json_object_set_new(reply, "e", json_integer(e));
	json_object_set_new(reply, "f", roce_ctl_flags(colours, 4, f));
	json_object_set_new(reply, "fam", json_integer(fam));
	json_object_set_new(reply, "ip0", json_integer(ip[0]));
	json_object_set_new(reply, "mac5", json_integer(mac[5]));
	json_object_set_new(reply, "qpn", json_integer(q));
	return 0;
}

static int
h_fail_msg(void *arg, json_t *req, json_t *reply)
{
	(void)arg;
	(void)req;
	json_object_set_new(reply, "partial", json_true());
	return roce_ctl_error(reply, -ENOSPC, "table full (%d entries)", 64);
}

static int
h_fail_plain(void *arg, json_t *req, json_t *reply)
{
	(void)arg;
	(void)req;
	(void)reply;
	return -EBUSY;
}

static int
h_fail_odd(void *arg, json_t *req, json_t *reply)
{
	(void)arg;
	(void)req;
	/* Not UTF-8: the message must still come out as valid JSON. */
	return roce_ctl_error(reply, -4095, "bad \xff\xfe bytes");
}

/* Sets an error message, then succeeds; and overwrites reserved members. */
static int
h_clobber(void *arg, json_t *req, json_t *reply)
{
	(void)arg;
	(void)req;
	roce_ctl_error(reply, -EINVAL, "changed my mind");
	json_object_set_new(reply, "v", json_string("x"));
	json_object_set_new(reply, "id", json_string("y"));
	json_object_set_new(reply, "ok", json_false());
	json_object_set_new(reply, "value", json_integer(1));
	return 1;
}

static int
h_big(void *arg, json_t *req, json_t *reply)
{
	static char text[256 * 1024 + 1];

	(void)arg;
	(void)req;
	if (text[0] == '\0')
		memset(text, 'x', sizeof(text) - 1);
	json_object_set_new(reply, "data", json_string(text));
	return 0;
}

static int
h_sleep(void *arg, json_t *req, json_t *reply)
{
	uint32_t ms = 0;
	struct timespec ts;
	int rc = roce_ctl_arg_u32(req, reply, "ms", &ms, true, 0, 5000);

	(void)arg;
	if (rc < 0)
		return rc;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	nanosleep(&ts, NULL);
	return 0;
}

/* The server whose client "whoami" reports (handlers here get a NULL argument). */
static struct roce_ctl_server *whoami_srv;

static int
h_whoami(void *arg, json_t *req, json_t *reply)
{
	(void)arg;
	(void)req;
	json_object_set_new(reply, "client", roce_ctl_u64(roce_ctl_server_client(whoami_srv)));
	return 0;
}

static const struct roce_ctl_cmd cmds[] = {
	{ "echo", h_echo, "echo the request", NULL },
	{ "add", h_add, "a + b", "a\n\t\tb" },   /* any blanks separate names */
	{ "types", h_types, "every argument helper", "n u i b s e f ip mac remote" },
	{ "fail.msg", h_fail_msg, "ENOSPC with a message", "" },
	{ "fail.plain", h_fail_plain, "EBUSY without a message", "" },
	{ "fail.odd", h_fail_odd, "unknown errno, bytes that are not UTF-8", "" },
	{ "clobber", h_clobber, "misbehaving handler", "" },
	{ "big", h_big, "256 KiB reply", "" },
	{ "sleep", h_sleep, "block the server", "ms" },
	{ "whoami", h_whoami, "the id of the asking client", "" },
};
#define NB_CMDS (sizeof(cmds) / sizeof(cmds[0]))

/* --- server thread --- */

static atomic_uint warnings;

/* Count what the server logs instead of printing it. */
static void
quiet_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)msg;
	if (level <= ROCE_CTL_LOG_WARNING)
		atomic_fetch_add(&warnings, 1);
}

struct srv_thread {
	struct roce_ctl_server *srv;
	pthread_t tid;
	atomic_int stop;
};

static void *
srv_loop(void *p)
{
	struct srv_thread *t = p;

	while (!atomic_load(&t->stop))
		roce_ctl_server_poll(t->srv, 5);
	return NULL;
}

static struct srv_thread *
srv_start(const struct roce_ctl_conf *conf)
{
	struct srv_thread *t = calloc(1, sizeof(*t));
	struct roce_ctl_conf c = { .log = quiet_log };

	if (conf != NULL) {
		c = *conf;
		c.log = quiet_log;
	}
	t->srv = roce_ctl_server_create(sock_path, cmds, NB_CMDS, NULL, &c);
	RT_CHECK(t->srv != NULL, "server_create: %s", strerror(errno));
	if (t->srv == NULL) {
		free(t);
		return NULL;
	}
	pthread_create(&t->tid, NULL, srv_loop, t);
	return t;
}

static void
srv_stop(struct srv_thread *t, struct roce_ctl_stats *st)
{
	if (t == NULL)
		return;
	atomic_store(&t->stop, 1);
	pthread_join(t->tid, NULL);
	if (st != NULL)
		roce_ctl_server_stats(t->srv, st);
	roce_ctl_server_destroy(t->srv);
	free(t);
}

/* Wait until the server thread has seen every client go (at most 2 s). */
static void
srv_wait_idle(struct srv_thread *t)
{
	struct roce_ctl_stats st;
	int i;

	for (i = 0; i < 400; i++) {
		roce_ctl_server_stats(t->srv, &st);
		if (st.clients == 0)
			return;
		usleep(5000);
	}
}

/* --- raw client --- */

struct raw {
	int fd;
	bool eof;
	char *buf;
	size_t len;
	size_t cap;
};

static int
raw_open(struct raw *r)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { 10, 0 };   /* generous: tests may run on a loaded machine */

	memset(r, 0, sizeof(*r));
	strcpy(sa.sun_path, sock_path);
	r->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	setsockopt(r->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(r->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(r->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(r->fd);
		r->fd = -1;
		return -errno;
	}
	return 0;
}

static void
raw_close(struct raw *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	r->fd = -1;
	r->buf = NULL;
}

/* Send it all; @return 0 or -errno (EPIPE once the server has closed). */
static int
raw_send(struct raw *r, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t k = send(r->fd, c, n, MSG_NOSIGNAL);

		if (k < 0)
			return errno == EINTR ? 0 : -errno;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

static int
raw_sends(struct raw *r, const char *s)
{
	return raw_send(r, s, strlen(s));
}

/* The next reply line as JSON; NULL at EOF or timeout (r->eof tells) or when not JSON. */
static json_t *
raw_read(struct raw *r)
{
	for (;;) {
		char *nl = r->len ? memchr(r->buf, '\n', r->len) : NULL;
		ssize_t k;

		if (nl != NULL) {
			size_t n = (size_t)(nl - r->buf);
			json_t *j = json_loadb(r->buf, n, 0, NULL);

			RT_CHECK(j != NULL, "reply is not JSON: %.*s", (int)(n > 200 ? 200 : n),
					r->buf);
			memmove(r->buf, nl + 1, r->len - n - 1);
			r->len -= n + 1;
			return j;
		}
		if (r->cap - r->len < 65536) {
			r->cap = r->cap ? r->cap * 2 : 131072;
			r->buf = realloc(r->buf, r->cap);
		}
		k = recv(r->fd, r->buf + r->len, r->cap - r->len, 0);
		if (k <= 0) {
			r->eof = true;
			return NULL;
		}
		r->len += (size_t)k;
	}
}

/* Read what is there without waiting; @return whether a complete line is buffered. */
static bool
raw_poll(struct raw *r)
{
	ssize_t k;

	if (r->cap - r->len < 65536) {
		r->cap = r->cap ? r->cap * 2 : 131072;
		r->buf = realloc(r->buf, r->cap);
	}
	k = recv(r->fd, r->buf + r->len, r->cap - r->len, MSG_DONTWAIT);
	if (k > 0)
		r->len += (size_t)k;
	return r->len > 0 && memchr(r->buf, '\n', r->len) != NULL;
}

/* Whether nothing more has arrived. */
static bool
raw_idle(struct raw *r)
{
	char c;

	return r->len == 0 && recv(r->fd, &c, 1, MSG_DONTWAIT | MSG_PEEK) < 0 &&
		errno == EAGAIN;
}

/* Whether the server has closed @r (EOF, or a reset). */
static bool
raw_closed(struct raw *r)
{
	char c;
	ssize_t k = recv(r->fd, &c, 1, 0);

	return k == 0 || (k < 0 && errno == ECONNRESET);
}

/*
 * Check the shape of a reply. @id: expected id, or NULL_ID for null. @code: expected error code,
 * or NULL for ok:true. Consumes @rep.
 */
static void
expect(json_t *rep, json_int_t id, const char *code, const char *what)
{
	json_t *jid = json_object_get(rep, "id"), *err = json_object_get(rep, "error");
	const char *c = json_string_value(json_object_get(err, "code"));
	const char *m = json_string_value(json_object_get(err, "message"));

	RT_CHECK(json_is_object(rep), "%s: no reply object", what);
	if (!json_is_object(rep))
		return;
	RT_CHECK(json_integer_value(json_object_get(rep, "v")) == 1, "%s: v", what);
	if (id == NULL_ID)
		RT_CHECK(json_is_null(jid), "%s: id should be null", what);
	else
		RT_CHECK(json_is_integer(jid) && json_integer_value(jid) == id,
				"%s: id should be %lld", what, (long long)id);
	if (code == NULL) {
		RT_CHECK(json_is_true(json_object_get(rep, "ok")), "%s: should be ok (%s: %s)",
				what, c ? c : "-", m ? m : "-");
		RT_CHECK(err == NULL, "%s: ok reply with an error member", what);
	} else {
		RT_CHECK(json_is_false(json_object_get(rep, "ok")), "%s: should fail", what);
		RT_CHECK(c != NULL && strcmp(c, code) == 0, "%s: code %s, want %s", what,
				c ? c : "(none)", code);
		RT_CHECK(m != NULL && m[0] != '\0', "%s: no message", what);
		RT_CHECK(json_object_size(rep) == 4, "%s: error reply has extra members", what);
	}
	json_decref(rep);
}

/* Send @line + "\n" and check the reply. */
static void
roundtrip(struct raw *r, const char *line, json_int_t id, const char *code)
{
	RT_CHECK(raw_sends(r, line) == 0 && raw_sends(r, "\n") == 0, "send %s", line);
	expect(raw_read(r), id, code, line);
}

/* --- tests --- */

static void
test_good(void)
{
	struct srv_thread *t = srv_start(NULL);
	struct roce_ctl_client *c;
	json_t *args, *rep;
	const char *code, *msg;
	int i;

	c = roce_ctl_client_connect(sock_path, 1000);
	RT_CHECK(c != NULL, "connect: %s", strerror(errno));
	if (c == NULL)
		goto out;
	for (i = 0; i < 5; i++) {
		args = json_pack("{s:i,s:s}", "a", i, "b", "0x10");
		RT_CHECK(roce_ctl_client_request(c, "add", args, &rep, 1000) == 0, "request add");
		RT_CHECK(json_integer_value(json_object_get(rep, "sum")) == i + 16, "sum");
		RT_CHECK(roce_ctl_reply_status(rep, &code, &msg) == 0 && code == NULL, "status");
		RT_CHECK(json_object_size(rep) == 4, "add reply members");
		expect(rep, i + 1, NULL, "add");
		json_decref(args);
	}
	/* Arguments arrive as sent; "v", "id", "cmd" in args cannot override the envelope. */
	args = json_pack("{s:{s:[i,i]},s:i,s:s}", "nested", "list", 1, 2, "id", 99, "cmd", "x");
	RT_CHECK(roce_ctl_client_request(c, "echo", args, &rep, 1000) == 0, "echo");
	RT_CHECK(json_integer_value(json_array_get(json_object_get(json_object_get(
			json_object_get(rep, "req"), "nested"), "list"), 1)) == 2, "echo nested");
	RT_CHECK(strcmp(json_string_value(json_object_get(json_object_get(rep, "req"), "cmd")),
			"echo") == 0, "echo cmd");
	expect(rep, 6, NULL, "echo");
	json_decref(args);
	/* Built-in help lists the table and itself. */
	RT_CHECK(roce_ctl_client_request(c, "help", NULL, &rep, 1000) == 0, "help");
	RT_CHECK(json_array_size(json_object_get(rep, "commands")) == NB_CMDS + 1,
			"help lists %zu commands",
			json_array_size(json_object_get(rep, "commands")));
	RT_CHECK(json_array_size(json_object_get(json_array_get(json_object_get(rep, "commands"),
			1), "args")) == 2, "help shows add's arguments");
	expect(rep, 7, NULL, "help");
	roce_ctl_client_close(c);
out:
	srv_stop(t, NULL);
}

static void
test_malformed(void)
{
	static const struct {
		const char *line;
		json_int_t id;
		const char *code;
	} cases[] = {
		{ "not json", NULL_ID, "EPROTO" },
		{ "{\"v\":1,\"id\":1,\"cmd\":\"echo\"", NULL_ID, "EPROTO" },
		{ "[1,2]", NULL_ID, "EPROTO" },
		{ "42", NULL_ID, "EPROTO" },
		{ "\"string\"", NULL_ID, "EPROTO" },
		{ "null", NULL_ID, "EPROTO" },
		{ "{}", NULL_ID, "EPROTO" },
		{ "{\"v\":1,\"cmd\":\"echo\"}", NULL_ID, "EPROTO" },
		{ "{\"v\":1,\"id\":\"7\",\"cmd\":\"echo\"}", NULL_ID, "EPROTO" },
		{ "{\"v\":1,\"id\":1.5,\"cmd\":\"echo\"}", NULL_ID, "EPROTO" },
		{ "{\"v\":1,\"id\":null,\"cmd\":\"echo\"}", NULL_ID, "EPROTO" },
		{ "{\"id\":3,\"cmd\":\"echo\"}", 3, "EPROTO" },
		{ "{\"v\":\"1\",\"id\":4,\"cmd\":\"echo\"}", 4, "EPROTO" },
		{ "{\"v\":2,\"id\":5,\"cmd\":\"echo\"}", 5, "EPROTO" },
		{ "{\"v\":1.0,\"id\":5,\"cmd\":\"echo\"}", 5, "EPROTO" },
		{ "{\"v\":1,\"id\":6}", 6, "EPROTO" },
		{ "{\"v\":1,\"id\":7,\"cmd\":42}", 7, "EPROTO" },
		{ "{\"v\":1,\"id\":7,\"cmd\":[\"echo\"]}", 7, "EPROTO" },
		{ "{\"v\":1,\"id\":8,\"cmd\":\"nope\"}", 8, "ENOTSUP" },
		{ "{\"v\":1,\"id\":8,\"cmd\":\"\"}", 8, "ENOTSUP" },
		{ "{\"v\":1,\"id\":9,\"cmd\":\"add\",\"a\":1,\"c\":3}", 9, "EINVAL" },
		{ "{\"v\":1,\"id\":9,\"cmd\":\"fail.msg\",\"x\":0}", 9, "EINVAL" },
		{ "{\"v\":1,\"id\":10,\"id\":11,\"cmd\":\"echo\"}", NULL_ID, "EPROTO" },
		{ "{\"v\":1,\"id\":12,\"cmd\":\"echo\",\"s\":\"\xff\"}", NULL_ID, "EPROTO" },
		{ "{\"v\":1,\"id\":99999999999999999999,\"cmd\":\"echo\"}", NULL_ID, "EPROTO" },
		{ "{\"v\":1,\"id\":13,\"cmd\":\"echo\"} {}", NULL_ID, "EPROTO" },
		{ "{\"v\":1,\"id\":14,\"cmd\":\"echo\",\"s\":\"a\\u0000b\"}", NULL_ID, "EPROTO" },
		{ "{\"v\":1,\"id\":-15,\"cmd\":\"echo\"}", -15, NULL },
		{ "  {\"v\":1,\"id\":16,\"cmd\":\"echo\"}\r", 16, NULL },
		{ "{\"v\":1,\"id\":9223372036854775807,\"cmd\":\"add\",\"a\":1}", INT64_MAX, NULL },
	};
	struct srv_thread *t = srv_start(NULL);
	char deep[8192 + 2];
	unsigned int i;
	struct raw r;

	if (t == NULL || raw_open(&r) != 0) {
		RT_CHECK(0, "setup");
		srv_stop(t, NULL);
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		roundtrip(&r, cases[i].line, cases[i].id, cases[i].code);
	/* A NUL byte inside the line, nesting past the parser's limit. */
	RT_CHECK(raw_send(&r, "{\"v\":1,\0\"id\":1}\n", 16) == 0, "send NUL");
	expect(raw_read(&r), NULL_ID, "EPROTO", "NUL byte");
	memset(deep, '[', 4096);
	memset(deep + 4096, ']', 4096);
	deep[8192] = '\n';
	RT_CHECK(raw_send(&r, deep, 8193) == 0, "send deep");
	expect(raw_read(&r), NULL_ID, "EPROTO", "deep nesting");
	/* Blank lines get no reply: the next reply is for the next request. */
	roundtrip(&r, "\n \t\n{\"v\":1,\"id\":20,\"cmd\":\"echo\"}", 20, NULL);
	/* All of it again in one write (pipelined): the replies come back in order. */
	{
		char *all = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&all, &len);

		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			fprintf(f, "%s\n", cases[i].line);
		fclose(f);
		RT_CHECK(raw_send(&r, all, len) == 0, "pipelined send");
		free(all);
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			expect(raw_read(&r), cases[i].id, cases[i].code, cases[i].line);
	}
	/* The connection still serves. */
	roundtrip(&r, "{\"v\":1,\"id\":21,\"cmd\":\"add\",\"a\":2,\"b\":3}", 21, NULL);
	RT_CHECK(raw_idle(&r), "no extra replies");
	raw_close(&r);
	srv_stop(t, NULL);
}

/* Argument helpers: good values, then each bad one names the argument. */
static void
test_args(void)
{
	static const struct {
		const char *args;
		const char *bad;    /* NULL: must succeed; else in the message */
	} cases[] = {
		{ "", NULL },
		{ "\"n\":5,\"u\":16777215,\"i\":-1,\"b\":true,\"s\":\"12345678\",\"e\":\"blue\"",
			NULL },
		{ "\"n\":\"0xffffffffffffffff\",\"f\":[\"red\",\"blue\"],"
			"\"ip\":\"10.1.2.3\"", NULL },
		{ "\"n\":\"18446744073709551615\",\"ip\":\"fe80::1\",\"mac\":\"02:aB:00:00:00:Ff\"",
			NULL },
		{ "\"n\":null,\"remote\":{\"qpn\":\"0x10\"},\"f\":[]", NULL },
		{ "\"remote\":{}", NULL },
		{ "\"n\":4", "\"n\"" },
		{ "\"n\":-1", "\"n\"" },
		{ "\"n\":1.5", "\"n\"" },
		{ "\"n\":\"5x\"", "\"n\"" },
		{ "\"n\":\"-5\"", "\"n\"" },
		{ "\"n\":\" 5\"", "\"n\"" },
		{ "\"n\":\"0x\"", "\"n\"" },
		{ "\"n\":\"\"", "\"n\"" },
		{ "\"n\":\"0x10000000000000000\"", "\"n\"" },
		{ "\"n\":true", "\"n\"" },
		{ "\"u\":16777216", "\"u\"" },
		{ "\"i\":8", "\"i\"" },
		{ "\"i\":-2", "\"i\"" },
		{ "\"i\":\"3\"", "\"i\"" },
		{ "\"b\":1", "\"b\"" },
		{ "\"b\":\"true\"", "\"b\"" },
		{ "\"s\":\"123456789\"", "\"s\"" },
		{ "\"s\":5", "\"s\"" },
		{ "\"e\":\"purple\"", "red, green, blue" },
		{ "\"e\":1", "\"e\"" },
		{ "\"f\":\"red\"", "\"f\"" },
		{ "\"f\":[\"red\",\"pink\"]", "\"f\"" },
		{ "\"f\":[\"red\",1]", "\"f\"" },
		{ "\"ip\":\"10.1.2\"", "\"ip\"" },
		{ "\"ip\":5", "\"ip\"" },
		{ "\"mac\":\"02:00:00:00:00\"", "\"mac\"" },
		{ "\"mac\":\"02-00-00-00-00-01\"", "\"mac\"" },
		{ "\"mac\":\"02:00:00:00:00:0g\"", "\"mac\"" },
		{ "\"mac\":\"02:00:00:00:00:011\"", "\"mac\"" },
		{ "\"remote\":5", "\"remote\" must be an object" },
		{ "\"remote\":{\"qpn\":0}", "\"remote.qpn\"" },
	};
	struct srv_thread *t = srv_start(NULL);
	unsigned int i;
	struct raw r;

	if (t == NULL || raw_open(&r) != 0) {
		RT_CHECK(0, "setup");
		srv_stop(t, NULL);
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char line[512];
		json_t *rep;
		const char *msg;

		snprintf(line, sizeof(line), "{\"v\":1,\"id\":%u,\"cmd\":\"types\"%s%s}\n", i,
				cases[i].args[0] ? "," : "", cases[i].args);
		RT_CHECK(raw_sends(&r, line) == 0, "send");
		rep = raw_read(&r);
		msg = json_string_value(json_object_get(json_object_get(rep, "error"), "message"));
		if (cases[i].bad != NULL)
			RT_CHECK(msg != NULL && strstr(msg, cases[i].bad) != NULL,
					"%s: message \"%s\" lacks %s", cases[i].args,
					msg ? msg : "", cases[i].bad);
		if (i == 2) {
			const char *n = json_string_value(json_object_get(rep, "n"));

			RT_CHECK(n != NULL && strcmp(n, "0xffffffffffffffff") == 0,
					"u64 above 2^63 as a string");
			RT_CHECK(json_array_size(json_object_get(rep, "f")) == 2, "flags");
			RT_CHECK(json_integer_value(json_object_get(rep, "ip0")) == 10, "ipv4");
		}
		if (i == 3)
			RT_CHECK(json_integer_value(json_object_get(rep, "mac5")) == 0xff &&
					json_integer_value(json_object_get(rep, "fam")) != 0,
					"mac, ipv6");
		if (i == 4)
			RT_CHECK(json_integer_value(json_object_get(rep, "qpn")) == 16 &&
					json_integer_value(json_object_get(rep, "n")) == 7,
					"nested, null");
		expect(rep, i, cases[i].bad ? "EINVAL" : NULL, cases[i].args);
	}
	raw_close(&r);
	srv_stop(t, NULL);
}

static void
test_handler_errors(void)
{
	struct srv_thread *t = srv_start(NULL);
	struct raw r;
	json_t *rep;
	const char *code, *msg;

	if (t == NULL || raw_open(&r) != 0) {
		RT_CHECK(0, "setup");
		srv_stop(t, NULL);
		return;
	}
	raw_sends(&r, "{\"v\":1,\"id\":1,\"cmd\":\"fail.msg\"}\n");
	rep = raw_read(&r);
	RT_CHECK(roce_ctl_reply_status(rep, &code, &msg) == -ENOSPC, "status ENOSPC");
	RT_CHECK(msg != NULL && strcmp(msg, "table full (64 entries)") == 0, "message %s", msg);
	RT_CHECK(json_object_get(rep, "partial") == NULL, "results of a failed handler dropped");
	expect(rep, 1, "ENOSPC", "fail.msg");
	raw_sends(&r, "{\"v\":1,\"id\":2,\"cmd\":\"fail.plain\"}\n");
	rep = raw_read(&r);
	RT_CHECK(roce_ctl_reply_status(rep, NULL, &msg) == -EBUSY && msg != NULL &&
			strcmp(msg, strerror(EBUSY)) == 0, "default message");
	expect(rep, 2, "EBUSY", "fail.plain");
	roundtrip(&r, "{\"v\":1,\"id\":3,\"cmd\":\"fail.odd\"}", 3, "EUNKNOWN");
	raw_sends(&r, "{\"v\":1,\"id\":4,\"cmd\":\"clobber\"}\n");
	rep = raw_read(&r);
	RT_CHECK(json_integer_value(json_object_get(rep, "value")) == 1, "clobber value");
	expect(rep, 4, NULL, "clobber");
	raw_close(&r);
	srv_stop(t, NULL);
	/* Names both ways. */
	RT_CHECK(strcmp(roce_ctl_errno_name(-ENOENT), "ENOENT") == 0, "ENOENT");
	RT_CHECK(strcmp(roce_ctl_errno_name(E2BIG), "E2BIG") == 0, "E2BIG");
	RT_CHECK(strcmp(roce_ctl_errno_name(-EOPNOTSUPP), "ENOTSUP") == 0, "ENOTSUP");
	RT_CHECK(strcmp(roce_ctl_errno_name(-9999), "EUNKNOWN") == 0, "EUNKNOWN");
	RT_CHECK(roce_ctl_errno_value("EPROTO") == EPROTO, "EPROTO");
	RT_CHECK(roce_ctl_errno_value("EOPNOTSUPP") == ENOTSUP, "EOPNOTSUPP");
	RT_CHECK(roce_ctl_errno_value("EWHATEVER") == 0, "unknown name");
	rep = json_pack("{s:b,s:{s:s,s:s}}", "ok", 0, "error", "code", "EXYZ", "message", "m");
	RT_CHECK(roce_ctl_reply_status(rep, &code, NULL) == -EIO && strcmp(code, "EXYZ") == 0,
			"unknown code");
	json_decref(rep);
	rep = json_pack("{s:i}", "ok", 1);
	RT_CHECK(roce_ctl_reply_status(rep, NULL, NULL) == -EPROTO, "ok not boolean");
	json_decref(rep);
}

/* Line limit: exactly max_line passes, one more byte is E2BIG and a disconnect. */
static void
test_line_limit(void)
{
	struct roce_ctl_conf conf = { .max_line = 100 };
	unsigned int w0 = atomic_load(&warnings);
	struct srv_thread *t = srv_start(&conf);
	struct roce_ctl_stats st;
	char line[256];
	char *huge;
	struct raw r;
	int rc;

	if (t == NULL || raw_open(&r) != 0) {
		RT_CHECK(0, "setup");
		srv_stop(t, NULL);
		return;
	}
	snprintf(line, sizeof(line), "%-100s\n", "{\"v\":1,\"id\":1,\"cmd\":\"echo\"}");
	RT_CHECK(raw_sends(&r, line) == 0, "send");
	expect(raw_read(&r), 1, NULL, "line of max_line bytes");
	snprintf(line, sizeof(line), "%-101s\n", "{\"v\":1,\"id\":2,\"cmd\":\"echo\"}");
	raw_sends(&r, line);
	expect(raw_read(&r), NULL_ID, "E2BIG", "line of max_line + 1 bytes");
	RT_CHECK(raw_closed(&r), "disconnected after E2BIG");
	raw_close(&r);
	srv_stop(t, NULL);

	/* Default limit (64 KiB), a 1 MiB line: E2BIG, then the connection closes. */
	t = srv_start(NULL);
	if (t == NULL || raw_open(&r) != 0) {
		RT_CHECK(0, "setup");
		srv_stop(t, NULL);
		return;
	}
	huge = malloc(1 << 20);
	memset(huge, ' ', 1 << 20);
	memcpy(huge, "{\"v\":1,\"id\":3,\"cmd\":\"echo\",\"s\":\"", 33);
	rc = raw_send(&r, huge, 1 << 20);
	RT_CHECK(rc == 0 || rc == -EPIPE || rc == -ECONNRESET, "send 1 MiB: %s", strerror(-rc));
	expect(raw_read(&r), NULL_ID, "E2BIG", "1 MiB line");
	RT_CHECK(raw_read(&r) == NULL && r.eof, "closed after E2BIG");
	raw_close(&r);
	free(huge);
	/* Others are still served. */
	RT_CHECK(raw_open(&r) == 0, "reconnect");
	roundtrip(&r, "{\"v\":1,\"id\":4,\"cmd\":\"echo\"}", 4, NULL);
	raw_close(&r);
	srv_wait_idle(t);
	srv_stop(t, &st);
	RT_CHECK(st.oversized == 1 && st.clients == 0, "oversized %llu clients %u",
			(unsigned long long)st.oversized, st.clients);
	RT_CHECK(atomic_load(&warnings) - w0 == 2, "each oversized line logged");
}

/* Clients leaving mid-line, with unread replies or pipelined requests in flight. */
static void
test_abrupt(void)
{
	struct srv_thread *t = srv_start(NULL);
	struct roce_ctl_stats st;
	struct raw r, ok;
	int i, k;

	if (t == NULL || raw_open(&ok) != 0) {
		RT_CHECK(0, "setup");
		srv_stop(t, NULL);
		return;
	}
	for (i = 0; i < 20; i++) {
		RT_CHECK(raw_open(&r) == 0, "open");
		switch (i % 4) {
		case 0:   /* half a line */
			raw_sends(&r, "{\"v\":1,\"id\":1,\"cmd\":\"ec");
			break;
		case 1:   /* a request, gone before the reply */
			raw_sends(&r, "{\"v\":1,\"id\":1,\"cmd\":\"big\"}\n");
			break;
		case 2:   /* many pipelined requests with big replies */
			for (k = 0; k < 20; k++)
				raw_sends(&r, "{\"v\":1,\"id\":1,\"cmd\":\"big\"}\n");
			break;
		default:  /* nothing at all */
			break;
		}
		raw_close(&r);
		/* Meanwhile, another client is served. */
		roundtrip(&ok, "{\"v\":1,\"id\":5,\"cmd\":\"add\",\"a\":1}", 5, NULL);
	}
	raw_close(&ok);
	srv_wait_idle(t);
	srv_stop(t, &st);
	RT_CHECK(st.clients == 0, "%u clients left", st.clients);
	RT_CHECK(st.accepted == 21, "accepted %llu", (unsigned long long)st.accepted);
}

/* 100 clients at once against max_clients 64: 64 served, 36 told EBUSY and closed. */
static void
test_max_clients(void)
{
	enum { N = 100 };
	struct srv_thread *t = srv_start(NULL);
	static struct raw r[N];
	struct roce_ctl_stats st;
	struct roce_ctl_client *c;
	int i, served = 0, busy = 0, other = 0;
	json_t *rep;

	if (t == NULL)
		return;
	for (i = 0; i < N; i++)
		RT_CHECK(raw_open(&r[i]) == 0, "connect %d", i);
	for (i = 0; i < N; i++) {
		char line[64];

		snprintf(line, sizeof(line), "{\"v\":1,\"id\":%d,\"cmd\":\"echo\"}\n", i);
		raw_sends(&r[i], line);
	}
	for (i = 0; i < N; i++) {
		const char *code;

		rep = raw_read(&r[i]);
		if (json_is_true(json_object_get(rep, "ok"))) {
			served++;
			expect(rep, i, NULL, "served client");
			continue;
		}
		code = json_string_value(json_object_get(json_object_get(rep, "error"), "code"));
		if (code != NULL && strcmp(code, "EBUSY") == 0) {
			busy++;
			expect(rep, NULL_ID, "EBUSY", "refused client");
			RT_CHECK(raw_closed(&r[i]), "refused client closed");
		} else {
			other++;
			json_decref(rep);
		}
	}
	RT_CHECK(served == 64 && busy == 36 && other == 0, "served %d busy %d other %d", served,
			busy, other);
	/* The client API sees the refusal as a reply with a null id. */
	c = roce_ctl_client_connect(sock_path, 1000);
	RT_CHECK(c != NULL, "connect 101st");
	if (c != NULL) {
		RT_CHECK(roce_ctl_client_request(c, "echo", NULL, &rep, 2000) == 0, "request");
		RT_CHECK(roce_ctl_reply_status(rep, NULL, NULL) == -EBUSY, "EBUSY via API");
		expect(rep, NULL_ID, "EBUSY", "101st");
		roce_ctl_client_close(c);
	}
	for (i = 0; i < N; i++)
		raw_close(&r[i]);
	/* Once they are gone, newcomers are served again. */
	srv_wait_idle(t);
	RT_CHECK(raw_open(&r[0]) == 0, "reconnect");
	roundtrip(&r[0], "{\"v\":1,\"id\":1,\"cmd\":\"echo\"}", 1, NULL);
	raw_close(&r[0]);
	srv_stop(t, &st);
	RT_CHECK(st.rejected == 37, "rejected %llu", (unsigned long long)st.rejected);
}

/*
 * A burst of clients that connect, ask and hang up while the server is busy waits in the backlog;
 * accepting it must not fill the table with the gone and refuse the next live client.
 */
static void
test_reap_backlog(void)
{
	enum { N = 100 };
	struct srv_thread *t = srv_start(NULL);
	struct roce_ctl_stats st;
	struct raw busy, r, live;
	int i;

	if (t == NULL || raw_open(&busy) != 0) {
		RT_CHECK(0, "setup");
		srv_stop(t, NULL);
		return;
	}
	raw_sends(&busy, "{\"v\":1,\"id\":1,\"cmd\":\"sleep\",\"ms\":300}\n");
	usleep(50 * 1000);
	for (i = 0; i < N; i++) {
		RT_CHECK(raw_open(&r) == 0, "connect %d", i);
		raw_sends(&r, "{\"v\":1,\"id\":2,\"cmd\":\"echo\"}\n");
		raw_close(&r);
	}
	RT_CHECK(raw_open(&live) == 0, "connect the live client");
	roundtrip(&live, "{\"v\":1,\"id\":3,\"cmd\":\"echo\"}", 3, NULL);
	raw_close(&live);
	expect(raw_read(&busy), 1, NULL, "sleep");
	raw_close(&busy);
	srv_wait_idle(t);
	srv_stop(t, &st);
	RT_CHECK(st.rejected == 0 && st.accepted == N + 2, "rejected %llu accepted %llu",
			(unsigned long long)st.rejected, (unsigned long long)st.accepted);
}

/* A full table of idle clients: newcomers are refused until the oldest has been idle idle_ms. */
static void
test_idle_evict(void)
{
	enum { MAX = 4 };
	struct roce_ctl_conf conf = { .max_clients = MAX, .idle_ms = 1000 };
	struct srv_thread *t = srv_start(&conf);
	struct raw idle[MAX], r;
	struct roce_ctl_stats st;
	int i;

	if (t == NULL)
		return;
	for (i = 0; i < MAX; i++) {
		RT_CHECK(raw_open(&idle[i]) == 0, "connect %d", i);
		roundtrip(&idle[i], "{\"v\":1,\"id\":1,\"cmd\":\"echo\"}", 1, NULL);
		usleep(20 * 1000);
	}
	/* The first one stays active: the second is then the oldest idle client. */
	roundtrip(&idle[0], "{\"v\":1,\"id\":2,\"cmd\":\"echo\"}", 2, NULL);
	/* Refused at once: the server sends its line and closes, so only read. */
	RT_CHECK(raw_open(&r) == 0, "connect");
	expect(raw_read(&r), NULL_ID, "EBUSY", "refused while no client is idle long enough");
	raw_close(&r);
	usleep(1100 * 1000);
	roundtrip(&idle[0], "{\"v\":1,\"id\":4,\"cmd\":\"echo\"}", 4, NULL);
	RT_CHECK(raw_open(&r) == 0, "connect after idle_ms");
	roundtrip(&r, "{\"v\":1,\"id\":5,\"cmd\":\"echo\"}", 5, NULL);
	expect(raw_read(&idle[1]), NULL_ID, "ETIMEDOUT", "evicted client told why");
	RT_CHECK(raw_closed(&idle[1]), "evicted client closed");
	roundtrip(&idle[0], "{\"v\":1,\"id\":6,\"cmd\":\"echo\"}", 6, NULL);
	raw_close(&r);
	for (i = 0; i < MAX; i++)
		raw_close(&idle[i]);
	srv_wait_idle(t);
	srv_stop(t, &st);
	RT_CHECK(st.evicted == 1 && st.rejected == 1, "evicted %llu rejected %llu",
			(unsigned long long)st.evicted, (unsigned long long)st.rejected);
}

/* A client that does not read must not hold up the others; its replies arrive intact. */
static void
test_buffering(void)
{
	enum { REQS = 24 };
	struct srv_thread *t = srv_start(NULL);
	struct raw slow, fast;
	struct timespec a, b;
	int i;

	if (t == NULL || raw_open(&slow) != 0 || raw_open(&fast) != 0) {
		RT_CHECK(0, "setup");
		srv_stop(t, NULL);
		return;
	}
	for (i = 0; i < REQS; i++) {
		char line[64];

		snprintf(line, sizeof(line), "{\"v\":1,\"id\":%d,\"cmd\":\"big\"}\n", i);
		raw_sends(&slow, line);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	roundtrip(&fast, "{\"v\":1,\"id\":1,\"cmd\":\"echo\"}", 1, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	RT_CHECK(b.tv_sec - a.tv_sec < 5, "other client waited %ld s", (long)(b.tv_sec - a.tv_sec));
	for (i = 0; i < REQS; i++) {
		json_t *rep = raw_read(&slow);

		RT_CHECK(json_string_length(json_object_get(rep, "data")) == 256 * 1024,
				"big reply %d intact", i);
		expect(rep, i, NULL, "big");
	}
	raw_close(&slow);
	raw_close(&fast);
	srv_stop(t, NULL);
}

static void
test_client_api(void)
{
	struct srv_thread *t;
	struct roce_ctl_client *c;
	json_t *args, *rep = NULL;
	char missing[160];
	int rc;

	snprintf(missing, sizeof(missing), "%s/none.sock", tmpdir);
	c = roce_ctl_client_connect(missing, 100);
	RT_CHECK(c == NULL && errno == ENOENT, "connect to nothing: %s", strerror(errno));
	memset(missing, 'a', sizeof(missing) - 1);
	missing[sizeof(missing) - 1] = '\0';
	c = roce_ctl_client_connect(missing, 100);
	RT_CHECK(c == NULL && errno == ENAMETOOLONG, "long path");

	t = srv_start(NULL);
	c = roce_ctl_client_connect(sock_path, 1000);
	RT_CHECK(c != NULL, "connect");
	if (c == NULL) {
		srv_stop(t, NULL);
		return;
	}
	/* A timed-out request's late reply is skipped by the next request. */
	args = json_pack("{s:i}", "ms", 300);
	rc = roce_ctl_client_request(c, "sleep", args, &rep, 50);
	RT_CHECK(rc == -ETIMEDOUT, "timeout: %d", rc);
	json_decref(args);
	args = json_pack("{s:i}", "a", 1);
	RT_CHECK(roce_ctl_client_request(c, "add", args, &rep, 2000) == 0, "after timeout");
	expect(rep, 2, NULL, "reply after a timed-out one");
	RT_CHECK(roce_ctl_client_request(c, "add", json_null(), &rep, 100) == -EINVAL,
			"args not an object");
	RT_CHECK(roce_ctl_client_request(c, "\xff", NULL, &rep, 100) == -EINVAL, "cmd not UTF-8");
	/* The server goes away: the client hears about it. */
	srv_stop(t, NULL);
	rc = roce_ctl_client_request(c, "add", args, &rep, 1000);
	RT_CHECK(rc == -ECONNRESET || rc == -EPIPE, "server gone: %d", rc);
	json_decref(args);
	roce_ctl_client_close(c);
	roce_ctl_client_close(NULL);
}

static void
test_socket_file(void)
{
	const struct roce_ctl_cmd dup[] = { { "a", h_echo, "", NULL }, { "a", h_echo, "", NULL } };
	const struct roce_ctl_cmd nofn[] = { { "a", NULL, "", NULL } };
	struct roce_ctl_conf conf = { .mode = 0600 };
	struct roce_ctl_server *s1, *s2;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat stb;
	mode_t old;
	int fd;

	/* Exactly 0660 whatever the umask. */
	old = umask(0077);
	s1 = roce_ctl_server_create(sock_path, cmds, NB_CMDS, NULL, NULL);
	umask(old);
	RT_CHECK(s1 != NULL, "create");
	RT_CHECK(stat(sock_path, &stb) == 0 && S_ISSOCK(stb.st_mode) &&
			(stb.st_mode & 07777) == 0660, "mode %o", stb.st_mode & 07777);
	/* A live socket is not taken over. */
	s2 = roce_ctl_server_create(sock_path, cmds, NB_CMDS, NULL, NULL);
	RT_CHECK(s2 == NULL && errno == EADDRINUSE, "second server: %s", strerror(errno));
	RT_CHECK(roce_ctl_socket_owner(sock_path) == (int)getpid(), "owner: %d",
			roce_ctl_socket_owner(sock_path));
	roce_ctl_server_destroy(s1);
	RT_CHECK(roce_ctl_socket_owner(sock_path) == -ENOENT, "no owner once removed");
	RT_CHECK(stat(sock_path, &stb) != 0 && errno == ENOENT, "socket file removed");

	/* A stale one (its server died) is replaced; the mode is configurable. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(sa.sun_path, sock_path);
	RT_CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "bind stale");
	close(fd);
	RT_CHECK(roce_ctl_socket_owner(sock_path) == -ECONNREFUSED, "a stale socket has no owner");
	s1 = roce_ctl_server_create(sock_path, cmds, NB_CMDS, NULL, &conf);
	RT_CHECK(s1 != NULL, "replace stale: %s", strerror(errno));
	RT_CHECK(stat(sock_path, &stb) == 0 && (stb.st_mode & 07777) == 0600, "mode 0600");
	roce_ctl_server_destroy(s1);

	/* Not a socket: left alone. */
	fd = open(sock_path, O_CREAT | O_WRONLY, 0644);
	close(fd);
	s1 = roce_ctl_server_create(sock_path, cmds, NB_CMDS, NULL, NULL);
	RT_CHECK(s1 == NULL && errno == EEXIST, "regular file: %s", strerror(errno));
	RT_CHECK(stat(sock_path, &stb) == 0 && S_ISREG(stb.st_mode), "file kept");
	unlink(sock_path);

	RT_CHECK(roce_ctl_server_create(sock_path, dup, 2, NULL, NULL) == NULL && errno == EINVAL,
			"duplicate names");
	RT_CHECK(roce_ctl_server_create(sock_path, nofn, 1, NULL, NULL) == NULL &&
			errno == EINVAL, "no handler");
	RT_CHECK(roce_ctl_server_create("/nonexistent-dir/x.sock", cmds, NB_CMDS, NULL,
			NULL) == NULL && errno == ENOENT, "bad directory: %s", strerror(errno));
	roce_ctl_server_destroy(NULL);
}

/* Single thread: the server answers while the client is not reading, then flush drains. */
static atomic_uint nb_closed;
static _Atomic uint64_t closed_ids[4];

static void
on_close(void *arg, uint64_t client)
{
	unsigned int i = atomic_fetch_add(&nb_closed, 1);

	(void)arg;
	if (i < sizeof(closed_ids) / sizeof(closed_ids[0]))
		atomic_store(&closed_ids[i], client);
}

static uint64_t
whoami(struct roce_ctl_client *c)
{
	json_t *rep = NULL;
	uint64_t id = 0;

	if (c != NULL && roce_ctl_client_request(c, "whoami", NULL, &rep, 1000) == 0)
		id = (uint64_t)json_integer_value(json_object_get(rep, "client"));
	json_decref(rep);
	return id;
}

/* Handlers learn which client asks; on_close names each client that goes, not at destroy. */
static void
test_client_ids(void)
{
	struct roce_ctl_conf conf = { .on_close = on_close };
	struct srv_thread *t = srv_start(&conf);
	struct roce_ctl_client *c1, *c2;
	uint64_t id1, id2;
	int i;

	if (t == NULL)
		return;
	whoami_srv = t->srv;
	c1 = roce_ctl_client_connect(sock_path, 1000);
	c2 = roce_ctl_client_connect(sock_path, 1000);
	id1 = whoami(c1);
	id2 = whoami(c2);
	RT_CHECK(id1 != 0 && id2 != 0 && id1 != id2 && whoami(c1) == id1,
			"client ids %lu %lu", (unsigned long)id1, (unsigned long)id2);
	RT_CHECK(roce_ctl_server_client(t->srv) == 0, "no client outside handlers");
	roce_ctl_client_close(c1);
	for (i = 0; i < 400 && atomic_load(&nb_closed) == 0; i++)
		usleep(5000);
	RT_CHECK(atomic_load(&nb_closed) == 1 && atomic_load(&closed_ids[0]) == id1,
			"on_close: %u calls, first for %lu (want %lu)", atomic_load(&nb_closed),
			(unsigned long)atomic_load(&closed_ids[0]), (unsigned long)id1);
	srv_stop(t, NULL);
	RT_CHECK(atomic_load(&nb_closed) == 1, "no on_close when the server is destroyed");
	roce_ctl_client_close(c2);
	whoami_srv = NULL;
}

static void
test_flush(void)
{
	struct roce_ctl_server *srv = roce_ctl_server_create(sock_path, cmds, NB_CMDS, NULL, NULL);
	struct raw r;
	int i, n = 0, rc;

	if (srv == NULL || raw_open(&r) != 0) {
		RT_CHECK(0, "setup");
		roce_ctl_server_destroy(srv);
		return;
	}
	for (i = 0; i < 4; i++)
		raw_sends(&r, "{\"v\":1,\"id\":1,\"cmd\":\"big\"}\n");
	for (i = 0; i < 50 && n < 4; i++) {
		rc = roce_ctl_server_poll(srv, 10);
		RT_CHECK(rc >= 0, "poll %d", rc);
		n += rc > 0 ? rc : 0;
	}
	RT_CHECK(n == 4, "answered %d", n);
	/* 1 MiB of replies cannot all be in the socket yet: flush times out, then drains. */
	RT_CHECK(roce_ctl_server_flush(srv, 20) == -ETIMEDOUT, "flush with a stalled reader");
	for (i = 0, n = 0; i < 2000 && n < 4; i++) {
		rc = roce_ctl_server_flush(srv, 1);
		while (raw_poll(&r) && n < 4) {
			expect(raw_read(&r), 1, NULL, "big");
			n++;
		}
	}
	RT_CHECK(n == 4 && rc == 0, "read %d replies, flush %d", n, rc);
	RT_CHECK(roce_ctl_server_flush(srv, 1000) == 0, "flush");
	raw_close(&r);
	roce_ctl_server_destroy(srv);
}

int
main(void)
{
	strcpy(tmpdir, "/tmp/roce-ctl-XXXXXX");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(sock_path, sizeof(sock_path), "%s/ctl.sock", tmpdir);
	RT_RUN(test_socket_file);
	RT_RUN(test_good);
	RT_RUN(test_malformed);
	RT_RUN(test_args);
	RT_RUN(test_handler_errors);
	RT_RUN(test_line_limit);
	RT_RUN(test_abrupt);
	RT_RUN(test_max_clients);
	RT_RUN(test_reap_backlog);
	RT_RUN(test_idle_evict);
	RT_RUN(test_buffering);
	RT_RUN(test_client_api);
	RT_RUN(test_flush);
	RT_RUN(test_client_ids);
	unlink(sock_path);
	rmdir(tmpdir);
	return rt_report("ctl");
}
