/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD QPs on two engines joined by the in-memory link (test/common/xport_harness): SENDs both
 * ways with the GRH area and the completion fields, Q_Key rules (controlled Q_Keys, QP1's),
 * lengths against the path MTU and the receive buffer, no ACK and no retransmission, the PSN,
 * states and transitions, address handles, packets of the wrong transport, QP1 per port,
 * and ground truth: the capture ../shared/captures/roce_ud_send_64B.pcap rebuilt byte for
 * byte, decoded as its tshark text says, and received as Linux would fill the buffer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ip.h>

#include "roce_pcapfile.h"
#include "roce_test.h"
#include "xport_harness.h"

#define SEC 1000000000ull
#define MS 1000000ull
#define BUF_LEN (1u << 16)
#define MAX_TAP 64
#define QKEY_A 0x1234u

static struct xh h;

/* ---- the link tap: copies of what each side sent ---- */

struct tap_frame {
	uint32_t len;
	uint8_t b[4200];
};

static struct {
	unsigned int n[2];
	struct tap_frame f[2][MAX_TAP];
	int drop_from;              /* -1: none; else drop everything from that side */
} tap;

static enum xh_verdict
tap_fn(void *arg, int from, struct rte_mbuf *m)
{
	RTE_SET_USED(arg);
	if (tap.n[from] < MAX_TAP) {
		struct tap_frame *f = &tap.f[from][tap.n[from]++];

		f->len = rt_mbuf_copy(m, f->b, sizeof(f->b));
	}
	return from == tap.drop_from ? XH_DROP : XH_PASS;
}

static void
tap_reset(void)
{
	tap.n[0] = tap.n[1] = 0;
	tap.drop_from = -1;
}

static inline uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Offsets into an untagged frame of the IP version the test uses. */
static inline uint32_t
bth_off(int ipv6)
{
	return 14 + (ipv6 ? 40 : 20) + 8;
}

/* ---- UD ends ---- */

struct ud_end {
	int side;
	struct roce_qp *qp;
	struct roce_cq *cq;
	uint8_t *buf;
	struct roce_mr *mr;
	struct roce_ah *ah;        /* to the other side */
};

struct ud_conf {
	uint32_t qkey[2];          /* default QKEY_A */
	enum roce_mtu mtu[2];      /* default 1024 */
	uint32_t psn[2];           /* default 0x100 * (side + 1) */
	int ipv6;
	uint32_t qpn[2];           /* 0: the engine's pick */
	uint8_t port[2];           /* default 1 */
};

static void
side_path(struct roce_path *p, int side, int ipv6)
{
	memset(p, 0, sizeof(*p));
	p->src_mac.addr_bytes[0] = 0x02;
	p->src_mac.addr_bytes[5] = (uint8_t)(side + 1);
	p->dst_mac.addr_bytes[0] = 0x02;
	p->dst_mac.addr_bytes[5] = (uint8_t)(2 - side);
	p->ipv6 = (uint8_t)ipv6;
	if (ipv6) {
		p->src_ip[0] = p->dst_ip[0] = 0xfd;
		p->src_ip[15] = (uint8_t)(side + 1);
		p->dst_ip[15] = (uint8_t)(2 - side);
	} else {
		p->src_ip[0] = p->dst_ip[0] = 10;
		p->src_ip[3] = (uint8_t)(side + 1);
		p->dst_ip[3] = (uint8_t)(2 - side);
	}
	p->udp_sport = ROCE_UDP_SPORT_BASE;
	roce_path_init(p);
}

/* RESET -> INIT -> RTR -> RTS of a UD QP. */
static int
ud_up(struct roce_qp *qp, uint32_t qkey, enum roce_mtu mtu, uint32_t psn, uint8_t port)
{
	struct roce_qp_attr a = {
		.qp_state = ROCE_QPS_INIT, .qkey = qkey, .port_num = port, .path_mtu = mtu,
	};
	int ret = roce_qp_modify(qp, &a, ROCE_QP_STATE | ROCE_QP_PKEY_INDEX | ROCE_QP_PORT |
			ROCE_QP_QKEY | ROCE_QP_PATH_MTU);

	if (ret != 0)
		return ret;
	a.qp_state = ROCE_QPS_RTR;
	ret = roce_qp_modify(qp, &a, ROCE_QP_STATE);
	if (ret != 0)
		return ret;
	a.qp_state = ROCE_QPS_RTS;
	a.sq_psn = psn;
	return roce_qp_modify(qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN);
}

static int
ud_end_make(struct ud_end *e, int side, uint32_t qpn, uint8_t port, int ipv6)
{
	struct roce_qp_init_attr ia = {
		.max_send_wr = 64, .max_recv_wr = 64, .max_inline_data = 64,
		.qp_type = ROCE_QPT_UD, .qp_num = qpn,
		.port_num = qpn == ROCE_GSI_QPN ? port : 0,
	};
	struct roce_ah_attr aa = { .port_num = port };

	memset(e, 0, sizeof(*e));
	e->side = side;
	e->cq = roce_cq_create(1024, SOCKET_ID_ANY);
	e->buf = calloc(1, BUF_LEN);
	e->mr = e->buf != NULL ? roce_mr_reg(h.pd[side], e->buf, BUF_LEN,
			ROCE_ACCESS_LOCAL_WRITE, NULL) : NULL;
	ia.send_cq = ia.recv_cq = e->cq;
	e->qp = e->cq != NULL ? roce_qp_create(h.eng[side], h.pd[side], &ia) : NULL;
	side_path(&aa.path, side, ipv6);
	e->ah = roce_ah_create(h.pd[side], &aa);
	return e->qp != NULL && e->mr != NULL && e->ah != NULL ? 0 : -ENOMEM;
}

static void
ud_end_free(struct ud_end *e)
{
	if (e->qp != NULL)
		roce_qp_destroy(e->qp);
	if (e->ah != NULL)
		roce_ah_destroy(e->ah);
	if (e->mr != NULL)
		roce_mr_dereg(e->mr);
	if (e->cq != NULL)
		roce_cq_destroy(e->cq);
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

static int
ud_pair(struct ud_end e[2], const struct ud_conf *conf)
{
	struct ud_conf c = conf != NULL ? *conf : (struct ud_conf){0};
	int i, ret;

	for (i = 0; i < 2; i++) {
		uint8_t port = c.port[i] != 0 ? c.port[i] : 1;

		ret = ud_end_make(&e[i], i, c.qpn[i], port, c.ipv6);
		if (ret == 0)
			ret = ud_up(e[i].qp, c.qkey[i] != 0 ? c.qkey[i] : QKEY_A,
					c.mtu[i] != 0 ? c.mtu[i] : ROCE_MTU_1024,
					c.psn[i] != 0 ? c.psn[i] : 0x100u * (i + 1), port);
		if (ret != 0)
			return ret;
	}
	return 0;
}

static void
ud_pair_free(struct ud_end e[2])
{
	ud_end_free(&e[0]);
	ud_end_free(&e[1]);
}

static int
ud_send(struct ud_end *e, struct roce_ah *ah, uint32_t dqpn, uint32_t qkey, uint32_t off,
		uint32_t len, int imm, uint64_t wr_id)
{
	struct roce_send_wr wr = {
		.wr_id = wr_id,
		.opcode = imm ? ROCE_WR_SEND_WITH_IMM : ROCE_WR_SEND,
		.send_flags = ROCE_SEND_SIGNALED,
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(e->mr) + off, len, roce_mr_lkey(e->mr) }},
		.imm_data = 0xCAFE0000u | (uint32_t)wr_id,
		.ud = { .ah = ah, .remote_qpn = dqpn, .remote_qkey = qkey },
	};

	return roce_post_send(e->qp, &wr);
}

static int
ud_recv(struct ud_end *e, uint32_t off, uint32_t len, uint64_t wr_id)
{
	struct roce_recv_wr wr = {
		.wr_id = wr_id,
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(e->mr) + off, len, roce_mr_lkey(e->mr) }},
	};

	return roce_post_recv(e->qp, &wr);
}

static uint64_t
qp_cnt(const struct roce_qp *qp, enum roce_xport_counter c)
{
	uint64_t cnt[ROCE_XC_NUM];

	roce_qp_counters(qp, cnt);
	return cnt[c];
}

static int
poll_n(struct roce_cq *cq, struct roce_wc *wc, int n, uint64_t timeout)
{
	return xh_poll_cq(&h, cq, wc, n, timeout);
}

static void
fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

/* What a receive of a datagram from @from must show: completion, GRH area, data. */
static void
check_recv(const struct ud_end e[2], int from, const struct roce_wc *wc, uint64_t wr_id,
		uint32_t roff, uint32_t soff, uint32_t len, int imm, const struct tap_frame *f,
		int ipv6)
{
	const struct ud_end *s = &e[from], *r = &e[1 - from];
	const uint8_t *grh = r->buf + roff;
	uint8_t want_gid[16] = {0};
	static const uint8_t zero[20];

	RT_CHECK(wc->status == ROCE_WC_SUCCESS && wc->wr_id == wr_id &&
			wc->opcode == ROCE_WC_RECV && wc->byte_len == ROCE_GRH_LEN + len &&
			wc->qp_num == roce_qp_num(r->qp) && wc->src_qp == roce_qp_num(s->qp),
			"recv %u bytes: status %s wr_id %" PRIu64 " byte_len %u src_qp %x",
			len, roce_wc_status_str(wc->status), wc->wr_id, wc->byte_len, wc->src_qp);
	RT_CHECK((wc->wc_flags & ROCE_WC_GRH) && !!(wc->wc_flags & ROCE_WC_WITH_IMM) == !!imm &&
			wc->slid == 0 && wc->pkey_index == 0 && wc->sl == 0 &&
			wc->network_hdr_type == (ipv6 ? ROCE_NETWORK_IPV6 : ROCE_NETWORK_IPV4),
			"recv flags %x slid %u nht %u", wc->wc_flags, wc->slid, wc->network_hdr_type);
	RT_CHECK(wc->qkey == QKEY_A, "recv qkey %x", wc->qkey);
	if (imm)
		/* ud_send() puts the send's wr_id, 100 past the receive's, in the immediate. */
		RT_CHECK(wc->imm_data == (0xCAFE0000u | (uint32_t)(wr_id + 100)), "imm %x",
				wc->imm_data);
	if (ipv6) {
		want_gid[0] = 0xfd;
		want_gid[15] = (uint8_t)(from + 1);
	} else {
		want_gid[10] = want_gid[11] = 0xff;
		want_gid[12] = 10;
		want_gid[15] = (uint8_t)(from + 1);
	}
	RT_CHECK(memcmp(wc->sgid, want_gid, 16) == 0, "recv sgid");
	/* The GRH area as Linux fills it: the frame's IP header (IPv4: in its last 20 bytes). */
	if (f != NULL && ipv6)
		RT_CHECK(memcmp(grh, f->b + 14, 40) == 0, "GRH area is the IPv6 header");
	if (f != NULL && !ipv6)
		RT_CHECK(memcmp(grh, zero, 20) == 0 && memcmp(grh + 20, f->b + 14, 20) == 0,
				"GRH area: 20 zero bytes, then the IPv4 header");
	RT_CHECK(memcmp(r->buf + roff + ROCE_GRH_LEN, s->buf + soff, len) == 0,
			"recv data, %u bytes", len);
}

/* ---- SENDs both ways ---- */

static void
sends(int ipv6)
{
	static const uint32_t sizes[] = { 0, 1, 3, 63, 64, 257, 1000, 1023, 1024 };
	struct ud_conf c = { .ipv6 = ipv6 };
	struct ud_end e[2];
	struct roce_wc wc;
	unsigned int i;
	int from;

	RT_CHECK(ud_pair(e, &c) == 0, "UD pair");
	for (i = 0; i < RTE_DIM(sizes) * 2; i++) {
		uint32_t len = sizes[i / 2], soff = 8192 + i * 8, roff = 32768 + i * 8;
		int imm = (int)(i & 1);

		from = (int)(i & 1) ^ (int)((i / 2) & 1);
		tap_reset();
		fill(e[from].buf + soff, len, i);
		RT_CHECK(ud_recv(&e[1 - from], roff, len + ROCE_GRH_LEN, 100 + i) == 0, "recv");
		RT_CHECK(ud_send(&e[from], e[from].ah, roce_qp_num(e[1 - from].qp), QKEY_A, soff,
				len, imm, 200 + i) == 0, "post UD send %u", len);
		if (poll_n(e[from].cq, &wc, 1, SEC) != 1 ||
				!(wc.status == ROCE_WC_SUCCESS && wc.wr_id == 200 + i &&
				  wc.opcode == ROCE_WC_SEND && wc.byte_len == len)) {
			RT_CHECK(0, "send completion %u bytes: %s", len,
					roce_wc_status_str(wc.status));
			continue;
		}
		if (poll_n(e[1 - from].cq, &wc, 1, SEC) != 1) {
			RT_CHECK(0, "no receive completion for %u bytes", len);
			continue;
		}
		RT_CHECK(tap.n[from] == 1 && tap.n[1 - from] == 0,
				"one datagram, no answer: %u and %u frames", tap.n[from],
				tap.n[1 - from]);
		check_recv(e, from, &wc, 100 + i, roff, soff, len, imm, &tap.f[from][0], ipv6);
	}
	/* No ACK went either way: each side sent only its own datagrams. */
	for (from = 0; from < 2; from++)
		RT_CHECK(qp_cnt(e[from].qp, ROCE_XC_TX_PKTS) == RTE_DIM(sizes) &&
				qp_cnt(e[from].qp, ROCE_XC_TX_RESP) == 0 &&
				qp_cnt(e[from].qp, ROCE_XC_RX_PKTS) == RTE_DIM(sizes),
				"side %d: tx %" PRIu64 " rx %" PRIu64, from,
				qp_cnt(e[from].qp, ROCE_XC_TX_PKTS),
				qp_cnt(e[from].qp, ROCE_XC_RX_PKTS));
	ud_pair_free(e);
}

static void
test_ud_sends_ipv4(void)
{
	sends(0);
}

static void
test_ud_sends_ipv6(void)
{
	sends(1);
}

/* A receive buffer in three SGEs: the GRH area may straddle them, as any bytes may. */
static void
test_ud_sges(void)
{
	struct ud_end e[2];
	struct roce_recv_wr rwr = { .wr_id = 5, .num_sge = 3 };
	uint8_t want[ROCE_GRH_LEN + 100];
	struct roce_wc wc;

	RT_CHECK(ud_pair(e, NULL) == 0, "UD pair");
	tap_reset();
	rwr.sg_list[0] = (struct roce_sge){ roce_mr_iova(e[1].mr) + 1000, 30,
		roce_mr_lkey(e[1].mr) };
	rwr.sg_list[1] = (struct roce_sge){ roce_mr_iova(e[1].mr) + 2000, 50,
		roce_mr_lkey(e[1].mr) };
	rwr.sg_list[2] = (struct roce_sge){ roce_mr_iova(e[1].mr) + 3000, 60,
		roce_mr_lkey(e[1].mr) };
	RT_CHECK(roce_post_recv(e[1].qp, &rwr) == 0, "post 3-SGE recv");
	fill(e[0].buf, 100, 9);
	RT_CHECK(ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A, 0, 100, 0, 1) == 0,
			"send");
	RT_CHECK(poll_n(e[1].cq, &wc, 1, SEC) == 1 && wc.status == ROCE_WC_SUCCESS &&
			wc.byte_len == 140, "3-SGE receive: %s %u", roce_wc_status_str(wc.status),
			wc.byte_len);
	memset(want, 0, 20);
	memcpy(want + 20, tap.f[0][0].b + 14, 20);
	memcpy(want + 40, e[0].buf, 100);
	RT_CHECK(memcmp(e[1].buf + 1000, want, 30) == 0 &&
			memcmp(e[1].buf + 2000, want + 30, 50) == 0 &&
			memcmp(e[1].buf + 3000, want + 80, 60) == 0, "GRH and data across SGEs");
	ud_pair_free(e);
}

/* ---- Q_Keys ---- */

static void
test_ud_qkey(void)
{
	struct ud_conf c = { .qkey = { 0x5555, QKEY_A } };
	struct ud_end e[2];
	struct roce_wc wc;
	uint32_t deth;

	RT_CHECK(ud_pair(e, &c) == 0, "UD pair");
	RT_CHECK(ud_recv(&e[1], 0, 4096, 1) == 0, "recv");
	/* The wrong Q_Key: dropped, counted, the QP goes on. */
	tap_reset();
	RT_CHECK(ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A + 1, 0, 64, 0, 1) == 0,
			"send");
	RT_CHECK(poll_n(e[0].cq, &wc, 1, SEC) == 1 && wc.status == ROCE_WC_SUCCESS,
			"a UD send completes whether the datagram is taken or not");
	xh_settle(&h, 100 * 1000);
	RT_CHECK(poll_n(e[1].cq, &wc, 1, 0) == 0, "no receive for a wrong Q_Key");
	RT_CHECK(qp_cnt(e[1].qp, ROCE_XC_UD_QKEY_DROP) == 1, "UD_QKEY_DROP %" PRIu64,
			qp_cnt(e[1].qp, ROCE_XC_UD_QKEY_DROP));
	RT_CHECK(roce_qp_state(e[1].qp) == ROCE_QPS_RTS, "receiver still RTS");
	RT_CHECK(tap.n[0] == 1 && rd32(tap.f[0][0].b + bth_off(0) + 12) == QKEY_A + 1,
			"the WR's Q_Key on the wire");
	/* A controlled Q_Key in the WR sends the QP's own (0x5555): still not the peer's. */
	tap_reset();
	RT_CHECK(ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), ROCE_QKEY_CONTROLLED | QKEY_A, 0,
			64, 0, 2) == 0, "send");
	poll_n(e[0].cq, &wc, 1, SEC);
	xh_settle(&h, 100 * 1000);
	deth = tap.n[0] == 1 ? rd32(tap.f[0][0].b + bth_off(0) + 12) : 0;
	RT_CHECK(deth == 0x5555, "controlled Q_Key: the QP's own on the wire (%x)", deth);
	RT_CHECK(qp_cnt(e[1].qp, ROCE_XC_UD_QKEY_DROP) == 2 && poll_n(e[1].cq, &wc, 1, 0) == 0,
			"and dropped by the peer");
	/* The sender takes the peer's Q_Key as its own: the controlled form now gets through. */
	{
		struct roce_qp_attr a = { .qkey = QKEY_A };

		RT_CHECK(roce_qp_modify(e[0].qp, &a, ROCE_QP_QKEY) == 0, "RTS->RTS Q_Key");
	}
	tap_reset();
	RT_CHECK(ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), 0xFFFFFFFFu, 0, 64, 0, 3) == 0,
			"send");
	RT_CHECK(poll_n(e[1].cq, &wc, 1, SEC) == 1 && wc.status == ROCE_WC_SUCCESS &&
			wc.qkey == QKEY_A, "controlled Q_Key taken: %s", roce_wc_status_str(wc.status));
	RT_CHECK(tap.n[0] == 1 && rd32(tap.f[0][0].b + bth_off(0) + 12) == QKEY_A,
			"QP Q_Key on the wire");
	/* The DETH source QP is the sender's QPN. */
	RT_CHECK(tap.n[0] == 1 && (rd32(tap.f[0][0].b + bth_off(0) + 16) & 0xFFFFFF) ==
			roce_qp_num(e[0].qp), "DETH source QP");
	ud_pair_free(e);
}

/* ---- lengths ---- */

static void
test_ud_lengths(void)
{
	struct ud_conf c = { .mtu = { ROCE_MTU_4096, ROCE_MTU_1024 } };
	struct ud_end e[2];
	struct roce_wc wc[4];

	RT_CHECK(ud_pair(e, &c) == 0, "UD pair");
	/* Longer than the receiver's path MTU: dropped there, its receive WQE kept. */
	RT_CHECK(ud_recv(&e[1], 0, 8192, 1) == 0, "recv");
	RT_CHECK(ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A, 0, 2000, 0, 1) == 0,
			"send 2000");
	RT_CHECK(poll_n(e[0].cq, wc, 1, SEC) == 1 && wc[0].status == ROCE_WC_SUCCESS,
			"2000 bytes fit the sender's MTU 4096");
	xh_settle(&h, 100 * 1000);
	RT_CHECK(poll_n(e[1].cq, wc, 1, 0) == 0 &&
			qp_cnt(e[1].qp, ROCE_XC_UD_RX_TOO_LONG) == 1,
			"past the receiver's MTU: UD_RX_TOO_LONG %" PRIu64,
			qp_cnt(e[1].qp, ROCE_XC_UD_RX_TOO_LONG));
	RT_CHECK(ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A, 0, 1024, 0, 2) == 0,
			"send 1024");
	RT_CHECK(poll_n(e[1].cq, wc, 1, SEC) == 1 && wc[0].status == ROCE_WC_SUCCESS &&
			wc[0].wr_id == 1 && wc[0].byte_len == 1064,
			"the kept receive takes the next one: %s", roce_wc_status_str(wc[0].status));
	poll_n(e[0].cq, wc, 1, SEC);
	/* No receive WQE: dropped, counted, nothing sent back. */
	tap_reset();
	RT_CHECK(ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A, 0, 64, 0, 3) == 0,
			"send");
	poll_n(e[0].cq, wc, 1, SEC);
	xh_settle(&h, 100 * 1000);
	RT_CHECK(qp_cnt(e[1].qp, ROCE_XC_UD_NO_RECV) == 1 && tap.n[1] == 0 &&
			roce_qp_state(e[1].qp) == ROCE_QPS_RTS,
			"no receive WQE: UD_NO_RECV %" PRIu64 ", no RNR NAK",
			qp_cnt(e[1].qp, ROCE_XC_UD_NO_RECV));
	/* A receive buffer exactly GRH + payload takes it; one byte short fails. */
	RT_CHECK(ud_recv(&e[1], 0, ROCE_GRH_LEN + 100, 4) == 0, "recv exact");
	RT_CHECK(ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A, 0, 100, 0, 4) == 0,
			"send");
	RT_CHECK(poll_n(e[1].cq, wc, 1, SEC) == 1 && wc[0].status == ROCE_WC_SUCCESS,
			"GRH + 100 bytes fit exactly");
	RT_CHECK(ud_recv(&e[1], 0, ROCE_GRH_LEN + 99, 5) == 0 &&
			ud_recv(&e[1], 4096, 4096, 6) == 0, "recv short, then another");
	RT_CHECK(ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A, 0, 100, 0, 5) == 0,
			"send");
	RT_CHECK(poll_n(e[1].cq, wc, 2, SEC) == 2 && wc[0].wr_id == 5 &&
			wc[0].status == ROCE_WC_LOC_LEN_ERR && wc[1].wr_id == 6 &&
			wc[1].status == ROCE_WC_WR_FLUSH_ERR,
			"receive 1 byte short: LOC_LEN_ERR, the next flushed (%s, %s)",
			roce_wc_status_str(wc[0].status), roce_wc_status_str(wc[1].status));
	RT_CHECK(roce_qp_state(e[1].qp) == ROCE_QPS_ERR &&
			qp_cnt(e[1].qp, ROCE_XC_UD_RECV_LEN_ERR) == 1, "receiver in ERR");
	poll_n(e[0].cq, wc, 2, SEC);
	/* Longer than the sender's own MTU: LOC_LEN_ERR, nothing on the wire, the QP in ERR. */
	tap_reset();
	RT_CHECK(ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A, 0, 4097, 0, 7) == 0 &&
			ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A, 0, 64, 0, 8) == 0,
			"send 4097, then 64");
	RT_CHECK(poll_n(e[0].cq, wc, 2, SEC) == 2 && wc[0].wr_id == 7 &&
			wc[0].status == ROCE_WC_LOC_LEN_ERR && wc[1].wr_id == 8 &&
			wc[1].status == ROCE_WC_WR_FLUSH_ERR,
			"send over the MTU: LOC_LEN_ERR, the next flushed (%s, %s)",
			roce_wc_status_str(wc[0].status), roce_wc_status_str(wc[1].status));
	RT_CHECK(tap.n[0] == 0 && roce_qp_state(e[0].qp) == ROCE_QPS_ERR &&
			qp_cnt(e[0].qp, ROCE_XC_UD_TX_TOO_LONG) == 1,
			"nothing sent, sender in ERR");
	/* Posting to a QP in ERR flushes at once. */
	RT_CHECK(ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A, 0, 64, 0, 9) == 0 &&
			roce_cq_poll(e[0].cq, wc, 1) == 1 && wc[0].status == ROCE_WC_WR_FLUSH_ERR,
			"post in ERR flushed");
	/* Back through RESET, the QP works again. */
	{
		struct roce_qp_attr a = { .qp_state = ROCE_QPS_RESET };

		RT_CHECK(roce_qp_modify(e[0].qp, &a, ROCE_QP_STATE) == 0 &&
				roce_qp_modify(e[1].qp, &a, ROCE_QP_STATE) == 0 &&
				ud_up(e[0].qp, QKEY_A, ROCE_MTU_1024, 7, 1) == 0 &&
				ud_up(e[1].qp, QKEY_A, ROCE_MTU_1024, 7, 1) == 0, "reset, up again");
	}
	RT_CHECK(ud_recv(&e[1], 0, 4096, 10) == 0 &&
			ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A, 0, 1024, 0, 10) == 0,
			"post");
	RT_CHECK(poll_n(e[1].cq, wc, 1, SEC) == 1 && wc[0].status == ROCE_WC_SUCCESS,
			"after RESET: %s", roce_wc_status_str(wc[0].status));
	ud_pair_free(e);
}

/* ---- no ACK, no retransmission; the PSN; the UDP source port ---- */

static void
test_ud_unreliable(void)
{
	struct ud_conf c = { .psn = { 0xFFFFFE, 5 } };
	struct ud_end e[2];
	struct roce_wc wc[64];
	unsigned int i, got = 0, ok = 0;
	uint16_t sport;

	RT_CHECK(ud_pair(e, &c) == 0, "UD pair");
	tap_reset();
	h.impair[0].loss = 0.3;
	for (i = 0; i < 60; i++)
		RT_CHECK(ud_recv(&e[1], i * 128, 128, i) == 0 &&
				ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A, i, 64, 0, i) == 0,
				"post %u", i);
	RT_CHECK(poll_n(e[0].cq, wc, 60, SEC) == 60, "60 send completions");
	for (i = 0; i < 60; i++)
		ok += wc[i].status == ROCE_WC_SUCCESS && wc[i].wr_id == i;
	RT_CHECK(ok == 60, "every send succeeds, lost or not (%u)", ok);
	xh_settle(&h, 10 * MS);
	got = (unsigned int)poll_n(e[1].cq, wc, 60, 0);
	RT_CHECK(got > 20 && got < 60, "some lost, none resent: %u of 60 arrived", got);
	RT_CHECK(qp_cnt(e[0].qp, ROCE_XC_RETRANSMITS) == 0 && qp_cnt(e[0].qp, ROCE_XC_TX_PKTS) == 60 &&
			qp_cnt(e[1].qp, ROCE_XC_TX_PKTS) == 0 && tap.n[1] == 0,
			"no retransmission, no ACK: tx %" PRIu64, qp_cnt(e[0].qp, ROCE_XC_TX_PKTS));
	RT_CHECK(roce_engine_next_timer(h.eng[0]) == UINT64_MAX &&
			roce_engine_next_timer(h.eng[1]) == UINT64_MAX, "no timer armed");
	h.impair[0].loss = 0;
	/* PSNs from sq_psn, one per datagram, across the 24-bit wrap; AckReq never set. */
	sport = roce_udp_sport_qpn(roce_qp_num(e[0].qp));
	for (i = 0; i < tap.n[0]; i++) {
		const uint8_t *b = tap.f[0][i].b, *bth = b + bth_off(0);
		uint32_t want = (0xFFFFFE + i) & ROCE_PSN_MASK;

		RT_CHECK(rd32(bth + 8) == want, "datagram %u: PSN %x (want %x, AckReq clear)", i,
				rd32(bth + 8), want);
		RT_CHECK(bth[0] == ROCE_OPCODE(UD, SEND_ONLY) && (rd32(bth + 4) & 0xFFFFFF) ==
				roce_qp_num(e[1].qp) && bth[2] == 0xFF && bth[3] == 0xFF,
				"datagram %u: opcode, destination QP, P_Key", i);
		RT_CHECK((b[34] << 8 | b[35]) == sport, "datagram %u: UDP source port %x (rxe: %x)",
				i, b[34] << 8 | b[35], sport);
	}
	ud_pair_free(e);
}

/* ---- states, transitions, work requests, address handles ---- */

static void
test_ud_states(void)
{
	struct roce_qp_init_attr ia = { .max_send_wr = 8, .max_recv_wr = 8,
		.qp_type = ROCE_QPT_UD };
	struct roce_qp_attr a = {0};
	struct ud_end e[2];
	struct roce_ah_attr aa = { .port_num = 2 };
	struct roce_ah *ah2, *other;
	struct roce_pd *pd2;
	struct roce_wc wc;

	RT_CHECK(ud_end_make(&e[0], 0, 0, 1, 0) == 0 && ud_end_make(&e[1], 1, 0, 1, 0) == 0,
			"two UD QPs");
	RT_CHECK(roce_qp_type(e[0].qp) == ROCE_QPT_UD, "type UD");
	/* RC attributes are not UD's; the Q_Key is. */
	a.qp_state = ROCE_QPS_INIT;
	a.qp_access_flags = ROCE_ACCESS_REMOTE_WRITE;
	RT_CHECK(roce_qp_modify(e[1].qp, &a, ROCE_QP_STATE | ROCE_QP_ACCESS_FLAGS) == -EINVAL,
			"no access flags on UD");
	a.qkey = QKEY_A;
	a.port_num = 1;
	RT_CHECK(roce_qp_modify(e[1].qp, &a, ROCE_QP_STATE | ROCE_QP_QKEY | ROCE_QP_PORT) == 0,
			"RESET->INIT with a Q_Key");
	/* Datagrams wait for RTR: in INIT they are dropped. */
	RT_CHECK(ud_up(e[0].qp, QKEY_A, ROCE_MTU_1024, 1, 1) == 0, "sender up");
	RT_CHECK(ud_recv(&e[1], 0, 4096, 1) == 0, "recv in INIT");
	RT_CHECK(ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A, 0, 64, 0, 1) == 0, "send");
	xh_settle(&h, 100 * 1000);
	RT_CHECK(qp_cnt(e[1].qp, ROCE_XC_STATE_DROP) == 1 && poll_n(e[1].cq, &wc, 1, 0) == 0,
			"INIT drops");
	RT_CHECK(poll_n(e[0].cq, &wc, 1, 0) == 1 && wc.wr_id == 1, "the send completed");
	a.qp_state = ROCE_QPS_RTR;
	a.dest_qp_num = 5;
	RT_CHECK(roce_qp_modify(e[1].qp, &a, ROCE_QP_STATE | ROCE_QP_DEST_QPN) == -EINVAL,
			"no destination QP on UD");
	RT_CHECK(roce_qp_modify(e[1].qp, &a, ROCE_QP_STATE | ROCE_QP_AV) == -EINVAL,
			"no address vector on UD");
	RT_CHECK(roce_qp_modify(e[1].qp, &a, ROCE_QP_STATE) == 0, "INIT->RTR");
	/* RTR receives; a send posted there waits for RTS. */
	RT_CHECK(ud_send(&e[1], e[1].ah, roce_qp_num(e[0].qp), QKEY_A, 0, 32, 0, 2) == 0,
			"post in RTR");
	RT_CHECK(ud_recv(&e[0], 0, 4096, 2) == 0, "recv");
	RT_CHECK(ud_send(&e[0], e[0].ah, roce_qp_num(e[1].qp), QKEY_A, 0, 64, 0, 3) == 0, "send");
	RT_CHECK(poll_n(e[1].cq, &wc, 1, SEC) == 1 && wc.wr_id == 1 &&
			wc.status == ROCE_WC_SUCCESS, "RTR receives");
	xh_settle(&h, 100 * 1000);
	RT_CHECK(poll_n(e[0].cq, &wc, 2, 0) == 1 && wc.opcode == ROCE_WC_SEND,
			"only the sender's own send completed: nothing went from RTR");
	a.qp_state = ROCE_QPS_RTS;
	RT_CHECK(roce_qp_modify(e[1].qp, &a, ROCE_QP_STATE) == -EINVAL, "RTS needs sq_psn");
	a.sq_psn = 77;
	RT_CHECK(roce_qp_modify(e[1].qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN) == 0, "RTR->RTS");
	RT_CHECK(poll_n(e[0].cq, &wc, 1, SEC) == 1 && wc.wr_id == 2 && wc.byte_len == 72,
			"the send posted in RTR went at RTS");
	RT_CHECK(poll_n(e[1].cq, &wc, 1, SEC) == 1 && wc.wr_id == 2 &&
			wc.status == ROCE_WC_SUCCESS, "and completed there");
	/* Work requests a UD QP refuses. */
	{
		struct roce_send_wr wr = { .opcode = ROCE_WR_RDMA_WRITE, .num_sge = 0,
			.ud = { .ah = e[0].ah, .remote_qpn = 9, .remote_qkey = QKEY_A } };

		RT_CHECK(roce_post_send(e[0].qp, &wr) == -EINVAL, "no WRITE on UD");
		wr.opcode = ROCE_WR_SEND_WITH_INV;
		RT_CHECK(roce_post_send(e[0].qp, &wr) == -EINVAL, "no SEND_WITH_INV on UD");
		wr.opcode = ROCE_WR_SEND;
		wr.ud.ah = NULL;
		RT_CHECK(roce_post_send(e[0].qp, &wr) == -EINVAL, "no AH");
		wr.ud.ah = e[0].ah;
		wr.ud.remote_qpn = 0x1000000;
		RT_CHECK(roce_post_send(e[0].qp, &wr) == -EINVAL, "QPN over 24 bits");
		wr.ud.remote_qpn = 9;
		side_path(&aa.path, 0, 0);
		ah2 = roce_ah_create(h.pd[0], &aa);
		wr.ud.ah = ah2;
		RT_CHECK(ah2 != NULL && roce_post_send(e[0].qp, &wr) == -EINVAL,
				"an AH of port 2 on a port-1 QP");
		pd2 = roce_pd_alloc(SOCKET_ID_ANY);
		aa.port_num = 0;
		other = roce_ah_create(pd2, &aa);
		wr.ud.ah = other;
		RT_CHECK(other != NULL && roce_post_send(e[0].qp, &wr) == -EINVAL,
				"an AH of another PD");
		RT_CHECK(roce_pd_free(pd2) == -EBUSY, "a PD with an AH cannot go");
		roce_ah_destroy(other);
		RT_CHECK(roce_pd_free(pd2) == 0, "then it can");
		roce_ah_destroy(ah2);
		aa.path.dscp = 64;
		RT_CHECK(roce_ah_create(h.pd[0], &aa) == NULL && rte_errno == EINVAL,
				"AH with DSCP 64 refused");
	}
	/* The AH may go right after the post: the WR took a copy. */
	{
		struct roce_ah_attr ta = { .port_num = 1 };
		struct roce_ah *tmp;

		side_path(&ta.path, 0, 0);
		tmp = roce_ah_create(h.pd[0], &ta);
		RT_CHECK(ud_recv(&e[1], 0, 4096, 3) == 0 &&
				ud_send(&e[0], tmp, roce_qp_num(e[1].qp), QKEY_A, 0, 64, 0, 4) == 0,
				"post through a fresh AH");
		roce_ah_destroy(tmp);
		RT_CHECK(poll_n(e[1].cq, &wc, 1, SEC) == 1 && wc.status == ROCE_WC_SUCCESS &&
				wc.wr_id == 3, "delivered after its AH went");
		poll_n(e[0].cq, &wc, 1, SEC);
	}
	/* A UD QP of an RC type number is refused; QPN 1 needs UD and a port. */
	ia.send_cq = ia.recv_cq = e[0].cq;
	ia.qp_type = 3;
	RT_CHECK(roce_qp_create(h.eng[0], h.pd[0], &ia) == NULL && rte_errno == EINVAL,
			"UC refused");
	ia.qp_type = ROCE_QPT_RC;
	ia.qp_num = ROCE_GSI_QPN;
	ia.port_num = 1;
	RT_CHECK(roce_qp_create(h.eng[0], h.pd[0], &ia) == NULL && rte_errno == EINVAL,
			"QP1 must be UD");
	ia.qp_type = ROCE_QPT_UD;
	ia.port_num = 0;
	RT_CHECK(roce_qp_create(h.eng[0], h.pd[0], &ia) == NULL && rte_errno == EINVAL,
			"QP1 needs a port");
	ud_end_free(&e[0]);
	ud_end_free(&e[1]);
}

/* ---- packets of the other transport ---- */

static struct rte_mbuf *
frame(const struct roce_path *p, const struct roce_pkt_desc *d, uint32_t len, uint16_t port)
{
	static uint8_t payload[4096];
	struct roce_wire_stats st = {0};
	struct rte_mbuf *m = rte_pktmbuf_alloc(h.mp);

	if (m == NULL || roce_build_pkt(m, p, d, payload, len) != 0 ||
			roce_classify_burst(&m, 1, 0, &st) != 1) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	m->port = port;
	return m;
}

static void
inject(int to, const struct roce_path *p, const struct roce_pkt_desc *d, uint32_t len,
		uint16_t port)
{
	struct rte_mbuf *m = frame(p, d, len, port);

	RT_CHECK(m != NULL, "frame built");
	if (m != NULL)
		roce_engine_rx(h.eng[to], &m, 1, h.now);
}

static void
test_ud_wrong_transport(void)
{
	struct xh_qp rc;
	struct ud_end e[2];
	struct roce_path p;
	struct roce_wc wc;
	struct roce_pkt_desc d = { .opcode = ROCE_OPCODE(UD, SEND_ONLY), .qkey = QKEY_A,
		.src_qpn = 0x77 };
	uint64_t before;

	RT_CHECK(xh_qp_connect(&h, &rc, NULL) == 0, "RC pair");
	RT_CHECK(ud_pair(e, NULL) == 0, "UD pair");
	RT_CHECK(roce_post_recv(rc.qp[0], &(struct roce_recv_wr){ .wr_id = 1, .num_sge = 1,
			.sg_list = {{ roce_mr_iova(rc.mr[0]), 4096, roce_mr_lkey(rc.mr[0]) }} }) == 0,
			"RC recv");
	RT_CHECK(ud_recv(&e[0], 0, 4096, 1) == 0, "UD recv");
	side_path(&p, 1, 0);
	/* A UD datagram for an RC QP, from its peer's address. */
	before = xh_counter(&h, 0, ROCE_XC_UNKNOWN_QP);
	d.dest_qpn = roce_qp_num(rc.qp[0]);
	inject(0, &p, &d, 64, 0);
	RT_CHECK(qp_cnt(rc.qp[0], ROCE_XC_TRANSPORT_DROP) == 1 &&
			xh_counter(&h, 0, ROCE_XC_UNKNOWN_QP) == before &&
			roce_cq_poll(rc.cq[0], &wc, 1) == 0 &&
			roce_qp_state(rc.qp[0]) == ROCE_QPS_RTS,
			"UD to an RC QP: TRANSPORT_DROP, nothing else");
	/* An RC SEND, a UC SEND and a CNP for a UD QP. */
	d.dest_qpn = roce_qp_num(e[0].qp);
	d.opcode = ROCE_OPCODE(RC, SEND_ONLY);
	inject(0, &p, &d, 64, 0);
	d.opcode = ROCE_OPCODE(UC, SEND_ONLY);
	inject(0, &p, &d, 64, 0);
	d.opcode = ROCE_OPCODE_CNP;
	inject(0, &p, &d, 0, 0);
	RT_CHECK(qp_cnt(e[0].qp, ROCE_XC_TRANSPORT_DROP) == 3 &&
			roce_cq_poll(e[0].cq, &wc, 1) == 0 && roce_qp_state(e[0].qp) == ROCE_QPS_RTS,
			"RC, UC, CNP to a UD QP: TRANSPORT_DROP %" PRIu64,
			qp_cnt(e[0].qp, ROCE_XC_TRANSPORT_DROP));
	/* A UD QP takes datagrams from anyone: another source address, and QPN 0 unknown. */
	d.opcode = ROCE_OPCODE(UD, SEND_ONLY);
	p.src_ip[3] = 99;
	roce_path_init(&p);
	inject(0, &p, &d, 64, 0);
	RT_CHECK(roce_cq_poll(e[0].cq, &wc, 1) == 1 && wc.status == ROCE_WC_SUCCESS &&
			wc.src_qp == 0x77 && wc.sgid[15] == 99, "a datagram from another host");
	/* A bad P_Key: dropped before anything else. */
	d.pkey = 0x1234;
	RT_CHECK(ud_recv(&e[0], 0, 4096, 2) == 0, "recv");
	inject(0, &p, &d, 64, 0);
	RT_CHECK(qp_cnt(e[0].qp, ROCE_XC_BAD_PKEY) == 1 && roce_cq_poll(e[0].cq, &wc, 1) == 0,
			"bad P_Key: BAD_PKEY");
	ud_pair_free(e);
	xh_qp_destroy(&h, &rc);
}

/* ---- QP1 ---- */

static void
test_ud_gsi(void)
{
	struct ud_end g0, g1a, g1b;
	struct roce_qp_init_attr ia = { .max_send_wr = 8, .max_recv_wr = 8,
		.qp_type = ROCE_QPT_UD, .qp_num = ROCE_GSI_QPN, .port_num = 1 };
	struct roce_qp_attr a = {0};
	struct roce_pkt_desc d = { .opcode = ROCE_OPCODE(UD, SEND_ONLY), .dest_qpn = 1,
		.qkey = ROCE_GSI_QKEY, .src_qpn = 1 };
	struct roce_path p;
	struct roce_wc wc;

	RT_CHECK(ud_end_make(&g0, 0, ROCE_GSI_QPN, 1, 0) == 0 &&
			ud_end_make(&g1a, 1, ROCE_GSI_QPN, 1, 0) == 0 &&
			ud_end_make(&g1b, 1, ROCE_GSI_QPN, 2, 0) == 0, "QP1 on engine 0, QP1s on "
			"ports 1 and 2 of engine 1");
	ia.send_cq = ia.recv_cq = g1a.cq;
	RT_CHECK(roce_qp_create(h.eng[1], h.pd[1], &ia) == NULL && rte_errno == EEXIST,
			"a second QP1 on port 1");
	RT_CHECK(roce_engine_gsi(h.eng[1], 1) == g1a.qp && roce_engine_gsi(h.eng[1], 2) == g1b.qp &&
			roce_engine_gsi(h.eng[1], 3) == NULL && roce_engine_qp(h.eng[1], 1) == NULL,
			"roce_engine_gsi() by port");
	RT_CHECK(roce_qp_num(g1b.qp) == 1, "QP1's number is 1");
	{
		struct roce_qp_attr q;

		roce_qp_query(g1b.qp, &q);
		RT_CHECK(q.qkey == ROCE_GSI_QKEY && q.port_num == 2, "QP1 Q_Key %x port %u",
				q.qkey, q.port_num);
	}
	a.qp_state = ROCE_QPS_INIT;
	a.qkey = 0x1234;
	RT_CHECK(roce_qp_modify(g1a.qp, &a, ROCE_QP_STATE | ROCE_QP_QKEY) == -EINVAL,
			"QP1 keeps its Q_Key");
	a.port_num = 2;
	RT_CHECK(roce_qp_modify(g1a.qp, &a, ROCE_QP_STATE | ROCE_QP_PORT) == -EINVAL,
			"QP1 keeps its port");
	RT_CHECK(ud_up(g0.qp, ROCE_GSI_QKEY, ROCE_MTU_1024, 10, 1) == 0 &&
			ud_up(g1a.qp, ROCE_GSI_QKEY, ROCE_MTU_1024, 20, 1) == 0 &&
			ud_up(g1b.qp, ROCE_GSI_QKEY, ROCE_MTU_1024, 30, 2) == 0, "QP1s up");
	RT_CHECK(ud_recv(&g1a, 0, 296, 1) == 0 && ud_recv(&g1b, 0, 296, 2) == 0, "MAD buffers");
	/* A MAD in on port 2 reaches port 2's QP1 only. */
	side_path(&p, 0, 0);
	inject(1, &p, &d, 256, 1);
	RT_CHECK(roce_cq_poll(g1b.cq, &wc, 1) == 1 && wc.wr_id == 2 && wc.src_qp == 1 &&
			wc.qkey == ROCE_GSI_QKEY && wc.byte_len == 296 &&
			roce_cq_poll(g1a.cq, &wc, 1) == 0, "port 2's MAD at port 2's QP1");
	/* Another Q_Key: dropped. */
	d.qkey = ROCE_GSI_QKEY + 1;
	inject(1, &p, &d, 256, 0);
	RT_CHECK(qp_cnt(g1a.qp, ROCE_XC_UD_QKEY_DROP) == 1 && roce_cq_poll(g1a.cq, &wc, 1) == 0,
			"QP1 drops a Q_Key not 0x80010000");
	/* A port without a QP1: unknown. */
	d.qkey = ROCE_GSI_QKEY;
	{
		uint64_t before = xh_counter(&h, 1, ROCE_XC_UNKNOWN_QP);

		inject(1, &p, &d, 256, 3);
		RT_CHECK(xh_counter(&h, 1, ROCE_XC_UNKNOWN_QP) == before + 1, "no QP1 on port 4");
	}
	/* QP1 sends with its well-known Q_Key whatever the WR says; through the link it lands
	 * at the peer's QP1 of the port it left by. */
	tap_reset();
	memset(g0.buf, 0x5A, 256);
	RT_CHECK(ud_send(&g0, g0.ah, ROCE_GSI_QPN, 0x4321, 0, 256, 0, 7) == 0, "MAD out");
	RT_CHECK(poll_n(g1a.cq, &wc, 1, SEC) == 1 && wc.status == ROCE_WC_SUCCESS &&
			wc.src_qp == 1 && wc.qkey == ROCE_GSI_QKEY &&
			g1a.buf[ROCE_GRH_LEN] == 0x5A, "at the peer's QP1: %s",
			roce_wc_status_str(wc.status));
	RT_CHECK(tap.n[0] == 1 && rd32(tap.f[0][0].b + bth_off(0) + 12) == ROCE_GSI_QKEY &&
			(rd32(tap.f[0][0].b + bth_off(0) + 16) & 0xFFFFFF) == 1,
			"DETH: Q_Key 0x80010000, source QP 1");
	/* AckReq set, as rxe's QP1 sends its MADs (other UD QPs' datagrams: test_ud_capture). */
	RT_CHECK(tap.n[0] == 1 && (tap.f[0][0].b[bth_off(0) + 8] & 0x80) != 0,
			"QP1's BTH AckReq set");
	/* A QP1 gone can come back on its port. */
	ud_end_free(&g1b);
	RT_CHECK(roce_engine_gsi(h.eng[1], 2) == NULL &&
			ud_end_make(&g1b, 1, ROCE_GSI_QPN, 2, 0) == 0 &&
			roce_engine_gsi(h.eng[1], 2) == g1b.qp, "QP1 of port 2 again");
	ud_end_free(&g0);
	ud_end_free(&g1a);
	ud_end_free(&g1b);
}

/* ---- ground truth: the rxe capture ---- */

#define CAP_FRAMES 5
#define CAP_QPN 0x46
#define CAP_QKEY 0x11111111u

/* What the capture's tshark text says of each frame. */
struct cap_text {
	uint32_t psn, destqp, srcqp, sport, icrc;
	uint64_t qkey;
	int pkey;
};

static int
cap_text(struct cap_text *t, unsigned int max)
{
	char path[512], line[512];
	int n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/roce_ud_send_64B.txt", rt_captures_dir());
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		const char *s = line;
		unsigned long long v;

		while (*s == ' ')
			s++;
		if (strncmp(s, "Frame ", 6) == 0 && strstr(s, " bytes on wire") != NULL) {
			if (++n >= (int)max)
				break;
			memset(&t[n], 0, sizeof(t[n]));
			continue;
		}
		if (n < 0)
			continue;
		if (sscanf(s, "Packet Sequence Number: %llu", &v) == 1)
			t[n].psn = (uint32_t)v;
		else if (sscanf(s, "Destination Queue Pair: %llx", &v) == 1)
			t[n].destqp = (uint32_t)v;
		else if (sscanf(s, "Source Queue Pair: %llx", &v) == 1)
			t[n].srcqp = (uint32_t)v;
		else if (sscanf(s, "Queue Key: %llx", &v) == 1)
			t[n].qkey = v;
		else if (sscanf(s, "Source Port: %llu", &v) == 1)
			t[n].sport = (uint32_t)v;
		else if (sscanf(s, "Invariant CRC: %llx", &v) == 1)
			t[n].icrc = (uint32_t)v;
		else if (sscanf(s, "Partition Key: %llu", &v) == 1)
			t[n].pkey = (int)v;
	}
	fclose(f);
	return n < (int)max ? n + 1 : (int)max;
}

static void
test_ud_capture(void)
{
	static struct roce_pcap_rec rec;
	static uint8_t cap[CAP_FRAMES][256];
	uint32_t cap_len[CAP_FRAMES] = {0};
	struct cap_text txt[CAP_FRAMES];
	struct roce_pcap pc;
	char path[512];
	struct ud_end tx, rx;
	struct roce_ah_attr aa = { .port_num = 1 };
	struct roce_ah *ah;
	struct roce_wc wc;
	unsigned int n = 0, i;

	snprintf(path, sizeof(path), "%s/roce_ud_send_64B.pcap", rt_captures_dir());
	if (roce_pcap_open(&pc, path) != 0) {
		RT_CHECK(0, "cannot open %s", path);
		return;
	}
	while (n < CAP_FRAMES && roce_pcap_next(&pc, &rec) == 1) {
		if (rec.caplen > sizeof(cap[0]))
			continue;
		memcpy(cap[n], rec.data, rec.caplen);
		cap_len[n++] = rec.caplen;
	}
	roce_pcap_close(&pc);
	RT_CHECK(n == CAP_FRAMES && cap_text(txt, CAP_FRAMES) == CAP_FRAMES,
			"5 frames in the capture and its text");
	if (n != CAP_FRAMES)
		return;

	/* Parsed: the classifier and the header accessors say what tshark says. */
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = rt_mbuf(h.mp, cap[i], cap_len[i], 0);
		struct roce_wire_stats st = {0};
		const struct roce_pkt_meta *meta;
		const struct roce_deth *deth;

		if (m == NULL || roce_classify_burst(&m, 1, 0, &st) != 1) {
			RT_CHECK(0, "frame %u is valid RoCE (ICRC included)", i + 1);
			rte_pktmbuf_free(m);
			continue;
		}
		meta = roce_pkt_meta(m);
		deth = roce_pkt_hdr(m, meta, ROCE_HDR_DETH);
		RT_CHECK(meta->opcode == ROCE_OPCODE(UD, SEND_ONLY) && (meta->mask & ROCE_M_DETH) &&
				meta->payload_len == 64 && meta->psn == txt[i].psn &&
				meta->qpn == txt[i].destqp &&
				roce_deth_qkey(deth) == txt[i].qkey &&
				roce_deth_sqp(deth) == txt[i].srcqp &&
				roce_bth_pkey(roce_pkt_bth(m, meta)) == txt[i].pkey &&
				!(meta->flags & ROCE_PKT_F_ACKREQ),
				"frame %u decodes as its text: PSN %u/%u qkey %x/%" PRIx64
				" src %x/%x", i + 1, meta->psn, txt[i].psn, roce_deth_qkey(deth),
				txt[i].qkey, roce_deth_sqp(deth), txt[i].srcqp);
		RT_CHECK((uint32_t)(cap[i][34] << 8 | cap[i][35]) == txt[i].sport &&
				roce_udp_sport_qpn(txt[i].srcqp) == txt[i].sport,
				"frame %u: UDP source port %u is rxe's for QP %x", i + 1, txt[i].sport,
				txt[i].srcqp);
		RT_CHECK(rd32(cap[i] + cap_len[i] - 4) == rte_bswap32(txt[i].icrc) ||
				rd32(cap[i] + cap_len[i] - 4) == txt[i].icrc,
				"frame %u ICRC %x", i + 1, txt[i].icrc);
		rte_pktmbuf_free(m);
	}

	/* Rebuilt: a UD QP 0x46 with rxe's first PSN sending the same payloads. */
	RT_CHECK(ud_end_make(&tx, 0, CAP_QPN, 1, 0) == 0 &&
			ud_up(tx.qp, CAP_QKEY, ROCE_MTU_1024, txt[0].psn, 1) == 0, "QP 0x46");
	memcpy(aa.path.dst_mac.addr_bytes, cap[0], 6);
	memcpy(aa.path.src_mac.addr_bytes, cap[0] + 6, 6);
	memcpy(aa.path.src_ip, cap[0] + 26, 4);
	memcpy(aa.path.dst_ip, cap[0] + 30, 4);
	aa.path.ttl = cap[0][22];
	ah = roce_ah_create(h.pd[0], &aa);
	RT_CHECK(ah != NULL, "AH to 10.99.0.1");
	for (i = 0; i < n && ah != NULL; i++) {
		uint32_t len = cap_len[i], pay = bth_off(0) + 12 + 8;
		struct rte_mbuf *m = NULL;
		uint8_t out[256];
		uint32_t olen, k, diff = 0;

		memcpy(tx.buf + i * 64, cap[i] + pay, 64);
		RT_CHECK(ud_send(&tx, ah, CAP_QPN, CAP_QKEY, i * 64, 64, 0, i) == 0, "post");
		roce_engine_poll(h.eng[0], h.now);
		if (roce_engine_tx(h.eng[0], &m, 1) != 1) {
			RT_CHECK(0, "frame %u not sent", i + 1);
			continue;
		}
		olen = rt_mbuf_copy(m, out, sizeof(out));
		rte_pktmbuf_free(m);
		RT_CHECK(olen == len, "frame %u: %u bytes, rxe %u", i + 1, olen, len);
		if (olen != len)
			continue;
		/*
		 * All but the IPv4 Identification (rxe's per-host counter; ours is 0) and what
		 * covers it: the header checksum and the ICRC.
		 */
		for (k = 0; k < len; k++)
			if (out[k] != cap[i][k] && !(k == 18 || k == 19 || k == 24 || k == 25 ||
					k >= len - 4))
				diff++;
		RT_CHECK(diff == 0, "frame %u: %u bytes differ beyond IP ID, checksum, ICRC",
				i + 1, diff);
		/* With rxe's IP ID, our checksum and ICRC make the very same frame. */
		{
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(out + 14);
			uint32_t icrc;

			memcpy(out + 18, cap[i] + 18, 2);
			ip->hdr_checksum = 0;
			ip->hdr_checksum = rte_ipv4_cksum(ip);
			icrc = roce_icrc_compute_buf(out + 14, len - 4 - 14, 0);
			memcpy(out + len - 4, &icrc, 4);
			RT_CHECK(memcmp(out, cap[i], len) == 0,
					"frame %u rebuilt byte for byte (headers, DETH, ICRC)", i + 1);
		}
		roce_cq_poll(tx.cq, &wc, 1);
	}
	roce_ah_destroy(ah);
	ud_end_free(&tx);

	/* Received: QP 0x46 with Q_Key 0x11111111 fills its buffer as rxe would. */
	RT_CHECK(ud_end_make(&rx, 1, CAP_QPN, 1, 0) == 0 &&
			ud_up(rx.qp, CAP_QKEY, ROCE_MTU_1024, 1, 1) == 0, "receiver QP 0x46");
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = rt_mbuf(h.mp, cap[i], cap_len[i], 0);
		struct roce_wire_stats st = {0};
		static const uint8_t zero[20];
		const uint8_t *b = rx.buf + i * 256;
		uint8_t gid[16] = { [10] = 0xff, [11] = 0xff };

		RT_CHECK(ud_recv(&rx, i * 256, 256, i) == 0, "recv");
		if (m == NULL || roce_classify_burst(&m, 1, 0, &st) != 1) {
			rte_pktmbuf_free(m);
			continue;
		}
		m->port = 0;
		roce_engine_rx(h.eng[1], &m, 1, h.now);
		memcpy(gid + 12, cap[i] + 26, 4);
		RT_CHECK(roce_cq_poll(rx.cq, &wc, 1) == 1 && wc.status == ROCE_WC_SUCCESS &&
				wc.byte_len == 104 && wc.src_qp == CAP_QPN && wc.qkey == CAP_QKEY &&
				(wc.wc_flags & ROCE_WC_GRH) && wc.slid == 0 &&
				memcmp(wc.sgid, gid, 16) == 0,
				"frame %u: completion byte_len %u src_qp %x", i + 1, wc.byte_len,
				wc.src_qp);
		RT_CHECK(memcmp(b, zero, 20) == 0 && memcmp(b + 20, cap[i] + 14, 20) == 0 &&
				memcmp(b + 40, cap[i] + bth_off(0) + 20, 64) == 0,
				"frame %u: GRH area (its IPv4 header) and payload", i + 1);
		{
			uint8_t sgid[16];

			RT_CHECK(roce_grh_sgid(b, sgid) == 4 && memcmp(sgid, gid, 16) == 0,
					"frame %u: roce_grh_sgid() reads 10.99.0.2 back", i + 1);
		}
	}
	ud_end_free(&rx);
}

/* The GRH readers on their own: IPv6, IPv4, neither. */
static void
test_ud_grh_sgid(void)
{
	uint8_t grh[ROCE_GRH_LEN] = {0}, gid[16];

	grh[0] = 0x60;
	grh[8] = 0xfe;
	grh[23] = 0x42;
	RT_CHECK(roce_grh_sgid(grh, gid) == 6 && gid[0] == 0xfe && gid[15] == 0x42,
			"IPv6 source");
	memset(grh, 0, sizeof(grh));
	grh[20] = 0x45;
	grh[32] = 192;
	grh[35] = 7;
	RT_CHECK(roce_grh_sgid(grh, gid) == 4 && gid[10] == 0xff && gid[12] == 192 &&
			gid[15] == 7, "IPv4-mapped source");
	grh[3] = 1;
	RT_CHECK(roce_grh_sgid(grh, gid) == 0 && gid[12] == 0, "neither");
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	xh_init(&h, 0x5eed, NULL);
	h.tap = tap_fn;
	tap_reset();
	RT_RUN(test_ud_sends_ipv4);
	RT_RUN(test_ud_sends_ipv6);
	RT_RUN(test_ud_sges);
	RT_RUN(test_ud_qkey);
	RT_RUN(test_ud_lengths);
	RT_RUN(test_ud_unreliable);
	RT_RUN(test_ud_states);
	RT_RUN(test_ud_wrong_transport);
	RT_RUN(test_ud_gsi);
	RT_RUN(test_ud_capture);
	RT_RUN(test_ud_grh_sgid);
	xh_fini(&h);
	return rt_report("test_ud");
}
