/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_transport: in-process RDMA WRITE goodput and message rate between two engines joined
 * back to back (classifier with ICRC on every packet, no loss), for several message sizes and
 * QP counts, with the cost per packet. Baseline, measured in the same run: building and
 * classifying the same packets with no transport at all (what the wire layer alone costs).
 * Also the QP table: a lookup of an unknown QPN (what a stray packet costs) with 512 live QPs,
 * before and after 200 000 QP create/destroy cycles, and the cost of one cycle.
 * Usage: bench_transport [SECONDS_PER_POINT]
 *        bench_transport write|read|send SIZE PACKETS [classify|defer] [QPS] [copy|zc]
 *        (one point, a fixed run in virtual time for valgrind --tool=callgrind
 *        --toggle-collect=run_fixed: the ICRC checked by the classifier over the burst, or
 *        deferred to right before each packet's copy as the dataplane does it, the default;
 *        the payloads copied into their packets, the default, or attached from the MR:
 *        zero-copy transmit; bench/instr.sh runs them)
 *        bench_transport baseline SIZE PACKETS   (the baseline as a fixed run, for
 *        --toggle-collect=run_baseline_fixed)
 *        bench_transport qpn [LOOKUPS [CYCLES]]   (the QP table alone, a fixed run for
 *        valgrind --tool=callgrind: lookups_fresh and lookups_churned hold the lookups)
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "roce_test.h"
#include "roce_transport.h"
#include "roce_transport_counters.h"
#include "roce_wire.h"

#define BURST 32
#define DEPTH 64
#define MTU ROCE_MTU_4096
/* Per-lcore mbuf cache, as roced's worker pools (lib/dataplane/dp.c). */
#define POOL_CACHE 256

struct side {
	struct roce_engine *eng;
	struct roce_pd *pd;
	struct roce_cq *cq;
	uint8_t *buf;
	struct roce_mr *mr;
};

static struct rte_mempool *mp;
/* Zero-copy transmit: the sender attaches its payloads from the MR (zc_mp set), or copies. */
static struct rte_mempool *zc_mp;
static struct side s[2];
static struct roce_qp **qps[2];
static struct roce_wire_stats wst;
/* Classifier flags: ROCE_CLASSIFY_DEFER_ICRC as lib/dataplane's worker, or 0. */
static unsigned int cls_flags = ROCE_CLASSIFY_DEFER_ICRC;
/* What the requester posts: RDMA WRITE (the timed points), READ or SEND. */
static enum roce_wr_opcode op = ROCE_WR_RDMA_WRITE;
static const char *const op_names[] = {
	[ROCE_WR_RDMA_WRITE] = "write",
	[ROCE_WR_RDMA_READ] = "read",
	[ROCE_WR_SEND] = "send",
};

/* Sets op from its name; @return 0, or -1 for no such name. */
static int
op_of(const char *name)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(op_names); i++)
		if (op_names[i] != NULL && strcmp(op_names[i], name) == 0) {
			op = (enum roce_wr_opcode)i;
			return 0;
		}
	return -1;
}

static void
make_side(struct side *x, int i, uint32_t nqp, uint64_t buf_len)
{
	struct roce_engine_conf c = { .mp = mp, .max_qps = nqp + 16, .qpn_base = 0x100 + i * 0x10000,
		.tx_ring_size = 8192, .zc_mp = zc_mp };
	struct roce_tx_zc zc = { .max_segs = 16 };
	struct roce_mr_attr ma = { .tx_dma = zc_mp != NULL };

	x->eng = roce_engine_create(&c);
	x->pd = roce_pd_alloc(SOCKET_ID_ANY);
	x->cq = roce_cq_create(1 << 16, SOCKET_ID_ANY);
	x->buf = calloc(1, buf_len);
	/* In process nothing DMAs: the address stands for the bus address. */
	ma.tx_iova = (uintptr_t)x->buf;
	x->mr = roce_mr_reg(x->pd, x->buf, buf_len, 0xF, &ma);
	if (x->eng == NULL || x->pd == NULL || x->cq == NULL || x->mr == NULL ||
			(zc_mp != NULL && roce_engine_set_tx_zc(x->eng, 0, &zc) != 0))
		abort();
}

static void
connect_pair(uint32_t q)
{
	struct roce_qp_init_attr ia = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH };
	int i;

	for (i = 0; i < 2; i++) {
		ia.send_cq = ia.recv_cq = s[i].cq;
		qps[i][q] = roce_qp_create(s[i].eng, s[i].pd, &ia);
		if (qps[i][q] == NULL)
			abort();
	}
	for (i = 0; i < 2; i++) {
		struct roce_qp_attr a = { .qp_state = ROCE_QPS_INIT, .qp_access_flags = 0xE };
		struct roce_path *p = &a.ah;

		if (roce_qp_modify(qps[i][q], &a, ROCE_QP_STATE | ROCE_QP_ACCESS_FLAGS) != 0)
			abort();
		a.qp_state = ROCE_QPS_RTR;
		a.path_mtu = MTU;
		a.dest_qp_num = roce_qp_num(qps[1 - i][q]);
		a.max_dest_rd_atomic = 16;
		a.min_rnr_timer = 12;
		p->src_ip[0] = p->dst_ip[0] = 10;
		p->src_ip[3] = (uint8_t)(1 + i);
		p->dst_ip[3] = (uint8_t)(2 - i);
		p->udp_sport = roce_udp_sport(roce_qp_num(qps[i][q]), a.dest_qp_num);
		roce_path_init(p);
		if (roce_qp_modify(qps[i][q], &a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU |
				ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC |
				ROCE_QP_MIN_RNR_TIMER) != 0)
			abort();
		a.qp_state = ROCE_QPS_RTS;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 16;
		if (roce_qp_modify(qps[i][q], &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN | ROCE_QP_TIMEOUT |
				ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY | ROCE_QP_MAX_QP_RD_ATOMIC) != 0)
			abort();
	}
}

/* Move what @from sent to the other engine, through the classifier. */
static uint32_t
link_move(int from, uint64_t now)
{
	struct rte_mbuf *pkts[BURST];
	uint32_t total = 0;
	uint16_t n;

	while ((n = roce_engine_tx(s[from].eng, pkts, BURST)) != 0) {

		roce_classify_burst(pkts, n, cls_flags, &wst);
		roce_engine_rx_wire(s[1 - from].eng, pkts, n, now, &wst);
		total += n;
	}
	return total;
}

static int
post_op(struct roce_qp *qp, uint32_t len, uint64_t off)
{
	struct roce_send_wr wr = {
		.opcode = op,
		.send_flags = ROCE_SEND_SIGNALED,
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(s[0].mr) + off, len, roce_mr_lkey(s[0].mr) }},
		.remote_addr = roce_mr_iova(s[1].mr) + off,
		.rkey = roce_mr_rkey(s[1].mr),
	};

	return roce_post_send(qp, &wr);
}

/* A SEND's landing place on the responder: its whole buffer, every message at offset 0. */
static void
post_recv(struct roce_qp *qp, uint32_t len)
{
	struct roce_recv_wr wr = {
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(s[1].mr), len, roce_mr_lkey(s[1].mr) }},
	};

	if (roce_post_recv(qp, &wr) != 0)
		abort();
}

static void
point_setup(uint32_t nqp, uint32_t len)
{
	uint64_t buf_len = (uint64_t)RTE_MAX(len, 64u) * DEPTH;
	uint32_t q, i;

	for (i = 0; i < 2; i++) {
		make_side(&s[i], i, nqp, buf_len);
		qps[i] = calloc(nqp, sizeof(*qps[i]));
	}
	for (q = 0; q < nqp; q++)
		connect_pair(q);
	/* Fill every send queue, then keep it full as completions come back; a SEND finds a
	 * receive for each message in flight. */
	for (q = 0; q < nqp; q++)
		for (i = 0; i < (nqp > 64 ? 4u : DEPTH); i++) {
			if (op == ROCE_WR_SEND)
				post_recv(qps[1][q], len);
			post_op(qps[0][q], len, (uint64_t)(i % DEPTH) * RTE_MAX(len, 64u));
		}
}

/* One turn of both ends at @now; @return the packets moved, *@msgs += messages completed. */
static uint64_t
point_turn(uint32_t nqp, uint32_t len, uint64_t now, uint64_t *msgs)
{
	struct roce_wc wc[256];
	uint64_t pkts;
	uint32_t i;
	int n;

	roce_engine_poll(s[0].eng, now);
	pkts = link_move(0, now);
	roce_engine_poll(s[1].eng, now);
	pkts += link_move(1, now);
	while ((n = roce_cq_poll(s[0].cq, wc, 256)) > 0) {
		for (i = 0; i < (uint32_t)n; i++) {
			struct roce_qp *qp = qps[0][(wc[i].qp_num - 0x100) % nqp];

			if (wc[i].status != ROCE_WC_SUCCESS)
				abort();
			post_op(qp, len, 0);
		}
		*msgs += n;
	}
	while (op == ROCE_WR_SEND && (n = roce_cq_poll(s[1].cq, wc, 256)) > 0)
		for (i = 0; i < (uint32_t)n; i++) {
			if (wc[i].status != ROCE_WC_SUCCESS)
				abort();
			post_recv(qps[1][(wc[i].qp_num - 0x10100) % nqp], len);
		}
	return pkts;
}

static void
point_teardown(void)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		roce_engine_destroy(s[i].eng);
		roce_mr_dereg(s[i].mr);
		roce_pd_free(s[i].pd);
		roce_cq_destroy(s[i].cq);
		free(s[i].buf);
		free(qps[i]);
	}
}

static void
run_point(uint32_t nqp, uint32_t len, double secs)
{
	uint64_t hz = rte_get_tsc_hz(), start, end, now, msgs = 0, pkts = 0;
	double el;

	point_setup(nqp, len);
	start = rte_rdtsc();
	end = start + (uint64_t)(secs * hz);
	do {
		now = (rte_rdtsc() - start) * 1000000000ull / hz;
		pkts += point_turn(nqp, len, now, &msgs);
	} while (rte_rdtsc() < end);
	el = (double)(rte_rdtsc() - start) / hz;
	printf("  %6u QPs %8u B: %9.3f Gb/s goodput %10.0f msg/s %8.1f ns/pkt\n", nqp, len,
			msgs * (double)len * 8 / el / 1e9, msgs / el, el * 1e9 / (double)pkts);
	point_teardown();
}

/* The fixed run callgrind counts: turns in virtual time (1 us each) until @target packets. */
static __rte_noinline uint64_t
run_fixed(uint32_t nqp, uint32_t len, uint64_t target, uint64_t *msgs)
{
	uint64_t pkts = 0, now = 0;

	while (pkts < target) {
		now += 1000;
		pkts += point_turn(nqp, len, now, msgs);
	}
	return pkts;
}

static void
run_fixed_point(uint32_t nqp, uint32_t len, uint64_t target)
{
	uint64_t start, msgs = 0, pkts, data_pkts, cnt[ROCE_XC_NUM];
	double el;

	point_setup(nqp, len);
	start = rte_rdtsc();
	pkts = run_fixed(nqp, len, target, &msgs);
	el = (double)(rte_rdtsc() - start) / rte_get_tsc_hz();
	roce_engine_counters(s[0].eng, cnt);
	/* A READ's data comes back as responses: the responder sent them. */
	if (op == ROCE_WR_RDMA_READ)
		roce_engine_counters(s[1].eng, cnt);
	data_pkts = op == ROCE_WR_RDMA_READ ? cnt[ROCE_XC_TX_RESP] : cnt[ROCE_XC_TX_REQ];
	if (op == ROCE_WR_RDMA_READ)
		roce_engine_counters(s[0].eng, cnt);
	printf("  %s %s %s: %u QPs %u B: %" PRIu64 " packets (%" PRIu64 " data, %" PRIu64
			" resent, %" PRIu64 " zero-copy), %" PRIu64 " messages, %.1f ns/pkt, "
			"%.1f ns/data packet, ICRC drops %" PRIu64 "\n", op_names[op],
			cls_flags != 0 ? "defer" : "classify", zc_mp != NULL ? "zc" : "copy", nqp,
			len, pkts, data_pkts, cnt[ROCE_XC_RETRANSMITS], cnt[ROCE_XC_TX_ZC], msgs,
			el * 1e9 / (double)pkts, el * 1e9 / (double)data_pkts,
			wst.drop[ROCE_DROP_ICRC]);
	point_teardown();
}

/* Baseline: build + classify + free a burst of the packets of @len-byte WRITEs, no
 * transport. @return the packet size. */
static uint32_t
baseline_burst(uint32_t len)
{
	static const struct roce_pkt_desc only = { .opcode = ROCE_OPCODE(RC, WRITE_ONLY),
		.dest_qpn = 0x11 };
	static const struct roce_pkt_desc middle = { .opcode = ROCE_OPCODE(RC, WRITE_MIDDLE),
		.dest_qpn = 0x11 };
	static struct roce_path p = { .src_ip = { 10, 0, 0, 1 }, .dst_ip = { 10, 0, 0, 2 },
		.udp_sport = 0xC001 };
	uint32_t mtu = roce_mtu_bytes(MTU), plen = RTE_MIN(len, mtu);
	static uint8_t payload[4096];
	static int path_ready;
	struct rte_mbuf *m[BURST];
	unsigned int i;

	if (!path_ready++)
		roce_path_init(&p);
	if (rte_pktmbuf_alloc_bulk(mp, m, BURST) != 0)
		abort();
	for (i = 0; i < BURST; i++)
		roce_build_pkt(m[i], &p, len < mtu ? &only : &middle, payload, plen);
	roce_classify_burst(m, BURST, 0, &wst);
	rte_pktmbuf_free_bulk(m, BURST);
	return plen;
}

/* The baseline's fixed run for callgrind: bursts until @target packets. */
static __rte_noinline uint64_t
run_baseline_fixed(uint32_t len, uint64_t target)
{
	uint64_t pkts = 0;

	while (pkts < target) {
		baseline_burst(len);
		pkts += BURST;
	}
	printf("  baseline %u B: %" PRIu64 " packets\n", len, pkts);
	return pkts;
}

static void
run_baseline(uint32_t len, double secs)
{
	uint64_t hz = rte_get_tsc_hz(), start, end, pkts = 0;
	uint32_t plen;
	double el;

	start = rte_rdtsc();
	end = start + (uint64_t)(secs * hz);
	do {
		plen = baseline_burst(len);
		pkts += BURST;
	} while (rte_rdtsc() < end);
	el = (double)(rte_rdtsc() - start) / hz;
	printf("  baseline %8u B: %9.3f Gb/s of %u-B packets, %8.1f ns/pkt (build + classify)\n",
			len, pkts * (double)plen * 8 / el / 1e9, plen, el * 1e9 / (double)pkts);
}

/* Lookups of QPNs no QP has: half in another worker's range, half free ones of ours. */
static uint64_t
lookups_unknown(const struct roce_engine *eng, uint32_t n)
{
	uint64_t found = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint32_t k = i & 4095;

		found += roce_engine_qp(eng, k & 1 ? 0x20000 + k * 7 : 0x18000 + k) != NULL;
	}
	return found;
}

/* Two names for one loop so callgrind counts each phase on its own; the call counts keep
 * the compiler from folding them into one function. */
static uint32_t nb_fresh, nb_churned;

static __rte_noinline uint64_t
lookups_fresh(const struct roce_engine *eng, uint32_t n)
{
	nb_fresh++;
	return lookups_unknown(eng, n);
}

static __rte_noinline uint64_t
lookups_churned(const struct roce_engine *eng, uint32_t n)
{
	nb_churned++;
	return lookups_unknown(eng, n);
}

static double
ns_since(uint64_t start, uint64_t n)
{
	return (double)(rte_rdtsc() - start) * 1e9 / rte_get_tsc_hz() / (double)n;
}

static void
run_qpn_table(uint32_t lookups, uint32_t cycles)
{
	struct roce_engine_conf c = { .mp = mp, .max_qps = 1024, .qpn_base = 0x10000,
		.qpn_count = 0x10000 };
	struct roce_qp_init_attr ia = { .max_send_wr = 1, .max_recv_wr = 1 };
	struct side x = { 0 };
	uint64_t start, found;
	double fresh, churned, cycle;
	uint32_t i;

	x.eng = roce_engine_create(&c);
	x.pd = roce_pd_alloc(SOCKET_ID_ANY);
	x.cq = roce_cq_create(16, SOCKET_ID_ANY);
	if (x.eng == NULL || x.pd == NULL || x.cq == NULL)
		abort();
	ia.send_cq = ia.recv_cq = x.cq;
	for (i = 0; i < 512; i++)
		if (roce_qp_create(x.eng, x.pd, &ia) == NULL)
			abort();
	start = rte_rdtsc();
	found = lookups_fresh(x.eng, lookups);
	fresh = ns_since(start, lookups);
	start = rte_rdtsc();
	for (i = 0; i < cycles; i++) {
		struct roce_qp *qp = roce_qp_create(x.eng, x.pd, &ia);

		if (qp == NULL)
			abort();
		roce_qp_destroy(qp);
	}
	cycle = ns_since(start, cycles);
	start = rte_rdtsc();
	found += lookups_churned(x.eng, lookups);
	churned = ns_since(start, lookups);
	if (found != 0)
		abort();
	printf("  QP table, 512 QPs, 1024 max: unknown-QPN lookup %.1f ns before %u create/destroy "
			"cycles, %.1f ns after (%.0f ns per cycle)\n", fresh, cycles, churned, cycle);
	roce_engine_destroy(x.eng);
	roce_cq_destroy(x.cq);
	roce_pd_free(x.pd);
}

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	static const uint32_t sizes[] = { 64, 4096, 65536 };
	static const uint32_t nqps[] = { 1, 1024 };
	unsigned int i, j;

	rt_eal_init(argv[0]);
	if (argc > 3 && strcmp(argv[1], "baseline") == 0) {
		mp = rt_pool_cache(4096, 4608, POOL_CACHE);
		run_baseline_fixed((uint32_t)atoi(argv[2]), strtoull(argv[3], NULL, 0));
		return 0;
	}
	if (argc > 3 && op_of(argv[1]) == 0) {
		if (argc > 4 && strcmp(argv[4], "classify") == 0)
			cls_flags = 0;
		else if (argc > 4 && strcmp(argv[4], "defer") != 0)
			return 2;
		mp = rt_pool_cache(65536, 4608, POOL_CACHE);
		if (argc > 6 && strcmp(argv[6], "zc") == 0)
			zc_mp = rt_pool_cache(2 * 65536, 0, POOL_CACHE);
		else if (argc > 6 && strcmp(argv[6], "copy") != 0)
			return 2;
		run_fixed_point(argc > 5 ? (uint32_t)atoi(argv[5]) : 1, (uint32_t)atoi(argv[2]),
				strtoull(argv[3], NULL, 0));
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "qpn") == 0) {
		mp = rt_pool(1024, 256);
		run_qpn_table(argc > 2 ? (uint32_t)atoi(argv[2]) : 10000000,
				argc > 3 ? (uint32_t)atoi(argv[3]) : 200000);
		return 0;
	}
	mp = rt_pool_cache(65536, 4608, POOL_CACHE);
	run_qpn_table(10000000, 200000);
	printf("in-process RDMA WRITE, MTU %u, one core, both ends:\n", roce_mtu_bytes(MTU));
	for (i = 0; i < RTE_DIM(sizes); i++) {
		run_baseline(sizes[i], secs);
		for (j = 0; j < RTE_DIM(nqps); j++)
			run_point(nqps[j], sizes[i], secs);
	}
	return 0;
}
