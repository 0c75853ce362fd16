#!/usr/bin/env python3
"""A real database engine's I/O, fingerprinted, run by iosim and compared (issue 38).

Root, on a loop-backed ext4 (bench/dbengines.py's rig):

1. bench/dbengines.py captures the engine under its load (--keep-trace: the
   block trace with completions, and every file's extents at the end);
2. `iosim fingerprint` of that trace, one stream per file class of the
   engine (its WAL, its tables, ...: --region NAME=START..END for each
   extent, a class's extents gathered under one name; the ext4 journal's
   extents as --journal, so that its share and the commits each stream's
   fdatasyncs caused are measured; for engines whose files come and go
   (RocksDB's SSTs and WAL, Redis's AOF files), the maps dbengines.py took
   once a second as --file-map instead of --region), writes a profile (the
   journal is not a workload in it); the stream `other` (the file system's remaining
   metadata, which the file system makes, not a workload) is dropped from it;
3. bench/dbengines.py runs that profile with iosim on the same kind of file
   system, traced the same way (one target file per stream);
4. `iosim fingerprint --compare` of the two, at both layers.

  python3 bench/fingerprint_engine.py --engine postgresql --iosim target/release/iosim --out /var/tmp/fp-pg

Everything lands in --out: engine/ and iosim/ (the kept traces), the
profiles, both fingerprints (JSON) and compare.txt. The engine's own load
settings are dbengines.py's (its --help); give them after `--`.
"""

import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DBENGINES = os.path.join(HERE, "dbengines.py")


JOURNAL = object()


def stream_name(cls):
    """A file class of dbengines.py as a stream and target name ('pg_wal (WAL)' -> 'pg_wal');
    JOURNAL for the file system's journal (iosim fingerprint --journal)."""
    if "journal" in cls and cls.startswith("ext4"):
        return JOURNAL
    m = re.match(r"iosim target (\S+)", cls)
    if m:
        return m.group(1)
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", cls.split(" (")[0]).strip("_")
    return name or "files"


def regions(extents_json):
    """--region arguments: each extent (sectors) as NAME=START..END bytes, adjacent ones joined;
    the journal's as --journal START..END."""
    with open(extents_json) as f:
        ext = sorted(json.load(f)["extents"])
    runs = []
    for a, b, cls in ext:
        name = stream_name(cls)
        if runs and runs[-1][2] == name and runs[-1][1] >= a:
            runs[-1][1] = max(runs[-1][1], b)
        else:
            runs.append([a, b, name])
    args = []
    for a, b, name in runs:
        if name is JOURNAL:
            args += ["--journal", f"{a * 512}..{b * 512}"]
        else:
            args += ["--region", f"{name}={a * 512}..{b * 512}"]
    return args


def file_map(extents_json, trace_txt, path):
    """Writes `iosim fingerprint --file-map` JSON from the maps dbengines.py took during the window
    (engines whose files come and go: RocksDB, Redis) and returns the arguments that use it (the
    journal's extents, fixed, and --file-map), or None when it took none. A map's time is seconds
    from the trace's first event on the device, as the blkparse text's times are."""
    with open(extents_json) as f:
        meta = json.load(f)
    snaps = meta.get("snapshots")
    if not snaps:
        return None
    sys.path.insert(0, HERE)
    import dbengines  # noqa: E402 (the tracer's own reader, for the first event's time)
    dev = tuple(meta["device"])
    first = next(e[0] for e in dbengines.read_events(trace_txt) if e[6] == dev)
    # dbengines.py's ExtentHistory: a map's trace time is its monotonic time less the offset
    # (0 with a monotonic tracer clock; else the first event stands at the tracer's start, t0).
    offset = meta.get("offset")
    if offset is None:
        offset = meta["t0"] - first
    maps = []
    for t, triples in snaps:
        extents = []
        for a, b, cls in sorted(triples):
            name = stream_name(cls)
            if name is JOURNAL:
                continue
            if extents and extents[-1]["name"] == name and extents[-1]["end"] >= a * 512:
                extents[-1]["end"] = max(extents[-1]["end"], b * 512)
            else:
                extents.append({"name": name, "start": a * 512, "end": b * 512})
        maps.append({"at": max(0.0, t - offset - first), "extents": extents})
    with open(path, "w") as f:
        json.dump({"maps": maps}, f)
    args = []
    fixed = regions(extents_json)
    for flag, value in zip(fixed[::2], fixed[1::2]):
        if flag == "--journal":
            args += [flag, value]
    return args + ["--file-map", path]


def streams_of(stem, out_dir):
    """The fingerprint's stream arguments for a kept trace STEM: its file map when dbengines.py
    took maps during the window, else each file's extents at the end as --region."""
    by_time = file_map(stem + ".extents.json", stem + ".trace.txt",
                       os.path.join(out_dir, os.path.basename(stem) + ".file-map.json"))
    return by_time if by_time is not None else regions(stem + ".extents.json")


def without_other(toml_text):
    """The profile without its `other` workload."""
    head, *blocks = toml_text.split("\n[[workload]]\n")
    kept = [b for b in blocks if not re.match(r'name = "other"\n', b)]
    return "\n[[workload]]\n".join([head.rstrip("\n") + "\n"] + kept)


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", required=True, help="a bench/dbengines.py engine (postgresql, mariadb, ...)")
    ap.add_argument("--iosim", required=True, metavar="PATH", help="the iosim binary")
    ap.add_argument("--out", required=True, metavar="DIR", help="where everything goes (created)")
    ap.add_argument("--reuse-engine", action="store_true",
                    help="keep the engine's capture already in --out (steps 2-4 again, e.g. after changing iosim)")
    ap.add_argument("rest", nargs="*", help="after --: more bench/dbengines.py options for both runs")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("fingerprint_engine.py needs root (loop devices, mounts, the kernel's tracer)", file=sys.stderr)
        return 2
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    iosim = os.path.abspath(args.iosim)
    e = args.engine
    saved = os.path.join(out, "engine.json")
    if not (args.reuse_engine and os.path.exists(saved)):
        run([sys.executable, DBENGINES, "--engine", e, "--keep-trace", os.path.join(out, "engine"),
             "--save", saved] + args.rest)
    trace = os.path.join(out, "engine", f"{e}.blkparse.txt")
    engine_regions = streams_of(os.path.join(out, "engine", e), out)
    profile = os.path.join(out, f"{e}-fingerprint.toml")
    if os.path.exists(profile):
        os.remove(profile)
    run([iosim, "fingerprint", trace] + engine_regions + ["--out", profile], stdout=subprocess.DEVNULL)
    runnable = os.path.join(out, f"{e}-fingerprint-run.toml")
    with open(profile) as f, open(runnable, "w") as g:
        g.write(without_other(f.read()))
    # dbengines.py's compare is against the saved engine run; ours is below.
    subprocess.run([sys.executable, DBENGINES, "--engine", e, "--iosim", iosim, "--profile", runnable,
                    "--real", saved, "--keep-trace", os.path.join(out, "iosim")] + args.rest)
    a = os.path.join(out, f"{e}-engine.json")
    b = os.path.join(out, f"{e}-iosim.json")
    with open(a, "w") as f:
        run([iosim, "fingerprint", trace] + engine_regions + ["--json"], stdout=f)
    iosim_trace = os.path.join(out, "iosim", f"iosim-{e}.blkparse.txt")
    with open(b, "w") as f:
        run([iosim, "fingerprint", iosim_trace] + streams_of(os.path.join(out, "iosim", f"iosim-{e}"), out)
            + ["--json"], stdout=f)
    text = subprocess.run([iosim, "fingerprint", "--compare", a, b], check=True, capture_output=True,
                          text=True).stdout
    with open(os.path.join(out, "compare.txt"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
