/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_DATAPLANE_H
#define ROCE_DATAPLANE_H

/**
 * @file
 * The dataplane: worker lcores that poll ports, classify, hand RoCE packets to the transport
 * engine owning their QP, and transmit; and the control lcore's way into them.
 *
 * Each worker owns a transport engine (its QPs, timers, counters), one rx/tx queue pair per
 * port where the PMD has enough queues, an inbound ring for packets of its QPs that another
 * worker received, and an RPC ring. The control lcore never touches worker state: it runs a
 * function on the worker with roce_dp_call() and waits for the result.
 */

#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_ether.h>

#include "roce_counters.h"
#include "roce_dp_cc.h"
#include "roce_dp_verbs.h"
#include "roce_hist.h"
#include "roce_net.h"
#include "roce_port.h"
#include "roce_transport.h"
#include "roce_transport_counters.h"
#include "roce_wire.h"

/** Most ports and workers. */
#define ROCE_DP_MAX_PORTS 4
#define ROCE_DP_MAX_WORKERS 64

/** Each worker's QPNs start at (index + 1) << ROCE_DP_QPN_SHIFT: the owner is in the QPN. */
#define ROCE_DP_QPN_SHIFT 16
/** First QPN of worker @p idx; its engine hands out 1 << ROCE_DP_QPN_SHIFT from there. */
#define ROCE_DP_QPN_BASE(idx) (((uint32_t)(idx) + 1) << ROCE_DP_QPN_SHIFT)

/** The worker owning every port's QP1 (QPN 1, the GSI QP; roce_dp_gsi.h). */
#define ROCE_DP_GSI_WORKER 0

/**
 * @return the worker of @p nb_workers whose range holds @p qpn, or -1; for QPN 1, the worker
 *   owning the QP1s (ROCE_DP_GSI_WORKER), which picks the one of the packet's port.
 */
static inline int
roce_dp_qpn_worker(uint32_t qpn, unsigned int nb_workers)
{
	uint32_t idx = (qpn >> ROCE_DP_QPN_SHIFT) - 1;

	if (likely(idx < nb_workers))
		return (int)idx;
	/* Only a miss pays for the test: QPN 1 is below every worker's range. */
	return qpn == ROCE_GSI_QPN ? ROCE_DP_GSI_WORKER : -1;
}

/**
 * Default shortest zero-copy payload: over memif, 1 KiB ones went no faster zero-copy and
 * 4 KiB ones faster (bench/tx-zc.sh, doc/performance.md).
 */
#define ROCE_DP_TX_ZC_MIN 2048

/** Local addresses of a port. */
struct roce_dp_addr {
	uint8_t ip4[4];
	uint8_t prefix4;
	uint8_t gw4[4];
	uint8_t ip6[16];      /**< all zero: none */
	uint8_t prefix6;
	uint16_t vlan;        /**< 0: untagged */
};

/** Dataplane configuration. */
struct roce_dp_conf {
	uint16_t nb_ports;
	uint16_t port_ids[ROCE_DP_MAX_PORTS];
	struct roce_dp_addr addr[ROCE_DP_MAX_PORTS];
	uint16_t mtu;                    /**< IP MTU of the ports */
	uint16_t nb_workers;
	unsigned int worker_lcores[ROCE_DP_MAX_WORKERS];
	uint32_t nb_mbufs;               /**< per worker */
	uint16_t mbuf_data_room;         /**< bytes of packet per mbuf */
	uint32_t max_qps;                /**< per worker */
	uint32_t idle_sleep_us;          /**< sleep when idle (0: busy poll) */
	/** Per port: copy or zero-copy transmit of payloads (enum roce_port_tx_copy). */
	uint8_t tx_copy[ROCE_DP_MAX_PORTS];
	/**
	 * Per port, with zero-copy on: payloads shorter than this are copied; 0: 1 with
	 * tx_copy never, else ROCE_DP_TX_ZC_MIN.
	 */
	uint32_t tx_zc_min[ROCE_DP_MAX_PORTS];
	/** Queue pairs per port (port key queues): 0 for roce_port_setup()'s choice. */
	uint16_t queues[ROCE_DP_MAX_PORTS];
	/**
	 * Where roce_dp_create() puts, when it fails, one line naming the cause and the fix
	 * (a port the PMD cannot set up, a worker without memory); NULL: it logs the line.
	 */
	char *err;
	size_t err_len;
};

/** Per-worker counters, beyond the wire and transport ones. */
#define ROCE_DP_COUNTERS(X) \
	X(PORT_RX_PKTS, "frames received from ports") \
	X(PORT_RX_BYTES, "bytes received from ports") \
	X(PORT_TX_PKTS, "frames sent to ports") \
	X(PORT_TX_BYTES, "bytes sent to ports") \
	X(PORT_TX_DROP, "frames the port did not take") \
	X(TX_HANDOFF, "frames handed to the worker owning the port's queue, to send") \
	X(HANDOFF, "RoCE packets handed to the owning worker") \
	X(HANDOFF_DROP, "RoCE packets lost because the owner's inbound ring was full") \
	X(NOT_OURS, "RoCE packets for a QPN no worker owns") \
	X(ROCE_L2_DST, "RoCE frames not addressed to the port's MAC (another host's, broadcast, " \
		"multicast)") \
	X(ROCE_VLAN, "RoCE frames on another VLAN than the port's (priority tags, VID 0, pass)") \
	X(NET_PKTS, "ARP/ICMP/ND frames handled") \
	X(OTHER_DROP, "frames of no interest dropped") \
	X(RPC, "control requests run") \
	X(RPC_LATE, "control requests not run because their caller stopped waiting for them " \
		"(the worker was starved of CPU)") \
	X(CNP_DROP, "CNPs the notification point asked for but could not build (no mbuf)") \
	X(LOOP_NS, "nanoseconds the worker's loop ran (busy fraction: BUSY_NS / LOOP_NS)") \
	X(BUSY_NS, "nanoseconds of loop turns that did work (received, sent, ran a request)") \
	X(PFC_TX, "PFC frames sent to the ports: the pauses and resumes of a lossless rx " \
		"bottleneck, for the peer") \
	X(PFC_HELD, "frames held back because their priority was paused by PFC") \
	X(PFC_HOLD_FULL, "times a transmit object's PFC hold filled up, so that every priority " \
		"waited")

/** Dataplane counter indexes, ROCE_DP_<name>. */
enum roce_dp_counter {
#define ROCE_DP_ENUM(n, d) ROCE_DP_##n,
	ROCE_DP_COUNTERS(ROCE_DP_ENUM)
#undef ROCE_DP_ENUM
	ROCE_DP_CNT_NUM
};

struct roce_dp;
struct roce_worker;

/** A function the control lcore runs on a worker: returns 0 or -errno. */
typedef int (*roce_dp_fn)(struct roce_worker *w, void *arg);

/**
 * Create the dataplane: mempools, ports, engines. Workers are not started.
 *
 * @return
 *   The dataplane, or NULL with rte_errno set.
 */
struct roce_dp *roce_dp_create(const struct roce_dp_conf *conf);

/** Launch the workers on their lcores. @return 0 or -errno. */
int roce_dp_start(struct roce_dp *dp);

/** Stop the workers (moving every QP to ERR first) and wait for them. */
void roce_dp_stop(struct roce_dp *dp);

/** Free everything, closing the ports. */
void roce_dp_destroy(struct roce_dp *dp);

/**
 * Run @p fn on worker @p idx and wait for it. When the worker has not taken the request in
 * @p timeout_ms it is withdrawn: the worker will not run it (RPC_LATE). One the worker has
 * started is waited for to the end.
 *
 * @return
 *   What fn returned, -ETIMEDOUT when the worker did not take it in @p timeout_ms, -EBUSY
 *   when its request ring is full, -ENOMEM, -EINVAL for a bad index.
 */
int roce_dp_call(struct roce_dp *dp, unsigned int idx, roce_dp_fn fn, void *arg,
		unsigned int timeout_ms);

/** @return the number of workers. */
unsigned int roce_dp_nb_workers(const struct roce_dp *dp);

/** @return the lcore worker @p idx runs on, or -EINVAL. */
int roce_dp_worker_lcore(const struct roce_dp *dp, unsigned int idx);

/** @return the worker owning @p qpn, or -1. */
int roce_dp_qpn_owner(const struct roce_dp *dp, uint32_t qpn);

/** @return port @p i, or NULL. */
const struct roce_port *roce_dp_port(const struct roce_dp *dp, unsigned int i);

/**
 * Wait until every running worker has passed a quiescent point: none is then inside a PMD call
 * (rx/tx burst) that began before. For a PMD that frees queue memory behind the workers' back
 * (memif unmaps its peer's region on the interrupt thread when the peer goes). Callable from
 * any thread but a worker's.
 */
void roce_dp_quiesce(struct roce_dp *dp);

/** Grace periods roce_dp_quiesce() waited for, and ports roce_dp_port_watch() restarted. */
void roce_dp_quiesce_stats(const struct roce_dp *dp, uint64_t *quiesces, uint64_t *restarts);

/**
 * Port upkeep, from the control thread: a memif client whose link has been down for a second
 * is stopped and started (out of the workers' hands) so it reconnects to a restarted server;
 * deregistered MRs whose bytes zero-copy frames carried are freed once the PMD is done.
 *
 * @return the ports restarted.
 */
unsigned int roce_dp_port_watch(struct roce_dp *dp, uint64_t now_ns);

/**
 * The largest IB path MTU whose packets port @p i carries: the IP, UDP, BTH and extension
 * headers of the longest data packet (SR's too when @p sr) and the ICRC fit its IP MTU.
 *
 * @return
 *   256..4096, or 0 when not even 256 fits (or there is no such port).
 */
uint32_t roce_dp_path_mtu_max(const struct roce_dp *dp, unsigned int i, bool ipv6, bool sr);

/** @return the addresses of port @p i. */
const struct roce_dp_addr *roce_dp_addr(const struct roce_dp *dp, unsigned int i);

/**
 * Snapshot of one worker's counters, copied on that worker (via roce_dp_call).
 */
struct roce_worker_stats {
	uint64_t dp[ROCE_DP_CNT_NUM];
	uint64_t net[ROCE_NET_C_NUM];     /**< summed over the worker's ports */
	uint64_t xport[ROCE_XC_NUM];
	uint64_t cc[ROCE_CCC_NUM];        /**< congestion control (zeros until turned on) */
	struct roce_wire_stats wire;
};

/** Read a worker's counters (runs on the worker). @return 0 or -errno. */
int roce_dp_worker_stats(struct roce_dp *dp, unsigned int idx, struct roce_worker_stats *st);

/** The dataplane counters' names and descriptions, by enum roce_dp_counter. */
extern const struct roce_counter_family roce_dp_counter_family;

/**
 * The daemon's counters, group by group in the order they are published: dataplane,
 * transport, NET_ (lib/net), CC_ (lib/cc), RX_ (packet types), DROP_ (drop reasons), then
 * IMPAIR_RX_ and IMPAIR_TX_ (drivers/impair), PFC_ (pauses received), GSI_ (the GSI agent,
 * roce_dp_gsi.h), CAPTURE_ (roce_dp_capture.h). For doc/counters.md and tests.
 *
 * @return
 *   Group @p i, or NULL past the last one.
 */
const struct roce_counter_group *roce_dp_counter_group(unsigned int i);

/**
 * Sum the counters of workers [@p first, @p last), read on each worker.
 *
 * @return
 *   0, -EINVAL when @p last is past the last worker, or as roce_dp_worker_stats().
 */
int roce_dp_counters_sum(struct roce_dp *dp, unsigned int first, unsigned int last,
		struct roce_worker_stats *sum);

/**
 * Publish the counters of workers [@p first, @p last), summed, to @p sink, group by group
 * (roce_dp_counter_group()). The impairment groups come only when the range is every worker
 * and the direction was impaired, the GSI and capture groups only then (the capture group
 * once a capture has run): they are kept per port queue or for the daemon, not per worker. The
 * control
 * socket's counters command and the telemetry command /roce/counters both use this, so they
 * publish the same names.
 *
 * @param flags
 *   ROCE_COUNTERS_* flags (ROCE_COUNTERS_NONZERO).
 * @return
 *   0, or as roce_dp_counters_sum().
 */
int roce_dp_counters_emit(struct roce_dp *dp, unsigned int first, unsigned int last,
		unsigned int flags, roce_counter_sink sink, void *arg);

/**
 * Start the daemon's counters again from zero, as testpmd's "clear port stats": what
 * roce_dp_counters_sum(), roce_dp_counters_emit() and roce_dp_port_stats() report from now on
 * counts from this call. The workers' and the PMDs' own counters are left alone (telemetry's
 * /ethdev/ commands still show the PMD's totals); the values at this call are kept and
 * subtracted. A QP's own counters (roce_dp_qp_info) are its life's and are not cleared.
 *
 * @return
 *   0, or -errno of a worker's snapshot (the counters are then left as they were).
 */
int roce_dp_counters_clear(struct roce_dp *dp);

/**
 * The ethdev statistics of port @p i (struct rte_eth_stats, the per-queue arrays left out)
 * since the last roce_dp_counters_clear().
 *
 * @return
 *   0, -EINVAL for a bad port, or the -errno of rte_eth_stats_get().
 */
int roce_dp_port_stats(struct roce_dp *dp, unsigned int i, struct rte_eth_stats *st);

/**
 * The PMD's extended statistics of port @p i (rte_eth_xstats_get()) since the last
 * roce_dp_counters_clear(), one call of @p sink per statistic (its description NULL).
 *
 * @param flags
 *   ROCE_COUNTERS_NONZERO: only the statistics that are not zero.
 * @return
 *   0, -EINVAL for a bad port, -ENOMEM, or the -errno of the ethdev.
 */
int roce_dp_port_xstats(struct roce_dp *dp, unsigned int i, unsigned int flags,
		roce_counter_sink sink, void *arg);

/** What a traffic job does. */
enum roce_gen_mode {
	ROCE_GEN_BW,         /**< keep the send queue full of @c op */
	ROCE_GEN_RECV,       /**< keep the receive queue full */
	/** perftest write_lat: write, then wait until the peer's write lands (ping-pong). */
	ROCE_GEN_LAT_WRITE,
	/** perftest send_lat: send, then wait for the peer's send. */
	ROCE_GEN_LAT_SEND,
	/** perftest read_lat/atomic_lat: one @c op outstanding at a time. */
	ROCE_GEN_LAT_RTT,
	/** Verified mixed traffic (WRITE, SEND, READ, WRITE_IMM, FETCH_ADD, CMP_SWAP): every
	 * completion is checked for order and data. @c raddr is the peer's MIXED_RECV region. */
	ROCE_GEN_MIXED,
	/** The receiving side of MIXED: checks every message it is given; @c laddr/@c lbuf is
	 * its region (ROCE_MIX_REGION() bytes). */
	ROCE_GEN_MIXED_RECV,
	/** perftest send_bw -b: keep the send queue full of SENDs and the receive queue of
	 * receives (at @c recv_laddr) for the peer's, on one QP; with a count, done once that
	 * many are sent and as many received (exactly that many receives are posted). */
	ROCE_GEN_BW_BIDI,
	/** rdma-core's ibv_rc_pingpong / ibv_ud_pingpong: @c depth receives kept posted at
	 * @c recv_laddr, a SEND of @c size bytes from @c laddr once the previous one completed
	 * and the peer's message arrived (the @c initiator sends first); done after @c count
	 * sends and as many receives. */
	ROCE_GEN_PINGPONG,
	ROCE_GEN_MODE_NUM
};

/** MIXED: slots of the requester's region (its most messages in flight). */
#define ROCE_MIX_SLOTS 16u
/** MIXED: write slots of the receiver's region. */
#define ROCE_MIX_WSLOTS 256u
/** MIXED: largest message size. */
#define ROCE_MIX_MAX_SIZE 4096u
/** Bytes of a MIXED requester's region. */
#define ROCE_MIX_REGION(size) ((uint64_t)(size) * ROCE_MIX_SLOTS)
/** Bytes of a MIXED_RECV region with @p depth receives. */
#define ROCE_MIX_RECV_REGION(size, depth) \
	((uint64_t)(size) * (1 + ROCE_MIX_WSLOTS + (depth)) + 16)

/** A traffic job on one QP. */
struct roce_gen_conf {
	uint32_t qpn;
	enum roce_gen_mode mode;
	enum roce_wr_opcode op;
	uint32_t size;               /**< bytes per message */
	uint64_t count;              /**< messages; 0: until duration or stop */
	uint64_t duration_ns;        /**< 0: until count or stop */
	uint32_t depth;              /**< outstanding work requests (default: send queue size) */
	uint64_t rate_bps;           /**< bandwidth jobs: payload bit/s (0: none): WRITE and SEND
	                               through the per-QP pacer, READ and atomics by posting */
	/** Bandwidth jobs: post this many work requests at once, when that many fit in @depth
	 * (perftest's -l post list); 0 or 1: one at a time. */
	uint32_t post_list;
	/** Bandwidth jobs of send work requests: ask for the completion of every @c cq_mod-th
	 * one (perftest's -Q, CQ moderation), and of the one that fills the window or ends a
	 * counted job; 0 or 1: of every one. */
	uint32_t cq_mod;
	uint64_t laddr;              /**< local buffer (iova) and key */
	uint32_t lkey;
	uint64_t raddr;              /**< remote buffer and key */
	uint32_t rkey;
	/** The CQ the job consumes completions of; NULL: the QP's send CQ. */
	struct roce_cq *cq;
	/** Latency jobs: this side sends first (perftest: the write_lat server, the send_lat
	 * client). */
	uint8_t initiator;
	/** LAT_SEND, BW_BIDI: receive buffer (iova, same lkey). */
	uint64_t recv_laddr;
	/** LAT_WRITE: the last byte of the outgoing message (stamped with the iteration) and
	 * of the incoming one (polled for the peer's), as host pointers into a local MR. */
	uint8_t *post_byte;
	const volatile uint8_t *poll_byte;
	/** MIXED, MIXED_RECV: the local region as a host pointer, and the key both sides
	 * derive the messages from. */
	uint8_t *lbuf;
	uint64_t seed;
	/** A UD QP's jobs: where each SEND goes (the AH, roce_dp_ah_get(), of the QP's PD and
	 * port; the destination QPN and Q_Key), as ibv_send_wr::wr.ud. NULL for RC QPs and for
	 * a UD job that only receives. Receives of a UD QP take ROCE_GRH_LEN bytes more than
	 * @size (the GRH area, then the payload); a job counts the payload only. */
	struct roce_ah *ah;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
};

/** A traffic job's progress. */
struct roce_gen_stats {
	uint8_t running;
	uint64_t posted;
	uint64_t completed;
	uint64_t received;             /**< latency jobs: the peer's messages seen */
	uint64_t errors;
	uint64_t bytes;
	uint64_t start_ns;
	uint64_t end_ns;               /**< last completion, or now while running */
	uint64_t peak_bps;             /**< best bytes/s over ROCE_GEN_PEAK_NS windows */
	uint64_t verify_errors;        /**< MIXED: messages out of order or with wrong data */
	uint64_t first_bad;            /**< the first such message's index */
	int first_error;               /**< enum roce_wc_status of the first failed completion */
};

/** Window over which a job's peak rate is measured. */
#define ROCE_GEN_PEAK_NS 10000000ull

/** Start a job on the QP's worker. @return 0, -ENOENT (no QP), -EBUSY (a job runs). */
int roce_dp_gen_start(struct roce_dp *dp, const struct roce_gen_conf *conf);

/** Stop a job (outstanding work still completes). @return 0 or -ENOENT. */
int roce_dp_gen_stop(struct roce_dp *dp, uint32_t qpn);

/**
 * Read a job's progress and, for latency jobs when @p hist is not NULL, its histogram of
 * round-trip samples (perftest's: the time between two consecutive posts, in ns; a
 * one-way latency is half of it for write/send).
 *
 * @return 0, or -ENOENT.
 */
int roce_dp_gen_stats(struct roce_dp *dp, uint32_t qpn, struct roce_gen_stats *st,
		struct roce_hist *hist);

/** The sum of many jobs' progress. */
struct roce_gen_total {
	uint32_t jobs;
	uint32_t running;
	uint64_t posted;
	uint64_t completed;
	uint64_t received;
	uint64_t errors;
	uint64_t bytes;
	uint64_t peak_bps;             /**< sum of the jobs' peaks */
	uint64_t verify_errors;
	uint64_t max_ns;               /**< the longest job's time, end - start */
	int first_error;               /**< of the first job in error met */
};

/**
 * Add up the jobs of the QPs in @p qpns (sorted here, in place), or of every QP when @p qpns
 * is NULL: one call per worker, however many jobs (a query per job would disturb thousands
 * of them). @return 0.
 */
int roce_dp_gen_total(struct roce_dp *dp, uint32_t *qpns, uint32_t nb_qpns,
		struct roce_gen_total *total);


/**
 * Resolve the MAC of @p ip's next hop on port @p port, waiting up to @p timeout_ms (ARP or
 * neighbour discovery on the worker that reads the port's first queue, where replies land).
 *
 * @return
 *   0 with @p mac set, -ETIMEDOUT, or as roce_net_resolve().
 */
int roce_dp_resolve(struct roce_dp *dp, unsigned int port, const uint8_t *ip, int ipv6,
		struct rte_ether_addr *mac, unsigned int timeout_ms);

/** A neighbour entry of one worker's table on one port. */
struct roce_dp_neigh {
	struct roce_net_neigh_info info;
	uint16_t port;
	uint16_t worker;
	uint64_t age_ns;           /**< since its MAC was last set or confirmed */
	uint64_t idle_ns;          /**< since its last use */
};

/**
 * The neighbour entries of every worker on the ports in the bit mask @p ports: all, or
 * @p ip's (IPv6 with @p ipv6) when not NULL. Each worker reading a port has its own table.
 *
 * @return
 *   The entries there are (more than @p max when they did not fit @p out), or -errno.
 */
int roce_dp_neigh_list(struct roce_dp *dp, unsigned int ports, const uint8_t *ip, bool ipv6,
		struct roce_dp_neigh *out, unsigned int max);

/**
 * Forget neighbours on the ports in @p ports: every entry, or @p ip's. A connected QP keeps
 * the MAC it was connected with; the next resolution asks again.
 *
 * @return
 *   The entries forgotten, -EINVAL when @p ip cannot be a neighbour, or -errno.
 */
int roce_dp_neigh_flush(struct roce_dp *dp, unsigned int ports, const uint8_t *ip, bool ipv6);

struct roce_impair;

/**
 * Impair what the workers send on port @p port: from now on every frame for the port goes
 * through the tx stage of @p im (drivers/impair, its tx direction configured with
 * roce_impair_set()) on the queue's worker, right before rte_eth_tx_burst(), and held frames
 * go out when due. Nothing is added to the link. Ports never given one cost a NULL check.
 * Call from the control lcore; @p im must outlive the workers (destroy it after
 * roce_dp_stop()). Setting the same handle again does nothing.
 *
 * @return
 *   0, -EINVAL (bad port, NULL @p im, or another handle already set), or as roce_dp_call().
 */
int roce_dp_tx_impair(struct roce_dp *dp, unsigned int port, struct roce_impair *im);

/** @return nanoseconds of the dataplane's clock (TSC based). */
uint64_t roce_dp_now(void);

#endif /* ROCE_DATAPLANE_H */
