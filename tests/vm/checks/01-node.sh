# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 1. node, owner, group gate ------------------------------------------
check_node() {
        ok=0
        # Without --foreground, the parent returns once the devices are up.
        truerandomd --config $CONF/guest.conf >>/tmp/node.log 2>&1
        rc=$?
        DLOG=/tmp/node.log
        DPID=$(pidof truerandomd)
        if [ $rc != 0 ] || [ ! -c $TRNG ]; then
                note "daemon exit status $rc, $TRNG $(ls -l $TRNG 2>&1)"
                return 1
        fi
        m=$(stat -c '%F %a %u:%g' $TRNG)
        note "$TRNG: $m (0:990 is root:truerandom)"
        [ "$m" = "character special file 440 0:990" ] || ok=1
        expect "OK read*4096 bytes*" trclient -u $ALICE read $TRNG 4096 30000 || ok=1
        expect "ERR open*EACCES on open*" trclient -u $MALLORY open $TRNG || ok=1
        return $ok
}

run_check 1-node check_node
