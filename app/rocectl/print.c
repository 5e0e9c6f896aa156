/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Human output, generic so that a new daemon command prints sensibly without code here:
 * an array of objects is a table (nested objects become dotted columns), an object is aligned
 * "name value" lines, keys, QP numbers, PSNs and addresses are in hex.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocectl.h"

/* Lines of an object (every counter of the daemon fits), columns of a table. */
#define MAX_CELLS 512
#define MAX_COLS 128
#define MAX_KEY 64
#define MAX_TEXT 256

/* Integer fields shown in hex, by the last part of their name. */
static const char *const hex_fields[] = {
	"lkey", "rkey", "qpn", "psn", "sq_psn", "rq_psn", "iova", "remote_addr", "imm",
	"dest_qpn", "src_qp",
};

struct cell {
	char key[MAX_KEY];
	const json_t *val;
};

static bool
is_hex_field(const char *key)
{
	const char *dot = strrchr(key, '.');
	unsigned int i;

	key = dot != NULL ? dot + 1 : key;
	for (i = 0; i < sizeof(hex_fields) / sizeof(hex_fields[0]); i++)
		if (strcmp(key, hex_fields[i]) == 0)
			return true;
	return false;
}

static bool
is_table(const json_t *v)
{
	return json_is_array(v) && json_array_size(v) > 0 &&
		json_is_object(json_array_get(v, 0));
}

static void
value_text(const char *key, const json_t *v, char *buf, size_t cap)
{
	size_t i, len = 0;
	json_t *e;
	char *s;

	buf[0] = '\0';
	switch (json_typeof(v)) {
	case JSON_INTEGER:
		if (is_hex_field(key))
			snprintf(buf, cap, "0x%" PRIx64, (uint64_t)json_integer_value(v));
		else
			snprintf(buf, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		snprintf(buf, cap, "%g", json_real_value(v));
		break;
	case JSON_STRING:
		snprintf(buf, cap, "%s", json_string_value(v));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		snprintf(buf, cap, "%s", json_is_true(v) ? "yes" : "no");
		break;
	case JSON_NULL:
		snprintf(buf, cap, "-");
		break;
	case JSON_ARRAY:
		if (!is_table(v)) {
			json_array_foreach(v, i, e) {
				char t[MAX_TEXT];

				value_text(key, e, t, sizeof(t));
				if (len < cap)
					len += (size_t)snprintf(buf + len, cap - len, "%s%s",
							i ? "," : "", t);
			}
			if (i == 0)
				snprintf(buf, cap, "-");
			break;
		}
		/* fall through */
	case JSON_OBJECT:
		s = json_dumps(v, JSON_COMPACT);
		snprintf(buf, cap, "%s", s != NULL ? s : "?");
		free(s);
		break;
	}
}

/* Flatten @obj into dotted keys: nested non-empty objects are walked, the rest are cells. */
static unsigned int
flatten(const json_t *obj, const char *prefix, struct cell *cells, unsigned int n)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)(uintptr_t)obj, k, v) {
		char key[MAX_KEY];

		snprintf(key, sizeof(key), "%s%s%s", prefix, prefix[0] ? "." : "", k);
		if (json_is_object(v) && json_object_size(v) > 0) {
			n = flatten(v, key, cells, n);
		} else if (n < MAX_CELLS) {
			memcpy(cells[n].key, key, sizeof(key));
			cells[n++].val = v;
		}
	}
	return n;
}

static int
column_of(char (*cols)[MAX_KEY], unsigned int nb, const char *key)
{
	unsigned int i;

	for (i = 0; i < nb; i++)
		if (strcmp(cols[i], key) == 0)
			return (int)i;
	return -1;
}

/* Numbers right-aligned, text left-aligned; no trailing blanks. */
static void
print_cell(const char *text, size_t width, bool numeric, bool last)
{
	if (numeric)
		printf("%*s", (int)width, text);
	else if (last)
		fputs(text, stdout);
	else
		printf("%-*s", (int)width, text);
	fputs(last ? "\n" : "  ", stdout);
}

static void
print_table(const json_t *rows, int indent)
{
	static char cols[MAX_COLS][MAX_KEY];
	static struct cell cells[MAX_CELLS];
	size_t width[MAX_COLS] = { 0 };
	bool numeric[MAX_COLS];
	unsigned int nb = 0, i, n;
	size_t r;
	json_t *row;

	/* Columns: every key of every row, in order of first appearance. */
	json_array_foreach(rows, r, row) {
		n = flatten(row, "", cells, 0);
		for (i = 0; i < n; i++) {
			if (column_of(cols, nb, cells[i].key) >= 0 || nb == MAX_COLS)
				continue;
			memcpy(cols[nb], cells[i].key, MAX_KEY);
			width[nb] = strlen(cols[nb]);
			numeric[nb++] = true;
		}
	}
	json_array_foreach(rows, r, row) {
		n = flatten(row, "", cells, 0);
		for (i = 0; i < n; i++) {
			int c = column_of(cols, nb, cells[i].key);
			char t[MAX_TEXT];

			if (c < 0)
				continue;
			value_text(cells[i].key, cells[i].val, t, sizeof(t));
			if (strlen(t) > width[c])
				width[c] = strlen(t);
			if (!json_is_number(cells[i].val))
				numeric[c] = false;
		}
	}
	printf("%*s", indent, "");
	for (i = 0; i < nb; i++)
		print_cell(cols[i], width[i], numeric[i], i + 1 == nb);
	json_array_foreach(rows, r, row) {
		char text[MAX_COLS][MAX_TEXT];

		memset(text, 0, sizeof(text));
		n = flatten(row, "", cells, 0);
		for (i = 0; i < n; i++) {
			int c = column_of(cols, nb, cells[i].key);

			if (c >= 0)
				value_text(cells[i].key, cells[i].val, text[c], MAX_TEXT);
		}
		printf("%*s", indent, "");
		for (i = 0; i < nb; i++) {
			if (text[i][0] == '\0')
				strcpy(text[i], "-");
			print_cell(text[i], width[i], numeric[i], i + 1 == nb);
		}
	}
}

/* "name  value" lines, then the tables inside, titled. */
static void
print_object(const json_t *obj, int indent)
{
	static struct cell cells[MAX_CELLS];
	unsigned int n = flatten(obj, "", cells, 0), i;
	struct cell *mine = malloc(sizeof(*mine) * (n + 1));
	size_t width = 0;

	if (mine == NULL)
		return;
	/* Recursion below reuses the static cells. */
	memcpy(mine, cells, sizeof(*mine) * n);
	for (i = 0; i < n; i++)
		if (!is_table(mine[i].val) && strlen(mine[i].key) > width)
			width = strlen(mine[i].key);
	for (i = 0; i < n; i++) {
		char t[MAX_TEXT * 4];

		if (is_table(mine[i].val))
			continue;
		value_text(mine[i].key, mine[i].val, t, sizeof(t));
		printf("%*s%-*s  %s\n", indent, "", (int)width, mine[i].key, t);
	}
	for (i = 0; i < n; i++) {
		if (!is_table(mine[i].val))
			continue;
		printf("%s%*s%s:\n", i > 0 ? "\n" : "", indent, "", mine[i].key);
		print_table(mine[i].val, indent + 2);
	}
	free(mine);
}

void
rc_print(const struct rc_cmd *cmd, const json_t *reply)
{
	json_t *body = json_deep_copy(reply), *only;
	const char *key;
	void *it;

	if (cmd != NULL && cmd->print != NULL) {
		json_decref(body);
		cmd->print(reply);
		return;
	}
	json_object_del(body, "v");
	json_object_del(body, "id");
	json_object_del(body, "ok");
	/* Sample timestamps are for --json and rates; people have the clock of --watch. */
	json_object_del(body, "time");
	json_object_del(body, "clock_ns");
	it = json_object_iter(body);
	key = it != NULL ? json_object_iter_key(it) : NULL;
	only = it != NULL && json_object_iter_next(body, it) == NULL ?
		json_object_iter_value(it) : NULL;
	if (only != NULL && is_table(only))
		print_table(only, 0);
	else if (json_is_array(only) && json_array_size(only) == 0)
		printf("no %s\n", key);
	else if (json_is_object(only))
		print_object(only, 0);
	else
		print_object(body, 0);
	json_decref(body);
}

/* mr.dump: offset, hex bytes, ASCII, as hexdump -C. */
void
rc_print_dump(const json_t *reply)
{
	const char *hex = json_string_value(json_object_get(reply, "hex"));
	json_int_t base = json_integer_value(json_object_get(reply, "offset"));
	size_t len = hex != NULL ? strlen(hex) / 2 : 0, i, j;

	for (i = 0; i < len; i += 16) {
		char ascii[17] = { 0 };

		printf("%08" PRIx64 " ", (uint64_t)base + i);
		for (j = 0; j < 16; j++) {
			unsigned int b;

			if (i + j >= len || sscanf(hex + 2 * (i + j), "%2x", &b) != 1) {
				printf("%s   ", j == 8 ? " " : "");
				continue;
			}
			printf("%s %02x", j == 8 ? " " : "", b);
			ascii[j] = isprint((int)b) ? (char)b : '.';
		}
		printf("  |%s|\n", ascii);
	}
}

/* counters: the generic lines, or with "descriptions" (--describe) NAME VALUE DESCRIPTION. */
void
rc_print_counters(const json_t *reply)
{
	const json_t *cnt = json_object_get(reply, "counters");
	const json_t *desc = json_object_get(reply, "descriptions");
	size_t nw = 0, vw = 0;
	const char *name;
	json_t *body, *v;

	if (!json_is_object(desc)) {
		rc_print(NULL, reply);
		return;
	}
	/* The selector (scope, worker...) first, as the generic output has it. */
	body = json_deep_copy(reply);
	json_object_del(body, "time");
	json_object_del(body, "clock_ns");
	json_object_del(body, "v");
	json_object_del(body, "id");
	json_object_del(body, "ok");
	json_object_del(body, "counters");
	json_object_del(body, "descriptions");
	if (json_object_size(body) > 0) {
		print_object(body, 0);
		putchar('\n');
	}
	json_decref(body);
	json_object_foreach((json_t *)(uintptr_t)cnt, name, v) {
		char t[MAX_TEXT];

		value_text(name, v, t, sizeof(t));
		nw = strlen(name) > nw ? strlen(name) : nw;
		vw = strlen(t) > vw ? strlen(t) : vw;
	}
	json_object_foreach((json_t *)(uintptr_t)cnt, name, v) {
		const char *d = json_string_value(json_object_get(desc, name));
		char t[MAX_TEXT];

		value_text(name, v, t, sizeof(t));
		printf("%-*s  %*s  %s\n", (int)nw, name, (int)vw, t, d != NULL ? d : "");
	}
}
