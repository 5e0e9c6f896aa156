/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The session's side channel: perftest's TCP connection, listened for by the server and
 * connected to by the client (retrying while the server is not listening yet, as perftest).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "perf_private.h"
#include "roce_perf_session.h"

#define TCP_CONNECT_TRIES 50
#define TCP_RETRY_MS 100
#define TCP_ACCEPT_POLL_MS 200

void
perf_sess_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

void
perf_sess_gid_str(const uint8_t gid[16], char *buf, size_t len)
{
	static const uint8_t v4map[12] = { [10] = 0xff, [11] = 0xff };

	if (memcmp(gid, v4map, 12) == 0)
		inet_ntop(AF_INET, gid + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, gid, buf, (socklen_t)len);
}

static int
tcp_client(struct roce_perf_session *s)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai, *a;
	char port[8];
	int fd = -1, ret, tries;

	snprintf(port, sizeof(port), "%u", s->o.tcp_port);
	ret = getaddrinfo(s->o.peer, port, &hints, &ai);
	if (ret != 0) {
		perf_sess_err(s, "%s: %s", s->o.peer, gai_strerror(ret));
		return -EHOSTUNREACH;
	}
	ret = -ECONNREFUSED;
	for (tries = 0; fd < 0 && tries < TCP_CONNECT_TRIES && !s->interrupted; tries++) {
		for (a = ai; a != NULL && fd < 0; a = a->ai_next) {
			fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
			if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
				ret = -errno;
				close(fd);
				fd = -1;
			}
		}
		if (fd < 0)
			perf_sess_sleep_ms(TCP_RETRY_MS);
	}
	freeaddrinfo(ai);
	if (fd < 0)
		perf_sess_err(s, "cannot connect to %s port %u: %s", s->o.peer, s->o.tcp_port,
				strerror(-ret));
	return fd < 0 ? ret : fd;
}

static int
tcp_server(struct roce_perf_session *s)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(s->o.tcp_port),
		.sin6_addr = IN6ADDR_ANY_INIT };
	struct pollfd pfd = { .events = POLLIN };
	int one = 1, zero = 0, fd, ret;

	pfd.fd = fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 1) != 0) {
		ret = -errno;
		perf_sess_err(s, "cannot listen on TCP port %u: %s", s->o.tcp_port,
				strerror(-ret));
		close(fd);
		return ret;
	}
	if (s->ev.waiting != NULL)
		s->ev.waiting(s->ev.arg, s->o.tcp_port);
	while ((ret = poll(&pfd, 1, TCP_ACCEPT_POLL_MS)) == 0 && !s->interrupted)
		;
	if (ret < 0 || s->interrupted) {
		close(fd);
		return -EINTR;
	}
	ret = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* The side channel's peer, in GID form (IPv4 as ::ffff:a.b.c.d), and as text. */
static int
tcp_peer(struct roce_perf_session *s, int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	memset(s->tcp_gid, 0, sizeof(s->tcp_gid));
	if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0) {
		int ret = -errno;

		perf_sess_err(s, "side channel: %s", strerror(-ret));
		return ret;
	}
	if (ss.ss_family == AF_INET) {
		s->tcp_gid[10] = s->tcp_gid[11] = 0xff;
		memcpy(s->tcp_gid + 12, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	} else if (ss.ss_family == AF_INET6) {
		memcpy(s->tcp_gid, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	} else {
		perf_sess_err(s, "side channel: not an IP socket");
		return -EAFNOSUPPORT;
	}
	perf_sess_gid_str(s->tcp_gid, s->tcp_ip, sizeof(s->tcp_ip));
	return 0;
}

int
perf_sess_tcp_open(struct roce_perf_session *s)
{
	int fd = s->o.server ? tcp_server(s) : tcp_client(s);
	int ret;

	if (fd < 0)
		return fd;
	ret = tcp_peer(s, fd);
	if (ret != 0) {
		close(fd);
		return ret;
	}
	return fd;
}
