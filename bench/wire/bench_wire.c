/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_wire: classifier ns/packet (scalar vs vector, with and without the ICRC) on a realistic
 * burst mix, and ICRC throughput against a raw crc32_gzip_refl over the same bytes.
 * Usage: bench_wire [SECONDS_PER_FIGURE]
 */
#include <stdlib.h>

#include <isa-l/crc.h>
#include <rte_cycles.h>
#include <rte_random.h>

#include "roce_test.h"
#include "roce_wire.h"

#define NB_PKTS 1024
#define BURST 32
#define MTU 1024

/* The mix a WRITE-heavy worker sees: mostly full-MTU middles, ACKs back, a few small SENDs. */
static const struct {
	uint8_t opcode;
	uint32_t len;
	unsigned int weight;
} mix[] = {
	{ ROCE_OPCODE(RC, WRITE_FIRST), MTU, 8 },
	{ ROCE_OPCODE(RC, WRITE_MIDDLE), MTU, 48 },
	{ ROCE_OPCODE(RC, WRITE_LAST), 512, 8 },
	{ ROCE_OPCODE(RC, ACK), 0, 20 },
	{ ROCE_OPCODE(RC, READ_RESP_MIDDLE), MTU, 6 },
	{ ROCE_OPCODE(RC, SEND_ONLY), 64, 6 },
	{ ROCE_OPCODE(RC, FETCH_ADD), 0, 4 },
};

static struct rte_mbuf *pkts[NB_PKTS];

static void
make_mix(struct rte_mempool *mp)
{
	static uint8_t payload[MTU];
	struct roce_path path = {
		.src_mac = {{ 0x02, 0, 0, 0, 0, 1 }}, .dst_mac = {{ 0x02, 0, 0, 0, 0, 2 }},
		.src_ip = { 10, 0, 0, 1 }, .dst_ip = { 10, 0, 0, 2 },
		.udp_sport = roce_udp_sport(0x11, 0x22), .ecn = ROCE_ECN_ECT0,
	};
	unsigned int i, total = 0, k;

	if (roce_path_init(&path) != 0)
		abort();
	for (k = 0; k < RTE_DIM(mix); k++)
		total += mix[k].weight;
	for (i = 0; i < NB_PKTS; i++) {
		struct roce_pkt_desc d = { .dest_qpn = 0x22, .psn = i, .rkey = 0x1234, .va = 4096 };
		unsigned int r = rte_rand_max(total);

		for (k = 0; r >= mix[k].weight; k++)
			r -= mix[k].weight;
		d.opcode = mix[k].opcode;
		d.dma_len = mix[k].len;
		pkts[i] = rte_pktmbuf_alloc(mp);
		if (pkts[i] == NULL || roce_build_pkt(pkts[i], &path, &d, payload, mix[k].len) != 0)
			abort();
	}
}

/* ns per packet of one classifier over the whole mix, repeated for @secs. */
static double
time_classify(roce_classify_fn fn, unsigned int flags, double secs)
{
	struct roce_wire_stats st = {0};
	uint64_t hz = rte_get_tsc_hz(), start = rte_rdtsc(), end = start + (uint64_t)(secs * hz);
	uint64_t n = 0, now;

	do {
		unsigned int i;

		for (i = 0; i < NB_PKTS; i += BURST)
			if (fn(&pkts[i], BURST, flags, &st) != BURST)
				abort();
		n += NB_PKTS;
		now = rte_rdtsc();
	} while (now < end);
	return (double)(now - start) * 1e9 / hz / n;
}

/* Bytes per ns (GB/s) of roce_icrc_compute, or of the raw CRC over the same extent. */
static double
time_icrc(int raw, double secs)
{
	uint64_t hz = rte_get_tsc_hz(), start = rte_rdtsc(), end = start + (uint64_t)(secs * hz);
	uint64_t bytes = 0, now;
	volatile uint32_t sink = 0;

	do {
		unsigned int i;

		for (i = 0; i < NB_PKTS; i++) {
			const struct rte_mbuf *m = pkts[i];
			uint32_t icrc_off = m->pkt_len - ROCE_ICRC_LEN;

			if (raw)
				sink += crc32_gzip_refl(0, rte_pktmbuf_mtod_offset(m,
						const uint8_t *, 14), icrc_off - 14);
			else
				sink += roce_icrc_compute(m, 14, 0, icrc_off);
			bytes += icrc_off - 14;
		}
		now = rte_rdtsc();
	} while (now < end);
	(void)sink;
	return (double)bytes / ((double)(now - start) * 1e9 / hz);
}

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	static const enum roce_classify_impl impls[] = {
		ROCE_CLASSIFY_SCALAR, ROCE_CLASSIFY_AVX2, ROCE_CLASSIFY_AVX512,
	};
	double base[2] = {0}, icrc, raw;
	unsigned int i, f;

	rt_eal_init(argv[0]);
	make_mix(rt_pool(NB_PKTS + 64, 2048));
	printf("classifier, %d-packet bursts of a WRITE-heavy mix (MTU %d), ns/packet:\n",
			BURST, MTU);
	printf("  %-8s %12s %8s %12s %8s\n", "impl", "with ICRC", "ratio", "no ICRC", "ratio");
	for (i = 0; i < RTE_DIM(impls); i++) {
		roce_classify_fn fn = roce_classify_get(impls[i]);
		double ns[2];

		if (fn == NULL) {
			printf("  %-8s (not available on this CPU)\n",
					roce_classify_impl_name(impls[i]));
			continue;
		}
		for (f = 0; f < 2; f++) {
			ns[f] = time_classify(fn, f ? ROCE_CLASSIFY_NO_ICRC : 0, secs);
			if (i == 0)
				base[f] = ns[f];
		}
		printf("  %-8s %12.2f %8.2f %12.2f %8.2f\n", roce_classify_impl_name(impls[i]),
				ns[0], base[0] / ns[0], ns[1], base[1] / ns[1]);
	}
	printf("  (ratio = scalar ns / this ns; > 1 is faster than scalar)\n");
	icrc = time_icrc(0, secs);
	raw = time_icrc(1, secs);
	printf("ICRC: %.2f GB/s, raw crc32_gzip_refl over the same bytes %.2f GB/s, ratio %.2f\n",
			icrc, raw, icrc / raw);
	return 0;
}
