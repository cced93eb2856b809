# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 32. induced failures (issue 22) -------------------------------------------
# [daemon] allow_induce = yes, the file source at credit 0.1 and jitter
# (credit = auto, so that file is not the last healthy source), a root
# reader draining /dev/truerandom so that the sources run. For each of
# stuck, bias and repeat on file: truerandomctl induce exits 0, the gate
# catches it within two windows of its first sample (the status's induce
# member), no stored block holds one of its samples, and file is healthy
# again. Then selftest on jitter: it fails its self-test, reopens and
# passes. The ledger holds every step and its chain holds. The samples and
# seconds to detection are printed, not judged.

# ind KEY: file's induce member KEY, from a fresh status
ind() {
        stv "sources.name=$1.induce.$2"
}

check_induce() {
        ok=0
        dir=/tmp/induce-state
        rm -rf $dir
        cat >$CONF/induce.conf <<EOF
[pool]
gate_window = 4096
[daemon]
allow_induce = yes
[assessment]
state_directory = $dir
[source.jitter]
credit = auto
[source.rdseed]
enable = no
[source.hwrng]
enable = no
[source.file]
enable = yes
path = $CONF/urandom.bin
credit = 0.1
rate = 20000
loop = yes
EOF
        start_daemon induce.conf /tmp/induce.log || { note "no $TRNG"; return 1; }
        wait_value "sources.name=jitter.state" healthy 1200 || note "jitter not healthy: $(stv sources.name=jitter.state)"
        wait_value "sources.name=file.state" healthy 1200 || note "file not healthy"
        cat $TRNG >/dev/null 2>&1 &
        reader=$!
        for k in stuck bias repeat; do
                c0=$(ind file caught)
                t=$(up)
                expect "*induced $k failure begins at its next window*" truerandomctl induce file $k || ok=1
                wait_value "sources.name=file.induce.caught" $((c0 + 1)) 1200 ||
                        { note "$k not caught: uncaught $(ind file uncaught)"; ok=1; }
                by=$(ind file caught_by) after=$(ind file detected_after) blocks=$(ind file blocks)
                note "$k: caught by the $by after $after samples, $(secs "$t") s; $blocks induced blocks stored"
                { [ "$by" = gate ] && [ "$after" -ge 4096 ] && [ "$after" -le 8192 ] && [ "$blocks" = 0 ]; } || ok=1
                wait_value "sources.name=file.state" healthy 1200 || { note "file not healthy after $k"; ok=1; }
        done
        expect "*self-test failed, then it reopened*" truerandomctl induce jitter selftest || ok=1
        [ "$(stv sources.name=jitter.selftest.result)" = passed ] || { note "jitter's self-test not passed after"; ok=1; }
        kill "$reader" 2>/dev/null
        wait "$reader" 2>/dev/null
        stop_daemon
        truerandomctl --config $CONF/induce.conf ledger >/tmp/induce-ledger.out 2>&1
        n=$(grep -c ' induce ' /tmp/induce-ledger.out)
        caught=$(grep -c ' induce .*phase=caught by=gate .*blocks_stored=0' /tmp/induce-ledger.out)
        failed=$(grep ' self-test .*source=jitter ' /tmp/induce-ledger.out | grep -vc 'result=passed')
        note "ledger: $n induce records, $caught caught, $failed failed self-test"
        { [ "$caught" = 3 ] && [ "$failed" -ge 1 ]; } || ok=1
        truerandomctl --config $CONF/induce.conf ledger --verify >/tmp/induce-v.out 2>&1 ||
                { note "$(oneline /tmp/induce-v.out)"; ok=1; }
        return $ok
}

run_check 32-induce-kinds check_induce
