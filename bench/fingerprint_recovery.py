#!/usr/bin/env python3
"""Does `iosim fingerprint` recover what a workload was asked to do?

fio runs workloads with known parameters on a loop device while
`iosim capture` traces it at the block layer; `iosim fingerprint` reads the
trace back, and each parameter it recovers is held against the one fio was
given: within 5 % relative (0.05 absolute for a share asked at 0).

What is compared, at the queue layer (blktrace Q events: the bios as fio
submitted them, before the block layer merged them):

  read share        fio's rwmixread / 100
  size mix          each bssplit size's share
  queue depth       the median of the I/Os in flight (Q to C), time-weighted:
                    the level held most of the time, for fio's iodepth
                    (libaio, direct). The time-weighted mean is printed too
                    and not judged: it also counts fio's own time between a
                    completion and its next submission (and fio on a loop
                    device reaps and resubmits in batches)
  hottest 10 %      the share of I/Os on the busiest 10 % of the 1 MiB
                    regions touched, for fio's zoned distribution (zoned:
                    50/10:50/90 puts half of the I/Os on the first 10 % of
                    the range; over 100 MiB that is 10 regions of 100, so the
                    hottest 10 % of regions take 0.50)
  sequential share  1.0 for a sequential job

The loop device sits over a file in /var/tmp with direct I/O (the disk, not
the page cache, answers, so an I/O lasts far longer than fio takes to
resubmit one and the device holds what fio keeps in flight). Needs root
(losetup, iosim capture), fio and an iosim (--iosim, default target/ci/iosim,
else iosim on PATH). Leaves nothing behind: the loop device is detached and
its directory removed, also on error and Ctrl-C.

  sudo python3 bench/fingerprint_recovery.py                 # every case
  sudo python3 bench/fingerprint_recovery.py --seconds 20    # longer runs
  python3 bench/fingerprint_recovery.py --self-test           # the verdict's arithmetic

Exit status 1 when any recovered value is outside 5 %.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

TOLERANCE = 0.05

# name, fio options, expected {metric: value}
CASES = [
    (
        "randrw-70-bssplit-qd8-zoned",
        [
            "--rw=randrw", "--rwmixread=70", "--bssplit=4k/50:16k/30:64k/20",
            "--random_distribution=zoned:50/10:50/90", "--ioengine=libaio",
            "--iodepth=8", "--iodepth_batch_complete_min=1", "--direct=1",
        ],
        {"read_share": 0.70, "size 4096": 0.50, "size 16384": 0.30,
         "size 65536": 0.20, "outstanding_p50": 8.0, "hottest_10pct": 0.50},
    ),
    (
        "randread-4k-qd1-uniform",
        ["--rw=randread", "--bs=4k", "--ioengine=psync", "--direct=1"],
        {"read_share": 1.0, "size 4096": 1.0, "outstanding_p50": 1.0},
    ),
    (
        "write-64k-qd16-sequential",
        [
            "--rw=write", "--bs=64k", "--ioengine=libaio", "--iodepth=16",
            "--iodepth_batch_complete_min=1", "--direct=1",
        ],
        {"read_share": 0.0, "size 65536": 1.0, "outstanding_p50": 16.0,
         "sequential": 1.0},
    ),
]


def within(got, want):
    """The verdict: 5 % relative, or 0.05 absolute where 0 was asked."""
    if want == 0:
        return abs(got) <= TOLERANCE
    return abs(got - want) <= TOLERANCE * abs(want)


def recovered(fp):
    """The figures of the queue layer's one stream."""
    layer = next(l for l in fp["layers"] if l["layer"] == "queue")
    s = layer["streams"][0]
    out = {
        "read_share": s["read_share"],
        "hottest_10pct": s["skew"]["hottest_10pct_share"],
        "sequential": s["sequential"]["share"],
    }
    if s.get("outstanding"):
        out["outstanding_mean"] = s["outstanding"]["mean"]
        out["outstanding_p50"] = s["outstanding"]["p50"]
    for z in s["sizes"]:
        out[f"size {z['bytes']}"] = z["share"]
    return out


def self_test():
    assert within(0.7, 0.70) and within(7.7, 8.0) and not within(7.5, 8.0)
    assert within(0.04, 0.0) and not within(0.06, 0.0)
    fp = {"layers": [{"layer": "issue", "streams": []}, {"layer": "queue", "streams": [{
        "read_share": 0.7, "skew": {"hottest_10pct_share": 0.5},
        "sequential": {"share": 0.0}, "outstanding": {"mean": 7.9, "p50": 8},
        "sizes": [{"bytes": 4096, "share": 0.5}]}]}]}
    r = recovered(fp)
    assert r == {"read_share": 0.7, "hottest_10pct": 0.5, "sequential": 0.0,
                 "outstanding_mean": 7.9, "outstanding_p50": 8.0, "size 4096": 0.5}, r
    print("self-test: PASS")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iosim", default=None)
    ap.add_argument("--seconds", type=int, default=10, help="each fio run (default 10)")
    ap.add_argument("--json", help="write the table as JSON to this file")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return 0
    iosim = a.iosim or ("target/ci/iosim" if os.path.exists("target/ci/iosim") else shutil.which("iosim"))
    for need, what in [(iosim, "iosim (--iosim PATH)"), (shutil.which("fio"), "fio"),
                       (shutil.which("losetup"), "losetup")]:
        if not need:
            print(f"needs {what}", file=sys.stderr)
            return 2
    if os.geteuid() != 0:
        print("needs root: a loop device and iosim capture", file=sys.stderr)
        return 2
    d = tempfile.mkdtemp(prefix="fingerprint-recovery.", dir="/var/tmp")
    loop = None
    rows, context = [], []
    try:
        back = os.path.join(d, "back.img")
        with open(back, "wb") as f:
            f.truncate(256 << 20)
        # Written whole, so reads of it reach the disk rather than holes.
        run(["dd", "if=/dev/urandom", f"of={back}", "bs=1M", "count=256",
             "conv=notrunc", "status=none"])
        loop = run(["losetup", "-f", "--show", "--direct-io=on", back],
                   capture_output=True, text=True).stdout.strip()
        for name, opts, want in CASES:
            cap = os.path.join(d, name)
            c = subprocess.Popen([iosim, "capture", loop, "--duration", f"{a.seconds + 3}s",
                                  "-o", cap], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(1.5)
            run(["fio", "--name=" + name, f"--filename={loop}", "--size=100m",
                 f"--runtime={a.seconds}", "--time_based", "--output-format=terse",
                 *opts], stdout=subprocess.DEVNULL)
            _, err = c.communicate()
            if c.returncode != 0:
                raise RuntimeError(f"iosim capture failed: {err}")
            fp = json.loads(run([iosim, "fingerprint", cap, "--json"],
                                capture_output=True, text=True).stdout)
            got = recovered(fp)
            for metric, value in want.items():
                g = got.get(metric, 0.0)
                rows.append((name, metric, value, g, within(g, value)))
            if "outstanding_mean" in got:
                context.append(f"{name}: time-weighted mean in flight {got['outstanding_mean']:.2f} (not judged)")
    finally:
        if loop:
            subprocess.run(["losetup", "-d", loop])
        shutil.rmtree(d, ignore_errors=True)
    print(f"{'case':<30} {'metric':<18} {'fio asked':>10} {'recovered':>10} {'ratio':>7}  verdict")
    for name, metric, want, got, ok in rows:
        ratio = f"{got / want:.3f}" if want else "-"
        print(f"{name:<30} {metric:<18} {want:>10.3f} {got:>10.3f} {ratio:>7}  {'PASS' if ok else 'OUT'}")
    for line in context:
        print(line)
    if a.json:
        with open(a.json, "w") as f:
            json.dump([dict(zip(["case", "metric", "asked", "recovered", "within"], r)) for r in rows], f, indent=1)
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
