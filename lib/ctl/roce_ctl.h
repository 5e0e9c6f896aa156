/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_CTL_H
#define ROCE_CTL_H

/**
 * @file
 * Control protocol (doc/control-protocol.md): a UNIX stream socket on which a client writes one
 * JSON request per line and reads one JSON reply per line.
 *
 * The server side is a command table filled by the daemon, a poll()-based server that owns the
 * socket, its clients and their buffers, and argument helpers that check types and ranges and
 * write the error message, so that a handler is a few lines:
 *
 * @code
 * static int
 * cmd_mr_dereg(void *arg, json_t *req, json_t *reply)
 * {
 *	uint32_t rkey;
 *	int rc = roce_ctl_arg_u32(req, reply, "rkey", &rkey, true, 0, UINT32_MAX);
 *
 *	if (rc < 0)
 *		return rc;
 *	if (mr_find(arg, rkey) == NULL)
 *		return roce_ctl_error(reply, -ENOENT, "no MR with rkey 0x%x", rkey);
 *	...
 *	return 0;
 * }
 * static const struct roce_ctl_cmd cmds[] = {
 *	{ "mr.dereg", cmd_mr_dereg, "deregister an MR", "rkey" },
 * };
 * @endcode
 *
 * The client side is a small blocking client used by rocectl and by tests.
 *
 * Plain C and jansson, no DPDK. A server and a client are each used by one thread at a time.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

/** Protocol version: the "v" member of every request and reply. */
#define ROCE_CTL_VERSION 1
/** Socket path when none is configured. */
#define ROCE_CTL_DEFAULT_PATH "/run/roced.sock"
/** Longest request line, in bytes without the newline. */
#define ROCE_CTL_DEFAULT_MAX_LINE (64u * 1024)
/** Clients served at once; one more is accepted, sent an EBUSY error and closed. */
#define ROCE_CTL_DEFAULT_MAX_CLIENTS 64u
/** Reply bytes buffered for one client beyond which its requests wait (backpressure). */
#define ROCE_CTL_DEFAULT_MAX_OUTPUT (4u << 20)
/** Mode of the socket file. */
#define ROCE_CTL_DEFAULT_MODE 0660
/**
 * Milliseconds without a request after which a client may be closed to make room for a new one
 * while max_clients are connected.
 */
#define ROCE_CTL_DEFAULT_IDLE_MS 60000u

/** Log levels, as syslog's. */
#define ROCE_CTL_LOG_ERR 3
#define ROCE_CTL_LOG_WARNING 4
#define ROCE_CTL_LOG_INFO 6
#define ROCE_CTL_LOG_DEBUG 7

/** One command of the table a server dispatches on. */
struct roce_ctl_cmd {
	/** Name, as in the request's "cmd" ("mr.reg"). */
	const char *name;
	/**
	 * Handler. @p req is the whole request (v, id, cmd and the arguments); the handler adds its
	 * results to @p reply, which already holds v, id and ok. "v", "id", "ok" and "error" are
	 * reserved in @p reply.
	 *
	 * @return
	 *   0: the reply is sent with ok:true and what the handler added.
	 *   -errno: an error reply is sent with the code named after the errno ("ENOENT") and the
	 *   message set by roce_ctl_error() or an argument helper, else strerror's; what the
	 *   handler added is dropped.
	 */
	int (*fn)(void *arg, json_t *req, json_t *reply);
	/** One line of help, returned by the built-in "help" command. */
	const char *help;
	/**
	 * Names of the arguments the command accepts, separated by blanks ("rkey offset
	 * length"), or NULL. When set, a request with any other member (besides v, id, cmd)
	 * gets EINVAL before the handler runs, so that a misspelt optional argument is not
	 * silently ignored. A dotted argument ("remote.qpn") is listed by its first part.
	 */
	const char *args;
};

/** Server options; zero fields take the defaults. */
struct roce_ctl_conf {
	size_t max_line;          /**< ROCE_CTL_DEFAULT_MAX_LINE */
	unsigned int max_clients; /**< ROCE_CTL_DEFAULT_MAX_CLIENTS */
	size_t max_output;        /**< ROCE_CTL_DEFAULT_MAX_OUTPUT */
	mode_t mode;              /**< ROCE_CTL_DEFAULT_MODE */
	unsigned int idle_ms;     /**< ROCE_CTL_DEFAULT_IDLE_MS */
	/** Where the server logs; NULL: stderr, warnings and errors only. */
	void (*log)(void *log_arg, int level, const char *msg);
	void *log_arg;
	/**
	 * Called with the server's handler argument when a client's connection ends, however
	 * it ends (not when the server is destroyed), with the id its requests saw in
	 * roce_ctl_server_client(): what the client owned can go. NULL: nothing is called.
	 */
	void (*on_close)(void *arg, uint64_t client);
};

/** Server counters, for a daemon's own "stats". */
struct roce_ctl_stats {
	unsigned int clients;     /**< connected now */
	uint64_t accepted;        /**< connections served */
	uint64_t rejected;        /**< connections refused because max_clients were connected */
	uint64_t requests;        /**< request lines answered */
	uint64_t errors;          /**< of which with ok:false */
	uint64_t oversized;       /**< lines longer than max_line (client disconnected) */
	uint64_t dropped;         /**< clients closed on a read or write error */
	uint64_t evicted;         /**< idle clients closed to make room for a new one */
};

struct roce_ctl_server;

/**
 * Create a server listening on @p path.
 *
 * A stale socket file (nobody accepts on it) is replaced; a live one is not. The file gets
 * @p conf->mode exactly, whatever the umask. The built-in command "help" lists the table unless
 * the table has its own "help".
 *
 * @param path
 *   Socket path (NULL: ROCE_CTL_DEFAULT_PATH).
 * @param cmds
 *   Command table; it must outlive the server.
 * @param nb_cmds
 *   Entries in @p cmds.
 * @param arg
 *   Passed to every handler.
 * @param conf
 *   Options, or NULL for the defaults.
 * @return
 *   The server, or NULL with errno set: EINVAL (bad table: missing name or handler, duplicate
 *   name), ENAMETOOLONG, EADDRINUSE (a server answers on @p path), EEXIST (@p path is not a
 *   socket), ENOMEM, or the errno of socket(), bind(), listen(), chmod().
 */
struct roce_ctl_server *roce_ctl_server_create(const char *path, const struct roce_ctl_cmd *cmds,
		unsigned int nb_cmds, void *arg, const struct roce_ctl_conf *conf);

/**
 * The process serving a control socket, for a message when roce_ctl_server_create() fails
 * with EADDRINUSE.
 *
 * @param path
 *   Socket path (NULL: ROCE_CTL_DEFAULT_PATH).
 * @return
 *   The pid of the process listening on @p path, or -errno: ECONNREFUSED (nobody listens),
 *   EAGAIN (its backlog is full), ENOENT, EACCES, ...
 */
int roce_ctl_socket_owner(const char *path);

/**
 * Wait up to @p timeout_ms for activity, then accept clients, read, answer every complete
 * request line (in order per client, a bounded number per client per call), write what the
 * sockets take and close finished clients. Never blocks on a client. Handlers run from here.
 *
 * @param timeout_ms
 *   Most time to wait in poll(); 0 returns at once, -1 waits for activity. The wait is
 *   skipped when requests are already buffered.
 * @return
 *   Number of requests answered (>= 0), or -errno when poll() failed (not -EINTR: an
 *   interrupted wait returns 0).
 */
int roce_ctl_server_poll(struct roce_ctl_server *srv, int timeout_ms);

/**
 * Also end roce_ctl_server_poll()'s wait when @p fd is readable (another source of work of the
 * thread, such as an eventfd; the caller reads it). -1: none (the default).
 */
void roce_ctl_server_watch(struct roce_ctl_server *srv, int fd);

/**
 * Write buffered replies, waiting up to @p timeout_ms, without reading new requests; for a
 * daemon about to exit after "shutdown".
 *
 * @return
 *   0 when every reply was written, -ETIMEDOUT otherwise.
 */
int roce_ctl_server_flush(struct roce_ctl_server *srv, int timeout_ms);

/**
 * @return the id of the client whose request a handler is answering (1, 2, ... in order of
 *   connection, never reused), or 0 outside handlers.
 */
uint64_t roce_ctl_server_client(const struct roce_ctl_server *srv);

/** Close every client and the socket and remove the socket file. NULL is allowed. */
void roce_ctl_server_destroy(struct roce_ctl_server *srv);

/** Read the server's counters. */
void roce_ctl_server_stats(const struct roce_ctl_server *srv, struct roce_ctl_stats *st);

/**
 * Set the message of an error reply, for a handler about to fail.
 *
 * @return
 *   @p err, so that a handler can `return roce_ctl_error(reply, -ENOENT, "no QP 0x%x", qpn);`.
 */
int roce_ctl_error(json_t *reply, int err, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));

/** As roce_ctl_error(), with a va_list. */
int roce_ctl_verror(json_t *reply, int err, const char *fmt, va_list ap);

/**
 * @return
 *   The name of an errno value, positive or negative ("ENOENT"), or "EUNKNOWN" for one outside
 *   the protocol's list (doc/control-protocol.md).
 */
const char *roce_ctl_errno_name(int err);

/** @return the positive errno named @p name ("ENOENT"), or 0 when it is not in the list. */
int roce_ctl_errno_value(const char *name);

/*
 * Argument helpers. Each reads member @p name of @p req; a dotted name ("remote.qpn") reads a
 * member of a nested object. An absent member or a JSON null is "absent".
 *
 * Each returns 1 when the argument is present and valid (stored in the output), 0 when it is
 * absent and not required (the output is left as it was: set the default first), or -EINVAL
 * after writing a message naming the argument and what it must be into @p reply.
 */

/**
 * An unsigned integer from @p min to @p max: a JSON integer, or a string in decimal or "0x" hex
 * (for values above 2^63 - 1, which JSON integers here cannot hold).
 */
int roce_ctl_arg_u64(const json_t *req, json_t *reply, const char *name, uint64_t *v,
		bool required, uint64_t min, uint64_t max);

/** As roce_ctl_arg_u64(), into a uint32_t. */
int roce_ctl_arg_u32(const json_t *req, json_t *reply, const char *name, uint32_t *v,
		bool required, uint32_t min, uint32_t max);

/** A signed JSON integer from @p min to @p max. */
int roce_ctl_arg_int(const json_t *req, json_t *reply, const char *name, int *v, bool required,
		int min, int max);

/** A JSON true or false. */
int roce_ctl_arg_bool(const json_t *req, json_t *reply, const char *name, bool *v,
		bool required);

/**
 * A string of at most @p max_len bytes (0: any). *@p v points into @p req: it lives as long as
 * the request, that is until the handler returns.
 */
int roce_ctl_arg_str(const json_t *req, json_t *reply, const char *name, const char **v,
		bool required, size_t max_len);

/** A string that is one of @p names[0..nb-1]; *@p idx gets its index. NULL names are skipped. */
int roce_ctl_arg_enum(const json_t *req, json_t *reply, const char *name,
		const char *const *names, unsigned int nb, unsigned int *idx, bool required);

/**
 * An array of strings, each one of @p names[0..nb-1] (nb <= 64); *@p flags gets bit i for
 * names[i]. ["remote_write", "remote_read"] with names {"local_write", "remote_write",
 * "remote_read"} gives 0x6. NULL names are skipped.
 */
int roce_ctl_arg_flags(const json_t *req, json_t *reply, const char *name,
		const char *const *names, unsigned int nb, uint64_t *flags, bool required);

/**
 * An IPv4 ("192.0.2.1") or IPv6 ("2001:db8::1") address. *@p family gets AF_INET or AF_INET6,
 * @p addr the address in network order (4 or 16 bytes).
 */
int roce_ctl_arg_ip(const json_t *req, json_t *reply, const char *name, int *family,
		uint8_t addr[16], bool required);

/** A MAC address "02:00:00:00:00:01" (hex digits, either case). */
int roce_ctl_arg_mac(const json_t *req, json_t *reply, const char *name, uint8_t mac[6],
		bool required);

/*
 * Result helpers: new references, NULL only when out of memory (jansson's json_object_set_new()
 * then fails harmlessly).
 */

/** A JSON integer for @p v up to 2^63 - 1, above it a string "0x...". */
json_t *roce_ctl_u64(uint64_t v);

/** The array of the names of the bits set in @p flags (the inverse of roce_ctl_arg_flags()). */
json_t *roce_ctl_flags(const char *const *names, unsigned int nb, uint64_t flags);

/*
 * Client.
 */

struct roce_ctl_client;

/**
 * Connect to a server.
 *
 * @param path
 *   Socket path (NULL: ROCE_CTL_DEFAULT_PATH).
 * @param timeout_ms
 *   How long to retry while the server's backlog is full (-1: no limit).
 * @return
 *   The client, or NULL with errno set: ENAMETOOLONG, ENOENT (no socket), ECONNREFUSED (no
 *   server), ETIMEDOUT, EACCES, ENOMEM, or another errno of socket() or connect().
 */
struct roce_ctl_client *roce_ctl_client_connect(const char *path, int timeout_ms);

/**
 * Send one request and wait for its reply.
 *
 * @param cmd
 *   Command name.
 * @param args
 *   Object whose members become the request's arguments, or NULL; "v", "id" and "cmd" in it
 *   are ignored. Not modified.
 * @param reply
 *   Out: the reply (the caller owns it, json_decref()). It has the request's id, or a null id
 *   when the server refused the connection or the line (EBUSY, E2BIG).
 * @param timeout_ms
 *   Most time for sending and receiving (-1: no limit).
 * @return
 *   0 when a reply arrived (whether ok is true or false: see roce_ctl_reply_status()),
 *   -ETIMEDOUT, -ECONNRESET (the server closed the connection without replying), -EPROTO (a
 *   reply that is not a JSON object of this protocol), -E2BIG (a reply over 64 MiB), -ENOMEM,
 *   -EINVAL (bad @p cmd or @p args), or another -errno of send()/recv().
 */
int roce_ctl_client_request(struct roce_ctl_client *c, const char *cmd, const json_t *args,
		json_t **reply, int timeout_ms);

/** Close a client. NULL is allowed. */
void roce_ctl_client_close(struct roce_ctl_client *c);

/**
 * Read the outcome of a reply.
 *
 * @param code
 *   Out, optional: the error code ("ENOENT"), or NULL when ok.
 * @param message
 *   Out, optional: the error message, or NULL when ok.
 * @return
 *   0 when ok is true, -errno of the code when false (-EIO for a code not in the list),
 *   -EPROTO when the reply has no boolean ok or a false one without an error object.
 */
int roce_ctl_reply_status(const json_t *reply, const char **code, const char **message);

#endif /* ROCE_CTL_H */
