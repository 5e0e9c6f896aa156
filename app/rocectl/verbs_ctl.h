/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCECTL_VERBS_CTL_H
#define ROCECTL_VERBS_CTL_H

/*
 * Verbs over the control socket for rocectl's programs that play an RDMA application
 * (rocectl rping): one request with the daemon's error printed, MRs (their bytes written and
 * read in the daemon's 4096-byte pieces), RC QPs, posts, completions and the connection
 * manager's events, each a request to the local roced (doc/control-protocol.md). Objects go
 * in the control connection's own PD, so roced frees them when the program goes, however it
 * goes. perf's backend (perf_ctl.c) predates this file and speaks for itself.
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "roce_ctl.h"

/* Access rights (the order of mr.reg's and qp.create's names). */
#define RC_VERBS_LOCAL_WRITE (1u << 0)
#define RC_VERBS_REMOTE_WRITE (1u << 1)
#define RC_VERBS_REMOTE_READ (1u << 2)
#define RC_VERBS_REMOTE_ATOMIC (1u << 3)

/* The daemon's bytes at most in one mr.write or mr.dump (status.limits.mr_dump_max). */
#define RC_VERBS_CHUNK 4096

/* A program's connection to roced. */
struct rc_verbs {
	struct roce_ctl_client *ctl;
	const char *who;         /* prefix of the error lines: "rocectl rping" */
	int timeout_ms;          /* each request's */
	bool quiet;              /* do not print the daemon's refusals (the caller will) */
};

struct rc_verbs_mr {
	uint64_t iova;
	uint32_t key;            /* lkey and rkey alike */
	uint64_t length;
};

/* A completion as cq.poll gives it. */
struct rc_verbs_wc {
	uint64_t wr_id;
	int status;              /* enum ibv_wc_status's numbers */
	char opcode[16];         /* "send", "write", "read", "recv", ... */
	uint32_t byte_len;
};

/* A connection manager event as cm.events gives it. */
struct rc_verbs_cm_event {
	uint64_t seq;
	char event[24];          /* rdma_cm's name: "connect_request", "established", ... */
	uint32_t conn;
	uint32_t qpn;
	uint32_t remote_qpn;
	uint32_t service_port;
	int reason;              /* rejected: the REJ's reason; else 0 */
	char remote_ip[48];
	char status[64];         /* the daemon's words for a failure, or "" */
};

/* Connect to the daemon at @socket. @return 0, or -errno after printing why. */
int rc_verbs_open(struct rc_verbs *v, const char *socket, int timeout_ms, const char *who);
void rc_verbs_close(struct rc_verbs *v);

/*
 * One request; @args is consumed. *@reply (when not NULL) gets the reply on success, for the
 * caller to json_decref(). @return 0 or -errno, the daemon's refusal printed unless v->quiet.
 */
int rc_verbs_req(struct rc_verbs *v, const char *cmd, json_t *args, json_t **reply);

/* A member as an unsigned integer (a number, or a "0x..." string for large ones); 0 absent. */
uint64_t rc_verbs_u64(const json_t *o, const char *key);

/* The names of @access's RC_VERBS_* bits, as a new JSON array. */
json_t *rc_verbs_access(unsigned int access);

/* port.show of port @port: its IPv4 address (dotted) and prefix length. */
int rc_verbs_port_ip(struct rc_verbs *v, unsigned int port, char *ip, size_t iplen,
		unsigned int *prefix);
/* How many ports the daemon has (status). */
int rc_verbs_nb_ports(struct rc_verbs *v, unsigned int *n);

int rc_verbs_mr_reg(struct rc_verbs *v, uint64_t size, unsigned int access,
		struct rc_verbs_mr *mr);
/* Write @len bytes of @buf at @off of the MR, or read them into @buf (RC_VERBS_CHUNK each). */
int rc_verbs_mr_write(struct rc_verbs *v, uint32_t key, uint64_t off, const void *buf,
		uint64_t len);
int rc_verbs_mr_read(struct rc_verbs *v, uint32_t key, uint64_t off, void *buf, uint64_t len);

/* An RC QP in INIT on @port with the remote rights @access. */
int rc_verbs_qp_create(struct rc_verbs *v, unsigned int port, unsigned int sq_depth,
		unsigned int rq_depth, unsigned int access, uint32_t *qpn);

/* post.send, post.write or post.read (@op, "send" ...) of one signaled WR; @rkey and
 * @remote_addr for write and read. */
int rc_verbs_post(struct rc_verbs *v, const char *op, uint32_t qpn, uint64_t wr_id,
		uint32_t lkey, uint64_t off, uint64_t len, uint64_t remote_addr, uint32_t rkey);
int rc_verbs_post_recv(struct rc_verbs *v, uint32_t qpn, uint64_t wr_id, uint32_t lkey,
		uint64_t off, uint64_t len);
/* Up to @max completions of @qpn. @return how many, or -errno. */
int rc_verbs_poll(struct rc_verbs *v, uint32_t qpn, struct rc_verbs_wc *wc, unsigned int max);

/*
 * Connection events after *@since (of connection @conn only, when not 0), up to @max;
 * *@since moves past what was read. @return how many, or -errno.
 */
int rc_verbs_cm_events(struct rc_verbs *v, uint64_t *since, uint32_t conn,
		struct rc_verbs_cm_event *ev, unsigned int max);

#endif /* ROCECTL_VERBS_CTL_H */
