/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replay against ground truth: every RC exchange captured between two Linux Soft-RoCE (rxe)
 * peers (../shared/captures/ *.pcap and errors/ *.pcap; errors/INDEX.md tells each scenario)
 * is replayed against our transport, one role at a time.
 *
 * Responder: a QP with the captured responder QPN, the first request PSN as RQ PSN, the path
 * MTU, the captured addresses and MRs at the captured VAs and rkeys gets every captured
 * request at its captured time. What it sends must equal what rxe sent, packet for packet and
 * in order: MACs, IPs, TOS, TTL, UDP ports, and every byte from the BTH to the end of the
 * payload (opcode, PSN, AckReq, AETH syndrome and MSN, original atomic value, READ data).
 * Its receive completions, final QP state and memory (WRITE and atomic results) are checked.
 * The MRs are pre-filled from the captured READ responses and atomic original values.
 *
 * Requester: a QP with the captured requester QPN and first PSN gets the work requests the
 * capture shows (opcode, length, remote VA, rkey, data), each posted when the capture first
 * shows it, and the captured responses at their times. What it sends must equal the captured
 * requests in order (re-issued READs with their moved VA and length, go-back-N from a NAKed
 * PSN as a WRITE/SEND Middle, ...) and its completions the client logs' statuses.
 *
 * Loss in the captures was made by a guest tc filter on one host's egress that drops every
 * Nth packet of one opcode (INDEX.md, "drop vmX OPC/N"); a dropped packet is not in the
 * capture. The replay puts the same filter on what our engine sends as that host, so both
 * lose the same packets.
 *
 * Time. The responder gets each request at its capture time. The requester runs on the
 * capture's clock shifted by how far ahead or behind rxe it is: each captured request it
 * sends resets the shift to (our send time - capture time), and the captured responses after
 * it arrive at capture time + shift. So a retransmission we send earlier than rxe (rxe waits
 * on 4 ms jiffies and TCG) does not make the responses that follow it come "too late". A
 * request we send more than 10 ms away from the capture's time, shift taken into account,
 * fails unless the table lists it as early by an intentional difference.
 *
 * Intentional differences from rxe (each one checked as our documented behaviour):
 *  (a) A second NAK PSN-sequence-error for the PSN a go-back-N already went back to is
 *      ignored only while that rewind is in effect (no progress since); a NAK for another PSN
 *      is acted on at once. rxe ignored one (send_loss_gobackn frame 130) and recovered at its
 *      ACK timeout, 82 ms later; we resend frames 131-133 at once.
 *  (b) After a local ACK timeout we go back to the first unacknowledged PSN. So does rxe
 *      (comp.psn): read_resploss_timeout frame 9 re-issues READ #3 from its lost Last.
 *      INDEX.md's "start of the oldest unacknowledged WQE" is the same PSN whenever ACKs
 *      come per message (write_loss_nak_lost_timeout 26, write_ackloss 9). No difference.
 *  (c) An out-of-sequence READ response (a gap inside a READ or past it) re-issues the READ
 *      from the first missing PSN once the gap has outlived the reordering window (20 us to
 *      start with; responses past the gap are kept meanwhile); rxe ignores gaps inside the
 *      READ in progress and waits for its ACK timeout (read_single_gap_reissue 18,
 *      read_loss_reissue 136: ~66 ms later). Same packets, earlier.
 *  (d) retry_cnt 7 means 7 retries, as IBA says (rxe: infinite, `if (retry_cnt != 7)
 *      retry_cnt--`); conf.retry7_infinite gives rxe's behaviour. test_retry7 checks both on
 *      the retry_exceeded_peer_qp_error request. rnr_retry 7 is infinite in both (IBA).
 *  (e) After an RNR NAK we send nothing until the RNR timer expires: the responder would
 *      drop what follows as out of sequence. rxe keeps sending new requests meanwhile
 *      (rnr_perftest_send_rx_depth1 frames 11-24); the replay skips those captured first
 *      transmissions, which come again in the go-back-N after the timer.
 *  (f) A duplicate READ is re-served as its original response, MSN included, as a duplicate
 *      atomic replays its saved result (IBA 1.4 p. 282 wants the responses to a retried
 *      READ identical to the first ones in PSN and data); rxe puts its current MSN
 *      (read_loss_reissue 96-139: MSN 10). Completers go by PSN.
 *  (h) READ responses past a gap are kept, in the READs behind it too (c), so a re-issue
 *      starts at the first PSN still missing, which can be later than rxe's: the same READ
 *      asked for from k packets on, VA + k MTU, length - k MTU (read_loss_reissue 136:
 *      from 382519 for 2048 bytes, where rxe asks again from 382518 for 3072). It may then
 *      also go before rxe's trigger response came.
 *  (g) A SEND longer than its receive completes the receive with LOC_LEN_ERR, the verbs
 *      status for "receive buffer too small"; rxe reports LOC_QP_OP_ERR. Both NAK with
 *      remote operational error (0x63).
 *
 * Each capture's own settings (MTU, tool defaults, the loss filters, the MR each error
 * scenario needs, receive posting, client log statuses) are in the table `cases` below.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>

#include "roce_pcapfile.h"
#include "roce_test.h"
#include "roce_timer.h"
#include "roce_transport.h"
#include "roce_transport_counters.h"
#include "roce_wire.h"

#define US 1000ull
#define MS 1000000ull
#define SEC 1000000000ull
/* rxe timers run on 4 ms jiffies and TCG adds delay: how far our timing may stray. */
#define TOL_NS (10 * MS)

#define MAX_STREAMS 8
#define MAX_MSGS 64
#define MAX_OUT 4096
#define MAX_WC 512
#define MAX_MR 8
#define NB_EARLY 4

/* ---- the captures and what each needs ---- */

enum tool {
	TOOL_PERFTEST,  /* perftest 4.5: rd_atomic 16 here, a receive per SEND */
	TOOL_RXE_ERR,   /* rxe-vm/tools/rxe-err.c: rd_atomic 4, -n receives of 2*max(size,4K) */
	TOOL_OTHER,     /* ibv_rc_pingpong, rping: a receive per SEND */
};

/* Which MR the responder gets. */
enum mr_mode {
	MR_COVER,       /* per rkey: the 4 KiB pages the requests touch, all access */
	MR_BAD_RKEY,    /* the same range under rkey ^ 0x00ffff00: rxe-err's *-badrkey flips
			 * those bits of the real key, so the captured one misses */
	MR_OOB,         /* rxe-err *-oob: VA = MR end - size/2, MR = 2 * max(size, 4K) */
	MR_NO_WRITE,    /* rxe-err write-noperm: the MR lacks REMOTE_WRITE */
};

/* When the responder's receives are posted. */
enum recv_mode {
	RECV_PER_SEND,  /* one per captured SEND, before the traffic */
	RECV_N,         /* recv_n of recv_len bytes before the traffic (rxe-err -n, bufsz / -l) */
	RECV_NONE,      /* rxe-err rnr-exceed, retry-exceed */
	RECV_AT,        /* recv_n at recv_at_ms of capture time (rxe-err rnr -D) */
	RECV_ON_ACCEPT, /* one just before each SEND the capture shows accepted (ib_send_bw -r 1:
			 * the server re-posts its single receive when it polls one) */
};

enum side { SIDE_REQ, SIDE_RESP };

/* A guest tc gact filter: on @side's egress, drop every @every-th packet of @opcode. */
struct drop_rule {
	uint8_t on;
	uint8_t side;
	uint8_t opcode;
	uint8_t naks;   /* only NAKs (AETH syndrome 0x60-0x7f): "match u8 0x60 0xe0 at 40" */
	uint16_t every;
};

struct replay_case {
	const char *file;            /* under rt_captures_dir() */
	enum roce_mtu mtu;           /* INDEX: [E1500] 1024, [E9000] 4096, -M 3 1024 */
	uint8_t tool;                /* enum tool */
	uint8_t retry_cnt;           /* requester; 0: 7 */
	uint8_t rnr_retry;           /* requester; 0: 7 */
	struct drop_rule drop[2];
	uint8_t mr;                  /* enum mr_mode */
	uint8_t qp_read_only;        /* responder QP access REMOTE_READ only (write-qpnoacc) */
	uint8_t recv;                /* enum recv_mode */
	uint16_t recv_n;
	uint32_t recv_len;
	uint32_t recv_at_ms;
	uint8_t resp_qp_err;         /* responder QP moved to ERR before the traffic */
	uint8_t no_rc;               /* UD only: no RC packet at all */
	uint8_t nb_wc;               /* client log statuses; 0: every WR succeeds */
	uint8_t wc[4];               /* enum roce_wc_status */
	uint32_t err_at_us;          /* client log time of the failing completion */
	/* Requester frames we send long before rxe on purpose: {frame, the captured response
	 * we send it at once after}. */
	uint16_t early[NB_EARLY][2];
	const char *why;             /* what the entry reproduces */
};

#define E1500 ROCE_MTU_1024
#define E9000 ROCE_MTU_4096
#define M3 ROCE_MTU_1024
#define DROP(s, op, n) { 1, SIDE_##s, op, 0, n }
/* rxe-err's server posts -n receives of its whole buffer, 2 * max(-s, 4096) bytes, before
 * RTR; both sides get the same -n and -s. */
#define RXE_ERR_RECV(n, size) .recv = RECV_N, .recv_n = (n), \
	.recv_len = 2 * ((size) < 4096 ? 4096 : (size))

static const struct replay_case cases[] = {
	/* Plain traffic (made on [E1500]; the MTU is confirmed from First/Middle sizes). */
	{ "roce_rc_atomic_cmp_swap.pcap", E1500, TOOL_PERFTEST,
		.why = "ib_atomic_bw CMP_SWAP x5: MR pre-filled with the 5 original values" },
	{ "roce_rc_atomic_fetch_add.pcap", E1500, TOOL_PERFTEST,
		.why = "ib_atomic_bw FETCH_ADD x5" },
	{ "roce_rc_rdma_read_64B_8KiB.pcap", E1500, TOOL_PERFTEST,
		.why = "two ib_read_bw runs (QPs 0x42, 0x43): MR pre-filled from the responses" },
	{ "roce_rc_rdma_write_64B_8KiB.pcap", E1500, TOOL_PERFTEST,
		.why = "two ib_write_bw runs" },
	{ "roce_rc_send_64B_8KiB.pcap", E1500, TOOL_PERFTEST, .why = "two ib_send_bw runs" },
	{ "roce_rc_send_ibv_rc_pingpong.pcap", E1500, TOOL_OTHER,
		.why = "SENDs both ways on one QP pair: two streams, each replayed in both roles" },
	{ "roce_rdma_cm_ib_write_bw_R.pcap", E1500, TOOL_PERFTEST,
		.why = "CM packets (UD, QP1) skipped; the SEND side channel both ways, WRITEs" },
	{ "roce_rdma_cm_rping.pcap", E1500, TOOL_OTHER,
		.why = "CM skipped; client SENDs, server READ/WRITE/SEND: two MRs by rkey" },
	{ "roce_ud_send_64B.pcap", E1500, TOOL_OTHER, .no_rc = 1,
		.why = "UD only: nothing to replay" },

	/* errors/: INDEX.md, in its order of sections. */
	{ "errors/roce_err_write_single_loss_nak.pcap", M3, TOOL_RXE_ERR,
		.drop = { DROP(REQ, 0x07, 15) }, RXE_ERR_RECV(3, 8192),
		.why = "one WRITE Middle lost: one NAK, go-back-N from it as a Middle" },
	{ "errors/roce_err_send_single_loss_nak.pcap", M3, TOOL_RXE_ERR,
		.drop = { DROP(REQ, 0x01, 15) }, RXE_ERR_RECV(3, 8192),
		.why = "one SEND Middle lost; exactly 3 receives of 8192 B" },
	{ "errors/roce_mtu4096_write_loss_gobackn.pcap", E9000, TOOL_PERFTEST,
		.drop = { DROP(REQ, 0x07, 7) },
		.why = "MTU 4096, two losses, the second inside the go-back-N" },
	{ "errors/roce_err_write_loss_gobackn.pcap", E1500, TOOL_PERFTEST,
		.drop = { DROP(REQ, 0x07, 30) },
		.why = "three losses; the second gap gets no NAK of its own" },
	{ "errors/roce_err_send_loss_gobackn.pcap", E1500, TOOL_PERFTEST,
		.drop = { DROP(REQ, 0x01, 30) }, .early = { { 131, 130 } },
		.why = "(a): rxe ignored NAK 130 until its timeout; we resend 131-133 at once" },
	{ "errors/roce_err_read_request_loss_nak.pcap", M3, TOOL_RXE_ERR,
		.drop = { DROP(REQ, 0x0c, 4) }, RXE_ERR_RECV(5, 2048),
		.why = "READ request #4 lost: NAK for the gap in READ requests, #4 and #5 resent" },
	{ "errors/roce_err_read_single_gap_reissue.pcap", M3, TOOL_RXE_ERR,
		.drop = { DROP(RESP, 0x0e, 9) }, RXE_ERR_RECV(2, 8192), .early = { { 18, 14 } },
		.why = "(c): READ re-issued from the gap at once, not at the timeout" },
	{ "errors/roce_err_read_loss_reissue.pcap", E1500, TOOL_PERFTEST,
		.drop = { DROP(RESP, 0x0e, 30) }, .early = { { 89, 49 }, { 136, 134 } },
		.why = "(c): re-issued at the first gap, later READs whole; (f) MSN on re-serves" },
	{ "errors/roce_err_read_resploss_timeout.pcap", E1500, TOOL_RXE_ERR,
		.drop = { DROP(RESP, 0x0f, 3) }, RXE_ERR_RECV(3, 2048),
		.why = "READ Last lost: timeout, re-issued for the Last alone" },
	{ "errors/roce_err_read_only_resploss_timeout.pcap", E1500, TOOL_RXE_ERR,
		.drop = { DROP(RESP, 0x10, 2) }, RXE_ERR_RECV(2, 64),
		.why = "READ Only response lost: timeout, same READ again" },
	{ "errors/roce_err_write_ackloss_timeout.pcap", E1500, TOOL_RXE_ERR,
		.drop = { DROP(RESP, 0x11, 3) }, RXE_ERR_RECV(3, 2048),
		.why = "ACK lost: timeout, message resent, one re-ACK per duplicate" },
	{ "errors/roce_err_send_ackloss_timeout.pcap", E1500, TOOL_RXE_ERR,
		.drop = { DROP(RESP, 0x11, 3) }, RXE_ERR_RECV(3, 2048),
		.why = "as write_ackloss, and no duplicate receive completion" },
	{ "errors/roce_err_atomic_ackloss_replay.pcap", E9000, TOOL_RXE_ERR,
		.drop = { DROP(RESP, 0x12, 2) }, RXE_ERR_RECV(2, 64),
		.why = "atomic ACK lost: duplicate answered from the saved value, target ends +2" },
	{ "errors/roce_err_write_loss_nak_lost_timeout.pcap", M3, TOOL_RXE_ERR,
		.drop = { DROP(REQ, 0x07, 15), { 1, SIDE_RESP, 0x11, 1, 1 } },
		RXE_ERR_RECV(3, 8192),
		.why = "every NAK dropped at the responder: timeout restarts the message (b)" },
	{ "errors/roce_err_retry_exceeded_peer_qp_error.pcap", E1500, TOOL_RXE_ERR,
		.retry_cnt = 2, .recv = RECV_NONE, .resp_qp_err = 1,
		.nb_wc = 1, .wc = { ROCE_WC_RETRY_EXC_ERR }, .err_at_us = 207600,
		.why = "responder QP in ERR drops silently; retry_cnt 2: 3 sends, then RETRY_EXC" },
	{ "errors/roce_err_rnr_nak_then_success.pcap", E1500, TOOL_RXE_ERR,
		.recv = RECV_AT, .recv_n = 1, .recv_len = 8192, .recv_at_ms = 100,
		.why = "receive posted after 100 ms (between frames 7 and 9)" },
	{ "errors/roce_err_rnr_retry_exceeded.pcap", E1500, TOOL_RXE_ERR,
		.rnr_retry = 2, .recv = RECV_NONE,
		.nb_wc = 1, .wc = { ROCE_WC_RNR_RETRY_EXC_ERR }, .err_at_us = 58000,
		.why = "no receive; rnr_retry 2: 3 sends, 3 RNR NAKs, RNR_RETRY_EXC" },
	{ "errors/roce_err_rnr_perftest_send_rx_depth1.pcap", E9000, TOOL_PERFTEST,
		.recv = RECV_ON_ACCEPT,
		.why = "RNR NAK + NAK seq-err pairs; (e) nothing new is sent in the RNR wait" },
	{ "errors/roce_err_write_bad_rkey.pcap", E1500, TOOL_RXE_ERR,
		.mr = MR_BAD_RKEY, RXE_ERR_RECV(2, 64),
		.nb_wc = 2, .wc = { ROCE_WC_REM_ACCESS_ERR, ROCE_WC_WR_FLUSH_ERR },
		.why = "MR under rkey ^ 0xffff00: NAK 0x62; both QPs ERR, receives flushed" },
	{ "errors/roce_err_read_bad_rkey.pcap", E1500, TOOL_RXE_ERR,
		.mr = MR_BAD_RKEY, RXE_ERR_RECV(2, 64),
		.nb_wc = 2, .wc = { ROCE_WC_REM_ACCESS_ERR, ROCE_WC_WR_FLUSH_ERR },
		.why = "MR under rkey ^ 0xffff00: NAK 0x62 for the first READ" },
	{ "errors/roce_err_write_out_of_bounds.pcap", E1500, TOOL_RXE_ERR,
		.mr = MR_OOB, RXE_ERR_RECV(1, 4096),
		.nb_wc = 1, .wc = { ROCE_WC_REM_ACCESS_ERR },
		.why = "8 KiB MR ending 2 KiB into the 4 KiB WRITE: NAK 0x62 for First" },
	{ "errors/roce_err_read_out_of_bounds.pcap", E1500, TOOL_RXE_ERR,
		.mr = MR_OOB, RXE_ERR_RECV(1, 4096),
		.nb_wc = 1, .wc = { ROCE_WC_REM_ACCESS_ERR },
		.why = "8 KiB MR ending 2 KiB into the 4 KiB READ: NAK 0x62" },
	{ "errors/roce_err_write_no_remote_write_perm.pcap", E1500, TOOL_RXE_ERR,
		.mr = MR_NO_WRITE, RXE_ERR_RECV(1, 64),
		.nb_wc = 1, .wc = { ROCE_WC_REM_ACCESS_ERR },
		.why = "MR with LOCAL_WRITE | REMOTE_READ only: NAK 0x62" },
	{ "errors/roce_err_write_qp_no_remote_write_access.pcap", E1500, TOOL_RXE_ERR,
		.qp_read_only = 1, RXE_ERR_RECV(1, 64),
		.nb_wc = 1, .wc = { ROCE_WC_REM_INV_REQ_ERR },
		.why = "responder QP access REMOTE_READ only: NAK 0x61" },
	{ "errors/roce_err_send_too_long_for_recv.pcap", E1500, TOOL_RXE_ERR,
		.recv = RECV_N, .recv_n = 1, .recv_len = 512,
		.nb_wc = 1, .wc = { ROCE_WC_REM_OP_ERR },
		.why = "2048 B SEND into a 512 B receive: NAK 0x63; (g) receive LOC_LEN_ERR" },
	{ "errors/roce_mtu4096_write_16KiB.pcap", E9000, TOOL_PERFTEST, .why = "MTU 4096" },
	{ "errors/roce_mtu4096_read_16KiB.pcap", E9000, TOOL_PERFTEST, .why = "MTU 4096" },
	{ "errors/roce_ipv6_linklocal_write.pcap", E1500, TOOL_PERFTEST,
		.why = "IPv6 link-local addresses in the AV" },
	{ "errors/roce_ipv6_global_write.pcap", ROCE_MTU_1024, TOOL_PERFTEST,
		.why = "IPv6 global, ib_write_bw -m 1024" },
	{ "errors/roce_ecn_ce_marked_write.pcap", E1500, TOOL_RXE_ERR, RXE_ERR_RECV(3, 2048),
		.why = "requests CE-marked (TOS 3): plain Not-ECT ACKs, no CNP" },
	{ "errors/roce_psn_wrap_write_8KiB.pcap", M3, TOOL_RXE_ERR, RXE_ERR_RECV(1, 8192),
		.why = "PSN 0xfffffc..0x000003" },
};

/* ---- packets ---- */

/* What the test compares of a packet, decoded from its bytes. */
struct view {
	uint8_t src_mac[6], dst_mac[6];
	uint8_t src_ip[16], dst_ip[16];
	uint8_t ipv6, tos, ttl;
	uint32_t flow;
	uint16_t sport, dport;
	uint8_t opcode, ackreq, has_aeth, syndrome;
	uint32_t mask, psn, qpn, msn;
	uint64_t va;
	uint32_t rkey, dma_len;
	uint64_t swap_add, compare, orig;
	const uint8_t *tp;           /* BTH to the end of the pad */
	uint32_t tp_len;
	const uint8_t *payload;
	uint32_t plen;
};

struct cap_pkt {
	uint32_t frame;              /* record number in the file, from 1, as tshark counts */
	uint64_t t;                  /* ns since the file's first record */
	int stream;
	uint8_t *data;
	uint32_t len;
	struct view v;
};

struct capture {
	uint32_t nb_records;
	uint32_t n;                  /* RC packets */
	struct cap_pkt *pkt;
};

/* A message (one work request) as the capture shows it. */
struct msg {
	enum roce_wr_opcode op;
	uint32_t psn;
	uint32_t npkts;
	uint32_t len;
	uint64_t va;
	uint32_t rkey;
	uint64_t compare_add, swap;
	uint64_t first_t;            /* capture time of its first packet seen */
	uint8_t *data;               /* SEND/WRITE payload; READ: the data its responses carry */
	uint8_t has_orig;
	uint64_t orig;               /* atomic: the value returned */
	uint32_t read_msn;           /* READ: MSN of its first captured response with an AETH */
	uint8_t has_read_msn;
};

/* One direction of requests on a QP pair, with its responses and messages. */
struct stream {
	uint8_t ipv6;
	uint8_t req_mac[6], resp_mac[6], req_ip[16], resp_ip[16];
	uint8_t req_tos, resp_tos, req_ttl, resp_ttl;
	uint32_t req_flow, resp_flow;
	uint16_t req_sport, resp_sport;
	uint8_t has_resp;
	uint32_t req_qpn;            /* the requester's QP: BTH destination of responses */
	uint32_t resp_qpn;           /* the responder's QP: BTH destination of requests */
	uint32_t first_psn;
	int32_t span;                /* last request PSN - first_psn */
	uint32_t mtu;                /* bytes */
	uint32_t nb_req, nb_resp;
	uint8_t min_rnr_timer;
	uint8_t fatal;               /* a NAK 0x61-0x63 ends it */
	uint32_t fatal_psn;
	uint8_t fatal_syn;
	uint32_t nb_msgs;
	struct msg msgs[MAX_MSGS];
};

static struct rte_mempool *mp;
static struct roce_wire_stats wstats;
static int retry7_infinite;          /* conf.retry7_infinite of the next engine */
static unsigned int summary_exact, summary_differs, summary_failed;

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t
rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) << 32 | rd32(p + 4);
}

static void
wr32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* Decode a classified frame; the view points into @d. */
static void
view_decode(struct view *v, const uint8_t *d, const struct roce_pkt_meta *m)
{
	const uint8_t *l3 = d + m->l3_off, *l4 = d + m->l4_off, *bth = l4 + 8;
	const struct roce_opcode_info *info = &roce_opcode_info[m->opcode];

	memset(v, 0, sizeof(*v));
	memcpy(v->dst_mac, d, 6);
	memcpy(v->src_mac, d + 6, 6);
	v->ipv6 = !!(m->flags & ROCE_PKT_F_IPV6);
	if (v->ipv6) {
		memcpy(v->src_ip, l3 + 8, 16);
		memcpy(v->dst_ip, l3 + 24, 16);
		v->ttl = l3[7];
		v->flow = rd32(l3) & 0xFFFFF;
	} else {
		memcpy(v->src_ip, l3 + 12, 4);
		memcpy(v->dst_ip, l3 + 16, 4);
		v->ttl = l3[8];
	}
	v->tos = m->tos;
	v->sport = rd16(l4);
	v->dport = rd16(l4 + 2);
	v->opcode = m->opcode;
	v->mask = m->mask;
	v->psn = m->psn;
	v->qpn = m->qpn;
	v->ackreq = !!(m->flags & ROCE_PKT_F_ACKREQ);
	if (v->mask & ROCE_M_RETH) {
		const uint8_t *h = bth + info->offset[ROCE_HDR_RETH];

		v->va = rd64(h);
		v->rkey = rd32(h + 8);
		v->dma_len = rd32(h + 12);
	}
	if (v->mask & ROCE_M_ATMETH) {
		const uint8_t *h = bth + info->offset[ROCE_HDR_ATMETH];

		v->va = rd64(h);
		v->rkey = rd32(h + 8);
		v->swap_add = rd64(h + 12);
		v->compare = rd64(h + 20);
	}
	if (v->mask & ROCE_M_AETH) {
		const uint8_t *h = bth + info->offset[ROCE_HDR_AETH];

		v->has_aeth = 1;
		v->syndrome = h[0];
		v->msn = rd32(h) & ROCE_24BIT_MASK;
	}
	if (v->mask & ROCE_M_ATMACK)
		v->orig = rd64(bth + info->offset[ROCE_HDR_ATMACK]);
	v->payload = d + m->payload_off;
	v->plen = m->payload_len;
	v->tp = bth;
	v->tp_len = rd16(l4 + 4) - 8 - ROCE_ICRC_LEN;
}

static const char *
fmt_view(char *buf, size_t size, const struct view *v)
{
	int n = snprintf(buf, size, "%s psn %06x%s", roce_opcode_name(v->opcode), v->psn,
			v->ackreq ? " A" : "");

	if (v->mask & (ROCE_M_RETH | ROCE_M_ATMETH))
		n += snprintf(buf + n, size - n, " va %" PRIx64 " rkey %x len %u", v->va, v->rkey,
				v->dma_len);
	if (v->has_aeth)
		n += snprintf(buf + n, size - n, " syn %02x msn %u", v->syndrome, v->msn);
	if (v->mask & ROCE_M_ATMACK)
		n += snprintf(buf + n, size - n, " orig %" PRIx64, v->orig);
	snprintf(buf + n, size - n, " [%u B]", v->plen);
	return buf;
}

/* Classify one frame; @return 0 with its metadata, -1 when it is not a valid RoCE packet. */
static int
classify(const uint8_t *d, uint32_t len, struct roce_pkt_meta *meta)
{
	struct rte_mbuf *m = rt_mbuf(mp, d, len, 0);

	memset(meta, 0, sizeof(*meta));
	if (m == NULL)
		return -1;
	roce_classify_burst(&m, 1, 0, &wstats);
	*meta = *roce_pkt_meta(m);
	rte_pktmbuf_free(m);
	return meta->type == ROCE_PKT_ROCE ? 0 : -1;
}

/* ---- loading a capture and finding its streams and messages ---- */

static void
cap_free(struct capture *c)
{
	uint32_t i;

	for (i = 0; i < c->n; i++)
		free(c->pkt[i].data);
	free(c->pkt);
	memset(c, 0, sizeof(*c));
}

/* Load the RC packets of a file; @return 0 or -1. */
static int
cap_load(struct capture *c, const char *path)
{
	static struct roce_pcap_rec rec;
	struct roce_pcap pc;
	uint64_t t0 = 0;
	uint32_t cap = 0;
	int ret;

	memset(c, 0, sizeof(*c));
	if (roce_pcap_open(&pc, path) != 0)
		return -1;
	while ((ret = roce_pcap_next(&pc, &rec)) == 1) {
		struct roce_pkt_meta meta;
		struct cap_pkt *p;

		if (c->nb_records++ == 0)
			t0 = rec.ts_ns;
		RT_CHECK(rec.caplen == rec.origlen, "%s: record %u truncated", path, c->nb_records);
		if (classify(rec.data, rec.caplen, &meta) != 0) {
			RT_CHECK(0, "%s: record %u is not a valid RoCE packet (%s)", path,
					c->nb_records, roce_drop_reason_name(meta.reason));
			continue;
		}
		/* UD, including the CM's QP1 MADs, is no business of the RC transport. */
		if ((meta.opcode & ROCE_TRANSPORT_MASK) != ROCE_TRANSPORT_RC)
			continue;
		if (c->n == cap) {
			cap = cap != 0 ? cap * 2 : 64;
			c->pkt = realloc(c->pkt, cap * sizeof(c->pkt[0]));
			if (c->pkt == NULL)
				abort();
		}
		p = &c->pkt[c->n++];
		memset(p, 0, sizeof(*p));
		p->frame = c->nb_records;
		p->t = rec.ts_ns - t0;
		p->stream = -1;
		p->data = malloc(rec.caplen);
		if (p->data == NULL)
			abort();
		p->len = rec.caplen;
		memcpy(p->data, rec.data, rec.caplen);
		view_decode(&p->v, p->data, &meta);
	}
	roce_pcap_close(&pc);
	RT_CHECK(ret == 0, "%s: damaged record", path);
	return 0;
}

static int
ip_eq(const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, 16) == 0;
}

/* Group requests by direction and responder QPN, then give each stream its responses. */
static unsigned int
find_streams(struct capture *c, struct stream *st, const struct replay_case *rc)
{
	unsigned int ns = 0, s;
	uint32_t i;

	for (i = 0; i < c->n; i++) {
		struct cap_pkt *p = &c->pkt[i];
		const struct view *v = &p->v;

		if (!(v->mask & ROCE_M_REQ))
			continue;
		for (s = 0; s < ns; s++)
			if (st[s].resp_qpn == v->qpn && ip_eq(st[s].req_ip, v->src_ip) &&
					ip_eq(st[s].resp_ip, v->dst_ip))
				break;
		if (s == ns) {
			if (ns == MAX_STREAMS) {
				RT_CHECK(0, "too many streams");
				continue;
			}
			memset(&st[ns], 0, sizeof(st[ns]));
			st[ns].ipv6 = v->ipv6;
			memcpy(st[ns].req_mac, v->src_mac, 6);
			memcpy(st[ns].resp_mac, v->dst_mac, 6);
			memcpy(st[ns].req_ip, v->src_ip, 16);
			memcpy(st[ns].resp_ip, v->dst_ip, 16);
			st[ns].req_tos = v->tos;
			st[ns].req_ttl = v->ttl;
			st[ns].req_flow = v->flow;
			st[ns].req_sport = v->sport;
			st[ns].resp_qpn = v->qpn;
			st[ns].first_psn = v->psn;
			st[ns].mtu = roce_mtu_bytes(rc->mtu);
			st[ns].min_rnr_timer = 12;
			ns++;
		}
		p->stream = (int)s;
		st[s].nb_req++;
		/* The first PSN is the earliest one, wherever a loss put it. */
		if (roce_psn_before(v->psn, st[s].first_psn)) {
			st[s].span += roce_psn_diff(st[s].first_psn, v->psn);
			st[s].first_psn = v->psn;
		}
		if (roce_psn_diff(v->psn, st[s].first_psn) > st[s].span)
			st[s].span = roce_psn_diff(v->psn, st[s].first_psn);
		/* A First or Middle carries exactly one MTU: it must be the configured one. */
		if ((v->mask & ROCE_M_PAYLOAD) && !(v->mask & ROCE_M_LAST))
			RT_CHECK(v->plen == st[s].mtu, "frame %u: %u B in a First/Middle, MTU %u",
					p->frame, v->plen, st[s].mtu);
	}
	for (i = 0; i < c->n; i++) {
		struct cap_pkt *p = &c->pkt[i];
		const struct view *v = &p->v;
		int32_t d;

		if (!(v->mask & ROCE_M_RESP))
			continue;
		for (s = 0; s < ns; s++) {
			d = roce_psn_diff(v->psn, st[s].first_psn);
			if (ip_eq(st[s].req_ip, v->dst_ip) && ip_eq(st[s].resp_ip, v->src_ip) &&
					d >= 0 && d <= st[s].span + 4096)
				break;
		}
		if (s == ns) {
			RT_CHECK(0, "frame %u: response to no captured request", p->frame);
			continue;
		}
		p->stream = (int)s;
		if (!st[s].has_resp) {
			st[s].has_resp = 1;
			st[s].req_qpn = v->qpn;
			st[s].resp_tos = v->tos;
			st[s].resp_ttl = v->ttl;
			st[s].resp_flow = v->flow;
			st[s].resp_sport = v->sport;
		}
		RT_CHECK(st[s].req_qpn == v->qpn, "frame %u: responses to two QPs", p->frame);
		st[s].nb_resp++;
		if ((v->mask & ROCE_M_READ) && !(v->mask & ROCE_M_LAST))
			RT_CHECK(v->plen == st[s].mtu, "frame %u: %u B in a READ First/Middle, "
					"MTU %u", p->frame, v->plen, st[s].mtu);
		if (v->has_aeth && (v->syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK)
			st[s].min_rnr_timer = v->syndrome & ~ROCE_AETH_TYPE_MASK;
		if (v->has_aeth && !st[s].fatal && v->syndrome > 0x60 && v->syndrome <= 0x63) {
			st[s].fatal = 1;
			st[s].fatal_psn = v->psn;
			st[s].fatal_syn = v->syndrome;
		}
	}
	for (s = 0; s < ns; s++) {
		if (!st[s].has_resp) {
			/* No response at all (retry_exceeded): rxe gave both VMs' QPs the same
			 * number in every capture; the sources are the requests' mirror. */
			st[s].req_qpn = st[s].resp_qpn;
			st[s].resp_tos = 0;
			st[s].resp_ttl = st[s].req_ttl;
			st[s].resp_sport = st[s].req_sport;
		}
	}
	return ns;
}

/* Earliest captured request of stream @s at @psn, or -1. */
static int
find_req(const struct capture *c, int s, uint32_t psn)
{
	uint32_t i;

	for (i = 0; i < c->n; i++)
		if (c->pkt[i].stream == s && (c->pkt[i].v.mask & ROCE_M_REQ) &&
				c->pkt[i].v.psn == psn)
			return (int)i;
	return -1;
}

static uint64_t
first_seen(const struct capture *c, int s, uint32_t psn, uint32_t npkts)
{
	uint64_t t = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < c->n; i++)
		if (c->pkt[i].stream == s && (c->pkt[i].v.mask & ROCE_M_REQ) &&
				roce_psn_in(c->pkt[i].v.psn, psn, roce_psn_add(psn, npkts - 1)) &&
				c->pkt[i].t < t)
			t = c->pkt[i].t;
	return t;
}

/* SEND/WRITE opcode of a message from its first and last packets. */
static enum roce_wr_opcode
wr_opcode(uint32_t first_mask, uint32_t last_mask)
{
	if (first_mask & ROCE_M_WRITE)
		return last_mask & ROCE_M_IMM ? ROCE_WR_RDMA_WRITE_WITH_IMM : ROCE_WR_RDMA_WRITE;
	if (last_mask & ROCE_M_IMM)
		return ROCE_WR_SEND_WITH_IMM;
	return last_mask & ROCE_M_INV ? ROCE_WR_SEND_WITH_INV : ROCE_WR_SEND;
}

/* The messages of stream @s, walking its PSNs from the first; data from any transmission. */
static void
find_msgs(const struct capture *c, struct stream *st, int s)
{
	uint32_t psn = st->first_psn, i;

	while (st->nb_msgs < MAX_MSGS) {
		int k = find_req(c, s, psn), last;
		struct msg *m = &st->msgs[st->nb_msgs];
		const struct view *v;
		uint32_t n;

		if (k < 0)
			break;
		v = &c->pkt[k].v;
		memset(m, 0, sizeof(*m));
		m->psn = psn;
		if (v->mask & ROCE_M_READ) {
			m->op = ROCE_WR_RDMA_READ;
			m->len = v->dma_len;
			m->npkts = v->dma_len == 0 ? 1 : (v->dma_len + st->mtu - 1) / st->mtu;
		} else if (v->mask & ROCE_M_ATOMIC) {
			int cas = v->opcode == ROCE_OPCODE(RC, CMP_SWAP);

			m->op = cas ? ROCE_WR_ATOMIC_CMP_AND_SWP : ROCE_WR_ATOMIC_FETCH_AND_ADD;
			m->len = 8;
			m->npkts = 1;
			m->compare_add = cas ? v->compare : v->swap_add;
			m->swap = cas ? v->swap_add : 0;
		} else if (v->mask & ROCE_M_FIRST) {
			for (n = 0, last = k; !(c->pkt[last].v.mask & ROCE_M_LAST); n++) {
				last = find_req(c, s, roce_psn_add(psn, n + 1));
				if (last < 0)
					break;
			}
			if (last < 0) {
				RT_CHECK(0, "message at PSN %06x: packet %u never captured", psn,
						n + 1);
				break;
			}
			m->npkts = n + 1;
			m->len = n * st->mtu + c->pkt[last].v.plen;
			m->op = wr_opcode(v->mask, c->pkt[last].v.mask);
			if (v->mask & ROCE_M_WRITE)
				RT_CHECK(m->len == v->dma_len, "WRITE at %06x: %u B sent, RETH %u",
						psn, m->len, v->dma_len);
		} else {
			RT_CHECK(0, "frame %u: stream starts in mid-message", c->pkt[k].frame);
			break;
		}
		m->va = v->va;
		m->rkey = v->rkey;
		m->first_t = first_seen(c, s, psn, m->npkts);
		m->data = calloc(1, m->len + 8);
		if (m->data == NULL)
			abort();
		st->nb_msgs++;
		psn = roce_psn_add(psn, m->npkts);
	}
	/* Payloads: requests for SEND/WRITE, responses for READ and atomics. */
	for (i = 0; i < c->n; i++) {
		const struct view *v = &c->pkt[i].v;
		uint32_t j, off;

		if (c->pkt[i].stream != s)
			continue;
		for (j = 0; j < st->nb_msgs; j++)
			if (roce_psn_in(v->psn, st->msgs[j].psn,
					roce_psn_add(st->msgs[j].psn, st->msgs[j].npkts - 1)))
				break;
		if (j == st->nb_msgs)
			continue;
		off = (uint32_t)roce_psn_diff(v->psn, st->msgs[j].psn) * st->mtu;
		if (((v->mask & ROCE_M_REQ) && (v->mask & (ROCE_M_SEND | ROCE_M_WRITE))) ||
				((v->mask & ROCE_M_RESP) && (v->mask & ROCE_M_READ)))
			if (off + v->plen <= st->msgs[j].len)
				memcpy(st->msgs[j].data + off, v->payload, v->plen);
		if ((v->mask & ROCE_M_RESP) && (v->mask & ROCE_M_READ) && v->has_aeth &&
				!st->msgs[j].has_read_msn) {
			st->msgs[j].has_read_msn = 1;
			st->msgs[j].read_msn = v->msn;
		}
		if ((v->mask & ROCE_M_ATMACK) && !st->msgs[j].has_orig) {
			st->msgs[j].has_orig = 1;
			st->msgs[j].orig = v->orig;
		}
	}
}

static void
msgs_free(struct stream *st)
{
	uint32_t j;

	for (j = 0; j < st->nb_msgs; j++)
		free(st->msgs[j].data);
	st->nb_msgs = 0;
}

static int
is_send(enum roce_wr_opcode op)
{
	return op == ROCE_WR_SEND || op == ROCE_WR_SEND_WITH_IMM || op == ROCE_WR_SEND_WITH_INV;
}

/* Whether message @j of @st was executed by the responder (before a fatal NAK). */
static int
msg_executed(const struct stream *st, uint32_t j)
{
	return !st->fatal || roce_psn_before(roce_psn_add(st->msgs[j].psn,
			st->msgs[j].npkts - 1), st->fatal_psn);
}

/* ---- one replay: an engine with one QP playing one side ---- */

struct out_pkt {
	uint8_t *data;
	uint64_t t;
	uint32_t after_frame;        /* the captured packet fed last before we sent it */
	uint64_t after_t;            /* when it was fed */
	struct view v;
};

struct replay {
	const struct replay_case *rc;
	const struct capture *c;
	const struct stream *st;
	int s;                       /* the stream's index in the capture */
	int side;                    /* enum side we play */
	const char *name;
	struct roce_engine *eng;
	struct roce_pd *pd;
	struct roce_cq *cq;
	struct roce_qp *qp;
	struct roce_mr *mr[MAX_MR];
	uint8_t *mem[MAX_MR];
	uint64_t mem_len[MAX_MR];
	unsigned int nb_mr;
	uint64_t now;
	uint32_t fed_frame;
	uint64_t fed_t;
	uint64_t trig_t[NB_EARLY];   /* when each early[k] trigger was fed */
	struct out_pkt out[MAX_OUT]; /* what we sent and nobody matched yet */
	uint32_t out_head, out_tail;
	uint32_t sent;               /* everything we sent, filtered or not */
	uint32_t drop_seen[2];
	uint32_t filtered;
	struct roce_wc wc[MAX_WC];
	uint64_t wc_t[MAX_WC];
	uint32_t nb_wc;
	/* results */
	uint32_t matched, failed, early, skipped, msn_f;
};

static struct replay the_replay;   /* large: one at a time */

static int
drop_matches(const struct drop_rule *d, const struct view *v)
{
	return d->on && v->opcode == d->opcode && !v->ipv6 &&
		(!d->naks || (v->has_aeth && (v->syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK));
}

/* Take what the engine sent; the host's tc filter drops what rxe's lost. */
static void
collect(struct replay *r)
{
	struct rte_mbuf *pkts[64];
	uint16_t n, i;

	while ((n = roce_engine_tx(r->eng, pkts, RTE_DIM(pkts))) != 0) {
		for (i = 0; i < n; i++) {
			struct out_pkt *o = &r->out[r->out_tail];
			struct roce_pkt_meta meta;
			uint32_t len = pkts[i]->pkt_len;
			int k, drop = 0;

			r->sent++;
			o->data = malloc(len);
			if (o->data == NULL)
				abort();
			rt_mbuf_copy(pkts[i], o->data, len);
			rte_pktmbuf_free(pkts[i]);
			if (classify(o->data, len, &meta) != 0) {
				RT_CHECK(0, "%s: we sent a packet that does not classify", r->name);
				free(o->data);
				continue;
			}
			view_decode(&o->v, o->data, &meta);
			o->t = r->now;
			o->after_frame = r->fed_frame;
			o->after_t = r->fed_t;
			for (k = 0; k < 2; k++) {
				const struct drop_rule *d = &r->rc->drop[k];

				if (d->side == r->side && drop_matches(d, &o->v) &&
						++r->drop_seen[k] % d->every == 0)
					drop = 1;
			}
			if (drop) {
				r->filtered++;
				free(o->data);
				continue;
			}
			if (r->out_tail + 1 < MAX_OUT) {
				r->out_tail++;
			} else {
				RT_CHECK(0, "%s: more than %u packets sent", r->name, MAX_OUT);
				free(o->data);
			}
		}
	}
}

static void
poll_cq(struct replay *r)
{
	int n;

	while (r->nb_wc < MAX_WC &&
			(n = roce_cq_poll(r->cq, &r->wc[r->nb_wc], MAX_WC - r->nb_wc)) > 0) {
		while (n-- > 0)
			r->wc_t[r->nb_wc++] = r->now;
	}
}

/* Let the engine send all it can now. */
static void
pump(struct replay *r)
{
	unsigned int k;

	for (k = 0; k < 1000; k++) {
		uint32_t before = r->sent;

		roce_engine_poll(r->eng, r->now);
		collect(r);
		if (r->sent == before)
			break;
	}
	poll_cq(r);
}

/* Move the clock to @target, firing every timer on the way at its time. */
static void
advance(struct replay *r, uint64_t target)
{
	unsigned int k;

	for (k = 0; k < 100000; k++) {
		uint64_t nt = roce_engine_next_timer(r->eng);

		if (nt > target)
			break;
		/* A timer already due but on the wheel's next slot: step one slot. */
		r->now = nt > r->now ? nt : r->now + (1u << ROCE_TIMER_SLOT_SHIFT);
		pump(r);
	}
	if (target > r->now)
		r->now = target;
	pump(r);
}

/* Hand a captured frame to our engine at the current time. */
static void
feed(struct replay *r, const struct cap_pkt *p)
{
	struct rte_mbuf *m = rt_mbuf(mp, p->data, p->len, 0);
	unsigned int k;

	if (m == NULL) {
		RT_CHECK(0, "out of mbufs");
		return;
	}
	roce_classify_burst(&m, 1, 0, &wstats);
	r->fed_frame = p->frame;
	r->fed_t = r->now;
	for (k = 0; k < NB_EARLY; k++)
		if (r->rc->early[k][1] == p->frame)
			r->trig_t[k] = r->now;
	roce_engine_rx(r->eng, &m, 1, r->now);
	pump(r);
}

static struct out_pkt *
out_peek(struct replay *r)
{
	return r->out_head == r->out_tail ? NULL : &r->out[r->out_head];
}

static void
out_pop(struct replay *r)
{
	free(r->out[r->out_head].data);
	r->out_head++;
}

/*
 * Our packet against the captured one: addresses, TOS, TTL, ports, and the transport bytes
 * (@expect: the captured ones, or a copy edited for an intentional difference).
 */
/* (h): our re-issue of the captured READ request @b starts k packets later. */
static int
reissued_later(const struct replay *r, const struct view *a, const struct view *b)
{
	int32_t k = roce_psn_diff(a->psn, b->psn);

	if (a->opcode != ROCE_OPCODE(RC, READ_REQ) || b->opcode != a->opcode || k <= 0 ||
			a->rkey != b->rkey || (uint64_t)k * r->st->mtu >= b->dma_len)
		return 0;
	return a->va == b->va + (uint64_t)k * r->st->mtu &&
		a->dma_len == b->dma_len - (uint32_t)k * r->st->mtu;
}

static int
same_pkt(struct replay *r, const struct out_pkt *o, const struct cap_pkt *p,
		const uint8_t *expect)
{
	const struct view *a = &o->v, *b = &p->v;
	const char *what = NULL;
	char x[160], y[160];
	uint32_t at = 0;

	if (memcmp(a->src_mac, b->src_mac, 6) != 0 || memcmp(a->dst_mac, b->dst_mac, 6) != 0)
		what = "MAC";
	else if (a->ipv6 != b->ipv6 || !ip_eq(a->src_ip, b->src_ip) ||
			!ip_eq(a->dst_ip, b->dst_ip))
		what = "IP address";
	else if (a->tos != b->tos || a->ttl != b->ttl || a->flow != b->flow)
		what = "TOS/TTL/flow label";
	else if (a->sport != b->sport || a->dport != b->dport)
		what = "UDP port";
	else if (reissued_later(r, a, b))
		return 1;
	else if (a->opcode != b->opcode || a->psn != b->psn)
		what = "opcode/PSN";
	else if (a->tp_len != b->tp_len || memcmp(a->tp, expect, a->tp_len) != 0)
		what = "transport header or payload";
	if (what == NULL)
		return 1;
	while (at < a->tp_len && at < b->tp_len && a->tp[at] == expect[at])
		at++;
	RT_CHECK(0, "%s: frame %u differs (%s, from BTH byte %u):\n      capture: %s\n"
			"      ours:    %s", r->name, p->frame, what, at, fmt_view(x, sizeof(x), b),
			fmt_view(y, sizeof(y), a));
	return 0;
}

static void
replay_fini(struct replay *r)
{
	unsigned int i;

	while (out_peek(r) != NULL)
		out_pop(r);
	roce_engine_destroy(r->eng);
	for (i = 0; i < r->nb_mr; i++) {
		roce_mr_dereg(r->mr[i]);
		free(r->mem[i]);
	}
	roce_cq_destroy(r->cq);
	roce_pd_free(r->pd);
}

/* Engine, PD, CQ and a QP in RTS with the captured addresses of @side. */
static int
replay_init(struct replay *r, const struct replay_case *rc, const struct capture *c,
		const struct stream *st, int s, int side, const char *name)
{
	struct roce_engine_conf conf = { .mp = mp, .retry7_infinite = retry7_infinite };
	uint8_t rd = rc->tool == TOOL_RXE_ERR ? 4 : 16;
	struct roce_qp_init_attr ia = {
		.max_send_wr = 128, .max_recv_wr = 128, .sq_sig_all = 1,
		.qp_num = side == SIDE_REQ ? st->req_qpn : st->resp_qpn,
	};
	struct roce_qp_attr a = {
		.qp_state = ROCE_QPS_INIT,
		.qp_access_flags = ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ |
			ROCE_ACCESS_REMOTE_ATOMIC,
	};
	struct roce_path *ah = &a.ah;
	int req = side == SIDE_REQ;

	memset(r, 0, offsetof(struct replay, out));
	r->out_head = r->out_tail = r->sent = r->filtered = r->nb_wc = r->fed_frame = 0;
	r->fed_t = 0;
	memset(r->trig_t, 0, sizeof(r->trig_t));
	r->drop_seen[0] = r->drop_seen[1] = 0;
	r->matched = r->failed = r->early = r->skipped = r->msn_f = 0;
	r->rc = rc;
	r->st = st;
	r->c = c;
	r->s = s;
	r->side = side;
	r->name = name;
	r->eng = roce_engine_create(&conf);
	r->pd = roce_pd_alloc(SOCKET_ID_ANY);
	r->cq = roce_cq_create(1024, SOCKET_ID_ANY);
	if (r->eng == NULL || r->pd == NULL || r->cq == NULL)
		return -ENOMEM;
	ia.send_cq = ia.recv_cq = r->cq;
	r->qp = roce_qp_create(r->eng, r->pd, &ia);
	if (r->qp == NULL)
		return -rte_errno;
	if (rc->qp_read_only && !req)
		a.qp_access_flags = ROCE_ACCESS_REMOTE_READ;
	if (roce_qp_modify(r->qp, &a, ROCE_QP_STATE | ROCE_QP_ACCESS_FLAGS) != 0)
		return -EINVAL;
	a.qp_state = ROCE_QPS_RTR;
	a.path_mtu = rc->mtu;
	a.dest_qp_num = req ? st->resp_qpn : st->req_qpn;
	a.rq_psn = req ? 0 : st->first_psn;
	a.max_dest_rd_atomic = rd;
	a.min_rnr_timer = st->min_rnr_timer;
	memcpy(ah->src_mac.addr_bytes, req ? st->req_mac : st->resp_mac, 6);
	memcpy(ah->dst_mac.addr_bytes, req ? st->resp_mac : st->req_mac, 6);
	ah->ipv6 = st->ipv6;
	memcpy(ah->src_ip, req ? st->req_ip : st->resp_ip, 16);
	memcpy(ah->dst_ip, req ? st->resp_ip : st->req_ip, 16);
	ah->dscp = (req ? st->req_tos : st->resp_tos) >> 2;
	ah->ecn = (req ? st->req_tos : st->resp_tos) & ROCE_ECN_MASK;
	ah->ttl = req ? st->req_ttl : st->resp_ttl;
	ah->flow_label = req ? st->req_flow : st->resp_flow;
	ah->udp_sport = req ? st->req_sport : st->resp_sport;
	if (roce_qp_modify(r->qp, &a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU |
			ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC |
			ROCE_QP_MIN_RNR_TIMER) != 0)
		return -EINVAL;
	a.qp_state = ROCE_QPS_RTS;
	a.sq_psn = req ? st->first_psn : 0;
	a.timeout = 14;
	a.retry_cnt = rc->retry_cnt != 0 ? rc->retry_cnt : 7;
	a.rnr_retry = rc->rnr_retry != 0 ? rc->rnr_retry : 7;
	a.max_rd_atomic = rd;
	if (roce_qp_modify(r->qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN | ROCE_QP_TIMEOUT |
			ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY | ROCE_QP_MAX_QP_RD_ATOMIC) != 0)
		return -EINVAL;
	return 0;
}

/* Register @len bytes at @iova under @rkey (0: any) with @access; @return its index. */
static int
add_mr(struct replay *r, uint64_t iova, uint64_t len, uint32_t rkey, uint32_t access,
		uint8_t fill)
{
	struct roce_mr_attr attr = { .iova = iova, .rkey = rkey };
	unsigned int i = r->nb_mr;

	if (i == MAX_MR)
		return -1;
	r->mem[i] = malloc(len != 0 ? len : 1);
	if (r->mem[i] == NULL)
		abort();
	memset(r->mem[i], fill, len);
	r->mem_len[i] = len;
	r->mr[i] = roce_mr_reg(r->pd, r->mem[i], len, access, &attr);
	if (r->mr[i] == NULL) {
		RT_CHECK(0, "%s: MR %" PRIx64 "+%" PRIu64 " rkey %x: %s", r->name, iova, len, rkey,
				rte_strerror(rte_errno));
		free(r->mem[i]);
		return -1;
	}
	r->nb_mr++;
	return (int)i;
}

/* Local address of a target range in the MRs we registered for it, or NULL. */
static uint8_t *
mem_at(struct replay *r, uint32_t rkey, uint64_t va, uint64_t len, unsigned int *idx)
{
	unsigned int i;

	for (i = 0; i < r->nb_mr; i++) {
		uint64_t iova = roce_mr_iova(r->mr[i]);

		if (roce_mr_rkey(r->mr[i]) == rkey && va >= iova &&
				va - iova + len <= r->mem_len[i]) {
			if (idx != NULL)
				*idx = i;
			return r->mem[i] + (va - iova);
		}
	}
	return NULL;
}

/* ---- responder replay ---- */

/* The responder's target MRs, by the table's mode, pre-filled from the capture. */
static int
resp_mrs(struct replay *r, const struct stream *st)
{
	const struct replay_case *rc = r->rc;
	const uint32_t all = ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_WRITE |
		ROCE_ACCESS_REMOTE_READ | ROCE_ACCESS_REMOTE_ATOMIC;
	uint8_t fill = rc->tool == TOOL_RXE_ERR ? 0x55 : 0; /* rxe-err's server memset */
	uint32_t keys[MAX_MR], nk = 0, j, k;
	uint64_t lo[MAX_MR], hi[MAX_MR];

	for (j = 0; j < st->nb_msgs; j++) {
		const struct msg *m = &st->msgs[j];

		if (is_send(m->op))
			continue;
		for (k = 0; k < nk && keys[k] != m->rkey; k++)
			;
		if (k == nk) {
			if (nk == MAX_MR)
				return -1;
			keys[nk] = m->rkey;
			lo[nk] = m->va;
			hi[nk++] = m->va + m->len;
		}
		lo[k] = RTE_MIN(lo[k], m->va);
		hi[k] = RTE_MAX(hi[k], m->va + m->len);
	}
	for (k = 0; k < nk; k++) {
		uint64_t iova = lo[k] & ~0xFFFull, len = RTE_ALIGN_CEIL(hi[k], 4096) - iova;
		uint32_t key = keys[k], access = all;

		switch (rc->mr) {
		case MR_BAD_RKEY:
			key ^= 0x00FFFF00;
			break;
		case MR_OOB:
			/* rxe-err: raddr = MR + bufsz - size / 2, bufsz = 2 * max(size, 4096) */
			len = 2 * RTE_MAX(hi[k] - lo[k], 4096ull);
			iova = lo[k] + (hi[k] - lo[k]) / 2 - len;
			break;
		case MR_NO_WRITE:
			access = ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_READ;
			break;
		default:
			break;
		}
		if (add_mr(r, iova, len, key, access, fill) < 0)
			return -1;
	}
	/* READ data and the first original value at each atomic target. */
	for (j = 0; j < st->nb_msgs; j++) {
		const struct msg *m = &st->msgs[j];
		uint8_t *p = mem_at(r, m->rkey, m->va, m->len, NULL);

		if (p == NULL)
			continue;
		if (m->op == ROCE_WR_RDMA_READ) {
			memcpy(p, m->data, m->len);
		} else if (m->has_orig) {
			for (k = 0; k < j; k++)
				if (st->msgs[k].has_orig && st->msgs[k].va == m->va)
					break;
			if (k == j)
				memcpy(p, &m->orig, 8);
		}
	}
	return 0;
}

/* Memory the responder's MRs must hold at the end: WRITE data and atomic results. */
static void
resp_expect_mem(struct replay *r, const struct stream *st, uint8_t **want)
{
	uint32_t i, j;

	for (i = 0; i < r->nb_mr; i++) {
		want[i] = malloc(r->mem_len[i] + 1);
		if (want[i] == NULL)
			abort();
		memcpy(want[i], r->mem[i], r->mem_len[i]);
	}
	for (j = 0; j < st->nb_msgs; j++) {
		const struct msg *m = &st->msgs[j];
		unsigned int idx;
		uint8_t *p = mem_at(r, m->rkey, m->va, m->len, &idx);
		uint64_t v;

		if (p == NULL || !msg_executed(st, j))
			continue;
		p = want[idx] + (p - r->mem[idx]);
		switch (m->op) {
		case ROCE_WR_RDMA_WRITE:
		case ROCE_WR_RDMA_WRITE_WITH_IMM:
			memcpy(p, m->data, m->len);
			break;
		case ROCE_WR_ATOMIC_FETCH_AND_ADD:
			memcpy(&v, p, 8);
			v += m->compare_add;
			memcpy(p, &v, 8);
			break;
		case ROCE_WR_ATOMIC_CMP_AND_SWP:
			memcpy(&v, p, 8);
			if (v == m->compare_add)
				memcpy(p, &m->swap, 8);
			break;
		default:
			break;
		}
	}
}

/*
 * The application may change what a READ reads between two READs (rping's ping buffer):
 * before a READ request first arrives, its region holds the data its responses carried.
 */
static void
read_refill(struct replay *r, const struct stream *st, const struct cap_pkt *p,
		uint8_t *refilled, uint8_t **want)
{
	unsigned int idx;
	uint32_t j;

	for (j = 0; j < st->nb_msgs; j++) {
		const struct msg *m = &st->msgs[j];
		uint8_t *q;

		if (m->op != ROCE_WR_RDMA_READ || m->psn != p->v.psn || refilled[j])
			continue;
		refilled[j] = 1;
		q = mem_at(r, m->rkey, m->va, m->len, &idx);
		if (q == NULL)
			continue;
		memcpy(q, m->data, m->len);
		memcpy(want[idx] + (q - r->mem[idx]), m->data, m->len);
	}
}

struct recv_plan {
	uint32_t n, len;
	uint8_t *buf;
	struct roce_mr *mr;
	uint32_t posted;
	uint8_t *before;             /* RECV_ON_ACCEPT: post just before feeding packet i */
};

static void
recv_post(struct replay *r, struct recv_plan *plan)
{
	struct roce_recv_wr wr = {
		.wr_id = plan->posted,
		.num_sge = 1,
		.sg_list = {{ (uintptr_t)plan->buf + (uint64_t)plan->posted * plan->len, plan->len,
			roce_mr_lkey(plan->mr) }},
	};

	if (plan->posted >= plan->n) {
		RT_CHECK(0, "%s: more receives than planned", r->name);
		return;
	}
	RT_CHECK(roce_post_recv(r->qp, &wr) == 0, "%s: post_recv", r->name);
	plan->posted++;
}

/* Receives: how many, how long, and for RECV_ON_ACCEPT before which frames. */
static void
recv_plan_make(struct replay *r, const struct stream *st, struct recv_plan *p)
{
	const struct replay_case *rc = r->rc;
	const struct capture *c = r->c;
	uint32_t j, i, max_len = 1, nsend = 0, max_msn = 0;

	memset(p, 0, sizeof(*p));
	for (j = 0; j < st->nb_msgs; j++)
		if (is_send(st->msgs[j].op)) {
			nsend++;
			max_len = RTE_MAX(max_len, st->msgs[j].len);
		}
	switch (rc->recv) {
	case RECV_PER_SEND:
		p->n = nsend;
		p->len = max_len;
		break;
	case RECV_N:
	case RECV_AT:
		p->n = rc->recv_n;
		p->len = rc->recv_len;
		break;
	case RECV_ON_ACCEPT:
		/* An ACK that moves the MSN accepted the SEND Only at its PSN: its last
		 * transmission before that ACK is the one the receive was there for. */
		p->before = calloc(c->n, 1);
		if (p->before == NULL)
			abort();
		p->len = max_len;
		for (i = 0; i < c->n; i++) {
			const struct view *v = &c->pkt[i].v;
			int k, last = -1;

			if (c->pkt[i].stream != r->s || !(v->mask & ROCE_M_RESP) ||
					!v->has_aeth || (v->syndrome & ROCE_AETH_TYPE_MASK) != 0 ||
					v->msn <= max_msn)
				continue;
			max_msn = v->msn;
			for (k = 0; k < (int)i; k++)
				if (c->pkt[k].stream == r->s && (c->pkt[k].v.mask & ROCE_M_REQ) &&
						c->pkt[k].v.psn == v->psn)
					last = k;
			RT_CHECK(last >= 0 && (c->pkt[last].v.mask & ROCE_M_ONLY) == ROCE_M_ONLY,
					"%s: ACK frame %u: no SEND Only at its PSN", r->name,
					c->pkt[i].frame);
			if (last >= 0) {
				p->before[last] = 1;
				p->n++;
			}
		}
		break;
	default:
		break;
	}
	if (p->n == 0)
		return;
	p->buf = calloc(p->n, p->len);
	if (p->buf == NULL)
		abort();
	p->mr = roce_mr_reg(r->pd, p->buf, (uint64_t)p->n * p->len, ROCE_ACCESS_LOCAL_WRITE,
			NULL);
	RT_CHECK(p->mr != NULL, "%s: receive MR", r->name);
}

/*
 * (f): a READ re-served for a duplicate request carries the MSN of its original response.
 * @return 1 when the capture's MSN differs from it (the copy in @buf is edited).
 */
static int
expect_read_msn(const struct stream *st, const struct cap_pkt *p, int reserved, uint8_t *buf)
{
	const struct view *v = &p->v;
	uint32_t j;

	if (!(v->mask & ROCE_M_READ) || !v->has_aeth || !reserved)
		return 0;
	for (j = 0; j < st->nb_msgs; j++) {
		const struct msg *m = &st->msgs[j];

		if (m->op == ROCE_WR_RDMA_READ && m->has_read_msn &&
				roce_psn_in(v->psn, m->psn, roce_psn_add(m->psn, m->npkts - 1)) &&
				m->read_msn != v->msn) {
			const struct roce_opcode_info *info = &roce_opcode_info[v->opcode];
			uint8_t *aeth = buf + info->offset[ROCE_HDR_AETH];

			wr32(aeth, (uint32_t)v->syndrome << 24 | m->read_msn);
			return 1;
		}
	}
	return 0;
}

static void
check_recv_wcs(struct replay *r, const struct stream *st, const struct recv_plan *p)
{
	enum roce_qp_state state = roce_qp_state(r->qp);
	uint32_t j, k = 0, i, nb_recv = 0, want_recv;

	/* SENDs in order take the receives; a SEND the responder failed gets LOC_LEN_ERR (g). */
	for (j = 0; j < st->nb_msgs && k < p->posted; j++) {
		const struct msg *m = &st->msgs[j];
		enum roce_wc_status want = ROCE_WC_SUCCESS;
		const struct roce_wc *wc = NULL;

		if (!is_send(m->op))
			continue;
		if (!msg_executed(st, j)) {
			uint32_t last = roce_psn_add(m->psn, m->npkts - 1);

			if (!roce_psn_in(st->fatal_psn, m->psn, last) ||
					st->fatal_syn != (ROCE_AETH_NAK | ROCE_NAK_REM_OP_ERR))
				break;
			want = ROCE_WC_LOC_LEN_ERR;
		}
		for (i = 0; i < r->nb_wc; i++)
			if ((r->wc[i].opcode & ROCE_WC_RECV) && r->wc[i].wr_id == k)
				wc = &r->wc[i];
		RT_CHECK(wc != NULL && wc->status == want, "%s: receive %u: %s, want %s", r->name,
				k, wc != NULL ? roce_wc_status_str(wc->status) : "none",
				roce_wc_status_str(want));
		if (wc != NULL && want == ROCE_WC_SUCCESS) {
			RT_CHECK(wc->byte_len == m->len && wc->src_qp == st->req_qpn,
					"%s: receive %u: %u B from QP %x", r->name, k, wc->byte_len,
					wc->src_qp);
			RT_CHECK(memcmp(p->buf + (uint64_t)k * p->len, m->data, m->len) == 0,
					"%s: receive %u data", r->name, k);
		}
		k++;
		if (want != ROCE_WC_SUCCESS)
			break;
	}
	/* The rest are flushed when the QP failed, else still posted. */
	for (; k < p->posted; k++) {
		const struct roce_wc *wc = NULL;

		for (i = 0; i < r->nb_wc; i++)
			if ((r->wc[i].opcode & ROCE_WC_RECV) && r->wc[i].wr_id == k)
				wc = &r->wc[i];
		if (state == ROCE_QPS_ERR)
			RT_CHECK(wc != NULL && wc->status == ROCE_WC_WR_FLUSH_ERR,
					"%s: receive %u not flushed", r->name, k);
		else
			RT_CHECK(wc == NULL, "%s: receive %u completed", r->name, k);
	}
	/* Nothing completed twice (no duplicate delivery). */
	want_recv = state == ROCE_QPS_ERR ? p->posted : 0;
	for (j = 0, k = 0; j < st->nb_msgs; j++)
		k += is_send(st->msgs[j].op) && msg_executed(st, j);
	if (state != ROCE_QPS_ERR)
		want_recv = RTE_MIN(k, p->posted);
	for (i = 0; i < r->nb_wc; i++)
		nb_recv += !!(r->wc[i].opcode & ROCE_WC_RECV);
	RT_CHECK(nb_recv == want_recv, "%s: %u receive completions, want %u", r->name, nb_recv,
			want_recv);
}

static void
replay_responder(const struct replay_case *rc, const struct capture *c, const struct stream *st,
		int s, const char *name)
{
	struct replay *r = &the_replay;
	struct recv_plan plan;
	uint8_t *want[MAX_MR];
	uint8_t scratch[ROCE_PCAP_SNAP_MAX], refilled[MAX_MSGS] = {0};
	uint32_t i, recv_at;
	uint64_t cnt[ROCE_XC_NUM];
	enum roce_qp_state want_state;
	unsigned int failures = rt_failures;

	if (replay_init(r, rc, c, st, s, SIDE_RESP, name) != 0) {
		RT_CHECK(0, "%s: QP setup", name);
		replay_fini(r);
		return;
	}
	if (resp_mrs(r, st) != 0)
		RT_CHECK(0, "%s: target MRs", name);
	resp_expect_mem(r, st, want);
	if (rc->resp_qp_err) {
		struct roce_qp_attr a = { .qp_state = ROCE_QPS_ERR };

		roce_qp_modify(r->qp, &a, ROCE_QP_STATE);
	}
	recv_plan_make(r, st, &plan);
	if (rc->recv == RECV_N || rc->recv == RECV_PER_SEND)
		while (plan.posted < plan.n)
			recv_post(r, &plan);
	recv_at = rc->recv == RECV_AT ? 0 : UINT32_MAX;
	for (i = 0; i < c->n; i++) {
		const struct cap_pkt *p = &c->pkt[i];
		struct out_pkt *o;
		int reserved;
		uint32_t k;

		if (p->stream != s)
			continue;
		if (p->v.mask & ROCE_M_REQ) {
			if (p->t > r->now)
				advance(r, p->t);
			if (recv_at == 0 && p->t >= (uint64_t)rc->recv_at_ms * MS) {
				while (plan.posted < plan.n)
					recv_post(r, &plan);
				recv_at = 1;
			}
			if (plan.before != NULL && plan.before[i])
				recv_post(r, &plan);
			if (p->v.mask & ROCE_M_READ)
				read_refill(r, st, p, refilled, want);
			feed(r, p);
			continue;
		}
		pump(r);
		o = out_peek(r);
		if (o == NULL) {
			char x[160];

			RT_CHECK(0, "%s: frame %u: we sent nothing for %s", name, p->frame,
					fmt_view(x, sizeof(x), &p->v));
			r->failed++;
			continue;
		}
		/* A response at a PSN the capture already showed re-serves a duplicate. */
		for (k = 0, reserved = 0; k < i; k++)
			if (c->pkt[k].stream == s && (c->pkt[k].v.mask & ROCE_M_RESP) &&
					c->pkt[k].v.psn == p->v.psn)
				reserved = 1;
		memcpy(scratch, p->v.tp, p->v.tp_len);
		if (expect_read_msn(st, p, reserved, scratch))
			r->msn_f++;
		if (same_pkt(r, o, p, scratch))
			r->matched++;
		else
			r->failed++;
		out_pop(r);
	}
	advance(r, r->now + SEC);
	for (; out_peek(r) != NULL; out_pop(r)) {
		char x[160];

		RT_CHECK(0, "%s: we sent more than the capture: %s", name,
				fmt_view(x, sizeof(x), &out_peek(r)->v));
		r->failed++;
	}
	/* Final state: fatal NAKs (and a QP failed by hand) end in ERR, the rest stay RTS. */
	want_state = st->fatal || rc->resp_qp_err ? ROCE_QPS_ERR : ROCE_QPS_RTS;
	RT_CHECK(roce_qp_state(r->qp) == want_state, "%s: QP %s, want %s", name,
			roce_qp_state_name(roce_qp_state(r->qp)), roce_qp_state_name(want_state));
	check_recv_wcs(r, st, &plan);
	for (i = 0; i < r->nb_mr; i++) {
		RT_CHECK(memcmp(r->mem[i], want[i], r->mem_len[i]) == 0,
				"%s: MR %u content differs from what the capture wrote", name, i);
		free(want[i]);
	}
	roce_engine_counters(r->eng, cnt);
	RT_CHECK(cnt[ROCE_XC_UNKNOWN_QP] == 0, "%s: packets for no QP", name);
	RT_CHECK(want_state == ROCE_QPS_ERR || cnt[ROCE_XC_STATE_DROP] == 0,
			"%s: %" PRIu64 " packets dropped (address or state)", name,
			cnt[ROCE_XC_STATE_DROP]);
	if (rt_failures != failures)
		r->failed++;
	printf("  %-44s responder %3u/%-3u %s", name, r->matched, st->nb_resp,
			r->failed ? "FAILED" : r->msn_f ? "as documented" : "exact");
	if (r->msn_f)
		printf(" (f: %u re-served READ responses keep their MSN)", r->msn_f);
	if (r->filtered)
		printf(" [%u lost to the tc filter]", r->filtered);
	printf("\n");
	if (r->failed)
		summary_failed++;
	else if (r->msn_f)
		summary_differs++;
	else
		summary_exact++;
	if (plan.mr != NULL)
		roce_mr_dereg(plan.mr);
	free(plan.buf);
	free(plan.before);
	replay_fini(r);
}

/* ---- requester replay ---- */

/* The work request of message @j, its local buffer at @addr in @lmr. */
static void
msg_wr(const struct stream *st, uint32_t j, uint64_t addr, const struct roce_mr *lmr,
		struct roce_send_wr *wr)
{
	const struct msg *m = &st->msgs[j];

	*wr = (struct roce_send_wr){
		.wr_id = j,
		.opcode = m->op,
		.num_sge = m->len != 0 ? 1 : 0,
		.sg_list = {{ addr, m->len, roce_mr_lkey(lmr) }},
		.remote_addr = m->va,
		.rkey = m->rkey,
		.compare_add = m->compare_add,
		.swap = m->swap,
	};
}

/* The completer's reordering window before a READ gap counts as lost (comp.c, at first). */
#define REO_WINDOW_NS (20 * 1000)

/*
 * The captured response after which we send @frame early, on purpose (within the reordering
 * window); 0: none. @k: its index in rc->early.
 */
static uint32_t
early_trigger(const struct replay_case *rc, uint32_t frame, unsigned int *k)
{
	for (*k = 0; *k < NB_EARLY; (*k)++)
		if (rc->early[*k][0] == frame)
			return rc->early[*k][1];
	return 0;
}

static void
replay_requester(const struct replay_case *rc, const struct capture *c, const struct stream *st,
		int s, const char *name)
{
	struct replay *r = &the_replay;
	uint64_t off[MAX_MSGS + 1], post_t[MAX_MSGS], total = 0, mr_base;
	int64_t shift = 0;
	uint32_t i, j, posted = 0, max_psn = st->first_psn, nb_wcs;
	struct roce_mr *lmr;
	uint8_t *lbuf;
	int rnr_wait = 0, seen_any = 0, bad_time = 0;
	enum roce_wc_status want[MAX_MSGS];
	unsigned int failures = rt_failures;

	if (replay_init(r, rc, c, st, s, SIDE_REQ, name) != 0) {
		RT_CHECK(0, "%s: QP setup", name);
		replay_fini(r);
		return;
	}
	/* Local buffers: one slot per message, SEND/WRITE data as captured. */
	for (j = 0; j < st->nb_msgs; j++) {
		off[j] = total;
		total += RTE_ALIGN_CEIL(st->msgs[j].len, 64) + 64;
	}
	lbuf = calloc(1, total + 1);
	if (lbuf == NULL)
		abort();
	for (j = 0; j < st->nb_msgs; j++)
		if (st->msgs[j].op != ROCE_WR_RDMA_READ)
			memcpy(lbuf + off[j], st->msgs[j].data, st->msgs[j].len);
	lmr = roce_mr_reg(r->pd, lbuf, total + 1, ROCE_ACCESS_LOCAL_WRITE, NULL);
	mr_base = (uintptr_t)lbuf;
	/* A WR is posted when the capture first shows it or any later one (its own first
	 * transmission may be lost). */
	for (j = st->nb_msgs; j-- > 0;)
		post_t[j] = j + 1 < st->nb_msgs ? RTE_MIN(st->msgs[j].first_t, post_t[j + 1]) :
			st->msgs[j].first_t;
	for (i = 0; i <= c->n; i++) {
		const struct cap_pkt *p = i < c->n ? &c->pkt[i] : NULL;
		uint64_t t = p != NULL ? p->t : UINT64_MAX;
		uint64_t at;
		struct out_pkt *o;

		if (p != NULL && p->stream != s)
			continue;
		/* Post what the capture shows by now. */
		while (posted < st->nb_msgs && post_t[posted] <= t) {
			int64_t pt = (int64_t)post_t[posted] + shift;
			struct roce_send_wr wr;

			if (pt > (int64_t)r->now)
				advance(r, (uint64_t)pt);
			msg_wr(st, posted, mr_base + off[posted], lmr, &wr);
			RT_CHECK(roce_post_send(r->qp, &wr) == 0, "%s: post WR %u", name, posted);
			posted++;
			pump(r);
		}
		if (p == NULL)
			break;
		at = (int64_t)t + shift > (int64_t)r->now ? (uint64_t)((int64_t)t + shift) : r->now;
		if (p->v.mask & ROCE_M_RESP) {
			advance(r, at);
			if (p->v.has_aeth &&
					(p->v.syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK)
				rnr_wait = 1;
			feed(r, p);
			continue;
		}
		/* A captured request. (e): a first transmission during rxe's RNR wait is one
		 * we hold back; it comes again in the go-back-N after the timer. */
		if (seen_any && !roce_psn_before(max_psn, p->v.psn))
			rnr_wait = 0;
		if (rnr_wait && roce_psn_before(max_psn, p->v.psn)) {
			r->skipped++;
			max_psn = p->v.psn;
			continue;
		}
		if (!seen_any || roce_psn_before(max_psn, p->v.psn))
			max_psn = p->v.psn;
		seen_any = 1;
		if (out_peek(r) == NULL)
			advance(r, at);
		while (out_peek(r) == NULL && roce_engine_next_timer(r->eng) < at + SEC)
			advance(r, roce_engine_next_timer(r->eng));
		o = out_peek(r);
		if (o == NULL) {
			char x[160];

			RT_CHECK(0, "%s: frame %u: we did not send %s", name, p->frame,
					fmt_view(x, sizeof(x), &p->v));
			r->failed++;
			continue;
		}
		if (same_pkt(r, o, p, p->v.tp))
			r->matched++;
		else
			r->failed++;
		/* Timing, against the capture shifted by where we already are. */
		{
			int64_t d = (int64_t)o->t - ((int64_t)t + shift);
			unsigned int k;
			uint32_t trig = early_trigger(rc, p->frame, &k);

			if (trig != 0) {
				/* Sent once the trigger's gap outlived the window, not at a timeout. */
				int ok = o->t <= r->trig_t[k] + REO_WINDOW_NS;

				if (!ok)
					bad_time++;
				RT_CHECK(ok, "%s: frame %u: sent %.3f ms after frame %u, want within "
						"%u us", name, p->frame,
						((double)o->t - (double)r->trig_t[k]) / 1e6, trig,
						REO_WINDOW_NS / 1000);
				r->early++;
				printf("  %-44s   frame %u: sent %+.3f ms from frame %u, %.1f ms "
						"before rxe\n", name, p->frame,
						((double)o->t - (double)r->trig_t[k]) / 1e6, trig, -d / 1e6);
			} else if (d < -(int64_t)TOL_NS || d > (int64_t)TOL_NS) {
				bad_time++;
				RT_CHECK(0, "%s: frame %u sent %.1f ms %s than rxe", name,
						p->frame, (d < 0 ? -d : d) / 1e6,
						d < 0 ? "earlier" : "later");
			}
			shift = (int64_t)o->t - (int64_t)t;
		}
		out_pop(r);
	}
	/* The capture ends: whatever timers remain run out (retry or RNR exhaustion). */
	for (j = 0; j < 100 && roce_engine_next_timer(r->eng) != UINT64_MAX; j++)
		advance(r, roce_engine_next_timer(r->eng));
	pump(r);
	for (; out_peek(r) != NULL; out_pop(r)) {
		char x[160];

		RT_CHECK(0, "%s: we sent more than the capture: %s", name,
				fmt_view(x, sizeof(x), &out_peek(r)->v));
		r->failed++;
	}
	/* Completions: the client log's statuses, in order. */
	for (j = 0; j < st->nb_msgs; j++)
		want[j] = j < rc->nb_wc ? rc->wc[j] : rc->nb_wc != 0 ? ROCE_WC_WR_FLUSH_ERR :
			ROCE_WC_SUCCESS;
	nb_wcs = 0;
	for (i = 0; i < r->nb_wc; i++) {
		const struct roce_wc *wc = &r->wc[i];

		if (wc->opcode & ROCE_WC_RECV)
			continue;
		RT_CHECK(wc->wr_id == nb_wcs && nb_wcs < st->nb_msgs &&
				wc->status == want[nb_wcs], "%s: completion %u: WR %" PRIu64
				" %s, want WR %u %s", name, nb_wcs, wc->wr_id,
				roce_wc_status_str(wc->status), nb_wcs, nb_wcs < st->nb_msgs ?
				roce_wc_status_str(want[nb_wcs]) : "none");
		if (wc->status != ROCE_WC_SUCCESS && wc->status != ROCE_WC_WR_FLUSH_ERR &&
				st->fatal)
			RT_CHECK(wc->vendor_err == st->fatal_syn, "%s: vendor_err %x, NAK %x", name,
					wc->vendor_err, st->fatal_syn);
		if (rc->err_at_us != 0 && nb_wcs == 0 && st->nb_msgs != 0 &&
				wc->status == want[0]) {
			/* The client's clock starts at its first post, as the capture's does. */
			int64_t d = (int64_t)r->wc_t[i] - ((int64_t)rc->err_at_us * 1000 + shift);

			printf("  %-44s   %s at %.1f ms (client log %.1f ms)\n", name,
					roce_wc_status_str(wc->status),
					(r->wc_t[i] - (uint64_t)shift) / 1e6, rc->err_at_us / 1e3);
			RT_CHECK(d >= -(int64_t)TOL_NS && d <= (int64_t)TOL_NS,
					"%s: failed %.1f ms off the client log", name, d / 1e6);
		}
		if (wc->wr_id < st->nb_msgs && wc->status == ROCE_WC_SUCCESS) {
			const struct msg *m = &st->msgs[wc->wr_id];

			if (m->op == ROCE_WR_RDMA_READ)
				RT_CHECK(memcmp(lbuf + off[wc->wr_id], m->data, m->len) == 0,
						"%s: READ %" PRIu64 " data", name, wc->wr_id);
			if (m->has_orig)
				RT_CHECK(memcmp(lbuf + off[wc->wr_id], &m->orig, 8) == 0,
						"%s: atomic %" PRIu64 " value", name, wc->wr_id);
		}
		nb_wcs++;
	}
	RT_CHECK(nb_wcs == st->nb_msgs, "%s: %u completions for %u WRs", name, nb_wcs,
			st->nb_msgs);
	RT_CHECK(roce_qp_state(r->qp) == (rc->nb_wc != 0 ? ROCE_QPS_ERR : ROCE_QPS_RTS),
			"%s: QP %s", name, roce_qp_state_name(roce_qp_state(r->qp)));
	if (rt_failures != failures)
		r->failed++;
	printf("  %-44s requester %3u/%-3u %s", name, r->matched, st->nb_req,
			r->failed || bad_time ? "FAILED" :
			r->early || r->skipped ? "as documented" : "exact");
	if (r->early)
		printf(" (%u sent earlier on purpose)", r->early);
	if (r->skipped)
		printf(" (e: %u rxe sent during its RNR wait, we hold)", r->skipped);
	if (r->filtered)
		printf(" [%u lost to the tc filter]", r->filtered);
	printf(", %u WRs\n", st->nb_msgs);
	if (r->failed || bad_time)
		summary_failed++;
	else if (r->early || r->skipped)
		summary_differs++;
	else
		summary_exact++;
	roce_mr_dereg(lmr);
	free(lbuf);
	replay_fini(r);
}

/* ---- the tests ---- */

static void
replay_case(const struct replay_case *rc)
{
	static struct stream st[MAX_STREAMS];
	struct capture c;
	char path[4096], name[128];
	unsigned int ns, s;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(path, sizeof(path), "%s/%s", rt_captures_dir(), rc->file);
	if (cap_load(&c, path) != 0) {
		RT_CHECK(0, "cannot read %s", path);
		return;
	}
	ns = find_streams(&c, st, rc);
	RT_CHECK((ns == 0) == rc->no_rc, "%s: %u RC streams", rc->file, ns);
	printf("%s: %u records, %u RC packets, %u stream%s -- %s\n", rc->file, c.nb_records, c.n,
			ns, ns == 1 ? "" : "s", rc->why);
	for (s = 0; s < ns; s++) {
		find_msgs(&c, &st[s], (int)s);
		snprintf(name, sizeof(name), "%.24s%s QP %x->%x",
				strrchr(rc->file, '/') ? strrchr(rc->file, '/') + 1 : rc->file,
				ns > 1 ? "..." : "", st[s].req_qpn, st[s].resp_qpn);
		RT_CHECK(st[s].nb_msgs != 0, "%s: no messages", name);
		replay_responder(rc, &c, &st[s], (int)s, name);
		replay_requester(rc, &c, &st[s], (int)s, name);
		msgs_free(&st[s]);
	}
	cap_free(&c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("  (%.0f ms)\n", (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
}

static void
test_replay_all(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(cases); i++)
		replay_case(&cases[i]);
	printf("replays: %u exact, %u differing as documented, %u failed\n", summary_exact,
			summary_differs, summary_failed);
}

/* Load one capture with its first stream and messages; @return the case, NULL on error. */
static const struct replay_case *
load_one(const char *file, struct capture *c, struct stream *st)
{
	char path[4096];
	unsigned int i;

	for (i = 0; i < RTE_DIM(cases) && strcmp(cases[i].file, file) != 0; i++)
		;
	snprintf(path, sizeof(path), "%s/%s", rt_captures_dir(), file);
	if (i == RTE_DIM(cases) || cap_load(c, path) != 0) {
		RT_CHECK(0, "cannot read %s", path);
		return NULL;
	}
	if (find_streams(c, st, &cases[i]) < 1) {
		RT_CHECK(0, "%s: no stream", file);
		cap_free(c);
		return NULL;
	}
	find_msgs(c, st, 0);
	return &cases[i];
}

static const struct cap_pkt *
frame_of(const struct capture *c, uint32_t frame)
{
	uint32_t i;

	for (i = 0; i < c->n; i++)
		if (c->pkt[i].frame == frame)
			return &c->pkt[i];
	return NULL;
}

/* Post message @j of @st from @buf, which gets its data. */
static int
post_msg(struct replay *r, const struct stream *st, uint32_t j, struct roce_mr *lmr,
		uint8_t *buf)
{
	struct roce_send_wr wr;

	memcpy(buf, st->msgs[j].data, st->msgs[j].len);
	msg_wr(st, j, (uintptr_t)buf, lmr, &wr);
	return roce_post_send(r->qp, &wr);
}

/*
 * (d) retry_cnt 7, on the retry_exceeded_peer_qp_error request (a SEND Only to a responder
 * that never answers) with retry_cnt 7 instead of the capture's 2. IBA: 7 retries, so the
 * 8th timeout fails it, 8 x 67.1 ms after the first send, and every resend is the captured
 * frame. rxe (and conf.retry7_infinite): retries for ever (INDEX.md's scratch run).
 */
static void
test_retry7(void)
{
	static struct stream st[MAX_STREAMS];
	static uint8_t buf[8192];
	const struct replay_case *rc;
	struct replay_case rc7;
	struct capture c;
	int inf;

	rc = load_one("errors/roce_err_retry_exceeded_peer_qp_error.pcap", &c, st);
	if (rc == NULL)
		return;
	rc7 = *rc;
	rc7.retry_cnt = 7;
	for (inf = 0; inf < 2; inf++) {
		struct replay *r = &the_replay;
		struct roce_mr *lmr;
		uint32_t k, sends = 0;

		retry7_infinite = inf;
		if (replay_init(r, &rc7, &c, &st[0], 0, SIDE_REQ, inf ? "retry 7, rxe's way" :
				"retry 7, IBA") != 0) {
			RT_CHECK(0, "QP setup");
			replay_fini(r);
			break;
		}
		lmr = roce_mr_reg(r->pd, buf, sizeof(buf), ROCE_ACCESS_LOCAL_WRITE, NULL);
		RT_CHECK(post_msg(r, &st[0], 0, lmr, buf) == 0, "post");
		pump(r);
		for (k = 0; k < 200 && r->now < 2 * SEC && r->nb_wc == 0; k++) {
			for (; out_peek(r) != NULL; out_pop(r), sends++)
				RT_CHECK(same_pkt(r, out_peek(r), &c.pkt[0], c.pkt[0].v.tp),
						"resend %u", sends);
			if (roce_engine_next_timer(r->eng) == UINT64_MAX)
				break;
			advance(r, roce_engine_next_timer(r->eng));
		}
		if (inf) {
			RT_CHECK(r->nb_wc == 0 && sends == 30, "rxe's way: %u sends in 2 s, %u WCs",
					sends, r->nb_wc);
		} else {
			RT_CHECK(sends == 8 && r->nb_wc == 1 &&
					r->wc[0].status == ROCE_WC_RETRY_EXC_ERR &&
					r->wc_t[0] == 8 * (4096ull << 14),
					"IBA: %u sends, %s at %.1f ms", sends, r->nb_wc ?
					roce_wc_status_str(r->wc[0].status) : "no WC",
					r->nb_wc ? r->wc_t[0] / 1e6 : 0.0);
		}
		printf("  retry_cnt 7, %s: %u sends, %s\n",
				inf ? "retry7_infinite (rxe)" : "IBA (default)", sends,
				r->nb_wc ? "RETRY_EXC_ERR" : "still retrying");
		roce_mr_dereg(lmr);
		replay_fini(r);
	}
	retry7_infinite = 0;
	msgs_free(&st[0]);
	cap_free(&c);
}

/*
 * An RNR NAK followed at once by a NAK PSN-sequence-error for the same PSN: rxe's responder
 * (and ours) sends this pair whenever pipelined SENDs meet an empty receive queue
 * (rnr_perftest frames 9 and 10). The sequence NAK asks for the go-back-N the RNR NAK has
 * already started, so it retries nothing and must not spend the retry budget: nine pairs in a
 * row, more than retry_cnt 7 allows, and both SENDs still complete once the receiver catches
 * up (frames 29 and 40 ACK them). rnr_retry 7 is infinite.
 */
static void
test_rnr_seq_pairs(void)
{
	static struct stream st[MAX_STREAMS];
	static struct stream two;
	static uint8_t buf[2][256];
	const struct cap_pkt *rnr, *seq, *ack1, *ack2;
	const struct replay_case *rc;
	struct replay *r = &the_replay;
	struct roce_mr *lmr;
	struct capture c;
	uint32_t k, j;

	rc = load_one("errors/roce_err_rnr_perftest_send_rx_depth1.pcap", &c, st);
	if (rc == NULL)
		return;
	rnr = frame_of(&c, 9);
	seq = frame_of(&c, 10);
	ack1 = frame_of(&c, 29);
	ack2 = frame_of(&c, 40);
	/* The requester as it is at frame 9: SENDs 3 and 4 (PSN 0x06cad7, d8) outstanding. */
	two = st[0];
	two.first_psn = st[0].msgs[2].psn;
	if (rnr == NULL || seq == NULL || ack1 == NULL || ack2 == NULL ||
			rnr->v.syndrome != 0x2c || seq->v.syndrome != 0x60 ||
			rnr->v.psn != two.first_psn || replay_init(r, rc, &c, &two, 0, SIDE_REQ,
				"RNR + seq NAK pairs") != 0) {
		RT_CHECK(0, "rnr_perftest frames 9, 10, 29, 40 or QP setup");
		replay_fini(r);
		goto out;
	}
	lmr = roce_mr_reg(r->pd, buf, sizeof(buf), ROCE_ACCESS_LOCAL_WRITE, NULL);
	for (j = 0; j < 2; j++)
		RT_CHECK(post_msg(r, &st[0], 2 + j, lmr, buf[j]) == 0, "post");
	pump(r);
	for (k = 0; k < 9 && r->nb_wc == 0; k++) {
		uint32_t before = r->sent;

		feed(r, rnr);
		feed(r, seq);
		advance(r, r->now + 640 * US + MS);  /* RNR timer 12: 0.64 ms */
		RT_CHECK(r->sent == before + 2 || r->nb_wc != 0, "pair %u: %u resent", k,
				r->sent - before);
		while (out_peek(r) != NULL)
			out_pop(r);
	}
	RT_CHECK(r->nb_wc == 0, "after %u RNR + seq NAK pairs: %s", k,
			r->nb_wc ? roce_wc_status_str(r->wc[0].status) : "-");
	feed(r, ack1);
	feed(r, ack2);
	RT_CHECK(r->nb_wc == 2 && r->wc[0].status == ROCE_WC_SUCCESS &&
			r->wc[1].status == ROCE_WC_SUCCESS, "%u WCs, first %s", r->nb_wc,
			r->nb_wc ? roce_wc_status_str(r->wc[0].status) : "-");
	roce_mr_dereg(lmr);
	replay_fini(r);
out:
	msgs_free(&st[0]);
	cap_free(&c);
}

/* Every capture in the two directories has an entry: a new one must not go unnoticed. */
static void
test_table_complete(void)
{
	static const char *const dirs[] = { "", "errors/" };
	unsigned int d, i, nfiles = 0;

	for (d = 0; d < RTE_DIM(dirs); d++) {
		char path[4096];
		struct dirent *e;
		DIR *dir;

		snprintf(path, sizeof(path), "%s/%s", rt_captures_dir(), dirs[d]);
		dir = opendir(path);
		RT_CHECK(dir != NULL, "cannot list %s", path);
		if (dir == NULL)
			continue;
		while ((e = readdir(dir)) != NULL) {
			size_t n = strlen(e->d_name);
			char rel[512];

			if (n < 5 || strcmp(e->d_name + n - 5, ".pcap") != 0)
				continue;
			snprintf(rel, sizeof(rel), "%s%s", dirs[d], e->d_name);
			for (i = 0; i < RTE_DIM(cases); i++)
				if (strcmp(cases[i].file, rel) == 0)
					break;
			RT_CHECK(i < RTE_DIM(cases), "%s has no entry in the replay table", rel);
			nfiles++;
		}
		closedir(dir);
	}
	RT_CHECK(nfiles == RTE_DIM(cases), "%u captures, %zu table entries", nfiles,
			RTE_DIM(cases));
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	/* Failures go to stderr: keep the progress lines in step with them. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	mp = rt_pool(8192, 4608);
	RT_RUN(test_table_complete);
	RT_RUN(test_replay_all);
	RT_RUN(test_retry7);
	RT_RUN(test_rnr_seq_pairs);
	return rt_report("test_transport_replay");
}
