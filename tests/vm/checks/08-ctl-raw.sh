# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 8. truerandomctl raw ------------------------------------------------
check_ctl_raw() {
        ok=0
        start_daemon ctl.conf /tmp/ctl.log || { note "no $TRNG"; return 1; }
        t0=$(up)
        out=$(truerandomctl raw jitter --samples 1000000 -o /tmp/raw.bin 2>&1)
        rc=$?
        note "raw jitter --samples 1000000: exit $rc after $(secs "$t0") s${out:+: $out}"
        [ $rc = 0 ] || ok=1
        expect "OK rows /tmp/raw.bin: 1000000 bytes,*" trclient rows /tmp/raw.bin 1000000 || ok=1
        rm -f /tmp/raw.bin
        return $ok
}

run_check 8-ctl-raw check_ctl_raw
