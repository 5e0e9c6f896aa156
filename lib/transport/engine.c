/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "transport_private.h"

RTE_LOG_REGISTER(roce_transport_logtype, roce.transport, INFO);

static void
conf_defaults(struct roce_engine_conf *c)
{
	if (c->max_qps == 0)
		c->max_qps = 1024;
	if (c->qpn_base == 0)
		c->qpn_base = 0x100;
	if (c->qpn_count == 0 && c->qpn_base <= ROCE_24BIT_MASK)
		c->qpn_count = ROCE_24BIT_MASK + 1 - c->qpn_base;
	if (c->tx_ring_size == 0)
		c->tx_ring_size = 4096;
	if (c->ack_every == 0)
		c->ack_every = 64;
	if (c->max_inflight == 0)
		c->max_inflight = 4096;
	if (c->tx_budget == 0)
		c->tx_budget = 64;
}

/* Engines created so far: each takes the next shard of the MRs' zero-copy references. */
static uint32_t engines_made;

struct roce_engine *
roce_engine_create(const struct roce_engine_conf *conf)
{
	struct roce_engine *eng;
	uint32_t slots;

	if (conf == NULL || conf->mp == NULL || conf->max_qps > (1u << 20) ||
			conf->max_inflight >= ROCE_PSN_HALF) {
		rte_errno = EINVAL;
		return NULL;
	}
	eng = rte_zmalloc_socket("roce_engine", sizeof(*eng), RTE_CACHE_LINE_SIZE,
			conf->socket_id);
	if (eng == NULL)
		goto nomem;
	eng->conf = *conf;
	conf_defaults(&eng->conf);
	eng->ref_shard = (uint8_t)(__atomic_fetch_add(&engines_made, 1, __ATOMIC_RELAXED) %
			MR_TX_SHARDS);
	if (eng->conf.qpn_base > ROCE_24BIT_MASK ||
			eng->conf.qpn_count > ROCE_24BIT_MASK + 1 - eng->conf.qpn_base) {
		rte_free(eng);
		rte_errno = EINVAL;
		return NULL;
	}
	eng->mp = conf->mp;
	slots = rte_align32pow2(eng->conf.max_qps * 2);
	eng->qp_table = rte_zmalloc_socket("roce_qp_table", slots * sizeof(eng->qp_table[0]),
			0, conf->socket_id);
	eng->tx_mask = rte_align32pow2(eng->conf.tx_ring_size) - 1;
	eng->tx = rte_zmalloc_socket("roce_tx", (eng->tx_mask + 1) * sizeof(eng->tx[0]), 0,
			conf->socket_id);
	if (eng->qp_table == NULL || eng->tx == NULL)
		goto nomem;
	eng->qp_table_mask = slots - 1;
	eng->next_qpn = eng->conf.qpn_base;
	TAILQ_INIT(&eng->active);
	roce_timer_wheel_init(&eng->wheel, 0);
	return eng;
nomem:
	if (eng != NULL) {
		rte_free(eng->qp_table);
		rte_free(eng->tx);
		rte_free(eng);
	}
	rte_errno = ENOMEM;
	return NULL;
}

void
roce_engine_destroy(struct roce_engine *eng)
{
	uint32_t i;

	if (eng == NULL)
		return;
	/* A destroy may shift a later entry into slot i: empty each slot before moving on. */
	for (i = 0; i <= eng->qp_table_mask; i++)
		while (eng->qp_table[i] != NULL)
			roce_qp_destroy(eng->qp_table[i]);
	while (eng->tx_tail != eng->tx_head)
		rte_pktmbuf_free(eng->tx[eng->tx_tail++ & eng->tx_mask]);
	rte_free(eng->qp_table);
	rte_free(eng->tx);
	rte_free(eng);
}

static inline uint32_t
qpn_hash(uint32_t qpn)
{
	return qpn * 0x9E3779B1u;
}

/*
 * Linear probing. The table has at least twice as many slots as QPs, so a run always ends
 * in an empty slot, and deletion leaves no tombstones (engine_qp_remove): an unknown QPN
 * costs as few probes after any create/destroy churn as before it.
 */
static inline struct roce_qp *
qp_find(const struct roce_engine *eng, uint32_t qpn, uint32_t *probes)
{
	uint32_t mask = eng->qp_table_mask, i = qpn_hash(qpn) & mask, n;
	struct roce_qp *qp;

	for (n = 1; (qp = eng->qp_table[i]) != NULL && qp->key != qpn && n <= mask; n++)
		i = (i + 1) & mask;
	*probes = n;
	return qp != NULL && qp->key == qpn ? qp : NULL;
}

struct roce_qp *
engine_qp_lookup(const struct roce_engine *eng, uint32_t qpn)
{
	uint32_t probes;

	return qp_find(eng, qpn, &probes);
}

uint32_t
engine_qp_probes(const struct roce_engine *eng, uint32_t qpn)
{
	uint32_t probes;

	qp_find(eng, qpn, &probes);
	return probes;
}

int
engine_qp_insert(struct roce_engine *eng, struct roce_qp *qp)
{
	uint32_t mask = eng->qp_table_mask, i = qpn_hash(qp->key) & mask;

	if (eng->nb_qps >= eng->conf.max_qps)
		return -ENOSPC;
	for (; eng->qp_table[i] != NULL; i = (i + 1) & mask)
		if (eng->qp_table[i]->key == qp->key)
			return -EEXIST;
	eng->qp_table[i] = qp;
	eng->nb_qps++;
	return 0;
}

void
engine_qp_remove(struct roce_engine *eng, struct roce_qp *qp)
{
	uint32_t mask = eng->qp_table_mask, i = qpn_hash(qp->key) & mask, j;
	struct roce_qp *e;

	for (; eng->qp_table[i] != qp; i = (i + 1) & mask)
		if (eng->qp_table[i] == NULL)
			return;
	eng->nb_qps--;
	/*
	 * Backward shift: walk the rest of the run and pull into the hole at i each entry
	 * whose home slot is not after the hole (cyclically), so every entry stays reachable
	 * from its home without crossing an empty slot.
	 */
	for (j = (i + 1) & mask; (e = eng->qp_table[j]) != NULL; j = (j + 1) & mask) {
		uint32_t home = qpn_hash(e->key) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			eng->qp_table[i] = e;
			i = j;
		}
	}
	eng->qp_table[i] = NULL;
}

/* QP0 and QP1 are the special QPs, 0xFFFFFF the multicast QPN. */
static inline int
qpn_reserved(uint32_t qpn)
{
	return qpn < 2 || qpn == ROCE_24BIT_MASK;
}

/*
 * A free QPN of the engine's range [qpn_base, qpn_base + qpn_count), taken in turn after
 * the last one handed out: a freed QPN comes back only once the cursor has gone round the
 * range, so late packets of a destroyed QP are unlikely to reach a new one. The range is
 * what routes a QPN to its owner, so it is never left. @return 0 when the range is full.
 */
uint32_t
engine_qpn_pick(struct roce_engine *eng)
{
	uint32_t base = eng->conf.qpn_base, count = eng->conf.qpn_count, n;

	for (n = 0; n < count; n++) {
		uint32_t qpn = eng->next_qpn;

		eng->next_qpn = qpn + 1 - base < count ? qpn + 1 : base;
		if (!qpn_reserved(qpn) && engine_qp_lookup(eng, qpn) == NULL)
			return qpn;
	}
	return 0;
}

int
qp_tx(struct roce_qp *qp, struct rte_mbuf *m, enum roce_xport_counter kind)
{
	struct roce_engine *eng = qp->eng;

	if (unlikely(tx_room(eng) == 0)) {
		rte_pktmbuf_free(m);
		if (kind != ROCE_XC_TX_REQ)
			qp->cnt[ROCE_XC_TX_RING_FULL]++;
		return -ENOSPC;
	}
	m->port = qp_port(qp);
	eng->tx[eng->tx_head++ & eng->tx_mask] = m;
	qp->cnt[ROCE_XC_TX_PKTS]++;
	qp->cnt[kind]++;
	return 0;
}

uint16_t
roce_engine_tx(struct roce_engine *eng, struct rte_mbuf **pkts, uint16_t max)
{
	uint16_t n = 0;

	while (n < max && eng->tx_tail != eng->tx_head)
		pkts[n++] = eng->tx[eng->tx_tail++ & eng->tx_mask];
	return n;
}

uint32_t
roce_engine_tx_pending(const struct roce_engine *eng)
{
	return eng->tx_head - eng->tx_tail;
}

void
engine_activate(struct roce_qp *qp)
{
	/* Held back by the pacer: its timer brings it back. */
	if (qp->active || qp->pace_at > qp->eng->now)
		return;
	qp->active = 1;
	TAILQ_INSERT_TAIL(&qp->eng->active, qp, active_link);
}

void
engine_deactivate(struct roce_qp *qp)
{
	if (!qp->active)
		return;
	qp->active = 0;
	TAILQ_REMOVE(&qp->eng->active, qp, active_link);
}

/* The packet comes from the QP's peer, to us: RC accepts nothing else (as rxe checks). */
static int
addr_matches(const struct roce_qp *qp, const struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	const uint8_t *l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->l3_off);
	const struct roce_path *ah = &qp->attr.ah;

	if (!!(meta->flags & ROCE_PKT_F_IPV6) != ah->ipv6)
		return 0;
	if (ah->ipv6)
		return memcmp(l3 + 8, ah->dst_ip, 16) == 0 && memcmp(l3 + 24, ah->src_ip, 16) == 0;
	return memcmp(l3 + 12, ah->dst_ip, 4) == 0 && memcmp(l3 + 16, ah->src_ip, 4) == 0;
}

/* The QP a packet is for: by QPN, or QP1 of the port it came in on. */
static inline struct roce_qp *
rx_qp(const struct roce_engine *eng, const struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	struct roce_qp *qp = engine_qp_lookup(eng, meta->qpn);

	/* QPN 1 is never a table key itself: only a miss costs this test. */
	if (qp == NULL && meta->qpn == ROCE_GSI_QPN && m->port < UINT8_MAX)
		qp = engine_qp_lookup(eng, gsi_key((uint8_t)(m->port + 1)));
	return qp;
}

/* @qp: rx_qp() of @m, or NULL. */
static void
engine_rx_one(struct roce_engine *eng, struct rte_mbuf *m, struct roce_qp *qp)
{
	const struct roce_pkt_meta *meta = roce_pkt_meta(m);
	uint8_t transport = meta->opcode & ROCE_TRANSPORT_MASK;

	if (qp == NULL) {
		eng->cnt[ROCE_XC_UNKNOWN_QP]++;
		rte_pktmbuf_free(m);
		return;
	}
	/* The QP's own transport; on RC QPs also the SR extension (which the QP itself accepts
	 * or refuses) and CNPs. */
	if (unlikely(transport != qp->transport) && (qp->transport != ROCE_TRANSPORT_RC ||
			!(meta->mask & (ROCE_M_SR | ROCE_M_CNP)))) {
		qp->cnt[ROCE_XC_TRANSPORT_DROP]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (unlikely(transport == ROCE_TRANSPORT_UD)) {
		ud_rx(qp, m, meta);
		rte_pktmbuf_free(m);
		return;
	}
	if (qp->state < ROCE_QPS_RTR || qp->state == ROCE_QPS_ERR || !addr_matches(qp, m, meta)) {
		qp->cnt[ROCE_XC_STATE_DROP]++;
		rte_pktmbuf_free(m);
		return;
	}
	/* Every QP is in the default partition, as on rxe (bad_pkey_cntr). */
	if (unlikely(!roce_pkey_match(roce_bth_pkey(roce_pkt_bth(m, meta)), ROCE_PKEY_DEFAULT))) {
		qp->cnt[ROCE_XC_BAD_PKEY]++;
		rte_pktmbuf_free(m);
		return;
	}
	qp->cnt[ROCE_XC_RX_PKTS]++;
	qp->cnt[ROCE_XC_RX_BYTES] += meta->payload_len;
	if (unlikely((meta->tos & ROCE_ECN_MASK) == ROCE_ECN_CE)) {
		qp->cnt[ROCE_XC_CE_RX]++;
		/* A CNP does not answer a CNP. */
		if (eng->cc.ce_rx != NULL && !(meta->mask & ROCE_M_CNP))
			eng->cc.ce_rx(eng->cc.ctx, qp, m, eng->now);
	}
	if (unlikely(meta->mask & ROCE_M_CNP)) {
		qp->cnt[ROCE_XC_CNP_RX]++;
		if (eng->cc.cnp_rx != NULL)
			eng->cc.cnp_rx(eng->cc.ctx, qp, eng->now);
	} else if (meta->mask & ROCE_M_REQ)
		resp_rx(qp, m, meta);
	else
		comp_rx(qp, m, meta);
	rte_pktmbuf_free(m);
}

/*
 * A packet whose ICRC the classifier left pending is checked right before its turn, so that
 * the payload the check reads into L1 is still there when its QP copies it into the MR; the
 * next packet's payload is prefetched meanwhile. A wrong ICRC is dropped before anything
 * looks at the packet, as the classifier would have (doc/performance.md, "One pass").
 */
/* Packets of a burst whose QPs are found before any of them is processed. */
#define RX_GROUP 32

/*
 * The QPs of @n packets: a run of packets for one QP finds it once, and every QP's table
 * slot, then the QP itself, is fetched while the lookups before it run (as VPP's nodes
 * prefetch), so that processing finds them in the cache.
 */
static void
rx_lookup(const struct roce_engine *eng, struct rte_mbuf **pkts, unsigned int n,
		struct roce_qp **qps)
{
	uint32_t mask = eng->qp_table_mask, prev = UINT32_MAX;
	struct roce_qp *last = NULL;
	unsigned int i;

	for (i = 0; i < n; i++)
		rte_prefetch0(&eng->qp_table[qpn_hash(roce_pkt_meta(pkts[i])->qpn) & mask]);
	for (i = 0; i < n; i++) {
		const struct roce_pkt_meta *meta = roce_pkt_meta(pkts[i]);

		if (meta->type != ROCE_PKT_ROCE) {
			qps[i] = NULL;
			continue;
		}
		/* QP1 is found by the packet's port, not its QPN alone. */
		if (meta->qpn != prev || meta->qpn == ROCE_GSI_QPN) {
			prev = meta->qpn;
			last = rx_qp(eng, pkts[i], meta);
			if (last != NULL)
				rte_prefetch0(&last->state);
		}
		qps[i] = last;
	}
}

void
roce_engine_rx_wire(struct roce_engine *eng, struct rte_mbuf **pkts, uint16_t nb_pkts,
		uint64_t now, struct roce_wire_stats *wire)
{
	struct roce_qp *qps[RX_GROUP];
	uint16_t base, i, n;

	eng->now = now;
	for (base = 0; base < nb_pkts; base += n) {
		n = RTE_MIN(nb_pkts - base, RX_GROUP);
		rx_lookup(eng, pkts + base, n, qps);
		for (i = 0; i < n; i++) {
			struct rte_mbuf *m = pkts[base + i];

			if (base + i + 1 < nb_pkts)
				rte_prefetch0(rte_pktmbuf_mtod_offset(pkts[base + i + 1], void *,
						roce_pkt_meta(pkts[base + i + 1])->payload_off));
			if (unlikely(!roce_classify_icrc(m, wire))) {
				rte_pktmbuf_free(m);
				continue;
			}
			engine_rx_one(eng, m, qps[i]);
		}
	}
}

void
roce_engine_rx(struct roce_engine *eng, struct rte_mbuf **pkts, uint16_t nb_pkts, uint64_t now)
{
	roce_engine_rx_wire(eng, pkts, nb_pkts, now, &eng->wire);
}

const struct roce_wire_stats *
roce_engine_wire_stats(const struct roce_engine *eng)
{
	return &eng->wire;
}

/*
 * Room for the poll's requests and READ response streams: an eighth of the ring stays for
 * what the receive path answers between polls (ACKs, NAKs, atomic ACKs), which has no other
 * place to wait when a slow port leaves the ring full.
 */
static inline uint32_t
tx_room_poll(const struct roce_engine *eng)
{
	uint32_t room = tx_room(eng), reserve = (eng->tx_mask + 1) / 8;

	return room > reserve ? room - reserve : 0;
}

void
engine_pace_release(struct roce_qp *qp)
{
	if (qp->pace_at != 0) {
		qp->pace_at = 0;
		qp->eng->pace_held--;
	}
}

void
engine_pace_done(struct roce_timer *t, void *arg)
{
	struct roce_qp *qp = arg;

	(void)t;
	engine_pace_release(qp);
	engine_activate(qp);
}

uint32_t
roce_engine_pace_held(const struct roce_engine *eng)
{
	return eng->pace_held;
}

/*
 * Ask the pacer when @qp, which just sent @pkts packets of @bytes payload, may send again;
 * @return 1 when it has to wait (it is then off the active list until its timer fires).
 */
static int
pace(struct roce_engine *eng, struct roce_qp *qp, uint32_t pkts, uint64_t bytes)
{
	uint64_t at = eng->pacer.next(eng->pacer.ctx, qp, pkts, bytes, eng->now);

	if (at <= eng->now)
		return 0;
	eng->pace_held += qp->pace_at == 0;
	qp->pace_at = at;
	qp->cnt[ROCE_XC_PACED]++;
	engine_deactivate(qp);
	roce_timer_arm(&eng->wheel, &qp->pace_timer, at);
	return 1;
}

void
roce_engine_poll(struct roce_engine *eng, uint64_t now)
{
	uint32_t burst = eng->pacer.burst != 0 ? eng->pacer.burst : eng->conf.tx_budget;
	struct roce_qp *qp, *next;

	eng->now = now;
	roce_timer_wheel_run(&eng->wheel, now);
	for (qp = TAILQ_FIRST(&eng->active); qp != NULL && tx_room_poll(eng) != 0; qp = next) {
		uint32_t budget = RTE_MIN(burst, tx_room_poll(eng)), sent, reserve;
		uint64_t bytes = qp->cnt[ROCE_XC_TX_BYTES];

		next = TAILQ_NEXT(qp, active_link);
		/* READ responses first, then requests, then a held ACK, room kept for it: the
		 * peer waits for a request (a ping-pong's answer) more than for the ACK, which
		 * leaves in the same tx burst. */
		reserve = qp->resp.ack_pending && budget > 1;
		sent = qp->resp.sending_reads ? resp_send(qp, budget) : 0;
		if (sent + reserve < budget)
			sent += req_send(qp, budget - reserve - sent);
		if (sent < budget)
			sent += resp_send(qp, budget - sent);
		if (eng->pacer.next != NULL && sent != 0 &&
				(qp->paced || !eng->pacer.marked_only) &&
				pace(eng, qp, sent, qp->cnt[ROCE_XC_TX_BYTES] - bytes))
			continue;
		if (!req_has_work(qp) && !qp->resp.sending_reads && !qp->resp.ack_pending)
			engine_deactivate(qp);
	}
}

int
roce_engine_set_pacer(struct roce_engine *eng, const struct roce_pacer *pacer)
{
	uint32_t i;

	if (pacer != NULL && pacer->next == NULL)
		return -EINVAL;
	/* The same pacer with other settings (its burst): the QPs it holds stay held. */
	if (pacer != NULL && pacer->next == eng->pacer.next && pacer->ctx == eng->pacer.ctx) {
		eng->pacer = *pacer;
		return 0;
	}
	if (pacer != NULL)
		eng->pacer = *pacer;
	else
		memset(&eng->pacer, 0, sizeof(eng->pacer));
	/* Whoever the old pacer held back may send now. */
	for (i = 0; i <= eng->qp_table_mask; i++) {
		struct roce_qp *qp = eng->qp_table[i];

		if (qp != NULL && qp->pace_at != 0) {
			roce_timer_cancel(&eng->wheel, &qp->pace_timer);
			engine_pace_done(&qp->pace_timer, qp);
		}
	}
	return 0;
}

void
roce_qp_set_paced(struct roce_qp *qp, int on)
{
	qp->paced = on != 0;
}

int
roce_engine_set_cc(struct roce_engine *eng, const struct roce_engine_cc *cc)
{
	if (cc != NULL)
		eng->cc = *cc;
	else
		memset(&eng->cc, 0, sizeof(eng->cc));
	return 0;
}

int
roce_qp_send_cnp(struct roce_qp *qp, struct rte_mbuf *m)
{
	return qp_tx(qp, m, ROCE_XC_CNP_TX);
}

const struct roce_path *
roce_qp_path(const struct roce_qp *qp)
{
	return &qp->attr.ah;
}

int
roce_qp_set_ecn(struct roce_qp *qp, uint8_t ecn)
{
	struct roce_path ah = qp->attr.ah;

	if (ecn >= ROCE_ECN_CE || qp->state < ROCE_QPS_RTR)
		return -EINVAL;
	/* The IP header of the template carries it: build the template again. */
	ah.ecn = ecn;
	if (roce_path_init(&ah) != 0)
		return -EINVAL;
	qp->attr.ah = ah;
	return 0;
}

uint32_t
roce_qp_dest_qpn(const struct roce_qp *qp)
{
	return qp->attr.dest_qp_num;
}

void
roce_engine_mr_revoke(struct roce_engine *eng, const struct roce_mr *mr)
{
	uint32_t i;

	for (i = 0; i <= eng->qp_table_mask; i++)
		if (eng->qp_table[i] != NULL)
			resp_mr_revoke(eng->qp_table[i], mr);
}

void
roce_engine_qp_foreach(const struct roce_engine *eng, void (*fn)(struct roce_qp *qp, void *arg),
		void *arg)
{
	uint32_t i;

	for (i = 0; i <= eng->qp_table_mask; i++)
		if (eng->qp_table[i] != NULL)
			fn(eng->qp_table[i], arg);
}

struct roce_qp *
roce_engine_qp(const struct roce_engine *eng, uint32_t qpn)
{
	return qpn <= ROCE_24BIT_MASK ? engine_qp_lookup(eng, qpn) : NULL;
}

struct roce_qp *
roce_engine_gsi(const struct roce_engine *eng, uint8_t port_num)
{
	return port_num != 0 ? engine_qp_lookup(eng, gsi_key(port_num)) : NULL;
}

uint64_t
roce_engine_next_timer(const struct roce_engine *eng)
{
	return roce_timer_wheel_next(&eng->wheel);
}

void
roce_engine_counters(const struct roce_engine *eng, uint64_t *out)
{
	uint32_t i;

	memcpy(out, eng->cnt, sizeof(eng->cnt));
	for (i = 0; i <= eng->qp_table_mask; i++) {
		const struct roce_qp *qp = eng->qp_table[i];

		if (qp == NULL)
			continue;
		roce_counters_add(out, qp->cnt, ROCE_XC_NUM);
	}
}

static const struct roce_counter_desc xc_desc[ROCE_XC_NUM] = {
	ROCE_XPORT_COUNTERS(ROCE_COUNTER_DESC)
};

const struct roce_counter_family roce_xport_counter_family = {
	.name = "transport",
	.about = "per QP, summed per engine with the QPs already destroyed (roce_qp_counters(), "
		"roce_engine_counters())",
	.desc = xc_desc,
	.nb = ROCE_XC_NUM,
};
