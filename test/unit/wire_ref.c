/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>

#include <rte_common.h>
#include <string.h>

#include "wire_ref.h"

#define BTH_LEN 12
#define UDP_LEN 8

#define F(x) REF_##x
#define H(x) ROCE_M_##x
#define OP(code, name, fam, pos, hdrs) { code, name, F(fam), F(pos), hdrs }

/* IBA table 38; UD adds the DETH, the CNP (annex A17.9.3) carries 16 reserved bytes. */
const struct ref_op ref_ops[] = {
	OP(0x00, "RC_SEND_FIRST", SEND, FIRST, 0),
	OP(0x01, "RC_SEND_MIDDLE", SEND, MIDDLE, 0),
	OP(0x02, "RC_SEND_LAST", SEND, LAST, 0),
	OP(0x03, "RC_SEND_LAST_IMM", SEND, LAST, H(IMMDT)),
	OP(0x04, "RC_SEND_ONLY", SEND, ONLY, 0),
	OP(0x05, "RC_SEND_ONLY_IMM", SEND, ONLY, H(IMMDT)),
	OP(0x06, "RC_WRITE_FIRST", WRITE, FIRST, H(RETH)),
	OP(0x07, "RC_WRITE_MIDDLE", WRITE, MIDDLE, 0),
	OP(0x08, "RC_WRITE_LAST", WRITE, LAST, 0),
	OP(0x09, "RC_WRITE_LAST_IMM", WRITE, LAST, H(IMMDT)),
	OP(0x0A, "RC_WRITE_ONLY", WRITE, ONLY, H(RETH)),
	OP(0x0B, "RC_WRITE_ONLY_IMM", WRITE, ONLY, H(RETH) | H(IMMDT)),
	OP(0x0C, "RC_READ_REQ", READ_REQ, ONLY, H(RETH)),
	OP(0x0D, "RC_READ_RESP_FIRST", READ_RESP, FIRST, H(AETH)),
	OP(0x0E, "RC_READ_RESP_MIDDLE", READ_RESP, MIDDLE, 0),
	OP(0x0F, "RC_READ_RESP_LAST", READ_RESP, LAST, H(AETH)),
	OP(0x10, "RC_READ_RESP_ONLY", READ_RESP, ONLY, H(AETH)),
	OP(0x11, "RC_ACK", ACK, ONLY, H(AETH)),
	OP(0x12, "RC_ATOMIC_ACK", ATOMIC_ACK, ONLY, H(AETH) | H(ATMACK)),
	OP(0x13, "RC_CMP_SWAP", ATOMIC, ONLY, H(ATMETH)),
	OP(0x14, "RC_FETCH_ADD", ATOMIC, ONLY, H(ATMETH)),
	OP(0x16, "RC_SEND_LAST_INV", SEND, LAST, H(IETH)),
	OP(0x17, "RC_SEND_ONLY_INV", SEND, ONLY, H(IETH)),
	OP(0x20, "UC_SEND_FIRST", SEND, FIRST, 0),
	OP(0x21, "UC_SEND_MIDDLE", SEND, MIDDLE, 0),
	OP(0x22, "UC_SEND_LAST", SEND, LAST, 0),
	OP(0x23, "UC_SEND_LAST_IMM", SEND, LAST, H(IMMDT)),
	OP(0x24, "UC_SEND_ONLY", SEND, ONLY, 0),
	OP(0x25, "UC_SEND_ONLY_IMM", SEND, ONLY, H(IMMDT)),
	OP(0x26, "UC_WRITE_FIRST", WRITE, FIRST, H(RETH)),
	OP(0x27, "UC_WRITE_MIDDLE", WRITE, MIDDLE, 0),
	OP(0x28, "UC_WRITE_LAST", WRITE, LAST, 0),
	OP(0x29, "UC_WRITE_LAST_IMM", WRITE, LAST, H(IMMDT)),
	OP(0x2A, "UC_WRITE_ONLY", WRITE, ONLY, H(RETH)),
	OP(0x2B, "UC_WRITE_ONLY_IMM", WRITE, ONLY, H(RETH) | H(IMMDT)),
	OP(0x64, "UD_SEND_ONLY", SEND, ONLY, H(DETH)),
	OP(0x65, "UD_SEND_ONLY_IMM", SEND, ONLY, H(DETH) | H(IMMDT)),
	OP(0x81, "CNP", CNP, NONE, H(CNPB)),
	/* rocedp selective repeat (doc/selective-repeat.md): SRETH everywhere, RETH on every
	 * WRITE, a SACK bitmap as the SR ACK's payload.
	 */
	OP(0xC0, "SR_SEND_FIRST", SR_SEND, FIRST, H(SRETH)),
	OP(0xC1, "SR_SEND_MIDDLE", SR_SEND, MIDDLE, H(SRETH)),
	OP(0xC2, "SR_SEND_LAST", SR_SEND, LAST, H(SRETH)),
	OP(0xC3, "SR_SEND_LAST_IMM", SR_SEND, LAST, H(IMMDT) | H(SRETH)),
	OP(0xC4, "SR_SEND_ONLY", SR_SEND, ONLY, H(SRETH)),
	OP(0xC5, "SR_SEND_ONLY_IMM", SR_SEND, ONLY, H(IMMDT) | H(SRETH)),
	OP(0xC6, "SR_WRITE_FIRST", SR_WRITE, FIRST, H(RETH) | H(SRETH)),
	OP(0xC7, "SR_WRITE_MIDDLE", SR_WRITE, MIDDLE, H(RETH) | H(SRETH)),
	OP(0xC8, "SR_WRITE_LAST", SR_WRITE, LAST, H(RETH) | H(SRETH)),
	OP(0xC9, "SR_WRITE_LAST_IMM", SR_WRITE, LAST, H(RETH) | H(IMMDT) | H(SRETH)),
	OP(0xCA, "SR_WRITE_ONLY", SR_WRITE, ONLY, H(RETH) | H(SRETH)),
	OP(0xCB, "SR_WRITE_ONLY_IMM", SR_WRITE, ONLY, H(RETH) | H(IMMDT) | H(SRETH)),
	OP(0xD1, "SR_ACK", SR_ACK, ONLY, H(AETH)),
	OP(0xD6, "SR_SEND_LAST_INV", SR_SEND, LAST, H(IETH) | H(SRETH)),
	OP(0xD7, "SR_SEND_ONLY_INV", SR_SEND, ONLY, H(IETH) | H(SRETH)),
};
const unsigned int ref_nb_ops = sizeof(ref_ops) / sizeof(ref_ops[0]);

#undef OP
#undef H
#undef F

const struct ref_op *
ref_op(uint8_t opcode)
{
	unsigned int i;

	for (i = 0; i < ref_nb_ops; i++)
		if (ref_ops[i].opcode == opcode)
			return &ref_ops[i];
	return NULL;
}

/* Class bits of each family; position, IMM/INV and completion are added by ref_mask(). */
static const uint32_t family_mask[] = {
	[REF_SEND] = ROCE_M_REQ | ROCE_M_SEND | ROCE_M_PAYLOAD | ROCE_M_RWR,
	[REF_WRITE] = ROCE_M_REQ | ROCE_M_WRITE | ROCE_M_PAYLOAD,
	[REF_READ_REQ] = ROCE_M_REQ | ROCE_M_READ,
	[REF_READ_RESP] = ROCE_M_RESP | ROCE_M_READ | ROCE_M_PAYLOAD,
	[REF_ACK] = ROCE_M_RESP,
	[REF_ATOMIC_ACK] = ROCE_M_RESP | ROCE_M_ATOMIC,
	[REF_ATOMIC] = ROCE_M_REQ | ROCE_M_ATOMIC,
	[REF_CNP] = ROCE_M_CNP,
	[REF_SR_SEND] = ROCE_M_REQ | ROCE_M_SEND | ROCE_M_PAYLOAD | ROCE_M_RWR | ROCE_M_SR,
	[REF_SR_WRITE] = ROCE_M_REQ | ROCE_M_WRITE | ROCE_M_PAYLOAD | ROCE_M_SR,
	[REF_SR_ACK] = ROCE_M_RESP | ROCE_M_PAYLOAD | ROCE_M_SR,
};

static const uint32_t pos_mask[] = {
	[REF_NONE] = 0,
	[REF_FIRST] = ROCE_M_FIRST,
	[REF_MIDDLE] = ROCE_M_MIDDLE,
	[REF_LAST] = ROCE_M_LAST,
	[REF_ONLY] = ROCE_M_FIRST | ROCE_M_LAST,
};

uint32_t
ref_mask(const struct ref_op *op)
{
	uint32_t m = op->hdrs | family_mask[op->family] | pos_mask[op->pos];

	if (op->hdrs & ROCE_M_IMMDT)
		m |= ROCE_M_IMM;
	if (op->hdrs & ROCE_M_IETH)
		m |= ROCE_M_INV;
	/* A WRITE with immediate consumes a receive WQE, like a SEND (IBA 9.4.3). */
	if ((op->family == REF_WRITE || op->family == REF_SR_WRITE) && (op->hdrs & ROCE_M_IMMDT))
		m |= ROCE_M_RWR;
	/* The last packet of a message that consumed a receive WQE completes it. */
	if ((m & ROCE_M_RWR) && (m & ROCE_M_LAST))
		m |= ROCE_M_COMP;
	return m;
}

/* Wire order after the BTH (IBA 9.2: RDETH, DETH, RETH, AtomicETH, AETH, AtomicAckETH,
 * ImmDt, IETH) and each header's size.
 */
static const struct {
	enum roce_hdr hdr;
	uint8_t size;
} wire_order[] = {
	{ ROCE_HDR_DETH, 8 },
	{ ROCE_HDR_RETH, 16 },
	{ ROCE_HDR_ATMETH, 28 },
	{ ROCE_HDR_AETH, 4 },
	{ ROCE_HDR_ATMACK, 8 },
	{ ROCE_HDR_IMMDT, 4 },
	{ ROCE_HDR_IETH, 4 },
	{ ROCE_HDR_CNP, 16 },
	{ ROCE_HDR_SRETH, 8 },
};

uint32_t
ref_hdr_size(enum roce_hdr h)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(wire_order); i++)
		if (wire_order[i].hdr == h)
			return wire_order[i].size;
	return 0;
}

int
ref_hdr_off(uint32_t hdrs, enum roce_hdr h)
{
	uint32_t off = BTH_LEN;
	unsigned int i;

	if (!(hdrs & 1u << h))
		return -1;
	for (i = 0; wire_order[i].hdr != h; i++)
		if (hdrs & 1u << wire_order[i].hdr)
			off += wire_order[i].size;
	return off;
}

uint32_t
ref_hdrs_len(uint32_t hdrs)
{
	uint32_t len = BTH_LEN;
	unsigned int i;

	for (i = 0; i < RTE_DIM(wire_order); i++)
		if (hdrs & 1u << wire_order[i].hdr)
			len += wire_order[i].size;
	return len;
}

uint32_t
ref_crc32(uint32_t crc, const void *buf, size_t len)
{
	static uint32_t table[256];
	const uint8_t *p = buf;
	size_t i;

	if (table[1] == 0) {
		for (i = 0; i < 256; i++) {
			uint32_t c = i;
			int k;

			for (k = 0; k < 8; k++)
				c = c & 1 ? 0xEDB88320u ^ c >> 1 : c >> 1;
			table[i] = c;
		}
	}
	crc = ~crc;
	for (i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xFF] ^ crc >> 8;
	return ~crc;
}

/* Byte offsets of the variant fields (A17.3.3), set to ones before the CRC. */
static const uint8_t ip4_variant[] = { 1, 8, 10, 11 };     /* TOS, TTL, checksum */
static const uint8_t ip6_variant[] = { 1, 2, 3, 7 };       /* TC/flow label, hop limit */

uint32_t
ref_icrc(const uint8_t *l3, uint32_t len, int ipv6)
{
	uint32_t iplen = ipv6 ? 40 : 20;
	const uint8_t *var = ipv6 ? ip6_variant : ip4_variant;
	unsigned int i, nvar = ipv6 ? sizeof(ip6_variant) : sizeof(ip4_variant);
	uint8_t *buf = malloc(8 + len);
	uint32_t crc;

	if (buf == NULL)
		abort();
	/* 8 bytes of ones stand in for the LRH, then the packet with variant fields masked. */
	memset(buf, 0xFF, 8);
	memcpy(buf + 8, l3, len);
	for (i = 0; i < nvar; i++)
		buf[8 + var[i]] = 0xFF;
	if (ipv6)
		buf[8] |= 0x0F;                    /* traffic class, high nibble */
	buf[8 + iplen + 6] = 0xFF;                 /* UDP checksum */
	buf[8 + iplen + 7] = 0xFF;
	buf[8 + iplen + UDP_LEN + 4] = 0xFF;       /* BTH FECN, BECN, resv6 */
	crc = ref_crc32(0, buf, 8 + len);
	free(buf);
	return crc;
}
