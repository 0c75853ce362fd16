#!/usr/bin/env python3
"""etcd's disk check, fio's and iosim's, side by side on one file system.

etcd's documentation points to one fio command to tell whether a disk is
fast enough for its write-ahead log:

    fio --rw=write --ioengine=sync --fdatasync=1 --directory=DIR \\
        --size=22m --bs=2300 --name=etcd

and to the p99 of its fdatasyncs (under 10 ms). iosim's version of it is the
etcd-fio profile (`iosim run --profile etcd-fio DIR/FILE --size 22m`): the
same writes, its file laid out as fio lays out its own (allocated, unwritten:
`fill = "allocated"`), one pass over it (`passes = 1`).

This runs the two as ABBA pairs (fio iosim, iosim fio, ...), each on a new
file that is removed after, so what one run leaves behind (a journal still
committing, dirty pages) falls on both tools alike, and prints each pair's
fdatasync p50 and p99 and their ratios iosim/fio, with the median ratio.
Both figures are the fdatasync call's own latency: fio's `sync` latency
(`lat_ns` of its sync section), iosim's `flush` latency (`latency_us` of
`total.flush`), as the application sees it, at the system-call layer.

    bench/etcd_check.py DIR                  # 5 pairs on the file system of DIR
    bench/etcd_check.py DIR --pairs 8 --iosim target/release/iosim
    bench/etcd_check.py --loop               # on a new ext4 over a loop device in /dev/shm (root)

Needs fio. Absolute times on a shared VM are noise; the ratios are the result.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def fio_run(directory):
    out = subprocess.run(
        ["fio", "--name=etcd", "--rw=write", "--ioengine=sync", "--fdatasync=1",
         f"--directory={directory}", "--size=22m", "--bs=2300", "--output-format=json"],
        check=True, capture_output=True, text=True).stdout
    os.remove(os.path.join(directory, "etcd.0.0"))
    lat = json.loads(out)["jobs"][0]["sync"]["lat_ns"]
    p = lat["percentile"]
    return p["50.000000"] / 1000.0, p["99.000000"] / 1000.0, lat["N"]


def iosim_run(iosim, directory):
    path = os.path.join(directory, "iosim-etcd.dat")
    out = subprocess.run(
        [iosim, "run", "--profile", "etcd-fio", path, "--size", "22m",
         "--no-save", "--quiet", "--output", "json"],
        check=True, capture_output=True, text=True).stdout
    os.remove(path)
    f = json.loads(out)["results"][0]["result"]["total"]["flush"]
    p = f["latency_us"]["percentiles"]
    return p["p50"], p["p99"], f["ios"]


class LoopFs:
    """A new ext4 on a loop device over a file in /dev/shm; removed on exit."""

    def __init__(self, size_mib=512):
        self.dir = tempfile.mkdtemp(prefix="iosim-etcd-", dir="/dev/shm")
        img = os.path.join(self.dir, "fs.img")
        with open(img, "wb") as f:
            f.truncate(size_mib << 20)
        self.dev = subprocess.run(["losetup", "-f", "--show", img], check=True,
                                  capture_output=True, text=True).stdout.strip()
        self.mnt = os.path.join(self.dir, "mnt")
        os.mkdir(self.mnt)
        subprocess.run(["mkfs.ext4", "-q", "-F", self.dev], check=True)
        subprocess.run(["mount", self.dev, self.mnt], check=True)

    def close(self):
        subprocess.run(["umount", self.mnt], check=False)
        subprocess.run(["losetup", "-d", self.dev], check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", nargs="?", help="a directory on the file system to test")
    ap.add_argument("--loop", action="store_true",
                    help="test a new ext4 on a loop device over /dev/shm (root)")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--iosim", default=os.path.join(ROOT, "target", "release", "iosim"))
    a = ap.parse_args()
    if shutil.which("fio") is None:
        sys.exit("fio is not installed (apt-get install fio)")
    if not os.access(a.iosim, os.X_OK):
        sys.exit(f"{a.iosim} is not built: cargo build --release, or give --iosim")
    if bool(a.loop) == bool(a.directory):
        sys.exit("give a directory, or --loop")
    fs = LoopFs() if a.loop else None
    directory = fs.mnt if fs else a.directory
    rows = []
    try:
        for i in range(a.pairs):
            order = ["fio", "iosim"] if i % 2 == 0 else ["iosim", "fio"]
            got = {}
            for tool in order:
                got[tool] = fio_run(directory) if tool == "fio" else iosim_run(a.iosim, directory)
            rows.append(got)
            (f50, f99, fn), (i50, i99, n) = got["fio"], got["iosim"]
            print(f"pair {i + 1} ({' '.join(order)}): fio p50 {f50:.1f} us p99 {f99:.1f} us ({fn} fdatasyncs); "
                  f"iosim p50 {i50:.1f} us p99 {i99:.1f} us ({n}); ratio p50 {i50 / f50:.2f} p99 {i99 / f99:.2f}",
                  flush=True)
    finally:
        if fs:
            fs.close()
    r50 = statistics.median(r["iosim"][0] / r["fio"][0] for r in rows)
    r99 = statistics.median(r["iosim"][1] / r["fio"][1] for r in rows)
    print(f"median ratio iosim/fio over {len(rows)} pairs: p50 {r50:.2f}, p99 {r99:.2f}")


if __name__ == "__main__":
    main()
