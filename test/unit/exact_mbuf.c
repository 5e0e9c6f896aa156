/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <string.h>

#include "exact_mbuf.h"

static void
exact_free(void *addr, void *opaque)
{
	free(addr);
	free(opaque);
}

/* One mbuf holding @n bytes in a buffer of exactly that size. */
static struct rte_mbuf *
exact_seg(struct rte_mempool *mp, const uint8_t *src, uint32_t n)
{
	struct rte_mbuf_ext_shared_info *sh = malloc(sizeof(*sh));
	uint8_t *buf = malloc(n != 0 ? n : 1);
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

	if (sh == NULL || buf == NULL || m == NULL || n > UINT16_MAX) {
		free(sh);
		free(buf);
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(buf, src, n);
	sh->free_cb = exact_free;
	sh->fcb_opaque = sh;
	rte_mbuf_ext_refcnt_set(sh, 1);
	rte_pktmbuf_attach_extbuf(m, buf, 0, n, sh);
	m->data_len = n;
	m->pkt_len = n;
	return m;
}

struct rte_mbuf *
exact_mbuf(struct rte_mempool *mp, const void *data, uint32_t len, uint32_t seg_len)
{
	const uint8_t *src = data;
	struct rte_mbuf *head = NULL, *tail = NULL;
	uint32_t done = 0;

	if (seg_len == 0)
		seg_len = len != 0 ? len : 1;
	do {
		uint32_t n = RTE_MIN(seg_len, len - done);
		struct rte_mbuf *m = exact_seg(mp, src + done, n);

		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		done += n;
		if (head == NULL) {
			head = tail = m;
			continue;
		}
		tail->next = m;
		tail = m;
		head->nb_segs++;
		head->pkt_len += n;
	} while (done < len);
	return head;
}
