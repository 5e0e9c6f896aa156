#!/usr/bin/env bash
# bench/tx-zc.sh: copy against zero-copy transmit (the port key tx_copy), two roced over memif,
# WRITE goodput per message size and path MTU. Rounds alternate the two (A B A B: a pair of
# daemons started with --tx-copy always, then one with --tx-copy never), so that the machine's
# drift falls on both; prints each round's goodput and the median ratio zero-copy / copy of
# the rounds with min and max. The sender's TX_ZC / TX_COPY_* counters tell that each mode did
# what it says.
#
# usage: bench/tx-zc.sh [ROUNDS] [SECONDS_PER_POINT]     (default 5 rounds, 2 s)
# Environment: ROCE_BUILD_DIR, ROCE_BENCH_POINTS (SIZE@MTU ..., default
#              "1024@1024 4096@4096 65536@4096").
bench=tx-zc
rounds=${1:-5}
secs=${2:-2}
points=${ROCE_BENCH_POINTS:-1024@1024 4096@4096 65536@4096}
source "$(dirname "$0")/lib.sh"

mr_rights=local_write,remote_write
qp_rights=remote_write

# Goodput in bits/s of WRITEs of @1 bytes at path MTU @2 on a fresh QP pair, -1 on errors.
write_bps() {
	local size=$1 mtu=$2 ma mb qa qb na nb
	ma=$(ctl a mr reg 16M access="$mr_rights"); mb=$(ctl b mr reg 16M access="$mr_rights")
	qa=$(ctl a qp create access="$qp_rights"); qb=$(ctl b qp create access="$qp_rights")
	na=$(echo "$qa" | field "['qp']['qpn']"); nb=$(echo "$qb" | field "['qp']['qpn']")
	ctl a qp connect "$na" "$nb" "$(echo "$qb" | field "['qp']['psn']")" 10.0.0.2 mtu="$mtu" >/dev/null
	ctl b qp connect "$nb" "$na" "$(echo "$qa" | field "['qp']['psn']")" 10.0.0.1 mtu="$mtu" >/dev/null
	ctl a job start "$na" op=write lkey="$(echo "$ma" | field "['mr']['lkey']")" \
		length="$size" remote_addr="$(echo "$mb" | field "['mr']['iova']")" \
		rkey="$(echo "$mb" | field "['mr']['rkey']")" duration_ms=$((secs * 1000)) >/dev/null
	sleep "$secs"
	while [ "$(ctl a job show "$na" | field "['job']['running']")" = True ]; do sleep 0.1; done
	ctl a job show "$na" | pyj "int(d['job']['gbps'] * 1e9) if d['job']['errors'] == 0 else -1"
	ctl a qp destroy "$na" >/dev/null; ctl b qp destroy "$nb" >/dev/null
	ctl a mr dereg "$(echo "$ma" | field "['mr']['lkey']")" >/dev/null
	ctl b mr dereg "$(echo "$mb" | field "['mr']['lkey']")" >/dev/null
}

echo "tx-zc: $rounds rounds of copy then zero-copy, ${secs}s per point, WRITE goodput in Gbit/s"
for r in $(seq "$rounds"); do
	for mode in always never; do
		start_pair --tx-copy "$mode"
		line="round $r $(printf '%-6s' "$([ $mode = always ] && echo copy || echo zc)")"
		for p in $points; do
			bps=$(write_bps "${p%@*}" "${p#*@}")
			echo "$mode $p $bps" >> "$tmp/rows"
			line+=$(printf ' %s %6.2f' "$p" "$(calc "$bps / 1e9")")
		done
		line+=$(ctl a counters 'TX_*' | pyj "'  TX_ZC %d, copied %d' % (d['counters'].get('TX_ZC', 0), sum(v for k, v in d['counters'].items() if k.startswith('TX_COPY')))")
		echo "$line"
		cleanup
	done
done
/usr/bin/python3 - "$tmp/rows" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
pts = list(dict.fromkeys(r[1] for r in rows))
print('\npoint (size@MTU)   copy Gb/s (median)  zc Gb/s (median)  zc/copy median [min, max]')
for p in pts:
    c = [int(r[2]) for r in rows if r[1] == p and r[0] == 'always']
    z = [int(r[2]) for r in rows if r[1] == p and r[0] == 'never']
    if min(c + z) <= 0:
        print(f'{p:18} errors in a round')
        continue
    ratios = [b / a for a, b in zip(c, z)]
    print(f'{p:18} {statistics.median(c) / 1e9:18.2f} {statistics.median(z) / 1e9:17.2f}'
          f'  {statistics.median(ratios):.2f} [{min(ratios):.2f}, {max(ratios):.2f}]')
EOF
