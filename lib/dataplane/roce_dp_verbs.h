/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_DP_VERBS_H
#define ROCE_DP_VERBS_H

/**
 * @file
 * The verbs of the running dataplane, for a control front end (the daemon's control socket,
 * or any other): protection domains, memory regions, address handles, RC and UD QPs with their
 * CQ, work requests and completions, named by handles. A QP is named by its QPN (which encodes
 * its worker), an MR by its key (lkey == rkey), a PD and an AH by their numbers. Every call runs what touches a QP on the QP's
 * worker (roce_dp_call()) and waits for it, so a front end never runs code on a data-plane
 * lcore and keeps no copy of QP or MR state: it lives once, in the engines and the MR table.
 *
 * One control thread at a time calls these.
 */

#include <stdint.h>

#include "roce_transport.h"
#include "roce_transport_counters.h"

struct roce_dp;

/** The shared PD: always there, never freed; what clients name with pd 0. */
#define ROCE_DP_PD_SHARED 0u
/** Most PDs (the shared one included). */
#define ROCE_DP_MAX_PDS 1024u
/** Most MRs. */
#define ROCE_DP_MAX_MRS 4096u
/** Deepest send or receive queue. */
#define ROCE_DP_MAX_DEPTH 16384u
/** Most address handles. */
#define ROCE_DP_MAX_AHS 4096u
/** Any PD, in the listing calls. */
#define ROCE_DP_PD_ANY UINT32_MAX

/** A PD. */
struct roce_dp_pd_info {
	uint32_t pdn;
	uint64_t owner;        /**< 0: nobody's (lives until freed) */
	uint32_t nb_mrs;
	uint32_t nb_qps;
	uint32_t nb_ahs;
	uint8_t is_default;    /**< the owner's default PD (roce_dp_pd_default()) */
};

/**
 * Allocate a PD for @p owner (a front end's client; 0: nobody, it lives until freed).
 * @return 0 with @p pdn set, or -ENOSPC, -ENOMEM.
 */
int roce_dp_pd_alloc(struct roce_dp *dp, uint64_t owner, uint32_t *pdn);

/**
 * The default PD of @p owner (not 0), allocated at the first call.
 * @return 0 with @p pdn set, or as roce_dp_pd_alloc().
 */
int roce_dp_pd_default(struct roce_dp *dp, uint64_t owner, uint32_t *pdn);

/**
 * Free an empty PD.
 * @return 0, -ENOENT, -EBUSY (it holds MRs, QPs or AHs), -EPERM (the shared PD).
 */
int roce_dp_pd_free(struct roce_dp *dp, uint32_t pdn);

/**
 * Destroy everything in a PD (its QPs first, which lets go of the MRs, then its MRs and AHs)
 * and, unless it is the shared one, the PD. @p nb_qps and @p nb_mrs (may be NULL) say how many went.
 * @return 0 or -ENOENT.
 */
int roce_dp_pd_release(struct roce_dp *dp, uint32_t pdn, unsigned int *nb_qps,
		unsigned int *nb_mrs);

/** @return 0 with @p info filled, or -ENOENT. */
int roce_dp_pd_query(const struct roce_dp *dp, uint32_t pdn, struct roce_dp_pd_info *info);

/**
 * The PDs of @p owner (ROCE_DP_PD_ANY: every PD), in number order, into @p pdns.
 * @return how many there are (more than @p max when they did not fit).
 */
unsigned int roce_dp_pd_list(const struct roce_dp *dp, uint64_t owner, uint32_t *pdns,
		unsigned int max);

/** An MR. */
struct roce_dp_mr_info {
	uint32_t key;          /**< lkey and rkey */
	uint32_t pdn;
	uint32_t id;           /**< registration number, from 1 */
	unsigned int access;   /**< ROCE_ACCESS_* */
	uint64_t iova;
	uint64_t length;
	uint8_t *addr;         /**< its memory, for the front end's fills and dumps */
	uint8_t key_valid;     /**< 0 once a peer's SEND with Invalidate took the key away */
};

/**
 * Allocate @p length bytes on NUMA @p socket (SOCKET_ID_ANY: any), zeroed, and register them
 * in PD @p pdn with exactly @p access.
 *
 * @return
 *   0 with @p info filled, -ENOENT (no such PD), -ENOMEM, or -EINVAL (the access is invalid:
 *   remote write or atomic needs local write).
 */
int roce_dp_mr_reg(struct roce_dp *dp, uint32_t pdn, uint64_t length, unsigned int access,
		int socket, struct roce_dp_mr_info *info);

/**
 * Deregister an MR while traffic may run: its key stops matching, every worker drops what it
 * holds in it (QPs writing to or reading from it fail with a remote access error, jobs using
 * it stop with ROCE_WC_LOC_PROT_ERR), then it and its memory are freed.
 * @return 0 or -ENOENT.
 */
int roce_dp_mr_dereg(struct roce_dp *dp, uint32_t key);

/** @return 0 with @p info filled, or -ENOENT. */
int roce_dp_mr_query(const struct roce_dp *dp, uint32_t key, struct roce_dp_mr_info *info);

/**
 * The MRs of PD @p pdn (ROCE_DP_PD_ANY: all), by PD then registration order, into @p out.
 * @return how many there are (more than @p max when they did not fit).
 */
unsigned int roce_dp_mr_list(const struct roce_dp *dp, uint32_t pdn,
		struct roce_dp_mr_info *out, unsigned int max);

/** What a QP is created with. */
struct roce_dp_qp_init {
	uint32_t pdn;
	uint16_t port;            /**< dataplane port index (its addresses and egress) */
	int16_t worker;           /**< -1: the next worker in turn */
	uint32_t sq_depth;        /**< default 128 */
	uint32_t rq_depth;        /**< default 128 */
	uint32_t max_inline;
	unsigned int access;      /**< RC: ROCE_ACCESS_REMOTE_*: what peers may do (exactly) */
	enum roce_qp_type type;   /**< 0: ROCE_QPT_RC */
	/** UD: the Q_Key; a controlled one (ROCE_QKEY_CONTROLLED set) is refused, as Linux
	 *  refuses it to unprivileged processes. */
	uint32_t qkey;
	/** UD: path MTU in bytes (256-4096, a power of two); 0: the most the port carries. */
	uint32_t mtu;
};

/** A QP, as the engine holds it. */
struct roce_dp_qp_info {
	uint32_t qpn;
	uint32_t pdn;
	uint32_t psn;             /**< the send PSN it starts at (picked at creation) */
	uint16_t port;
	uint16_t worker;
	struct roce_qp_init_attr init;   /**< CQ pointers are the worker's: do not touch */
	struct roce_qp_attr attr;        /**< attr.qp_state is its state */
	uint64_t cnt[ROCE_XC_NUM];
};

/**
 * Create a QP and its CQ (for both queues, 2 * (sq + rq) deep) on a worker. An RC QP is taken
 * to INIT on its port with its access (roce_dp_qp_modify() connects it); a UD QP straight to
 * RTS with its Q_Key and path MTU, starting at the PSN it picked: it is ready to send to any
 * address handle and to receive.
 *
 * @return
 *   0 with @p qpn set, -ENOENT (no PD), -EINVAL (port, worker, depths, type, MTU), -EPERM (a
 *   controlled Q_Key), or the worker's -errno (-ENOSPC: no QP number left).
 */
int roce_dp_qp_create(struct roce_dp *dp, const struct roce_dp_qp_init *init, uint32_t *qpn);

/**
 * Modify a QP, as ibv_modify_qp() (roce_qp_modify() on its worker). A port it names must
 * exist (port_num from 1).
 * @return 0, -ENOENT, -EPERM (a controlled Q_Key), or as roce_qp_modify().
 */
int roce_dp_qp_modify(struct roce_dp *dp, uint32_t qpn, const struct roce_qp_attr *attr,
		int mask);

/** @return 0 with @p info filled, or -ENOENT. */
int roce_dp_qp_query(struct roce_dp *dp, uint32_t qpn, struct roce_dp_qp_info *info);

/** Destroy a QP, its job and its CQ. @return 0 or -ENOENT. */
int roce_dp_qp_destroy(struct roce_dp *dp, uint32_t qpn);

/**
 * The QPNs of PD @p pdn's QPs (ROCE_DP_PD_ANY: all), ascending, into @p qpns.
 * @return how many there are (more than @p max when they did not fit), or -errno.
 */
int roce_dp_qp_list(struct roce_dp *dp, uint32_t pdn, uint32_t *qpns, unsigned int max);

/** What an address handle was made with. */
struct roce_dp_ah_info {
	uint32_t ahn;
	uint32_t pdn;
	uint16_t port;            /**< dataplane port index */
	struct roce_path path;    /**< addresses, DSCP, hop limit */
};

/**
 * Create an address handle in PD @p pdn for UD sends from port @p port to @p dst_ip (its
 * path as roce_dp_path() makes it, resolving the next hop's MAC unless @p dst_mac), with
 * @p dscp and @p hop_limit (0: 64) as the IP traffic class and TTL / hop limit.
 *
 * @return
 *   0 with @p ahn set (from 1), -ENOENT (no PD), -EINVAL (port, DSCP), -ENOSPC (no AH number
 *   left), -ENOMEM, or as roce_dp_path().
 */
int roce_dp_ah_create(struct roce_dp *dp, uint32_t pdn, unsigned int port,
		const uint8_t *dst_ip, bool ipv6, const uint8_t *dst_mac, uint8_t dscp,
		uint8_t hop_limit, unsigned int timeout_ms, uint32_t *ahn);

/**
 * Destroy an address handle. Posted work requests took what they need from it.
 * @return 0 or -ENOENT.
 */
int roce_dp_ah_destroy(struct roce_dp *dp, uint32_t ahn);

/** @return 0 with @p info filled, or -ENOENT. */
int roce_dp_ah_query(const struct roce_dp *dp, uint32_t ahn, struct roce_dp_ah_info *info);

/**
 * The AHs of PD @p pdn (ROCE_DP_PD_ANY: all), in number order, into @p ahns.
 * @return how many there are (more than @p max when they did not fit).
 */
unsigned int roce_dp_ah_list(const struct roce_dp *dp, uint32_t pdn, uint32_t *ahns,
		unsigned int max);

/**
 * The transport's AH of number @p ahn, for roce_send_wr::ud.ah of a roce_dp_post_send() on
 * this control thread; valid until roce_dp_ah_destroy(). @return it, or NULL.
 */
struct roce_ah *roce_dp_ah_get(const struct roce_dp *dp, uint32_t ahn);

/**
 * Post @p n send work requests in order; stops at the first the QP refuses.
 * @return how many were posted when at least one was, else the -errno of the refusal
 *   (-ENOENT: no QP).
 */
int roce_dp_post_send(struct roce_dp *dp, uint32_t qpn, const struct roce_send_wr *wr,
		unsigned int n);

/** As roce_dp_post_send(), for receives. */
int roce_dp_post_recv(struct roce_dp *dp, uint32_t qpn, const struct roce_recv_wr *wr,
		unsigned int n);

/**
 * Poll up to @p max completions of QP @p qpn's CQ (a QP's traffic job, when it has one,
 * consumes them itself).
 * @return how many were stored in @p wc, or -ENOENT.
 */
int roce_dp_cq_poll(struct roce_dp *dp, uint32_t qpn, struct roce_wc *wc, unsigned int max);

/**
 * Fill @p path with the addresses of a QP on port @p port towards @p dst_ip (IPv4 or, with
 * @p ipv6, IPv6): the port's MAC, its address of that family (the link-local one for IPv6 when
 * it has no global one), its VLAN, @p dscp, and the next hop's MAC: @p dst_mac, or resolved by
 * ARP/ND (waiting up to @p timeout_ms) when NULL.
 *
 * @return
 *   0, -EINVAL (no such port), -EHOSTUNREACH (no answer), or as roce_dp_resolve().
 */
int roce_dp_path(struct roce_dp *dp, unsigned int port, const uint8_t *dst_ip, bool ipv6,
		const uint8_t *dst_mac, uint8_t dscp, unsigned int timeout_ms,
		struct roce_path *path);

/** Move every QP to ERR (before a shutdown). */
void roce_dp_qp_error_all(struct roce_dp *dp);

/**
 * Fill @p len bytes at @p p, which sit at offset @p off of a region, with @p pattern: "inc"
 * (byte i of the region = i mod 256), "zero", "byte:N", "random:SEED" (xorshift from SEED).
 * @return 0, or -EINVAL for an unknown pattern.
 */
int roce_dp_pattern_fill(uint8_t *p, uint64_t len, uint64_t off, const char *pattern);

#endif /* ROCE_DP_VERBS_H */
