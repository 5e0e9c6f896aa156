/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport tests on the in-process harness: every operation and size, impairment, and the
 * error paths, each with the completions both sides must see.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_test.h"
#include "roce_timer.h"
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

/* The key a SEND with Invalidate names (post()); check_op() points it at a throwaway MR. */
static uint32_t inv_rkey = 0x12345678;

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
		.imm_data = op == ROCE_WR_SEND_WITH_INV ? inv_rkey : 0x12345678,
	};

	return roce_post_send(p->qp[s], &wr);
}

static int
post_recv(struct xh_qp *p, int s, uint64_t off, uint32_t len, uint64_t wr_id)
{
	struct roce_recv_wr wr = {
		.wr_id = wr_id,
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(p->mr[s]) + off, len, roce_mr_lkey(p->mr[s]) }},
	};

	return roce_post_recv(p->qp[s], &wr);
}


/* Poll exactly one completion from @cq, or fail the check. */
static int
one_wc(struct roce_cq *cq, struct roce_wc *wc, uint64_t timeout)
{
	int n = xh_poll_cq(&h, cq, wc, 1, timeout);

	RT_CHECK(n == 1, "expected a completion, got %d", n);
	return n == 1;
}

/* Completion fields both sides must show for one operation of @len bytes. */
static void
check_op(struct xh_qp *p, enum roce_wr_opcode op, uint32_t len, uint32_t mtu)
{
	static const enum roce_wc_opcode want_op[] = {
		[ROCE_WR_RDMA_WRITE] = ROCE_WC_RDMA_WRITE,
		[ROCE_WR_RDMA_WRITE_WITH_IMM] = ROCE_WC_RDMA_WRITE,
		[ROCE_WR_SEND] = ROCE_WC_SEND,
		[ROCE_WR_SEND_WITH_IMM] = ROCE_WC_SEND,
		[ROCE_WR_RDMA_READ] = ROCE_WC_RDMA_READ,
		[ROCE_WR_SEND_WITH_INV] = ROCE_WC_SEND,
	};
	int recv = op == ROCE_WR_SEND || op == ROCE_WR_SEND_WITH_IMM ||
		op == ROCE_WR_SEND_WITH_INV || op == ROCE_WR_RDMA_WRITE_WITH_IMM;
	uint64_t half = p->len / 2;
	struct roce_mr *victim = NULL;
	struct roce_wc wc;
	int src = op == ROCE_WR_RDMA_READ ? 1 : 0;

	if (op == ROCE_WR_SEND_WITH_INV) {
		victim = roce_mr_reg(h.pd[1], p->buf[1], 64, ROCE_ACCESS_LOCAL_WRITE |
				ROCE_ACCESS_REMOTE_INVALIDATE, NULL);
		RT_CHECK(victim != NULL, "MR to invalidate");
		inv_rkey = victim != NULL ? roce_mr_rkey(victim) : 0;
	}

	memset(p->buf[0], 0, p->len);
	memset(p->buf[1], 0, p->len);
	fill(p->buf[src] + (src ? half : 0), len, len + op);
	if (recv)
		RT_CHECK(post_recv(p, 1, half, len + 16, 99) == 0, "post_recv");
	RT_CHECK(post(p, 0, op, 0, half, len, 42) == 0, "post op %d len %u", op, len);
	if (!one_wc(p->cq[0], &wc, 10 * SEC))
		return;
	RT_CHECK(wc.status == ROCE_WC_SUCCESS && wc.wr_id == 42 && wc.opcode == want_op[op],
			"op %d len %u mtu %u: status %s opcode %d", op, len, mtu,
			roce_wc_status_str(wc.status), wc.opcode);
	if (recv && one_wc(p->cq[1], &wc, SEC)) {
		enum roce_wc_opcode rop = op == ROCE_WR_RDMA_WRITE_WITH_IMM ?
			ROCE_WC_RECV_RDMA_WITH_IMM : ROCE_WC_RECV;
		unsigned int flags = op == ROCE_WR_SEND_WITH_IMM ||
			op == ROCE_WR_RDMA_WRITE_WITH_IMM ? ROCE_WC_WITH_IMM :
			op == ROCE_WR_SEND_WITH_INV ? ROCE_WC_WITH_INV : 0;

		RT_CHECK(wc.status == ROCE_WC_SUCCESS && wc.wr_id == 99 && wc.opcode == rop &&
				wc.byte_len == len && wc.wc_flags == flags &&
				wc.src_qp == roce_qp_num(p->qp[0]),
				"recv op %d len %u: status %s opcode %d byte_len %u flags %x", op, len,
				roce_wc_status_str(wc.status), wc.opcode, wc.byte_len, wc.wc_flags);
		if (flags == ROCE_WC_WITH_IMM)
			RT_CHECK(wc.imm_data == 0x12345678, "imm %x", wc.imm_data);
		if (flags == ROCE_WC_WITH_INV)
			RT_CHECK(wc.invalidated_rkey == inv_rkey, "inv %x", wc.invalidated_rkey);
	}
	if (victim != NULL)
		roce_mr_dereg(victim);
	if (op == ROCE_WR_RDMA_READ)
		RT_CHECK(memcmp(p->buf[0], p->buf[1] + half, len) == 0, "READ data len %u", len);
	else
		RT_CHECK(memcmp(p->buf[0], p->buf[1] + half, len) == 0, "data op %d len %u", op,
				len);
	/* Nothing beyond the message was touched. */
	RT_CHECK(p->buf[src ? 0 : 1][(src ? 0 : half) + len] == 0, "overrun op %d len %u", op,
			len);
}

/* The payload packets of both sides went copied for @why (a TX_COPY_ reason), or zero-copy. */
static void
check_tx_modes(const char *ctx, enum roce_xport_counter want)
{
	static const enum roce_xport_counter all[] = {
		ROCE_XC_TX_ZC, ROCE_XC_TX_COPY_PORT, ROCE_XC_TX_COPY_SHORT, ROCE_XC_TX_COPY_INLINE,
		ROCE_XC_TX_COPY_MR, ROCE_XC_TX_COPY_SEGS, ROCE_XC_TX_COPY_NOMBUF,
	};
	unsigned int i;

	for (i = 0; i < RTE_DIM(all); i++) {
		uint64_t n = xh_counter(&h, 0, all[i]) + xh_counter(&h, 1, all[i]);

		RT_CHECK(all[i] == want ? n != 0 : n == 0, "%s: counter %u: %lu", ctx, all[i],
				(unsigned long)n);
	}
}

static void
ops_sizes(uint8_t sr, uint32_t max_inflight, int zc)
{
	static const enum roce_mtu mtus[] = { ROCE_MTU_256, ROCE_MTU_1024, ROCE_MTU_4096 };
	static const enum roce_wr_opcode ops[] = {
		ROCE_WR_RDMA_WRITE, ROCE_WR_RDMA_WRITE_WITH_IMM, ROCE_WR_SEND,
		ROCE_WR_SEND_WITH_IMM, ROCE_WR_SEND_WITH_INV, ROCE_WR_RDMA_READ,
	};
	unsigned int m, o, s;

	for (m = 0; m < RTE_DIM(mtus); m++) {
		uint32_t mtu = roce_mtu_bytes(mtus[m]);
		const uint32_t sizes[] = { 0, 1, mtu - 1, mtu, mtu + 1, 1 << 20, 16 << 20 };
		struct xh_qp_conf conf = { .mtu = mtus[m], .buf_len = (34u << 20), .sr = sr,
			.max_inflight = max_inflight };
		struct xh_qp p;

		xh_init(&h, 10 + m, NULL);
		if (zc)
			xh_zc(&h, 16, 0);
		RT_CHECK(xh_qp_connect(&h, &p, &conf) == 0, "connect");
		for (s = 0; s < RTE_DIM(sizes); s++)
			for (o = 0; o < RTE_DIM(ops); o++)
				check_op(&p, ops[o], sizes[s], mtu);
		RT_CHECK(xh_counter(&h, 0, ROCE_XC_RETRANSMITS) == 0, "no loss, no resend");
		/* Requests and READ responses alike: zero-copy every one, or copied as configured. */
		check_tx_modes("ops", zc ? ROCE_XC_TX_ZC : ROCE_XC_TX_COPY_PORT);
		if (zc)
			RT_CHECK(xh_counter(&h, 1, ROCE_XC_TX_ZC) != 0, "READ responses zero-copy");
		xh_settle(&h, MS);
		RT_CHECK(roce_mr_tx_refs(p.mr[0]) == 0 && roce_mr_tx_refs(p.mr[1]) == 0,
				"references %u/%u once everything is delivered",
				roce_mr_tx_refs(p.mr[0]), roce_mr_tx_refs(p.mr[1]));
		xh_qp_destroy(&h, &p);
		xh_fini(&h);
	}
}

static void
test_ops_sizes(void)
{
	ops_sizes(0, 0, 0);
}

/* The same with selective repeat; a window of 256 makes a 16 MiB READ go in many requests. */
static void
test_sr_ops_sizes(void)
{
	ops_sizes(1, 0, 0);
	ops_sizes(1, 256, 0);
}

/* Every operation and size again, each payload attached from the MR (zero-copy transmit). */
static void
test_zc_ops_sizes(void)
{
	ops_sizes(0, 0, 1);
	ops_sizes(1, 256, 1);
}


/* ---- zero-copy transmit (lib/transport zc.c) ---- */

/* What a tap saw of one frame. */
struct zc_frame {
	uint32_t len;
	uint32_t hash;
};

#define ZC_FRAMES 65536

static struct {
	struct zc_frame f[ZC_FRAMES];
	uint32_t n;
	uint32_t chained;       /* payload frames of more than one segment */
	uint32_t payload;       /* frames with payload */
} zc_log;

static enum xh_verdict
zc_tap(void *arg, int from, struct rte_mbuf *m)
{
	static uint8_t b[16384];
	uint32_t len = rt_mbuf_copy(m, b, sizeof(b)), i, hash = 2166136261u;
	struct roce_wire_stats st;
	struct roce_pkt_meta meta;
	struct rte_mbuf *c;
	int mr_data;

	RTE_SET_USED(arg);
	RTE_SET_USED(from);
	for (i = 0; i < len; i++)
		hash = (hash ^ b[i]) * 16777619u;
	if (zc_log.n < ZC_FRAMES)
		zc_log.f[zc_log.n++] = (struct zc_frame){ len, hash };
	/* A single-segment copy of it, classified: its length, opcode and ICRC hold. */
	c = rt_mbuf(h.mp, b, len, 0);
	if (c != NULL) {
		roce_classify_burst(&c, 1, 0, &st);
		meta = *roce_pkt_meta(c);
		RT_CHECK(meta.type == ROCE_PKT_ROCE, "zc tap: a %u-byte frame of %u segments is "
				"not RoCE (reason %u)", len, m->nb_segs, meta.reason);
		/* Data from an MR (an SR ACK's SACK bitmap is a payload of its own). */
		mr_data = meta.payload_len != 0 &&
			(meta.mask & (ROCE_M_WRITE | ROCE_M_SEND | ROCE_M_READ));
		zc_log.payload += mr_data;
		zc_log.chained += mr_data && m->nb_segs > 1;
		rte_pktmbuf_free(c);
	}
	return XH_PASS;
}

/* A WRITE from three SGEs of side 0's MR: 1000, 3000 and 5000 bytes at @loff, apart. */
static void
post_sges(struct xh_qp *p, uint64_t loff, uint64_t roff, uint64_t wr_id)
{
	uint64_t base = roce_mr_iova(p->mr[0]) + loff;
	uint32_t lkey = roce_mr_lkey(p->mr[0]);
	struct roce_send_wr wr = {
		.wr_id = wr_id, .opcode = ROCE_WR_RDMA_WRITE, .send_flags = ROCE_SEND_SIGNALED,
		.num_sge = 3,
		.sg_list = {{ base, 1000, lkey }, { base + 4096, 3000, lkey },
			{ base + 12288, 5000, lkey }},
		.remote_addr = roce_mr_iova(p->mr[1]) + roff,
		.rkey = roce_mr_rkey(p->mr[1]),
	};

	RT_CHECK(roce_post_send(p->qp[0], &wr) == 0, "post 3-SGE WRITE");
}

/*
 * One run of WRITEs, SENDs, READs, a WRITE with immediate and a three-SGE WRITE over a lossy
 * link (retransmissions), copied or zero-copy, every frame logged; *@resent: the resends.
 */
static void
zc_run(int zc, uint8_t sr, uint64_t *resent)
{
	/* Fixed keys and addresses: the RETHs of both runs must be the same bytes. */
	struct xh_qp_conf c = { .mtu = ROCE_MTU_1024, .buf_len = 4u << 20, .sr = sr,
		.rkey = { 0xABC111, 0xABC222 }, .iova = { 1ull << 40, 2ull << 40 } };
	static const uint32_t sizes[] = { 4, 1023, 1024, 5000, 65536 + 3 };
	const uint64_t half = 2u << 20;
	struct roce_wc wc[64];
	unsigned int i, nwr = 0, got = 0, recvs = 0;
	struct xh_qp p;
	int n;

	memset(&zc_log, 0, sizeof(zc_log));
	xh_init(&h, 51, NULL);
	if (zc)
		xh_zc(&h, 16, 0);
	h.impair[0].loss = h.impair[1].loss = 0.01;
	h.tap = zc_tap;
	RT_CHECK(xh_qp_connect(&h, &p, &c) == 0, "connect");
	fill(p.buf[0], half, 3);
	fill(p.buf[1] + half, half, 5);
	for (i = 0; i < RTE_DIM(sizes); i++) {
		uint64_t off = (uint64_t)i * 131072;

		RT_CHECK(post(&p, 0, ROCE_WR_RDMA_WRITE, off, off, sizes[i], nwr++) == 0, "W");
		RT_CHECK(post_recv(&p, 1, half + 1024 * 1024 + off, sizes[i], i) == 0, "recv");
		RT_CHECK(post(&p, 0, ROCE_WR_SEND, off, 0, sizes[i], nwr++) == 0, "S");
		RT_CHECK(post(&p, 0, ROCE_WR_RDMA_READ, half + off, half + off, sizes[i],
				nwr++) == 0, "R");
	}
	RT_CHECK(post_recv(&p, 1, 1024 * 1024, 64, 9) == 0, "recv");
	RT_CHECK(post(&p, 0, ROCE_WR_RDMA_WRITE_WITH_IMM, 700000, 700000, 3000, nwr++) == 0,
			"WI");
	post_sges(&p, 800000, 800000, nwr++);
	while (got < nwr && (n = xh_poll_cq(&h, p.cq[0], wc, 64, 10 * SEC)) > 0)
		for (i = 0; i < (unsigned int)n; i++)
			got += wc[i].status == ROCE_WC_SUCCESS;
	while ((n = xh_poll_cq(&h, p.cq[1], wc, 64, MS)) > 0)
		recvs += (unsigned int)n;
	RT_CHECK(got == nwr && recvs == RTE_DIM(sizes) + 1, "zc %d: %u of %u completed, %u "
			"receives", zc, got, nwr, recvs);
	for (i = 0; i < RTE_DIM(sizes); i++) {
		uint64_t off = (uint64_t)i * 131072;

		RT_CHECK(memcmp(p.buf[0] + off, p.buf[1] + off, sizes[i]) == 0 &&
				memcmp(p.buf[0] + off, p.buf[1] + half + 1024 * 1024 + off,
				sizes[i]) == 0 && memcmp(p.buf[1] + half + off, p.buf[0] + half +
				off, sizes[i]) == 0, "zc %d: data of size %u", zc, sizes[i]);
	}
	RT_CHECK(memcmp(p.buf[1] + 800000, p.buf[0] + 800000, 1000) == 0 &&
			memcmp(p.buf[1] + 801000, p.buf[0] + 800000 + 4096, 3000) == 0 &&
			memcmp(p.buf[1] + 804000, p.buf[0] + 800000 + 12288, 5000) == 0,
			"zc %d: 3-SGE WRITE data", zc);
	*resent = xh_counter(&h, 0, ROCE_XC_RETRANSMITS) + xh_counter(&h, 0,
			ROCE_XC_SR_RETRANSMITS) + xh_counter(&h, 1, ROCE_XC_DUP_READ);
	check_tx_modes(zc ? "zc run" : "copy run", zc ? ROCE_XC_TX_ZC : ROCE_XC_TX_COPY_PORT);
	RT_CHECK(zc ? zc_log.chained == zc_log.payload : zc_log.chained == 0,
			"zc %d: %u of %u payload frames chained", zc, zc_log.chained, zc_log.payload);
	h.tap = NULL;
	xh_settle(&h, MS);
	RT_CHECK(roce_mr_tx_refs(p.mr[0]) + roce_mr_tx_refs(p.mr[1]) == 0,
			"zc %d: references left: %u/%u", zc, roce_mr_tx_refs(p.mr[0]),
			roce_mr_tx_refs(p.mr[1]));
	xh_qp_destroy(&h, &p);
	xh_fini(&h);
}

/*
 * Zero-copy frames are the copied ones byte for byte: the same run (same seed, same losses,
 * so the same retransmissions and re-served READs) copied and zero-copy gives the same
 * frames in the same order, chained only in the zero-copy run, each a valid RoCE frame.
 */
static void
test_zc_frames(void)
{
	static struct zc_frame copied[ZC_FRAMES];
	uint64_t resent_copy, resent_zc;
	uint32_t n, i, diff = 0;
	uint8_t sr;

	for (sr = 0; sr < 2; sr++) {
		zc_run(0, sr, &resent_copy);
		n = zc_log.n;
		memcpy(copied, zc_log.f, n * sizeof(copied[0]));
		zc_run(1, sr, &resent_zc);
		RT_CHECK(zc_log.n == n && n < ZC_FRAMES, "sr %u: %u frames zero-copy, %u copied",
				sr, zc_log.n, n);
		for (i = 0; i < RTE_MIN(n, zc_log.n); i++)
			diff += copied[i].len != zc_log.f[i].len ||
				copied[i].hash != zc_log.f[i].hash;
		RT_CHECK(diff == 0, "sr %u: %u of %u frames differ", sr, diff, n);
		RT_CHECK(resent_copy == resent_zc && resent_zc != 0,
				"sr %u: %lu resends zero-copy, %lu copied (the loss must cause some)",
				sr, (unsigned long)resent_zc, (unsigned long)resent_copy);
	}
}

struct zc_delta {
	uint64_t base[ROCE_XC_NUM];
};

static void
zc_mark(struct zc_delta *d)
{
	roce_engine_counters(h.eng[0], d->base);
}

static uint64_t
zc_since(const struct zc_delta *d, enum roce_xport_counter c)
{
	return xh_counter(&h, 0, c) - d->base[c];
}

/* Post a WR of side 0 and wait for its completion. */
static void
zc_post_wait(struct xh_qp *p, struct roce_send_wr *wr, const char *what)
{
	struct roce_wc wc;

	wr->send_flags |= ROCE_SEND_SIGNALED;
	RT_CHECK(roce_post_send(p->qp[0], wr) == 0, "%s: post", what);
	if (one_wc(p->cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_SUCCESS, "%s: %s", what,
				roce_wc_status_str(wc.status));
}

/* A WRITE of @len bytes from @loff of side 0 to @roff of side 1, completed. */
static void
zc_write(struct xh_qp *p, uint64_t loff, uint64_t roff, uint32_t len, const char *what)
{
	struct roce_send_wr wr = { .opcode = ROCE_WR_RDMA_WRITE, .num_sge = 1,
		.sg_list = {{ roce_mr_iova(p->mr[0]) + loff, len, roce_mr_lkey(p->mr[0]) }},
		.remote_addr = roce_mr_iova(p->mr[1]) + roff, .rkey = roce_mr_rkey(p->mr[1]) };

	zc_post_wait(p, &wr, what);
}

/* Each reason for a copy, counted as such, the data right either way. */
static void
test_zc_reasons(void)
{
	struct xh_qp_conf c = { .mtu = ROCE_MTU_4096, .buf_len = 1u << 20 };
	struct rte_mempool *zp = xh_zc_pool();
	unsigned int nb_held = 0, k;
	struct roce_mr *plain;
	struct zc_delta d;
	struct xh_qp p;
	void **held;
	uint32_t lk;

	xh_init(&h, 52, NULL);
	xh_zc(&h, 4, 1000);
	RT_CHECK(xh_qp_connect(&h, &p, &c) == 0, "connect");
	fill(p.buf[0], 1u << 20, 9);
	lk = roce_mr_lkey(p.mr[0]);

	/* Below the minimum, then at it. */
	zc_mark(&d);
	zc_write(&p, 0, 0, 999, "999 bytes");
	RT_CHECK(zc_since(&d, ROCE_XC_TX_COPY_SHORT) == 1 && zc_since(&d, ROCE_XC_TX_ZC) == 0,
			"999 bytes: copied as short");
	zc_mark(&d);
	zc_write(&p, 0, 0, 1000, "1000 bytes");
	RT_CHECK(zc_since(&d, ROCE_XC_TX_ZC) == 1, "1000 bytes: zero-copy");

	/* Inline data is in no MR. */
	{
		struct roce_send_wr wr = { .opcode = ROCE_WR_RDMA_WRITE,
			.send_flags = ROCE_SEND_INLINE, .num_sge = 1,
			.sg_list = {{ roce_mr_iova(p.mr[0]), 64, lk }},
			.remote_addr = roce_mr_iova(p.mr[1]) + 4096, .rkey = roce_mr_rkey(p.mr[1]) };

		xh_zc(&h, 4, 0);
		zc_mark(&d);
		zc_post_wait(&p, &wr, "inline");
		RT_CHECK(zc_since(&d, ROCE_XC_TX_COPY_INLINE) == 1, "inline: copied");
		RT_CHECK(memcmp(p.buf[0], p.buf[1] + 4096, 64) == 0, "inline: data");
	}

	/* An MR not registered for DMA, over the same memory. */
	plain = roce_mr_reg(h.pd[0], p.buf[0], 65536, ROCE_ACCESS_LOCAL_WRITE, NULL);
	{
		struct roce_send_wr wr = { .opcode = ROCE_WR_RDMA_WRITE, .num_sge = 1,
			.sg_list = {{ roce_mr_iova(plain), 8192, roce_mr_lkey(plain) }},
			.remote_addr = roce_mr_iova(p.mr[1]) + 8192, .rkey = roce_mr_rkey(p.mr[1]) };

		zc_mark(&d);
		zc_post_wait(&p, &wr, "plain MR");
		RT_CHECK(zc_since(&d, ROCE_XC_TX_COPY_MR) == 2 && zc_since(&d, ROCE_XC_TX_ZC) == 0,
				"an MR without DMA: both packets copied");
		RT_CHECK(memcmp(p.buf[0], p.buf[1] + 8192, 8192) == 0, "plain MR: data");
		RT_CHECK(roce_mr_dereg(plain) == 0, "the plain MR goes");
	}

	/* Four segments on the port: two pieces fit (headers, 2, tail), three do not. */
	{
		struct roce_send_wr wr = { .opcode = ROCE_WR_RDMA_WRITE, .num_sge = 3,
			.sg_list = {{ roce_mr_iova(p.mr[0]), 100, lk },
				{ roce_mr_iova(p.mr[0]) + 1000, 200, lk },
				{ roce_mr_iova(p.mr[0]) + 2000, 300, lk }},
			.remote_addr = roce_mr_iova(p.mr[1]) + 65536, .rkey = roce_mr_rkey(p.mr[1]) };

		zc_mark(&d);
		zc_post_wait(&p, &wr, "3 SGEs");
		RT_CHECK(zc_since(&d, ROCE_XC_TX_COPY_SEGS) == 1, "3 pieces, 4 segments: copied");
		wr.num_sge = 2;
		zc_mark(&d);
		zc_post_wait(&p, &wr, "2 SGEs");
		RT_CHECK(zc_since(&d, ROCE_XC_TX_ZC) == 1, "2 pieces: zero-copy");
		RT_CHECK(memcmp(p.buf[1] + 65536, p.buf[0], 100) == 0 &&
				memcmp(p.buf[1] + 65636, p.buf[0] + 1000, 200) == 0, "SGE data");
	}

	/* No small mbuf left: copied, and zero-copy again once they are back. */
	held = malloc(rte_mempool_avail_count(zp) * sizeof(*held));
	while (held != NULL && rte_mempool_get(zp, &held[nb_held]) == 0)
		nb_held++;
	zc_mark(&d);
	zc_write(&p, 0, 131072, 3 * 4096, "pool empty");
	RT_CHECK(zc_since(&d, ROCE_XC_TX_COPY_NOMBUF) == 3 && zc_since(&d, ROCE_XC_TX_NOMBUF) ==
			0, "the pool empty: 3 packets copied, none lost");
	for (k = 0; k < nb_held; k++)
		rte_mempool_put(zp, held[k]);
	free(held);
	zc_mark(&d);
	zc_write(&p, 0, 262144, 3 * 4096, "pool back");
	RT_CHECK(zc_since(&d, ROCE_XC_TX_ZC) == 3, "then zero-copy again");
	RT_CHECK(memcmp(p.buf[1] + 131072, p.buf[0], 3 * 4096) == 0 &&
			memcmp(p.buf[1] + 262144, p.buf[0], 3 * 4096) == 0, "data, both ways");

	/* A port set back to copying, and one past the table. */
	{
		struct roce_tx_zc off = { 0 };

		RT_CHECK(roce_engine_set_tx_zc(h.eng[0], ROCE_ENGINE_MAX_PORTS, &off) == -EINVAL,
				"a port past the table: refused");
		RT_CHECK(roce_engine_set_tx_zc(h.eng[0], 0, &off) == 0, "port 0 copies");
		zc_mark(&d);
		zc_write(&p, 0, 0, 4096, "copying port");
		RT_CHECK(zc_since(&d, ROCE_XC_TX_COPY_PORT) == 1, "a copying port: copied");
	}
	xh_qp_destroy(&h, &p);
	xh_fini(&h);
	{
		/* An engine without a pool takes no zero-copy setting. */
		struct roce_engine_conf ec = { .mp = h.mp };
		struct roce_tx_zc on = { .max_segs = 8 };
		struct roce_engine *e = roce_engine_create(&ec);

		RT_CHECK(e != NULL && roce_engine_set_tx_zc(e, 0, &on) == -EINVAL,
				"zero-copy without zc_mp: refused");
		roce_engine_destroy(e);
	}
}

/* Take every frame engine @side has ready, without sending it: the test holds them. */
static unsigned int
zc_hold(int side, struct rte_mbuf **held, unsigned int max)
{
	unsigned int n = 0;

	roce_engine_poll(h.eng[side], h.now);
	while (n < max && roce_engine_tx(h.eng[side], held + n, 1) == 1)
		n++;
	return n;
}

/*
 * An MR cannot be freed while packets reference its memory: deregistration says -EBUSY with
 * the key gone, the memory stays readable by the packets (and their clones), and it goes once
 * the last of them is freed. Under ASan a read of freed memory would show.
 */
static void
test_zc_dereg(void)
{
	struct xh_qp_conf c = { .mtu = ROCE_MTU_4096, .buf_len = 1u << 20 };
	struct rte_mbuf *held[64], *clone;
	static uint8_t bytes[8192], again[8192];
	unsigned int n, i, k;
	struct roce_wc wc;
	struct xh_qp p;
	uint32_t key, blen;

	xh_init(&h, 53, NULL);
	xh_zc(&h, 16, 0);
	RT_CHECK(xh_qp_connect(&h, &p, &c) == 0, "connect");
	fill(p.buf[0], 65536, 4);

	/* Requester: a 64 KiB WRITE's 16 packets built and held. */
	RT_CHECK(post(&p, 0, ROCE_WR_RDMA_WRITE, 0, 0, 65536, 1) == 0, "post");
	n = zc_hold(0, held, RTE_DIM(held));
	RT_CHECK(n == 16 && roce_mr_tx_refs(p.mr[0]) == 16, "%u packets held, %u references", n,
			roce_mr_tx_refs(p.mr[0]));
	key = roce_mr_lkey(p.mr[0]);
	roce_engine_mr_revoke(h.eng[0], p.mr[0]);
	RT_CHECK(roce_mr_dereg(p.mr[0]) == -EBUSY && roce_mr_find(key) == NULL,
			"dereg with 16 packets in flight: EBUSY, the key gone");
	RT_CHECK(roce_pd_free(h.pd[0]) == -EBUSY, "its PD stays");
	clone = rte_pktmbuf_clone(held[3], h.mp);
	RT_CHECK(clone != NULL && roce_mr_tx_refs(p.mr[0]) == 17, "a clone: %u references",
			roce_mr_tx_refs(p.mr[0]));
	blen = rt_mbuf_copy(held[3], bytes, sizeof(bytes));
	for (i = 0; i < n; i++)
		rte_pktmbuf_free(held[i]);
	RT_CHECK(roce_mr_tx_refs(p.mr[0]) == 1 && roce_mr_dereg(p.mr[0]) == -EBUSY,
			"the clone alone keeps it: %u", roce_mr_tx_refs(p.mr[0]));
	/* The clone still reads the MR's bytes, and they are what went. */
	RT_CHECK(clone != NULL && rt_mbuf_copy(clone, again, sizeof(again)) == blen &&
			memcmp(bytes, again, blen) == 0, "the clone's frame is the original's");
	rte_pktmbuf_free(clone);
	RT_CHECK(roce_mr_tx_refs(p.mr[0]) == 0 && roce_mr_dereg(p.mr[0]) == 0,
			"no reference left: deregistered");
	free(p.buf[0]);
	p.buf[0] = NULL;
	p.mr[0] = NULL;
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_RETRY_EXC_ERR || wc.status == ROCE_WC_LOC_PROT_ERR,
				"the WRITE whose packets never left fails: %s",
				roce_wc_status_str(wc.status));
	xh_qp_destroy(&h, &p);
	xh_fini(&h);

	/* Responder: READ responses built and held, its MR deregistered under them. */
	xh_init(&h, 54, NULL);
	xh_zc(&h, 16, 0);
	RT_CHECK(xh_qp_connect(&h, &p, &c) == 0, "connect");
	RT_CHECK(post(&p, 0, ROCE_WR_RDMA_READ, 0, 0, 8 * 4096, 2) == 0, "post read");
	for (k = 0; k < 10 && (n = zc_hold(1, held, RTE_DIM(held))) == 0; k++)
		xh_step(&h, 1000);
	RT_CHECK(n == 8 && roce_mr_tx_refs(p.mr[1]) == 8, "%u responses held, %u references",
			n, roce_mr_tx_refs(p.mr[1]));
	roce_mr_invalidate(p.mr[1]);
	roce_engine_mr_revoke(h.eng[1], p.mr[1]);
	RT_CHECK(roce_mr_dereg(p.mr[1]) == -EBUSY, "responder's MR: EBUSY");
	/* Delivered after all: the requester reads them from the still-present memory. */
	roce_classify_burst(held, (uint16_t)n, ROCE_CLASSIFY_DEFER_ICRC, &h.wire);
	roce_engine_rx_wire(h.eng[0], held, (uint16_t)n, h.now, &h.wire);
	RT_CHECK(roce_mr_tx_refs(p.mr[1]) == 0 && roce_mr_dereg(p.mr[1]) == 0,
			"delivered and freed: deregistered");
	RT_CHECK(memcmp(p.buf[0], p.buf[1], 8 * 4096) == 0, "the READ's data arrived");
	free(p.buf[1]);
	p.buf[1] = NULL;
	p.mr[1] = NULL;
	xh_qp_destroy(&h, &p);
	xh_fini(&h);
}

static void
post_atomic(struct xh_qp *p, enum roce_wr_opcode op, uint64_t roff, uint64_t cmp_add,
		uint64_t swap, uint64_t wr_id)
{
	struct roce_send_wr wr = {
		.wr_id = wr_id,
		.opcode = op,
		.send_flags = ROCE_SEND_SIGNALED,
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(p->mr[0]), 8, roce_mr_lkey(p->mr[0]) }},
		.remote_addr = roce_mr_iova(p->mr[1]) + roff,
		.rkey = roce_mr_rkey(p->mr[1]),
		.compare_add = cmp_add,
		.swap = swap,
	};

	RT_CHECK(roce_post_send(p->qp[0], &wr) == 0, "post atomic");
}

static uint64_t
u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void
test_atomics(void)
{
	struct xh_qp p;
	struct roce_wc wc;
	uint64_t v = 0x5555555555555555ull;

	xh_init(&h, 20, NULL);
	RT_CHECK(xh_qp_connect(&h, &p, NULL) == 0, "connect");
	memcpy(p.buf[1] + 64, &v, 8);
	post_atomic(&p, ROCE_WR_ATOMIC_FETCH_AND_ADD, 64, 1, 0, 1);
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_SUCCESS && wc.opcode == ROCE_WC_FETCH_ADD &&
				u64_at(p.buf[0]) == v && u64_at(p.buf[1] + 64) == v + 1,
				"FAA: %s orig %lx now %lx", roce_wc_status_str(wc.status),
				(unsigned long)u64_at(p.buf[0]), (unsigned long)u64_at(p.buf[1] + 64));
	post_atomic(&p, ROCE_WR_ATOMIC_CMP_AND_SWP, 64, v + 1, 7, 2);
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_SUCCESS && wc.opcode == ROCE_WC_COMP_SWAP &&
				u64_at(p.buf[0]) == v + 1 && u64_at(p.buf[1] + 64) == 7,
				"CAS hit");
	post_atomic(&p, ROCE_WR_ATOMIC_CMP_AND_SWP, 64, 1234, 9, 3);
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_SUCCESS && u64_at(p.buf[0]) == 7 &&
				u64_at(p.buf[1] + 64) == 7, "CAS miss leaves the value");
	xh_qp_destroy(&h, &p);
	xh_fini(&h);
}

/*
 * Mixed traffic over 8 QPs under impairment: every message completes exactly once, in
 * order, with its data; every receive completes once, in order; fetch-and-adds sum up.
 */
#define MIX_QPS 8
#define SLOT (16u << 10)

struct mix_state {
	struct xh_qp p[MIX_QPS];
	uint32_t posted[MIX_QPS], done[MIX_QPS], recv_posted[MIX_QPS], recv_done[MIX_QPS];
	uint32_t faa[MIX_QPS];
	uint32_t total, completed;
	uint32_t len[MIX_QPS][256];
	uint8_t op[MIX_QPS][256];
	uint32_t recv_msg[MIX_QPS][256];   /* message each posted receive is for */
	uint64_t rng;
	unsigned int errors;
};

static uint32_t
mix_rand(struct mix_state *st)
{
	st->rng = st->rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(st->rng >> 33);
}

/* Message @n of QP @q goes to slot n % 64 of the peer; READs come back to slot 64 + n % 64. */
static void
mix_post(struct mix_state *st, unsigned int q)
{
	static const enum roce_wr_opcode ops[] = {
		ROCE_WR_RDMA_WRITE, ROCE_WR_SEND, ROCE_WR_RDMA_READ, ROCE_WR_RDMA_WRITE_WITH_IMM,
		ROCE_WR_ATOMIC_FETCH_AND_ADD, ROCE_WR_SEND_WITH_IMM,
	};
	struct xh_qp *p = &st->p[q];
	uint32_t n = st->posted[q], slot = n % 64;
	enum roce_wr_opcode op = ops[mix_rand(st) % RTE_DIM(ops)];
	uint32_t len = mix_rand(st) % 3 ? mix_rand(st) % 2048 : mix_rand(st) % SLOT;

	if (op == ROCE_WR_ATOMIC_FETCH_AND_ADD) {
		struct roce_send_wr wr = {
			.wr_id = n, .opcode = op, .send_flags = ROCE_SEND_SIGNALED, .num_sge = 1,
			.sg_list = {{ roce_mr_iova(p->mr[0]) + 200 * SLOT + slot * 8, 8,
				roce_mr_lkey(p->mr[0]) }},
			.remote_addr = roce_mr_iova(p->mr[1]) + 199 * SLOT,
			.rkey = roce_mr_rkey(p->mr[1]), .compare_add = 1,
		};

		st->faa[q]++;
		RT_CHECK(roce_post_send(p->qp[0], &wr) == 0, "post FAA");
		len = 8;
	} else if (op == ROCE_WR_RDMA_READ) {
		fill(p->buf[1] + (128 + slot) * SLOT, len, n * 31 + q);
		RT_CHECK(post(p, 0, op, (64 + slot) * SLOT, (128 + slot) * SLOT, len, n) == 0,
				"post READ");
	} else {
		fill(p->buf[0] + slot * SLOT, len, n * 31 + q);
		if (op == ROCE_WR_SEND || op == ROCE_WR_SEND_WITH_IMM ||
				op == ROCE_WR_RDMA_WRITE_WITH_IMM) {
			RT_CHECK(post_recv(p, 1, (64 + slot) * SLOT, SLOT, st->recv_posted[q]) == 0,
					"post_recv");
			st->recv_msg[q][st->recv_posted[q] % 256] = n;
			st->recv_posted[q]++;
		}
		RT_CHECK(post(p, 0, op, slot * SLOT, slot * SLOT, len, n) == 0, "post %d", op);
	}
	st->len[q][n % 256] = len;
	st->op[q][n % 256] = op;
	st->posted[q]++;
}

/* Check the data of message @n of QP @q once it completed. */
static void
mix_verify(struct mix_state *st, unsigned int q, uint32_t n)
{
	struct xh_qp *p = &st->p[q];
	uint32_t slot = n % 64, len = st->len[q][n % 256];
	enum roce_wr_opcode op = st->op[q][n % 256];
	const uint8_t *want, *got;

	switch (op) {
	case ROCE_WR_ATOMIC_FETCH_AND_ADD:
		return;
	case ROCE_WR_RDMA_READ:
		want = p->buf[1] + (128 + slot) * SLOT;
		got = p->buf[0] + (64 + slot) * SLOT;
		break;
	case ROCE_WR_RDMA_WRITE:
		want = p->buf[0] + slot * SLOT;
		got = p->buf[1] + slot * SLOT;
		break;
	default:
		/* SEND and WRITE_WITH_IMM are checked at their receive completion. */
		return;
	}
	if (memcmp(want, got, len) != 0 && st->errors++ < 5)
		RT_CHECK(0, "qp %u msg %u op %d len %u: data differs", q, n, op, len);
}

/* A receive completion: the message it is for, its length, immediate and data. */
static void
mix_verify_recv(struct mix_state *st, unsigned int q, const struct roce_wc *wc)
{
	struct xh_qp *p = &st->p[q];
	uint32_t n = st->recv_msg[q][wc->wr_id % 256], slot = n % 64, len = st->len[q][n % 256];
	enum roce_wr_opcode op = st->op[q][n % 256];
	int imm = op != ROCE_WR_SEND;
	const uint8_t *got = p->buf[1] + (op == ROCE_WR_RDMA_WRITE_WITH_IMM ? slot :
			64 + slot) * SLOT;

	if (wc->status != ROCE_WC_SUCCESS)
		return;
	if ((wc->byte_len != len || wc->opcode != (op == ROCE_WR_RDMA_WRITE_WITH_IMM ?
			ROCE_WC_RECV_RDMA_WITH_IMM : ROCE_WC_RECV) ||
			!!(wc->wc_flags & ROCE_WC_WITH_IMM) != imm ||
			(imm && wc->imm_data != 0x12345678) ||
			memcmp(p->buf[0] + slot * SLOT, got, len) != 0) && st->errors++ < 5)
		RT_CHECK(0, "qp %u: recv for msg %u op %d len %u: byte_len %u opcode %d flags %x "
				"or data differ", q, n, op, len, wc->byte_len, wc->opcode,
				wc->wc_flags);
}

static void
mix_drain(struct mix_state *st)
{
	struct roce_wc wc[64];
	unsigned int q;
	int n, i;

	for (q = 0; q < MIX_QPS; q++) {
		struct xh_qp *p = &st->p[q];

		n = roce_cq_poll(p->cq[0], wc, 64);
		for (i = 0; i < n; i++) {
			if ((wc[i].status != ROCE_WC_SUCCESS || wc[i].wr_id != st->done[q]) &&
					st->errors++ < 5)
				RT_CHECK(0, "qp %u: completion %lu status %s, expected %u", q,
						(unsigned long)wc[i].wr_id,
						roce_wc_status_str(wc[i].status), st->done[q]);
			mix_verify(st, q, st->done[q]);
			st->done[q]++;
			st->completed++;
		}
		n = roce_cq_poll(p->cq[1], wc, 64);
		for (i = 0; i < n; i++) {
			if ((wc[i].status != ROCE_WC_SUCCESS || wc[i].wr_id != st->recv_done[q]) &&
					st->errors++ < 5)
				RT_CHECK(0, "qp %u: recv %lu status %s, expected %u", q,
						(unsigned long)wc[i].wr_id,
						roce_wc_status_str(wc[i].status), st->recv_done[q]);
			mix_verify_recv(st, q, &wc[i]);
			st->recv_done[q]++;
		}
	}
}

/* Extension (SR) packets each side sent. */
static uint64_t ext_seen[2];

static enum xh_verdict
ext_tap(void *arg, int from, struct rte_mbuf *m)
{
	const struct roce_bth *bth = rte_pktmbuf_mtod_offset(m, const struct roce_bth *,
			14 + 20 + 8);

	RTE_SET_USED(arg);
	if (roce_opcode_info[bth->opcode].mask & ROCE_M_SR)
		ext_seen[from]++;
	return XH_PASS;
}

/* run_mix() with zero-copy transmit on. */
static uint8_t mix_zc;

static void
run_mix(const char *name, const struct xh_impair *imp, uint32_t total, uint8_t sr,
		uint32_t window)
{
	static struct mix_state st;
	struct xh_qp_conf conf = { .buf_len = 256 * SLOT, .timeout = 8, .sr = sr,
		.sr_rto_us = sr ? 50 : 0, .max_inflight = window };
	uint64_t deadline;
	unsigned int q;

	total -= total % MIX_QPS;
	memset(&st, 0, sizeof(st));
	st.rng = 77;
	xh_init(&h, 30, NULL);
	if (mix_zc)
		xh_zc(&h, 16, 0);
	h.impair[0] = h.impair[1] = *imp;
	h.tap = ext_tap;
	memset(ext_seen, 0, sizeof(ext_seen));
	for (q = 0; q < MIX_QPS; q++)
		RT_CHECK(xh_qp_connect(&h, &st.p[q], &conf) == 0, "connect %u", q);
	deadline = h.now + 600 * SEC;
	while (st.completed < total && h.now < deadline && st.errors == 0) {
		for (q = 0; q < MIX_QPS; q++)
			while (st.posted[q] - st.done[q] < 32 &&
					st.posted[q] < total / MIX_QPS)
				mix_post(&st, q);
		xh_step(&h, 1000);
		mix_drain(&st);
	}
	RT_CHECK(st.completed == total, "%s: %u of %u messages completed", name, st.completed,
			total);
	for (q = 0; q < MIX_QPS; q++) {
		RT_CHECK(st.recv_done[q] == st.recv_posted[q], "%s: qp %u recv %u of %u", name, q,
				st.recv_done[q], st.recv_posted[q]);
		RT_CHECK(u64_at(st.p[q].buf[1] + 199 * SLOT) == st.faa[q],
				"%s: qp %u fetch-add total %lu, want %u", name, q,
				(unsigned long)u64_at(st.p[q].buf[1] + 199 * SLOT), st.faa[q]);
	}
	if (mix_zc)
		check_tx_modes(name, ROCE_XC_TX_ZC);
	printf("  %s%s %-12s %u msgs, %lu pkts dropped, %lu retransmitted, %lu timeouts, "
			"%.1f ms virtual\n", sr ? "SR " : "GBN", mix_zc ? " zc" : "", name,
			st.completed,
			(unsigned long)h.dropped,
			(unsigned long)(xh_counter(&h, 0, ROCE_XC_RETRANSMITS) +
				xh_counter(&h, 1, ROCE_XC_RETRANSMITS)),
			(unsigned long)(xh_counter(&h, 0, ROCE_XC_TIMEOUTS) +
				xh_counter(&h, 1, ROCE_XC_TIMEOUTS)), h.now / 1e6);
	/* Either mode: nothing of the other's wire format. */
	RT_CHECK((xh_counter(&h, 0, ROCE_XC_SR_SACK_TX) + xh_counter(&h, 1, ROCE_XC_SR_SACK_TX)
			!= 0) == sr, "%s: SR ACKs with SR only", name);
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_SR_REJECT) + xh_counter(&h, 1, ROCE_XC_SR_REJECT) == 0,
			"%s: no extension packet refused", name);
	RT_CHECK((ext_seen[0] != 0 && ext_seen[1] != 0) == sr &&
			(ext_seen[0] + ext_seen[1] == 0) == !sr,
			"%s: extension opcodes sent %lu/%lu", name, (unsigned long)ext_seen[0],
			(unsigned long)ext_seen[1]);
	h.tap = NULL;
	for (q = 0; q < MIX_QPS; q++)
		xh_qp_destroy(&h, &st.p[q]);
	xh_fini(&h);
}

/* Every impairment, in go-back-N then selective repeat: same checks, same seeds. */
static void
impairment(uint8_t sr)
{
	const uint32_t total = getenv("ROCE_MIX_MSGS") ? atoi(getenv("ROCE_MIX_MSGS")) : 10000;
	static const struct {
		const char *name;
		struct xh_impair imp;
	} cases[] = {
		{ "clean", { .delay_ns = 2000 } },
		{ "loss 0.1%", { .delay_ns = 2000, .loss = 0.001 } },
		{ "loss 1%", { .delay_ns = 2000, .loss = 0.01 } },
		{ "loss 5%", { .delay_ns = 2000, .loss = 0.05 } },
		/* Bursts of 4 packets on average, about 1% of packets lost. */
		{ "bursty ~1%", { .delay_ns = 2000, .ge_p = 0.0025, .ge_r = 0.25,
			.ge_loss = 1.0 } },
		{ "reorder 5%", { .delay_ns = 2000, .reorder = 0.05, .reorder_ns = 5000 } },
		{ "dup 5%", { .delay_ns = 2000, .dup = 0.05 } },
	};
	unsigned int i;

	for (i = 0; i < RTE_DIM(cases); i++)
		run_mix(cases[i].name, &cases[i].imp, total, sr, 0);
	/* A window of 8 PSNs: READs of up to 16 go as several requests, resent by range. */
	run_mix("1%, win 8", &cases[2].imp, total, sr, 8);
}

static void
test_impairment(void)
{
	impairment(0);
}

/* Mixed traffic under loss, bursts, reordering and duplicates with zero-copy transmit. */
static void
test_zc_impairment(void)
{
	static const struct xh_impair cases[] = {
		{ .delay_ns = 2000, .loss = 0.01 },
		{ .delay_ns = 2000, .ge_p = 0.0025, .ge_r = 0.25, .ge_loss = 1.0 },
		{ .delay_ns = 2000, .reorder = 0.05, .reorder_ns = 5000 },
		{ .delay_ns = 2000, .dup = 0.05 },
	};
	static const char *const names[] = { "loss 1%", "bursty ~1%", "reorder 5%", "dup 5%" };
	unsigned int i;
	uint8_t sr;

	mix_zc = 1;
	for (sr = 0; sr < 2; sr++)
		for (i = 0; i < RTE_DIM(cases); i++)
			run_mix(names[i], &cases[i], 4000, sr, 0);
	mix_zc = 0;
}

static void
test_sr_impairment(void)
{
	impairment(1);
}

/* ---- error paths ---- */

/* A tap that drops or rewrites chosen packets. */
struct tap_rule {
	int from;               /* sending side */
	uint8_t opcode;         /* match this BTH opcode (0xFF: any) */
	int skip;               /* let this many matches pass first */
	int count;              /* then act on this many (-1: all) */
	uint8_t new_opcode;     /* rewrite to this opcode instead of dropping (0: drop) */
	int hits;
	struct roce_pkt_desc seen; /* fields of the last matched packet: opcode, psn, va, len */
	unsigned int log_n;
	uint8_t log_op[64];
	uint32_t log_psn[64];
	uint64_t log_va[64];
	uint32_t log_len[64];
};

static struct tap_rule rule;

static const struct roce_bth *
tap_bth(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod_offset(m, const struct roce_bth *, 14 + 20 + 8);
}

static enum xh_verdict
tap_fn(void *arg, int from, struct rte_mbuf *m)
{
	struct tap_rule *r = arg;
	struct roce_bth *bth = (struct roce_bth *)(uintptr_t)tap_bth(m);
	const struct roce_opcode_info *info = &roce_opcode_info[bth->opcode];

	if (from == r->from && r->log_n < RTE_DIM(r->log_op)) {
		const struct roce_reth *reth = (const void *)((const uint8_t *)bth +
				info->offset[ROCE_HDR_RETH]);

		r->log_op[r->log_n] = bth->opcode;
		r->log_psn[r->log_n] = roce_bth_psn(bth);
		r->log_va[r->log_n] = info->mask & ROCE_M_RETH ? roce_reth_va(reth) : 0;
		r->log_len[r->log_n] = info->mask & ROCE_M_RETH ? roce_reth_len(reth) : 0;
		r->log_n++;
	}
	if (from != r->from || (r->opcode != 0xFF && bth->opcode != r->opcode))
		return XH_PASS;
	if (r->skip > 0) {
		r->skip--;
		return XH_PASS;
	}
	if (r->count == 0)
		return XH_PASS;
	if (r->count > 0)
		r->count--;
	r->hits++;
	r->seen.psn = roce_bth_psn(bth);
	if (r->new_opcode == 0)
		return XH_DROP;
	/* Rewrite the opcode and make the ICRC right again, as a buggy peer would. */
	bth->opcode = r->new_opcode;
	roce_icrc_write(m, m->pkt_len - 4, roce_icrc_compute(m, 14, 0, m->pkt_len - 4));
	return XH_PASS;
}

static void
tap_set(int from, uint8_t opcode, int skip, int count, uint8_t new_opcode)
{
	memset(&rule, 0, sizeof(rule));
	rule.from = from;
	rule.opcode = opcode;
	rule.skip = skip;
	rule.count = count;
	rule.new_opcode = new_opcode;
	h.tap = tap_fn;
	h.tap_arg = &rule;
}

/* One connected pair with optional settings; side 1 gets a receive posted. */
static void
err_setup(struct xh_qp *p, const struct xh_qp_conf *conf, uint64_t seed)
{
	xh_init(&h, seed, NULL);
	RT_CHECK(xh_qp_connect(&h, p, conf) == 0, "connect");
	memset(&rule, 0, sizeof(rule));
}

static void
err_teardown(struct xh_qp *p)
{
	h.tap = NULL;
	xh_qp_destroy(&h, p);
	xh_fini(&h);
}

/* Post @op and expect the requester's completion @want; @return the completion. */
static struct roce_wc
expect_wc(struct xh_qp *p, enum roce_wr_opcode op, uint64_t roff, uint32_t len,
		enum roce_wc_status want, const char *what)
{
	struct roce_wc wc = { .status = ROCE_WC_GENERAL_ERR };

	RT_CHECK(post(p, 0, op, 0, roff, len, 5) == 0, "%s: post", what);
	if (one_wc(p->cq[0], &wc, 60 * SEC))
		RT_CHECK(wc.status == want, "%s: status %s, want %s", what,
				roce_wc_status_str(wc.status), roce_wc_status_str(want));
	return wc;
}

static void
expect_state(struct xh_qp *p, int side, enum roce_qp_state want, const char *what)
{
	RT_CHECK(roce_qp_state(p->qp[side]) == want, "%s: side %d state %s, want %s", what, side,
			roce_qp_state_name(roce_qp_state(p->qp[side])), roce_qp_state_name(want));
}

/* Side 1's posted receive must come back flushed once its QP is in error. */
static void
expect_recv_flushed(struct xh_qp *p, const char *what)
{
	struct roce_wc wc;

	if (one_wc(p->cq[1], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_WR_FLUSH_ERR, "%s: recv status %s", what,
				roce_wc_status_str(wc.status));
}

/*
 * Positive ACKs are coalesced to one per QP and rx burst, and responses still leave in PSN
 * order: an ACK held for earlier WRITEs goes before a READ's response or an atomic's ACK.
 */
static void
test_ack_coalescing(void)
{
	static const enum roce_wr_opcode ops[] = {
		[24] = ROCE_WR_RDMA_READ, [33] = ROCE_WR_ATOMIC_FETCH_AND_ADD,
	};
	const unsigned int nb = 42;
	struct roce_wc wc[64];
	struct xh_qp p;
	unsigned int i, acks;
	uint8_t sr;

	for (sr = 0; sr < 2; sr++) {
		struct xh_qp_conf c = { .sr = sr };
		int n = 0, k;

		err_setup(&p, &c, 300 + sr);
		tap_set(1, 0xFF, 0, 0, 0);
		for (i = 0; i < nb; i++) {
			enum roce_wr_opcode op = i < RTE_DIM(ops) && ops[i] != 0 ? ops[i] :
				ROCE_WR_RDMA_WRITE;

			RT_CHECK(post(&p, 0, op, 64 * i, 64 * i, op == ROCE_WR_RDMA_WRITE ? 64 : 8,
					i) == 0, "post %u", i);
		}
		while (n < (int)nb && (k = xh_poll_cq(&h, p.cq[0], wc + n, nb - n, SEC)) > 0)
			n += k;
		RT_CHECK(n == (int)nb, "sr %u: %d of %u completions", sr, n, nb);
		for (k = 0; k < n; k++)
			RT_CHECK(wc[k].status == ROCE_WC_SUCCESS && wc[k].wr_id == (uint64_t)k,
					"sr %u: completion %d: wr_id %lu %s", sr, k,
					(unsigned long)wc[k].wr_id, roce_wc_status_str(wc[k].status));
		for (i = 0, acks = 0; i < rule.log_n; i++) {
			acks += !(roce_opcode_info[rule.log_op[i]].mask & ROCE_M_READ);
			RT_CHECK(i == 0 || roce_psn_diff(rule.log_psn[i], rule.log_psn[i - 1]) >= 0,
					"sr %u: response %u (opcode %#x) PSN %u after %u", sr, i,
					rule.log_op[i], rule.log_psn[i], rule.log_psn[i - 1]);
		}
		/* 42 messages in one or two rx bursts: the two atomic/READ boundaries, a few
		 * ACKs; not one per message. */
		RT_CHECK(acks >= 2 && acks <= 8, "sr %u: %u ACKs for %u messages", sr, acks, nb);
		RT_CHECK(xh_counter(&h, 0, ROCE_XC_RETRANSMITS) == 0, "sr %u: no resend", sr);
		err_teardown(&p);
	}
}

struct until_cnt {
	int side;
	enum roce_xport_counter c;
	uint64_t at_least;
};

static int
until_cnt(void *arg)
{
	const struct until_cnt *u = arg;

	return xh_counter(&h, u->side, u->c) >= u->at_least;
}

/*
 * An MR deregistered under a multi-packet WRITE into it and under a READ response stream
 * out of it: the responder drops what it held (roce_engine_mr_revoke), the next packet of
 * each ends in a remote access error, and nothing lands after the revocation.
 */
static void
test_mr_revoke(void)
{
	const uint32_t len = 1u << 20;
	struct xh_qp_conf c = { .buf_len = 2u << 20 };
	struct until_cnt u = { 1, ROCE_XC_RX_PKTS, 16 };
	struct roce_wc wc;
	struct xh_qp p;
	uint64_t landed;
	uint32_t i, untouched = 0;

	/* WRITE: side 0 -> side 1's MR, revoked after 16 of its 1024 packets. */
	err_setup(&p, &c, 400);
	RT_CHECK(post(&p, 0, ROCE_WR_RDMA_WRITE, 0, 0, len, 1) == 0, "post write");
	memset(p.buf[0], 0xA5, len);
	RT_CHECK(xh_run(&h, until_cnt, &u, SEC) == 0, "the WRITE started");
	roce_mr_invalidate(p.mr[1]);
	roce_engine_mr_revoke(h.eng[1], p.mr[1]);
	landed = xh_counter(&h, 1, ROCE_XC_RX_BYTES);
	if (one_wc(p.cq[0], &wc, 10 * SEC))
		RT_CHECK(wc.status == ROCE_WC_REM_ACCESS_ERR, "write: %s",
				roce_wc_status_str(wc.status));
	expect_state(&p, 1, ROCE_QPS_ERR, "write into a revoked MR");
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_NAK_ACC_TX) == 1, "one remote access NAK");
	for (i = landed; i < len; i++)
		untouched += p.buf[1][i] == 0;
	RT_CHECK(landed < len && untouched == len - landed,
			"%lu bytes had landed; %u of the rest written after the revocation",
			(unsigned long)landed, len - (uint32_t)landed - untouched);
	err_teardown(&p);

	/* READ: side 0 reads side 1's MR, revoked after 16 response packets went out. */
	err_setup(&p, &c, 401);
	u = (struct until_cnt){ 1, ROCE_XC_TX_RESP, 16 };
	RT_CHECK(post(&p, 0, ROCE_WR_RDMA_READ, 0, 0, len, 2) == 0, "post read");
	RT_CHECK(xh_run(&h, until_cnt, &u, SEC) == 0, "the READ started");
	roce_mr_invalidate(p.mr[1]);
	roce_engine_mr_revoke(h.eng[1], p.mr[1]);
	if (one_wc(p.cq[0], &wc, 10 * SEC))
		RT_CHECK(wc.status == ROCE_WC_REM_ACCESS_ERR, "read: %s",
				roce_wc_status_str(wc.status));
	expect_state(&p, 1, ROCE_QPS_ERR, "read from a revoked MR");
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_NAK_ACC_TX) == 1, "one remote access NAK");
	err_teardown(&p);
}

/*
 * A fatal NAK waits for the READ responses before it (PSN order): a READ then a WRITE with a
 * bad rkey, posted together, complete with success then a remote access error.
 */
static void
test_err_behind_read(void)
{
	struct xh_qp_conf c = { 0 };
	struct roce_send_wr wr;
	struct roce_wc wc[2];
	struct xh_qp p;
	int n = 0, k;

	err_setup(&p, &c, 402);
	memset(p.buf[1], 0x5A, 65536);
	RT_CHECK(post(&p, 0, ROCE_WR_RDMA_READ, 0, 0, 65536, 1) == 0, "post read");
	wr = (struct roce_send_wr){
		.wr_id = 2, .opcode = ROCE_WR_RDMA_WRITE, .send_flags = ROCE_SEND_SIGNALED,
		.num_sge = 1, .sg_list = {{ roce_mr_iova(p.mr[0]), 64, roce_mr_lkey(p.mr[0]) }},
		.remote_addr = roce_mr_iova(p.mr[1]), .rkey = roce_mr_rkey(p.mr[1]) ^ 0xFF,
	};
	RT_CHECK(roce_post_send(p.qp[0], &wr) == 0, "post write");
	while (n < 2 && (k = xh_poll_cq(&h, p.cq[0], wc + n, 2 - n, 10 * SEC)) > 0)
		n += k;
	RT_CHECK(n == 2 && wc[0].wr_id == 1 && wc[0].status == ROCE_WC_SUCCESS &&
			wc[1].wr_id == 2 && wc[1].status == ROCE_WC_REM_ACCESS_ERR,
			"%d completions: %s, %s", n, n > 0 ? roce_wc_status_str(wc[0].status) : "-",
			n > 1 ? roce_wc_status_str(wc[1].status) : "-");
	RT_CHECK(p.buf[0][0] == 0x5A && p.buf[0][65535] == 0x5A, "the READ's data");
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_NAK_ACC_TX) == 1, "one access NAK");
	expect_state(&p, 1, ROCE_QPS_ERR, "after the NAK");
	err_teardown(&p);
}

static void
test_err_access(void)
{
	struct xh_qp_conf ro = { .mr_access = ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_READ };
	struct xh_qp_conf noqp = { .access = ROCE_ACCESS_REMOTE_READ };
	struct roce_send_wr wr;
	struct roce_wc wc;
	struct xh_qp p;

	/* rkey violation */
	err_setup(&p, NULL, 40);
	RT_CHECK(post_recv(&p, 1, 0, 64, 1) == 0, "recv");
	wr = (struct roce_send_wr){
		.wr_id = 9, .opcode = ROCE_WR_RDMA_WRITE, .num_sge = 1,
		.sg_list = {{ roce_mr_iova(p.mr[0]), 64, roce_mr_lkey(p.mr[0]) }},
		.remote_addr = roce_mr_iova(p.mr[1]), .rkey = roce_mr_rkey(p.mr[1]) ^ 0xFFFF00,
	};
	RT_CHECK(roce_post_send(p.qp[0], &wr) == 0, "post");
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_REM_ACCESS_ERR && wc.vendor_err == 0x62,
				"bad rkey: %s %x", roce_wc_status_str(wc.status), wc.vendor_err);
	expect_state(&p, 0, ROCE_QPS_ERR, "bad rkey");
	expect_state(&p, 1, ROCE_QPS_ERR, "bad rkey");
	expect_recv_flushed(&p, "bad rkey");
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_NAK_ACC_TX) == 1, "NAK counted");
	err_teardown(&p);

	/* beyond the MR */
	err_setup(&p, NULL, 41);
	expect_wc(&p, ROCE_WR_RDMA_WRITE, p.len - 2048, 4096, ROCE_WC_REM_ACCESS_ERR, "oob");
	expect_state(&p, 1, ROCE_QPS_ERR, "oob");
	err_teardown(&p);
	err_setup(&p, NULL, 42);
	expect_wc(&p, ROCE_WR_RDMA_READ, p.len - 100, 101, ROCE_WC_REM_ACCESS_ERR, "read oob");
	err_teardown(&p);

	/* MR without REMOTE_WRITE: remote access error */
	err_setup(&p, &ro, 43);
	expect_wc(&p, ROCE_WR_RDMA_WRITE, 0, 64, ROCE_WC_REM_ACCESS_ERR, "mr access");
	err_teardown(&p);

	/* QP without REMOTE_WRITE: invalid request */
	err_setup(&p, &noqp, 44);
	expect_wc(&p, ROCE_WR_RDMA_WRITE, 0, 64, ROCE_WC_REM_INV_REQ_ERR, "qp access");
	expect_state(&p, 1, ROCE_QPS_ERR, "qp access");
	err_teardown(&p);

	/* Local protection: an lkey that is not ours. */
	err_setup(&p, NULL, 45);
	wr = (struct roce_send_wr){
		.wr_id = 9, .opcode = ROCE_WR_RDMA_WRITE, .num_sge = 1,
		.sg_list = {{ roce_mr_iova(p.mr[0]), 64, roce_mr_lkey(p.mr[1]) }},
		.remote_addr = roce_mr_iova(p.mr[1]), .rkey = roce_mr_rkey(p.mr[1]),
		.send_flags = ROCE_SEND_SIGNALED,
	};
	RT_CHECK(roce_post_send(p.qp[0], &wr) == 0, "post");
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_LOC_PROT_ERR, "lkey: %s",
				roce_wc_status_str(wc.status));
	expect_state(&p, 0, ROCE_QPS_ERR, "lkey");
	err_teardown(&p);
}

static void
test_err_rnr(void)
{
	struct xh_qp_conf r2 = { .rnr_retry = 2, .min_rnr_timer = 22 };
	struct roce_wc wc;
	struct xh_qp p;
	uint64_t t0;

	err_setup(&p, &r2, 50);
	t0 = h.now;
	expect_wc(&p, ROCE_WR_SEND, 0, 64, ROCE_WC_RNR_RETRY_EXC_ERR, "rnr exhausted");
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_NAK_RNR_TX) == 3, "3 RNR NAKs (try + 2 retries): %lu",
			(unsigned long)xh_counter(&h, 1, ROCE_XC_NAK_RNR_TX));
	RT_CHECK(h.now - t0 >= 2 * 20480000ull, "RNR timer 22 (20.48 ms) waited");
	expect_state(&p, 1, ROCE_QPS_RTS, "rnr: responder stays RTS");
	err_teardown(&p);

	/* rnr_retry 7 is infinite: the receive arrives after 100 ms and the SEND succeeds. */
	err_setup(&p, &(struct xh_qp_conf){ .min_rnr_timer = 22 }, 51);
	RT_CHECK(post(&p, 0, ROCE_WR_SEND, 0, 0, 64, 5) == 0, "post");
	t0 = h.now;
	while (h.now - t0 < 100 * MS)
		xh_step(&h, 1000);
	RT_CHECK(roce_cq_poll(p.cq[0], &wc, 1) == 0, "not done before the receive");
	RT_CHECK(post_recv(&p, 1, 0, 64, 1) == 0, "recv");
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_SUCCESS, "rnr then success: %s",
				roce_wc_status_str(wc.status));
	if (one_wc(p.cq[1], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_SUCCESS && wc.byte_len == 64, "recv");
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_NAK_RNR_TX) >= 4, "RNR NAKs sent");
	err_teardown(&p);
}

static void
test_err_seq_and_timeout(void)
{
	struct xh_qp_conf r2 = { .retry_cnt = 2, .timeout = 10 };
	struct xh_qp p;

	/* A lost middle packet: one NAK, go-back-N from it, success. */
	err_setup(&p, NULL, 60);
	tap_set(0, ROCE_OPCODE(RC, WRITE_MIDDLE), 1, 1, 0);
	fill(p.buf[0], 8192, 1);
	expect_wc(&p, ROCE_WR_RDMA_WRITE, 0, 8192, ROCE_WC_SUCCESS, "seq retry");
	RT_CHECK(memcmp(p.buf[0], p.buf[1], 8192) == 0, "data after go-back-N");
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_NAK_SEQ_TX) == 1, "one NAK per gap: %lu",
			(unsigned long)xh_counter(&h, 1, ROCE_XC_NAK_SEQ_TX));
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_TIMEOUTS) == 0, "no timeout needed");
	/* The resend starts at the lost PSN with a WRITE Middle (no RETH), as rxe does. */
	{
		unsigned int i, resent_at = 0;

		for (i = 1; i < rule.log_n; i++)
			if (roce_psn_before(rule.log_psn[i], rule.log_psn[i - 1]))
				resent_at = i;
		RT_CHECK(resent_at != 0 && rule.log_psn[resent_at] == rule.seen.psn &&
				rule.log_op[resent_at] == ROCE_OPCODE(RC, WRITE_MIDDLE),
				"go-back-N from the lost middle packet");
	}
	err_teardown(&p);

	/* The same packet lost every time: retries run out. */
	err_setup(&p, &r2, 61);
	tap_set(0, ROCE_OPCODE(RC, WRITE_MIDDLE), 1, -1, 0);
	expect_wc(&p, ROCE_WR_RDMA_WRITE, 0, 8192, ROCE_WC_RETRY_EXC_ERR, "seq exhausted");
	expect_state(&p, 0, ROCE_QPS_ERR, "seq exhausted");
	expect_state(&p, 1, ROCE_QPS_RTS, "seq exhausted: responder");
	err_teardown(&p);

	/* The ACK lost once: timeout, resend, duplicate re-ACKed, success. */
	err_setup(&p, &r2, 62);
	tap_set(1, ROCE_OPCODE(RC, ACK), 0, 1, 0);
	expect_wc(&p, ROCE_WR_RDMA_WRITE, 0, 2048, ROCE_WC_SUCCESS, "ack lost");
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_TIMEOUTS) == 1, "one timeout");
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_DUP_REQ) >= 1, "duplicate seen");
	err_teardown(&p);

	/* Every ACK lost: timeouts run out; the data did land. */
	err_setup(&p, &r2, 63);
	tap_set(1, ROCE_OPCODE(RC, ACK), 0, -1, 0);
	fill(p.buf[0], 2048, 5);
	expect_wc(&p, ROCE_WR_RDMA_WRITE, 0, 2048, ROCE_WC_RETRY_EXC_ERR, "ack timeout");
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_TIMEOUTS) == 3, "retry_cnt 2: 3 timeouts, got %lu",
			(unsigned long)xh_counter(&h, 0, ROCE_XC_TIMEOUTS));
	RT_CHECK(memcmp(p.buf[0], p.buf[1], 2048) == 0, "data landed");
	err_teardown(&p);
}

/* A crafted response from side 1 of @p to side 0, classified. */
static struct rte_mbuf *
craft_resp(struct xh_qp *p, uint8_t opcode, uint32_t psn, uint8_t syndrome, uint32_t len)
{
	static uint8_t zeros[4096];
	struct roce_qp_attr a;
	struct roce_pkt_desc d = {
		.opcode = opcode, .psn = psn, .syndrome = syndrome, .msn = 1,
	};
	struct roce_wire_stats st = {0};
	struct rte_mbuf *m = rte_pktmbuf_alloc(h.mp);

	roce_qp_query(p->qp[1], &a);
	d.dest_qpn = a.dest_qp_num;
	RT_CHECK(m != NULL && roce_build_pkt(m, &a.ah, &d, zeros, len) == 0, "inject build");
	RT_CHECK(roce_classify_burst(&m, 1, 0, &st) == 1, "inject classify");
	return m;
}

/* Hand side 0 a crafted response from side 1. */
static void
inject_resp(struct xh_qp *p, uint8_t opcode, uint32_t psn, uint8_t syndrome, uint32_t len)
{
	struct rte_mbuf *m = craft_resp(p, opcode, psn, syndrome, len);

	roce_engine_rx(h.eng[0], &m, 1, h.now);
}

/*
 * One received payload packet for side @to of @p, as its peer would send it at @psn, with
 * the @len bytes at @data; @bad flips one payload byte after the ICRC is computed. Classified
 * with ROCE_CLASSIFY_DEFER_ICRC as the dataplane does and handed to the engine.
 */
static void
inject_payload(struct xh_qp *p, int to, const struct roce_pkt_desc *desc, const uint8_t *data,
		uint32_t len, int bad)
{
	struct roce_pkt_desc d = *desc;
	struct roce_qp_attr a;
	struct rte_mbuf *m = rte_pktmbuf_alloc(h.mp);
	uint16_t nb;

	roce_qp_query(p->qp[1 - to], &a);
	d.dest_qpn = a.dest_qp_num;
	RT_CHECK(m != NULL && roce_build_pkt(m, &a.ah, &d, data, len) == 0, "payload build");
	if (m == NULL)
		return;
	if (bad)
		rte_pktmbuf_mtod(m, uint8_t *)[m->pkt_len - 4 - len + len / 2] ^= 0x40;
	nb = roce_classify_burst(&m, 1, ROCE_CLASSIFY_DEFER_ICRC, &h.wire);
	/* A short one is checked at once, and dropped as the dataplane drops non-RoCE. */
	if (bad && len < ROCE_CLASSIFY_DEFER_MIN) {
		RT_CHECK(nb == 0 && roce_pkt_meta(m)->reason == ROCE_DROP_ICRC,
				"short payload: classified %u", nb);
		rte_pktmbuf_free(m);
		return;
	}
	RT_CHECK(nb == 1, "payload classify: %s", roce_drop_reason_name(roce_pkt_meta(m)->reason));
	RT_CHECK(!!(roce_pkt_meta(m)->flags & ROCE_PKT_F_ICRC_PENDING) ==
			(len >= ROCE_CLASSIFY_DEFER_MIN), "ICRC pending for %u bytes", len);
	roce_engine_rx_wire(h.eng[to], &m, 1, h.now, &h.wire);
}

/* A message's packets: each sent first with a wrong ICRC, then right. */
struct icrc_case {
	const char *name;
	enum { IC_WRITE, IC_RECV, IC_READ } kind;   /* IC_RECV: takes a receive WQE */
	uint8_t op[3];
	unsigned int nb;
	uint32_t len;          /* of each packet */
};

static void
icrc_case_run(const struct icrc_case *c, uint64_t seed)
{
	struct xh_qp_conf conf = { .mtu = ROCE_MTU_1024, .buf_len = 65536 };
	static uint8_t data[3 * 1024], before[3 * 1024];
	uint32_t total = c->nb * c->len, psn, k;
	int to = c->kind == IC_READ ? 0 : 1;
	struct roce_qp_attr a;
	struct roce_wc wc;
	struct xh_qp p;

	err_setup(&p, &conf, seed);
	fill(data, sizeof(data), (uint32_t)seed);
	memset(p.buf[to], 0xEE, total);
	if (c->kind == IC_RECV)
		RT_CHECK(post_recv(&p, 1, 0, total, 9) == 0, "%s: post recv", c->name);
	if (c->kind == IC_READ) {
		/* The READ request never reaches side 1: the test answers it. */
		tap_set(0, ROCE_OPCODE(RC, READ_REQ), 0, -1, 0);
		RT_CHECK(post(&p, 0, ROCE_WR_RDMA_READ, 0, 0, total, 7) == 0, "%s: post", c->name);
		xh_step(&h, 1000);
		RT_CHECK(rule.hits == 1, "%s: READ request held", c->name);
		psn = rule.seen.psn;
	} else {
		roce_qp_query(p.qp[1], &a);
		psn = a.rq_psn;
	}
	for (k = 0; k < c->nb; k++) {
		struct roce_pkt_desc d = {
			.opcode = c->op[k],
			.psn = roce_psn_add(psn, k),
			.ackreq = k + 1 == c->nb,
			.va = roce_mr_iova(p.mr[1]),
			.rkey = roce_mr_rkey(p.mr[1]),
			.dma_len = total,
			.imm = 0xC0FFEE,
			.syndrome = 0x1F,
			.msn = 1,
		};
		uint64_t icrc_drops = h.wire.drop[ROCE_DROP_ICRC];
		uint64_t rx = xh_counter(&h, to, ROCE_XC_RX_PKTS);

		memcpy(before, p.buf[to], total);
		inject_payload(&p, to, &d, data + k * c->len, c->len, 1);
		RT_CHECK(h.wire.drop[ROCE_DROP_ICRC] == icrc_drops + 1,
				"%s packet %u: ICRC drop counted", c->name, k);
		RT_CHECK(xh_counter(&h, to, ROCE_XC_RX_PKTS) == rx,
				"%s packet %u: the engine saw the bad packet", c->name, k);
		RT_CHECK(memcmp(before, p.buf[to], total) == 0,
				"%s packet %u: a bad ICRC changed the MR", c->name, k);
		inject_payload(&p, to, &d, data + k * c->len, c->len, 0);
		RT_CHECK(xh_counter(&h, to, ROCE_XC_RX_PKTS) == rx + 1,
				"%s packet %u: the good copy not taken", c->name, k);
		RT_CHECK(memcmp(p.buf[to] + k * c->len, data + k * c->len, c->len) == 0,
				"%s packet %u: payload not placed", c->name, k);
	}
	if (c->kind == IC_READ) {
		RT_CHECK(one_wc(p.cq[0], &wc, SEC) && wc.status == ROCE_WC_SUCCESS &&
				wc.opcode == ROCE_WC_RDMA_READ, "%s: READ completion", c->name);
	} else if (c->kind == IC_RECV) {
		RT_CHECK(one_wc(p.cq[1], &wc, SEC) && wc.status == ROCE_WC_SUCCESS &&
				wc.byte_len == total, "%s: receive completion", c->name);
	}
	RT_CHECK(memcmp(p.buf[to], data, total) == 0, "%s: message", c->name);
	RT_CHECK(xh_counter(&h, to, ROCE_XC_NAK_SEQ_TX) == 0 &&
			xh_counter(&h, to, ROCE_XC_NAK_INV_TX) == 0,
			"%s: the responder NAKed", c->name);
	err_teardown(&p);
}

/*
 * The ICRC of a payload packet is checked right before its payload is copied (the classifier
 * leaves it pending, roce_engine_rx_wire() checks it): on every payload-carrying opcode a
 * wrong one is dropped, counted as DROP_ICRC, and leaves the MR and the QP as they were, so
 * the right copy of the same packet is then taken. Short packets (checked by the classifier)
 * too.
 */
static void
test_icrc_payload(void)
{
	static const struct icrc_case cases[] = {
		{ "WRITE First/Middle/Last", IC_WRITE, { ROCE_OPCODE(RC, WRITE_FIRST),
			ROCE_OPCODE(RC, WRITE_MIDDLE), ROCE_OPCODE(RC, WRITE_LAST) }, 3, 1024 },
		{ "WRITE First/Last with Immediate", IC_RECV, { ROCE_OPCODE(RC, WRITE_FIRST),
			ROCE_OPCODE(RC, WRITE_LAST_IMM) }, 2, 1024 },
		{ "WRITE Only", IC_WRITE, { ROCE_OPCODE(RC, WRITE_ONLY) }, 1, 1024 },
		{ "WRITE Only with Immediate", IC_RECV, { ROCE_OPCODE(RC, WRITE_ONLY_IMM) }, 1, 512 },
		{ "WRITE Only, 64 B", IC_WRITE, { ROCE_OPCODE(RC, WRITE_ONLY) }, 1, 64 },
		{ "SEND First/Middle/Last", IC_RECV, { ROCE_OPCODE(RC, SEND_FIRST),
			ROCE_OPCODE(RC, SEND_MIDDLE), ROCE_OPCODE(RC, SEND_LAST) }, 3, 1024 },
		{ "SEND First/Last with Immediate", IC_RECV, { ROCE_OPCODE(RC, SEND_FIRST),
			ROCE_OPCODE(RC, SEND_LAST_IMM) }, 2, 1024 },
		{ "SEND Only", IC_RECV, { ROCE_OPCODE(RC, SEND_ONLY) }, 1, 1024 },
		{ "SEND Only with Immediate", IC_RECV, { ROCE_OPCODE(RC, SEND_ONLY_IMM) }, 1, 256 },
		{ "SEND Only, 64 B", IC_RECV, { ROCE_OPCODE(RC, SEND_ONLY) }, 1, 64 },
		{ "READ response First/Middle/Last", IC_READ, { ROCE_OPCODE(RC, READ_RESP_FIRST),
			ROCE_OPCODE(RC, READ_RESP_MIDDLE), ROCE_OPCODE(RC, READ_RESP_LAST) }, 3,
			1024 },
		{ "READ response Only", IC_READ, { ROCE_OPCODE(RC, READ_RESP_ONLY) }, 1, 1024 },
		{ "READ response Only, 64 B", IC_READ, { ROCE_OPCODE(RC, READ_RESP_ONLY) }, 1, 64 },
	};
	unsigned int i;

	for (i = 0; i < RTE_DIM(cases); i++)
		icrc_case_run(&cases[i], 90 + i);
}

/* A CNP from the peer (as a ConnectX answers CE marks) counts on its QP and changes nothing. */
static void
test_cnp_rx(void)
{
	struct xh_qp p;

	err_setup(&p, NULL, 80);
	inject_resp(&p, ROCE_OPCODE_CNP, 0, 0, 0);
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_CNP_RX) == 1 &&
			xh_counter(&h, 0, ROCE_XC_UNKNOWN_QP) == 0 &&
			xh_counter(&h, 0, ROCE_XC_BAD_RESP) == 0,
			"CNP: %lu counted, %lu unknown QP, %lu bad responses",
			(unsigned long)xh_counter(&h, 0, ROCE_XC_CNP_RX),
			(unsigned long)xh_counter(&h, 0, ROCE_XC_UNKNOWN_QP),
			(unsigned long)xh_counter(&h, 0, ROCE_XC_BAD_RESP));
	expect_wc(&p, ROCE_WR_RDMA_WRITE, 0, 64, ROCE_WC_SUCCESS, "after a CNP");
	expect_state(&p, 0, ROCE_QPS_RTS, "after a CNP");
	err_teardown(&p);
}

/*
 * A burst whose run of one QP's packets is broken by a frame that is not RoCE: the receive
 * path looks a run's QP up once, and the packet after the break still finds it.
 */
static void
test_rx_burst_runs(void)
{
	struct roce_wire_stats st = {0};
	struct rte_mbuf *m[4];
	struct xh_qp p;

	err_setup(&p, NULL, 81);
	m[0] = craft_resp(&p, ROCE_OPCODE_CNP, 0, 0, 0);
	m[1] = craft_resp(&p, ROCE_OPCODE_CNP, 0, 0, 0);
	m[2] = rte_pktmbuf_alloc(h.mp);
	RT_CHECK(m[2] != NULL && rte_pktmbuf_append(m[2], 60) != NULL, "frame");
	memset(rte_pktmbuf_mtod(m[2], void *), 0, 60);
	rte_pktmbuf_mtod(m[2], uint8_t *)[12] = 0x08;
	rte_pktmbuf_mtod(m[2], uint8_t *)[13] = 0x06;     /* ARP */
	roce_classify_burst(&m[2], 1, 0, &st);
	RT_CHECK(roce_pkt_meta(m[2])->type != ROCE_PKT_ROCE, "the frame is not RoCE");
	m[3] = craft_resp(&p, ROCE_OPCODE_CNP, 0, 0, 0);
	roce_engine_rx(h.eng[0], m, 4, h.now);
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_CNP_RX) == 3 &&
			xh_counter(&h, 0, ROCE_XC_UNKNOWN_QP) == 1,
			"CNP, CNP, ARP, CNP: %lu CNPs on the QP, %lu unknown",
			(unsigned long)xh_counter(&h, 0, ROCE_XC_CNP_RX),
			(unsigned long)xh_counter(&h, 0, ROCE_XC_UNKNOWN_QP));
	err_teardown(&p);
}

static void
test_err_responses(void)
{
	struct roce_qp_attr a;
	struct roce_wc wc;
	struct xh_qp p;

	/* Ghost ACK for a PSN never sent: ignored and counted. */
	err_setup(&p, NULL, 70);
	roce_qp_query(p.qp[0], &a);
	inject_resp(&p, ROCE_OPCODE(RC, ACK), roce_psn_add(a.sq_psn, 100), 0x1F, 0);
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_GHOST_ACK) == 1, "ghost counted");
	expect_wc(&p, ROCE_WR_RDMA_WRITE, 0, 64, ROCE_WC_SUCCESS, "after ghost");
	expect_state(&p, 0, ROCE_QPS_RTS, "ghost");
	err_teardown(&p);

	/* A READ response where a WRITE's ACK is due: bad response. */
	err_setup(&p, NULL, 71);
	tap_set(0, ROCE_OPCODE(RC, WRITE_ONLY), 0, -1, 0);
	RT_CHECK(post(&p, 0, ROCE_WR_RDMA_WRITE, 0, 0, 64, 5) == 0, "post");
	xh_step(&h, 1000);
	roce_qp_query(p.qp[0], &a);
	inject_resp(&p, ROCE_OPCODE(RC, READ_RESP_ONLY), a.sq_psn, 0x1F, 64);
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_BAD_RESP_ERR, "bad resp: %s",
				roce_wc_status_str(wc.status));
	expect_state(&p, 0, ROCE_QPS_ERR, "bad resp");
	err_teardown(&p);

	/* The responder sees a Middle with no First: invalid request on both sides. */
	err_setup(&p, NULL, 72);
	RT_CHECK(post_recv(&p, 1, 0, 64, 1) == 0, "recv");
	tap_set(0, ROCE_OPCODE(RC, WRITE_FIRST), 0, 1, ROCE_OPCODE(RC, WRITE_MIDDLE));
	expect_wc(&p, ROCE_WR_RDMA_WRITE, 0, 4096, ROCE_WC_REM_INV_REQ_ERR, "bad sequence");
	expect_state(&p, 1, ROCE_QPS_ERR, "bad sequence");
	expect_recv_flushed(&p, "bad sequence");
	err_teardown(&p);

	/* A SEND longer than the receive buffer: remote operational error. */
	err_setup(&p, NULL, 73);
	RT_CHECK(post_recv(&p, 1, 0, 512, 1) == 0, "recv");
	expect_wc(&p, ROCE_WR_SEND, 0, 2048, ROCE_WC_REM_OP_ERR, "send too long");
	if (one_wc(p.cq[1], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_LOC_LEN_ERR, "recv: %s",
				roce_wc_status_str(wc.status));
	expect_state(&p, 1, ROCE_QPS_ERR, "send too long");
	err_teardown(&p);
}

static void
test_err_partial_and_dup(void)
{
	struct roce_wc wc;
	struct xh_qp p;
	uint64_t v;
	unsigned int i;
	int reissued = 0;

	/* A lost READ response middle: the READ is re-issued from it, VA and length moved. */
	err_setup(&p, NULL, 80);
	fill(p.buf[1] + 4096, 8192, 9);
	tap_set(1, ROCE_OPCODE(RC, READ_RESP_MIDDLE), 1, 1, 0);
	expect_wc(&p, ROCE_WR_RDMA_READ, 4096, 8192, ROCE_WC_SUCCESS, "partial read");
	RT_CHECK(memcmp(p.buf[0], p.buf[1] + 4096, 8192) == 0, "partial read data");
	RT_CHECK(rule.hits == 1, "one response dropped");
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_DUP_READ) == 1, "re-served from the lost PSN");
	err_teardown(&p);

	/* The READ's last response lost: re-issued for it alone, re-served as a duplicate. */
	err_setup(&p, NULL, 82);
	fill(p.buf[1], 4096, 3);
	tap_set(1, ROCE_OPCODE(RC, READ_RESP_LAST), 0, 1, 0);
	expect_wc(&p, ROCE_WR_RDMA_READ, 0, 4096, ROCE_WC_SUCCESS, "last resp lost");
	RT_CHECK(memcmp(p.buf[0], p.buf[1], 4096) == 0, "data");
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_DUP_READ) == 1, "duplicate READ re-served");
	err_teardown(&p);

	/* Requester-side view of a re-issue: log side 0's packets while a response is lost. */
	err_setup(&p, NULL, 83);
	fill(p.buf[1], 8192, 4);
	memset(&rule, 0, sizeof(rule));
	h.tap = tap_fn;
	h.tap_arg = &rule;
	rule.from = 0;
	rule.opcode = 0xFF;
	rule.count = 0;
	{
		struct xh_impair none = h.impair[1];

		RT_CHECK(post(&p, 0, ROCE_WR_RDMA_READ, 0, 0, 8192, 5) == 0, "post");
		/* Let the request out, then lose every response once. */
		xh_step(&h, 1000);
		h.impair[1].loss = 1.0;
		xh_step(&h, 1000);
		xh_step(&h, 1000);
		h.impair[1] = none;
		(void)one_wc(p.cq[0], &wc, 60 * SEC);
		RT_CHECK(wc.status == ROCE_WC_SUCCESS, "read after lost responses: %s",
				roce_wc_status_str(wc.status));
		for (i = 1; i < rule.log_n; i++)
			if (rule.log_op[i] == ROCE_OPCODE(RC, READ_REQ))
				reissued = 1;
		RT_CHECK(reissued, "READ re-issued");
		RT_CHECK(memcmp(p.buf[0], p.buf[1], 8192) == 0, "data");
	}
	err_teardown(&p);

	/* The atomic ACK lost: resent, answered from the saved result, executed once. */
	err_setup(&p, NULL, 84);
	v = 0x5555555555555555ull;
	memcpy(p.buf[1] + 8, &v, 8);
	tap_set(1, ROCE_OPCODE(RC, ATOMIC_ACK), 0, 1, 0);
	post_atomic(&p, ROCE_WR_ATOMIC_FETCH_AND_ADD, 8, 1, 0, 1);
	if (one_wc(p.cq[0], &wc, 60 * SEC))
		RT_CHECK(wc.status == ROCE_WC_SUCCESS && u64_at(p.buf[0]) == v &&
				u64_at(p.buf[1] + 8) == v + 1, "atomic replay: %s got %lx now %lx",
				roce_wc_status_str(wc.status), (unsigned long)u64_at(p.buf[0]),
				(unsigned long)u64_at(p.buf[1] + 8));
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_DUP_ATOMIC) == 1, "atomic replayed from the cache");
	err_teardown(&p);
}


/* ---- selective repeat: mismatch and single losses ---- */

/* One end with SR, the other without: no crash, the SR-less end never sends an extension. */
static void
test_sr_mismatch(void)
{
	struct xh_qp_conf c = { .sr = 2, .retry_cnt = 2, .sr_rto_us = 20, .timeout = 8 };
	struct roce_wc wc;
	struct xh_qp p;
	int s;

	for (s = 0; s < 2; s++) {
		err_setup(&p, &c, 100 + s);
		h.tap = ext_tap;
		memset(ext_seen, 0, sizeof(ext_seen));
		RT_CHECK(post_recv(&p, 1 - s, 0, 4096, 1) == 0, "recv");
		RT_CHECK(post(&p, s, ROCE_WR_SEND, 0, 0, 4096, 5) == 0, "post");
		if (one_wc(p.cq[s], &wc, 60 * SEC))
			RT_CHECK(wc.status == ROCE_WC_RETRY_EXC_ERR, "side %d to its peer: %s", s,
					roce_wc_status_str(wc.status));
		RT_CHECK(xh_counter(&h, 1 - s, ROCE_XC_SR_REJECT) != 0,
				"side %d refused the other's packets", 1 - s);
		RT_CHECK(ext_seen[1] == 0, "the QP without SR sent %lu extension packets",
				(unsigned long)ext_seen[1]);
		RT_CHECK((ext_seen[0] != 0) == (s == 0), "the SR QP's extensions");
		expect_state(&p, 1 - s, ROCE_QPS_RTS, "mismatch: receiver");
		err_teardown(&p);
	}
}

static void
test_sr_single_losses(void)
{
	struct xh_qp_conf sr = { .sr = 1 };
	struct roce_wc wc;
	struct xh_qp p;
	uint64_t v;

	/* A lost WRITE Middle: that PSN alone is resent, the rest placed out of order. */
	err_setup(&p, &sr, 110);
	tap_set(0, ROCE_OPCODE(SR, WRITE_MIDDLE), 1, 1, 0);
	fill(p.buf[0], 16384, 1);
	expect_wc(&p, ROCE_WR_RDMA_WRITE, 0, 16384, ROCE_WC_SUCCESS, "sr write loss");
	RT_CHECK(memcmp(p.buf[0], p.buf[1], 16384) == 0, "data");
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_SR_RETRANSMITS) == 1 && rule.log_n == 17,
			"one PSN resent: %lu, %u packets sent",
			(unsigned long)xh_counter(&h, 0, ROCE_XC_SR_RETRANSMITS), rule.log_n);
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_SR_OOO_PLACED) == 13 &&
			xh_counter(&h, 1, ROCE_XC_NAK_SEQ_TX) == 0, "placed out of order: %lu",
			(unsigned long)xh_counter(&h, 1, ROCE_XC_SR_OOO_PLACED));
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_SR_TIMEOUTS) == 0, "found by SACK, not RTO");
	err_teardown(&p);

	/* A lost SEND First: the receive completes once the rest is in, in order. */
	err_setup(&p, &sr, 111);
	RT_CHECK(post_recv(&p, 1, 0, 8192, 1) == 0 && post_recv(&p, 1, 8192, 8192, 2) == 0,
			"recv");
	tap_set(0, ROCE_OPCODE(SR, SEND_FIRST), 0, 1, 0);
	fill(p.buf[0], 16384, 2);
	RT_CHECK(post(&p, 0, ROCE_WR_SEND, 0, 0, 8192, 1) == 0 &&
			post(&p, 0, ROCE_WR_SEND, 8192, 0, 8192, 2) == 0, "post");
	if (one_wc(p.cq[1], &wc, SEC))
		RT_CHECK(wc.wr_id == 1 && wc.byte_len == 8192, "first receive first");
	if (one_wc(p.cq[1], &wc, SEC))
		RT_CHECK(wc.wr_id == 2 && wc.byte_len == 8192, "then the second");
	RT_CHECK(memcmp(p.buf[0], p.buf[1], 16384) == 0, "send data");
	err_teardown(&p);

	/* A lost READ response Middle: one READ request for that packet alone. */
	err_setup(&p, &sr, 112);
	fill(p.buf[1] + 4096, 8192, 9);
	tap_set(1, ROCE_OPCODE(RC, READ_RESP_MIDDLE), 1, 1, 0);
	expect_wc(&p, ROCE_WR_RDMA_READ, 4096, 8192, ROCE_WC_SUCCESS, "sr read loss");
	RT_CHECK(memcmp(p.buf[0], p.buf[1] + 4096, 8192) == 0, "read data");
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_SR_READ_REREQ) == 1 &&
			xh_counter(&h, 1, ROCE_XC_DUP_READ) == 1 &&
			xh_counter(&h, 1, ROCE_XC_TX_BYTES) == 8192 + 1024,
			"one packet asked again: %lu re-requests, %lu bytes served",
			(unsigned long)xh_counter(&h, 0, ROCE_XC_SR_READ_REREQ),
			(unsigned long)xh_counter(&h, 1, ROCE_XC_TX_BYTES));
	err_teardown(&p);

	/* A lost atomic ACK: resent, answered from the saved result, executed once. */
	err_setup(&p, &sr, 113);
	v = 0x5555555555555555ull;
	memcpy(p.buf[1] + 8, &v, 8);
	tap_set(1, ROCE_OPCODE(RC, ATOMIC_ACK), 0, 1, 0);
	post_atomic(&p, ROCE_WR_ATOMIC_FETCH_AND_ADD, 8, 1, 0, 1);
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_SUCCESS && u64_at(p.buf[0]) == v &&
				u64_at(p.buf[1] + 8) == v + 1, "sr atomic replay");
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_DUP_ATOMIC) == 1, "replayed from the cache");
	err_teardown(&p);

	/* No receive posted: RNR, then success once one is. */
	err_setup(&p, &(struct xh_qp_conf){ .sr = 1, .min_rnr_timer = 1 }, 114);
	RT_CHECK(post(&p, 0, ROCE_WR_SEND, 0, 0, 4096, 5) == 0, "post");
	xh_poll_cq(&h, p.cq[0], &wc, 1, 200000);
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_NAK_RNR_TX) != 0, "RNR NAK");
	RT_CHECK(post_recv(&p, 1, 0, 4096, 1) == 0, "recv");
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_SUCCESS, "sr rnr: %s", roce_wc_status_str(wc.status));
	if (one_wc(p.cq[1], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_SUCCESS && wc.byte_len == 4096, "sr rnr recv");
	err_teardown(&p);

	/* A bad rkey stays fatal, on both ends. */
	err_setup(&p, &sr, 115);
	tap_set(0, 0xFF, 0, 0, 0);
	{
		struct roce_send_wr wr = {
			.wr_id = 9, .opcode = ROCE_WR_RDMA_WRITE, .num_sge = 1,
			.sg_list = {{ roce_mr_iova(p.mr[0]), 4096, roce_mr_lkey(p.mr[0]) }},
			.remote_addr = roce_mr_iova(p.mr[1]),
			.rkey = roce_mr_rkey(p.mr[1]) ^ 0xFFFF00,
		};

		RT_CHECK(roce_post_send(p.qp[0], &wr) == 0, "post");
		if (one_wc(p.cq[0], &wc, SEC))
			RT_CHECK(wc.status == ROCE_WC_REM_ACCESS_ERR, "sr bad rkey: %s",
					roce_wc_status_str(wc.status));
	}
	expect_state(&p, 1, ROCE_QPS_ERR, "sr bad rkey");
	err_teardown(&p);
}

/* Drops side 1's first READ response Middle, and turns side 0's re-request into length 0. */
static enum xh_verdict
zero_rereq_tap(void *arg, int from, struct rte_mbuf *m)
{
	struct roce_bth *bth = (struct roce_bth *)(uintptr_t)tap_bth(m);
	const struct roce_opcode_info *info = &roce_opcode_info[bth->opcode];
	int *state = arg;

	if (from == 1 && bth->opcode == ROCE_OPCODE(RC, READ_RESP_MIDDLE) && state[0]++ == 0)
		return XH_DROP;
	if (from == 0 && (info->mask & (ROCE_M_REQ | ROCE_M_READ)) == (ROCE_M_REQ | ROCE_M_READ) &&
			state[1]++ == 1) {
		struct roce_reth *reth = (struct roce_reth *)((uint8_t *)bth +
				info->offset[ROCE_HDR_RETH]);

		roce_reth_set_len(reth, 0);
		roce_icrc_write(m, m->pkt_len - 4, roce_icrc_compute(m, 14, 0, m->pkt_len - 4));
	}
	return XH_PASS;
}

/*
 * SR: a zero-length re-request of a READ's missing packet is served from the READ's own bytes
 * (the MR lookup of a zero length returns the MR's start, which must not become the base).
 */
static void
test_sr_zero_len_rereq(void)
{
	struct xh_qp_conf sr = { .sr = 1 };
	int state[2] = { 0, 0 };
	struct xh_qp p;

	err_setup(&p, &sr, 116);
	fill(p.buf[1], 16384, 5);
	h.tap = zero_rereq_tap;
	h.tap_arg = state;
	expect_wc(&p, ROCE_WR_RDMA_READ, 4096, 8192, ROCE_WC_SUCCESS, "sr zero-length re-request");
	RT_CHECK(state[1] >= 2, "re-requested (%d READ requests)", state[1]);
	RT_CHECK(memcmp(p.buf[0], p.buf[1] + 4096, 8192) == 0, "the READ's bytes, not the MR's start");
	err_teardown(&p);
}

/*
 * SR: a response lost early in a long READ is asked for again while the rest still streams
 * (the responder's transmit ring holds 64 packets, the link 20 us): the re-request is served
 * and the stream goes on to its end; it used to end the stream at the re-served packet, and
 * the requester had to ask for the rest once an ACK showed it missing.
 */
static void
test_sr_read_rereq_midstream(void)
{
	const uint32_t len = 1u << 20;
	struct xh_qp_conf sr = { .sr = 1, .buf_len = 2u << 20 };
	struct xh_qp p;

	xh_init(&h, 117, &(struct roce_engine_conf){ .tx_ring_size = 64 });
	RT_CHECK(xh_qp_connect(&h, &p, &sr) == 0, "connect");
	memset(&rule, 0, sizeof(rule));
	h.impair[1].rate_gbps = 10;
	h.impair[1].backlog_ns = 20000;
	fill(p.buf[1], len, 3);
	tap_set(1, ROCE_OPCODE(RC, READ_RESP_MIDDLE), 10, 1, 0);
	expect_wc(&p, ROCE_WR_RDMA_READ, 0, len, ROCE_WC_SUCCESS, "sr read, re-request mid-stream");
	RT_CHECK(memcmp(p.buf[0], p.buf[1], len) == 0, "read data");
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_SR_READ_REREQ) == 1 &&
			xh_counter(&h, 1, ROCE_XC_DUP_READ) == 1 &&
			xh_counter(&h, 1, ROCE_XC_TX_BYTES) == len + 1024,
			"one packet asked again, the stream not cut: %lu re-requests, %lu bytes served",
			(unsigned long)xh_counter(&h, 0, ROCE_XC_SR_READ_REREQ),
			(unsigned long)xh_counter(&h, 1, ROCE_XC_TX_BYTES));
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_SR_TIMEOUTS) == 0, "no RTO");
	err_teardown(&p);
}

/* Post @n WRITEs of @len from side 0 and step until they complete or @timeout passes. */
static unsigned int
writes_through(struct xh_qp *p, unsigned int n, uint32_t len, uint64_t timeout,
		enum roce_wc_status *last)
{
	struct roce_wc wc[16];
	unsigned int i, done = 0;
	uint64_t end = h.now + timeout;

	for (i = 0; i < n; i++)
		RT_CHECK(post(p, 0, ROCE_WR_RDMA_WRITE, (uint64_t)i * len, (uint64_t)i * len, len,
				i) == 0, "post write %u", i);
	*last = ROCE_WC_SUCCESS;
	while (done < n && h.now < end) {
		int k, got = roce_cq_poll(p->cq[0], wc, RTE_DIM(wc));

		for (k = 0; k < got; k++, done++)
			if (wc[k].status != ROCE_WC_SUCCESS)
				*last = wc[k].status;
		if (*last != ROCE_WC_SUCCESS)
			break;
		xh_step(&h, 1000);
	}
	return done;
}

/*
 * SR with a responder descheduled (as a worker the OS does not run) for 20 ms, far past the
 * 100 us RTO: the expiries resend, but retry_cnt is spent per IBA ACK timeout (67 ms) of
 * silence, as go-back-N spends it, so the QP survives; silence longer than (retry_cnt + 1)
 * ACK timeouts still fails it.
 */
static uint64_t fail_at;

/* The CQ's notification: when the completion came (the harness may jump idle time after). */
static void
note_fail(void *arg)
{
	RTE_SET_USED(arg);
	fail_at = h.now;
}

static void
test_sr_peer_stall(void)
{
	static const uint8_t modes[] = { 1, 0 };
	enum roce_wc_status st;
	struct xh_qp p;
	unsigned int m, done;
	uint64_t t0;

	for (m = 0; m < RTE_DIM(modes); m++) {
		struct xh_qp_conf c = { .sr = modes[m], .sr_rto_us = 100, .retry_cnt = 2 };

		err_setup(&p, &c, 118 + m);
		done = writes_through(&p, 4, 4096, SEC, &st);
		RT_CHECK(done == 4 && st == ROCE_WC_SUCCESS, "%s: warm-up", modes[m] ? "SR" : "GBN");
		h.stall_until[1] = h.now + 20 * MS;
		done = writes_through(&p, 8, 4096, SEC, &st);
		RT_CHECK(done == 8 && st == ROCE_WC_SUCCESS,
				"%s: a 20 ms stall of the responder: %u of 8 done, %s, %lu timeouts",
				modes[m] ? "SR" : "GBN", done, roce_wc_status_str(st),
				(unsigned long)xh_counter(&h, 0, ROCE_XC_TIMEOUTS));
		if (modes[m])
			RT_CHECK(xh_counter(&h, 0, ROCE_XC_SR_TIMEOUTS) >= 3,
					"SR: the RTO did expire (%lu)",
					(unsigned long)xh_counter(&h, 0, ROCE_XC_SR_TIMEOUTS));
		expect_state(&p, 0, ROCE_QPS_RTS, "after the stall");
		err_teardown(&p);
	}

	/*
	 * ACK timeout 8 (1.05 ms), retry_cnt 2, the RTO measured down to 100 us: a 50 ms stall
	 * fails the QP once three ACK timeouts have passed, not after three RTOs (0.7 ms).
	 */
	err_setup(&p, &(struct xh_qp_conf){ .sr = 1, .sr_rto_us = 100, .retry_cnt = 2,
			.timeout = 8 }, 120);
	done = writes_through(&p, 4, 4096, SEC, &st);
	RT_CHECK(done == 4 && st == ROCE_WC_SUCCESS, "SR: warm-up");
	fail_at = 0;
	roce_cq_req_notify(p.cq[0], note_fail, NULL);
	t0 = h.now;
	h.stall_until[1] = h.now + 50 * MS;
	done = writes_through(&p, 1, 4096, SEC, &st);
	RT_CHECK(st == ROCE_WC_RETRY_EXC_ERR, "SR: silence past the budget: %s",
			roce_wc_status_str(st));
	RT_CHECK(fail_at - t0 >= 3 * 4096ull * 256 && fail_at - t0 < 10 * MS,
			"SR: failed after %.2f ms (3 ACK timeouts: 3.15 ms), %lu timeouts",
			(fail_at - t0) / 1e6, (unsigned long)xh_counter(&h, 0, ROCE_XC_TIMEOUTS));
	err_teardown(&p);
}

/*
 * A receiver that posts its receives late and slowly (one every millisecond, from 5 ms on)
 * under 64 SENDs of 4 packets posted at once. Go-back-N, as IBA and rxe, resends from the
 * RNR NAK's PSN everything outstanding each time the RNR timer ends. SR holds SENDs to the
 * responder's credits (its SR ACKs carry them): besides those there is one SEND at most with
 * no receive (IBA's limited WQE), whose first packet alone goes again after each RNR NAK;
 * the responder drops only the rest of that SEND's first transmission.
 */
static void
slow_receiver(uint8_t sr)
{
	const unsigned int n = 64, len = 4096;
	struct xh_qp_conf c = { .sr = sr, .buf_len = 2u << 20 };
	struct roce_wc wc;
	unsigned int i, sends = 0, recvs = 0, posted = 0, bad = 0;
	uint64_t t0, next_post, rtx, rnr, drops;
	struct xh_qp p;

	err_setup(&p, &c, 121 + sr);
	fill(p.buf[0], (uint64_t)n * len, 8);
	for (i = 0; i < n; i++)
		RT_CHECK(post(&p, 0, ROCE_WR_SEND, (uint64_t)i * len, 0, len, i) == 0, "post send");
	t0 = h.now;
	next_post = t0 + 5 * MS;
	while ((sends < n || recvs < n) && h.now - t0 < 2 * SEC && bad == 0) {
		if (posted < n && h.now >= next_post) {
			RT_CHECK(post_recv(&p, 1, (1u << 20) + (uint64_t)posted * len, len,
					posted) == 0, "post recv");
			posted++;
			next_post += MS;
		}
		while (roce_cq_poll(p.cq[0], &wc, 1) == 1) {
			if (wc.status != ROCE_WC_SUCCESS || wc.wr_id != sends)
				bad++;
			sends++;
		}
		while (roce_cq_poll(p.cq[1], &wc, 1) == 1) {
			if (wc.status != ROCE_WC_SUCCESS || wc.wr_id != recvs || wc.byte_len != len ||
					memcmp(p.buf[1] + (1u << 20) + (uint64_t)recvs * len,
						p.buf[0] + (uint64_t)recvs * len, len) != 0)
				bad++;
			recvs++;
		}
		xh_step(&h, 1000);
	}
	rtx = xh_counter(&h, 0, ROCE_XC_RETRANSMITS);
	rnr = xh_counter(&h, 0, ROCE_XC_NAK_RNR_RX);
	drops = xh_counter(&h, 1, sr ? ROCE_XC_SR_OOO_DROP : ROCE_XC_OOS_DROP);
	printf("  %s slow receiver: %u sends in %.1f ms, %lu RNR NAKs, %lu resent, %lu dropped\n",
			sr ? "SR " : "GBN", sends, (h.now - t0) / 1e6, (unsigned long)rnr,
			(unsigned long)rtx, (unsigned long)drops);
	RT_CHECK(sends == n && recvs == n && bad == 0,
			"%s: %u sends, %u receives complete, %u out of order or wrong", sr ? "SR" : "GBN",
			sends, recvs, bad);
	if (sr) {
		/* 4 packets a SEND: the rest of one goes again once its first found a receive. */
		RT_CHECK(rtx <= rnr + 3 * n + 4,
				"SR: one packet per RNR NAK, the rest of a SEND once: %lu for %lu",
				(unsigned long)rtx, (unsigned long)rnr);
		RT_CHECK(drops <= 3 * n, "SR: only the limited SENDs' first sends dropped: %lu",
				(unsigned long)drops);
	}
	err_teardown(&p);
}

static void
test_slow_receiver(void)
{
	slow_receiver(1);
	slow_receiver(0);
}

/*
 * SR ACK credits on the wire: IBA's code of the receive WQEs posted and not completed. And a
 * peer that reports none (an older rocedp: code 31) holds nothing back.
 */
static uint8_t credit_code_seen;
static int credit_strip;

static enum xh_verdict
credit_tap(void *arg, int from, struct rte_mbuf *m)
{
	struct roce_bth *bth = (struct roce_bth *)(uintptr_t)tap_bth(m);

	RTE_SET_USED(arg);
	if (from == 1 && bth->opcode == ROCE_OPCODE(SR, ACK)) {
		uint8_t *aeth = (uint8_t *)(bth + 1);

		credit_code_seen = aeth[0] & ~ROCE_AETH_TYPE_MASK;
		if (credit_strip) {
			aeth[0] = (ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID);
			roce_icrc_write(m, m->pkt_len - 4, roce_icrc_compute(m, 14, 0, m->pkt_len - 4));
		}
	}
	return XH_PASS;
}

static void
test_sr_credits(void)
{
	static const struct { uint32_t posted; uint8_t code; } want[] = {
		{ 1, 0 }, { 2, 1 }, { 5, 4 }, { 7, 5 }, { 10, 6 }, { 13, 7 }, { 40, 10 }, { 100, 13 },
		{ 129, 14 },
	};
	struct xh_qp_conf c = { .sr = 1, .rq_depth = 256 };
	struct roce_wc wc;
	struct xh_qp p;
	unsigned int i, k, inflight_max = 0;

	for (i = 0; i < RTE_DIM(want); i++) {
		err_setup(&p, &c, 123);
		h.tap = credit_tap;
		for (k = 0; k < want[i].posted; k++)
			RT_CHECK(post_recv(&p, 1, 0, 4096, k) == 0, "recv");
		credit_code_seen = 0xFF;
		expect_wc(&p, ROCE_WR_SEND, 0, 256, ROCE_WC_SUCCESS, "credits");
		/* After the SEND: posted - 1 receives left. */
		RT_CHECK(credit_code_seen == want[i].code, "%u posted: credit code %u, want %u",
				want[i].posted, credit_code_seen, want[i].code);
		err_teardown(&p);
	}

	/* No credits reported: 32 SENDs go at once, as before credits. */
	err_setup(&p, &c, 124);
	h.tap = credit_tap;
	credit_strip = 1;
	for (k = 0; k < 32; k++)
		RT_CHECK(post_recv(&p, 1, 0, 4096, k) == 0, "recv");
	RT_CHECK(post(&p, 0, ROCE_WR_SEND, 0, 0, 64, 0) == 0 && one_wc(p.cq[0], &wc, SEC),
			"first send");
	for (k = 1; k < 32; k++)
		RT_CHECK(post(&p, 0, ROCE_WR_SEND, 0, 0, 64, k) == 0, "post");
	for (k = 1; k < 32; ) {
		uint64_t out = xh_counter(&h, 0, ROCE_XC_TX_REQ) - k;

		inflight_max = RTE_MAX(inflight_max, (unsigned int)out);
		if (roce_cq_poll(p.cq[0], &wc, 1) == 1)
			k++;
		else
			xh_step(&h, 1000);
	}
	RT_CHECK(inflight_max >= 16, "without credits nothing is held: %u in flight at most",
			inflight_max);
	credit_strip = 0;
	err_teardown(&p);
}

/*
 * Waiting out an RNR timer (20 ms) with WRITEs acknowledged behind the SEND that drew it: the
 * progress they make re-arms the retransmit timer (100 us), which must not expire meanwhile.
 */
static void
test_sr_rnr_wait_no_rto(void)
{
	struct xh_qp_conf c = { .sr = 1, .sr_rto_us = 100, .min_rnr_timer = 22 };
	struct roce_wc wc;
	enum roce_wc_status st;
	struct xh_qp p;
	unsigned int i;

	err_setup(&p, &c, 125);
	/* Round trips measured: the RTO is down to 100 us. */
	RT_CHECK(writes_through(&p, 4, 4096, SEC, &st) == 4 && st == ROCE_WC_SUCCESS, "warm-up");
	RT_CHECK(post(&p, 0, ROCE_WR_SEND, 0, 0, 64, 0) == 0, "post send");
	for (i = 0; i < 8; i++)
		RT_CHECK(post(&p, 0, ROCE_WR_RDMA_WRITE, 4096, 4096, 4096, 1 + i) == 0, "post write");
	xh_poll_cq(&h, p.cq[0], &wc, 1, 10 * MS);
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_NAK_RNR_RX) == 1, "one RNR NAK: %lu",
			(unsigned long)xh_counter(&h, 0, ROCE_XC_NAK_RNR_RX));
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_TIMEOUTS) == 0, "no RTO during the RNR wait: %lu",
			(unsigned long)xh_counter(&h, 0, ROCE_XC_TIMEOUTS));
	RT_CHECK(post_recv(&p, 1, 0, 64, 0) == 0, "recv");
	for (i = 0; i < 9; i++)
		if (one_wc(p.cq[0], &wc, SEC))
			RT_CHECK(wc.status == ROCE_WC_SUCCESS && wc.wr_id == i, "wc %u: %s (wr_id %lu)",
					i, roce_wc_status_str(wc.status), (unsigned long)wc.wr_id);
	err_teardown(&p);
}

/* A SEND with Invalidate that must fail: a key naming nothing (@bogus), or a plain MR's. */
static void
inv_fail(const struct xh_qp_conf *conf, uint64_t seed, int bogus, int c)
{
	struct roce_send_wr wr;
	struct roce_wc wc;
	struct xh_qp p;

	err_setup(&p, conf, seed);
	RT_CHECK(post_recv(&p, 1, 0, 4096, 1) == 0, "recv");
	wr = (struct roce_send_wr){
		.wr_id = 9, .opcode = ROCE_WR_SEND_WITH_INV,
		.send_flags = ROCE_SEND_SIGNALED, .num_sge = 1,
		.sg_list = {{ roce_mr_iova(p.mr[0]), 256, roce_mr_lkey(p.mr[0]) }},
		.imm_data = roce_mr_rkey(p.mr[1]) ^ (bogus ? 0xFFFF00 : 0),
	};
	RT_CHECK(roce_post_send(p.qp[0], &wr) == 0, "post");
	if (one_wc(p.cq[0], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_REM_INV_REQ_ERR, "%d: bad key: %s", c,
				roce_wc_status_str(wc.status));
	if (one_wc(p.cq[1], &wc, SEC))
		RT_CHECK(wc.status == ROCE_WC_REM_INV_REQ_ERR, "%d: bad key recv: %s", c,
				roce_wc_status_str(wc.status));
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_INVALIDATE_ERR) == 1, "%d: counted", c);
	expect_state(&p, 1, ROCE_QPS_ERR, "bad invalidate");
	err_teardown(&p);
}

/*
 * SEND with Invalidate takes the named key away when its MR allows it (IBA, as rxe for
 * fast-registered MRs), else fails the receive and the QP: a key naming nothing, or an MR
 * registered without ROCE_ACCESS_REMOTE_INVALIDATE.
 */
static void
test_send_with_inv(void)
{
	static const struct xh_qp_conf confs[2] = { { .retry_cnt = 1 }, { .sr = 1, .retry_cnt = 1 } };
	static uint8_t extra[4096];
	struct roce_send_wr wr;
	struct roce_mr *mr;
	struct roce_wc wc;
	struct xh_qp p;
	int c;

	for (c = 0; c < 2; c++) {
		err_setup(&p, &confs[c], 120 + c);
		mr = roce_mr_reg(h.pd[1], extra, sizeof(extra), ROCE_ACCESS_LOCAL_WRITE |
				ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_INVALIDATE, NULL);
		RT_CHECK(mr != NULL && post_recv(&p, 1, 0, 4096, 1) == 0, "setup");
		wr = (struct roce_send_wr){
			.wr_id = 7, .opcode = ROCE_WR_SEND_WITH_INV,
			.send_flags = ROCE_SEND_SIGNALED, .num_sge = 1,
			.sg_list = {{ roce_mr_iova(p.mr[0]), 256, roce_mr_lkey(p.mr[0]) }},
			.imm_data = roce_mr_rkey(mr),
		};
		RT_CHECK(roce_post_send(p.qp[0], &wr) == 0, "post");
		if (one_wc(p.cq[0], &wc, SEC))
			RT_CHECK(wc.status == ROCE_WC_SUCCESS, "%d: send with inv: %s", c,
					roce_wc_status_str(wc.status));
		if (one_wc(p.cq[1], &wc, SEC))
			RT_CHECK(wc.status == ROCE_WC_SUCCESS && (wc.wc_flags & ROCE_WC_WITH_INV) &&
					wc.invalidated_rkey == roce_mr_rkey(mr), "%d: recv", c);
		RT_CHECK(xh_counter(&h, 1, ROCE_XC_INVALIDATED) == 1, "%d: counted", c);
		/* The key is gone: a WRITE with it is a remote access error. */
		wr = (struct roce_send_wr){
			.wr_id = 8, .opcode = ROCE_WR_RDMA_WRITE,
			.send_flags = ROCE_SEND_SIGNALED, .num_sge = 1,
			.sg_list = {{ roce_mr_iova(p.mr[0]), 64, roce_mr_lkey(p.mr[0]) }},
			.remote_addr = roce_mr_iova(mr), .rkey = roce_mr_rkey(mr),
		};
		RT_CHECK(roce_post_send(p.qp[0], &wr) == 0, "post write");
		if (one_wc(p.cq[0], &wc, SEC))
			RT_CHECK(wc.status == ROCE_WC_REM_ACCESS_ERR, "%d: write after inv: %s", c,
					roce_wc_status_str(wc.status));
		err_teardown(&p);
		roce_mr_dereg(mr);

		/*
		 * A key that names nothing, then the key of an MR without remote invalidation:
		 * the receive and the send fail, the QP stops, the MR keeps its key.
		 */
		inv_fail(&confs[c], 122 + c, 1, c);
		inv_fail(&confs[c], 124 + c, 0, c);
	}
}


/* Rewrites the P_Key of side 0's requests to *arg (ICRC made right again). */
static enum xh_verdict
pkey_tap(void *arg, int from, struct rte_mbuf *m)
{
	struct roce_bth *bth = (struct roce_bth *)(uintptr_t)tap_bth(m);

	if (from == 0 && (roce_opcode_info[bth->opcode].mask & ROCE_M_REQ)) {
		bth->pkey = rte_cpu_to_be_16(*(uint16_t *)arg);
		roce_icrc_write(m, m->pkt_len - 4, roce_icrc_compute(m, 14, 0, m->pkt_len - 4));
	}
	return XH_PASS;
}

/* Only the default partition is served: 0x7FFF (limited member) matches, 0x1234 does not. */
static void
test_pkey(void)
{
	struct xh_qp_conf c = { .retry_cnt = 1, .timeout = 8 };
	uint16_t pkey = 0x7FFF;
	struct xh_qp p;

	err_setup(&p, &c, 130);
	h.tap = pkey_tap;
	h.tap_arg = &pkey;
	expect_wc(&p, ROCE_WR_RDMA_WRITE, 0, 2048, ROCE_WC_SUCCESS, "P_Key 0x7FFF");
	pkey = 0x1234;
	fill(p.buf[0], 64, 3);
	expect_wc(&p, ROCE_WR_RDMA_WRITE, 8192, 64, ROCE_WC_RETRY_EXC_ERR, "P_Key 0x1234");
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_BAD_PKEY) >= 1 &&
			xh_counter(&h, 1, ROCE_XC_RX_PKTS) == 2, "dropped and counted: %lu",
			(unsigned long)xh_counter(&h, 1, ROCE_XC_BAD_PKEY));
	RT_CHECK(p.buf[1][8192] == 0, "the foreign partition's WRITE was not executed");
	err_teardown(&p);
}

/*
 * Go-back-N READs over a path that reorders responses (and one that also loses some): a
 * response past a gap is kept and the gap re-issued only once it outlives the reordering
 * window, which grows when re-issues prove needless; reordering alone must not turn into a
 * re-issue per reordered response (as it did: each re-served the rest of the READ).
 */
static void
test_read_reorder(void)
{
	enum { N = 100, LEN = 65536 };
	static const struct { double loss; const char *what; } runs[] = {
		{ 0, "reordering" }, { 0.01, "reordering and 1 % loss" },
	};
	struct xh_qp_conf c = { .buf_len = 2 * LEN, .max_rd_atomic = 4 };
	unsigned int r, i, done;
	struct roce_wc wc[8];
	struct xh_qp p;

	for (r = 0; r < RTE_DIM(runs); r++) {
		err_setup(&p, &c, 140 + r);
		h.impair[1] = (struct xh_impair){ .reorder = 0.05, .reorder_ns = 50000,
			.delay_ns = 2000, .loss = runs[r].loss };
		fill(p.buf[1] + LEN, LEN, 11);
		for (i = 0, done = 0; done < N; ) {
			int n;

			while (i < N && i - done < 4)
				RT_CHECK(post(&p, 0, ROCE_WR_RDMA_READ, 0, LEN, LEN, i++) == 0, "post");
			/* Ask for what is outstanding: xh_poll_cq waits for all it asks for. */
			n = xh_poll_cq(&h, p.cq[0], wc, (int)(i - done), 10 * SEC);
			if (n <= 0) {
				RT_CHECK(0, "%s: READ %u of %u did not complete", runs[r].what, done, N);
				break;
			}
			for (int k = 0; k < n; k++)
				RT_CHECK(wc[k].status == ROCE_WC_SUCCESS, "%s: READ %u: %s",
						runs[r].what, done + k, roce_wc_status_str(wc[k].status));
			done += (unsigned int)n;
		}
		RT_CHECK(memcmp(p.buf[0], p.buf[1] + LEN, LEN) == 0, "%s: data", runs[r].what);
		printf("  %s: %lu responses out of order, %lu placed ahead, %lu gaps closed by "
				"themselves, %lu re-issues (%lu needless), %lu timeouts\n", runs[r].what,
				(unsigned long)xh_counter(&h, 0, ROCE_XC_RESP_OOS),
				(unsigned long)xh_counter(&h, 0, ROCE_XC_READ_OOO_PLACED),
				(unsigned long)xh_counter(&h, 0, ROCE_XC_READ_REORDERED),
				(unsigned long)xh_counter(&h, 0, ROCE_XC_READ_REISSUE),
				(unsigned long)xh_counter(&h, 0, ROCE_XC_READ_SPURIOUS),
				(unsigned long)xh_counter(&h, 0, ROCE_XC_TIMEOUTS));
		RT_CHECK(xh_counter(&h, 0, ROCE_XC_READ_REORDERED) > N / 2,
				"%s: reordered responses closed their own gaps", runs[r].what);
		if (runs[r].loss == 0)
			RT_CHECK(xh_counter(&h, 0, ROCE_XC_READ_REISSUE) <= 8 &&
					xh_counter(&h, 0, ROCE_XC_TIMEOUTS) == 0,
					"reordering alone: %lu re-issues, %lu timeouts",
					(unsigned long)xh_counter(&h, 0, ROCE_XC_READ_REISSUE),
					(unsigned long)xh_counter(&h, 0, ROCE_XC_TIMEOUTS));
		RT_CHECK(xh_counter(&h, 0, ROCE_XC_RETRY_EXC) == 0, "%s: no retry exhaustion",
				runs[r].what);
		err_teardown(&p);
	}
}

/*
 * Requests never fill the engine's transmit ring: when the port is slow (the worker cannot
 * drain the ring), the ACKs and NAKs the receive path answers with between polls must still
 * find room; they were dropped (TX_RING_FULL) and the peers resent what had arrived.
 */
static void
test_tx_reserve(void)
{
	enum { NQP = 16, LEN = 65536, RING = 256 };
	struct roce_engine_conf ec = { .tx_ring_size = RING };
	static struct xh_qp p[NQP];
	struct rte_mbuf *pkts[RING];
	unsigned int i, k, queued = 0;
	uint16_t n;

	xh_init(&h, 150, &ec);
	for (i = 0; i < NQP; i++)
		RT_CHECK(xh_qp_connect(&h, &p[i], &(struct xh_qp_conf){ .buf_len = 2 * LEN }) == 0,
				"connect");
	for (i = 0; i < NQP; i++)
		RT_CHECK(post(&p[i], 0, ROCE_WR_RDMA_WRITE, 0, LEN, LEN, i) == 0, "post");
	/* Poll as a worker whose port takes nothing: the ring fills with requests only so far. */
	for (k = 0; k < 64; k++)
		roce_engine_poll(h.eng[0], h.now);
	while ((n = roce_engine_tx(h.eng[0], pkts, RING)) != 0) {
		queued += n;
		rte_pktmbuf_free_bulk(pkts, n);
	}
	RT_CHECK(queued > 0 && queued <= RING - RING / 8, "%u requests queued in a ring of %u: "
			"room kept for responses", queued, RING);
	for (i = 0; i < NQP; i++)
		xh_qp_destroy(&h, &p[i]);
	xh_fini(&h);
}

static void
count_fire(struct roce_timer *t, void *arg)
{
	RTE_SET_USED(t);
	(*(unsigned int *)arg)++;
}

/*
 * The wheel fires a timer in its own slot however often it runs inside that slot: one armed
 * for later in the slot the wheel just ran (a busy worker runs it every few hundred ns) was
 * left for the next turn, 4.2 ms late.
 */
static void
test_timer_slot(void)
{
	static struct roce_timer_wheel w;
	struct roce_timer a, b;
	unsigned int fired = 0;

	roce_timer_wheel_init(&w, 0);
	roce_timer_init(&a, count_fire, &fired);
	roce_timer_init(&b, count_fire, &fired);
	roce_timer_arm(&w, &a, 1500);               /* slot 1 */
	RT_CHECK(roce_timer_wheel_run(&w, 1100) == 0, "not due at 1100");
	roce_timer_arm(&w, &b, 1900);               /* armed after the run, same slot */
	RT_CHECK(roce_timer_wheel_run(&w, 1600) == 1 && fired == 1, "due at 1500, run at 1600");
	RT_CHECK(roce_timer_wheel_run(&w, 2000) == 1 && fired == 2, "the other at 1900");
	roce_timer_arm(&w, &a, 2100);               /* already due when the wheel next runs */
	RT_CHECK(roce_timer_wheel_run(&w, 5000) == 1 && fired == 3, "late runs catch up");
	RT_CHECK(roce_timer_wheel_next(&w) == UINT64_MAX, "nothing left");
}

/* A pacer of payload bytes: @rate_bps for every QP, one burst at a time. */
struct pace_test {
	uint64_t rate_bps;
	uint64_t calls;
	uint32_t max_pkts;
};

static uint64_t
pace_next(void *ctx, const struct roce_qp *qp, uint32_t pkts, uint64_t bytes, uint64_t now)
{
	struct pace_test *pt = ctx;

	RTE_SET_USED(qp);
	pt->calls++;
	pt->max_pkts = RTE_MAX(pt->max_pkts, pkts);
	return now + bytes * 8 * 1000000000ull / pt->rate_bps;
}

static uint8_t pace_port_seen[2];

static enum xh_verdict
pace_tap(void *arg, int from, struct rte_mbuf *m)
{
	RTE_SET_USED(arg);
	pace_port_seen[from] |= 1u << RTE_MIN(m->port, 7);
	return XH_PASS;
}

/*
 * The pacing hook holds a QP to the pacer's rate, a burst at a time, and its timer brings the
 * QP back; without a pacer the same WRITE takes a fraction of that time. Every packet carries
 * its QP's port (port_num less one).
 */
static void
test_pacer(void)
{
	enum { LEN = 1 << 20 };
	struct pace_test pt = { .rate_bps = 1000000000ull };
	struct roce_pacer pacer = { .next = pace_next, .ctx = &pt, .burst = 4 };
	uint64_t t0, paced_ns, free_ns;
	struct roce_wc wc;
	struct xh_qp p;

	xh_init(&h, 160, NULL);
	RT_CHECK(roce_engine_set_pacer(h.eng[0], &(struct roce_pacer){ .ctx = &pt }) == -EINVAL,
			"a pacer needs next");
	RT_CHECK(xh_qp_connect(&h, &p, &(struct xh_qp_conf){ .buf_len = LEN, .port_num = 2 }) ==
			0, "connect");
	h.tap = pace_tap;
	RT_CHECK(roce_engine_set_pacer(h.eng[0], &pacer) == 0, "set pacer");
	t0 = h.now;
	RT_CHECK(post(&p, 0, ROCE_WR_RDMA_WRITE, 0, 0, LEN, 1) == 0, "post");
	RT_CHECK(one_wc(p.cq[0], &wc, 100 * MS) == 1 && wc.status == ROCE_WC_SUCCESS,
			"paced WRITE completes");
	paced_ns = h.now - t0;
	/* 1 MiB at 1 Gbit/s is 8.39 ms; the last burst is not waited for. */
	RT_CHECK(paced_ns >= 8000000 && paced_ns <= 9500000, "1 MiB at 1 Gbit/s took %lu ns",
			(unsigned long)paced_ns);
	RT_CHECK(pt.max_pkts <= 4 && pt.calls >= LEN / 1024 / 4,
			"bursts of at most 4 (%u), %lu turns", pt.max_pkts, (unsigned long)pt.calls);
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_PACED) >= pt.calls - 1, "PACED %lu",
			(unsigned long)xh_counter(&h, 0, ROCE_XC_PACED));
	RT_CHECK(pace_port_seen[0] == 1u << 1 && pace_port_seen[1] == 1u << 1,
			"packets of a port_num 2 QP carry port 1 (%#x %#x)", pace_port_seen[0],
			pace_port_seen[1]);

	/* A QP held back when the pacer goes sends at once. */
	pt.rate_bps = 1000;                    /* 8 s per KiB */
	RT_CHECK(post(&p, 0, ROCE_WR_RDMA_WRITE, 0, 0, 8192, 2) == 0, "post");
	xh_step(&h, 1000);
	RT_CHECK(xh_poll_cq(&h, p.cq[0], &wc, 1, 10 * MS) == 0, "held back");
	RT_CHECK(roce_engine_set_pacer(h.eng[0], NULL) == 0, "pacer off");
	t0 = h.now;
	RT_CHECK(one_wc(p.cq[0], &wc, 10 * MS) == 1 && wc.status == ROCE_WC_SUCCESS,
			"released WRITE completes");
	t0 = h.now;
	RT_CHECK(post(&p, 0, ROCE_WR_RDMA_WRITE, 0, 0, LEN, 3) == 0, "post");
	RT_CHECK(one_wc(p.cq[0], &wc, 100 * MS) == 1 && wc.status == ROCE_WC_SUCCESS,
			"unpaced WRITE completes");
	free_ns = h.now - t0;
	RT_CHECK(free_ns * 4 < paced_ns, "unpaced %lu ns, paced %lu ns", (unsigned long)free_ns,
			(unsigned long)paced_ns);
	h.tap = NULL;
	xh_qp_destroy(&h, &p);
	xh_fini(&h);
}

static void
test_qp_state_machine(void)
{
	struct roce_qp_init_attr ia = { .max_send_wr = 4, .max_recv_wr = 4 };
	struct roce_qp_attr a = { .qp_state = ROCE_QPS_RTS };
	struct roce_qp *qp;

	xh_init(&h, 90, NULL);
	ia.send_cq = ia.recv_cq = roce_cq_create(16, SOCKET_ID_ANY);
	qp = roce_qp_create(h.eng[0], h.pd[0], &ia);
	RT_CHECK(qp != NULL && roce_qp_state(qp) == ROCE_QPS_RESET, "created in RESET");
	RT_CHECK(roce_qp_modify(qp, &a, ROCE_QP_STATE) == -EINVAL, "RESET->RTS refused");
	a.qp_state = ROCE_QPS_INIT;
	RT_CHECK(roce_qp_modify(qp, &a, ROCE_QP_STATE) == 0, "RESET->INIT");
	a.qp_state = ROCE_QPS_RTR;
	RT_CHECK(roce_qp_modify(qp, &a, ROCE_QP_STATE) == -EINVAL, "RTR needs its attributes");
	a.path_mtu = 9;
	RT_CHECK(roce_qp_modify(qp, &a, ROCE_QP_STATE | ROCE_QP_AV |
			ROCE_QP_PATH_MTU | ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC |
			ROCE_QP_MIN_RNR_TIMER) == -EINVAL,
			"bad MTU refused");
	a.qp_state = ROCE_QPS_ERR;
	RT_CHECK(roce_qp_modify(qp, &a, ROCE_QP_STATE) == 0 && roce_qp_state(qp) == ROCE_QPS_ERR,
			"any->ERR");
	a.qp_state = ROCE_QPS_RESET;
	RT_CHECK(roce_qp_modify(qp, &a, ROCE_QP_STATE) == 0, "ERR->RESET");
	roce_qp_destroy(qp);
	roce_cq_destroy(ia.send_cq);
	xh_fini(&h);
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	RT_RUN(test_ops_sizes);
	RT_RUN(test_sr_ops_sizes);
	RT_RUN(test_zc_ops_sizes);
	RT_RUN(test_zc_frames);
	RT_RUN(test_zc_reasons);
	RT_RUN(test_zc_dereg);
	RT_RUN(test_atomics);
	RT_RUN(test_ack_coalescing);
	RT_RUN(test_impairment);
	RT_RUN(test_sr_impairment);
	RT_RUN(test_zc_impairment);
	RT_RUN(test_qp_state_machine);
	RT_RUN(test_err_access);
	RT_RUN(test_mr_revoke);
	RT_RUN(test_err_behind_read);
	RT_RUN(test_err_rnr);
	RT_RUN(test_err_seq_and_timeout);
	RT_RUN(test_err_responses);
	RT_RUN(test_cnp_rx);
	RT_RUN(test_rx_burst_runs);
	RT_RUN(test_icrc_payload);
	RT_RUN(test_err_partial_and_dup);
	RT_RUN(test_sr_mismatch);
	RT_RUN(test_sr_single_losses);
	RT_RUN(test_sr_zero_len_rereq);
	RT_RUN(test_sr_read_rereq_midstream);
	RT_RUN(test_sr_peer_stall);
	RT_RUN(test_slow_receiver);
	RT_RUN(test_sr_credits);
	RT_RUN(test_sr_rnr_wait_no_rto);
	RT_RUN(test_send_with_inv);
	RT_RUN(test_pkey);
	RT_RUN(test_read_reorder);
	RT_RUN(test_tx_reserve);
	RT_RUN(test_timer_slot);
	RT_RUN(test_pacer);
	return rt_report("test_transport");
}
