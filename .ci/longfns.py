#!/usr/bin/env python3
"""Fails when a function of src/ grows past a length limit, or a file's code
(before its first `#[cfg(test)]`) past a file limit, beyond what an
allow-list that may only shrink permits (issue 39: "no function a screen too
long").

Counts lines from a `fn` line to its closing brace (string literals and `//`
comments ignored for the braces), skipping `#[cfg(test)]` modules: the
counting of ../shared/tools/longfns.py, the project's review tool.

The allow-list (.ci/longfns-allow.txt) names each function over --fn lines
that existed when the gate came in, as `PATH NAME LINES`, and each file over
--file lines as `PATH - LINES`. The gate fails when
  - a function or file not on the list is over its limit (split it);
  - a listed one grew past its recorded length (shorten it, or split it);
  - a listed one is now under the limit or gone, or shorter than recorded
    (shrink the list: `.ci/longfns.py --write` rewrites it, never adding).
No function off the list may be over --hard lines, whatever --fn says.

    .ci/longfns.py [SRC] [--fn 100] [--file 1200] [--hard 150]
    .ci/longfns.py --write     shrink the allow-list to what is left
    .ci/longfns.py --self-test
"""
import argparse
import os
import re
import sys
import tempfile

FN = re.compile(
    r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"[^\"]*\"\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)"
)
ALLOW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "longfns-allow.txt")


def strip(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    i = line.find("//")
    return line if i < 0 else line[:i]


def scan(path):
    """(lines of code before the tests, [(length, name)])."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    code = len(lines)
    for i, l in enumerate(lines):
        if l.strip().startswith("#[cfg(test)]"):
            code = i
            break
    out = []
    for i in range(code):
        m = FN.match(lines[i])
        if not m:
            continue
        depth, started = 0, False
        for j in range(i, len(lines)):
            s = strip(lines[j])
            if not started and ";" in s and "{" not in s:
                break
            depth += s.count("{") - s.count("}")
            started = started or "{" in s
            if started and depth <= 0:
                out.append((j - i + 1, m.group(7)))
                break
    return code, out


def measure(src, fn_limit, file_limit):
    """{(path, name): lines} over the limits; name '-' for a whole file."""
    found = {}
    for root, _, names in os.walk(src):
        for n in sorted(names):
            if not n.endswith(".rs"):
                continue
            p = os.path.relpath(os.path.join(root, n), os.path.dirname(src.rstrip("/")) or ".")
            code, fns = scan(os.path.join(root, n))
            if code > file_limit:
                found[(p, "-")] = code
            for ln, name in fns:
                if ln > fn_limit:
                    key = (p, name)
                    found[key] = max(found.get(key, 0), ln)
    return found


def read_allow(path):
    allow = {}
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            line = line.split("#", 1)[0].strip()
            if line:
                p, name, n = line.split()
                allow[(p, name)] = int(n)
    return allow


def judge(found, allow, hard):
    errors = []
    for (p, name), n in sorted(found.items()):
        what = f"file {p}" if name == "-" else f"fn {p} {name}"
        if name != "-" and n > hard and (p, name) not in allow:
            errors.append(f"{what}: {n} lines, over the hard limit of {hard}: split it")
        elif (p, name) not in allow:
            errors.append(f"{what}: {n} lines, over the limit and not on .ci/longfns-allow.txt: split it")
        elif n > allow[(p, name)]:
            errors.append(f"{what}: grew to {n} lines (allowed {allow[(p, name)]}): shorten it")
        elif n < allow[(p, name)]:
            errors.append(f"{what}: now {n} lines (listed {allow[(p, name)]}): shrink the list (.ci/longfns.py --write)")
    for (p, name), n in sorted(allow.items()):
        if (p, name) not in found:
            what = f"file {p}" if name == "-" else f"fn {p} {name}"
            errors.append(f"{what}: no longer over the limit: take it off the list (.ci/longfns.py --write)")
    return errors


def self_test():
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "src")
        os.mkdir(src)
        body = lambda n: "fn long() {\n" + "    let _x = \"}\";\n" * (n - 2) + "}\n"
        with open(os.path.join(src, "a.rs"), "w") as f:
            f.write(body(120) + "#[cfg(test)]\nmod tests {\n" + body(300) + "}\n")
        found = measure(src, 100, 1200)
        if found != {("src/a.rs", "long"): 120}:
            return f"self-test: expected one 120-line function, found {found}"
        if not judge(found, {}, 150):
            return "self-test: an unlisted long function passed"
        if judge(found, {("src/a.rs", "long"): 120}, 150):
            return "self-test: a listed function at its length failed"
        if not judge(found, {("src/a.rs", "long"): 110}, 150):
            return "self-test: a listed function that grew passed"
        if not judge({}, {("src/a.rs", "long"): 120}, 150):
            return "self-test: a list that did not shrink passed"
        if not judge({("src/a.rs", "long"): 160}, {}, 150):
            return "self-test: a function over the hard limit passed"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src", nargs="?", default="src")
    ap.add_argument("--fn", dest="fn_limit", type=int, default=100)
    ap.add_argument("--file", dest="file_limit", type=int, default=1200)
    ap.add_argument("--hard", type=int, default=150)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--init", action="store_true", help="list everything over the limits (once, when the gate comes in)")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    bad = self_test()
    if bad:
        print(bad)
        return 1
    if a.self_test:
        return 0
    found = measure(a.src, a.fn_limit, a.file_limit)
    allow = read_allow(ALLOW)
    if a.write or a.init:
        if a.init:
            allow = dict(found)
        kept = {k: min(n, allow[k]) for k, n in found.items() if k in allow}
        with open(ALLOW, "w", encoding="utf-8") as f:
            f.write("# Functions over 100 lines and files over 1,200 lines of code that predate\n")
            f.write("# .ci/longfns.py's gate: PATH NAME LINES (NAME '-' for a file). It may only\n")
            f.write("# shrink: split one and take it off (.ci/longfns.py --write).\n")
            for (p, name), n in sorted(kept.items()):
                f.write(f"{p} {name} {n}\n")
        print(f"{len(kept)} entries kept of {len(allow)}")
        return 0
    errors = judge(found, allow, a.hard)
    for e in errors:
        print(e)
    print(f"{len(found)} over the limits, {len(allow)} listed, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
