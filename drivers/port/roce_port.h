/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_PORT_H
#define ROCE_PORT_H

/**
 * @file
 * Port setup with a profile per PMD family: how many queues, RSS on the UDP source port where
 * the PMD can hash it, MTU and offloads, all from what rte_eth_dev_info reports.
 *
 * Tested here: memif, af_packet, tap, ring, null. Written from the DPDK guides and untested
 * here: mlx5 (flow isolation, so the kernel keeps non-RoCE traffic), ice and af_xdp; other PMDs
 * get a generic profile. A port on an untested profile logs a warning once per profile.
 */

#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mempool.h>

/** What a profile knows of a PMD family. */
struct roce_port_profile {
	const char *driver;          /**< rte_eth_dev_info driver_name prefix */
	const char *family;          /**< short name shown to users */
	uint8_t tested;              /**< tested in this project's CI */
	uint8_t rss;                 /**< hash UDP so each worker gets its own queue */
	uint8_t isolate;             /**< rte_flow isolation: only RoCE/ARP/ND reach us */
	uint8_t mtu;                 /**< enum roce_port_mtu: how the PMD's MTU is set */
	uint16_t max_queues;         /**< 0: what dev_info says */
	/**
	 * roce_port_close() stops the port but leaves it open: closing races the PMD's own
	 * interrupt thread (22.11's memif handles a peer's disconnect there, on the device that
	 * close frees: a daemon stopping with its peer crashed 1 time in 40).
	 */
	uint8_t no_close;
	uint8_t zc;                  /**< enum roce_port_zc: what tx_copy=auto does */
	/**
	 * Queues are point-to-point pairs (memif): what the peer sends on its queue i arrives
	 * on our queue i, so each worker gets a queue without RSS. Both ends need as many.
	 */
	uint8_t pairs;
};

/** Zero-copy transmit (chained mbufs over the MR) on a PMD family. */
enum roce_port_zc {
	/** tx_copy=auto copies; never may still ask for zero-copy. */
	ROCE_PORT_ZC_COPY,
	/**
	 * auto sends zero-copy where the PMD takes chains: where it measured faster than
	 * copying (memif) or where the NIC reads the segments by DMA (mlx5, ice: untested).
	 */
	ROCE_PORT_ZC_ON,
	/** Never zero-copy: the PMD hands the mbufs themselves to another reader (ring). */
	ROCE_PORT_ZC_REFUSE,
};

/** How a port's payload packets are built (roce_tx_zc), the port key tx_copy. */
enum roce_port_tx_copy {
	/** Zero-copy where the profile says so and the PMD takes chained mbufs, else copy. */
	ROCE_PORT_TX_COPY_AUTO,
	/** Copy every payload into the headers' mbuf. */
	ROCE_PORT_TX_COPY_ALWAYS,
	/** Zero-copy every payload that can be; a PMD without chained transmit is an error. */
	ROCE_PORT_TX_COPY_NEVER,
};

/** Fewest segments a zero-copy frame needs: headers, payload, pad and ICRC. */
#define ROCE_PORT_ZC_MIN_SEGS 3

/** How a port comes to carry frames of the IP MTU asked for. */
enum roce_port_mtu {
	/** rte_eth_dev_set_mtu(); a refusal is an error. */
	ROCE_PORT_MTU_ETHDEV,
	/** Frames of any size pass (memif chains buffers; ring and null pass mbufs). */
	ROCE_PORT_MTU_ANY,
	/**
	 * A kernel interface behind the PMD (af_packet): its MTU is raised where it is lower;
	 * af_packet's frame size (framesz) and the mbufs must also hold the frame.
	 */
	ROCE_PORT_MTU_KERNEL,
};

/** A configured port. */
struct roce_port {
	uint16_t port_id;
	uint16_t nb_queues;          /**< one rx/tx queue pair per worker */
	uint16_t mtu;
	uint8_t rss;                 /**< RSS is on: each worker reads its own queue */
	/** Segments a transmitted frame may have (MULTI_SEGS enabled); 0: payloads copied. */
	uint16_t tx_max_segs;
	struct rte_ether_addr mac;
	struct rte_mempool *mp0;     /**< queue 0's mempool (sizes what af_packet receives) */
	const struct roce_port_profile *profile;
	char name[RTE_ETH_NAME_MAX_LEN];
};

/**
 * Configure and start a port.
 *
 * @param port_id
 *   The ethdev.
 * @param nb_workers
 *   Workers that want a queue pair each; fewer are set up when the PMD has fewer queues (the
 *   dataplane then hands packets between workers).
 * @param nb_queues
 *   Queue pairs asked for (the port key queues): 0 for as many as workers where RSS spreads
 *   RoCE over them, one elsewhere (memif's pairs need the peer to have as many: asked only);
 *   2 or more, refused (-EINVAL) where the PMD cannot spread traffic or has fewer.
 * @param mtu
 *   IP MTU the port must carry (0: the PMD's own).
 * @param tx_copy
 *   Copy or zero-copy transmit (sets roce_port::tx_max_segs).
 * @param mps
 *   One mempool per queue (per worker), on that worker's NUMA node.
 * @param port
 *   Filled on success.
 * @param err
 *   On failure, a line naming the cause and the fix (left as it was when there is no more to
 *   say than the error number).
 * @param err_len
 *   Size of @p err.
 * @return
 *   0, -ENODEV, -EMSGSIZE (the port cannot carry @p mtu), -ENOTSUP (tx_copy never on a
 *   PMD that cannot send chained mbufs), -EINVAL (@p nb_queues), or the -errno of the
 *   failing ethdev call.
 */
int roce_port_setup(uint16_t port_id, uint16_t nb_workers, uint16_t nb_queues, uint16_t mtu,
		enum roce_port_tx_copy tx_copy,
		struct rte_mempool *const *mps, struct roce_port *port, char *err, size_t err_len);

/** Stop and close a port. */
void roce_port_close(struct roce_port *port);

/**
 * Explain why the EAL did not create the ethdev of a --vdev: what its PMD needs that is
 * missing (af_packet: an interface of that name in this network namespace, CAP_NET_RAW; memif:
 * the socket's directory; tap: /dev/net/tun).
 *
 * @param name
 *   The vdev's name (net_af_packet0).
 * @param args
 *   Its arguments ("iface=veth0"), or NULL.
 * @param err
 *   Filled with one line: the cause and the fix.
 * @param len
 *   Size of @p err.
 */
void roce_port_probe_failed(const char *name, const char *args, char *err, size_t len);

/**
 * @return whether roce_port_setup() with @p tx_copy would send zero-copy on @p port_id (or
 *   fail trying: tx_copy never where the PMD cannot), so that zero-copy mbufs are needed.
 */
int roce_port_tx_zc_wanted(uint16_t port_id, enum roce_port_tx_copy tx_copy);

/** @return the profile for a driver name; a generic one when none matches. */
const struct roce_port_profile *roce_port_profile_find(const char *driver);

#endif /* ROCE_PORT_H */
