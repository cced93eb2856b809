#!/usr/bin/python3
# test-truerandomctl.py - the real truerandomctl against a fake daemon.
# status: the exit status monitoring acts on (0 serving, 1 degraded, 2 not
# serving, 3 unreachable) for the text, JSON and openmetrics forms alike;
# --json and openmetrics with no daemon still print what happened; the
# openmetrics output read by Prometheus' own parser
# (python3-prometheus-client), with every number of the JSON in it; text
# lines cut with a mark.
# raw -o FILE: a complete capture lands under FILE; a daemon that goes away
# mid-capture, or SIGINT, SIGTERM, SIGHUP, leave no file at all (and an
# older FILE as it was); the progress bar shows rate and time left.
# assess: --file on the committed jitter capture prints NIST's values for
# it (tests/unit/estimate/estimate-expected.h), as text and as JSON; assess SOURCE
# through a fake daemon and --direct on a file source measure a synthetic
# stream of exactly 2 bits per sample at just under 2; --restart asks the
# daemon for the 1000 x 1000 matrix too and exits 7 when the restart test
# fails; raw --direct writes the very samples; the refusals say why.
#   test-truerandomctl.py PATH-TO-TRUERANDOMCTL SOURCE-ROOT
import copy
import json
import math
import os
import pty
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families as prometheus_families

CTL = sys.argv[1]
ROOT = sys.argv[2]
failures = 0


def check(cond, what):
    global failures
    print(("ok     " if cond else "FAILED ") + what)
    if not cond:
        failures += 1


def source(name, state="healthy", credited=True):
    if not credited:
        return {"name": name, "enabled": True, "credited": False, "state": state}
    return {"name": name, "enabled": True, "credited": True, "state": state, "running": True,
            "credit_bits": 0.0 if state == "refused" else 0.3, "samples": 123456789, "blocks": 1000, "credited_bits": 320000,
            "credited_bits_per_s": 1234.5,
            "failures": {"rct": 0, "apt": 2, "permanent_rct": 0,
                         "permanent_apt": 1 if state == "failed-permanent" else 0},
            "read_errors": 0, "last_error": None,
            "credit_origin": "auto", "credit_cap_bits": 1.0,
            "selftest": {"result": "passed", "detail": "passed (step 2, ...)", "step": 2, "warmup": 8192,
                         "window": 4096, "backwards": 0, "zero_deltas": 0, "distinct": 190, "stuck": 301,
                         "low_bit": 2101, "lag": 5, "lag_match": 181, "row_max": 61},
            "gate": {"window": 65536, "windows_credited": 153, "windows_refused": 5 if state == "refused" else 0,
                     "refusals": 1 if state == "refused" else 0,
                     "last": "refused" if state == "refused" else "credited",
                     "estimate_bits": 0.412 if state == "refused" else 4.312}}


SERVING = {
    "version": 6, "daemon_version": "0.1", "uptime_s": 3725.4, "ready": True, "stopping": False,
    "trng_serving": True, "min_healthy": 1,
    "reload": {"count": 1, "result": "ok", "age_s": 12.5, "error": None},
    "sources": [source("jitter"), source("hwrng"), source("kernel", "mixed", False),
                {"name": "file", "enabled": False, "credited": False, "state": "disabled"}],
    "store": {"fill": 812, "capacity": 1024, "blocks_in": 2000, "blocks_served": 1100, "blocks_seeded": 88,
              "blocks_purged": 0, "bytes_served": 35200, "credited_bits_in": 640000,
              "credited_bits_taken": 352000},
    "devices": [{"name": "truerandom", "kind": "truerandom", "up": True, "open_files": 5, "waiting": 3,
                 "waiting_uids": 2, "reads": 100, "bytes_served": 35200, "eagain": 0, "interrupted": 0},
                {"name": "truerandom-random", "kind": "random", "up": True, "open_files": 1, "waiting": 0,
                 "waiting_uids": 0, "reads": 9, "bytes_served": 3650722202, "eagain": 0, "interrupted": 0}],
    "egd": {"socket": "/run/truerandomd/egd.sock", "connections": 2, "waiting": 1, "waiting_uids": 1,
            "accepted": 7, "refused": 1, "dropped": 1, "requests": 515, "bytes_served": 32960, "bytes_written": 4},
    "kernel_feed": {"feeds": 3, "last_bits": 256, "last_reason": "interval", "last_age_s": 42.5},
    "hwrng": {"core": True, "error": None, "current": "virtio_rng.0", "quality": 1000, "selected": False,
              "truncated": False,
              "devices": [{"name": "tpm-rng-0", "current": False, "tpm": 0},
                          {"name": "virtio_rng.0", "current": True, "tpm": None}]},
    "crng": {"seeded": True, "generation": 42, "reseeds": 41, "seed_age_s": 12.3, "reseed_pending": False,
             "vm_generation_changes": 1, "vm_blocks_purged": 812, "rekeys": 1,
             "triggers": [{"name": t, "requests": n, "reseeds": k}
                          for t, n, k in (("periodic", 38, 38), ("ioctl", 9, 1), ("control", 0, 0),
                                          ("vm_generation", 1, 1), ("resume", 2, 1))]},
}


def variant(change):
    s = copy.deepcopy(SERVING)
    change(s)
    return s


DEGRADED = variant(lambda s: s["sources"].__setitem__(1, source("hwrng", "failed-permanent")))
# The running gate refused jitter's last window: degraded too.
ESTIMATE = variant(lambda s: s["sources"].__setitem__(0, source("jitter", "refused")))
STARTING = variant(lambda s: s.update(ready=False, trng_serving=False))
CLOSED = variant(lambda s: s.update(trng_serving=False))
# One source left healthy of the two that min_healthy 2 asks for, yet an old
# daemon might still report serving: the client counts too.
UNDER_MIN = variant(lambda s: (s.update(min_healthy=3)))
REFUSED = variant(lambda s: s.update(reload={"count": 2, "result": "refused", "age_s": 3.0,
                                             "error": "/etc/truerandomd.conf:7: [device] group: group "
                                                      "'nosuchgroup' does not exist, which is quite a long "
                                                      "message indeed"}))


class FakeDaemon:
    """Answers every status request with one packet; reply may instead be
    a function (connection, request) for other conversations. eager: the
    reply goes out as the connection is accepted, before anything is read,
    and the connection is closed, as truerandomd turns one away."""

    def __init__(self, path, reply, eager=False):
        self.reply = reply
        self.eager = eager
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.bind(path)
        self.sock.listen(4)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                if self.eager:
                    conn.send(self.reply)
                    continue
                req = conn.recv(4096)
                if callable(self.reply):
                    try:
                        self.reply(conn, req)
                    except OSError:
                        pass
                elif req.startswith(b"truerandom-control/1 status"):
                    conn.send(self.reply)

    def close(self):
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def on_terminal(start):
    """Runs start(tty) with its stderr on a pseudo-terminal; the process
    once it ended, and all it wrote there."""
    master, slave = pty.openpty()
    p = start(slave)
    os.close(slave)
    shown = b""
    while True:
        r, _, _ = select.select([master], [], [], 60)
        if not r:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    p.wait(timeout=60)
    os.close(master)
    return p, shown


def run(path, *args):
    p = subprocess.run([CTL, "--socket", path, "status", *args], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=60)
    return p.returncode, p.stdout, p.stderr


def numbers(obj, path=""):
    """Every number (and boolean) in a JSON value, as (path, value)."""
    if isinstance(obj, bool):
        yield path, 1.0 if obj else 0.0
    elif isinstance(obj, (int, float)):
        yield path, float(obj)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from numbers(v, path + "_" + k if path else k)
    elif isinstance(obj, list):
        for v in obj:
            yield from numbers(v, path[:-1] if path.endswith("s") else path)


def parse_metrics(text, what, fmt="openmetrics"):
    """The families as prometheus_client's parser of that format reads
    them: the OpenMetrics one is strict (# EOF, _total, info, units)."""
    try:
        return list((openmetrics_families if fmt == "openmetrics" else prometheus_families)(text))
    except Exception as e:  # the parser's own words are the finding
        check(False, "%s %s: the parser reads the output (%s)" % (what, fmt, e))
        return []


def metric_name(path):
    """The metric of a JSON path: seconds in _seconds, rates per second."""
    name = "truerandom_" + path
    if name.endswith("_per_s"):
        return name[:-len("_per_s")] + "_per_second"
    return name[:-2] + "_seconds" if name.endswith("_s") else name


def check_metrics(text, status, what, fmt="openmetrics"):
    families = parse_metrics(text, what, fmt)
    check(len(families) > 0, "%s %s: the parser reads the output" % (what, fmt))
    samples = {}
    for f in families:
        check(f.documentation != "", "%s: %s has HELP" % (what, f.name))
        check(f.type in ("gauge", "counter", "info" if fmt == "openmetrics" else "gauge"),
              "%s: %s has TYPE" % (what, f.name))
        for s in f.samples:
            samples.setdefault(s.name, []).append(s.value)
            if s.name == "truerandom_build_info":
                check(s.labels == {"version": status.get("daemon_version", ""), "schema": str(status["version"])}
                      and s.value == 1, "%s %s: truerandom_build_info carries version and schema" % (what, fmt))
    check("truerandom_build_info" in samples, "%s %s: truerandom_build_info" % (what, fmt))
    # Every number of the JSON is the value of some sample of its name
    # (the root's schema version: the build info's label).
    missing = []
    for path, value in numbers(status):
        if path == "version":
            continue
        name = metric_name(path)
        values = samples.get(name, []) + samples.get(name + "_total", [])
        if not any(math.isclose(v, value, rel_tol=1e-12) for v in values):
            missing.append("%s=%g" % (path, value))
    check(not missing, "%s: every number of the JSON is a metric (missing: %s)" % (what, ", ".join(missing[:5])))
    return samples


with tempfile.TemporaryDirectory() as tmp:
    sock = os.path.join(tmp, "control")

    # A daemon that accepts nothing and whose backlog is full: connect()
    # itself must time out (30 s) and say busy, not hang. Started first and
    # judged last, so the wait overlaps the rest of the test.
    stuck_sock = os.path.join(tmp, "stuck")
    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    stuck.bind(stuck_sock)
    stuck.listen(0)
    filler = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    filler.connect(stuck_sock)
    stuck_result = {}

    def stuck_status():
        t = time.monotonic()
        try:
            p = subprocess.run([CTL, "--socket", stuck_sock, "status"], stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=60)
            stuck_result.update(code=p.returncode, err=p.stderr.strip())
        except subprocess.TimeoutExpired:
            stuck_result.update(code=None, err="still waiting after 60 s")
        stuck_result["secs"] = time.monotonic() - t

    stuck_thread = threading.Thread(target=stuck_status)
    stuck_thread.start()
    for name, status, verdict in (("serving", SERVING, 0), ("degraded", DEGRADED, 1),
                                  ("gate refused a window", ESTIMATE, 1),
                                  ("fewer than min_healthy", UNDER_MIN, 1), ("starting", STARTING, 2),
                                  ("/dev/truerandom closed", CLOSED, 2), ("reload refused", REFUSED, 0)):
        d = FakeDaemon(sock, b"ok " + json.dumps(status).encode())
        for fmt in ((), ("--json",), ("--format=text",), ("--format=json",), ("--format=openmetrics",),
                    ("--format=prometheus",)):
            code, out, err = run(sock, *fmt)
            check(code == verdict, "%s %s: exit %d (got %d; %s)" % (name, " ".join(fmt) or "text", verdict, code,
                                                                     err.strip()))
            if "json" in " ".join(fmt):
                check(json.loads(out) == status, "%s %s: the daemon's object as it came" % (name, fmt[0]))
            elif "openmetrics" in " ".join(fmt) or "prometheus" in " ".join(fmt):
                kind = "openmetrics" if "openmetrics" in fmt[0] else "prometheus"
                check(out.endswith("# EOF\n") == (kind == "openmetrics"), "%s %s: # EOF closes OpenMetrics alone"
                      % (name, kind))
                samples = check_metrics(out, status, name, kind)
                check(samples.get("truerandom_health") == [float(verdict)], name + ": truerandom_health")
                check(samples.get("truerandom_up") == [1.0], name + ": truerandom_up 1")
                if status is SERVING:
                    hw = sorted((s.labels["device"], s.name, s.value) for f in parse_metrics(out, name, kind)
                                for s in f.samples if s.name.startswith("truerandom_hwrng_device_"))
                    check(hw == [("tpm-rng-0", "truerandom_hwrng_device_current", 0.0),
                                 ("tpm-rng-0", "truerandom_hwrng_device_tpm", 0.0),
                                 ("virtio_rng.0", "truerandom_hwrng_device_current", 1.0)],
                          "openmetrics: each hwrng by its device label, current and TPM: %r" % hw)
            else:
                lines = out.splitlines()
                # Into a pipe nothing is cut: the refused reload's reason
                # comes whole, and no line ends in the cut mark.
                check(not any(l.endswith(">") for l in lines), name + ": into a pipe, no line cut")
                if status is REFUSED:
                    refused = [l for l in lines if "REFUSED" in l]
                    check(len(refused) == 1 and refused[0].endswith(status["reload"]["error"]),
                          "refused reload shown whole into a pipe: %r" % refused)
                    # On a terminal, 80 columns, the cut marked; --full
                    # there shows the whole line again.
                    for extra, cut in (((), True), (("--full",), False)):
                        p, shown = on_terminal(lambda slave: subprocess.Popen(
                            [CTL, "--socket", sock, "status", *fmt, *extra], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=subprocess.DEVNULL))
                        tty_lines = shown.decode(errors="replace").replace("\r", "").splitlines()
                        tty_refused = [l for l in tty_lines if "REFUSED" in l]
                        if cut:
                            check(all(len(l) <= 80 for l in tty_lines) and len(tty_refused) == 1 and
                                  tty_refused[0].endswith(">"),
                                  "on a terminal: within 80 columns, the refused line cut and marked: %r" %
                                  tty_refused)
                        else:
                            check(len(tty_refused) == 1 and tty_refused[0].endswith(status["reload"]["error"]),
                                  "on a terminal with --full: the refused line whole: %r" % tty_refused)
                if status is ESTIMATE:
                    check(any(l == "        gate: last REFUSED at 0.412 bits, credit 0.000; 153 credited, 5 refused"
                              for l in lines), "text shows the gate's refusal")
                    check(any(l.startswith("        self-test passed: step 2, 190 values") for l in lines),
                          "text shows the self-test")
                if status is CLOSED:
                    check(any(l.startswith("/dev/truerandom: not serving") for l in lines),
                          "text says /dev/truerandom is not serving")
                if status is SERVING:
                    feed = [l for l in lines if l.startswith("Kernel pool:")]
                    check(feed == ["Kernel pool: fed 3 times, last 256 bits (interval) 42.5 s ago"],
                          "text shows the kernel seeder's last feed: %r" % feed)
                    hw = [l for l in lines if l.startswith("Hardware RNGs:")]
                    check(hw == ["Hardware RNGs: tpm-rng-0 (TPM 0), virtio_rng.0 (current, quality 1000)"],
                          "text lists every hwrng, the current one with its quality, the TPM's: %r" % hw)
                    egd = [l.split() for l in lines if l.startswith("/run/truerandomd/egd.")]
                    check(egd == [["/run/truerandomd/egd.sock", "egd", "1", "1", "2", "32.2", "KiB"]],
                          "text shows the EGD socket as a device row: %r" % egd)
        d.close()
        os.unlink(sock)

    # Unreachable: no socket, a daemon that answers nonsense, one that
    # answers nothing. Every form exits 3 and the machine forms say why.
    for name, reply in (("no daemon", None), ("nonsense", b"ok {not json"), ("error reply", b"error busy")):
        d = FakeDaemon(sock, reply) if reply else None
        code, out, err = run(sock)
        check(code == 3 and out == "", "%s: text exits 3, nothing on stdout (got %d)" % (name, code))
        code, out, err = run(sock, "--json")
        try:
            j = json.loads(out)
        except ValueError:
            j = {}
        check(code == 3 and j.get("reachable") is False and j.get("error"),
              "%s: --json exits 3 with {reachable: false, error} (got %d, %r)" % (name, code, out))
        for kind in ("openmetrics", "prometheus"):
            code, out, err = run(sock, "--format=" + kind)
            samples = {s.name: s.value for f in parse_metrics(out, name, kind) for s in f.samples}
            check(code == 3 and samples == {"truerandom_up": 0.0},
                  "%s: %s exits 3 with truerandom_up 0 alone (got %d, %r)" % (name, kind, code, samples))
        if d:
            d.close()
            os.unlink(sock)

    # A full control socket answers "busy" as it accepts, and closes, often
    # before the request was sent: the client must still read that answer,
    # whichever came first (issue 12: root's status failed 10 of 10 with
    # "Broken pipe"). Exit 3 for status, 6 for the other commands.
    d = FakeDaemon(sock, b"error busy the control connections left are kept for root", eager=True)
    said = []
    for _ in range(20):
        code, out, err = run(sock)
        said.append((code, err.strip()))
    check(all(c == 3 and "busy: the control connections left are kept for root" in e for c, e in said),
          "status against a full socket: exit 3, 'busy' and why, every time (%s)" %
          sorted(set(said))[:3])
    code, out, err = run(sock, "--json")
    check(code == 3 and "busy" in json.loads(out or "{}").get("error", ""),
          "status --json against a full socket: exit 3, the error says busy (%d, %r)" % (code, out))
    p = subprocess.run([CTL, "--socket", sock, "reseed"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=60)
    check(p.returncode == 6 and "busy" in p.stderr,
          "reseed against a full socket: exit 6, busy (%d, %r)" % (p.returncode, p.stderr))
    d.close()
    os.unlink(sock)

    code, out, err = run(sock, "--format=yaml")
    check(code == 64 and "--format" in err, "--format=yaml is a usage error: exit 64, apart from status's 2")
    p = subprocess.run([CTL, "--socket", sock, "statsu"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=60)
    check(p.returncode == 64 and "unknown command" in p.stderr,
          "a typo of a command exits 64 (EX_USAGE), not 2 (not serving): %d %r" % (p.returncode, p.stderr))

    # ---- raw -o FILE ---------------------------------------------------
    N = 200000
    stalled = threading.Event()

    def exporter(ending):
        """start, then half the samples in 1000-byte packets, then ending."""
        def talk(conn, req):
            conn.send(b"start samples=%d rows=1" % N)
            for _ in range(N // 2 // 1000):
                conn.send(b"data " + b"\x5a" * 1000)
            if ending in ("complete", "slow"):
                for _ in range(N // 2 // 1000):
                    conn.send(b"data " + b"\xa5" * 1000)
                    if ending == "slow":
                        time.sleep(0.01)  # a bar is drawn every 100 ms
                conn.send(b"ok")
            elif ending == "stall":
                stalled.set()
                time.sleep(30)
            # "vanish": the connection closes here, mid-capture.
        return talk

    out_file = os.path.join(tmp, "capture.bin")

    def leftovers():
        return sorted(f for f in os.listdir(tmp) if f.startswith("capture.bin"))

    def raw(*extra, **kw):
        return subprocess.Popen([CTL, "--socket", sock, "raw", "jitter", "--samples", str(N), "-o", out_file,
                                 *extra], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=kw.get("stderr", subprocess.PIPE), text=True)

    d = FakeDaemon(sock, exporter("complete"))
    p = raw()
    _, err = p.communicate(timeout=60)
    data = open(out_file, "rb").read() if os.path.exists(out_file) else b""
    check(p.returncode == 0 and data == b"\x5a" * (N // 2) + b"\xa5" * (N // 2) and leftovers() == ["capture.bin"],
          "raw -o: a complete capture under its name, nothing else (exit %d, %d bytes, %s)" %
          (p.returncode, len(data), leftovers()))
    d.close()
    os.unlink(sock)

    # An older capture stays as it was whatever happens to a new one.
    for how in ("vanish", "SIGINT", "SIGTERM", "SIGHUP"):
        with open(out_file, "wb") as f:
            f.write(b"older capture")
        stalled.clear()
        d = FakeDaemon(sock, exporter("vanish" if how == "vanish" else "stall"))
        p = raw()
        if how != "vanish":
            stalled.wait(30)
            time.sleep(0.3)
            p.send_signal(getattr(signal, how))
        _, err = p.communicate(timeout=60)
        kept = open(out_file, "rb").read() if os.path.exists(out_file) else None
        check(p.returncode != 0 and kept == b"older capture" and leftovers() == ["capture.bin"],
              "raw -o, %s mid-capture: exit %d, no partial file left, the older file kept (%s)" %
              (how, p.returncode, leftovers()))
        d.close()
        os.unlink(sock)

    # The progress bar, on a terminal: rate and time left.
    os.unlink(out_file)
    d = FakeDaemon(sock, exporter("slow"))
    p, shown = on_terminal(lambda slave: raw(stderr=slave))
    last = shown.decode(errors="replace").replace("\r", "\n").strip().splitlines()[-1] if shown else ""
    check(p.returncode == 0 and "100%" in last and "B/s" in last and "done" in last,
          "raw progress shows the rate at the end: %r" % last)
    running = [l for l in shown.decode(errors="replace").split("\r") if " left" in l]
    check(len(running) > 0 and "B/s" in running[-1] and ":" in running[-1].split("B/s")[1],
          "raw progress shows the rate and the time left while it runs: %r" % running[-1:])
    d.close()
    os.unlink(sock)


    # ---- assess -------------------------------------------------------------

    ESTIMATORS = ["mcv", "collision", "markov", "compression", "t_tuple", "lrs", "multi_mcw", "lag", "multi_mmc",
                  "lz78y"]
    # The comparison test-estimate makes with NIST's values (estimate-check.h).
    TOLERANCE = 0.005

    
    def nist_expected(name):
        """NIST's values for a data set, read from estimate-expected.h."""
        text = open(os.path.join(ROOT, "tests", "unit", "estimate", "estimate-expected.h")).read()
        m = re.search(r'\{ "%s",.*?\.original =\s*\{([^}]*)\},\s*\.bitstring =\s*\{([^}]*)\},\s*'
                      r'\.h_original = ([0-9.NA]+), \.h_bitstring = ([0-9.NA]+), \.min_entropy = ([0-9.NA]+) \}' % name,
                      text, re.S)
        if not m:
            raise SystemExit("no %s entry in estimate-expected.h" % name)

        def num(t):
            t = t.strip()
            return None if t == "NAN" else float(t)
        return {"original": [num(t) for t in m.group(1).split(",")],
                "bitstring": [num(t) for t in m.group(2).split(",")],
                "h_original": num(m.group(3)), "h_bitstring": num(m.group(4)), "min_entropy": num(m.group(5))}

    
    def close(want, got):
        if want is None:
            return got is None
        return got is not None and abs(got - want) <= TOLERANCE * abs(want)

    
    def assess(*args, timeout=600):
        p = subprocess.run([CTL, "assess", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    
    capture = os.path.join(ROOT, "tests", "data", "jitter-raw-1M.bin")
    nist = nist_expected("jitter")
    code, out, err = assess("--file", capture)
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[0] in ESTIMATORS:
            rows[f[0]] = [None if v == "-" else float(v) for v in f[1:]]
    ok = code == 0 and len(rows) == 10
    for i, e in enumerate(ESTIMATORS):
        ok = ok and close(nist["original"][i], rows.get(e, [0, 0])[0]) and close(nist["bitstring"][i], rows.get(e, [0, 0])[1])
    for key, label in (("h_original", "H_original: "), ("h_bitstring", "H_bitstring: "),
                       ("min_entropy", "min(H_original, 8 X H_bitstring): ")):
        got = [float(l[len(label):]) for l in out.splitlines() if l.startswith(label)]
        ok = ok and len(got) == 1 and close(nist[key], got[0])
    check(ok, "assess --file jitter-raw-1M.bin prints NIST's values for it, each estimator within 0.5 %% "
              "(exit %d, %s)" % (code, err.strip() or "%d estimator lines" % len(rows)))

    code, out, err = assess("--file", capture, "--json")
    try:
        j = json.loads(out)
    except ValueError:
        j = {}
    ok = code == 0 and j.get("samples") == 1000000 and j.get("file") == capture
    for i, e in enumerate(ESTIMATORS):
        ok = ok and close(nist["original"][i], j.get(e, {}).get("original", 0)) and \
            close(nist["bitstring"][i], j.get(e, {}).get("bitstring", 0))
    for key in ("h_original", "h_bitstring", "min_entropy"):
        ok = ok and close(nist[key], j.get(key))
    check(ok, "assess --file --json: one object with NIST's values, one member per estimator (exit %d, %s)" %
          (code, err.strip()))

    
    def biased(n, seed=1):
        """Exactly 2 bits of min-entropy per sample: 0 with probability 1/4,
        else one of the other 255 values uniformly."""
        import random
        r = random.Random(seed)
        return bytes(0 if r.random() < 0.25 else r.randrange(1, 256) for _ in range(n))

    
    def stream_daemon(blocks):
        """Answers raw requests with the next of blocks (a bytes or a
        function of the request), sliced into 4 KiB packets; records the
        requests."""
        requests = []

        def talk(conn, req):
            requests.append(req.decode(errors="replace"))
            m = re.search(rb"samples=(\d+)(?: rows=(\d+))?", req)
            n, rows = int(m.group(1)), int(m.group(2) or 1)
            data = blocks[len(requests) - 1]
            data = data(n, rows) if callable(data) else data
            conn.send(b"start samples=%d rows=%d" % (n, rows))
            for i in range(0, len(data), 4096):
                conn.send(b"data " + data[i:i + 4096])
            conn.send(b"ok")
        return talk, requests

    
    stream = biased(100000)
    talk, requests = stream_daemon([stream])
    d = FakeDaemon(sock, talk)
    code, out, err = assess("--socket", sock, "jitter", "--samples", "100000", "--json")
    d.close()
    os.unlink(sock)
    try:
        j = json.loads(out)
    except ValueError:
        j = {}
    check(code == 0 and j.get("source") == "jitter" and j.get("captured") == "truerandomd" and
          j.get("samples") == 100000 and 1.9 < j.get("min_entropy", 0) <= 2.0 and
          requests == ["truerandom-control/1 raw source=jitter samples=100000 rows=1"],
          "assess SOURCE: captured through the daemon, 2 bits per sample measured just under 2 (exit %d, %s, %s)" %
          (code, j.get("min_entropy"), requests))

    # --restart: the matrix comes as a second request. Rows of the same
    # i.i.d. stream pass; rows that all start alike after a restart fail.
    matrix_ok = biased(1000000, seed=2)
    matrix_stuck = bytes(0x5a if (i % 1000) < 700 else b for i, b in enumerate(biased(1000000, seed=3)))
    for name, matrix, want in (("passes", matrix_ok, 0), ("fails", matrix_stuck, 7)):
        talk, requests = stream_daemon([stream, matrix])
        d = FakeDaemon(sock, talk)
        code, out, err = assess("--socket", sock, "jitter", "--samples", "100000", "--restart", "--json")
        d.close()
        os.unlink(sock)
        try:
            rs = json.loads(out).get("restart", {})
        except ValueError:
            rs = {}
        check(code == want and rs.get("rows") == 1000 and rs.get("passed") is (want == 0) and
              requests[1:] == ["truerandom-control/1 raw source=jitter samples=1000 rows=1000"],
              "assess --restart %s: exit %d (got %d; %s; %s)" % (name, want, code, rs.get("sanity_passed"),
                                                                err.strip()))

    # An error from the daemon is the daemon's word, with its exit code.
    d = FakeDaemon(sock, lambda conn, req: conn.send(b"error permission-denied raw needs root"))
    code, out, err = assess("--socket", sock, "jitter")
    d.close()
    os.unlink(sock)
    check(code == 1 and "raw needs root" in err and out == "", "assess as non-root: exit 1, the daemon's reason: %r" % err)

    # --direct: no daemon at all, the configuration's own file source.
    samples_file = os.path.join(tmp, "biased.bin")
    with open(samples_file, "wb") as f:
        f.write(biased(60000, seed=4))
    conf = os.path.join(tmp, "direct.conf")
    with open(conf, "w") as f:
        f.write("[control]\nsocket = %s/nowhere\n[source.jitter]\nenable = no\n"
                "[source.file]\nenable = yes\npath = %s\ncredit = auto\n" % (tmp, samples_file))
    code, out, err = assess("--config", conf, "file", "--direct", "--samples", "50000", "--json")
    try:
        j = json.loads(out)
    except ValueError:
        j = {}
    check(code == 0 and j.get("captured") == "direct" and 1.85 < j.get("min_entropy", 0) <= 2.0,
          "assess --direct: no daemon, the configured file source measured (exit %d, %s, %s)" %
          (code, j.get("min_entropy"), err.strip()))
    raw_out = os.path.join(tmp, "direct.bin")
    p = subprocess.run([CTL, "--config", conf, "raw", "file", "--direct", "-n", "30000", "-o", raw_out],
                       capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    check(p.returncode == 0 and open(raw_out, "rb").read() == open(samples_file, "rb").read()[:30000],
          "raw --direct -o: the source's own samples, in order (exit %d)" % p.returncode)

    for args, want, words in ((("--config", conf, "jitter", "--direct"), 4, "not enabled"),
                              (("--config", conf, "kernel", "--direct"), 4, "no raw samples"),
                              (("--config", conf, "nosuch", "--direct"), 4, "unknown source"),
                              (("--config", os.path.join(tmp, "absent.conf"), "file", "--direct"), 6, "not found"),
                              ((), 64, "a SOURCE or --file"),
                              (("jitter", "--file", capture), 64, "a SOURCE or --file"),
                              (("jitter", "--bits", "4"), 64, "--bits applies to assess --file only"),
                              (("--file", capture, "--bits", "9"), 64, "--bits must be"),
                              (("--file", capture, "--bits", "4"), 64, "more than 4 bits"),
                              (("--file", capture, "--restart"), 64, "apply to raw and to assess SOURCE only"),
                              (("--file", os.path.join(tmp, "absent.bin")), 64, "No such file"),
                              (("jitter", "--samples", "10"), 64, "assess --samples must be in")):
        code, out, err = assess(*args)
        check(code == want and words in err, "assess %s: exit %d, says '%s' (got %d: %r)" %
              (" ".join(os.path.basename(a) for a in args), want, words, code, err.strip()))

    # On a terminal: which estimator runs.
    p, shown = on_terminal(lambda slave: subprocess.Popen(
        [CTL, "assess", "--config", conf, "file", "--direct", "--samples", "50000"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave))
    text = shown.decode(errors="replace")
    check(p.returncode == 0 and "estimator 13 of 13" in text and "50000/50000" in text,
          "assess on a terminal: capture progress, then the estimators step by step: %r" % text[-160:])

    stuck_thread.join()
    check(stuck_result["code"] == 3 and "busy" in stuck_result["err"],
          "status against a full backlog: exit 3 and busy after its 30 s timeout, no hang "
          "(exit %s after %.1f s: %r)" % (stuck_result["code"], stuck_result["secs"], stuck_result["err"]))
    filler.close()
    stuck.close()
    

sys.exit(1 if failures else 0)
