# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 27. who may reach an ioctl caller's memory (issue 23) --------------------
# With CUSE_UNRESTRICTED_IOCTL the kernel lets the daemon read and write any
# of an ioctl caller's memory; every device registered so before issue 23.
# /dev/truerandom needs RNDGETENTCNT's int alone: registered restricted,
# the real kernel copies those 4 bytes itself, so the count still reads and
# a request the daemon would need more memory for is refused. The drop-ins
# keep it by default (RNDADDENTROPY's buffer); with
# dropin_unrestricted_ioctl = no they go without, which the real kernel shows
# by RNDADDENTROPY failing (EOPNOTSUPP) where it worked before, every fixed-
# size request still working. status says how each device registered.
check_hostile_ioctl() {
        ok=0
        start_daemon dropin.conf /tmp/ioctl.log || { note "no $TRNG"; return 1; }
        wait_path $RND 20 || { note "no $RND"; return 1; }
        expect "OK ioctl*RNDGETENTCNT = *" trclient ioctl $TRNG RNDGETENTCNT || ok=1
        expect "OK ioctl*RNDGETENTCNT = *" trclient -u $ALICE ioctl $TRNG RNDGETENTCNT || ok=1
        expect "ERR ioctl*ENOTTY*" trclient ioctl $TRNG RNDADDENTROPY 64 || ok=1
        expect "OK ioctl*" trclient ioctl $RND RNDADDENTROPY 64 || ok=1
        ctl_status /tmp/ioctl-0.json || ok=1
        flags="$(jqv /tmp/ioctl-0.json devices.name=truerandom.unrestricted_ioctl)"
        flags="$flags $(jqv /tmp/ioctl-0.json devices.name=truerandom-random.unrestricted_ioctl)"
        flags="$flags $(jqv /tmp/ioctl-0.json devices.name=truerandom-urandom.unrestricted_ioctl)"
        note "unrestricted (truerandom random urandom): $flags"
        [ "$flags" = "false true true" ] || ok=1
        stop_daemon

        printf '[pool]\nstart_delay_ms = 600000\n[device]\ndropin_unrestricted_ioctl = no\n' >$CONF/ioctl-restricted.conf
        start_daemon ioctl-restricted.conf /tmp/ioctl.log || { note "no $TRNG (restricted)"; return 1; }
        wait_path $RND 20 || { note "no $RND (restricted)"; return 1; }
        expect "ERR ioctl*EOPNOTSUPP*" trclient ioctl $RND RNDADDENTROPY 64 || ok=1
        expect "OK ioctl*" trclient ioctl $RND RNDADDTOENTCNT 8 || ok=1
        expect "OK ioctl*RNDGETENTCNT = 8*" trclient -u $MALLORY ioctl $RND RNDGETENTCNT || ok=1
        expect "OK ioctl*" trclient ioctl $RND RNDZAPENTCNT || ok=1
        expect "OK ioctl*RNDGETENTCNT = *" trclient ioctl $TRNG RNDGETENTCNT || ok=1
        ctl_status /tmp/ioctl-1.json || ok=1
        flags="$(jqv /tmp/ioctl-1.json devices.*.unrestricted_ioctl)"
        note "restricted drop-ins: unrestricted $flags"
        [ "$flags" = "false false false" ] || ok=1
        stop_daemon
        return $ok
}

run_check 27-hostile-ioctl check_hostile_ioctl
