#!/bin/sh
# restore-init.sh - /init of the vm-restore check's guest (busybox sh as PID
# 1; see run-restore.sh). Starts truerandomd, lets it fill its store, says
# "RESTORE SAVE-READY" on the console and waits for its role on the second
# serial port (/dev/ttyS1): the host saves the machine meanwhile, then
# continues it ("orig") or restores the saved state in new QEMU processes
# ("restore1", "restore2"). Every copy then reads the first bytes from the
# drop-in random and /dev/truerandom and reports, on the console:
#     RESTORE BYTES <role> <device> <hex>
#     RESTORE VALUE <role> <status field> <value>
#     RESTORE CLOCKS <role> <when> boot=... mono=... real=...
# The original then suspends to RAM ("RESTORE SUSPENDING"; the host wakes it)
# and reports how the daemon saw the resume. "RESTORE DONE <role>" ends a run.
#
# A restored copy reads the moment the kernel has announced the new VM
# generation (its "crng reseeded due to virtual machine fork" record, read
# from /dev/kmsg, at most 5 s), so what it reads is what the daemon serves
# once the kernel has said so; how long the kernel took is measured on the
# host. Before the save, the jitter credit is lowered (a reload) so that a
# fresh block takes seconds: a drop-in read right after the change then shows
# whether the CRNG changed at once, not whether a block happened to arrive.

INSMOD_TAG="RESTORE INFO"
. /lib/guest-prelude.sh
# The daemon gives up root for its own user once it is set up.
printf 'root:x:0:\ntruerandom:x:990:\ntruerandomd:x:989:\n' > /etc/group
printf 'root:x:0:0:root:/root:/bin/sh\ntruerandomd:x:989:989::/nonexistent:/bin/false\n' > /etc/passwd
printf 'passwd: files\ngroup: files\n' > /etc/nsswitch.conf

# The store is small so that the original can read all of it (16 blocks,
# 14 or 15 of them left at the save: see below); no timed
# reseed inside the run (3600 s); jitter alone is credited, as in the vm
# suite (0.5 bit per sample, see guest-init.sh), then 0.002 (a block per
# 160,000 samples, about 2 s here). A copy's fresh blocks come from its own
# timing noise: a replayed file would repeat in every copy.
mkdir -p /etc/truerandomd
cat > /etc/truerandomd/restore.conf <<'EOF'
[pool]
store_blocks = 16
low_water = 8
[crng]
reseed_interval = 3600
[source.jitter]
credit = 0.5
[source.rdseed]
enable = no
[source.hwrng]
enable = no
EOF
STORE=16
TRNG=/dev/truerandom
RND=/dev/truerandom-random

say() {
        echo "RESTORE $*"
}

# stv QUERY: one value of a fresh `truerandomctl status --json`
stv() {
        truerandomctl status --json > /tmp/st.json 2>/dev/null
        trclient jq /tmp/st.json "$1" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'
}

# wait_value QUERY VALUE TENTHS
wait_value() {
        i=0
        while [ "$(stv "$1")" != "$2" ] && [ $i -lt "$3" ]; do
                sleep 0.1
                i=$((i + 1))
        done
        [ "$(stv "$1")" = "$2" ]
}

values() {
        truerandomctl status --json > /tmp/st.json 2>/dev/null
        for q in vm_generation.detection vm_generation.lost_records crng.vm_generation_changes \
                crng.vm_blocks_purged crng.rekeys store.fill store.blocks_purged crng.reseeds crng.generation \
                resume.jumps resume.slept_s; do
                say "VALUE $1 $q $(trclient jq /tmp/st.json "$q" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
        done
        say "VALUE $1 vm_generation.detail $(trclient jq /tmp/st.json vm_generation.detail 2>/dev/null)"
}

# bytes ROLE DEVICE N: the first N bytes a reader gets, in hex
bytes() {
        out=$(trclient -w 30 bytes "$2" "$3" 20000)
        say "BYTES $1 $2 ${out##*hex=}"
        case "$out" in OK*) ;; *) say "INFO $1 $2: $out" ;; esac
}

clocks() {
        say "CLOCKS $1 $2 $(trclient clocks "$2" | sed 's/^OK clocks [^:]*: //')"
}

vmgenid_bound() {
        for d in /sys/bus/acpi/drivers/vmgenid/*:* /sys/bus/platform/drivers/vmgenid/*:*; do
                [ -e "$d" ] && return 0
        done
        return 1
}

say "INFO kernel $(uname -r), vmgenid driver bound: $(vmgenid_bound && echo yes || echo no)"
# The daemon's log goes to the console, where the host times its lines.
truerandomd --foreground --config /etc/truerandomd/restore.conf > /dev/console 2>&1 &
DPID=$!
# Full, or one short of it when the first seed took a block after the
# store had filled: the source rests either way.
if ! wait_value crng.seeded true 300 || ! wait_value sources.0.running false 300 || [ "$(stv store.fill)" -lt $((STORE - 1)) ]; then
        say "INFO the daemon did not fill its store: $(stv store.fill) blocks, seeded $(stv crng.seeded)"
        say "DONE none"
        poweroff -f
fi
# The slower credit. The source restarts with its startup test, which the
# reader below waits for: the store is full, and the reader's demand runs
# the test all the same.
sed -i 's/^credit = 0.5$/credit = 0.002/' /etc/truerandomd/restore.conf
kill -HUP $DPID
bytes pre $TRNG 32
if [ "$(stv reload.result)" != ok ] || ! wait_value trng_serving true 100; then
        say "INFO the slower credit was not taken: reload $(stv reload.result), serving $(stv trng_serving)"
fi
STORE=$(stv store.fill)
values saved
clocks saved before
stty -F /dev/ttyS1 -echo 2>/dev/null
say "SAVE-READY"
read -r role < /dev/ttyS1
clocks "$role" woke

case "$role" in
restore*)
        # Until the kernel's record is there (it may already be).
        vmgenid_bound && timeout 5 grep -q -m 1 'crng reseeded due to virtual machine fork' /dev/kmsg
        bytes "$role" $RND 64
        clocks "$role" read
        say "INFO $role kernel records of the fork: $(dmesg | grep -c 'crng reseeded due to virtual machine fork')"
        bytes "$role" $TRNG 32
        values "$role"
        ;;
orig)
        bytes orig $RND 64
        bytes orig $TRNG $((STORE * 32))
        values orig
        # A real suspend to RAM: CLOCK_BOOTTIME moves ahead of CLOCK_MONOTONIC,
        # and the daemon reseeds the CRNG exactly once.
        reseeds=$(stv crng.reseeds)
        jumps=$(stv resume.jumps)
        clocks orig suspend
        say "SUSPENDING"
        echo mem > /sys/power/state || say "INFO suspend failed"
        clocks orig resumed
        wait_value resume.jumps $((jumps + 1)) 100
        wait_value crng.reseeds $((reseeds + 1)) 100
        # Anything more would come now.
        sleep 2
        say "VALUE orig resume.jumps.delta $(($(stv resume.jumps) - jumps))"
        say "VALUE orig crng.reseeds.delta $(($(stv crng.reseeds) - reseeds))"
        values resumed
        ;;
esac
say "DONE $role"
poweroff -f
