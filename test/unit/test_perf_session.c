/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The perftest session driver (lib/perf/session*.c) over a fake backend, without a daemon.
 *
 * Two fake daemons share one in-memory fabric (MRs by key, QPs by number) that carries the
 * jobs' data for real: WRITE and READ copy between MRs, SEND lands in the peer's receive job,
 * fetch-and-add adds, latency jobs pair with the peer's. A server and a client session run in
 * two threads and talk perftest's side channel over loopback TCP. Covered:
 *  - bw and lat of every verb with --verify, both sides: results, verification, the rights
 *    asked for, the daemon memory per QP, nothing left behind;
 *  - -q 4, -a, -D; verify mismatch on the receiver (WRITE) and on the client (READ);
 *  - a backend error at every step of either side (status, port, MR, QP create, connect, job
 *    start, job polling, fill, digest, read-back, MR deregistration): the session returns it and
 *    tears down what it made, the peer fails cleanly;
 *  - a peer that disconnects mid-run, one that closes before the keys, one silent after the
 *    traffic (the side channel's deadline), a peer key aiming at a third host, fewer peer QPs;
 *  - jobs that make no progress, ended by an interrupt (jobs stopped); the server interrupted
 *    while it waits for a client;
 *  - daemon limits: taken from the backend's status, today's defaults when it reports none.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "roce_perf_session.h"
#include "roce_test.h"

#define FAKE_MRS 16
#define FAKE_QPS 64
#define FAKE_LOG 2048
#define INJECTED (-EHOSTDOWN)

/* ---- the fake fabric and daemons ---- */

enum fake_op {
	F_STATUS, F_PORT, F_MR_CREATE, F_MR_DESTROY, F_MR_FILL, F_MR_DIGEST, F_MR_READ,
	F_QP_CREATE, F_QP_CONNECT, F_QP_DESTROY, F_JOB_START, F_JOB_STOP, F_JOB_SHOW,
	F_JOB_TOTAL, F_AH_CREATE, F_AH_DESTROY, F_OP_MAX,
};

static const char *const fake_op_names[F_OP_MAX] = {
	"status", "port_info", "mr_create", "mr_destroy", "mr_fill", "mr_digest", "mr_read",
	"qp_create", "qp_connect", "qp_destroy", "job_start", "job_stop", "job_show",
	"job_total", "ah_create", "ah_destroy",
};

struct fake_daemon;

struct fake_mr {
	struct fake_daemon *owner;	/* NULL: free */
	uint32_t key;
	uint64_t iova;
	uint64_t len;
	unsigned int access;
	uint8_t *mem;
};

struct fake_job {
	bool active;
	bool running;
	bool unlimited;			/* no count nor duration: 10 more each poll */
	bool paired;			/* lat write/send: the peer's job ran too */
	struct roce_perf_job j;
	uint64_t completed;
	uint64_t bytes;
	uint64_t errors;
	const char *first_error;
};

struct fake_qp {
	struct fake_daemon *owner;	/* NULL: free */
	uint32_t qpn;
	uint32_t psn;
	unsigned int access;
	bool connected;
	bool ud;			/* in RTS from its creation, never connected */
	uint32_t qkey;
	uint32_t remote_qpn;		/* UD: its sending job's */
	struct fake_job job;
};

struct fabric {
	pthread_mutex_t lock;
	struct fake_mr mr[FAKE_MRS];
	struct fake_qp qp[FAKE_QPS];
	uint32_t next_key;
	uint32_t next_qpn;
};

struct fake_daemon {
	struct fabric *fab;
	const char *ip;
	unsigned int ip_mtu;
	/* knobs */
	enum fake_op fail_op;		/* F_OP_MAX: none */
	unsigned int fail_nth;		/* 1: the first call */
	bool report_limits;
	struct roce_perf_daemon limits;	/* reported when report_limits */
	bool corrupt;			/* flip a byte of what our jobs deliver */
	bool stuck;			/* jobs never end by themselves */
	bool no_rights;			/* register and create without the rights asked for */
	struct roce_perf_session *kill_on_job;	/* interrupt this session when a job starts */
	/* what happened */
	unsigned int calls[F_OP_MAX];
	unsigned int mrs, qps;		/* alive */
	unsigned int mr_access, qp_access;
	uint64_t mr_size;
	uint64_t heap;
	struct roce_perf_qp_connect conn;
	uint32_t ah_live;		/* bit n: AH n + 1 exists (-c UD) */
	unsigned int ahs;		/* alive */
	char ah_ip[46];			/* the last AH's address */
	struct roce_perf_qp_conf qp_conf;	/* the last QP's */
	struct roce_perf_job ud_job;	/* the last UD job that sends */
	char log[FAKE_LOG];		/* what the backend said failed */
};

static uint32_t
fake_crc32(const uint8_t *p, uint64_t n)
{
	static uint32_t table[256];
	uint32_t crc = 0xffffffff;
	uint64_t i;

	if (table[1] == 0) {
		for (i = 0; i < 256; i++) {
			uint32_t c = (uint32_t)i;
			unsigned int k;

			for (k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320 ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	}
	for (i = 0; i < n; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc ^ 0xffffffff;
}

static void
fake_log(struct fake_daemon *d, const char *what)
{
	size_t n = strlen(d->log);

	snprintf(d->log + n, sizeof(d->log) - n, "%s\n", what);
}

/* Count the call; fail it when it is the one asked for. Called with the fabric locked. */
static int
fake_enter(struct fake_daemon *d, enum fake_op op)
{
	pthread_mutex_lock(&d->fab->lock);
	d->calls[op]++;
	if (d->fail_op == op && d->calls[op] == d->fail_nth) {
		fake_log(d, fake_op_names[op]);
		return INJECTED;
	}
	return 0;
}

static int
fake_leave(struct fake_daemon *d, int ret)
{
	pthread_mutex_unlock(&d->fab->lock);
	return ret;
}

static struct fake_mr *
mr_find(struct fabric *f, uint32_t key)
{
	unsigned int i;

	for (i = 0; i < FAKE_MRS; i++)
		if (f->mr[i].owner != NULL && f->mr[i].key == key)
			return &f->mr[i];
	return NULL;
}

static struct fake_qp *
qp_find(struct fabric *f, uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < FAKE_QPS; i++)
		if (f->qp[i].owner != NULL && f->qp[i].qpn == qpn)
			return &f->qp[i];
	return NULL;
}

/* The bytes [off, off + len) of an MR of @d's (lkey) or anyone's (rkey, by address). */
static uint8_t *
mr_range(struct fake_mr *m, uint64_t off, uint64_t len)
{
	if (m == NULL || off > m->len || len > m->len - off)
		return NULL;
	return m->mem + off;
}

static int
f_status(void *ctx, struct roce_perf_daemon *out)
{
	struct fake_daemon *d = ctx;
	int ret = fake_enter(d, F_STATUS);

	if (ret == 0) {
		if (d->report_limits) {
			out->max_qps = d->limits.max_qps;
			out->max_qp_depth = d->limits.max_qp_depth;
			out->max_mr_size = d->limits.max_mr_size;
			out->max_rd_atomic = d->limits.max_rd_atomic;
			out->max_inflight = d->limits.max_inflight;
			out->mr_read_max = d->limits.mr_read_max;
		}
		out->ports = 1;
		out->heap_bytes = d->heap;
	}
	return fake_leave(d, ret);
}

static int
f_port(void *ctx, unsigned int port, struct roce_perf_port *info)
{
	struct fake_daemon *d = ctx;
	int ret = fake_enter(d, F_PORT);

	if (ret == 0 && port != 0)
		ret = -EINVAL;
	if (ret == 0) {
		snprintf(info->ip, sizeof(info->ip), "%s", d->ip);
		info->prefix = 24;
		info->ip_mtu = d->ip_mtu;
	}
	return fake_leave(d, ret);
}

static int
f_mr_create(void *ctx, uint64_t size, unsigned int access, struct roce_perf_mr *mr)
{
	struct fake_daemon *d = ctx;
	struct fake_mr *m = NULL;
	unsigned int i;
	int ret = fake_enter(d, F_MR_CREATE);

	for (i = 0; ret == 0 && i < FAKE_MRS && m == NULL; i++)
		if (d->fab->mr[i].owner == NULL)
			m = &d->fab->mr[i];
	if (ret == 0 && m == NULL)
		ret = -ENOSPC;
	if (ret == 0 && (m->mem = calloc(1, size)) == NULL)
		ret = -ENOMEM;
	if (ret == 0) {
		m->owner = d;
		m->key = d->fab->next_key++ * 0x100 + 0x2a;
		m->iova = (uint64_t)m->key << 32;
		m->len = size;
		m->access = d->no_rights ? ROCE_PERF_ACC_LOCAL_WRITE : access;
		d->mr_access = access;
		d->mr_size = size;
		d->mrs++;
		mr->iova = m->iova;
		mr->key = m->key;
	}
	return fake_leave(d, ret);
}

static int
f_mr_destroy(void *ctx, uint32_t key)
{
	struct fake_daemon *d = ctx;
	struct fake_mr *m;
	int ret = fake_enter(d, F_MR_DESTROY);

	m = ret == 0 ? mr_find(d->fab, key) : NULL;
	if (ret == 0 && (m == NULL || m->owner != d))
		ret = -ENOENT;
	if (ret == 0) {
		free(m->mem);
		memset(m, 0, sizeof(*m));
		d->mrs--;
	}
	return fake_leave(d, ret);
}

static void
pattern(uint8_t *p, uint64_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	uint64_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

static int
f_mr_fill(void *ctx, uint32_t key, uint64_t off, uint64_t len, uint32_t seed)
{
	struct fake_daemon *d = ctx;
	int ret = fake_enter(d, F_MR_FILL);
	uint8_t *p = ret == 0 ? mr_range(mr_find(d->fab, key), off, len) : NULL;

	if (ret == 0 && p == NULL)
		ret = -EINVAL;
	if (ret == 0)
		pattern(p, len, seed);
	return fake_leave(d, ret);
}

static int
f_mr_digest(void *ctx, uint32_t key, uint64_t off, uint64_t len, uint32_t *crc)
{
	struct fake_daemon *d = ctx;
	int ret = fake_enter(d, F_MR_DIGEST);
	uint8_t *p = ret == 0 ? mr_range(mr_find(d->fab, key), off, len) : NULL;

	if (ret == 0 && p == NULL)
		ret = -EINVAL;
	if (ret == 0)
		*crc = fake_crc32(p, len);
	return fake_leave(d, ret);
}

static int
f_mr_read(void *ctx, uint32_t key, uint64_t off, uint64_t len, uint8_t *buf, uint64_t *got)
{
	struct fake_daemon *d = ctx;
	unsigned int max = d->report_limits ? d->limits.mr_read_max : 4096;
	int ret = fake_enter(d, F_MR_READ);
	uint8_t *p = ret == 0 ? mr_range(mr_find(d->fab, key), off, len) : NULL;

	/* as roced's mr.dump: never more than its limit */
	if (ret == 0 && (p == NULL || len > max))
		ret = -EINVAL;
	if (ret == 0) {
		memcpy(buf, p, len);
		*got = len;
	}
	return fake_leave(d, ret);
}

static int
f_qp_create(void *ctx, const struct roce_perf_qp_conf *conf, uint32_t *qpn, uint32_t *psn)
{
	struct fake_daemon *d = ctx;
	struct fake_qp *q = NULL;
	unsigned int i;
	int ret = fake_enter(d, F_QP_CREATE);

	for (i = 0; ret == 0 && i < FAKE_QPS && q == NULL; i++)
		if (d->fab->qp[i].owner == NULL)
			q = &d->fab->qp[i];
	if (ret == 0 && q == NULL)
		ret = -ENOSPC;
	if (ret == 0 && (conf->sq_depth == 0 || conf->rq_depth < conf->sq_depth))
		ret = -EINVAL;
	if (ret == 0) {
		memset(q, 0, sizeof(*q));
		q->owner = d;
		q->qpn = d->fab->next_qpn++;
		q->psn = (q->qpn * 7919) & 0xffffff;
		q->access = d->no_rights ? 0 : conf->access;
		q->ud = conf->ud;
		q->connected = conf->ud;
		q->qkey = conf->qkey;
		d->qp_access = conf->access;
		d->qp_conf = *conf;
		d->qps++;
		d->heap += 1000;
		*qpn = q->qpn;
		*psn = q->psn;
	}
	return fake_leave(d, ret);
}

static int
f_qp_connect(void *ctx, const struct roce_perf_qp_connect *c)
{
	struct fake_daemon *d = ctx;
	int ret = fake_enter(d, F_QP_CONNECT);
	struct fake_qp *q = ret == 0 ? qp_find(d->fab, c->qpn) : NULL;

	if (ret == 0 && (q == NULL || q->owner != d))
		ret = -ENOENT;
	if (ret == 0 && q->ud)
		ret = -EINVAL;
	if (ret == 0 && q->connected)
		ret = -EBUSY;
	if (ret == 0) {
		q->connected = true;
		q->remote_qpn = c->remote_qpn;
		d->conn = *c;
	}
	return fake_leave(d, ret);
}

static int
f_qp_destroy(void *ctx, uint32_t qpn)
{
	struct fake_daemon *d = ctx;
	int ret = fake_enter(d, F_QP_DESTROY);
	struct fake_qp *q = ret == 0 ? qp_find(d->fab, qpn) : NULL;

	if (ret == 0 && (q == NULL || q->owner != d))
		ret = -ENOENT;
	if (ret == 0) {
		memset(q, 0, sizeof(*q));
		d->qps--;
		d->heap -= 1000;
	}
	return fake_leave(d, ret);
}

/* Copy @len bytes to @dst, spoiling one when our daemon corrupts what it delivers. */
static void
deliver(const struct fake_daemon *d, uint8_t *dst, const uint8_t *src, uint64_t len)
{
	memmove(dst, src, len);
	if (d->corrupt && len > 0)
		dst[len / 2] ^= 0x5a;
}

static void
job_fail(struct fake_job *fj, const char *why)
{
	fj->errors = fj->j.count != 0 ? fj->j.count : 1;
	fj->completed = 0;
	fj->bytes = 0;
	fj->first_error = why;
}

/* The peer's memory a remote operation reaches, with the right it needs on its MR and QP. */
static uint8_t *
remote_range(struct fake_qp *q, const struct fake_job *fj, uint64_t len, unsigned int right)
{
	struct fabric *f = q->owner->fab;
	struct fake_qp *peer = qp_find(f, q->remote_qpn);
	struct fake_mr *m = mr_find(f, fj->j.rkey);

	if (peer == NULL || m == NULL || m->owner != peer->owner ||
			!(m->access & right) || !(peer->access & right))
		return NULL;
	return fj->j.remote_addr < m->iova ? NULL :
		mr_range(m, fj->j.remote_addr - m->iova, len);
}

static uint64_t
job_ops(const struct fake_job *fj)
{
	return fj->j.count != 0 ? fj->j.count : 100;	/* -D: whatever ran in the time */
}

/* SEND into the peer QP's receive (or latency) job. */
static void
run_send(struct fake_qp *q, struct fake_job *fj, const uint8_t *src)
{
	struct fake_qp *peer = qp_find(q->owner->fab, q->remote_qpn);
	struct fake_job *pj = peer != NULL ? &peer->job : NULL;
	uint64_t off;
	uint8_t *dst;

	if (pj == NULL || !pj->active || (pj->j.op != ROCE_PERF_JOB_RECV && !pj->j.lat &&
			!pj->j.bidi)) {
		job_fail(fj, "RNR_RETRY_EXC_ERR");
		return;
	}
	off = pj->j.lat || pj->j.bidi ? pj->j.recv_offset : pj->j.offset;
	dst = mr_range(mr_find(q->owner->fab, pj->j.lkey), off, fj->j.length);
	if (dst == NULL || fj->j.length > pj->j.length) {
		job_fail(fj, "REM_OP_ERR");
		return;
	}
	deliver(q->owner, dst, src, fj->j.length);
	/* a receive job counts what it receives; the others (lat, bidi) count their own */
	if (pj->j.op == ROCE_PERF_JOB_RECV) {
		pj->completed += job_ops(fj);
		pj->bytes += job_ops(fj) * fj->j.length;
	}
}

/* Carry out a job's operations at once: the data lands, the counts are final. */
static void
job_run(struct fake_qp *q, struct fake_job *fj)
{
	struct fake_mr *lm = mr_find(q->owner->fab, fj->j.lkey);
	uint8_t *src = mr_range(lm, fj->j.offset, fj->j.length), *dst;
	uint64_t n = job_ops(fj), k, v;

	if (src == NULL) {
		job_fail(fj, "LOC_PROT_ERR");
		return;
	}
	fj->completed = n;
	fj->bytes = n * fj->j.length;
	switch (fj->j.op) {
	case ROCE_PERF_JOB_WRITE:
		dst = remote_range(q, fj, fj->j.length, ROCE_PERF_ACC_REMOTE_WRITE);
		if (dst == NULL)
			job_fail(fj, "REM_ACCESS_ERR");
		else
			deliver(q->owner, dst, src, fj->j.length);
		break;
	case ROCE_PERF_JOB_READ:
		dst = remote_range(q, fj, fj->j.length, ROCE_PERF_ACC_REMOTE_READ);
		if (dst == NULL)
			job_fail(fj, "REM_ACCESS_ERR");
		else
			deliver(q->owner, src, dst, fj->j.length);
		break;
	case ROCE_PERF_JOB_FAA:
		dst = remote_range(q, fj, 8, ROCE_PERF_ACC_REMOTE_ATOMIC);
		if (dst == NULL) {
			job_fail(fj, "REM_ACCESS_ERR");
			break;
		}
		for (k = 0, v = 0; k < 8; k++)
			v |= (uint64_t)dst[k] << (8 * k);
		v += n;
		for (k = 0; k < 8; k++)
			dst[k] = (uint8_t)(v >> (8 * k));
		break;
	case ROCE_PERF_JOB_CAS:
		/* compare 1 with a target of 0: never equal, nothing changes */
		if (remote_range(q, fj, 8, ROCE_PERF_ACC_REMOTE_ATOMIC) == NULL)
			job_fail(fj, "REM_ACCESS_ERR");
		break;
	case ROCE_PERF_JOB_SEND:
		run_send(q, fj, src);
		break;
	case ROCE_PERF_JOB_RECV:
		break;
	}
}

/* A latency WRITE/SEND job (or a bidi SEND) ends once the peer's has run: it needs both. */
static void
lat_pair(struct fake_qp *q)
{
	struct fake_qp *peer = qp_find(q->owner->fab, q->remote_qpn);

	if (peer == NULL || !peer->job.active || !peer->job.running || peer->job.paired)
		return;
	job_run(q, &q->job);
	job_run(peer, &peer->job);
	q->job.paired = peer->job.paired = true;
	q->job.running = peer->job.running = false;
}

static bool
lat_pairs(const struct fake_job *fj)
{
	return (fj->j.lat && (fj->j.op == ROCE_PERF_JOB_WRITE || fj->j.op == ROCE_PERF_JOB_SEND)) ||
		fj->j.bidi;
}

static int
f_job_start(void *ctx, const struct roce_perf_job *j)
{
	struct fake_daemon *d = ctx;
	int ret = fake_enter(d, F_JOB_START);
	struct fake_qp *q = ret == 0 ? qp_find(d->fab, j->qpn) : NULL;
	struct fake_job *fj;

	if (ret == 0 && (q == NULL || q->owner != d || !q->connected))
		ret = -EPERM;
	/* a count or a duration; neither: until stopped (receives, --run_infinitely) */
	if (ret == 0 && j->count != 0 && j->duration_ms != 0)
		ret = -EINVAL;
	/* UD: SENDs through one of our AHs, with perftest's Q_Key; receives name none */
	if (ret == 0 && q->ud && ((j->op != ROCE_PERF_JOB_SEND && j->op != ROCE_PERF_JOB_RECV) ||
			(j->op == ROCE_PERF_JOB_RECV && j->ah != 0) ||
			(j->op == ROCE_PERF_JOB_SEND && (j->ah == 0 || j->ah > 32 ||
			 !(d->ah_live & (1u << (j->ah - 1))) ||
			 j->remote_qkey != ROCE_PERF_UD_QKEY))))
		ret = -EINVAL;
	if (ret == 0 && !q->ud && j->ah != 0)
		ret = -EINVAL;
	if (ret != 0)
		return fake_leave(d, ret);
	if (q->ud && j->op == ROCE_PERF_JOB_SEND) {
		q->remote_qpn = j->remote_qpn;
		d->ud_job = *j;
	}
	fj = &q->job;
	memset(fj, 0, sizeof(*fj));
	fj->active = true;
	fj->j = *j;
	fj->running = true;
	if (j->op == ROCE_PERF_JOB_RECV || d->stuck) {
		/* runs until stopped */
	} else if (j->count == 0 && j->duration_ms == 0) {
		/* unlimited: progresses at each poll (stats_add) until stopped */
		fj->unlimited = true;
	} else if (lat_pairs(fj)) {
		lat_pair(q);
	} else {
		job_run(q, fj);
		fj->running = false;
	}
	if (d->kill_on_job != NULL)
		roce_perf_session_interrupt(d->kill_on_job);
	return fake_leave(d, 0);
}

static int
f_job_stop(void *ctx, uint32_t qpn)
{
	struct fake_daemon *d = ctx;
	int ret = fake_enter(d, F_JOB_STOP);
	struct fake_qp *q = ret == 0 ? qp_find(d->fab, qpn) : NULL;

	if (ret == 0 && (q == NULL || !q->job.running))
		ret = -ENOENT;
	if (ret == 0)
		q->job.running = false;
	return fake_leave(d, ret);
}

static void
stats_add(struct roce_perf_job_stats *st, struct fake_job *fj)
{
	if (fj->unlimited && fj->running) {
		fj->completed += 10;
		fj->bytes += 10 * fj->j.length;
	}
	st->running += fj->running;
	st->bytes += fj->bytes;
	st->completed += fj->completed;
	st->errors += fj->errors;
	st->peak_gbps += 2.0;
	if (st->seconds < 0.01)
		st->seconds = 0.01;
	if (fj->errors != 0 && st->first_error[0] == '\0')
		snprintf(st->first_error, sizeof(st->first_error), "%s", fj->first_error);
}

static int
f_job_show(void *ctx, uint32_t qpn, struct roce_perf_job_stats *st)
{
	struct fake_daemon *d = ctx;
	int ret = fake_enter(d, F_JOB_SHOW);
	struct fake_qp *q = ret == 0 ? qp_find(d->fab, qpn) : NULL;

	if (ret == 0 && (q == NULL || !q->job.active))
		ret = -ENOENT;
	if (ret == 0) {
		stats_add(st, &q->job);
		if (q->job.j.lat && !q->job.running) {
			st->rtt = (struct roce_perf_rtt){ .samples = q->job.completed - 1,
				.min = 1000, .max = 9000, .median = 2000, .avg = 2500,
				.stdev = 300, .p99 = 8000, .p999 = 8800 };
		}
	}
	return fake_leave(d, ret);
}

static int
f_job_total(void *ctx, struct roce_perf_job_stats *st)
{
	struct fake_daemon *d = ctx;
	unsigned int i;
	int ret = fake_enter(d, F_JOB_TOTAL);

	for (i = 0; ret == 0 && i < FAKE_QPS; i++)
		if (d->fab->qp[i].owner == d && d->fab->qp[i].job.active)
			stats_add(st, &d->fab->qp[i].job);
	return fake_leave(d, ret);
}

static int
f_ah_create(void *ctx, unsigned int port, const char *ip, uint32_t *ah)
{
	struct fake_daemon *d = ctx;
	int ret = fake_enter(d, F_AH_CREATE);
	uint32_t i;

	(void)port;
	for (i = 0; ret == 0 && i < 32 && (d->ah_live & (1u << i)); i++)
		;
	if (ret == 0 && i == 32)
		ret = -ENOSPC;
	if (ret == 0) {
		d->ah_live |= 1u << i;
		d->ahs++;
		snprintf(d->ah_ip, sizeof(d->ah_ip), "%s", ip);
		*ah = i + 1;
	}
	return fake_leave(d, ret);
}

static int
f_ah_destroy(void *ctx, uint32_t ah)
{
	struct fake_daemon *d = ctx;
	int ret = fake_enter(d, F_AH_DESTROY);

	if (ret == 0 && (ah == 0 || ah > 32 || !(d->ah_live & (1u << (ah - 1)))))
		ret = -ENOENT;
	if (ret == 0) {
		d->ah_live &= ~(1u << (ah - 1));
		d->ahs--;
	}
	return fake_leave(d, ret);
}

static const struct roce_perf_backend_ops fake_ops = {
	.status = f_status,
	.port_info = f_port,
	.mr_create = f_mr_create,
	.mr_destroy = f_mr_destroy,
	.mr_fill = f_mr_fill,
	.mr_digest = f_mr_digest,
	.mr_read = f_mr_read,
	.qp_create = f_qp_create,
	.qp_connect = f_qp_connect,
	.qp_destroy = f_qp_destroy,
	.job_start = f_job_start,
	.job_stop = f_job_stop,
	.job_show = f_job_show,
	.job_total = f_job_total,
	.ah_create = f_ah_create,
	.ah_destroy = f_ah_destroy,
};

/* ---- one side: a session, its fake daemon and what its events said ---- */

#define MAX_RESULTS 32

struct side {
	const char *name;
	struct roce_perf_opts o;
	struct fake_daemon d;
	struct roce_perf_session *s;
	int ret;
	volatile bool done;
	pthread_t th;
	unsigned int headers, waiting;
	unsigned int nres;
	struct roce_perf_result res[MAX_RESULTS];
	char err[FAKE_LOG];
	char note[FAKE_LOG];
};

static struct fabric fabric = { .lock = PTHREAD_MUTEX_INITIALIZER, .next_key = 1,
	.next_qpn = 0x10000 };
static unsigned int tcp_port;

static void
ev_waiting(void *arg, unsigned int port)
{
	struct side *sd = arg;

	(void)port;
	sd->waiting++;
}

static void
ev_header(void *arg, const struct roce_perf_session *s)
{
	struct side *sd = arg;

	(void)s;
	sd->headers++;
}

static void
ev_result(void *arg, const struct roce_perf_result *r)
{
	struct side *sd = arg;

	if (sd->nres < MAX_RESULTS)
		sd->res[sd->nres] = *r;
	sd->nres++;
}

static void
ev_error(void *arg, const char *msg)
{
	struct side *sd = arg;
	size_t n = strlen(sd->err);

	snprintf(sd->err + n, sizeof(sd->err) - n, "%s\n", msg);
}

static void
ev_note(void *arg, const char *msg)
{
	struct side *sd = arg;
	size_t n = strlen(sd->note);

	snprintf(sd->note + n, sizeof(sd->note) - n, "%s\n", msg);
}

static void
side_init(struct side *sd, const char *name, enum roce_perf_verb verb, bool lat, bool server)
{
	memset(sd, 0, sizeof(*sd));
	sd->name = name;
	sd->o.verb = verb;
	sd->o.lat = lat;
	sd->o.size = verb == ROCE_PERF_VERB_ATOMIC ? 8 : lat ? 64 : 4096;
	sd->o.iters = 100;
	sd->o.qps = 1;
	sd->o.tx_depth = lat ? 1 : 128;
	sd->o.server = server;
	sd->o.peer = server ? NULL : "127.0.0.1";
	sd->o.inflight = ROCE_PERF_INFLIGHT;
	sd->o.oob_ms = 3000;
	sd->o.tcp_port = tcp_port;
	sd->o.poll_ms = 1;
	sd->d.fab = &fabric;
	sd->d.ip = server ? "10.0.0.1" : "10.0.0.2";
	sd->d.ip_mtu = 9000;
	sd->d.fail_op = F_OP_MAX;
}

static void *
side_run(void *arg)
{
	struct side *sd = arg;

	sd->ret = roce_perf_session_run(sd->s);
	sd->done = true;
	return NULL;
}

static int
side_start(struct side *sd)
{
	struct roce_perf_events ev = { ev_waiting, ev_header, NULL, ev_result, ev_error, sd,
		ev_note };

	sd->s = roce_perf_session_create(&sd->o, &fake_ops, &sd->d, &ev);
	if (sd->s == NULL)
		return -errno;
	return pthread_create(&sd->th, NULL, side_run, sd) == 0 ? 0 : -EAGAIN;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/*
 * Run both sides (server first). Once one has ended, the other gets @grace_ms to end too
 * before it is interrupted, as Ctrl-C would.
 */
static void
pair_run(struct side *srv, struct side *cl, unsigned int grace_ms)
{
	double first_end = 0;
	bool interrupted = false;

	RT_CHECK(side_start(srv) == 0, "server session");
	RT_CHECK(side_start(cl) == 0, "client session");
	while (!(srv->done && cl->done)) {
		sleep_ms(2);
		if (first_end == 0 && (srv->done || cl->done))
			first_end = now_s();
		if (first_end != 0 && !interrupted && now_s() - first_end > grace_ms / 1e3) {
			roce_perf_session_interrupt(srv->done ? cl->s : srv->s);
			interrupted = true;
		}
	}
	pthread_join(srv->th, NULL);
	pthread_join(cl->th, NULL);
}

/* Destroy a side's session: it must leave nothing in its daemon. */
static void
side_end(struct side *sd)
{
	roce_perf_session_destroy(sd->s);
	sd->s = NULL;
	RT_CHECK(sd->d.mrs == 0 && sd->d.qps == 0 && sd->d.ahs == 0,
			"%s: %u MRs, %u QPs and %u AHs left", sd->name, sd->d.mrs, sd->d.qps,
			sd->d.ahs);
}

static void
next_port(void)
{
	tcp_port++;
}

/* ---- the normal runs ---- */

static const char *const verb_names[] = { "write", "read", "send", "atomic" };

static const unsigned int verb_right[] = { ROCE_PERF_ACC_REMOTE_WRITE,
	ROCE_PERF_ACC_REMOTE_READ, 0, ROCE_PERF_ACC_REMOTE_ATOMIC };

/* Who checks the data of each verb (bw, lat), as perftest's roles go: 1 server, 2 client. */
static const unsigned int verify_by[][2] = {
	{ 1, 3 }, { 2, 2 }, { 1, 3 }, { 1, 3 },
};

static void
check_verified(const struct side *sd, unsigned int who, bool atomic_lat, const char *what)
{
	bool receives = who & (sd->o.server ? 1 : 2);
	const char *want = receives ? "ok" : "sent";

	if (atomic_lat)
		want = "ok";	/* nothing to check: verify_check passes both sides */
	RT_CHECK(sd->s->verified != NULL && strcmp(sd->s->verified, want) == 0,
			"%s: %s verified '%s', want '%s'", what, sd->name,
			sd->s->verified != NULL ? sd->s->verified : "(null)", want);
}

static void
check_bw(const struct side *srv, const struct side *cl, const char *what)
{
	uint64_t iters = cl->o.iters * cl->o.qps;

	RT_CHECK(cl->nres >= 1 && srv->nres == 1, "%s: results %u/%u", what, cl->nres,
			srv->nres);
	if (cl->nres == 0 || srv->nres == 0)
		return;
	RT_CHECK(cl->res[cl->nres - 1].iters == iters, "%s: client iterations %" PRIu64, what,
			cl->res[cl->nres - 1].iters);
	RT_CHECK(cl->res[0].bw_avg > 0 && cl->res[0].bw_peak >= cl->res[0].bw_avg,
			"%s: peak %f >= avg %f > 0", what, cl->res[0].bw_peak, cl->res[0].bw_avg);
	RT_CHECK(srv->res[0].iters == iters, "%s: server iterations %" PRIu64, what,
			srv->res[0].iters);
	if (cl->o.verb != ROCE_PERF_VERB_SEND)
		RT_CHECK(srv->res[0].bw_avg == cl->res[cl->nres - 1].bw_avg &&
				srv->res[0].size == cl->res[cl->nres - 1].size,
				"%s: the server reports the client's numbers", what);
}

static void
check_lat(const struct side *srv, const struct side *cl, const char *what)
{
	bool srv_reports = srv->o.verb == ROCE_PERF_VERB_WRITE ||
		srv->o.verb == ROCE_PERF_VERB_SEND;
	double div = srv_reports ? 2000 : 1000;

	RT_CHECK(cl->nres == 1 && srv->nres == (srv_reports ? 1u : 0u), "%s: results %u/%u",
			what, cl->nres, srv->nres);
	if (cl->nres != 1)
		return;
	RT_CHECK(cl->res[0].iters == cl->o.iters && cl->res[0].samples == cl->o.iters - 1,
			"%s: iterations %" PRIu64 ", samples %" PRIu64, what, cl->res[0].iters,
			cl->res[0].samples);
	RT_CHECK(cl->res[0].min == 1000 / div && cl->res[0].p999 == 8800 / div,
			"%s: times in us, halved for write/send: min %f", what, cl->res[0].min);
}

static void
check_common(const struct side *sd, const char *what)
{
	unsigned int right = verb_right[sd->o.verb];

	RT_CHECK(sd->ret == 0, "%s: %s returned %d (%s)", what, sd->name, sd->ret, sd->err);
	RT_CHECK(sd->err[0] == '\0', "%s: %s said '%s'", what, sd->name, sd->err);
	RT_CHECK(sd->headers == 1, "%s: %s header %u", what, sd->name, sd->headers);
	RT_CHECK(sd->waiting == (sd->o.server ? 1u : 0u), "%s: %s waiting %u", what, sd->name,
			sd->waiting);
	RT_CHECK(sd->d.mr_access == (ROCE_PERF_ACC_LOCAL_WRITE | right) &&
			sd->d.qp_access == right, "%s: %s asked MR rights %#x, QP rights %#x",
			what, sd->name, sd->d.mr_access, sd->d.qp_access);
	RT_CHECK(sd->s->qp_bytes == 1000, "%s: %s daemon memory per QP %f", what, sd->name,
			sd->s->qp_bytes);
	RT_CHECK(sd->s->oob.peer.version == ROCE_PERF_OOB_VERSION &&
			(sd->s->oob.agreed.caps & ROCE_PERF_CAP_SR) &&
			sd->d.conn.sr && sd->d.conn.mtu == 4096, "%s: %s agreed SR and MTU 4096",
			what, sd->name);
}

static void
run_mode(enum roce_perf_verb verb, bool lat, bool verify)
{
	struct side srv, cl;
	char what[64];

	snprintf(what, sizeof(what), "%s %s%s", verb_names[verb], lat ? "lat" : "bw",
			verify ? " --verify" : "");
	next_port();
	side_init(&srv, "server", verb, lat, true);
	side_init(&cl, "client", verb, lat, false);
	srv.o.verify = cl.o.verify = verify;
	pair_run(&srv, &cl, 3000);
	check_common(&srv, what);
	check_common(&cl, what);
	if (lat)
		check_lat(&srv, &cl, what);
	else
		check_bw(&srv, &cl, what);
	if (verify) {
		check_verified(&srv, verify_by[verb][lat], verb == ROCE_PERF_VERB_ATOMIC && lat,
				what);
		check_verified(&cl, verify_by[verb][lat], verb == ROCE_PERF_VERB_ATOMIC && lat,
				what);
	} else {
		RT_CHECK(srv.s->verified == NULL && cl.s->verified == NULL, "%s: not verified",
				what);
	}
	side_end(&srv);
	side_end(&cl);
}

static void
test_modes(void)
{
	unsigned int v;

	for (v = 0; v < ROCE_PERF_VERB_MAX; v++) {
		run_mode((enum roce_perf_verb)v, false, true);
		run_mode((enum roce_perf_verb)v, true, true);
	}
	run_mode(ROCE_PERF_VERB_WRITE, false, false);
	run_mode(ROCE_PERF_VERB_SEND, true, false);
}

static void
test_many_qps_all_sizes(void)
{
	struct side srv, cl;
	unsigned int i;
	bool sizes_ok = true;

	/* -q 4 --verify: every QP's data checked */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	srv.o.qps = cl.o.qps = 4;
	srv.o.verify = cl.o.verify = true;
	pair_run(&srv, &cl, 3000);
	check_common(&srv, "write bw -q 4");
	check_common(&cl, "write bw -q 4");
	check_bw(&srv, &cl, "write bw -q 4");
	RT_CHECK(srv.s->nqp == 4 && srv.s->verified != NULL &&
			strcmp(srv.s->verified, "ok") == 0, "write bw -q 4: 4 QPs verified");
	side_end(&srv);
	side_end(&cl);

	/* -a: 2 B .. 8 MiB, the server prints the last size */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	srv.o.all = cl.o.all = true;
	srv.o.iters = cl.o.iters = 5;
	srv.o.verify = cl.o.verify = true;
	pair_run(&srv, &cl, 5000);
	check_common(&srv, "write bw -a");
	check_common(&cl, "write bw -a");
	RT_CHECK(cl.nres == ROCE_PERF_NB_SIZES, "write bw -a: %u sizes", cl.nres);
	for (i = 0; i < cl.nres && i < MAX_RESULTS; i++)
		sizes_ok &= cl.res[i].size == UINT64_C(2) << i;
	RT_CHECK(sizes_ok, "write bw -a: sizes 2 .. 8 MiB");
	RT_CHECK(srv.nres == 1 && srv.res[0].size == ROCE_PERF_MAX_SIZE,
			"write bw -a: the server prints the last size");
	RT_CHECK(srv.s->verified != NULL && strcmp(srv.s->verified, "ok") == 0,
			"write bw -a: verified");
	side_end(&srv);
	side_end(&cl);

	/* -D: a duration instead of a count; send bw -q 2 with its receive jobs */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_SEND, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_SEND, false, false);
	srv.o.duration = cl.o.duration = 0.5;
	srv.o.qps = cl.o.qps = 2;
	pair_run(&srv, &cl, 3000);
	RT_CHECK(srv.ret == 0 && cl.ret == 0, "send bw -D: %d %d (%s%s)", srv.ret, cl.ret,
			srv.err, cl.err);
	RT_CHECK(cl.nres == 1 && cl.res[0].iters == 200 && srv.nres == 1 &&
			srv.res[0].iters == 200, "send bw -D -q 2: both count 200 messages");
	side_end(&srv);
	side_end(&cl);
}

/* ---- verification failures ---- */

static void
test_verify_mismatch(void)
{
	struct side srv, cl;

	/* WRITE: what the client's daemon delivers is spoiled; the server finds out */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	srv.o.verify = cl.o.verify = true;
	cl.d.corrupt = true;
	pair_run(&srv, &cl, 3000);
	RT_CHECK(srv.ret == -EBADMSG && strcmp(srv.s->verified, "failed") == 0 &&
			strstr(srv.err, "received CRC-32") != NULL,
			"write mismatch: the server fails verification (%d, %s)", srv.ret, srv.err);
	RT_CHECK(cl.ret == 0 && strcmp(cl.s->verified, "sent") == 0,
			"write mismatch: the client only sent (%d)", cl.ret);
	side_end(&srv);
	side_end(&cl);

	/* READ: the client reads spoiled data */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_READ, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_READ, false, false);
	srv.o.verify = cl.o.verify = true;
	cl.d.corrupt = true;
	pair_run(&srv, &cl, 3000);
	RT_CHECK(cl.ret == -EBADMSG && strcmp(cl.s->verified, "failed") == 0,
			"read mismatch: the client fails verification (%d, %s)", cl.ret, cl.err);
	side_end(&srv);
	side_end(&cl);

	/* atomic: a target spoiled after the traffic no longer adds up */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_ATOMIC, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_ATOMIC, false, false);
	srv.o.verify = cl.o.verify = true;
	srv.d.report_limits = true;
	srv.d.limits = (struct roce_perf_daemon){ .max_qps = 8, .max_qp_depth = 1024,
		.max_mr_size = 1 << 20, .max_rd_atomic = 4, .max_inflight = 1024,
		.mr_read_max = 1000 };
	cl.d.corrupt = true;	/* not on atomics: their sum is right */
	pair_run(&srv, &cl, 3000);
	RT_CHECK(srv.ret == 0 && strcmp(srv.s->verified, "ok") == 0,
			"atomic: the sum read back in the daemon's 1000-byte pieces (%d, %s)",
			srv.ret, srv.err);
	RT_CHECK(srv.s->qp[0].local.out_reads == 4,
			"atomic: we offer the daemon's 4 outstanding atomics, not 16 (%u)",
			srv.s->qp[0].local.out_reads);
	RT_CHECK(cl.d.conn.max_rd_atomic == 4, "atomic: the client issues at most the "
			"server's 4 (%u)", cl.d.conn.max_rd_atomic);
	side_end(&srv);
	side_end(&cl);
}

/* ---- backend errors at every step ---- */

struct fail_case {
	enum roce_perf_verb verb;
	bool lat;
	bool on_server;
	enum fake_op op;
	unsigned int nth;
	bool before_tcp;	/* the failing side never opens the side channel */
	enum { PEER_FAILS, PEER_OK, PEER_ANY } peer;	/* how the other side ends */
};

static const struct fail_case fail_cases[] = {
	{ ROCE_PERF_VERB_WRITE, false, false, F_STATUS, 1, true, PEER_FAILS },
	{ ROCE_PERF_VERB_WRITE, false, false, F_PORT, 1, true, PEER_FAILS },
	{ ROCE_PERF_VERB_WRITE, false, false, F_MR_CREATE, 1, true, PEER_FAILS },
	{ ROCE_PERF_VERB_WRITE, false, false, F_STATUS, 2, true, PEER_FAILS },
	{ ROCE_PERF_VERB_WRITE, false, false, F_QP_CREATE, 1, true, PEER_FAILS },
	{ ROCE_PERF_VERB_WRITE, false, false, F_QP_CREATE, 2, true, PEER_FAILS },
	{ ROCE_PERF_VERB_WRITE, false, false, F_STATUS, 3, true, PEER_FAILS },
	{ ROCE_PERF_VERB_WRITE, false, false, F_QP_CONNECT, 1, false, PEER_FAILS },
	{ ROCE_PERF_VERB_WRITE, false, false, F_QP_CONNECT, 2, false, PEER_FAILS },
	{ ROCE_PERF_VERB_WRITE, false, false, F_MR_FILL, 1, false, PEER_FAILS },
	{ ROCE_PERF_VERB_WRITE, false, false, F_JOB_START, 2, false, PEER_FAILS },
	{ ROCE_PERF_VERB_WRITE, false, false, F_JOB_TOTAL, 1, false, PEER_FAILS },
	{ ROCE_PERF_VERB_WRITE, false, true, F_QP_CONNECT, 1, false, PEER_FAILS },
	{ ROCE_PERF_VERB_WRITE, false, true, F_MR_DIGEST, 2, false, PEER_OK },
	{ ROCE_PERF_VERB_READ, false, false, F_MR_DIGEST, 1, false, PEER_FAILS },
	{ ROCE_PERF_VERB_SEND, false, true, F_JOB_START, 1, false, PEER_FAILS },
	{ ROCE_PERF_VERB_SEND, false, true, F_JOB_TOTAL, 1, false, PEER_OK },
	{ ROCE_PERF_VERB_ATOMIC, false, true, F_MR_READ, 1, false, PEER_OK },
	/* the server's half of the ping-pong may have run already, or waits until interrupted */
	{ ROCE_PERF_VERB_WRITE, true, false, F_JOB_SHOW, 1, false, PEER_ANY },
	{ ROCE_PERF_VERB_SEND, true, true, F_JOB_START, 1, false, PEER_FAILS },
};

static void
run_fail(const struct fail_case *fc)
{
	struct side srv, cl, *bad, *good;
	char what[96];

	snprintf(what, sizeof(what), "%s %s: %s %s #%u fails", verb_names[fc->verb],
			fc->lat ? "lat" : "bw", fc->on_server ? "server" : "client",
			fake_op_names[fc->op], fc->nth);
	next_port();
	side_init(&srv, "server", fc->verb, fc->lat, true);
	side_init(&cl, "client", fc->verb, fc->lat, false);
	srv.o.verify = cl.o.verify = true;
	srv.o.qps = cl.o.qps = fc->lat ? 1 : 2;
	bad = fc->on_server ? &srv : &cl;
	good = fc->on_server ? &cl : &srv;
	bad->d.fail_op = fc->op;
	bad->d.fail_nth = fc->nth;
	pair_run(&srv, &cl, fc->before_tcp ? 0 : 3000);
	RT_CHECK(bad->ret == INJECTED, "%s: the session returns the backend's error (%d; %s)",
			what, bad->ret, bad->err);
	RT_CHECK(strstr(bad->d.log, fake_op_names[fc->op]) != NULL, "%s: it failed there",
			what);
	/* The backend said why; the session adds nothing, or the exchange's one line. */
	RT_CHECK(strstr(bad->err, "out-of-band") == NULL, "%s: no exchange line (%s)", what,
			bad->err);
	if (fc->peer == PEER_OK)
		RT_CHECK(good->ret == 0, "%s: the peer is done (%d: %s)", what, good->ret,
				good->err);
	else if (fc->peer == PEER_FAILS)
		RT_CHECK(good->ret != 0, "%s: the peer fails too", what);
	if (fc->before_tcp)
		RT_CHECK(good->ret == -EINTR, "%s: the waiting peer is interrupted (%d)", what,
				good->ret);
	side_end(&srv);
	side_end(&cl);
}

static void
test_backend_errors(void)
{
	struct side srv, cl;
	unsigned int i;

	for (i = 0; i < sizeof(fail_cases) / sizeof(fail_cases[0]); i++)
		run_fail(&fail_cases[i]);

	/* a failed deregistration at teardown is reported, the rest still goes */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	cl.d.fail_op = F_MR_DESTROY;
	cl.d.fail_nth = 1;
	pair_run(&srv, &cl, 3000);
	RT_CHECK(srv.ret == 0 && cl.ret == 0, "mr_destroy fails: the run is fine");
	roce_perf_session_destroy(cl.s);
	RT_CHECK(strstr(cl.err, "could not deregister MR") != NULL && cl.d.qps == 0 &&
			cl.d.mrs == 1, "mr_destroy fails: said so, QPs gone (%s)", cl.err);
	pthread_mutex_lock(&fabric.lock);
	for (i = 0; i < FAKE_MRS; i++) {
		if (fabric.mr[i].owner == &cl.d) {
			free(fabric.mr[i].mem);
			memset(&fabric.mr[i], 0, sizeof(fabric.mr[i]));
		}
	}
	pthread_mutex_unlock(&fabric.lock);
	side_end(&srv);

	/* the peer's QP and MR without the rights asked for: the work requests fail */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	srv.d.no_rights = true;
	pair_run(&srv, &cl, 3000);
	RT_CHECK(cl.ret == -EIO && strstr(cl.err, "100 work requests failed (first: "
			"REM_ACCESS_ERR)") != NULL, "no rights: the jobs' errors (%d, %s)", cl.ret,
			cl.err);
	RT_CHECK(srv.ret != 0, "no rights: the server fails too");
	side_end(&srv);
	side_end(&cl);
}

/* ---- hostile and broken peers ---- */

/* A perftest 6.06 write_bw server played with lib/perf's exchange steps, stopping early. */
struct raw_peer {
	unsigned int port;
	int stop_after;		/* 0: close after the prologue; 1: silent after the traffic */
	uint8_t gid[16];
	struct fake_daemon d;	/* for a QP and an MR the client's traffic can reach */
	pthread_t th;
	int lfd;
};

static void
raw_listen(struct raw_peer *rp)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(rp->port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1;

	rp->lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(rp->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	RT_CHECK(bind(rp->lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
			listen(rp->lfd, 1) == 0, "raw peer listens");
}

static void *
raw_run(void *arg)
{
	struct raw_peer *rp = arg;
	struct roce_perf_sys local = { .page_size = 4096, .cache_line = 64, .mtu = 3 }, peer,
		agreed;
	struct roce_perf_key mine = { .out_reads = 1 }, theirs;
	struct roce_perf_qp_conf qc = { .sq_depth = 128, .rq_depth = 128,
		.access = ROCE_PERF_ACC_REMOTE_WRITE };
	struct roce_perf_mr mr;
	char buf[64];
	int fd = accept(rp->lfd, NULL, NULL);

	close(rp->lfd);
	if (fd < 0)
		return NULL;
	fake_ops.mr_create(&rp->d, 65536, ROCE_PERF_ACC_LOCAL_WRITE |
			ROCE_PERF_ACC_REMOTE_WRITE, &mr);
	fake_ops.qp_create(&rp->d, &qc, &mine.qpn, &mine.psn);
	mine.rkey = mr.key;
	mine.vaddr = mr.iova;
	memcpy(mine.gid, rp->gid, 16);
	if (roce_perf_oob_prologue(fd, ROCE_PERF_SERVER, &local, 3000, &peer, &agreed) != 0 ||
			rp->stop_after == 0)
		goto out;
	/* keys, connect, keys, barrier: then the client runs its traffic */
	if (roce_perf_oob_keys(fd, ROCE_PERF_SERVER, &mine, &theirs, 3000) != 0)
		goto out;
	{
		struct roce_perf_qp_connect c = { .qpn = mine.qpn, .remote_qpn = theirs.qpn };

		fake_ops.qp_connect(&rp->d, &c);
	}
	if (roce_perf_oob_keys(fd, ROCE_PERF_SERVER, &mine, &theirs, 3000) != 0 ||
			roce_perf_oob_keys(fd, ROCE_PERF_SERVER, &mine, &theirs, 3000) != 0)
		goto out;
	/* say nothing until the client gives up */
	while (recv(fd, buf, sizeof(buf), 0) > 0)
		;
out:
	close(fd);
	fake_ops.qp_destroy(&rp->d, mine.qpn);
	fake_ops.mr_destroy(&rp->d, mr.key);
	return NULL;
}

static void
gid4(uint8_t gid[16], const char *ip)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	inet_pton(AF_INET, ip, gid + 12);
}

static void
raw_client(struct raw_peer *rp, struct side *cl, int stop_after, const char *gid_ip)
{
	next_port();
	memset(rp, 0, sizeof(*rp));
	rp->port = tcp_port;
	rp->stop_after = stop_after;
	rp->d.fab = &fabric;
	rp->d.fail_op = F_OP_MAX;
	gid4(rp->gid, gid_ip);
	raw_listen(rp);
	pthread_create(&rp->th, NULL, raw_run, rp);
	side_init(cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	cl->o.oob_ms = 300;
}

static void
raw_finish(struct raw_peer *rp, struct side *cl)
{
	pthread_join(cl->th, NULL);
	pthread_join(rp->th, NULL);
	side_end(cl);
	RT_CHECK(rp->d.mrs == 0 && rp->d.qps == 0, "the raw peer cleaned up");
}

static void
test_broken_peers(void)
{
	struct raw_peer rp;
	struct side cl, srv;
	double t0;

	/* closes right after the prologue */
	raw_client(&rp, &cl, 0, "10.0.0.3");
	RT_CHECK(side_start(&cl) == 0, "client");
	raw_finish(&rp, &cl);
	RT_CHECK(cl.ret == -ECONNRESET && strstr(cl.err, "out-of-band exchange with the peer "
			"failed: the peer closed the connection") != NULL,
			"early close: one clear line (%d, %s)", cl.ret, cl.err);
	RT_CHECK(cl.headers == 0, "early close: no header");

	/* silent after the traffic: the deadline counts from the end of ours */
	raw_client(&rp, &cl, 1, "10.0.0.3");
	t0 = now_s();
	RT_CHECK(side_start(&cl) == 0, "client");
	raw_finish(&rp, &cl);
	RT_CHECK(cl.ret == -ETIMEDOUT && strstr(cl.err, "did not end the test within 0.3 s of "
			"the end of our traffic") != NULL && now_s() - t0 < 3,
			"silent peer: the side channel's deadline (%d, %s)", cl.ret, cl.err);
	RT_CHECK(cl.nres == 1 && cl.res[0].iters == 100, "silent peer: the traffic ran");

	/* a key aiming our traffic at a third host is refused, in one line */
	raw_client(&rp, &cl, 1, "192.0.2.99");
	RT_CHECK(side_start(&cl) == 0, "client");
	raw_finish(&rp, &cl);
	RT_CHECK(cl.ret == -EPERM && strstr(cl.err, "192.0.2.99") != NULL &&
			strstr(cl.err, "127.0.0.1") != NULL && strstr(cl.err, "10.0.0.2/24") &&
			strchr(cl.err, '\n') == cl.err + strlen(cl.err) - 1,
			"third host: refused (%d, %s)", cl.ret, cl.err);
	RT_CHECK(cl.d.calls[F_QP_CONNECT] == 0, "third host: nothing connected");

	/* ... unless --allow-gid-peer */
	raw_client(&rp, &cl, 1, "192.0.2.99");
	cl.o.allow_gid_peer = true;
	RT_CHECK(side_start(&cl) == 0, "client");
	raw_finish(&rp, &cl);
	RT_CHECK(cl.d.calls[F_QP_CONNECT] == 1 && strcmp(cl.d.conn.remote_ip,
			"192.0.2.99") == 0, "--allow-gid-peer: connected to %s",
			cl.d.conn.remote_ip);

	/* a peer dying mid-run: the client's traffic runs, then the side channel is gone */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	RT_CHECK(side_start(&srv) == 0, "server");
	cl.d.kill_on_job = srv.s;
	RT_CHECK(side_start(&cl) == 0, "client");
	pthread_join(srv.th, NULL);
	pthread_join(cl.th, NULL);
	RT_CHECK(srv.ret == -EINTR, "mid-run: the server was interrupted (%d)", srv.ret);
	RT_CHECK(cl.ret == -ECONNRESET && strstr(cl.err, "the peer closed the side channel "
			"during the traffic"), "mid-run: the client says the peer went (%d, %s)",
			cl.ret, cl.err);
	RT_CHECK(cl.nres == 1, "mid-run: the client's traffic ran");
	side_end(&srv);
	side_end(&cl);

}

/* ---- two rocectl perf agree on their parameters ---- */

/* Both sides refuse, at once, each in one line naming both values. */
static void
check_refused(struct side *srv, struct side *cl, const char *what, const char *peer_says,
		const char *srv_says)
{
	RT_CHECK(srv->ret == -ECANCELED && cl->ret == -ECANCELED, "%s: both refuse (%d %d; %s%s)",
			what, srv->ret, cl->ret, srv->err, cl->err);
	RT_CHECK(strstr(cl->err, peer_says) != NULL && strstr(srv->err, srv_says) != NULL,
			"%s: each says why (%s / %s)", what, cl->err, srv->err);
	RT_CHECK(strchr(cl->err, '\n') == cl->err + strlen(cl->err) - 1 &&
			strchr(srv->err, '\n') == srv->err + strlen(srv->err) - 1,
			"%s: one line each", what);
	RT_CHECK(cl->headers == 0 && srv->headers == 0 && cl->d.calls[F_QP_CONNECT] == 0,
			"%s: refused before the keys", what);
}

static void
test_agreement(void)
{
	struct side srv, cl;
	double t0;

	/* -q given on both sides, different */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	cl.o.qps = 2;
	srv.o.given = cl.o.given = ROCE_PERF_PAR_SET_QPS;
	t0 = now_s();
	pair_run(&srv, &cl, 3000);
	check_refused(&srv, &cl, "-q 2 against -q 1", "the peer runs -q 1, this side -q 2",
			"the peer runs -q 2, this side -q 1");
	RT_CHECK(now_s() - t0 < 1, "-q 2 against -q 1: within a second (%.2f s)", now_s() - t0);
	side_end(&srv);
	side_end(&cl);

	/* -n given on both sides, different */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_SEND, true, true);
	side_init(&cl, "client", ROCE_PERF_VERB_SEND, true, false);
	cl.o.iters = 50;
	srv.o.given = cl.o.given = ROCE_PERF_PAR_SET_ITERS;
	pair_run(&srv, &cl, 3000);
	check_refused(&srv, &cl, "-n 50 against -n 100", "the peer runs -n 100, this side -n 50",
			"the peer runs -n 50, this side -n 100");
	side_end(&srv);
	side_end(&cl);

	/* different tests */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_READ, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	pair_run(&srv, &cl, 3000);
	check_refused(&srv, &cl, "write against read", "the peer runs read_bw, this side write_bw",
			"the peer runs write_bw, this side read_bw");
	side_end(&srv);
	side_end(&cl);

	/* -b on one side only */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	cl.o.duplex = true;
	pair_run(&srv, &cl, 3000);
	check_refused(&srv, &cl, "-b on the client only", "give -b to both sides or neither",
			"the peer runs with -b, this side without");
	side_end(&srv);
	side_end(&cl);

	/* -s and -a given on the two sides */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	cl.o.all = true;
	srv.o.given = cl.o.given = ROCE_PERF_PAR_SET_SIZE;
	pair_run(&srv, &cl, 3000);
	check_refused(&srv, &cl, "-a against -s", "the peer runs -s 4096, this side -a",
			"the peer runs -a, this side -s 4096");
	side_end(&srv);
	side_end(&cl);

	/* given on one side only: the other adopts it (more QPs, larger messages, -n) */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	cl.o.qps = 3;
	cl.o.size = 65536;
	cl.o.iters = 40;
	cl.o.verify = srv.o.verify = true;
	cl.o.given = ROCE_PERF_PAR_SET_QPS | ROCE_PERF_PAR_SET_SIZE | ROCE_PERF_PAR_SET_ITERS;
	pair_run(&srv, &cl, 3000);
	RT_CHECK(srv.ret == 0 && cl.ret == 0, "adopted: both fine (%d %d; %s%s)", srv.ret, cl.ret,
			srv.err, cl.err);
	RT_CHECK(srv.s->nqp == 3 && srv.s->o.size == 65536 && srv.s->o.iters == 40 &&
			srv.d.qps == 3, "adopted: the server runs -q 3 -s 65536 -n 40 (%u QPs)",
			srv.s->nqp);
	RT_CHECK(srv.nres == 1 && srv.res[0].iters == 120 && srv.res[0].size == 65536,
			"adopted: the server prints the client's 3 x 40 of 65536 B");
	RT_CHECK(strcmp(srv.s->verified, "ok") == 0, "adopted: verified (%s)", srv.s->verified);
	RT_CHECK(strstr(srv.note, "taking the peer's -q 3") != NULL &&
			strstr(srv.note, "taking the peer's -s 65536") != NULL &&
			strstr(srv.note, "taking the peer's -n 40") != NULL && cl.note[0] == '\0',
			"adopted: the server says what it took (%s)", srv.note);
	side_end(&srv);
	side_end(&cl);

	/* -D on the server only: the client runs for that long */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	srv.o.duration = 0.3;
	srv.o.given = ROCE_PERF_PAR_SET_DURATION;
	pair_run(&srv, &cl, 3000);
	RT_CHECK(srv.ret == 0 && cl.ret == 0 && cl.s->o.duration == 0.3,
			"-D adopted by the client (%d %d, %g)", srv.ret, cl.ret, cl.s->o.duration);
	side_end(&srv);
	side_end(&cl);
}

/* ---- -b, send_lat -a, --run_infinitely ---- */

static void
test_duplex(void)
{
	struct side srv, cl;
	unsigned int v, i;
	static const enum roce_perf_verb verbs[] = { ROCE_PERF_VERB_WRITE, ROCE_PERF_VERB_READ,
		ROCE_PERF_VERB_ATOMIC, ROCE_PERF_VERB_SEND };

	for (v = 0; v < 4; v++) {
		const char *name = verb_names[verbs[v]];

		next_port();
		side_init(&srv, "server", verbs[v], false, true);
		side_init(&cl, "client", verbs[v], false, false);
		srv.o.duplex = cl.o.duplex = true;
		srv.o.verify = cl.o.verify = true;
		srv.o.qps = cl.o.qps = 2;
		pair_run(&srv, &cl, 3000);
		RT_CHECK(srv.ret == 0 && cl.ret == 0, "%s -b: both fine (%d %d; %s%s)", name,
				srv.ret, cl.ret, srv.err, cl.err);
		RT_CHECK(srv.nres == 1 && cl.nres == 1 && srv.res[0].duplex && cl.res[0].duplex,
				"%s -b: one line each, both directions", name);
		RT_CHECK(srv.s->last.iters == 200 && cl.s->last.iters == 200 &&
				cl.res[0].bw_avg == cl.s->last.bw_avg + srv.s->last.bw_avg &&
				srv.res[0].msg_rate == cl.res[0].msg_rate,
				"%s -b: each side's own 2 x 100, the line adds the peer's", name);
		RT_CHECK(strcmp(srv.s->verified, "ok") == 0 && strcmp(cl.s->verified, "ok") == 0,
				"%s -b: both sides verified (%s %s)", name, srv.s->verified,
				cl.s->verified);
		side_end(&srv);
		side_end(&cl);
	}

	/* -b -a: a line per size, after each size's reports */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	srv.o.duplex = cl.o.duplex = srv.o.all = cl.o.all = true;
	srv.o.iters = cl.o.iters = 5;
	pair_run(&srv, &cl, 5000);
	RT_CHECK(srv.ret == 0 && cl.ret == 0 && srv.nres == ROCE_PERF_NB_SIZES &&
			cl.nres == ROCE_PERF_NB_SIZES, "write -b -a: %u and %u lines (%s%s)", srv.nres,
			cl.nres, srv.err, cl.err);
	for (i = 0; i < cl.nres && i < MAX_RESULTS; i++)
		RT_CHECK(cl.res[i].size == UINT64_C(2) << i && srv.res[i].size == cl.res[i].size,
				"write -b -a: size %u", i);
	side_end(&srv);
	side_end(&cl);

	/* send -b -D: no report exchange, each side prints its own numbers */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_SEND, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_SEND, false, false);
	srv.o.duplex = cl.o.duplex = true;
	srv.o.duration = cl.o.duration = 0.2;
	pair_run(&srv, &cl, 3000);
	RT_CHECK(srv.ret == 0 && cl.ret == 0 && srv.nres == 1 && cl.nres == 1 &&
			!cl.res[0].duplex && cl.res[0].bw_avg == cl.s->last.bw_avg,
			"send -b -D: own numbers each (%d %d; %s%s)", srv.ret, cl.ret, srv.err,
			cl.err);
	side_end(&srv);
	side_end(&cl);

	RT_CHECK(roce_perf_session_create(&(struct roce_perf_opts){ .verb = ROCE_PERF_VERB_SEND,
			.qps = 1, .tx_depth = 1, .size = 8, .server = true, .duplex = true,
			.infinite = true }, &fake_ops, NULL, NULL) == NULL && errno == EINVAL,
			"send -b --run_infinitely refused");
}

/* send_lat -a: a barrier and the server's half posted before each size, as perftest. */
static void
test_send_lat_all(void)
{
	struct side srv, cl;
	unsigned int i;
	bool ok = true;

	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_SEND, true, true);
	side_init(&cl, "client", ROCE_PERF_VERB_SEND, true, false);
	srv.o.all = cl.o.all = true;
	srv.o.iters = cl.o.iters = 10;
	pair_run(&srv, &cl, 5000);
	RT_CHECK(srv.ret == 0 && cl.ret == 0, "send lat -a: both fine (%d %d; %s%s)", srv.ret,
			cl.ret, srv.err, cl.err);
	RT_CHECK(srv.nres == ROCE_PERF_NB_SIZES && cl.nres == ROCE_PERF_NB_SIZES,
			"send lat -a: %u and %u lines", srv.nres, cl.nres);
	for (i = 0; i < cl.nres && i < MAX_RESULTS; i++)
		ok &= cl.res[i].size == UINT64_C(2) << i && cl.res[i].iters == 10;
	RT_CHECK(ok, "send lat -a: 2 B .. 8 MiB, 10 each");
	side_end(&srv);
	side_end(&cl);
}

static void
test_infinite(void)
{
	struct side srv, cl;
	unsigned int i, n;
	bool ok = true;
	int who;

	/* ended by an interrupt of the client, then of the (passive) server */
	for (who = 0; who < 2; who++) {
		next_port();
		side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
		side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
		/* the first time the server is not told: a passive server follows */
		srv.o.infinite = who == 1;
		cl.o.infinite = true;
		cl.o.duration = 0.1;	/* the interval */
		cl.o.poll_ms = 10;
		RT_CHECK(side_start(&srv) == 0 && side_start(&cl) == 0, "infinite: sessions");
		sleep_ms(550);
		RT_CHECK(!srv.done && !cl.done, "infinite: still running");
		roce_perf_session_interrupt(who == 0 ? cl.s : srv.s);
		pthread_join(cl.th, NULL);
		pthread_join(srv.th, NULL);
		RT_CHECK(srv.ret == 0 && cl.ret == 0, "infinite, %s interrupted: both end well "
				"(%d %d; %s%s)", who ? "server" : "client", srv.ret, cl.ret, srv.err,
				cl.err);
		n = cl.nres < MAX_RESULTS ? cl.nres : MAX_RESULTS;
		for (i = 0; i < n; i++)
			ok &= cl.res[i].interval && cl.res[i].iters > 0 && !cl.res[i].interrupted;
		RT_CHECK(cl.nres >= 3 && ok, "infinite: %u interval lines", cl.nres);
		RT_CHECK(srv.nres == 1 && !srv.res[0].interval && srv.res[0].iters > 0,
				"infinite: the server prints the client's total (%u)", srv.nres);
		RT_CHECK(cl.d.calls[F_JOB_STOP] == 1, "infinite: the job stopped");
		RT_CHECK(who == 1 || strstr(srv.note, "--run_infinitely") != NULL,
				"infinite: the server says it follows (%s)", srv.note);
		side_end(&srv);
		side_end(&cl);
	}

	/* -b: both run; the server's interrupt ends both */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_READ, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_READ, false, false);
	srv.o.infinite = cl.o.infinite = srv.o.duplex = cl.o.duplex = true;
	srv.o.duration = cl.o.duration = 0.1;
	RT_CHECK(side_start(&srv) == 0 && side_start(&cl) == 0, "infinite -b: sessions");
	sleep_ms(350);
	roce_perf_session_interrupt(srv.s);
	pthread_join(cl.th, NULL);
	pthread_join(srv.th, NULL);
	RT_CHECK(srv.ret == 0 && cl.ret == 0 && srv.nres >= 2 && cl.nres >= 2,
			"infinite -b: both end well with lines (%d %d, %u %u; %s%s)", srv.ret, cl.ret,
			srv.nres, cl.nres, srv.err, cl.err);
	side_end(&srv);
	side_end(&cl);
}

/* ---- interrupts, jobs without progress ---- */

static void
test_interrupts(void)
{
	struct side srv, cl;
	double t0;

	/* jobs that never end: only an interrupt stops the wait, and it stops the jobs */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_WRITE, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	srv.o.qps = cl.o.qps = 2;
	cl.d.stuck = true;
	RT_CHECK(side_start(&srv) == 0 && side_start(&cl) == 0, "sessions");
	sleep_ms(300);
	RT_CHECK(!cl.done, "stuck jobs: still waiting");
	t0 = now_s();
	roce_perf_session_interrupt(cl.s);
	pthread_join(cl.th, NULL);
	pthread_join(srv.th, NULL);
	RT_CHECK(cl.ret == -EINTR && now_s() - t0 < 1, "stuck jobs: interrupted (%d)", cl.ret);
	RT_CHECK(cl.d.calls[F_JOB_STOP] == 2, "stuck jobs: both stopped (%u)",
			cl.d.calls[F_JOB_STOP]);
	RT_CHECK(cl.nres == 1 && cl.res[0].interrupted, "stuck jobs: a partial result, marked");
	RT_CHECK(strstr(cl.err, "out-of-band") == NULL, "stuck jobs: no exchange line (%s)",
			cl.err);
	RT_CHECK(srv.ret == -ECONNRESET, "stuck jobs: the server sees the client go (%d)",
			srv.ret);
	side_end(&srv);
	side_end(&cl);

	/* jobs without progress: the stall timeout ends them, with one line */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_SEND, true, true);
	side_init(&cl, "client", ROCE_PERF_VERB_SEND, true, false);
	cl.d.stuck = true;
	cl.o.stall_ms = 200;
	t0 = now_s();
	pair_run(&srv, &cl, 3000);
	RT_CHECK(cl.ret == -ETIMEDOUT && strstr(cl.err, "no progress for 0.2 s") != NULL &&
			now_s() - t0 < 1.5 && cl.d.calls[F_JOB_STOP] == 1,
			"stalled jobs: ended after 0.2 s (%d, %.2f s, %s)", cl.ret, now_s() - t0,
			cl.err);
	side_end(&srv);
	side_end(&cl);

	/* a server waiting for its client */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_READ, false, true);
	RT_CHECK(side_start(&srv) == 0, "server");
	sleep_ms(100);
	t0 = now_s();
	roce_perf_session_interrupt(srv.s);
	pthread_join(srv.th, NULL);
	RT_CHECK(srv.ret == -EINTR && srv.waiting == 1 && now_s() - t0 < 1,
			"waiting server: interrupted (%d)", srv.ret);
	side_end(&srv);
}

/* ---- daemon limits and local checks ---- */

static int
solo(struct side *sd)
{
	next_port();
	if (side_start(sd) != 0)
		return -EINVAL;
	pthread_join(sd->th, NULL);
	return sd->ret;
}

static void
test_limits(void)
{
	struct side sd;

	/* reported by the daemon */
	side_init(&sd, "client", ROCE_PERF_VERB_WRITE, false, false);
	sd.d.report_limits = true;
	sd.d.limits = (struct roce_perf_daemon){ .max_qps = 2, .max_qp_depth = 256,
		.max_mr_size = 1 << 20, .max_rd_atomic = 16, .max_inflight = 128,
		.mr_read_max = 4096 };
	sd.o.qps = 3;
	RT_CHECK(solo(&sd) == -E2BIG && strstr(sd.err, "at most 2") != NULL &&
			sd.d.calls[F_MR_CREATE] == 0, "3 QPs, the daemon holds 2 (%s)", sd.err);
	side_end(&sd);

	side_init(&sd, "client", ROCE_PERF_VERB_WRITE, false, false);
	sd.d.report_limits = true;
	sd.d.limits = (struct roce_perf_daemon){ .max_qps = 64, .max_qp_depth = 256,
		.max_mr_size = 1 << 20, .max_rd_atomic = 16, .max_inflight = 128,
		.mr_read_max = 4096 };
	sd.o.tx_depth = 512;
	RT_CHECK(solo(&sd) == -E2BIG && strstr(sd.err, "tx depth 512") != NULL,
			"tx depth 512, queues of 256 (%s)", sd.err);
	side_end(&sd);

	side_init(&sd, "client", ROCE_PERF_VERB_WRITE, false, false);
	sd.d.report_limits = true;
	sd.d.limits = (struct roce_perf_daemon){ .max_qps = 64, .max_qp_depth = 256,
		.max_mr_size = 1 << 20, .max_rd_atomic = 16, .max_inflight = 128,
		.mr_read_max = 4096 };
	sd.o.inflight = 512;
	RT_CHECK(solo(&sd) == -E2BIG && strstr(sd.err, "512 packets in flight") != NULL,
			"512 packets in flight, 128 allowed (%s)", sd.err);
	side_end(&sd);

	side_init(&sd, "client", ROCE_PERF_VERB_WRITE, false, false);
	sd.d.report_limits = true;
	sd.d.limits = (struct roce_perf_daemon){ .max_qps = 64, .max_qp_depth = 256,
		.max_mr_size = 1 << 20, .max_rd_atomic = 16, .max_inflight = 4096,
		.mr_read_max = 4096 };
	sd.o.qps = 9;	/* 9 x 128 KiB > 1 MiB */
	RT_CHECK(solo(&sd) == -E2BIG && strstr(sd.err, "the daemon's largest is 1048576") !=
			NULL && sd.d.calls[F_MR_CREATE] == 0, "MR too large (%s)", sd.err);
	side_end(&sd);

	/* not reported: today's limits */
	side_init(&sd, "client", ROCE_PERF_VERB_WRITE, false, false);
	sd.o.tx_depth = 16385;
	RT_CHECK(solo(&sd) == -E2BIG && strstr(sd.err, "at most 16384") != NULL,
			"tx depth 16385 without reported limits (%s)", sd.err);
	side_end(&sd);

	side_init(&sd, "client", ROCE_PERF_VERB_WRITE, false, false);
	sd.o.inflight = 65537;
	RT_CHECK(solo(&sd) == -E2BIG, "65537 packets in flight without reported limits");
	side_end(&sd);

	/* the port: an index the daemon lacks, no IPv4, an MTU it cannot carry */
	side_init(&sd, "client", ROCE_PERF_VERB_WRITE, false, false);
	sd.o.port = 1;
	RT_CHECK(solo(&sd) == -EINVAL && strstr(sd.err, "the daemon has 1 port") != NULL,
			"port 1 of 1 (%s)", sd.err);
	side_end(&sd);

	side_init(&sd, "client", ROCE_PERF_VERB_WRITE, false, false);
	sd.d.ip = "";
	RT_CHECK(solo(&sd) == -EADDRNOTAVAIL && strstr(sd.err, "no IPv4 address") != NULL,
			"no IPv4 (%s)", sd.err);
	side_end(&sd);

	side_init(&sd, "client", ROCE_PERF_VERB_WRITE, false, false);
	sd.d.ip_mtu = 1500;
	sd.o.mtu = 2048;
	RT_CHECK(solo(&sd) == -EINVAL && strstr(sd.err, "MTU 2048 does not fit port 0's IP MTU "
			"1500") != NULL, "MTU 2048 over 1500 (%s)", sd.err);
	side_end(&sd);

	/* options a front end must not give */
	side_init(&sd, "client", ROCE_PERF_VERB_WRITE, true, false);
	sd.o.qps = 2;
	RT_CHECK(roce_perf_session_create(&sd.o, &fake_ops, &sd.d, NULL) == NULL &&
			errno == EINVAL, "lat with 2 QPs refused");
}

/* MTU agreement: the smaller side's, from its port's IP MTU. */
static void
test_mtu(void)
{
	struct side srv, cl;

	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_READ, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_READ, false, false);
	cl.d.ip_mtu = 1500;
	srv.o.no_sr = true;
	pair_run(&srv, &cl, 3000);
	RT_CHECK(srv.ret == 0 && cl.ret == 0, "mtu: both fine (%s%s)", srv.err, cl.err);
	RT_CHECK(srv.d.conn.mtu == 1024 && cl.d.conn.mtu == 1024, "mtu: 1024 agreed (%u %u)",
			srv.d.conn.mtu, cl.d.conn.mtu);
	RT_CHECK(!srv.d.conn.sr && !cl.d.conn.sr, "--no-sr on one side: go-back-N");
	RT_CHECK(strcmp(roce_perf_test_name(roce_perf_session_test(cl.s)), "read_bw") == 0,
			"test name");
	side_end(&srv);
	side_end(&cl);
}

/* -c UD: UD QPs with perftest's Q_Key, an AH on the sending sides only, SENDs through it
 * to the peer's QPN, messages brought down to the MTU (or refused above it), a -a sweep up
 * to the MTU; the connection type agreed between two rocectl perf. */
static void
run_ud(bool lat, bool duplex, unsigned int ip_mtu, const char *what)
{
	struct side srv, cl;

	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_SEND, lat, true);
	side_init(&cl, "client", ROCE_PERF_VERB_SEND, lat, false);
	srv.o.conn = cl.o.conn = ROCE_PERF_CONN_UD;
	srv.o.duplex = cl.o.duplex = duplex;
	srv.o.size = cl.o.size = lat ? 64 : 65536;
	cl.d.ip_mtu = ip_mtu;
	pair_run(&srv, &cl, 3000);
	RT_CHECK(srv.ret == 0 && cl.ret == 0, "%s: both fine (%d %d: %s%s)", what, srv.ret,
			cl.ret, srv.err, cl.err);
	RT_CHECK(srv.d.qp_conf.ud && cl.d.qp_conf.ud && srv.d.qp_conf.qkey == 0x11111111 &&
			cl.d.qp_conf.access == 0 && srv.d.calls[F_QP_CONNECT] == 0 &&
			cl.d.calls[F_QP_CONNECT] == 0, "%s: UD QPs, Q_Key 0x11111111, none "
			"connected", what);
	RT_CHECK(cl.d.calls[F_AH_CREATE] == 1 && strcmp(cl.d.ah_ip, "10.0.0.1") == 0 &&
			cl.d.ud_job.remote_qpn == srv.s->qp[0].qpn,
			"%s: the client sends through an AH to 10.0.0.1 (%s), QPN 0x%x", what,
			cl.d.ah_ip, cl.d.ud_job.remote_qpn);
	RT_CHECK(srv.d.calls[F_AH_CREATE] == (lat || duplex ? 1u : 0u),
			"%s: the server makes an AH only when it sends (%u)", what,
			srv.d.calls[F_AH_CREATE]);
	if (!lat) {
		uint64_t mtu = ip_mtu >= 4096 + 60 ? 4096 : 1024;

		RT_CHECK(cl.nres >= 1 && cl.res[0].size == mtu && cl.res[0].iters == 100 &&
				strstr(cl.note, "Max msg size in UD is MTU") != NULL,
				"%s: 65536 brought down to the MTU %" PRIu64 " (%" PRIu64 ", %s)", what,
				mtu, cl.nres ? cl.res[0].size : 0, cl.note);
	} else {
		check_lat(&srv, &cl, what);
	}
	side_end(&srv);
	side_end(&cl);
}

static void
test_ud(void)
{
	struct side srv, cl;
	uint64_t sizes_ok = 0;
	unsigned int i;

	run_ud(false, false, 9000, "UD send bw");
	run_ud(false, false, 1500, "UD send bw, MTU 1024");
	run_ud(true, false, 9000, "UD send lat");

	/* -s above the MTU: refused on both sides, as perftest's check_mtu() */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_SEND, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_SEND, false, false);
	srv.o.conn = cl.o.conn = ROCE_PERF_CONN_UD;
	cl.o.size = 8192;
	cl.o.given = ROCE_PERF_PAR_SET_SIZE;
	pair_run(&srv, &cl, 3000);
	RT_CHECK(cl.ret == -EMSGSIZE && srv.ret == -EMSGSIZE &&
			strstr(cl.err, "Max message size in UD cannot be greater than MTU") &&
			strstr(srv.err, "Max message size in UD cannot be greater than MTU"),
			"UD -s 8192: both refuse (%d %d: %s / %s)", cl.ret, srv.ret, cl.err, srv.err);
	side_end(&srv);
	side_end(&cl);

	/* -a: 2 B .. the MTU (1024 here), 10 sizes */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_SEND, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_SEND, false, false);
	srv.o.conn = cl.o.conn = ROCE_PERF_CONN_UD;
	srv.o.all = cl.o.all = true;
	srv.d.ip_mtu = 1500;
	pair_run(&srv, &cl, 3000);
	for (i = 0; i < cl.nres && i < MAX_RESULTS; i++)
		sizes_ok += cl.res[i].size == UINT64_C(2) << i;
	RT_CHECK(srv.ret == 0 && cl.ret == 0 && cl.nres == 10 && sizes_ok == 10 &&
			srv.nres == 1 && srv.res[0].iters == 1000,
			"UD -a: 10 sizes up to 1024 (%u lines, %" PRIu64 " right; server %" PRIu64
			" received: %s%s)", cl.nres, sizes_ok, srv.nres ? srv.res[0].iters : 0,
			srv.err, cl.err);
	side_end(&srv);
	side_end(&cl);

	/* UD against RC: two rocectl perf refuse, each saying why */
	next_port();
	side_init(&srv, "server", ROCE_PERF_VERB_SEND, false, true);
	side_init(&cl, "client", ROCE_PERF_VERB_SEND, false, false);
	cl.o.conn = ROCE_PERF_CONN_UD;
	pair_run(&srv, &cl, 3000);
	RT_CHECK(cl.ret == -ECANCELED && srv.ret == -ECANCELED &&
			strstr(cl.err, "the peer runs -c RC, this side -c UD") &&
			strstr(srv.err, "the peer runs -c UD, this side -c RC"),
			"UD against RC: both refuse (%s / %s)", cl.err, srv.err);
	side_end(&srv);
	side_end(&cl);

	/* what a front end must not give */
	side_init(&cl, "client", ROCE_PERF_VERB_WRITE, false, false);
	cl.o.conn = ROCE_PERF_CONN_UD;
	RT_CHECK(roce_perf_session_create(&cl.o, &fake_ops, &cl.d, NULL) == NULL &&
			errno == EINVAL, "UD write refused");
	cl.o.verb = ROCE_PERF_VERB_SEND;
	cl.o.verify = true;
	RT_CHECK(roce_perf_session_create(&cl.o, &fake_ops, &cl.d, NULL) == NULL &&
			errno == EINVAL, "UD --verify refused");
	cl.o.verify = false;
	cl.o.duplex = true;
	RT_CHECK(roce_perf_session_create(&cl.o, &fake_ops, &cl.d, NULL) == NULL &&
			errno == EINVAL, "UD -b refused");
}

int
main(void)
{
	/* Below the kernel's ephemeral range (32768 up): another test's outgoing connection
	 * once held the port the server was to listen on; above the integration tests' ports. */
	tcp_port = 23000 + (unsigned int)getpid() % 9000;
	RT_RUN(test_modes);
	RT_RUN(test_many_qps_all_sizes);
	RT_RUN(test_verify_mismatch);
	RT_RUN(test_backend_errors);
	RT_RUN(test_broken_peers);
	RT_RUN(test_interrupts);
	RT_RUN(test_agreement);
	RT_RUN(test_duplex);
	RT_RUN(test_send_lat_all);
	RT_RUN(test_infinite);
	RT_RUN(test_limits);
	RT_RUN(test_mtu);
	RT_RUN(test_ud);
	return rt_report("perf_session");
}
