# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 13. 100 readers killed at once ----------------------------------------
check_killed() {
        ok=0
        start_daemon slow.conf /tmp/killed.log || { note "no $TRNG"; return 1; }
        trclient drain $TRNG 10000 >/dev/null
        trclient killreaders $TRNG 100 1000 2000 >/tmp/killed.out 2>&1 &
        kpid=$!
        if ! wait_line /tmp/killed.out '^(READY|ERR|FAIL)' 300; then
                kill -KILL $kpid
                note "no READY from killreaders"
                return 1
        fi
        ctl_status /tmp/st.json
        before=$(jqv /tmp/st.json devices.name=truerandom.waiting)
        kill -USR2 $kpid
        wait $kpid
        rc=$?
        note "$(oneline /tmp/killed.out)"
        note "status: ${before:-?} waiting before SIGKILL"
        [ $rc = 0 ] || ok=1
        [ "${before:-0}" -ge 90 ] || ok=1
        if wait_value devices.name=truerandom.waiting 0 50; then
                note "0 waiting $WAITED s after the readers were gone"
        else
                note "still $(stv devices.name=truerandom.waiting) waiting after $WAITED s"
                ok=1
        fi
        expect "OK read*32 bytes*" trclient -u $ALICE read $TRNG 32 10000 || ok=1
        return $ok
}

run_check 13-killed check_killed
