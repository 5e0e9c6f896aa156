/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_IMPAIR_H
#define ROCE_IMPAIR_H

/**
 * @file
 * Seeded, reproducible network impairment on any port and direction: uniform loss, bursty
 * (Gilbert-Elliott) loss, reordering, duplication, delay with jitter, ECN CE marking and a
 * rate limit. Receive runs in ethdev rx callbacks on the lcore that polls the queue (a port
 * whose rx was never impaired has none). Transmit runs in the caller's transmit path: the
 * dataplane calls roce_impair_tx_prepare() right before rte_eth_tx_burst() and
 * roce_impair_tx_poll() once per loop, so nothing is ever added to the link.
 *
 * Each (port, direction, queue) draws from its own PRNGs (one stream per impairment, seeded
 * from the configured seed with splitmix64), so the same seed and the same packet sequence
 * give the same decisions, and turning one impairment on does not change another's.
 *
 * Per packet, in this order: rate limit (a policer: over-rate packets are dropped, never
 * queued, in both directions), Gilbert-Elliott loss, uniform loss, ECN marking, duplication,
 * the bottleneck queue, reordering, delay.
 *
 * The bottleneck (bneck=) is a switch's egress queue: eight FIFOs, one per priority (the
 * frame's VLAN PCP, else its DSCP / 8), sharing a buffer, served by deficit round robin at the
 * configured wire rate on the stage's clock (a frame leaves when its last bit would have:
 * length + 24 bytes of preamble, FCS and gap at the rate). RED (red=) marks ECT packets CE
 * with a probability rising linearly from 0 at kmin to pmax at kmax of their priority's queue
 * and always above kmax, and drops Not-ECT packets of lossy priorities likewise. A packet
 * that does not fit the buffer is dropped (tail drop). In lossless mode (lossless=) a
 * priority whose queue reaches XOFF bytes is paused with an 802.1Qbb PFC frame, refreshed at
 * half its pause time while the queue stays above XON, and resumed (time 0) at XON; the
 * frames wait in the stage for the transmitting code (roce_impair_ctrl()). The queue depth
 * each arriving packet finds in its priority's queue is sampled (roce_impair_queue_stats()).
 * With bneck_to= only frames to that IPv4 or IPv6 destination (a prefix) queue: the others
 * pass as through another, uncongested egress port of the same switch, while the pauses of
 * a lossless priority stop them at the sender all the same (PFC's head-of-line blocking).
 *
 * Configuration changes come from one control thread at a time: a new immutable
 * configuration is published by pointer and the old one freed after every queue has left it
 * (a per-queue sequence count, no lock on the fast path).
 */

#include <stdint.h>
#include <stddef.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "roce_counters.h"

/** A direction. */
enum roce_impair_dir {
	ROCE_IMPAIR_RX = 0,
	ROCE_IMPAIR_TX = 1,
	ROCE_IMPAIR_NB_DIRS
};

/** Direction bits of roce_impair_spec::dirs. */
#define ROCE_IMPAIR_DIR_RX (1u << ROCE_IMPAIR_RX)
#define ROCE_IMPAIR_DIR_TX (1u << ROCE_IMPAIR_TX)

/** Reorder depth limit and number of packets one queue may hold back for reordering. */
#define ROCE_IMPAIR_MAX_DEPTH 64
/** Delay line of one queue: packets beyond it are dropped (counted as overflow). */
#define ROCE_IMPAIR_LINE_SIZE 4096
/** Longest delay + jitter, and longest reorder timeout. */
#define ROCE_IMPAIR_MAX_DELAY_NS 1000000000ull
/** Longest spec string roce_impair_parse() accepts. */
#define ROCE_IMPAIR_SPEC_MAX 512
/** Packets one bottleneck queue holds at most, whatever its buffer. */
#define ROCE_IMPAIR_BNECK_SLOTS 16384
/** Bytes of preamble, start delimiter, FCS and inter-frame gap a frame adds on the wire. */
#define ROCE_IMPAIR_WIRE_OVERHEAD 24
/** PFC frames one stage keeps for the transmitting code to take (roce_impair_ctrl()). */
#define ROCE_IMPAIR_CTRL_MAX 16

/**
 * A parsed impairment specification (roce_impair_parse()). Probabilities are in [0, 1];
 * zero turns an impairment off.
 */
struct roce_impair_spec {
	uint16_t port;          /**< port= (default 0) */
	uint8_t has_port;       /**< port= was given */
	uint8_t dirs;           /**< dir=: ROCE_IMPAIR_DIR_* bits (default rx) */
	uint64_t seed;          /**< seed= (default 1) */
	double loss;            /**< loss=: uniform loss probability */
	double ge_p;            /**< ge=p:r:h:k: good -> bad transition probability, per packet */
	double ge_r;            /**< bad -> good */
	double ge_h;            /**< loss probability in the bad state (default 1) */
	double ge_k;            /**< loss probability in the good state (default 0) */
	double reorder;         /**< reorder=prob:depth:timeout: hold probability */
	uint16_t reorder_depth; /**< a held packet goes out after this many later ones (default 3) */
	uint64_t reorder_timeout_ns; /**< ... or after this long (default 1 ms) */
	double dup;             /**< dup=: duplication probability */
	uint64_t delay_ns;      /**< delay=time:jitter: fixed delay */
	uint64_t jitter_ns;     /**< plus a uniform 0..jitter; packets stay in order */
	double ecn;             /**< ecn=: probability to mark an ECT(0)/ECT(1) packet CE */
	uint64_t rate_bps;      /**< rate=bits:burst: policer rate in bit/s, 0: none */
	uint32_t rate_burst;    /**< bucket size in bytes (default 65536) */
	uint64_t bneck_bps;     /**< bneck=rate:buffer: queue drained at bit/s, 0: none */
	uint32_t bneck_buffer;  /**< its buffer in bytes (default 262144) */
	uint32_t red_kmin;      /**< red=kmin:kmax:pmax: marking starts above kmin bytes */
	uint32_t red_kmax;      /**< ... reaches pmax at kmax, always above; 0: no RED */
	double red_pmax;        /**< marking probability at kmax */
	uint8_t red_deq;        /**< red=...:deq: ECT frames marked as they leave, by the queue
	                         *   behind them (mark-front), not as they arrive */
	uint32_t pfc_xoff;      /**< lossless=xoff:xon:prios:quanta: pause at xoff bytes, 0: lossy */
	uint32_t pfc_xon;       /**< resume at xon bytes (< xoff) */
	uint8_t pfc_prios;      /**< lossless priorities, a bit each (default 0xff) */
	uint16_t pfc_quanta;    /**< pause time of the pausing frames (default 65535) */
	uint8_t bneck_to_fam;   /**< bneck_to=addr[/len]: 4 or 6, 0: every frame queues */
	uint8_t bneck_to_len;   /**< the prefix length (default the whole address) */
	uint8_t bneck_to[16];   /**< the destination address (IPv4 in the first 4 bytes) */
};

/** Counters, per direction, summed over the queues. */
#define ROCE_IMPAIR_COUNTERS(X) \
	X(SEEN, seen, "packets that entered the impairment") \
	X(PASSED, passed, "packets handed on, duplicates and released ones included") \
	X(DROPPED_UNIFORM, dropped_uniform, "dropped by loss=") \
	X(DROPPED_BURST, dropped_burst, "dropped by the Gilbert-Elliott model (ge=)") \
	X(RATE_DROPPED, rate_dropped, "dropped by the rate limit (rate=)") \
	X(REORDERED, reordered, "held back and sent after later packets (reorder=)") \
	X(DUPLICATED, duplicated, "duplicates made (dup=)") \
	X(DELAYED, delayed, "packets that went through the delay line (delay=)") \
	X(CE_MARKED, ce_marked, "ECT packets marked CE (ecn=)") \
	X(OVERFLOW, overflow, "dropped because the delay line was full") \
	X(NOMEM, nomem, "duplicates not made for want of an mbuf") \
	X(BNECK_IN, bneck_in, "packets queued in the bottleneck (bneck=)") \
	X(BNECK_PAST, bneck_past, "packets to other destinations than bneck_to=, passed by " \
		"the bottleneck") \
	X(BNECK_OUT, bneck_out, "packets that left the bottleneck at its rate") \
	X(BNECK_OUT_BYTES, bneck_out_bytes, "bytes that left the bottleneck (frames without " \
		"FCS)") \
	X(TAIL_DROPPED, tail_dropped, "dropped by the bottleneck: its buffer was full (lossy " \
		"priorities)") \
	X(HEADROOM_DROPPED, headroom_dropped, "dropped by the bottleneck although lossless: " \
		"the buffer above XOFF was full") \
	X(RED_MARKED, red_marked, "ECT packets marked CE by RED (red=)") \
	X(RED_DROPPED, red_dropped, "Not-ECT packets of lossy priorities dropped by RED") \
	X(PFC_PAUSE_TX, pfc_pause_tx, "PFC frames made pausing priorities (at XOFF, and the " \
		"refreshes while above XON)") \
	X(PFC_RESUME_TX, pfc_resume_tx, "PFC frames made resuming priorities only (at XON)") \
	X(PFC_NOMEM, pfc_nomem, "PFC frames not made: no mbuf, or the stage's frames not taken")

/** Counter indexes, ROCE_IMPAIR_C_<name>. */
enum roce_impair_counter {
#define ROCE_IMPAIR_ENUM(n, s, d) ROCE_IMPAIR_C_##n,
	ROCE_IMPAIR_COUNTERS(ROCE_IMPAIR_ENUM)
#undef ROCE_IMPAIR_ENUM
	ROCE_IMPAIR_CNT_NUM
};

/** The counters' names ("dropped_uniform", as impair.show has them) and descriptions. */
extern const struct roce_counter_family roce_impair_counter_family;

/** The counters as the daemon publishes them: IMPAIR_RX_<NAME>, IMPAIR_TX_<NAME>. */
extern const struct roce_counter_group roce_impair_counter_group[ROCE_IMPAIR_NB_DIRS];

/** @return "rx" or "tx". */
const char *roce_impair_dir_name(enum roce_impair_dir dir);

/**
 * Parse a spec string: comma-separated key=value, e.g.
 * "port=0,dir=rx,seed=7,loss=0.01,ge=0.01:0.3:1:0,reorder=0.05:4,dup=1%,delay=50us:10us,
 * ecn=0.1,rate=10g:64k,bneck=10g:256k,red=20k:200k:0.01,lossless=128k:64k:0x08:65535,
 * bneck_to=10.0.0.2".
 * Probabilities are decimals in [0, 1] or percentages; times take
 * ns, us, ms or s (bare: us); rates take k, m, g, t (powers of 1000, bit/s); byte sizes take
 * k or m (powers of 1024). See doc/roced.8 for the grammar.
 *
 * @param s
 *   The string (outside input: any bytes, NUL-terminated).
 * @param spec
 *   Filled on success; defaults for what is not given.
 * @param err
 *   On failure, a one-line message naming the offending key (may be NULL).
 * @param errlen
 *   Size of @p err.
 * @return
 *   0, or -EINVAL.
 */
int roce_impair_parse(const char *s, struct roce_impair_spec *spec, char *err, size_t errlen);

/**
 * Write a spec in canonical form (only what differs from the defaults; port= and dir= only
 * when @p with_target). roce_impair_parse() of the result gives the same canonical form.
 *
 * @return
 *   The length written (as snprintf), or -ENOSPC when it did not fit.
 */
int roce_impair_format(const struct roce_impair_spec *spec, int with_target, char *buf,
		size_t len);

/** Fill @p spec with the defaults (nothing impaired, rx, port 0, seed 1). */
void roce_impair_spec_init(struct roce_impair_spec *spec);

/** @return whether @p spec impairs anything. */
int roce_impair_spec_active(const struct roce_impair_spec *spec);

/* ---- ethdev ports ---- */

struct roce_impair;

/**
 * Prepare impairment for a started port. Nothing is installed until roce_impair_set().
 *
 * @param port_id
 *   The ethdev.
 * @param nb_queues
 *   Its rx/tx queues (each polled by one lcore).
 * @param socket
 *   NUMA socket for the per-queue state.
 * @return
 *   The handle, or NULL with rte_errno set (ENOMEM, EINVAL).
 */
struct roce_impair *roce_impair_create(uint16_t port_id, uint16_t nb_queues, int socket);

/** Offset of the arrival-time dynfield, or -1 before roce_impair_arrival_register(). */
extern int roce_impair_arrival_off;
/** The dynflag saying an mbuf's arrival time is set. */
extern uint64_t roce_impair_arrival_flag;

/**
 * Register the arrival-time dynfield and flag (idempotent; roce_impair_set() does it). An rx
 * stage writes in each packet it lets through when the packet reached the host in its model:
 * when the bottleneck finished sending it, plus delay and reordering; in nanoseconds of the
 * TSC (the clock of lib/dataplane's workers). A worker takes a burst at once; what a NIC
 * would see one packet at a time (a CNP interval, say) can then go by these times.
 *
 * @return 0, or -errno from the mbuf dynfield registry.
 */
int roce_impair_arrival_register(void);

/**
 * @return 1 with the arrival time of @m in *@ns if an rx stage set one, else 0.
 */
static inline int
roce_impair_arrival(const struct rte_mbuf *m, uint64_t *ns)
{
	if (roce_impair_arrival_off < 0 || !(m->ol_flags & roce_impair_arrival_flag))
		return 0;
	*ns = *RTE_MBUF_DYNFIELD(m, roce_impair_arrival_off, const uint64_t *);
	return 1;
}

/**
 * Configure the directions in @p spec->dirs, then publish the configuration and wait until
 * no queue uses the previous one. The first rx configuration installs the rx callbacks; the
 * first tx configuration makes the tx stages, which do nothing until the transmitting code
 * calls roce_impair_tx_prepare(). PRNG, Gilbert-Elliott state and token bucket restart from
 * the seed; counters go on.
 *
 * @return
 *   0, -EINVAL (bad spec), -ENOMEM, -ENOTSUP (the ethdev has no rx callbacks), or the
 *   -errno of rte_eth_add_rx_callback().
 */
int roce_impair_set(struct roce_impair *im, const struct roce_impair_spec *spec);

/**
 * Stop impairing the directions in @p dirs. Held packets are released by the next bursts
 * (tx: the next roce_impair_tx_poll()); the rx callbacks stay installed, and both directions
 * cost one load and one fence per burst from then on.
 *
 * @return
 *   0, or -EINVAL for bad @p dirs.
 */
int roce_impair_clear(struct roce_impair *im, unsigned int dirs);

/**
 * The configuration of one direction.
 *
 * @return
 *   0 with @p spec filled, -ENOENT when the direction is not impaired.
 */
int roce_impair_get(const struct roce_impair *im, enum roce_impair_dir dir,
		struct roce_impair_spec *spec);

/**
 * Counters of one direction, summed over the queues (read while the queues run).
 *
 * @return
 *   1 when the direction was ever configured, else 0 (and zero counters).
 */
int roce_impair_counters(const struct roce_impair *im, enum roce_impair_dir dir,
		uint64_t cnt[ROCE_IMPAIR_CNT_NUM]);

/**
 * Counters of one direction, summed over every handle of the process (roced has one per port).
 * Callable from any thread; the telemetry commands /roce/impair/list and
 * /roce/impair/counters,PORT read the same handles.
 *
 * @return
 *   1 when the direction was ever configured on one of them, else 0 (and zero counters).
 */
int roce_impair_counters_total(enum roce_impair_dir dir, uint64_t cnt[ROCE_IMPAIR_CNT_NUM]);

/** What the bottleneck's queue depth samples say, for one direction or one stage. */
struct roce_impair_qstats {
	uint64_t samples;           /**< arrivals sampled since the configuration was set */
	uint64_t p50;               /**< bytes: median of the depths arrivals found */
	uint64_t p99;               /**< 99th percentile (within 1/64, the histogram's step) */
	uint64_t max;               /**< largest depth found */
	uint64_t depth;             /**< bytes queued now, all priorities */
	uint64_t depth_prio[8];     /**< bytes queued now, per priority */
	uint8_t paused;             /**< priorities paused by the last PFC frames */
};

/**
 * Queue depth samples and current depth of a direction's bottleneck, the queues' histograms
 * merged (read while the queues run: approximate while they change).
 *
 * @return
 *   1 when the direction was ever configured, else 0 (and zeros).
 */
int roce_impair_queue_stats(const struct roce_impair *im, enum roce_impair_dir dir,
		struct roce_impair_qstats *qs);

/**
 * Take the PFC frames the bottleneck of queue @p queue in direction @p dir has made. Call on
 * the lcore that polls that rx queue or transmits on that tx queue. The frames are the
 * caller's: an rx bottleneck's go out of the same port (they pause the peer, the sender
 * upstream of the queue); a tx bottleneck's pause our own transmit (the caller hands them to
 * its PFC receive path).
 *
 * @return
 *   Frames put in @p pkts (at most @p max).
 */
uint16_t roce_impair_ctrl(struct roce_impair *im, enum roce_impair_dir dir, uint16_t queue,
		struct rte_mbuf **pkts, uint16_t max);

/** @return whether tx was ever configured on @p im (its tx stages exist). */
int roce_impair_has_tx(const struct roce_impair *im);

/**
 * Transmit stage of tx queue @p queue: judge a burst about to be sent, and take out what is
 * due. Call it on the lcore that transmits on the queue (the only one touching its stage),
 * once tx was configured with roce_impair_set(), right before rte_eth_tx_burst().
 *
 * Each of the @p n packets is judged once and becomes the stage's: dropped (freed and
 * counted), held (reorder, delay line) or duplicated. Then up to @p max packets that are due
 * (these and earlier ones, in order) are put in @p pkts. The caller sends them and owns
 * whatever the port does not take: it must send those again itself, never through this
 * function, which would judge them a second time. Nothing is ever added to the link.
 *
 * @param pkts
 *   In: @p n packets; out: the packets to send.
 * @param n
 *   Packets to judge (0: only take out what is due, as roce_impair_tx_poll()).
 * @param max
 *   Room in @p pkts; may be less than @p n (0: judge only).
 * @param now
 *   The caller's clock, in nanoseconds.
 * @return
 *   Packets in @p pkts to send.
 */
uint16_t roce_impair_tx_prepare(struct roce_impair *im, uint16_t queue, struct rte_mbuf **pkts,
		uint16_t n, uint16_t max, uint64_t now);

/**
 * Take out the held packets of tx queue @p queue that are due at @p now, for the caller to
 * send (as roce_impair_tx_prepare() with nothing to judge). Call it every loop on the lcore
 * transmitting on the queue, so that held packets leave on time even when nothing else is
 * sent; with nothing held it costs a few loads and no fence.
 *
 * @return
 *   Packets in @p pkts (at most @p max) to send.
 */
uint16_t roce_impair_tx_poll(struct roce_impair *im, uint16_t queue, struct rte_mbuf **pkts,
		uint16_t max, uint64_t now);

/**
 * @return packets held in tx queue @p queue's stage (not due yet, or due and not taken out):
 *   a transmitter that sleeps when idle should not while this is not 0. Call on the lcore
 *   transmitting on the queue.
 */
unsigned int roce_impair_tx_held(const struct roce_impair *im, uint16_t queue);

/**
 * Remove the rx callbacks and free everything, held packets included. Call when no lcore
 * polls the port or calls roce_impair_tx_*() any more, before the mempools go.
 */
void roce_impair_destroy(struct roce_impair *im);

/* ---- one queue without ethdev: tests and in-memory links ---- */

struct roce_impair_stage;

/**
 * One queue's impairment, driven by the caller with its own clock.
 *
 * @param spec
 *   The configuration (copied); spec->port and @p queue seed the PRNGs as on a port.
 * @param dir
 *   Which seeding to use (both directions have the same burst semantics).
 * @param queue
 *   Queue index for the seeding.
 * @param hz
 *   Clock ticks per second of the @p now arguments (an rx stage stamps arrival times in
 *   nanoseconds of this clock: roce_impair_arrival()).
 * @return
 *   The stage, or NULL with rte_errno set (EINVAL, ENOMEM).
 */
struct roce_impair_stage *roce_impair_stage_create(const struct roce_impair_spec *spec,
		enum roce_impair_dir dir, uint16_t queue, uint64_t hz);

/**
 * Impair @p n packets in @p pkts and put out what is due at @p now: the semantics of the rx
 * callbacks and of roce_impair_tx_prepare().
 *
 * @param pkts
 *   In: @p n packets; out: the packets to hand on (the stage owns the rest).
 * @param max
 *   Room in @p pkts (may be less than @p n).
 * @return
 *   Packets in @p pkts.
 */
uint16_t roce_impair_stage_burst(struct roce_impair_stage *st, struct rte_mbuf **pkts,
		uint16_t n, uint16_t max, uint64_t now);

/**
 * Tell a stage the source MAC of its PFC frames and the link speed (Mb/s) their pause times
 * are reckoned at, for the refresh interval (ethdev stages take the port's; standalone ones
 * start with 02:00:00:00:00:00 and 100 Gb/s).
 */
void roce_impair_stage_set_link(struct roce_impair_stage *st, const uint8_t mac[6],
		uint64_t link_mbps);

/** Take the PFC frames a standalone stage has made (as roce_impair_ctrl()). */
uint16_t roce_impair_stage_ctrl(struct roce_impair_stage *st, struct rte_mbuf **pkts,
		uint16_t max);

/** Queue depth samples of one stage (as roce_impair_queue_stats()). */
void roce_impair_stage_queue_stats(const struct roce_impair_stage *st,
		struct roce_impair_qstats *qs);

/** Add the stage's counters to @p cnt. */
void roce_impair_stage_counters(const struct roce_impair_stage *st,
		uint64_t cnt[ROCE_IMPAIR_CNT_NUM]);

/** @return packets held in the stage (bottleneck, reorder and delay line). */
unsigned int roce_impair_stage_held(const struct roce_impair_stage *st);

/** Free a stage and the packets it holds. */
void roce_impair_stage_free(struct roce_impair_stage *st);

#endif /* ROCE_IMPAIR_H */
