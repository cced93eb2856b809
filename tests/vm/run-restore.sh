#!/bin/bash
# run-restore.sh - the `vm-restore` check (issue 14): a machine restored from
# a saved state, twice, must not hand out what the original had in store,
# nor the same output in both copies.
#
# For each configuration (kernel, with or without QEMU's -device vmgenid,
# guid=auto: every QEMU process draws a new generation id), restore-init.sh
# runs truerandomd in a busybox guest and fills its store; the host stops
# the guest and saves it through QMP (`migrate` to `exec:cat > FILE`; QEMU
# 7.2 has no `file:` migration), continues the original, then restores the
# file twice in new QEMU processes (`-incoming`). The console (ttyS0) carries
# the results, timed on the host as they arrive; the second serial port
# (ttyS1) tells each copy its role; QMP runs over a pipe chardev (FIFOs: no
# socket tool needed).
#
# Configurations:
#   6.12-vmgenid  bookworm-backports' kernel with a vmgenid device
#   6.1-vmgenid   Debian 12's kernel (the vm suite's) with one
#   6.1-none      Debian 12's kernel without: nothing announces a clone, so
#                 the copies repeat the original; asserted, as the control
#                 that shows this check sees repetition when there is some.
# The original also suspends to RAM once (QMP system_wakeup 2 s later).
#
# Usage: run-restore.sh BUILDDIR
# Exit: 0 when every assertion held, 1 otherwise (console logs follow),
# 77 when a tool is missing and cannot be installed.
# Env: TRUERANDOM_VM_CACHE (kernels, default BUILDDIR/vm-cache),
#      TRUERANDOM_RESTORE_CONFIGS (e.g. "6.12-vmgenid"), TRUERANDOM_VM_ACCEL.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
vm_report_setup_failure vm-restore

[ $# -eq 1 ] || { echo "usage: $0 BUILDDIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
start=${EPOCHREALTIME//[.,]/}
work=$build/vm-restore
configs=${TRUERANDOM_RESTORE_CONFIGS:-6.12-vmgenid 6.1-vmgenid 6.1-none}

for b in daemon/truerandomd ctl/truerandomctl tests/vm/trclient; do
        [ -x "$build/$b" ] || { echo "vm-restore: $build/$b is not built (meson compile -C $build)" >&2; exit 1; }
done
vm_require qemu-system-x86_64:qemu-system-x86 busybox:busybox-static modprobe:kmod depmod:kmod \
        cpio:cpio dpkg-deb:dpkg apt-get:apt xz:xz-utils
cache=${TRUERANDOM_VM_CACHE:-$build/vm-cache}
rm -rf "$work"
mkdir -p "$work"

# ------------------------------------------------------------------
# one QEMU process

# QEMU's own pids (-pidfile), to end what is left on the way out.
cleanup() {
        local f
        for f in "$work"/*/*/qemu.pid; do
                [ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null
        done
        return 0
}
trap 'cleanup; vm_say_setup_failure $?' EXIT

now_ms() {
        local t=${EPOCHREALTIME//[.,]/}
        echo $(((t - start) / 1000))
}

# host_note LOG TEXT: a line of the host's own in the console log, timed alike
host_note() {
        local t
        t=$(now_ms)
        printf '[%4d.%03d] HOST %s\n' $((t / 1000)) $((t % 1000)) "$2" >> "$1"
}

# guest DIR KROOT [QEMU ARG...]: starts QEMU in the background; its console
# goes, timed, to DIR/console.log. QMP: DIR/qmp.{in,out}; ttyS1: DIR/ctl.in.
guest() {
        local dir=$1 kroot=$2 kver accel
        shift 2
        kver=$(vm_kernel_version "$kroot")
        accel=$(vm_accel)
        mkdir -p "$dir"
        rm -f "$dir"/{qmp,ctl}.{in,out}
        mkfifo "$dir/qmp.in" "$dir/qmp.out" "$dir/ctl.in" "$dir/ctl.out"
        : > "$dir/console.log"
        # loglevel=6: the kernel's notices (its VM-fork record) reach the
        # console too, so the host times them.
        ( timeout 300 qemu-system-x86_64 -accel "$accel" -cpu "$([ "$accel" = kvm ] && echo host || echo max)" \
                -smp 1 -m 256 -nodefaults -no-user-config -display none -no-reboot \
                -kernel "$kroot/boot/vmlinuz-$kver" -initrd "$work/initramfs-$kver.cpio" \
                -append "console=ttyS0 quiet loglevel=6 panic=-1 rdinit=/init" \
                -serial stdio -chardev pipe,id=ctl,path="$dir/ctl" -serial chardev:ctl \
                -chardev pipe,id=qmp,path="$dir/qmp" -mon chardev=qmp,mode=control \
                -pidfile "$dir/qemu.pid" "$@" </dev/null 2>&1 |
                while IFS= read -r line; do
                        t=$(now_ms)
                        printf '[%4d.%03d] %s\n' $((t / 1000)) $((t % 1000)) "${line%$'\r'}"
                done >> "$dir/console.log" ) &
        echo $! > "$dir/pid"
        # O_RDWR: opening a FIFO so never blocks, whoever is there first.
        exec {QMP_IN}<>"$dir/qmp.in" {QMP_OUT}<>"$dir/qmp.out"
        qmp_reply >/dev/null || return 1   # the greeting
        qmp '{"execute":"qmp_capabilities"}' >/dev/null
}

guest_end() {
        local dir=$1 i
        for ((i = 0; i < 300; i++)); do
                kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
                sleep 0.1
        done
        [ -e "$dir/qemu.pid" ] && kill "$(cat "$dir/qemu.pid")" 2>/dev/null
        wait "$(cat "$dir/pid")" 2>/dev/null || true
        exec {QMP_IN}>&- {QMP_OUT}>&-
}

# qmp_reply: the next line that is not an event (events are skipped)
qmp_reply() {
        local l
        while IFS= read -r -t 60 -u "$QMP_OUT" l; do
                case "$l" in *'"event"'*) ;; *) echo "$l"; return 0 ;; esac
        done
        return 1
}

qmp() {
        printf '%s\n' "$1" >&"$QMP_IN"
        qmp_reply
}

# qmp_wait QUERY PATTERN TENTHS: until QUERY's reply matches
qmp_wait() {
        local i r
        for ((i = 0; i < $3; i++)); do
                r=$(qmp "{\"execute\":\"$1\"}")
                case "$r" in *$2*) return 0 ;; esac
                sleep 0.1
        done
        echo "vm-restore: $1 never said $2: $r" >&2
        return 1
}

# console_wait DIR PATTERN TENTHS
console_wait() {
        local i
        for ((i = 0; i < $3; i++)); do
                grep -q "$2" "$1/console.log" && return 0
                sleep 0.1
        done
        echo "vm-restore: no '$2' on $1's console" >&2
        return 1
}

# ------------------------------------------------------------------
# one configuration

# run_config NAME KROOT [QEMU ARG...]
run_config() {
        local name=$1 kroot=$2 dir=$work/$1 r
        shift 2
        mkdir -p "$dir"

        guest "$dir/orig" "$kroot" "$@"
        console_wait "$dir/orig" 'RESTORE SAVE-READY' 1800 || { guest_end "$dir/orig"; return 0; }
        qmp '{"execute":"stop"}' >/dev/null
        host_note "$dir/orig/console.log" "stopped; saving"
        qmp "{\"execute\":\"migrate\",\"arguments\":{\"uri\":\"exec:cat > $dir/state\"}}" >/dev/null
        qmp_wait query-migrate '"completed"' 600
        host_note "$dir/orig/console.log" "saved ($(du -h "$dir/state" | cut -f1)); cont"
        echo orig > "$dir/orig/ctl.in"
        qmp '{"execute":"cont"}' >/dev/null
        if console_wait "$dir/orig" 'RESTORE SUSPENDING' 600 && qmp_wait query-status '"suspended"' 100; then
                sleep 2
                host_note "$dir/orig/console.log" "system_wakeup"
                qmp '{"execute":"system_wakeup"}' >/dev/null
        fi
        console_wait "$dir/orig" 'RESTORE DONE' 600 || true
        guest_end "$dir/orig"

        for r in 1 2; do
                guest "$dir/restore$r" "$kroot" "$@" -incoming "exec:cat $dir/state"
                qmp_wait query-status '"paused"' 600
                host_note "$dir/restore$r/console.log" "loaded; cont"
                echo "restore$r" > "$dir/restore$r/ctl.in"
                qmp '{"execute":"cont"}' >/dev/null
                console_wait "$dir/restore$r" 'RESTORE DONE' 600 || true
                guest_end "$dir/restore$r"
        done
}

# ------------------------------------------------------------------
# what each copy read, and the verdicts

failed=0
check() {
        local what=$1 ok=$2 detail=$3
        if [ "$ok" = 1 ]; then
                echo "CHECK $what: PASS $detail"
        else
                echo "CHECK $what: FAIL $detail"
                failed=1
        fi
}

# got DIR ROLE KIND KEY: the value a copy reported
got() {
        got_in "$1" "$2" "$2" "$3" "$4"
}

# got_in DIR COPY LABEL KIND KEY: the same, from COPY's console, where the
# original reports under several labels (saved, orig, resumed)
got_in() {
        # The first match, sed quitting there (no `| head`: under pipefail
        # a sed ended by SIGPIPE would end the script).
        sed -n "\|^\[[ 0-9.]*\] RESTORE $4 $3 $5 \(.*\)$|{s||\1|p;q}" "$1/$2/console.log" 2>/dev/null || true
}

# ms DIR ROLE PATTERN: host time (ms) of the first console line matching
ms() {
        sed -n "/$3/{s/^\[ *\([0-9]*\)\.\([0-9]*\)\].*/\1\2/p;q}" "$1/$2/console.log" 2>/dev/null | sed 's/^0*//'
}

blocks_of() {
        echo "$1" | fold -w 64
}

judge() {
        local name=$1 device=$2 dir=$work/$1 o r1 r2 b x same stored t0 tk td role store
        # What the original had in store when it was saved.
        store=$(got_in "$dir" orig saved VALUE store.fill)
        store=${store:-0}
        o=$(got "$dir" orig BYTES /dev/truerandom)
        r1=$(got "$dir" restore1 BYTES /dev/truerandom)
        r2=$(got "$dir" restore2 BYTES /dev/truerandom)
        echo "vm-restore: $name: what each copy read first (hex, 8 bytes of each 32-byte block shown):"
        for role in orig restore1 restore2; do
                x=$(got "$dir" $role BYTES /dev/truerandom)
                printf '  %-8s /dev/truerandom %s\n' $role "$(blocks_of "$x" | cut -c1-16 | head -n 4 | paste -sd' ' -)"
                printf '  %-8s drop-in random  %s\n' $role "$(got "$dir" $role BYTES /dev/truerandom-random | cut -c1-32)"
        done
        if [ "$store" -lt 1 ] || [ ${#o} -ne $((store * 64)) ] || [ ${#r1} -ne 64 ] || [ ${#r2} -ne 64 ]; then
                check "vm-restore/$name/read" 0 "a copy did not read what it should (${#o}/${#r1}/${#r2} hex digits)"
                return
        fi
        stored=$(blocks_of "$o")
        same=0
        for b in $(blocks_of "$r1") $(blocks_of "$r2"); do
                echo "$stored" | grep -qx "$b" && same=$((same + 1))
        done

        if [ -z "$device" ]; then
                # The control: nothing announces the clone.
                check "vm-restore/$name/detection" "$([ "$(got "$dir" restore1 VALUE vm_generation.detection)" = no-device ] && echo 1)" \
                        "status: $(got "$dir" restore1 VALUE vm_generation.detail)"
                check "vm-restore/$name/copies-repeat" "$([ "$r1" = "$r2" ] && [ $same = 2 ] && echo 1)" \
                        "without a vmgenid device both copies served a block the original had in store ($same of 2): not covered, as documented"
        else
                check "vm-restore/$name/detection" "$([ "$(got "$dir" orig VALUE vm_generation.detection)" = available ] && echo 1)" \
                        "status: $(got "$dir" orig VALUE vm_generation.detail)"
                check "vm-restore/$name/trng-copies-differ" "$([ "$r1" != "$r2" ] && echo 1)" \
                        "/dev/truerandom after restore 1 vs 2: ${r1:0:16} vs ${r2:0:16}"
                check "vm-restore/$name/trng-not-stored" "$([ $same = 0 ] && echo 1)" \
                        "$same of the copies' first blocks (one each) were blocks the original had in store"
                x=$(got "$dir" orig BYTES /dev/truerandom-random)
                check "vm-restore/$name/dropin-copies-differ" \
                        "$([ "$(got "$dir" restore1 BYTES /dev/truerandom-random)" != "$(got "$dir" restore2 BYTES /dev/truerandom-random)" ] &&
                           [ "$(got "$dir" restore1 BYTES /dev/truerandom-random)" != "$x" ] &&
                           [ "$(got "$dir" restore2 BYTES /dev/truerandom-random)" != "$x" ] && echo 1)" \
                        "drop-in random: orig ${x:0:16}, restore1 $(got "$dir" restore1 BYTES /dev/truerandom-random | cut -c1-16), restore2 $(got "$dir" restore2 BYTES /dev/truerandom-random | cut -c1-16)"
                for role in restore1 restore2; do
                        check "vm-restore/$name/$role-status" \
                                "$([ "$(got "$dir" $role VALUE crng.vm_generation_changes)" = 1 ] &&
                                   [ "$(got "$dir" $role VALUE crng.vm_blocks_purged)" -ge "$store" ] 2>/dev/null &&
                                   [ "$(got "$dir" $role VALUE crng.rekeys)" = 1 ] && echo 1)" \
                                "crng.vm_generation_changes $(got "$dir" $role VALUE crng.vm_generation_changes), crng.vm_blocks_purged $(got "$dir" $role VALUE crng.vm_blocks_purged), crng.rekeys $(got "$dir" $role VALUE crng.rekeys) (the original had $store in store)"
                        t0=$(ms "$dir" $role 'HOST loaded; cont')
                        tk=$(ms "$dir" $role 'crng reseeded due to virtual machine fork')
                        td=$(ms "$dir" $role 'VM generation changed')
                        echo "INFO vm-restore/$name/$role window (host clock): kernel record $([ -n "$tk" ] && echo "+$((tk - t0)) ms" || echo none), daemon $([ -n "$td" ] && echo "+$((td - t0)) ms" || echo none) after cont"
                done
        fi
        check "vm-restore/$name/resume" \
                "$([ "$(got "$dir" orig VALUE resume.jumps.delta)" = 1 ] && [ "$(got "$dir" orig VALUE crng.reseeds.delta)" = 1 ] && echo 1)" \
                "suspend to RAM: resume.jumps +$(got "$dir" orig VALUE resume.jumps.delta), crng.reseeds +$(got "$dir" orig VALUE crng.reseeds.delta), slept $(got_in "$dir" orig resumed VALUE resume.slept_s) s"
        for role in orig restore1 restore2; do
                sed -n 's/^\[[ 0-9.]*\] RESTORE CLOCKS \(.*\)$/INFO clocks \1/p' "$dir/$role/console.log" 2>/dev/null
        done
}

# ------------------------------------------------------------------

declare -A kroots
for c in $configs; do
        case "$c" in
        6.12-*) [ -n "${kroots[6.12]:-}" ] || kroots[6.12]=$(vm_kernel "$cache" bookworm-backports) || exit $? ;;
        6.1-*) [ -n "${kroots[6.1]:-}" ] || kroots[6.1]=$(vm_kernel "$cache") || exit $? ;;
        *) echo "vm-restore: unknown configuration $c" >&2; exit 2 ;;
        esac
done
for k in "${kroots[@]}"; do
        kver=$(vm_kernel_version "$k")
        root=$work/initramfs-$kver
        vm_initramfs_new "$root" "$k" cuse
        vm_initramfs_add "$root" "$build/daemon/truerandomd" /usr/sbin/truerandomd
        vm_initramfs_add "$root" "$build/ctl/truerandomctl" /usr/bin/truerandomctl
        vm_initramfs_add "$root" "$build/tests/vm/trclient" /usr/bin/trclient
        install -m 755 "$here/restore-init.sh" "$root/init"
        vm_initramfs_pack "$root" "$work/initramfs-$kver.cpio"
done

for c in $configs; do
        t=$(now_ms)
        case "$c" in
        *-vmgenid) run_config "$c" "${kroots[${c%%-*}]}" -device vmgenid || echo "vm-restore: $c: a step failed" ;;
        *) run_config "$c" "${kroots[${c%%-*}]}" || echo "vm-restore: $c: a step failed" ;;
        esac
        echo "vm-restore: $c ($(vm_kernel_version "${kroots[${c%%-*}]}")) ran in $((($(now_ms) - t) / 1000)) s"
        judge "$c" "$([ "${c#*-}" = vmgenid ] && echo vmgenid)"
done

echo "vm-restore: wall time $(($(now_ms) / 1000)) s"
if [ $failed != 0 ]; then
        for c in $configs; do
                for role in orig restore1 restore2; do
                        echo "--- $c/$role console"
                        cat "$work/$c/$role/console.log" 2>/dev/null || true
                done
        done
        exit 1
fi
