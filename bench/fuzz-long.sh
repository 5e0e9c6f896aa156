#!/usr/bin/env bash
# bench/fuzz-long.sh: long libFuzzer runs. Every target of the fuzz suite (the `fuzz` tests of
# test/fuzz/meson.build, as `meson introspect --tests` lists them) runs for EXECS executions,
# one after the other, on a fresh copy of its seed corpus, with the options scripts/test.sh's
# bounded runs use (test/fuzz/run_fuzz.sh: max_len from meson.build, its dictionary if any,
# -timeout=20, or ROCE_FUZZ_TIMEOUT). Prints one row per target: executions, exec/s, wall seconds, the final corpus
# as libFuzzer counts it (units/size of its DONE line) and on disk (units and bytes: the disk
# keeps the seeds and inputs libFuzzer has since replaced by smaller ones), and the crashes; a
# crash stops that target, its input is kept and the script exits 1 once every target has run.
#
# usage: bench/fuzz-long.sh [EXECS]          (default 10000000)
# Run it under `nice -n 19` on a shared machine; it never runs two targets at once.
# Environment: ROCE_FUZZ_BUILD_DIR (default build-fuzz: configured here as clang
#              ASan+UBSan -Dfuzz=true when it does not exist, else reused),
#              ROCE_FUZZ_TARGETS (default: all, e.g. "fuzz_config fuzz_ctl"),
#              ROCE_FUZZ_MAX_TIME (seconds per target, default 0 = no limit: a target stopped
#              by it is marked short, and the script exits 2),
#              ROCE_FUZZ_SEED (default 0: libFuzzer picks one, shown in the log),
#              ROCE_FUZZ_TIMEOUT (seconds one input may take, default 20 as the bounded runs;
#              libFuzzer counts wall time, so on a loaded machine a nice 19 run needs more:
#              an input starved of the CPU for 20 s is reported as a timeout),
#              ROCE_FUZZ_FLAGS (more libFuzzer flags, split on blanks, e.g. -entropic=0: the
#              entropic schedule's bookkeeping is a fifth of fuzz_ctl's time late in a run).
# Output: $ROCE_FUZZ_BUILD_DIR/fuzz-long/ (emptied first): <target>.log, corpus/<target>/,
#         artifacts/ (crash, leak, timeout and oom inputs).
set -euo pipefail

execs=${1:-10000000}
case $execs in ''|*[!0-9]*) echo "usage: bench/fuzz-long.sh [EXECS]" >&2; exit 64;; esac
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
build=${ROCE_FUZZ_BUILD_DIR:-build-fuzz}
max_time=${ROCE_FUZZ_MAX_TIME:-0}
timeout=${ROCE_FUZZ_TIMEOUT:-20}
case $timeout in ''|*[!0-9]*) echo "fuzz-long: ROCE_FUZZ_TIMEOUT must be seconds" >&2; exit 64;; esac

if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" -Db_sanitize=address,undefined -Db_lundef=false \
		-Dfuzz=true -Dbuildtype=debugoptimized >/dev/null
fi
# Regenerate first if a meson.build changed, so that a new target is listed.
ninja -C "$build" build.ninja >/dev/null

# name <TAB> executable <TAB> seed corpus <TAB> max_len, from the fuzz suite's test commands.
mapfile -t rows < <(meson introspect "$build" --tests | /usr/bin/python3 -c '
import json, sys
want = sys.argv[1].split()
for t in json.load(sys.stdin):
    if not any(s.split(":")[-1] == "fuzz" for s in t["suite"]):
        continue
    if want and t["name"] not in want:
        continue
    run, exe, corpus, max_len = t["cmd"]
    print("\t".join([t["name"], exe, corpus, max_len]))
' "${ROCE_FUZZ_TARGETS:-}")
if [ "${#rows[@]}" = 0 ]; then
	echo "fuzz-long: no fuzz targets in $build (is it a -Dfuzz=true build?)" >&2
	exit 1
fi
exes=()
for r in "${rows[@]}"; do
	IFS=$'\t' read -r _ exe _ _ <<< "$r"
	exes+=("$exe")
done
# Only the fuzz executables and what they link: the rest of the tree may be mid-edit.
ninja -C "$build" "${exes[@]}" >/dev/null ||
	{ ninja -C "$build" "${exes[@]}" | tail -n 20; exit 1; }

out=$build/fuzz-long
rm -rf "$out"
mkdir -p "$out/corpus" "$out/artifacts"
out=$(cd "$out" && pwd)
# As scripts/test.sh: UB is fatal, leaks are not looked for (DPDK keeps its allocations).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

final_stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -n 1; }

echo "fuzz-long: $execs executions per target, ${#rows[@]} targets, $build," \
	"$(git rev-parse --short HEAD 2>/dev/null || echo no git), $(date -u +%FT%TZ)${ROCE_FUZZ_FLAGS:+, flags $ROCE_FUZZ_FLAGS}"
printf '%-16s %11s %8s %7s %11s %10s %10s %7s\n' target executions exec/s seconds corpus \
	'disk units' 'disk bytes' crashes
status=0
for r in "${rows[@]}"; do
	IFS=$'\t' read -r name exe seeds max_len <<< "$r"
	corpus=$out/corpus/$name
	log=$out/$name.log
	mkdir -p "$corpus"
	[ -d "$seeds" ] && cp -R "$seeds"/. "$corpus"/
	args=(-runs="$execs" -seed="${ROCE_FUZZ_SEED:-0}" -max_len="$max_len" -timeout="$timeout"
		-print_final_stats=1 -error_exitcode=1 -artifact_prefix="$out/artifacts/$name-")
	[ -f "$top/test/fuzz/$name.dict" ] && args+=(-dict="$top/test/fuzz/$name.dict")
	[ "$max_time" != 0 ] && args+=(-max_total_time="$max_time")
	# shellcheck disable=SC2206 # word splitting is the point
	args+=(${ROCE_FUZZ_FLAGS:-})
	start=$(date +%s.%N)
	rc=0
	# From the build dir, as meson test runs it (a target may open files relative to it).
	(cd "$build" && "./$exe" "${args[@]}" "$corpus") > "$log" 2>&1 || rc=$?
	secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
	ran=$(final_stat number_of_executed_units "$log")
	rate=$(final_stat average_exec_per_sec "$log")
	# libFuzzer divides by whole seconds: a run under one second says 0.
	if [ "${rate:-0}" = 0 ] && [ -n "$ran" ]; then
		rate=$(awk -v n="$ran" -v a="$start" -v b="$(date +%s.%N)" \
			'BEGIN { printf "%.0f", n / (b - a) }')
	fi
	corp=$(sed -n 's/.*[[:space:]]DONE .* corp: \([^ ]*\) .*/\1/p' "$log" | tail -n 1)
	units=$(find "$corpus" -type f | wc -l)
	bytes=$(find "$corpus" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	crashes=$(find "$out/artifacts" -name "$name-*" \( -name "$name-crash-*" -o \
		-name "$name-leak-*" -o -name "$name-timeout-*" -o -name "$name-oom-*" \) | wc -l)
	note=
	if [ "$crashes" != 0 ] || [ "$rc" != 0 ]; then
		note="  FAILED (exit $rc, see $log)"
		status=1
	elif [ "${ran:-0}" -lt "$execs" ]; then
		note="  short: stopped by ROCE_FUZZ_MAX_TIME=$max_time"
		[ "$status" = 0 ] && status=2
	fi
	printf '%-16s %11s %8s %7s %11s %10s %10s %7s%s\n' "$name" "${ran:-?}" "${rate:-?}" \
		"$secs" "${corp:-?}" "$units" "$bytes" "$crashes" "$note"
done
echo "fuzz-long: logs and final corpora in $out"
if [ "$status" = 1 ]; then
	echo "fuzz-long: crash inputs in $out/artifacts:" >&2
	ls -l "$out/artifacts" >&2
fi
exit "$status"
