# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 7. fair share between uids ------------------------------------------
# fair_round LABEL ALICE_READ BOB_READ: 4 readers per uid for 10 s; the
# shares must stay within 40-60 %.
fair_round() {
        pids=
        rm -f /tmp/fair-*.out
        for i in 1 2 3 4; do
                trclient -u $ALICE -w 30 loop $TRNG 10 "$2" >/tmp/fair-alice-$i.out 2>&1 &
                pids="$pids $!"
                trclient -u $BOB -w 30 loop $TRNG 10 "$3" >/tmp/fair-bob-$i.out 2>&1 &
                pids="$pids $!"
        done
        wait $pids
        cat /tmp/fair-*.out | sed "s/^/INFO fair $1: /"
        a=$(cat /tmp/fair-alice-*.out | awk '$1 == "OK" { s += $4 } END { print s + 0 }')
        b=$(cat /tmp/fair-bob-*.out | awk '$1 == "OK" { s += $4 } END { print s + 0 }')
        n=$(cat /tmp/fair-*.out | grep -c '^OK loop')
        share=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a + b > 0) printf "%.1f", 100 * a / (a + b); else print "nan" }')
        note "$1: alice (${2}-byte reads) $a bytes, bob (${3}-byte reads) $b bytes: alice $share %, $n/8 readers OK"
        [ "$n" = 8 ] && awk -v s="$share" 'BEGIN { exit !(s >= 40 && s <= 60) }'
}

check_fair() {
        ok=0
        start_daemon fair.conf /tmp/fair.log || { note "no $TRNG"; return 1; }
        fair_round "same demand" 4096 4096 || ok=1
        # Unequal demand: the shares stay near half only if blocks are dealt
        # per uid, not per request.
        fair_round "unequal demand" 65536 32 || ok=1
        return $ok
}

run_check 7-fair check_fair
