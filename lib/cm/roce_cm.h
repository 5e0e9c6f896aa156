/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_CM_H
#define ROCE_CM_H

/**
 * @file
 * The IB connection manager's connection state machine (IBA vol. 1 chapter 12), as Linux's
 * drivers/infiniband/core/cm.c runs it, for the RDMA CM (cma.c, librdmacm) peers of RoCE.
 *
 * A pure library: no ports, no lcores, no sockets, no allocation after roce_cm_create().
 * It runs on the caller's clock (nanoseconds, any origin: TSC-derived in the daemon,
 * virtual in tests): every entry point takes @c now, and roce_cm_next_deadline() says when
 * roce_cm_tick() is due next. MADs go out through roce_cm_ops::send and come in through
 * roce_cm_input(); what happens to connections is told through roce_cm_ops::event.
 *
 * Like ib_cm, it does not touch QPs: its events carry what the user programs into its RC QP
 * (struct roce_cm_qp_attr, the fields of ib_cm_init_qp_attr()/rdma_init_qp_attr(), in
 * lib/transport's units: struct roce_qp_attr takes them as they are).
 *
 * The exchange, active side (rdma_connect):
 *	roce_cm_connect()      REQ ->          (resent every timeout, max_cm_retries times)
 *	ROCE_CM_EV_REP         <- REP          user: QP to RTR and RTS, then roce_cm_rtu()
 *	roce_cm_rtu()          RTU ->          ROCE_CM_EV_ESTABLISHED
 * passive side (rdma_listen, rdma_accept):
 *	ROCE_CM_EV_REQ         <- REQ          user: QP to RTR and RTS, then roce_cm_accept()
 *	roce_cm_accept()       REP ->          (resent like the REQ, on the REQ's timeouts)
 *	ROCE_CM_EV_ESTABLISHED <- RTU          (or roce_cm_established(): the QP got a packet)
 * either side (rdma_disconnect):
 *	roce_cm_disconnect()   DREQ ->         (resent)      ROCE_CM_EV_DISCONNECTED <- DREP
 *	ROCE_CM_EV_DREQ        <- DREQ         user: QP to ERR, then roce_cm_disconnect(): DREP ->
 *	then time wait (the connection's ACK timeout), ROCE_CM_EV_TIMEWAIT_EXIT.
 *
 * Handles: a struct roce_cm_conn is valid from roce_cm_connect() or the ROCE_CM_EV_REQ that
 * brings it until roce_cm_reject() or roce_cm_destroy() returns, or until the callback of an
 * event with roce_cm_event::released set returns. The library keeps what it still needs
 * (a connection in time wait after the user let it go) on its own, without events.
 *
 * The event callback may call every function here except roce_cm_free(), roce_cm_input()
 * and roce_cm_tick(); roce_cm_ops::send must not call into the library. Single-threaded: one
 * instance belongs to one thread.
 */

#include <stddef.h>
#include <stdint.h>

#include "roce_cm_msg.h"
#include "roce_cma.h"

struct roce_cm;
struct roce_cm_conn;

#define ROCE_CM_QP1_QKEY 0x80010000u	/**< the GSI QP's Q_Key (IB_QP1_QKEY) */
#define ROCE_CM_DEFAULT_PKEY 0xFFFF	/**< the only P_Key on RoCE */

/** @name Values as Linux's RDMA CM uses them (cma.c), and rxe's, from the captures. @{ */
#define ROCE_CM_CMA_RESPONSE_TIMEOUT 20	/**< CMA_CM_RESPONSE_TIMEOUT: 4.096 us * 2^20 */
#define ROCE_CM_CMA_MAX_CM_RETRIES 15	/**< CMA_MAX_CM_RETRIES */
#define ROCE_CM_CMA_PACKET_LIFETIME 18	/**< CMA_IBOE_PACKET_LIFETIME of the captures' kernel */
#define ROCE_CM_RXE_ACK_DELAY 15	/**< rxe's CA ACK delay (REP target ACK delay) */
/** @} */

/** @name roce_cm_qp_attr::qp_access_flags: the values of lib/transport's ROCE_ACCESS_*. @{ */
#define ROCE_CM_ACCESS_REMOTE_WRITE (1u << 1)
#define ROCE_CM_ACCESS_REMOTE_READ (1u << 2)
#define ROCE_CM_ACCESS_REMOTE_ATOMIC (1u << 3)
/** @} */

/** A QP1 (GSI) address: where a MAD goes, or where one came from. */
struct roce_cm_addr {
	uint8_t port;			/**< local port, from 1 (as verbs) */
	uint8_t local_gid[16];		/**< our address: IPv4-mapped (::ffff:a.b.c.d) or IPv6 */
	uint8_t remote_gid[16];		/**< the peer's */
	/** The peer's MAC when known (the received frame's source), all zeros when not: the
	 *  user resolves it then. Kept and handed back as it came. */
	uint8_t remote_mac[6];
	uint32_t remote_qpn;		/**< 1 */
	uint32_t qkey;			/**< ROCE_CM_QP1_QKEY */
	uint16_t pkey;			/**< ROCE_CM_DEFAULT_PKEY */
};

/** The route of a connection, as the RDMA CM's path record for RoCE. */
struct roce_cm_route {
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	uint32_t flow_label;		/**< 20 bits; rdma_cm's: roce_cma_flow_label() */
	uint8_t traffic_class;
	uint8_t hop_limit;		/**< 64 on Linux's IPv4 routes; <= 1: subnet-local */
	uint8_t sl;			/**< 4 bits */
	uint8_t packet_rate;		/**< 6 bits; 0 (IB_RATE_PORT_CURRENT) on RoCE */
	uint8_t packet_life_time;	/**< 5 bits; ROCE_CM_CMA_PACKET_LIFETIME */
	uint8_t path_mtu;		/**< IB MTU code, 1 (256) to 5 (4096): enum roce_mtu */
	uint16_t pkey;
};

/**
 * What the user programs into its RC QP (ib_cm_init_qp_attr() and rdma_init_qp_attr()):
 * INIT: qp_access_flags, port; RTR: the route (address vector), path_mtu, dest_qp_num,
 * rq_psn, max_dest_rd_atomic, min_rnr_timer; RTS: sq_psn, timeout, retry_cnt, rnr_retry,
 * max_rd_atomic. Responder resources and initiator depth are crossed as librdmacm expects:
 * what the peer may have in flight towards us is our max_dest_rd_atomic.
 */
struct roce_cm_qp_attr {
	uint32_t qp_num;		/**< our QP */
	uint32_t dest_qp_num;		/**< the peer's QP */
	/** What we receive first: the starting PSN we announced. As Linux's CM (and rxe on
	 * the wire, ../shared/captures/roce_rdma_cm_*.pcap) has it, the starting PSN of a REQ or
	 * REP is the one its sender expects to receive, and the other side sends from it. */
	uint32_t rq_psn;
	uint32_t sq_psn;		/**< what we send first: the peer's starting PSN */
	uint8_t path_mtu;		/**< IB MTU code: the REQ's */
	uint8_t max_rd_atomic;		/**< our initiator depth */
	uint8_t max_dest_rd_atomic;	/**< our responder resources */
	uint8_t timeout;		/**< local ACK timeout, 4.096 us * 2^timeout */
	uint8_t retry_cnt;		/**< the REQ's retry count */
	uint8_t rnr_retry;		/**< active: the REP's RNR retry count, passive: REQ's */
	uint8_t min_rnr_timer;		/**< 0, as ib_cm sets it */
	uint8_t port;			/**< local port, from 1 */
	uint32_t qp_access_flags;	/**< ROCE_CM_ACCESS_*: remote write, read and atomic when
					 *   max_dest_rd_atomic is not 0 (cm_init_qp_init_attr) */
	struct roce_cm_route route;	/**< the address vector */
	uint8_t remote_mac[6];		/**< from roce_cm_addr, zeros when unknown */
};

/** Connection states: Linux's enum ib_cm_state (no LISTEN: listeners are not connections;
 *  no SIDR states: SIDR_REQs are answered without one). */
enum roce_cm_state {
	ROCE_CM_IDLE = 0,
	ROCE_CM_REQ_SENT,
	ROCE_CM_REQ_RCVD,
	ROCE_CM_MRA_REQ_SENT,
	ROCE_CM_MRA_REQ_RCVD,
	ROCE_CM_REP_SENT,
	ROCE_CM_REP_RCVD,
	ROCE_CM_MRA_REP_SENT,
	ROCE_CM_MRA_REP_RCVD,
	ROCE_CM_ESTABLISHED,
	ROCE_CM_DREQ_SENT,
	ROCE_CM_DREQ_RCVD,
	ROCE_CM_TIMEWAIT,
	ROCE_CM_STATE_MAX
};

/** What an event says. "released": the handle is gone when the callback returns. */
enum roce_cm_event_type {
	/** Passive: a REQ for a service we listen on; a new handle (roce_cm_event::conn) in
	 *  REQ_RCVD. roce_cm_event::req says all of it; roce_cm_event::qp what is known for
	 *  the QP (rq_psn and qp_num are the user's to choose). Answer with roce_cm_accept(),
	 *  roce_cm_reject() or roce_cm_mra(), now or later. */
	ROCE_CM_EV_REQ = 0,
	/** Active: the REP; roce_cm_event::qp complete. Program the QP, then roce_cm_rtu()
	 *  (or roce_cm_reject() if that failed). */
	ROCE_CM_EV_REP,
	/** Both: the RTU went (active) or came (passive), or roce_cm_established(). */
	ROCE_CM_EV_ESTABLISHED,
	/** A REJ came: roce_cm_event::rej_reason, ARI, private data. Released. */
	ROCE_CM_EV_REJECTED,
	/** Our REQ (active) or REP (passive) went max_cm_retries + 1 times unanswered
	 *  (IB_CM_REQ_ERROR / IB_CM_REP_ERROR). Released. */
	ROCE_CM_EV_TIMEOUT,
	/** The peer disconnects: put the QP in ERR, then roce_cm_disconnect() sends the DREP. */
	ROCE_CM_EV_DREQ,
	/** Our DREQ was answered (status 0) or went unanswered (-ETIMEDOUT), or the peer's
	 *  DREP came while we were answering its DREQ: in time wait now. */
	ROCE_CM_EV_DISCONNECTED,
	/** Time wait is over. Released. */
	ROCE_CM_EV_TIMEWAIT_EXIT,
	ROCE_CM_EV_MAX
};

/** A REQ, as the passive side sees it (crossed where the QP takes it crossed). */
struct roce_cm_req_info {
	void *listen_ctx;		/**< the listener's context */
	uint64_t service_id;
	uint16_t port_space;		/**< ROCE_CMA_PS_TCP, ...; 0 when not an IP port space */
	uint16_t service_port;		/**< the port the service ID names */
	int cma_valid;			/**< 1: @c cma parsed from the private data */
	struct roce_cma_hdr cma;	/**< the RDMA CM's IP header */
	uint64_t remote_ca_guid;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;
	uint32_t starting_psn;		/**< the peer's */
	uint8_t responder_resources;	/**< crossed: the REQ's initiator depth */
	uint8_t initiator_depth;	/**< crossed: the REQ's responder resources */
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t path_mtu;
	uint8_t flow_control;
	uint8_t srq;
	uint8_t local_ack_timeout;	/**< the primary path's */
	struct roce_cm_addr src;	/**< where the REQ came from: where the answers go */
};

/** An event (roce_cm_ops::event). Pointers are valid during the callback only. */
struct roce_cm_event {
	enum roce_cm_event_type type;
	struct roce_cm_conn *conn;
	void *conn_ctx;			/**< the connection's context (REQ: the listener's) */
	int status;			/**< 0, or -ETIMEDOUT (DISCONNECTED: the DREQ timed out) */
	uint8_t released;		/**< 1: @c conn is invalid once the callback returns */
	uint16_t timed_out_attr;	/**< TIMEOUT: ROCE_CM_ATTR_REQ or ROCE_CM_ATTR_REP */
	uint16_t rej_reason;		/**< REJECTED: enum roce_cm_rej_reason */
	uint8_t rej_ari_len;
	const uint8_t *rej_ari;
	const uint8_t *private_data;	/**< the message's (REQ: after nothing, the whole area) */
	size_t private_data_len;	/**< the message's whole private data area */
	const struct roce_cm_req_info *req;	/**< REQ only */
	struct roce_cm_qp_attr qp;	/**< REQ (partial), REP, ESTABLISHED */
};

/** What the library needs from its user. */
struct roce_cm_ops {
	/**
	 * Send @mad (ROCE_MAD_SIZE bytes) to @dest's QP1 over the GSI QP of @dest->port.
	 * @return 0, or a negative errno (counted as send_failed; a message with retries is
	 *   retried on its timer as if lost).
	 */
	int (*send)(void *ctx, const struct roce_cm_addr *dest, const uint8_t *mad);
	/** Tell the user what happened; see enum roce_cm_event_type. */
	void (*event)(void *ctx, const struct roce_cm_event *ev);
};

/** An instance's configuration. */
struct roce_cm_conf {
	uint32_t max_conns;	/**< connections at once, time wait included (1 to 1 << 20) */
	uint32_t max_listeners;	/**< 1 to 4096 */
	uint64_t ca_guid;	/**< our CA GUID (REQ and REP "local CA GUID", REJ timeout ARI) */
	uint32_t hi_tid;	/**< the high 32 bits of our transaction IDs (Linux: the MAD
				 *   agent's; 2 in the captures) */
	uint8_t ack_delay;	/**< our CA's ACK delay code (ROCE_CM_RXE_ACK_DELAY) */
	uint32_t seed;		/**< local communication IDs are scrambled with it; 0: random */
};

/** Active side: what roce_cm_connect() sends in its REQ (struct ib_cm_req_param). */
struct roce_cm_connect_params {
	struct roce_cm_addr dest;	/**< the peer's QP1 */
	struct roce_cm_route route;
	uint64_t service_id;		/**< ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_TCP, port) */
	uint32_t qp_num;		/**< our RC QP */
	uint32_t starting_psn;		/**< 24 bits */
	uint8_t responder_resources;	/**< READ/atomics we accept in flight */
	uint8_t initiator_depth;	/**< READ/atomics we issue in flight */
	uint8_t flow_control;
	uint8_t retry_count;		/**< 0-7 */
	uint8_t rnr_retry_count;	/**< 0-7 */
	uint8_t srq;
	uint8_t remote_cm_response_timeout;	/**< ROCE_CM_CMA_RESPONSE_TIMEOUT */
	uint8_t local_cm_response_timeout;	/**< ROCE_CM_CMA_RESPONSE_TIMEOUT */
	uint8_t max_cm_retries;		/**< 0-15: ROCE_CM_CMA_MAX_CM_RETRIES */
	/** Up to ROCE_CM_REQ_PDATA_LEN bytes: for the RDMA CM, the struct cma_hdr
	 *  (roce_cma_hdr_build()) and the application's 56 bytes after it. */
	const void *private_data;
	size_t private_data_len;
};

/** Passive side: what roce_cm_accept() sends in its REP (struct ib_cm_rep_param). */
struct roce_cm_accept_params {
	uint32_t qp_num;		/**< our RC QP */
	uint32_t starting_psn;		/**< 24 bits */
	uint8_t responder_resources;	/**< what we accept in flight (librdmacm: the REQ's
					 *   initiator depth, at most the device's) */
	uint8_t initiator_depth;	/**< what we issue (<= the REQ's responder resources) */
	uint8_t rnr_retry_count;	/**< 0-7: how often the peer retries our RNR NAKs */
	uint8_t flow_control;
	uint8_t srq;
	const void *private_data;	/**< up to ROCE_CM_REP_PDATA_LEN bytes */
	size_t private_data_len;
};

/**
 * Drop reasons and other refusals, one counter each (roce_cm_counter_name()). The first
 * ROCE_CM_VERDICT_MAX are roce_cm_parse()'s verdicts (ROCE_CM_OK's slot unused).
 */
enum roce_cm_counter {
	ROCE_CM_CNT_PARSE_FIRST = 0,	/**< + enum roce_cm_verdict */
	/** LAP, APR (alternate paths: dropped on RoCE, as Linux does). */
	ROCE_CM_CNT_ALT_PATH = ROCE_CM_VERDICT_MAX,
	ROCE_CM_CNT_SIDR_REQ,		/**< SIDR_REQ answered with SIDR_REP "unsupported" */
	ROCE_CM_CNT_SIDR_REP,		/**< SIDR_REP: we send no SIDR_REQ, dropped */
	ROCE_CM_CNT_UNKNOWN_CONN,	/**< MRA/REJ/REP/RTU/DREP for no connection of ours */
	ROCE_CM_CNT_BAD_STATE,		/**< a message the connection's state does not take */
	ROCE_CM_CNT_DUPLICATE,		/**< duplicates (per attribute in roce_cm_stats::rx_dup) */
	ROCE_CM_CNT_NO_LISTENER,	/**< REQ for a service nobody listens on: REJ reason 8 */
	ROCE_CM_CNT_STALE,		/**< REQ/REP whose QPN is a live connection's: REJ 10 */
	ROCE_CM_CNT_BAD_REQ,		/**< REQ not RC (REJ 28, as rdma_cm) or bad MTU (26) */
	ROCE_CM_CNT_BACKLOG_FULL,	/**< REQ over the listener's backlog: dropped (the peer
					 *   retries), as librdmacm's ucma does */
	ROCE_CM_CNT_CONNS_FULL,		/**< REQ with every connection slot taken: dropped */
	ROCE_CM_CNT_DREQ_UNKNOWN,	/**< DREQ for no connection: answered with a DREP */
	ROCE_CM_CNT_DREQ_QPN,		/**< DREQ whose QPN is not the connection's: dropped */
	ROCE_CM_CNT_TIMEOUT_REQ,	/**< REQ retries exhausted */
	ROCE_CM_CNT_TIMEOUT_REP,	/**< REP retries exhausted */
	ROCE_CM_CNT_TIMEOUT_DREQ,	/**< DREQ retries exhausted */
	ROCE_CM_CNT_SEND_FAILED,	/**< roce_cm_ops::send refused a MAD */
	ROCE_CM_CNT_MAX
};

/** The counter of a roce_cm_parse() verdict. */
#define ROCE_CM_CNT_VERDICT(v) ((enum roce_cm_counter)(ROCE_CM_CNT_PARSE_FIRST + (v)))

/** Attribute slots of the per-attribute counters: attribute ID - ROCE_CM_ATTR_REQ. */
#define ROCE_CM_NB_ATTRS (ROCE_CM_ATTR_APR - ROCE_CM_ATTR_REQ + 1)

/** Counters, as Linux's cm_tx_msgs, cm_tx_retries, cm_rx_msgs, cm_rx_duplicates groups. */
struct roce_cm_stats {
	uint64_t tx[ROCE_CM_NB_ATTRS];		/**< sent, retries included */
	uint64_t tx_retries[ROCE_CM_NB_ATTRS];	/**< resent: timer or duplicate */
	uint64_t rx[ROCE_CM_NB_ATTRS];		/**< received and parsed */
	uint64_t rx_dup[ROCE_CM_NB_ATTRS];	/**< received duplicates */
	uint64_t cnt[ROCE_CM_CNT_MAX];		/**< enum roce_cm_counter */
	uint64_t rx_mads;			/**< roce_cm_input() calls */
	uint64_t established;			/**< connections that reached ESTABLISHED */
};

/** A connection, for a show command. */
struct roce_cm_conn_info {
	const struct roce_cm_conn *conn;
	void *ctx;			/**< NULL when the user let it go */
	enum roce_cm_state state;
	uint8_t active;			/**< 1: we sent the REQ */
	uint8_t orphan;			/**< 1: the user let it go; only timers remain */
	uint64_t service_id;
	uint32_t local_comm_id;
	uint32_t remote_comm_id;	/**< 0 until known */
	uint64_t remote_ca_guid;
	uint32_t local_qpn;
	uint32_t remote_qpn;		/**< 0 until known */
	struct roce_cm_addr peer;	/**< the peer's QP1 */
	uint8_t retries_left;		/**< of the message awaiting an answer */
	uint64_t deadline;		/**< next timer, ns; UINT64_MAX: none */
};

/** A listener, for a show command. */
struct roce_cm_listen_info {
	uint64_t service_id;
	void *ctx;
	uint32_t backlog;
	uint32_t pending;		/**< connections not yet established (counted against it) */
	uint64_t reqs;			/**< REQs that got a connection */
	uint64_t dropped;		/**< REQs dropped over the backlog */
};

/** Fill @p with the RDMA CM's defaults (cma_connect_ib(), rping's connection parameters):
 *  retry and RNR retry 7, CM response timeouts 20, 15 CM retries, P_Key 0xFFFF, hop limit
 *  64, packet life time 18, MTU 1024, QP1 and its Q_Key as destination. */
void roce_cm_connect_params_init(struct roce_cm_connect_params *p);

/** Fill @p for answering @req as librdmacm does by default: responder resources and
 *  initiator depth the REQ's crossed, RNR retry 7. */
void roce_cm_accept_params_init(struct roce_cm_accept_params *p,
		const struct roce_cm_req_info *req);

/**
 * Create an instance. @ops and @ctx are kept; @conf is copied.
 * @return the instance, or NULL with errno: EINVAL (bad limits, missing ops), ENOMEM.
 */
struct roce_cm *roce_cm_create(const struct roce_cm_conf *conf, const struct roce_cm_ops *ops,
		void *ctx);

/** Free an instance and every connection, sending nothing and telling nothing. */
void roce_cm_free(struct roce_cm *cm);

/**
 * Listen on @service_id (matched exactly) with room for @backlog connections not yet
 * established (REQ_RCVD to REP_SENT; at least 1).
 * @return 0; -EINVAL; -EADDRINUSE when already listened on; -ENOSPC over max_listeners.
 */
int roce_cm_listen(struct roce_cm *cm, uint64_t service_id, uint32_t backlog, void *ctx);

/** Stop listening; connections it brought stay. @return 0, or -ENOENT. */
int roce_cm_unlisten(struct roce_cm *cm, uint64_t service_id);

/**
 * Active side: send a REQ (ib_send_cm_req()) and wait in REQ_SENT.
 * @return 0 with @out; -EINVAL for a bad parameter (private data over 92 bytes, a field
 *   out of its width, an MTU code outside 1-5); -ENOSPC when every slot is taken.
 */
int roce_cm_connect(struct roce_cm *cm, const struct roce_cm_connect_params *p, void *ctx,
		uint64_t now, struct roce_cm_conn **out);

/**
 * Passive side, in REQ_RCVD or MRA_REQ_SENT: send the REP (ib_send_cm_rep()); REP_SENT.
 * The QP attributes are final from here on (roce_cm_conn_qp_attr()).
 * @return 0; -EINVAL (state, parameters).
 */
int roce_cm_accept(struct roce_cm_conn *c, const struct roce_cm_accept_params *p,
		uint64_t now);

/**
 * Reject (ib_send_cm_rej()) in REQ_SENT, MRA_REQ_RCVD, REQ_RCVD, MRA_REQ_SENT, REP_RCVD,
 * MRA_REP_SENT, REP_SENT or MRA_REP_RCVD; the handle is gone when it returns, whatever the
 * result (the connection goes idle, or waits in time wait on its own).
 * @return 0; -EINVAL in another state (the handle is then still valid) or for lengths over
 *   ROCE_CM_REJ_ARI_LEN / ROCE_CM_REJ_PDATA_LEN.
 */
int roce_cm_reject(struct roce_cm_conn *c, uint16_t reason, const void *ari, size_t ari_len,
		const void *pdata, size_t pdata_len, uint64_t now);

/**
 * Ask the peer for more time (ib_send_cm_mra()): in REQ_RCVD (MRA for the REQ) or REP_RCVD
 * (for the REP). The peer waits 4.096 us * 2^@service_timeout plus the packet life time more.
 * @return 0; -EINVAL.
 */
int roce_cm_mra(struct roce_cm_conn *c, uint8_t service_timeout, uint64_t now);

/**
 * Active side, in REP_RCVD or MRA_REP_SENT, once the QP is in RTS: send the RTU
 * (ib_send_cm_rtu(), as librdmacm does after rdma_connect's QP modifications) and tell
 * ROCE_CM_EV_ESTABLISHED (from within this call).
 * @return 0; -EINVAL.
 */
int roce_cm_rtu(struct roce_cm_conn *c, const void *pdata, size_t pdata_len, uint64_t now);

/**
 * Passive side, in REP_SENT or MRA_REP_RCVD: the QP received a packet before the RTU came
 * (IB_EVENT_COMM_EST, ib_cm_notify()): established now (ROCE_CM_EV_ESTABLISHED).
 * @return 0; -EISCONN when established already; -EINVAL.
 */
int roce_cm_established(struct roce_cm_conn *c, uint64_t now);

/**
 * Disconnect (rdma_disconnect()): in ESTABLISHED, send a DREQ (DREQ_SENT); in DREQ_RCVD,
 * answer the peer's with a DREP and go to time wait.
 * @return 0; -EINVAL in another state.
 */
int roce_cm_disconnect(struct roce_cm_conn *c, const void *pdata, size_t pdata_len,
		uint64_t now);

/**
 * Let the handle go (ib_destroy_cm_id()): tell the peer as Linux does for the state (REJ
 * before established, DREQ when established, DREP when asked), then no more events; what
 * still needs timers (time wait) runs on without the user.
 */
void roce_cm_destroy(struct roce_cm_conn *c, uint64_t now);

/**
 * A datagram QP1 received: parsed (every refusal counted), then handled.
 * @param src  where it came from: the answers go there.
 */
void roce_cm_input(struct roce_cm *cm, const struct roce_cm_addr *src, const void *mad,
		size_t len, uint64_t now);

/** Run the timers due at @now: resends, timeouts, time wait ends. */
void roce_cm_tick(struct roce_cm *cm, uint64_t now);

/** @return when roce_cm_tick() is due next (ns), UINT64_MAX when no timer runs. */
uint64_t roce_cm_next_deadline(const struct roce_cm *cm);

/** The connection's context (roce_cm_connect()'s, or the listener's until set). */
void *roce_cm_conn_ctx(const struct roce_cm_conn *c);
void roce_cm_conn_set_ctx(struct roce_cm_conn *c, void *ctx);

/** @return the connection's state. */
enum roce_cm_state roce_cm_conn_state(const struct roce_cm_conn *c);

/**
 * What to program into the QP now (ib_cm_init_qp_attr(): valid from REQ_SENT/REQ_RCVD on;
 * the peer's values once its REQ or REP came).
 * @return 0; -EINVAL in IDLE, TIMEWAIT, DREQ states.
 */
int roce_cm_conn_qp_attr(const struct roce_cm_conn *c, struct roce_cm_qp_attr *attr);

/** Fill @info about @c. */
void roce_cm_conn_info(const struct roce_cm_conn *c, struct roce_cm_conn_info *info);

/**
 * Call @cb for every connection (orphans included), in slot order, until it returns
 * non-zero. @cb must not change the instance.
 * @return the number of connections visited.
 */
unsigned int roce_cm_foreach(const struct roce_cm *cm,
		int (*cb)(void *arg, const struct roce_cm_conn_info *info), void *arg);

/** Call @cb for every listener. @return the number visited. */
unsigned int roce_cm_listen_foreach(const struct roce_cm *cm,
		int (*cb)(void *arg, const struct roce_cm_listen_info *info), void *arg);

/** Copy the counters into @st. */
void roce_cm_stats(const struct roce_cm *cm, struct roce_cm_stats *st);

/** @return connections in use (orphans included). */
uint32_t roce_cm_nb_conns(const struct roce_cm *cm);

/** @return a counter's name ("bad_len", ..., "stale", ...), NULL for ROCE_CM_OK's slot or
 *  out of range. */
const char *roce_cm_counter_name(enum roce_cm_counter c);

/** @return "REQ_SENT", ...; NULL when out of range. */
const char *roce_cm_state_name(enum roce_cm_state s);

/** @return "REQ", "ESTABLISHED", ...; NULL when out of range. */
const char *roce_cm_event_name(enum roce_cm_event_type t);

/** @return Linux's cm_convert_to_ms() of an IBA time code (4.096 us * 2^t), in ns. */
uint64_t roce_cm_timeout_ns(uint8_t iba_time);

/** @return Linux's cm_ack_timeout(): the local ACK timeout of a path with @packet_life_time
 *  towards a CA whose ACK delay is @ca_ack_delay. */
uint8_t roce_cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time);

#endif /* ROCE_CM_H */
