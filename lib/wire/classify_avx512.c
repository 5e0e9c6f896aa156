/* SPDX-License-Identifier: BSD-3-Clause */
#include <immintrin.h>

#include "wire_private.h"

/* The first 64 bytes of the template in one register: ethertype, version/IHL, fragment bits,
 * protocol, UDP destination port, BTH TVer. Bytes with a zero mask are not looked at.
 */
#define M(i, v) [i] = (char)(v)
static const char tmpl_mask[64] __rte_aligned(64) = {
	M(12, 0xff), M(13, 0xff), M(14, 0xff), M(20, 0x3f), M(21, 0xff), M(23, 0xff),
	M(36, 0xff), M(37, 0xff), M(43, 0x0f) };
static const char tmpl_want[64] __rte_aligned(64) = {
	M(12, 0x08), M(13, 0x00), M(14, 0x45), M(23, IP_PROTO_UDP),
	M(36, ROCE_UDP_PORT >> 8), M(37, ROCE_UDP_PORT & 0xff) };
#undef M

static inline unsigned int
avx512_match1(const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	__m512i v;

	if (!classify_vec_loadable(m))
		return 0;
	v = _mm512_and_si512(_mm512_loadu_si512(p), _mm512_load_si512(tmpl_mask));
	return _mm512_cmpeq_epi8_mask(v, _mm512_load_si512(tmpl_want)) == UINT64_MAX;
}

#define VEC_MATCH4(pkts, i) \
	(avx512_match1((pkts)[(i)]) | avx512_match1((pkts)[(i) + 1]) << 1 | \
	 avx512_match1((pkts)[(i) + 2]) << 2 | avx512_match1((pkts)[(i) + 3]) << 3)
#include "classify_vec.h"

/* Measured in bench/wire; see doc/performance.md. */
uint16_t
roce_classify_burst_avx512(struct rte_mbuf **pkts, uint16_t nb_pkts, unsigned int flags,
		struct roce_wire_stats *stats)
{
	return classify_vec_burst(pkts, nb_pkts, flags, stats);
}
