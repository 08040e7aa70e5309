#!/usr/bin/env python3
"""A source directory's modules (the analyzer's, the preload's) and what depends on
what, to find cycles.

  module-graph.py [--objects DIR [--exports LIB]] [--show] SRC_DIR

A module is a .c file with its .h (scan.c, scan.h), or a package: a header P_x.h that
only files named P.c, P.h or P_*.c|h include is P's private header, and all of those
files are one module (the sym_* files share sym_dwfl.h; image_core.c and image_raw.c
image_int.h). A header with no .c file is a module of its own (analysis.h, rd.h).

Edges: a file's #include "x.h" makes its module depend on x.h's; with --objects, a
symbol an object file uses that another defines does too (nm -u against nm
--defined-only, main.o included). With --exports, a name the shared library LIB exports
(nm -D) makes no edge: heapprof.so's mmap or pthread_sigmask is the C library's
interface, which the preload's own files call as any program does, and its wrapper
answers at run time. Prints each cycle (one per strongly connected
component of more than one module) and exits 1 when there is one; --show prints the
edges first.
"""
import os
import re
import subprocess
import sys


def read_includes(src):
    files = sorted(f for f in os.listdir(src) if f.endswith((".c", ".h")))
    inc = {}
    for f in files:
        text = open(os.path.join(src, f), encoding="utf-8", errors="replace").read()
        inc[f] = [h for h in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M)
                  if h in files]
    return files, inc


def modules_of(files, inc):
    """file -> module name"""
    stem = {f: f.rsplit(".", 1)[0] for f in files}
    mod = {}
    for f in files:
        s = stem[f]
        # a header without a .c and a .c share the stem's module
        mod[f] = s
    # private headers: P_x.h included only by P.c, P.h, P_*.c, P_*.h
    for h in files:
        if not h.endswith(".h") or "_" not in stem[h]:
            continue
        pkg = stem[h].split("_", 1)[0]
        users = [f for f in files if h in inc[f]]
        inside = lambda f: stem[f] == pkg or stem[f].startswith(pkg + "_")
        if users and all(inside(f) for f in users):
            for f in files:
                if inside(f):
                    mod[f] = pkg
    return mod


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                         text=True, check=True).stdout
    return {l.split()[-1] for l in out.splitlines() if l.strip()}


def symbol_edges(objdir, mod, skip=frozenset()):
    """(module, module) pairs: a module's object uses a symbol another's defines"""
    defined, used = {}, {}
    for o in sorted(os.listdir(objdir)):
        if not o.endswith(".o"):
            continue
        c = o[:-2] + ".c"
        if c not in mod:
            continue
        path = os.path.join(objdir, o)
        out = subprocess.run(["nm", "--defined-only", "-g", path], capture_output=True,
                             text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3:
                defined.setdefault(parts[2], mod[c])
        out = subprocess.run(["nm", "-u", path], capture_output=True, text=True,
                             check=True).stdout
        used[mod[c]] = used.get(mod[c], set()) | {l.split()[-1] for l in out.splitlines() if l.strip()}
    edges = set()
    for m, syms in used.items():
        for s in syms:
            d = defined.get(s)
            if d and d != m and s not in skip:
                edges.add((m, d))
    return edges


def cycles(nodes, edges):
    """strongly connected components of more than one node (Tarjan)"""
    succ = {n: sorted({b for a, b in edges if a == n}) for n in nodes}
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
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

    sys.setrecursionlimit(10000)
    for n in sorted(nodes):
        if n not in index:
            visit(n)
    return out


def main():
    args = sys.argv[1:]
    objdir = None
    lib = None
    show = False
    while args and args[0].startswith("--"):
        if args[0] == "--objects":
            objdir = args[1]
            args = args[2:]
        elif args[0] == "--exports":
            lib = args[1]
            args = args[2:]
        elif args[0] == "--show":
            show = True
            args = args[1:]
        else:
            sys.exit("unknown option " + args[0])
    if len(args) != 1:
        sys.exit(__doc__)
    files, inc = read_includes(args[0])
    mod = modules_of(files, inc)
    edges = {(mod[f], mod[h]) for f in files for h in inc[f] if mod[f] != mod[h]}
    kinds = {e: "include" for e in edges}
    if objdir:
        for e in symbol_edges(objdir, mod, exported(lib) if lib else frozenset()):
            kinds[e] = kinds.get(e, "symbol") if e in kinds else "symbol"
            edges.add(e)
    if show:
        for a, b in sorted(edges):
            print("%s -> %s (%s)" % (a, b, kinds[(a, b)]))
    bad = cycles(set(mod.values()), edges)
    for comp in bad:
        inner = sorted((a, b, kinds[(a, b)]) for a, b in edges if a in comp and b in comp)
        print("cycle: %s: %s" % (", ".join(comp),
                                 "; ".join("%s -> %s (%s)" % e for e in inner)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
