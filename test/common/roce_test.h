/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_TEST_H
#define ROCE_TEST_H

/*
 * Minimal test harness: a test binary runs its cases with RT_RUN(), checks with RT_CHECK()
 * (which logs and counts a failure but lets the case go on), and ends with rt_report(), whose
 * exit status meson reads.
 */

#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

extern unsigned int rt_checks;
extern unsigned int rt_failures;

#define RT_CHECK(cond, ...) do { \
	rt_checks++; \
	if (!(cond)) { \
		rt_failures++; \
		if (rt_failures <= 50) { \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} \
} while (0)

/* Each case prints its wall time too: it shows where a slow suite spends it. */
#define RT_RUN(fn) do { \
	unsigned int before_ = rt_failures; \
	double t0_ = rt_now(); \
	fn(); \
	printf("%-48s %-6s %8.2f s\n", #fn, rt_failures == before_ ? "ok" : "FAILED", \
			rt_now() - t0_); \
} while (0)

/** Monotonic wall time in seconds. */
double rt_now(void);

/** Start the EAL without hugepages or shared files; also registers the metadata dynfield. */
void rt_eal_init(const char *prog);

/** The same with the lcores of an EAL --lcores argument ("0,1@(0-1)"), for workers. */
void rt_eal_init_lcores(const char *prog, const char *lcores);

/** A pktmbuf pool of @n mbufs with @data_room bytes each (named uniquely). */
struct rte_mempool *rt_pool(unsigned int n, uint16_t data_room);
/* The same with a per-lcore cache of @cache mbufs (roced's worker pools have 256). */
struct rte_mempool *rt_pool_cache(unsigned int n, uint16_t data_room, unsigned int cache);

/**
 * Copy @len bytes into an mbuf chain whose segments hold at most @seg_len bytes each
 * (0: one segment). @return the chain, or NULL when the pool is empty.
 */
struct rte_mbuf *rt_mbuf(struct rte_mempool *mp, const void *data, uint32_t len,
		uint32_t seg_len);

/** Copy the bytes of an mbuf chain out; @return bytes copied (at most @cap). */
uint32_t rt_mbuf_copy(const struct rte_mbuf *m, void *buf, uint32_t cap);

/** Path of a shared capture, from the ROCE_CAPTURES directory (default ../shared/captures). */
const char *rt_captures_dir(void);

/** Print the totals; @return the exit status (0 when every check passed). */
int rt_report(const char *name);

#endif /* ROCE_TEST_H */
