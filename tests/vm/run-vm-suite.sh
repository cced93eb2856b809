#!/bin/bash
# run-vm-suite.sh - the `vm` suite: the built truerandomd on Debian's stock
# kernel (which has cuse.ko) in a QEMU guest booted from a busybox
# initramfs; guest-init.sh runs the checks and reports over the serial console.
#
# Usage: run-vm-suite.sh BUILDDIR
# Exit: 0 when every check passed; 1 when one failed, is missing, or the
# guest timed out (the guest's console log follows); 77 (meson's skip) when
# a needed tool is missing and cannot be installed (not root, no apt-get).
# Env: TRUERANDOM_VM_CACHE   kernel cache (default BUILDDIR/vm-cache)
#      TRUERANDOM_VM_TIMEOUT guest time limit in seconds (default 840: its 29
#                            checks once needed more than 600 on a loaded
#                            machine; meson gives 900)
#      TRUERANDOM_VM_CHECKS  e.g. "3,4": run only those checks (and expect
#                            only those)
#      TRUERANDOM_VM_SKIP    e.g. "31": run every check but those (meson's
#                            vm test leaves the evidence bundle, a minute or
#                            two under TCG, to vm-evidence's own guest)
#      TRUERANDOM_VM_ACCEL, VM_MEM: see lib.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
vm_report_setup_failure vm

[ $# -eq 1 ] || { echo "usage: $0 BUILDDIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
start=${EPOCHREALTIME//[.,]/}

daemon=$build/daemon/truerandomd
ctl=$build/ctl/truerandomctl
client=$build/tests/vm/trclient
# A subset asked by name keeps its console log apart (vm-evidence beside vm).
work=$build/vm-suite${TRUERANDOM_VM_CHECKS:+-${TRUERANDOM_VM_CHECKS//,/-}}
log=$work/console.log
# Every check file's name, as its run_check line gives it: a check that
# never reports is missing, not passed.
checks=$(sed -n 's/^run_check \([^ ]*\) .*/\1/p' "$here"/checks/*.sh)

for b in "$daemon" "$ctl"; do
        [ -x "$b" ] || { echo "vm: $b is not built (meson compile -C $build)" >&2; exit 1; }
done

vm_require qemu-system-x86_64:qemu-system-x86 busybox:busybox-static modprobe:kmod depmod:kmod \
        cpio:cpio rngtest:rng-tools5 dpkg-deb:dpkg apt-get:apt
kroot=$(vm_kernel "${TRUERANDOM_VM_CACHE:-$build/vm-cache}") || exit $?
kver=$(vm_kernel_version "$kroot")

rm -rf "$work"
mkdir -p "$work"
if [ ! -x "$client" ]; then
        # Run by hand on a build configured without tests: build it here.
        vm_require cc:gcc
        cc -std=c17 -O2 -D_GNU_SOURCE -static -o "$work/trclient" "$here/trclient.c"
        client=$work/trclient
fi

root=$work/initramfs
vm_initramfs_new "$root" "$kroot" cuse virtio_pci virtio_rng
vm_initramfs_add "$root" "$daemon" /usr/sbin/truerandomd
vm_initramfs_add "$root" "$ctl" /usr/bin/truerandomctl
vm_initramfs_add "$root" "$client" /usr/bin/trclient
vm_initramfs_add "$root" "$(command -v rngtest)" /usr/bin/rngtest
vm_initramfs_add "$root" "$here/undropped-threads" /usr/bin/undropped-threads
# Check 24: the reading examples, and openssl with the provider as the
# package installs it (the module named in full in the example's file).
src=$(cd "$here/../.." && pwd)
[ -x "$build/docs/read-truerandom" ] && vm_initramfs_add "$root" "$build/docs/read-truerandom" /usr/bin/read-truerandom
# The build tree's RUNPATH does not hold in the guest: libtruerandom where
# the package puts it.
install -D -m 755 "$(readlink -f "$build/libtruerandom/libtruerandom.so.0")" \
        "$root/usr/lib/x86_64-linux-gnu/libtruerandom.so.0"
install -D -m 755 "$src/docs/examples/read-truerandom.sh" "$root/usr/share/truerandom/read-truerandom.sh"
if [ -f "$build/ossl/truerandom.so" ] && command -v openssl >/dev/null; then
        vm_initramfs_add "$root" "$(command -v openssl)" /usr/bin/openssl
        vm_initramfs_add "$root" "$build/tests/vm/randbytes" /usr/bin/randbytes
        vm_initramfs_add "$root" "$build/ossl/truerandom.so" /usr/lib/ossl-modules/truerandom.so
        sed 's|^# module = .*|module = /usr/lib/ossl-modules/truerandom.so|' \
                "$src/docs/examples/openssl-truerandom.cnf" > "$root/etc/openssl-truerandom.cnf"
fi
install -m 755 "$here/guest-init.sh" "$root/init"
mkdir -p "$root/checks"
install -m 644 "$here"/checks/*.sh "$root/checks/"
vm_initramfs_pack "$root" "$work/initramfs.cpio"

append=rdinit=/init
only=
if [ -n "${TRUERANDOM_VM_SKIP:-}" ] && [ -z "${TRUERANDOM_VM_CHECKS:-}" ]; then
        TRUERANDOM_VM_CHECKS=$(for c in $checks; do
                case ",$TRUERANDOM_VM_SKIP," in *",${c%%-*},"*) ;; *) printf '%s,' "${c%%-*}" ;; esac
        done)
        TRUERANDOM_VM_CHECKS=${TRUERANDOM_VM_CHECKS%,}
fi
if [ -n "${TRUERANDOM_VM_CHECKS:-}" ]; then
        append="$append trcheck=$TRUERANDOM_VM_CHECKS"
        only=",$TRUERANDOM_VM_CHECKS,"
fi
echo "vm: kernel $kver, $(vm_accel), initramfs $(du -h "$work/initramfs.cpio" | cut -f1), console in $log"

# One vCPU: with two, the guest marks its TSC unstable and falls back to
# hpet, which makes clock reads (and so the jitter source) 20x slower.
# A vmgenid device (the kernel's driver is built in), as a VM that can be
# cloned has: every check runs with the daemon reading the kernel log for
# VM forks, and check 25 floods that log.
rc=0
VM_SMP=1 VM_ECHO='^(CHECK |SUMMARY|INFO )' vm_boot "$kroot/boot/vmlinuz-$kver" "$work/initramfs.cpio" "$log" \
        "${TRUERANDOM_VM_TIMEOUT:-840}" "$append" -device virtio-rng-pci -device vmgenid || rc=$?

failed=0
[ $rc = 0 ] || { echo "vm: QEMU exit status $rc$([ $rc = 124 ] && echo ' (timeout)')"; failed=1; }
for c in $checks; do
        case "$c|$only" in *'|' | *",${c%%-*},"*) ;; *) continue ;; esac
        if ! grep -q "] CHECK $c: PASS" "$log"; then
                grep -q "] CHECK $c: FAIL" "$log" || echo "CHECK $c: MISSING (no result on the console)"
                failed=1
        fi
done
grep -q '] SUMMARY: ' "$log" || { echo "vm: no SUMMARY line"; failed=1; }

now=${EPOCHREALTIME//[.,]/}
wall=$(( (now - start) / 1000 ))
echo "vm: suite wall time $((wall / 1000)).$((wall % 1000 / 100)) s (guest $(sed -n 's/.*SUMMARY: .*guest uptime \([0-9.]*\) s/\1/p' "$log") s)"
if [ $failed != 0 ]; then
        echo "--- guest console log"
        cat "$log"
        exit 1
fi
