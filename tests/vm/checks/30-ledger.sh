# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 30. the ledger (issue 22) -------------------------------------------------
# The daemon with a state directory of its own, made by the daemon (as its
# user, after the privilege drop): a start record naming the configuration;
# a reload applied and one refused (a bad line), each a record with its
# result; a stop record, and the head the daemon logged at its stop holds
# as --anchor. A second run continues the chain; a run killed with SIGKILL
# leaves the chain whole (no stop record; at most a torn line, allowed).
# Then a record edited in its file: --verify exits 8 and names it.

ledger() {
        truerandomctl --config $CONF/ledger.conf ledger "$@"
}

# events: the ledger's events in order, one word each
events() {
        ledger 2>/dev/null | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $3 }'
}

check_ledger() {
        ok=0
        dir=/tmp/ledger-state
        rm -rf $dir
        { cat $CONF/slow.conf; printf '[assessment]\nstate_directory = %s\n' $dir; } >$CONF/ledger.conf
        start_daemon ledger.conf /tmp/ledger.log || { note "no $TRNG"; return 1; }
        m=$(stat -c '%a %U' $dir 2>&1)
        [ "$m" = "700 truerandomd" ] || { note "$dir: $m, not 700 truerandomd"; ok=1; }
        ledger >/tmp/ledger1.out 2>&1
        grep -q " start .* config=$CONF/ledger.conf" /tmp/ledger1.out ||
                { note "no start record: $(oneline /tmp/ledger1.out | cut -c1-200)"; ok=1; }

        sed -i 's/^rate = 1000$/rate = 2000/' $CONF/ledger.conf
        truerandomctl --config $CONF/ledger.conf reload >/dev/null 2>&1 || { note "reload refused"; ok=1; }
        echo "bogus line" >>$CONF/ledger.conf
        truerandomctl --config $CONF/ledger.conf reload >/dev/null 2>&1 && { note "a bad file reloaded"; ok=1; }
        sed -i '/^bogus line$/d' $CONF/ledger.conf
        ledger >/tmp/ledger2.out 2>&1
        grep -q " reload .* result=applied" /tmp/ledger2.out || { note "no applied reload record"; ok=1; }
        grep -q " reload .* result=refused error=.*ledger.conf" /tmp/ledger2.out ||
                { note "no refused reload record with its reason"; ok=1; }
        stop_daemon
        ledger 2>/dev/null | grep -q " stop .* reason=signal 15" || { note "no stop record"; ok=1; }
        head=$(sed -n 's/.*ledger closed: .* head record \([0-9]*\) hash \([0-9a-f]*\).*/\1:\2/p' /tmp/ledger.log | tail -1)
        [ -n "$head" ] || { note "no head in the daemon's log"; ok=1; }
        ledger --verify --anchor "$head" >/tmp/ledger-a.out 2>&1
        rc=$?
        note "anchor $head: exit $rc, $(tail -1 /tmp/ledger-a.out)"
        { [ $rc = 0 ] && grep -q "^the chain holds from record 1, up to the anchor" /tmp/ledger-a.out; } || ok=1

        # A second run, then one killed: the chain goes on across them.
        start_daemon ledger.conf /tmp/ledger.log || { note "no second start"; return 1; }
        stop_daemon
        start_daemon ledger.conf /tmp/ledger.log || { note "no third start"; return 1; }
        wait_line /tmp/ledger.log "ready: " 600 || note "the third run never got ready"
        kill -KILL "$DPID"
        wait "$DPID" 2>/dev/null
        DPID=
        trclient gone 3000 $TRNG >/dev/null
        ev=$(events)
        note "events: $ev"
        starts=$(echo "$ev" | tr ' ' '\n' | grep -c '^start$')
        stops=$(echo "$ev" | tr ' ' '\n' | grep -c '^stop$')
        { [ "$starts" = 3 ] && [ "$stops" = 2 ] && [ "${ev##* }" != stop ]; } ||
                { note "not three runs, the last without a stop"; ok=1; }
        ledger --verify >/tmp/ledger-v.out 2>&1 || { note "$(oneline /tmp/ledger-v.out)"; ok=1; }
        note "$(sed -n 's/^ledger in [^:]*: //p' /tmp/ledger-v.out), $(cat $dir/ledger-*.jsonl | wc -c) bytes"

        # Tampering: record 2 edited in place (its clock reading).
        f=$(ls $dir/ledger-*.jsonl | head -1)
        sed -i '2s/"monotonic_usec":\([0-9]*\)/"monotonic_usec":1\1/' "$f"
        ledger --verify >/tmp/ledger-t.out 2>&1
        rc=$?
        note "edited: exit $rc, $(grep '^changed' /tmp/ledger-t.out | head -1)"
        { [ $rc = 8 ] && grep -q "^changed   ledger-0*1.jsonl line 2, record 2$" /tmp/ledger-t.out; } || ok=1
        return $ok
}

run_check 30-ledger-chain check_ledger
