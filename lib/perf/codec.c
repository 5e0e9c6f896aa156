/* SPDX-License-Identifier: BSD-3-Clause */
/* Encoders and decoders of the perftest OOB messages: pure functions, every length checked. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "roce_perf_oob.h"
#include "perf_private.h"

static const char done_msg[ROCE_PERF_OOB_DONE_LEN] = "done";

/* Version string then NUL padding; @return the string length, or -EINVAL. */
static int
version_put(char s[ROCE_PERF_OOB_VERSION_LEN], size_t len, uint32_t version)
{
	if (len != ROCE_PERF_OOB_VERSION_LEN || version > 99999)
		return -EINVAL;
	/* Zero padding: perftest sends the rest of its char[16] as NUL bytes. */
	memset(s, 0, ROCE_PERF_OOB_VERSION_LEN);
	return snprintf(s, ROCE_PERF_OOB_VERSION_LEN, "%u.%02u", version / 100, version % 100);
}

int
roce_perf_oob_version_encode(void *buf, size_t len, uint32_t version)
{
	char s[ROCE_PERF_OOB_VERSION_LEN];
	int n;

	n = version_put(s, len, version);
	if (n < 0)
		return n;
	memcpy(buf, s, sizeof(s));
	return 0;
}

int
roce_perf_oob_version_encode_caps(void *buf, size_t len, uint32_t version, uint32_t caps)
{
	char s[ROCE_PERF_OOB_VERSION_LEN];
	size_t off;
	int n;

	n = version_put(s, len, version);
	if (n < 0)
		return n;
	/* "999.99" is the longest string: 7 + 4 + 4 bytes still fit in 16 */
	off = (size_t)n + 1;
	memcpy(s + off, ROCE_PERF_OOB_TAG, ROCE_PERF_OOB_TAG_LEN);
	off += ROCE_PERF_OOB_TAG_LEN;
	s[off++] = (char)(caps >> 24);
	s[off++] = (char)(caps >> 16);
	s[off++] = (char)(caps >> 8);
	s[off] = (char)caps;
	memcpy(buf, s, sizeof(s));
	return 0;
}

/* Parse up to @max decimal digits; @return the number of digits read. */
static unsigned int
parse_dec(const char *s, unsigned int max, uint32_t *val)
{
	unsigned int n = 0;

	*val = 0;
	while (n < max && s[n] >= '0' && s[n] <= '9') {
		*val = *val * 10 + (uint32_t)(s[n] - '0');
		n++;
	}
	return n;
}

static bool
all_nul(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != '\0')
			return false;
	return true;
}

int
roce_perf_oob_version_decode_caps(const void *buf, size_t len, uint32_t *version,
		uint32_t *caps, bool *tagged)
{
	const uint8_t *u = buf;
	const char *s = buf;
	uint32_t major, minor, c = 0;
	unsigned int n, m;
	size_t tail;
	bool tag = false;

	if (len != ROCE_PERF_OOB_VERSION_LEN)
		return -EINVAL;
	n = parse_dec(s, 3, &major);
	if (n == 0 || s[n] != '.')
		return -EPROTO;
	m = parse_dec(s + n + 1, 2, &minor);
	if (m == 0 || s[n + 1 + m] != '\0')
		return -EPROTO;
	/* atof() semantics: "6.1" is 6.10. */
	if (m == 1)
		minor *= 10;
	/* After the NUL: NUL padding or exactly our tag, so no garbage hides in the padding. */
	tail = n + 1 + m + 1;
	if (!all_nul(s + tail, len - tail)) {
		if (len - tail < ROCE_PERF_OOB_TAG_LEN + ROCE_PERF_OOB_CAPS_LEN ||
				memcmp(s + tail, ROCE_PERF_OOB_TAG, ROCE_PERF_OOB_TAG_LEN) != 0)
			return -EPROTO;
		tail += ROCE_PERF_OOB_TAG_LEN;
		c = (uint32_t)u[tail] << 24 | (uint32_t)u[tail + 1] << 16 |
			(uint32_t)u[tail + 2] << 8 | u[tail + 3];
		tail += ROCE_PERF_OOB_CAPS_LEN;
		if (!all_nul(s + tail, len - tail))
			return -EPROTO;
		tag = true;
	}
	*version = major * 100 + minor;
	if (caps != NULL)
		*caps = c;
	if (tagged != NULL)
		*tagged = tag;
	return 0;
}

int
roce_perf_oob_version_decode(const void *buf, size_t len, uint32_t *version)
{
	return roce_perf_oob_version_decode_caps(buf, len, version, NULL, NULL);
}

int
roce_perf_oob_version_check(uint32_t version)
{
	if (version < ROCE_PERF_OOB_VERSION_MIN) {
		ROCE_PERF_LOG("peer perftest version %u.%02u is older than 5.70: refused",
			version / 100, version % 100);
		return -EPROTO;
	}
	if (version >= ROCE_PERF_OOB_VERSION_NEGOTIATE &&
			version < ROCE_PERF_OOB_VERSION_NEGOTIATE_SKIP) {
		ROCE_PERF_LOG("peer perftest version %u.%02u sends its binary parameter negotiation "
			"even to a 6.06 peer (fixed in perftest 6.29): refused; use perftest 6.27 "
			"or older, or 6.29 or newer", version / 100, version % 100);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

static void
put_be(uint8_t *p, uint64_t val, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(val >> (8 * (n - 1 - i)));
}

static uint64_t
get_be(const uint8_t *p, unsigned int n)
{
	uint64_t val = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		val = val << 8 | p[i];
	return val;
}

int
roce_perf_oob_u32_encode(void *buf, size_t len, uint32_t val)
{
	if (len != ROCE_PERF_OOB_SYS_LEN || val > INT32_MAX)
		return -EINVAL;
	put_be(buf, val, ROCE_PERF_OOB_SYS_LEN);
	return 0;
}

int
roce_perf_oob_u32_decode(const void *buf, size_t len, uint32_t *val)
{
	uint64_t v;

	if (len != ROCE_PERF_OOB_SYS_LEN)
		return -EINVAL;
	v = get_be(buf, ROCE_PERF_OOB_SYS_LEN);
	/* perftest sends an int: a negative size is garbage. */
	if (v > INT32_MAX)
		return -EPROTO;
	*val = (uint32_t)v;
	return 0;
}

int
roce_perf_oob_mtu_encode(void *buf, size_t len, uint8_t mtu)
{
	uint8_t *p = buf;

	if (len != ROCE_PERF_OOB_MTU_LEN || mtu < 1 || mtu > 5)
		return -EINVAL;
	p[0] = (uint8_t)('0' + mtu);
	p[1] = '\0';
	return 0;
}

int
roce_perf_oob_mtu_decode(const void *buf, size_t len, uint8_t *mtu)
{
	const uint8_t *p = buf;

	if (len != ROCE_PERF_OOB_MTU_LEN)
		return -EINVAL;
	if (p[0] < '1' || p[0] > '5' || p[1] != '\0')
		return -EPROTO;
	*mtu = (uint8_t)(p[0] - '0');
	return 0;
}

int
roce_perf_oob_key_encode(void *buf, size_t len, const struct roce_perf_key *k)
{
	char s[ROCE_PERF_OOB_KEY_LEN];
	const uint8_t *g = k->gid;
	int n;

	if (len != ROCE_PERF_OOB_KEY_LEN || k->qpn > 0xffffff || k->psn > 0xffffff)
		return -EINVAL;
	n = snprintf(s, sizeof(s), "%04x:%04x:%06x:%06x:%08x:%016llx:"
		"%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:"
		"%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%08x:",
		k->lid, k->out_reads, k->qpn, k->psn, k->rkey, (unsigned long long)k->vaddr,
		g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7],
		g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15], k->srqn);
	if (n != ROCE_PERF_OOB_KEY_LEN - 1)
		return -EINVAL;
	memcpy(buf, s, sizeof(s));
	return 0;
}

static int
hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;	/* perftest writes lowercase only */
}

/* Parse @width lowercase hex digits then ':' at @s; @return 0 or -EPROTO. */
static int
parse_field(const char *s, unsigned int width, uint64_t *val)
{
	unsigned int i;
	int d;

	*val = 0;
	for (i = 0; i < width; i++) {
		d = hex_digit(s[i]);
		if (d < 0)
			return -EPROTO;
		*val = *val << 4 | (uint64_t)d;
	}
	return s[width] == ':' ? 0 : -EPROTO;
}

/* Field widths of the key message in wire order: lid, out_reads, qpn, psn, rkey, vaddr,
 * gid[0..15], srqn. Each is followed by ':'; 107 characters in all, then NUL. */
#define KEY_NB_FIELDS 23
static const uint8_t key_widths[KEY_NB_FIELDS] = {
	4, 4, 6, 6, 8, 16,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	8,
};

int
roce_perf_oob_key_decode(const void *buf, size_t len, struct roce_perf_key *k)
{
	const char *s = buf;
	uint64_t v[KEY_NB_FIELDS];
	unsigned int i, off = 0;

	if (len != ROCE_PERF_OOB_KEY_LEN)
		return -EINVAL;
	for (i = 0; i < KEY_NB_FIELDS; i++) {
		if (parse_field(s + off, key_widths[i], &v[i]) != 0)
			return -EPROTO;
		off += key_widths[i] + 1u;
	}
	if (off != ROCE_PERF_OOB_KEY_LEN - 1 || s[off] != '\0')
		return -EPROTO;
	k->lid = (uint16_t)v[0];
	k->out_reads = (uint16_t)v[1];
	k->qpn = (uint32_t)v[2];
	k->psn = (uint32_t)v[3];
	k->rkey = (uint32_t)v[4];
	k->vaddr = v[5];
	for (i = 0; i < 16; i++)
		k->gid[i] = (uint8_t)v[6 + i];
	k->srqn = (uint32_t)v[22];
	return 0;
}

/*
 * The key of perftest's rdma_cm modes (-R, -z): struct pingpong_dest as a SEND on the connected
 * QP, its fields big-endian (perftest 6.06, src/perftest_resources.h; x86-64 layout): int lid,
 * int out_reads, int qpn, int psn, unsigned rkey, 4 bytes of padding (whatever the sender's
 * stack held), unsigned long long vaddr, union ibv_gid gid, unsigned srqn, int gid_index.
 */
enum {
	DEST_LID = 0,
	DEST_OUT_READS = 4,
	DEST_QPN = 8,
	DEST_PSN = 12,
	DEST_RKEY = 16,
	DEST_PAD = 20,
	DEST_VADDR = 24,
	DEST_GID = 32,
	DEST_SRQN = 48,
	DEST_GID_INDEX = 52,
};

int
roce_perf_oob_dest_encode(void *buf, size_t len, const struct roce_perf_key *k)
{
	uint8_t *p = buf;

	if (len != ROCE_PERF_OOB_DEST_LEN || k->qpn > 0xffffff || k->psn > 0xffffff)
		return -EINVAL;
	memset(p, 0, len);
	put_be(p + DEST_LID, k->lid, 4);
	put_be(p + DEST_OUT_READS, k->out_reads, 4);
	put_be(p + DEST_QPN, k->qpn, 4);
	put_be(p + DEST_PSN, k->psn, 4);
	put_be(p + DEST_RKEY, k->rkey, 4);
	put_be(p + DEST_VADDR, k->vaddr, 8);
	memcpy(p + DEST_GID, k->gid, 16);
	put_be(p + DEST_SRQN, k->srqn, 4);
	/* gid_index 0: perftest's rdma_read_keys() ignores it, as it ignores srqn */
	return 0;
}

int
roce_perf_oob_dest_decode(const void *buf, size_t len, struct roce_perf_key *k)
{
	const uint8_t *p = buf;
	uint64_t lid, out_reads, qpn, psn;

	if (len != ROCE_PERF_OOB_DEST_LEN)
		return -EINVAL;
	lid = get_be(p + DEST_LID, 4);
	out_reads = get_be(p + DEST_OUT_READS, 4);
	qpn = get_be(p + DEST_QPN, 4);
	psn = get_be(p + DEST_PSN, 4);
	/* what the 108-byte key could not carry either: a LID or read depth above 16 bits (a
	 * negative int among them), a QPN or PSN above 24 */
	if (lid > 0xffff || out_reads > 0xffff || qpn > 0xffffff || psn > 0xffffff)
		return -EPROTO;
	memset(k, 0, sizeof(*k));
	k->lid = (uint16_t)lid;
	k->out_reads = (uint16_t)out_reads;
	k->qpn = (uint32_t)qpn;
	k->psn = (uint32_t)psn;
	k->rkey = (uint32_t)get_be(p + DEST_RKEY, 4);
	k->vaddr = get_be(p + DEST_VADDR, 8);
	memcpy(k->gid, p + DEST_GID, 16);
	k->srqn = (uint32_t)get_be(p + DEST_SRQN, 4);
	return 0;
}

/* Offset of the first GID byte in the key message; --data_validation puts a 16-digit
 * tail_markers_vaddr and its ':' there instead (KEY_PRINT_FMT_GID_DV, 125 bytes). */
#define KEY_GID_OFF 50
#define KEY_DV_TAIL_LEN 16

int
roce_perf_key_diagnose(const void *buf, size_t len)
{
	const uint8_t *u = buf;
	const char *s = buf;
	unsigned int i, off = 0;
	uint64_t v;

	if (len != ROCE_PERF_OOB_KEY_LEN)
		return -EPROTO;
	/* struct perftest_parameters_negotiate starts with two small big-endian ints
	 * (test_method, connection_type) where a key starts with lowercase hex */
	if (u[0] == 0 && u[1] == 0 && u[2] == 0 && u[3] < 16 && u[4] == 0 && u[5] == 0 &&
			u[6] == 0 && u[7] < 16) {
		ROCE_PERF_LOG("the peer sent binary data where a key was expected: the parameter "
			"negotiation of perftest >= 6.28, which we do not implement: refused");
		return -EPROTONOSUPPORT;
	}
	for (i = 0; i < 6; i++) {
		if (parse_field(s + off, key_widths[i], &v) != 0)
			return -EPROTO;
		off += key_widths[i] + 1u;
	}
	if (parse_field(s + KEY_GID_OFF, KEY_DV_TAIL_LEN, &v) == 0) {
		ROCE_PERF_LOG("the peer sent a 125-byte --data_validation key (perftest >= 6.29 "
			"with --data_validation), which we do not implement: refused");
		return -EPROTONOSUPPORT;
	}
	return -EPROTO;
}

int
roce_perf_oob_u64_encode(void *buf, size_t len, uint64_t val)
{
	if (len != ROCE_PERF_OOB_REPORT_LEN)
		return -EINVAL;
	put_be(buf, val, ROCE_PERF_OOB_REPORT_LEN);
	return 0;
}

int
roce_perf_oob_u64_decode(const void *buf, size_t len, uint64_t *val)
{
	if (len != ROCE_PERF_OOB_REPORT_LEN)
		return -EINVAL;
	*val = get_be(buf, ROCE_PERF_OOB_REPORT_LEN);
	return 0;
}

/* hton_double: the IEEE-754 bits, byte-swapped to network order. */
int
roce_perf_oob_double_encode(void *buf, size_t len, double val)
{
	uint64_t bits;

	memcpy(&bits, &val, sizeof(bits));
	return roce_perf_oob_u64_encode(buf, len, bits);
}

int
roce_perf_oob_double_decode(const void *buf, size_t len, double *val)
{
	uint64_t bits;
	int ret;

	ret = roce_perf_oob_u64_decode(buf, len, &bits);
	if (ret == 0)
		memcpy(val, &bits, sizeof(bits));
	return ret;
}

int
roce_perf_oob_done_encode(void *buf, size_t len)
{
	if (len != ROCE_PERF_OOB_DONE_LEN)
		return -EINVAL;
	memcpy(buf, done_msg, sizeof(done_msg));
	return 0;
}

int
roce_perf_oob_done_decode(const void *buf, size_t len)
{
	if (len != ROCE_PERF_OOB_DONE_LEN)
		return -EINVAL;
	return memcmp(buf, done_msg, sizeof(done_msg)) == 0 ? 0 : -EPROTO;
}

/* Offsets in the parameters message (see roce_perf_oob.h). */
enum {
	PAR_MAGIC = 0, PAR_FORMAT = 4, PAR_TEST = 8, PAR_FLAGS = 12, PAR_SIZE = 16,
	PAR_ITERS = 24, PAR_DURATION = 32, PAR_QPS = 36, PAR_CONN = 40, PAR_END = 44,
};

static bool
params_valid(const struct roce_perf_params *p)
{
	return p->test < ROCE_PERF_TEST_MAX && (p->flags & ~ROCE_PERF_PAR_FLAGS) == 0 &&
		p->size >= 1 && p->size <= ROCE_PERF_PAR_MAX_SIZE && p->qps >= 1 &&
		p->qps <= ROCE_PERF_OOB_MAX_QPS &&
		p->duration_ms <= ROCE_PERF_PAR_MAX_DURATION_MS &&
		(p->conn == ROCE_PERF_CONN_RC || p->conn == ROCE_PERF_CONN_UD);
}

int
roce_perf_oob_params_encode(void *buf, size_t len, const struct roce_perf_params *p)
{
	uint8_t *b = buf;

	if (len != ROCE_PERF_OOB_PARAMS_LEN || !params_valid(p))
		return -EINVAL;
	memset(b, 0, len);
	memcpy(b + PAR_MAGIC, ROCE_PERF_OOB_PARAMS_MAGIC, 4);
	put_be(b + PAR_FORMAT, ROCE_PERF_OOB_PARAMS_FORMAT, 4);
	put_be(b + PAR_TEST, p->test, 4);
	put_be(b + PAR_FLAGS, p->flags, 4);
	put_be(b + PAR_SIZE, p->size, 8);
	put_be(b + PAR_ITERS, p->iters, 8);
	put_be(b + PAR_DURATION, p->duration_ms, 4);
	put_be(b + PAR_QPS, p->qps, 4);
	put_be(b + PAR_CONN, p->conn, 4);
	return 0;
}

int
roce_perf_oob_params_decode(const void *buf, size_t len, struct roce_perf_params *p)
{
	const uint8_t *b = buf;
	struct roce_perf_params v;
	size_t i;

	if (len != ROCE_PERF_OOB_PARAMS_LEN)
		return -EINVAL;
	if (memcmp(b + PAR_MAGIC, ROCE_PERF_OOB_PARAMS_MAGIC, 4) != 0 ||
			get_be(b + PAR_FORMAT, 4) != ROCE_PERF_OOB_PARAMS_FORMAT)
		return -EPROTO;
	for (i = PAR_END; i < len; i++)
		if (b[i] != 0)
			return -EPROTO;
	v.test = (uint32_t)get_be(b + PAR_TEST, 4);
	v.flags = (uint32_t)get_be(b + PAR_FLAGS, 4);
	v.size = get_be(b + PAR_SIZE, 8);
	v.iters = get_be(b + PAR_ITERS, 8);
	v.duration_ms = (uint32_t)get_be(b + PAR_DURATION, 4);
	v.qps = (uint32_t)get_be(b + PAR_QPS, 4);
	v.conn = (uint32_t)get_be(b + PAR_CONN, 4);
	if (!params_valid(&v))
		return -EPROTO;
	*p = v;
	return 0;
}

static uint32_t
be32_at(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Pure like the codecs: which GIDs a peer's key may name (see roce_perf_oob.h). */
int
roce_perf_gid_check(const uint8_t gid[16], const uint8_t tcp_peer[16], const uint8_t *port_ip4,
		unsigned int prefix)
{
	static const uint8_t v4map[12] = { [10] = 0xff, [11] = 0xff };
	uint32_t mask, host, ours;

	if (prefix > 32)
		return -EINVAL;
	if (memcmp(gid, tcp_peer, 16) == 0)
		return 0;
	if (port_ip4 == NULL || memcmp(gid, v4map, sizeof(v4map)) != 0)
		return -EPERM;
	mask = prefix == 0 ? 0 : UINT32_MAX << (32 - prefix);
	host = be32_at(gid + 12);
	ours = be32_at(port_ip4);
	if ((host & mask) != (ours & mask) || host == ours)
		return -EPERM;
	/* /31 and /32 have no network or broadcast address (RFC 3021) */
	if (prefix <= 30 && ((host & ~mask) == 0 || (host & ~mask) == ~mask))
		return -EPERM;
	return 0;
}
