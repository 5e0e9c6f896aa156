/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "roce_grh.h"
#include "wire_private.h"

void
roce_grh_fill(uint8_t *grh, const struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	const uint8_t *l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->l3_off);

	if (meta->flags & ROCE_PKT_F_IPV6) {
		memcpy(grh, l3, IP6_HLEN);
		return;
	}
	memset(grh, 0, ROCE_GRH_LEN - IP4_HLEN);
	memcpy(grh + ROCE_GRH_LEN - IP4_HLEN, l3, IP4_HLEN);
}

int
roce_grh_sgid(const uint8_t *grh, uint8_t *sgid)
{
	static const uint8_t zero[ROCE_GRH_LEN - IP4_HLEN];
	const uint8_t *ip4 = grh + ROCE_GRH_LEN - IP4_HLEN;

	/* An IPv6 header never starts with 20 zero bytes (version 6), so this order is safe. */
	if (memcmp(grh, zero, sizeof(zero)) == 0 && ip4[0] == 0x45) {
		memset(sgid, 0, 10);
		sgid[10] = sgid[11] = 0xFF;
		memcpy(sgid + 12, ip4 + 12, 4);
		return 4;
	}
	if ((grh[0] >> 4) == 6) {
		memcpy(sgid, grh + 8, 16);
		return 6;
	}
	memset(sgid, 0, 16);
	return 0;
}
