#!/usr/bin/env python3
"""Collective runs against separate processes, and the cost of the collective
machinery (issue 13). Not a test: it prints figures for BENCHMARKS.md.

  bench/mpi                   build with --features mpi, then run everything
  bench/mpi.py --bin PATH     use an iosim already built with --features mpi

1. Aggregate IOPS of `mpirun -np 4 iosim run` (null engine, four ranks, four
   targets) against the sum of four separate `iosim run` processes doing the
   same work, started together (no MPI). Two workloads: uncapped (CPU-bound on
   a small machine: both sides share the same cores) and capped with
   --rate-iops (the storage, here the cap, is the limit, not the CPU).
   Runs alternate A B B A so drift hits both sides alike.
2. Collective overhead for 4 and 16 ranks: rank 0's own measurement of
   start-up (MPI start, agreement, preparation, up to the window-start
   barrier) and gather (end barrier, gather, merge), and the wall time of the
   whole job minus the measured window, against a plain single process.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
}


def env():
    e = dict(os.environ)
    e.update(MPI_ENV)
    return e


def iosim_args(secs, cap):
    a = ["run", "--engine", "null", "-d", f"{secs}s", "--output", "json", "--quiet", "--no-save"]
    if cap:
        a += ["--rate-iops", str(cap)]
    return a


def separate(binary, n, secs, cap):
    """n plain processes started together; the sum of their IOPS."""
    procs = [
        subprocess.Popen([binary] + iosim_args(secs, cap), stdout=subprocess.PIPE, env=env())
        for _ in range(n)
    ]
    total = 0.0
    for p in procs:
        out, _ = p.communicate()
        if p.returncode != 0:
            sys.exit(f"a separate run failed (exit {p.returncode})")
        total += json.loads(out)["total"]["total"]["iops"]
    return total


def collective(binary, n, secs, cap):
    """mpirun -np n; (aggregate IOPS, rank 0's overhead, wall seconds, window)."""
    t0 = time.monotonic()
    out = subprocess.run(
        ["mpirun", "-np", str(n), binary] + iosim_args(secs, cap),
        stdout=subprocess.PIPE,
        env=env(),
        check=True,
    ).stdout
    wall = time.monotonic() - t0
    v = json.loads(out)
    return v["total"]["total"]["iops"], v["ranks"]["overhead"], wall, v["duration_s"]


def bare_launch(n):
    """Wall seconds of `mpirun -np n true`: the launcher's own cost, no MPI_Init."""
    t0 = time.monotonic()
    subprocess.run(["mpirun", "-np", str(n), "true"], env=env(), check=True)
    return time.monotonic() - t0


def plain_wall(binary, secs):
    t0 = time.monotonic()
    out = subprocess.run([binary] + iosim_args(secs, None), stdout=subprocess.PIPE, check=True).stdout
    return time.monotonic() - t0, json.loads(out)["duration_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/iosim")
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=2, help="ABBA pairs per workload")
    ap.add_argument("--cap", type=int, default=50000, help="--rate-iops of the capped workload")
    a = ap.parse_args()
    host = os.uname().nodename
    cores = os.cpu_count()
    print(f"# iosim collective benchmark on {host} ({cores} cores), {a.secs} s runs, {a.pairs} ABBA pairs\n")

    print("| workload | 4 separate processes (sum IOPS) | mpirun -np 4 (aggregate IOPS) | ratio |")
    print("|---|---|---|---|")
    for name, cap in [("null, uncapped", None), (f"null, --rate-iops {a.cap}", a.cap)]:
        sep, col = [], []
        for _ in range(a.pairs):
            sep.append(separate(a.bin, 4, a.secs, cap))
            col.append(collective(a.bin, 4, a.secs, cap)[0])
            col.append(collective(a.bin, 4, a.secs, cap)[0])
            sep.append(separate(a.bin, 4, a.secs, cap))
        s, c = statistics.median(sep), statistics.median(col)
        print(f"| {name} | {s:,.0f} | {c:,.0f} | {c / s:.3f} |")

    print(
        "\n| ranks | start-up s (rank 0) | of which MPI start + agreement s | gather s (rank 0) "
        "| job wall minus window, s | bare `mpirun -np N true`, s |"
    )
    print("|---|---|---|---|---|---|")
    w, d = plain_wall(a.bin, 1)
    print(f"| 1 (plain process, no mpirun) | - | - | - | {w - d:.2f} | - |")
    for n in (4, 16):
        rows = [collective(a.bin, n, 1, None) for _ in range(3)]
        st = statistics.median(r[1]["startup_s"] for r in rows)
        it = statistics.median(r[1].get("init_s", 0.0) for r in rows)
        ga = statistics.median(r[1]["gather_s"] for r in rows)
        ov = statistics.median(r[2] - r[3] for r in rows)
        bare = statistics.median(bare_launch(n) for _ in range(3))
        print(f"| {n} | {st:.3f} | {it:.3f} | {ga:.3f} | {ov:.2f} | {bare:.2f} |")


if __name__ == "__main__":
    main()
