/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PFC honoured in software (lib/dataplane roce_dp_pfc and the transmit object's hold): pause
 * times from quanta at the link speed, resumes, replaced pauses and the time paused counted
 * once, every malformed frame under its reason, modes and priorities without PFC, the
 * watchdog (a continuous pause cut at the timeout, a storm ignored until it stops or a resume
 * comes, a flood of huge quanta); on a ring port: a paused priority's frames held while another
 * priority's keep going (no head-of-line blocking across priorities), released in order when
 * the pause ends, the hold filling up, frames that may be lost dropped past the reserve; and a
 * lossless tx bottleneck pausing our own transmit with its PFC frames: no drop, all in order.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>

#include "roce_dataplane.h"
#include "roce_dp_pfc.h"
#include "roce_impair.h"
#include "roce_pfc.h"
#include "roce_test.h"
#include "roce_txq.h"

#define BURST 32
#define SEQ_OFF 40

static struct rte_mempool *pool;
static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 9 };

/* A PFC frame for @vector with the same time for each of its priorities. */
static void
pfc(uint8_t *f, uint8_t vector, uint16_t quanta)
{
	uint16_t q[8];
	unsigned int i;

	for (i = 0; i < 8; i++)
		q[i] = quanta;
	roce_pfc_build(f, ROCE_PFC_FRAME_LEN, mac, vector, q);
}

static enum roce_pfc_result
rx(struct roce_dp_pfc *pp, uint8_t vector, uint16_t quanta, uint64_t now)
{
	uint8_t f[ROCE_PFC_FRAME_LEN];

	pfc(f, vector, quanta);
	return roce_dp_pfc_rx(pp, f, sizeof(f), now);
}

static struct roce_dp_pfc_state
rd(struct roce_dp_pfc *pp, uint64_t now)
{
	struct roce_dp_pfc_state st;

	roce_dp_pfc_read(pp, now, &st);
	return st;
}

/* ---- the port's state ---- */

static void
test_pause_resume(void)
{
	struct roce_dp_pfc pp;
	const uint64_t t = 1000000, q1000 = roce_pfc_quanta_ns(1000, 100000);  /* 5120 ns */
	struct roce_dp_pfc_state st;

	roce_dp_pfc_init(&pp);
	roce_dp_pfc_set_link(&pp, 100000);
	RT_CHECK(roce_dp_pfc_paused(&pp, t) == 0, "nothing paused");
	RT_CHECK(rx(&pp, 0x08, 1000, t) == ROCE_PFC_OK, "parsed");
	RT_CHECK(roce_dp_pfc_paused(&pp, t) == 0x08 && roce_dp_pfc_paused(&pp, t + q1000 - 1) ==
			0x08 && roce_dp_pfc_paused(&pp, t + q1000) == 0, "3 paused for 5120 ns");
	st = rd(&pp, t + 10 * q1000);
	RT_CHECK(st.paused_ns[3] == q1000 && st.cnt[ROCE_DP_PFC_C_PAUSED_NS] == q1000 &&
			st.pauses[3] == 1 && st.cnt[ROCE_DP_PFC_C_RX_PAUSE] == 1 &&
			st.cnt[ROCE_DP_PFC_C_RX_FRAMES] == 1, "counted: %" PRIu64 " ns", st.paused_ns[3]);
	/* A later frame replaces the pause: 2000 ns in, 5120 more; overlap counted once. */
	rx(&pp, 0x08, 1000, 2 * t);
	rx(&pp, 0x08, 1000, 2 * t + 2000);
	st = rd(&pp, 2 * t + 3000);
	RT_CHECK(st.paused == 0x08 && st.paused_left_ns[3] == 2000 + q1000 - 3000 &&
			st.paused_ns[3] == q1000 + 3000, "so far %" PRIu64 ", left %" PRIu64,
			st.paused_ns[3], st.paused_left_ns[3]);
	/* A resume ends it at once. */
	RT_CHECK(rx(&pp, 0x08, 0, 2 * t + 3000) == ROCE_PFC_OK &&
			roce_dp_pfc_paused(&pp, 2 * t + 3000) == 0, "resumed");
	st = rd(&pp, 3 * t);
	RT_CHECK(st.paused_ns[3] == q1000 + 3000 && st.resumes[3] == 1 &&
			st.cnt[ROCE_DP_PFC_C_RX_RESUME] == 1, "%" PRIu64 " ns paused", st.paused_ns[3]);
	/* Several priorities, each its own time; the link speed makes the time. */
	roce_dp_pfc_set_link(&pp, 10000);
	{
		uint8_t f[ROCE_PFC_FRAME_LEN];
		const uint16_t q[8] = { [1] = 10, [6] = 100 };

		roce_pfc_build(f, sizeof(f), mac, 0x42, q);
		roce_dp_pfc_rx(&pp, f, sizeof(f), 4 * t);
	}
	RT_CHECK(roce_dp_pfc_paused(&pp, 4 * t + 511) == 0x42 &&
			roce_dp_pfc_paused(&pp, 4 * t + 512) == 0x40 &&
			roce_dp_pfc_paused(&pp, 4 * t + 5119) == 0x40 &&
			roce_dp_pfc_paused(&pp, 4 * t + 5120) == 0, "10 and 100 quanta at 10 Gb/s");
	/* No link speed known: 100 Gb/s. */
	roce_dp_pfc_set_link(&pp, 0);
	rx(&pp, 0x01, 1000, 5 * t);
	RT_CHECK(roce_dp_pfc_paused(&pp, 5 * t + q1000 - 1) == 0x01 &&
			roce_dp_pfc_paused(&pp, 5 * t + q1000) == 0, "default speed");
}

static void
test_bad_frames(void)
{
	struct roce_dp_pfc pp;
	struct roce_dp_pfc_state st;
	uint8_t f[80];
	unsigned int i;

	roce_dp_pfc_init(&pp);
	pfc(f, 0x08, 100);
	RT_CHECK(roce_dp_pfc_rx(&pp, f, 59, 0) == ROCE_PFC_BAD_LENGTH &&
			roce_dp_pfc_rx(&pp, f, 61, 0) == ROCE_PFC_BAD_LENGTH, "lengths");
	f[5] = 2;
	RT_CHECK(roce_dp_pfc_rx(&pp, f, 60, 0) == ROCE_PFC_BAD_DST, "destination");
	f[5] = 1;
	f[15] = 9;
	RT_CHECK(roce_dp_pfc_rx(&pp, f, 60, 0) == ROCE_PFC_BAD_OPCODE, "opcode");
	f[14] = 0;
	f[15] = 1;
	RT_CHECK(roce_dp_pfc_rx(&pp, f, 60, 0) == ROCE_PFC_BAD_LINK_PAUSE, "PAUSE");
	f[14] = 1;
	f[17] = 0;
	for (i = 0; i < 3; i++)
		RT_CHECK(roce_dp_pfc_rx(&pp, f, 60, 0) == ROCE_PFC_BAD_ZERO_VECTOR, "zero vector");
	f[12] = 0x08;
	f[13] = 0x00;
	RT_CHECK(roce_dp_pfc_rx(&pp, f, 60, 0) == ROCE_PFC_NOT_CTRL, "not MAC control");
	st = rd(&pp, 0);
	RT_CHECK(st.cnt[ROCE_DP_PFC_C_RX_BAD_LENGTH] == 2 && st.cnt[ROCE_DP_PFC_C_RX_BAD_DST] == 1 &&
			st.cnt[ROCE_DP_PFC_C_RX_BAD_OPCODE] == 1 &&
			st.cnt[ROCE_DP_PFC_C_RX_LINK_PAUSE] == 1 &&
			st.cnt[ROCE_DP_PFC_C_RX_ZERO_VECTOR] == 3 && st.cnt[ROCE_DP_PFC_C_RX_FRAMES] == 0 &&
			st.paused == 0, "each under its reason, nothing paused");
	/* Random bytes: nothing but counters change, nothing crashes. */
	for (i = 0; i < 100000; i++) {
		unsigned int j, len = 14 + (unsigned int)rand() % 60;

		for (j = 0; j < len; j++)
			f[j] = (uint8_t)rand();
		f[12] = 0x88;
		f[13] = 0x08;
		if (i % 3 == 0) {
			memcpy(f, roce_pfc_dst, 6);
			f[14] = 1;
			f[15] = 1;
		}
		roce_dp_pfc_rx(&pp, f, i % 2 ? 60 : len, i);
	}
	st = rd(&pp, 1000000);
	RT_CHECK(st.cnt[ROCE_DP_PFC_C_RX_FRAMES] > 0 && st.cnt[ROCE_DP_PFC_C_RX_BAD_LENGTH] > 0,
			"random frames: %" PRIu64 " taken", st.cnt[ROCE_DP_PFC_C_RX_FRAMES]);
}

static void
test_modes(void)
{
	struct roce_dp_pfc pp;
	struct roce_dp_pfc_state st;

	roce_dp_pfc_init(&pp);
	roce_dp_pfc_configure(&pp, ROCE_DP_PFC_OFF, 0xff, 0, 0);
	rx(&pp, 0x08, 1000, 100);
	st = rd(&pp, 100);
	RT_CHECK(st.paused == 0 && st.cnt[ROCE_DP_PFC_C_RX_IGNORED] == 1 &&
			st.cnt[ROCE_DP_PFC_C_RX_FRAMES] == 1, "off: counted, ignored");
	roce_dp_pfc_configure(&pp, ROCE_DP_PFC_HW, 0xff, 0, 0);
	rx(&pp, 0x08, 1000, 100);
	RT_CHECK(rd(&pp, 100).cnt[ROCE_DP_PFC_C_RX_IGNORED] == 2, "hw: the NIC's business");
	/* Software, priority 3 only: 5 is not enabled. */
	roce_dp_pfc_configure(&pp, ROCE_DP_PFC_SW, 0x08, 0, 0);
	rx(&pp, 0x28, 1000, 100);
	st = rd(&pp, 100);
	RT_CHECK(st.paused == 0x08 && st.cnt[ROCE_DP_PFC_C_RX_NOT_ENABLED] == 1 &&
			st.prios == 0x08, "only 3: paused 0x%02x", st.paused);
	/* Turning it off ends the pause now. */
	roce_dp_pfc_configure(&pp, ROCE_DP_PFC_OFF, 0x08, 0, 200);
	st = rd(&pp, 200);
	RT_CHECK(st.paused == 0 && st.paused_ns[3] == 100, "off ends it: %" PRIu64,
			st.paused_ns[3]);
	RT_CHECK(strcmp(roce_dp_pfc_mode_name(ROCE_DP_PFC_SW), "sw") == 0 &&
			strcmp(roce_dp_pfc_mode_name(ROCE_DP_PFC_AUTO), "auto") == 0, "names");
}

static void
test_watchdog(void)
{
	const uint64_t ms = 1000000, pause = roce_pfc_quanta_ns(65535, 100000);  /* 335.5 us */
	struct roce_dp_pfc pp;
	struct roce_dp_pfc_state st;
	uint64_t t, t0 = 10 * ms, last_paused = 0;

	roce_dp_pfc_init(&pp);
	roce_dp_pfc_configure(&pp, ROCE_DP_PFC_SW, 0xff, 1 * ms, 0);
	roce_dp_pfc_set_link(&pp, 100000);
	/* A storm: pauses every 100 us for 5 ms. The pause is cut 1 ms after it began. */
	for (t = t0; t < t0 + 5 * ms; t += 100000) {
		rx(&pp, 0x08, 65535, t);
		if (roce_dp_pfc_paused(&pp, t) != 0)
			last_paused = t;
	}
	st = rd(&pp, t);
	printf("  watchdog: paused %" PRIu64 " us of a 5 ms storm, %" PRIu64 " frames ignored\n",
			st.paused_ns[3] / 1000, st.cnt[ROCE_DP_PFC_C_RX_STORM]);
	RT_CHECK(st.cnt[ROCE_DP_PFC_C_WATCHDOG] == 1 && st.storm == 0x08 &&
			st.paused_ns[3] == 1 * ms && last_paused < t0 + 1 * ms &&
			st.cnt[ROCE_DP_PFC_C_RX_STORM] == 42, "cut at 1 ms: %" PRIu64 " ns, %" PRIu64
			" ignored", st.paused_ns[3], st.cnt[ROCE_DP_PFC_C_RX_STORM]);
	/* Frames stop for a timeout: honoured again. */
	t += 2 * ms;
	rx(&pp, 0x08, 65535, t);
	st = rd(&pp, t);
	RT_CHECK(st.storm == 0 && st.paused == 0x08 && st.paused_left_ns[3] == pause,
			"after the storm: paused 0x%02x", st.paused);
	/* A resume ends a storm too. */
	for (t += 100000; t < t0 + 12 * ms; t += 100000)
		rx(&pp, 0x08, 65535, t);
	RT_CHECK(rd(&pp, t).storm == 0x08, "a second storm");
	rx(&pp, 0x08, 0, t);
	rx(&pp, 0x08, 65535, t + 1000);
	st = rd(&pp, t + 1000);
	RT_CHECK(st.storm == 0 && st.paused == 0x08, "resumed, then honoured");
	/* Huge quanta on a slow link: 65535 quanta at 10 Mb/s is 3.4 s; cut at the timeout. */
	roce_dp_pfc_set_link(&pp, 10);
	rx(&pp, 0x01, 65535, 100 * ms);
	RT_CHECK(roce_dp_pfc_paused(&pp, 101 * ms - 1) == 0x01 &&
			roce_dp_pfc_paused(&pp, 101 * ms) == 0, "flood of huge quanta cut at 1 ms");
	/* No watchdog: as long as the frames say. */
	roce_dp_pfc_configure(&pp, ROCE_DP_PFC_SW, 0xff, 0, 200 * ms);
	rx(&pp, 0x01, 65535, 200 * ms);
	RT_CHECK(roce_dp_pfc_paused(&pp, 200 * ms + 3000 * ms) == 0x01, "no watchdog");
}

/* ---- the hold on a port ---- */

static struct rte_mbuf *
frame(uint32_t seq, unsigned int pcp)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p;

	if (m == NULL || (p = (uint8_t *)rte_pktmbuf_append(m, 64)) == NULL) {
		fprintf(stderr, "pool empty\n");
		exit(2);
	}
	memset(p, 0, 64);
	p[12] = 0x81;
	p[14] = (uint8_t)(pcp << 5);
	p[16] = 0x08;
	memcpy(p + SEQ_OFF, &seq, 4);
	return m;
}

static uint16_t
ring_port(const char *name)
{
	struct rte_eth_conf conf = {0};
	uint16_t port;

	if (rte_vdev_init(name, NULL) != 0 ||
			rte_eth_dev_get_port_by_name(name, &port) != 0 ||
			rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
			rte_eth_rx_queue_setup(port, 0, 1024, SOCKET_ID_ANY, NULL, pool) != 0 ||
			rte_eth_tx_queue_setup(port, 0, 4096, SOCKET_ID_ANY, NULL) != 0 ||
			rte_eth_dev_start(port) != 0) {
		fprintf(stderr, "cannot set up a ring port\n");
		exit(2);
	}
	return port;
}

/* What arrived on the ring, by priority: sequence numbers in order. */
struct got {
	uint32_t seq[8][8192];
	uint32_t n[8];
	uint32_t pfc;
};

static void
collect(uint16_t port, struct got *g)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t k, i;

	while ((k = rte_eth_rx_burst(port, 0, pkts, BURST)) != 0) {
		for (i = 0; i < k; i++) {
			const uint8_t *p = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
			unsigned int pr = p[14] >> 5;
			uint32_t s;

			if (p[12] == 0x88 && p[13] == 0x08) {
				g->pfc++;
			} else if (g->n[pr] < RTE_DIM(g->seq[pr])) {
				memcpy(&s, p + SEQ_OFF, 4);
				g->seq[pr][g->n[pr]++] = s;
			}
		}
		rte_pktmbuf_free_bulk(pkts, k);
	}
}

static int
in_order(const struct got *g, unsigned int pr)
{
	uint32_t i;

	for (i = 1; i < g->n[pr]; i++)
		if (g->seq[pr][i] <= g->seq[pr][i - 1])
			return 0;
	return 1;
}

static struct got got;

/*
 * Priority 3 paused, priority 5 not: 5's frames keep going at once (a victim on another
 * priority), 3's wait and leave when the pause ends, in order, ahead of newer ones.
 */
static void
test_hold(void)
{
	uint16_t port = ring_port("net_ring_pfc0");
	uint64_t cnt[ROCE_DP_CNT_NUM] = {0}, now = 1000000;
	const uint64_t q = roce_pfc_quanta_ns(10000, 100000);  /* 51.2 us */
	struct rte_mbuf *pkts[BURST];
	struct roce_dp_pfc pp;
	struct roce_txq tq;
	uint32_t seq = 0, i, k;

	memset(&got, 0, sizeof(got));
	roce_dp_pfc_init(&pp);
	roce_dp_pfc_set_link(&pp, 100000);
	roce_txq_init(&tq, port, 0, NULL, NULL, cnt);
	RT_CHECK(roce_txq_set_pfc(&tq, &pp, SOCKET_ID_ANY) == 0 &&
			roce_txq_set_pfc(&tq, &pp, SOCKET_ID_ANY) == -EINVAL, "set once");
	rx(&pp, 0x08, 10000, now);
	for (i = 0; i < 10; i++) {
		for (k = 0; k < BURST; k++)
			pkts[k] = frame(seq++, k % 2 ? 5 : 3);
		roce_txq_send(&tq, pkts, BURST, now);
		roce_txq_flush(&tq, now);
		now += 1000;
	}
	collect(port, &got);
	RT_CHECK(got.n[5] == 160 && got.n[3] == 0 && roce_txq_nb_held(&tq, 3) == 160 &&
			cnt[ROCE_DP_PFC_HELD] == 160 && roce_txq_ready(&tq) && roce_txq_held(&tq),
			"paused: 5 went (%u), 3 held (%u)", got.n[5], roce_txq_nb_held(&tq, 3));
	/* Still paused: nothing of 3 leaves with a flush. */
	roce_txq_flush(&tq, now);
	collect(port, &got);
	RT_CHECK(got.n[3] == 0, "still paused");
	/* The pause ends; new frames of 3 come after the held ones. */
	now = 1000000 + q;
	for (k = 0; k < BURST; k++)
		pkts[k] = frame(seq++, 3);
	roce_txq_send(&tq, pkts, BURST, now);
	for (i = 0; i < 20; i++)
		roce_txq_flush(&tq, now);
	collect(port, &got);
	RT_CHECK(got.n[3] == 192 && in_order(&got, 3) && in_order(&got, 5) &&
			!roce_txq_held(&tq) && tq.held == 0, "released in order: %u", got.n[3]);
	/* A resume releases at once. */
	rx(&pp, 0x08, 65535, now);
	for (k = 0; k < BURST; k++)
		pkts[k] = frame(seq++, 3);
	roce_txq_send(&tq, pkts, BURST, now);
	rx(&pp, 0x08, 0, now + 10);
	roce_txq_flush(&tq, now + 10);
	collect(port, &got);
	RT_CHECK(got.n[3] == 224 && in_order(&got, 3), "resume: %u", got.n[3]);
	roce_txq_fini(&tq);
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
}

/*
 * A long pause fills the hold: the object stops taking frames that must not be lost (every
 * priority waits: counted), frames that may be lost are dropped past the reserve, nothing is
 * lost otherwise; the end of the pause lets everything go.
 */
static void
test_hold_full(void)
{
	uint16_t port = ring_port("net_ring_pfc1");
	uint64_t cnt[ROCE_DP_CNT_NUM] = {0}, now = 1000000;
	struct rte_mbuf *pkts[BURST];
	struct roce_dp_pfc pp;
	struct roce_txq tq;
	uint32_t seq = 0, k, sent = 0, lossy;

	memset(&got, 0, sizeof(got));
	roce_dp_pfc_init(&pp);
	roce_dp_pfc_configure(&pp, ROCE_DP_PFC_SW, 0xff, 0, 0);
	roce_dp_pfc_set_link(&pp, 100000);
	roce_txq_init(&tq, port, 0, NULL, NULL, cnt);
	roce_txq_set_pfc(&tq, &pp, SOCKET_ID_ANY);
	rx(&pp, 0x08, 65535, now);
	while (roce_txq_ready(&tq)) {
		for (k = 0; k < BURST; k++)
			pkts[k] = frame(seq++, 3);
		roce_txq_send(&tq, pkts, BURST, now);
		sent += BURST;
	}
	RT_CHECK(cnt[ROCE_DP_PFC_HOLD_FULL] == 1 && roce_txq_nb_held(&tq, 3) == sent &&
			sent > ROCE_TXQ_HOLD - 2 * BURST && sent <= ROCE_TXQ_HOLD,
			"full after %u frames", sent);
	/* Frames that may be lost: no room beyond the reserve, dropped and counted. */
	for (k = 0; k < 4; k++)
		pkts[k] = frame(seq++, 3);
	roce_txq_send_or_drop(&tq, pkts, 4, now);
	lossy = (uint32_t)cnt[ROCE_DP_PORT_TX_DROP];
	RT_CHECK(lossy == 4 && roce_txq_nb_held(&tq, 3) == sent, "lossy dropped: %u", lossy);
	/* The pause ends: everything goes, the object is ready again. */
	now += roce_pfc_quanta_ns(65535, 100000);
	for (k = 0; k < 1000 && roce_txq_held(&tq); k++) {
		roce_txq_flush(&tq, now);
		collect(port, &got);
	}
	RT_CHECK(got.n[3] == sent && in_order(&got, 3) && roce_txq_ready(&tq), "all %u out",
			got.n[3]);
	roce_txq_fini(&tq);
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
}

/*
 * A lossless tx bottleneck (100 Mb/s, XOFF 16 KiB) fed faster than its rate: its PFC frames
 * pause our own transmit of the priority, the hold takes what the engine would send, the
 * bottleneck never drops, and every frame arrives once, in order.
 */
static void
test_tx_bneck_pauses_us(void)
{
	uint16_t port = ring_port("net_ring_pfc2");
	struct roce_impair *im = roce_impair_create(port, 1, SOCKET_ID_ANY);
	uint64_t cnt[ROCE_DP_CNT_NUM] = {0}, c[ROCE_IMPAIR_CNT_NUM], now = 1000000;
	struct roce_impair_spec spec;
	struct roce_dp_pfc_state st;
	struct rte_mbuf *pkts[BURST];
	struct roce_dp_pfc pp;
	struct roce_txq tq;
	struct rte_eth_link link;
	char err[128];
	uint32_t seq = 0, k, n = 6000, i;

	memset(&got, 0, sizeof(got));
	RT_CHECK(roce_impair_parse("dir=tx,bneck=100m:256k,lossless=16k:8k", &spec, err,
			sizeof(err)) == 0 && roce_impair_set(im, &spec) == 0, "set %s", err);
	roce_dp_pfc_init(&pp);
	/* The bottleneck refreshes at half the pause its port's speed gives: the same speed. */
	RT_CHECK(rte_eth_link_get_nowait(port, &link) == 0 && link.link_speed > 0, "link");
	roce_dp_pfc_set_link(&pp, link.link_speed);
	roce_txq_init(&tq, port, 0, NULL, NULL, cnt);
	RT_CHECK(roce_txq_set_impair(&tq, im) == 0 && roce_txq_set_pfc(&tq, &pp, SOCKET_ID_ANY) ==
			0, "attached");
	/* 32 frames of 64 bytes (2.25 Mb) every 5 us: 7 times the rate. */
	for (i = 0; got.n[3] < n && i < 2000000; i++) {
		if (seq < n && roce_txq_ready(&tq)) {
			for (k = 0; k < BURST; k++)
				pkts[k] = frame(seq++, 3);
			roce_txq_send(&tq, pkts, BURST, now);
		}
		roce_txq_flush(&tq, now);
		collect(port, &got);
		now += 5000;
	}
	roce_impair_counters(im, ROCE_IMPAIR_TX, c);
	roce_dp_pfc_read(&pp, now, &st);
	printf("  tx bottleneck: %u frames, %" PRIu64 " pauses, %" PRIu64 " resumes, %" PRIu64
			" held, paused %.2f ms of %.2f\n", got.n[3], c[ROCE_IMPAIR_C_PFC_PAUSE_TX],
			c[ROCE_IMPAIR_C_PFC_RESUME_TX], cnt[ROCE_DP_PFC_HELD],
			st.paused_ns[3] / 1e6, (now - 1000000) / 1e6);
	RT_CHECK(got.n[3] == n && in_order(&got, 3) && got.pfc == 0, "all %u in order, no PFC "
			"frame on the wire (%u)", got.n[3], got.pfc);
	RT_CHECK(c[ROCE_IMPAIR_C_TAIL_DROPPED] == 0 && c[ROCE_IMPAIR_C_HEADROOM_DROPPED] == 0 &&
			c[ROCE_IMPAIR_C_PFC_PAUSE_TX] > 0 && c[ROCE_IMPAIR_C_PFC_RESUME_TX] > 0,
			"lossless: no drop, %" PRIu64 " pauses", c[ROCE_IMPAIR_C_PFC_PAUSE_TX]);
	RT_CHECK(st.cnt[ROCE_DP_PFC_C_RX_FRAMES] == c[ROCE_IMPAIR_C_PFC_PAUSE_TX] +
			c[ROCE_IMPAIR_C_PFC_RESUME_TX] && st.paused_ns[3] > 0 &&
			cnt[ROCE_DP_PFC_HELD] > 0, "our transmit paused: %" PRIu64 " frames heard",
			st.cnt[ROCE_DP_PFC_C_RX_FRAMES]);
	roce_txq_fini(&tq);
	roce_impair_destroy(im);
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	pool = rt_pool(16384, 2048);
	srand(7);
	RT_RUN(test_pause_resume);
	RT_RUN(test_bad_frames);
	RT_RUN(test_modes);
	RT_RUN(test_watchdog);
	RT_RUN(test_hold);
	RT_RUN(test_hold_full);
	RT_RUN(test_tx_bneck_pauses_us);
	RT_CHECK(rte_mempool_in_use_count(pool) == 0, "%u mbufs leaked",
			rte_mempool_in_use_count(pool));
	return rt_report("pfc");
}
