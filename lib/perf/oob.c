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

/* Steps of a test's sequence after the prologue; CONNECT, PREPARE and TRAFFIC send nothing,
 * they call hooks; LOOP .. LOOP_END repeat once per size of a -a sweep. */
enum step {
	STEP_END,
	STEP_KEYS_N,	/* one key exchange per QP */
	STEP_KEY0,	/* one key exchange with QP 0's key: barriers, sync, close */
	STEP_CONNECT,	/* hook: peer keys known */
	STEP_PREPARE,	/* hook: before the barrier of a size (perftest posts receives) */
	STEP_TRAFFIC,	/* hook: RoCE traffic */
	STEP_REPORTS,	/* 5 report values */
	STEP_DONE,	/* "done\0", written only */
	STEP_LOOP,
	STEP_LOOP_END,
};

/*
 * perftest 6.06's sequences (INDEX.md "Per-test sequences" for the captured ones; src/TEST_bw.c
 * and src/TEST_lat.c of perftest 6.06 for -b and the send tests' -a). After the prologue.
 */
static const uint8_t seq_bw[] = { STEP_KEYS_N, STEP_CONNECT, STEP_KEYS_N, STEP_KEY0,
	STEP_TRAFFIC, STEP_KEY0, STEP_REPORTS, STEP_KEY0, STEP_DONE, STEP_END };
/* -b: a barrier before the traffic, the reports right after it, no sync */
static const uint8_t seq_bw_duplex[] = { STEP_KEYS_N, STEP_CONNECT, STEP_KEYS_N, STEP_KEY0,
	STEP_KEY0, STEP_TRAFFIC, STEP_REPORTS, STEP_KEY0, STEP_DONE, STEP_END };
/* -b -a (write, read): a barrier before and after each size, then its reports */
static const uint8_t seq_bw_duplex_all[] = { STEP_KEYS_N, STEP_CONNECT, STEP_KEYS_N,
	STEP_KEY0, STEP_LOOP, STEP_KEY0, STEP_TRAFFIC, STEP_KEY0, STEP_REPORTS, STEP_LOOP_END,
	STEP_KEY0, STEP_DONE, STEP_END };
static const uint8_t seq_send[] = { STEP_KEYS_N, STEP_CONNECT, STEP_KEY0, STEP_KEYS_N,
	STEP_PREPARE, STEP_KEY0, STEP_TRAFFIC, STEP_KEY0, STEP_DONE, STEP_END };
/* send_bw -a: receives posted and a barrier before each size, a sync after it */
static const uint8_t seq_send_all[] = { STEP_KEYS_N, STEP_CONNECT, STEP_KEY0, STEP_KEYS_N,
	STEP_LOOP, STEP_PREPARE, STEP_KEY0, STEP_TRAFFIC, STEP_KEY0, STEP_LOOP_END, STEP_KEY0,
	STEP_DONE, STEP_END };
/* send_bw -b: the reports right after the traffic (with -a per size, then a sync) */
static const uint8_t seq_send_duplex[] = { STEP_KEYS_N, STEP_CONNECT, STEP_KEY0, STEP_KEYS_N,
	STEP_PREPARE, STEP_KEY0, STEP_TRAFFIC, STEP_REPORTS, STEP_KEY0, STEP_DONE, STEP_END };
static const uint8_t seq_send_duplex_all[] = { STEP_KEYS_N, STEP_CONNECT, STEP_KEY0,
	STEP_KEYS_N, STEP_LOOP, STEP_PREPARE, STEP_KEY0, STEP_TRAFFIC, STEP_REPORTS, STEP_KEY0,
	STEP_LOOP_END, STEP_KEY0, STEP_DONE, STEP_END };
/* send_lat -a: receives posted and a barrier before each size */
static const uint8_t seq_send_lat_all[] = { STEP_KEYS_N, STEP_CONNECT, STEP_KEY0, STEP_KEYS_N,
	STEP_LOOP, STEP_PREPARE, STEP_KEY0, STEP_TRAFFIC, STEP_LOOP_END, STEP_KEY0, STEP_DONE,
	STEP_END };
/* An extra initial key exchange, and no close handshake nor done afterwards. */
static const uint8_t seq_write_lat[] = { STEP_KEY0, STEP_KEYS_N, STEP_CONNECT, STEP_KEYS_N,
	STEP_KEY0, STEP_TRAFFIC, STEP_END };
static const uint8_t seq_read_lat[] = { STEP_KEY0, STEP_KEYS_N, STEP_CONNECT, STEP_KEYS_N,
	STEP_KEY0, STEP_TRAFFIC, STEP_KEY0, STEP_DONE, STEP_END };

static const char *const test_names[ROCE_PERF_TEST_MAX] = {
	[ROCE_PERF_WRITE_BW] = "write_bw",
	[ROCE_PERF_READ_BW] = "read_bw",
	[ROCE_PERF_ATOMIC_BW] = "atomic_bw",
	[ROCE_PERF_SEND_BW] = "send_bw",
	[ROCE_PERF_WRITE_LAT] = "write_lat",
	[ROCE_PERF_READ_LAT] = "read_lat",
	[ROCE_PERF_SEND_LAT] = "send_lat",
};

/*
 * The sequence of a test and mode, or NULL for a combination perftest has not (-b on a
 * latency test, send_bw -b --run_infinitely). With --run_infinitely perftest skips -b's
 * barrier and never leaves the traffic; send_bw -b -D exchanges no reports.
 */
/* The number of sizes of a -a sweep in @p m. */
static unsigned int
mode_sizes(const struct roce_perf_oob_mode *m)
{
	return m->nb_sizes != 0 ? m->nb_sizes : ROCE_PERF_OOB_NB_SIZES;
}

static const uint8_t *
test_seq(enum roce_perf_test test, const struct roce_perf_oob_mode *m)
{
	if (m->nb_sizes > ROCE_PERF_OOB_NB_SIZES)
		return NULL;
	bool duplex = m->duplex && !m->infinite;

	switch (test) {
	case ROCE_PERF_WRITE_BW:
	case ROCE_PERF_READ_BW:
		return !duplex ? seq_bw : m->all ? seq_bw_duplex_all : seq_bw_duplex;
	case ROCE_PERF_ATOMIC_BW:
		/* atomic_bw runs its one size for -a as without it */
		return duplex ? seq_bw_duplex : seq_bw;
	case ROCE_PERF_SEND_BW:
		if (m->duplex)
			return m->infinite ? NULL : m->all ? seq_send_duplex_all :
				m->duration ? seq_send : seq_send_duplex;
		return m->all && !m->infinite ? seq_send_all : seq_send;
	case ROCE_PERF_SEND_LAT:
		return m->duplex ? NULL : m->all ? seq_send_lat_all : seq_send;
	case ROCE_PERF_WRITE_LAT:
		return m->duplex ? NULL : seq_write_lat;
	case ROCE_PERF_READ_LAT:
		return m->duplex ? NULL : seq_read_lat;
	default:
		return NULL;
	}
}

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

/* Append the messages of one step; @return 0 or -ENOSPC. */
static int
plan_step(uint8_t step, unsigned int nqps, uint16_t *sizes, size_t cap, unsigned int *n)
{
	unsigned int i, j, reps;

	if (step >= DIM(step_msgs) || step_msgs[step].sizes == NULL)
		return 0;
	reps = step_msgs[step].per_qp ? nqps : 1;
	for (j = 0; j < reps; j++) {
		for (i = 0; i < step_msgs[step].nb; i++, (*n)++) {
			if (sizes == NULL)
				continue;
			if (*n >= cap)
				return -ENOSPC;
			sizes[*n] = step_msgs[step].sizes[i];
		}
	}
	return 0;
}

int
roce_perf_oob_plan_mode(enum roce_perf_test test, unsigned int nqps,
		const struct roce_perf_oob_mode *mode, uint16_t *sizes, size_t cap,
		unsigned int *traffic_at)
{
	static const struct roce_perf_oob_mode def;
	const struct roce_perf_oob_mode *m = mode != NULL ? mode : &def;
	const uint8_t *st, *loop = NULL;
	unsigned int n = 0, i, iter = 0;
	bool seen_traffic = false;

	if ((unsigned int)test >= ROCE_PERF_TEST_MAX || nqps == 0 ||
			nqps > ROCE_PERF_OOB_MAX_QPS)
		return -EINVAL;
	st = test_seq(test, m);
	if (st == NULL)
		return -EINVAL;
	for (i = 0; i < DIM(prologue_sizes); i++, n++) {
		if (sizes == NULL)
			continue;
		if (n >= cap)
			return -ENOSPC;
		sizes[n] = prologue_sizes[i];
	}
	for (; *st != STEP_END; st++) {
		if (*st == STEP_TRAFFIC && !seen_traffic) {
			seen_traffic = true;
			if (traffic_at != NULL)
				*traffic_at = n;
		}
		if (*st == STEP_LOOP)
			loop = st;
		if (*st == STEP_LOOP_END && ++iter < mode_sizes(m))
			st = loop;
		if (plan_step(*st, nqps, sizes, cap, &n) != 0)
			return -ENOSPC;
	}
	return (int)n;
}

int
roce_perf_oob_plan(enum roce_perf_test test, unsigned int nqps, uint16_t *sizes, size_t cap,
		unsigned int *traffic_at)
{
	return roce_perf_oob_plan_mode(test, nqps, NULL, sizes, cap, traffic_at);
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

/* The TCP channel: ctx is the socket. */
static int
tcp_xchg(void *ctx, enum roce_perf_role role, const void *out, void *in, size_t len,
		int timeout_ms)
{
	return roce_perf_oob_xchg(*(const int *)ctx, role, out, in, len, timeout_ms);
}

#define TCP_CHAN(fdp) { .transport = ROCE_PERF_OOB_TCP, .xchg = tcp_xchg, .ctx = (fdp) }

static int
chan_xchg(const struct roce_perf_oob_chan *ch, enum roce_perf_role role, const void *out,
		void *in, size_t len, int timeout_ms)
{
	return ch->xchg(ch->ctx, role, out, in, len, timeout_ms);
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
xchg_u32(const struct roce_perf_oob_chan *ch, enum roce_perf_role role, uint32_t mine, uint32_t *peer, int timeout_ms)
{
	uint8_t out[ROCE_PERF_OOB_SYS_LEN], in[ROCE_PERF_OOB_SYS_LEN];
	int ret;

	ret = roce_perf_oob_u32_encode(out, sizeof(out), mine);
	if (ret == 0)
		ret = chan_xchg(ch, role, out, in, sizeof(in), timeout_ms);
	return ret != 0 ? ret : roce_perf_oob_u32_decode(in, sizeof(in), peer);
}

/* Our version message carries the capability tag only when we offer capabilities, so with
 * caps 0 it is byte for byte perftest 6.06's. */
static int
xchg_version(const struct roce_perf_oob_chan *ch, enum roce_perf_role role, uint32_t caps, struct roce_perf_sys *peer,
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
		ret = chan_xchg(ch, role, out, in, sizeof(in), timeout_ms);
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
xchg_mtu(const struct roce_perf_oob_chan *ch, enum roce_perf_role role, uint8_t mine, uint8_t *peer, int timeout_ms)
{
	uint8_t out[ROCE_PERF_OOB_MTU_LEN], in[ROCE_PERF_OOB_MTU_LEN];
	int ret;

	ret = roce_perf_oob_mtu_encode(out, sizeof(out), mine);
	if (ret == 0)
		ret = chan_xchg(ch, role, out, in, sizeof(in), timeout_ms);
	return ret != 0 ? ret : roce_perf_oob_mtu_decode(in, sizeof(in), peer);
}

static int
chan_prologue(const struct roce_perf_oob_chan *ch, enum roce_perf_role role,
		const struct roce_perf_sys *local, int timeout_ms, struct roce_perf_sys *peer,
		struct roce_perf_sys *agreed)
{
	int ret;

	if (!sys_valid(local))
		return -EINVAL;
	peer->caps = 0;
	ret = xchg_version(ch, role, local->caps, peer, timeout_ms);
	if (ret == 0)
		ret = xchg_u32(ch, role, local->page_size, &peer->page_size, timeout_ms);
	if (ret == 0)
		ret = xchg_u32(ch, role, local->cache_line, &peer->cache_line, timeout_ms);
	if (ret == 0)
		ret = xchg_mtu(ch, role, local->mtu, &peer->mtu, timeout_ms);
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
roce_perf_oob_prologue(int fd, enum roce_perf_role role, const struct roce_perf_sys *local,
		int timeout_ms, struct roce_perf_sys *peer, struct roce_perf_sys *agreed)
{
	const struct roce_perf_oob_chan ch = TCP_CHAN(&fd);

	return chan_prologue(&ch, role, local, timeout_ms, peer, agreed);
}

/* -R: one binary struct pingpong_dest each way. */
static int
chan_dest(const struct roce_perf_oob_chan *ch, enum roce_perf_role role,
		const struct roce_perf_key *mine, struct roce_perf_key *peer, int timeout_ms)
{
	uint8_t out[ROCE_PERF_OOB_DEST_LEN], in[ROCE_PERF_OOB_DEST_LEN];
	int ret;

	ret = roce_perf_oob_dest_encode(out, sizeof(out), mine);
	if (ret == 0)
		ret = chan_xchg(ch, role, out, in, sizeof(in), timeout_ms);
	if (ret != 0)
		return ret;
	ret = roce_perf_oob_dest_decode(in, sizeof(in), peer);
	if (ret != 0)
		ROCE_PERF_LOG("malformed key message from the peer: refused");
	return ret;
}

static int
chan_keys(const struct roce_perf_oob_chan *ch, enum roce_perf_role role,
		const struct roce_perf_key *mine, struct roce_perf_key *peer, int timeout_ms)
{
	uint8_t out[ROCE_PERF_OOB_KEY_LEN], in[ROCE_PERF_OOB_KEY_LEN];
	int ret;

	if (ch->transport == ROCE_PERF_OOB_RDMA_CM)
		return chan_dest(ch, role, mine, peer, timeout_ms);
	ret = roce_perf_oob_key_encode(out, sizeof(out), mine);
	if (ret == 0)
		ret = chan_xchg(ch, role, out, in, sizeof(in), timeout_ms);
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

int
roce_perf_oob_keys(int fd, enum roce_perf_role role, const struct roce_perf_key *mine,
		struct roce_perf_key *peer, int timeout_ms)
{
	const struct roce_perf_oob_chan ch = TCP_CHAN(&fd);

	return chan_keys(&ch, role, mine, peer, timeout_ms);
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
xchg_report_field(const struct roce_perf_oob_chan *ch, enum roce_perf_role role, const void *mine, void *peer,
		int timeout_ms)
{
	uint8_t out[ROCE_PERF_OOB_REPORT_LEN], in[ROCE_PERF_OOB_REPORT_LEN];
	uint64_t v;
	int ret;

	memcpy(&v, mine, sizeof(v));
	roce_perf_oob_u64_encode(out, sizeof(out), v);
	ret = chan_xchg(ch, role, out, in, sizeof(in), timeout_ms);
	if (ret != 0)
		return ret;
	/* No validation: a half-duplex perftest server sends uninitialised bytes. */
	roce_perf_oob_u64_decode(in, sizeof(in), &v);
	memcpy(peer, &v, sizeof(v));
	return 0;
}

static int
chan_reports(const struct roce_perf_oob_chan *ch, enum roce_perf_role role,
		const struct roce_perf_report *mine, struct roce_perf_report *peer, int timeout_ms)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ROCE_PERF_OOB_NB_REPORT; i++) {
		ret = xchg_report_field(ch, role, (const uint8_t *)mine + report_fields[i].off,
			(uint8_t *)peer + report_fields[i].off, timeout_ms);
		if (ret != 0)
			return ret;
	}
	return 0;
}

int
roce_perf_oob_reports(int fd, enum roce_perf_role role, const struct roce_perf_report *mine,
		struct roce_perf_report *peer, int timeout_ms)
{
	const struct roce_perf_oob_chan ch = TCP_CHAN(&fd);

	return chan_reports(&ch, role, mine, peer, timeout_ms);
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
	const struct roce_perf_oob_chan *ch;
	const struct roce_perf_oob_cfg *cfg;
	struct roce_perf_oob_result *res;
	struct roce_perf_report report;
	struct roce_perf_oob_setup setup;	/* keys, their number, the mode */
	bool in_loop;
	int next_timeout_ms;	/* the first exchange after the traffic; 0: timeout_ms */
	bool write_first;	/* the next exchange writes first, whatever our role */
	bool ended;		/* the traffic hook ended the exchange */
};

/* The deadline and order of the next exchange (one-shot: the traffic's). */
static int
next_timeout(struct run_ctx *c)
{
	int tmo = c->next_timeout_ms != 0 ? c->next_timeout_ms : c->cfg->timeout_ms;

	c->next_timeout_ms = 0;
	return tmo;
}

static enum roce_perf_role
next_role(struct run_ctx *c)
{
	enum roce_perf_role r = c->write_first ? ROCE_PERF_CLIENT : c->cfg->role;

	c->write_first = false;
	return r;
}

static int
run_keys_n(struct run_ctx *c)
{
	unsigned int i;
	int ret;

	for (i = 0; i < c->setup.nqps; i++) {
		ret = chan_keys(c->ch, next_role(c), &c->setup.keys[i],
			&c->res->peer_keys[i], next_timeout(c));
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

	return chan_keys(c->ch, next_role(c), &c->setup.keys[0], &scratch, next_timeout(c));
}

/* -R: perftest's create_rdma_cm_connection(): a barrier with an all-zero key (its my_dest[0]
 * before set_up_connection()), the test QPs' CM connections, the same barrier again. */
static int
run_cm(struct run_ctx *c)
{
	const struct roce_perf_oob_hooks *h = &c->cfg->hooks;
	struct roce_perf_key zero, scratch;
	int ret;

	memset(&zero, 0, sizeof(zero));
	ret = chan_keys(c->ch, next_role(c), &zero, &scratch, next_timeout(c));
	if (ret == 0 && h->cm_connect != NULL)
		ret = h->cm_connect(h->arg);
	if (ret == 0)
		ret = chan_keys(c->ch, next_role(c), &zero, &scratch, next_timeout(c));
	return ret;
}

static int
run_connect(struct run_ctx *c)
{
	const struct roce_perf_oob_hooks *h = &c->cfg->hooks;

	return h->connect == NULL ? 0 : h->connect(h->arg, c->res->peer_keys, c->setup.nqps);
}

static int
run_prepare(struct run_ctx *c)
{
	const struct roce_perf_oob_hooks *h = &c->cfg->hooks;

	return h->prepare == NULL ? 0 : h->prepare(h->arg);
}

static int
run_traffic(struct run_ctx *c)
{
	const struct roce_perf_oob_hooks *h = &c->cfg->hooks;
	unsigned int sizes = c->in_loop || !c->setup.mode.all ? 1 : mode_sizes(&c->setup.mode);
	int ret;

	/* every test's first message after the traffic waits for the peer's traffic */
	if (c->setup.traffic_timeout_ms != 0)
		c->next_timeout_ms = c->setup.traffic_timeout_ms;
	ret = h->traffic == NULL ? 0 : h->traffic(h->arg, &c->report, sizes);
	if (ret == ROCE_PERF_OOB_END)
		c->ended = true;
	else if (ret == ROCE_PERF_OOB_FIRST)
		c->write_first = true;
	return ret > 0 ? 0 : ret;
}

static int
run_reports(struct run_ctx *c)
{
	const struct roce_perf_oob_hooks *h = &c->cfg->hooks;
	int ret = chan_reports(c->ch, next_role(c), &c->report, &c->res->peer_report,
		next_timeout(c));

	return ret != 0 || h->report == NULL ? ret : h->report(h->arg, &c->res->peer_report);
}

/* perftest's rdma_cm modes write no "done": the CM's disconnects end the test. */
static int
run_done(struct run_ctx *c)
{
	if (c->ch->transport != ROCE_PERF_OOB_TCP)
		return 0;
	return roce_perf_oob_done(*(const int *)c->ch->ctx);
}

static int
run_nothing(struct run_ctx *c)
{
	(void)c;
	return 0;
}

static int (*const step_run[])(struct run_ctx *c) = {
	[STEP_KEYS_N] = run_keys_n,
	[STEP_KEY0] = run_key0,
	[STEP_CONNECT] = run_connect,
	[STEP_PREPARE] = run_prepare,
	[STEP_TRAFFIC] = run_traffic,
	[STEP_REPORTS] = run_reports,
	[STEP_DONE] = run_done,
	[STEP_LOOP] = run_nothing,
	[STEP_LOOP_END] = run_nothing,
};

static bool
cfg_valid(const struct roce_perf_oob_cfg *cfg)
{
	return (unsigned int)cfg->test < ROCE_PERF_TEST_MAX &&
		(cfg->role == ROCE_PERF_CLIENT || cfg->role == ROCE_PERF_SERVER) &&
		cfg->nqps >= 1 && cfg->nqps <= ROCE_PERF_OOB_MAX_QPS && cfg->keys != NULL;
}

/* Our parameters against the peer's, when both sides offered them. */
static int
run_params(struct run_ctx *c)
{
	uint8_t out[ROCE_PERF_OOB_PARAMS_LEN], in[ROCE_PERF_OOB_PARAMS_LEN];
	struct roce_perf_params mine = c->cfg->params;
	int ret;

	mine.test = (uint32_t)c->cfg->test;
	ret = roce_perf_oob_params_encode(out, sizeof(out), &mine);
	if (ret == 0)
		ret = chan_xchg(c->ch, c->cfg->role, out, in, sizeof(in), c->cfg->timeout_ms);
	if (ret != 0)
		return ret;
	ret = roce_perf_oob_params_decode(in, sizeof(in), &c->res->peer_params);
	if (ret != 0) {
		ROCE_PERF_LOG("malformed parameters message from the peer: refused");
		return -EPROTO;
	}
	c->res->has_peer_params = true;
	return 0;
}

/* The prologue, the parameters and the agree hook: then the keys and the mode are final. */
static int
run_start(struct run_ctx *c)
{
	const struct roce_perf_oob_hooks *h = &c->cfg->hooks;
	int ret = chan_prologue(c->ch, c->cfg->role, &c->cfg->local, c->cfg->timeout_ms,
		&c->res->peer, &c->res->agreed);

	if (ret == 0 && (c->res->agreed.caps & ROCE_PERF_CAP_PARAMS))
		ret = run_params(c);
	if (ret != 0)
		return ret;
	if (h->agree != NULL) {
		ret = h->agree(h->arg, c->res->has_peer_params ? &c->res->peer_params : NULL,
			&c->setup);
		if (ret != 0)
			return ret < 0 ? ret : -EINVAL;
	}
	if (c->setup.keys == NULL || c->setup.nqps == 0 ||
			c->setup.nqps > ROCE_PERF_OOB_MAX_QPS)
		return -EINVAL;
	if (c->ch->transport == ROCE_PERF_OOB_RDMA_CM)
		return run_cm(c);
	return 0;
}

int
roce_perf_oob_run(int fd, const struct roce_perf_oob_cfg *cfg, struct roce_perf_oob_result *res)
{
	const struct roce_perf_oob_chan ch = TCP_CHAN(&fd);

	return roce_perf_oob_run_chan(&ch, cfg, res);
}

int
roce_perf_oob_run_chan(const struct roce_perf_oob_chan *ch, const struct roce_perf_oob_cfg *cfg,
		struct roce_perf_oob_result *res)
{
	struct run_ctx c = { .ch = ch, .cfg = cfg, .res = res };
	const uint8_t *st, *loop = NULL;
	unsigned int iter = 0;
	int ret;

	if (ch == NULL || ch->xchg == NULL || cfg == NULL || res == NULL || !cfg_valid(cfg) ||
			test_seq(cfg->test, &cfg->mode) == NULL)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	c.report = cfg->report;
	c.setup = (struct roce_perf_oob_setup){ cfg->keys, cfg->nqps, cfg->mode,
		cfg->traffic_timeout_ms };
	if ((ret = run_start(&c)) != 0)
		return ret;
	st = test_seq(cfg->test, &c.setup.mode);
	if (st == NULL)
		return -EINVAL;
	for (; *st != STEP_END && !c.ended; st++) {
		if (*st == STEP_LOOP) {
			loop = st;
			c.in_loop = true;
		} else if (*st == STEP_LOOP_END) {
			if (++iter < mode_sizes(&c.setup.mode))
				st = loop;
			else
				c.in_loop = false;
		}
		ret = step_run[*st](&c);
		if (ret != 0)
			return ret;
	}
	return 0;
}
