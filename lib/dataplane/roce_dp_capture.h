/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_DP_CAPTURE_H
#define ROCE_DP_CAPTURE_H

/**
 * @file
 * Packet capture to a pcapng file, from the ports' rx and tx, without touching the workers'
 * loops: ethdev rx callbacks (installed first, so frames are taken as the PMD delivered them,
 * before any rx impairment) and tx callbacks (frames as they are handed to the PMD, after the
 * tx impairment stage) copy each frame up to the snap length with rte_pcapng_copy() into a
 * bounded single-producer ring per port queue and direction; a control thread drains the
 * rings and writes them with rte_pcapng_write_packets(). A full ring or an empty copy pool
 * drops the copy and counts it (CAPTURE_DROP_RING, CAPTURE_DROP_NOMBUF): the fast path never
 * waits. A frame the PMD refused and the dataplane offers again is captured once.
 *
 * One capture at a time per dataplane. It ends on roce_dp_capture_stop(), by itself once
 * @c count frames are written or a write fails, and with the dataplane.
 */

#include <stdint.h>

#include "roce_counters.h"

struct roce_dp;

/** roce_capture_conf::dirs */
#define ROCE_CAPTURE_RX 0x1
#define ROCE_CAPTURE_TX 0x2

/** Largest snap length (bytes kept of each frame). */
#define ROCE_CAPTURE_SNAPLEN_MAX 65535u

/** What to capture. */
struct roce_capture_conf {
	int fd;             /**< open for writing: the capture writes to a dup() of it */
	uint32_t ports;     /**< bit mask of dataplane port indexes */
	uint8_t dirs;       /**< ROCE_CAPTURE_RX | ROCE_CAPTURE_TX */
	uint32_t snaplen;   /**< bytes kept of each frame, 1..ROCE_CAPTURE_SNAPLEN_MAX (0: all) */
	uint64_t count;     /**< frames written, then the capture ends (0: no limit) */
	const char *comment; /**< section header comment, or NULL */
};

/** The capture counters, CAPTURE_<name>. */
#define ROCE_CAPTURE_COUNTERS(X) \
	X(SEEN, "frames the capture callbacks were given on the captured ports and directions") \
	X(COPIED, "frames copied (up to the snap length) into a capture ring") \
	X(DROP_RING, "frames not captured: their queue's capture ring was full (the writer fell " \
		"behind)") \
	X(DROP_NOMBUF, "frames not captured: the capture's mbuf pool was empty") \
	X(TX_REOFFER, "frames the port refused and the dataplane offered again: captured the " \
		"first time only") \
	X(WRITTEN, "frames written to the capture file") \
	X(PAST_COUNT, "frames copied after the capture's count was reached: not written") \
	X(WRITE_ERR, "frames lost to a failed write of the capture file (the capture ends)")

/** Capture counter indexes, ROCE_CAPTURE_C_<name>. */
enum roce_capture_counter {
#define ROCE_CAPTURE_ENUM(n, d) ROCE_CAPTURE_C_##n,
	ROCE_CAPTURE_COUNTERS(ROCE_CAPTURE_ENUM)
#undef ROCE_CAPTURE_ENUM
	ROCE_CAPTURE_CNT_NUM
};

/** The capture counters' names and descriptions. */
extern const struct roce_counter_family roce_capture_counter_family;
/** ... as the daemon publishes them: CAPTURE_*, once a capture has run. */
extern const struct roce_counter_group roce_capture_counter_group;

/** Why a capture is no longer taking frames. */
enum roce_capture_end {
	ROCE_CAPTURE_RUNNING = 0,
	ROCE_CAPTURE_STOPPED,      /**< roce_dp_capture_stop() */
	ROCE_CAPTURE_COUNT,        /**< @c count frames written */
	ROCE_CAPTURE_WRITE_ERROR,  /**< a write failed: roce_capture_info::error */
};

/** @return "running", "stopped", "count", "write error". */
const char *roce_capture_end_name(enum roce_capture_end end);

/** A capture's state. */
struct roce_capture_info {
	struct roce_capture_conf conf;     /**< fd and comment are not kept: -1 and NULL */
	enum roce_capture_end end;
	int error;                         /**< errno of the failed write */
	uint64_t start_ns;                 /**< realtime */
	uint64_t end_ns;                   /**< realtime; 0 while running */
	uint64_t bytes;                    /**< written to the file (headers included) */
	uint32_t ring_size;                /**< entries of each ring */
	uint32_t nb_rings;
	uint32_t pool_size;                /**< mbufs of the copy pool */
	uint64_t cnt[ROCE_CAPTURE_CNT_NUM];
};

/**
 * Start capturing: a copy pool and rings, the file's section header and one interface per
 * ethdev port (rte_pcapng_fdopen()), the writer thread, then the callbacks.
 *
 * @return
 *   0; -EBUSY (a capture is running: stop it first); -EINVAL (no port, direction or fd, a
 *   port that is not the dataplane's, snap length out of range); -ENOMEM (the copy pool or
 *   the rings: a smaller snap length needs less); -errno from writing the file header, from
 *   the thread or from adding a callback. @c fd stays the caller's to close.
 */
int roce_dp_capture_start(struct roce_dp *dp, const struct roce_capture_conf *conf);

/**
 * Stop the capture: callbacks removed, the workers past them (roce_dp_quiesce()), what is in
 * the rings written (up to @c count), an Interface Statistics Block per port (frames seen and
 * dropped), the file closed. Also releases a capture that ended by itself.
 *
 * @param info
 *   Its final state, or NULL.
 * @return
 *   0, or -ENOENT when there is no capture.
 */
int roce_dp_capture_stop(struct roce_dp *dp, struct roce_capture_info *info);

/**
 * The current (or last, until the next start) capture's state.
 *
 * @return
 *   0, or -ENOENT when no capture has run.
 */
int roce_dp_capture_info(struct roce_dp *dp, struct roce_capture_info *info);

/**
 * The capture counters over every capture of @p dp so far (the running one included).
 *
 * @return
 *   1, or 0 (zeros) when no capture has run.
 */
int roce_dp_capture_counters(struct roce_dp *dp, uint64_t cnt[ROCE_CAPTURE_CNT_NUM]);

#endif /* ROCE_DP_CAPTURE_H */
