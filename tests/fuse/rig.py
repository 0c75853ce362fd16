#!/usr/bin/python3
"""A FUSE filesystem with a volatile write cache, for iosim's crash tests.

    rig.py mount BACKING MOUNTPOINT --mode MODE --journal FILE [--cache-writes N] [--seed S]
                 [--zero-first-read NAME:OFFSET:LENGTH[,...]] [--stall-every N --stall-ms MS]
    rig.py report BACKING --journal FILE        (JSON on stdout)

Files live in the directory BACKING (the "disk"). Writes go to an in-memory
cache (the "controller's volatile cache") and reach BACKING when the cache
destages them or when a flush makes them durable. A power loss is simulated by
killing this process with SIGKILL: whatever was still only in the cache is
gone; BACKING survives. Remount on the same BACKING to see what is left.

Modes:
  honest   fsync/fdatasync and writes on a descriptor opened O_DSYNC/O_SYNC
           reach BACKING before they return; other writes sit in the cache
           and destage oldest first when it holds more than N writes.
  lying    flushes return at once without persisting anything (a write-back
           cache without a battery); the cache destages oldest first.
  reorder  as lying, but the cache destages in random order, so later writes
           reach BACKING before earlier ones.
  off      no cache: every write reaches BACKING before it returns.

A new write to exactly the range of a cached write replaces it in the cache
(as a controller's cache coalesces writes to the same blocks).

--zero-first-read NAME:OFFSET:LENGTH (comma-separated for several) is a fault
in the read path: the first read of file NAME that overlaps bytes
[OFFSET, OFFSET+LENGTH) returns zeros there; the data stays in BACKING and
later reads return it (a "z" event in the journal records each).

--stall-every N --stall-ms MS is a stalling device: every Nth read (of any
file) waits MS milliseconds before it is answered, and since the rig serves
one request at a time, everything else waits with it (a "p" event in the
journal records each pause).

Every event is appended to the journal (a file outside BACKING) before the
operation returns, one JSON object a line, with os.write so it survives the
SIGKILL: "w" a write (n, path, offset, length, crc32, head = first 32 bytes in
hex), "f" a flush acknowledged (the write numbers it covered), "s" a write
persisted, "x" a cached write replaced by a newer one, "z" a read returned
zeros (--zero-first-read). `report` reads the
journal and BACKING and prints what was dropped: every write never persisted,
and every range whose newest flushed (acknowledged) write is not what BACKING
holds ("lost"). Which write BACKING holds is found by crc32, so a write
persisted just before the kill but not yet journaled is still seen.

The mount uses FUSE's direct_io option: no page cache in the kernel between
the application and this cache, so O_DIRECT opens work and every read and
write reaches this process.
"""

import errno
import json
import os
import random
import stat
import sys
import threading
import time
import zlib

SYNC_FLAGS = os.O_DSYNC | os.O_SYNC


class Journal:
    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def log(self, **ev):
        os.write(self.fd, (json.dumps(ev, separators=(",", ":")) + "\n").encode())


def make_ops(backing, mode, journal, capacity, seed, zero_reads, stall_every=0, stall_ms=0):
    from fusepy import FuseOSError, Operations

    class Rig(Operations):
        def __init__(self):
            self.mtx = threading.Lock()
            self.n = 0
            self.cache = []  # [n, path, offset, data, flushed]
            self.fhs = {}  # fh -> (path, fd, flags)
            self.next_fh = 1
            self.rng = random.Random(seed)
            self.zero_reads = list(zero_reads)  # [name, offset, length], dropped once fired
            self.reads = 0

        def real(self, path):
            return os.path.join(backing, path.lstrip("/"))

        # -- metadata: passed through to BACKING at once ------------------
        def getattr(self, path, fh=None):
            try:
                st = os.lstat(self.real(path))
            except OSError as e:
                raise FuseOSError(e.errno)
            d = {k: getattr(st, k) for k in ("st_mode", "st_nlink", "st_uid", "st_gid",
                                               "st_size", "st_atime", "st_mtime", "st_ctime",
                                               "st_blocks")}
            end = max((c[2] + len(c[3]) for c in self.cache if c[1] == path), default=0)
            d["st_size"] = max(d["st_size"], end)
            return d

        def readdir(self, path, fh):
            return [".", ".."] + os.listdir(self.real(path))

        def statfs(self, path):
            s = os.statvfs(self.real(path))
            return {k: getattr(s, k) for k in ("f_bavail", "f_bfree", "f_blocks", "f_bsize",
                                               "f_favail", "f_ffree", "f_files", "f_flag",
                                               "f_frsize", "f_namemax")}

        def getxattr(self, path, name, position=0):
            try:
                return os.getxattr(self.real(path), name)
            except OSError as e:
                raise FuseOSError(e.errno if e.errno != errno.ENODATA else errno.ENODATA)

        def listxattr(self, path):
            return os.listxattr(self.real(path))

        def setxattr(self, path, name, value, options, position=0):
            os.setxattr(self.real(path), name, value)

        def chmod(self, path, mode):
            os.chmod(self.real(path), mode)

        def utimens(self, path, times=None):
            os.utime(self.real(path), times)

        def unlink(self, path):
            with self.mtx:
                self.cache = [c for c in self.cache if c[1] != path]
                os.unlink(self.real(path))

        def truncate(self, path, length, fh=None):
            with self.mtx:
                self.flush_path(path, persist=True)
                os.truncate(self.real(path), length)

        def create(self, path, mode, fi=None):
            fd = os.open(self.real(path), os.O_RDWR | os.O_CREAT, mode)
            return self.add_fh(path, fd, os.O_RDWR)

        def open(self, path, flags):
            fd = os.open(self.real(path), os.O_RDWR)
            return self.add_fh(path, fd, flags)

        def add_fh(self, path, fd, flags):
            with self.mtx:
                fh = self.next_fh
                self.next_fh += 1
                self.fhs[fh] = (path, fd, flags)
                return fh

        def release(self, path, fh):
            with self.mtx:
                _, fd, _ = self.fhs.pop(fh)
                os.close(fd)

        def flush(self, path, fh):
            return 0  # close() is not a durability point

        # -- data ---------------------------------------------------------
        def read(self, path, size, offset, fh):
            self.reads += 1
            if stall_every and self.reads % stall_every == 0:
                journal.log(ev="p", p=path, o=offset, ms=stall_ms)
                time.sleep(stall_ms / 1000.0)
            with self.mtx:
                fd = self.fhs[fh][1]
                buf = bytearray(os.pread(fd, size, offset))
                for c in self.cache:
                    if c[1] != path:
                        continue
                    a, b = max(offset, c[2]), min(offset + size, c[2] + len(c[3]))
                    if a < b:
                        if len(buf) < b - offset:
                            buf.extend(b"\0" * (b - offset - len(buf)))
                        buf[a - offset:b - offset] = c[3][a - c[2]:b - c[2]]
                for z in list(self.zero_reads):
                    a, b = max(offset, z[1]), min(offset + len(buf), z[1] + z[2])
                    if path.lstrip("/") == z[0] and a < b:
                        buf[a - offset:b - offset] = bytes(b - a)
                        self.zero_reads.remove(z)
                        journal.log(ev="z", p=path, o=a, l=b - a)
                return bytes(buf)

        def write(self, path, data, offset, fh):
            with self.mtx:
                path_, fd, flags = self.fhs[fh]
                self.n += 1
                n = self.n
                data = bytes(data)
                journal.log(ev="w", n=n, p=path, o=offset, l=len(data),
                            c=zlib.crc32(data), h=data[:32].hex())
                if mode == "off":
                    self.persist([n, path, offset, data, False])
                    return len(data)
                for c in self.cache:
                    if c[1] == path and c[2] == offset and len(c[3]) == len(data):
                        journal.log(ev="x", n=c[0], by=n)
                self.cache = [c for c in self.cache
                              if not (c[1] == path and c[2] == offset and len(c[3]) == len(data))]
                entry = [n, path, offset, data, False]
                self.cache.append(entry)
                if flags & SYNC_FLAGS:
                    self.flush_entries([entry])
                self.destage()
                return len(data)

        def fsync(self, path, datasync, fh):
            with self.mtx:
                self.flush_path(path, persist=(mode == "honest"))
                return 0

        # -- the cache ----------------------------------------------------
        def flush_path(self, path, persist):
            self.flush_entries([c for c in self.cache if c[1] == path], persist)

        def flush_entries(self, entries, persist=None):
            if persist is None:
                persist = mode == "honest"
            if persist:
                for c in entries:
                    self.persist(c)
                    self.cache.remove(c)
            for c in entries:
                c[4] = True
            journal.log(ev="f", ns=[c[0] for c in entries], persisted=persist)

        def destage(self):
            while len(self.cache) > capacity:
                i = self.rng.randrange(len(self.cache)) if mode == "reorder" else 0
                self.persist(self.cache.pop(i))

        def persist(self, c):
            fd = os.open(self.real(c[1]), os.O_WRONLY)
            try:
                os.pwrite(fd, c[3], c[2])
            finally:
                os.close(fd)
            journal.log(ev="s", n=c[0])

    return Rig()


def cmd_mount(args):
    from fusepy import FUSE
    backing, mnt = args[0], args[1]
    opts = dict(zip(args[2::2], args[3::2]))
    mode = opts.get("--mode", "honest")
    if mode not in ("honest", "lying", "reorder", "off"):
        sys.exit("rig.py: --mode is honest, lying, reorder or off")
    zero_reads = []
    for z in filter(None, opts.get("--zero-first-read", "").split(",")):
        name, off, length = z.rsplit(":", 2)
        zero_reads.append([name.lstrip("/"), int(off), int(length)])
    journal = Journal(opts["--journal"])
    journal.log(ev="mount", mode=mode, pid=os.getpid())
    ops = make_ops(os.path.abspath(backing), mode, journal,
                   int(opts.get("--cache-writes", "64")), int(opts.get("--seed", "1")),
                   zero_reads, int(opts.get("--stall-every", "0")),
                   int(opts.get("--stall-ms", "0")))
    # hard_remove: unlinking a file that is still open removes it (libfuse
    # would otherwise rename it to .fuse_hidden*, which this rig does not do).
    FUSE(ops, mnt, foreground=True, nothreads=True, direct_io=True, hard_remove=True,
         fsname="iosimrig")


def cmd_report(args):
    backing = args[0]
    opts = dict(zip(args[1::2], args[2::2]))
    writes, persisted, superseded, flushed = {}, set(), set(), set()
    with open(opts["--journal"], "rb") as f:
        for line in f:
            try:
                ev = json.loads(line)
            except ValueError:
                continue  # a line cut by the kill
            k = ev.get("ev")
            if k == "w":
                writes[ev["n"]] = ev
            elif k == "s":
                persisted.add(ev["n"])
            elif k == "x":
                superseded.add(ev["n"])
            elif k == "f":
                flushed.update(ev["ns"])
    ranges = {}
    for n, w in sorted(writes.items()):
        ranges.setdefault((w["p"], w["o"], w["l"]), []).append(w)
    out_ranges, dropped, lost = [], [], []
    for (p, o, l), ws in sorted(ranges.items()):
        with open(os.path.join(backing, p.lstrip("/")), "rb") as f:
            f.seek(o)
            crc = zlib.crc32(f.read(l))
        present = max((w["n"] for w in ws if w["c"] == crc), default=0)
        pw = next((w for w in ws if w["n"] == present), None)
        fl = max((w["n"] for w in ws if w["n"] in flushed), default=0)
        fw = next((w for w in ws if w["n"] == fl), None)
        r = {"path": p, "offset": o, "length": l, "present": present,
             "present_head": pw["h"] if pw else None,
             "newest_flushed": fl, "newest_flushed_head": fw["h"] if fw else None,
             "writes": len(ws)}
        out_ranges.append(r)
        if fl > present:
            lost.append(r)
        for w in ws:
            if w["n"] not in persisted and w["n"] not in superseded and w["n"] != present:
                dropped.append({"n": w["n"], "path": p, "offset": o, "length": l,
                                "flushed": w["n"] in flushed, "head": w["h"]})
    json.dump({"writes": len(writes), "dropped": dropped, "lost": lost,
               "ranges": out_ranges}, sys.stdout)
    sys.stdout.write("\n")


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("mount", "report"):
        sys.exit(__doc__)
    {"mount": cmd_mount, "report": cmd_report}[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
