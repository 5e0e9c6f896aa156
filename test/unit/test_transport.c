/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport tests on the in-process harness: every operation and size, impairment, and the
 * error paths, each with the completions both sides must see.
 */
#include <stdlib.h>
#include <string.h>

#include "roce_test.h"
#include "xport_harness.h"

#define SEC 1000000000ull
#define MS 1000000ull

static struct xh h;

static void
fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

/* Post one WR from side @s of @p; buffers are offsets into each side's MR. */
static int
post(struct xh_qp *p, int s, enum roce_wr_opcode op, uint64_t loff, uint64_t roff, uint32_t len,
		uint64_t wr_id)
{
	struct roce_send_wr wr = {
		.wr_id = wr_id,
		.opcode = op,
		.send_flags = ROCE_SEND_SIGNALED,
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(p->mr[s]) + loff, len, roce_mr_lkey(p->mr[s]) }},
		.remote_addr = roce_mr_iova(p->mr[1 - s]) + roff,
		.rkey = roce_mr_rkey(p->mr[1 - s]),
		.imm_data = 0x12345678,
	};

	return roce_post_send(p->qp[s], &wr);
}

static __rte_unused int
post_recv(struct xh_qp *p, int s, uint64_t off, uint32_t len, uint64_t wr_id)
{
	struct roce_recv_wr wr = {
		.wr_id = wr_id,
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(p->mr[s]) + off, len, roce_mr_lkey(p->mr[s]) }},
	};

	return roce_post_recv(p->qp[s], &wr);
}

static void
test_write_smoke(void)
{
	struct xh_qp p;
	struct roce_wc wc;
	int n;

	xh_init(&h, 1, NULL);
	RT_CHECK(xh_qp_connect(&h, &p, NULL) == 0, "connect");
	fill(p.buf[0], 4096, 3);
	RT_CHECK(post(&p, 0, ROCE_WR_RDMA_WRITE, 0, 0, 4096, 7) == 0, "post");
	n = xh_poll_cq(&h, p.cq[0], &wc, 1, SEC);
	RT_CHECK(n == 1 && wc.status == ROCE_WC_SUCCESS && wc.wr_id == 7, "n=%d status=%s", n,
			n ? roce_wc_status_str(wc.status) : "-");
	RT_CHECK(memcmp(p.buf[0], p.buf[1], 4096) == 0, "data");
	if (getenv("XH_DEBUG")) {
		unsigned int c, s;
		for (s = 0; s < 2; s++)
			for (c = 0; c < ROCE_XC_NUM; c++)
				if (xh_counter(&h, s, c))
					printf("side %u %s %lu\n", s, roce_xport_counter_name(c), (unsigned long)xh_counter(&h, s, c));
	}
	xh_qp_destroy(&h, &p);
	xh_fini(&h);
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	RT_RUN(test_write_smoke);
	return rt_report("test_transport");
}
