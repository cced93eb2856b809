# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 22. privileged = CAP_SYS_ADMIN in the initial user namespace ---------
# Root of a user namespace of its own (unshare -Ur, done by trclient -n) has
# every capability in CapEff: each privileged ioctl must still be EPERM, for
# uid 65534 and for root's own such namespace; real root still gets through.
check_userns() {
        ok=0
        start_daemon guest.conf /tmp/userns.log || { note "no $TRNG"; return 1; }
        wait_path $RND 20 || { note "no $RND"; return 1; }
        wait_value crng.seeded true 600 || { note "CRNG not seeded after $WAITED s"; return 1; }
        for ioc in RNDADDTOENTCNT RNDADDENTROPY RNDZAPENTCNT RNDCLEARPOOL RNDRESEEDCRNG; do
                expect "ERR ioctl*EPERM from $ioc*own user namespace*" trclient -u $NOBODY -n ioctl $RND $ioc || ok=1
                expect "ERR ioctl*EPERM from $ioc*own user namespace*" trclient -n ioctl $RND $ioc || ok=1
                expect "OK ioctl*$ioc (uid=0)" trclient ioctl $RND $ioc || ok=1
        done
        return $ok
}

run_check 22-userns check_userns
