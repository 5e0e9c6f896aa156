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
}
