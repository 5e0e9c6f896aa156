/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_CMA_H
#define ROCE_CMA_H

/**
 * @file
 * What the RDMA CM (Linux's drivers/infiniband/core/cma.c, librdmacm) puts into the IB CM's
 * messages for IP-addressed connections: the service ID of an IP port space, and the header
 * at the start of a REQ's private data (struct cma_hdr, 36 bytes):
 *
 *	byte 0      cma_version, 0x00
 *	byte 1      IP version in the high nibble (4 or 6), low nibble reserved
 *	bytes 2-3   the source (active side's) port, network order
 *	bytes 4-19  source address: IPv6, or IPv4 in the last 4 bytes after 12 zeros
 *	bytes 20-35 destination address, the same way
 *
 * The consumer's private data follows it (ROCE_CM_REQ_PDATA_LEN - ROCE_CMA_HDR_LEN = 56 bytes
 * in a REQ). REP, REJ, RTU, DREQ and DREP carry the consumer's private data as it is.
 */

#include <stddef.h>
#include <stdint.h>

#define ROCE_CMA_HDR_LEN 36	/**< sizeof(struct cma_hdr) */
#define ROCE_CMA_VERSION 0x00	/**< CMA_VERSION */

/** @name RDMA CM port spaces (enum rdma_ucm_port_space). @{ */
#define ROCE_CMA_PS_IPOIB 0x0002
#define ROCE_CMA_PS_IB 0x013F
#define ROCE_CMA_PS_TCP 0x0106
#define ROCE_CMA_PS_UDP 0x0111
/** @} */

/** The service ID of an IP port space: 0x0000000001060000 | port for RDMA_PS_TCP. */
#define ROCE_CMA_SERVICE_ID(ps, port) ((uint64_t)(ps) << 16 | (uint16_t)(port))
/** The part of a service ID that names the port space (RDMA_IB_IP_PS_MASK). */
#define ROCE_CMA_SERVICE_PS_MASK 0xFFFFFFFFFFFF0000ULL

/** struct cma_hdr, host order; addresses as 16 network-order bytes, IPv4 ones IPv4-mapped. */
struct roce_cma_hdr {
	uint8_t cma_version;	/**< ROCE_CMA_VERSION */
	uint8_t ip_version;	/**< 4 or 6 */
	uint16_t port;		/**< the active side's port */
	uint8_t src_addr[16];	/**< IPv6, or ::ffff:a.b.c.d */
	uint8_t dst_addr[16];
};

/**
 * Parse the header at the start of @pdata (a REQ's private data).
 * Refused as Linux's cma_save_ip_info() refuses them: another
 * cma_version or an IP version other than 4 and 6.
 * @return 0; -EMSGSIZE when @len is below ROCE_CMA_HDR_LEN; -EPROTONOSUPPORT for another
 *   cma_version; -EAFNOSUPPORT for another IP version.
 */
int roce_cma_hdr_parse(struct roce_cma_hdr *h, const void *pdata, size_t len);

/**
 * Write @h as the ROCE_CMA_HDR_LEN bytes at @pdata. An IPv4 address is written as Linux
 * does (12 zero bytes, then the address), whatever the 12 bytes before it in @h.
 * @return ROCE_CMA_HDR_LEN; -ENOSPC when @cap is below it; -EAFNOSUPPORT for an IP version
 *   other than 4 and 6; -EINVAL for an IPv4 header whose addresses are not IPv4-mapped.
 */
int roce_cma_hdr_build(const struct roce_cma_hdr *h, void *pdata, size_t cap);

/**
 * Split a service ID of an IP port space.
 * @return 0 with @ps and @port; -ENOENT when @service_id is not TCP, UDP or IB port space's.
 */
int roce_cma_service_id_parse(uint64_t service_id, uint16_t *ps, uint16_t *port);

/**
 * The flow label rdma_cm gives a RoCEv2 route of an IPv4 (or IPv6, flow label 0)
 * connection, from its source and destination ports (cma_get_roce_udp_flow_label()):
 * (sport * 31 + dport), 20 bits. The REQ's primary path carries it (rxe's 0xca5f9 for
 * ports 60333 and 7174).
 */
uint32_t roce_cma_flow_label(uint16_t sport, uint16_t dport);

/** Make @out the IPv4-mapped IPv6 address of @ip4 (4 network-order bytes): a RoCEv2 GID. */
void roce_cma_ip4_mapped(uint8_t out[16], const uint8_t ip4[4]);

/** @return 1 when @addr is IPv4-mapped (::ffff:0:0/96), else 0. */
int roce_cma_is_ip4_mapped(const uint8_t addr[16]);

#endif /* ROCE_CMA_H */
