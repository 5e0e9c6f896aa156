/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCECTL_PINGPONG_H
#define ROCECTL_PINGPONG_H

/*
 * rocectl pingpong: rdma-core's ibv_rc_pingpong and ibv_ud_pingpong (libibverbs/examples).
 * pingpong_oob.c is their TCP exchange, pingpong.c the command: options, the QP and its job
 * in roced, the output.
 *
 * The exchange: the client connects, sends its address as the 52-byte NUL-terminated text
 * "LLLL:QQQQQQ:PPPPPP:GGGG...G" (LID, QPN, PSN in hex, the GID as 32 hex digits, its bytes
 * in order), reads the server's in the same form and sends "done" with its NUL; the server
 * reads the client's address, makes its QP ready, answers with its own and reads the "done".
 */

#include <stddef.h>
#include <stdint.h>

/** Their default TCP port. */
#define RC_PP_TCP_PORT 18515
/** Bytes of an address message: sizeof "0000:000000:000000:" and 32 hex digits, with the NUL. */
#define RC_PP_MSG_LEN 52
/** Bytes of the client's last message, "done" with its NUL. */
#define RC_PP_DONE_LEN 5

/** One side's address, as their struct pingpong_dest. */
struct rc_pp_dest {
	uint32_t lid;
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
};

/** Format @p d as an address message (RC_PP_MSG_LEN bytes, the last one NUL). */
void rc_pp_dest_encode(const struct rc_pp_dest *d, char msg[RC_PP_MSG_LEN]);

/**
 * Parse an address message. Stricter than their sscanf(): the field widths, the colons, hex
 * digits only and the NUL must be where their sprintf() puts them.
 * @return 0, or -EPROTO.
 */
int rc_pp_dest_decode(const char msg[RC_PP_MSG_LEN], struct rc_pp_dest *d);

/**
 * The client's side: connect to @p host port @p port (each address getaddrinfo() gives, once,
 * as theirs), send @p local, read the server's address into @p remote, send "done".
 * @p timeout_ms bounds each read; *@p stop (set by a signal) ends the wait.
 * @return 0, or -errno (said on stderr).
 */
int rc_pp_client_exchange(const char *host, unsigned int port, const struct rc_pp_dest *local,
		struct rc_pp_dest *remote, int timeout_ms, volatile int *stop);

/** What the server does between reading the client's address and answering: @return 0 or
 * -errno (it said why). */
typedef int (*rc_pp_ready_fn)(void *arg, const struct rc_pp_dest *remote);

/**
 * The server's side: listen on @p port (IPv4 and IPv6), accept one client, read its address
 * into @p remote, call @p ready, send @p local, read the "done". The accept waits until a
 * client comes or *@p stop; each read at most @p timeout_ms.
 * @return 0, -EINTR (stopped), what @p ready returned, or -errno (said on stderr).
 */
int rc_pp_server_exchange(unsigned int port, const struct rc_pp_dest *local,
		struct rc_pp_dest *remote, rc_pp_ready_fn ready, void *arg, int timeout_ms,
		volatile int *stop);

#endif /* ROCECTL_PINGPONG_H */
