#!/usr/bin/env python3
"""Fails when two or more files of src/ import each other in a loop.

Reads each file's `crate::a::b`, `super::x` and `use crate::{a, b::c}` paths
(test modules and comments skipped), maps each to the file that defines the
module, and finds strongly connected components. Prints every loop and exits
1 if there is one; a parent using its own child module (`mod x; x::Y`) counts.

    .ci/modcycles.py [SRC_DIR]
"""
import os
import re
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "src"


def module_files(src):
    mods = {}
    for root, _, names in os.walk(src):
        for n in names:
            if not n.endswith(".rs"):
                continue
            path = os.path.join(root, n)
            parts = os.path.relpath(path, src)[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            mods[tuple(parts)] = path
    return mods


def owner(mods, path):
    """The file defining the longest prefix of a module path."""
    for n in range(len(path), 0, -1):
        if tuple(path[:n]) in mods:
            return tuple(path[:n])
    return None


def code_of(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    cut = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    if cut:
        text = text[: cut.start()]
    return re.sub(r"//[^\n]*", "", text)


def edges_of(mods, mod, text):
    out = set()

    def add(target):
        # A module's own ancestors are not imports (`crate::x` inside x/y.rs).
        if target and target != mod and mod[: len(target)] != target:
            out.add(target)

    for group in re.finditer(r"\bcrate::\{([^;]*)\}", text, re.S):
        for head in re.findall(r"(?:^|[{,])\s*([a-z_][a-z0-9_]*)", group.group(1)):
            add(owner(mods, [head]))
    for m in re.finditer(r"\bcrate::((?:[a-z_][a-z0-9_]*::)*[a-z_][a-z0-9_]*)", text):
        add(owner(mods, m.group(1).split("::")))
    for m in re.finditer(r"\bsuper::([a-z_][a-z0-9_]*)", text):
        add(owner(mods, list(mod[:-1]) + [m.group(1)]))
    for child in re.findall(r"\bmod\s+([a-z_][a-z0-9_]*)\s*;", text):
        if re.search(r"(?<![:\w])" + child + r"::", text) and mod + (child,) in mods:
            out.add(mod + (child,))
    return out


def loops(graph):
    """Tarjan's strongly connected components with more than one member."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
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
                found.append(comp)

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return found


def main():
    mods = module_files(SRC)
    graph = {m: edges_of(mods, m, code_of(p)) for m, p in mods.items()}
    found = loops(graph)
    for comp in found:
        print("import loop:", " ".join(sorted(mods[m] for m in comp)))
    if found:
        print("break each loop: move the shared piece into a lower module both can use")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
