#!/usr/bin/python3
# test-daemon-cli.py - truerandomd's command line where it must refuse:
# start-up with no credited source that can run fails fast (foreground and
# background) with one line naming every source; a missing group or user,
# or root as [daemon] user, says so once; a non-root start that cannot set
# itself up says how to start it; --check-config refuses what the daemon
# would refuse, with FILE:LINE, says "not found" for a missing file and
# names an inline comment; drop-ins are named and refused at their own
# FILE:LINE. Needs root (skips otherwise). The files name
# `nobody` as [daemon] user: the package's user is not there on a build
# machine.
#   test-daemon-cli.py PATH-TO-TRUERANDOMD
import os
import shutil
import subprocess
import sys
import tempfile
import time

D = sys.argv[1]
failures = 0
if os.geteuid() != 0:
    print("SKIP: needs root (the daemon refuses to start otherwise, which is one of the checks)")
    sys.exit(77)


def check(cond, what):
    global failures
    print(("ok     " if cond else "FAILED ") + what)
    if not cond:
        failures += 1


def run(args, as_nobody=False):
    cmd = [D] + args
    if as_nobody:
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t


def lines(text):
    return [l for l in text.splitlines() if l]


with tempfile.TemporaryDirectory() as tmp:
    def conf(name, text, user="nobody"):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write("[control]\nsocket = %s/control-%s\n[assessment]\nstate_directory = %s/state\n" % (tmp, name, tmp)
                    + text)
            if user:
                f.write("[daemon]\nuser = %s\n" % user)
        return path

    gid = os.getgid()
    nothing = conf("nothing.conf", "[device]\ngroup = %d\n[source.jitter]\nenable = no\n"
                   "[source.rdseed]\nenable = no\n[source.hwrng]\nenable = yes\npath = %s/no-hwrng\n" % (gid, tmp))
    for mode, args in (("foreground", ["--foreground"]), ("background", [])):
        code, out, err, secs = run(args + ["--config", nothing])
        check(code == 1, "no credited source, %s: exit 1 (got %d)" % (mode, code))
        check(secs < 10, "no credited source, %s: fails fast (%.1f s)" % (mode, secs))
        l = lines(err)
        check(len(l) == 1 and all(s in l[0] for s in ("jitter disabled", "rdseed disabled", "hwrng unavailable",
                                                      "kernel never credited", "file disabled")),
              "no credited source, %s: one line naming every source and why: %r" % (mode, l))

    code, out, err, _ = run(["--check-config", "--config", nothing])
    check(code == 1 and "no credited source" in err and "(%s:8)" % nothing in err,
          "--check-config refuses no credited source, with lines: %r" % err.strip())

    nogroup = conf("nogroup.conf", "[device]\ngroup = no-such-group-here\n")
    code, out, err, _ = run(["--foreground", "--config", nogroup])
    l = lines(err)
    check(code == 1 and len(l) == 1 and "no-such-group-here" in l[0] and "start-up failed" not in err,
          "missing group: one clear line, exit 1: %r" % l)
    code, out, err, _ = run(["--check-config", "--config", nogroup])
    check(code == 1 and "nogroup.conf:6: group 'no-such-group-here' does not exist" in err,
          "--check-config refuses the missing group at FILE:LINE: %r" % err.strip())

    if shutil.which("setpriv"):
        ok = conf("ok.conf", "[device]\ngroup = %d\n" % gid)
        os.chmod(tmp, 0o755)
        os.chmod(ok, 0o644)
        code, out, err, _ = run(["--foreground", "--config", ok], as_nobody=True)
        l = lines(err)
        check(code == 1 and len(l) == 1 and "Permission denied" in l[0] and "control-ok.conf" in l[0]
              and "start it as root" in l[0] and "truerandomd.service" in l[0],
              "non-root and no way to set up: one line, what and how to start it: %r" % l)

    nouser = conf("nouser.conf", "[device]\ngroup = %d\n" % gid, user="no-such-user-here")
    code, out, err, _ = run(["--foreground", "--config", nouser])
    l = lines(err)
    check(code == 1 and len(l) == 1 and "nouser.conf:8: user 'no-such-user-here' does not exist" in l[0],
          "missing user: one clear line at FILE:LINE, exit 1: %r" % l)
    code, out, err, _ = run(["--check-config", "--config", nouser])
    check(code == 1 and "nouser.conf:8: user 'no-such-user-here' does not exist" in err,
          "--check-config refuses the missing user at FILE:LINE: %r" % err.strip())
    rootuser = conf("rootuser.conf", "[device]\ngroup = %d\n" % gid, user="root")
    code, out, err, _ = run(["--check-config", "--config", rootuser])
    check(code == 1 and "rootuser.conf:8: user 'root' is root" in err,
          "--check-config refuses root as [daemon] user: %r" % err.strip())
    code, out, err, _ = run(["--foreground", "--config", rootuser])
    check(code == 1 and "user 'root' is root" in err, "start-up refuses root as [daemon] user: %r" % err.strip())

    code, out, err, _ = run(["--check-config", "--config", os.path.join(tmp, "absent.conf")])
    check(code == 1 and err.strip().endswith("absent.conf: not found"), "a missing file is 'not found': %r" % err)

    inline = conf("inline.conf", "[device]\ngroup = %d\n[source.jitter]\nenable = yes # the default\n" % gid)
    code, out, err, _ = run(["--check-config", "--config", inline])
    check(code == 1 and "inline.conf:8:" in err and "comment" in err, "an inline comment is named: %r" % err.strip())

    # What the start would refuse, --check-config refuses too: a socket
    # whose directory is two levels from existing.
    deep = os.path.join(tmp, "deep.conf")
    with open(deep, "w") as f:
        f.write("[control]\nsocket = %s/no/such/control\n[assessment]\nstate_directory = %s/state\n"
                "[device]\ngroup = %d\n[daemon]\nuser = nobody\n" % (tmp, tmp, gid))
    code, out, err, _ = run(["--check-config", "--config", deep])
    check(code == 1 and "its directory cannot be made" in err and "/no/such/control" in err,
          "--check-config refuses a socket directory it cannot make: %r" % err.strip())
    deep_egd = conf("deep-egd.conf", "[device]\ngroup = %d\ncuse = no\n[egd]\nsocket = %s/no/such/egd\n" % (gid, tmp))
    code, out, err, _ = run(["--check-config", "--config", deep_egd])
    check(code == 1 and "[egd] socket = %s/no/such/egd: its directory cannot be made" % tmp in err,
          "--check-config refuses an EGD socket directory it cannot make: %r" % err.strip())
    # Fewer credited sources than min_healthy (jitter alone): the start goes
    # on, since a reload may lower it, but says at once that it will not
    # serve (read until that line, then stopped: with CUSE it would run).
    few = conf("few.conf", "[device]\ngroup = %d\n[pool]\nmin_healthy = 3\n[source.rdseed]\nenable = no\n"
               "[source.hwrng]\nenable = no\n" % gid)
    p = subprocess.Popen([D, "--foreground", "--config", few], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    said = ""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "min_healthy = 3" not in said:
        line = p.stderr.readline()
        if not line:
            break
        said += line
    p.terminate()
    p.communicate(timeout=30)
    check("min_healthy = 3, but 1 credited source can run: /dev/truerandom will not serve" in said,
          "a start with min_healthy above the credited sources says at once it will not serve: %r" % said.strip())

    good = conf("good.conf", "[device]\ngroup = %d\n" % gid)
    code, out, err, _ = run(["--check-config", "--config", good])
    check(code == 0 and out.strip() == good + ": OK", "a good file is OK: %r %r" % (out, err))

    # Drop-ins: each named when good; refused at their own FILE:LINE, what
    # the daemon refuses later (the group) too.
    os.mkdir(good + ".d")
    site = os.path.join(good + ".d", "10-site.conf")
    with open(site, "w") as f:
        f.write("[pool]\nstore_blocks = 512\n")
    code, out, err, _ = run(["--check-config", "--config", good])
    check(code == 0 and lines(out) == [good + ": OK", site + ": OK"], "each drop-in read is named: %r %r" % (out, err))
    with open(site, "a") as f:
        f.write("[device]\ngroup = no-such-group-here\n")
    code, out, err, _ = run(["--check-config", "--config", good])
    check(code == 1 and "%s:4: group 'no-such-group-here' does not exist" % site in err,
          "a group a drop-in names is refused at its FILE:LINE: %r" % err.strip())
    with open(site, "w") as f:
        f.write("[pool]\nstore_blocks = 512\nstore_blocks = 513\n")
    code, out, err, _ = run(["--check-config", "--config", good])
    check(code == 1 and "%s:3: duplicate key 'store_blocks'" % site in err,
          "a bad drop-in is refused at its FILE:LINE: %r" % err.strip())

sys.exit(1 if failures else 0)
