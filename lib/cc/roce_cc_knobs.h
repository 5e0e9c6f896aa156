/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_CC_KNOBS_H
#define ROCE_CC_KNOBS_H

/**
 * @file
 * The congestion control knob table alone, without DPDK: lib/cc (roce_cc.h) builds its knob
 * rows from it, and rocectl its cc set arguments.
 */

/**
 * Every knob: X(name, NAME, unit, min, max, description). Names are mlx5's (its debugfs
 * cc_params and sysfs ecn files), except rp_enable and np_enable (the per-priority enable
 * files of mlx5's sysfs) and rp_gd (mlx5's rp_gd).
 */
#define ROCE_CC_KNOBS(X) \
	X(rp_enable, RP_ENABLE, "bool", 0, 1, \
		"reaction point on: CNPs received slow the QP down") \
	X(rp_clamp_tgt_rate, RP_CLAMP_TGT_RATE, "bool", 0, 1, \
		"every rate reduction sets the target rate to the current rate") \
	X(rp_clamp_tgt_rate_after_time_inc, RP_CLAMP_TGT_RATE_ATI, "bool", 0, 1, \
		"a reduction after a timer-driven increase sets the target rate to the current rate " \
		"(after a byte-counter increase it always does)") \
	X(rp_time_reset, RP_TIME_RESET, "us", 1, 1000000, \
		"rate increase timer period (T)") \
	X(rp_byte_reset, RP_BYTE_RESET, "bytes", 0, 2147483647, \
		"bytes sent per byte-counter increase event (B); 0: no byte counter") \
	X(rp_threshold, RP_THRESHOLD, "events", 0, 65535, \
		"increase events of fast recovery before additive, then hyper increase (F)") \
	X(rp_ai_rate, RP_AI_RATE, "Mb/s", 0, 1000000, \
		"target rate step of additive increase (R_AI)") \
	X(rp_hai_rate, RP_HAI_RATE, "Mb/s", 0, 1000000, \
		"target rate step of hyper increase (R_HAI), times the hyper stage") \
	X(rp_gd, RP_GD, "log2", 10, 15, \
		"reduction RC * (1 - alpha * 2^(10 - rp_gd)): 11 is the paper's alpha / 2") \
	X(rp_min_dec_fac, RP_MIN_DEC_FAC, "%", 0, 100, \
		"one reduction keeps at least this share of the rate (100: never reduce)") \
	X(rp_min_rate, RP_MIN_RATE, "Mb/s", 1, 1000000, \
		"lowest rate a reduction goes to") \
	X(rp_max_rate, RP_MAX_RATE, "Mb/s", 0, 1000000, \
		"highest rate (and the rate of an unlimited QP); 0: the line rate") \
	X(rp_rate_to_set_on_first_cnp, RP_RATE_TO_SET_ON_FIRST_CNP, "Mb/s", 0, 1000000, \
		"rate and target rate set by the first CNP of a QP at full rate; 0: reduce as usual") \
	X(rp_dce_tcp_g, RP_DCE_TCP_G, "1/1024", 0, 1023, \
		"alpha filter: alpha = alpha * g / 1024 (+ (1024 - g) / 1024 on a CNP)") \
	X(rp_dce_tcp_rtt, RP_DCE_TCP_RTT, "us", 1, 131071, \
		"alpha update period (K): alpha decays once per period without a CNP") \
	X(rp_rate_reduce_monitor_period, RP_RATE_REDUCE_MONITOR_PERIOD, "us", 0, 1000000, \
		"at most one reduction per period; CNPs inside it make one reduction at its end") \
	X(rp_initial_alpha_value, RP_INITIAL_ALPHA_VALUE, "1/1024", 0, 1023, \
		"alpha of a new QP, used by its first CNP") \
	X(np_enable, NP_ENABLE, "bool", 0, 1, \
		"notification point on: CE-marked packets are answered with CNPs") \
	X(np_min_time_between_cnps, NP_MIN_TIME_BETWEEN_CNPS, "us", 0, 1000000, \
		"at most one CNP per QP per interval; 0: a CNP for every CE mark") \
	X(np_cnp_dscp, NP_CNP_DSCP, "dscp", 0, 63, \
		"DSCP of the CNPs sent") \
	X(np_cnp_prio, NP_CNP_PRIO, "pcp", 0, 7, \
		"802.1p priority of the CNPs sent (VLAN PCP, on tagged paths)")

#endif /* ROCE_CC_KNOBS_H */
