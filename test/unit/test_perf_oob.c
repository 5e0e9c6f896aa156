/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perftest OOB exchange tests against the perftest 6.06 captures in
 * ../shared/captures/perftest-oob/ (every .flow.json):
 *  (a) every captured message decodes and re-encodes byte-identically, and the size sequence of
 *      each direction is the one roce_perf_oob_plan() gives for the test;
 *  (b) each side of each capture is replayed (a thread plays the recorded peer over a
 *      socketpair) against our driver in the other role, whose bytes must equal the captured
 *      ones (the server's report values excepted: perftest sends stack garbage, we send zeros);
 *  (c) hostile peers: early close at every message boundary, garbage and wrong sizes, old and
 *      newer versions; each must end with the expected error, quickly and without a crash.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "roce_perf_oob.h"
#include "roce_test.h"

#define MAX_MSGS 64
#define MAX_FLOWS 32
#define MSG_MAX 128
#define TIMEOUT_MS 300		/* our driver, per message */
#define PEER_TIMEOUT_MS 3000	/* the recorded peer, per message */

struct msg {
	bool c2s;
	uint16_t len;
	uint8_t data[MSG_MAX];
};

struct flow {
	char name[64];
	enum roce_perf_test test;
	unsigned int nqps;
	unsigned int nb;
	struct msg msgs[MAX_MSGS];
};

static struct flow flows[MAX_FLOWS];
static unsigned int nb_flows;

/* Capture name fragment -> test; "send_bw_ud" is a send_bw. */
static const struct {
	const char *frag;
	enum roce_perf_test test;
} name_tests[] = {
	{ "write_bw", ROCE_PERF_WRITE_BW }, { "read_bw", ROCE_PERF_READ_BW },
	{ "atomic_bw", ROCE_PERF_ATOMIC_BW }, { "send_bw", ROCE_PERF_SEND_BW },
	{ "write_lat", ROCE_PERF_WRITE_LAT }, { "read_lat", ROCE_PERF_READ_LAT },
	{ "send_lat", ROCE_PERF_SEND_LAT },
};

static int
hex_to_bytes(const char *hex, uint8_t *out, size_t len)
{
	size_t i;
	unsigned int b;

	if (strlen(hex) != 2 * len)
		return -1;
	for (i = 0; i < len; i++) {
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = (uint8_t)b;
	}
	return 0;
}

/* Distinct key messages one direction sends = the number of QPs. */
static unsigned int
count_qps(const struct flow *f)
{
	unsigned int i, j, n = 0;
	bool seen;

	for (i = 0; i < f->nb; i++) {
		if (!f->msgs[i].c2s || f->msgs[i].len != ROCE_PERF_OOB_KEY_LEN)
			continue;
		seen = false;
		for (j = 0; j < i; j++)
			if (f->msgs[j].c2s && f->msgs[j].len == ROCE_PERF_OOB_KEY_LEN &&
					memcmp(f->msgs[j].data, f->msgs[i].data,
						ROCE_PERF_OOB_KEY_LEN) == 0)
				seen = true;
		n += !seen;
	}
	return n;
}

static int
load_flow(const char *path, const char *name, struct flow *f)
{
	json_t *root, *m;
	json_error_t err;
	size_t i;
	unsigned int t;
	int ret = -1;

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%.*s", (int)(strlen(name) - 10), name);
	f->test = ROCE_PERF_TEST_MAX;
	for (t = 0; t < RTE_DIM(name_tests); t++)
		if (strstr(name, name_tests[t].frag) != NULL)
			f->test = name_tests[t].test;
	root = json_load_file(path, 0, &err);
	if (root == NULL || !json_is_array(root) || json_array_size(root) > MAX_MSGS)
		goto out;
	json_array_foreach(root, i, m) {
		const char *dir = json_string_value(json_object_get(m, "dir"));
		const char *hex = json_string_value(json_object_get(m, "hex"));
		json_int_t len = json_integer_value(json_object_get(m, "len"));

		if (dir == NULL || hex == NULL || len <= 0 || len > MSG_MAX)
			goto out;
		f->msgs[i].c2s = strcmp(dir, "c->s") == 0;
		f->msgs[i].len = (uint16_t)len;
		if (hex_to_bytes(hex, f->msgs[i].data, (size_t)len) != 0)
			goto out;
	}
	f->nb = (unsigned int)json_array_size(root);
	f->nqps = count_qps(f);
	ret = 0;
out:
	json_decref(root);
	return ret;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
load_flows(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	char *names[MAX_FLOWS];
	unsigned int i, n = 0;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/perftest-oob", rt_captures_dir());
	d = opendir(dir);
	RT_CHECK(d != NULL, "cannot open %s", dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL && n < MAX_FLOWS) {
		size_t l = strlen(de->d_name);

		if (l > 10 && strcmp(de->d_name + l - 10, ".flow.json") == 0)
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		RT_CHECK(load_flow(path, names[i], &flows[nb_flows]) == 0, "bad flow %s", path);
		RT_CHECK(flows[nb_flows].test < ROCE_PERF_TEST_MAX, "unknown test %s", names[i]);
		RT_CHECK(flows[nb_flows].nqps >= 1, "%s: no key", names[i]);
		nb_flows++;
		free(names[i]);
	}
	RT_CHECK(nb_flows >= 12, "only %u flows in %s", nb_flows, dir);
}

/* ---- (a) decode + re-encode ------------------------------------------------------------ */

/* Decode and re-encode one message of size @len at report index @rep; @return 0 if identical. */
static int
roundtrip(const uint8_t *data, uint16_t len, unsigned int rep)
{
	struct roce_perf_key key;
	uint8_t out[MSG_MAX];
	uint32_t v32;
	uint64_t v64;
	uint8_t mtu;
	double d;
	int ret = -1;

	switch (len) {
	case ROCE_PERF_OOB_VERSION_LEN:
		if (roce_perf_oob_version_decode(data, len, &v32) == 0)
			ret = roce_perf_oob_version_encode(out, len, v32);
		break;
	case ROCE_PERF_OOB_SYS_LEN:
		if (roce_perf_oob_u32_decode(data, len, &v32) == 0)
			ret = roce_perf_oob_u32_encode(out, len, v32);
		break;
	case ROCE_PERF_OOB_MTU_LEN:
		if (roce_perf_oob_mtu_decode(data, len, &mtu) == 0)
			ret = roce_perf_oob_mtu_encode(out, len, mtu);
		break;
	case ROCE_PERF_OOB_KEY_LEN:
		if (roce_perf_oob_key_decode(data, len, &key) == 0)
			ret = roce_perf_oob_key_encode(out, len, &key);
		break;
	case ROCE_PERF_OOB_REPORT_LEN:
		/* size and iters are integers, the bandwidths and rate doubles */
		if (rep < 2 && roce_perf_oob_u64_decode(data, len, &v64) == 0)
			ret = roce_perf_oob_u64_encode(out, len, v64);
		else if (rep >= 2 && roce_perf_oob_double_decode(data, len, &d) == 0)
			ret = roce_perf_oob_double_encode(out, len, d);
		break;
	case ROCE_PERF_OOB_DONE_LEN:
		ret = roce_perf_oob_done_decode(data, len);
		if (ret == 0)
			ret = roce_perf_oob_done_encode(out, len);
		break;
	default:
		break;
	}
	return ret == 0 && memcmp(out, data, len) == 0 ? 0 : -1;
}

static void
check_flow_codec(const struct flow *f, bool c2s)
{
	uint16_t plan[ROCE_PERF_OOB_MAX_MSGS];
	unsigned int i, k = 0, rep = 0;
	int n;

	n = roce_perf_oob_plan(f->test, f->nqps, plan, RTE_DIM(plan), NULL);
	RT_CHECK(n > 0, "%s: plan %d", f->name, n);
	for (i = 0; i < f->nb; i++) {
		const struct msg *m = &f->msgs[i];

		if (m->c2s != c2s)
			continue;
		RT_CHECK(k < (unsigned int)n && plan[k] == m->len, "%s %s msg %u: len %u plan %u",
			f->name, c2s ? "c->s" : "s->c", k, m->len, k < (unsigned int)n ? plan[k] : 0);
		RT_CHECK(roundtrip(m->data, m->len, rep) == 0, "%s %s msg %u (len %u) roundtrip",
			f->name, c2s ? "c->s" : "s->c", k, m->len);
		rep += m->len == ROCE_PERF_OOB_REPORT_LEN;
		k++;
	}
	RT_CHECK(k == (unsigned int)n, "%s: %u messages, plan %d", f->name, k, n);
}

static void
test_codec_captures(void)
{
	unsigned int i;

	for (i = 0; i < nb_flows; i++) {
		check_flow_codec(&flows[i], true);
		check_flow_codec(&flows[i], false);
	}
}

/* ---- (b) replay ------------------------------------------------------------------------ */

/* The recorded peer, run by a thread on one end of a socketpair. */
struct peer {
	const struct flow *f;
	int fd;
	bool is_client;			/* the peer plays the captured client */
	unsigned int close_after;	/* peer messages written before it closes */
	struct msg got[MAX_MSGS];	/* what our driver sent */
	unsigned int nb_got;
	size_t extra;			/* bytes after our last expected message */
};

/* The peer sleeps peer_delay_ms before writing its message number peer_delay_at (from 0). */
static unsigned int peer_delay_at = UINT_MAX;
static unsigned int peer_delay_ms;

static int
peer_read(int fd, uint8_t *buf, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		if (poll(&pfd, 1, PEER_TIMEOUT_MS) <= 0)
			return -1;
		n = recv(fd, buf + got, len - got, 0);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static void *
peer_main(void *arg)
{
	struct peer *p = arg;
	unsigned int i, written = 0;
	uint8_t buf[256];
	ssize_t n;

	for (i = 0; i < p->f->nb; i++) {
		const struct msg *m = &p->f->msgs[i];

		if (m->c2s == p->is_client) {
			if (written == peer_delay_at)
				usleep(peer_delay_ms * 1000);
			if (written++ == p->close_after)
				break;
			/* the done may cross a peer that already closed: ignore that */
			if (send(p->fd, m->data, m->len, MSG_NOSIGNAL) != m->len &&
					m->len != ROCE_PERF_OOB_DONE_LEN)
				break;
			continue;
		}
		if (peer_read(p->fd, p->got[p->nb_got].data, m->len) != 0)
			break;
		p->got[p->nb_got].len = m->len;
		p->got[p->nb_got++].c2s = m->c2s;
	}
	if (i == p->f->nb) {
		while ((n = recv(p->fd, buf, sizeof(buf), 0)) > 0)
			p->extra += (size_t)n;
	}
	close(p->fd);
	return NULL;
}

static int traffic_timeout_ms;

/* Our side's inputs, taken from the captured messages of the role we play. */
struct ours {
	struct roce_perf_oob_cfg cfg;
	struct roce_perf_key keys[ROCE_PERF_OOB_MAX_QPS];
	struct roce_perf_key peer_keys[ROCE_PERF_OOB_MAX_QPS];
	unsigned int nb_peer_keys;
	unsigned int connects;
	unsigned int traffics;
	bool keys_ok;
};

static int
hook_connect(void *arg, const struct roce_perf_key *peer, unsigned int nqps)
{
	struct ours *o = arg;

	o->connects++;
	o->keys_ok = nqps == o->nb_peer_keys &&
		memcmp(peer, o->peer_keys, nqps * sizeof(*peer)) == 0;
	return 0;
}

static int
hook_traffic(void *arg, struct roce_perf_report *rep)
{
	struct ours *o = arg;

	(void)rep;	/* keep the report set in cfg: it is the captured one */
	o->traffics++;
	return 0;
}

/* Distinct keys of one direction, in order of first appearance. */
static unsigned int
collect_keys(const struct flow *f, bool c2s, struct roce_perf_key *keys)
{
	struct roce_perf_key k;
	unsigned int i, j, n = 0;

	for (i = 0; i < f->nb; i++) {
		memset(&k, 0, sizeof(k));	/* padding too: keys are compared with memcmp */
		if (f->msgs[i].c2s != c2s || f->msgs[i].len != ROCE_PERF_OOB_KEY_LEN ||
				roce_perf_oob_key_decode(f->msgs[i].data, ROCE_PERF_OOB_KEY_LEN,
					&k) != 0)
			continue;
		for (j = 0; j < n && memcmp(&keys[j], &k, sizeof(k)) != 0; j++)
			;
		if (j == n && n < ROCE_PERF_OOB_MAX_QPS)
			keys[n++] = k;
	}
	return n;
}

static void
setup_ours(const struct flow *f, enum roce_perf_role role, struct ours *o)
{
	bool c2s = role == ROCE_PERF_CLIENT;
	const struct msg *sys[4];
	unsigned int i, n = 0, rep = 0;
	uint8_t *fields[ROCE_PERF_OOB_NB_REPORT];

	memset(o, 0, sizeof(*o));
	fields[0] = (uint8_t *)&o->cfg.report.size;
	fields[1] = (uint8_t *)&o->cfg.report.iters;
	fields[2] = (uint8_t *)&o->cfg.report.bw_peak;
	fields[3] = (uint8_t *)&o->cfg.report.bw_avg;
	fields[4] = (uint8_t *)&o->cfg.report.msg_rate;
	for (i = 0; i < f->nb && n < 4; i++)
		if (f->msgs[i].c2s == c2s)
			sys[n++] = &f->msgs[i];
	RT_CHECK(n == 4, "%s: short prologue", f->name);
	if (n < 4)
		return;
	roce_perf_oob_u32_decode(sys[1]->data, sys[1]->len, &o->cfg.local.page_size);
	roce_perf_oob_u32_decode(sys[2]->data, sys[2]->len, &o->cfg.local.cache_line);
	roce_perf_oob_mtu_decode(sys[3]->data, sys[3]->len, &o->cfg.local.mtu);
	/* a client sends its measured report; as a server we send zeros */
	for (i = 0; i < f->nb && c2s; i++) {
		if (f->msgs[i].c2s && f->msgs[i].len == ROCE_PERF_OOB_REPORT_LEN &&
				rep < ROCE_PERF_OOB_NB_REPORT) {
			uint64_t v;

			roce_perf_oob_u64_decode(f->msgs[i].data, 8, &v);
			memcpy(fields[rep++], &v, sizeof(v));
		}
	}
	collect_keys(f, c2s, o->keys);
	o->nb_peer_keys = collect_keys(f, !c2s, o->peer_keys);
	o->cfg.test = f->test;
	o->cfg.role = role;
	o->cfg.nqps = f->nqps;
	o->cfg.timeout_ms = TIMEOUT_MS;
	o->cfg.traffic_timeout_ms = traffic_timeout_ms;
	o->cfg.keys = o->keys;
	o->cfg.hooks.connect = hook_connect;
	o->cfg.hooks.traffic = hook_traffic;
	o->cfg.hooks.arg = o;
}

/* Run our driver in @role against the recorded other side of @f; @return our driver's result. */
static int
replay(const struct flow *f, enum roce_perf_role role, unsigned int close_after,
		struct peer *p, struct ours *o, struct roce_perf_oob_result *res)
{
	pthread_t th;
	int sv[2], ret;

	setup_ours(f, role, o);
	memset(p, 0, sizeof(*p));
	p->f = f;
	p->is_client = role == ROCE_PERF_SERVER;
	p->close_after = close_after;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return -errno;
	p->fd = sv[1];
	if (pthread_create(&th, NULL, peer_main, p) != 0) {
		close(sv[0]);
		close(sv[1]);
		return -EAGAIN;
	}
	ret = roce_perf_oob_run(sv[0], &o->cfg, res);
	/* we are done: let the peer see EOF, as perftest's close() does */
	shutdown(sv[0], SHUT_WR);
	pthread_join(th, NULL);
	close(sv[0]);
	return ret;
}

static bool
all_zero(const uint8_t *p, size_t n)
{
	while (n-- > 0)
		if (*p++ != 0)
			return false;
	return true;
}

static void
check_replay(const struct flow *f, enum roce_perf_role role)
{
	static struct roce_perf_oob_result res;
	static struct peer p;
	static struct ours o;
	bool c2s = role == ROCE_PERF_CLIENT;
	const char *rn = c2s ? "client" : "server";
	unsigned int i, k = 0;
	int ret;

	ret = replay(f, role, UINT_MAX, &p, &o, &res);
	RT_CHECK(ret == 0, "%s as %s: run %d (%s)", f->name, rn, ret, strerror(-ret));
	RT_CHECK(o.connects == 1 && o.traffics == 1, "%s as %s: hooks %u/%u", f->name, rn,
		o.connects, o.traffics);
	RT_CHECK(o.keys_ok, "%s as %s: peer keys differ", f->name, rn);
	RT_CHECK(res.peer.version == 606 && res.agreed.page_size == 4096 &&
		res.agreed.cache_line == 64 && res.agreed.mtu == 3, "%s as %s: prologue",
		f->name, rn);
	RT_CHECK(p.extra == 0, "%s as %s: %zu extra bytes", f->name, rn, p.extra);
	for (i = 0; i < f->nb; i++) {
		const struct msg *m = &f->msgs[i];
		const struct msg *g = &p.got[k];

		if (m->c2s != c2s)
			continue;
		if (k >= p.nb_got) {
			RT_CHECK(false, "%s as %s: missing message %u", f->name, rn, k);
			break;
		}
		RT_CHECK(g->len == m->len, "%s as %s: msg %u len %u != %u", f->name, rn, k,
			g->len, m->len);
		/* a perftest server's reports are stack garbage: ours are zeros */
		if (!c2s && m->len == ROCE_PERF_OOB_REPORT_LEN)
			RT_CHECK(all_zero(g->data, g->len), "%s: server report not zero", f->name);
		else
			RT_CHECK(memcmp(g->data, m->data, m->len) == 0, "%s as %s: msg %u differs",
				f->name, rn, k);
		k++;
	}
	RT_CHECK(k == p.nb_got, "%s as %s: %u sent, %u captured", f->name, rn, p.nb_got, k);
	if (!c2s && f->test <= ROCE_PERF_ATOMIC_BW)
		RT_CHECK(memcmp(&res.peer_report, &o.cfg.report, sizeof(res.peer_report)) != 0 &&
			res.peer_report.iters != 0, "%s: client report not received", f->name);
}

static void
test_replay_captures(void)
{
	unsigned int i;

	for (i = 0; i < nb_flows; i++) {
		check_replay(&flows[i], ROCE_PERF_CLIENT);
		check_replay(&flows[i], ROCE_PERF_SERVER);
	}
}

/* ---- (c) hostile peers ------------------------------------------------------------------ */

static const struct flow *
find_flow(const char *frag)
{
	unsigned int i;

	for (i = 0; i < nb_flows; i++)
		if (strstr(flows[i].name, frag) != NULL)
			return &flows[i];
	return NULL;
}

/* The @nth message of size @len the given direction sends. */
static struct msg *
nth_msg(struct flow *f, bool c2s, uint16_t len, unsigned int nth)
{
	unsigned int i;

	for (i = 0; i < f->nb; i++)
		if (f->msgs[i].c2s == c2s && f->msgs[i].len == len && nth-- == 0)
			return &f->msgs[i];
	return NULL;
}

static void
check_early_close(const char *frag)
{
	static struct roce_perf_oob_result res;
	static struct peer p;
	static struct ours o;
	const struct flow *f = find_flow(frag);
	enum roce_perf_role role;
	unsigned int i, k, np, nd;
	int ret;

	RT_CHECK(f != NULL, "no capture %s", frag);
	if (f == NULL)
		return;
	for (role = ROCE_PERF_CLIENT; role <= ROCE_PERF_SERVER; role++) {
		bool peer_c2s = role == ROCE_PERF_SERVER;

		np = nd = 0;
		for (i = 0; i < f->nb; i++) {
			np += f->msgs[i].c2s == peer_c2s;
			nd += f->msgs[i].c2s == peer_c2s &&
				f->msgs[i].len == ROCE_PERF_OOB_DONE_LEN;
		}
		for (k = 0; k <= np; k++) {
			ret = replay(f, role, k, &p, &o, &res);
			/* the peer's done is never read, so only closing before it fails */
			if (k < np - nd)
				RT_CHECK(ret == -ECONNRESET || ret == -EPIPE,
					"%s role %d close after %u: %d", f->name, role, k, ret);
			else
				RT_CHECK(ret == 0, "%s role %d close after %u (of %u): %d", f->name,
					role, k, np, ret);
		}
	}
}

static void
test_early_close(void)
{
	check_early_close("write_bw");
	check_early_close("write_lat");
	check_early_close("send_bw");
	check_early_close("read_lat");
}

/* A mutation of one message the recorded peer sends, and our driver's expected result. */
struct bad_case {
	const char *what;
	uint16_t len;		/* which message: size and index among that size */
	unsigned int nth;
	uint16_t new_len;	/* 0: unchanged */
	unsigned int off;	/* byte to change */
	const char *bytes;	/* written at off (with its NUL when new_len says so) */
	size_t nbytes;
	int expect;
	unsigned int sent[2];	/* indexed by our role */
};

/* sent: messages our driver sends before it stops, as client and as server. Like perftest, a
 * server answers before it parses, so only a timeout leaves it one message behind; the page and
 * cache line checks come after the MTU exchange. */
static const struct bad_case bad_cases[] = {
	{ "version 5.60", 16, 0, 0, 0, "5.60", 4, -EPROTO, { 1, 1 } },
	{ "version 5.6", 16, 0, 0, 0, "5.6\0", 4, -EPROTO, { 1, 1 } },
	{ "version 6.28", 16, 0, 0, 0, "6.28", 4, -EPROTONOSUPPORT, { 1, 1 } },
	{ "version 7.00", 16, 0, 0, 0, "7.00", 4, -EPROTONOSUPPORT, { 1, 1 } },
	{ "version garbage", 16, 0, 0, 0, "abcd", 4, -EPROTO, { 1, 1 } },
	{ "version trailing", 16, 0, 0, 8, "x", 1, -EPROTO, { 1, 1 } },
	{ "version short", 16, 0, 10, 0, "", 0, -ETIMEDOUT, { 1, 0 } },
	{ "page size 0", 4, 0, 0, 0, "\0\0\0\0", 4, -EPROTO, { 4, 4 } },
	{ "page size negative", 4, 0, 0, 0, "\x80\0\0\0", 4, -EPROTO, { 2, 2 } },
	{ "page size 3", 4, 0, 0, 0, "\0\0\0\3", 4, -EPROTO, { 4, 4 } },
	{ "cache line 0", 4, 1, 0, 0, "\0\0\0\0", 4, -EPROTO, { 4, 4 } },
	{ "mtu 9", 2, 0, 0, 0, "9", 1, -EPROTO, { 4, 4 } },
	{ "mtu 33", 2, 0, 0, 0, "33", 2, -EPROTO, { 4, 4 } },
	{ "mtu 3 bytes", 2, 0, 3, 0, "3\0\0", 3, -EPROTO, { 5, 5 } },
	{ "key uppercase", 108, 0, 0, 17, "A", 1, -EPROTO, { 5, 5 } },
	{ "key bad digit", 108, 0, 0, 0, "g", 1, -EPROTO, { 5, 5 } },
	{ "key no colon", 108, 1, 0, 4, "-", 1, -EPROTO, { 6, 6 } },
	{ "key no NUL", 108, 2, 0, 107, ":", 1, -EPROTO, { 7, 7 } },
	{ "key gid garbage", 108, 2, 0, 51, " ", 1, -EPROTO, { 7, 7 } },
	{ "key post-traffic", 108, 4, 0, 106, "x", 1, -EPROTO, { 14, 14 } },
	{ "key short", 108, 0, 100, 0, "", 0, -ETIMEDOUT, { 5, 4 } },
};

static void
check_bad_case(const struct bad_case *bc, enum roce_perf_role role)
{
	static struct roce_perf_oob_result res;
	static struct flow f;
	static struct peer p;
	static struct ours o;
	const struct flow *base = find_flow("01_write_bw");
	struct msg *m;
	int ret;

	if (base == NULL)
		return;
	f = *base;
	m = nth_msg(&f, role == ROCE_PERF_SERVER, bc->len, bc->nth);
	RT_CHECK(m != NULL, "%s: no message", bc->what);
	if (m == NULL)
		return;
	if (bc->new_len != 0)
		m->len = bc->new_len;
	memcpy(m->data + bc->off, bc->bytes, bc->nbytes);
	ret = replay(&f, role, UINT_MAX, &p, &o, &res);
	RT_CHECK(ret == bc->expect, "%s as %s: %d (%s), expected %d", bc->what,
		role == ROCE_PERF_CLIENT ? "client" : "server", ret, strerror(-ret), bc->expect);
	/* in particular a refused version must stop us before anything else is sent */
	RT_CHECK(p.nb_got == bc->sent[role], "%s as %s: we sent %u messages, not %u", bc->what,
		role == ROCE_PERF_CLIENT ? "client" : "server", p.nb_got, bc->sent[role]);
}

static void
test_hostile(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad_cases); i++) {
		check_bad_case(&bad_cases[i], ROCE_PERF_CLIENT);
		check_bad_case(&bad_cases[i], ROCE_PERF_SERVER);
	}
}

/* A peer whose traffic lasts longer than the per-message timeout needs traffic_timeout_ms. */
static void
test_traffic_timeout(void)
{
	static struct roce_perf_oob_result res;
	static struct peer p;
	static struct ours o;
	const struct flow *f = find_flow("01_write_bw");
	unsigned int at = 0;
	int ret;

	if (f == NULL)
		return;
	RT_CHECK(roce_perf_oob_plan(f->test, f->nqps, NULL, 0, &at) > 0 && at == 7, "at %u", at);
	peer_delay_at = at;
	peer_delay_ms = 3 * TIMEOUT_MS;
	/* the peer client is still "sending": our server must wait at the sync key */
	ret = replay(f, ROCE_PERF_SERVER, UINT_MAX, &p, &o, &res);
	RT_CHECK(ret == -ETIMEDOUT, "no traffic timeout: %d", ret);
	traffic_timeout_ms = 10 * TIMEOUT_MS;
	ret = replay(f, ROCE_PERF_SERVER, UINT_MAX, &p, &o, &res);
	RT_CHECK(ret == 0, "traffic timeout: %d", ret);
	traffic_timeout_ms = 0;
	peer_delay_at = UINT_MAX;
}

/* ---- pure codec cases ------------------------------------------------------------------- */

static const struct {
	const char *s;
	int ret;
	uint32_t version;
} version_cases[] = {
	{ "6.06", 0, 606 }, { "5.70", 0, 570 }, { "6.1", 0, 610 }, { "10.25", 0, 1025 },
	{ "6", -EPROTO, 0 }, { ".5", -EPROTO, 0 }, { "6.", -EPROTO, 0 }, { "", -EPROTO, 0 },
	{ "6.061", -EPROTO, 0 }, { "1234.5", -EPROTO, 0 }, { "-6.06", -EPROTO, 0 },
	{ " 6.06", -EPROTO, 0 }, { "6.06 ", -EPROTO, 0 }, { "6,06", -EPROTO, 0 },
	{ "6.0a", -EPROTO, 0 },
};

static void
test_codec_cases(void)
{
	static const uint8_t bw_peak[8] = { 0x40, 0x22, 0x35, 0xa3, 0xda, 0x8f, 0x01, 0x80 };
	struct roce_perf_key k = { .qpn = 0x1000000 };
	uint8_t buf[MSG_MAX];
	uint32_t v;
	uint8_t mtu;
	double d;
	unsigned int i;

	for (i = 0; i < RTE_DIM(version_cases); i++) {
		memset(buf, 0, 16);
		memcpy(buf, version_cases[i].s, strlen(version_cases[i].s));
		v = 0;
		RT_CHECK(roce_perf_oob_version_decode(buf, 16, &v) == version_cases[i].ret &&
			v == version_cases[i].version, "version \"%s\"", version_cases[i].s);
	}
	RT_CHECK(roce_perf_oob_version_check(569) == -EPROTO, "569");
	RT_CHECK(roce_perf_oob_version_check(570) == 0, "570");
	RT_CHECK(roce_perf_oob_version_check(627) == 0, "627");
	RT_CHECK(roce_perf_oob_version_check(628) == -EPROTONOSUPPORT, "628");
	/* every length but the right one is refused */
	for (i = 0; i < MSG_MAX; i++) {
		RT_CHECK(i == 16 || roce_perf_oob_version_decode(buf, i, &v) == -EINVAL, "%u", i);
		RT_CHECK(i == 4 || roce_perf_oob_u32_decode(buf, i, &v) == -EINVAL, "%u", i);
		RT_CHECK(i == 2 || roce_perf_oob_mtu_decode(buf, i, &mtu) == -EINVAL, "%u", i);
		RT_CHECK(i == 108 || roce_perf_oob_key_decode(buf, i, &k) == -EINVAL, "%u", i);
		RT_CHECK(i == 8 || roce_perf_oob_double_decode(buf, i, &d) == -EINVAL, "%u", i);
		RT_CHECK(i == 5 || roce_perf_oob_done_decode(buf, i) == -EINVAL, "%u", i);
		RT_CHECK(i == 108 || roce_perf_oob_key_encode(buf, i, &k) == -EINVAL, "%u", i);
	}
	RT_CHECK(roce_perf_oob_key_encode(buf, 108, &k) == -EINVAL, "qpn > 24 bits");
	RT_CHECK(roce_perf_oob_mtu_encode(buf, 2, 0) == -EINVAL, "mtu 0");
	RT_CHECK(roce_perf_oob_mtu_encode(buf, 2, 6) == -EINVAL, "mtu 6");
	RT_CHECK(roce_perf_oob_u32_encode(buf, 4, 0x80000000u) == -EINVAL, "u32 > INT32_MAX");
	RT_CHECK(roce_perf_oob_version_encode(buf, 16, 100000) == -EINVAL, "version too big");
	RT_CHECK(roce_perf_oob_done_decode("done", 5) == 0, "done");
	RT_CHECK(roce_perf_oob_done_decode("Done", 5) == -EPROTO, "Done");
	/* INDEX.md: 01's bw_peak 402235a3da8f0180 = 9.104766 */
	RT_CHECK(roce_perf_oob_double_decode(bw_peak, 8, &d) == 0 && d > 9.1047 && d < 9.1048,
		"bw_peak %f", d);
	RT_CHECK(roce_perf_oob_plan(ROCE_PERF_TEST_MAX, 1, NULL, 0, NULL) == -EINVAL, "plan");
	RT_CHECK(roce_perf_oob_plan(ROCE_PERF_WRITE_BW, 0, NULL, 0, NULL) == -EINVAL, "plan");
	RT_CHECK(roce_perf_oob_plan(ROCE_PERF_WRITE_BW, 1, (uint16_t *)buf, 2, NULL) == -ENOSPC,
		"plan");
	RT_CHECK(roce_perf_oob_plan(ROCE_PERF_WRITE_BW, 2, NULL, 0, NULL) == 17, "plan count");
}

/* Sizes and traffic points of the plans, as INDEX.md counts them. */
static void
test_plans(void)
{
	static const struct {
		enum roce_perf_test test;
		unsigned int nqps, nb, bytes, traffic_at;
	} plans[] = {
		{ ROCE_PERF_WRITE_BW, 1, 15, 611, 7 },
		{ ROCE_PERF_WRITE_BW, 2, 17, 827, 9 },
		{ ROCE_PERF_READ_BW, 1, 15, 611, 7 },
		{ ROCE_PERF_ATOMIC_BW, 1, 15, 611, 7 },
		{ ROCE_PERF_SEND_BW, 1, 10, 571, 8 },
		{ ROCE_PERF_SEND_LAT, 1, 10, 571, 8 },
		{ ROCE_PERF_READ_LAT, 1, 10, 571, 8 },
		{ ROCE_PERF_WRITE_LAT, 1, 8, 458, 8 },
	};
	uint16_t sizes[ROCE_PERF_OOB_MAX_MSGS];
	unsigned int i, j, bytes, at;
	int n;

	for (i = 0; i < RTE_DIM(plans); i++) {
		at = 0;
		n = roce_perf_oob_plan(plans[i].test, plans[i].nqps, sizes, RTE_DIM(sizes), &at);
		for (bytes = 0, j = 0; n > 0 && j < (unsigned int)n; j++)
			bytes += sizes[j];
		RT_CHECK(n == (int)plans[i].nb && bytes == plans[i].bytes &&
			at == plans[i].traffic_at, "%s q%u: %d msgs %u B traffic at %u",
			roce_perf_test_name(plans[i].test), plans[i].nqps, n, bytes, at);
	}
	RT_CHECK(roce_perf_oob_plan(ROCE_PERF_SEND_BW, ROCE_PERF_OOB_MAX_QPS, sizes,
		RTE_DIM(sizes), NULL) > 0, "max qps fits ROCE_PERF_OOB_MAX_MSGS");
}

int
main(void)
{
	load_flows();
	RT_RUN(test_codec_cases);
	RT_RUN(test_plans);
	RT_RUN(test_codec_captures);
	RT_RUN(test_replay_captures);
	RT_RUN(test_early_close);
	RT_RUN(test_hostile);
	RT_RUN(test_traffic_timeout);
	return rt_report("perf_oob");
}
