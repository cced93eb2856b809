# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 0. credit = auto: the jitter source assessed in this guest ------------
# Jitter is the only credited source here (no RDSEED under TCG, virtio-rng
# worth 0): nothing serves until the daemon has assessed it. Then a second
# start takes the stored assessment at once.
check_auto() {
        ok=0
        rm -rf /var/lib/truerandomd
        t0=$(up)
        start_daemon guest.conf /tmp/auto.log || { note "no $TRNG"; return 1; }
        ctl_status /tmp/st.json
        state=$(jqv /tmp/st.json sources.name=jitter.state)
        origin=$(jqv /tmp/st.json sources.name=jitter.credit_origin)
        note "at start: jitter $state ($origin), /dev/truerandom serving $(jqv /tmp/st.json trng_serving)"
        [ "$state" = assessing ] && [ "$origin" = pending ] || ok=1
        expect "ERR nbread*EAGAIN" trclient -u $ALICE nbread $TRNG 32 || ok=1
        wait_value sources.name=jitter.state healthy 3000 || { note "jitter not healthy after $WAITED s"; return 1; }
        took=$(secs "$t0")
        ctl_status /tmp/st.json
        e=sources.name=jitter.estimate
        line="jitter auto credit in this guest: $(jqv /tmp/st.json sources.name=jitter.credit_bits) bits/sample\
 ($(jqv /tmp/st.json sources.name=jitter.credit_origin), cap $(jqv /tmp/st.json sources.name=jitter.credit_cap_bits));\
 min-entropy $(jqv /tmp/st.json $e.min_entropy) (H_original $(jqv /tmp/st.json $e.h_original),\
 H_bitstring $(jqv /tmp/st.json $e.h_bitstring)), $(jqv /tmp/st.json $e.samples) samples;\
 credited $took s after start"
        echo "INFO $line"
        note "$line"
        grep 'source jitter' /tmp/auto.log | sed 's/^/INFO log: /'
        grep -q 'source jitter: assessing it on this machine' /tmp/auto.log || { note "no 'assessing' line"; ok=1; }
        grep -q 'source jitter: its assessment should take about' /tmp/auto.log || { note "no expected time"; ok=1; }
        grep -q 'source jitter: credit .* from the new assessment' /tmp/auto.log || { note "no credit line"; ok=1; }
        [ -s /var/lib/truerandomd/assessment.json ] || { note "no assessment.json"; ok=1; }
        expect "OK read*64 bytes*" trclient -u $ALICE read $TRNG 64 30000 || ok=1
        stop_daemon
        t0=$(up)
        start_daemon guest.conf /tmp/auto2.log || { note "no $TRNG on the second start"; return 1; }
        expect "OK read*64 bytes*" trclient -u $ALICE read $TRNG 64 30000 || ok=1
        note "second start: first 64 bytes $(secs "$t0") s after start"
        ctl_status /tmp/st.json
        [ "$(jqv /tmp/st.json sources.name=jitter.estimate.measured)" = stored ] || { note "not the stored one"; ok=1; }
        grep -q 'assessing it' /tmp/auto2.log && { note "assessed again"; ok=1; }
        return $ok
}

run_check 0-auto check_auto
