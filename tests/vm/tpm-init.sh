#!/bin/sh
# tpm-init.sh - /init of run-tpm-vm.sh's guest (busybox sh as PID 1): the
# tpm source and the hwrng listing on Debian's kernel, with swtpm as the
# guest's TPM (a TIS device) and a virtio-rng beside it. One line per check,
# as guest-init.sh prints them:
#     CHECK <name>: PASS|FAIL <detail>
# then "SUMMARY: N passed, M failed" and power-off. tpmcheck (tests/vm/
# tpmcheck.c) drives the source; the daemon is not involved yet.
#
#   tpm-device       /dev/tpm0 and /dev/tpmrm0 are there
#   hwrng-list       rng_available lists virtio_rng.0 and tpm-rng-0 (TPM 0)
#   tpm-source       the source opens on /dev/tpmrm0, its self-test passes,
#                    its samples make blocks through the collector (figures
#                    on INFO lines)
#   tpm-no-double-credit  with tpm-rng-0 made current (a test machine may;
#                    the daemon never does), /dev/hwrng is seen to be TPM 0
#                    and the hwrng source credits it 0
#   tpm-gone         the host kills swtpm while the source reads: reads
#                    fail with -EIO (QEMU answers a TPM failure), none hangs
#
# `tpmsecs=S` on the kernel command line: seconds for each figure (default 3).

/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
for ko in $(cat /etc/modules.order); do
        insmod "$ko" || echo "INFO insmod $ko failed"
done

HW=/sys/class/misc/hw_random
SECS=$(sed -n 's/.*tpmsecs=\([0-9]*\).*/\1/p' /proc/cmdline)
SECS=${SECS:-3}
PASSED=0
FAILED=0

up() {
        cut -d' ' -f1 /proc/uptime
}

# check NAME FUNCTION: the function returns 0 on pass and sets NOTE.
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

check_device() {
        NOTE="$(ls -l /dev/tpm0 /dev/tpmrm0 2>&1 | tr -s ' ' | tr '\n' ';')"
        [ -c /dev/tpm0 ] && [ -c /dev/tpmrm0 ]
}

check_list() {
        out=$(tpmcheck --list 2>&1 | grep '^hwrng:')
        NOTE="$out; rng_available: $(cat $HW/rng_available)"
        case "$out" in
        *virtio_rng.0*tpm-rng-0*"(tpm 0)"* | *tpm-rng-0*"(tpm 0)"*virtio_rng.0*) return 0 ;;
        esac
        return 1
}

check_source() {
        out=$(tpmcheck --path /dev/tpmrm0 --seconds "$SECS" --credit 1 2>&1)
        echo "$out" | sed 's/^/INFO /'
        NOTE="$(echo "$out" | grep -E '^tpm-(open|raw|blocks):' | cut -c1-90 | tr '\n' ';')"
        echo "$out" | grep -q '^tpm-open: 0 (ok; passed' &&
                echo "$out" | grep -q '^tpm-raw: [1-9]' &&
                echo "$out" | grep -q '^tpm-blocks: [1-9]'
}

check_double() {
        echo tpm-rng-0 > $HW/rng_current
        out=$(tpmcheck --list 2>&1)
        NOTE="rng_current $(cat $HW/rng_current), rng_quality $(cat $HW/rng_quality 2>/dev/null);\
 $(echo "$out" | grep -E '^hwrng-(current-tpm|max-credit):' | tr '\n' ';')"
        echo "$out" | grep -q '^hwrng-current-tpm: 0 ' &&
                echo "$out" | grep -q '^hwrng-max-credit: 0 mbits'
}

# The host watches the console for "tpm-read 2:" and kills swtpm then.
check_gone() {
        t0=$(up)
        out=$(tpmcheck --path /dev/tpmrm0 --reads 24 2>&1 | while read -r line; do
                echo "INFO $line at $(up) s" >/dev/console
                echo "$line"
        done)
        NOTE="$(echo "$out" | grep -E '^tpm-read [0-9]+: -' | head -n 2 | tr '\n' ';') [$t0 .. $(up) s]"
        echo "$out" | grep -q '^tpm-read 1: 256 ' && echo "$out" | grep -q -E '^tpm-read [0-9]+: -5 '
}

echo "=== guest up at $(up) s: $(uname -r), hwrng $(cat $HW/rng_current) of $(cat $HW/rng_available)"
check tpm-device check_device
check hwrng-list check_list
check tpm-source check_source
check tpm-no-double-credit check_double
echo "INFO KILL-TPM-AFTER tpm-read 2"
check tpm-gone check_gone
echo "SUMMARY: $PASSED passed, $FAILED failed, guest uptime $(up) s"
sync
poweroff -f
