/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: lib/cm's codecs, which take the MADs peers send to QP1.
 *
 * Input: a MAD (the input itself, and its first 256 bytes, zero-padded, so the length check
 * does not stop everything else). Invariants: a MAD parses only at 256 bytes; every refusal
 * has a counter name; what parses builds to 256 bytes that parse to the same struct and build
 * to the same bytes again, and the rebuild only clears bits of the input (the reserved ones).
 * The RDMA CM header (of the input, of a REQ's private data) of any buffer: what parses rebuilds and parses the same.
 * The MAD header of any length: what parses rebuilds to the same 24 bytes.
 * The state machine: the input cut into 256-byte MADs (the last one short), each fed to a
 * roce_cm instance that listens on rping's service and has a REQ of its own out, with the
 * virtual clock moved to the next timer between them, its user accepting, answering REPs
 * with RTUs and DREQs with DREPs. Invariants: every MAD it sends parses, slots stay within
 * bounds, every event names a live handle, and freeing it leaves nothing (ASan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roce_mad.h"
#include "roce_cm_msg.h"
#include "roce_cma.h"
#include "roce_cm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void
check_cma(const uint8_t *p, size_t len)
{
	struct roce_cma_hdr h, h2;
	uint8_t out[ROCE_CMA_HDR_LEN];
	uint16_t ps, port;
	uint64_t sid = 0;
	size_t i;

	if (roce_cma_hdr_parse(&h, p, len) == 0) {
		CHECK(h.ip_version == 4 || h.ip_version == 6);
		CHECK(roce_cma_hdr_build(&h, out, sizeof(out)) == ROCE_CMA_HDR_LEN);
		CHECK(roce_cma_hdr_parse(&h2, out, sizeof(out)) == 0);
		CHECK(memcmp(&h, &h2, sizeof(h)) == 0);
	}
	for (i = 0; i < 8 && i < len; i++)
		sid = sid << 8 | p[i];
	if (roce_cma_service_id_parse(sid, &ps, &port) == 0)
		CHECK(ROCE_CMA_SERVICE_ID(ps, port) == sid);
}

static void
check_mad(const uint8_t *mad, size_t len)
{
	static struct roce_cm_msg m, m2;
	uint8_t out[ROCE_MAD_SIZE], out2[ROCE_MAD_SIZE];
	enum roce_cm_verdict v = roce_cm_parse(&m, mad, len);
	unsigned int i;

	CHECK(roce_cm_verdict_name(v) != NULL);
	CHECK(v == ROCE_CM_BAD_LEN || len == ROCE_MAD_SIZE);
	CHECK(roce_cm_linux_action(m.hdr.attr_id) <= ROCE_CM_ACT_MATCH_SIDR);
	if (v != ROCE_CM_OK)
		return;
	CHECK(roce_cm_attr_name(m.hdr.attr_id) != NULL);
	CHECK(roce_cm_build(&m, out, sizeof(out)) == ROCE_MAD_SIZE);
	CHECK(roce_cm_parse(&m2, out, sizeof(out)) == ROCE_CM_OK);
	CHECK(memcmp(&m, &m2, sizeof(m)) == 0);
	CHECK(roce_cm_build(&m2, out2, sizeof(out2)) == ROCE_MAD_SIZE);
	CHECK(memcmp(out, out2, sizeof(out)) == 0);
	/* The rebuild only clears bits: a set bit of the output was set in the input. */
	for (i = 0; i < ROCE_MAD_SIZE; i++)
		CHECK((out[i] & ~mad[i]) == 0);
	if (m.hdr.attr_id == ROCE_CM_ATTR_REQ)
		check_cma(m.req.private_data, sizeof(m.req.private_data));
}

static void
check_hdr(const uint8_t *p, size_t len)
{
	struct roce_mad_hdr h;
	uint8_t out[ROCE_MAD_HDR_LEN];
	int rc = roce_mad_hdr_parse(&h, p, len);

	CHECK(rc == 0 || len < ROCE_MAD_HDR_LEN || p[0] != ROCE_MAD_BASE_VERSION);
	if (rc != 0)
		return;
	roce_mad_hdr_build(&h, out);
	CHECK(memcmp(out, p, sizeof(out)) == 0);
}

#define SM_CONNS 4

struct sm_user {
	struct roce_cm_conn *live[SM_CONNS * 2];
	unsigned int nb_live;
	uint64_t now;
};

static int
sm_live(struct sm_user *u, const struct roce_cm_conn *c)
{
	unsigned int i;

	for (i = 0; i < u->nb_live; i++)
		if (u->live[i] == c)
			return (int)i;
	return -1;
}

static int
sm_send(void *ctx, const struct roce_cm_addr *dest, const uint8_t *mad)
{
	struct roce_cm_msg m;

	(void)ctx;
	CHECK(dest->remote_qpn == 1);
	CHECK(roce_cm_parse(&m, mad, ROCE_MAD_SIZE) == ROCE_CM_OK);
	return 0;
}

static void
sm_event(void *ctx, const struct roce_cm_event *ev)
{
	struct sm_user *u = ctx;
	struct roce_cm_accept_params ap;
	int i;

	CHECK(ev->type < ROCE_CM_EV_MAX);
	if (ev->type == ROCE_CM_EV_REQ) {
		CHECK(sm_live(u, ev->conn) < 0 && u->nb_live < SM_CONNS * 2);
		u->live[u->nb_live++] = ev->conn;
	}
	i = sm_live(u, ev->conn);
	CHECK(i >= 0);
	switch (ev->type) {
	case ROCE_CM_EV_REQ:
		roce_cm_accept_params_init(&ap, ev->req);
		ap.qp_num = 0x123;
		ap.starting_psn = 0x456;
		CHECK(roce_cm_accept(ev->conn, &ap, u->now) == 0);
		break;
	case ROCE_CM_EV_REP:
		CHECK(roce_cm_rtu(ev->conn, NULL, 0, u->now) == 0);
		break;
	case ROCE_CM_EV_DREQ:
		CHECK(roce_cm_disconnect(ev->conn, NULL, 0, u->now) == 0);
		break;
	default:
		break;
	}
	if (ev->released)
		u->live[i] = u->live[--u->nb_live];
}

static void
check_sm(const uint8_t *data, size_t size)
{
	static const struct roce_cm_ops ops = { .send = sm_send, .event = sm_event };
	struct roce_cm_conf conf = { .max_conns = SM_CONNS, .max_listeners = 1,
		.ca_guid = 0x505400fffed78e1dull, .hi_tid = 2, .ack_delay = 15, .seed = 1 };
	struct roce_cm_connect_params p;
	struct sm_user u = { .nb_live = 0, .now = 1000000000ull };
	struct roce_cm_addr src;
	struct roce_cm_conn *c;
	struct roce_cm *cm;
	size_t off;

	cm = roce_cm_create(&conf, &ops, &u);
	CHECK(cm != NULL);
	CHECK(roce_cm_listen(cm, ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_TCP, 7174), 2, NULL) == 0);
	roce_cm_connect_params_init(&p);
	p.service_id = ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_TCP, 7174);
	p.qp_num = 0x4a;
	CHECK(roce_cm_connect(cm, &p, NULL, u.now, &c) == 0);
	u.live[u.nb_live++] = c;
	memset(&src, 0, sizeof(src));
	src.port = 1;
	src.remote_qpn = 1;
	src.qkey = ROCE_CM_QP1_QKEY;
	src.pkey = ROCE_CM_DEFAULT_PKEY;
	for (off = 0; off < size; off += ROCE_MAD_SIZE) {
		size_t len = size - off < ROCE_MAD_SIZE ? size - off : ROCE_MAD_SIZE;
		uint64_t next;

		roce_cm_input(cm, &src, data + off, len, u.now);
		CHECK(roce_cm_nb_conns(cm) <= SM_CONNS);
		/* The next MAD comes after the next timer, or a little later. */
		next = roce_cm_next_deadline(cm);
		u.now = next != UINT64_MAX ? next : u.now + 1000000ull;
		roce_cm_tick(cm, u.now);
	}
	roce_cm_free(cm);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t mad[ROCE_MAD_SIZE] = {0};

	check_sm(data, size);

	check_mad(data, size);
	memcpy(mad, data, size < sizeof(mad) ? size : sizeof(mad));
	check_mad(mad, sizeof(mad));
	check_hdr(data, size);
	check_cma(data, size);
	if (size > ROCE_MAD_HDR_LEN + 140)
		check_cma(data + ROCE_MAD_HDR_LEN + 140, size - ROCE_MAD_HDR_LEN - 140);
	return 0;
}
