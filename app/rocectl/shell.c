/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interactive prompt, in the manner of testpmd: the same commands as on the command line, one
 * per line, over one connection (re-established when lost). On a terminal: libedit with
 * history (~/.rocectl_history) and Tab completion of command words and argument names;
 * otherwise lines are read from stdin without a prompt, so that scripts can pipe commands in.
 */
#include <errno.h>
#include <histedit.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocectl.h"

#define MAX_WORDS 64
#define MAX_CANDS 256

static const char *const extra_words[] = { "help", "perf", "pingpong", "rping", "quit", "exit" };

struct cands {
	const char *word[MAX_CANDS];
	unsigned int nb;
};

static void
cand_add(struct cands *c, const char *w)
{
	unsigned int i;

	for (i = 0; i < c->nb; i++)
		if (strcmp(c->word[i], w) == 0)
			return;
	if (c->nb < MAX_CANDS)
		c->word[c->nb++] = w;
}

/* The @n-th word of a command's words (static storage). */
static const char *
nth_word(const char *words, int n)
{
	static char buf[MAX_CANDS][32];
	static unsigned int next;
	char *w = buf[next++ % MAX_CANDS];
	size_t len;

	while (n-- > 0 && *words != '\0')
		words += strcspn(words, " ") + (words[strcspn(words, " ")] == ' ');
	len = strcspn(words, " ");
	if (len == 0 || len >= sizeof(buf[0]))
		return NULL;
	memcpy(w, words, len);
	w[len] = '\0';
	return w;
}

/* Argument names ("size=", "--nonzero") of @cmd. */
static void
arg_cands(const struct rc_cmd *cmd, struct cands *c)
{
	static char buf[MAX_CANDS][48];
	static unsigned int next;
	const struct rc_arg *a;

	for (a = cmd->args; a != NULL && a->name != NULL; a++) {
		char *w = buf[next++ % MAX_CANDS];

		snprintf(w, sizeof(buf[0]), a->flags & RC_OPT ? "--%s" : "%s=", a->name);
		cand_add(c, w);
	}
	cand_add(c, "--json");
	if (cmd->flags & RC_WATCH) {
		cand_add(c, "--watch");
		cand_add(c, "--count");
	}
}

/* Storage for candidates built here ("dir=rx"); reused round robin. */
static const char *
cand_str(const char *a, const char *b, size_t blen)
{
	static char buf[MAX_CANDS][96];
	static unsigned int next;
	char *w = buf[next++ % MAX_CANDS];
	size_t alen = strlen(a);

	if (alen >= sizeof(buf[0]))
		alen = sizeof(buf[0]) - 1;
	if (blen > sizeof(buf[0]) - 1 - alen)
		blen = sizeof(buf[0]) - 1 - alen;
	memcpy(w, a, alen);
	memcpy(w + alen, b, blen);
	w[alen + blen] = '\0';
	return w;
}

/*
 * The values an argument takes, as its help says them: "rx | tx | both (default ...)",
 * "mlx5 | paper | off: load ...", "inc | zero | byte:0xNN | random:SEED" (given up to the
 * ':'), a list "local_write,remote_write,..." for RC_LIST, true/false for RC_BOOL.
 */
static void
arg_values(const struct rc_arg *a, const char *prefix, struct cands *c)
{
	static const char *const bools[] = { "true", "false" };
	const char *h = a->help, *end;
	unsigned int i, nb = 0;
	size_t len;

	if (a->type == RC_BOOL) {
		for (i = 0; i < 2; i++)
			cand_add(c, cand_str(prefix, bools[i], strlen(bools[i])));
		return;
	}
	if (a->type == RC_LIST) {
		len = strcspn(h, " ");
		while (len > 0) {
			size_t w = strcspn(h, ",");

			w = w < len ? w : len;
			if (w > 0)
				cand_add(c, cand_str(prefix, h, w));
			h += w + (w < len);
			len -= w + (w < len);
		}
		return;
	}
	/* words separated by " | ", at least two */
	for (end = strstr(h, " | "); end != NULL || nb > 0; end = strstr(h, " | ")) {
		const char *tok_end = end != NULL ? end : h + strcspn(h, " (");
		const char *colon = memchr(h, ':', (size_t)(tok_end - h));

		len = (size_t)(tok_end - h);
		if (memchr(h, ' ', len) != NULL)
			break;
		if (colon != NULL)	/* "random:SEED" gives "random:", "off:" gives "off" */
			len = (size_t)(colon - h) + (colon + 1 < tok_end);
		if (len > 0)
			cand_add(c, cand_str(prefix, h, len));
		nb++;
		if (end == NULL)
			break;
		h = end + 3;
	}
}

/* @partial is "name=..." of @cmd: the values of its argument "name". */
static void
value_cands(const struct rc_cmd *cmd, const char *partial, struct cands *c)
{
	const char *eq = strchr(partial, '=');
	const struct rc_arg *a;
	char prefix[96];

	for (a = cmd->args; a != NULL && a->name != NULL; a++) {
		const char *last;

		if (strlen(a->name) != (size_t)(eq - partial) ||
				strncmp(a->name, partial, (size_t)(eq - partial)) != 0)
			continue;
		/* a list completes its last element */
		last = a->type == RC_LIST ? strrchr(eq, ',') : NULL;
		snprintf(prefix, sizeof(prefix), "%.*s", (int)((last != NULL ? last : eq) + 1 -
				partial), partial);
		arg_values(a, prefix, c);
	}
}

/* rocectl perf: its tests, then its options. */
static void
perf_cands(char **w, int n, struct cands *c)
{
	unsigned int i;
	const char *o;

	if (n == 1) {
		for (i = 0; rc_perf_tests[i] != NULL; i++)
			cand_add(c, rc_perf_tests[i]);
		return;
	}
	for (i = 0; (o = rc_perf_option(i)) != NULL; i++)
		cand_add(c, o);
	(void)w;
}

/* What may follow the complete words @w[0..n-1]; @partial: the word being typed. */
static void
candidates(char **w, int n, const char *partial, struct cands *c)
{
	unsigned int i;
	int k;

	if (n > 0 && strcmp(w[0], "perf") == 0) {
		perf_cands(w, n, c);
		return;
	}
	if (n > 0 && strcmp(w[0], "help") == 0) {
		w++;
		n--;
		if (n > 1)
			return;
		if (n == 0) {
			cand_add(c, "perf");
			cand_add(c, "pingpong");
			cand_add(c, "rping");
		}
	} else if (n == 0) {
		for (i = 0; i < sizeof(extra_words) / sizeof(extra_words[0]); i++)
			cand_add(c, extra_words[i]);
	} else if (strchr(partial, '=') != NULL && partial[0] != '-') {
		for (i = 0; i < rc_nb_cmds; i++)
			if (rc_match(&rc_cmds[i], n, w) > 0)
				value_cands(&rc_cmds[i], partial, c);
		return;
	}
	for (i = 0; i < rc_nb_cmds; i++) {
		const struct rc_cmd *cmd = &rc_cmds[i];
		const char *next;

		for (k = 0; k < n; k++) {
			const char *word = nth_word(cmd->words, k);

			if (word == NULL || strcmp(word, w[k]) != 0)
				break;
		}
		if (k < n && rc_match(cmd, n, w) == 0)
			continue;
		next = nth_word(cmd->words, n);
		if (next != NULL && k == n)
			cand_add(c, next);
		else if (next == NULL || rc_match(cmd, n, w) > 0)
			arg_cands(cmd, c);
	}
}

static size_t
common_prefix(const struct cands *c)
{
	size_t len = strlen(c->word[0]);
	unsigned int i;

	for (i = 1; i < c->nb; i++) {
		size_t j = 0;

		while (j < len && c->word[i][j] == c->word[0][j])
			j++;
		len = j;
	}
	return len;
}

/* The line (up to the cursor) of the last Tab that listed nothing: a second Tab lists. */
static struct {
	char line[1024];
	size_t len;
	bool armed;
} last_tab;

static unsigned char
complete(EditLine *el, int ch)
{
	const LineInfo *li = el_line(el);
	char line[1024], *w[MAX_WORDS], *save = NULL, *t;
	const char *partial;
	struct cands all = { .nb = 0 }, hit = { .nb = 0 };
	size_t len = (size_t)(li->cursor - li->buffer), plen;
	unsigned int i;
	int n = 0;

	(void)ch;
	if (len >= sizeof(line))
		return CC_ERROR;
	memcpy(line, li->buffer, len);
	line[len] = '\0';
	for (t = strtok_r(line, " \t", &save); t != NULL && n < MAX_WORDS;
			t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	/* The word under the cursor is partial unless the line ends with a blank. */
	partial = len > 0 && line[len - 1] != ' ' && li->buffer[len - 1] != ' ' &&
		li->buffer[len - 1] != '\t' && n > 0 ? w[--n] : "";
	candidates(w, n, partial, &all);
	plen = strlen(partial);
	for (i = 0; i < all.nb; i++)
		if (strncmp(all.word[i], partial, plen) == 0)
			cand_add(&hit, all.word[i]);
	if (hit.nb == 0)
		return CC_REFRESH_BEEP;
	if (hit.nb == 1) {
		const char *word = hit.word[0];
		char last = word[strlen(word) - 1];
		char tail[128];

		/* "name=" and "random:" go on with a value, others end the word */
		snprintf(tail, sizeof(tail), "%s%s", word + plen,
				last == '=' || last == ':' ? "" : " ");
		last_tab.armed = false;
		return el_insertstr(el, tail) == 0 ? CC_REFRESH : CC_ERROR;
	}
	if (common_prefix(&hit) > plen) {
		char tail[128];

		snprintf(tail, sizeof(tail), "%.*s", (int)(common_prefix(&hit) - plen),
				hit.word[0] + plen);
		if (el_insertstr(el, tail) != 0)
			return CC_ERROR;
		/* still ambiguous: the next Tab lists, as bash */
		li = el_line(el);
		last_tab.len = (size_t)(li->cursor - li->buffer);
		last_tab.armed = last_tab.len < sizeof(last_tab.line);
		if (last_tab.armed)
			memcpy(last_tab.line, li->buffer, last_tab.len);
		return CC_REFRESH_BEEP;
	}
	/* Ambiguous, nothing to add: the first Tab beeps, a second one lists (as bash). */
	if (!last_tab.armed || last_tab.len != len || memcmp(last_tab.line, li->buffer, len) != 0) {
		memcpy(last_tab.line, li->buffer, len);
		last_tab.len = len;
		last_tab.armed = true;
		return CC_REFRESH_BEEP;
	}
	last_tab.armed = false;
	/* List the choices under the line; libedit redraws the line below them. */
	putchar('\n');
	for (i = 0; i < hit.nb; i++)
		printf("%s%s", i ? "  " : "", hit.word[i]);
	fflush(stdout);
	return CC_REDISPLAY;
}

static char *
prompt(EditLine *el)
{
	(void)el;
	return (char *)(uintptr_t)"rocectl> ";
}

struct shell {
	EditLine *el;
	History *hist;
	HistEvent ev;
	char hist_path[PATH_MAX];
};

static void
shell_open(struct shell *sh)
{
	const char *home = getenv("HOME");

	sh->el = el_init("rocectl", stdin, stdout, stderr);
	sh->hist = history_init();
	if (sh->el == NULL || sh->hist == NULL)
		return;
	history(sh->hist, &sh->ev, H_SETSIZE, 1000);
	history(sh->hist, &sh->ev, H_SETUNIQUE, 1);
	if (home != NULL && home[0] != '\0') {
		snprintf(sh->hist_path, sizeof(sh->hist_path), "%s/.rocectl_history", home);
		history(sh->hist, &sh->ev, H_LOAD, sh->hist_path);
	}
	el_set(sh->el, EL_EDITOR, "emacs");
	el_set(sh->el, EL_SIGNAL, 1);
	el_set(sh->el, EL_PROMPT, prompt);
	el_set(sh->el, EL_HIST, history, sh->hist);
	/* The wide call: the narrow one copies the two strings and never frees them. */
	el_wset(sh->el, EL_ADDFN, L"rc-complete", L"complete a command word", complete);
	el_set(sh->el, EL_BIND, "^I", "rc-complete", NULL);
	el_source(sh->el, NULL);
}

static void
shell_close(struct shell *sh)
{
	if (sh->hist != NULL && sh->hist_path[0] != '\0')
		history(sh->hist, &sh->ev, H_SAVE, sh->hist_path);
	if (sh->el != NULL)
		el_end(sh->el);
	if (sh->hist != NULL)
		history_end(sh->hist);
}

int
rc_shell(const struct rc_opts *opts)
{
	struct roce_ctl_client *client = NULL;
	struct shell sh = { .el = NULL };
	bool tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	Tokenizer *tok = tok_init(NULL);
	char *buf = NULL;
	size_t cap = 0;
	int status = RC_EXIT_OK;
	bool eof = false;

	if (tok == NULL)
		return RC_EXIT_CONNECT;
	if (tty) {
		shell_open(&sh);
		if (sh.el == NULL || sh.hist == NULL) {
			fprintf(stderr, "rocectl: cannot start the line editor\n");
			shell_close(&sh);
			tok_end(tok);
			return RC_EXIT_USAGE;
		}
		printf("rocectl: %s; help for the commands, Tab completes, quit leaves\n",
				opts->socket);
	}
	for (;;) {
		const char **av;
		const char *line;
		int ac, count;

		line = tty ? el_gets(sh.el, &count) : getline(&buf, &cap, stdin) < 0 ? NULL : buf;
		if (line == NULL) {
			eof = true;
			break;
		}
		tok_reset(tok);
		if (tok_str(tok, line, &ac, &av) != 0) {
			fprintf(stderr, "rocectl: unmatched quote\n");
			status = RC_EXIT_USAGE;
			continue;
		}
		if (ac == 0 || av[0][0] == '#')
			continue;
		if (tty)
			history(sh.hist, &sh.ev, H_ENTER, line);
		if (strcmp(av[0], "quit") == 0 || strcmp(av[0], "exit") == 0)
			break;
		status = rc_run(&client, opts, ac, (char **)(uintptr_t)av);
		fflush(stdout);
	}
	if (tty && eof)
		putchar('\n');
	free(buf);
	tok_end(tok);
	shell_close(&sh);
	roce_ctl_client_close(client);
	return status;
}
