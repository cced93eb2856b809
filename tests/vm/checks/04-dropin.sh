# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 4. drop-in /dev/random ----------------------------------------------
check_dropin() {
        ok=0
        start_daemon dropin.conf /tmp/dropin.log || { note "no $TRNG"; return 1; }
        wait_path $RND 20 || { note "no $RND"; return 1; }
        # The sources start 6 s after the daemon: nothing is seeded yet.
        expect "ERR nbread*EAGAIN" trclient -u $ALICE nbread $RND 16 || ok=1
        expect "OK blocked*then 16 bytes*" trclient -u $ALICE blocked $RND 16 1500 60000 || ok=1
        mount --bind $RND /dev/random || { note "bind mount failed"; return 1; }
        t0=$(up)
        out=$(timeout 60 dd if=/dev/random of=/dev/null bs=1M count=64 2>&1 | tr '\n' ' ')
        t=$(secs "$t0")
        note "dd: $out($t s, $(awk -v t="$t" 'BEGIN { printf "%.0f", 64 / t }') MiB/s)"
        case "$out" in *"64+0 records in"*"64+0 records out"*) ;; *) ok=1 ;; esac
        expect "OK ioctl*RNDGETENTCNT = *" trclient -u $MALLORY ioctl /dev/random RNDGETENTCNT || ok=1
        expect "OK ioctl*" trclient ioctl /dev/random RNDADDENTROPY 64 || ok=1
        expect "ERR ioctl*EPERM*" trclient -u $ALICE ioctl /dev/random RNDADDENTROPY 64 || ok=1
        expect "OK ioctl*" trclient ioctl /dev/random RNDRESEEDCRNG || ok=1
        expect "ERR ioctl*EPERM*" trclient -u $ALICE ioctl /dev/random RNDRESEEDCRNG || ok=1
        expect "OK write*64 bytes*" trclient -u $ALICE write /dev/random 64 || ok=1
        umount /dev/random
        m=$(stat -c '%t:%T' /dev/random)
        [ "$m" = 1:8 ] || { note "after umount /dev/random is $m, not the kernel's 1:8"; ok=1; }
        return $ok
}

run_check 4-dropin check_dropin
