#!/usr/bin/env python3
"""Long-run soak with a histogram log: memory flat, the log exact.

Runs one rate-limited `iosim run` (200 IOPS of 4 KiB random reads through
the page cache on a small test file under /tmp: almost no CPU) for
--duration (default 1h) with --interval 1s and --hist-log, samples the
process's resident memory (VmRSS, VmHWM from /proc/PID/status) every 10 s,
then reads the log back with `iosim show --hist-log -o json` and compares
its merged percentiles, min, mean and max per direction with the run's JSON
result.

Writes OUT/summary.json and OUT/summary.md (RSS after 1 minute and at the
end, growth per hour, the log's size and intervals, equal or not), the
samples (OUT/rss.csv), the run's result (OUT/result.json) and the log
(OUT/run.hlog). No root needed; the test file is removed at the end.

    bench/histsoak.py --out /work/wt/soak                  # 1 hour
    bench/histsoak.py --out /tmp/s --duration 2m           # a short look

Uses $IOSIM, else target/release/iosim (built if missing).
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def iosim_binary():
    exe = os.environ.get("IOSIM") or os.path.join(ROOT, "target", "release", "iosim")
    if not os.path.exists(exe):
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    return exe


def mem_kib(pid):
    """(VmRSS, VmHWM) in KiB, or None once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            v = {}
            for line in f:
                k, _, rest = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    v[k] = int(rest.split()[0])
            return v.get("VmRSS"), v.get("VmHWM")
    except (FileNotFoundError, ProcessLookupError):
        return None


def seconds(text):
    units = {"s": 1, "m": 60, "h": 3600}
    return float(text[:-1]) * units[text[-1]] if text[-1] in units else float(text)


def compare(result, shown):
    """Per direction, the run's latency summary against the log's merged one."""
    streams = {s["stream"]: s for s in shown["streams"]}
    rows = []
    for name, mine in (("all", "total"), ("read", "read"), ("write", "write")):
        run = result["total"][mine]
        if run["ios"] == 0:
            continue
        log = streams.get(name)
        want = run["latency_us"]
        got = log["latency_us"] if log else {}
        fields = {
            "ios": (run["ios"], log["ios"] if log else None),
            "min": (want["min"], got.get("min")),
            "mean": (want["mean"], got.get("mean")),
            "max": (want["max"], got.get("max")),
        }
        for k, v in want["percentiles"].items():
            fields[k] = (v, got.get("percentiles", {}).get(k))
        diff = {k: v for k, v in fields.items() if v[0] != v[1]}
        rows.append({"stream": name, "equal": not diff, "differ": diff,
                     "p50_us": want["percentiles"]["p50"], "p99_us": want["percentiles"]["p99"],
                     "max_us": want["max"]})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="directory for the results (created)")
    ap.add_argument("--duration", default="1h")
    ap.add_argument("--rate-iops", default="200")
    ap.add_argument("--interval", default="1s")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    exe = iosim_binary()
    log = os.path.join(a.out, "run.hlog")
    if os.path.exists(log):
        raise SystemExit(f"{log} exists: choose another --out (iosim refuses to overwrite a log)")
    work = tempfile.TemporaryDirectory(prefix="iosim-histsoak-", dir="/tmp")
    target = os.path.join(work.name, "soak.dat")
    cmd = [exe, "run", target, "--size", "64M", "--rw", "randread", "--bs", "4K",
           "--cache", "buffered", "--rate-iops", a.rate_iops, "--duration", a.duration,
           "--interval", a.interval, "--hist-log", log, "-o", "json", "--no-save", "--quiet"]
    started = time.time()
    with open(os.path.join(a.out, "result.json"), "w") as out, \
            open(os.path.join(a.out, "stderr.txt"), "w") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err)
        samples = []
        while p.poll() is None:
            m = mem_kib(p.pid)
            if m and m[0] is not None:
                samples.append((round(time.time() - started, 1), m[0], m[1]))
            time.sleep(10)
        rc = p.wait()
    elapsed = time.time() - started
    with open(os.path.join(a.out, "rss.csv"), "w") as f:
        f.write("t_s,vm_rss_kib,vm_hwm_kib\n")
        for s in samples:
            f.write(f"{s[0]},{s[1]},{s[2]}\n")
    summary = {"command": " ".join(cmd), "exit_status": rc, "elapsed_s": round(elapsed, 1),
               "samples": len(samples)}
    if rc == 0:
        result = json.load(open(os.path.join(a.out, "result.json")))
        shown = json.loads(subprocess.run([exe, "show", "--hist-log", log, "-o", "json"],
                                          check=True, capture_output=True, text=True).stdout)
        summary["log"] = {"bytes": os.path.getsize(log), "intervals": shown["intervals"],
                          "span_s": shown["span_s"]}
        summary["ios"] = result["total"]["total"]["ios"]
        summary["compare"] = compare(result, shown)
        summary["log_equals_result"] = all(r["equal"] for r in summary["compare"])
    after_1min = [s for s in samples if s[0] >= 60]
    if after_1min:
        first, last = after_1min[0], samples[-1]
        hours = max(last[0] - first[0], 1) / 3600
        summary["rss_kib_at_1min"] = first[1]
        summary["rss_kib_at_end"] = last[1]
        summary["hwm_kib_at_end"] = last[2]
        summary["rss_growth_kib_per_hour"] = round((last[1] - first[1]) / hours, 1)
        summary["rss_max_kib_after_1min"] = max(s[1] for s in after_1min)
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    md = [f"# histogram-log soak: {a.duration} at {a.rate_iops} IOPS, --interval {a.interval}", "",
          f"- command: `{summary['command']}`", f"- exit status {rc}, {summary['elapsed_s']} s"]
    for k in ("rss_kib_at_1min", "rss_kib_at_end", "hwm_kib_at_end", "rss_growth_kib_per_hour"):
        if k in summary:
            md.append(f"- {k}: {summary[k]}")
    if "log" in summary:
        md.append(f"- log: {summary['log']['bytes']} bytes, {summary['log']['intervals']} intervals"
                  f" over {summary['log']['span_s']} s")
        md.append(f"- the log's merged figures equal the result's: {summary['log_equals_result']}")
        for r in summary["compare"]:
            md.append(f"  - {r['stream']}: p50 {r['p50_us']} us, p99 {r['p99_us']} us, max {r['max_us']} us,"
                      f" equal {r['equal']} {r['differ'] or ''}")
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    work.cleanup()
    raise SystemExit(0 if rc == 0 and summary.get("log_equals_result") else 1)


if __name__ == "__main__":
    main()
