# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 6. a stuck source is caught -----------------------------------------
check_health() {
        ok=0
        start_daemon stuck.conf /tmp/health.log || { note "no $TRNG"; return 1; }
        sleep 5
        expect "ERR nbread*EAGAIN" trclient -u $ALICE nbread $TRNG 32 || ok=1
        expect "OK blocked*still waiting*" trclient -u $ALICE blocked $TRNG 32 2000 || ok=1
        line=$(grep -m1 'source file failed permanently' /tmp/health.log)
        note "log: ${line:-no 'source file failed permanently' line}"
        case "$line" in *RCT* | *APT*) ;; *) ok=1 ;; esac
        st=$(truerandomctl status 2>&1)
        echo "$st" | sed 's/^/INFO status: /'
        echo "$st" | grep -qi fail || { note "truerandomctl status does not show the failed source"; ok=1; }
        ctl_status /tmp/st.json
        state=$(jqv /tmp/st.json sources.name=file.state)
        note "status --json: file $state, permanent_rct $(jqv /tmp/st.json sources.name=file.failures.permanent_rct),\
 permanent_apt $(jqv /tmp/st.json sources.name=file.failures.permanent_apt)"
        [ "$state" = failed-permanent ] || { cat /tmp/st.json; ok=1; }
        return $ok
}

run_check 6-health check_health
