/* SPDX-License-Identifier: BSD-3-Clause */
/* The RDMA CM's IP private-data header and its IP port-space service IDs. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "roce_cma.h"
#include "cm_private.h"

static const uint8_t ip4_mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

void
roce_cma_ip4_mapped(uint8_t out[16], const uint8_t ip4[4])
{
	memcpy(out, ip4_mapped_prefix, sizeof(ip4_mapped_prefix));
	memcpy(out + 12, ip4, 4);
}

int
roce_cma_is_ip4_mapped(const uint8_t addr[16])
{
	return memcmp(addr, ip4_mapped_prefix, sizeof(ip4_mapped_prefix)) == 0;
}

/* One address of the union cma_ip_addr. */
static void
addr_get(uint8_t out[16], const uint8_t *p, uint8_t ip_version)
{
	if (ip_version == 4)
		roce_cma_ip4_mapped(out, p + 12);	/* Linux reads ip4.addr only */
	else
		memcpy(out, p, 16);
}

static void
addr_put(uint8_t *p, const uint8_t in[16], uint8_t ip_version)
{
	if (ip_version == 4) {
		memset(p, 0, 12);
		memcpy(p + 12, in + 12, 4);
	} else {
		memcpy(p, in, 16);
	}
}

int
roce_cma_hdr_parse(struct roce_cma_hdr *h, const void *pdata, size_t len)
{
	const uint8_t *p = pdata;

	if (len < ROCE_CMA_HDR_LEN)
		return -EMSGSIZE;
	if (p[0] != ROCE_CMA_VERSION)
		return -EPROTONOSUPPORT;
	h->cma_version = p[0];
	h->ip_version = p[1] >> 4;
	if (h->ip_version != 4 && h->ip_version != 6)
		return -EAFNOSUPPORT;
	h->port = cm_get_be16(p + 2);
	addr_get(h->src_addr, p + 4, h->ip_version);
	addr_get(h->dst_addr, p + 20, h->ip_version);
	return 0;
}

int
roce_cma_hdr_build(const struct roce_cma_hdr *h, void *pdata, size_t cap)
{
	uint8_t *p = pdata;

	if (cap < ROCE_CMA_HDR_LEN)
		return -ENOSPC;
	if (h->ip_version != 4 && h->ip_version != 6)
		return -EAFNOSUPPORT;
	if (h->ip_version == 4 && (!roce_cma_is_ip4_mapped(h->src_addr) ||
			!roce_cma_is_ip4_mapped(h->dst_addr)))
		return -EINVAL;
	p[0] = h->cma_version;
	p[1] = (uint8_t)(h->ip_version << 4);
	cm_put_be16(p + 2, h->port);
	addr_put(p + 4, h->src_addr, h->ip_version);
	addr_put(p + 20, h->dst_addr, h->ip_version);
	return ROCE_CMA_HDR_LEN;
}

int
roce_cma_service_id_parse(uint64_t service_id, uint16_t *ps, uint16_t *port)
{
	static const uint16_t ip_ps[] = { ROCE_CMA_PS_TCP, ROCE_CMA_PS_UDP, ROCE_CMA_PS_IB };
	unsigned int i;

	for (i = 0; i < sizeof(ip_ps) / sizeof(ip_ps[0]); i++) {
		if ((service_id & ROCE_CMA_SERVICE_PS_MASK) == ROCE_CMA_SERVICE_ID(ip_ps[i], 0)) {
			*ps = ip_ps[i];
			*port = (uint16_t)service_id;
			return 0;
		}
	}
	return -ENOENT;
}

uint32_t
roce_cma_flow_label(uint16_t sport, uint16_t dport)
{
	return ((uint32_t)sport * 31u + dport) & 0xFFFFFu;
}
