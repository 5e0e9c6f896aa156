/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs façade (roce_dp_verbs.h): PDs, MRs and AHs on the control thread, QPs and CQs on
 * their workers through roce_dp_call(). A QP's PD number and starting PSN ride in its qp_context,
 * so nothing about a QP is kept here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_random.h>

#include "dp_private.h"
#include "roce_dp_verbs.h"

#define RPC_MS 5000
/* While deregistered MRs wait for their frames: how often the PMDs are asked to free them. */
#define MR_CLEANUP_NS 100000000ull

/* What a QP's qp_context holds. */
#define CTX(pdn, psn) ((uint64_t)(pdn) | (uint64_t)(psn) << 32)
#define CTX_PDN(ctx) ((uint32_t)(ctx))
#define CTX_PSN(ctx) ((uint32_t)((ctx) >> 32))

struct dp_mr {
	TAILQ_ENTRY(dp_mr) link;
	struct roce_mr *mr;
	uint8_t *buf;
	uint32_t key;
	uint32_t pdn;
	uint32_t id;
	/* Once gone (dp->mr_gone) with its PD freed: the transport PD, freed with the last. */
	struct roce_pd *pd_gone;
};

/* An AH: work requests on any worker copy from it while the control thread posts them. */
struct dp_ah {
	struct roce_ah *ah;            /* NULL: slot free */
	uint32_t pdn;
	uint16_t port;
};

struct dp_pd {
	struct roce_pd *pd;            /* NULL: slot free */
	uint64_t owner;
	uint32_t nb_qps;
	uint32_t nb_mrs;
	uint32_t nb_ahs;
	uint8_t is_default;
	TAILQ_HEAD(, dp_mr) mrs;
};

/* ---- PDs ---- */

static struct dp_pd *
pd_get(const struct roce_dp *dp, uint32_t pdn)
{
	return pdn < ROCE_DP_MAX_PDS && dp->pds[pdn].pd != NULL ? &dp->pds[pdn] : NULL;
}

int
dp_verbs_init(struct roce_dp *dp)
{
	struct rte_hash_parameters hp = {
		.name = "roce_dp_mrs",
		.entries = ROCE_DP_MAX_MRS,
		.key_len = sizeof(uint32_t),
		.hash_func = rte_jhash,
		.socket_id = SOCKET_ID_ANY,
	};
	unsigned int i;

	dp->pds = rte_zmalloc("roce_dp_pds", ROCE_DP_MAX_PDS * sizeof(dp->pds[0]), 0);
	dp->ahs = rte_zmalloc("roce_dp_ahs", (ROCE_DP_MAX_AHS + 1) * sizeof(dp->ahs[0]), 0);
	dp->mr_hash = rte_hash_create(&hp);
	if (dp->pds == NULL || dp->ahs == NULL || dp->mr_hash == NULL)
		return -ENOMEM;
	for (i = 0; i < ROCE_DP_MAX_PDS; i++)
		TAILQ_INIT(&dp->pds[i].mrs);
	TAILQ_INIT(&dp->mr_gone);
	dp->pds[ROCE_DP_PD_SHARED].pd = roce_pd_alloc(SOCKET_ID_ANY);
	return dp->pds[ROCE_DP_PD_SHARED].pd == NULL ? -ENOMEM : 0;
}

/* After the workers stopped: every MR and PD goes (the engines took their QPs). */
void
dp_verbs_fini(struct roce_dp *dp)
{
	unsigned int i, left = dp_mr_reap(dp);

	for (i = 1; dp->ahs != NULL && i <= ROCE_DP_MAX_AHS; i++)
		roce_ah_destroy(dp->ahs[i].ah);
	for (i = 0; dp->pds != NULL && i < ROCE_DP_MAX_PDS; i++) {
		struct dp_pd *pd = &dp->pds[i];
		struct dp_mr *m;

		while ((m = TAILQ_FIRST(&pd->mrs)) != NULL) {
			TAILQ_REMOVE(&pd->mrs, m, link);
			if (roce_mr_dereg(m->mr) != 0) {
				left++;
				continue;
			}
			rte_free(m->buf);
			rte_free(m);
		}
		if (pd->pd != NULL)
			roce_pd_free(pd->pd);
	}
	/* Frames the ports never gave back: their MRs' bytes stay allocated. */
	if (left != 0)
		ROCE_LOG(WARNING, "%u MR(s) still referenced by frames at exit: not freed\n",
				left);
	rte_hash_free(dp->mr_hash);
	rte_free(dp->ahs);
	rte_free(dp->pds);
}

int
roce_dp_pd_alloc(struct roce_dp *dp, uint64_t owner, uint32_t *pdn)
{
	uint32_t i;

	for (i = 1; i < ROCE_DP_MAX_PDS; i++) {
		struct dp_pd *pd = &dp->pds[i];

		if (pd->pd != NULL)
			continue;
		pd->pd = roce_pd_alloc(SOCKET_ID_ANY);
		if (pd->pd == NULL)
			return -ENOMEM;
		pd->owner = owner;
		pd->nb_qps = pd->nb_mrs = pd->nb_ahs = 0;
		pd->is_default = 0;
		*pdn = i;
		return 0;
	}
	return -ENOSPC;
}

int
roce_dp_pd_default(struct roce_dp *dp, uint64_t owner, uint32_t *pdn)
{
	uint32_t i;
	int ret;

	if (owner == 0)
		return -EINVAL;
	for (i = 1; i < ROCE_DP_MAX_PDS; i++)
		if (dp->pds[i].pd != NULL && dp->pds[i].is_default && dp->pds[i].owner == owner) {
			*pdn = i;
			return 0;
		}
	ret = roce_dp_pd_alloc(dp, owner, pdn);
	if (ret == 0)
		dp->pds[*pdn].is_default = 1;
	return ret;
}

int
roce_dp_pd_free(struct roce_dp *dp, uint32_t pdn)
{
	struct dp_pd *pd = pd_get(dp, pdn);

	if (pd == NULL)
		return -ENOENT;
	if (pdn == ROCE_DP_PD_SHARED)
		return -EPERM;
	if (pd->nb_qps != 0 || pd->nb_mrs != 0 || pd->nb_ahs != 0)
		return -EBUSY;
	if (roce_pd_free(pd->pd) != 0) {
		struct dp_mr *m;

		/* Its gone MRs still hold it: the last of them to go frees it. */
		TAILQ_FOREACH(m, &dp->mr_gone, link)
			if (m->pdn == pdn && m->pd_gone == NULL)
				m->pd_gone = pd->pd;
	}
	pd->pd = NULL;
	return 0;
}

int
roce_dp_pd_query(const struct roce_dp *dp, uint32_t pdn, struct roce_dp_pd_info *info)
{
	const struct dp_pd *pd = pd_get(dp, pdn);

	if (pd == NULL)
		return -ENOENT;
	info->pdn = pdn;
	info->owner = pd->owner;
	info->nb_mrs = pd->nb_mrs;
	info->nb_qps = pd->nb_qps;
	info->nb_ahs = pd->nb_ahs;
	info->is_default = pd->is_default;
	return 0;
}

unsigned int
roce_dp_pd_list(const struct roce_dp *dp, uint64_t owner, uint32_t *pdns, unsigned int max)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 0; i < ROCE_DP_MAX_PDS; i++) {
		if (dp->pds[i].pd == NULL || (owner != ROCE_DP_PD_ANY && dp->pds[i].owner != owner))
			continue;
		if (n < max)
			pdns[n] = i;
		n++;
	}
	return n;
}

/* ---- MRs ---- */

static struct dp_mr *
mr_get(const struct roce_dp *dp, uint32_t key)
{
	void *m;

	return rte_hash_lookup_data(dp->mr_hash, &key, &m) >= 0 ? m : NULL;
}

static void
mr_info(const struct dp_mr *m, struct roce_dp_mr_info *info)
{
	info->key = m->key;
	info->pdn = m->pdn;
	info->id = m->id;
	info->access = roce_mr_access(m->mr);
	info->iova = roce_mr_iova(m->mr);
	info->length = roce_mr_length(m->mr);
	info->addr = m->buf;
	info->key_valid = roce_mr_find(m->key) == m->mr;
}

/*
 * Whether @len bytes of DPDK heap at @buf are IOVA-contiguous (always so with IOVA as VA;
 * memseg by memseg with physical addresses), so that frames may carry them as attached
 * segments: the EAL has mapped its heap for every device's DMA already.
 */
static int
mr_iova_contig(const uint8_t *buf, uint64_t len, uint64_t *iova)
{
	const struct rte_memseg_list *msl = rte_mem_virt2memseg_list(buf);
	const struct rte_memseg *ms = msl != NULL ? rte_mem_virt2memseg(buf, msl) : NULL;
	uint64_t off;

	*iova = ms != NULL ? ms->iova : RTE_BAD_IOVA;
	if (*iova == RTE_BAD_IOVA || msl->external)
		return 0;
	*iova += RTE_PTR_DIFF(buf, ms->addr);
	if (rte_eal_iova_mode() == RTE_IOVA_VA)
		return 1;
	/* Each later segment must go on where the one before ends. */
	for (off = RTE_PTR_DIFF(RTE_PTR_ADD(ms->addr, ms->len), buf); off < len; off += ms->len) {
		ms = rte_mem_virt2memseg(buf + off, msl);
		if (ms == NULL || ms->iova != *iova + off)
			return 0;
	}
	return 1;
}

int
roce_dp_mr_reg(struct roce_dp *dp, uint32_t pdn, uint64_t length, unsigned int access,
		int socket, struct roce_dp_mr_info *info)
{
	struct dp_pd *pd = pd_get(dp, pdn);
	struct roce_mr_attr ma = {0};
	struct dp_mr *m;
	int ret;

	if (pd == NULL)
		return -ENOENT;
	m = rte_zmalloc("roce_dp_mr", sizeof(*m), 0);
	if (m == NULL)
		return -ENOMEM;
	m->buf = rte_zmalloc_socket("roce_dp_mr_buf", length != 0 ? length : 1, 64, socket);
	if (m->buf == NULL) {
		rte_free(m);
		return -ENOMEM;
	}
	ma.tx_dma = mr_iova_contig(m->buf, length != 0 ? length : 1, &ma.tx_iova);
	m->mr = roce_mr_reg(pd->pd, m->buf, length, access, &ma);
	if (m->mr == NULL) {
		ret = -rte_errno;
		goto fail;
	}
	m->key = roce_mr_rkey(m->mr);
	m->pdn = pdn;
	m->id = ++dp->next_mr_id;
	ret = rte_hash_add_key_data(dp->mr_hash, &m->key, m);
	if (ret != 0) {
		roce_mr_dereg(m->mr);
		goto fail;
	}
	TAILQ_INSERT_TAIL(&pd->mrs, m, link);
	pd->nb_mrs++;
	mr_info(m, info);
	return 0;
fail:
	rte_free(m->buf);
	rte_free(m);
	return ret;
}

static int
mr_revoke_on_worker(struct roce_worker *w, void *arg)
{
	const struct roce_mr *mr = arg;

	roce_engine_mr_revoke(w->eng, mr);
	dp_services_mr_revoke(w, roce_mr_lkey(mr));
	return 0;
}

/* Deregister and free @m unless frames still refer to its bytes. @return 1 when freed. */
static int
mr_release(struct dp_mr *m)
{
	if (roce_mr_dereg(m->mr) != 0)
		return 0;
	/* The transport PD goes with its last MR (the PD's slot was freed meanwhile). */
	if (m->pd_gone != NULL)
		roce_pd_free(m->pd_gone);
	rte_free(m->buf);
	rte_free(m);
	return 1;
}

static void
mr_free(struct roce_dp *dp, struct dp_mr *m)
{
	struct dp_pd *pd = &dp->pds[m->pdn];
	unsigned int i;

	/* No new lookup finds it; then each worker, between two bursts, drops what it holds in
	 * it, after which nothing can reach it and it is freed. */
	roce_mr_invalidate(m->mr);
	for (i = 0; dp->started && i < dp->conf.nb_workers; i++)
		while (roce_dp_call(dp, i, mr_revoke_on_worker, m->mr, 1000) == -EBUSY)
			rte_delay_us_sleep(100);
	rte_hash_del_key(dp->mr_hash, &m->key);
	TAILQ_REMOVE(&pd->mrs, m, link);
	pd->nb_mrs--;
	/* Frames still carrying its bytes (zero-copy) keep it until the PMD gives them back. */
	if (!mr_release(m))
		TAILQ_INSERT_TAIL(&dp->mr_gone, m, link);
}

/* Have the PMD free what it has sent (NICs free on later bursts only: an idle port keeps). */
static int
tx_cleanup_on_worker(struct roce_worker *w, void *arg)
{
	unsigned int p;

	RTE_SET_USED(arg);
	for (p = 0; p < w->dp->nb_ports; p++)
		if (w->txq[p].ring == NULL)
			rte_eth_tx_done_cleanup(w->txq[p].port_id, w->txq[p].queue_id, 0);
	return 0;
}

unsigned int
dp_mr_reap(struct roce_dp *dp)
{
	struct dp_mr *m, *next;
	unsigned int left = 0, i;
	uint64_t now;

	/* Invalidated and revoked, a gone MR only loses references. */
	for (m = TAILQ_FIRST(&dp->mr_gone); m != NULL; m = next) {
		next = TAILQ_NEXT(m, link);
		if (roce_mr_tx_refs(m->mr) != 0) {
			left++;
			continue;
		}
		TAILQ_REMOVE(&dp->mr_gone, m, link);
		mr_release(m);
	}
	now = roce_dp_now();
	if (left != 0 && dp->started && now - dp->mr_gone_cleanup_ns >= MR_CLEANUP_NS) {
		dp->mr_gone_cleanup_ns = now;
		for (i = 0; i < dp->conf.nb_workers; i++)
			roce_dp_call(dp, i, tx_cleanup_on_worker, NULL, 100);
	}
	return left;
}

int
roce_dp_mr_dereg(struct roce_dp *dp, uint32_t key)
{
	struct dp_mr *m = mr_get(dp, key);

	if (m == NULL)
		return -ENOENT;
	mr_free(dp, m);
	return 0;
}

int
roce_dp_mr_query(const struct roce_dp *dp, uint32_t key, struct roce_dp_mr_info *info)
{
	const struct dp_mr *m = mr_get(dp, key);

	if (m == NULL)
		return -ENOENT;
	mr_info(m, info);
	return 0;
}

unsigned int
roce_dp_mr_list(const struct roce_dp *dp, uint32_t pdn, struct roce_dp_mr_info *out,
		unsigned int max)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 0; i < ROCE_DP_MAX_PDS; i++) {
		const struct dp_mr *m;

		if (pdn != ROCE_DP_PD_ANY && i != pdn)
			continue;
		TAILQ_FOREACH(m, &dp->pds[i].mrs, link) {
			if (n < max)
				mr_info(m, &out[n]);
			n++;
		}
	}
	return n;
}

/* ---- QPs ---- */

/* The worker owning @qpn and its QP there; -ENOENT when none. */
static int
qp_owner(const struct roce_dp *dp, uint32_t qpn, unsigned int *worker)
{
	int w = roce_dp_qpn_owner(dp, qpn);

	if (w < 0)
		return -ENOENT;
	*worker = (unsigned int)w;
	return 0;
}

static struct roce_qp *
worker_qp(struct roce_worker *w, uint32_t qpn)
{
	return roce_engine_qp(w->eng, qpn);
}

struct create_rpc {
	const struct roce_dp_qp_init *init;
	struct roce_pd *pd;
	uint64_t ctx;
	uint32_t qpn;
};

static int
create_on_worker(struct roce_worker *w, void *arg)
{
	struct create_rpc *c = arg;
	const struct roce_dp_qp_init *in = c->init;
	struct roce_qp_init_attr ia = {
		.max_send_wr = in->sq_depth,
		.max_recv_wr = in->rq_depth,
		.max_inline_data = in->max_inline,
		.qp_context = c->ctx,
		.qp_type = in->type,
	};
	struct roce_qp_attr a = {
		.qp_state = ROCE_QPS_INIT,
		.qp_access_flags = in->access,
		.port_num = (uint8_t)(in->port + 1),   /* from 1, as in verbs */
		.qkey = in->qkey,
		.path_mtu = (enum roce_mtu)(rte_log2_u32(RTE_MAX(in->mtu, 256u)) - 7),
		.sq_psn = CTX_PSN(c->ctx),
	};
	int ud = in->type == ROCE_QPT_UD;
	struct roce_qp *qp;
	int ret;

	ia.send_cq = ia.recv_cq = roce_cq_create(2 * (in->sq_depth + in->rq_depth), w->socket);
	if (ia.send_cq == NULL)
		return -rte_errno;
	qp = roce_qp_create(w->eng, c->pd, &ia);
	if (qp == NULL) {
		ret = -rte_errno;
		roce_cq_destroy(ia.send_cq);
		return ret;
	}
	if (!ud) {
		ret = roce_qp_modify(qp, &a, ROCE_QP_STATE | ROCE_QP_ACCESS_FLAGS | ROCE_QP_PORT);
	} else {
		/* Nothing to connect: as ibv_ud_pingpong, INIT, RTR and RTS at once. */
		ret = roce_qp_modify(qp, &a, ROCE_QP_STATE | ROCE_QP_PORT | ROCE_QP_QKEY |
				ROCE_QP_PKEY_INDEX | ROCE_QP_PATH_MTU);
		a.qp_state = ROCE_QPS_RTR;
		if (ret == 0)
			ret = roce_qp_modify(qp, &a, ROCE_QP_STATE);
		a.qp_state = ROCE_QPS_RTS;
		if (ret == 0)
			ret = roce_qp_modify(qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN);
	}
	if (ret != 0) {
		roce_qp_destroy(qp);
		roce_cq_destroy(ia.send_cq);
		return ret;
	}
	c->qpn = roce_qp_num(qp);
	return 0;
}

int
roce_dp_qp_create(struct roce_dp *dp, const struct roce_dp_qp_init *init, uint32_t *qpn)
{
	struct roce_dp_qp_init in = *init;
	struct dp_pd *pd = pd_get(dp, init->pdn);
	struct create_rpc c = { .init = &in };
	unsigned int worker;
	int ret;

	if (pd == NULL)
		return -ENOENT;
	in.sq_depth = in.sq_depth != 0 ? in.sq_depth : 128;
	in.rq_depth = in.rq_depth != 0 ? in.rq_depth : 128;
	in.type = in.type != 0 ? in.type : ROCE_QPT_RC;
	if (in.type == ROCE_QPT_UD && in.port < dp->nb_ports) {
		/* The most both IP versions carry: a UD QP sends to either. */
		uint32_t max = roce_dp_path_mtu_max(dp, in.port, true, false);

		if (in.mtu == 0)
			in.mtu = max;
		if (in.mtu < 256 || in.mtu > max || !rte_is_power_of_2(in.mtu))
			return -EINVAL;
		if (in.qkey & ROCE_QKEY_CONTROLLED)
			return -EPERM;
	}
	if ((in.type != ROCE_QPT_RC && in.type != ROCE_QPT_UD) ||
			(in.type == ROCE_QPT_UD && in.access != 0) ||
			in.port >= dp->nb_ports || in.worker >= (int)dp->conf.nb_workers ||
			in.sq_depth > ROCE_DP_MAX_DEPTH || in.rq_depth > ROCE_DP_MAX_DEPTH ||
			in.max_inline > ROCE_MAX_INLINE ||
			(in.access & ~(unsigned int)(ROCE_ACCESS_REMOTE_WRITE |
				ROCE_ACCESS_REMOTE_READ | ROCE_ACCESS_REMOTE_ATOMIC)) != 0)
		return -EINVAL;
	worker = in.worker >= 0 ? (unsigned int)in.worker :
		dp->next_worker++ % dp->conf.nb_workers;
	c.pd = pd->pd;
	c.ctx = CTX(init->pdn, (uint32_t)rte_rand() & ROCE_PSN_MASK);
	ret = roce_dp_call(dp, worker, create_on_worker, &c, RPC_MS);
	if (ret != 0)
		return ret;
	pd->nb_qps++;
	*qpn = c.qpn;
	return 0;
}

struct modify_rpc {
	uint32_t qpn;
	const struct roce_qp_attr *attr;
	int mask;
};

static int
modify_on_worker(struct roce_worker *w, void *arg)
{
	struct modify_rpc *c = arg;
	struct roce_qp *qp = worker_qp(w, c->qpn);

	if (qp == NULL)
		return -ENOENT;
	/* Congestion control (CNPs, DCQCN) runs on RC QPs. */
	return roce_qp_type(qp) == ROCE_QPT_UD ? roce_qp_modify(qp, c->attr, c->mask) :
		dp_cc_qp_modify(w, qp, c->attr, c->mask);
}

int
roce_dp_qp_modify(struct roce_dp *dp, uint32_t qpn, const struct roce_qp_attr *attr, int mask)
{
	struct modify_rpc c = { qpn, attr, mask };
	unsigned int worker;
	int ret = qp_owner(dp, qpn, &worker);

	if (ret != 0)
		return ret;
	if ((mask & ROCE_QP_PORT) && (attr->port_num == 0 || attr->port_num > dp->nb_ports))
		return -EINVAL;
	if ((mask & ROCE_QP_QKEY) && (attr->qkey & ROCE_QKEY_CONTROLLED))
		return -EPERM;
	return roce_dp_call(dp, worker, modify_on_worker, &c, RPC_MS);
}

struct query_rpc {
	uint32_t qpn;
	struct roce_dp_qp_info *info;
};

static int
query_on_worker(struct roce_worker *w, void *arg)
{
	struct query_rpc *c = arg;
	struct roce_qp *qp = worker_qp(w, c->qpn);
	struct roce_dp_qp_info *info = c->info;

	if (qp == NULL)
		return -ENOENT;
	roce_qp_query(qp, &info->attr);
	roce_qp_query_init(qp, &info->init);
	roce_qp_counters(qp, info->cnt);
	info->qpn = c->qpn;
	info->pdn = CTX_PDN(info->init.qp_context);
	info->psn = CTX_PSN(info->init.qp_context);
	info->port = info->attr.port_num > 0 ? info->attr.port_num - 1 : 0;
	info->worker = (uint16_t)w->idx;
	return 0;
}

int
roce_dp_qp_query(struct roce_dp *dp, uint32_t qpn, struct roce_dp_qp_info *info)
{
	struct query_rpc c = { qpn, info };
	unsigned int worker;
	int ret = qp_owner(dp, qpn, &worker);

	return ret != 0 ? ret : roce_dp_call(dp, worker, query_on_worker, &c, RPC_MS);
}

/* On the worker: the QP, its job and its CQ go; @return its PD number, or -ENOENT. */
static int
qp_destroy_here(struct roce_worker *w, struct roce_qp *qp)
{
	struct roce_qp_init_attr init;

	roce_qp_query_init(qp, &init);
	dp_services_qp_gone(w, roce_qp_num(qp));
	roce_qp_destroy(qp);
	roce_cq_destroy(init.send_cq);
	return (int)CTX_PDN(init.qp_context);
}

static int
destroy_on_worker(struct roce_worker *w, void *arg)
{
	struct roce_qp *qp = worker_qp(w, *(uint32_t *)arg);

	return qp == NULL ? -ENOENT : qp_destroy_here(w, qp);
}

int
roce_dp_qp_destroy(struct roce_dp *dp, uint32_t qpn)
{
	unsigned int worker;
	int ret = qp_owner(dp, qpn, &worker);

	if (ret != 0)
		return ret;
	ret = roce_dp_call(dp, worker, destroy_on_worker, &qpn, RPC_MS);
	if (ret < 0)
		return ret;
	dp->pds[ret].nb_qps--;
	return 0;
}

struct list_rpc {
	uint32_t pdn;
	uint32_t *qpns;
	unsigned int max;
	unsigned int n;
	unsigned int destroyed;    /* release: destroy them instead */
};

static void
list_one(struct roce_qp *qp, void *arg)
{
	struct list_rpc *c = arg;

	/* The QP1s are the GSI agent's (gsi.c), not a client's. */
	if (roce_qp_num(qp) == ROCE_GSI_QPN ||
			(c->pdn != ROCE_DP_PD_ANY && CTX_PDN(roce_qp_context(qp)) != c->pdn))
		return;
	if (c->n < c->max)
		c->qpns[c->n] = roce_qp_num(qp);
	c->n++;
}

static int
list_on_worker(struct roce_worker *w, void *arg)
{
	roce_engine_qp_foreach(w->eng, list_one, arg);
	return 0;
}

static int
qpn_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int
roce_dp_qp_list(struct roce_dp *dp, uint32_t pdn, uint32_t *qpns, unsigned int max)
{
	struct list_rpc c = { .pdn = pdn, .qpns = qpns, .max = max };
	unsigned int i;
	int ret;

	for (i = 0; i < dp->conf.nb_workers; i++) {
		ret = roce_dp_call(dp, i, list_on_worker, &c, RPC_MS);
		if (ret != 0)
			return ret;
	}
	if (qpns != NULL && max != 0)
		qsort(qpns, RTE_MIN(c.n, max), sizeof(*qpns), qpn_cmp);
	return (int)c.n;
}

/* On a worker: destroy every QP of PD c->pdn (listed first: destroying moves the table). */
static int
release_on_worker(struct roce_worker *w, void *arg)
{
	struct list_rpc *c = arg;
	unsigned int i;

	c->n = 0;
	roce_engine_qp_foreach(w->eng, list_one, c);
	for (i = 0; i < RTE_MIN(c->n, c->max); i++)
		qp_destroy_here(w, worker_qp(w, c->qpns[i]));
	c->destroyed += RTE_MIN(c->n, c->max);
	return c->n > c->max ? -EAGAIN : 0;
}

int
roce_dp_pd_release(struct roce_dp *dp, uint32_t pdn, unsigned int *nb_qps, unsigned int *nb_mrs)
{
	struct dp_pd *pd = pd_get(dp, pdn);
	uint32_t qpns[256];
	struct list_rpc c = { .pdn = pdn, .qpns = qpns, .max = RTE_DIM(qpns) };
	unsigned int i, mrs = 0;
	struct dp_mr *m;

	if (pd == NULL)
		return -ENOENT;
	/* QPs first: their jobs and connections let go of the MRs. */
	for (i = 0; dp->started && i < dp->conf.nb_workers; i++)
		while (roce_dp_call(dp, i, release_on_worker, &c, RPC_MS) == -EAGAIN)
			;
	pd->nb_qps -= RTE_MIN(pd->nb_qps, c.destroyed);
	while ((m = TAILQ_FIRST(&pd->mrs)) != NULL) {
		mr_free(dp, m);
		mrs++;
	}
	for (i = 1; i <= ROCE_DP_MAX_AHS; i++)
		if (dp->ahs[i].ah != NULL && dp->ahs[i].pdn == pdn)
			roce_dp_ah_destroy(dp, i);
	if (nb_qps != NULL)
		*nb_qps = c.destroyed;
	if (nb_mrs != NULL)
		*nb_mrs = mrs;
	return pdn == ROCE_DP_PD_SHARED ? 0 : roce_dp_pd_free(dp, pdn);
}

/* ---- address handles ---- */

static const struct dp_ah *
ah_get(const struct roce_dp *dp, uint32_t ahn)
{
	return ahn >= 1 && ahn <= ROCE_DP_MAX_AHS && dp->ahs[ahn].ah != NULL ? &dp->ahs[ahn] :
		NULL;
}

int
roce_dp_ah_create(struct roce_dp *dp, uint32_t pdn, unsigned int port, const uint8_t *dst_ip,
		bool ipv6, const uint8_t *dst_mac, uint8_t dscp, uint8_t hop_limit,
		unsigned int timeout_ms, uint32_t *ahn)
{
	struct dp_pd *pd = pd_get(dp, pdn);
	struct roce_ah_attr a = { .port_num = (uint8_t)(port + 1) };
	uint32_t i;
	int ret;

	if (pd == NULL)
		return -ENOENT;
	if (port >= dp->nb_ports || dscp > 63)
		return -EINVAL;
	for (i = 1; i <= ROCE_DP_MAX_AHS && dp->ahs[i].ah != NULL; i++)
		;
	if (i > ROCE_DP_MAX_AHS)
		return -ENOSPC;
	ret = roce_dp_path(dp, port, dst_ip, ipv6, dst_mac, dscp, timeout_ms, &a.path);
	if (ret != 0)
		return ret;
	a.path.ttl = hop_limit;
	dp->ahs[i].ah = roce_ah_create(pd->pd, &a);
	if (dp->ahs[i].ah == NULL)
		return -rte_errno;
	dp->ahs[i].pdn = pdn;
	dp->ahs[i].port = (uint16_t)port;
	pd->nb_ahs++;
	*ahn = i;
	return 0;
}

static int
ah_revoke_on_worker(struct roce_worker *w, void *arg)
{
	dp_services_ah_revoke(w, arg);
	return 0;
}

int
roce_dp_ah_destroy(struct roce_dp *dp, uint32_t ahn)
{
	const struct dp_ah *a = ah_get(dp, ahn);
	unsigned int i;

	if (a == NULL)
		return -ENOENT;
	/* The jobs that send through it (traffic generator) let go of it first. */
	for (i = 0; dp->started && i < dp->conf.nb_workers; i++)
		while (roce_dp_call(dp, i, ah_revoke_on_worker, a->ah, RPC_MS) == -EBUSY)
			rte_delay_us_sleep(100);
	dp->pds[a->pdn].nb_ahs--;
	roce_ah_destroy(a->ah);
	memset(&dp->ahs[ahn], 0, sizeof(dp->ahs[ahn]));
	return 0;
}

int
roce_dp_ah_query(const struct roce_dp *dp, uint32_t ahn, struct roce_dp_ah_info *info)
{
	const struct dp_ah *a = ah_get(dp, ahn);

	if (a == NULL)
		return -ENOENT;
	info->ahn = ahn;
	info->pdn = a->pdn;
	info->port = a->port;
	info->path = roce_ah_attr(a->ah)->path;
	return 0;
}

unsigned int
roce_dp_ah_list(const struct roce_dp *dp, uint32_t pdn, uint32_t *ahns, unsigned int max)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 1; i <= ROCE_DP_MAX_AHS; i++) {
		if (dp->ahs[i].ah == NULL || (pdn != ROCE_DP_PD_ANY && dp->ahs[i].pdn != pdn))
			continue;
		if (n < max)
			ahns[n] = i;
		n++;
	}
	return n;
}

struct roce_ah *
roce_dp_ah_get(const struct roce_dp *dp, uint32_t ahn)
{
	const struct dp_ah *a = ah_get(dp, ahn);

	return a != NULL ? a->ah : NULL;
}

/* ---- work requests and completions ---- */

struct post_rpc {
	uint32_t qpn;
	const struct roce_send_wr *wr;
	const struct roce_recv_wr *rwr;
	unsigned int n;
};

static int
post_on_worker(struct roce_worker *w, void *arg)
{
	struct post_rpc *c = arg;
	struct roce_qp *qp = worker_qp(w, c->qpn);
	unsigned int i;
	int ret = 0;

	if (qp == NULL)
		return -ENOENT;
	for (i = 0; i < c->n; i++) {
		ret = c->wr != NULL ? roce_post_send(qp, &c->wr[i]) : roce_post_recv(qp, &c->rwr[i]);
		if (ret != 0)
			break;
	}
	return i != 0 ? (int)i : ret;
}

static int
post(struct roce_dp *dp, struct post_rpc *c)
{
	unsigned int worker;
	int ret = qp_owner(dp, c->qpn, &worker);

	return ret != 0 ? ret : roce_dp_call(dp, worker, post_on_worker, c, RPC_MS);
}

int
roce_dp_post_send(struct roce_dp *dp, uint32_t qpn, const struct roce_send_wr *wr, unsigned int n)
{
	struct post_rpc c = { .qpn = qpn, .wr = wr, .n = n };

	return post(dp, &c);
}

int
roce_dp_post_recv(struct roce_dp *dp, uint32_t qpn, const struct roce_recv_wr *wr, unsigned int n)
{
	struct post_rpc c = { .qpn = qpn, .rwr = wr, .n = n };

	return post(dp, &c);
}

struct poll_rpc {
	uint32_t qpn;
	struct roce_wc *wc;
	unsigned int max;
};

static int
poll_on_worker(struct roce_worker *w, void *arg)
{
	struct poll_rpc *c = arg;
	struct roce_qp *qp = worker_qp(w, c->qpn);
	struct roce_qp_init_attr init;

	if (qp == NULL)
		return -ENOENT;
	roce_qp_query_init(qp, &init);
	return roce_cq_poll(init.send_cq, c->wc, (int)c->max);
}

int
roce_dp_cq_poll(struct roce_dp *dp, uint32_t qpn, struct roce_wc *wc, unsigned int max)
{
	struct poll_rpc c = { qpn, wc, max };
	unsigned int worker;
	int ret = qp_owner(dp, qpn, &worker);

	return ret != 0 ? ret : roce_dp_call(dp, worker, poll_on_worker, &c, RPC_MS);
}

static void
error_one(struct roce_qp *qp, void *arg)
{
	struct roce_qp_attr a = { .qp_state = ROCE_QPS_ERR };

	RTE_SET_USED(arg);
	roce_qp_modify(qp, &a, ROCE_QP_STATE);
}

static int
error_on_worker(struct roce_worker *w, void *arg)
{
	roce_engine_qp_foreach(w->eng, error_one, arg);
	return 0;
}

void
roce_dp_qp_error_all(struct roce_dp *dp)
{
	unsigned int i;

	for (i = 0; dp->started && i < dp->conf.nb_workers; i++)
		roce_dp_call(dp, i, error_on_worker, NULL, RPC_MS);
}

/* ---- paths ---- */

int
roce_dp_path(struct roce_dp *dp, unsigned int port, const uint8_t *dst_ip, bool ipv6,
		const uint8_t *dst_mac, uint8_t dscp, unsigned int timeout_ms,
		struct roce_path *path)
{
	static const uint8_t none[16];
	const struct roce_dp_addr *addr;
	const struct roce_port *p;
	int ret;

	if (port >= dp->nb_ports)
		return -EINVAL;
	p = &dp->ports[port];
	addr = &dp->conf.addr[port];
	memset(path, 0, sizeof(*path));
	if (dst_mac != NULL) {
		memcpy(path->dst_mac.addr_bytes, dst_mac, RTE_ETHER_ADDR_LEN);
	} else {
		/* The next hop's: the peer, or the gateway. */
		ret = roce_dp_resolve(dp, port, dst_ip, ipv6, &path->dst_mac, timeout_ms);
		if (ret != 0)
			return ret == -ETIMEDOUT ? -EHOSTUNREACH : ret;
	}
	path->src_mac = p->mac;
	path->ipv6 = ipv6;
	if (ipv6) {
		/* The global address if the port has one, else its link-local one. */
		if (memcmp(addr->ip6, none, 16) != 0)
			memcpy(path->src_ip, addr->ip6, 16);
		else
			roce_net_ll_addr(&p->mac, path->src_ip);
		memcpy(path->dst_ip, dst_ip, 16);
	} else {
		memcpy(path->src_ip, addr->ip4, 4);
		memcpy(path->dst_ip, dst_ip, 4);
	}
	path->vlan = addr->vlan != 0;
	/* The 802.1p priority of a tagged path is its DSCP's on the port (roce_dp_pfc_setup()). */
	path->vlan_tci = (uint16_t)(addr->vlan | dp->pfc[port].dscp2prio[dscp & 63] << 13);
	path->dscp = dscp;
	return 0;
}
