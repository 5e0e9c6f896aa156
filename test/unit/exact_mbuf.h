/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EXACT_MBUF_H
#define EXACT_MBUF_H

/*
 * Mbuf chains whose segments live in their own malloc()ed buffers of exactly the segment's
 * length, attached as external buffers: under ASan, any read past a segment's data is caught,
 * which a roomy mempool buffer would hide.
 */

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

/**
 * Copy @p len bytes into a chain of segments of at most @p seg_len bytes (0: one segment),
 * each in an exact-size buffer. The mbufs come from @p mp (any data room); free the chain with
 * rte_pktmbuf_free(). @return the chain, or NULL when out of memory.
 */
struct rte_mbuf *exact_mbuf(struct rte_mempool *mp, const void *data, uint32_t len,
		uint32_t seg_len);

#endif /* EXACT_MBUF_H */
