/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_lcore.h>

#include "roce_pkt.h"
#include "roce_test.h"

unsigned int rt_checks;
unsigned int rt_failures;

double
rt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void
rt_eal_init(const char *prog)
{
	rt_eal_init_lcores(prog, "0");
}

void
rt_eal_init_lcores(const char *prog, const char *lcores)
{
	char *argv[] = {
		(char *)(uintptr_t)prog, "--lcores", (char *)(uintptr_t)lcores, "--no-huge",
		"--no-shconf", "--no-pci",
		"-m", "512", "--force-max-simd-bitwidth=512",
		"--log-level", "lib.eal:error", "--log-level", "lib.telemetry:error",
	};

	if (rte_eal_init(RTE_DIM(argv), argv) < 0) {
		fprintf(stderr, "%s: cannot start the EAL\n", prog);
		exit(2);
	}
	if (roce_pkt_meta_register() != 0) {
		fprintf(stderr, "%s: cannot register the metadata dynfield\n", prog);
		exit(2);
	}
}

struct rte_mempool *
rt_pool(unsigned int n, uint16_t data_room)
{
	return rt_pool_cache(n, data_room, 0);
}

struct rte_mempool *
rt_pool_cache(unsigned int n, uint16_t data_room, unsigned int cache)
{
	static unsigned int seq;
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *mp;

	snprintf(name, sizeof(name), "rt_pool_%u", seq++);
	mp = rte_pktmbuf_pool_create(name, n, cache, 0, data_room + RTE_PKTMBUF_HEADROOM,
			SOCKET_ID_ANY);
	if (mp == NULL) {
		fprintf(stderr, "cannot create mbuf pool %s\n", name);
		exit(2);
	}
	return mp;
}

struct rte_mbuf *
rt_mbuf(struct rte_mempool *mp, const void *data, uint32_t len, uint32_t seg_len)
{
	const uint8_t *src = data;
	struct rte_mbuf *head = NULL, *tail = NULL;
	uint32_t done = 0;

	if (seg_len == 0)
		seg_len = len;
	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t n = RTE_MIN(seg_len, len - done);

		if (m == NULL || n > rte_pktmbuf_tailroom(m)) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			return NULL;
		}
		memcpy(rte_pktmbuf_append(m, n), src + done, n);
		done += n;
		if (head == NULL) {
			head = tail = m;
		} else {
			tail->next = m;
			tail = m;
			head->nb_segs++;
			head->pkt_len += n;
		}
	} while (done < len);
	return head;
}

uint32_t
rt_mbuf_copy(const struct rte_mbuf *m, void *buf, uint32_t cap)
{
	uint32_t n = RTE_MIN(cap, m->pkt_len);

	if (n != 0 && rte_pktmbuf_read(m, 0, n, buf) != buf)
		memcpy(buf, rte_pktmbuf_read(m, 0, n, buf), n);
	return n;
}

const char *
rt_captures_dir(void)
{
	const char *d = getenv("ROCE_CAPTURES");

	return d != NULL ? d : "../shared/captures";
}

int
rt_report(const char *name)
{
	printf("%s: %u checks, %u failed\n", name, rt_checks, rt_failures);
	return rt_failures == 0 ? 0 : 1;
}
