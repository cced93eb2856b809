# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
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

run_check 12-starve check_starve
