/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drivers/impair's bottleneck stage on a virtual clock (ns): the spec keys and their
 * canonical form, the drain rate (every departure against an ideal queue computed here),
 * deficit round robin between priorities, RED's marking and dropping curves measured depth
 * by depth against kmin/kmax/pmax, tail drop and the lossless headroom, XOFF/XON hysteresis
 * with the PFC frames' bytes and times (pause, refreshes at half the pause time, resume), the
 * depth samples, and the PFC builder and parser (every rejection reason).
 *
 * With "--frames OUT.pcap OUT.jsonl" it only writes the PFC frames a bottleneck makes, and
 * what each must decode to, for test/builders/check_pfc.py (tshark and scapy).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "roce_impair.h"
#include "roce_pcapfile.h"
#include "roce_pfc.h"
#include "roce_test.h"

#define HZ 1000000000ull          /* the virtual clock counts nanoseconds */
#define BURST 32
#define SEQ_OFF 46                /* the test's sequence number, in the UDP payload */

static struct rte_mempool *pool;
static const uint8_t src_mac[6] = { 0x02, 0x00, 0x00, 0xbe, 0xef, 0x01 };

/* ---- frames: Ethernet [802.1Q] IPv4 UDP, DSCP/ECN and a sequence number ---- */

static struct rte_mbuf *
frame(uint32_t seq, uint16_t len, int pcp, uint8_t dscp, uint8_t ecn)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint32_t l3 = pcp >= 0 ? 18 : 14;
	struct rte_ipv4_hdr *ip;
	uint8_t *p;

	if (m == NULL || (p = (uint8_t *)rte_pktmbuf_append(m, len)) == NULL) {
		fprintf(stderr, "pool empty\n");
		exit(2);
	}
	memset(p, 0, len);
	memcpy(p, (const uint8_t[6]){ 0x02, 0, 0, 0, 0, 2 }, 6);
	memcpy(p + 6, src_mac, 6);
	if (pcp >= 0) {
		p[12] = 0x81;
		p[14] = (uint8_t)(pcp << 5);
		p[15] = 1;
		p[16] = 0x08;
	} else {
		p[12] = 0x08;
	}
	ip = (struct rte_ipv4_hdr *)(p + l3);
	ip->version_ihl = 0x45;
	ip->type_of_service = (uint8_t)(dscp << 2 | ecn);
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - l3));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	memcpy(p + SEQ_OFF, &seq, 4);
	return m;
}

static uint32_t
seq_of(const struct rte_mbuf *m)
{
	uint32_t s;

	memcpy(&s, rte_pktmbuf_mtod(m, const uint8_t *) + SEQ_OFF, 4);
	return s;
}

/* The ECN bits of a frame() (tagged or not). */
static unsigned int
ecn_of(const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

	return p[(p[12] == 0x81 ? 18 : 14) + 1] & 3;
}

static struct roce_impair_stage *
stage(const char *spec_str)
{
	struct roce_impair_spec spec;
	struct roce_impair_stage *st;
	char err[160];
	int ret = roce_impair_parse(spec_str, &spec, err, sizeof(err));

	RT_CHECK(ret == 0, "parse '%s': %s", spec_str, err);
	st = roce_impair_stage_create(&spec, ROCE_IMPAIR_RX, 0, HZ);
	if (st == NULL) {
		fprintf(stderr, "cannot create a stage\n");
		exit(2);
	}
	roce_impair_stage_set_link(st, src_mac, 100000);
	return st;
}

static void
counters(const struct roce_impair_stage *st, uint64_t c[ROCE_IMPAIR_CNT_NUM])
{
	memset(c, 0, sizeof(uint64_t) * ROCE_IMPAIR_CNT_NUM);
	roce_impair_stage_counters(st, c);
}

/* Free what a burst handed on; @return how many. */
static uint16_t
sink(struct rte_mbuf **pkts, uint16_t n)
{
	rte_pktmbuf_free_bulk(pkts, n);
	return n;
}

/* Let everything out (far in the future) and free it; also the PFC frames. */
static void
drain_all(struct roce_impair_stage *st, uint64_t *now)
{
	struct rte_mbuf *pkts[BURST];
	unsigned int i;

	for (i = 0; i < 100000 && roce_impair_stage_held(st) != 0; i++) {
		*now += 1000000000ull;
		sink(pkts, roce_impair_stage_burst(st, pkts, 0, BURST, *now));
		sink(pkts, roce_impair_stage_ctrl(st, pkts, BURST));
	}
}

/* ---- the spec ---- */

static void
test_parse(void)
{
	static const struct {
		const char *in;
		const char *canonical;
	} good[] = {
		{ "bneck=10g:256k,red=20k:200k:0.01,lossless=128k:64k:0x08:65535",
			"bneck=10g:256k,red=20k:200k:0.01,lossless=128k:64k:0x08:65535" },
		{ "bneck=10g", "bneck=10g:256k" },
		{ "bneck=25g:1m,red=1000:5000:10%", "bneck=25g:1m,red=1000:5000:0.1" },
		{ "bneck=1g:64k,red=16k:16k:0", "bneck=1g:64k,red=16k:16k:0" },
		{ "bneck=40g:2m,lossless=100k:50k", "bneck=40g:2m,lossless=100k:50k:0xff:65535" },
		{ "bneck=100m:100000,lossless=30000:0:24:1000",
			"bneck=100m:100000,lossless=30000:0:0x18:1000" },
		{ "seed=3,ecn=0.1,bneck=2500m:512k", "seed=3,ecn=0.1,bneck=2500m:512k" },
		{ "bneck=1g,red=20k:200k:0.01:deq", "bneck=1g:256k,red=20k:200k:0.01:deq" },
		{ "bneck=1g,red=20k:200k:0.01:enq", "bneck=1g:256k,red=20k:200k:0.01" },
		{ "bneck_to=10.0.0.2,bneck=1g", "bneck=1g:256k,bneck_to=10.0.0.2" },
		{ "bneck=1g,bneck_to=10.0.0.2/32", "bneck=1g:256k,bneck_to=10.0.0.2" },
		{ "bneck=1g,bneck_to=10.1.0.0/16", "bneck=1g:256k,bneck_to=10.1.0.0/16" },
		{ "bneck=1g,bneck_to=FD00:0::2", "bneck=1g:256k,bneck_to=fd00::2" },
		{ "bneck=1g,bneck_to=fd00::/8", "bneck=1g:256k,bneck_to=fd00::/8" },
		{ "bneck=1g,bneck_to=0.0.0.0/0", "bneck=1g:256k,bneck_to=0.0.0.0/0" },
	};
	static const char *const bad[] = {
		"bneck=", "bneck=10q", "bneck=999", "bneck=10g:512", "bneck=10g:65m",
		"bneck=10g:1m:3", "red=1k:2k:0.1", "lossless=2k:1k", "bneck=1g,red=2k:1k:0.1",
		"bneck=1g,red=1k:2k:0.1:front", "bneck=1g,red=1k:2k:0.1:deq:deq",
		"bneck=1g,red=1k:2k", "bneck=1g,red=1k:2k:1.5", "bneck=1g,red=1k:0:0.1",
		"bneck=1g:64k,red=1k:65k:0.1", "bneck=1g,lossless=1k:1k", "bneck=1g,lossless=1k",
		"bneck=1g,lossless=1k:2k", "bneck=1g:64k,lossless=64k:1k",
		"bneck=1g,lossless=2k:1k:0", "bneck=1g,lossless=2k:1k:256",
		"bneck=1g,lossless=2k:1k:1k", "bneck=1g,lossless=2k:1k:1:0",
		"bneck=1g,lossless=2k:1k:1:65536", "bneck=1g,bneck=2g",
		"bneck_to=10.0.0.2", "bneck=1g,bneck_to=", "bneck=1g,bneck_to=10.0.0.300",
		"bneck=1g,bneck_to=10.0.0.2/33", "bneck=1g,bneck_to=fd00::/129",
		"bneck=1g,bneck_to=/8", "bneck=1g,bneck_to=10.0.0.2/", "bneck=1g,bneck_to=10.0.0.2/x",
		"bneck=1g,bneck_to=10.0.0.2/+8", "bneck=1g,bneck_to=10.0.0.2:1",
		"bneck=1g,bneck_to=10.0.0.2,bneck_to=10.0.0.3",
	};
	struct roce_impair_spec s, s2;
	char err[200], out[ROCE_IMPAIR_SPEC_MAX], out2[ROCE_IMPAIR_SPEC_MAX];
	unsigned int i;

	for (i = 0; i < RTE_DIM(good); i++) {
		int ret = roce_impair_parse(good[i].in, &s, err, sizeof(err));

		RT_CHECK(ret == 0, "'%s': %s", good[i].in, err);
		RT_CHECK(roce_impair_spec_active(&s), "'%s' active", good[i].in);
		RT_CHECK(roce_impair_format(&s, 0, out, sizeof(out)) > 0 &&
				strcmp(out, good[i].canonical) == 0, "'%s' -> '%s'", good[i].in,
				out);
		/* Round trip: the canonical form parses to itself. */
		RT_CHECK(roce_impair_parse(out, &s2, err, sizeof(err)) == 0 &&
				roce_impair_format(&s2, 0, out2, sizeof(out2)) > 0 &&
				strcmp(out, out2) == 0, "'%s' round trip: '%s'", out, out2);
	}
	roce_impair_parse(good[0].in, &s, err, sizeof(err));
	RT_CHECK(s.bneck_bps == 10000000000ull && s.bneck_buffer == 262144 &&
			s.red_kmin == 20480 && s.red_kmax == 204800 && s.red_pmax == 0.01 &&
			s.pfc_xoff == 131072 && s.pfc_xon == 65536 && s.pfc_prios == 8 &&
			s.pfc_quanta == 65535, "fields");
	for (i = 0; i < RTE_DIM(bad); i++) {
		err[0] = '\0';
		RT_CHECK(roce_impair_parse(bad[i], &s, err, sizeof(err)) == -EINVAL &&
				err[0] != '\0', "'%s' refused with a message", bad[i]);
	}
	roce_impair_parse("red=1k:2k:0.1", &s, err, sizeof(err));
	RT_CHECK(strstr(err, "red") && strstr(err, "bneck="), "names what is missing: %s", err);
	roce_impair_parse("bneck=1g:64k,lossless=64k:1k", &s, err, sizeof(err));
	RT_CHECK(strstr(err, "headroom") != NULL, "xoff at the buffer: %s", err);
	roce_impair_parse("bneck_to=10.0.0.2", &s, err, sizeof(err));
	RT_CHECK(strstr(err, "bneck_to") && strstr(err, "bneck="), "bneck_to alone: %s", err);
}

/* ---- the drain rate ---- */

/*
 * Frames of varying sizes arrive in bursts faster than the rate for a while; each must leave
 * at the time an ideal queue gives (departure = max(arrival, previous) + wire length / rate),
 * to the polling step, and in order.
 */
static void
drain_rate(const char *spec, double bps, uint32_t n, uint64_t gap_ns, uint64_t step)
{
	struct roce_impair_stage *st = stage(spec);
	double *ideal = calloc(n, sizeof(double)), prev = 0, worst = 0;
	struct rte_mbuf *pkts[BURST];
	uint64_t now = 1000, next_arr = 1000, c[ROCE_IMPAIR_CNT_NUM];
	uint32_t sent = 0, got = 0, bad_order = 0, early = 0, late = 0;
	uint64_t bytes = 0;

	while (got < n && now < 100ull * HZ) {
		uint16_t k = 0, i;

		/* Bursts of up to 8 frames every gap_ns. */
		if (sent < n && now >= next_arr) {
			for (; k < 8 && sent < n; k++, sent++) {
				uint16_t len = (uint16_t)(64 + (sent * 577) % 1437);
				double tx = (len + ROCE_IMPAIR_WIRE_OVERHEAD) * 8.0 * HZ / bps;

				prev = RTE_MAX(prev, (double)now) + tx;
				ideal[sent] = prev;
				bytes += len;
				pkts[k] = frame(sent, len, -1, 0, 0);
			}
			next_arr += gap_ns;
		}
		k = roce_impair_stage_burst(st, pkts, k, BURST, now);
		for (i = 0; i < k; i++, got++) {
			uint32_t s = seq_of(pkts[i]);
			double d;

			if (s != got) {
				bad_order++;
				continue;
			}
			d = (double)now - ideal[s];
			/* Out at the first poll at or after its departure, a tick of rounding. */
			if (d < -1)
				early++;
			if (d > (double)step + 1)
				late++;
			worst = RTE_MAX(worst, fabs(d));
		}
		sink(pkts, k);
		now += step;
	}
	counters(st, c);
	printf("  %s: %u frames, the last out at %.3f ms (ideal %.3f), worst %.1f ns off\n",
			spec, got, now / 1e6, ideal[n - 1] / 1e6, worst);
	RT_CHECK(got == n && bad_order == 0, "%u of %u out, %u out of order", got, n, bad_order);
	RT_CHECK(early == 0 && late == 0, "%u early, %u late (step %" PRIu64 " ns)", early, late,
			step);
	RT_CHECK(c[ROCE_IMPAIR_C_BNECK_OUT] == n && c[ROCE_IMPAIR_C_BNECK_OUT_BYTES] == bytes &&
			c[ROCE_IMPAIR_C_TAIL_DROPPED] == 0, "counted out %" PRIu64 " %" PRIu64,
			c[ROCE_IMPAIR_C_BNECK_OUT], c[ROCE_IMPAIR_C_BNECK_OUT_BYTES]);
	free(ideal);
	roce_impair_stage_free(st);
}

static void
test_drain_rate(void)
{
	/* 10 Gb/s offered about 2x; 100 Mb/s for a second of virtual time; 1 Tb/s. */
	drain_rate("bneck=10g:64m", 10e9, 4000, 3000, 50);
	drain_rate("bneck=100m:16m", 100e6, 12000, 400000, 1000);
	drain_rate("bneck=1t:64m", 1e12, 4000, 40, 1);
}

/* Two priorities backlogged: DRR shares the wire by bytes, within a quantum. */
static void
test_drr(void)
{
	struct roce_impair_stage *st = stage("bneck=1g:1m");
	struct rte_mbuf *pkts[BURST];
	uint64_t now = 1000, b[8] = {0};
	uint32_t i, n = 0;
	int64_t worst = 0;

	for (i = 0; i < 400; i++) {
		/* Priority 1 sends 1000-byte frames, priority 2 frames of 300 bytes. */
		pkts[0] = frame(i, 1000, 1, 0, 0);
		pkts[1] = frame(10000 + i, 300, 2, 0, 0);
		pkts[2] = frame(20000 + i, 300, 2, 0, 0);
		sink(pkts, roce_impair_stage_burst(st, pkts, 3, BURST, now));
	}
	while (n < 1200) {
		uint16_t k = roce_impair_stage_burst(st, pkts, 0, BURST, now), j;

		for (j = 0; j < k; j++, n++) {
			const uint8_t *p = rte_pktmbuf_mtod(pkts[j], const uint8_t *);

			b[p[14] >> 5] += pkts[j]->pkt_len;
			/* While both are backlogged. */
			if (b[1] < 380000 && b[2] < 220000)
				worst = RTE_MAX(worst, llabs((int64_t)b[1] - (int64_t)b[2]));
		}
		sink(pkts, k);
		now += 1000;
	}
	printf("  DRR: bytes of two backlogged priorities differ by %" PRId64 " at most\n",
			worst);
	RT_CHECK(worst <= 16384 + 1000, "DRR share: %" PRId64, worst);
	roce_impair_stage_free(st);
}

/* ---- RED ---- */

static double
red_p(double q, double kmin, double kmax, double pmax)
{
	if (q >= kmax)
		return 1;
	if (q <= kmin)
		return 0;
	return pmax * (q - kmin) / (kmax - kmin);
}

/*
 * Fill an empty queue with @per_fill 1000-byte frames at one instant, many times over; each
 * frame finds the depth of the frames accepted before it. Marks (ECT) or drops (Not-ECT) are
 * counted per depth and compared with the curve, within 5 standard deviations.
 */
static void
red_curve(uint8_t ecn, const char *spec, int lossless)
{
	enum { PER_FILL = 400, FILLS = 3000, STEP = 1000 };
	const double kmin = 100 * 1024, kmax = 300 * 1024, pmax = 0.2;
	static uint32_t seen[PER_FILL], hit[PER_FILL];
	struct roce_impair_stage *st = stage(spec);
	struct rte_mbuf *pkts[PER_FILL];
	uint64_t now = 1000, c[ROCE_IMPAIR_CNT_NUM];
	unsigned int f, i, bad = 0, outside_zero = 0, outside_one = 0;
	double worst = 0, sum_hit = 0, sum_p = 0, sum_var = 0;

	memset(seen, 0, sizeof(seen));
	memset(hit, 0, sizeof(hit));
	for (f = 0; f < FILLS; f++) {
		uint8_t accepted[PER_FILL] = {0};
		uint32_t got = 0, depth_idx;

		for (i = 0; i < PER_FILL; i++)
			pkts[i] = frame(i, STEP, -1, 26, ecn);
		for (i = 0; i < PER_FILL; i += BURST)
			roce_impair_stage_burst(st, pkts + i, (uint16_t)RTE_MIN(BURST, (int)(PER_FILL - i)),
					0, now);
		/* Everything out, far later; what came out was accepted (and maybe marked). */
		while (roce_impair_stage_held(st) != 0) {
			uint16_t k, j;

			now += 1000000000ull;
			k = roce_impair_stage_burst(st, pkts, 0, BURST, now);
			for (j = 0; j < k; j++) {
				uint32_t s = seq_of(pkts[j]);

				accepted[s] = (uint8_t)(ecn == 0 ? 1 : 1 + (ecn_of(pkts[j]) == 3));
				got++;
			}
			sink(pkts, k);
		}
		/* Frame i found the depth of the frames accepted before it. */
		for (i = 0, depth_idx = 0; i < PER_FILL; i++) {
			seen[depth_idx]++;
			if (ecn != 0 ? accepted[i] == 2 : accepted[i] == 0)
				hit[depth_idx]++;
			if (accepted[i])
				depth_idx++;
		}
		now += 1000000000ull;
	}
	for (i = 0; i < PER_FILL; i++) {
		double q = (double)i * STEP, p = red_p(q, kmin, kmax, pmax), m, sd;

		if (seen[i] == 0)
			continue;
		if (lossless) {
			/* Not-ECT, lossless: never dropped, whatever the depth. */
			bad += hit[i] != 0;
			continue;
		}
		m = (double)hit[i] / seen[i];
		sd = sqrt(p * (1 - p) / seen[i]);
		if (p == 0)
			outside_zero += hit[i] != 0;
		else if (p == 1)
			outside_one += hit[i] != seen[i];
		else if (fabs(m - p) > 5 * sd + 1e-9)
			bad++;
		if (p > 0 && p < 1) {
			worst = RTE_MAX(worst, fabs(m - p) / sd);
			sum_hit += hit[i];
			sum_p += p * seen[i];
			sum_var += p * (1 - p) * seen[i];
		}
	}
	counters(st, c);
	printf("  RED %s%s: worst %.2f sd off the curve; between kmin and kmax %.0f hit, %.0f "
			"expected; %" PRIu64 " marked, %" PRIu64 " dropped\n", ecn ? "ECT(0)" :
			"Not-ECT", lossless ? " lossless" : "", worst, sum_hit, sum_p,
			c[ROCE_IMPAIR_C_RED_MARKED], c[ROCE_IMPAIR_C_RED_DROPPED]);
	/* All depths together: a slope off by a percent or two shows here. */
	RT_CHECK(lossless || fabs(sum_hit - sum_p) <= 5 * sqrt(sum_var), "%s: %.0f hit, %.0f "
			"expected (sd %.0f)", spec, sum_hit, sum_p, sqrt(sum_var));
	RT_CHECK(bad == 0 && outside_zero == 0 && outside_one == 0,
			"%s: %u depths off the curve, %u below kmin hit, %u above kmax missed",
			spec, bad, outside_zero, outside_one);
	if (ecn != 0)
		RT_CHECK(c[ROCE_IMPAIR_C_RED_MARKED] > 0 && c[ROCE_IMPAIR_C_RED_DROPPED] == 0,
				"ECT marked, never dropped");
	else if (lossless)
		RT_CHECK(c[ROCE_IMPAIR_C_RED_DROPPED] == 0 && c[ROCE_IMPAIR_C_RED_MARKED] == 0,
				"lossless Not-ECT: neither marked nor dropped");
	else
		RT_CHECK(c[ROCE_IMPAIR_C_RED_DROPPED] > 0 && c[ROCE_IMPAIR_C_RED_MARKED] == 0,
				"Not-ECT dropped, never marked");
	roce_impair_stage_free(st);
}

static void
test_red(void)
{
	red_curve(2, "seed=5,bneck=1g:1m,red=100k:300k:0.2", 0);
	red_curve(0, "seed=6,bneck=1g:1m,red=100k:300k:0.2", 0);
	red_curve(0, "seed=7,bneck=1g:1m,red=100k:300k:0.2,lossless=900k:800k", 1);
}

/* CE stays CE; ECT(1) is marked too. */
static void
test_red_codepoints(void)
{
	struct roce_impair_stage *st = stage("bneck=1g:1m,red=0:1:0");
	struct rte_mbuf *pkts[4];
	uint64_t now = 1000, c[ROCE_IMPAIR_CNT_NUM];
	uint16_t k;

	/* kmax 1 byte: from the second frame on, everything is at or above kmax. */
	pkts[0] = frame(0, 200, -1, 0, 2);
	pkts[1] = frame(1, 200, -1, 0, 1);
	pkts[2] = frame(2, 200, -1, 0, 3);
	pkts[3] = frame(3, 200, -1, 0, 2);
	roce_impair_stage_burst(st, pkts, 4, 0, now);
	now += 1000000;
	k = roce_impair_stage_burst(st, pkts, 0, 4, now);
	counters(st, c);
	RT_CHECK(k == 4 && ecn_of(pkts[0]) == 2 && ecn_of(pkts[1]) == 3 && ecn_of(pkts[2]) == 3 &&
			ecn_of(pkts[3]) == 3 && c[ROCE_IMPAIR_C_RED_MARKED] == 2,
			"codepoints: %u %u %u %u, %" PRIu64 " marked", ecn_of(pkts[0]),
			ecn_of(pkts[1]), ecn_of(pkts[2]), ecn_of(pkts[3]),
			c[ROCE_IMPAIR_C_RED_MARKED]);
	sink(pkts, k);
	roce_impair_stage_free(st);
}

/*
 * Marking as frames arrive or as they leave: six ECT frames queued at once behind a step at
 * 2500 bytes. Arriving, the first three find less and go unmarked; leaving, the first three
 * leave more than that behind them and are marked.
 */
static void
test_red_dequeue(void)
{
	static const char *const specs[] = { "bneck=1g:1m,red=2500:2500:1",
		"bneck=1g:1m,red=2500:2500:1:deq" };
	static const unsigned int want[2][6] = { { 2, 2, 2, 3, 3, 3 }, { 3, 3, 3, 2, 2, 2 } };
	unsigned int v, i;

	for (v = 0; v < RTE_DIM(specs); v++) {
		struct roce_impair_stage *st = stage(specs[v]);
		struct rte_mbuf *pkts[6];
		uint64_t now = 1000, c[ROCE_IMPAIR_CNT_NUM];
		unsigned int bad = 0;
		uint16_t k;

		for (i = 0; i < 6; i++)
			pkts[i] = frame(i, 1000, -1, 0, 2);
		roce_impair_stage_burst(st, pkts, 6, 0, now);
		k = roce_impair_stage_burst(st, pkts, 0, 6, now + 1000000);
		counters(st, c);
		for (i = 0; i < k; i++)
			bad += ecn_of(pkts[i]) != want[v][seq_of(pkts[i])];
		RT_CHECK(k == 6 && bad == 0 && c[ROCE_IMPAIR_C_RED_MARKED] == 3,
				"%s: %u frames as expected of %u, %" PRIu64 " marked", specs[v],
				k - bad, k, c[ROCE_IMPAIR_C_RED_MARKED]);
		sink(pkts, k);
		roce_impair_stage_free(st);
	}
}

/* ---- tail drop ---- */

static void
test_tail_drop(void)
{
	static const char *const specs[] = { "bneck=1g:64k", "bneck=1g:64k,lossless=32k:16k" };
	unsigned int v;

	for (v = 0; v < RTE_DIM(specs); v++) {
		struct roce_impair_stage *st = stage(specs[v]);
		struct rte_mbuf *pkts[BURST];
		uint64_t now = 1000, c[ROCE_IMPAIR_CNT_NUM];
		uint32_t i, out = 0, last = 0;

		/* 100 frames of 1000 bytes at once: 65 fit 65536 bytes. */
		for (i = 0; i < 100; i++) {
			pkts[0] = frame(i, 1000, -1, 0, 0);
			roce_impair_stage_burst(st, pkts, 1, 0, now);
		}
		/* A frame of another priority shares the buffer: dropped too. */
		pkts[0] = frame(100, 1000, 5, 0, 0);
		roce_impair_stage_burst(st, pkts, 1, 0, now);
		counters(st, c);
		RT_CHECK(c[ROCE_IMPAIR_C_BNECK_IN] == 65 && roce_impair_stage_held(st) >= 65,
				"%s: %" PRIu64 " queued", specs[v], c[ROCE_IMPAIR_C_BNECK_IN]);
		RT_CHECK(v == 0 ? c[ROCE_IMPAIR_C_TAIL_DROPPED] == 36 &&
				c[ROCE_IMPAIR_C_HEADROOM_DROPPED] == 0 :
				c[ROCE_IMPAIR_C_HEADROOM_DROPPED] == 36 &&
				c[ROCE_IMPAIR_C_TAIL_DROPPED] == 0,
				"%s: tail %" PRIu64 ", headroom %" PRIu64, specs[v],
				c[ROCE_IMPAIR_C_TAIL_DROPPED], c[ROCE_IMPAIR_C_HEADROOM_DROPPED]);
		/* Once one frame left, one more fits. */
		now += 8200;
		out += sink(pkts, roce_impair_stage_burst(st, pkts, 0, BURST, now));
		pkts[0] = frame(101, 1000, -1, 0, 0);
		roce_impair_stage_burst(st, pkts, 1, 0, now);
		counters(st, c);
		RT_CHECK(out == 1 && c[ROCE_IMPAIR_C_BNECK_IN] == 66, "room again: %u out, %" PRIu64
				" in", out, c[ROCE_IMPAIR_C_BNECK_IN]);
		/* The first 65 and the last leave, in order. */
		while (roce_impair_stage_held(st) != 0 && now < HZ) {
			uint16_t k, j;

			now += 10000;
			k = roce_impair_stage_burst(st, pkts, 0, BURST, now);
			for (j = 0; j < k; j++)
				last = seq_of(pkts[j]);
			out += sink(pkts, k);
			sink(pkts, roce_impair_stage_ctrl(st, pkts, BURST));
		}
		RT_CHECK(out == 66 && last == 101, "out %u, last %u", out, last);
		roce_impair_stage_free(st);
	}
}

/* ---- PFC ---- */

/* A frame as roce_pfc_build() must lay it out, from the standard. */
static void
pfc_expect(uint8_t *f, uint8_t vector, const uint16_t q[8])
{
	unsigned int i;

	memset(f, 0, ROCE_PFC_FRAME_LEN);
	memcpy(f, (const uint8_t[6]){ 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 }, 6);
	memcpy(f + 6, src_mac, 6);
	f[12] = 0x88;
	f[13] = 0x08;
	f[14] = 0x01;
	f[15] = 0x01;
	f[17] = vector;
	for (i = 0; i < 8; i++) {
		f[18 + 2 * i] = (uint8_t)(q[i] >> 8);
		f[19 + 2 * i] = (uint8_t)q[i];
	}
}

/* The PFC frames a stage made by @now, checked against (vector, per-priority times). */
struct pfc_seen {
	uint64_t t[64];
	uint8_t vector[64];
	uint16_t q[64][8];
	unsigned int n;
	unsigned int bad_bytes;
};

static void
pfc_collect(struct roce_impair_stage *st, uint64_t now, struct pfc_seen *ps)
{
	struct rte_mbuf *f[ROCE_IMPAIR_CTRL_MAX];
	uint16_t k = roce_impair_stage_ctrl(st, f, ROCE_IMPAIR_CTRL_MAX), i;

	for (i = 0; i < k; i++) {
		struct roce_pfc_frame pf;
		uint8_t want[ROCE_PFC_FRAME_LEN];
		const uint8_t *b = rte_pktmbuf_mtod(f[i], const uint8_t *);

		if (f[i]->pkt_len != ROCE_PFC_FRAME_LEN ||
				roce_pfc_parse(b, f[i]->pkt_len, &pf) != ROCE_PFC_OK) {
			ps->bad_bytes++;
			continue;
		}
		pfc_expect(want, pf.vector, pf.quanta);
		if (memcmp(want, b, ROCE_PFC_FRAME_LEN) != 0)
			ps->bad_bytes++;
		if (ps->n < RTE_DIM(ps->t)) {
			ps->t[ps->n] = now;
			ps->vector[ps->n] = pf.vector;
			memcpy(ps->q[ps->n], pf.quanta, sizeof(pf.quanta));
			ps->n++;
		}
	}
	rte_pktmbuf_free_bulk(f, k);
}

static void
push(struct roce_impair_stage *st, uint32_t *seq, unsigned int n, uint16_t len, int pcp,
		uint64_t now)
{
	struct rte_mbuf *pkts[1];
	unsigned int i;

	for (i = 0; i < n; i++) {
		pkts[0] = frame((*seq)++, len, pcp, 0, 0);
		roce_impair_stage_burst(st, pkts, 1, 0, now);
	}
}

/*
 * Priority 3 lossless (XOFF 21000 bytes, XON 10000) drained at 100 Mb/s: a frame of 1000 bytes
 * leaves every 81.92 us. The pause comes with the frame that reaches XOFF, refreshes every
 * half pause time (65535 quanta at 100 Gb/s: 335.54 us, so 167.77 us) while above XON, the
 * resume with the departure that brings the queue to XON; between XON and XOFF nothing
 * changes (hysteresis). Priority 5 is lossy: its depth pauses nothing.
 */
static void
test_pfc_hysteresis(void)
{
	struct roce_impair_stage *st = stage("bneck=100m:256k,lossless=21000:10000:0x08:65535");
	const double dep_ns = (1000 + ROCE_IMPAIR_WIRE_OVERHEAD) * 8 / 0.1;  /* 81920 */
	const uint64_t refresh = roce_pfc_quanta_ns(65535, 100000) / 2;
	const uint16_t pause3[8] = { [3] = 65535 }, zero[8] = {0};
	struct pfc_seen ps = { .n = 0 };
	struct rte_mbuf *pkts[BURST];
	uint64_t t0 = 1000000, now = t0, c[ROCE_IMPAIR_CNT_NUM];
	uint32_t seq = 0;
	unsigned int i, refreshes = 0, resumes = 0;
	uint64_t resume_at = 0;

	/* Lossy priority 5 above XOFF: nothing. */
	push(st, &seq, 30, 1000, 5, now);
	pfc_collect(st, now, &ps);
	RT_CHECK(ps.n == 0, "a lossy priority pauses nothing: %u frames", ps.n);
	drain_all(st, &now);
	ps.n = 0;
	t0 = now;
	/* 20 frames: 20000 bytes, below XOFF. */
	push(st, &seq, 20, 1000, 3, now);
	pfc_collect(st, now, &ps);
	RT_CHECK(ps.n == 0, "below XOFF: %u frames", ps.n);
	/* The 21st reaches XOFF. */
	push(st, &seq, 1, 1000, 3, now);
	pfc_collect(st, now, &ps);
	RT_CHECK(ps.n == 1 && ps.vector[0] == 0x08 && memcmp(ps.q[0], pause3, 16) == 0 &&
			ps.bad_bytes == 0, "XOFF: %u frames, vector 0x%02x, bytes bad %u", ps.n,
			ps.n ? ps.vector[0] : 0, ps.bad_bytes);
	/* Drain in 1 us steps with nothing arriving. */
	for (now = t0 + 1000; now < t0 + 2000000; now += 1000) {
		sink(pkts, roce_impair_stage_burst(st, pkts, 0, BURST, now));
		pfc_collect(st, now, &ps);
	}
	for (i = 1; i < ps.n; i++) {
		if (ps.vector[i] == 0x08 && memcmp(ps.q[i], pause3, 16) == 0) {
			/* Each refresh at the first poll a half pause time after the previous. */
			RT_CHECK(ps.t[i] - ps.t[i - 1] >= refresh && ps.t[i] - ps.t[i - 1] <
					refresh + 1000, "refresh %u after %" PRIu64 " ns (%" PRIu64 ")",
					i, ps.t[i] - ps.t[i - 1], refresh);
			RT_CHECK(resumes == 0, "no refresh after the resume");
			refreshes++;
		} else if (ps.vector[i] == 0x08 && memcmp(ps.q[i], zero, 16) == 0) {
			resumes++;
			resume_at = ps.t[i];
		}
	}
	/* 21000 bytes to 10000 (XON: resumed at, not only below): the 11th departure. */
	printf("  PFC: XOFF at 0, %u refreshes, XON at %.2f us (11 departures: %.2f us)\n",
			refreshes, (double)(resume_at - t0) / 1e3, 11 * dep_ns / 1e3);
	RT_CHECK(resumes == 1 && resume_at >= t0 + (uint64_t)(11 * dep_ns) &&
			resume_at < t0 + (uint64_t)(11 * dep_ns) + 1000, "XON at %" PRIu64, resume_at -
			t0);
	RT_CHECK(refreshes == (unsigned int)((11 * dep_ns) / (double)refresh), "%u refreshes",
			refreshes);
	RT_CHECK(ps.bad_bytes == 0, "frame bytes");
	/* Queue empty now; between XON and XOFF again: nothing. */
	ps.n = 0;
	push(st, &seq, 15, 1000, 3, now);
	pfc_collect(st, now, &ps);
	RT_CHECK(ps.n == 0, "below XOFF after a resume: %u", ps.n);
	push(st, &seq, 5, 1000, 3, now);
	pfc_collect(st, now, &ps);
	RT_CHECK(ps.n == 0, "1000 bytes below XOFF: %u", ps.n);
	push(st, &seq, 1, 1000, 3, now);
	pfc_collect(st, now, &ps);
	RT_CHECK(ps.n == 1 && ps.vector[0] == 0x08, "XOFF again");
	drain_all(st, &now);
	counters(st, c);
	RT_CHECK(c[ROCE_IMPAIR_C_PFC_PAUSE_TX] == 1 + refreshes + 1 &&
			c[ROCE_IMPAIR_C_PFC_RESUME_TX] == 2 && c[ROCE_IMPAIR_C_HEADROOM_DROPPED] == 0 &&
			c[ROCE_IMPAIR_C_TAIL_DROPPED] == 0, "counted: %" PRIu64 " pause, %" PRIu64
			" resume", c[ROCE_IMPAIR_C_PFC_PAUSE_TX], c[ROCE_IMPAIR_C_PFC_RESUME_TX]);
	roce_impair_stage_free(st);
}

/* Two lossless priorities: one frame speaks for both; one resumes while the other stays. */
static void
test_pfc_two_prios(void)
{
	struct roce_impair_stage *st = stage("bneck=100m:256k,lossless=8k:4k:0x28:1000");
	const uint16_t both[8] = { [3] = 1000, [5] = 1000 }, only5[8] = { [5] = 1000 };
	struct pfc_seen ps = { .n = 0 };
	struct rte_mbuf *pkts[BURST];
	uint64_t now = 1000000, end;
	uint32_t seq = 0;
	unsigned int i, split = 0;

	/* 1000 quanta at 1 Gb/s: 512 us, refreshed every 256 us. */
	roce_impair_stage_set_link(st, src_mac, 1000);
	push(st, &seq, 9, 1000, 3, now);
	push(st, &seq, 40, 1000, 5, now);
	pfc_collect(st, now, &ps);
	RT_CHECK(ps.n == 2 && ps.vector[0] == 0x08 && ps.vector[1] == 0x28 &&
			memcmp(ps.q[1], both, 16) == 0, "3 then 3+5 paused: %u frames", ps.n);
	for (end = now + 5000000; now < end; now += 1000) {
		sink(pkts, roce_impair_stage_burst(st, pkts, 0, BURST, now));
		pfc_collect(st, now, &ps);
	}
	/* Priority 3 (9 frames) drains first under DRR; 5 stays paused meanwhile. */
	for (i = 2; i < ps.n; i++)
		if (ps.vector[i] == 0x28 && memcmp(ps.q[i], only5, 16) == 0)
			split++;
	RT_CHECK(split == 1, "3 resumed while 5 stays paused: %u", split);
	RT_CHECK(ps.n > 3 && ps.vector[ps.n - 1] == 0x20 && ps.q[ps.n - 1][5] == 0,
			"5 resumed last: vector 0x%02x", ps.n ? ps.vector[ps.n - 1] : 0);
	RT_CHECK(ps.bad_bytes == 0, "frame bytes");
	drain_all(st, &now);
	roce_impair_stage_free(st);
}

/* ---- arrival times: when each frame left the bottleneck ---- */

static void
test_arrival(void)
{
	struct roce_impair_stage *st = stage("bneck=10m:256k,delay=5us");
	struct rte_mbuf *pkts[BURST];
	uint64_t now = 1000, at[2] = { 0, 0 };
	uint16_t k = 0, i;

	pkts[0] = frame(0, 1000, -1, 0, 0);
	pkts[1] = frame(1, 1000, -1, 0, 0);
	RT_CHECK(roce_impair_stage_burst(st, pkts, 2, BURST, now) == 0, "both queued");
	/* Taken late, at once: each says when it left (1024 wire bytes at 10 Mb/s: 819.2 us
	 * each) plus the 5 us delay. */
	k = roce_impair_stage_burst(st, pkts, 0, BURST, now + 5000000);
	for (i = 0; i < k && i < 2; i++)
		RT_CHECK(roce_impair_arrival(pkts[i], &at[i]) == 1, "frame %u stamped", i);
	RT_CHECK(k == 2 && at[0] == now + 819200 + 5000 && at[1] == now + 2 * 819200 + 5000,
			"arrivals %" PRIu64 " and %" PRIu64 " ns", at[0] - now, at[1] - now);
	sink(pkts, k);
	roce_impair_stage_free(st);
}

/* ---- bneck_to: only one destination's frames queue ---- */

static struct rte_mbuf *
frame_to(uint32_t seq, uint16_t len, const char *dst)
{
	struct rte_mbuf *m = frame(seq, len, -1, 0, 0);
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);

	inet_pton(AF_INET, dst, &ip->dst_addr);
	return m;
}

/* An IPv6 frame to @dst (no sequence number: its place is in the IPv6 header). */
static struct rte_mbuf *
frame6_to(uint16_t len, const char *dst)
{
	struct rte_mbuf *m = frame(0, len, -1, 0, 0);
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);

	memset(p + 14, 0, 40);
	p[12] = 0x86;
	p[13] = 0xdd;
	p[14] = 0x60;
	p[20] = IPPROTO_UDP;
	inet_pton(AF_INET6, dst, p + 14 + 24);
	return m;
}

static void
test_bneck_to(void)
{
	/* 10.0.0.128/25 behind the bottleneck; the rest of 10.0.0.0/24 elsewhere. */
	struct roce_impair_stage *st = stage("bneck=10m:256k,bneck_to=10.0.0.128/25");
	static const char *const to[] = { "10.0.0.129", "10.0.0.2", "10.0.0.255", "10.0.0.127",
		"10.0.1.129" };
	static const int queued[] = { 1, 0, 1, 0, 0 };
	struct rte_mbuf *pkts[BURST];
	uint64_t now = 1000, c[ROCE_IMPAIR_CNT_NUM];
	uint32_t seq = 0, out_now = 0, late = 0;
	uint16_t k, i;

	for (i = 0; i < 20; i++, seq++)
		pkts[i] = frame_to(seq, 1000, to[i % RTE_DIM(to)]);
	k = roce_impair_stage_burst(st, pkts, 20, BURST, now);
	/* 1024 bytes take 819 us at 10 Mb/s: the first queued one is not out yet. */
	for (i = 0; i < k; i++)
		out_now += !queued[seq_of(pkts[i]) % RTE_DIM(to)];
	RT_CHECK(k == 12 && out_now == 12, "the 12 to other destinations passed at once: %u "
			"(%u of them)", k, out_now);
	sink(pkts, k);
	for (now += 1000000; now < 20000000 && late < 8; now += 100000) {
		k = roce_impair_stage_burst(st, pkts, 0, BURST, now);
		for (i = 0; i < k; i++)
			late += queued[seq_of(pkts[i]) % RTE_DIM(to)];
		sink(pkts, k);
	}
	counters(st, c);
	RT_CHECK(late == 8 && c[ROCE_IMPAIR_C_BNECK_IN] == 8 &&
			c[ROCE_IMPAIR_C_BNECK_OUT] == 8 && c[ROCE_IMPAIR_C_BNECK_PAST] == 12,
			"8 queued and out at the rate (%u), in %" PRIu64 " out %" PRIu64 " past %"
			PRIu64, late, c[ROCE_IMPAIR_C_BNECK_IN], c[ROCE_IMPAIR_C_BNECK_OUT],
			c[ROCE_IMPAIR_C_BNECK_PAST]);
	RT_CHECK(now > 6500000, "at 10 Mb/s: the 8th left after %.2f ms", now / 1e6);
	drain_all(st, &now);
	roce_impair_stage_free(st);

	/* An IPv6 destination: IPv4 frames go elsewhere. */
	st = stage("bneck=10m:256k,bneck_to=fd00::/8");
	for (i = 0; i < 4; i++)
		pkts[i] = frame_to(i, 1000, "10.0.0.129");
	k = roce_impair_stage_burst(st, pkts, 4, BURST, now);
	counters(st, c);
	RT_CHECK(k == 4 && c[ROCE_IMPAIR_C_BNECK_PAST] == 4 && c[ROCE_IMPAIR_C_BNECK_IN] == 0,
			"another family passes: %u", k);
	sink(pkts, k);
	/* IPv6 frames inside and outside fd00::/8 (fc00::1: the first byte's last bit). */
	pkts[0] = frame6_to(1000, "fd00::2");
	pkts[1] = frame6_to(1000, "fc00::1");
	pkts[2] = frame6_to(1000, "fdff:1::9");
	k = roce_impair_stage_burst(st, pkts, 3, BURST, now);
	counters(st, c);
	RT_CHECK(k == 1 && c[ROCE_IMPAIR_C_BNECK_PAST] == 5 && c[ROCE_IMPAIR_C_BNECK_IN] == 2,
			"IPv6: 2 queued, 1 passed: out %u, past %" PRIu64 ", in %" PRIu64, k,
			c[ROCE_IMPAIR_C_BNECK_PAST], c[ROCE_IMPAIR_C_BNECK_IN]);
	sink(pkts, k);
	drain_all(st, &now);
	roce_impair_stage_free(st);
}

/* ---- depth samples ---- */

static void
test_samples(void)
{
	struct roce_impair_stage *st = stage("bneck=1g:1m");
	struct roce_impair_qstats qs;
	uint64_t now = 1000;
	uint32_t seq = 0;

	roce_impair_stage_queue_stats(st, &qs);
	RT_CHECK(qs.samples == 0 && qs.p99 == 0 && qs.depth == 0, "empty");
	/* 200 frames of 1000 bytes at once: depths 0, 1000, ..., 199000. */
	push(st, &seq, 200, 1000, 4, now);
	roce_impair_stage_queue_stats(st, &qs);
	printf("  samples: %" PRIu64 ", p50 %" PRIu64 ", p99 %" PRIu64 ", max %" PRIu64
			", now %" PRIu64 "\n", qs.samples, qs.p50, qs.p99, qs.max, qs.depth);
	RT_CHECK(qs.samples == 200 && qs.max == 199000 && qs.depth == 200000 &&
			qs.depth_prio[4] == 200000, "samples %" PRIu64 " max %" PRIu64, qs.samples,
			qs.max);
	RT_CHECK(qs.p50 >= 100000 && qs.p50 <= 100000 * 65 / 64, "p50 %" PRIu64, qs.p50);
	RT_CHECK(qs.p99 >= 198000 && qs.p99 <= 199000, "p99 %" PRIu64, qs.p99);
	drain_all(st, &now);
	roce_impair_stage_queue_stats(st, &qs);
	RT_CHECK(qs.depth == 0 && qs.samples == 200, "drained, samples kept");
	roce_impair_stage_free(st);
}

/* ---- the PFC builder and parser ---- */

static void
test_pfc_parse(void)
{
	const uint16_t q[8] = { 1, 0, 0, 0xffff, 0, 7, 0, 0x1234 };
	uint8_t f[80], want[ROCE_PFC_FRAME_LEN];
	struct roce_pfc_frame pf;
	unsigned int i;

	RT_CHECK(roce_pfc_build(f, 59, src_mac, 0x89, q) == 0, "short buffer");
	RT_CHECK(roce_pfc_build(f, sizeof(f), src_mac, 0x89, q) == ROCE_PFC_FRAME_LEN, "built");
	/* Times of priorities not in the vector are sent as 0. */
	pfc_expect(want, 0x89, (const uint16_t[8]){ 1, 0, 0, 0xffff, 0, 0, 0, 0x1234 });
	RT_CHECK(memcmp(f, want, ROCE_PFC_FRAME_LEN) == 0, "bytes as the standard lays them");
	RT_CHECK(roce_pfc_parse(f, ROCE_PFC_FRAME_LEN, &pf) == ROCE_PFC_OK && pf.vector == 0x89 &&
			pf.quanta[3] == 0xffff && pf.quanta[7] == 0x1234 && pf.quanta[5] == 0 &&
			memcmp(pf.src, src_mac, 6) == 0, "parsed");
	RT_CHECK(roce_pfc_parse(f, 64, &pf) == ROCE_PFC_OK, "with the FCS");
	for (i = 0; i <= 80; i++)
		if (i != 60 && i != 64)
			RT_CHECK(roce_pfc_parse(f, i, &pf) == (i < 14 ? ROCE_PFC_NOT_CTRL :
					ROCE_PFC_BAD_LENGTH), "length %u", i);
	f[16] = 0xff;
	RT_CHECK(roce_pfc_parse(f, 60, &pf) == ROCE_PFC_OK && pf.vector == 0x89,
			"reserved octet ignored");
	f[17] = 0;
	RT_CHECK(roce_pfc_parse(f, 60, &pf) == ROCE_PFC_BAD_ZERO_VECTOR, "zero vector");
	f[17] = 1;
	f[15] = 2;
	RT_CHECK(roce_pfc_parse(f, 60, &pf) == ROCE_PFC_BAD_OPCODE, "opcode 0x0102");
	f[14] = 0;
	f[15] = 1;
	RT_CHECK(roce_pfc_parse(f, 60, &pf) == ROCE_PFC_BAD_LINK_PAUSE, "802.3x PAUSE");
	f[14] = 1;
	f[5] = 2;
	RT_CHECK(roce_pfc_parse(f, 60, &pf) == ROCE_PFC_BAD_DST, "another destination");
	f[5] = 1;
	f[13] = 0x09;
	RT_CHECK(roce_pfc_parse(f, 60, &pf) == ROCE_PFC_NOT_CTRL, "not MAC control");
	RT_CHECK(strcmp(roce_pfc_reason_name(ROCE_PFC_BAD_ZERO_VECTOR), "zero_vector") == 0 &&
			roce_pfc_reason_name(ROCE_PFC_OK) == NULL &&
			roce_pfc_reason_name(ROCE_PFC_NOT_CTRL) == NULL, "names");
	RT_CHECK(roce_pfc_quanta_ns(65535, 100000) == 335540 &&
			roce_pfc_quanta_ns(1, 10000) == 52 && roce_pfc_quanta_ns(5, 0) == 0,
			"quanta to ns: %" PRIu64, roce_pfc_quanta_ns(65535, 100000));
}

/* The priority of a frame: PCP, else DSCP through the map, else 0. */
static void
test_prio_of(void)
{
	uint8_t map[64], v6[60] = {0};
	struct rte_mbuf *m;

	roce_pfc_dscp_map_default(map);
	m = frame(0, 100, 6, 0, 0);
	RT_CHECK(roce_pfc_prio_of(rte_pktmbuf_mtod(m, uint8_t *), 100, map) == 6, "PCP");
	rte_pktmbuf_free(m);
	m = frame(0, 100, -1, 26, 2);
	RT_CHECK(roce_pfc_prio_of(rte_pktmbuf_mtod(m, uint8_t *), 100, map) == 3, "DSCP 26");
	RT_CHECK(roce_pfc_prio_of(rte_pktmbuf_mtod(m, uint8_t *), 15, map) == 0, "short");
	rte_pktmbuf_free(m);
	v6[12] = 0x86;
	v6[13] = 0xdd;
	v6[14] = 0x6c;        /* traffic class 0xc0 >> 2: DSCP 48 */
	v6[15] = 0x00;
	RT_CHECK(roce_pfc_prio_of(v6, sizeof(v6), map) == 6, "IPv6 DSCP 48");
	v6[12] = 0x08;
	v6[13] = 0x06;
	RT_CHECK(roce_pfc_prio_of(v6, sizeof(v6), map) == 0, "ARP");
}

/* ---- frames for tshark and scapy ---- */

static int
write_frames(const char *pcap_path, const char *json_path)
{
	static const struct {
		uint8_t vector;
		uint16_t q[8];
	} direct[] = {
		{ 0x08, { [3] = 65535 } }, { 0x08, { 0 } }, { 0xff, { 1, 2, 3, 4, 5, 6, 7, 8 } },
		{ 0x81, { [0] = 0x1234, [7] = 0xfffe } }, { 0x28, { [3] = 0, [5] = 1000 } },
	};
	struct roce_impair_stage *st = stage("bneck=100m:256k,lossless=8k:4k:0x28:1000");
	struct roce_pcap pc;
	struct rte_mbuf *pkts[BURST];
	uint64_t now = 1000000, end;
	uint32_t seq = 0;
	unsigned int i, j, n = 0;
	FILE *js = fopen(json_path, "w");
	uint8_t buf[ROCE_PFC_FRAME_LEN];

	roce_impair_stage_set_link(st, src_mac, 1000);
	if (js == NULL || roce_pcap_create(&pc, pcap_path) != 0) {
		fprintf(stderr, "cannot write %s / %s\n", pcap_path, json_path);
		return 2;
	}
	for (i = 0; i < RTE_DIM(direct); i++) {
		roce_pfc_build(buf, sizeof(buf), src_mac, direct[i].vector, direct[i].q);
		roce_pcap_write(&pc, buf, sizeof(buf), n++ * 1000);
		fprintf(js, "{\"vector\": %u, \"quanta\": [", direct[i].vector);
		for (j = 0; j < 8; j++)
			fprintf(js, "%s%u", j ? ", " : "", direct[i].vector & (1u << j) ?
					direct[i].q[j] : 0);
		fprintf(js, "]}\n");
	}
	/* What a bottleneck makes: pause 3, pause 3+5, refreshes, resume 3, resume 5. */
	push(st, &seq, 9, 1000, 3, now);
	push(st, &seq, 40, 1000, 5, now);
	for (end = now + 5000000; now < end; now += 1000) {
		struct rte_mbuf *f[ROCE_IMPAIR_CTRL_MAX];
		uint16_t k;

		sink(pkts, roce_impair_stage_burst(st, pkts, 0, BURST, now));
		k = roce_impair_stage_ctrl(st, f, ROCE_IMPAIR_CTRL_MAX);
		for (i = 0; i < k; i++) {
			struct roce_pfc_frame pf;
			const uint8_t *b = rte_pktmbuf_mtod(f[i], const uint8_t *);

			roce_pfc_parse(b, f[i]->pkt_len, &pf);
			roce_pcap_write(&pc, b, f[i]->pkt_len, n++ * 1000);
			fprintf(js, "{\"vector\": %u, \"quanta\": [", pf.vector);
			for (j = 0; j < 8; j++)
				fprintf(js, "%s%u", j ? ", " : "", pf.quanta[j]);
			fprintf(js, "]}\n");
		}
		rte_pktmbuf_free_bulk(f, k);
	}
	drain_all(st, &now);
	roce_impair_stage_free(st);
	roce_pcap_close(&pc);
	fclose(js);
	printf("%u PFC frames written\n", n);
	return 0;
}

int
main(int argc, char **argv)
{
	rt_eal_init(argv[0]);
	pool = rt_pool(32768, 2048);
	if (argc == 4 && strcmp(argv[1], "--frames") == 0)
		return write_frames(argv[2], argv[3]);
	RT_RUN(test_parse);
	RT_RUN(test_pfc_parse);
	RT_RUN(test_prio_of);
	RT_RUN(test_drain_rate);
	RT_RUN(test_drr);
	RT_RUN(test_red);
	RT_RUN(test_red_codepoints);
	RT_RUN(test_red_dequeue);
	RT_RUN(test_tail_drop);
	RT_RUN(test_pfc_hysteresis);
	RT_RUN(test_pfc_two_prios);
	RT_RUN(test_bneck_to);
	RT_RUN(test_arrival);
	RT_RUN(test_samples);
	RT_CHECK(rte_mempool_in_use_count(pool) == 0, "%u mbufs leaked",
			rte_mempool_in_use_count(pool));
	return rt_report("bneck");
}
