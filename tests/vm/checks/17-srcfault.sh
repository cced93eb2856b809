# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 17. a FIFO whose writer dies, an hwrng that is not there ---------------
check_srcfault() {
        ok=0
        rm -f /tmp/noise.fifo
        mkfifo /tmp/noise.fifo
        # The daemon opens the FIFO as it starts, which waits for a writer.
        trclient -w 120 stream /dev/urandom 1000000000 100 >/tmp/noise.fifo 2>/tmp/writer.out &
        wpid=$!
        start_daemon fifo.conf /tmp/fifo.log || { note "no $TRNG"; kill -KILL $wpid; return 1; }
        if ! wait_value sources.name=file.state healthy 100; then
                note "file source not healthy after $WAITED s"
                kill -KILL $wpid
                return 1
        fi
        kill -KILL $wpid
        wait $wpid 2>/dev/null
        # A waiting reader keeps up the demand: the daemon wants more samples.
        trclient -u $ALICE -w 60 loop $TRNG 30 4096 >/tmp/fifo-reader.out 2>&1 &
        rpid=$!
        if wait_value sources.name=file.state unavailable 100; then
                note "writer killed: file source unavailable after $WAITED s"
        else
                note "writer killed: file source still $(stv sources.name=file.state) after $WAITED s"
                ok=1
        fi
        wait_value devices.name=truerandom.waiting 1 50 || ok=1
        expect "OK cpu*" trclient cpu "$DPID" 5000 5 || ok=1
        ctl_status /tmp/st.json
        kill $rpid
        wait $rpid 2>/dev/null
        note "$(jqv /tmp/st.json devices.name=truerandom.waiting) reader waiting meanwhile"
        for n in file hwrng; do
                state=$(jqv /tmp/st.json "sources.name=$n.state")
                note "$n: $state, running $(jqv /tmp/st.json "sources.name=$n.running"),\
 $(jqv /tmp/st.json "sources.name=$n.read_errors") read errors,\
 last error \"$(jqv /tmp/st.json "sources.name=$n.last_error")\""
                [ "$state" = unavailable ] || ok=1
        done
        alive "$DPID" || { note "daemon gone"; ok=1; }
        rm -f /tmp/noise.fifo
        return $ok
}

run_check 17-srcfault check_srcfault
