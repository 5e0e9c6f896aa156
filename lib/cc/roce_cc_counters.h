/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_CC_COUNTERS_H
#define ROCE_CC_COUNTERS_H

/**
 * @file
 * Congestion control counters, kept per struct roce_cc (one engine, one lcore).
 */

#include <stdint.h>

#include "roce_counters.h"

struct roce_cc;

/** Every congestion control counter, with what it counts. */
#define ROCE_CC_COUNTERS(X) \
	X(CNP_RX, "CNPs received for a QP of this engine (reaction point)") \
	X(CNP_UNKNOWN_QP, "CNPs received for a QP congestion control does not know") \
	X(CNP_IGNORED, "CNPs received for a QP whose reaction point is off (rp_enable 0)") \
	X(CNP_HELD, "CNPs inside rp_rate_reduce_monitor_period, folded into one later reduction") \
	X(RATE_REDUCE, "rate reductions (a CNP, or CNPs held by the monitor period)") \
	X(RATE_MIN_CLAMP, "rate reductions stopped at rp_min_rate") \
	X(INC_TIMER, "rate increase events of the timer (rp_time_reset)") \
	X(INC_BYTE, "rate increase events of the byte counter (rp_byte_reset)") \
	X(FAST_RECOVERY, "increase events in fast recovery (RC halfway to RT)") \
	X(ADDITIVE_INC, "increase events in additive increase (RT + rp_ai_rate)") \
	X(HYPER_INC, "increase events in hyper increase (RT + i * rp_hai_rate)") \
	X(RATE_FULL, "QPs back at their maximum rate: no longer limited") \
	X(PACED, "turns after which the pacer held a QP back") \
	X(PACE_FULL, "turns of a paced QP that found its bucket full: it came later than its " \
		"burst covers (a late worker, or nothing to send) and rate was lost") \
	X(CE_RX, "CE-marked packets seen for a QP (notification point)") \
	X(CE_UNKNOWN_QP, "CE-marked packets for a QP congestion control does not know") \
	X(CNP_TX, "CNPs the notification point asked to send") \
	X(CNP_SUPPRESSED, "CE marks not answered: a CNP went to the QP less than " \
		"np_min_time_between_cnps ago") \
	X(CE_NP_OFF, "CE marks not answered because the notification point is off (np_enable 0)") \
	X(TRACE_NO_MEMORY, "QPs tracked without a trace ring: no memory for one")

/** Counter indexes, as ROCE_CCC_<name>. */
enum roce_cc_counter {
#define ROCE_CCC_ENUM(n, d) ROCE_CCC_##n,
	ROCE_CC_COUNTERS(ROCE_CCC_ENUM)
#undef ROCE_CCC_ENUM
	ROCE_CCC_NUM
};

/** Names and descriptions of the congestion control counters. */
extern const struct roce_counter_family roce_cc_counter_family;

/**
 * Copy the counters of @p cc.
 *
 * @param cc
 *   The instance.
 * @param out
 *   ROCE_CCC_NUM values, indexed by enum roce_cc_counter.
 */
void roce_cc_counters(const struct roce_cc *cc, uint64_t *out);

#endif /* ROCE_CC_COUNTERS_H */
