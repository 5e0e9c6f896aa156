/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --verify, between two rocedp sessions. The sender fills its source with "random:SEED", SEED
 * from the client's QP key, which both sides know; the receiver compares the CRC-32 of what
 * landed with that of the same pattern written into its scratch slot (after the QPs' slots).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "perf_private.h"
#include "roce_perf_session.h"

static uint32_t
verify_seed(const struct roce_perf_session *s, unsigned int i)
{
	const struct roce_perf_key *c = s->o.server ? &s->qp[i].peer : &s->qp[i].local;

	return (c->qpn << 8) ^ c->psn;
}

/* Where QP i's data comes from and where it lands, on this side (-b: both ways). */
static bool
verify_sends(const struct roce_perf_session *s)
{
	if (s->o.duplex)
		return true;
	if (s->o.lat)
		return s->o.verb != ROCE_PERF_VERB_READ || s->o.server;
	return s->o.verb == ROCE_PERF_VERB_READ ? s->o.server : !s->o.server;
}

bool
perf_sess_verify_receives(const struct roce_perf_session *s)
{
	if (s->o.duplex)
		return true;
	if (s->o.lat)
		return s->o.verb != ROCE_PERF_VERB_READ || !s->o.server;
	return s->o.verb == ROCE_PERF_VERB_READ ? !s->o.server : s->o.server;
}

int
perf_sess_verify_prepare(struct roce_perf_session *s)
{
	unsigned int i;
	int ret;

	if (!s->o.verify || s->o.verb == ROCE_PERF_VERB_ATOMIC || !verify_sends(s))
		return 0;
	for (i = 0; i < s->nqp; i++) {
		uint64_t off = perf_sess_local_off(s, i) +
			(s->o.verb == ROCE_PERF_VERB_READ ? s->slot / 2 : 0);

		ret = s->ops->mr_fill(s->ctx, s->mr.key, off, perf_sess_max_size(s),
				verify_seed(s, i));
		if (ret != 0)
			return ret;
	}
	return 0;
}

/* The sum of the little-endian 8-byte words of one QP's half. */
static int
atomic_sum(struct roce_perf_session *s, unsigned int i, uint64_t *sum)
{
	uint64_t half = s->slot / 2, off, len, got, w;
	unsigned int b, chunk = s->daemon.mr_read_max;
	uint8_t *buf;
	int ret = 0;

	chunk &= ~7u;	/* whole words per read */
	if (chunk == 0)
		chunk = 8;
	buf = malloc(chunk);
	if (buf == NULL)
		return -ENOMEM;
	for (off = 0; off < half && ret == 0; off += len) {
		len = half - off < chunk ? half - off : chunk;
		got = 0;
		ret = s->ops->mr_read(s->ctx, s->mr.key, perf_sess_local_off(s, i) + half + off,
				len, buf, &got);
		for (w = 0; ret == 0 && w + 8 <= got && w + 8 <= len; w += 8) {
			uint64_t v = 0;

			for (b = 0; b < 8; b++)
				v |= (uint64_t)buf[w + b] << (8 * b);
			*sum += v;
		}
	}
	free(buf);
	return ret;
}

/*
 * Atomics: the targets' sum is the number of fetch-and-adds of 1 the peer did. A rocedp
 * peer always adds to the first word of our half; perftest steps its target by the cache line
 * size through the cycle buffer (64 targets for 64 B lines and 4 KiB pages), so add up every
 * 8-byte word of the half (zeroed at registration; only the peer's atomics land there).
 * Compare-and-swaps leave the targets at 0: a rocedp peer compares with 1 (never equal),
 * perftest swaps 0 for 0.
 */
static int
verify_atomic(struct roce_perf_session *s)
{
	uint64_t sum = 0, want = s->o.cas ? 0 : s->oob.peer_report.iters;
	unsigned int i;
	int ret;

	for (i = 0; i < s->nqp; i++)
		if ((ret = atomic_sum(s, i, &sum)) != 0)
			return ret;
	if (sum != want) {
		perf_sess_err(s, "verify: the targets add up to %" PRIu64 ", the peer did %"
				PRIu64 " %s", sum, s->oob.peer_report.iters, s->o.cas ?
				"compare-and-swaps, which leave them at 0" : "fetch-and-adds");
		return -EBADMSG;
	}
	return 0;
}

/* One QP's landing zone against the pattern, through the scratch slot. */
static int
verify_qp(struct roce_perf_session *s, unsigned int i, uint64_t size, uint64_t len)
{
	const struct roce_perf_backend_ops *ops = s->ops;
	uint64_t scratch = s->nqp * s->slot;
	uint64_t off = perf_sess_local_off(s, i) +
		(s->o.verb == ROCE_PERF_VERB_READ ? 0 : s->slot / 2);
	uint32_t want, got;
	int ret;

	if ((ret = ops->mr_fill(s->ctx, s->mr.key, scratch, size, verify_seed(s, i))) != 0 ||
			(ret = ops->mr_digest(s->ctx, s->mr.key, scratch, len, &want)) != 0 ||
			(ret = ops->mr_digest(s->ctx, s->mr.key, off, len, &got)) != 0)
		return ret;
	if (want != got) {
		perf_sess_err(s, "verify: QP 0x%06x received CRC-32 0x%08x, the pattern has "
				"0x%08x (is the peer a rocectl perf --verify?)", s->qp[i].qpn, got,
				want);
		return -EBADMSG;
	}
	return 0;
}

int
perf_sess_verify_check(struct roce_perf_session *s, uint64_t size)
{
	/* latency write/send: the last byte carries the message number */
	uint64_t len = s->o.lat && s->o.verb != ROCE_PERF_VERB_READ ? size - 1 : size;
	unsigned int i;
	int ret;

	if (!s->o.verify || !perf_sess_verify_receives(s))
		return 0;
	if (s->o.verb == ROCE_PERF_VERB_ATOMIC)
		return s->o.lat ? 0 : verify_atomic(s);
	/* Only a rocectl perf --verify peer sends the pattern; a stock perftest's bytes are its
	 * own business. */
	if (!(s->oob.agreed.caps & ROCE_PERF_CAP_PATTERN)) {
		s->verified = "skipped: the peer is not a rocectl perf --verify";
		return 0;
	}
	for (i = 0; i < s->nqp; i++)
		if ((ret = verify_qp(s, i, size, len)) != 0)
			return ret;
	return 0;
}
