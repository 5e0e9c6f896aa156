/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking client with deadlines: connect, send one request line, read lines until the reply
 * with the request's id (or a null id: the server refused us) arrives. Replies to earlier
 * requests that timed out are skipped.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl_private.h"

struct roce_ctl_client {
	int fd;
	json_int_t next_id;
	size_t scanned;       /* bytes of in (from in.off) known to hold no newline */
	struct ctl_buf in;
};

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

struct roce_ctl_client *
roce_ctl_client_connect(const char *path, int timeout_ms)
{
	uint64_t deadline = ctl_deadline(timeout_ms);
	struct roce_ctl_client *c;
	struct sockaddr_un sa;
	int len, err;

	len = ctl_sockaddr(&sa, path != NULL ? path : ROCE_CTL_DEFAULT_PATH);
	if (len < 0) {
		errno = -len;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->next_id = 1;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		goto fail;
	/* A full backlog gives EAGAIN on a UNIX socket: retry until the deadline. */
	while (connect(c->fd, (struct sockaddr *)&sa, (socklen_t)len) != 0) {
		int left = ctl_ms_left(deadline);

		if (errno != EAGAIN && errno != EINTR)
			goto fail;
		if (left == 0) {
			errno = ETIMEDOUT;
			goto fail;
		}
		sleep_ms(left < 0 || left > 10 ? 10 : left);
	}
	return c;
fail:
	err = errno;
	if (c->fd >= 0)
		close(c->fd);
	free(c);
	errno = err;
	return NULL;
}

void
roce_ctl_client_close(struct roce_ctl_client *c)
{
	if (c == NULL)
		return;
	close(c->fd);
	free(c->in.buf);
	free(c);
}

static int
wait_fd(int fd, short ev, uint64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = ev };
	int rc;

	do {
		rc = poll(&pfd, 1, ctl_ms_left(deadline));
	} while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	return rc == 0 ? -ETIMEDOUT : 0;
}

static int
send_all(struct roce_ctl_client *c, const char *p, size_t n, uint64_t deadline)
{
	while (n > 0) {
		ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		int rc;

		if (k >= 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		rc = wait_fd(c->fd, POLLOUT, deadline);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Take the next complete line out of the buffer as JSON; 0 when there is none yet. */
static int
next_line(struct roce_ctl_client *c, json_t **line)
{
	size_t avail = c->in.len - c->in.off;
	char *start = avail > 0 ? c->in.buf + c->in.off : NULL;
	char *nl = avail > c->scanned ? memchr(start + c->scanned, '\n', avail - c->scanned) : NULL;

	if (nl == NULL) {
		c->scanned = avail;
		return avail > CTL_CLIENT_MAX_REPLY ? -E2BIG : 0;
	}
	*line = json_loadb(start, (size_t)(nl - start), 0, NULL);
	c->in.off += (size_t)(nl - start) + 1;
	c->scanned = 0;
	if (!json_is_object(*line)) {
		json_decref(*line);
		return -EPROTO;
	}
	return 1;
}

static int
read_more(struct roce_ctl_client *c, uint64_t deadline)
{
	char chunk[65536];
	ssize_t n;
	int rc;

	for (;;) {
		n = recv(c->fd, chunk, sizeof(chunk), MSG_DONTWAIT);
		if (n > 0)
			return ctl_buf_append(&c->in, chunk, (size_t)n);
		if (n == 0)
			return -ECONNRESET;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		rc = wait_fd(c->fd, POLLIN, deadline);
		if (rc < 0)
			return rc;
	}
}

static int
read_reply(struct roce_ctl_client *c, json_int_t id, json_t **reply, uint64_t deadline)
{
	for (;;) {
		json_t *line = NULL, *rid;
		int rc = next_line(c, &line);

		if (rc < 0)
			return rc;
		if (rc == 0) {
			rc = read_more(c, deadline);
			if (rc < 0)
				return rc;
			continue;
		}
		rid = json_object_get(line, "id");
		if (json_is_null(rid) || (json_is_integer(rid) && json_integer_value(rid) == id)) {
			*reply = line;
			return 0;
		}
		if (!json_is_integer(rid)) {
			json_decref(line);
			return -EPROTO;
		}
		json_decref(line);
	}
}

int
roce_ctl_client_request(struct roce_ctl_client *c, const char *cmd, const json_t *args,
		json_t **reply, int timeout_ms)
{
	uint64_t deadline = ctl_deadline(timeout_ms);
	json_int_t id = c->next_id++;
	const char *key;
	json_t *req, *val;
	char *text;
	int rc;

	if (cmd == NULL || (args != NULL && !json_is_object(args)))
		return -EINVAL;
	req = json_pack("{s:i,s:I,s:s}", "v", ROCE_CTL_VERSION, "id", id, "cmd", cmd);
	if (req == NULL)
		return -EINVAL;
	json_object_foreach((json_t *)(uintptr_t)args, key, val)
		if (strcmp(key, "v") != 0 && strcmp(key, "id") != 0 && strcmp(key, "cmd") != 0)
			json_object_set(req, key, val);
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (text == NULL)
		return -ENOMEM;
	rc = send_all(c, text, strlen(text), deadline);
	if (rc == 0)
		rc = send_all(c, "\n", 1, deadline);
	free(text);
	/* A server that refused us closed the socket after writing why: read it. */
	if (rc < 0 && rc != -EPIPE && rc != -ECONNRESET)
		return rc;
	return read_reply(c, id, reply, deadline);
}
