#!/usr/bin/env python3
"""test-openssl-rand.py OPENSSL MODULE - `openssl rand` with OPENSSL_CONF
naming the provider as a user would write it (docs/examples/openssl-truerandom.cnf
with the module and device paths filled in):
  - it prints its bytes, and 64 bytes left the FIFO standing in for
    /dev/truerandom (the primary DRBG's seed, two whole blocks), no more;
  - with the device missing it fails, and its stderr names the provider's
    reason; it never prints bytes seeded from elsewhere."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from fifo import left_in, open_fed  # noqa: E402

EXAMPLE = os.path.join(os.environ.get("TRUERANDOM_SOURCE_ROOT", "."), "docs", "examples", "openssl-truerandom.cnf")


def config(d, module, device):
    text = open(EXAMPLE).read()
    # The example names the installed module by its directory, and the
    # default device; the test points both at the build's.
    text = text.replace("# module = /usr/lib/x86_64-linux-gnu/ossl-modules/truerandom.so", "module = " + module)
    text = text.replace("# device = /dev/truerandom", "device = " + device)
    assert "module = " + module in text and "device = " + device in text, "the example changed"
    path = os.path.join(d, os.path.basename(device) + ".cnf")
    with open(path, "w") as f:
        f.write(text)
    return path


def rand(openssl, cnf):
    env = dict(os.environ, OPENSSL_CONF=cnf)
    return subprocess.run([openssl, "rand", "-hex", "16"], env=env, capture_output=True, text=True, timeout=60)




def main(openssl, module):
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "truerandom")
        w = open_fed(fifo, os.urandom(4096))
        r = rand(openssl, config(d, module, fifo))
        print(r.stdout + r.stderr, end="")
        assert r.returncode == 0, r.returncode
        assert len(r.stdout.strip()) == 32, r.stdout
        assert 4096 - left_in(w) == 64

        r = rand(openssl, config(d, module, os.path.join(d, "missing")))
        print(r.stdout + r.stderr, end="")
        assert r.returncode != 0
        assert r.stdout == "", r.stdout
        assert "truerandom: cannot open %s/missing: No such file or directory" % d in r.stderr, r.stderr
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
