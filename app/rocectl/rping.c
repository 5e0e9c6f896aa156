/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocectl rping: rdma-core's rping (librdmacm/examples/rping.c) in both roles, its QP
 * connected through roced's connection manager (cm.listen/connect/accept,
 * doc/connection-manager.md) and its verbs requests to roced (verbs_ctl.h). The same
 * options, buffers, connection parameters, exchange, output lines and exit statuses as rping:
 *
 *   client: SEND its start buffer's {addr, rkey, size} (big endian) -> the server READs it
 *           and SENDs "go ahead" -> the client SENDs its rdma buffer's -> the server WRITEs
 *           the data there and SENDs "go ahead" -> the client compares (-V), prints (-v);
 *   after -C rounds the client disconnects (DREQ); the server sees the disconnect (DREP),
 *   and ends with status 0.
 *
 * rping's threads (CM events, completions) post a semaphore the main thread waits on, the
 * state saying what happened; here one loop polls cq.poll and cm.events and plays them in
 * the same way, one post at a time.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "rocectl.h"
#include "verbs_ctl.h"

#define WHO "rocectl rping"
/* rping's sizes: the ping data between RPING_MIN_BUFSIZE and RPING_BUFSIZE - 1; the
 * messages are struct rping_rdma_info. rping.c's minimum is sizeof(stringify(INT_MAX)) +
 * sizeof(RPING_MSG_FMT) without <limits.h>: "INT_MAX" (8) + 15 = 23, as stock rping says
 * ("valid range is 23 to 65536", checked by test_rxe_rping). */
#define RPING_MSG_FMT "rdma-ping-%d: "
#define RPING_BUFSIZE (64 * 1024)
#define RPING_MIN_BUFSIZE 23
#define RPING_DEFAULT_SIZE 64
#define RPING_DEFAULT_PORT 7174
#define RPING_SQ_DEPTH 16
#define RPING_RQ_DEPTH 2
#define RPING_INFO_LEN 16            /* __be64 buf, __be32 rkey, __be32 size */
#define RPING_BACKLOG 3              /* rdma_listen(cm_id, 3) */
/* rping's exit statuses: main()'s return, -1 for most failures, EINVAL for its usage. */
#define RPING_EXIT_FAIL 255
#define RPING_EXIT_USAGE EINVAL
/* How long the client waits for its disconnect's answer before it goes. */
#define RPING_DISC_WAIT_MS 2000
#define RPING_REQ_MS 10000

/* rping's enum test_state, with its numbers (they are printed). */
enum rp_state {
	IDLE = 1,
	CONNECT_REQUEST,
	ADDR_RESOLVED,
	ROUTE_RESOLVED,
	CONNECTED,
	RDMA_READ_ADV,
	RDMA_READ_COMPLETE,
	RDMA_WRITE_ADV,
	RDMA_WRITE_COMPLETE,
	DISCONNECTED,
	ERROR
};

enum { WR_RECV = 1, WR_SEND, WR_RDMA };

struct rping {
	struct rc_verbs v;
	/* options */
	int server;                  /* -1 until -s or -c */
	const char *addr;            /* -a */
	const char *src;             /* -I */
	int port;
	int count;
	int size;
	int verbose, validate, debug, self_qp;
	/* the run */
	unsigned int ib_port;        /* roced's port the QP is on */
	struct rc_verbs_mr recv_mr, send_mr, rdma_mr, start_mr;
	uint32_t qpn;
	uint32_t conn;
	int listening;
	uint64_t since;              /* cm.events cursor */
	enum rp_state state;
	unsigned int sem;            /* posts not yet waited for */
	int cm_fatal;                /* an error event: rping's CM thread exit()s */
	uint32_t remote_rkey, remote_len;
	uint64_t remote_addr;
	char *start_buf, *rdma_buf;
	struct rc_verbs_wc wc[16];
	unsigned int nb_wc, next_wc;
};

static volatile sig_atomic_t rp_signal;

static void
rp_on_signal(int sig)
{
	rp_signal = sig;
}

#define DEBUG_LOG(r, ...) do { if ((r)->debug) printf(__VA_ARGS__); } while (0)

static void
usage(void)
{
	printf("rocectl rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]\n"
		"rocectl rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]\n"
		"\t-c\t\tclient side\n"
		"\t-I\t\tSource address to bind to for client.\n"
		"\t-s\t\tserver side.  To bind to any address with IPv6 use -a ::0\n"
		"\t-v\t\tdisplay ping data to stdout\n"
		"\t-V\t\tvalidate ping data\n"
		"\t-d\t\tdebug printfs\n"
		"\t-S size \tping data size\n"
		"\t-C count\tping count times\n"
		"\t-a addr\t\taddress\n"
		"\t-p port\t\tport\n"
		"\t-q\t\tuse self-created, self-modified QP (always so here: roced programs it)\n"
		"rdma-core's rping through roced: global options (-s SOCKET, --timeout) before\n"
		"\"rping\"; exit status 0, 22 (usage), 255 (failure), as rping's.\n");
}

void
rc_rping_usage(FILE *f)
{
	(void)f;
	usage();
}

/* ---- events: completions and the CM's, played as rping's handlers play them ---- */

static void
post_sem(struct rping *r)
{
	r->sem++;
}

static int
server_recv(struct rping *r, const struct rc_verbs_wc *wc)
{
	uint8_t info[RPING_INFO_LEN];
	uint32_t be32;
	uint64_t be64;
	int ret;

	if (wc->byte_len != RPING_INFO_LEN) {
		fprintf(stderr, "Received bogus data, size %u\n", wc->byte_len);
		return -1;
	}
	ret = rc_verbs_mr_read(&r->v, r->recv_mr.key, 0, info, sizeof(info));
	if (ret != 0)
		return ret;
	memcpy(&be64, info, 8);
	r->remote_addr = be64toh(be64);
	memcpy(&be32, info + 8, 4);
	r->remote_rkey = be32toh(be32);
	memcpy(&be32, info + 12, 4);
	r->remote_len = be32toh(be32);
	DEBUG_LOG(r, "Received rkey %x addr %" PRIx64 " len %d from peer\n", r->remote_rkey,
			r->remote_addr, (int)r->remote_len);
	if (r->state <= CONNECTED || r->state == RDMA_WRITE_COMPLETE)
		r->state = RDMA_READ_ADV;
	else
		r->state = RDMA_WRITE_ADV;
	return 0;
}

static int
client_recv(struct rping *r, const struct rc_verbs_wc *wc)
{
	if (wc->byte_len != RPING_INFO_LEN) {
		fprintf(stderr, "Received bogus data, size %u\n", wc->byte_len);
		return -1;
	}
	if (r->state == RDMA_READ_ADV)
		r->state = RDMA_WRITE_ADV;
	else
		r->state = RDMA_WRITE_COMPLETE;
	return 0;
}

/* rping_cq_event_handler() for one completion. */
static void
on_wc(struct rping *r, const struct rc_verbs_wc *wc)
{
	int ret;

	if (wc->status != 0) {
		if (wc->status == 5)     /* IBV_WC_WR_FLUSH_ERR */
			return;
		fprintf(stderr, "cq completion failed status %d\n", wc->status);
		goto error;
	}
	if (strcmp(wc->opcode, "send") == 0) {
		DEBUG_LOG(r, "send completion\n");
	} else if (strcmp(wc->opcode, "write") == 0) {
		DEBUG_LOG(r, "rdma write completion\n");
		r->state = RDMA_WRITE_COMPLETE;
		post_sem(r);
	} else if (strcmp(wc->opcode, "read") == 0) {
		DEBUG_LOG(r, "rdma read completion\n");
		r->state = RDMA_READ_COMPLETE;
		post_sem(r);
	} else if (strcmp(wc->opcode, "recv") == 0) {
		DEBUG_LOG(r, "recv completion\n");
		ret = r->server ? server_recv(r, wc) : client_recv(r, wc);
		if (ret != 0) {
			fprintf(stderr, "recv wc error: %d\n", ret);
			goto error;
		}
		ret = rc_verbs_post_recv(&r->v, r->qpn, WR_RECV, r->recv_mr.key, 0,
				RPING_INFO_LEN);
		if (ret != 0) {
			fprintf(stderr, "post recv error: %d\n", -ret);
			goto error;
		}
		post_sem(r);
	} else {
		DEBUG_LOG(r, "unknown!!!!! completion\n");
		goto error;
	}
	return;
error:
	r->state = ERROR;
	post_sem(r);
}

static const struct {
	const char *name;            /* cm.events' */
	const char *rdma_cm;         /* rdma_event_str()'s */
} ev_names[] = {
	{ "connect_request", "RDMA_CM_EVENT_CONNECT_REQUEST" },
	{ "established", "RDMA_CM_EVENT_ESTABLISHED" },
	{ "rejected", "RDMA_CM_EVENT_REJECTED" },
	{ "unreachable", "RDMA_CM_EVENT_UNREACHABLE" },
	{ "connect_error", "RDMA_CM_EVENT_CONNECT_ERROR" },
	{ "disconnected", "RDMA_CM_EVENT_DISCONNECTED" },
	{ "timewait_exit", "RDMA_CM_EVENT_TIMEWAIT_EXIT" },
};

static const char *
rdma_cm_name(const char *ev)
{
	unsigned int i;

	for (i = 0; i < sizeof(ev_names) / sizeof(ev_names[0]); i++)
		if (strcmp(ev_names[i].name, ev) == 0)
			return ev_names[i].rdma_cm;
	return ev;
}

/* rping_cma_event_handler() for one event of our connection. */
static void
on_cm_event(struct rping *r, const struct rc_verbs_cm_event *e)
{
	DEBUG_LOG(r, "cma_event type %s cma_id %u (%s)\n", rdma_cm_name(e->event), e->conn,
			"child");
	if (strcmp(e->event, "established") == 0) {
		DEBUG_LOG(r, "ESTABLISHED\n");
		/* The server wakes up when its first receive completes. */
		if (!r->server)
			r->state = CONNECTED;
		post_sem(r);
	} else if (strcmp(e->event, "rejected") == 0 || strcmp(e->event, "unreachable") == 0 ||
			strcmp(e->event, "connect_error") == 0) {
		/* rdma_cm's status: the REJ's reason; -ETIMEDOUT when the peer never answered */
		int status = strcmp(e->event, "rejected") == 0 ? e->reason :
			strcmp(e->event, "unreachable") == 0 ? -ETIMEDOUT : -1;

		fprintf(stderr, "cma event %s, error %d\n", rdma_cm_name(e->event), status);
		if (e->status[0] != '\0' && r->debug)
			printf("roced: %s\n", e->status);
		r->conn = 0;            /* the daemon has let it go */
		post_sem(r);
		r->cm_fatal = 1;
	} else if (strcmp(e->event, "disconnected") == 0) {
		fprintf(stderr, "%s DISCONNECT EVENT...\n", r->server ? "server" : "client");
		r->state = DISCONNECTED;
		post_sem(r);
	}
}

static void
nap(unsigned int *idle)
{
	struct timespec ts = { 0, 0 };

	/* back off from 20 us to 2 ms while nothing happens */
	ts.tv_nsec = (long)(*idle < 100 ? 20000 : 2000000);
	(*idle)++;
	nanosleep(&ts, NULL);
}

/*
 * sem_wait(): play events until one posts. @return 0; -EINTR on a signal, -ECANCELED when
 * an error event ended the connection (rping's CM thread exit()s then), or -errno when
 * roced cannot be asked.
 */
static int
rp_wait(struct rping *r)
{
	struct rc_verbs_cm_event ev[8];
	unsigned int idle = 0;
	int n, i, got;

	for (;;) {
		if (r->cm_fatal)
			return -ECANCELED;
		if (r->sem > 0) {
			r->sem--;
			return 0;
		}
		if (rp_signal != 0)
			return -EINTR;
		if (r->next_wc < r->nb_wc) {
			on_wc(r, &r->wc[r->next_wc++]);
			continue;
		}
		got = 0;
		if (r->conn != 0) {
			n = rc_verbs_cm_events(&r->v, &r->since, r->conn, ev,
					sizeof(ev) / sizeof(ev[0]));
			if (n < 0)
				return n;
			for (i = 0; i < n; i++)
				on_cm_event(r, &ev[i]);
			got += n;
		}
		if (r->qpn != 0 && r->sem == 0 && !r->cm_fatal) {
			n = rc_verbs_poll(&r->v, r->qpn, r->wc, sizeof(r->wc) / sizeof(r->wc[0]));
			if (n < 0)
				return n;
			r->nb_wc = (unsigned int)n;
			r->next_wc = 0;
			got += n;
		}
		if (got == 0)
			nap(&idle);
		else
			idle = 0;
	}
}

/* ---- setup ---- */

/* The port a peer at @ip is reached through: the one whose subnet holds it, else port 0. */
static int
pick_port(struct rping *r, const char *ip, int exact, unsigned int *port)
{
	struct in_addr want, have;
	unsigned int n, i, prefix;
	char pip[64];
	int ret;

	*port = 0;
	if (inet_pton(AF_INET, ip, &want) != 1)
		return exact ? -EADDRNOTAVAIL : 0;
	if ((ret = rc_verbs_nb_ports(&r->v, &n)) != 0)
		return ret;
	for (i = 0; i < n; i++) {
		uint32_t mask;

		if (rc_verbs_port_ip(&r->v, i, pip, sizeof(pip), &prefix) != 0 ||
				inet_pton(AF_INET, pip, &have) != 1)
			continue;
		mask = prefix == 0 ? 0 : htonl(~0u << (32 - (prefix > 32 ? 32 : prefix)));
		if (exact ? want.s_addr == have.s_addr :
				(want.s_addr & mask) == (have.s_addr & mask)) {
			*port = i;
			return 0;
		}
	}
	return exact ? -EADDRNOTAVAIL : 0;
}

/* rping_setup_buffers() and rping_create_qp(): its MRs with their rights, its QP. */
static int
setup(struct rping *r)
{
	const unsigned int rw = RC_VERBS_LOCAL_WRITE | RC_VERBS_REMOTE_READ |
		RC_VERBS_REMOTE_WRITE;
	int ret;

	r->rdma_buf = calloc(1, (size_t)r->size + 1);
	r->start_buf = calloc(1, (size_t)r->size + 1);
	if (r->rdma_buf == NULL || r->start_buf == NULL) {
		fprintf(stderr, "rdma_buf malloc failed\n");
		return -ENOMEM;
	}
	/* The QP takes what the CM gives a connection with responder resources: remote
	 * write, read and atomics (ib_cm's cm_init_qp_init_attr()). */
	ret = rc_verbs_qp_create(&r->v, r->ib_port, RPING_SQ_DEPTH, RPING_RQ_DEPTH,
			RC_VERBS_REMOTE_WRITE | RC_VERBS_REMOTE_READ | RC_VERBS_REMOTE_ATOMIC,
			&r->qpn);
	if (ret != 0) {
		fprintf(stderr, "setup_qp failed: %d\n", ret);
		return ret;
	}
	DEBUG_LOG(r, "created qp 0x%06x\n", r->qpn);
	if ((ret = rc_verbs_mr_reg(&r->v, RPING_INFO_LEN, RC_VERBS_LOCAL_WRITE,
				&r->recv_mr)) != 0 ||
			(ret = rc_verbs_mr_reg(&r->v, RPING_INFO_LEN, 0, &r->send_mr)) != 0 ||
			(ret = rc_verbs_mr_reg(&r->v, (uint64_t)r->size, rw, &r->rdma_mr)) != 0 ||
			(!r->server && (ret = rc_verbs_mr_reg(&r->v, (uint64_t)r->size, rw,
				&r->start_mr)) != 0)) {
		fprintf(stderr, "rping_setup_buffers failed: %d\n", ret);
		return ret;
	}
	DEBUG_LOG(r, "allocated & registered buffers...\n");
	ret = rc_verbs_post_recv(&r->v, r->qpn, WR_RECV, r->recv_mr.key, 0, RPING_INFO_LEN);
	if (ret != 0)
		fprintf(stderr, "ibv_post_recv failed: %d\n", -ret);
	return ret;
}

/* rping_format_send() and the SEND of the message. */
static int
send_info(struct rping *r, const struct rc_verbs_mr *mr)
{
	uint8_t info[RPING_INFO_LEN];
	uint64_t be64 = htobe64(mr->iova);
	uint32_t rkey = htobe32(mr->key), size = htobe32((uint32_t)r->size);
	int ret;

	memcpy(info, &be64, 8);
	memcpy(info + 8, &rkey, 4);
	memcpy(info + 12, &size, 4);
	DEBUG_LOG(r, "RDMA addr %" PRIx64 " rkey %x len %d\n", mr->iova, mr->key, r->size);
	ret = rc_verbs_mr_write(&r->v, r->send_mr.key, 0, info, sizeof(info));
	if (ret == 0)
		ret = rc_verbs_post(&r->v, "send", r->qpn, WR_SEND, r->send_mr.key, 0,
				RPING_INFO_LEN, 0, 0);
	if (ret != 0)
		fprintf(stderr, "post send error %d\n", -ret);
	return ret;
}

/* The server's "go ahead": its send buffer as it is (rping never fills it). */
static int
send_go(struct rping *r)
{
	int ret = rc_verbs_post(&r->v, "send", r->qpn, WR_SEND, r->send_mr.key, 0,
			RPING_INFO_LEN, 0, 0);

	if (ret != 0)
		fprintf(stderr, "post send error %d\n", -ret);
	return ret;
}

/* ---- the two roles ---- */

/* rping_test_server(). @return 0 when the client disconnected; < 0 on a signal, or the
 * error. */
static int
test_server(struct rping *r)
{
	int ret;

	for (;;) {
		/* Wait for the client's start STAG/TO/Len. */
		if ((ret = rp_wait(r)) < 0)
			return ret;
		if (r->state != RDMA_READ_ADV) {
			fprintf(stderr, "wait for RDMA_READ_ADV state %d\n", r->state);
			ret = -1;
			break;
		}
		DEBUG_LOG(r, "server received sink adv\n");
		ret = rc_verbs_post(&r->v, "read", r->qpn, WR_RDMA, r->rdma_mr.key, 0,
				r->remote_len, r->remote_addr, r->remote_rkey);
		if (ret != 0) {
			fprintf(stderr, "post send error %d\n", -ret);
			break;
		}
		DEBUG_LOG(r, "server posted rdma read req \n");
		if ((ret = rp_wait(r)) < 0)
			return ret;
		if (r->state != RDMA_READ_COMPLETE) {
			fprintf(stderr, "wait for RDMA_READ_COMPLETE state %d\n", r->state);
			ret = -1;
			break;
		}
		DEBUG_LOG(r, "server received read complete\n");
		/* The data is in our buffer: what it says up to its NUL is echoed back. */
		ret = rc_verbs_mr_read(&r->v, r->rdma_mr.key, 0, r->rdma_buf, (uint64_t)r->size);
		if (ret != 0)
			break;
		r->rdma_buf[r->size] = '\0';
		if (r->verbose) {
			printf("server ping data: %s\n", r->rdma_buf);
			fflush(stdout);
		}
		if ((ret = send_go(r)) != 0)
			break;
		DEBUG_LOG(r, "server posted go ahead\n");
		if ((ret = rp_wait(r)) < 0)
			return ret;
		if (r->state != RDMA_WRITE_ADV) {
			fprintf(stderr, "wait for RDMA_WRITE_ADV state %d\n", r->state);
			ret = -1;
			break;
		}
		DEBUG_LOG(r, "server received sink adv\n");
		DEBUG_LOG(r, "rdma write from lkey %x laddr %" PRIx64 " len %d\n", r->rdma_mr.key,
				r->rdma_mr.iova, (int)strlen(r->rdma_buf) + 1);
		/* strlen + 1, at most our buffer: rping trusts the peer's NUL */
		ret = rc_verbs_post(&r->v, "write", r->qpn, WR_RDMA, r->rdma_mr.key, 0,
				strlen(r->rdma_buf) + 1 < (size_t)r->size ? strlen(r->rdma_buf) + 1 :
				(size_t)r->size,
				r->remote_addr, r->remote_rkey);
		if (ret != 0) {
			fprintf(stderr, "post send error %d\n", -ret);
			break;
		}
		if ((ret = rp_wait(r)) < 0)
			return ret;
		if (r->state != RDMA_WRITE_COMPLETE) {
			fprintf(stderr, "wait for RDMA_WRITE_COMPLETE state %d\n", r->state);
			ret = -1;
			break;
		}
		DEBUG_LOG(r, "server rdma write complete \n");
		if ((ret = send_go(r)) != 0)
			break;
		DEBUG_LOG(r, "server posted go ahead\n");
	}
	return r->state == DISCONNECTED ? 0 : ret;
}

/* rping_test_client(). */
static int
test_client(struct rping *r)
{
	int ping, start = 65, cc, i, ret = 0;
	unsigned char c;

	for (ping = 0; r->count == 0 || ping < r->count; ping++) {
		r->state = RDMA_READ_ADV;
		/* Put some ascii text in the buffer. */
		cc = snprintf(r->start_buf, (size_t)r->size, RPING_MSG_FMT, ping);
		for (i = cc, c = (unsigned char)start; i < r->size; i++) {
			r->start_buf[i] = (char)c;
			c++;
			if (c > 122)
				c = 65;
		}
		start++;
		if (start > 122)
			start = 65;
		r->start_buf[r->size - 1] = 0;
		ret = rc_verbs_mr_write(&r->v, r->start_mr.key, 0, r->start_buf,
				(uint64_t)r->size);
		if (ret != 0)
			break;
		if ((ret = send_info(r, &r->start_mr)) != 0)
			break;
		/* Wait for the server to ACK. */
		if ((ret = rp_wait(r)) < 0)
			return ret;
		if (r->state != RDMA_WRITE_ADV) {
			fprintf(stderr, "wait for RDMA_WRITE_ADV state %d\n", r->state);
			ret = -1;
			break;
		}
		if ((ret = send_info(r, &r->rdma_mr)) != 0)
			break;
		/* Wait for the server to say the RDMA Write is complete. */
		if ((ret = rp_wait(r)) < 0)
			return ret;
		if (r->state != RDMA_WRITE_COMPLETE) {
			fprintf(stderr, "wait for RDMA_WRITE_COMPLETE state %d\n", r->state);
			ret = -1;
			break;
		}
		if (r->validate || r->verbose) {
			ret = rc_verbs_mr_read(&r->v, r->rdma_mr.key, 0, r->rdma_buf,
					(uint64_t)r->size);
			if (ret != 0)
				break;
			r->rdma_buf[r->size] = '\0';
		}
		if (r->validate && memcmp(r->start_buf, r->rdma_buf, (size_t)r->size) != 0) {
			fprintf(stderr, "data mismatch!\n");
			ret = -1;
			break;
		}
		if (r->verbose) {
			printf("ping data: %s\n", r->rdma_buf);
			fflush(stdout);
		}
	}
	return r->state == DISCONNECTED ? 0 : ret;
}

/* rping_disconnect(): a DREQ, or to the DREQ that came, nothing more (roced answered it). */
static void
disconnect(struct rping *r)
{
	bool q = r->v.quiet;

	if (r->conn == 0)
		return;
	r->v.quiet = true;
	rc_verbs_req(&r->v, "cm.disconnect", json_pack("{s:i}", "conn", r->conn), NULL);
	r->v.quiet = q;
}

/* The client's disconnect is answered: rping's CM thread prints it as it goes. */
static void
wait_disconnected(struct rping *r)
{
	struct rc_verbs_cm_event ev[8];
	unsigned int idle = 0;
	struct timespec t0, t;
	int n, i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (r->state != DISCONNECTED && rp_signal == 0) {
		n = rc_verbs_cm_events(&r->v, &r->since, r->conn, ev, 8);
		if (n < 0)
			return;
		for (i = 0; i < n; i++)
			if (strcmp(ev[i].event, "disconnected") == 0)
				on_cm_event(r, &ev[i]);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >
				RPING_DISC_WAIT_MS)
			return;
		if (n == 0)
			nap(&idle);
	}
}

/* cm.events' cursor at the newest event: what comes after is ours to see. */
static int
events_now(struct rping *r)
{
	struct rc_verbs_cm_event ev[64];
	int n;

	r->since = 0;
	while ((n = rc_verbs_cm_events(&r->v, &r->since, 0, ev, 64)) > 0)
		;
	return n;
}

/* The dataplane port of connection @conn (cm.show). */
static void
conn_port(struct rping *r, uint32_t conn, unsigned int *port)
{
	const json_t *c;
	json_t *rep;
	size_t k;

	if (rc_verbs_req(&r->v, "cm.show", json_object(), &rep) != 0)
		return;
	json_array_foreach(json_object_get(rep, "conns"), k, c)
		if (rc_verbs_u64(c, "conn") == conn)
			*port = (unsigned int)rc_verbs_u64(c, "port");
	json_decref(rep);
}

static int
run_server(struct rping *r)
{
	struct rc_verbs_cm_event ev[16];
	unsigned int idle = 0;
	json_t *a;
	int ret, n, i;

	if (r->addr != NULL && strcmp(r->addr, "0.0.0.0") != 0 && strcmp(r->addr, "::") != 0 &&
			strcmp(r->addr, "::0") != 0) {
		ret = pick_port(r, r->addr, 1, &r->ib_port);
		if (ret == -EADDRNOTAVAIL) {
			fprintf(stderr, "rdma_bind_addr: Cannot assign requested address\n");
			return -1;
		}
		if (ret != 0)
			return ret;
	}
	if ((ret = events_now(r)) != 0)
		return ret;
	r->v.quiet = true;
	ret = rc_verbs_req(&r->v, "cm.listen", json_pack("{s:i, s:s, s:i, s:b}", "port", r->port,
			"accept", "manual", "backlog", RPING_BACKLOG, "owned", 1), NULL);
	r->v.quiet = false;
	if (ret != 0) {
		fprintf(stderr, "rdma_bind_addr: %s\n", strerror(-ret));
		return -1;
	}
	r->listening = 1;
	DEBUG_LOG(r, "rdma_bind_addr successful\n");
	DEBUG_LOG(r, "rdma_listen\n");
	/* sem_wait() for the connect request: the first one for our port */
	while (r->conn == 0) {
		if (rp_signal != 0)
			return -EINTR;
		n = rc_verbs_cm_events(&r->v, &r->since, 0, ev, 16);
		if (n < 0)
			return n;
		for (i = 0; i < n; i++)
			if (strcmp(ev[i].event, "connect_request") == 0 &&
					ev[i].service_port == (uint32_t)r->port) {
				r->conn = ev[i].conn;
				r->state = CONNECT_REQUEST;
				DEBUG_LOG(r, "child cma %u\n", r->conn);
				/* requests after this one wait, as rping's do, for a sem it
				 * never posts again: refused here */
				break;
			}
		if (n == 0)
			nap(&idle);
	}
	/* the QP's port: the one the request came in on */
	conn_port(r, r->conn, &r->ib_port);
	if ((ret = setup(r)) != 0)
		return ret;
	DEBUG_LOG(r, "accepting client connection request\n");
	a = json_pack("{s:i, s:i}", "conn", r->conn, "qpn", r->qpn);
	/* rping -q accepts with its conn_param (1, 1); without, rdma_accept(NULL): the REQ's */
	if (r->self_qp) {
		json_object_set_new(a, "responder_resources", json_integer(1));
		json_object_set_new(a, "initiator_depth", json_integer(1));
	}
	ret = rc_verbs_req(&r->v, "cm.accept", a, NULL);
	if (ret != 0) {
		fprintf(stderr, "rdma_accept: %s\n", strerror(-ret));
		fprintf(stderr, "connect error %d\n", -1);
		return -1;
	}
	/* rping_accept(): wait for ESTABLISHED */
	if ((ret = rp_wait(r)) < 0)
		return ret;
	if (r->state == ERROR) {
		fprintf(stderr, "wait for CONNECTED state %d\n", r->state);
		fprintf(stderr, "connect error %d\n", -1);
		return -1;
	}
	ret = test_server(r);
	if (ret != 0 && ret != -EINTR && ret != -ECANCELED)
		fprintf(stderr, "rping server failed: %d\n", ret);
	return ret;
}

static int
run_client(struct rping *r)
{
	json_t *rep;
	int ret;

	if (r->src != NULL) {
		ret = pick_port(r, r->src, 1, &r->ib_port);
		if (ret == -EADDRNOTAVAIL) {
			fprintf(stderr, "rdma_resolve_addr: Cannot assign requested address\n");
			return -1;
		}
	} else {
		ret = pick_port(r, r->addr, 0, &r->ib_port);
	}
	if (ret != 0)
		return ret;
	r->state = ROUTE_RESOLVED;      /* rping_bind_client(): the address and route known */
	if ((ret = events_now(r)) != 0)
		return ret;
	if ((ret = setup(r)) != 0)
		return ret;
	/* rping_init_conn_param(): responder resources and initiator depth 1, retries 7 */
	r->v.quiet = true;
	ret = rc_verbs_req(&r->v, "cm.connect", json_pack("{s:i, s:s, s:i, s:i, s:i, s:i, s:i}",
			"qpn", r->qpn, "ip", r->addr, "port", r->port, "responder_resources", 1,
			"initiator_depth", 1, "retry_count", 7, "rnr_retry_count", 7), &rep);
	r->v.quiet = false;
	if (ret != 0) {
		fprintf(stderr, "rdma_connect: %s\n", strerror(-ret));
		fprintf(stderr, "connect error %d\n", ret);
		return -1;
	}
	r->conn = (uint32_t)rc_verbs_u64(json_object_get(rep, "conn"), "conn");
	json_decref(rep);
	ret = rp_wait(r);
	if (ret == -EINTR)
		return ret;
	/* an error event (its line printed) wakes rping's main thread too, as here */
	if (ret < 0 || r->state != CONNECTED) {
		fprintf(stderr, "wait for CONNECTED state %d\n", r->state);
		fprintf(stderr, "connect error %d\n", -1);
		return -1;
	}
	DEBUG_LOG(r, "rdma_connect successful\n");
	ret = test_client(r);
	if (ret != 0 && ret != -EINTR && ret != -ECANCELED)
		fprintf(stderr, "rping client failed: %d\n", ret);
	return ret;
}

/* ---- options ---- */

static int
parse(struct rping *r, int argc, char **argv)
{
	int op, ret = 0;

	r->server = -1;
	r->size = RPING_DEFAULT_SIZE;
	r->port = RPING_DEFAULT_PORT;
	r->state = IDLE;
	opterr = 0;
	optind = 1;
	/* rocectl's own: COMMAND --help is the command's usage, status 0 */
	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		usage();
		return -1;
	}
	while ((op = getopt(argc, argv, "a:I:Pp:C:S:scvVdqh")) != -1) {
		switch (op) {
		case 'a':
			r->addr = optarg;
			break;
		case 'I':
			r->src = optarg;
			break;
		case 'P':
			fprintf(stderr, "%s: -P (persistent server): not supported\n", WHO);
			return RPING_EXIT_USAGE;
		case 'p':
			r->port = atoi(optarg);
			if (r->port < 1 || r->port > 65535) {
				fprintf(stderr, "%s: -p %s: a port 1-65535\n", WHO, optarg);
				ret = EINVAL;
			}
			DEBUG_LOG(r, "port %d\n", r->port);
			break;
		case 's':
			r->server = 1;
			DEBUG_LOG(r, "server\n");
			break;
		case 'c':
			r->server = 0;
			DEBUG_LOG(r, "client\n");
			break;
		case 'S':
			r->size = atoi(optarg);
			if (r->size < RPING_MIN_BUFSIZE || r->size > RPING_BUFSIZE - 1) {
				fprintf(stderr, "Invalid size %d (valid range is %d to %d)\n",
						r->size, RPING_MIN_BUFSIZE, RPING_BUFSIZE);
				ret = EINVAL;
			} else {
				DEBUG_LOG(r, "size %d\n", atoi(optarg));
			}
			break;
		case 'C':
			r->count = atoi(optarg);
			if (r->count < 0) {
				fprintf(stderr, "Invalid count %d\n", r->count);
				ret = EINVAL;
			} else {
				DEBUG_LOG(r, "count %d\n", r->count);
			}
			break;
		case 'v':
			r->verbose++;
			DEBUG_LOG(r, "verbose\n");
			break;
		case 'V':
			r->validate++;
			DEBUG_LOG(r, "validate data\n");
			break;
		case 'd':
			r->debug++;
			break;
		case 'q':
			r->self_qp = 1;
			break;
		case 'h':
			usage();
			return -1;
		default:
			usage();
			return RPING_EXIT_USAGE;
		}
	}
	if (ret != 0)
		return ret;
	if (optind < argc || r->server == -1 || (r->server == 0 && r->addr == NULL)) {
		usage();
		return RPING_EXIT_USAGE;
	}
	return 0;
}

/* ---- the command ---- */

/* What roced holds for us goes: the connection (DREQ or REJ), the listener; the QP and MRs
 * are in the control connection's PD and go with it. */
static void
teardown(struct rping *r)
{
	if (r->v.ctl == NULL)
		return;
	disconnect(r);
	if (r->listening) {
		r->v.quiet = true;
		rc_verbs_req(&r->v, "cm.unlisten", json_pack("{s:i}", "port", r->port), NULL);
		r->listening = 0;
	}
	rc_verbs_close(&r->v);
}

int
rc_rping(const struct rc_opts *opts, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = rp_on_signal }, old_int, old_term, old_hup;
	struct rping r;
	int ret;

	memset(&r, 0, sizeof(r));
	ret = parse(&r, argc, argv);
	if (ret != 0)
		return ret < 0 ? 0 : ret;
	if (rc_verbs_open(&r.v, opts->socket, opts->timeout_ms < 0 ||
				opts->timeout_ms > RPING_REQ_MS ? opts->timeout_ms : RPING_REQ_MS,
				WHO) != 0)
		return RPING_EXIT_FAIL;
	rp_signal = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	ret = r.server ? run_server(&r) : run_client(&r);
	if (ret == 0 && !r.server) {
		/* rping_disconnect(): the client's DREQ; its answer ends the CM thread's life */
		disconnect(&r);
		wait_disconnected(&r);
	}
	teardown(&r);
	free(r.rdma_buf);
	free(r.start_buf);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	if (rp_signal != 0) {
		/* as rping, killed by it: roced's side undone first (the DREQ rping's kernel
		 * sends when its process goes) */
		fflush(stdout);
		signal(rp_signal, SIG_DFL);
		raise(rp_signal);
		return 128 + rp_signal;
	}
	if (ret == 0)
		return 0;
	return ret > 0 ? ret & 0xFF : RPING_EXIT_FAIL;
}
