/* SPDX-License-Identifier: BSD-3-Clause */
#include <stddef.h>
#include <stdint.h>

#include "roce_timer.h"

#define SLOT_MASK (ROCE_TIMER_SLOTS - 1)

static inline uint64_t
tick_of(uint64_t ns)
{
	return ns >> ROCE_TIMER_SLOT_SHIFT;
}

void
roce_timer_wheel_init(struct roce_timer_wheel *w, uint64_t now)
{
	unsigned int i;

	w->cursor = tick_of(now);
	w->nb_armed = 0;
	for (i = 0; i < ROCE_TIMER_SLOTS; i++)
		TAILQ_INIT(&w->slot[i]);
}

void
roce_timer_init(struct roce_timer *t, roce_timer_cb cb, void *arg)
{
	t->cb = cb;
	t->arg = arg;
	t->armed = 0;
	t->expire = 0;
}

void
roce_timer_arm(struct roce_timer_wheel *w, struct roce_timer *t, uint64_t expire)
{
	uint64_t tick = tick_of(expire);

	roce_timer_cancel(w, t);
	/* A timer already due goes in the next slot to run. */
	if (tick < w->cursor)
		tick = w->cursor;
	t->expire = expire;
	t->armed = 1;
	t->slot = tick & SLOT_MASK;
	TAILQ_INSERT_TAIL(&w->slot[t->slot], t, link);
	w->nb_armed++;
}

void
roce_timer_cancel(struct roce_timer_wheel *w, struct roce_timer *t)
{
	if (!t->armed)
		return;
	TAILQ_REMOVE(&w->slot[t->slot], t, link);
	t->armed = 0;
	w->nb_armed--;
}

/* Fire the due timers of one slot; later turns' timers stay. */
static unsigned int
run_slot(struct roce_timer_wheel *w, struct roce_timer_list *list, uint64_t now)
{
	struct roce_timer *t, *next;
	unsigned int fired = 0;

	for (t = TAILQ_FIRST(list); t != NULL; t = next) {
		next = TAILQ_NEXT(t, link);
		if (t->expire > now)
			continue;
		TAILQ_REMOVE(list, t, link);
		t->armed = 0;
		w->nb_armed--;
		t->cb(t, t->arg);
		fired++;
		/* The callback may have re-armed or cancelled anything: restart the slot. */
		next = TAILQ_FIRST(list);
	}
	return fired;
}

unsigned int
roce_timer_wheel_run(struct roce_timer_wheel *w, uint64_t now)
{
	uint64_t end = tick_of(now), tick;
	unsigned int fired = 0;

	if (w->nb_armed == 0) {
		if (end > w->cursor)
			w->cursor = end;
		return 0;
	}
	/* After a long gap one pass over every slot is enough. */
	tick = end >= w->cursor + ROCE_TIMER_SLOTS ? end - ROCE_TIMER_SLOTS + 1 : w->cursor;
	for (; tick <= end; tick++) {
		/* Timers a callback arms for "now" land in the next slot, not this one. */
		w->cursor = tick + 1;
		fired += run_slot(w, &w->slot[tick & SLOT_MASK], now);
	}
	/*
	 * The current slot may still hold timers due later in it, and timers armed for it from
	 * now on go there: the next run scans it again (moving past it would leave them a whole
	 * turn late).
	 */
	w->cursor = end;
	return fired;
}

uint64_t
roce_timer_wheel_next(const struct roce_timer_wheel *w)
{
	uint64_t best = UINT64_MAX;
	const struct roce_timer *t;
	unsigned int i;

	if (w->nb_armed == 0)
		return UINT64_MAX;
	for (i = 0; i < ROCE_TIMER_SLOTS; i++)
		TAILQ_FOREACH(t, &w->slot[i], link)
			if (t->expire < best)
				best = t->expire;
	return best;
}
