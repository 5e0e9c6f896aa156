/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes doc/counters.md from the counter registry: every group the daemon publishes
 * (roce_dp_counter_group()), with the names as they appear and each counter's description.
 *
 *   gen_counters OUT.md           write it (meson does, into the build directory)
 *   gen_counters --check DOC.md   exit 1 when DOC.md is not what would be written
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_dataplane.h"

static const char intro[] =
"# Counters\n"
"\n"
"<!-- Generated from the counter registry by doc/gen_counters.c: do not edit. After changing a\n"
"     counter list, run `ninja -C build doc/counters.md && cp build/doc/counters.md doc/`;\n"
"     the unit test counters_doc fails while this file is stale. -->\n"
"\n"
"Every library keeps its counters in one X-macro list and describes them as one family\n"
"(`struct roce_counter_family` in `lib/counters/roce_counters.h`: a name and a description per\n"
"counter). The daemon publishes them as one set, group by group in the order below, through one\n"
"emitter (`roce_dp_counters_emit()`), so the control socket and DPDK telemetry show the same\n"
"names:\n"
"\n"
"| where | what |\n"
"|---|---|\n"
"| `rocectl counters`, request `counters` | summed over the workers |\n"
"| `counters worker=N`, telemetry `/roce/worker,N` | one worker |\n"
"| `counters port=N` | the workers that read the port's queues |\n"
"| `counters qpn=N` | one QP: the transport counters only |\n"
"| telemetry `/roce/counters` | as `counters` |\n"
"| telemetry `/roce/impair/counters,PORT` | the impairment counters of one ethdev port |\n"
"| `impair.show` | one port and direction, by the family's names (`seen` for `IMPAIR_RX_SEEN`) |\n"
"| `capture.show`, `capture.stop` | the running or last capture alone, by the family's names (`seen` for `CAPTURE_SEEN`) |\n"
"\n"
"`rocectl counters --nonzero` leaves out the counters that are zero, `--describe` prints each\n"
"one's description next to its value (request arguments `nonzero` and `describe`; the reply\n"
"then has `descriptions`, `{NAME: text}`).\n";

/* Markdown table cells: a '|' would end the cell. */
static void
cell(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

static void
sink(void *arg, const char *name, const char *description, uint64_t value)
{
	FILE *f = arg;

	(void)value;
	fprintf(f, "| `%s` | ", name);
	cell(f, description);
	fputs(" |\n", f);
}

static void
write_doc(FILE *f)
{
	const struct roce_counter_group *g;
	static const uint64_t zeros[256];
	unsigned int i;

	fputs(intro, f);
	for (i = 0; (g = roce_dp_counter_group(i)) != NULL; i++) {
		if (g->prefix[0] != '\0')
			fprintf(f, "\n## %s (`%s*`)\n\n", g->family->name, g->prefix);
		else
			fprintf(f, "\n## %s\n\n", g->family->name);
		fprintf(f, "Kept %s.", g->family->about);
		if (g->note != NULL)
			fprintf(f, " Published %s.", g->note);
		fputs("\n\n| counter | counts |\n|---|---|\n", f);
		if (g->family->nb > RTE_DIM(zeros)) {
			fprintf(stderr, "gen_counters: family %s has more than %zu counters\n",
					g->family->name, RTE_DIM(zeros));
			exit(2);
		}
		roce_counters_emit(g, zeros, 0, sink, f);
	}
}

/* The whole of @p path, NUL-terminated, or NULL. */
static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf != NULL) {
			buf[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

static int
check(const char *path)
{
	size_t wlen = 0, hlen = 0, i, start, line = 1;
	char *want = NULL, *have;
	FILE *f = open_memstream(&want, &wlen);

	if (f == NULL)
		return 2;
	write_doc(f);
	fclose(f);
	have = slurp(path, &hlen);
	if (have == NULL) {
		fprintf(stderr, "gen_counters: cannot read %s\n", path);
		return 2;
	}
	for (i = 0; i < wlen && i < hlen && want[i] == have[i]; i++)
		line += want[i] == '\n';
	if (i == wlen && i == hlen) {
		printf("%s matches the counter registry\n", path);
		return 0;
	}
	for (start = i; start > 0 && want[start - 1] != '\n'; start--)
		;
	fprintf(stderr, "%s differs from the counter registry from line %zu on:\n"
			"  registry: %.*s\n  file:     %.*s\n"
			"regenerate it: ninja -C BUILD doc/counters.md && cp BUILD/doc/counters.md doc/\n",
			path, line, (int)strcspn(want + start, "\n"), want + start,
			(int)strcspn(have + start, "\n"), have + start);
	free(want);
	free(have);
	return 1;
}

int
main(int argc, char **argv)
{
	FILE *f;

	if (argc == 3 && strcmp(argv[1], "--check") == 0)
		return check(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: gen_counters OUT.md | --check DOC.md\n");
		return 2;
	}
	f = fopen(argv[1], "w");
	if (f == NULL) {
		perror(argv[1]);
		return 2;
	}
	write_doc(f);
	return fclose(f) == 0 ? 0 : 2;
}
