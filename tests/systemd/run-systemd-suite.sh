#!/bin/bash
# run-systemd-suite.sh - the `systemd` suite: builds the .deb, installs it in
# a debootstrapped guest of this machine's Debian release and boots that
# under QEMU on Debian's stock kernel (which has cuse.ko), with systemd as
# PID 1 and udev. guest-checks.sh installs the package with apt, runs the
# checks and reports over the serial console:
#     CHECK <name>: PASS|FAIL <detail>
#
# Usage: run-systemd-suite.sh SOURCEDIR BUILDDIR
# Exit: 0 when every check passed; 1 when one failed, is missing, or the
# guest timed out (the guest's console log follows); 77 (meson's skip) when
# not root (debootstrap and the package build need it) or a tool is missing
# and cannot be installed.
# Env: TRUERANDOM_SYSTEMD_CACHE   the cached root file systems (default
#                                 /var/cache/truerandom-test when root)
#      TRUERANDOM_VM_CACHE        the kernel (default BUILDDIR/vm-cache,
#                                 shared with the vm suite)
#      TRUERANDOM_SYSTEMD_TIMEOUT guest time limit in seconds (default 900)
#      TRUERANDOM_VM_ACCEL, VM_MEM: see tests/vm/lib.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../vm/lib.sh"
vm_report_setup_failure systemd

[ $# -eq 2 ] || { echo "usage: $0 SOURCEDIR BUILDDIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
start=${EPOCHREALTIME//[.,]/}
work=$build/systemd-suite
log=$work/console.log
checks="0-gate 1-start 2-reload 3-stop 4-restart 5-watchdog 6-dropin 7-analyze 8-journal 10-nosource 11-nonroot 12-example 14-seeder
        15-examples 9-purge 13-upgrade"
# Bump when the recipe below changes what a cached root file system holds.
recipe=1

[ "$(id -u)" = 0 ] || vm_skip "debootstrap, the package build and the guest image need root"

# stopwatch NAME: seconds since the previous call, for the timing line.
lap=$start
timings=
stopwatch() {
        local now=${EPOCHREALTIME//[.,]/}
        timings="$timings, $1 $(( (now - lap) / 1000000 )) s"
        lap=$now
}

vm_require qemu-system-x86_64:qemu-system-x86 busybox:busybox-static modprobe:kmod depmod:kmod \
        cpio:cpio dpkg-deb:dpkg apt-get:apt debootstrap:debootstrap mkfs.ext4:e2fsprogs \
        dpkg-buildpackage:dpkg-dev dh:debhelper fakeroot:fakeroot git:git

rm -rf "$work"
mkdir -p "$work"

# ------------------------------------------------------------------
# The package, built from a copy of the source tree: dpkg-buildpackage
# writes into debian/ and next to the tree, and others share this one.

# Installs what dpkg-checkbuilddeps finds missing: of each alternative the
# first apt knows (systemd-dev exists only after bookworm).
install_build_deps() {
        local out unmet dep alt pkgs=()

        # dpkg-checkbuilddeps exits 1 when something is unmet, which is the
        # case to handle, not a failure: under pipefail a pipeline ending
        # in it would end the script before anything is installed or said.
        out=$(cd "$1" && dpkg-checkbuilddeps 2>&1) || true
        unmet=$(printf '%s\n' "$out" | sed -n 's/.*Unmet build dependencies: //p')
        if [ -z "$unmet" ] && [ -n "$out" ]; then
                echo "$out" >&2
                echo "systemd: dpkg-checkbuilddeps failed (above)" >&2
                exit 1
        fi
        [ -n "$unmet" ] || return 0
        vm_log "installing build dependencies: $unmet"
        # "a (>= 1) b | c [amd64]" -> words "a" and "b|c".
        unmet=$(echo "$unmet" | sed -e 's/([^)]*)//g' -e 's/\[[^]]*\]//g' -e 's/<[^>]*>//g' -e 's/ *| */|/g')
        for dep in $unmet; do
                for alt in ${dep//|/ }; do
                        if apt-cache show "${alt%%:*}" >/dev/null 2>&1; then
                                pkgs+=("${alt%%:*}")
                                break
                        fi
                done
        done
        [ ${#pkgs[@]} -gt 0 ] || vm_skip "apt knows none of the build dependencies $unmet"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}" >&2 ||
                vm_skip "apt-get could not install the build dependencies ${pkgs[*]}"
}

version=$(cd "$src" && dpkg-parsechangelog -S Version)
pkgsrc=$work/deb/truerandom-$version
mkdir -p "$pkgsrc"
tar -C "$src" --exclude-vcs --exclude='./build*' --exclude='./obj-*' \
        --exclude='./debian/truerandom' --exclude='./debian/.debhelper' --exclude='./debian/files' \
        --exclude='./debian/*.substvars' --exclude='./debian/debhelper-build-stamp' \
        -cf - . | tar -C "$pkgsrc" -xf -
install_build_deps "$pkgsrc"
if ! (cd "$pkgsrc" && dpkg-buildpackage -b -us -uc) > "$work/deb/build.log" 2>&1; then
        tail -n 40 "$work/deb/build.log"
        echo "systemd: dpkg-buildpackage failed (log: $work/deb/build.log)"
        exit 1
fi
deb=$(ls "$work"/deb/truerandom_"${version}"_*.deb)
rm -rf "$pkgsrc"
echo "systemd: built $(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
stopwatch deb

# The previous release's package, for the upgrade check (13-upgrade): built
# from the last commit that landed before this release's work (move it on
# at each release), without its build-time tests. It needs the tree's git
# history (a clone, not an export): without it the check fails and says so.
upgrade_from=1c1f6c6a886e046c1babf1d34317a36eb9ad71fa
old_deb=
if git -C "$src" cat-file -e "$upgrade_from^{commit}" 2>/dev/null; then
        oldsrc=$work/deb-old/truerandom-old
        mkdir -p "$oldsrc"
        git -C "$src" archive "$upgrade_from" | tar -C "$oldsrc" -xf -
        install_build_deps "$oldsrc"
        if (cd "$oldsrc" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -b -us -uc) > "$work/deb-old/build.log" 2>&1; then
                old_deb=$(ls "$work"/deb-old/truerandom_*.deb)
                echo "systemd: built the previous release $(basename "$old_deb") from ${upgrade_from:0:12}"
        else
                tail -n 20 "$work/deb-old/build.log"
                echo "systemd: building the previous release failed (log: $work/deb-old/build.log)"
        fi
        rm -rf "$oldsrc"
else
        echo "systemd: commit $upgrade_from is not in $src's history: no previous release to upgrade from"
fi
stopwatch deb-old

# ------------------------------------------------------------------
# The root file system: debootstrap --variant=minbase of this machine's
# release, with systemd, udev and what the package depends on, so that apt
# installs it in the guest without a network. Cached, keyed by everything
# that decides its contents; rebuilt when missing.

kroot=$(vm_kernel "${TRUERANDOM_VM_CACHE:-$build/vm-cache}")
kver=$(vm_kernel_version "$kroot")

release=$(vm_debian_release)
mirror=$(vm_debian_mirror)

# The first alternative of each dependency, without versions.
deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/ //g' -e 's/:.*//' | grep -v '^$')
# shellcheck disable=SC2086 # one package per word
# python3-minimal: the Python reading example runs in the guest (check 15).
include=$(printf '%s\n' systemd systemd-sysv udev kmod python3-minimal $deps | sort -u | paste -sd, -)
key=$(printf '%s\n' "$recipe" "$release" "$mirror" "$include" | sha256sum | cut -c1-16)

if [ -n "${TRUERANDOM_SYSTEMD_CACHE:-}" ]; then
        cache=$TRUERANDOM_SYSTEMD_CACHE
elif mkdir -p /var/cache/truerandom-test 2>/dev/null && [ -w /var/cache/truerandom-test ]; then
        cache=/var/cache/truerandom-test
else
        cache=$build/systemd-cache
fi
mkdir -p "$cache"
rootfs=$cache/rootfs-$key

# One builder at a time per cache; a reader waits for it.
exec 9> "$cache/lock"
flock 9
if [ ! -e "$rootfs/.complete" ]; then
        echo "systemd: debootstrap $release from $mirror into $rootfs"
        rm -rf "$rootfs" "$rootfs.tmp"
        if ! debootstrap --variant=minbase --include="$include" "$release" "$rootfs.tmp" "$mirror" \
                        > "$work/debootstrap.log" 2>&1; then
                tail -n 30 "$work/debootstrap.log"
                echo "systemd: debootstrap failed (log: $work/debootstrap.log)"
                exit 1
        fi
        rm -rf "$rootfs.tmp"/var/cache/apt/archives/*.deb "$rootfs.tmp"/var/lib/apt/lists/* \
                "$rootfs.tmp"/usr/share/doc/* "$rootfs.tmp"/usr/share/man/* "$rootfs.tmp"/usr/share/locale/*
        touch "$rootfs.tmp/.complete"
        mv "$rootfs.tmp" "$rootfs"
        # Older keys are dead weight now.
        for old in "$cache"/rootfs-*; do
                [ "$old" = "$rootfs" ] || rm -rf "$old"
        done
fi
stopwatch rootfs

# ------------------------------------------------------------------
# The guest image: a copy of the cached root plus the kernel's modules, the
# package, the checks and the unit that runs them; ext4 via mkfs.ext4 -d.

stage=$work/stage
cp -a "$rootfs" "$stage"
flock -u 9
rm -f "$stage/.complete"
mkdir -p "$stage/lib/modules"
cp -a "$kroot/lib/modules/$kver" "$stage/lib/modules/"
install -D -m 644 "$deb" "$stage/var/cache/truerandom-test/$(basename "$deb")"
[ -z "$old_deb" ] || install -D -m 644 "$old_deb" "$stage/var/cache/truerandom-test/old/$(basename "$old_deb")"
# The man page's example (check 12) is run as its source has it.
install -D -m 644 "$src/man/truerandomd.conf.5.scd" "$stage/var/cache/truerandom-test/truerandomd.conf.5.scd"
install -D -m 755 "$here/guest-checks.sh" "$stage/usr/local/sbin/truerandom-checks"
install -D -m 755 "$here/../vm/undropped-threads" "$stage/usr/local/bin/undropped-threads"
install -D -m 644 "$here/truerandom-checks.service" "$stage/etc/systemd/system/truerandom-checks.service"
echo trguest > "$stage/etc/hostname"
echo '/dev/vda / ext4 rw,noatime 0 1' > "$stage/etc/fstab"
mkfs.ext4 -q -F -L trroot -d "$stage" "$work/root.ext4" 2G
rm -rf "$stage"

# A busybox initramfs that only mounts the disk and hands over to systemd.
vm_initramfs_new "$work/initramfs" "$kroot" virtio_pci virtio_blk ext4
install -m 755 "$here/boot-init.sh" "$work/initramfs/init"
vm_initramfs_pack "$work/initramfs" "$work/initramfs.cpio"
rm -rf "$work/initramfs"
stopwatch image

echo "systemd: kernel $kver, $(vm_accel), root $(du -h "$work/root.ext4" | cut -f1), console in $log"
rc=0
VM_ECHO='^(CHECK |SUMMARY|INFO )' vm_boot "$kroot/boot/vmlinuz-$kver" "$work/initramfs.cpio" "$log" \
        "${TRUERANDOM_SYSTEMD_TIMEOUT:-900}" \
        "systemd.unit=truerandom-checks.service systemd.show_status=false" \
        -drive file="$work/root.ext4",format=raw,if=virtio -device virtio-rng-pci -device vmgenid || rc=$?
stopwatch guest

# ------------------------------------------------------------------
# The verdict.

failed=0
[ $rc = 0 ] || { echo "systemd: QEMU exit status $rc$([ $rc = 124 ] && echo ' (timeout)')"; failed=1; }
echo "systemd: results"
for c in $checks; do
        line=$(grep -m 1 "] CHECK $c: " "$log" | sed 's/^\[[^]]*\] //' || true)
        if [ -z "$line" ]; then
                echo "  CHECK $c: MISSING (no result on the console)"
                failed=1
                continue
        fi
        echo "  $line"
        case "$line" in *": PASS"*) ;; *) failed=1 ;; esac
done
grep -q '] SUMMARY: ' "$log" || { echo "systemd: no SUMMARY line"; failed=1; }
exposure=$(sed -n 's/.*] INFO exposure \([0-9.]*\).*/\1/p' "$log" | head -n 1)
echo "systemd: exposure level of truerandomd.service: ${exposure:-unknown}"

now=${EPOCHREALTIME//[.,]/}
echo "systemd: wall time $(( (now - start) / 1000000 )) s (${timings#, })"
if [ $failed != 0 ]; then
        echo "systemd: FAILED; guest console:"
        cat "$log"
        exit 1
fi
rm -f "$work/root.ext4"
