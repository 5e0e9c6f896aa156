/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CM messages: one field table per attribute (IBA tables 106-120, as Linux's
 * ibta_vol1_c12.h places them), walked by both the parser and the builder.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "roce_cm_msg.h"
#include "cm_private.h"

/*
 * A field: @byte from the end of the MAD header, @bit from that byte's MSB, @width bits
 * (1..64) into an unsigned member of @size bytes at @off, or (width 0) @size raw bytes.
 * @max, when not 0, is the largest value accepted (below what the width allows).
 */
struct cm_field {
	uint16_t byte;
	uint8_t bit;
	uint8_t width;
	uint16_t off;
	uint16_t size;
	uint16_t max;
};

#define MSZ(type, m) sizeof(((type *)0)->m)
/* An integer field of @w bits at byte @b, bit @bi. */
#define FI(type, m, b, bi, w) { (b), (bi), (w), offsetof(type, m), MSZ(type, m), 0 }
/* The same with a maximum value. */
#define FM(type, m, b, bi, w, mx) { (b), (bi), (w), offsetof(type, m), MSZ(type, m), (mx) }
/* Raw bytes (GIDs, information areas, private data) at byte @b. */
#define FB(type, m, b) { (b), 0, 0, offsetof(type, m), MSZ(type, m), 0 }

#define PATH(type, p, b) \
	FI(type, p.local_lid, (b), 0, 16), FI(type, p.remote_lid, (b) + 2, 0, 16), \
	FB(type, p.local_gid, (b) + 4), FB(type, p.remote_gid, (b) + 20), \
	FI(type, p.flow_label, (b) + 36, 0, 20), FI(type, p.packet_rate, (b) + 39, 2, 6), \
	FI(type, p.traffic_class, (b) + 40, 0, 8), FI(type, p.hop_limit, (b) + 41, 0, 8), \
	FI(type, p.sl, (b) + 42, 0, 4), FI(type, p.subnet_local, (b) + 42, 4, 1), \
	FI(type, p.local_ack_timeout, (b) + 43, 0, 5)

#define T struct roce_cm_req
static const struct cm_field req_fields[] = {
	FI(T, local_comm_id, 0, 0, 32), FI(T, service_id, 8, 0, 64),
	FI(T, local_ca_guid, 16, 0, 64), FI(T, local_qkey, 28, 0, 32),
	FI(T, local_qpn, 32, 0, 24), FI(T, responder_resources, 35, 0, 8),
	FI(T, local_eecn, 36, 0, 24), FI(T, initiator_depth, 39, 0, 8),
	FI(T, remote_eecn, 40, 0, 24), FI(T, remote_cm_response_timeout, 43, 0, 5),
	FI(T, transport_type, 43, 5, 2), FI(T, e2e_flow_control, 43, 7, 1),
	FI(T, starting_psn, 44, 0, 24), FI(T, local_cm_response_timeout, 47, 0, 5),
	FI(T, retry_count, 47, 5, 3), FI(T, pkey, 48, 0, 16),
	FI(T, path_mtu, 50, 0, 4), FI(T, rdc_exists, 50, 4, 1), FI(T, rnr_retry_count, 50, 5, 3),
	FI(T, max_cm_retries, 51, 0, 4), FI(T, srq, 51, 4, 1), FI(T, ext_transport_type, 51, 5, 3),
	PATH(T, primary, 52), PATH(T, alternate, 96),
	FI(T, sap_supported, 139, 5, 1), FB(T, private_data, 140),
};
#undef T

#define T struct roce_cm_mra
static const struct cm_field mra_fields[] = {
	FI(T, local_comm_id, 0, 0, 32), FI(T, remote_comm_id, 4, 0, 32),
	FM(T, message_mraed, 8, 0, 2, ROCE_CM_MSG_REF_OTHER), FI(T, service_timeout, 9, 0, 5),
	FB(T, private_data, 10),
};
#undef T

#define T struct roce_cm_rej
static const struct cm_field rej_fields[] = {
	FI(T, local_comm_id, 0, 0, 32), FI(T, remote_comm_id, 4, 0, 32),
	FM(T, message_rejected, 8, 0, 2, ROCE_CM_MSG_REF_OTHER),
	FM(T, ari_length, 9, 0, 7, ROCE_CM_REJ_ARI_LEN), FI(T, reason, 10, 0, 16),
	FB(T, ari, 12), FB(T, private_data, 84),
};
#undef T

#define T struct roce_cm_rep
static const struct cm_field rep_fields[] = {
	FI(T, local_comm_id, 0, 0, 32), FI(T, remote_comm_id, 4, 0, 32),
	FI(T, local_qkey, 8, 0, 32), FI(T, local_qpn, 12, 0, 24), FI(T, local_eecn, 16, 0, 24),
	FI(T, starting_psn, 20, 0, 24), FI(T, responder_resources, 24, 0, 8),
	FI(T, initiator_depth, 25, 0, 8), FI(T, target_ack_delay, 26, 0, 5),
	FI(T, failover_accepted, 26, 5, 2), FI(T, e2e_flow_control, 26, 7, 1),
	FI(T, rnr_retry_count, 27, 0, 3), FI(T, srq, 27, 3, 1), FI(T, local_ca_guid, 28, 0, 64),
	FB(T, private_data, 36),
};
#undef T

#define T struct roce_cm_rtu
static const struct cm_field rtu_fields[] = {
	FI(T, local_comm_id, 0, 0, 32), FI(T, remote_comm_id, 4, 0, 32), FB(T, private_data, 8),
};
#undef T

#define T struct roce_cm_dreq
static const struct cm_field dreq_fields[] = {
	FI(T, local_comm_id, 0, 0, 32), FI(T, remote_comm_id, 4, 0, 32),
	FI(T, remote_qpn_eecn, 8, 0, 24), FB(T, private_data, 12),
};
#undef T

#define T struct roce_cm_drep
static const struct cm_field drep_fields[] = {
	FI(T, local_comm_id, 0, 0, 32), FI(T, remote_comm_id, 4, 0, 32), FB(T, private_data, 8),
};
#undef T

#define T struct roce_cm_lap
static const struct cm_field lap_fields[] = {
	FI(T, local_comm_id, 0, 0, 32), FI(T, remote_comm_id, 4, 0, 32),
	FI(T, remote_qpn_eecn, 12, 0, 24), FI(T, remote_cm_response_timeout, 15, 0, 5),
	FI(T, alt_local_lid, 20, 0, 16), FI(T, alt_remote_lid, 22, 0, 16),
	FB(T, alt_local_gid, 24), FB(T, alt_remote_gid, 40),
	FI(T, alt_flow_label, 56, 0, 20), FI(T, alt_traffic_class, 59, 0, 8),
	FI(T, alt_hop_limit, 60, 0, 8), FI(T, alt_packet_rate, 61, 2, 6),
	FI(T, alt_sl, 62, 0, 4), FI(T, alt_subnet_local, 62, 4, 1),
	FI(T, alt_local_ack_timeout, 63, 0, 5), FB(T, private_data, 64),
};
#undef T

#define T struct roce_cm_apr
static const struct cm_field apr_fields[] = {
	FI(T, local_comm_id, 0, 0, 32), FI(T, remote_comm_id, 4, 0, 32),
	FM(T, info_length, 8, 0, 8, ROCE_CM_APR_INFO_LEN), FI(T, ap_status, 9, 0, 8),
	FB(T, info, 12), FB(T, private_data, 84),
};
#undef T

#define T struct roce_cm_sidr_req
static const struct cm_field sidr_req_fields[] = {
	FI(T, request_id, 0, 0, 32), FI(T, pkey, 4, 0, 16), FI(T, service_id, 8, 0, 64),
	FB(T, private_data, 16),
};
#undef T

#define T struct roce_cm_sidr_rep
static const struct cm_field sidr_rep_fields[] = {
	FI(T, request_id, 0, 0, 32), FI(T, status, 4, 0, 8),
	FM(T, info_length, 5, 0, 8, ROCE_CM_SIDR_REP_INFO_LEN), FI(T, qpn, 8, 0, 24),
	FI(T, service_id, 12, 0, 64), FI(T, qkey, 20, 0, 32), FB(T, info, 24),
	FB(T, private_data, 96),
};
#undef T

struct cm_msg_desc {
	uint16_t attr_id;
	const char *name;
	const struct cm_field *fields;
	unsigned int nb_fields;
	enum roce_cm_linux_action action;
};

#define DESC(id, nm, f, act) { (id), (nm), (f), sizeof(f) / sizeof((f)[0]), (act) }
static const struct cm_msg_desc msg_descs[] = {
	DESC(ROCE_CM_ATTR_REQ, "REQ", req_fields, ROCE_CM_ACT_HANDLE),
	DESC(ROCE_CM_ATTR_MRA, "MRA", mra_fields, ROCE_CM_ACT_HANDLE),
	DESC(ROCE_CM_ATTR_REJ, "REJ", rej_fields, ROCE_CM_ACT_HANDLE),
	DESC(ROCE_CM_ATTR_REP, "REP", rep_fields, ROCE_CM_ACT_HANDLE),
	DESC(ROCE_CM_ATTR_RTU, "RTU", rtu_fields, ROCE_CM_ACT_HANDLE),
	DESC(ROCE_CM_ATTR_DREQ, "DREQ", dreq_fields, ROCE_CM_ACT_HANDLE),
	DESC(ROCE_CM_ATTR_DREP, "DREP", drep_fields, ROCE_CM_ACT_HANDLE),
	DESC(ROCE_CM_ATTR_SIDR_REQ, "SIDR_REQ", sidr_req_fields, ROCE_CM_ACT_SIDR_REP),
	DESC(ROCE_CM_ATTR_SIDR_REP, "SIDR_REP", sidr_rep_fields, ROCE_CM_ACT_MATCH_SIDR),
	DESC(ROCE_CM_ATTR_LAP, "LAP", lap_fields, ROCE_CM_ACT_DROP),
	DESC(ROCE_CM_ATTR_APR, "APR", apr_fields, ROCE_CM_ACT_DROP),
};

static const char *const verdict_names[ROCE_CM_VERDICT_MAX] = {
	[ROCE_CM_OK] = "ok",
	[ROCE_CM_BAD_LEN] = "bad_len",
	[ROCE_CM_BAD_BASE_VERSION] = "bad_base_version",
	[ROCE_CM_BAD_CLASS] = "bad_class",
	[ROCE_CM_BAD_CLASS_VERSION] = "bad_class_version",
	[ROCE_CM_BAD_METHOD] = "bad_method",
	[ROCE_CM_BAD_ATTR] = "bad_attr",
	[ROCE_CM_BAD_FIELD] = "bad_field",
};

static const struct cm_msg_desc *
desc_of(uint16_t attr_id)
{
	unsigned int i;

	for (i = 0; i < sizeof(msg_descs) / sizeof(msg_descs[0]); i++)
		if (msg_descs[i].attr_id == attr_id)
			return &msg_descs[i];
	return NULL;
}

/* @width bits from bit @pos of @p (MSB first). */
static uint64_t
bits_get(const uint8_t *p, unsigned int pos, unsigned int width)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < width; i++, pos++)
		v = v << 1 | ((p[pos / 8] >> (7 - pos % 8)) & 1);
	return v;
}

static void
bits_put(uint8_t *p, unsigned int pos, unsigned int width, uint64_t v)
{
	unsigned int i;

	for (i = width; i-- > 0; pos++) {
		uint8_t m = (uint8_t)(1u << (7 - pos % 8));

		if ((v >> i) & 1)
			p[pos / 8] |= m;
		else
			p[pos / 8] &= (uint8_t)~m;
	}
}

static uint64_t
member_get(const uint8_t *s, const struct cm_field *f)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (f->size) {
	case 1:
		memcpy(&v8, s + f->off, 1);
		return v8;
	case 2:
		memcpy(&v16, s + f->off, 2);
		return v16;
	case 4:
		memcpy(&v32, s + f->off, 4);
		return v32;
	default:
		memcpy(&v64, s + f->off, 8);
		return v64;
	}
}

static void
member_put(uint8_t *s, const struct cm_field *f, uint64_t v)
{
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (f->size) {
	case 1:
		memcpy(s + f->off, &v8, 1);
		break;
	case 2:
		memcpy(s + f->off, &v16, 2);
		break;
	case 4:
		memcpy(s + f->off, &v32, 4);
		break;
	default:
		memcpy(s + f->off, &v, 8);
		break;
	}
}

/* The union member every message lives in starts where the union does. */
static uint8_t *
msg_body(struct roce_cm_msg *msg)
{
	return (uint8_t *)&msg->req;
}

enum roce_cm_verdict
roce_cm_parse(struct roce_cm_msg *msg, const void *buf, size_t len)
{
	const uint8_t *data = (const uint8_t *)buf + ROCE_MAD_HDR_LEN;
	const struct cm_msg_desc *d;
	uint8_t *body;
	unsigned int i;

	if (len != ROCE_MAD_SIZE)
		return ROCE_CM_BAD_LEN;
	if (roce_mad_hdr_parse(&msg->hdr, buf, len) != 0)
		return ROCE_CM_BAD_BASE_VERSION;
	if (msg->hdr.mgmt_class != ROCE_MAD_CLASS_CM)
		return ROCE_CM_BAD_CLASS;
	if (msg->hdr.class_version != ROCE_CM_CLASS_VERSION)
		return ROCE_CM_BAD_CLASS_VERSION;
	/* Linux's CM agent registers for Send() only; the MAD layer drops the rest. */
	if (msg->hdr.method != ROCE_MAD_METHOD_SEND)
		return ROCE_CM_BAD_METHOD;
	d = desc_of(msg->hdr.attr_id);
	if (d == NULL)
		return ROCE_CM_BAD_ATTR;
	body = msg_body(msg);
	memset(body, 0, sizeof(*msg) - offsetof(struct roce_cm_msg, req));
	for (i = 0; i < d->nb_fields; i++) {
		const struct cm_field *f = &d->fields[i];
		uint64_t v;

		if (f->width == 0) {
			memcpy(body + f->off, data + f->byte, f->size);
			continue;
		}
		v = bits_get(data, f->byte * 8u + f->bit, f->width);
		if (f->max != 0 && v > f->max)
			return ROCE_CM_BAD_FIELD;
		member_put(body, f, v);
	}
	return ROCE_CM_OK;
}

int
roce_cm_build(const struct roce_cm_msg *msg, void *buf, size_t cap)
{
	const uint8_t *body = (const uint8_t *)&msg->req;
	uint8_t *data = (uint8_t *)buf + ROCE_MAD_HDR_LEN;
	const struct cm_msg_desc *d;
	unsigned int i;

	if (cap < ROCE_MAD_SIZE)
		return -ENOSPC;
	d = desc_of(msg->hdr.attr_id);
	if (d == NULL || msg->hdr.base_version != ROCE_MAD_BASE_VERSION ||
			msg->hdr.mgmt_class != ROCE_MAD_CLASS_CM ||
			msg->hdr.class_version != ROCE_CM_CLASS_VERSION)
		return -EINVAL;
	/* Every value is checked before a byte is written. */
	for (i = 0; i < d->nb_fields; i++) {
		const struct cm_field *f = &d->fields[i];
		uint64_t v;

		if (f->width == 0)
			continue;
		v = member_get(body, f);
		if ((f->width < 64 && v >> f->width != 0) || (f->max != 0 && v > f->max))
			return -ERANGE;
	}
	memset(buf, 0, ROCE_MAD_SIZE);
	roce_mad_hdr_build(&msg->hdr, buf);
	for (i = 0; i < d->nb_fields; i++) {
		const struct cm_field *f = &d->fields[i];

		if (f->width == 0)
			memcpy(data + f->byte, body + f->off, f->size);
		else
			bits_put(data, f->byte * 8u + f->bit, f->width, member_get(body, f));
	}
	return ROCE_MAD_SIZE;
}

void
roce_cm_hdr_init(struct roce_mad_hdr *h, enum roce_cm_attr attr_id, uint64_t tid)
{
	memset(h, 0, sizeof(*h));
	h->base_version = ROCE_MAD_BASE_VERSION;
	h->mgmt_class = ROCE_MAD_CLASS_CM;
	h->class_version = ROCE_CM_CLASS_VERSION;
	h->method = ROCE_MAD_METHOD_SEND;
	h->tid = tid;
	h->attr_id = (uint16_t)attr_id;
}

enum roce_cm_linux_action
roce_cm_linux_action(uint16_t attr_id)
{
	const struct cm_msg_desc *d = desc_of(attr_id);

	return d != NULL ? d->action : ROCE_CM_ACT_DROP;
}

const char *
roce_cm_attr_name(uint16_t attr_id)
{
	const struct cm_msg_desc *d = desc_of(attr_id);

	return d != NULL ? d->name : NULL;
}

const char *
roce_cm_verdict_name(enum roce_cm_verdict v)
{
	return (unsigned int)v < ROCE_CM_VERDICT_MAX ? verdict_names[v] : NULL;
}
