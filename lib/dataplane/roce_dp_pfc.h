/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_DP_PFC_H
#define ROCE_DP_PFC_H

/**
 * @file
 * Priority flow control of a port, as the dataplane does it in software: the pauses a port
 * received (IEEE 802.1Qbb PFC frames), which the port's transmit objects honour by holding
 * back the frames of a paused priority while the other priorities go on (roce_txq.h).
 *
 * One struct roce_dp_pfc per port, shared by the workers: whichever worker receives a PFC
 * frame (or a tx bottleneck of the port makes one) records it under the object's lock; the
 * transmit objects read the pause times without a lock (one load while nothing is paused).
 * Times are the dataplane's clock, in ns (roce_dp_now()).
 *
 * A pause lasts quanta x 512 bit times at the port's link speed (100 Gb/s when the port
 * reports none) from its arrival; a later frame for the priority replaces it, a time of 0
 * resumes at once. A watchdog (as mlx5's PFC storm prevention, 100 ms by default) bounds how
 * long a priority stays paused without a break: the pause that would go past it is cut there
 * (WATCHDOG), and the priority's pause frames are ignored (RX_STORM) while they keep coming,
 * until it is resumed or its frames stop for as long.
 */

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "roce_counters.h"
#include "roce_pfc.h"

/** How a port's PFC is done. */
enum roce_dp_pfc_mode {
	ROCE_DP_PFC_SW = 0,   /**< the dataplane honours the pauses it receives (default) */
	ROCE_DP_PFC_HW,       /**< the NIC does PFC: frames reaching us are counted, ignored */
	ROCE_DP_PFC_OFF,      /**< pauses are counted and ignored */
	ROCE_DP_PFC_AUTO,     /**< roce_dp_pfc_setup(): the NIC's where the PMD has it, else sw */
	ROCE_DP_PFC_NB_MODES
};

/** Default PFC watchdog: mlx5's "auto" PFC storm prevention timeout. */
#define ROCE_DP_PFC_WATCHDOG_MS 100
/** Longest watchdog timeout (mlx5's maximum). */
#define ROCE_DP_PFC_WATCHDOG_MAX_MS 8000

/** Counters of a port's PFC, kept by the receive path under the port's lock. */
#define ROCE_DP_PFC_COUNTERS(X) \
	X(RX_FRAMES, "PFC frames received (or made by a tx bottleneck of the port) and parsed") \
	X(RX_PAUSE, "pause indications received: a priority of a frame's vector with a " \
		"non-zero time") \
	X(RX_RESUME, "resume indications received: a priority with time 0") \
	X(PAUSED_NS, "time the port's priorities were paused, in ns, summed over priorities " \
		"(a priority's overlapping pauses counted once)") \
	X(RX_BAD_LENGTH, "MAC control frames of another length than 60 bytes (64 with the FCS)") \
	X(RX_BAD_DST, "MAC control frames not sent to 01:80:C2:00:00:01") \
	X(RX_BAD_OPCODE, "MAC control frames with an opcode other than PFC or PAUSE") \
	X(RX_LINK_PAUSE, "802.3x PAUSE frames (link-level flow control, not honoured)") \
	X(RX_ZERO_VECTOR, "PFC frames whose priority-enable vector names no priority") \
	X(RX_IGNORED, "PFC frames not honoured: the port's PFC is done by the NIC, or off") \
	X(RX_NOT_ENABLED, "pause and resume indications for priorities without PFC on the " \
		"port (pfc_prios), ignored") \
	X(RX_STORM, "pause indications ignored by the watchdog: the priority had been paused " \
		"without a break for the watchdog's timeout") \
	X(WATCHDOG, "times the watchdog cut a priority's pause (a PFC storm)")

/** Counter indexes, ROCE_DP_PFC_C_<name>. */
enum roce_dp_pfc_counter {
#define ROCE_DP_PFC_ENUM(n, d) ROCE_DP_PFC_C_##n,
	ROCE_DP_PFC_COUNTERS(ROCE_DP_PFC_ENUM)
#undef ROCE_DP_PFC_ENUM
	ROCE_DP_PFC_CNT_NUM
};

/** The counters' names and descriptions ("pfc", published as PFC_<NAME>). */
extern const struct roce_counter_family roce_dp_pfc_counter_family;

/** A port's PFC. Fields are the library's; read them with roce_dp_pfc_read(). */
struct roce_dp_pfc {
	uint64_t until[ROCE_PFC_NB_PRIO];   /**< paused while now < until (ns) */
	uint64_t until_max;                 /**< nothing is paused from then on */
	uint64_t since[ROCE_PFC_NB_PRIO];   /**< start of the current pause without a break */
	uint64_t last_rx[ROCE_PFC_NB_PRIO]; /**< last pause indication of a storm */
	int64_t paused_ns[ROCE_PFC_NB_PRIO];/**< pauses so far, the rest of the current one in */
	uint64_t pauses[ROCE_PFC_NB_PRIO];  /**< pause indications, per priority */
	uint64_t resumes[ROCE_PFC_NB_PRIO]; /**< resume indications, per priority */
	uint64_t cnt[ROCE_DP_PFC_CNT_NUM];
	uint64_t link_mbps;                 /**< pause quanta run at this speed (0: 100 Gb/s) */
	uint64_t link_fixed_mbps;           /**< set by hand: link_mbps does not follow the port */
	uint64_t watchdog_ns;               /**< 0: no watchdog */
	uint8_t storm;                      /**< priorities whose pauses the watchdog ignores */
	uint8_t mode;                       /**< enum roce_dp_pfc_mode (never AUTO) */
	uint8_t prios;                      /**< priorities with PFC (default all) */
	uint8_t dscp2prio[64];              /**< priority of untagged IP frames, by DSCP */
	rte_spinlock_t lock;                /**< writers: the receive paths of the workers */
};

/** Initialise @p pp: software PFC, the default DSCP map (DSCP / 8), a 100 ms watchdog. */
void roce_dp_pfc_init(struct roce_dp_pfc *pp);

/**
 * A MAC control frame received on the port (or made by its tx bottleneck): parse it, count
 * it, and in software mode apply its pauses and resumes. Outside input: any bytes.
 *
 * @param frame
 *   The frame from its destination MAC on.
 * @param len
 *   Its length.
 * @param now
 *   The dataplane's clock, ns.
 * @return
 *   What roce_pfc_parse() found: ROCE_PFC_NOT_CTRL (not counted here), ROCE_PFC_OK, or the
 *   reason it was refused (counted).
 */
enum roce_pfc_result roce_dp_pfc_rx(struct roce_dp_pfc *pp, const uint8_t *frame, uint32_t len,
		uint64_t now);

/**
 * A frame the classifier found to be no RoCE, ARP, IP (ROCE_PKT_OTHER) on the port: if it is
 * a MAC control frame, roce_dp_pfc_rx() it (an mbuf chain is read in one piece).
 *
 * @return
 *   1: a MAC control frame, counted here (the caller frees it); 0: none of PFC's business.
 */
int roce_dp_pfc_input(struct roce_dp_pfc *pp, const struct rte_mbuf *m, uint64_t now);

struct roce_dp;

/** @return port @p port's PFC, or NULL. */
struct roce_dp_pfc *roce_dp_port_pfc(struct roce_dp *dp, unsigned int port);

/**
 * @return the priorities paused at @p now, a bit each; 0 after one load while none is.
 */
static inline uint8_t
roce_dp_pfc_paused(const struct roce_dp_pfc *pp, uint64_t now)
{
	uint8_t mask = 0;
	unsigned int p;

	if (likely(now >= __atomic_load_n(&pp->until_max, __ATOMIC_ACQUIRE)))
		return 0;
	for (p = 0; p < ROCE_PFC_NB_PRIO; p++)
		if (now < __atomic_load_n(&pp->until[p], __ATOMIC_RELAXED))
			mask |= (uint8_t)(1u << p);
	return mask;
}

/** A port's PFC as roce_dp_pfc_read() sees it. */
struct roce_dp_pfc_state {
	uint8_t mode;                        /**< enum roce_dp_pfc_mode */
	uint8_t prios;                       /**< priorities with PFC */
	uint8_t paused;                      /**< priorities paused now */
	uint8_t storm;                       /**< priorities the watchdog ignores */
	uint64_t link_mbps;                  /**< 0: unknown (100 Gb/s assumed) */
	uint64_t link_fixed_mbps;            /**< 0: link_mbps is the port's */
	uint64_t watchdog_ns;
	uint64_t paused_left_ns[ROCE_PFC_NB_PRIO]; /**< how long each stays paused from now */
	uint64_t paused_ns[ROCE_PFC_NB_PRIO];      /**< time paused so far, per priority */
	uint64_t pauses[ROCE_PFC_NB_PRIO];
	uint64_t resumes[ROCE_PFC_NB_PRIO];
	uint64_t cnt[ROCE_DP_PFC_CNT_NUM];   /**< PAUSED_NS up to @p now */
	uint8_t dscp2prio[64];
};

/** Read @p pp at @p now (any thread). */
void roce_dp_pfc_read(struct roce_dp_pfc *pp, uint64_t now, struct roce_dp_pfc_state *st);

/**
 * Set the mode (not AUTO), the priorities with PFC and the watchdog timeout (0: none), under
 * the lock (any thread); pauses that are not honoured any more end at @p now, storms are
 * forgotten.
 */
void roce_dp_pfc_configure(struct roce_dp_pfc *pp, enum roce_dp_pfc_mode mode, uint8_t prios,
		uint64_t watchdog_ns, uint64_t now);

/**
 * The link speed the port reports (0: unknown), from the control thread; ignored while a
 * speed was set by hand.
 */
void roce_dp_pfc_set_link(struct roce_dp_pfc *pp, uint64_t link_mbps);

/**
 * Reckon pause quanta at @p mbps whatever the port reports (0: follow the port again, from
 * its next report). For emulated links: memif reports 100 Gb/s, where 65535 quanta are
 * 335 us, shorter than a descheduled daemon's silence.
 */
void roce_dp_pfc_fix_link(struct roce_dp_pfc *pp, uint64_t mbps);

/** Set the DSCP -> priority map (64 entries, each 0-7) of untagged frames. */
void roce_dp_pfc_set_dscp_map(struct roce_dp_pfc *pp, const uint8_t map[64]);

/** @return "sw", "hw", "off" or "auto". */
const char *roce_dp_pfc_mode_name(enum roce_dp_pfc_mode mode);

/** A port's PFC settings, as roced's [portN] pfc, pfc_prios, dscp2prio, pfc_watchdog give. */
struct roce_dp_pfc_conf {
	uint8_t mode;                 /**< enum roce_dp_pfc_mode; AUTO: hw where the PMD can */
	uint8_t prios;                /**< priorities with PFC, a bit each (0: all) */
	uint8_t dscp2prio[64];        /**< priority of each DSCP (frames' PCP on VLAN ports too) */
	uint32_t watchdog_ms;         /**< 0: none; at most ROCE_DP_PFC_WATCHDOG_MAX_MS */
	uint32_t high_water;          /**< hardware PFC's XOFF threshold, in the PMD's unit */
	uint32_t low_water;           /**< its XON threshold (both 0: the PMD's own) */
};

/** Fill @p c with the defaults: auto, every priority, DSCP / 8, a 100 ms watchdog. */
void roce_dp_pfc_conf_defaults(struct roce_dp_pfc_conf *c);

/**
 * Configure port @p port's PFC, once its port is started. hw or auto: hardware PFC through
 * rte_eth_dev_priority_flow_ctrl_set() for each priority of @p c (full: pause frames sent by
 * the NIC's rx buffer thresholds, and pauses received honoured by its transmit), or where the
 * PMD has only the queue-based variant (rte_eth_dev_priority_flow_ctrl_queue_configure()) and
 * one priority is asked for, every queue of the port to that priority. A PMD without either
 * (memif, af_packet, tap, and in DPDK 22.11 also mlx5 and ice, whose PFC is set in the kernel
 * or firmware), or refusing the settings, leaves auto in software mode; hw then fails. @p msg
 * gets the one line the caller logs, saying which and why.
 *
 * @return
 *   0, -EINVAL (a setting out of range), or the PMD's -errno when hw was asked for.
 */
int roce_dp_pfc_setup(struct roce_dp *dp, unsigned int port, const struct roce_dp_pfc_conf *c,
		char *msg, size_t len);

#endif /* ROCE_DP_PFC_H */
