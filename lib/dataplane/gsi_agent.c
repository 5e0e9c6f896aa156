/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GSI agent (roce_dp_gsi.h), on the control thread: what the ports' QP1s received, from
 * the ring the GSI worker fills (gsi.c), parsed as CM MADs and acted on as Linux's ib_cm
 * acts (roce_cm_linux_action(), one handler per action), every refusal counted under its
 * name; and the MADs to send, each waiting for its destination's MAC if it must.
 */
#include <errno.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>

#include <rte_atomic.h>
#include <rte_random.h>
#include <rte_ring.h>

#include "dp_private.h"

#define AGENT_BURST 32                /* datagrams taken from the ring at a time */
#define AGENT_MAX_PER_POLL 256        /* ... and per roce_dp_gsi_poll() */
#define PENDING_RETRY_NS 5000000ull   /* a waiting MAD's MAC is looked up this often */
/* Transaction IDs of our SIDR_REQs: an agent number in the high 32 bits, as Linux's MAD
 * agents have (cm_form_tid()), over the request ID. */
#define AGENT_TID_HI 1ull

static const struct roce_counter_desc gsi_desc[ROCE_DP_GSI_C_NUM] = {
	ROCE_DP_GSI_COUNTERS(ROCE_COUNTER_DESC)
};

const struct roce_counter_family roce_dp_gsi_counter_family = {
	.name = "gsi",
	.about = "the GSI agent: MADs to and from the ports' QP1s, by what was done with them",
	.desc = gsi_desc,
	.nb = ROCE_DP_GSI_C_NUM,
};

const struct roce_counter_group roce_dp_gsi_counter_group = {
	&roce_dp_gsi_counter_family, "GSI_", "in the daemon-wide sums: one agent for every port"
};

/* roce_cm_parse()'s refusals, each a counter of its own name. */
static const uint8_t verdict_counter[ROCE_CM_VERDICT_MAX] = {
	[ROCE_CM_BAD_LEN] = ROCE_DP_GSI_C_BAD_LEN,
	[ROCE_CM_BAD_BASE_VERSION] = ROCE_DP_GSI_C_BAD_BASE_VERSION,
	[ROCE_CM_BAD_CLASS] = ROCE_DP_GSI_C_BAD_CLASS,
	[ROCE_CM_BAD_CLASS_VERSION] = ROCE_DP_GSI_C_BAD_CLASS_VERSION,
	[ROCE_CM_BAD_METHOD] = ROCE_DP_GSI_C_BAD_METHOD,
	[ROCE_CM_BAD_ATTR] = ROCE_DP_GSI_C_BAD_ATTR,
	[ROCE_CM_BAD_FIELD] = ROCE_DP_GSI_C_BAD_FIELD,
};

static inline void
gsi_count(struct roce_dp *dp, enum roce_dp_gsi_counter c)
{
	__atomic_fetch_add(&dp->gsi->cnt[c], 1, __ATOMIC_RELAXED);
}

void
roce_dp_gsi_counters(const struct roce_dp *dp, uint64_t *out)
{
	unsigned int i;

	for (i = 0; i < ROCE_DP_GSI_C_NUM; i++)
		out[i] = __atomic_load_n(&dp->gsi->cnt[i], __ATOMIC_RELAXED);
}

int
roce_dp_gsi_set_hook(struct roce_dp *dp, const struct roce_dp_gsi_hook *hook)
{
	static const struct roce_dp_gsi_hook none;

	dp->gsi->hook = hook != NULL ? *hook : none;
	return 0;
}

/* ---- sending ---- */

/*
 * Post @mad to @dst if its next hop's MAC is known. @return 0 (sent), -EHOSTUNREACH (not
 * resolved yet: try again), or another -errno (counted).
 */
static int
gsi_try_send(struct roce_dp *dp, const struct roce_dp_gsi_addr *dst, const uint8_t *mad)
{
	struct roce_path path;
	int ret;

	/* The neighbour table as it is now: no wait (a miss starts the resolution). */
	ret = roce_dp_path(dp, dst->port, dst->ip, dst->ipv6, NULL, 0, 0, &path);
	if (ret == -EHOSTUNREACH)
		return ret;
	if (ret != 0) {
		gsi_count(dp, ROCE_DP_GSI_C_TX_UNRESOLVED);
		return ret;
	}
	ret = dp_gsi_post(dp, dst->port, &path, dst->qpn != 0 ? dst->qpn : ROCE_GSI_QPN, mad);
	gsi_count(dp, ret == 0 ? ROCE_DP_GSI_C_TX : ROCE_DP_GSI_C_TX_ERR);
	return ret;
}

int
roce_dp_gsi_send(struct roce_dp *dp, const struct roce_dp_gsi_addr *dst,
		const uint8_t mad[ROCE_MAD_SIZE])
{
	struct dp_gsi *g = dp->gsi;
	struct dp_gsi_pending *pe;
	int ret;

	if (dst->port >= dp->nb_ports || dst->ipv6 > 1 || dst->qpn > ROCE_24BIT_MASK)
		return -EINVAL;
	ret = gsi_try_send(dp, dst, mad);
	if (ret != -EHOSTUNREACH)
		return ret;
	if (g->nb_pending == ROCE_DP_GSI_PENDING) {
		gsi_count(dp, ROCE_DP_GSI_C_TX_PENDING_FULL);
		return -ENOSPC;
	}
	pe = &g->pending[g->nb_pending++];
	pe->deadline_ns = roce_dp_now() + ROCE_DP_GSI_RESOLVE_MS * 1000000ull;
	pe->next_ns = roce_dp_now() + PENDING_RETRY_NS;
	pe->dst = *dst;
	memcpy(pe->mad, mad, ROCE_MAD_SIZE);
	return 0;
}

/* The MADs waiting for a MAC: sent once it is known, dropped at their deadline. */
static unsigned int
pending_poll(struct roce_dp *dp)
{
	struct dp_gsi *g = dp->gsi;
	uint64_t now = roce_dp_now();
	unsigned int i = 0, sent = 0;
	int ret;

	while (i < g->nb_pending) {
		struct dp_gsi_pending *pe = &g->pending[i];

		if (now < pe->next_ns) {
			i++;
			continue;
		}
		ret = gsi_try_send(dp, &pe->dst, pe->mad);
		if (ret == -EHOSTUNREACH && now < pe->deadline_ns) {
			pe->next_ns = now + PENDING_RETRY_NS;
			i++;
			continue;
		}
		if (ret == -EHOSTUNREACH)
			gsi_count(dp, ROCE_DP_GSI_C_TX_UNRESOLVED);
		else if (ret == 0)
			sent++;
		/* Gone: the last one takes its place (the order among waiting MADs is free). */
		*pe = g->pending[--g->nb_pending];
	}
	return sent;
}

/* ---- receiving ---- */

/* Whether the GRH area's destination is an address of port @p (rxe drops the rest). */
static bool
dgid_ok(const struct roce_dp *dp, const struct dp_gsi_rx *rx)
{
	const struct roce_dp_addr *a = &dp->conf.addr[rx->port];
	static const uint8_t none[16];
	uint8_t ll[16];

	if (!rx->ipv6)
		return memcmp(rx->grh + 20 + 16, a->ip4, 4) == 0;
	if (memcmp(a->ip6, none, 16) != 0 && memcmp(rx->grh + 24, a->ip6, 16) == 0)
		return true;
	roce_net_ll_addr(&dp->ports[rx->port].mac, ll);
	return memcmp(rx->grh + 24, ll, 16) == 0;
}

typedef void (*gsi_act_fn)(struct roce_dp *dp, const struct roce_dp_gsi_addr *src,
		const struct roce_cm_msg *msg, const uint8_t *mad);

/* REQ, MRA, REJ, REP, RTU, DREQ, DREP: the connection manager's, if one runs. */
static void
act_handle(struct roce_dp *dp, const struct roce_dp_gsi_addr *src, const struct roce_cm_msg *msg,
		const uint8_t *mad)
{
	const struct roce_dp_gsi_hook *h = &dp->gsi->hook;

	if (h->recv == NULL) {
		gsi_count(dp, ROCE_DP_GSI_C_NO_CM);
		return;
	}
	gsi_count(dp, ROCE_DP_GSI_C_CM);
	h->recv(h->ctx, src, msg, mad);
}

/* LAP, APR: "alternate path messages are not supported for RoCE link layer". */
static void
act_drop(struct roce_dp *dp, const struct roce_dp_gsi_addr *src, const struct roce_cm_msg *msg,
		const uint8_t *mad)
{
	RTE_SET_USED(src);
	RTE_SET_USED(msg);
	RTE_SET_USED(mad);
	gsi_count(dp, ROCE_DP_GSI_C_DROP);
}

/*
 * A SIDR_REQ: no UD service listens here, so Linux's answer with no listener
 * (cm_sidr_req_handler(), cm_format_sidr_rep()): status 1, the request ID and service ID
 * echoed, QPN and Q_Key 0, the request's transaction ID, to the requester's QP1.
 */
static void
act_sidr_req(struct roce_dp *dp, const struct roce_dp_gsi_addr *src,
		const struct roce_cm_msg *msg, const uint8_t *mad)
{
	struct roce_dp_gsi_addr dst = *src;
	uint8_t out[ROCE_MAD_SIZE];
	struct roce_cm_msg rep;

	RTE_SET_USED(mad);
	gsi_count(dp, ROCE_DP_GSI_C_SIDR_REQ);
	memset(&rep, 0, sizeof(rep));
	roce_cm_hdr_init(&rep.hdr, ROCE_CM_ATTR_SIDR_REP, msg->hdr.tid);
	rep.sidr_rep.request_id = msg->sidr_req.request_id;
	rep.sidr_rep.status = ROCE_CM_SIDR_UNSUPPORTED;
	rep.sidr_rep.service_id = msg->sidr_req.service_id;
	if (roce_cm_build(&rep, out, sizeof(out)) != ROCE_MAD_SIZE)
		return;
	dst.qpn = ROCE_GSI_QPN;
	if (roce_dp_gsi_send(dp, &dst, out) == 0)
		gsi_count(dp, ROCE_DP_GSI_C_SIDR_REP_TX);
}

/* A SIDR_REP: the answer to our SIDR_REQ (roce_dp_gsi_sidr()), or dropped. */
static void
act_sidr_rep(struct roce_dp *dp, const struct roce_dp_gsi_addr *src,
		const struct roce_cm_msg *msg, const uint8_t *mad)
{
	struct dp_gsi *g = dp->gsi;
	const struct roce_cm_sidr_rep *r = &msg->sidr_rep;

	RTE_SET_USED(src);
	RTE_SET_USED(mad);
	if (!g->sidr_active || g->sidr_done || r->request_id != g->sidr_id) {
		gsi_count(dp, ROCE_DP_GSI_C_SIDR_UNMATCHED);
		return;
	}
	gsi_count(dp, ROCE_DP_GSI_C_SIDR_REP_RX);
	g->sidr_res.request_id = r->request_id;
	g->sidr_res.status = r->status;
	g->sidr_res.qpn = r->qpn;
	g->sidr_res.qkey = r->qkey;
	g->sidr_res.service_id = r->service_id;
	g->sidr_res.rtt_ns = roce_dp_now() - g->sidr_sent_ns;
	g->sidr_done = 1;
}

/* What Linux's ib_cm does with each attribute, as a handler. */
static const gsi_act_fn act[] = {
	[ROCE_CM_ACT_HANDLE] = act_handle,
	[ROCE_CM_ACT_DROP] = act_drop,
	[ROCE_CM_ACT_SIDR_REP] = act_sidr_req,
	[ROCE_CM_ACT_MATCH_SIDR] = act_sidr_rep,
};

static void
agent_input(struct roce_dp *dp, const struct dp_gsi_rx *rx)
{
	struct roce_dp_gsi_addr src = {
		.port = rx->port,
		.ipv6 = rx->ipv6,
		.qpn = rx->src_qp,
		.pkey = ROCE_PKEY_DEFAULT,
	};
	enum roce_cm_linux_action a;
	enum roce_cm_verdict v;
	struct roce_cm_msg msg;

	gsi_count(dp, ROCE_DP_GSI_C_RX);
	if (rx->port >= dp->nb_ports || !dgid_ok(dp, rx)) {
		gsi_count(dp, ROCE_DP_GSI_C_BAD_DGID);
		return;
	}
	/* The sender, as the GRH area has it: IPv4 after 20 zero bytes, or the IPv6 header. */
	if (rx->ipv6) {
		memcpy(src.ip, rx->grh + 8, 16);
		memcpy(src.local_ip, rx->grh + 24, 16);
	} else {
		memcpy(src.ip, rx->grh + 20 + 12, 4);
		memcpy(src.local_ip, rx->grh + 20 + 16, 4);
	}
	v = roce_cm_parse(&msg, rx->mad, rx->len);
	if (v != ROCE_CM_OK) {
		gsi_count(dp, (enum roce_dp_gsi_counter)verdict_counter[v < ROCE_CM_VERDICT_MAX ?
				v : ROCE_CM_BAD_ATTR]);
		return;
	}
	a = roce_cm_linux_action(msg.hdr.attr_id);
	if ((unsigned int)a >= RTE_DIM(act) || act[a] == NULL)
		a = ROCE_CM_ACT_DROP;
	act[a](dp, &src, &msg, rx->mad);
}

unsigned int
roce_dp_gsi_poll(struct roce_dp *dp)
{
	struct dp_gsi_rx rx[AGENT_BURST];
	unsigned int n, i, total = 0;
	eventfd_t ev;

	/* awake: no more wake-ups, and the one that came is read */
	if (dp->gsi->agent_sleeps) {
		__atomic_store_n(&dp->gsi->agent_sleeps, 0, __ATOMIC_RELAXED);
		(void)eventfd_read(dp->gsi->wake_fd, &ev);
	}
	if (dp->gsi->nb_pending != 0)
		total += pending_poll(dp);
	do {
		n = dp_gsi_rx_take(dp, rx, AGENT_BURST);
		for (i = 0; i < n; i++)
			agent_input(dp, &rx[i]);
		total += n;
	} while (n == AGENT_BURST && total < AGENT_MAX_PER_POLL);
	return total;
}

int
roce_dp_gsi_idle(struct roce_dp *dp, int max_ms)
{
	struct dp_gsi *g = dp->gsi;
	uint64_t now = roce_dp_now(), next = UINT64_MAX;
	unsigned int i;

	__atomic_store_n(&g->agent_sleeps, 1, __ATOMIC_RELAXED);
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (rte_ring_count(g->rx) != 0)
		return 0;
	for (i = 0; i < g->nb_pending; i++)
		next = RTE_MIN(next, g->pending[i].next_ns);
	if (next == UINT64_MAX)
		return max_ms;
	/* rounded up: waking early would only sleep again */
	return next <= now ? 0 : (int)RTE_MIN((uint64_t)max_ms, (next - now + 999999) / 1000000);
}

int
roce_dp_gsi_wake_fd(const struct roce_dp *dp)
{
	return dp->gsi != NULL ? dp->gsi->wake_fd : -1;
}

/* ---- SIDR ---- */

int
roce_dp_gsi_sidr(struct roce_dp *dp, const struct roce_dp_gsi_addr *dst, uint64_t service_id,
		unsigned int timeout_ms, struct roce_dp_gsi_sidr_result *res)
{
	struct dp_gsi *g = dp->gsi;
	uint8_t mad[ROCE_MAD_SIZE];
	struct roce_cm_msg req;
	uint64_t end;
	int ret;

	if (g->sidr_active)
		return -EBUSY;
	if (g->sidr_next_id == 0)
		g->sidr_next_id = (uint32_t)rte_rand() | 1;
	memset(&req, 0, sizeof(req));
	roce_cm_hdr_init(&req.hdr, ROCE_CM_ATTR_SIDR_REQ,
			AGENT_TID_HI << 32 | g->sidr_next_id);
	req.sidr_req.request_id = g->sidr_next_id++;
	req.sidr_req.pkey = ROCE_PKEY_DEFAULT;
	req.sidr_req.service_id = service_id;
	ret = roce_cm_build(&req, mad, sizeof(mad));
	if (ret != ROCE_MAD_SIZE)
		return ret < 0 ? ret : -EINVAL;
	g->sidr_active = 1;
	g->sidr_done = 0;
	g->sidr_id = req.sidr_req.request_id;
	g->sidr_sent_ns = roce_dp_now();
	ret = roce_dp_gsi_send(dp, dst, mad);
	end = roce_dp_now() + (uint64_t)timeout_ms * 1000000;
	while (ret == 0 && !g->sidr_done) {
		if (roce_dp_gsi_poll(dp) != 0)
			continue;
		if (roce_dp_now() >= end) {
			ret = -ETIMEDOUT;
			break;
		}
		/* until the SIDR_REP (or another MAD) comes, the deadline checked each 10 ms */
		(void)poll(&(struct pollfd){ .fd = g->wake_fd, .events = POLLIN }, 1,
				roce_dp_gsi_idle(dp, 10));
	}
	if (ret == 0)
		*res = g->sidr_res;
	g->sidr_active = 0;
	return ret;
}
