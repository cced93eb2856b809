# shellcheck shell=sh
# One check of the vm suite: guest-init.sh (/init) sources every
# /checks/NN-*.sh in turn, after its helpers; each file ends with its
# run_check line, which run-vm-suite.sh also reads for the list it expects.
# ---- 31. the evidence bundle (issue 22) -----------------------------------------
# truerandomctl evidence through the running daemon (not --direct), as
# root, for its one credited source, a file of /dev/urandom's bytes
# replayed at full speed: the bundle holds the two 1,000,000-byte
# captures, the daemon's status (not absent, as --direct leaves it), the
# ledger of the daemon's state directory; verify exits 0, sha256sum -c
# MANIFEST (busybox's) agrees; one byte altered in file.bin: exit 8,
# naming it. Its size and the time it took are noted (figures, not judged);
# so is the min-entropy, near 0: the 64 KiB file repeats every 65,536
# samples, which the longest-repeated-substring and predictor estimators
# see.

check_evidence() {
        ok=0
        dir=/tmp/evidence-state
        rm -rf $dir /tmp/evidence.tar /tmp/evidence-x
        { sed '/^rate = /d' $CONF/slow.conf; printf '[assessment]\nstate_directory = %s\n' $dir; } \
                >$CONF/evidence.conf
        start_daemon evidence.conf /tmp/evidence.log || { note "no $TRNG"; return 1; }
        # A window judged: a credit in force, and cutoffs for health.json.
        wait_value "sources.name=file.state" healthy 1200 || note "file not healthy: $(stv sources.name=file.state)"
        t0=$(up)
        truerandomctl --config $CONF/evidence.conf evidence -o /tmp/evidence.tar >/tmp/evidence.out 2>&1
        rc=$?
        note "evidence: exit $rc in $(secs "$t0") s, $(stat -c %s /tmp/evidence.tar 2>/dev/null) bytes"
        [ $rc = 0 ] || { note "$(oneline /tmp/evidence.out | cut -c1-300)"; return 1; }
        note "$(sed -n 's/^file: //p' /tmp/evidence.out)"
        mkdir -p /tmp/evidence-x
        tar -xf /tmp/evidence.tar -C /tmp/evidence-x || { note "tar cannot read it"; ok=1; }
        for f in file.bin file-restart.bin; do
                n=$(stat -c %s /tmp/evidence-x/$f 2>/dev/null)
                [ "$n" = 1000000 ] || { note "$f: ${n:-missing}, not 1000000 bytes"; ok=1; }
        done
        grep -q '"captured": "truerandomd"' /tmp/evidence-x/file-report.json ||
                { note "the report does not say it came through truerandomd"; ok=1; }
        grep -q '"absent"' /tmp/evidence-x/status.json && { note "status.json absent through the daemon"; ok=1; }
        ls /tmp/evidence-x/ledger/ledger-*.jsonl >/dev/null 2>&1 || { note "no ledger in the bundle"; ok=1; }
        tr -d ' \n' </tmp/evidence-x/gate.json | grep -q '"recent_verdicts":\[{"start":' ||
                { note "gate.json has no recent verdicts"; ok=1; }
        # Credit 0.1: the RCT's cutoffs 1 + 30/0.1 and 1 + 60/0.1.
        tr -d ' \n' </tmp/evidence-x/health.json | grep -q '"alpha_log2":-30,"rct_cutoff":301,' ||
                { note "health.json: $(tr -d ' \n' </tmp/evidence-x/health.json | cut -c1-200)"; ok=1; }
        (cd /tmp/evidence-x && sha256sum -c MANIFEST >/tmp/evidence-sum.out 2>&1) ||
                { note "sha256sum -c: $(grep -v ': OK$' /tmp/evidence-sum.out | head -2)"; ok=1; }
        truerandomctl evidence verify /tmp/evidence.tar >/tmp/evidence-v.out 2>&1 ||
                { note "verify: $(oneline /tmp/evidence-v.out)"; ok=1; }

        # One byte of file.bin's, the first entry's, altered: past the
        # 512-byte header, in its data.
        printf 'X' | dd of=/tmp/evidence.tar bs=1 seek=4096 conv=notrunc 2>/dev/null
        truerandomctl evidence verify /tmp/evidence.tar >/tmp/evidence-t.out 2>&1
        rc=$?
        note "altered: exit $rc, $(grep '^changed' /tmp/evidence-t.out)"
        { [ $rc = 8 ] && grep -q '^changed    file.bin$' /tmp/evidence-t.out; } || ok=1
        rm -rf /tmp/evidence.tar /tmp/evidence-x
        return $ok
}

run_check 31-evidence-bundle check_evidence
