/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "roce_counters.h"

const char *
roce_counter_name(const struct roce_counter_family *f, unsigned int i)
{
	return i < f->nb ? f->desc[i].name : NULL;
}

const char *
roce_counter_description(const struct roce_counter_family *f, unsigned int i)
{
	return i < f->nb ? f->desc[i].description : NULL;
}

void
roce_counters_add(uint64_t *sum, const uint64_t *v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		sum[i] += v[i];
}

void
roce_counters_emit(const struct roce_counter_group *g, const uint64_t *values,
		unsigned int flags, roce_counter_sink sink, void *arg)
{
	const struct roce_counter_family *f = g->family;
	char name[ROCE_COUNTER_NAME_MAX];
	unsigned int i;
	size_t k;

	for (i = 0; i < f->nb; i++) {
		if ((flags & ROCE_COUNTERS_NONZERO) && values[i] == 0)
			continue;
		snprintf(name, sizeof(name), "%s%s", g->prefix, f->desc[i].name);
		for (k = 0; name[k] != '\0'; k++)
			name[k] = (char)toupper((unsigned char)name[k]);
		sink(arg, name, f->desc[i].description, values[i]);
	}
}

void
roce_counters_tel_sink(void *arg, const char *name, const char *description, uint64_t value)
{
	RTE_SET_USED(description);
	rte_tel_data_add_dict_u64(arg, name, value);
}
