#!/usr/bin/env python3
"""How often iosim's change detectors (docs/changes.md) fire on runs where
nothing changed: unthrottled, quiet runs of fixed workloads on this machine.

Every finding on such a run is a false alarm: a rate limit (rate_limited)
on a device nothing throttles, or a step, drift or periodic stall in a
steady workload. Writes a JSON summary (and prints it).

    python3 bench/false_alarms.py --iosim target/release/iosim --runs 10 \
        --out bench/results/changes-false-alarms.json

Each run is `iosim run` for --duration with 250 ms intervals on a 256 MiB
file in a temporary directory on the disk under --dir (default /var/tmp),
and on a loop device over /dev/shm when run as root.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

WORKLOADS = [
    ["--rw", "randread", "--bs", "4k", "--qd", "1"],
    ["--rw", "randread", "--bs", "4k", "--qd", "16"],
    ["--rw", "randwrite", "--bs", "8k", "--qd", "8"],
    ["--rw", "read", "--bs", "1m", "--qd", "4"],
]


def run(iosim, target, wl, duration, extra):
    cmd = [iosim, "run", target, *wl, "--cache", "direct", "--duration", duration,
           "--interval", "250ms", "--no-save", "--output", "json", "--quiet", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iosim", default="target/release/iosim")
    ap.add_argument("--runs", type=int, default=5, help="runs of each workload on each target")
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--out")
    a = ap.parse_args()
    targets = []
    d = tempfile.mkdtemp(dir=a.dir, prefix="iosim-fa-")
    targets.append(("file on " + a.dir, os.path.join(d, "t.dat"), ["--size", "256M"]))
    loop = None
    if os.geteuid() == 0:
        shm = tempfile.mkdtemp(dir="/dev/shm", prefix="iosim-fa-")
        img = os.path.join(shm, "loop.img")
        with open(img, "wb") as f:
            f.truncate(256 << 20)
        loop = subprocess.run(["losetup", "-f", "--show", img], capture_output=True,
                              text=True, check=True).stdout.strip()
        targets.append(("loop device over /dev/shm", loop, ["--allow-destroy"]))
    rows = []
    try:
        for name, target, extra in targets:
            for wl in WORKLOADS:
                for i in range(a.runs):
                    r = run(a.iosim, target, wl, a.duration, extra)
                    ch = r.get("changes", {})
                    rows.append({
                        "target": name,
                        "workload": " ".join(wl),
                        "intervals": len(r["series"]["total"]),
                        "iops": r["total"]["total"]["iops"],
                        "rate_limits": len(ch.get("rate_limits", [])),
                        "events": [e["kind"] for e in ch.get("events", [])],
                        "cpu_cause": r["cpu"].get("cause"),
                    })
                    print(json.dumps(rows[-1]), flush=True)
    finally:
        if loop:
            subprocess.run(["losetup", "-d", loop])
            os.remove(img)
            os.rmdir(shm)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        os.rmdir(d)
    n = len(rows)
    summary = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "runs": n,
        "duration": a.duration,
        "interval": "250ms",
        "intervals": sum(r["intervals"] for r in rows),
        "runs_with_rate_limit": sum(1 for r in rows if r["rate_limits"]),
        "runs_with_change": sum(1 for r in rows if r["events"]),
        "changes_by_kind": {k: sum(r["events"].count(k) for r in rows)
                            for k in ["step_down", "step_up", "drift", "periodic_stalls"]},
        "rows": rows,
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=1))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
