/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma-core's pingpong exchange over TCP (pingpong.h): the address messages and the two
 * sides, as libibverbs/examples/rc_pingpong.c and ud_pingpong.c run it (their
 * pp_client_exch_dest() and pp_server_exch_dest()). Ours reads whole messages whatever TCP
 * splits them into, with a deadline, and refuses malformed ones.
 */
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pingpong.h"

#define PP_POLL_MS 200		/* how often a wait looks at *stop */

static const char hexdig[] = "0123456789abcdef";

static void
put_hex(char *p, uint32_t v, unsigned int digits)
{
	while (digits-- > 0) {
		p[digits] = hexdig[v & 0xf];
		v >>= 4;
	}
}

void
rc_pp_dest_encode(const struct rc_pp_dest *d, char msg[RC_PP_MSG_LEN])
{
	unsigned int i;

	/* their "%04x:%06x:%06x:%s", the GID as gid_to_wire_gid() writes it */
	put_hex(msg, d->lid, 4);
	msg[4] = ':';
	put_hex(msg + 5, d->qpn, 6);
	msg[11] = ':';
	put_hex(msg + 12, d->psn, 6);
	msg[18] = ':';
	for (i = 0; i < 16; i++)
		put_hex(msg + 19 + 2 * i, d->gid[i], 2);
	msg[RC_PP_MSG_LEN - 1] = '\0';
}

static int
hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* @digits hex digits at @p into *v. @return 0 or -EPROTO. */
static int
get_hex(const char *p, unsigned int digits, uint32_t *v)
{
	unsigned int i;
	int x;

	*v = 0;
	for (i = 0; i < digits; i++) {
		x = hex_val(p[i]);
		if (x < 0)
			return -EPROTO;
		*v = *v << 4 | (uint32_t)x;
	}
	return 0;
}

int
rc_pp_dest_decode(const char msg[RC_PP_MSG_LEN], struct rc_pp_dest *d)
{
	uint32_t b;
	unsigned int i;

	if (msg[4] != ':' || msg[11] != ':' || msg[18] != ':' || msg[RC_PP_MSG_LEN - 1] != '\0' ||
			get_hex(msg, 4, &d->lid) != 0 || get_hex(msg + 5, 6, &d->qpn) != 0 ||
			get_hex(msg + 12, 6, &d->psn) != 0)
		return -EPROTO;
	for (i = 0; i < 16; i++) {
		if (get_hex(msg + 19 + 2 * i, 2, &b) != 0)
			return -EPROTO;
		d->gid[i] = (uint8_t)b;
	}
	return 0;
}

/* Wait until @fd is readable (@events) or *stop or the deadline. @return 1, 0 (timeout),
 * -EINTR (stopped) or -errno. */
static int
wait_fd(int fd, short events, int timeout_ms, volatile int *stop)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int waited = 0, ret;

	for (;;) {
		if (*stop)
			return -EINTR;
		ret = poll(&pfd, 1, PP_POLL_MS);
		if (ret > 0)
			return 1;
		if (ret < 0 && errno != EINTR)
			return -errno;
		waited += PP_POLL_MS;
		if (timeout_ms >= 0 && waited >= timeout_ms)
			return 0;
	}
}

/* Read exactly @len bytes. @return 0, -ETIMEDOUT, -ECONNRESET (the peer closed), -EINTR. */
static int
read_all(int fd, void *buf, size_t len, int timeout_ms, volatile int *stop)
{
	size_t got = 0;
	ssize_t n;
	int ret;

	while (got < len) {
		ret = wait_fd(fd, POLLIN, timeout_ms, stop);
		if (ret <= 0)
			return ret == 0 ? -ETIMEDOUT : ret;
		n = read(fd, (char *)buf + got, len - got);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			return -errno;
		got += n > 0 ? (size_t)n : 0;
	}
	return 0;
}

static int
write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = send(fd, (const char *)buf + done, len - done, MSG_NOSIGNAL);
		if (n < 0 && errno != EINTR)
			return -errno;
		done += n > 0 ? (size_t)n : 0;
	}
	return 0;
}

static void
say(const char *what, int err)
{
	fprintf(stderr, "rocectl pingpong: %s: %s\n", what, err == -ETIMEDOUT ?
			"no answer in time" : err == -ECONNRESET ? "the peer closed the connection" :
			strerror(-err));
}

/* Read the peer's address message. @return 0 or -errno (said). */
static int
read_dest(int fd, struct rc_pp_dest *d, int timeout_ms, volatile int *stop)
{
	char msg[RC_PP_MSG_LEN];
	int ret = read_all(fd, msg, sizeof(msg), timeout_ms, stop);

	if (ret != 0) {
		if (ret != -EINTR)
			say("Couldn't read remote address", ret);
		return ret;
	}
	ret = rc_pp_dest_decode(msg, d);
	if (ret != 0) {
		unsigned int i;

		/* said as text, whatever the peer sent */
		for (i = 0; i < RC_PP_MSG_LEN - 1; i++)
			msg[i] = isprint((unsigned char)msg[i]) ? msg[i] : '?';
		fprintf(stderr, "rocectl pingpong: the peer's address is not "
				"LLLL:QQQQQQ:PPPPPP:GID (%.*s)\n", RC_PP_MSG_LEN - 1, msg);
	}
	return ret;
}

static int
send_dest(int fd, const struct rc_pp_dest *d)
{
	char msg[RC_PP_MSG_LEN];
	int ret;

	rc_pp_dest_encode(d, msg);
	ret = write_all(fd, msg, sizeof(msg));
	if (ret != 0)
		say("Couldn't send local address", ret);
	return ret;
}

int
rc_pp_client_exchange(const char *host, unsigned int port, const struct rc_pp_dest *local,
		struct rc_pp_dest *remote, int timeout_ms, volatile int *stop)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res, *t;
	char service[8], done[RC_PP_DONE_LEN] = "done";
	int fd = -1, ret;

	snprintf(service, sizeof(service), "%u", port);
	ret = getaddrinfo(host, service, &hints, &res);
	if (ret != 0) {
		fprintf(stderr, "%s for %s:%u\n", gai_strerror(ret), host, port);
		return -EHOSTUNREACH;
	}
	for (t = res; t != NULL && fd < 0; t = t->ai_next) {
		fd = socket(t->ai_family, t->ai_socktype | SOCK_CLOEXEC, t->ai_protocol);
		if (fd >= 0 && connect(fd, t->ai_addr, t->ai_addrlen) != 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0) {
		fprintf(stderr, "Couldn't connect to %s:%u\n", host, port);
		return -ECONNREFUSED;
	}
	ret = send_dest(fd, local);
	if (ret == 0)
		ret = read_dest(fd, remote, timeout_ms, stop);
	if (ret == 0 && (ret = write_all(fd, done, sizeof(done))) != 0)
		say("Couldn't send done", ret);
	close(fd);
	return ret;
}

static int
listen_on(unsigned int port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
		.sin6_addr = IN6ADDR_ANY_INIT };
	int one = 1, zero = 0, fd, ret;

	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* both families on one socket, as theirs binds the wildcard of getaddrinfo() */
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 1) != 0) {
		ret = -errno;
		close(fd);
		fprintf(stderr, "Couldn't listen to port %u (%s)\n", port, strerror(-ret));
		return ret;
	}
	return fd;
}

int
rc_pp_server_exchange(unsigned int port, const struct rc_pp_dest *local,
		struct rc_pp_dest *remote, rc_pp_ready_fn ready, void *arg, int timeout_ms,
		volatile int *stop)
{
	char done[RC_PP_DONE_LEN];
	int lfd = listen_on(port), fd, ret;

	if (lfd < 0)
		return lfd;
	ret = wait_fd(lfd, POLLIN, -1, stop);
	fd = ret > 0 ? accept4(lfd, NULL, NULL, SOCK_CLOEXEC) : -1;
	if (ret > 0 && fd < 0) {
		ret = -errno;
		fprintf(stderr, "accept() failed: %s\n", strerror(-ret));
	}
	close(lfd);
	if (fd < 0)
		return ret < 0 ? ret : -EIO;
	ret = read_dest(fd, remote, timeout_ms, stop);
	if (ret == 0)
		ret = ready(arg, remote);
	if (ret == 0)
		ret = send_dest(fd, local);
	if (ret == 0 && (ret = read_all(fd, done, sizeof(done), timeout_ms, stop)) != 0 &&
			ret != -EINTR)
		say("Couldn't recv done", ret);
	close(fd);
	return ret;
}
