#!/usr/bin/env python3
"""read-truerandom.py [BYTES [DEVICE]] - N bytes (default 32) of
/dev/truerandom, in hex.

Unbuffered: open(..., buffering=0) or os.open, and a loop of reads, each
asking for what is still missing. A buffered open() (the default) asks
the device for 4 to 8 KiB to hand out 32 bytes, and every block it read
but did not hand out is gone for everybody: one 32-byte request burns
128 to 256 blocks. Short reads are normal (the device returns what it
has), so loop; os.read retries EINTR itself (PEP 475)."""
import os
import sys


def read_truerandom(n, device="/dev/truerandom"):
    fd = os.open(device, os.O_RDONLY | os.O_CLOEXEC)
    try:
        out = bytearray()
        while len(out) < n:
            chunk = os.read(fd, n - len(out))
            if not chunk:
                raise EOFError("%s ended: not a truerandom device?" % device)
            out += chunk
        return bytes(out)
    finally:
        os.close(fd)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    try:
        print(read_truerandom(n, *sys.argv[2:3]).hex())
    except OSError as e:
        # EACCES: not in group truerandom; ENOENT: no daemon serving.
        sys.exit("read-truerandom.py: %s" % e)
