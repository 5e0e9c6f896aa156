/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet capture (lib/dataplane/capture.c) on a dataplane whose port is a ring PMD, driven from
 * this thread (the workers are not started: rx/tx bursts here run the callbacks): every frame
 * the port takes or delivers is written once; a frame the port refuses and that is offered
 * again is counted as re-offered, not captured again, while a buffer freed and used for a new
 * frame is captured anew; the file, read back with lib/pcapfile's pcapng reader, holds the
 * frames, their directions and lengths (snap length); count ends the capture by itself; one
 * capture at a time; the capture counters join the daemon's set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "roce_dataplane.h"
#include "roce_dp_capture.h"
#include "roce_pcapfile.h"
#include "roce_test.h"

#define TX_RING 64            /* the port takes 63 frames before it refuses */
#define FRAME 200

static struct rte_ring *rxr, *txr;
static struct rte_mempool *mp;
static uint16_t port_id;
static struct roce_pcap_rec rec;
static struct roce_dp *dp;

/* A frame numbered @n: its bytes say which it is. */
static struct rte_mbuf *
frame(uint32_t n, uint32_t len)
{
	uint8_t data[2048];
	uint32_t i;

	for (i = 0; i < len; i++)
		data[i] = (uint8_t)(n * 7 + i);
	memcpy(data, &n, sizeof(n));
	return rt_mbuf(mp, data, len, 0);
}

static int
tmpfile_fd(char *path, size_t cap)
{
	snprintf(path, cap, "/tmp/test_capture_XXXXXX");
	return mkstemp(path);
}

/* The records of a capture file: numbers (the first 4 bytes), flags, lengths. */
struct rec_info {
	uint32_t n;
	uint32_t flags;
	uint32_t caplen;
	uint32_t origlen;
};

static unsigned int
read_back(const char *path, struct rec_info *out, unsigned int max)
{
	struct roce_pcap pc;
	unsigned int k = 0;
	int ret;

	ret = roce_pcap_open(&pc, path);
	RT_CHECK(ret == 0 && pc.ng, "open %s: %d", path, ret);
	if (ret != 0)
		return 0;
	while ((ret = roce_pcap_next(&pc, &rec)) == 1) {
		if (k < max) {
			memcpy(&out[k].n, rec.data, sizeof(out[k].n));
			out[k].flags = rec.flags;
			out[k].caplen = rec.caplen;
			out[k].origlen = rec.origlen;
		}
		k++;
		RT_CHECK(rec.linktype == ROCE_PCAP_LINKTYPE_ETHERNET, "link type %u", rec.linktype);
	}
	RT_CHECK(ret == 0, "read to the end: %d (%s)", ret, pc.error ? pc.error : "");
	roce_pcap_close(&pc);
	return k;
}

static void
tx_drain(void)
{
	struct rte_mbuf *m[TX_RING];
	unsigned int n;

	while ((n = rte_ring_dequeue_burst(txr, (void **)m, TX_RING, NULL)) != 0)
		rte_pktmbuf_free_bulk(m, n);
}

static void
test_reoffer(void)
{
	struct roce_capture_conf c = { .ports = 1, .dirs = ROCE_CAPTURE_RX | ROCE_CAPTURE_TX };
	struct rte_mbuf *pkts[40], *rx[16];
	struct roce_capture_info info;
	static struct rec_info recs[256];
	char path[64];
	uint16_t sent, got, i;
	unsigned int n, k, tx_frames = 0, offers = 0;
	int fd = tmpfile_fd(path, sizeof(path));

	c.fd = fd;
	RT_CHECK(fd >= 0 && roce_dp_capture_start(dp, &c) == 0, "start");
	close(fd);
	RT_CHECK(roce_dp_capture_start(dp, &c) == -EBUSY, "second capture: EBUSY");
	/* 40 frames, all taken. */
	for (i = 0; i < 40; i++)
		pkts[i] = frame(i, FRAME);
	sent = rte_eth_tx_burst(port_id, 0, pkts, 40);
	offers += 40;
	tx_frames += 40;
	RT_CHECK(sent == 40, "first burst: %u sent", sent);
	/* 40 more: 23 fit, the rest is offered again twice while the port stays full. */
	for (i = 0; i < 40; i++)
		pkts[i] = frame(100 + i, FRAME);
	tx_frames += 40;
	sent = rte_eth_tx_burst(port_id, 0, pkts, 40);
	offers += 40;
	RT_CHECK(sent == 23, "second burst: %u sent", sent);
	n = 40 - sent;
	for (k = 0; k < 2; k++) {
		RT_CHECK(rte_eth_tx_burst(port_id, 0, pkts + sent, (uint16_t)n) == 0,
				"full port took frames");
		offers += n;
	}
	/* The port drains: the refused ones go, and buffers freed are reused for new frames. */
	tx_drain();
	RT_CHECK(rte_eth_tx_burst(port_id, 0, pkts + sent, (uint16_t)n) == n, "re-offer sent");
	offers += n;
	tx_drain();
	for (i = 0; i < 30; i++)
		pkts[i] = frame(200 + i, FRAME);
	tx_frames += 30;
	RT_CHECK(rte_eth_tx_burst(port_id, 0, pkts, 30) == 30, "reused buffers sent");
	offers += 30;
	tx_drain();
	/* Received: 10 frames through the rx ring. */
	for (i = 0; i < 10; i++)
		pkts[i] = frame(300 + i, FRAME);
	RT_CHECK(rte_ring_enqueue_bulk(rxr, (void **)pkts, 10, NULL) == 10, "rx ring");
	got = rte_eth_rx_burst(port_id, 0, rx, 16);
	RT_CHECK(got == 10, "received %u", got);
	rte_pktmbuf_free_bulk(rx, got);

	RT_CHECK(roce_dp_capture_info(dp, &info) == 0 && info.end == ROCE_CAPTURE_RUNNING,
			"running");
	RT_CHECK(roce_dp_capture_stop(dp, &info) == 0 && info.end == ROCE_CAPTURE_STOPPED,
			"stop");
	RT_CHECK(info.cnt[ROCE_CAPTURE_C_SEEN] == tx_frames + 10 &&
			info.cnt[ROCE_CAPTURE_C_TX_REOFFER] == offers - tx_frames &&
			info.cnt[ROCE_CAPTURE_C_WRITTEN] == tx_frames + 10 &&
			info.cnt[ROCE_CAPTURE_C_DROP_RING] == 0 &&
			info.cnt[ROCE_CAPTURE_C_DROP_NOMBUF] == 0,
			"counters: seen %lu (want %u), re-offered %lu (want %u), written %lu",
			(unsigned long)info.cnt[ROCE_CAPTURE_C_SEEN], tx_frames + 10,
			(unsigned long)info.cnt[ROCE_CAPTURE_C_TX_REOFFER], offers - tx_frames,
			(unsigned long)info.cnt[ROCE_CAPTURE_C_WRITTEN]);
	RT_CHECK(roce_dp_capture_stop(dp, NULL) == -ENOENT, "stop again: ENOENT");
	/* The file: each frame once, in order, with its direction and whole length. */
	n = read_back(path, recs, RTE_DIM(recs));
	RT_CHECK(n == tx_frames + 10, "%u records", n);
	for (k = 0; k < n && k < RTE_DIM(recs); k++) {
		uint32_t want = k < 40 ? k : k < 80 ? 100 + (k - 40) : k < 110 ? 200 + (k - 80) :
			300 + (k - 110);
		uint32_t dir = k < 110 ? ROCE_PCAP_DIR_OUT : ROCE_PCAP_DIR_IN;

		RT_CHECK(recs[k].n == want && (recs[k].flags & ROCE_PCAP_DIR_MASK) == dir &&
				recs[k].caplen == FRAME && recs[k].origlen == FRAME,
				"record %u: frame %u flags %x len %u/%u (want frame %u)", k,
				recs[k].n, recs[k].flags, recs[k].caplen, recs[k].origlen, want);
	}
	unlink(path);
}

static void
test_count_snaplen(void)
{
	struct roce_capture_conf c = { .ports = 1, .dirs = ROCE_CAPTURE_TX, .snaplen = 60,
		.count = 5 };
	struct roce_capture_info info;
	static struct rec_info recs[16];
	struct rte_mbuf *pkts[12];
	char path[64], path2[64];
	unsigned int n, k, i;
	int fd = tmpfile_fd(path, sizeof(path));

	c.fd = fd;
	RT_CHECK(fd >= 0 && roce_dp_capture_start(dp, &c) == 0, "start");
	close(fd);
	for (i = 0; i < 12; i++)
		pkts[i] = frame(400 + i, FRAME);
	RT_CHECK(rte_eth_tx_burst(port_id, 0, pkts, 12) == 12, "sent");
	tx_drain();
	/* The writer ends the capture by itself after 5. */
	for (k = 0; k < 2000; k++) {
		if (roce_dp_capture_info(dp, &info) == 0 && info.end != ROCE_CAPTURE_RUNNING)
			break;
		usleep(1000);
	}
	RT_CHECK(info.end == ROCE_CAPTURE_COUNT && info.cnt[ROCE_CAPTURE_C_WRITTEN] == 5,
			"count: state %s, written %lu", roce_capture_end_name(info.end),
			(unsigned long)info.cnt[ROCE_CAPTURE_C_WRITTEN]);
	/* Ended by itself: its file is complete already, and the next start releases it. */
	n = read_back(path, recs, RTE_DIM(recs));
	fd = tmpfile_fd(path2, sizeof(path2));
	c.fd = fd;
	c.count = 0;
	RT_CHECK(fd >= 0 && roce_dp_capture_start(dp, &c) == 0, "start after the count ended one");
	close(fd);
	RT_CHECK(roce_dp_capture_stop(dp, &info) == 0 && info.cnt[ROCE_CAPTURE_C_WRITTEN] == 0,
			"stop");
	unlink(path2);
	RT_CHECK(n == 5, "%u records, want 5", n);
	for (k = 0; k < n && k < RTE_DIM(recs); k++)
		RT_CHECK(recs[k].caplen == 60 && recs[k].origlen == FRAME && recs[k].n == 400 + k,
				"record %u: %u/%u bytes, frame %u", k, recs[k].caplen,
				recs[k].origlen, recs[k].n);
	unlink(path);
}

static void
counter_sink(void *arg, const char *name, const char *description, uint64_t value)
{
	RTE_SET_USED(description);
	if (strcmp(name, "CAPTURE_WRITTEN") == 0)
		*(uint64_t *)arg = value;
}

static void
test_bad_conf(void)
{
	struct roce_capture_conf c = { .fd = 1, .ports = 1, .dirs = ROCE_CAPTURE_RX };
	uint64_t written = UINT64_MAX;

	c.ports = 2;
	RT_CHECK(roce_dp_capture_start(dp, &c) == -EINVAL, "a port the dataplane lacks");
	c.ports = 1;
	c.dirs = 0;
	RT_CHECK(roce_dp_capture_start(dp, &c) == -EINVAL, "no direction");
	c.dirs = ROCE_CAPTURE_RX;
	c.snaplen = ROCE_CAPTURE_SNAPLEN_MAX + 1;
	RT_CHECK(roce_dp_capture_start(dp, &c) == -EINVAL, "snap length");
	c.snaplen = 0;
	c.fd = -1;
	RT_CHECK(roce_dp_capture_start(dp, &c) == -EINVAL, "no file");
	/* Every capture so far, in the daemon's counters: 120 + 5 + 0 frames written. */
	RT_CHECK(roce_dp_counters_emit(dp, 0, 1, 0, counter_sink, &written) == 0 &&
			written == 125, "CAPTURE_WRITTEN %lu", (unsigned long)written);
}

int
main(int argc, char **argv)
{
	struct roce_dp_conf c = { .nb_workers = 1, .nb_ports = 1, .nb_mbufs = 1024,
		.mbuf_data_room = 2048 + RTE_PKTMBUF_HEADROOM, .max_qps = 16, .mtu = 1500 };
	int p;

	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	mp = rt_pool(1024, 2048 + RTE_PKTMBUF_HEADROOM);
	rxr = rte_ring_create("cap_rx", 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	txr = rte_ring_create("cap_tx", TX_RING, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	p = rte_eth_from_rings("net_cap_ring", &rxr, 1, &txr, 1, SOCKET_ID_ANY);
	if (mp == NULL || rxr == NULL || txr == NULL || p < 0) {
		fprintf(stderr, "test_capture: no pool, rings or ring port\n");
		return 2;
	}
	port_id = (uint16_t)p;
	c.port_ids[0] = port_id;
	c.addr[0] = (struct roce_dp_addr){ .ip4 = { 10, 0, 0, 1 }, .prefix4 = 24 };
	/* Not started: the bursts below run on this thread, with the callbacks. */
	dp = roce_dp_create(&c);
	if (dp == NULL) {
		fprintf(stderr, "test_capture: dataplane: %s\n", rte_strerror(rte_errno));
		return 2;
	}
	RT_RUN(test_reoffer);
	RT_RUN(test_count_snaplen);
	RT_RUN(test_bad_conf);
	roce_dp_destroy(dp);
	return rt_report("test_capture");
}
