#!/bin/bash
# run-fresh-check.sh - the `fresh` suite: the README's two commands, as
# root with no standard input, in a fresh `debootstrap --variant=minbase`
# chroot of this machine's Debian release, on a copy of the source tree
# (the files git tracks, and those it does not ignore). It proves what a
# fresh machine, and CI, see: an install step missing from scripts/deps.sh
# or a build that needs what minbase lacks fails here. In the chroot,
# test.sh builds every configuration but runs only the unit suite: the
# host ran every suite already.
#
#   run-fresh-check.sh SOURCEDIR BUILDDIR
#
# Passes when `scripts/run.sh` and then `scripts/test.sh` succeed in the
# chroot and test.sh compiled nothing that run.sh had built. Exit 77
# (meson's skip): not root, or already inside such a chroot (the suite does
# not recurse into itself). The chroot's mounts are undone on every way
# out (the end, a failure, SIGINT/SIGTERM/SIGHUP, meson's timeout), and the
# chroot is removed only once nothing is mounted inside it.
# Env: TRUERANDOM_FRESH_KEEP=1   keep the chroot (for a look inside)
#      MIRROR                    the Debian mirror (default: apt's)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../vm/lib.sh"
vm_report_setup_failure fresh

[ $# -eq 2 ] || { echo "usage: $0 SOURCEDIR BUILDDIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
marker=/etc/truerandom-fresh-chroot

if [ -n "${TRUERANDOM_IN_FRESH_CHROOT:-}" ] || [ -e "$marker" ]; then
        vm_skip "already inside a fresh chroot: the check does not run itself again"
fi
[ "$(id -u)" = 0 ] || vm_skip "debootstrap, chroot and mounts need root"
vm_require debootstrap:debootstrap chroot:coreutils mount:mount

work=$build/fresh-check
root=$work/root
start=${EPOCHREALTIME//[.,]/}
seconds() { echo $(( (${EPOCHREALTIME//[.,]/} - start) / 1000000 )); }

# Mounts below $root, deepest first.
mounts_inside() {
        awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

cleanup() {
        local rc=$? pid m left
        trap - EXIT INT TERM HUP
        vm_say_setup_failure "$rc"
        # Whatever still runs in the chroot (a daemon run.sh left, a guest)
        # holds its mounts: end it first.
        for pid in $(ls /proc | grep -E '^[0-9]+$'); do
                [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$root" ] && kill -TERM "$pid" 2>/dev/null
        done
        sleep 1
        for pid in $(ls /proc | grep -E '^[0-9]+$'); do
                [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$root" ] && kill -KILL "$pid" 2>/dev/null
        done
        for m in $(mounts_inside); do
                umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || echo "fresh: cannot unmount $m" >&2
        done
        left=$(mounts_inside)
        if [ -n "$left" ]; then
                # Removing the tree through a mounted /dev would remove the
                # host's device nodes: leave it, and say so.
                echo "fresh: still mounted, $root left in place: $left" >&2
                [ "$rc" -ne 0 ] || rc=1
        elif [ -z "${TRUERANDOM_FRESH_KEEP:-}" ]; then
                rm -rf --one-file-system "$root"
        fi
        exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# A chroot left by a run that was killed outright (SIGKILL): its mounts
# first, then the tree.
if [ -n "$(mounts_inside)" ]; then
        for m in $(mounts_inside); do umount "$m" 2>/dev/null || umount -l "$m"; done
fi
[ -z "$(mounts_inside)" ] || { echo "fresh: $root still has mounts; not touching it" >&2; exit 1; }
rm -rf --one-file-system "$root"
mkdir -p "$work"

release=$(vm_debian_release)
mirror=$(vm_debian_mirror)

echo "fresh: debootstrap --variant=minbase $release from $mirror into $root"
debootstrap --variant=minbase "$release" "$root" "$mirror" > "$work/debootstrap.log" 2>&1 &
if ! wait $!; then
        tail -n 30 "$work/debootstrap.log"
        echo "fresh: debootstrap failed (log: $work/debootstrap.log)"
        exit 1
fi
t_debootstrap=$(seconds)
touch "$root$marker"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# The tree as a fresh clone would have it, plus what is not committed yet
# but not ignored either (what the next commit would hold).
mkdir -p "$root/src"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
        (cd "$src" && git ls-files -z --cached --others --exclude-standard |
                while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
                tar --null -T - -cf -) | tar -C "$root/src" -xf -
else
        tar -C "$src" --exclude='./build*' -cf - . | tar -C "$root/src" -xf -
fi

# Fresh kernel file systems, not binds of the host's: unmounting a bind of a
# shared /dev/pts can unmount the host's own.
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount -t devtmpfs devtmpfs "$root/dev"
mkdir -p "$root/dev/pts" "$root/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
mount -t tmpfs -o mode=1777 shm "$root/dev/shm"

echo "fresh: in the chroot: scripts/run.sh && scripts/test.sh (as root, no standard input)"
rc=0
# In the background, waited for: bash runs a trap only once the foreground
# command has ended, and a signal must clean up now, not in 20 minutes.
chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb CI="${CI:-}" \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TRUERANDOM_IN_FRESH_CHROOT=1 \
        /bin/sh -c 'cd /src && scripts/run.sh && echo "### test.sh" && scripts/test.sh' \
        </dev/null > "$work/chroot.log" 2>&1 &
wait $! || rc=$?
t_total=$(seconds)
# The chroot goes with cleanup(): keep each build's test log beside
# chroot.log, where a failure can still be read.
for log in "$root"/src/build*/meson-logs/testlog.txt; do
        [ -f "$log" ] || continue
        b=${log#"$root/src/"}
        cp "$log" "$work/testlog-${b%%/*}.txt" 2>/dev/null || true
done

# test.sh's first build must be ninja's "no work to do": run.sh built it.
rebuilt=$(sed -n '/^### test.sh$/,/^=== build:/p' "$work/chroot.log" | grep -c 'Compiling C object' || true)
tail -n 60 "$work/chroot.log"
echo "fresh: debootstrap ${t_debootstrap} s, the README's commands $(( t_total - t_debootstrap )) s, total ${t_total} s"
[ "$rc" -eq 0 ] || { echo "fresh: the README's commands failed in a fresh $release minbase (exit $rc; logs: $work/chroot.log, $work/testlog-*.txt)"; exit 1; }
[ "$rebuilt" -eq 0 ] || { echo "fresh: test.sh compiled $rebuilt files again that run.sh had built"; exit 1; }
grep -q '^[0-9]* passed, 0 failed$' "$work/chroot.log" || { echo "fresh: test.sh did not end in 'N passed, 0 failed'"; exit 1; }
echo "fresh: the README's commands pass in a fresh $release minbase chroot"
