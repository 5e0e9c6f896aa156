/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective-repeat state: allocated on INIT->RTR when both ends agreed to SR, forgotten on
 * RESET, freed on destroy. The paths that use it are sr_req.c, sr_resp.c and sr_comp.c.
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "transport_private.h"

/*
 * Selective-repeat state for the window (the per-QP cap on packets in flight, rounded up to
 * a power of two): a slot per PSN on each side and the defer table, sized on INIT->RTR.
 */
int
sr_setup(struct roce_qp *qp)
{
	int socket = qp->eng->conf.socket_id;
	uint32_t slots = rte_align32pow2(RTE_MAX(qp->inflight, 64u));
	uint32_t nd = RTE_MAX(qp->attr.max_dest_rd_atomic, 1u);

	sr_free(qp);
	if (!qp->attr.sr)
		return 0;
	qp->sr.tx = rte_zmalloc_socket("roce_sr_tx", slots * sizeof(qp->sr.tx[0]), 0, socket);
	qp->sr.rx = rte_zmalloc_socket("roce_sr_rx", slots, 0, socket);
	qp->sr.defer = rte_zmalloc_socket("roce_sr_defer", nd * sizeof(qp->sr.defer[0]), 0,
			socket);
	if (qp->sr.tx == NULL || qp->sr.rx == NULL || qp->sr.defer == NULL) {
		sr_free(qp);
		return -ENOMEM;
	}
	qp->sr.mask = slots - 1;
	qp->sr.nb_defer = nd;
	if (qp->sr.rto_ns == 0)
		qp->sr.rto_ns = ROCE_SR_RTO_DEFAULT_US * 1000ull;
	return 0;
}

void
sr_free(struct roce_qp *qp)
{
	rte_free(qp->sr.tx);
	rte_free(qp->sr.rx);
	rte_free(qp->sr.defer);
	qp->sr.tx = NULL;
	qp->sr.rx = NULL;
	qp->sr.defer = NULL;
	qp->sr.mask = 0;
	qp->sr.nb_defer = 0;
}

/* Forget every PSN's state (RESET; the arrays stay). */
void
sr_clear(struct roce_qp *qp)
{
	struct sr_state *s = &qp->sr;

	if (s->tx != NULL)
		memset(s->tx, 0, (s->mask + 1) * sizeof(s->tx[0]));
	if (s->rx != NULL)
		memset(s->rx, 0, s->mask + 1);
	if (s->defer != NULL)
		memset(s->defer, 0, s->nb_defer * sizeof(s->defer[0]));
	s->tx_seq = s->hi_seq = s->nb_pending = s->ooo = 0;
	s->backoff = 0;
	s->rsn_una = s->rsn_limit = 0;
	s->credit_inval = 0;
	s->credit_sent = 0;
	s->credit_told = 0;
	s->rnr_probe = 0;
	s->live_ns = 0;
}

/*
 * IBA's AETH credit counts (table 45 of the 1.4 spec; rdmavt's credit_table): code 31 means
 * no credits are reported.
 */
static const uint16_t credit_count[ROCE_AETH_CREDIT_INVALID] = {
	0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
	1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
};

uint8_t
sr_credit_code(uint32_t n)
{
	uint32_t k;

	if (n < 4)
		return (uint8_t)n;
	if (n >= 32768)
		return ROCE_AETH_CREDIT_INVALID - 1;
	/* From 4 on the table holds 2^k and 1.5 * 2^k: two codes per power of two. */
	k = 31 - (uint32_t)__builtin_clz(n);
	return (uint8_t)(2 * k + ((n >> (k - 1)) & 1));
}

uint32_t
sr_credit_count(uint8_t code)
{
	return code < RTE_DIM(credit_count) ? credit_count[code] : 0;
}
