#!/usr/bin/env bash
# Install everything rocedp needs to build, test and demo, from Debian's packages.
# Idempotent: does nothing when every package is already present.
set -euo pipefail

PKGS=(
	build-essential pkg-config meson ninja-build clang libclang-rt-dev
	# dpdk brings dpdk-dumpcap, tshark its Lua (tools/wireshark): test_capture.py uses both.
	libdpdk-dev dpdk dpdk-dev libisal-dev libnuma-dev libjansson-dev libedit-dev libbsd-dev
	rdma-core libibverbs-dev ibverbs-utils
	python3 python3-scapy python3-matplotlib tshark tcpdump iproute2 iputils-ping ethtool valgrind
	# The interop suite: qemu runs the Soft-RoCE VM that ../shared/rxe-vm/build-image.sh
	# assembles with debootstrap, kmod and cpio; socat talks to the VM's agent.
	qemu-system-x86 qemu-utils debootstrap kmod cpio socat procps
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages (${missing[*]}); run as root" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer once, non-interactively.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
