#!/usr/bin/python3
# test-ctl-ledger.py - truerandomctl ledger on ledgers written here, from
# the format ledger/record.h documents (each record's "hash" the SHA-256 of
# its line before ',"hash":"' and a '}'; "prev" the record before's), not
# by the project's writer: so the reader is checked against the document.
# Shown: every record in order across two files; --json gives the lines
# byte for byte. --verify: exit 0 on an intact chain with its head; a
# changed, removed or inserted record, a garbage line, a wrong --anchor
# exit 8 and name the file and line; a torn last line is reported and
# allowed; no ledger, a missing directory and bad options are refused.
#   test-ctl-ledger.py PATH-TO-TRUERANDOMCTL
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

CTL = sys.argv[1]
failures = 0
ZERO = "0" * 64


def check(cond, what):
    global failures
    print(("ok     " if cond else "FAILED ") + what)
    if not cond:
        failures += 1


def record(seq, prev, event, details, realtime=1733500000000000):
    body = ",".join('"%s":"%s"' % kv for kv in details)
    head = ('{"seq":%d,"realtime_usec":%d,"monotonic_usec":%d,"event":"%s","details":{%s},"prev":"%s"'
            % (seq, realtime + seq * 1000000, seq * 1000, event, body, prev))
    digest = hashlib.sha256((head + "}").encode()).hexdigest()
    return head + ',"hash":"%s"}' % digest, digest


def chain(n):
    """n records: a start, reseeds, a stop; returns (lines, head hash)."""
    lines, prev = [], ZERO
    for seq in range(1, n + 1):
        if seq == 1:
            event, details = "start", [("version", "0.3.0"), ("config_sha256", "ab" * 32)]
        elif seq == n:
            event, details = "stop", [("reason", "signal 15")]
        else:
            event, details = "reseed", [("reason", "periodic")]
        line, prev = record(seq, prev, event, details)
        lines.append(line)
    return lines, prev


def write_ledger(d, lines, split):
    """Records 1..split in the first file, the rest in the second."""
    for name in os.listdir(d):
        os.unlink(os.path.join(d, name))
    for first, part in ((1, lines[:split]), (split + 1, lines[split:])):
        if part:
            with open(os.path.join(d, "ledger-%020d.jsonl" % first), "w") as f:
                f.write("".join(line + "\n" for line in part))


def ctl(*args):
    p = subprocess.run([CTL, "ledger", *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def verify(d, *extra):
    return ctl("--directory", d, "--verify", *extra)


def main():
    tmp = tempfile.mkdtemp(prefix="truerandom-ctl-ledger-")
    try:
        d = os.path.join(tmp, "state")
        os.mkdir(d)
        lines, head = chain(6)
        write_ledger(d, lines, 3)

        code, out, err = ctl("--directory", d)
        shown = out.splitlines()
        check(code == 0 and len(shown) == 6, "ledger shows 6 records (exit %d, %d lines, %r)" % (code, len(shown), err))
        check(shown[0].split()[:3] == ["1", "2024-12-06T15:46:41Z", "start"] and "version=0.3.0" in shown[0],
              "the first line: seq, UTC time, event, details: %r" % shown[0])
        check([s.split()[0] for s in shown] == [str(i) for i in range(1, 7)], "in order across the two files")

        code, out, err = ctl("--directory", d, "--json")
        check(code == 0 and out == "".join(line + "\n" for line in lines),
              "--json writes the lines byte for byte (exit %d)" % code)
        check(all(json.loads(x)["seq"] == i + 1 for i, x in enumerate(out.splitlines())), "each --json line is JSON")

        code, out, err = verify(d)
        check(code == 0 and "head: record 6 hash " + head in out and "the chain holds from record 1" in out,
              "--verify: intact, the head named (exit %d): %r" % (code, out))
        code, out, err = verify(d, "--json")
        report = json.loads(out) if code == 0 else {}
        check(report.get("intact") is True and report.get("records") == 6 and report.get("last_seq") == 6
              and report.get("last_hash") == head and report.get("findings") == [],
              "--verify --json: intact, 6 records, the head (%r)" % report)
        code, out, err = verify(d, "--anchor", "6:" + head)
        check(code == 0, "--anchor at the head holds (exit %d)" % code)
        code, out, err = verify(d, "--anchor", "4:" + head)
        check(code == 8 and "anchor" in out, "an --anchor with another record's hash: exit 8 (%d): %r" % (code, out))

        # A record changed in place: its bytes no longer hash to its "hash".
        bad = list(lines)
        bad[1] = bad[1].replace('"periodic"', '"ioctl"')
        write_ledger(d, bad, 3)
        code, out, err = verify(d)
        check(code == 8 and "changed   ledger-%020d.jsonl line 2, record 2" % 1 in out,
              "a changed record: exit 8, its file and line (%d): %r" % (code, out))
        code, out, err = verify(d, "--json")
        found = json.loads(out).get("findings", [{}]) if out else [{}]
        check(code == 8 and found[0].get("kind") == "changed" and found[0].get("seq") == 2,
              "the same as JSON (%d): %r" % (code, found))

        # A record removed from the middle of the second file.
        write_ledger(d, lines[:4] + lines[5:], 3)
        code, out, err = verify(d)
        check(code == 8 and "removed" in out and "record 5" in out, "a removed record: exit 8, named (%d): %r" % (code, out))

        # A record that no one links to.
        forged, _ = record(7, "cd" * 32, "purge", [("blocks", "9"), ("reason", "resume")])
        write_ledger(d, lines[:4] + [forged] + lines[4:], 3)
        code, out, err = verify(d)
        check(code == 8 and "inserted" in out, "an inserted record: exit 8 (%d): %r" % (code, out))

        # Garbage in place of a line.
        write_ledger(d, lines[:2] + ["not json at all"] + lines[2:], 3)
        code, out, err = verify(d)
        check(code == 8 and "malformed" in out, "a garbage line: exit 8 (%d): %r" % (code, out))
        code, out, err = ctl("--directory", d)
        check(code == 0 and len(out.splitlines()) == 6 and ".jsonl:3: not a ledger record" in err,
              "shown, the garbage said on stderr with its place: %r" % err)

        # A crash mid-record: the last line has no end. Allowed.
        write_ledger(d, lines, 3)
        with open(os.path.join(d, "ledger-%020d.jsonl" % 4), "a") as f:
            f.write(lines[0][:40])
        code, out, err = verify(d)
        check(code == 0 and "torn" in out, "a torn last record is reported, the chain holds (exit %d): %r" % (code, out))

        # Refusals.
        empty = os.path.join(tmp, "empty")
        os.mkdir(empty)
        code, out, err = verify(empty)
        check(code == 6 and "no ledger" in err, "no ledger: exit 6 (%d): %r" % (code, err))
        code, out, err = verify(os.path.join(tmp, "absent"))
        check(code == 6 and "absent" in err, "a missing directory: exit 6 (%d): %r" % (code, err))
        code, out, err = verify(d, "--anchor", "6:abc")
        check(code == 64 and "--anchor" in err, "a bad --anchor: exit 64 (%d)" % code)
        code, out, err = ctl("--directory", d, "--anchor", "6:" + head)
        check(code == 64 and "--verify" in err, "--anchor without --verify: exit 64 (%d)" % code)
        conf = os.path.join(tmp, "truerandomd.conf")
        with open(conf, "w") as f:
            f.write("[assessment]\nstate_directory = %s\n" % d)
        code, out, err = subprocess.run([CTL, "--config", conf, "ledger", "--verify"], capture_output=True,
                                        text=True, timeout=60).returncode, None, None
        check(code == 0, "the directory from --config's state_directory (exit %d)" % code)
    finally:
        shutil.rmtree(tmp)
    print("%d failed" % failures)
    sys.exit(1 if failures else 0)


main()
