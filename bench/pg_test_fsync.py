#!/usr/bin/env python3
"""iosim fsync against pg_test_fsync, side by side on one file system.

Runs PostgreSQL's pg_test_fsync (Debian's postgresql package) and
`iosim fsync` in ABBA order (pg, iosim, iosim, pg, ... for --pairs pairs),
on the same directory, with the same seconds per test, and compares the
median ops/sec of every row both print: each sync method with one and two
8 kB writes, open_sync with 16 kB in 1-16 writes, the two descriptor tests
and the non-synced write. A sync-method row passes when iosim is within
--tolerance (15%) of pg_test_fsync.

    bench/pg_test_fsync.py --dir /var/tmp            # the file system of /var/tmp
    bench/pg_test_fsync.py --loop                    # a fresh ext4 on a loop device (root)
    bench/pg_test_fsync.py --loop --backing /dev/shm # ... over a file in memory: flushes cost
                                                     # nothing, so this compares the tools' own overhead

Exit status 0 when every sync-method row passes, 1 when one does not,
2 when a tool is missing.
"""

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def find_pg_test_fsync():
    found = shutil.which("pg_test_fsync")
    if found:
        return found
    cands = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_test_fsync"))
    return cands[-1] if cands else None


def norm(name):
    return re.sub(r"\s+", " ", name.strip())


def parse_pg(text):
    """{(section, row): ops/sec} from pg_test_fsync's output."""
    out, section = {}, None
    for line in text.splitlines():
        if line.startswith("Compare file sync methods using one"):
            section = "one"
        elif line.startswith("Compare file sync methods using two"):
            section = "two"
        elif line.startswith("Compare open_sync with different write sizes"):
            section = "sizes"
        elif line.startswith("Test if fsync on non-write"):
            section = "descriptors"
        elif line.startswith("Non-sync"):
            section = "nonsync"
        m = re.match(r"^\s+(.+?)\s+([\d.]+) ops/sec", line)
        if m and section:
            out[(section, norm(m.group(1)))] = float(m.group(2))
    return out


def parse_iosim(doc):
    out = {}
    for t in doc["tests"]:
        if t.get("unavailable"):
            continue
        sec = {
            "methods": "one" if t["writes_per_op"] == 1 else "two",
            "open_sync_sizes": "sizes",
            "descriptors": "descriptors",
            "non_sync": "nonsync",
        }[t["section"]]
        out[(sec, norm(t["name"]))] = t["ops_per_sec"]
    return out


def run_pg(pg, d, secs):
    p = subprocess.run(
        [pg, "-s", str(secs), "-f", os.path.join(d, "pg_test_fsync.out")],
        capture_output=True, text=True, check=True,
    )
    return parse_pg(p.stdout)


def run_iosim(iosim, d, secs):
    p = subprocess.run(
        [iosim, "fsync", d, "-s", f"{secs}s", "-o", "json", "--no-save"],
        capture_output=True, text=True, check=True,
    )
    return parse_iosim(json.loads(p.stdout))


class Loop:
    """A fresh ext4 on a loop device over a file in `backing`."""

    def __init__(self, backing, size_mb=256):
        self.tmp = tempfile.mkdtemp(prefix="iosim-pgfsync-", dir=backing)
        self.img = os.path.join(self.tmp, "disk.img")
        self.mnt = tempfile.mkdtemp(prefix="iosim-pgfsync-mnt-")
        self.dev = None
        with open(self.img, "wb") as f:
            f.truncate(size_mb << 20)
        self.dev = subprocess.run(
            ["losetup", "--find", "--show", self.img],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        subprocess.run(["mkfs.ext4", "-q", "-F", self.dev], check=True)
        subprocess.run(["mount", self.dev, self.mnt], check=True)

    def close(self):
        subprocess.run(["umount", self.mnt], check=False)
        if self.dev:
            subprocess.run(["losetup", "-d", self.dev], check=False)
        shutil.rmtree(self.mnt, ignore_errors=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", help="directory to test in (default: --loop)")
    ap.add_argument("--loop", action="store_true", help="a fresh ext4 on a loop device (root)")
    ap.add_argument("--backing", default="/var/tmp", help="where the loop device's image lives")
    ap.add_argument("--secs", type=int, default=2, help="seconds per test (both tools)")
    ap.add_argument("--pairs", type=int, default=2, help="ABBA pairs")
    ap.add_argument("--tolerance", type=float, default=0.15)
    ap.add_argument("--iosim", default=os.path.join(ROOT, "target", "release", "iosim"))
    args = ap.parse_args()

    pg = find_pg_test_fsync()
    if not pg:
        print("skip: pg_test_fsync not found (apt-get install postgresql)")
        return 2
    if not os.path.exists(args.iosim):
        print(f"skip: {args.iosim} not built (cargo build --release)")
        return 2
    loop = None
    try:
        if args.loop or not args.dir:
            if os.geteuid() != 0:
                print("skip: --loop needs root (losetup, mkfs, mount); or give --dir")
                return 2
            loop = Loop(args.backing)
            d = loop.mnt
        else:
            d = args.dir
        runs = {"pg": [], "iosim": []}
        order = []
        for i in range(args.pairs):
            order += ["pg", "iosim"] if i % 2 == 0 else ["iosim", "pg"]
        for who in order:
            print(f"running {who} ...", file=sys.stderr)
            runs[who].append(run_pg(pg, d, args.secs) if who == "pg" else run_iosim(args.iosim, d, args.secs))
        keys = [k for k in runs["pg"][0] if all(k in r for r in runs["iosim"])]
        print(f"directory: {d}  ({args.secs} s per test, {args.pairs} ABBA pairs, medians)")
        print(f"{'section':<12}{'test':<28}{'pg_test_fsync':>15}{'iosim':>12}{'iosim/pg':>10}")
        failed = 0
        for k in keys:
            a = statistics.median(r[k] for r in runs["pg"])
            b = statistics.median(r[k] for r in runs["iosim"])
            ratio = b / a if a else float("nan")
            judged = k[0] in ("one", "two")
            ok = abs(ratio - 1) <= args.tolerance
            mark = ("PASS" if ok else "FAIL") if judged else ""
            failed += judged and not ok
            print(f"{k[0]:<12}{k[1]:<28}{a:>15.1f}{b:>12.1f}{ratio:>10.2f}  {mark}")
        print(f"sync-method rows outside {args.tolerance:.0%}: {failed}")
        return 1 if failed else 0
    finally:
        if loop:
            loop.close()


if __name__ == "__main__":
    sys.exit(main())
