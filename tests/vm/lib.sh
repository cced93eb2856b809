# shellcheck shell=bash
# lib.sh - shared pieces of the QEMU harnesses; sourced by bash scripts.
#
#   vm_report_setup_failure NAME      a command that ends the script (set -e)
#                                     is named on stderr, with its line
#   vm_debian_release, vm_debian_mirror  for debootstrap (or a skip)
#   vm_require CMD:PACKAGE...         commands the harness needs; installs the
#                                     missing packages (root + apt-get) or skips
#   vm_kernel CACHE_DIR [SUITE]       kernel root from fetch-kernel.sh (cached;
#                                     SUITE: e.g. bookworm-backports's kernel);
#                                     call as kroot=$(vm_kernel DIR) || exit $?
#   vm_initramfs_new ROOT KROOT MOD...  busybox tree + modules (in load order,
#                                     listed in ROOT/etc/modules.order) +
#                                     /lib/guest-prelude.sh, which every
#                                     /init sources first
#   vm_initramfs_add ROOT SRC DEST    a binary, plus the shared libraries it needs
#   vm_initramfs_pack ROOT OUT        newc cpio
#   vm_boot KERNEL INITRD LOG TIMEOUT APPEND [QEMU ARG...]
#                                     boots, writes the timestamped console to
#                                     LOG, returns QEMU's status (124: timeout)
#   vm_swtpm_start DIR                a software TPM 2.0 (swtpm, Debian's) for
#                                     one guest: state, control socket, log and
#                                     pid in DIR; fresh state each time
#   vm_swtpm_stop DIR                 kills it (SIGKILL: also how a check makes
#                                     the guest's TPM disappear)
#   vm_tpm_qemu_args DIR              QEMU's arguments for that TPM, one a
#                                     line: a TIS device, so the guest has
#                                     /dev/tpm0, /dev/tpmrm0 and the hwrng
#                                     tpm-rng-0 (Debian's kernel has tpm,
#                                     tpm_tis and rng-core built in); read
#                                     them with mapfile -t
#
# Environment: TRUERANDOM_VM_ACCEL=tcg|kvm (default: kvm only where the host
# CPU offers VT-x/AMD-V and /dev/kvm is usable, else tcg), VM_SMP (1), VM_MEM
# (768 MiB), VM_ECHO (regex: console lines matching it are also printed).

export PATH=$PATH:/usr/sbin:/sbin
VM_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

vm_log() {
        printf 'vm: %s\n' "$*" >&2
}

# vm_report_setup_failure NAME: a harness that set -e ends says which
# command ended it, and where; without this a failing command substitution
# ends the script with no word (issue #13: 0.3 s, exit 1, nothing said).
# The ERR trap only notes the command (it also runs in subshells, where
# printing would say it twice); the EXIT trap says it once.
vm_report_setup_failure() {
        VM_SUITE_NAME=$1
        VM_FAILED_CMD=
        set -o errtrace
        trap 'VM_FAILED_RC=$?; VM_FAILED_CMD=$BASH_COMMAND; VM_FAILED_AT="${BASH_SOURCE[0]##*/}:$LINENO"' ERR
        trap 'vm_say_setup_failure $?' EXIT
}

# vm_say_setup_failure RC: for a harness's own EXIT trap.
vm_say_setup_failure() {
        if [ "$1" -ne 0 ] && [ "$1" -ne 77 ] && [ -n "${VM_FAILED_CMD:-}" ]; then
                printf '%s: set-up failed: `%s'"'"' exited %s (%s)\n' "$VM_SUITE_NAME" "$VM_FAILED_CMD" \
                        "$VM_FAILED_RC" "$VM_FAILED_AT" >&2
        fi
}

# This machine's Debian release, and the mirror apt uses ($MIRROR first),
# for debootstrap; a skip when there is none.
vm_debian_release() {
        local r
        r=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
        [ -n "$r" ] || vm_skip "/etc/os-release names no release for debootstrap"
        echo "$r"
}

vm_debian_mirror() {
        local m
        m=${MIRROR:-$(sed -n 's/^URIs: *\([^ ]*\/debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)}
        m=${m:-$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)}
        [ -n "$m" ] || vm_skip "no Debian mirror in the apt sources (set MIRROR=)"
        echo "$m"
}

vm_skip() {
        vm_log "SKIP: $*"
        exit 77
}

vm_require() {
        local spec missing=()

        for spec in "$@"; do
                command -v "${spec%%:*}" >/dev/null 2>&1 || missing+=("${spec#*:}")
        done
        [ ${#missing[@]} -eq 0 ] && return 0

        [ "$(id -u)" = 0 ] || vm_skip "needs ${missing[*]}; run as root to let the harness install them"
        command -v apt-get >/dev/null 2>&1 || vm_skip "needs ${missing[*]} and there is no apt-get"
        vm_log "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        # A fresh machine has no package lists yet: update only when needed.
        apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
                { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; } ||
                vm_skip "apt-get could not install ${missing[*]}"
        for spec in "$@"; do
                command -v "${spec%%:*}" >/dev/null 2>&1 || vm_skip "${spec%%:*} still missing after installing ${spec#*:}"
        done
}

# Prints the kernel root. Without root, a kernel that cannot be fetched (no
# package lists, no network) is a skip (77); as root it is a failure.
vm_kernel() {
        local rc=0
        "$VM_LIB_DIR/fetch-kernel.sh" "$@" || rc=$?
        [ $rc = 0 ] && return 0
        [ $rc = 77 ] && exit 77
        [ "$(id -u)" = 0 ] && return 1
        vm_skip "cannot fetch Debian's kernel package without root"
}

vm_kernel_version() {
        ls "$1/lib/modules" | sort -V | tail -n 1
}

vm_initramfs_new() {
        local root=$1 kroot=$2 kver m ko
        shift 2
        kver=$(vm_kernel_version "$kroot")

        # mktemp -d makes 0700 directories: a 0700 guest "/" denies every
        # non-root check with EACCES.
        mkdir -p "$root"
        chmod 755 "$root"
        mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,lib/modules/"$kver"}
        chmod 1777 "$root/tmp"
        vm_initramfs_add "$root" "$(command -v busybox)" /bin/busybox
        ln -sf busybox "$root/bin/sh"
        # What every /init sources first (mounts, modules, shared helpers).
        install -D -m 644 "$(dirname "${BASH_SOURCE[0]}")/guest-prelude.sh" "$root/lib/guest-prelude.sh"

        : > "$root/etc/modules.order"
        for m in "$@"; do
                modprobe -d "$kroot" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
        done | awk '!seen[$0]++' | while read -r ko; do
                # busybox's insmod takes plain modules: newer kernels ship .ko.xz.
                m=$(basename "$ko" .xz)
                if [ "$m" != "$(basename "$ko")" ]; then
                        xz -dc "$ko" > "$root/lib/modules/$kver/$m"
                else
                        cp "$ko" "$root/lib/modules/$kver/"
                fi
                echo "/lib/modules/$kver/$m" >> "$root/etc/modules.order"
        done
}

vm_initramfs_add() {
        local root=$1 src=$2 dest=$3 libs lib

        install -D -m 755 "$src" "$root$dest"
        # ldd names the ELF interpreter by its absolute path too; static
        # binaries print no paths at all.
        libs=$(ldd "$src" 2>/dev/null | grep -o '/[^ ]*' || true)
        for lib in $libs; do
                [ -e "$root$lib" ] || install -D -m 755 "$(readlink -f "$lib")" "$root$lib"
        done
}

vm_initramfs_pack() {
        local root=$1 out=$2

        # Owned by root in the guest whoever builds it.
        mkdir -p "$(dirname "$out")"
        ( cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc -R 0:0 --quiet ) > "$out"
}

vm_accel() {
        if [ -n "${TRUERANDOM_VM_ACCEL:-}" ]; then
                echo "$TRUERANDOM_VM_ACCEL"
        elif [ -r /dev/kvm ] && [ -w /dev/kvm ] && grep -qw -e vmx -e svm /proc/cpuinfo; then
                echo kvm
        else
                # Without VT-x/AMD-V in the host's flags, /dev/kvm (when there
                # is one) is a paravirtual flavour a stock kernel hangs on.
                echo tcg
        fi
}

vm_boot() {
        local kernel=$1 initrd=$2 log=$3 timeout=$4 append=$5 accel cpu t0 now us line rc
        shift 5

        accel=$(vm_accel)
        # -cpu max under TCG offers RDRAND/RDSEED (the default qemu64 does not).
        cpu=max
        [ "$accel" = kvm ] && cpu=host
        mkdir -p "$(dirname "$log")"
        : > "$log"
        t0=${EPOCHREALTIME//[.,]/}
        # -nodefaults: no NIC option ROM, no VGA. panic=-1 + -no-reboot: QEMU
        # exits when /init dies instead of hanging until the timeout.
        timeout "$timeout" qemu-system-x86_64 \
                -accel "$accel" -cpu "$cpu" -smp "${VM_SMP:-1}" -m "${VM_MEM:-768}" \
                -nodefaults -no-user-config -display none -serial stdio -no-reboot \
                -kernel "$kernel" -initrd "$initrd" \
                -append "console=ttyS0 quiet loglevel=3 panic=-1 $append" \
                "$@" </dev/null 2>&1 |
        while IFS= read -r line; do
                line=${line%$'\r'}
                now=${EPOCHREALTIME//[.,]/}
                us=$((now - t0))
                printf '[%4d.%02d] %s\n' $((us / 1000000)) $((us % 1000000 / 10000)) "$line" >> "$log"
                if [ -n "${VM_ECHO:-}" ] && [[ $line =~ $VM_ECHO ]]; then
                        printf '%s\n' "$line"
                fi
        done
        rc=${PIPESTATUS[0]}
        return "$rc"
}

# QEMU talks to swtpm over its control socket only (the TPM commands go
# over a socketpair QEMU hands it there). The guest's firmware sends
# TPM2_Startup, as a PC's would.
vm_swtpm_start() {
        local dir=$1 i

        rm -rf "$dir"
        mkdir -p "$dir"
        swtpm socket --tpm2 --tpmstate dir="$dir" --ctrl type=unixio,path="$dir/swtpm.ctrl" \
                --log file="$dir/swtpm.log" --pid file="$dir/swtpm.pid" --daemon
        for i in $(seq 100); do
                [ -S "$dir/swtpm.ctrl" ] && [ -s "$dir/swtpm.pid" ] && return 0
                sleep 0.1
        done
        vm_log "swtpm did not come up in 10 s (log: $dir/swtpm.log)"
        return 1
}

vm_swtpm_stop() {
        local pid

        pid=$(cat "$1/swtpm.pid" 2>/dev/null) || return 0
        kill -KILL "$pid" 2>/dev/null || true
        rm -f "$1/swtpm.pid"
}

vm_tpm_qemu_args() {
        printf '%s\n' -chardev "socket,id=chrtpm,path=$1/swtpm.ctrl" \
                -tpmdev emulator,id=tpm0,chardev=chrtpm -device tpm-tis,tpmdev=tpm0
}
