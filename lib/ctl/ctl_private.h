/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CTL_PRIVATE_H
#define CTL_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "roce_ctl.h"

/* Request lines one client may have answered per poll, so that a pipelining client cannot
 * starve the others. */
#define CTL_LINES_PER_POLL 32
/* Connections accepted per poll. */
#define CTL_ACCEPTS_PER_POLL 64
/* Longest reply line a client reads. */
#define CTL_CLIENT_MAX_REPLY (64u << 20)
/* Longest error message, in bytes. */
#define CTL_MAX_MESSAGE 512

/* A byte buffer with a consumed head: data is buf[off, len). */
struct ctl_buf {
	char *buf;
	size_t off;
	size_t len;
	size_t cap;
};

struct ctl_conn {
	int fd;           /* -1: free slot */
	bool eof;         /* the peer will send nothing more */
	bool closing;     /* close once the output is written; read nothing more */
	size_t scanned;   /* bytes of in (from in.off) known to hold no newline */
	uint64_t serial;  /* for log lines */
	uint64_t last_ms; /* accepted or last request, on ctl_deadline(0)'s clock */
	struct ctl_buf in;
	struct ctl_buf out;
};

struct roce_ctl_server {
	int lfd;
	char path[108];
	dev_t dev;        /* of the socket file we made, so destroy removes only that */
	ino_t ino;
	const struct roce_ctl_cmd *cmds;
	unsigned int nb_cmds;
	void *arg;
	struct roce_ctl_conf conf;
	struct ctl_conn *conns;     /* conf.max_clients slots */
	struct pollfd *pfd;         /* 1 + conf.max_clients + the watched fd */
	int watch_fd;               /* roce_ctl_server_watch(), or -1 */
	unsigned int *pfd_conn;     /* conns slot of pfd[i + 1] */
	uint64_t serial;
	uint64_t cur_client;        /* serial of the client being answered, or 0 */
	bool stopping;              /* destroy: no on_close */
	bool accept_failing;        /* accept() error already logged */
	struct roce_ctl_stats st;
};

/* dispatch.c */

/*
 * Answer one request line (without its newline). @return the reply, NULL for a blank line (no
 * reply) or when out of memory.
 */
json_t *ctl_dispatch(struct roce_ctl_server *srv, const char *line, size_t len);

/* An error reply {"v":1,"id":id,"ok":false,"error":{...}}; @p id may be NULL (null id). */
json_t *ctl_error_reply(json_t *id, int err, const char *message);

/* A JSON string of @p s, with bytes that are not valid UTF-8 replaced by '?'. */
json_t *ctl_text(const char *s);

/* args.c */

/* The message an argument helper or roce_ctl_error() left in @p reply, or NULL. */
const char *ctl_reply_message(const json_t *reply);

/* server.c */

void ctl_log(const struct roce_ctl_server *srv, int level, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));

/* Append @p n bytes to @p b, growing it; @return 0 or -ENOMEM. */
int ctl_buf_append(struct ctl_buf *b, const void *p, size_t n);

/* Milliseconds left until @p deadline (CLOCK_MONOTONIC ms; UINT64_MAX: none), for poll(). */
int ctl_ms_left(uint64_t deadline);

/* CLOCK_MONOTONIC now + @p timeout_ms, or UINT64_MAX for a negative timeout. */
uint64_t ctl_deadline(int timeout_ms);

/* Fill a sockaddr_un; @return its length or -ENAMETOOLONG. */
struct sockaddr_un;
int ctl_sockaddr(struct sockaddr_un *sa, const char *path);

#endif /* CTL_PRIVATE_H */
