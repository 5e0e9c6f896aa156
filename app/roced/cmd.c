/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control commands (doc/control-protocol.md) and their table: jobs, counters, the daemon. They
 * run on the main lcore and reach the workers only through the dataplane's functions; the
 * verbs commands are in cmd_verbs.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_random.h>

#include "roced_cmd.h"


/* Job operations: the send opcodes, "recv" for a job that keeps receives posted, the two
 * sides of verified mixed traffic, and rdma-core's pingpong examples. */
#define OP_RECV 10
#define OP_MIXED 11
#define OP_MIXED_RECV 12
#define OP_PINGPONG 13

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
	[OP_PINGPONG] = "pingpong",
};

/* ---- traffic jobs ---- */

static const char *const job_modes[] = { "bw", "lat", "bidi" };
#define MODE_LAT 1
#define MODE_BIDI 2

/* The job mode of an operation: bandwidth, the latency ping-pong perftest runs for it, or
 * (send only) perftest's send_bw -b; ROCE_GEN_MODE_NUM: not for this operation. */
static const enum roce_gen_mode op_modes[][3] = {
	[ROCE_WR_RDMA_WRITE] = { ROCE_GEN_BW, ROCE_GEN_LAT_WRITE, ROCE_GEN_MODE_NUM },
	[ROCE_WR_RDMA_WRITE_WITH_IMM] = { ROCE_GEN_BW, ROCE_GEN_LAT_RTT, ROCE_GEN_MODE_NUM },
	[ROCE_WR_SEND] = { ROCE_GEN_BW, ROCE_GEN_LAT_SEND, ROCE_GEN_BW_BIDI },
	[ROCE_WR_SEND_WITH_IMM] = { ROCE_GEN_BW, ROCE_GEN_LAT_RTT, ROCE_GEN_MODE_NUM },
	[ROCE_WR_RDMA_READ] = { ROCE_GEN_BW, ROCE_GEN_LAT_RTT, ROCE_GEN_MODE_NUM },
	[ROCE_WR_ATOMIC_CMP_AND_SWP] = { ROCE_GEN_BW, ROCE_GEN_LAT_RTT, ROCE_GEN_MODE_NUM },
	[ROCE_WR_ATOMIC_FETCH_AND_ADD] = { ROCE_GEN_BW, ROCE_GEN_LAT_RTT, ROCE_GEN_MODE_NUM },
	[OP_RECV] = { ROCE_GEN_RECV, ROCE_GEN_RECV, ROCE_GEN_MODE_NUM },
	[OP_MIXED] = { ROCE_GEN_MIXED, ROCE_GEN_MIXED, ROCE_GEN_MODE_NUM },
	[OP_MIXED_RECV] = { ROCE_GEN_MIXED_RECV, ROCE_GEN_MIXED_RECV, ROCE_GEN_MODE_NUM },
	[OP_PINGPONG] = { ROCE_GEN_PINGPONG, ROCE_GEN_PINGPONG, ROCE_GEN_MODE_NUM },
};

/* Latency and bidi jobs: where the peer's message lands ("recv_offset", default right after
 * ours). */
static int
job_lat_args(const struct roce_dp_mr_info *m, json_t *req, json_t *reply,
		struct roce_gen_conf *g, uint32_t grh)
{
	uint64_t loff = g->laddr - m->iova, roff = loff + g->size;
	bool initiator = false;
	int ret;

	if ((ret = roce_ctl_arg_bool(req, reply, "initiator", &initiator, false)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "recv_offset", &roff, false, 0,
				m->length)) < 0)
		return ret;
	if (g->mode != ROCE_GEN_LAT_RTT && (g->size == 0 || roff + g->size + grh > m->length))
		return roce_ctl_error(reply, -EINVAL,
				"recv_offset: %u bytes from %" PRIu64 " do not fit the MR",
				g->size + grh, roff);
	g->initiator = initiator;
	g->recv_laddr = m->iova + roff;
	if (g->mode == ROCE_GEN_LAT_WRITE) {
		g->post_byte = m->addr + loff + g->size - 1;
		g->poll_byte = m->addr + roff + g->size - 1;
	}
	return 0;
}

/*
 * rdma-core's pingpong examples: "initiator" (their client); the peer's messages land where
 * ours go from, so the passive side sends back what it got (UD: the GRH area first, in the
 * @grh bytes before "offset").
 */
static int
job_pingpong_args(const struct roce_dp_mr_info *m, json_t *req, json_t *reply,
		struct roce_gen_conf *g, uint32_t grh)
{
	bool initiator = false;
	int ret = roce_ctl_arg_bool(req, reply, "initiator", &initiator, false);

	if (ret < 0)
		return ret;
	if (g->size == 0 || g->laddr - m->iova < grh)
		return roce_ctl_error(reply, -EINVAL, "a pingpong needs a length and, on UD, the "
				"%u bytes before offset for the GRH area", ROCE_GRH_LEN);
	g->initiator = initiator;
	g->recv_laddr = g->laddr - grh;
	return 0;
}

/* Mixed traffic: the region from "offset" holds the job's slots (see ROCE_MIX_REGION). */
static int
job_mixed_args(const struct roce_dp_mr_info *m, json_t *req, json_t *reply,
		struct roce_gen_conf *g)
{
	uint64_t off = g->laddr - m->iova, need;
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
	if (off + need > m->length)
		return roce_ctl_error(reply, -EINVAL, "the MR needs %" PRIu64 " bytes from offset "
				"%" PRIu64 " for this job", need, off);
	g->lbuf = m->addr + off;
	return 0;
}

static int
cmd_job_start(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_gen_conf g = {0};
	struct roce_dp_qp_info q;
	struct roce_dp_mr_info m;
	struct roce_sge sge;
	uint32_t sq, rq, grh;
	unsigned int op = ROCE_WR_RDMA_WRITE, lat = 0;
	uint64_t ms = 0;
	bool ud, remote;
	int ret;

	if ((ret = roced_arg_qp(st, req, reply, &q)) < 0)
		return ret;
	sq = q.init.max_send_wr;
	rq = q.init.max_recv_wr;
	ud = q.init.qp_type == ROCE_QPT_UD;
	/* a UD receive takes the GRH area before the payload */
	grh = ud ? ROCE_GRH_LEN : 0;
	if ((ret = roce_ctl_arg_enum(req, reply, "op", op_names, RTE_DIM(op_names), &op,
				false)) < 0 ||
			(ret = roce_ctl_arg_enum(req, reply, "mode", job_modes, RTE_DIM(job_modes),
				&lat, false)) < 0 ||
			(ret = roced_arg_local(st, req, reply, &sge, 65536, &m)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "count", &g.count, false, 0,
				UINT64_MAX)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "duration_ms", &ms, false, 0,
				86400000)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "depth", &g.depth, false, 1,
				RTE_MAX(sq, rq))) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "rate_mbps", &g.rate_bps, false, 0,
				10000000)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "post_list", &g.post_list, false, 0,
				RTE_MAX(sq, rq))) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "cq_mod", &g.cq_mod, false, 0,
				sq)) < 0)
		return ret;
	if (ud && op != ROCE_WR_SEND && op != ROCE_WR_SEND_WITH_IMM && op != OP_RECV &&
			op != OP_PINGPONG)
		return roce_ctl_error(reply, -EINVAL, "QP 0x%06x is UD: its jobs send (op send, "
				"send_imm, pingpong) or receive (op recv)", q.qpn);
	remote = !ud && op != ROCE_WR_SEND && op != OP_RECV && op != OP_MIXED_RECV &&
		op != OP_PINGPONG;
	if ((ret = roce_ctl_arg_u64(req, reply, "remote_addr", &g.raddr, remote, 0,
				UINT64_MAX)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "rkey", &g.rkey, remote, 0,
				UINT32_MAX)) < 0)
		return ret;
	if ((!ud || op == OP_RECV) && (json_object_get(req, "ah") != NULL ||
			json_object_get(req, "remote") != NULL))
		return roce_ctl_error(reply, -EINVAL, "ah, remote: for the SENDs of a UD QP's job");
	if (ud && (ret = roced_arg_ud_job(st, req, reply, &q, op != OP_RECV, &g.ah,
				&g.remote_qpn, &g.remote_qkey)) < 0)
		return ret;
	g.rate_bps *= 1000000;
	if (!ud && !roced_qp_connected(&q))
		return roce_ctl_error(reply, -EPERM, "QP 0x%06x is not connected", q.qpn);
	g.qpn = q.qpn;
	g.mode = op_modes[op][lat];
	if (g.mode == ROCE_GEN_MODE_NUM)
		return roce_ctl_error(reply, -EINVAL, "mode bidi: only for op send");
	g.op = op >= OP_RECV ? ROCE_WR_SEND : (enum roce_wr_opcode)op;
	g.size = sge.length;
	g.laddr = sge.addr;
	g.lkey = sge.lkey;
	g.duration_ns = ms * 1000000;
	/* a pingpong's depth is its receives' (their rx depth) */
	g.depth = g.depth != 0 ? g.depth : g.mode == ROCE_GEN_RECV ||
		g.mode == ROCE_GEN_MIXED_RECV || g.mode == ROCE_GEN_PINGPONG ? rq : sq;
	/* Never more in flight than the queue the job fills holds. */
	g.depth = RTE_MIN(g.depth, g.mode == ROCE_GEN_RECV || g.mode == ROCE_GEN_MIXED_RECV ||
			g.mode == ROCE_GEN_LAT_SEND || g.mode == ROCE_GEN_PINGPONG ? rq : sq);
	if (g.cq_mod > 1 && g.mode != ROCE_GEN_BW)
		return roce_ctl_error(reply, -EINVAL, "cq_mod: for the bandwidth jobs of send "
				"work requests");
	if (g.cq_mod > g.depth)
		return roce_ctl_error(reply, -EINVAL, "cq_mod %u: more than the %u work "
				"requests the job keeps in flight (depth)", g.cq_mod, g.depth);
	if (g.post_list > g.depth)
		return roce_ctl_error(reply, -EINVAL, "post_list %u: more than the %u work "
				"requests the job keeps in flight (depth)", g.post_list, g.depth);
	if (grh != 0 && g.mode == ROCE_GEN_RECV && g.laddr - m.iova + g.size + grh > m.length)
		return roce_ctl_error(reply, -EINVAL, "length: a UD receive of %u bytes takes %u "
				"with the GRH area, beyond the MR's end", g.size, g.size + grh);
	if (op == OP_PINGPONG)
		ret = job_pingpong_args(&m, req, reply, &g, grh);
	else if (lat == MODE_LAT || lat == MODE_BIDI)
		ret = job_lat_args(&m, req, reply, &g, grh);
	if (ret < 0)
		return ret;
	if ((op == OP_MIXED || op == OP_MIXED_RECV) &&
			(ret = job_mixed_args(&m, req, reply, &g)) < 0)
		return ret;
	ret = roce_dp_gen_start(st->dp, &g);
	return ret == 0 ? 0 : roce_ctl_error(reply, ret, "cannot start: %s", strerror(-ret));
}

static int
cmd_job_stop(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_qp_info q;
	int ret = roced_arg_qp(st, req, reply, &q);

	if (ret < 0)
		return ret;
	ret = roce_dp_gen_stop(st->dp, q.qpn);
	return ret == 0 ? 0 : roce_ctl_error(reply, ret, "no job on QP 0x%06x", q.qpn);
}

/* The summary; with @p buckets also the non-empty buckets, [midpoint ns, count] pairs. */
static json_t *
lat_json(const struct roce_hist *h, bool buckets)
{
	struct roce_hist_summary s;
	json_t *o, *b;
	unsigned int i;

	roce_hist_summarize(h, &s);
	o = json_pack("{s:o, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "samples", roce_ctl_u64(s.n),
			"min", s.min, "max", s.max, "median", s.median, "avg", s.avg,
			"stdev", s.stdev, "p99", s.p99, "p999", s.p999);
	if (!buckets)
		return o;
	b = json_array();
	for (i = 0; i < ROCE_HIST_BUCKETS; i++)
		if (h->b[i] != 0)
			json_array_append_new(b, json_pack("[f, i]", roce_hist_value(i),
					(json_int_t)h->b[i]));
	json_object_set_new(o, "hist", b);
	return o;
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
	struct roce_dp_qp_info q;
	bool buckets = false;
	json_t *job;
	int ret = roced_arg_qp(st, req, reply, &q);

	if (ret < 0 || (ret = roce_ctl_arg_bool(req, reply, "hist", &buckets, false)) < 0)
		return ret;
	h = rte_malloc("roced_hist", sizeof(*h), 0);
	if (h == NULL)
		return roce_ctl_error(reply, -ENOMEM, "no memory for the histogram");
	ret = roce_dp_gen_stats(st->dp, q.qpn, &g, h);
	if (ret != 0) {
		rte_free(h);
		return roce_ctl_error(reply, ret, "no job on QP 0x%06x", q.qpn);
	}
	job = progress_json(json_boolean(g.running), &(struct roce_gen_total){
			.posted = g.posted, .completed = g.completed, .received = g.received,
			.errors = g.errors, .bytes = g.bytes, .peak_bps = g.peak_bps,
			.verify_errors = g.verify_errors, .max_ns = g.end_ns - g.start_ns,
			.first_error = g.first_error });
	/* On the daemon's clock: jobs of one daemon can be laid side by side. */
	json_object_set_new(job, "start_ns", roce_ctl_u64(g.start_ns));
	json_object_set_new(job, "end_ns", roce_ctl_u64(g.end_ns));
	if (g.verify_errors != 0)
		json_object_set_new(job, "first_bad", roce_ctl_u64(g.first_bad));
	/* Round-trip samples in ns: the time between two consecutive posts. */
	if (h->n != 0)
		json_object_set_new(job, "rtt_ns", lat_json(h, buckets));
	rte_free(h);
	json_object_set_new(reply, "job", job);
	return 0;
}

/* The QPNs of the QPs in the asking client's PDs, into a new array (*nb of them). */
static int
client_qpns(struct roced_state *st, uint32_t **qpns, uint32_t *nb)
{
	uint32_t pdns[ROCE_DP_MAX_PDS];
	unsigned int i, npd;
	int n, total = 0, got;

	npd = roce_dp_pd_list(st->dp, roce_ctl_server_client(st->srv), pdns, RTE_DIM(pdns));
	for (i = 0; i < npd; i++) {
		n = roce_dp_qp_list(st->dp, pdns[i], NULL, 0);
		if (n < 0)
			return n;
		total += n;
	}
	*qpns = malloc(((size_t)total + 1) * sizeof(**qpns));
	if (*qpns == NULL)
		return -ENOMEM;
	for (i = 0, *nb = 0; i < npd; i++) {
		got = roce_dp_qp_list(st->dp, pdns[i], *qpns + *nb, (unsigned int)total - *nb);
		if (got < 0)
			return got;
		*nb += RTE_MIN((uint32_t)got, (uint32_t)total - *nb);
	}
	return 0;
}

/* The jobs of every QP, or with owned=true of the QPs in the asking client's PDs, added up. */
static int
cmd_job_total(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_gen_total t;
	uint32_t *qpns = NULL, n = 0;
	bool owned = false;
	json_t *total;
	int ret;

	if ((ret = roce_ctl_arg_bool(req, reply, "owned", &owned, false)) < 0)
		return ret;
	if (owned && (ret = client_qpns(st, &qpns, &n)) < 0) {
		free(qpns);
		return roce_ctl_error(reply, ret, "cannot list the QPs: %s", strerror(-ret));
	}
	/* None of the client's: an empty list, not every QP. */
	ret = roce_dp_gen_total(st->dp, owned ? qpns : NULL, n, &t);
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
	int nqp = roce_dp_qp_list(st->dp, ROCE_DP_PD_ANY, NULL, 0);
	unsigned int nmr = roce_dp_mr_list(st->dp, ROCE_DP_PD_ANY, NULL, 0);
	uint64_t mbufs[2] = {0}, quiesces, restarts;

	RTE_SET_USED(req);
	if (st->start_ns == 0)
		st->start_ns = roce_dp_now();
	json_object_set_new(reply, "version", json_string("0.1.0"));
	json_object_set_new(reply, "workers", json_integer(roce_dp_nb_workers(st->dp)));
	json_object_set_new(reply, "ports", json_integer(st->conf.nb_ports));
	json_object_set_new(reply, "qps", json_integer(RTE_MAX(nqp, 0)));
	json_object_set_new(reply, "pds", json_integer(roce_dp_pd_list(st->dp, ROCE_DP_PD_ANY,
			NULL, 0)));
	json_object_set_new(reply, "mrs", json_integer(nmr));
	json_object_set_new(reply, "classifier",
			json_string(roce_classify_impl_name(ROCE_CLASSIFY_AUTO)));
	json_object_set_new(reply, "heap_bytes", roce_ctl_u64(heap_bytes()));
	rte_mempool_walk(mempool_use, mbufs);
	json_object_set_new(reply, "mbufs_in_use", roce_ctl_u64(mbufs[0]));
	json_object_set_new(reply, "mbufs", roce_ctl_u64(mbufs[1]));
	/* What requests may ask for, so clients (rocectl perf) need not hard-code it. */
	json_object_set_new(reply, "limits", json_pack("{s:I, s:i, s:I, s:i, s:i, s:i, s:i, s:i}",
			"max_qps", (json_int_t)st->conf.max_qps * roce_dp_nb_workers(st->dp),
			"max_qp_depth", ROCE_DP_MAX_DEPTH, "max_mr_size", (json_int_t)ROCED_MR_MAX,
			"max_rd_atomic", ROCED_RD_ATOMIC_MAX, "max_inflight", ROCE_MAX_INFLIGHT_MAX,
			"mr_dump_max", ROCED_DUMP_MAX, "max_mrs", ROCE_DP_MAX_MRS,
			"max_pds", ROCE_DP_MAX_PDS));
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
		roce_dp_port_stats(st->dp, i, &es);
		/* The ethdev's own statistics, named as struct rte_eth_stats (testpmd's
		 * "show port stats"). */
		json_array_append_new(list, json_pack(
				"{s:i, s:s, s:s, s:o, s:o, s:i, s:i, s:i, s:i, s:b, s:b, s:i, s:s, s:i, "
				"s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}}",
				"port", i, "device", p->name, "driver", p->profile->family,
				"mac", roced_mac_json(&p->mac), "ip", roced_ip_json(a->ip4, 0),
				"prefix", a->prefix4, "mtu", p->mtu, "ip_mtu", st->conf.mtu, "queues", p->nb_queues,
				"tested", p->profile->tested, "link_up", link.link_status,
				"speed_mbps", link.link_speed,
				"tx", p->tx_max_segs != 0 ? "zero-copy" : "copy",
				"tx_max_segs", p->tx_max_segs, "stats",
				"ipackets", roce_ctl_u64(es.ipackets), "opackets", roce_ctl_u64(es.opackets),
				"ibytes", roce_ctl_u64(es.ibytes), "obytes", roce_ctl_u64(es.obytes),
				"imissed", roce_ctl_u64(es.imissed), "ierrors", roce_ctl_u64(es.ierrors),
				"oerrors", roce_ctl_u64(es.oerrors), "rx_nombuf", roce_ctl_u64(es.rx_nombuf)));
	}
	json_object_set_new(reply, "ports", list);
	return 0;
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
	{ "pd.create", roced_cmd_pd_create, "allocate a protection domain (cmd_verbs.c)",
		"owned" },
	{ "pd.destroy", roced_cmd_pd_destroy, "free a PD (with force: and all in it)",
		"pd force" },
	{ "pd.show", roced_cmd_pd_show, "list PDs", "pd" },
	{ "mr.reg", roced_cmd_mr_reg, "register memory", "size access socket pd" },
	{ "mr.dereg", roced_cmd_mr_dereg, "deregister memory", "rkey" },
	{ "mr.show", roced_cmd_mr_show, "list MRs", "rkey" },
	{ "mr.fill", roced_cmd_mr_fill, "fill an MR range with a pattern",
		"rkey offset length pattern" },
	{ "mr.dump", roced_cmd_mr_dump, "bytes of an MR range, in hex", "rkey offset length" },
	{ "mr.write", roced_cmd_mr_write, "write bytes given in hex into an MR", "rkey offset hex" },
	{ "mr.digest", roced_cmd_mr_digest, "CRC-32 of an MR range", "rkey offset length" },
	{ "qp.create", roced_cmd_qp_create, "create an RC QP (in INIT) or a UD QP (in RTS)",
		"type qkey mtu worker port sq_depth rq_depth max_inline access pd" },
	{ "qp.connect", roced_cmd_qp_connect, "connect a QP to its peer",
		"qpn remote mtu timeout retry_cnt rnr_retry min_rnr_timer max_rd_atomic\n\t\t"
		"max_dest_rd_atomic dscp access sr sr_rto_us max_inflight" },
	{ "qp.show", roced_cmd_qp_show, "list QPs", "qpn" },
	{ "qp.destroy", roced_cmd_qp_destroy, "destroy a QP", "qpn" },
	{ "post.write", roced_cmd_post_write, "post RDMA WRITEs",
		"qpn lkey offset length remote_addr rkey imm count signaled wr_id" },
	{ "post.read", roced_cmd_post_read, "post RDMA READs",
		"qpn lkey offset length remote_addr rkey count signaled wr_id" },
	{ "post.send", roced_cmd_post_send, "post SENDs (UD: to an AH or an address)",
		"qpn lkey offset length imm inline count signaled wr_id ah remote dscp hop_limit" },
	{ "post.cas", roced_cmd_post_cas, "post atomic compare-and-swaps",
		"qpn lkey offset length remote_addr rkey compare swap count signaled wr_id" },
	{ "post.faa", roced_cmd_post_faa, "post atomic fetch-and-adds",
		"qpn lkey offset length remote_addr rkey add count signaled wr_id" },
	{ "post.recv", roced_cmd_post_recv, "post receives", "qpn lkey offset length count wr_id" },
	{ "cq.poll", roced_cmd_cq_poll, "completions of a QP", "qpn max" },
	{ "ah.create", roced_cmd_ah_create, "an address handle for UD sends (cmd_verbs.c)",
		"ip mac port dscp hop_limit pd" },
	{ "ah.destroy", roced_cmd_ah_destroy, "destroy an address handle", "ah" },
	{ "ah.show", roced_cmd_ah_show, "list address handles", "ah" },
	{ "job.start", cmd_job_start, "run traffic on a QP: bandwidth, a latency ping-pong, or "
		"rdma-core's pingpong examples (UD: SENDs through an AH)",
		"qpn op mode lkey offset length count duration_ms depth rate_mbps post_list cq_mod "
		"remote_addr rkey initiator recv_offset seed ah remote" },
	{ "job.stop", cmd_job_stop, "stop a job", "qpn" },
	{ "job.show", cmd_job_show, "a job's progress", "qpn hist" },
	{ "job.total", cmd_job_total, "the jobs' progress added up", "owned" },
	{ "stats", roced_cmd_stats, "traffic totals, ports' ethdev statistics, workers' busy time "
		"(cmd_stats.c)", "xstats" },
	{ "stats.stages", roced_cmd_stats_stages, "where the workers' time goes: TSC cycles "
		"per stage of the loop (a -Dstage_stamps=true build; cmd_stats.c)", "worker clear" },
	{ "counters", roced_cmd_counters, "every counter, summed over workers (or of a QP, worker, "
		"port)", "qpn worker port nonzero describe match" },
	{ "counters.clear", roced_cmd_counters_clear, "count from zero again (testpmd's clear "
		"port stats)", "" },
	{ "impair.set", roced_cmd_impair_set, "impair a port's rx or tx (cmd_impair.c)",
		"spec port dir" },
	{ "impair.show", roced_cmd_impair_show, "impairments and their counters", "port dir" },
	{ "impair.clear", roced_cmd_impair_clear, "stop impairing", "port dir" },
	{ "pfc.show", roced_cmd_pfc_show, "priority flow control of the ports: mode, pauses "
		"received and honoured, time paused (cmd_pfc.c)", "port" },
	{ "pfc.set", roced_cmd_pfc_set, "software PFC of a port: mode sw|off, priorities, "
		"watchdog, DSCP map, link speed of the quanta", "port mode prios watchdog_ms dscp2prio "
		"link_mbps" },
	{ "cc.show", roced_cmd_cc_show, "congestion control: profile, ECN, knobs; or a QP's "
		"rate, target rate, alpha (cmd_cc.c)", "qpn describe" },
	{ "cc.set", roced_cmd_cc_set, "congestion control: profile mlx5|paper|off, ecn, knobs by "
		"mlx5 name; or a QP's own knobs", roced_cc_set_args },
	{ "cc.trace", roced_cmd_cc_trace, "a QP's congestion control trace from a cursor on: "
		"time, rate, target rate, alpha, CNPs, event (cmd_cc.c)", "qpn cursor limit" },
	{ "neigh.show", roced_cmd_neigh_show, "neighbour tables: IP, MAC, state, age (cmd_neigh.c)",
		"ip port" },
	{ "neigh.flush", roced_cmd_neigh_flush, "forget neighbours: all, or one IP", "ip port" },
	{ "gsi.show", roced_cmd_gsi_show, "each port's QP1 and the GSI agent's counters "
		"(cmd_gsi.c)", "port" },
	{ "gsi.sidr", roced_cmd_gsi_sidr, "resolve a service ID at a peer's CM through QP1: "
		"SIDR_REQ, SIDR_REP", "ip port service_id timeout_ms" },
	{ "cm.listen", roced_cmd_cm_listen, "listen for rdma_cm connections on a TCP port's "
		"service ID (cmd_cm.c)", "port ip backlog accept pd sq_depth rq_depth owned" },
	{ "cm.unlisten", roced_cmd_cm_unlisten, "stop listening", "port" },
	{ "cm.connect", roced_cmd_cm_connect, "connect an RC QP in INIT through the CM (REQ)",
		"qpn ip port mtu retry_count rnr_retry_count responder_resources initiator_depth "
		"private_data" },
	{ "cm.accept", roced_cmd_cm_accept, "answer a connect_request with a QP (REP)",
		"conn qpn responder_resources initiator_depth private_data" },
	{ "cm.reject", roced_cmd_cm_reject, "refuse a connect_request (REJ)",
		"conn reason private_data" },
	{ "cm.disconnect", roced_cmd_cm_disconnect, "disconnect (DREQ)", "conn" },
	{ "cm.show", roced_cmd_cm_show, "listeners, connections and the CM's counters", "" },
	{ "cm.events", roced_cmd_cm_events, "connection events after a sequence number",
		"since max conn" },
	{ "capture.start", roced_cmd_capture_start, "capture the ports' rx and tx to a pcapng "
		"file (cmd_capture.c)", "file port dir snaplen count" },
	{ "capture.stop", roced_cmd_capture_stop, "stop capturing, finish the file", "" },
	{ "capture.show", roced_cmd_capture_show, "the running or last capture", "" },
	{ "shutdown", cmd_shutdown, "stop the daemon", "" },
};

const unsigned int roced_nb_cmds = RTE_DIM(roced_cmds);

static void
print_sink(void *arg, const char *name, const char *description, uint64_t value)
{
	const struct roce_counter_desc *d = roce_dp_counter_family.desc;

	RTE_SET_USED(description);
	/* The loop's clock runs without traffic: the busy fraction has its own line. */
	if (strcmp(name, d[ROCE_DP_LOOP_NS].name) == 0 || strcmp(name, d[ROCE_DP_BUSY_NS].name) == 0)
		return;
	(*(unsigned int *)arg)++;
	printf("  %-28s %" PRIu64 "\n", name, value);
}

/* The workers' busy time over their life (or since counters.clear), for the exit report. */
static void
print_busy(struct roced_state *st)
{
	struct roce_worker_stats s;

	if (roce_dp_counters_sum(st->dp, 0, roce_dp_nb_workers(st->dp), &s) == 0 &&
			s.dp[ROCE_DP_LOOP_NS] != 0)
		printf("roced: workers busy %.1f %% of their loop time\n",
				100.0 * (double)s.dp[ROCE_DP_BUSY_NS] / (double)s.dp[ROCE_DP_LOOP_NS]);
}

void
roced_shutdown(struct roced_state *st)
{
	unsigned int printed = 0;

	/* What the run did, before the shutdown's own calls to the workers count as RPCs. */
	printf("roced: final counters (non-zero):\n");
	roce_dp_counters_emit(st->dp, 0, roce_dp_nb_workers(st->dp), ROCE_COUNTERS_NONZERO,
			print_sink, &printed);
	if (printed == 0)
		printf("  (none: no traffic)\n");
	print_busy(st);
	roced_cm_fini(st);
	roce_dp_qp_error_all(st->dp);
	roce_dp_stop(st->dp);
	roced_quiesce_detach();
	roced_impair_fini(st);
	roce_dp_destroy(st->dp);
	roced_stats_fini(st);
}
