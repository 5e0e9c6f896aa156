/* SPDX-License-Identifier: BSD-3-Clause */
/* The transmit object of a (port, queue): see roce_txq.h. */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "roce_dataplane.h"
#include "roce_dp_pfc.h"
#include "roce_impair.h"
#include "roce_txq.h"

#define HOLD_NONE UINT16_MAX

_Static_assert(ROCE_TXQ_HOLD < HOLD_NONE, "hold slots fit 16 bits");

/* Frames of paused priorities: one FIFO per priority, lists through one slot array. */
struct roce_txq_hold {
	uint16_t head[ROCE_PFC_NB_PRIO];
	uint16_t tail[ROCE_PFC_NB_PRIO];
	uint16_t free_head;
	uint16_t nb_free;
	struct {
		struct rte_mbuf *m;
		uint16_t next;
	} slot[ROCE_TXQ_HOLD];
};

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

static struct rte_mbuf *
hold_pop(struct roce_txq_hold *h, unsigned int p)
{
	uint16_t i = h->head[p];
	struct rte_mbuf *m = h->slot[i].m;

	h->head[p] = h->slot[i].next;
	if (h->head[p] == HOLD_NONE)
		h->tail[p] = HOLD_NONE;
	h->slot[i].next = h->free_head;
	h->free_head = i;
	h->nb_free++;
	return m;
}

static void
hold_push(struct roce_txq_hold *h, unsigned int p, struct rte_mbuf *m)
{
	uint16_t i = h->free_head;

	h->free_head = h->slot[i].next;
	h->nb_free--;
	h->slot[i].m = m;
	h->slot[i].next = HOLD_NONE;
	if (h->tail[p] == HOLD_NONE)
		h->head[p] = i;
	else
		h->slot[h->tail[p]].next = i;
	h->tail[p] = i;
}

void
roce_txq_fini(struct roce_txq *q)
{
	unsigned int p;

	rte_pktmbuf_free_bulk(q->pend, q->nb_pend);
	q->nb_pend = 0;
	if (q->hold != NULL) {
		for (p = 0; p < ROCE_PFC_NB_PRIO; p++)
			while (q->hold->head[p] != HOLD_NONE)
				rte_pktmbuf_free(hold_pop(q->hold, p));
		rte_free(q->hold);
		q->hold = NULL;
	}
	q->held = 0;
	q->hold_full = 0;
	q->pfc = NULL;
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

int
roce_txq_set_pfc(struct roce_txq *q, struct roce_dp_pfc *pfc, int socket)
{
	struct roce_txq_hold *h;
	unsigned int i;

	if (q->ring != NULL || pfc == NULL || q->pfc != NULL)
		return -EINVAL;
	h = rte_malloc_socket("roce_txq_hold", sizeof(*h), RTE_CACHE_LINE_SIZE, socket);
	if (h == NULL)
		return -ENOMEM;
	for (i = 0; i < ROCE_PFC_NB_PRIO; i++)
		h->head[i] = h->tail[i] = HOLD_NONE;
	for (i = 0; i < ROCE_TXQ_HOLD; i++)
		h->slot[i].next = (uint16_t)(i + 1 < ROCE_TXQ_HOLD ? i + 1 : HOLD_NONE);
	h->free_head = 0;
	h->nb_free = ROCE_TXQ_HOLD;
	q->hold = h;
	q->pfc = pfc;
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

/* ---- PFC: the hold of paused priorities ---- */

/*
 * Frames of the priorities that must wait go to the hold: those paused now, and those with
 * frames held already (they keep their order). Frames that must not be lost always find room
 * (the object is not ready while fewer than a burst's slots are free); frames that may be
 * lost take a slot only beyond that reserve, else they are dropped. @return the frames left
 * in @p pkts, in order, to send now.
 */
static uint16_t
hold_in(struct roce_txq *q, struct rte_mbuf **pkts, uint16_t n, uint8_t stop, int lossy)
{
	struct roce_txq_hold *h = q->hold;
	uint16_t i, k = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		unsigned int p = roce_pfc_prio_of(rte_pktmbuf_mtod(m, const uint8_t *),
				m->data_len, q->pfc->dscp2prio);

		if (!(stop & (1u << p))) {
			pkts[k++] = m;
		} else if (!lossy || h->nb_free > ROCE_TXQ_BURST) {
			hold_push(h, p, m);
			q->held |= (uint8_t)(1u << p);
			q->cnt[ROCE_DP_PFC_HELD]++;
		} else {
			q->cnt[ROCE_DP_PORT_TX_DROP]++;
			rte_pktmbuf_free(m);
		}
	}
	if (h->nb_free < ROCE_TXQ_BURST && !q->hold_full) {
		/* Every priority waits now: head-of-line blocking past the paused one. */
		q->hold_full = 1;
		q->cnt[ROCE_DP_PFC_HOLD_FULL]++;
	}
	return k;
}

/* Priorities whose frames wait here, or must: paused now, or with frames held. */
static inline uint8_t
hold_stop(const struct roce_txq *q, uint64_t now)
{
	return q->pfc != NULL ? (uint8_t)(roce_dp_pfc_paused(q->pfc, now) | q->held) : 0;
}

/* Up to a burst of held frames of the priorities no longer paused, oldest first per priority,
 * into @p out. @return how many. */
static uint16_t
hold_out(struct roce_txq *q, struct rte_mbuf **out, uint64_t now)
{
	struct roce_txq_hold *h = q->hold;
	uint8_t go = q->held & (uint8_t)~roce_dp_pfc_paused(q->pfc, now);
	uint16_t n = 0;
	unsigned int p;

	for (p = 0; go != 0 && p < ROCE_PFC_NB_PRIO; p++) {
		if (!(go & (1u << p)))
			continue;
		while (n < ROCE_TXQ_BURST && h->head[p] != HOLD_NONE)
			out[n++] = hold_pop(h, p);
		if (h->head[p] == HOLD_NONE)
			q->held &= (uint8_t)~(1u << p);
		if (n == ROCE_TXQ_BURST)
			break;
	}
	if (q->hold_full && h->nb_free >= ROCE_TXQ_BURST)
		q->hold_full = 0;
	return n;
}

/*
 * PFC frames of the port's impairment: an rx bottleneck's go to the peer, first and at once
 * (a full queue loses one: the bottleneck refreshes its pauses); a tx bottleneck's pause our
 * own transmit: they go to the port's PFC receive path, as if the peer had sent them.
 */
static void
ctrl_out(struct roce_txq *q, uint64_t now)
{
	struct rte_mbuf *f[ROCE_IMPAIR_CTRL_MAX];
	uint16_t n, sent, i;

	n = roce_impair_ctrl(q->im, ROCE_IMPAIR_RX, q->queue_id, f, RTE_DIM(f));
	if (n != 0) {
		sent = rte_eth_tx_burst(q->port_id, q->queue_id, f, n);
		for (i = 0; i < sent; i++)
			q->cnt[ROCE_DP_PORT_TX_BYTES] += f[i]->pkt_len;
		q->cnt[ROCE_DP_PORT_TX_PKTS] += sent;
		q->cnt[ROCE_DP_PFC_TX] += sent;
		if (sent < n) {
			q->cnt[ROCE_DP_PORT_TX_DROP] += n - sent;
			rte_pktmbuf_free_bulk(f + sent, n - sent);
		}
	}
	n = roce_impair_ctrl(q->im, ROCE_IMPAIR_TX, q->queue_id, f, RTE_DIM(f));
	for (i = 0; i < n; i++) {
		if (q->pfc != NULL)
			roce_dp_pfc_input(q->pfc, f[i], now);
		else
			q->cnt[ROCE_DP_PORT_TX_DROP]++;
		rte_pktmbuf_free(f[i]);
	}
}

/* ---- sending ---- */

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

/* Frames released from the hold: through the tx stage (judged now), or into the pending
 * buffer (empty). @return whether the pending buffer has frames. */
static int
released(struct roce_txq *q, uint64_t now)
{
	struct rte_mbuf *pkts[ROCE_TXQ_BURST];
	uint16_t n = hold_out(q, pkts, now);

	if (n == 0)
		return 0;
	if (q->im_tx) {
		roce_impair_tx_prepare(q->im, q->queue_id, pkts, n, 0, now);
		return 0;
	}
	memcpy(q->pend, pkts, n * sizeof(pkts[0]));
	q->nb_pend = n;
	return 1;
}

unsigned int
roce_txq_flush(struct roce_txq *q, uint64_t now)
{
	unsigned int total = 0;

	if (unlikely(q->im != NULL) && !(q->paused != NULL &&
			__atomic_load_n(q->paused, __ATOMIC_ACQUIRE) != 0))
		ctrl_out(q, now);
	for (;;) {
		if (q->nb_pend == 0) {
			if (unlikely(q->held != 0) && released(q, now)) {
				total += pend_out(q);
				if (q->nb_pend != 0)
					break;
				continue;
			}
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
	uint8_t stop;

	RTE_ASSERT(q->nb_pend == 0 && !q->hold_full && n <= ROCE_TXQ_BURST);
	if (unlikely((stop = hold_stop(q, now)) != 0)) {
		n = hold_in(q, pkts, n, stop, 0);
		if (n == 0)
			return 0;
	}
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
	uint8_t stop;

	if (unlikely((stop = hold_stop(q, now)) != 0)) {
		n = hold_in(q, pkts, n, stop, 1);
		if (n == 0)
			return;
	}
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
	return q->nb_pend != 0 || q->held != 0 ||
		(q->im_tx && roce_impair_tx_held(q->im, q->queue_id) != 0);
}

unsigned int
roce_txq_nb_held(const struct roce_txq *q, unsigned int prio)
{
	const struct roce_txq_hold *h = q->hold;
	unsigned int n = 0;
	uint16_t i;

	if (h == NULL || prio >= ROCE_PFC_NB_PRIO)
		return 0;
	for (i = h->head[prio]; i != HOLD_NONE; i = h->slot[i].next)
		n++;
	return n;
}
