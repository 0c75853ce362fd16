#!/usr/bin/env python3
"""Stress test: 4x as many threads as cores, reported IOPS against the kernel.

Runs iosim on a loop device this script creates (and detaches) with
4 x nproc threads for each of a few workloads (4 KiB random reads at QD1 and
QD8, a 70/30 random mix), and compares what iosim reports with what the
kernel counted for the device in /proc/diskstats (completed + merged I/Os):

  - I/Os: the kernel's count over iosim's total (1.00 = every I/O iosim
    counted happened, and no more; the few in flight when the window closes
    make it a little above 1);
  - IOPS: the kernel's I/Os divided by the wall time of the iosim process,
    against iosim's reported IOPS. With threads that outnumber the cores, a
    reported rate well above the kernel's is the inflated-IOPS defect (each
    worker timing its own window).

    sudo bench/stress.py                 # 20 s per workload
    sudo bench/stress.py --secs 5 --json out.json

Pass: I/O ratio within 0.99..1.02 and reported IOPS at most 2% above the
kernel's rate over the measured window. Needs root. Uses $IOSIM, else
target/release/iosim.
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soak import LoopDevice, diskstats, iosim_binary  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--secs", type=int, default=20)
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("stress needs root (it creates a loop device)")
    exe = iosim_binary()
    threads = 4 * (os.cpu_count() or 1)
    loop = LoopDevice(1 << 30)
    workloads = {
        "randread-4k-qd1": ["--rw", "randread", "--bs", "4K", "--qd", "1"],
        "randread-4k-qd8": ["--rw", "randread", "--bs", "4K", "--qd", "8"],
        "randrw-8k-qd4": ["--rw", "randrw", "--write-pct", "30", "--bs", "8K", "--qd", "4",
                          "--allow-destroy"],
    }
    rows = {}
    try:
        for name, args in workloads.items():
            k0 = diskstats(loop.name)
            t0 = time.monotonic()
            out = subprocess.run(
                [exe, "run", loop.dev, "-t", str(threads), "-d", f"{a.secs}s", "--warmup", "0",
                 "--cache", "direct", "-o", "json", "-q", "--no-save", *args],
                capture_output=True, text=True,
            )
            wall = time.monotonic() - t0
            k1 = diskstats(loop.name)
            if out.returncode != 0:
                raise SystemExit(f"{name} failed ({out.returncode}): {out.stderr}")
            doc = json.loads(out.stdout)
            tot = doc["total"]["total"]
            kios = k1[0] - k0[0]
            window = doc["duration_s"]
            rows[name] = {
                "threads": threads, "wall_s": round(wall, 2), "window_s": window,
                "iosim_ios": tot["ios"], "kernel_ios": kios,
                "ios_ratio_kernel_over_iosim": round(kios / max(1, tot["ios"]), 4),
                "iosim_iops": round(tot["iops"], 1),
                "kernel_iops_over_window": round(kios / window, 1),
                "kernel_iops_over_wall": round(kios / wall, 1),
                "iops_ratio_iosim_over_kernel": round(tot["iops"] / max(1e-9, kios / window), 4),
            }
        ok = all(0.99 <= r["ios_ratio_kernel_over_iosim"] <= 1.02 and r["iops_ratio_iosim_over_kernel"] <= 1.02
                 for r in rows.values())
        report = {"cores": os.cpu_count(), "secs": a.secs, "workloads": rows, "pass": ok}
        print(json.dumps(report, indent=2))
        if a.json:
            with open(a.json, "w") as f:
                json.dump(report, f, indent=2)
        return 0 if ok else 1
    finally:
        loop.close()


if __name__ == "__main__":
    sys.exit(main())
