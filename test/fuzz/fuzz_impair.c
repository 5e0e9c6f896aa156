/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the impairment spec parser (drivers/impair), which takes outside input
 * from the command line, the configuration file and the control socket.
 *
 * Invariants: the parser returns 0 or -EINVAL, with a message on -EINVAL; what it accepts is
 * in range (probabilities in [0, 1], a direction, depth 1-64, delay + jitter at most 1 s, the
 * rate in bounds, RED and lossless thresholds within a bottleneck's buffer); the canonical
 * form parses again to the same canonical form, with and without port= and dir=.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roce_impair.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static int
prob(double p)
{
	return p >= 0 && p <= 1;
}

static void
check_range(const struct roce_impair_spec *s)
{
	CHECK(prob(s->loss) && prob(s->ge_p) && prob(s->ge_r) && prob(s->ge_h) &&
			prob(s->ge_k) && prob(s->reorder) && prob(s->dup) && prob(s->ecn));
	CHECK(s->dirs >= 1 && s->dirs <= 3);
	CHECK(s->reorder_depth >= 1 && s->reorder_depth <= ROCE_IMPAIR_MAX_DEPTH);
	CHECK(s->reorder_timeout_ns >= 1 && s->reorder_timeout_ns <= ROCE_IMPAIR_MAX_DELAY_NS);
	CHECK(s->delay_ns + s->jitter_ns <= ROCE_IMPAIR_MAX_DELAY_NS);
	CHECK(s->rate_bps == 0 || (s->rate_bps >= 1000 && s->rate_bps <= 10000000000000ull));
	CHECK(s->rate_burst >= 64 && s->rate_burst <= (64u << 20));
	CHECK(s->bneck_bps == 0 || (s->bneck_bps >= 1000 && s->bneck_bps <= 10000000000000ull));
	CHECK(s->bneck_buffer >= 1024 && s->bneck_buffer <= (64u << 20));
	/* RED and lossless need a bottleneck and fit its buffer. */
	CHECK(s->red_kmax == 0 || (s->bneck_bps != 0 && s->red_kmin <= s->red_kmax &&
			s->red_kmax <= s->bneck_buffer && prob(s->red_pmax)));
	CHECK(s->pfc_xoff == 0 || (s->bneck_bps != 0 && s->pfc_xon < s->pfc_xoff &&
			s->pfc_xoff < s->bneck_buffer && s->pfc_prios != 0 && s->pfc_quanta != 0));
}

/* format -> parse -> format gives the same text. */
static void
round_trip(const struct roce_impair_spec *s, int with_target)
{
	char a[ROCE_IMPAIR_SPEC_MAX + 1], b[ROCE_IMPAIR_SPEC_MAX + 1], err[256];
	struct roce_impair_spec again;
	int n = roce_impair_format(s, with_target, a, sizeof(a));

	CHECK(n > 0 && (size_t)n == strlen(a));
	CHECK(roce_impair_parse(a, &again, err, sizeof(err)) == 0);
	check_range(&again);
	CHECK(roce_impair_format(&again, with_target, b, sizeof(b)) == n);
	CHECK(strcmp(a, b) == 0);
	CHECK(roce_impair_spec_active(&again) == roce_impair_spec_active(s));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[ROCE_IMPAIR_SPEC_MAX + 64], err[256];
	struct roce_impair_spec s;
	int ret;

	if (size >= sizeof(text))
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	ret = roce_impair_parse(text, &s, err, sizeof(err));
	CHECK(ret == 0 || ret == -EINVAL);
	if (ret != 0) {
		CHECK(err[0] != '\0' && strlen(err) < sizeof(err));
		return 0;
	}
	check_range(&s);
	round_trip(&s, 0);
	round_trip(&s, 1);
	return 0;
}
