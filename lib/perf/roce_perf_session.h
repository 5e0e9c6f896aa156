/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_PERF_SESSION_H
#define ROCE_PERF_SESSION_H

/**
 * @file
 * The perftest session driver: one run of a perftest-style test (ib_<verb>_<bw|lat>), either
 * side, over a backend that owns the RDMA objects.
 *
 * A session sets up one MR and its QPs through the backend (struct roce_perf_backend_ops: the
 * control-socket client of rocectl, or a test's fake), plays perftest's out-of-band exchange
 * with the peer over TCP (roce_perf_oob_run()), or with -R (perftest's --rdma_cm) over SENDs
 * on a QP the daemon's connection manager connected, whose CM also connects the test's QPs
 * (roce_perf_oob_run_chan()), connects the QPs when the peer's keys arrive,
 * runs the traffic as backend jobs, polls them, reports, verifies the data when asked and tears
 * down what it created. What a front end shows comes out through struct roce_perf_events; the
 * session prints nothing itself.
 *
 * Plain C, no DPDK: a session and its backend are used by one thread at a time, except
 * roce_perf_session_interrupt(), which may be called from a signal handler.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "roce_perf_oob.h"

/** Default TCP port of the side channel, as perftest's. */
#define ROCE_PERF_TCP_PORT 18515
/** Largest message size of a -a sweep (2 B .. 8 MiB, as perftest). */
#define ROCE_PERF_MAX_SIZE (UINT64_C(8) << 20)
/** Number of sizes of a -a sweep. */
#define ROCE_PERF_NB_SIZES ROCE_PERF_OOB_NB_SIZES
/** --run_infinitely: seconds between two result lines without -D, as perftest. */
#define ROCE_PERF_INFINITE_INTERVAL 5
/** READ/atomics we accept and issue at once, at most (the daemon's limit may lower it). */
#define ROCE_PERF_OUT_READS 16
/** Default deadline of each side-channel message. */
#define ROCE_PERF_OOB_MS 60000
/** Default packets in flight per QP. */
#define ROCE_PERF_INFLIGHT 512
/** -c UD: the Q_Key of perftest's UD QPs and of its SENDs (DEF_QKEY). */
#define ROCE_PERF_UD_QKEY UINT32_C(0x11111111)
/** -c UD: most receives a UD QP keeps posted (perftest's UC_MAX_RX). */
#define ROCE_PERF_UD_MAX_RX 16000
/** -c UD: the GRH area at the start of each receive buffer (perftest's UD_ADDITION). */
#define ROCE_PERF_UD_GRH 40

/** The verb under test. */
enum roce_perf_verb {
	ROCE_PERF_VERB_WRITE,
	ROCE_PERF_VERB_READ,
	ROCE_PERF_VERB_SEND,
	ROCE_PERF_VERB_ATOMIC,
	ROCE_PERF_VERB_MAX,
};

/** What perftest's options mean, after their defaults are applied. */
struct roce_perf_opts {
	enum roce_perf_verb verb;
	unsigned int conn;		/**< ROCE_PERF_CONN_RC, or ROCE_PERF_CONN_UD (-c UD:
					     SEND only, messages up to the MTU) */
	bool lat;			/**< latency test; else bandwidth */
	uint64_t size;			/**< message size (ignored with @all) */
	bool all;			/**< -a: every size from 2 B to ROCE_PERF_MAX_SIZE */
	uint64_t iters;			/**< iterations per QP and size (ignored with @duration) */
	double duration;		/**< seconds of traffic; 0: @iters */
	unsigned int qps;		/**< 1 .. ROCE_PERF_OOB_MAX_QPS */
	unsigned int tx_depth;
	unsigned int mtu;		/**< bytes; 0: the largest the port's IP MTU takes */
	double rate_gbps;		/**< bandwidth tests: pace to this, 0: no pacing */
	bool verify;			/**< check the data (between two rocedp) */
	bool gbits;			/**< report bandwidth in Gb/s (else MB/s), on the wire too */
	bool server;			/**< else the client of @peer */
	bool no_sr;			/**< do not offer selective repeat */
	unsigned int inflight;		/**< packets in flight per QP at most */
	int oob_ms;			/**< deadline of each side-channel message */
	bool allow_gid_peer;		/**< RoCE traffic may go wherever the peer's GID says */
	const char *peer;		/**< client: the server's host name or address */
	unsigned int tcp_port;		/**< side channel */
	unsigned int port;		/**< the backend's port index */
	unsigned int poll_ms;		/**< between two polls of the jobs; 0: 100 ms */
	bool duplex;			/**< -b: both sides send (bandwidth tests) */
	bool infinite;			/**< --run_infinitely: until interrupted, a result line
					     every @duration seconds (5 when 0) */
	bool cas;			/**< atomics: compare-and-swap (else fetch-and-add) */
	unsigned int post_list;		/**< bandwidth: post this many WRs at once; 0: 1 */
	unsigned int cq_mod;		/**< bandwidth: a completion every this many sends
					     (perftest's -Q); 0: 1 */
	double rate_pps;		/**< bandwidth: pace to this many messages/s (all QPs);
					     0: @rate_gbps */
	unsigned int stall_ms;		/**< end a run whose jobs complete nothing for this
					     long; 0: never */
	bool rdma_cm;			/**< -R: perftest's rdma_cm mode; @tcp_port is the CM
					     service's port (RDMA_PS_TCP) */
	/** What the command line gave (ROCE_PERF_PAR_SET_*): another rocectl perf adopts it
	 * when it was not given there, and refuses a different value that was. */
	unsigned int given;
};

/** @name Access rights of an MR or a QP (struct roce_perf_backend_ops) @{ */
#define ROCE_PERF_ACC_LOCAL_WRITE (1u << 0)
#define ROCE_PERF_ACC_REMOTE_WRITE (1u << 1)
#define ROCE_PERF_ACC_REMOTE_READ (1u << 2)
#define ROCE_PERF_ACC_REMOTE_ATOMIC (1u << 3)
/** @} */

/** What the daemon says about itself; pre-filled with the defaults, which a backend keeps
 * for what its daemon does not report. */
struct roce_perf_daemon {
	uint64_t heap_bytes;		/**< memory the daemon allocated; 0: unknown */
	unsigned int ports;		/**< number of ports; 0: unknown */
	unsigned int max_qps;		/**< QPs the daemon can hold */
	unsigned int max_qp_depth;	/**< send or receive queue depth */
	uint64_t max_mr_size;		/**< bytes of one MR */
	unsigned int max_rd_atomic;	/**< READ/atomics outstanding per QP */
	unsigned int max_inflight;	/**< packets in flight per QP */
	unsigned int mr_read_max;	/**< bytes one mr_read() returns at most */
};

/** A port's addressing. */
struct roce_perf_port {
	char device[64];		/**< the port's device name; "" when unknown */
	char ip[46];			/**< IPv4 address as text; "" when it has none */
	unsigned int prefix;		/**< its prefix length */
	unsigned int ip_mtu;		/**< the IP MTU the port carries */
};

/** A registered MR. */
struct roce_perf_mr {
	uint64_t iova;			/**< address peers use */
	uint32_t key;			/**< lkey = rkey */
};

/** A QP to create. */
struct roce_perf_qp_conf {
	unsigned int port;
	unsigned int sq_depth;
	unsigned int rq_depth;
	unsigned int access;		/**< ROCE_PERF_ACC_* the peer gets (RC) */
	bool ud;			/**< a UD QP (in RTS at once, Q_Key @qkey) */
	uint32_t qkey;
	unsigned int mtu;		/**< UD: its path MTU in bytes; 0: the port's largest */
};

/** Connect a QP to its peer (INIT -> RTR -> RTS). */
struct roce_perf_qp_connect {
	uint32_t qpn;
	uint32_t remote_qpn;
	uint32_t remote_psn;
	uint8_t remote_gid[16];		/**< IPv4 as ::ffff:a.b.c.d */
	char remote_ip[46];		/**< the same, as text */
	unsigned int mtu;		/**< path MTU in bytes */
	unsigned int max_rd_atomic;
	unsigned int sr_rto_us;
	unsigned int max_inflight;
	bool sr;			/**< selective repeat */
};

/** Operation of a job. */
enum roce_perf_job_op {
	ROCE_PERF_JOB_WRITE,
	ROCE_PERF_JOB_READ,
	ROCE_PERF_JOB_SEND,
	ROCE_PERF_JOB_FAA,
	ROCE_PERF_JOB_RECV,		/**< keep receives posted for the peer's SENDs */
	ROCE_PERF_JOB_CAS,
};

/** One traffic job: a QP kept busy by the backend with one operation. */
struct roce_perf_job {
	uint32_t qpn;
	enum roce_perf_job_op op;
	uint32_t lkey;
	uint64_t offset;		/**< local buffer in the MR of @lkey */
	uint64_t length;
	uint64_t count;			/**< operations; 0 with @duration_ms */
	uint64_t duration_ms;		/**< 0: @count */
	bool remote;			/**< @remote_addr and @rkey are given */
	uint64_t remote_addr;
	uint32_t rkey;
	unsigned int depth;		/**< operations in flight; 0: the backend's default */
	uint64_t rate_mbps;		/**< 0: no pacing */
	unsigned int post_list;		/**< post this many at once; 0: one by one */
	unsigned int cq_mod;		/**< a completion every this many; 0: every one */
	bool lat;			/**< one side of the latency ping-pong */
	bool bidi;			/**< send -b: also receive the peer's SENDs (at
					     @recv_offset), done once as many are received */
	bool initiator;			/**< lat: this side sends first */
	uint64_t recv_offset;		/**< lat, bidi: where the peer's messages land */
	/** A UD QP's job that sends: the address handle (ah_create()), the peer's QPN and the
	 * Q_Key; 0 for RC and for a UD job that only receives. A UD receive takes
	 * ROCE_PERF_UD_GRH bytes more than @length (the GRH area). */
	uint32_t ah;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
};

/** A latency job's histogram of the times between consecutive posts, in ns. */
struct roce_perf_rtt {
	uint64_t samples;
	double min, max, median, avg, stdev, p99, p999;
};

/** State of one job (job_show()) or of all the session's (job_total()). */
struct roce_perf_job_stats {
	uint64_t running;		/**< jobs still running */
	uint64_t bytes;
	uint64_t completed;
	uint64_t errors;
	double peak_gbps;		/**< best 10 ms window (summed over the jobs) */
	double seconds;			/**< the (longest) job's time */
	char first_error[48];		/**< the first failed work request's status */
	struct roce_perf_rtt rtt;	/**< job_show() of a latency job */
};

/** -R: what the connection manager says (cm_events()), as rdma_cm names its events. */
enum roce_perf_cm_event_type {
	ROCE_PERF_CM_OTHER,
	ROCE_PERF_CM_CONNECT_REQUEST,	/**< a REQ for a port we listen on, waiting for us */
	ROCE_PERF_CM_ESTABLISHED,
	ROCE_PERF_CM_REJECTED,		/**< a REJ: @reason */
	ROCE_PERF_CM_UNREACHABLE,	/**< the REQ or REP went unanswered */
	ROCE_PERF_CM_CONNECT_ERROR,	/**< the daemon could not program the QP */
	ROCE_PERF_CM_DISCONNECTED,	/**< a DREQ came, or ours was answered (or timed out) */
	ROCE_PERF_CM_TIMEWAIT_EXIT,
};

/** -R: one connection manager event. */
struct roce_perf_cm_event {
	enum roce_perf_cm_event_type type;
	uint32_t conn;			/**< the daemon's handle of the connection */
	uint32_t qpn;			/**< its local QP; 0 before it has one */
	uint32_t remote_qpn;
	unsigned int service_port;	/**< the RDMA_PS_TCP port */
	unsigned int reason;		/**< ROCE_PERF_CM_REJECTED: the REJ's reason */
	char remote_ip[46];
};

/** -R: connect a QP in INIT through the connection manager (rdma_connect()). */
struct roce_perf_cm_connect {
	uint32_t qpn;
	const char *ip;			/**< the peer's IPv4 address, as text */
	unsigned int tcp_port;		/**< the service's port */
	unsigned int mtu;		/**< path MTU in bytes; 0: the most the port carries */
	unsigned int rd_atomic;		/**< responder resources and initiator depth */
	unsigned int retry_count;	/**< 0-7 */
	unsigned int rnr_retry_count;	/**< 0-7 (7: infinite) */
};

/** -R: a work completion of the side channel's QP (cq_poll()). */
struct roce_perf_wc {
	uint64_t wr_id;
	int status;			/**< 0: success, else enum ibv_wc_status */
	bool recv;			/**< a receive (else a send) */
	uint32_t byte_len;		/**< receives: bytes that arrived */
};

/**
 * The daemon side of a session. Every function returns 0 or -errno and says why it failed
 * (the backend knows how: the session adds no line of its own); @p ctx is the backend's.
 */
struct roce_perf_backend_ops {
	/** What the daemon reports of itself and its limits; leave what it does not say. */
	int (*status)(void *ctx, struct roce_perf_daemon *d);
	/** Port @p port's addressing. */
	int (*port_info)(void *ctx, unsigned int port, struct roce_perf_port *info);
	/** Register @p size zeroed bytes with @p access (ROCE_PERF_ACC_*). */
	int (*mr_create)(void *ctx, uint64_t size, unsigned int access, struct roce_perf_mr *mr);
	/** Deregister. */
	int (*mr_destroy)(void *ctx, uint32_t key);
	/** Fill a range with the pattern "random:@p seed" (the same bytes for the same seed). */
	int (*mr_fill)(void *ctx, uint32_t key, uint64_t off, uint64_t len, uint32_t seed);
	/** CRC-32 (IEEE 802.3, as zlib's crc32()) of a range. */
	int (*mr_digest)(void *ctx, uint32_t key, uint64_t off, uint64_t len, uint32_t *crc);
	/** Copy up to struct roce_perf_daemon::mr_read_max bytes out; *@p got: how many. */
	int (*mr_read)(void *ctx, uint32_t key, uint64_t off, uint64_t len, uint8_t *buf,
			uint64_t *got);
	/** Create a QP (RC, or UD in RTS); its number and initial PSN. */
	int (*qp_create)(void *ctx, const struct roce_perf_qp_conf *conf, uint32_t *qpn,
			uint32_t *psn);
	/** Connect a QP to its peer. */
	int (*qp_connect)(void *ctx, const struct roce_perf_qp_connect *conn);
	/** Destroy a QP (and its job). */
	int (*qp_destroy)(void *ctx, uint32_t qpn);
	/** Start a job. */
	int (*job_start)(void *ctx, const struct roce_perf_job *job);
	/** Stop a QP's job. */
	int (*job_stop)(void *ctx, uint32_t qpn);
	/** One QP's job. */
	int (*job_show)(void *ctx, uint32_t qpn, struct roce_perf_job_stats *st);
	/** Every job of the session's QPs, added up. */
	int (*job_total)(void *ctx, struct roce_perf_job_stats *st);
	/** -c UD: an address handle on port @p port to @p ip (IPv4 text), hop limit 255 as
	 * perftest's, for the jobs that send; its number (from 1). May be NULL without UD. */
	int (*ah_create)(void *ctx, unsigned int port, const char *ip, uint32_t *ah);
	/** -c UD: destroy an address handle. May be NULL without UD. */
	int (*ah_destroy)(void *ctx, uint32_t ah);
	/** @name -R: the connection manager and the side channel's verbs; may be NULL without
	 * -R. @{ */
	/** Listen on RDMA_PS_TCP port @p tcp_port, each REQ waiting for cm_accept(). */
	int (*cm_listen)(void *ctx, unsigned int tcp_port, unsigned int backlog);
	int (*cm_unlisten)(void *ctx, unsigned int tcp_port);
	/** Send the REQ; *@p conn: the connection's handle. */
	int (*cm_connect)(void *ctx, const struct roce_perf_cm_connect *c, uint32_t *conn);
	/** Answer a connect_request with QP @p qpn (in INIT): it goes to RTS, the REP goes. */
	int (*cm_accept)(void *ctx, uint32_t conn, uint32_t qpn, unsigned int rd_atomic);
	int (*cm_reject)(void *ctx, uint32_t conn);
	/** Established: a DREQ (the QP goes to ERR); before that the connection is dropped. */
	int (*cm_disconnect)(void *ctx, uint32_t conn);
	/** Up to @p max events after *@p since, which is moved past them; *@p n: how many. */
	int (*cm_events)(void *ctx, uint64_t *since, struct roce_perf_cm_event *ev,
			unsigned int max, unsigned int *n);
	/** Post one signaled SEND, or one receive, of @p len bytes at @p off in MR @p lkey. */
	int (*post_send)(void *ctx, uint32_t qpn, uint32_t lkey, uint64_t off, uint32_t len,
			uint64_t wr_id);
	int (*post_recv)(void *ctx, uint32_t qpn, uint32_t lkey, uint64_t off, uint32_t len,
			uint64_t wr_id);
	/** Up to @p max completions of QP @p qpn; *@p n: how many (0: none yet). */
	int (*cq_poll)(void *ctx, uint32_t qpn, struct roce_perf_wc *wc, unsigned int max,
			unsigned int *n);
	/** Copy @p len bytes (at most struct roce_perf_daemon::mr_read_max) into an MR. */
	int (*mr_write)(void *ctx, uint32_t key, uint64_t off, const uint8_t *buf, uint64_t len);
	/** @} */
};

/** A live line: the last second of a running test. */
struct roce_perf_progress {
	double secs;			/**< since the jobs started */
	double bw;			/**< bandwidth of the last second, in the report unit */
	double mpps;			/**< messages per second of the last second, in millions */
	uint64_t msgs;			/**< since the start */
	uint64_t errors;
	bool lat;			/**< a latency test: the times below, not bw and mpps */
	double t_typical, t_avg;	/**< µs, so far (perftest's one-way for write/send) */
};

/** One result line. */
struct roce_perf_result {
	uint64_t size;
	uint64_t iters;
	/** Bandwidth tests, in the report unit (roce_perf_unit_name()), and Mpps. */
	double bw_peak, bw_avg, msg_rate;
	/** Latency tests: perftest's times in µs (a round trip halved for write and send). */
	double min, max, median, avg, stdev, p99, p999;
	uint64_t samples;
	double seconds;			/**< of traffic the line covers */
	bool interrupted;		/**< a partial result: the run was interrupted */
	bool interval;			/**< --run_infinitely: one interval's line */
	bool duplex;			/**< -b: both sides' traffic added up */
};

struct roce_perf_session;

/** What the session tells its front end; any member may be NULL. */
struct roce_perf_events {
	/** A server listens on @p tcp_port for its client. */
	void (*waiting)(void *arg, unsigned int tcp_port);
	/** The QPs are connected: the test's parameters and both sides' keys are known. */
	void (*header)(void *arg, const struct roce_perf_session *s);
	/** About once a second while jobs run. */
	void (*progress)(void *arg, const struct roce_perf_progress *p);
	/** A bandwidth result (a size of the run, or the client's report) or a latency one. */
	void (*result)(void *arg, const struct roce_perf_result *r);
	/** Why the session fails, one line without a prefix or newline. */
	void (*error)(void *arg, const char *msg);
	void *arg;
	/** Something the user should know that does not fail the run (a parameter taken from
	 * the peer), one line without a prefix or newline. */
	void (*note)(void *arg, const char *msg);
};

/** One local QP and its peer. */
struct roce_perf_qp {
	uint32_t qpn;
	uint32_t ah;			/**< -c UD: the AH to the peer when we send; 0: none */
	struct roce_perf_key local;
	struct roce_perf_key peer;
};

/**
 * A session. The front end reads its members (after roce_perf_session_run(), or in the
 * header event); only the session writes them.
 */
struct roce_perf_session {
	struct roce_perf_opts o;
	const struct roce_perf_backend_ops *ops;
	void *ctx;
	struct roce_perf_events ev;
	struct roce_perf_daemon daemon;	/**< limits, from the backend's status() */
	struct roce_perf_mr mr;		/**< key 0: none */
	bool have_mr;
	uint64_t slot;			/**< bytes per QP: our half, then the peer's half */
	struct roce_perf_qp *qp;	/**< o.qps entries, nqp created */
	unsigned int nqp;
	uint8_t gid[16];		/**< our port's, IPv4-mapped */
	char device[64];		/**< our port's device */
	unsigned int rq_depth;		/**< receive queue depth of our QPs */
	char ip[46];
	unsigned int prefix;
	uint8_t mtu_enum;		/**< IB MTU we offer */
	unsigned int nb_sizes;		/**< sizes of a -a sweep (UD: up to the agreed MTU) */
	uint8_t tcp_gid[16];		/**< the side channel's peer, in GID form */
	char tcp_ip[46];
	bool traffic_done;		/**< the traffic hook has returned */
	bool hook_failed;		/**< a hook failed and said why */
	double qp_bytes;		/**< daemon memory per QP (with its CQ); 0: unknown */
	const char *verified;		/**< "ok", "sent", "failed", "skipped: ...", or NULL */
	struct roce_perf_oob_result oob;
	struct roce_perf_key *keys;	/**< our nqp keys, as the exchange sends them */
	uint64_t next_size;		/**< the size the traffic runs next */
	bool lat_started;		/**< the latency job of @next_size runs already */
	bool recv_started;		/**< the send_bw server's receive job runs */
	struct roce_perf_result last;	/**< our last result (-b: before the peer's is added) */
	unsigned int out_reads;		/**< READ/atomics agreed with the peer */
	bool peer_ended;		/**< --run_infinitely: the peer ended the test */
	volatile sig_atomic_t interrupted;	/**< counted by roce_perf_session_interrupt() */
	volatile sig_atomic_t soft_stop;	/**< an interrupt ends the traffic, not the run */
	volatile sig_atomic_t oob_fd;	/**< the side channel while it runs, else -1 */
	struct perf_rcm *rcm;		/**< -R: the CM connections and the side channel's QP */
};

/**
 * Create a session. Nothing is asked of the backend yet.
 * @param o Options; copied (o->peer must outlive the session).
 * @param ops The backend; every member must be set.
 * @param ctx The backend's context.
 * @param ev What the front end wants to hear; may be NULL.
 * @return The session, or NULL with errno EINVAL (bad options or ops) or ENOMEM.
 */
struct roce_perf_session *
roce_perf_session_create(const struct roce_perf_opts *o, const struct roce_perf_backend_ops *ops,
		void *ctx, const struct roce_perf_events *ev);

/**
 * Run the whole test: set up the MR and QPs, open the side channel (listen or connect), play
 * the exchange (parameters agreed with another rocectl perf, QPs connected and traffic run
 * from its hooks), report and verify. The objects stay until roce_perf_session_destroy(), so
 * the front end can still show them.
 * @return 0; -EINTR when interrupted; -EBADMSG when the data did not verify; -EIO when work
 *   requests failed; -ETIMEDOUT when the jobs made no progress for o.stall_ms; -ECANCELED
 *   when the peer's parameters differ from ours; -ECONNREFUSED (-R: the peer's CM rejected
 *   us), -EHOSTUNREACH (-R: it did not answer), -EPERM (a peer GID refused), -EPROTO,
 *   -ENOTSUP, -EADDRNOTAVAIL, -EINVAL, -E2BIG (a daemon limit); an error of the backend or of
 *   roce_perf_oob_run().
 */
int
roce_perf_session_run(struct roce_perf_session *s);

/**
 * Stop a running session as soon as it can: a wait for the peer ends at once, running jobs are
 * stopped (and their partial result reported). With --run_infinitely an interrupt during the
 * traffic is its normal end: the test finishes with the peer; a second one stops at once.
 * Async-signal-safe.
 */
void
roce_perf_session_interrupt(struct roce_perf_session *s);

/** Destroy the QPs and the MR the session created (reporting failures). Idempotent. */
void
roce_perf_session_teardown(struct roce_perf_session *s);

/** Tear down and free. NULL is allowed. */
void
roce_perf_session_destroy(struct roce_perf_session *s);

/** The perftest exchange's test of a session ("write_bw" ... via roce_perf_test_name()). */
enum roce_perf_test
roce_perf_session_test(const struct roce_perf_session *s);

/** "MB/sec" or "Gb/sec", as perftest names its bandwidth units. */
const char *
roce_perf_unit_name(bool gbits);

#endif /* ROCE_PERF_SESSION_H */
