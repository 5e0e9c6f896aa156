/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stage stamps (roce_dp_stages.h): the table of stages, each worker's histograms, and their
 * reading from the control lcore (copied on the worker, as every other worker state is).
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "stages.h"

const struct roce_dp_stage_desc roce_dp_stage_desc[ROCE_STAGE_NUM] = {
#define STAGE_DESC(e, n, d) [ROCE_STAGE_##e] = { n, d },
	ROCE_DP_STAGES(STAGE_DESC)
#undef STAGE_DESC
};

#ifdef ROCE_STAGE_STAMPS

bool
roce_dp_stages_built(void)
{
	return true;
}

int
dp_stages_init(struct roce_worker *w)
{
	w->stages = rte_zmalloc_socket("roce_stages", sizeof(*w->stages), RTE_CACHE_LINE_SIZE,
			w->socket);
	return w->stages != NULL ? 0 : -ENOMEM;
}

void
dp_stages_fini(struct roce_worker *w)
{
	rte_free(w->stages);
	w->stages = NULL;
}

struct stages_read {
	struct roce_dp_stages *out;
	bool clear;
};

static int
stages_copy(struct roce_worker *w, void *arg)
{
	const struct stages_read *r = arg;
	struct dp_stages *st = w->stages;
	unsigned int i;

	if (st == NULL)
		return -ENOMEM;
	r->out->backwards += st->s.backwards;
	for (i = 0; i < ROCE_STAGE_NUM; i++)
		roce_hist_merge(&r->out->h[i], &st->s.h[i]);
	if (r->clear) {
		memset(&st->s, 0, sizeof(st->s));
		/* The turn in progress is not a whole one. */
		st->loop = 0;
	}
	return 0;
}

int
roce_dp_stages_read(struct roce_dp *dp, unsigned int first, unsigned int last,
		struct roce_dp_stages *out, bool clear)
{
	struct stages_read r = { out, clear };
	unsigned int i;
	int ret;

	if (first >= last || last > roce_dp_nb_workers(dp))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->tsc_hz = rte_get_tsc_hz();
	for (i = first; i < last; i++) {
		ret = roce_dp_call(dp, i, stages_copy, &r, 5000);
		if (ret != 0)
			return ret;
	}
	return 0;
}

#else /* !ROCE_STAGE_STAMPS */

bool
roce_dp_stages_built(void)
{
	return false;
}

int
roce_dp_stages_read(struct roce_dp *dp, unsigned int first, unsigned int last,
		struct roce_dp_stages *out, bool clear)
{
	RTE_SET_USED(dp);
	RTE_SET_USED(first);
	RTE_SET_USED(last);
	RTE_SET_USED(clear);
	memset(out, 0, sizeof(*out));
	return -ENOTSUP;
}

#endif /* ROCE_STAGE_STAMPS */
