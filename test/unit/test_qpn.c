/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP numbers and the QP table under create/destroy churn: an engine hands out numbers only
 * from its range (which the dataplane routes to its worker), reuses freed ones late, fails
 * with ENOSPC when the range is full, and a lookup of an unknown QPN costs after churn what
 * it cost before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "roce_dataplane.h"
#include "roce_test.h"
#include "roce_transport.h"
#include "transport_private.h"

#define CHURN 200000
#define NB_WORKERS 3
#define RANGE (1u << ROCE_DP_QPN_SHIFT)

static struct rte_mempool *mp;
static struct roce_pd *pd;
static struct roce_cq *cq;

static struct roce_engine *
engine(uint32_t max_qps, uint32_t base, uint32_t count)
{
	struct roce_engine_conf c = { .mp = mp, .socket_id = SOCKET_ID_ANY, .max_qps = max_qps,
		.qpn_base = base, .qpn_count = count };

	return roce_engine_create(&c);
}

static struct roce_qp *
qp_new(struct roce_engine *eng)
{
	struct roce_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .max_send_wr = 1,
		.max_recv_wr = 1 };

	return roce_qp_create(eng, pd, &ia);
}

static int
qpn_reserved(uint32_t qpn)
{
	return qpn < 2 || qpn == ROCE_24BIT_MASK;
}

/* One worker's engine, configured as the dataplane configures it, under churn. */
static void
test_churn_stays_in_range(void)
{
	const unsigned int w = 1, nb_live = 64;
	const uint32_t base = ROCE_DP_QPN_BASE(w);
	struct roce_engine *eng = engine(4096, base, RANGE);
	uint32_t *freed_at = calloc(RANGE, sizeof(*freed_at));
	uint32_t i, bad = 0, bad_qpn = 0, early = 0, min_gap = UINT32_MAX, prev = 0;
	struct roce_qp *live[64];

	RT_CHECK(eng != NULL && freed_at != NULL, "engine");
	if (eng == NULL || freed_at == NULL)
		goto out;
	for (i = 0; i < nb_live; i++) {
		live[i] = qp_new(eng);
		RT_CHECK(live[i] != NULL, "live QP %u", i);
		if (live[i] == NULL)
			goto out;
	}
	for (i = 1; i <= CHURN; i++) {
		struct roce_qp *qp = qp_new(eng);
		uint32_t qpn;

		if (qp == NULL) {
			RT_CHECK(qp != NULL, "create %u: %s", i, rte_strerror(rte_errno));
			break;
		}
		qpn = roce_qp_num(qp);
		if (qpn - base >= RANGE || qpn_reserved(qpn) ||
				roce_dp_qpn_worker(qpn, NB_WORKERS) != (int)w) {
			if (bad++ == 0)
				bad_qpn = qpn;
		} else if (freed_at[qpn - base] != 0) {
			uint32_t gap = i - freed_at[qpn - base];

			min_gap = RTE_MIN(min_gap, gap);
		}
		if (qpn == prev)
			early++;
		prev = qpn;
		if (qpn - base < RANGE)
			freed_at[qpn - base] = i;
		roce_qp_destroy(qp);
	}
	RT_CHECK(bad == 0, "%u QPNs outside worker %u's range [%#x, %#x), first %#x (worker %d)",
			bad, w, base, base + RANGE, bad_qpn, roce_dp_qpn_worker(bad_qpn, NB_WORKERS));
	RT_CHECK(early == 0, "%u QPNs reused by the next create", early);
	/* A freed QPN waits until the rest of the range went by. */
	RT_CHECK(min_gap != UINT32_MAX && min_gap >= RANGE - nb_live - 1,
			"a freed QPN came back after %u creates", min_gap);
	for (i = 0; i < nb_live; i++)
		RT_CHECK(roce_engine_qp(eng, roce_qp_num(live[i])) == live[i], "live QP %u", i);
out:
	roce_engine_destroy(eng);
	free(freed_at);
}

static void
test_range_exhaustion(void)
{
	const uint32_t base = ROCE_DP_QPN_BASE(0);
	struct roce_engine *eng = engine(64, base, 8);
	struct roce_qp *qp[8], *q;
	uint32_t i;

	RT_CHECK(eng != NULL, "engine");
	if (eng == NULL)
		return;
	for (i = 0; i < 4; i++) {
		qp[i] = qp_new(eng);
		RT_CHECK(qp[i] != NULL && roce_qp_num(qp[i]) == base + i, "QP %u", i);
		if (qp[i] == NULL)
			goto out;
	}
	/* With room left, a create takes a number not used lately rather than the one freed. */
	roce_qp_destroy(qp[1]);
	for (i = 4; i < 8; i++) {
		qp[i] = qp_new(eng);
		RT_CHECK(qp[i] != NULL && roce_qp_num(qp[i]) == base + i, "QP %u", i);
		if (qp[i] == NULL)
			goto out;
	}
	/* Then the range wraps around to the freed number. */
	qp[1] = qp_new(eng);
	RT_CHECK(qp[1] != NULL && roce_qp_num(qp[1]) == base + 1, "QP 1 again");
	if (qp[1] == NULL)
		goto out;
	rte_errno = 0;
	q = qp_new(eng);
	RT_CHECK(q == NULL && rte_errno == ENOSPC, "a 9th QP in 8 numbers: %s",
			q != NULL ? "created" : rte_strerror(rte_errno));
	if (q != NULL)
		roce_qp_destroy(q);
	/* The only free number is the one given back. */
	roce_qp_destroy(qp[5]);
	qp[5] = qp_new(eng);
	RT_CHECK(qp[5] != NULL && roce_qp_num(qp[5]) == base + 5, "QP 5 again");
out:
	roce_engine_destroy(eng);

	/* Reserved numbers (0, 1, the multicast QPN 0xFFFFFF) are never handed out. */
	eng = engine(64, 0xFFFFF8, 8);
	RT_CHECK(eng != NULL, "engine at the top of the space");
	for (i = 0; eng != NULL && i < 8; i++) {
		struct roce_qp *q = qp_new(eng);

		RT_CHECK((q != NULL) == (i < 7), "QP %u at the top", i);
		RT_CHECK(q == NULL || roce_qp_num(q) != ROCE_24BIT_MASK, "QPN 0xFFFFFF handed out");
	}
	roce_engine_destroy(eng);
	eng = engine(64, 1, 3);
	RT_CHECK(eng != NULL, "engine at the bottom of the space");
	for (i = 0; eng != NULL && i < 3; i++) {
		struct roce_qp *q = qp_new(eng);

		RT_CHECK((q != NULL) == (i < 2), "QP %u at the bottom", i);
		RT_CHECK(q == NULL || roce_qp_num(q) >= 2, "QPN %u handed out", roce_qp_num(q));
	}
	roce_engine_destroy(eng);

	/* A range past the 24-bit space is refused. */
	rte_errno = 0;
	eng = engine(64, 0xFFFFF0, 0x20);
	RT_CHECK(eng == NULL && rte_errno == EINVAL, "range beyond 0xFFFFFF accepted");
	roce_engine_destroy(eng);
}

/* Slots read by lookups of QPNs no QP has: those of another worker and free ones of ours. */
static void
unknown_probes(const struct roce_engine *eng, uint32_t *probes, uint32_t n, uint32_t *max,
		uint64_t *total)
{
	uint32_t i;

	*max = 0;
	*total = 0;
	for (i = 0; i < n; i++) {
		uint32_t qpn = i % 2 ? ROCE_DP_QPN_BASE(1) + i * 7 : ROCE_DP_QPN_BASE(0) + 0x8000 + i;

		probes[i] = engine_qp_probes(eng, qpn);
		*max = RTE_MAX(*max, probes[i]);
		*total += probes[i];
	}
}

static void
test_unknown_lookup_after_churn(void)
{
	const uint32_t nb_live = 512, nb_unknown = 4096;
	struct roce_engine *eng = engine(1024, ROCE_DP_QPN_BASE(0), RANGE);
	uint32_t *before = calloc(nb_unknown, sizeof(*before));
	uint32_t *after = calloc(nb_unknown, sizeof(*after));
	struct roce_qp **live = calloc(nb_live, sizeof(*live));
	uint32_t i, max_before, max_after, differ = 0;
	uint64_t tot_before, tot_after;

	RT_CHECK(eng != NULL && before != NULL && after != NULL && live != NULL, "setup");
	if (eng == NULL || before == NULL || after == NULL || live == NULL)
		goto out;
	for (i = 0; i < nb_live; i++) {
		live[i] = qp_new(eng);
		RT_CHECK(live[i] != NULL, "live QP %u", i);
		if (live[i] == NULL)
			goto out;
	}
	unknown_probes(eng, before, nb_unknown, &max_before, &tot_before);
	for (i = 0; i < CHURN; i++) {
		struct roce_qp *qp = qp_new(eng);

		if (qp == NULL) {
			RT_CHECK(qp != NULL, "create %u: %s", i, rte_strerror(rte_errno));
			break;
		}
		roce_qp_destroy(qp);
		/* Destroy out of creation order too, so deletions shift entries of runs. */
		if (i % 64 == 0) {
			uint32_t k = (i / 64) % nb_live;

			roce_qp_destroy(live[k]);
			live[k] = qp_new(eng);
			RT_CHECK(live[k] != NULL, "live QP %u again", k);
			if (live[k] == NULL)
				goto out;
		}
	}
	unknown_probes(eng, after, nb_unknown, &max_after, &tot_after);
	printf("  unknown-QPN lookup, %u QPs in %u slots: %.2f slots on average (max %u) "
			"before %u creates, %.2f (max %u) after\n", nb_live,
			eng->qp_table_mask + 1, (double)tot_before / nb_unknown, max_before, CHURN,
			(double)tot_after / nb_unknown, max_after);
	/* Half full, linear probing: runs stay short. */
	RT_CHECK(max_before <= 32, "%u slots before churn", max_before);
	RT_CHECK(max_after <= 32, "%u slots after churn", max_after);
	/* Probe cost per lookup hardly moves: the live set is still 512 QPs. */
	RT_CHECK(tot_after <= tot_before + tot_before / 2, "%lu slots after churn vs %lu before",
			(unsigned long)tot_after, (unsigned long)tot_before);
	for (i = 0; i < nb_unknown; i++)
		differ += after[i] > 32;
	RT_CHECK(differ == 0, "%u lookups read more than 32 slots", differ);
	for (i = 0; i < nb_live; i++)
		RT_CHECK(roce_engine_qp(eng, roce_qp_num(live[i])) == live[i], "live QP %u", i);
	RT_CHECK(eng->nb_qps == nb_live, "%u QPs in the table", eng->nb_qps);
out:
	roce_engine_destroy(eng);
	free(before);
	free(after);
	free(live);
}

static struct roce_qp *
qp_numbered(struct roce_engine *eng, uint32_t qpn)
{
	struct roce_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .max_send_wr = 1,
		.max_recv_wr = 1, .qp_num = qpn };

	return roce_qp_create(eng, pd, &ia);
}

/* QPNs equal modulo the table size share a home slot (multiplicative hash): long runs. */
#define MODEL_QPN(k) (ROCE_DP_QPN_BASE(0) + ((k) / 3) * 128 + (k) % 3)
#define MODEL_N 96

/* Random creates and destroys of colliding QPNs against a model of which exist. */
static void
test_table_model(void)
{
	struct roce_engine *eng = engine(64, ROCE_DP_QPN_BASE(0), RANGE);
	struct roce_qp *model[MODEL_N] = { NULL };
	uint32_t op, k, nb = 0, wrong = 0, max_probes = 0;
	uint64_t x = 0x9E3779B97F4A7C15ull;

	RT_CHECK(eng != NULL && eng->qp_table_mask == 127, "engine of 128 slots");
	if (eng == NULL)
		return;
	for (op = 0; op < 20000; op++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = (uint32_t)(x >> 32) % MODEL_N;
		if (model[k] != NULL) {
			roce_qp_destroy(model[k]);
			model[k] = NULL;
			nb--;
		} else if (nb < 64) {
			model[k] = qp_numbered(eng, MODEL_QPN(k));
			RT_CHECK(model[k] != NULL, "create %#x: %s", MODEL_QPN(k),
					rte_strerror(rte_errno));
			if (model[k] == NULL)
				break;
			nb++;
		}
		for (k = 0; k < MODEL_N; k++) {
			wrong += roce_engine_qp(eng, MODEL_QPN(k)) != model[k];
			max_probes = RTE_MAX(max_probes, engine_qp_probes(eng, MODEL_QPN(k)));
		}
		wrong += eng->nb_qps != nb;
	}
	RT_CHECK(wrong == 0, "%u lookups or counts disagree with the model", wrong);
	/* A duplicate number is refused while its QP exists. */
	for (k = 0; k < MODEL_N && model[k] == NULL; k++)
		;
	if (k < MODEL_N) {
		rte_errno = 0;
		RT_CHECK(qp_numbered(eng, MODEL_QPN(k)) == NULL && rte_errno == EEXIST,
				"a second QP %#x", MODEL_QPN(k));
	}
	printf("  model: %u QPs at the end, longest lookup %u slots\n", nb, max_probes);
	/* Teardown with long, wrapping runs in the table (test_engine_destroy checks it frees). */
	roce_engine_destroy(eng);
}

static uint64_t
heap_allocated(void)
{
	struct rte_malloc_socket_stats st;
	uint64_t total = 0;
	unsigned int i;

	for (i = 0; i < rte_socket_count(); i++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0)
			total += st.heap_allocsz_bytes;
	return total;
}

/* Engine teardown destroys every QP although each deletion moves entries around. */
static void
test_engine_destroy(void)
{
	uint64_t before = heap_allocated();
	struct roce_engine *eng = engine(64, ROCE_DP_QPN_BASE(0), RANGE);
	uint32_t k;

	RT_CHECK(eng != NULL, "engine");
	for (k = 0; eng != NULL && k < 64; k++)
		RT_CHECK(qp_numbered(eng, MODEL_QPN(k)) != NULL, "QP %#x", MODEL_QPN(k));
	roce_engine_destroy(eng);
	RT_CHECK(heap_allocated() == before, "%lu bytes left allocated",
			(unsigned long)(heap_allocated() - before));
}

/* QPN 1 is below every worker's range and goes to the worker owning the QP1s; 0 and the
 * numbers past the last worker's range go nowhere. */
static void
test_gsi_owner(void)
{
	RT_CHECK(roce_dp_qpn_worker(ROCE_GSI_QPN, NB_WORKERS) == ROCE_DP_GSI_WORKER &&
			roce_dp_qpn_worker(ROCE_GSI_QPN, 1) == ROCE_DP_GSI_WORKER,
			"QPN 1 -> worker %d", roce_dp_qpn_worker(ROCE_GSI_QPN, NB_WORKERS));
	RT_CHECK(roce_dp_qpn_worker(0, NB_WORKERS) == -1 &&
			roce_dp_qpn_worker(2, NB_WORKERS) == -1 &&
			roce_dp_qpn_worker(ROCE_DP_QPN_BASE(0) - 1, NB_WORKERS) == -1 &&
			roce_dp_qpn_worker(ROCE_DP_QPN_BASE(NB_WORKERS), NB_WORKERS) == -1 &&
			roce_dp_qpn_worker(0xFFFFFF, NB_WORKERS) == -1,
			"QPNs 0, 2, below and past the ranges: no worker");
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	mp = rt_pool(1024, 256);
	pd = roce_pd_alloc(SOCKET_ID_ANY);
	cq = roce_cq_create(1024, SOCKET_ID_ANY);
	if (mp == NULL || pd == NULL || cq == NULL)
		return 1;
	RT_RUN(test_gsi_owner);
	RT_RUN(test_churn_stays_in_range);
	RT_RUN(test_range_exhaustion);
	RT_RUN(test_unknown_lookup_after_churn);
	RT_RUN(test_table_model);
	RT_RUN(test_engine_destroy);
	roce_cq_destroy(cq);
	roce_pd_free(pd);
	return rt_report("test_qpn");
}
