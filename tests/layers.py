#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The architecture's one-way order (standard library only).

    python3 tests/layers.py [ROOT]

heaptrace's sources sit in folders, each a layer that may include only itself and the layers
before it (README: "Layout"):

    util -> arch -> heap -> symbols -> target -> unwind -> inventory -> patch -> eventlog ->
    account -> output -> trace -> ui -> serve -> cmd

A module is a .c file and the .h of the same name beside it; a module depends on another when
its .c or .h includes the other's header. Prints one line per include that goes the wrong way,
per header included without its folder, and per dependency cycle between modules (a cycle
inside one folder breaks the order just as well); exits 1 if there is any, 0 otherwise.
"""

import os
import re
import sys

ORDER = ["util", "arch", "heap", "symbols", "target", "unwind", "inventory", "patch", "eventlog",
         "account", "output", "trace", "ui", "serve", "cmd"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Generated at build time (Makefile: protoc-c), not part of the tree.
GENERATED = {"profile.pb-c.h"}


def sources(root):
    """(path relative to root, layer) of every source file of the tool."""
    out = []
    for layer in ORDER:
        base = os.path.join(root, "arch") if layer == "arch" else os.path.join(root, "src", layer)
        for dirpath, _, files in os.walk(base):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    out.append((os.path.relpath(os.path.join(dirpath, f), root), layer))
    return out


def resolve(root, path, inc):
    """The layer and module an include names, or (None, None) for a header outside the tree."""
    here = os.path.dirname(path)
    if "/" not in inc:
        # a header beside the file (arch/<arch>/'s own), or one of the arch's through -iquote
        if os.path.exists(os.path.join(root, here, inc)):
            return layer_of(here), os.path.join(here, inc)
        if any(os.path.exists(os.path.join(root, "arch", a, inc))
               for a in os.listdir(os.path.join(root, "arch"))):
            return "arch", os.path.join("arch", "*", inc)
        return None, None
    top = inc.split("/")[0]
    if top == "arch":
        return "arch", inc
    if top in ORDER and os.path.exists(os.path.join(root, "src", inc)):
        return top, os.path.join("src", inc)
    return None, None


def layer_of(d):
    parts = d.split(os.sep)
    return parts[1] if parts[0] == "src" else "arch"


def module(path):
    return os.path.splitext(path)[0]


def find_cycles(edges):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def check(root):
    problems, edges = [], {}
    for path, layer in sources(root):
        with open(os.path.join(root, path), errors="replace") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            if os.path.basename(inc) in GENERATED:
                continue
            to_layer, to_path = resolve(root, path, inc)
            if to_layer is None:
                problems.append('%s: "%s" is not a header of the tree (write "folder/name.h")'
                                % (path, inc))
                continue
            if path.startswith("src/") and "/" not in inc and to_layer != "arch":
                problems.append('%s: "%s" without its folder (write "%s/%s")'
                                % (path, inc, to_layer, inc))
            if ORDER.index(to_layer) > ORDER.index(layer):
                problems.append("%s includes %s: %s may include only %s" % (
                    path, inc, layer, ", ".join(ORDER[:ORDER.index(layer) + 1])))
            if module(to_path) != module(path):
                edges.setdefault(module(path), set()).add(module(to_path))
    for comp in find_cycles(edges):
        problems.append("dependency cycle: " + " -> ".join(comp))
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    problems = check(root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
