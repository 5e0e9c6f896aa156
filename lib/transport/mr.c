/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "transport_private.h"

/*
 * rkey -> MR, process-wide, as an RNIC's key table. Registration happens on the control path;
 * the daemon publishes changes to workers with RCU, tests register before traffic starts.
 */
struct roce_mr *mr_table[ROCE_MR_TABLE_SIZE];

struct roce_pd *
roce_pd_alloc(int socket_id)
{
	struct roce_pd *pd = rte_zmalloc_socket("roce_pd", sizeof(*pd), 0, socket_id);

	if (pd == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	pd->socket_id = socket_id;
	return pd;
}

int
roce_pd_free(struct roce_pd *pd)
{
	if (pd->nb_mr != 0 || pd->nb_ah != 0)
		return -EBUSY;
	rte_free(pd);
	return 0;
}

/* A free index with a fresh random key byte; index 0 stays unused so key 0 never matches. */
static int
key_pick(uint32_t *key)
{
	uint32_t start = (uint32_t)rte_rand_max(ROCE_MR_TABLE_SIZE - 1) + 1, i;

	for (i = 0; i < ROCE_MR_TABLE_SIZE - 1; i++) {
		uint32_t idx = (start + i) % (ROCE_MR_TABLE_SIZE - 1) + 1;

		if (mr_table[idx] == NULL) {
			*key = idx << 8 | (uint32_t)rte_rand_max(256);
			return 0;
		}
	}
	return -ENOSPC;
}

/*
 * A shard's count reached 0: only its base reference can be the last, and it is never given
 * back (roce_mr_dereg() frees the MR with the counts at 1). Nothing to do.
 */
static void
mr_tx_ref_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
}

struct roce_mr *
roce_mr_reg(struct roce_pd *pd, void *addr, uint64_t length, unsigned int access,
		const struct roce_mr_attr *attr)
{
	const unsigned int known = ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_WRITE |
		ROCE_ACCESS_REMOTE_READ | ROCE_ACCESS_REMOTE_ATOMIC | ROCE_ACCESS_REMOTE_INVALIDATE;
	uint64_t iova = attr != NULL && attr->iova != 0 ? attr->iova : (uintptr_t)addr;
	struct roce_mr *mr;
	unsigned int i;
	uint32_t key;

	/* IBA: remote write or atomic access needs local write. */
	if ((access & ~known) != 0 || (addr == NULL && length != 0) ||
			iova + length < iova ||
			((access & (ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_ATOMIC)) &&
			 !(access & ROCE_ACCESS_LOCAL_WRITE))) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (attr != NULL && attr->rkey != 0) {
		key = attr->rkey;
		if (MR_KEY_INDEX(key) == 0 || MR_KEY_INDEX(key) >= ROCE_MR_TABLE_SIZE) {
			rte_errno = EINVAL;
			return NULL;
		}
		if (mr_table[MR_KEY_INDEX(key)] != NULL) {
			rte_errno = EEXIST;
			return NULL;
		}
	} else if (key_pick(&key) != 0) {
		rte_errno = ENOSPC;
		return NULL;
	}
	mr = rte_zmalloc_socket("roce_mr", sizeof(*mr), RTE_CACHE_LINE_SIZE, pd->socket_id);
	if (mr == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < MR_TX_SHARDS; i++) {
		mr->tx_ref[i].shinfo.free_cb = mr_tx_ref_free;
		mr->tx_ref[i].shinfo.fcb_opaque = mr;
		rte_mbuf_ext_refcnt_set(&mr->tx_ref[i].shinfo, 1);
	}
	mr->tx_dma = attr != NULL && attr->tx_dma;
	mr->tx_iova = attr != NULL ? attr->tx_iova : 0;
	mr->pd = pd;
	mr->addr = addr;
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
	mr->key = key;
	__atomic_store_n(&mr_table[MR_KEY_INDEX(key)], mr, __ATOMIC_RELEASE);
	pd->nb_mr++;
	return mr;
}

void
roce_mr_invalidate(struct roce_mr *mr)
{
	/* Workers load the slot without locks (mr_lookup). */
	if (mr_table[MR_KEY_INDEX(mr->key)] == mr)
		__atomic_store_n(&mr_table[MR_KEY_INDEX(mr->key)], NULL, __ATOMIC_RELEASE);
}

int
mr_invalidate_remote(const struct roce_qp *qp, uint32_t rkey)
{
	struct roce_mr *mr = mr_lookup(rkey);

	if (mr == NULL || mr->pd != qp->pd || !(mr->access & ROCE_ACCESS_REMOTE_INVALIDATE))
		return -EINVAL;
	/*
	 * Only the key goes; the memory stays until the control path deregisters it (which
	 * revokes what workers hold first). A concurrent registration only ever fills an empty
	 * slot, so the exchange fails only if the key went meanwhile.
	 */
	return __atomic_compare_exchange_n(&mr_table[MR_KEY_INDEX(rkey)], &mr, NULL, false,
			__ATOMIC_RELEASE, __ATOMIC_RELAXED) ? 0 : -EINVAL;
}

uint32_t
roce_mr_tx_refs(const struct roce_mr *mr)
{
	uint32_t n = 0;
	unsigned int i;

	/* Acquire: what the PMD read of the memory before freeing its last mbuf is done. */
	for (i = 0; i < MR_TX_SHARDS; i++)
		n += __atomic_load_n(&mr->tx_ref[i].shinfo.refcnt, __ATOMIC_ACQUIRE) - 1u;
	return n;
}

int
roce_mr_dereg(struct roce_mr *mr)
{
	roce_mr_invalidate(mr);
	if (roce_mr_tx_refs(mr) != 0)
		return -EBUSY;
	mr->pd->nb_mr--;
	rte_free(mr);
	return 0;
}

uint32_t
roce_mr_lkey(const struct roce_mr *mr)
{
	return mr->key;
}

uint32_t
roce_mr_rkey(const struct roce_mr *mr)
{
	return mr->key;
}

uint64_t
roce_mr_iova(const struct roce_mr *mr)
{
	return mr->iova;
}

struct roce_mr *
roce_mr_find(uint32_t key)
{
	return mr_lookup(key);
}

void *
roce_mr_addr(const struct roce_mr *mr)
{
	return mr->addr;
}

uint64_t
roce_mr_length(const struct roce_mr *mr)
{
	return mr->length;
}

unsigned int
roce_mr_access(const struct roce_mr *mr)
{
	return mr->access;
}
