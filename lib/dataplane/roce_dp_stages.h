/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_DP_STAGES_H
#define ROCE_DP_STAGES_H

/**
 * @file
 * Where a worker's time goes: TSC stamps at the stages of a packet's way through the worker
 * loop, kept per worker in histograms of TSC cycles. Compiled in only by
 * `meson setup -Dstage_stamps=true` (ROCE_STAGE_STAMPS); without it the worker has no stamp
 * at all and roce_dp_stages_read() says -ENOTSUP. doc/performance.md, "Where the time goes".
 *
 * Paths and their stages, each the time from the previous stamp of its path:
 *  - receive, per frame of a port's rx burst: the rx burst call -> returned -> classified ->
 *    the engine's responder/completer done with the burst. A burst's time is shared out equally over its
 *    frames, so the count is frames and the mean is cycles per frame; a ping-pong's bursts
 *    hold one frame, whose own time each sample then is.
 *  - responses (ACK, NAK, READ response, atomic ACK, CNP), per frame: the transport done with
 *    the latest receive burst -> built (the engine call that queued it returned) -> its tx
 *    burst called (the transmit object's, which calls rte_eth_tx_burst) -> returned.
 *  - requests: built -> tx burst called -> returned, per frame; for the latency jobs
 *    (perftest's *_lat and rdma-core's pingpong), per message: the transport done with the
 *    burst that brought the peer's message -> the job posted (its poll cadence) -> the first
 *    packet built; and the whole turn, rx burst returned -> that packet's tx burst returned.
 *  - the worker loop: one turn of it, every turn (its poll cadence).
 */

#include <stdbool.h>
#include <stdint.h>

#include "roce_hist.h"

struct roce_dp;

/** The stages: X(enum suffix, name, description). */
#define ROCE_DP_STAGES(X) \
	X(RX_PMD, "rx.pmd", "the port's rx burst call that returned frames, per frame") \
	X(RX_CLASSIFY, "rx.classify", "rx burst returned -> classified, per frame") \
	X(RX_TRANSPORT, "rx.transport", "classified -> responder/completer done, per frame " \
		"given to this worker's engine") \
	X(RESP_BUILD, "resp.build", "transport done with the latest rx burst -> response " \
		"(ACK, NAK, READ response, atomic ACK, CNP) built") \
	X(RESP_WAIT, "resp.wait", "response built -> its tx burst called") \
	X(REQ_JOB, "req.job", "latency job: transport done with the rx burst that brought the " \
		"peer's message -> the job posted the next (its poll cadence)") \
	X(REQ_BUILD, "req.build", "latency job: posted -> its first packet built") \
	X(REQ_WAIT, "req.wait", "request packet built -> its tx burst called") \
	X(TX_PMD, "tx.pmd", "the tx burst call (the transmit object and the PMD), per frame") \
	X(LAT_TURN, "lat.turn", "latency job: rx burst returned with the peer's message -> " \
		"the tx burst of the answer's first packet returned") \
	X(LOOP, "loop", "one turn of the worker loop")

/** Stage numbers. */
enum roce_dp_stage {
#define ROCE_DP_STAGE_ENUM(e, n, d) ROCE_STAGE_##e,
	ROCE_DP_STAGES(ROCE_DP_STAGE_ENUM)
#undef ROCE_DP_STAGE_ENUM
	ROCE_STAGE_NUM
};

/** A stage's name and what it measures. */
struct roce_dp_stage_desc {
	const char *name;
	const char *description;
};

/** Name and description of each stage, by enum roce_dp_stage. */
extern const struct roce_dp_stage_desc roce_dp_stage_desc[ROCE_STAGE_NUM];

/** The stamps of one worker, or of several merged. */
struct roce_dp_stages {
	uint64_t tsc_hz;                   /**< what a cycle is */
	uint64_t backwards;                /**< stamps found earlier than their predecessor
					        (not recorded; 0 on an invariant TSC) */
	struct roce_hist h[ROCE_STAGE_NUM]; /**< per stage, in TSC cycles */
};

/** @return whether the dataplane was built with the stamps (-Dstage_stamps=true). */
bool roce_dp_stages_built(void);

/**
 * Merge the stamps of workers [@p first, @p last) into @p out (copied on each worker, between
 * two turns of its loop), and with @p clear start them from zero again.
 *
 * @return
 *   0; -ENOTSUP when built without the stamps; -EINVAL for a bad range; what roce_dp_call()
 *   returns when a worker does not answer.
 */
int roce_dp_stages_read(struct roce_dp *dp, unsigned int first, unsigned int last,
		struct roce_dp_stages *out, bool clear);

#endif /* ROCE_DP_STAGES_H */
