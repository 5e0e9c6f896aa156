/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_XPORT_HARNESS_H
#define ROCE_XPORT_HARNESS_H

/*
 * Two transport engines joined by an in-memory link with a virtual clock and seeded
 * impairment (loss, duplication, reordering, delay), stepped deterministically. Every packet
 * crossing the link goes through the real classifier (and its ICRC check) before the peer
 * engine sees it. A tap can inspect, drop or rewrite packets in flight.
 */

#include <stdint.h>

#include "roce_transport.h"
#include "roce_transport_counters.h"
#include "roce_wire.h"

#define XH_MAX_INFLIGHT 65536

/**
 * Impairment of one direction. Loss is uniform (@loss), or bursty with a Gilbert-Elliott
 * chain when ge_p > 0: each packet first moves the chain (good -> bad with ge_p, bad -> good
 * with ge_r), then is lost with @loss in the good state and ge_loss in the bad one (mean
 * burst 1/ge_r packets, average loss ge_p / (ge_p + ge_r) * ge_loss in the bad state).
 */
struct xh_impair {
	double loss;          /**< probability a packet is dropped (good state) */
	double ge_p;          /**< Gilbert-Elliott: good -> bad per packet; 0 = uniform loss */
	double ge_r;          /**< Gilbert-Elliott: bad -> good per packet */
	double ge_loss;       /**< Gilbert-Elliott: loss probability in the bad state */
	double dup;           /**< probability a packet is delivered twice */
	double reorder;       /**< probability a packet is held back by reorder_ns */
	uint64_t delay_ns;    /**< one-way delay of every packet */
	uint64_t reorder_ns;  /**< extra delay of a reordered packet */
	double rate_gbps;     /**< link rate: packets serialise one after another; 0 = infinite */
	/**
	 * With @rate_gbps: the most serialisation the link queues (a NIC's ring); beyond it the
	 * sender's packets wait in its engine, which then holds back what it sends. 0: unlimited.
	 */
	uint64_t backlog_ns;
};

/** Tap verdicts. */
enum xh_verdict { XH_PASS, XH_DROP };

/** Called for every packet leaving engine @from (0 or 1) before impairment. */
typedef enum xh_verdict (*xh_tap_fn)(void *arg, int from, struct rte_mbuf *m);

struct xh_pkt {
	uint64_t due;
	struct rte_mbuf *m;
	int to;
};

struct xh {
	struct rte_mempool *mp;
	struct roce_engine *eng[2];
	struct roce_pd *pd[2];
	uint64_t now;
	uint64_t seed;
	struct xh_impair impair[2];  /**< by sending side */
	uint8_t ge_bad[2];           /**< Gilbert-Elliott state of each direction */
	uint64_t busy_until[2];      /**< each direction's link is serialising until then */
	/**
	 * Engine i is descheduled until stall_until[i], as a worker the OS does not run: it is not
	 * polled, its timers wait, and packets for it wait on the link.
	 */
	uint64_t stall_until[2];
	xh_tap_fn tap;
	void *tap_arg;
	uint32_t nb_inflight;
	struct xh_pkt inflight[XH_MAX_INFLIGHT];
	uint64_t delivered;
	uint64_t dropped;
	struct roce_wire_stats wire;
	/** Zero-copy transmit on (xh_zc()): MRs xh_qp_connect() makes are registered for DMA. */
	uint8_t zc;
	/** MRs xh_qp_destroy() found still referenced by packets: freed by xh_fini(). */
	uint32_t nb_late;
	struct {
		struct roce_mr *mr;
		uint8_t *buf;
	} late[64];
};

/** A connected QP pair with its CQs and MRs, one end on each engine. */
struct xh_qp {
	struct roce_qp *qp[2];
	struct roce_cq *cq[2];     /**< send and receive completions of each end */
	uint8_t *buf[2];           /**< memory of each end */
	uint64_t len;
	struct roce_mr *mr[2];
};

/** QP connection parameters (defaults when zero, as perftest uses). */
struct xh_qp_conf {
	enum roce_mtu mtu;         /**< default ROCE_MTU_1024 */
	uint64_t buf_len;          /**< MR size on each side, default 1 MiB */
	uint32_t sq_depth;         /**< default 128 */
	uint32_t rq_depth;         /**< default 128 */
	uint8_t timeout;           /**< default 14 */
	uint8_t retry_cnt;         /**< default 7; use XH_ZERO for 0 */
	uint8_t rnr_retry;         /**< default 7 */
	uint8_t min_rnr_timer;     /**< default 12 */
	uint8_t max_rd_atomic;     /**< default 16 */
	uint32_t access;           /**< QP remote access, default all */
	uint32_t mr_access;        /**< MR access, default all */
	uint32_t psn[2];           /**< initial send PSN of each end (default seeded) */
	int ipv6;
	uint8_t sr;                /**< selective repeat: 1 both ends, 2 side 0 only (mismatch) */
	uint32_t sr_rto_us;        /**< SR retransmit timeout (0: default) */
	uint32_t max_inflight;     /**< per-QP cap on packets in flight (0: engine's) */
	uint8_t port_num;          /**< both ends' roce_qp_attr::port_num (0: unset) */
	uint32_t rkey[2];          /**< each end's MR key (0: a random one) */
	uint64_t iova[2];          /**< each end's MR address in WRs and RETHs (0: its own) */
};

/** Stand-in for an explicit zero in fields whose zero means "default". */
#define XH_ZERO 0xFF

/**
 * Start two engines (each with a pool of small mbufs for zero-copy transmit, used once
 * xh_zc() turns it on); @p seed drives impairment and PSNs.
 */
void xh_init(struct xh *h, uint64_t seed, const struct roce_engine_conf *conf);
/**
 * Free what is in flight, the engines, then the MRs xh_qp_destroy() had to leave (checked
 * unreferenced by then), and the PDs.
 */
void xh_fini(struct xh *h);

/**
 * Zero-copy transmit on both engines, every port (roce_engine_set_tx_zc() with @p max_segs
 * and @p min_len), and the MRs of the QPs connected from now on registered for DMA.
 */
void xh_zc(struct xh *h, uint16_t max_segs, uint32_t min_len);

/** The zero-copy mbuf pool of the engines (for tests that exhaust it). */
struct rte_mempool *xh_zc_pool(void);

/** Create and connect a QP pair; @return 0 or -errno. */
int xh_qp_connect(struct xh *h, struct xh_qp *p, const struct xh_qp_conf *conf);
/**
 * Destroy a QP pair. An MR that packets still reference (queued in an engine or on the link)
 * cannot be deregistered yet: it and its memory go in xh_fini().
 */
void xh_qp_destroy(struct xh *h, struct xh_qp *p);

/** Move packets, run timers; one step of at most @p quantum_ns of virtual time. */
void xh_step(struct xh *h, uint64_t quantum_ns);

/**
 * Step until @p done returns non-zero or @p timeout_ns of virtual time pass.
 * @return 0 when done, -ETIMEDOUT otherwise.
 */
int xh_run(struct xh *h, int (*done)(void *arg), void *arg, uint64_t timeout_ns);

/** Step until nothing is in flight and no timer is due for @p idle_ns. */
void xh_settle(struct xh *h, uint64_t idle_ns);

/** Poll @p max completions of @p cq into @p wc, stepping up to @p timeout_ns. */
int xh_poll_cq(struct xh *h, struct roce_cq *cq, struct roce_wc *wc, int max,
		uint64_t timeout_ns);

/** Sum of one transport counter over an engine. */
uint64_t xh_counter(const struct xh *h, int side, enum roce_xport_counter c);

#endif /* ROCE_XPORT_HARNESS_H */
