# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 5. kill -9 with 50 parked readers -----------------------------------
check_kill9() {
        ok=0
        # Sources start only after 10 minutes: every read parks.
        start_daemon parked.conf /tmp/kill9.log || { note "no $TRNG"; return 1; }
        expect "OK readers*50/50 returned*0 with data*" trclient readers $TRNG 50 1500 "$DPID" 9 2000 || ok=1
        expect "OK gone*" trclient gone 2000 $TRNG $RND $URND || ok=1
        alive "$DPID" && kill -KILL "$DPID"
        wait "$DPID" 2>/dev/null
        DPID=
        trclient gone 2000 $TRNG >/dev/null
        truerandomd --foreground --config $CONF/guest.conf >>/tmp/kill9.log 2>&1 &
        DPID=$!
        # That it serves again, not how soon: the first bytes wait for the
        # startup test and the gate's first window, whose time load sets
        # (2.0 s was crossed once in CI). The time is in the line.
        expect "OK waitread*" trclient waitread $TRNG 32 60000 || ok=1
        return $ok
}

run_check 5-kill9 check_kill9
