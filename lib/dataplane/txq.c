/* SPDX-License-Identifier: BSD-3-Clause */
/* The transmit object of a (port, queue): see roce_txq.h. */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>

#include "roce_dataplane.h"
#include "roce_impair.h"
#include "roce_txq.h"

void
roce_txq_init(struct roce_txq *q, uint16_t port_id, uint16_t queue_id, struct rte_ring *ring,
		const uint8_t *paused, uint64_t *cnt)
{
	memset(q, 0, sizeof(*q));
	q->port_id = port_id;
	q->queue_id = queue_id;
	q->ring = ring;
	q->paused = paused;
	q->cnt = cnt;
}

void
roce_txq_fini(struct roce_txq *q)
{
	rte_pktmbuf_free_bulk(q->pend, q->nb_pend);
	q->nb_pend = 0;
}

int
roce_txq_set_impair(struct roce_txq *q, struct roce_impair *im)
{
	if (q->im == im)
		return 0;
	if (q->ring != NULL || q->im != NULL || im == NULL)
		return -EINVAL;
	q->im = im;
	return 0;
}

/* Put a burst on the queue or the owner's ring; @return how many it took, counted. */
static uint16_t
xmit(struct roce_txq *q, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent, i;

	if (unlikely(q->paused != NULL &&
			__atomic_load_n(q->paused, __ATOMIC_ACQUIRE) != 0))
		return 0;
	if (q->ring != NULL) {
		sent = (uint16_t)rte_ring_enqueue_burst(q->ring, (void **)pkts, n, NULL);
		q->cnt[ROCE_DP_TX_HANDOFF] += sent;
		return sent;
	}
	sent = rte_eth_tx_burst(q->port_id, q->queue_id, pkts, n);
	for (i = 0; i < sent; i++)
		q->cnt[ROCE_DP_PORT_TX_BYTES] += pkts[i]->pkt_len;
	q->cnt[ROCE_DP_PORT_TX_PKTS] += sent;
	return sent;
}

/* Send the pending frames; @return how many went. What the queue refuses stays, in order. */
static uint16_t
pend_out(struct roce_txq *q)
{
	uint16_t sent = xmit(q, q->pend, q->nb_pend);

	q->nb_pend -= sent;
	if (q->nb_pend != 0)
		memmove(q->pend, q->pend + sent, q->nb_pend * sizeof(q->pend[0]));
	return sent;
}

unsigned int
roce_txq_flush(struct roce_txq *q, uint64_t now)
{
	unsigned int total = 0;

	for (;;) {
		if (q->nb_pend == 0) {
			if (q->im == NULL)
				break;
			q->nb_pend = roce_impair_tx_poll(q->im, q->queue_id, q->pend,
					ROCE_TXQ_BURST, now);
			if (q->nb_pend == 0)
				break;
		}
		total += pend_out(q);
		if (q->nb_pend != 0)
			break;
	}
	return total;
}

unsigned int
roce_txq_send(struct roce_txq *q, struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	RTE_ASSERT(q->nb_pend == 0 && n <= ROCE_TXQ_BURST);
	if (unlikely(q->im != NULL)) {
		/* Judged once here, held until due; none is lost to a full queue either. */
		roce_impair_tx_prepare(q->im, q->queue_id, pkts, n, 0, now);
		return roce_txq_flush(q, now);
	}
	memcpy(q->pend, pkts, n * sizeof(pkts[0]));
	q->nb_pend = n;
	return pend_out(q);
}

void
roce_txq_send_or_drop(struct roce_txq *q, struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	uint16_t sent;

	if (unlikely(q->im != NULL)) {
		roce_impair_tx_prepare(q->im, q->queue_id, pkts, n, 0, now);
		return;
	}
	sent = xmit(q, pkts, n);
	if (sent < n) {
		q->cnt[ROCE_DP_PORT_TX_DROP] += n - sent;
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	}
}

bool
roce_txq_held(const struct roce_txq *q)
{
	return q->nb_pend != 0 || (q->im != NULL && roce_impair_tx_held(q->im, q->queue_id) != 0);
}
