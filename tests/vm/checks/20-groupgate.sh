# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 20. the daemon's own group gate -------------------------------------------
# /dev/truerandom chmod'ed 0444 (a missing udev rule, a mistake): the kernel
# lets anyone open it, the daemon must not. carol (1003) is a member by her
# primary group only (the request carries it), alice through a
# supplementary one, which the daemon reads from /proc/PID/task/TID/status.
# With /proc remounted hidepid=invisible the daemon, not root since set-up,
# cannot read alice's status: she is refused (fail closed), carol is not.
check_groupgate() {
        ok=0
        start_daemon guest.conf /tmp/gate.log || { note "no $TRNG"; return 1; }
        chmod 0444 $TRNG
        note "$TRNG: $(stat -c '%a %u:%g' $TRNG)"
        expect "ERR open*EACCES on open*" trclient -u $MALLORY open $TRNG || ok=1
        expect "OK read*32 bytes*" trclient -u $ALICE read $TRNG 32 30000 || ok=1
        expect "OK read*32 bytes*" trclient -u $CAROL read $TRNG 32 30000 || ok=1
        expect "OK read*32 bytes*" trclient read $TRNG 32 30000 || ok=1
        mount -o remount,hidepid=invisible /proc || { note "cannot remount /proc hidepid=invisible"; return 1; }
        expect "ERR open*EACCES on open*" trclient -u $ALICE open $TRNG || ok=1
        expect "OK read*32 bytes*" trclient -u $CAROL read $TRNG 32 30000 || ok=1
        expect "ERR open*EACCES on open*" trclient -u $MALLORY open $TRNG || ok=1
        expect "OK read*32 bytes*" trclient read $TRNG 32 30000 || ok=1
        mount -o remount,hidepid=off /proc
        return $ok
}

run_check 20-groupgate check_groupgate
