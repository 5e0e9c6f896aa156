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
	if (q->ring != NULL || (q->im != NULL && q->im != im) || im == NULL)
		return -EINVAL;
	q->im = im;
	q->im_tx = (uint8_t)roce_impair_has_tx(im);
	return 0;
}

/*
 * PFC frames of the port's impairment: an rx bottleneck's go to the peer, first and at once
 * (a full queue loses one: the bottleneck refreshes its pauses); a tx bottleneck's pause our
 * own transmit (not honoured yet: dropped, counted as PORT_TX_DROP).
 */
static void
ctrl_out(struct roce_txq *q)
{
	struct rte_mbuf *f[ROCE_IMPAIR_CTRL_MAX];
	uint16_t n, sent, i;

	n = roce_impair_ctrl(q->im, ROCE_IMPAIR_RX, q->queue_id, f, RTE_DIM(f));
	if (n != 0) {
		sent = rte_eth_tx_burst(q->port_id, q->queue_id, f, n);
		for (i = 0; i < sent; i++)
			q->cnt[ROCE_DP_PORT_TX_BYTES] += f[i]->pkt_len;
		q->cnt[ROCE_DP_PORT_TX_PKTS] += sent;
		if (sent < n) {
			q->cnt[ROCE_DP_PORT_TX_DROP] += n - sent;
			rte_pktmbuf_free_bulk(f + sent, n - sent);
		}
	}
	n = roce_impair_ctrl(q->im, ROCE_IMPAIR_TX, q->queue_id, f, RTE_DIM(f));
	if (n != 0) {
		q->cnt[ROCE_DP_PORT_TX_DROP] += n;
		rte_pktmbuf_free_bulk(f, n);
	}
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

	if (unlikely(q->im != NULL) && !(q->paused != NULL &&
			__atomic_load_n(q->paused, __ATOMIC_ACQUIRE) != 0))
		ctrl_out(q);
	for (;;) {
		if (q->nb_pend == 0) {
			if (!q->im_tx)
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
	if (unlikely(q->im_tx)) {
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

	if (unlikely(q->im_tx)) {
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
	return q->nb_pend != 0 || (q->im_tx && roce_impair_tx_held(q->im, q->queue_id) != 0);
}
