/* SPDX-License-Identifier: BSD-3-Clause */
/* Latency histogram: quantiles and the perftest summary. */
#include <math.h>

#include "roce_hist.h"

double
roce_hist_value(unsigned int idx)
{
	unsigned int shift;
	uint64_t low;

	if (idx < 2 * ROCE_HIST_SUB)
		return idx;
	shift = idx / ROCE_HIST_SUB - 1;
	low = (uint64_t)(idx % ROCE_HIST_SUB + ROCE_HIST_SUB) << shift;
	return (double)low + (double)((uint64_t)1 << shift) / 2;
}

double
roce_hist_quantile(const struct roce_hist *h, double q)
{
	uint64_t rank, seen = 0;
	unsigned int i;
	double v;

	if (h->n == 0)
		return 0;
	rank = (uint64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < ROCE_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank)
			break;
	}
	v = roce_hist_value(i < ROCE_HIST_BUCKETS ? i : ROCE_HIST_BUCKETS - 1);
	return v < (double)h->min ? (double)h->min : v > (double)h->max ? (double)h->max : v;
}

void
roce_hist_summarize(const struct roce_hist *h, struct roce_hist_summary *s)
{
	double var;

	*s = (struct roce_hist_summary){ .n = h->n };
	if (h->n == 0)
		return;
	s->min = (double)h->min;
	s->max = (double)h->max;
	s->avg = h->sum / (double)h->n;
	var = h->sumsq / (double)h->n - s->avg * s->avg;
	s->stdev = var > 0 ? sqrt(var) : 0;
	s->median = roce_hist_quantile(h, 0.5);
	s->p99 = roce_hist_quantile(h, 0.99);
	s->p999 = roce_hist_quantile(h, 0.999);
}

void
roce_hist_merge(struct roce_hist *dst, const struct roce_hist *src)
{
	unsigned int i;

	if (src->n == 0)
		return;
	if (dst->n == 0 || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->n += src->n;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	for (i = 0; i < ROCE_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
}
