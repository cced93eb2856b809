# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 21. per-uid limits ---------------------------------------------------------
# One uid at its quota of waiting reads: its next read is refused at once,
# while another uid and root still park and are served in turn when the
# sources start. One uid at its quota of open files: EMFILE for it alone.
# One uid flooding the control socket: root's status still answers, 10 of
# 10; a socket full of root's own connections answers "busy", status
# included, with exit status 3.
check_quota() {
        ok=0
        sock=/run/truerandomd/control
        start_daemon quota.conf /tmp/quota.log || { note "no $TRNG"; return 1; }
        trclient -u $ALICE -w 120 killreaders $TRNG 10 1000 5000 >/tmp/quota-alice.out 2>&1 &
        apid=$!
        wait_line /tmp/quota-alice.out '^(READY|ERR|FAIL)' 100 || { kill -KILL $apid; note "no READY"; return 1; }
        note "$(head -n 1 /tmp/quota-alice.out)"
        expect "ERR blocked*EAGAIN*did not block*" trclient -u $ALICE blocked $TRNG 32 500 || ok=1
        trclient -u $BOB -w 120 blocked $TRNG 32 500 60000 >/tmp/quota-bob.out 2>&1 &
        bpid=$!
        trclient -w 120 blocked $TRNG 32 500 60000 >/tmp/quota-root.out 2>&1 &
        rpid=$!
        sleep 1
        note "waiting $(stv devices.name=truerandom.waiting) reads of $(stv devices.name=truerandom.waiting_uids) uids"
        wait $bpid || ok=1
        wait $rpid || ok=1
        note "bob: $(cat /tmp/quota-bob.out)"
        note "root: $(cat /tmp/quota-root.out)"
        kill -USR2 $apid
        wait $apid

        trclient -u $ALICE fds $TRNG 64 >/tmp/quota-fds.out 2>&1 &
        fpid=$!
        wait_line /tmp/quota-fds.out '^(READY|ERR|FAIL)' 100 || { kill -KILL $fpid; note "no READY from fds"; return 1; }
        expect "ERR open*EMFILE on open*" trclient -u $ALICE open $TRNG || ok=1
        expect "OK open*" trclient -u $BOB open $TRNG || ok=1
        expect "OK open*" trclient open $TRNG || ok=1
        kill -USR2 $fpid
        wait $fpid || ok=1

        trclient -u $MALLORY -w 120 ctlflood $sock 32 20 >/tmp/quota-flood.out 2>&1 &
        mpid=$!
        sleep 2
        served=0
        for i in 1 2 3 4 5 6 7 8 9 10; do
                truerandomctl status >/dev/null 2>/tmp/quota-ctl.err
                rc=$?
                if [ $rc -le 2 ]; then
                        served=$((served + 1))
                else
                        note "root's status: exit $rc: $(oneline /tmp/quota-ctl.err)"
                fi
        done
        out=$(trclient -u $BOB exec truerandomctl status 2>&1 >/dev/null)
        rc=$?
        wait $mpid
        note "mallory: $(cat /tmp/quota-flood.out)"
        note "root's status during the flood: $served of 10 answered; bob's: exit $rc${out:+ ($out)}"
        [ $served = 10 ] || ok=1
        [ $rc -le 2 ] || ok=1

        trclient -w 120 ctlflood $sock 16 0 >/tmp/quota-hold.out 2>&1 &
        hpid=$!
        wait_line /tmp/quota-hold.out '^(READY|ERR|FAIL)' 100 || { kill -KILL $hpid; note "no READY from ctlflood"; return 1; }
        note "$(head -n 1 /tmp/quota-hold.out)"
        out=$(trclient -u $ALICE exec truerandomctl status 2>&1)
        rc=$?
        note "alice's status on a full socket: exit $rc: $out"
        case "$out" in *busy*) ;; *) ok=1 ;; esac
        [ $rc = 3 ] || ok=1
        out=$(truerandomctl reseed 2>&1)
        rc=$?
        note "root's reseed on a full socket: exit $rc: $out"
        case "$out" in *busy*) ;; *) ok=1 ;; esac
        [ $rc = 6 ] || ok=1
        kill -USR2 $hpid
        wait $hpid
        return $ok
}

run_check 21-quota check_quota
