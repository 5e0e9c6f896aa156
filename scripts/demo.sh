#!/usr/bin/env bash
# The rocedp demo, the embedded default: two roced on this machine joined by memif (no NIC, no
# hugepages), one RC QP connected through rocectl (MACs found with ARP), a few seconds of
# 64 KiB RDMA WRITEs and then READs, the data checked on both sides, a short result table, and
# everything stopped. Then the wire layer decodes the reference captures, if they are there.
#
# Environment: ROCE_BUILD_DIR (default build), ROCE_DEMO_SECS (default 3),
#              ROCE_CAPTURES (default ../shared/captures beside the checkout).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${ROCE_BUILD_DIR:-build}
secs=${ROCE_DEMO_SECS:-3}
captures=${ROCE_CAPTURES:-$top/../shared/captures}

scripts/install-deps.sh
[ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null
echo "demo: building $build"
ninja -C "$build" >/dev/null || { ninja -C "$build" | tail -40; exit 1; }

tmp=$(mktemp -d /tmp/rocedp-demo.XXXXXX)
pids=()
# SIGTERM: each daemon moves its QPs to error, prints its counters and exits 0.
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

roced=$build/app/roced/roced
ctl() { "$build/app/rocectl" -s "$tmp/$1.sock" "${@:2}"; }
json() { "$build/app/rocectl" -s "$tmp/$1.sock" --json "${@:2}"; }
field() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print(eval('d' + sys.argv[1]))" "$1"; }

# Each daemon's worker polls on its own core: a's on core 1, b's on core 0.
start() {
	local name=$1 role=$2 ip=$3 lcores=$4
	"$roced" --lcores "$lcores" --no-huge -m 512 --no-pci --file-prefix "rocedp-demo-$name-$$" \
		--vdev="net_memif0,role=$role,socket=$tmp/memif.sock,bsize=8192" -- \
		--port net_memif0 --ip "$ip/24" --socket "$tmp/$name.sock" --idle-sleep 20 \
		> "$tmp/$name.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		ctl "$name" status >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "demo: roced $name did not start:"; cat "$tmp/$name.log"; exit 1
}

echo "demo: starting roced a (10.0.0.1, memif server) and b (10.0.0.2, memif client)"
start a server 10.0.0.1 0@0,1@1
start b client 10.0.0.2 0@1,1@0
for _ in $(seq 100); do
	[ "$(json a port show | field "['ports'][0]['link_up']")" = True ] &&
		[ "$(json b port show | field "['ports'][0]['link_up']")" = True ] && break
	sleep 0.1
done
ctl a port show

# MRs and QPs grant the peer exactly the rights named (none by default).
ma=$(json a mr reg 4M access=local_write,remote_write)
mb=$(json b mr reg 4M access=local_write,remote_write)
qa=$(json a qp create access=remote_write); qb=$(json b qp create access=remote_write)
get() { echo "$1" | field "$2"; }
ctl a qp connect "$(get "$qa" "['qp']['qpn']")" "$(get "$qb" "['qp']['qpn']")" \
	"$(get "$qb" "['qp']['psn']")" 10.0.0.2 >/dev/null
ctl b qp connect "$(get "$qb" "['qp']['qpn']")" "$(get "$qa" "['qp']['qpn']")" \
	"$(get "$qa" "['qp']['psn']")" 10.0.0.1 >/dev/null
qpn=$(get "$qa" "['qp']['qpn']")
lkey=$(get "$ma" "['mr']['lkey']")
raddr=$(get "$mb" "['mr']['iova']")
rkey=$(get "$mb" "['mr']['rkey']")
echo
ctl a qp show

ctl a mr fill "$lkey" random:42 >/dev/null
ctl b mr fill "$rkey" random:43 >/dev/null
printf '\n%-6s %10s %10s %10s %12s\n' op messages Gbit/s msg/s errors
for op in write read; do
	ctl a job start "$qpn" op=$op lkey="$lkey" length=65536 remote_addr="$raddr" \
		rkey="$rkey" duration_ms=$((secs * 1000)) >/dev/null
	sleep "$secs"
	while [ "$(json a job show "$qpn" | field "['job']['running']")" = True ]; do sleep 0.2; done
	json a job show "$qpn" | /usr/bin/python3 -c "
import json, sys
j = json.load(sys.stdin)['job']
print('%-6s %10d %10.2f %10.0f %12d' % ('$op', j['completed'], j['gbps'], j['msg_rate'],
      j['errors']))"
done
da=$(json a mr digest "$lkey" length=65536 | field "['crc32']")
db=$(json b mr digest "$rkey" length=65536 | field "['crc32']")
echo
echo "demo: CRC-32 of the 64 KiB buffer: a $da, b $db ($([ "$da" = "$db" ] && echo equal || echo DIFFERENT))"

# The same pair as perftest would see it: rocectl perf speaks perftest's side channel (here to
# the other rocectl perf, so they also agree on selective repeat and on checking the data).
echo
echo "demo: rocectl perf write -q 4 -D $secs --verify, a as server, b as client"
"$build/app/rocectl" -s "$tmp/a.sock" perf write --server -p 18599 -q 4 --verify \
	> "$tmp/perf-a.txt" 2>&1 &
perf_a=$!
"$build/app/rocectl" -s "$tmp/b.sock" perf write --client 127.0.0.1 -p 18599 -q 4 -D "$secs" \
	--verify --report-gbits 2>/dev/null | grep -v '^ \[' || echo "demo: rocectl perf failed"
if wait "$perf_a"; then
	sed -n 's/^ Data verified: /demo: the server (receiver) checked the data: /p' "$tmp/perf-a.txt"
else
	echo "demo: the perf server failed:"; tail -n 3 "$tmp/perf-a.txt"
fi
echo
echo "demo: traffic seen by each daemon"
paste <(echo a; ctl a stats) <(echo b; ctl b stats) | expand -t 24

echo
echo "demo: stopping both daemons"
cleanup
trap - EXIT
pids=()

if compgen -G "$captures/*.pcap" >/dev/null; then
	echo
	echo "demo: the classifier on the reference rxe captures ($captures):"
	"$build/app/rocedump" --table "$captures"/*.pcap "$captures"/errors/*.pcap | tail -25
fi
