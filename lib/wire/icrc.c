/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <isa-l/crc.h>
#include <rte_common.h>

#include "roce_hdr.h"
#include "roce_icrc.h"

#define IP4_HLEN 20
#define IP6_HLEN 40
#define UDP_HLEN 8
#define BTH_LEN 12

/* CRC state after the 8 bytes of 0xFF that stand in for the LRH. */
static uint32_t crc_after_lrh;

RTE_INIT(roce_icrc_init)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	crc_after_lrh = crc32_gzip_refl(0, ones, sizeof(ones));
}

/* CRC over the LRH stand-in and the masked IP, UDP and BTH headers. */
static uint32_t
icrc_headers(const uint8_t *l3, int ipv6)
{
	uint8_t buf[IP6_HLEN + UDP_HLEN + BTH_LEN];
	uint32_t iplen = ipv6 ? IP6_HLEN : IP4_HLEN;

	memcpy(buf, l3, iplen + UDP_HLEN + BTH_LEN);
	if (ipv6) {
		buf[0] |= 0x0f;                     /* traffic class, high nibble */
		buf[1] = buf[2] = buf[3] = 0xff;    /* traffic class low nibble, flow label */
		buf[7] = 0xff;                      /* hop limit */
	} else {
		buf[1] = 0xff;                      /* TOS */
		buf[8] = 0xff;                      /* TTL */
		buf[10] = buf[11] = 0xff;           /* header checksum */
	}
	buf[iplen + 6] = buf[iplen + 7] = 0xff;     /* UDP checksum */
	buf[iplen + UDP_HLEN + 4] = 0xff;           /* BTH FECN/BECN/resv6a */
	return crc32_gzip_refl(crc_after_lrh, buf, iplen + UDP_HLEN + BTH_LEN);
}

static inline uint32_t
icrc_hdr_len(int ipv6)
{
	return (ipv6 ? IP6_HLEN : IP4_HLEN) + UDP_HLEN + BTH_LEN;
}

uint32_t
roce_icrc_compute_buf(const void *l3, uint32_t len, int ipv6)
{
	uint32_t hlen = icrc_hdr_len(ipv6);
	uint32_t crc = icrc_headers(l3, ipv6);

	return crc32_gzip_refl(crc, (const uint8_t *)l3 + hlen, len - hlen);
}

uint32_t
roce_icrc_compute(const struct rte_mbuf *m, uint32_t l3_off, int ipv6, uint32_t icrc_off)
{
	uint32_t off = l3_off + icrc_hdr_len(ipv6);
	uint32_t crc = icrc_headers(rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off), ipv6);
	const struct rte_mbuf *seg = m;
	uint32_t seg_start = 0;

	/* Skip to the segment holding @off, then CRC segment by segment up to the ICRC. */
	while (seg != NULL && off < icrc_off) {
		uint32_t seg_end = seg_start + seg->data_len;

		if (off < seg_end) {
			uint32_t n = RTE_MIN(seg_end, icrc_off) - off;

			crc = crc32_gzip_refl(crc, rte_pktmbuf_mtod_offset(seg, const uint8_t *,
					off - seg_start), n);
			off += n;
		}
		seg_start = seg_end;
		seg = seg->next;
	}
	return crc;
}

uint32_t
roce_icrc_read(const struct rte_mbuf *m, uint32_t icrc_off)
{
	uint8_t buf[ROCE_ICRC_LEN];
	const uint8_t *p = rte_pktmbuf_read(m, icrc_off, sizeof(buf), buf);

	if (p == NULL)
		return 0;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		(uint32_t)p[3] << 24;
}

void
roce_icrc_write(struct rte_mbuf *m, uint32_t icrc_off, uint32_t icrc)
{
	struct rte_mbuf *seg = m;
	uint32_t seg_start = 0;
	unsigned int i;

	for (i = 0; i < ROCE_ICRC_LEN && seg != NULL; ) {
		uint32_t off = icrc_off + i;

		if (off < seg_start + seg->data_len) {
			*rte_pktmbuf_mtod_offset(seg, uint8_t *, off - seg_start) =
				(uint8_t)(icrc >> (8 * i));
			i++;
			continue;
		}
		seg_start += seg->data_len;
		seg = seg->next;
	}
}
