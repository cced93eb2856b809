# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 25. a kernel-log flood (issue 23) ---------------------------------------
# The guest has a vmgenid device (run-vm-suite.sh gives QEMU -device
# vmgenid; Debian's kernel has the driver built in), so the daemon reads
# /dev/kmsg for the kernel's VM-fork record, and a record lost to a wrapped
# log may have been one. An unprivileged user makes the kernel log fast
# (toggling IFF_PROMISC on lo inside unshare -rn, in a loop of its own),
# faster than the daemon reads it where the user has more CPUs than the
# daemon's one thread. This guest has one CPU and a busybox that cannot do
# that quickly, so root stands in for both halves: it stops the daemon
# (SIGSTOP: a reader the flood outruns), writes 200 records of ~900 bytes
# to /dev/kmsg (more than the 128 KiB ring holds; printk_devkmsg=on, else
# each opener gets 10 records per 5 s), lets the daemon go on (SIGCONT),
# and again, every 0.2 s for FLOOD_S seconds. What the daemon's reader sees
# is what it sees under the user's flood: read() fails with EPIPE, again
# and again. Passes when the daemon lost records (else the check showed
# nothing), rekeyed the CRNG once per loss, purged the store at most
# ceil(T / 10) + 1 times in the T seconds between the status snapshots
# around the flood (measured here, so a slow guest gets a longer T, never
# a tighter bound), warned at most as often (a burst needs 10 s without a
# loss to end) and logged a burst's end. Before issue 23 every loss purged
# the store and logged a warning.
FLOOD_S=30

# flood_once: 200 records through fd 3 (/dev/kmsg)
flood_once() {
        i=0
        while [ $i -lt 200 ]; do
                echo "<6>flood $pad" >&3
                i=$((i + 1))
        done
}

check_hostile_kmsg() {
        ok=0
        [ -d /sys/bus/acpi/drivers/vmgenid ] || [ -d /sys/bus/platform/drivers/vmgenid ] ||
                { note "no vmgenid driver in this guest"; return 1; }
        start_daemon guest.conf /tmp/kmsg.log || { note "no $TRNG"; return 1; }
        wait_value crng.seeded true 600 || { note "CRNG not seeded after $WAITED s"; return 1; }
        note "$(grep -m1 'vm fork detection' /tmp/kmsg.log | sed 's/^truerandomd: //')"
        [ "$(stv vm_generation.kernel_log)" = true ] || { note "the daemon does not read the kernel log"; return 1; }
        echo on > /proc/sys/kernel/printk_devkmsg
        t_flood=$(up)
        ctl_status /tmp/kmsg-0.json
        pad=$(head -c 900 /dev/zero | tr '\0' 'x')
        exec 3>/dev/kmsg
        while awk -v s="$(secs "$t_flood")" -v f=$FLOOD_S 'BEGIN { exit !(s < f) }'; do
                kill -STOP "$DPID"
                flood_once
                kill -CONT "$DPID"
                sleep 0.2
        done
        exec 3>&-
        flooded=$(secs "$t_flood")
        echo ratelimit > /proc/sys/kernel/printk_devkmsg
        # A burst ends 10 s after its last loss; a purge it held is done
        # by then. Not a verdict: the snapshot only has to come after.
        sleep 11
        wait_line /tmp/kmsg.log 'burst of lost kernel log records ended' 100 || { note "no end of burst logged"; ok=1; }
        ctl_status /tmp/kmsg-1.json
        window=$(secs "$t_flood")
        lost=$(delta vm_generation.lost_records /tmp/kmsg-0.json /tmp/kmsg-1.json)
        rekeys=$(delta crng.rekeys /tmp/kmsg-0.json /tmp/kmsg-1.json)
        purges=$(delta crng.vm_generation_changes /tmp/kmsg-0.json /tmp/kmsg-1.json)
        blocks=$(delta crng.vm_blocks_purged /tmp/kmsg-0.json /tmp/kmsg-1.json)
        warned=$(grep -c 'kernel log records were lost before they were read' /tmp/kmsg.log)
        bound=$(awk -v w="$window" 'BEGIN { b = int(w / 10); if (b < w / 10) b++; print b + 1 }')
        note "flood of ${flooded} s: $lost losses, $rekeys rekeys, $purges store purges ($blocks blocks) in $window s\
 (at most $bound), $warned burst warnings"
        note "$(grep -m1 'burst of lost kernel log records ended' /tmp/kmsg.log | sed 's/^truerandomd: //')"
        echo "INFO hostile-kmsg: $(grep -c . /tmp/kmsg.log) daemon log lines"
        awk -v l="$lost" 'BEGIN { exit !(l ~ /^[0-9]+$/ && l >= 10) }' || { note "the flood lost too few records"; ok=1; }
        [ "$rekeys" = "$lost" ] || ok=1
        awk -v p="$purges" -v b="$bound" 'BEGIN { exit !(p ~ /^[0-9]+$/ && p >= 1 && p <= b) }' || ok=1
        [ "$warned" -ge 1 ] && [ "$warned" -le "$bound" ] || ok=1
        return $ok
}

run_check 25-hostile-kmsg check_hostile_kmsg
