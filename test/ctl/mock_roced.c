/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stand-in for roced's control plane: lib/ctl with handlers for the whole command set of
 * doc/control-protocol.md over fake state (MRs are real memory; QPs, ports and counters are
 * made up; posted WRs complete at once with success). It lets rocectl be tested without DPDK
 * and shows what handlers written with the argument helpers look like.
 *
 * Usage: mock_roced -s SOCKET [--max-clients N] [--max-line N]
 * Prints "ready" on stdout once listening; exits 0 after "shutdown", SIGTERM or SIGINT.
 * Extra command for tests: mock.sleep {ms} blocks the server for ms milliseconds.
 * Receives never complete, so the receive queue fills up (ENOMEM, partial posts).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "roce_ctl.h"

#define MAX_MRS 64
#define MAX_QPS 64
#define MAX_WC 1024
#define MR_MEM_LIMIT (64u << 20)
#define MAX_DUMP 4096

static const char *const access_names[] = {
	"local_write", "remote_write", "remote_read", "remote_atomic",
};
#define NB_ACCESS 4
#define ALL_ACCESS 0xf

struct mock_mr {
	bool used;
	uint32_t id;
	uint32_t key;
	uint64_t iova;
	uint64_t length;
	uint64_t access;
	uint8_t *mem;
};

struct mock_wc {
	uint64_t wr_id;
	const char *opcode;
	uint32_t byte_len;
	bool with_imm;
	uint32_t imm;
};

struct mock_qp {
	bool used;
	uint32_t qpn;
	uint32_t psn;
	const char *state;
	uint32_t port, worker, sq_depth, rq_depth, max_inline, mtu;
	bool connected;
	bool job;
	uint32_t remote_qpn, remote_psn;
	char remote_ip[64];
	char remote_mac[18];
	uint32_t recvs;           /* outstanding receives */
	uint64_t posted, completed;
	struct mock_wc wc[MAX_WC];
	unsigned int wc_head, wc_count;
};

static struct mock {
	struct roce_ctl_server *srv;
	struct mock_mr mr[MAX_MRS];
	struct mock_qp qp[MAX_QPS];
	uint64_t mem_used;
	uint32_t next_mr_id;
	time_t started;
	volatile sig_atomic_t stop;
} m;

static struct mock_mr *
mr_find(uint32_t key)
{
	unsigned int i;

	for (i = 0; i < MAX_MRS; i++)
		if (m.mr[i].used && m.mr[i].key == key)
			return &m.mr[i];
	return NULL;
}

static struct mock_qp *
qp_find(uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < MAX_QPS; i++)
		if (m.qp[i].used && m.qp[i].qpn == qpn)
			return &m.qp[i];
	return NULL;
}

/* Read "rkey" and find the MR, or fail the request. */
static int
arg_mr(json_t *req, json_t *reply, const char *name, struct mock_mr **mr)
{
	uint32_t key;
	int rc = roce_ctl_arg_u32(req, reply, name, &key, true, 0, UINT32_MAX);

	if (rc < 0)
		return rc;
	*mr = mr_find(key);
	return *mr != NULL ? 0 : roce_ctl_error(reply, -ENOENT, "no MR with key 0x%x", key);
}

static int
arg_qp(json_t *req, json_t *reply, struct mock_qp **qp)
{
	uint32_t qpn;
	int rc = roce_ctl_arg_u32(req, reply, "qpn", &qpn, true, 0, 0xffffff);

	if (rc < 0)
		return rc;
	*qp = qp_find(qpn);
	return *qp != NULL ? 0 : roce_ctl_error(reply, -ENOENT, "no QP 0x%x", qpn);
}

/* offset and length within an MR; length defaults to the rest, at most @def_len. */
static int
arg_range(json_t *req, json_t *reply, const struct mock_mr *mr, uint64_t def_len,
		uint64_t max_len, uint64_t *off, uint64_t *len)
{
	int rc;

	*off = 0;
	rc = roce_ctl_arg_u64(req, reply, "offset", off, false, 0, mr->length);
	if (rc < 0)
		return rc;
	*len = mr->length - *off < def_len ? mr->length - *off : def_len;
	rc = roce_ctl_arg_u64(req, reply, "length", len, false, 0, max_len);
	if (rc < 0)
		return rc;
	if (*len > mr->length - *off)
		return roce_ctl_error(reply, -EINVAL, "range %" PRIu64 "+%" PRIu64
				" is outside the MR (%" PRIu64 " bytes)", *off, *len, mr->length);
	return 0;
}

static json_t *
mr_json(const struct mock_mr *mr)
{
	return json_pack("{s:i,s:I,s:I,s:o,s:I,s:o}", "id", (int)mr->id,
			"lkey", (json_int_t)mr->key, "rkey", (json_int_t)mr->key,
			"iova", roce_ctl_u64(mr->iova), "length", (json_int_t)mr->length,
			"access", roce_ctl_flags(access_names, NB_ACCESS, mr->access));
}

static json_t *
qp_json(const struct mock_qp *qp)
{
	json_t *j = json_pack("{s:I,s:I,s:i,s:i,s:s,s:s,s:b}", "qpn", (json_int_t)qp->qpn,
			"psn", (json_int_t)qp->psn, "port", (int)qp->port,
			"worker", (int)qp->worker,
			"ip", "192.0.2.1", "mac", "02:00:00:00:00:01", "connected", qp->connected);

	if (qp->connected)
		json_object_set_new(j, "remote", json_pack("{s:I,s:I,s:s,s:s}",
				"qpn", (json_int_t)qp->remote_qpn,
				"psn", (json_int_t)qp->remote_psn,
				"ip", qp->remote_ip, "mac", qp->remote_mac));
	return j;
}

static int
cmd_status(void *arg, json_t *req, json_t *reply)
{
	unsigned int i, mrs = 0, qps = 0;

	(void)arg;
	(void)req;
	for (i = 0; i < MAX_MRS; i++)
		mrs += m.mr[i].used;
	for (i = 0; i < MAX_QPS; i++)
		qps += m.qp[i].used;
	json_object_set_new(reply, "version", json_string("0.1.0-mock"));
	json_object_set_new(reply, "workers", json_integer(2));
	json_object_set_new(reply, "ports", json_integer(1));
	json_object_set_new(reply, "qps", json_integer(qps));
	json_object_set_new(reply, "mrs", json_integer(mrs));
	json_object_set_new(reply, "classifier", json_string("scalar"));
	return 0;
}

static int
cmd_port_show(void *arg, json_t *req, json_t *reply)
{
	uint32_t port = 0;
	int rc = roce_ctl_arg_u32(req, reply, "port", &port, false, 0, UINT32_MAX);

	(void)arg;
	if (rc < 0)
		return rc;
	if (port != 0)
		return roce_ctl_error(reply, -ENOENT, "no port %u", port);
	json_object_set_new(reply, "ports", json_pack("[{s:i,s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:b,"
			"s:b,s:i}]", "port", 0, "device", "net_mock0", "driver", "mock",
			"mac", "02:00:00:00:00:01", "ip", "192.0.2.1", "prefix", 24, "mtu", 4200,
			"queues", 2, "tested", 1, "link_up", 1, "speed_mbps", 100000));
	return 0;
}

static int
cmd_mr_reg(void *arg, json_t *req, json_t *reply)
{
	uint64_t size, access = ALL_ACCESS;
	int socket = -1, rc;
	struct mock_mr *mr = NULL;
	unsigned int i;

	(void)arg;
	if ((rc = roce_ctl_arg_u64(req, reply, "size", &size, true, 1, UINT64_C(1) << 32)) < 0 ||
			(rc = roce_ctl_arg_flags(req, reply, "access", access_names, NB_ACCESS,
			&access, false)) < 0 ||
			(rc = roce_ctl_arg_int(req, reply, "socket", &socket, false, -1, 7)) < 0)
		return rc;
	for (i = 0; i < MAX_MRS && mr == NULL; i++)
		if (!m.mr[i].used)
			mr = &m.mr[i];
	if (mr == NULL)
		return roce_ctl_error(reply, -ENOSPC, "%d MRs registered already", MAX_MRS);
	if (size > MR_MEM_LIMIT - m.mem_used)
		return roce_ctl_error(reply, -ENOMEM, "cannot allocate %" PRIu64 " bytes", size);
	mr->mem = calloc(1, size);
	if (mr->mem == NULL)
		return -ENOMEM;
	m.mem_used += size;
	mr->used = true;
	mr->id = ++m.next_mr_id;
	mr->key = mr->id << 8 | 0x5a;
	mr->iova = UINT64_C(0x100000000) * mr->id;
	mr->length = size;
	mr->access = access;
	json_object_set_new(reply, "mr", mr_json(mr));
	return 0;
}

static int
cmd_mr_dereg(void *arg, json_t *req, json_t *reply)
{
	struct mock_mr *mr;
	int rc = arg_mr(req, reply, "rkey", &mr);

	(void)arg;
	if (rc < 0)
		return rc;
	m.mem_used -= mr->length;
	free(mr->mem);
	memset(mr, 0, sizeof(*mr));
	return 0;
}

static int
cmd_mr_show(void *arg, json_t *req, json_t *reply)
{
	json_t *list = json_array();
	uint32_t key = 0;
	unsigned int i;
	int rc = roce_ctl_arg_u32(req, reply, "rkey", &key, false, 0, UINT32_MAX);

	(void)arg;
	if (rc == 1 && mr_find(key) == NULL)
		rc = roce_ctl_error(reply, -ENOENT, "no MR with key 0x%x", key);
	if (rc < 0) {
		json_decref(list);
		return rc;
	}
	for (i = 0; i < MAX_MRS; i++)
		if (m.mr[i].used && (rc == 0 || m.mr[i].key == key))
			json_array_append_new(list, mr_json(&m.mr[i]));
	json_object_set_new(reply, "mrs", list);
	return 0;
}

/* Patterns of mr.fill, as doc/control-protocol.md defines them. */
static int
fill(uint8_t *p, uint64_t off, uint64_t len, const char *pattern)
{
	uint64_t i, x;
	unsigned long v;
	char *end;

	if (strcmp(pattern, "zero") == 0) {
		memset(p + off, 0, len);
	} else if (strcmp(pattern, "inc") == 0) {
		for (i = 0; i < len; i++)
			p[off + i] = (uint8_t)(off + i);
	} else if (strncmp(pattern, "byte:", 5) == 0) {
		v = strtoul(pattern + 5, &end, 0);
		if (pattern[5] == '\0' || *end != '\0' || v > 0xff)
			return -EINVAL;
		memset(p + off, (int)v, len);
	} else if (strncmp(pattern, "random:", 7) == 0) {
		v = strtoul(pattern + 7, &end, 0);
		if (pattern[7] == '\0' || *end != '\0')
			return -EINVAL;
		/* xorshift64, one byte per step, from the first byte of the range. */
		x = v * UINT64_C(0x9e3779b97f4a7c15) + 1;
		for (i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			p[off + i] = (uint8_t)x;
		}
	} else {
		return -EINVAL;
	}
	return 0;
}

static int
cmd_mr_fill(void *arg, json_t *req, json_t *reply)
{
	const char *pattern = "inc";
	struct mock_mr *mr;
	uint64_t off, len;
	int rc;

	(void)arg;
	if ((rc = arg_mr(req, reply, "rkey", &mr)) < 0 ||
			(rc = roce_ctl_arg_str(req, reply, "pattern", &pattern, false, 64)) < 0 ||
			(rc = arg_range(req, reply, mr, UINT64_MAX, UINT64_MAX, &off, &len)) < 0)
		return rc;
	if (fill(mr->mem, off, len, pattern) < 0)
		return roce_ctl_error(reply, -EINVAL, "pattern must be inc, zero, byte:0xNN or "
				"random:SEED");
	json_object_set_new(reply, "length", json_integer((json_int_t)len));
	return 0;
}

static int
cmd_mr_dump(void *arg, json_t *req, json_t *reply)
{
	static char hex[2 * MAX_DUMP + 1];
	struct mock_mr *mr;
	uint64_t off, len, i;
	int rc;

	(void)arg;
	if ((rc = arg_mr(req, reply, "rkey", &mr)) < 0 ||
			(rc = arg_range(req, reply, mr, MAX_DUMP, MAX_DUMP, &off, &len)) < 0)
		return rc;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", mr->mem[off + i]);
	hex[2 * len] = '\0';
	json_object_set_new(reply, "offset", json_integer((json_int_t)off));
	json_object_set_new(reply, "hex", json_string(hex));
	return 0;
}

/* CRC-32 (IEEE 802.3, reflected), as zlib's crc32(). */
static uint32_t
crc32_ieee(const uint8_t *p, uint64_t len)
{
	uint32_t crc = 0xffffffff;
	uint64_t i;
	int k;

	for (i = 0; i < len; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = crc >> 1 ^ (0xedb88320 & -(crc & 1));
	}
	return ~crc;
}

static int
cmd_mr_digest(void *arg, json_t *req, json_t *reply)
{
	struct mock_mr *mr;
	uint64_t off, len;
	int rc;

	(void)arg;
	if ((rc = arg_mr(req, reply, "rkey", &mr)) < 0 ||
			(rc = arg_range(req, reply, mr, UINT64_MAX, UINT64_MAX, &off, &len)) < 0)
		return rc;
	json_object_set_new(reply, "crc32", json_sprintf("0x%08x",
			crc32_ieee(mr->mem + off, len)));
	json_object_set_new(reply, "length", json_integer((json_int_t)len));
	return 0;
}

static int
cmd_qp_create(void *arg, json_t *req, json_t *reply)
{
	uint32_t port = 0, worker = 0, sq = 128, rq = 128, inl = 64;
	struct mock_qp *qp = NULL;
	unsigned int i;
	int rc;

	(void)arg;
	if ((rc = roce_ctl_arg_u32(req, reply, "port", &port, false, 0, 0)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "worker", &worker, false, 0, 1)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "sq_depth", &sq, false, 1, 4096)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "rq_depth", &rq, false, 1, 4096)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "max_inline", &inl, false, 0, 256)) < 0)
		return rc;
	for (i = 0; i < MAX_QPS && qp == NULL; i++)
		if (!m.qp[i].used)
			qp = &m.qp[i];
	if (qp == NULL)
		return roce_ctl_error(reply, -ENOSPC, "%d QPs exist already", MAX_QPS);
	memset(qp, 0, sizeof(*qp));
	qp->used = true;
	qp->qpn = 0x100 + (uint32_t)(qp - m.qp);
	qp->psn = (qp->qpn * 0x9e37u) & 0xffffff;
	qp->state = "INIT";
	qp->port = port;
	qp->worker = worker;
	qp->sq_depth = sq;
	qp->rq_depth = rq;
	qp->max_inline = inl;
	json_object_set_new(reply, "qp", qp_json(qp));
	return 0;
}

static int
cmd_qp_connect(void *arg, json_t *req, json_t *reply)
{
	uint32_t rqpn, rpsn, mtu = 1024, u = 0;
	uint64_t access = 0xe;
	uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 0x02 }, addr[16];   /* "ARP" answers this */
	struct mock_qp *qp;
	int family, rc;

	(void)arg;
	if ((rc = arg_qp(req, reply, &qp)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "remote.qpn", &rqpn, true, 2,
			0xffffff)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "remote.psn", &rpsn, true, 0,
			0xffffff)) < 0 ||
			(rc = roce_ctl_arg_ip(req, reply, "remote.ip", &family, addr, true)) < 0 ||
			(rc = roce_ctl_arg_mac(req, reply, "remote.mac", mac, false)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "mtu", &mtu, false, 256, 4096)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "timeout", &u, false, 0, 31)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "retry_cnt", &u, false, 0, 7)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "rnr_retry", &u, false, 0, 7)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "min_rnr_timer", &u, false, 0,
			31)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "max_rd_atomic", &u, false, 0,
			128)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "max_dest_rd_atomic", &u, false, 0,
			128)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "dscp", &u, false, 0, 63)) < 0 ||
			(rc = roce_ctl_arg_flags(req, reply, "access", access_names, NB_ACCESS,
			&access, false)) < 0)
		return rc;
	if (mtu & (mtu - 1))
		return roce_ctl_error(reply, -EINVAL, "mtu must be 256, 512, 1024, 2048 or 4096");
	if (family != AF_INET)
		return roce_ctl_error(reply, -ENOTSUP, "remote.ip: IPv4 only for now");
	if (qp->connected)
		return roce_ctl_error(reply, -EBUSY, "QP 0x%06x is connected already", qp->qpn);
	inet_ntop(AF_INET, addr, qp->remote_ip, sizeof(qp->remote_ip));
	snprintf(qp->remote_mac, sizeof(qp->remote_mac), "%02x:%02x:%02x:%02x:%02x:%02x",
			mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	qp->remote_qpn = rqpn;
	qp->remote_psn = rpsn;
	qp->mtu = mtu;
	qp->state = "RTS";
	qp->connected = true;
	json_object_set_new(reply, "qp", qp_json(qp));
	return 0;
}

static int
cmd_qp_show(void *arg, json_t *req, json_t *reply)
{
	json_t *list = json_array();
	uint32_t qpn = 0;
	unsigned int i;
	int rc = roce_ctl_arg_u32(req, reply, "qpn", &qpn, false, 0, 0xffffff);

	(void)arg;
	if (rc == 1 && qp_find(qpn) == NULL)
		rc = roce_ctl_error(reply, -ENOENT, "no QP 0x%06x", qpn);
	if (rc < 0) {
		json_decref(list);
		return rc;
	}
	for (i = 0; i < MAX_QPS; i++) {
		const struct mock_qp *qp = &m.qp[i];
		json_t *j;

		if (!qp->used || (rc == 1 && qp->qpn != qpn))
			continue;
		j = qp_json(qp);
		json_object_set_new(j, "state", json_string(qp->state));
		json_object_set_new(j, "tx_pkts", json_integer((json_int_t)qp->posted));
		json_object_set_new(j, "rx_pkts", json_integer((json_int_t)qp->completed));
		json_object_set_new(j, "retransmits", json_integer(0));
		json_array_append_new(list, j);
	}
	json_object_set_new(reply, "qps", list);
	return 0;
}

static int
cmd_qp_destroy(void *arg, json_t *req, json_t *reply)
{
	struct mock_qp *qp;
	int rc = arg_qp(req, reply, &qp);

	(void)arg;
	if (rc < 0)
		return rc;
	qp->used = false;
	return 0;
}

/* What distinguishes the post.* commands. */
struct post_kind {
	const char *opcode;     /* of the completion */
	uint64_t def_len;       /* length when not given */
	bool remote;            /* remote_addr and rkey */
	bool atomic;            /* 8 bytes, compare/swap or add */
	bool recv;
};

static const struct post_kind post_write = { "write", 64, true, false, false };
static const struct post_kind post_read = { "read", 64, true, false, false };
static const struct post_kind post_send = { "send", 64, false, false, false };
static const struct post_kind post_cas = { "cas", 8, true, true, false };
static const struct post_kind post_faa = { "faa", 8, true, true, false };
static const struct post_kind post_recv = { "recv", 4096, false, false, true };

/* The local buffer, remote address and operands; none of them is kept by the mock. */
static int
post_args(json_t *req, json_t *reply, const struct post_kind *k, struct mock_qp *qp,
		uint64_t *len)
{
	uint64_t off = 0, u = 0;
	struct mock_mr *mr;
	bool b;
	int rc;

	*len = k->def_len;
	if ((rc = arg_mr(req, reply, "lkey", &mr)) < 0 ||
			(rc = roce_ctl_arg_u64(req, reply, "offset", &off, false, 0,
			mr->length)) < 0 ||
			(rc = roce_ctl_arg_u64(req, reply, "length", len, false, 0,
			UINT32_C(1) << 31)) < 0)
		return rc;
	if (*len > mr->length - off)
		return roce_ctl_error(reply, -EINVAL, "offset + length beyond the MR (%" PRIu64
				" bytes)", mr->length);
	if (k->atomic && *len != 8)
		return roce_ctl_error(reply, -EINVAL, "atomics are 8 bytes long");
	if (k->remote && ((rc = roce_ctl_arg_u64(req, reply, "remote_addr", &u, true, 0,
			UINT64_MAX)) < 0 || (rc = roce_ctl_arg_u64(req, reply, "rkey", &u, true, 0,
			UINT32_MAX)) < 0))
		return rc;
	if (k->atomic && (rc = roce_ctl_arg_u64(req, reply, k == &post_cas ? "compare" : "add",
			&u, true, 0, UINT64_MAX)) < 0)
		return rc;
	if (k == &post_cas && (rc = roce_ctl_arg_u64(req, reply, "swap", &u, true, 0,
			UINT64_MAX)) < 0)
		return rc;
	if ((rc = roce_ctl_arg_bool(req, reply, "inline", &b, false)) < 0)
		return rc;
	if (!k->recv && !qp->connected)
		return roce_ctl_error(reply, -EPERM, "QP 0x%06x is %s: sends need RTS", qp->qpn,
				qp->state);
	return 0;
}

/* Sends complete at once, with success; receives stay outstanding. */
static int
do_post(json_t *req, json_t *reply, const struct post_kind *k)
{
	uint64_t len, wr_id = 0, imm = 0, i;
	uint32_t count = 1;
	bool signaled = true, with_imm;
	struct mock_qp *qp;
	int rc;

	if ((rc = arg_qp(req, reply, &qp)) < 0 ||
			(rc = post_args(req, reply, k, qp, &len)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "count", &count, false, 1,
			k->recv ? qp->rq_depth : qp->sq_depth)) < 0 ||
			(rc = roce_ctl_arg_bool(req, reply, "signaled", &signaled, false)) < 0 ||
			(rc = roce_ctl_arg_u64(req, reply, "wr_id", &wr_id, false, 0,
			UINT64_MAX)) < 0)
		return rc;
	with_imm = roce_ctl_arg_u64(req, reply, "imm", &imm, false, 0, UINT32_MAX) == 1;
	if (k->recv) {
		if (qp->recvs == qp->rq_depth)
			return roce_ctl_error(reply, -ENOMEM, "post refused: %s", strerror(ENOMEM));
		if (count > qp->rq_depth - qp->recvs)
			count = qp->rq_depth - qp->recvs;
		qp->recvs += count;
	}
	for (i = 0; i < count && !k->recv; i++) {
		struct mock_wc *wc;

		qp->posted++;
		if (!signaled || qp->wc_count == MAX_WC)
			continue;
		wc = &qp->wc[(qp->wc_head + qp->wc_count++) % MAX_WC];
		wc->wr_id = wr_id + i;
		wc->opcode = k->opcode;
		wc->byte_len = (uint32_t)len;
		wc->with_imm = with_imm;
		wc->imm = (uint32_t)imm;
	}
	json_object_set_new(reply, "posted", json_integer(count));
	return 0;
}

#define POST_HANDLER(name) \
static int \
cmd_post_##name(void *arg, json_t *req, json_t *reply) \
{ \
	(void)arg; \
	return do_post(req, reply, &post_##name); \
}
POST_HANDLER(write)
POST_HANDLER(read)
POST_HANDLER(send)
POST_HANDLER(cas)
POST_HANDLER(faa)
POST_HANDLER(recv)

static int
cmd_cq_poll(void *arg, json_t *req, json_t *reply)
{
	json_t *list;
	struct mock_qp *qp;
	uint32_t max = 16;
	int rc;

	(void)arg;
	if ((rc = arg_qp(req, reply, &qp)) < 0 ||
			(rc = roce_ctl_arg_u32(req, reply, "max", &max, false, 1, 64)) < 0)
		return rc;
	list = json_array();
	while (max-- > 0 && qp->wc_count > 0) {
		struct mock_wc *wc = &qp->wc[qp->wc_head];
		json_t *j = json_pack("{s:o,s:i,s:s,s:s,s:i}", "wr_id", roce_ctl_u64(wc->wr_id),
				"status", 0, "status_str", "success", "opcode", wc->opcode,
				"byte_len", (int)wc->byte_len);

		if (wc->with_imm)
			json_object_set_new(j, "imm", json_integer(wc->imm));
		json_array_append_new(list, j);
		qp->wc_head = (qp->wc_head + 1) % MAX_WC;
		qp->wc_count--;
		qp->completed++;
	}
	json_object_set_new(reply, "wc", list);
	return 0;
}

static int
cmd_job_start(void *arg, json_t *req, json_t *reply)
{
	static const char *const ops[] = {
		"write", "write_imm", "send", "send_imm", "read", "cas", "faa",
	};
	unsigned int op = 0;
	uint64_t u = 0;
	struct mock_qp *qp;
	struct mock_mr *mr;
	int rc;

	(void)arg;
	if ((rc = arg_qp(req, reply, &qp)) < 0 ||
			(rc = roce_ctl_arg_enum(req, reply, "op", ops, 7, &op, false)) < 0 ||
			(rc = arg_mr(req, reply, "lkey", &mr)) < 0 ||
			(rc = roce_ctl_arg_u64(req, reply, "count", &u, false, 0,
			UINT64_MAX)) < 0 ||
			(rc = roce_ctl_arg_u64(req, reply, "remote_addr", &u, op != 2 && op != 3, 0,
			UINT64_MAX)) < 0)
		return rc;
	if (!qp->connected)
		return roce_ctl_error(reply, -EPERM, "QP 0x%06x is not connected", qp->qpn);
	qp->job = true;
	return 0;
}

static int
cmd_job_stop(void *arg, json_t *req, json_t *reply)
{
	struct mock_qp *qp;
	int rc = arg_qp(req, reply, &qp);

	(void)arg;
	if (rc < 0)
		return rc;
	if (!qp->job)
		return roce_ctl_error(reply, -ENOENT, "no job on QP 0x%06x", qp->qpn);
	qp->job = false;
	return 0;
}

static int
cmd_job_show(void *arg, json_t *req, json_t *reply)
{
	struct mock_qp *qp;
	int rc = arg_qp(req, reply, &qp);

	(void)arg;
	if (rc < 0)
		return rc;
	json_object_set_new(reply, "job", json_pack("{s:b,s:i,s:i,s:i,s:i,s:f,s:f,s:f,s:s}",
			"running", qp->job, "posted", 1000, "completed", 1000, "errors", 0,
			"bytes", 65536000, "seconds", 0.5, "gbps", 1.048576, "msg_rate", 2000.0,
			"first_error", "none"));
	return 0;
}

static int
cmd_stats(void *arg, json_t *req, json_t *reply)
{
	(void)arg;
	(void)req;
	json_object_set_new(reply, "stats", json_pack("{s:i,s:i,s:i,s:i,s:i}",
			"rx_pkts", 1000, "tx_pkts", 2000, "rx_bytes", 64000, "tx_bytes", 128000,
			"retransmits", 0));
	return 0;
}

static int
cmd_counters(void *arg, json_t *req, json_t *reply)
{
	static const char *const scopes[] = { "qpn", "worker", "port" };
	struct roce_ctl_stats st;
	const char *scope = NULL, *name;
	bool nonzero = false, describe = false;
	json_t *cnt, *desc, *val;
	unsigned int i;
	uint32_t v = 0;
	void *it;
	int rc;

	(void)arg;
	for (i = 0; i < 3; i++) {
		rc = roce_ctl_arg_u32(req, reply, scopes[i], &v, false, 0, 0xffffff);
		if (rc < 0)
			return rc;
		if (rc == 1 && scope != NULL)
			return roce_ctl_error(reply, -EINVAL,
					"give at most one of qpn, worker, port");
		if (rc == 1)
			scope = scopes[i];
	}
	if (scope == scopes[0] && qp_find(v) == NULL)
		return roce_ctl_error(reply, -ENOENT, "no QP 0x%06x", v);
	if (scope != NULL) {
		json_object_set_new(reply, "scope", json_string(scope == scopes[0] ? "qp" : scope));
		json_object_set_new(reply, scope, json_integer(v));
	}
	if ((rc = roce_ctl_arg_bool(req, reply, "nonzero", &nonzero, false)) < 0 ||
			(rc = roce_ctl_arg_bool(req, reply, "describe", &describe, false)) < 0)
		return rc;
	roce_ctl_server_stats(m.srv, &st);
	cnt = json_pack("{s:i,s:i,s:i,s:i,s:I}", "TX_PKTS", 10, "RX_PKTS", 10, "NAK_SEQ_TX", 0,
			"TIMEOUTS", 0, "CTL_REQUESTS", (json_int_t)st.requests);
	/* As roced's emitter: zeros left out, {name: description} beside. */
	desc = json_object();
	json_object_foreach_safe(cnt, it, name, val) {
		if (nonzero && json_integer_value(val) == 0)
			json_object_del(cnt, name);
		else
			json_object_set_new(desc, name, json_sprintf("what %s counts", name));
	}
	json_object_set_new(reply, "counters", cnt);
	if (describe)
		json_object_set_new(reply, "descriptions", desc);
	else
		json_decref(desc);
	return 0;
}

static int
cmd_shutdown(void *arg, json_t *req, json_t *reply)
{
	(void)arg;
	(void)req;
	(void)reply;
	m.stop = 1;
	return 0;
}

static int
cmd_sleep(void *arg, json_t *req, json_t *reply)
{
	uint32_t ms = 0;
	int rc = roce_ctl_arg_u32(req, reply, "ms", &ms, true, 0, 60000);
	struct timespec ts;

	(void)arg;
	if (rc < 0)
		return rc;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	nanosleep(&ts, NULL);
	return 0;
}

#define POST_ARGS "qpn lkey offset length count signaled wr_id"

/* The same table as roced's, argument lists included (doc/control-protocol.md). */
static const struct roce_ctl_cmd cmds[] = {
	{ "status", cmd_status, "daemon summary", "" },
	{ "port.show", cmd_port_show, "ports and their addresses", "port" },
	{ "mr.reg", cmd_mr_reg, "register memory", "size access socket pd" },
	{ "mr.dereg", cmd_mr_dereg, "deregister memory", "rkey" },
	{ "mr.show", cmd_mr_show, "list MRs", "rkey" },
	{ "mr.fill", cmd_mr_fill, "fill an MR range with a pattern", "rkey offset length pattern" },
	{ "mr.dump", cmd_mr_dump, "bytes of an MR range, in hex", "rkey offset length" },
	{ "mr.digest", cmd_mr_digest, "CRC-32 of an MR range", "rkey offset length" },
	{ "qp.create", cmd_qp_create, "create an RC QP",
		"worker port sq_depth rq_depth max_inline access pd" },
	{ "qp.connect", cmd_qp_connect, "connect a QP to its peer", "qpn remote mtu timeout "
		"retry_cnt rnr_retry min_rnr_timer max_rd_atomic max_dest_rd_atomic dscp access" },
	{ "qp.show", cmd_qp_show, "list QPs", "qpn" },
	{ "qp.destroy", cmd_qp_destroy, "destroy a QP", "qpn" },
	{ "post.write", cmd_post_write, "post RDMA WRITEs", POST_ARGS " remote_addr rkey imm" },
	{ "post.read", cmd_post_read, "post RDMA READs", POST_ARGS " remote_addr rkey" },
	{ "post.send", cmd_post_send, "post SENDs", POST_ARGS " imm inline" },
	{ "post.cas", cmd_post_cas, "post atomic compare-and-swaps",
		POST_ARGS " remote_addr rkey compare swap" },
	{ "post.faa", cmd_post_faa, "post atomic fetch-and-adds",
		POST_ARGS " remote_addr rkey add" },
	{ "post.recv", cmd_post_recv, "post receives", "qpn lkey offset length count wr_id" },
	{ "cq.poll", cmd_cq_poll, "completions of a QP", "qpn max" },
	{ "job.start", cmd_job_start, "keep a QP busy with one operation",
		"qpn op lkey offset length count duration_ms depth remote_addr rkey" },
	{ "job.stop", cmd_job_stop, "stop a job", "qpn" },
	{ "job.show", cmd_job_show, "a job's progress", "qpn" },
	{ "stats", cmd_stats, "traffic totals", "" },
	{ "counters", cmd_counters, "every counter, summed over workers",
		"qpn worker port nonzero describe" },
	{ "shutdown", cmd_shutdown, "stop the daemon", "" },
	{ "mock.sleep", cmd_sleep, "block the server (tests)", "ms" },
};

static void
on_signal(int sig)
{
	(void)sig;
	m.stop = 1;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "max-clients", required_argument, NULL, 'c' },
		{ "max-line", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	struct roce_ctl_conf conf = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	const char *path = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "s:", longopts, NULL)) != -1) {
		if (c == 's')
			path = optarg;
		else if (c == 'c')
			conf.max_clients = (unsigned int)atoi(optarg);
		else if (c == 'l')
			conf.max_line = (size_t)atol(optarg);
		else
			return 2;
	}
	if (path == NULL) {
		fprintf(stderr, "usage: mock_roced -s SOCKET [--max-clients N] [--max-line N]\n");
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	m.started = time(NULL);
	m.srv = roce_ctl_server_create(path, cmds, sizeof(cmds) / sizeof(cmds[0]), NULL, &conf);
	if (m.srv == NULL) {
		fprintf(stderr, "mock_roced: %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (!m.stop)
		if (roce_ctl_server_poll(m.srv, 100) < 0)
			break;
	/* Let the "shutdown" reply reach its client before the socket goes. */
	roce_ctl_server_flush(m.srv, 1000);
	roce_ctl_server_destroy(m.srv);
	for (c = 0; c < MAX_MRS; c++)
		free(m.mr[c].mem);
	return 0;
}
