#!/usr/bin/env python3
"""Soak test: iosim for a long time on a loop device, watching for leaks.

Two iosim processes run at once for --secs (default 600) on the two halves
of a loop device this script creates (and detaches): a random 8 KiB
read/write mix (30% writes, 4 threads x QD16, O_DIRECT, io_uring) and a
sequential 64 KiB read stream (1 thread x QD4). Both record an interval
series (--interval 1s). Every second the script samples each process's
resident memory (VmRSS) and open file descriptors (/proc/PID/fd).

Pass: RSS and FD counts flat (the last minute's maximum within 2 MiB / 0 FDs
of the first minute's, after start-up), and the kernel's counts for the loop
device (/proc/diskstats: completed + merged I/Os, sectors) agree with iosim's
totals within 1% (the device counts a little more: the I/Os in flight when
the measured window closes still complete).

    sudo bench/soak.py                  # 10 minutes
    sudo bench/soak.py --secs 60        # a short look
    sudo bench/soak.py --json out.json  # figures as JSON too

Needs root (losetup). Uses $IOSIM, else target/release/iosim (built if missing).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def iosim_binary():
    exe = os.environ.get("IOSIM") or os.path.join(ROOT, "target", "release", "iosim")
    if not os.path.exists(exe):
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    return exe


def diskstats(name):
    """(I/Os, sectors) the kernel completed on `name`, reads + writes, merges included."""
    with open("/proc/diskstats") as f:
        for line in f:
            p = line.split()
            if len(p) > 9 and p[2] == name:
                ios = int(p[3]) + int(p[4]) + int(p[7]) + int(p[8])
                return ios, int(p[5]) + int(p[9])
    raise SystemExit(f"{name} is not in /proc/diskstats")


class LoopDevice:
    def __init__(self, size):
        self.dir = tempfile.TemporaryDirectory(prefix="iosim-soak-")
        backing = os.path.join(self.dir.name, "loop.img")
        with open(backing, "wb") as f:
            f.truncate(size)
        self.dev = subprocess.run(
            ["losetup", "-f", "--show", "--direct-io=on", backing],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        self.name = os.path.basename(self.dev)

    def close(self):
        subprocess.run(["losetup", "-d", self.dev], check=False)
        self.dir.cleanup()


def sample(pid):
    """(RSS KiB, open FDs) of `pid`, or None when it has exited."""
    try:
        with open(f"/proc/{pid}/status") as f:
            rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        return rss, fds
    except (FileNotFoundError, ProcessLookupError, StopIteration):
        return None


def flat(series, window):
    """Maxima of the first and the last `window` samples of the steady part."""
    # Skip the first 5 s (start-up: file opens, rings, buffers) and the last
    # 3 s (the result is assembled and printed): neither is a leak.
    body = series[5:-3] if len(series) > 20 else series
    if len(body) < 2 * window:
        window = max(1, len(body) // 4)
    return max(body[:window]), max(body[-window:])


def slope_per_min(series):
    """Least-squares growth of the steady part, units per minute."""
    body = series[5:-3] if len(series) > 20 else series
    n = len(body)
    if n < 2:
        return 0.0
    mx, my = (n - 1) / 2, sum(body) / n
    cov = sum((i - mx) * (y - my) for i, y in enumerate(body))
    var = sum((i - mx) ** 2 for i in range(n))
    return cov / var * 60


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--secs", type=int, default=600)
    ap.add_argument("--size", type=int, default=2 << 30, help="loop device bytes")
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("soak needs root (it creates a loop device)")
    exe = iosim_binary()
    loop = LoopDevice(a.size)
    half = a.size // 2
    common = ["-d", f"{a.secs}s", "--warmup", "0", "--interval", "1s", "-o", "json", "-q",
              "--no-save", "--cache", "direct", "--engine", "uring", "--allow-destroy"]
    jobs = {
        "randrw-8k": ["--rw", "randrw", "--write-pct", "30", "--bs", "8K", "-t", "4", "--qd", "16",
                      "--offset", "0", "--length", str(half)],
        "seqread-64k": ["--rw", "read", "--bs", "64K", "-t", "1", "--qd", "4",
                        "--offset", str(half), "--length", str(half)],
    }
    try:
        k0 = diskstats(loop.name)
        outs = {}
        procs = {}
        for name, args in jobs.items():
            outs[name] = tempfile.TemporaryFile()
            procs[name] = subprocess.Popen([exe, "run", loop.dev, *common, *args],
                                           stdout=outs[name], stderr=subprocess.PIPE, text=True)
        samples = {name: [] for name in jobs}
        t0 = time.monotonic()
        while any(p.poll() is None for p in procs.values()):
            for name, p in procs.items():
                s = sample(p.pid)
                if s and p.poll() is None:
                    samples[name].append(s)
            time.sleep(max(0.0, 1.0 - (time.monotonic() - t0) % 1.0))
        wall = time.monotonic() - t0
        k1 = diskstats(loop.name)
        results = {}
        iosim_ios = iosim_bytes = 0
        for name, p in procs.items():
            err = p.stderr.read()
            if p.returncode != 0:
                raise SystemExit(f"{name} failed ({p.returncode}): {err}")
            outs[name].seek(0)
            doc = json.loads(outs[name].read())
            tot = doc["total"]["total"]
            iosim_ios += tot["ios"]
            iosim_bytes += tot["bytes"]
            rss = [s[0] for s in samples[name]]
            fds = [s[1] for s in samples[name]]
            r0, r1 = flat(rss, 60)
            f0, f1 = flat(fds, 60)
            results[name] = {
                "iops": tot["iops"], "mib_per_sec": tot["mib_per_sec"], "ios": tot["ios"],
                "duration_s": doc["duration_s"], "samples": len(rss),
                "rss_kib_min": min(rss), "rss_kib_max": max(rss),
                "rss_kib_first_minute_max": r0, "rss_kib_last_minute_max": r1,
                "fds_min": min(fds), "fds_max": max(fds),
                "rss_kib_growth_per_min": round(slope_per_min(rss), 1),
                "rss_kib_every_10s": rss[::10],
                "rss_flat": r1 - r0 <= 2048, "fds_flat": f1 <= f0,
                "series_points": len(doc.get("series", {}).get("total", [])),
            }
        kios, ksect = k1[0] - k0[0], k1[1] - k0[1]
        report = {
            "secs": a.secs, "wall_s": round(wall, 1), "jobs": results,
            "kernel_ios": kios, "iosim_ios": iosim_ios,
            "ios_ratio_kernel_over_iosim": kios / max(1, iosim_ios),
            "kernel_bytes": ksect * 512, "iosim_bytes": iosim_bytes,
            "bytes_ratio_kernel_over_iosim": ksect * 512 / max(1, iosim_bytes),
        }
        ok = all(r["rss_flat"] and r["fds_flat"] for r in results.values()) and \
            0.99 <= report["bytes_ratio_kernel_over_iosim"] <= 1.01
        report["pass"] = ok
        print(json.dumps(report, indent=2))
        if a.json:
            with open(a.json, "w") as f:
                json.dump(report, f, indent=2)
        return 0 if ok else 1
    finally:
        for p in locals().get("procs", {}).values():
            if p.poll() is None:
                p.kill()
                p.wait()
        loop.close()


if __name__ == "__main__":
    sys.exit(main())
