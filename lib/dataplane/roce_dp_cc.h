/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_DP_CC_H
#define ROCE_DP_CC_H

/**
 * @file
 * Congestion control of the daemon: each worker's engine has a lib/cc instance (created the
 * first time congestion control is turned on), which paces the QPs it tracks at their DCQCN
 * rate, slows them down on the CNPs they receive (reaction point) and answers CE-marked
 * packets with CNPs (notification point).
 *
 * A QP has congestion control when it goes to RTR while the daemon's knobs have rp_enable or
 * np_enable set (profile mlx5 or paper), or when roce_dp_cc_qp_set() gives it knobs of its own
 * later: it is tracked from then until it is destroyed or goes to RTR again, and its packets
 * (requests, ACKs and READ responses alike) carry roce_dp_cc_conf::ecn or a codepoint of its
 * own. A QP without congestion control costs the fast path nothing: it is never looked up.
 */

#include <stdint.h>

#include "roce_cc.h"
#include "roce_cc_counters.h"

struct roce_dp;

/** Trace entries a tracked QP keeps unless told otherwise (40 bytes each). */
#define ROCE_DP_CC_TRACE_LEN_DEFAULT 256

/** The daemon-wide settings. */
struct roce_dp_cc_conf {
	struct roce_cc_params params; /**< knobs of every QP without knobs of its own */
	char profile[16];             /**< profile they were loaded from ("off" at start) */
	uint8_t ecn;                  /**< ROCE_ECN_ECT0 (default), ROCE_ECN_ECT1 or NOT_ECT */
	/**
	 * Trace entries each tracked QP keeps: 0 or a power of 2 up to ROCE_CC_TRACE_LEN_MAX
	 * (default ROCE_DP_CC_TRACE_LEN_DEFAULT); a change resizes the rings of the QPs tracked.
	 */
	uint32_t trace_len;
	/**
	 * A paced QP's burst, in packets (1 to ROCE_CC_BURST_MAX, default
	 * ROCE_CC_BURST_DEFAULT): roce_cc_conf::burst.
	 */
	uint32_t pace_burst;
	uint64_t line_mbps;           /**< read only: the line rate rates scale with */
};

/**
 * Read the daemon-wide settings (defaults until roce_dp_cc_set(): profile off, ECT(0)).
 *
 * @return
 *   0.
 */
int roce_dp_cc_get(struct roce_dp *dp, struct roce_dp_cc_conf *conf);

/**
 * Change the daemon-wide settings on every worker: knobs apply at once to the QPs tracked
 * without knobs of their own; turning congestion control on or off applies to QPs that go
 * to RTR afterwards (the QPs already tracked keep being tracked, with the new knobs).
 *
 * @return
 *   0, -EINVAL (a knob out of range, @p conf's ecn CE, trace_len not 0 or a power of 2
 *   up to ROCE_CC_TRACE_LEN_MAX, pace_burst out of range), -ENOMEM, or a worker's -errno.
 */
int roce_dp_cc_set(struct roce_dp *dp, const struct roce_dp_cc_conf *conf);

/** A QP's congestion control, as roce_dp_cc_qp_get() reads it. */
struct roce_dp_cc_qp {
	struct roce_cc_qp_state st;   /**< rate, target rate, alpha, ... now */
	struct roce_cc_params params; /**< the knobs it uses */
	uint8_t own;                  /**< 1: knobs of its own (roce_dp_cc_qp_set()) */
	uint64_t now_ns;              /**< when it was read (roce_dp_now()'s clock) */
	uint8_t ecn;                  /**< ROCE_ECN_* its packets carry */
};

/**
 * Read a QP's congestion control state.
 *
 * @return
 *   0, or -ENOENT (no such QP, or congestion control does not track it).
 */
int roce_dp_cc_qp_get(struct roce_dp *dp, uint32_t qpn, struct roce_dp_cc_qp *out);

/**
 * Read a QP's trace (roce_cc_trace_read()) and, at the same instant, its state.
 *
 * @param cursor
 *   In: the first sequence number wanted; out: the next one to ask for.
 * @param out
 *   Room for @p max entries.
 * @param st
 *   If not NULL: the QP's state right after the read (st->st.trace_next is the cursor's
 *   end, st->now_ns the time of the read).
 * @return
 *   Entries stored, or -ENOENT (no such QP, or not tracked).
 */
int roce_dp_cc_trace(struct roce_dp *dp, uint32_t qpn, uint64_t *cursor,
		struct roce_cc_trace_entry *out, unsigned int max, struct roce_dp_cc_qp *st);

/**
 * Give a QP knobs of its own and maybe a codepoint of its own, or the daemon's again. A
 * connected QP that congestion control does not track (it went to RTR with congestion
 * control off) is tracked from now on: paced, answered with CNPs, its packets ECN-capable.
 *
 * @param p
 *   Its knobs; NULL: the daemon's knobs and codepoint again, or, with congestion control
 *   off daemon-wide, none at all (it is no longer tracked, paced nor ECN-capable).
 * @param ecn
 *   ROCE_ECN_NOT_ECT, ECT1 or ECT0 for its packets from now on; -1: as it is (a QP tracked
 *   now gets roce_dp_cc_conf::ecn). Ignored with @p p NULL.
 * @return
 *   0, -ENOENT (no such QP; @p p NULL and it is not tracked), -EINVAL (a knob out of range,
 *   @p ecn CE, the QP not connected), -ENOSPC (the worker tracks max_qps QPs), -ENOMEM.
 */
int roce_dp_cc_qp_set(struct roce_dp *dp, uint32_t qpn, const struct roce_cc_params *p,
		int ecn);

#endif /* ROCE_DP_CC_H */
