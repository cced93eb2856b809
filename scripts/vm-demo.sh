#!/bin/bash
# vm-demo.sh - show the built truerandomd serving, on a host whose kernel has
# no CUSE: boots Debian's stock kernel (which has cuse.ko) in QEMU with the
# daemon in a busybox initramfs, runs it with its built-in defaults, prints
# the device nodes, 64 bytes from /dev/truerandom and from the drop-in
# /dev/random (and `truerandomctl status` where it is built), powers off.
#
# Usage: scripts/vm-demo.sh BUILDDIR
# Env: TRUERANDOM_VM_CACHE (kernel cache, default BUILDDIR/vm-cache),
#      TRUERANDOM_VM_ACCEL (see tests/vm/lib.sh)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/vm/lib.sh"

[ $# -eq 1 ] || { echo "usage: $0 BUILDDIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
daemon=$build/daemon/truerandomd
ctl=$build/ctl/truerandomctl
work=$build/vm-demo
[ -x "$daemon" ] || { echo "vm-demo: $daemon is not built (meson compile -C $build)" >&2; exit 1; }

vm_require qemu-system-x86_64:qemu-system-x86 busybox:busybox-static modprobe:kmod depmod:kmod \
        cpio:cpio dpkg-deb:dpkg apt-get:apt
kroot=$(vm_kernel "${TRUERANDOM_VM_CACHE:-$build/vm-cache}") || exit $?
kver=$(vm_kernel_version "$kroot")

rm -rf "$work"
root=$work/initramfs
vm_initramfs_new "$root" "$kroot" cuse virtio_pci virtio_rng
vm_initramfs_add "$root" "$daemon" /usr/sbin/truerandomd
[ -x "$ctl" ] && vm_initramfs_add "$root" "$ctl" /usr/bin/truerandomctl
cat > "$root/init" <<'EOF'
#!/bin/sh
. /lib/guest-prelude.sh
printf 'root:x:0:0:root:/root:/bin/sh\ntruerandomd:x:989:989::/nonexistent:/bin/false\n' > /etc/passwd
printf 'root:x:0:\ntruerandom:x:990:\ntruerandomd:x:989:\n' > /etc/group
printf 'passwd: files\ngroup: files\n' > /etc/nsswitch.conf

echo "### guest: Linux $(uname -r), $(ls -l /dev/cuse)"
echo "### truerandomd (built-in defaults; returns once its devices are up)"
if truerandomd; then
        echo "### ls -l /dev/truerandom*"
        ls -l /dev/truerandom*
        echo "### 64 bytes from /dev/truerandom"
        timeout 60 head -c 64 /dev/truerandom | od -An -tx1
        echo "### 64 bytes from /dev/truerandom-random bind-mounted over /dev/random"
        mount --bind /dev/truerandom-random /dev/random
        timeout 60 head -c 64 /dev/random | od -An -tx1
        umount /dev/random
        if command -v truerandomctl >/dev/null; then
                echo "### truerandomctl status"
                truerandomctl status
        fi
        kill -TERM "$(pidof truerandomd)"
        sleep 1
fi
echo "### demo done"
poweroff -f
EOF
chmod 755 "$root/init"
vm_initramfs_pack "$root" "$work/initramfs.cpio"

echo "vm-demo: Linux $kver under QEMU ($(vm_accel)); this takes a few seconds"
rc=0
VM_ECHO=. vm_boot "$kroot/boot/vmlinuz-$kver" "$work/initramfs.cpio" "$work/console.log" 180 rdinit=/init \
        -device virtio-rng-pci || rc=$?
grep -q '### demo done' "$work/console.log" || { echo "vm-demo: the guest did not finish (QEMU status $rc)" >&2; exit 1; }
if ! grep -q '### ls -l /dev/truerandom' "$work/console.log"; then
        echo "vm-demo: truerandomd did not start in the guest (console: $work/console.log)" >&2
        exit 1
fi
echo "vm-demo: the daemon ran in a guest (Linux $kver) and is gone; on a kernel with CUSE" \
        "(modprobe cuse makes /dev/cuse), scripts/run.sh runs it on this machine, and" \
        "'meson install -C build' or the .deb (dpkg-buildpackage -b) installs it as a service"
