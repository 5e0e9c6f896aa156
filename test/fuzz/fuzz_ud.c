/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the UD receive path, against a model. One engine holds a UD QP, a QP1 on
 * each of two ports and a connected RC QP; the input is a list of records that inject
 * datagrams (well-formed frames with fuzzed opcode, Q_Key, source QP, P_Key, ECN, IP version,
 * port and payload), post receives and sends, change QP states and Q_Keys, and let time pass.
 * What the engine sends is classified and handed back to it, so a UD QP's own datagrams
 * (to any QPN the input names) reach the receive path too.
 *
 * Each injected datagram's fate is predicted from the QP's state, its Q_Key, its path MTU and
 * the receive buffers the model has seen posted (rxe's order of checks): taken (completion,
 * byte_len = 40 + payload), dropped under exactly one named counter, or completed with
 * LOC_LEN_ERR. The engine must agree, and every completion must be well formed. MRs are
 * exactly the size of their heap buffers, so ASan catches any write outside a receive buffer.
 *
 * Record: kind(1) then per kind:
 *   0 datagram: target(1) op(1) qkey_sel(1) flags(1) src_qpn(3) qkey(4) paylen(2) payload
 *   1 post a receive: qp(1) nsge(1) then per SGE len(2)
 *   2 post a send on the UD QP: op(1) len(2) qkey(4) dest_qpn(3) flags(1)
 *   3 modify: qp(1) state(1) qkey(4) mtu(1)
 *   4 advance time: ms(1)
 */
#include <stdlib.h>
#include <string.h>

#include "roce_test.h"
#include "roce_transport.h"
#include "roce_transport_counters.h"
#include "roce_wire.h"

#define MR_LEN 16384
#define BURST 32
#define NB_UD 3          /* the UD QP, QP1 of port 1, QP1 of port 2 */
#define SHADOW 64

static struct rte_mempool *mp;

struct model_qp {
	struct roce_qp *qp;
	uint32_t recv_len[SHADOW]; /* receive WQEs posted, oldest at head */
	uint32_t head, tail;
};

struct fz {
	struct roce_engine *eng;
	struct roce_pd *pd;
	struct roce_cq *cq;
	uint8_t *buf;
	struct roce_mr *mr;
	struct roce_ah *ah[2];      /* IPv4, IPv6 */
	struct roce_qp *rc;
	struct model_qp ud[NB_UD];
	struct roce_path path[2];   /* the peer's, to us: IPv4, IPv6 */
	uint64_t now;
};

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	RTE_SET_USED(argc);
	rt_eal_init((*argv)[0]);
	mp = rt_pool(4096, 4608);
	return 0;
}

static uint64_t
take(const uint8_t **p, size_t *left, unsigned int n)
{
	uint64_t v = 0;

	while (n-- > 0) {
		v = v << 8 | (*left > 0 ? **p : 0);
		if (*left > 0) {
			(*p)++;
			(*left)--;
		}
	}
	return v;
}

static void
path_of(struct roce_path *p, int ipv6, int to_us)
{
	memset(p, 0, sizeof(*p));
	p->dst_mac.addr_bytes[0] = p->src_mac.addr_bytes[0] = 0x02;
	p->src_mac.addr_bytes[5] = (uint8_t)(to_us ? 2 : 1);
	p->dst_mac.addr_bytes[5] = (uint8_t)(to_us ? 1 : 2);
	p->ipv6 = (uint8_t)ipv6;
	p->src_ip[0] = p->dst_ip[0] = ipv6 ? 0xfd : 10;
	p->src_ip[ipv6 ? 15 : 3] = (uint8_t)(to_us ? 2 : 1);
	p->dst_ip[ipv6 ? 15 : 3] = (uint8_t)(to_us ? 1 : 2);
	p->udp_sport = 0xC001;
	roce_path_init(p);
}

static uint32_t
qp_qkey(const struct roce_qp *qp)
{
	struct roce_qp_attr a;

	roce_qp_query(qp, &a);
	return a.qkey;
}

static int
ud_up(struct roce_qp *qp, uint32_t qkey, uint8_t port)
{
	struct roce_qp_attr a = { .qp_state = ROCE_QPS_INIT, .qkey = qkey, .port_num = port,
		.path_mtu = ROCE_MTU_1024, .sq_psn = 0xFFFFF0 };

	if (roce_qp_modify(qp, &a, ROCE_QP_STATE | ROCE_QP_QKEY | ROCE_QP_PORT |
			ROCE_QP_PATH_MTU) != 0)
		return -1;
	a.qp_state = ROCE_QPS_RTR;
	if (roce_qp_modify(qp, &a, ROCE_QP_STATE) != 0)
		return -1;
	a.qp_state = ROCE_QPS_RTS;
	return roce_qp_modify(qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN);
}

static int
fz_setup(struct fz *f)
{
	struct roce_engine_conf c = { .mp = mp, .max_qps = 8, .qpn_base = 0x100,
		.tx_ring_size = 256 };
	struct roce_qp_init_attr ia = { .max_send_wr = 16, .max_recv_wr = 16,
		.max_inline_data = 64, .qp_type = ROCE_QPT_UD };
	struct roce_qp_attr a = {0};
	int i;

	memset(f, 0, sizeof(*f));
	f->eng = roce_engine_create(&c);
	f->pd = roce_pd_alloc(SOCKET_ID_ANY);
	f->cq = roce_cq_create(256, SOCKET_ID_ANY);
	f->buf = malloc(MR_LEN);
	if (f->eng == NULL || f->pd == NULL || f->cq == NULL || f->buf == NULL)
		return -1;
	memset(f->buf, 0xA5, MR_LEN);
	f->mr = roce_mr_reg(f->pd, f->buf, MR_LEN, ROCE_ACCESS_LOCAL_WRITE, NULL);
	ia.send_cq = ia.recv_cq = f->cq;
	for (i = 0; i < NB_UD; i++) {
		ia.qp_num = i == 0 ? 0 : ROCE_GSI_QPN;
		ia.port_num = (uint8_t)(i == 0 ? 0 : i);
		f->ud[i].qp = roce_qp_create(f->eng, f->pd, &ia);
		if (f->ud[i].qp == NULL ||
				ud_up(f->ud[i].qp, i == 0 ? 0x1234 : ROCE_GSI_QKEY,
					(uint8_t)(i == 0 ? 1 : i)) != 0)
			return -1;
	}
	for (i = 0; i < 2; i++) {
		struct roce_ah_attr aa = { .port_num = 1 };

		path_of(&f->path[i], i, 1);
		path_of(&aa.path, i, 0);
		f->ah[i] = roce_ah_create(f->pd, &aa);
		if (f->ah[i] == NULL)
			return -1;
	}
	/* An RC QP connected to the peer's address, for datagrams of the wrong transport. */
	ia.qp_type = ROCE_QPT_RC;
	ia.qp_num = 0;
	ia.port_num = 0;
	f->rc = roce_qp_create(f->eng, f->pd, &ia);
	a.qp_state = ROCE_QPS_INIT;
	if (f->mr == NULL || f->rc == NULL || roce_qp_modify(f->rc, &a, ROCE_QP_STATE) != 0)
		return -1;
	a.qp_state = ROCE_QPS_RTR;
	a.path_mtu = ROCE_MTU_1024;
	a.dest_qp_num = 0x777;
	a.max_dest_rd_atomic = 1;
	path_of(&a.ah, 0, 0);
	if (roce_qp_modify(f->rc, &a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU |
			ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC |
			ROCE_QP_MIN_RNR_TIMER) != 0)
		return -1;
	return 0;
}

static void
fz_teardown(struct fz *f)
{
	roce_engine_destroy(f->eng);
	roce_ah_destroy(f->ah[0]);
	roce_ah_destroy(f->ah[1]);
	if (f->mr != NULL)
		roce_mr_dereg(f->mr);
	roce_pd_free(f->pd);
	roce_cq_destroy(f->cq);
	free(f->buf);
}

static struct model_qp *
model_of(struct fz *f, uint32_t qpn, const struct roce_qp *qp)
{
	int i;

	RTE_SET_USED(qpn);
	for (i = 0; i < NB_UD; i++)
		if (f->ud[i].qp == qp)
			return &f->ud[i];
	return NULL;
}

/* Every completion well formed; receive completions also take their WQE off the model. */
static void
fz_check_wc(struct fz *f, const struct roce_wc *wc)
{
	struct model_qp *m = NULL;
	int i;

	if ((unsigned int)wc->status >= ROCE_WC_STATUS_NUM)
		abort();
	if (!(wc->opcode & ROCE_WC_RECV))
		return;
	for (i = 0; i < NB_UD; i++)
		if (roce_qp_num(f->ud[i].qp) == wc->qp_num &&
				(i == 0) == (wc->qp_num != ROCE_GSI_QPN))
			m = &f->ud[i];
	if (wc->qp_num == ROCE_GSI_QPN) {
		/* Which QP1: the one whose oldest receive this is (wr_id carries it). */
		m = &f->ud[1 + (wc->wr_id >> 32 & 1)];
	}
	if (m == NULL || m->head == m->tail)
		abort();
	if (wc->status == ROCE_WC_SUCCESS) {
		uint32_t qkey = qp_qkey(m->qp);

		if (!(wc->wc_flags & ROCE_WC_GRH) || wc->byte_len < ROCE_GRH_LEN ||
				wc->byte_len > ROCE_GRH_LEN + 4096 ||
				wc->byte_len > m->recv_len[m->head % SHADOW] ||
				wc->src_qp > ROCE_24BIT_MASK || wc->qkey != qkey || wc->slid != 0 ||
				(wc->network_hdr_type != ROCE_NETWORK_IPV4 &&
				 wc->network_hdr_type != ROCE_NETWORK_IPV6))
			abort();
	}
	m->head++;
}

static int
fz_drain(struct fz *f)
{
	struct rte_mbuf *pkts[BURST];
	struct roce_wire_stats st = {0};
	struct roce_wc wc[16];
	int n, i, total = 0;
	uint16_t k;

	/* What the UD QP sent comes back to the engine (a few rounds at most). */
	for (i = 0; i < 4; i++) {
		roce_engine_poll(f->eng, f->now);
		k = roce_engine_tx(f->eng, pkts, BURST);
		if (k == 0)
			break;
		roce_classify_burst(pkts, k, 0, &st);
		roce_engine_rx(f->eng, pkts, k, f->now);
	}
	while ((k = roce_engine_tx(f->eng, pkts, BURST)) != 0)
		rte_pktmbuf_free_bulk(pkts, k);
	while ((n = roce_cq_poll(f->cq, wc, 16)) > 0) {
		for (i = 0; i < n; i++)
			fz_check_wc(f, &wc[i]);
		total += n;
	}
	return total;
}

static void
counters(const struct roce_qp *qp, uint64_t *c)
{
	roce_qp_counters(qp, c);
}

/* What the model expects of a datagram for a UD QP. */
enum fate { F_TAKEN, F_STATE, F_PKEY, F_QKEY, F_NO_RECV, F_TOO_LONG, F_LEN_ERR };

static enum fate
predict(const struct model_qp *m, uint32_t qkey, int bad_pkey, uint32_t plen)
{
	enum roce_qp_state s = roce_qp_state(m->qp);
	struct roce_qp_attr a;

	roce_qp_query(m->qp, &a);
	if (s < ROCE_QPS_RTR || s == ROCE_QPS_ERR)
		return F_STATE;
	if (bad_pkey)
		return F_PKEY;
	if (qkey != a.qkey)
		return F_QKEY;
	if (m->head == m->tail)
		return F_NO_RECV;
	if (plen > roce_mtu_bytes(a.path_mtu))
		return F_TOO_LONG;
	if (ROCE_GRH_LEN + plen > m->recv_len[m->head % SHADOW])
		return F_LEN_ERR;
	return F_TAKEN;
}

static const enum roce_xport_counter fate_cnt[] = {
	[F_TAKEN] = ROCE_XC_RECV_COMPLETED, [F_STATE] = ROCE_XC_STATE_DROP,
	[F_PKEY] = ROCE_XC_BAD_PKEY, [F_QKEY] = ROCE_XC_UD_QKEY_DROP,
	[F_NO_RECV] = ROCE_XC_UD_NO_RECV, [F_TOO_LONG] = ROCE_XC_UD_RX_TOO_LONG,
	[F_LEN_ERR] = ROCE_XC_UD_RECV_LEN_ERR,
};

static void
fz_datagram(struct fz *f, const uint8_t **p, size_t *left)
{
	static uint8_t payload[4200];
	uint8_t target = (uint8_t)take(p, left, 1), op = (uint8_t)take(p, left, 1);
	uint8_t qsel = (uint8_t)take(p, left, 1), flags = (uint8_t)take(p, left, 1);
	uint32_t src = (uint32_t)take(p, left, 3) & ROCE_24BIT_MASK;
	uint32_t qraw = (uint32_t)take(p, left, 4);
	uint32_t plen = (uint32_t)take(p, left, 2) % 4200;
	int ipv6 = flags & 1, bad_pkey = !!(flags & 2), port = (flags >> 3) & 3;
	struct roce_pkt_desc d = { .src_qpn = src, .psn = src ^ qraw, .se = !!(flags & 16),
		.imm = qraw };
	struct roce_wire_stats st = {0};
	uint64_t before[ROCE_XC_NUM], after[ROCE_XC_NUM];
	struct roce_path path = f->path[ipv6];
	struct model_qp *m = NULL;
	struct roce_qp *qp = NULL;
	struct rte_mbuf *mb;
	enum fate fate = F_TAKEN;
	int modelled;

	switch (target % 4) {
	case 0:
		qp = f->ud[0].qp;
		d.dest_qpn = roce_qp_num(qp);
		break;
	case 1:
		/* QP1 of the port it comes in on: 1 or 2; 3 and 4 have none. */
		d.dest_qpn = ROCE_GSI_QPN;
		qp = port < 2 ? f->ud[1 + port].qp : NULL;
		break;
	case 2:
		qp = f->rc;
		d.dest_qpn = roce_qp_num(qp);
		break;
	default:
		d.dest_qpn = (src ^ qraw) & ROCE_24BIT_MASK;
		qp = d.dest_qpn == ROCE_GSI_QPN ? (port < 2 ? f->ud[1 + port].qp : NULL) :
			roce_engine_qp(f->eng, d.dest_qpn);
		break;
	}
	d.opcode = op & 0x80 ? (uint8_t)(op << 1 | op >> 7) :
		op & 1 ? ROCE_OPCODE(UD, SEND_ONLY_IMM) : ROCE_OPCODE(UD, SEND_ONLY);
	d.qkey = qsel % 4 == 0 ? (qp != NULL ? qp_qkey(qp) : 0) : qsel % 4 == 1 ?
		ROCE_GSI_QKEY : qsel % 4 == 2 ? ROCE_QKEY_CONTROLLED | qraw : qraw;
	d.pkey = bad_pkey ? 0x1234 : 0;   /* 0x7FFF would match: a limited member */
	path.ecn = flags & 4 ? ROCE_ECN_CE : 0;
	roce_path_init(&path);
	plen = RTE_MIN(plen, (uint32_t)*left);
	memcpy(payload, *p, plen);
	*p += plen;
	*left -= plen;
	if (!(roce_opcode_info[d.opcode].mask & ROCE_M_PAYLOAD))
		plen = 0;
	mb = rte_pktmbuf_alloc(mp);
	if (mb == NULL)
		return;
	if (roce_build_pkt(mb, &path, &d, payload, plen) != 0 ||
			roce_classify_burst(&mb, 1, 0, &st) != 1) {
		rte_pktmbuf_free(mb);
		return;
	}
	mb->port = (uint16_t)port;
	/* Model only plain UD SENDs to a UD QP; anything else is only checked for safety. */
	m = qp != NULL ? model_of(f, d.dest_qpn, qp) : NULL;
	modelled = m != NULL && (d.opcode == ROCE_OPCODE(UD, SEND_ONLY) ||
			d.opcode == ROCE_OPCODE(UD, SEND_ONLY_IMM));
	if (modelled) {
		fate = predict(m, d.qkey, bad_pkey, plen);
		counters(qp, before);
	} else if (qp != NULL) {
		counters(qp, before);
	}
	roce_engine_rx(f->eng, &mb, 1, f->now);
	if (qp == NULL)
		return;
	counters(qp, after);
	if (modelled) {
		unsigned int i;

		for (i = 0; i < RTE_DIM(fate_cnt); i++) {
			uint64_t want = before[fate_cnt[i]] + (i == fate ||
				(i == F_TAKEN && fate == F_LEN_ERR));

			if (after[fate_cnt[i]] != want)
				abort();
		}
		if (fate == F_LEN_ERR && roce_qp_state(qp) != ROCE_QPS_ERR)
			abort();
	} else if ((roce_opcode_info[d.opcode].mask != 0) &&
			(d.opcode & ROCE_TRANSPORT_MASK) == ROCE_TRANSPORT_UD && qp == f->rc &&
			after[ROCE_XC_TRANSPORT_DROP] != before[ROCE_XC_TRANSPORT_DROP] + 1) {
		/* A UD datagram for the RC QP is never anything but dropped. */
		abort();
	}
}

static void
fz_recv(struct fz *f, const uint8_t **p, size_t *left)
{
	uint8_t which = (uint8_t)take(p, left, 1) % NB_UD;
	unsigned int nsge = (unsigned int)take(p, left, 1) % 4, i;
	struct model_qp *m = &f->ud[which];
	struct roce_recv_wr wr = { .num_sge = nsge, .wr_id = (uint64_t)(which == 2) << 32 };
	uint32_t off = 0, total = 0;

	for (i = 0; i < nsge; i++) {
		uint32_t len = (uint32_t)take(p, left, 2) % 2048;

		if (off + len > MR_LEN)
			len = MR_LEN - off;
		wr.sg_list[i] = (struct roce_sge){ roce_mr_iova(f->mr) + off, len,
			roce_mr_lkey(f->mr) };
		off += len;
		total += len;
	}
	if (m->tail - m->head >= SHADOW)
		return;
	if (roce_post_recv(m->qp, &wr) == 0) {
		/* Posted to a QP in ERR, it completes (flushed) at once. */
		m->recv_len[m->tail++ % SHADOW] = total;
	}
}

static void
fz_send(struct fz *f, const uint8_t **p, size_t *left)
{
	uint8_t op = (uint8_t)take(p, left, 1);
	uint32_t len = (uint32_t)take(p, left, 2) % 5000;
	uint32_t qkey = (uint32_t)take(p, left, 4), dqpn = (uint32_t)take(p, left, 3);
	uint8_t flags = (uint8_t)take(p, left, 1);
	struct roce_send_wr wr = {
		.opcode = op & 1 ? ROCE_WR_SEND_WITH_IMM : ROCE_WR_SEND,
		.send_flags = ROCE_SEND_SIGNALED | (flags & 1 ? ROCE_SEND_SOLICITED : 0),
		.num_sge = 1,
		.sg_list = {{ roce_mr_iova(f->mr), RTE_MIN(len, (uint32_t)MR_LEN),
			roce_mr_lkey(f->mr) }},
		.imm_data = qkey,
		.ud = { .ah = f->ah[flags >> 1 & 1], .remote_qpn = flags & 4 ?
			roce_qp_num(f->ud[0].qp) : dqpn & ROCE_24BIT_MASK, .remote_qkey = qkey },
	};
	struct model_qp *from = &f->ud[flags & 8 ? 1 : 0];

	if (op & 0x80)
		wr.opcode = (enum roce_wr_opcode)(op & 0xF);
	if ((flags & 16) && wr.sg_list[0].length <= 64) {
		wr.send_flags |= ROCE_SEND_INLINE;
		wr.sg_list[0].addr = (uintptr_t)f->buf;
	}
	roce_post_send(from->qp, &wr);
}

static void
fz_modify(struct fz *f, const uint8_t **p, size_t *left)
{
	struct model_qp *m = &f->ud[take(p, left, 1) % NB_UD];
	uint8_t st = (uint8_t)take(p, left, 1);
	struct roce_qp_attr a = { .qp_state = (enum roce_qp_state)(st % ROCE_QPS_NUM),
		.qkey = (uint32_t)take(p, left, 4), .sq_psn = 0x123 };
	uint8_t mtu = (uint8_t)take(p, left, 1);
	int mask = ROCE_QP_STATE;

	a.path_mtu = (enum roce_mtu)(1 + mtu % 5);
	a.port_num = m == &f->ud[2] ? 2 : 1;
	if (st & 0x10)
		mask |= ROCE_QP_QKEY;
	if (st & 0x20)
		mask |= ROCE_QP_PATH_MTU;
	if (st & 0x40)
		mask |= ROCE_QP_SQ_PSN;
	if (st & 0x80)
		mask |= ROCE_QP_PORT;
	/* Going to RESET forgets the receives without completions: so does the model. */
	if (roce_qp_modify(m->qp, &a, mask) == 0 && a.qp_state == ROCE_QPS_RESET)
		m->head = m->tail;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data;
	size_t left = size;
	struct fz f;

	if (fz_setup(&f) != 0)
		abort();
	while (left > 0) {
		switch (take(&p, &left, 1) % 5) {
		case 0:
			fz_datagram(&f, &p, &left);
			break;
		case 1:
			fz_recv(&f, &p, &left);
			break;
		case 2:
			fz_send(&f, &p, &left);
			break;
		case 3:
			fz_modify(&f, &p, &left);
			break;
		default:
			f.now += take(&p, &left, 1) * 1000000ull;
			break;
		}
		fz_drain(&f);
	}
	fz_teardown(&f);
	return 0;
}
