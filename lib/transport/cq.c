/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "transport_private.h"

struct roce_cq *
roce_cq_create(uint32_t depth, int socket_id)
{
	struct roce_cq *cq;
	uint32_t size;

	if (depth == 0 || depth > (1u << 24)) {
		rte_errno = EINVAL;
		return NULL;
	}
	size = rte_align32pow2(depth);
	cq = rte_zmalloc_socket("roce_cq", sizeof(*cq) + size * sizeof(cq->wc[0]), 0,
			socket_id);
	if (cq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	cq->mask = size - 1;
	return cq;
}

int
roce_cq_destroy(struct roce_cq *cq)
{
	rte_free(cq);
	return 0;
}

/* The armed callback, once. */
void
cq_notify(struct roce_cq *cq)
{
	void (*fn)(void *arg) = cq->notify;

	cq->notify = NULL;
	fn(cq->notify_arg);
}

void
roce_cq_req_notify(struct roce_cq *cq, void (*fn)(void *arg), void *arg)
{
	cq->notify = fn;
	cq->notify_arg = arg;
}

int
roce_cq_poll(struct roce_cq *cq, struct roce_wc *wc, int max)
{
	int n = 0;

	while (n < max && cq->head != cq->tail)
		wc[n++] = cq->wc[cq->head++ & cq->mask];
	return n;
}

uint64_t
roce_cq_overruns(const struct roce_cq *cq)
{
	return cq->overruns;
}
