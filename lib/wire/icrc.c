/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <isa-l/crc.h>
#include <rte_common.h>
#include <rte_cpuflags.h>

#include "roce_hdr.h"
#include "roce_icrc.h"

#define IP4_HLEN 20
#define IP6_HLEN 40
#define UDP_HLEN 8
#define BTH_LEN 12

/*
 * ISA-L's crc32_gzip_refl() is fast from 256 bytes on and two to three times slower per
 * byte below, and every call ends in a reduction. So a packet of up to ICRC_HEAD bytes
 * (after the LRH) goes through one call over ICRC_HEAD bytes: its masked copy padded with
 * zeros in front, which leave a CRC unchanged when its state is XORed into the first data
 * bytes instead of being the initial state. A longer one gets a call over its masked
 * headers and one over the rest, in place.
 */
#define ICRC_HEAD 256u

/* Raw CRC state after the 8 bytes of 0xFF that stand in for the LRH. */
static uint32_t state_after_lrh;
static int has_avx;

/*
 * ISA-L's AVX-512 CRC returns with the upper halves of the vector registers dirty, and the
 * SSE code after it (the rest of the build) then runs slowly.
 */
static inline uint32_t
crc32(uint32_t init, const uint8_t *buf, uint64_t len)
{
	uint32_t crc = crc32_gzip_refl(init, buf, len);

#ifdef RTE_ARCH_X86_64
	if (has_avx)
		__asm__ volatile("vzeroupper");
#endif
	return crc;
}

RTE_INIT(roce_icrc_init)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

#ifdef RTE_ARCH_X86_64
	has_avx = rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX) > 0;
#endif
	state_after_lrh = ~crc32(0, ones, sizeof(ones));
}

static inline uint32_t
icrc_hdr_len(int ipv6)
{
	return (ipv6 ? IP6_HLEN : IP4_HLEN) + UDP_HLEN + BTH_LEN;
}

/* Set the fields the ICRC does not cover to ones, in a copy of the headers. */
static void
icrc_mask(uint8_t *h, int ipv6)
{
	uint32_t iplen = ipv6 ? IP6_HLEN : IP4_HLEN;

	if (ipv6) {
		h[0] |= 0x0f;                       /* traffic class, high nibble */
		h[1] = h[2] = h[3] = 0xff;          /* traffic class low nibble, flow label */
		h[7] = 0xff;                        /* hop limit */
	} else {
		h[1] = 0xff;                        /* TOS */
		h[8] = 0xff;                        /* TTL */
		h[10] = h[11] = 0xff;               /* header checksum */
	}
	h[iplen + 6] = h[iplen + 7] = 0xff;         /* UDP checksum */
	h[iplen + UDP_HLEN + 4] = 0xff;             /* BTH FECN/BECN/resv6a */
}

/*
 * A thread's padded buffers: bytes [0, clean) are zeros, so a packet no longer than the
 * previous one needs no memset. Two, as short ACKs and longer data packets alternate.
 */
#define ICRC_PAD_SHORT 64u
struct icrc_pad {
	uint8_t buf[ICRC_HEAD] __rte_aligned(64);
	uint32_t clean;
};
static __thread struct icrc_pad icrc_pads[2] __attribute__((tls_model("initial-exec")));

/* The buffer whose last @len bytes take a packet, zeros before them. */
static inline uint8_t *
icrc_pad(uint32_t len)
{
	struct icrc_pad *p = &icrc_pads[len > ICRC_PAD_SHORT];
	uint32_t zero = ICRC_HEAD - len;

	if (p->clean < zero)
		memset(p->buf + p->clean, 0, zero - p->clean);
	p->clean = zero;
	return p->buf;
}

/*
 * CRC over the LRH stand-in and the @len bytes at the end of @buf (headers first, zeros
 * before them), masked here. @return the crc32_gzip_refl() value after them.
 */
static uint32_t
icrc_short(uint8_t buf[ICRC_HEAD], uint32_t len, int ipv6)
{
	uint8_t *h = buf + ICRC_HEAD - len;

	icrc_mask(h, ipv6);
	h[0] ^= (uint8_t)state_after_lrh;
	h[1] ^= (uint8_t)(state_after_lrh >> 8);
	h[2] ^= (uint8_t)(state_after_lrh >> 16);
	h[3] ^= (uint8_t)(state_after_lrh >> 24);
	return crc32(UINT32_MAX, buf, ICRC_HEAD);
}

/* CRC over the LRH stand-in and the masked headers at @l3. */
static uint32_t
icrc_headers(const uint8_t *l3, int ipv6)
{
	uint8_t buf[IP6_HLEN + UDP_HLEN + BTH_LEN];
	uint32_t hlen = icrc_hdr_len(ipv6);

	memcpy(buf, l3, hlen);
	icrc_mask(buf, ipv6);
	return crc32(~state_after_lrh, buf, hlen);
}

uint32_t
roce_icrc_compute_buf(const void *l3, uint32_t len, int ipv6)
{
	uint32_t hlen = icrc_hdr_len(ipv6);

	if (len <= ICRC_HEAD) {
		uint8_t *buf = icrc_pad(len);

		memcpy(buf + ICRC_HEAD - len, l3, len);
		return icrc_short(buf, len, ipv6);
	}
	return crc32(icrc_headers(l3, ipv6), (const uint8_t *)l3 + hlen, len - hlen);
}

uint32_t
roce_icrc_compute(const struct rte_mbuf *m, uint32_t l3_off, int ipv6, uint32_t icrc_off)
{
	uint32_t len = icrc_off - l3_off, off = l3_off + icrc_hdr_len(ipv6);
	const struct rte_mbuf *seg = m;
	uint32_t seg_start = 0, crc;

	if (len <= ICRC_HEAD) {
		uint8_t *buf = icrc_pad(len);
		const uint8_t *p = rte_pktmbuf_read(m, l3_off, len, buf + ICRC_HEAD - len);

		if (unlikely(p == NULL))
			return 0;       /* callers pass offsets inside the packet */
		if (p != buf + ICRC_HEAD - len)
			memcpy(buf + ICRC_HEAD - len, p, len);
		return icrc_short(buf, len, ipv6);
	}
	/* The headers are in the first segment (the classifier and the builders see to it),
	 * then the rest segment by segment up to the ICRC. */
	crc = icrc_headers(rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off), ipv6);
	while (seg != NULL && off < icrc_off) {
		uint32_t seg_end = seg_start + seg->data_len;

		if (off < seg_end) {
			uint32_t n = RTE_MIN(seg_end, icrc_off) - off;

			crc = crc32(crc, rte_pktmbuf_mtod_offset(seg, const uint8_t *,
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
	uint32_t seg_start = 0, le = rte_cpu_to_le_32(icrc);
	unsigned int i;

	/* In the first segment: every packet a copy builds, and most of the others. */
	if (likely(icrc_off + ROCE_ICRC_LEN <= m->data_len)) {
		memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, icrc_off), &le, sizeof(le));
		return;
	}
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
