/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_TXQ_H
#define ROCE_TXQ_H

/**
 * @file
 * The transmit object of one (port, queue) a worker sends on: one pending buffer, the
 * optional tx impairment stage, the backpressure policy and its counters.
 *
 * A worker with a queue of its own on the port sends with rte_eth_tx_burst(); one without
 * hands its frames to the ring of the worker owning the queue, whose transmit object then
 * takes them like its own. Two policies: frames that must not be lost (RoCE) wait in the
 * pending buffer when the queue (or ring) refuses them, and the caller stops feeding until
 * roce_txq_ready(); frames that may be lost (ARP, ND, ICMP: the peer asks again) go at once
 * or are dropped and counted. With an impairment stage every frame is judged once on the way
 * in and held there until due; what the queue then refuses waits, judged already.
 *
 * PFC (roce_txq_set_pfc()): while a priority of the port is paused (roce_dp_pfc.h), its frames
 * (by VLAN PCP, else DSCP through the port's map, else priority 0) wait in a hold of their
 * own, one FIFO per priority, and the other priorities go on; they leave, in order and ahead
 * of newer frames of their priority, once the pause ends. The hold takes ROCE_TXQ_HOLD frames
 * in all: with fewer than a burst's room left the object stops taking frames that must not be
 * lost (roce_txq_ready() is false) until a pause ends, so every priority waits then
 * (PFC_HOLD_FULL counts it); frames that may be lost are dropped instead.
 *
 * One lcore owns a transmit object; nothing here takes a lock.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

/** Frames the pending buffer holds: the most a caller puts at once. */
#define ROCE_TXQ_BURST 32
/** Frames the PFC hold keeps, every priority together. */
#define ROCE_TXQ_HOLD 4096

struct roce_impair;
struct roce_dp_pfc;
struct roce_txq_hold;

/** A transmit object. Fields are the library's; use the functions. */
struct roce_txq {
	uint16_t port_id;              /**< ethdev port */
	uint16_t queue_id;             /**< its tx queue (ours, or the ring owner's) */
	struct rte_ring *ring;         /**< non-NULL: the queue is another worker's */
	const uint8_t *paused;         /**< non-zero: the port is being restarted, wait */
	struct roce_impair *im;        /**< impairment handle of the port (own queue only), or NULL */
	uint8_t im_tx;                 /**< its tx stages exist: frames go through them */
	uint8_t held;                  /**< priorities with frames in the PFC hold */
	uint8_t hold_full;             /**< the hold has no room for a burst: not ready */
	struct roce_dp_pfc *pfc;       /**< the port's pauses, honoured here (own queue), or NULL */
	struct roce_txq_hold *hold;    /**< frames of paused priorities */
	uint64_t *cnt;                 /**< counters, by enum roce_dp_counter */
	uint16_t nb_pend;
	struct rte_mbuf *pend[ROCE_TXQ_BURST];
};

/**
 * Set up @p q for queue @p queue_id of ethdev @p port_id, or, with @p ring, for frames handed
 * to the worker that owns that queue. @p paused (may be NULL) is read before every send;
 * @p cnt receives PORT_TX_PKTS, PORT_TX_BYTES, PORT_TX_DROP, TX_HANDOFF and the PFC_* ones.
 */
void roce_txq_init(struct roce_txq *q, uint16_t port_id, uint16_t queue_id,
		struct rte_ring *ring, const uint8_t *paused, uint64_t *cnt);

/**
 * Free the frames still pending and held for PFC (not those the impairment stage holds: they
 * are its), and the hold.
 */
void roce_txq_fini(struct roce_txq *q);

/**
 * Honour the pauses of @p pfc (the port's) from now on: frames of a paused priority wait in a
 * hold allocated here on @p socket. Only an object with a queue of its own (the owner of a
 * ring honours what it sends for the others).
 *
 * @return
 *   0, -EINVAL (a ring, no @p pfc, or set already), -ENOMEM.
 */
int roce_txq_set_pfc(struct roce_txq *q, struct roce_dp_pfc *pfc, int socket);

/**
 * Use the impairment handle @p im of the port from now on: send through its tx stage of this
 * queue once tx is impaired (roce_impair_tx_prepare()), and send the PFC frames the rx
 * bottleneck of the same queue makes (roce_impair_ctrl()) straight to the port, before
 * anything else, as a MAC sends control frames. Call again after tx was first impaired.
 *
 * @return
 *   0, -EINVAL when @p q hands its frames to a ring (the owner's object impairs them) or has
 *   another handle already; setting the same one again only looks whether tx is impaired.
 */
int roce_txq_set_impair(struct roce_txq *q, struct roce_impair *im);

/** @return true when @p q takes a burst of up to ROCE_TXQ_BURST frames that must not be lost. */
static inline bool
roce_txq_ready(const struct roce_txq *q)
{
	return q->nb_pend == 0 && !q->hold_full;
}

/**
 * Take @p n frames that must not be lost (at most ROCE_TXQ_BURST; @p q must be ready) and
 * send what the queue takes now; the rest waits for roce_txq_flush().
 *
 * @return
 *   Frames sent (to the port, or handed to the owner's ring).
 */
unsigned int roce_txq_send(struct roce_txq *q, struct rte_mbuf **pkts, uint16_t n,
		uint64_t now);

/**
 * Send @p n frames that may be lost: through the impairment stage if there is one, else
 * straight to the queue; what it refuses is freed and counted as PORT_TX_DROP.
 */
void roce_txq_send_or_drop(struct roce_txq *q, struct rte_mbuf **pkts, uint16_t n,
		uint64_t now);

/**
 * Send what waits: the impairment's PFC frames, the pending frames, the held frames of
 * priorities no longer paused, then what the impairment stage has due.
 *
 * @return
 *   Frames sent.
 */
unsigned int roce_txq_flush(struct roce_txq *q, uint64_t now);

/**
 * @return true while frames wait here (pending, or held for PFC) or in the impairment stage:
 *   an owner that sleeps when idle must not sleep past them.
 */
bool roce_txq_held(const struct roce_txq *q);

/** @return frames of priority @p prio in the PFC hold (a walk of its FIFO: for tests). */
unsigned int roce_txq_nb_held(const struct roce_txq *q, unsigned int prio);

#endif /* ROCE_TXQ_H */
