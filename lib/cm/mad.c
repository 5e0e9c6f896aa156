/* SPDX-License-Identifier: BSD-3-Clause */
/* The MAD common header: 24 bytes, big-endian, checked before anything reads them. */
#include <errno.h>
#include <stdint.h>

#include "roce_mad.h"
#include "cm_private.h"

int
roce_mad_hdr_parse(struct roce_mad_hdr *h, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (len < ROCE_MAD_HDR_LEN)
		return -EMSGSIZE;
	if (p[0] != ROCE_MAD_BASE_VERSION)
		return -EPROTONOSUPPORT;
	h->base_version = p[0];
	h->mgmt_class = p[1];
	h->class_version = p[2];
	h->method = p[3];
	h->status = cm_get_be16(p + 4);
	h->class_specific = cm_get_be16(p + 6);
	h->tid = cm_get_be64(p + 8);
	h->attr_id = cm_get_be16(p + 16);
	h->resv = cm_get_be16(p + 18);
	h->attr_mod = cm_get_be32(p + 20);
	return 0;
}

void
roce_mad_hdr_build(const struct roce_mad_hdr *h, void *buf)
{
	uint8_t *p = buf;

	p[0] = h->base_version;
	p[1] = h->mgmt_class;
	p[2] = h->class_version;
	p[3] = h->method;
	cm_put_be16(p + 4, h->status);
	cm_put_be16(p + 6, h->class_specific);
	cm_put_be64(p + 8, h->tid);
	cm_put_be16(p + 16, h->attr_id);
	cm_put_be16(p + 18, h->resv);
	cm_put_be32(p + 20, h->attr_mod);
}
