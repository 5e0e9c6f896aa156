/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory patterns: what mr.fill writes (roce_dp_pattern_fill()) and the keyed byte stream the
 * mixed traffic derives its messages from, one generator for both.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dp_private.h"


static void
fill_inc(uint8_t *p, uint64_t len, uint64_t off, uint64_t arg)
{
	uint64_t i;

	RTE_SET_USED(arg);
	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(off + i);
}

static void
fill_byte(uint8_t *p, uint64_t len, uint64_t off, uint64_t arg)
{
	RTE_SET_USED(off);
	memset(p, (int)arg, len);
}

void
dp_pattern_xorshift(uint8_t *p, uint64_t len, uint64_t x)
{
	uint64_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

/* From the seed, one byte per step (from the start of the fill, not the region). */
static void
fill_random(uint8_t *p, uint64_t len, uint64_t off, uint64_t seed)
{
	RTE_SET_USED(off);
	dp_pattern_xorshift(p, len, seed * 0x9E3779B97F4A7C15ull + 1);
}

static const struct pattern {
	const char *name;          /* with ':' when it takes a number */
	uint64_t max;              /* of the number */
	void (*fill)(uint8_t *p, uint64_t len, uint64_t off, uint64_t arg);
} patterns[] = {
	{ "inc", 0, fill_inc },
	{ "zero", 0, fill_byte },
	{ "byte:", 255, fill_byte },
	{ "random:", UINT64_MAX, fill_random },
};

int
roce_dp_pattern_fill(uint8_t *p, uint64_t len, uint64_t off, const char *pattern)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(patterns); i++) {
		const struct pattern *pt = &patterns[i];
		size_t n = strlen(pt->name);
		const char *num = pattern + n;
		uint64_t v = 0;
		char *end;

		if (pt->name[n - 1] != ':' ? strcmp(pattern, pt->name) != 0 :
				strncmp(pattern, pt->name, n) != 0)
			continue;
		if (pt->name[n - 1] == ':') {
			errno = 0;
			v = strtoull(num, &end, 0);
			if (*num == '\0' || *num == '-' || *end != '\0' || errno != 0 ||
					v > pt->max)
				return -EINVAL;
		}
		pt->fill(p, len, off, v);
		return 0;
	}
	return -EINVAL;
}
