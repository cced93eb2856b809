"""fifo.py - a FIFO standing in for /dev/truerandom in the Python tests:
the test holds it open read-write (so a reader's open never waits and
what it wrote stays queued), and counts what the reader left."""
import os


def open_fed(path, data):
    """Makes the FIFO at path, holds it open read-write, queues data."""
    os.mkfifo(path)
    fd = os.open(path, os.O_RDWR)
    os.write(fd, data)
    return fd


def left_in(fd):
    """Bytes still queued, drained without waiting."""
    os.set_blocking(fd, False)
    n = 0
    try:
        while True:
            b = os.read(fd, 65536)
            if not b:
                break
            n += len(b)
    except BlockingIOError:
        pass
    os.set_blocking(fd, True)
    return n
