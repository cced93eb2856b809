#!/usr/bin/python3
# test-ctl-evidence.py - truerandomctl evidence --direct on a configuration
# whose only credited source is a file of 1,000,000 fixed pseudo-random
# samples, no daemon: the bundle holds the two captures (the file's own
# samples; a 1000 x 1000 restart matrix), a JSON report whose h_original,
# h_bitstring and min_entropy are those `assess --file --json` finds on the
# extracted capture, README.txt with the NIST commands, a MANIFEST that
# `sha256sum -c` accepts, the ledger of the state directory, the daemon's
# parts stated absent. `evidence verify` exits 0 on it; one byte altered
# inside a file, or the tar cut, exits 8 naming that file. A bundle signed
# with a key from `evidence keygen` verifies with it, not with another key
# ("signature"); an unsigned one with --key is "unsigned". An interrupted
# run leaves no file; a terminal sees the estimators' progress.
#   test-ctl-evidence.py PATH-TO-TRUERANDOMCTL
import hashlib
import json
import os
import pty
import random
import select
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

CTL = sys.argv[1]
failures = 0
SAMPLES = 1000000


def check(cond, what):
    global failures
    print(("ok     " if cond else "FAILED ") + what)
    if not cond:
        failures += 1


def ctl(*args, timeout=600):
    p = subprocess.run([CTL, *args], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def one_record_ledger(d):
    """A ledger of one start record, as ledger/record.h writes it."""
    os.makedirs(d)
    head = ('{"seq":1,"realtime_usec":1733500000000000,"monotonic_usec":1000,"event":"start",'
            '"details":{"version":"0.3.0"},"prev":"%s"' % ("0" * 64))
    line = head + ',"hash":"%s"}\n' % hashlib.sha256((head + "}").encode()).hexdigest()
    with open(os.path.join(d, "ledger-%020d.jsonl" % 1), "w") as f:
        f.write(line)


def tar_bytes(path):
    with open(path, "rb") as f:
        return bytearray(f.read())


def member_offset(path, name):
    """Where the bytes of member name start in the tar, and its size."""
    with tarfile.open(path) as t:
        m = t.getmember(name)
        return m.offset_data, m.size


def verify(bundle, *extra):
    return ctl("evidence", "verify", bundle, *extra)


def on_terminal(argv):
    """Runs argv with stderr on a pseudo-terminal: (exit code, what it drew)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    shown = b""
    while True:
        r, _, _ = select.select([master], [], [], 600)
        try:
            chunk = os.read(master, 4096) if r else b""
        except OSError:
            chunk = b""
        if not chunk:
            break
        shown += chunk
    os.close(master)
    return p.wait(timeout=600), shown.decode(errors="replace")


def main(tmp):
    samples_file = os.path.join(tmp, "samples.bin")
    samples = random.Random(22).randbytes(SAMPLES)
    with open(samples_file, "wb") as f:
        f.write(samples)
    one_record_ledger(os.path.join(tmp, "state"))
    conf = os.path.join(tmp, "evidence.conf")
    with open(conf, "w") as f:
        f.write("[control]\nsocket = %s/nowhere\n[assessment]\nstate_directory = %s/state\n"
                "[source.jitter]\nenable = no\n[source.rdseed]\nenable = no\n[source.hwrng]\nenable = no\n"
                "[source.file]\nenable = yes\npath = %s\ncredit = auto\n" % (tmp, tmp, samples_file))
    bundle = os.path.join(tmp, "bundle.tar")

    t0 = time.monotonic()
    code, out, err = ctl("--config", conf, "evidence", "--direct", "-o", bundle)
    check(code == 0 and os.path.exists(bundle),
          "evidence --direct: exit 0 with no daemon, %.1f s here: %s (%d: %s)" %
          (time.monotonic() - t0, out.strip().split("\n")[0], code, err.strip()))
    if code != 0:
        return
    check(not [n for n in os.listdir(tmp) if ".partial-" in n], "no temporary file left beside the bundle")

    x = os.path.join(tmp, "x")
    with tarfile.open(bundle) as t:
        names = t.getnames()
        t.extractall(x)
    want = ["file.bin", "file-restart.bin", "file-report.txt", "file-report.json", "status.json", "gate.json",
            "health.json", "config.json", "machine.json", "build.json", "ledger/ledger-%020d.jsonl" % 1,
            "ledger-verify.json", "README.txt", "MANIFEST"]
    check(all(n in names for n in want) and "config/1-evidence.conf" in names,
          "the bundle lists the captures, reports, parts, README.txt and MANIFEST: %s" % " ".join(names))

    def read(name, mode="r"):
        with open(os.path.join(x, name), mode) as f:
            return f.read()

    captures = [n for n in names if n.endswith(".bin")]
    restart = [n for n in captures if "restart" in n]
    check(len(captures) == 2 and len(restart) == 1 and all(len(read(n, "rb")) == SAMPLES for n in captures),
          "two .bin captures of 1,000,000 bytes, one named restart: %s" % captures)
    check(read("file.bin", "rb") == samples, "file.bin is the source's own samples, in order")
    matrix = read("file-restart.bin", "rb")
    check(all(matrix[r * 1000:(r + 1) * 1000] == samples[:1000] for r in range(1000)),
          "file-restart.bin: 1000 rows, each the file source reopened (its first 1000 samples)")

    report = json.loads(read("file-report.json"))
    code, out, err = ctl("assess", "--file", os.path.join(x, "file.bin"), "--json")
    assess = json.loads(out) if code == 0 else {}
    keys = ("h_original", "h_bitstring", "min_entropy")
    check(all(k in report and report[k] == assess.get(k) for k in keys),
          "file-report.json: %s as assess --file --json finds them on the extracted capture" %
          ", ".join("%s %s" % (k, report.get(k)) for k in keys))
    check(report.get("source") == "file" and report.get("captured") == "direct" and
          report.get("restart", {}).get("rows") == 1000 and report["restart"].get("sanity_passed") is False,
          "the report names its source and capture; the restart test of a replayed file fails its sanity check")
    text = read("file-report.txt")
    check("min(H_original, 8 X H_bitstring): %.6f" % report["min_entropy"] in text and "restart test: FAILED" in text,
          "file-report.txt: the estimators and the restart test as assess prints them")

    readme = read("README.txt")
    check("ea_non_iid -v file.bin 8" in readme and
          "ea_restart -n -v file-restart.bin 8 %.6f" % report["min_entropy"] in readme,
          "README.txt names the NIST commands, ea_restart with H_I the min-entropy")
    check(all(("%s" % n) in readme and "absent" in readme for n in ("status.json", "gate.json", "health.json")) and
          json.loads(read("status.json")).get("absent", "").startswith("--direct"),
          "with --direct the daemon's parts are stated absent, in README.txt and their files")
    ledger = json.loads(read("ledger-verify.json"))
    check(ledger.get("intact") is True and ledger.get("records") == 1, "the ledger copied, its check intact")
    machine, build = json.loads(read("machine.json")), json.loads(read("build.json"))
    check("cpu" in machine and "kernel" in machine and machine["kernel"]["release"] == os.uname().release and
          "version" in build and ("build_id" in build),
          "machine.json: cpu and kernel (%s); build.json: version %s, build id %s" %
          (machine["kernel"]["release"], build.get("version"), build.get("build_id")))
    p = subprocess.run(["sha256sum", "--quiet", "-c", "MANIFEST"], cwd=x, capture_output=True, text=True)
    check(p.returncode == 0 and len(read("MANIFEST").splitlines()) == len(names) - 1,
          "sha256sum -c MANIFEST: every file (%s)" % (p.stdout + p.stderr).strip())

    code, out, err = verify(bundle)
    check(code == 0 and "the bundle holds" in out, "evidence verify: exit 0 (%s)" % out.strip().split("\n")[0])

    # One byte altered inside a file.
    off, size = member_offset(bundle, "file-restart.bin")
    data = tar_bytes(bundle)
    data[off + size // 2] ^= 0x01
    altered = os.path.join(tmp, "altered.tar")
    with open(altered, "wb") as f:
        f.write(data)
    code, out, err = verify(altered)
    check(code == 8 and "changed    file-restart.bin" in out, "one byte altered: exit 8, names the file: %r" % out)

    # The tar cut inside a file.
    off, size = member_offset(bundle, "file-report.json")
    cut = os.path.join(tmp, "cut.tar")
    with open(cut, "wb") as f:
        f.write(tar_bytes(bundle)[:off + size // 2])
    code, out, err = verify(cut)
    check(code == 8 and "truncated  file-report.json" in out, "the tar cut: exit 8, names the cut file: %r" % out)

    # Signed: with its own key, with another, and an unsigned bundle.
    keys = {}
    for k in ("one", "two"):
        sk, pk = os.path.join(tmp, k + ".key"), os.path.join(tmp, k + ".pub")
        code, out, err = ctl("evidence", "keygen", sk, pk)
        keys[k] = (sk, pk)
        check(code == 0 and os.stat(sk).st_mode & 0o777 == 0o600, "evidence keygen: exit 0, secret key 0600")
    code, out, err = ctl("evidence", "keygen", *keys["one"])
    check(code == 64 and "never overwritten" in err, "keygen never overwrites a key: %r" % err.strip())
    signed = os.path.join(tmp, "signed.tar")
    code, drawn = on_terminal([CTL, "--config", conf, "evidence", "--direct", "-o", signed, "--sign", keys["one"][0]])
    check(code == 0 and "1000000/1000000" in drawn and "estimator 13 of 13" in drawn,
          "evidence --sign on a terminal: the capture and the estimators step by step: %r" % drawn[-120:])
    code, out, err = verify(signed, "--key", keys["one"][1])
    check(code == 0 and "signature: good" in out, "signed, verify --key: exit 0, the signature good")
    code, out, err = verify(signed, "--key", keys["two"][1])
    check(code == 8 and "signature  MANIFEST.sig" in out, "another key: exit 8, signature: %r" % out)
    code, out, err = verify(bundle, "--key", keys["one"][1])
    check(code == 8 and "unsigned" in out, "an unsigned bundle with --key: exit 8, unsigned: %r" % out)

    # Interrupted: no file, no temporary file.
    late = os.path.join(tmp, "late.tar")
    p = subprocess.Popen([CTL, "--config", conf, "evidence", "--direct", "-o", late], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    p.wait(timeout=60)
    check(not os.path.exists(late) and not [n for n in os.listdir(tmp) if ".partial-" in n],
          "SIGINT during a run: no bundle, no temporary file (exit %d)" % p.returncode)

    for args, want, words in ((("evidence", "--direct"), 64, "needs -o FILE.tar"),
                              (("evidence", "verify", bundle, "--sign", keys["one"][0]), 64, "verify takes"),
                              (("evidence", "verify", os.path.join(tmp, "absent.tar")), 64, "No such file"),
                              (("evidence", "-o", late, "--direct", "--key", keys["one"][1]), 64, "--key applies")):
        code, out, err = ctl("--config", conf, *args)
        check(code == want and words in err, "%s: exit %d, says '%s' (%d: %r)" %
              (" ".join(os.path.basename(a) for a in args), want, words, code, err.strip()))


tmp = tempfile.mkdtemp(prefix="ctl-evidence-")
try:
    main(tmp)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("%d failure(s)" % failures)
sys.exit(1 if failures else 0)
