#!/usr/bin/env python3
"""check-sizes.py - production code stays in pieces a reader can hold.

  no production .c file over MAX_FILE_LINES lines;
  no production function over MAX_FUNCTION_LINES lines, outside the
  estimators (estimate/: each is one SP 800-90B procedure, kept whole so it
  reads against the standard's text).

Production code is every .c file git tracks outside tests/ and bench/. A
function is what the project's style writes: its definition starts in
column 0 and its body ends at the first "}" in column 0 after it.

    check-sizes.py SOURCEDIR       exit 0, or 1 naming each file and function
    check-sizes.py --self-test     the checker's own test
"""
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80
FUNCTION_EXEMPT = ("estimate/",)
NOT_JUDGED = ("tests/", "bench/")

# "type name(args) {" or the "(" line of a definition whose arguments wrap.
DEF_START = re.compile(r"^(?!static_assert|typedef|struct\s+\w+\s*\{|enum|union|#|/\*| )[A-Za-z_][\w\s\*,]*?\b(\w+)\s*\(")


def functions(text):
    """[(name, first line, lines)] of the function definitions in text."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = DEF_START.match(lines[i])
        if not m or lines[i].rstrip().endswith(";"):
            i += 1
            continue
        # The definition's "{" ends its head, on this line or a later one;
        # a ";" first means a declaration.
        j = i
        while j < len(lines) and not lines[j].rstrip().endswith("{") and not lines[j].rstrip().endswith(";"):
            j += 1
        if j >= len(lines) or lines[j].rstrip().endswith(";"):
            i = j + 1
            continue
        k = j + 1
        while k < len(lines) and lines[k] != "}" and not lines[k].startswith("}"):
            k += 1
        out.append((m.group(1), i + 1, k - i + 1))
        i = k + 1
    return out


def findings(files):
    """files: {path: text}."""
    found = []
    for path, text in sorted(files.items()):
        n = text.count("\n")
        if n > MAX_FILE_LINES:
            found.append("%s: %d lines (at most %d)" % (path, n, MAX_FILE_LINES))
        if path.startswith(FUNCTION_EXEMPT):
            continue
        for name, line, length in functions(text):
            if length > MAX_FUNCTION_LINES:
                found.append("%s:%d: %s() is %d lines (at most %d)" % (path, line, name, length, MAX_FUNCTION_LINES))
    return found


def self_test():
    short = "int f(void) {\n        return 0;\n}\n"
    long_body = "static int long_one(int a,\n                    int b) {\n" + "        a++;\n" * 90 + "        return a;\n}\n"
    decl = "int g(int a,\n      int b);\n"
    files = {"pool/a.c": short + decl + long_body, "pool/big.c": "/* x */\n" * 501,
             "estimate/e.c": long_body}
    got = findings(files)
    want = ["pool/a.c:6: long_one() is 94 lines", "pool/big.c: 501 lines"]
    ok = len(got) == len(want) and all(any(g.startswith(w) for g in got) for w in want)
    print("self-test: %s%s" % ("ok" if ok else "FAILED: ", "" if ok else got))
    return 0 if ok else 1


def c_files(src):
    """The tree's .c files: git's list when src is the top of a checkout,
    else every one under it (a source package, a copy without git, a copy
    inside another checkout's ignored build directory)."""
    try:
        top = subprocess.run(["git", "-C", src, "rev-parse", "--show-toplevel"], capture_output=True, text=True)
        if top.returncode == 0 and os.path.realpath(top.stdout.strip()) == os.path.realpath(src):
            listed = subprocess.run(["git", "-C", src, "ls-files", "*.c"], capture_output=True, text=True)
            if listed.returncode == 0:
                return listed.stdout.split()
    except OSError:
        pass
    return [os.path.relpath(os.path.join(d, f), src) for d, _, fs in os.walk(src) for f in fs if f.endswith(".c")]


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 64
    src = argv[1]
    files = {}
    paths = c_files(src)
    for p in paths:
        if p.startswith(NOT_JUDGED) or "/" not in p or p.startswith(("build", "obj-", "debian/")):
            continue
        with open(os.path.join(src, p), errors="replace") as f:
            files[p] = f.read()
    found = findings(files)
    for f in found:
        print("SIZE: %s" % f)
    print("check-sizes: %d files, %d findings" % (len(files), len(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
