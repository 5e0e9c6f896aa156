#!/usr/bin/env bash
# Install what is missing, build, and run every test: the unit, capture and integration suites
# in the normal build, the unit suite and two daemon pair tests again under ASan+UBSan, and a
# bounded run of each libFuzzer target. Ends with "N passed, N failed"; exits non-zero on any failure.
# A skipped test counts as failed unless it says "[machine]" (not root, no such package): every
# other reason is something scripts/install-deps.sh or the checkout should have provided.
#
# Environment: ROCE_FUZZ_RUNS (iterations per fuzz target, default 200000),
#              ROCE_FUZZ_SECONDS (a bound on each fuzz run's time, default 20; the long runs
#              are bench/fuzz-long.sh),
#              ROCE_BUILD_DIR (default build), ROCE_SAN_BUILD_DIR (default build-san).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${ROCE_BUILD_DIR:-build}
san=${ROCE_SAN_BUILD_DIR:-build-san}
export ROCE_FUZZ_RUNS=${ROCE_FUZZ_RUNS:-200000}
export ROCE_FUZZ_SECONDS=${ROCE_FUZZ_SECONDS:-20}

scripts/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }

fail_setup() {
	echo "test.sh: $1" >&2
	echo "0 passed, 1 failed"
	exit 1
}

# Configure a build dir once; reconfigure when it exists.
setup() {
	local dir=$1; shift
	if [ -f "$dir/build.ninja" ]; then
		meson setup --reconfigure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi
}

setup "$build" || fail_setup "meson setup $build failed"
ninja -C "$build" >/dev/null || { ninja -C "$build" | tail -40; fail_setup "build failed"; }
CC=clang setup "$san" -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true \
	-Dbuildtype=debugoptimized || fail_setup "meson setup $san failed"
ninja -C "$san" >/dev/null || { ninja -C "$san" | tail -40; fail_setup "sanitizer build failed"; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

meson test -C "$build" --no-rebuild --print-errorlogs
# ROCE_TEST_QUICK: the unit tests that move the most bytes (test_pacer) cut their packet
# counts under the sanitizers; the normal build above ran them in full.
ROCE_TEST_QUICK=1 meson test -C "$san" --no-rebuild --print-errorlogs --suite unit --suite fuzz
# The daemons themselves under the sanitizers: two pairs over memif taking malformed control
# input, a killed peer, MRs deregistered under traffic and clients that vanish, rocectl end to
# end against a real roced, QPs sending on two ports, UD datagrams both ways, packet capture
# (callbacks, writer thread), the connection manager over QP1 (REQ/REP/RTU, DREQ/DREP), its
# SIDR through QP1, perftest -c UD and -R, the pingpong jobs, rping and zero-copy transmit.
meson test -C "$san" --no-rebuild --print-errorlogs --logbase testlog-daemons memif_pair lifetime hostile \
	rocectl multiport ud capture cm gsi_pair perf_ud pingpong perf_rcm rping tx_zc

# Count every test of all three runs from meson's logs.
/usr/bin/python3 - "$build/meson-logs/testlog.json" "$san/meson-logs/testlog.json" \
	"$san/meson-logs/testlog-daemons.json" <<'PY'
import json, sys
passed = failed = skipped = 0
for path in sys.argv[1:]:
    tag = path.split('/')[0]
    for line in open(path):
        t = json.loads(line)
        r = t['result']
        if r in ('OK', 'EXPECTEDFAIL'):
            passed += 1
        elif r == 'SKIP':
            why = (t.get('stdout') or '').strip().splitlines()
            why = why[-1] if why else 'no reason given'
            # Only what the machine cannot do may skip (the test says so with "[machine]");
            # anything else is a missing install step or a broken checkout.
            if '[machine]' in why:
                skipped += 1
                print(f"SKIP [{tag}] {t['name']}: {why}")
            else:
                failed += 1
                print(f"FAILED [{tag}] {t['name']}: skipped for a reason the install step "
                      f"should remove: {why}")
        else:
            failed += 1
            print(f"FAILED [{tag}] {t['name']}: {r}")
if skipped:
    print(f"{skipped} skipped (see the SKIP lines above)")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
