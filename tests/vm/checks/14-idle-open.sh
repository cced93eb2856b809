# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 14. a reader that opens and never reads ---------------------------------
check_idle_open() {
        ok=0
        start_daemon guest.conf /tmp/idle.log || { note "no $TRNG"; return 1; }
        base=$(stv devices.name=truerandom.open_files)
        trclient -u $ALICE fds $TRNG 1 >/tmp/idle.out 2>&1 &
        hpid=$!
        wait_line /tmp/idle.out '^(READY|ERR|FAIL)' 100 || { kill -KILL $hpid; note "no READY from fds"; return 1; }
        held=$(stv devices.name=truerandom.open_files)
        expect "OK read*4096 bytes*" trclient -u $BOB read $TRNG 4096 30000 || ok=1
        expect "OK read*4096 bytes*" trclient -u $ALICE read $TRNG 4096 30000 || ok=1
        kill -USR2 $hpid
        wait $hpid || ok=1
        note "$(oneline /tmp/idle.out)"
        note "open_files: ${base:-?}, ${held:-?} while held"
        [ -n "$base" ] && [ "$held" = $((base + 1)) ] || ok=1
        if wait_value devices.name=truerandom.open_files "$base" 50; then
                note "$base again after $WAITED s"
        else
                note "$(stv devices.name=truerandom.open_files) after $WAITED s, not $base"
                ok=1
        fi
        return $ok
}

run_check 14-idle-open check_idle_open
