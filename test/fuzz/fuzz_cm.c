/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: lib/cm's codecs, which take the MADs peers send to QP1.
 *
 * Input: a MAD (the input itself, and its first 256 bytes, zero-padded, so the length check
 * does not stop everything else). Invariants: a MAD parses only at 256 bytes; every refusal
 * has a counter name; what parses builds to 256 bytes that parse to the same struct and build
 * to the same bytes again, and the rebuild only clears bits of the input (the reserved ones).
 * The RDMA CM header (of the input, of a REQ's private data) of any buffer: what parses rebuilds and parses the same.
 * The MAD header of any length: what parses rebuilds to the same 24 bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roce_mad.h"
#include "roce_cm_msg.h"
#include "roce_cma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void
check_cma(const uint8_t *p, size_t len)
{
	struct roce_cma_hdr h, h2;
	uint8_t out[ROCE_CMA_HDR_LEN];
	uint16_t ps, port;
	uint64_t sid = 0;
	size_t i;

	if (roce_cma_hdr_parse(&h, p, len) == 0) {
		CHECK(h.ip_version == 4 || h.ip_version == 6);
		CHECK(roce_cma_hdr_build(&h, out, sizeof(out)) == ROCE_CMA_HDR_LEN);
		CHECK(roce_cma_hdr_parse(&h2, out, sizeof(out)) == 0);
		CHECK(memcmp(&h, &h2, sizeof(h)) == 0);
	}
	for (i = 0; i < 8 && i < len; i++)
		sid = sid << 8 | p[i];
	if (roce_cma_service_id_parse(sid, &ps, &port) == 0)
		CHECK(ROCE_CMA_SERVICE_ID(ps, port) == sid);
}

static void
check_mad(const uint8_t *mad, size_t len)
{
	static struct roce_cm_msg m, m2;
	uint8_t out[ROCE_MAD_SIZE], out2[ROCE_MAD_SIZE];
	enum roce_cm_verdict v = roce_cm_parse(&m, mad, len);
	unsigned int i;

	CHECK(roce_cm_verdict_name(v) != NULL);
	CHECK(v == ROCE_CM_BAD_LEN || len == ROCE_MAD_SIZE);
	CHECK(roce_cm_linux_action(m.hdr.attr_id) <= ROCE_CM_ACT_MATCH_SIDR);
	if (v != ROCE_CM_OK)
		return;
	CHECK(roce_cm_attr_name(m.hdr.attr_id) != NULL);
	CHECK(roce_cm_build(&m, out, sizeof(out)) == ROCE_MAD_SIZE);
	CHECK(roce_cm_parse(&m2, out, sizeof(out)) == ROCE_CM_OK);
	CHECK(memcmp(&m, &m2, sizeof(m)) == 0);
	CHECK(roce_cm_build(&m2, out2, sizeof(out2)) == ROCE_MAD_SIZE);
	CHECK(memcmp(out, out2, sizeof(out)) == 0);
	/* The rebuild only clears bits: a set bit of the output was set in the input. */
	for (i = 0; i < ROCE_MAD_SIZE; i++)
		CHECK((out[i] & ~mad[i]) == 0);
	if (m.hdr.attr_id == ROCE_CM_ATTR_REQ)
		check_cma(m.req.private_data, sizeof(m.req.private_data));
}

static void
check_hdr(const uint8_t *p, size_t len)
{
	struct roce_mad_hdr h;
	uint8_t out[ROCE_MAD_HDR_LEN];
	int rc = roce_mad_hdr_parse(&h, p, len);

	CHECK(rc == 0 || len < ROCE_MAD_HDR_LEN || p[0] != ROCE_MAD_BASE_VERSION);
	if (rc != 0)
		return;
	roce_mad_hdr_build(&h, out);
	CHECK(memcmp(out, p, sizeof(out)) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t mad[ROCE_MAD_SIZE] = {0};

	check_mad(data, size);
	memcpy(mad, data, size < sizeof(mad) ? size : sizeof(mad));
	check_mad(mad, sizeof(mad));
	check_hdr(data, size);
	check_cma(data, size);
	if (size > ROCE_MAD_HDR_LEN + 140)
		check_cma(data + ROCE_MAD_HDR_LEN + 140, size - ROCE_MAD_HDR_LEN - 140);
	return 0;
}
