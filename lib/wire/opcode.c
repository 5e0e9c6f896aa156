/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce_hdr.h"
#include "roce_opcode.h"

#define BTH_LEN 12

/* Length of header h when mask m has it. */
#define HLEN_DETH(m)   (((m) & ROCE_M_DETH) ? 8 : 0)
#define HLEN_RETH(m)   (((m) & ROCE_M_RETH) ? 16 : 0)
#define HLEN_ATMETH(m) (((m) & ROCE_M_ATMETH) ? 28 : 0)
#define HLEN_AETH(m)   (((m) & ROCE_M_AETH) ? 4 : 0)
#define HLEN_ATMACK(m) (((m) & ROCE_M_ATMACK) ? 8 : 0)
#define HLEN_IMMDT(m)  (((m) & ROCE_M_IMMDT) ? 4 : 0)
#define HLEN_IETH(m)   (((m) & ROCE_M_IETH) ? 4 : 0)
#define HLEN_CNP(m)    (((m) & ROCE_M_CNPB) ? 16 : 0)
#define HLEN_SRETH(m)  (((m) & ROCE_M_SRETH) ? 8 : 0)

/* Offsets follow the wire order of enum roce_hdr: each is the sum of those before it. */
#define OFF_DETH(m)   BTH_LEN
#define OFF_RETH(m)   (OFF_DETH(m) + HLEN_DETH(m))
#define OFF_ATMETH(m) (OFF_RETH(m) + HLEN_RETH(m))
#define OFF_AETH(m)   (OFF_ATMETH(m) + HLEN_ATMETH(m))
#define OFF_ATMACK(m) (OFF_AETH(m) + HLEN_AETH(m))
#define OFF_IMMDT(m)  (OFF_ATMACK(m) + HLEN_ATMACK(m))
#define OFF_IETH(m)   (OFF_IMMDT(m) + HLEN_IMMDT(m))
#define OFF_CNP(m)    (OFF_IETH(m) + HLEN_IETH(m))
#define OFF_SRETH(m)  (OFF_CNP(m) + HLEN_CNP(m))
#define TOTAL_LEN(m)  (OFF_SRETH(m) + HLEN_SRETH(m))

#define OP(t, op, m) [ROCE_OPCODE(t, op)] = { \
	.name = #t "_" #op, \
	.mask = (m), \
	.length = TOTAL_LEN(m), \
	.offset = { \
		[ROCE_HDR_DETH] = OFF_DETH(m), [ROCE_HDR_RETH] = OFF_RETH(m), \
		[ROCE_HDR_ATMETH] = OFF_ATMETH(m), [ROCE_HDR_AETH] = OFF_AETH(m), \
		[ROCE_HDR_ATMACK] = OFF_ATMACK(m), [ROCE_HDR_IMMDT] = OFF_IMMDT(m), \
		[ROCE_HDR_IETH] = OFF_IETH(m), [ROCE_HDR_CNP] = OFF_CNP(m), \
		[ROCE_HDR_SRETH] = OFF_SRETH(m), \
	}, \
}

/* Mask shorthands for the SEND and WRITE families, shared by RC and UC. */
#define SND (ROCE_M_REQ | ROCE_M_SEND | ROCE_M_PAYLOAD | ROCE_M_RWR)
#define WR  (ROCE_M_REQ | ROCE_M_WRITE | ROCE_M_PAYLOAD)
#define RRS (ROCE_M_RESP | ROCE_M_READ | ROCE_M_PAYLOAD)
#define IMM (ROCE_M_IMM | ROCE_M_IMMDT)
#define INV (ROCE_M_INV | ROCE_M_IETH)
#define END (ROCE_M_LAST | ROCE_M_COMP)
#define ONE (ROCE_M_ONLY | ROCE_M_COMP)

/* SEND and WRITE opcodes exist in RC and UC alike. */
#define SEND_WRITE_OPS(t) \
	OP(t, SEND_FIRST, SND | ROCE_M_FIRST), \
	OP(t, SEND_MIDDLE, SND | ROCE_M_MIDDLE), \
	OP(t, SEND_LAST, SND | END), \
	OP(t, SEND_LAST_IMM, SND | END | IMM), \
	OP(t, SEND_ONLY, SND | ONE), \
	OP(t, SEND_ONLY_IMM, SND | ONE | IMM), \
	OP(t, WRITE_FIRST, WR | ROCE_M_FIRST | ROCE_M_RETH), \
	OP(t, WRITE_MIDDLE, WR | ROCE_M_MIDDLE), \
	OP(t, WRITE_LAST, WR | ROCE_M_LAST), \
	OP(t, WRITE_LAST_IMM, WR | END | IMM | ROCE_M_RWR), \
	OP(t, WRITE_ONLY, WR | ROCE_M_ONLY | ROCE_M_RETH), \
	OP(t, WRITE_ONLY_IMM, WR | ONE | IMM | ROCE_M_RETH | ROCE_M_RWR)

/*
 * Selective repeat (doc/selective-repeat.md): SEND and WRITE as in RC, each packet with an
 * SRETH (receive WQE number, byte offset) and every WRITE packet with the RETH, so any packet
 * can be placed on its own; the SR ACK carries a SACK bitmap as payload.
 */
#define SRS (SND | ROCE_M_SR | ROCE_M_SRETH)
#define SRW (WR | ROCE_M_SR | ROCE_M_SRETH | ROCE_M_RETH)

const struct roce_opcode_info roce_opcode_info[256] = {
	SEND_WRITE_OPS(RC),
	OP(RC, READ_REQ, ROCE_M_REQ | ROCE_M_READ | ROCE_M_ONLY | ROCE_M_RETH),
	OP(RC, READ_RESP_FIRST, RRS | ROCE_M_FIRST | ROCE_M_AETH),
	OP(RC, READ_RESP_MIDDLE, RRS | ROCE_M_MIDDLE),
	OP(RC, READ_RESP_LAST, RRS | ROCE_M_LAST | ROCE_M_AETH),
	OP(RC, READ_RESP_ONLY, RRS | ROCE_M_ONLY | ROCE_M_AETH),
	OP(RC, ACK, ROCE_M_RESP | ROCE_M_ONLY | ROCE_M_AETH),
	OP(RC, ATOMIC_ACK, ROCE_M_RESP | ROCE_M_ATOMIC | ROCE_M_ONLY | ROCE_M_AETH |
	   ROCE_M_ATMACK),
	OP(RC, CMP_SWAP, ROCE_M_REQ | ROCE_M_ATOMIC | ROCE_M_ONLY | ROCE_M_ATMETH),
	OP(RC, FETCH_ADD, ROCE_M_REQ | ROCE_M_ATOMIC | ROCE_M_ONLY | ROCE_M_ATMETH),
	OP(RC, SEND_LAST_INV, SND | END | INV),
	OP(RC, SEND_ONLY_INV, SND | ONE | INV),
	SEND_WRITE_OPS(UC),
	OP(UD, SEND_ONLY, SND | ONE | ROCE_M_DETH),
	OP(UD, SEND_ONLY_IMM, SND | ONE | IMM | ROCE_M_DETH),
	OP(SR, SEND_FIRST, SRS | ROCE_M_FIRST),
	OP(SR, SEND_MIDDLE, SRS | ROCE_M_MIDDLE),
	OP(SR, SEND_LAST, SRS | END),
	OP(SR, SEND_LAST_IMM, SRS | END | IMM),
	OP(SR, SEND_ONLY, SRS | ONE),
	OP(SR, SEND_ONLY_IMM, SRS | ONE | IMM),
	OP(SR, WRITE_FIRST, SRW | ROCE_M_FIRST),
	OP(SR, WRITE_MIDDLE, SRW | ROCE_M_MIDDLE),
	OP(SR, WRITE_LAST, SRW | ROCE_M_LAST),
	OP(SR, WRITE_LAST_IMM, SRW | END | IMM | ROCE_M_RWR),
	OP(SR, WRITE_ONLY, SRW | ROCE_M_ONLY),
	OP(SR, WRITE_ONLY_IMM, SRW | ONE | IMM | ROCE_M_RWR),
	OP(SR, ACK, ROCE_M_RESP | ROCE_M_ONLY | ROCE_M_AETH | ROCE_M_PAYLOAD | ROCE_M_SR),
	OP(SR, SEND_LAST_INV, SRS | END | INV),
	OP(SR, SEND_ONLY_INV, SRS | ONE | INV),
	[ROCE_OPCODE_CNP] = {
		.name = "CNP",
		.mask = ROCE_M_CNP | ROCE_M_CNPB,
		.length = TOTAL_LEN(ROCE_M_CNPB),
		.offset = { [ROCE_HDR_CNP] = BTH_LEN },
	},
};

const uint8_t roce_hdr_len[ROCE_HDR_NUM] = {
	[ROCE_HDR_DETH] = sizeof(struct roce_deth),
	[ROCE_HDR_RETH] = sizeof(struct roce_reth),
	[ROCE_HDR_ATMETH] = sizeof(struct roce_atmeth),
	[ROCE_HDR_AETH] = sizeof(struct roce_aeth),
	[ROCE_HDR_ATMACK] = sizeof(struct roce_atmack),
	[ROCE_HDR_IMMDT] = sizeof(struct roce_immdt),
	[ROCE_HDR_IETH] = sizeof(struct roce_ieth),
	[ROCE_HDR_CNP] = sizeof(struct roce_cnp),
	[ROCE_HDR_SRETH] = sizeof(struct roce_sreth),
};

const char *
roce_opcode_name(uint8_t opcode)
{
	const char *name = roce_opcode_info[opcode].name;

	return name != NULL ? name : "UNKNOWN";
}
