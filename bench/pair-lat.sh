#!/usr/bin/env bash
# bench/pair-lat.sh: WRITE and SEND ping-pong latency (perftest's ib_write_lat/ib_send_lat:
# one-way = round trip / 2) between two roced over memif, one busy-polling worker core each,
# against the latency floor of the same memif measured in the same run: bench/rtt/memif_rtt
# bouncing frames of the same size off dpdk-testpmd --forward-mode=macswap. Prints p50
# (perftest's t_typical), p99, p99.9 and the maximum in microseconds (the floor's too: whether
# a maximum is the machine's shows there), and the ratios roced / floor.
#
# With daemons built with the stage stamps (ROCE_ROCED=test/integration/roced-stages), each
# point is followed by where the time went: every stage's median and p99 in ns on both daemons
# (rocectl stats stages, cleared before the point).
#
# usage: bench/pair-lat.sh [ITERATIONS]     (default 20000)
# Environment: ROCE_BUILD_DIR (default build), ROCE_BENCH_SIZES (default "2 64 1024 4096"),
#              ROCE_ROCED (lib.sh).
bench=pair-lat
iters=${1:-20000}
sizes=${ROCE_BENCH_SIZES:-2 64 1024 4096}
source "$(dirname "$0")/lib.sh"

# Round-trip p50 and p99 (us) of @1-byte frames: memif_rtt against a testpmd reflector.
floor_rtt() {
	local len=$1
	timeout -s INT 60 dpdk-testpmd $LC_A $EAL --file-prefix "rbench-tpa-$$" \
		--vdev="net_memif0,role=server,socket=$tmp/tp.sock,bsize=8192" -- \
		--forward-mode=macswap --nb-cores=1 --total-num-mbufs=8192 --mbuf-size=9216 --stats-period 10 > "$tmp/tpa.log" 2>&1 &
	local pa=$!
	# A memif client that connects before the server's port has started never comes up.
	for _ in $(seq 400); do grep -q 'start packet forwarding' "$tmp/tpa.log" && break; sleep 0.05; done
	# Its loop runs on the main lcore: CPU 0, away from testpmd's forwarding core.
	timeout 60 "$build/bench/rtt/memif_rtt" -l 0 $EAL --file-prefix "rbench-rtt-$$" \
		--vdev="net_memif0,role=client,socket=$tmp/tp.sock,bsize=8192" -- \
		"$iters" "$len" > "$tmp/rtt.log" 2>&1 || true
	kill -INT "$pa" 2>/dev/null || true
	wait "$pa" 2>/dev/null || true
	if ! grep -q ' median ' "$tmp/rtt.log"; then
		echo "$bench: memif_rtt failed:" >&2; tail -n 5 "$tmp/rtt.log" "$tmp/tpa.log" >&2; exit 1
	fi
	sed -n 's/.* median \([0-9.]*\) p99 \([0-9.]*\) p99.9 \([0-9.]*\) max \([0-9.]*\).*/\1 \2 \3 \4/p' \
		"$tmp/rtt.log"
}

# A full RoCE frame of a @1-byte WRITE: Ethernet, IPv4, UDP, BTH, RETH, payload, ICRC.
frame() { echo $(($1 + 14 + 20 + 8 + 12 + 16 + 4)); }

echo "pair-lat: $iters iterations per point; one-way latency in us (round trip / 2)"
declare -A f50 f99
for size in $sizes; do
	read -r a b c d < <(floor_rtt "$(frame "$size")")
	f50[$size]=$(calc "${a:-0} / 2"); f99[$size]=$(calc "${b:-0} / 2")
	printf 'memif floor, %5d-byte frames: p50 %7.2f  p99 %7.2f  p99.9 %7.2f  max %8.2f\n' \
		"$(frame "$size")" "${f50[$size]}" "${f99[$size]}" "$(calc "${c:-0} / 2")" \
		"$(calc "${d:-0} / 2")"
done
start_pair --idle-sleep 0
# A run that is not reported: the first one after the daemons start pays for cold caches and
# page faults (its p99 was 20x the others').
perf_pair 19599 write --lat -s 2 -n "$iters" --mtu 4096
stamps=0
ctl a stats stages >/dev/null 2>&1 && stamps=1

# The stage stamps of both daemons since the last clear, one line per stage that has samples.
print_stages() {
	ctl a stats stages > "$tmp/sa.json"; ctl b stats stages > "$tmp/sb.json"
	/usr/bin/python3 - "$tmp/sa.json" "$tmp/sb.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
ns = lambda d, v: v * 1e9 / d['tsc_hz']
sb = {s['name']: s for s in b['stages']}
print(f"  {'stage':13} {'A n':>8} {'A p50 ns':>9} {'A p99 ns':>9}   {'B n':>8} {'B p50 ns':>9} {'B p99 ns':>9}")
for s in a['stages']:
    t = sb[s['name']]
    if s['count'] or t['count']:
        print(f"  {s['name']:13} {s['count']:8d} {ns(a, s['median']):9.0f} {ns(a, s['p99']):9.0f}"
              f"   {t['count']:8d} {ns(b, t['median']):9.0f} {ns(b, t['p99']):9.0f}")
EOF
}
printf '\n%-6s %6s %9s %9s %9s %9s %9s %9s\n' op size p50 p99 p99.9 max 'p50/floor' \
	'p99/floor'
port=19600
for op in write send; do
	for size in $sizes; do
		port=$((port + 1))
		if [ "$stamps" = 1 ]; then
			ctl a stats stages --clear >/dev/null; ctl b stats stages --clear >/dev/null
		fi
		perf_pair "$port" "$op" --lat -s "$size" -n "$iters" --mtu 4096
		if ! r=$(pyj "' '.join(str(d['results'][0][k]) for k in ('median', 'p99', 'p999', 'max'))" \
				< "$tmp/client.json" 2>/dev/null); then
			printf '%-6s %6d %9s\n' "$op" "$size" failed
			continue
		fi
		read -r m p p3 mx <<< "$r"
		printf '%-6s %6d %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n' "$op" "$size" "$m" "$p" "$p3" \
			"$mx" "$(calc "$m / max(${f50[$size]}, 1e-9)")" \
			"$(calc "$p / max(${f99[$size]}, 1e-9)")"
		[ "$stamps" = 1 ] && print_stages
	done
done
