/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocectl: command-line client of roced's control socket (doc/rocectl.1,
 * doc/control-protocol.md). One command per invocation, or an interactive prompt without one.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rocectl.h"

#ifndef ROCEDP_VERSION
#define ROCEDP_VERSION "unknown"
#endif

#define DEFAULT_TIMEOUT_MS 5000

volatile int rc_interrupted;

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: rocectl [-s SOCKET] [--json] [--timeout MS] [COMMAND [ARG...]]\n"
		"  -s, --socket PATH   control socket (default $ROCECTL_SOCKET or %s)\n"
		"  -j, --json          print the raw JSON reply\n"
		"  -t, --timeout MS    wait at most MS ms for the daemon (default %d; 0: forever)\n"
		"  -h, --help          this help; rocectl help: the commands\n"
		"  -V, --version       print the version\n"
		"Without COMMAND: an interactive prompt. Exit status: 0 ok, 1 the daemon answered\n"
		"with an error, 2 usage error, 3 cannot connect, timeout or connection lost.\n",
		ROCE_CTL_DEFAULT_PATH, DEFAULT_TIMEOUT_MS);
}

static int
connect_client(struct roce_ctl_client **client, const struct rc_opts *o)
{
	if (*client != NULL)
		return RC_EXIT_OK;
	*client = roce_ctl_client_connect(o->socket, o->timeout_ms);
	if (*client != NULL)
		return RC_EXIT_OK;
	fprintf(stderr, "rocectl: cannot connect to %s: %s%s\n", o->socket, strerror(errno),
			errno == ENOENT || errno == ECONNREFUSED ? " (is roced running?)" : "");
	return RC_EXIT_CONNECT;
}

static void
drop_client(struct roce_ctl_client **client)
{
	roce_ctl_client_close(*client);
	*client = NULL;
}

int
rc_request(struct roce_ctl_client **client, const struct rc_opts *o, const char *name,
		const json_t *args, json_t **reply_out)
{
	const char *code, *msg;
	json_t *reply = NULL;
	int rc, st;

	*reply_out = NULL;
	rc = connect_client(client, o);
	if (rc != RC_EXIT_OK)
		return rc;
	rc = roce_ctl_client_request(*client, name, args, &reply, o->timeout_ms);
	if (rc < 0) {
		fprintf(stderr, "rocectl: %s: %s\n", name, rc == -ETIMEDOUT ?
				"no reply in time (--timeout)" : rc == -ECONNRESET ?
				"roced closed the connection" : strerror(-rc));
		/* The connection's state is unknown: the next command reconnects. */
		drop_client(client);
		return RC_EXIT_CONNECT;
	}
	st = roce_ctl_reply_status(reply, &code, &msg);
	if (o->json) {
		json_dumpf(reply, stdout, JSON_COMPACT | JSON_REAL_PRECISION(15));
		putchar('\n');
	}
	if (st == 0) {
		rc = RC_EXIT_OK;
	} else if (st == -EPROTO) {
		fprintf(stderr, "rocectl: %s: malformed reply\n", name);
		rc = RC_EXIT_CONNECT;
	} else {
		fprintf(stderr, "rocectl: %s: %s: %s\n", name, code, msg != NULL ? msg : "");
		rc = RC_EXIT_FAILED;
	}
	/* A null id: the server refused the connection or the line and has closed it. */
	if (json_is_null(json_object_get(reply, "id"))) {
		drop_client(client);
		if (st == -EBUSY)
			rc = RC_EXIT_CONNECT;
	}
	*reply_out = reply;
	return rc;
}

/* One request, its reply printed. @return the exit code. */
static int
request(struct roce_ctl_client **client, const struct rc_opts *o, const struct rc_cmd *cmd,
		const char *name, const json_t *args)
{
	json_t *reply;
	int rc = rc_request(client, o, name, args, &reply);

	if (rc == RC_EXIT_OK && !o->json)
		rc_print(cmd, reply);
	json_decref(reply);
	fflush(stdout);
	return rc;
}

void
rc_on_sigint(int sig)
{
	(void)sig;
	rc_interrupted = 1;
}

/* Repeat a request every o->watch seconds until ^C or o->count samples. */
static int
watch(struct roce_ctl_client **client, const struct rc_opts *o, const struct rc_cmd *cmd,
		const char *name, const json_t *args)
{
	struct sigaction sa = { .sa_handler = rc_on_sigint }, old;
	bool tty = isatty(STDOUT_FILENO);
	unsigned long n = 0;
	int rc = RC_EXIT_OK;

	rc_interrupted = 0;
	sigaction(SIGINT, &sa, &old);
	while (!rc_interrupted) {
		struct timespec ts = { (time_t)o->watch,
			(long)((o->watch - (double)(time_t)o->watch) * 1e9) };
		time_t now = time(NULL);
		char when[32];

		if (!o->json) {
			strftime(when, sizeof(when), "%F %T", localtime(&now));
			printf("%s%s every %gs: %s\n\n", tty ? "\033[H\033[2J" : n ? "\n" : "",
					cmd->words, o->watch, when);
		}
		rc = request(client, o, cmd, name, args);
		if (rc != RC_EXIT_OK || (o->count != 0 && ++n >= o->count))
			break;
		nanosleep(&ts, NULL);
	}
	sigaction(SIGINT, &old, NULL);
	return rc;
}

/* How many leading words name the command (at most two, none an option or NAME=VALUE). */
static int
rc_find_quiet(int argc, char **argv)
{
	int n;

	for (n = 0; n < argc && n < 2; n++)
		if (argv[n][0] == '-' || strchr(argv[n], '=') != NULL)
			break;
	return n;
}

int
rc_run(struct roce_ctl_client **client, const struct rc_opts *opts, int argc, char **argv)
{
	const struct rc_cmd *cmd;
	struct rc_opts o = *opts;
	const char *name;
	json_t *args;
	int used, rc;

	if (argc == 0)
		return RC_EXIT_OK;
	if (strcmp(argv[0], "help") == 0)
		return rc_help(argc - 1, argv + 1);
	if (strcmp(argv[0], "perf") == 0)
		return rc_perf(opts, argc, argv);
	if (strcmp(argv[0], "pingpong") == 0)
		return rc_pingpong(opts, argc, argv);
	if (strcmp(argv[0], "rping") == 0)
		return rc_rping(opts, argc, argv);
	/* COMMAND ... --help: the command's help on stdout, as "help COMMAND" */
	for (used = 1; used < argc; used++)
		if (strcmp(argv[used], "--help") == 0 || strcmp(argv[used], "-h") == 0)
			return rc_help(rc_find_quiet(argc, argv), argv);
	cmd = rc_find(argc, argv, &used);
	if (cmd == NULL)
		return RC_EXIT_USAGE;
	args = json_object();
	if (rc_build(cmd, argc - used, argv + used, args, &o) < 0) {
		json_decref(args);
		return RC_EXIT_USAGE;
	}
	name = cmd->cmd != NULL ? cmd->cmd : json_string_value(json_object_get(args, "cmd"));
	if (rc_cmd_run(cmd) != NULL) {
		rc = rc_cmd_run(cmd)(client, &o, cmd, args);
		json_decref(args);
		return rc;
	}
	if ((o.count != 0 || (cmd->flags & RC_LIVE)) && o.watch == 0)
		o.watch = 1;
	rc = o.watch > 0 ? watch(client, &o, cmd, name, args) : request(client, &o, cmd, name,
			args);
	json_decref(args);
	return rc;
}

static int
parse_timeout(const char *s, int *ms)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > 86400000)
		return -EINVAL;
	*ms = v == 0 ? -1 : (int)v;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct rc_opts o = {
		.socket = getenv("ROCECTL_SOCKET"),
		.timeout_ms = DEFAULT_TIMEOUT_MS,
	};
	struct roce_ctl_client *client = NULL;
	int c, rc;

	if (o.socket == NULL || o.socket[0] == '\0')
		o.socket = ROCE_CTL_DEFAULT_PATH;
	/* '+': options end at the command, whose own arguments may start with "--". */
	while ((c = getopt_long(argc, argv, "+s:jt:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.socket = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 't':
			if (parse_timeout(optarg, &o.timeout_ms) == 0)
				break;
			fprintf(stderr, "rocectl: --timeout: \"%s\" is not a number of ms\n",
					optarg);
			return RC_EXIT_USAGE;
		case 'h':
			usage(stdout);
			return RC_EXIT_OK;
		case 'V':
			printf("rocectl %s (control protocol %d)\n", ROCEDP_VERSION,
					ROCE_CTL_VERSION);
			return RC_EXIT_OK;
		default:
			usage(stderr);
			return RC_EXIT_USAGE;
		}
	}
	if (optind == argc)
		return rc_shell(&o);
	rc = rc_run(&client, &o, argc - optind, argv + optind);
	roce_ctl_client_close(client);
	return rc;
}
