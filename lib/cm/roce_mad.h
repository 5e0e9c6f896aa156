/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_MAD_H
#define ROCE_MAD_H

/**
 * @file
 * The MAD common header (IBA 13.4.2): the first 24 bytes of every management datagram that
 * QP1 carries, in host order. A MAD sent to QP1 (a GMP) is always ROCE_MAD_SIZE bytes.
 *
 * Pure functions, no allocation; roce_mad_hdr_parse() checks the length and the base version
 * only: which classes, class versions and methods are served is the class's business (see
 * roce_cm_msg.h for the CM's).
 */

#include <stddef.h>
#include <stdint.h>

#define ROCE_MAD_SIZE 256		/**< a GMP, header included */
#define ROCE_MAD_HDR_LEN 24		/**< the common header */
#define ROCE_MAD_DATA_LEN (ROCE_MAD_SIZE - ROCE_MAD_HDR_LEN) /**< class-specific data */
#define ROCE_MAD_BASE_VERSION 1		/**< IB base version (OPA's 0x80 is refused) */

/** @name Management classes (IBA table 152); QP1 serves the CM only. @{ */
#define ROCE_MAD_CLASS_SUBN_ADM 0x03	/**< SA */
#define ROCE_MAD_CLASS_PERF 0x04	/**< PerfMgt */
#define ROCE_MAD_CLASS_CM 0x07		/**< communication management */
/** @} */

/** @name Methods (IBA table 151). The CM sends every message with Send(). @{ */
#define ROCE_MAD_METHOD_GET 0x01
#define ROCE_MAD_METHOD_SET 0x02
#define ROCE_MAD_METHOD_SEND 0x03
#define ROCE_MAD_METHOD_GET_RESP 0x81
/** @} */

/** The common header, host order. */
struct roce_mad_hdr {
	uint8_t base_version;	/**< ROCE_MAD_BASE_VERSION */
	uint8_t mgmt_class;	/**< ROCE_MAD_CLASS_* */
	uint8_t class_version;	/**< 2 for the CM */
	uint8_t method;		/**< ROCE_MAD_METHOD_*, response bit 0x80 included */
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;		/**< transaction ID */
	uint16_t attr_id;
	uint16_t resv;		/**< reserved, kept so a header rebuilds as it came */
	uint32_t attr_mod;
};

/**
 * Parse the common header at the start of @buf.
 * @return 0; -EMSGSIZE when @len is below ROCE_MAD_HDR_LEN; -EPROTONOSUPPORT for a base
 *   version other than ROCE_MAD_BASE_VERSION.
 */
int roce_mad_hdr_parse(struct roce_mad_hdr *h, const void *buf, size_t len);

/** Write @h as the ROCE_MAD_HDR_LEN bytes at @buf (network order). */
void roce_mad_hdr_build(const struct roce_mad_hdr *h, void *buf);

#endif /* ROCE_MAD_H */
