/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perftest OOB exchange tests against the perftest 6.06 captures in
 * ../shared/captures/perftest-oob/ and the perftest 6.28 / 6.29 recordings in
 * test/unit/data/perftest-oob-629/ (README there; every .flow.json):
 *  (a) every captured message decodes and re-encodes byte-identically, and the size sequence of
 *      each direction is the one roce_perf_oob_plan() gives for the test (without the final
 *      done for perftest >= 6.17, which no longer sends it);
 *  (b) each 6.06 side of each capture is replayed (a thread plays the recorded peer, 6.06 or
 *      6.29, over a socketpair) against our driver in that role, whose bytes must equal the
 *      captured ones (the server's report values excepted: perftest sends stack garbage, we
 *      send zeros);
 *  (c) hostile peers: early close at every message boundary, garbage and wrong sizes, old
 *      versions, perftest 6.28, the parameter negotiation and --data_validation keys of newer
 *      perftest; each must end with the expected error, quickly and without a crash;
 *  (d) the rocedp capability tag: against the recorded stock servers (which ignored it) and
 *      between two of our drivers;
 *  (e) deadlines: a peer dripping a message a byte at a time fails it at the message's
 *      deadline, however often it sends; and which GIDs a peer's key may point our traffic at;
 *  (f) perftest -R (rdma_cm): the 56-byte struct pingpong_dest against the keys of
 *      ../shared/captures/roce_rdma_cm_ib_write_bw_R.pcap, its refusals, and two drivers over a
 *      message channel (a SOCK_SEQPACKET pair: one datagram per SEND), whose message sizes
 *      must be the capture's in both directions, and which refuse a message of the wrong size.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "roce_perf_oob.h"
#include "roce_test.h"

#define MAX_MSGS 64
#define MAX_FLOWS 64
#define MSG_MAX 384	/* the 320-byte parameter negotiation of perftest >= 6.28 */
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
	uint32_t version[2];	/* x100, sent by [0] the server, [1] the client; 0 if none */
	bool normal;		/* a complete exchange with a 6.06 side, to replay */
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
	for (i = 0; i < f->nb; i++)
		if (f->msgs[i].len == ROCE_PERF_OOB_VERSION_LEN &&
				f->version[f->msgs[i].c2s] == 0)
			roce_perf_oob_version_decode(f->msgs[i].data, ROCE_PERF_OOB_VERSION_LEN,
				&f->version[f->msgs[i].c2s]);
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

/* Load every .flow.json of @dir; @return the number loaded. */
static unsigned int
load_dir(const char *dir)
{
	char path[PATH_MAX + 256];
	char *names[MAX_FLOWS];
	unsigned int i, n = 0, before = nb_flows;
	struct dirent *de;
	DIR *d;

	d = opendir(dir);
	RT_CHECK(d != NULL, "cannot open %s", dir);
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && n < MAX_FLOWS) {
		size_t l = strlen(de->d_name);

		if (l > 10 && strcmp(de->d_name + l - 10, ".flow.json") == 0)
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (i = 0; i < n; i++) {
		struct flow *f = &flows[nb_flows];
		const char *nm = names[i];

		if (nb_flows == MAX_FLOWS) {
			RT_CHECK(false, "more than %u flows", MAX_FLOWS);
			break;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, nm);
		RT_CHECK(load_flow(path, nm, f) == 0, "bad flow %s", path);
		RT_CHECK(f->test < ROCE_PERF_TEST_MAX, "unknown test %s", nm);
		/* 6.06 captures (01_..) and 6.06 against 6.29 (n01_..) are complete exchanges;
		 * r (refused), x (6.29 with 6.29), t and e (tagged) runs have their own tests */
		f->normal = (nm[0] >= '0' && nm[0] <= '9') || nm[0] == 'n';
		RT_CHECK(!f->normal || f->nqps >= 1, "%s: no key", nm);
		if (f->nqps == 0)
			f->nqps = 1;
		nb_flows++;
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	return nb_flows - before;
}

static void
load_flows(void)
{
	char dir[PATH_MAX];
	unsigned int n;

	snprintf(dir, sizeof(dir), "%s/perftest-oob", rt_captures_dir());
	n = load_dir(dir);
	RT_CHECK(n >= 12, "only %u flows in %s", n, dir);
	n = load_dir(PERF_OOB_DATA_DIR);
	RT_CHECK(n >= 24, "only %u flows in %s", n, PERF_OOB_DATA_DIR);
}

/* Whether the side of @f our driver plays in @role is a perftest 6.06, whose bytes we send. */
static bool
plays_606(const struct flow *f, enum roce_perf_role role)
{
	return f->version[role == ROCE_PERF_CLIENT] == ROCE_PERF_OOB_VERSION;
}

/* ---- (a) decode + re-encode ------------------------------------------------------------ */

/* Decode and re-encode one message of size @len at report index @rep; @return 0 if identical. */
static int
roundtrip(const uint8_t *data, uint16_t len, unsigned int rep)
{
	struct roce_perf_key key;
	uint8_t out[MSG_MAX];
	uint32_t v32, caps;
	uint64_t v64;
	bool tagged;
	uint8_t mtu;
	double d;
	int ret = -1;

	switch (len) {
	case ROCE_PERF_OOB_VERSION_LEN:
		if (roce_perf_oob_version_decode_caps(data, len, &v32, &caps, &tagged) == 0)
			ret = tagged ? roce_perf_oob_version_encode_caps(out, len, v32, caps) :
				roce_perf_oob_version_encode(out, len, v32);
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
	/* perftest 6.17 and newer no longer write the final done */
	if (n > 0 && f->version[c2s] >= 617 && plan[n - 1] == ROCE_PERF_OOB_DONE_LEN)
		n--;
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
		/* the refused and negotiating runs do not follow the plan */
		if (flows[i].name[0] == 'r' || flows[i].name[0] == 'x')
			continue;
		check_flow_codec(&flows[i], true);
		check_flow_codec(&flows[i], false);
	}
	RT_CHECK(nb_flows >= 36, "%u flows", nb_flows);
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
static uint32_t our_caps;	/* cfg.local.caps of our driver */

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
hook_traffic(void *arg, struct roce_perf_report *rep, unsigned int sizes)
{
	struct ours *o = arg;

	(void)rep;	/* keep the report set in cfg: it is the captured one */
	(void)sizes;
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
	o->cfg.local.caps = our_caps;
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

/* The peer's capability bits in @f (0 from a stock perftest). */
static uint32_t
peer_caps(const struct flow *f, enum roce_perf_role role)
{
	bool peer_c2s = role == ROCE_PERF_SERVER;
	uint32_t v, caps = 0;
	unsigned int i;

	for (i = 0; i < f->nb; i++)
		if (f->msgs[i].c2s == peer_c2s && f->msgs[i].len == ROCE_PERF_OOB_VERSION_LEN) {
			roce_perf_oob_version_decode_caps(f->msgs[i].data, ROCE_PERF_OOB_VERSION_LEN,
				&v, &caps, NULL);
			break;
		}
	return caps;
}

/* Our version message must be the recorded one, but with our_caps in the tail (if any): the
 * 6.06 string and its NUL are stock, the rest is the tag or NUL padding. */
static void
check_version_msg(const struct flow *f, const char *rn, const uint8_t *got, const uint8_t *rec)
{
	uint8_t want[ROCE_PERF_OOB_VERSION_LEN];
	uint8_t stock[ROCE_PERF_OOB_VERSION_LEN];

	roce_perf_oob_version_encode(stock, sizeof(stock), ROCE_PERF_OOB_VERSION);
	if (our_caps != 0)
		roce_perf_oob_version_encode_caps(want, sizeof(want), ROCE_PERF_OOB_VERSION,
			our_caps);
	else
		memcpy(want, stock, sizeof(want));
	RT_CHECK(memcmp(got, want, sizeof(want)) == 0, "%s as %s: version message", f->name, rn);
	RT_CHECK(our_caps != 0 || memcmp(got, rec, sizeof(want)) == 0,
		"%s as %s: version message differs from the recording", f->name, rn);
	/* identical to stock but for the tag bytes after "6.06\0" */
	RT_CHECK(memcmp(got, stock, 5) == 0 && all_zero(got + 13, 3), "%s as %s: version tail",
		f->name, rn);
}

static void
check_replay(const struct flow *f, enum roce_perf_role role)
{
	static struct roce_perf_oob_result res;
	static struct peer p;
	static struct ours o;
	bool c2s = role == ROCE_PERF_CLIENT;
	const char *rn = c2s ? "client" : "server";
	uint32_t pcaps = peer_caps(f, role);
	unsigned int i, k = 0;
	int ret;

	ret = replay(f, role, UINT_MAX, &p, &o, &res);
	RT_CHECK(ret == 0, "%s as %s: run %d (%s)", f->name, rn, ret, strerror(-ret));
	RT_CHECK(o.connects == 1 && o.traffics == 1, "%s as %s: hooks %u/%u", f->name, rn,
		o.connects, o.traffics);
	RT_CHECK(o.keys_ok, "%s as %s: peer keys differ", f->name, rn);
	RT_CHECK(res.peer.version == f->version[role == ROCE_PERF_SERVER] &&
		res.agreed.page_size == 4096 && res.agreed.cache_line == 64 &&
		res.agreed.mtu == 3, "%s as %s: prologue (peer version %u)", f->name, rn,
		res.peer.version);
	RT_CHECK(res.peer.caps == pcaps && res.agreed.caps == (pcaps & our_caps),
		"%s as %s: caps 0x%x agreed 0x%x", f->name, rn, res.peer.caps, res.agreed.caps);
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
		else if (k == 0 && m->len == ROCE_PERF_OOB_VERSION_LEN)
			check_version_msg(f, rn, g->data, m->data);
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

/* Replay, in each role 6.06 plays, every recording of a normal run. @return how many have a
 * perftest 6.29 side. */
static unsigned int
replay_normal_flows(void)
{
	unsigned int i, n629 = 0;

	for (i = 0; i < nb_flows; i++) {
		if (!flows[i].normal)
			continue;
		if (plays_606(&flows[i], ROCE_PERF_CLIENT))
			check_replay(&flows[i], ROCE_PERF_CLIENT);
		if (plays_606(&flows[i], ROCE_PERF_SERVER))
			check_replay(&flows[i], ROCE_PERF_SERVER);
		n629 += flows[i].version[0] == 629 || flows[i].version[1] == 629;
	}
	return n629;
}

/* Our driver plays every 6.06 side of every complete recording: both sides of the 6.06
 * captures, the 6.06 side of each 6.06-against-6.29 recording (whose 6.29 peer skips its
 * parameter negotiation and sends no done). */
static void
test_replay_captures(void)
{
	unsigned int n629 = replay_normal_flows();

	RT_CHECK(n629 >= 16, "%u recordings with perftest 6.29", n629);
}

/* The same with capabilities offered: a stock peer leaves them 0, and our bytes differ from a
 * stock 6.06 only in the version message's tail. */
static void
test_replay_captures_caps(void)
{
	our_caps = ROCE_PERF_CAP_SR;
	replay_normal_flows();
	our_caps = 0;
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

		if (!plays_606(f, role))
			continue;
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
	check_early_close("01_write_bw");
	check_early_close("07_write_lat");
	check_early_close("05_send_bw");
	check_early_close("08_read_lat");
	/* a perftest 6.29 peer, in both roles (it never sends done) */
	check_early_close("n01_write_bw_c629");
	check_early_close("n02_write_bw_s629");
	check_early_close("n09_write_lat_c629");
	check_early_close("n10_write_lat_s629");
	check_early_close("n05_send_bw_c629");
	check_early_close("n06_send_bw_s629");
	check_early_close("n11_read_lat_c629");
	check_early_close("n14_send_lat_s629");
	check_early_close("n07_atomic_bw_c629");
	check_early_close("n04_read_bw_s629");
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
	{ "version 6.27", 16, 0, 0, 0, "6.27", 4, 0, { 15, 15 } },
	{ "version 6.29", 16, 0, 0, 0, "6.29", 4, 0, { 15, 15 } },
	{ "version 7.00", 16, 0, 0, 0, "7.00", 4, 0, { 15, 15 } },
	{ "version garbage", 16, 0, 0, 0, "abcd", 4, -EPROTO, { 1, 1 } },
	{ "version trailing", 16, 0, 0, 8, "x", 1, -EPROTO, { 1, 1 } },
	{ "version tag", 16, 0, 0, 5, "rdp1\0\0\0\1", 8, 0, { 15, 15 } },
	{ "version tag all caps", 16, 0, 0, 5, "rdp1\xff\xff\xff\xff", 8, 0, { 15, 15 } },
	{ "version tag magic", 16, 0, 0, 5, "rdp2\0\0\0\1", 8, -EPROTO, { 1, 1 } },
	{ "version tag no NUL", 16, 0, 0, 4, "rdp1\0\0\0\1", 8, -EPROTO, { 1, 1 } },
	{ "version tag trailing", 16, 0, 0, 5, "rdp1\0\0\0\1\0\0x", 11, -EPROTO, { 1, 1 } },
	{ "version tag short", 16, 0, 0, 5, "rdp1", 4, 0, { 15, 15 } },
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

/* Mutate a message of the recorded peer of @base; our driver plays @base's 6.06 side. */
static void
check_bad_case(const struct bad_case *bc, const char *base_name, enum roce_perf_role role)
{
	static struct roce_perf_oob_result res;
	static struct flow f;
	static struct peer p;
	static struct ours o;
	const struct flow *base = find_flow(base_name);
	struct msg *m;
	int ret;

	RT_CHECK(base != NULL && plays_606(base, role), "no flow %s", base_name);
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
	RT_CHECK(ret == bc->expect, "%s %s as %s: %d (%s), expected %d", base_name, bc->what,
		role == ROCE_PERF_CLIENT ? "client" : "server", ret, strerror(-ret), bc->expect);
	/* in particular a refused version must stop us before anything else is sent */
	RT_CHECK(p.nb_got == bc->sent[role], "%s %s as %s: we sent %u messages, not %u",
		base_name, bc->what, role == ROCE_PERF_CLIENT ? "client" : "server", p.nb_got,
		bc->sent[role]);
}

static void
test_hostile(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad_cases); i++) {
		/* a perftest 6.06 peer */
		check_bad_case(&bad_cases[i], "01_write_bw", ROCE_PERF_CLIENT);
		check_bad_case(&bad_cases[i], "01_write_bw", ROCE_PERF_SERVER);
		/* a perftest 6.29 peer: its server, then its client */
		check_bad_case(&bad_cases[i], "n02_write_bw_s629", ROCE_PERF_CLIENT);
		check_bad_case(&bad_cases[i], "n01_write_bw_c629", ROCE_PERF_SERVER);
	}
}

/* Recorded peers we refuse, each with a clear message (see the log), and how many messages
 * we sent before refusing: stock perftest 6.28 (negotiates with a 6.06 peer too: refused at
 * its version), perftest 6.29 with --data_validation (125-byte keys) and perftest 6.29's
 * negotiation as it sends it to another 6.29 (a 320-byte binary struct where we expect a key). */
static void
test_refused_recordings(void)
{
	static const struct {
		const char *name;
		enum roce_perf_role role;	/* ours: the recording's 6.06 side */
		int expect;
		unsigned int sent;
	} cases[] = {
		{ "r01_write_bw_c628", ROCE_PERF_SERVER, -EPROTONOSUPPORT, 1 },
		{ "r02_write_bw_s628", ROCE_PERF_CLIENT, -EPROTONOSUPPORT, 1 },
		{ "r03_write_bw_dv_c629", ROCE_PERF_SERVER, -EPROTONOSUPPORT, 4 },
		{ "x01_write_bw_629_629", ROCE_PERF_SERVER, -EPROTONOSUPPORT, 4 },
	};
	static struct roce_perf_oob_result res;
	static struct peer p;
	static struct ours o;
	const struct flow *f;
	unsigned int i;
	int ret;

	for (i = 0; i < RTE_DIM(cases); i++) {
		f = find_flow(cases[i].name);
		RT_CHECK(f != NULL, "no recording %s", cases[i].name);
		if (f == NULL)
			continue;
		ret = replay(f, cases[i].role, UINT_MAX, &p, &o, &res);
		RT_CHECK(ret == cases[i].expect && p.nb_got == cases[i].sent,
			"%s: %d (%s), sent %u", f->name, ret, strerror(-ret), p.nb_got);
	}
	/* the perftest 6.28 client really sent its 320-byte negotiation to the 6.06 server */
	f = find_flow("r01_write_bw_c628");
	if (f != NULL)
		RT_CHECK(f->version[1] == 628 && f->msgs[f->nb - 1].c2s &&
			f->msgs[f->nb - 1].len == 320, "r01: no negotiation recorded");
}

/* ---- (d) capability tag ------------------------------------------------------------------ */

/* The t runs: tagplay.py (independent of lib/perf) sent the recorded client bytes of
 * 01_write_bw with the tag (caps SR) to a real perftest 6.06 and 6.29 server, which completed
 * the exchange as usual. The e runs: the same from lib/perf itself (e2e_client.c). */
static void
test_caps_recordings(void)
{
	uint8_t tagged[ROCE_PERF_OOB_VERSION_LEN];
	const struct flow *stock = find_flow("01_write_bw");
	unsigned int i, j, n = 0;

	roce_perf_oob_version_encode_caps(tagged, sizeof(tagged), ROCE_PERF_OOB_VERSION,
		ROCE_PERF_CAP_SR);
	for (i = 0; i < nb_flows; i++) {
		const struct flow *f = &flows[i];

		if (f->name[0] != 't' && f->name[0] != 'e')
			continue;
		n++;
		/* the recorded client sent exactly our encoding */
		RT_CHECK(f->msgs[0].c2s && f->msgs[0].len == ROCE_PERF_OOB_VERSION_LEN &&
			memcmp(f->msgs[0].data, tagged, sizeof(tagged)) == 0, "%s: tag", f->name);
		/* and, for t, 01_write_bw's client bytes otherwise */
		for (j = 1; f->name[0] == 't' && stock != NULL && j < f->nb; j++)
			if (f->msgs[j].c2s)
				RT_CHECK(j < stock->nb && stock->msgs[j].len == f->msgs[j].len &&
					memcmp(stock->msgs[j].data, f->msgs[j].data,
						f->msgs[j].len) == 0, "%s: msg %u", f->name, j);
		/* our client with caps: byte for byte the recording; the stock server's caps 0 */
		our_caps = ROCE_PERF_CAP_SR;
		check_replay(f, ROCE_PERF_CLIENT);
		/* our server against the tagged client: as a rocedp peer (agreed SR) and as one
		 * offering nothing (agreed 0, bytes exactly the recorded 6.06 server's) */
		if (plays_606(f, ROCE_PERF_SERVER)) {
			check_replay(f, ROCE_PERF_SERVER);
			our_caps = 0;
			check_replay(f, ROCE_PERF_SERVER);
		}
		our_caps = 0;
	}
	RT_CHECK(n == 4, "%u tagged recordings", n);
}

/* Two of our drivers, one per thread, over a socketpair. */
struct pair_side {
	struct roce_perf_oob_cfg cfg;
	struct roce_perf_oob_result res;
	struct roce_perf_key key;
	int fd;
	int ret;
};

static void *
pair_server(void *arg)
{
	struct pair_side *s = arg;

	s->ret = roce_perf_oob_run(s->fd, &s->cfg, &s->res);
	shutdown(s->fd, SHUT_WR);
	return NULL;
}

static void
check_pair(enum roce_perf_test test, uint32_t caps_c, uint32_t caps_s)
{
	static struct pair_side c, s;
	const uint32_t agreed = caps_c & caps_s;
	pthread_t th;
	int sv[2];

	memset(&c, 0, sizeof(c));
	memset(&s, 0, sizeof(s));
	c.key = (struct roce_perf_key){ .out_reads = 1, .qpn = 0x11, .psn = 0x1234, .rkey = 7 };
	s.key = (struct roce_perf_key){ .out_reads = 1, .qpn = 0x22, .psn = 0x4321, .rkey = 9 };
	c.cfg = (struct roce_perf_oob_cfg){ .test = test, .role = ROCE_PERF_CLIENT, .nqps = 1,
		.timeout_ms = 2000, .local = { .page_size = 4096, .cache_line = 64, .mtu = 3,
		.caps = caps_c }, .keys = &c.key };
	s.cfg = c.cfg;
	s.cfg.role = ROCE_PERF_SERVER;
	s.cfg.local.caps = caps_s;
	s.cfg.local.mtu = 5;
	s.cfg.keys = &s.key;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return;
	c.fd = sv[0];
	s.fd = sv[1];
	if (pthread_create(&th, NULL, pair_server, &s) != 0) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	c.ret = roce_perf_oob_run(c.fd, &c.cfg, &c.res);
	shutdown(c.fd, SHUT_WR);
	pthread_join(th, NULL);
	close(sv[0]);
	close(sv[1]);
	RT_CHECK(c.ret == 0 && s.ret == 0, "%s 0x%x/0x%x: %d %d", roce_perf_test_name(test),
		caps_c, caps_s, c.ret, s.ret);
	RT_CHECK(c.res.peer.caps == caps_s && s.res.peer.caps == caps_c &&
		c.res.agreed.caps == agreed && s.res.agreed.caps == agreed,
		"%s 0x%x/0x%x: peer 0x%x 0x%x agreed 0x%x 0x%x", roce_perf_test_name(test), caps_c,
		caps_s, c.res.peer.caps, s.res.peer.caps, c.res.agreed.caps, s.res.agreed.caps);
	RT_CHECK(c.res.peer_keys[0].qpn == 0x22 && s.res.peer_keys[0].qpn == 0x11 &&
		c.res.agreed.mtu == 3 && s.res.agreed.mtu == 3, "%s: keys or MTU",
		roce_perf_test_name(test));
}

/* rocedp with rocedp: the AND of what each offers; offering nothing is stock 6.06. */
static void
test_caps_pair(void)
{
	enum roce_perf_test t;

	check_pair(ROCE_PERF_WRITE_BW, ROCE_PERF_CAP_SR, ROCE_PERF_CAP_SR);
	check_pair(ROCE_PERF_WRITE_BW, ROCE_PERF_CAP_SR, 0);
	check_pair(ROCE_PERF_WRITE_BW, 0, ROCE_PERF_CAP_SR);
	check_pair(ROCE_PERF_WRITE_BW, 0, 0);
	/* bits one side does not know are reported as sent, and dropped by the AND */
	check_pair(ROCE_PERF_WRITE_BW, 0x3, 0x5);
	check_pair(ROCE_PERF_WRITE_BW, 0xffffffffu, ROCE_PERF_CAP_SR);
	for (t = 0; t < ROCE_PERF_TEST_MAX; t++)
		check_pair(t, ROCE_PERF_CAP_SR, ROCE_PERF_CAP_SR);
}

/* ---- the rocedp parameters message, per-size loops, -b ---- */

static void
test_params_codec(void)
{
	struct roce_perf_params p = { .test = ROCE_PERF_SEND_LAT, .flags = ROCE_PERF_PAR_ALL |
		ROCE_PERF_PAR_SET_ITERS, .size = 8 << 20, .iters = 1000, .qps = 1 }, q;
	uint8_t b[ROCE_PERF_OOB_PARAMS_LEN], bad[ROCE_PERF_OOB_PARAMS_LEN];
	static const struct {
		unsigned int off;
		uint8_t val;
		const char *what;
	} corrupt[] = {
		{ 0, 'x', "magic" }, { 7, 2, "format" }, { 11, ROCE_PERF_TEST_MAX, "test" },
		{ 13, 0x80, "unknown flag" }, { 15, 0x20, "unknown low flag" },
		{ 16, 0x80, "size above 2^31" }, { 39, 0, "no QP" }, { 38, 0x40, "too many QPs" },
		{ 32, 0x10, "duration above a day" }, { 43, 1, "connection type" },
		{ 44, 1, "padding" }, { 63, 1, "last padding byte" },
	};
	unsigned int i;

	RT_CHECK(roce_perf_oob_params_encode(b, sizeof(b), &p) == 0 &&
		memcmp(b, "rdpP\0\0\0\1", 8) == 0, "params: encoded, magic and format 1");
	RT_CHECK(roce_perf_oob_params_decode(b, sizeof(b), &q) == 0 && q.test == p.test &&
		q.flags == p.flags && q.size == p.size && q.iters == p.iters && q.qps == 1 &&
		q.duration_ms == 0 && q.conn == 0, "params: decode what was encoded");
	RT_CHECK(roce_perf_oob_params_decode(b, sizeof(b) - 1, &q) == -EINVAL &&
		roce_perf_oob_params_encode(b, sizeof(b) + 1, &p) == -EINVAL, "params: lengths");
	for (i = 0; i < RTE_DIM(corrupt); i++) {
		memcpy(bad, b, sizeof(b));
		bad[corrupt[i].off] = corrupt[i].val;
		RT_CHECK(roce_perf_oob_params_decode(bad, sizeof(bad), &q) == -EPROTO,
			"params: %s refused", corrupt[i].what);
	}
	q = p;
	q.conn = ROCE_PERF_CONN_UD;
	RT_CHECK(roce_perf_oob_params_encode(b, sizeof(b), &q) == 0 && b[43] == 2 &&
		roce_perf_oob_params_decode(b, sizeof(b), &q) == 0 && q.conn == ROCE_PERF_CONN_UD,
		"params: connection type UD (2, as perftest's enum) carried");
	q = p;
	q.conn = 1;
	RT_CHECK(roce_perf_oob_params_encode(b, sizeof(b), &q) == -EINVAL, "params: UC refused");
	q = p;
	q.qps = 0;
	RT_CHECK(roce_perf_oob_params_encode(b, sizeof(b), &q) == -EINVAL, "params: 0 QPs");
	q = p;
	q.flags |= 1u << 20;
	RT_CHECK(roce_perf_oob_params_encode(b, sizeof(b), &q) == -EINVAL, "params: a flag");
}

/* Message counts of the sequence variants (perftest 6.06's sources; none captured). */
static void
test_plan_modes(void)
{
	static const struct {
		enum roce_perf_test test;
		struct roce_perf_oob_mode m;
		int nb;
		unsigned int traffic_at;
	} plans[] = {
		{ ROCE_PERF_WRITE_BW, { .duplex = true }, 15, 8 },
		{ ROCE_PERF_READ_BW, { .duplex = true, .all = true }, 4 + 3 + 23 * 7 + 2, 8 },
		{ ROCE_PERF_ATOMIC_BW, { .duplex = true, .all = true }, 15, 8 },
		{ ROCE_PERF_WRITE_BW, { .duplex = true, .infinite = true }, 15, 7 },
		{ ROCE_PERF_WRITE_BW, { .all = true }, 15, 7 },
		{ ROCE_PERF_SEND_BW, { .all = true }, 4 + 3 + 23 * 2 + 2, 8 },
		{ ROCE_PERF_SEND_BW, { .all = true, .infinite = true }, 10, 8 },
		{ ROCE_PERF_SEND_LAT, { .all = true }, 4 + 3 + 23 + 2, 8 },
		{ ROCE_PERF_WRITE_LAT, { .all = true }, 8, 8 },
		{ ROCE_PERF_SEND_BW, { .duplex = true }, 15, 8 },
		{ ROCE_PERF_SEND_BW, { .duplex = true, .duration = true }, 10, 8 },
		{ ROCE_PERF_SEND_BW, { .duplex = true, .all = true }, 4 + 3 + 23 * 7 + 2, 8 },
		{ ROCE_PERF_SEND_BW, { .duplex = true, .infinite = true }, -EINVAL, 0 },
		{ ROCE_PERF_SEND_LAT, { .duplex = true }, -EINVAL, 0 },
		{ ROCE_PERF_READ_LAT, { .duplex = true }, -EINVAL, 0 },
		/* -c UD: the sweep stops at the MTU (1024: 10 sizes) */
		{ ROCE_PERF_SEND_BW, { .all = true, .nb_sizes = 10 }, 4 + 3 + 10 * 2 + 2, 8 },
		{ ROCE_PERF_SEND_LAT, { .all = true, .nb_sizes = 10 }, 4 + 3 + 10 + 2, 8 },
		{ ROCE_PERF_SEND_BW, { .duplex = true, .all = true, .nb_sizes = 12 },
			4 + 3 + 12 * 7 + 2, 8 },
		{ ROCE_PERF_SEND_BW, { .all = true, .nb_sizes = 24 }, -EINVAL, 0 },
	};
	static uint16_t sizes[ROCE_PERF_OOB_MAX_MSGS_MODE];
	unsigned int i, at;
	int n;

	for (i = 0; i < RTE_DIM(plans); i++) {
		at = 0;
		n = roce_perf_oob_plan_mode(plans[i].test, 1, &plans[i].m, sizes, RTE_DIM(sizes),
			&at);
		RT_CHECK(n == plans[i].nb && (n < 0 || at == plans[i].traffic_at),
			"%s mode %u: %d msgs, traffic at %u", roce_perf_test_name(plans[i].test), i,
			n, at);
	}
	RT_CHECK(roce_perf_oob_plan_mode(ROCE_PERF_READ_BW, ROCE_PERF_OOB_MAX_QPS,
		&(struct roce_perf_oob_mode){ .duplex = true, .all = true }, sizes, RTE_DIM(sizes),
		NULL) > 0, "max qps -b -a fits ROCE_PERF_OOB_MAX_MSGS_MODE");
}

/* Two drivers with the parameters message and hooks: who was called, how often. */
struct mode_side {
	struct roce_perf_oob_cfg cfg;
	struct roce_perf_oob_result res;
	struct roce_perf_key key;
	int fd, ret;
	unsigned int agrees, prepares, traffics, sizes, reports;
	bool got_params;
	int traffic_ret;
	uint64_t peer_iters;
};

static int
mode_agree(void *arg, const struct roce_perf_params *peer, struct roce_perf_oob_setup *setup)
{
	struct mode_side *m = arg;

	m->agrees++;
	m->got_params = peer != NULL && peer->iters == 77;
	setup->mode.all = true;		/* adopted from the peer, as a session would */
	return 0;
}

static int
mode_prepare(void *arg)
{
	((struct mode_side *)arg)->prepares++;
	return 0;
}

static int
mode_traffic(void *arg, struct roce_perf_report *rep, unsigned int sizes)
{
	struct mode_side *m = arg;

	m->traffics++;
	m->sizes += sizes;
	rep->iters = 1000 + m->traffics;
	return m->traffic_ret;
}

static int
mode_report(void *arg, const struct roce_perf_report *peer)
{
	struct mode_side *m = arg;

	m->reports++;
	m->peer_iters = peer->iters;
	return 0;
}

static void *
mode_server(void *arg)
{
	struct mode_side *m = arg;

	m->ret = roce_perf_oob_run(m->fd, &m->cfg, &m->res);
	shutdown(m->fd, SHUT_WR);
	return NULL;
}

static void
mode_pair(enum roce_perf_test test, const struct roce_perf_oob_mode *mode, bool all_on_client,
		int srv_traffic_ret, struct mode_side *c, struct mode_side *s)
{
	pthread_t th;
	int sv[2];

	memset(c, 0, sizeof(*c));
	memset(s, 0, sizeof(*s));
	c->key = (struct roce_perf_key){ .out_reads = 1, .qpn = 0x11, .psn = 0x1234, .rkey = 7 };
	s->key = (struct roce_perf_key){ .out_reads = 1, .qpn = 0x22, .psn = 0x4321, .rkey = 9 };
	c->cfg = (struct roce_perf_oob_cfg){ .test = test, .role = ROCE_PERF_CLIENT, .nqps = 1,
		.timeout_ms = 2000, .local = { .page_size = 4096, .cache_line = 64, .mtu = 3,
		.caps = ROCE_PERF_CAP_PARAMS }, .keys = &c->key, .mode = *mode,
		.params = { .size = 64, .iters = 77, .qps = 1 },
		.hooks = { mode_agree, NULL, mode_prepare, mode_traffic, mode_report, c, NULL } };
	c->cfg.mode.all = all_on_client;
	s->cfg = c->cfg;
	s->cfg.role = ROCE_PERF_SERVER;
	s->cfg.keys = &s->key;
	s->cfg.mode.all = false;
	s->cfg.hooks.arg = s;
	s->traffic_ret = srv_traffic_ret;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return;
	c->fd = sv[0];
	s->fd = sv[1];
	if (pthread_create(&th, NULL, mode_server, s) != 0) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	c->ret = roce_perf_oob_run(c->fd, &c->cfg, &c->res);
	shutdown(c->fd, SHUT_WR);
	pthread_join(th, NULL);
	close(sv[0]);
	close(sv[1]);
}

static void
test_mode_pairs(void)
{
	struct mode_side c, s;

	/* -b -a, -a on one side only: the agree hook makes it the other's too */
	mode_pair(ROCE_PERF_WRITE_BW, &(struct roce_perf_oob_mode){ .duplex = true }, true, 0,
		&c, &s);
	RT_CHECK(c.ret == 0 && s.ret == 0, "-b -a pair: %d %d", c.ret, s.ret);
	RT_CHECK(c.agrees == 1 && s.agrees == 1 && c.got_params && s.got_params &&
		c.res.has_peer_params && c.res.peer_params.test == ROCE_PERF_WRITE_BW,
		"-b -a pair: the parameters crossed");
	RT_CHECK(c.traffics == 23 && s.traffics == 23 && c.sizes == 23 && s.sizes == 23 &&
		c.reports == 23 && s.reports == 23, "-b -a pair: a size per traffic call, and "
		"its reports (%u %u %u %u)", c.traffics, s.traffics, c.reports, s.reports);
	RT_CHECK(c.peer_iters == 1023 && s.peer_iters == 1023, "-b -a pair: the last reports");
	/* send_bw -a: receives posted and a barrier per size */
	mode_pair(ROCE_PERF_SEND_BW, &(struct roce_perf_oob_mode){ .all = true }, true, 0, &c,
		&s);
	RT_CHECK(c.ret == 0 && s.ret == 0 && c.prepares == 23 && s.traffics == 23 &&
		c.reports == 0, "send -a pair: %d %d, %u prepares", c.ret, s.ret, c.prepares);
	/* the server stops first (--run_infinitely): it writes first, nobody waits */
	mode_pair(ROCE_PERF_WRITE_BW, &(struct roce_perf_oob_mode){ .infinite = true }, false,
		ROCE_PERF_OOB_FIRST, &c, &s);
	RT_CHECK(c.ret == 0 && s.ret == 0 && c.reports == 1 && s.peer_iters == 1001,
		"server first: %d %d", c.ret, s.ret);
	/* a traffic hook ending the exchange: no more messages, both fine */
	mode_pair(ROCE_PERF_SEND_BW, &(struct roce_perf_oob_mode){ 0 }, false, ROCE_PERF_OOB_END,
		&c, &s);
	RT_CHECK(s.ret == 0 && c.ret == -ECONNRESET, "ended by the server: %d %d", c.ret, s.ret);
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

/* Version messages with the tail: NUL padding (stock) or exactly our tag then NULs. */
static const struct {
	uint8_t b[16];
	int ret;
	uint32_t version, caps;
	bool tagged;
} tag_cases[] = {
	{ "6.06", 0, 606, 0, false },
	{ "6.06\0rdp1\0\0\0\1", 0, 606, 1, true },
	{ "6.06\0rdp1\x80\0\0\3", 0, 606, 0x80000003u, true },
	{ "6.06\0rdp1", 0, 606, 0, true },
	{ "999.99\0rdp1\0\0\0\1", 0, 99999, 1, true },
	{ "6.1\0rdp1\0\0\0\1", 0, 610, 1, true },
	{ "6.06\0rdp2\0\0\0\1", -EPROTO, 0, 0, false },
	{ "6.06\0RDP1\0\0\0\1", -EPROTO, 0, 0, false },
	{ "6.06\0\0rdp1\0\0\0\1", -EPROTO, 0, 0, false },
	{ "6.06\0rdp1\0\0\0\1\0\0\1", -EPROTO, 0, 0, false },
	{ "6.06\0rdp", -EPROTO, 0, 0, false },
	{ "6.06\0\0\0\0\0\0\0\0\0\0\x01", -EPROTO, 0, 0, false },
	{ "999.99\0\0rdp1\0\0\0\1", -EPROTO, 0, 0, false },
};

static void
test_tag_codec(void)
{
	uint8_t buf[ROCE_PERF_OOB_VERSION_LEN];
	uint32_t v, caps;
	unsigned int i;
	bool tagged;
	int ret;

	for (i = 0; i < RTE_DIM(tag_cases); i++) {
		v = caps = 0xdead;
		tagged = false;
		ret = roce_perf_oob_version_decode_caps(tag_cases[i].b, 16, &v, &caps, &tagged);
		RT_CHECK(ret == tag_cases[i].ret, "tag case %u: %d", i, ret);
		if (ret != 0)
			continue;
		RT_CHECK(v == tag_cases[i].version && caps == tag_cases[i].caps &&
			tagged == tag_cases[i].tagged, "tag case %u: %u 0x%x %d", i, v, caps, tagged);
		/* the plain decoder accepts the same and ignores the tag */
		RT_CHECK(roce_perf_oob_version_decode(tag_cases[i].b, 16, &v) == 0 &&
			v == tag_cases[i].version, "tag case %u: plain decode", i);
		if (tagged && tag_cases[i].version != 610) {
			RT_CHECK(roce_perf_oob_version_encode_caps(buf, sizeof(buf), v, caps) == 0 &&
				memcmp(buf, tag_cases[i].b, sizeof(buf)) == 0,
				"tag case %u: re-encode", i);
		}
	}
	RT_CHECK(roce_perf_oob_version_decode_caps(tag_cases[1].b, 16, &v, NULL, NULL) == 0,
		"NULL caps and tagged");
	RT_CHECK(roce_perf_oob_version_decode_caps(tag_cases[1].b, 15, &v, &caps, &tagged) ==
		-EINVAL, "wrong length");
	RT_CHECK(roce_perf_oob_version_encode_caps(buf, 15, 606, 1) == -EINVAL, "encode length");
	RT_CHECK(roce_perf_oob_version_encode_caps(buf, 16, 100000, 1) == -EINVAL,
		"encode version");
	/* the wire format of the doc: "6.06\0" "rdp1" 00 00 00 01 00 00 00 */
	RT_CHECK(roce_perf_oob_version_encode_caps(buf, 16, 606, ROCE_PERF_CAP_SR) == 0 &&
		memcmp(buf, "6.06\0rdp1\0\0\0\1\0\0\0", 16) == 0, "wire format");
}

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
	RT_CHECK(roce_perf_oob_version_check(629) == 0, "629");
	RT_CHECK(roce_perf_oob_version_check(700) == 0, "700");
	RT_CHECK(roce_perf_oob_version_check(99999) == 0, "99999");
	test_tag_codec();
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

/* ---- (e) deadlines and the RoCE peer's address -------------------------------------------- */

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A peer that reads @read_first bytes, then sends @msg one byte every @gap_ms. */
struct drip {
	int fd;
	size_t read_first;
	uint8_t msg[ROCE_PERF_OOB_KEY_LEN];
	size_t len;
	unsigned int gap_ms;
};

static void *
drip_main(void *arg)
{
	struct drip *d = arg;
	uint8_t buf[ROCE_PERF_OOB_KEY_LEN];
	size_t i;

	if (d->read_first == 0 || peer_read(d->fd, buf, d->read_first) == 0) {
		/* each byte comes well within the timeout, the whole message well after it */
		for (i = 0; i < d->len; i++) {
			usleep(d->gap_ms * 1000);
			if (send(d->fd, &d->msg[i], 1, MSG_NOSIGNAL) != 1)
				break;
		}
		/* stay until our side closes, taking whatever it still sends */
		while (peer_read(d->fd, buf, 1) == 0)
			;
	}
	close(d->fd);
	return NULL;
}

/* Start a dripping peer on one end of a socketpair; @return our end, or -1. */
static int
drip_start(struct drip *d, pthread_t *th)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return -1;
	d->fd = sv[1];
	if (pthread_create(th, NULL, drip_main, d) != 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	return sv[0];
}

static void
drip_stop(int fd, pthread_t th)
{
	/* the peer's next byte then fails: it stops dripping */
	shutdown(fd, SHUT_RDWR);
	pthread_join(th, NULL);
	close(fd);
}

/* One exchange of @len bytes in @role against a peer dripping its answer every @gap_ms. */
static void
check_drip(enum roce_perf_role role, size_t len, unsigned int gap_ms, int expect)
{
	static struct drip d;
	uint8_t out[ROCE_PERF_OOB_KEY_LEN] = { 0 }, in[ROCE_PERF_OOB_KEY_LEN];
	const char *rn = role == ROCE_PERF_CLIENT ? "client" : "server";
	double t0, ms;
	pthread_t th;
	int fd, ret;

	memset(&d, 0, sizeof(d));
	memset(d.msg, 'x', sizeof(d.msg));
	d.len = len;
	d.gap_ms = gap_ms;
	/* a client writes first, so the peer reads it first; a server reads first */
	d.read_first = role == ROCE_PERF_CLIENT ? len : 0;
	fd = drip_start(&d, &th);
	RT_CHECK(fd >= 0, "drip peer");
	if (fd < 0)
		return;
	t0 = now_ms();
	ret = roce_perf_oob_xchg(fd, role, out, in, len, TIMEOUT_MS);
	ms = now_ms() - t0;
	drip_stop(fd, th);
	RT_CHECK(ret == expect, "%s, %zu bytes every %u ms: %d (%s) after %.0f ms, expected %d",
		rn, len, gap_ms, ret, strerror(-ret), ms, expect);
	if (expect == -ETIMEDOUT)
		/* at the deadline: not before it, and not a byte's gap per byte after it */
		RT_CHECK(ms >= TIMEOUT_MS - 5 && ms < 2 * TIMEOUT_MS,
			"%s, %zu bytes every %u ms: gave up after %.0f ms, the deadline is %d ms",
			rn, len, gap_ms, ms, TIMEOUT_MS);
	else
		RT_CHECK(ret != 0 || memcmp(in, d.msg, len) == 0, "%s: the dripped bytes", rn);
}

/* The timeout is a deadline for the whole message, not a bound on each silence. */
static void
test_drip_deadline(void)
{
	static struct roce_perf_oob_result res;
	static struct drip d;
	enum roce_perf_role role;
	struct roce_perf_key key = { .out_reads = 1, .qpn = 0x11, .psn = 0x1234, .rkey = 7 };
	struct roce_perf_oob_cfg cfg = { .test = ROCE_PERF_WRITE_BW, .role = ROCE_PERF_CLIENT,
		.nqps = 1, .timeout_ms = TIMEOUT_MS, .local = { .page_size = 4096,
		.cache_line = 64, .mtu = 3 }, .keys = &key };
	double t0, ms;
	pthread_t th;
	int fd, ret;

	for (role = ROCE_PERF_CLIENT; role <= ROCE_PERF_SERVER; role++) {
		/* a version at 50 ms a byte takes 800 ms, a key at 10 ms a byte 1080 ms */
		check_drip(role, ROCE_PERF_OOB_VERSION_LEN, 50, -ETIMEDOUT);
		check_drip(role, ROCE_PERF_OOB_KEY_LEN, 10, -ETIMEDOUT);
		check_drip(role, ROCE_PERF_OOB_SYS_LEN, 2 * TIMEOUT_MS / 3, -ETIMEDOUT);
		/* a slow peer that makes it in time is fine: 16 bytes in 80 ms */
		check_drip(role, ROCE_PERF_OOB_VERSION_LEN, 5, 0);
	}
	/* the same through the driver: our client's prologue against a dripped version */
	memset(&d, 0, sizeof(d));
	roce_perf_oob_version_encode(d.msg, ROCE_PERF_OOB_VERSION_LEN, ROCE_PERF_OOB_VERSION);
	d.len = ROCE_PERF_OOB_VERSION_LEN;
	d.gap_ms = 50;
	d.read_first = ROCE_PERF_OOB_VERSION_LEN;
	fd = drip_start(&d, &th);
	RT_CHECK(fd >= 0, "drip peer");
	if (fd < 0)
		return;
	t0 = now_ms();
	ret = roce_perf_oob_run(fd, &cfg, &res);
	ms = now_ms() - t0;
	drip_stop(fd, th);
	RT_CHECK(ret == -ETIMEDOUT && ms < 2 * TIMEOUT_MS, "run: %d (%s) after %.0f ms", ret,
		strerror(-ret), ms);
}

/* Addresses in GID form: IPv4 as ::ffff:a.b.c.d. */
#define GID4(a, b, c, d) { [10] = 0xff, [11] = 0xff, [12] = a, [13] = b, [14] = c, [15] = d }

static void
test_gid_check(void)
{
	static const struct {
		const char *what;
		uint8_t gid[16];
		uint8_t tcp[16];
		uint8_t port[4];	/* 0.0.0.0: the port has no IPv4 address */
		unsigned int prefix;
		int expect;
	} cases[] = {
		{ "the side channel's peer", GID4(192, 0, 2, 7), GID4(192, 0, 2, 7),
			{ 10, 0, 0, 1 }, 24, 0 },
		{ "the side channel's peer, the port without IPv4", GID4(192, 0, 2, 7),
			GID4(192, 0, 2, 7), { 0 }, 0, 0 },
		{ "an IPv6 side channel peer", { 0xfd, [15] = 2 }, { 0xfd, [15] = 2 },
			{ 10, 0, 0, 1 }, 24, 0 },
		{ "on the port's subnet", GID4(10, 0, 0, 2), GID4(127, 0, 0, 1),
			{ 10, 0, 0, 1 }, 24, 0 },
		{ "on a /31", GID4(10, 0, 0, 1), GID4(127, 0, 0, 1), { 10, 0, 0, 0 }, 31, 0 },
		{ "a third host", GID4(192, 0, 2, 99), GID4(127, 0, 0, 1),
			{ 10, 0, 0, 1 }, 24, -EPERM },
		{ "next to the subnet", GID4(10, 0, 1, 2), GID4(127, 0, 0, 1),
			{ 10, 0, 0, 1 }, 24, -EPERM },
		{ "the subnet's broadcast", GID4(10, 0, 0, 255), GID4(127, 0, 0, 1),
			{ 10, 0, 0, 1 }, 24, -EPERM },
		{ "the subnet's network address", GID4(10, 0, 0, 0), GID4(127, 0, 0, 1),
			{ 10, 0, 0, 1 }, 24, -EPERM },
		{ "our own address", GID4(10, 0, 0, 1), GID4(127, 0, 0, 1),
			{ 10, 0, 0, 1 }, 24, -EPERM },
		{ "the port without IPv4", GID4(10, 0, 0, 2), GID4(127, 0, 0, 1), { 0 }, 0,
			-EPERM },
		{ "an IPv6 third host", { 0xfd, [15] = 9 }, { 0xfd, [15] = 2 },
			{ 10, 0, 0, 1 }, 24, -EPERM },
		{ "an IPv6 GID inside the IPv4 subnet's bytes", { 0xfd, [12] = 10, [15] = 2 },
			GID4(127, 0, 0, 1), { 10, 0, 0, 1 }, 24, -EPERM },
		{ "a prefix above 32", GID4(10, 0, 0, 2), GID4(127, 0, 0, 1),
			{ 10, 0, 0, 1 }, 33, -EINVAL },
	};
	static const uint8_t none[4];
	unsigned int i;
	int ret;

	for (i = 0; i < RTE_DIM(cases); i++) {
		ret = roce_perf_gid_check(cases[i].gid, cases[i].tcp, memcmp(cases[i].port, none,
			4) == 0 ? NULL : cases[i].port, cases[i].prefix);
		RT_CHECK(ret == cases[i].expect, "%s: %d, expected %d", cases[i].what, ret,
			cases[i].expect);
	}
}

/* Addresses above 2^63 travel in the key as they are. */
static void
test_key_vaddr(void)
{
	static const uint64_t vaddrs[] = { UINT64_C(0xffff800000001000), UINT64_MAX,
		UINT64_C(1) << 63 };
	struct roce_perf_key k = { .qpn = 0x11 }, back;
	uint8_t buf[ROCE_PERF_OOB_KEY_LEN];
	unsigned int i;

	for (i = 0; i < RTE_DIM(vaddrs); i++) {
		k.vaddr = vaddrs[i];
		RT_CHECK(roce_perf_oob_key_encode(buf, sizeof(buf), &k) == 0 &&
			roce_perf_oob_key_decode(buf, sizeof(buf), &back) == 0 &&
			back.vaddr == vaddrs[i], "vaddr 0x%" PRIx64, vaddrs[i]);
		/* lid:out_reads:qpn:psn:rkey: is 33 characters, then the 16 digits */
		RT_CHECK(i != 0 || memcmp(buf + 33, "ffff800000001000:", 17) == 0, "vaddr text");
	}
}


/* ---- perftest -R: struct pingpong_dest and the exchange over SENDs ---- */

/* Frame 31 of roce_rdma_cm_ib_write_bw_R.pcap (the client's key of QP 0x4c), and frame 77
 * (the close barrier: the same key, the padding after rkey holding stack bytes). */
static const char *const cap_dest31 = "00000000000000010000004c00f88c3300004cf300000000"
	"00005573110c100000000000000000000000ffff0a6300020000000000000001";
static const char *const cap_dest77 = "00000000000000010000004c00f88c3300004cf373550000"
	"00005573110c100000000000000000000000ffff0a6300020000000000000001";

static void
unhex(const char *h, uint8_t *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned int b = 0;

		sscanf(h + 2 * i, "%2x", &b);
		out[i] = (uint8_t)b;
	}
}

static void
test_dest_codec(void)
{
	static const uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, 10, 99, 0, 2 };
	uint8_t b[ROCE_PERF_OOB_DEST_LEN], b2[ROCE_PERF_OOB_DEST_LEN], big[64];
	struct roce_perf_key k, k2;
	unsigned int i;

	unhex(cap_dest31, b, sizeof(b));
	RT_CHECK(roce_perf_oob_dest_decode(b, sizeof(b), &k) == 0, "frame 31 decodes");
	RT_CHECK(k.lid == 0 && k.out_reads == 1 && k.qpn == 0x4c && k.psn == 0xf88c33 &&
		k.rkey == 0x4cf3 && k.vaddr == 0x5573110c1000ull && k.srqn == 0 &&
		memcmp(k.gid, gid, 16) == 0, "frame 31: qpn 0x%x psn 0x%x rkey 0x%x vaddr 0x%"
		PRIx64, k.qpn, k.psn, k.rkey, k.vaddr);
	/* re-encoded: the same bytes, but for the gid_index we send as 0 */
	RT_CHECK(roce_perf_oob_dest_encode(b2, sizeof(b2), &k) == 0 &&
		memcmp(b2, b, 52) == 0 && b2[52] == 0 && b2[55] == 0, "frame 31 re-encodes");
	unhex(cap_dest77, b2, sizeof(b2));
	RT_CHECK(roce_perf_oob_dest_decode(b2, sizeof(b2), &k2) == 0 &&
		memcmp(&k, &k2, sizeof(k)) == 0, "frame 77: the padding's stack bytes ignored");
	/* round trips */
	k = (struct roce_perf_key){ .lid = 0xffff, .out_reads = 0xffff, .qpn = 0xffffff,
		.psn = 0xffffff, .rkey = 0xffffffff, .vaddr = UINT64_MAX, .srqn = 0xffffffff };
	memset(k.gid, 0xab, 16);
	RT_CHECK(roce_perf_oob_dest_encode(b, sizeof(b), &k) == 0 &&
		roce_perf_oob_dest_decode(b, sizeof(b), &k2) == 0 &&
		memcmp(&k, &k2, sizeof(k)) == 0, "largest values round trip");
	memset(&k, 0, sizeof(k));
	RT_CHECK(roce_perf_oob_dest_encode(b, sizeof(b), &k) == 0 &&
		roce_perf_oob_dest_decode(b, sizeof(b), &k2) == 0 && k2.qpn == 0,
		"the all-zero barrier key round trips");
	/* lengths */
	memset(big, 0, sizeof(big));
	for (i = 0; i < sizeof(big); i++)
		if (i != ROCE_PERF_OOB_DEST_LEN)
			RT_CHECK(roce_perf_oob_dest_decode(big, i, &k) == -EINVAL &&
				roce_perf_oob_dest_encode(big, i, &k2) == -EINVAL,
				"length %u refused", i);
	/* fields the key cannot hold */
	static const struct { unsigned int off; uint8_t byte; const char *what; } bad[] = {
		{ 1, 1, "lid 0x10000" }, { 0, 0xff, "negative lid" },
		{ 5, 1, "out_reads 0x10000" }, { 4, 0xff, "negative out_reads" },
		{ 8, 1, "qpn 0x1000000" }, { 11 - 3, 0x80, "negative qpn" },
		{ 12, 1, "psn 0x1000000" },
	};
	for (i = 0; i < RTE_DIM(bad); i++) {
		unhex(cap_dest31, b, sizeof(b));
		b[bad[i].off] = bad[i].byte;
		RT_CHECK(roce_perf_oob_dest_decode(b, sizeof(b), &k) == -EPROTO, "%s refused",
			bad[i].what);
	}
	k = (struct roce_perf_key){ .qpn = 0x1000000 };
	RT_CHECK(roce_perf_oob_dest_encode(b, sizeof(b), &k) == -EINVAL, "encode: qpn too wide");
	k = (struct roce_perf_key){ .psn = 0x1000000 };
	RT_CHECK(roce_perf_oob_dest_encode(b, sizeof(b), &k) == -EINVAL, "encode: psn too wide");
}

/* A message channel over a SOCK_SEQPACKET pair: one datagram per SEND, as a QP delivers them.
 * It records the sizes it sent and can corrupt one of them. */
struct seq_chan {
	int fd;
	unsigned int sent;
	uint16_t sizes[MAX_MSGS];
	int bad_at;		/* send this message one byte longer; -1: none */
	int bad_qpn_at;		/* set the qpn's top byte of this message; -1: none */
	unsigned int cm_calls;
	unsigned int cm_at;	/* messages sent when cm_connect came */
	struct roce_perf_oob_result res;
	struct roce_perf_oob_cfg cfg;
	struct roce_perf_key key;
	int ret;
};

static int
seq_send(struct seq_chan *c, const void *out, size_t len, int64_t deadline)
{
	uint8_t buf[MSG_MAX + 1];
	size_t n = len;

	(void)deadline;
	memcpy(buf, out, len);
	if ((int)c->sent == c->bad_at)
		buf[n++] = 0;
	if ((int)c->sent == c->bad_qpn_at && len == ROCE_PERF_OOB_DEST_LEN)
		buf[8] = 0x01;
	if (c->sent < MAX_MSGS)
		c->sizes[c->sent] = (uint16_t)len;
	c->sent++;
	return send(c->fd, buf, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -ECONNRESET;
}

static int
seq_recv(struct seq_chan *c, void *in, size_t len, int timeout_ms)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	uint8_t buf[MSG_MAX + 1];
	ssize_t n;

	if (poll(&p, 1, timeout_ms) != 1)
		return -ETIMEDOUT;
	n = recv(c->fd, buf, sizeof(buf), 0);
	if (n <= 0)
		return -ECONNRESET;
	if ((size_t)n != len)
		return -EPROTO;
	memcpy(in, buf, len);
	return 0;
}

static int
seq_xchg(void *ctx, enum roce_perf_role role, const void *out, void *in, size_t len,
		int timeout_ms)
{
	struct seq_chan *c = ctx;
	int ret;

	if (role == ROCE_PERF_CLIENT) {
		ret = seq_send(c, out, len, 0);
		return ret != 0 ? ret : seq_recv(c, in, len, timeout_ms);
	}
	ret = seq_recv(c, in, len, timeout_ms);
	return ret != 0 ? ret : seq_send(c, out, len, 0);
}

static int
seq_cm(void *arg)
{
	struct seq_chan *c = arg;

	c->cm_calls++;
	c->cm_at = c->sent;
	return 0;
}

static void *
seq_run(void *arg)
{
	struct seq_chan *c = arg;
	struct roce_perf_oob_chan ch = { ROCE_PERF_OOB_RDMA_CM, seq_xchg, c };

	c->ret = roce_perf_oob_run_chan(&ch, &c->cfg, &c->res);
	shutdown(c->fd, SHUT_RDWR);
	return NULL;
}

static void
seq_pair(enum roce_perf_test test, struct seq_chan *c, struct seq_chan *s)
{
	pthread_t th;
	int sv[2];

	c->key = (struct roce_perf_key){ .out_reads = 1, .qpn = 0x4c, .psn = 0xf88c33,
		.rkey = 0x4cf3, .vaddr = 0x5573110c1000ull };
	s->key = (struct roce_perf_key){ .out_reads = 1, .qpn = 0x4c, .psn = 0x8390f0,
		.rkey = 0x4769, .vaddr = 0x55f24869d000ull };
	c->cfg = (struct roce_perf_oob_cfg){ .test = test, .role = ROCE_PERF_CLIENT, .nqps = 1,
		.timeout_ms = 2000, .local = { .page_size = 4096, .cache_line = 64, .mtu = 3 },
		.keys = &c->key };
	c->cfg.hooks.cm_connect = seq_cm;
	c->cfg.hooks.arg = c;
	s->cfg = c->cfg;
	s->cfg.role = ROCE_PERF_SERVER;
	s->cfg.keys = &s->key;
	s->cfg.hooks.arg = s;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
		return;
	c->fd = sv[0];
	s->fd = sv[1];
	if (pthread_create(&th, NULL, seq_run, s) != 0) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	seq_run(c);
	pthread_join(th, NULL);
	close(sv[0]);
	close(sv[1]);
}

static void
seq_init(struct seq_chan *c)
{
	memset(c, 0, sizeof(*c));
	c->bad_at = c->bad_qpn_at = -1;
}

static void
test_rdma_cm_pair(void)
{
	/* roce_rdma_cm_ib_write_bw_R.pcap, each direction, after the communication QP's CM
	 * connection: version, page size, cache line, MTU, barrier, [CM], barrier, key, key,
	 * barrier, |traffic|, sync, 5 report values, close; no done */
	static const uint16_t want[] = { 16, 4, 4, 2, 56, 56, 56, 56, 56, 56, 8, 8, 8, 8, 8, 56 };
	struct seq_chan c, s;
	unsigned int i;
	bool same;

	seq_init(&c);
	seq_init(&s);
	seq_pair(ROCE_PERF_WRITE_BW, &c, &s);
	RT_CHECK(c.ret == 0 && s.ret == 0, "write_bw -R pair: %d %d", c.ret, s.ret);
	same = c.sent == RTE_DIM(want) && s.sent == RTE_DIM(want);
	for (i = 0; same && i < RTE_DIM(want); i++)
		same = c.sizes[i] == want[i] && s.sizes[i] == want[i];
	RT_CHECK(same, "write_bw -R: the capture's message sizes (client %u, server %u sent)",
		c.sent, s.sent);
	RT_CHECK(c.cm_calls == 1 && s.cm_calls == 1 && c.cm_at == 5 && s.cm_at == 5,
		"the test QPs connect between the two zero barriers (%u %u, at %u %u)",
		c.cm_calls, s.cm_calls, c.cm_at, s.cm_at);
	RT_CHECK(c.res.peer_keys[0].qpn == 0x4c && c.res.peer_keys[0].rkey == 0x4769 &&
		s.res.peer_keys[0].vaddr == 0x5573110c1000ull, "the keys crossed");
	/* write_lat: the extra barrier, no close */
	seq_init(&c);
	seq_init(&s);
	seq_pair(ROCE_PERF_WRITE_LAT, &c, &s);
	RT_CHECK(c.ret == 0 && s.ret == 0 && c.sent == 4 + 2 + 4 && s.sent == 10,
		"write_lat -R: %d %d, %u messages", c.ret, s.ret, c.sent);
	/* send_bw: K x N, K0, K x N, K0, |traffic|, K0 */
	seq_init(&c);
	seq_init(&s);
	seq_pair(ROCE_PERF_SEND_BW, &c, &s);
	RT_CHECK(c.ret == 0 && s.ret == 0 && c.sent == 4 + 2 + 5 && s.sent == 11,
		"send_bw -R: %d %d, %u messages", c.ret, s.ret, c.sent);
	/* a message one byte longer than the step's: refused */
	seq_init(&c);
	seq_init(&s);
	c.bad_at = 2;
	seq_pair(ROCE_PERF_READ_BW, &c, &s);
	RT_CHECK(s.ret == -EPROTO && c.ret != 0, "a 5-byte cache line message: %d %d", s.ret,
		c.ret);
	/* a key whose QPN is wider than 24 bits: refused */
	seq_init(&c);
	seq_init(&s);
	s.bad_qpn_at = 6;
	seq_pair(ROCE_PERF_WRITE_BW, &c, &s);
	RT_CHECK(c.ret == -EPROTO && s.ret != 0, "a 25-bit QPN in a key: %d %d", c.ret, s.ret);
	/* a channel without xchg */
	struct roce_perf_oob_chan none = { ROCE_PERF_OOB_RDMA_CM, NULL, NULL };
	RT_CHECK(roce_perf_oob_run_chan(&none, &c.cfg, &c.res) == -EINVAL, "no xchg: EINVAL");
}

int
main(void)
{
	load_flows();
	RT_RUN(test_codec_cases);
	RT_RUN(test_plans);
	RT_RUN(test_codec_captures);
	RT_RUN(test_replay_captures);
	RT_RUN(test_replay_captures_caps);
	RT_RUN(test_early_close);
	RT_RUN(test_hostile);
	RT_RUN(test_refused_recordings);
	RT_RUN(test_caps_recordings);
	RT_RUN(test_caps_pair);
	RT_RUN(test_params_codec);
	RT_RUN(test_plan_modes);
	RT_RUN(test_mode_pairs);
	RT_RUN(test_traffic_timeout);
	RT_RUN(test_drip_deadline);
	RT_RUN(test_gid_check);
	RT_RUN(test_key_vaddr);
	RT_RUN(test_dest_codec);
	RT_RUN(test_rdma_cm_pair);
	return rt_report("perf_oob");
}
