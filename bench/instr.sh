#!/usr/bin/env bash
# bench/instr.sh: instructions per packet, the figure that does not move with the machine's
# load. callgrind counts the in-process transport (bench_transport's fixed run: two engines on
# one core joined back to back, classifier with ICRC, MTU 4096, no loss) per op and message
# size, and the baseline of the same run: building and classifying the same size of packets
# with no transport (bench_transport baseline). Prints per point the instructions per packet
# moved (requests, responses and ACKs), per data packet, the baseline's, and the ratio
# ours / baseline per data packet (issue 15's in-process target: 4 KiB within 1.2, 64 B 1.3).
#
# usage: bench/instr.sh [PACKETS]            (default 20000 per point)
# Environment: ROCE_BUILD_DIR (default build), ROCE_BENCH_OPS (default "write read send"),
#              ROCE_BENCH_SIZES (default "64 4096 65536"), ROCE_BENCH_QPS (default 1),
#              ROCE_BENCH_TX (copy or zc, default copy).
set -euo pipefail

pkts=${1:-20000}
case $pkts in ''|*[!0-9]*) echo "usage: bench/instr.sh [PACKETS]" >&2; exit 64;; esac
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
build=${ROCE_BUILD_DIR:-build}
ops=${ROCE_BENCH_OPS:-write read send}
sizes=${ROCE_BENCH_SIZES:-64 4096 65536}
qps=${ROCE_BENCH_QPS:-1}
tx=${ROCE_BENCH_TX:-copy}

scripts/install-deps.sh
[ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null
ninja -C "$build" bench/transport/bench_transport >/dev/null
bin=$build/bench/transport/bench_transport
tmp=$(mktemp -d /tmp/rocedp-instr.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# callgrind FUNCTION ARGS...: the instructions collected inside FUNCTION; its stdout in
# $tmp/out.
callgrind() {
	local fn=$1; shift
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" --toggle-collect="$fn" \
		"$bin" "$@" > "$tmp/out" 2> "$tmp/err" || { tail -n 20 "$tmp/err" >&2; exit 1; }
	sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$tmp/err" | tail -n 1
}

echo "instr: $pkts packets per point, $qps QP(s), $tx transmit, $(git rev-parse --short HEAD)," \
	"$(date -u +%FT%TZ)"
printf '%-6s %8s %12s %12s %12s %8s\n' op size 'Ir/packet' 'Ir/data pkt' 'baseline' ratio
for size in $sizes; do
	base_ir=$(callgrind 'run_baseline_fixed*' baseline "$size" "$pkts")
	base_n=$(sed -n 's/.*baseline [0-9]* B: \([0-9]*\) packets.*/\1/p' "$tmp/out")
	base=$(awk -v i="$base_ir" -v n="$base_n" 'BEGIN { printf "%.0f", i / n }')
	for op in $ops; do
		ir=$(callgrind run_fixed "$op" "$size" "$pkts" defer "$qps" "$tx")
		# "... N packets (D data, ..."
		read -r n d < <(sed -n 's/.*: \([0-9]*\) packets (\([0-9]*\) data.*/\1 \2/p' "$tmp/out")
		awk -v op="$op" -v sz="$size" -v i="$ir" -v n="$n" -v d="$d" -v b="$base" 'BEGIN {
			printf "%-6s %8s %12.0f %12.0f %12.0f %8.2f\n", op, sz, i / n, i / d, b,
				i / d / b }'
	done
done
