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
 * np_enable set (profile mlx5 or paper): it is tracked from then until it is destroyed or goes
 * to RTR again, and its packets (requests, ACKs and READ responses alike) carry
 * roce_dp_cc_conf::ecn. A QP connected while congestion control is off costs the fast path
 * nothing: it is never looked up.
 */

#include <stdint.h>

#include "roce_cc.h"
#include "roce_cc_counters.h"

struct roce_dp;

/** The daemon-wide settings. */
struct roce_dp_cc_conf {
	struct roce_cc_params params; /**< knobs of every QP without knobs of its own */
	char profile[16];             /**< profile they were loaded from ("off" at start) */
	uint8_t ecn;                  /**< ROCE_ECN_ECT0 (default), ROCE_ECN_ECT1 or NOT_ECT */
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
 *   0, -EINVAL (a knob out of range, or @p conf's ecn CE), -ENOMEM, or a worker's -errno.
 */
int roce_dp_cc_set(struct roce_dp *dp, const struct roce_dp_cc_conf *conf);

/** A QP's congestion control, as roce_dp_cc_qp_get() reads it. */
struct roce_dp_cc_qp {
	struct roce_cc_qp_state st;   /**< rate, target rate, alpha, ... now */
	struct roce_cc_params params; /**< the knobs it uses */
	uint8_t own;                  /**< 1: knobs of its own (roce_dp_cc_qp_set()) */
};

/**
 * Read a QP's congestion control state.
 *
 * @return
 *   0, or -ENOENT (no such QP, or congestion control does not track it).
 */
int roce_dp_cc_qp_get(struct roce_dp *dp, uint32_t qpn, struct roce_dp_cc_qp *out);

/**
 * Give a tracked QP knobs of its own, or (@p p NULL) the daemon's again.
 *
 * @return
 *   0, -ENOENT (no such QP, or not tracked), -EINVAL (a knob out of range), -ENOMEM.
 */
int roce_dp_cc_qp_set(struct roce_dp *dp, uint32_t qpn, const struct roce_cc_params *p);

#endif /* ROCE_DP_CC_H */
