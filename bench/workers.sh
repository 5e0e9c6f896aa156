#!/usr/bin/env bash
# bench/workers.sh: two roced over memif with one worker each, against two workers each, on
# a memif queue pair per worker (--queues 2: what the peer's worker i sends arrives at our
# worker i) and on one shared queue (--queues 1: the worker without a queue hands its frames
# to the one with it, and received packets of its QPs come back through its inbound ring).
# rocectl perf write -q 8 (the QPs spread over the workers): the 64 B message rate and the
# 4 KiB goodput at MTU 4096. Rounds alternate the three setups (A B C A B C), each with a
# fresh pair; the table gives each setup's median and its ratio to the same round's one
# worker, median [min, max], and the share of frames handed between workers.
#
# On two CPUs, two workers per daemon put four polling threads on two cores: the figure is
# what that costs, not scaling (which needs a core per worker).
#
# usage: bench/workers.sh [SECONDS [ROUNDS]]     (default 3 s, 5 rounds)
# Environment: ROCE_BUILD_DIR (default build).
bench=workers
secs=${1:-3}
rounds=${2:-5}
source "$(dirname "$0")/lib.sh"

# Setups: name, then roced options. Two workers: A's on CPUs 1 and 0, B's on 0 and 1.
setups=("1w" "2w-2q" "2w-1q")
declare -A opts=([1w]="--workers 1" [2w-2q]="--workers 2 --queues 2" [2w-1q]="--workers 2 --queues 1")
declare -A lca=([1w]="-l 0,1" [2w-2q]="--lcores 0@0,1@1,2@0" [2w-1q]="--lcores 0@0,1@1,2@0")
declare -A lcb=([1w]="--lcores 0@1,1@0" [2w-2q]="--lcores 0@1,1@0,2@1" [2w-1q]="--lcores 0@1,1@0,2@1")

# Frames handed between workers on both daemons (HANDOFF received + TX_HANDOFF to send),
# over the frames both sent (PORT_TX_PKTS).
handoffs() {
	local h=0 n=0 d
	for d in a b; do
		ctl "$d" counters nonzero=true > "$tmp/c.json"
		h=$((h + $(pyj "d['counters'].get('HANDOFF', 0) + d['counters'].get('TX_HANDOFF', 0)" \
			< "$tmp/c.json")))
		n=$((n + $(pyj "d['counters'].get('PORT_TX_PKTS', 0)" < "$tmp/c.json")))
	done
	calc "$h / max($n, 1)"
}

declare -A got ho
port=19700
: > "$tmp/rows"
echo "workers: rocectl perf write -q 8 -D $secs, $rounds rounds of ${setups[*]}"
printf '%5s %-6s %12s %12s %10s\n' round setup '64 B Mpps' '4 KiB MB/s' 'handed/frame'
for r in $(seq "$rounds"); do
	for s in "${setups[@]}"; do
		LC_A=${lca[$s]} LC_B=${lcb[$s]} start_pair ${opts[$s]}
		for size in 64 4096; do
			port=$((port + 1))
			ctl a counters clear >/dev/null
			ctl b counters clear >/dev/null
			perf_pair "$port" write -q 8 -s "$size" -D "$secs" --mtu 4096
			got[$size]=$(perf_figure "$size")
			ho[$size]=$(handoffs)
		done
		cleanup
		printf '%5d %-6s %12.4f %12.1f %5.2f/%-5.2f\n' "$r" "$s" "${got[64]}" "${got[4096]}" \
			"${ho[64]}" "${ho[4096]}"
		echo "$r $s ${got[64]} ${got[4096]} ${ho[64]} ${ho[4096]}" >> "$tmp/rows"
	done
done
/usr/bin/python3 - "$tmp/rows" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for r, s, m, g, h64, h4k in rows:
    by[(r, s)] = (float(m), float(g), float(h64), float(h4k))
setups = list(dict.fromkeys(s for _, s, *_ in rows))
rounds = sorted({r for r, *_ in rows}, key=int)
print('median of the rounds; ratio to one worker in the same round, median [min, max]')
for s in setups:
    line = f'{s:6s}'
    for i, what in ((0, '64 B Mpps'), (1, '4 KiB MB/s')):
        vals = [by[(r, s)][i] for r in rounds if by[(r, s)][i] > 0]
        rat = sorted(by[(r, s)][i] / by[(r, '1w')][i] for r in rounds
                     if by[(r, s)][i] > 0 and by[(r, '1w')][i] > 0)
        if not vals or not rat:
            line += f'  {what}: no round completed'
            continue
        line += (f'  {what} {statistics.median(vals):9.3f} ratio {statistics.median(rat):.3f} '
                 f'[{rat[0]:.3f}, {rat[-1]:.3f}]')
    h = [by[(r, s)][2] for r in rounds]
    line += f'  handed/frame (64 B) {statistics.median(h):.2f}'
    print(line)
EOF
