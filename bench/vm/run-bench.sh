#!/bin/bash
# run-bench.sh - the benchmark of issue 7: the built truerandomd in one QEMU
# guest on Debian's stock kernel (which has cuse.ko), measured by trbench
# from guest-bench.sh, plus the host's own kernel /dev/urandom and the
# in-process CRNG (bench-crng) natively for context: this host has no CUSE,
# so nothing of the daemon can be measured natively end to end.
#
# Usage: run-bench.sh BUILDDIR         (or: meson compile -C BUILDDIR bench-vm)
# Prints markdown tables with each figure beside its target; the last line
# is one JSON object holding every figure (guest.* in guest time, native.*
# in host time). Exit: 0 when every figure was measured (whether or not it
# meets its target), 1 when the guest failed or a figure is missing (the
# console log follows), 77 when a needed tool is missing and cannot be
# installed.
# Env: TRUERANDOM_VM_CACHE    kernel cache (default BUILDDIR/vm-cache)
#      TRUERANDOM_BENCH_TIMEOUT  guest time limit in seconds (default 900)
#      TRUERANDOM_BENCH_PHASES  e.g. "wake,park": only those guest phases
#                            (start tput crng trng idle wake park); the
#                            check for missing figures is skipped then
#      TRUERANDOM_BENCH_CPU  QEMU -cpu model for the guest (default: lib.sh's,
#                            max under TCG), e.g. max,avx2=off to see what
#                            the emulated vector unit costs the CRNG
#      TRUERANDOM_VM_ACCEL, VM_MEM (default here 2048: 10,000 reader threads)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../../tests/vm/lib.sh
. "$here/../../tests/vm/lib.sh"

[ $# -eq 1 ] || { echo "usage: $0 BUILDDIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
start=${EPOCHREALTIME//[.,]/}

daemon=$build/daemon/truerandomd
ctl=$build/ctl/truerandomctl
trbench=$build/bench/vm/trbench
work=$build/bench-vm
log=$work/console.log

for f in "$daemon" "$ctl"; do
        [ -x "$f" ] || { echo "bench: $f is not built (meson compile -C $build)" >&2; exit 1; }
done
# The report names the source tree; it should be the one the daemon was
# built from.
src=$(cd "$here/../.." && pwd)
stale=$(find "$src"/pool "$src"/crng "$src"/cuse "$src"/daemon \( -name '*.c' -o -name '*.h' \) -newer "$daemon" \
        -print 2>/dev/null | head -n 1 || true)
[ -z "$stale" ] || echo "bench: warning: $stale is newer than $daemon (meson compile -C $build first?)" >&2
vm_require qemu-system-x86_64:qemu-system-x86 busybox:busybox-static modprobe:kmod depmod:kmod \
        cpio:cpio dpkg-deb:dpkg apt-get:apt
kroot=$(vm_kernel "${TRUERANDOM_VM_CACHE:-$build/vm-cache}") || exit $?
kver=$(vm_kernel_version "$kroot")

rm -rf "$work"
mkdir -p "$work"
if [ ! -x "$trbench" ]; then
        vm_require cc:gcc
        cc -std=c17 -O2 -D_GNU_SOURCE -pthread -static -o "$work/trbench" "$here/trbench.c"
        trbench=$work/trbench
fi

root=$work/initramfs
vm_initramfs_new "$root" "$kroot" cuse
vm_initramfs_add "$root" "$daemon" /usr/sbin/truerandomd
vm_initramfs_add "$root" "$ctl" /usr/bin/truerandomctl
vm_initramfs_add "$root" "$trbench" /usr/bin/trbench
[ -x "$build/bench/bench-crng" ] && vm_initramfs_add "$root" "$build/bench/bench-crng" /usr/bin/bench-crng
install -m 755 "$here/guest-bench.sh" "$root/init"
vm_initramfs_pack "$root" "$work/initramfs.cpio"

host_cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
host_cpus=$(nproc)
qemu_version=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([^ ]*\).*/\1/p')
accel=$(vm_accel)
cpu_args=()
[ -n "${TRUERANDOM_BENCH_CPU:-}" ] && cpu_args=(-cpu "$TRUERANDOM_BENCH_CPU")
tree=$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench: host $host_cpu x $host_cpus, kernel $(uname -r), load $load_before;" \
        "guest kernel $kver, QEMU $qemu_version ($accel${TRUERANDOM_BENCH_CPU:+, -cpu $TRUERANDOM_BENCH_CPU}), tree $tree, console in $log"

# One vCPU, as in the vm suite: with two, the guest marks its TSC unstable
# and every clock read (the jitter source's, and trbench's) goes to hpet.
rc=0
VM_SMP=1 VM_MEM=${VM_MEM:-2048} VM_ECHO='^(BENCH|===|INFO|OK|ERR)' vm_boot "$kroot/boot/vmlinuz-$kver" \
        "$work/initramfs.cpio" "$log" "${TRUERANDOM_BENCH_TIMEOUT:-900}" \
        "rdinit=/init${TRUERANDOM_BENCH_PHASES:+ trphases=$TRUERANDOM_BENCH_PHASES}" "${cpu_args[@]}" || rc=$?
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- native context --------------------------------------------------------
echo "bench: native: the host kernel's /dev/urandom (trbench) and the in-process CRNG (bench-crng)"
native=$work/native.txt
"$trbench" tput 7 250 urandom=/dev/urandom > "$native"
grep '^INFO' "$native" | sed 's/^/bench: native /'
if [ -x "$build/bench/bench-crng" ]; then
        "$build/bench/bench-crng" | tail -n 1 | tr -d '{} ' | tr ',' '\n' | tr -d '"' |
                awk -F: 'NF == 2 && $1 ~ /calls_per_s/ { print "FIG crng." $1 " " $2 }' >> "$native"
fi

# ---- figures ---------------------------------------------------------------
figs=$work/figures.txt
{
        sed -n 's/^\[[ 0-9.]*\] FIG \([^ ]*\) \(.*\)$/guest.\1 \2/p' "$log"
        sed -n 's/^FIG \([^ ]*\) \(.*\)$/native.\1 \2/p' "$native"
} | awk 'NF == 2 && $2 ~ /^-?[0-9]+(\.[0-9]+)?$/' > "$figs"

failed=0
[ $rc = 0 ] || { echo "bench: QEMU exit status $rc$([ $rc = 124 ] && echo ' (timeout)')"; failed=1; }
grep -q '\] BENCH done' "$log" || { echo "bench: the guest did not finish"; failed=1; }
[ -n "${TRUERANDOM_BENCH_PHASES:-}" ] || for k in guest.start.ready_ms_median guest.tput.random.1m.mb_per_s guest.lat32.random.p99_us \
        guest.trng.efficiency_taken guest.wake.p99_ms guest.idle.cpu_pct guest.idle.rss_kib \
        guest.park.rss_kib native.tput.urandom.64k.mb_per_s; do
        grep -q "^$k " "$figs" || { echo "bench: no figure $k"; failed=1; }
done

now=${EPOCHREALTIME//[.,]/}
wall=$(( (now - start) / 1000000 ))

awk -v host_cpu="$host_cpu" -v host_cpus="$host_cpus" -v host_kernel="$(uname -r)" -v guest_kernel="$kver" \
    -v qemu="$qemu_version" -v accel="$accel" -v cpu="${TRUERANDOM_BENCH_CPU:-max}" -v wall="$wall" -v tree="$tree" \
    -v load_before="$load_before" -v load_after="$load_after" '
function g(k) { return (k in v) ? v[k] : "" }
function num(k) { return (k in v) ? v[k] + 0 : -1 }
function verdict(ok) { return ok ? "met" : "**missed**" }
function fmt(x, d) { return x == "" ? "-" : sprintf("%." d "f", x) }
function sc(k, f, d) { return (k in v) ? sprintf("%." d "f", v[k] * f) : "-" }
{ v[$1] = $2; order[++n] = $1 }
END {
        split("32 4k 64k 1m", sz, " ")
        split("32 B|4 KiB|64 KiB|1 MiB", szl, "|")

        printf "\n### 1. Read throughput, guest (%s, -cpu %s, 1 vCPU), guest time, medians of 7 interleaved rounds\n\n", accel, cpu
        print "| read size | drop-in /dev/random | null CUSE floor | kernel /dev/urandom (guest) | random / null (target >= 0.9) | random / urandom (target > 1 at >= 64 KiB) |"
        print "|---|---|---|---|---|---|"
        for (i = 1; i <= 4; i++) {
                s = sz[i]
                rn = g("guest.ratio.random_vs_null." s); ru = g("guest.ratio.random_vs_urandom." s)
                printf "| %s | %s MB/s, %s calls/s | %s MB/s, %s calls/s | %s MB/s, %s calls/s | %s %s | %s %s |\n", szl[i],
                        fmt(g("guest.tput.random." s ".mb_per_s"), 2), fmt(g("guest.tput.random." s ".calls_per_s"), 0),
                        fmt(g("guest.tput.null." s ".mb_per_s"), 2), fmt(g("guest.tput.null." s ".calls_per_s"), 0),
                        fmt(g("guest.tput.urandom." s ".mb_per_s"), 2), fmt(g("guest.tput.urandom." s ".calls_per_s"), 0),
                        fmt(rn, 3), rn == "" ? "" : verdict(rn >= 0.9),
                        fmt(ru, 3), i < 3 ? "(no target)" : ru == "" ? "" : verdict(ru > 1)
        }
        print ""
        print "| 32-byte read() latency, guest time | p50 | p99 |"
        print "|---|---|---|"
        split("random null urandom", dv, " ")
        split("drop-in /dev/random|null CUSE floor|kernel /dev/urandom", dl, "|")
        for (i = 1; i <= 3; i++)
                printf "| %s | %s us | %s us |\n", dl[i], fmt(g("guest.lat32." dv[i] ".p50_us"), 1),
                        fmt(g("guest.lat32." dv[i] ".p99_us"), 1)
        print ""
        print "| the CRNG alone in the guest (bench-crng, no CUSE) | 32 B | 4 KiB | 64 KiB |"
        print "|---|---|---|---|"
        printf "| crng_generate() | %s MB/s | %s MB/s | %s MB/s |\n", sc("guest.crng.crng_calls_per_s_32", 32 / 1e6, 2),
                sc("guest.crng.crng_calls_per_s_4k", 4096 / 1e6, 1), sc("guest.crng.crng_calls_per_s_64k", 65536 / 1e6, 1)
        printf "| raw ChaCha20 keystream (libsodium) | %s MB/s | %s MB/s | %s MB/s |\n",
                sc("guest.crng.keystream_calls_per_s_32", 32 / 1e6, 2),
                sc("guest.crng.keystream_calls_per_s_4k", 4096 / 1e6, 1), sc("guest.crng.keystream_calls_per_s_64k", 65536 / 1e6, 1)
        printf "| getrandom() | %s MB/s | %s MB/s | %s MB/s |\n", sc("guest.crng.getrandom_calls_per_s_32", 32 / 1e6, 2),
                sc("guest.crng.getrandom_calls_per_s_4k", 4096 / 1e6, 1), sc("guest.crng.getrandom_calls_per_s_64k", 65536 / 1e6, 1)
        print ""
        print "Predicted random / null if a drop-in read costs a null read plus crng_generate() of the same bytes:"
        split("4k 64k", ps, " "); split("4096 65536", pb, " ")
        for (i = 1; i <= 2; i++) {
                nb = num("guest.tput.null." ps[i] ".mb_per_s"); cb = num("guest.crng.crng_calls_per_s_" ps[i]) * pb[i] / 1e6
                if (nb > 0 && cb > 0)
                        printf "%s: 1 / (1 + %.1f / %.1f) = %.3f (measured %s)\n", ps[i], nb, cb, 1 / (1 + nb / cb),
                                fmt(g("guest.ratio.random_vs_null." ps[i]), 3)
        }

        printf "\n### Native context (host: %s x %s, kernel %s; no CUSE here)\n\n", host_cpu, host_cpus, host_kernel
        print "| read size | kernel /dev/urandom, host | in-process CRNG (bench-crng), host |"
        print "|---|---|---|"
        for (i = 1; i <= 4; i++) {
                s = sz[i]; c = g("native.crng.crng_calls_per_s_" s)
                cs = c == "" ? "-" : sprintf("%.0f MB/s, %.0f calls/s", c * (i == 1 ? 32 : i == 2 ? 4096 : 65536) / 1e6, c)
                printf "| %s | %s MB/s, %s calls/s | %s |\n", szl[i], fmt(g("native.tput.urandom." s ".mb_per_s"), 1),
                        fmt(g("native.tput.urandom." s ".calls_per_s"), 0), cs
        }
        printf "| 32 B latency | p50 %s us, p99 %s us | |\n", fmt(g("native.lat32.urandom.p50_us"), 2),
                fmt(g("native.lat32.urandom.p99_us"), 2)

        print "\n### 2. /dev/truerandom, guest time\n"
        print "| figure | measured | target |"
        print "|---|---|---|"
        printf "| output, read flat out for %s s | %s bytes/s (%s bits/s) | |\n", fmt(g("guest.trng.window_s"), 1),
                fmt(g("guest.trng.bytes_per_s"), 0), sc("guest.trng.bytes_per_s", 8, 0)
        printf "| credited by the sources | %s bits/s | |\n", fmt(g("guest.trng.credited_bits_per_s"), 0)
        e = g("guest.trng.efficiency_taken")
        printf "| efficiency: output bits / credited bits taken into the served blocks | %s | >= 0.78 (ceiling 0.8): %s |\n",
                fmt(e, 4), e == "" ? "" : verdict(e >= 0.78)
        printf "| efficiency: output bits / all credited bits the sources produced | %s | (context) |\n",
                fmt(g("guest.trng.efficiency_credited"), 4)
        w = g("guest.wake.p99_ms")
        printf "| one block of samples written -> parked read() returns, p50 / p99 / max (%s trials) | %s / %s / %s ms | p99 < 5 ms: %s |\n",
                g("guest.wake.trials"), fmt(g("guest.wake.p50_ms"), 3), fmt(w, 3), fmt(g("guest.wake.max_ms"), 3),
                w == "" ? "" : verdict(w < 5)
        printf "| the same through three pipe wake-ups, no daemon (floor), interleaved | %s / %s / %s ms | |\n",
                fmt(g("guest.wake_floor.p50_ms"), 3), fmt(g("guest.wake_floor.p99_ms"), 3), fmt(g("guest.wake_floor.max_ms"), 3)

        print "\n### 3. Idle and memory, guest time\n"
        print "| figure | measured | target |"
        print "|---|---|---|"
        c = g("guest.idle.cpu_pct")
        printf "| daemon CPU over 10 s, no readers, store full | %s %% | < 0.5 %%: %s |\n", fmt(c, 3), c == "" ? "" : verdict(c < 0.5)
        printf "| the same over 65 s (one 60 s reseed included) | %s %% | |\n", fmt(g("guest.idle.cpu_pct_65s"), 3)
        printf "| RSS idle (default sources + null device) | %s MiB | |\n", sc("guest.idle.rss_kib", 1 / 1024, 1)
        printf "| RSS idle (file source only), before parking | %s MiB | |\n", sc("guest.park.rss_before_kib", 1 / 1024, 1)
        r = ("guest.park.rss_kib" in v) ? v["guest.park.rss_kib"] / 1024 : -1
        printf "| RSS with %s parked /dev/truerandom readers | %s MiB | < 32 MiB: %s |\n", g("guest.park.waiting"),
                sc("guest.park.rss_kib", 1 / 1024, 1), r < 0 ? "" : verdict(r < 32 && num("guest.park.waiting") >= 10000)
        printf "| RSS after they left (peak %s MiB) | %s MiB | |\n", sc("guest.park.hwm_kib", 1 / 1024, 1),
                sc("guest.park.rss_after_kib", 1 / 1024, 1)
        printf "| daemon CPU over 10 s with them parked | %s %% | |\n", fmt(g("guest.park.cpu_pct"), 3)

        print "\n### 4. Start, guest time\n"
        print "| figure | measured | target |"
        print "|---|---|---|"
        m = g("guest.start.ready_ms_median")
        printf "| exec -> READY (parent exits), median of %s (min %s, max %s) | %s ms | < 1 s natively (guest figure): %s |\n",
                g("guest.start.runs"), fmt(g("guest.start.ready_ms_min"), 0), fmt(g("guest.start.ready_ms_max"), 0),
                fmt(m, 0), m == "" ? "" : verdict(m < 1000)
        printf "\nbench: wall time %d s, host load average %s before, %s after, tree %s\n", wall, load_before, load_after, tree

        printf "{\"host_cpu\":\"%s\",\"host_cpus\":%d,\"host_kernel\":\"%s\",\"guest_kernel\":\"%s\",\"qemu\":\"%s\",\"accel\":\"%s\",\"guest_cpu\":\"%s\",\"tree\":\"%s\"",
                host_cpu, host_cpus, host_kernel, guest_kernel, qemu, accel, cpu, tree
        for (i = 1; i <= n; i++)
                printf ",\"%s\":%s", order[i], v[order[i]]
        printf "}\n"
}' "$figs" > "$work/report.txt"

if [ $failed != 0 ]; then
        echo "--- guest console log"
        cat "$log"
        cat "$work/report.txt"
        exit 1
fi
cat "$work/report.txt"
