#!/usr/bin/env python3
"""Instructions per I/O on the null engine: iosim's own per-I/O cost.

Counts user-space instructions with callgrind (deterministic, unlike a time)
for two runs of the null engine at queue depth 1 that differ only in the
number of I/Os, and divides the difference by the difference in I/Os, so
that start-up and shutdown cancel out. Only the worker thread's function is
counted, and both runs have one interval: the main thread's timer wake-ups
and the per-second interval close cost wall time, not I/Os, and under
callgrind the wall time depends on the machine's load (with them counted the
figure moved between 473 and 540 on one binary; without, it repeats to the
instruction).

    bench/instructions.py                  # print the figure
    bench/instructions.py --max 530        # also fail (exit 1) above 530
    bench/instructions.py --args "--distribution zipf:1.1"   # the cost of an option

.ci/run uses it as a performance guard. See BENCHMARKS.md ("Per-I/O cost").
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# The worker thread's function (src/runner/worker/mod.rs); rename both together.
WORKER_FN = "iosim::runner::worker::worker"
ROOT = os.path.dirname(HERE)


def collected(iosim, ios, extra=()):
    """Instructions callgrind counted for a null-engine run of `ios` I/Os."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "callgrind.out")
        argv = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
            # Only the worker thread's loop (and what it calls): the main
            # thread wakes on a timer, so its share grows with wall time,
            # which under callgrind depends on the machine's load.
            f"--toggle-collect={WORKER_FN}",
            iosim, "run", "--engine", "null", "--qd", "1",
            "--number-ios", str(ios), "--duration", "600s",
            # One interval for the whole run: an interval's close (merging the
            # workers' histograms) happens once per second of wall time, and
            # under callgrind that time depends on the machine's load, so with
            # the default 1 s interval the per-I/O figure moved by ~40 between
            # a quiet and a busy machine. Per-I/O cost only, deterministic.
            "--interval", "600s", "--quiet", "--no-save", *extra,
        ]
        env = dict(os.environ, XDG_DATA_HOME=d)
        p = subprocess.run(argv, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
        m = re.search(r"Collected\s*:\s*(\d+)", p.stderr)
        if not m:
            sys.exit(f"no 'Collected' line in callgrind's output:\n{p.stderr[-2000:]}")
        return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iosim", default=os.path.join(ROOT, "target", "release", "iosim"))
    ap.add_argument("--small", type=int, default=100_000, help="I/Os in the shorter run")
    ap.add_argument("--large", type=int, default=300_000, help="I/Os in the longer run")
    ap.add_argument("--max", type=float, default=None, help="fail above this many instructions per I/O")
    ap.add_argument("--args", default="", help="more iosim run options, e.g. \"--bssplit 8K/70:64K/30\"")
    a = ap.parse_args()
    extra = shlex.split(a.args)
    if subprocess.run(["sh", "-c", "command -v valgrind"], capture_output=True).returncode != 0:
        sys.exit("valgrind is not installed: apt-get install valgrind")
    small, large = collected(a.iosim, a.small, extra), collected(a.iosim, a.large, extra)
    per_io = (large - small) / (a.large - a.small)
    if per_io < 50:
        # Nothing (or next to nothing) was collected per I/O: the worker
        # function was renamed or inlined away, and the guard would pass blind.
        sys.exit(f"only {per_io:.0f} instructions per I/O counted inside {WORKER_FN}: "
                 f"was it renamed? Update WORKER_FN in {os.path.relpath(__file__, ROOT)}")
    extra_txt = f", {a.args}" if a.args else ""
    print(f"instructions per I/O (null engine, QD1{extra_txt}, callgrind, {a.large:,} - {a.small:,} I/Os): {per_io:.0f}")
    if a.max is not None and per_io > a.max:
        print(f"FAIL: above the limit of {a.max:.0f}: something now costs more per I/O "
              f"(profile with: valgrind --tool=callgrind {a.iosim} run --engine null --qd 1 "
              f"--number-ios {a.large} --duration 600s --interval 600s --quiet --no-save)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
