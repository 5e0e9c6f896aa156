/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes frames of every known opcode, made by the lib/wire builders, to a pcap file, and the
 * values each frame must decode to as JSON lines, for independent decoders (scapy, tshark) to
 * check. Fields vary from frame to frame: IPv4/IPv6, VLAN, DSCP/ECN, flow label, TTL, pad,
 * BTH flags, P_Key, immediate data, rkeys, atomic operands and every kind of AETH syndrome.
 *
 * Usage: gen_frames OUT.pcap OUT.jsonl
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_pcapfile.h"
#include "roce_test.h"
#include "roce_wire.h"

#define FRAME_MAX 4096

/* AETH syndromes: ACK with credits, RNR NAK with timers, the NAK codes. */
static const uint8_t syndromes[] = {
	ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID, ROCE_AETH_ACK | 0, ROCE_AETH_ACK | 5,
	ROCE_AETH_RNR_NAK | 0, ROCE_AETH_RNR_NAK | 12, ROCE_AETH_RNR_NAK | 31,
	ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR, ROCE_AETH_NAK | ROCE_NAK_INVALID_REQ,
	ROCE_AETH_NAK | ROCE_NAK_REM_ACCESS_ERR, ROCE_AETH_NAK | ROCE_NAK_REM_OP_ERR,
	ROCE_AETH_NAK | ROCE_NAK_INVALID_RD_REQ,
};

/* DSCP and ECN pairs. */
static const uint8_t tos_list[] = {
	0, 26 << 2 | ROCE_ECN_ECT0, 46 << 2 | ROCE_ECN_ECT1, 63 << 2 | ROCE_ECN_CE,
	48 << 2 | ROCE_ECN_NOT_ECT,
};

/* Payload lengths, all pad counts among them; FIRST/MIDDLE packets take the multiples of 4. */
static const uint32_t lens[] = { 1, 2, 3, 4, 13, 64, 255, 1024, 0, 256 };

static uint64_t rng_state = 0xD1B54A32D192ED03ull;

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

struct gen {
	struct roce_pcap pc;
	FILE *json;
	struct rte_mempool *mp;
	unsigned int n;
	uint8_t frame[FRAME_MAX];
	uint8_t payload[FRAME_MAX];
};

static void
path_for(struct roce_path *p, unsigned int n)
{
	static const uint8_t ip6_src[16] = { 0xfd, 0x00, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0x01 };
	static const uint8_t ip6_dst[16] = { 0xfd, 0x00, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0x02 };
	uint8_t tos = tos_list[n % RTE_DIM(tos_list)];

	memset(p, 0, sizeof(*p));
	p->src_mac = (struct rte_ether_addr){ { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 } };
	p->dst_mac = (struct rte_ether_addr){ { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 } };
	p->ipv6 = n >> 1 & 1;
	p->vlan = n & 1;
	p->vlan_tci = (uint16_t)((n % 8) << 13 | (100 + n % 4000));
	if (p->ipv6) {
		memcpy(p->src_ip, ip6_src, 16);
		memcpy(p->dst_ip, ip6_dst, 16);
	} else {
		memcpy(p->src_ip, (uint8_t[]){ 10, 99, 0, 2 }, 4);
		memcpy(p->dst_ip, (uint8_t[]){ 10, 99, 0, 1 }, 4);
	}
	p->dscp = tos >> 2;
	p->ecn = tos & ROCE_ECN_MASK;
	p->ttl = (uint8_t)(n * 37);
	p->flow_label = (uint32_t)rng() & 0xFFFFF;
	p->udp_sport = roce_udp_sport(n, n * 3 + 1);
	if (roce_path_init(p) != 0) {
		fprintf(stderr, "gen_frames: roce_path_init failed\n");
		exit(1);
	}
}

static void
desc_for(struct roce_pkt_desc *d, uint8_t opcode, unsigned int n)
{
	uint64_t r = rng();

	memset(d, 0, sizeof(*d));
	d->opcode = opcode;
	d->se = r & 1;
	d->ackreq = r >> 1 & 1;
	d->migreq = r >> 2 & 1;
	d->fecn = r >> 3 & 1;
	d->becn = opcode == ROCE_OPCODE_CNP || (r >> 4 & 1);
	d->pkey = r >> 5 & 1 ? 0 : (uint16_t)(0x8000 | r >> 16);
	/* QP 1 is the GSI QP: decoders read its payload as a MAD. */
	d->dest_qpn = ((uint32_t)rng() & 0xFFFFFF) | 0x100;
	d->psn = n % 7 == 0 ? 0xFFFFFF : (uint32_t)rng() & 0xFFFFFF;
	d->va = rng();
	d->rkey = (uint32_t)rng();
	d->dma_len = (uint32_t)rng() & 0x7FFFFFFF;
	d->swap_add = rng();
	d->compare = rng();
	d->syndrome = syndromes[n % RTE_DIM(syndromes)];
	d->msn = (uint32_t)rng() & 0xFFFFFF;
	d->orig = rng();
	d->imm = (uint32_t)rng();
	d->inv_rkey = (uint32_t)rng();
	d->qkey = (uint32_t)rng();
	d->src_qpn = ((uint32_t)rng() & 0xFFFFFF) | 0x100;
}

static uint32_t
len_for(uint32_t mask, unsigned int n)
{
	uint32_t len = lens[n % RTE_DIM(lens)];

	if (!(mask & ROCE_M_PAYLOAD))
		return 0;
	if (!(mask & ROCE_M_LAST))
		return len & ~3u;
	return len;
}

static void
json_path(FILE *f, const struct roce_path *p)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	int af = p->ipv6 ? AF_INET6 : AF_INET;

	inet_ntop(af, p->src_ip, src, sizeof(src));
	inet_ntop(af, p->dst_ip, dst, sizeof(dst));
	fprintf(f, "\"ipv6\": %u, \"vlan\": %u, \"vlan_tci\": %u, \"src_ip\": \"%s\", "
			"\"dst_ip\": \"%s\", \"dscp\": %u, \"ecn\": %u, \"ttl\": %u, "
			"\"flow_label\": %u, \"sport\": %u, ",
			p->ipv6, p->vlan, p->vlan_tci, src, dst, p->dscp, p->ecn,
			p->ttl != 0 ? p->ttl : 64, p->ipv6 ? p->flow_label : 0, p->udp_sport);
}

static void
json_bth(FILE *f, const struct roce_pkt_desc *d, uint32_t len)
{
	fprintf(f, "\"opcode\": %u, \"name\": \"%s\", \"se\": %u, \"migreq\": %u, \"pad\": %u, "
			"\"pkey\": %u, \"fecn\": %u, \"becn\": %u, \"qpn\": %u, \"ackreq\": %u, "
			"\"psn\": %u, ",
			d->opcode, roce_opcode_name(d->opcode), d->se, d->migreq, -len & 3,
			d->pkey != 0 ? d->pkey : ROCE_PKEY_DEFAULT, d->fecn, d->becn, d->dest_qpn,
			d->ackreq, d->psn);
}

/* The extension headers the opcode carries, each as a JSON member. */
static void
json_ext(FILE *f, const struct roce_pkt_desc *d, uint32_t mask)
{
	if (mask & ROCE_M_DETH)
		fprintf(f, "\"deth\": {\"qkey\": %u, \"src_qp\": %u}, ", d->qkey, d->src_qpn);
	if (mask & ROCE_M_RETH)
		fprintf(f, "\"reth\": {\"va\": %" PRIu64 ", \"rkey\": %u, \"len\": %u}, ", d->va,
				d->rkey, d->dma_len);
	if (mask & ROCE_M_ATMETH)
		fprintf(f, "\"atmeth\": {\"va\": %" PRIu64 ", \"rkey\": %u, \"swap_add\": %" PRIu64
				", \"compare\": %" PRIu64 "}, ", d->va, d->rkey, d->swap_add,
				d->compare);
	if (mask & ROCE_M_AETH)
		fprintf(f, "\"aeth\": {\"syndrome\": %u, \"msn\": %u}, ", d->syndrome, d->msn);
	if (mask & ROCE_M_ATMACK)
		fprintf(f, "\"atmack\": {\"orig\": %" PRIu64 "}, ", d->orig);
	if (mask & ROCE_M_IMMDT)
		fprintf(f, "\"imm\": %u, ", d->imm);
	if (mask & ROCE_M_IETH)
		fprintf(f, "\"ieth\": %u, ", d->inv_rkey);
	if (mask & ROCE_M_CNPB)
		fprintf(f, "\"cnp\": 1, ");
}

static void
json_payload(FILE *f, const uint8_t *p, uint32_t len)
{
	uint32_t i;

	fprintf(f, "\"payload\": \"");
	for (i = 0; i < len; i++)
		fprintf(f, "%02x", p[i]);
	fprintf(f, "\"");
}

/* Build one frame, append it to the pcap, describe it in the JSON file. */
static void
emit(struct gen *g, uint8_t opcode)
{
	const struct roce_opcode_info *info = &roce_opcode_info[opcode];
	struct rte_mbuf *m = rte_pktmbuf_alloc(g->mp);
	uint32_t len = len_for(info->mask, g->n), flen, i;
	struct roce_pkt_desc d;
	struct roce_path path;

	path_for(&path, g->n);
	desc_for(&d, opcode, g->n);
	for (i = 0; i < len; i++)
		g->payload[i] = (uint8_t)rng();
	if (m == NULL || roce_build_pkt(m, &path, &d, g->payload, len) != 0) {
		fprintf(stderr, "gen_frames: cannot build %s+%u\n", info->name, len);
		exit(1);
	}
	flen = rt_mbuf_copy(m, g->frame, sizeof(g->frame));
	rte_pktmbuf_free(m);
	if (roce_pcap_write(&g->pc, g->frame, flen, 1700000000000000000ull +
				(uint64_t)g->n * 1000) != 0) {
		fprintf(stderr, "gen_frames: cannot write the pcap\n");
		exit(1);
	}
	fprintf(g->json, "{\"frame\": %u, \"frame_len\": %u, ", g->n + 1, flen);
	json_path(g->json, &path);
	json_bth(g->json, &d, len);
	json_ext(g->json, &d, info->mask);
	/* The ICRC goes on the wire least significant byte first. */
	fprintf(g->json, "\"icrc\": %u, ", (uint32_t)g->frame[flen - 4] |
			(uint32_t)g->frame[flen - 3] << 8 | (uint32_t)g->frame[flen - 2] << 16 |
			(uint32_t)g->frame[flen - 1] << 24);
	json_payload(g->json, g->payload, len);
	fprintf(g->json, "}\n");
	g->n++;
}

int
main(int argc, char **argv)
{
	static struct gen g;
	unsigned int op, k;

	if (argc != 3) {
		fprintf(stderr, "usage: %s OUT.pcap OUT.jsonl\n", argv[0]);
		return 1;
	}
	rt_eal_init(argv[0]);
	g.mp = rt_pool(64, FRAME_MAX);
	g.json = fopen(argv[2], "w");
	if (g.json == NULL || roce_pcap_create(&g.pc, argv[1]) != 0) {
		fprintf(stderr, "gen_frames: cannot create %s or %s\n", argv[1], argv[2]);
		return 1;
	}
	/* Each opcode in all four IPv4/IPv6 x VLAN combinations, payload lengths cycling. */
	for (op = 0; op < 256; op++)
		/* Not the SR extension: scapy and tshark know only the IBA opcodes. */
		for (k = 0; k < 4 && roce_opcode_info[op].mask != 0 &&
				!(roce_opcode_info[op].mask & ROCE_M_SR); k++)
			emit(&g, op);
	/* Every AETH syndrome on ACKs, READ responses and atomic ACKs. */
	for (k = 0; k < 2 * RTE_DIM(syndromes); k++) {
		emit(&g, ROCE_OPCODE(RC, ACK));
		emit(&g, ROCE_OPCODE(RC, READ_RESP_ONLY));
		emit(&g, ROCE_OPCODE(RC, ATOMIC_ACK));
	}
	if (roce_pcap_close(&g.pc) != 0 || fclose(g.json) != 0) {
		fprintf(stderr, "gen_frames: cannot close the output\n");
		return 1;
	}
	printf("gen_frames: %u frames\n", g.n);
	return 0;
}
