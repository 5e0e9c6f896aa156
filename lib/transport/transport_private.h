/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_TRANSPORT_PRIVATE_H
#define ROCE_TRANSPORT_PRIVATE_H

#include <sys/queue.h>

#include <rte_log.h>
#include <rte_mbuf.h>

#include "roce_psn.h"
#include "roce_timer.h"
#include "roce_transport.h"
#include "roce_transport_counters.h"
#include "roce_wire.h"

extern int roce_transport_logtype;
#define ROCE_LOG(level, ...) \
	rte_log(RTE_LOG_##level, roce_transport_logtype, "transport: " __VA_ARGS__)

/* ---- memory ---- */

struct roce_pd {
	int socket_id;
	uint32_t nb_mr;
	uint32_t nb_ah;
};

struct roce_ah {
	struct roce_pd *pd;
	struct roce_ah_attr attr;     /* its path initialised */
};

/*
 * Zero-copy references to an MR: the shared info its attached segments point to, one per
 * shard of engines so that engines on different lcores do not bounce one cache line. Each
 * holds a base reference of 1 for as long as the MR exists; a packet segment attached from
 * the MR adds one (mr_tx_ref()), and freeing the segment (DPDK, wherever the mbuf is freed:
 * the PMD after sending, a peer that received it through a ring) takes it back. The base
 * reference keeps DPDK off its single-owner shortcut (a plain store when the count is 1), so
 * every change is atomic, and the count never reaches 0 (free_cb is never called).
 */
#define MR_TX_SHARDS 8
/* Above this many in flight on one shard a payload is copied: the count is 16 bits wide. */
#define MR_TX_REF_MAX 60000

struct mr_tx_ref {
	struct rte_mbuf_ext_shared_info shinfo;
} __rte_cache_aligned;

struct roce_mr {
	struct roce_pd *pd;
	uint8_t *addr;
	uint64_t iova;
	uint64_t length;
	uint32_t access;
	uint32_t key;          /* lkey == rkey: index << 8 | key byte */
	uint8_t tx_dma;        /* roce_mr_attr::tx_dma: its bytes may be attached to packets */
	uint64_t tx_iova;      /* bus address of addr */
	struct mr_tx_ref tx_ref[MR_TX_SHARDS];
};

/* Keys index one process-wide table; the low byte is random so stale keys miss. */
#define ROCE_MR_TABLE_SIZE (1u << 16)
#define MR_KEY_INDEX(key) ((key) >> 8)

/* rkey -> MR (mr.c); inline here because every data packet looks one up. */
extern struct roce_mr *mr_table[ROCE_MR_TABLE_SIZE];

/*
 * A zeroed packet descriptor, copied from zeros: memset() or a compound literal become a
 * rep stos, slow to start for its 88 bytes, on every packet built.
 */
static inline void
pkt_desc_zero(struct roce_pkt_desc *d)
{
	static const struct roce_pkt_desc zero;

	*d = zero;
}

/* The MR of @key if it is registered. */
static inline struct roce_mr *
mr_lookup(uint32_t key)
{
	struct roce_mr *mr = __atomic_load_n(&mr_table[MR_KEY_INDEX(key) &
			(ROCE_MR_TABLE_SIZE - 1)], __ATOMIC_ACQUIRE);

	if (MR_KEY_INDEX(key) >= ROCE_MR_TABLE_SIZE || mr == NULL || mr->key != key)
		return NULL;
	return mr;
}
/*
 * Send with Invalidate: take away the key @rkey of an MR of @qp's PD registered with
 * ROCE_ACCESS_REMOTE_INVALIDATE. @return 0, or -EINVAL when there is no such MR.
 */
int mr_invalidate_remote(const struct roce_qp *qp, uint32_t rkey);

/*
 * Local address of [iova, iova + len) of @mr if the range lies inside it and @access is
 * allowed, else NULL. Zero-length ranges never fail.
 */
static inline uint8_t *
mr_range(const struct roce_mr *mr, uint64_t iova, uint64_t len, uint32_t access)
{
	if ((mr->access & access) != access)
		return NULL;
	if (len == 0)
		return mr->addr;
	/* Written so that no sum can overflow. */
	if (iova < mr->iova || iova - mr->iova > mr->length ||
			len > mr->length - (iova - mr->iova))
		return NULL;
	return mr->addr + (iova - mr->iova);
}

/*
 * Take a zero-copy reference to @mr on @shard: @return the shared info to attach a segment
 * with, or NULL when the shard's count is at its limit (the payload is copied instead).
 */
static inline struct rte_mbuf_ext_shared_info *
mr_tx_ref(struct roce_mr *mr, unsigned int shard)
{
	struct rte_mbuf_ext_shared_info *si = &mr->tx_ref[shard].shinfo;

	if (unlikely(__atomic_fetch_add(&si->refcnt, 1, __ATOMIC_RELAXED) >= MR_TX_REF_MAX)) {
		__atomic_fetch_sub(&si->refcnt, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return si;
}

/* ---- completion queue ---- */

struct roce_cq {
	uint32_t mask;
	uint32_t head;         /* next to poll */
	uint32_t tail;         /* next to fill */
	uint64_t overruns;
	void (*notify)(void *arg);  /* armed by roce_cq_req_notify(): one call, then disarmed */
	void *notify_arg;
	struct roce_wc wc[];
};

void cq_notify(struct roce_cq *cq);

/* Add a completion; @return 0, or -ENOSPC (counted as an overrun). */
static inline int
cq_push(struct roce_cq *cq, const struct roce_wc *wc)
{
	if (unlikely(cq->tail - cq->head > cq->mask)) {
		cq->overruns++;
		return -ENOSPC;
	}
	cq->wc[cq->tail++ & cq->mask] = *wc;
	if (cq->notify != NULL)
		cq_notify(cq);
	return 0;
}

/*
 * The next completion's place in the ring, for the caller to fill and cq_commit(); NULL when
 * the CQ is full (counted as an overrun). The fast paths build their completions there: one
 * built on the stack and copied was read back with wide loads over the narrow stores that
 * had just built it, which cannot be forwarded.
 */
static inline struct roce_wc *
cq_slot(struct roce_cq *cq)
{
	if (unlikely(cq->tail - cq->head > cq->mask)) {
		cq->overruns++;
		return NULL;
	}
	return &cq->wc[cq->tail & cq->mask];
}

static inline void
cq_commit(struct roce_cq *cq)
{
	cq->tail++;
	if (cq->notify != NULL)
		cq_notify(cq);
}

/* ---- queue pair ---- */

/* Operation class of a send WQE. */
enum wqe_class {
	WQE_SEND,
	WQE_WRITE,
	WQE_READ,
	WQE_ATOMIC,
};

/* roce_post_send() sets every field before inline_data: a new field needs a line there. */
struct send_wqe {
	struct roce_send_wr wr;
	uint32_t length;        /* message bytes */
	uint32_t first_psn;     /* valid once started */
	uint32_t npkts;         /* PSNs the message takes (READ: response packets) */
	uint8_t cls;            /* enum wqe_class */
	uint8_t started;
	uint8_t done;           /* completed (acknowledged or failed) */
	uint8_t bad;            /* a local buffer failed its MR check */
	uint8_t signaled;
	uint32_t rsn;           /* SR: receive WQE sequence number (SEND, WRITE_WITH_IMM) */
	uint8_t inline_data[ROCE_MAX_INLINE];
};

struct recv_wqe {
	struct roce_recv_wr wr;
	uint32_t length;        /* sum of the SGEs */
	/* SR: the completion, written when the message's last packet lands (in any order). */
	uint32_t sr_len;
	uint32_t sr_imm;
	uint32_t sr_inv;
	uint8_t sr_op;          /* enum roce_wc_opcode */
	uint8_t sr_flags;       /* ROCE_WC_WITH_* */
};

/* A READ or atomic the responder executed, kept to answer duplicates. */
struct resp_res {
	uint8_t valid;
	uint8_t atomic;
	uint32_t first_psn;
	uint32_t last_psn;
	uint64_t va;            /* READ: start of the whole request */
	uint32_t rkey;
	uint32_t len;
	uint64_t orig;          /* atomic: the value before */
	uint32_t msn;           /* MSN the response carries */
	/* READ response stream in progress: next PSN and offset to send. */
	uint8_t sending;
	uint8_t dup;            /* serving a duplicate request again */
	uint32_t next_psn;
	uint32_t end_psn;       /* last PSN of this stream */
	uint32_t offset;
	uint8_t *data;          /* local address of va; NULL with len != 0: MR revoked */
	struct roce_mr *mr;     /* where data points (zero-copy responses reference it) */
	/* SR: a range asked again behind the stream goes first, then the stream resumes. */
	uint8_t detour;
	uint32_t detour_end;    /* last PSN of that range */
	uint32_t resume_psn;    /* where the stream was */
	uint32_t resume_off;
};

/* READ response PSNs past a go-back-N gap that are remembered (4 x 64). */
#define RD_OOO_WORDS 4

/* Requester and completer state. */
struct req_state {
	uint32_t sq_head;       /* next slot to post */
	uint32_t sq_tail;       /* oldest WQE not yet completed */
	uint32_t sq_cur;        /* WQE the next packet belongs to */
	uint32_t psn;           /* PSN of the next packet to send */
	uint32_t psn_next_new;  /* first PSN never sent */
	uint32_t una;           /* oldest PSN not acknowledged */
	uint32_t rd_inflight;   /* READ/atomic WQEs started and not completed */
	uint32_t since_ackreq;  /* packets since the last AckReq */
	uint32_t next_rsn;      /* SR: receive sequence number of the next SEND/WRITE_IMM */
	uint8_t retry_left;
	uint8_t rnr_left;
	uint8_t rnr_wait;       /* waiting out an RNR timer */
	uint8_t rewound_at_valid;
	uint32_t rewound_at;    /* PSN of the last go-back-N, so a gap retries once */
	/*
	 * Go-back-N READ responses past a gap, placed already (comp.c): a gap is a loss only
	 * once it outlives the reordering window, as TCP's RACK judges.
	 */
	uint64_t rd_ooo[RD_OOO_WORDS]; /* bit i: PSN una + i placed */
	uint32_t rd_gap_psn;    /* una when a response past it first came */
	uint32_t rd_reissued;   /* where the last window re-issue went back to */
	uint32_t rd_reo_ns;     /* reordering window; 0: RD_REO_MIN_NS */
	uint8_t rd_gap_open;
	uint8_t rd_reissued_valid;
	uint8_t rd_clean;       /* gaps closed by the late response since the window last moved */
	struct roce_timer retry_timer;  /* what qp_reset() clears ends here */
	struct roce_timer rnr_timer;
	struct roce_timer rd_reo_timer;
};

/* Responder state. */
struct resp_state {
	uint32_t epsn;          /* expected PSN */
	uint32_t msn;
	uint8_t nak_sent;       /* a sequence NAK went out for the current gap */
	uint32_t in_msg;        /* 0, or ROCE_M_SEND / ROCE_M_WRITE of a message in progress */
	uint32_t rq_head;       /* next slot to post */
	uint32_t rq_tail;       /* receive WQE in use or next to use */
	uint32_t recv_off;      /* bytes of the current SEND placed */
	/* WRITE in progress */
	struct roce_mr *wr_mr;  /* where wr_dst points */
	uint8_t wr_revoked;     /* wr_mr was deregistered under the WRITE */
	uint8_t *wr_dst;
	uint32_t wr_len;        /* RETH length */
	uint32_t wr_off;        /* bytes placed */
	/* resources for READ/atomic: a ring of max_dest_rd_atomic entries */
	uint32_t res_head;
	struct resp_res *res;
	uint32_t nb_res;
	uint8_t sending_reads;  /* some resource has a response stream in progress */
	/* An ACK/NAK held until the engine polls (coalesced) or READ responses before it left. */
	uint8_t ack_pending;
	uint8_t ack_sr;         /* the held ACK is an SR ACK, built when it goes */
	uint8_t nak_fatal;      /* the held NAK is fatal: the QP goes to error after it */
	uint8_t nak_cnt;        /* and counts in this counter (enum roce_xport_counter) */
	uint8_t ack_syndrome;
	uint32_t ack_psn;
	uint32_t ack_msn;
};

/* ---- selective repeat ---- */

/* Requester: one slot per PSN of the window, at psn & mask. */
struct sr_tx_slot {
	uint32_t tx_seq;        /* transmission number of its last send */
	uint8_t flags;          /* SR_TX_* */
	uint8_t kind;           /* SR_K_* */
};

#define SR_TX_DONE     0x01 /* acknowledged, or its response arrived */
#define SR_TX_PENDING  0x02 /* to be resent */
#define SR_TX_REQ_RCVD 0x04 /* READ/atomic: the responder has the request */
#define SR_TX_RTX      0x08 /* resent at least once */

enum sr_kind {
	SR_K_DATA,              /* SEND or WRITE packet */
	SR_K_READ_HEAD,         /* first PSN of a READ request (its PSN) */
	SR_K_READ_BODY,         /* other PSNs a READ request covers */
	SR_K_ATOMIC,
};

/* Responder: one flag byte per PSN of the window. */
#define SR_RX_RCVD  0x01    /* placed (or READ/atomic deferred) */
#define SR_RX_LAST  0x02    /* ends a message: MSN + 1 when passed */
#define SR_RX_COMP  0x04    /* completes the next receive WQE when passed */
#define SR_RX_DEFER 0x08    /* a READ/atomic waiting in the defer table */

/* A READ or atomic that arrived out of order, executed when the PSNs before it are in. */
struct sr_defer {
	uint8_t valid;
	uint8_t opcode;
	uint32_t psn;
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
	uint64_t swap_add;
	uint64_t compare;
};

/* Selective-repeat state; allocated on INIT->RTR when attr.sr is set. */
struct sr_state {
	uint32_t mask;          /* window slots - 1 */
	uint64_t rto_ns;
	/* requester */
	struct sr_tx_slot *tx;
	uint32_t tx_seq;        /* transmissions so far */
	uint32_t hi_seq;        /* largest tx_seq known to have arrived */
	uint32_t hi_done;       /* highest PSN acknowledged */
	uint32_t nb_pending;    /* slots with SR_TX_PENDING */
	uint8_t backoff;        /* RTO expiries since the last progress */
	/* Round-trip estimate (RFC 6298, one timed PSN at a time, none resent: Karn): the RTO
	 * is max(rto_ns, srtt + 4 rttvar), so queues longer than rto_ns cause no resends. */
	uint8_t rtt_on;
	uint32_t rtt_psn;
	uint64_t rtt_t0;
	uint64_t srtt_ns;
	uint64_t rttvar_ns;
	/*
	 * retry_cnt is spent per IBA ACK timeout of silence, not per (much shorter) RTO: an
	 * expiry spends one only when live_ns, the last progress or RNR NAK (or the last spend),
	 * is that long ago. A peer descheduled for longer than the RTO costs resends, not the QP.
	 */
	uint64_t live_ns;
	/*
	 * End-to-end credits (IBA 9.7.7.2, in RSN terms): SR ACKs carry, in the AETH credit field,
	 * how many receive WQEs the responder holds beyond the ones completed. A SEND or
	 * WRITE_WITH_IMM starts only while its RSN is at most rsn_limit, the RSN of the oldest
	 * one not completed here plus those credits: all of them fit a posted receive but the
	 * last, IBA's limited WQE, which finds out when more are posted. credit_inval: the peer
	 * reports no credits (an older rocedp), nothing is held back.
	 */
	uint32_t rsn_una;       /* RSN of the oldest SEND/WRITE_WITH_IMM not completed */
	uint32_t rsn_limit;
	uint8_t credit_inval;
	/*
	 * After an RNR NAK the PSN it names goes again alone, as a probe; what follows it (the
	 * rest of its message, dropped by the responder) waits until the probe is answered,
	 * so a receiver without receive WQEs costs one packet per RNR timer.
	 */
	uint8_t rnr_probe;
	uint32_t rnr_psn;
	/* responder */
	uint8_t *rx;
	uint32_t rx_hi;         /* highest PSN placed */
	/*
	 * The RSN limit the last SR ACK's credits told (rq_tail + credits then): receives posted
	 * well past it are told at once (sr_recv_posted), as TCP updates an opened window.
	 */
	uint32_t credit_sent;
	uint8_t credit_told;
	uint32_t ooo;           /* out-of-order arrivals since the gap opened */
	struct sr_defer *defer;
	uint32_t nb_defer;
};

/* ---- unreliable datagram ---- */

/* Where a posted UD send goes: what ud_post_send() copied from its WR and AH, by SQ slot. */
struct ud_dest {
	struct roce_path path;  /* the AH's, with the QP's UDP source port */
	uint32_t remote_qpn;
	uint32_t qkey;          /* the DETH Q_Key: the controlled-Q_Key rule already applied */
};

struct xport_ops;

struct roce_qp {
	struct roce_engine *eng;
	const struct xport_ops *ops;  /* RC: go-back-N or selective repeat (INIT->RTR); UD */
	struct roce_pd *pd;
	struct roce_cq *send_cq;
	struct roce_cq *recv_cq;
	uint32_t qpn;
	uint32_t key;           /* its key in the engine's QP table: the QPN, or gsi_key() */
	uint8_t transport;      /* ROCE_TRANSPORT_RC or ROCE_TRANSPORT_UD: what it accepts */
	enum roce_qp_state state;
	struct roce_qp_attr attr;
	uint32_t mtu;           /* path MTU in bytes */
	int sq_sig_all;
	uint32_t max_inline;
	uint64_t context;       /* roce_qp_init_attr::qp_context */
	uint32_t sq_size;       /* power of two */
	uint32_t rq_size;
	struct send_wqe *sq;
	struct recv_wqe *rq;
	struct req_state req;
	struct resp_state resp;
	struct sr_state sr;
	uint32_t inflight;      /* cap on packets in flight */
	uint8_t active;         /* on the engine's active list */
	TAILQ_ENTRY(roce_qp) active_link;
	uint8_t paced;          /* roce_qp_set_paced(): a marked_only pacer asks about it */
	uint64_t pace_at;       /* the pacer holds it back until then (ns) */
	struct roce_timer pace_timer;
	struct ud_dest *ud_dest; /* UD: one per SQ slot */
	uint64_t cnt[ROCE_XC_NUM];
};

/* The QP table key of the QP1 of port @port_num: above every 24-bit QPN, so it meets none. */
static inline uint32_t
gsi_key(uint8_t port_num)
{
	return ROCE_GSI_QPN | (uint32_t)port_num << 24;
}

TAILQ_HEAD(roce_qp_list, roce_qp);

/* ---- engine ---- */

struct roce_engine {
	struct roce_engine_conf conf;
	struct rte_mempool *mp;
	uint64_t now;
	struct roce_qp **qp_table;    /* open addressing by QPN */
	uint32_t qp_table_mask;
	uint32_t nb_qps;
	uint32_t next_qpn;
	struct roce_qp_list active;   /* QPs with something to send */
	struct roce_timer_wheel wheel;
	struct rte_mbuf **tx;         /* ring of packets to send */
	uint32_t tx_mask;
	uint32_t tx_head;
	uint32_t tx_tail;
	uint64_t cnt[ROCE_XC_NUM];    /* no-QP counts and destroyed QPs' totals */
	struct roce_pacer pacer;      /* next == NULL: no pacing */
	uint32_t pace_held;           /* QPs the pacer holds back (pace_at set) */
	struct roce_engine_cc cc;     /* congestion control's callbacks, or zeros */
	struct roce_wire_stats wire;  /* pending ICRCs roce_engine_rx() checked */
	struct roce_tx_zc zc[ROCE_ENGINE_MAX_PORTS]; /* how payloads go, by port (zc.c) */
	uint8_t ref_shard;            /* its shard of every MR's zero-copy references */
};

static inline uint32_t
tx_room(const struct roce_engine *eng)
{
	return eng->tx_mask + 1 - (eng->tx_head - eng->tx_tail);
}

/*
 * Queue a built packet of @qp for its port and count it: TX_PKTS and @kind (ROCE_XC_TX_REQ,
 * ROCE_XC_TX_RESP or ROCE_XC_CNP_TX). @return 0, or -ENOSPC when the ring is full: the packet
 * is freed and, unless a request (only resent later), counted as TX_RING_FULL.
 */
int qp_tx(struct roce_qp *qp, struct rte_mbuf *m, enum roce_xport_counter kind);

/* The pacer's timer: @qp may send again. */
void engine_pace_done(struct roce_timer *t, void *arg);
/* The pacer no longer holds @qp back (its timer fired or was cancelled). */
void engine_pace_release(struct roce_qp *qp);

/* Put @qp on the active list so the next poll lets it send. */
void engine_activate(struct roce_qp *qp);

/* Take @qp off the active list. */
void engine_deactivate(struct roce_qp *qp);

/* QP table by QPN. */
struct roce_qp *engine_qp_lookup(const struct roce_engine *eng, uint32_t qpn);
int engine_qp_insert(struct roce_engine *eng, struct roce_qp *qp);
void engine_qp_remove(struct roce_engine *eng, struct roce_qp *qp);
uint32_t engine_qpn_pick(struct roce_engine *eng);
/* Test hook: slots a lookup of @qpn reads. */
uint32_t engine_qp_probes(const struct roce_engine *eng, uint32_t qpn);

/* ---- QP internals ---- */

static inline struct send_wqe *
sq_wqe(const struct roce_qp *qp, uint32_t idx)
{
	return &qp->sq[idx & (qp->sq_size - 1)];
}

static inline struct recv_wqe *
rq_wqe(const struct roce_qp *qp, uint32_t idx)
{
	return &qp->rq[idx & (qp->rq_size - 1)];
}

/* Number of packets (PSNs) a message of @len bytes takes at @mtu. */
static inline uint32_t
pkts_of(uint32_t len, uint32_t mtu)
{
	return len == 0 ? 1 : (len + mtu - 1) / mtu;
}

/* Move to ERR: completes every outstanding WQE with WR_FLUSH_ERR. */
void qp_to_error(struct roce_qp *qp);

/* Complete the oldest send WQE with @status (and the NAK syndrome as vendor_err). */
void qp_complete_send(struct roce_qp *qp, struct send_wqe *wqe, enum roce_wc_status status,
		uint32_t vendor_err);

/* Build and queue a response-side packet (ACK/NAK/atomic ACK) with no payload. */
int qp_send_ack(struct roce_qp *qp, uint8_t opcode, uint32_t psn, uint8_t syndrome,
		uint32_t msn, uint64_t orig);

/* Start a packet of @opcode for @qp; @return its payload area, NULL when out of mbufs. */
struct rte_mbuf *qp_pkt_alloc(struct roce_qp *qp);

/* The port index a QP sends on (roce_qp_attr::port_num less one), as packets are stamped. */
static inline uint8_t
qp_port(const struct roce_qp *qp)
{
	return qp->attr.port_num > 0 ? (uint8_t)(qp->attr.port_num - 1) : 0;
}

/* A piece of a packet's payload: local bytes and the MR they lie in (NULL: inline data). */
struct tx_piece {
	struct roce_mr *mr;
	const uint8_t *addr;
	uint32_t len;
};

/*
 * Build a payload packet of @qp (zc.c): the headers of @d for @path, then the @len payload
 * bytes of the @npc pieces, copied or attached from their MRs as the engine's setting for the
 * QP's port says (roce_tx_zc), counted as TX_ZC or under the reason for the copy.
 * @return the packet, or NULL when out of mbufs (TX_NOMBUF) or on a descriptor the builder
 * refuses.
 */
struct rte_mbuf *qp_build_data(struct roce_qp *qp, const struct roce_path *path,
		const struct roce_pkt_desc *d, const struct tx_piece *pc, unsigned int npc,
		uint32_t len);

/* IB RNR timer code to ns. */
uint64_t rnr_timer_ns(uint8_t code);

/* Local ACK timeout in ns; 0 means infinite. */
static inline uint64_t
ack_timeout_ns(uint8_t timeout)
{
	return timeout == 0 ? 0 : 4096ull << timeout;
}

/* scatter/gather (sge.c): 0 or -EACCES when an SGE fails its MR check */
int sge_check(const struct roce_qp *qp, const struct roce_sge *sg, unsigned int n,
		uint32_t access);
/* The pieces (at most @n) of message bytes [off, off + len): their count, or -EACCES. */
int sge_pieces(const struct roce_qp *qp, const struct roce_sge *sg, unsigned int n,
		uint32_t off, uint32_t len, struct tx_piece *pc);
int sge_scatter(const struct roce_qp *qp, const struct roce_sge *sg, unsigned int n,
		uint32_t off, const struct rte_mbuf *m, uint32_t moff, uint32_t len);
int sge_scatter_buf(const struct roce_qp *qp, const struct roce_sge *sg, unsigned int n,
		const void *src, uint32_t len);
/* Copy @len bytes at @off of a packet, across segments. */
void pkt_copy_out(const struct rte_mbuf *m, uint32_t off, uint8_t *dst, uint32_t len);

static inline int
is_rd_atomic(const struct send_wqe *wqe)
{
	return wqe->cls == WQE_READ || wqe->cls == WQE_ATOMIC;
}

/* A SEND or WRITE_WITH_IMM: it takes a receive WQE, and in SR an RSN. */
static inline int
wqe_takes_recv(const struct send_wqe *wqe)
{
	return wqe->cls == WQE_SEND || wqe->wr.opcode == ROCE_WR_RDMA_WRITE_WITH_IMM;
}

static inline uint32_t
last_psn(const struct send_wqe *wqe)
{
	return roce_psn_add(wqe->first_psn, wqe->npkts - 1);
}

/* PSNs from @psn to the end of @wqe (started): a READ request covers all of them at once. */
static inline uint32_t
psns_left(const struct send_wqe *wqe, uint32_t psn)
{
	return wqe->npkts - (uint32_t)roce_psn_diff(psn, wqe->first_psn);
}

static inline struct sr_tx_slot *
sr_tx_slot(const struct roce_qp *qp, uint32_t psn)
{
	return &qp->sr.tx[psn & qp->sr.mask];
}

/* ---- transport modes ---- */

/*
 * What differs between go-back-N (IBA, req.c/resp.c/comp.c) and selective repeat
 * (doc/selective-repeat.md, sr_*.c). roce_qp_modify() picks one on INIT->RTR and goes back to
 * go-back-N on RESET; every entry point dispatches once, per packet or per burst.
 */
struct xport_ops {
	/* responder: a request packet for a QP in RTR or later */
	void (*resp_rx)(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta);
	/* completer: an ACK, NAK, READ response or atomic ACK for a QP in RTS or SQD */
	void (*comp_rx)(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta);
	/* requester: send up to @budget packets, resends first; @return packets sent */
	uint32_t (*req_send)(struct roce_qp *qp, uint32_t budget);
	/* requester: whether req_send() would send something now */
	int (*req_has_work)(const struct roce_qp *qp);
	/* requester: length of the retransmit timer in ns (0: none) */
	uint64_t (*retry_ns)(const struct roce_qp *qp);
	/* completer: the retransmit timer expired with PSNs outstanding */
	void (*timeout)(struct roce_qp *qp);
	/* transport bits of SEND/WRITE request opcodes: RC, or the SR extension's */
	uint8_t data_transport;
	/* a duplicate READ may ask again for part of what is left (SR re-requests a gap) */
	uint8_t dup_read_part;
};

/* unreliable datagram (ud.c) */
extern const struct xport_ops xport_ud;
int ud_setup(struct roce_qp *qp);
void ud_free(struct roce_qp *qp);
int ud_post_send(struct roce_qp *qp, const struct roce_send_wr *wr);
void ud_rx(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta);
/* Queue the send WQE the caller checked, at the SQ head (qp.c, shared with RC). */
int sq_push(struct roce_qp *qp, const struct roce_send_wr *wr, int cls, uint32_t len);
/* Message length of a send WR, or -1 when its SGEs do not add up (qp.c). */
int64_t wr_length(const struct roce_send_wr *wr);

/* SR setup on INIT->RTR, teardown on RESET/destroy (sr.c). */
int sr_setup(struct roce_qp *qp);
void sr_free(struct roce_qp *qp);
void sr_clear(struct roce_qp *qp);
/* AETH credit code for @n receive WQEs (rounded down, as IBA's table), and back. */
uint8_t sr_credit_code(uint32_t n);
uint32_t sr_credit_count(uint8_t code);

/* requester (req.c; go-back-N's own part: gbn_*) */
uint32_t req_send(struct roce_qp *qp, uint32_t budget);
struct send_wqe *req_next(const struct roce_qp *qp);
uint32_t req_xmit(struct roce_qp *qp, struct send_wqe *wqe, uint32_t max_span);
struct rte_mbuf *req_build(struct roce_qp *qp, const struct send_wqe *wqe, uint32_t psn,
		uint32_t span, int resend, int *bad_sge);
void req_rewind(struct roce_qp *qp, uint32_t psn);
void req_arm_retry(struct roce_qp *qp);
uint32_t gbn_req_send(struct roce_qp *qp, uint32_t budget);
int gbn_req_has_work(const struct roce_qp *qp);
uint64_t gbn_retry_ns(const struct roce_qp *qp);

static inline int
req_has_work(const struct roce_qp *qp)
{
	return qp->ops->req_has_work(qp);
}

/* completer (comp.c) */
void comp_pop(struct roce_qp *qp, enum roce_wc_status status, uint32_t vendor_err);
void comp_fail(struct roce_qp *qp, enum roce_wc_status status, uint32_t vendor_err);
void comp_progress(struct roce_qp *qp);
int comp_use_retry(struct roce_qp *qp);
void comp_nak(struct roce_qp *qp, uint32_t psn, uint8_t syndrome);
int comp_rnr_spend(struct roce_qp *qp, uint8_t syndrome);
void comp_rnr_wait(struct roce_qp *qp, uint8_t syndrome);
void comp_retry_timeout(struct roce_timer *t, void *arg);
void comp_rnr_done(struct roce_timer *t, void *arg);
void comp_rd_reo_timeout(struct roce_timer *t, void *arg);
void gbn_comp_rx(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta);
void gbn_timeout(struct roce_qp *qp);

static inline void
comp_rx(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	if (qp->state != ROCE_QPS_RTS && qp->state != ROCE_QPS_SQD) {
		qp->cnt[ROCE_XC_STATE_DROP]++;
		return;
	}
	qp->ops->comp_rx(qp, m, meta);
}

/* responder (resp.c) */

#define ACK_SYNDROME (ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID)

/* What a failed check answers: NAK syndrome and counter; fatal ones end the QP. */
enum resp_err {
	RESP_OK,
	RESP_ERR_INV,   /* invalid request */
	RESP_ERR_ACC,   /* remote access error */
	RESP_ERR_OP,    /* remote operational error */
	RESP_ERR_RNR,   /* no receive WQE */
};

/* Per-packet helpers of both responders, inline: they sit on the receive path. */

/* Hold an ACK/NAK until the engine polls: a later one replaces it (ACKs are cumulative). */
static inline void
resp_hold_ack(struct roce_qp *qp, int sr, uint32_t psn, uint8_t syndrome)
{
	struct resp_state *rs = &qp->resp;

	rs->ack_pending = 1;
	rs->ack_sr = sr;
	rs->ack_psn = psn;
	rs->ack_syndrome = syndrome;
	rs->ack_msn = rs->msn;
	engine_activate(qp);
}

/* The QP must allow the remote operation. */
static inline enum resp_err
resp_check_access(const struct roce_qp *qp, uint32_t mask)
{
	uint32_t need = mask & ROCE_M_WRITE ? ROCE_ACCESS_REMOTE_WRITE :
		mask & ROCE_M_READ ? ROCE_ACCESS_REMOTE_READ :
		mask & ROCE_M_ATOMIC ? ROCE_ACCESS_REMOTE_ATOMIC : 0;

	return (qp->attr.qp_access_flags & need) == need ? RESP_OK : RESP_ERR_INV;
}

/* First/Middle carry exactly one MTU; Last 1..MTU; Only 0..MTU. */
static inline enum resp_err
resp_check_length(const struct roce_qp *qp, uint32_t mask, uint32_t plen)
{
	if (!(mask & ROCE_M_PAYLOAD))
		return RESP_OK;
	if (!(mask & ROCE_M_LAST))
		return plen == qp->mtu ? RESP_OK : RESP_ERR_INV;
	if (!(mask & ROCE_M_FIRST))
		return plen >= 1 && plen <= qp->mtu ? RESP_OK : RESP_ERR_INV;
	return plen <= qp->mtu ? RESP_OK : RESP_ERR_INV;
}

/* Local address of a remote range by rkey, or NULL (remote access error). */
static inline uint8_t *
resp_mr(const struct roce_qp *qp, uint32_t rkey, uint64_t va, uint32_t len, uint32_t access,
		struct roce_mr **mrp)
{
	struct roce_mr *mr = mr_lookup(rkey);

	if (mr == NULL || mr->pd != qp->pd)
		return NULL;
	if (mrp != NULL)
		*mrp = mr;
	return mr_range(mr, va, len, access);
}

void resp_mr_revoke(struct roce_qp *qp, const struct roce_mr *mr);
uint32_t resp_send(struct roce_qp *qp, uint32_t budget);
void resp_nak(struct roce_qp *qp, uint32_t psn, enum resp_err err);
void resp_complete_recv(struct roce_qp *qp, enum roce_wc_status status, enum roce_wc_opcode op,
		uint32_t byte_len, const struct rte_mbuf *m, const struct roce_pkt_meta *meta);
enum resp_err resp_check(const struct roce_qp *qp, const struct roce_pkt_meta *meta);
int resp_invalidate_key(struct roce_qp *qp, uint32_t rkey);
enum resp_err resp_exec_read(struct roce_qp *qp, struct rte_mbuf *m,
		const struct roce_pkt_meta *meta);
enum resp_err resp_exec_read_at(struct roce_qp *qp, uint32_t psn, uint64_t va, uint32_t rkey,
		uint32_t len);
enum resp_err resp_exec_atomic(struct roce_qp *qp, struct rte_mbuf *m,
		const struct roce_pkt_meta *meta);
enum resp_err resp_exec_atomic_at(struct roce_qp *qp, uint32_t psn, uint8_t opcode, uint64_t va,
		uint32_t rkey, uint64_t swap_add, uint64_t compare);
void resp_duplicate(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta);
void gbn_resp_rx(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta);

static inline void
resp_rx(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	/* A fatal NAK waits for READ responses before it: the QP takes nothing meanwhile. */
	if (unlikely(qp->resp.nak_fatal)) {
		qp->cnt[ROCE_XC_STATE_DROP]++;
		return;
	}
	qp->ops->resp_rx(qp, m, meta);
}

/* selective repeat: requester (sr_req.c), responder (sr_resp.c), completer (sr_comp.c) */
uint32_t sr_req_send(struct roce_qp *qp, uint32_t budget);
int sr_req_has_work(const struct roce_qp *qp);
uint64_t sr_retry_ns(const struct roce_qp *qp);
void sr_mark_pending(struct roce_qp *qp, uint32_t psn);
void sr_resp_rx(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta);
void sr_recv_posted(struct roce_qp *qp);
int sr_sack_now(struct roce_qp *qp);
void sr_comp_rx(struct roce_qp *qp, struct rte_mbuf *m, const struct roce_pkt_meta *meta);
void sr_timeout(struct roce_qp *qp);

#endif /* ROCE_TRANSPORT_PRIVATE_H */
