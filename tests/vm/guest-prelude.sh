# shellcheck shell=sh
# guest-prelude.sh - what every /init of the project's busybox guests does
# first. vm_initramfs_new (lib.sh) installs it as /lib/guest-prelude.sh in
# every initramfs it makes, and each init sources it before anything else:
# busybox's applets, /proc, /sys, /dev, /tmp and /run, and the modules the
# harness listed, in their order. INSMOD_TAG, set before sourcing, starts
# the line a failed insmod prints (default INFO), for harnesses that read
# their own prefix off the console. Then two helpers the checks share:
#   up                     seconds since boot, as /proc/uptime says
#   check NAME FUNCTION    one result line "CHECK NAME: PASS|FAIL $NOTE",
#                          counted in PASSED and FAILED; FUNCTION returns 0
#                          on pass and sets NOTE

/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
for ko in $(cat /etc/modules.order); do
        insmod "$ko" || echo "${INSMOD_TAG:-INFO} insmod $ko failed"
done

PASSED=0
FAILED=0

up() {
        cut -d' ' -f1 /proc/uptime
}

check() {
        NOTE=
        if $2; then
                PASSED=$((PASSED + 1))
                echo "CHECK $1: PASS $NOTE"
        else
                FAILED=$((FAILED + 1))
                echo "CHECK $1: FAIL $NOTE"
        fi
}
