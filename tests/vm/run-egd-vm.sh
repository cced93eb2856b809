#!/bin/bash
# run-egd-vm.sh - EGD end to end on this machine, which has no CUSE: the
# built truerandomd runs natively as root with etc/examples/egd-host.conf
# exactly as shipped (no device, the EGD socket at /run/truerandomd/
# egd.sock), and a QEMU guest on Debian's stock kernel gets it as its
# virtio-rng through rng-egd. egd-init.sh checks in the guest (egd-hwrng,
# egd-read, egd-unique, egd-stall); here, from the daemon's own status:
#
#   egd-serves   the daemon started with the example, no CUSE device, and
#                serves EGD (status: egd.socket, no device)
#   egd-counted  before it is killed, its status counts at least the bytes
#                the guest read as served over EGD
#
# The daemon is killed (SIGKILL, as a crash) when the guest says
# "egd-kill-now": the guest's reads must then stall, never repeat.
#
# Usage: run-egd-vm.sh BUILDDIR
# Exit: 0 when every check passed; 1 when one failed, is missing, or the
# guest timed out (the logs follow); 77 when not root (the example runs as
# root: it switches to [daemon] user itself) or a tool is missing.
# Env: TRUERANDOM_VM_CACHE (kernel cache, default BUILDDIR/vm-cache),
#      TRUERANDOM_EGD_BYTES (what the guest reads, default 32768),
#      TRUERANDOM_VM_ACCEL, VM_MEM: see lib.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
vm_report_setup_failure vm-egd

[ $# -eq 1 ] || { echo "usage: $0 BUILDDIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
[ "$(id -u)" -eq 0 ] || vm_skip "vm-egd: needs root (truerandomd starts as root with the example file)"
start=${EPOCHREALTIME//[.,]/}
daemon=$build/daemon/truerandomd
ctl=$build/ctl/truerandomctl
conf=$src/etc/examples/egd-host.conf
work=$build/vm-egd
log=$work/console.log
bytes=${TRUERANDOM_EGD_BYTES:-32768}
guest_checks="egd-hwrng egd-read egd-unique egd-stall"

vm_require qemu-system-x86_64:qemu-system-x86 busybox:busybox-static modprobe:kmod depmod:kmod \
        cpio:cpio dpkg-deb:dpkg apt-get:apt
kroot=$(vm_kernel "${TRUERANDOM_VM_CACHE:-$build/vm-cache}") || exit $?
kver=$(vm_kernel_version "$kroot")
sock=$(sed -n 's/^socket *= *//p' "$conf")
control=/run/truerandomd/control

rm -rf "$work"
mkdir -p "$work"
pid=
cleanup() {
        rc=$?
        [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
        rm -f "$sock" "$control"
        vm_say_setup_failure $rc
}
trap cleanup EXIT

# What the package's sysusers.d makes: the group the socket belongs to,
# the user the daemon becomes.
getent group truerandom >/dev/null || { groupadd --system truerandom; echo "vm-egd: made group truerandom"; }
id truerandomd >/dev/null 2>&1 || {
        useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin truerandomd
        echo "vm-egd: made user truerandomd"
}
if "$ctl" status --json >/dev/null 2>&1; then
        echo "vm-egd: a truerandomd already answers on $control: not disturbing it" >&2
        exit 77
fi

"$daemon" --foreground --config "$conf" > "$work/daemon.log" 2>&1 &
pid=$!
ready=0
for _ in $(seq 3000); do
        if "$ctl" status --json > "$work/status.json" 2>/dev/null &&
                python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(0 if s["ready"] else 1)' \
                        "$work/status.json"; then
                ready=1
                break
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
done
failed=0
figure() {
        python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
if [ $ready = 1 ] && [ -S "$sock" ] && [ "$(figure "$work/status.json" 'len(s["devices"])')" = 0 ] &&
        [ "$(figure "$work/status.json" 's["egd"]["socket"]')" = "$sock" ]; then
        echo "CHECK egd-serves: PASS ready in $(( (${EPOCHREALTIME//[.,]/} - start) / 1000 )) ms, no device," \
                "$(stat -c '%A %U:%G' "$sock") $sock"
else
        echo "CHECK egd-serves: FAIL ready=$ready, socket $(ls -l "$sock" 2>&1)"
        failed=1
fi

root=$work/initramfs
vm_initramfs_new "$root" "$kroot" virtio_pci virtio_rng
install -m 755 "$here/egd-init.sh" "$root/init"
vm_initramfs_pack "$root" "$work/initramfs.cpio"
egd_args=(-object rng-egd,id=rng0,chardev=egd0 -chardev "socket,id=egd0,path=$sock"
        -device virtio-rng-pci,rng=rng0)
echo "vm-egd: kernel $kver, $(vm_accel), console in $log"
echo "vm-egd: qemu ... ${egd_args[*]}"

# The word from the guest: the daemon's account, then its death.
( for _ in $(seq 3000); do
        if grep -q 'INFO egd-kill-now' "$log" 2>/dev/null; then
                "$ctl" status --json > "$work/before-kill.json" || true
                kill -9 "$pid"
                echo "vm-egd: truerandomd killed at $(( (${EPOCHREALTIME//[.,]/} - start) / 1000 )) ms"
                exit 0
        fi
        sleep 0.1
done ) &
killer=$!

rc=0
[ $failed = 0 ] && { VM_SMP=1 VM_ECHO='^(CHECK |SUMMARY|INFO egd)' vm_boot "$kroot/boot/vmlinuz-$kver" \
        "$work/initramfs.cpio" "$log" 420 "rdinit=/init egdbytes=$bytes" "${egd_args[@]}" || rc=$?; }
kill "$killer" 2>/dev/null || true
wait "$killer" 2>/dev/null || true

[ $rc = 0 ] || { echo "vm-egd: QEMU exit status $rc$([ $rc = 124 ] && echo ' (timeout)')"; failed=1; }
for c in $guest_checks; do
        if ! grep -q "] CHECK $c: PASS" "$log" 2>/dev/null; then
                grep -q "] CHECK $c: FAIL" "$log" 2>/dev/null || echo "CHECK $c: MISSING (no result on the console)"
                failed=1
        fi
done
# The first match, sed quitting there: a `| head` under pipefail could end
# sed by SIGPIPE and this script with it.
got=$(sed -n '/.*INFO egd-guest-bytes \([0-9]*\).*/{s//\1/p;q}' "$log" 2>/dev/null || true)
if [ -s "$work/before-kill.json" ] && [ -n "$got" ]; then
        served=$(figure "$work/before-kill.json" 's["egd"]["bytes_served"]')
        requests=$(figure "$work/before-kill.json" 's["egd"]["requests"]')
        if [ "$served" -ge "$got" ]; then
                echo "CHECK egd-counted: PASS $served bytes served over EGD in $requests requests; the guest read $got"
        else
                echo "CHECK egd-counted: FAIL $served bytes served over EGD; the guest read $got"
                failed=1
        fi
else
        echo "CHECK egd-counted: FAIL no status before the kill, or no byte count from the guest"
        failed=1
fi
echo "vm-egd: wall time $(( (${EPOCHREALTIME//[.,]/} - start) / 1000 )) ms"
if [ $failed != 0 ]; then
        echo "--- daemon log"
        cat "$work/daemon.log"
        echo "--- guest console log"
        cat "$log" 2>/dev/null || true
        exit 1
fi
