#!/bin/bash
# fetch-kernel.sh - Debian's stock kernel (the one with cuse.ko) for the QEMU
# harnesses, without installing it on the host.
#
# Usage: fetch-kernel.sh CACHE_DIR [SUITE]
# Prints the kernel root on stdout: KROOT/boot/vmlinuz-KVER and a partial
# KROOT/lib/modules/KVER with depmod output, so `modprobe -d KROOT -S KVER`
# resolves module dependencies. Everything else goes to stderr.
#
# `apt-get download` of the package linux-image-amd64 depends on, then only the
# files the guests need are extracted. Installing linux-image-amd64 instead
# would pull initramfs-tools/udev/systemd onto the host and run mkinitramfs
# for half a minute. A kernel already in the cache is reused; with no apt
# lists (offline) the newest cached kernel is used.
#
# With SUITE (e.g. bookworm-backports), the kernel is that suite's, from the
# Debian mirror the host's apt sources name, through an apt configuration of
# its own in CACHE_DIR/SUITE/apt (sources list, package lists, status, cache):
# the host's apt state is not touched, and the cache is CACHE_DIR/SUITE.
# Newer kernels compress their modules (.ko.xz); they are kept as they are.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin

[ $# -eq 1 ] || [ $# -eq 2 ] || { echo "usage: $0 CACHE_DIR [SUITE]" >&2; exit 2; }
suite=${2:-}
cache=$1${suite:+/$suite}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

# apt-get or apt-cache, on the host's configuration or the suite's own.
apt_run() {
        local a=$cache/apt
        if [ -z "$suite" ]; then
                "$@"
                return
        fi
        "$@" -o Dir::Etc::SourceList="$a/sources.list" -o Dir::Etc::SourceParts="$a/sources.list.d" \
                -o Dir::Etc::Preferences="$a/preferences" -o Dir::Etc::PreferencesParts="$a/preferences.d" \
                -o Dir::State="$a/state" -o Dir::State::Lists="$a/lists" \
                -o Dir::State::status="$a/status" -o Dir::Cache="$a/cache"
}

# The suite's own apt configuration; its package lists once a day.
suite_apt_update() {
        local a=$cache/apt mirror
        # shellcheck source=tests/vm/lib.sh
        . "$(dirname "$0")/lib.sh"
        mirror=$(vm_debian_mirror)
        mkdir -p "$a"/{sources.list.d,preferences.d,state,lists/partial,cache/archives/partial}
        : > "$a/status"
        : > "$a/preferences"
        echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" > "$a/sources.list"
        if [ -z "$(find "$a/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null)" ]; then
                apt_run apt-get update -q "${sandbox[@]}" >&2 || true
        fi
}

newest_cached() {
        local d
        for d in "$cache"/kernel-*/.complete; do
                [ -e "$d" ] && dirname "$d"
        done | sort -V | tail -n 1
}

kernel_package() {
        apt_run apt-cache depends linux-image-amd64 2>/dev/null |
                awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }' || true
}

# As root, apt would hand the download to the _apt user, which cannot write
# into a root-owned build directory; it then warns and downloads as root anyway.
sandbox=()
[ "$(id -u)" = 0 ] && sandbox=(-o APT::Sandbox::User=root)

[ -z "$suite" ] || suite_apt_update
pkg=$(kernel_package)
if [ -z "$suite" ] && [ -z "$pkg" ] && [ "$(id -u)" = 0 ] && [ -z "$(newest_cached)" ]; then
        # Container images often ship without package lists.
        apt-get update -q >&2 || true
        pkg=$(kernel_package)
fi
if [ -z "$pkg" ]; then
        kroot=$(newest_cached)
        [ -n "$kroot" ] || { echo "fetch-kernel: apt knows no linux-image-amd64 and nothing is cached in $cache" >&2; exit 1; }
        echo "fetch-kernel: apt knows no linux-image-amd64, using cached $kroot" >&2
        echo "$kroot"
        exit 0
fi

kver=${pkg#linux-image-}
kroot=$cache/kernel-$kver
if [ -e "$kroot/.complete" ]; then
        echo "$kroot"
        exit 0
fi

rm -rf "$kroot" "$cache/debs"
mkdir -p "$kroot" "$cache/debs"
( cd "$cache/debs" && apt_run apt-get download -q "${sandbox[@]}" "$pkg" ) >&2

# fuse/cuse: the CUSE devices. virtio + hw_random: virtio-rng as /dev/hwrng.
# virtio_blk + ext4 and their helpers: guests that boot a disk image.
m="./lib/modules/$kver"
dpkg-deb --fsys-tarfile "$cache"/debs/"$pkg"_*.deb | tar -x -C "$kroot" --wildcards \
        "./boot/vmlinuz-$kver" \
        "$m/kernel/fs/fuse/*" \
        "$m/kernel/drivers/virtio/*" \
        "$m/kernel/drivers/char/hw_random/*" \
        "$m/kernel/drivers/block/virtio_blk.ko*" \
        "$m/kernel/fs/ext4/*" "$m/kernel/fs/jbd2/*" "$m/kernel/fs/mbcache.ko*" \
        "$m/kernel/lib/crc16.ko*" "$m/kernel/crypto/crc32c_generic.ko*" \
        "$m/kernel/arch/x86/crypto/crc32c-intel.ko*" \
        "$m/modules.order" "$m/modules.builtin" "$m/modules.builtin.modinfo"
# modules.order names modules this partial tree lacks: depmod warns, harmlessly.
depmod -b "$kroot" "$kver" 2>/dev/null
rm -rf "$cache/debs"
touch "$kroot/.complete"
echo "fetch-kernel: kernel $kver in $kroot ($(du -sh "$kroot" | cut -f1))" >&2
echo "$kroot"
