#!/bin/sh
# tpm-init.sh - /init of run-tpm-vm.sh's guest (busybox sh as PID 1): the
# tpm source and the hwrng listing on Debian's kernel, with swtpm as the
# guest's TPM (a TIS device) and a virtio-rng beside it. One line per check,
# as guest-init.sh prints them:
#     CHECK <name>: PASS|FAIL <detail>
# then "SUMMARY: N passed, M failed" and power-off. tpmcheck (tests/vm/
# tpmcheck.c) drives the source alone; the built truerandomd (CUSE, its own
# user once set up) runs for hwrng-list with its defaults and stops, so that
# tpm-source's figures have the one vCPU to themselves, then from tpm-serves
# to tpm-daemon-gone with the tpm source credited.
#
#   tpm-device       /dev/tpm0 and /dev/tpmrm0 are there
#   hwrng-list       rng_available lists virtio_rng.0 and tpm-rng-0 (TPM 0),
#                    and so does the daemon's status, as truerandomctl shows
#                    it: every device in rng_available's order (JSON), the
#                    current one as sysfs says (virtio_rng.0, with its
#                    rng_quality), tpm-rng-0 as TPM 0, in the text line and
#                    the OpenMetrics samples too (INFO lines show all three)
#   tpm-source       the source opens on /dev/tpmrm0, its self-test passes,
#                    its samples make blocks through the collector (figures
#                    on INFO lines)
#   tpm-no-double-credit  with tpm-rng-0 made current (a test machine may;
#                    the daemon never does), /dev/hwrng is seen to be TPM 0
#                    and the hwrng source credits it 0
#   tpm-serves       the daemon with [source.tpm] credit = 1 and no other
#                    credited source that runs: the TPM passes its self-test
#                    and startup test, is credited, /dev/truerandom serves
#                    1 KiB from it; the hwrng (tpm-rng-0 current) is credited
#                    0, unavailable: one TPM, never credited twice
#   tpm-gone         the host kills swtpm while the source reads: reads
#                    fail with -EIO (QEMU answers a TPM failure), none hangs
#   tpm-daemon-gone  the running daemon sees it too: its tpm source is
#                    unavailable with "Input/output error" as the reason,
#                    and /dev/truerandom stops serving (fail closed)
#
# `tpmsecs=S` on the kernel command line: seconds for each figure (default 3).

. /lib/guest-prelude.sh

HW=/sys/class/misc/hw_random
SECS=$(sed -n 's/.*tpmsecs=\([0-9]*\).*/\1/p' /proc/cmdline)
SECS=${SECS:-3}
check_device() {
        NOTE="$(ls -l /dev/tpm0 /dev/tpmrm0 2>&1 | tr -s ' ' | tr '\n' ';')"
        [ -c /dev/tpm0 ] && [ -c /dev/tpmrm0 ]
}

# The daemon gives up root for its own user once it is set up; its
# defaults read every source as shipped, /dev/hwrng among them.
printf 'root:x:0:\ntruerandom:x:990:\ntruerandomd:x:989:\n' > /etc/group
printf 'root:x:0:0:root:/root:/bin/sh\ntruerandomd:x:989:989::/nonexistent:/bin/false\n' > /etc/passwd
printf 'passwd: files\ngroup: files\n' > /etc/nsswitch.conf
mkdir -p /etc/truerandomd /var/lib
echo '# the defaults' > /etc/truerandomd/tpm.conf
DLOG=/tmp/truerandomd.log

# start_daemon [CONF]: truerandomd in the background; true once its control
# socket gives a status (truerandomctl's exit 0 to 2), within 60 s.
start_daemon() {
        truerandomd --foreground --config "${1:-/etc/truerandomd/tpm.conf}" >"$DLOG" 2>&1 &
        DPID=$!
        i=0
        while [ $i -lt 600 ]; do
                truerandomctl status --json >/tmp/st.json 2>/dev/null
                [ $? -le 2 ] && return 0
                sleep 0.1
                i=$((i + 1))
        done
        return 1
}

# stop_daemon: SIGTERM, SIGKILL after 5 s.
stop_daemon() {
        kill -TERM "$DPID" 2>/dev/null
        i=0
        while kill -0 "$DPID" 2>/dev/null && [ $i -lt 50 ]; do
                sleep 0.1
                i=$((i + 1))
        done
        kill -KILL "$DPID" 2>/dev/null
        wait "$DPID" 2>/dev/null
}

# jqv QUERY: the values of /tmp/st.json QUERY selects, space-separated
jqv() {
        trclient jq /tmp/st.json "$1" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'
}

# What the daemon's status says of the hwrngs, against sysfs: the names in
# rng_available's order ("none" is no device), the current one, its
# quality, the TPM's; the text line and the OpenMetrics samples.
check_status() {
        avail=$(tr ' ' '\n' <$HW/rng_available | grep -v -x -e none -e '' | tr '\n' ' ' | sed 's/ $//')
        cur=$(cat $HW/rng_current)
        q=$(cat $HW/rng_quality 2>/dev/null)
        if ! start_daemon; then
                NOTE="no status from truerandomd in 60 s: $(tail -n 3 "$DLOG" | tr '\n' ';')"
                stop_daemon
                return 1
        fi
        truerandomctl status >/tmp/st.txt 2>&1
        truerandomctl status --format=openmetrics >/tmp/st.prom 2>&1
        stop_daemon
        text=$(grep '^Hardware RNGs: ' /tmp/st.txt)
        echo "INFO hwrng-list text: $text"
        echo "INFO hwrng-list json: \"hwrng\":$(jqv hwrng)"
        grep '^truerandom_hwrng_' /tmp/st.prom | sed 's/^/INFO hwrng-list openmetrics: /'
        NOTE="$NOTE; status: [$(jqv hwrng.devices.*.name)] current $(jqv hwrng.current)\
 ($(jqv hwrng.devices.current=true.name)) quality $(jqv hwrng.quality), TPM 0 $(jqv hwrng.devices.tpm=0.name)"
        [ "$cur" = virtio_rng.0 ] && [ "$(jqv hwrng.devices.*.name)" = "$avail" ] &&
                [ "$(jqv hwrng.current)" = "$cur" ] && [ "$(jqv hwrng.devices.current=true.name)" = "$cur" ] &&
                [ "$(jqv hwrng.quality)" = "$q" ] && [ "$(jqv hwrng.devices.tpm=0.name)" = tpm-rng-0 ] &&
                [ "$(jqv hwrng.devices.name=tpm-rng-0.current)" = false ] || return 1
        case "$text" in *"tpm-rng-0 (TPM 0)"*) ;; *) return 1 ;; esac
        case "$text" in *"$cur (current, quality $q)"*) ;; *) return 1 ;; esac
        grep -qxF "truerandom_hwrng_device_current{device=\"$cur\"} 1" /tmp/st.prom &&
                grep -qxF 'truerandom_hwrng_device_current{device="tpm-rng-0"} 0' /tmp/st.prom &&
                grep -qxF 'truerandom_hwrng_device_tpm{device="tpm-rng-0"} 0' /tmp/st.prom
}

check_list() {
        out=$(tpmcheck --list 2>&1 | grep '^hwrng:')
        NOTE="$out; rng_available: $(cat $HW/rng_available)"
        case "$out" in
        *virtio_rng.0*tpm-rng-0*"(tpm 0)"* | *tpm-rng-0*"(tpm 0)"*virtio_rng.0*) ;;
        *) return 1 ;;
        esac
        check_status
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

# The daemon with the tpm source credited (1 bit/sample) and no other
# credited source that can run here (jitter and rdseed off; the hwrng on,
# as shipped, while rng_current is still tpm-rng-0 from the check before).
# The daemon's user gets /dev/tpmrm0 through its group, as a drop-in's
# SupplementaryGroups=tss gives it under systemd (truerandomd.conf(5)).
printf '[source.jitter]\nenable = no\n[source.rdseed]\nenable = no\n[source.tpm]\ncredit = 1\n' \
        >/etc/truerandomd/tpm-credit.conf

# jqs: the status again, into /tmp/st.json
jqs() {
        truerandomctl status --json >/tmp/st.json 2>/dev/null
}

# wait_for QUERY VALUE: polls the status until QUERY is VALUE, up to 120 s
# (a hang bound: a slower guest passes later).
wait_for() {
        i=0
        while [ $i -lt 1200 ]; do
                jqs
                [ "$(jqv "$1")" = "$2" ] && return 0
                sleep 0.1
                i=$((i + 1))
        done
        return 1
}

# tpm-serves: the daemon opens the TPM, health-tests and credits it, and
# /dev/truerandom serves from it alone; the same TPM through /dev/hwrng
# (tpm-rng-0 current) is credited 0 and unavailable, never a second time.
check_serves() {
        chgrp truerandomd /dev/tpmrm0 && chmod 0660 /dev/tpmrm0
        if ! start_daemon /etc/truerandomd/tpm-credit.conf || ! wait_for trng_serving true; then
                NOTE="not serving in 120 s: $(jqv sources.name=tpm); $(tail -n 3 "$DLOG" | tr '\n' ';')"
                return 1
        fi
        t0=$(up)
        n=$(dd if=/dev/truerandom bs=32 count=32 2>/dev/null | wc -c)
        t1=$(up)
        jqs
        grep -E 'source (tpm|hwrng)' "$DLOG" | sed 's/^/INFO tpm-serves log: /'
        echo "INFO tpm-serves json: $(jqv sources.name=tpm)"
        NOTE="read $n bytes in $t0 .. $t1 s; tpm: $(jqv sources.name=tpm.state), credited\
 $(jqv sources.name=tpm.credited); hwrng (rng_current $(cat $HW/rng_current)): $(jqv sources.name=hwrng.state),\
 $(jqv sources.name=hwrng.last_error); blocks served $(jqv store.blocks_served)"
        [ "$n" = 1024 ] && [ "$(jqv sources.name=tpm.state)" = healthy ] &&
                [ "$(jqv sources.name=tpm.credited)" = true ] &&
                [ "$(jqv sources.name=hwrng.state)" = unavailable ] &&
                grep -q 'source tpm passed its startup health test' "$DLOG"
}

# tpm-daemon-gone: once the host has killed swtpm (tpm-gone), the running
# daemon's next reads fail: its tpm source is unavailable with the error
# as the reason, and /dev/truerandom, with no other credited source, stops
# serving (fail closed) rather than emit anything else.
check_daemon_gone() {
        cat /dev/truerandom >/dev/null 2>&1 &
        reader=$!
        wait_for sources.name=tpm.state unavailable
        ok=$?
        kill "$reader" 2>/dev/null
        wait_for trng_serving false || ok=1
        NOTE="tpm: $(jqv sources.name=tpm.state), $(jqv sources.name=tpm.last_error); serving $(jqv trng_serving);\
 log: $(grep -E 'source tpm (unavailable|failed)' "$DLOG" | head -n 1 | cut -c1-100)"
        stop_daemon
        # jqv leaves JSON's escapes: "Input\/output error".
        case "$(jqv sources.name=tpm.last_error)" in *output\ error) ;; *) return 1 ;; esac
        [ $ok -eq 0 ]
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
check tpm-serves check_serves
echo "INFO KILL-TPM-AFTER tpm-read 2"
check tpm-gone check_gone
check tpm-daemon-gone check_daemon_gone
echo "SUMMARY: $PASSED passed, $FAILED failed, guest uptime $(up) s"
sync
poweroff -f
