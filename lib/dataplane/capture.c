/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet capture (roce_dp_capture.h): ethdev callbacks copy frames with rte_pcapng_copy() into
 * one single-producer ring per port queue and direction (each queue is polled by one lcore);
 * a control thread writes them with rte_pcapng_write_packets().
 *
 * The fast path never waits and never logs: a copy that finds the pool empty or its ring full
 * is dropped and counted. Callbacks test one flag (taking) before anything else, so a capture
 * that ended by itself costs a load per burst until it is released.
 *
 * Removal: callbacks are unlinked, then roce_dp_quiesce() waits until every worker has passed a
 * quiescent point (outside any rx/tx burst, the only place callbacks run): their memory and
 * the rings are then ours to free.
 *
 * A frame the PMD refused stays with the dataplane's transmit object, which offers it again in
 * its next burst; a tx callback runs before the PMD and cannot know what it took. Each frame a
 * tx callback copies is marked with a dynamic mbuf flag, which rte_pktmbuf_alloc() clears when
 * the buffer comes back for another frame (and lib/net clears on the buffers it reflects): a
 * marked frame is one offered before and not sent since, counted once (TX_REOFFER).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>
#include <rte_pcapng.h>
#include <rte_ring.h>

#include "dp_private.h"
#include "roce_dp_capture.h"

/* Copies per ring; the pool bounds the total. */
#define CAP_RING_SIZE 1024
#define CAP_POOL_MAX 8191
#define CAP_POOL_MIN 1023
/* Copy pool budget: fewer, not smaller, buffers for big snap lengths. */
#define CAP_POOL_BYTES (48u << 20)
#define CAP_POOL_CACHE 64
/* rte_pcapng_mbuf_size() leaves out the RSS hash option and the VLAN tag put back. */
#define CAP_COPY_SLACK 64
#define CAP_BURST 32
#define CAP_WRITE_BURST 64
/* The writer sleeps this long when every ring is empty. */
#define CAP_IDLE_US 200
/* Copies the writer holds per ring to put the rings' frames in time order (a power of 2). */
#define CAP_STAGE 256
/* A copy is written once it is this old: one stamped earlier on another lcore, and not yet
 * in its ring, still goes before it. */
#define CAP_HOLD_NS 200000

struct dp_capture;

/* One port queue and direction: written by the one lcore that polls the queue. */
struct cap_q {
	struct dp_capture *cap;
	struct rte_ring *ring;
	const struct rte_eth_rxtx_callback *cb;
	uint16_t port_id;
	uint16_t queue;
	uint8_t port;                         /* dataplane port index */
	uint8_t dir;                          /* ROCE_CAPTURE_RX or _TX */
	uint64_t cnt[ROCE_CAPTURE_CNT_NUM];   /* SEEN .. TX_REOFFER */
} __rte_cache_aligned;

/* The writer's copies taken from one ring, oldest first: its time-order merge input. */
struct cap_stage {
	struct rte_mbuf *m[CAP_STAGE];
	uint32_t head;
	uint32_t n;
};

struct dp_capture {
	struct roce_dp *dp;
	struct roce_capture_info info;        /* conf, start, sizes; counters summed on read */
	rte_pcapng_t *png;
	int fd;
	struct rte_mempool *mp;
	struct cap_q *qs;
	struct cap_stage *stage;              /* one per ring, the writer's only */
	uint32_t nb_qs;
	uint32_t copy_len;                    /* rte_pcapng_copy() length */
	uint64_t txflag;
	/* Timestamps from a base taken at start, read only after: rte_pcapng_copy() keeps its
	 * own TSC-to-time state in globals every lcore updates unlocked. */
	uint64_t base_tsc;
	uint64_t base_ns;
	uint64_t tsc_hz;
	pthread_t writer;
	uint8_t writer_running;
	/* Shared with the fast path and the writer: atomics. */
	uint8_t taking;                       /* callbacks copy */
	uint8_t stop;                         /* the writer drains, then finishes */
	uint32_t end;                         /* enum roce_capture_end */
	uint64_t end_ns;                      /* set by the writer when it finishes the file */
	int error;
	uint64_t bytes;
	uint64_t wcnt[ROCE_CAPTURE_CNT_NUM];  /* WRITTEN, PAST_COUNT, WRITE_ERR (the writer's) */
};

/* Per dataplane: the capture, and what the released ones counted. */
struct dp_capture_state {
	pthread_mutex_t lock;
	struct dp_capture *cur;
	unsigned int gen;
	int ran;
	uint64_t total[ROCE_CAPTURE_CNT_NUM];
	struct roce_capture_info last;        /* of the last capture released */
	int has_last;
};

static const struct roce_counter_desc cnt_desc[ROCE_CAPTURE_CNT_NUM] = {
	ROCE_CAPTURE_COUNTERS(ROCE_COUNTER_DESC)
};

const struct roce_counter_family roce_capture_counter_family = {
	.name = "capture",
	.about = "per port queue and direction (copies) and per capture (the writer), summed "
		"over every capture the daemon ran",
	.desc = cnt_desc,
	.nb = ROCE_CAPTURE_CNT_NUM,
};

const struct roce_counter_group roce_capture_counter_group = {
	&roce_capture_counter_family, "CAPTURE_",
	"in the daemon-wide sums, once rocectl capture has run",
};

static const char *const end_names[] = {
	[ROCE_CAPTURE_RUNNING] = "running",
	[ROCE_CAPTURE_STOPPED] = "stopped",
	[ROCE_CAPTURE_COUNT] = "count",
	[ROCE_CAPTURE_WRITE_ERROR] = "write error",
};

const char *
roce_capture_end_name(enum roce_capture_end end)
{
	return (unsigned int)end < RTE_DIM(end_names) ? end_names[end] : "unknown";
}

static inline void
cnt_add(uint64_t *c, uint64_t n)
{
	/* One writer per counter; readers on other threads load it whole. */
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

static uint64_t
realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* ---- fast path ---- */

/* The Enhanced Packet Block rte_pcapng_copy() puts at the start of its copy. */
struct epb_head {
	uint32_t type;
	uint32_t length;
	uint32_t interface_id;
	uint32_t ts_high;
	uint32_t ts_low;
};

static inline uint64_t
tsc_ns(const struct dp_capture *cap, uint64_t tsc)
{
	/* A TSC a little behind the base (read on another core): the base itself. */
	uint64_t d = tsc > cap->base_tsc ? tsc - cap->base_tsc : 0, s = d / cap->tsc_hz;

	return cap->base_ns + s * NS_PER_S + (d - s * cap->tsc_hz) * NS_PER_S / cap->tsc_hz;
}

static inline void
stamp(const struct dp_capture *cap, struct rte_mbuf *c, uint64_t tsc)
{
	struct epb_head *h = rte_pktmbuf_mtod(c, struct epb_head *);
	uint64_t ns = tsc_ns(cap, tsc);

	h->ts_high = (uint32_t)(ns >> 32);
	h->ts_low = (uint32_t)ns;
}

static inline uint64_t
stamp_of(const struct rte_mbuf *c)
{
	const struct epb_head *h = rte_pktmbuf_mtod(c, const struct epb_head *);

	return (uint64_t)h->ts_high << 32 | h->ts_low;
}

/* Copy @n frames (at most CAP_BURST) into the queue's ring. */
static void
copy_burst(struct cap_q *q, struct rte_mbuf **pkts, uint16_t n, enum rte_pcapng_direction dir,
		uint64_t tsc)
{
	struct dp_capture *cap = q->cap;
	struct rte_mbuf *c[CAP_BURST];
	unsigned int nc = 0, put;
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = rte_pcapng_copy(q->port_id, q->queue, pkts[i], cap->mp,
				cap->copy_len, tsc, dir);

		if (unlikely(m == NULL))
			continue;
		stamp(cap, m, tsc);
		c[nc++] = m;
	}
	if (nc < n)
		cnt_add(&q->cnt[ROCE_CAPTURE_C_DROP_NOMBUF], n - nc);
	put = rte_ring_sp_enqueue_burst(q->ring, (void **)c, nc, NULL);
	if (put < nc) {
		cnt_add(&q->cnt[ROCE_CAPTURE_C_DROP_RING], nc - put);
		rte_pktmbuf_free_bulk(c + put, nc - put);
	}
	cnt_add(&q->cnt[ROCE_CAPTURE_C_COPIED], put);
}

static uint16_t
cap_rx(uint16_t port_id, uint16_t queue, struct rte_mbuf **pkts, uint16_t nb, uint16_t max,
		void *arg)
{
	struct cap_q *q = arg;
	uint64_t tsc;
	uint16_t i;

	RTE_SET_USED(port_id);
	RTE_SET_USED(queue);
	RTE_SET_USED(max);
	if (nb == 0 || !__atomic_load_n(&q->cap->taking, __ATOMIC_RELAXED))
		return nb;
	tsc = rte_rdtsc();
	cnt_add(&q->cnt[ROCE_CAPTURE_C_SEEN], nb);
	for (i = 0; i < nb; i += CAP_BURST)
		copy_burst(q, pkts + i, RTE_MIN(nb - i, CAP_BURST), RTE_PCAPNG_DIRECTION_IN, tsc);
	return nb;
}

static uint16_t
cap_tx(uint16_t port_id, uint16_t queue, struct rte_mbuf **pkts, uint16_t nb, void *arg)
{
	struct cap_q *q = arg;
	struct dp_capture *cap = q->cap;
	struct rte_mbuf *fresh[CAP_BURST];
	uint16_t i, n = 0, again = 0;
	uint64_t tsc;

	RTE_SET_USED(port_id);
	RTE_SET_USED(queue);
	if (nb == 0 || !__atomic_load_n(&cap->taking, __ATOMIC_RELAXED))
		return nb;
	tsc = rte_rdtsc();
	for (i = 0; i < nb; i++) {
		struct rte_mbuf *m = pkts[i];

		if (m->ol_flags & cap->txflag) {
			again++;
			continue;
		}
		m->ol_flags |= cap->txflag;
		fresh[n++] = m;
		if (n == CAP_BURST) {
			copy_burst(q, fresh, n, RTE_PCAPNG_DIRECTION_OUT, tsc);
			n = 0;
		}
	}
	if (n != 0)
		copy_burst(q, fresh, n, RTE_PCAPNG_DIRECTION_OUT, tsc);
	cnt_add(&q->cnt[ROCE_CAPTURE_C_SEEN], nb - again);
	if (again != 0)
		cnt_add(&q->cnt[ROCE_CAPTURE_C_TX_REOFFER], again);
	return nb;
}

/* ---- the writer ---- */

static int
end_set(struct dp_capture *cap, enum roce_capture_end end)
{
	uint32_t running = ROCE_CAPTURE_RUNNING;

	return __atomic_compare_exchange_n(&cap->end, &running, end, false, __ATOMIC_ACQ_REL,
			__ATOMIC_ACQUIRE);
}

static void
write_burst(struct dp_capture *cap, struct rte_mbuf **pkts, unsigned int n)
{
	uint64_t written = cap->wcnt[ROCE_CAPTURE_C_WRITTEN], k = n;
	uint64_t count = cap->info.conf.count;
	ssize_t ret;

	if (__atomic_load_n(&cap->end, __ATOMIC_ACQUIRE) == ROCE_CAPTURE_COUNT ||
			__atomic_load_n(&cap->end, __ATOMIC_ACQUIRE) == ROCE_CAPTURE_WRITE_ERROR)
		k = 0;
	else if (count != 0 && k > count - written)
		k = count - written;
	if (k != 0) {
		ret = rte_pcapng_write_packets(cap->png, pkts, (uint16_t)k);
		if (ret < 0) {
			cap->error = rte_errno != 0 ? rte_errno : EIO;
			cnt_add(&cap->wcnt[ROCE_CAPTURE_C_WRITE_ERR], k);
			end_set(cap, ROCE_CAPTURE_WRITE_ERROR);
			__atomic_store_n(&cap->taking, 0, __ATOMIC_RELAXED);
		} else {
			cnt_add(&cap->wcnt[ROCE_CAPTURE_C_WRITTEN], k);
			__atomic_store_n(&cap->bytes, cap->bytes + (uint64_t)ret, __ATOMIC_RELAXED);
			if (count != 0 && written + k == count) {
				end_set(cap, ROCE_CAPTURE_COUNT);
				__atomic_store_n(&cap->taking, 0, __ATOMIC_RELAXED);
			}
		}
	}
	if (k < n)
		cnt_add(&cap->wcnt[ROCE_CAPTURE_C_PAST_COUNT], n - k);
	rte_pktmbuf_free_bulk(pkts, n);
}

static void
port_counts(const struct dp_capture *cap, unsigned int port, uint64_t *seen, uint64_t *drop)
{
	uint32_t i;

	*seen = *drop = 0;
	for (i = 0; i < cap->nb_qs; i++) {
		const struct cap_q *q = &cap->qs[i];

		if (q->port != port)
			continue;
		*seen += __atomic_load_n(&q->cnt[ROCE_CAPTURE_C_SEEN], __ATOMIC_RELAXED);
		*drop += __atomic_load_n(&q->cnt[ROCE_CAPTURE_C_DROP_RING], __ATOMIC_RELAXED) +
			__atomic_load_n(&q->cnt[ROCE_CAPTURE_C_DROP_NOMBUF], __ATOMIC_RELAXED);
	}
}

/* Interface statistics per captured port, then the file closed. */
static void
file_finish(struct dp_capture *cap)
{
	uint64_t now = realtime_ns(), seen, drop;
	unsigned int p;
	ssize_t ret;

	for (p = 0; p < ROCE_DP_MAX_PORTS; p++) {
		if (!(cap->info.conf.ports & (1u << p)))
			continue;
		port_counts(cap, p, &seen, &drop);
		ret = rte_pcapng_write_stats(cap->png, cap->dp->ports[p].port_id, NULL,
				cap->info.start_ns, now, seen, drop);
		if (ret > 0)
			__atomic_store_n(&cap->bytes, cap->bytes + (uint64_t)ret,
					__ATOMIC_RELAXED);
	}
	rte_pcapng_close(cap->png);
	cap->png = NULL;
	cap->fd = -1;
	__atomic_store_n(&cap->end_ns, now, __ATOMIC_RELEASE);
}

/* Move what ring @i holds into its stage, as far as the stage has room. @return copies moved. */
static unsigned int
stage_fill(struct dp_capture *cap, uint32_t i)
{
	struct cap_stage *st = &cap->stage[i];
	unsigned int got = 0, n;

	while (st->n < CAP_STAGE) {
		uint32_t tail = (st->head + st->n) & (CAP_STAGE - 1);
		uint32_t room = RTE_MIN(CAP_STAGE - st->n, CAP_STAGE - tail);

		n = rte_ring_sc_dequeue_burst(cap->qs[i].ring, (void **)&st->m[tail], room, NULL);
		st->n += n;
		got += n;
		if (n < room)
			break;
	}
	return got;
}

/*
 * Write the staged copies stamped up to @until, oldest first across the rings: each ring is
 * in time order (one lcore fills it), so this is a merge. @return copies written.
 */
static unsigned int
stage_merge(struct dp_capture *cap, uint64_t until)
{
	struct rte_mbuf *out[CAP_WRITE_BURST];
	unsigned int n = 0, total = 0;

	for (;;) {
		uint64_t best_ts = until;
		int best = -1;
		uint32_t i;

		for (i = 0; i < cap->nb_qs; i++) {
			const struct cap_stage *st = &cap->stage[i];
			uint64_t ts;

			if (st->n == 0)
				continue;
			ts = stamp_of(st->m[st->head]);
			if (ts <= best_ts) {
				best_ts = ts;
				best = (int)i;
			}
		}
		if (best < 0)
			break;
		{
			struct cap_stage *st = &cap->stage[best];

			out[n++] = st->m[st->head];
			st->head = (st->head + 1) & (CAP_STAGE - 1);
			st->n--;
		}
		if (n == CAP_WRITE_BURST) {
			write_burst(cap, out, n);
			total += n;
			n = 0;
		}
	}
	if (n != 0)
		write_burst(cap, out, n);
	return total + n;
}

static void *
writer_main(void *arg)
{
	struct dp_capture *cap = arg;

	for (;;) {
		int stopping = __atomic_load_n(&cap->stop, __ATOMIC_ACQUIRE);
		uint64_t until = stopping ? UINT64_MAX : tsc_ns(cap, rte_rdtsc()) - CAP_HOLD_NS;
		unsigned int got = 0;
		uint32_t i;

		for (i = 0; i < cap->nb_qs; i++)
			got += stage_fill(cap, i);
		got += stage_merge(cap, until);
		/* Ended by itself: the file is finished at once; what still comes is released
		 * with the capture. */
		if (__atomic_load_n(&cap->end, __ATOMIC_ACQUIRE) != ROCE_CAPTURE_RUNNING &&
				!stopping)
			break;
		if (got == 0) {
			if (stopping)
				break;
			rte_delay_us_sleep(CAP_IDLE_US);
		}
	}
	file_finish(cap);
	return NULL;
}

/* ---- control ---- */

static void
counters_of(const struct dp_capture *cap, uint64_t *cnt)
{
	uint32_t i, c;

	for (c = 0; c < ROCE_CAPTURE_CNT_NUM; c++)
		cnt[c] = __atomic_load_n(&cap->wcnt[c], __ATOMIC_RELAXED);
	for (i = 0; i < cap->nb_qs; i++)
		for (c = 0; c < ROCE_CAPTURE_CNT_NUM; c++)
			cnt[c] += __atomic_load_n(&cap->qs[i].cnt[c], __ATOMIC_RELAXED);
}

static void
info_of(const struct dp_capture *cap, struct roce_capture_info *info)
{
	*info = cap->info;
	info->end = __atomic_load_n(&cap->end, __ATOMIC_ACQUIRE);
	info->end_ns = __atomic_load_n(&cap->end_ns, __ATOMIC_ACQUIRE);
	info->error = info->end == ROCE_CAPTURE_WRITE_ERROR ? cap->error : 0;
	info->bytes = __atomic_load_n(&cap->bytes, __ATOMIC_RELAXED);
	counters_of(cap, info->cnt);
}

static void
callbacks_remove(struct dp_capture *cap)
{
	uint32_t i;
	int removed = 0;

	__atomic_store_n(&cap->taking, 0, __ATOMIC_RELAXED);
	for (i = 0; i < cap->nb_qs; i++) {
		struct cap_q *q = &cap->qs[i];
		int ret;

		if (q->cb == NULL)
			continue;
		ret = q->dir == ROCE_CAPTURE_RX ?
			rte_eth_remove_rx_callback(q->port_id, q->queue, q->cb) :
			rte_eth_remove_tx_callback(q->port_id, q->queue, q->cb);
		if (ret != 0) {
			/* Still linked: leak it rather than free what a burst may run. */
			ROCE_LOG(ERR, "capture: port %u queue %u: cannot remove a callback: %s\n",
					q->port_id, q->queue, strerror(-ret));
			q->cb = NULL;
			continue;
		}
		removed = 1;
	}
	if (!removed)
		return;
	/* No worker is inside a burst that could still run a removed callback. */
	roce_dp_quiesce(cap->dp);
	for (i = 0; i < cap->nb_qs; i++) {
		rte_free((void *)(uintptr_t)cap->qs[i].cb);
		cap->qs[i].cb = NULL;
	}
}

/* Copies the writer did not take (it finished first): not written. */
static void
rings_drain(struct dp_capture *cap)
{
	struct rte_mbuf *pkts[CAP_WRITE_BURST];
	unsigned int n;
	uint32_t i;

	for (i = 0; cap->qs != NULL && i < cap->nb_qs; i++) {
		struct cap_stage *st = cap->stage != NULL ? &cap->stage[i] : NULL;

		while (st != NULL && st->n != 0) {
			rte_pktmbuf_free(st->m[st->head]);
			st->head = (st->head + 1) & (CAP_STAGE - 1);
			st->n--;
			cnt_add(&cap->wcnt[ROCE_CAPTURE_C_PAST_COUNT], 1);
		}
		while ((n = rte_ring_sc_dequeue_burst(cap->qs[i].ring, (void **)pkts,
				CAP_WRITE_BURST, NULL)) != 0) {
			cnt_add(&cap->wcnt[ROCE_CAPTURE_C_PAST_COUNT], n);
			rte_pktmbuf_free_bulk(pkts, n);
		}
	}
}

/* Callbacks removed, the writer done with what the rings hold, the file finished. */
static void
capture_end(struct dp_capture *cap)
{
	callbacks_remove(cap);
	__atomic_store_n(&cap->stop, 1, __ATOMIC_RELEASE);
	if (cap->writer_running)
		pthread_join(cap->writer, NULL);
	cap->writer_running = 0;
	/* Not when it ended by itself: it keeps saying why. */
	end_set(cap, ROCE_CAPTURE_STOPPED);
	rings_drain(cap);
}

static void
capture_free(struct dp_capture *cap)
{
	uint32_t i;

	rings_drain(cap);
	for (i = 0; cap->qs != NULL && i < cap->nb_qs; i++)
		rte_ring_free(cap->qs[i].ring);
	if (cap->png != NULL)
		rte_pcapng_close(cap->png);
	free(cap->stage);
	rte_free(cap->qs);
	rte_mempool_free(cap->mp);
	free(cap);
}

/* Release the current capture (the state's lock held), keeping its state and counters. */
static void
capture_release(struct dp_capture_state *s)
{
	struct dp_capture *cap = s->cur;

	capture_end(cap);
	info_of(cap, &s->last);
	s->has_last = 1;
	roce_counters_add(s->total, s->last.cnt, ROCE_CAPTURE_CNT_NUM);
	s->cur = NULL;
	capture_free(cap);
}

/* Per ring and direction, in port order: rx queues, then tx queues. */
static int
queues_setup(struct dp_capture *cap, unsigned int gen)
{
	const struct roce_capture_conf *c = &cap->info.conf;
	struct roce_dp *dp = cap->dp;
	uint32_t n = 0;
	unsigned int p, d;

	for (p = 0; p < dp->nb_ports; p++)
		if (c->ports & (1u << p))
			n += dp->ports[p].nb_queues * (uint32_t)__builtin_popcount(c->dirs);
	cap->qs = rte_zmalloc("roce_cap_q", sizeof(cap->qs[0]) * n, RTE_CACHE_LINE_SIZE);
	cap->stage = calloc(n, sizeof(cap->stage[0]));
	if (cap->qs == NULL || cap->stage == NULL)
		return -ENOMEM;
	for (p = 0; p < dp->nb_ports; p++) {
		const struct roce_port *port = &dp->ports[p];

		if (!(c->ports & (1u << p)))
			continue;
		for (d = ROCE_CAPTURE_RX; d <= ROCE_CAPTURE_TX; d <<= 1) {
			uint16_t qi;

			if (!(c->dirs & d))
				continue;
			for (qi = 0; qi < port->nb_queues; qi++) {
				struct cap_q *q = &cap->qs[cap->nb_qs];
				char name[RTE_RING_NAMESIZE];

				snprintf(name, sizeof(name), "roce_cap%u_%u%c%u", gen, p,
						d == ROCE_CAPTURE_RX ? 'r' : 't', qi);
				q->ring = rte_ring_create(name, CAP_RING_SIZE,
						rte_eth_dev_socket_id(port->port_id),
						RING_F_SP_ENQ | RING_F_SC_DEQ);
				if (q->ring == NULL)
					return -ENOMEM;
				q->cap = cap;
				q->port_id = port->port_id;
				q->queue = qi;
				q->port = (uint8_t)p;
				q->dir = (uint8_t)d;
				cap->nb_qs++;
			}
		}
	}
	cap->info.nb_rings = cap->nb_qs;
	cap->info.ring_size = CAP_RING_SIZE - 1;
	return 0;
}

/* Copies fit one buffer up to the ports' largest frame: two VLAN tags over the IP MTU. */
static int
pool_setup(struct dp_capture *cap, unsigned int gen)
{
	uint32_t mtu = RTE_ETHER_MTU, frame, len, room, n;
	char name[RTE_MEMPOOL_NAMESIZE];
	unsigned int p;

	for (p = 0; p < cap->dp->nb_ports; p++)
		if (cap->info.conf.ports & (1u << p))
			mtu = RTE_MAX(mtu, (uint32_t)cap->dp->ports[p].mtu);
	frame = mtu + RTE_ETHER_HDR_LEN + 2 * RTE_VLAN_HLEN;
	len = cap->info.conf.snaplen != 0 ? RTE_MIN(cap->info.conf.snaplen, frame) : frame;
	room = RTE_PKTMBUF_HEADROOM + RTE_ALIGN(len, 4) + CAP_COPY_SLACK;
	n = CAP_POOL_BYTES / (room + (uint32_t)sizeof(struct rte_mbuf));

	room = RTE_MIN(room, (uint32_t)UINT16_MAX);
	n = RTE_MAX(RTE_MIN(n, (uint32_t)CAP_POOL_MAX), (uint32_t)CAP_POOL_MIN);
	snprintf(name, sizeof(name), "roce_cap%u", gen);
	cap->mp = rte_pktmbuf_pool_create(name, n, CAP_POOL_CACHE, 0, (uint16_t)room,
			SOCKET_ID_ANY);
	if (cap->mp == NULL) {
		ROCE_LOG(ERR, "capture: no pool of %u mbufs of %u bytes: %s\n", n, room,
				rte_strerror(rte_errno));
		return -ENOMEM;
	}
	cap->info.pool_size = n;
	return 0;
}

static int
file_open(struct dp_capture *cap, const struct roce_capture_conf *c)
{
	struct utsname u;
	char os[sizeof(u.sysname) + sizeof(u.release)];
	int fd = dup(c->fd);
	off_t hdr;

	if (fd < 0)
		return -errno;
	if (uname(&u) == 0)
		snprintf(os, sizeof(os), "%s %s", u.sysname, u.release);
	else
		snprintf(os, sizeof(os), "Linux");
	errno = 0;
	cap->png = rte_pcapng_fdopen(fd, os, NULL, "rocedp", c->comment);
	if (cap->png == NULL) {
		int err = errno != 0 ? errno : EIO;

		close(fd);
		return -err;
	}
	cap->fd = fd;
	hdr = lseek(fd, 0, SEEK_CUR);
	cap->bytes = hdr > 0 ? (uint64_t)hdr : 0;
	return 0;
}

static int
callbacks_add(struct dp_capture *cap)
{
	uint32_t i;

	for (i = 0; i < cap->nb_qs; i++) {
		struct cap_q *q = &cap->qs[i];

		/* First in the rx chain: frames as the PMD gave them, before rx impairment. */
		q->cb = q->dir == ROCE_CAPTURE_RX ?
			rte_eth_add_first_rx_callback(q->port_id, q->queue, cap_rx, q) :
			rte_eth_add_tx_callback(q->port_id, q->queue, cap_tx, q);
		if (q->cb == NULL) {
			int err = rte_errno != 0 ? rte_errno : ENOTSUP;

			ROCE_LOG(ERR, "capture: port %u queue %u: cannot add a callback: %s\n",
					q->port_id, q->queue, rte_strerror(err));
			return -err;
		}
	}
	return 0;
}

static int
txflag_get(uint64_t *flag)
{
	static const struct rte_mbuf_dynflag desc = { .name = "roce_capture_tx_seen" };
	int bit = rte_mbuf_dynflag_register(&desc);

	if (bit < 0)
		return -rte_errno;
	*flag = UINT64_C(1) << bit;
	return 0;
}

static int
conf_check(const struct roce_dp *dp, const struct roce_capture_conf *c)
{
	if (c->fd < 0 || c->ports == 0 || (c->ports >> dp->nb_ports) != 0 || c->dirs == 0 ||
			(c->dirs & ~(ROCE_CAPTURE_RX | ROCE_CAPTURE_TX)) != 0 ||
			c->snaplen > ROCE_CAPTURE_SNAPLEN_MAX)
		return -EINVAL;
	return 0;
}

int
roce_dp_capture_start(struct roce_dp *dp, const struct roce_capture_conf *conf)
{
	struct dp_capture_state *s = dp->capture;
	struct dp_capture *cap;
	int ret;

	ret = conf_check(dp, conf);
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&s->lock);
	if (s->cur != NULL) {
		if (__atomic_load_n(&s->cur->end, __ATOMIC_ACQUIRE) == ROCE_CAPTURE_RUNNING) {
			pthread_mutex_unlock(&s->lock);
			return -EBUSY;
		}
		/* It ended by itself: released now, as stop would. */
		capture_release(s);
	}
	cap = calloc(1, sizeof(*cap));
	if (cap == NULL) {
		pthread_mutex_unlock(&s->lock);
		return -ENOMEM;
	}
	cap->dp = dp;
	cap->fd = -1;
	cap->info.conf = *conf;
	cap->info.conf.fd = -1;
	cap->info.conf.comment = NULL;
	cap->copy_len = conf->snaplen != 0 ? conf->snaplen : UINT32_MAX;
	cap->tsc_hz = rte_get_tsc_hz();
	s->gen++;
	ret = txflag_get(&cap->txflag);
	if (ret == 0)
		ret = pool_setup(cap, s->gen);
	if (ret == 0)
		ret = queues_setup(cap, s->gen);
	if (ret == 0)
		ret = file_open(cap, conf);
	if (ret != 0)
		goto fail;
	cap->base_tsc = rte_rdtsc();
	cap->base_ns = realtime_ns();
	cap->info.start_ns = cap->base_ns;
	cap->taking = 1;
	ret = rte_ctrl_thread_create(&cap->writer, "roce-capture", NULL, writer_main, cap);
	if (ret != 0)
		goto fail;
	cap->writer_running = 1;
	/* The callbacks see the capture whole: rte_eth_add_*_callback publish with a barrier. */
	ret = callbacks_add(cap);
	if (ret != 0) {
		/* Not a capture that ran: nothing of it is kept. */
		capture_end(cap);
		goto fail;
	}
	s->cur = cap;
	s->ran = 1;
	pthread_mutex_unlock(&s->lock);
	ROCE_LOG(INFO, "capture: started (ports 0x%x, %s%s, snap length %u, count %lu)\n",
			conf->ports, conf->dirs & ROCE_CAPTURE_RX ? "rx" : "",
			conf->dirs & ROCE_CAPTURE_TX ? "tx" : "", conf->snaplen,
			(unsigned long)conf->count);
	return 0;
fail:
	capture_free(cap);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int
roce_dp_capture_stop(struct roce_dp *dp, struct roce_capture_info *info)
{
	struct dp_capture_state *s = dp->capture;

	pthread_mutex_lock(&s->lock);
	if (s->cur == NULL) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	capture_release(s);
	if (info != NULL)
		*info = s->last;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int
roce_dp_capture_info(struct roce_dp *dp, struct roce_capture_info *info)
{
	struct dp_capture_state *s = dp->capture;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	if (s->cur != NULL)
		info_of(s->cur, info);
	else if (s->has_last)
		*info = s->last;
	else
		ret = -ENOENT;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int
roce_dp_capture_counters(struct roce_dp *dp, uint64_t cnt[ROCE_CAPTURE_CNT_NUM])
{
	struct dp_capture_state *s = dp->capture;
	int ran;

	memset(cnt, 0, sizeof(uint64_t) * ROCE_CAPTURE_CNT_NUM);
	if (s == NULL)
		return 0;
	pthread_mutex_lock(&s->lock);
	ran = s->ran;
	memcpy(cnt, s->total, sizeof(s->total));
	if (s->cur != NULL) {
		uint64_t cur[ROCE_CAPTURE_CNT_NUM];

		counters_of(s->cur, cur);
		roce_counters_add(cnt, cur, ROCE_CAPTURE_CNT_NUM);
	}
	pthread_mutex_unlock(&s->lock);
	return ran;
}

int
dp_capture_init(struct roce_dp *dp)
{
	struct dp_capture_state *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	dp->capture = s;
	return 0;
}

void
dp_capture_fini(struct roce_dp *dp)
{
	struct dp_capture_state *s = dp->capture;

	if (s == NULL)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->cur != NULL)
		capture_release(s);
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
	dp->capture = NULL;
}
