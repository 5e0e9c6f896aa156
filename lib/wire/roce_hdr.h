/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_HDR_H
#define ROCE_HDR_H

/**
 * @file
 * RoCEv2 header layouts (IBA vol. 1 ch. 9, annex A17), in network byte order.
 *
 * Every structure is packed: headers follow Ethernet/IP/UDP at 2-byte alignment at best.
 * Use the accessors, which do the byte swapping and the 24-bit field masking.
 */

#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_common.h>

/** UDP destination port of RoCEv2. */
#define ROCE_UDP_PORT 4791
/** First UDP source port of the per-QP entropy range (0xC000-0xFFFF). */
#define ROCE_UDP_SPORT_BASE 0xC000
/** Default partition key. */
#define ROCE_PKEY_DEFAULT 0xFFFF
/** Size of the invariant CRC trailer. */
#define ROCE_ICRC_LEN 4
/** PSNs, QPNs and MSNs are 24-bit. */
#define ROCE_24BIT_MASK 0xFFFFFFu

/** Base Transport Header (12 bytes). */
struct roce_bth {
	uint8_t opcode;
	uint8_t flags;     /**< SE(7) MigReq(6) PadCnt(5:4) TVer(3:0) */
	rte_be16_t pkey;
	rte_be32_t qpn;    /**< FECN(31) BECN(30) resv(29:24) DestQP(23:0) */
	rte_be32_t apsn;   /**< AckReq(31) resv(30:24) PSN(23:0) */
} __rte_packed;

#define ROCE_BTH_SE        0x80
#define ROCE_BTH_MIGREQ    0x40
#define ROCE_BTH_PAD_SHIFT 4
#define ROCE_BTH_PAD_MASK  0x30
#define ROCE_BTH_TVER_MASK 0x0F
#define ROCE_BTH_FECN      0x80000000u
#define ROCE_BTH_BECN      0x40000000u
#define ROCE_BTH_ACKREQ    0x80000000u

/** RDMA Extended Transport Header (16 bytes): WRITE First/Only, READ request. */
struct roce_reth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be32_t len;
} __rte_packed;

/** ACK Extended Transport Header (4 bytes). */
struct roce_aeth {
	rte_be32_t smsn;   /**< Syndrome(31:24) MSN(23:0) */
} __rte_packed;

/** AETH syndrome: top three bits select the kind. */
#define ROCE_AETH_TYPE_MASK 0xE0
#define ROCE_AETH_ACK       0x00 /**< ACK; low 5 bits: credit count (31 = invalid) */
#define ROCE_AETH_RNR_NAK   0x20 /**< RNR NAK; low 5 bits: RNR timer code */
#define ROCE_AETH_NAK       0x60 /**< NAK; low 5 bits: NAK code below */
#define ROCE_AETH_CREDIT_INVALID 0x1F

/** NAK codes (low 5 bits of a NAK syndrome). */
enum roce_nak_code {
	ROCE_NAK_PSN_SEQ_ERR = 0,
	ROCE_NAK_INVALID_REQ = 1,
	ROCE_NAK_REM_ACCESS_ERR = 2,
	ROCE_NAK_REM_OP_ERR = 3,
	ROCE_NAK_INVALID_RD_REQ = 4,
};

/** Atomic Extended Transport Header (28 bytes). */
struct roce_atmeth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be64_t swap_add;
	rte_be64_t compare;
} __rte_packed;

/** Atomic ACK Extended Transport Header (8 bytes): the original remote value. */
struct roce_atmack {
	rte_be64_t orig;
} __rte_packed;

/** Immediate data (4 bytes), opaque to the transport. */
struct roce_immdt {
	rte_be32_t imm;
} __rte_packed;

/** Invalidate Extended Transport Header (4 bytes). */
struct roce_ieth {
	rte_be32_t rkey;
} __rte_packed;

/** Datagram Extended Transport Header (8 bytes): UD. */
struct roce_deth {
	rte_be32_t qkey;
	rte_be32_t sqp;    /**< resv(31:24) SrcQP(23:0) */
} __rte_packed;

/** Congestion Notification Packet body (16 reserved bytes after the BTH). */
struct roce_cnp {
	uint8_t rsvd[16];
} __rte_packed;

/**
 * Selective-repeat Extended Transport Header (8 bytes, rocedp extension): on every packet of
 * an SR SEND or WRITE (manufacturer opcodes), so a packet can be placed whatever arrived
 * before it. See doc/selective-repeat.md.
 */
struct roce_sreth {
	rte_be32_t rsn;    /**< resv(31:24) receive WQE sequence number(23:0); 0 on plain WRITEs */
	rte_be32_t off;    /**< byte offset of this packet's payload in its message */
} __rte_packed;

_Static_assert(sizeof(struct roce_bth) == 12, "BTH is 12 bytes");
_Static_assert(sizeof(struct roce_reth) == 16, "RETH is 16 bytes");
_Static_assert(sizeof(struct roce_aeth) == 4, "AETH is 4 bytes");
_Static_assert(sizeof(struct roce_atmeth) == 28, "AtomicETH is 28 bytes");
_Static_assert(sizeof(struct roce_atmack) == 8, "AtomicAckETH is 8 bytes");
_Static_assert(sizeof(struct roce_immdt) == 4, "ImmDt is 4 bytes");
_Static_assert(sizeof(struct roce_ieth) == 4, "IETH is 4 bytes");
_Static_assert(sizeof(struct roce_deth) == 8, "DETH is 8 bytes");
_Static_assert(sizeof(struct roce_cnp) == 16, "CNP body is 16 bytes");
_Static_assert(sizeof(struct roce_sreth) == 8, "SRETH is 8 bytes");

/** @return the BTH destination QP number. */
static inline uint32_t
roce_bth_qpn(const struct roce_bth *bth)
{
	return rte_be_to_cpu_32(bth->qpn) & ROCE_24BIT_MASK;
}

/** @return the BTH packet sequence number. */
static inline uint32_t
roce_bth_psn(const struct roce_bth *bth)
{
	return rte_be_to_cpu_32(bth->apsn) & ROCE_24BIT_MASK;
}

/** @return non-zero when the BTH AckReq bit is set. */
static inline int
roce_bth_ackreq(const struct roce_bth *bth)
{
	return !!(rte_be_to_cpu_32(bth->apsn) & ROCE_BTH_ACKREQ);
}

/** @return the BTH partition key. */
static inline uint16_t
roce_bth_pkey(const struct roce_bth *bth)
{
	return rte_be_to_cpu_16(bth->pkey);
}

/** The default partition, full membership: what RoCE peers (rxe, ConnectX) send. */
#define ROCE_PKEY_DEFAULT 0xFFFF

/**
 * IBA 10.9.3: two P_Keys match when their low 15 bits are equal and at least one of them is a
 * full member (bit 15). @return non-zero on a match.
 */
static inline int
roce_pkey_match(uint16_t a, uint16_t b)
{
	return (a & 0x7FFF) == (b & 0x7FFF) && ((a | b) & 0x8000) != 0;
}

/** @return the BTH pad count (0-3). */
static inline unsigned int
roce_bth_pad(const struct roce_bth *bth)
{
	return (bth->flags & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT;
}

/** @return the AETH syndrome byte. */
static inline uint8_t
roce_aeth_syndrome(const struct roce_aeth *aeth)
{
	return rte_be_to_cpu_32(aeth->smsn) >> 24;
}

/** @return the AETH message sequence number. */
static inline uint32_t
roce_aeth_msn(const struct roce_aeth *aeth)
{
	return rte_be_to_cpu_32(aeth->smsn) & ROCE_24BIT_MASK;
}

/** Set the AETH syndrome byte and the 24-bit message sequence number. */
static inline void
roce_aeth_set(struct roce_aeth *aeth, uint8_t syndrome, uint32_t msn)
{
	aeth->smsn = rte_cpu_to_be_32((uint32_t)syndrome << 24 | (msn & ROCE_24BIT_MASK));
}

/** @return the RETH virtual address. */
static inline uint64_t
roce_reth_va(const struct roce_reth *reth)
{
	return rte_be_to_cpu_64(reth->va);
}

/** @return the RETH remote key. */
static inline uint32_t
roce_reth_rkey(const struct roce_reth *reth)
{
	return rte_be_to_cpu_32(reth->rkey);
}

/** @return the RETH DMA length (of the whole message). */
static inline uint32_t
roce_reth_len(const struct roce_reth *reth)
{
	return rte_be_to_cpu_32(reth->len);
}

/** Set the RETH virtual address, remote key and DMA length. */
static inline void
roce_reth_set(struct roce_reth *reth, uint64_t va, uint32_t rkey, uint32_t len)
{
	reth->va = rte_cpu_to_be_64(va);
	reth->rkey = rte_cpu_to_be_32(rkey);
	reth->len = rte_cpu_to_be_32(len);
}

/** Set the RETH DMA length alone. */
static inline void
roce_reth_set_len(struct roce_reth *reth, uint32_t len)
{
	reth->len = rte_cpu_to_be_32(len);
}

/** @return the AtomicETH virtual address. */
static inline uint64_t
roce_atmeth_va(const struct roce_atmeth *ath)
{
	return rte_be_to_cpu_64(ath->va);
}

/** @return the AtomicETH remote key. */
static inline uint32_t
roce_atmeth_rkey(const struct roce_atmeth *ath)
{
	return rte_be_to_cpu_32(ath->rkey);
}

/** @return the AtomicETH Swap (CmpSwap) or Add (FetchAdd) operand. */
static inline uint64_t
roce_atmeth_swap_add(const struct roce_atmeth *ath)
{
	return rte_be_to_cpu_64(ath->swap_add);
}

/** @return the AtomicETH Compare operand (CmpSwap; zero on FetchAdd). */
static inline uint64_t
roce_atmeth_compare(const struct roce_atmeth *ath)
{
	return rte_be_to_cpu_64(ath->compare);
}

/** Set every AtomicETH field. */
static inline void
roce_atmeth_set(struct roce_atmeth *ath, uint64_t va, uint32_t rkey, uint64_t swap_add,
		uint64_t compare)
{
	ath->va = rte_cpu_to_be_64(va);
	ath->rkey = rte_cpu_to_be_32(rkey);
	ath->swap_add = rte_cpu_to_be_64(swap_add);
	ath->compare = rte_cpu_to_be_64(compare);
}

/** @return the AtomicAckETH original remote value. */
static inline uint64_t
roce_atmack_orig(const struct roce_atmack *ack)
{
	return rte_be_to_cpu_64(ack->orig);
}

/** Set the AtomicAckETH original remote value. */
static inline void
roce_atmack_set(struct roce_atmack *ack, uint64_t orig)
{
	ack->orig = rte_cpu_to_be_64(orig);
}

/** @return the immediate data, in host order (verbs hand it over as it was posted). */
static inline uint32_t
roce_immdt_imm(const struct roce_immdt *immdt)
{
	return rte_be_to_cpu_32(immdt->imm);
}

/** Set the immediate data from host order. */
static inline void
roce_immdt_set(struct roce_immdt *immdt, uint32_t imm)
{
	immdt->imm = rte_cpu_to_be_32(imm);
}

/** @return the IETH remote key to invalidate. */
static inline uint32_t
roce_ieth_rkey(const struct roce_ieth *ieth)
{
	return rte_be_to_cpu_32(ieth->rkey);
}

/** Set the IETH remote key to invalidate. */
static inline void
roce_ieth_set(struct roce_ieth *ieth, uint32_t rkey)
{
	ieth->rkey = rte_cpu_to_be_32(rkey);
}

/** @return the DETH queue key. */
static inline uint32_t
roce_deth_qkey(const struct roce_deth *deth)
{
	return rte_be_to_cpu_32(deth->qkey);
}

/** @return the DETH source QP number. */
static inline uint32_t
roce_deth_sqp(const struct roce_deth *deth)
{
	return rte_be_to_cpu_32(deth->sqp) & ROCE_24BIT_MASK;
}

/** Set the DETH queue key and the 24-bit source QP number. */
static inline void
roce_deth_set(struct roce_deth *deth, uint32_t qkey, uint32_t sqp)
{
	deth->qkey = rte_cpu_to_be_32(qkey);
	deth->sqp = rte_cpu_to_be_32(sqp & ROCE_24BIT_MASK);
}

/** @return the SRETH receive WQE sequence number. */
static inline uint32_t
roce_sreth_rsn(const struct roce_sreth *sreth)
{
	return rte_be_to_cpu_32(sreth->rsn) & ROCE_24BIT_MASK;
}

/** @return the SRETH byte offset of the packet's payload in its message. */
static inline uint32_t
roce_sreth_off(const struct roce_sreth *sreth)
{
	return rte_be_to_cpu_32(sreth->off);
}

/** Set the SRETH 24-bit receive WQE sequence number and the payload's offset. */
static inline void
roce_sreth_set(struct roce_sreth *sreth, uint32_t rsn, uint32_t off)
{
	sreth->rsn = rte_cpu_to_be_32(rsn & ROCE_24BIT_MASK);
	sreth->off = rte_cpu_to_be_32(off);
}

#endif /* ROCE_HDR_H */
