#!/bin/sh
# guest-init.sh - /init of the vm suite's initramfs (busybox sh as PID 1).
#
# Runs the built truerandomd on Debian's kernel (cuse.ko, no udev, no
# systemd) and prints one line per check:
#     CHECK <name>: PASS|FAIL <detail>
# then "SUMMARY: N passed, M failed" and powers off. run-vm-suite.sh reads
# these lines from the serial console. A failing check is followed by its
# daemon's log. `trcheck=3,4` on the kernel command line runs only those.
#
# Users: alice (1000) and bob (1002) are members of truerandom (990), by a
# supplementary group; carol (1003) by her primary group; mallory (1001) is
# not. trclient takes numeric UID:GID:GROUPS (static, no NSS).
# truerandomd (989) is the daemon's own user, which it becomes once set up.
#
# Guest configuration, per check (the files are written below):
# - jitter credit = auto, the daemon's default: the running gate judges
#   each window of its samples in this guest and credits half its estimate,
#   at most the cap (1 bit). Under TCG the estimate is high (the emulator's
#   timing: 2.5 to 3.5 bits per sample measured), so the credit is mostly
#   the cap. Check 0 ("gate.conf", cap 4) shows the credit following the
#   estimate window by window, with the guest loaded and unloaded.
# - Sources paced in samples per second (the file source's rate) judge
#   windows of 4096 samples ([pool] gate_window), the least: at 1000
#   samples/s a default window (65536) would take a minute to fill before
#   anything is credited.
# - No RDSEED: TCG's -cpu max does not offer it in CPUID (the daemon reports
#   the source unavailable). virtio-rng is /dev/hwrng, but its driver claims
#   no entropy (rng_quality 0), so the daemon does not credit it. Jitter alone
#   sets the guest's rate; check 2 says how many bytes/s that was.
# - "slow" (check 3): only the file source, replaying bytes from the guest's
#   /dev/urandom at 1000 samples/s credited 0.1 bit each: one block (320
#   credited bits) every 3.2 s whatever the host's speed, so readers can be
#   caught waiting and poll seen to wake. (Jitter at the least credit the
#   configuration takes, 0.001, still made ~5 blocks/s under TCG.)
# - "fair" (check 7): jitter alone, so readers, not the daemon, wait: the
#   fair queue decides who gets each block. Its credit is set, 0.5, not
#   auto: the check needs blocks to come slower than a 32-byte reader asks
#   again; at the guest's auto credit (1 bit, twice as fast) that reader is
#   not always waiting and the other uid rightly takes the blocks it
#   leaves (61 % measured), which says nothing about fairness.
# - "ctl" (checks 8-11): every source configured, so status shows each in a
#   known way: jitter credited, rdseed and hwrng enabled (TCG has no RDSEED,
#   virtio-rng is worth 0), kernel mixed, the file source replaying
#   urandom.bin.
# - "starve" (check 12): only the file source, paced at 100,000 samples/s
#   credited 0.1 bit: ~31 blocks/s (~32 ms a block) whatever the host's
#   speed, so the latency target (10 blocks) is about the fair queue, not
#   about TCG. The low-water mark at the top of a large store keeps the
#   source running with nobody reading, so its rate can be measured idle;
#   reseed_interval 3600 leaves no timed reseed inside the run. Check 18
#   (a reseed storm) uses it too: a paced source makes the reader's bytes in
#   two runs of equal length comparable; it has its own "storm" with the
#   same block rate from 5000 samples/s credited 2 bits, so that the
#   gate's worker judges 20 times fewer samples than under "starve" and
#   the blocks come as steadily as the pacing makes them.
# - "fifo" (check 17): the file source on a FIFO whose writer is killed,
#   hwrng on a path that does not exist, nothing else credited.
# - "long" (check 19): the file source alone, unpaced, credited 2 bits (it
#   replays 64 KiB of urandom bytes: its 65536-sample windows measure 5.65,
#   so 3 bits, which needs 6, is refused), and a store of 8192 blocks (256 KiB) kept full:
#   more than one read request carries, so /dev/truerandom's per-call cap
#   shows.
# - "quota" (check 21): max_parked 90, so 10 waiting reads per uid (the
#   default max_parked / 9), 64 open files per uid, and sources that start
#   only after 10 s, so that reads are seen waiting first.
# - "rootonly" (check 23): the file source alone, on a copy of urandom.bin
#   only root may read: opened at start, as root; a raw capture or a reload
#   that would open such a file again after set-up cannot. Jitter is enabled
#   but not credited, so that it can be exported (a raw export's thread to
#   check) and cannot fill the store and stop the file source's demand
#   before that passed its startup test.
# - "alice" (check 23): the defaults with the control socket in /tmp, for a
#   start by hand as a user who may not open /dev/cuse.

. /lib/guest-prelude.sh

ALICE=1000:1000:990
NOBODY=65534:65534:65534
MALLORY=1001:1001:1001
BOB=1002:1002:990
CAROL=1003:990
TRNG=/dev/truerandom
RND=/dev/truerandom-random
URND=/dev/truerandom-urandom
CONF=/etc/truerandomd

cat > /etc/passwd <<'EOF'
root:x:0:0:root:/root:/bin/sh
truerandomd:x:989:989::/nonexistent:/bin/false
alice:x:1000:1000::/tmp:/bin/sh
mallory:x:1001:1001::/tmp:/bin/sh
bob:x:1002:1002::/tmp:/bin/sh
carol:x:1003:990::/tmp:/bin/sh
EOF
cat > /etc/group <<'EOF'
root:x:0:
truerandom:x:990:alice,bob
truerandomd:x:989:
alice:x:1000:
mallory:x:1001:
bob:x:1002:
EOF
printf 'passwd: files\ngroup: files\n' > /etc/nsswitch.conf

mkdir -p $CONF /var/lib
cat > $CONF/guest.conf <<'EOF'
[source.jitter]
credit = auto
EOF
cat > $CONF/gate.conf <<'EOF'
[source.jitter]
credit = auto
credit_cap = 4
EOF
cat > $CONF/slow.conf <<'EOF'
[pool]
gate_window = 4096
[device]
dropin = no
[source.jitter]
enable = no
[source.rdseed]
enable = no
[source.hwrng]
enable = no
[source.file]
enable = yes
path = /etc/truerandomd/urandom.bin
credit = 0.1
rate = 1000
loop = yes
EOF
head -c 65536 /dev/urandom > $CONF/urandom.bin
cat > $CONF/persource.conf <<'EOF'
[pool]
gate_window = 4096
store_blocks = 64
low_water = 16
[device]
per_source_devices = yes
[source.jitter]
credit = auto
[source.rdseed]
enable = no
[source.hwrng]
enable = no
[source.file]
enable = yes
path = /etc/truerandomd/urandom.bin
credit = 1
loop = yes
EOF
cat > $CONF/dropin.conf <<'EOF'
[pool]
start_delay_ms = 6000
EOF
cat > $CONF/parked.conf <<'EOF'
[pool]
start_delay_ms = 600000
EOF
cat > $CONF/stuck.conf <<'EOF'
[pool]
gate_window = 4096
[device]
dropin = no
[source.jitter]
enable = no
[source.rdseed]
enable = no
[source.hwrng]
enable = no
[source.kernel]
enable = no
[source.file]
enable = yes
path = /etc/truerandomd/stuck.bin
credit = 2
loop = yes
EOF
head -c 4096 /dev/zero | tr '\0' '*' > $CONF/stuck.bin
cat > $CONF/fair.conf <<'EOF'
[pool]
gate_window = 4096
[device]
dropin = no
[source.jitter]
credit = 0.5
[source.rdseed]
enable = no
[source.hwrng]
enable = no
EOF
cat > $CONF/ctl.conf <<'EOF'
[pool]
gate_window = 4096
[source.jitter]
enable = yes
[source.rdseed]
enable = yes
[source.hwrng]
enable = yes
[source.tpm]
enable = yes
credit = 1
[source.kernel]
enable = yes
[source.file]
enable = yes
path = /etc/truerandomd/urandom.bin
credit = 0.1
rate = 1000
loop = yes
EOF
cat > $CONF/starve.conf <<'EOF'
[pool]
gate_window = 4096
store_blocks = 4096
low_water = 4095
[crng]
reseed_interval = 3600
[source.jitter]
enable = no
[source.rdseed]
enable = no
[source.hwrng]
enable = no
[source.file]
enable = yes
path = /etc/truerandomd/urandom.bin
credit = 0.1
rate = 100000
loop = yes
EOF
# "starve" at the same block rate from 20 times fewer samples to judge.
sed 's/^credit = 0.1$/credit = 2/; s/^rate = 100000$/rate = 5000/' $CONF/starve.conf > $CONF/storm.conf
cat > $CONF/fifo.conf <<'EOF'
[pool]
gate_window = 4096
[device]
dropin = no
[pool]
store_blocks = 64
low_water = 16
[source.jitter]
enable = no
[source.rdseed]
enable = no
[source.hwrng]
enable = yes
credit = 1
path = /dev/hwrng-absent
[source.file]
enable = yes
path = /tmp/noise.fifo
credit = 1
EOF

cat > $CONF/long.conf <<'EOF'
[pool]
store_blocks = 8192
low_water = 8191
[source.jitter]
enable = no
[source.rdseed]
enable = no
[source.hwrng]
enable = no
[source.file]
enable = yes
path = /etc/truerandomd/urandom.bin
credit = 2
loop = yes
EOF

cat > $CONF/quota.conf <<'EOF'
[device]
max_parked = 90
max_open_per_uid = 64
[pool]
start_delay_ms = 10000
[source.jitter]
credit = 0.5
EOF

cat > $CONF/rootonly.conf <<'EOF'
[pool]
gate_window = 4096
[device]
trng_mode = 0440
[source.jitter]
credit = 0
[source.rdseed]
enable = no
[source.hwrng]
enable = no
[source.file]
enable = yes
path = /etc/truerandomd/rootonly.bin
credit = 0.1
rate = 1000
loop = yes
EOF
cp $CONF/urandom.bin $CONF/rootonly.bin
cp $CONF/urandom.bin $CONF/rootonly2.bin
chmod 600 $CONF/rootonly.bin $CONF/rootonly2.bin
cat > $CONF/alice.conf <<'EOF'
[control]
socket = /tmp/alice-control
EOF

ONLY=
for w in $(cat /proc/cmdline); do
        case "$w" in trcheck=*) ONLY=",${w#trcheck=}," ;; esac
done

# secs START: seconds elapsed since uptime START
secs() {
        awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.2f", b - a }'
}

# wait_path PATH TENTHS: until PATH exists, at most TENTHS x 0.1 s
wait_path() {
        i=0
        while [ ! -e "$1" ] && [ $i -lt "$2" ]; do
                sleep 0.1
                i=$((i + 1))
        done
        [ -e "$1" ]
}

DPID=
DLOG=/dev/null

# alive PID: the process exists and is not a zombie (an orphaned daemon is
# reparented to this shell, which does not reap it)
alive() {
        case "$(cat "/proc/$1/stat" 2>/dev/null)" in
        "" | *") Z "*) return 1 ;;
        esac
        return 0
}

# start_daemon CONF LOG: truerandomd in the foreground, as a child of this
# shell; waits (5 s) for /dev/truerandom.
start_daemon() {
        DLOG=$2
        truerandomd --foreground --config "$CONF/$1" >>"$DLOG" 2>&1 &
        DPID=$!
        wait_path $TRNG 50
}

# stop_daemon: SIGTERM (SIGKILL after 5 s); the kernel's /dev/random comes
# back from under any bind mount and the daemon's nodes must be gone.
stop_daemon() {
        grep -q ' /dev/random ' /proc/mounts && umount /dev/random
        [ -n "$DPID" ] || return 0
        kill -TERM "$DPID" 2>/dev/null
        i=0
        while alive "$DPID" && [ $i -lt 50 ]; do
                sleep 0.1
                i=$((i + 1))
        done
        if alive "$DPID"; then
                echo "INFO daemon $DPID ignored SIGTERM for 5 s: SIGKILL"
                kill -KILL "$DPID"
        fi
        wait "$DPID" 2>/dev/null
        rc=$?
        # 127: not this shell's child (the daemon forked itself away)
        [ $rc = 127 ] || echo "INFO daemon $DPID exit status $rc"
        DPID=
        trclient gone 3000 $TRNG $RND $URND >/dev/null
}

# ctl_status FILE: `truerandomctl status --json` (as root) into FILE; true
# when it read a status (exit 0 serving, 1 degraded, 2 not serving; 3 and
# up: no status), its verdict in CTL_VERDICT.
ctl_status() {
        truerandomctl status --json >"$1" 2>&1
        CTL_VERDICT=$?
        [ "$CTL_VERDICT" -le 2 ]
}

# jqv FILE QUERY: the values QUERY selects (trclient jq), space-separated
jqv() {
        trclient jq "$1" "$2" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'
}

# stv QUERY: one value from a fresh status
stv() {
        ctl_status /tmp/stv.json && jqv /tmp/stv.json "$1"
}

# wait_value QUERY VALUE TENTHS: until the status shows VALUE at QUERY, at
# most TENTHS x 0.1 s; WAITED is how long it took
wait_value() {
        t_wait=$(up)
        i=0
        while [ "$(stv "$1")" != "$2" ] && [ $i -lt "$3" ]; do
                sleep 0.1
                i=$((i + 1))
        done
        WAITED=$(secs "$t_wait")
        [ "$(stv "$1")" = "$2" ]
}

# wait_line FILE REGEX TENTHS: until a line of FILE matches (grep -E)
wait_line() {
        i=0
        while ! grep -qE "$2" "$1" 2>/dev/null && [ $i -lt "$3" ]; do
                sleep 0.1
                i=$((i + 1))
        done
        grep -qE "$2" "$1" 2>/dev/null
}

# oneline FILE: FILE's lines joined with "; "
oneline() {
        awk 'NR > 1 { printf "; " } { printf "%s", $0 }' "$1"
}

NOTE=

# note TEXT: adds TEXT to the current check's detail line
note() {
        NOTE="${NOTE:+$NOTE; }$1"
}

# expect PATTERN CMD...: runs CMD, notes its output; false unless it matches
expect() {
        pat=$1
        shift
        out=$("$@" 2>&1)
        rc=$?
        [ $rc = 142 ] && out="$out (trclient watchdog fired)"
        note "$out"
        # The pattern is a glob on purpose.
        # shellcheck disable=SC2254
        case "$out" in
        $pat) return 0 ;;
        esac
        return 1
}

# run_check NAME FUNCTION: one named result; the function returns 0 on pass
run_check() {
        case "$1|$ONLY" in
        *'|' | *",${1%%-*},"*) ;;
        *) return 0 ;;
        esac
        NOTE=
        DLOG=/dev/null
        echo "CHECK-START $1 at $(up) s"
        t0=$(up)
        if $2; then
                PASSED=$((PASSED + 1))
                echo "CHECK $1: PASS $NOTE [$(secs "$t0") s]"
        else
                FAILED=$((FAILED + 1))
                echo "CHECK $1: FAIL $NOTE [$(secs "$t0") s]"
                echo "--- daemon log of $1 ($DLOG)"
                tail -n 60 "$DLOG" 2>/dev/null
                echo "--- end of daemon log"
        fi
        stop_daemon
}

echo "=== guest up at $(up) s: $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPU,\
 $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -c -E '^(rdrand|rdseed)$') of rdrand/rdseed,\
 hwrng $(cat /sys/class/misc/hw_random/rng_current 2>/dev/null || echo none)\
 (rng_quality $(cat /sys/class/misc/hw_random/rng_quality 2>/dev/null || echo -))"
[ -c /dev/cuse ] || echo "INFO no /dev/cuse: $(ls /sys/module | tr '\n' ' ')"
# The checks: one file each in /checks (tests/vm/checks/NN-name.sh), in
# the order of their numbers; each defines its functions and ends with
# its run_check line.
for f in /checks/*.sh; do
        . "$f"
done
echo "SUMMARY: $PASSED passed, $FAILED failed, guest uptime $(up) s"
sync
poweroff -f
