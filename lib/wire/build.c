/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "roce_build.h"
#include "wire_private.h"

#define IP4_DF 0x4000
#define DEFAULT_TTL 64
#define FLOW_LABEL_MAX 0xFFFFF

uint16_t
roce_udp_sport(uint32_t src_qpn, uint32_t dst_qpn)
{
	uint32_t h = (src_qpn & ROCE_24BIT_MASK) * 0x9E3779B1u ^
		(dst_qpn & ROCE_24BIT_MASK) * 0x85EBCA6Bu;

	h ^= h >> 15;
	h *= 0x2C1B3C6Du;
	h ^= h >> 12;
	return ROCE_UDP_SPORT_BASE | (h & 0x3FFF);
}

uint16_t
roce_udp_sport_qpn(uint32_t qpn)
{
	/* hash_32(): multiply by GOLDEN_RATIO_32, keep the top bits. */
	return ROCE_UDP_SPORT_BASE | (uint16_t)(((qpn & ROCE_24BIT_MASK) * 0x61C88647u) >> 18);
}

static uint8_t *
tmpl_l2(struct roce_path *path)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)path->tmpl;
	uint16_t et = path->ipv6 ? ETHER_TYPE_IPV6 : ETHER_TYPE_IPV4;
	uint8_t *p = path->tmpl + ETH_HLEN;

	rte_ether_addr_copy(&path->dst_mac, &eth->dst_addr);
	rte_ether_addr_copy(&path->src_mac, &eth->src_addr);
	if (path->vlan) {
		eth->ether_type = rte_cpu_to_be_16(ETHER_TYPE_VLAN);
		p[0] = path->vlan_tci >> 8;
		p[1] = path->vlan_tci & 0xFF;
		p[2] = et >> 8;
		p[3] = et & 0xFF;
		p += VLAN_HLEN;
	} else {
		eth->ether_type = rte_cpu_to_be_16(et);
	}
	return p;
}

static uint8_t *
tmpl_l3(struct roce_path *path, uint8_t *p)
{
	uint8_t tos = path->dscp << 2 | path->ecn;
	uint8_t ttl = path->ttl != 0 ? path->ttl : DEFAULT_TTL;

	if (path->ipv6) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)p;

		ip6->vtc_flow = rte_cpu_to_be_32(6u << 28 | (uint32_t)tos << 20 |
				path->flow_label);
		ip6->proto = IP_PROTO_UDP;
		ip6->hop_limits = ttl;
		memcpy(ip6->src_addr, path->src_ip, 16);
		memcpy(ip6->dst_addr, path->dst_ip, 16);
		return p + IP6_HLEN;
	}
	struct rte_ipv4_hdr *ip4 = (struct rte_ipv4_hdr *)p;

	ip4->version_ihl = 0x45;
	ip4->type_of_service = tos;
	ip4->fragment_offset = rte_cpu_to_be_16(IP4_DF);
	ip4->time_to_live = ttl;
	ip4->next_proto_id = IP_PROTO_UDP;
	memcpy(&ip4->src_addr, path->src_ip, 4);
	memcpy(&ip4->dst_addr, path->dst_ip, 4);
	/* Only the length differs from packet to packet: its checksum is this plus the length. */
	path->ip4_sum = rte_raw_cksum(ip4, IP4_HLEN);
	return p + IP4_HLEN;
}

int
roce_path_init(struct roce_path *path)
{
	struct rte_udp_hdr *udp;
	uint8_t *p;

	if (path->dscp > 63 || path->ecn > ROCE_ECN_MASK || path->flow_label > FLOW_LABEL_MAX ||
			path->udp_sport == 0 || path->ipv6 > 1 || path->vlan > 1)
		return -EINVAL;
	memset(path->tmpl, 0, sizeof(path->tmpl));
	p = tmpl_l2(path);
	path->l3_off = p - path->tmpl;
	p = tmpl_l3(path, p);
	udp = (struct rte_udp_hdr *)p;
	udp->src_port = rte_cpu_to_be_16(path->udp_sport);
	udp->dst_port = rte_cpu_to_be_16(ROCE_UDP_PORT);
	path->hdr_len = p + UDP_HLEN - path->tmpl;
	return 0;
}

void
roce_path_set_udp_sport(struct roce_path *path, uint16_t sport)
{
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(path->tmpl + path->hdr_len - UDP_HLEN);

	path->udp_sport = sport;
	udp->src_port = rte_cpu_to_be_16(sport);
}

static inline uint32_t
pad_of(uint32_t payload_len)
{
	return -payload_len & 3;
}

uint32_t
roce_frame_len(const struct roce_path *path, uint8_t opcode, uint32_t payload_len)
{
	const struct roce_opcode_info *info = &roce_opcode_info[opcode];

	if (info->mask == 0)
		return 0;
	return path->hdr_len + info->length + payload_len + pad_of(payload_len) + ROCE_ICRC_LEN;
}

static void
build_bth(struct roce_bth *bth, const struct roce_pkt_desc *d, uint32_t pad)
{
	bth->opcode = d->opcode;
	bth->flags = (d->se ? ROCE_BTH_SE : 0) | (d->migreq ? ROCE_BTH_MIGREQ : 0) |
		pad << ROCE_BTH_PAD_SHIFT;
	bth->pkey = rte_cpu_to_be_16(d->pkey != 0 ? d->pkey : ROCE_PKEY_DEFAULT);
	bth->qpn = rte_cpu_to_be_32((d->fecn ? ROCE_BTH_FECN : 0) |
			(d->becn ? ROCE_BTH_BECN : 0) | (d->dest_qpn & ROCE_24BIT_MASK));
	bth->apsn = rte_cpu_to_be_32((d->ackreq ? ROCE_BTH_ACKREQ : 0) |
			(d->psn & ROCE_24BIT_MASK));
}

/* Write the extension headers the opcode has, each at its table offset from the BTH. */
static void
build_ext(uint8_t *bth, const struct roce_opcode_info *info, const struct roce_pkt_desc *d)
{
	const uint8_t *off = info->offset;
	uint32_t mask = info->mask;

	if (mask & ROCE_M_DETH)
		roce_deth_set((void *)(bth + off[ROCE_HDR_DETH]), d->qkey, d->src_qpn);
	if (mask & ROCE_M_RETH)
		roce_reth_set((void *)(bth + off[ROCE_HDR_RETH]), d->va, d->rkey, d->dma_len);
	if (mask & ROCE_M_ATMETH)
		roce_atmeth_set((void *)(bth + off[ROCE_HDR_ATMETH]), d->va, d->rkey, d->swap_add,
				d->compare);
	if (mask & ROCE_M_AETH)
		roce_aeth_set((void *)(bth + off[ROCE_HDR_AETH]), d->syndrome, d->msn);
	if (mask & ROCE_M_ATMACK)
		roce_atmack_set((void *)(bth + off[ROCE_HDR_ATMACK]), d->orig);
	if (mask & ROCE_M_IMMDT)
		roce_immdt_set((void *)(bth + off[ROCE_HDR_IMMDT]), d->imm);
	if (mask & ROCE_M_IETH)
		roce_ieth_set((void *)(bth + off[ROCE_HDR_IETH]), d->inv_rkey);
	if (mask & ROCE_M_CNPB)
		memset(bth + off[ROCE_HDR_CNP], 0, sizeof(struct roce_cnp));
	if (mask & ROCE_M_SRETH)
		roce_sreth_set((void *)(bth + off[ROCE_HDR_SRETH]), d->sr_rsn, d->sr_off);
}

/* Set the IP and UDP lengths (and the IPv4 checksum) of a frame of @frame_len bytes. */
static void
build_lengths(uint8_t *p, const struct roce_path *path, uint32_t frame_len)
{
	uint32_t l3_len = frame_len - path->l3_off;
	struct rte_udp_hdr *udp;

	if (path->ipv6) {
		struct rte_ipv6_hdr *ip6 = (void *)(p + path->l3_off);

		ip6->payload_len = rte_cpu_to_be_16(l3_len - IP6_HLEN);
		udp = (void *)(ip6 + 1);
	} else {
		struct rte_ipv4_hdr *ip4 = (void *)(p + path->l3_off);

		uint16_t be_len = rte_cpu_to_be_16(l3_len);
		uint32_t sum = (uint32_t)path->ip4_sum + be_len;

		sum = (sum & 0xffff) + (sum >> 16);
		ip4->total_length = be_len;
		ip4->hdr_checksum = (uint16_t)~sum;
		udp = (void *)(ip4 + 1);
	}
	udp->dgram_len = rte_cpu_to_be_16(frame_len - path->hdr_len + UDP_HLEN);
}

/*
 * Headers of a packet of @payload_len payload bytes, appended to @m with @append_len bytes
 * after them (the payload, pad and ICRC, or none when the caller chains them). @return the
 * payload area, or NULL with rte_errno set.
 */
static uint8_t *
build_hdrs(struct rte_mbuf *m, const struct roce_path *path, const struct roce_pkt_desc *desc,
		uint32_t payload_len, int with_payload)
{
	const struct roce_opcode_info *info = &roce_opcode_info[desc->opcode];
	uint32_t frame_len = roce_frame_len(path, desc->opcode, payload_len);
	uint32_t pad = pad_of(payload_len);
	uint8_t *p, *bth, *payload;

	/* payload_len first: near 4 GiB it wraps frame_len past the length check. Only the
	 * last packet of a message may be padded (IBA 9.3.3), as the classifier enforces.
	 */
	if (payload_len > UINT16_MAX || frame_len == 0 ||
			(payload_len != 0 && !(info->mask & ROCE_M_PAYLOAD)) ||
			(pad != 0 && !(info->mask & ROCE_M_LAST)) ||
			frame_len - path->l3_off > UINT16_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	p = (uint8_t *)rte_pktmbuf_append(m, with_payload ? frame_len :
			path->hdr_len + info->length);
	if (p == NULL) {
		rte_errno = ENOSPC;
		return NULL;
	}
	memcpy(p, path->tmpl, path->hdr_len);
	build_lengths(p, path, frame_len);
	bth = p + path->hdr_len;
	build_bth((struct roce_bth *)bth, desc, pad);
	build_ext(bth, info, desc);
	payload = bth + info->length;
	if (with_payload)
		memset(payload + payload_len, 0, pad);
	m->l2_len = path->l3_off;
	m->l3_len = path->hdr_len - UDP_HLEN - path->l3_off;
	return payload;
}

void *
roce_build_hdrs(struct rte_mbuf *m, const struct roce_path *path,
		const struct roce_pkt_desc *desc, uint32_t payload_len)
{
	return build_hdrs(m, path, desc, payload_len, 1);
}

int
roce_build_hdrs_only(struct rte_mbuf *m, const struct roce_path *path,
		const struct roce_pkt_desc *desc, uint32_t payload_len)
{
	return build_hdrs(m, path, desc, payload_len, 0) != NULL ? 0 : -rte_errno;
}

/* Frame length the IP header of a built packet announces. */
static uint32_t
announced_len(const struct rte_mbuf *m, const struct roce_path *path)
{
	const uint8_t *l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *, path->l3_off);

	if (path->ipv6)
		return path->l3_off + IP6_HLEN + ((uint32_t)l3[4] << 8 | l3[5]);
	return path->l3_off + ((uint32_t)l3[2] << 8 | l3[3]);
}

int
roce_build_finish_tail(struct rte_mbuf *m, struct rte_mbuf *tail, const struct roce_path *path)
{
	uint32_t pad = roce_bth_pad(rte_pktmbuf_mtod_offset(m, const struct roce_bth *,
			path->hdr_len));
	uint8_t *p;

	if (m->pkt_len + pad + ROCE_ICRC_LEN != announced_len(m, path) || tail->data_len != 0)
		return -EINVAL;
	p = (uint8_t *)rte_pktmbuf_append(tail, pad + ROCE_ICRC_LEN);
	if (p == NULL)
		return -ENOSPC;
	memset(p, 0, pad);
	if (rte_pktmbuf_chain(m, tail) != 0) {
		rte_pktmbuf_trim(tail, pad + ROCE_ICRC_LEN);
		return -ENOSPC;
	}
	roce_build_finish(m, path);
	return 0;
}

void
roce_build_finish(struct rte_mbuf *m, const struct roce_path *path)
{
	uint32_t icrc_off = m->pkt_len - ROCE_ICRC_LEN;

	roce_icrc_write(m, icrc_off, roce_icrc_compute(m, path->l3_off, path->ipv6, icrc_off));
}

int
roce_build_pkt(struct rte_mbuf *m, const struct roce_path *path,
		const struct roce_pkt_desc *desc, const void *payload, uint32_t payload_len)
{
	void *dst = roce_build_hdrs(m, path, desc, payload_len);

	if (dst == NULL)
		return -rte_errno;
	if (payload_len != 0)
		memcpy(dst, payload, payload_len);
	roce_build_finish(m, path);
	return 0;
}
