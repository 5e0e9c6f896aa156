/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef WIRE_REF_H
#define WIRE_REF_H

/*
 * A reference model of the RoCEv2 wire format, written from IBA vol. 1 ch. 9 (table 38) and
 * annex A17 apart from lib/wire: the tests compare the library with something that shares no
 * code with it. Only the ROCE_M_* and ROCE_HDR_* names are borrowed.
 */

#include <stddef.h>
#include <stdint.h>

#include "roce_opcode.h"

/** What an operation does (IBA table 38). */
enum ref_family {
	REF_SEND,
	REF_WRITE,
	REF_READ_REQ,
	REF_READ_RESP,
	REF_ACK,
	REF_ATOMIC_ACK,
	REF_ATOMIC,
	REF_CNP,
	REF_SR_SEND,     /**< rocedp selective repeat (manufacturer opcodes 0xC0-0xDF) */
	REF_SR_WRITE,
	REF_SR_ACK,
};

/** Where a packet sits in its message. */
enum ref_pos {
	REF_NONE,
	REF_FIRST,
	REF_MIDDLE,
	REF_LAST,
	REF_ONLY,
};

/** The facts of one opcode. */
struct ref_op {
	uint8_t opcode;
	const char *name;
	uint8_t family;  /**< enum ref_family */
	uint8_t pos;     /**< enum ref_pos */
	uint32_t hdrs;   /**< extension headers, as ROCE_M_<header> bits */
};

/** Every opcode RoCEv2 peers send (RC, UC, UD, CNP), in opcode order. */
extern const struct ref_op ref_ops[];
extern const unsigned int ref_nb_ops;

/** @return the facts of @p opcode, or NULL when it is not in ref_ops. */
const struct ref_op *ref_op(uint8_t opcode);

/** @return the opcode mask the library should have for @p op (headers and class bits). */
uint32_t ref_mask(const struct ref_op *op);

/** @return BTH plus the extension headers of @p hdrs, in bytes. */
uint32_t ref_hdrs_len(uint32_t hdrs);

/** @return the offset of header @p h from the BTH, in wire order, or -1 when absent. */
int ref_hdr_off(uint32_t hdrs, enum roce_hdr h);

/** @return the wire length of header @p h. */
uint32_t ref_hdr_size(enum roce_hdr h);

/** zlib-compatible CRC-32 (reflected 0xEDB88320), continuing from @p crc (0 to start). */
uint32_t ref_crc32(uint32_t crc, const void *buf, size_t len);

/**
 * ICRC of a contiguous packet from its IP header.
 *
 * @param l3
 *   IPv4 (IHL 5) or IPv6 header.
 * @param len
 *   Bytes from @p l3 up to the ICRC, exclusive.
 * @param ipv6
 *   Non-zero for IPv6.
 * @return
 *   The CRC, as the four little-endian ICRC bytes on the wire read.
 */
uint32_t ref_icrc(const uint8_t *l3, uint32_t len, int ipv6);

#endif /* WIRE_REF_H */
