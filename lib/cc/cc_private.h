/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CC_PRIVATE_H
#define CC_PRIVATE_H

#include <stdint.h>

#include <rte_log.h>

#include "roce_cc.h"
#include "roce_cc_counters.h"

extern int roce_cc_logtype;
#define ROCE_LOG(level, ...) \
	rte_log(RTE_LOG_##level, roce_cc_logtype, "cc: " __VA_ARGS__)

/*
 * A trace entry as a QP's ring keeps it (40 bytes): roce_cc_trace_read() expands it into a
 * struct roce_cc_trace_entry (seq from the position, the CNP count's upper bits from the
 * QP's).
 */
struct cc_trace_rec {
	uint64_t time_ns;
	double rc, rt, alpha;
	uint32_t cnps;           /* low 32 bits of the QP's CNP count then */
	uint8_t event;           /* enum roce_cc_event */
	uint8_t stage;           /* enum roce_cc_stage */
};

/* One QP: reaction point, pacer and notification point state. */
struct cc_qp {
	uint32_t qpn;
	uint8_t limited;         /* in a congestion episode: timers run, the pacer applies */
	uint8_t held;            /* a CNP waits for the end of the monitor period */
	uint8_t inc_timer;       /* a timer increase since the last reduction */
	uint8_t inc_byte;        /* a byte-counter increase since the last reduction */
	uint8_t stage;           /* enum roce_cc_stage of the last increase event */
	uint8_t cut_once;        /* at least one reduction done (monitor period applies) */
	uint8_t np_any;          /* the NP asked for a CNP once */
	uint8_t pacing;          /* pacing: the bucket runs (cleared when no longer paced) */
	double ns_per_byte;      /* pacing: 0 when not paced */
	double tokens;           /* pacing: bytes it may send (a bucket of pace_cap() bytes) */
	uint64_t tok_at;         /* pacing: when tokens was brought up to date */
	uint32_t pkt_max;        /* pacing: largest wire bytes a packet of a turn had */
	uint32_t turn_max;       /* pacing: largest turn, wire bytes */
	double rc, rt, alpha;    /* Mb/s, Mb/s, 0..1 */
	uint64_t alpha_at;       /* next alpha timer expiry */
	uint64_t timer_at;       /* next rate increase timer expiry */
	uint64_t held_at;        /* when a held CNP reduces */
	uint64_t last_cut;       /* time of the last reduction */
	uint64_t bytes;          /* towards the next byte-counter event */
	uint32_t t, bc;          /* timer and byte stages since the last reduction */
	uint64_t cnps, reductions;
	double limit_mbps;       /* static cap, 0: none */
	uint64_t np_last;        /* when the NP last asked for a CNP */
	uint64_t np_cnps;
	const struct roce_cc_params *p;
	struct roce_cc_params *own;            /* per-QP knobs, or NULL */
	struct cc_trace_rec *trace;  /* trace_len entries (NULL: none) */
	uint32_t trace_len;          /* 0 or a power of 2 */
	uint64_t trace_seq;          /* entries recorded so far, kept or not */
	uint64_t trace_from;         /* no entry before it is kept (a resize dropped them) */
};

/* Slot of the QPN table: open addressing, linear probing. */
struct cc_slot {
	uint32_t qpn;
	uint32_t idx;            /* into roce_cc::qps, CC_EMPTY when free */
};
#define CC_EMPTY UINT32_MAX

struct roce_cc {
	struct roce_cc_conf conf;
	struct roce_cc_params params;
	struct cc_slot *slots;
	uint32_t slot_mask;
	uint32_t slot_shift;
	struct cc_qp *qps;        /* max_qps entries */
	uint32_t *free_idx;       /* stack of free entries */
	uint32_t nb_free;
	uint64_t clock;           /* the latest time a call gave: cc_time() */
	uint64_t cnt[ROCE_CCC_NUM];
};

/*
 * The instance's clock never goes back: a caller's time older than one given before (a
 * worker loop's time read before a control call's) is taken as that one. So trace times
 * only grow, and a read at t has played every event recorded with a time before t.
 */
static inline uint64_t
cc_time(struct roce_cc *cc, uint64_t now)
{
	if (now < cc->clock)
		return cc->clock;
	cc->clock = now;
	return now;
}

/* dcqcn.c: the reaction point. */
void rp_init(struct roce_cc *cc, struct cc_qp *q);
void rp_advance(struct roce_cc *cc, struct cc_qp *q, uint64_t now);
void rp_cnp(struct roce_cc *cc, struct cc_qp *q, uint64_t now);
void rp_bytes(struct roce_cc *cc, struct cc_qp *q, uint64_t bytes, uint64_t now);

/* pace.c: the pacer. The QP's rate changes at @at (a DCQCN event or its cap). */
void pace_rate(struct roce_cc *cc, struct cc_qp *q, uint64_t at);
/* A turn of @wire bytes in @pkts packets at @now: when the QP may send again (0: at once). */
uint64_t pace_turn(struct roce_cc *cc, struct cc_qp *q, uint64_t wire, uint32_t pkts,
		uint64_t now);
struct cc_qp *cc_qp_lookup(const struct roce_cc *cc, uint32_t qpn);
double rp_max_mbps(const struct roce_cc *cc, const struct cc_qp *q);

#endif /* CC_PRIVATE_H */
