# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 11. truerandomctl as uid 1000 -----------------------------------------
check_ctl_perm() {
        ok=0
        start_daemon ctl.conf /tmp/ctl.log || { note "no $TRNG"; return 1; }
        rm -f /tmp/alice-raw.bin
        out=$(trclient -u $ALICE exec truerandomctl raw jitter -o /tmp/alice-raw.bin 2>&1)
        rc=$?
        note "raw as uid 1000: exit $rc: $out"
        [ $rc = 1 ] || ok=1
        case "$out" in *"permission denied"*) ;; *) ok=1 ;; esac
        [ ! -e /tmp/alice-raw.bin ] || { note "/tmp/alice-raw.bin left behind"; ok=1; }
        out=$(trclient -u $ALICE exec truerandomctl reseed 2>&1)
        rc=$?
        note "reseed as uid 1000: exit $rc: $out"
        [ $rc = 1 ] || ok=1
        out=$(trclient -u $ALICE exec truerandomctl status 2>&1)
        rc=$?
        echo "$out" | sed 's/^/INFO status (uid 1000): /'
        note "status as uid 1000: exit $rc, $(echo "$out" | wc -l) lines, \"$(echo "$out" | head -n 1)\""
        # A verdict (0 serving, 1 degraded, 2 not serving), not a refusal.
        [ $rc -le 2 ] || ok=1
        case "$out" in "truerandomd "*" serving"*jitter*truerandom-urandom*) ;; *) ok=1 ;; esac
        return $ok
}

run_check 11-ctl-perm check_ctl_perm
