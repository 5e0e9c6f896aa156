/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_DP_GSI_H
#define ROCE_DP_GSI_H

/**
 * @file
 * QP1, the general services QP, of every dataplane port, and the GSI agent that serves it.
 *
 * Each port has a QP1 (UD, QPN 1, Q_Key 0x80010000, P_Key 0xFFFF) on worker
 * ROCE_DP_GSI_WORKER; a RoCE packet for QPN 1 goes to the QP1 of the port it came in on. The
 * worker keeps ROCE_DP_GSI_RECV_WQES receives posted on each (ROCE_DP_GSI_BUF bytes: the GRH
 * area and one MAD), and hands what they receive to the agent through a ring.
 *
 * The agent runs on the control thread: roce_dp_gsi_poll(), called from its loop, never
 * waits for a worker. Each datagram is parsed as a CM MAD (roce_cm_parse(), each refusal
 * counted under its verdict's name) and then treated as Linux's ib_cm treats it
 * (roce_cm_linux_action()): LAP and APR dropped; a SIDR_REQ answered with a SIDR_REP of
 * status 1 (IB_SIDR_UNSUPPORTED: no UD service listens here); a SIDR_REP matched against the
 * agent's own SIDR_REQs (roce_dp_gsi_sidr()); the connection messages (REQ, MRA, REJ, REP,
 * RTU, DREQ, DREP) handed to the hook a connection manager sets (roce_dp_gsi_set_hook()), or,
 * with none set, counted as NO_CM and left unanswered. What the agent counts is the GSI_
 * group of the daemon's counters (roce_dp_gsi_counter_family).
 *
 * Every function here is for the control thread (the one calling the verbs façade).
 */

#include <stdbool.h>
#include <stdint.h>

#include "roce_cm_msg.h"
#include "roce_counters.h"
#include "roce_grh.h"
#include "roce_mad.h"

struct roce_dp;

/* ROCE_DP_GSI_WORKER (roce_dataplane.h): the worker owning every port's QP1, worker 0, the
 * one that reads every port's first queue and resolves its neighbours. */
/** Receive WQEs kept posted on each port's QP1. */
#define ROCE_DP_GSI_RECV_WQES 64
/** Bytes of a QP1 receive buffer: the GRH area, then one MAD. */
#define ROCE_DP_GSI_BUF (ROCE_GRH_LEN + ROCE_MAD_SIZE)
/** MADs waiting for their destination's MAC at most (roce_dp_gsi_send()). */
#define ROCE_DP_GSI_PENDING 32
/** How long a MAD waits for its destination's MAC before it is dropped (TX_UNRESOLVED). */
#define ROCE_DP_GSI_RESOLVE_MS 3000

/** One end of a MAD: a port, and the peer's address and QP. */
struct roce_dp_gsi_addr {
	uint16_t port;       /**< dataplane port index it came in on, or goes out of */
	uint8_t ipv6;        /**< 1: @c ip is an IPv6 address */
	uint8_t ip[16];      /**< the peer's IP (IPv4 in the first 4 bytes), from the GRH area */
	/** Received: our address it was sent to (one of the port's), from the GRH area; not
	 *  used to send (the port's address of the family goes). */
	uint8_t local_ip[16];
	uint32_t qpn;        /**< the peer's QP: DETH source QP received, destination QP sent */
	/** The P_Key: QP1 takes only the default partition's, and sends 0xFFFF. */
	uint16_t pkey;
};

/**
 * The connection manager's entry: a CM message for its state machine (a REQ, MRA, REJ, REP,
 * RTU, DREQ or DREP; roce_cm_linux_action() ROCE_CM_ACT_HANDLE). Called on the control
 * thread from roce_dp_gsi_poll(); the callee may call roce_dp_gsi_send() and the verbs
 * façade. @p msg and @p mad are valid during the call only.
 *
 * @param ctx
 *   roce_dp_gsi_hook::ctx.
 * @param src
 *   Where it came from: its port, the sender's IP from the GRH area, its QP (1 for a CM),
 *   the P_Key.
 * @param msg
 *   The MAD, parsed (roce_cm_parse() said ROCE_CM_OK).
 * @param mad
 *   Its ROCE_MAD_SIZE bytes as received.
 */
typedef void (*roce_dp_gsi_recv_fn)(void *ctx, const struct roce_dp_gsi_addr *src,
		const struct roce_cm_msg *msg, const uint8_t *mad);

/** A connection manager's hook into the agent. */
struct roce_dp_gsi_hook {
	roce_dp_gsi_recv_fn recv;
	void *ctx;
};

/**
 * Set the hook CM messages go to, or take it away (@p hook NULL, or its @c recv NULL): they
 * are then counted as NO_CM and dropped.
 *
 * @return
 *   0.
 */
int roce_dp_gsi_set_hook(struct roce_dp *dp, const struct roce_dp_gsi_hook *hook);

/**
 * Send a MAD from QP1 of port @p dst->port to QP @p dst->qpn (1 for a CM; 0 means 1) at
 * @p dst->ip, as rxe sends every CM MAD: UD SEND Only with AckReq, BTH P_Key 0xFFFF, DETH
 * Q_Key 0x80010000 and source QP 1, UDP source port 0xD872 (QP1's), DSCP 0, not ECT, TTL 64,
 * don't fragment. @p dst->pkey is not used. The destination's next-hop MAC comes from the
 * port's neighbour table; while it resolves the MAD waits (at most ROCE_DP_GSI_PENDING of
 * them, each up to ROCE_DP_GSI_RESOLVE_MS) and roce_dp_gsi_poll() sends it when it can.
 *
 * @return
 *   0 (sent, or waiting for the MAC), -EINVAL (no such port, or the port has no address of
 *   that family), -ENOSPC (too many waiting already: counted TX_PENDING_FULL), or the -errno
 *   of the post (counted TX_ERR).
 */
int roce_dp_gsi_send(struct roce_dp *dp, const struct roce_dp_gsi_addr *dst,
		const uint8_t mad[ROCE_MAD_SIZE]);

/**
 * Serve QP1: take what the ports' QP1s received and act on it, and send the MADs whose MAC
 * has resolved since. Call from the control thread's loop; it waits for no worker unless it
 * has a MAD to send.
 *
 * @return
 *   MADs received and sent: non-zero means call again soon.
 */
unsigned int roce_dp_gsi_poll(struct roce_dp *dp);

/**
 * Before the control thread sleeps (in poll() on roce_dp_gsi_wake_fd() and its other fds):
 * from now until roce_dp_gsi_poll(), a MAD a worker hands to the agent makes the wake fd
 * readable, so the loop need not wake on a timer to look for MADs.
 *
 * @return
 *   The longest the thread may sleep, in ms, at most @p max_ms: 0 when MADs are queued
 *   already, less when a MAD waiting for its MAC is retried sooner.
 */
int roce_dp_gsi_idle(struct roce_dp *dp, int max_ms);

/** The eventfd roce_dp_gsi_idle() arms (roce_dp_gsi_poll() reads it), or -1. */
int roce_dp_gsi_wake_fd(const struct roce_dp *dp);

/** A SIDR exchange (roce_dp_gsi_sidr()): what came back. */
struct roce_dp_gsi_sidr_result {
	uint32_t request_id;
	uint8_t status;          /**< enum roce_cm_sidr_status of the SIDR_REP */
	uint32_t qpn;            /**< the service's QP, with status 0 */
	uint32_t qkey;           /**< its Q_Key */
	uint64_t service_id;     /**< as the SIDR_REP says it */
	uint64_t rtt_ns;         /**< from sending the SIDR_REQ to taking in the SIDR_REP */
};

/**
 * Resolve a service ID at a peer (IBA 12.11, service ID resolution): send a SIDR_REQ for
 * @p service_id from port @p dst->port's QP1 to @p dst, and serve QP1 (roce_dp_gsi_poll())
 * until the SIDR_REP with its request ID comes back or @p timeout_ms have passed. A peer's
 * CM answering says its QP1 is reachable: the path, the Q_Key, the P_Key and the ICRC work.
 * Linux answers status 1 (IB_SIDR_UNSUPPORTED) when no UD service (RDMA_PS_UDP, RDMA_PS_IB)
 * listens on the ID.
 *
 * @return
 *   0 with @p res filled, -ETIMEDOUT (no answer), -EBUSY (another SIDR_REQ is pending), or
 *   as roce_dp_gsi_send().
 */
int roce_dp_gsi_sidr(struct roce_dp *dp, const struct roce_dp_gsi_addr *dst,
		uint64_t service_id, unsigned int timeout_ms, struct roce_dp_gsi_sidr_result *res);

/** What a port's QP1 is, as its worker has it. */
struct roce_dp_gsi_port {
	uint8_t ok;              /**< QP1 exists */
	uint8_t state;           /**< enum roce_qp_state */
	uint32_t recv_posted;    /**< receive WQEs posted and not yet completed */
	uint64_t rx_pkts;        /**< its transport counters: datagrams taken */
	uint64_t tx_pkts;        /**< datagrams sent */
	uint64_t qkey_drop;      /**< UD_QKEY_DROP: a Q_Key not 0x80010000 */
	uint64_t no_recv;        /**< UD_NO_RECV */
	uint64_t too_long;       /**< UD_RX_TOO_LONG: longer than a MAD */
	uint64_t bad_pkey;       /**< BAD_PKEY */
};

/**
 * Read port @p port's QP1 (on its worker).
 *
 * @return
 *   0, -EINVAL (no such port), or as roce_dp_call().
 */
int roce_dp_gsi_port_query(struct roce_dp *dp, unsigned int port, struct roce_dp_gsi_port *out);

/** The agent's counters, each with what it counts. */
#define ROCE_DP_GSI_COUNTERS(X) \
	X(RX, "MADs QP1 received on any port") \
	X(BAD_LEN, "datagrams to QP1 that are not 256 bytes (longer ones: QP1's UD_RX_TOO_LONG)") \
	X(BAD_BASE_VERSION, "MADs whose base version is not 1") \
	X(BAD_CLASS, "MADs of a management class other than the CM's (0x07)") \
	X(BAD_CLASS_VERSION, "CM MADs of a class version other than 2") \
	X(BAD_METHOD, "CM MADs whose method is not Send() (Linux's CM registers for Send only)") \
	X(BAD_ATTR, "CM MADs with an attribute ID that has no message (ClassPortInfo included)") \
	X(BAD_FIELD, "CM MADs with a field out of its range (an ARI or info length over 72)") \
	X(BAD_DGID, "datagrams to QP1 not addressed to an IP of the port they came in on") \
	X(DROP, "LAP and APR: dropped, nothing sent, as Linux does on RoCE") \
	X(SIDR_REQ, "SIDR_REQs received") \
	X(SIDR_REP_TX, "SIDR_REPs sent: status 1 (unsupported), no UD service listens here") \
	X(SIDR_REP_RX, "SIDR_REPs received for our SIDR_REQ") \
	X(SIDR_UNMATCHED, "SIDR_REPs for no SIDR_REQ of ours, dropped") \
	X(CM, "connection messages (REQ, MRA, REJ, REP, RTU, DREQ, DREP) handed to the CM") \
	X(NO_CM, "connection messages dropped, nothing answered: no connection manager runs") \
	X(TX, "MADs sent from QP1") \
	X(TX_ERR, "MADs QP1 refused to send (its send queue full, or not in RTS)") \
	X(TX_UNRESOLVED, "MADs dropped: the destination's MAC did not resolve in time") \
	X(TX_PENDING_FULL, "MADs dropped: too many were waiting for their destination's MAC") \
	X(RX_RING_FULL, "datagrams QP1's worker dropped: the agent's ring was full") \
	X(RECV_ERR, "QP1 receive completions in error (flushed: QP1 left RTS)")

/** The agent's counter indexes, ROCE_DP_GSI_C_<name>. */
enum roce_dp_gsi_counter {
#define ROCE_DP_GSI_ENUM(n, d) ROCE_DP_GSI_C_##n,
	ROCE_DP_GSI_COUNTERS(ROCE_DP_GSI_ENUM)
#undef ROCE_DP_GSI_ENUM
	ROCE_DP_GSI_C_NUM
};

/** The agent's counters' names and descriptions, by enum roce_dp_gsi_counter. */
extern const struct roce_counter_family roce_dp_gsi_counter_family;

/** The agent's counters as the daemon publishes them, GSI_ in front. */
extern const struct roce_counter_group roce_dp_gsi_counter_group;

/** Copy the agent's counters (ROCE_DP_GSI_C_NUM values) to @p out. */
void roce_dp_gsi_counters(const struct roce_dp *dp, uint64_t *out);

#endif /* ROCE_DP_GSI_H */
