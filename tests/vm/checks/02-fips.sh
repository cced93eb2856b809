# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
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

run_check 2-fips check_fips
