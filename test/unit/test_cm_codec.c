/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cm's codecs against ground truth: every MAD of the rxe rdma_cm captures
 * (../shared/captures/roce_rdma_cm_rping.pcap, roce_rdma_cm_ib_write_bw_R.pcap), reached
 * through lib/pcapfile and lib/wire, parsed and checked field by field against tshark's
 * decode next to them, then rebuilt byte for byte from the parsed struct; the RDMA CM header
 * and service ID of each REQ the same way; malformed MADs, headers and structs refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_mbuf.h>

#include "roce_test.h"
#include "roce_classify.h"
#include "roce_icrc.h"
#include "roce_opcode.h"
#include "roce_pcapfile.h"
#include "roce_pkt.h"
#include "roce_mad.h"
#include "roce_cm_msg.h"
#include "roce_cma.h"

#define MAX_MADS 16
#define MAX_KEYS 160

static struct rte_mempool *pool;

struct cap_mad {
	unsigned int frame;		/* 1-based, as in the decode */
	uint8_t mad[ROCE_MAD_SIZE];
};

/* One frame's decoded lines from "MAD Header" on: "Name: value", bit patterns cut off. */
struct dec_frame {
	unsigned int frame;
	unsigned int n;
	char key[MAX_KEYS][64];
	char val[MAX_KEYS][160];
};

static struct cap_mad mads[MAX_MADS];
static struct dec_frame decs[MAX_MADS];
/* The first MAD frame of the last capture read, whole: a carrier for MADs we build. */
static uint8_t carrier[512];
static uint32_t carrier_len;

/* The MADs of a capture: UD SEND Only to QP1 from QP1, the payload whole. */
static unsigned int
load_mads(const char *name)
{
	static struct roce_pcap_rec rec;
	struct roce_pcap pc;
	char path[512];
	unsigned int frame = 0, n = 0;

	snprintf(path, sizeof(path), "%s/%s", rt_captures_dir(), name);
	if (roce_pcap_open(&pc, path) != 0) {
		RT_CHECK(0, "cannot open %s", path);
		return 0;
	}
	while (roce_pcap_next(&pc, &rec) == 1) {
		struct rte_mbuf *m;
		struct roce_wire_stats st = {0};
		const struct roce_pkt_meta *meta;
		uint8_t buf[2048];

		frame++;
		if (rec.caplen > sizeof(buf))
			continue;
		m = rt_mbuf(pool, rec.data, rec.caplen, 0);
		if (m == NULL || roce_classify_burst(&m, 1, 0, &st) != 1) {
			rte_pktmbuf_free(m);
			continue;
		}
		meta = roce_pkt_meta(m);
		if (meta->opcode == ROCE_OPCODE(UD, SEND_ONLY) && meta->qpn == 1) {
			RT_CHECK(meta->payload_len == ROCE_MAD_SIZE && n < MAX_MADS,
					"%s frame %u: a %u-byte MAD", name, frame,
					meta->payload_len);
			if (meta->payload_len == ROCE_MAD_SIZE && n < MAX_MADS) {
				rt_mbuf_copy(m, buf, sizeof(buf));
				if (n == 0 && rec.caplen <= sizeof(carrier)) {
					memcpy(carrier, buf, rec.caplen);
					carrier_len = rec.caplen;
				}
				mads[n].frame = frame;
				memcpy(mads[n].mad, buf + meta->payload_off, ROCE_MAD_SIZE);
				n++;
			}
		}
		rte_pktmbuf_free(m);
	}
	roce_pcap_close(&pc);
	return n;
}

static void
trim(char *s)
{
	size_t l = strlen(s);

	while (l > 0 && (s[l - 1] == '\n' || s[l - 1] == ' ' || s[l - 1] == '\r'))
		s[--l] = '\0';
}

/* The decode's frames that have a MAD header, in order. */
static unsigned int
load_decode_path(const char *path)
{
	char line[512];
	unsigned int n = 0, frame = 0;
	int in_mad = 0;
	FILE *f;

	f = fopen(path, "r");
	if (f == NULL) {
		RT_CHECK(0, "cannot open %s", path);
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *s = line, *colon;
		struct dec_frame *d;

		if (sscanf(line, "Frame %u:", &frame) == 1) {
			in_mad = 0;
			continue;
		}
		while (*s == ' ')
			s++;
		if (strncmp(s, "MAD Header", 10) == 0) {
			if (n == MAX_MADS)
				break;
			decs[n].frame = frame;
			decs[n].n = 0;
			n++;
			in_mad = 1;
			continue;
		}
		if (!in_mad || strncmp(s, "Invariant CRC", 13) == 0) {
			in_mad = 0;
			continue;
		}
		/* "1010 0... = Name: value" */
		if (strstr(s, " = ") != NULL && (s[0] == '0' || s[0] == '1' || s[0] == '.'))
			s = strstr(s, " = ") + 3;
		colon = strstr(s, ": ");
		d = &decs[n - 1];
		if (colon == NULL || d->n == MAX_KEYS)
			continue;
		*colon = '\0';
		snprintf(d->key[d->n], sizeof(d->key[0]), "%.63s", s);
		snprintf(d->val[d->n], sizeof(d->val[0]), "%.159s", colon + 2);
		trim(d->val[d->n]);
		d->n++;
	}
	fclose(f);
	return n;
}

static unsigned int
load_decode(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", rt_captures_dir(), name);
	return load_decode_path(path);
}

static const char *
dec(const struct dec_frame *d, const char *key)
{
	unsigned int i;

	for (i = 0; i < d->n; i++)
		if (strcmp(d->key[i], key) == 0)
			return d->val[i];
	return NULL;
}

/* A number of the decode: "0x1c06", "65535", or "Send() (0x03)". */
static int
dec_u(const struct dec_frame *d, const char *key, uint64_t *v)
{
	const char *s = dec(d, key), *p;

	if (s == NULL)
		return -1;
	p = strrchr(s, '(');
	if (p != NULL)
		s = p + 1;
	*v = strtoull(s, NULL, 0);
	return 0;
}

#define CHK_U(d, key, val) do { \
	uint64_t v_; \
	int ok_ = dec_u((d), (key), &v_) == 0; \
	RT_CHECK(ok_ && v_ == (uint64_t)(val), "frame %u %s: decode %s, parsed 0x%" PRIx64, \
			(d)->frame, (key), ok_ ? dec((d), (key)) : "(missing)", \
			(uint64_t)(val)); \
} while (0)

/* A GID of the decode: an IPv4 address (IPv4-mapped) or 32 hex digits. */
static void
chk_gid(const struct dec_frame *d, const char *key, const uint8_t gid[16])
{
	const char *s = dec(d, key);
	uint8_t want[16] = {0}, ip4[4];
	unsigned int i;

	if (s != NULL && inet_pton(AF_INET, s, ip4) == 1) {
		roce_cma_ip4_mapped(want, ip4);
	} else if (s != NULL && strlen(s) == 32) {
		for (i = 0; i < 16; i++)
			sscanf(s + 2 * i, "%2hhx", &want[i]);
	} else {
		RT_CHECK(0, "frame %u %s: decode %s", d->frame, key, s ? s : "(missing)");
		return;
	}
	RT_CHECK(memcmp(want, gid, 16) == 0, "frame %u %s: %s", d->frame, key, s);
}

/* Hex bytes of the decode, cut at "…" by tshark: the prefix it shows must match. */
static void
chk_hex_prefix(const struct dec_frame *d, const char *key, const uint8_t *p, size_t len)
{
	const char *s = dec(d, key);
	size_t i;
	unsigned int b;

	if (s == NULL) {
		RT_CHECK(0, "frame %u %s missing", d->frame, key);
		return;
	}
	for (i = 0; i < len && sscanf(s + 2 * i, "%2x", &b) == 1 &&
			s[2 * i + 1] != '\0'; i++) {
		if (b != p[i])
			break;
	}
	RT_CHECK(i >= 32 || i == len, "frame %u %s: %zu bytes agree with %s", d->frame, key, i,
			s);
}

static void
chk_ip(const struct dec_frame *d, const char *key, const uint8_t addr[16])
{
	const char *s = dec(d, key);
	uint8_t ip4[4];

	RT_CHECK(s != NULL && inet_pton(AF_INET, s, ip4) == 1 && roce_cma_is_ip4_mapped(addr) &&
			memcmp(addr + 12, ip4, 4) == 0, "frame %u %s: %s", d->frame, key,
			s ? s : "(missing)");
}

static void
chk_hdr(const struct dec_frame *d, const struct roce_mad_hdr *h)
{
	CHK_U(d, "Base Version", h->base_version);
	CHK_U(d, "Management Class", h->mgmt_class);
	CHK_U(d, "Class Version", h->class_version);
	CHK_U(d, "Method", h->method);
	CHK_U(d, "Status", h->status);
	CHK_U(d, "Class Specific", h->class_specific);
	CHK_U(d, "Transaction ID", h->tid);
	CHK_U(d, "Attribute ID", h->attr_id);
	CHK_U(d, "Attribute Modifier", h->attr_mod);
}

static void
chk_path(const struct dec_frame *d, const char *which, const struct roce_cm_path *p)
{
	char k[96];

#define PK(name) (snprintf(k, sizeof(k), "%s %s", which, (name)), k)
	CHK_U(d, PK("Local Port LID"), p->local_lid);
	CHK_U(d, PK("Remote Port LID"), p->remote_lid);
	chk_gid(d, PK("Local Port GID"), p->local_gid);
	chk_gid(d, PK("Remote Port GID"), p->remote_gid);
	/*
	 * tshark's REQ dissector reads the flow label word a byte off: it shows the top 12 of
	 * the 20 bits (0x00ca5 for 0xca5f9), and garbage for the 6 reserved bits and the packet
	 * rate after it. The field is checked against what tshark does show; the rate and the
	 * full label against the bytes through the rebuild.
	 */
	CHK_U(d, PK("Flow Label"), p->flow_label >> 8);
	CHK_U(d, PK("Traffic Class"), p->traffic_class);
	CHK_U(d, PK("Hop Limit"), p->hop_limit);
	CHK_U(d, PK("SL"), p->sl);
	CHK_U(d, PK("Subnet Local"), p->subnet_local);
	CHK_U(d, PK("Local ACK Timeout"), p->local_ack_timeout);
#undef PK
}

static void
chk_req(const struct dec_frame *d, const struct roce_cm_req *r, const uint8_t *mad)
{
	struct roce_cma_hdr ch;
	uint8_t pd[ROCE_CM_REQ_PDATA_LEN];
	uint16_t ps, port;

	CHK_U(d, "Local Communication ID", r->local_comm_id);
	CHK_U(d, "Prefix", r->service_id >> 24);
	CHK_U(d, "Protocol", (r->service_id >> 16) & 0xff);
	CHK_U(d, "Destination Port", r->service_id & 0xffff);
	CHK_U(d, "Local CA GUID", r->local_ca_guid);
	CHK_U(d, "Local Q_Key", r->local_qkey);
	CHK_U(d, "Local QPN", r->local_qpn);
	CHK_U(d, "Responder Resources", r->responder_resources);
	CHK_U(d, "Local EECN", r->local_eecn);
	CHK_U(d, "Initiator Depth", r->initiator_depth);
	CHK_U(d, "Remote EECN", r->remote_eecn);
	CHK_U(d, "Remote CM Response Timeout", r->remote_cm_response_timeout);
	CHK_U(d, "Transport Service Type", r->transport_type);
	CHK_U(d, "End-to-End Flow Control", r->e2e_flow_control);
	CHK_U(d, "Starting PSN", r->starting_psn);
	CHK_U(d, "Local CM Response Timeout", r->local_cm_response_timeout);
	CHK_U(d, "Retry Count", r->retry_count);
	CHK_U(d, "Partition Key", r->pkey);
	CHK_U(d, "Path Packet Payload MTU", r->path_mtu);
	CHK_U(d, "RDC Exists", r->rdc_exists);
	CHK_U(d, "RNR Retry Count", r->rnr_retry_count);
	CHK_U(d, "Max CM Retries", r->max_cm_retries);
	CHK_U(d, "SRQ", r->srq);
	CHK_U(d, "Extended Transport", r->ext_transport_type);
	chk_path(d, "Primary", &r->primary);
	chk_path(d, "Alternate", &r->alternate);
	/* The bytes under tshark's broken flow label field, read directly. */
	RT_CHECK(r->primary.flow_label == ((uint32_t)mad[24 + 88] << 12 |
			(uint32_t)mad[24 + 89] << 4 | mad[24 + 90] >> 4) &&
			r->primary.packet_rate == (mad[24 + 91] & 0x3f),
			"frame %u: flow label %x rate %u", d->frame, r->primary.flow_label,
			r->primary.packet_rate);

	/* rdma_cm's header, and the RDMA_PS_TCP service ID. */
	RT_CHECK(roce_cma_hdr_parse(&ch, r->private_data, sizeof(r->private_data)) == 0,
			"frame %u: cma_hdr", d->frame);
	CHK_U(d, "IP CM Major Version", ch.cma_version >> 4);
	CHK_U(d, "IP CM Minor Version", ch.cma_version & 0xf);
	CHK_U(d, "IP CM IP Version", ch.ip_version);
	CHK_U(d, "IP CM Source Port", ch.port);
	chk_ip(d, "IP CM Source IP", ch.src_addr);
	chk_ip(d, "IP CM Destination IP", ch.dst_addr);
	chk_hex_prefix(d, "IP CM Consumer PrivateData", r->private_data + ROCE_CMA_HDR_LEN,
			ROCE_CM_REQ_PDATA_LEN - ROCE_CMA_HDR_LEN);
	/* The CM's path GIDs are the same addresses, the other way round for the remote. */
	RT_CHECK(memcmp(ch.src_addr, r->primary.local_gid, 16) == 0 &&
			memcmp(ch.dst_addr, r->primary.remote_gid, 16) == 0,
			"frame %u: cma addresses are the path's GIDs", d->frame);
	memcpy(pd, r->private_data, sizeof(pd));
	RT_CHECK(roce_cma_hdr_build(&ch, pd, sizeof(pd)) == ROCE_CMA_HDR_LEN &&
			memcmp(pd, r->private_data, sizeof(pd)) == 0,
			"frame %u: cma_hdr rebuilt byte for byte", d->frame);
	RT_CHECK(roce_cma_service_id_parse(r->service_id, &ps, &port) == 0 &&
			ps == ROCE_CMA_PS_TCP &&
			ROCE_CMA_SERVICE_ID(ps, port) == r->service_id,
			"frame %u: service ID %" PRIx64 " is RDMA_PS_TCP's", d->frame,
			r->service_id);
}

static void
chk_rep(const struct dec_frame *d, const struct roce_cm_rep *r)
{
	CHK_U(d, "Local Communication ID", r->local_comm_id);
	CHK_U(d, "Remote Communication ID", r->remote_comm_id);
	CHK_U(d, "Local Q_Key", r->local_qkey);
	CHK_U(d, "Local QPN", r->local_qpn);
	CHK_U(d, "Local EE Context Number", r->local_eecn);
	CHK_U(d, "Starting PSN", r->starting_psn);
	CHK_U(d, "Responder Resources", r->responder_resources);
	CHK_U(d, "Initiator Depth", r->initiator_depth);
	CHK_U(d, "Target ACK Delay", r->target_ack_delay);
	CHK_U(d, "Failover Accepted", r->failover_accepted);
	CHK_U(d, "End-To-End Flow Control", r->e2e_flow_control);
	CHK_U(d, "RNR Retry Count", r->rnr_retry_count);
	CHK_U(d, "SRQ", r->srq);
	CHK_U(d, "Local CA GUID", r->local_ca_guid);
	chk_hex_prefix(d, "PrivateData", r->private_data, sizeof(r->private_data));
}

static void
chk_capture(const char *pcap, const char *txt, unsigned int want)
{
	unsigned int n = load_mads(pcap), nd = load_decode(txt), i;

	RT_CHECK(n == want && nd == want, "%s: %u MADs, %u decoded, %u expected", pcap, n, nd,
			want);
	for (i = 0; i < n && i < nd; i++) {
		const struct dec_frame *d = &decs[i];
		const uint8_t *mad = mads[i].mad;
		struct roce_cm_msg m;
		uint8_t out[ROCE_MAD_SIZE];
		enum roce_cm_verdict v;

		RT_CHECK(mads[i].frame == d->frame, "MAD %u: frame %u, decode's %u", i,
				mads[i].frame, d->frame);
		v = roce_cm_parse(&m, mad, ROCE_MAD_SIZE);
		RT_CHECK(v == ROCE_CM_OK, "frame %u parsed: %s", d->frame,
				roce_cm_verdict_name(v));
		if (v != ROCE_CM_OK)
			continue;
		chk_hdr(d, &m.hdr);
		chk_hex_prefix(d, "MAD Data Payload", mad + ROCE_MAD_HDR_LEN, ROCE_MAD_DATA_LEN);
		RT_CHECK(roce_cm_linux_action(m.hdr.attr_id) == ROCE_CM_ACT_HANDLE,
				"frame %u: %s is handled", d->frame,
				roce_cm_attr_name(m.hdr.attr_id));
		switch (m.hdr.attr_id) {
		case ROCE_CM_ATTR_REQ:
			chk_req(d, &m.req, mad);
			break;
		case ROCE_CM_ATTR_REP:
			chk_rep(d, &m.rep);
			break;
		case ROCE_CM_ATTR_RTU:
			CHK_U(d, "Local Communication ID", m.rtu.local_comm_id);
			CHK_U(d, "Remote Communication ID", m.rtu.remote_comm_id);
			chk_hex_prefix(d, "PrivateData", m.rtu.private_data,
					sizeof(m.rtu.private_data));
			break;
		case ROCE_CM_ATTR_DREQ:
			CHK_U(d, "Local Communication ID", m.dreq.local_comm_id);
			CHK_U(d, "Remote Communication ID", m.dreq.remote_comm_id);
			CHK_U(d, "Remote QPN/EECN", m.dreq.remote_qpn_eecn);
			chk_hex_prefix(d, "PrivateData", m.dreq.private_data,
					sizeof(m.dreq.private_data));
			break;
		case ROCE_CM_ATTR_DREP:
			CHK_U(d, "Local Communication ID", m.drep.local_comm_id);
			CHK_U(d, "Remote Communication ID", m.drep.remote_comm_id);
			chk_hex_prefix(d, "PrivateData", m.drep.private_data,
					sizeof(m.drep.private_data));
			break;
		default:
			RT_CHECK(0, "frame %u: unexpected attribute %x", d->frame, m.hdr.attr_id);
		}
		memset(out, 0xA5, sizeof(out));
		RT_CHECK(roce_cm_build(&m, out, sizeof(out)) == ROCE_MAD_SIZE &&
				memcmp(out, mad, ROCE_MAD_SIZE) == 0,
				"frame %u (%s) rebuilt byte for byte", d->frame,
				roce_cm_attr_name(m.hdr.attr_id));
	}
}

static void
test_rping_capture(void)
{
	/* REQ, REP, RTU, DREQ, DREP */
	chk_capture("roce_rdma_cm_rping.pcap", "roce_rdma_cm_rping.txt", 5);
}

static void
test_write_bw_capture(void)
{
	/* Two connections: REQ/REP/RTU twice, then DREQ/DREP each way. */
	chk_capture("roce_rdma_cm_ib_write_bw_R.pcap", "roce_rdma_cm_ib_write_bw_R.txt", 10);
}

/* A valid REQ (the first MAD of the rping capture, loaded by the test before). */
static uint8_t req_mad[ROCE_MAD_SIZE];

static enum roce_cm_verdict
parse_mod(unsigned int off, uint8_t val)
{
	uint8_t b[ROCE_MAD_SIZE];
	struct roce_cm_msg m;

	memcpy(b, req_mad, sizeof(b));
	b[off] = val;
	return roce_cm_parse(&m, b, sizeof(b));
}

/* Attribute @attr over @fill's bytes, header made right; a field at data byte @off set. */
static enum roce_cm_verdict
parse_attr(uint16_t attr, int off, uint8_t val)
{
	uint8_t b[ROCE_MAD_SIZE] = {0};
	struct roce_mad_hdr h;
	struct roce_cm_msg m;

	roce_cm_hdr_init(&h, attr, 1);
	roce_mad_hdr_build(&h, b);
	if (off >= 0)
		b[ROCE_MAD_HDR_LEN + off] = val;
	return roce_cm_parse(&m, b, sizeof(b));
}

static void
test_malformed(void)
{
	uint8_t b[ROCE_MAD_SIZE + 1];
	struct roce_cm_msg m;
	struct roce_mad_hdr h;
	uint16_t bad_attrs[] = { 0x0000, ROCE_CM_ATTR_CLASS_PORT_INFO, 0x000F, 0x001B, 0xFFFF };
	unsigned int i;

	memcpy(req_mad, mads[0].mad, sizeof(req_mad));
	RT_CHECK(roce_cm_parse(&m, req_mad, sizeof(req_mad)) == ROCE_CM_OK &&
			m.hdr.attr_id == ROCE_CM_ATTR_REQ, "the REQ parses");
	memcpy(b, req_mad, ROCE_MAD_SIZE);
	b[ROCE_MAD_SIZE] = 0;
	RT_CHECK(roce_cm_parse(&m, b, 0) == ROCE_CM_BAD_LEN &&
			roce_cm_parse(&m, b, ROCE_MAD_HDR_LEN) == ROCE_CM_BAD_LEN &&
			roce_cm_parse(&m, b, ROCE_MAD_SIZE - 1) == ROCE_CM_BAD_LEN &&
			roce_cm_parse(&m, b, ROCE_MAD_SIZE + 1) == ROCE_CM_BAD_LEN,
			"a MAD is 256 bytes");
	RT_CHECK(roce_mad_hdr_parse(&h, b, ROCE_MAD_HDR_LEN - 1) == -EMSGSIZE &&
			roce_mad_hdr_parse(&h, b, ROCE_MAD_HDR_LEN) == 0, "header length");
	RT_CHECK(parse_mod(0, 2) == ROCE_CM_BAD_BASE_VERSION &&
			parse_mod(0, 0x80) == ROCE_CM_BAD_BASE_VERSION &&
			parse_mod(0, 0) == ROCE_CM_BAD_BASE_VERSION, "base version");
	RT_CHECK(parse_mod(1, ROCE_MAD_CLASS_SUBN_ADM) == ROCE_CM_BAD_CLASS &&
			parse_mod(1, 0x87) == ROCE_CM_BAD_CLASS, "class");
	RT_CHECK(parse_mod(2, 1) == ROCE_CM_BAD_CLASS_VERSION &&
			parse_mod(2, 3) == ROCE_CM_BAD_CLASS_VERSION, "class version");
	RT_CHECK(parse_mod(3, ROCE_MAD_METHOD_GET) == ROCE_CM_BAD_METHOD &&
			parse_mod(3, ROCE_MAD_METHOD_GET_RESP) == ROCE_CM_BAD_METHOD &&
			parse_mod(3, 0x83) == ROCE_CM_BAD_METHOD, "method");
	for (i = 0; i < RTE_DIM(bad_attrs); i++) {
		RT_CHECK(parse_attr(bad_attrs[i], -1, 0) == ROCE_CM_BAD_ATTR &&
				roce_cm_attr_name(bad_attrs[i]) == NULL &&
				roce_cm_linux_action(bad_attrs[i]) == ROCE_CM_ACT_DROP,
				"attribute %#x refused and dropped", bad_attrs[i]);
	}
	/* Range-limited fields: the REJ's and APR's/SIDR_REP's information lengths, 2-bit refs. */
	RT_CHECK(parse_attr(ROCE_CM_ATTR_REJ, 9, 72 << 1) == ROCE_CM_OK &&
			parse_attr(ROCE_CM_ATTR_REJ, 9, 73 << 1) == ROCE_CM_BAD_FIELD &&
			parse_attr(ROCE_CM_ATTR_REJ, 9, 0xFE) == ROCE_CM_BAD_FIELD &&
			parse_attr(ROCE_CM_ATTR_REJ, 9, 0x01) == ROCE_CM_OK,
			"REJ ARI length at most 72 (the low bit is reserved)");
	RT_CHECK(parse_attr(ROCE_CM_ATTR_REJ, 8, 0x80) == ROCE_CM_OK &&
			parse_attr(ROCE_CM_ATTR_REJ, 8, 0xC0) == ROCE_CM_BAD_FIELD &&
			parse_attr(ROCE_CM_ATTR_MRA, 8, 0x80) == ROCE_CM_OK &&
			parse_attr(ROCE_CM_ATTR_MRA, 8, 0xC0) == ROCE_CM_BAD_FIELD,
			"message rejected / MRAed: 3 refused");
	RT_CHECK(parse_attr(ROCE_CM_ATTR_APR, 8, 72) == ROCE_CM_OK &&
			parse_attr(ROCE_CM_ATTR_APR, 8, 73) == ROCE_CM_BAD_FIELD &&
			parse_attr(ROCE_CM_ATTR_SIDR_REP, 5, 72) == ROCE_CM_OK &&
			parse_attr(ROCE_CM_ATTR_SIDR_REP, 5, 0xFF) == ROCE_CM_BAD_FIELD,
			"APR and SIDR_REP information lengths at most 72");
	for (i = 0; i < ROCE_CM_VERDICT_MAX; i++)
		RT_CHECK(roce_cm_verdict_name(i) != NULL, "verdict %u named", i);
	RT_CHECK(roce_cm_verdict_name(ROCE_CM_VERDICT_MAX) == NULL, "verdict names end");
}

static void
test_reserved_bits(void)
{
	uint8_t b[ROCE_MAD_SIZE], out[ROCE_MAD_SIZE];
	struct roce_cm_msg m, m2;

	/* Reserved bits set in a REQ (bytes 4-7, 24-27, the 6 after the flow label, the 3
	 * after the ACK timeout) are ignored and come back zero. */
	memcpy(b, req_mad, sizeof(b));
	b[24 + 4] = 0xFF;
	b[24 + 24] = 0xFF;
	b[24 + 90] |= 0x0F;
	b[24 + 91] |= 0xC0;
	b[24 + 95] |= 0x07;
	RT_CHECK(roce_cm_parse(&m, b, sizeof(b)) == ROCE_CM_OK &&
			roce_cm_parse(&m2, req_mad, sizeof(req_mad)) == ROCE_CM_OK &&
			memcmp(&m, &m2, sizeof(m)) == 0, "reserved bits ignored");
	RT_CHECK(roce_cm_build(&m, out, sizeof(out)) == ROCE_MAD_SIZE &&
			memcmp(out, req_mad, sizeof(out)) == 0, "and built as zeros");
}

static void
test_build_refusals(void)
{
	struct roce_cm_msg m, good;
	uint8_t out[ROCE_MAD_SIZE];

	RT_CHECK(roce_cm_parse(&good, req_mad, sizeof(req_mad)) == ROCE_CM_OK, "REQ");
	RT_CHECK(roce_cm_build(&good, out, sizeof(out) - 1) == -ENOSPC, "short buffer");
	m = good;
	m.req.local_qpn = 1u << 24;
	RT_CHECK(roce_cm_build(&m, out, sizeof(out)) == -ERANGE, "QPN over 24 bits");
	m = good;
	m.req.primary.flow_label = 1u << 20;
	RT_CHECK(roce_cm_build(&m, out, sizeof(out)) == -ERANGE, "flow label over 20 bits");
	m = good;
	m.req.retry_count = 8;
	RT_CHECK(roce_cm_build(&m, out, sizeof(out)) == -ERANGE, "retry count over 3 bits");
	m = good;
	m.hdr.attr_id = 0x001B;
	RT_CHECK(roce_cm_build(&m, out, sizeof(out)) == -EINVAL, "unknown attribute");
	m = good;
	m.hdr.mgmt_class = ROCE_MAD_CLASS_PERF;
	RT_CHECK(roce_cm_build(&m, out, sizeof(out)) == -EINVAL, "not the CM class");
	m = good;
	m.hdr.class_version = 1;
	RT_CHECK(roce_cm_build(&m, out, sizeof(out)) == -EINVAL, "class version");
	memset(&m, 0, sizeof(m));
	roce_cm_hdr_init(&m.hdr, ROCE_CM_ATTR_REJ, 7);
	m.rej.ari_length = ROCE_CM_REJ_ARI_LEN + 1;
	RT_CHECK(roce_cm_build(&m, out, sizeof(out)) == -ERANGE, "REJ ARI length 73");
	m.rej.ari_length = 0;
	m.rej.reason = ROCE_CM_REJ_INVALID_SERVICE_ID;
	m.rej.message_rejected = ROCE_CM_MSG_REF_REQ;
	RT_CHECK(roce_cm_build(&m, out, sizeof(out)) == ROCE_MAD_SIZE &&
			out[0] == 1 && out[1] == 7 && out[2] == 2 && out[3] == 3 &&
			out[16] == 0 && out[17] == 0x12 && out[15] == 7 &&
			out[24 + 10] == 0 && out[24 + 11] == 8, "REJ invalid service ID built");
}

/* Every attribute: random bytes parsed, built, parsed again: the same struct, the same bytes. */
static void
test_round_trip_all(void)
{
	static const uint16_t attrs[] = { ROCE_CM_ATTR_REQ, ROCE_CM_ATTR_MRA, ROCE_CM_ATTR_REJ,
		ROCE_CM_ATTR_REP, ROCE_CM_ATTR_RTU, ROCE_CM_ATTR_DREQ, ROCE_CM_ATTR_DREP,
		ROCE_CM_ATTR_SIDR_REQ, ROCE_CM_ATTR_SIDR_REP, ROCE_CM_ATTR_LAP,
		ROCE_CM_ATTR_APR };
	static const enum roce_cm_linux_action act[] = { ROCE_CM_ACT_HANDLE,
		ROCE_CM_ACT_HANDLE, ROCE_CM_ACT_HANDLE, ROCE_CM_ACT_HANDLE, ROCE_CM_ACT_HANDLE,
		ROCE_CM_ACT_HANDLE, ROCE_CM_ACT_HANDLE, ROCE_CM_ACT_SIDR_REP,
		ROCE_CM_ACT_MATCH_SIDR, ROCE_CM_ACT_DROP, ROCE_CM_ACT_DROP };
	uint32_t seed = 12345;
	unsigned int a, r, i, ok = 0, tries = 0;

	for (a = 0; a < RTE_DIM(attrs); a++) {
		RT_CHECK(roce_cm_linux_action(attrs[a]) == act[a] &&
				roce_cm_attr_name(attrs[a]) != NULL, "attribute %#x: Linux's action",
				attrs[a]);
		for (r = 0; r < 200; r++) {
			uint8_t b[ROCE_MAD_SIZE], out[ROCE_MAD_SIZE], out2[ROCE_MAD_SIZE];
			struct roce_cm_msg m, m2;
			struct roce_mad_hdr h;

			for (i = 0; i < sizeof(b); i++) {
				seed = seed * 1103515245u + 12345u;
				b[i] = (uint8_t)(seed >> 16);
			}
			roce_cm_hdr_init(&h, attrs[a], seed);
			roce_mad_hdr_build(&h, b);
			tries++;
			if (roce_cm_parse(&m, b, sizeof(b)) != ROCE_CM_OK)
				continue;	/* a range-limited field out of range */
			ok++;
			RT_CHECK(roce_cm_build(&m, out, sizeof(out)) == ROCE_MAD_SIZE &&
					roce_cm_parse(&m2, out, sizeof(out)) == ROCE_CM_OK &&
					memcmp(&m, &m2, sizeof(m)) == 0 &&
					roce_cm_build(&m2, out2, sizeof(out2)) == ROCE_MAD_SIZE &&
					memcmp(out, out2, sizeof(out)) == 0,
					"%s round trip %u", roce_cm_attr_name(attrs[a]), r);
		}
	}
	RT_CHECK(ok > tries / 2, "%u of %u random messages parsed", ok, tries);
}

/*
 * MADs we build, in the captured REQ's frame (ICRC made right), decoded by tshark: the REJ
 * field by field (tshark dissects it; the state machine sends it for unknown service IDs),
 * the header of every other attribute, and no expert warnings.
 */
static void
test_tshark(void)
{
	static const uint16_t attrs[] = { ROCE_CM_ATTR_MRA, ROCE_CM_ATTR_REJ, ROCE_CM_ATTR_REJ,
		ROCE_CM_ATTR_SIDR_REQ, ROCE_CM_ATTR_SIDR_REP, ROCE_CM_ATTR_LAP,
		ROCE_CM_ATTR_APR };
	struct roce_cm_msg msgs[RTE_DIM(attrs)];
	char pcap[] = "/tmp/test_cm_codec.XXXXXX", cmd[256], txt[64];
	struct roce_pcap pc;
	unsigned int i, nd;
	int fd;

	RT_CHECK(carrier_len == 42 + 12 + 8 + ROCE_MAD_SIZE + 4, "a carrier frame");
	if (carrier_len != 42 + 12 + 8 + ROCE_MAD_SIZE + 4)
		return;
	fd = mkstemp(pcap);
	RT_CHECK(fd >= 0 && roce_pcap_create(&pc, pcap) == 0, "temporary pcap %s", pcap);
	if (fd < 0)
		return;
	close(fd);
	for (i = 0; i < RTE_DIM(attrs); i++) {
		struct roce_cm_msg *m = &msgs[i];
		uint8_t fr[sizeof(carrier)];
		uint32_t icrc;
		unsigned int j;

		/* Distinct bytes everywhere, range-limited fields in range, as a message... */
		for (j = 0; j < ROCE_MAD_SIZE; j++)
			fr[j] = (uint8_t)(j * 7 + i);
		fr[ROCE_MAD_HDR_LEN + 5] = ROCE_CM_SIDR_REP_INFO_LEN;	/* SIDR_REP */
		fr[ROCE_MAD_HDR_LEN + 8] = 0x48;	/* MRA's message MRAed 1, APR's 72 */
		fr[ROCE_MAD_HDR_LEN + 9] = 0x10;	/* REJ's ARI length 8 */
		roce_cm_hdr_init(&m->hdr, attrs[i], 0x0000000200000000ULL | (i + 1));
		m->hdr.attr_mod = i;
		roce_mad_hdr_build(&m->hdr, fr);
		RT_CHECK(roce_cm_parse(m, fr, ROCE_MAD_SIZE) == ROCE_CM_OK, "%s made",
				roce_cm_attr_name(attrs[i]));
		/* ...and the REJs as the state machine will send them. */
		if (i == 1) {
			m->rej.message_rejected = ROCE_CM_MSG_REF_REQ;
			m->rej.reason = ROCE_CM_REJ_INVALID_SERVICE_ID;
			m->rej.ari_length = 0;
		} else if (i == 2) {
			m->rej.message_rejected = ROCE_CM_MSG_REF_REP;
			m->rej.reason = ROCE_CM_REJ_CONSUMER_DEFINED;
			m->rej.ari_length = ROCE_CM_REJ_ARI_LEN;
			for (j = 0; j < ROCE_CM_REJ_ARI_LEN; j++)
				m->rej.ari[j] = (uint8_t)(0xA0 + j);
		}
		if (attrs[i] == ROCE_CM_ATTR_REJ) {
			m->rej.local_comm_id = 0x11223344 + i;
			m->rej.remote_comm_id = 0x55667788;
		}
		memcpy(fr, carrier, carrier_len);
		RT_CHECK(roce_cm_build(m, fr + 62, ROCE_MAD_SIZE) == ROCE_MAD_SIZE, "%s built",
				roce_cm_attr_name(attrs[i]));
		icrc = roce_icrc_compute_buf(fr + 14, carrier_len - 14 - 4, 0);
		memcpy(fr + carrier_len - 4, &icrc, 4);
		{
			struct rte_mbuf *mb = rt_mbuf(pool, fr, carrier_len, 0);
			struct roce_wire_stats st = {0};

			RT_CHECK(mb != NULL && roce_classify_burst(&mb, 1, 0, &st) == 1,
					"frame %u is valid RoCE, ICRC included", i + 1);
			rte_pktmbuf_free(mb);
		}
		RT_CHECK(roce_pcap_write(&pc, fr, carrier_len, (uint64_t)(i + 1) * 1000000) == 0,
				"frame %u written", i + 1);
	}
	RT_CHECK(roce_pcap_close(&pc) == 0, "pcap closed");
	snprintf(txt, sizeof(txt), "%s.txt", pcap);
	snprintf(cmd, sizeof(cmd), "tshark -n -r %s -V > %s 2>/dev/null", pcap, txt);
	RT_CHECK(system(cmd) == 0, "%s", cmd);
	nd = load_decode_path(txt);
	RT_CHECK(nd == RTE_DIM(attrs), "tshark decoded %u MADs of %zu", nd, RTE_DIM(attrs));
	for (i = 0; i < nd && i < RTE_DIM(attrs); i++) {
		const struct dec_frame *d = &decs[i];
		const struct roce_cm_rej *r = &msgs[i].rej;
		uint8_t raw[ROCE_MAD_SIZE];

		chk_hdr(d, &msgs[i].hdr);
		RT_CHECK(roce_cm_build(&msgs[i], raw, sizeof(raw)) == ROCE_MAD_SIZE, "rebuilt");
		chk_hex_prefix(d, "MAD Data Payload", raw + ROCE_MAD_HDR_LEN, ROCE_MAD_DATA_LEN);
		if (attrs[i] != ROCE_CM_ATTR_REJ)
			continue;
		CHK_U(d, "Local Communication ID", r->local_comm_id);
		CHK_U(d, "Remote Communication ID", r->remote_comm_id);
		CHK_U(d, "Message REJected", r->message_rejected);
		CHK_U(d, "Reject Info Length", r->ari_length);
		CHK_U(d, "Reason", r->reason);
		chk_hex_prefix(d, "Additional Reject Information (ARI)", r->ari, sizeof(r->ari));
		chk_hex_prefix(d, "PrivateData", r->private_data, sizeof(r->private_data));
	}
	snprintf(cmd, sizeof(cmd), "grep -q -i 'expert info' %s", txt);
	RT_CHECK(system(cmd) != 0, "no expert info in tshark's decode (%s)", txt);
	if (rt_failures == 0) {
		unlink(txt);
		unlink(pcap);
	}
}

static void
test_cma(void)
{
	struct roce_cma_hdr h;
	uint8_t pd[ROCE_CMA_HDR_LEN], out[ROCE_CMA_HDR_LEN];
	uint16_t ps, port;
	static const uint8_t v6[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8 };

	memset(pd, 0, sizeof(pd));
	pd[1] = 0x60;
	pd[2] = 0x12;
	pd[3] = 0x34;
	memcpy(pd + 4, v6, 16);
	memcpy(pd + 20, v6, 16);
	pd[35] = 9;
	RT_CHECK(roce_cma_hdr_parse(&h, pd, sizeof(pd)) == 0 && h.ip_version == 6 &&
			h.port == 0x1234 && memcmp(h.src_addr, v6, 16) == 0 &&
			h.dst_addr[15] == 9, "IPv6 header");
	RT_CHECK(roce_cma_hdr_build(&h, out, sizeof(out)) == ROCE_CMA_HDR_LEN &&
			memcmp(out, pd, sizeof(pd)) == 0, "IPv6 header rebuilt");
	RT_CHECK(roce_cma_hdr_parse(&h, pd, ROCE_CMA_HDR_LEN - 1) == -EMSGSIZE, "short");
	pd[0] = 0x10;
	RT_CHECK(roce_cma_hdr_parse(&h, pd, sizeof(pd)) == -EPROTONOSUPPORT, "cma_version 1.0");
	pd[0] = 0;
	pd[1] = 0x50;
	RT_CHECK(roce_cma_hdr_parse(&h, pd, sizeof(pd)) == -EAFNOSUPPORT, "IP version 5");
	pd[1] = 0x00;
	RT_CHECK(roce_cma_hdr_parse(&h, pd, sizeof(pd)) == -EAFNOSUPPORT, "IP version 0");
	h.ip_version = 4;
	RT_CHECK(roce_cma_hdr_build(&h, out, sizeof(out)) == -EINVAL, "IPv4, unmapped addresses");
	h.ip_version = 7;
	RT_CHECK(roce_cma_hdr_build(&h, out, sizeof(out)) == -EAFNOSUPPORT, "IP version 7");
	h.ip_version = 6;
	RT_CHECK(roce_cma_hdr_build(&h, out, sizeof(out) - 1) == -ENOSPC, "no room");

	RT_CHECK(ROCE_CMA_SERVICE_ID(ROCE_CMA_PS_TCP, 7174) == 0x0000000001061c06ULL,
			"rping's service ID");
	RT_CHECK(roce_cma_service_id_parse(0x0000000001110005ULL, &ps, &port) == 0 &&
			ps == ROCE_CMA_PS_UDP && port == 5, "UDP port space");
	RT_CHECK(roce_cma_service_id_parse(0x0000000002060001ULL, &ps, &port) == -ENOENT &&
			roce_cma_service_id_parse(0x0000000001070001ULL, &ps, &port) == -ENOENT &&
			roce_cma_service_id_parse(0x1000000001060001ULL, &ps, &port) == -ENOENT,
			"not an IP port space");
}

int
main(int argc, char **argv)
{
	(void)argc;
	rt_eal_init(argv[0]);
	pool = rt_pool(64, 2048);
	RT_RUN(test_write_bw_capture);
	RT_RUN(test_rping_capture);
	RT_RUN(test_malformed);
	RT_RUN(test_reserved_bits);
	RT_RUN(test_build_refusals);
	RT_RUN(test_round_trip_all);
	RT_RUN(test_tshark);
	RT_RUN(test_cma);
	return rt_report("cm_codec");
}
