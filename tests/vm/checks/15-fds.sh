# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 15. 10,000 open files -------------------------------------------------
check_fds() {
        ok=0
        start_daemon guest.conf /tmp/fds.log || { note "no $TRNG"; return 1; }
        base=$(stv devices.name=truerandom.open_files)
        trclient -w 300 fds $TRNG 10000 >/tmp/fds.out 2>&1 &
        fpid=$!
        if ! wait_line /tmp/fds.out '^(READY|ERR|FAIL)' 1800; then
                kill -KILL $fpid
                note "no READY from fds within 180 s"
                return 1
        fi
        held=$(stv devices.name=truerandom.open_files)
        expect "OK read*4096 bytes*" trclient -u $BOB read $TRNG 4096 30000 || ok=1
        expect "OK open*" trclient -u $ALICE open $TRNG || ok=1
        kill -USR2 $fpid
        wait $fpid || ok=1
        note "$(oneline /tmp/fds.out)"
        note "open_files: ${base:-?}, ${held:-?} while held"
        [ -n "$base" ] && [ "$held" = $((base + 10000)) ] || ok=1
        if wait_value devices.name=truerandom.open_files "$base" 100; then
                note "$base again after $WAITED s"
        else
                note "$(stv devices.name=truerandom.open_files) after $WAITED s, not $base"
                ok=1
        fi
        return $ok
}

run_check 15-fds check_fds
