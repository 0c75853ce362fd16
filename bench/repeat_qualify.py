#!/usr/bin/env python3
"""Do iosim's conclusions survive a second look? Qualifies the same two loop
devices again and again, each run against the one before (`--baseline
latest`), half of them beside a CPU hog on each core, then once more with a
real block throttle on the data device. Root (losetup, cgroup v1 blkio).

    python3 bench/repeat_qualify.py --iosim target/release/iosim --runs 10 \\
        --time 40s --out bench/results/repeat-qualify.json

Each row: the exit status (0 expected on unchanged storage; 4 when
--baseline found a regression), the regressions, how many figures were
worse by more than the 10% threshold but within their noise, the rate-limit reasons (a false alarm on unthrottled devices), each
role's verdict and the recommendations (stable advice: the same on every
run). The last run throttles the data device's reads and writes to
--throttle IOPS each (blkio.throttle.{read,write}_iops_device): exit 4
naming the data role is expected.

The devices are loop devices over files in /dev/shm (data 192 MiB, log
96 MiB), written whole with random bytes before the first run, attached
with direct I/O off, as tests/qualify.rs does.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time


def loop(shm, name, size):
    img = os.path.join(shm, name)
    # Written whole first: a sparse file's holes read back as zero pages at
    # memory speed, and each qualification's writes would fill more of them,
    # a real change between runs (1 MiB reads fell from 17,000 to 421 IOPS
    # over three runs on a truncated file).
    with open(img, "wb") as f:
        for _ in range(size >> 20):
            f.write(os.urandom(1 << 20))
    dev = subprocess.run(["losetup", "-f", "--show", img], capture_output=True,
                         text=True, check=True).stdout.strip()
    return img, dev


def qualify(a, data, log, db, baseline, cgroup=None):
    cmd = [a.iosim, "qualify", "--data", data, "--log", log, "--time", a.time,
           "--allow-destroy", "--db", db, "-o", "json", "-q"]
    if baseline:
        cmd += ["--baseline", "latest"]
    if cgroup:
        cmd = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', cgroup + "/cgroup.procs", *cmd]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    took = time.time() - t0
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        doc = {}
    err = p.stderr.splitlines()
    reasons = [r for v in doc.get("verdicts", []) for r in v.get("reasons", [])]
    return {
        "exit": p.returncode,
        "seconds": round(took, 1),
        "overall": doc.get("overall"),
        "verdicts": {v["role"]: v["verdict"] for v in doc.get("verdicts", [])},
        "regressions": (doc.get("baseline") or {}).get("regressions", []),
        "within_noise": sum(1 for c in (doc.get("baseline") or {}).get("workloads", [])
                            if c.get("worse") and not c.get("regressed")
                            and (c.get("rel_pct") or 0) and abs(c["rel_pct"]) > 10),
        "rate_limited": [r["measured"] for r in reasons if r["rule"] == "rate-limited"],
        "recommendations": doc.get("recommendations", []),
        "knees": {s["role"] + " " + s["param"]: ((s.get("result") or {}).get("knee") or {}).get("load")
                  for s in doc.get("sweeps", [])},
        "stderr_tail": err[-3:] if p.returncode not in (0, 4) else [],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iosim", default="target/release/iosim")
    ap.add_argument("--runs", type=int, default=10, help="unthrottled qualifications")
    ap.add_argument("--time", default="40s", help="each qualification's --time")
    ap.add_argument("--hog", type=int, default=2,
                    help="stress-ng --cpu N beside the second half of the runs (0: never)")
    ap.add_argument("--throttle", type=int, default=400,
                    help="IOPS each way on the data device in the last run (0: no such run)")
    ap.add_argument("--out")
    a = ap.parse_args()
    shm = tempfile.mkdtemp(dir="/dev/shm", prefix="iosim-rq-")
    work = tempfile.mkdtemp(prefix="iosim-rq-")
    db = os.path.join(work, "history.db")
    imgs, devs = [], []
    rows = []
    cg = f"/sys/fs/cgroup/blkio/iosim-rq-{os.getpid()}"
    try:
        for name, size in [("data.img", 192 << 20), ("log.img", 96 << 20)]:
            img, dev = loop(shm, name, size)
            imgs.append(img)
            devs.append(dev)
        for i in range(a.runs):
            hog = None
            # The first half quiet, the second beside the hog: each run is
            # compared with the one before, so all but one comparison are
            # between runs under the same conditions.
            loaded = a.hog > 0 and i >= a.runs // 2
            if loaded:
                hog = subprocess.Popen(["stress-ng", "--cpu", str(a.hog), "--quiet"])
            try:
                row = qualify(a, devs[0], devs[1], db, baseline=i > 0)
            finally:
                if hog:
                    hog.terminate()
                    hog.wait()
            row.update({"run": i + 1, "cpu_hog": a.hog if loaded else 0,
                        "against": "the run before" if i > 0 else None})
            rows.append(row)
            print(json.dumps(row), flush=True)
        if a.throttle:
            os.makedirs(cg, exist_ok=True)
            mm = open(f"/sys/class/block/{os.path.basename(devs[0])}/dev").read().strip()
            for what in ["read_iops", "write_iops"]:
                with open(f"{cg}/blkio.throttle.{what}_device", "w") as f:
                    f.write(f"{mm} {a.throttle}")
            row = qualify(a, devs[0], devs[1], db, baseline=True, cgroup=cg)
            row.update({"run": a.runs + 1, "cpu_hog": 0,
                        "throttle": f"data device {a.throttle} read and {a.throttle} write IOPS"})
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        if os.path.isdir(cg):
            os.rmdir(cg)
        for d in devs:
            subprocess.run(["losetup", "-d", d])
        for p in imgs:
            os.remove(p)
        os.rmdir(shm)
        for f in os.listdir(work):
            os.remove(os.path.join(work, f))
        os.rmdir(work)
    plain = [r for r in rows if "throttle" not in r]
    summary = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "time": a.time,
        "unthrottled_runs": len(plain),
        "exit_0_against_the_run_before": sum(1 for r in plain[1:] if r["exit"] == 0),
        "compared": len(plain) - 1,
        "exit_0_same_conditions": sum(1 for p, r in zip(plain, plain[1:])
                                      if r["exit"] == 0 and p["cpu_hog"] == r["cpu_hog"]),
        "compared_same_conditions": sum(1 for p, r in zip(plain, plain[1:])
                                        if p["cpu_hog"] == r["cpu_hog"]),
        "regression_lines": sum(len(r["regressions"]) for r in plain),
        "within_noise_lines": sum(r["within_noise"] for r in plain),
        "runs_with_rate_limited": sum(1 for r in plain if r["rate_limited"]),
        "distinct_recommendation_sets": len({json.dumps(r["recommendations"]) for r in plain}),
        "throttled": next((r for r in rows if "throttle" in r), None),
        "rows": rows,
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=1))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
