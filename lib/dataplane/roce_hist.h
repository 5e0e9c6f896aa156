/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_HIST_H
#define ROCE_HIST_H

/**
 * @file
 * Log-linear histogram of nanosecond samples (latency): exact below 256 ns, then 128 buckets
 * per power of two, so a bucket is at most 1/128 (0.78 %) of its value wide and its midpoint
 * is within 0.4 % of every sample in it. Count, min, max, sum and sum of squares are exact.
 */

#include <stdint.h>

#define ROCE_HIST_SUB 128u					/**< buckets per power of two */
#define ROCE_HIST_BUCKETS ((2u + 40u) * ROCE_HIST_SUB)	/**< up to 2^48 ns (78 hours) */

/** A histogram; zero-initialised is empty. */
struct roce_hist {
	uint64_t n;
	uint64_t min;
	uint64_t max;
	double sum;
	double sumsq;
	uint32_t b[ROCE_HIST_BUCKETS];
};

/** What perftest prints for a latency test, in nanoseconds. */
struct roce_hist_summary {
	uint64_t n;
	double min;
	double max;
	double median;		/**< perftest's t_typical */
	double avg;
	double stdev;
	double p99;
	double p999;
};

/** Bucket of @p v. */
static inline unsigned int
roce_hist_index(uint64_t v)
{
	unsigned int shift, idx;

	if (v < 2 * ROCE_HIST_SUB)
		return (unsigned int)v;
	shift = 63u - (unsigned int)__builtin_clzll(v) - 7u;
	idx = (shift + 1) * ROCE_HIST_SUB + (unsigned int)(v >> shift) - ROCE_HIST_SUB;
	return idx < ROCE_HIST_BUCKETS ? idx : ROCE_HIST_BUCKETS - 1;
}

/** Add one sample. */
static inline void
roce_hist_add(struct roce_hist *h, uint64_t v)
{
	if (h->n == 0 || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->n++;
	h->sum += (double)v;
	h->sumsq += (double)v * (double)v;
	h->b[roce_hist_index(v)]++;
}

/** Add @p count samples of value @p v. */
static inline void
roce_hist_add_n(struct roce_hist *h, uint64_t v, uint32_t count)
{
	if (count == 0)
		return;
	if (h->n == 0 || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->n += count;
	h->sum += (double)v * count;
	h->sumsq += (double)v * (double)v * count;
	h->b[roce_hist_index(v)] += count;
}

/** Midpoint of bucket @p idx. */
double roce_hist_value(unsigned int idx);

/**
 * Value at quantile @p q (0..1): the midpoint of the bucket holding the sample of rank
 * ceil(q * n), clamped to [min, max]. 0 when empty.
 */
double roce_hist_quantile(const struct roce_hist *h, double q);

/** Fill @p s from @p h (all zero when empty). */
void roce_hist_summarize(const struct roce_hist *h, struct roce_hist_summary *s);

/** Add @p src into @p dst. */
void roce_hist_merge(struct roce_hist *dst, const struct roce_hist *src);

#endif /* ROCE_HIST_H */
