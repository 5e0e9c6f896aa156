#!/usr/bin/env bash
# bench/soak.sh: a long run of two roced over memif (one worker core each): 1024 QP pairs of
# verified mixed traffic (job op=mixed -> op=mixed_recv: WRITE, SEND, READ, WRITE_IMM,
# FETCH_ADD, CMP_SWAP, every completion and received message checked) for SECS seconds, under
# loss, reordering and duplication by drivers/impair on both daemons' rx and tx; half the QPs
# selective repeat, half go-back-N, and on each half A requests on one QP in two and B on the
# other. A sample line every ~10 s (messages, errors, heap, mbufs in use, retransmits,
# timeouts, impairment drops and duplicates); at the end exactly-once delivery, counter
# balances, flat heap and mbuf use, and a summary table. Exit status 1 when a check failed.
# The checks are listed in bench/soak.py, which drives the daemons through rocectl.
#
# usage: bench/soak.sh [SECS]     (default 600, 10 .. 7200)
# Environment: BUILD (build directory, default build), SOAK_QPS (1024), SOAK_SIZE (largest
#   message, 1024), SOAK_MTU (path MTU, 256), SOAK_DEPTH (messages in flight per QP, 4),
#   SOAK_RQ (receive queue, 32), SOAK_TIMEOUT (ACK timeout code, 16: 268 ms),
#   SOAK_SR_RTO_US (2000), SOAK_IMPAIR (per stage: "loss=0.2%,reorder=0.5%:4,dup=0.2%"),
#   SOAK_MODES ("sr gbn"), SOAK_PERIOD (10 s), SOAK_HEAP_BOUND (262144 B), SOAK_MBUF_BOUND
#   (256), SOAK_ALLOW (failure counters allowed to be non-zero, e.g. TX_RING_FULL; default
#   none), ROCE_BENCH_MEM (MiB per daemon, 1024).
bench=soak
secs=${1:-600}
case $secs in
''|*[!0-9]*) echo "soak: SECS must be a number of seconds" >&2; exit 2 ;;
esac
if [ "$secs" -lt 10 ] || [ "$secs" -gt 7200 ]; then
	echo "soak: SECS must be 10 .. 7200" >&2; exit 2
fi
ROCE_BUILD_DIR=${BUILD:-${ROCE_BUILD_DIR:-build}}
source "$(dirname "$0")/lib.sh"

dirty=$(git -C "$top" status --porcelain --untracked-files=no | awk '{print $2}' | tr '\n' ' ')
echo "soak: tree $(git -C "$top" describe --always --dirty 2>/dev/null), built in $build;" \
	"uncommitted changes: ${dirty:-none}"
start_pair
SOAK_BUILD=$build SOAK_TMP=$tmp SOAK_SECS=$secs SOAK_PREFIX_A=rbench-a-$$ \
	SOAK_PREFIX_B=rbench-b-$$ /usr/bin/python3 "$top/bench/soak.py" || rc=$?
rc=${rc:-0}
for i in 0 1; do
	d=$([ "$i" = 0 ] && echo a || echo b)
	if ! kill -0 "${pids[$i]}" 2>/dev/null; then
		echo "soak: roced $d died; the end of its log:"; tail -n 20 "$tmp/$d.log"; rc=1
	elif [ "$rc" != 0 ]; then
		echo "soak: the end of roced $d's log:"; tail -n 5 "$tmp/$d.log"
	fi
done
exit "$rc"
