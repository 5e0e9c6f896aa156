/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A port's PFC in software (roce_dp_pfc.h): the pauses received, per priority, with the
 * watchdog and the accounting of the time paused. Writers hold the port's lock (PFC frames
 * are rare next to data); the transmit objects read `until` without it.
 */
#include <string.h>

#include <rte_common.h>

#include "roce_dp_pfc.h"

/* Pause quanta run at this speed when the port reports none. */
#define DEFAULT_LINK_MBPS 100000

static const struct roce_counter_desc pfc_desc[ROCE_DP_PFC_CNT_NUM] = {
	ROCE_DP_PFC_COUNTERS(ROCE_COUNTER_DESC)
};

const struct roce_counter_family roce_dp_pfc_counter_family = {
	.name = "pfc",
	.about = "per port, summed over the ports in the daemon-wide counters (pfc.show has "
		"each port's)",
	.desc = pfc_desc,
	.nb = ROCE_DP_PFC_CNT_NUM,
};

/* The parser's reasons, as counters. */
static const uint8_t reason_counter[] = {
	[ROCE_PFC_BAD_LENGTH] = ROCE_DP_PFC_C_RX_BAD_LENGTH,
	[ROCE_PFC_BAD_DST] = ROCE_DP_PFC_C_RX_BAD_DST,
	[ROCE_PFC_BAD_OPCODE] = ROCE_DP_PFC_C_RX_BAD_OPCODE,
	[ROCE_PFC_BAD_LINK_PAUSE] = ROCE_DP_PFC_C_RX_LINK_PAUSE,
	[ROCE_PFC_BAD_ZERO_VECTOR] = ROCE_DP_PFC_C_RX_ZERO_VECTOR,
};

_Static_assert(RTE_DIM(reason_counter) == ROCE_PFC_NB_REASONS + 1,
		"a counter for each of the parser's reasons");

static const char *const mode_names[ROCE_DP_PFC_NB_MODES] = { "sw", "hw", "off", "auto" };

const char *
roce_dp_pfc_mode_name(enum roce_dp_pfc_mode mode)
{
	return (unsigned int)mode < ROCE_DP_PFC_NB_MODES ? mode_names[mode] : "?";
}

void
roce_dp_pfc_init(struct roce_dp_pfc *pp)
{
	memset(pp, 0, sizeof(*pp));
	rte_spinlock_init(&pp->lock);
	pp->mode = ROCE_DP_PFC_SW;
	pp->prios = 0xff;
	pp->watchdog_ns = (uint64_t)ROCE_DP_PFC_WATCHDOG_MS * 1000000;
	roce_pfc_dscp_map_default(pp->dscp2prio);
}

/* Publish a priority's new end of pause, and the latest of all. Under the lock. */
static void
set_until(struct roce_dp_pfc *pp, unsigned int p, uint64_t until, uint64_t now)
{
	uint64_t old = pp->until[p], max = 0;
	unsigned int i;

	/* The union of a priority's pauses: what the old one still had left is replaced. */
	pp->paused_ns[p] += (int64_t)(until > now ? until - now : 0) -
		(int64_t)(old > now ? old - now : 0);
	__atomic_store_n(&pp->until[p], until, __ATOMIC_RELAXED);
	for (i = 0; i < ROCE_PFC_NB_PRIO; i++)
		max = RTE_MAX(max, pp->until[i]);
	/* The release orders the priority's time before the hint readers test first. */
	__atomic_store_n(&pp->until_max, max, __ATOMIC_RELEASE);
}

/*
 * A pause of @ns for priority @p arrived at @now. Under the lock. The watchdog: a pause that
 * would keep the priority paused without a break past the timeout is cut there, and the
 * priority's pauses are ignored while they keep coming (a storm), until a resume or until
 * they stop for a timeout.
 */
static void
pause_prio(struct roce_dp_pfc *pp, unsigned int p, uint64_t ns, uint64_t now)
{
	uint64_t until = now + ns;

	pp->pauses[p]++;
	pp->cnt[ROCE_DP_PFC_C_RX_PAUSE]++;
	if (pp->storm & (1u << p)) {
		if (now - pp->last_rx[p] < pp->watchdog_ns) {
			pp->last_rx[p] = now;
			pp->cnt[ROCE_DP_PFC_C_RX_STORM]++;
			return;
		}
		pp->storm &= (uint8_t)~(1u << p);
	}
	if (pp->until[p] <= now)
		pp->since[p] = now;
	if (pp->watchdog_ns != 0 && until - pp->since[p] > pp->watchdog_ns) {
		until = pp->since[p] + pp->watchdog_ns;
		pp->storm |= (uint8_t)(1u << p);
		pp->last_rx[p] = now;
		pp->cnt[ROCE_DP_PFC_C_WATCHDOG]++;
	}
	set_until(pp, p, until, now);
}

static void
resume_prio(struct roce_dp_pfc *pp, unsigned int p, uint64_t now)
{
	pp->resumes[p]++;
	pp->cnt[ROCE_DP_PFC_C_RX_RESUME]++;
	pp->storm &= (uint8_t)~(1u << p);
	if (pp->until[p] > now)
		set_until(pp, p, now, now);
}

enum roce_pfc_result
roce_dp_pfc_rx(struct roce_dp_pfc *pp, const uint8_t *frame, uint32_t len, uint64_t now)
{
	struct roce_pfc_frame f;
	enum roce_pfc_result r = roce_pfc_parse(frame, len, &f);
	uint64_t link;
	unsigned int p;

	if (r == ROCE_PFC_NOT_CTRL)
		return r;
	rte_spinlock_lock(&pp->lock);
	if (r != ROCE_PFC_OK) {
		pp->cnt[reason_counter[r]]++;
	} else if (pp->cnt[ROCE_DP_PFC_C_RX_FRAMES]++, pp->mode != ROCE_DP_PFC_SW) {
		pp->cnt[ROCE_DP_PFC_C_RX_IGNORED]++;
	} else {
		link = __atomic_load_n(&pp->link_mbps, __ATOMIC_RELAXED);
		if (link == 0)
			link = DEFAULT_LINK_MBPS;
		for (p = 0; p < ROCE_PFC_NB_PRIO; p++) {
			if (!(f.vector & (1u << p)))
				continue;
			if (!(pp->prios & (1u << p))) {
				pp->cnt[ROCE_DP_PFC_C_RX_NOT_ENABLED]++;
				continue;
			}
			if (f.quanta[p] == 0)
				resume_prio(pp, p, now);
			else
				pause_prio(pp, p, roce_pfc_quanta_ns(f.quanta[p], link), now);
		}
	}
	rte_spinlock_unlock(&pp->lock);
	return r;
}

int
roce_dp_pfc_input(struct roce_dp_pfc *pp, const struct rte_mbuf *m, uint64_t now)
{
	uint8_t buf[ROCE_PFC_FRAME_LEN + 4];
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);

	if (!roce_pfc_is_ctrl(f, m->data_len))
		return 0;
	if (m->pkt_len > sizeof(buf)) {
		/* Longer than any MAC control frame: refused for that alone. */
		rte_spinlock_lock(&pp->lock);
		pp->cnt[ROCE_DP_PFC_C_RX_BAD_LENGTH]++;
		rte_spinlock_unlock(&pp->lock);
		return 1;
	}
	if (m->data_len < m->pkt_len)
		f = rte_pktmbuf_read(m, 0, m->pkt_len, buf);
	roce_dp_pfc_rx(pp, f, m->pkt_len, now);
	return 1;
}

void
roce_dp_pfc_read(struct roce_dp_pfc *pp, uint64_t now, struct roce_dp_pfc_state *st)
{
	unsigned int p;

	memset(st, 0, sizeof(*st));
	rte_spinlock_lock(&pp->lock);
	st->mode = pp->mode;
	st->prios = pp->prios;
	st->storm = pp->storm;
	st->link_mbps = pp->link_mbps;
	st->link_fixed_mbps = pp->link_fixed_mbps;
	st->watchdog_ns = pp->watchdog_ns;
	memcpy(st->cnt, pp->cnt, sizeof(st->cnt));
	memcpy(st->dscp2prio, pp->dscp2prio, sizeof(st->dscp2prio));
	for (p = 0; p < ROCE_PFC_NB_PRIO; p++) {
		uint64_t left = pp->until[p] > now ? pp->until[p] - now : 0;

		/* What was counted ahead for the current pause has not passed yet. */
		st->paused_ns[p] = (uint64_t)(pp->paused_ns[p] - (int64_t)left);
		st->paused_left_ns[p] = left;
		st->paused |= (uint8_t)(left != 0) << p;
		st->pauses[p] = pp->pauses[p];
		st->resumes[p] = pp->resumes[p];
		st->cnt[ROCE_DP_PFC_C_PAUSED_NS] += st->paused_ns[p];
	}
	rte_spinlock_unlock(&pp->lock);
}

void
roce_dp_pfc_configure(struct roce_dp_pfc *pp, enum roce_dp_pfc_mode mode, uint8_t prios,
		uint64_t watchdog_ns, uint64_t now)
{
	unsigned int p;

	rte_spinlock_lock(&pp->lock);
	pp->mode = (uint8_t)mode;
	pp->prios = prios;
	pp->watchdog_ns = watchdog_ns;
	pp->storm = 0;
	/* Not honoured any more: what was paused goes at once. */
	for (p = 0; p < ROCE_PFC_NB_PRIO; p++)
		if (pp->until[p] > now && (mode != ROCE_DP_PFC_SW || !(prios & (1u << p))))
			set_until(pp, p, now, now);
	rte_spinlock_unlock(&pp->lock);
}

void
roce_dp_pfc_conf_defaults(struct roce_dp_pfc_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = ROCE_DP_PFC_AUTO;
	c->prios = 0xff;
	roce_pfc_dscp_map_default(c->dscp2prio);
	c->watchdog_ms = ROCE_DP_PFC_WATCHDOG_MS;
}

void
roce_dp_pfc_set_link(struct roce_dp_pfc *pp, uint64_t link_mbps)
{
	if (__atomic_load_n(&pp->link_fixed_mbps, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&pp->link_mbps, link_mbps, __ATOMIC_RELAXED);
}

void
roce_dp_pfc_fix_link(struct roce_dp_pfc *pp, uint64_t mbps)
{
	__atomic_store_n(&pp->link_fixed_mbps, mbps, __ATOMIC_RELAXED);
	if (mbps != 0)
		__atomic_store_n(&pp->link_mbps, mbps, __ATOMIC_RELAXED);
}

void
roce_dp_pfc_set_dscp_map(struct roce_dp_pfc *pp, const uint8_t map[64])
{
	unsigned int d;

	rte_spinlock_lock(&pp->lock);
	for (d = 0; d < 64; d++)
		pp->dscp2prio[d] = map[d] & 7;
	rte_spinlock_unlock(&pp->lock);
}
