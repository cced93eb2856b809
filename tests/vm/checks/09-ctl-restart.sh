# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 9. truerandomctl raw --restart --------------------------------------
# The rows come from 1000 fresh instances of the source: one that replays
# the same samples after each open would give identical rows.
check_ctl_restart() {
        ok=0
        start_daemon ctl.conf /tmp/ctl.log || { note "no $TRNG"; return 1; }
        t0=$(up)
        out=$(truerandomctl raw jitter --restart -o /tmp/restart.bin 2>&1)
        rc=$?
        note "raw jitter --restart: exit $rc after $(secs "$t0") s${out:+: $out}"
        [ $rc = 0 ] || ok=1
        expect "OK rows /tmp/restart.bin: 1000000 bytes, * 1000 rows of 1000, 1000 distinct" \
                trclient rows /tmp/restart.bin 1000 || ok=1
        rm -f /tmp/restart.bin
        return $ok
}

run_check 9-ctl-restart check_ctl_restart
