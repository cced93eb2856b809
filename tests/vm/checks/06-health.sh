# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 6. a stuck source is caught -----------------------------------------
# A file of one byte repeated, credited 2 bits: the running gate measures
# its windows at 0 bits and refuses each; nothing is served, the journal
# says so once, and status shows the source refused (degraded).
check_health() {
        ok=0
        start_daemon stuck.conf /tmp/health.log || { note "no $TRNG"; return 1; }
        wait_value sources.name=file.state refused 100 || { note "file not refused after $WAITED s"; ok=1; }
        expect "ERR nbread*EAGAIN" trclient -u $ALICE nbread $TRNG 32 || ok=1
        expect "OK blocked*still waiting*" trclient -u $ALICE blocked $TRNG 32 2000 || ok=1
        line=$(grep -m1 'source file: the running gate refused a window' /tmp/health.log)
        note "log: ${line:-no 'the running gate refused a window' line}"
        case "$line" in *"estimate 0.000 bits/sample"*) ;; *) ok=1 ;; esac
        [ "$(grep -c 'the running gate refused a window' /tmp/health.log)" = 1 ] || { note "logged more than once"; ok=1; }
        st=$(truerandomctl status 2>&1)
        rc=$?
        echo "$st" | sed 's/^/INFO status: /'
        echo "$st" | grep -q "gate: last REFUSED" || { note "truerandomctl status does not show the refusal"; ok=1; }
        [ $rc = 2 ] || [ $rc = 1 ] || { note "status exit $rc"; ok=1; }
        ctl_status /tmp/st.json
        note "status --json: file $(jqv /tmp/st.json sources.name=file.state),\
 windows refused $(jqv /tmp/st.json sources.name=file.gate.windows_refused), blocks $(jqv /tmp/st.json sources.name=file.blocks)"
        [ "$(jqv /tmp/st.json sources.name=file.gate.windows_credited)" = 0 ] || ok=1
        [ "$(jqv /tmp/st.json sources.name=file.blocks)" = 0 ] || ok=1
        return $ok
}

run_check 6-health check_health
