#!/usr/bin/env bash
# bench/cc-cost.sh: what congestion control costs on an uncongested link. Two roced over memif
# (each worker on its own core), `rocectl perf write` with `--cc off` and `--cc dcqcn` (mlx5
# profile: ECT(0) on every packet, each QP tracked and asked about by the pacer) alternated
# round by round (off, on, off, on ...): the 64-byte message rate and the 4 KiB goodput at
# MTU 4096. Prints every round and the median ratio on/off with its min and max; the target is
# a median of at least 0.95.
#
# usage: bench/cc-cost.sh [ROUNDS [SECONDS]]     (default 5 rounds of 3 s per point)
# Environment: ROCE_BUILD_DIR (default build).
bench=cc-cost
rounds=${1:-5}
secs=${2:-3}
source "$(dirname "$0")/lib.sh"

start_pair
port=19900
declare -A got
echo "cc-cost: rocectl perf write -D $secs, --cc off / --cc dcqcn alternated, $rounds rounds"
printf '%5s %8s %14s %14s %7s\n' round size 'off' 'dcqcn' ratio
for r in $(seq "$rounds"); do
	for size in 64 4096; do
		for cc in off dcqcn; do
			port=$((port + 1))
			perf_pair "$port" write -s "$size" -D "$secs" --mtu 4096 --cc "$cc"
			got[$cc]=$(perf_figure "$size")
		done
		ratio=$(calc "${got[dcqcn]} / max(${got[off]}, 1e-12) if ${got[off]} > 0 and ${got[dcqcn]} > 0 else -1")
		unit=$([ "$size" = 64 ] && echo Mpps || echo MB/s)
		printf '%5d %8s %9.4f %-4s %9.4f %-4s %7.3f\n' "$r" "$size" "${got[off]}" "$unit" \
			"${got[dcqcn]}" "$unit" "$ratio"
		echo "$size $ratio" >> "$tmp/ratios"
	done
done
/usr/bin/python3 - "$tmp/ratios" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for size in ('64', '4096'):
    rs = sorted(float(r) for s, r in rows if s == size and float(r) > 0)
    what = 'message rate' if size == '64' else 'goodput'
    if rs:
        print(f'{size:>5} B {what}: dcqcn/off median {statistics.median(rs):.3f} '
              f'(min {rs[0]:.3f}, max {rs[-1]:.3f}, {len(rs)} rounds)')
    else:
        print(f'{size:>5} B {what}: no round completed')
EOF
