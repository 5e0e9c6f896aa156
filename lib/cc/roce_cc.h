/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_CC_H
#define ROCE_CC_H

/**
 * @file
 * Congestion control: DCQCN (Zhu et al., SIGCOMM 2015) per QP with every mlx5 knob by its
 * mlx5 name, the reaction point (RP: rate, target rate, alpha, timers, byte counter), the
 * notification point (NP: which CE marks a CNP answers), a CNP builder, and a pacer for the
 * transport engine (struct roce_pacer) that holds each QP to its current rate.
 *
 * Like the transport, nothing here touches a port or an lcore: the caller gives the time in
 * nanoseconds on every call, so a virtual clock drives it in tests. One struct roce_cc serves
 * one engine and is used by that engine's lcore only. Timers are not armed anywhere: a QP's
 * timer events are played, in time order and at their exact times, whenever the QP is next
 * looked at (a CNP, a turn of the pacer, a read), so the state always equals what a clocked
 * implementation would hold at that instant. doc/congestion-control.md has the equations.
 */

#include <stdint.h>

#include <rte_mbuf.h>

#include "roce_build.h"
#include "roce_cc_knobs.h"
#include "roce_transport.h"

/** Knob indexes, as ROCE_CC_<NAME>. */
enum roce_cc_knob {
#define ROCE_CC_KNOB_ENUM(n, N, u, lo, hi, d) ROCE_CC_##N,
	ROCE_CC_KNOBS(ROCE_CC_KNOB_ENUM)
#undef ROCE_CC_KNOB_ENUM
	ROCE_CC_KNOB_NUM
};

/** What a knob is: a row of the knob table. */
struct roce_cc_knob_desc {
	const char *name;          /**< mlx5 name, e.g. "rp_time_reset" */
	const char *unit;          /**< "us", "bytes", "Mb/s", "1/1024", "%", "bool", ... */
	uint32_t min;              /**< smallest valid value */
	uint32_t max;              /**< largest valid value */
	const char *description;
};

/** A full set of knob values, indexed by enum roce_cc_knob. */
struct roce_cc_params {
	uint32_t v[ROCE_CC_KNOB_NUM];
};

/**
 * @return
 *   The row of knob @p k (an enum roce_cc_knob), or NULL when out of range.
 */
const struct roce_cc_knob_desc *roce_cc_knob(unsigned int k);

/**
 * @return
 *   The index of the knob named @p name, or -ENOENT.
 */
int roce_cc_knob_find(const char *name);

/**
 * Set one knob, checked against its range.
 *
 * @param p
 *   Parameters to change.
 * @param name
 *   The knob's mlx5 name.
 * @param value
 *   The value, in the knob's unit.
 * @return
 *   0, -ENOENT (no such knob) or -EINVAL (out of range: roce_cc_knob() has the range).
 */
int roce_cc_params_set(struct roce_cc_params *p, const char *name, uint64_t value);

/**
 * Check every knob of @p p against its range.
 *
 * @return
 *   0, or -EINVAL; @p bad (if not NULL) then holds the first knob out of range.
 */
int roce_cc_params_check(const struct roce_cc_params *p, int *bad);

/** Reference line rate of the paper profile's rates (its testbed's 40 Gb/s links). */
#define ROCE_CC_PAPER_LINE_MBPS 40000

/**
 * Load a profile: "mlx5" (the ConnectX firmware defaults), "paper" (DCQCN paper, its rates
 * scaled from ROCE_CC_PAPER_LINE_MBPS to @p line_mbps) or "off" (mlx5 values, RP and NP off).
 *
 * @param name
 *   Profile name.
 * @param line_mbps
 *   Line rate the profile is for, in Mb/s (only the paper profile's rates depend on it).
 * @param p
 *   Filled with the profile.
 * @return
 *   0, or -ENOENT (no such profile), -EINVAL (@p line_mbps 0).
 */
int roce_cc_profile(const char *name, uint64_t line_mbps, struct roce_cc_params *p);

/** @return the name of profile @p i (0, 1, 2, ...), or NULL past the last. */
const char *roce_cc_profile_name(unsigned int i);

/** Most trace entries a QP may keep. */
#define ROCE_CC_TRACE_LEN_MAX 65536u

/** A paced QP's burst (packets) by default: see roce_cc_conf::burst. */
#define ROCE_CC_BURST_DEFAULT 32
/** The largest burst. */
#define ROCE_CC_BURST_MAX 4096

/** Per-packet bytes the pacer adds to the payload by default: see roce_cc_conf::pkt_overhead. */
#define ROCE_CC_PKT_OVERHEAD_DEFAULT 82

/** Instance configuration. */
struct roce_cc_conf {
	uint64_t line_mbps;          /**< port (line) rate in Mb/s (required) */
	const struct roce_cc_params *params; /**< knobs of every QP (NULL: mlx5 profile) */
	uint32_t max_qps;            /**< QPs it may track (default 1024) */
	/**
	 * Trace entries kept per QP, a power of 2 up to ROCE_CC_TRACE_LEN_MAX (default 256):
	 * 40 bytes each, allocated when the QP is added (roce_cc_set_trace_len() changes it).
	 */
	uint32_t trace_len;
	/**
	 * Bytes per packet the pacer and the byte counter count on top of the payload: headers,
	 * ICRC and what the wire adds. Default 82 = Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 +
	 * ICRC 4 + FCS 4 + preamble 8 + inter-frame gap 12 (a RETH or AETH is not counted).
	 */
	uint32_t pkt_overhead;
	/**
	 * A paced QP's burst, in packets (default ROCE_CC_BURST_DEFAULT): over any interval of
	 * length T it sends at most rate * T plus this many of its packets (its bucket), in
	 * turns of (burst + 1) / 2 packets at most. Waking up to half a burst late costs it no
	 * rate; an idle QP saves up one burst at most.
	 */
	uint32_t burst;
	int socket_id;
};

struct roce_cc;

/**
 * Create an instance for one engine.
 *
 * @return
 *   The instance, or NULL with rte_errno set (EINVAL: no line rate, bad trace_len or
 *   params out of range; ENOMEM).
 */
struct roce_cc *roce_cc_create(const struct roce_cc_conf *conf);

/** Free an instance (NULL: nothing). */
void roce_cc_free(struct roce_cc *cc);

/**
 * Change the knobs of every QP that has no knobs of its own. QP state is kept; new values
 * apply from the next event on.
 *
 * @return
 *   0, or -EINVAL (a knob out of range).
 */
int roce_cc_set_params(struct roce_cc *cc, const struct roce_cc_params *p);

/**
 * Change how many trace entries each QP keeps, for the QPs tracked now (each keeps its
 * newest entries that fit; sequence numbers go on) and those added later.
 *
 * @param len
 *   0 (no trace) or a power of 2 up to ROCE_CC_TRACE_LEN_MAX.
 * @return
 *   0, -EINVAL (@p len not one of those), or -ENOMEM (some QPs kept their old ring).
 */
int roce_cc_set_trace_len(struct roce_cc *cc, uint32_t len);

/** @return the trace entries a QP added now keeps. */
uint32_t roce_cc_get_trace_len(const struct roce_cc *cc);

/** @return the knobs QPs without their own use. */
const struct roce_cc_params *roce_cc_get_params(const struct roce_cc *cc);

/**
 * Start tracking a QP: unlimited (at the maximum rate), alpha at rp_initial_alpha_value.
 *
 * @return
 *   0, -EEXIST (already tracked), -ENOSPC (max_qps reached), -ENOMEM.
 */
int roce_cc_qp_add(struct roce_cc *cc, uint32_t qpn);

/**
 * Stop tracking a QP.
 *
 * @return
 *   0, or -ENOENT.
 */
int roce_cc_qp_remove(struct roce_cc *cc, uint32_t qpn);

/**
 * Give a QP knobs of its own (@p p) or take them away (@p p NULL: the instance's again).
 *
 * @return
 *   0, -ENOENT (QP not tracked), -EINVAL (a knob out of range), -ENOMEM.
 */
int roce_cc_qp_set_params(struct roce_cc *cc, uint32_t qpn, const struct roce_cc_params *p);

/**
 * @return
 *   The knobs QP @p qpn uses (its own, or the instance's), or NULL when it is not tracked.
 */
const struct roce_cc_params *roce_cc_qp_params(const struct roce_cc *cc, uint32_t qpn);

/**
 * Cap a QP's rate whatever DCQCN says (a static rate limit, as ibv_modify_qp's rate_limit):
 * the pacer holds it to the lower of the cap and its DCQCN rate. A QP whose reaction and
 * notification points are off (its knobs) is a plain rate-limited QP.
 *
 * @param bps
 *   The cap in bit/s on the wire (payload and roce_cc_conf::pkt_overhead per packet); 0:
 *   none.
 * @return
 *   0, or -ENOENT.
 */
int roce_cc_qp_set_limit(struct roce_cc *cc, uint32_t qpn, uint64_t bps);

/**
 * Change the burst of every paced QP (roce_cc_conf::burst); refill roce_cc_pacer() and give
 * it to the engine again for the turns' size to follow.
 *
 * @return
 *   0, or -EINVAL (0 or above ROCE_CC_BURST_MAX).
 */
int roce_cc_set_burst(struct roce_cc *cc, uint32_t burst);

/** @return the burst (packets) of paced QPs. */
uint32_t roce_cc_get_burst(const struct roce_cc *cc);

/**
 * The reaction point received a CNP for @p qpn (the BTH destination QP of the CNP).
 *
 * @return
 *   0, or -ENOENT (counted as CNP_UNKNOWN_QP).
 */
int roce_cc_cnp_rx(struct roce_cc *cc, uint32_t qpn, uint64_t now);

/**
 * The notification point: a CE-marked packet arrived for our QP @p qpn at @p now. Say
 * whether to answer it with a CNP now (to that QP's peer): at most one per QP per
 * np_min_time_between_cnps, reckoned on the packets' arrival times, which may be older than
 * the times other calls gave (the packets of a burst taken at once); one older than the
 * QP's last CNP is within the interval.
 *
 * @return
 *   1: send a CNP; 0: do not (suppressed, or the NP is off); -ENOENT: QP not tracked.
 */
int roce_cc_np_ce(struct roce_cc *cc, uint32_t qpn, uint64_t now);

/**
 * @p qpn just sent @p pkts packets with @p bytes of payload at @p now: feed its byte
 * counter and say when it may send again: a token bucket of roce_cc_conf::burst of its
 * packets filling at its rate, and its next turn once the bucket holds its largest turn.
 *
 * @return
 *   The earliest time it may send again; 0 when it may at once, is not limited (or not
 *   tracked).
 */
uint64_t roce_cc_sent(struct roce_cc *cc, uint32_t qpn, uint32_t pkts, uint64_t bytes,
		uint64_t now);

/**
 * Fill a pacer for roce_engine_set_pacer() with this instance: its next() is roce_cc_sent()
 * on the QP's number, its burst (packets a turn) half the instance's burst, and it is asked
 * only about the QPs roce_qp_set_paced() marked.
 */
void roce_cc_pacer(struct roce_cc *cc, struct roce_pacer *pacer);

/** Increase stages of a QP's reaction point. */
enum roce_cc_stage {
	ROCE_CC_STAGE_FULL,        /**< at the maximum rate: not limited */
	ROCE_CC_STAGE_FAST_RECOVERY,
	ROCE_CC_STAGE_ADDITIVE,
	ROCE_CC_STAGE_HYPER,
};

/** @return the name of a stage ("full", "fast_recovery", "additive", "hyper"). */
const char *roce_cc_stage_name(enum roce_cc_stage s);

/** A QP's reaction point state, as roce_cc_qp_get() reads it. */
struct roce_cc_qp_state {
	double rate_mbps;          /**< current rate RC */
	double target_mbps;        /**< target rate RT */
	double alpha;              /**< alpha, 0..1 */
	double pace_mbps;          /**< rate the pacer holds it to (0: none) */
	double limit_mbps;         /**< its cap (roce_cc_qp_set_limit()), 0: none */
	uint64_t cnps;             /**< CNPs received */
	uint64_t reductions;       /**< rate reductions */
	uint32_t timer_stage;      /**< timer increase events since the last reduction (T) */
	uint32_t byte_stage;       /**< byte-counter increase events since then (BC) */
	uint64_t byte_count;       /**< bytes counted towards the next byte-counter event */
	enum roce_cc_stage stage;  /**< stage of the last increase event */
	uint64_t np_cnps;          /**< CNPs the notification point asked to send for it */
	uint64_t trace_next;       /**< sequence number of its next trace entry */
	uint32_t trace_len;        /**< trace entries it keeps (0: none) */
};

/**
 * Read a QP's state at @p now (its due timer events are played first).
 *
 * @return
 *   0, or -ENOENT.
 */
int roce_cc_qp_get(struct roce_cc *cc, uint32_t qpn, uint64_t now, struct roce_cc_qp_state *st);

/** What made a trace entry. */
enum roce_cc_event {
	ROCE_CC_EV_CNP,            /**< a rate reduction */
	ROCE_CC_EV_TIMER,          /**< a timer increase event */
	ROCE_CC_EV_BYTES,          /**< a byte-counter increase event */
	ROCE_CC_EV_FULL,           /**< back at the maximum rate (after an increase event) */
};

/** @return the name of an event ("cnp", "timer", "bytes", "full"). */
const char *roce_cc_event_name(enum roce_cc_event e);

/** One trace entry: the state right after an event. */
struct roce_cc_trace_entry {
	uint64_t seq;              /**< 0, 1, 2, ... per QP */
	uint64_t time_ns;          /**< when the event happened (its own time, not when played) */
	double rate_mbps;
	double target_mbps;
	double alpha;
	uint64_t cnps;             /**< CNPs received up to then */
	uint8_t event;             /**< enum roce_cc_event */
	uint8_t stage;             /**< enum roce_cc_stage */
};

/**
 * Read a QP's trace: the entries with a sequence number from @p *cursor on that the ring
 * still holds (the last roce_cc_conf::trace_len), oldest first. Due timer events are played
 * first (up to @p now). The state roce_cc_qp_get() reads is the one after the entry
 * roce_cc_qp_state::trace_next - 1 (RC and RT as it has them; alpha also decays between
 * entries), and entries' times never go back.
 *
 * @param cursor
 *   In: first sequence number wanted (0: everything kept); past the last entry (the QP was
 *   tracked afresh since), it is taken as the last. Out: the one to ask for next.
 * @return
 *   Entries stored (at most @p max), or -ENOENT. Entries overwritten before they were read
 *   are skipped: the first entry's seq tells.
 */
int roce_cc_trace_read(struct roce_cc *cc, uint32_t qpn, uint64_t now, uint64_t *cursor,
		struct roce_cc_trace_entry *out, unsigned int max);

/**
 * The addressing of a QP's CNPs: the QP's own path (towards the peer that sent the CE
 * marked packets) with DSCP np_cnp_dscp, Not-ECT, and on a tagged path PCP np_cnp_prio.
 *
 * @param p
 *   Knobs (np_cnp_dscp, np_cnp_prio).
 * @param qp_path
 *   The QP's initialised path.
 * @param cnp_path
 *   Filled and initialised.
 * @return
 *   0, or -EINVAL (roce_path_init() refused it).
 */
int roce_cc_cnp_path(const struct roce_cc_params *p, const struct roce_path *qp_path,
		struct roce_path *cnp_path);

/**
 * Build a CNP (BTH opcode 0x81, BECN set, PSN 0, 16 reserved bytes, ICRC) with the lib/wire
 * builders.
 *
 * @param m
 *   An empty mbuf with room for the frame.
 * @param cnp_path
 *   From roce_cc_cnp_path().
 * @param dest_qpn
 *   The QP that sent the CE-marked packets (our QP's destination QP).
 * @return
 *   0, -EINVAL, -ENOSPC (as roce_build_pkt()).
 */
int roce_cc_cnp_build(struct rte_mbuf *m, const struct roce_path *cnp_path, uint32_t dest_qpn);

#endif /* ROCE_CC_H */
