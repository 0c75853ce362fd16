#!/usr/bin/env python3
"""The block I/O pattern of real database engines, and of iosim's profiles for them.

What it measures
----------------
For PostgreSQL (pgbench), MariaDB (sysbench oltp_read_write), etcd (a put
loop over etcd's JSON gateway), RocksDB (db_bench fillrandom and
readwhilewriting), Redis (redis-benchmark SETs with the append-only file,
appendfsync always and everysec) and SQLite (WAL mode, a Python sqlite3
loop), each on a fresh ext4 file system on a loop device, it records every
block request the loop device gets while the engine runs its load, and
computes the I/O *pattern*:

  - block-size mix: share of data I/Os of each size (<4K, 4K, 8K, ... 512K,
    >512K, other = a size between that is not a power of two);
  - read share (by count of data I/Os);
  - flushes per write: cache flushes (a request whose RWBS starts with F: a
    PREFLUSH, or an empty flush FN) per data write; FUA writes per write (an F
    after the W, e.g. WFS);
  - sequential share: data I/Os that start where the previous I/O of the same
    direction on the device ended;
  - rates (data I/Os/s, flushes/s), the ext4 journal's share (I/Os issued by
    the jbd2 thread, and I/Os that land in the journal's blocks), and a
    breakdown by file (WAL, tables, binlog, AOF, SST, ...) and by process
    (the issuing thread's name: postgres, mariadbd, etcd, db_bench,
    rocksdb:low/high, redis-server, bio_aof_fsync, sqlite-load, jbd2,
    kworker).

Everything the device gets is counted: the file system's journal and metadata
are part of what an iosim profile must reproduce on the same file system.

Each figure is given twice: at queue time (blktrace's Q events: the requests
as the file system and the engine issued them, before the block layer merges
them; flushes and FUA as asked for) and at dispatch (D events: what the
device got after merging; a device without FUA, like a loop device, gets a
FUA write as write + flush, so FUA is 0 there). Verdicts use Q unless
--level d.

How
---
Tracing: blktrace | blkparse when the kernel allows it; on kernels that lock
debugfs down (dmesg: "Lockdown: blktrace: debugfs access is restricted") the
kernel's own blk tracer through tracefs (/sys/block/loopN/trace/enable,
current_tracer=blk, trace_clock=mono while tracing), which emits the same
records as text. Queue, issue and complete events are recorded (the completions
give `iosim fingerprint` of a kept trace its outstanding I/Os and flush
ordering; the figures here use queue and issue only). The setup
(initdb + pgbench -i, sysbench prepare, etcd's keys, RocksDB's fill, Redis's
preload, SQLite's table) is not traced; before the measured window the page
cache is dropped (sync; echo 3 > /proc/sys/vm/drop_caches).

Files: each I/O's file comes from FIEMAP of every file on the mount when
the window ends (the ext4 journal from debugfs, read on the idle file system
before the engine's setup). RocksDB and Redis delete files within the window
(WAL and SST files, AOF files after a rewrite), so for them the files are
also mapped every second during the window (FIEMAP without writeback: blocks
not yet allocated are left out; the walk's own few metadata reads show as
process python3), and an I/O is looked up in the map taken before it, then
in those after it. Blocks freed and reused within a second can still be
given to the wrong file (about 1 % of Redis's I/Os with appendfsync always).

  sudo bench/dbengines.py --engine all                  # every engine, 30 s each
  sudo bench/dbengines.py --engine postgresql --seconds 60 --save pg.json
  sudo bench/dbengines.py --engine redis --keep-trace /tmp/traces   # both fsync policies
  sudo bench/dbengines.py --engine etcd --iosim target/release/iosim
  sudo bench/dbengines.py --engine all --iosim IOSIM --real saved.json   # reuse measurements
  python3 bench/dbengines.py --self-test                # the parser and the maths, no root

--keep-trace DIR keeps, per engine, the raw trace (NAME.trace.txt), the file
maps (NAME.extents.json; --reanalyse reads both) and the trace in blkparse's
default text format (NAME.blkparse.txt), which `iosim fingerprint` and
`iosim replay` read (the tracefs text and this script's blkparse -f format
they do not).

With --iosim PATH it also runs iosim's profile for each engine
(postgresql-oltp, mysql-oltp, etcd-wal, sqlite-wal, redis-aof-always and
redis-aof-everysec for redis-always and redis-everysec, rocksdb-fillrandom
and rocksdb-readwhilewriting; --profile to name another or a .toml)
on a fresh file system of the same kind (`iosim create` makes each target
file, 1 GiB, before tracing; then `iosim run --profile NAME DIR/<target>.dat
... --size 1G --duration SECONDS --no-save` is traced) and prints both
patterns side by side: the relative difference per metric and PASS/FAIL at
25 % relative; for shares and ratios below 0.2 (near 0) the tolerance is
0.05 absolute instead (the two meet at 0.2). Rates are shown for context,
not judged: iosim runs as fast as the device lets it unless the profile
paces it. The sequential share of reads (or writes) is not judged where the
engine did fewer than 100 of them or under 1 % of its I/Os. Exit status 1
when any verdict is FAIL, 0 otherwise (skips included).

The engines (Debian 12 packages; missing ones are skipped with the reason):
  postgresql  postgresql + pgbench. initdb defaults plus shared_buffers=32MB,
              wal_sync_method=fdatasync, full_page_writes=on,
              checkpoint_timeout=30s, log_checkpoints=on; pgbench -i -s 20
              (about 300 MB, ten times shared_buffers), then pgbench -c 8 -j 2.
              The window starts when a timed checkpoint starts (the load
              runs until then, at most 45 s), so it holds one checkpoint's
              spread writes (0.9 x 30 s) and, for windows of 28 s or more,
              its fsync phase.
  mariadb     mariadb-server + sysbench (oltp_read_write, 8 tables x 100000
              rows, about 250 MB, 8 threads). innodb_buffer_pool_size=32M
              (--my-buffer-pool),
              innodb_flush_method=O_DIRECT, innodb_flush_log_at_trx_commit=1,
              innodb_doublewrite=1, 16K pages, log_bin with sync_binlog=1.
              Falls back to a SQL loop through the mariadb client when
              sysbench is missing. --warmup seconds of load before the window.
  etcd        etcd-server (defaults; data dir on the mount) loaded by 8
              threads putting 256-byte values to 10000 keys through
              http://127.0.0.1:PORT/v3/kv/put (etcdctl check perf cannot be
              given a duration). --warmup seconds of load before the window.
  rocksdb-fillrandom, rocksdb-readwhilewriting (--engine rocksdb: both)
              rocksdb-tools' db_bench (RocksDB 7.8 in Debian 12, built with
              assertions), DB dir on the mount, run as root. Both state:
              --num=4000000 (--rocksdb-num) --key_size=16 --value_size=256
              --compression_type=none --block_size=4096 --cache_size=8388608
              (8 MiB block cache) --bloom_bits=10 --max_background_jobs=2
              --max_write_buffer_number=2 --level0_file_num_compaction_trigger=4
              --target_file_size_base=67108864 --max_bytes_for_level_base=268435456
              --level_compaction_dynamic_level_bytes=false --use_direct_reads=false
              --use_direct_io_for_flush_and_compaction=false (buffered I/O)
              --bytes_per_sync=0 --wal_bytes_per_sync=0 --seed=1
              --stats_interval_seconds=1 (the rates), and --duration longer
              than the window: db_bench is stopped at the window's end.
              fillrandom: a fresh DB, --threads=1 --sync=0 (a bulk load: WAL
              writes are not synced; RocksDB syncs the SST files it writes)
              --write_buffer_size=67108864: a flush every 2 s or so and
              compactions at this VM's 90,000-120,000 puts/s. With 23 GiB of
              RAM the WAL never reaches the device: each WAL file is deleted
              after its memtable's flush, before writeback would write it.
              readwhilewriting: after a fill that is not traced (fillseq of
              the 4,000,000 keys, about 1.1 GB, then flush and
              waitforcompaction), --use_existing_db=1 --threads=8 (readers,
              --clients; db_bench adds the one writer) --sync=1 (each put's
              WAL write is synced before it returns: durable, as a DBA
              expects of an online store) --write_buffer_size=131072: the
              synced writer does ~100 puts/s here, so only a small memtable
              flushes (every few seconds) and compacts within 30 s.
              Flushes and compactions in the window are counted from
              RocksDB's LOG (EVENT_LOG_v1). --warmup seconds before the window.
  redis-always, redis-everysec (--engine redis: both)
              redis-server (Redis 7.0) as the redis user, dir on the mount:
              appendonly yes, appendfsync always or everysec,
              appenddirname appendonlydir (a base file and an incr file, with a
              manifest), save "" (no RDB snapshots), aof-use-rdb-preamble yes,
              no-appendfsync-on-rewrite no, aof-rewrite-incremental-fsync yes,
              auto-aof-rewrite-percentage 100, auto-aof-rewrite-min-size 64mb
              (Redis's defaults: AOF rewrites happen in the window, counted).
              Setup (not traced): 200,000 SETs over the 100,000 keys
              (--redis-keys) under everysec, BGREWRITEAOF, then the policy
              measured. Load: redis-benchmark -t set -d 256 (--redis-value)
              -r 100000 -c 50 (--redis-clients) -n 1000000000 (more than the
              window can do: it is stopped at the window's end); SETs/s from
              its progress lines. --warmup seconds before the window.
  sqlite      Python's sqlite3 (SQLite 3.40 in Debian 12), database
              sqlite/main.db on the mount: page_size=4096, journal_mode=WAL,
              synchronous=FULL (--sqlite-sync; FULL syncs the WAL at every
              commit), cache_size=-2000 (2 MiB per connection, SQLite's
              default), wal_autocheckpoint=1000 (the default), mmap_size=0.
              Table kv(id INTEGER PRIMARY KEY, n, val BLOB) of 1,000,000 rows
              (--sqlite-rows) with 200-byte values, about 210 MB: a hundred
              times the cache. 4 worker processes (--sqlite-procs, named
              sqlite-load), each looping: 4 point reads by random id (each
              its own read transaction), then BEGIN IMMEDIATE, an UPDATE of a
              random row, an INSERT OR REPLACE of a random id in twice the
              key range (half of them new rows), COMMIT. --warmup seconds
              before the window.

Needs root (loop devices, mount, tracing), util-linux (losetup, setpriv),
e2fsprogs (mkfs.ext4, debugfs). Packages per engine: postgresql
postgresql-contrib, mariadb-server sysbench, etcd-server, rocksdb-tools,
redis-server redis-tools, python3 (sqlite3 module). Everything it makes is
under one temporary directory (--tmpdir, default /var/tmp) and is removed at
the end, on error and on Ctrl-C: the engines and loads are stopped, the file
system unmounted, the loop device detached, the tracer put back as it was.
"""

import argparse
import base64
import bisect
import collections
import fcntl
import glob
import grp
import http.client
import itertools
import json
import os
import pwd
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

ENGINES = ["postgresql", "mariadb", "etcd", "rocksdb-fillrandom", "rocksdb-readwhilewriting", "redis-always",
           "redis-everysec", "sqlite"]
GROUPS = {"rocksdb": ["rocksdb-fillrandom", "rocksdb-readwhilewriting"], "redis": ["redis-always", "redis-everysec"]}
# iosim's profile for each engine; an engine without one is skipped by --iosim unless --profile names one.
PROFILES = {"postgresql": "postgresql-oltp", "mariadb": "mysql-oltp", "etcd": "etcd-wal", "sqlite": "sqlite-wal",
            "redis-always": "redis-aof-always", "redis-everysec": "redis-aof-everysec",
            "rocksdb-fillrandom": "rocksdb-fillrandom", "rocksdb-readwhilewriting": "rocksdb-readwhilewriting"}
TRACEFS = "/sys/kernel/tracing"
SIZE_BUCKETS = ["<4K", "4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", ">512K", "other"]
REL_TOL = 0.25
ABS_TOL = 0.05  # for shares and ratios below ABS_TOL / REL_TOL = 0.2


class Skip(Exception):
    """An engine (or the whole run) cannot be done here; the message says why."""


def log(msg):
    print(f"[dbengines {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Cleanup: everything made is registered here and undone in reverse order.


class Cleanup:
    def __init__(self):
        self.steps = []

    def push(self, what, fn):
        self.steps.append((what, fn))
        return len(self.steps) - 1

    def run_one(self, idx):
        """Runs and forgets one step early (e.g. stop an engine before the next)."""
        what, fn = self.steps[idx]
        self.steps[idx] = (what, None)
        if fn is not None:
            self._do(what, fn)

    def _do(self, what, fn):
        try:
            fn()
        except Exception as e:  # keep cleaning up
            log(f"cleanup: {what}: {e}")

    def run_all(self):
        # Ctrl-C again during cleanup must not leave half of it undone.
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            while self.steps:
                what, fn = self.steps.pop()
                if fn is not None:
                    self._do(what, fn)
        finally:
            signal.signal(signal.SIGINT, old)


def on_sigterm(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def run(cmd, check=True, timeout=600, **kw):
    """Runs a command, returns CompletedProcess; raises with its output on failure."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {p.returncode}: {p.stdout.strip()[-2000:]}")
    return p


def as_user(user, argv):
    """argv run as a system user: setpriv execs (no extra process), so the pid is the program's."""
    return ["setpriv", f"--reuid={user}", f"--regid={pwd.getpwnam(user).pw_gid}", "--init-groups", "--"] + argv


def user_env(home):
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TZ")}
    env.setdefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
    env["HOME"] = home
    env.setdefault("LANG", "C.UTF-8")
    return env


def chown_tree(path, user):
    pw = pwd.getpwnam(user)
    os.chown(path, pw.pw_uid, pw.pw_gid)
    for root, dirs, files in os.walk(path):
        os.chown(root, pw.pw_uid, pw.pw_gid)
        for f in files:
            os.chown(os.path.join(root, f), pw.pw_uid, pw.pw_gid)


def stop_process(p, sig=signal.SIGTERM, wait=30):
    """Stops one process we started (by its pid), SIGKILL after `wait` seconds."""
    if p is None or p.poll() is not None:
        return
    try:
        p.send_signal(sig)
        p.wait(wait)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(10)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


class LineReader(threading.Thread):
    """Reads a pipe line by line, keeping (arrival time, line)."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream = stream
        self.lines = []

    def run(self):
        for line in self.stream:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def text(self, last=40):
        return "\n".join(l for _, l in self.lines[-last:])


# --------------------------------------------------------------------------
# The disk: sparse image -> loop device -> ext4 -> mount.


class Disk:
    def __init__(self, cleanup, tmpdir, image_size):
        self.cleanup = cleanup
        self.dir = tempfile.mkdtemp(prefix="dbengines.", dir=tmpdir)
        cleanup.push(f"remove {self.dir}", lambda: shutil.rmtree(self.dir))
        os.chmod(self.dir, 0o755)  # the engines' users reach their sockets and logs here
        self.image = os.path.join(self.dir, "disk.img")
        with open(self.image, "wb") as f:
            f.truncate(image_size)
        self.dev = run(["losetup", "--find", "--show", self.image]).stdout.strip()
        if not re.fullmatch(r"/dev/loop\d+", self.dev):
            raise RuntimeError(f"losetup gave '{self.dev}'")
        cleanup.push(f"detach {self.dev}", lambda: self._detach())
        run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", self.dev])
        self.mnt = os.path.join(self.dir, "mnt")
        os.mkdir(self.mnt)
        run(["mount", "-t", "ext4", self.dev, self.mnt])
        cleanup.push(f"unmount {self.mnt}", lambda: self._umount())
        os.chmod(self.mnt, 0o755)
        self.name = os.path.basename(self.dev)
        st = os.stat(self.dev)
        self.rdev = (os.major(st.st_rdev), os.minor(st.st_rdev))

    def _umount(self):
        for i in range(10):
            if run(["umount", self.mnt], check=False).returncode == 0:
                return
            # Only our own engines can hold it: stop whoever still does, by pid.
            for pid in pids_using(self.mnt):
                log(f"pid {pid} still uses {self.mnt}: killing it")
                try:
                    os.kill(pid, signal.SIGKILL if i > 2 else signal.SIGTERM)
                except ProcessLookupError:
                    pass
            time.sleep(1)
        raise RuntimeError(f"cannot unmount {self.mnt}")

    def _detach(self):
        for _ in range(10):
            if run(["losetup", "-d", self.dev], check=False).returncode == 0:
                return
            time.sleep(0.5)
        raise RuntimeError(f"cannot detach {self.dev}")

    def fs_info(self):
        out = run(["dumpe2fs", "-h", self.dev], check=False).stdout
        bs = int(re.search(r"Block size:\s+(\d+)", out).group(1)) if "Block size" in out else 4096
        return bs

    def journal_extents(self, tries=3):
        """The ext4 journal's blocks (inode 8) as (start, end) sectors, from debugfs."""
        bs = self.fs_info()
        for i in range(tries):
            out = run(["debugfs", "-R", "stat <8>", self.dev], check=False).stdout
            if "EXTENTS:" in out:
                break
            log(f"debugfs stat <8> on {self.dev} gave no extents{' (again)' if i else ''}: {out.strip()[-300:]}")
            time.sleep(1)
        ext = []
        m = re.search(r"EXTENTS:\s*\n(.*?)(\n\n|\Z)", out, re.S)
        if m:
            for a, b, c in re.findall(r"\(\d+(?:-(\d+))?\):(\d+)(?:-(\d+))?", m.group(1)):
                start = int(b)
                end = int(c) if c else start
                ext.append((start * bs // 512, (end + 1) * bs // 512))
        return ext


def pids_using(path):
    """Processes whose cwd, root or an open file is under path."""
    out = []
    for d in glob.glob("/proc/[0-9]*"):
        try:
            links = [os.readlink(f"{d}/cwd")]
            links += [os.readlink(f) for f in glob.glob(f"{d}/fd/*")]
        except OSError:
            continue
        if any(l == path or l.startswith(path + "/") for l in links):
            out.append(int(os.path.basename(d)))
    return [p for p in out if p != os.getpid()]


# --------------------------------------------------------------------------
# File extents: which file (class) each sector belongs to.

FS_IOC_FIEMAP = 0xC020660B
FIEMAP_FLAG_SYNC = 0x1
FIEMAP_EXTENT_LAST = 0x1
FIEMAP_EXTENT_UNKNOWN = 0x2


def fiemap(path, batch=256, sync=True):
    """(physical start, length) in bytes of each extent of a file.

    sync: write the file's dirty pages back first (FIEMAP_FLAG_SYNC), so that delayed allocations
    have their blocks; without it (snapshots during the window, which must not cause writeback)
    extents not yet allocated are left out."""
    out = []
    start = 0
    with open(path, "rb") as f:
        while True:
            hdr = struct.pack("=QQLLLL", start, 0xFFFFFFFFFFFFFFFF - start, FIEMAP_FLAG_SYNC if sync else 0, 0,
                              batch, 0)
            buf = bytearray(hdr + b"\0" * (56 * batch))
            fcntl.ioctl(f.fileno(), FS_IOC_FIEMAP, buf)
            n = struct.unpack_from("=L", buf, 20)[0]
            if n == 0:
                return out
            last = False
            for i in range(n):
                lo, ph, ln, _, _, fl = struct.unpack_from("=QQQQQL", buf, 32 + 56 * i)
                if not fl & FIEMAP_EXTENT_UNKNOWN:
                    out.append((ph, ln))
                start = lo + ln
                last = bool(fl & FIEMAP_EXTENT_LAST)
            if last:
                return out


class ExtentMap:
    def __init__(self):
        self.starts, self.ends, self.names = [], [], []

    @classmethod
    def build(cls, mnt, classify, journal, sync=True):
        ranges = [(s, e, "ext4 journal") for s, e in journal]
        for root, dirs, files in os.walk(mnt):
            for fn in files:
                p = os.path.join(root, fn)
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                try:
                    ext = fiemap(p, sync=sync)
                except OSError:
                    continue
                name = classify(os.path.relpath(p, mnt))
                ranges += [(ph // 512, (ph + ln) // 512, name) for ph, ln in ext]
        ranges.sort()
        m = cls()
        for s, e, n in ranges:
            m.starts.append(s)
            m.ends.append(e)
            m.names.append(n)
        return m

    def lookup(self, sector, t=None):
        i = bisect.bisect_right(self.starts, sector) - 1
        if i >= 0 and sector < self.ends[i]:
            return self.names[i]
        return None

    def to_json(self):
        return list(zip(self.starts, self.ends, self.names))

    @classmethod
    def from_json(cls, triples):
        m = cls()
        for a, b, n in triples:
            m.starts.append(a)
            m.ends.append(b)
            m.names.append(n)
        return m


class ExtentHistory:
    """File maps taken during the window (engines whose files come and go: RocksDB's WAL and SST files,
    Redis's AOF files), for I/O to files deleted before the window ends.

    An I/O at time t is looked up in the last map taken before t (a block a file already had is still
    that file's unless the file was deleted in between), then in the maps taken after t, earliest first
    (blocks allocated at writeback are in them, the file possibly not yet deleted), then in the older
    maps, latest first. Snapshot times are time.monotonic(); trace times are the same clock when the
    tracer's clock is "mono" (offset 0), otherwise offset = None: the first I/O looked up is taken to be
    at t0."""

    def __init__(self, snapshots, offset=0.0, t0=None):
        self.snapshots = sorted(snapshots, key=lambda s: s[0])  # [(monotonic time, ExtentMap)]
        self.times = [t for t, _ in self.snapshots]
        self.offset, self.t0 = offset, t0

    def lookup(self, sector, t=None):
        if t is None or not self.snapshots:
            return self.snapshots[-1][1].lookup(sector) if self.snapshots else None
        if self.offset is None:
            self.offset = (self.t0 or 0.0) - t
        i = bisect.bisect_left(self.times, t + self.offset)
        for k in itertools.chain(range(i - 1, i) if i > 0 else (), range(i, len(self.snapshots)),
                                 range(i - 2, -1, -1)):
            name = self.snapshots[k][1].lookup(sector)
            if name is not None:
                return name
        return None


class ExtentSnapshots(threading.Thread):
    """Maps the files every `interval` seconds while the window runs (FIEMAP without writeback)."""

    def __init__(self, mnt, classify, journal, interval):
        super().__init__(daemon=True)
        self.mnt, self.classify, self.journal, self.interval = mnt, classify, journal, interval
        self.maps = []  # [(time.monotonic() when the walk started, ExtentMap)]
        self.notes = []
        self.evt = threading.Event()

    def run(self):
        while True:
            t = time.monotonic()
            try:
                self.maps.append((t, ExtentMap.build(self.mnt, self.classify, self.journal, sync=False)))
            except Exception as e:  # a file went away in the walk, ...: the next one will do
                if not self.notes:
                    self.notes.append(f"a file map during the window failed: {e}")
            if self.evt.wait(self.interval):
                return

    def stop(self):
        self.evt.set()
        self.join(30)


# --------------------------------------------------------------------------
# Tracing the loop device.

TRACEFS_LINE = re.compile(
    r"^\s*.*?-(\d+)\s+\[\d+\]\s+\S+\s+(\d+\.\d+):\s+(\d+),(\d+)\s+([A-Z]{1,2})\s+([A-Z]+)\s+"
    r"(?:(\d+)\s+\+\s+(\d+)\s+|-?\d+\s+)?\[(.*?)\]")
BLKPARSE_FMT = "%M,%m %T %t %p %a %d %S %n [%C]\\n"
BLKPARSE_LINE = re.compile(r"^(\d+),(\d+) (\d+) (\d+) (\d+) ([A-Z]{1,2}) ([A-Z]+) (\d+) (\d+) \[(.*)\]$")


def parse_trace_line(line):
    """(time s, action, rwbs, sector, sectors, comm, (major, minor), pid) or None."""
    m = BLKPARSE_LINE.match(line)
    if m:
        return (int(m.group(3)) + int(m.group(4)) / 1e9, m.group(6), m.group(7), int(m.group(8)),
                int(m.group(9)), m.group(10), (int(m.group(1)), int(m.group(2))), int(m.group(5)))
    m = TRACEFS_LINE.match(line)
    if m:
        return (float(m.group(2)), m.group(5), m.group(6), int(m.group(7) or 0), int(m.group(8) or 0),
                m.group(9), (int(m.group(3)), int(m.group(4))), int(m.group(1)))
    return None


def _read(path):
    with open(path) as f:
        return f.read()


def _write(path, value):
    with open(path, "w") as f:
        f.write(value)


class Tracer:
    """blktrace | blkparse, or the kernel's blk tracer via tracefs, to a text file."""

    def __init__(self, cleanup, disk, out_path, method="auto"):
        self.cleanup, self.disk, self.out_path, self.method = cleanup, disk, out_path, method
        self.procs = []
        self.notes = []
        self.restore = []
        self.t0 = self.t1 = None
        self.clock = None  # tracefs's trace_clock while tracing ("mono": the times are time.monotonic()'s)

    def start(self):
        if self.method in ("auto", "blktrace") and shutil.which("blktrace") and shutil.which("blkparse"):
            why = self._start_blktrace()
            if why is None:
                self.method = "blktrace"
                return
            if self.method == "blktrace":
                raise Skip(f"blktrace does not work here: {why}")
            self.notes.append(f"blktrace cannot trace here ({why}): used the kernel's blk tracer through tracefs")
        elif self.method == "blktrace":
            raise Skip("blktrace/blkparse are not installed (apt-get install blktrace)")
        self.method = "tracefs"
        self._start_tracefs()

    def _start_blktrace(self):
        out = open(self.out_path, "w")
        errp = self.out_path + ".blktrace-stderr"
        err = open(errp, "w")
        bt = subprocess.Popen(["blktrace", "-d", self.disk.dev, "-a", "queue", "-a", "issue", "-a", "complete", "-o", "-"],
                              stdout=subprocess.PIPE, stderr=err, start_new_session=True)
        bp = subprocess.Popen(["blkparse", "-q", "-i", "-", "-f", BLKPARSE_FMT], stdin=bt.stdout, stdout=out,
                              stderr=subprocess.DEVNULL, start_new_session=True)
        bt.stdout.close()
        out.close()
        err.close()
        self.procs = [bt, bp]
        idx = self.cleanup.push("stop blktrace", lambda: [stop_process(p, signal.SIGINT, 10) for p in (bt, bp)])
        self.t0 = time.monotonic()
        time.sleep(1.0)
        # Where debugfs is locked down its per-CPU threads fail at once; with -o - blktrace
        # itself stays (and exits 0 when it stops), so its messages are what tells.
        lines = _read(errp).strip().splitlines()
        bad = [l for l in lines if "FAILED" in l or "failed" in l or "not permitted" in l]
        if bt.poll() is not None or bad:
            self.cleanup.run_one(idx)
            self.procs = []
            why = (bad or lines or [f"blktrace exited {bt.returncode}"])[0].strip()
            if "not permitted" in why:
                why += ": the kernel's lockdown restricts debugfs"
            return why
        self._stop_idx = idx
        return None

    def _start_tracefs(self):
        if not os.path.exists(f"{TRACEFS}/trace_pipe") and os.path.isdir(TRACEFS):
            # A fresh machine may not have mounted it (root: this script is).
            subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], capture_output=True)
        if not os.path.exists(f"{TRACEFS}/trace_pipe"):
            raise Skip(f"no tracefs at {TRACEFS} and blktrace unusable")
        if "blk" not in _read(f"{TRACEFS}/available_tracers").split():
            raise Skip("the kernel has no blk tracer (CONFIG_BLK_DEV_IO_TRACE) and blktrace is unusable")
        cur = _read(f"{TRACEFS}/current_tracer").strip()
        if cur != "nop":
            raise Skip(f"tracefs is in use (current_tracer is {cur}): try again when it is nop")
        enable = f"/sys/block/{self.disk.name}/trace/enable"
        opts = _read(f"{TRACEFS}/trace_options").split()
        size = _read(f"{TRACEFS}/buffer_size_kb").strip()
        on = _read(f"{TRACEFS}/tracing_on").strip()
        m = re.search(r"\[(\S+)\]", _read(f"{TRACEFS}/trace_clock"))
        clock = m.group(1) if m else None

        def undo():
            for p in self.procs:
                stop_process(p, signal.SIGTERM, 5)
            _write(enable, "0")
            _write(f"{TRACEFS}/current_tracer", "nop")
            if "bin" in opts:
                _write(f"{TRACEFS}/trace_options", "bin")
            if not size.startswith("["):
                # "7 (expanded: 1408)": a buffer not yet used is 7 KiB until the
                # first trace; it is the expanded size that tracing gets.
                m = re.search(r"expanded:\s*(\d+)", size)
                kb = m.group(1) if m else re.sub(r"\D.*", "", size)
                _write(f"{TRACEFS}/buffer_size_kb", kb or "1408")
            _write(f"{TRACEFS}/tracing_on", on)
            if clock and self.clock != clock:
                _write(f"{TRACEFS}/trace_clock", clock)

        self._stop_idx = self.cleanup.push("put tracefs back", undo)
        self.clock = clock
        try:  # the trace's times in CLOCK_MONOTONIC, as the file maps taken during the window
            _write(f"{TRACEFS}/trace_clock", "mono")
            self.clock = "mono"
        except OSError as e:
            self.notes.append(f"could not set trace_clock to mono ({e}): times in the {clock} clock")
        _write(f"{TRACEFS}/buffer_size_kb", "65536")
        if "bin" in opts:
            _write(f"{TRACEFS}/trace_options", "nobin")
        _write(f"{TRACEFS}/trace", "")
        _write(enable, "1")
        try:
            _write(f"/sys/block/{self.disk.name}/trace/act_mask", "queue,issue,complete")
        except OSError as e:
            self.notes.append(f"could not limit the tracer to queue, issue and complete events ({e})")
        _write(f"{TRACEFS}/current_tracer", "blk")  # before the pipe opens: EBUSY while it is open
        out = open(self.out_path, "w")
        p = subprocess.Popen(["cat", f"{TRACEFS}/trace_pipe"], stdout=out, start_new_session=True)
        out.close()
        self.procs = [p]
        _write(f"{TRACEFS}/tracing_on", "1")
        self.t0 = time.monotonic()

    def stop(self):
        self.t1 = time.monotonic()
        if self.method == "tracefs":
            _write(f"/sys/block/{self.disk.name}/trace/enable", "0")
            time.sleep(1.0)  # let cat drain the pipe
            lost = 0
            for st in glob.glob(f"{TRACEFS}/per_cpu/cpu*/stats"):
                m = re.search(r"overrun:\s*(\d+)", _read(st))
                lost += int(m.group(1)) if m else 0
            if lost:
                self.notes.append(f"the trace buffer overflowed: {lost} events lost")
        else:
            time.sleep(0.5)
        self.cleanup.run_one(self._stop_idx)
        return self.t1 - self.t0


# --------------------------------------------------------------------------
# The pattern.


def parse_rwbs(rwbs):
    """(preflush, op, fua, readahead, meta): op is R, W, D (discard) or N (none)."""
    flush = rwbs.startswith("F")
    rest = rwbs[1:] if flush else rwbs
    op = rest[:1] or "N"
    tail = rest[1:]
    return flush, op, "F" in tail, "A" in tail, "M" in tail


def size_bucket(nbytes):
    if nbytes < 4096:
        return "<4K"
    if nbytes > 512 * 1024:
        return ">512K"
    if nbytes & (nbytes - 1) == 0:
        return f"{nbytes // 1024}K"
    return "other"


def size_name(nbytes):
    if nbytes % 1024 == 0:
        return f"{nbytes // 1024}K"
    return f"{nbytes}B"


def proc_name(comm):
    if comm.startswith("jbd2/"):
        return "jbd2"
    if comm.startswith("kworker"):
        return "kworker"
    if comm.startswith("iou-wrk-") or comm.startswith("iou-sqp-"):
        return comm[:7]  # io_uring's workers, named after the pid they serve
    return comm.split("/")[0] or "?"


class Level:
    """Counts for one event type (Q or D)."""

    def __init__(self):
        self.n = {"R": 0, "W": 0}
        self.bytes = {"R": 0, "W": 0}
        self.seq = {"R": 0, "W": 0}
        self.last_end = {"R": None, "W": None}
        self.ahead = 0
        self.buckets = collections.Counter()
        self.sizes = {"R": collections.Counter(), "W": collections.Counter()}
        self.flushes = 0
        self.fua = 0
        self.discards = 0

    def add(self, rwbs, sector, nsec):
        flush, op, fua, ahead, meta = parse_rwbs(rwbs)
        if flush:
            self.flushes += 1
        if op == "D":
            self.discards += 1
            return None
        if op not in "RW" or nsec == 0:
            return None
        nbytes = nsec * 512
        self.n[op] += 1
        self.bytes[op] += nbytes
        if self.last_end[op] == sector:
            self.seq[op] += 1
        self.last_end[op] = sector + nsec
        self.buckets[size_bucket(nbytes)] += 1
        self.sizes[op][nbytes] += 1
        if op == "W" and fua:
            self.fua += 1
        if op == "R" and ahead:
            self.ahead += 1
        return op

    def summary(self, seconds):
        n = self.n["R"] + self.n["W"]
        w = self.n["W"]
        s = {
            "data_ios": n,
            "reads": self.n["R"],
            "writes": w,
            "read_bytes": self.bytes["R"],
            "write_bytes": self.bytes["W"],
            "ios_per_s": n / seconds if seconds else 0.0,
            "read_share": self.n["R"] / n if n else 0.0,
            "flushes": self.flushes,
            "flushes_per_write": self.flushes / w if w else 0.0,
            "fua_writes": self.fua,
            "fua_per_write": self.fua / w if w else 0.0,
            "flushes_per_s": self.flushes / seconds if seconds else 0.0,
            "seq_share": (self.seq["R"] + self.seq["W"]) / n if n else 0.0,
            "seq_share_reads": self.seq["R"] / self.n["R"] if self.n["R"] else 0.0,
            "seq_share_writes": self.seq["W"] / w if w else 0.0,
            "readahead_share_of_reads": self.ahead / self.n["R"] if self.n["R"] else 0.0,
            "discards": self.discards,
            "size_mix": {b: (self.buckets[b] / n if n else 0.0) for b in SIZE_BUCKETS},
            "top_sizes": {
                d: [[size_name(b), c, c / self.n[d]] for b, c in self.sizes[d].most_common(8)] for d in "RW"
            },
        }
        return s


class Group:
    """Q-level counts for one process or file class."""

    def __init__(self):
        self.n = {"R": 0, "W": 0}
        self.bytes = 0
        self.seq = 0  # starts where the group's previous I/O of the same direction ended
        self.rewrite = 0  # a write that starts inside the group's previous write
        self.last = {"R": None, "W": None}
        self.flushes = 0
        self.fua = 0
        self.sizes = {"R": collections.Counter(), "W": collections.Counter()}

    def add(self, op, sector, nsec):
        self.n[op] += 1
        self.bytes += nsec * 512
        self.sizes[op][nsec * 512] += 1
        last = self.last[op]
        if last is not None:
            self.seq += last[1] == sector
            self.rewrite += op == "W" and last[0] <= sector < last[1]
        self.last[op] = (sector, sector + nsec)


def compute(events, seconds, extents=None, devs=None):
    """The pattern of an iterable of parsed trace events."""
    q, d = Level(), Level()
    procs = collections.defaultdict(Group)
    files = collections.defaultdict(Group)
    last_write_class = {}  # pid -> the file class of its last data write
    first = last = None
    for t, act, rwbs, sector, nsec, comm, dev, pid in events:
        if devs is not None and dev not in devs:
            continue
        if act == "Q":
            first = t if first is None else first
            last = t
            op = q.add(rwbs, sector, nsec)
            g = procs[proc_name(comm)]
            flush, _, fua, _, meta = parse_rwbs(rwbs)
            cls = None
            if op is not None:
                g.add(op, sector, nsec)
                g.fua += fua and op == "W"
                cls = extents.lookup(sector, t) if extents else None
                if cls is None:
                    cls = "fs metadata (not a file)" if meta else "not in a file now (fs or deleted)"
                files[cls].add(op, sector, nsec)
                files[cls].fua += fua and op == "W"
                if op == "W":
                    last_write_class[pid] = cls
            if flush:
                g.flushes += 1
                # A flush belongs to the file its thread wrote last (a preflush write: that file).
                files[cls or last_write_class.get(pid, "flush with no earlier write by its thread")].flushes += 1
        elif act == "D":
            d.add(rwbs, sector, nsec)
    qs, ds = q.summary(seconds), d.summary(seconds)
    nq = qs["data_ios"] or 1

    def group_json(groups):
        out = {}
        for name, g in sorted(groups.items(), key=lambda kv: -(kv[1].n["R"] + kv[1].n["W"] + kv[1].flushes)):
            n = g.n["R"] + g.n["W"]
            out[name] = {
                "ios": n,
                "share": n / nq,
                "reads": g.n["R"],
                "writes": g.n["W"],
                "bytes": g.bytes,
                "flushes": g.flushes,
                "fua_writes": g.fua,
                "seq_share": g.seq / n if n else 0.0,
                "rewrite_share_of_writes": g.rewrite / g.n["W"] if g.n["W"] else 0.0,
                "flushes_per_write": g.flushes / g.n["W"] if g.n["W"] else 0.0,
                "top_sizes": {dd: [[size_name(b), c] for b, c in g.sizes[dd].most_common(8)] for dd in "RW"},
            }
        return out

    by_proc = group_json(procs)
    by_file = group_json(files)
    qs["jbd2_share"] = by_proc.get("jbd2", {}).get("ios", 0) / nq
    qs["jbd2_flush_share"] = by_proc.get("jbd2", {}).get("flushes", 0) / (qs["flushes"] or 1)
    qs["journal_area_share"] = by_file.get("ext4 journal", {}).get("ios", 0) / nq
    return {
        "seconds": seconds,
        "trace_span_s": (last - first) if first is not None else 0.0,
        "Q": qs,
        "D": ds,
        "by_process": by_proc,
        "by_file": by_file,
    }


def read_events(path):
    with open(path, errors="replace") as f:
        for line in f:
            e = parse_trace_line(line)
            if e is not None:
                yield e


def blkparse_line(seq, t, act, rwbs, sector, nsec, comm, dev, pid):
    """One event in blkparse's default text format ("  7,0    0  seq  secs.nanos  pid  Q  WS 8 + 16 [comm]"),
    which iosim fingerprint and iosim replay read; t in seconds from the trace's start, CPU not known (0)."""
    ns = max(0, round(t * 1e9))
    where = f"{sector} + {nsec} " if nsec else ""
    return (f"{dev[0]:3d},{dev[1]:<3d} 0 {seq:8d} {ns // 10**9:5d}.{ns % 10**9:09d} {pid:5d}  {act} {rwbs:>3} "
            f"{where}[{comm}]")


def write_blkparse(events, path, devs=None):
    """Writes the events in blkparse's default format (times from the first event); returns how many."""
    n, first = 0, None
    with open(path, "w") as f:
        for t, act, rwbs, sector, nsec, comm, dev, pid in events:
            if devs is not None and dev not in devs:
                continue
            first = t if first is None else first
            n += 1
            f.write(blkparse_line(n, t - first, act, rwbs, sector, nsec, comm, dev, pid) + "\n")
    return n


# --------------------------------------------------------------------------
# Printing.

METRICS = [
    ("data I/Os", "data_ios", "n", False),
    ("data I/Os/s", "ios_per_s", "rate", False),
    ("flushes/s", "flushes_per_s", "rate", False),
    ("read share", "read_share", "share", True),
] + [(f"size {b}", ("size_mix", b), "share", True) for b in SIZE_BUCKETS] + [
    ("flushes per write", "flushes_per_write", "ratio", True),
    ("FUA writes per write", "fua_per_write", "ratio", True),
    ("sequential share", "seq_share", "share", True),
    ("  of reads", "seq_share_reads", "share", True),
    ("  of writes", "seq_share_writes", "share", True),
    ("read-ahead share of reads", "readahead_share_of_reads", "share", False),
]


def metric(level, key):
    if isinstance(key, tuple):
        return level[key[0]][key[1]]
    return level[key]


def fmt(v, kind):
    if kind == "n":
        return f"{int(v)}"
    if kind == "rate":
        return f"{v:.1f}"
    return f"{v:.3f}"


def print_pattern(name, pat, info=""):
    q, d = pat["Q"], pat["D"]
    print(f"\n== {name}: {pat['seconds']:.1f} s traced{(' — ' + info) if info else ''}")
    print(f"{'metric':<28}{'issued (Q)':>14}{'device (D)':>14}")
    for label, key, kind, _ in METRICS:
        print(f"{label:<28}{fmt(metric(q, key), kind):>14}{fmt(metric(d, key), kind):>14}")
    print(f"{'jbd2 share of data I/Os':<28}{q['jbd2_share']:>14.3f}{'':>14}")
    print(f"{'journal-area share':<28}{q['journal_area_share']:>14.3f}{'':>14}")
    print(f"{'jbd2 share of flushes':<28}{q['jbd2_flush_share']:>14.3f}{'':>14}")
    for lv, lab in ((q, "Q"), (d, "D")):
        for dd, dn in (("R", "reads"), ("W", "writes")):
            top = ", ".join(f"{s} {sh:.0%}" for s, _, sh in lv["top_sizes"][dd][:6])
            print(f"  {lab} {dn} top sizes: {top or '-'}")
    print("  by file (Q; seq and rewrite within the file class; a flush counts for the file its thread wrote last)")
    print(f"   {'file':<30}{'I/Os':>8} {'share':>6} {'reads':>7} {'writes':>7} {'flushes':>7} {'FUA':>6} "
          f"{'seq':>5} {'rewr':>5}  top sizes")
    for fname, g in pat["by_file"].items():
        top = "; ".join(
            f"{'r' if dd == 'R' else 'w'} " + ",".join(f"{s}x{c}" for s, c in g["top_sizes"][dd][:4])
            for dd in "RW" if g["top_sizes"][dd])
        print(f"   {fname[:30]:<30}{g['ios']:>8} {g['share']:>6.3f} {g['reads']:>7} {g['writes']:>7} "
              f"{g['flushes']:>7} {g['fua_writes']:>6} {g['seq_share']:>5.2f} "
              f"{g['rewrite_share_of_writes']:>5.2f}  {top}")
    print(f"  by process (Q):")
    print(f"   {'process':<30}{'I/Os':>8} {'share':>6} {'reads':>7} {'writes':>7} {'flushes':>7} {'FUA':>6}")
    for pname, g in pat["by_process"].items():
        print(f"   {pname[:30]:<30}{g['ios']:>8} {g['share']:>6.3f} {g['reads']:>7} {g['writes']:>7} "
              f"{g['flushes']:>7} {g['fua_writes']:>6}")


def judge(real, sim, kind):
    """(relative difference text, PASS/FAIL)."""
    diff = sim - real
    rel = diff / real if real else (0.0 if sim == 0 else float("inf"))
    rel_txt = f"{rel:+.0%}" if rel != float("inf") else "new"
    if abs(real) < ABS_TOL / REL_TOL:
        ok = abs(diff) <= ABS_TOL
        return rel_txt + " (abs)", "PASS" if ok else "FAIL"
    return rel_txt, "PASS" if abs(rel) <= REL_TOL else "FAIL"


def print_comparison(engine, real, sim, level):
    print(f"\n== {engine}: real engine vs iosim profile, level {level} "
          f"({'issued, Q events' if level == 'Q' else 'device, D events'})")
    print(f"tolerance: {REL_TOL:.0%} relative; {ABS_TOL} absolute where the engine's value is below "
          f"{ABS_TOL / REL_TOL:.1f} (shares and ratios near 0). Rates and counts are context, not judged.")
    print(f"{'metric':<28}{'engine':>12}{'iosim':>12}{'diff':>14}  verdict")
    fails = 0
    for label, key, kind, judged in METRICS:
        a, b = metric(real[level], key), metric(sim[level], key)
        few = {"seq_share_reads": "reads", "seq_share_writes": "writes"}.get(key)
        if few and (real[level][few] < 100 or real[level][few] < 0.01 * real[level]["data_ios"]):
            # A share of a handful of I/Os is noise: shown, not judged.
            print(f"{label:<28}{fmt(a, kind):>12}{fmt(b, kind):>12}{'':>14}  (engine has {real[level][few]} {few})")
            continue
        if judged:
            rel, v = judge(a, b, kind)
            fails += v == "FAIL"
        else:
            rel, v = (f"{(b - a) / a:+.0%}" if a else "-"), ""
        print(f"{label:<28}{fmt(a, kind):>12}{fmt(b, kind):>12}{rel:>14}  {v}")
    if level == "Q":
        for label, key in (("jbd2 share of data I/Os", "jbd2_share"), ("journal-area share", "journal_area_share")):
            a, b = real["Q"][key], sim["Q"][key]
            rel, v = judge(a, b, "share")
            fails += v == "FAIL"
            print(f"{label:<28}{a:>12.3f}{b:>12.3f}{rel:>14}  {v}")
    print(f"{engine}: {'PASS' if fails == 0 else f'FAIL ({fails} metrics out of tolerance)'}")
    return fails == 0


# --------------------------------------------------------------------------
# The engines.


class Engine:
    name = "?"
    tools = []
    packages = ""  # what to install when a tool is missing

    def __init__(self, args, cleanup, disk):
        self.args, self.cleanup, self.disk = args, cleanup, disk
        self.load = None
        self.info = ""

    def check(self):
        missing = [t for t in self.tools if not (shutil.which(t) or os.path.exists(t))]
        if missing:
            raise Skip(f"not installed: {', '.join(missing)}"
                       + (f" (apt-get install {self.packages})" if self.packages else ""))

    def classify(self, rel):
        return rel.split("/")[0]


def tps_in(lines, t0, t1, pattern):
    vals = []
    for t, l in lines:
        if t0 + 0.5 < t <= t1 + 0.5:
            m = re.search(pattern, l)
            if m:
                vals.append(float(m.group(1)))
    return sum(vals) / len(vals) if vals else None


def pg_bindir():
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
    return dirs[-1] if dirs else None


class Postgres(Engine):
    name = "postgresql"

    def check(self):
        b = pg_bindir()
        if not b or not os.path.exists(f"{b}/initdb"):
            raise Skip("not installed: PostgreSQL server (apt-get install postgresql)")
        if not shutil.which("pgbench") and not os.path.exists(f"{b}/pgbench"):
            raise Skip("not installed: pgbench (apt-get install postgresql-contrib)")
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            raise Skip("no 'postgres' system user (Debian's postgresql package makes it)")
        self.bin = b

    def setup(self):
        a = self.args
        self.sock = os.path.join(self.disk.dir, "pgsock")
        self.logf = os.path.join(self.disk.dir, "postgresql.log")
        self.data = os.path.join(self.disk.mnt, "pg")
        os.mkdir(self.sock)
        os.mkdir(self.data, 0o700)
        open(self.logf, "w").close()
        for p in (self.sock, self.data, self.logf):
            chown_tree(p, "postgres")
        self.env = user_env(self.disk.dir)
        u = lambda argv: as_user("postgres", argv)
        run(u([f"{self.bin}/initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync"]), env=self.env,
            cwd=self.disk.dir)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n# bench/dbengines.py\n"
                    "listen_addresses = ''\n"
                    f"unix_socket_directories = '{self.sock}'\n"
                    "shared_buffers = 32MB\n"
                    "wal_sync_method = fdatasync\n"
                    "full_page_writes = on\n"
                    "checkpoint_timeout = 30s\n"
                    "log_checkpoints = on\n"
                    "logging_collector = off\n")
        self.port = str(free_port())
        self.conn = ["-h", self.sock, "-p", self.port]
        self.cleanup.push("stop postgresql", self.stop)
        run(u([f"{self.bin}/pg_ctl", "-D", self.data, "-l", self.logf, "-o", f"-p {self.port}", "-w", "-t", "120",
               "start"]), env=self.env, cwd=self.disk.dir)
        pgbench = shutil.which("pgbench") or f"{self.bin}/pgbench"
        self.pgbench = pgbench
        log(f"postgresql: pgbench -i -s {a.pg_scale}")
        run(u([pgbench, "-i", "-s", str(a.pg_scale), "-q"] + self.conn + ["postgres"]), env=self.env,
            cwd=self.disk.dir, timeout=1800)
        run(u([f"{self.bin}/psql", "-X", "-q"] + self.conn + ["-c", "CHECKPOINT", "postgres"]), env=self.env,
            cwd=self.disk.dir)

    def start_load(self):
        a = self.args
        # Runs through the wait for a checkpoint (<= 45 s) and the window; stopped after it.
        self.load = subprocess.Popen(
            as_user("postgres", [self.pgbench, "-c", str(a.clients), "-j", "2", "-P", "1", "-T",
                                 str(a.seconds + 60)] + self.conn + ["postgres"]),
            env=self.env, cwd=self.disk.dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)
        self.cleanup.push("stop pgbench", lambda: stop_process(self.load, signal.SIGINT))
        self.reader = LineReader(self.load.stdout)
        self.reader.start()

    def wait_window(self):
        """Until a timed checkpoint starts, so the window holds one whole."""
        with open(self.logf) as f:
            f.seek(0, 2)
            deadline = time.monotonic() + 45
            buf = ""
            while time.monotonic() < deadline:
                buf += f.read()
                if "checkpoint starting: time" in buf:
                    return "window starts with a timed checkpoint"
                if self.load.poll() is not None:
                    raise RuntimeError(f"pgbench stopped: {self.reader.text()}")
                time.sleep(0.05)
        return "no timed checkpoint started within 45 s: window not aligned"

    def window_info(self, t0, t1):
        tps = tps_in(self.reader.lines, t0, t1, r"progress: [\d.]+ s, ([\d.]+) tps")
        with open(self.logf) as f:
            ck = [l.strip() for l in f if "checkpoint complete" in l]
        return (f"pgbench -c {self.args.clients} -j 2, scale {self.args.pg_scale}: "
                f"{tps:.0f} tps in the window" if tps else "pgbench: no progress lines") + \
            (f"; last checkpoint: {ck[-1].split('checkpoint complete: ')[-1]}" if ck else "")

    def stop_load(self):
        stop_process(self.load, signal.SIGINT)

    def stop(self):
        if not os.path.exists(os.path.join(self.data, "postmaster.pid")):
            return
        for mode in ("fast", "immediate"):
            p = run(as_user("postgres", [f"{self.bin}/pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop"]),
                    check=False, env=self.env, cwd=self.disk.dir)
            if p.returncode == 0:
                return
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            os.kill(int(f.readline()), signal.SIGKILL)

    def classify(self, rel):
        parts = rel.split("/")
        sub = parts[1] if len(parts) > 2 else rel
        if sub == "pg_wal":
            return "pg_wal (WAL)"
        if sub in ("base", "global"):
            return "base (tables, indexes)"
        if sub in ("pg_xact", "pg_multixact", "pg_subtrans", "pg_commit_ts"):
            return "pg_xact (commit log)"
        return "other pg files"


class MariaDB(Engine):
    name = "mariadb"
    tools = ["mariadbd", "mariadb-install-db", "mariadb"]

    def check(self):
        super().check()
        try:
            pwd.getpwnam("mysql")
        except KeyError:
            raise Skip("no 'mysql' system user (Debian's mariadb-server package makes it)")
        self.sysbench = shutil.which("sysbench")
        if self.sysbench and not os.path.exists("/usr/share/sysbench/oltp_read_write.lua"):
            self.sysbench = None

    def opts(self):
        return [
            "--no-defaults",
            f"--datadir={self.data}",
            "--innodb-page-size=16k",
            f"--innodb-buffer-pool-size={self.args.my_buffer_pool}",
            "--innodb-flush-method=O_DIRECT",
            "--innodb-flush-log-at-trx-commit=1",
            "--innodb-doublewrite=1",
        ]

    def setup(self):
        self.data = os.path.join(self.disk.mnt, "mysql")
        self.tmp = os.path.join(self.disk.dir, "mysqltmp")
        rundir = os.path.join(self.disk.dir, "mysqlrun")  # socket, pid file, error log: off the traced disk
        self.sock = os.path.join(rundir, "mysqld.sock")
        self.errlog = os.path.join(rundir, "mysqld.err")
        self.pidf = os.path.join(rundir, "mysqld.pid")
        os.mkdir(self.data, 0o750)
        os.mkdir(self.tmp, 0o750)
        os.mkdir(rundir, 0o755)
        open(self.errlog, "w").close()
        for p in (self.data, self.tmp, rundir):
            chown_tree(p, "mysql")
        self.env = user_env(self.disk.dir)
        run(["mariadb-install-db"] + self.opts() + ["--user=mysql", "--auth-root-authentication-method=socket",
                                                    "--skip-test-db"], env=self.env, cwd=self.disk.dir,
            timeout=600)
        self.proc = subprocess.Popen(
            as_user("mysql", ["mariadbd"] + self.opts() + [
                f"--socket={self.sock}", f"--pid-file={self.pidf}", f"--log-error={self.errlog}",
                f"--tmpdir={self.tmp}", "--skip-networking", "--log-bin=binlog", "--server-id=1",
                "--sync-binlog=1", "--binlog-format=ROW", "--max-connections=100"]),
            env=self.env, cwd=self.disk.dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        self.cleanup.push("stop mariadb", self.stop)
        deadline = time.monotonic() + 120
        while run(["mariadb", f"--socket={self.sock}", "-uroot", "-e", "SELECT 1"], check=False).returncode:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mariadbd did not start: {_read(self.errlog)[-2000:]}")
            time.sleep(0.5)
        self.sql("CREATE DATABASE sbtest")
        a = self.args
        if self.sysbench:
            log(f"mariadb: sysbench prepare, {a.my_tables} tables x {a.my_rows} rows")
            run(self.sb_cmd("prepare"), cwd=self.disk.dir, timeout=1800)
        else:
            log("mariadb: sysbench is missing; loading with a SQL loop through the mariadb client")
            self.sql("CREATE TABLE sbtest.t (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60), KEY(k)) "
                     "ENGINE=InnoDB")
            self.sql("INSERT INTO sbtest.t SELECT seq, seq % 1000, REPEAT('c', 120), REPEAT('p', 60) "
                     f"FROM seq_1_to_{a.my_tables * a.my_rows}")
        self.sql("FLUSH BINARY LOGS")

    def sql(self, q):
        return run(["mariadb", f"--socket={self.sock}", "-uroot", "-e", q], cwd=self.disk.dir, timeout=1800)

    def sb_cmd(self, what, seconds=0):
        a = self.args
        c = [self.sysbench, "oltp_read_write", "--db-driver=mysql", f"--mysql-socket={self.sock}",
             "--mysql-user=root", "--mysql-db=sbtest", f"--tables={a.my_tables}", f"--table-size={a.my_rows}",
             f"--threads={a.clients}"]
        if what == "run":
            c += [f"--time={seconds}", "--report-interval=1", "--rand-type=uniform"]
        return c + [what]

    def start_load(self):
        a = self.args
        total = a.warmup + a.seconds + 60
        if self.sysbench:
            cmd = self.sb_cmd("run", total)
        else:
            n = a.my_tables * a.my_rows
            loop = ("SET @i = 0; " + " ".join(
                f"START TRANSACTION; SELECT c FROM sbtest.t WHERE id = FLOOR(1 + RAND() * {n}); "
                f"UPDATE sbtest.t SET k = k + 1 WHERE id = FLOOR(1 + RAND() * {n}); COMMIT;" for _ in range(100)))
            script = f"end=$(( $(date +%s) + {total} )); while [ $(date +%s) -lt $end ]; do " \
                     f"mariadb --socket={self.sock} -uroot -e \"{loop}\" || exit 1; done"
            cmd = ["bash", "-c", " & ".join([script] * a.clients) + "; wait"]
        self.load = subprocess.Popen(cmd, cwd=self.disk.dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True)
        self.cleanup.push("stop the mariadb load", lambda: self.stop_load())
        self.reader = LineReader(self.load.stdout)
        self.reader.start()

    def wait_window(self):
        time.sleep(self.args.warmup)
        if self.load.poll() is not None:
            raise RuntimeError(f"the load stopped: {self.reader.text()}")
        return f"after {self.args.warmup} s of load"

    def window_info(self, t0, t1):
        a = self.args
        if not self.sysbench:
            return f"SQL loop (sysbench missing), {a.clients} clients"
        tps = tps_in(self.reader.lines, t0, t1, r"tps: ([\d.]+)")
        return (f"sysbench oltp_read_write {a.clients} threads, {a.my_tables} x {a.my_rows} rows: "
                + (f"{tps:.0f} tps in the window" if tps else "no progress lines"))

    def stop_load(self):
        if self.load is not None and self.load.poll() is None:
            try:
                os.killpg(self.load.pid, signal.SIGTERM)  # its own session: sysbench, or bash and its clients
            except ProcessLookupError:
                pass
            stop_process(self.load, signal.SIGKILL, 10)

    def stop(self):
        if self.proc.poll() is None:
            run(["mariadb-admin", f"--socket={self.sock}", "-uroot", "shutdown"], check=False, timeout=120)
            stop_process(self.proc, signal.SIGTERM, 60)

    def classify(self, rel):
        base = os.path.basename(rel)
        if base.startswith("ib_logfile"):
            return "ib_logfile (redo)"
        if base.startswith("ibdata"):
            return "ibdata1 (doublewrite, system)"
        if base.startswith("undo"):
            return "undo tablespaces"
        if base.startswith("binlog."):
            return "binlog"
        if base.endswith(".ibd"):
            return ".ibd (tables, indexes)"
        if base.startswith("aria_log") or base.endswith((".MAI", ".MAD")):
            return "aria (system tables)"
        return "other mariadb files"


class Etcd(Engine):
    name = "etcd"
    tools = ["etcd"]

    def check(self):
        super().check()
        try:
            pwd.getpwnam("etcd")
            self.user = "etcd"
        except KeyError:
            self.user = "nobody"

    def setup(self):
        self.data = os.path.join(self.disk.mnt, "etcd")
        os.mkdir(self.data, 0o700)
        chown_tree(self.data, self.user)
        self.cport, self.pport = free_port(), free_port()
        while self.pport == self.cport:
            self.pport = free_port()
        c, p = f"http://127.0.0.1:{self.cport}", f"http://127.0.0.1:{self.pport}"
        self.errlog = os.path.join(self.disk.dir, "etcd.log")
        self.logfh = open(self.errlog, "w")
        self.proc = subprocess.Popen(
            as_user(self.user, ["etcd", "--name", "dbengines", "--data-dir", self.data,
                                "--listen-client-urls", c, "--advertise-client-urls", c,
                                "--listen-peer-urls", p, "--initial-advertise-peer-urls", p,
                                "--initial-cluster", f"dbengines={p}", "--initial-cluster-state", "new"]),
            env=user_env(self.disk.dir), cwd=self.disk.dir, stdout=self.logfh, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.cleanup.push("stop etcd", self.stop)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.put(http.client.HTTPConnection("127.0.0.1", self.cport, timeout=5), b"dbengines/start", b"1")
                break
            except (OSError, RuntimeError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"etcd did not start: {_read(self.errlog)[-2000:]}")
                time.sleep(0.3)
        # The keys exist before the window: the load updates them.
        conn = http.client.HTTPConnection("127.0.0.1", self.cport, timeout=10)
        for i in range(self.args.etcd_keys):
            self.put(conn, b"key/%08d" % i, os.urandom(self.args.etcd_value // 2).hex().encode())

    @staticmethod
    def put(conn, key, value):
        body = json.dumps({"key": base64.b64encode(key).decode(), "value": base64.b64encode(value).decode()})
        conn.request("POST", "/v3/kv/put", body, {"Content-Type": "application/json"})
        r = conn.getresponse()
        data = r.read()
        if r.status != 200:
            raise RuntimeError(f"put: HTTP {r.status} {data[:200]!r}")

    def start_load(self):
        self.stop_evt = threading.Event()
        self.puts = []

        def worker(seed):
            import random
            rnd = random.Random(seed)
            conn = http.client.HTTPConnection("127.0.0.1", self.cport, timeout=30)
            value = os.urandom(self.args.etcd_value // 2).hex().encode()
            while not self.stop_evt.is_set():
                try:
                    self.put(conn, b"key/%08d" % rnd.randrange(self.args.etcd_keys), value)
                    self.puts.append(time.monotonic())
                except (OSError, http.client.HTTPException, RuntimeError):
                    if self.stop_evt.is_set():
                        return
                    time.sleep(0.1)
                    conn = http.client.HTTPConnection("127.0.0.1", self.cport, timeout=30)

        self.threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(self.args.clients)]
        for t in self.threads:
            t.start()
        self.cleanup.push("stop the etcd load", self.stop_load)

    def wait_window(self):
        time.sleep(self.args.warmup)
        return f"after {self.args.warmup} s of load"

    def window_info(self, t0, t1):
        n = sum(1 for t in list(self.puts) if t0 <= t <= t1)
        return (f"{self.args.clients} threads putting {self.args.etcd_value}-byte values to "
                f"{self.args.etcd_keys} keys: {n / (t1 - t0):.0f} puts/s in the window")

    def stop_load(self):
        self.stop_evt.set()
        for t in self.threads:
            t.join(35)

    def stop(self):
        stop_process(self.proc, signal.SIGTERM, 30)
        self.logfh.close()

    def classify(self, rel):
        if "/wal/" in rel:
            return "member/wal (WAL)"
        if rel.endswith("/snap/db"):
            return "member/snap/db (bbolt)"
        if "/snap/" in rel:
            return "member/snap (snapshots)"
        return "other etcd files"


def db_bench_rates(lines, t0, t1):
    """{thread id: ops/s} from db_bench's --stats_interval_seconds lines that arrived in the window.

    A line "... thread 0: (1000,52000) ops and (990.1,1010.3) ops/second in (1.01,51.47) seconds" gives
    the thread's total ops and seconds; the rate is the difference between its first and last line in
    the window (a slow thread reports only every 1000 ops or so: its lines are sparse)."""
    pts = collections.defaultdict(list)
    for t, l in lines:
        if t0 - 0.5 <= t <= t1 + 1.0:
            m = DB_BENCH_STATS.search(l)
            if m:
                pts[int(m.group(1))].append((int(m.group(2)), float(m.group(3))))
    out = {}
    for tid, p in pts.items():
        if len(p) >= 2 and p[-1][1] > p[0][1]:
            out[tid] = (p[-1][0] - p[0][0]) / (p[-1][1] - p[0][1])
    return out


DB_BENCH_STATS = re.compile(r"thread (\d+): \(\d+,(\d+)\) ops and \([\d.]+,[\d.]+\) ops/second "
                            r"in \([\d.]+,([\d.]+)\) seconds")


def rocksdb_events(log_lines, w0, w1):
    """Counts of RocksDB's EVENT_LOG_v1 events (flush_finished, compaction_finished, table_file_deletion,
    ...) whose time_micros (wall clock) is within [w0, w1] seconds; "compaction_bytes" sums the
    compactions' total_output_size."""
    n = collections.Counter()
    for l in log_lines:
        i = l.find("EVENT_LOG_v1 ")
        if i < 0:
            continue
        try:
            ev = json.loads(l[i + len("EVENT_LOG_v1 "):])
        except ValueError:
            continue
        if w0 <= ev.get("time_micros", 0) / 1e6 <= w1:
            n[ev.get("event", "?")] += 1
            if ev.get("event") == "compaction_finished":
                n["compaction_bytes"] += ev.get("total_output_size", 0)
    return n


class RocksDB(Engine):
    """db_bench from rocksdb-tools; each load (fillrandom, readwhilewriting) is its own engine name."""
    tools = ["db_bench"]
    packages = "rocksdb-tools"
    extent_interval = 1.0  # WAL and SST files are made and deleted within the window: map them as it runs
    bench = "?"
    sync = 0
    write_buffer = 64 << 20

    def common(self):
        """The options both loads state, RocksDB's defaults unless said."""
        a = self.args
        return [f"--db={self.data}", f"--num={a.rocksdb_num}", "--key_size=16", f"--value_size={a.rocksdb_value}",
                "--compression_type=none", "--block_size=4096", "--cache_size=8388608", "--bloom_bits=10",
                "--max_background_jobs=2", "--max_write_buffer_number=2", "--level0_file_num_compaction_trigger=4",
                "--target_file_size_base=67108864", "--max_bytes_for_level_base=268435456",
                "--level_compaction_dynamic_level_bytes=false", "--use_direct_reads=false",
                "--use_direct_io_for_flush_and_compaction=false", "--bytes_per_sync=0", "--wal_bytes_per_sync=0",
                "--seed=1", "--stats_interval_seconds=1"]

    def setup(self):
        self.data = os.path.join(self.disk.mnt, "rocksdb")
        os.mkdir(self.data)
        self.prepare()

    def prepare(self):
        pass

    def load_cmd(self, seconds):
        return ["db_bench", f"--benchmarks={self.bench}"] + self.common() + self.load_opts() + [
            f"--sync={self.sync}", f"--write_buffer_size={self.write_buffer}", f"--duration={seconds}"]

    def start_load(self):
        a = self.args
        self.cmd = self.load_cmd(a.warmup + a.seconds + 120)  # stopped at the window's end
        log(f"{self.name}: " + " ".join(self.cmd))
        self.load = subprocess.Popen(self.cmd, cwd=self.disk.dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True)
        self.cleanup.push("stop db_bench", self.stop_load)
        self.reader = LineReader(self.load.stdout)
        self.reader.start()

    def wait_window(self):
        time.sleep(self.args.warmup)
        if self.load.poll() is not None:
            raise RuntimeError(f"db_bench stopped: {self.reader.text()}")
        return f"after {self.args.warmup} s of load"

    def window_events(self, t0, t1):
        wall = time.time() - time.monotonic()
        try:
            with open(os.path.join(self.data, "LOG"), errors="replace") as f:
                ev = rocksdb_events(f, t0 + wall, t1 + wall)
        except OSError:
            return "no LOG"
        return (f"{ev['flush_finished']} memtable flushes, {ev['compaction_finished']} compactions "
                f"({ev['compaction_bytes'] / 2**20:.0f} MiB written), {ev['table_file_deletion']} SST files "
                f"deleted in the window (RocksDB's LOG)")

    def stop_load(self):
        if self.load is not None and self.load.poll() is None:
            try:
                os.killpg(self.load.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            stop_process(self.load, signal.SIGKILL, 10)

    def stop(self):
        pass

    def classify(self, rel):
        base = os.path.basename(rel)
        if base.endswith(".log") and base[:-4].isdigit():
            return "*.log (WAL)"
        if base.endswith(".sst"):
            return "*.sst (tables)"
        if base.startswith("MANIFEST-"):
            return "MANIFEST"
        if base == "LOG" or base.startswith("LOG.old"):
            return "LOG (info log)"
        return "other rocksdb files"


class RocksFill(RocksDB):
    name = "rocksdb-fillrandom"
    bench = "fillrandom"
    sync = 0  # a bulk load: the WAL is written, not synced per write (db_bench's default)
    write_buffer = 64 << 20

    def load_opts(self):
        return ["--threads=1"]

    def window_info(self, t0, t1):
        r = db_bench_rates(self.reader.lines, t0, t1)
        return (f"db_bench fillrandom, 1 thread, --sync=0, {self.args.rocksdb_value}-byte values: "
                + (f"{r[0]:.0f} puts/s in the window" if 0 in r else "no stats lines") + "; "
                + self.window_events(t0, t1))


class RocksReadWrite(RocksDB):
    name = "rocksdb-readwhilewriting"
    bench = "readwhilewriting"
    sync = 1  # every put's WAL write is synced (fdatasync) before it returns: durable, as a DBA expects
    write_buffer = 128 << 10  # a small memtable: the synced writer is slow, and flushes must happen in 30 s

    def prepare(self):
        a = self.args
        # flush: no WAL left to replay into the load's small memtables when it opens the DB.
        cmd = ["db_bench", "--benchmarks=fillseq,flush,waitforcompaction"] + [
            o for o in self.common() if not o.startswith("--stats_interval_seconds=")] + [
            "--threads=1", "--sync=0", "--write_buffer_size=67108864"]
        log(f"{self.name}: fill (not traced): " + " ".join(cmd))
        run(cmd, cwd=self.disk.dir, timeout=1800)

    def load_opts(self):
        return [f"--threads={self.args.clients}", "--use_existing_db=1"]

    def window_info(self, t0, t1):
        r = db_bench_rates(self.reader.lines, t0, t1)
        reads = sum(v for k, v in r.items() if k != 0)
        return (f"db_bench readwhilewriting, {self.args.clients} reader threads + 1 writer, --sync=1, "
                f"{self.args.rocksdb_num} keys filled: "
                + (f"{r[0]:.0f} puts/s" if 0 in r else "no writer stats") + f", {reads:.0f} gets/s in the window; "
                + self.window_events(t0, t1))


class Redis(Engine):
    """redis-server with the append-only file on the mount, loaded by redis-benchmark SETs."""
    tools = ["redis-server", "redis-benchmark", "redis-cli"]
    packages = "redis-server redis-tools"
    extent_interval = 1.0  # an AOF rewrite makes new files and deletes the old ones
    fsync = "?"

    def check(self):
        super().check()
        try:
            pwd.getpwnam("redis")
            self.user = "redis"
        except KeyError:
            self.user = "nobody"

    def setup(self):
        a = self.args
        self.data = os.path.join(self.disk.mnt, "redis")
        os.mkdir(self.data, 0o750)
        chown_tree(self.data, self.user)
        self.port = free_port()
        self.errlog = os.path.join(self.disk.dir, "redis.log")
        self.logfh = open(self.errlog, "w")
        self.conf = ["--port", str(self.port), "--bind", "127.0.0.1", "--daemonize", "no", "--dir", self.data,
                     "--save", "", "--appendonly", "yes", "--appendfilename", "appendonly.aof",
                     "--appenddirname", "appendonlydir", "--appendfsync", self.fsync,
                     "--no-appendfsync-on-rewrite", "no", "--aof-use-rdb-preamble", "yes",
                     "--aof-rewrite-incremental-fsync", "yes", "--auto-aof-rewrite-percentage", "100",
                     "--auto-aof-rewrite-min-size", "64mb", "--maxmemory", "0"]
        self.proc = subprocess.Popen(as_user(self.user, ["redis-server"] + self.conf), env=user_env(self.disk.dir),
                                     cwd=self.disk.dir, stdout=self.logfh, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.cleanup.push("stop redis", self.stop)
        deadline = time.monotonic() + 60
        while self.cli("PING", check=False).stdout.strip() != "PONG":
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start: {_read(self.errlog)[-2000:]}")
            time.sleep(0.2)
        # The keys exist before the window (the load overwrites them): loaded with everysec (fast), then
        # rewritten into the AOF's base file, then the fsync policy measured.
        self.cli("CONFIG", "SET", "appendfsync", "everysec")
        log(f"{self.name}: preloading {a.redis_keys} keys (not traced)")
        run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(self.port), "-t", "set", "-d", str(a.redis_value),
             "-r", str(a.redis_keys), "-n", str(2 * a.redis_keys), "-c", str(a.redis_clients), "-q"],
            cwd=self.disk.dir, timeout=1800)
        self.cli("BGREWRITEAOF")
        deadline = time.monotonic() + 300
        while True:
            info = self.redis_info()
            if info.get("aof_rewrite_in_progress") == "0" and info.get("aof_rewrite_scheduled") == "0":
                break
            if time.monotonic() > deadline:
                raise RuntimeError("redis: the AOF rewrite after the preload did not end in 300 s")
            time.sleep(0.2)
        self.cli("CONFIG", "SET", "appendfsync", self.fsync)

    def cli(self, *argv, check=True):
        return run(["redis-cli", "-h", "127.0.0.1", "-p", str(self.port)] + list(argv), check=check, timeout=60)

    def redis_info(self):
        return parse_redis_info(self.cli("INFO", "all", check=False).stdout)

    def load_cmd(self):
        a = self.args
        # -n: more than the window can do; the load is stopped at the window's end.
        return ["redis-benchmark", "-h", "127.0.0.1", "-p", str(self.port), "-t", "set", "-d", str(a.redis_value),
                "-r", str(a.redis_keys), "-c", str(a.redis_clients), "-n", "1000000000"]

    def start_load(self):
        self.cmd = self.load_cmd()
        log(f"{self.name}: " + " ".join(self.cmd))
        self.load = subprocess.Popen(self.cmd, cwd=self.disk.dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True)  # text: its \r-ended lines are lines
        self.cleanup.push("stop redis-benchmark", self.stop_load)
        self.reader = LineReader(self.load.stdout)
        self.reader.start()

    def wait_window(self):
        time.sleep(self.args.warmup)
        if self.load.poll() is not None:
            raise RuntimeError(f"redis-benchmark stopped: {self.reader.text()}")
        self.info0 = self.redis_info()
        return f"after {self.args.warmup} s of load"

    def window_info(self, t0, t1):
        a = self.args
        rps = tps_in(self.reader.lines, t0, t1, r"rps=([\d.]+)")
        i0, i1 = self.info0, self.redis_info()

        def delta(k):
            try:
                return int(i1.get(k, 0)) - int(i0.get(k, 0))
            except ValueError:
                return 0
        return (f"redis-benchmark SET {a.redis_value}-byte values, {a.redis_keys} keys, {a.redis_clients} "
                f"clients, appendfsync {self.fsync}: " + (f"{rps:.0f} SETs/s in the window" if rps else
                                                          "no progress lines")
                + f"; {delta('aof_rewrites')} AOF rewrites, {delta('aof_delayed_fsync')} delayed fsyncs "
                  f"(counted from the window's start to the end of the load); AOF now "
                  f"{int(i1.get('aof_current_size', 0)) >> 20} MiB")

    def stop_load(self):
        if self.load is not None and self.load.poll() is None:
            try:
                os.killpg(self.load.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            stop_process(self.load, signal.SIGKILL, 10)

    def stop(self):
        stop_process(self.proc, signal.SIGTERM, 60)
        self.logfh.close()

    def classify(self, rel):
        base = os.path.basename(rel)
        if base.endswith(".incr.aof"):
            return "AOF incr (appends)"
        if ".base." in base:
            return "AOF base (rewritten)"
        if base.endswith(".manifest"):
            return "AOF manifest"
        if base.startswith("temp-"):
            return "AOF rewrite temp file"
        if base.endswith(".rdb"):
            return "RDB snapshot"
        return "other redis files"


def parse_redis_info(text):
    """INFO's "field:value" lines as a dict."""
    out = {}
    for l in text.splitlines():
        if ":" in l and not l.startswith("#"):
            k, v = l.split(":", 1)
            out[k.strip()] = v.strip()
    return out


class RedisAlways(Redis):
    name = "redis-always"
    fsync = "always"


class RedisEverysec(Redis):
    name = "redis-everysec"
    fsync = "everysec"


# One worker process of the SQLite load (run as python3 -c SQLITE_WORKER PATH SEED ROWS SECONDS SYNC CACHE).
SQLITE_WORKER = r'''
import random, sqlite3, sys, time
path, seed, rows, seconds, sync, cache = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), \
    sys.argv[5], int(sys.argv[6])
with open("/proc/self/comm", "w") as f:
    f.write("sqlite-load")  # the name its I/O has in the trace
db = sqlite3.connect(path, timeout=60, isolation_level=None)
for p in ("journal_mode=WAL", f"synchronous={sync}", f"cache_size={cache}", "wal_autocheckpoint=1000",
          "mmap_size=0"):
    db.execute("PRAGMA " + p).fetchall()
rnd = random.Random(seed)
end = time.monotonic() + seconds
last, n = time.monotonic(), 0
while time.monotonic() < end:
    for _ in range(4):  # reads outside the write transaction: WAL readers do not wait for the writer
        db.execute("SELECT n, val FROM kv WHERE id = ?", (rnd.randrange(rows),)).fetchall()
    db.execute("BEGIN IMMEDIATE")
    db.execute("UPDATE kv SET n = n + 1, val = ? WHERE id = ?", (rnd.randbytes(200), rnd.randrange(rows)))
    db.execute("INSERT OR REPLACE INTO kv (id, n, val) VALUES (?, 0, ?)",
               (rnd.randrange(2 * rows), rnd.randbytes(200)))
    db.execute("COMMIT")
    n += 1
    now = time.monotonic()
    if now - last >= 1.0:
        print(f"tps: {n / (now - last):.1f}", flush=True)
        last, n = now, 0
'''


class SQLite(Engine):
    """SQLite in WAL mode through Python's sqlite3, several worker processes on one database file."""
    name = "sqlite"

    def check(self):
        try:
            import sqlite3  # noqa: F401
        except ImportError as e:
            raise Skip(f"python3's sqlite3 module is missing ({e}; Debian: libpython3-stdlib)")

    def setup(self):
        import sqlite3
        a = self.args
        self.dir = os.path.join(self.disk.mnt, "sqlite")
        os.mkdir(self.dir)
        self.path = os.path.join(self.dir, "main.db")
        log(f"sqlite: {a.sqlite_rows} rows of about 220 bytes (not traced)")
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            for p in ("page_size=4096", "journal_mode=WAL", f"synchronous={a.sqlite_sync}"):
                db.execute("PRAGMA " + p).fetchall()
            db.execute("CREATE TABLE kv (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, val BLOB NOT NULL)")
            db.execute("BEGIN")
            db.execute("WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < ?) "
                       "INSERT INTO kv SELECT x, 0, randomblob(200) FROM c", (a.sqlite_rows - 1,))
            db.execute("COMMIT")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            db.close()
        self.db_mb = os.path.getsize(self.path) >> 20

    def start_load(self):
        a = self.args
        total = a.warmup + a.seconds + 120  # stopped at the window's end
        self.procs, self.readers = [], []
        for i in range(a.sqlite_procs):
            p = subprocess.Popen([sys.executable, "-c", SQLITE_WORKER, self.path, str(i + 1), str(a.sqlite_rows),
                                  str(total), a.sqlite_sync, "-2000"], cwd=self.disk.dir, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, start_new_session=True)
            self.procs.append(p)
            r = LineReader(p.stdout)
            r.start()
            self.readers.append(r)
        self.cleanup.push("stop the sqlite load", self.stop_load)

    def wait_window(self):
        time.sleep(self.args.warmup)
        for p, r in zip(self.procs, self.readers):
            if p.poll() is not None:
                raise RuntimeError(f"a sqlite worker stopped: {r.text()}")
        return f"after {self.args.warmup} s of load"

    def window_info(self, t0, t1):
        a = self.args
        rates = [tps_in(r.lines, t0, t1, r"tps: ([\d.]+)") for r in self.readers]
        tps = sum(x for x in rates if x)
        return (f"{a.sqlite_procs} processes, each transaction 4 point reads then BEGIN IMMEDIATE, 1 UPDATE, "
                f"1 INSERT OR REPLACE, COMMIT; {a.sqlite_rows} rows ({self.db_mb} MiB), journal_mode=WAL, "
                f"synchronous={a.sqlite_sync}, cache_size=-2000, wal_autocheckpoint=1000: "
                f"{tps:.0f} transactions/s ({4 * tps:.0f} reads/s) in the window")

    def stop_load(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            stop_process(p, signal.SIGKILL, 10)

    def stop(self):
        pass

    def classify(self, rel):
        base = os.path.basename(rel)
        if base.endswith("-wal"):
            return "main.db-wal (WAL)"
        if base.endswith("-shm"):
            return "main.db-shm (wal-index)"
        if base.endswith(".db"):
            return "main.db (database)"
        return "other sqlite files"


ENGINE_CLASSES = {c.name: c for c in (Postgres, MariaDB, Etcd, RocksFill, RocksReadWrite, RedisAlways,
                                      RedisEverysec, SQLite)}


class Iosim(Engine):
    """iosim's profile for an engine, traced the same way."""

    def __init__(self, args, cleanup, disk, engine):
        super().__init__(args, cleanup, disk)
        self.engine = engine
        self.profile = args.profile or PROFILES.get(engine)
        self.name = f"iosim {self.profile}"

    def check(self):
        if not self.profile:
            raise Skip(f"profile not found: iosim has no profile for {self.engine} yet (name one with --profile)")
        if not (os.path.isfile(self.args.iosim) and os.access(self.args.iosim, os.X_OK)):
            raise Skip(f"--iosim {self.args.iosim} is not an executable file")
        p = run([self.args.iosim, "profile", "show", self.profile], check=False)
        if p.returncode != 0:
            raise Skip(f"profile not found: iosim has no profile '{self.profile}' yet "
                       f"(iosim profile show says: {p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.returncode})")
        self.toml = p.stdout
        self.targets = self.target_names(self.toml)
        if not self.targets:
            raise Skip(f"profile '{self.profile}' names no target")

    @staticmethod
    def target_names(text):
        """Distinct target names in order of first appearance (as iosim binds paths)."""
        try:
            import tomllib
            doc = tomllib.loads(text)
            names = [w.get("target") for w in doc.get("workload", [])]
        except Exception:
            names = re.findall(r'^\s*target\s*=\s*"([^"]+)"', text, re.M)
        out = []
        for n in names:
            if n and n not in out:
                out.append(n)
        return out

    def setup(self):
        self.dir = os.path.join(self.disk.mnt, "iosim")
        os.mkdir(self.dir)
        self.paths = [os.path.join(self.dir, f"{t}.dat") for t in self.targets]
        for p in self.paths:
            run([self.args.iosim, "create", p, "--size", self.args.iosim_size, "-q"], timeout=1800)

    def start_load(self):
        pass

    def wait_window(self):
        return f"targets {', '.join(f'{t}={os.path.basename(p)}' for t, p in zip(self.targets, self.paths))}"

    def run_window(self):
        cmd = [self.args.iosim, "run", "--profile", self.profile] + self.paths + [
            "--size", self.args.iosim_size, "--duration", f"{self.args.seconds}s", "--no-save"]
        if self.args.db_cache:
            cmd += ["--db-cache", self.args.db_cache]
        if self.args.commit_rate:
            cmd += ["--commit-rate", self.args.commit_rate]
        if self.args.iosim_clients:
            cmd += ["--clients", str(self.args.iosim_clients)]
        log("iosim: " + " ".join(cmd))
        self.load = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.cleanup.push("stop iosim", lambda: stop_process(self.load, signal.SIGINT))
        out, _ = self.load.communicate()
        self.output = out
        if self.load.returncode != 0:
            raise RuntimeError(f"iosim run exited {self.load.returncode}: {out[-2000:]}")

    def window_info(self, t0, t1):
        cache = f" --db-cache {self.args.db_cache}" if self.args.db_cache else ""
        if self.args.commit_rate:
            cache += f" --commit-rate {self.args.commit_rate}"
        if self.args.iosim_clients:
            cache += f" --clients {self.args.iosim_clients}"
        return f"iosim run --profile {self.profile} --size {self.args.iosim_size} --duration {self.args.seconds}s{cache}"

    def stop_load(self):
        stop_process(self.load, signal.SIGINT)

    def stop(self):
        pass

    def classify(self, rel):
        base = os.path.basename(rel)
        if base.endswith(".dat") and rel.startswith("iosim/"):
            return f"iosim target {base[:-4]}"
        return "other iosim files"


# --------------------------------------------------------------------------
# One measurement.


def measure(args, make_engine, label):
    """Fresh file system, engine setup, traced window; returns the pattern (dict)."""
    cleanup = Cleanup()
    try:
        eng = make_engine(cleanup, None)
        eng.check()  # before making anything: a missing package skips cheaply
        disk = eng.disk = Disk(cleanup, args.tmpdir, args.image_size)
        log(f"{label}: {disk.dev} ({disk.image}) ext4 on {disk.mnt}")
        journal = disk.journal_extents()  # debugfs reads the device: on the idle file system, untraced
        eng.setup()
        eng.start_load()
        when = eng.wait_window()
        drop_caches()
        trace_path = os.path.join(disk.dir, "trace.txt")
        tracer = Tracer(cleanup, disk, trace_path, args.tracer)
        tracer.start()
        t0 = time.monotonic()
        log(f"{label}: tracing {disk.dev} with {tracer.method} ({when})")
        snaps = None
        if getattr(eng, "extent_interval", 0):
            snaps = ExtentSnapshots(disk.mnt, eng.classify, journal, eng.extent_interval)
            snaps.start()
            cleanup.push("stop the file maps", snaps.stop)
        if isinstance(eng, Iosim):
            eng.run_window()
        else:
            time.sleep(args.seconds)
        if snaps:
            snaps.stop()
        seconds = tracer.stop()
        t1 = time.monotonic()
        info = eng.window_info(t0, t1)
        extents = ExtentMap.build(disk.mnt, eng.classify, journal)
        history = None
        if snaps:
            history = ExtentHistory(snaps.maps + [(time.monotonic(), extents)],
                                    0.0 if tracer.clock == "mono" else None, tracer.t0)
        eng.stop_load()
        if args.keep_trace:
            os.makedirs(args.keep_trace, exist_ok=True)
            stem = os.path.join(args.keep_trace, label.replace(" ", "_"))
            shutil.copy(trace_path, stem + ".trace.txt")
            meta = {"seconds": seconds, "device": list(disk.rdev), "extents": extents.to_json()}
            if history:
                meta.update({"snapshots": [[t, m.to_json()] for t, m in history.snapshots],
                             "offset": history.offset, "t0": history.t0})
            with open(stem + ".extents.json", "w") as f:
                json.dump(meta, f)
            n = write_blkparse(read_events(trace_path), stem + ".blkparse.txt", devs={disk.rdev})
            log(f"{label}: kept {stem}.trace.txt, .extents.json and .blkparse.txt ({n} events)")
        log(f"{label}: computing the pattern")
        pat = compute(read_events(trace_path), seconds, history or extents, devs={disk.rdev})
        pat.update({"engine": label, "window": when, "load": info, "tracer": tracer.method,
                    "notes": tracer.notes + (snaps.notes if snaps else []), "device": disk.dev,
                    "kernel": os.uname().release})
        if getattr(eng, "cmd", None):
            pat["command"] = " ".join(eng.cmd)
        if snaps:
            pat["file_maps"] = (f"{len(snaps.maps)} taken during the window (every {eng.extent_interval:g} s, "
                                f"without writeback) and one at its end")
        if getattr(eng, "output", None):
            pat["iosim_output_tail"] = eng.output[-3000:]
        return pat
    finally:
        cleanup.run_all()


def host_notes():
    cpus = os.cpu_count()
    mem = 0
    with open("/proc/meminfo") as f:
        for l in f:
            if l.startswith("MemTotal"):
                mem = int(l.split()[1]) // 1024 // 1024
    return f"{cpus} CPUs, {mem} GiB, kernel {os.uname().release}"


# --------------------------------------------------------------------------
# Self-test: the parser and the maths on a made-up trace (no root needed).

SELF_TEST_TRACE = """\
              dd-18897   [000] d..1. 100.000000:   7,0    Q  WS 1000 + 16 [postgres]
              dd-18897   [000] d..1. 100.000010:   7,0    D  WS 1000 + 16 [postgres]
    jbd2/loop0-8-18480   [001] d..1. 100.000100:   7,0    Q WSM 5000 + 8 [jbd2/loop0-8]
    jbd2/loop0-8-18480   [001] d..1. 100.000101:   7,0    Q WSM 5008 + 8 [jbd2/loop0-8]
    jbd2/loop0-8-18480   [001] d..1. 100.000102:   7,0    M WSM 5008 + 8 [jbd2/loop0-8]
    jbd2/loop0-8-18480   [001] d..1. 100.000110:   7,0    D WSM 5000 + 16 [jbd2/loop0-8]
    jbd2/loop0-8-18480   [001] d..1. 100.000200:   7,0    Q FWFSM 5016 + 8 [jbd2/loop0-8]
    kworker/1:1H-58      [001] d..1. 100.000210:   7,0    D  FN [kworker/1:1H]
    kworker/1:1H-58      [001] d..1. 100.000220:   7,0    D WSM 5016 + 8 [kworker/1:1H]
    kworker/1:1H-58      [001] d..1. 100.000230:   7,0    D  FN [kworker/1:1H]
     ksoftirqd/1-22      [001] d.s1. 100.000300:   7,0    C  FN 0 [0]
              dd-18897   [000] d..1. 100.000400:   7,0    Q  WS 1016 + 16 [postgres]
              dd-18897   [000] d..1. 100.000410:   7,0    D  WS 1016 + 16 [postgres]
              dd-18897   [000] d..1. 100.000500:   7,0    Q  FWS [postgres]
              dd-18897   [000] d..1. 100.000500:   7,0    Q  RA 9000 + 256 [postgres]
              dd-18897   [000] d..1. 100.000500:   8,0    Q  R 9000 + 256 [other-device]
7,0 100 600000 18897 D R 9000 256 [postgres]
7,0 100 700000 18897 Q R 20 24 [postgres]
"""


def self_test():
    events = [e for e in (parse_trace_line(l) for l in SELF_TEST_TRACE.splitlines()) if e]
    assert len(events) == 18, len(events)  # the empty flush's completion too
    assert parse_rwbs("FWFSM") == (True, "W", True, False, True)
    # Completions: with sectors, and an empty flush's (its error code and no sectors).
    c = parse_trace_line("  ksoftirqd/1-22  [001] d.s1.  1586.551054:   7,0    C  FN 0 [0]")
    assert c is not None and c[1:5] == ("C", "FN", 0, 0), c
    c = parse_trace_line("  <idle>-0  [000] d.h1.  1586.5: 7,0    C  WS 1000 + 16 [0]")
    assert c is not None and c[1:5] == ("C", "WS", 1000, 16), c
    assert parse_rwbs("FN") == (True, "N", False, False, False)
    assert parse_rwbs("RA") == (False, "R", False, True, False)
    assert size_bucket(8192) == "8K" and size_bucket(12288) == "other" and size_bucket(2048) == "<4K"
    ext = ExtentMap()
    ext.starts, ext.ends, ext.names = [1000, 5000], [2000, 6000], ["pg_wal (WAL)", "ext4 journal"]
    p = compute(events, 2.0, ext, devs={(7, 0)})
    q, d = p["Q"], p["D"]
    # Q: writes 1000+16, 5000+8, 5008+8, 5016+8 (FUA, preflush), 1016+16; reads 9000+256, 20+24
    assert q["writes"] == 5 and q["reads"] == 2, q
    assert q["flushes"] == 2 and q["fua_writes"] == 1, q  # FWFSM and the empty FWS
    assert abs(q["flushes_per_write"] - 0.4) < 1e-9 and abs(q["fua_per_write"] - 0.2) < 1e-9
    # sequential: 5008 after 5000, 5016 after 5008 (writes); 1016 follows 5016? no -> 2 of 7
    assert abs(q["seq_share"] - 2 / 7) < 1e-9, q["seq_share"]
    assert q["size_mix"]["8K"] == 2 / 7 and q["size_mix"]["4K"] == 3 / 7 and q["size_mix"]["128K"] == 1 / 7
    assert q["size_mix"]["other"] == 1 / 7  # 12K
    assert abs(q["jbd2_share"] - 3 / 7) < 1e-9 and abs(q["journal_area_share"] - 3 / 7) < 1e-9
    assert q["jbd2_flush_share"] == 0.5
    # D: writes 1000+16, 5000+16, 5016+8, 1016+16; read 9000+256; 2 flushes, no FUA
    assert d["writes"] == 4 and d["reads"] == 1 and d["flushes"] == 2 and d["fua_writes"] == 0, d
    assert p["by_file"]["pg_wal (WAL)"]["ios"] == 2 and p["by_process"]["postgres"]["flushes"] == 1
    assert p["by_file"]["pg_wal (WAL)"]["flushes"] == 1 and p["by_file"]["ext4 journal"]["flushes"] == 1
    assert p["by_file"]["ext4 journal"]["seq_share"] == 2 / 3 and events[-1][7] == 18897
    assert judge(0.5, 0.6, "share")[1] == "PASS" and judge(0.5, 0.7, "share")[1] == "FAIL"
    assert judge(0.01, 0.05, "share") == ("+400% (abs)", "PASS")
    assert judge(0.1, 0.2, "share")[1] == "FAIL"
    assert Iosim.target_names('[[workload]]\nname="a"\ntarget="data"\n[[workload]]\nname="b"\ntarget="wal"\n'
                              '[[workload]]\nname="c"\ntarget="data"\n') == ["data", "wal"]
    # The file maps taken during a window: the map before the I/O, then those after it, then older ones.
    def emap(*triples):
        return ExtentMap.from_json(triples)
    hist = ExtentHistory([(10.0, emap((0, 100, "wal 1"))), (11.0, emap((0, 50, "sst 2"), (200, 300, "wal 3"))),
                          (12.0, emap((400, 500, "sst 4")))], offset=0.0)
    assert hist.lookup(10, 10.5) == "wal 1" and hist.lookup(10, 11.5) == "sst 2"  # blocks reused at 11
    assert hist.lookup(250, 10.5) == "wal 3" and hist.lookup(450, 9.0) == "sst 4"  # allocated later
    assert hist.lookup(60, 12.5) == "wal 1" and hist.lookup(600, 11.0) is None
    assert hist.lookup(250, None) is None and hist.lookup(450) == "sst 4"  # no time: the last map
    late = ExtentHistory([(100.0, emap((0, 100, "a"))), (101.0, emap((0, 100, "b")))], offset=None, t0=100.5)
    assert late.lookup(5, 0.0) == "a" and late.offset == 100.5 and late.lookup(5, 0.6) == "b"
    q2 = compute(events, 2.0, ExtentHistory([(0.0, ext)]), devs={(7, 0)})
    assert q2["by_file"] == p["by_file"]
    # The blkparse copy of a kept trace: blkparse's default format, which iosim reads.
    line = blkparse_line(3, 1.5, "Q", "FWFSM", 5016, 8, "jbd2/loop0-8", (7, 0), 18480)
    assert line.split() == ["7,0", "0", "3", "1.500000000", "18480", "Q", "FWFSM", "5016", "+", "8",
                            "[jbd2/loop0-8]"], line
    assert blkparse_line(4, 0.000001, "D", "FN", 0, 0, "kworker/1:1H", (7, 0), 58).split()[3:] == [
        "0.000001000", "58", "D", "FN", "[kworker/1:1H]"]
    # db_bench's per-thread stats lines: total ops over total seconds between the window's first and last.
    lines = [(t, f"2026/12/02-02:11:{t:02d}  ... thread {tid}: ({d},{tot}) ops and (1.0,1.0) ops/second in "
                 f"(1.000000,{sec:.6f}) seconds")
             for t, tid, d, tot, sec in ((5, 0, 10, 100, 1.0), (6, 1, 5, 5000, 2.0), (10, 0, 10, 600, 6.0),
                                         (12, 1, 5, 9000, 4.0), (40, 0, 1, 9999, 30.0))]
    r = db_bench_rates(lines, 5.0, 12.0)
    assert r == {0: 100.0, 1: 2000.0}, r
    log_lines = ['2026/12/02-02:11:30.1 1 EVENT_LOG_v1 {"time_micros": 1000000, "event": "flush_finished"}',
                 'x EVENT_LOG_v1 {"time_micros": 2500000, "event": "compaction_finished", "total_output_size": 7}',
                 'x EVENT_LOG_v1 {"time_micros": 9000000, "event": "flush_finished"}', "not an event",
                 "EVENT_LOG_v1 {"]
    ev = rocksdb_events(log_lines, 1.0, 3.0)
    assert ev["flush_finished"] == 1 and ev["compaction_finished"] == 1 and ev["compaction_bytes"] == 7, ev
    info = parse_redis_info("# Persistence\r\naof_rewrites:3\r\naof_current_size:1048576\r\n\r\n# Stats\r\n")
    assert info == {"aof_rewrites": "3", "aof_current_size": "1048576"}, info
    assert tps_in([(1.0, "SET: rps=100.0 (overall: 90.0) avg_msec=0.5"), (2.0, "SET: rps=300.0 (overall: 1)")],
                  0.0, 2.0, r"rps=([\d.]+)") == 200.0
    # Each engine's files.
    rk, rd, sq = RocksFill.classify, Redis.classify, SQLite.classify
    assert [rk(None, f"rocksdb/{f}") for f in ("000026.log", "000027.sst", "MANIFEST-000005", "LOG", "OPTIONS-7")] \
        == ["*.log (WAL)", "*.sst (tables)", "MANIFEST", "LOG (info log)", "other rocksdb files"]
    assert [rd(None, f"redis/{f}") for f in ("appendonlydir/appendonly.aof.3.incr.aof",
                                             "appendonlydir/appendonly.aof.2.base.rdb",
                                             "appendonlydir/appendonly.aof.manifest", "temp-rewriteaof-bg-77.aof",
                                             "dump.rdb")] == [
        "AOF incr (appends)", "AOF base (rewritten)", "AOF manifest", "AOF rewrite temp file", "RDB snapshot"]
    assert [sq(None, f"sqlite/main.db{x}") for x in ("", "-wal", "-shm")] == [
        "main.db (database)", "main.db-wal (WAL)", "main.db-shm (wal-index)"]
    assert set(ENGINES) == set(ENGINE_CLASSES) and all(n in ENGINES for g in GROUPS.values() for n in g)
    print_pattern("self-test", p, "made-up trace")
    print_comparison("self-test", p, p, "Q")
    print("\nself-test: 1 passed, 0 failed")


# --------------------------------------------------------------------------


def size_arg(s):
    m = re.fullmatch(r"(\d+)([KMGT]?)", s.upper())
    if not m:
        raise argparse.ArgumentTypeError(f"'{s}': a size such as 8G")
    return int(m.group(1)) * 1024 ** " KMGT".index(m.group(2) or " ")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring (head -80 bench/dbengines.py) for what is measured.")
    ap.add_argument("--engine", default="all", choices=ENGINES + list(GROUPS) + ["all"],
                    help="one engine (rocksdb: both rocksdb-* loads; redis: both redis-* fsync policies), "
                         "or all (default)")
    ap.add_argument("--seconds", type=int, default=30, help="the traced window (default 30)")
    ap.add_argument("--warmup", type=int, default=10,
                    help="seconds of load before the window for every engine but postgresql (default 10); "
                         "postgresql waits for a timed checkpoint instead")
    ap.add_argument("--clients", type=int, default=8, help="clients / threads of the load (default 8)")
    ap.add_argument("--pg-scale", type=int, default=20, help="pgbench scale (default 20, about 300 MB)")
    ap.add_argument("--my-tables", type=int, default=8, help="sysbench tables (default 8)")
    ap.add_argument("--my-rows", type=int, default=100000, help="rows per sysbench table (default 100000)")
    ap.add_argument("--my-buffer-pool", default="32M",
                    help="innodb_buffer_pool_size (default 32M; the data is about 250 MB)")
    ap.add_argument("--etcd-keys", type=int, default=10000, help="etcd keys (default 10000)")
    ap.add_argument("--etcd-value", type=int, default=256, help="etcd value bytes (default 256)")
    ap.add_argument("--rocksdb-num", type=int, default=4000000,
                    help="db_bench --num: fillrandom's key range, the keys filled before readwhilewriting "
                         "(default 4000000)")
    ap.add_argument("--rocksdb-value", type=int, default=256, help="db_bench --value_size (default 256)")
    ap.add_argument("--redis-keys", type=int, default=100000, help="redis-benchmark -r: keys (default 100000)")
    ap.add_argument("--redis-value", type=int, default=256, help="redis-benchmark -d: value bytes (default 256)")
    ap.add_argument("--redis-clients", type=int, default=50, help="redis-benchmark -c (default 50)")
    ap.add_argument("--sqlite-rows", type=int, default=1000000, help="rows in the SQLite table (default 1000000)")
    ap.add_argument("--sqlite-procs", type=int, default=4, help="SQLite worker processes (default 4)")
    ap.add_argument("--sqlite-sync", choices=["FULL", "NORMAL"], default="FULL",
                    help="PRAGMA synchronous (default FULL: the WAL is synced at every commit)")
    ap.add_argument("--tmpdir", default="/var/tmp", help="where the temporary directory goes (default /var/tmp)")
    ap.add_argument("--image-size", type=size_arg, default="8G", help="the sparse image's size (default 8G)")
    ap.add_argument("--tracer", choices=["auto", "blktrace", "tracefs"], default="auto")
    ap.add_argument("--iosim", metavar="PATH", help="also run iosim's profile for each engine and compare")
    ap.add_argument("--profile", help="the iosim profile (name or .toml) instead of the engine's default "
                                      "(postgresql-oltp, mysql-oltp, etcd-wal, sqlite-wal, redis-aof-always, redis-aof-everysec, "
                                      "rocksdb-fillrandom, rocksdb-readwhilewriting); with one --engine")
    ap.add_argument("--db-cache", metavar="CACHE/DATA",
                    help="with --iosim: run the profile with iosim's --db-cache (your cache against your data, "
                    "e.g. 128M/250M for --my-buffer-pool 128M), for profiles whose workloads say the cache "
                    "they were measured at")
    ap.add_argument("--commit-rate", metavar="N",
                    help="with --iosim: run the profile with iosim's --commit-rate (the engine's transactions a "
                    "second, e.g. 569 for MariaDB at --my-buffer-pool 128M), for profiles that say the commit "
                    "rate they were measured at")
    ap.add_argument("--iosim-clients", type=int, metavar="N",
                    help="with --iosim: run the profile with iosim's --clients N (the engine's client sessions, "
                    "e.g. 2 for --clients 2), for profiles that say the clients they were measured with")
    ap.add_argument("--iosim-size", default="1G", help="each iosim target file's size (default 1G)")
    ap.add_argument("--level", choices=["q", "d"], default="q",
                    help="the events the verdicts use: q (issued requests, default) or d (dispatched)")
    ap.add_argument("--real", metavar="JSON", help="with --iosim: take the engines' patterns from a --save file")
    ap.add_argument("--save", metavar="JSON", help="write every pattern measured to this file")
    ap.add_argument("--keep-trace", metavar="DIR",
                    help="keep the raw trace text (NAME.trace.txt), the file extents (NAME.extents.json) and the "
                         "trace in blkparse's default format (NAME.blkparse.txt: iosim fingerprint reads it) here")
    ap.add_argument("--reanalyse", metavar="STEM", help="print the pattern of a kept trace (STEM.trace.txt and "
                                                         "STEM.extents.json from --keep-trace) and exit")
    ap.add_argument("--self-test", action="store_true", help="check the parser and the maths, then exit")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return 0
    if args.reanalyse:
        with open(args.reanalyse + ".extents.json") as f:
            meta = json.load(f)
        ext = ExtentMap.from_json(meta["extents"])
        if meta.get("snapshots"):
            ext = ExtentHistory([(t, ExtentMap.from_json(m)) for t, m in meta["snapshots"]], meta.get("offset"),
                                meta.get("t0"))
        pat = compute(read_events(args.reanalyse + ".trace.txt"), meta["seconds"], ext,
                      devs={tuple(meta["device"])})
        print_pattern(os.path.basename(args.reanalyse), pat)
        if args.save:
            with open(args.save, "w") as f:
                json.dump(pat, f, indent=1)
        return 0
    if isinstance(args.image_size, str):
        args.image_size = size_arg(args.image_size)
    engines = ENGINES if args.engine == "all" else GROUPS.get(args.engine, [args.engine])
    if args.profile and len(engines) > 1:
        ap.error("--profile needs one --engine")
    if os.geteuid() != 0:
        print("skipped: bench/dbengines.py needs root (loop devices, mount, block tracing)")
        return 0
    for tool in ("losetup", "mkfs.ext4", "mount", "setpriv", "debugfs"):
        if not shutil.which(tool):
            print(f"skipped: {tool} is not installed")
            return 0
    if args.iosim:
        args.iosim = os.path.abspath(args.iosim)
    signal.signal(signal.SIGTERM, on_sigterm)
    signal.signal(signal.SIGHUP, on_sigterm)
    saved = {}
    if args.real:
        with open(args.real) as f:
            saved = json.load(f)
    results, verdicts, skipped = {}, {}, {}
    print(f"bench/dbengines.py on {host_notes()}; image {args.image_size // 2**30} GiB sparse file in "
          f"{args.tmpdir}, loop device, ext4 (mkfs defaults)")
    try:
        for name in engines:
            if args.real and name in saved:
                real = saved[name]
                log(f"{name}: using the pattern saved in {args.real}")
            else:
                try:
                    real = measure(args, lambda c, d, n=name: ENGINE_CLASSES[n](args, c, d), name)
                except Skip as e:
                    print(f"\n== {name}: skipped: {e}")
                    skipped[name] = str(e)
                    continue
                except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                    log("".join(traceback.format_exception(e)[-4:]))
                    print(f"\n== {name}: failed: {e}")
                    skipped[name] = f"failed: {e}"
                    continue
            results[name] = real
            print_pattern(name, real, real.get("load", ""))
            for n in real.get("notes", []):
                print(f"  note: {n}")
            if args.iosim:
                try:
                    sim = measure(args, lambda c, d, n=name: Iosim(args, c, d, n), f"iosim-{name}")
                except Skip as e:
                    print(f"\n== iosim for {name}: skipped: {e}")
                    skipped[f"iosim-{name}"] = str(e)
                    continue
                except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                    log("".join(traceback.format_exception(e)[-4:]))
                    print(f"\n== iosim for {name}: failed: {e}")
                    skipped[f"iosim-{name}"] = f"failed: {e}"
                    continue
                results[f"iosim-{name}"] = sim
                print_pattern(f"iosim {sim['engine']}", sim, sim.get("load", ""))
                lv = args.level.upper()
                other = "D" if lv == "Q" else "Q"
                print_comparison(name, real, sim, other)  # shown, not the verdict
                verdicts[name] = print_comparison(name, real, sim, lv)
    except KeyboardInterrupt:
        print("\ninterrupted: cleaned up", file=sys.stderr)
        return 130
    finally:
        if args.save and results:
            with open(args.save, "w") as f:
                json.dump(results, f, indent=1)
            log(f"patterns written to {args.save}")
    if verdicts:
        print("\nverdicts (level " + args.level.upper() + "): " +
              ", ".join(f"{k} {'PASS' if v else 'FAIL'}" for k, v in verdicts.items()))
    for k, v in skipped.items():
        print(f"skipped {k}: {v}")
    return 1 if verdicts and not all(verdicts.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
