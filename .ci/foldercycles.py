#!/usr/bin/env python3
"""Fails when folders of src/ import each other in a loop.

The same dependency rules as .ci/modcycles.py (it is imported from there),
with every folder `src/<folder>/` one node and every top-level file
(`src/target.rs`, `src/stats.rs`) a node of its own: `html/ -> qualify/ ->
html/` is a loop even when no two files form one. `lib.rs` (which names
every module) is left out. Prints every loop (the nodes of each strongly
connected component, and one cycle through them with, for each step, one
file-level edge that makes it) and exits 1 if there is one.

Before checking, it checks itself on a small made-up tree with one folder
loop (no file loop) and a clean tree.

    .ci/foldercycles.py [SRC_DIR]      check SRC_DIR (default src)
    .ci/foldercycles.py --self-test    only the self-test
"""
import importlib.util
import os
import sys
import tempfile

_spec = importlib.util.spec_from_file_location(
    "modcycles", os.path.join(os.path.dirname(os.path.abspath(__file__)), "modcycles.py")
)
modcycles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(modcycles)


def node_of(src, mods, mod):
    """`a` for every file under src/a/ (and src/a.rs beside it), the module
    itself for a top-level file; None for lib.rs."""
    if not mod:
        return None
    return mod[0]


def label(src, node):
    return node + "/" if os.path.isdir(os.path.join(src, node)) else node + ".rs"


def graph_of(src):
    """Folder graph: node -> {node: (file, file, why)}."""
    mods = modcycles.module_files(src)
    graph = {}
    for m, p in mods.items():
        a = node_of(src, mods, m)
        if a is None:
            continue
        graph.setdefault(a, {})
        for t, why in modcycles.edges_of(mods, m, modcycles.code_of(p)).items():
            b = node_of(src, mods, t)
            if b is None or b == a:
                continue
            graph[a].setdefault(b, (mods[m], mods[t], why))
            graph.setdefault(b, {})
    return graph


def check(src, out=sys.stdout):
    """Prints the folder loops of `src`; returns how many there are."""
    graph = graph_of(src)
    found = modcycles.loops(graph)
    for comp in found:
        print("folder import loop:", " ".join(sorted(label(src, n) for n in comp)), file=out)
        cyc = modcycles.one_cycle(graph, comp)
        for a, b in zip(cyc, cyc[1:]):
            fa, fb, why = graph[a][b]
            print(f"    {label(src, a)} -> {label(src, b)}  ({fa} -> {fb}: {why})", file=out)
    if found:
        print(
            "break each loop: move what both folders need into a module below both "
            "(a top-level file or folder that neither imports back), and name it there",
            file=out,
        )
    return len(found)


SELF_TEST = {
    "lib.rs": "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n",
    # a/x -> b/y and b/z -> a/w: no file loop, one folder loop.
    "a/mod.rs": "pub mod x;\npub mod w;\n",
    "a/x.rs": "pub fn x() { crate::b::y::y(); }\n",
    "a/w.rs": "pub fn w() {}\n",
    "b/mod.rs": "pub mod y;\npub mod z;\n",
    "b/y.rs": "pub fn y() {}\n",
    "b/z.rs": "pub fn z() { crate::a::w::w(); }\n",
    # c.rs -> d/ only: not a loop; a file under a folder naming its own folder is no edge.
    "c.rs": "pub fn c() { crate::d::d(); }\n",
    "d/mod.rs": "mod e;\npub fn d() { e::e(); }\n",
    "d/e.rs": "pub fn e() { let _ = \"crate::c::c\"; }\n",
}


def self_test():
    import io

    with tempfile.TemporaryDirectory() as d:
        for rel, text in SELF_TEST.items():
            path = os.path.join(d, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        if modcycles.check(d, io.StringIO()) != 0:
            return "self-test: the made-up tree has a file loop"
        buf = io.StringIO()
        if check(d, buf) != 1 or "a/ -> b/" not in buf.getvalue():
            return "self-test: expected one loop a/ <-> b/, found:\n" + buf.getvalue()
        os.remove(os.path.join(d, "b/z.rs"))
        with open(os.path.join(d, "b/mod.rs"), "w", encoding="utf-8") as f:
            f.write("pub mod y;\n")
        buf = io.StringIO()
        if check(d, buf) != 0:
            return "self-test: a clean tree reported loops:\n" + buf.getvalue()
    return None


def main():
    args = sys.argv[1:]
    err = self_test()
    if err:
        print("foldercycles.py is broken:", err)
        return 2
    if args == ["--self-test"]:
        print("foldercycles.py self-test: ok")
        return 0
    src = args[0] if args else "src"
    return 1 if check(src) else 0


if __name__ == "__main__":
    sys.exit(main())
