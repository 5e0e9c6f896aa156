/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * impair.set / impair.show for humans: one line per port and direction with its spec, then
 * the counters of the active or ever-used ones side by side.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rocectl.h"

static uint64_t
counter(const json_t *e, const char *name)
{
	return (uint64_t)json_integer_value(json_object_get(json_object_get(e, "counters"),
				name));
}

void
rc_print_impair(const json_t *reply)
{
	const json_t *list = json_object_get(reply, "impair"), *e, *first;
	const char *name;
	json_t *v;
	size_t i;

	if (json_array_size(list) == 0) {
		printf("no impairment\n");
		return;
	}
	printf("port  dir  spec\n");
	json_array_foreach(list, i, e)
		printf("%4" JSON_INTEGER_FORMAT "  %-3s  %s\n",
				json_integer_value(json_object_get(e, "port")),
				json_string_value(json_object_get(e, "dir")),
				json_is_true(json_object_get(e, "active")) ?
				json_string_value(json_object_get(e, "spec")) : "-");
	json_array_foreach(list, i, e) {
		const json_t *q = json_object_get(e, "queue");

		if (q == NULL)
			continue;
		printf("%4" JSON_INTEGER_FORMAT "  %-3s  queue: %" PRIu64 " bytes now, paused 0x%02x; %"
				PRIu64 " samples: p50 %" PRIu64 ", p99 %" PRIu64
				", max %" PRIu64 " bytes\n",
				json_integer_value(json_object_get(e, "port")),
				json_string_value(json_object_get(e, "dir")),
				(uint64_t)json_integer_value(json_object_get(q, "depth_bytes")),
				(unsigned int)json_integer_value(json_object_get(q, "paused")),
				(uint64_t)json_integer_value(json_object_get(q, "samples")),
				(uint64_t)json_integer_value(json_object_get(q, "p50_bytes")),
				(uint64_t)json_integer_value(json_object_get(q, "p99_bytes")),
				(uint64_t)json_integer_value(json_object_get(q, "max_bytes")));
	}
	first = json_array_get(list, 0);
	printf("\n%-16s", "counter");
	json_array_foreach(list, i, e) {
		char col[32];

		snprintf(col, sizeof(col), "%" JSON_INTEGER_FORMAT "/%s",
				json_integer_value(json_object_get(e, "port")),
				json_string_value(json_object_get(e, "dir")));
		printf("  %12s", col);
	}
	putchar('\n');
	json_object_foreach(json_object_get(first, "counters"), name, v) {
		printf("%-16s", name);
		json_array_foreach(list, i, e)
			printf("  %12" PRIu64, counter(e, name));
		putchar('\n');
	}
}
