/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocedump: decode pcap and pcapng files with the dataplane's own receive classifier
 * (lib/wire), so what it prints is what roced would see. Starts a private EAL without
 * hugepages; the user gives no EAL arguments.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_vect.h>

#include "roce_pcapfile.h"
#include "roce_wire.h"

#define PROG "rocedump"
#define BURST 32
#define EXIT_BAD 1 /* --verify found a UDP/4791 frame that is not valid RoCE */
#define EXIT_ERR 2 /* usage, unreadable or damaged file, no EAL */
/* Largest segment one mbuf of a pool can hold: data rooms are 16-bit, headroom included. */
#define SEG_MAX (UINT16_MAX - RTE_PKTMBUF_HEADROOM)
#define BTH_LEN ((uint32_t)sizeof(struct roce_bth))
#define AETH_LEN ((uint32_t)sizeof(struct roce_aeth))
/* --verify lists this many invalid frames, then only counts them. */
#define VERIFY_LIST_MAX 20

enum out_mode {
	OUT_LINES,
	OUT_FIELDS,
	OUT_TABLE,
	OUT_QUIET,
};

struct options {
	enum out_mode mode;
	int mode_set;
	int verify;
	int list_impls;
	uint32_t seg;                  /* 0: one segment per frame */
	enum roce_classify_impl impl;
	int nb_files;
	char **files;
};

/* What the burst keeps of a frame besides its mbuf. */
struct frame_info {
	uint64_t no;          /* 1-based, per file */
	uint32_t caplen;
	uint32_t origlen;
	uint32_t flags;       /* pcapng epb_flags: direction */
	int udp4791;          /* addressed to UDP 4791: must be valid RoCE */
	/* Cut by the snap length: bytes the RoCE headers need (0: not RoCE, or unknown), and
	 * whether the classifier's verdict rests on captured bytes only. */
	uint32_t hdr_need;
};

struct dump {
	const struct options *opt;
	const char *file;
	struct rte_mempool *mp;
	uint32_t seg_cap;
	uint16_t nb;
	struct rte_mbuf *pkts[BURST];
	struct frame_info info[BURST];
	struct roce_wire_stats stats;
	uint64_t op_pkts[256];
	uint64_t op_bytes[256];
	uint64_t frames;
	uint64_t truncated;
	uint64_t trunc_hdrs;           /* cut inside the headers: not decoded */
	uint64_t other_link;           /* pcapng records of interfaces that are not Ethernet */
	uint64_t verify_ok;
	uint64_t verify_bad;
	uint64_t verify_unchecked;
};

/* --fields columns print a header field as tshark 4.0 prints the field of the same name. */
enum col_fmt {
	COL_DEC,   /* decimal (FT_UINT*, FT_BOOLEAN) */
	COL_HEX,   /* 0x and zero-padded hex (fields tshark shows in BASE_HEX) */
	COL_BYTES, /* bare hex, two digits per byte (FT_BYTES) */
};

struct col {
	const char *name;  /* tshark field */
	/* Where the value comes from: the classifier's metadata when this is set ... */
	uint64_t (*meta)(const struct roce_pkt_meta *meta);
	/* ... else header bytes: the BTH when hdrs is 0, else the first of the ROCE_M_* headers
	 * in hdrs the opcode has; len big-endian bytes at off, shifted right, masked (0: all).
	 */
	uint32_t hdrs;
	uint8_t off;
	uint8_t len;
	uint8_t shift;
	uint8_t mask;
	uint8_t fmt;       /* enum col_fmt */
	uint8_t width;     /* COL_HEX digits */
};

static uint64_t
meta_opcode(const struct roce_pkt_meta *meta)
{
	return meta->opcode;
}

static uint64_t
meta_qpn(const struct roce_pkt_meta *meta)
{
	return meta->qpn;
}

static uint64_t
meta_psn(const struct roce_pkt_meta *meta)
{
	return meta->psn;
}

static uint64_t
meta_ackreq(const struct roce_pkt_meta *meta)
{
	return !!(meta->flags & ROCE_PKT_F_ACKREQ);
}

static uint64_t
meta_se(const struct roce_pkt_meta *meta)
{
	return !!(meta->flags & ROCE_PKT_F_SE);
}

static uint64_t
meta_migreq(const struct roce_pkt_meta *meta)
{
	return !!(meta->flags & ROCE_PKT_F_MIGREQ);
}

#define COL_META(n, fn, f, w) { .name = n, .meta = fn, .fmt = f, .width = w }
#define COL_HDR(n, h, o, l, s, m, f, w) \
	{ .name = n, .hdrs = h, .off = o, .len = l, .shift = s, .mask = m, .fmt = f, .width = w }
#define RETH_OR_ATOMIC (ROCE_M_RETH | ROCE_M_ATMETH)

static const struct col cols[] = {
	COL_META("infiniband.bth.opcode", meta_opcode, COL_DEC, 0),
	COL_META("infiniband.bth.destqp", meta_qpn, COL_HEX, 6),
	COL_META("infiniband.bth.psn", meta_psn, COL_DEC, 0),
	COL_META("infiniband.bth.a", meta_ackreq, COL_DEC, 0),
	COL_HDR("infiniband.bth.padcnt", 0, 1, 1, 4, 3, COL_DEC, 0),
	COL_META("infiniband.bth.se", meta_se, COL_DEC, 0),
	COL_META("infiniband.bth.m", meta_migreq, COL_DEC, 0),
	COL_HDR("infiniband.bth.p_key", 0, 2, 2, 0, 0, COL_DEC, 0),
	/* tshark files the AtomicETH VA and rkey under the RETH names. */
	COL_HDR("infiniband.reth.va", RETH_OR_ATOMIC, 0, 8, 0, 0, COL_HEX, 16),
	COL_HDR("infiniband.reth.r_key", RETH_OR_ATOMIC, 8, 4, 0, 0, COL_HEX, 8),
	COL_HDR("infiniband.reth.dmalen", ROCE_M_RETH, 12, 4, 0, 0, COL_DEC, 0),
	COL_HDR("infiniband.atomiceth.swapdt", ROCE_M_ATMETH, 12, 8, 0, 0, COL_DEC, 0),
	COL_HDR("infiniband.atomiceth.cmpdt", ROCE_M_ATMETH, 20, 8, 0, 0, COL_DEC, 0),
	COL_HDR("infiniband.aeth.syndrome", ROCE_M_AETH, 0, 1, 0, 0, COL_DEC, 0),
	COL_HDR("infiniband.aeth.msn", ROCE_M_AETH, 1, 3, 0, 0, COL_DEC, 0),
	COL_HDR("infiniband.atomicacketh.origremdt", ROCE_M_ATMACK, 0, 8, 0, 0, COL_DEC, 0),
	COL_HDR("infiniband.immdt", ROCE_M_IMMDT, 0, 4, 0, 0, COL_BYTES, 0),
	COL_HDR("infiniband.ieth", ROCE_M_IETH, 0, 4, 0, 0, COL_BYTES, 0),
	/* tshark declares the 32-bit Q_Key as a 64-bit field, hence 16 digits. */
	COL_HDR("infiniband.deth.q_key", ROCE_M_DETH, 0, 4, 0, 0, COL_HEX, 16),
	COL_HDR("infiniband.deth.srcqp", ROCE_M_DETH, 5, 3, 0, 0, COL_HEX, 8),
};

static const char *const aeth_kinds[8] = {
	[ROCE_AETH_ACK >> 5] = "ACK",
	[ROCE_AETH_RNR_NAK >> 5] = "RNR-NAK",
	[ROCE_AETH_NAK >> 5] = "NAK",
};

static const char *const nak_codes[] = {
	[ROCE_NAK_PSN_SEQ_ERR] = "PSN-SEQ-ERR",
	[ROCE_NAK_INVALID_REQ] = "INVALID-REQ",
	[ROCE_NAK_REM_ACCESS_ERR] = "REM-ACCESS-ERR",
	[ROCE_NAK_REM_OP_ERR] = "REM-OP-ERR",
	[ROCE_NAK_INVALID_RD_REQ] = "INVALID-RD-REQ",
};

/* One record at a time; too big for the stack. */
static struct roce_pcap_rec rec;

static void
usage(FILE *f)
{
	unsigned int i;

	fputs("NAME\n"
		"  " PROG " - decode RoCEv2 pcap and pcapng files with the rocedp classifier\n"
		"\n"
		"SYNOPSIS\n"
		"  " PROG " [--fields | --table | --quiet] [--verify] [--seg N]\n"
		"           [--impl scalar|avx2|avx512|auto] FILE...\n"
		"  " PROG " --list-impls\n"
		"\n"
		"DESCRIPTION\n"
		"  Reads classic pcap (Ethernet link type) and pcapng files (every\n"
		"  section, either byte order; Enhanced, Simple and obsolete Packet Blocks;\n"
		"  other blocks are skipped), copies every record into an mbuf and runs the\n"
		"  receive classifier of lib/wire on bursts of 32, as the dataplane does:\n"
		"  Ethernet, one VLAN tag, IPv4/IPv6, UDP, BTH, extension headers, pad and\n"
		"  ICRC are all checked. DPDK is started internally without hugepages;\n"
		"  give no EAL arguments. Frame numbers count from 1 in each file, over\n"
		"  every packet record, as tshark's frame.number does.\n"
		"\n"
		"  A frame cut short by the snap length (captured < original length) is\n"
		"  classified on its captured bytes with the rest taken as zeros and the\n"
		"  ICRC not checked: when every header was captured it is decoded and\n"
		"  marked truncated; when the cut falls inside the headers it is shown as\n"
		"  TRUNC with what was captured (opcode, QP, PSN once the BTH is there),\n"
		"  never as a malformed frame.\n"
		"\n"
		"OPTIONS\n"
		"  (default)     One line per frame: number, type (ROCE, DROP, ARP, ICMP,\n"
		"                ICMP6, UDP, OTHER, TRUNC; LINK for a pcapng interface\n"
		"                that is not Ethernet), opcode, destination QP and PSN in\n"
		"                hex, AckReq, payload bytes (pad and ICRC excluded) and,\n"
		"                for ACKs, what the AETH says; for drops, the reason; the\n"
		"                direction when the file records it ([rx], [tx]).\n"
		"  --fields      Tab-separated columns for RoCE frames only, formatted as\n"
		"                'tshark -T fields' prints the same fields (see FIELDS),\n"
		"                so that the two outputs compare with diff. Columns of\n"
		"                headers a snap length cut off are empty; TRUNC frames\n"
		"                have no row.\n"
		"  --table       No per-frame output; at the end, packets and payload\n"
		"                bytes per opcode, frames per type, every drop reason\n"
		"                seen, and the classifier implementation that ran.\n"
		"  -q, --quiet   No per-frame output (for use with --verify).\n"
		"  --verify      Exit with status 1 when a frame sent to UDP port 4791 is\n"
		"                not a valid RoCEv2 packet (ICRC, lengths, opcode, pad);\n"
		"                each such frame and a summary go to standard error.\n"
		"                Frames cut short by the snap length cannot be checked\n"
		"                (no ICRC): they are counted, not failed.\n"
		"  --seg N       Cut each frame into a chain of mbufs of N bytes (1-65407)\n"
		"                to exercise multi-segment code. The classifier wants all\n"
		"                headers in the first segment and reports HDR_SPLIT when\n"
		"                they are not.\n"
		"  --impl NAME   Classifier: scalar, avx2, avx512, or auto (default: the\n"
		"                widest the CPU and DPDK's default 256-bit SIMD limit\n"
		"                allow, as roced picks it). Asking for one this CPU lacks\n"
		"                is an error.\n"
		"  --list-impls  Print the implementations this CPU can run, one a line.\n"
		"  -h, --help    Print this text.\n"
		"\n"
		"FIELDS\n"
		"  --fields prints frame.number, then these tshark fields in this order:\n",
		f);
	for (i = 0; i < RTE_DIM(cols); i++)
		fprintf(f, "    %s\n", cols[i].name);
	fputs("    infiniband.invariant.crc   (the 4 stored ICRC bytes, in wire order)\n"
		"  and last the payload length, which has no tshark field: udp.length\n"
		"  minus the UDP header, BTH, extension headers, pad and ICRC. Fields the\n"
		"  opcode does not carry are empty. The AtomicETH VA and rkey are printed\n"
		"  in the RETH columns, where tshark puts them. tshark's side:\n"
		"    tshark -n -r F -d udp.port==4791,infiniband \\\n"
		"      --disable-protocol rpcordma -Y 'udp.dstport==4791 && !icmp' \\\n"
		"      -T fields -e frame.number -e infiniband.bth.opcode ... -e udp.length\n"
		"\n"
		"EXIT STATUS\n"
		"  0  success\n"
		"  1  --verify found a UDP/4791 frame that is not valid RoCEv2\n"
		"  2  bad usage; a missing, unreadable, non-pcap, non-Ethernet (classic\n"
		"     pcap) or damaged file (one line on standard error; the frames before\n"
		"     the damage are still decoded); or DPDK could not start\n"
		"\n"
		"EXAMPLES\n"
		"  " PROG " capture.pcap\n"
		"  " PROG " --table capture.pcapng     (rocectl capture, dpdk-dumpcap)\n"
		"  " PROG " --table --impl scalar *.pcap\n"
		"  " PROG " --verify -q --seg 100 capture.pcap && echo every ICRC is good\n",
		f);
}

static int
usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, PROG ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '" PROG " --help'.\n");
	return -EINVAL;
}

static int
parse_impl(const char *s, enum roce_classify_impl *impl)
{
	int i;

	if (strcmp(s, "auto") == 0) {
		*impl = ROCE_CLASSIFY_AUTO;
		return 0;
	}
	for (i = ROCE_CLASSIFY_SCALAR; i < ROCE_CLASSIFY_IMPL_NUM; i++) {
		if (strcmp(s, roce_classify_impl_name(i)) == 0) {
			*impl = i;
			return 0;
		}
	}
	return usage_error("unknown implementation '%s' (scalar, avx2, avx512, auto)", s);
}

static int
parse_seg(const char *s, uint32_t *seg)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < 1 || v > SEG_MAX)
		return usage_error("--seg wants a segment size of 1-65407 bytes, not '%s'", s);
	*seg = (uint32_t)v;
	return 0;
}

static int
set_mode(struct options *opt, enum out_mode mode)
{
	if (opt->mode_set && opt->mode != mode)
		return usage_error("%s", "--fields, --table and --quiet exclude each other");
	opt->mode = mode;
	opt->mode_set = 1;
	return 0;
}

enum {
	OPT_FIELDS = 256,
	OPT_TABLE,
	OPT_VERIFY,
	OPT_SEG,
	OPT_IMPL,
	OPT_LIST_IMPLS,
};

/* @return 0 to run, 1 when --help was served, -EINVAL on a usage error. */
static int
parse_args(int argc, char **argv, struct options *opt)
{
	static const struct option longopts[] = {
		{ "fields", no_argument, NULL, OPT_FIELDS },
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "seg", required_argument, NULL, OPT_SEG },
		{ "impl", required_argument, NULL, OPT_IMPL },
		{ "list-impls", no_argument, NULL, OPT_LIST_IMPLS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	while (ret == 0 && (c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FIELDS:
			ret = set_mode(opt, OUT_FIELDS);
			break;
		case OPT_TABLE:
			ret = set_mode(opt, OUT_TABLE);
			break;
		case 'q':
			ret = set_mode(opt, OUT_QUIET);
			break;
		case OPT_VERIFY:
			opt->verify = 1;
			break;
		case OPT_SEG:
			ret = parse_seg(optarg, &opt->seg);
			break;
		case OPT_IMPL:
			ret = parse_impl(optarg, &opt->impl);
			break;
		case OPT_LIST_IMPLS:
			opt->list_impls = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "Try '" PROG " --help'.\n");
			return -EINVAL;
		}
	}
	if (ret != 0)
		return ret;
	opt->files = argv + optind;
	opt->nb_files = argc - optind;
	if (opt->nb_files == 0 && !opt->list_impls)
		return usage_error("%s", "no capture file given");
	return 0;
}

/* EAL on the first CPU we may run on, without hugepages, shared files, PCI or telemetry. */
static int
eal_start(void)
{
	char lcores[32];
	char *argv[] = {
		PROG, "--lcores", lcores, "--no-huge", "--no-shconf", "--no-pci",
		"--no-telemetry", "-m", "64", "--log-level", "lib.eal:error",
	};
	cpu_set_t set;
	int cpu = 0;

	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &set))
			cpu++;
	}
	snprintf(lcores, sizeof(lcores), "0@%d", cpu);
	/* Keep standard output for the decode: DPDK logs to stdout by default. */
	rte_openlog_stream(stderr);
	if (rte_eal_init(RTE_DIM(argv), argv) < 0) {
		fprintf(stderr, PROG ": cannot start DPDK: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	if (roce_pkt_meta_register() != 0) {
		fprintf(stderr, PROG ": cannot register the mbuf metadata field\n");
		rte_eal_cleanup();
		return -1;
	}
	return 0;
}

/* AVX-512 needs DPDK's SIMD limit raised from its 256-bit default; only on request. */
static int
impl_select(enum roce_classify_impl impl)
{
	if (impl == ROCE_CLASSIFY_AVX512)
		rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	if (roce_classify_select(impl) != 0) {
		fprintf(stderr, PROG ": the %s classifier is not available on this CPU or build "
			"(see --list-impls)\n", roce_classify_impl_name(impl));
		return -1;
	}
	return 0;
}

static void
impl_list(void)
{
	int i;

	rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	for (i = ROCE_CLASSIFY_SCALAR; i < ROCE_CLASSIFY_IMPL_NUM; i++)
		if (roce_classify_get(i) != NULL)
			printf("%s\n", roce_classify_impl_name(i));
}

/* Enough mbufs for a full burst, and for one largest record cut into segments. */
static struct rte_mempool *
pool_create(uint32_t seg_cap)
{
	unsigned int n = (ROCE_PCAP_SNAP_MAX + seg_cap - 1) / seg_cap + 2 * BURST;
	struct rte_mempool *mp;

	mp = rte_pktmbuf_pool_create(PROG, n, 0, 0, seg_cap + RTE_PKTMBUF_HEADROOM,
			SOCKET_ID_ANY);
	if (mp == NULL)
		fprintf(stderr, PROG ": cannot create a pool of %u mbufs: %s\n", n,
			rte_strerror(rte_errno));
	return mp;
}

/* Copy a record into a chain of segments of at most @seg bytes; NULL when out of mbufs. */
static struct rte_mbuf *
mbuf_from(struct rte_mempool *mp, const uint8_t *data, uint32_t len, uint32_t seg)
{
	struct rte_mbuf *head = NULL;
	uint32_t done = 0;

	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t n = RTE_MIN(seg, len - done);

		if (m == NULL)
			goto fail;
		memcpy(rte_pktmbuf_append(m, n), data + done, n);
		done += n;
		if (head == NULL) {
			head = m;
		} else if (rte_pktmbuf_chain(head, m) != 0) {
			rte_pktmbuf_free(m);
			goto fail;
		}
	} while (done < len);
	return head;
fail:
	rte_pktmbuf_free(head);
	return NULL;
}

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * Where the UDP header of an IP/UDP frame starts, found without the classifier (so that
 * --verify also judges frames it rejected before the UDP header, and a frame cut by the snap
 * length is judged on what was captured). 0: not UDP over IP. *cut: the captured bytes end
 * before that could be told.
 */
static uint32_t
frame_l4(const uint8_t *p, uint32_t len, int *cut)
{
	uint32_t off = RTE_ETHER_HDR_LEN;
	uint16_t et;

	*cut = 0;
	if (len < off) {
		*cut = 1;
		return 0;
	}
	et = be16(p + off - 2);
	while (et == RTE_ETHER_TYPE_VLAN || et == RTE_ETHER_TYPE_QINQ) {
		if (off + 4 > len) {
			*cut = 1;
			return 0;
		}
		et = be16(p + off + 2);
		off += 4;
	}
	if (et == RTE_ETHER_TYPE_IPV4) {
		if (off + 20 > len) {
			*cut = 1;
			return 0;
		}
		if (p[off + 9] != IPPROTO_UDP || (be16(p + off + 6) & 0x1FFF))
			return 0;
		return off + (p[off] & 0x0F) * 4;
	}
	if (et == RTE_ETHER_TYPE_IPV6) {
		if (off + 40 > len) {
			*cut = 1;
			return 0;
		}
		return p[off + 6] == IPPROTO_UDP ? off + 40 : 0;
	}
	return 0;
}

/* Whether a frame is sent to UDP port 4791 right after its IP header, as a RoCEv2 NIC and
 * icrc-check.py see it. */
static int
frame_udp4791(const uint8_t *p, uint32_t len)
{
	int cut;
	uint32_t l4 = frame_l4(p, len, &cut);

	return l4 != 0 && l4 + 4 <= len && be16(p + l4 + 2) == ROCE_UDP_PORT;
}

/*
 * Bytes a snap-length-cut frame needs for the classifier's verdict to rest on captured bytes
 * only: up to the end of the UDP header, and for RoCE of the BTH and the opcode's extension
 * headers. More than @len when the cut falls inside them; 0 for frames that are not UDP.
 */
static uint32_t
frame_hdr_need(const uint8_t *p, uint32_t len)
{
	int cut;
	uint32_t l4 = frame_l4(p, len, &cut), bth;
	uint8_t hlen;

	if (cut)
		return len + 1;
	if (l4 == 0)
		return 0;
	if (l4 + 8 > len)
		return l4 + 8;
	if (be16(p + l4 + 2) != ROCE_UDP_PORT)
		return l4 + 8;
	bth = l4 + 8;
	if (bth >= len)
		return bth + BTH_LEN;
	hlen = roce_opcode_info[p[bth]].length;
	return bth + RTE_MAX((uint32_t)hlen, BTH_LEN);
}

/* Big-endian value of @len bytes. */
static uint64_t
be_val(const uint8_t *p, unsigned int len)
{
	uint64_t v = 0;

	while (len-- > 0)
		v = v << 8 | *p++;
	return v;
}

/* Whether @len bytes at @h were captured (not zeros standing in for a snap-length cut). */
static int
captured(const struct rte_mbuf *m, const struct frame_info *fi, const void *h, uint32_t len)
{
	return (uint32_t)((const uint8_t *)h - rte_pktmbuf_mtod(m, const uint8_t *)) + len <=
		fi->caplen;
}

static void
col_print(const struct rte_mbuf *m, const struct roce_pkt_meta *meta, const struct col *c,
		const struct frame_info *fi)
{
	uint32_t present = meta->mask & c->hdrs;
	const uint8_t *h;
	uint64_t v;

	if (c->meta != NULL) {
		v = c->meta(meta);
	} else {
		if (c->hdrs == 0)
			h = (const uint8_t *)roce_pkt_bth(m, meta);
		else if (present != 0)
			h = roce_pkt_hdr(m, meta, (enum roce_hdr)__builtin_ctz(present));
		else
			return;
		if (!captured(m, fi, h, (uint32_t)c->off + c->len))
			return;
		v = be_val(h + c->off, c->len) >> c->shift;
		if (c->mask != 0)
			v &= c->mask;
	}
	switch (c->fmt) {
	case COL_HEX:
		printf("0x%0*" PRIx64, c->width, v);
		break;
	case COL_BYTES:
		printf("%0*" PRIx64, 2 * c->len, v);
		break;
	default:
		printf("%" PRIu64, v);
	}
}

/* The 4 ICRC bytes in wire order, as tshark shows them; they may span segments. */
static uint32_t
icrc_wire(const struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	const struct roce_bth *bth = roce_pkt_bth(m, meta);
	uint8_t buf[ROCE_ICRC_LEN];
	const uint8_t *p;

	p = rte_pktmbuf_read(m, meta->payload_off + meta->payload_len + roce_bth_pad(bth),
			sizeof(buf), buf);
	return p == NULL ? 0 : (uint32_t)be_val(p, sizeof(buf));
}

static void
print_fields(const struct rte_mbuf *m, const struct roce_pkt_meta *meta,
		const struct frame_info *fi)
{
	unsigned int i;

	if (meta->type != ROCE_PKT_ROCE)
		return;
	printf("%" PRIu64, fi->no);
	for (i = 0; i < RTE_DIM(cols); i++) {
		putchar('\t');
		col_print(m, meta, &cols[i], fi);
	}
	/* A frame cut by the snap length lost its ICRC: tshark leaves the field empty too. */
	if (fi->caplen < fi->origlen)
		printf("\t\t%u\n", meta->payload_len);
	else
		printf("\t0x%08" PRIx32 "\t%u\n", icrc_wire(m, meta), meta->payload_len);
}

/* What an ACK says, e.g. "NAK PSN-SEQ-ERR msn 12". */
static void
print_aeth(const struct rte_mbuf *m, const struct roce_pkt_meta *meta)
{
	const struct roce_aeth *aeth = roce_pkt_hdr(m, meta, ROCE_HDR_AETH);
	uint8_t syn = roce_aeth_syndrome(aeth);
	const char *kind = aeth_kinds[syn >> 5];
	unsigned int low = syn & 0x1F;

	printf("  %s", kind != NULL ? kind : "RESERVED");
	if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK && low < RTE_DIM(nak_codes) &&
			nak_codes[low] != NULL)
		printf(" %s", nak_codes[low]);
	else if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK)
		printf(" timer %u", low);
	else if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK)
		printf(" credits %u", low);
	else
		printf(" code %u", low);
	printf(" msn %u", roce_aeth_msn(aeth));
}

static void
print_header(void)
{
	printf("%7s  %-5s  %-20s  %-8s  %-8s  %s  %7s  %s\n", "frame", "type", "opcode",
		"dest-qp", "psn", "A", "payload", "info");
}

static uint32_t
be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static void
print_dir(const struct frame_info *fi)
{
	switch (fi->flags & ROCE_PCAP_DIR_MASK) {
	case ROCE_PCAP_DIR_IN:
		printf("  [rx]");
		break;
	case ROCE_PCAP_DIR_OUT:
		printf("  [tx]");
		break;
	default:
		break;
	}
}

/* A frame whose headers the snap length cut: what was captured of them, from the bytes. */
static void
print_trunc(const struct rte_mbuf *m, const struct frame_info *fi)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	int cut;
	uint32_t l4 = frame_l4(p, fi->caplen, &cut), bth = l4 + 8;

	printf("%7" PRIu64 "  %-5s", fi->no, "TRUNC");
	/* The BTH was captured: its opcode, QP and PSN are known (the headers after it are not). */
	if (l4 != 0 && bth + BTH_LEN <= fi->caplen && be16(p + l4 + 2) == ROCE_UDP_PORT)
		printf("  %-20s  0x%06x  0x%06x  %c  %7s", roce_opcode_name(p[bth]),
			be24(p + bth + 5), be24(p + bth + 9), p[bth + 8] & 0x80 ? '1' : '0', "-");
	printf("  headers cut by the snap length: %u of %u bytes captured, %u needed",
		fi->caplen, fi->origlen, fi->hdr_need);
	print_dir(fi);
	putchar('\n');
}

static void
print_line(const struct rte_mbuf *m, const struct roce_pkt_meta *meta,
		const struct frame_info *fi)
{
	printf("%7" PRIu64 "  %-5s", fi->no, roce_pkt_type_name(meta->type));
	if (meta->type == ROCE_PKT_ROCE) {
		printf("  %-20s  0x%06x  0x%06x  %c  %7u", roce_opcode_name(meta->opcode),
			meta->qpn, meta->psn, meta->flags & ROCE_PKT_F_ACKREQ ? '1' : '0',
			meta->payload_len);
		if ((meta->mask & ROCE_M_AETH) &&
				captured(m, fi, roce_pkt_hdr(m, meta, ROCE_HDR_AETH), AETH_LEN))
			print_aeth(m, meta);
	} else if (meta->type == ROCE_PKT_DROP) {
		printf("  %s: %s", roce_drop_reason_name(meta->reason),
			roce_drop_reason_desc(meta->reason));
	}
	if (fi->caplen < fi->origlen)
		printf("  (truncated: %u of %u bytes captured%s)", fi->caplen, fi->origlen,
			meta->type == ROCE_PKT_ROCE ? ", ICRC not checked" : "");
	print_dir(fi);
	putchar('\n');
}

static void
verify_frame(struct dump *d, const struct roce_pkt_meta *meta, const struct frame_info *fi)
{
	/* Without its ICRC a cut frame is neither valid nor invalid. */
	if (fi->caplen < fi->origlen) {
		d->verify_unchecked++;
		return;
	}
	if (meta->type == ROCE_PKT_ROCE) {
		d->verify_ok++;
		return;
	}
	if (!fi->udp4791)
		return;
	if (d->opt->verify && d->verify_bad == VERIFY_LIST_MAX)
		fprintf(stderr, PROG ": %s: further invalid frames not listed\n", d->file);
	if (d->opt->verify && d->verify_bad++ < VERIFY_LIST_MAX)
		fprintf(stderr, PROG ": %s: frame %" PRIu64 ": UDP/4791 but %s %s (%s)\n",
			d->file, fi->no, roce_pkt_type_name(meta->type),
			roce_drop_reason_name(meta->reason), roce_drop_reason_desc(meta->reason));
}

static void
frame_done(struct dump *d, const struct rte_mbuf *m, const struct frame_info *fi)
{
	const struct roce_pkt_meta *meta = roce_pkt_meta(m);

	d->frames++;
	d->truncated += fi->caplen < fi->origlen;
	if (fi->hdr_need > fi->caplen) {
		/* The verdict would rest on the zeros that stand in for what was not captured. */
		d->trunc_hdrs++;
		d->verify_unchecked++;
		if (d->opt->mode == OUT_LINES)
			print_trunc(m, fi);
		return;
	}
	if (meta->type == ROCE_PKT_ROCE) {
		d->op_pkts[meta->opcode]++;
		d->op_bytes[meta->opcode] += meta->payload_len;
	}
	verify_frame(d, meta, fi);
	if (d->opt->mode == OUT_LINES)
		print_line(m, meta, fi);
	else if (d->opt->mode == OUT_FIELDS)
		print_fields(m, meta, fi);
}

static void
burst_flush(struct dump *d, unsigned int flags)
{
	uint16_t i;

	if (d->nb == 0)
		return;
	roce_classify_burst(d->pkts, d->nb, flags, &d->stats);
	for (i = 0; i < d->nb; i++)
		frame_done(d, d->pkts[i], &d->info[i]);
	rte_pktmbuf_free_bulk(d->pkts, d->nb);
	d->nb = 0;
}

/* A pcapng record of an interface that is not Ethernet: numbered, not decoded. */
static void
other_link(struct dump *d, uint64_t no)
{
	d->frames++;
	d->other_link++;
	if (d->opt->mode != OUT_LINES)
		return;
	printf("%7" PRIu64 "  %-5s  link type %u of interface %u: not decoded\n", no, "LINK",
		rec.linktype, rec.iface);
}

static int
burst_add(struct dump *d, uint64_t no)
{
	uint32_t len = rec.caplen;
	int cut = rec.caplen < rec.origlen;
	struct rte_mbuf *m;

	if (rec.linktype != ROCE_PCAP_LINKTYPE_ETHERNET) {
		burst_flush(d, 0);
		other_link(d, no);
		return 0;
	}
	if (cut) {
		/* Classified alone at its original length, the missing bytes zero and the ICRC
		 * not checked: the lengths in its headers then agree with the frame. */
		burst_flush(d, 0);
		len = RTE_MIN(rec.origlen, (uint32_t)ROCE_PCAP_SNAP_MAX);
		memset(rec.data + rec.caplen, 0, len - rec.caplen);
	}
	m = mbuf_from(d->mp, rec.data, len, d->seg_cap);
	if (m == NULL && d->nb > 0) {
		/* Chains of small segments drain the pool: classify what we hold, retry. */
		burst_flush(d, 0);
		m = mbuf_from(d->mp, rec.data, len, d->seg_cap);
	}
	if (m == NULL)
		return -ENOMEM;
	d->pkts[d->nb] = m;
	d->info[d->nb] = (struct frame_info){
		.no = no,
		.caplen = rec.caplen,
		.origlen = rec.origlen,
		.flags = rec.flags,
		.udp4791 = frame_udp4791(rec.data, rec.caplen),
		.hdr_need = cut ? frame_hdr_need(rec.data, rec.caplen) : 0,
	};
	if (++d->nb == BURST || cut)
		burst_flush(d, cut ? ROCE_CLASSIFY_NO_ICRC : 0);
	return 0;
}

static void
open_error(const char *path, int err, const struct roce_pcap *pc)
{
	if (err == -EPROTONOSUPPORT)
		fprintf(stderr, PROG ": %s: link type %" PRIu32 " is not Ethernet\n", path,
			pc->linktype);
	else if (err == -EINVAL && pc->ng)
		fprintf(stderr, PROG ": %s: damaged pcapng section header: %s\n", path,
			pc->error);
	else if (err == -EINVAL)
		fprintf(stderr, PROG ": %s: not a classic pcap or pcapng file\n", path);
	else
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(-err));
}

/* @return 0, or -1 after reporting why the file could not be read to its end. */
static int
dump_file(struct dump *d, const char *path)
{
	struct roce_pcap pc;
	int ret;

	ret = roce_pcap_open(&pc, path);
	if (ret < 0) {
		open_error(path, ret, &pc);
		return -1;
	}
	d->file = path;
	if (d->opt->nb_files > 1 && (d->opt->mode == OUT_LINES || d->opt->mode == OUT_FIELDS))
		printf("# %s\n", path);
	if (d->opt->mode == OUT_LINES)
		print_header();
	while ((ret = roce_pcap_next(&pc, &rec)) > 0) {
		ret = burst_add(d, pc.records);
		if (ret < 0)
			break;
	}
	burst_flush(d, 0);
	if (ret == -ENOMEM)
		fprintf(stderr, PROG ": %s: record %" PRIu64 ": out of mbufs\n", path, pc.records);
	else if (ret < 0 && pc.ng)
		fprintf(stderr, PROG ": %s: record %" PRIu64 ": damaged block at byte %" PRIu64
			": %s\n", path, pc.records + 1, pc.off, pc.error);
	else if (ret < 0)
		fprintf(stderr, PROG ": %s: record %" PRIu64 ": damaged record or truncated file\n",
			path, pc.records + 1);
	roce_pcap_close(&pc);
	return ret < 0 ? -1 : 0;
}

/* Check every file's header before starting DPDK, so that a wrong name fails at once. */
static int
files_check(const struct options *opt)
{
	struct roce_pcap pc;
	int i, ret;

	for (i = 0; i < opt->nb_files; i++) {
		ret = roce_pcap_open(&pc, opt->files[i]);
		if (ret < 0) {
			open_error(opt->files[i], ret, &pc);
			return -1;
		}
		roce_pcap_close(&pc);
	}
	return 0;
}

static void
print_table(const struct dump *d, const char *impl)
{
	uint64_t pkts = 0, bytes = 0;
	unsigned int i;

	printf("classifier: %s\n", impl);
	printf("files: %d  frames: %" PRIu64 "  truncated by snap length: %" PRIu64
		" (headers cut: %" PRIu64 ")", d->opt->nb_files, d->frames, d->truncated,
		d->trunc_hdrs);
	if (d->other_link != 0)
		printf("  not Ethernet: %" PRIu64, d->other_link);
	printf("\n\n");
	printf("%6s  %-20s  %10s  %14s\n", "opcode", "name", "packets", "payload bytes");
	for (i = 0; i < RTE_DIM(d->op_pkts); i++) {
		if (d->op_pkts[i] == 0)
			continue;
		printf("%6u  %-20s  %10" PRIu64 "  %14" PRIu64 "\n", i, roce_opcode_name(i),
			d->op_pkts[i], d->op_bytes[i]);
		pkts += d->op_pkts[i];
		bytes += d->op_bytes[i];
	}
	printf("%6s  %-20s  %10" PRIu64 "  %14" PRIu64 "\n\n", "", "total", pkts, bytes);
	printf("%-6s  %10s\n", "type", "frames");
	for (i = 0; i < ROCE_PKT_TYPE_NUM; i++)
		if (d->stats.type[i] != 0)
			printf("%-6s  %10" PRIu64 "\n", roce_pkt_type_name(i), d->stats.type[i]);
	if (d->stats.type[ROCE_PKT_DROP] == 0)
		return;
	printf("\n%-12s  %10s  %s\n", "drop reason", "frames", "meaning");
	for (i = ROCE_DROP_NONE + 1; i < ROCE_DROP_NUM; i++)
		if (d->stats.drop[i] != 0)
			printf("%-12s  %10" PRIu64 "  %s\n", roce_drop_reason_name(i),
				d->stats.drop[i], roce_drop_reason_desc(i));
}

static int
run(const struct options *opt)
{
	struct dump *d = calloc(1, sizeof(*d));
	int i, status = 0;

	if (d == NULL) {
		fprintf(stderr, PROG ": out of memory\n");
		return EXIT_ERR;
	}
	d->opt = opt;
	d->seg_cap = opt->seg != 0 ? opt->seg : SEG_MAX;
	d->mp = pool_create(d->seg_cap);
	if (d->mp == NULL) {
		free(d);
		return EXIT_ERR;
	}
	for (i = 0; i < opt->nb_files && status == 0; i++)
		if (dump_file(d, opt->files[i]) < 0)
			status = EXIT_ERR;
	if (opt->mode == OUT_TABLE)
		print_table(d, roce_classify_impl_name(opt->impl));
	if (opt->verify) {
		fprintf(stderr, PROG ": verify: %" PRIu64 " RoCE frames valid, %" PRIu64
			" UDP/4791 frames invalid, %" PRIu64 " truncated (not checkable)\n",
			d->verify_ok, d->verify_bad, d->verify_unchecked);
		if (status == 0 && d->verify_bad != 0)
			status = EXIT_BAD;
	}
	rte_mempool_free(d->mp);
	free(d);
	return status;
}

int
main(int argc, char **argv)
{
	struct options opt = { .mode = OUT_LINES, .impl = ROCE_CLASSIFY_AUTO };
	int ret, status;

	ret = parse_args(argc, argv, &opt);
	if (ret != 0)
		return ret > 0 ? 0 : EXIT_ERR;
	if (files_check(&opt) < 0 || eal_start() < 0)
		return EXIT_ERR;
	if (opt.list_impls) {
		impl_list();
		status = 0;
	} else if (impl_select(opt.impl) < 0) {
		status = EXIT_ERR;
	} else {
		status = run(&opt);
	}
	rte_eal_cleanup();
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, PROG ": error writing standard output\n");
		status = EXIT_ERR;
	}
	return status;
}
