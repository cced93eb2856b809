# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 10. truerandomctl status --json ---------------------------------------
check_ctl_json() {
        ok=0
        start_daemon ctl.conf /tmp/ctl.log || { note "no $TRNG"; return 1; }
        wait_value sources.name=jitter.state healthy 100 || { note "jitter not healthy after $WAITED s"; ok=1; }
        ctl_status /tmp/st.json || { note "status --json failed: $(cat /tmp/st.json)"; return 1; }
        expect "OK json*" trclient json /tmp/st.json || { cat /tmp/st.json; return 1; }
        names=$(jqv /tmp/st.json 'sources.*.name')
        list=
        for n in $names; do
                state=$(jqv /tmp/st.json "sources.name=$n.state")
                list="$list $n=$state"
                [ "$(jqv /tmp/st.json "sources.name=$n.enabled")" = true ] || { note "$n not enabled"; ok=1; }
                case "$state" in
                startup | healthy | failed-intermittent | failed-permanent | unavailable | mixed | refused) ;;
                *) note "$n: undocumented state '$state'"; ok=1 ;;
                esac
        done
        devices=$(jqv /tmp/st.json 'devices.*.name')
        note "sources:$list; devices: $devices"
        [ "$names" = "jitter rdseed hwrng tpm kernel file" ] || ok=1
        [ "$(jqv /tmp/st.json sources.name=jitter.state)" = healthy ] || ok=1
        [ "$(jqv /tmp/st.json sources.name=kernel.state)" = mixed ] || ok=1
        [ "$(jqv /tmp/st.json sources.name=file.credited)" = true ] || ok=1
        [ "$devices" = "truerandom truerandom-random truerandom-urandom" ] || ok=1
        # The guest's jitter passed its self-test at open (TCG: the clock
        # steps by 2 with a rare odd delta), said so in the journal's
        # stand-in, and the running gate credited its windows.
        selftest=$(jqv /tmp/st.json sources.name=jitter.selftest.result)
        last=$(jqv /tmp/st.json sources.name=jitter.gate.last)
        note "jitter self-test $selftest: $(jqv /tmp/st.json sources.name=jitter.selftest.detail);" \
                "gate: last $last, estimate $(jqv /tmp/st.json sources.name=jitter.gate.estimate_bits)" \
                "bits, $(jqv /tmp/st.json sources.name=jitter.gate.windows_credited) windows credited"
        grep "sampler self-test" /tmp/ctl.log | head -n 1 | sed 's/^/INFO daemon log: /'
        [ "$selftest" = passed ] || ok=1
        [ "$last" = credited ] || ok=1
        grep -q "source jitter: sampler self-test passed" /tmp/ctl.log || { note "no self-test line in the log"; ok=1; }
        [ $ok = 0 ] || cat /tmp/st.json
        return $ok
}

run_check 10-ctl-json check_ctl_json
