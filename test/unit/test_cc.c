/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cc: the DCQCN reaction point against a reference model of the equations written here
 * from doc/congestion-control.md (it shares no code with lib/cc and plays every alpha timer
 * expiry one at a time), the knob table, the notification point under a CE flood, the CNP
 * builder byte by byte, and the notification and reaction points on two transport engines
 * (the pacer at scale is test_pacer.c's).
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "roce_cc.h"
#include "roce_cc_counters.h"
#include "roce_test.h"
#include "wire_ref.h"
#include "xport_harness.h"

#define US 1000ull
#define MS 1000000ull
#define LINE_MBPS 100000ull
/* Per-packet bytes on top of the payload, as the doc gives them: Ethernet, IPv4, UDP, BTH,
 * ICRC, FCS, preamble, inter-frame gap. */
#define REF_OVERHEAD (14 + 20 + 8 + 12 + 4 + 4 + 8 + 12)

/* ---------------------------------------------------------------------------------------- */
/* Reference model of one reaction point.                                                   */

enum { R_CNP, R_TIMER, R_BYTES, R_FULL };       /* as enum roce_cc_event */
enum { S_FULL, S_FR, S_AI, S_HAI };             /* as enum roce_cc_stage */

struct ref_ev {
	uint64_t t;
	int type, stage;
	double rc, rt, alpha;
};

struct ref {
	/* knobs */
	double line, maxr, minr, ai, hai, g, cut_scale, min_fac, first_rate;
	uint64_t k_ns, t_ns, period_ns, b;
	unsigned int f;
	int clamp, clamp_ati, enable;
	/* state */
	int limited, held, any_cut, inc_t, inc_b, stage;
	double rc, rt, alpha;
	uint64_t next_alpha, next_timer, held_at, cut_at, bytes;
	unsigned int tc, bc;
	struct ref_ev *ev;
	unsigned int nb_ev, cap_ev;
};

static void
ref_init(struct ref *r, const struct roce_cc_params *p, double line)
{
	const uint32_t *v = p->v;

	memset(r, 0, sizeof(*r));
	r->line = line;
	r->maxr = v[ROCE_CC_RP_MAX_RATE] != 0 && v[ROCE_CC_RP_MAX_RATE] < line ?
		v[ROCE_CC_RP_MAX_RATE] : line;
	r->minr = v[ROCE_CC_RP_MIN_RATE];
	r->ai = v[ROCE_CC_RP_AI_RATE];
	r->hai = v[ROCE_CC_RP_HAI_RATE];
	r->g = v[ROCE_CC_RP_DCE_TCP_G] / 1024.0;
	/* alpha / Gd with alpha in 1024ths and Gd = 2^rp_gd */
	r->cut_scale = 1024.0 / (double)(1u << v[ROCE_CC_RP_GD]);
	r->min_fac = v[ROCE_CC_RP_MIN_DEC_FAC] / 100.0;
	r->first_rate = v[ROCE_CC_RP_RATE_TO_SET_ON_FIRST_CNP];
	r->k_ns = v[ROCE_CC_RP_DCE_TCP_RTT] * US;
	r->t_ns = v[ROCE_CC_RP_TIME_RESET] * US;
	r->period_ns = v[ROCE_CC_RP_RATE_REDUCE_MONITOR_PERIOD] * US;
	r->b = v[ROCE_CC_RP_BYTE_RESET];
	r->f = v[ROCE_CC_RP_THRESHOLD];
	r->clamp = v[ROCE_CC_RP_CLAMP_TGT_RATE];
	r->clamp_ati = v[ROCE_CC_RP_CLAMP_TGT_RATE_ATI];
	r->enable = v[ROCE_CC_RP_ENABLE];
	r->rc = r->rt = line;
	r->alpha = v[ROCE_CC_RP_INITIAL_ALPHA_VALUE] / 1024.0;
	r->stage = S_FULL;
	r->cap_ev = 1 << 20;
	r->ev = calloc(r->cap_ev, sizeof(*r->ev));
}

static void
ref_log(struct ref *r, uint64_t t, int type)
{
	if (r->nb_ev < r->cap_ev)
		r->ev[r->nb_ev++] = (struct ref_ev){ t, type, r->stage, r->rc, r->rt, r->alpha };
}

static void
ref_cut(struct ref *r, uint64_t t)
{
	int first = !r->limited;
	double keep;

	/* Target rate: always on the first cut, with the clamp, or after an increase. */
	if (first || r->clamp || r->inc_b || (r->clamp_ati && r->inc_t))
		r->rt = r->rc < r->maxr ? r->rc : r->maxr;
	if (first && r->first_rate > 0) {
		r->rc = r->first_rate < r->maxr ? r->first_rate : r->maxr;
		r->rt = r->rc;
	} else {
		keep = 1 - r->alpha * r->cut_scale;
		if (keep < r->min_fac)
			keep = r->min_fac;
		r->rc = r->rc * keep;
	}
	if (r->rc < r->minr)
		r->rc = r->minr;
	r->alpha = r->g * r->alpha + (1 - r->g);
	r->limited = 1;
	r->any_cut = 1;
	r->held = 0;
	r->inc_t = r->inc_b = 0;
	r->tc = r->bc = 0;
	r->bytes = 0;
	r->cut_at = t;
	r->next_alpha = t + r->k_ns;
	r->next_timer = t + r->t_ns;
	r->stage = S_FR;
	ref_log(r, t, R_CNP);
}

static void
ref_increase(struct ref *r, uint64_t t, int type)
{
	unsigned int big = r->tc > r->bc ? r->tc : r->bc, small = r->tc < r->bc ? r->tc : r->bc;

	if (big <= r->f) {
		r->stage = S_FR;
	} else if (small > r->f) {
		r->stage = S_HAI;
		r->rt = r->rt + (small - r->f) * r->hai;
	} else {
		r->stage = S_AI;
		r->rt = r->rt + r->ai;
	}
	if (r->rt > r->maxr)
		r->rt = r->maxr;
	r->rc = 0.5 * (r->rc + r->rt);
	ref_log(r, t, type);
	if (r->maxr - r->rc <= 1.0) {
		r->limited = 0;
		r->rc = r->rt = r->line;
		r->stage = S_FULL;
		ref_log(r, t, R_FULL);
	}
}

/* Play every timer expiry up to @t, one at a time: alpha, then rate timer, then held cut. */
static void
ref_run(struct ref *r, uint64_t t)
{
	for (;;) {
		uint64_t a = r->limited ? r->next_alpha : UINT64_MAX;
		uint64_t b = r->limited ? r->next_timer : UINT64_MAX;
		uint64_t c = r->held ? r->held_at : UINT64_MAX;

		if (a <= t && a <= b && a <= c) {
			r->alpha *= r->g;
			r->next_alpha += r->k_ns;
		} else if (b <= t && b <= c) {
			r->tc++;
			r->inc_t = 1;
			r->next_timer += r->t_ns;
			ref_increase(r, b, R_TIMER);
		} else if (c <= t) {
			ref_cut(r, c);
		} else {
			return;
		}
	}
}

static void
ref_cnp(struct ref *r, uint64_t t)
{
	ref_run(r, t);
	if (!r->enable)
		return;
	if (r->any_cut && r->period_ns > 0 && t - r->cut_at < r->period_ns) {
		if (!r->held) {
			r->held = 1;
			r->held_at = r->cut_at + r->period_ns;
		}
		return;
	}
	ref_cut(r, t);
}

static void
ref_send(struct ref *r, uint64_t t, uint64_t wire)
{
	ref_run(r, t);
	if (!r->limited || r->b == 0)
		return;
	r->bytes += wire;
	while (r->limited && r->bytes >= r->b) {
		r->bytes -= r->b;
		r->bc++;
		r->inc_b = 1;
		ref_increase(r, t, R_BYTES);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Trajectories: lib/cc and the reference fed the same script.                              */

struct script {
	const char *what;
	uint64_t cnp_from, cnp_every, cnp_until;  /* periodic CNPs (every 0: one at cnp_from) */
	unsigned int burst;                       /* CNPs 1 us apart at each CNP time */
	uint64_t send_every;                      /* one 4096-byte packet every ...; 0: none */
	uint64_t end;
};

static int
within(double got, double want, double rel, double abs_floor)
{
	return fabs(got - want) <= fmax(fabs(want) * rel, abs_floor);
}

static int
is_cnp_time(const struct script *s, uint64_t t)
{
	uint64_t base;

	if (t < s->cnp_from || t > s->cnp_until + s->burst * US)
		return 0;
	if (s->cnp_every == 0)
		base = s->cnp_from;
	else
		base = s->cnp_from + (t - s->cnp_from) / s->cnp_every * s->cnp_every;
	if (base > s->cnp_until)
		return 0;
	return t >= base && t < base + RTE_MAX(s->burst, 1u) * US && (t - base) % US == 0;
}

static void
run_script(const char *profile, const struct script *s)
{
	enum { TICK = 100, QPN = 0x123 };
	struct roce_cc_params p;
	struct roce_cc_conf conf = { .line_mbps = LINE_MBPS, .trace_len = 4096, .max_qps = 4 };
	struct roce_cc *cc;
	struct roce_cc_trace_entry *tr = calloc(1 << 20, sizeof(*tr)), buf[512];
	unsigned int nb_tr = 0, probes = 0, bad_probe = 0, bad_ev = 0, i;
	uint64_t cursor = 0, t, probe_every;
	struct ref r;
	int n;

	RT_CHECK(roce_cc_profile(profile, LINE_MBPS, &p) == 0, "profile %s", profile);
	conf.params = &p;
	cc = roce_cc_create(&conf);
	RT_CHECK(cc != NULL && roce_cc_qp_add(cc, QPN) == 0, "create");
	if (cc == NULL || tr == NULL)
		return;
	ref_init(&r, &p, LINE_MBPS);
	/* A probe at every alpha timer period catches the state after each timer event. */
	probe_every = p.v[ROCE_CC_RP_DCE_TCP_RTT] * US;
	for (t = 0; t <= s->end; t += TICK) {
		if (s->send_every != 0 && t % s->send_every == 0) {
			roce_cc_sent(cc, QPN, 1, 4096, t);
			ref_send(&r, t, 4096 + REF_OVERHEAD);
		}
		if (is_cnp_time(s, t)) {
			roce_cc_cnp_rx(cc, QPN, t);
			ref_cnp(&r, t);
		}
		if (t % probe_every == 0) {
			struct roce_cc_qp_state st;

			roce_cc_qp_get(cc, QPN, t, &st);
			ref_run(&r, t);
			probes++;
			if (!within(st.rate_mbps, r.rc, 0.01, 1e-9) ||
					!within(st.target_mbps, r.rt, 0.01, 1e-9) ||
					!within(st.alpha, r.alpha, 0.01, 1e-6)) {
				if (bad_probe++ < 3)
					RT_CHECK(0, "%s/%s t=%lu ns: RC %.3f/%.3f RT %.3f/%.3f alpha "
							"%.6f/%.6f (cc/ref)", profile, s->what,
							(unsigned long)t, st.rate_mbps, r.rc,
							st.target_mbps, r.rt, st.alpha, r.alpha);
			}
		}
		while ((n = roce_cc_trace_read(cc, QPN, t, &cursor, buf, RTE_DIM(buf))) > 0)
			for (i = 0; i < (unsigned int)n && nb_tr < (1u << 20); i++)
				tr[nb_tr++] = buf[i];
	}
	RT_CHECK(nb_tr == r.nb_ev, "%s/%s: %u events in lib/cc, %u in the reference", profile,
			s->what, nb_tr, r.nb_ev);
	for (i = 0; i < RTE_MIN(nb_tr, r.nb_ev); i++) {
		const struct ref_ev *e = &r.ev[i];

		if (tr[i].seq != i || tr[i].time_ns != e->t || tr[i].event != e->type ||
				tr[i].stage != e->stage ||
				!within(tr[i].rate_mbps, e->rc, 0.01, 1e-9) ||
				!within(tr[i].target_mbps, e->rt, 0.01, 1e-9) ||
				!within(tr[i].alpha, e->alpha, 0.01, 1e-6)) {
			if (bad_ev++ < 3)
				RT_CHECK(0, "%s/%s event %u at %lu/%lu ns type %u/%d stage %u/%d: "
						"RC %.3f/%.3f RT %.3f/%.3f alpha %.6f/%.6f (cc/ref)",
						profile, s->what, i, (unsigned long)tr[i].time_ns,
						(unsigned long)e->t, tr[i].event, e->type, tr[i].stage,
						e->stage, tr[i].rate_mbps, e->rc, tr[i].target_mbps,
						e->rt, tr[i].alpha, e->alpha);
		}
	}
	RT_CHECK(bad_ev == 0 && bad_probe == 0, "%s/%s: %u events, %u probes, %u and %u apart",
			profile, s->what, nb_tr, probes, bad_ev, bad_probe);
	/* The scripts are meant to exercise something: cuts and increases both happened. */
	RT_CHECK(r.nb_ev > 2, "%s/%s: %u events", profile, s->what, r.nb_ev);
	free(r.ev);
	free(tr);
	roce_cc_free(cc);
}

static const struct script scripts[] = {
	{ "single CNP", 10 * US, 0, 10 * US, 0, 1 * US, 30 * MS },
	{ "CNPs every 5 us", 10 * US, 5 * US, 2 * MS, 0, 1 * US, 30 * MS },
	{ "CNPs every 55 us", 10 * US, 55 * US, 5 * MS, 0, 1 * US, 30 * MS },
	{ "CNPs every 500 us", 10 * US, 500 * US, 10 * MS, 0, 1 * US, 40 * MS },
	{ "bursts of 20 CNPs", 10 * US, 1 * MS, 3 * MS, 20, 1 * US, 30 * MS },
	{ "single CNP, timer only", 10 * US, 0, 10 * US, 0, 0, 30 * MS },
	{ "CNPs every 100 us, slow sender", 10 * US, 100 * US, 3 * MS, 0, 7 * US, 40 * MS },
};

static void
test_rp_vs_reference(void)
{
	static const char *const profiles[] = { "mlx5", "paper" };
	unsigned int i, j;

	for (j = 0; j < RTE_DIM(profiles); j++)
		for (i = 0; i < RTE_DIM(scripts); i++)
			run_script(profiles[j], &scripts[i]);
}

/* ---------------------------------------------------------------------------------------- */
/* Properties with closed forms.                                                            */

static struct roce_cc *
one_qp(const char *profile, uint32_t qpn, struct roce_cc_params *p)
{
	struct roce_cc_conf conf = { .line_mbps = LINE_MBPS, .trace_len = 1024, .params = p };
	struct roce_cc *cc;

	RT_CHECK(roce_cc_profile(profile, LINE_MBPS, p) == 0, "profile");
	cc = roce_cc_create(&conf);
	RT_CHECK(cc != NULL && roce_cc_qp_add(cc, qpn) == 0, "create");
	return cc;
}

/* Without CNPs, alpha decays by g/1024 per rp_dce_tcp_rtt, from its value after the CNP. */
static void
test_alpha_decay(void)
{
	static const char *const profiles[] = { "mlx5", "paper" };
	unsigned int j, n;

	for (j = 0; j < RTE_DIM(profiles); j++) {
		struct roce_cc_params p;
		struct roce_cc *cc = one_qp(profiles[j], 7, &p);
		double g = p.v[ROCE_CC_RP_DCE_TCP_G] / 1024.0;
		double a0 = p.v[ROCE_CC_RP_INITIAL_ALPHA_VALUE] / 1024.0, a1 = a0 * g + 1 - g;
		uint64_t k = p.v[ROCE_CC_RP_DCE_TCP_RTT] * US, t0 = 1000;
		struct roce_cc_qp_state st;

		roce_cc_cnp_rx(cc, 7, t0);
		roce_cc_qp_get(cc, 7, t0, &st);
		RT_CHECK(within(st.alpha, a1, 1e-9, 0), "%s: alpha after the CNP %f, want %f",
				profiles[j], st.alpha, a1);
		RT_CHECK(within(st.rate_mbps, LINE_MBPS * (1 - a0 / 2), 1e-9, 0),
				"%s: RC %f after one CNP", profiles[j], st.rate_mbps);
		for (n = 1; n <= 250; n++) {
			roce_cc_qp_get(cc, 7, t0 + n * k - 1, &st);
			if (st.stage == ROCE_CC_STAGE_FULL)
				break;          /* alpha rests while the QP is not limited */
			RT_CHECK(within(st.alpha, a1 * pow(g, n - 1), 1e-9, 0),
					"%s: just before expiry %u", profiles[j], n);
			roce_cc_qp_get(cc, 7, t0 + n * k, &st);
			RT_CHECK(within(st.alpha, a1 * pow(g, n), 1e-9, 0),
					"%s: alpha %g after %u periods, want %g", profiles[j],
					st.alpha, n, a1 * pow(g, n));
		}
		RT_CHECK(n > 15, "%s: %u alpha periods checked", profiles[j], n);
		roce_cc_free(cc);
	}
}

/*
 * Timer only (paper: F = 5, R_AI 100 Mb/s at 100 Gb/s): F fast recovery events keep RT and
 * halve the gap, then additive increase adds R_AI to RT per event; with the byte counter too,
 * hyper increase adds (min(T, BC) - F) R_HAI once both stages pass F.
 */
static void
test_stages(void)
{
	struct roce_cc_trace_entry e[64];
	struct roce_cc_params p;
	struct roce_cc *cc = one_qp("paper", 9, &p);
	struct roce_cc_qp_state st, prev;
	double ai = p.v[ROCE_CC_RP_AI_RATE], hai = p.v[ROCE_CC_RP_HAI_RATE];
	uint64_t cursor = 0, t, tt = p.v[ROCE_CC_RP_TIME_RESET] * US;
	unsigned int f = p.v[ROCE_CC_RP_THRESHOLD], i, hyper = 0;
	int n;

	RT_CHECK(ai == 100 && hai == 1000, "paper rates scaled to 100 Gb/s: %g %g", ai, hai);
	/* Two CNPs: the second (clamp_tgt_rate) takes RT down to RC, below the line rate. */
	roce_cc_cnp_rx(cc, 9, 0);
	roce_cc_cnp_rx(cc, 9, US);
	n = roce_cc_trace_read(cc, 9, US + 20 * tt, &cursor, e, RTE_DIM(e));
	RT_CHECK(n == 22 && e[1].target_mbps < 0.51 * LINE_MBPS, "two CNPs and 20 timer events: %d",
			n);
	for (i = 0; i < (unsigned int)n - 1; i++)
		e[i] = e[i + 1];
	n--;
	for (i = 1; i < (unsigned int)n; i++) {
		RT_CHECK(e[i].event == ROCE_CC_EV_TIMER && e[i].time_ns == US + i * tt, "event %u",
				i);
		if (i <= f) {
			RT_CHECK(e[i].stage == ROCE_CC_STAGE_FAST_RECOVERY &&
					e[i].target_mbps == e[i - 1].target_mbps &&
					within(e[i].rate_mbps, (e[i - 1].rate_mbps +
					e[i].target_mbps) / 2, 1e-12, 0), "fast recovery %u", i);
		} else {
			RT_CHECK(e[i].stage == ROCE_CC_STAGE_ADDITIVE &&
					within(e[i].target_mbps, e[i - 1].target_mbps + ai, 1e-12,
					0), "additive %u: RT %f after %f", i, e[i].target_mbps,
					e[i - 1].target_mbps);
		}
	}
	/* Now the byte counter too: 10 MiB events, fed 1 MiB a call. */
	roce_cc_qp_get(cc, 9, US + 20 * tt, &prev);
	for (t = US + 20 * tt; t < US + 40 * tt; t += tt / 10) {
		roce_cc_sent(cc, 9, 1, (1 << 20) - REF_OVERHEAD, t);
		roce_cc_qp_get(cc, 9, t, &st);
		if (st.stage == ROCE_CC_STAGE_HYPER && st.byte_stage == prev.byte_stage + 1 &&
				st.timer_stage == prev.timer_stage && st.target_mbps < LINE_MBPS) {
			unsigned int lo = RTE_MIN(st.timer_stage, st.byte_stage);

			hyper++;
			RT_CHECK(lo > f && within(st.target_mbps, prev.target_mbps +
					(lo - f) * hai, 1e-12, 1e-9), "hyper: RT %f after %f, T %u BC %u",
					st.target_mbps, prev.target_mbps, st.timer_stage,
					st.byte_stage);
		}
		if (st.stage == ROCE_CC_STAGE_FULL)
			break;
		prev = st;
	}
	RT_CHECK(hyper > 0, "hyper increase reached");
	roce_cc_free(cc);
}

/* rp_min_rate holds under a CNP storm; RC stays at or under rp_max_rate; then full rate. */
static void
test_clamps(void)
{
	struct roce_cc_params p;
	struct roce_cc *cc = one_qp("paper", 3, &p);
	uint64_t cnt[ROCE_CCC_NUM], t;
	struct roce_cc_qp_state st;
	double lowest = 1e18, highest = 0;

	for (t = 0; t < 5 * MS; t += 50 * US) {
		roce_cc_cnp_rx(cc, 3, t);
		roce_cc_qp_get(cc, 3, t, &st);
		lowest = RTE_MIN(lowest, st.rate_mbps);
	}
	roce_cc_counters(cc, cnt);
	RT_CHECK(lowest >= p.v[ROCE_CC_RP_MIN_RATE] && lowest < 1.5 * p.v[ROCE_CC_RP_MIN_RATE],
			"RC down to %f (rp_min_rate %u)", lowest, p.v[ROCE_CC_RP_MIN_RATE]);
	RT_CHECK(cnt[ROCE_CCC_RATE_MIN_CLAMP] > 0, "min clamps counted");
	roce_cc_free(cc);

	cc = one_qp("mlx5", 3, &p);
	RT_CHECK(roce_cc_params_set(&p, "rp_max_rate", 80000) == 0, "set rp_max_rate");
	RT_CHECK(roce_cc_set_params(cc, &p) == 0, "set params");
	roce_cc_cnp_rx(cc, 3, 0);
	for (t = 0; t < 100 * MS; t += US) {
		roce_cc_sent(cc, 3, 1, 4096, t);
		roce_cc_qp_get(cc, 3, t, &st);
		if (st.stage == ROCE_CC_STAGE_FULL)
			break;
		highest = RTE_MAX(highest, RTE_MAX(st.rate_mbps, st.target_mbps));
	}
	RT_CHECK(highest <= 80000 && highest > 79000, "limited QP at most rp_max_rate: %f",
			highest);
	RT_CHECK(st.stage == ROCE_CC_STAGE_FULL && st.rate_mbps == LINE_MBPS &&
			st.pace_mbps == 0, "past rp_max_rate no longer limited: %f, paced %f",
			st.rate_mbps, st.pace_mbps);
	roce_cc_free(cc);
}

/* A QP with CC off ignores CNPs; an unknown QP is counted. */
static void
test_off(void)
{
	struct roce_cc_params p;
	struct roce_cc *cc = one_qp("off", 5, &p);
	struct roce_cc_qp_state st;
	uint64_t cnt[ROCE_CCC_NUM];

	RT_CHECK(roce_cc_cnp_rx(cc, 5, 100) == 0 && roce_cc_cnp_rx(cc, 6, 100) == -ENOENT,
			"CNPs");
	RT_CHECK(roce_cc_sent(cc, 5, 10, 40960, 200) == 0, "not paced");
	RT_CHECK(roce_cc_np_ce(cc, 5, 300) == 0, "NP off");
	roce_cc_qp_get(cc, 5, 400, &st);
	roce_cc_counters(cc, cnt);
	RT_CHECK(st.rate_mbps == LINE_MBPS && st.cnps == 1 && st.reductions == 0, "untouched");
	RT_CHECK(cnt[ROCE_CCC_CNP_IGNORED] == 1 && cnt[ROCE_CCC_CNP_UNKNOWN_QP] == 1 &&
			cnt[ROCE_CCC_CE_NP_OFF] == 1, "counted");
	roce_cc_free(cc);
}

/* ---------------------------------------------------------------------------------------- */
/* Knobs.                                                                                   */

static void
test_knobs(void)
{
	static const char *const names[] = {
		"rp_time_reset", "rp_byte_reset", "rp_threshold", "rp_ai_rate", "rp_hai_rate",
		"rp_dce_tcp_g", "rp_dce_tcp_rtt", "rp_rate_reduce_monitor_period",
		"rp_initial_alpha_value", "rp_min_dec_fac", "rp_min_rate", "rp_max_rate",
		"rp_rate_to_set_on_first_cnp", "rp_clamp_tgt_rate",
		"rp_clamp_tgt_rate_after_time_inc", "np_min_time_between_cnps", "np_cnp_dscp",
		"np_cnp_prio",
	};
	struct roce_cc_params p, q;
	unsigned int i;
	int bad = -1;

	for (i = 0; i < RTE_DIM(names); i++)
		RT_CHECK(roce_cc_knob_find(names[i]) >= 0, "knob %s", names[i]);
	for (i = 0; i < ROCE_CC_KNOB_NUM; i++) {
		const struct roce_cc_knob_desc *k = roce_cc_knob(i);

		RT_CHECK(k != NULL && k->name && k->unit && k->description && k->min <= k->max &&
				roce_cc_knob_find(k->name) == (int)i, "row %u", i);
	}
	RT_CHECK(roce_cc_knob(ROCE_CC_KNOB_NUM) == NULL, "past the table");
	RT_CHECK(roce_cc_profile("mlx5", LINE_MBPS, &p) == 0, "mlx5");
	for (i = 0; i < ROCE_CC_KNOB_NUM; i++) {
		const struct roce_cc_knob_desc *k = roce_cc_knob(i);

		q = p;
		RT_CHECK(roce_cc_params_set(&q, k->name, (uint64_t)k->max + 1) == -EINVAL &&
				q.v[i] == p.v[i], "%s above %u refused", k->name, k->max);
		if (k->min > 0)
			RT_CHECK(roce_cc_params_set(&q, k->name, k->min - 1) == -EINVAL,
					"%s below %u refused", k->name, k->min);
		RT_CHECK(roce_cc_params_set(&q, k->name, k->max) == 0 && q.v[i] == k->max,
				"%s max taken", k->name);
	}
	RT_CHECK(roce_cc_params_set(&p, "rp_no_such", 1) == -ENOENT, "unknown knob");
	/* mlx5 defaults as the firmware shows them (doc/congestion-control.md). */
	RT_CHECK(p.v[ROCE_CC_RP_TIME_RESET] == 300 && p.v[ROCE_CC_RP_BYTE_RESET] == 32767 &&
			p.v[ROCE_CC_RP_THRESHOLD] == 1 && p.v[ROCE_CC_RP_AI_RATE] == 5 &&
			p.v[ROCE_CC_RP_HAI_RATE] == 50 && p.v[ROCE_CC_RP_DCE_TCP_G] == 1019 &&
			p.v[ROCE_CC_RP_DCE_TCP_RTT] == 1 &&
			p.v[ROCE_CC_RP_RATE_REDUCE_MONITOR_PERIOD] == 4 &&
			p.v[ROCE_CC_RP_INITIAL_ALPHA_VALUE] == 1023 &&
			p.v[ROCE_CC_NP_MIN_TIME_BETWEEN_CNPS] == 4 && p.v[ROCE_CC_NP_CNP_DSCP] == 48,
			"mlx5 defaults");
	RT_CHECK(roce_cc_params_check(&p, &bad) == 0, "mlx5 in range");
	p.v[ROCE_CC_NP_CNP_DSCP] = 64;
	RT_CHECK(roce_cc_params_check(&p, &bad) == -EINVAL && bad == ROCE_CC_NP_CNP_DSCP,
			"bad knob named");
	RT_CHECK(roce_cc_create(&(struct roce_cc_conf){ .line_mbps = 1000, .params = &p }) ==
			NULL, "create refuses bad knobs");
	RT_CHECK(roce_cc_profile("paper", 40000, &p) == 0 && p.v[ROCE_CC_RP_AI_RATE] == 40 &&
			p.v[ROCE_CC_RP_TIME_RESET] == 55 && p.v[ROCE_CC_RP_THRESHOLD] == 5 &&
			p.v[ROCE_CC_NP_MIN_TIME_BETWEEN_CNPS] == 50 &&
			p.v[ROCE_CC_RP_DCE_TCP_G] == 1020, "paper at 40 Gb/s");
	RT_CHECK(roce_cc_profile("paper", 400000, &p) == 0 && p.v[ROCE_CC_RP_AI_RATE] == 400,
			"paper rates scale with the line rate");
	RT_CHECK(roce_cc_profile("off", 1000, &p) == 0 && p.v[ROCE_CC_RP_ENABLE] == 0 &&
			p.v[ROCE_CC_NP_ENABLE] == 0, "off");
	RT_CHECK(roce_cc_profile("dctcp", 1000, &p) == -ENOENT, "unknown profile");
	RT_CHECK(roce_cc_profile("mlx5", 0, &p) == -EINVAL, "no line rate");
	for (i = 0; roce_cc_profile_name(i) != NULL; i++)
		RT_CHECK(roce_cc_profile(roce_cc_profile_name(i), 1000, &p) == 0, "profile %u", i);
	RT_CHECK(i == 3, "three profiles");
}

/* QP table: add, remove, churn; the trace ring keeps the newest entries. */
static void
test_table_trace(void)
{
	struct roce_cc_conf conf = { .line_mbps = LINE_MBPS, .max_qps = 64, .trace_len = 8 };
	struct roce_cc *cc = roce_cc_create(&conf);
	struct roce_cc_trace_entry e[32];
	struct roce_cc_qp_state st;
	uint64_t cursor = 0, t;
	unsigned int i, round;
	int n;

	RT_CHECK(cc != NULL, "create");
	RT_CHECK(roce_cc_create(&(struct roce_cc_conf){ .line_mbps = 1, .trace_len = 6 }) ==
			NULL, "trace_len must be a power of 2");
	for (round = 0; round < 20; round++) {
		for (i = 0; i < 64; i++)
			RT_CHECK(roce_cc_qp_add(cc, (round * 977 + i * 4096) & 0xFFFFFF) == 0, "add");
		RT_CHECK(roce_cc_qp_add(cc, 0xABCDEF) == -ENOSPC, "full");
		RT_CHECK(roce_cc_qp_add(cc, (round * 977) & 0xFFFFFF) == -EEXIST, "twice");
		for (i = 0; i < 64; i += 2)
			RT_CHECK(roce_cc_qp_remove(cc, (round * 977 + i * 4096) & 0xFFFFFF) == 0,
					"remove");
		for (i = 0; i < 64; i++)
			RT_CHECK((roce_cc_qp_get(cc, (round * 977 + i * 4096) & 0xFFFFFF, 0, &st) ==
					0) == (i % 2 == 1), "lookup %u after removals", i);
		for (i = 1; i < 64; i += 2)
			RT_CHECK(roce_cc_qp_remove(cc, (round * 977 + i * 4096) & 0xFFFFFF) == 0,
					"remove");
	}
	RT_CHECK(roce_cc_qp_remove(cc, 1) == -ENOENT, "remove unknown");
	RT_CHECK(roce_cc_qp_add(cc, 77) == 0, "add");
	for (t = 0; t < 20 * 10 * US; t += 10 * US)
		roce_cc_cnp_rx(cc, 77, t);            /* 20 reductions (4 us monitor period) */
	n = roce_cc_trace_read(cc, 77, t, &cursor, e, RTE_DIM(e));
	RT_CHECK(n == 8 && e[0].seq == 12 && e[7].seq == 19 && cursor == 20,
			"the newest 8 of 20: %d, first %lu", n, n > 0 ? (unsigned long)e[0].seq : 0);
	RT_CHECK(n == 8 && e[7].cnps == 20 && e[7].event == ROCE_CC_EV_CNP &&
			e[7].time_ns == 190 * US, "last entry");
	RT_CHECK(roce_cc_trace_read(cc, 77, t, &cursor, e, RTE_DIM(e)) == 0, "nothing new");
	RT_CHECK(roce_cc_trace_read(cc, 78, t, &cursor, e, 1) == -ENOENT, "unknown QP");
	roce_cc_free(cc);
}

/*
 * The trace as a reader sees it: the state read is the one after entry trace_next - 1, times
 * never go back even when a caller's clock does, the ring resizes keeping the newest
 * entries, a ring of 0 counts entries without keeping them, a cursor past the end waits.
 */
static void
test_trace_reader(void)
{
	struct roce_cc_conf conf = { .line_mbps = LINE_MBPS, .max_qps = 8, .trace_len = 64 };
	struct roce_cc *cc = roce_cc_create(&conf);
	struct roce_cc_trace_entry e[256];
	struct roce_cc_qp_state st;
	uint64_t cursor = 0, t, last = 0, cnt[ROCE_CCC_NUM];
	unsigned int i, bad = 0;
	int n;

	RT_CHECK(cc != NULL && roce_cc_qp_add(cc, 5) == 0, "create");
	if (cc == NULL)
		return;
	RT_CHECK(roce_cc_create(&(struct roce_cc_conf){ .line_mbps = 1,
			.trace_len = 2 * ROCE_CC_TRACE_LEN_MAX }) == NULL, "trace_len above the max");
	RT_CHECK(roce_cc_qp_get(cc, 5, 0, &st) == 0 && st.trace_next == 0 && st.trace_len == 64,
			"fresh QP: no entries, ring of 64");
	/* CNPs, then reads at a time ahead of the sends that follow (a control call between a
	 * worker loop's clock read and its engine's turn). */
	for (t = 10 * US; t < 1000 * US; t += 10 * US) {
		if (t % (50 * US) == 0)
			roce_cc_cnp_rx(cc, 5, t);
		roce_cc_qp_get(cc, 5, t + 3 * US, &st);
		roce_cc_sent(cc, 5, 8, 8 * 4096, t);      /* a byte counter event or more */
		n = roce_cc_trace_read(cc, 5, t, &cursor, e, RTE_DIM(e));
		for (i = 0; i < (unsigned int)RTE_MAX(n, 0); i++) {
			if (e[i].time_ns < last && bad++ < 3)
				RT_CHECK(0, "entry %lu at %lu ns, after one at %lu",
						(unsigned long)e[i].seq, (unsigned long)e[i].time_ns,
						(unsigned long)last);
			last = e[i].time_ns;
		}
		RT_CHECK(roce_cc_qp_get(cc, 5, t, &st) == 0 && st.trace_next == cursor, "next %lu",
				(unsigned long)cursor);
		if (n > 0)
			RT_CHECK(st.rate_mbps == e[n - 1].rate_mbps &&
					st.target_mbps == e[n - 1].target_mbps,
					"RC %.6f RT %.6f are the last entry's %.6f %.6f",
					st.rate_mbps, st.target_mbps, e[n - 1].rate_mbps,
					e[n - 1].target_mbps);
	}
	RT_CHECK(bad == 0 && cursor > 64, "%lu entries, times in order", (unsigned long)cursor);
	/* Timer events played by a read ahead of the engine's clock, then a byte event of a send
	 * stamped a little earlier: the send's time is taken as the read's. */
	RT_CHECK(roce_cc_qp_add(cc, 8) == 0, "add 8");
	{
		struct roce_cc_qp_state st8 = { 0 };
		uint64_t c8 = 0, t8;
		int m;
		unsigned int timers = 0, bytes = 0;

		for (t8 = 20 * US; t8 < 3000 * US; t8 += 10 * US) {
			/* Timers due 300 us after each: at 315, 615, ... us. */
			if (t8 % (1000 * US) == 20 * US)
				roce_cc_cnp_rx(cc, 8, t8 - 5 * US);
			uint32_t before = st8.timer_stage;

			roce_cc_qp_get(cc, 8, t8 + 9 * US, &st8);
			/* Right after a read played a timer event: a byte event from the engine,
			 * stamped before the timer's. */
			roce_cc_sent(cc, 8, 1, st8.timer_stage != before ? 40000 : 100, t8);
		}
		m = roce_cc_trace_read(cc, 8, t8, &c8, e, RTE_DIM(e));
		for (i = 0; i < (unsigned int)RTE_MAX(m, 0); i++) {
			timers += e[i].event == ROCE_CC_EV_TIMER;
			bytes += e[i].event == ROCE_CC_EV_BYTES;
			if (i > 0 && e[i].time_ns < e[i - 1].time_ns && bad++ < 3)
				RT_CHECK(0, "QP 8: entry %u at %lu ns after one at %lu", i,
						(unsigned long)e[i].time_ns,
						(unsigned long)e[i - 1].time_ns);
		}
		RT_CHECK(bad == 0 && timers > 3 && bytes > 3 && c8 < RTE_DIM(e), "QP 8: %d entries "
				"(%u timer, %u byte events) in order", m, timers, bytes);
	}
	roce_cc_qp_remove(cc, 8);
	/* QP 5's clock went on with QP 8's: its timers played since. */
	roce_cc_qp_get(cc, 5, t, &st);
	/* Smaller: the newest 16 stay, with their sequence numbers. */
	RT_CHECK(roce_cc_set_trace_len(cc, 16) == 0, "resize to 16");
	RT_CHECK(roce_cc_set_trace_len(cc, 24) == -EINVAL &&
			roce_cc_set_trace_len(cc, 2 * ROCE_CC_TRACE_LEN_MAX) == -EINVAL,
			"not a power of 2, too long: refused");
	cursor = 0;
	n = roce_cc_trace_read(cc, 5, t, &cursor, e, RTE_DIM(e));
	RT_CHECK(n == 16 && e[0].seq == st.trace_next - 16 && e[15].seq == st.trace_next - 1 &&
			e[15].time_ns >= last,
			"newest 16 kept: %d from %lu", n, n > 0 ? (unsigned long)e[0].seq : 0);
	/* Larger again: the 16 are still there, room for more. */
	RT_CHECK(roce_cc_set_trace_len(cc, 128) == 0, "resize to 128");
	cursor = 0;
	n = roce_cc_trace_read(cc, 5, t, &cursor, e, RTE_DIM(e));
	RT_CHECK(n == 16 && e[0].seq == st.trace_next - 16, "the 16 survive growing: %d", n);
	/* A new QP gets the new length; no ring at all: counted, nothing kept. */
	RT_CHECK(roce_cc_qp_add(cc, 6) == 0 && roce_cc_qp_get(cc, 6, t, &st) == 0 &&
			st.trace_len == 128, "new QP: 128");
	RT_CHECK(roce_cc_set_trace_len(cc, 0) == 0 && roce_cc_qp_add(cc, 7) == 0, "no trace");
	roce_cc_cnp_rx(cc, 7, t + 10 * US);
	cursor = 0;
	RT_CHECK(roce_cc_trace_read(cc, 7, t + 20 * US, &cursor, e, RTE_DIM(e)) == 0 &&
			cursor == 1 && roce_cc_qp_get(cc, 7, t + 20 * US, &st) == 0 &&
			st.trace_next == 1 && st.trace_len == 0 && st.reductions == 1,
			"untraced QP: its entry counted, none kept (cursor %lu)", (unsigned long)cursor);
	/* A cursor from the future (the QP tracked afresh) is taken as the end. */
	cursor = 1000;
	RT_CHECK(roce_cc_trace_read(cc, 6, t + 20 * US, &cursor, e, RTE_DIM(e)) == 0 &&
			cursor == 0, "future cursor: %lu", (unsigned long)cursor);
	roce_cc_counters(cc, cnt);
	RT_CHECK(cnt[ROCE_CCC_TRACE_NO_MEMORY] == 0, "no allocation failed");
	roce_cc_free(cc);
}

/* ---------------------------------------------------------------------------------------- */
/* Notification point.                                                                      */

static void
test_np_flood(void)
{
	static const struct { const char *profile; uint32_t gap_us; } runs[] = {
		{ "mlx5", 4 }, { "paper", 50 }, { "mlx5", 0 }, { "mlx5", 17 },
	};
	unsigned int r;

	for (r = 0; r < RTE_DIM(runs); r++) {
		struct roce_cc_params p;
		struct roce_cc *cc = one_qp(runs[r].profile, 10, &p);
		uint64_t cnt[ROCE_CCC_NUM], last[2] = { 0, 0 }, t, ce = 0, want;
		unsigned int sent[2] = { 0, 0 }, q, bad = 0;
		uint64_t gap = runs[r].gap_us * US, step = (gap + 299) / 300 * 300;

		RT_CHECK(roce_cc_params_set(&p, "np_min_time_between_cnps", runs[r].gap_us) == 0,
				"interval");
		roce_cc_set_params(cc, &p);
		roce_cc_qp_add(cc, 11);
		/* Both QPs marked every 300 ns (offset by 100 ns) for 1 ms. */
		for (t = 1000; t < 1000 + MS; t += 100) {
			q = (t / 100) % 3;
			if (q == 2)
				continue;
			ce++;
			if (roce_cc_np_ce(cc, 10 + q, t) == 1) {
				if (sent[q] != 0 && t - last[q] < gap)
					bad++;
				sent[q]++;
				last[q] = t;
			}
		}
		roce_cc_counters(cc, cnt);
		/* A QP's marks come every 300 ns: a CNP at the first mark an interval on. */
		want = gap == 0 ? ce / 2 : (MS + step - 1) / step;
		for (q = 0; q < 2; q++)
			RT_CHECK(sent[q] >= want - 1 && sent[q] <= want + 1,
					"%s %u us: QP %u got %u CNPs in 1 ms, want %lu",
					runs[r].profile, runs[r].gap_us, q, sent[q],
					(unsigned long)want);
		RT_CHECK(bad == 0, "no two CNPs closer than the interval");
		RT_CHECK(cnt[ROCE_CCC_CE_RX] == ce && cnt[ROCE_CCC_CNP_TX] == sent[0] + sent[1] &&
				cnt[ROCE_CCC_CNP_SUPPRESSED] == ce - sent[0] - sent[1],
				"counters %lu %lu %lu", (unsigned long)cnt[ROCE_CCC_CE_RX],
				(unsigned long)cnt[ROCE_CCC_CNP_TX],
				(unsigned long)cnt[ROCE_CCC_CNP_SUPPRESSED]);
		RT_CHECK(roce_cc_np_ce(cc, 99, t) == -ENOENT, "unknown QP");
		roce_cc_free(cc);
	}
}

/*
 * The NP on packet arrival times older than the instance's clock (a burst's packets that
 * arrived one by one before the worker took them): the interval runs on their times.
 */
static void
test_np_arrival_times(void)
{
	struct roce_cc_params p;
	struct roce_cc *cc = one_qp("mlx5", 10, &p);    /* np_min_time_between_cnps 4 us */

	roce_cc_qp_add(cc, 11);
	RT_CHECK(roce_cc_np_ce(cc, 11, 100 * US) == 1, "the clock at 100 us");
	RT_CHECK(roce_cc_np_ce(cc, 10, 80 * US) == 1, "a mark that arrived at 80 us: a CNP");
	RT_CHECK(roce_cc_np_ce(cc, 10, 82 * US) == 0, "82 us: within the interval");
	RT_CHECK(roce_cc_np_ce(cc, 10, 86 * US) == 1, "86 us: 6 us on, a CNP");
	RT_CHECK(roce_cc_np_ce(cc, 10, 70 * US) == 0, "older than the last CNP: within");
	roce_cc_free(cc);
}

/* The CNP, byte by byte against the IBA annex A17.9.3 layout, and through the classifier. */
static void
test_cnp_build(void)
{
	struct rte_mempool *mp = rt_pool(64, 2048);
	unsigned int v;

	for (v = 0; v < 2; v++) {
		struct roce_path qp_path = {
			.src_mac = {{ 0x02, 0, 0, 0, 0, 1 }},
			.dst_mac = {{ 0x02, 0, 0, 0, 0, 2 }},
			.src_ip = { 10, 0, 0, 1 },
			.dst_ip = { 10, 0, 0, 2 },
			.dscp = 26,
			.ecn = ROCE_ECN_ECT0,
			.udp_sport = 0xC123,
			.vlan = (uint8_t)v,
			.vlan_tci = 0x2064,              /* PCP 1, VID 100 */
		};
		struct roce_path cnp_path;
		struct roce_cc_params p;
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp), *pk[1];
		struct roce_wire_stats ws;
		uint8_t f[256];
		const uint8_t *ip, *bth;
		uint32_t len, icrc, l2 = 14 + 4 * v, k;
		int zero = 1;

		RT_CHECK(roce_path_init(&qp_path) == 0, "qp path");
		roce_cc_profile("mlx5", LINE_MBPS, &p);
		RT_CHECK(roce_cc_cnp_path(&p, &qp_path, &cnp_path) == 0, "cnp path");
		RT_CHECK(m != NULL && roce_cc_cnp_build(m, &cnp_path, 0x00ABCDEF) == 0, "build");
		len = rt_mbuf_copy(m, f, sizeof(f));
		RT_CHECK(len == l2 + 20 + 8 + 12 + 16 + 4, "CNP frame of %u bytes", len);
		if (v) {
			RT_CHECK(f[12] == 0x81 && f[13] == 0x00 && (f[14] >> 5) == 6 &&
					((f[14] & 0x0F) << 8 | f[15]) == 100, "VLAN PCP 6, VID kept");
		}
		RT_CHECK(f[l2 - 2] == 0x08 && f[l2 - 1] == 0x00, "IPv4");
		ip = f + l2;
		RT_CHECK(ip[1] == 48 << 2, "TOS %#x: DSCP 48, Not-ECT", ip[1]);
		RT_CHECK(ip[9] == 17 && ip[22] == 0x12 && ip[23] == 0xB7, "UDP to 4791");
		RT_CHECK(ip[20] == 0xC1 && ip[21] == 0x23, "the QP's UDP source port");
		bth = ip + 28;
		RT_CHECK(bth[0] == 0x81, "opcode %#x", bth[0]);
		RT_CHECK(bth[1] == 0x00, "SE, M, pad, TVer 0: %#x", bth[1]);
		RT_CHECK(bth[2] == 0xFF && bth[3] == 0xFF, "default P_Key");
		RT_CHECK(bth[4] == 0x40, "BECN set, FECN clear: %#x", bth[4]);
		RT_CHECK(bth[5] == 0xAB && bth[6] == 0xCD && bth[7] == 0xEF, "destination QP");
		RT_CHECK(bth[8] == 0 && bth[9] == 0 && bth[10] == 0 && bth[11] == 0,
				"AckReq clear, PSN 0");
		for (k = 12; k < 28; k++)
			zero &= bth[k] == 0;
		RT_CHECK(zero, "16 reserved bytes, zero");
		memcpy(&icrc, bth + 28, 4);
		RT_CHECK(icrc == ref_icrc(ip, 20 + 8 + 12 + 16, 0), "ICRC %#x, reference %#x",
				icrc, ref_icrc(ip, 20 + 8 + 12 + 16, 0));
		memset(&ws, 0, sizeof(ws));
		pk[0] = m;
		RT_CHECK(roce_classify_burst(pk, 1, 0, &ws) == 1 &&
				roce_pkt_meta(m)->opcode == ROCE_OPCODE_CNP, "classified as a CNP");
		rte_pktmbuf_free(m);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* QP pairs on two engines.                                                                 */

static struct xh h;

/*
 * QP pairs between the two engines, sharing one CQ and one MR a side (the harness's own
 * connect gives every pair two 4096-entry CQs: 1024 pairs would not fit the test's memory).
 */
struct pace_set {
	unsigned int nb;
	struct roce_qp *qp[1024][2];
	unsigned int outstanding[1024];
	struct roce_cq *cq[2];
	struct roce_mr *mr[2];
	uint8_t *buf[2];
	uint32_t len;
};

/* ECN codepoint of the pace set's paths (both directions). */
static uint8_t ps_ecn = ROCE_ECN_NOT_ECT;

static int
pace_set_connect(struct pace_set *ps, unsigned int nb, uint32_t len)
{
	uint32_t all = ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_WRITE;
	unsigned int i;
	int s, ret;

	memset(ps, 0, sizeof(*ps));
	ps->nb = nb;
	ps->len = len;
	for (s = 0; s < 2; s++) {
		ps->cq[s] = roce_cq_create(8192, SOCKET_ID_ANY);
		ps->buf[s] = calloc(1, len);
		ps->mr[s] = roce_mr_reg(h.pd[s], ps->buf[s], len, all, NULL);
		if (ps->cq[s] == NULL || ps->buf[s] == NULL || ps->mr[s] == NULL)
			return -ENOMEM;
	}
	for (i = 0; i < nb; i++) {
		for (s = 0; s < 2; s++) {
			struct roce_qp_init_attr ia = { .max_send_wr = 8, .max_recv_wr = 1,
				.send_cq = ps->cq[s], .recv_cq = ps->cq[s], .qp_context = i };
			struct roce_qp_attr a = { .qp_state = ROCE_QPS_INIT, .qp_access_flags = all };

			ps->qp[i][s] = roce_qp_create(h.eng[s], h.pd[s], &ia);
			if (ps->qp[i][s] == NULL)
				return -ENOMEM;
			ret = roce_qp_modify(ps->qp[i][s], &a, ROCE_QP_STATE | ROCE_QP_ACCESS_FLAGS);
			if (ret != 0)
				return ret;
		}
		for (s = 0; s < 2; s++) {
			uint32_t me = roce_qp_num(ps->qp[i][s]), peer = roce_qp_num(ps->qp[i][1 - s]);
			struct roce_qp_attr a = {
				.qp_state = ROCE_QPS_RTR, .path_mtu = ROCE_MTU_4096,
				.dest_qp_num = peer, .rq_psn = 0x100 * (1 - s) + i,
				.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
			};
			struct roce_path *pa = &a.ah;

			pa->src_mac.addr_bytes[0] = pa->dst_mac.addr_bytes[0] = 0x02;
			pa->src_mac.addr_bytes[5] = (uint8_t)(s + 1);
			pa->dst_mac.addr_bytes[5] = (uint8_t)(2 - s);
			pa->src_ip[0] = pa->dst_ip[0] = 10;
			pa->src_ip[3] = (uint8_t)(s + 1);
			pa->dst_ip[3] = (uint8_t)(2 - s);
			pa->udp_sport = roce_udp_sport(me, peer);
			pa->ecn = ps_ecn;
			if (roce_path_init(pa) != 0)
				return -EINVAL;
			ret = roce_qp_modify(ps->qp[i][s], &a, ROCE_QP_STATE | ROCE_QP_AV |
					ROCE_QP_PATH_MTU | ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN |
					ROCE_QP_MAX_DEST_RD_ATOMIC | ROCE_QP_MIN_RNR_TIMER);
			if (ret != 0)
				return ret;
			a.qp_state = ROCE_QPS_RTS;
			a.sq_psn = 0x100 * s + i;
			a.timeout = 14;
			a.retry_cnt = 7;
			a.rnr_retry = 7;
			a.max_rd_atomic = 1;
			ret = roce_qp_modify(ps->qp[i][s], &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN |
					ROCE_QP_TIMEOUT | ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY |
					ROCE_QP_MAX_QP_RD_ATOMIC);
			if (ret != 0)
				return ret;
		}
	}
	return 0;
}

static void
pace_set_destroy(struct pace_set *ps)
{
	unsigned int i;
	int s;

	for (i = 0; i < ps->nb; i++)
		for (s = 0; s < 2; s++)
			if (ps->qp[i][s] != NULL)
				roce_qp_destroy(ps->qp[i][s]);
	for (s = 0; s < 2; s++) {
		if (ps->mr[s] != NULL)
			roce_mr_dereg(ps->mr[s]);
		if (ps->cq[s] != NULL)
			roce_cq_destroy(ps->cq[s]);
		free(ps->buf[s]);
	}
}

/* Keep every QP's send queue busy with WRITEs (up to 4 outstanding each). */
static void
keep_busy(struct pace_set *ps)
{
	struct roce_wc wc[64];
	unsigned int i;
	int n, k;

	while ((n = roce_cq_poll(ps->cq[0], wc, RTE_DIM(wc))) > 0) {
		for (k = 0; k < n; k++) {
			RT_CHECK(wc[k].status == ROCE_WC_SUCCESS, "WRITE %d", wc[k].status);
			ps->outstanding[wc[k].wr_id]--;
		}
	}
	for (i = 0; i < ps->nb; i++) {
		while (ps->outstanding[i] < 4) {
			struct roce_send_wr wr = {
				.wr_id = i,
				.opcode = ROCE_WR_RDMA_WRITE,
				.send_flags = ROCE_SEND_SIGNALED,
				.num_sge = 1,
				.sg_list = {{ roce_mr_iova(ps->mr[0]), ps->len,
					roce_mr_lkey(ps->mr[0]) }},
				.remote_addr = roce_mr_iova(ps->mr[1]),
				.rkey = roce_mr_rkey(ps->mr[1]),
			};

			if (roce_post_send(ps->qp[i][0], &wr) != 0)
				break;
			ps->outstanding[i]++;
		}
	}
}

/* ---------------------------------------------------------------------------------------- */
/* The engine's congestion control callbacks: the notification and reaction points on two   */
/* engines, as lib/dataplane wires them.                                                     */

struct cc_side {
	struct roce_cc *cc;
	unsigned int cnp_calls, ce_calls;
};

static void
side_cnp_rx(void *ctx, struct roce_qp *qp, uint64_t now)
{
	struct cc_side *s = ctx;

	s->cnp_calls++;
	roce_cc_cnp_rx(s->cc, roce_qp_num(qp), now);
}

static void
side_ce_rx(void *ctx, struct roce_qp *qp, const struct rte_mbuf *m, uint64_t now)
{
	struct cc_side *s = ctx;
	uint32_t qpn = roce_qp_num(qp);
	struct roce_path path;
	struct rte_mbuf *cnp;

	RTE_SET_USED(m);
	s->ce_calls++;
	if (roce_cc_np_ce(s->cc, qpn, now) != 1)
		return;
	cnp = rte_pktmbuf_alloc(h.mp);
	RT_CHECK(cnp != NULL, "CNP mbuf");
	if (cnp == NULL)
		return;
	RT_CHECK(roce_cc_cnp_path(roce_cc_qp_params(s->cc, qpn), roce_qp_path(qp), &path) == 0 &&
			roce_cc_cnp_build(cnp, &path, roce_qp_dest_qpn(qp)) == 0, "CNP built");
	roce_qp_send_cnp(qp, cnp);
}

/* Marks side 0's data CE in [from, to); watches side 1's CNPs and both sides' ECN. */
struct ce_tap {
	uint64_t from, to;
	uint32_t sender_qpn;          /* the CNPs' destination */
	uint64_t data, data_ect0, acks, acks_ect0, marked;
	uint64_t cnps, cnp_bad, last_cnp, min_gap;
	uint64_t cnps_in_window;
};

static enum xh_verdict
ce_tap(void *arg, int from, struct rte_mbuf *m)
{
	struct ce_tap *t = arg;
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + 14);
	const uint8_t *bth = p + 14 + 20 + 8;
	uint8_t ecn = ip->type_of_service & ROCE_ECN_MASK;

	if (bth[0] == ROCE_OPCODE_CNP) {
		uint32_t dqpn = (uint32_t)bth[5] << 16 | (uint32_t)bth[6] << 8 | bth[7];

		/* Side 1's NP answers side 0's QP: DSCP 48 (np_cnp_dscp), Not-ECT, BECN. */
		if (from != 1 || dqpn != t->sender_qpn || ip->type_of_service != 48 << 2 ||
				!(bth[4] & 0x40))
			t->cnp_bad++;
		if (t->cnps != 0 && h.now - t->last_cnp < t->min_gap)
			t->min_gap = h.now - t->last_cnp;
		t->last_cnp = h.now;
		t->cnps++;
		/* Marked packets may wait in the 10 Gb/s link's queue: up to 4 x 64 KiB. */
		t->cnps_in_window += h.now >= t->from && h.now < t->to + MS;
		return XH_PASS;
	}
	if (from == 1) {
		t->acks++;
		t->acks_ect0 += ecn == ROCE_ECN_ECT0;
		return XH_PASS;
	}
	t->data++;
	t->data_ect0 += ecn == ROCE_ECN_ECT0;
	if (h.now >= t->from && h.now < t->to) {
		ip->type_of_service |= ROCE_ECN_CE;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		t->marked++;
	}
	return XH_PASS;
}

/*
 * One QP from engine 0 to engine 1 kept busy, its data marked CE for 1 ms. With congestion
 * control (@on): side 1 answers with CNPs (at most one per np_min_time_between_cnps, to the
 * sender's QP, through the engine's transmit path), side 0's reaction point cuts the rate and
 * its pacer holds the QP to it; after the marks stop the rate climbs back to the line rate.
 * Without: the marks are only counted.
 */
static void
np_rp_run(int on)
{
	struct roce_cc_conf conf = { .line_mbps = 10000, .max_qps = 4, .trace_len = 16 };
	struct cc_side side[2] = {{ 0 }};
	static struct pace_set ps;
	struct ce_tap t = { .from = 2 * MS, .to = 3 * MS, .min_gap = UINT64_MAX };
	struct roce_cc_qp_state st;
	struct roce_pacer pacer;
	uint64_t cnt[2][ROCE_CCC_NUM], full_at = 0, lowest_at = 0, data_before, next_sample = 0;
	double lowest = 1e12, before = 0;
	int s;

	xh_init(&h, 77 + on, NULL);
	h.impair[0].delay_ns = h.impair[1].delay_ns = 2000;
	h.impair[0].rate_gbps = h.impair[1].rate_gbps = 10;
	ps_ecn = on ? ROCE_ECN_ECT0 : ROCE_ECN_NOT_ECT;
	RT_CHECK(pace_set_connect(&ps, 1, 65536) == 0, "connect");
	ps_ecn = ROCE_ECN_NOT_ECT;
	t.sender_qpn = roce_qp_num(ps.qp[0][0]);
	for (s = 0; s < 2 && on; s++) {
		struct roce_engine_cc hooks = { side_cnp_rx, side_ce_rx, &side[s] };

		side[s].cc = roce_cc_create(&conf);
		RT_CHECK(side[s].cc != NULL &&
				roce_cc_qp_add(side[s].cc, roce_qp_num(ps.qp[0][s])) == 0, "cc");
		roce_qp_set_paced(ps.qp[0][s], 1);
		roce_cc_pacer(side[s].cc, &pacer);
		RT_CHECK(roce_engine_set_pacer(h.eng[s], &pacer) == 0 &&
				roce_engine_set_cc(h.eng[s], &hooks) == 0, "hooks");
	}
	h.tap = ce_tap;
	h.tap_arg = &t;
	while (h.now < 400 * MS && (full_at == 0 || h.now < full_at + MS)) {
		keep_busy(&ps);
		xh_step(&h, 1000);
		if (!on || h.now < next_sample)
			continue;
		next_sample = h.now + 10 * US;
		roce_cc_qp_get(side[0].cc, t.sender_qpn, h.now, &st);
		if (h.now < t.from)
			before = st.rate_mbps;
		if (h.now >= t.from && st.rate_mbps < lowest) {
			lowest = st.rate_mbps;
			lowest_at = h.now;
		}
		if (h.now > t.to && full_at == 0 && st.stage == ROCE_CC_STAGE_FULL)
			full_at = h.now;
	}
	h.tap = NULL;
	data_before = t.data;
	RT_CHECK(t.marked > 100, "%lu packets marked", (unsigned long)t.marked);
	RT_CHECK(xh_counter(&h, 1, ROCE_XC_CE_RX) == t.marked, "CE_RX %lu, marked %lu",
			(unsigned long)xh_counter(&h, 1, ROCE_XC_CE_RX), (unsigned long)t.marked);
	if (!on) {
		RT_CHECK(t.cnps == 0 && xh_counter(&h, 1, ROCE_XC_CNP_TX) == 0 &&
				xh_counter(&h, 0, ROCE_XC_CNP_RX) == 0, "no CNP without cc");
		RT_CHECK(t.data_ect0 == 0 && t.acks_ect0 == 0, "Not-ECT without cc");
		RT_CHECK(xh_counter(&h, 0, ROCE_XC_PACED) == 0, "never paced");
		printf("  cc off: %lu marked, no CNP, %lu data packets\n",
				(unsigned long)t.marked, (unsigned long)data_before);
		goto out;
	}
	for (s = 0; s < 2; s++)
		roce_cc_counters(side[s].cc, cnt[s]);
	RT_CHECK(t.data_ect0 == t.data && t.acks_ect0 == t.acks && t.acks > 0,
			"ECT(0) on every data packet and ACK (%lu/%lu, %lu/%lu)",
			(unsigned long)t.data_ect0, (unsigned long)t.data,
			(unsigned long)t.acks_ect0, (unsigned long)t.acks);
	RT_CHECK(t.cnps > 10 && t.cnp_bad == 0, "%lu CNPs, %lu malformed", (unsigned long)t.cnps,
			(unsigned long)t.cnp_bad);
	RT_CHECK(t.cnps_in_window == t.cnps, "CNPs only while marking");
	/* One per 4 us at most: the 1 ms window holds 250 intervals. */
	RT_CHECK(t.min_gap >= 4 * US && t.cnps <= 251, "CNP gap %lu ns, %lu CNPs",
			(unsigned long)t.min_gap, (unsigned long)t.cnps);
	RT_CHECK(side[1].ce_calls == t.marked && cnt[1][ROCE_CCC_CE_RX] == t.marked &&
			cnt[1][ROCE_CCC_CNP_TX] == t.cnps &&
			cnt[1][ROCE_CCC_CNP_SUPPRESSED] == t.marked - t.cnps &&
			xh_counter(&h, 1, ROCE_XC_CNP_TX) == t.cnps,
			"NP counters: CE %lu, CNP %lu, suppressed %lu",
			(unsigned long)cnt[1][ROCE_CCC_CE_RX], (unsigned long)cnt[1][ROCE_CCC_CNP_TX],
			(unsigned long)cnt[1][ROCE_CCC_CNP_SUPPRESSED]);
	RT_CHECK(side[0].cnp_calls == t.cnps && cnt[0][ROCE_CCC_CNP_RX] == t.cnps &&
			xh_counter(&h, 0, ROCE_XC_CNP_RX) == t.cnps, "RP heard every CNP");
	RT_CHECK(before == 10000.0, "full rate before the marks (%.1f)", before);
	RT_CHECK(lowest < 1000.0 && lowest_at <= t.to + MS, "rate cut to %.1f Mb/s at %lu us",
			lowest, (unsigned long)(lowest_at / US));
	RT_CHECK(xh_counter(&h, 0, ROCE_XC_PACED) > 0, "paced");
	RT_CHECK(full_at != 0, "back at the line rate in 400 ms (lowest %.1f)", lowest);
	printf("  cc on: %lu marked, %lu CNPs (min gap %lu ns), rate down to %.1f Mb/s, "
			"full again after %lu us\n", (unsigned long)t.marked, (unsigned long)t.cnps,
			(unsigned long)t.min_gap, lowest, (unsigned long)((full_at - t.to) / US));
out:
	for (s = 0; s < 2; s++) {
		roce_engine_set_pacer(h.eng[s], NULL);
		roce_engine_set_cc(h.eng[s], NULL);
	}
	pace_set_destroy(&ps);
	xh_fini(&h);
	for (s = 0; s < 2; s++)
		roce_cc_free(side[s].cc);
}

static void
test_engine_np_rp(void)
{
	np_rp_run(0);
	np_rp_run(1);
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	RT_RUN(test_knobs);
	RT_RUN(test_table_trace);
	RT_RUN(test_trace_reader);
	RT_RUN(test_rp_vs_reference);
	RT_RUN(test_alpha_decay);
	RT_RUN(test_stages);
	RT_RUN(test_clamps);
	RT_RUN(test_off);
	RT_RUN(test_np_flood);
	RT_RUN(test_np_arrival_times);
	RT_RUN(test_cnp_build);
	RT_RUN(test_engine_np_rp);
	return rt_report("cc");
}
