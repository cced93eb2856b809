# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 26. a device per source (issue 21) ----------------------------------------
# [device] per_source_devices = yes with two credited sources, jitter and a
# file of /dev/urandom's bytes: /dev/truerandom-jitter and -file appear as
# the kernel names them, 0440 root:truerandom like /dev/truerandom (the
# daemon, root at set-up, sets them here; the systemd suite checks udev's
# rule), none for the sources not credited. A group member reads each,
# mallory is refused; what a device serves shows in its own source's served
# count alone, byte for byte; no 32-byte block comes twice across the two
# devices and /dev/truerandom. Then each device's throughput beside
# /dev/truerandom's in the same boot, reading past a 64-block store so that
# the sources' pace shows (figures, not judged).

# served SOURCE FILE: bytes of SOURCE's blocks served so far, as FILE says
served() {
        jqv "$2" "sources.name=$1.bytes_served"
}

check_persource() {
        ok=0
        start_daemon persource.conf /tmp/persource.log || { note "no $TRNG"; return 1; }
        for s in file jitter; do
                wait_path $TRNG-$s 50 || { note "no $TRNG-$s"; ok=1; continue; }
                m=$(stat -c '%a %u:%g' $TRNG-$s)
                [ "$m" = "440 0:990" ] || { note "$TRNG-$s: $m, not 440 0:990"; ok=1; }
        done
        for s in rdseed hwrng tpm kernel; do
                [ ! -e $TRNG-$s ] || { note "$TRNG-$s exists, its source is not credited"; ok=1; }
        done
        expect "ERR open*EACCES on open*" trclient -u $MALLORY open $TRNG-file || ok=1
        ctl_status /tmp/ps0.json || { note "no status"; return 1; }
        expect "OK read*: 4096 bytes*" trclient -u $ALICE -w 150 read $TRNG-file 4096 120000 || ok=1
        ctl_status /tmp/ps1.json
        expect "OK read*: 4096 bytes*" trclient -u $ALICE -w 150 read $TRNG-jitter 4096 120000 || ok=1
        ctl_status /tmp/ps2.json
        f0=$(served file /tmp/ps0.json) f1=$(served file /tmp/ps1.json) f2=$(served file /tmp/ps2.json)
        j0=$(served jitter /tmp/ps0.json) j1=$(served jitter /tmp/ps1.json) j2=$(served jitter /tmp/ps2.json)
        note "served file $f0 -> $f1 -> $f2, jitter $j0 -> $j1 -> $j2"
        if [ $((f1 - f0)) != 4096 ] || [ "$j1" != "$j0" ]; then
                note "the file device's read is not file's alone"
                ok=1
        fi
        if [ $((j2 - j1)) != 4096 ] || [ "$f2" != "$f1" ]; then
                note "the jitter device's read is not jitter's alone"
                ok=1
        fi
        : >/tmp/ps-blocks
        for d in $TRNG-file $TRNG-jitter $TRNG; do
                trclient -w 150 bytes $d 8192 120000 >/tmp/ps-bytes.out 2>&1
                grep -q "^OK bytes.*: 8192 bytes" /tmp/ps-bytes.out ||
                        { note "$d: $(oneline /tmp/ps-bytes.out | cut -c1-120)"; ok=1; }
                sed -n 's/.* hex=//p' /tmp/ps-bytes.out | fold -w 64 >>/tmp/ps-blocks
        done
        n=$(wc -l </tmp/ps-blocks)
        dup=$(sort /tmp/ps-blocks | uniq -d | wc -l)
        note "$n blocks read, $dup twice"
        { [ "$n" -eq 768 ] && [ "$dup" -eq 0 ]; } || ok=1
        for d in $TRNG-file $TRNG-jitter $TRNG; do
                out=$(trclient -w 300 read $d 32768 240000 2>&1)
                case "$out" in
                OK\ read*) note "$d: $(echo "$out" | sed 's/^OK read [^:]*: //; s/ (uid.*//')" ;;
                *) note "$d: $out"; ok=1 ;;
                esac
        done
        return $ok
}

run_check 26-per-source-devices check_persource
