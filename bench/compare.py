#!/usr/bin/env python3
"""iosim against fio, side by side on the same machine and the same file.

Runs each workload as pairs in ABBA order (iosim fio, fio iosim, ...) and
reports the median ratio iosim/fio of IOPS (or MB/s or time), CPU seconds per
I/O, p50 and p99 latency, and peak memory. Ratios, not absolute numbers:
shared machines are noisy, alternation spreads the noise over both tools.

    bench/run                 # full run (about 15 minutes), writes bench/results/
    bench/run --smoke         # one short pair per workload, no pass/fail (a quick look)

Workloads and targets (issue "Faster than fio"):
  W1 4K randread direct QD32          IOPS ratio >= 1.00
  W2 4K randwrite direct QD32         IOPS ratio >= 1.00
  W3 1M seq read / write direct QD8   MB/s ratio >= 1.00
  W4 4K randread page cache QD1       IOPS ratio >= 1.20 (each tool's best engine)
  W5 null engine QD1 and QD32         IOPS ratio >= 2.0
  W6 4K randread direct QD1           p50 and p99 within 5% of fio's
  W7 create a 4 GiB test file         time ratio <= 1.05 (fio: 1M direct seq write, QD8)
  W8 16 threads x QD64, 60 s          iosim peak RSS <= 64 MiB, no growth with duration
  V1  verified 4K randwrite QD32       write IOPS ratio >= 2.0 against fio verify=crc32c
      direct, re-read every 16 writes  verify_backlog=16 (a slow device holds both: ~1.0)
  V2  V1 through the page cache on     the same, where CPU decides: where "2x fio" can show
      /dev/shm (CPU-bound)             (each tool's best engine; io_uring against io_uring as context)
  V3  4K randrw 50% QD32 direct,       IOPS ratio >= 0.90 against iosim unverified on the
      every read checked               same I/O (issue 16: "within 10% of unverified")
  V4  V3 on /dev/shm, page cache       the same, CPU-bound (details in v_rows and main)
  CV  iosim crash verify's read pass   MiB/s ratio >= 0.90 against iosim run --rw read
                                       --bs 1M --qd 8 direct on the same file (issue 16)
  CV1 the same against one pass        --number-ios = the file's MiB: the same bytes read
                                       once, start and end included as in the verify pass
  S, B, C                             skew, size mix, compressible data (issue 17), on the disk
  S0, C0                              skew and compressible data on the null engine (each
                                      tool's cost of generating them, no device noise)
  F1-F5 fast device, defaults        a loop device over /dev/shm with direct I/O on (root; skipped
                                      otherwise): 4K randread QD1 (each tool's defaults: iosim auto, fio
                                      psync; F1u io_uring on both, context), and QD32 / 2 threads x QD32 /
                                      QD128 and 4K randwrite QD32 (fio: io_uring named, nothing tuned):
                                      IOPS >= 1.00, CPU per I/O <= 0.90 at QD32; system calls per I/O
  F2b, F3b fast device, best settings randread / randwrite QD32, each tool's best options (picked by a
                                      short trial of each): IOPS >= 1.15
  P1, P2 I/Os per CPU-second          peak rate per core of each tool: null engine QD32, and the fast
                                      device QD32 at each tool's best (context, no target)
  D   defaults against defaults       IOPS or MB/s ratio >= 1.00 on W1, W2, W3, W4, W6:
                                      iosim without --engine against fio without
                                      --ioengine (psync), what a user gets who picks neither
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from syscalls import FastDevice, fio_argv, iosim_argv, per_io, strace_calls

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()


def run_measured(argv):
    """Runs argv, returns (stdout, rusage of the child, wall seconds)."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = b"", b""
    # wait4 gives this child's own rusage (CPU and peak RSS).
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({p.returncode}): {err.decode()[-2000:]}")
    return out.decode(), ru, wall


class Tools:
    def __init__(self, iosim, workdir, duration):
        self.iosim = iosim
        self.dir = workdir
        self.duration = duration
        self.file = os.path.join(workdir, "bench.dat")

    # ---- iosim ----
    def iosim_run(self, args, duration=None):
        d = duration or self.duration
        argv = [self.iosim, "run", *args, "--duration", f"{d}s", "--output", "json", "--quiet", "--no-save"]
        out, ru, wall = run_measured(argv)
        r = json.loads(out)
        t = r["total"]["total"]
        lat = t["latency_us"]
        v = r.get("verify") or {}
        return {
            "iops": t["iops"],
            "write_iops": r["total"].get("write", {}).get("iops", 0.0),
            "mbps": t["mib_per_sec"],
            # --verify-backlog re-reads are not in the workload's statistics but are I/O done (fio
            # counts its verify reads among its reads): CPU per I/O counts them.
            "ios": t["ios"] + v.get("backlog_reads", 0),
            "verify_checked": v.get("reads_checked", 0),
            "verify_good_pct": 100.0 * v.get("reads_good", 0) / max(v.get("reads_checked", 0), 1),
            "p50_us": lat["percentiles"].get("p50", 0.0),
            "p99_us": lat["percentiles"].get("p99", 0.0),
            "cpu_s": ru.ru_utime + ru.ru_stime,
            "ios_per_cpu_s": (t["ios"] + v.get("backlog_reads", 0)) / max(ru.ru_utime + ru.ru_stime, 1e-9),
            "rss_mib": ru.ru_maxrss / 1024.0,
            "wall_s": wall,
            "engine": r["engine"],
        }

    # ---- fio ----
    def fio_run(self, args, duration=None):
        d = duration or self.duration
        argv = ["fio", "--name=bench", *args, "--time_based", f"--runtime={d}", "--output-format=json"]
        out, ru, wall = run_measured(argv)
        j = json.loads(out[out.index("{"):])["jobs"]
        ios = sum(x["read"]["total_ios"] + x["write"]["total_ios"] for x in j)
        iops = sum(x["read"]["iops"] + x["write"]["iops"] for x in j)
        bw = sum(x["read"]["bw_bytes"] + x["write"]["bw_bytes"] for x in j) / 1048576.0
        x = j[0]
        side = x["read"] if x["read"]["total_ios"] >= x["write"]["total_ios"] else x["write"]
        clat = side.get("clat_ns", {}).get("percentile", {})
        # With --lat_percentiles=1 fio also gives total latency (slat + clat) percentiles.
        lat = side.get("lat_ns", {}).get("percentile", {}) or clat
        return {
            "iops": iops,
            "write_iops": sum(x["write"]["iops"] for x in j),
            "mbps": bw,
            "ios": ios,
            "p50_us": lat.get("50.000000", 0) / 1000.0,
            "p99_us": lat.get("99.000000", 0) / 1000.0,
            "clat_p50_us": clat.get("50.000000", 0) / 1000.0,
            "clat_p99_us": clat.get("99.000000", 0) / 1000.0,
            "cpu_s": ru.ru_utime + ru.ru_stime,
            "ios_per_cpu_s": ios / max(ru.ru_utime + ru.ru_stime, 1e-9),
            "rss_mib": ru.ru_maxrss / 1024.0,
            "wall_s": wall,
            "engine": "",
        }


class reserved_hugepages:
    """Reserves n 2 MiB huge pages (root only) for fio's --iomem=shmhuge and
    gives the old setting back on exit; yields False when it cannot."""

    PATH = "/proc/sys/vm/nr_hugepages"

    def __init__(self, n):
        self.n, self.old = n, None

    def __enter__(self):
        try:
            with open(self.PATH) as fh:
                self.old = int(fh.read())
            with open(self.PATH, "w") as fh:
                fh.write(str(max(self.n, self.old)))
            with open(self.PATH) as fh:
                return int(fh.read()) >= self.n
        except (OSError, ValueError):
            return False

    def __exit__(self, *exc):
        if self.old is not None:
            try:
                with open(self.PATH, "w") as fh:
                    fh.write(str(self.old))
            except OSError:
                pass
        return False


def parse_size(text):
    """Bytes in a size as iosim takes it (512, 64K, 1G; binary units)."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(t[-1:], 1)
    return int(float(t[:-1] if t[-1:] in "KMGT" and t[-1:] else t) * mult)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def pairs(n, a, b):
    """Runs n pairs of a() and b() in ABBA order (A B, B A, A B, ...), so that
    whatever the first run of a pair leaves behind (a warmer host cache, a
    device still flushing) favours each tool equally often. Returns the result
    lists in pair order."""
    ra, rb = [], []
    for i in range(n):
        if i % 2 == 0:
            ra.append(a())
            rb.append(b())
        else:
            rb.append(b())
            ra.append(a())
    return ra, rb


def ratio_rows(name, ra, rb, metric, target, op, cpu_max=None):
    ratios = [x[metric] / y[metric] for x, y in zip(ra, rb) if y[metric] > 0]
    cpu = [(x["cpu_s"] / max(x["ios"], 1)) / (y["cpu_s"] / max(y["ios"], 1)) for x, y in zip(ra, rb) if y["cpu_s"] > 0 and y["ios"] > 0]
    p50 = [x["p50_us"] / y["p50_us"] for x, y in zip(ra, rb) if y["p50_us"] > 0]
    p99 = [x["p99_us"] / y["p99_us"] for x, y in zip(ra, rb) if y["p99_us"] > 0]
    mem = [x["rss_mib"] / y["rss_mib"] for x, y in zip(ra, rb) if y["rss_mib"] > 0]
    r = median(ratios)
    ok = None if target is None else (r >= target if op == ">=" else r <= target)
    if ok is not None and cpu_max is not None:
        # Also a target on CPU per I/O (issue 25: <= 0.9 of fio's at QD 32).
        ok = ok and median(cpu) <= cpu_max
    return {
        "workload": name,
        "metric": metric,
        "ratio": r,
        "target": (f"{op} {target}" if target is not None else "") + (f", CPU/I/O <= {cpu_max}" if cpu_max else ""),
        "ok": ok,
        "cpu_per_io_ratio": median(cpu),
        "p50_ratio": median(p50),
        "p99_ratio": median(p99),
        "rss_ratio": median(mem),
        "iosim_median": median([x[metric] for x in ra]),
        "fio_median": median([x[metric] for x in rb]),
        "pairs": len(ratios),
        # Every pair's own figures, so a median can be checked against its spread.
        "raw": [{"iosim": x[metric], "fio": y[metric]} for x, y in zip(ra, rb)],
    }


def environment(workdir):
    dev = sh(f"df --output=source {workdir} | tail -1")
    fs = sh(f"df --output=fstype {workdir} | tail -1")
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "host": platform.node(),
        "kernel": platform.release(),
        "cpu": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip(),
        "cpus": os.cpu_count(),
        "filesystem": fs,
        "device": dev,
        "fio": sh("fio --version"),
        "iosim": sh(f"{sys.argv[0] and ''}true") or "",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iosim", default=os.path.join(ROOT, "target", "release", "iosim"))
    ap.add_argument("--dir", default=None, help="directory for the test files (default: a new one under bench/work)")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--duration", type=float, default=5.0, help="seconds per run")
    ap.add_argument("--size", default="1G", help="test file size")
    ap.add_argument("--shm-size", default="256M", help="size of the /dev/shm test files of the CPU-bound V rows")
    ap.add_argument("--smoke", action="store_true", help="one short pair per workload, no pass/fail")
    ap.add_argument("--only", default="", help="comma-separated workloads, e.g. W1,W5")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    if a.smoke:
        a.pairs, a.duration, a.size = 1, 1.0, "64M"
    only = set(x.strip().upper() for x in a.only.split(",") if x.strip())
    want = lambda w: not only or w in only

    if not shutil.which("fio"):
        sys.exit("fio is not installed: run bench/run, which installs it, or apt-get install fio")
    workdir = a.dir or os.path.join(HERE, "work")
    os.makedirs(workdir, exist_ok=True)
    T = Tools(a.iosim, workdir, a.duration)
    f = T.file
    if not os.path.exists(f):
        subprocess.run([a.iosim, "create", f, "--size", a.size, "--quiet"], check=True)
    env = environment(workdir)
    env["iosim"] = sh(f"{a.iosim} --version")
    rows = []
    io_uring = ["--ioengine=io_uring", "--fixedbufs=1", "--registerfiles=1"]

    def direct(rw, bs, qd):
        return (
            lambda: T.iosim_run([f, "--rw", rw, "--bs", bs, "--qd", str(qd), "--cache", "direct", "--allow-destroy"]),
            lambda: T.fio_run([f"--filename={f}", *io_uring, "--direct=1", f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}", "--lat_percentiles=1"]),
        )

    if want("W1"):
        rows.append(ratio_rows("W1 4K randread direct QD32", *pairs(a.pairs, *direct("randread", "4k", 32)), "iops", 1.00, ">="))
    if want("W2"):
        rows.append(ratio_rows("W2 4K randwrite direct QD32", *pairs(a.pairs, *direct("randwrite", "4k", 32)), "iops", 1.00, ">="))
    if want("W3"):
        rows.append(ratio_rows("W3 1M seq read direct QD8", *pairs(a.pairs, *direct("read", "1m", 8)), "mbps", 1.00, ">="))
        rows.append(ratio_rows("W3 1M seq write direct QD8", *pairs(a.pairs, *direct("write", "1m", 8)), "mbps", 1.00, ">="))
    if want("W3") and not a.smoke:
        # fio's buffers are ordinary 4 KiB pages: a 1 MiB request spans 256 of
        # them and is split where the device takes fewer segments (254 on
        # virtio-blk). iosim puts large buffers on huge pages. The same
        # comparison against fio on huge pages (--iomem=shmhuge) shows how
        # much of the W3 ratio that alone explains.
        with reserved_hugepages(64) as ok:
            if ok:
                for rw in ("read", "write"):
                    ia, fb = direct(rw, "1m", 8)
                    fh = lambda: T.fio_run([f"--filename={f}", *io_uring, "--direct=1", f"--rw={rw}", "--bs=1m", "--iodepth=8", "--lat_percentiles=1", "--iomem=shmhuge"])
                    r = ratio_rows(f"W3 1M seq {rw} direct QD8, fio on huge pages", *pairs(a.pairs, ia, fh), "mbps", None, "")
                    r["target"] = "(context)"
                    rows.append(r)
    if want("W4"):
        subprocess.run(["cat", f], stdout=subprocess.DEVNULL, check=True)  # into the page cache
        short = max(1.0, a.duration / 2)
        # Each tool's best engine for cached reads, picked by a short trial run of each.
        best_i = max(["sync", "uring", "mmap"], key=lambda e: T.iosim_run([f, "--rw", "randread", "--cache", "buffered", "--engine", e], short)["iops"])
        best_f = max(["psync", "pvsync2", "io_uring", "mmap"], key=lambda e: T.fio_run([f"--filename={f}", f"--ioengine={e}", "--invalidate=0", "--rw=randread", "--bs=4k"], short)["iops"])
        ra, rb = pairs(
            a.pairs,
            lambda: T.iosim_run([f, "--rw", "randread", "--cache", "buffered", "--engine", best_i]),
            lambda: T.fio_run([f"--filename={f}", f"--ioengine={best_f}", "--invalidate=0", "--rw=randread", "--bs=4k"]),
        )
        r = ratio_rows(f"W4 4K randread page cache QD1 (iosim {best_i}, fio {best_f})", ra, rb, "iops", 1.20, ">=")
        rows.append(r)
    if want("D"):
        # What a user gets without choosing an engine in either tool: iosim's
        # default (auto) against fio's (psync), on the W1-W4 and W6 workloads.
        subprocess.run(["cat", f], stdout=subprocess.DEVNULL, check=True)  # W4 reads the page cache
        for name, rw, bs, qd, cache, metric in [
            ("W1 4K randread direct QD32", "randread", "4k", 32, "direct", "iops"),
            ("W2 4K randwrite direct QD32", "randwrite", "4k", 32, "direct", "iops"),
            ("W3 1M seq read direct QD8", "read", "1m", 8, "direct", "mbps"),
            ("W3 1M seq write direct QD8", "write", "1m", 8, "direct", "mbps"),
            ("W4 4K randread page cache QD1", "randread", "4k", 1, "buffered", "iops"),
            ("W6 4K randread direct QD1", "randread", "4k", 1, "direct", "iops"),
        ]:
            ra, rb = pairs(
                a.pairs,
                lambda: T.iosim_run([f, "--rw", rw, "--bs", bs, "--qd", str(qd), "--cache", cache, "--allow-destroy"]),
                lambda: T.fio_run([f"--filename={f}", f"--direct={int(cache == 'direct')}", "--invalidate=0",
                                   f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}", "--lat_percentiles=1"]),
            )
            r = ratio_rows(f"D {name}: defaults (iosim {ra[0]['engine']}, fio psync)", ra, rb, metric, 1.00, ">=")
            rows.append(r)
    if want("W5"):
        for qd in (1, 32):
            ra, rb = pairs(
                a.pairs,
                lambda: T.iosim_run(["--engine", "null", "--qd", str(qd)]),
                lambda: T.fio_run(["--ioengine=null", "--size=1g", "--rw=randread", "--bs=4k", f"--iodepth={qd}"]),
            )
            rows.append(ratio_rows(f"W5 null engine QD{qd}", ra, rb, "iops", 2.0, ">="))
    if want("W6"):
        ra, rb = pairs(a.pairs, *direct("randread", "4k", 1))
        r = ratio_rows("W6 4K randread direct QD1 (latency agreement)", ra, rb, "p50_us", None, "")
        r["target"] = "p50, p99 within 5%"
        r["ok"] = None if a.smoke else (abs(r["p50_ratio"] - 1) <= 0.05 and abs(r["p99_ratio"] - 1) <= 0.05)
        c50 = median([x["p50_us"] / y["clat_p50_us"] for x, y in zip(ra, rb) if y["clat_p50_us"] > 0])
        c99 = median([x["p99_us"] / y["clat_p99_us"] for x, y in zip(ra, rb) if y["clat_p99_us"] > 0])
        r["detail"] = (f"ratios against fio's total latency (lat = slat + clat); against fio's clat alone: "
                       f"p50 {c50:.2f}, p99 {c99:.2f}")
        rows.append(r)
    if want("W7"):
        size = "256M" if a.smoke else "4G"
        ti, tf = [], []
        for i in range(a.pairs):
            p1, p2 = os.path.join(workdir, "create-iosim.dat"), os.path.join(workdir, "create-fio.dat")
            for p in (p1, p2):
                if os.path.exists(p):
                    os.remove(p)
            _, ru, wall = run_measured([a.iosim, "create", p1, "--size", size, "--quiet"])
            ti.append({"time": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "rss_mib": ru.ru_maxrss / 1024, "ios": 1, "p50_us": 0, "p99_us": 0})
            _, ru, wall = run_measured(["fio", "--name=create", f"--filename={p2}", *io_uring, "--direct=1", "--rw=write", "--bs=1m", "--iodepth=8", f"--size={size}", "--output-format=json"])
            tf.append({"time": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "rss_mib": ru.ru_maxrss / 1024, "ios": 1, "p50_us": 0, "p99_us": 0})
            for p in (p1, p2):
                os.remove(p)
        rows.append(ratio_rows(f"W7 create a {size} test file (time)", ti, tf, "time", 1.05, "<="))
    if want("W8"):
        short, long_ = (2, 4) if a.smoke else (10, 60)
        args = [f, "--rw", "randread", "--threads", "16", "--qd", "64", "--cache", "direct"]
        s = T.iosim_run(args, short)
        l = T.iosim_run(args, long_)
        ok = l["rss_mib"] <= 64 and l["rss_mib"] <= s["rss_mib"] * 1.10 + 1
        rows.append({
            "workload": f"W8 16 threads x QD64: peak RSS {short} s vs {long_} s",
            "metric": "rss_mib", "ratio": l["rss_mib"] / s["rss_mib"], "target": "<= 64 MiB, no growth",
            "ok": None if a.smoke else ok, "iosim_median": l["rss_mib"], "fio_median": float("nan"),
            "cpu_per_io_ratio": float("nan"), "p50_ratio": float("nan"), "p99_ratio": float("nan"), "rss_ratio": float("nan"),
            "pairs": 1, "detail": f"{s['rss_mib']:.1f} MiB after {short} s, {l['rss_mib']:.1f} MiB after {long_} s",
        })

    # Issue 17: the same skewed, mixed-size and compressible workloads in both tools.
    if want("S"):
        ra, rb = pairs(
            a.pairs,
            lambda: T.iosim_run([f, "--rw", "randread", "--bs", "4k", "--qd", "32", "--cache", "direct",
                                 "--distribution", "zipf:1.1", "--allow-destroy"]),
            lambda: T.fio_run([f"--filename={f}", *io_uring, "--direct=1", "--rw=randread", "--bs=4k",
                               "--iodepth=32", "--random_distribution=zipf:1.1", "--lat_percentiles=1"]),
        )
        rows.append(ratio_rows("S 4K randread zipf:1.1 direct QD32", ra, rb, "iops", 1.00, ">="))
    if want("B"):
        ra, rb = pairs(
            a.pairs,
            lambda: T.iosim_run([f, "--rw", "randread", "--bssplit", "4k/70:64k/25:1m/5", "--qd", "8",
                                 "--cache", "direct", "--allow-destroy"]),
            lambda: T.fio_run([f"--filename={f}", *io_uring, "--direct=1", "--rw=randread",
                               "--bssplit=4k/70:64k/25:1m/5", "--iodepth=8", "--lat_percentiles=1"]),
        )
        rows.append(ratio_rows("B randread bssplit 4K/70:64K/25:1M/5 direct QD8", ra, rb, "mbps", 1.00, ">="))
    if want("C"):
        # Fresh compressible, partly duplicate data in every write, in both tools.
        ra, rb = pairs(
            a.pairs,
            lambda: T.iosim_run([f, "--rw", "randwrite", "--bs", "4k", "--qd", "32", "--cache", "direct",
                                 "--compress-pct", "50", "--dedupe-pct", "20", "--allow-destroy"]),
            lambda: T.fio_run([f"--filename={f}", *io_uring, "--direct=1", "--rw=randwrite", "--bs=4k",
                               "--iodepth=32", "--buffer_compress_percentage=50", "--dedupe_percentage=20",
                               "--refill_buffers=1", "--lat_percentiles=1"]),
        )
        rows.append(ratio_rows("C 4K randwrite compress 50% dedupe 20% direct QD32", ra, rb, "iops", 1.00, ">="))

    # The same shapes on the null engine: no device, so the rows compare what
    # each tool spends generating them (skewed offsets; compressible,
    # partly duplicate data), which the disk rows above hide in its noise.
    if want("S0"):
        ra, rb = pairs(
            a.pairs,
            lambda: T.iosim_run(["--engine", "null", "--rw", "randread", "--bs", "4k", "--qd", "32",
                                 "--distribution", "zipf:1.1"]),
            lambda: T.fio_run(["--ioengine=null", "--size=1g", "--rw=randread", "--bs=4k", "--iodepth=32",
                               "--random_distribution=zipf:1.1"]),
        )
        rows.append(ratio_rows("S0 null engine 4K randread zipf:1.1 QD32", ra, rb, "iops", 1.00, ">="))
    if want("C0"):
        ra, rb = pairs(
            a.pairs,
            lambda: T.iosim_run(["--engine", "null", "--rw", "randwrite", "--bs", "4k", "--qd", "32",
                                 "--compress-pct", "50", "--dedupe-pct", "20"]),
            lambda: T.fio_run(["--ioengine=null", "--size=1g", "--rw=randwrite", "--bs=4k", "--iodepth=32",
                               "--buffer_compress_percentage=50", "--dedupe_percentage=20", "--refill_buffers=1"]),
        )
        rows.append(ratio_rows("C0 null engine 4K randwrite compress 50% dedupe 20% QD32", ra, rb, "iops", 1.00, ">="))

    # Issue 16: verified I/O (docs/verify.md). What each V row shows:
    #  V1 iosim --verify-backlog 16 against fio --verify=crc32c --verify_backlog=16, 4K randwrite QD32
    #     direct on the bench file: the "2x fio's verified throughput" where a device decides.
    #     Both re-read every 16th write's batch, so each does about twice the I/O of an unverified run
    #     and a slow device holds both to the same rate (expect about 1.0 there). The CPU per I/O
    #     column counts every I/O of both tools, the re-reads included.
    #  V2 the same through the page cache on a file in /dev/shm: no device to wait for, so the CPU
    #     each tool spends per verified I/O sets the rate. Where "2x fio" can show, it shows here:
    #     each tool on its best engine (a trial run of each), and io_uring on both as context.
    #  V3 iosim verified against iosim unverified doing the same I/O (the issue's "within 10% of its
    #     own unverified throughput"): 4K randrw 50% QD32 direct. The verified run's file was written
    #     whole with --verify first and its generations are loaded (--verify-state), so every read is
    #     checked and every write is stamped; the unverified run uses its own file of the same size.
    #  V4 V3 through the page cache in /dev/shm: the CPU-bound form of V3.
    if want("V"):
        shm = tempfile.mkdtemp(prefix="iosim-bench-", dir="/dev/shm")
        try:
            v_rows(a, T, f, io_uring, shm, rows)
        finally:
            shutil.rmtree(shm, ignore_errors=True)
            for p in (os.path.join(workdir, "verified.dat"), os.path.join(workdir, "unverified.dat"),
                      os.path.join(workdir, "verified.state")):
                if os.path.exists(p):
                    os.remove(p)

    # Issue 16: `iosim crash verify` reads every page back; it should read at about the device's
    # sequential speed. CV: its read rate against `iosim run --rw read --bs 1M --qd 8 --cache direct`
    # on the same file (the writer's), in ABBA pairs.
    if want("CV"):
        cv_rows(a, T, workdir, rows)

    # Issue 25: a block device fast enough that each tool's own cost decides (see f_rows).
    if want("F") or want("P"):
        f_rows(a, T, rows, want)

    md = render(env, rows, a)
    print(md)
    if not a.smoke:
        os.makedirs(a.out, exist_ok=True)
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M")
        base = os.path.join(a.out, f"{stamp}-{platform.node()}")
        with open(base + ".md", "w") as fh:
            fh.write(md)
        with open(base + ".json", "w") as fh:
            json.dump({"environment": env, "rows": rows, "pairs": a.pairs, "duration_s": a.duration}, fh, indent=2)
        print(f"written: {base}.md and .json", file=sys.stderr)
    if a.smoke and os.path.exists(f):
        os.remove(f)


def skipped_row(name, reason):
    """A row that could not run here, with the reason in place of its figures."""
    nan = float("nan")
    print(f"skipped {name}: {reason}", file=sys.stderr)
    return {"workload": name, "metric": "iops", "ratio": nan, "target": "", "ok": None, "cpu_per_io_ratio": nan,
            "p50_ratio": nan, "p99_ratio": nan, "rss_ratio": nan, "iosim_median": nan, "fio_median": nan,
            "pairs": 0, "raw": [], "detail": f"skipped: {reason}"}


def f_rows(a, T, rows, want):
    """The F and P rows (issue 25): a loop device over a file in /dev/shm with direct I/O on, so
    every I/O goes through the kernel's block layer and no disk: the CPU decides, as on NVMe.

    F1-F5 compare defaults with defaults: io_uring named on both (fio's own default engine, psync,
    has no queue depth; the D rows compare it), nothing else tuned. F2b and F3b compare each tool
    at its best, picked by a short trial of each tool's options (as W4 picks engines). P1 and P2
    give each tool's I/Os per CPU-second (its own user and system time): its peak rate per core.
    System calls per I/O of both tools (strace -c, two runs differing in I/O count) go in the
    details of the QD 32 rows; a smoke run skips that count."""
    with FastDevice(64 if a.smoke else 1024) as fast:
        if not fast.path:
            for name in ("F fast device rows", "P peak rate per core rows"):
                rows.append(skipped_row(name, fast.reason))
            return
        dev = fast.path
        short = max(1.0, a.duration / 2)

        def pair(rw, qd, threads=1, iosim_extra=(), fio_extra=(), fio_engine=("--ioengine=io_uring",)):
            """iosim with its defaults (no --engine: auto, which is io_uring for direct I/O) against fio
            with io_uring named and its other defaults, plus each side's extra options."""
            jobs = (f"--numjobs={threads}", "--group_reporting") if threads > 1 else ()
            return (
                lambda: T.iosim_run([dev, "--rw", rw, "--bs", "4k", "--qd", str(qd), "--threads", str(threads),
                                     "--cache", "direct", "--allow-destroy", *iosim_extra]),
                lambda: T.fio_run([f"--filename={dev}", *fio_engine, "--direct=1", f"--rw={rw}", "--bs=4k",
                                   f"--iodepth={qd}", "--lat_percentiles=1", *jobs, *fio_extra]),
            )

        def calls_detail(rw, iosim_extra=(), fio_extra=()):
            if a.smoke or not shutil.which("strace"):
                return ""
            i = per_io(lambda n: strace_calls(iosim_argv(T.iosim, dev, rw, 32, n, iosim_extra)))
            f = per_io(lambda n: strace_calls(fio_argv(dev, rw, 32, n, fio_extra)))
            return f"system calls per I/O: iosim {i[0]:.2f} ({i[1]:.2f} io_uring_enter), fio {f[0]:.2f} ({f[1]:.2f})"

        if want("F"):
            # F1: each tool exactly as a user gets it who names no engine (iosim: auto, io_uring for
            # direct I/O; fio: psync), as the D rows; F1u: io_uring on both, for context.
            r = ratio_rows("F1 fast device 4K randread QD1, defaults (iosim auto; fio psync)",
                           *pairs(a.pairs, *pair("randread", 1, fio_engine=())), "iops", 1.00, ">=")
            rows.append(r)
            r = ratio_rows("F1u fast device 4K randread QD1, io_uring on both (context: thread placement decides, "
                           "see BENCHMARKS.md)", *pairs(a.pairs, *pair("randread", 1)), "iops", None, "")
            r["target"] = "(context)"
            rows.append(r)
            for name, rw, qd, threads, cpu_max in (
                ("F2 fast device 4K randread QD32, defaults (fio: io_uring named)", "randread", 32, 1, 0.90),
                ("F3 fast device 4K randwrite QD32, defaults (fio: io_uring named)", "randwrite", 32, 1, 0.90),
                ("F4 fast device 4K randread 2 threads x QD32, defaults (fio: io_uring named)", "randread", 32, 2, None),
                ("F5 fast device 4K randread QD128, defaults (fio: io_uring named)", "randread", 128, 1, None),
            ):
                r = ratio_rows(name, *pairs(a.pairs, *pair(rw, qd, threads)), "iops", 1.00, ">=", cpu_max)
                if qd == 32 and threads == 1:
                    r["detail"] = calls_detail(rw)
                rows.append(r)

        # Each tool's best options at QD 32, by a short trial of each.
        iosim_opts = [[], ["--submit-batch", "0"], ["--submit-batch", "8"], ["--sqpoll"]]
        reg = ["--fixedbufs=1", "--registerfiles=1"]
        fio_opts = [reg, reg + ["--iodepth_batch_submit=32", "--iodepth_batch_complete_min=1"],
                    reg + ["--iodepth_batch_submit=8", "--iodepth_batch_complete_min=1"],
                    reg + ["--sqthread_poll=1"]]
        best = {}
        for rw in ("randread", "randwrite"):
            bi = max(iosim_opts, key=lambda o: T.iosim_run([dev, "--rw", rw, "--bs", "4k", "--qd", "32", "--cache", "direct",
                                                             "--allow-destroy", *o], short)["iops"])
            bf = max(fio_opts, key=lambda o: T.fio_run([f"--filename={dev}", "--ioengine=io_uring", "--direct=1", f"--rw={rw}",
                                                         "--bs=4k", "--iodepth=32", *o], short)["iops"])
            best[rw] = (bi, bf)
            if want("F"):
                name = (f"F{'2' if rw == 'randread' else '3'}b fast device 4K {rw} QD32, each tool's best "
                        f"(iosim {' '.join(bi) or 'defaults'}; fio {' '.join(bf)})")
                r = ratio_rows(name, *pairs(a.pairs, *pair(rw, 32, 1, bi, bf)), "iops", 1.15, ">=")
                r["detail"] = calls_detail(rw, bi, bf)
                rows.append(r)

        if want("P"):
            ra, rb = pairs(a.pairs,
                           lambda: T.iosim_run(["--engine", "null", "--rw", "randread", "--bs", "4k", "--qd", "32"]),
                           lambda: T.fio_run(["--ioengine=null", "--size=1g", "--rw=randread", "--bs=4k", "--iodepth=32"]))
            r = ratio_rows("P1 peak rate per core, null engine 4K randread QD32", ra, rb, "ios_per_cpu_s", None, "")
            r["target"] = "(context)"
            rows.append(r)
            bi, bf = best["randread"]
            r = ratio_rows(f"P2 peak rate per core, fast device 4K randread QD32, each tool's best "
                           f"(iosim {' '.join(bi) or 'defaults'}; fio {' '.join(bf)})",
                           *pairs(a.pairs, *pair("randread", 32, 1, bi, bf)), "ios_per_cpu_s", None, "")
            r["target"] = "(context)"
            rows.append(r)


def cv_rows(a, T, workdir, rows):
    """The CV row (see main): appends it to rows."""
    cf, acks = os.path.join(workdir, "crash.dat"), os.path.join(workdir, "crash.acks")
    try:
        for p in (cf, acks):
            if os.path.exists(p):
                os.remove(p)
        subprocess.run([T.iosim, "crash", "write", cf, "--size", a.size, "--duration", "1s" if a.smoke else "10s",
                        "--acks", acks, "--quiet", "--seed", "3"], check=True)

        def verify():
            out, ru, wall = run_measured([T.iosim, "crash", "verify", cf, "--acks", acks, "--no-save", "-o", "json"])
            t = json.loads(out)["targets"][0]
            return {"mbps": t["mib_s"], "ios": t["bytes_read"] // 1048576, "cpu_s": ru.ru_utime + ru.ru_stime,
                    "rss_mib": ru.ru_maxrss / 1024.0, "p50_us": 0.0, "p99_us": 0.0, "wall_s": wall,
                    "checked": t["pages_checked"] + t["log_blocks_checked"]}

        read = [cf, "--rw", "read", "--bs", "1M", "--qd", "8", "--cache", "direct"]
        # CV: against a timed read (its steady state, over several passes of the file); CV1:
        # against one pass of the same bytes (--number-ios = the file's MiB), start and end
        # included as in the verify pass.
        one_pass = ["--number-ios", str(parse_size(a.size) // 1048576)]
        for name, b in (("CV", lambda: T.iosim_run(read)), ("CV1", lambda: T.iosim_run(read + one_pass))):
            ra, rb = pairs(a.pairs, verify, b)
            what = "a timed read" if name == "CV" else "one pass over the file"
            r = ratio_rows(f"{name} crash verify read pass / iosim run --rw read --bs 1M --qd 8 direct, {what}, same file",
                           ra, rb, "mbps", 0.90, ">=")
            r["fio_median"] = median([x["mbps"] for x in rb])
            r["detail"] = (f"the 'fio' column of this row is iosim run; the verify pass checked a median "
                           f"{median([x['checked'] for x in ra]):.0f} acknowledged pages and read "
                           f"{median([x['ios'] for x in ra]):.0f} MiB in {median([x['wall_s'] for x in ra]):.1f} s per run")
            rows.append(r)
    finally:
        for p in (cf, acks):
            if os.path.exists(p):
                os.remove(p)


def v_rows(a, T, f, io_uring, shm, rows):
    """The V rows (see main): appends them to rows."""
    shm_size = "32M" if a.smoke else a.shm_size

    def backlog_pair(path, cache, ieng=None, feng=io_uring, duration=None):
        """(iosim run, fio run) of the V1/V2 workload; the trials of V2 use the same runs, shorter."""
        direct = cache == "direct"
        engine = ["--engine", ieng] if ieng else []
        return (
            lambda: T.iosim_run([path, "--rw", "randwrite", "--bs", "4k", "--qd", "32", "--cache", cache,
                                 "--verify-backlog", "16", "--allow-destroy", *engine], duration),
            lambda: T.fio_run([f"--filename={path}", *feng, f"--direct={int(direct)}", "--invalidate=0",
                               "--rw=randwrite", "--bs=4k", "--iodepth=32", "--verify=crc32c",
                               "--verify_backlog=16", "--verify_state_save=0", "--lat_percentiles=1"], duration),
        )

    detail = "CPU per I/O counts the re-reads of both tools (iosim's backlog_reads, fio's verify reads)"
    r = ratio_rows("V1 4K randwrite QD32 direct, verified, re-read every 16 writes: iosim vs fio verify=crc32c",
                   *pairs(a.pairs, *backlog_pair(f, "direct")), "write_iops", 2.0, ">=")
    r["detail"] = detail
    rows.append(r)

    sf = os.path.join(shm, "bench.dat")
    subprocess.run([T.iosim, "create", sf, "--size", shm_size, "--quiet"], check=True)
    # V2: each tool's best engine for verified writes through the page cache, picked by a short
    # trial of each (as W4 does for cached reads): what a user of either tool gets who tries the
    # engines. Through tmpfs, io_uring hands buffered writes to its worker threads (tmpfs cannot
    # write without blocking), so io_uring is the slowest engine there for both tools; the
    # io_uring pair is kept below as context.
    short = max(1.0, a.duration / 2)
    best_i = max(["sync", "uring", "mmap"],
                 key=lambda e: backlog_pair(sf, "buffered", ieng=e, duration=short)[0]()["write_iops"])
    best_f = max(["psync", "pvsync2", "io_uring", "mmap"],
                 key=lambda e: backlog_pair(sf, "buffered", feng=[f"--ioengine={e}"], duration=short)[1]()["write_iops"])
    r = ratio_rows(f"V2 4K randwrite QD32 page cache, /dev/shm (CPU-bound), verified, re-read every 16 writes: "
                   f"each tool's best engine (iosim {best_i}, fio {best_f})",
                   *pairs(a.pairs, *backlog_pair(sf, "buffered", best_i, [f"--ioengine={best_f}"])), "write_iops", 2.0, ">=")
    r["detail"] = detail
    rows.append(r)
    r = ratio_rows("V2 the same, both on io_uring (context: tmpfs punts buffered writes to io_uring's workers)",
                   *pairs(a.pairs, *backlog_pair(sf, "buffered", "uring")), "write_iops", None, "")
    r["detail"] = detail
    r["target"] = "(context)"
    rows.append(r)

    def same_io_pair(dirpath, size, cache, create_args):
        vf, uf = os.path.join(dirpath, "verified.dat"), os.path.join(dirpath, "unverified.dat")
        state = os.path.join(dirpath, "verified.state")
        for p in (vf, uf, state):
            if os.path.exists(p):
                os.remove(p)
        for p in (vf, uf):
            subprocess.run([T.iosim, "create", p, "--size", size, "--quiet", *create_args], check=True)
        blocks = os.path.getsize(vf) // 4096
        # Every block written once, verified, so every read of the measured runs is checked.
        out, _, _ = run_measured([T.iosim, "run", vf, "--rw", "write", "--bs", "4k", "--qd", "32", "--cache", cache,
                                  "--verify-state", state, "--number-ios", str(blocks), "--duration", "600s",
                                  "--output", "json", "--quiet", "--no-save", "--allow-destroy"])
        written = json.loads(out)["verify"]["blocks_written"]
        if written != blocks:
            print(f"warning: the verified file has {written} of {blocks} blocks written", file=sys.stderr)
        common = ["--rw", "randrw", "--write-pct", "50", "--bs", "4k", "--qd", "32", "--cache", cache, "--allow-destroy"]
        return (
            lambda: T.iosim_run([vf, *common, "--verify-state", state]),
            lambda: T.iosim_run([uf, *common]),
        )

    for name, dirpath, size, cache in (("V3 4K randrw 50% QD32 direct", os.path.dirname(f), a.size, "direct"),
                                       ("V4 4K randrw 50% QD32 page cache, /dev/shm (CPU-bound)", shm, shm_size, "buffered")):
        ra, rb = pairs(a.pairs, *same_io_pair(dirpath, size, cache, []))
        r = ratio_rows(f"{name}: iosim verified / iosim unverified, same I/O, every read checked", ra, rb, "iops", 0.90, ">=")
        checked = median([x["verify_checked"] for x in ra])
        r["detail"] = (f"the 'fio' column of this row is iosim unverified; the verified runs checked a median "
                       f"{checked:.0f} reads, {median([x['verify_good_pct'] for x in ra]):.1f}% of them good")
        rows.append(r)


def render(env, rows, a):
    fmt = lambda x: "-" if x != x else f"{x:.2f}"
    out = [
        f"Machine: {env['cpu']} x{env['cpus']}, kernel {env['kernel']}, {env['filesystem']} on {env['device']}; "
        f"{env['fio']} vs {env['iosim']}; {env['date']}; {a.pairs} alternating pairs of {a.duration:g} s runs.",
        "",
        "| workload | ratio iosim/fio | target | met | CPU s per I/O ratio | p50 ratio | p99 ratio | peak RSS ratio | iosim | fio |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        # A smoke run is too short to judge: no verdicts.
        met = "" if r["ok"] is None or a.smoke else ("yes" if r["ok"] else "**no**")
        unit = {"ios_per_cpu_s": "I/Os per CPU-s", "iops": "IOPS", "write_iops": "write IOPS", "mbps": "MiB/s", "time": "s", "p50_us": "us p50", "rss_mib": "MiB"}[r["metric"]]
        out.append(
            f"| {r['workload']} | {fmt(r['ratio'])} | {r['target']} | {met} | {fmt(r['cpu_per_io_ratio'])} | {fmt(r['p50_ratio'])} | "
            f"{fmt(r['p99_ratio'])} | {fmt(r['rss_ratio'])} | {fmt(r['iosim_median'])} {unit} | {fmt(r['fio_median'])} {unit} |"
        )
        if r.get("detail"):
            out.append(f"| ({r['detail']}) | | | | | | | | | |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
