#!/usr/bin/env bash
# bench/loss.sh: goodput against packet loss (0, 0.01 %, 0.1 %, 1 %, 5 %), go-back-N and
# selective repeat side by side, from one run:
#  - in process: build/bench/loss/bench_loss (the transport on the harness link: 100 Gb/s,
#    2 us one way, the loss on data and ACKs, one QP of 64 KiB WRITEs);
#  - over memif: two roced (one worker core each), `rocectl perf write -D SECS` with and
#    without --no-sr, the loss applied by drivers/impair on both daemons' receive side.
# Each ratio is goodput(loss) / goodput(0) of the same mode in the same run; the target is
# that selective repeat keeps at least 80 % at 1 % loss.
#
# usage: bench/loss.sh [SECONDS_PER_POINT]     (default 3)
# Environment: ROCE_BUILD_DIR (default build), ROCE_BENCH_LOSSES, ROCE_BENCH_SIZE (64K).
bench=loss
secs=${1:-3}
losses=${ROCE_BENCH_LOSSES:-0 0.01 0.1 1 5}
size=${ROCE_BENCH_SIZE:-65536}
source "$(dirname "$0")/lib.sh"
ninja -C "$build" bench/loss/bench_loss >/dev/null

echo "== in process (bench_loss, 20 ms of virtual time per point)"
"$build/bench/loss/bench_loss"

echo
echo "== over memif: rocectl perf write -s $size -D $secs, MTU 1024, loss on both rx sides"
start_pair
printf '%8s %12s %7s %12s %7s\n' loss% 'GBN Gbit/s' ratio 'SR Gbit/s' ratio
declare -A base
port=19800
for loss in $losses; do
	row=$(printf '%8s' "$loss")
	for mode in gbn sr; do
		port=$((port + 1))
		for d in a b; do
			if [ "$loss" = 0 ]; then
				ctl "$d" impair clear >/dev/null
			else
				ctl "$d" impair set "spec=loss=$loss%,seed=$port" dir=rx >/dev/null
			fi
		done
		flag=; [ "$mode" = gbn ] && flag=--no-sr
		perf_pair "$port" write -s "$size" -D "$secs" --mtu 1024 --report-gbits $flag
		g=$(pyj "d['results'][0]['bw_avg'] if d.get('ok') else -1" < "$tmp/client.json" \
			2>/dev/null || echo -1)
		[ "$loss" = 0 ] && base[$mode]=$g
		if [ "$(calc "$g < 0")" = True ]; then
			row+=$(printf ' %12s %7s' failed -)
		else
			row+=$(printf ' %12.2f %7.2f' "$g" "$(calc "$g / max(${base[$mode]}, 1e-9)")")
		fi
	done
	echo "$row"
done
