#!/bin/sh
# deps.sh - install what building and testing truerandom needs, from Debian's
# own repositories (bookworm). Safe to re-run; installs only what is missing.
#   scripts/deps.sh            build and unit/protocol test dependencies
#   scripts/deps.sh --vm       also what the QEMU suites need
#   scripts/deps.sh --all      also the fuzz, sanitizer and packaging tools
set -eu

# libtss2-dev: the tpm source (TSS2 SAPI + TCTI loader); swtpm and its TCTI:
# a software TPM 2.0 for the tpm source's unit tests and the vm suite's guest.
pkgs="meson ninja-build pkg-config gcc libc6-dev libsodium-dev libfuse3-dev
libsystemd-dev libinih-dev libjson-c-dev libcmocka-dev libdivsufsort-dev libarchive-dev python3 python3-prometheus-client
libssl-dev openssl libtss2-dev swtpm libtss2-tcti-swtpm0"
case "${1:-}" in
--vm) pkgs="$pkgs qemu-system-x86 busybox-static kmod cpio rng-tools5 debootstrap e2fsprogs bc" ;;
--all) pkgs="$pkgs qemu-system-x86 busybox-static kmod cpio rng-tools5 debootstrap e2fsprogs bc
clang libclang-rt-14-dev valgrind scdoc debhelper dpkg-dev fakeroot systemd udev stress-ng" ;;
esac

missing=""
for p in $pkgs; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
        echo "deps.sh: missing packages:$missing (run as root to install them)" >&2
        exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Some names (systemd-dev) exist only in newer releases: install what exists.
avail=""
for p in $missing; do
        apt-cache show "$p" >/dev/null 2>&1 && avail="$avail $p"
done
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $avail </dev/null
