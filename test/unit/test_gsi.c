/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GSI agent (roce_dp_gsi.h) on a dataplane that is not started, with one null port:
 * datagrams put in the ring QP1's worker fills, roce_dp_gsi_poll() on this thread. The hook
 * a connection manager sets gets the connection messages with their source (port, the
 * sender's and our IP from the GRH area, QPN, P_Key), parsed and as received, and may send
 * from inside; without one they count as NO_CM. Each verdict of roce_cm_parse() has the
 * counter of its name; SIDR_REQs are answered (their SIDR_REP waits for the peer's MAC); a
 * MAD not addressed to the port counts as BAD_DGID. test_gsi.py does it from the wire.
 */
#include <strings.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_ring_elem.h>

#include "dp_private.h"
#include "roce_test.h"

static const uint8_t ip_us[4] = { 10, 0, 0, 1 }, ip_peer[4] = { 10, 0, 0, 2 };

/* A datagram as QP1's worker hands it over: IPv4 GRH area from @src to @dst. */
static void
rx_make(struct dp_gsi_rx *rx, const uint8_t *src, const uint8_t *dst, const uint8_t *mad,
		uint16_t len)
{
	memset(rx, 0, sizeof(*rx));
	rx->port = 0;
	rx->len = len;
	rx->src_qp = 1;
	rx->grh[20] = 0x45;
	rx->grh[29] = 17;
	memcpy(rx->grh + 32, src, 4);
	memcpy(rx->grh + 36, dst, 4);
	memcpy(rx->mad, mad, len);
}

static void
inject(struct roce_dp *dp, struct dp_gsi_rx *rx)
{
	RT_CHECK(rte_ring_enqueue_elem(dp->gsi->rx, rx, sizeof(*rx)) == 0, "into the ring");
	RT_CHECK(roce_dp_gsi_poll(dp) >= 1, "the agent took it");
}

static uint64_t
cnt(struct roce_dp *dp, enum roce_dp_gsi_counter c)
{
	uint64_t v[ROCE_DP_GSI_C_NUM];

	roce_dp_gsi_counters(dp, v);
	return v[c];
}

static int
build(enum roce_cm_attr attr, uint64_t tid, uint8_t *mad)
{
	struct roce_cm_msg m;

	memset(&m, 0, sizeof(m));
	roce_cm_hdr_init(&m.hdr, attr, tid);
	if (attr == ROCE_CM_ATTR_REQ) {
		m.req.local_comm_id = 0x05629347;
		m.req.local_qpn = 0x4a;
		m.req.pkey = 0xffff;
	} else if (attr == ROCE_CM_ATTR_SIDR_REQ) {
		m.sidr_req.request_id = 77;
		m.sidr_req.pkey = 0xffff;
		m.sidr_req.service_id = 0x1111c06;
	}
	return roce_cm_build(&m, mad, ROCE_MAD_SIZE);
}

/* What the hook saw. */
struct seen {
	struct roce_dp *dp;
	unsigned int calls;
	struct roce_dp_gsi_addr src;
	uint16_t attr;
	uint32_t comm_id;
	uint8_t mad[ROCE_MAD_SIZE];
	int send_ret;
	int answer;             /* send a MAD back from inside the call */
};

static void
hook_recv(void *ctx, const struct roce_dp_gsi_addr *src, const struct roce_cm_msg *msg,
		const uint8_t *mad)
{
	struct seen *s = ctx;
	uint8_t out[ROCE_MAD_SIZE];

	s->calls++;
	s->src = *src;
	s->attr = msg->hdr.attr_id;
	s->comm_id = msg->req.local_comm_id;
	memcpy(s->mad, mad, ROCE_MAD_SIZE);
	if (s->answer && build(ROCE_CM_ATTR_REJ, msg->hdr.tid, out) == ROCE_MAD_SIZE)
		s->send_ret = roce_dp_gsi_send(s->dp, src, out);
}

static void
test_verdict_names(void)
{
	unsigned int v;

	/* Each refusal's counter is the verdict's name in upper case. */
	for (v = ROCE_CM_BAD_LEN; v < ROCE_CM_VERDICT_MAX; v++) {
		const char *n = roce_counter_name(&roce_dp_gsi_counter_family,
				ROCE_DP_GSI_C_BAD_LEN + v - ROCE_CM_BAD_LEN);

		RT_CHECK(n != NULL && strcasecmp(n, roce_cm_verdict_name((enum roce_cm_verdict)v)) ==
				0, "verdict %u: %s / %s", v, roce_cm_verdict_name((enum roce_cm_verdict)v),
				n);
	}
}

static void
test_agent(void)
{
	struct roce_dp_conf c = { .nb_workers = 1, .nb_mbufs = 1024, .mbuf_data_room = 2048,
		.max_qps = 16, .nb_ports = 1, .mtu = 1500 };
	struct seen s = { 0 };
	struct roce_dp_gsi_hook hook = { hook_recv, &s };
	uint8_t mad[ROCE_MAD_SIZE], other[4] = { 10, 0, 0, 9 };
	struct roce_dp_gsi_port qp1;
	struct dp_gsi_rx rx;
	struct roce_dp *dp;
	uint64_t before;
	uint16_t port = 0;

	RT_CHECK(rte_vdev_init("net_null_gsi", NULL) == 0 &&
			rte_eth_dev_get_port_by_name("net_null_gsi", &port) == 0, "null port");
	c.port_ids[0] = port;
	memcpy(c.addr[0].ip4, ip_us, 4);
	c.addr[0].prefix4 = 24;
	dp = roce_dp_create(&c);
	RT_CHECK(dp != NULL, "dataplane: %s", rte_strerror(rte_errno));
	if (dp == NULL)
		goto out;
	s.dp = dp;
	RT_CHECK(roce_dp_gsi_port_query(dp, 0, &qp1) == 0 && qp1.ok &&
			qp1.state == ROCE_QPS_RTS && qp1.recv_posted == ROCE_DP_GSI_RECV_WQES,
			"port 0's QP1 in RTS, its receives posted");
	RT_CHECK(roce_dp_gsi_port_query(dp, 1, &qp1) == -EINVAL, "no port 1");

	/* A REQ, no CM: counted, nothing sent. */
	RT_CHECK(build(ROCE_CM_ATTR_REQ, 0x247936205ull, mad) == ROCE_MAD_SIZE, "REQ built");
	rx_make(&rx, ip_peer, ip_us, mad, ROCE_MAD_SIZE);
	inject(dp, &rx);
	RT_CHECK(cnt(dp, ROCE_DP_GSI_C_RX) == 1 && cnt(dp, ROCE_DP_GSI_C_NO_CM) == 1 &&
			cnt(dp, ROCE_DP_GSI_C_CM) == 0 && dp->gsi->nb_pending == 0, "REQ: NO_CM");

	/* With the hook: the REQ, parsed and as received, and where it came from. */
	RT_CHECK(roce_dp_gsi_set_hook(dp, &hook) == 0, "hook set");
	inject(dp, &rx);
	RT_CHECK(s.calls == 1 && cnt(dp, ROCE_DP_GSI_C_CM) == 1 &&
			cnt(dp, ROCE_DP_GSI_C_NO_CM) == 1, "the hook got it (%u)", s.calls);
	RT_CHECK(s.attr == ROCE_CM_ATTR_REQ && s.comm_id == 0x05629347 &&
			memcmp(s.mad, mad, ROCE_MAD_SIZE) == 0, "the message and its bytes");
	RT_CHECK(s.src.port == 0 && !s.src.ipv6 && memcmp(s.src.ip, ip_peer, 4) == 0 &&
			memcmp(s.src.local_ip, ip_us, 4) == 0 && s.src.qpn == 1 &&
			s.src.pkey == 0xffff, "its source: port, IPs, QPN, P_Key");
	/* The hook answers from inside: the peer's MAC is not known, the MAD waits for it. */
	s.answer = 1;
	inject(dp, &rx);
	RT_CHECK(s.calls == 2 && s.send_ret == 0 && dp->gsi->nb_pending == 1 &&
			cnt(dp, ROCE_DP_GSI_C_TX) == 0, "an answer from the hook waits for ARP");
	s.answer = 0;
	/* Not for the hook: SIDR_REQ (answered by the agent), LAP, refusals. */
	RT_CHECK(build(ROCE_CM_ATTR_SIDR_REQ, 9, mad) == ROCE_MAD_SIZE, "SIDR_REQ built");
	rx_make(&rx, ip_peer, ip_us, mad, ROCE_MAD_SIZE);
	inject(dp, &rx);
	RT_CHECK(s.calls == 2 && cnt(dp, ROCE_DP_GSI_C_SIDR_REQ) == 1 &&
			cnt(dp, ROCE_DP_GSI_C_SIDR_REP_TX) == 1 && dp->gsi->nb_pending == 2,
			"SIDR_REQ: the SIDR_REP waits for ARP too");
	RT_CHECK(build(ROCE_CM_ATTR_LAP, 10, mad) == ROCE_MAD_SIZE, "LAP built");
	rx_make(&rx, ip_peer, ip_us, mad, ROCE_MAD_SIZE);
	inject(dp, &rx);
	RT_CHECK(s.calls == 2 && cnt(dp, ROCE_DP_GSI_C_DROP) == 1, "LAP dropped");
	rx_make(&rx, ip_peer, ip_us, mad, 255);
	inject(dp, &rx);
	RT_CHECK(cnt(dp, ROCE_DP_GSI_C_BAD_LEN) == 1, "255 bytes: BAD_LEN");
	build(ROCE_CM_ATTR_REQ, 11, mad);
	mad[1] = ROCE_MAD_CLASS_PERF;
	rx_make(&rx, ip_peer, ip_us, mad, ROCE_MAD_SIZE);
	inject(dp, &rx);
	RT_CHECK(cnt(dp, ROCE_DP_GSI_C_BAD_CLASS) == 1 && s.calls == 2, "PerfMgt: BAD_CLASS");
	build(ROCE_CM_ATTR_REQ, 12, mad);
	before = cnt(dp, ROCE_DP_GSI_C_BAD_DGID);
	rx_make(&rx, ip_peer, other, mad, ROCE_MAD_SIZE);
	inject(dp, &rx);
	RT_CHECK(cnt(dp, ROCE_DP_GSI_C_BAD_DGID) == before + 1 && s.calls == 2,
			"to another IP: BAD_DGID, not the hook");
	/* The hook taken away: NO_CM again. */
	roce_dp_gsi_set_hook(dp, NULL);
	rx_make(&rx, ip_peer, ip_us, mad, ROCE_MAD_SIZE);
	inject(dp, &rx);
	RT_CHECK(s.calls == 2 && cnt(dp, ROCE_DP_GSI_C_NO_CM) == 2, "hook gone: NO_CM");
	RT_CHECK(cnt(dp, ROCE_DP_GSI_C_RX) == 9, "%u received", (unsigned int)cnt(dp, ROCE_DP_GSI_C_RX));
	/* Bad destinations refused before anything is sent. */
	{
		struct roce_dp_gsi_addr bad = { .port = 1 };

		RT_CHECK(roce_dp_gsi_send(dp, &bad, mad) == -EINVAL, "no port 1");
		bad.port = 0;
		bad.qpn = 1u << 24;
		RT_CHECK(roce_dp_gsi_send(dp, &bad, mad) == -EINVAL, "a QPN over 24 bits");
	}
	roce_dp_destroy(dp);
out:
	rte_vdev_uninit("net_null_gsi");
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	RT_RUN(test_verdict_names);
	RT_RUN(test_agent);
	return rt_report("test_gsi");
}
