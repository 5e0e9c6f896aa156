/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Impairment on ethdev ports: rx callbacks on every queue once rx is first configured, tx
 * stages the transmitting code calls (roce_impair_tx_prepare/poll), and configuration
 * published by pointer from the control thread.
 *
 * Grace periods: a callback (or a tx stage call) makes its queue's sequence count odd, fences,
 * loads the configuration, runs, and makes the count even again. After swapping the pointer,
 * the control thread fences and waits, for each queue whose count it sees odd, until the count
 * moves: any burst that could have read the old pointer has then left. Queues that are idle
 * (no burst, as a tx queue with nothing to send) cost nothing and are not waited for.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_telemetry.h>

#include "impair_private.h"

RTE_LOG_REGISTER(roce_impair_logtype, roce.impair, INFO);

#define GRACE_MS 1000

struct impair_q {
	uint32_t seq;                        /* odd while a callback runs */
	struct impair_cfg **slot;            /* the direction's published configuration */
	struct roce_impair_stage *st;
	const struct rte_eth_rxtx_callback *cb; /* rx */
} __rte_cache_aligned;

struct roce_impair {
	uint16_t port_id;
	uint16_t nb_queues;
	int socket;
	uint64_t next_gen;
	struct impair_cfg *cfg[ROCE_IMPAIR_NB_DIRS];
	struct impair_q *q[ROCE_IMPAIR_NB_DIRS];
	struct impair_cfg *retired;          /* grace period timed out: freed at destroy */
	TAILQ_ENTRY(roce_impair) next;       /* in the process's list */
};

/* Every handle of the process, for the sums and telemetry (another thread): the lock is only
 * taken on the control path, never by a queue. */
static TAILQ_HEAD(, roce_impair) impair_list = TAILQ_HEAD_INITIALIZER(impair_list);
static pthread_mutex_t impair_list_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct roce_counter_desc cnt_desc[ROCE_IMPAIR_CNT_NUM] = {
#define ROCE_IMPAIR_DESC(n, s, d) { #s, d },
	ROCE_IMPAIR_COUNTERS(ROCE_IMPAIR_DESC)
#undef ROCE_IMPAIR_DESC
};

const struct roce_counter_family roce_impair_counter_family = {
	.name = "impair",
	.about = "per port, direction and queue, summed over the queues (roce_impair_counters())",
	.desc = cnt_desc,
	.nb = ROCE_IMPAIR_CNT_NUM,
};

const struct roce_counter_group roce_impair_counter_group[ROCE_IMPAIR_NB_DIRS] = {
	[ROCE_IMPAIR_RX] = { &roce_impair_counter_family, "IMPAIR_RX_",
		"in the daemon-wide and port sums, once rx has been impaired on a port (summed "
		"over the ports)" },
	[ROCE_IMPAIR_TX] = { &roce_impair_counter_family, "IMPAIR_TX_",
		"in the daemon-wide and port sums, once tx has been impaired on a port (summed "
		"over the ports)" },
};

const char *
roce_impair_dir_name(enum roce_impair_dir dir)
{
	return dir == ROCE_IMPAIR_TX ? "tx" : "rx";
}

/* ---- fast path ---- */

static inline const struct impair_cfg *
q_enter(struct impair_q *q)
{
	__atomic_store_n(&q->seq, q->seq + 1, __ATOMIC_RELAXED);
	/* The odd count must be visible before the pointer is read (see impair_synchronize). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(q->slot, __ATOMIC_ACQUIRE);
}

static inline void
q_leave(struct impair_q *q)
{
	__atomic_store_n(&q->seq, q->seq + 1, __ATOMIC_RELEASE);
}

static uint16_t
rx_cb(uint16_t port_id, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, uint16_t max,
		void *arg)
{
	struct impair_q *q = arg;
	const struct impair_cfg *cfg = q_enter(q);
	uint16_t ret;

	RTE_SET_USED(port_id);
	RTE_SET_USED(queue);
	ret = impair_burst(q->st, cfg, pkts, n, max, rte_rdtsc());
	q_leave(q);
	return ret;
}

/* Called by the transmitting code: no ethdev callback, so a burst may shrink (see .h). */
uint16_t
roce_impair_tx_prepare(struct roce_impair *im, uint16_t queue, struct rte_mbuf **pkts,
		uint16_t n, uint16_t max, uint64_t now)
{
	struct impair_q *qs = __atomic_load_n(&im->q[ROCE_IMPAIR_TX], __ATOMIC_ACQUIRE), *q;
	const struct impair_cfg *cfg;
	uint16_t ret;

	if (unlikely(qs == NULL || queue >= im->nb_queues)) {
		/* Misuse (tx never configured, bad queue): pass on what fits, lose no mbuf. */
		if (n > max)
			rte_pktmbuf_free_bulk(pkts + max, n - max);
		return RTE_MIN(n, max);
	}
	q = &qs[queue];
	/* Polling an empty stage reads no configuration: no fence. */
	if (n == 0 && impair_stage_held(q->st) == 0)
		return 0;
	cfg = q_enter(q);
	ret = impair_burst(q->st, cfg, pkts, n, max, now);
	q_leave(q);
	return ret;
}

uint16_t
roce_impair_tx_poll(struct roce_impair *im, uint16_t queue, struct rte_mbuf **pkts,
		uint16_t max, uint64_t now)
{
	return roce_impair_tx_prepare(im, queue, pkts, 0, max, now);
}

uint16_t
roce_impair_ctrl(struct roce_impair *im, enum roce_impair_dir dir, uint16_t queue,
		struct rte_mbuf **pkts, uint16_t max)
{
	struct impair_q *qs;

	if (unlikely(dir >= ROCE_IMPAIR_NB_DIRS))
		return 0;
	qs = __atomic_load_n(&im->q[dir], __ATOMIC_ACQUIRE);
	if (qs == NULL || queue >= im->nb_queues || qs[queue].st->bq.nb_ctrl == 0)
		return 0;
	return impair_ctrl_take(qs[queue].st, pkts, max);
}

int
roce_impair_has_tx(const struct roce_impair *im)
{
	return __atomic_load_n(&im->q[ROCE_IMPAIR_TX], __ATOMIC_ACQUIRE) != NULL;
}

unsigned int
roce_impair_tx_held(const struct roce_impair *im, uint16_t queue)
{
	const struct impair_q *qs = __atomic_load_n(&im->q[ROCE_IMPAIR_TX], __ATOMIC_ACQUIRE);

	return qs != NULL && queue < im->nb_queues ? impair_stage_held(qs[queue].st) : 0;
}

/* ---- control path ---- */

int roce_impair_arrival_off = -1;
uint64_t roce_impair_arrival_flag;

int
roce_impair_arrival_register(void)
{
	static const struct rte_mbuf_dynfield field = {
		.name = "roce_impair_arrival_ns",
		.size = sizeof(uint64_t),
		.align = __alignof__(uint64_t),
	};
	static const struct rte_mbuf_dynflag flag = { .name = "roce_impair_arrival" };
	int off, bit;

	if (roce_impair_arrival_off >= 0)
		return 0;
	bit = rte_mbuf_dynflag_register(&flag);
	if (bit < 0)
		return -rte_errno;
	off = rte_mbuf_dynfield_register(&field);
	if (off < 0)
		return -rte_errno;
	roce_impair_arrival_flag = UINT64_C(1) << bit;
	roce_impair_arrival_off = off;
	return 0;
}

struct roce_impair *
roce_impair_create(uint16_t port_id, uint16_t nb_queues, int socket)
{
	struct roce_impair *im;

	if (!rte_eth_dev_is_valid_port(port_id) || nb_queues == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	im = calloc(1, sizeof(*im));
	if (im == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	im->port_id = port_id;
	im->nb_queues = nb_queues;
	im->socket = socket;
	pthread_mutex_lock(&impair_list_lock);
	TAILQ_INSERT_TAIL(&impair_list, im, next);
	pthread_mutex_unlock(&impair_list_lock);
	return im;
}

/* Wait until no callback of @dir can still be using what was published before. */
static int
impair_synchronize(struct roce_impair *im, enum roce_impair_dir dir)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() * GRACE_MS / 1000;
	struct impair_q *qs = im->q[dir];
	uint16_t i;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; qs != NULL && i < im->nb_queues; i++) {
		uint32_t s = __atomic_load_n(&qs[i].seq, __ATOMIC_ACQUIRE);

		while ((s & 1) && __atomic_load_n(&qs[i].seq, __ATOMIC_ACQUIRE) == s) {
			if (rte_get_timer_cycles() > end)
				return -ETIMEDOUT;
			rte_pause();
		}
	}
	return 0;
}

static void
publish(struct roce_impair *im, enum roce_impair_dir dir, struct impair_cfg *cfg)
{
	struct impair_cfg *old = im->cfg[dir];

	__atomic_store_n(&im->cfg[dir], cfg, __ATOMIC_SEQ_CST);
	if (old == NULL)
		return;
	if (impair_synchronize(im, dir) == 0) {
		free(old);
		return;
	}
	/* A queue stayed inside its callback for a second: keep the old one rather than risk it. */
	ROCE_LOG(WARNING, "port %u %s: grace period timed out; old configuration kept\n",
			im->port_id, roce_impair_dir_name(dir));
	old->retired = im->retired;
	im->retired = old;
}

/* Per-queue state of a direction, and rx callbacks for the queues that have none yet. */
static int
dir_install(struct roce_impair *im, enum roce_impair_dir dir)
{
	struct impair_q *qs = im->q[dir];
	uint16_t i;

	if (qs == NULL) {
		qs = rte_zmalloc_socket("roce_impair_q", sizeof(*qs) * im->nb_queues,
				RTE_CACHE_LINE_SIZE, im->socket);
		if (qs == NULL)
			return -ENOMEM;
		for (i = 0; i < im->nb_queues; i++) {
			qs[i].slot = &im->cfg[dir];
			qs[i].st = impair_stage_alloc(dir, i, im->socket);
			if (qs[i].st == NULL) {
				while (i-- > 0)
					roce_impair_stage_free(qs[i].st);
				rte_free(qs);
				return -ENOMEM;
			}
		}
		/* The transmitting lcore learns of the stages from whoever called set. */
		__atomic_store_n(&im->q[dir], qs, __ATOMIC_RELEASE);
	}
	if (dir == ROCE_IMPAIR_TX)
		return 0;
	/* The state is written before the callback is published (with a release store). */
	for (i = 0; i < im->nb_queues; i++) {
		if (qs[i].cb != NULL)
			continue;
		qs[i].cb = rte_eth_add_rx_callback(im->port_id, i, rx_cb, &qs[i]);
		if (qs[i].cb == NULL) {
			ROCE_LOG(ERR, "port %u queue %u: cannot add the rx callback: %s\n",
					im->port_id, i, rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	return 0;
}

int
roce_impair_set(struct roce_impair *im, const struct roce_impair_spec *spec)
{
	struct rte_ether_addr mac = {{ 0x02, 0, 0, 0, 0, 0 }};
	struct rte_eth_link link;
	uint64_t link_mbps = 0;
	enum roce_impair_dir dir;
	int ret;

	if (spec->dirs == 0 || (spec->dirs & ~(ROCE_IMPAIR_DIR_RX | ROCE_IMPAIR_DIR_TX)) != 0)
		return -EINVAL;
	/* PFC frames come from the port's MAC; their pause times run at its speed. */
	rte_eth_macaddr_get(im->port_id, &mac);
	if (rte_eth_link_get_nowait(im->port_id, &link) == 0 &&
			link.link_speed != RTE_ETH_SPEED_NUM_NONE &&
			link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		link_mbps = link.link_speed;
	for (dir = 0; dir < ROCE_IMPAIR_NB_DIRS; dir++) {
		struct roce_impair_spec one = *spec;
		struct impair_cfg *cfg;

		if (!(spec->dirs & (1u << dir)))
			continue;
		ret = dir_install(im, dir);
		if (ret != 0)
			return ret;
		one.dirs = (uint8_t)(1u << dir);
		/* rx callbacks read the TSC; tx callers give nanoseconds. */
		cfg = impair_cfg_new(&one, dir == ROCE_IMPAIR_RX ? rte_get_tsc_hz() : NS_PER_S,
				++im->next_gen);
		if (cfg == NULL)
			return -ENOMEM;
		if (dir == ROCE_IMPAIR_RX && roce_impair_arrival_register() == 0)
			cfg->arrival_ns_per_cyc = 1e9 / (double)rte_get_tsc_hz();
		impair_cfg_set_link(cfg, mac.addr_bytes, link_mbps);
		publish(im, dir, cfg);
	}
	return 0;
}

int
roce_impair_clear(struct roce_impair *im, unsigned int dirs)
{
	enum roce_impair_dir dir;

	if ((dirs & ~(ROCE_IMPAIR_DIR_RX | ROCE_IMPAIR_DIR_TX)) != 0)
		return -EINVAL;
	for (dir = 0; dir < ROCE_IMPAIR_NB_DIRS; dir++)
		if ((dirs & (1u << dir)) && im->cfg[dir] != NULL)
			publish(im, dir, NULL);
	return 0;
}

int
roce_impair_get(const struct roce_impair *im, enum roce_impair_dir dir,
		struct roce_impair_spec *spec)
{
	if (dir >= ROCE_IMPAIR_NB_DIRS || im->cfg[dir] == NULL)
		return -ENOENT;
	*spec = im->cfg[dir]->spec;
	return 0;
}

int
roce_impair_counters(const struct roce_impair *im, enum roce_impair_dir dir,
		uint64_t cnt[ROCE_IMPAIR_CNT_NUM])
{
	const struct impair_q *qs;
	uint16_t i;

	memset(cnt, 0, sizeof(uint64_t) * ROCE_IMPAIR_CNT_NUM);
	if (dir >= ROCE_IMPAIR_NB_DIRS)
		return 0;
	/* Telemetry reads from its own thread: the stages are published with a release store. */
	qs = __atomic_load_n(&im->q[dir], __ATOMIC_ACQUIRE);
	if (qs == NULL)
		return 0;
	for (i = 0; i < im->nb_queues; i++)
		roce_impair_stage_counters(qs[i].st, cnt);
	return 1;
}

int
roce_impair_queue_stats(const struct roce_impair *im, enum roce_impair_dir dir,
		struct roce_impair_qstats *qs)
{
	uint64_t hist[QHIST_NB] = {0};
	const struct impair_q *qs_;
	uint16_t i;

	memset(qs, 0, sizeof(*qs));
	if (dir >= ROCE_IMPAIR_NB_DIRS)
		return 0;
	qs_ = __atomic_load_n(&im->q[dir], __ATOMIC_ACQUIRE);
	if (qs_ == NULL)
		return 0;
	for (i = 0; i < im->nb_queues; i++)
		bneck_stats_add(&qs_[i].st->bq, hist, qs);
	bneck_stats_finish(hist, qs);
	return 1;
}

int
roce_impair_counters_total(enum roce_impair_dir dir, uint64_t cnt[ROCE_IMPAIR_CNT_NUM])
{
	uint64_t one[ROCE_IMPAIR_CNT_NUM];
	const struct roce_impair *im;
	int used = 0;

	memset(cnt, 0, sizeof(uint64_t) * ROCE_IMPAIR_CNT_NUM);
	pthread_mutex_lock(&impair_list_lock);
	TAILQ_FOREACH(im, &impair_list, next) {
		if (!roce_impair_counters(im, dir, one))
			continue;
		used = 1;
		roce_counters_add(cnt, one, ROCE_IMPAIR_CNT_NUM);
	}
	pthread_mutex_unlock(&impair_list_lock);
	return used;
}

void
roce_impair_destroy(struct roce_impair *im)
{
	enum roce_impair_dir dir;
	struct impair_cfg *c;
	uint16_t i;

	if (im == NULL)
		return;
	pthread_mutex_lock(&impair_list_lock);
	TAILQ_REMOVE(&impair_list, im, next);
	pthread_mutex_unlock(&impair_list_lock);
	for (dir = 0; dir < ROCE_IMPAIR_NB_DIRS; dir++) {
		struct impair_q *qs = im->q[dir];

		for (i = 0; qs != NULL && i < im->nb_queues; i++) {
			int ret = 0;

			if (qs[i].cb != NULL)
				ret = rte_eth_remove_rx_callback(im->port_id, i, qs[i].cb);
			/* Not polled any more: the callback's memory is ours to free. */
			if (ret == 0)
				rte_free((void *)(uintptr_t)qs[i].cb);
			roce_impair_stage_free(qs[i].st);
		}
		rte_free(qs);
		free(im->cfg[dir]);
	}
	while ((c = im->retired) != NULL) {
		im->retired = c->retired;
		free(c);
	}
	free(im);
}

/* ---- telemetry, as lib/ring's: the library lists its own objects ---- */

static int
tel_list(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct roce_impair *im;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	pthread_mutex_lock(&impair_list_lock);
	TAILQ_FOREACH(im, &impair_list, next)
		rte_tel_data_add_array_int(d, im->port_id);
	pthread_mutex_unlock(&impair_list_lock);
	return 0;
}

static int
tel_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint64_t cnt[ROCE_IMPAIR_CNT_NUM];
	const struct roce_impair *im;
	unsigned long port;
	unsigned int dir;
	char *end;
	int ret = -ENOENT;

	RTE_SET_USED(cmd);
	if (params == NULL || !isdigit((unsigned char)params[0]))
		return -EINVAL;
	port = strtoul(params, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	pthread_mutex_lock(&impair_list_lock);
	TAILQ_FOREACH(im, &impair_list, next) {
		if (im->port_id != port)
			continue;
		rte_tel_data_start_dict(d);
		for (dir = 0; dir < ROCE_IMPAIR_NB_DIRS; dir++)
			if (roce_impair_counters(im, dir, cnt))
				roce_counters_emit(&roce_impair_counter_group[dir], cnt, 0,
						roce_counters_tel_sink, d);
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&impair_list_lock);
	return ret;
}

RTE_INIT(impair_telemetry_init)
{
	rte_telemetry_register_cmd("/roce/impair/list", tel_list,
			"ethdev ports with an impairment handle");
	rte_telemetry_register_cmd("/roce/impair/counters", tel_counters,
			"impairment counters of a port, IMPAIR_RX_* and IMPAIR_TX_* once the "
			"direction was impaired. Parameters: int ethdev port id");
}
