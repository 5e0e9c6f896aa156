/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control commands (doc/control-protocol.md). They run on the main lcore; anything touching a
 * QP runs on its worker through roce_dp_call().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_random.h>

#include "roced_cmd.h"

#define RPC_MS 5000
#define DUMP_MAX 4096

static const char *const access_names[] = {
	"local_write", "remote_write", "remote_read", "remote_atomic",
	[16] = "remote_invalidate",
};

/* Job operations: the send opcodes, "recv" for a job that keeps receives posted, and the two
 * sides of verified mixed traffic. */
#define OP_RECV 10
#define OP_MIXED 11
#define OP_MIXED_RECV 12

static const char *const op_names[] = {
	[ROCE_WR_RDMA_WRITE] = "write",
	[ROCE_WR_RDMA_WRITE_WITH_IMM] = "write_imm",
	[ROCE_WR_SEND] = "send",
	[ROCE_WR_SEND_WITH_IMM] = "send_imm",
	[ROCE_WR_RDMA_READ] = "read",
	[ROCE_WR_ATOMIC_CMP_AND_SWP] = "cas",
	[ROCE_WR_ATOMIC_FETCH_AND_ADD] = "faa",
	[OP_RECV] = "recv",
	[OP_MIXED] = "mixed",
	[OP_MIXED_RECV] = "mixed_recv",
};

static const char *const opcode_names[] = {
	[ROCE_WC_SEND] = "send", [ROCE_WC_RDMA_WRITE] = "write", [ROCE_WC_RDMA_READ] = "read",
	[ROCE_WC_COMP_SWAP] = "cas", [ROCE_WC_FETCH_ADD] = "faa",
};

static json_t *
ip_json(const uint8_t *ip, int v6)
{
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(v6 ? AF_INET6 : AF_INET, ip, buf, sizeof(buf));
	return json_string(buf);
}

static json_t *
mac_json(const struct rte_ether_addr *mac)
{
	char buf[RTE_ETHER_ADDR_FMT_SIZE];

	rte_ether_format_addr(buf, sizeof(buf), mac);
	return json_string(buf);
}

/* ---- MRs ---- */

static struct roced_mr *
mr_find(struct roced_state *st, uint32_t key)
{
	unsigned int i;

	for (i = 0; i < ROCED_MAX_MRS; i++)
		if (st->mrs[i].mr != NULL && roce_mr_rkey(st->mrs[i].mr) == key)
			return &st->mrs[i];
	return NULL;
}

static json_t *
mr_json(const struct roced_mr *m)
{
	json_t *o = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o}", "id", m->id,
			"lkey", roce_ctl_u64(roce_mr_lkey(m->mr)),
			"rkey", roce_ctl_u64(roce_mr_rkey(m->mr)),
			"iova", roce_ctl_u64(roce_mr_iova(m->mr)), "length", roce_ctl_u64(m->len),
			"access", roce_ctl_flags(access_names, RTE_DIM(access_names), m->access));

	if (m->owner != 0)
		json_object_set_new(o, "owner", roce_ctl_u64(m->owner));
	return o;
}

/* The owner of what a request creates: its client with "owned": true, else the daemon. */
static int
arg_owner(const struct roced_state *st, json_t *req, json_t *reply, uint64_t *owner)
{
	bool owned = false;
	int ret = roce_ctl_arg_bool(req, reply, "owned", &owned, false);

	*owner = owned ? roce_ctl_server_client(st->srv) : 0;
	return ret;
}

/* An MR argument and a range in it: "rkey" (or @key), "offset", "length". */
/* Without "length": the rest of the MR, at most @max_len. */
static int
arg_mr_range(struct roced_state *st, json_t *req, json_t *reply, const char *key,
		struct roced_mr **mrp, uint64_t *off, uint64_t *len, uint64_t max_len)
{
	uint32_t k;
	int ret;

	ret = roce_ctl_arg_u32(req, reply, key, &k, true, 0, UINT32_MAX);
	if (ret < 0)
		return ret;
	*mrp = mr_find(st, k);
	if (*mrp == NULL)
		return roce_ctl_error(reply, -ENOENT, "no MR with key 0x%x", k);
	*off = 0;
	ret = roce_ctl_arg_u64(req, reply, "offset", off, false, 0, (*mrp)->len);
	if (ret < 0)
		return ret;
	*len = RTE_MIN((*mrp)->len - *off, max_len);
	ret = roce_ctl_arg_u64(req, reply, "length", len, false, 0, max_len);
	if (ret < 0)
		return ret;
	if (*len > (*mrp)->len - *off)
		return roce_ctl_error(reply, -EINVAL, "offset + length beyond the MR (%lu bytes)",
				(unsigned long)(*mrp)->len);
	return 0;
}

static int
cmd_mr_reg(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	uint64_t size, access = 0xF, owner;
	struct roced_mr *m = NULL;
	int socket = SOCKET_ID_ANY;
	unsigned int i;
	int ret;

	if ((ret = arg_owner(st, req, reply, &owner)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "size", &size, true, 1, 1ull << 32)) < 0 ||
			(ret = roce_ctl_arg_int(req, reply, "socket", &socket, false, -1,
				RTE_MAX_NUMA_NODES - 1)) < 0 ||
			(ret = roce_ctl_arg_flags(req, reply, "access", access_names,
				RTE_DIM(access_names), &access, false)) < 0)
		return ret;
	for (i = 0; i < ROCED_MAX_MRS && m == NULL; i++)
		if (st->mrs[i].mr == NULL)
			m = &st->mrs[i];
	if (m == NULL)
		return roce_ctl_error(reply, -ENOSPC, "%u MRs registered already", ROCED_MAX_MRS);
	m->buf = rte_zmalloc_socket("roced_mr", size, 64, socket);
	if (m->buf == NULL)
		return roce_ctl_error(reply, -ENOMEM, "cannot allocate %lu bytes",
				(unsigned long)size);
	m->mr = roce_mr_reg(roce_dp_pd(st->dp), m->buf, size, (unsigned int)access, NULL);
	if (m->mr == NULL) {
		rte_free(m->buf);
		return roce_ctl_error(reply, -rte_errno,
				"registration refused (remote write/atomic need local_write)");
	}
	m->len = size;
	m->access = (uint32_t)access;
	m->id = ++st->next_mr_id;
	m->owner = owner;
	json_object_set_new(reply, "mr", mr_json(m));
	return 0;
}

static void
mr_free(struct roced_state *st, struct roced_mr *m)
{
	/* Workers read MRs without locks: they let go of it before it is freed. */
	roce_dp_mr_dereg(st->dp, m->mr);
	rte_free(m->buf);
	memset(m, 0, sizeof(*m));
}

static int
cmd_mr_dereg(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roced_mr *m;
	uint32_t key;
	int ret;

	ret = roce_ctl_arg_u32(req, reply, "rkey", &key, true, 0, UINT32_MAX);
	if (ret < 0)
		return ret;
	m = mr_find(st, key);
	if (m == NULL)
		return roce_ctl_error(reply, -ENOENT, "no MR with key 0x%x", key);
	mr_free(st, m);
	return 0;
}

static int
cmd_mr_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	json_t *list = json_array();
	uint32_t key = 0;
	unsigned int i;
	int ret;

	ret = roce_ctl_arg_u32(req, reply, "rkey", &key, false, 0, UINT32_MAX);
	if (ret < 0) {
		json_decref(list);
		return ret;
	}
	for (i = 0; i < ROCED_MAX_MRS; i++)
		if (st->mrs[i].mr != NULL && (ret == 0 || roce_mr_rkey(st->mrs[i].mr) == key))
			json_array_append_new(list, mr_json(&st->mrs[i]));
	json_object_set_new(reply, "mrs", list);
	return ret == 1 && json_array_size(list) == 0 ?
		roce_ctl_error(reply, -ENOENT, "no MR with key 0x%x", key) : 0;
}

/* Patterns: "inc" (byte i = i), "zero", "byte:0xNN", "random:SEED". */
static int
fill_pattern(uint8_t *p, uint64_t len, uint64_t off, const char *pat)
{
	unsigned long v;
	uint64_t i;
	char *end;

	if (strcmp(pat, "inc") == 0) {
		for (i = 0; i < len; i++)
			p[i] = (uint8_t)(off + i);
	} else if (strcmp(pat, "zero") == 0) {
		memset(p, 0, len);
	} else if (strncmp(pat, "byte:", 5) == 0) {
		v = strtoul(pat + 5, &end, 0);
		if (*end != '\0' || pat[5] == '\0' || v > 255)
			return -EINVAL;
		memset(p, (int)v, len);
	} else if (strncmp(pat, "random:", 7) == 0) {
		uint64_t x;

		v = strtoul(pat + 7, &end, 0);
		if (*end != '\0' || pat[7] == '\0')
			return -EINVAL;
		x = v * 0x9E3779B97F4A7C15ull + 1;
		for (i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			p[i] = (uint8_t)x;
		}
	} else {
		return -EINVAL;
	}
	return 0;
}

static int
cmd_mr_fill(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	const char *pat = "inc";
	struct roced_mr *m;
	uint64_t off, len;
	int ret;

	if ((ret = arg_mr_range(st, req, reply, "rkey", &m, &off, &len, UINT64_MAX)) < 0 ||
			(ret = roce_ctl_arg_str(req, reply, "pattern", &pat, false, 64)) < 0)
		return ret;
	if (fill_pattern(m->buf + off, len, off, pat) != 0)
		return roce_ctl_error(reply, -EINVAL,
				"pattern: '%s' is not inc, zero, byte:N or random:SEED", pat);
	json_object_set_new(reply, "length", roce_ctl_u64(len));
	return 0;
}

static int
cmd_mr_dump(void *arg, json_t *req, json_t *reply)
{
	static const char hex[] = "0123456789abcdef";
	struct roced_state *st = arg;
	char out[2 * DUMP_MAX + 1];
	struct roced_mr *m;
	uint64_t off, len, i;
	int ret;

	if (json_object_get(req, "length") == NULL)
		json_object_set_new(req, "length", roce_ctl_u64(256));
	ret = arg_mr_range(st, req, reply, "rkey", &m, &off, &len, DUMP_MAX);
	if (ret < 0)
		return ret;
	for (i = 0; i < len; i++) {
		out[2 * i] = hex[m->buf[off + i] >> 4];
		out[2 * i + 1] = hex[m->buf[off + i] & 15];
	}
	out[2 * len] = '\0';
	json_object_set_new(reply, "offset", roce_ctl_u64(off));
	json_object_set_new(reply, "hex", json_string(out));
	return 0;
}

static int
cmd_mr_digest(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roced_mr *m;
	uint64_t off, len;
	char buf[16];
	int ret;

	ret = arg_mr_range(st, req, reply, "rkey", &m, &off, &len, UINT64_MAX);
	if (ret < 0)
		return ret;
	snprintf(buf, sizeof(buf), "0x%08x", crc32_gzip_refl(0, m->buf + off, len));
	json_object_set_new(reply, "crc32", json_string(buf));
	json_object_set_new(reply, "length", roce_ctl_u64(len));
	return 0;
}

/* ---- QPs ---- */

static struct roced_qp *
qp_find(struct roced_state *st, uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < ROCED_MAX_QPS; i++)
		if (st->qps[i].qp != NULL && st->qps[i].qpn == qpn)
			return &st->qps[i];
	return NULL;
}

static int
arg_qp(struct roced_state *st, json_t *req, json_t *reply, struct roced_qp **qp)
{
	uint32_t qpn;
	int ret = roce_ctl_arg_u32(req, reply, "qpn", &qpn, true, 0, 0xFFFFFF);

	if (ret < 0)
		return ret;
	*qp = qp_find(st, qpn);
	return *qp == NULL ? roce_ctl_error(reply, -ENOENT, "no QP 0x%06x", qpn) : 0;
}

static json_t *
qp_json(struct roced_state *st, const struct roced_qp *q)
{
	const struct roce_port *port = roce_dp_port(st->dp, q->port);
	const struct roce_dp_addr *a = roce_dp_addr(st->dp, q->port);
	json_t *o = json_pack("{s:i, s:i, s:i, s:i, s:o, s:o, s:b}", "qpn", q->qpn,
			"psn", q->psn, "port", q->port, "worker", q->worker,
			"ip", ip_json(a->ip4, 0), "mac", mac_json(&port->mac),
			"connected", q->connected);

	if (q->owner != 0)
		json_object_set_new(o, "owner", roce_ctl_u64(q->owner));
	if (q->connected)
		json_object_set_new(o, "sr", json_boolean(q->sr));
	if (q->connected)
		json_object_set_new(o, "remote", json_pack("{s:i, s:i, s:o, s:o}",
				"qpn", q->remote_qpn, "psn", q->remote_psn,
				"ip", ip_json(q->remote_ip, q->remote_ipv6),
				"mac", mac_json(&q->remote_mac)));
	return o;
}

struct create_rpc {
	struct roce_pd *pd;
	struct roced_qp *q;
	uint32_t max_inline;
};

static int
create_on_worker(struct roce_worker *w, void *arg)
{
	struct create_rpc *c = arg;
	struct roce_qp_init_attr ia = {
		.max_send_wr = c->q->sq_depth,
		.max_recv_wr = c->q->rq_depth,
		.max_inline_data = c->max_inline,
	};
	struct roce_qp_attr a = {
		.qp_state = ROCE_QPS_INIT,
		.qp_access_flags = 0xE,
		.port_num = (uint8_t)(c->q->port + 1),   /* from 1, as in verbs */
	};

	c->q->cq = roce_cq_create(2 * (c->q->sq_depth + c->q->rq_depth),
			roce_worker_socket(w));
	if (c->q->cq == NULL)
		return -rte_errno;
	ia.send_cq = ia.recv_cq = c->q->cq;
	c->q->qp = roce_qp_create(roce_worker_engine(w), c->pd, &ia);
	if (c->q->qp == NULL) {
		roce_cq_destroy(c->q->cq);
		return -rte_errno;
	}
	c->q->qpn = roce_qp_num(c->q->qp);
	return roce_qp_modify(c->q->qp, &a, ROCE_QP_STATE | ROCE_QP_ACCESS_FLAGS | ROCE_QP_PORT);
}

static int
cmd_qp_create(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	uint32_t worker = st->next_worker % roce_dp_nb_workers(st->dp), port = 0;
	struct roced_qp *q = NULL;
	struct create_rpc c = { .pd = roce_dp_pd(st->dp), .max_inline = 64 };
	uint32_t sq = 128, rq = 128;
	uint64_t owner;
	unsigned int i;
	int ret;

	if ((ret = arg_owner(st, req, reply, &owner)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "worker", &worker, false, 0,
				roce_dp_nb_workers(st->dp) - 1)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "port", &port, false, 0,
				st->conf.nb_ports - 1)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "sq_depth", &sq, false, 1, 16384)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "rq_depth", &rq, false, 1, 16384)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "max_inline", &c.max_inline, false, 0,
				ROCE_MAX_INLINE)) < 0)
		return ret;
	for (i = 0; i < ROCED_MAX_QPS && q == NULL; i++)
		if (st->qps[i].qp == NULL)
			q = &st->qps[i];
	if (q == NULL)
		return roce_ctl_error(reply, -ENOSPC, "%u QPs exist already", ROCED_MAX_QPS);
	memset(q, 0, sizeof(*q));
	q->worker = (uint16_t)worker;
	q->port = (uint16_t)port;
	q->sq_depth = sq;
	q->rq_depth = rq;
	q->owner = owner;
	q->psn = (uint32_t)rte_rand() & ROCE_PSN_MASK;
	c.q = q;
	ret = roce_dp_call(st->dp, worker, create_on_worker, &c, RPC_MS);
	if (ret != 0) {
		memset(q, 0, sizeof(*q));
		return roce_ctl_error(reply, ret, "cannot create the QP: %s", strerror(-ret));
	}
	st->next_worker++;
	json_object_set_new(reply, "qp", qp_json(st, q));
	return 0;
}

struct connect_rpc {
	struct roced_qp *q;
	struct roce_qp_attr a;
};

static int
connect_on_worker(struct roce_worker *w, void *arg)
{
	struct connect_rpc *c = arg;
	int ret;

	RTE_SET_USED(w);
	c->a.qp_state = ROCE_QPS_RTR;
	ret = roce_qp_modify(c->q->qp, &c->a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU |
			ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC |
			ROCE_QP_MIN_RNR_TIMER | ROCE_QP_ACCESS_FLAGS | ROCE_QP_SR | ROCE_QP_SR_RTO |
			ROCE_QP_MAX_INFLIGHT);
	if (ret != 0)
		return ret;
	c->a.qp_state = ROCE_QPS_RTS;
	return roce_qp_modify(c->q->qp, &c->a, ROCE_QP_STATE | ROCE_QP_SQ_PSN | ROCE_QP_TIMEOUT |
			ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY | ROCE_QP_MAX_QP_RD_ATOMIC);
}

static int
connect_args(struct roced_state *st, json_t *req, json_t *reply, struct connect_rpc *c)
{
	const struct roce_port *port = roce_dp_port(st->dp, c->q->port);
	const struct roce_dp_addr *addr = roce_dp_addr(st->dp, c->q->port);
	struct roce_qp_attr *a = &c->a;
	uint32_t rqpn, rpsn, timeout = 14, retry = 7, rnr = 7, minrnr = 12, rd = 16, dscp = 0;
	uint32_t drd = 16, rto = 0, inflight = 0;
	uint32_t mtu = 1024;
	bool sr = false;
	uint64_t access = 0xE;
	uint8_t ip[16], mac[6];
	int family, ret;

	if ((ret = roce_ctl_arg_u32(req, reply, "remote.qpn", &rqpn, true, 2, 0xFFFFFF)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "remote.psn", &rpsn, true, 0,
				ROCE_PSN_MASK)) < 0 ||
			(ret = roce_ctl_arg_ip(req, reply, "remote.ip", &family, ip, true)) < 0 ||
			(ret = roce_ctl_arg_mac(req, reply, "remote.mac", mac, false)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "mtu", &mtu, false, 256, 4096)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "timeout", &timeout, false, 0, 31)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "retry_cnt", &retry, false, 0, 7)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "rnr_retry", &rnr, false, 0, 7)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "min_rnr_timer", &minrnr, false, 0,
				31)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "max_rd_atomic", &rd, false, 0, 128)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "max_dest_rd_atomic", &drd, false, 0,
				128)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "dscp", &dscp, false, 0, 63)) < 0 ||
			(ret = roce_ctl_arg_bool(req, reply, "sr", &sr, false)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "sr_rto_us", &rto, false, 0,
				10000000)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "max_inflight", &inflight, false, 0,
				ROCE_MAX_INFLIGHT_MAX)) < 0 ||
			(ret = roce_ctl_arg_flags(req, reply, "access", access_names,
				RTE_DIM(access_names), &access, false)) < 0)
		return ret;
	if (!rte_is_power_of_2(mtu))
		return roce_ctl_error(reply, -EINVAL, "mtu: 256, 512, 1024, 2048 or 4096");
	if (mtu > roce_dp_path_mtu_max(st->dp, c->q->port, family == AF_INET6, sr))
		return roce_ctl_error(reply, -EMSGSIZE, "mtu %u: port %u carries IP MTU %u, "
				"which fits path MTU %u at most (start roced with a larger --mtu)",
				mtu, c->q->port, port->mtu,
				roce_dp_path_mtu_max(st->dp, c->q->port, family == AF_INET6, sr));
	if (json_object_get(json_object_get(req, "remote"), "mac") == NULL) {
		char txt[INET6_ADDRSTRLEN];

		/* No MAC given: ARP or ND for it (the next hop: the peer, or the gateway). */
		ret = roce_dp_resolve(st->dp, c->q->port, ip, family == AF_INET6,
				(struct rte_ether_addr *)mac, 3000);
		if (ret != 0)
			return roce_ctl_error(reply, ret == -ETIMEDOUT ? -EHOSTUNREACH : ret,
					"cannot resolve the MAC of %s: %s",
					inet_ntop(family, ip, txt, sizeof(txt)), strerror(-ret));
	}
	a->path_mtu = (enum roce_mtu)(rte_log2_u32(mtu) - 7);
	a->dest_qp_num = rqpn;
	a->rq_psn = rpsn;
	a->sq_psn = c->q->psn;
	a->timeout = (uint8_t)timeout;
	a->retry_cnt = (uint8_t)retry;
	a->rnr_retry = (uint8_t)rnr;
	a->min_rnr_timer = (uint8_t)minrnr;
	a->max_rd_atomic = (uint8_t)rd;
	a->max_dest_rd_atomic = (uint8_t)drd;
	a->qp_access_flags = (uint32_t)access;
	a->sr = sr;
	a->sr_rto_us = rto;
	a->max_inflight = inflight;
	a->ah.src_mac = port->mac;
	memcpy(a->ah.dst_mac.addr_bytes, mac, 6);
	a->ah.ipv6 = family == AF_INET6;
	if (a->ah.ipv6) {
		static const uint8_t none[16];

		/* The global address if the port has one, else its link-local one. */
		if (memcmp(addr->ip6, none, 16) != 0)
			memcpy(a->ah.src_ip, addr->ip6, 16);
		else
			roce_net_ll_addr(&port->mac, a->ah.src_ip);
		memcpy(a->ah.dst_ip, ip, 16);
	} else {
		memcpy(a->ah.src_ip, addr->ip4, 4);
		memcpy(a->ah.dst_ip, ip, 4);
	}
	a->ah.vlan = addr->vlan != 0;
	a->ah.vlan_tci = addr->vlan;
	a->ah.dscp = (uint8_t)dscp;
	a->ah.udp_sport = roce_udp_sport(c->q->qpn, rqpn);
	return 0;
}

static int
cmd_qp_connect(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct connect_rpc c = {0};
	int ret;

	if ((ret = arg_qp(st, req, reply, &c.q)) < 0 ||
			(ret = connect_args(st, req, reply, &c)) < 0)
		return ret;
	if (c.q->connected)
		return roce_ctl_error(reply, -EBUSY, "QP 0x%06x is connected already", c.q->qpn);
	ret = roce_dp_call(st->dp, c.q->worker, connect_on_worker, &c, RPC_MS);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "cannot connect: %s", strerror(-ret));
	c.q->connected = 1;
	c.q->sr = c.a.sr;
	c.q->remote_qpn = c.a.dest_qp_num;
	c.q->remote_psn = c.a.rq_psn;
	c.q->remote_mac = c.a.ah.dst_mac;
	c.q->remote_ipv6 = c.a.ah.ipv6;
	memcpy(c.q->remote_ip, c.a.ah.dst_ip, 16);
	json_object_set_new(reply, "qp", qp_json(st, c.q));
	return 0;
}

struct qp_state_rpc {
	struct roced_qp *q;
	struct roce_qp_attr attr;
	uint64_t cnt[ROCE_XC_NUM];
};

static int
query_on_worker(struct roce_worker *w, void *arg)
{
	struct qp_state_rpc *c = arg;

	RTE_SET_USED(w);
	roce_qp_counters(c->q->qp, c->cnt);
	return roce_qp_query(c->q->qp, &c->attr);
}

static int
cmd_qp_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	json_t *list = json_array();
	uint32_t qpn = 0;
	unsigned int i;
	int ret;

	ret = roce_ctl_arg_u32(req, reply, "qpn", &qpn, false, 0, 0xFFFFFF);
	for (i = 0; ret >= 0 && i < ROCED_MAX_QPS; i++) {
		struct qp_state_rpc c = { .q = &st->qps[i] };
		json_t *o;

		if (c.q->qp == NULL || (ret == 1 && c.q->qpn != qpn))
			continue;
		roce_dp_call(st->dp, c.q->worker, query_on_worker, &c, RPC_MS);
		o = qp_json(st, c.q);
		json_object_set_new(o, "state", json_string(roce_qp_state_name(c.attr.qp_state)));
		json_object_set_new(o, "tx_pkts", roce_ctl_u64(c.cnt[ROCE_XC_TX_PKTS]));
		json_object_set_new(o, "rx_pkts", roce_ctl_u64(c.cnt[ROCE_XC_RX_PKTS]));
		json_object_set_new(o, "retransmits", roce_ctl_u64(c.cnt[ROCE_XC_RETRANSMITS]));
		json_array_append_new(list, o);
	}
	if (ret < 0) {
		json_decref(list);
		return ret;
	}
	json_object_set_new(reply, "qps", list);
	return ret == 1 && json_array_size(list) == 0 ?
		roce_ctl_error(reply, -ENOENT, "no QP 0x%06x", qpn) : 0;
}

static int
destroy_on_worker(struct roce_worker *w, void *arg)
{
	struct roced_qp *q = arg;

	RTE_SET_USED(w);
	roce_worker_gen_forget(w, q->qpn);
	roce_qp_destroy(q->qp);
	return roce_cq_destroy(q->cq);
}

static void
qp_free(struct roced_state *st, struct roced_qp *q)
{
	roce_dp_call(st->dp, q->worker, destroy_on_worker, q, RPC_MS);
	memset(q, 0, sizeof(*q));
}

static int
cmd_qp_destroy(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roced_qp *q;
	int ret;

	ret = arg_qp(st, req, reply, &q);
	if (ret < 0)
		return ret;
	qp_free(st, q);
	return 0;
}

void
roced_client_closed(void *arg, uint64_t client)
{
	struct roced_state *st = arg;
	unsigned int i, nq = 0, nm = 0;

	/* QPs first: their jobs and connections let go of the MRs. */
	for (i = 0; i < ROCED_MAX_QPS; i++)
		if (st->qps[i].qp != NULL && st->qps[i].owner == client) {
			qp_free(st, &st->qps[i]);
			nq++;
		}
	for (i = 0; i < ROCED_MAX_MRS; i++)
		if (st->mrs[i].mr != NULL && st->mrs[i].owner == client) {
			mr_free(st, &st->mrs[i]);
			nm++;
		}
	if (nq + nm != 0)
		ROCED_LOG(INFO, "control client %" PRIu64 " went: freed its %u QP(s) and %u MR(s)\n",
				client, nq, nm);
}

/* ---- work requests and completions ---- */

struct post_rpc {
	struct roced_qp *q;
	struct roce_send_wr wr;
	struct roce_recv_wr rwr;
	uint64_t wr_id;
	uint32_t count;
	uint32_t posted;
	int recv;
};

static int
post_on_worker(struct roce_worker *w, void *arg)
{
	struct post_rpc *c = arg;
	int ret = 0;

	RTE_SET_USED(w);
	for (c->posted = 0; c->posted < c->count; c->posted++) {
		c->wr.wr_id = c->rwr.wr_id = c->wr_id + c->posted;
		ret = c->recv ? roce_post_recv(c->q->qp, &c->rwr) : roce_post_send(c->q->qp, &c->wr);
		if (ret != 0)
			break;
	}
	return c->posted != 0 ? 0 : ret;
}

/* Local buffer of a work request: "lkey" (an MR's key), "offset", "length". */
static int
arg_local(struct roced_state *st, json_t *req, json_t *reply, struct roce_sge *sge,
		uint64_t def_len)
{
	struct roced_mr *m;
	uint64_t off, len;
	int ret;

	if (json_object_get(req, "length") == NULL)
		json_object_set_new(req, "length", roce_ctl_u64(def_len));
	ret = arg_mr_range(st, req, reply, "lkey", &m, &off, &len, ROCE_MAX_MSG_SIZE);
	if (ret < 0)
		return ret;
	sge->addr = roce_mr_iova(m->mr) + off;
	sge->length = (uint32_t)len;
	sge->lkey = roce_mr_lkey(m->mr);
	return 0;
}

static int
post_common(struct roced_state *st, json_t *req, json_t *reply, enum roce_wr_opcode op)
{
	struct post_rpc c = { .count = 1 };
	int atomic = op == ROCE_WR_ATOMIC_CMP_AND_SWP || op == ROCE_WR_ATOMIC_FETCH_AND_ADD;
	bool signaled = true, inl = false;
	uint32_t imm;
	int ret;

	if ((ret = arg_qp(st, req, reply, &c.q)) < 0 ||
			(ret = arg_local(st, req, reply, &c.wr.sg_list[0], atomic ? 8 : 64)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "count", &c.count, false, 1,
				c.q->sq_depth)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "wr_id", &c.wr_id, false, 0,
				UINT64_MAX)) < 0 ||
			(ret = roce_ctl_arg_bool(req, reply, "inline", &inl, false)) < 0 ||
			(ret = roce_ctl_arg_bool(req, reply, "signaled", &signaled, false)) < 0)
		return ret;
	c.wr.opcode = op;
	c.wr.num_sge = 1;
	c.wr.send_flags = signaled ? ROCE_SEND_SIGNALED : 0;
	if (inl) {
		/* Inline data is copied from the local address at post time. */
		struct roced_mr *m = mr_find(st, c.wr.sg_list[0].lkey);

		c.wr.send_flags |= ROCE_SEND_INLINE;
		c.wr.sg_list[0].addr = (uintptr_t)m->buf +
			(c.wr.sg_list[0].addr - roce_mr_iova(m->mr));
	}
	if (op != ROCE_WR_SEND &&
			((ret = roce_ctl_arg_u64(req, reply, "remote_addr", &c.wr.remote_addr, true,
				0, UINT64_MAX)) < 0 ||
			 (ret = roce_ctl_arg_u32(req, reply, "rkey", &c.wr.rkey, true, 0,
				UINT32_MAX)) < 0))
		return ret;
	ret = roce_ctl_arg_u32(req, reply, "imm", &imm, false, 0, UINT32_MAX);
	if (ret < 0)
		return ret;
	if (ret == 1 && (op == ROCE_WR_SEND || op == ROCE_WR_RDMA_WRITE)) {
		c.wr.opcode = op == ROCE_WR_SEND ? ROCE_WR_SEND_WITH_IMM :
			ROCE_WR_RDMA_WRITE_WITH_IMM;
		c.wr.imm_data = imm;
	}
	if (atomic &&
			((ret = roce_ctl_arg_u64(req, reply, op == ROCE_WR_ATOMIC_CMP_AND_SWP ?
				"compare" : "add", &c.wr.compare_add, true, 0, UINT64_MAX)) < 0 ||
			 (op == ROCE_WR_ATOMIC_CMP_AND_SWP &&
			  (ret = roce_ctl_arg_u64(req, reply, "swap", &c.wr.swap, true, 0,
				UINT64_MAX)) < 0)))
		return ret;
	ret = roce_dp_call(st->dp, c.q->worker, post_on_worker, &c, RPC_MS);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "post refused: %s", strerror(-ret));
	json_object_set_new(reply, "posted", json_integer(c.posted));
	return 0;
}

#define POST_CMD(fn, op) \
static int \
fn(void *arg, json_t *req, json_t *reply) \
{ \
	return post_common(arg, req, reply, op); \
}
POST_CMD(cmd_post_write, ROCE_WR_RDMA_WRITE)
POST_CMD(cmd_post_read, ROCE_WR_RDMA_READ)
POST_CMD(cmd_post_send, ROCE_WR_SEND)
POST_CMD(cmd_post_cas, ROCE_WR_ATOMIC_CMP_AND_SWP)
POST_CMD(cmd_post_faa, ROCE_WR_ATOMIC_FETCH_AND_ADD)

static int
cmd_post_recv(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct post_rpc c = { .count = 1, .recv = 1 };
	int ret;

	if ((ret = arg_qp(st, req, reply, &c.q)) < 0 ||
			(ret = arg_local(st, req, reply, &c.rwr.sg_list[0], 4096)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "wr_id", &c.wr_id, false, 0,
				UINT64_MAX)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "count", &c.count, false, 1,
				c.q->rq_depth)) < 0)
		return ret;
	c.rwr.num_sge = 1;
	ret = roce_dp_call(st->dp, c.q->worker, post_on_worker, &c, RPC_MS);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "post refused: %s", strerror(-ret));
	json_object_set_new(reply, "posted", json_integer(c.posted));
	return 0;
}

struct poll_rpc {
	struct roced_qp *q;
	struct roce_wc wc[64];
	int n;
	uint32_t max;
};

static int
poll_on_worker(struct roce_worker *w, void *arg)
{
	struct poll_rpc *c = arg;

	RTE_SET_USED(w);
	c->n = roce_cq_poll(c->q->cq, c->wc, (int)c->max);
	return 0;
}

static json_t *
wc_json(const struct roce_wc *wc)
{
	const char *op = wc->opcode == ROCE_WC_RECV ? "recv" :
		wc->opcode == ROCE_WC_RECV_RDMA_WITH_IMM ? "recv_rdma_imm" :
		(unsigned int)wc->opcode < RTE_DIM(opcode_names) ? opcode_names[wc->opcode] : "?";
	json_t *o = json_pack("{s:o, s:i, s:s, s:s, s:i}", "wr_id", roce_ctl_u64(wc->wr_id),
			"status", wc->status, "status_str", roce_wc_status_str(wc->status),
			"opcode", op, "byte_len", wc->byte_len);

	if (wc->wc_flags & ROCE_WC_WITH_IMM)
		json_object_set_new(o, "imm", roce_ctl_u64(wc->imm_data));
	if (wc->vendor_err != 0)
		json_object_set_new(o, "vendor_err", json_integer(wc->vendor_err));
	return o;
}

static int
cmd_cq_poll(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct poll_rpc c = { .max = 16 };
	json_t *list;
	int ret, i;

	if ((ret = arg_qp(st, req, reply, &c.q)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "max", &c.max, false, 1, 64)) < 0)
		return ret;
	roce_dp_call(st->dp, c.q->worker, poll_on_worker, &c, RPC_MS);
	list = json_array();
	for (i = 0; i < c.n; i++)
		json_array_append_new(list, wc_json(&c.wc[i]));
	json_object_set_new(reply, "wc", list);
	return 0;
}

/* ---- traffic jobs ---- */

static const char *const job_modes[] = { "bw", "lat" };

/* The job mode of an operation: bandwidth, or the latency ping-pong perftest runs for it. */
static enum roce_gen_mode
job_mode(unsigned int op, unsigned int lat)
{
	if (op == OP_RECV)
		return ROCE_GEN_RECV;
	if (op == OP_MIXED)
		return ROCE_GEN_MIXED;
	if (op == OP_MIXED_RECV)
		return ROCE_GEN_MIXED_RECV;
	if (!lat)
		return ROCE_GEN_BW;
	if (op == ROCE_WR_RDMA_WRITE)
		return ROCE_GEN_LAT_WRITE;
	if (op == ROCE_WR_SEND)
		return ROCE_GEN_LAT_SEND;
	return ROCE_GEN_LAT_RTT;
}

/* Latency jobs: where the peer's message lands ("recv_offset", default right after ours). */
static int
job_lat_args(struct roced_state *st, json_t *req, json_t *reply, struct roce_gen_conf *g)
{
	struct roced_mr *m = mr_find(st, g->lkey);
	uint64_t loff = g->laddr - roce_mr_iova(m->mr), roff = loff + g->size;
	bool initiator = false;
	int ret;

	if ((ret = roce_ctl_arg_bool(req, reply, "initiator", &initiator, false)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "recv_offset", &roff, false, 0,
				m->len)) < 0)
		return ret;
	if (g->mode != ROCE_GEN_LAT_RTT && (g->size == 0 || roff + g->size > m->len))
		return roce_ctl_error(reply, -EINVAL,
				"recv_offset: %u bytes from %" PRIu64 " do not fit the MR", g->size,
				roff);
	g->initiator = initiator;
	g->recv_laddr = roce_mr_iova(m->mr) + roff;
	if (g->mode == ROCE_GEN_LAT_WRITE) {
		g->post_byte = m->buf + loff + g->size - 1;
		g->poll_byte = m->buf + roff + g->size - 1;
	}
	return 0;
}

/* Mixed traffic: the region from "offset" holds the job's slots (see ROCE_MIX_REGION). */
static int
job_mixed_args(struct roced_state *st, json_t *req, json_t *reply, struct roce_gen_conf *g)
{
	struct roced_mr *m = mr_find(st, g->lkey);
	uint64_t off = g->laddr - roce_mr_iova(m->mr), need;
	int ret;

	if ((ret = roce_ctl_arg_u64(req, reply, "seed", &g->seed, false, 0, UINT64_MAX)) < 0)
		return ret;
	if (g->size < 16 || g->size > ROCE_MIX_MAX_SIZE)
		return roce_ctl_error(reply, -EINVAL, "length: mixed traffic needs 16 .. %u bytes",
				ROCE_MIX_MAX_SIZE);
	if (g->mode == ROCE_GEN_MIXED && g->depth > ROCE_MIX_SLOTS)
		g->depth = ROCE_MIX_SLOTS;
	need = g->mode == ROCE_GEN_MIXED ? ROCE_MIX_REGION(g->size) :
		ROCE_MIX_RECV_REGION(g->size, g->depth);
	if (off + need > m->len)
		return roce_ctl_error(reply, -EINVAL, "the MR needs %" PRIu64 " bytes from offset "
				"%" PRIu64 " for this job", need, off);
	g->lbuf = m->buf + off;
	return 0;
}

static int
cmd_job_start(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_gen_conf g = {0};
	struct roce_sge sge;
	struct roced_qp *q;
	unsigned int op = ROCE_WR_RDMA_WRITE, lat = 0;
	uint64_t ms = 0;
	int ret;

	if ((ret = arg_qp(st, req, reply, &q)) < 0 ||
			(ret = roce_ctl_arg_enum(req, reply, "op", op_names, RTE_DIM(op_names), &op,
				false)) < 0 ||
			(ret = roce_ctl_arg_enum(req, reply, "mode", job_modes, RTE_DIM(job_modes),
				&lat, false)) < 0 ||
			(ret = arg_local(st, req, reply, &sge, 65536)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "count", &g.count, false, 0,
				UINT64_MAX)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "duration_ms", &ms, false, 0,
				86400000)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "depth", &g.depth, false, 1,
				RTE_MAX(q->sq_depth, q->rq_depth))) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "rate_mbps", &g.rate_bps, false, 0,
				10000000)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "remote_addr", &g.raddr,
				op != ROCE_WR_SEND && op != OP_RECV && op != OP_MIXED_RECV, 0,
				UINT64_MAX)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "rkey", &g.rkey,
				op != ROCE_WR_SEND && op != OP_RECV && op != OP_MIXED_RECV, 0,
				UINT32_MAX)) < 0)
		return ret;
	g.rate_bps *= 1000000;
	if (!q->connected)
		return roce_ctl_error(reply, -EPERM, "QP 0x%06x is not connected", q->qpn);
	g.qpn = q->qpn;
	g.mode = job_mode(op, lat);
	g.op = op >= OP_RECV ? ROCE_WR_SEND : (enum roce_wr_opcode)op;
	g.size = sge.length;
	g.laddr = sge.addr;
	g.lkey = sge.lkey;
	g.duration_ns = ms * 1000000;
	g.depth = g.depth != 0 ? g.depth : g.mode == ROCE_GEN_RECV ||
		g.mode == ROCE_GEN_MIXED_RECV ? q->rq_depth : q->sq_depth;
	/* Never more in flight than the queue the job fills holds. */
	g.depth = RTE_MIN(g.depth, g.mode == ROCE_GEN_RECV || g.mode == ROCE_GEN_MIXED_RECV ||
			g.mode == ROCE_GEN_LAT_SEND ? q->rq_depth : q->sq_depth);
	g.cq = q->cq;
	if (lat && (ret = job_lat_args(st, req, reply, &g)) < 0)
		return ret;
	if (op >= OP_MIXED && (ret = job_mixed_args(st, req, reply, &g)) < 0)
		return ret;
	ret = roce_dp_gen_start(st->dp, &g);
	return ret == 0 ? 0 : roce_ctl_error(reply, ret, "cannot start: %s", strerror(-ret));
}

static int
cmd_job_stop(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roced_qp *q;
	int ret = arg_qp(st, req, reply, &q);

	if (ret < 0)
		return ret;
	ret = roce_dp_gen_stop(st->dp, q->qpn);
	return ret == 0 ? 0 : roce_ctl_error(reply, ret, "no job on QP 0x%06x", q->qpn);
}

static json_t *
lat_json(const struct roce_hist *h)
{
	struct roce_hist_summary s;

	roce_hist_summarize(h, &s);
	return json_pack("{s:o, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "samples", roce_ctl_u64(s.n),
			"min", s.min, "max", s.max, "median", s.median, "avg", s.avg,
			"stdev", s.stdev, "p99", s.p99, "p999", s.p999);
}

/* The progress fields job.show and job.total share; @running is theirs to say. */
static json_t *
progress_json(json_t *running, const struct roce_gen_total *t)
{
	double secs = (double)t->max_ns / 1e9;

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:f, s:f, s:f, s:s, s:o}",
			"running", running, "posted", roce_ctl_u64(t->posted),
			"completed", roce_ctl_u64(t->completed),
			"received", roce_ctl_u64(t->received), "errors", roce_ctl_u64(t->errors),
			"bytes", roce_ctl_u64(t->bytes), "seconds", secs,
			"gbps", secs > 0 ? (double)t->bytes * 8 / secs / 1e9 : 0.0,
			"peak_gbps", (double)t->peak_bps * 8 / 1e9,
			"msg_rate", secs > 0 ? (double)t->completed / secs : 0.0,
			"first_error", t->errors ? roce_wc_status_str(t->first_error) : "none",
			"verify_errors", roce_ctl_u64(t->verify_errors));
}

static int
cmd_job_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_gen_stats g;
	struct roce_hist *h;
	struct roced_qp *q;
	json_t *job;
	int ret = arg_qp(st, req, reply, &q);

	if (ret < 0)
		return ret;
	h = rte_malloc("roced_hist", sizeof(*h), 0);
	if (h == NULL)
		return roce_ctl_error(reply, -ENOMEM, "no memory for the histogram");
	ret = roce_dp_gen_stats(st->dp, q->qpn, &g, h);
	if (ret != 0) {
		rte_free(h);
		return roce_ctl_error(reply, ret, "no job on QP 0x%06x", q->qpn);
	}
	job = progress_json(json_boolean(g.running), &(struct roce_gen_total){
			.posted = g.posted, .completed = g.completed, .received = g.received,
			.errors = g.errors, .bytes = g.bytes, .peak_bps = g.peak_bps,
			.verify_errors = g.verify_errors, .max_ns = g.end_ns - g.start_ns,
			.first_error = g.first_error });
	if (g.verify_errors != 0)
		json_object_set_new(job, "first_bad", roce_ctl_u64(g.first_bad));
	/* Round-trip samples in ns: the time between two consecutive posts. */
	if (h->n != 0)
		json_object_set_new(job, "rtt_ns", lat_json(h));
	rte_free(h);
	json_object_set_new(reply, "job", job);
	return 0;
}

/* The jobs of every QP, or with owned=true of the QPs the asking client owns, added up. */
static int
cmd_job_total(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_gen_total t;
	uint32_t *qpns = NULL, n = 0, i;
	uint64_t owner;
	json_t *total;
	int ret;

	if ((ret = arg_owner(st, req, reply, &owner)) < 0)
		return ret;
	if (owner != 0) {
		qpns = malloc(ROCED_MAX_QPS * sizeof(*qpns));
		if (qpns == NULL)
			return roce_ctl_error(reply, -ENOMEM, "no memory");
		for (i = 0; i < ROCED_MAX_QPS; i++)
			if (st->qps[i].qp != NULL && st->qps[i].owner == owner)
				qpns[n++] = st->qps[i].qpn;
	}
	ret = roce_dp_gen_total(st->dp, qpns, n, &t);
	free(qpns);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "workers did not answer");
	total = progress_json(json_integer(t.running), &t);
	json_object_set_new(total, "jobs", json_integer(t.jobs));
	json_object_set_new(reply, "total", total);
	return 0;
}

/* ---- daemon ---- */

/* Bytes allocated from the DPDK heaps: what QPs, CQs and MRs cost. */
static uint64_t
heap_bytes(void)
{
	struct rte_malloc_socket_stats ms;
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < rte_socket_count(); i++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &ms) == 0)
			sum += ms.heap_allocsz_bytes;
	return sum;
}

/* Mbufs taken from the daemon's mempools (the workers' packet pools), and their sizes. */
static void
mempool_use(struct rte_mempool *mp, void *arg)
{
	uint64_t *use = arg;

	use[0] += rte_mempool_in_use_count(mp);
	use[1] += mp->size;
}

static int
cmd_status(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	unsigned int i, nqp = 0, nmr = 0;
	uint64_t mbufs[2] = {0}, quiesces, restarts;

	RTE_SET_USED(req);
	for (i = 0; i < ROCED_MAX_QPS; i++)
		nqp += st->qps[i].qp != NULL;
	for (i = 0; i < ROCED_MAX_MRS; i++)
		nmr += st->mrs[i].mr != NULL;
	if (st->start_ns == 0)
		st->start_ns = roce_dp_now();
	json_object_set_new(reply, "version", json_string("0.1.0"));
	json_object_set_new(reply, "workers", json_integer(roce_dp_nb_workers(st->dp)));
	json_object_set_new(reply, "ports", json_integer(st->conf.nb_ports));
	json_object_set_new(reply, "qps", json_integer(nqp));
	json_object_set_new(reply, "mrs", json_integer(nmr));
	json_object_set_new(reply, "classifier",
			json_string(roce_classify_impl_name(ROCE_CLASSIFY_AUTO)));
	json_object_set_new(reply, "heap_bytes", roce_ctl_u64(heap_bytes()));
	rte_mempool_walk(mempool_use, mbufs);
	json_object_set_new(reply, "mbufs_in_use", roce_ctl_u64(mbufs[0]));
	json_object_set_new(reply, "mbufs", roce_ctl_u64(mbufs[1]));
	roce_dp_quiesce_stats(st->dp, &quiesces, &restarts);
	json_object_set_new(reply, "quiesces", roce_ctl_u64(quiesces));
	json_object_set_new(reply, "port_restarts", roce_ctl_u64(restarts));
	if (st->srv != NULL) {
		struct roce_ctl_stats cs;

		/* What the control socket refused or cut off, as hostile clients make it. */
		roce_ctl_server_stats(st->srv, &cs);
		json_object_set_new(reply, "ctl", json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o}",
				"clients", cs.clients, "accepted", roce_ctl_u64(cs.accepted),
				"rejected", roce_ctl_u64(cs.rejected),
				"evicted", roce_ctl_u64(cs.evicted),
				"oversized", roce_ctl_u64(cs.oversized),
				"errors", roce_ctl_u64(cs.errors),
				"dropped", roce_ctl_u64(cs.dropped)));
	}
	return 0;
}

static int
cmd_port_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	json_t *list = json_array();
	uint32_t only = UINT32_MAX;
	unsigned int i;
	int ret;

	ret = roce_ctl_arg_u32(req, reply, "port", &only, false, 0, st->conf.nb_ports - 1);
	if (ret < 0) {
		json_decref(list);
		return ret;
	}
	for (i = 0; i < st->conf.nb_ports; i++) {
		const struct roce_port *p = roce_dp_port(st->dp, i);
		const struct roce_dp_addr *a = roce_dp_addr(st->dp, i);

		struct rte_eth_link link = {0};
		struct rte_eth_stats es = {0};

		if (p == NULL || (only != UINT32_MAX && only != i))
			continue;
		rte_eth_link_get_nowait(p->port_id, &link);
		rte_eth_stats_get(p->port_id, &es);
		/* The ethdev's own statistics, named as struct rte_eth_stats (testpmd's
		 * "show port stats"). */
		json_array_append_new(list, json_pack(
				"{s:i, s:s, s:s, s:o, s:o, s:i, s:i, s:i, s:i, s:b, s:b, s:i, "
				"s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}}",
				"port", i, "device", p->name, "driver", p->profile->family,
				"mac", mac_json(&p->mac), "ip", ip_json(a->ip4, 0),
				"prefix", a->prefix4, "mtu", p->mtu, "ip_mtu", st->conf.mtu, "queues", p->nb_queues,
				"tested", p->profile->tested, "link_up", link.link_status,
				"speed_mbps", link.link_speed, "stats",
				"ipackets", roce_ctl_u64(es.ipackets), "opackets", roce_ctl_u64(es.opackets),
				"ibytes", roce_ctl_u64(es.ibytes), "obytes", roce_ctl_u64(es.obytes),
				"imissed", roce_ctl_u64(es.imissed), "ierrors", roce_ctl_u64(es.ierrors),
				"oerrors", roce_ctl_u64(es.oerrors), "rx_nombuf", roce_ctl_u64(es.rx_nombuf)));
	}
	json_object_set_new(reply, "ports", list);
	return 0;
}

/* Where the counter sink writes: {name: value}, and {name: description} when asked. */
struct counters_out {
	json_t *values;
	json_t *descs;
};

static void
counters_sink(void *arg, const char *name, const char *description, uint64_t value)
{
	struct counters_out *o = arg;

	json_object_set_new(o->values, name, roce_ctl_u64(value));
	if (o->descs != NULL)
		json_object_set_new(o->descs, name, json_string(description));
}

/* Counters of workers [first, last), summed (the dataplane's emitter, as telemetry). */
static int
counters_json(struct roced_state *st, struct counters_out *o, unsigned int first,
		unsigned int last, unsigned int flags)
{
	return roce_dp_counters_emit(st->dp, first, last, flags, counters_sink, o);
}

/* One QP's transport counters. */
static int
qp_counters_json(struct roced_state *st, struct roced_qp *q, struct counters_out *o,
		unsigned int flags)
{
	static const struct roce_counter_group xport = { &roce_xport_counter_family, "", NULL };
	struct qp_state_rpc c = { .q = q };
	int ret;

	ret = roce_dp_call(st->dp, q->worker, query_on_worker, &c, RPC_MS);
	if (ret == 0)
		roce_counters_emit(&xport, c.cnt, flags, counters_sink, o);
	return ret;
}

/*
 * Selectors: a QP, a worker, or a port. Port counters are the sums of the workers that read
 * the port's queues; with one port that is every worker. "nonzero" leaves zeros out,
 * "describe" adds {name: description} as "descriptions".
 */
static int
cmd_counters(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	unsigned int nw = roce_dp_nb_workers(st->dp), flags = 0;
	struct counters_out o = { NULL, NULL };
	uint32_t qpn, worker, port;
	bool nonzero = false, describe = false;
	int hq, hw, hp, ret;
	struct roced_qp *q;

	if ((hq = roce_ctl_arg_u32(req, reply, "qpn", &qpn, false, 0, 0xFFFFFF)) < 0 ||
			(hw = roce_ctl_arg_u32(req, reply, "worker", &worker, false, 0,
				UINT32_MAX)) < 0 ||
			(hp = roce_ctl_arg_u32(req, reply, "port", &port, false, 0, UINT32_MAX)) < 0 ||
			roce_ctl_arg_bool(req, reply, "nonzero", &nonzero, false) < 0 ||
			roce_ctl_arg_bool(req, reply, "describe", &describe, false) < 0)
		return -EINVAL;
	if (hq + hw + hp > 1)
		return roce_ctl_error(reply, -EINVAL, "at most one of qpn, worker, port");
	if (nonzero)
		flags |= ROCE_COUNTERS_NONZERO;
	o.values = json_object();
	if (describe)
		o.descs = json_object();
	if (hq) {
		q = qp_find(st, qpn);
		ret = q == NULL ? roce_ctl_error(reply, -ENOENT, "no QP 0x%06x", qpn) :
			qp_counters_json(st, q, &o, flags);
		json_object_set_new(reply, "scope", json_string("qp"));
		json_object_set_new(reply, "qpn", json_integer(qpn));
	} else if (hw) {
		ret = worker >= nw ? roce_ctl_error(reply, -ENOENT, "no worker %u", worker) :
			counters_json(st, &o, worker, worker + 1, flags);
		json_object_set_new(reply, "scope", json_string("worker"));
		json_object_set_new(reply, "worker", json_integer(worker));
	} else if (hp) {
		ret = port >= st->conf.nb_ports ? roce_ctl_error(reply, -ENOENT, "no port %u",
				port) : counters_json(st, &o, 0, nw, flags);
		json_object_set_new(reply, "scope", json_string("port"));
		json_object_set_new(reply, "port", json_integer(port));
	} else {
		ret = counters_json(st, &o, 0, nw, flags);
	}
	json_object_set_new(reply, "counters", o.values);
	if (o.descs != NULL)
		json_object_set_new(reply, "descriptions", o.descs);
	return ret;
}

static int
cmd_stats(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	json_t *c = json_object();
	struct counters_out o = { c, NULL };
	int ret;

	RTE_SET_USED(req);
	ret = counters_json(st, &o, 0, roce_dp_nb_workers(st->dp), 0);
	if (ret == 0)
		json_object_set_new(reply, "stats", json_pack("{s:O, s:O, s:O, s:O, s:O}",
				"rx_pkts", json_object_get(c, "PORT_RX_PKTS"),
				"tx_pkts", json_object_get(c, "PORT_TX_PKTS"),
				"rx_bytes", json_object_get(c, "PORT_RX_BYTES"),
				"tx_bytes", json_object_get(c, "PORT_TX_BYTES"),
				"retransmits", json_object_get(c, "RETRANSMITS")));
	json_decref(c);
	return ret;
}

static int
cmd_shutdown(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;

	RTE_SET_USED(req);
	RTE_SET_USED(reply);
	st->shutdown = 1;
	return 0;
}

const struct roce_ctl_cmd roced_cmds[] = {
	{ "status", cmd_status, "daemon summary", "" },
	{ "port.show", cmd_port_show, "ports and their addresses", "port" },
	{ "mr.reg", cmd_mr_reg, "register memory", "size access socket owned" },
	{ "mr.dereg", cmd_mr_dereg, "deregister memory", "rkey" },
	{ "mr.show", cmd_mr_show, "list MRs", "rkey" },
	{ "mr.fill", cmd_mr_fill, "fill an MR range with a pattern", "rkey offset length pattern" },
	{ "mr.dump", cmd_mr_dump, "bytes of an MR range, in hex", "rkey offset length" },
	{ "mr.digest", cmd_mr_digest, "CRC-32 of an MR range", "rkey offset length" },
	{ "qp.create", cmd_qp_create, "create an RC QP",
		"worker port sq_depth rq_depth max_inline owned" },
	{ "qp.connect", cmd_qp_connect, "connect a QP to its peer",
		"qpn remote mtu timeout retry_cnt rnr_retry min_rnr_timer max_rd_atomic\n\t\t"
		"max_dest_rd_atomic dscp access sr sr_rto_us max_inflight" },
	{ "qp.show", cmd_qp_show, "list QPs", "qpn" },
	{ "qp.destroy", cmd_qp_destroy, "destroy a QP", "qpn" },
	{ "post.write", cmd_post_write, "post RDMA WRITEs",
		"qpn lkey offset length remote_addr rkey imm count signaled wr_id" },
	{ "post.read", cmd_post_read, "post RDMA READs",
		"qpn lkey offset length remote_addr rkey count signaled wr_id" },
	{ "post.send", cmd_post_send, "post SENDs",
		"qpn lkey offset length imm inline count signaled wr_id" },
	{ "post.cas", cmd_post_cas, "post atomic compare-and-swaps",
		"qpn lkey offset length remote_addr rkey compare swap count signaled wr_id" },
	{ "post.faa", cmd_post_faa, "post atomic fetch-and-adds",
		"qpn lkey offset length remote_addr rkey add count signaled wr_id" },
	{ "post.recv", cmd_post_recv, "post receives", "qpn lkey offset length count wr_id" },
	{ "cq.poll", cmd_cq_poll, "completions of a QP", "qpn max" },
	{ "job.start", cmd_job_start, "run traffic on a QP: bandwidth, or a latency ping-pong",
		"qpn op mode lkey offset length count duration_ms depth rate_mbps remote_addr rkey "
		"initiator recv_offset seed" },
	{ "job.stop", cmd_job_stop, "stop a job", "qpn" },
	{ "job.show", cmd_job_show, "a job's progress", "qpn" },
	{ "job.total", cmd_job_total, "the jobs' progress added up", "owned" },
	{ "stats", cmd_stats, "traffic totals", "" },
	{ "counters", cmd_counters, "every counter, summed over workers (or of a QP, worker, port)",
		"qpn worker port nonzero describe" },
	{ "impair.set", roced_cmd_impair_set, "impair a port's rx or tx (cmd_impair.c)",
		"spec port dir" },
	{ "impair.show", roced_cmd_impair_show, "impairments and their counters", "port dir" },
	{ "impair.clear", roced_cmd_impair_clear, "stop impairing", "port dir" },
	{ "neigh.show", roced_cmd_neigh_show, "neighbour tables: IP, MAC, state, age (cmd_neigh.c)",
		"ip port" },
	{ "neigh.flush", roced_cmd_neigh_flush, "forget neighbours: all, or one IP", "ip port" },
	{ "shutdown", cmd_shutdown, "stop the daemon", "" },
};

const unsigned int roced_nb_cmds = RTE_DIM(roced_cmds);

static int
error_on_worker(struct roce_worker *w, void *arg)
{
	struct roced_qp *q = arg;
	struct roce_qp_attr a = { .qp_state = ROCE_QPS_ERR };

	RTE_SET_USED(w);
	return roce_qp_modify(q->qp, &a, ROCE_QP_STATE);
}

static void
print_sink(void *arg, const char *name, const char *description, uint64_t value)
{
	RTE_SET_USED(description);
	(*(unsigned int *)arg)++;
	printf("  %-28s %" PRIu64 "\n", name, value);
}

void
roced_shutdown(struct roced_state *st)
{
	unsigned int i, printed = 0;

	for (i = 0; i < ROCED_MAX_QPS; i++)
		if (st->qps[i].qp != NULL)
			roce_dp_call(st->dp, st->qps[i].worker, error_on_worker, &st->qps[i], RPC_MS);
	printf("roced: final counters (non-zero):\n");
	roce_dp_counters_emit(st->dp, 0, roce_dp_nb_workers(st->dp), ROCE_COUNTERS_NONZERO,
			print_sink, &printed);
	if (printed == 0)
		printf("  (none: no traffic)\n");
	roce_dp_stop(st->dp);
	roced_quiesce_detach();
	roced_impair_fini(st);
	roce_dp_destroy(st->dp);
	for (i = 0; i < ROCED_MAX_MRS; i++)
		rte_free(st->mrs[i].buf);
}
