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
# - jitter credit = auto, the daemon's default: check 0 (which runs first,
#   whatever trcheck says) lets the daemon assess the jitter source in this
#   guest, prints the credit it gave itself, and leaves the assessment in
#   /var/lib/truerandomd for every later start. Under TCG the estimate is
#   high (the emulator's timing; min-entropy about 4.5 bits per sample), so
#   the credit is its cap, 1 bit: its APT cutoff (325 of 512) is far above
#   the worst window seen here (228). Crediting 2 made the daemon (rightly)
#   fail the source when the host's load pushed the estimate down to 1.6.
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
#   two runs of equal length comparable.
# - "fifo" (check 17): the file source on a FIFO whose writer is killed,
#   hwrng on a path that does not exist, nothing else credited.
# - "long" (check 19): the file source alone, unpaced, credited 8 bits (it
#   replays urandom bytes), and a store of 8192 blocks (256 KiB) kept full:
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

/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
for ko in $(cat /etc/modules.order); do
        insmod "$ko" || echo "INFO insmod $ko failed"
done

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
cat > $CONF/slow.conf <<'EOF'
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
cat > $CONF/dropin.conf <<'EOF'
[pool]
start_delay_ms = 6000
EOF
cat > $CONF/parked.conf <<'EOF'
[pool]
start_delay_ms = 600000
EOF
cat > $CONF/stuck.conf <<'EOF'
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
[source.jitter]
enable = yes
[source.rdseed]
enable = yes
[source.hwrng]
enable = yes
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
cat > $CONF/fifo.conf <<'EOF'
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
credit = 8
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

up() {
        cut -d' ' -f1 /proc/uptime
}

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

PASSED=0
FAILED=0
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
# (check 0 always runs: the others credit jitter by what it stores)
run_check() {
        case "$1|$ONLY" in
        0-*'|'* | *'|' | *",${1%%-*},"*) ;;
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

# ---- 0. credit = auto: the jitter source assessed in this guest ------------
# Jitter is the only credited source here (no RDSEED under TCG, virtio-rng
# worth 0): nothing serves until the daemon has assessed it. Then a second
# start takes the stored assessment at once.
check_auto() {
        ok=0
        rm -rf /var/lib/truerandomd
        t0=$(up)
        start_daemon guest.conf /tmp/auto.log || { note "no $TRNG"; return 1; }
        ctl_status /tmp/st.json
        state=$(jqv /tmp/st.json sources.name=jitter.state)
        origin=$(jqv /tmp/st.json sources.name=jitter.credit_origin)
        note "at start: jitter $state ($origin), /dev/truerandom serving $(jqv /tmp/st.json trng_serving)"
        [ "$state" = assessing ] && [ "$origin" = pending ] || ok=1
        expect "ERR nbread*EAGAIN" trclient -u $ALICE nbread $TRNG 32 || ok=1
        wait_value sources.name=jitter.state healthy 3000 || { note "jitter not healthy after $WAITED s"; return 1; }
        took=$(secs "$t0")
        ctl_status /tmp/st.json
        e=sources.name=jitter.estimate
        line="jitter auto credit in this guest: $(jqv /tmp/st.json sources.name=jitter.credit_bits) bits/sample\
 ($(jqv /tmp/st.json sources.name=jitter.credit_origin), cap $(jqv /tmp/st.json sources.name=jitter.credit_cap_bits));\
 min-entropy $(jqv /tmp/st.json $e.min_entropy) (H_original $(jqv /tmp/st.json $e.h_original),\
 H_bitstring $(jqv /tmp/st.json $e.h_bitstring)), $(jqv /tmp/st.json $e.samples) samples;\
 credited $took s after start"
        echo "INFO $line"
        note "$line"
        grep 'source jitter' /tmp/auto.log | sed 's/^/INFO log: /'
        grep -q 'source jitter: assessing it on this machine' /tmp/auto.log || { note "no 'assessing' line"; ok=1; }
        grep -q 'source jitter: its assessment should take about' /tmp/auto.log || { note "no expected time"; ok=1; }
        grep -q 'source jitter: credit .* from the new assessment' /tmp/auto.log || { note "no credit line"; ok=1; }
        [ -s /var/lib/truerandomd/assessment.json ] || { note "no assessment.json"; ok=1; }
        expect "OK read*64 bytes*" trclient -u $ALICE read $TRNG 64 30000 || ok=1
        stop_daemon
        t0=$(up)
        start_daemon guest.conf /tmp/auto2.log || { note "no $TRNG on the second start"; return 1; }
        expect "OK read*64 bytes*" trclient -u $ALICE read $TRNG 64 30000 || ok=1
        note "second start: first 64 bytes $(secs "$t0") s after start"
        ctl_status /tmp/st.json
        [ "$(jqv /tmp/st.json sources.name=jitter.estimate.measured)" = stored ] || { note "not the stored one"; ok=1; }
        grep -q 'assessing it' /tmp/auto2.log && { note "assessed again"; ok=1; }
        return $ok
}

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

# ---- 2. FIPS 140-2 -------------------------------------------------------
# rngtest_blocks FILE BLOCKS: "GOOD BAD" of rngtest over the first BLOCKS
# blocks of FILE (rngtest takes 32 bits before its first 20,000-bit block).
rngtest_blocks() {
        head -c $((4 + $2 * 2500)) "$1" | rngtest -c "$2" >/tmp/rngtest.out 2>&1
        g=$(sed -n 's/^rngtest: FIPS 140-2 successes: //p' /tmp/rngtest.out)
        b=$(sed -n 's/^rngtest: FIPS 140-2 failures: //p' /tmp/rngtest.out)
        [ -n "$g" ] && [ -n "$b" ] || { cat /tmp/rngtest.out; return 1; }
        echo "$g $b"
}

# Good random data fails a FIPS 140-2 block about 0.08 % of the time, so the
# verdict is taken on a fixed number of blocks whose false-alarm rate is
# small: 1000 blocks with at most 3 failures (0.9 %), or, where the guest
# cannot make 1000 blocks in 90 s, the first 100 with at most 1 (0.3 %; on
# all of ~700 blocks "at most 1" would fail a correct daemon 11 % of the
# time). Every block streamed is tested and reported all the same.
check_fips() {
        start_daemon guest.conf /tmp/fips.log || { note "no $TRNG"; return 1; }
        trclient -u $ALICE -w 150 stream $TRNG 2500004 90 2>/tmp/stream.out >/tmp/fips.bin
        note "$(cat /tmp/stream.out)"
        size=$(stat -c %s /tmp/fips.bin)
        all=$(( (size - 4) / 2500 ))
        [ "$all" -ge 100 ] || { note "only $size bytes: fewer than 100 blocks"; return 1; }
        r=$(rngtest_blocks /tmp/fips.bin "$all") || return 1
        set -- $r
        note "rngtest over all $all blocks: $1 passed, $2 failed"
        if [ "$all" -ge 1000 ]; then
                r=$(rngtest_blocks /tmp/fips.bin 1000) || return 1
                set -- $r
                note "verdict on 1000 blocks: $2 failed (at most 3)"
                [ "$2" -le 3 ]
        else
                r=$(rngtest_blocks /tmp/fips.bin 100) || return 1
                set -- $r
                note "guest too slow for 1000 blocks in 90 s: verdict on the first 100: $2 failed (at most 1)"
                [ "$2" -le 1 ]
        fi
}

# ---- 3. blocking, O_NONBLOCK, poll, interrupts ---------------------------
# signal_reader SIG LIMIT_MS: a reader blocked 500 ms gets SIG; tries again
# (up to 5 times) when a block arrived during those 500 ms.
signal_reader() {
        n=0
        while [ $n -lt 5 ]; do
                trclient drain $TRNG 10000 >/dev/null
                out=$(trclient signal $TRNG "$1" 500 "$2")
                rc=$?
                [ $rc = 3 ] || break
                n=$((n + 1))
        done
        note "$out"
        [ $rc = 0 ]
}

check_blocking() {
        ok=0
        start_daemon slow.conf /tmp/slow.log || { note "no $TRNG"; return 1; }
        expect "OK drain*EAGAIN*" trclient drain $TRNG 10000 || ok=1
        expect "ERR nbread*EAGAIN" trclient -u $ALICE nbread $TRNG 32 || ok=1
        expect "OK poll*POLLIN*" trclient -u $ALICE poll $TRNG 30000 || ok=1
        expect "OK nbread*32 bytes" trclient -u $ALICE nbread $TRNG 32 || ok=1
        signal_reader INT 200 || ok=1
        signal_reader KILL 1000 || ok=1
        return $ok
}

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

# ---- 5. kill -9 with 50 parked readers -----------------------------------
check_kill9() {
        ok=0
        # Sources start only after 10 minutes: every read parks.
        start_daemon parked.conf /tmp/kill9.log || { note "no $TRNG"; return 1; }
        expect "OK readers*50/50 returned*0 with data*" trclient readers $TRNG 50 1500 "$DPID" 9 2000 || ok=1
        expect "OK gone*" trclient gone 2000 $TRNG $RND $URND || ok=1
        alive "$DPID" && kill -KILL "$DPID"
        wait "$DPID" 2>/dev/null
        DPID=
        trclient gone 2000 $TRNG >/dev/null
        truerandomd --foreground --config $CONF/guest.conf >>/tmp/kill9.log 2>&1 &
        DPID=$!
        expect "OK waitread*" trclient waitread $TRNG 32 2000 || ok=1
        return $ok
}

# ---- 6. a stuck source is caught -----------------------------------------
check_health() {
        ok=0
        start_daemon stuck.conf /tmp/health.log || { note "no $TRNG"; return 1; }
        sleep 5
        expect "ERR nbread*EAGAIN" trclient -u $ALICE nbread $TRNG 32 || ok=1
        expect "OK blocked*still waiting*" trclient -u $ALICE blocked $TRNG 32 2000 || ok=1
        line=$(grep -m1 'source file failed permanently' /tmp/health.log)
        note "log: ${line:-no 'source file failed permanently' line}"
        case "$line" in *RCT* | *APT*) ;; *) ok=1 ;; esac
        st=$(truerandomctl status 2>&1)
        echo "$st" | sed 's/^/INFO status: /'
        echo "$st" | grep -qi fail || { note "truerandomctl status does not show the failed source"; ok=1; }
        ctl_status /tmp/st.json
        state=$(jqv /tmp/st.json sources.name=file.state)
        note "status --json: file $state, permanent_rct $(jqv /tmp/st.json sources.name=file.failures.permanent_rct),\
 permanent_apt $(jqv /tmp/st.json sources.name=file.failures.permanent_apt)"
        [ "$state" = failed-permanent ] || { cat /tmp/st.json; ok=1; }
        return $ok
}

# ---- 7. fair share between uids ------------------------------------------
# fair_round LABEL ALICE_READ BOB_READ: 4 readers per uid for 10 s; the
# shares must stay within 40-60 %.
fair_round() {
        pids=
        rm -f /tmp/fair-*.out
        for i in 1 2 3 4; do
                trclient -u $ALICE -w 30 loop $TRNG 10 "$2" >/tmp/fair-alice-$i.out 2>&1 &
                pids="$pids $!"
                trclient -u $BOB -w 30 loop $TRNG 10 "$3" >/tmp/fair-bob-$i.out 2>&1 &
                pids="$pids $!"
        done
        wait $pids
        cat /tmp/fair-*.out | sed "s/^/INFO fair $1: /"
        a=$(cat /tmp/fair-alice-*.out | awk '$1 == "OK" { s += $4 } END { print s + 0 }')
        b=$(cat /tmp/fair-bob-*.out | awk '$1 == "OK" { s += $4 } END { print s + 0 }')
        n=$(cat /tmp/fair-*.out | grep -c '^OK loop')
        share=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a + b > 0) printf "%.1f", 100 * a / (a + b); else print "nan" }')
        note "$1: alice (${2}-byte reads) $a bytes, bob (${3}-byte reads) $b bytes: alice $share %, $n/8 readers OK"
        [ "$n" = 8 ] && awk -v s="$share" 'BEGIN { exit !(s >= 40 && s <= 60) }'
}

check_fair() {
        ok=0
        start_daemon fair.conf /tmp/fair.log || { note "no $TRNG"; return 1; }
        fair_round "same demand" 4096 4096 || ok=1
        # Unequal demand: the shares stay near half only if blocks are dealt
        # per uid, not per request.
        fair_round "unequal demand" 65536 32 || ok=1
        return $ok
}

# ---- 8. truerandomctl raw ------------------------------------------------
check_ctl_raw() {
        ok=0
        start_daemon ctl.conf /tmp/ctl.log || { note "no $TRNG"; return 1; }
        t0=$(up)
        out=$(truerandomctl raw jitter --samples 1000000 -o /tmp/raw.bin 2>&1)
        rc=$?
        note "raw jitter --samples 1000000: exit $rc after $(secs "$t0") s${out:+: $out}"
        [ $rc = 0 ] || ok=1
        expect "OK rows /tmp/raw.bin: 1000000 bytes,*" trclient rows /tmp/raw.bin 1000000 || ok=1
        rm -f /tmp/raw.bin
        return $ok
}

# ---- 9. truerandomctl raw --restart --------------------------------------
# The rows come from 1000 fresh instances of the source: one that replays
# the same samples after each open would give identical rows.
check_ctl_restart() {
        ok=0
        start_daemon ctl.conf /tmp/ctl.log || { note "no $TRNG"; return 1; }
        t0=$(up)
        out=$(truerandomctl raw jitter --restart -o /tmp/restart.bin 2>&1)
        rc=$?
        note "raw jitter --restart: exit $rc after $(secs "$t0") s${out:+: $out}"
        [ $rc = 0 ] || ok=1
        expect "OK rows /tmp/restart.bin: 1000000 bytes, * 1000 rows of 1000, 1000 distinct" \
                trclient rows /tmp/restart.bin 1000 || ok=1
        rm -f /tmp/restart.bin
        return $ok
}

# ---- 10. truerandomctl status --json ---------------------------------------
check_ctl_json() {
        ok=0
        start_daemon ctl.conf /tmp/ctl.log || { note "no $TRNG"; return 1; }
        wait_value sources.name=jitter.state healthy 100 || { note "jitter not healthy after $WAITED s"; ok=1; }
        ctl_status /tmp/st.json || { note "status --json failed: $(cat /tmp/st.json)"; return 1; }
        expect "OK json*" trclient json /tmp/st.json || { cat /tmp/st.json; return 1; }
        names=$(jqv /tmp/st.json 'sources.*.name')
        list=
        for n in $names; do
                state=$(jqv /tmp/st.json "sources.name=$n.state")
                list="$list $n=$state"
                [ "$(jqv /tmp/st.json "sources.name=$n.enabled")" = true ] || { note "$n not enabled"; ok=1; }
                case "$state" in
                startup | healthy | failed-intermittent | failed-permanent | unavailable | mixed | assessing) ;;
                *) note "$n: undocumented state '$state'"; ok=1 ;;
                esac
        done
        devices=$(jqv /tmp/st.json 'devices.*.name')
        note "sources:$list; devices: $devices"
        [ "$names" = "jitter rdseed hwrng kernel file" ] || ok=1
        [ "$(jqv /tmp/st.json sources.name=jitter.state)" = healthy ] || ok=1
        [ "$(jqv /tmp/st.json sources.name=kernel.state)" = mixed ] || ok=1
        [ "$(jqv /tmp/st.json sources.name=file.credited)" = true ] || ok=1
        [ "$devices" = "truerandom truerandom-random truerandom-urandom" ] || ok=1
        # The guest's jitter passed its self-test at open (TCG: the clock
        # steps by 2 with a rare odd delta), said so in the journal's
        # stand-in, and its running check has not flagged it.
        selftest=$(jqv /tmp/st.json sources.name=jitter.selftest.result)
        running=$(jqv /tmp/st.json sources.name=jitter.running_check.state)
        note "jitter self-test $selftest: $(jqv /tmp/st.json sources.name=jitter.selftest.detail);" \
                "running check $running, estimate $(jqv /tmp/st.json sources.name=jitter.running_check.estimate_bits)" \
                "bits over $(jqv /tmp/st.json sources.name=jitter.running_check.windows) windows"
        grep "sampler self-test" /tmp/ctl.log | head -n 1 | sed 's/^/INFO daemon log: /'
        [ "$selftest" = passed ] || ok=1
        case "$running" in pending | ok) ;; *) ok=1 ;; esac
        grep -q "source jitter: sampler self-test passed" /tmp/ctl.log || { note "no self-test line in the log"; ok=1; }
        [ $ok = 0 ] || cat /tmp/st.json
        return $ok
}

# ---- 11. truerandomctl as uid 1000 -----------------------------------------
check_ctl_perm() {
        ok=0
        start_daemon ctl.conf /tmp/ctl.log || { note "no $TRNG"; return 1; }
        rm -f /tmp/alice-raw.bin
        out=$(trclient -u $ALICE exec truerandomctl raw jitter -o /tmp/alice-raw.bin 2>&1)
        rc=$?
        note "raw as uid 1000: exit $rc: $out"
        [ $rc = 1 ] || ok=1
        case "$out" in *"permission denied"*) ;; *) ok=1 ;; esac
        [ ! -e /tmp/alice-raw.bin ] || { note "/tmp/alice-raw.bin left behind"; ok=1; }
        out=$(trclient -u $ALICE exec truerandomctl reseed 2>&1)
        rc=$?
        note "reseed as uid 1000: exit $rc: $out"
        [ $rc = 1 ] || ok=1
        out=$(trclient -u $ALICE exec truerandomctl status 2>&1)
        rc=$?
        echo "$out" | sed 's/^/INFO status (uid 1000): /'
        note "status as uid 1000: exit $rc, $(echo "$out" | wc -l) lines, \"$(echo "$out" | head -n 1)\""
        # A verdict (0 serving, 1 degraded, 2 not serving), not a refusal.
        [ $rc -le 2 ] || ok=1
        case "$out" in "truerandomd "*" serving"*jitter*truerandom-urandom*) ;; *) ok=1 ;; esac
        return $ok
}

# ---- 12. starvation: 16 greedy readers against two modest ones -------------
# latency FILE: the "p50 ... max ..." of a trclient line
latency() {
        sed -n 's/.*latency ms \(.*\)/\1/p' "$1"
}

# delta QUERY BEFORE AFTER: how much a status counter grew ("?": missing;
# awk, since a shell arithmetic error would end PID 1)
delta() {
        awk -v a="$(jqv "$2" "$1")" -v b="$(jqv "$3" "$1")" \
                'BEGIN { if (a ~ /^[0-9]+$/ && b ~ /^[0-9]+$/) print b - a; else print "?" }'
}

check_starve() {
        ok=0
        start_daemon starve.conf /tmp/starve.log || { note "no $TRNG"; return 1; }
        wait_value crng.seeded true 300 || { note "CRNG not seeded after $WAITED s"; return 1; }

        # Idle: nobody reads, for as long as the run lasts.
        ctl_status /tmp/st0.json
        t0=$(up)
        sleep 20
        ctl_status /tmp/st1.json
        idle_s=$(secs "$t0")
        blocks_idle=$(delta store.blocks_in /tmp/st0.json /tmp/st1.json)
        reseeds_idle=$(delta crng.reseeds /tmp/st0.json /tmp/st1.json)
        block_ms=$(awk -v s="$idle_s" -v b="$blocks_idle" 'BEGIN { printf "%.1f", (b + 0 > 0 ? 1000 * s / b : 0) }')
        limit=$(awk -v m="$block_ms" 'BEGIN { printf "%.1f", 10 * m }')
        note "idle $idle_s s: $blocks_idle blocks, one per $block_ms ms; $reseeds_idle reseeds"
        [ "$block_ms" != 0.0 ] || return 1

        # What the idle source stored would feed the run's first seconds.
        trclient drain $TRNG 10000 >/dev/null
        ctl_status /tmp/st2.json
        rm -f /tmp/starve-*.out
        t0=$(up)
        pids=
        for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
                trclient -u $ALICE -w 60 loop $TRNG 20 1048576 >/tmp/starve-alice$i.out 2>&1 &
                pids="$pids $!"
        done
        trclient -u $BOB -w 60 tick $TRNG 32 100 20 >/tmp/starve-bob.out 2>&1 &
        pids="$pids $!"
        trclient -w 60 tick $TRNG 32 100 20 >/tmp/starve-root.out 2>&1 &
        pids="$pids $!"
        # shellcheck disable=SC2086
        wait $pids
        ctl_status /tmp/st3.json
        run_s=$(secs "$t0")
        cat /tmp/starve-*.out | sed 's/^/INFO starve: /'

        blocks_run=$(delta store.blocks_in /tmp/st2.json /tmp/st3.json)
        reseeds_run=$(delta crng.reseeds /tmp/st2.json /tmp/st3.json)
        served=$(delta store.bytes_served /tmp/st2.json /tmp/st3.json)
        a_ok=$(cat /tmp/starve-alice*.out | grep -c '^OK loop')
        a=$(cat /tmp/starve-alice*.out | awk '$1 == "OK" { s += $4 } END { print s + 0 }')
        a_min=$(cat /tmp/starve-alice*.out | awk '$1 == "OK" && (m == "" || $4 < m) { m = $4 } END { print m + 0 }')
        a_max=$(cat /tmp/starve-alice*.out | awk '$1 == "OK" && $4 > m { m = $4 } END { print m + 0 }')
        a_p99=$(cat /tmp/starve-alice*.out | sed -n 's/.* p99 \([0-9.]*\).*/\1/p' | sort -n | tail -n 1)
        b=$(awk '$1 == "OK" { print $4 }' /tmp/starve-bob.out)
        r=$(awk '$1 == "OK" { print $4 }' /tmp/starve-root.out)
        b_p99=$(sed -n 's/.* p99 \([0-9.]*\).*/\1/p' /tmp/starve-bob.out)
        r_p99=$(sed -n 's/.* p99 \([0-9.]*\).*/\1/p' /tmp/starve-root.out)
        produced=$(awk -v n="$blocks_run" 'BEGIN { print 32 * n }')
        left=$(awk -v p="$produced" -v b="$b" -v r="$r" 'BEGIN { print p - b - r }')
        share=$(awk -v a="$a" -v l="$left" 'BEGIN { printf "%.1f", (l > 0 ? 100 * a / l : 0) }')
        note "run $run_s s: $blocks_run blocks ($produced bytes,\
 $(awk -v s="$run_s" -v b="$blocks_run" 'BEGIN { printf "%.1f", b / s }') blocks/s), $served bytes served,\
 $reseeds_run reseeds"
        note "alice (1000): 16 readers of 1 MiB, $a_ok OK, $a bytes ($a_min-$a_max each), worst p99 ${a_p99:-?} ms"
        note "bob (1002): ${b:-?} bytes in 32-byte reads every 100 ms, latency ms $(latency /tmp/starve-bob.out)"
        note "root: ${r:-?} bytes in 32-byte reads every 100 ms, latency ms $(latency /tmp/starve-root.out)"
        note "targets: bob's and root's p99 < $limit ms (10 blocks); alice $share % >= 80 % of the $left bytes\
 bob and root left; reseeds $reseeds_run = $reseeds_idle idle"
        [ "$a_ok" = 16 ] || ok=1
        awk -v b="${b_p99:-1e9}" -v r="${r_p99:-1e9}" -v l="$limit" 'BEGIN { exit !(b < l && r < l) }' || ok=1
        awk -v s="$share" 'BEGIN { exit !(s >= 80) }' || ok=1
        [ "$reseeds_run" = "$reseeds_idle" ] || ok=1
        return $ok
}

# ---- 13. 100 readers killed at once ----------------------------------------
check_killed() {
        ok=0
        start_daemon slow.conf /tmp/killed.log || { note "no $TRNG"; return 1; }
        trclient drain $TRNG 10000 >/dev/null
        trclient killreaders $TRNG 100 1000 2000 >/tmp/killed.out 2>&1 &
        kpid=$!
        if ! wait_line /tmp/killed.out '^(READY|ERR|FAIL)' 300; then
                kill -KILL $kpid
                note "no READY from killreaders"
                return 1
        fi
        ctl_status /tmp/st.json
        before=$(jqv /tmp/st.json devices.name=truerandom.waiting)
        kill -USR2 $kpid
        wait $kpid
        rc=$?
        note "$(oneline /tmp/killed.out)"
        note "status: ${before:-?} waiting before SIGKILL"
        [ $rc = 0 ] || ok=1
        [ "${before:-0}" -ge 90 ] || ok=1
        if wait_value devices.name=truerandom.waiting 0 50; then
                note "0 waiting $WAITED s after the readers were gone"
        else
                note "still $(stv devices.name=truerandom.waiting) waiting after $WAITED s"
                ok=1
        fi
        expect "OK read*32 bytes*" trclient -u $ALICE read $TRNG 32 10000 || ok=1
        return $ok
}

# ---- 14. a reader that opens and never reads ---------------------------------
check_idle_open() {
        ok=0
        start_daemon guest.conf /tmp/idle.log || { note "no $TRNG"; return 1; }
        base=$(stv devices.name=truerandom.open_files)
        trclient -u $ALICE fds $TRNG 1 >/tmp/idle.out 2>&1 &
        hpid=$!
        wait_line /tmp/idle.out '^(READY|ERR|FAIL)' 100 || { kill -KILL $hpid; note "no READY from fds"; return 1; }
        held=$(stv devices.name=truerandom.open_files)
        expect "OK read*4096 bytes*" trclient -u $BOB read $TRNG 4096 30000 || ok=1
        expect "OK read*4096 bytes*" trclient -u $ALICE read $TRNG 4096 30000 || ok=1
        kill -USR2 $hpid
        wait $hpid || ok=1
        note "$(oneline /tmp/idle.out)"
        note "open_files: ${base:-?}, ${held:-?} while held"
        [ -n "$base" ] && [ "$held" = $((base + 1)) ] || ok=1
        if wait_value devices.name=truerandom.open_files "$base" 50; then
                note "$base again after $WAITED s"
        else
                note "$(stv devices.name=truerandom.open_files) after $WAITED s, not $base"
                ok=1
        fi
        return $ok
}

# ---- 15. 10,000 open files -------------------------------------------------
check_fds() {
        ok=0
        start_daemon guest.conf /tmp/fds.log || { note "no $TRNG"; return 1; }
        base=$(stv devices.name=truerandom.open_files)
        trclient -w 300 fds $TRNG 10000 >/tmp/fds.out 2>&1 &
        fpid=$!
        if ! wait_line /tmp/fds.out '^(READY|ERR|FAIL)' 1800; then
                kill -KILL $fpid
                note "no READY from fds within 180 s"
                return 1
        fi
        held=$(stv devices.name=truerandom.open_files)
        expect "OK read*4096 bytes*" trclient -u $BOB read $TRNG 4096 30000 || ok=1
        expect "OK open*" trclient -u $ALICE open $TRNG || ok=1
        kill -USR2 $fpid
        wait $fpid || ok=1
        note "$(oneline /tmp/fds.out)"
        note "open_files: ${base:-?}, ${held:-?} while held"
        [ -n "$base" ] && [ "$held" = $((base + 10000)) ] || ok=1
        if wait_value devices.name=truerandom.open_files "$base" 100; then
                note "$base again after $WAITED s"
        else
                note "$(stv devices.name=truerandom.open_files) after $WAITED s, not $base"
                ok=1
        fi
        return $ok
}

# ---- 16. no /dev/cuse --------------------------------------------------------
# nocuse_run ARGS...: without /dev/cuse the daemon must stop at once and say
# what to do.
nocuse_run() {
        t0=$(up)
        timeout 20 truerandomd "$@" >/tmp/nocuse.out 2>&1
        rc=$?
        cat /tmp/nocuse.out >>/tmp/nocuse.log
        note "truerandomd $*: exit $rc after $(secs "$t0") s: $(oneline /tmp/nocuse.out)"
        stray=$(pidof truerandomd)
        if [ -n "$stray" ]; then
                note "still running as $stray"
                kill -KILL "$stray"
                return 1
        fi
        # 124 and up: timeout's, or a signal's.
        [ $rc -ge 1 ] && [ $rc -lt 124 ] && grep -q 'modprobe cuse' /tmp/nocuse.out
}

check_nocuse() {
        ok=0
        DLOG=/tmp/nocuse.log
        mv /dev/cuse /dev/cuse.moved || { note "cannot move /dev/cuse"; return 1; }
        nocuse_run --foreground --config $CONF/guest.conf || ok=1
        nocuse_run --config $CONF/guest.conf || ok=1
        mv /dev/cuse.moved /dev/cuse
        for n in $TRNG $RND $URND; do
                [ ! -e "$n" ] || { note "$n exists"; ok=1; }
        done
        return $ok
}

# ---- 17. a FIFO whose writer dies, an hwrng that is not there ---------------
check_srcfault() {
        ok=0
        rm -f /tmp/noise.fifo
        mkfifo /tmp/noise.fifo
        # The daemon opens the FIFO as it starts, which waits for a writer.
        trclient -w 120 stream /dev/urandom 1000000000 100 >/tmp/noise.fifo 2>/tmp/writer.out &
        wpid=$!
        start_daemon fifo.conf /tmp/fifo.log || { note "no $TRNG"; kill -KILL $wpid; return 1; }
        if ! wait_value sources.name=file.state healthy 100; then
                note "file source not healthy after $WAITED s"
                kill -KILL $wpid
                return 1
        fi
        kill -KILL $wpid
        wait $wpid 2>/dev/null
        # A waiting reader keeps up the demand: the daemon wants more samples.
        trclient -u $ALICE -w 60 loop $TRNG 30 4096 >/tmp/fifo-reader.out 2>&1 &
        rpid=$!
        if wait_value sources.name=file.state unavailable 100; then
                note "writer killed: file source unavailable after $WAITED s"
        else
                note "writer killed: file source still $(stv sources.name=file.state) after $WAITED s"
                ok=1
        fi
        wait_value devices.name=truerandom.waiting 1 50 || ok=1
        expect "OK cpu*" trclient cpu "$DPID" 5000 5 || ok=1
        ctl_status /tmp/st.json
        kill $rpid
        wait $rpid 2>/dev/null
        note "$(jqv /tmp/st.json devices.name=truerandom.waiting) reader waiting meanwhile"
        for n in file hwrng; do
                state=$(jqv /tmp/st.json "sources.name=$n.state")
                note "$n: $state, running $(jqv /tmp/st.json "sources.name=$n.running"),\
 $(jqv /tmp/st.json "sources.name=$n.read_errors") read errors,\
 last error \"$(jqv /tmp/st.json "sources.name=$n.last_error")\""
                [ "$state" = unavailable ] || ok=1
        done
        alive "$DPID" || { note "daemon gone"; ok=1; }
        rm -f /tmp/noise.fifo
        return $ok
}

# ---- 18. a reseed storm ------------------------------------------------------
# The file source paced as for check 12 (~31 blocks/s). Two 10 s runs of a
# reader of /dev/truerandom, the second with root calling RNDRESEEDCRNG
# (at least 10,000 times) all along: the storm may take one block per
# min_reseed_interval (1 s), and the reader keeps >= 90 % of its bytes.
# storm_run FILE_PREFIX [storm]: one run; status before and after.
storm_run() {
        trclient drain $TRNG 10000 >/dev/null
        t_storm=$(up)
        ctl_status "/tmp/$1-0.json"
        spid=
        if [ -n "${2:-}" ]; then
                trclient -w 120 storm $RND 10000 10 >"/tmp/$1-storm.out" 2>&1 &
                spid=$!
        fi
        trclient -u $ALICE -w 60 loop $TRNG 10 4096 >"/tmp/$1-reader.out" 2>&1
        [ -z "$spid" ] || wait $spid
        ctl_status "/tmp/$1-1.json"
        # The window both snapshots span (uptime has 10 ms steps).
        window=$(awk -v s="$(secs "$t_storm")" 'BEGIN { printf "%.2f", s + 0.02 }')
}

check_storm() {
        ok=0
        start_daemon starve.conf /tmp/storm.log || { note "no $TRNG"; return 1; }
        wait_value crng.seeded true 300 || { note "CRNG not seeded after $WAITED s"; return 1; }
        storm_run calm
        storm_run rough storm
        note "$(cat /tmp/rough-storm.out)"
        calm_bytes=$(awk '$1 == "OK" { print $4 }' /tmp/calm-reader.out)
        rough_bytes=$(awk '$1 == "OK" { print $4 }' /tmp/rough-reader.out)
        calm_made=$(delta store.blocks_in /tmp/calm-0.json /tmp/calm-1.json)
        calm_served=$(delta store.blocks_served /tmp/calm-0.json /tmp/calm-1.json)
        calm_seeded=$(delta store.blocks_seeded /tmp/calm-0.json /tmp/calm-1.json)
        rough_made=$(delta store.blocks_in /tmp/rough-0.json /tmp/rough-1.json)
        rough_served=$(delta store.blocks_served /tmp/rough-0.json /tmp/rough-1.json)
        rough_seeded=$(delta store.blocks_seeded /tmp/rough-0.json /tmp/rough-1.json)
        storm_s=$(sed -n 's/.* in \([0-9.]*\) s.*/\1/p' /tmp/rough-storm.out)
        note "10 s alone: reader ${calm_bytes:-?} bytes; blocks made $calm_made, to readers $calm_served,\
 to reseeds $calm_seeded"
        note "10 s under the storm: reader ${rough_bytes:-?} bytes; blocks made $rough_made, to readers\
 $rough_served, to reseeds $rough_seeded"
        ratio=$(awk -v a="${calm_bytes:-0}" -v b="${rough_bytes:-0}" 'BEGIN { printf "%.3f", (a > 0 ? b / a : 0) }')
        share=$(awk -v s="$rough_served" -v k="$rough_seeded" 'BEGIN { printf "%.3f", (s + k > 0 ? s / (s + k) : 0) }')
        note "reader rate ratio $ratio (>= 0.9); readers' share of the blocks taken under the storm $share;\
 reseed blocks $rough_seeded in a ${storm_s:-?} s storm, $window s between the snapshots (at most one per\
 second: floor + 1)"
        grep -q '^OK storm' /tmp/rough-storm.out || ok=1
        awk -v r="$ratio" 'BEGIN { exit !(r >= 0.9) }' || ok=1
        awk -v k="$rough_seeded" -v w="$window" 'BEGIN { exit !(k ~ /^[0-9]+$/ && k <= int(w) + 1) }' || ok=1
        return $ok
}

# ---- 19. long reads: the per-call cap, and signals ---------------------------
# longread_check DEV: a 64 MiB read returns all of it; a 1 GiB read that
# gets a caught SIGUSR1 after 100 ms returns what it has within 200 ms.
longread_check() {
        out=$(trclient -w 300 longread "$1" 67108864 1073741824 100)
        rc=$?
        note "$out"
        [ $rc = 0 ] || return 1
        got=$(echo "$out" | sed -n 's/.*with SIGUSR1 after 100 ms returned \([0-9]*\) bytes, .*/\1/p')
        lat=$(echo "$out" | sed -n 's/.*bytes, \([0-9.]*\) ms after the signal.*/\1/p')
        case "$out" in *"read(67108864) returned 67108864 bytes"*) ;; *) return 1 ;; esac
        [ -n "$got" ] && [ -n "$lat" ] || return 1
        awk -v g="$got" -v l="$lat" 'BEGIN { exit !(g >= 131072 && g < 1073741824 && l <= 200) }'
}

check_longread() {
        ok=0
        start_daemon long.conf /tmp/long.log || { note "no $TRNG"; return 1; }
        wait_value crng.seeded true 300 || { note "CRNG not seeded after $WAITED s"; return 1; }
        longread_check $URND || ok=1
        longread_check $RND || ok=1
        # The kernel's own, for comparison.
        note "kernel: $(trclient -w 300 longread /dev/urandom 67108864 1073741824 100)"
        wait_value store.fill 8192 600 || { note "store not full after $WAITED s"; ok=1; }
        expect "OK longread*read(1048576) returned 131072 bytes*" trclient -u $ALICE longread $TRNG 1048576 || ok=1
        return $ok
}

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

# ---- 21. per-uid limits ---------------------------------------------------------
# One uid at its quota of waiting reads: its next read is refused at once,
# while another uid and root still park and are served in turn when the
# sources start. One uid at its quota of open files: EMFILE for it alone.
# One uid flooding the control socket: root's status still answers, 10 of
# 10; a socket full of root's own connections answers "busy", status
# included, with exit status 3.
check_quota() {
        ok=0
        sock=/run/truerandomd/control
        start_daemon quota.conf /tmp/quota.log || { note "no $TRNG"; return 1; }
        trclient -u $ALICE -w 120 killreaders $TRNG 10 1000 5000 >/tmp/quota-alice.out 2>&1 &
        apid=$!
        wait_line /tmp/quota-alice.out '^(READY|ERR|FAIL)' 100 || { kill -KILL $apid; note "no READY"; return 1; }
        note "$(head -n 1 /tmp/quota-alice.out)"
        expect "ERR blocked*EAGAIN*did not block*" trclient -u $ALICE blocked $TRNG 32 500 || ok=1
        trclient -u $BOB -w 120 blocked $TRNG 32 500 60000 >/tmp/quota-bob.out 2>&1 &
        bpid=$!
        trclient -w 120 blocked $TRNG 32 500 60000 >/tmp/quota-root.out 2>&1 &
        rpid=$!
        sleep 1
        note "waiting $(stv devices.name=truerandom.waiting) reads of $(stv devices.name=truerandom.waiting_uids) uids"
        wait $bpid || ok=1
        wait $rpid || ok=1
        note "bob: $(cat /tmp/quota-bob.out)"
        note "root: $(cat /tmp/quota-root.out)"
        kill -USR2 $apid
        wait $apid

        trclient -u $ALICE fds $TRNG 64 >/tmp/quota-fds.out 2>&1 &
        fpid=$!
        wait_line /tmp/quota-fds.out '^(READY|ERR|FAIL)' 100 || { kill -KILL $fpid; note "no READY from fds"; return 1; }
        expect "ERR open*EMFILE on open*" trclient -u $ALICE open $TRNG || ok=1
        expect "OK open*" trclient -u $BOB open $TRNG || ok=1
        expect "OK open*" trclient open $TRNG || ok=1
        kill -USR2 $fpid
        wait $fpid || ok=1

        trclient -u $MALLORY -w 120 ctlflood $sock 32 20 >/tmp/quota-flood.out 2>&1 &
        mpid=$!
        sleep 2
        served=0
        for i in 1 2 3 4 5 6 7 8 9 10; do
                truerandomctl status >/dev/null 2>/tmp/quota-ctl.err
                rc=$?
                if [ $rc -le 2 ]; then
                        served=$((served + 1))
                else
                        note "root's status: exit $rc: $(oneline /tmp/quota-ctl.err)"
                fi
        done
        out=$(trclient -u $BOB exec truerandomctl status 2>&1 >/dev/null)
        rc=$?
        wait $mpid
        note "mallory: $(cat /tmp/quota-flood.out)"
        note "root's status during the flood: $served of 10 answered; bob's: exit $rc${out:+ ($out)}"
        [ $served = 10 ] || ok=1
        [ $rc -le 2 ] || ok=1

        trclient -w 120 ctlflood $sock 16 0 >/tmp/quota-hold.out 2>&1 &
        hpid=$!
        wait_line /tmp/quota-hold.out '^(READY|ERR|FAIL)' 100 || { kill -KILL $hpid; note "no READY from ctlflood"; return 1; }
        note "$(head -n 1 /tmp/quota-hold.out)"
        out=$(trclient -u $ALICE exec truerandomctl status 2>&1)
        rc=$?
        note "alice's status on a full socket: exit $rc: $out"
        case "$out" in *busy*) ;; *) ok=1 ;; esac
        [ $rc = 3 ] || ok=1
        out=$(truerandomctl reseed 2>&1)
        rc=$?
        note "root's reseed on a full socket: exit $rc: $out"
        case "$out" in *busy*) ;; *) ok=1 ;; esac
        [ $rc = 6 ] || ok=1
        kill -USR2 $hpid
        wait $hpid
        return $ok
}

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

# ---- 23. not root after set-up -------------------------------------------------
# Every thread (undropped-threads says which is not dropped), then what
# would need root again.
check_nonroot() {
        ok=0
        start_daemon rootonly.conf /tmp/nonroot.log || { note "no $TRNG"; return 1; }
        wait_value sources.name=file.state healthy 300 || { note "file source not healthy after $WAITED s"; ok=1; }
        note "log: $(grep -m1 'set up: running as' /tmp/nonroot.log)"
        grep -q 'set up: running as user truerandomd (uid 989, gid 989), no capability, no_new_privs' \
                /tmp/nonroot.log || ok=1
        # Every thread, a raw export's among them while one runs.
        truerandomctl raw jitter --samples 100000000 -o /tmp/nonroot-raw.bin >/dev/null 2>&1 &
        rpid=$!
        sleep 2
        set -- /proc/"$DPID"/task/*
        threads=$#
        bad=$(undropped-threads "$DPID")
        note "$threads threads (the loop, the file collector, a raw export): ${bad:-each with uids and gids 989, CapInh CapPrm CapEff CapBnd CapAmb 0, NoNewPrivs 1}"
        [ -z "$bad" ] && [ "$threads" -ge 3 ] || ok=1
        grep -E '^(Uid|Gid|CapEff|CapBnd|NoNewPrivs):' /proc/"$DPID"/status | tr '\t' ' ' | sed 's/^/INFO nonroot: /'
        kill $rpid 2>/dev/null
        wait $rpid 2>/dev/null
        rm -f /tmp/nonroot-raw.bin
        # What would need root again: a clear refusal, nothing half done.
        out=$(truerandomctl raw file --samples 1000 -o /tmp/nonroot-file.bin 2>&1)
        rc=$?
        note "raw file (0600 root): exit $rc: $out"
        [ $rc != 0 ] || ok=1
        case "$out" in *"Permission denied"*"without root since set-up"*) ;; *) ok=1 ;; esac
        [ ! -e /tmp/nonroot-file.bin ] || ok=1
        sed -i 's/^trng_mode = 0440$/trng_mode = 0444/' $CONF/rootonly.conf
        kill -HUP "$DPID"
        if wait_line /tmp/nonroot.log 'reload: \[device\] trng_mode changes the device nodes' 50; then
                note "reload to trng_mode 0444: $(grep -m1 'reload: \[device\] trng_mode' /tmp/nonroot.log)"
        else
                note "reload to trng_mode 0444: no refusal in the log"
                ok=1
        fi
        m=$(stat -c '%a %u:%g' $TRNG)
        note "$TRNG still $m; reload $(stv reload.result)"
        [ "$m" = "440 0:990" ] && [ "$(stv reload.result)" = refused ] || ok=1
        sed -i -e 's/^trng_mode = 0444$/trng_mode = 0440/' -e 's/rootonly.bin$/rootonly2.bin/' $CONF/rootonly.conf
        kill -HUP "$DPID"
        if wait_line /tmp/nonroot.log 'reload: source file: .*rootonly2.bin is not readable by uid 989' 50; then
                note "reload to another root-only file: $(grep -m1 'rootonly2.bin is not readable' /tmp/nonroot.log)"
        else
                note "reload to another root-only file: no refusal in the log"
                ok=1
        fi
        [ "$(stv sources.name=file.state)" = healthy ] || { note "the file source did not keep running"; ok=1; }
        sed -i 's/rootonly2.bin$/rootonly.bin/' $CONF/rootonly.conf
        alive "$DPID" || { note "daemon gone"; ok=1; }
        # By hand as a user who may not open /dev/cuse: said what to do.
        out=$(trclient -u $ALICE exec truerandomd --foreground --config $CONF/alice.conf 2>&1)
        rc=$?
        note "started as uid 1000: exit $rc: $out"
        [ $rc = 1 ] || ok=1
        case "$out" in *"cannot open /dev/cuse: Permission denied"*"start it as root"*) ;; *) ok=1 ;; esac
        return $ok
}

echo "=== guest up at $(up) s: $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPU,\
 $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -c -E '^(rdrand|rdseed)$') of rdrand/rdseed,\
 hwrng $(cat /sys/class/misc/hw_random/rng_current 2>/dev/null || echo none)\
 (rng_quality $(cat /sys/class/misc/hw_random/rng_quality 2>/dev/null || echo -))"
[ -c /dev/cuse ] || echo "INFO no /dev/cuse: $(ls /sys/module | tr '\n' ' ')"
run_check 0-auto check_auto
run_check 1-node check_node
run_check 2-fips check_fips
run_check 3-blocking check_blocking
run_check 4-dropin check_dropin
run_check 5-kill9 check_kill9
run_check 6-health check_health
run_check 7-fair check_fair
run_check 8-ctl-raw check_ctl_raw
run_check 9-ctl-restart check_ctl_restart
run_check 10-ctl-json check_ctl_json
run_check 11-ctl-perm check_ctl_perm
run_check 12-starve check_starve
run_check 13-killed check_killed
run_check 14-idle-open check_idle_open
run_check 15-fds check_fds
run_check 16-nocuse check_nocuse
run_check 17-srcfault check_srcfault
run_check 18-storm check_storm
run_check 19-longread check_longread
run_check 20-groupgate check_groupgate
run_check 21-quota check_quota
run_check 22-userns check_userns
run_check 23-nonroot check_nonroot
echo "SUMMARY: $PASSED passed, $FAILED failed, guest uptime $(up) s"
sync
poweroff -f
