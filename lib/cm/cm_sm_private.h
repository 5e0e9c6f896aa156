/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_CM_SM_PRIVATE_H
#define ROCE_CM_SM_PRIVATE_H

/* The CM state machine's objects, shared by cm_table.c (slots, IDs, listeners, counters,
 * show) and cm_sm.c (messages, states, timers). */

#include <stdint.h>

#include "roce_cm.h"

struct roce_cm_conn {
	struct roce_cm *cm;
	uint32_t idx;			/* slot */
	uint32_t gen;			/* bumped at every allocation of the slot */
	uint8_t used;
	uint8_t active;			/* we sent the REQ */
	uint8_t orphan;			/* the user let it go: no events */
	uint8_t in_tables;		/* matched by remote comm ID and remote QPN (Linux's
					 * remote_id_table and remote_qp_table) */
	enum roce_cm_state state;
	int32_t listener;		/* slot of the listener that brought it, -1 */
	void *ctx;

	uint32_t local_id;
	uint32_t remote_id;
	uint64_t remote_ca_guid;
	uint64_t service_id;
	uint64_t tid;			/* cm_id_priv->tid */
	struct roce_cm_addr peer;	/* the peer's QP1 */

	/* For the QP (cm_id_private's fields). */
	uint32_t local_qpn;
	uint32_t remote_qpn;
	uint32_t sq_psn;		/* the peer's starting PSN: what we send first */
	uint32_t rq_psn;		/* ours, as we announced it: what we receive first */
	uint8_t path_mtu;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t av_timeout;		/* av.timeout: the QP's ACK timeout and time wait */
	uint8_t max_cm_retries;
	uint8_t service_timeout;	/* of the MRA we sent */
	struct roce_cm_route route;
	uint64_t timeout_ns;		/* cm_id_priv->timeout_ms: REQ/REP/DREQ resends */

	/* The message awaiting an answer (REQ, REP, DREQ) and its timer. */
	uint8_t msg_pending;
	uint16_t msg_attr;
	uint8_t retries_left;
	uint64_t msg_timeout_ns;
	uint8_t msg[ROCE_MAD_SIZE];
	/* Time wait's end, or the message's next resend. */
	uint64_t deadline;
	/* The last answer sent (RTU, MRA, DREP): resent for duplicates. */
	uint16_t resp_attr;
	uint8_t resp[ROCE_MAD_SIZE];
};

struct cm_listener {
	uint8_t used;
	uint64_t service_id;
	uint32_t backlog;
	uint32_t pending;
	uint64_t reqs;
	uint64_t dropped;
	void *ctx;
};

struct roce_cm {
	struct roce_cm_conf conf;
	struct roce_cm_ops ops;
	void *ctx;
	uint32_t id_operand;		/* cm.random_id_operand */
	uint32_t idx_bits;
	uint32_t next_slot;		/* allocation cursor */
	uint32_t nb_conns;
	struct roce_cm_stats st;
	struct cm_listener *listeners;
	struct roce_cm_conn *conns;
};

/* cm_table.c */
struct roce_cm_conn *cm_conn_alloc(struct roce_cm *cm);
void cm_conn_free(struct roce_cm_conn *c);
struct roce_cm_conn *cm_conn_lookup(struct roce_cm *cm, uint32_t local_id, uint32_t remote_id);
struct roce_cm_conn *cm_find_remote_id(struct roce_cm *cm, uint32_t remote_id, uint64_t guid);
struct roce_cm_conn *cm_find_remote_qpn(struct roce_cm *cm, uint32_t qpn, uint64_t guid);
struct cm_listener *cm_find_listener(struct roce_cm *cm, uint64_t service_id);
void cm_set_state(struct roce_cm_conn *c, enum roce_cm_state s);
void cm_fill_qp_attr(const struct roce_cm_conn *c, struct roce_cm_qp_attr *a);

static inline void
cm_count(struct roce_cm *cm, enum roce_cm_counter which)
{
	cm->st.cnt[which]++;
}

static inline unsigned int
cm_attr_slot(uint16_t attr_id)
{
	return (unsigned int)(attr_id - ROCE_CM_ATTR_REQ);
}

#endif /* ROCE_CM_SM_PRIVATE_H */
