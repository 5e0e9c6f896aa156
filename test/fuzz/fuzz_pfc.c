/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the PFC frame parser (drivers/impair roce_pfc.h) and a port's software
 * PFC (lib/dataplane pfc.c), which take MAC control frames from the wire.
 *
 * Input: records of [time step, 1 byte][length, 1 byte][frame], fed in order to one port's
 * state (software mode, a 1 ms watchdog, the link speed from the first byte). Invariants: what
 * the parser takes is 60 or 64 bytes to 01:80:C2:00:00:01 with opcode 0x0101 and a non-zero
 * vector, and rebuilds to the same bytes; every MAC control frame is counted once, as taken or
 * under one reason; no priority stays paused past the watchdog or longer than 65535 quanta; the
 * time paused never goes down nor past the time gone by; the priority of any frame is 0-7.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roce_dp_pfc.h"
#include "roce_pfc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define WATCHDOG_NS 1000000ull

static const uint64_t speeds[] = { 0, 10, 1000, 10000, 25000, 100000, 400000 };

static void
check_parse(const uint8_t *f, uint32_t len)
{
	struct roce_pfc_frame pf;
	enum roce_pfc_result r = roce_pfc_parse(f, len, &pf);
	uint8_t again[ROCE_PFC_FRAME_LEN], map[64];
	unsigned int i;

	roce_pfc_dscp_map_default(map);
	CHECK(roce_pfc_prio_of(f, len, map) < 8);
	CHECK((r == ROCE_PFC_NOT_CTRL) == !roce_pfc_is_ctrl(f, len));
	CHECK(r == ROCE_PFC_OK || r == ROCE_PFC_NOT_CTRL || roce_pfc_reason_name(r) != NULL);
	if (r != ROCE_PFC_OK)
		return;
	CHECK((len == 60 || len == 64) && pf.vector != 0 && memcmp(f, roce_pfc_dst, 6) == 0);
	CHECK(roce_pfc_build(again, sizeof(again), pf.src, pf.vector, pf.quanta) == 60);
	/* Same bytes but the reserved octet, the times of disabled priorities, the padding. */
	CHECK(memcmp(again, f, 16) == 0 && again[17] == f[17]);
	for (i = 0; i < 8; i++)
		if (pf.vector & (1u << i))
			CHECK(memcmp(again + 18 + 2 * i, f + 18 + 2 * i, 2) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_dp_pfc pp;
	struct roce_dp_pfc_state st;
	uint64_t now = 1000000, start = now, ctrl = 0, link, last_paused = 0, max_pause;
	size_t off = 1;
	unsigned int p, i;

	if (size < 1)
		return 0;
	roce_dp_pfc_init(&pp);
	roce_dp_pfc_configure(&pp, ROCE_DP_PFC_SW, (uint8_t)(data[0] | 1), WATCHDOG_NS, now);
	link = speeds[data[0] % (sizeof(speeds) / sizeof(speeds[0]))];
	roce_dp_pfc_set_link(&pp, link);
	max_pause = roce_pfc_quanta_ns(65535, link != 0 ? link : 100000);
	while (off + 2 <= size) {
		uint32_t len = data[off + 1];
		uint8_t frame[256];

		/* Time steps from 0 to about 1 ms, some far. */
		now += (uint64_t)data[off] * (data[off] & 0x80 ? 100000 : 100);
		off += 2;
		if (len > size - off)
			len = (uint32_t)(size - off);
		memcpy(frame, data + off, len);
		off += len;
		check_parse(frame, len);
		ctrl += roce_pfc_is_ctrl(frame, len);
		roce_dp_pfc_rx(&pp, frame, len, now);
		roce_dp_pfc_read(&pp, now, &st);
		for (p = 0; p < ROCE_PFC_NB_PRIO; p++) {
			CHECK(st.paused_left_ns[p] <= max_pause && st.paused_left_ns[p] <= WATCHDOG_NS);
			CHECK(!(st.paused & (1u << p)) || (roce_dp_pfc_paused(&pp, now) & (1u << p)));
			CHECK(st.paused_ns[p] <= now - start);
		}
		CHECK(st.cnt[ROCE_DP_PFC_C_PAUSED_NS] >= last_paused);
		last_paused = st.cnt[ROCE_DP_PFC_C_PAUSED_NS];
		{
			uint64_t counted = st.cnt[ROCE_DP_PFC_C_RX_FRAMES];

			for (i = ROCE_DP_PFC_C_RX_BAD_LENGTH; i <= ROCE_DP_PFC_C_RX_ZERO_VECTOR; i++)
				counted += st.cnt[i];
			CHECK(counted == ctrl);
		}
	}
	return 0;
}
