# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 18. a reseed storm ------------------------------------------------------
# The file source paced at ~31 blocks/s (storm.conf). Two 10 s runs of a
# reader of /dev/truerandom, the second with root calling RNDRESEEDCRNG
# (at least 10,000 times; past the per-uid budget of /proc looks, root's
# too, some get EAGAIN, counted) all along: the storm may take one block per
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
        start_daemon storm.conf /tmp/storm.log || { note "no $TRNG"; return 1; }
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

run_check 18-storm check_storm
