#!/usr/bin/python3
# test-assess-gate.py - the real truerandomctl's assess --gate, as an
# auditor runs it: on capture files (--file, no daemon), and on a source
# through a fake daemon that serves a fixed stream.
# i.i.d. uniform bytes from a fixed-seed PRNG, four windows of 4096: all
# released under --credit 1.0; a window of one random 100-byte chunk
# repeated among uniform ones: that one refused, its estimate below 1;
# --json: the documented members, totals that add up from the windows;
# --bits 4: a 4-bit capture judged as 4-bit samples, a byte above 15
# refused as assess --file refuses it; a SOURCE: 16 windows asked of the
# daemon unless --samples says otherwise; bad --window, --credit, --cap,
# and captures shorter than one window: exit 64 (EX_USAGE) and the reason.
#   test-assess-gate.py PATH-TO-TRUERANDOMCTL
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

CTL = sys.argv[1]
W = 4096
failures = 0


def check(cond, what):
    global failures
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        failures += 1


def assess(*args):
    p = subprocess.run([CTL, "assess", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def uniform(n, seed):
    r = random.Random(seed)
    return bytes(r.getrandbits(8) for _ in range(n))


def repeated_chunk(n, seed):
    chunk = uniform(100, seed)
    return (chunk * (n // 100 + 1))[:n]


def windows_of(text):
    """[(k, start, end, estimate or None, credit or None)] of the text's window lines."""
    out = []
    for line in text.splitlines():
        m = re.fullmatch(r"window (\d+): samples (\d+)\.\.(\d+) estimate (\S+) bits/sample: (?:credit (\S+)|REFUSED)",
                         line)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), int(m.group(3)),
                        None if m.group(4) == "-" else float(m.group(4)),
                        None if m.group(5) is None else float(m.group(5))))
    return out


tmp = tempfile.mkdtemp(prefix="test-assess-gate.")


def capture_file(name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


# (a) uniform: every window released at the credit asked for.
good = capture_file("uniform.bin", uniform(4 * W, 1))
code, out, err = assess("--file", good, "--gate", "--window", str(W), "--credit", "1.0")
w = windows_of(out)
check(code == 0 and [x[:3] for x in w] == [(k, k * W, k * W + W - 1) for k in range(4)] and
      all(x[4] == 1.0 and x[3] >= 2.0 for x in w) and
      "credited: 16384 samples (4 of 4 windows released), 16384.000 bits" in out,
      "uniform bytes, 4 windows of 4096, --credit 1.0: all released (exit %d, %s, %r)" % (code, w, err.strip()))

# (b) a window of one random 100-byte chunk repeated: refused, < 1 bit;
# the trailing partial window is not judged.
mixed = capture_file("mixed.bin", uniform(3 * W, 2) + repeated_chunk(W, 3) + uniform(W, 4) + uniform(1000, 5))
code, out, err = assess("--file", mixed, "--gate", "--window", str(W), "--credit", "1.0")
w = windows_of(out)
check(code == 0 and len(w) == 5 and w[3][4] is None and w[3][3] < 1.0 and
      all(x[4] == 1.0 for i, x in enumerate(w) if i != 3) and "REFUSED" in out.splitlines()[5] and
      "credited: 16384 samples (4 of 5 windows released)" in out and "the last 1000 samples" in out,
      "a repeated 100-byte chunk: that window alone refused, estimate < 1, exit 0 (exit %d, %s, %r)" %
      (code, w, err.strip()))

# (c) --json: the schema, totals that add up; credit = auto, its cap 1.0 by default.
code, out, err = assess("--file", mixed, "--gate", "--window", str(W), "--json")
try:
    j = json.loads(out)
except ValueError:
    j = {}
ws = j.get("windows", [])
keys_ok = all(set(x) >= {"start", "samples", "estimate", "credit", "released"} for x in ws)
released = [x for x in ws if x.get("released")]
check(code == 0 and len(out.strip().splitlines()) == 1 and j.get("window") == W and
      j.get("policy", {}).get("credit") == "auto" and j.get("policy", {}).get("cap") == 1.0 and
      len(ws) == 5 and keys_ok and [x["start"] for x in ws] == [k * W for k in range(5)] and
      ws[3]["released"] is False and ws[3]["credit"] == 0 and ws[3]["estimate"] < 1.0 and
      all(0 < x["credit"] <= 1.0 and abs(x["credit"] - min(1.0, x["estimate"] / 2)) <= 0.001 for x in released) and
      j.get("samples_credited") == sum(x["samples"] for x in released) == 4 * W and
      abs(j.get("bits_credited", -1) - sum(x["samples"] * x["credit"] for x in released)) < 1e-6 and
      j.get("file") == mixed,
      "--json: one object, window/policy/windows, samples_credited and bits_credited add up (exit %d, %r)" %
      (code, out[:300] + err))

code, out, err = assess("--file", good, "--gate", "--window", str(W), "--credit", "0.25", "--json")
try:
    j = json.loads(out)
except ValueError:
    j = {}
check(code == 0 and j.get("policy", {}).get("credit") == 0.25 and j.get("policy", {}).get("cap", 0) is None and
      j.get("bits_credited") == 4 * W * 0.25,
      "--credit 0.25 --json: the policy's credit a number, no cap, 0.25 bits a sample credited (exit %d, %r)" %
      (code, out[:200] + err))

# (e) --bits 4: a 4-bit capture judged as 4-bit samples; a sample above
# 15 refused with its offset, as assess --file refuses it.
r = random.Random(6)
nibbles = bytes(r.getrandbits(4) for _ in range(2 * W))
four = capture_file("four.bin", nibbles)
code, out, err = assess("--file", four, "--gate", "--window", str(W), "--bits", "4", "--json")
try:
    j = json.loads(out)
except ValueError:
    j = {}
check(code == 0 and j.get("policy", {}).get("bits") == 4 and len(j.get("windows", [])) == 2 and
      all(2.0 < x["estimate"] <= 4.0 for x in j["windows"]),
      "--bits 4: a 4-bit capture accepted and judged as 4-bit samples (exit %d, %r)" % (code, out[:200] + err))
code8, out8, _ = assess("--file", four, "--gate", "--window", str(W), "--json")
try:
    e8 = [x["estimate"] for x in json.loads(out8)["windows"]]
except (ValueError, KeyError):
    e8 = []
check(code8 == 0 and len(e8) == 2 and all(a > b + 0.5 for a, b in zip([x["estimate"] for x in j.get("windows", [])], e8)),
      "--bits reaches the estimators: the same file judged as bytes gets less (%s)" % e8)
above = capture_file("above.bin", nibbles[:W + 7] + b"\x10" + nibbles[W + 8:])
code, out, err = assess("--file", above, "--gate", "--window", str(W), "--bits", "4")
check(code == 64 and "offset %d is 16, more than 4 bits" % (W + 7) in err and out == "",
      "--bits 4 and a sample of 16: exit 64, the offset said (exit %d, %r)" % (code, err.strip()))

# A SOURCE: the capture asked of the daemon is 16 windows, or --samples.
sock = os.path.join(tmp, "control")
requests = []


def serve(listener):
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            req = conn.recv(4096).decode(errors="replace")
            requests.append(req)
            n = int(re.search(r"samples=(\d+)", req).group(1))
            data = uniform(n, 7)
            conn.send(b"start samples=%d rows=1" % n)
            for i in range(0, n, 4096):
                conn.send(b"data " + data[i:i + 4096])
            conn.send(b"ok")


listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
listener.bind(sock)
listener.listen(4)
threading.Thread(target=serve, args=(listener,), daemon=True).start()
code, out, err = assess("--socket", sock, "jitter", "--gate", "--window", str(W), "--json")
try:
    j = json.loads(out)
except ValueError:
    j = {}
check(code == 0 and requests == ["truerandom-control/1 raw source=jitter samples=%d rows=1" % (16 * W)] and
      len(j.get("windows", [])) == 16 and j.get("source") == "jitter" and j.get("captured") == "truerandomd" and
      j.get("policy", {}).get("cap") == 1.0,
      "assess jitter --gate: 16 windows asked of the daemon, each judged (exit %d, %s, %r)" %
      (code, requests, err.strip()))
del requests[:]
code, out, err = assess("--socket", sock, "jitter", "--gate", "--window", str(W), "--samples", str(2 * W + 5))
check(code == 0 and requests == ["truerandom-control/1 raw source=jitter samples=%d rows=1" % (2 * W + 5)] and
      len(windows_of(out)) == 2,
      "assess jitter --gate --samples: that many asked, the partial window left out (exit %d, %r)" % (code, err.strip()))
listener.close()

# (d) the refusals: exit 64 (EX_USAGE) and why.
short = capture_file("short.bin", uniform(W - 1, 8))
for args, words in ((("--window", "100"), "--window must be a number of samples in [4096, 1048576]"),
                    (("--window", "4194305"), "--window must be"),
                    (("--window", "many"), "--window must be"),
                    (("--credit", "0"), "--credit must be auto or bits per sample in (0, 8]"),
                    (("--credit", "8.5"), "--credit must be"),
                    (("--credit", "half"), "--credit must be"),
                    (("--cap", "0"), "--cap must be"),
                    (("--cap", "9"), "--cap must be"),
                    (("--credit", "0.5", "--cap", "1"), "--cap applies to --credit auto only"),
                    (("--window", "8192", "--file", short), "fewer than one window of 8192"),
                    (("--file", short), "fewer than one window of 65536")):
    full = ("--gate",) + args + (() if "--file" in args else ("--file", good))
    code, out, err = assess(*full)
    check(code == 64 and words in err and out == "", "assess %s: exit 64, says '%s' (got %d: %r)" %
          (" ".join(os.path.basename(a) for a in full), words, code, err.strip()))
for args, words in ((("--file", good, "--credit", "1"), "apply to assess --gate only"),
                    (("--file", good, "--window", "4096"), "apply to assess --gate only"),
                    (("jitter", "--gate", "--samples", "4095", "--window", "4096"), "fewer than one window of 4096"),
                    (("jitter", "--gate", "--restart"), "--restart does not apply to assess --gate")):
    code, out, err = assess(*args)
    check(code == 64 and words in err and out == "", "assess %s: exit 64, says '%s' (got %d: %r)" %
          (" ".join(os.path.basename(a) for a in args), words, code, err.strip()))

shutil.rmtree(tmp)
sys.exit(1 if failures else 0)
