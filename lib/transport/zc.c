/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Payload packets, copied or zero-copy (roce_tx_zc). Zero-copy: the headers in an mbuf of the
 * engine's pool, one small mbuf per piece of the payload attached over the MR
 * (rte_pktmbuf_attach_extbuf(), referencing the MR's shard of shared infos: mr_tx_ref()), then
 * one small mbuf with the pad and ICRC, computed over the chain (lib/wire). The frame is byte
 * for byte the copied one. What a PMD does with it is the PMD's: it reads the segments (memif,
 * af_packet and tap copy them; a NIC reads them by DMA) and frees the chain when done, which
 * gives the MR's references back.
 */
#include <errno.h>
#include <string.h>

#include "transport_private.h"

int
roce_engine_set_tx_zc(struct roce_engine *eng, uint8_t port, const struct roce_tx_zc *zc)
{
	if (port >= ROCE_ENGINE_MAX_PORTS ||
			(zc->max_segs >= ROCE_TX_ZC_MIN_SEGS && eng->conf.zc_mp == NULL))
		return -EINVAL;
	eng->zc[port] = *zc;
	return 0;
}

/* How a payload of @len bytes in @npc pieces goes: ROCE_XC_TX_ZC, or a TX_COPY_ reason. */
static inline enum roce_xport_counter
tx_mode(const struct roce_tx_zc *zc, const struct tx_piece *pc, unsigned int npc, uint32_t len)
{
	unsigned int i;

	if (zc->max_segs < ROCE_TX_ZC_MIN_SEGS)
		return ROCE_XC_TX_COPY_PORT;
	if (len < zc->min_len)
		return ROCE_XC_TX_COPY_SHORT;
	for (i = 0; i < npc; i++) {
		if (pc[i].mr == NULL)
			return ROCE_XC_TX_COPY_INLINE;
		if (!pc[i].mr->tx_dma)
			return ROCE_XC_TX_COPY_MR;
	}
	return npc + 2 > zc->max_segs ? ROCE_XC_TX_COPY_SEGS : ROCE_XC_TX_ZC;
}

static struct rte_mbuf *
build_copy(struct roce_qp *qp, const struct roce_path *path, const struct roce_pkt_desc *d,
		const struct tx_piece *pc, unsigned int npc, uint32_t len)
{
	struct rte_mbuf *m = qp_pkt_alloc(qp);
	uint8_t *p;
	unsigned int i;

	if (m == NULL)
		return NULL;
	p = roce_build_hdrs(m, path, d, len);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	for (i = 0; i < npc; i++) {
		memcpy(p, pc[i].addr, pc[i].len);
		p += pc[i].len;
	}
	roce_build_finish(m, path);
	return m;
}

/*
 * The zero-copy packet, or NULL: with *@copy set when its small mbufs or references ran out
 * (the caller copies instead), clear when the headers' mbuf did (as a copy would fail).
 */
static struct rte_mbuf *
build_zc(struct roce_qp *qp, const struct roce_path *path, const struct roce_pkt_desc *d,
		const struct tx_piece *pc, unsigned int npc, uint32_t len, int *copy)
{
	struct roce_engine *eng = qp->eng;
	struct rte_mbuf *seg[ROCE_MAX_SGE + 1], *h, *tail;
	unsigned int i, attached;

	*copy = 1;
	if (rte_pktmbuf_alloc_bulk(eng->conf.zc_mp, seg, npc + 1) != 0)
		return NULL;
	for (attached = 0; attached < npc; attached++) {
		const struct tx_piece *p = &pc[attached];
		struct rte_mbuf_ext_shared_info *si = mr_tx_ref(p->mr, eng->ref_shard);
		struct rte_mbuf *e = seg[attached];

		if (si == NULL)
			goto fail;
		/* The PMD only reads it: the MR's bytes stay the application's. */
		rte_pktmbuf_attach_extbuf(e, (void *)(uintptr_t)p->addr,
				p->mr->tx_iova + (uint64_t)(p->addr - p->mr->addr),
				(uint16_t)p->len, si);
		e->data_len = (uint16_t)p->len;
		e->pkt_len = p->len;
		e->next = attached + 1 < npc ? seg[attached + 1] : NULL;
	}
	h = qp_pkt_alloc(qp);
	if (h == NULL) {
		*copy = 0;
		goto fail;
	}
	if (roce_build_hdrs_only(h, path, d, len) != 0) {
		*copy = 0;
		rte_pktmbuf_free(h);
		goto fail;
	}
	h->next = seg[0];
	h->nb_segs = (uint16_t)(1 + npc);
	h->pkt_len += len;
	tail = seg[npc];
	tail->data_off = 0;
	if (roce_build_finish_tail(h, tail, path) != 0) {
		/* Cannot happen with the segments built here; nothing half-made leaves. */
		*copy = 0;
		rte_pktmbuf_free(h);
		rte_pktmbuf_free(tail);
		return NULL;
	}
	return h;
fail:
	/* Unchained: each attached segment gives its reference back as it is freed. */
	for (i = 0; i <= npc; i++) {
		seg[i]->next = NULL;
		rte_pktmbuf_free(seg[i]);
	}
	return NULL;
}

struct rte_mbuf *
qp_build_data(struct roce_qp *qp, const struct roce_path *path, const struct roce_pkt_desc *d,
		const struct tx_piece *pc, unsigned int npc, uint32_t len)
{
	static const struct roce_tx_zc no_zc;
	uint8_t port = qp_port(qp);
	enum roce_xport_counter why;
	struct rte_mbuf *m;
	int copy;

	if (len == 0)
		return build_copy(qp, path, d, pc, 0, 0);
	why = tx_mode(port < ROCE_ENGINE_MAX_PORTS ? &qp->eng->zc[port] : &no_zc, pc, npc, len);
	if (why == ROCE_XC_TX_ZC) {
		m = build_zc(qp, path, d, pc, npc, len, &copy);
		if (m != NULL || !copy) {
			qp->cnt[ROCE_XC_TX_ZC] += m != NULL;
			return m;
		}
		why = ROCE_XC_TX_COPY_NOMBUF;
	}
	m = build_copy(qp, path, d, pc, npc, len);
	qp->cnt[why] += m != NULL;
	return m;
}
