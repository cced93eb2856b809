# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 16. no /dev/cuse --------------------------------------------------------
# nocuse_run ARGS...: without /dev/cuse the daemon must stop at once and say
# what to do.
nocuse_run() {
        t0=$(up)
        timeout 20 truerandomd "$@" >/tmp/nocuse.out 2>&1
        rc=$?
        cat /tmp/nocuse.out >>/tmp/nocuse.log
        note "truerandomd $*: exit $rc after $(secs "$t0") s: $(oneline /tmp/nocuse.out)"
        stray=$(pidof truerandomd)
        if [ -n "$stray" ]; then
                note "still running as $stray"
                kill -KILL "$stray"
                return 1
        fi
        # 124 and up: timeout's, or a signal's.
        [ $rc -ge 1 ] && [ $rc -lt 124 ] && grep -q 'modprobe cuse' /tmp/nocuse.out
}

check_nocuse() {
        ok=0
        DLOG=/tmp/nocuse.log
        mv /dev/cuse /dev/cuse.moved || { note "cannot move /dev/cuse"; return 1; }
        nocuse_run --foreground --config $CONF/guest.conf || ok=1
        nocuse_run --config $CONF/guest.conf || ok=1
        mv /dev/cuse.moved /dev/cuse
        for n in $TRNG $RND $URND; do
                [ ! -e "$n" ] || { note "$n exists"; ok=1; }
        done
        return $ok
}

run_check 16-nocuse check_nocuse
