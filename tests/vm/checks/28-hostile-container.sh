# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 28. container root and the privileged ioctls (issue 23) -----------------
# trclient -c is root of a container that shares the host's user namespace:
# a pid namespace of its own, no CAP_SYS_ADMIN, CAP_SETUID and CAP_SETGID
# kept, and a user namespace whose full identity maps its pid 1 wrote
# (what runtimes without a seccomp profile allow). The kernel's own
# /dev/urandom refuses it RNDADDTOENTCNT. The daemon, which cannot read the
# ns link of another user's process and falls back on the maps, admits it
# with privileged_ioctls = capability (the finding, documented in
# truerandom(4)), and refuses it with host-root, where host root still
# passes; none refuses host root too. Anyone still reads the count.
check_hostile_container() {
        ok=0
        expect "ERR ioctl /dev/urandom*EPERM from RNDADDTOENTCNT*container root*" \
                trclient -c ioctl /dev/urandom RNDADDTOENTCNT 8 || ok=1
        expect "OK ioctl /dev/urandom*RNDADDTOENTCNT (uid=0)" trclient ioctl /dev/urandom RNDADDTOENTCNT 8 || ok=1
        for mode in capability host-root none; do
                printf '[pool]\nstart_delay_ms = 600000\n[device]\nprivileged_ioctls = %s\n' $mode \
                        >$CONF/privileged-$mode.conf
                start_daemon privileged-$mode.conf /tmp/container.log || { note "no $TRNG ($mode)"; return 1; }
                wait_path $RND 20 || { note "no $RND ($mode)"; return 1; }
                case $mode in
                capability)
                        expect "OK ioctl*RNDADDTOENTCNT*container root*" trclient -c ioctl $RND RNDADDTOENTCNT 8 || ok=1
                        expect "OK ioctl*RNDADDTOENTCNT (uid=0)" trclient ioctl $RND RNDADDTOENTCNT 8 || ok=1 ;;
                host-root)
                        expect "ERR ioctl*EPERM from RNDADDTOENTCNT*container root*" \
                                trclient -c ioctl $RND RNDADDTOENTCNT 8 || ok=1
                        expect "ERR ioctl*EPERM from RNDRESEEDCRNG*container root*" \
                                trclient -c ioctl $RND RNDRESEEDCRNG || ok=1
                        expect "OK ioctl*RNDADDTOENTCNT (uid=0)" trclient ioctl $RND RNDADDTOENTCNT 8 || ok=1 ;;
                none)
                        expect "ERR ioctl*EPERM from RNDADDTOENTCNT (uid=0)" trclient ioctl $RND RNDADDTOENTCNT 8 || ok=1 ;;
                esac
                expect "OK ioctl*RNDGETENTCNT = *container root*" trclient -c ioctl $RND RNDGETENTCNT || ok=1
                stop_daemon
        done
        return $ok
}

run_check 28-hostile-container check_hostile_container
