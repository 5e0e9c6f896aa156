#!/bin/sh
# Run a libFuzzer target for ROCE_FUZZ_RUNS executions (default 200000) on a temporary copy of
# its seed corpus, so that what it finds does not land in the source tree. Crash reproducers go
# to fuzz-artifacts/ under the current (build) directory. A dictionary next to this script,
# <target>.dict, is passed with -dict=.
#
# Usage: run_fuzz.sh TARGET SEED_CORPUS_DIR MAX_LEN
# Environment: ROCE_FUZZ_RUNS, ROCE_FUZZ_SECONDS (a bound on the run's time, default 60: the
#              slow targets, fuzz_ctl's socket round trips at ~600 executions/s, stop there;
#              0: none), ROCE_FUZZ_SEED (default 0: libFuzzer picks one and prints it).
#              bench/fuzz-long.sh does the long runs.
set -eu

target=$1
corpus=$2
max_len=$3
name=$(basename "$target")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/roce-$name.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
# A target may have no seeds yet: it then starts from an empty corpus.
if [ -d "$corpus" ]; then
	cp -R "$corpus"/. "$tmp"/
fi
mkdir -p fuzz-artifacts
dict=$(dirname "$0")/$name.dict
if [ -f "$dict" ]; then
	set -- -dict="$dict"
else
	set --
fi

"$target" -runs="${ROCE_FUZZ_RUNS:-200000}" -seed="${ROCE_FUZZ_SEED:-0}" \
	-max_len="$max_len" -max_total_time="${ROCE_FUZZ_SECONDS:-60}" -timeout=20 \
	-print_final_stats=1 -error_exitcode=1 \
	-artifact_prefix="$PWD/fuzz-artifacts/$name-" "$@" "$tmp"
