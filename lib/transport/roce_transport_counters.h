/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_TRANSPORT_COUNTERS_H
#define ROCE_TRANSPORT_COUNTERS_H

/**
 * @file
 * Transport counters, kept per QP and summed per engine on read.
 */

#include <stdint.h>

#include "roce_counters.h"

struct roce_engine;
struct roce_qp;

/** Every transport counter, with what it counts. */
#define ROCE_XPORT_COUNTERS(X) \
	X(TX_PKTS, "packets sent") \
	X(TX_BYTES, "payload bytes sent") \
	X(RX_PKTS, "packets received") \
	X(RX_BYTES, "payload bytes received") \
	X(TX_REQ, "request packets sent") \
	X(TX_RESP, "response packets sent (ACK, NAK, READ response, atomic ACK)") \
	X(RETRANSMITS, "request packets sent again (go-back-N, RNR or timeout)") \
	X(TIMEOUTS, "retransmit timer expiries (SR: its RTO); with STALE_RESP here or DUP_REQ/" \
		"DUP_READ at the peer, the answer was late, not lost (doc/troubleshooting.md)") \
	X(RETRY_EXC, "QPs failed after retry_cnt retries") \
	X(RNR_RETRY_EXC, "QPs failed after rnr_retry RNR retries") \
	X(NAK_SEQ_TX, "NAK PSN sequence error sent") \
	X(NAK_RNR_TX, "RNR NAK sent") \
	X(NAK_INV_TX, "NAK invalid request sent") \
	X(NAK_ACC_TX, "NAK remote access error sent") \
	X(NAK_OP_TX, "NAK remote operational error sent") \
	X(NAK_SEQ_RX, "NAK PSN sequence error received") \
	X(NAK_RNR_RX, "RNR NAK received") \
	X(NAK_INV_RX, "NAK invalid request received") \
	X(NAK_ACC_RX, "NAK remote access error received") \
	X(NAK_OP_RX, "NAK remote operational error received") \
	X(DUP_REQ, "duplicate requests (SEND/WRITE re-ACKed): resent after they had arrived") \
	X(DUP_READ, "duplicate READ requests re-served: asked again (a response lost, or late)") \
	X(DUP_ATOMIC, "duplicate atomics answered from the saved result") \
	X(OOS_DROP, "out-of-sequence requests dropped") \
	X(GHOST_ACK, "responses for PSNs never sent, ignored") \
	X(STALE_RESP, "responses for PSNs already acknowledged, ignored: an answer that came " \
		"after its resend's (the timeout was early)") \
	X(BAD_RESP, "responses with an unexpected opcode or length") \
	X(RESP_OOS, "out-of-sequence READ responses") \
	X(READ_OOO_PLACED, "go-back-N READ responses past a gap, placed ahead (reordering)") \
	X(READ_REORDERED, "READ response gaps the late response closed itself (no re-issue)") \
	X(READ_REISSUE, "READs re-issued: a response gap outlived the reordering window") \
	X(READ_SPURIOUS, "READ re-issues the late response proved needless (the window doubles)") \
	X(STATE_DROP, "packets dropped for the QP state") \
	X(UNKNOWN_QP, "packets for a QP this engine does not own") \
	X(TRANSPORT_DROP, "packets whose transport is not the QP's (UD to an RC QP, RC to a UD QP)") \
	X(TX_NOMBUF, "packets not built for want of an mbuf") \
	X(TX_ZC, "payload packets sent zero-copy: the payload attached from the MR, not copied") \
	X(TX_COPY_PORT, "payload packets copied: zero-copy is not set for their port " \
		"(roce_engine_set_tx_zc()), or it takes fewer than 3 segments") \
	X(TX_COPY_SHORT, "payload packets copied: shorter than the port's zero-copy minimum") \
	X(TX_COPY_INLINE, "payload packets copied: inline data, in no MR") \
	X(TX_COPY_MR, "payload packets copied: an MR they lie in is not registered for DMA") \
	X(TX_COPY_SEGS, "payload packets copied: more pieces (SGEs) than the port's segments") \
	X(TX_COPY_NOMBUF, "payload packets copied: no zero-copy mbuf or MR reference left") \
	X(TX_RING_FULL, "responses and CNPs dropped because the tx ring was full") \
	X(PACED, "turns a QP waited out because the pacer (congestion control) held it back") \
	X(CQ_OVERRUN, "completions lost to a full CQ") \
	X(WQE_COMPLETED, "send work requests completed") \
	X(RECV_COMPLETED, "receive work requests completed") \
	X(SR_RETRANSMITS, "SR: request packets resent singly (SACK hole, lost response or RTO)") \
	X(SR_FAST_RETRANS, "SR: PSNs found lost from SACK or response evidence (before any RTO)") \
	X(SR_TIMEOUTS, "SR: retransmit timer expiries") \
	X(SR_READ_REREQ, "SR: READ requests re-issued for missing response ranges") \
	X(SR_SACK_TX, "SR ACKs sent (cumulative PSN and SACK bitmap)") \
	X(SR_SACK_RX, "SR ACKs received") \
	X(SR_OOO_PLACED, "SR: out-of-order request packets placed (or READ/atomic deferred)") \
	X(SR_RESP_OOO, "SR: READ responses placed with earlier ones missing") \
	X(SR_DUP, "SR: duplicate request packets (already placed), not placed again") \
	X(SR_WINDOW_DROP, "SR: request packets beyond the receive window, dropped") \
	X(SR_OOO_DROP, "SR: out-of-order packets dropped (no receive WQE, invalid, table full)") \
	X(SR_REJECT, "SR extension packets on a QP without SR (or IBA SEND/WRITE on an SR QP)") \
	X(CNP_RX, "congestion notifications (CNP) from the peer: it saw our packets marked CE") \
	X(CNP_TX, "congestion notifications (CNP) sent to the peer: its packets came marked CE") \
	X(CE_RX, "packets received with their IP ECN field CE (congestion experienced)") \
	X(BAD_PKEY, "packets whose BTH P_Key does not match the default partition 0xFFFF") \
	X(INVALIDATED, "MR keys invalidated by a SEND with Invalidate") \
	X(INVALIDATE_ERR, "SEND with Invalidate naming no remotely invalidatable MR of the QP's PD " \
		"(NAK invalid request)") \
	X(UD_QKEY_DROP, "UD: datagrams whose DETH Q_Key is not the QP's, dropped") \
	X(UD_NO_RECV, "UD: datagrams dropped for want of a receive WQE (RC would RNR NAK)") \
	X(UD_RX_TOO_LONG, "UD: datagrams longer than the QP's path MTU, dropped") \
	X(UD_RECV_LEN_ERR, "UD: datagrams longer than their receive buffer (GRH area included): " \
		"LOC_LEN_ERR, the QP in ERR") \
	X(UD_TX_TOO_LONG, "UD: sends longer than the path MTU: LOC_LEN_ERR, nothing sent, the QP " \
		"in ERR")

/** Counter indexes, as ROCE_XC_<name>. */
enum roce_xport_counter {
#define ROCE_XC_ENUM(n, d) ROCE_XC_##n,
	ROCE_XPORT_COUNTERS(ROCE_XC_ENUM)
#undef ROCE_XC_ENUM
	ROCE_XC_NUM
};

/** The transport counters' names and descriptions, by enum roce_xport_counter. */
extern const struct roce_counter_family roce_xport_counter_family;

/** Copy a QP's counters to @p out (ROCE_XC_NUM entries). */
void roce_qp_counters(const struct roce_qp *qp, uint64_t *out);

/** Sum the counters of an engine's QPs, live and destroyed, to @p out. */
void roce_engine_counters(const struct roce_engine *eng, uint64_t *out);

#endif /* ROCE_TRANSPORT_COUNTERS_H */
