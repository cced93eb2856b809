#!/usr/bin/env python3
"""check-layers.py - keeps the house as docs/ARCHITECTURE.md draws it.

Judged on the compiled objects' own symbols, not on includes: a file that
uses a function (or variable) another file defines depends on that file.
From the build's compile_commands.json (object -> source) and nm it
checks, over every production object (tests/ and bench/ are not judged):

  1. each folder uses only the folders its row in LAYERS allows (its own
     always): an upward or sideways use is named, file and symbol;
  2. no circle of files: a set of files that use each other is named, with
     the symbols that close it;
  3. only the folders in SYSTEM_LIBS[lib] use that library's symbols
     (libsystemd: the daemon alone logs and talks to systemd);
  4. every production folder has a row (a new folder is a decision to
     write down, not to slip in).

    check-layers.py BUILDDIR SOURCEDIR      exit 0, or 1 naming each finding
    check-layers.py --self-test             the checker's own test: a tree
                                            with an upward use, a circle and
                                            a stray libsystemd call must fail
"""
import json
import os
import subprocess
import sys

# folder: the folders it may use (below it). Keep in step with
# docs/ARCHITECTURE.md.
LAYERS = {
    "util": [],
    "estimate": ["util"],
    "ledger": ["util"],
    "evidence": ["util"],
    "pool": ["estimate", "util"],
    "crng": ["pool", "util"],
    "cuse": ["crng", "pool", "util"],
    "config": ["pool", "util"],
    "proto": ["util"],
    "assess": ["config", "estimate", "pool", "util"],
    "daemon/watch": ["util"],
    "daemon/control": ["cuse", "pool", "proto", "util"],
    "daemon/egd": ["crng", "cuse", "pool", "proto", "util"],
    "daemon": ["assess", "config", "crng", "cuse", "daemon/control", "daemon/egd", "daemon/watch", "estimate", "ledger",
               "pool", "proto", "util"],
    "ctl": ["assess", "config", "estimate", "evidence", "ledger", "pool", "proto", "util"],
    # Other programs, each in its folder. The client library is public:
    # it uses nothing of the daemon's tree.
    "libtruerandom": [],
    "seed": ["libtruerandom", "proto", "util"],
    "ossl": ["libtruerandom"],
    # The reading examples: what a user's program may use, the library.
    "docs/examples": ["libtruerandom"],
}

# library: (symbol prefixes, the folders that may use them)
SYSTEM_LIBS = {
    "libsystemd": (("sd_",), ("daemon", "daemon/watch", "daemon/control", "daemon/egd")),
    "libfuse3": (("fuse_", "cuse_"), ("cuse", "daemon")),
    # The TPM2 Software Stack: the tpm source's alone (pool/source-tpm.c).
    "libtss2": (("Tss2_",), ("pool",)),
}

NOT_JUDGED = ("tests/", "bench/")


def folder_of(path):
    return os.path.dirname(path)


def read_objects(builddir, sourcedir):
    """{object path: source path relative to sourcedir} for production code."""
    with open(os.path.join(builddir, "compile_commands.json")) as f:
        commands = json.load(f)
    sourcedir = os.path.realpath(sourcedir)
    objects = {}
    for c in commands:
        src = os.path.realpath(os.path.join(c["directory"], c["file"]))
        rel = os.path.relpath(src, sourcedir)
        if rel.startswith("..") or rel.startswith(NOT_JUDGED) or not rel.endswith(".c"):
            continue
        obj = os.path.join(c["directory"], c["output"])
        objects[obj] = rel
    return objects


def read_symbols(objects):
    """(defines: {symbol: source}, uses: {source: set of symbols})."""
    defines, uses = {}, {}
    for obj, src in sorted(objects.items()):
        out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
        u = uses.setdefault(src, set())
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            name, kind = parts[0], parts[1]
            if kind == "U":
                u.add(name)
            elif kind in "TDBRVWGS" and not name.startswith("."):
                # One definition per symbol: a second one would not link.
                defines.setdefault(name, src)
    return defines, uses


def file_graph(defines, uses):
    """{file: {file it uses: sorted symbols}}."""
    graph = {}
    for src, syms in uses.items():
        edges = graph.setdefault(src, {})
        for s in syms:
            d = defines.get(s)
            if d and d != src:
                edges.setdefault(d, []).append(s)
    for edges in graph.values():
        for d in edges:
            edges[d].sort()
    return graph


def circles(graph):
    """Strongly connected sets of more than one file (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, {}))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, {})))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def findings(graph, uses, layers=LAYERS, system_libs=SYSTEM_LIBS):
    found = []
    for src in sorted(graph):
        f = folder_of(src)
        if f not in layers:
            found.append("%s: folder '%s' has no row in the layer table (tests/arch/check-layers.py, "
                         "docs/ARCHITECTURE.md)" % (src, f))
            continue
        for dst, syms in sorted(graph[src].items()):
            g = folder_of(dst)
            if g != f and g not in layers[f]:
                found.append("%s uses %s (%s): %s may not use %s" % (src, dst, ", ".join(syms[:3]), f or ".", g or "."))
    for comp in circles(graph):
        inside = set(comp)
        links = ["%s -> %s (%s)" % (a, b, graph[a][b][0]) for a in comp for b in sorted(graph[a]) if b in inside]
        found.append("circle of %d files: %s" % (len(comp), "; ".join(links)))
    for lib, (prefixes, allowed) in sorted(system_libs.items()):
        for src in sorted(uses):
            f = folder_of(src)
            if f in allowed:
                continue
            bad = sorted(s for s in uses[src] if s.startswith(prefixes))
            if bad:
                found.append("%s uses %s (%s): only %s may" % (src, lib, ", ".join(bad[:3]), ", ".join(allowed)))
    return found


def self_test():
    defines = {"low_fn": "pool/low.c", "high_fn": "daemon/high.c", "a_fn": "cuse/a.c", "b_fn": "cuse/b.c",
               "ok_fn": "util/ok.c"}
    uses = {"pool/low.c": {"high_fn", "ok_fn"}, "daemon/high.c": {"low_fn"}, "cuse/a.c": {"b_fn"},
            "cuse/b.c": {"a_fn", "sd_event_new"}, "util/ok.c": set(), "newdir/x.c": {"ok_fn"}}
    graph = file_graph(defines, uses)
    got = findings(graph, uses)
    want = ["pool/low.c uses daemon/high.c (high_fn): pool may not use daemon",
            "circle of 2 files: cuse/a.c -> cuse/b.c (b_fn); cuse/b.c -> cuse/a.c (a_fn)",
            "circle of 2 files: daemon/high.c -> pool/low.c (low_fn); pool/low.c -> daemon/high.c (high_fn)",
            "cuse/b.c uses libsystemd (sd_event_new): only daemon, daemon/watch, daemon/control, daemon/egd may",
            "newdir/x.c: folder 'newdir' has no row"]
    ok = True
    for w in want:
        if not any(g.startswith(w) for g in got):
            print("self-test: not found: %s" % w)
            ok = False
    if len(got) != len(want):
        print("self-test: %d findings, expected %d: %s" % (len(got), len(want), got))
        ok = False
    clean = findings(file_graph({"ok_fn": "util/ok.c"}, {"pool/low.c": {"ok_fn"}, "util/ok.c": set()}),
                     {"pool/low.c": {"ok_fn"}, "util/ok.c": set()})
    if clean:
        print("self-test: a clean tree had findings: %s" % clean)
        ok = False
    print("self-test: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 64
    objects = read_objects(argv[1], argv[2])
    if not objects:
        print("check-layers: no production objects in %s (not built?)" % argv[1])
        return 1
    defines, uses = read_symbols(objects)
    graph = file_graph(defines, uses)
    found = findings(graph, uses)
    folders = sorted({folder_of(s) for s in uses})
    if found:
        for f in found:
            print("LAYER: %s" % f)
        print("check-layers: %d findings over %d files in %d folders" % (len(found), len(uses), len(folders)))
        return 1
    print("check-layers: %d files in %d folders (%s): no upward use, no circle" %
          (len(uses), len(folders), " ".join(folders)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
