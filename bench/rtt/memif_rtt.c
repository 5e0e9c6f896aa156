/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency floor of a DPDK port pair: send one frame, busy-poll until the peer (dpdk-testpmd
 * --forward-mode=macswap) returns it, repeat; print the round-trip percentiles. The baseline
 * bench/pair-lat.sh compares roced's ping-pong latency with.
 *
 * usage: memif_rtt EAL_ARGS -- [ITERATIONS] [FRAME_BYTES]
 */
#include <inttypes.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "roce_hist.h"

static int
port_init(uint16_t port, struct rte_mempool *mp)
{
	struct rte_eth_conf conf = {0};
	int ret;

	if ((ret = rte_eth_dev_configure(port, 1, 1, &conf)) != 0 ||
			(ret = rte_eth_rx_queue_setup(port, 0, 512, rte_socket_id(), NULL, mp)) != 0 ||
			(ret = rte_eth_tx_queue_setup(port, 0, 512, rte_socket_id(), NULL)) != 0)
		return ret;
	return rte_eth_dev_start(port);
}

/* Wait for the link (memif: until the peer has connected); restart the port to connect again
 * when the peer was not ready for our first attempt. */
static int
link_wait(uint16_t port)
{
	struct rte_eth_link link;
	int i;

	for (i = 0; i < 300; i++) {
		rte_eth_link_get_nowait(port, &link);
		if (link.link_status)
			return 0;
		rte_delay_ms(50);
		if (i % 40 == 39 && (rte_eth_dev_stop(port) != 0 || rte_eth_dev_start(port) != 0))
			return -1;
	}
	return -1;
}

int
main(int argc, char **argv)
{
	static struct roce_hist h;
	struct roce_hist_summary s;
	struct rte_mempool *mp;
	uint64_t iters = 100000, len = 64, i, hz, lost = 0;
	int n = rte_eal_init(argc, argv);

	if (n < 0)
		return 1;
	if (argc - n > 1)
		iters = strtoull(argv[n + 1], NULL, 0);
	if (argc - n > 2)
		len = strtoull(argv[n + 2], NULL, 0);
	mp = rte_pktmbuf_pool_create("rtt", 1024, 0, 0, 9216 + RTE_PKTMBUF_HEADROOM,
			rte_socket_id());
	if (mp == NULL || rte_eth_dev_count_avail() < 1 || port_init(0, mp) != 0 ||
			link_wait(0) != 0) {
		fprintf(stderr, "memif_rtt: port 0 did not come up\n");
		return 1;
	}
	hz = rte_get_tsc_hz();
	for (i = 0; i < iters + 1000; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp), *rx;
		struct rte_ether_hdr *eh;
		uint64_t t0, dl;

		if (m == NULL)
			return 1;
		eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, (uint16_t)len);
		memset(eh, 0, len);
		eh->ether_type = rte_cpu_to_be_16(0x88b5);	/* local experimental */
		eh->src_addr.addr_bytes[0] = 0x02;
		memset(eh->dst_addr.addr_bytes, 0xff, 6);
		t0 = rte_rdtsc();
		dl = t0 + hz / 10;
		while (rte_eth_tx_burst(0, 0, &m, 1) == 0)
			;
		while (rte_eth_rx_burst(0, 0, &rx, 1) == 0 && rte_rdtsc() < dl)
			;
		if (rte_rdtsc() >= dl) {
			lost++;
			continue;
		}
		/* The first thousand warm up caches and the peer. */
		if (i >= 1000)
			roce_hist_add(&h, (rte_rdtsc() - t0) * 1000000000ull / hz);
		rte_pktmbuf_free(rx);
	}
	roce_hist_summarize(&h, &s);
	printf("memif_rtt: %" PRIu64 " round trips of %" PRIu64 "-byte frames, %" PRIu64
			" lost: min %.2f median %.2f p99 %.2f p99.9 %.2f max %.2f us\n", s.n, len, lost,
			s.min / 1e3, s.median / 1e3, s.p99 / 1e3, s.p999 / 1e3, s.max / 1e3);
	rte_eth_dev_stop(0);
	rte_eal_cleanup();
	return 0;
}
