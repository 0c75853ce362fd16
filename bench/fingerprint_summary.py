#!/usr/bin/env python3
"""The metrics issue 38 asks every round trip to show, out of saved
`iosim fingerprint --compare` outputs (bench/results/fingerprint-*-compare.txt).

For each file, layer (queue: bios as submitted; issue: requests as
dispatched) and stream: read share, size mix overlap, flushes and FUA per
write, sequential share (strict and counting tail-page rewrites), journal
commits per write, and for the file system's journal stream its share of
the layer's I/Os (the jbd2 share). A value is OUT when the compare command
marked it so (25% relative; 0.05 absolute where A is under 0.2); the size
mix overlap is judged here at 0.75 (the same 25%).

    python3 bench/fingerprint_summary.py bench/results/fingerprint-20261203-*-compare.txt

prints a Markdown table: one row per stream and layer, each metric as
"A / B", starred where out of tolerance.
"""
import re
import sys

METRICS = [
    ("read share", "read share"),
    ("flushes per write", "flushes/write"),
    ("FUA per write", "FUA/write"),
    ("sequential share (strict)", "sequential"),
    ("sequential share (+ tail-page rewrites)", "seq. + tail"),
    ("journal commits per write", "journal commits/write"),
]
JOURNAL = ("share of the layer's I/Os", "jbd2 share")
HEAD = re.compile(r"^layer: (\w+) .*stream: (\S+) \(size mix overlap ([0-9.]+)\)")


def rows(path):
    """(layer, stream, overlap, {metric: (a, b, out)}) per section."""
    out = []
    cur = None
    for line in open(path, encoding="utf-8"):
        m = HEAD.match(line)
        if m:
            cur = (m.group(1), m.group(2), float(m.group(3)), {})
            out.append(cur)
            continue
        if cur is None or not line.startswith("  "):
            continue
        for name, _ in METRICS + [JOURNAL]:
            if line[2:].startswith(name + " ") and not line[2:].startswith(name + " ("):
                cells = line[2 + len(name):].split()
                if len(cells) >= 2:
                    cur[3][name] = (cells[0], cells[1], "OUT" in cells)
    return out


def main(paths):
    print("| capture | layer | stream | size mix overlap | " + " | ".join(s for _, s in METRICS) + " | jbd2 share |")
    print("|---" * (5 + len(METRICS)) + "|")
    for path in paths:
        name = re.sub(r"^.*fingerprint-\d+-|-compare\.txt$", "", path)
        for layer, stream, overlap, m in rows(path):
            journal = stream == "journal"
            cells = []
            for key, _ in METRICS:
                if journal or key not in m:
                    cells.append("")
                    continue
                a, b, bad = m[key]
                cells.append(f"{a} / {b}" + (" *" if bad else ""))
            jb = ""
            if journal and JOURNAL[0] in m:
                a, b, bad = m[JOURNAL[0]]
                jb = f"{a} / {b}" + (" *" if bad else "")
            ov = "" if journal else f"{overlap:.3f}" + (" *" if overlap < 0.75 else "")
            print(f"| {name} | {layer} | {stream} | {ov} | " + " | ".join(cells) + f" | {jb} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
