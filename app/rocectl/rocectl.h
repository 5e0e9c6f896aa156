/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCECTL_H
#define ROCECTL_H

/*
 * rocectl: the command table (cmds.c) turns words and NAME=VALUE arguments into a request,
 * print.c formats replies, shell.c is the interactive prompt, rocectl.c the rest.
 */

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "roce_ctl.h"

/* Exit codes. */
#define RC_EXIT_OK 0
#define RC_EXIT_FAILED 1     /* the daemon answered with an error */
#define RC_EXIT_USAGE 2
#define RC_EXIT_CONNECT 3    /* cannot connect, timeout, connection lost, garbage */

/* Argument value types. */
enum rc_type {
	RC_U64,      /* decimal or 0x hex, optional K/M/G/T suffix (powers of 1024) */
	RC_INT,      /* signed decimal */
	RC_BOOL,     /* true/false, yes/no, on/off, 1/0 */
	RC_STR,
	RC_LIST,     /* comma-separated words, sent as an array of strings */
};

#define RC_REQ (1u << 0)     /* required */
#define RC_POS (1u << 1)     /* may also be given by position, in table order */
#define RC_OPT (1u << 2)     /* RC_BOOL: --NAME sets it true (NAME=BOOL works too) */
#define RC_ZERO (1u << 3)    /* RC_U64: sent as 0 when not given (the daemon's default differs) */
#define RC_LOCAL (1u << 4)   /* with RC_OPT: an option of rocectl's (the command's run takes it
			      * out of the request) */
#define RC_REST (1u << 5)    /* RC_STR: NAME=VALUE words of no other argument are appended to
			      * it, comma-separated ("impair set loss=1% dup=0.1%") */
#define RC_PATH (1u << 6)    /* RC_STR: a file name, made absolute against rocectl's directory */

/* One argument of a command: the request member it fills (dotted: nested object). */
struct rc_arg {
	const char *name;
	enum rc_type type;
	unsigned int flags;
	const char *help;
};

#define RC_WATCH (1u << 0)   /* accepts --watch SECS and --count N */
#define RC_RAW (1u << 1)     /* "call": the protocol command and JSON arguments are given */
#define RC_LIVE (1u << 2)    /* RC_WATCH, every second unless --watch says otherwise */

struct rc_opts;
struct rc_cmd;

/* A command that is more than one request and its printed reply (cc trace --follow). */
typedef int (*rc_run_fn)(struct roce_ctl_client **client, const struct rc_opts *o,
		const struct rc_cmd *cmd, json_t *args);

struct rc_cmd {
	const char *words;       /* "mr reg" */
	const char *cmd;         /* "mr.reg" */
	const struct rc_arg *args;   /* terminated by an entry with a NULL name */
	unsigned int flags;
	/* Human output; NULL: the generic one. */
	void (*print)(const json_t *reply);
	const char *help;
};

/* What runs @p cmd instead of one request, printed; NULL: that request. */
rc_run_fn rc_cmd_run(const struct rc_cmd *cmd);

/* Per-invocation options. */
struct rc_opts {
	const char *socket;
	int timeout_ms;
	bool json;
	double watch;            /* seconds between samples; 0: once */
	unsigned long count;     /* samples with watch; 0: until interrupted */
};

extern const struct rc_cmd rc_cmds[];
extern const unsigned int rc_nb_cmds;

/*
 * Find the command @argv starts with; *used gets the number of words it took.
 * @return the command, or NULL after printing a usage error.
 */
const struct rc_cmd *rc_find(int argc, char **argv, int *used);

/* Whether @argv starts with @cmd's words or its protocol name; @return the words used, or 0. */
int rc_match(const struct rc_cmd *cmd, int argc, char **argv);

/* Build the request arguments of @cmd from @argv; @return 0, or -EINVAL after a usage error. */
int rc_build(const struct rc_cmd *cmd, int argc, char **argv, json_t *args,
		struct rc_opts *opts);

/* Print help: everything, or the commands starting with the given words. @return exit code. */
int rc_help(int argc, char **argv);

/* Print the usage line of @cmd to @f, after @prefix. */
void rc_usage_line(const struct rc_cmd *cmd, FILE *f, const char *prefix);

/* Print a reply for humans. */
void rc_print(const struct rc_cmd *cmd, const json_t *reply);
void rc_print_dump(const json_t *reply);
/* counters: with descriptions (--describe), one NAME VALUE DESCRIPTION line each. */
void rc_print_counters(const json_t *reply);
/* stats: testpmd's port blocks and rates; top: QPs by rate (stats.c). */
void rc_print_stats(const json_t *reply);
void rc_print_top(const json_t *reply);
/* stats stages: a table of the stages in cycles and ns (stats.c). */
void rc_print_stages(const json_t *reply);
/* impair.set and impair.show (impair.c). */
void rc_print_impair(const json_t *reply);

/*
 * Run one command line (argv after the global options) over @client, connecting when
 * *client is NULL. @return the exit code.
 */
int rc_run(struct roce_ctl_client **client, const struct rc_opts *opts, int argc, char **argv);

/* rocectl perf: @argv starts with "perf". @return the exit code. */
int rc_perf(const struct rc_opts *opts, int argc, char **argv);
/* rocectl perf's usage text. */
void rc_perf_usage(FILE *f);
/* For completion: rocectl perf's tests (NULL-terminated), the i-th of its options ("--lat";
 * NULL past the last). */
extern const char *const rc_perf_tests[];
const char *rc_perf_option(unsigned int i);

/* rocectl pingpong (pingpong.c): @argv starts with "pingpong". @return the exit code. */
int rc_pingpong(const struct rc_opts *opts, int argc, char **argv);
void rc_pingpong_usage(FILE *f);

/* rocectl rping: rdma-core's rping through roced (rping.c); @argv starts with "rping".
 * @return rping's exit status. */
int rc_rping(const struct rc_opts *opts, int argc, char **argv);
void rc_rping_usage(FILE *f);

/* The interactive prompt. @return the exit code of the last command. */
int rc_shell(const struct rc_opts *opts);

/* Set by SIGINT during --watch (rc_on_sigint). */
extern volatile int rc_interrupted;
void rc_on_sigint(int sig);

/*
 * Send one request; print an error reply, or with --json the reply. *@p reply gets the reply
 * (the caller frees it) or NULL. @return the exit code.
 */
int rc_request(struct roce_ctl_client **client, const struct rc_opts *o, const char *name,
		const json_t *args, json_t **reply);

/* cc trace (cc.c): the trace of a QP, as a table, CSV or JSON, once or following it. */
int rc_cc_trace(struct roce_ctl_client **client, const struct rc_opts *o,
		const struct rc_cmd *cmd, json_t *args);

#endif /* ROCECTL_H */
