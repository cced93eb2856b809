#!/bin/sh
# egd-init.sh - /init of run-egd-vm.sh's guest (busybox sh as PID 1): a
# guest whose virtio-rng is fed by the host's truerandomd over EGD (QEMU's
# rng-egd). One line per check, as guest-init.sh prints them:
#     CHECK <name>: PASS|FAIL <detail>
# then "SUMMARY: N passed, M failed" and power-off.
#
#   egd-hwrng    rng_current is the virtio RNG
#   egd-read     /dev/hwrng gives egdbytes= bytes (figures: bytes/s); the
#                count goes to the host as "INFO egd-guest-bytes N"
#   egd-unique   no 32-byte chunk of them appears twice
#   egd-stall    once the host killed its daemon (it does so on
#                "INFO egd-kill-now"), reads stall and give nothing
#
# Reads of /dev/hwrng wait in the kernel uninterruptibly but for SIGKILL:
# `timeout -s KILL` bounds each.

. /lib/guest-prelude.sh

HW=/sys/class/misc/hw_random
BYTES=$(sed -n 's/.*egdbytes=\([0-9]*\).*/\1/p' /proc/cmdline)
BYTES=${BYTES:-32768}
# Centiseconds of uptime, for rates.
cs() {
        up | tr -d .
}

check_hwrng() {
        NOTE="rng_current $(cat $HW/rng_current) of $(cat $HW/rng_available)"
        case $(cat $HW/rng_current) in virtio_rng.*) return 0 ;; esac
        return 1
}

# dd with iflag=fullblock: a read of /dev/hwrng returns what the device had.
check_read() {
        t0=$(cs)
        timeout -s KILL 240 dd if=/dev/hwrng of=/tmp/got bs=32 count=$((BYTES / 32)) iflag=fullblock 2>/dev/null
        t1=$(cs)
        n=$(wc -c < /tmp/got)
        echo "INFO egd-guest-bytes $n"
        NOTE="$n of $BYTES bytes in $(( (t1 - t0) * 10 )) ms, $(( n * 100 / (t1 - t0 + 1) )) bytes/s"
        [ "$n" -eq "$BYTES" ]
}

check_unique() {
        total=$(od -An -v -tx1 -w32 /tmp/got | wc -l)
        dups=$(od -An -v -tx1 -w32 /tmp/got | sort | uniq -d | wc -l)
        NOTE="$dups of $total chunks repeated"
        [ "$total" -eq $((BYTES / 32)) ] && [ "$dups" -eq 0 ]
}

# The host kills its daemon on the word; a few reads may still find
# bytes QEMU or the kernel held; then every read stalls.
check_stall() {
        echo "INFO egd-kill-now"
        i=0
        while [ $i -lt 60 ]; do
                n=$(timeout -s KILL 3 dd if=/dev/hwrng bs=32 count=1 2>/dev/null | wc -c)
                [ "$n" -eq 0 ] && break
                i=$((i + 1))
        done
        a=$(timeout -s KILL 3 dd if=/dev/hwrng bs=32 count=1 2>/dev/null | wc -c)
        b=$(timeout -s KILL 3 dd if=/dev/hwrng bs=32 count=1 2>/dev/null | wc -c)
        NOTE="$i reads still served after the word; then $a and $b bytes in 3 s each"
        [ $i -lt 60 ] && [ "$a" -eq 0 ] && [ "$b" -eq 0 ]
}

echo "=== guest up at $(up) s: $(uname -r), hwrng $(cat $HW/rng_current 2>/dev/null)"
check egd-hwrng check_hwrng
check egd-read check_read
check egd-unique check_unique
check egd-stall check_stall
echo "SUMMARY: $PASSED passed, $FAILED failed, guest uptime $(up) s"
sync
poweroff -f
