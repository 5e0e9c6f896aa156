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
	S_LOSS, S_GE, S_ECN, S_DUP, S_REORDER, S_JITTER, S_RED, S_NUM
};

#define BNECK_NB_PRIO 8
#define BNECK_NONE UINT16_MAX          /* end of a slot list */
/* DRR quantum: above any frame, so a priority sends at least one frame per turn. */
#define BNECK_QUANTUM 16384
/* Depth histogram: exact below 128 bytes, then 64 steps per power of two up to 2^28. */
#define QHIST_SUB 64
#define QHIST_NB (QHIST_SUB * 23)

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
	double bneck_cpb;             /* bottleneck: clock ticks per byte on the wire */
	uint64_t pfc_refresh_cyc;     /* refresh pauses this often while above XON */
	uint64_t link_mbps;           /* PFC pause times are reckoned at this speed */
	double arrival_ns_per_cyc;    /* rx: stamp arrival times (ns per tick), 0: do not */
	uint8_t mac[6];               /* source of the PFC frames */
	uint8_t dscp2prio[64];        /* priority of untagged IP frames */
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

struct bneck_slot {
	struct rte_mbuf *m;
	uint16_t next;
	uint8_t prio;
};

/*
 * The bottleneck: per-priority FIFOs as lists through one slot array, served by DRR. The
 * head of priority @serving is on the wire until @dep; it stays counted in the depth until
 * then. Depths in bytes (pkt_len).
 */
struct impair_bneck {
	uint32_t depth[BNECK_NB_PRIO];
	uint32_t total;
	uint32_t nb;
	uint16_t head[BNECK_NB_PRIO];
	uint16_t tail[BNECK_NB_PRIO];
	uint16_t free_head;
	uint16_t serving;              /* a priority, or BNECK_NONE */
	uint32_t deficit[BNECK_NB_PRIO];
	uint8_t rr;                    /* DRR's current priority */
	uint8_t paused;                /* priorities the last PFC frame paused */
	uint64_t t_free;               /* the wire is free from then (clock ticks) */
	double frac;                   /* fraction of a tick carried between frames */
	uint64_t dep;                  /* departure of the frame on the wire */
	uint64_t refresh_at;           /* next refresh of the pauses */
	struct rte_mempool *pool;      /* where PFC frames come from: the last packet's */
	uint16_t nb_ctrl;
	struct rte_mbuf *ctrl[ROCE_IMPAIR_CTRL_MAX];
	uint64_t q_samples;
	uint64_t q_max;
	uint64_t qhist[QHIST_NB];
	struct bneck_slot slot[ROCE_IMPAIR_BNECK_SLOTS];
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
	uint8_t mac[6];                /* of the last configuration: a resume after a clear */
	struct impair_slot line[ROCE_IMPAIR_LINE_SIZE];
	struct impair_bneck bq;
};

/* Build the derived configuration; NULL with rte_errno on failure. */
struct impair_cfg *impair_cfg_new(const struct roce_impair_spec *spec, uint64_t hz, uint64_t gen);

/* Set a configuration's link: PFC source MAC and the speed pause times are reckoned at. */
void impair_cfg_set_link(struct impair_cfg *c, const uint8_t mac[6], uint64_t link_mbps);

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

/* @return packets held in the stage (bottleneck, reorder and delay line). */
static inline unsigned int
impair_stage_held(const struct roce_impair_stage *st)
{
	return st->nb_held + (st->line_tail - st->line_head) + st->bq.nb + st->bq.nb_ctrl;
}

/* ---- the bottleneck (bneck.c) ---- */

/* Empty queues, no pause (at allocation). */
void bneck_init(struct impair_bneck *bq);
/* A new configuration: samples restart; queued packets stay. */
void bneck_reset(struct impair_bneck *bq, uint64_t now);
/* Queue @m (judged already), or drop it (RED, tail); counts into @cnt. */
void bneck_enqueue(struct roce_impair_stage *st, const struct impair_cfg *cfg,
		struct rte_mbuf *m, uint64_t now);
/* Hand on what left by @now (to the reorder stage and the delay line), in order. */
void bneck_drain(struct roce_impair_stage *st, const struct impair_cfg *cfg, uint64_t now);
/* Pause, refresh or resume priorities as the queue stands; @cfg NULL: resume everything. */
void bneck_pfc(struct roce_impair_stage *st, const struct impair_cfg *cfg, uint64_t now);
/* Let everything queued go at once (configuration cleared); resumes paused priorities. */
void bneck_flush(struct roce_impair_stage *st, uint64_t now);
/* Free what is queued and the PFC frames not taken. */
void bneck_free(struct impair_bneck *bq);
/* Merge the stage's depth histogram into @hist, its sample count, max, depths. */
void bneck_stats_add(const struct impair_bneck *bq, uint64_t hist[QHIST_NB],
		struct roce_impair_qstats *qs);
/* Fill p50/p99 of @qs from a merged histogram. */
void bneck_stats_finish(const uint64_t hist[QHIST_NB], struct roce_impair_qstats *qs);

/* Take up to @max PFC frames of the stage's outbox, oldest first (stage.c). */
uint16_t impair_ctrl_take(struct roce_impair_stage *st, struct rte_mbuf **pkts, uint16_t max);

/* Into the reorder stage and the delay line (stage.c), at time @now. */
void impair_pass(struct roce_impair_stage *st, const struct impair_cfg *cfg,
		struct rte_mbuf *m, uint64_t now);
/* Set CE on an ECT packet: 1 if marked; ECN codepoint of an IP packet, or -1 (stage.c). */
int impair_mark_ce(struct rte_mbuf *m);
int impair_ecn_of(const struct rte_mbuf *m);
/* Uniform in [0, 1) from stream @s (stage.c). */
double impair_draw(uint64_t *s);

/* Allocate a zeroed stage for a queue; NULL on failure. */
struct roce_impair_stage *impair_stage_alloc(enum roce_impair_dir dir, uint16_t queue,
		int socket);

#endif /* ROCE_IMPAIR_PRIVATE_H */
