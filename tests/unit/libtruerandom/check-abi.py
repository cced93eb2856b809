#!/usr/bin/env python3
"""check-abi.py LIBRARY SYMFILE - the shared library exports exactly the
version script's global symbols, each at its version node, and has the
soname libtruerandom.so.0: an internal function that leaks, or a public
one the script forgot, fails here before a program links against it."""
import re
import subprocess
import sys


def main(lib, symfile):
    text = re.sub(r"/\*.*?\*/", "", open(symfile).read(), flags=re.S)
    want = {}
    for node, body in re.findall(r"(\w+)\s*\{(.*?)\}", text, flags=re.S):
        glob = body.split("local:")[0].replace("global:", "")
        for name in re.findall(r"(\w+)\s*;", glob):
            want[name] = node
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    got = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "T":
            name, _, ver = parts[2].partition("@@")
            got[name] = ver
    dyn = subprocess.run(["objdump", "-p", lib], capture_output=True, text=True, check=True).stdout
    soname = re.search(r"SONAME\s+(\S+)", dyn)
    ok = True
    if got != want:
        print("exports %s, the version script says %s" % (sorted(got.items()), sorted(want.items())))
        ok = False
    if not soname or soname.group(1) != "libtruerandom.so.0":
        print("soname: %s" % (soname.group(1) if soname else None))
        ok = False
    print("abi: %s (%d symbols)" % ("ok" if ok else "FAILED", len(got)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
