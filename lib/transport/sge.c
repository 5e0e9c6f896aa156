/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include "transport_private.h"

/*
 * Local address of @len bytes at @off into SGE @sg, checked against its MR (in *@mrp), or
 * NULL.
 */
static uint8_t *
sge_addr(const struct roce_qp *qp, const struct roce_sge *sg, uint32_t off, uint32_t len,
		uint32_t access, struct roce_mr **mrp)
{
	struct roce_mr *mr = mr_lookup(sg->lkey);

	if (mr == NULL || mr->pd != qp->pd)
		return NULL;
	*mrp = mr;
	return mr_range(mr, sg->addr + off, len, access);
}

int
sge_check(const struct roce_qp *qp, const struct roce_sge *sg, unsigned int n, uint32_t access)
{
	unsigned int i;

	struct roce_mr *mr;

	for (i = 0; i < n; i++)
		if (sg[i].length != 0 && sge_addr(qp, &sg[i], 0, sg[i].length, access, &mr) ==
				NULL)
			return -EACCES;
	return 0;
}

/*
 * Walk the message bytes [off, off + len) of an SGE list, calling @fn on each local piece.
 * @return 0, or -EACCES when an SGE fails its MR check or the list is too short.
 */
static int
sge_walk(const struct roce_qp *qp, const struct roce_sge *sg, unsigned int n, uint32_t off,
		uint32_t len, uint32_t access,
		void (*fn)(struct roce_mr *mr, uint8_t *local, uint32_t n, void *arg), void *arg)
{
	unsigned int i;

	for (i = 0; i < n && len != 0; i++) {
		struct roce_mr *mr = NULL;
		uint32_t take;
		uint8_t *p;

		if (off >= sg[i].length) {
			off -= sg[i].length;
			continue;
		}
		take = RTE_MIN(len, sg[i].length - off);
		p = sge_addr(qp, &sg[i], off, take, access, &mr);
		if (p == NULL)
			return -EACCES;
		fn(mr, p, take, arg);
		len -= take;
		off = 0;
	}
	return len == 0 ? 0 : -EACCES;
}

struct copy_cursor {
	uint8_t *buf;                 /* scatter from a buffer */
	const struct rte_mbuf *m;     /* scatter: source packet and offset */
	uint32_t moff;
	struct tx_piece *pc;          /* pieces: where the next one goes */
};

static void
piece_out(struct roce_mr *mr, uint8_t *local, uint32_t n, void *arg)
{
	struct copy_cursor *c = arg;

	*c->pc++ = (struct tx_piece){ mr, local, n };
}

static void
scatter_buf_piece(struct roce_mr *mr, uint8_t *local, uint32_t n, void *arg)
{
	struct copy_cursor *c = arg;

	RTE_SET_USED(mr);
	memcpy(local, c->buf, n);
	c->buf += n;
}

static void
scatter_piece(struct roce_mr *mr, uint8_t *local, uint32_t n, void *arg)
{
	struct copy_cursor *c = arg;

	RTE_SET_USED(mr);
	pkt_copy_out(c->m, c->moff, local, n);
	c->moff += n;
}

int
sge_pieces(const struct roce_qp *qp, const struct roce_sge *sg, unsigned int n, uint32_t off,
		uint32_t len, struct tx_piece *pc)
{
	struct copy_cursor c = { .pc = pc };
	int ret = sge_walk(qp, sg, n, off, len, 0, piece_out, &c);

	return ret != 0 ? ret : (int)(c.pc - pc);
}

int
sge_scatter(const struct roce_qp *qp, const struct roce_sge *sg, unsigned int n, uint32_t off,
		const struct rte_mbuf *m, uint32_t moff, uint32_t len)
{
	struct copy_cursor c = { .m = m, .moff = moff };

	return sge_walk(qp, sg, n, off, len, ROCE_ACCESS_LOCAL_WRITE, scatter_piece, &c);
}

int
sge_scatter_buf(const struct roce_qp *qp, const struct roce_sge *sg, unsigned int n,
		const void *src, uint32_t len)
{
	struct copy_cursor c = { .buf = (uint8_t *)(uintptr_t)src };

	return sge_walk(qp, sg, n, 0, len, ROCE_ACCESS_LOCAL_WRITE, scatter_buf_piece, &c);
}

void
pkt_copy_out(const struct rte_mbuf *m, uint32_t off, uint8_t *dst, uint32_t len)
{
	const struct rte_mbuf *seg = m;

	/* Find the segment holding @off, then copy segment by segment. */
	while (seg != NULL && off >= seg->data_len) {
		off -= seg->data_len;
		seg = seg->next;
	}
	while (seg != NULL && len != 0) {
		uint32_t n = RTE_MIN(len, (uint32_t)seg->data_len - off);

		memcpy(dst, rte_pktmbuf_mtod_offset(seg, const uint8_t *, off), n);
		dst += n;
		len -= n;
		off = 0;
		seg = seg->next;
	}
}
