#!/usr/bin/env python3
"""test-seed-kernel.py EXE - truerandom-seed-kernel as a program, against
a fake truerandomd (a SEQPACKET control socket answering "status") and a
FIFO for /dev/truerandom:
  - while the daemon says it is starting, nothing is read from the device
    and the refusal is said once, however many polls;
  - once it serves, --once feeds one block (32 bytes gone from the FIFO,
    no more: the library reads no further) and says what it gave;
  - a daemon that is not there: refused, nothing read.
It feeds the real kernel (RNDADDENTROPY needs CAP_SYS_ADMIN: skipped
without it), with bytes from os.urandom, so nothing predictable is
credited. Waits count the fake daemon's requests, never time."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from fifo import left_in, open_fed  # noqa: E402

SKIP = 77


def has_cap_sys_admin():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16) & (1 << 21) != 0
    return False


class FakeDaemon:
    def __init__(self, path):
        self.status = {"version": 3, "ready": False, "stopping": False, "trng_serving": False}
        self.requests = 0
        self.cond = threading.Condition()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.bind(path)
        self.sock.listen(8)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            conn, _ = self.sock.accept()
            with conn:
                req = conn.recv(4096)
                assert req.startswith(b"truerandom-control/1 status"), req
                with self.cond:
                    body = json.dumps(self.status)
                    self.requests += 1
                    self.cond.notify_all()
                conn.send(b"ok " + body.encode())

    def wait_requests(self, n):
        with self.cond:
            assert self.cond.wait_for(lambda: self.requests >= n, timeout=60), "no status request"


def main(exe):
    if not has_cap_sys_admin():
        print("skipped: RNDADDENTROPY needs CAP_SYS_ADMIN")
        return SKIP
    with tempfile.TemporaryDirectory() as d:
        fifo, sock = os.path.join(d, "truerandom"), os.path.join(d, "control")
        wfd = open_fed(fifo, os.urandom(96))
        daemon = FakeDaemon(sock)
        p = subprocess.Popen([exe, "--once", "--poll", "1", "--device", fifo, "--socket", sock],
                             stderr=subprocess.PIPE, text=True)
        daemon.wait_requests(3)
        with daemon.cond:
            daemon.status.update(ready=True, trng_serving=True)
        _, err = p.communicate(timeout=60)
        lines = err.splitlines()
        print(err, end="")
        assert p.returncode == 0, p.returncode
        refusals = [l for l in lines if "refusing to feed the kernel (boot feed due): %s is not serving: "
                    "truerandomd is starting" % fifo in l]
        assert len(refusals) == 1, lines
        fed = [l for l in lines if "fed the kernel 256 bits (1 block of 32 bytes from %s" % fifo in l]
        assert len(fed) == 1 and "(boot)" in fed[0], lines
        assert left_in(wfd) == 96 - 32

        os.write(wfd, os.urandom(64))
        p = subprocess.Popen([exe, "--once", "--poll", "1", "--device", fifo, "--socket", os.path.join(d, "none")],
                             stderr=subprocess.PIPE, text=True)
        line = p.stderr.readline()
        p.kill()
        p.wait()
        print(line, end="")
        assert "refusing to feed the kernel (boot feed due): truerandomd does not answer at" in line, line
        assert left_in(wfd) == 64
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
