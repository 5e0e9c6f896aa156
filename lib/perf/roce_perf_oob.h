/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_PERF_OOB_H
#define ROCE_PERF_OOB_H

/**
 * @file
 * perftest-compatible out-of-band (OOB) exchange over a connected TCP socket.
 *
 * perftest 6.06 has no framing: every message is a fixed-size raw struct or string, one
 * write() per message, and every step is symmetric and client-first (the client writes N bytes
 * and then reads N bytes; the server reads N bytes and then writes N bytes). The only exception
 * is the final "done\0", which both sides write without reading.
 * See doc/perftest-interop.md and ../shared/captures/perftest-oob/INDEX.md.
 *
 * We always advertise 6.06. perftest 6.29 and newer then skip their binary parameter
 * negotiation and speak the 6.06 exchange (recorded in test/unit/data/perftest-oob-629/); only
 * perftest 6.28, which negotiates with every peer, is refused. Two rocedp appliances also agree
 * on rocedp capabilities (ROCE_PERF_CAP_*) through a tag in the tail of the 16-byte version
 * message, after the NUL that ends the version string: every perftest reads that buffer with
 * atof() only, so it ignores the tag.
 *
 * Encoders and decoders are pure functions. Decoders refuse a wrong buffer length with -EINVAL
 * and malformed content with -EPROTO.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROCE_PERF_OOB_VERSION_LEN 16	/**< char[16] version string */
#define ROCE_PERF_OOB_SYS_LEN 4		/**< int32 BE page size or cache line size */
#define ROCE_PERF_OOB_MTU_LEN 2		/**< "%d" of enum ibv_mtu, truncated to 2 bytes */
#define ROCE_PERF_OOB_KEY_LEN 108	/**< ASCII key message with GID, NUL-terminated */
#define ROCE_PERF_OOB_REPORT_LEN 8	/**< one BE uint64 or IEEE double */
#define ROCE_PERF_OOB_DONE_LEN 5	/**< "done\0" */
/** rdma_cm modes (-R): the key as a binary struct pingpong_dest (big-endian fields) */
#define ROCE_PERF_OOB_DEST_LEN 56

/** Version we advertise (x100): 6.06, below 6.28 so no newer negotiation starts. */
#define ROCE_PERF_OOB_VERSION 606
/** Oldest peer version accepted (x100): perftest itself refuses < 5.70. */
#define ROCE_PERF_OOB_VERSION_MIN 570
/**
 * perftest 6.28 (x100) sends a binary parameter negotiation (struct
 * perftest_parameters_negotiate, 312 or 320 bytes) after the MTU to every peer, whatever its
 * version, so it cannot talk to a 6.06 peer: refused.
 */
#define ROCE_PERF_OOB_VERSION_NEGOTIATE 628
/** From this version (x100) on, perftest skips the negotiation with a peer below 6.28: accepted. */
#define ROCE_PERF_OOB_VERSION_NEGOTIATE_SKIP 629
/** Former name of ROCE_PERF_OOB_VERSION_NEGOTIATE. */
#define ROCE_PERF_OOB_VERSION_NEWER ROCE_PERF_OOB_VERSION_NEGOTIATE

/**
 * @name rocedp capability tag
 * A rocedp version message is the version string, its NUL, ROCE_PERF_OOB_TAG, the capability
 * bits as a big-endian uint32, then NUL padding: "6.06\0" "rdp1" 00 00 00 01 00 00 00 for
 * ROCE_PERF_CAP_SR. A stock perftest sends NUL padding after the NUL instead.
 * @{
 */
#define ROCE_PERF_OOB_TAG "rdp1"	/**< magic after the version string's NUL */
#define ROCE_PERF_OOB_TAG_LEN 4		/**< length of ROCE_PERF_OOB_TAG */
#define ROCE_PERF_OOB_CAPS_LEN 4	/**< capability bits, big-endian uint32 */
#define ROCE_PERF_CAP_SR (UINT32_C(1) << 0)	/**< selective repeat */
/** rocectl perf --verify: source buffers hold the agreed pattern, so the receiver can check. */
#define ROCE_PERF_CAP_PATTERN (UINT32_C(1) << 1)
/**
 * The rocedp parameters message (ROCE_PERF_OOB_PARAMS_LEN bytes, struct roce_perf_params)
 * follows the prologue when both sides offer this, so two rocectl perf agree on the test, its
 * size, length and QPs before anything else. A stock perftest never offers it (it sends no
 * tag), so it never sees the message: its exchange stays byte for byte perftest's.
 */
#define ROCE_PERF_CAP_PARAMS (UINT32_C(1) << 2)
/** @} */

/**
 * @name rocedp parameters message
 * "rdpP", then big-endian: u32 format (1), u32 test (enum roce_perf_test), u32 flags
 * (ROCE_PERF_PAR_*), u64 size, u64 iterations, u32 duration (ms), u32 QPs, u32 connection
 * type (ROCE_PERF_CONN_RC or ROCE_PERF_CONN_UD), then NUL padding to 64 bytes.
 * @{
 */
#define ROCE_PERF_OOB_PARAMS_LEN 64
#define ROCE_PERF_OOB_PARAMS_MAGIC "rdpP"
#define ROCE_PERF_OOB_PARAMS_FORMAT 1
#define ROCE_PERF_PAR_DUPLEX (1u << 0)		/**< -b */
#define ROCE_PERF_PAR_ALL (1u << 1)		/**< -a: every size */
#define ROCE_PERF_PAR_INFINITE (1u << 2)	/**< --run_infinitely */
#define ROCE_PERF_PAR_CAS (1u << 3)		/**< atomics: compare-and-swap, else fetch-and-add */
#define ROCE_PERF_PAR_ATOMIC_LAT (1u << 4)	/**< test read_lat: atomic_lat (which talks as it) */
#define ROCE_PERF_PAR_SET_SIZE (1u << 8)	/**< size (or -a) given on the command line */
#define ROCE_PERF_PAR_SET_ITERS (1u << 9)	/**< -n given */
#define ROCE_PERF_PAR_SET_DURATION (1u << 10)	/**< -D given */
#define ROCE_PERF_PAR_SET_QPS (1u << 11)	/**< -q given */
#define ROCE_PERF_PAR_SET_ATOMIC (1u << 12)	/**< -A given */
/** Every flag a format-1 message may carry. */
#define ROCE_PERF_PAR_FLAGS (0x1fu | (0x1fu << 8))
/** Connection types, as perftest's enum ctx_connection numbers them (-c RC, -c UD). */
#define ROCE_PERF_CONN_RC 0
#define ROCE_PERF_CONN_UD 2
/** Largest message size and duration a parameters message may carry. */
#define ROCE_PERF_PAR_MAX_SIZE (UINT64_C(1) << 31)
#define ROCE_PERF_PAR_MAX_DURATION_MS 86400000u
/** @} */

/** What a rocectl perf runs, as the parameters message carries it. */
struct roce_perf_params {
	uint32_t test;		/**< enum roce_perf_test */
	uint32_t flags;		/**< ROCE_PERF_PAR_* */
	uint64_t size;		/**< message size (the largest with ROCE_PERF_PAR_ALL) */
	uint64_t iters;		/**< iterations per QP and size; 0 with a duration */
	uint32_t duration_ms;	/**< 0: iterations */
	uint32_t qps;		/**< 1 .. ROCE_PERF_OOB_MAX_QPS */
	uint32_t conn;		/**< ROCE_PERF_CONN_RC or ROCE_PERF_CONN_UD */
};

/** Maximum number of QPs the exchange driver handles. */
#define ROCE_PERF_OOB_MAX_QPS 16384
/** Sizes of a -a sweep (2 B .. 8 MiB), as perftest's RC tests. */
#define ROCE_PERF_OOB_NB_SIZES 23
/** Number of 8-byte report values a bw test exchanges. */
#define ROCE_PERF_OOB_NB_REPORT 5
/** Maximum number of messages (per direction) of any test with ROCE_PERF_OOB_MAX_QPS QPs. */
#define ROCE_PERF_OOB_MAX_MSGS (4 + 2 * ROCE_PERF_OOB_MAX_QPS + 8 + ROCE_PERF_OOB_NB_REPORT)
/** ... and with per-size handshakes (-a with -b, send tests with -a). */
#define ROCE_PERF_OOB_MAX_MSGS_MODE (ROCE_PERF_OOB_MAX_MSGS + \
	ROCE_PERF_OOB_NB_SIZES * (2 + ROCE_PERF_OOB_NB_REPORT))

/** Side of the exchange: the client (perftest with a server name) always writes first. */
enum roce_perf_role {
	ROCE_PERF_CLIENT,
	ROCE_PERF_SERVER,
};

/** perftest tools whose OOB sequence we implement. */
enum roce_perf_test {
	ROCE_PERF_WRITE_BW,
	ROCE_PERF_READ_BW,
	ROCE_PERF_ATOMIC_BW,
	ROCE_PERF_SEND_BW,
	ROCE_PERF_WRITE_LAT,
	ROCE_PERF_READ_LAT,
	ROCE_PERF_SEND_LAT,
	ROCE_PERF_TEST_MAX,
};

/** Key message fields (perftest struct pingpong_dest, GID form). */
struct roce_perf_key {
	uint16_t lid;		/**< 0 on RoCE */
	uint16_t out_reads;	/**< max outstanding RDMA reads/atomics */
	uint32_t qpn;		/**< 24 bits */
	uint32_t psn;		/**< 24 bits */
	uint32_t rkey;		/**< 0 for send tests */
	uint64_t vaddr;		/**< buffer address */
	uint8_t gid[16];	/**< raw GID bytes */
	uint32_t srqn;		/**< 0 unless SRQ */
};

/** One side's prologue values. */
struct roce_perf_sys {
	uint32_t version;	/**< version x100, e.g. 606 */
	uint32_t page_size;	/**< cycle buffer (page size) */
	uint32_t cache_line;	/**< cache line size */
	uint8_t mtu;		/**< enum ibv_mtu, 1 (256) .. 5 (4096) */
	/** rocedp capabilities (ROCE_PERF_CAP_*). Local: what we offer; non-zero adds the tag to
	 * our version message, 0 sends exactly what perftest 6.06 sends. Peer: its tag's bits,
	 * 0 from a stock perftest. Agreed: local AND peer. */
	uint32_t caps;
};

/** The 8-byte report values of a bw test, in the sender's display units. */
struct roce_perf_report {
	uint64_t size;		/**< message size of the last run */
	uint64_t iters;		/**< iterations, summed over the QPs */
	double bw_peak;
	double bw_avg;
	double msg_rate;
};

/**
 * The variant of a test's sequence, as perftest's options choose it (perftest 6.06's
 * src/TEST_bw.c, src/TEST_lat.c): -b adds a barrier and a report exchange (per size with -a,
 * for write, read and send), -a adds per-size barriers to the send tests, --run_infinitely
 * runs the traffic without -b's barrier, send_bw -b -D exchanges no reports. send_bw -b
 * --run_infinitely has no sequence (perftest refuses it).
 */
struct roce_perf_oob_mode {
	bool duplex;		/**< -b (bandwidth tests) */
	bool all;		/**< -a: every size, ROCE_PERF_OOB_NB_SIZES of them */
	bool infinite;		/**< --run_infinitely */
	bool duration;		/**< -D (only send_bw -b tells) */
	/** Sizes of a -a sweep: 0 for ROCE_PERF_OOB_NB_SIZES (2 B .. 8 MiB); UD sweeps 2 B up
	 * to the MTU, log2(MTU) sizes. At most ROCE_PERF_OOB_NB_SIZES. */
	unsigned int nb_sizes;
};

/** Traffic hook return values besides 0 and -errno. */
#define ROCE_PERF_OOB_END 1	/**< end the exchange here, successfully (the test is over) */
#define ROCE_PERF_OOB_FIRST 2	/**< we stopped first: write our next message before reading */

/** What the agree hook may change before the keys are exchanged. */
struct roce_perf_oob_setup {
	const struct roce_perf_key *keys;	/**< the local keys (cfg's by default) */
	unsigned int nqps;			/**< how many */
	struct roce_perf_oob_mode mode;		/**< the sequence's variant (cfg's by default) */
	int traffic_timeout_ms;			/**< as cfg's (by default) */
};

/**
 * Hooks called by roce_perf_oob_run(); any may be NULL. A negative return aborts the run with
 * that error.
 */
struct roce_perf_oob_hooks {
	/** After the prologue (and the parameters message): @p peer is the peer's parameters,
	 * NULL from a peer that sent none (a stock perftest). May replace the keys, their number
	 * and the mode in @p setup (a side adopting what only the other was given). */
	int (*agree)(void *arg, const struct roce_perf_params *peer,
			struct roce_perf_oob_setup *setup);
	/** After the first key exchange: peer keys known, bring the QPs to RTR/RTS. */
	int (*connect)(void *arg, const struct roce_perf_key *peer, unsigned int nqps);
	/** Before the barrier that precedes a size's traffic, where perftest posts its
	 * receives (send tests only). */
	int (*prepare)(void *arg);
	/** At the traffic point: run @p sizes message sizes (1 inside a per-size loop, every
	 * remaining one outside); fill @p rep with our results. 0, ROCE_PERF_OOB_END,
	 * ROCE_PERF_OOB_FIRST or -errno. */
	int (*traffic)(void *arg, struct roce_perf_report *rep, unsigned int sizes);
	/** After a report exchange: the peer's values (garbage from a half-duplex server). */
	int (*report)(void *arg, const struct roce_perf_report *peer);
	void *arg;
	/** rdma_cm (ROCE_PERF_OOB_RDMA_CM) only: connect the test's QPs through the connection
	 * manager, between the two barriers perftest's create_rdma_cm_connection() exchanges
	 * after the prologue. */
	int (*cm_connect)(void *arg);
};

/** How the messages of an exchange travel. */
enum roce_perf_oob_transport {
	/** perftest's default: a TCP connection, 108-byte ASCII keys, "done" at the end */
	ROCE_PERF_OOB_TCP,
	/**
	 * perftest -R (--rdma_cm): SENDs on an RC QP the connection manager connected (perftest's
	 * communication QP, its first CM connection). Every message is one SEND of the same size
	 * as over TCP, except the keys, ROCE_PERF_OOB_DEST_LEN-byte binary struct pingpong_dest;
	 * the prologue is followed by a barrier, the test QPs' CM connections (hook cm_connect)
	 * and another barrier, both with an all-zero key; no "done" at the end.
	 */
	ROCE_PERF_OOB_RDMA_CM,
};

/** The channel roce_perf_oob_run_chan() exchanges messages over. */
struct roce_perf_oob_chan {
	enum roce_perf_oob_transport transport;
	/**
	 * Exchange one message of @p len bytes, as roce_perf_oob_xchg(): the client (or
	 * @p role ROCE_PERF_CLIENT) sends @p out then receives @p in, the server receives first.
	 * A message of another length is -EPROTO.
	 * @return 0, -ETIMEDOUT, -ECONNRESET (the peer went away), -EPROTO, or another -errno.
	 */
	int (*xchg)(void *ctx, enum roce_perf_role role, const void *out, void *in, size_t len,
			int timeout_ms);
	void *ctx;
};

/** Configuration of one exchange. */
struct roce_perf_oob_cfg {
	enum roce_perf_test test;
	enum roce_perf_role role;
	unsigned int nqps;		/**< 1 .. ROCE_PERF_OOB_MAX_QPS */
	int timeout_ms;			/**< deadline of each message; < 0 waits forever */
	/** Deadline of the first message after the traffic point, counted from the end of the
	 * traffic hook, as it waits for the peer's traffic to end; 0: timeout_ms, < 0: forever. */
	int traffic_timeout_ms;
	/** version is ignored (we send ROCE_PERF_OOB_VERSION); caps are offered to the peer */
	struct roce_perf_sys local;
	const struct roce_perf_key *keys; /**< nqps local keys */
	struct roce_perf_report report;	/**< sent when no traffic hook replaces it */
	struct roce_perf_oob_mode mode;	/**< the sequence's variant; zero: perftest's default */
	/** Sent when both sides offer ROCE_PERF_CAP_PARAMS (test: ours, from @test). */
	struct roce_perf_params params;
	struct roce_perf_oob_hooks hooks;
};

/** Results of one exchange. */
struct roce_perf_oob_result {
	struct roce_perf_sys peer;		/**< peer's prologue values and caps */
	struct roce_perf_sys agreed;		/**< max page/cache line, min MTU, AND of caps */
	struct roce_perf_key peer_keys[ROCE_PERF_OOB_MAX_QPS];
	struct roce_perf_report peer_report;	/**< a server's is garbage: do not trust it */
	struct roce_perf_params peer_params;	/**< valid when @has_peer_params */
	bool has_peer_params;
};

/**
 * Encode our version string (NUL-padded).
 * @param buf Output buffer.
 * @param len Must be ROCE_PERF_OOB_VERSION_LEN.
 * @param version Version x100, e.g. 606 for "6.06"; at most 99999.
 * @return 0, or -EINVAL on a wrong length or version.
 */
int
roce_perf_oob_version_encode(void *buf, size_t len, uint32_t version);

/**
 * Encode our version string followed by the rocedp capability tag (see ROCE_PERF_OOB_TAG).
 * @param buf Output buffer.
 * @param len Must be ROCE_PERF_OOB_VERSION_LEN.
 * @param version Version x100; at most 99999.
 * @param caps Capability bits (ROCE_PERF_CAP_*), sent as they are.
 * @return 0, or -EINVAL on a wrong length or version.
 */
int
roce_perf_oob_version_encode_caps(void *buf, size_t len, uint32_t version, uint32_t caps);

/**
 * Strictly parse a peer's version string: digits '.' 1-2 digits, NUL, then either NUL padding
 * (stock perftest) or the rocedp tag followed by NUL padding. Same as
 * roce_perf_oob_version_decode_caps() without the capabilities.
 * @param buf Received bytes.
 * @param len Must be ROCE_PERF_OOB_VERSION_LEN.
 * @param version Set to the version x100 ("6.1" and "6.10" both give 610, as atof() does).
 * @return 0, -EINVAL on a wrong length, -EPROTO on malformed text or padding.
 */
int
roce_perf_oob_version_decode(const void *buf, size_t len, uint32_t *version);

/**
 * Parse a peer's version string and its rocedp capability tag, if any.
 * @param buf Received bytes.
 * @param len Must be ROCE_PERF_OOB_VERSION_LEN.
 * @param version Set to the version x100.
 * @param caps Set to the tag's capability bits, 0 without a tag; may be NULL.
 * @param tagged Set to whether the tag was present (the peer is rocedp); may be NULL.
 * @return 0, -EINVAL on a wrong length, -EPROTO on malformed text or padding (anything after
 *   the NUL that is neither all NUL nor exactly the tag).
 */
int
roce_perf_oob_version_decode_caps(const void *buf, size_t len, uint32_t *version,
		uint32_t *caps, bool *tagged);

/**
 * Check a peer version is one we interoperate with (and log why not).
 * @return 0, -EPROTO below ROCE_PERF_OOB_VERSION_MIN, -EPROTONOSUPPORT for perftest 6.28
 *   (from ROCE_PERF_OOB_VERSION_NEGOTIATE up to ROCE_PERF_OOB_VERSION_NEGOTIATE_SKIP).
 */
int
roce_perf_oob_version_check(uint32_t version);

/**
 * Encode a 4-byte big-endian value (page size, cache line size).
 * @return 0, or -EINVAL on a wrong length or a value above INT32_MAX.
 */
int
roce_perf_oob_u32_encode(void *buf, size_t len, uint32_t val);

/**
 * Decode a 4-byte big-endian value.
 * @return 0, -EINVAL on a wrong length, -EPROTO when negative as an int32.
 */
int
roce_perf_oob_u32_decode(const void *buf, size_t len, uint32_t *val);

/**
 * Encode the 2-byte MTU message ("3\0" for IBV_MTU_1024).
 * @return 0, or -EINVAL on a wrong length or an MTU enum outside 1..5.
 */
int
roce_perf_oob_mtu_encode(void *buf, size_t len, uint8_t mtu);

/**
 * Decode the 2-byte MTU message.
 * @return 0, -EINVAL on a wrong length, -EPROTO unless it is a digit 1..5 then NUL.
 */
int
roce_perf_oob_mtu_decode(const void *buf, size_t len, uint8_t *mtu);

/**
 * Encode a 108-byte key message.
 * @return 0, or -EINVAL on a wrong length or qpn/psn wider than 24 bits.
 */
int
roce_perf_oob_key_encode(void *buf, size_t len, const struct roce_perf_key *key);

/**
 * Strictly decode a 108-byte key message: fixed-width lowercase hex fields, ':' after each,
 * NUL last.
 * @return 0, -EINVAL on a wrong length, -EPROTO on malformed content.
 */
int
roce_perf_oob_key_decode(const void *buf, size_t len, struct roce_perf_key *key);

/**
 * Encode a ROCE_PERF_OOB_DEST_LEN-byte struct pingpong_dest (perftest's -R key): lid,
 * out_reads, qpn, psn, rkey as 4-byte big-endian ints, 4 bytes of padding, vaddr (8), the GID
 * (16), srqn (4), gid_index (4, sent as 0).
 * @return 0, or -EINVAL on a wrong length or qpn/psn wider than 24 bits.
 */
int
roce_perf_oob_dest_encode(void *buf, size_t len, const struct roce_perf_key *key);

/**
 * Decode a struct pingpong_dest. The padding and gid_index are ignored, as perftest does.
 * @return 0, -EINVAL on a wrong length, -EPROTO on a lid or out_reads above 0xffff (a negative
 *   int among them) or a qpn or psn above 24 bits.
 */
int
roce_perf_oob_dest_decode(const void *buf, size_t len, struct roce_perf_key *key);

/** Encode an 8-byte big-endian uint64. @return 0, or -EINVAL on a wrong length. */
int
roce_perf_oob_u64_encode(void *buf, size_t len, uint64_t val);

/** Decode an 8-byte big-endian uint64. @return 0, or -EINVAL on a wrong length. */
int
roce_perf_oob_u64_decode(const void *buf, size_t len, uint64_t *val);

/** Encode a double as 8 big-endian bytes (hton_double). @return 0, or -EINVAL. */
int
roce_perf_oob_double_encode(void *buf, size_t len, double val);

/** Decode 8 big-endian bytes into a double, bit for bit. @return 0, or -EINVAL. */
int
roce_perf_oob_double_decode(const void *buf, size_t len, double *val);

/** Encode "done\0". @return 0, or -EINVAL on a wrong length. */
int
roce_perf_oob_done_encode(void *buf, size_t len);

/** Check "done\0". @return 0, -EINVAL on a wrong length, -EPROTO on other bytes. */
int
roce_perf_oob_done_decode(const void *buf, size_t len);

/**
 * Encode a parameters message.
 * @return 0, or -EINVAL on a wrong length or values outside what the decoder takes.
 */
int
roce_perf_oob_params_encode(void *buf, size_t len, const struct roce_perf_params *p);

/**
 * Strictly decode a parameters message: magic, format 1, a known test, known flags, a size
 * of 1 .. ROCE_PERF_PAR_MAX_SIZE, 1 .. ROCE_PERF_OOB_MAX_QPS QPs, a duration up to
 * ROCE_PERF_PAR_MAX_DURATION_MS, connection type RC or UD, NUL padding.
 * @return 0, -EINVAL on a wrong length, -EPROTO on malformed content.
 */
int
roce_perf_oob_params_decode(const void *buf, size_t len, struct roce_perf_params *p);

/**
 * The message sizes one side sends for a test, in order (the peer sends the same sizes).
 * @param sizes Output array, or NULL to count only.
 * @param cap Capacity of @sizes.
 * @param traffic_at Set (when not NULL) to the number of messages before the traffic.
 * @return Number of messages, -EINVAL on a bad test or nqps, -ENOSPC when @cap is too small.
 */
int
roce_perf_oob_plan(enum roce_perf_test test, unsigned int nqps, uint16_t *sizes, size_t cap,
		unsigned int *traffic_at);

/**
 * roce_perf_oob_plan() for a variant of the sequence (@p mode NULL: perftest's default).
 * Counts perftest's messages only: the parameters message two rocedp add is not in it.
 * @param traffic_at Set to the number of messages before the first traffic point.
 * @return Number of messages, -EINVAL on a bad test, nqps or mode (-b with a latency test),
 *   -ENOSPC when @cap is too small.
 */
int
roce_perf_oob_plan_mode(enum roce_perf_test test, unsigned int nqps,
		const struct roce_perf_oob_mode *mode, uint16_t *sizes, size_t cap,
		unsigned int *traffic_at);

/**
 * Exchange one message of @len bytes: the client writes @out then reads @in, the server reads
 * then writes. One write() per message; the read collects exactly @len bytes.
 * @param timeout_ms Deadline of the whole step, our message and all of the peer's, counted
 *   from the call (not a bound on each silence: a peer dripping bytes cannot stretch it);
 *   < 0: none.
 * @return 0, -ETIMEDOUT, -ECONNRESET on EOF or a short message, or another -errno of the socket.
 */
int
roce_perf_oob_xchg(int fd, enum roce_perf_role role, const void *out, void *in, size_t len,
		int timeout_ms);

/**
 * Run the prologue: version, page size, cache line size, MTU.
 * @param local Our values (version ignored; caps != 0 adds the capability tag).
 * @param peer Set to the peer's values, caps from its tag (0 from a stock perftest).
 * @param agreed Set to max page/cache line, min MTU, local AND peer caps, version = ours.
 * @return 0, an error of roce_perf_oob_xchg(), -EINVAL on bad local values, -EPROTO or
 *   -EPROTONOSUPPORT on a peer message we refuse.
 */
int
roce_perf_oob_prologue(int fd, enum roce_perf_role role, const struct roce_perf_sys *local,
		int timeout_ms, struct roce_perf_sys *peer, struct roce_perf_sys *agreed);

/**
 * Exchange one key message.
 * @return 0, an error of roce_perf_oob_xchg(), -EINVAL on a bad local key, -EPROTO on a bad
 *   peer key, -EPROTONOSUPPORT (logged) when the peer's message is a known perftest variant we
 *   do not implement: the 125-byte key of --data_validation, or the binary parameter
 *   negotiation of perftest >= 6.28.
 */
int
roce_perf_oob_keys(int fd, enum roce_perf_role role, const struct roce_perf_key *mine,
		struct roce_perf_key *peer, int timeout_ms);

/**
 * Exchange the 5 report values of a bw test, each its own message.
 * @return 0, or an error of roce_perf_oob_xchg().
 */
int
roce_perf_oob_reports(int fd, enum roce_perf_role role, const struct roce_perf_report *mine,
		struct roce_perf_report *peer, int timeout_ms);

/**
 * Send "done\0" without reading the peer's; ECONNRESET/EPIPE are normal here.
 * @return 0, or -errno of the socket.
 */
int
roce_perf_oob_done(int fd);

/**
 * Run the whole exchange of @cfg->test: the prologue, the parameters message when both sides
 * offer ROCE_PERF_CAP_PARAMS, the agree hook, then the sequence table of the test and mode
 * (as the agree hook left it), calling the hooks at their points. Does not close @fd.
 * @return 0 (also when the traffic hook ended the exchange with ROCE_PERF_OOB_END), -EINVAL
 *   on a bad @cfg or mode, a hook's negative return, or an error of the functions above.
 */
int
roce_perf_oob_run(int fd, const struct roce_perf_oob_cfg *cfg, struct roce_perf_oob_result *res);

/**
 * roce_perf_oob_run() over any channel: over ROCE_PERF_OOB_RDMA_CM the keys are binary, the
 * CM barriers follow the prologue (calling the cm_connect hook) and no "done" is written.
 * @return as roce_perf_oob_run(); -EINVAL also for a channel without xchg.
 */
int
roce_perf_oob_run_chan(const struct roce_perf_oob_chan *ch, const struct roce_perf_oob_cfg *cfg,
		struct roce_perf_oob_result *res);

/**
 * Whether our RoCE traffic may go to the GID of a peer's key. The key alone says where the
 * traffic goes, so a side-channel peer could aim it at a third host: only the side channel's
 * peer itself, or another IPv4 host on our port's subnet (not its network or broadcast
 * address, not our own), is accepted.
 * @param gid The peer key's GID (IPv4 as ::ffff:a.b.c.d).
 * @param tcp_peer The side channel peer's address in the same form.
 * @param port_ip4 Our port's IPv4 address (network order), or NULL when it has none.
 * @param prefix Its prefix length, 0 to 32.
 * @return 0 when allowed, -EPERM when not, -EINVAL on a prefix above 32.
 */
int
roce_perf_gid_check(const uint8_t gid[16], const uint8_t tcp_peer[16], const uint8_t *port_ip4,
		unsigned int prefix);

/** Name of a test ("write_bw", ...), or NULL. */
const char *
roce_perf_test_name(enum roce_perf_test test);

#endif /* ROCE_PERF_OOB_H */
