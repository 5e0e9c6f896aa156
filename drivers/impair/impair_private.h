/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_IMPAIR_PRIVATE_H
#define ROCE_IMPAIR_PRIVATE_H

#include <rte_log.h>

#include "roce_impair.h"

extern int roce_impair_logtype;
#define ROCE_LOG(level, ...) \
	rte_log(RTE_LOG_##level, roce_impair_logtype, "impair: " __VA_ARGS__)

/* One PRNG stream per impairment, so that enabling one does not shift another's draws. */
enum impair_stream {
	S_LOSS, S_GE, S_ECN, S_DUP, S_REORDER, S_JITTER, S_NUM
};

/* An immutable configuration, derived from a spec for one clock rate. */
struct impair_cfg {
	struct roce_impair_spec spec;
	uint64_t gen;                 /* new for every publication: the queues reseed */
	uint64_t hz;
	uint64_t delay_cyc;
	uint64_t jitter_cyc;
	uint64_t reorder_timeout_cyc;
	double rate_bpc;              /* bytes per clock tick */
	double burst;                 /* bytes */
	struct impair_cfg *retired;   /* next one whose grace period did not end (kept) */
};

struct impair_held {
	struct rte_mbuf *m;
	uint64_t deadline;
	uint16_t left;                /* later packets still to go out before this one */
};

struct impair_slot {
	struct rte_mbuf *m;
	uint64_t due;
};

/* One queue in one direction; only the lcore polling the queue touches it. */
struct roce_impair_stage {
	const struct impair_cfg *own;  /* standalone stages own their configuration */
	uint64_t gen;                  /* of the configuration the PRNGs were seeded for */
	uint16_t queue;
	uint8_t dir;
	uint64_t rng[S_NUM];
	uint8_t ge_bad;
	double tokens;
	uint64_t last_refill;
	uint64_t last_due;
	struct impair_held held[ROCE_IMPAIR_MAX_DEPTH];
	uint16_t held_head;
	uint16_t nb_held;
	uint32_t line_head;            /* free-running; index & (LINE_SIZE - 1) */
	uint32_t line_tail;
	uint64_t cnt[ROCE_IMPAIR_CNT_NUM];
	struct impair_slot line[ROCE_IMPAIR_LINE_SIZE];
};

/* Build the derived configuration; NULL with rte_errno on failure. */
struct impair_cfg *impair_cfg_new(const struct roce_impair_spec *spec, uint64_t hz, uint64_t gen);

/* Initialise a stage's state (not its counters) for @cfg. */
void impair_stage_reset(struct roce_impair_stage *st, const struct impair_cfg *cfg,
		uint64_t now);

/*
 * One burst through a stage (rx callbacks, tx stages, standalone stages): judge @n packets,
 * then put up to @max due ones in @pkts; @return how many. @cfg NULL: pass through,
 * releasing what is held.
 */
uint16_t impair_burst(struct roce_impair_stage *st, const struct impair_cfg *cfg,
		struct rte_mbuf **pkts, uint16_t n, uint16_t max, uint64_t now);

/* @return packets held in the stage (reorder and delay line). */
static inline unsigned int
impair_stage_held(const struct roce_impair_stage *st)
{
	return st->nb_held + (st->line_tail - st->line_head);
}

/* Allocate a zeroed stage for a queue; NULL on failure. */
struct roce_impair_stage *impair_stage_alloc(enum roce_impair_dir dir, uint16_t queue,
		int socket);

#endif /* ROCE_IMPAIR_PRIVATE_H */
