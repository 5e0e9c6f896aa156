/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-QP pacer (lib/cc's roce_cc_pacer(), serving the transport engine's pacing hook) on
 * a virtual clock:
 *
 * - lib/cc alone, against an engine that wakes its QPs late by a random amount: the rate is
 *   kept while the lateness stays within half a burst, the excess over rate * T never passes
 *   the burst, the burst and the limit change as asked;
 * - two transport engines (test/common/xport_harness) for 1 s: one QP at 10 Mb/s, 100 Mb/s,
 *   1, 10 and 100 Gb/s; 1024 QPs at 10 Mb/s; 16384 QPs at 5 Mb/s (82 Gb/s in all, half a
 *   second measured). On the wire: each rate +- 2 % (the sum for many QPs), each QP's bytes over any interval T at
 *   most rate * T plus its burst (a token bucket check over every pair of departures), no
 *   turn of a QP before the time the pacer gave it (a spy between engine and pacer), and the
 *   QPs without a limit never asked about (they cost one flag test).
 *
 * Bytes are counted as the pacer counts them: the frame without the RETH, plus FCS, preamble
 * and inter-frame gap (roce_cc_conf::pkt_overhead).
 */

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "roce_cc.h"
#include "roce_cc_counters.h"
#include "roce_test.h"
#include "xport_harness.h"

#define US 1000ull
#define MS 1000000ull
#define S 1000000000ull
#define LINE_MBPS 100000ull
#define MTU_BYTES 4096u
#define PKT_WIRE (MTU_BYTES + ROCE_CC_PKT_OVERHEAD_DEFAULT)
/* Ethernet, IPv4 and UDP before the BTH in the harness's frames. */
#define BTH_OFF (14 + 20 + 8)

static struct xh h;

/* ---------------------------------------------------------------------------------------- */
/* lib/cc alone: turns of a model engine.                                                   */

static uint64_t
lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* The model's clock: lib/cc's never goes back, so each run starts after the last. */
static uint64_t model_now = 10 * S;

/*
 * One QP limited to @mbps sending turns of @turn packets of 4096 B for 1 s after a second of
 * warm-up; the engine runs a turn at the time the pacer gave, plus a lateness drawn up to
 * @late_ns. @return the rate in Mb/s between the first and the last turn measured (no edge
 * cut); *excess gets the largest bytes - rate * T over any interval of the whole run.
 */
static double
model_run(struct roce_cc *cc, uint32_t qpn, uint64_t mbps, uint32_t turn, uint64_t late_ns,
		double *excess)
{
	double r = (double)mbps / 8000.0, cum = 0, max_a = 0, worst = 0;  /* bytes per ns */
	uint64_t t = model_now, start = t, seed = 77, first = 0, last = 0, sent = 0, wire;

	RT_CHECK(roce_cc_qp_set_limit(cc, qpn, mbps * 1000000) == 0, "limit");
	wire = (uint64_t)turn * PKT_WIRE;
	while (t < start + 2 * S) {
		uint64_t next;
		double a = r * (double)(t - start) - cum;

		/* The turn's packets leave together at t: the check sees them as one. */
		max_a = RTE_MAX(max_a, a);
		cum += (double)wire;
		worst = RTE_MAX(worst, cum - r * (double)(t - start) + max_a);
		if (t >= start + S) {
			if (first == 0)
				first = t;
			else
				sent += wire;     /* what left after the first measured turn */
			last = t;
		}
		next = roce_cc_sent(cc, qpn, turn, (uint64_t)turn * MTU_BYTES, t);
		RT_CHECK(next == 0 || next > t, "next %lu at %lu", (unsigned long)next,
				(unsigned long)t);
		if (next == 0)
			next = t + 100;   /* the engine's next poll */
		t = next + (late_ns != 0 ? lcg(&seed) % late_ns : 0);
	}
	/* Idle for a while: the next run starts with a full bucket, as after any pause. */
	model_now = t + S;
	*excess = worst;
	return last > first ? (double)sent * 8 * 1e3 / (double)(last - first) : 0;
}

static void
test_model(void)
{
	static const uint64_t rates[] = { 10, 1000, 100000 };
	struct roce_cc_conf conf = { .line_mbps = LINE_MBPS, .max_qps = 4, .trace_len = 1 };
	struct roce_cc *cc = roce_cc_create(&conf);
	uint64_t c0[ROCE_CCC_NUM], c1[ROCE_CCC_NUM];
	struct roce_pacer pacer;
	unsigned int i;
	double got, ex;

	RT_CHECK(cc != NULL && roce_cc_qp_add(cc, 1) == 0, "create");
	if (cc == NULL)
		return;
	roce_cc_pacer(cc, &pacer);
	RT_CHECK(roce_cc_get_burst(cc) == ROCE_CC_BURST_DEFAULT &&
			pacer.burst == ROCE_CC_BURST_DEFAULT / 2 && pacer.marked_only,
			"default burst %u, turns of %u", roce_cc_get_burst(cc), pacer.burst);
	for (i = 0; i < RTE_DIM(rates); i++) {
		double half = 16.0 * PKT_WIRE * 8000.0 / (double)rates[i];   /* ns */

		/* On time, and late by up to half a burst less a turn: the rate holds, and no
		 * turn but the first after the pause finds the bucket full. */
		roce_cc_counters(cc, c0);
		got = model_run(cc, 1, rates[i], 16, 0, &ex);
		RT_CHECK(fabs(got - (double)rates[i]) <= 0.005 * (double)rates[i] &&
				ex <= 32.0 * PKT_WIRE + 1, "%lu Mb/s on time: %.4f, excess %.0f B",
				(unsigned long)rates[i], got, ex);
		got = model_run(cc, 1, rates[i], 8, (uint64_t)(half / 2), &ex);
		RT_CHECK(fabs(got - (double)rates[i]) <= 0.005 * (double)rates[i] &&
				ex <= 32.0 * PKT_WIRE + 1, "%lu Mb/s late up to a quarter burst: "
				"%.4f, excess %.0f B", (unsigned long)rates[i], got, ex);
		roce_cc_counters(cc, c1);
		RT_CHECK(c1[ROCE_CCC_PACE_FULL] - c0[ROCE_CCC_PACE_FULL] <= 2, "%lu Mb/s: %lu "
				"turns found the bucket full", (unsigned long)rates[i],
				(unsigned long)(c1[ROCE_CCC_PACE_FULL] - c0[ROCE_CCC_PACE_FULL]));
		/* Later than the bucket covers: the rate is lost, never exceeded. */
		got = model_run(cc, 1, rates[i], 16, (uint64_t)(half * 4), &ex);
		roce_cc_counters(cc, c0);
		RT_CHECK(got < 0.9 * (double)rates[i] && ex <= 32.0 * PKT_WIRE + 1 &&
				c0[ROCE_CCC_PACE_FULL] - c1[ROCE_CCC_PACE_FULL] > 10,
				"%lu Mb/s late by two bursts: %.4f (below), excess %.0f B, %lu turns "
				"found the bucket full", (unsigned long)rates[i], got, ex,
				(unsigned long)(c0[ROCE_CCC_PACE_FULL] - c1[ROCE_CCC_PACE_FULL]));
	}
	/* A smaller burst: a smaller bound; out of range refused. */
	RT_CHECK(roce_cc_set_burst(cc, 4) == 0 && roce_cc_get_burst(cc) == 4, "burst 4");
	got = model_run(cc, 1, 1000, 2, 0, &ex);
	RT_CHECK(fabs(got - 1000) <= 5 && ex <= 4.0 * PKT_WIRE + 1, "burst 4: %.3f Mb/s, excess "
			"%.0f B", got, ex);
	RT_CHECK(roce_cc_set_burst(cc, 0) == -EINVAL &&
			roce_cc_set_burst(cc, ROCE_CC_BURST_MAX + 1) == -EINVAL, "burst range");
	/* The limit off: not paced at all; unknown QP: not paced. */
	RT_CHECK(roce_cc_qp_set_limit(cc, 1, 0) == 0 &&
			roce_cc_sent(cc, 1, 16, 65536, 20 * S) == 0, "no limit: at once");
	RT_CHECK(roce_cc_qp_set_limit(cc, 9, 1000000) == -ENOENT &&
			roce_cc_sent(cc, 9, 1, 4096, 20 * S) == 0, "unknown QP");
	roce_cc_free(cc);
}

/* ---------------------------------------------------------------------------------------- */
/* Two engines.                                                                             */

/* Per paced QP: what the wire carried of it. */
struct qstat {
	double r;                /* its limit, bytes per ns */
	double cum, max_a, worst;
	uint64_t win_bytes;
	uint64_t t0;
	uint8_t started;
};

struct pset {
	unsigned int nb;         /* paced QPs: context 0..nb-1 */
	unsigned int extra;      /* unpaced QPs after them */
	struct roce_qp *(*qp)[2];
	uint32_t *peer;          /* engine 1 QPNs, sorted, and the index of each */
	uint32_t *peer_idx;
	uint16_t *outstanding;
	uint64_t *left;          /* messages an unpaced QP still sends */
	struct roce_cq *cq[2];
	struct roce_mr *mr[2];
	uint8_t *buf[2];
	uint32_t len;
	unsigned int depth;
	struct qstat *st;
	uint64_t from, to;       /* the measured second */
	uint64_t win_bytes;
};

static struct pset ps;

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
peer_index(const struct pset *p, uint32_t qpn)
{
	unsigned int lo = 0, hi = p->nb + p->extra;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (p->peer[mid] < qpn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nb + p->extra && p->peer[lo] == qpn ? (int)p->peer_idx[lo] : -1;
}

/* What engine 0 sends: a WRITE of one QP, checked against that QP's token bucket. */
static enum xh_verdict
tap(void *arg, int from, struct rte_mbuf *m)
{
	struct pset *p = arg;
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t qpn = (uint32_t)b[BTH_OFF + 5] << 16 | (uint32_t)b[BTH_OFF + 6] << 8 |
		b[BTH_OFF + 7];
	uint8_t op = b[BTH_OFF];
	int i = from == 0 ? peer_index(p, qpn) : -1;
	struct qstat *q;
	double wire, a, t;

	if (i < 0 || (unsigned int)i >= p->nb)
		return XH_PASS;
	q = &p->st[i];
	/* As the pacer counts: no RETH (WRITE FIRST, ONLY, ONLY with immediate). */
	wire = m->pkt_len + 4 + 8 + 12 - (op == 0x06 || op == 0x0a || op == 0x0b ? 16 : 0);
	if (!q->started) {
		q->started = 1;
		q->t0 = h.now;
	}
	t = (double)(h.now - q->t0);
	a = q->r * t - q->cum;
	q->max_a = RTE_MAX(q->max_a, a);
	q->cum += wire;
	q->worst = RTE_MAX(q->worst, q->cum - q->r * t + q->max_a);
	if (h.now >= p->from && h.now < p->to) {
		q->win_bytes += (uint64_t)wire;
		p->win_bytes += (uint64_t)wire;
	}
	return XH_PASS;
}

/* Between the engine and lib/cc: every turn of a paced QP at or after the time given. */
struct spy {
	struct roce_pacer inner;
	uint64_t *due;
	unsigned int nb;
	uint64_t calls, early, foreign;
	uint64_t worst_early;
};

static uint64_t
spy_next(void *ctx, const struct roce_qp *qp, uint32_t pkts, uint64_t bytes, uint64_t now)
{
	struct spy *s = ctx;
	uint64_t i = roce_qp_context(qp), at;

	if (i >= s->nb) {
		s->foreign++;
		return s->inner.next(s->inner.ctx, qp, pkts, bytes, now);
	}
	s->calls++;
	if (s->due[i] > now) {
		s->early++;
		s->worst_early = RTE_MAX(s->worst_early, s->due[i] - now);
	}
	at = s->inner.next(s->inner.ctx, qp, pkts, bytes, now);
	s->due[i] = at;
	return at;
}

static int
pset_connect(struct pset *p, unsigned int nb, unsigned int extra, uint32_t len,
		unsigned int depth)
{
	uint32_t all = ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_WRITE;
	unsigned int i, n = nb + extra;
	uint64_t *sorted;
	int s, ret;

	memset(p, 0, sizeof(*p));
	p->nb = nb;
	p->extra = extra;
	p->len = len;
	p->depth = depth;
	p->qp = calloc(n, sizeof(*p->qp));
	p->peer = calloc(n, sizeof(*p->peer));
	p->peer_idx = calloc(n, sizeof(*p->peer_idx));
	p->outstanding = calloc(n, sizeof(*p->outstanding));
	p->left = calloc(n, sizeof(*p->left));
	p->st = calloc(n, sizeof(*p->st));
	sorted = calloc(n, sizeof(*sorted));
	if (p->qp == NULL || p->peer == NULL || p->peer_idx == NULL || p->outstanding == NULL ||
			p->left == NULL || p->st == NULL || sorted == NULL)
		return -ENOMEM;
	for (s = 0; s < 2; s++) {
		p->cq[s] = roce_cq_create(65536, SOCKET_ID_ANY);
		p->buf[s] = calloc(1, len);
		p->mr[s] = roce_mr_reg(h.pd[s], p->buf[s], len, all, NULL);
		if (p->cq[s] == NULL || p->buf[s] == NULL || p->mr[s] == NULL)
			return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		for (s = 0; s < 2; s++) {
			struct roce_qp_init_attr ia = { .max_send_wr = 8, .max_recv_wr = 1,
				.send_cq = p->cq[s], .recv_cq = p->cq[s], .qp_context = i };
			struct roce_qp_attr a = { .qp_state = ROCE_QPS_INIT, .qp_access_flags = all };

			p->qp[i][s] = roce_qp_create(h.eng[s], h.pd[s], &ia);
			if (p->qp[i][s] == NULL)
				return -ENOMEM;
			ret = roce_qp_modify(p->qp[i][s], &a, ROCE_QP_STATE | ROCE_QP_ACCESS_FLAGS);
			if (ret != 0)
				return ret;
		}
		for (s = 0; s < 2; s++) {
			uint32_t me = roce_qp_num(p->qp[i][s]), peer = roce_qp_num(p->qp[i][1 - s]);
			struct roce_qp_attr a = {
				.qp_state = ROCE_QPS_RTR, .path_mtu = ROCE_MTU_4096,
				.dest_qp_num = peer, .rq_psn = 0x100 * (1 - s) + i,
				.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
			};
			struct roce_path *pa = &a.ah;

			pa->src_mac.addr_bytes[0] = pa->dst_mac.addr_bytes[0] = 0x02;
			pa->src_mac.addr_bytes[5] = (uint8_t)(s + 1);
			pa->dst_mac.addr_bytes[5] = (uint8_t)(2 - s);
			pa->src_ip[0] = pa->dst_ip[0] = 10;
			pa->src_ip[3] = (uint8_t)(s + 1);
			pa->dst_ip[3] = (uint8_t)(2 - s);
			pa->udp_sport = roce_udp_sport(me, peer);
			if (roce_path_init(pa) != 0)
				return -EINVAL;
			ret = roce_qp_modify(p->qp[i][s], &a, ROCE_QP_STATE | ROCE_QP_AV |
					ROCE_QP_PATH_MTU | ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN |
					ROCE_QP_MAX_DEST_RD_ATOMIC | ROCE_QP_MIN_RNR_TIMER);
			if (ret != 0)
				return ret;
			a.qp_state = ROCE_QPS_RTS;
			a.sq_psn = 0x100 * s + i;
			a.timeout = 14;
			a.retry_cnt = 7;
			a.rnr_retry = 7;
			a.max_rd_atomic = 1;
			ret = roce_qp_modify(p->qp[i][s], &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN |
					ROCE_QP_TIMEOUT | ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY |
					ROCE_QP_MAX_QP_RD_ATOMIC);
			if (ret != 0)
				return ret;
		}
		sorted[i] = (uint64_t)roce_qp_num(p->qp[i][1]) << 32 | i;
	}
	qsort(sorted, n, sizeof(*sorted), cmp_u64);
	for (i = 0; i < n; i++) {
		p->peer[i] = (uint32_t)(sorted[i] >> 32);
		p->peer_idx[i] = (uint32_t)sorted[i];
	}
	free(sorted);
	return 0;
}

static void
pset_destroy(struct pset *p)
{
	unsigned int i;
	int s;

	for (i = 0; p->qp != NULL && i < p->nb + p->extra; i++)
		for (s = 0; s < 2; s++)
			if (p->qp[i][s] != NULL)
				roce_qp_destroy(p->qp[i][s]);
	for (s = 0; s < 2; s++) {
		if (p->mr[s] != NULL)
			roce_mr_dereg(p->mr[s]);
		if (p->cq[s] != NULL)
			roce_cq_destroy(p->cq[s]);
		free(p->buf[s]);
	}
	free(p->qp);
	free(p->peer);
	free(p->peer_idx);
	free(p->outstanding);
	free(p->left);
	free(p->st);
	memset(p, 0, sizeof(*p));
}

/* Post WRITEs to QP @i up to the depth (an unpaced QP: while it has messages left). */
static void
post(struct pset *p, unsigned int i)
{
	while (p->outstanding[i] < p->depth && (i < p->nb || p->left[i] > 0)) {
		struct roce_send_wr wr = {
			.wr_id = i,
			.opcode = ROCE_WR_RDMA_WRITE,
			.send_flags = ROCE_SEND_SIGNALED,
			.num_sge = 1,
			.sg_list = {{ roce_mr_iova(p->mr[0]), p->len, roce_mr_lkey(p->mr[0]) }},
			.remote_addr = roce_mr_iova(p->mr[1]),
			.rkey = roce_mr_rkey(p->mr[1]),
		};

		if (roce_post_send(p->qp[i][0], &wr) != 0)
			break;
		p->outstanding[i]++;
		if (i >= p->nb)
			p->left[i]--;
	}
}

/* Completions in: the QPs they belong to post again. @return failed completions. */
static unsigned int
repost(struct pset *p)
{
	struct roce_wc wc[256];
	unsigned int bad = 0;
	int n, k;

	while ((n = roce_cq_poll(p->cq[0], wc, RTE_DIM(wc))) > 0) {
		for (k = 0; k < n; k++) {
			bad += wc[k].status != ROCE_WC_SUCCESS;
			p->outstanding[wc[k].wr_id]--;
			post(p, (unsigned int)wc[k].wr_id);
		}
	}
	return bad;
}

/*
 * @nb QPs each limited to @mbps (and @extra QPs without a limit sending 8 messages each),
 * messages of @len bytes, burst @burst: @win_ms measured after 20 ms.
 */
static void
engine_run(unsigned int nb, uint64_t mbps, uint32_t len, uint32_t burst, unsigned int extra,
		uint64_t win_ms)
{
	struct roce_engine_conf ec = { .max_qps = nb + extra + 16 };
	struct roce_cc_conf conf = { .line_mbps = LINE_MBPS, .max_qps = nb + extra,
		.trace_len = 1, .burst = burst };
	struct spy sp = { .nb = nb };
	struct roce_pacer pacer;
	struct roce_cc *cc;
	uint64_t end, want = nb * mbps, bad = 0, worst_rate_ppm = 0, over = 0;
	double secs = (double)win_ms / 1e3;
	double got, worst_ex = 0, bound = (double)burst * PKT_WIRE;
	clock_t cpu = clock();
	unsigned int i;

	xh_init(&h, 4000 + nb, &ec);
	h.impair[0].delay_ns = h.impair[1].delay_ns = 2000;
	cc = roce_cc_create(&conf);
	sp.due = calloc(nb, sizeof(*sp.due));
	RT_CHECK(cc != NULL && sp.due != NULL && pset_connect(&ps, nb, extra, len, 4) == 0,
			"connect %u QPs", nb);
	if (cc == NULL || sp.due == NULL || ps.qp == NULL)
		goto out;
	for (i = 0; i < nb; i++) {
		uint32_t qpn = roce_qp_num(ps.qp[i][0]);

		/* A plain rate limit: reaction and notification points off. */
		RT_CHECK(roce_cc_qp_add(cc, qpn) == 0 &&
				roce_cc_qp_set_limit(cc, qpn, mbps * 1000000) == 0, "limit %u", i);
		roce_qp_set_paced(ps.qp[i][0], 1);
		ps.st[i].r = (double)mbps / 8000.0;
	}
	for (i = nb; i < nb + extra; i++)
		ps.left[i] = 8;
	roce_cc_pacer(cc, &sp.inner);
	pacer = sp.inner;
	pacer.next = spy_next;
	pacer.ctx = &sp;
	RT_CHECK(roce_engine_set_pacer(h.eng[0], &pacer) == 0, "pacer");
	ps.from = h.now + 20 * MS;
	ps.to = ps.from + win_ms * MS;
	h.tap = tap;
	h.tap_arg = &ps;
	for (i = 0; i < nb + extra; i++)
		post(&ps, i);
	end = ps.to + MS;
	while (h.now < end) {
		bad += repost(&ps);
		xh_step(&h, 1000);
	}
	got = (double)ps.win_bytes * 8 / 1e6 / secs;
	for (i = 0; i < nb; i++) {
		double r = (double)ps.st[i].win_bytes * 8 / 1e6 / secs;
		uint64_t ppm = (uint64_t)(fabs(r - (double)mbps) / (double)mbps * 1e6);

		worst_rate_ppm = RTE_MAX(worst_rate_ppm, ppm);
		worst_ex = RTE_MAX(worst_ex, ps.st[i].worst);
		over += ps.st[i].worst > bound + 1e-6 * bound;
	}
	printf("  %5u QPs x %6lu Mb/s, burst %2u, %.1f s: %.1f Mb/s (%+.3f %%), worst QP %.2f %% off, "
			"excess %.0f of %.0f B, %lu turns, %lu early (%.1f s of CPU)\n", nb,
			(unsigned long)mbps, burst, secs, got, 100 * (got - (double)want) / (double)want,
			(double)worst_rate_ppm / 1e4, worst_ex, bound, (unsigned long)sp.calls,
			(unsigned long)sp.early, (double)(clock() - cpu) / CLOCKS_PER_SEC);
	RT_CHECK(fabs(got - (double)want) <= 0.02 * (double)want,
			"%u QPs at %lu Mb/s: the wire carried %.1f Mb/s over %.1f s, want %lu +- 2 %%",
			nb, (unsigned long)mbps, got, secs, (unsigned long)want);
	/* One QP's window cuts a turn; for many, the sum is what counts. */
	RT_CHECK(worst_rate_ppm <= (nb == 1 ? 20000u : 50000u), "worst QP %.2f %% off",
			(double)worst_rate_ppm / 1e4);
	RT_CHECK(over == 0, "%lu QPs sent more than rate * T + %u packets (worst %.0f B over, "
			"bound %.0f)", (unsigned long)over, burst, worst_ex, bound);
	RT_CHECK(sp.calls > 0 && sp.early == 0, "%lu of %lu turns before their time (by up to "
			"%lu ns)", (unsigned long)sp.early, (unsigned long)sp.calls,
			(unsigned long)sp.worst_early);
	RT_CHECK(sp.foreign == 0, "the pacer was asked %lu times about QPs without a limit",
			(unsigned long)sp.foreign);
	for (i = nb; i < nb + extra; i++)
		RT_CHECK(ps.left[i] == 0 && ps.outstanding[i] == 0, "unpaced QP %u: %lu left, %u "
				"outstanding", i, (unsigned long)ps.left[i], ps.outstanding[i]);
	RT_CHECK(bad == 0 && xh_counter(&h, 0, ROCE_XC_RETRANSMITS) == 0,
			"%lu failed completions, no retransmission", (unsigned long)bad);
out:
	h.tap = NULL;
	roce_engine_set_pacer(h.eng[0], NULL);
	pset_destroy(&ps);
	xh_fini(&h);
	roce_cc_free(cc);
	free(sp.due);
}

/*
 * ROCE_TEST_QUICK (scripts/test.sh sets it for the sanitizer build, where every copied byte
 * costs ten times more): the same cases with the packet counts cut, where the accuracy the
 * checks ask for survives it. The normal build runs them in full.
 */
static bool
quick(void)
{
	const char *q = getenv("ROCE_TEST_QUICK");

	return q != NULL && strcmp(q, "0") != 0;
}

static void
test_one_qp(void)
{
	/* 100 ms at 10 Gb/s and above is still 30 000 packets or more. */
	uint64_t fast_ms = quick() ? 100 : 1000;

	/* Low rates with a small burst: a bucket of 32 packets is 107 ms at 10 Mb/s, more
	 * than 2 % of the measured second. */
	engine_run(1, 10, 65536, 1, 0, 1000);
	engine_run(1, 100, 65536, 8, 0, 1000);
	engine_run(1, 1000, 65536, 32, 0, 1000);
	engine_run(1, 10000, 65536, 32, 0, fast_ms);
	engine_run(1, 100000, 65536, 32, 4, fast_ms);
	engine_run(1, 100000, 65536, 8, 0, fast_ms);
}

static void
test_many_qps(void)
{
	engine_run(1024, 10, 8192, 2, 16, 1000);
}

/*
 * 2.5 million packets a second to simulate: half a second measured. Quick: 2048 QPs, as
 * many packets per QP (the per-QP bound needs them), an eighth of the bytes.
 */
static void
test_16k_qps(void)
{
	engine_run(quick() ? 2048 : 16384, 5, 8192, 2, 0, 500);
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	RT_RUN(test_model);
	RT_RUN(test_one_qp);
	RT_RUN(test_many_qps);
	RT_RUN(test_16k_qps);
	return rt_report("pacer");
}
