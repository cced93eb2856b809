# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
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

run_check 19-longread check_longread
