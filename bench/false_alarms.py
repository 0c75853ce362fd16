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

--hog N runs `stress-ng --cpu N` beside every run (a loaded machine).
--throttled (root, cgroup v1 blkio) measures detection instead: a loop
device throttled to 2,000 IOPS for reads, writes or both, under 4 KiB random
reads, writes and a 70/30 mix at QD 16; a run detects the limit when it
names a rate limit whose figure for the throttled direction (reads' or
writes' IOPS; with both throttled, either, the one the mix reaches first)
is within 5% of 2,000.
The summary also gives each workload's run-to-run spread of IOPS
(standard deviation over mean, %): the source of iosim's default spread for
a figure measured once (comparison::DEFAULT_SPREAD_PCT).
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

LIMIT = 2000
THROTTLED = [
    ("read", ["--rw", "randread", "--bs", "4k", "--qd", "16"]),
    ("write", ["--rw", "randwrite", "--bs", "4k", "--qd", "16"]),
    ("read", ["--rw", "randrw", "--write-pct", "30", "--bs", "4k", "--qd", "16"]),
    ("write", ["--rw", "randrw", "--write-pct", "30", "--bs", "4k", "--qd", "16"]),
    ("both", ["--rw", "randrw", "--write-pct", "30", "--bs", "4k", "--qd", "16"]),
]

WORKLOADS = [
    ["--rw", "randread", "--bs", "4k", "--qd", "1"],
    ["--rw", "randread", "--bs", "4k", "--qd", "16"],
    ["--rw", "randwrite", "--bs", "8k", "--qd", "8"],
    ["--rw", "read", "--bs", "1m", "--qd", "4"],
]


def run(iosim, target, wl, duration, extra, cgroup=None):
    cmd = [iosim, "run", target, *wl, "--cache", "direct", "--duration", duration,
           "--interval", "250ms", "--no-save", "--output", "json", "--quiet", *extra]
    if cgroup:
        cmd = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', cgroup + "/cgroup.procs", *cmd]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def detected(r, which):
    """The rate limit of `r` names the throttled direction's 2,000 IOPS."""
    for lim in r.get("changes", {}).get("rate_limits", []):
        read, write = lim.get("read_iops") or lim["iops"], lim.get("write_iops") or lim["iops"]
        # Both directions throttled: the one the mix reaches first binds
        # (a 70/30 mix's reads), and holds the other behind it.
        for v in {"read": [read], "write": [write], "both": [read, write, lim["iops"]]}[which]:
            if abs(v - LIMIT) <= 0.05 * LIMIT:
                return v
    return None


def throttled(a, loop):
    """Detection of real blkio throttles on the loop device."""
    major_minor = open(f"/sys/class/block/{os.path.basename(loop)}/dev").read().strip()
    cg = f"/sys/fs/cgroup/blkio/iosim-fa-{os.getpid()}"
    os.makedirs(cg, exist_ok=True)
    rows = []
    try:
        for which, wl in THROTTLED:
            for what in ["read_iops", "write_iops"]:
                on = which == "both" or what.startswith(which)
                with open(f"{cg}/blkio.throttle.{what}_device", "w") as f:
                    f.write(f"{major_minor} {LIMIT if on else 0}")
            for _ in range(a.runs):
                r = run(a.iosim, loop, wl, a.duration, ["--allow-destroy"], cg)
                lims = r.get("changes", {}).get("rate_limits", [])
                rows.append({
                    "throttle": f"{which} {LIMIT} IOPS",
                    "workload": " ".join(wl),
                    "iops": r["total"]["total"]["iops"],
                    "rate_limits": [{k: l.get(k) for k in ("iops", "read_iops", "write_iops")}
                                    for l in lims],
                    "detected_at": detected(r, which),
                    "cpu_cause": r["cpu"].get("cause"),
                })
                print(json.dumps(rows[-1]), flush=True)
    finally:
        os.rmdir(cg)
    return rows


def spreads(rows):
    """Run-to-run spread of IOPS per (target, workload), %."""
    out = {}
    for key in sorted({(r["target"], r["workload"]) for r in rows}):
        v = [r["iops"] for r in rows if (r["target"], r["workload"]) == key]
        if len(v) > 1 and statistics.mean(v) > 0:
            out[" / ".join(key)] = round(100 * statistics.stdev(v) / statistics.mean(v), 1)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iosim", default="target/release/iosim")
    ap.add_argument("--runs", type=int, default=5, help="runs of each workload on each target")
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--out")
    ap.add_argument("--hog", type=int, default=0, help="stress-ng --cpu N beside the runs")
    ap.add_argument("--throttled", action="store_true",
                    help="measure detection under blkio throttles instead (root)")
    a = ap.parse_args()
    hog = None
    if a.hog:
        hog = subprocess.Popen(["stress-ng", "--cpu", str(a.hog), "--quiet"])
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
        if a.throttled:
            targets = []
            rows = throttled(a, loop)
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
        if hog:
            hog.terminate()
            hog.wait()
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
        "cpu_hog": a.hog,
        "load_average": os.getloadavg(),
    }
    if a.throttled:
        summary["detected"] = sum(1 for r in rows if r["detected_at"])
        summary["by_throttle"] = {
            f"{t} / {w}": f"{sum(1 for r in rows if r['throttle'] == t and r['workload'] == w and r['detected_at'])}"
                          f" of {sum(1 for r in rows if r['throttle'] == t and r['workload'] == w)}"
            for t, w in dict.fromkeys((r["throttle"], r["workload"]) for r in rows)}
    else:
        summary.update({
            "intervals": sum(r["intervals"] for r in rows),
            "runs_with_rate_limit": sum(1 for r in rows if r["rate_limits"]),
            "runs_with_change": sum(1 for r in rows if r["events"]),
            "changes_by_kind": {k: sum(r["events"].count(k) for r in rows)
                                for k in ["step_down", "step_up", "drift", "periodic_stalls"]},
            "iops_spread_pct": spreads(rows),
        })
    summary["rows"] = rows
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=1))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
