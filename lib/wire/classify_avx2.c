/* SPDX-License-Identifier: BSD-3-Clause */
#include <immintrin.h>

#include "wire_private.h"

/* Bytes 0-31 and 32-63 of the template: ethertype, version/IHL, fragment bits, protocol;
 * UDP destination port and BTH TVer. Bytes with a zero mask are not looked at.
 */
#define M(i, v) [i] = (char)(v)
static const char tmpl_mask_lo[32] __rte_aligned(32) = {
	M(12, 0xff), M(13, 0xff), M(14, 0xff), M(20, 0x3f), M(21, 0xff), M(23, 0xff) };
static const char tmpl_want_lo[32] __rte_aligned(32) = {
	M(12, 0x08), M(13, 0x00), M(14, 0x45), M(23, IP_PROTO_UDP) };
static const char tmpl_mask_hi[32] __rte_aligned(32) = { M(4, 0xff), M(5, 0xff), M(11, 0x0f) };
static const char tmpl_want_hi[32] __rte_aligned(32) = {
	M(4, ROCE_UDP_PORT >> 8), M(5, ROCE_UDP_PORT & 0xff) };
#undef M

static inline unsigned int
avx2_match1(const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	__m256i lo, hi, eq;

	if (!classify_vec_loadable(m))
		return 0;
	lo = _mm256_loadu_si256((const __m256i *)p);
	hi = _mm256_loadu_si256((const __m256i *)(p + 32));
	lo = _mm256_and_si256(lo, _mm256_load_si256((const __m256i *)tmpl_mask_lo));
	hi = _mm256_and_si256(hi, _mm256_load_si256((const __m256i *)tmpl_mask_hi));
	eq = _mm256_and_si256(
		_mm256_cmpeq_epi8(lo, _mm256_load_si256((const __m256i *)tmpl_want_lo)),
		_mm256_cmpeq_epi8(hi, _mm256_load_si256((const __m256i *)tmpl_want_hi)));
	return (uint32_t)_mm256_movemask_epi8(eq) == UINT32_MAX;
}

#define VEC_MATCH4(pkts, i) \
	(avx2_match1((pkts)[(i)]) | avx2_match1((pkts)[(i) + 1]) << 1 | \
	 avx2_match1((pkts)[(i) + 2]) << 2 | avx2_match1((pkts)[(i) + 3]) << 3)
#include "classify_vec.h"

/* Measured in bench/wire; see doc/performance.md. */
uint16_t
roce_classify_burst_avx2(struct rte_mbuf **pkts, uint16_t nb_pkts, unsigned int flags,
		struct roce_wire_stats *stats)
{
	return classify_vec_burst(pkts, nb_pkts, flags, stats);
}
