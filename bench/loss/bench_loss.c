/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_loss: goodput against packet loss, go-back-N and selective repeat, through the
 * in-process harness link (test/common/xport_harness: virtual clock, every packet through the
 * classifier and its ICRC). The link is modelled: 100 Gb/s serialisation each way, 2 us
 * one-way delay, the same uniform loss on data and ACKs. One QP streams 64 KiB RDMA WRITEs
 * (MTU 4096) with a window of 64 packets (about twice the bandwidth-delay product); each
 * point runs for a fixed span of virtual time. Baseline: the same mode without loss, so the
 * ratio is goodput(loss) / goodput(0).
 * Usage: bench_loss [VIRTUAL_MS_PER_POINT]
 */
#include <stdlib.h>
#include <string.h>

#include "roce_test.h"
#include "xport_harness.h"

#define MSG (64u << 10)
#define DEPTH 32
#define RATE_GBPS 100.0

static struct xh h;

struct point {
	double gbps;
	uint64_t retrans;
	uint64_t timeouts;
};

static int
post_write(struct xh_qp *p, uint32_t n)
{
	struct roce_send_wr wr = {
		.wr_id = n,
		.opcode = ROCE_WR_RDMA_WRITE,
		.send_flags = ROCE_SEND_SIGNALED,
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(p->mr[0]) + (uint64_t)(n % DEPTH) * MSG, MSG,
			roce_mr_lkey(p->mr[0]) }},
		.remote_addr = roce_mr_iova(p->mr[1]) + (uint64_t)(n % DEPTH) * MSG,
		.rkey = roce_mr_rkey(p->mr[1]),
	};

	return roce_post_send(p->qp[0], &wr);
}

static struct point
run(uint8_t sr, double loss, uint64_t span_ns)
{
	struct xh_impair imp = { .delay_ns = 2000, .loss = loss, .rate_gbps = RATE_GBPS };
	struct xh_qp_conf conf = { .mtu = ROCE_MTU_4096, .buf_len = (uint64_t)DEPTH * MSG,
		.sq_depth = DEPTH * 2, .timeout = 8, .sr = sr, .sr_rto_us = 50,
		.max_inflight = 64 };
	struct point pt = {0};
	uint64_t start, bytes = 0;
	uint32_t posted = 0, done = 0;
	struct roce_wc wc[DEPTH];
	struct xh_qp p;
	int n, i;

	xh_init(&h, 1234, NULL);
	h.impair[0] = h.impair[1] = imp;
	if (xh_qp_connect(&h, &p, &conf) != 0)
		abort();
	start = h.now;
	while (h.now - start < span_ns) {
		while (posted - done < DEPTH)
			if (post_write(&p, posted++) != 0)
				abort();
		xh_step(&h, 100);
		n = roce_cq_poll(p.cq[0], wc, DEPTH);
		for (i = 0; i < n; i++) {
			if (wc[i].status != ROCE_WC_SUCCESS) {
				fprintf(stderr, "%s loss %g: %s\n", sr ? "SR" : "GBN", loss,
						roce_wc_status_str(wc[i].status));
				abort();
			}
			bytes += MSG;
			done++;
		}
	}
	pt.gbps = bytes * 8.0 / (double)(h.now - start);
	pt.retrans = xh_counter(&h, 0, ROCE_XC_RETRANSMITS);
	pt.timeouts = xh_counter(&h, 0, ROCE_XC_TIMEOUTS);
	xh_qp_destroy(&h, &p);
	xh_fini(&h);
	return pt;
}

int
main(int argc, char **argv)
{
	static const double losses[] = { 0, 0.0001, 0.001, 0.01, 0.05 };
	uint64_t span = (uint64_t)((argc > 1 ? atof(argv[1]) : 20.0) * 1e6);
	struct point base[2], pt[2];
	unsigned int i, m;

	rt_eal_init(argv[0]);
	printf("goodput vs loss: 1 QP, 64 KiB WRITEs, MTU 4096, %.0f Gb/s link, 2 us one way, "
			"window 64 pkts, SR RTO 50 us, IBA timeout 8 (1 ms), "
			"%.0f ms virtual/point\n",
			RATE_GBPS, span / 1e6);
	printf("  %-7s | %-29s | %-29s\n", "loss", "go-back-N", "selective repeat");
	printf("  %-7s | %9s %6s %6s %5s | %9s %6s %6s %5s\n", "", "Gb/s", "ratio", "resent",
			"RTOs", "Gb/s", "ratio", "resent", "RTOs");
	for (i = 0; i < RTE_DIM(losses); i++) {
		for (m = 0; m < 2; m++) {
			pt[m] = run((uint8_t)m, losses[i], span);
			if (i == 0)
				base[m] = pt[m];
		}
		printf("  %6.2f%% | %9.2f %5.1f%% %6lu %5lu | %9.2f %5.1f%% %6lu %5lu\n",
				losses[i] * 100, pt[0].gbps, 100 * pt[0].gbps / base[0].gbps,
				(unsigned long)pt[0].retrans, (unsigned long)pt[0].timeouts,
				pt[1].gbps, 100 * pt[1].gbps / base[1].gbps,
				(unsigned long)pt[1].retrans, (unsigned long)pt[1].timeouts);
	}
	return 0;
}
