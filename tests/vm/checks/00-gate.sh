# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 0. the running gate credits the guest's jitter ----------------------
# Jitter is the only credited source here (no RDSEED under TCG, virtio-rng
# worth 0). Nothing serves before the gate's first verdict on a window of
# its samples; then the credit in force is half of each window's estimate
# (cap 4 here, so that it is the estimate that sets it), and it moves with
# the windows while the guest is idle and while two busy loops load it.
# The figure the issue asks for: the time from start to the first 64
# bytes of /dev/truerandom in the guest.

# gate_samples FILE SECONDS: a line "estimate credit judged" every 0.5 s.
gate_samples() {
        : >"$1"
        end=$(awk -v a="$(up)" -v s="$2" 'BEGIN { print a + s }')
        while awk -v a="$(up)" -v e="$end" 'BEGIN { exit !(a < e) }'; do
                trclient drain $TRNG 4096 >/dev/null 2>&1
                ctl_status /tmp/gs.json
                echo "$(jqv /tmp/gs.json sources.name=jitter.gate.estimate_bits)\
 $(jqv /tmp/gs.json sources.name=jitter.credit_bits)\
 $(jqv /tmp/gs.json sources.name=jitter.gate.windows_credited)\
 $(jqv /tmp/gs.json sources.name=jitter.gate.windows_refused)" >>"$1"
                sleep 0.5
        done
}

# gate_consistent FILE: every line's credit is min(4, estimate / 2) within
# the status's rounding; prints "min..max of the credit, windows".
gate_consistent() {
        awk 'NF == 4 && $1 != "" && $1 != "null" {
                want = $1 / 2; if (want > 4) want = 4
                if ($2 > want + 0.0015 || ($2 > 0 && $2 < want - 0.0015)) bad++
                if (n == 0 || $2 < lo) lo = $2
                if (n == 0 || $2 > hi) hi = $2
                n++; w = $3 + $4
        } END { printf "%s %.3f %.3f %d %d\n", (bad || n == 0) ? "BAD" : "OK", lo, hi, w, n }' "$1"
}

check_gate() {
        ok=0
        t0=$(up)
        start_daemon gate.conf /tmp/gate.log || { note "no $TRNG"; return 1; }
        expect "OK read*64 bytes*" trclient -u $ALICE read $TRNG 64 60000 || ok=1
        first=$(secs "$t0")
        echo "INFO first 64 bytes of $TRNG $first s after truerandomd started (TCG guest, jitter through the gate)"
        note "first 64 bytes $first s after start"
        grep -q 'source jitter: the running gate credited its first window' /tmp/gate.log ||
                { note "no first-window line in the log"; ok=1; }
        ctl_status /tmp/st.json
        [ "$(jqv /tmp/st.json sources.name=jitter.credit_origin)" = auto ] || ok=1
        [ "$(jqv /tmp/st.json sources.name=jitter.gate.window)" = 65536 ] || ok=1

        gate_samples /tmp/idle.txt 8
        sh -c 'while :; do :; done' &
        l1=$!
        sh -c 'while :; do :; done' &
        l2=$!
        gate_samples /tmp/loaded.txt 8
        kill $l1 $l2
        wait $l1 $l2 2>/dev/null
        gate_samples /tmp/after.txt 8
        for phase in idle loaded after; do
                set -- $(gate_consistent /tmp/$phase.txt)
                echo "INFO gate $phase: credit $2..$3 bits/sample over $5 looks, $4 windows judged by then"
                note "$phase: credit $2..$3"
                [ "$1" = OK ] || { note "$phase: a credit not min(4, estimate/2)"; cat /tmp/$phase.txt; ok=1; }
        done
        # It moves: not one value from start to end.
        moves=$(cat /tmp/idle.txt /tmp/loaded.txt /tmp/after.txt | awk 'NF == 4 { print $2 }' | sort -u | wc -l)
        [ "$moves" -ge 2 ] || { note "the credit never moved"; ok=1; }
        grep 'source jitter' /tmp/gate.log | head -n 5 | sed 's/^/INFO log: /'
        # The daemon's memory after 24 s of serving through the gate: its
        # windows, the estimators' peak on one, the store, the CRNG.
        echo "INFO truerandomd memory: $(grep -E '^Vm(RSS|HWM)' /proc/$DPID/status | tr -s ' \t' ' ' | paste -sd, -)"
        return $ok
}

run_check 0-gate check_gate
