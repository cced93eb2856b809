# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 3. blocking, O_NONBLOCK, poll, interrupts ---------------------------
# signal_reader SIG LIMIT_MS: a reader blocked 500 ms gets SIG; tries again
# (up to 5 times) when a block arrived during those 500 ms.
signal_reader() {
        n=0
        while [ $n -lt 5 ]; do
                trclient drain $TRNG 10000 >/dev/null
                out=$(trclient signal $TRNG "$1" 500 "$2")
                rc=$?
                [ $rc = 3 ] || break
                n=$((n + 1))
        done
        note "$out"
        [ $rc = 0 ]
}

check_blocking() {
        ok=0
        start_daemon slow.conf /tmp/slow.log || { note "no $TRNG"; return 1; }
        expect "OK drain*EAGAIN*" trclient drain $TRNG 10000 || ok=1
        expect "ERR nbread*EAGAIN" trclient -u $ALICE nbread $TRNG 32 || ok=1
        expect "OK poll*POLLIN*" trclient -u $ALICE poll $TRNG 30000 || ok=1
        expect "OK nbread*32 bytes" trclient -u $ALICE nbread $TRNG 32 || ok=1
        signal_reader INT 200 || ok=1
        signal_reader KILL 1000 || ok=1
        return $ok
}

run_check 3-blocking check_blocking
