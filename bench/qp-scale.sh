#!/usr/bin/env bash
# bench/qp-scale.sh: aggregate WRITE goodput between two roced over memif (one worker core
# each) with 1, 64, 1024 and 16384 QPs (rocectl perf write -q N -D SECS), the daemon's heap
# per QP (QP, its CQ and queues, from `rocectl status` heap_bytes around the QPs' creation), and
# the ratio of each goodput to the 1-QP figure of the same run.
#
# usage: bench/qp-scale.sh [SECONDS_PER_POINT]     (default 3)
# Environment: ROCE_BUILD_DIR (default build), ROCE_BENCH_QPS (default "1 64 1024 16384"),
#              ROCE_BENCH_SIZE (message bytes, default 4096).
bench=qp-scale
secs=${1:-3}
qps_list=${ROCE_BENCH_QPS:-1 64 1024 16384}
size=${ROCE_BENCH_SIZE:-4096}
ROCE_BENCH_MEM=${ROCE_BENCH_MEM:-2048}
source "$(dirname "$0")/lib.sh"

start_pair --max-qps 16384
echo "qp-scale: WRITE $size-byte messages, MTU 4096, ${secs}s per point"
printf '%7s %12s %12s %8s %14s\n' QPs Gbit/s Mmsg/s ratio 'heap/QP bytes'
base=0
port=19700
for n in $qps_list; do
	port=$((port + 1))
	# A small tx depth per QP keeps 16384 QPs' work requests within the mbuf pools.
	depth=$(( n >= 16384 ? 1 : n >= 1024 ? 4 : n >= 64 ? 16 : 128 ))
	perf_pair "$port" write -q "$n" -D "$secs" -s "$size" -t "$depth" --mtu 4096 --report-gbits
	if ! r=$(pyj "'%f %f %f' % (d['results'][0]['bw_avg'], d['results'][0]['msg_rate_mpps'], d['qp_heap_bytes'])" \
			< "$tmp/client.json" 2>/dev/null); then
		printf '%7d %12s\n' "$n" failed
		continue
	fi
	read -r g m h <<< "$r"
	[ "$base" = 0 ] && base=$g
	printf '%7d %12.2f %12.4f %8.2f %14.0f\n' "$n" "$g" "$m" "$(calc "$g / max($base, 1e-9)")" "$h"
done
