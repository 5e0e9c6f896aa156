/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The perftest OOB exchange: message sequences per test (one table), the blocking per-message
 * exchange over a connected socket, and the driver that walks a test's sequence.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "roce_perf_oob.h"
#include "perf_private.h"

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

/* Steps of a test's sequence; CONNECT and TRAFFIC send nothing, they call hooks. */
enum step {
	STEP_END,
	STEP_PROLOGUE,	/* version, page size, cache line size, MTU */
	STEP_KEYS_N,	/* one key exchange per QP */
	STEP_KEY0,	/* one key exchange with QP 0's key: barriers, sync, close */
	STEP_CONNECT,	/* hook: peer keys known */
	STEP_TRAFFIC,	/* hook: RoCE traffic */
	STEP_REPORTS,	/* 5 report values */
	STEP_DONE,	/* "done\0", written only */
};

#define MAX_STEPS 12

#define BW_STEPS { STEP_PROLOGUE, STEP_KEYS_N, STEP_CONNECT, STEP_KEYS_N, STEP_KEY0, \
	STEP_TRAFFIC, STEP_KEY0, STEP_REPORTS, STEP_KEY0, STEP_DONE, STEP_END }
#define SEND_STEPS { STEP_PROLOGUE, STEP_KEYS_N, STEP_CONNECT, STEP_KEY0, STEP_KEYS_N, \
	STEP_KEY0, STEP_TRAFFIC, STEP_KEY0, STEP_DONE, STEP_END }

/* Per test: INDEX.md "Per-test sequences" (perftest 6.06 captures). */
static const uint8_t test_steps[ROCE_PERF_TEST_MAX][MAX_STEPS] = {
	[ROCE_PERF_WRITE_BW] = BW_STEPS,
	[ROCE_PERF_READ_BW] = BW_STEPS,
	[ROCE_PERF_ATOMIC_BW] = BW_STEPS,
	[ROCE_PERF_SEND_BW] = SEND_STEPS,
	[ROCE_PERF_SEND_LAT] = SEND_STEPS,
	/* An extra initial key exchange, and no close handshake nor done afterwards. */
	[ROCE_PERF_WRITE_LAT] = { STEP_PROLOGUE, STEP_KEY0, STEP_KEYS_N, STEP_CONNECT,
		STEP_KEYS_N, STEP_KEY0, STEP_TRAFFIC, STEP_END },
	[ROCE_PERF_READ_LAT] = { STEP_PROLOGUE, STEP_KEY0, STEP_KEYS_N, STEP_CONNECT,
		STEP_KEYS_N, STEP_KEY0, STEP_TRAFFIC, STEP_KEY0, STEP_DONE, STEP_END },
};

static const char *const test_names[ROCE_PERF_TEST_MAX] = {
	[ROCE_PERF_WRITE_BW] = "write_bw",
	[ROCE_PERF_READ_BW] = "read_bw",
	[ROCE_PERF_ATOMIC_BW] = "atomic_bw",
	[ROCE_PERF_SEND_BW] = "send_bw",
	[ROCE_PERF_WRITE_LAT] = "write_lat",
	[ROCE_PERF_READ_LAT] = "read_lat",
	[ROCE_PERF_SEND_LAT] = "send_lat",
};

static const uint16_t prologue_sizes[] = {
	ROCE_PERF_OOB_VERSION_LEN, ROCE_PERF_OOB_SYS_LEN, ROCE_PERF_OOB_SYS_LEN,
	ROCE_PERF_OOB_MTU_LEN,
};
static const uint16_t key_sizes[] = { ROCE_PERF_OOB_KEY_LEN };
static const uint16_t report_sizes[ROCE_PERF_OOB_NB_REPORT] = {
	ROCE_PERF_OOB_REPORT_LEN, ROCE_PERF_OOB_REPORT_LEN, ROCE_PERF_OOB_REPORT_LEN,
	ROCE_PERF_OOB_REPORT_LEN, ROCE_PERF_OOB_REPORT_LEN,
};
static const uint16_t done_sizes[] = { ROCE_PERF_OOB_DONE_LEN };

/* Message sizes each step sends (and receives, except DONE); per_qp repeats them N times. */
static const struct {
	const uint16_t *sizes;
	uint8_t nb;
	bool per_qp;
} step_msgs[] = {
	[STEP_PROLOGUE] = { prologue_sizes, DIM(prologue_sizes), false },
	[STEP_KEYS_N] = { key_sizes, 1, true },
	[STEP_KEY0] = { key_sizes, 1, false },
	[STEP_REPORTS] = { report_sizes, DIM(report_sizes), false },
	[STEP_DONE] = { done_sizes, 1, false },
};

const char *
roce_perf_test_name(enum roce_perf_test test)
{
	return (unsigned int)test < ROCE_PERF_TEST_MAX ? test_names[test] : NULL;
}

int
roce_perf_oob_plan(enum roce_perf_test test, unsigned int nqps, uint16_t *sizes, size_t cap,
		unsigned int *traffic_at)
{
	const uint8_t *st;
	unsigned int n = 0, i, j, reps;

	if ((unsigned int)test >= ROCE_PERF_TEST_MAX || nqps == 0 ||
			nqps > ROCE_PERF_OOB_MAX_QPS)
		return -EINVAL;
	for (st = test_steps[test]; *st != STEP_END; st++) {
		if (*st == STEP_TRAFFIC && traffic_at != NULL)
			*traffic_at = n;
		if (*st >= DIM(step_msgs))
			continue;
		reps = step_msgs[*st].per_qp ? nqps : 1;
		for (j = 0; j < reps; j++) {
			for (i = 0; i < step_msgs[*st].nb; i++, n++) {
				if (sizes == NULL)
					continue;
				if (n >= cap)
					return -ENOSPC;
				sizes[n] = step_msgs[*st].sizes[i];
			}
		}
	}
	return (int)n;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Wait for @events on @fd until @deadline (monotonic ms, < 0: none). A deadline, not a
 * timeout per poll(): a peer sending a byte now and then must not stretch a message.
 * @return 0, -ETIMEDOUT or -errno.
 */
static int
wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int64_t left = -1;
	int n;

	do {
		if (deadline >= 0) {
			left = deadline - now_ms();
			/* past it: still take what already arrived */
			left = left < 0 ? 0 : left > INT_MAX ? INT_MAX : left;
		}
		n = poll(&pfd, 1, (int)left);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

/* One send() per message; a partial one (never seen on the wire) is completed. */
static int
write_msg(int fd, const void *buf, size_t len, int64_t deadline)
{
	const uint8_t *p = buf;
	ssize_t n;
	int ret;

	while (len > 0) {
		ret = wait_fd(fd, POLLOUT, deadline);
		if (ret != 0)
			return ret;
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read exactly @len bytes; EOF before that is -ECONNRESET (the peer gave up or died). */
static int
read_msg(int fd, void *buf, size_t len, int64_t deadline)
{
	uint8_t *p = buf;
	ssize_t n;
	int ret;

	while (len > 0) {
		ret = wait_fd(fd, POLLIN, deadline);
		if (ret != 0)
			return ret;
		n = recv(fd, p, len, 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
roce_perf_oob_xchg(int fd, enum roce_perf_role role, const void *out, void *in, size_t len,
		int timeout_ms)
{
	/* one deadline for the step: our message and the whole of the peer's */
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	int ret;

	if (role == ROCE_PERF_CLIENT) {
		ret = write_msg(fd, out, len, deadline);
		return ret != 0 ? ret : read_msg(fd, in, len, deadline);
	}
	ret = read_msg(fd, in, len, deadline);
	return ret != 0 ? ret : write_msg(fd, out, len, deadline);
}

static bool
is_pow2(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static uint32_t
max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static bool
sys_valid(const struct roce_perf_sys *s)
{
	return is_pow2(s->page_size) && s->page_size <= (1u << 30) &&
		is_pow2(s->cache_line) && s->mtu >= 1 && s->mtu <= 5;
}

/* Exchange one 4-byte BE value. */
static int
xchg_u32(int fd, enum roce_perf_role role, uint32_t mine, uint32_t *peer, int timeout_ms)
{
	uint8_t out[ROCE_PERF_OOB_SYS_LEN], in[ROCE_PERF_OOB_SYS_LEN];
	int ret;

	ret = roce_perf_oob_u32_encode(out, sizeof(out), mine);
	if (ret == 0)
		ret = roce_perf_oob_xchg(fd, role, out, in, sizeof(in), timeout_ms);
	return ret != 0 ? ret : roce_perf_oob_u32_decode(in, sizeof(in), peer);
}

/* Our version message carries the capability tag only when we offer capabilities, so with
 * caps 0 it is byte for byte perftest 6.06's. */
static int
xchg_version(int fd, enum roce_perf_role role, uint32_t caps, struct roce_perf_sys *peer,
		int timeout_ms)
{
	uint8_t out[ROCE_PERF_OOB_VERSION_LEN], in[ROCE_PERF_OOB_VERSION_LEN];
	int ret;

	if (caps != 0)
		ret = roce_perf_oob_version_encode_caps(out, sizeof(out), ROCE_PERF_OOB_VERSION,
			caps);
	else
		ret = roce_perf_oob_version_encode(out, sizeof(out), ROCE_PERF_OOB_VERSION);
	if (ret == 0)
		ret = roce_perf_oob_xchg(fd, role, out, in, sizeof(in), timeout_ms);
	if (ret != 0)
		return ret;
	if (roce_perf_oob_version_decode_caps(in, sizeof(in), &peer->version, &peer->caps,
			NULL) != 0) {
		ROCE_PERF_LOG("peer version string is not a perftest version: refused");
		return -EPROTO;
	}
	return roce_perf_oob_version_check(peer->version);
}

static int
xchg_mtu(int fd, enum roce_perf_role role, uint8_t mine, uint8_t *peer, int timeout_ms)
{
	uint8_t out[ROCE_PERF_OOB_MTU_LEN], in[ROCE_PERF_OOB_MTU_LEN];
	int ret;

	ret = roce_perf_oob_mtu_encode(out, sizeof(out), mine);
	if (ret == 0)
		ret = roce_perf_oob_xchg(fd, role, out, in, sizeof(in), timeout_ms);
	return ret != 0 ? ret : roce_perf_oob_mtu_decode(in, sizeof(in), peer);
}

int
roce_perf_oob_prologue(int fd, enum roce_perf_role role, const struct roce_perf_sys *local,
		int timeout_ms, struct roce_perf_sys *peer, struct roce_perf_sys *agreed)
{
	int ret;

	if (!sys_valid(local))
		return -EINVAL;
	peer->caps = 0;
	ret = xchg_version(fd, role, local->caps, peer, timeout_ms);
	if (ret == 0)
		ret = xchg_u32(fd, role, local->page_size, &peer->page_size, timeout_ms);
	if (ret == 0)
		ret = xchg_u32(fd, role, local->cache_line, &peer->cache_line, timeout_ms);
	if (ret == 0)
		ret = xchg_mtu(fd, role, local->mtu, &peer->mtu, timeout_ms);
	if (ret != 0)
		return ret;
	if (!sys_valid(peer)) {
		ROCE_PERF_LOG("peer page size %u / cache line %u is not a power of two: refused",
			peer->page_size, peer->cache_line);
		return -EPROTO;
	}
	/* As perftest: the larger buffers and the smaller MTU. */
	agreed->version = ROCE_PERF_OOB_VERSION;
	agreed->page_size = max_u32(local->page_size, peer->page_size);
	agreed->cache_line = max_u32(local->cache_line, peer->cache_line);
	agreed->mtu = local->mtu < peer->mtu ? local->mtu : peer->mtu;
	agreed->caps = local->caps & peer->caps;
	return 0;
}

int
roce_perf_oob_keys(int fd, enum roce_perf_role role, const struct roce_perf_key *mine,
		struct roce_perf_key *peer, int timeout_ms)
{
	uint8_t out[ROCE_PERF_OOB_KEY_LEN], in[ROCE_PERF_OOB_KEY_LEN];
	int ret;

	ret = roce_perf_oob_key_encode(out, sizeof(out), mine);
	if (ret == 0)
		ret = roce_perf_oob_xchg(fd, role, out, in, sizeof(in), timeout_ms);
	if (ret != 0)
		return ret;
	ret = roce_perf_oob_key_decode(in, sizeof(in), peer);
	if (ret != 0) {
		/* a known perftest variant gets its own message */
		ret = roce_perf_key_diagnose(in, sizeof(in));
		if (ret == -EPROTO)
			ROCE_PERF_LOG("malformed key message from the peer: refused");
	}
	return ret;
}

/* The report values in wire order: two uint64 then three doubles (xchg_bw_reports). */
static const struct {
	size_t off;
	bool is_double;
} report_fields[ROCE_PERF_OOB_NB_REPORT] = {
	{ offsetof(struct roce_perf_report, size), false },
	{ offsetof(struct roce_perf_report, iters), false },
	{ offsetof(struct roce_perf_report, bw_peak), true },
	{ offsetof(struct roce_perf_report, bw_avg), true },
	{ offsetof(struct roce_perf_report, msg_rate), true },
};

/* Both kinds are 8 bytes: a double travels as its bits, so one path serves both. */
static int
xchg_report_field(int fd, enum roce_perf_role role, const void *mine, void *peer,
		int timeout_ms)
{
	uint8_t out[ROCE_PERF_OOB_REPORT_LEN], in[ROCE_PERF_OOB_REPORT_LEN];
	uint64_t v;
	int ret;

	memcpy(&v, mine, sizeof(v));
	roce_perf_oob_u64_encode(out, sizeof(out), v);
	ret = roce_perf_oob_xchg(fd, role, out, in, sizeof(in), timeout_ms);
	if (ret != 0)
		return ret;
	/* No validation: a half-duplex perftest server sends uninitialised bytes. */
	roce_perf_oob_u64_decode(in, sizeof(in), &v);
	memcpy(peer, &v, sizeof(v));
	return 0;
}

int
roce_perf_oob_reports(int fd, enum roce_perf_role role, const struct roce_perf_report *mine,
		struct roce_perf_report *peer, int timeout_ms)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ROCE_PERF_OOB_NB_REPORT; i++) {
		ret = xchg_report_field(fd, role, (const uint8_t *)mine + report_fields[i].off,
			(uint8_t *)peer + report_fields[i].off, timeout_ms);
		if (ret != 0)
			return ret;
	}
	return 0;
}

int
roce_perf_oob_done(int fd)
{
	uint8_t out[ROCE_PERF_OOB_DONE_LEN];
	ssize_t n;

	roce_perf_oob_done_encode(out, sizeof(out));
	do {
		n = send(fd, out, sizeof(out), MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	/* The peer may have written its done and closed already: a reset is the normal end. */
	if (n < 0 && errno != EPIPE && errno != ECONNRESET)
		return -errno;
	return 0;
}

/* State of one roce_perf_oob_run(). */
struct run_ctx {
	int fd;
	const struct roce_perf_oob_cfg *cfg;
	struct roce_perf_oob_result *res;
	struct roce_perf_report report;
	int key0_timeout_ms;	/* the close/sync key may wait for the peer's traffic */
};

static int
run_prologue(struct run_ctx *c)
{
	return roce_perf_oob_prologue(c->fd, c->cfg->role, &c->cfg->local, c->cfg->timeout_ms,
		&c->res->peer, &c->res->agreed);
}

static int
run_keys_n(struct run_ctx *c)
{
	unsigned int i;
	int ret;

	for (i = 0; i < c->cfg->nqps; i++) {
		ret = roce_perf_oob_keys(c->fd, c->cfg->role, &c->cfg->keys[i],
			&c->res->peer_keys[i], c->cfg->timeout_ms);
		if (ret != 0)
			return ret;
	}
	return 0;
}

/* Barriers and the close handshake resend QP 0's key; the peer's is only checked. */
static int
run_key0(struct run_ctx *c)
{
	struct roce_perf_key scratch;
	int tmo = c->key0_timeout_ms;

	c->key0_timeout_ms = c->cfg->timeout_ms;
	return roce_perf_oob_keys(c->fd, c->cfg->role, &c->cfg->keys[0], &scratch, tmo);
}

static int
run_connect(struct run_ctx *c)
{
	const struct roce_perf_oob_hooks *h = &c->cfg->hooks;

	return h->connect == NULL ? 0 : h->connect(h->arg, c->res->peer_keys, c->cfg->nqps);
}

static int
run_traffic(struct run_ctx *c)
{
	const struct roce_perf_oob_hooks *h = &c->cfg->hooks;

	/* every test's first message after the traffic is a single key exchange */
	if (c->cfg->traffic_timeout_ms != 0)
		c->key0_timeout_ms = c->cfg->traffic_timeout_ms;
	return h->traffic == NULL ? 0 : h->traffic(h->arg, &c->report);
}

static int
run_reports(struct run_ctx *c)
{
	return roce_perf_oob_reports(c->fd, c->cfg->role, &c->report, &c->res->peer_report,
		c->cfg->timeout_ms);
}

static int
run_done(struct run_ctx *c)
{
	return roce_perf_oob_done(c->fd);
}

static int (*const step_run[])(struct run_ctx *c) = {
	[STEP_PROLOGUE] = run_prologue,
	[STEP_KEYS_N] = run_keys_n,
	[STEP_KEY0] = run_key0,
	[STEP_CONNECT] = run_connect,
	[STEP_TRAFFIC] = run_traffic,
	[STEP_REPORTS] = run_reports,
	[STEP_DONE] = run_done,
};

static bool
cfg_valid(const struct roce_perf_oob_cfg *cfg)
{
	return (unsigned int)cfg->test < ROCE_PERF_TEST_MAX &&
		(cfg->role == ROCE_PERF_CLIENT || cfg->role == ROCE_PERF_SERVER) &&
		cfg->nqps >= 1 && cfg->nqps <= ROCE_PERF_OOB_MAX_QPS && cfg->keys != NULL;
}

int
roce_perf_oob_run(int fd, const struct roce_perf_oob_cfg *cfg, struct roce_perf_oob_result *res)
{
	struct run_ctx c = { .fd = fd, .cfg = cfg, .res = res };
	const uint8_t *st;
	int ret;

	if (cfg == NULL || res == NULL || !cfg_valid(cfg))
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	c.report = cfg->report;
	c.key0_timeout_ms = cfg->timeout_ms;
	for (st = test_steps[cfg->test]; *st != STEP_END; st++) {
		ret = step_run[*st](&c);
		if (ret != 0)
			return ret;
	}
	return 0;
}
