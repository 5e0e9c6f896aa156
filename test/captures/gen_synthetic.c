/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Write a capture with one packet of every opcode in the table, built by lib/wire, over IPv4
 * and over VLAN-tagged IPv6, with every header field set to a distinct value. The real
 * captures hold only the opcodes rxe used; this one lets tshark judge the rest (immediate
 * data, invalidate, UC, CNP) and the builders.
 *
 * usage: gen_synthetic OUT.pcap
 */
#include <stdlib.h>
#include <string.h>

#include "roce_pcapfile.h"
#include "roce_test.h"
#include "roce_wire.h"

/* AETH syndromes to cycle through: ACK, RNR NAK and each NAK code. */
static const uint8_t syndromes[] = { 0x1F, 0x00, 0x2E, 0x60, 0x61, 0x62, 0x63, 0x64 };

static void
path_setup(struct roce_path *path, int ipv6)
{
	static const uint8_t ip6_src[16] = { 0xFE, 0x80, [8] = 0x02, [15] = 0x01 };
	static const uint8_t ip6_dst[16] = { 0xFE, 0x80, [8] = 0x02, [15] = 0x02 };
	static const uint8_t ip4_src[4] = { 10, 0, 0, 1 };
	static const uint8_t ip4_dst[4] = { 10, 0, 0, 2 };

	memset(path, 0, sizeof(*path));
	path->src_mac = (struct rte_ether_addr){ { 0x02, 0, 0, 0, 0, 1 } };
	path->dst_mac = (struct rte_ether_addr){ { 0x02, 0, 0, 0, 0, 2 } };
	path->ipv6 = ipv6;
	path->vlan = ipv6;
	path->vlan_tci = 0x6064;
	memcpy(path->src_ip, ipv6 ? ip6_src : ip4_src, ipv6 ? 16 : 4);
	memcpy(path->dst_ip, ipv6 ? ip6_dst : ip4_dst, ipv6 ? 16 : 4);
	path->dscp = 26;
	path->ecn = ROCE_ECN_ECT0;
	path->flow_label = 0x12345;
	path->udp_sport = roce_udp_sport(0x11, 0x22);
	if (roce_path_init(path) != 0) {
		fprintf(stderr, "gen_synthetic: bad path\n");
		exit(2);
	}
}

/* Distinct field values per packet, so a column read from the wrong place shows. */
static void
desc_fill(struct roce_pkt_desc *d, unsigned int op, unsigned int n)
{
	memset(d, 0, sizeof(*d));
	d->opcode = op;
	d->se = n & 1;
	d->ackreq = n >> 1 & 1;
	d->migreq = n >> 2 & 1;
	d->fecn = n >> 3 & 1;
	d->becn = n >> 4 & 1;
	d->pkey = 0x8000 | n;
	d->dest_qpn = 0xABC000 + n;
	d->psn = (0xFFFFF0 + n * 3) & ROCE_24BIT_MASK;
	d->va = 0x1122334455667700ull + n;
	d->rkey = 0x80000000u + n;
	d->dma_len = 0xF0000000u + n;
	d->swap_add = 0xFEDCBA9876543210ull + n;
	d->compare = 0x0123456789ABCDEFull + n;
	d->syndrome = syndromes[n % RTE_DIM(syndromes)];
	d->msn = 0xFFFF00 + n;
	d->orig = 0x8000000000000000ull + n;
	d->imm = 0xDEADBE00u + n;
	d->inv_rkey = 0xC0FFEE00u + n;
	d->qkey = 0x80010000u + n;
	d->src_qpn = 0x5A5A00 + n;
}

/* Payload bytes: none where the opcode has none; a multiple of 4 except on a last packet. */
static uint32_t
payload_len(uint32_t mask, unsigned int n)
{
	if (!(mask & ROCE_M_PAYLOAD))
		return 0;
	if (!(mask & ROCE_M_LAST))
		return 64;
	return 61 + n % 4;
}

/* One packet of every opcode on @path; @n numbers the packets across calls. */
static int
write_path(struct roce_pcap *pc, struct rte_mempool *mp, const struct roce_path *path,
		unsigned int *n)
{
	static uint8_t payload[128], frame[512];
	unsigned int op, i;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	for (op = 0; op < RTE_DIM(roce_opcode_info); op++) {
		uint32_t mask = roce_opcode_info[op].mask, len;
		struct roce_pkt_desc d;
		struct rte_mbuf *m;

		/* The SR extension (manufacturer opcodes) is ours alone: tshark cannot judge it. */
		if (mask == 0 || (mask & ROCE_M_SR))
			continue;
		desc_fill(&d, op, *n);
		m = rte_pktmbuf_alloc(mp);
		if (m == NULL || roce_build_pkt(m, path, &d, payload, payload_len(mask, *n)) != 0) {
			fprintf(stderr, "gen_synthetic: cannot build %s\n", roce_opcode_name(op));
			return -1;
		}
		len = rt_mbuf_copy(m, frame, sizeof(frame));
		rte_pktmbuf_free(m);
		if (roce_pcap_write(pc, frame, len, (uint64_t)*n * 1000) != 0)
			return -1;
		(*n)++;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct rte_mempool *mp;
	struct roce_pcap pc;
	unsigned int n = 0;
	int ipv6;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_synthetic OUT.pcap\n");
		return 2;
	}
	rt_eal_init(argv[0]);
	mp = rt_pool(64, 2048);
	if (roce_pcap_create(&pc, argv[1]) != 0) {
		fprintf(stderr, "gen_synthetic: cannot create %s\n", argv[1]);
		return 2;
	}
	for (ipv6 = 0; ipv6 <= 1; ipv6++) {
		struct roce_path path;

		path_setup(&path, ipv6);
		if (write_path(&pc, mp, &path, &n) != 0)
			return 2;
	}
	if (roce_pcap_close(&pc) != 0)
		return 2;
	printf("gen_synthetic: %u packets in %s\n", n, argv[1]);
	return 0;
}
