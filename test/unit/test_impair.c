/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drivers/impair: the spec parser (good and bad strings, canonical form), reproducibility
 * for a seed, measured rates against the configured ones over 10^6 packets (deterministic
 * for the seed, so the bounds are fixed numbers: 5 standard deviations), Gilbert-Elliott
 * burst lengths, reorder depth, delay by a virtual clock, the rate limit, ECN marking (IPv4
 * checksum and RoCE ICRC still valid), the rx callbacks on a ring port, and the tx stages a
 * transmitter calls (same decisions as a stage, retried packets never judged twice, held
 * packets released by the poll alone, no callback on the port).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>

#include "roce_dataplane.h"
#include "roce_impair.h"
#include "roce_test.h"
#include "roce_txq.h"
#include "roce_wire.h"

#define HZ 1000000000ull          /* the virtual clock counts nanoseconds */
#define BURST 32
#define N_STAT 1000000u

static struct rte_mempool *pool;

/* ---- packets with a sequence number ---- */

static struct rte_mbuf *
pkt(uint32_t seq, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p;

	if (m == NULL) {
		fprintf(stderr, "pool empty\n");
		exit(2);
	}
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	memset(p, 0, len);
	p[12] = 0x08;        /* IPv4 EtherType, Not-ECT: ECN marking leaves it */
	memcpy(p + 20, &seq, 4);
	return m;
}

static uint32_t
seq_of(const struct rte_mbuf *m)
{
	uint32_t s;

	memcpy(&s, rte_pktmbuf_mtod(m, const uint8_t *) + 20, 4);
	return s;
}

/* What came out of a stage: sequence numbers in order. */
struct trace {
	uint32_t *seq;
	uint32_t n;
	uint32_t cap;
};

static void
trace_add(struct trace *t, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 4096;
			t->seq = realloc(t->seq, t->cap * sizeof(*t->seq));
		}
		t->seq[t->n++] = seq_of(pkts[i]);
		rte_pktmbuf_free(pkts[i]);
	}
}

static struct roce_impair_stage *
stage(const char *spec_str, enum roce_impair_dir dir)
{
	struct roce_impair_spec spec;
	struct roce_impair_stage *st;
	char err[128];
	int ret = roce_impair_parse(spec_str, &spec, err, sizeof(err));

	RT_CHECK(ret == 0, "parse '%s': %s", spec_str, err);
	st = roce_impair_stage_create(&spec, dir, 0, HZ);
	if (st == NULL) {
		fprintf(stderr, "cannot create a stage\n");
		exit(2);
	}
	return st;
}

/* Push @n packets through a stage at 1 ns apart, then drain; counters into @cnt. */
static void
run_burst(const char *spec_str, enum roce_impair_dir dir, uint32_t n, struct trace *t,
		uint64_t cnt[ROCE_IMPAIR_CNT_NUM])
{
	struct roce_impair_stage *st = stage(spec_str, dir);
	struct rte_mbuf *pkts[BURST];
	uint64_t now = 1000;
	uint32_t seq = 0;
	uint16_t k, i;

	while (seq < n) {
		for (k = 0; k < BURST && seq < n; k++)
			pkts[k] = pkt(seq++, 64);
		k = roce_impair_stage_burst(st, pkts, k, BURST, now);
		trace_add(t, pkts, k);
		now += BURST;
	}
	for (i = 0; i < 1000 && roce_impair_stage_held(st) != 0; i++) {
		now += 1000000;
		k = roce_impair_stage_burst(st, pkts, 0, BURST, now);
		trace_add(t, pkts, k);
	}
	memset(cnt, 0, sizeof(uint64_t) * ROCE_IMPAIR_CNT_NUM);
	roce_impair_stage_counters(st, cnt);
	roce_impair_stage_free(st);
}

/* |measured - p| within 5 standard deviations of a binomial proportion over @n trials. */
static int
near(double measured, double p, uint32_t n)
{
	return fabs(measured - p) <= 5 * sqrt(p * (1 - p) / n);
}

/* ---- the parser ---- */

static void
test_parse_good(void)
{
	struct roce_impair_spec s;
	char err[160], out[ROCE_IMPAIR_SPEC_MAX];
	int ret;

	ret = roce_impair_parse("port=1,dir=both,seed=0x10,loss=1%,ge=0.01:0.25,"
			"reorder=0.05:4:2ms,dup=0.5,delay=50us:10us,ecn=0.1,rate=2.5g:8k", &s,
			err, sizeof(err));
	RT_CHECK(ret == 0, "%s", err);
	RT_CHECK(s.port == 1 && s.has_port && s.dirs == 3 && s.seed == 16, "target %u %u %lu",
			s.port, s.dirs, (unsigned long)s.seed);
	RT_CHECK(s.loss == 0.01 && s.ge_p == 0.01 && s.ge_r == 0.25 && s.ge_h == 1 &&
			s.ge_k == 0, "loss/ge");
	RT_CHECK(s.reorder == 0.05 && s.reorder_depth == 4 && s.reorder_timeout_ns == 2000000,
			"reorder");
	RT_CHECK(s.dup == 0.5 && s.delay_ns == 50000 && s.jitter_ns == 10000 && s.ecn == 0.1,
			"dup/delay/ecn");
	RT_CHECK(s.rate_bps == 2500000000ull && s.rate_burst == 8192, "rate %lu %u",
			(unsigned long)s.rate_bps, s.rate_burst);
	ret = roce_impair_format(&s, 1, out, sizeof(out));
	RT_CHECK(ret > 0 && strcmp(out, "port=1,dir=both,seed=16,loss=0.01,ge=0.01:0.25:1:0,"
			"reorder=0.05:4:2ms,dup=0.5,delay=50us:10us,ecn=0.1,rate=2500m:8192") == 0,
			"canonical: %s", out);
	RT_CHECK(roce_impair_parse("delay=7", &s, err, sizeof(err)) == 0 && s.delay_ns == 7000 &&
			!s.has_port && s.dirs == ROCE_IMPAIR_DIR_RX, "bare time is us");
	RT_CHECK(roce_impair_parse("", &s, err, sizeof(err)) == 0 &&
			!roce_impair_spec_active(&s), "empty spec");
	RT_CHECK(roce_impair_parse("none", &s, err, sizeof(err)) == 0 &&
			roce_impair_format(&s, 0, out, sizeof(out)) == 4 && strcmp(out, "none") == 0,
			"none: %s", out);
	RT_CHECK(roce_impair_format(&s, 0, out, 3) == -ENOSPC, "short buffer");
}

static void
test_parse_bad(void)
{
	static const char *const bad[] = {
		"loss", "loss=", "loss=1.5", "loss=-0.1", "loss=101%", "loss=nan", "loss=inf",
		"loss=0x1p-3", "loss= 0.1", "loss=0.1,loss=0.2", "los=0.1", "loss=0.1,",
		",loss=0.1", "loss=0.1,,dup=0.1", "dir=up", "dir=rx:tx", "port=70000",
		"port=-1", "port=1k", "seed=abc", "seed=-1", "seed=99999999999999999999",
		"ge=0.1", "ge=0.1:0.2:0.3:0.4:0.5", "ge=0.1::1", "reorder=0.1:0", "reorder=0.1:65",
		"reorder=0.1:4:0", "reorder=0.1:4:1ms:1", "delay=2s", "delay=10furlongs",
		"delay=600ms:600ms", "delay=1:2:3", "ecn=2", "rate=10q", "rate=999",
		"rate=11t", "rate=1g:32", "rate=1g:65m", "rate=1g:1x", "dup=0.1:0.2", "=1",
		"loss=0.1=2",
	};
	struct roce_impair_spec s;
	char err[160];
	unsigned int i;
	char long_spec[ROCE_IMPAIR_SPEC_MAX + 2];

	for (i = 0; i < RTE_DIM(bad); i++) {
		err[0] = '\0';
		RT_CHECK(roce_impair_parse(bad[i], &s, err, sizeof(err)) == -EINVAL &&
				err[0] != '\0', "'%s' refused with a message", bad[i]);
	}
	memset(long_spec, 'a', sizeof(long_spec) - 1);
	long_spec[sizeof(long_spec) - 1] = '\0';
	RT_CHECK(roce_impair_parse(long_spec, &s, err, sizeof(err)) == -EINVAL, "too long");
	roce_impair_parse("loss=2", &s, err, sizeof(err));
	RT_CHECK(strstr(err, "loss") != NULL && strstr(err, "probability") != NULL,
			"message names the key: %s", err);
	/* A NULL error buffer is allowed. */
	RT_CHECK(roce_impair_parse("x=1", &s, NULL, 0) == -EINVAL, "NULL err");
}

/* ---- decisions ---- */

static void
test_reproducible(void)
{
	static const char *const spec = "seed=7,loss=0.1,ge=0.02:0.3,dup=0.05,reorder=0.05:3";
	struct trace a = {0}, b = {0}, c = {0};
	uint64_t ca[ROCE_IMPAIR_CNT_NUM], cb[ROCE_IMPAIR_CNT_NUM], cc[ROCE_IMPAIR_CNT_NUM];

	run_burst(spec, ROCE_IMPAIR_RX, 100000, &a, ca);
	run_burst(spec, ROCE_IMPAIR_RX, 100000, &b, cb);
	run_burst("seed=8,loss=0.1,ge=0.02:0.3,dup=0.05,reorder=0.05:3", ROCE_IMPAIR_RX, 100000,
			&c, cc);
	RT_CHECK(a.n == b.n && memcmp(a.seq, b.seq, a.n * sizeof(*a.seq)) == 0 &&
			memcmp(ca, cb, sizeof(ca)) == 0, "same seed, same output (%u, %u)", a.n,
			b.n);
	RT_CHECK(a.n != c.n || memcmp(a.seq, c.seq, a.n * sizeof(*a.seq)) != 0,
			"another seed, other decisions");
	free(a.seq);
	free(b.seq);
	free(c.seq);
}

/* Independent streams: adding dup does not change which packets the loss drops. */
static void
test_streams_independent(void)
{
	struct trace a = {0}, b = {0};
	uint64_t ca[ROCE_IMPAIR_CNT_NUM], cb[ROCE_IMPAIR_CNT_NUM];
	uint32_t i, j = 0, same = 1;

	run_burst("seed=3,loss=0.2", ROCE_IMPAIR_RX, 20000, &a, ca);
	run_burst("seed=3,loss=0.2,dup=0.3", ROCE_IMPAIR_RX, 20000, &b, cb);
	for (i = 0; i < a.n && same; i++) {
		same = j < b.n && b.seq[j] == a.seq[i];
		j++;
		while (j < b.n && b.seq[j] == a.seq[i])
			j++;
	}
	RT_CHECK(same && j == b.n && ca[ROCE_IMPAIR_C_DROPPED_UNIFORM] ==
			cb[ROCE_IMPAIR_C_DROPPED_UNIFORM], "loss decisions unchanged by dup=");
	free(a.seq);
	free(b.seq);
}

static void
test_rates(void)
{
	struct trace t = {0};
	uint64_t c[ROCE_IMPAIR_CNT_NUM];
	double loss, dup, reo;

	run_burst("seed=11,loss=0.05,dup=0.02,reorder=0.03:4", ROCE_IMPAIR_RX, N_STAT, &t, c);
	loss = (double)c[ROCE_IMPAIR_C_DROPPED_UNIFORM] / N_STAT;
	dup = (double)c[ROCE_IMPAIR_C_DUPLICATED] / (N_STAT - c[ROCE_IMPAIR_C_DROPPED_UNIFORM]);
	/* Duplicates enter the reorder stage too. */
	reo = (double)c[ROCE_IMPAIR_C_REORDERED] /
		(N_STAT - c[ROCE_IMPAIR_C_DROPPED_UNIFORM] + c[ROCE_IMPAIR_C_DUPLICATED]);
	printf("  10^6 packets: loss %.5f (0.05) dup %.5f (0.02) reorder %.5f (0.03)\n", loss,
			dup, reo);
	RT_CHECK(c[ROCE_IMPAIR_C_SEEN] == N_STAT, "seen %lu",
			(unsigned long)c[ROCE_IMPAIR_C_SEEN]);
	RT_CHECK(near(loss, 0.05, N_STAT), "loss %f", loss);
	RT_CHECK(near(dup, 0.02, N_STAT), "dup %f", dup);
	RT_CHECK(near(reo, 0.03, N_STAT), "reorder %f", reo);
	RT_CHECK(t.n == N_STAT - c[ROCE_IMPAIR_C_DROPPED_UNIFORM] + c[ROCE_IMPAIR_C_DUPLICATED] &&
			c[ROCE_IMPAIR_C_PASSED] == t.n, "every packet accounted: %u out", t.n);
	free(t.seq);
}

/* Gilbert-Elliott with h=1, k=0: loss runs are bad-state sojourns, geometric of mean 1/r. */
static void
test_ge_bursts(void)
{
	const double p = 0.01, r = 0.25;
	struct trace t = {0};
	uint64_t c[ROCE_IMPAIR_CNT_NUM];
	uint32_t i, next = 0, runs = 0, lost = 0;
	double rate, mean;

	run_burst("seed=5,ge=0.01:0.25:1:0", ROCE_IMPAIR_RX, N_STAT, &t, c);
	for (i = 0; i < t.n; i++) {
		if (t.seq[i] != next) {
			runs++;
			lost += t.seq[i] - next;
		}
		next = t.seq[i] + 1;
	}
	if (next != N_STAT) {
		runs++;
		lost += N_STAT - next;
	}
	rate = (double)lost / N_STAT;
	mean = (double)lost / runs;
	printf("  GE: loss %.5f (p/(p+r) = %.5f), mean burst %.3f (1/r = %.3f), %u bursts\n",
			rate, p / (p + r), mean, 1 / r, runs);
	RT_CHECK(lost == c[ROCE_IMPAIR_C_DROPPED_BURST], "counted %lu, seen %u",
			(unsigned long)c[ROCE_IMPAIR_C_DROPPED_BURST], lost);
	/* Bursts are correlated: looser bounds than a binomial, still tight (2 %, 5 %). */
	RT_CHECK(fabs(rate - p / (p + r)) < 0.02 * p / (p + r) * 5, "GE loss rate %f", rate);
	RT_CHECK(fabs(mean - 1 / r) < 0.05 * (1 / r), "mean burst %f", mean);
	free(t.seq);
}

/* Each held packet is overtaken by exactly depth later packets; the others by none. */
static void
test_reorder_depth(void)
{
	const uint32_t n = 100000, depth = 4;
	struct trace t = {0};
	uint64_t c[ROCE_IMPAIR_CNT_NUM];
	uint32_t *bit = calloc(n + 1, sizeof(*bit));
	uint32_t i, j, held = 0, bad = 0;

	run_burst("seed=9,reorder=0.05:4", ROCE_IMPAIR_RX, n, &t, c);
	RT_CHECK(t.n == n, "all out: %u", t.n);
	/* A Fenwick tree counts, for each packet, the larger ids output before it. */
	for (i = 0; i < t.n; i++) {
		uint32_t id = t.seq[i] + 1, le = 0, larger;

		for (j = id; j > 0; j -= j & -j)
			le += bit[j];
		larger = i - le;
		for (j = id; j <= n; j += j & -j)
			bit[j]++;
		held += larger != 0;
		/* The last ones have fewer later packets: they go at the timeout. */
		bad += larger != 0 && larger != depth && id <= n - depth;
	}
	printf("  reorder: %u of %u packets held, each overtaken by exactly %u: %s\n", held, n,
			depth, bad == 0 ? "yes" : "no");
	RT_CHECK(bad == 0, "%u packets overtaken by another number than %u", bad, depth);
	RT_CHECK(held <= c[ROCE_IMPAIR_C_REORDERED] && c[ROCE_IMPAIR_C_REORDERED] - held <= depth,
			"held %u counted %lu (the last may have had nothing to overtake them)", held,
			(unsigned long)c[ROCE_IMPAIR_C_REORDERED]);
	free(bit);
	free(t.seq);
}

/* A held packet with no later traffic goes out after the timeout. */
static void
test_reorder_timeout(void)
{
	struct roce_impair_stage *st = stage("seed=1,reorder=1:4:100us", ROCE_IMPAIR_RX);
	struct rte_mbuf *pkts[BURST];
	uint16_t k;

	pkts[0] = pkt(0, 64);
	k = roce_impair_stage_burst(st, pkts, 1, BURST, 1000);
	RT_CHECK(k == 0 && roce_impair_stage_held(st) == 1, "held");
	k = roce_impair_stage_burst(st, pkts, 0, BURST, 1000 + 99999);
	RT_CHECK(k == 0, "still held before the timeout");
	k = roce_impair_stage_burst(st, pkts, 0, BURST, 1000 + 100000);
	RT_CHECK(k == 1 && seq_of(pkts[0]) == 0, "released at the timeout");
	if (k == 1)
		rte_pktmbuf_free(pkts[0]);
	roce_impair_stage_free(st);
}

/* Delay 100 us + jitter 0..50 us by a virtual clock: never early, in order, bounded. */
static void
test_delay(void)
{
	struct roce_impair_stage *st = stage("seed=2,delay=100us:50us", ROCE_IMPAIR_RX);
	const uint32_t n = 20000, gap = 700, step = 100;
	uint64_t *sent = calloc(n, sizeof(*sent)), now = 5000, worst = 0, best = UINT64_MAX;
	struct rte_mbuf *pkts[BURST];
	uint32_t seq = 0, next = 0, order = 1, early = 0, late = 0;
	uint16_t k, i;

	while (next < n && now < 1000000000) {
		k = 0;
		if (seq < n && now >= 5000 + (uint64_t)seq * gap) {
			sent[seq] = now;
			pkts[k++] = pkt(seq++, 64);
		}
		k = roce_impair_stage_burst(st, pkts, k, BURST, now);
		for (i = 0; i < k; i++) {
			uint32_t s = seq_of(pkts[i]);
			uint64_t d = now - sent[s];

			order &= s == next++;
			early += d < 100000;
			late += d > 150000 + step;
			worst = RTE_MAX(worst, d);
			best = RTE_MIN(best, d);
			rte_pktmbuf_free(pkts[i]);
		}
		now += step;
	}
	printf("  delay: %u packets, %.1f..%.1f us (100 + 0..50)\n", next, best / 1e3,
			worst / 1e3);
	RT_CHECK(next == n && order, "all released in order (%u)", next);
	RT_CHECK(early == 0 && late == 0, "%u early, %u late", early, late);
	free(sent);
	roce_impair_stage_free(st);
}

/* 1000-byte packets offered at 2 Gbit/s to a 1 Gbit/s policer for 100 ms. */
static void
test_rate(void)
{
	struct roce_impair_stage *st = stage("rate=1g:4k", ROCE_IMPAIR_RX);
	const uint64_t t_end = 100000000;
	uint64_t c[ROCE_IMPAIR_CNT_NUM] = {0}, now, bytes = 0;
	struct rte_mbuf *pkts[BURST];
	uint32_t seq = 0;
	uint16_t k, i;
	double gbps;

	for (now = 0; now < t_end; now += 4000) {
		pkts[0] = pkt(seq++, 1000);
		k = roce_impair_stage_burst(st, pkts, 1, BURST, now);
		for (i = 0; i < k; i++) {
			bytes += pkts[i]->pkt_len;
			rte_pktmbuf_free(pkts[i]);
		}
	}
	roce_impair_stage_counters(st, c);
	gbps = (double)bytes * 8 / (t_end / 1e9) / 1e9;
	printf("  rate: %.4f Gbit/s passed of 2 offered (limit 1), %lu dropped\n", gbps,
			(unsigned long)c[ROCE_IMPAIR_C_RATE_DROPPED]);
	RT_CHECK(fabs(gbps - 1) < 0.01, "rate %f", gbps);
	RT_CHECK(c[ROCE_IMPAIR_C_RATE_DROPPED] + c[ROCE_IMPAIR_C_PASSED] == seq, "accounted");
	roce_impair_stage_free(st);
}

/* ---- ECN ---- */

static struct rte_mbuf *
roce_pkt(int ipv6, uint8_t ecn, int vlan)
{
	struct roce_path path = {
		.src_mac = {{ 2, 0, 0, 0, 0, 1 }}, .dst_mac = {{ 2, 0, 0, 0, 0, 2 }},
		.ipv6 = (uint8_t)ipv6, .vlan = (uint8_t)vlan, .vlan_tci = 7,
		.src_ip = { 10, 0, 0, 1 }, .dst_ip = { 10, 0, 0, 2 }, .dscp = 26, .ecn = ecn,
		.udp_sport = 0xC001,
	};
	struct roce_pkt_desc d = { .opcode = ROCE_OP_WRITE_ONLY, .dest_qpn = 0x10002, .psn = 5,
		.va = 0x1000, .rkey = 0x77, .dma_len = 256 };
	uint8_t payload[256];
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	if (ipv6) {
		path.src_ip[0] = 0xfd;
		path.dst_ip[0] = 0xfd;
	}
	memset(payload, 0xab, sizeof(payload));
	if (m == NULL || roce_path_init(&path) != 0 ||
			roce_build_pkt(m, &path, &d, payload, sizeof(payload)) != 0) {
		fprintf(stderr, "cannot build a RoCE packet\n");
		exit(2);
	}
	return m;
}

static void
test_ecn(void)
{
	static const uint8_t codes[] = { ROCE_ECN_NOT_ECT, ROCE_ECN_ECT0, ROCE_ECN_ECT1,
		ROCE_ECN_CE };
	struct roce_impair_stage *st = stage("ecn=1", ROCE_IMPAIR_RX);
	struct roce_wire_stats ws = {0};
	uint64_t c[ROCE_IMPAIR_CNT_NUM] = {0};
	unsigned int v6, vlan, e, marked = 0;

	for (v6 = 0; v6 < 2; v6++)
		for (vlan = 0; vlan < 2; vlan++)
			for (e = 0; e < RTE_DIM(codes); e++) {
				struct rte_mbuf *m = roce_pkt((int)v6, codes[e], (int)vlan);
				const struct roce_pkt_meta *meta;
				uint16_t k = roce_impair_stage_burst(st, &m, 1, 1, 0);
				uint8_t want = codes[e] == ROCE_ECN_NOT_ECT ? ROCE_ECN_NOT_ECT :
					ROCE_ECN_CE;

				RT_CHECK(k == 1, "passed");
				roce_classify_burst(&m, 1, 0, &ws);
				meta = roce_pkt_meta(m);
				RT_CHECK(meta->type == ROCE_PKT_ROCE, "v6 %u vlan %u ecn %u: still valid "
						"RoCE (ICRC, IP checksum): type %u reason %u", v6, vlan,
						codes[e], meta->type, meta->reason);
				RT_CHECK((meta->tos & ROCE_ECN_MASK) == want && meta->tos >> 2 == 26,
						"v6 %u ecn %u -> tos 0x%x", v6, codes[e], meta->tos);
				if (!v6) {
					const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m,
							const struct rte_ipv4_hdr *, meta->l3_off);

					RT_CHECK(rte_ipv4_cksum(ip) == 0 || rte_ipv4_cksum(ip) ==
							0xffff, "IPv4 checksum valid");
				}
				marked += codes[e] == ROCE_ECN_ECT0 || codes[e] == ROCE_ECN_ECT1;
				rte_pktmbuf_free(m);
			}
	roce_impair_stage_counters(st, c);
	RT_CHECK(c[ROCE_IMPAIR_C_CE_MARKED] == marked, "%lu marked, %u ECT packets",
			(unsigned long)c[ROCE_IMPAIR_C_CE_MARKED], marked);
	roce_impair_stage_free(st);
}

/* Marking rate over 10^6 ECT packets: one packet, marked and restored each time. */
static void
test_ecn_rate(void)
{
	struct roce_impair_stage *st = stage("seed=4,ecn=0.1", ROCE_IMPAIR_RX);
	struct rte_mbuf *m = roce_pkt(0, ROCE_ECN_ECT0, 0);
	struct rte_mbuf *orig = rte_pktmbuf_copy(m, pool, 0, UINT32_MAX);
	uint64_t c[ROCE_IMPAIR_CNT_NUM] = {0};
	uint32_t i;
	double rate;

	for (i = 0; i < N_STAT; i++) {
		roce_impair_stage_burst(st, &m, 1, 1, i);
		rte_memcpy(rte_pktmbuf_mtod(m, void *), rte_pktmbuf_mtod(orig, void *),
				m->data_len);
	}
	roce_impair_stage_counters(st, c);
	rate = (double)c[ROCE_IMPAIR_C_CE_MARKED] / N_STAT;
	printf("  ECN: %.5f of 10^6 ECT packets marked CE (0.1)\n", rate);
	RT_CHECK(near(rate, 0.1, N_STAT), "CE rate %f", rate);
	rte_pktmbuf_free(m);
	rte_pktmbuf_free(orig);
	roce_impair_stage_free(st);
}

/* ---- ethdev ports: rx callbacks, tx stages (a ring port: its tx ring is its rx ring) ---- */

static uint16_t
ring_port(const char *name)
{
	struct rte_eth_conf conf = {0};
	uint16_t port;

	if (rte_vdev_init(name, NULL) != 0 ||
			rte_eth_dev_get_port_by_name(name, &port) != 0 ||
			rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
			rte_eth_rx_queue_setup(port, 0, 1024, SOCKET_ID_ANY, NULL, pool) != 0 ||
			rte_eth_tx_queue_setup(port, 0, 1024, SOCKET_ID_ANY, NULL) != 0 ||
			rte_eth_dev_start(port) != 0) {
		fprintf(stderr, "cannot set up a ring port\n");
		exit(2);
	}
	return port;
}

static void
ring_port_close(uint16_t port)
{
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
}

/* Everything the port has received so far into @t; @return how many. */
static uint32_t
drain(uint16_t port, struct trace *t)
{
	struct rte_mbuf *pkts[BURST];
	uint32_t total = 0;
	uint16_t k;

	while ((k = rte_eth_rx_burst(port, 0, pkts, BURST)) != 0) {
		trace_add(t, pkts, k);
		total += k;
	}
	return total;
}

/* Send @n packets through the port in bursts, unimpaired on tx; what arrives goes into @t. */
static void
loop(uint16_t port, uint32_t first, uint32_t n, struct trace *t)
{
	struct rte_mbuf *pkts[BURST];
	uint32_t seq = first;
	uint16_t k, s;

	while (seq < first + n) {
		for (k = 0; k < BURST && seq < first + n; k++)
			pkts[k] = pkt(seq++, 64);
		s = rte_eth_tx_burst(port, 0, pkts, k);
		RT_CHECK(s == k, "tx took %u of %u", s, k);
		drain(port, t);
	}
}

static struct roce_impair *
port_impair(uint16_t port, const char *spec_str)
{
	struct roce_impair *im = roce_impair_create(port, 1, SOCKET_ID_ANY);
	struct roce_impair_spec spec;
	char err[128];

	RT_CHECK(im != NULL, "create");
	if (im == NULL)
		exit(2);
	RT_CHECK(roce_impair_parse(spec_str, &spec, err, sizeof(err)) == 0, "%s", err);
	RT_CHECK(roce_impair_set(im, &spec) == 0, "set %s", spec_str);
	return im;
}

/* Decisions, counters and statistics of a port's tx stage equal a standalone stage's. */
static void
test_tx_stage(void)
{
	static const char *const spec = "port=0,dir=tx,seed=11,loss=0.05,dup=0.02,reorder=0.03:4";
	uint16_t port = ring_port("net_ring_imp1");
	struct roce_impair *im = port_impair(port, spec);
	uint64_t c[ROCE_IMPAIR_CNT_NUM], ref[ROCE_IMPAIR_CNT_NUM], now = 1000;
	struct trace t = {0}, r = {0};
	struct rte_mbuf *pkts[2 * BURST];
	uint32_t seq = 0, i, grown = 0, shrunk = 0;
	uint16_t k;

	RT_CHECK(roce_impair_counters(im, ROCE_IMPAIR_TX, c) == 1 && c[ROCE_IMPAIR_C_SEEN] == 0,
			"tx configured");
	while (seq < N_STAT) {
		for (k = 0; k < BURST && seq < N_STAT; k++)
			pkts[k] = pkt(seq++, 64);
		i = k;
		/* Room for more than came in: released packets may join. */
		k = roce_impair_tx_prepare(im, 0, pkts, k, 2 * BURST, now);
		grown += k > i;
		shrunk += k < i;
		trace_add(&t, pkts, k);
		now += BURST;
	}
	for (i = 0; i < 1000; i++) {
		now += 1000000;
		k = roce_impair_tx_poll(im, 0, pkts, BURST, now);
		trace_add(&t, pkts, k);
	}
	run_burst(spec, ROCE_IMPAIR_TX, N_STAT, &r, ref);
	roce_impair_counters(im, ROCE_IMPAIR_TX, c);
	printf("  tx stage: 10^6 packets, %lu dropped, %lu duplicated, %lu reordered; "
			"%u bursts shrank, %u grew\n",
			(unsigned long)c[ROCE_IMPAIR_C_DROPPED_UNIFORM],
			(unsigned long)c[ROCE_IMPAIR_C_DUPLICATED],
			(unsigned long)c[ROCE_IMPAIR_C_REORDERED], shrunk, grown);
	RT_CHECK(t.n == r.n && memcmp(t.seq, r.seq, t.n * sizeof(*t.seq)) == 0,
			"same packets out as a standalone tx stage (%u, %u)", t.n, r.n);
	RT_CHECK(memcmp(c, ref, sizeof(c)) == 0, "same counters");
	RT_CHECK(near((double)c[ROCE_IMPAIR_C_DROPPED_UNIFORM] / N_STAT, 0.05, N_STAT),
			"loss rate");
	RT_CHECK(c[ROCE_IMPAIR_C_PASSED] == t.n && t.n == N_STAT -
			c[ROCE_IMPAIR_C_DROPPED_UNIFORM] + c[ROCE_IMPAIR_C_DUPLICATED],
			"every packet accounted");
	RT_CHECK(shrunk > 0 && grown > 0, "bursts shrink and grow");
	/* No ethdev callback: a burst sent straight to the port is not touched. */
	t.n = 0;
	loop(port, 0, 3200, &t);
	roce_impair_counters(im, ROCE_IMPAIR_TX, ref);
	RT_CHECK(t.n == 3200 && ref[ROCE_IMPAIR_C_SEEN] == c[ROCE_IMPAIR_C_SEEN],
			"rte_eth_tx_burst alone is not impaired: %u of 3200", t.n);
	roce_impair_destroy(im);
	ring_port_close(port);
	free(t.seq);
	free(r.seq);
}

/*
 * The dataplane's transmit object (lib/dataplane roce_txq) over a tx stage and a port that
 * refuses part of the bursts (its ring fills up): what the port did not take waits, judged,
 * the feeder waits while it does, it is sent again later without being judged twice, and
 * nothing is lost or added; the object's port counters agree with what arrived.
 */
static void
test_tx_retry(void)
{
	static const char *const spec = "port=0,dir=tx,seed=6,loss=0.3,dup=0.1";
	const uint32_t n = 3000;
	uint16_t port = ring_port("net_ring_imp2");
	struct roce_impair *im = port_impair(port, spec);
	uint64_t c[ROCE_IMPAIR_CNT_NUM], ref[ROCE_IMPAIR_CNT_NUM], cnt[ROCE_DP_CNT_NUM] = {0};
	uint64_t waits = 0;
	struct trace t = {0}, r = {0};
	struct rte_mbuf *pkts[BURST];
	struct roce_txq q;
	uint32_t seq = 0, i;
	uint16_t k;

	roce_txq_init(&q, port, 0, NULL, NULL, cnt);
	RT_CHECK(roce_txq_set_impair(&q, im) == 0 && roce_txq_set_impair(&q, im) == 0,
			"the stage set (twice: no-op)");
	/* Nobody reads the port until it refuses: the ring takes 1023 at most. */
	while (seq < n) {
		if (!roce_txq_ready(&q)) {
			waits++;
			drain(port, &t);
			roce_txq_flush(&q, 0);
			continue;
		}
		for (k = 0; k < BURST && seq < n; k++)
			pkts[k] = pkt(seq++, 64);
		roce_txq_send(&q, pkts, k, 0);
	}
	for (i = 0; i < 100; i++) {
		roce_txq_flush(&q, 0);
		drain(port, &t);
	}
	roce_impair_counters(im, ROCE_IMPAIR_TX, c);
	run_burst(spec, ROCE_IMPAIR_TX, n, &r, ref);
	printf("  tx retry: the port refused %lu times, %u of %u packets arrived\n",
			(unsigned long)waits, t.n, n);
	RT_CHECK(waits > 0 && roce_txq_ready(&q) && !roce_txq_held(&q),
			"the port refused some (%lu), all went later", (unsigned long)waits);
	RT_CHECK(c[ROCE_IMPAIR_C_SEEN] == n, "each judged once: seen %lu",
			(unsigned long)c[ROCE_IMPAIR_C_SEEN]);
	RT_CHECK(t.n == c[ROCE_IMPAIR_C_PASSED] && t.n == r.n &&
			memcmp(t.seq, r.seq, t.n * sizeof(*t.seq)) == 0 &&
			memcmp(c, ref, sizeof(c)) == 0,
			"arrived exactly what a stage passes (%u, %u), same counters", t.n, r.n);
	RT_CHECK(cnt[ROCE_DP_PORT_TX_PKTS] == t.n && cnt[ROCE_DP_PORT_TX_BYTES] == 64ull * t.n &&
			cnt[ROCE_DP_PORT_TX_DROP] == 0, "port counters: %lu frames, %lu bytes",
			(unsigned long)cnt[ROCE_DP_PORT_TX_PKTS],
			(unsigned long)cnt[ROCE_DP_PORT_TX_BYTES]);
	roce_txq_fini(&q);
	roce_impair_destroy(im);
	ring_port_close(port);
	free(t.seq);
	free(r.seq);
}

/*
 * Frames that may be lost (ARP, ND) go at once or are dropped and counted; through a ring
 * (a worker without a queue of its own) they are handed over, counted as such.
 */
static void
test_txq_policies(void)
{
	uint16_t port = ring_port("net_ring_imp5");
	struct rte_ring *r = rte_ring_create("txq_handoff", 64, SOCKET_ID_ANY, 0);
	uint64_t cnt[ROCE_DP_CNT_NUM] = {0};
	struct rte_mbuf *pkts[BURST];
	struct trace t = {0};
	struct roce_txq q;
	uint32_t seq = 0, i;
	uint16_t k;

	roce_txq_init(&q, port, 0, NULL, NULL, cnt);
	for (i = 0; i < 40; i++) {
		for (k = 0; k < BURST; k++)
			pkts[k] = pkt(seq++, 64);
		roce_txq_send_or_drop(&q, pkts, BURST, 0);
	}
	RT_CHECK(roce_txq_ready(&q) && cnt[ROCE_DP_PORT_TX_PKTS] + cnt[ROCE_DP_PORT_TX_DROP] ==
			seq && cnt[ROCE_DP_PORT_TX_DROP] > 0, "lossy: %lu sent, %lu dropped, none wait",
			(unsigned long)cnt[ROCE_DP_PORT_TX_PKTS],
			(unsigned long)cnt[ROCE_DP_PORT_TX_DROP]);
	RT_CHECK(drain(port, &t) == cnt[ROCE_DP_PORT_TX_PKTS], "what was counted arrived");
	roce_txq_fini(&q);

	memset(cnt, 0, sizeof(cnt));
	roce_txq_init(&q, port, 0, r, NULL, cnt);
	RT_CHECK(roce_txq_set_impair(&q, (struct roce_impair *)1) == -EINVAL,
			"a handing-over object has no stage");
	for (i = 0, seq = 0; i < 2; i++) {
		for (k = 0; k < BURST; k++)
			pkts[k] = pkt(seq++, 64);
		roce_txq_send(&q, pkts, BURST, 0);
	}
	RT_CHECK(!roce_txq_ready(&q) && roce_txq_held(&q) && cnt[ROCE_DP_TX_HANDOFF] == 63 &&
			cnt[ROCE_DP_PORT_TX_PKTS] == 0, "ring of 63 full: %lu handed over, the rest waits",
			(unsigned long)cnt[ROCE_DP_TX_HANDOFF]);
	while ((k = (uint16_t)rte_ring_dequeue_burst(r, (void **)pkts, BURST, NULL)) != 0)
		rte_pktmbuf_free_bulk(pkts, k);
	RT_CHECK(roce_txq_flush(&q, 0) == 1 && roce_txq_ready(&q), "the last one went later");
	while ((k = (uint16_t)rte_ring_dequeue_burst(r, (void **)pkts, BURST, NULL)) != 0)
		rte_pktmbuf_free_bulk(pkts, k);
	roce_txq_fini(&q);
	rte_ring_free(r);
	ring_port_close(port);
	free(t.seq);
}

/* Held packets leave by the poll alone, when due; a clear lets them all go at once. */
static void
test_tx_poll(void)
{
	uint16_t port = ring_port("net_ring_imp3");
	struct roce_impair *im = port_impair(port, "dir=tx,delay=20us");
	struct roce_impair_spec spec;
	struct rte_mbuf *pkts[BURST];
	struct trace t = {0};
	uint64_t c[ROCE_IMPAIR_CNT_NUM];
	uint16_t k, i;
	char err[64];

	RT_CHECK(roce_impair_tx_poll(im, 0, pkts, BURST, 0) == 0, "nothing held, nothing out");
	for (k = 0; k < BURST; k++)
		pkts[k] = pkt(k, 64);
	k = roce_impair_tx_prepare(im, 0, pkts, BURST, BURST, 1000);
	RT_CHECK(k == 0, "all held: %u out", k);
	k = roce_impair_tx_poll(im, 0, pkts, BURST, 1000 + 19999);
	RT_CHECK(k == 0, "not due yet: %u out", k);
	k = roce_impair_tx_poll(im, 0, pkts, 8, 1000 + 20000);
	RT_CHECK(k == 8, "due: %u of at most 8", k);
	trace_add(&t, pkts, k);
	k = roce_impair_tx_poll(im, 0, pkts, BURST, 1000 + 20000);
	trace_add(&t, pkts, k);
	for (i = 0; i < t.n; i++)
		RT_CHECK(t.seq[i] == i, "in order: %u at %u", t.seq[i], i);
	RT_CHECK(t.n == BURST, "all released by polls: %u", t.n);
	/* A reorder hold with nothing after it goes at its timeout. */
	roce_impair_parse("dir=tx,reorder=1:4:100us", &spec, err, sizeof(err));
	RT_CHECK(roce_impair_set(im, &spec) == 0, "set reorder");
	pkts[0] = pkt(100, 64);
	RT_CHECK(roce_impair_tx_prepare(im, 0, pkts, 1, BURST, 5000) == 0, "held");
	RT_CHECK(roce_impair_tx_poll(im, 0, pkts, BURST, 5000 + 99999) == 0, "before timeout");
	k = roce_impair_tx_poll(im, 0, pkts, BURST, 5000 + 100000);
	RT_CHECK(k == 1 && seq_of(pkts[0]) == 100, "at the timeout");
	rte_pktmbuf_free_bulk(pkts, k);
	/* Cleared while a second of delay holds packets: the next poll lets them go. */
	roce_impair_parse("dir=tx,delay=1s", &spec, err, sizeof(err));
	RT_CHECK(roce_impair_set(im, &spec) == 0, "set delay");
	for (k = 0; k < 10; k++)
		pkts[k] = pkt(200 + k, 64);
	RT_CHECK(roce_impair_tx_prepare(im, 0, pkts, 10, BURST, 0) == 0, "held for 1 s");
	RT_CHECK(roce_impair_clear(im, ROCE_IMPAIR_DIR_TX) == 0, "clear");
	k = roce_impair_tx_poll(im, 0, pkts, BURST, 1);
	RT_CHECK(k == 10, "released by the clear: %u", k);
	rte_pktmbuf_free_bulk(pkts, k);
	/* Cleared and empty: bursts pass untouched, even larger than the room asked for. */
	for (k = 0; k < 4; k++)
		pkts[k] = pkt(300 + k, 64);
	RT_CHECK(roce_impair_tx_prepare(im, 0, pkts, 4, BURST, 2) == 4 && seq_of(pkts[3]) == 303,
			"pass through");
	RT_CHECK(roce_impair_tx_prepare(im, 0, pkts, 4, 2, 3) == 2, "room for 2: 2 out");
	rte_pktmbuf_free_bulk(pkts, 2);
	k = roce_impair_tx_poll(im, 0, pkts, BURST, 4);
	RT_CHECK(k == 2 && seq_of(pkts[0]) == 302, "the other 2 by the poll: %u", k);
	rte_pktmbuf_free_bulk(pkts, k);
	roce_impair_counters(im, ROCE_IMPAIR_TX, c);
	RT_CHECK(c[ROCE_IMPAIR_C_SEEN] == BURST + 1 + 10 && c[ROCE_IMPAIR_C_DELAYED] == BURST + 10,
			"counters: seen %lu delayed %lu", (unsigned long)c[ROCE_IMPAIR_C_SEEN],
			(unsigned long)c[ROCE_IMPAIR_C_DELAYED]);
	roce_impair_destroy(im);
	/* Misuse: a handle whose tx was never configured passes what fits and frees the rest. */
	im = roce_impair_create(port, 1, SOCKET_ID_ANY);
	pkts[0] = pkt(0, 64);
	pkts[1] = pkt(1, 64);
	k = roce_impair_tx_prepare(im, 0, pkts, 2, 1, 0);
	RT_CHECK(k == 1, "tx not configured: %u", k);
	rte_pktmbuf_free_bulk(pkts, k);
	roce_impair_destroy(im);
	ring_port_close(port);
	free(t.seq);
}

/* A held packet still in a stage is freed with the handle. */
static void
test_tx_destroy(void)
{
	uint16_t port = ring_port("net_ring_imp4");
	struct roce_impair *im = port_impair(port, "dir=both,delay=1s");
	struct rte_mbuf *pkts[4];
	uint16_t k;

	for (k = 0; k < 4; k++)
		pkts[k] = pkt(k, 64);
	RT_CHECK(roce_impair_tx_prepare(im, 0, pkts, 4, 4, 0) == 0, "held");
	roce_impair_destroy(im);
	ring_port_close(port);
}

static void
test_ethdev(void)
{
	uint16_t port = ring_port("net_ring_imp0");
	struct roce_impair *im = roce_impair_create(port, 1, SOCKET_ID_ANY);
	uint64_t c[ROCE_IMPAIR_CNT_NUM], ref[ROCE_IMPAIR_CNT_NUM];
	struct roce_impair_spec spec, got;
	struct trace t = {0}, r = {0};
	char err[128];

	RT_CHECK(im != NULL, "create");
	if (im == NULL)
		return;
	RT_CHECK(roce_impair_get(im, ROCE_IMPAIR_RX, &got) == -ENOENT, "nothing set");
	RT_CHECK(roce_impair_counters(im, ROCE_IMPAIR_RX, c) == 0, "never configured");
	/* rx loss on the port gives the same decisions as a stage with the same spec. */
	roce_impair_parse("port=0,dir=rx,seed=21,loss=0.3", &spec, err, sizeof(err));
	RT_CHECK(roce_impair_set(im, &spec) == 0, "set rx");
	loop(port, 0, 3200, &t);
	run_burst("port=0,dir=rx,seed=21,loss=0.3", ROCE_IMPAIR_RX, 3200, &r, ref);
	RT_CHECK(t.n == r.n && memcmp(t.seq, r.seq, t.n * sizeof(*t.seq)) == 0,
			"callback decisions equal the stage's (%u, %u)", t.n, r.n);
	roce_impair_counters(im, ROCE_IMPAIR_RX, c);
	RT_CHECK(c[ROCE_IMPAIR_C_SEEN] == 3200 &&
			c[ROCE_IMPAIR_C_DROPPED_UNIFORM] == ref[ROCE_IMPAIR_C_DROPPED_UNIFORM],
			"counters %lu %lu", (unsigned long)c[ROCE_IMPAIR_C_SEEN],
			(unsigned long)c[ROCE_IMPAIR_C_DROPPED_UNIFORM]);
	RT_CHECK(roce_impair_get(im, ROCE_IMPAIR_RX, &got) == 0 && got.loss == 0.3 &&
			got.dirs == ROCE_IMPAIR_DIR_RX, "get");
	/* rx delay: held packets come with a later rx burst. */
	roce_impair_parse("dir=rx,delay=20us", &spec, err, sizeof(err));
	RT_CHECK(roce_impair_set(im, &spec) == 0, "set rx delay");
	t.n = 0;
	loop(port, 30000, BURST, &t);
	{
		uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 10;

		while (t.n < BURST && rte_get_tsc_cycles() < end)
			drain(port, &t);
	}
	RT_CHECK(t.n == BURST, "delayed rx: %u of %u", t.n, BURST);
	/* Cleared: everything passes. */
	RT_CHECK(roce_impair_clear(im, ROCE_IMPAIR_DIR_RX | ROCE_IMPAIR_DIR_TX) == 0, "clear");
	t.n = 0;
	loop(port, 20000, 3200, &t);
	RT_CHECK(t.n == 3200, "cleared: %u of 3200", t.n);
	RT_CHECK(roce_impair_clear(im, 4) == -EINVAL, "bad dirs");
	spec.dirs = 0;
	RT_CHECK(roce_impair_set(im, &spec) == -EINVAL, "no direction");
	roce_impair_destroy(im);
	ring_port_close(port);
	free(t.seq);
	free(r.seq);
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	pool = rt_pool(16384, 2048);
	RT_RUN(test_parse_good);
	RT_RUN(test_parse_bad);
	RT_RUN(test_reproducible);
	RT_RUN(test_streams_independent);
	RT_RUN(test_rates);
	RT_RUN(test_ge_bursts);
	RT_RUN(test_reorder_depth);
	RT_RUN(test_reorder_timeout);
	RT_RUN(test_delay);
	RT_RUN(test_rate);
	RT_RUN(test_ecn);
	RT_RUN(test_ecn_rate);
	RT_RUN(test_ethdev);
	RT_RUN(test_tx_stage);
	RT_RUN(test_tx_retry);
	RT_RUN(test_txq_policies);
	RT_RUN(test_tx_poll);
	RT_RUN(test_tx_destroy);
	RT_CHECK(rte_mempool_in_use_count(pool) == 0, "%u mbufs leaked",
			rte_mempool_in_use_count(pool));
	return rt_report("impair");
}
