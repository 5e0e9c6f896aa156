/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_OPCODE_H
#define ROCE_OPCODE_H

/**
 * @file
 * BTH opcodes and the opcode table.
 *
 * The table tells, for each of the 256 opcodes, which extension headers follow the BTH, where
 * they start, and what kind of packet it is. Transport code tests mask bits, never lists of
 * opcodes. An opcode whose entry has a zero mask is unknown (RD, XRC and reserved codes).
 */

#include <stdint.h>

/** Transport of an opcode: its top three bits. */
enum roce_transport {
	ROCE_TRANSPORT_RC = 0x00,
	ROCE_TRANSPORT_UC = 0x20,
	ROCE_TRANSPORT_RD = 0x40,
	ROCE_TRANSPORT_UD = 0x60,
	ROCE_TRANSPORT_CNP = 0x80,
	ROCE_TRANSPORT_XRC = 0xA0,
	/**
	 * Manufacturer-specific range (IBA reserves 0xC0-0xFF): rocedp's selective-repeat
	 * extension, sent only on QPs whose ends both negotiated it (doc/selective-repeat.md).
	 */
	ROCE_TRANSPORT_SR = 0xC0,
};
#define ROCE_TRANSPORT_MASK 0xE0

/** Operation codes within a transport (IBA table 38). */
enum roce_op {
	ROCE_OP_SEND_FIRST = 0x00,
	ROCE_OP_SEND_MIDDLE = 0x01,
	ROCE_OP_SEND_LAST = 0x02,
	ROCE_OP_SEND_LAST_IMM = 0x03,
	ROCE_OP_SEND_ONLY = 0x04,
	ROCE_OP_SEND_ONLY_IMM = 0x05,
	ROCE_OP_WRITE_FIRST = 0x06,
	ROCE_OP_WRITE_MIDDLE = 0x07,
	ROCE_OP_WRITE_LAST = 0x08,
	ROCE_OP_WRITE_LAST_IMM = 0x09,
	ROCE_OP_WRITE_ONLY = 0x0A,
	ROCE_OP_WRITE_ONLY_IMM = 0x0B,
	ROCE_OP_READ_REQ = 0x0C,
	ROCE_OP_READ_RESP_FIRST = 0x0D,
	ROCE_OP_READ_RESP_MIDDLE = 0x0E,
	ROCE_OP_READ_RESP_LAST = 0x0F,
	ROCE_OP_READ_RESP_ONLY = 0x10,
	ROCE_OP_ACK = 0x11,
	ROCE_OP_ATOMIC_ACK = 0x12,
	ROCE_OP_CMP_SWAP = 0x13,
	ROCE_OP_FETCH_ADD = 0x14,
	ROCE_OP_SEND_LAST_INV = 0x16,
	ROCE_OP_SEND_ONLY_INV = 0x17,
};

/** Full opcode: transport | operation. */
#define ROCE_OPCODE(t, op) ((uint8_t)(ROCE_TRANSPORT_##t | ROCE_OP_##op))
/** The RoCEv2 Congestion Notification Packet. */
#define ROCE_OPCODE_CNP 0x81

/** Extension headers, in the order they follow the BTH on the wire. */
enum roce_hdr {
	ROCE_HDR_DETH,
	ROCE_HDR_RETH,
	ROCE_HDR_ATMETH,
	ROCE_HDR_AETH,
	ROCE_HDR_ATMACK,
	ROCE_HDR_IMMDT,
	ROCE_HDR_IETH,
	ROCE_HDR_CNP,
	ROCE_HDR_SRETH,  /**< selective-repeat extension (manufacturer opcodes only) */
	ROCE_HDR_NUM
};

/** Opcode mask bits: header presence (bit = 1 << enum roce_hdr) ... */
#define ROCE_M_DETH    (1u << ROCE_HDR_DETH)
#define ROCE_M_RETH    (1u << ROCE_HDR_RETH)
#define ROCE_M_ATMETH  (1u << ROCE_HDR_ATMETH)
#define ROCE_M_AETH    (1u << ROCE_HDR_AETH)
#define ROCE_M_ATMACK  (1u << ROCE_HDR_ATMACK)
#define ROCE_M_IMMDT   (1u << ROCE_HDR_IMMDT)
#define ROCE_M_IETH    (1u << ROCE_HDR_IETH)
#define ROCE_M_CNPB    (1u << ROCE_HDR_CNP)
#define ROCE_M_SRETH   (1u << ROCE_HDR_SRETH)
/* ... and packet class. */
#define ROCE_M_REQ     (1u << 9)  /**< requester to responder */
#define ROCE_M_RESP    (1u << 10) /**< responder to requester (ACK, READ response, atomic ACK) */
#define ROCE_M_SEND    (1u << 11)
#define ROCE_M_WRITE   (1u << 12)
#define ROCE_M_READ    (1u << 13) /**< READ request or READ response */
#define ROCE_M_ATOMIC  (1u << 14) /**< atomic request or atomic ACK */
#define ROCE_M_FIRST   (1u << 15)
#define ROCE_M_MIDDLE  (1u << 16)
#define ROCE_M_LAST    (1u << 17)
#define ROCE_M_ONLY    (ROCE_M_FIRST | ROCE_M_LAST)
#define ROCE_M_IMM     (1u << 18) /**< carries immediate data */
#define ROCE_M_INV     (1u << 19) /**< carries an rkey to invalidate */
#define ROCE_M_PAYLOAD (1u << 20) /**< may carry payload; without it the payload must be empty */
#define ROCE_M_RWR     (1u << 21) /**< consumes a receive WQE at the responder */
#define ROCE_M_COMP    (1u << 22) /**< completes a message at the responder */
#define ROCE_M_CNP     (1u << 23) /**< congestion notification */
/** Selective-repeat extension opcode (ROCE_TRANSPORT_SR): only on QPs that negotiated it. */
#define ROCE_M_SR      (1u << 24)

/** What the table knows of one opcode. */
struct roce_opcode_info {
	const char *name;              /**< e.g. "RC_SEND_FIRST"; NULL when unknown */
	uint32_t mask;                 /**< ROCE_M_* bits; 0 when unknown */
	uint8_t length;                /**< BTH plus extension headers, in bytes */
	uint8_t offset[ROCE_HDR_NUM];  /**< offset of each present header from the BTH */
};

/** The opcode table, indexed by BTH opcode. */
extern const struct roce_opcode_info roce_opcode_info[256];

/** Wire length of each extension header, indexed by enum roce_hdr. */
extern const uint8_t roce_hdr_len[ROCE_HDR_NUM];

/**
 * Name of an opcode.
 *
 * @param opcode
 *   BTH opcode.
 * @return
 *   The table name, or "UNKNOWN".
 */
const char *roce_opcode_name(uint8_t opcode);

#endif /* ROCE_OPCODE_H */
