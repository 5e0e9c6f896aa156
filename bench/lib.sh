# Shared by the bench/*.sh scripts: build, a temporary directory cleaned up on exit, and two
# roced over memif with each side's polling thread on its own core. Source it after setting
# $bench (the script's name, for messages).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
build=${ROCE_BUILD_DIR:-build}
# The daemon: ROCE_ROCED=test/integration/roced-stages runs the one with the stage stamps
# (rocectl stats stages), a path relative to the build directory; an absolute path runs that
# binary as it is (another commit's build, for A B rounds).
roced_rel=${ROCE_ROCED:-app/roced/roced}
case $roced_rel in
/*) roced_bin=$roced_rel; roced_rel= ;;
*) roced_bin=$build/$roced_rel ;;
esac

scripts/install-deps.sh
[ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null
# Only what the benchmarks run.
targets="$roced_rel app/rocectl bench/rtt/memif_rtt"
ninja -C "$build" $targets >/dev/null || { ninja -C "$build" $targets | tail -n 20; exit 1; }

tmp=$(mktemp -d /tmp/rocedp-bench.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=()
	rm -f "$tmp"/*.sock
}
trap 'cleanup; rm -rf "$tmp"' EXIT

# Each side's polling thread on its own core: A's on core 1, B's on core 0.
LC_A="-l 0,1"
LC_B="--lcores 0@1,1@0"
EAL="--no-huge -m ${ROCE_BENCH_MEM:-1024} --no-pci"

# The memif server must listen before its client starts (an abstract socket: see
# /proc/net/unix).
wait_sock() {
	for _ in $(seq 400); do grep -q "@$1" /proc/net/unix && sleep 0.2 && return; sleep 0.05; done
	echo "$bench: no memif server on $1" >&2; exit 1
}

calc() { /usr/bin/python3 -c "print($1)"; }
ctl() { "$build/app/rocectl" -s "$tmp/$1.sock" --json "${@:2}"; }
field() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print(eval('d' + sys.argv[1]))" "$1"; }
pyj() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# start_pair [ROCED_OPTION...]: A (10.0.0.1) serves the memif, B (10.0.0.2) connects.
start_pair() {
	"$roced_bin" $LC_A $EAL --file-prefix "rbench-a-$$" \
		--vdev="net_memif0,role=server,socket=$tmp/m.sock,bsize=8192" -- --port net_memif0 \
		--ip 10.0.0.1/24 --mtu 9000 --socket "$tmp/a.sock" "$@" > "$tmp/a.log" 2>&1 &
	pids+=($!)
	wait_sock "$tmp/m.sock"
	"$roced_bin" $LC_B $EAL --file-prefix "rbench-b-$$" \
		--vdev="net_memif0,role=client,socket=$tmp/m.sock,bsize=8192" -- --port net_memif0 \
		--ip 10.0.0.2/24 --mtu 9000 --socket "$tmp/b.sock" "$@" > "$tmp/b.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		ctl b status >/dev/null 2>&1 && [ "$(ctl b port show | field "['ports'][0]['link_up']")" = True ] && return
		sleep 0.1
	done
	echo "$bench: daemons did not come up"; cat "$tmp"/a.log "$tmp"/b.log; exit 1
}

# perf_pair PORT ARGS...: rocectl perf ARGS with A as server and B as client; the client's JSON
# goes to $tmp/client.json, the server's to $tmp/server.json.
perf_pair() {
	local port=$1; shift
	"$build/app/rocectl" -s "$tmp/a.sock" perf "$@" --server -p "$port" --json \
		> "$tmp/server.json" 2> "$tmp/server.err" &
	local ps=$!
	"$build/app/rocectl" -s "$tmp/b.sock" perf "$@" --client 127.0.0.1 -p "$port" --json \
		> "$tmp/client.json" 2> "$tmp/client.err" || tail -n 3 "$tmp/client.err" "$tmp/server.err" >&2
	wait "$ps" || true
}

# perf_figure SIZE: the last perf_pair's client figure, the message rate (Mpps) for 64 B
# messages, else the average goodput (MB/s); -1 when the run failed.
perf_figure() {
	local key="d['results'][0]['bw_avg']"
	[ "$1" = 64 ] && key="d['results'][0]['msg_rate_mpps']"
	pyj "$key if d.get('ok') else -1" < "$tmp/client.json" 2>/dev/null || echo -1
}
