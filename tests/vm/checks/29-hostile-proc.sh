# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 29. /proc amplification (issue 23) ------------------------------------------
# An unprivileged user with a subordinate gid range (newgidmap; root writes
# the map here) takes 65,536 supplementary groups in a user namespace of
# its own, so its /proc status grows to ~460 KB, and asks the drop-in for
# RNDZAPENTCNT in a loop from 32 processes while another connects to and
# closes the control socket (trclient -g hammer, each at nice 19 so that
# this one-CPU guest's scheduler does not stand in for the daemon). Each
# request makes the daemon ask whether the caller is privileged, or whose
# account a connection is charged to; before issue 23 that read the status
# twice, before the cheap id-map test. Another user reads 16 bytes of the
# drop-in every 10 ms, idle and under the attack: both p99 figures are
# printed. Passes when every attacking ioctl was refused (EPERM, or EAGAIN
# past the uid's budget of looks at /proc: both counts printed), the
# attacker held its 65,536 groups, and every read of the other user was
# answered; the latency is a figure, not a verdict (a loaded host
# stretches this TCG guest's every step).
check_hostile_proc() {
        ok=0
        start_daemon guest.conf /tmp/proc.log || { note "no $TRNG"; return 1; }
        wait_value crng.seeded true 600 || { note "CRNG not seeded after $WAITED s"; return 1; }
        expect "OK tick*" trclient -u $ALICE -w 60 tick $RND 16 10 8 || ok=1
        idle=$(echo "$out" | sed -n 's/.*p99 \([0-9.]*\).*/\1/p')
        trclient -g 1001 -w 60 hammer $RND /run/truerandomd/control 14 32 >/tmp/hammer.out 2>&1 &
        hammer=$!
        sleep 3
        expect "OK tick*" trclient -u $ALICE -w 60 tick $RND 16 10 8 || ok=1
        busy=$(echo "$out" | sed -n 's/.*p99 \([0-9.]*\).*/\1/p')
        wait $hammer
        note "$(cat /tmp/hammer.out)"
        grep -q "^OK hammer.*, 65536 groups)" /tmp/hammer.out || ok=1
        note "another user's 16-byte drop-in read p99: idle ${idle:-?} ms, under attack ${busy:-?} ms"
        stop_daemon
        return $ok
}

run_check 29-hostile-proc check_hostile_proc
