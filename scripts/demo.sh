#!/usr/bin/env bash
# The rocedp demo. For now: install what is missing, build, and decode every shared capture
# with the dataplane's own classifier (rocedump --table), showing the per-opcode table and
# which classifier implementation ran. Works from any directory; the captures are looked for
# in ../shared/captures beside the checkout.
#
# Environment: ROCE_BUILD_DIR (default build), ROCE_CAPTURES (default ../shared/captures).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${ROCE_BUILD_DIR:-build}
captures=${ROCE_CAPTURES:-$top/../shared/captures}

scripts/install-deps.sh

if [ ! -f "$build/build.ninja" ]; then
	echo "demo: configuring $build"
	meson setup "$build" >/dev/null
fi
echo "demo: building $build"
ninja -C "$build" >/dev/null || { ninja -C "$build" | tail -40; exit 1; }

if [ ! -d "$captures" ]; then
	echo "demo: no captures at $captures (set ROCE_CAPTURES)" >&2
	exit 1
fi
mapfile -t pcaps < <(find "$captures" -name '*.pcap' -type f | sort)
if [ ${#pcaps[@]} -eq 0 ]; then
	echo "demo: no .pcap file under $captures" >&2
	exit 1
fi

rocedump=$build/app/rocedump
echo "demo: classifier implementations this CPU can run: $("$rocedump" --list-impls | xargs)"
echo "demo: decoding ${#pcaps[@]} captures from $(cd "$captures" && pwd)"
echo
"$rocedump" --table "${pcaps[@]}"
