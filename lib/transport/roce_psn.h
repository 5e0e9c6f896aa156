/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_PSN_H
#define ROCE_PSN_H

/**
 * @file
 * 24-bit packet sequence number arithmetic: PSNs compare modulo 2^24 within half the space.
 */

#include <stdint.h>

#define ROCE_PSN_MASK 0xFFFFFFu
#define ROCE_PSN_HALF 0x800000

/** @return (a + n) mod 2^24. */
static inline uint32_t
roce_psn_add(uint32_t a, uint32_t n)
{
	return (a + n) & ROCE_PSN_MASK;
}

/** @return a - b as a signed distance in (-2^23, 2^23]: > 0 when a is after b. */
static inline int32_t
roce_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/** @return non-zero when a comes strictly before b. */
static inline int
roce_psn_before(uint32_t a, uint32_t b)
{
	return roce_psn_diff(a, b) < 0;
}

/** @return non-zero when lo <= psn <= hi (modulo 2^24). */
static inline int
roce_psn_in(uint32_t psn, uint32_t lo, uint32_t hi)
{
	return roce_psn_diff(psn, lo) >= 0 && roce_psn_diff(hi, psn) >= 0;
}

#endif /* ROCE_PSN_H */
