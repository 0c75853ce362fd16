#!/usr/bin/env python3
"""Fails when two or more files of src/ import each other in a loop.

Every file is a node (`a/mod.rs` is module `a`, `a/b.rs` is `a::b`). A file
depends on another when its code (comments, string literals and
`#[cfg(test)]` modules left out) names a path into it:

- `crate::a::b::Item`, `$crate::a::b`, `use crate::{a::X, b::{c, Y}}`;
- `super::x`, `super::super::x`, `use super::{x, Y}`, `self::x::Y`;
- a parent naming its child module: `mod x;` and then `x::Y` (or `use x::Y`,
  `pub use x::Y`);
- a child naming an item of its parent or any ancestor (`super::Item`,
  `crate::parent::Item`): so a parent and a child that use each other's
  items are a loop, as are `mod.rs` re-exporting `x::Y` and `x.rs` using
  `super::Z`.

A path resolves to the file defining its longest module prefix, whatever the
case of the item (`super::LocalRuns` is an edge to the parent). Files behind a
cargo feature (`#[cfg(feature = "mpi")] mod world;`) are checked like the
others. Prints every loop (the files of each strongly connected component,
and one cycle through them, edge by edge) and exits 1 if there is one.

Before checking, it checks itself on a small made-up tree with known loops
(a parent<->child loop through `super::Item` and one through
`crate::parent::Item`, and a three-file loop) and a tree without any; a
checker that misses one of them fails.

    .ci/modcycles.py [SRC_DIR]      check SRC_DIR (default src)
    .ci/modcycles.py --self-test    only the self-test
"""
import os
import re
import sys
import tempfile

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"

# --types: also count a child naming a type, trait or constant of its parent.
TYPES = False


def module_files(src):
    """Module path -> file. `main.rs` is left out: it is the binary's own
    crate root and reaches the library as `iosim::`, never `crate::`."""
    mods = {}
    for root, _, names in os.walk(src):
        for n in names:
            if not n.endswith(".rs"):
                continue
            path = os.path.join(root, n)
            parts = os.path.relpath(path, src)[:-3].split(os.sep)
            if parts == ["main"]:
                continue
            if parts[-1] in ("mod", "lib"):
                parts = parts[:-1]
            mods[tuple(parts)] = path
    return mods


def owner(mods, path):
    """The file defining the longest module prefix of `path`."""
    for n in range(len(path), -1, -1):
        if tuple(path[:n]) in mods:
            return tuple(path[:n])
    return None


def blank_literals(text):
    """The code with comments removed and string/char literal contents blanked."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(" ")
        elif c == "r" and re.match(r'r#*"', text[i:i + 260]) and re.search(
            r"(?:^|[^\w]|(?:^|[^\w])b)$", text[max(i - 2, 0):i]
        ):
            hashes = len(re.match(r'r(#*)"', text[i:]).group(1))
            end = text.find('"' + "#" * hashes, i + 2 + hashes)
            i = n if end < 0 else end + 1 + hashes
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'" and re.match(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", text[i:i + 12]):
            m = re.match(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", text[i:])
            i += len(m.group(0))
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def drop_test_modules(code):
    """Removes every `#[cfg(test)] mod x { ... }` block (brace-matched)."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", code)
        if not m:
            return code
        depth, i = 1, m.end()
        while i < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        code = code[: m.start()] + code[i:]


def code_of(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    code = drop_test_modules(blank_literals(text))
    # `pub(in crate::x)` is a visibility, not a use.
    return re.sub(r"\bpub\s*\(\s*in\s+[^)]*\)", "pub", code)


def matching_brace(text, i):
    """Index just past the `}` closing the `{` before `i`."""
    depth = 1
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return i


def expand_group(body):
    """`a::X, b::{c, Y as Z}, d` -> [[a, X], [b, c], [b, Y], [d]]."""
    paths, prefixes, cur, skip = [], [[]], [], False
    for t in re.findall(IDENT + r"|\{|\}|,", body):
        if skip:
            skip = False
        elif t == "{":
            prefixes.append(prefixes[-1] + cur)
            cur = []
        elif t in ("}", ","):
            if cur:
                paths.append(prefixes[-1] + cur)
            cur = []
            if t == "}" and len(prefixes) > 1:
                prefixes.pop()
        elif t == "as":
            # `Y as Z`: Z is only the local name.
            skip = True
        else:
            cur.append(t)
    if cur:
        paths.append(prefixes[-1] + cur)
    return paths


def parse_at(rest):
    """The paths written at the start of `rest`: `a::b::C`, `{a, b::C}` or
    `a::{b, c::D}` (the text after a `crate::`, `super::` or `self::`)."""
    m = re.match(r"\s*((?:" + IDENT + r"\s*::\s*)*)(" + IDENT + r"|\{|\*)?", rest)
    segs = re.findall(IDENT, m.group(1))
    last = m.group(2)
    if last == "{":
        end = matching_brace(rest, m.end())
        return [segs + p for p in expand_group(rest[m.end(): end - 1])] or [segs]
    if last and last != "*":
        segs.append(last)
    return [segs]


def edges_of(mods, mod, text):
    """The files `mod`'s code `text` depends on, each with the path that says so."""
    out = {}

    def add(path, why):
        target = owner(mods, path)
        if target is None or target == mod:
            return
        # A child naming a type, trait or constant its ancestor declares
        # (`super::Op`): a declaration edge, counted only with --types.
        item = path[len(target)] if len(path) > len(target) else ""
        if not TYPES and mod[: len(target)] == target and item[:1].isupper():
            return
        out.setdefault(target, why)

    for m in re.finditer(r"(?<![\w:$])\$?crate\s*::", text):
        for p in parse_at(text[m.end(): m.end() + 4000]):
            add(p, "crate::" + "::".join(p))
    # `super::super::x` climbs one level per `super`.
    for m in re.finditer(r"(?<![\w:])((?:super\s*::\s*)+)", text):
        ups = m.group(1).count("super")
        base = list(mod[: max(len(mod) - ups, 0)])
        for p in parse_at(text[m.end(): m.end() + 4000]):
            add(base + p, "super::" * ups + "::".join(p))
    for m in re.finditer(r"(?<![\w:])self\s*::", text):
        for p in parse_at(text[m.end(): m.end() + 4000]):
            add(list(mod) + p, "self::" + "::".join(p))
    # A child module named by its parent (`mod x;` then `x::Y`). `use`
    # statements rooted elsewhere (`use std::{io::Write}`) are left out, so
    # a child named like a std module is not mistaken for it.
    children = [
        c for c in re.findall(r"\bmod\s+(" + IDENT + r")\s*;", text) if mod + (c,) in mods
    ]
    own = re.sub(
        r"\buse\s+(?!(?:" + "|".join(["crate", "self", "super"] + children) + r")\b)"
        + IDENT + r"\s*::[^;]*;",
        "",
        text,
    )
    for child in children:
        if re.search(r"(?<![\w:])" + child + r"\s*::", own):
            add(list(mod) + [child], child + "::...")
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
        for w in sorted(graph[v]):
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
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def one_cycle(graph, comp):
    """A shortest cycle through the first member of a component (breadth first)."""
    members = set(comp)
    start = min(comp)
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v]):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return [start]


def check(src, out=sys.stdout):
    """Prints the loops of `src`; returns how many there are."""
    mods = module_files(src)
    graph = {m: edges_of(mods, m, code_of(p)) for m, p in mods.items()}
    found = loops(graph)
    for comp in found:
        print("import loop:", " ".join(sorted(mods[m] for m in comp)), file=out)
        cyc = one_cycle(graph, comp)
        for a, b in zip(cyc, cyc[1:]):
            print(f"    {mods[a]} -> {mods[b]}  ({graph[a][b]})", file=out)
    if found:
        print(
            "break each loop: move what both files need into a third file below them "
            "(a child of the parent that the parent re-exports), and name it there",
            file=out,
        )
    return len(found)


SELF_TEST = {
    # A parent and a child calling each other's functions through super::f.
    "a/mod.rs": "mod inner;\npub fn opts() -> u32 { 1 }\npub fn go() { inner::run(); }\n",
    "a/inner.rs": "use super::{opts};\npub fn run() { let _ = opts(); }\n",
    # The same through crate::parent::f and a parent's re-export.
    "b/mod.rs": "mod leaf;\npub use leaf::Leaf;\npub const fn max_len() -> usize { 1 }\n",
    "b/leaf.rs": "pub struct Leaf(pub [u8; crate::b::max_len()]);\n",
    # Three files in a ring, through a grouped use.
    "c.rs": "use crate::{d::D, x::X};\npub struct C;\n",
    "d.rs": "pub struct D(crate::e::E);\n",
    "e.rs": "pub struct E(pub Box<crate::c::C>);\n",
    # A child naming its parent's type while the parent calls it: a loop
    # only with --types.
    "g/mod.rs": "mod imp;\npub struct Req;\npub fn make() -> Req { imp::make() }\n",
    "g/imp.rs": "pub fn make() -> super::Req { super::Req }\n",
    # Not loops: a child using a sibling, a parent using its child, a
    # visibility path, a string, a comment and a test module naming the parent.
    "f/mod.rs": "mod one;\nmod two;\npub fn f() { one::one(); two::two(); }\n",
    "f/one.rs": "pub(in crate::f) fn one() { super::two::two(); }\n// super::f()\n",
    "f/two.rs": "pub fn two() { let _ = \"super::f crate::f::f\"; }\n"
    "#[cfg(test)]\nmod tests {\n    use super::super::f;\n    #[test] fn t() { f(); }\n}\n",
    "x.rs": "pub struct X;\n",
    "lib.rs": "pub mod a;\npub mod b;\npub mod c;\npub mod d;\npub mod e;\npub mod f;\npub mod g;\npub mod x;\n",
}


def self_test():
    """Checks the checker on SELF_TEST; returns an error message or None."""
    global TYPES
    import io

    saved = TYPES
    try:
        with tempfile.TemporaryDirectory() as d:
            for rel, text in SELF_TEST.items():
                path = os.path.join(d, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
            mods = module_files(d)
            want = [
                sorted([("a",), ("a", "inner")]),
                sorted([("b",), ("b", "leaf")]),
                sorted([("c",), ("d",), ("e",)]),
            ]
            for types, expect in [(False, want), (True, want + [sorted([("g",), ("g", "imp")])])]:
                TYPES = types
                graph = {m: edges_of(mods, m, code_of(p)) for m, p in mods.items()}
                got = sorted(sorted(m) for m in loops(graph))
                if got != sorted(expect):
                    return f"self-test (--types {types}): expected loops {sorted(expect)}, found {got}"
            TYPES = False
            buf = io.StringIO()
            if check(d, buf) != 3 or "a/inner.rs -> " not in buf.getvalue():
                return "self-test: the report does not name the loops' edges:\n" + buf.getvalue()
    finally:
        TYPES = saved
    return None


def main():
    global TYPES
    args = sys.argv[1:]
    err = self_test()
    if err:
        print("modcycles.py is broken:", err)
        return 2
    if args == ["--self-test"]:
        print("modcycles.py self-test: ok")
        return 0
    if "--types" in args:
        args.remove("--types")
        TYPES = True
    src = args[0] if args else "src"
    return 1 if check(src) else 0


if __name__ == "__main__":
    sys.exit(main())
