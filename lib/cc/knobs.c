/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The knob table and the profiles. Sources of the mlx5 values: doc/congestion-control.md.
 */

#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "roce_cc.h"

static const struct roce_cc_knob_desc knobs[ROCE_CC_KNOB_NUM] = {
#define KNOB_ROW(n, N, u, lo, hi, d) [ROCE_CC_##N] = { #n, u, lo, hi, d },
	ROCE_CC_KNOBS(KNOB_ROW)
#undef KNOB_ROW
};

/* ConnectX-4 Lx / ConnectX-5 firmware defaults, as mlxconfig shows them. */
static const struct roce_cc_params mlx5_params = { .v = {
	[ROCE_CC_RP_ENABLE] = 1,
	[ROCE_CC_RP_CLAMP_TGT_RATE] = 0,
	[ROCE_CC_RP_CLAMP_TGT_RATE_ATI] = 1,
	[ROCE_CC_RP_TIME_RESET] = 300,
	[ROCE_CC_RP_BYTE_RESET] = 32767,
	[ROCE_CC_RP_THRESHOLD] = 1,
	[ROCE_CC_RP_AI_RATE] = 5,
	[ROCE_CC_RP_HAI_RATE] = 50,
	[ROCE_CC_RP_GD] = 11,
	[ROCE_CC_RP_MIN_DEC_FAC] = 50,
	[ROCE_CC_RP_MIN_RATE] = 1,
	[ROCE_CC_RP_MAX_RATE] = 0,
	[ROCE_CC_RP_RATE_TO_SET_ON_FIRST_CNP] = 0,
	[ROCE_CC_RP_DCE_TCP_G] = 1019,
	[ROCE_CC_RP_DCE_TCP_RTT] = 1,
	[ROCE_CC_RP_RATE_REDUCE_MONITOR_PERIOD] = 4,
	[ROCE_CC_RP_INITIAL_ALPHA_VALUE] = 1023,
	[ROCE_CC_NP_ENABLE] = 1,
	[ROCE_CC_NP_MIN_TIME_BETWEEN_CNPS] = 4,
	[ROCE_CC_NP_CNP_DSCP] = 48,
	[ROCE_CC_NP_CNP_PRIO] = 6,
} };

/*
 * The DCQCN paper (section 5 and its table of parameters): K = T = 55 us, B = 10 MB (read
 * as 10 MiB), F = 5, R_AI = 40 Mb/s, g = 1/256, CNPs at most every 50 us, RT = RC on every
 * CNP; its reduction is RC (1 - alpha / 2) with no lower bound and no monitor period.
 * R_HAI is not among the values the paper's table gives: 10 R_AI, as mlx5's ratio.
 */
static const struct roce_cc_params paper_params = { .v = {
	[ROCE_CC_RP_ENABLE] = 1,
	[ROCE_CC_RP_CLAMP_TGT_RATE] = 1,
	[ROCE_CC_RP_CLAMP_TGT_RATE_ATI] = 1,
	[ROCE_CC_RP_TIME_RESET] = 55,
	[ROCE_CC_RP_BYTE_RESET] = 10 << 20,
	[ROCE_CC_RP_THRESHOLD] = 5,
	[ROCE_CC_RP_AI_RATE] = 40,
	[ROCE_CC_RP_HAI_RATE] = 400,
	[ROCE_CC_RP_GD] = 11,
	[ROCE_CC_RP_MIN_DEC_FAC] = 0,
	[ROCE_CC_RP_MIN_RATE] = 1,
	[ROCE_CC_RP_MAX_RATE] = 0,
	[ROCE_CC_RP_RATE_TO_SET_ON_FIRST_CNP] = 0,
	[ROCE_CC_RP_DCE_TCP_G] = 1020,         /* 1 - 1/256 in 1024ths */
	[ROCE_CC_RP_DCE_TCP_RTT] = 55,
	[ROCE_CC_RP_RATE_REDUCE_MONITOR_PERIOD] = 0,
	[ROCE_CC_RP_INITIAL_ALPHA_VALUE] = 1023,
	[ROCE_CC_NP_ENABLE] = 1,
	[ROCE_CC_NP_MIN_TIME_BETWEEN_CNPS] = 50,
	[ROCE_CC_NP_CNP_DSCP] = 48,
	[ROCE_CC_NP_CNP_PRIO] = 6,
} };

/* A profile: its knobs, and the line rate its rates are meant for (0: absolute). */
struct profile {
	const char *name;
	const struct roce_cc_params *params;
	uint64_t ref_mbps;
	uint8_t off;
};

static const struct profile profiles[] = {
	{ "mlx5", &mlx5_params, 0, 0 },
	{ "paper", &paper_params, ROCE_CC_PAPER_LINE_MBPS, 0 },
	{ "off", &mlx5_params, 0, 1 },
};

/* The knobs in Mb/s that a profile's reference line rate scales. */
static const enum roce_cc_knob scaled[] = {
	ROCE_CC_RP_AI_RATE, ROCE_CC_RP_HAI_RATE,
};

const struct roce_cc_knob_desc *
roce_cc_knob(unsigned int k)
{
	return k < ROCE_CC_KNOB_NUM ? &knobs[k] : NULL;
}

int
roce_cc_knob_find(const char *name)
{
	unsigned int k;

	for (k = 0; name != NULL && k < ROCE_CC_KNOB_NUM; k++)
		if (strcmp(knobs[k].name, name) == 0)
			return (int)k;
	return -ENOENT;
}

int
roce_cc_params_set(struct roce_cc_params *p, const char *name, uint64_t value)
{
	int k = roce_cc_knob_find(name);

	if (k < 0)
		return k;
	if (value < knobs[k].min || value > knobs[k].max)
		return -EINVAL;
	p->v[k] = (uint32_t)value;
	return 0;
}

int
roce_cc_params_check(const struct roce_cc_params *p, int *bad)
{
	unsigned int k;

	for (k = 0; k < ROCE_CC_KNOB_NUM; k++) {
		if (p->v[k] < knobs[k].min || p->v[k] > knobs[k].max) {
			if (bad != NULL)
				*bad = (int)k;
			return -EINVAL;
		}
	}
	return 0;
}

int
roce_cc_profile(const char *name, uint64_t line_mbps, struct roce_cc_params *p)
{
	unsigned int i, j;

	if (line_mbps == 0)
		return -EINVAL;
	for (i = 0; i < RTE_DIM(profiles); i++) {
		const struct profile *pr = &profiles[i];

		if (name == NULL || strcmp(pr->name, name) != 0)
			continue;
		*p = *pr->params;
		for (j = 0; pr->ref_mbps != 0 && j < RTE_DIM(scaled); j++) {
			uint64_t v = (p->v[scaled[j]] * line_mbps + pr->ref_mbps / 2) / pr->ref_mbps;

			p->v[scaled[j]] = (uint32_t)RTE_MIN(RTE_MAX(v, 1u), knobs[scaled[j]].max);
		}
		if (pr->off)
			p->v[ROCE_CC_RP_ENABLE] = p->v[ROCE_CC_NP_ENABLE] = 0;
		return 0;
	}
	return -ENOENT;
}

const char *
roce_cc_profile_name(unsigned int i)
{
	return i < RTE_DIM(profiles) ? profiles[i].name : NULL;
}
