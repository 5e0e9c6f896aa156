/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_PFC_H
#define ROCE_PFC_H

/**
 * @file
 * IEEE 802.1Qbb priority-based flow control frames: building, parsing (outside input: every
 * field checked, a named reason for each refusal) and the priority a frame travels at as PFC
 * sees it (the outer VLAN tag's PCP, else the IP DSCP through a DSCP -> priority map).
 *
 * A PFC frame is a MAC control frame: destination 01:80:C2:00:00:01, EtherType 0x8808,
 * opcode 0x0101, a priority-enable vector (two octets: the first reserved, the second one bit
 * per priority), eight 16-bit pause times (time[0] for priority 0 first) in quanta of 512 bit
 * times at the link's speed, zero padding to the 60-byte minimum frame (64 with the FCS).
 * A time of 0 for an enabled priority resumes it at once.
 *
 * No state, no mbufs, no EAL: used by the impairment (the frames its bottleneck sends), by
 * the dataplane (the frames it honours) and by their tests and fuzz target.
 */

#include <stdint.h>
#include <stddef.h>

/** Priorities (802.1p classes) a PFC frame covers. */
#define ROCE_PFC_NB_PRIO 8
/** MAC control EtherType. */
#define ROCE_PFC_ETHERTYPE 0x8808
/** MAC control opcode of PFC ("Class Based Flow Control"). */
#define ROCE_PFC_OPCODE 0x0101
/** MAC control opcode of 802.3x PAUSE (link level, every priority at once). */
#define ROCE_PFC_OPCODE_PAUSE 0x0001
/** A PFC frame without its FCS (the minimum Ethernet frame). */
#define ROCE_PFC_FRAME_LEN 60
/** Bytes that carry something: addresses, EtherType, opcode, vector, eight times. */
#define ROCE_PFC_CONTENT_LEN 34
/** Bit times in one pause quantum. */
#define ROCE_PFC_QUANTUM_BITS 512

/** The destination of every PFC frame (a reserved, non-forwarded multicast address). */
extern const uint8_t roce_pfc_dst[6];

/** A PFC frame's content. */
struct roce_pfc_frame {
	uint8_t src[6];                      /**< source MAC */
	uint8_t vector;                      /**< bit i: time[i] applies to priority i */
	uint16_t quanta[ROCE_PFC_NB_PRIO];   /**< pause times, host order */
};

/**
 * Why a frame was not taken as PFC. ROCE_PFC_OK and ROCE_PFC_NOT_CTRL (not a MAC control
 * frame at all: none of PFC's business) are not counted; the others are, under their names.
 */
#define ROCE_PFC_REASONS(X) \
	X(LENGTH, length, "MAC control frames of another length than 60 bytes (64 with the FCS)") \
	X(DST, dst, "MAC control frames not sent to 01:80:C2:00:00:01") \
	X(OPCODE, opcode, "MAC control frames with an opcode other than PFC (0x0101) or PAUSE") \
	X(LINK_PAUSE, link_pause, "802.3x PAUSE frames (opcode 0x0001): link-level flow " \
		"control, not honoured") \
	X(ZERO_VECTOR, zero_vector, "PFC frames whose priority-enable vector names no priority")

/** Parse results: 0, then the counted reasons, then NOT_CTRL. */
enum roce_pfc_result {
	ROCE_PFC_OK = 0,
#define ROCE_PFC_ENUM(n, s, d) ROCE_PFC_BAD_##n,
	ROCE_PFC_REASONS(ROCE_PFC_ENUM)
#undef ROCE_PFC_ENUM
	ROCE_PFC_NOT_CTRL,
};

/** Counted reasons: ROCE_PFC_BAD_LENGTH .. ROCE_PFC_BAD_ZERO_VECTOR. */
#define ROCE_PFC_NB_REASONS (ROCE_PFC_NOT_CTRL - 1)

/** @return the reason's short name ("zero_vector"), or NULL for OK, NOT_CTRL and others. */
const char *roce_pfc_reason_name(enum roce_pfc_result r);

/**
 * Build a PFC frame.
 *
 * @param buf
 *   At least ROCE_PFC_FRAME_LEN bytes.
 * @param len
 *   Size of @p buf.
 * @param src
 *   Source MAC (6 bytes).
 * @param vector
 *   Priorities the frame speaks for.
 * @param quanta
 *   Pause time per priority, in quanta; those of priorities not in @p vector are sent as 0.
 * @return
 *   ROCE_PFC_FRAME_LEN, or 0 when @p buf is too small.
 */
size_t roce_pfc_build(uint8_t *buf, size_t len, const uint8_t src[6], uint8_t vector,
		const uint16_t quanta[ROCE_PFC_NB_PRIO]);

/**
 * @return whether @p frame (of @p len bytes) is a MAC control frame (EtherType 0x8808, no
 *   VLAN tag): the test a receive path makes before roce_pfc_parse().
 */
static inline int
roce_pfc_is_ctrl(const uint8_t *frame, uint32_t len)
{
	return len >= 14 && frame[12] == (ROCE_PFC_ETHERTYPE >> 8) &&
		frame[13] == (ROCE_PFC_ETHERTYPE & 0xff);
}

/**
 * Parse a received frame.
 *
 * @param frame
 *   The frame from its destination MAC on (outside input: any bytes).
 * @param len
 *   Its length: 60, or 64 when the port keeps the FCS (the FCS is not checked here).
 * @param out
 *   Filled on ROCE_PFC_OK (may be NULL).
 * @return
 *   ROCE_PFC_OK, a ROCE_PFC_BAD_* reason, or ROCE_PFC_NOT_CTRL. Reserved bits (the vector's
 *   first octet) are ignored, as 802.1Qbb says.
 */
enum roce_pfc_result roce_pfc_parse(const uint8_t *frame, uint32_t len,
		struct roce_pfc_frame *out);

/**
 * @return the duration of @p quanta pause quanta at @p link_mbps (Mb/s), in ns, rounded up;
 *   0 for a link speed of 0.
 */
static inline uint64_t
roce_pfc_quanta_ns(uint32_t quanta, uint64_t link_mbps)
{
	if (link_mbps == 0)
		return 0;
	/* One bit time is 1000 / link_mbps ns. */
	return ((uint64_t)quanta * ROCE_PFC_QUANTUM_BITS * 1000 + link_mbps - 1) / link_mbps;
}

/** Fill @p map with the default DSCP -> priority map, DSCP / 8 (as mlx5 with trust dscp). */
void roce_pfc_dscp_map_default(uint8_t map[64]);

/**
 * The priority a frame travels at, as PFC and a switch's queues see it: the PCP of its outer
 * VLAN tag if it has one, else its IPv4 or IPv6 DSCP through @p dscp2prio, else 0 (ARP,
 * anything else untagged, and frames too short to tell).
 *
 * @param frame
 *   The frame from its destination MAC on.
 * @param len
 *   Bytes readable at @p frame.
 * @param dscp2prio
 *   64 entries, each 0-7.
 * @return
 *   0-7.
 */
static inline unsigned int
roce_pfc_prio_of(const uint8_t *frame, uint32_t len, const uint8_t *dscp2prio)
{
	unsigned int type;

	if (len < 14)
		return 0;
	type = (unsigned int)frame[12] << 8 | frame[13];
	if (type == 0x8100 || type == 0x88a8)
		return len >= 15 ? frame[14] >> 5 : 0;
	if (type == 0x0800 && len >= 16 && (frame[14] >> 4) == 4)
		return dscp2prio[frame[15] >> 2] & 7;
	if (type == 0x86dd && len >= 16 && (frame[14] >> 4) == 6)
		return dscp2prio[((frame[14] & 0xf) << 2 | frame[15] >> 6)] & 7;
	return 0;
}

#endif /* ROCE_PFC_H */
