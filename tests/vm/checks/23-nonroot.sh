# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 23. not root after set-up -------------------------------------------------
# Every thread (undropped-threads says which is not dropped), then what
# would need root again.
check_nonroot() {
        ok=0
        start_daemon rootonly.conf /tmp/nonroot.log || { note "no $TRNG"; return 1; }
        wait_value sources.name=file.state healthy 300 || { note "file source not healthy after $WAITED s"; ok=1; }
        note "log: $(grep -m1 'set up: running as' /tmp/nonroot.log)"
        grep -q 'set up: running as user truerandomd (uid 989, gid 989), no capability, no_new_privs' \
                /tmp/nonroot.log || ok=1
        # Every thread, a raw export's among them while one runs.
        truerandomctl raw jitter --samples 100000000 -o /tmp/nonroot-raw.bin >/dev/null 2>&1 &
        rpid=$!
        sleep 2
        set -- /proc/"$DPID"/task/*
        threads=$#
        bad=$(undropped-threads "$DPID")
        note "$threads threads (the loop, the file collector, a raw export): ${bad:-each with uids and gids 989, CapInh CapPrm CapEff CapBnd CapAmb 0, NoNewPrivs 1}"
        [ -z "$bad" ] && [ "$threads" -ge 3 ] || ok=1
        grep -E '^(Uid|Gid|CapEff|CapBnd|NoNewPrivs):' /proc/"$DPID"/status | tr '\t' ' ' | sed 's/^/INFO nonroot: /'
        kill $rpid 2>/dev/null
        wait $rpid 2>/dev/null
        rm -f /tmp/nonroot-raw.bin
        # What would need root again: a clear refusal, nothing half done.
        out=$(truerandomctl raw file --samples 1000 -o /tmp/nonroot-file.bin 2>&1)
        rc=$?
        note "raw file (0600 root): exit $rc: $out"
        [ $rc != 0 ] || ok=1
        case "$out" in *"Permission denied"*"without root since set-up"*) ;; *) ok=1 ;; esac
        [ ! -e /tmp/nonroot-file.bin ] || ok=1
        sed -i 's/^trng_mode = 0440$/trng_mode = 0444/' $CONF/rootonly.conf
        kill -HUP "$DPID"
        if wait_line /tmp/nonroot.log 'reload: \[device\] trng_mode changes the device nodes' 50; then
                note "reload to trng_mode 0444: $(grep -m1 'reload: \[device\] trng_mode' /tmp/nonroot.log)"
        else
                note "reload to trng_mode 0444: no refusal in the log"
                ok=1
        fi
        m=$(stat -c '%a %u:%g' $TRNG)
        note "$TRNG still $m; reload $(stv reload.result)"
        [ "$m" = "440 0:990" ] && [ "$(stv reload.result)" = refused ] || ok=1
        sed -i -e 's/^trng_mode = 0444$/trng_mode = 0440/' -e 's/rootonly.bin$/rootonly2.bin/' $CONF/rootonly.conf
        kill -HUP "$DPID"
        if wait_line /tmp/nonroot.log 'reload: source file: .*rootonly2.bin is not readable by uid 989' 50; then
                note "reload to another root-only file: $(grep -m1 'rootonly2.bin is not readable' /tmp/nonroot.log)"
        else
                note "reload to another root-only file: no refusal in the log"
                ok=1
        fi
        [ "$(stv sources.name=file.state)" = healthy ] || { note "the file source did not keep running"; ok=1; }
        sed -i 's/rootonly2.bin$/rootonly.bin/' $CONF/rootonly.conf
        alive "$DPID" || { note "daemon gone"; ok=1; }
        # By hand as a user who may not open /dev/cuse: said what to do.
        out=$(trclient -u $ALICE exec truerandomd --foreground --config $CONF/alice.conf 2>&1)
        rc=$?
        note "started as uid 1000: exit $rc: $out"
        [ $rc = 1 ] || ok=1
        case "$out" in *"cannot open /dev/cuse: Permission denied"*"start it as root"*) ;; *) ok=1 ;; esac
        return $ok
}

run_check 23-nonroot check_nonroot
