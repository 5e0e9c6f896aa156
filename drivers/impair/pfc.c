/* SPDX-License-Identifier: BSD-3-Clause */
/* 802.1Qbb PFC frames: see roce_pfc.h. Outside input: nothing is read past @len. */
#include <string.h>

#include "roce_pfc.h"

const uint8_t roce_pfc_dst[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };

/* Offsets in the frame. */
#define OFF_TYPE 12
#define OFF_OPCODE 14
#define OFF_VECTOR 16  /* the reserved octet, then the enable bits at 17 */
#define OFF_TIME 18

static const char *const reason_names[] = {
#define ROCE_PFC_NAME(n, s, d) [ROCE_PFC_BAD_##n] = #s,
	ROCE_PFC_REASONS(ROCE_PFC_NAME)
#undef ROCE_PFC_NAME
};

const char *
roce_pfc_reason_name(enum roce_pfc_result r)
{
	if ((unsigned int)r == ROCE_PFC_OK || (unsigned int)r >= sizeof(reason_names) /
			sizeof(reason_names[0]))
		return NULL;
	return reason_names[r];
}

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

size_t
roce_pfc_build(uint8_t *buf, size_t len, const uint8_t src[6], uint8_t vector,
		const uint16_t quanta[ROCE_PFC_NB_PRIO])
{
	unsigned int i;

	if (len < ROCE_PFC_FRAME_LEN)
		return 0;
	memset(buf, 0, ROCE_PFC_FRAME_LEN);
	memcpy(buf, roce_pfc_dst, 6);
	memcpy(buf + 6, src, 6);
	buf[OFF_TYPE] = ROCE_PFC_ETHERTYPE >> 8;
	buf[OFF_TYPE + 1] = ROCE_PFC_ETHERTYPE & 0xff;
	buf[OFF_OPCODE] = ROCE_PFC_OPCODE >> 8;
	buf[OFF_OPCODE + 1] = ROCE_PFC_OPCODE & 0xff;
	buf[OFF_VECTOR + 1] = vector;
	for (i = 0; i < ROCE_PFC_NB_PRIO; i++) {
		uint16_t q = (vector & (1u << i)) ? quanta[i] : 0;

		buf[OFF_TIME + 2 * i] = (uint8_t)(q >> 8);
		buf[OFF_TIME + 2 * i + 1] = (uint8_t)q;
	}
	return ROCE_PFC_FRAME_LEN;
}

enum roce_pfc_result
roce_pfc_parse(const uint8_t *f, uint32_t len, struct roce_pfc_frame *out)
{
	uint16_t opcode;
	unsigned int i;

	if (!roce_pfc_is_ctrl(f, len))
		return ROCE_PFC_NOT_CTRL;
	/* MAC control frames are exactly the minimum frame (802.3 annex 31A). */
	if (len != ROCE_PFC_FRAME_LEN && len != ROCE_PFC_FRAME_LEN + 4)
		return ROCE_PFC_BAD_LENGTH;
	opcode = get16(f + OFF_OPCODE);
	if (opcode == ROCE_PFC_OPCODE_PAUSE)
		return ROCE_PFC_BAD_LINK_PAUSE;
	if (opcode != ROCE_PFC_OPCODE)
		return ROCE_PFC_BAD_OPCODE;
	if (memcmp(f, roce_pfc_dst, 6) != 0)
		return ROCE_PFC_BAD_DST;
	if (f[OFF_VECTOR + 1] == 0)
		return ROCE_PFC_BAD_ZERO_VECTOR;
	if (out == NULL)
		return ROCE_PFC_OK;
	memcpy(out->src, f + 6, 6);
	out->vector = f[OFF_VECTOR + 1];
	for (i = 0; i < ROCE_PFC_NB_PRIO; i++)
		out->quanta[i] = get16(f + OFF_TIME + 2 * i);
	return ROCE_PFC_OK;
}

void
roce_pfc_dscp_map_default(uint8_t map[64])
{
	unsigned int d;

	for (d = 0; d < 64; d++)
		map[d] = (uint8_t)(d >> 3);
}
