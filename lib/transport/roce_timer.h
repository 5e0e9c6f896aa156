/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_TIMER_H
#define ROCE_TIMER_H

/**
 * @file
 * Hashed timer wheel for one owner lcore, driven by a clock the caller supplies (TSC-derived
 * ns in the daemon, virtual time in tests). Arming, re-arming and cancelling are O(1); a timer
 * further away than one turn of the wheel waits in its slot for later turns.
 */

#include <stdint.h>
#include <sys/queue.h>

struct roce_timer;

/** Timer callback: runs on the owner lcore from roce_timer_wheel_run(). */
typedef void (*roce_timer_cb)(struct roce_timer *t, void *arg);

/** A timer, embedded in its owner's object. */
struct roce_timer {
	uint64_t expire;                 /**< ns */
	roce_timer_cb cb;
	void *arg;
	uint8_t armed;
	uint16_t slot;                   /**< slot it waits in, when armed */
	TAILQ_ENTRY(roce_timer) link;
};

TAILQ_HEAD(roce_timer_list, roce_timer);

/** Number of slots; a power of two. */
#define ROCE_TIMER_SLOTS 4096
/** Slot width in ns (log2): 1024 ns, so one turn is about 4.2 ms. */
#define ROCE_TIMER_SLOT_SHIFT 10

/** A wheel. */
struct roce_timer_wheel {
	uint64_t cursor;                 /**< next tick to run */
	uint32_t nb_armed;
	struct roce_timer_list slot[ROCE_TIMER_SLOTS];
};

/** Initialise a wheel whose clock reads @p now. */
void roce_timer_wheel_init(struct roce_timer_wheel *w, uint64_t now);

/** Initialise a timer (not armed). */
void roce_timer_init(struct roce_timer *t, roce_timer_cb cb, void *arg);

/** Arm (or re-arm) @p t to fire at @p expire ns. */
void roce_timer_arm(struct roce_timer_wheel *w, struct roce_timer *t, uint64_t expire);

/** Disarm @p t; no-op when not armed. */
void roce_timer_cancel(struct roce_timer_wheel *w, struct roce_timer *t);

/**
 * Fire every timer due at @p now.
 *
 * @return
 *   Number of timers fired.
 */
unsigned int roce_timer_wheel_run(struct roce_timer_wheel *w, uint64_t now);

/** @return the earliest expiry of an armed timer (scans the wheel), UINT64_MAX if none. */
uint64_t roce_timer_wheel_next(const struct roce_timer_wheel *w);

#endif /* ROCE_TIMER_H */
