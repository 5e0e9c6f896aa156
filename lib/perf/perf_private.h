/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PERF_PRIVATE_H
#define PERF_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The OOB code runs before and outside the EAL, so it logs to stderr. */
#define ROCE_PERF_LOG(fmt, ...) fprintf(stderr, "roce_perf: " fmt "\n", ##__VA_ARGS__)

/* Classify a key message that roce_perf_oob_key_decode() refused: -EPROTONOSUPPORT (logged)
 * for a perftest variant we do not implement, else -EPROTO. */
int
roce_perf_key_diagnose(const void *buf, size_t len);

/* ---- the session driver (session.c, session_tcp.c, session_verify.c) ---- */

struct roce_perf_session;

/* Tell the front end why the session fails (the error event, else stderr). */
void
perf_sess_err(const struct roce_perf_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Tell the front end something that does not fail the run (the note event, else stderr). */
void
perf_sess_note(const struct roce_perf_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The side channel: a connected TCP socket to the peer (listening first as the server), and
 * the peer's address in s->tcp_gid and s->tcp_ip. @return the socket, or -errno. */
int
perf_sess_tcp_open(struct roce_perf_session *s);

/* Sleep @ms milliseconds. */
void
perf_sess_sleep_ms(unsigned int ms);

/* The text form of a GID (IPv4-mapped ones as a.b.c.d). */
void
perf_sess_gid_str(const uint8_t gid[16], char *buf, size_t len);

/* Bytes of QP i's slot (our half first) from the MR's start. */
uint64_t
perf_sess_local_off(const struct roce_perf_session *s, unsigned int i);

/* The largest message of the run. */
uint64_t
perf_sess_max_size(const struct roce_perf_session *s);

/* --verify: fill what we send before the traffic; check what landed after a size.
 * @return 0, -EBADMSG or an error of the backend. */
int
perf_sess_verify_prepare(struct roce_perf_session *s);
int
perf_sess_verify_check(struct roce_perf_session *s, uint64_t size);
/* Whether this side receives the data (else it sends it). */
bool
perf_sess_verify_receives(const struct roce_perf_session *s);

/* ---- -R: perftest's rdma_cm mode (session_rcm.c) ---- */

struct roce_perf_oob_cfg;

/* The side channel over the CM (listen or connect), the exchange over it (setting @cfg's
 * cm_connect hook), and the disconnects at the end, whatever the exchange returned.
 * @return what roce_perf_oob_run_chan() returns, or an error of the backend. */
int
perf_sess_rcm_exchange(struct roce_perf_session *s, struct roce_perf_oob_cfg *cfg);

/* The QP number the CM connected test QP i to; 0: unknown. */
uint32_t
perf_sess_rcm_peer_qpn(const struct roce_perf_session *s, unsigned int i);

/* Destroy the side channel's QP and MR, stop listening. Idempotent. */
void
perf_sess_rcm_teardown(struct roce_perf_session *s);

#endif /* PERF_PRIVATE_H */
