#!/bin/bash
# run-tpm-vm.sh - the tpm source and the hwrng listing in a QEMU guest on
# Debian's stock kernel, with a software TPM 2.0 (swtpm on the host) as the
# guest's TPM and a virtio-rng beside it, and the built truerandomd serving
# from the TPM; tpm-init.sh runs the checks (tpm-device, hwrng-list,
# tpm-source, tpm-no-double-credit, tpm-serves, tpm-gone, tpm-daemon-gone)
# and reports over the serial console. The vm suite's test vm-tpm.
#
# Usage: run-tpm-vm.sh BUILDDIR
# Exit: 0 when every check passed; 1 when one failed, is missing, or the
# guest timed out (the console log follows); 77 when a needed tool is
# missing and cannot be installed.
# Env: TRUERANDOM_VM_CACHE (kernel cache, default BUILDDIR/vm-cache),
#      TRUERANDOM_TPM_SECONDS (each figure's seconds in the guest, default 3),
#      TRUERANDOM_VM_ACCEL, VM_MEM: see lib.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
vm_report_setup_failure vm-tpm

[ $# -eq 1 ] || { echo "usage: $0 BUILDDIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
start=${EPOCHREALTIME//[.,]/}
tpmcheck=$build/tests/vm/tpmcheck
daemon=$build/daemon/truerandomd
ctl=$build/ctl/truerandomctl
client=$build/tests/vm/trclient
work=$build/vm-tpm
log=$work/console.log
checks="tpm-device hwrng-list tpm-source tpm-no-double-credit tpm-serves tpm-gone tpm-daemon-gone"

for b in "$tpmcheck" "$daemon" "$ctl" "$client"; do
        [ -x "$b" ] || { echo "vm-tpm: $b is not built (meson compile -C $build)" >&2; exit 1; }
done
vm_require qemu-system-x86_64:qemu-system-x86 busybox:busybox-static modprobe:kmod depmod:kmod \
        cpio:cpio dpkg-deb:dpkg apt-get:apt swtpm:swtpm
kroot=$(vm_kernel "${TRUERANDOM_VM_CACHE:-$build/vm-cache}") || exit $?
kver=$(vm_kernel_version "$kroot")

rm -rf "$work"
mkdir -p "$work"
trap 'vm_swtpm_stop "$work/swtpm"; vm_say_setup_failure $?' EXIT

# The TPM drivers and rng-core are built into Debian's kernel: only
# virtio-rng is a module. The TCTI library is opened by name at run time
# (dlopen), so ldd does not name it: it goes in by hand.
root=$work/initramfs
vm_initramfs_new "$root" "$kroot" cuse virtio_pci virtio_rng
vm_initramfs_add "$root" "$tpmcheck" /usr/bin/tpmcheck
# hwrng-list: the daemon's status as truerandomctl shows it, read with
# trclient's jq.
vm_initramfs_add "$root" "$daemon" /usr/sbin/truerandomd
vm_initramfs_add "$root" "$ctl" /usr/bin/truerandomctl
vm_initramfs_add "$root" "$client" /usr/bin/trclient
# awk reads to the end: one that left at its first match could end
# ldconfig by SIGPIPE, and pipefail made that this script's exit 141.
tcti=$(ldconfig -p | awk '$1 == "libtss2-tcti-device.so.0" && !found { print $NF; found = 1 }')
[ -n "$tcti" ] || { echo "vm-tpm: libtss2-tcti-device.so.0 not found (scripts/deps.sh)" >&2; exit 1; }
vm_initramfs_add "$root" "$tcti" "$tcti"
install -m 755 "$here/tpm-init.sh" "$root/init"
vm_initramfs_pack "$root" "$work/initramfs.cpio"

vm_swtpm_start "$work/swtpm"
mapfile -t tpm_args < <(vm_tpm_qemu_args "$work/swtpm")
echo "vm-tpm: kernel $kver, $(vm_accel), initramfs $(du -h "$work/initramfs.cpio" | cut -f1), console in $log"
echo "vm-tpm: qemu ... ${tpm_args[*]} -device virtio-rng-pci"

# tpm-gone: once the guest has read twice, its TPM disappears.
( for _ in $(seq 3000); do
        if grep -q 'INFO tpm-read 2: ' "$log" 2>/dev/null; then
                vm_swtpm_stop "$work/swtpm"
                echo "vm-tpm: swtpm killed at $(( (${EPOCHREALTIME//[.,]/} - start) / 1000 )) ms"
                exit 0
        fi
        sleep 0.1
done ) &
killer=$!

rc=0
VM_SMP=1 VM_ECHO='^(CHECK |SUMMARY|INFO (tpm|hwrng))' vm_boot "$kroot/boot/vmlinuz-$kver" "$work/initramfs.cpio" \
        "$log" 300 "rdinit=/init tpmsecs=${TRUERANDOM_TPM_SECONDS:-3}" "${tpm_args[@]}" -device virtio-rng-pci || rc=$?
kill "$killer" 2>/dev/null || true
wait "$killer" 2>/dev/null || true

failed=0
[ $rc = 0 ] || { echo "vm-tpm: QEMU exit status $rc$([ $rc = 124 ] && echo ' (timeout)')"; failed=1; }
for c in $checks; do
        if ! grep -q "] CHECK $c: PASS" "$log"; then
                grep -q "] CHECK $c: FAIL" "$log" || echo "CHECK $c: MISSING (no result on the console)"
                failed=1
        fi
done
grep -q '] SUMMARY: ' "$log" || { echo "vm-tpm: no SUMMARY line"; failed=1; }
now=${EPOCHREALTIME//[.,]/}
echo "vm-tpm: wall time $(( (now - start) / 1000 )) ms"
if [ $failed != 0 ]; then
        echo "--- guest console log"
        cat "$log"
        exit 1
fi
