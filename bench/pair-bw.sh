#!/usr/bin/env bash
# bench/pair-bw.sh: two roced over memif, one worker core each, WRITE/READ/SEND goodput for
# several message sizes and path MTUs, against dpdk-testpmd txonly -> rxonly over the same
# memif with frames of the size the message's RoCE packets have (min(size, MTU) + 58 bytes of
# headers), measured in the same run. Prints goodput, the ratio goodput / raw testpmd bit
# rate, and the ratio of packet rates (our data packets / testpmd's frames), which small
# messages can bring near 1 where their header overhead caps the first ratio. Rounds alternate
# the two (A B A B: testpmd at every frame size, then a fresh pair of roced at every point), so
# the machine's drift falls on both; each ratio is ours over the same round's testpmd, and the
# table gives the median goodput and the median ratio of the rounds with min and max.
#
# usage: bench/pair-bw.sh [SECONDS_PER_POINT [ROUNDS]]     (default 2 s, 5 rounds)
# Environment: ROCE_BUILD_DIR (default build), ROCE_BENCH_SIZES, ROCE_BENCH_MTUS, ROCE_BENCH_OPS,
#              ROCE_BENCH_CQ_MOD (a completion every N messages, default 100 as perftest),
#              ROCE_BENCH_PLOT (a directory: each op and MTU's goodput against size as
#              rocectl perf -a JSON there, and scripts/plot.py's picture of them, pair-bw.png).
bench=pair-bw
secs=${1:-2}
rounds=${2:-5}
sizes=${ROCE_BENCH_SIZES:-64 1024 4096 65536 1048576}
mtus=${ROCE_BENCH_MTUS:-1024 4096}
ops=${ROCE_BENCH_OPS:-write read send}
cq_mod=${ROCE_BENCH_CQ_MOD:-100}
source "$(dirname "$0")/lib.sh"

# Raw rate of @1-byte frames: testpmd txonly -> rxonly over memif; prints bits/s. Both run
# under timeout, so nothing outlives the measurement.
testpmd_bps() {
	local len=$1
	timeout -s INT $((secs + 12)) dpdk-testpmd $LC_A $EAL --file-prefix "rbench-tpa-$$" \
		--vdev="net_memif0,role=server,socket=$tmp/tp.sock,bsize=8192" -- \
		--forward-mode=rxonly --nb-cores=1 --total-num-mbufs=16384 --mbuf-size=8192 --stats-period 1 \
		> "$tmp/tpa.log" 2>&1 &
	local pa=$!
	wait_sock "$tmp/tp.sock"
	timeout -s INT $((secs + 5)) dpdk-testpmd $LC_B $EAL --file-prefix "rbench-tpb-$$" \
		--vdev="net_memif0,role=client,socket=$tmp/tp.sock,bsize=8192" -- \
		--forward-mode=txonly --mbuf-size=8192 --txpkts="$len" --nb-cores=1 --total-num-mbufs=16384 \
		--stats-period 1 > "$tmp/tpb.log" 2>&1 || true
	# testpmd checks --txpkts against the mbuf size given before it (else the default 2176,
	# and it falls back to 64-byte frames): make sure it sent what was asked.
	if ! grep -q "packet len=$len " "$tmp/tpb.log"; then
		echo "$bench: testpmd did not send $len-byte frames:" >&2
		grep -i "give up\|packet len" "$tmp/tpb.log" >&2
		exit 1
	fi
	kill -INT "$pa" 2>/dev/null || true
	wait "$pa" 2>/dev/null || true
	# The best one-second Rx figure of the receiver.
	grep -o 'Rx-bps: *[0-9]*' "$tmp/tpa.log" | awk '{ if ($2 > m) m = $2 } END { printf "%.0f\n", m }'
}

# roced grants exactly the rights asked for: the peer may write, read and do atomics here.
mr_rights=local_write,remote_write,remote_read,remote_atomic
qp_rights=remote_write,remote_read,remote_atomic

# Goodput in bits/s of one op/size/MTU point on a fresh QP pair.
roced_bps() {
	local op=$1 size=$2 mtu=$3 qa qb ma mb
	ma=$(ctl a mr reg 16M access="$mr_rights"); mb=$(ctl b mr reg 16M access="$mr_rights")
	qa=$(ctl a qp create access="$qp_rights"); qb=$(ctl b qp create access="$qp_rights")
	local na nb
	na=$(echo "$qa" | field "['qp']['qpn']"); nb=$(echo "$qb" | field "['qp']['qpn']")
	ctl a qp connect "$na" "$nb" "$(echo "$qb" | field "['qp']['psn']")" 10.0.0.2 mtu="$mtu" >/dev/null
	ctl b qp connect "$nb" "$na" "$(echo "$qa" | field "['qp']['psn']")" 10.0.0.1 mtu="$mtu" >/dev/null
	local lkey rkey raddr blkey
	lkey=$(echo "$ma" | field "['mr']['lkey']"); blkey=$(echo "$mb" | field "['mr']['lkey']")
	rkey=$(echo "$mb" | field "['mr']['rkey']"); raddr=$(echo "$mb" | field "['mr']['iova']")
	if [ "$op" = send ]; then
		# Receives for the whole run: the job on b keeps posting them.
		ctl b job start "$nb" op=recv lkey="$blkey" length="$size" \
			duration_ms=$(((secs + 1) * 1000)) >/dev/null
	fi
	# perftest's CQ moderation (rocectl perf's -Q, default 100)
	ctl a job start "$na" op="$op" lkey="$lkey" length="$size" remote_addr="$raddr" \
		rkey="$rkey" duration_ms=$((secs * 1000)) cq_mod="$cq_mod" >/dev/null
	sleep "$secs"
	while [ "$(ctl a job show "$na" | field "['job']['running']")" = True ]; do sleep 0.1; done
	ctl a job show "$na" > "$tmp/job.json"
	pyj "int(d['job']['gbps'] * 1e9) if d['job']['errors'] == 0 else -1" < "$tmp/job.json"
	ctl a qp destroy "$na" >/dev/null; ctl b qp destroy "$nb" >/dev/null
}

echo "pair-bw: $rounds rounds, ${secs}s per point; goodput in Gbit/s (median of the rounds);"
echo "ratio = goodput / the same round's raw testpmd bit rate, median [min, max];"
echo "pps = our data packets per second / testpmd frames per second (same frame size), median"
frame() { local s=$(( $1 < $2 ? $1 : $2 )); echo $(( (s > 0 ? s : 1) + 58 )); }
frames=$(for mtu in $mtus; do for size in $sizes; do frame "$size" "$mtu"; done; done | sort -nu)
for r in $(seq "$rounds"); do
	line="round $r testpmd"
	for f in $frames; do
		# A testpmd pair that moved nothing (its memif did not connect in time) is run
		# again: a zero baseline would make the round's ratios meaningless.
		for _ in 1 2 3; do
			bps=$(testpmd_bps "$f")
			[ "$bps" -gt 0 ] && break
			echo "$bench: testpmd moved no $f-byte frames in round $r; running it again" >&2
		done
		[ "$bps" -gt 0 ] || { echo "$bench: testpmd moved nothing three times" >&2; exit 1; }
		echo "$r $f $bps" >> "$tmp/raw"
		line+=$(printf ' %dB %.2f Mpps' "$f" "$(calc "$bps / ($f * 8) / 1e6")")
	done
	echo "$line"
	start_pair
	for op in $ops; do
		for size in $sizes; do
			for mtu in $mtus; do
				echo "$r $op $size $mtu $(frame "$size" "$mtu") $(roced_bps "$op" "$size" "$mtu")" \
					>> "$tmp/ours"
			done
		done
	done
	cleanup
	echo "round $r rocedp: $(awk -v r="$r" '$1 == r && $6 < 0' "$tmp/ours" | wc -l) points with errors"
done
/usr/bin/python3 - "$tmp/raw" "$tmp/ours" "$mtus" "$tmp/points" <<'EOF'
import statistics as st, sys
raw = {(r, int(f)): int(float(b)) for r, f, b in (l.split() for l in open(sys.argv[1]))}
mtus = sys.argv[3].split()
pts = {}
for r, op, size, mtu, f, bps in (l.split() for l in open(sys.argv[2])):
    pts.setdefault((op, int(size), mtu), []).append((r, int(f), int(float(bps))))
print(f"\n{'op':6} {'size':>9}" + ''.join(f" {'MTU ' + m:>8} {'ratio [min, max]':>18} {'pps':>5}"
                                         for m in mtus))
with open(sys.argv[4], 'w') as out:
    for (op, size) in dict.fromkeys((o, s) for o, s, _ in pts):
        cells = ''
        for m in mtus:
            rs = pts[(op, size, m)]
            if any(b < 0 for _, _, b in rs):
                cells += f" {'errors':>8} {'-':>18} {'-':>5}"
                continue
            g = st.median(b for _, _, b in rs)
            ratio = [b / max(raw[(r, f)], 1) for r, f, b in rs]
            npk = (size + int(m) - 1) // int(m)
            pps = [b / 8 / size * npk / max(raw[(r, f)] / (f * 8), 1) for r, f, b in rs]
            cells += (f" {g / 1e9:8.2f} {st.median(ratio):6.2f} [{min(ratio):.2f}, "
                      f"{max(ratio):.2f}] {st.median(pps):5.2f}")
            out.write(f"{op} {m} {size} {int(g)}\n")
        print(f"{op:6} {size:9d}{cells}")
EOF
# The table as pictures: one rocectl perf -a style document per op and MTU, then plot.py.
if [ -n "${ROCE_BENCH_PLOT:-}" ] && [ -s "$tmp/points" ]; then
	mkdir -p "$ROCE_BENCH_PLOT"
	/usr/bin/python3 - "$tmp/points" "$ROCE_BENCH_PLOT" <<'EOF'
import json, os, sys
rows = [l.split() for l in open(sys.argv[1])]
for op, mtu in sorted({(r[0], r[1]) for r in rows}):
    res = [{'bytes': int(size), 'bw_avg': int(bps) / 1e9, 'unit': 'Gb/sec'}
           for o, m, size, bps in rows if (o, m) == (op, mtu)]
    with open(os.path.join(sys.argv[2], f'pair-bw-{op}-mtu{mtu}.json'), 'w') as f:
        json.dump({'test': f'{op}_bw', 'results': res}, f)
EOF
	/usr/bin/python3 scripts/plot.py sizes "$ROCE_BENCH_PLOT"/pair-bw-*-mtu*.json \
		-o "$ROCE_BENCH_PLOT/pair-bw.png" && echo "pair-bw: plot in $ROCE_BENCH_PLOT/pair-bw.png"
fi
