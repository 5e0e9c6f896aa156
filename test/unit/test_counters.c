/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The counter registry: every group the daemon publishes has names that are unique, short
 * enough and fit for telemetry, and a description for each; the emitter prefixes, upper-cases
 * and filters; the dataplane sums its workers and adds the impairment groups only to the
 * daemon-wide set.
 */
#include <ctype.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_telemetry.h>

#include "dp_private.h"
#include "roce_counters.h"
#include "roce_dataplane.h"
#include "roce_test.h"

#define MAX_OUT 512

struct out {
	unsigned int n;
	char name[MAX_OUT][ROCE_COUNTER_NAME_MAX];
	const char *desc[MAX_OUT];
	uint64_t value[MAX_OUT];
};

static void
collect(void *arg, const char *name, const char *description, uint64_t value)
{
	struct out *o = arg;

	if (o->n >= MAX_OUT)
		return;
	snprintf(o->name[o->n], sizeof(o->name[0]), "%s", name);
	o->desc[o->n] = description;
	o->value[o->n++] = value;
}

static int
find(const struct out *o, const char *name)
{
	unsigned int i;

	for (i = 0; i < o->n; i++)
		if (strcmp(o->name[i], name) == 0)
			return (int)i;
	return -1;
}

static uint64_t
value_of(const struct out *o, const char *name)
{
	int i = find(o, name);

	return i < 0 ? UINT64_MAX : o->value[i];
}

/* Every group's counters with the published names, values all one. */
static void
whole_set(struct out *o)
{
	static uint64_t ones[MAX_OUT];
	const struct roce_counter_group *g;
	unsigned int i;

	for (i = 0; i < MAX_OUT; i++)
		ones[i] = 1;
	memset(o, 0, sizeof(*o));
	for (i = 0; (g = roce_dp_counter_group(i)) != NULL; i++) {
		RT_CHECK(g->family != NULL && g->family->nb > 0 && g->family->nb <= MAX_OUT &&
				g->family->name != NULL && g->family->about != NULL,
				"group %u", i);
		roce_counters_emit(g, ones, 0, collect, o);
	}
	RT_CHECK(i == 11, "%u groups", i);
}

static void
test_registry(void)
{
	static struct out o;
	unsigned int i, j;

	whole_set(&o);
	/* Telemetry drops what does not fit one dictionary: all of it fits but with a
	 * direction impaired and a capture run, or both directions impaired (counters.c). */
	RT_CHECK(o.n > 100 && o.n - ROCE_IMPAIR_CNT_NUM - ROCE_CAPTURE_CNT_NUM <=
			RTE_TEL_MAX_DICT_ENTRIES, "%u counters", o.n);
	for (i = 0; i < o.n; i++) {
		size_t len = strlen(o.name[i]), k;

		RT_CHECK(len > 0 && len < ROCE_COUNTER_NAME_MAX - 1, "%s: length", o.name[i]);
		for (k = 0; k < len; k++)
			RT_CHECK(isupper((unsigned char)o.name[i][k]) ||
					isdigit((unsigned char)o.name[i][k]) || o.name[i][k] == '_',
					"%s: character %zu", o.name[i], k);
		RT_CHECK(o.desc[i] != NULL && o.desc[i][0] != '\0', "%s: description", o.name[i]);
		for (j = 0; j < i; j++)
			RT_CHECK(strcmp(o.name[i], o.name[j]) != 0, "%s twice", o.name[i]);
	}
	/* Names the tests and docs grep for keep their spelling. */
	RT_CHECK(find(&o, "PORT_RX_PKTS") == 0, "dataplane first");
	RT_CHECK(find(&o, "RETRANSMITS") > 0 && find(&o, "NET_ARP_REPLY_TX") > 0 &&
			find(&o, "RX_ROCE") > 0 && find(&o, "DROP_ICRC") > 0 &&
			find(&o, "IMPAIR_RX_DROPPED_UNIFORM") > 0 &&
			find(&o, "IMPAIR_TX_CE_MARKED") > 0, "known names");
	RT_CHECK(find(&o, "DROP_NONE") < 0, "DROP_NONE is no counter");
	RT_CHECK(find(&o, "RX_DROP") > 0, "RX_DROP is one");
	/* One default out of range, in every family. */
	RT_CHECK(roce_counter_name(&roce_xport_counter_family, ROCE_XC_NUM) == NULL &&
			roce_counter_description(&roce_dp_counter_family, ROCE_DP_CNT_NUM) == NULL &&
			roce_counter_name(&roce_impair_counter_family, ROCE_IMPAIR_CNT_NUM) == NULL &&
			roce_counter_name(&roce_wire_drop_counter_family,
				ROCE_DROP_NUM - 1) == NULL,
			"out of range");
	RT_CHECK(strcmp(roce_counter_name(&roce_wire_drop_counter_family, ROCE_DROP_ICRC - 1),
			roce_drop_reason_name(ROCE_DROP_ICRC)) == 0, "drop family from reason 1");
	RT_CHECK(strcmp(roce_counter_name(&roce_impair_counter_family, ROCE_IMPAIR_C_SEEN),
			"seen") == 0, "impair.show keeps lower case");
}

static void
test_emit(void)
{
	static const struct roce_counter_desc d[] = {
		{ "a_b", "one" }, { "c", "two" }, { "D9", "three" },
	};
	static const struct roce_counter_family f = { "t", "test", d, RTE_DIM(d) };
	static const struct roce_counter_group g = { &f, "Pre_", NULL };
	const uint64_t v[] = { 0, 5, 7 };
	uint64_t sum[3] = { 1, 1, 1 };
	static struct out o;

	memset(&o, 0, sizeof(o));
	roce_counters_emit(&g, v, 0, collect, &o);
	RT_CHECK(o.n == 3 && strcmp(o.name[0], "PRE_A_B") == 0 && strcmp(o.name[2], "PRE_D9") == 0 &&
			o.value[1] == 5 && strcmp(o.desc[2], "three") == 0, "emit all");
	memset(&o, 0, sizeof(o));
	roce_counters_emit(&g, v, ROCE_COUNTERS_NONZERO, collect, &o);
	RT_CHECK(o.n == 2 && strcmp(o.name[0], "PRE_C") == 0, "emit non-zero");
	roce_counters_add(sum, v, 3);
	RT_CHECK(sum[0] == 1 && sum[1] == 6 && sum[2] == 8, "add");
}

static void
test_dataplane(void)
{
	struct roce_dp_conf c = { .nb_workers = 2, .nb_mbufs = 512, .mbuf_data_room = 256,
		.max_qps = 16 };
	struct roce_impair_spec spec = { .dirs = ROCE_IMPAIR_DIR_TX, .loss = 0.5, .seed = 1 };
	struct roce_worker_stats sum;
	struct roce_impair *im;
	static struct out all, one, nz;
	struct roce_dp *dp;
	uint16_t port = 0;

	dp = roce_dp_create(&c);
	RT_CHECK(dp != NULL, "dataplane: %s", rte_strerror(rte_errno));
	if (dp == NULL)
		return;
	/* Not started: roce_dp_call() runs on this thread, the workers are idle. */
	dp->workers[0].cnt[ROCE_DP_RPC] = 3;
	dp->workers[1].cnt[ROCE_DP_RPC] = 4;
	dp->workers[1].wire.drop[ROCE_DROP_ICRC] = 2;
	dp->workers[0].wire.type[ROCE_PKT_ROCE] = 9;
	RT_CHECK(roce_dp_counters_sum(dp, 0, 2, &sum) == 0 && sum.dp[ROCE_DP_RPC] == 7 &&
			sum.wire.drop[ROCE_DROP_ICRC] == 2 && sum.wire.type[ROCE_PKT_ROCE] == 9,
			"sum");
	RT_CHECK(roce_dp_counters_sum(dp, 0, 3, &sum) == -EINVAL, "past the last worker");

	/* An impairment on tx: in the daemon-wide set only. */
	RT_CHECK(rte_vdev_init("net_null_cnt", NULL) == 0 &&
			rte_eth_dev_get_port_by_name("net_null_cnt", &port) == 0, "null port");
	im = roce_impair_create(port, 1, SOCKET_ID_ANY);
	RT_CHECK(im != NULL && roce_impair_set(im, &spec) == 0, "tx impairment");

	RT_CHECK(roce_dp_counters_emit(dp, 0, 2, 0, collect, &all) == 0, "emit all workers");
	RT_CHECK(roce_dp_counters_emit(dp, 1, 2, 0, collect, &one) == 0, "emit worker 1");
	RT_CHECK(roce_dp_counters_emit(dp, 0, 2, ROCE_COUNTERS_NONZERO, collect, &nz) == 0,
			"emit non-zero");
	RT_CHECK(value_of(&all, "RPC") == 7 && value_of(&one, "RPC") == 4 &&
			value_of(&all, "DROP_ICRC") == 2 && value_of(&one, "RX_ROCE") == 0,
			"values");
	RT_CHECK(find(&all, "IMPAIR_TX_SEEN") > 0 && find(&all, "IMPAIR_RX_SEEN") < 0 &&
			find(&one, "IMPAIR_TX_SEEN") < 0, "impairment groups");
	RT_CHECK(nz.n == 3 && value_of(&nz, "RX_ROCE") == 9 && find(&nz, "TX_PKTS") < 0,
			"%u non-zero", nz.n);
	roce_impair_destroy(im);
	memset(&all, 0, sizeof(all));
	roce_dp_counters_emit(dp, 0, 2, 0, collect, &all);
	RT_CHECK(find(&all, "IMPAIR_TX_SEEN") < 0, "a destroyed handle is not summed");
	roce_dp_destroy(dp);
	rte_vdev_uninit("net_null_cnt");
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	rt_eal_init(argv[0]);
	RT_RUN(test_registry);
	RT_RUN(test_emit);
	RT_RUN(test_dataplane);
	return rt_report("test_counters");
}
