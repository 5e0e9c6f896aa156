/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_DP_PRIVATE_H
#define ROCE_DP_PRIVATE_H

#include <sys/queue.h>

#include <rte_log.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "roce_dataplane.h"
#include "roce_dp_pfc.h"
#include "roce_dp_capture.h"
#include "roce_dp_gsi.h"
#include "roce_impair.h"
#include "roce_net.h"
#include "roce_txq.h"

extern int roce_dp_logtype;
#define ROCE_LOG(level, ...) \
	rte_log(RTE_LOG_##level, roce_dp_logtype, "dataplane: " __VA_ARGS__)

#define DP_BURST ROCE_TXQ_BURST
#define DP_RING_SIZE 4096

/* States of a control request (roce_dp_call()); the worker moves it from QUEUED to RUNNING
 * to DONE, its caller from QUEUED to CANCELLED when it stops waiting. */
enum dp_rpc_state {
	DP_RPC_QUEUED,
	DP_RPC_RUNNING,
	DP_RPC_DONE,
	DP_RPC_CANCELLED,
};

/* A control request waiting in a worker's RPC ring: on the heap, so that one its caller gave
 * up on stays valid until the worker takes it out and frees it. */
struct dp_rpc {
	roce_dp_fn fn;
	void *arg;
	int ret;
	uint32_t state;          /* enum dp_rpc_state */
};

struct dp_job {
	struct roce_gen_conf conf;
	const struct dp_gen_engine *eng;
	struct roce_gen_stats st;
	struct roce_worker *w;
	struct roce_qp *qp;
	struct roce_hist *hist;            /* latency jobs */
	uint64_t win_ns;                   /* peak-rate window start and bytes then */
	uint64_t win_bytes;
	uint64_t last_post_ns;             /* latency jobs: previous post, messages seen */
	uint64_t seen;
	uint64_t next;                     /* MIXED_RECV: the next message index to expect */
	uint64_t recv_posted;              /* LAT_SEND, BW_BIDI: receives posted, at most conf.count */
	uint32_t recv_len;                 /* bytes of each receive: size, + the GRH area on UD */
	uint8_t lat_wait_cq;               /* a latency job's message awaits its completion */
	uint8_t pp_pending;                /* PINGPONG: what the next SEND waits for (pingpong.c) */
	uint8_t pp_inline;                 /* PINGPONG: its SENDs go inline */
	uint8_t paced;                     /* its rate is the pacer's (dp_cc_pace()) */
	uint8_t stopping;
};

struct roce_worker {
	struct roce_dp *dp;
	unsigned int idx;
	unsigned int lcore;
	int socket;
	struct rte_mempool *mp;
	struct rte_mempool *zc_mp;         /* small mbufs of zero-copy frames, or NULL */
	struct roce_engine *eng;
	struct rte_ring *inbound;          /* RoCE packets of our QPs from other workers */
	struct rte_ring *rpc;              /* requests from the control lcore */
	struct rte_ring *txr[ROCE_DP_MAX_PORTS]; /* frames for ports whose queue we own */
	int rxq[ROCE_DP_MAX_PORTS];        /* our queue on each port, or -1 */
	struct roce_net *net[ROCE_DP_MAX_PORTS]; /* ARP/ND/ICMP on the ports we have a queue of */
	/* How we send on each port: our queue, or the ring of the worker owning one. */
	struct roce_txq txq[ROCE_DP_MAX_PORTS];
	struct roce_wire_stats wire;
	uint64_t cnt[ROCE_DP_CNT_NUM];
	struct dp_job *jobs;               /* dense: the first nb_jobs are in use */
	/* jobs[i] needs no poll: finished, or waiting with its CQ armed (job_park) */
	uint8_t *job_parked;
	uint32_t nb_jobs;
	uint32_t max_jobs;
	struct roce_cc *cc;                /* congestion control (cc.c), once turned on */
	uint8_t cc_on;                     /* QPs going to RTR get congestion control */
	uint8_t cc_ecn;                    /* ... and this ECN codepoint */
	struct dp_stages *stages;          /* stage stamps (stages.h), while the loop runs */
	/* counters.c: the values at the last roce_dp_counters_clear(), control side only */
	struct roce_worker_stats cnt_base;
} __rte_cache_aligned;

struct roce_dp {
	struct roce_dp_conf conf;
	struct roce_port ports[ROCE_DP_MAX_PORTS];
	uint16_t nb_ports;
	/* The verbs façade (verbs.c): PDs by number (0: shared), MRs by key. */
	struct dp_pd *pds;
	struct rte_hash *mr_hash;
	struct dp_ah *ahs;                 /* address handles by number (from 1) */
	uint32_t next_mr_id;
	/* Deregistered MRs whose bytes transmitted frames still carry (zero-copy): freed by
	 * dp_mr_reap() once the PMD has given every frame back. */
	TAILQ_HEAD(, dp_mr) mr_gone;
	uint64_t mr_gone_cleanup_ns;       /* when the PMDs were last asked to free sent frames */
	uint32_t next_worker;              /* QPs go to the workers in turn */
	volatile int stop;
	int started;
	struct roce_worker *workers;
	struct rte_rcu_qsbr *qsbr;          /* workers' quiescent points (quiesce.c) */
	uint8_t port_paused[ROCE_DP_MAX_PORTS]; /* workers leave the port alone */
	uint8_t reconnect[ROCE_DP_MAX_PORTS];   /* restart after its link stays down */
	uint64_t down_since[ROCE_DP_MAX_PORTS];
	uint64_t restarts[ROCE_DP_MAX_PORTS];
	uint64_t quiesces;                  /* roce_dp_quiesce() grace periods */
	struct roce_dp_cc_conf cc;          /* congestion control settings (cc.c) */
	/* counters.c: the values at the last roce_dp_counters_clear() */
	struct rte_eth_stats port_base[ROCE_DP_MAX_PORTS];
	struct rte_eth_xstat *xstat_base[ROCE_DP_MAX_PORTS];
	unsigned int nb_xstat_base[ROCE_DP_MAX_PORTS];
	uint64_t impair_base[ROCE_IMPAIR_NB_DIRS][ROCE_IMPAIR_CNT_NUM];
	uint64_t pfc_base[ROCE_DP_PFC_CNT_NUM];      /* summed over the ports */
	struct roce_dp_pfc pfc[ROCE_DP_MAX_PORTS]; /* pauses received, per port (pfc_port.c) */
	uint64_t capture_base[ROCE_CAPTURE_CNT_NUM];
	struct dp_capture_state *capture;   /* packet capture (capture.c) */
	struct dp_gsi *gsi;                 /* QP1s and the GSI agent (gsi.c, gsi_agent.c) */
	uint64_t gsi_base[ROCE_DP_GSI_C_NUM];
};

/* The verbs façade's tables (verbs.c). */
struct dp_mr;
int dp_verbs_init(struct roce_dp *dp);
void dp_verbs_fini(struct roce_dp *dp);
/* Free the deregistered MRs no frame refers to any more; @return how many are left. */
unsigned int dp_mr_reap(struct roce_dp *dp);

/* Quiescent points and port pausing (quiesce.c). */
int dp_quiesce_init(struct roce_dp *dp);
void dp_quiesce_fini(struct roce_dp *dp);
void dp_port_watch_init(struct roce_dp *dp);

/* The baselines of roce_dp_counters_clear() (counters.c). */
void dp_counters_fini(struct roce_dp *dp);

/* A port's PFC: its state, honoured by the port's transmit objects; the link speeds their
 * pauses run at, from the control thread (pfc_port.c). */
int dp_pfc_port_init(struct roce_dp *dp, unsigned int p);
void dp_pfc_watch(struct roce_dp *dp);

/* Packet capture (capture.c): its state, released with the dataplane (after the workers). */
struct dp_capture_state;
int dp_capture_init(struct roce_dp *dp);
void dp_capture_fini(struct roce_dp *dp);

/*
 * QP1 of every port (gsi.c): on worker ROCE_DP_GSI_WORKER, a service of its loop, which
 * copies each datagram received into the agent's ring as one of these.
 */
struct dp_gsi_rx {
	uint16_t port;                     /* dataplane port it came in on */
	uint16_t len;                      /* bytes after the GRH area (at most a MAD) */
	uint8_t ipv6;                      /* the GRH area holds an IPv6 header */
	uint8_t pad[3];
	uint32_t src_qp;                   /* DETH source QP */
	uint8_t grh[ROCE_GRH_LEN];
	uint8_t mad[ROCE_MAD_SIZE];
};

/* One port's QP1, the GSI worker's. */
struct dp_gsi_qp {
	struct roce_qp *qp;
	struct roce_cq *cq;                /* its send and receive completions */
	struct roce_mr *mr;                /* its receive buffers */
	uint8_t *buf;                      /* ROCE_DP_GSI_RECV_WQES of ROCE_DP_GSI_BUF bytes */
	uint32_t posted;                   /* receives posted, not completed */
};

/* A MAD waiting for its destination's MAC (gsi_agent.c). */
struct dp_gsi_pending {
	uint64_t deadline_ns;
	uint64_t next_ns;                  /* its MAC is looked up again then */
	struct roce_dp_gsi_addr dst;
	uint8_t mad[ROCE_MAD_SIZE];
};

struct dp_gsi {
	struct rte_ring *rx;               /* worker -> agent, of struct dp_gsi_rx */
	struct roce_pd *pd;                /* the QP1s', their MRs' and AHs' */
	struct dp_gsi_qp qp[ROCE_DP_MAX_PORTS];   /* the GSI worker's */
	/* One writer each (the GSI worker or the control thread): relaxed atomics. */
	uint64_t cnt[ROCE_DP_GSI_C_NUM];
	/* The agent's, on the control thread. */
	struct roce_dp_gsi_hook hook;
	struct dp_gsi_pending pending[ROCE_DP_GSI_PENDING];
	unsigned int nb_pending;
	int wake_fd;                       /* eventfd: a MAD for the sleeping agent */
	uint8_t agent_sleeps;              /* roce_dp_gsi_idle() to roce_dp_gsi_poll() */
	uint32_t sidr_next_id;             /* request IDs of our SIDR_REQs */
	uint8_t sidr_active;               /* one SIDR_REQ waits for its SIDR_REP */
	uint8_t sidr_done;
	uint32_t sidr_id;
	uint64_t sidr_sent_ns;
	struct roce_dp_gsi_sidr_result sidr_res;
};

int dp_gsi_init(struct roce_dp *dp);
void dp_gsi_fini(struct roce_dp *dp);
extern const struct dp_service dp_gsi_service;
/* The agent's side: datagrams the worker received, and a MAD posted on port @port's QP1. */
unsigned int dp_gsi_rx_take(struct roce_dp *dp, struct dp_gsi_rx *rx, unsigned int max);
int dp_gsi_post(struct roce_dp *dp, unsigned int port, const struct roce_path *path,
		uint32_t qpn, const uint8_t *mad);

/* Telemetry reads the started dataplane (counters.c). */
void dp_telemetry_attach(struct roce_dp *dp);
void dp_telemetry_detach(struct roce_dp *dp);

/* Worker loop (worker.c). */
int dp_worker_main(void *arg);

/*
 * A service that runs inside every worker loop, as the traffic generator does (the connection
 * manager next): the loop polls it, and it lets go of what it holds in an MR being
 * deregistered or of a QP being destroyed. All on the worker's lcore.
 */
struct dp_service {
	const char *name;
	int (*init)(struct roce_worker *w);
	void (*fini)(struct roce_worker *w);
	/* @return work done: non-zero keeps the worker from sleeping. NULL: nothing to poll. */
	unsigned int (*poll)(struct roce_worker *w, uint64_t now);
	void (*mr_revoke)(struct roce_worker *w, uint32_t lkey);
	void (*qp_gone)(struct roce_worker *w, uint32_t qpn);
	/* An AH is about to be freed: nothing may use it after this returns. */
	void (*ah_revoke)(struct roce_worker *w, const struct roce_ah *ah);
};

/* Every service, in the order the worker polls them (service.c). */
extern const struct dp_service *const dp_services[];
extern const unsigned int dp_nb_services;
int dp_services_init(struct roce_worker *w);
void dp_services_fini(struct roce_worker *w);
unsigned int dp_services_poll(struct roce_worker *w, uint64_t now);
void dp_services_mr_revoke(struct roce_worker *w, uint32_t lkey);
void dp_services_qp_gone(struct roce_worker *w, uint32_t qpn);
void dp_services_ah_revoke(struct roce_worker *w, const struct roce_ah *ah);

/*
 * Congestion control (cc.c): a service (it frees the instance, forgets destroyed QPs), the QP
 * modify that tracks QPs going to RTR, and the counters of a worker's instance.
 */
extern const struct dp_service dp_cc_service;
int dp_cc_qp_modify(struct roce_worker *w, struct roce_qp *qp, const struct roce_qp_attr *attr,
		int mask);
void dp_cc_counters(const struct roce_worker *w, uint64_t *out);
/* The daemon-wide settings' defaults, on the control side before a worker may need them. */
void dp_cc_conf_init(struct roce_dp *dp);
/*
 * Pace @qp to @bps on the wire (a job's rate): the worker's instance is created if need be,
 * a QP it does not track is tracked with its reaction and notification points off. On the
 * worker. @return 0 or -errno.
 */
int dp_cc_pace(struct roce_worker *w, struct roce_qp *qp, uint64_t bps);
/* The job is done: no cap, and a QP tracked only to be paced is no longer tracked. */
void dp_cc_unpace(struct roce_worker *w, struct roce_qp *qp);

/* Traffic jobs (gen.c): one per QP at most, a service of the worker loop. */
extern const struct dp_service dp_gen_service;

/*
 * A traffic generator engine: what a job of one mode does, as testpmd's struct fwd_engine
 * (gen.c has the table, by enum roce_gen_mode).
 */
struct dp_gen_engine {
	const char *name;
	/* Checks beyond the common ones; NULL: none. @return 0 or -EINVAL. */
	int (*check)(const struct roce_gen_conf *c);
	/* Once started, before the first step (receives posted first); NULL: none. */
	int (*begin)(struct dp_job *job);
	/* Post, consume completions, decide when it is done. */
	void (*step)(struct dp_job *job, uint64_t now);
	/* A latency ping-pong: one message in flight, a histogram, never parked or put to
	 * sleep (it watches memory for the peer's write). */
	uint8_t latency;
	/* Parked while all it may post is in flight (its CQ armed instead of polled). */
	uint8_t parks;
};

/* Fill @len bytes with xorshift64's low bytes, one step per byte, from state @x (not 0). */
void dp_pattern_xorshift(uint8_t *p, uint64_t len, uint64_t x);

/* Count a failed completion. */
void dp_job_error(struct dp_job *job, enum roce_wc_status status);
/* Whether the job may post more. */
int dp_job_posting(const struct dp_job *job, uint64_t now);

/* Mixed verified traffic (mixed.c): the two engines. */
extern const struct dp_gen_engine dp_gen_mixed;
extern const struct dp_gen_engine dp_gen_mixed_recv;

/* rdma-core's pingpong examples (pingpong.c). */
extern const struct dp_gen_engine dp_gen_pingpong;

#endif /* ROCE_DP_PRIVATE_H */
