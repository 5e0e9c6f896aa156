/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_COUNTERS_H
#define ROCE_COUNTERS_H

/**
 * @file
 * The counter registry: every library describes its counters as one family, a table of
 * {name, description} indexed by the library's counter enum (generated from its X-macro
 * list). Counters are plain uint64_t arrays kept per lcore; they are summed with
 * roce_counters_add() and published with roce_counters_emit(), which hands each counter to a
 * sink: a JSON object for the control socket, a telemetry dictionary, a line of text.
 * doc/counters.md is generated from the families.
 *
 * This library sits below every other (drivers included) and knows none of them.
 */

#include <stdint.h>

/** One counter: the name it is published under and what it counts. */
struct roce_counter_desc {
	const char *name;
	const char *description;
};

/** The counters of one library, as one table. */
struct roce_counter_family {
	const char *name;   /**< short name, e.g. "transport" */
	const char *about;  /**< where they are kept and what they are about, one sentence */
	const struct roce_counter_desc *desc;  /**< nb entries, indexed by the family's enum */
	unsigned int nb;
};

/**
 * A family as a set of counters publishes it: every name is @c prefix followed by the
 * family's name, in upper case (the impairment counters are lower case in impair.show and
 * IMPAIR_RX_SEEN in the daemon's counters).
 */
struct roce_counter_group {
	const struct roce_counter_family *family;
	const char *prefix;  /**< "" or, e.g., "NET_" */
	const char *note;    /**< when the group is published, if not always; or NULL */
};

/** Longest published name, with its terminating NUL. */
#define ROCE_COUNTER_NAME_MAX 64

/** Table entry of one X-macro line X(NAME, "description"). */
#define ROCE_COUNTER_DESC(n, d) { #n, d },

/**
 * @return
 *   The name of counter @p i of @p f, or NULL when @p i is out of range.
 */
const char *roce_counter_name(const struct roce_counter_family *f, unsigned int i);

/**
 * @return
 *   What counter @p i of @p f counts, or NULL when @p i is out of range.
 */
const char *roce_counter_description(const struct roce_counter_family *f, unsigned int i);

/**
 * Add @p n counters: sum[i] += v[i]. Summing per-lcore snapshots (workers, queues) is done
 * with this and nothing else.
 */
void roce_counters_add(uint64_t *sum, const uint64_t *v, unsigned int n);

/**
 * What roce_counters_emit() hands every counter to.
 *
 * @param arg
 *   The sink's state (a JSON object, a telemetry dictionary).
 * @param name
 *   The published name (prefixed, upper case).
 * @param description
 *   What it counts.
 * @param value
 *   Its value.
 */
typedef void (*roce_counter_sink)(void *arg, const char *name, const char *description,
		uint64_t value);

/** roce_counters_emit() flags: leave out counters that are zero. */
#define ROCE_COUNTERS_NONZERO 0x1

/**
 * Publish a group: one sink call per counter of its family, in table order.
 *
 * @param g
 *   The family and its prefix.
 * @param values
 *   g->family->nb values, indexed as its table.
 * @param flags
 *   ROCE_COUNTERS_* flags.
 * @param sink
 *   Called for every counter published.
 * @param arg
 *   Passed to @p sink.
 */
void roce_counters_emit(const struct roce_counter_group *g, const uint64_t *values,
		unsigned int flags, roce_counter_sink sink, void *arg);

/**
 * A sink adding every counter to a DPDK telemetry dictionary (@p arg: a struct rte_tel_data
 * on which rte_tel_data_start_dict() was called).
 */
void roce_counters_tel_sink(void *arg, const char *name, const char *description,
		uint64_t value);

#endif /* ROCE_COUNTERS_H */
