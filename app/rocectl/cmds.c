/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The subcommand table and the words-to-request translation. Every argument is NAME=VALUE with
 * NAME the request member (dotted names fill nested objects: remote.qpn=...), or --NAME VALUE
 * (--NAME=VALUE) as tcpdump and dumpcap users type it; the arguments marked positional may also
 * be given bare, in table order. Usage lines and help are generated from the same table, so
 * they cannot drift from what is parsed.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roce_cc_knobs.h"
#include "rocectl.h"

#define END { NULL, RC_U64, 0, NULL }
#define ARGS(...) ((const struct rc_arg[]){ __VA_ARGS__, END })

/* Arguments several commands share. */
#define A_QPN { "qpn", RC_U64, RC_REQ | RC_POS, "QP number" }
#define A_RKEY { "rkey", RC_U64, RC_REQ | RC_POS, "the MR's rkey" }
#define A_LKEY { "lkey", RC_U64, RC_REQ, "local MR (its lkey, equal to its rkey)" }
#define A_OFFSET { "offset", RC_U64, 0, "byte offset in the local MR (default 0)" }
#define A_LENGTH(def) { "length", RC_U64, 0, "bytes (default " def ")" }
#define A_REMOTE_ADDR { "remote_addr", RC_U64, RC_REQ, "remote address (peer MR's iova + offset)" }
#define A_REMOTE_RKEY { "rkey", RC_U64, RC_REQ, "the peer MR's rkey" }
#define A_COUNT { "count", RC_U64, 0, "this many identical WRs, up to the queue depth (default 1)" }
#define A_PD { "pd", RC_U64, RC_ZERO, "protection domain (default 0, the shared one: each " \
	"rocectl command is a connection of its own, whose own PD would go with it)" }
#define A_SIGNALED { "signaled", RC_BOOL, 0, "ask for a completion (default true)" }
#define A_WR_ID { "wr_id", RC_U64, 0, "wr_id of the first WR, +1 for each next (default 0)" }
#define A_ACCESS(what) { "access", RC_LIST, 0, what }
#define A_RANGE_OFFSET { "offset", RC_U64, 0, "first byte (default 0)" }

/* cc set: one argument per knob of lib/cc's table, with its unit and range. */
#define CC_KNOB_ARG(n, N, u, lo, hi, d) , { #n, RC_U64, 0, d " (" u ", " #lo " to " #hi ")" }
#define CC_KNOB_ARGS ROCE_CC_KNOBS(CC_KNOB_ARG)

#define ACCESS_WORDS "local_write,remote_write,remote_read,remote_atomic"

const struct rc_cmd rc_cmds[] = {
	{ "status", "status", NULL, 0, NULL,
		"daemon version, workers, ports, QP and MR counts" },
	{ "port show", "port.show", ARGS(
		{ "port", RC_U64, RC_POS, "port index (default: every port)" }),
		0, NULL, "ports: device, addresses, link, queues" },
	{ "pd create", "pd.create", ARGS(
		{ "owned", RC_BOOL, 0, "freed, with all in it, when this connection closes (rocectl "
			"shell; default false)" }),
		0, NULL, "allocate a protection domain" },
	{ "pd destroy", "pd.destroy", ARGS(
		{ "pd", RC_U64, RC_REQ | RC_POS, "the PD" },
		{ "force", RC_BOOL, RC_OPT, "destroy its QPs and MRs too (default false)" }),
		0, NULL, "free a protection domain" },
	{ "pd show", "pd.show", ARGS(
		{ "pd", RC_U64, RC_POS, "the PD (default: every PD)" }),
		0, NULL, "list protection domains: owner, MRs, QPs" },
	{ "mr reg", "mr.reg", ARGS(
		{ "size", RC_U64, RC_REQ | RC_POS, "bytes (K, M, G, T suffixes: powers of 1024)" },
		A_ACCESS(ACCESS_WORDS ",remote_invalidate (default local_write only: no remote "
			"rights)"),
		{ "socket", RC_INT, 0, "NUMA socket of the memory, -1: any (default -1)" }, A_PD),
		0, NULL, "allocate and register a memory region" },
	{ "mr dereg", "mr.dereg", ARGS(A_RKEY), 0, NULL, "deregister and free an MR" },
	{ "mr show", "mr.show", ARGS(
		{ "rkey", RC_U64, RC_POS, "the MR's rkey (default: every MR)" }),
		0, NULL, "list MRs" },
	{ "mr fill", "mr.fill", ARGS(A_RKEY,
		{ "pattern", RC_STR, RC_POS, "inc | zero | byte:0xNN | random:SEED (default inc)" },
		A_RANGE_OFFSET, A_LENGTH("to the end of the MR")),
		0, NULL, "fill an MR range with a pattern" },
	{ "mr dump", "mr.dump", ARGS(A_RKEY, A_RANGE_OFFSET,
		{ "length", RC_U64, 0, "bytes, at most 4096 (default: to the end, at most 4096)" }),
		0, rc_print_dump, "show an MR range in hex" },
	{ "mr write", "mr.write", ARGS(A_RKEY,
		{ "hex", RC_STR, RC_REQ | RC_POS, "the bytes, two hex digits each, at most 4096" },
		A_RANGE_OFFSET),
		0, NULL, "write bytes into an MR (as the MR's owner does: its access rights are "
			"the peer's)" },
	{ "mr digest", "mr.digest", ARGS(A_RKEY, A_RANGE_OFFSET,
		A_LENGTH("to the end of the MR")),
		0, NULL, "CRC-32 of an MR range" },
	{ "qp create", "qp.create", ARGS(
		{ "type", RC_STR, 0, "rc | ud (default rc)" },
		{ "qkey", RC_U64, 0, "ud: its Q_Key, below 0x80000000 (default 0)" },
		{ "mtu", RC_U64, 0, "ud: path MTU 256-4096 (default: the most the port carries)" },
		{ "port", RC_U64, 0, "port index (default 0)" },
		{ "worker", RC_U64, 0, "owning worker (default: round robin)" },
		{ "sq_depth", RC_U64, 0, "send queue WRs (default 128)" },
		{ "rq_depth", RC_U64, 0, "receive queue WRs (default 128)" },
		{ "max_inline", RC_U64, 0, "inline bytes, at most 256 (default 64)" },
		A_ACCESS("remote_write,remote_read,remote_atomic the peer may do (default none)"),
		A_PD),
		0, NULL, "create an RC QP (in INIT) or a UD QP (in RTS: ready to send and receive)" },
	{ "qp connect", "qp.connect", ARGS(A_QPN,
		{ "remote.qpn", RC_U64, RC_REQ | RC_POS, "the peer's QP number" },
		{ "remote.psn", RC_U64, RC_REQ | RC_POS, "the peer's initial send PSN (its psn)" },
		{ "remote.ip", RC_STR, RC_REQ | RC_POS, "the peer's IPv4 address" },
		{ "remote.mac", RC_STR, 0, "MAC of the peer or the gateway (default: ARP)" },
		{ "mtu", RC_U64, 0, "path MTU: 256, 512, 1024, 2048, 4096 (default 1024)" },
		{ "timeout", RC_U64, 0, "local ACK timeout 0-31, 4.096 us * 2^n (default 14)" },
		{ "retry_cnt", RC_U64, 0, "0-7 (default 7)" },
		{ "rnr_retry", RC_U64, 0, "0-7, 7 = infinite (default 7)" },
		{ "min_rnr_timer", RC_U64, 0, "IB RNR timer code 0-31 (default 12)" },
		{ "max_rd_atomic", RC_U64, 0, "READ/atomics we may have outstanding (default 16)" },
		{ "max_dest_rd_atomic", RC_U64, 0, "READ/atomics we accept (default 16)" },
		{ "dscp", RC_U64, 0, "DSCP of the QP's packets, 0-63 (default 0)" },
		{ "sr", RC_BOOL, 0, "selective repeat: only when the peer is rocedp and sets it too "
			"(default false)" },
		{ "sr_rto_us", RC_U64, 0, "selective-repeat retransmit timeout, us (default 100)" },
		{ "max_inflight", RC_U64, 0, "packets in flight at most (default: the engine's)" },
		A_ACCESS("remote_write,remote_read,remote_atomic the peer may do from now on "
			"(default: what qp create gave)")),
		0, NULL, "connect a QP to its peer (INIT -> RTR -> RTS)" },
	{ "qp show", "qp.show", ARGS(
		{ "qpn", RC_U64, RC_POS, "QP number (default: every QP)" }),
		0, NULL, "list QPs with state and packet counts" },
	{ "qp destroy", "qp.destroy", ARGS(A_QPN), 0, NULL, "destroy a QP" },
	{ "post write", "post.write", ARGS(A_QPN, A_LKEY, A_OFFSET, A_LENGTH("64"),
		A_REMOTE_ADDR, A_REMOTE_RKEY,
		{ "imm", RC_U64, 0, "immediate data: RDMA WRITE with immediate" },
		A_COUNT, A_SIGNALED, A_WR_ID),
		0, NULL, "post RDMA WRITEs" },
	{ "post read", "post.read", ARGS(A_QPN, A_LKEY, A_OFFSET, A_LENGTH("64"),
		A_REMOTE_ADDR, A_REMOTE_RKEY, A_COUNT, A_SIGNALED, A_WR_ID),
		0, NULL, "post RDMA READs" },
	{ "post send", "post.send", ARGS(A_QPN, A_LKEY, A_OFFSET, A_LENGTH("64"),
		{ "imm", RC_U64, 0, "immediate data: SEND with immediate" },
		{ "inline", RC_BOOL, 0, "copy the data into the WR (default false)" },
		A_COUNT, A_SIGNALED, A_WR_ID,
		{ "remote.qpn", RC_U64, 0, "ud: the destination QP (required on UD)" },
		{ "remote.qkey", RC_U64, 0, "ud: its Q_Key (default 0x80000000: this QP's own)" },
		{ "ah", RC_U64, 0, "ud: the address handle (ah create), or give remote.ip" },
		{ "remote.ip", RC_STR, 0, "ud: the destination's IPv4 or IPv6 address" },
		{ "remote.mac", RC_STR, 0, "ud: MAC of the destination or the gateway (default: "
			"ARP/ND)" },
		{ "dscp", RC_U64, 0, "ud with remote.ip: DSCP 0-63 (default 0)" },
		{ "hop_limit", RC_U64, 0, "ud with remote.ip: TTL / hop limit (default 64)" }),
		0, NULL, "post SENDs (UD: to an address handle or an address)" },
	{ "post cas", "post.cas", ARGS(A_QPN, A_LKEY, A_OFFSET, A_LENGTH("8; must be 8"),
		A_REMOTE_ADDR, A_REMOTE_RKEY,
		{ "compare", RC_U64, RC_REQ, "value expected at remote_addr" },
		{ "swap", RC_U64, RC_REQ, "value written when it matches" },
		A_COUNT, A_SIGNALED, A_WR_ID),
		0, NULL, "post atomic compare-and-swaps (the old value lands at lkey+offset)" },
	{ "post faa", "post.faa", ARGS(A_QPN, A_LKEY, A_OFFSET, A_LENGTH("8; must be 8"),
		A_REMOTE_ADDR, A_REMOTE_RKEY,
		{ "add", RC_U64, RC_REQ, "value added at remote_addr" },
		A_COUNT, A_SIGNALED, A_WR_ID),
		0, NULL, "post atomic fetch-and-adds (the old value lands at lkey+offset)" },
	{ "post recv", "post.recv", ARGS(A_QPN, A_LKEY, A_OFFSET, A_LENGTH("4096"),
		A_COUNT, A_WR_ID),
		0, NULL, "post receive buffers" },
	{ "cq poll", "cq.poll", ARGS(A_QPN,
		{ "max", RC_U64, 0, "most completions returned, 1-64 (default 16)" }),
		0, NULL, "take completions of a QP (UD receives: src_qp, qkey, src_ip too)" },
	{ "ah create", "ah.create", ARGS(
		{ "ip", RC_STR, RC_REQ | RC_POS, "the destination's IPv4 or IPv6 address" },
		{ "mac", RC_STR, 0, "MAC of the destination or the gateway (default: ARP/ND)" },
		{ "port", RC_U64, 0, "port index it sends from (default 0)" },
		{ "dscp", RC_U64, 0, "DSCP 0-63 (default 0)" },
		{ "hop_limit", RC_U64, 0, "TTL / hop limit 1-255 (default 64)" }, A_PD),
		0, NULL, "make an address handle for UD sends" },
	{ "ah destroy", "ah.destroy", ARGS(
		{ "ah", RC_U64, RC_REQ | RC_POS, "the address handle" }),
		0, NULL, "destroy an address handle" },
	{ "ah show", "ah.show", ARGS(
		{ "ah", RC_U64, RC_POS, "one address handle (default: all)" }),
		0, NULL, "list address handles" },
	{ "job start", "job.start", ARGS(A_QPN,
		{ "op", RC_STR, 0, "write | write_imm | send | send_imm | read | cas | faa | recv | "
			"mixed | mixed_recv | pingpong (recv: keep receives posted; mixed: verified "
			"mixed traffic to a peer running mixed_recv; pingpong: ibv_rc_pingpong's and "
			"ibv_ud_pingpong's exchange, the passive side sending back what it got (ud: "
			"the GRH area in the 40 bytes before offset); default write)" },
		A_LKEY, A_OFFSET, A_LENGTH("65536"),
		{ "remote_addr", RC_U64, 0, "remote address (not for send)" },
		{ "rkey", RC_U64, 0, "the peer MR's rkey (not for send)" },
		{ "count", RC_U64, 0, "operations, 0: no limit (default 0)" },
		{ "duration_ms", RC_U64, 0, "stop after this long, 0: no limit (default 0)" },
		{ "depth", RC_U64, 0, "operations in flight (default: the send queue depth)" },
		{ "mode", RC_STR, 0, "bw | lat | bidi (lat: perftest's ping-pong, one message in "
			"flight; bidi: send only, sends and the peer's SENDs on the QP, as send_bw -b; "
			"default bw)" },
		{ "rate_mbps", RC_U64, 0, "bw: pace the job to this many Mbit/s (default 0: no limit)" },
		{ "post_list", RC_U64, 0, "bw: post this many work requests at once, when that many "
			"fit in depth (perftest's -l; default 1)" },
		{ "cq_mod", RC_U64, 0, "bw, not recv: ask for the completion of every Nth work "
			"request, and of the one filling depth (perftest's -Q; default 1: every one)" },
		{ "initiator", RC_BOOL, 0, "lat, pingpong: this side sends first (default false)" },
		{ "recv_offset", RC_U64, 0, "lat write/send, bidi: where the peer's message lands "
			"(default: right after ours)" },
		{ "seed", RC_U64, 0, "mixed, mixed_recv: key of the messages; both sides alike "
			"(default 0)" },
		{ "ah", RC_U64, 0, "ud, op send or pingpong: the address handle the SENDs go to (ah "
			"create)" },
		{ "remote.qpn", RC_U64, 0, "ud, op send or pingpong: the destination QP" },
		{ "remote.qkey", RC_U64, 0, "ud, op send: its Q_Key (default 0x80000000: this "
			"QP's own)" }),
		0, NULL, "keep a connected QP (or a UD QP) busy with one operation, or play a "
			"latency ping-pong; a UD receive takes 40 bytes more than length (the GRH "
			"area)" },
	{ "job stop", "job.stop", ARGS(A_QPN), 0, NULL, "stop a QP's job" },
	{ "job show", "job.show", ARGS(A_QPN,
		{ "hist", RC_BOOL, RC_OPT, "with the round-trip histogram's buckets ([ns, count]; "
			"for scripts/plot.py)" }), RC_WATCH, NULL,
		"a job's progress: operations, bytes, Gbit/s, message rate, round-trip times" },
	{ "job total", "job.total", ARGS(
		{ "owned", RC_BOOL, 0, "only the QPs in this connection's PDs (rocectl shell; "
			"default false)" }), RC_WATCH, NULL,
		"every job's progress added up (owned=true: this connection's QPs)" },
	{ "stats stages", "stats.stages", ARGS(
		{ "worker", RC_U64, RC_POS, "one worker's stamps (default: every worker's merged)" },
		{ "clear", RC_BOOL, RC_OPT, "start from zero after this reading" }),
		RC_WATCH, rc_print_stages, "where the workers' time goes: cycles and ns per stage "
		"(rx, classify, transport, build, tx; latency jobs' post; the loop), from a "
		"-Dstage_stamps=true build" },
	{ "stats", "stats", ARGS(
		{ "xstats", RC_BOOL, RC_OPT, "with each port's non-zero extended statistics" }),
		RC_WATCH, rc_print_stats, "ports' ethdev statistics and throughput since the last "
		"sample (testpmd's show port stats), workers' busy time, RoCE totals" },
	{ "top", "qp.show", ARGS(
		{ "qpn", RC_U64, RC_POS, "only this QP (default: every QP)" }),
		RC_WATCH | RC_LIVE, rc_print_top,
		"live view of the QPs, busiest first: payload rates, messages/s, retransmits, "
		"timeouts, CNPs, congestion-control rate (every second; --count N, --watch SECS)" },
	{ "counters clear", "counters.clear", NULL, 0, NULL,
		"count from zero again: counters, stats, port show (testpmd's clear port stats)" },
	{ "counters", "counters", ARGS(
		{ "qpn", RC_U64, 0, "one QP's counters" },
		{ "worker", RC_U64, 0, "one worker's counters" },
		{ "port", RC_U64, 0, "one port's counters" },
		{ "nonzero", RC_BOOL, RC_OPT, "only the counters that are not zero" },
		{ "describe", RC_BOOL, RC_OPT, "what each counter counts, next to its value" },
		{ "match", RC_STR, RC_POS, "only the names matching this glob, any case (*CNP*)" }),
		RC_WATCH, rc_print_counters,
		"every counter, summed over workers (or of one QP, worker, port)" },
	{ "impair set", "impair.set", ARGS(
		{ "spec", RC_STR, RC_REQ | RC_REST, "loss=P,ge=p:r:h:k,reorder=P:N,dup=P,delay=T:J,"
			"ecn=P,rate=R:B,bneck=R:B,red=KMIN:KMAX:PMAX[:deq],lossless=XOFF:XON,"
			"bneck_to=ADDR[/LEN],seed=S "
			"(roced(8)); its keys may also be given as arguments "
			"of their own: impair set loss=1% dup=0.1%" },
		{ "port", RC_U64, 0, "port index (default: port= in the spec, else 0)" },
		{ "dir", RC_STR, 0, "rx | tx | both (default: dir= in the spec, else rx)" }),
		0, rc_print_impair, "impair a port's traffic (replaces what the direction had)" },
	{ "impair show", "impair.show", ARGS(
		{ "port", RC_U64, RC_POS, "port index (default: every port)" },
		{ "dir", RC_STR, 0, "rx | tx | both (default both)" }),
		RC_WATCH, rc_print_impair, "impairments and what they did" },
	{ "impair clear", "impair.clear", ARGS(
		{ "port", RC_U64, RC_POS, "port index (default: every port)" },
		{ "dir", RC_STR, 0, "rx | tx | both (default both)" }),
		0, NULL, "stop impairing (held packets are released)" },
	{ "pfc show", "pfc.show", ARGS(
		{ "port", RC_U64, RC_POS, "port index (default: every port)" }),
		RC_WATCH, NULL, "priority flow control: mode, pauses received, time paused per "
		"priority" },
	{ "pfc set", "pfc.set", ARGS(
		{ "port", RC_U64, RC_POS, "port index (default: every port)" },
		{ "mode", RC_STR, 0, "sw | off: honour the pauses received, or count them only" },
		{ "prios", RC_STR, 0, "priorities with PFC: 3, 3,4, 0-7" },
		{ "watchdog_ms", RC_U64, 0, "PFC storm watchdog, 0 (none) to 8000 ms" },
		{ "dscp2prio", RC_STR, 0, "DSCP:PRIO pairs, e.g. 26:3,48:6 (the rest as it is)" },
		{ "link_mbps", RC_U64, 0, "reckon pause quanta at this speed, Mb/s (0: the port's)" }),
		0, NULL, "change a port's software PFC" },
	{ "cc show", "cc.show", ARGS(
		{ "qpn", RC_U64, RC_POS, "one QP: its rate, target rate, alpha, CNPs and knobs "
			"(default: the daemon-wide settings)" },
		{ "describe", RC_BOOL, RC_OPT, "with the knob table: unit, range, meaning" }),
		RC_WATCH, NULL, "congestion control: profile, ECN codepoint, knobs; or one QP's state" },
	{ "cc set", "cc.set", ARGS(
		{ "qpn", RC_U64, RC_POS, "give this QP knobs of its own; a QP connected with "
			"congestion control off gets it from now on (default: daemon-wide)" },
		{ "profile", RC_STR, 0, "mlx5 | paper | off: load a profile's knobs first" },
		{ "ecn", RC_STR, 0, "ect0 | ect1 | not_ect: ECN of the packets of QPs connected with "
			"congestion control (daemon-wide, default ect0); with qpn: that QP's, at once" },
		{ "trace_len", RC_U64, 0, "trace entries each QP keeps: 0 or a power of 2 up to 65536 "
			"(daemon-wide, default 256; 40 bytes each)" },
		{ "pace_burst", RC_U64, 0, "a paced QP's burst in packets, 1 to 4096: over any T it "
			"sends at most rate * T plus this many (daemon-wide, default 32)" },
		{ "reset", RC_BOOL, RC_OPT, "with qpn: the QP takes the daemon-wide knobs and ECN "
			"again (none, with congestion control off)" }
		CC_KNOB_ARGS),
		0, NULL, "set congestion control knobs (mlx5 names); applies to QPs connected after "
		"it is turned on" },
	{ "cc trace", "cc.trace", ARGS(A_QPN,
		{ "cursor", RC_U64, 0, "first entry wanted, by its seq (default 0: all the ring "
			"holds)" },
		{ "limit", RC_U64, 0, "entries a request, 1 to 4096 (default 1024)" },
		{ "csv", RC_BOOL, RC_OPT | RC_LOCAL, "print CSV: a header, then one row an entry" },
		{ "follow", RC_BOOL, RC_OPT | RC_LOCAL, "keep reading new entries (every 0.2 s, or "
			"--watch SECS) until ^C, --count N reads or the QP goes" }),
		RC_WATCH, NULL, "a QP's congestion control trace: time, rate, target rate, alpha, "
		"CNPs, event" },
	{ "neigh show", "neigh.show", ARGS(
		{ "ip", RC_STR, RC_POS, "only this neighbour (default: every entry)" },
		{ "port", RC_U64, 0, "port index (default: every port)" }),
		RC_WATCH, NULL, "neighbour tables (ARP, ND): IP, MAC, state, age, port, worker" },
	{ "neigh flush", "neigh.flush", ARGS(
		{ "ip", RC_STR, RC_POS, "only this neighbour (default: all but static entries)" },
		{ "port", RC_U64, 0, "port index (default: every port)" }),
		0, NULL, "forget neighbours; the next use resolves them again" },
	{ "gsi show", "gsi.show", ARGS(
		{ "port", RC_U64, RC_POS, "port index (default: every port)" }),
		RC_WATCH, NULL, "each port's QP1 (state, receives posted, its drops) and the GSI "
		"agent's counters since the daemon started" },
	{ "gsi sidr", "gsi.sidr", ARGS(
		{ "ip", RC_STR, RC_REQ | RC_POS, "the peer (IPv4 or IPv6)" },
		{ "port", RC_U64, 0, "port index to send from (default 0)" },
		{ "service_id", RC_U64, 0, "service ID to resolve (default 0; RDMA_PS_UDP port P: "
			"0x01110000 + P)" },
		{ "timeout_ms", RC_U64, 0, "wait this long for the SIDR_REP, 1 to 10000 (default "
			"1000)" }),
		0, NULL, "service ID resolution at a peer's CM, from QP1 to its QP1: whether it "
		"answers, its status (Linux without a UD listener: unsupported), the round trip" },
	{ "cm listen", "cm.listen", ARGS(
		{ "port", RC_U64, RC_REQ | RC_POS, "TCP port of the RDMA_PS_TCP service ID (rping: "
			"7174, perftest -R: 18515)" },
		{ "ip", RC_STR, 0, "only REQs to this address of roced's (default: any), as "
			"rdma_bind_addr" },
		{ "backlog", RC_U64, 0, "connections not yet established at once (default 16)" },
		{ "accept", RC_STR, 0, "auto (default: a QP is made and the REP sent at once) | "
			"manual (each connect_request waits for cm accept)" },
		{ "pd", RC_U64, 0, "auto: the PD of the QPs (default 0)" },
		{ "sq_depth", RC_U64, 0, "auto: send queue depth (default 128)" },
		{ "rq_depth", RC_U64, 0, "auto: receive queue depth (default 128)" },
		{ "owned", RC_BOOL, 0, "stop listening when this connection closes, as a process's "
			"rdma_cm IDs go with it (default false: the listener outlives rocectl)" }),
		0, NULL, "listen for rdma_cm connections (rping -c, ib_write_bw -R ...)" },
	{ "cm unlisten", "cm.unlisten", ARGS(
		{ "port", RC_U64, RC_REQ | RC_POS, "the TCP port" }),
		0, NULL, "stop listening (connections stay)" },
	{ "cm connect", "cm.connect", ARGS(A_QPN,
		{ "ip", RC_STR, RC_REQ | RC_POS, "the peer's IP address" },
		{ "port", RC_U64, RC_REQ | RC_POS, "its TCP port" },
		{ "mtu", RC_U64, 0, "path MTU (default: the most the port carries)" },
		{ "retry_count", RC_U64, 0, "transport retries, 0-7 (default 7)" },
		{ "rnr_retry_count", RC_U64, 0, "RNR retries, 0-7 (default 7: for ever)" },
		{ "responder_resources", RC_U64, 0, "READs/atomics we take in flight (default 16)" },
		{ "initiator_depth", RC_U64, 0, "READs/atomics we issue in flight (default 16)" },
		{ "private_data", RC_STR, 0, "hex, up to 56 bytes after the RDMA CM header" }),
		0, NULL, "connect an RC QP in INIT through the CM (REQ, REP, RTU)" },
	{ "cm accept", "cm.accept", ARGS(
		{ "conn", RC_U64, RC_REQ | RC_POS, "the connection (its connect_request event)" },
		A_QPN,
		{ "responder_resources", RC_U64, 0, "default: the REQ's initiator depth" },
		{ "initiator_depth", RC_U64, 0, "default: the REQ's responder resources" },
		{ "private_data", RC_STR, 0, "hex, up to 196 bytes" }),
		0, NULL, "answer a connect_request with an RC QP in INIT (REP)" },
	{ "cm reject", "cm.reject", ARGS(
		{ "conn", RC_U64, RC_REQ | RC_POS, "the connection" },
		{ "reason", RC_U64, 0, "REJ reason, 1-33 (default 28: consumer defined)" },
		{ "private_data", RC_STR, 0, "hex, up to 148 bytes" }),
		0, NULL, "refuse a connect_request (REJ)" },
	{ "cm disconnect", "cm.disconnect", ARGS(
		{ "conn", RC_U64, RC_REQ | RC_POS, "the connection" }),
		0, NULL, "disconnect (DREQ; before established: REJ)" },
	{ "cm show", "cm.show", NULL, RC_WATCH, NULL,
		"listeners, connections (state, QPs, peer) and the CM's counters" },
	{ "cm events", "cm.events", ARGS(
		{ "since", RC_U64, RC_POS, "events after this sequence number (default 0: all kept)" },
		{ "max", RC_U64, 0, "at most this many (default 64)" },
		{ "conn", RC_U64, 0, "one connection's only" }),
		RC_WATCH, NULL, "connection events: connect_request, established, rejected, "
		"unreachable, disconnected, timewait_exit" },
	{ "capture start", "capture.start", ARGS(
		{ "file", RC_STR, RC_REQ | RC_POS | RC_PATH, "pcapng file the daemon writes (a "
			"relative name is taken from here; created, or truncated)" },
		{ "port", RC_U64, 0, "port index (default: every port)" },
		{ "dir", RC_STR, 0, "rx | tx | both (default both)" },
		{ "snaplen", RC_U64, 0, "bytes kept of each frame, 1-65535 (default: all of it)" },
		{ "count", RC_U64, 0, "end after writing this many frames (default 0: no limit)" }),
		0, NULL, "capture the ports' rx and tx to a pcapng file (one capture at a time)" },
	{ "capture stop", "capture.stop", NULL, 0, NULL,
		"stop capturing: what is queued is written, the file finished" },
	{ "capture show", "capture.show", NULL, RC_WATCH, NULL,
		"the running or last capture: frames seen, written, dropped" },
	{ "shutdown", "shutdown", NULL, 0, NULL, "stop the daemon" },
	{ "call", NULL, ARGS(
		{ "cmd", RC_STR, RC_REQ | RC_POS, "protocol command name (mr.reg)" },
		{ "args", RC_STR, RC_POS, "arguments as one JSON object" }),
		RC_RAW, NULL, "send any request; print the reply" },
};

const unsigned int rc_nb_cmds = sizeof(rc_cmds) / sizeof(rc_cmds[0]);

/* Commands that are more than one request and its printed reply. */
static const struct {
	const char *words;
	rc_run_fn run;
} runners[] = {
	{ "cc trace", rc_cc_trace },
};

rc_run_fn
rc_cmd_run(const struct rc_cmd *cmd)
{
	unsigned int i;

	for (i = 0; i < sizeof(runners) / sizeof(runners[0]); i++)
		if (strcmp(cmd->words, runners[i].words) == 0)
			return runners[i].run;
	return NULL;
}

int
rc_match(const struct rc_cmd *cmd, int argc, char **argv)
{
	const char *w = cmd->words;
	int i;

	if (argc > 0 && cmd->cmd != NULL && strcmp(argv[0], cmd->cmd) == 0)
		return 1;
	for (i = 0; *w != '\0'; i++) {
		size_t n = strcspn(w, " ");

		if (i >= argc || strlen(argv[i]) != n || strncmp(argv[i], w, n) != 0)
			return 0;
		w += n + (w[n] == ' ');
	}
	return i;
}

const struct rc_cmd *
rc_find(int argc, char **argv, int *used)
{
	unsigned int i;
	bool group = false;

	for (i = 0; i < rc_nb_cmds; i++) {
		int n = rc_match(&rc_cmds[i], argc, argv);

		if (n > 0) {
			*used = n;
			return &rc_cmds[i];
		}
		group |= argc > 0 && strncmp(rc_cmds[i].words, argv[0], strlen(argv[0])) == 0 &&
			rc_cmds[i].words[strlen(argv[0])] == ' ';
	}
	if (group) {
		fprintf(stderr, "rocectl: %s: missing or unknown subcommand; one of:\n", argv[0]);
		for (i = 0; i < rc_nb_cmds; i++)
			if (strncmp(rc_cmds[i].words, argv[0], strlen(argv[0])) == 0 &&
					rc_cmds[i].words[strlen(argv[0])] == ' ')
				rc_usage_line(&rc_cmds[i], stderr, "  ");
	} else {
		fprintf(stderr, "rocectl: unknown command \"%s\" (try: rocectl help)\n",
				argc > 0 ? argv[0] : "");
	}
	return NULL;
}

/* Decimal or 0x hex with an optional K/M/G/T suffix. */
static int
parse_u64(const char *s, uint64_t *v)
{
	static const char suffixes[] = "KMGT";
	const char *p;
	unsigned int shift = 0;
	char *end;
	uint64_t u;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	u = strtoull(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
	if (errno != 0 || end == s)
		return -EINVAL;
	if (*end != '\0') {
		p = strchr(suffixes, toupper((unsigned char)*end));
		if (p == NULL || end[1] != '\0')
			return -EINVAL;
		shift = 10 * (unsigned int)(p - suffixes + 1);
		if (u > UINT64_MAX >> shift)
			return -EINVAL;
	}
	*v = u << shift;
	return 0;
}

static int
parse_bool(const char *s, bool *v)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	unsigned int i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*v = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*v = false;
			return 0;
		}
	}
	return -EINVAL;
}

static json_t *
list_value(const char *s)
{
	json_t *a = json_array();

	while (*s != '\0') {
		size_t n = strcspn(s, ",");

		if (n > 0)
			json_array_append_new(a, json_stringn(s, n));
		s += n + (s[n] == ',');
	}
	return a;
}

/* The JSON value of @s as an argument of type @t, or NULL when it is not one. */
static json_t *
arg_value(enum rc_type t, const char *s)
{
	uint64_t u;
	long l;
	char *end;
	bool b;

	switch (t) {
	case RC_U64:
		return parse_u64(s, &u) == 0 ? roce_ctl_u64(u) : NULL;
	case RC_INT:
		errno = 0;
		l = strtol(s, &end, 10);
		return errno == 0 && end != s && *end == '\0' && l >= INT32_MIN && l <= INT32_MAX ?
			json_integer(l) : NULL;
	case RC_BOOL:
		return parse_bool(s, &b) == 0 ? json_boolean(b) : NULL;
	case RC_STR:
		return json_string(s);
	case RC_LIST:
		return list_value(s);
	}
	return NULL;
}

static const char *const type_words[] = {
	[RC_U64] = "an unsigned integer (decimal or 0x hex, K/M/G/T suffix)",
	[RC_INT] = "an integer",
	[RC_BOOL] = "true or false",
	[RC_STR] = "a string (valid UTF-8)",
	[RC_LIST] = "a comma-separated list",
};

/* Store @val at dotted @name in @args, making the nested objects. */
static void
set_path(json_t *args, const char *name, json_t *val)
{
	const char *dot = strchr(name, '.');
	json_t *sub;

	if (dot == NULL) {
		json_object_set_new(args, name, val);
		return;
	}
	sub = json_object_getn(args, name, (size_t)(dot - name));
	if (!json_is_object(sub)) {
		sub = json_object();
		json_object_setn_new(args, name, (size_t)(dot - name), sub);
	}
	set_path(sub, dot + 1, val);
}

/* --json, --watch SECS, --count N. @return argv entries used, or -EINVAL. */
static int
parse_option(const struct rc_cmd *cmd, int argc, char **argv, struct rc_opts *opts)
{
	const char *o = argv[0], *val;
	char *end;
	int used = 1;

	if (strcmp(o, "--json") == 0) {
		opts->json = true;
		return 1;
	}
	if (!(cmd->flags & RC_WATCH) || (strncmp(o, "--watch", 7) != 0 &&
			strncmp(o, "--count", 7) != 0) || (o[7] != '\0' && o[7] != '=')) {
		fprintf(stderr, "rocectl: %s: unknown option %s\n", cmd->words, o);
		return -EINVAL;
	}
	val = o[7] == '=' ? o + 8 : (argc > 1 ? argv[1] : NULL);
	used += o[7] != '=';
	if (val == NULL) {
		fprintf(stderr, "rocectl: %s: %.7s needs a value\n", cmd->words, o);
		return -EINVAL;
	}
	errno = 0;
	if (o[2] == 'w') {
		opts->watch = strtod(val, &end);
		if (errno == 0 && *end == '\0' && opts->watch >= 0.1 && opts->watch <= 86400)
			return used;
		fprintf(stderr, "rocectl: --watch: \"%s\" is not a number of seconds "
				"from 0.1 to 86400\n", val);
	} else {
		opts->count = strtoul(val, &end, 10);
		if (errno == 0 && *end == '\0' && isdigit((unsigned char)val[0]))
			return used;
		fprintf(stderr, "rocectl: --count: \"%s\" is not a count\n", val);
	}
	return -EINVAL;
}

static int
find_arg(const struct rc_arg *args, const char *name, size_t n)
{
	int i;

	for (i = 0; args != NULL && args[i].name != NULL; i++)
		if (strlen(args[i].name) == n && strncmp(args[i].name, name, n) == 0)
			return i;
	return -1;
}

static int
next_positional(const struct rc_arg *args, uint64_t seen)
{
	int i;

	for (i = 0; args != NULL && args[i].name != NULL; i++)
		if ((args[i].flags & RC_POS) && !(seen >> i & 1))
			return i;
	return -1;
}

/* The argument that takes the NAME=VALUE words no other one does (RC_REST), or -1. */
static int
rest_arg(const struct rc_arg *args)
{
	int i;

	for (i = 0; args != NULL && args[i].name != NULL; i++)
		if (args[i].flags & RC_REST)
			return i;
	return -1;
}

static void
append_rest(json_t *args, const char *name, const char *word)
{
	const char *had = json_string_value(json_object_get(args, name));
	char *s;

	if (had == NULL) {
		set_path(args, name, json_string(word));
		return;
	}
	if (asprintf(&s, "%s,%s", had, word) < 0)
		return;
	set_path(args, name, json_string(s));
	free(s);
}

/* "call CMD [JSON]": the arguments are given as one JSON object. */
static int
build_raw(json_t *args)
{
	const char *text = json_string_value(json_object_get(args, "args"));
	json_t *obj;

	if (text == NULL)
		return 0;
	obj = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(obj)) {
		fprintf(stderr, "rocectl: call: the arguments must be one JSON object\n");
		json_decref(obj);
		return -EINVAL;
	}
	json_object_del(args, "args");
	json_object_update_missing(args, obj);
	json_decref(obj);
	return 0;
}

static int
usage_error(const struct rc_cmd *cmd)
{
	rc_usage_line(cmd, stderr, "usage: rocectl ");
	return -EINVAL;
}

/* A file name is the daemon's to open: relative to where rocectl runs, not to the daemon. */
static json_t *
path_value(const char *s)
{
	char cwd[4096];
	json_t *v;
	char *abs;

	if (s[0] == '/' || s[0] == '\0' || getcwd(cwd, sizeof(cwd)) == NULL)
		return json_string(s);
	if (asprintf(&abs, "%s/%s", cwd, s) < 0)
		return NULL;
	v = json_string(abs);
	free(abs);
	return v;
}

/* Argument @k given the text @text: once only, of its type. @return 0 or -EINVAL. */
static int
set_arg(const struct rc_cmd *cmd, int k, const char *text, json_t *args, uint64_t *seen)
{
	const struct rc_arg *a = &cmd->args[k];
	json_t *val;

	if (*seen >> k & 1) {
		if (a->flags & RC_REST) {
			append_rest(args, a->name, text);
			return 0;
		}
		fprintf(stderr, "rocectl: %s: %s given twice\n", cmd->words, a->name);
		return usage_error(cmd);
	}
	*seen |= UINT64_C(1) << k;
	val = a->flags & RC_PATH ? path_value(text) : arg_value(a->type, text);
	if (val == NULL) {
		fprintf(stderr, "rocectl: %s: %s must be %s\n", cmd->words, a->name,
				type_words[a->type]);
		return usage_error(cmd);
	}
	set_path(args, a->name, val);
	return 0;
}

int
rc_build(const struct rc_cmd *cmd, int argc, char **argv, json_t *args, struct rc_opts *opts)
{
	const struct rc_arg *a = cmd->args;
	uint64_t seen = 0;
	int i, k;

	for (i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t n = 0;

		k = -1;
		if (strncmp(argv[i], "--", 2) == 0) {
			n = strcspn(argv[i] + 2, "=");
			k = find_arg(a, argv[i] + 2, n);
		}
		if (k >= 0 && (a[k].flags & RC_OPT) && argv[i][2 + n] == '\0') {
			if (seen >> k & 1) {
				fprintf(stderr, "rocectl: %s: %s given twice\n", cmd->words,
						a[k].name);
				return usage_error(cmd);
			}
			seen |= UINT64_C(1) << k;
			set_path(args, a[k].name, json_true());
			continue;
		}
		if (k >= 0) {
			/* --NAME VALUE or --NAME=VALUE: a table argument wins over --count. */
			const char *val = argv[i][2 + n] == '=' ? argv[i] + 3 + n :
				i + 1 < argc ? argv[++i] : NULL;

			if (val == NULL) {
				fprintf(stderr, "rocectl: %s: --%s needs a value\n", cmd->words,
						a[k].name);
				return usage_error(cmd);
			}
			if (set_arg(cmd, k, val, args, &seen) != 0)
				return -EINVAL;
			continue;
		}
		if (strncmp(argv[i], "--", 2) == 0) {
			k = parse_option(cmd, argc - i, argv + i, opts);
			if (k < 0)
				return usage_error(cmd);
			i += k - 1;
			continue;
		}
		k = eq != NULL ? find_arg(a, argv[i], (size_t)(eq - argv[i])) :
			next_positional(a, seen);
		if (k < 0 && eq != NULL && (k = rest_arg(a)) >= 0) {
			append_rest(args, a[k].name, argv[i]);
			seen |= UINT64_C(1) << k;
			continue;
		}
		if (k < 0) {
			fprintf(stderr, eq != NULL ? "rocectl: %s: unknown argument \"%.*s\"\n" :
					"rocectl: %s: unexpected argument \"%.*s\"\n", cmd->words,
					(int)(eq != NULL ? eq - argv[i] : (long)strlen(argv[i])),
					argv[i]);
			return usage_error(cmd);
		}
		if (set_arg(cmd, k, eq != NULL ? eq + 1 : argv[i], args, &seen) != 0)
			return -EINVAL;
	}
	for (k = 0; a != NULL && a[k].name != NULL; k++) {
		if ((a[k].flags & RC_ZERO) && !(seen >> k & 1))
			set_path(args, a[k].name, json_integer(0));
		if ((a[k].flags & RC_REQ) && !(seen >> k & 1)) {
			fprintf(stderr, "rocectl: %s: missing %s\n", cmd->words, a[k].name);
			return usage_error(cmd);
		}
	}
	return cmd->flags & RC_RAW ? build_raw(args) : 0;
}

static const char *const placeholders[] = {
	[RC_U64] = "N", [RC_INT] = "N", [RC_BOOL] = "BOOL", [RC_STR] = "STR", [RC_LIST] = "LIST",
};

void
rc_usage_line(const struct rc_cmd *cmd, FILE *f, const char *prefix)
{
	const struct rc_arg *a;

	fprintf(f, "%s%s", prefix, cmd->words);
	for (a = cmd->args; a != NULL && a->name != NULL; a++) {
		bool req = a->flags & RC_REQ;

		if (a->flags & RC_REST)
			fprintf(f, req ? " %s=%s|KEY=VALUE..." : " [%s=%s|KEY=VALUE...]", a->name,
					placeholders[a->type]);
		else if (a->flags & RC_POS)
			fprintf(f, req ? " <%s>" : " [<%s>]", a->name);
		else if (a->flags & RC_OPT)
			fprintf(f, " [--%s]", a->name);
		else
			fprintf(f, req ? " %s=%s" : " [%s=%s]", a->name, placeholders[a->type]);
	}
	if (cmd->flags & RC_WATCH)
		fprintf(f, " [--watch SECS [--count N]]");
	fputc('\n', f);
}

static void
help_detail(const struct rc_cmd *cmd)
{
	const struct rc_arg *a;

	printf("%s: %s\n", cmd->words, cmd->help);
	rc_usage_line(cmd, stdout, "usage: rocectl ");
	if (cmd->cmd != NULL)
		printf("request: %s\n", cmd->cmd);
	for (a = cmd->args; a != NULL && a->name != NULL; a++) {
		char name[64];

		snprintf(name, sizeof(name), "%s%s", a->flags & RC_OPT ? "--" : "", a->name);
		printf("  %-20s %s%s%s\n", name, a->flags & RC_LOCAL ? "rocectl: " : "", a->help,
				a->flags & RC_REQ ? " (required)" : "");
	}
	if (cmd->flags & RC_WATCH)
		printf("  %-20s %s\n  %-20s %s\n", "--watch SECS", "repeat every SECS seconds",
				"--count N", "stop after N samples (default: on ^C)");
}

/* Whether @cmd is selected by "help WORDS": its words start with them, or it is their group. */
static bool
selected(const struct rc_cmd *cmd, int argc, char **argv)
{
	size_t n;

	if (argc == 0 || rc_match(cmd, argc, argv) > 0)
		return true;
	n = strlen(argv[0]);
	return argc == 1 && strncmp(cmd->words, argv[0], n) == 0 && cmd->words[n] == ' ';
}

static unsigned int
words_of(const char *w)
{
	unsigned int n = *w != '\0';

	for (; *w != '\0'; w++)
		n += *w == ' ';
	return n;
}

int
rc_help(int argc, char **argv)
{
	unsigned int i, hits = 0, last = 0;

	/* perf is a client of its own (the perftest side channel), not a table command. */
	if (argc > 0 && strcmp(argv[0], "perf") == 0) {
		rc_perf_usage(stdout);
		return RC_EXIT_OK;
	}
	if (argc > 0 && strcmp(argv[0], "pingpong") == 0) {
		rc_pingpong_usage(stdout);
		return RC_EXIT_OK;
	}
	if (argc > 0 && strcmp(argv[0], "rping") == 0) {
		rc_rping_usage(stdout);
		return RC_EXIT_OK;
	}
	if (argc > 0 && strcmp(argv[0], "help") == 0) {
		printf("help: this list; help COMMAND: its arguments\n"
				"usage: rocectl help [COMMAND [SUBCOMMAND]]\n"
				"  (rocectl COMMAND --help says the same)\n");
		return RC_EXIT_OK;
	}
	/* "help counters": the command whose words are exactly these, not its group. */
	for (i = 0; argc > 0 && i < rc_nb_cmds; i++)
		if (rc_match(&rc_cmds[i], argc, argv) == argc &&
				(int)words_of(rc_cmds[i].words) == argc) {
			help_detail(&rc_cmds[i]);
			return RC_EXIT_OK;
		}
	for (i = 0; i < rc_nb_cmds; i++)
		if (selected(&rc_cmds[i], argc, argv)) {
			hits++;
			last = i;
		}
	if (hits == 0) {
		fprintf(stderr, "rocectl: help: no command \"%s\"\n", argv[0]);
		return RC_EXIT_USAGE;
	}
	if (hits == 1 && argc > 0) {
		help_detail(&rc_cmds[last]);
		return RC_EXIT_OK;
	}
	if (argc == 0)
		printf("commands (rocectl help COMMAND for its arguments):\n");
	for (i = 0; i < rc_nb_cmds; i++)
		if (selected(&rc_cmds[i], argc, argv))
			printf("  %-12s %s\n", rc_cmds[i].words, rc_cmds[i].help);
	if (argc == 0) {
		printf("  %-12s %s\n", "perf", "perftest's tests (ib_*_bw, ib_*_lat) against "
				"perftest or another roced");
		printf("  %-12s %s\n", "pingpong", "ibv_rc_pingpong and ibv_ud_pingpong, against "
				"them or another roced");
		printf("  %-12s %s\n", "rping", "rdma-core's rping (-s, -c) through the connection "
				"manager");
		printf("  %-12s %s\n", "help", "this list; help COMMAND: its arguments");
	}
	return RC_EXIT_OK;
}
