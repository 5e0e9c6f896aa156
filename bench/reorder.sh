#!/usr/bin/env bash
# bench/reorder.sh: READ goodput against response reordering, go-back-N and selective repeat
# side by side: two roced over memif (one worker core each), `rocectl perf read -D SECS -q 4`
# with and without --no-sr, drivers/impair reordering the responder's (A's) transmit side (READ
# responses; depth packets held back for up to the timeout) and optionally a little loss.
# Each ratio is goodput(point) / goodput(no impairment) of the same mode in the same run, and
# the requester's (B's) counters show what the reordering cost: responses out of order, placed
# ahead, gaps that closed by themselves, READ re-issues (and needless ones), retransmits.
#
# usage: bench/reorder.sh [SECONDS_PER_POINT]     (default 3)
# Environment: ROCE_BUILD_DIR (default build), ROCE_BENCH_SIZE (64K),
#              ROCE_BENCH_POINTS ("0 reorder=1%:8 reorder=5%:8 reorder=5%:8,loss=1%").
bench=reorder
secs=${1:-3}
size=${ROCE_BENCH_SIZE:-65536}
points=${ROCE_BENCH_POINTS:-0 reorder=1%:8 reorder=5%:8 reorder=5%:8,loss=1%}
source "$(dirname "$0")/lib.sh"

start_pair
echo "== rocectl perf read -s $size -q 4 -D $secs, MTU 1024, impairment on A's transmit side"
printf '%-22s %5s %10s %6s %9s %8s %7s %7s %6s %8s\n' point mode Gbit/s ratio resp_oos \
	placed closed reissue needls retrans
declare -A base
port=19900
for pt in $points; do
	for mode in gbn sr; do
		port=$((port + 1))
		if [ "$pt" = 0 ]; then
			ctl a impair clear >/dev/null
		else
			ctl a impair set "spec=$pt,seed=$port" dir=tx >/dev/null
		fi
		before=$(ctl b counters)
		flag=; [ "$mode" = gbn ] && flag=--no-sr
		perf_pair "$port" read -s "$size" -q 4 -D "$secs" --mtu 1024 --report-gbits $flag
		after=$(ctl b counters)
		g=$(pyj "d['results'][0]['bw_avg'] if d.get('ok') else -1" < "$tmp/client.json" \
			2>/dev/null || echo -1)
		[ "$pt" = 0 ] && base[$mode]=$g
		deltas=$(python3 - "$before" "$after" <<'PY'
import json, sys
b, a = (json.loads(x)['counters'] for x in sys.argv[1:3])
keys = ('RESP_OOS', 'READ_OOO_PLACED', 'READ_REORDERED', 'READ_REISSUE', 'READ_SPURIOUS',
        'RETRANSMITS')
print(' '.join(str(a.get(k, 0) - b.get(k, 0)) for k in keys))
PY
)
		if [ "$(calc "$g < 0")" = True ]; then
			printf '%-22s %5s %10s %6s %s\n' "$pt" "$mode" failed - "$deltas"
		else
			printf '%-22s %5s %10.2f %6.2f %9s %8s %7s %7s %6s %8s\n' "$pt" "$mode" "$g" \
				"$(calc "$g / max(${base[$mode]}, 1e-9)")" $deltas
		fi
	done
done
