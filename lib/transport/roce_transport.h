/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_TRANSPORT_H
#define ROCE_TRANSPORT_H

/**
 * @file
 * Reliable Connected and Unreliable Datagram transports: protection domains, memory regions,
 * completion queues, address handles, queue pairs with their requester, responder and
 * completer, and a per-owner engine that drives them.
 *
 * One engine (struct roce_engine) is owned by one lcore: every QP, timer and counter in it is
 * touched by that lcore only, so nothing here takes a lock. The engine runs without ports: the
 * caller hands it classified packets (roce_engine_rx), gives it the time
 * (roce_engine_poll) and collects what it sends (roce_engine_tx). Names and numbers of
 * statuses and opcodes follow rdma-core's verbs so that its users recognise them.
 */

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "roce_build.h"
#include "roce_classify.h"
#include "roce_psn.h"

/** Access flags, numbered as enum ibv_access_flags. */
enum roce_access {
	ROCE_ACCESS_LOCAL_WRITE = 1 << 0,
	ROCE_ACCESS_REMOTE_WRITE = 1 << 1,
	ROCE_ACCESS_REMOTE_READ = 1 << 2,
	ROCE_ACCESS_REMOTE_ATOMIC = 1 << 3,
	/**
	 * rocedp's own (verbs has no such flag): a peer's SEND with Invalidate naming the key
	 * takes it away, as it may for a fast-registered MR or a bound type 2 MW (IBA 10.6.6);
	 * for an MR without it such a SEND fails, as on rxe.
	 */
	ROCE_ACCESS_REMOTE_INVALIDATE = 1 << 16,
};

/** Work completion status, numbered as enum ibv_wc_status. */
enum roce_wc_status {
	ROCE_WC_SUCCESS,
	ROCE_WC_LOC_LEN_ERR,
	ROCE_WC_LOC_QP_OP_ERR,
	ROCE_WC_LOC_EEC_OP_ERR,
	ROCE_WC_LOC_PROT_ERR,
	ROCE_WC_WR_FLUSH_ERR,
	ROCE_WC_MW_BIND_ERR,
	ROCE_WC_BAD_RESP_ERR,
	ROCE_WC_LOC_ACCESS_ERR,
	ROCE_WC_REM_INV_REQ_ERR,
	ROCE_WC_REM_ACCESS_ERR,
	ROCE_WC_REM_OP_ERR,
	ROCE_WC_RETRY_EXC_ERR,
	ROCE_WC_RNR_RETRY_EXC_ERR,
	ROCE_WC_LOC_RDD_VIOL_ERR,
	ROCE_WC_REM_INV_RD_REQ_ERR,
	ROCE_WC_REM_ABORT_ERR,
	ROCE_WC_INV_EECN_ERR,
	ROCE_WC_INV_EEC_STATE_ERR,
	ROCE_WC_FATAL_ERR,
	ROCE_WC_RESP_TIMEOUT_ERR,
	ROCE_WC_GENERAL_ERR,
	ROCE_WC_STATUS_NUM
};

/** Work completion opcode, numbered as enum ibv_wc_opcode. */
enum roce_wc_opcode {
	ROCE_WC_SEND = 0,
	ROCE_WC_RDMA_WRITE = 1,
	ROCE_WC_RDMA_READ = 2,
	ROCE_WC_COMP_SWAP = 3,
	ROCE_WC_FETCH_ADD = 4,
	ROCE_WC_RECV = 1 << 7,
	ROCE_WC_RECV_RDMA_WITH_IMM = (1 << 7) + 1,
};

/** roce_wc::wc_flags, as enum ibv_wc_flags. */
#define ROCE_WC_GRH      (1 << 0) /**< UD: the buffer starts with the 40-byte GRH area */
#define ROCE_WC_WITH_IMM (1 << 1)
#define ROCE_WC_WITH_INV (1 << 3)

/** roce_wc::network_hdr_type, as enum ibv_network_hdr_type / rdma_network_type. */
enum roce_network_hdr {
	ROCE_NETWORK_IB = 0,
	ROCE_NETWORK_IPV4 = 2,
	ROCE_NETWORK_IPV6 = 3,
};

/** A work completion. */
struct roce_wc {
	uint64_t wr_id;
	enum roce_wc_status status;
	enum roce_wc_opcode opcode;
	uint32_t vendor_err;     /**< NAK syndrome that caused an error, else 0 */
	uint32_t byte_len;       /**< UD receives: the GRH area's 40 bytes included, as verbs */
	uint32_t imm_data;       /**< host order; valid with ROCE_WC_WITH_IMM */
	uint32_t invalidated_rkey; /**< valid with ROCE_WC_WITH_INV */
	uint32_t qp_num;
	uint32_t src_qp;         /**< RC: the connected QP; UD: the DETH source QP */
	unsigned int wc_flags;
	/* UD receives (ROCE_WC_GRH); zero otherwise. */
	uint32_t qkey;           /**< the DETH Q_Key (the QP's own: others are dropped) */
	uint16_t slid;           /**< always 0: RoCE has no LIDs */
	uint16_t pkey_index;     /**< always 0: the default partition */
	uint8_t sl;              /**< always 0 */
	uint8_t network_hdr_type; /**< enum roce_network_hdr */
	uint8_t sgid[16];        /**< the sender: IPv6 source, or IPv4-mapped (::ffff:a.b.c.d) */
};

/** Send work request opcode, numbered as enum ibv_wr_opcode. */
enum roce_wr_opcode {
	ROCE_WR_RDMA_WRITE = 0,
	ROCE_WR_RDMA_WRITE_WITH_IMM = 1,
	ROCE_WR_SEND = 2,
	ROCE_WR_SEND_WITH_IMM = 3,
	ROCE_WR_RDMA_READ = 4,
	ROCE_WR_ATOMIC_CMP_AND_SWP = 5,
	ROCE_WR_ATOMIC_FETCH_AND_ADD = 6,
	ROCE_WR_SEND_WITH_INV = 9,
};

/** Send flags, as enum ibv_send_flags. */
#define ROCE_SEND_FENCE     (1 << 0)
#define ROCE_SEND_SIGNALED  (1 << 1)
#define ROCE_SEND_SOLICITED (1 << 2)
#define ROCE_SEND_INLINE    (1 << 3)

/** Most scatter/gather entries a work request may carry. */
#define ROCE_MAX_SGE 8
/** Most inline bytes a send work request may carry. */
#define ROCE_MAX_INLINE 256
/** Largest message, in bytes. */
#define ROCE_MAX_MSG_SIZE (1u << 31)

/** One scatter/gather entry: a range of a local MR. */
struct roce_sge {
	uint64_t addr;   /**< address in the MR's address space (its iova) */
	uint32_t length;
	uint32_t lkey;
};

struct roce_ah;

/** A send work request. */
struct roce_send_wr {
	uint64_t wr_id;
	enum roce_wr_opcode opcode;
	unsigned int send_flags;         /**< ROCE_SEND_* */
	unsigned int num_sge;
	struct roce_sge sg_list[ROCE_MAX_SGE];
	uint32_t imm_data;               /**< host order; or the rkey for SEND_WITH_INV */
	uint64_t remote_addr;            /**< RDMA and atomic */
	uint32_t rkey;
	uint64_t compare_add;            /**< atomic: compare (CAS) or add (FAA) value */
	uint64_t swap;                   /**< atomic: swap value (CAS) */
	/** UD: where the datagram goes, as ibv_send_wr's wr.ud. */
	struct {
		struct roce_ah *ah;          /**< address; copied at post time */
		uint32_t remote_qpn;
		/** With the high bit set (a controlled Q_Key), the QP's own Q_Key goes instead. */
		uint32_t remote_qkey;
	} ud;
};

/** A receive work request. */
struct roce_recv_wr {
	uint64_t wr_id;
	unsigned int num_sge;
	struct roce_sge sg_list[ROCE_MAX_SGE];
};

struct roce_engine;
struct roce_pd;
struct roce_mr;
struct roce_cq;
struct roce_qp;

/** QP transport types, numbered as enum ibv_qp_type (0 in an init attribute means RC). */
enum roce_qp_type {
	ROCE_QPT_RC = 2,
	ROCE_QPT_UD = 4,
};

/** The general services QP (GSI, QP1): a UD QP per port, created with this number. */
#define ROCE_GSI_QPN 1
/** QP1's Q_Key: what it sends in every DETH and the only one it accepts. */
#define ROCE_GSI_QKEY 0x80010000u
/**
 * The high bit of a Q_Key: a controlled Q_Key. In a UD work request it means "the QP's own
 * Q_Key" (IBA 10.2.5); as a QP's Q_Key only a privileged consumer may set one (Linux refuses
 * it to user space by default): lib/transport trusts its caller, the dataplane's verbs refuse.
 */
#define ROCE_QKEY_CONTROLLED 0x80000000u

/** QP states, as enum ibv_qp_state. */
enum roce_qp_state {
	ROCE_QPS_RESET,
	ROCE_QPS_INIT,
	ROCE_QPS_RTR,
	ROCE_QPS_RTS,
	ROCE_QPS_SQD,
	ROCE_QPS_SQE,
	ROCE_QPS_ERR,
	ROCE_QPS_NUM
};

/** Path MTU, as enum ibv_mtu. */
enum roce_mtu {
	ROCE_MTU_256 = 1,
	ROCE_MTU_512 = 2,
	ROCE_MTU_1024 = 3,
	ROCE_MTU_2048 = 4,
	ROCE_MTU_4096 = 5,
};

/** @return the MTU in bytes, or 0 when invalid. */
static inline uint32_t
roce_mtu_bytes(enum roce_mtu mtu)
{
	return mtu >= ROCE_MTU_256 && mtu <= ROCE_MTU_4096 ? 128u << mtu : 0;
}

/** roce_qp_modify() attribute mask, as enum ibv_qp_attr_mask. */
#define ROCE_QP_STATE              (1 << 0)
#define ROCE_QP_ACCESS_FLAGS       (1 << 3)
#define ROCE_QP_PKEY_INDEX         (1 << 4)
#define ROCE_QP_PORT               (1 << 5)
#define ROCE_QP_QKEY               (1 << 6)
#define ROCE_QP_AV                 (1 << 7)
#define ROCE_QP_PATH_MTU           (1 << 8)
#define ROCE_QP_TIMEOUT            (1 << 9)
#define ROCE_QP_RETRY_CNT          (1 << 10)
#define ROCE_QP_RNR_RETRY          (1 << 11)
#define ROCE_QP_RQ_PSN             (1 << 12)
#define ROCE_QP_MAX_QP_RD_ATOMIC   (1 << 13)
#define ROCE_QP_MIN_RNR_TIMER      (1 << 15)
#define ROCE_QP_SQ_PSN             (1 << 16)
#define ROCE_QP_MAX_DEST_RD_ATOMIC (1 << 17)
#define ROCE_QP_DEST_QPN           (1 << 20)
/* rocedp extensions, above the bits ibv_qp_attr_mask uses. */
/** Selective repeat on or off (roce_qp_attr::sr); INIT->RTR only. */
#define ROCE_QP_SR                 (1 << 28)
/** Per-QP cap on packets in flight (roce_qp_attr::max_inflight); INIT->RTR only. */
#define ROCE_QP_MAX_INFLIGHT       (1 << 29)
/** Selective-repeat retransmit timeout (roce_qp_attr::sr_rto_us); RTR and RTS. */
#define ROCE_QP_SR_RTO             (1 << 30)

/** Default selective-repeat retransmit timeout, in microseconds. */
#define ROCE_SR_RTO_DEFAULT_US 100
/** Largest per-QP cap on packets in flight (and selective-repeat window). */
#define ROCE_MAX_INFLIGHT_MAX (1u << 16)

/**
 * QP attributes, as struct ibv_qp_attr (the fields RC and UD over RoCEv2 use).
 *
 * A UD QP takes (IBA table 91): RESET->INIT, INIT->INIT: pkey_index, port_num, qkey; INIT->RTR:
 * pkey_index, qkey; RTR->RTS: sq_psn (required), qkey; RTS->RTS, SQD and SQE->RTS: qkey. Every
 * transition of a UD QP also takes path_mtu (a rocedp extension; verbs use the port's MTU):
 * datagrams up to that many bytes go and come, 1024 until set.
 */
struct roce_qp_attr {
	enum roce_qp_state qp_state;
	enum roce_mtu path_mtu;
	uint32_t qp_access_flags;    /**< ROCE_ACCESS_REMOTE_* */
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qkey;               /**< UD: the Q_Key it accepts, and sends for a controlled one */
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t timeout;             /**< local ACK timeout: 4.096 us * 2^timeout; 0 = infinite */
	uint8_t retry_cnt;           /**< 0-7 */
	uint8_t rnr_retry;           /**< 0-7; 7 = infinite */
	uint8_t min_rnr_timer;       /**< 0-31, IB RNR timer code */
	uint8_t max_rd_atomic;       /**< outstanding READ/atomic we may send */
	uint8_t max_dest_rd_atomic;  /**< outstanding READ/atomic we accept */
	struct roce_path ah;         /**< addresses of the remote end (roce_path_init() done) */
	/**
	 * Selective repeat (rocedp extension, doc/selective-repeat.md), set with ROCE_QP_SR on
	 * INIT->RTR. 1 only when both ends agreed to it out of band (the daemon carries it in
	 * the perftest exchange's version-string tail and in qp.connect): the QP then sends
	 * SEND/WRITE packets and ACKs with manufacturer-specific opcodes (0xC0-0xDF) that a
	 * standard peer would reject, places out-of-order packets directly, answers with SACK
	 * bitmaps and resends only the missing PSNs. 0 (the default): go-back-N exactly as
	 * IBA, and extension packets from the peer are dropped and counted (SR_REJECT).
	 * Going to RESET clears it.
	 */
	uint8_t sr;
	/**
	 * Selective-repeat retransmit timeout in us (ROCE_QP_SR_RTO); 0 = ROCE_SR_RTO_DEFAULT_US.
	 * Much shorter than the IBA ACK timeout: SACKs trigger most resends, this covers tail
	 * loss. It doubles per expiry without progress; retry_cnt still bounds the expiries.
	 */
	uint32_t sr_rto_us;
	/**
	 * Cap on this QP's packets in flight, i.e. PSNs sent and not yet acknowledged
	 * (ROCE_QP_MAX_INFLIGHT, at most ROCE_MAX_INFLIGHT_MAX); 0 = the engine's
	 * roce_engine_conf::max_inflight. Set it near the path's bandwidth-delay product so a
	 * lossy path is not flooded; with selective repeat it is also the receive window, so
	 * both ends should use the same value (an SR QP uses at most ROCE_MAX_INFLIGHT_MAX).
	 */
	uint32_t max_inflight;
};

/** What a QP is created with, as struct ibv_qp_init_attr. */
struct roce_qp_init_attr {
	struct roce_cq *send_cq;
	struct roce_cq *recv_cq;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_inline_data;
	int sq_sig_all;              /**< every send WR completes, signaled or not */
	uint32_t qp_num;             /**< 0: the engine picks one */
	/** The owner's value, kept with the QP (as ibv_qp_init_attr's qp_context, an integer
	 *  here): roce_qp_context(). */
	uint64_t qp_context;
	enum roce_qp_type qp_type;   /**< 0: ROCE_QPT_RC */
	/**
	 * QP1 only (qp_num ROCE_GSI_QPN, qp_type UD), as ib_qp_init_attr::port_num: the port
	 * (from 1) whose GSI QP this is. An engine has at most one QP1 per port; a packet for
	 * QPN 1 goes to the QP1 of the port it came in on.
	 */
	uint8_t port_num;
};

/** Engine options (defaults when zero). */
struct roce_engine_conf {
	struct rte_mempool *mp;      /**< mbufs for transmitted packets (required) */
	int socket_id;
	uint32_t max_qps;            /**< QPs this engine may own (default 1024) */
	uint32_t qpn_base;           /**< first QP number it hands out (default 0x100) */
	/** QP numbers it may hand out from qpn_base (default: up to 0xFFFFFF), never 0, 1 or
	 *  0xFFFFFF; it never leaves the range, so a dataplane can route by QPN alone. */
	uint32_t qpn_count;
	uint32_t tx_ring_size;       /**< packets buffered for roce_engine_tx (default 4096) */
	uint32_t ack_every;          /**< AckReq at least every N packets of a message (def. 64) */
	uint32_t max_inflight;       /**< per-QP cap on unacknowledged packets (default 4096) */
	uint32_t tx_budget;          /**< packets one QP may send per poll (default 64) */
	/** retry_cnt 7 means infinite retries (as rxe does) instead of 7 (as IBA says). */
	int retry7_infinite;
	/**
	 * Small mbufs for zero-copy transmit (roce_engine_set_tx_zc()): a payload packet sent
	 * that way is the headers in an mbuf of @c mp, then one mbuf of this pool per piece of
	 * the payload, attached over the MR (rte_pktmbuf_attach_extbuf()), and one for the pad
	 * and ICRC (7 bytes; its headroom is not used). NULL: every payload is copied. It must
	 * outlive every packet the engine built, as @c mp does.
	 */
	struct rte_mempool *zc_mp;
};

/** Ports an engine keeps a zero-copy setting for (roce_qp_attr::port_num 1 to this). */
#define ROCE_ENGINE_MAX_PORTS 8

/** Fewest segments a zero-copy frame takes: the headers, the payload, the pad and ICRC. */
#define ROCE_TX_ZC_MIN_SEGS 3

/**
 * How an engine builds the payload packets it sends on one port: WRITE and SEND requests
 * (first transmissions and resends alike, each built again from the MR), READ responses and
 * UD datagrams. Copied into the headers' mbuf, or zero-copy: the payload attached from the
 * MR as segments of its own, referenced until the PMD frees the frame (roce_mr_tx_refs()).
 * A payload goes copied when the port takes fewer than ROCE_TX_ZC_MIN_SEGS segments, when it
 * is shorter than @c min_len, when it is inline data, when an MR it lies in is not
 * registered for DMA (roce_mr_attr::tx_dma), when it has more pieces than the segments
 * allow, or when the engine's zc_mp is empty; each reason has its counter (TX_COPY_*).
 */
struct roce_tx_zc {
	/** Most segments a frame may have on the port (the PMD's); below 3: copy every payload. */
	uint16_t max_segs;
	/** Payloads shorter than this are copied (a short copy costs less than two mbufs). */
	uint32_t min_len;
};

/**
 * Set how the engine builds payload packets for port index @p port (roce_qp_attr::port_num
 * less one, as roce_engine_tx() stamps it). Until set, every payload is copied. On the
 * engine's thread.
 *
 * @return
 *   0, or -EINVAL (@p port past ROCE_ENGINE_MAX_PORTS, or zero-copy asked of an engine
 *   without a zc_mp).
 */
int roce_engine_set_tx_zc(struct roce_engine *eng, uint8_t port, const struct roce_tx_zc *zc);

/**
 * Create an engine.
 *
 * @return
 *   The engine, or NULL with rte_errno set (EINVAL: no mempool, too many QPs or in flight,
 *   a QPN range past 0xFFFFFF; ENOMEM).
 */
struct roce_engine *roce_engine_create(const struct roce_engine_conf *conf);

/** Destroy an engine and every QP it still owns. */
void roce_engine_destroy(struct roce_engine *eng);

/**
 * Hand received RoCE packets to their QPs. Packets must be classified (roce_pkt_meta type
 * ROCE_PKT_ROCE); the engine takes ownership of all of them. A packet for QPN 1 (the GSI QP)
 * goes to the QP1 of the port in its mbuf @c port, the port index as roce_engine_tx() sets
 * it (roce_qp_attr::port_num less one): the caller stores there the port it came in on.
 * A packet classified with ROCE_CLASSIFY_DEFER_ICRC whose ICRC is pending is checked right
 * before its turn (roce_classify_icrc()), so that its payload is read once from far caches;
 * one with a wrong ICRC is freed untouched and counted as DROP_ICRC in the engine's own
 * classifier counters (roce_engine_wire_stats()); roce_engine_rx_wire() counts elsewhere.
 *
 * @param now
 *   Current time, in ns, from the caller's clock.
 */
void roce_engine_rx(struct roce_engine *eng, struct rte_mbuf **pkts, uint16_t nb_pkts,
		uint64_t now);

/**
 * roce_engine_rx() counting the verdicts on pending ICRCs in @p wire, the counters the caller's
 * roce_classify_burst() counted the rest of the burst in.
 */
void roce_engine_rx_wire(struct roce_engine *eng, struct rte_mbuf **pkts, uint16_t nb_pkts,
		uint64_t now, struct roce_wire_stats *wire);

/** @return the classifier counters of the pending ICRCs roce_engine_rx() checked. */
const struct roce_wire_stats *roce_engine_wire_stats(const struct roce_engine *eng);

/**
 * Run due timers and let QPs with work send, up to the tx ring's room.
 *
 * @param now
 *   Current time, in ns.
 */
void roce_engine_poll(struct roce_engine *eng, uint64_t now);

/**
 * Collect packets to transmit. Each packet's mbuf @c port is the port its QP sends on: the
 * QP's roce_qp_attr::port_num less one (ports are numbered from 1 as in verbs; a QP whose
 * port_num was never set sends on the first).
 *
 * @return
 *   Number of packets stored in @p pkts; the caller owns them.
 */
uint16_t roce_engine_tx(struct roce_engine *eng, struct rte_mbuf **pkts, uint16_t max);

/** @return packets queued for roce_engine_tx() and not collected yet. */
uint32_t roce_engine_tx_pending(const struct roce_engine *eng);

/**
 * A pacer: the scheduler asks it, each time a QP has had its turn, when that QP may send
 * again. Congestion control fills it in (a rate per QP); the engine keeps the QP off its
 * active list until then, on a timer (so granularity is the timer wheel's slot, about 1 us).
 * ACKs the receive path answers with go out unpaced.
 */
struct roce_pacer {
	/**
	 * @p qp just sent @p pkts packets carrying @p bytes of payload at @p now (ns).
	 * @return the earliest time it may send again; <= @p now: at once.
	 */
	uint64_t (*next)(void *ctx, const struct roce_qp *qp, uint32_t pkts, uint64_t bytes,
			uint64_t now);
	void *ctx;
	/** Most packets a QP sends per turn (0: roce_engine_conf::tx_budget). */
	uint32_t burst;
	/**
	 * 1: ask only about the QPs roce_qp_set_paced() marked, so every other QP costs one
	 * flag test and no call; 0: ask about every QP that sent.
	 */
	uint8_t marked_only;
};

/**
 * Give the engine a pacer, or take it away (@p pacer NULL). QPs the old pacer held back may
 * send at once; given the same pacer again (same next and ctx) only its settings change and
 * the QPs it holds stay held. On the engine's thread.
 *
 * @return
 *   0, or -EINVAL when @p pacer has no @c next.
 */
int roce_engine_set_pacer(struct roce_engine *eng, const struct roce_pacer *pacer);

/**
 * @return how many QPs the pacer holds back now: a caller that sleeps when idle must not
 * while there are some (they are due at their times).
 */
uint32_t roce_engine_pace_held(const struct roce_engine *eng);

/**
 * Mark a QP for a pacer with roce_pacer::marked_only set (congestion control on for it), or
 * unmark it. On the engine's thread.
 */
void roce_qp_set_paced(struct roce_qp *qp, int on);

/**
 * What congestion control hears from the receive path. lib/transport knows no congestion
 * control: it calls these, from roce_engine_rx(), for QPs past their state, address and P_Key
 * checks. Either may be NULL.
 */
struct roce_engine_cc {
	/**
	 * A CNP arrived for @p qp (the reaction point's input); it was counted as CNP_RX.
	 */
	void (*cnp_rx)(void *ctx, struct roce_qp *qp, uint64_t now);
	/**
	 * A packet other than a CNP arrived for @p qp with its IP ECN field CE (the notification
	 * point's input), before the QP processes it. The callee may answer with
	 * roce_qp_send_cnp(); it must not free or change @p m.
	 */
	void (*ce_rx)(void *ctx, struct roce_qp *qp, const struct rte_mbuf *m, uint64_t now);
	void *ctx;
};

/**
 * Give the engine congestion control callbacks, or take them away (@p cc NULL). On the
 * engine's thread. Without them a CNP is only counted and a CE mark ignored.
 *
 * @return
 *   0.
 */
int roce_engine_set_cc(struct roce_engine *eng, const struct roce_engine_cc *cc);

/**
 * Queue a CNP the caller built for @p qp's peer (its destination QP in the BTH): it leaves
 * through roce_engine_tx() on the QP's port, unpaced, counted as TX_PKTS and CNP_TX.
 *
 * @return
 *   0, or -ENOSPC when the transmit ring is full (the frame is freed, TX_RING_FULL counted).
 */
int roce_qp_send_cnp(struct roce_qp *qp, struct rte_mbuf *m);

/** @return the QP's address vector (roce_qp_attr::ah, initialised), as set on RTR. */
const struct roce_path *roce_qp_path(const struct roce_qp *qp);

/**
 * Change the ECN codepoint of everything a connected QP sends from now on (its path's
 * roce_path::ecn): congestion control turned on or off for it, or a codepoint of its own.
 * On the engine's thread.
 *
 * @param ecn
 *   ROCE_ECN_NOT_ECT, ROCE_ECN_ECT1 or ROCE_ECN_ECT0 (CE is the fabric's to set).
 * @return
 *   0, or -EINVAL (CE or above, or the QP has no path yet: not past INIT).
 */
int roce_qp_set_ecn(struct roce_qp *qp, uint8_t ecn);

/** @return the QP's destination QP number (roce_qp_attr::dest_qp_num). */
uint32_t roce_qp_dest_qpn(const struct roce_qp *qp);

/** @return the engine's QP with number @p qpn, or NULL (QP1s: roce_engine_gsi()). */
struct roce_qp *roce_engine_qp(const struct roce_engine *eng, uint32_t qpn);

/** @return the engine's QP1 of port @p port_num (from 1), or NULL. */
struct roce_qp *roce_engine_gsi(const struct roce_engine *eng, uint8_t port_num);

/** @return the time of the engine's next timer, or UINT64_MAX when none is armed. */
uint64_t roce_engine_next_timer(const struct roce_engine *eng);

/**
 * Allocate a protection domain.
 *
 * @return
 *   The PD, or NULL with rte_errno set.
 */
struct roce_pd *roce_pd_alloc(int socket_id);

/**
 * Free a protection domain.
 *
 * @return
 *   0, or -EBUSY while MRs or address handles are in it.
 */
int roce_pd_free(struct roce_pd *pd);

/** MR registration options beyond address, length and access. */
struct roce_mr_attr {
	uint64_t iova;       /**< address peers use; 0: the local address */
	uint32_t rkey;       /**< 0: pick one with random key bits; else this exact key */
	/**
	 * 1: the memory is within the DMA reach of the ports (DPDK's heap, or memory registered
	 * with rte_extmem_register() and mapped with rte_dev_dma_map() for every device) and
	 * IOVA-contiguous from @c tx_iova, so packets may carry its bytes as attached segments
	 * (zero-copy transmit, roce_tx_zc). 0: every payload taken from it is copied.
	 */
	uint8_t tx_dma;
	uint64_t tx_iova;    /**< bus address (IOVA) of the memory's first byte, with tx_dma */
};

/**
 * Register memory.
 *
 * @param pd
 *   Protection domain.
 * @param addr
 *   Local memory.
 * @param length
 *   Bytes; may be 0.
 * @param access
 *   ROCE_ACCESS_* flags.
 * @param attr
 *   Options, or NULL.
 * @return
 *   The MR, or NULL with rte_errno set (EINVAL, ENOMEM, EEXIST for a taken rkey).
 */
struct roce_mr *roce_mr_reg(struct roce_pd *pd, void *addr, uint64_t length,
		unsigned int access, const struct roce_mr_attr *attr);

/**
 * Take an MR's key out of the key table: lookups of it fail from now on. Engines that run
 * on other threads may still hold addresses in it until each has passed
 * roce_engine_mr_revoke() (on its own thread); then roce_mr_dereg() frees it.
 */
void roce_mr_invalidate(struct roce_mr *mr);

/**
 * Deregister memory (invalidating its key if roce_mr_invalidate() did not). No engine may
 * hold an address in it: see roce_mr_invalidate(). Packets built from it zero-copy still
 * reference it until their last mbuf is freed (by the PMD once it has sent them): while any
 * does (roce_mr_tx_refs()), it is not freed and stays registered, its key gone, and a later
 * call frees it.
 *
 * @return
 *   0, or -EBUSY while packets reference it.
 */
int roce_mr_dereg(struct roce_mr *mr);

/**
 * @return the segments of packets in flight (built, queued, in a PMD, or cloned) whose
 *   bytes are attached from @p mr: its memory must stay while this is not 0.
 */
uint32_t roce_mr_tx_refs(const struct roce_mr *mr);

/**
 * @return the MR whose key is @p key, or NULL (never registered, deregistered, or its key
 *   taken away by a peer's SEND with Invalidate).
 */
struct roce_mr *roce_mr_find(uint32_t key);

/** @return the MR's local key. */
uint32_t roce_mr_lkey(const struct roce_mr *mr);
/** @return the MR's remote key. */
uint32_t roce_mr_rkey(const struct roce_mr *mr);
/** @return the MR's iova (the address in work requests and RETHs). */
uint64_t roce_mr_iova(const struct roce_mr *mr);
/** @return the MR's local memory. */
void *roce_mr_addr(const struct roce_mr *mr);
/** @return the MR's length in bytes. */
uint64_t roce_mr_length(const struct roce_mr *mr);
/** @return the MR's ROCE_ACCESS_* flags. */
unsigned int roce_mr_access(const struct roce_mr *mr);

/**
 * Drop what the engine's QPs hold in @mr, whose key roce_mr_invalidate() took away: a
 * multi-packet WRITE landing there fails its next packet with a remote access error NAK,
 * a READ response stream from it ends with one (both move the QP to the error state, as
 * the IBA has it for memory deregistered under an access). Call on the engine's thread.
 */
void roce_engine_mr_revoke(struct roce_engine *eng, const struct roce_mr *mr);

/**
 * Create a completion queue.
 *
 * @return
 *   The CQ, or NULL with rte_errno set.
 */
struct roce_cq *roce_cq_create(uint32_t depth, int socket_id);

/** What an address handle is made of, as struct ibv_ah_attr for RoCEv2. */
struct roce_ah_attr {
	/**
	 * Addresses of the destination (roce_path's public fields: MACs, IPs, VLAN, DSCP and
	 * ECN as the traffic class, TTL / hop limit, flow label). Its UDP source port is ignored:
	 * a UD QP sends from its own (roce_udp_sport_qpn()).
	 */
	struct roce_path path;
	uint8_t port_num;    /**< the port it is valid on, from 1; 0: any QP's port */
};

/**
 * Create an address handle in @p pd, as ibv_create_ah(). Work requests copy what they need
 * from it when posted, so it may go as soon as they are.
 *
 * @return
 *   The AH, or NULL with rte_errno set (EINVAL: a path field out of range; ENOMEM).
 */
struct roce_ah *roce_ah_create(struct roce_pd *pd, const struct roce_ah_attr *attr);

/** Destroy an address handle. @return 0. */
int roce_ah_destroy(struct roce_ah *ah);

/** @return what the AH was made of (its path initialised). */
const struct roce_ah_attr *roce_ah_attr(const struct roce_ah *ah);

/** Destroy a CQ. @return 0. */
int roce_cq_destroy(struct roce_cq *cq);

/**
 * Poll completions.
 *
 * @return
 *   Number of completions stored in @p wc.
 */
int roce_cq_poll(struct roce_cq *cq, struct roce_wc *wc, int max);

/** @return completions lost because the CQ was full (a CQ overrun). */
uint64_t roce_cq_overruns(const struct roce_cq *cq);

/**
 * Arm @p cq: the next completion added to it calls @p fn(@p arg) once, on the engine's
 * thread, as ibv_req_notify_cq() and a completion channel would. Arming again replaces the
 * callback; @p fn NULL disarms. A poller with thousands of idle CQs sleeps on them this way
 * instead of polling each.
 */
void roce_cq_req_notify(struct roce_cq *cq, void (*fn)(void *arg), void *arg);

/**
 * Create a QP in RESET: RC, or UD (roce_qp_init_attr::qp_type). A UD QP sends and receives
 * single-packet SENDs (with immediate or not) to and from any address, one per work request:
 * no ACK, no retransmission, Q_Key checks, and the GRH area at the start of each receive
 * buffer (roce_grh.h). QP1 is a UD QP created with qp_num 1 and a port_num.
 *
 * @return
 *   The QP, or NULL with rte_errno set (EINVAL, ENOMEM, ENOSPC: no QP number left,
 *   EEXIST: qp_num taken, or a QP1 on that port already).
 */
struct roce_qp *roce_qp_create(struct roce_engine *eng, struct roce_pd *pd,
		const struct roce_qp_init_attr *attr);

/** Destroy a QP; outstanding work is dropped without completions. @return 0. */
int roce_qp_destroy(struct roce_qp *qp);

/** @return the QP number. */
uint32_t roce_qp_num(const struct roce_qp *qp);

/** @return the QP state. */
enum roce_qp_state roce_qp_state(const struct roce_qp *qp);

/**
 * @return the send work requests posted and not yet completed, signaled or not: how a
 * poster of unsignaled work (perftest's CQ moderation) learns that all of it is done.
 */
uint32_t roce_qp_sq_outstanding(const struct roce_qp *qp);

/** @return the QP's type. */
enum roce_qp_type roce_qp_type(const struct roce_qp *qp);

/** @return what the QP was created with: roce_qp_init_attr::qp_context. */
uint64_t roce_qp_context(const struct roce_qp *qp);

/**
 * What a QP was created with, as ibv_query_qp()'s init_attr: its CQs, the context, and the
 * queue sizes it got (max_send_wr, max_recv_wr: rounded up to a power of two).
 */
void roce_qp_query_init(const struct roce_qp *qp, struct roce_qp_init_attr *init);

/**
 * Call @p fn for each QP of @p eng. @p fn must not create or destroy QPs (collect their
 * numbers and act afterwards).
 */
void roce_engine_qp_foreach(const struct roce_engine *eng,
		void (*fn)(struct roce_qp *qp, void *arg), void *arg);

/** @return the QP's protection domain. */
struct roce_pd *roce_qp_pd(const struct roce_qp *qp);

/**
 * Modify a QP, as ibv_modify_qp.
 *
 * @return
 *   0, or -EINVAL for a transition or attribute the current state does not allow.
 */
int roce_qp_modify(struct roce_qp *qp, const struct roce_qp_attr *attr, int mask);

/**
 * Read a QP's attributes.
 *
 * @return
 *   0.
 */
int roce_qp_query(const struct roce_qp *qp, struct roce_qp_attr *attr);

/**
 * Post a send work request. On a UD QP: SEND or SEND_WITH_IMM with roce_send_wr::ud filled;
 * one longer than the QP's path MTU completes with ROCE_WC_LOC_LEN_ERR and the QP goes to ERR
 * (Linux rxe sends nothing and reports success instead, after IBA C10-93.1.1).
 *
 * @return
 *   0, -EINVAL (bad opcode, SGE, length or alignment; UD: no AH, an AH of another PD or
 *   port, a remote QPN over 24 bits), -ENOMEM (send queue full), -EPERM (QP state does not
 *   accept sends).
 */
int roce_post_send(struct roce_qp *qp, const struct roce_send_wr *wr);

/**
 * Post a receive work request.
 *
 * @return
 *   0, -EINVAL (bad SGE), -ENOMEM (receive queue full), -EPERM (QP in RESET).
 */
int roce_post_recv(struct roce_qp *qp, const struct roce_recv_wr *wr);

/** @return the name of a QP state ("RTS"). */
const char *roce_qp_state_name(enum roce_qp_state state);

/** @return the name of a completion status, as ibv_wc_status_str(). */
const char *roce_wc_status_str(enum roce_wc_status status);

#endif /* ROCE_TRANSPORT_H */
