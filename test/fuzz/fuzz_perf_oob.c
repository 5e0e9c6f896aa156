/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the perftest OOB decoders (lib/perf). The first input byte picks the
 * message kind; the rest is decoded both as given (any length) and cut to the kind's size.
 *
 * Two more kinds drive the whole exchange (roce_perf_oob_run(), as client or as server): the
 * next byte picks the test, the number of QPs, the sequence's variant (-a, -b,
 * --run_infinitely) and whether we offer capabilities (the rocedp tag and with it the
 * parameters message), the rest is the peer's byte stream, written into a socketpair beforehand and followed
 * by EOF, so the run never blocks.
 *
 * perftest -R: the 56-byte struct pingpong_dest decoder, and the whole exchange over the
 * rdma_cm channel (roce_perf_oob_run_chan()), the rest of the input cut into the peer's
 * messages at the sizes the driver asks for (one SEND each), until it runs out (the peer went
 * away).
 *
 * Invariants: a wrong length is -EINVAL; a decoder returns 0, -EINVAL or -EPROTO only; what
 * decodes re-encodes byte-identically (the version string: to the same value and capability
 * tag, since "6.1" and "6.10" are the same version); a run ends with 0, -ECONNRESET, -EPROTO
 * or -EPROTONOSUPPORT, and its agreed capabilities are a subset of ours.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "roce_perf_oob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void
fuzz_version(const uint8_t *d, size_t n)
{
	uint8_t out[ROCE_PERF_OOB_VERSION_LEN];
	uint32_t v, v2, caps, caps2;
	bool tagged, tagged2;
	int ret = roce_perf_oob_version_decode_caps(d, n, &v, &caps, &tagged);

	CHECK(ret == 0 || ret == -EPROTO || ret == -EINVAL);
	CHECK(n == sizeof(out) || ret == -EINVAL);
	CHECK(roce_perf_oob_version_decode(d, n, &v2) == ret);
	if (ret != 0)
		return;
	CHECK(v2 == v && (tagged || caps == 0));
	if (tagged)
		CHECK(roce_perf_oob_version_encode_caps(out, sizeof(out), v, caps) == 0);
	else
		CHECK(roce_perf_oob_version_encode(out, sizeof(out), v) == 0);
	CHECK(roce_perf_oob_version_decode_caps(out, sizeof(out), &v2, &caps2, &tagged2) == 0 &&
		v2 == v && caps2 == caps && tagged2 == tagged);
	ret = roce_perf_oob_version_check(v);
	CHECK(ret == 0 || ret == -EPROTO || ret == -EPROTONOSUPPORT);
}

static void
fuzz_u32(const uint8_t *d, size_t n)
{
	uint8_t out[ROCE_PERF_OOB_SYS_LEN];
	uint32_t v;
	int ret = roce_perf_oob_u32_decode(d, n, &v);

	CHECK(ret == 0 || ret == -EPROTO || ret == -EINVAL);
	CHECK(n == sizeof(out) || ret == -EINVAL);
	if (ret == 0)
		CHECK(roce_perf_oob_u32_encode(out, sizeof(out), v) == 0 &&
			memcmp(out, d, sizeof(out)) == 0);
}

static void
fuzz_mtu(const uint8_t *d, size_t n)
{
	uint8_t out[ROCE_PERF_OOB_MTU_LEN];
	uint8_t mtu;
	int ret = roce_perf_oob_mtu_decode(d, n, &mtu);

	CHECK(ret == 0 || ret == -EPROTO || ret == -EINVAL);
	CHECK(n == sizeof(out) || ret == -EINVAL);
	if (ret == 0)
		CHECK(mtu >= 1 && mtu <= 5 && roce_perf_oob_mtu_encode(out, sizeof(out), mtu) == 0 &&
			memcmp(out, d, sizeof(out)) == 0);
}

static void
fuzz_key(const uint8_t *d, size_t n)
{
	uint8_t out[ROCE_PERF_OOB_KEY_LEN];
	struct roce_perf_key k;
	int ret = roce_perf_oob_key_decode(d, n, &k);

	CHECK(ret == 0 || ret == -EPROTO || ret == -EINVAL);
	CHECK(n == sizeof(out) || ret == -EINVAL);
	if (ret == 0)
		CHECK(roce_perf_oob_key_encode(out, sizeof(out), &k) == 0 &&
			memcmp(out, d, sizeof(out)) == 0);
}

static void
fuzz_report(const uint8_t *d, size_t n)
{
	uint8_t out[ROCE_PERF_OOB_REPORT_LEN];
	uint64_t v;
	double x;
	int ret = roce_perf_oob_u64_decode(d, n, &v);

	CHECK(ret == 0 || ret == -EINVAL);
	CHECK(n == sizeof(out) || ret == -EINVAL);
	if (ret == 0)
		CHECK(roce_perf_oob_u64_encode(out, sizeof(out), v) == 0 &&
			memcmp(out, d, sizeof(out)) == 0);
	ret = roce_perf_oob_double_decode(d, n, &x);
	CHECK(n == sizeof(out) || ret == -EINVAL);
	if (ret == 0)
		CHECK(roce_perf_oob_double_encode(out, sizeof(out), x) == 0 &&
			memcmp(out, d, sizeof(out)) == 0);
}

static void
fuzz_done(const uint8_t *d, size_t n)
{
	int ret = roce_perf_oob_done_decode(d, n);

	CHECK(ret == 0 || ret == -EPROTO || ret == -EINVAL);
	CHECK(n == ROCE_PERF_OOB_DONE_LEN || ret == -EINVAL);
	if (ret == 0)
		CHECK(memcmp(d, "done", 5) == 0);
}

static void
fuzz_params(const uint8_t *d, size_t n)
{
	uint8_t out[ROCE_PERF_OOB_PARAMS_LEN];
	struct roce_perf_params p;
	int ret = roce_perf_oob_params_decode(d, n, &p);

	CHECK(ret == 0 || ret == -EPROTO || ret == -EINVAL);
	CHECK(n == sizeof(out) || ret == -EINVAL);
	if (ret == 0)
		CHECK(roce_perf_oob_params_encode(out, sizeof(out), &p) == 0 &&
			memcmp(out, d, sizeof(out)) == 0);
}

static void
fuzz_dest(const uint8_t *d, size_t n)
{
	uint8_t out[ROCE_PERF_OOB_DEST_LEN];
	struct roce_perf_key k, k2;
	int ret = roce_perf_oob_dest_decode(d, n, &k);

	CHECK(ret == 0 || ret == -EPROTO || ret == -EINVAL);
	CHECK(n == sizeof(out) || ret == -EINVAL);
	if (ret != 0)
		return;
	/* the padding and gid_index are not the key's: the rest re-encodes as it came */
	CHECK(roce_perf_oob_dest_encode(out, sizeof(out), &k) == 0 &&
		memcmp(out, d, 20) == 0 && memcmp(out + 24, d + 24, 28) == 0);
	CHECK(roce_perf_oob_dest_decode(out, sizeof(out), &k2) == 0 &&
		memcmp(&k, &k2, sizeof(k)) == 0);
}

static const struct {
	void (*fn)(const uint8_t *d, size_t n);
	size_t len;
} kinds[] = {
	{ fuzz_version, ROCE_PERF_OOB_VERSION_LEN },
	{ fuzz_u32, ROCE_PERF_OOB_SYS_LEN },
	{ fuzz_mtu, ROCE_PERF_OOB_MTU_LEN },
	{ fuzz_key, ROCE_PERF_OOB_KEY_LEN },
	{ fuzz_report, ROCE_PERF_OOB_REPORT_LEN },
	{ fuzz_done, ROCE_PERF_OOB_DONE_LEN },
};

#define NB_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static void
fuzz_run(enum roce_perf_role role, const uint8_t *d, size_t n)
{
	static const struct roce_perf_key keys[2] = {
		{ .out_reads = 1, .qpn = 0x11, .psn = 0x553df5, .rkey = 0x242, .vaddr = 0x1000 },
		{ .out_reads = 1, .qpn = 0x12, .psn = 0x1234, .rkey = 0x242, .vaddr = 0x2000 },
	};
	struct roce_perf_oob_cfg cfg = {
		.role = role,
		.timeout_ms = 1000,
		.local = { .page_size = 4096, .cache_line = 64, .mtu = 3 },
		.keys = keys,
	};
	static struct roce_perf_oob_result res;
	int sv[2], ret;

	if (n == 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return;
	cfg.test = (enum roce_perf_test)(d[0] % ROCE_PERF_TEST_MAX);
	cfg.nqps = 1 + (d[0] >> 4) % 2;
	cfg.local.caps = (d[0] & 0x80) ? ROCE_PERF_CAP_SR | ROCE_PERF_CAP_PARAMS : 0;
	cfg.params = (struct roce_perf_params){ .size = 64, .iters = 5, .qps = cfg.nqps };
	/* the sequence's variant: -a and --run_infinitely on every test, -b where it exists */
	cfg.mode.all = (d[0] & 0x20) != 0;
	cfg.mode.infinite = (d[0] & 0x40) != 0;
	cfg.mode.duration = (d[0] & 0x04) != 0;
	cfg.mode.duplex = (d[0] & 0x08) && cfg.test < ROCE_PERF_WRITE_LAT &&
		!(cfg.test == ROCE_PERF_SEND_BW && cfg.mode.infinite);
	/* the whole peer stream fits in the socket buffer; then EOF */
	if (write(sv[1], d + 1, n - 1) == (ssize_t)(n - 1) && shutdown(sv[1], SHUT_WR) == 0) {
		ret = roce_perf_oob_run(sv[0], &cfg, &res);
		CHECK(ret == 0 || ret == -ECONNRESET || ret == -EPROTO ||
			ret == -EPROTONOSUPPORT);
		CHECK(ret != 0 || (res.agreed.caps & ~cfg.local.caps) == 0);
	}
	close(sv[0]);
	close(sv[1]);
}

/* The peer's SENDs, cut from the input at the sizes asked for; what we send goes nowhere. */
struct script {
	const uint8_t *d;
	size_t n;
	unsigned int cm_calls;
};

static int
script_xchg(void *ctx, enum roce_perf_role role, const void *out, void *in, size_t len,
		int timeout_ms)
{
	struct script *sc = ctx;

	(void)role;
	(void)out;
	(void)timeout_ms;
	if (sc->n < len)
		return -ECONNRESET;
	memcpy(in, sc->d, len);
	sc->d += len;
	sc->n -= len;
	return 0;
}

static int
script_cm(void *arg)
{
	((struct script *)arg)->cm_calls++;
	return 0;
}

static void
fuzz_run_rdma_cm(const uint8_t *d, size_t n)
{
	static const struct roce_perf_key key = { .out_reads = 1, .qpn = 0x4c, .psn = 0x1234,
		.rkey = 0x4cf3, .vaddr = 0x1000 };
	static struct roce_perf_oob_result res;
	struct script sc = { 0 };
	struct roce_perf_oob_chan ch = { ROCE_PERF_OOB_RDMA_CM, script_xchg, &sc };
	struct roce_perf_oob_cfg cfg = {
		.timeout_ms = 1000,
		.local = { .page_size = 4096, .cache_line = 64, .mtu = 3 },
		.keys = &key,
		.nqps = 1,
	};
	int ret;

	if (n == 0)
		return;
	cfg.test = (enum roce_perf_test)(d[0] % ROCE_PERF_TEST_MAX);
	cfg.role = (d[0] & 0x08) ? ROCE_PERF_SERVER : ROCE_PERF_CLIENT;
	cfg.local.caps = (d[0] & 0x80) ? ROCE_PERF_CAP_PARAMS : 0;
	cfg.params = (struct roce_perf_params){ .size = 64, .iters = 5, .qps = 1 };
	cfg.mode.all = (d[0] & 0x20) != 0;
	cfg.hooks.cm_connect = script_cm;
	cfg.hooks.arg = &sc;
	sc.d = d + 1;
	sc.n = n - 1;
	ret = roce_perf_oob_run_chan(&ch, &cfg, &res);
	CHECK(ret == 0 || ret == -ECONNRESET || ret == -EPROTO || ret == -EPROTONOSUPPORT);
	CHECK(sc.cm_calls <= 1 && (ret != 0 || sc.cm_calls == 1));
	CHECK(ret != 0 || (res.agreed.caps & ~cfg.local.caps) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int k;
	uint8_t *copy;

	if (size == 0)
		return 0;
	/* the message kinds, the two runs, then the parameters message, the -R key and the -R
	 * run (so the seeds made before each kept their meaning) */
	k = data[0] % (NB_KINDS + 5);
	if (k == NB_KINDS + 3) {
		copy = malloc(size - 1 + 1);
		if (copy == NULL)
			return 0;
		memcpy(copy, data + 1, size - 1);
		fuzz_dest(copy, size - 1);
		if (size - 1 > ROCE_PERF_OOB_DEST_LEN)
			fuzz_dest(copy, ROCE_PERF_OOB_DEST_LEN);
		free(copy);
		return 0;
	}
	if (k == NB_KINDS + 4) {
		fuzz_run_rdma_cm(data + 1, size - 1);
		return 0;
	}
	if (k == NB_KINDS || k == NB_KINDS + 1) {
		fuzz_run(k == NB_KINDS ? ROCE_PERF_CLIENT : ROCE_PERF_SERVER, data + 1, size - 1);
		return 0;
	}
	if (k == NB_KINDS + 2) {
		copy = malloc(size - 1 + 1);
		if (copy == NULL)
			return 0;
		memcpy(copy, data + 1, size - 1);
		fuzz_params(copy, size - 1);
		if (size - 1 > ROCE_PERF_OOB_PARAMS_LEN)
			fuzz_params(copy, ROCE_PERF_OOB_PARAMS_LEN);
		free(copy);
		return 0;
	}
	/* a heap copy of the exact size, so ASan sees any read past the message */
	copy = malloc(size - 1 + 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data + 1, size - 1);
	kinds[k].fn(copy, size - 1);
	if (size - 1 > kinds[k].len)
		kinds[k].fn(copy, kinds[k].len);
	free(copy);
	return 0;
}
