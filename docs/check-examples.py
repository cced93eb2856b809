#!/usr/bin/env python3
"""check-examples.py C-EXAMPLE EXAMPLES-DIR - the reading examples of
docs/READING.md (C through libtruerandom, Python, shell) against a FIFO
standing in for /dev/truerandom, and the pitfalls the guide names:
  - each example prints exactly the bytes the device gave, in order, and
    took no byte more from it (32, and 100 across blocks);
  - a buffered Python open().read(32) takes far more than 32;
  - `dd bs=32 count=1` without iflag=fullblock returns a short read as it
    is (10 bytes of 32), and `head -c 32` asks no more than 32.
And the EGD host's examples agree: docs/examples/libvirt-rng-egd.xml is
well-formed, an EGD backend of a virtio <rng>, and connects to the socket
etc/examples/egd-host.conf names."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from fifo import left_in, open_fed  # noqa: E402

DATA = bytes((i * 7 + 3) % 256 for i in range(4096))


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True).stdout


def check_example(d, cmd, n):
    fifo = os.path.join(d, "dev-%d-%s" % (n, os.path.basename(cmd[-1])))
    w = open_fed(fifo, DATA)
    out = run(cmd + [str(n), fifo]).strip()
    assert out == DATA[:n].hex(), (cmd, out)
    assert left_in(w) == len(DATA) - n, cmd
    os.close(w)


def check_pitfalls(d):
    fifo = os.path.join(d, "pitfall-python")
    w = open_fed(fifo, DATA)
    with open(fifo, "rb") as f:
        assert len(f.read(32)) == 32
    taken = len(DATA) - left_in(w)
    assert taken > 32 * 32, taken
    print("buffered Python open().read(32) took %d bytes (%d blocks)" % (taken, taken // 32))
    os.close(w)

    fifo = os.path.join(d, "pitfall-dd")
    w = open_fed(fifo, DATA[:10])
    out = subprocess.run(["dd", "if=" + fifo, "bs=32", "count=1", "status=none"], capture_output=True,
                         timeout=60, check=True).stdout
    assert out == DATA[:10], out
    os.close(w)

    fifo = os.path.join(d, "head")
    w = open_fed(fifo, DATA)
    out = subprocess.run(["head", "-c", "32", fifo], capture_output=True, timeout=60, check=True).stdout
    assert out == DATA[:32]
    assert left_in(w) == len(DATA) - 32
    os.close(w)


def check_egd_examples(examples):
    import xml.etree.ElementTree as ET
    root = os.path.join(examples, "..", "..")
    with open(os.path.join(root, "etc", "examples", "egd-host.conf")) as f:
        sockets = [l.split("=", 1)[1].strip() for l in f if l.startswith("socket")]
    rng = ET.parse(os.path.join(examples, "libvirt-rng-egd.xml")).getroot()
    backend = rng.find("backend")
    assert rng.tag == "rng" and rng.get("model") == "virtio", rng.attrib
    assert backend.get("model") == "egd" and backend.get("type") == "unix", backend.attrib
    source = backend.find("source")
    assert source.get("mode") == "connect" and [source.get("path")] == sockets, (source.attrib, sockets)
    print("ok: libvirt-rng-egd.xml connects to %s" % sockets[0])


def main(c_example, examples):
    with tempfile.TemporaryDirectory() as d:
        for cmd in ([c_example], [sys.executable, os.path.join(examples, "read-truerandom.py")],
                    ["sh", os.path.join(examples, "read-truerandom.sh")]):
            for n in (32, 100):
                check_example(d, cmd, n)
            print("ok: %s" % os.path.basename(cmd[-1]))
        check_pitfalls(d)
    check_egd_examples(examples)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
