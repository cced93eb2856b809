#!/usr/bin/env python3
"""check-refs.py - what a document points an auditor at must exist.

docs/COMPLIANCE.md names, for each requirement, the code, the test and the
constant that meet it. When a file moves, a test is renamed or a constant
goes, the document must follow, or an auditor is sent to nothing. Every
`backticked` token of these kinds is checked against the source tree:

  folder/file.{c,h,py,sh,md}   the file exists (folder: a top-level folder)
  test-name.{c,py}             a test file of that name under tests/
  test_name                    a test function (C or Python) under tests/
  NAME_IN_CAPS, NAME_*         a #define (or its prefix) in a header, when
                               NAME_ starts as the tree's own #defines do
                               (HEALTH_, LEDGER_: not O_APPEND or JENT_)
  function()                   declared or defined in a .c or .h file

Other tokens (commands, sample file names, JSON keys) are left alone.

    check-refs.py SOURCEDIR DOC...   exit 0, or 1 naming each dead reference
    check-refs.py --self-test        the checker's own test
"""
import os
import re
import subprocess
import sys
import tempfile

TOKEN = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"^([a-z][\w-]*)/[\w./-]+\.(c|h|py|sh|md)$")
TEST_FILE = re.compile(r"^test-[\w-]+\.(c|py)$")
TEST_FUNC = re.compile(r"^test_[a-z0-9_]+$")
MACRO = re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]+\*?$")
FUNC = re.compile(r"^([a-z_][a-z0-9_]*)\(\)$")


def tracked(root):
    """The files of the tree: git's list where there is one, else a walk."""
    try:
        # A copy of the tree inside another work tree (the .deb's build
        # unpacks under build/, which git ignores) is not git's to list.
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout.strip()
        if os.path.realpath(top) != os.path.realpath(root):
            raise OSError("not the top of a work tree")
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout
        return [f for f in out.splitlines() if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, _, names in os.walk(root):
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
        return files


def read(root, rel):
    try:
        with open(os.path.join(root, rel), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def check(root, docs):
    files = tracked(root)
    top = {f.split("/")[0] for f in files if "/" in f}
    tests = [f for f in files if f.startswith("tests/")]
    test_text = "\n".join(read(root, f) for f in tests if f.endswith((".c", ".py")))
    headers = "\n".join(read(root, f) for f in files if f.endswith(".h"))
    sources = headers + "\n".join(read(root, f) for f in files if f.endswith(".c"))
    ours = {n.split("_")[0] for n in re.findall(r"#define\s+([A-Z][A-Z0-9]*_\w*)", headers)}
    dead = []
    for doc in docs:
        with open(doc) as f:
            text = f.read()
        for lineno, line in enumerate(text.splitlines(), 1):
            for tok in TOKEN.findall(line):
                tok = tok.strip()
                m = PATH.match(tok)
                if m and m.group(1) in top and not os.path.exists(os.path.join(root, tok)):
                    dead.append((doc, lineno, tok, "no such file"))
                elif TEST_FILE.match(tok) and not any(os.path.basename(t) == tok for t in tests):
                    dead.append((doc, lineno, tok, "no such test file under tests/"))
                elif TEST_FUNC.match(tok) and not re.search(r"\b(def|void)\s+" + tok + r"\s*\(", test_text):
                    dead.append((doc, lineno, tok, "no such test under tests/"))
                elif MACRO.match(tok) and tok.split("_")[0] in ours:
                    name = tok.rstrip("*")
                    pat = r"#define\s+" + name + (r"\w*" if tok.endswith("*") else r"\b")
                    if not re.search(pat, headers):
                        dead.append((doc, lineno, tok, "no such #define in a header"))
                elif FUNC.match(tok) and not re.search(r"\b" + FUNC.match(tok).group(1) + r"\s*\(", sources):
                    dead.append((doc, lineno, tok, "no such function"))
    return dead


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "pool"))
        os.makedirs(os.path.join(root, "tests", "unit"))
        with open(os.path.join(root, "pool", "health.h"), "w") as f:
            f.write("#define HEALTH_ALPHA_LOG2_PERMANENT (-60)\nint health_settled(void);\n")
        with open(os.path.join(root, "tests", "unit", "test-health.c"), "w") as f:
            f.write("static void test_stuck(void **state) {}\n")
        good = os.path.join(root, "good.md")
        with open(good, "w") as f:
            f.write("`pool/health.h` `test-health.c` `test_stuck` `HEALTH_ALPHA_LOG2_*` `health_settled()`\n"
                    "`SRC/SRC-raw.bin` `ea_non_iid -v FILE 8` `h_original`\n")
        bad = os.path.join(root, "bad.md")
        with open(bad, "w") as f:
            f.write("`pool/gone.c`\n`test-gone.c`\n`test_gone`\n`HEALTH_GONE`\n`gone_function()`\n"
                    "`O_APPEND` `JENT_NTG1`\n")
        if check(root, [good]):
            print("self-test: a document whose references all exist was refused", check(root, [good]))
            return 1
        found = check(root, [bad])
        if [d[1] for d in found] != [1, 2, 3, 4, 5]:
            print("self-test: expected one dead reference on each of lines 1-5, got", found)
            return 1
        print("self-test: passed")
        return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) < 3:
        print(__doc__)
        return 2
    dead = check(argv[1], argv[2:])
    for doc, lineno, tok, why in dead:
        print(f"{doc}:{lineno}: `{tok}`: {why}")
    if not dead:
        print(f"all references found: {' '.join(argv[2:])}")
    return 1 if dead else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
