/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control socket: listening, accepting, per-client input and output buffers, poll().
 * Nothing here blocks on a client: sockets are non-blocking, replies wait in the client's output
 * buffer until the socket takes them, and a client whose output piles up is not read until it
 * drains (it then blocks in its own send, not us).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl_private.h"

void
ctl_log(const struct roce_ctl_server *srv, int level, const char *fmt, ...)
{
	char msg[CTL_MAX_MESSAGE];
	va_list ap;

	if (srv->conf.log == NULL && level > ROCE_CTL_LOG_WARNING)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (srv->conf.log != NULL)
		srv->conf.log(srv->conf.log_arg, level, msg);
	else
		fprintf(stderr, "roce_ctl: %s\n", msg);
}

uint64_t
ctl_deadline(int timeout_ms)
{
	struct timespec ts;

	if (timeout_ms < 0)
		return UINT64_MAX;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 + (uint64_t)timeout_ms;
}

int
ctl_ms_left(uint64_t deadline)
{
	struct timespec ts;
	uint64_t now;

	if (deadline == UINT64_MAX)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	return now >= deadline ? 0 : (int)(deadline - now);
}

int
ctl_sockaddr(struct sockaddr_un *sa, const char *path)
{
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, n + 1);
	return (int)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

int
ctl_buf_append(struct ctl_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (b->off > 0 && b->off == b->len)
		b->off = b->len = 0;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 4096;
		char *nb;

		/* Reclaim the consumed head before growing. */
		if (b->off > 0) {
			memmove(b->buf, b->buf + b->off, b->len - b->off);
			b->len -= b->off;
			b->off = 0;
		}
		while (n > cap - b->len)
			cap *= 2;
		if (cap != b->cap) {
			nb = realloc(b->buf, cap);
			if (nb == NULL)
				return -ENOMEM;
			b->buf = nb;
			b->cap = cap;
		}
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	return 0;
}

static void
buf_free(struct ctl_buf *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

static size_t
buf_used(const struct ctl_buf *b)
{
	return b->len - b->off;
}

/* Which table a name is looked up in, for create's checks. */
static int
check_table(const struct roce_ctl_cmd *cmds, unsigned int nb)
{
	unsigned int i, j;

	if (nb > 0 && cmds == NULL)
		return -EINVAL;
	for (i = 0; i < nb; i++) {
		if (cmds[i].name == NULL || cmds[i].name[0] == '\0' || cmds[i].fn == NULL)
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (strcmp(cmds[i].name, cmds[j].name) == 0)
				return -EINVAL;
	}
	return 0;
}

/*
 * Decide whether an existing file at @path may be replaced: a socket nobody accepts on is a
 * leftover of a daemon that died; anything else stays.
 */
static int
clear_stale(const char *path)
{
	struct sockaddr_un sa;
	struct stat stb;
	int fd, len, rc;

	if (lstat(path, &stb) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(stb.st_mode))
		return -EEXIST;
	len = ctl_sockaddr(&sa, path);
	if (len < 0)
		return len;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (struct sockaddr *)&sa, (socklen_t)len);
	/*
	 * Only a refusal proves nobody listens: EAGAIN is a live server with a full backlog, and
	 * an error such as EACCES says nothing, so the file stays.
	 */
	if (rc == 0 || errno == EAGAIN)
		rc = -EADDRINUSE;
	else if (errno == ECONNREFUSED || errno == ENOENT)
		rc = 0;
	else
		rc = -errno;
	close(fd);
	if (rc == 0 && unlink(path) != 0 && errno != ENOENT)
		rc = -errno;
	return rc;
}

int
roce_ctl_socket_owner(const char *path)
{
	struct sockaddr_un sa;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int fd, len, rc;

	len = ctl_sockaddr(&sa, path != NULL ? path : ROCE_CTL_DEFAULT_PATH);
	if (len < 0)
		return len;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* On a connected UNIX socket, SO_PEERCRED names the process that called listen(). */
	if (connect(fd, (struct sockaddr *)&sa, (socklen_t)len) != 0)
		rc = -errno;
	else if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0)
		rc = -errno;
	else
		rc = cred.pid > 0 ? (int)cred.pid : -ESRCH;
	close(fd);
	return rc;
}

static int
open_listener(struct roce_ctl_server *srv)
{
	struct sockaddr_un sa;
	struct stat stb;
	int len, rc;

	len = ctl_sockaddr(&sa, srv->path);
	if (len < 0)
		return len;
	rc = clear_stale(srv->path);
	if (rc < 0)
		return rc;
	srv->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (srv->lfd < 0)
		return -errno;
	/* The file bind() makes inherits this mode (less the umask): never wider than asked. */
	if (fchmod(srv->lfd, srv->conf.mode) != 0 ||
			bind(srv->lfd, (struct sockaddr *)&sa, (socklen_t)len) != 0)
		return -errno;
	if (chmod(srv->path, srv->conf.mode) != 0 || stat(srv->path, &stb) != 0 ||
			listen(srv->lfd, SOMAXCONN) != 0) {
		rc = -errno;
		unlink(srv->path);
		return rc;
	}
	srv->dev = stb.st_dev;
	srv->ino = stb.st_ino;
	return 0;
}

struct roce_ctl_server *
roce_ctl_server_create(const char *path, const struct roce_ctl_cmd *cmds, unsigned int nb_cmds,
		void *arg, const struct roce_ctl_conf *conf)
{
	struct roce_ctl_server *srv;
	unsigned int i;
	int rc;

	if (path == NULL)
		path = ROCE_CTL_DEFAULT_PATH;
	rc = check_table(cmds, nb_cmds);
	if (rc == 0 && strlen(path) >= sizeof(srv->path))
		rc = -ENAMETOOLONG;
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	srv = calloc(1, sizeof(*srv));
	if (srv == NULL)
		return NULL;
	srv->lfd = -1;
	strcpy(srv->path, path);
	srv->cmds = cmds;
	srv->nb_cmds = nb_cmds;
	srv->arg = arg;
	if (conf != NULL)
		srv->conf = *conf;
	if (srv->conf.max_line == 0)
		srv->conf.max_line = ROCE_CTL_DEFAULT_MAX_LINE;
	if (srv->conf.max_clients == 0)
		srv->conf.max_clients = ROCE_CTL_DEFAULT_MAX_CLIENTS;
	if (srv->conf.max_output == 0)
		srv->conf.max_output = ROCE_CTL_DEFAULT_MAX_OUTPUT;
	if (srv->conf.mode == 0)
		srv->conf.mode = ROCE_CTL_DEFAULT_MODE;
	if (srv->conf.idle_ms == 0)
		srv->conf.idle_ms = ROCE_CTL_DEFAULT_IDLE_MS;
	srv->conns = calloc(srv->conf.max_clients, sizeof(*srv->conns));
	srv->pfd = calloc(srv->conf.max_clients + 2, sizeof(*srv->pfd));
	srv->watch_fd = -1;
	srv->pfd_conn = calloc(srv->conf.max_clients, sizeof(*srv->pfd_conn));
	if (srv->conns == NULL || srv->pfd == NULL || srv->pfd_conn == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < srv->conf.max_clients; i++)
		srv->conns[i].fd = -1;
	rc = open_listener(srv);
	if (rc < 0)
		goto fail;
	ctl_log(srv, ROCE_CTL_LOG_INFO, "listening on %s", srv->path);
	return srv;
fail:
	if (srv->lfd >= 0)
		close(srv->lfd);
	free(srv->conns);
	free(srv->pfd);
	free(srv->pfd_conn);
	free(srv);
	errno = -rc;
	return NULL;
}

static void
conn_close(struct roce_ctl_server *srv, struct ctl_conn *c, const char *why)
{
	ctl_log(srv, ROCE_CTL_LOG_DEBUG, "client %" PRIu64 ": closed (%s)", c->serial, why);
	if (srv->conf.on_close != NULL && !srv->stopping)
		srv->conf.on_close(srv->arg, c->serial);
	close(c->fd);
	buf_free(&c->in);
	buf_free(&c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	srv->st.clients--;
}

/* Write what the socket takes. @return 0, or -errno when the client is gone. */
static int
conn_flush(struct ctl_conn *c)
{
	while (buf_used(&c->out) > 0) {
		ssize_t n = send(c->fd, c->out.buf + c->out.off, buf_used(&c->out),
				MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		c->out.off += (size_t)n;
	}
	c->out.off = c->out.len = 0;
	return 0;
}

static int
dump_cb(const char *p, size_t n, void *data)
{
	return ctl_buf_append(data, p, n) == 0 ? 0 : -1;
}

/* Append a reply line; when it cannot be encoded, a fixed error line in its place. */
static void
conn_reply(struct roce_ctl_server *srv, struct ctl_conn *c, json_t *reply)
{
	static const char fallback[] = "{\"v\":1,\"id\":null,\"ok\":false,\"error\":"
		"{\"code\":\"ENOMEM\",\"message\":\"cannot encode the reply\"}}\n";
	size_t len = c->out.len;
	json_t *ok = json_object_get(reply, "ok");

	srv->st.requests++;
	if (!json_is_true(ok))
		srv->st.errors++;
	/* 15 digits: 0.1 goes out as 0.1, not 0.10000000000000001. */
	if (json_dump_callback(reply, dump_cb, &c->out,
			JSON_COMPACT | JSON_REAL_PRECISION(15)) == 0 &&
			ctl_buf_append(&c->out, "\n", 1) == 0)
		return;
	c->out.len = len;
	ctl_log(srv, ROCE_CTL_LOG_ERR, "client %" PRIu64 ": cannot encode a reply", c->serial);
	if (ctl_buf_append(&c->out, fallback, sizeof(fallback) - 1) != 0)
		c->closing = true;
}

static void
conn_error(struct roce_ctl_server *srv, struct ctl_conn *c, int err, const char *msg)
{
	json_t *reply = ctl_error_reply(NULL, err, msg);

	conn_reply(srv, c, reply);
	json_decref(reply);
}

/* Answer the complete lines in @c's input, up to the per-poll budget. @return lines answered. */
static int
conn_process(struct roce_ctl_server *srv, struct ctl_conn *c)
{
	int done = 0;

	while (!c->closing && done < CTL_LINES_PER_POLL &&
			buf_used(&c->out) < srv->conf.max_output) {
		size_t avail = buf_used(&c->in);
		char *start = avail > 0 ? c->in.buf + c->in.off : NULL;
		char *nl = avail > c->scanned ?
			memchr(start + c->scanned, '\n', avail - c->scanned) : NULL;
		json_t *reply;
		size_t len;

		if (nl == NULL) {
			c->scanned = avail;
			if (avail > srv->conf.max_line) {
				char msg[96];

				snprintf(msg, sizeof(msg), "request line longer than %zu bytes",
						srv->conf.max_line);
				conn_error(srv, c, -E2BIG, msg);
				srv->st.oversized++;
				c->closing = true;
				ctl_log(srv, ROCE_CTL_LOG_WARNING, "client %" PRIu64 ": %s",
						c->serial, msg);
			} else if (c->eof) {
				/* An unterminated line at EOF is an abrupt disconnect: drop it. */
				c->closing = true;
			}
			break;
		}
		len = (size_t)(nl - start);
		c->in.off += len + 1;
		c->scanned = 0;
		if (len > 0 && start[len - 1] == '\r')
			len--;
		srv->cur_client = c->serial;
		c->last_ms = ctl_deadline(0);
		reply = ctl_dispatch(srv, start, len);
		srv->cur_client = 0;
		if (reply != NULL) {
			conn_reply(srv, c, reply);
			json_decref(reply);
			done++;
		}
	}
	if (c->in.off == c->in.len)
		c->in.off = c->in.len = 0;
	return done;
}

/* Whether @c has a complete line it may answer now, without reading. */
static bool
conn_ready(const struct roce_ctl_server *srv, const struct ctl_conn *c)
{
	size_t avail = buf_used(&c->in);

	if (c->fd < 0 || c->closing || buf_used(&c->out) >= srv->conf.max_output || avail == 0)
		return false;
	return c->eof || avail > srv->conf.max_line || (avail > c->scanned &&
		memchr(c->in.buf + c->in.off + c->scanned, '\n', avail - c->scanned) != NULL);
}

static bool
conn_wants_input(const struct roce_ctl_server *srv, const struct ctl_conn *c)
{
	return !c->eof && !c->closing && buf_used(&c->out) < srv->conf.max_output &&
		buf_used(&c->in) <= srv->conf.max_line;
}

/* Read what is there, at most up to one byte past the line limit. @return 0 or -errno. */
static int
conn_read(struct roce_ctl_server *srv, struct ctl_conn *c)
{
	size_t room, want = srv->conf.max_line + 1 - buf_used(&c->in);
	ssize_t n;

	if (want > 65536)
		want = 65536;
	/* Make room at the tail: compact, then grow. */
	if (c->in.off > 0) {
		memmove(c->in.buf, c->in.buf + c->in.off, buf_used(&c->in));
		c->in.len -= c->in.off;
		c->in.off = 0;
	}
	room = c->in.cap - c->in.len;
	if (room < want) {
		size_t cap = c->in.len + want;
		char *nb = realloc(c->in.buf, cap);

		if (nb == NULL)
			return -ENOMEM;
		c->in.buf = nb;
		c->in.cap = cap;
	}
	do {
		n = recv(c->fd, c->in.buf + c->in.len, want, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	if (n == 0)
		c->eof = true;
	c->in.len += (size_t)n;
	return 0;
}

static void
send_line(struct roce_ctl_server *srv, int fd, const char *code, const char *msg)
{
	char line[256];
	int n;

	n = snprintf(line, sizeof(line), "{\"v\":%d,\"id\":null,\"ok\":false,\"error\":"
			"{\"code\":\"%s\",\"message\":\"%s\"}}\n", ROCE_CTL_VERSION, code, msg);
	/* Best effort: the client may be gone, or its socket full. */
	if (send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		ctl_log(srv, ROCE_CTL_LOG_DEBUG, "%s line not sent: %s", code, strerror(errno));
}

static void
reject(struct roce_ctl_server *srv, int fd)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "too many clients (%u)", srv->conf.max_clients);
	send_line(srv, fd, "EBUSY", msg);
	close(fd);
	srv->st.rejected++;
}

static int serve_conn(struct roce_ctl_server *srv, struct ctl_conn *c, short revents);

/*
 * Close the clients that have gone but are not yet reaped: a burst of short-lived clients sits
 * in the backlog and fills the table before their hang-ups are read.
 */
static void
reap_gone(struct roce_ctl_server *srv)
{
	unsigned int i, n = 0;

	for (i = 0; i < srv->conf.max_clients; i++) {
		if (srv->conns[i].fd < 0)
			continue;
		srv->pfd[n].fd = srv->conns[i].fd;
		srv->pfd[n].events = POLLIN;
		srv->pfd[n].revents = 0;
		srv->pfd_conn[n++] = i;
	}
	if (n == 0 || poll(srv->pfd, n, 0) <= 0)
		return;
	for (i = 0; i < n; i++) {
		struct ctl_conn *c = &srv->conns[srv->pfd_conn[i]];
		short ev = srv->pfd[i].revents;

		if (!(ev & (POLLHUP | POLLERR)))
			continue;
		/* One read may return the last request, the next one the end of input. */
		serve_conn(srv, c, ev);
		if (c->fd >= 0)
			serve_conn(srv, c, POLLIN);
	}
}

/* Close the client idle the longest if it has been idle for conf.idle_ms. @return 0 or -EBUSY. */
static int
evict_idle(struct roce_ctl_server *srv)
{
	uint64_t now = ctl_deadline(0), oldest = UINT64_MAX;
	struct ctl_conn *victim = NULL;
	unsigned int i;
	char msg[96];

	for (i = 0; i < srv->conf.max_clients; i++) {
		struct ctl_conn *c = &srv->conns[i];

		if (c->fd >= 0 && buf_used(&c->out) == 0 && c->last_ms < oldest) {
			oldest = c->last_ms;
			victim = c;
		}
	}
	if (victim == NULL || now - oldest < srv->conf.idle_ms)
		return -EBUSY;
	snprintf(msg, sizeof(msg), "idle for %" PRIu64 " s, closed to make room for a new client",
			(now - oldest) / 1000);
	send_line(srv, victim->fd, "ETIMEDOUT", msg);
	ctl_log(srv, ROCE_CTL_LOG_WARNING, "client %" PRIu64 ": %s", victim->serial, msg);
	conn_close(srv, victim, "idle");
	srv->st.evicted++;
	return 0;
}

static void
accept_clients(struct roce_ctl_server *srv)
{
	unsigned int i, slot = 0;

	for (i = 0; i < CTL_ACCEPTS_PER_POLL; i++) {
		int fd = accept4(srv->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && !srv->accept_failing) {
				ctl_log(srv, ROCE_CTL_LOG_ERR, "accept: %s", strerror(errno));
				srv->accept_failing = true;
			}
			return;
		}
		srv->accept_failing = false;
		if (srv->st.clients >= srv->conf.max_clients)
			reap_gone(srv);
		if (srv->st.clients >= srv->conf.max_clients && evict_idle(srv) < 0) {
			ctl_log(srv, ROCE_CTL_LOG_WARNING, "client refused: %u clients connected",
					srv->st.clients);
			reject(srv, fd);
			continue;
		}
		for (slot = 0; srv->conns[slot].fd >= 0; slot++)
			;
		srv->conns[slot].fd = fd;
		srv->conns[slot].serial = ++srv->serial;
		srv->conns[slot].last_ms = ctl_deadline(0);
		srv->st.clients++;
		srv->st.accepted++;
		ctl_log(srv, ROCE_CTL_LOG_DEBUG, "client %" PRIu64 ": connected", srv->serial);
	}
}

/* Build the pollfd set; @return its size. */
static unsigned int
build_pollset(struct roce_ctl_server *srv, bool listen_too)
{
	unsigned int i, n = 1;

	srv->pfd[0].fd = listen_too ? srv->lfd : -1;
	srv->pfd[0].events = POLLIN;
	srv->pfd[0].revents = 0;
	for (i = 0; i < srv->conf.max_clients; i++) {
		struct ctl_conn *c = &srv->conns[i];
		short ev = 0;

		if (c->fd < 0)
			continue;
		if (listen_too && conn_wants_input(srv, c))
			ev |= POLLIN;
		if (buf_used(&c->out) > 0)
			ev |= POLLOUT;
		srv->pfd[n].fd = c->fd;
		srv->pfd[n].events = ev;
		srv->pfd[n].revents = 0;
		srv->pfd_conn[n - 1] = i;
		n++;
	}
	return n;
}

/* Handle one client after poll(): write, read, answer, write, maybe close. */
static int
serve_conn(struct roce_ctl_server *srv, struct ctl_conn *c, short revents)
{
	int rc = 0, done;

	if (revents & POLLOUT)
		rc = conn_flush(c);
	if (rc == 0 && (revents & (POLLIN | POLLHUP | POLLERR)) && conn_wants_input(srv, c))
		rc = conn_read(srv, c);
	if (rc < 0) {
		srv->st.dropped++;
		conn_close(srv, c, strerror(-rc));
		return 0;
	}
	done = conn_process(srv, c);
	rc = conn_flush(c);
	if (rc < 0) {
		srv->st.dropped++;
		conn_close(srv, c, strerror(-rc));
	} else if (buf_used(&c->out) == 0 && (c->closing || (c->eof && buf_used(&c->in) == 0))) {
		conn_close(srv, c, c->closing ? "done" : "end of input");
	}
	return done;
}

void
roce_ctl_server_watch(struct roce_ctl_server *srv, int fd)
{
	srv->watch_fd = fd;
}

int
roce_ctl_server_poll(struct roce_ctl_server *srv, int timeout_ms)
{
	unsigned int i, n;
	int rc, done = 0;

	for (i = 0; i < srv->conf.max_clients; i++)
		if (conn_ready(srv, &srv->conns[i])) {
			timeout_ms = 0;
			break;
		}
	n = build_pollset(srv, true);
	srv->pfd[n] = (struct pollfd){ .fd = srv->watch_fd, .events = POLLIN };
	rc = poll(srv->pfd, n + 1, timeout_ms);
	if (rc < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 1; i < n; i++) {
		struct ctl_conn *c = &srv->conns[srv->pfd_conn[i - 1]];

		/* Buffered lines are answered even without new events. */
		if (srv->pfd[i].revents != 0 || conn_ready(srv, c))
			done += serve_conn(srv, c, srv->pfd[i].revents);
	}
	if (srv->pfd[0].revents & POLLIN)
		accept_clients(srv);
	return done;
}

int
roce_ctl_server_flush(struct roce_ctl_server *srv, int timeout_ms)
{
	uint64_t deadline = ctl_deadline(timeout_ms);

	for (;;) {
		unsigned int i, n = build_pollset(srv, false);
		bool pending = false;

		for (i = 1; i < n; i++)
			pending |= srv->pfd[i].events != 0;
		if (!pending)
			return 0;
		if (poll(srv->pfd, n, ctl_ms_left(deadline)) <= 0 && ctl_ms_left(deadline) == 0)
			return -ETIMEDOUT;
		for (i = 1; i < n; i++) {
			struct ctl_conn *c = &srv->conns[srv->pfd_conn[i - 1]];

			if (srv->pfd[i].revents != 0 && conn_flush(c) < 0) {
				srv->st.dropped++;
				conn_close(srv, c, "write failed");
			}
		}
	}
}

uint64_t
roce_ctl_server_client(const struct roce_ctl_server *srv)
{
	return srv != NULL ? srv->cur_client : 0;
}

void
roce_ctl_server_destroy(struct roce_ctl_server *srv)
{
	struct stat stb;
	unsigned int i;

	if (srv == NULL)
		return;
	srv->stopping = true;
	for (i = 0; i < srv->conf.max_clients; i++)
		if (srv->conns[i].fd >= 0)
			conn_close(srv, &srv->conns[i], "server stopped");
	close(srv->lfd);
	/* Remove the file only if it is still ours (a new server may have replaced it). */
	if (stat(srv->path, &stb) == 0 && stb.st_dev == srv->dev && stb.st_ino == srv->ino)
		unlink(srv->path);
	free(srv->conns);
	free(srv->pfd);
	free(srv->pfd_conn);
	free(srv);
}

void
roce_ctl_server_stats(const struct roce_ctl_server *srv, struct roce_ctl_stats *st)
{
	*st = srv->st;
}
