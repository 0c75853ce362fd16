//! `iosim fsync`: the question `pg_test_fsync` answers (how fast can this
//! file system make a log write durable, and by which call), with iosim's
//! statistics and a recommendation for the databases' settings.
//!
//! The tests are pg_test_fsync's, in its order, so the two can be run side
//! by side (`bench/pg_test_fsync.py`):
//!
//! 1. each sync method with one WAL-sized write per operation (8 KiB by
//!    default, `--bs`), then with two;
//! 2. `open_sync` with 16 KiB written as 1, 2, 4, 8 or 16 writes;
//! 3. whether an fsync on a descriptor that did not write is honoured;
//! 4. writes that are not synced, for comparison.
//!
//! Every test but (3) is an ordinary iosim workload run through the runner
//! (the `sync` engine: one `pwrite`, then `fdatasync`/`fsync` or an
//! `O_DSYNC`/`O_SYNC` descriptor, as pg_test_fsync does), so each has the
//! run's full result: latency percentiles of writes and flushes, the
//! device's counters and the self-checks. Like pg_test_fsync, an operation
//! rewrites the same place (offset 0, and 8 KiB for its second write), and
//! the `open_*` methods open the file with `O_DIRECT` where the file system
//! allows it. Test (3) opens and closes the file around each operation,
//! which no engine does: it calls the platform's positional I/O directly.

pub mod advice;
mod render;
mod result;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

pub use render::{csv, text};
pub use result::{kb, Advice, FsyncResult, FsyncTest, Section};

use crate::clock::now_ns;
use crate::runner::{RunOptions, RunResult};
use crate::stats::DirStats;
use crate::workload::{
    CacheMode, EngineKind, Flush, FlushKind, RwMode, SyncMethod, TargetSpec, WorkloadSpec,
};

/// Size of the test file: one WAL segment, as pg_test_fsync writes.
pub const FILE_SIZE: u64 = 16 << 20;

/// The shortest time per test: one flush on a slow disk takes tens of
/// milliseconds, so a shorter test can end before its first operation does
/// and print zeros.
pub const MIN_SECS_PER_TEST: Duration = Duration::from_millis(100);

/// Why `iosim fsync` cannot run as asked.
#[derive(Debug, thiserror::Error)]
pub enum FsyncError {
    /// The time per test is too short to time one operation.
    #[error("-s/--duration {given}: each test must last at least {min} to time even one flushed write (a flush on a disk takes up to tens of milliseconds); give e.g. -s 1s (pg_test_fsync's default is 5s)", given = format!("{:?}", .0), min = format!("{MIN_SECS_PER_TEST:?}"))]
    TooShort(Duration),
}

/// Settings of `iosim fsync`.
#[derive(Clone, Debug)]
pub struct FsyncConfig {
    /// The test file (created, 16 MiB, and removed at the end unless kept).
    pub path: PathBuf,
    /// WAL write sizes to test the methods with (8 KiB: PostgreSQL's XLOG_BLCKSZ).
    pub sizes: Vec<u64>,
    /// Time per test (pg_test_fsync's `--secs-per-test`).
    pub duration: Duration,
    /// Allow the test file to be one iosim did not create.
    pub allow_destroy: bool,
}

/// Runs every test.
pub fn run(cfg: &FsyncConfig, opts: &RunOptions) -> anyhow::Result<FsyncResult> {
    if cfg.duration < MIN_SECS_PER_TEST {
        anyhow::bail!(FsyncError::TooShort(cfg.duration));
    }
    if cfg.sizes.is_empty() {
        anyhow::bail!(crate::Error::BadWorkload(
            "--bs needs at least one size, e.g. --bs 8K".into()
        ));
    }
    for &bs in &cfg.sizes {
        if bs == 0 || bs > FILE_SIZE / 2 {
            anyhow::bail!(crate::Error::BadWorkload(format!(
                "--bs {bs}: give a write size from 1 byte to 8M (two writes must fit the 16 MiB test file)"
            )));
        }
    }
    let progress = opts.progress;
    let opts = RunOptions {
        // One line per test on stderr instead of a progress bar per test.
        progress: false,
        ..opts.clone()
    };
    let mut notes = Vec::new();
    let direct = prepare(cfg, &opts, &mut notes)?;
    // The one resolver `iosim run`'s self-checks use: tmpfs, a loop device over it, a RAM disk.
    let memory_backed = crate::sysmon::mounts::resolve_target(&cfg.path).memory_backed();
    let mut tests = Vec::new();
    let stopped = || opts.stop.load(Ordering::Relaxed);
    let say = |name: &str| {
        if progress {
            crate::say!("iosim fsync: {}", name.trim());
        }
    };
    for &bs in &cfg.sizes {
        for writes in [1u32, 2] {
            for m in SyncMethod::ALL {
                if stopped() {
                    break;
                }
                say(&format!("{m}, {writes} x {} write", kb(bs)));
                tests.push(method_test(cfg, &opts, m, bs, writes, direct)?);
            }
        }
    }
    for (n, size) in [(1u32, 16u64), (2, 8), (4, 4), (8, 2), (16, 1)] {
        if stopped() {
            break;
        }
        let name = format!(
            "{n:>2} * {size:>2}kB open_sync write{}",
            if n > 1 { "s" } else { "" }
        );
        say(&name);
        let mut t = method_test(cfg, &opts, SyncMethod::OpenSync, size << 10, n, direct)?;
        t.section = Section::OpenSyncSizes;
        t.name = name;
        tests.push(t);
    }
    if !stopped() {
        let bs = cfg.sizes[0];
        say("fsync on another descriptor");
        tests.extend(descriptor_tests(cfg, &opts, bs)?);
    }
    if !stopped() {
        tests.push(non_sync_test(cfg, &opts, cfg.sizes[0])?);
    }
    if !direct {
        notes.push(format!(
            "the file system of {} refuses O_DIRECT, so the open_datasync and open_sync tests ran through the page cache (pg_test_fsync prints n/a* for them here)",
            cfg.path.display()
        ));
    }
    let mut res = FsyncResult {
        path: cfg.path.display().to_string(),
        secs_per_test: cfg.duration.as_secs_f64(),
        interrupted: stopped(),
        tests,
        advice: Advice::default(),
        notes,
        memory_backed,
    };
    res.advice = advice::advise(&res, cfg.sizes[0]);
    Ok(res)
}

/// Creates the 16 MiB test file (written whole and synced, as
/// pg_test_fsync does) and says whether O_DIRECT works on it.
fn prepare(cfg: &FsyncConfig, opts: &RunOptions, notes: &mut Vec<String>) -> anyhow::Result<bool> {
    let spec = base_spec(cfg, 8192, 1);
    let t = crate::target::prepare(
        &WorkloadSpec {
            cache: CacheMode::Buffered,
            ..spec
        },
        0,
        crate::target::PrepareOptions {
            progress: false,
            stop: Some(&opts.stop),
        },
    )?;
    notes.extend(
        t.notes
            .iter()
            .map(|n| format!("{}: {n}", cfg.path.display())),
    );
    // On stable storage before the first test, as pg_test_fsync's fsync after creating it.
    if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&cfg.path) {
        let _ = f.sync_all();
    }
    Ok(crate::target::direct_io_supported(&cfg.path))
}

/// The workload every test starts from: the test file, one thread at
/// queue depth 1 on the sync engine, writes of `bs` rewriting the first
/// `writes` blocks in turn.
fn base_spec(cfg: &FsyncConfig, bs: u64, writes: u32) -> WorkloadSpec {
    WorkloadSpec {
        targets: vec![TargetSpec {
            length: Some(bs * u64::from(writes)),
            ..TargetSpec::new(cfg.path.clone(), Some(FILE_SIZE))
        }],
        rw: RwMode::Write,
        write_pct: 100,
        bs,
        threads: 1,
        qd: 1,
        duration: cfg.duration,
        engine: EngineKind::Sync,
        cache: CacheMode::Buffered,
        allow_destroy: cfg.allow_destroy,
        ..WorkloadSpec::default()
    }
}

/// One sync method with `writes` writes of `bs` per operation.
fn method_test(
    cfg: &FsyncConfig,
    opts: &RunOptions,
    m: SyncMethod,
    bs: u64,
    writes: u32,
    direct: bool,
) -> anyhow::Result<FsyncTest> {
    let mut spec = base_spec(cfg, bs, writes);
    let opens_sync = m.flush().is_none();
    // pg_test_fsync opens the open_* methods with O_DIRECT (open_direct()).
    let wants_direct = opens_sync && direct;
    if opens_sync {
        spec.sync_method = Some(m);
        if wants_direct {
            spec.cache = CacheMode::Direct;
        }
    } else {
        let kind = if m == SyncMethod::Fsync {
            FlushKind::Fsync
        } else {
            FlushKind::Fdatasync
        };
        spec.flush = Some(Flush {
            kind,
            every: writes,
        });
    }
    let name = m.name().to_string();
    let mut t = FsyncTest {
        section: Section::Methods,
        name,
        method: Some(m),
        bs,
        writes_per_op: writes,
        ops_per_sec: 0.0,
        usecs_per_op: 0.0,
        durable_latency: None,
        unavailable: None,
        buffered_fallback: opens_sync && !direct,
        result: None,
    };
    if wants_direct && bs % 512 != 0 {
        t.unavailable = Some(format!(
            "O_DIRECT writes must be whole sectors; {bs} bytes is not a multiple of 512"
        ));
        return Ok(t);
    }
    match crate::runner::run(&spec, opts) {
        Ok(r) => {
            fill_from_run(&mut t, r, writes, !opens_sync);
            Ok(t)
        }
        Err(e) if refused(&e) => {
            t.unavailable = Some(format!("{e:#}"));
            Ok(t)
        }
        Err(e) => Err(e),
    }
}

/// Whether a run's error is the file system refusing what was asked (not a bug, not a full disk).
fn refused(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::raw_os_error)
            .is_some_and(crate::workload::is_refusal)
            || matches!(
                c.downcast_ref::<crate::Error>(),
                Some(crate::Error::DirectUnsupported(_))
            )
    })
}

/// Ops/s and the durable latency from a run's result.
fn fill_from_run(t: &mut FsyncTest, r: RunResult, writes: u32, flushes: bool) {
    let ok = r.errors.count == 0;
    if !ok {
        let why = r.errors.first.first().map_or_else(
            || "I/O errors".to_string(),
            |e| format!("{} failed: {}", e.op, e.message),
        );
        t.unavailable = Some(why);
    }
    let w = &r.total.write;
    t.ops_per_sec = if ok { w.iops / f64::from(writes) } else { 0.0 };
    t.usecs_per_op = if t.ops_per_sec > 0.0 {
        1e6 / t.ops_per_sec
    } else {
        0.0
    };
    t.durable_latency = if flushes {
        r.total.flush.clone()
    } else {
        Some(w.clone())
    };
    t.result = Some(r);
}

/// pg_test_fsync's "Test if fsync on non-write file descriptor is
/// honored": each operation opens the file, writes one block, and either
/// fsyncs and closes (then opens and closes again), or closes, reopens and
/// fsyncs the new descriptor. If the second is as slow as the first, an
/// fsync flushes what another descriptor wrote.
///
/// pg_test_fsync runs the two one after the other; here they take turns,
/// one operation each, for twice the time per test, so whatever else the
/// machine does falls on both alike and the comparison between them (the
/// advice's "an fsync on another descriptor is ignored") is not a busy
/// second against a quiet one. Each test's rate is its operations over the
/// time spent in them.
fn descriptor_tests(
    cfg: &FsyncConfig,
    opts: &RunOptions,
    bs: u64,
) -> anyhow::Result<[FsyncTest; 2]> {
    use crate::platform::fs::{open, write_all_at, OpenHow};
    let how = OpenHow {
        write: true,
        ..OpenHow::default()
    };
    let mut buf = crate::buf::AlignedBuf::new(bs as usize);
    crate::buf::fill_random(buf.as_mut_slice(), 0x5eed);
    let failed = |e: std::io::Error, what: &str| {
        anyhow::anyhow!("{what} of {} failed: {e}", cfg.path.display())
    };
    // [same descriptor, other descriptor]: stats and nanoseconds spent.
    let mut stats = [DirStats::new(), DirStats::new()];
    let mut spent = [0u64; 2];
    let mut unavailable = None;
    let end = now_ns() + 2 * u64::try_from(cfg.duration.as_nanos()).unwrap_or(u64::MAX / 2);
    let mut turn = 0usize;
    while now_ns() < end && !opts.stop.load(Ordering::Relaxed) {
        let other_descriptor = turn == 1;
        let t0 = now_ns();
        let step = || -> anyhow::Result<()> {
            let f = open(&cfg.path, how)?;
            write_all_at(&f, buf.as_slice(), 0).map_err(|e| failed(e, "write"))?;
            if other_descriptor {
                drop(f);
                let g = open(&cfg.path, how)?;
                g.sync_all().map_err(|e| failed(e, "fsync"))?;
            } else {
                f.sync_all().map_err(|e| failed(e, "fsync"))?;
                drop(f);
                drop(open(&cfg.path, how)?);
            }
            Ok(())
        };
        if let Err(e) = step() {
            unavailable = Some(format!("{e:#}"));
            break;
        }
        let took = now_ns() - t0;
        stats[turn].record(took, bs);
        spent[turn] += took;
        turn = 1 - turn;
    }
    let test = |i: usize, name: &str| {
        let d = stats[i].summarize(spent[i] as f64 / 1e9);
        let ops = if unavailable.is_none() { d.iops } else { 0.0 };
        FsyncTest {
            section: Section::Descriptors,
            name: name.into(),
            method: None,
            bs,
            writes_per_op: 1,
            ops_per_sec: ops,
            usecs_per_op: if ops > 0.0 { 1e6 / ops } else { 0.0 },
            durable_latency: Some(d),
            unavailable: unavailable.clone(),
            buffered_fallback: false,
            result: None,
        }
    };
    Ok([
        test(0, "write, fsync, close"),
        test(1, "write, close, fsync"),
    ])
}

/// Writes of `bs` at offset 0 through the page cache, never synced.
fn non_sync_test(cfg: &FsyncConfig, opts: &RunOptions, bs: u64) -> anyhow::Result<FsyncTest> {
    let spec = base_spec(cfg, bs, 1);
    let r = crate::runner::run(&spec, opts)?;
    let mut t = FsyncTest {
        section: Section::NonSync,
        name: "write".into(),
        method: None,
        bs,
        writes_per_op: 1,
        ops_per_sec: 0.0,
        usecs_per_op: 0.0,
        durable_latency: None,
        unavailable: None,
        buffered_fallback: false,
        result: None,
    };
    fill_from_run(&mut t, r, 1, false);
    Ok(t)
}

/// The test file's path for `iosim fsync PATH`: PATH itself, or a file
/// named `iosim-fsync.dat` in it when it is a directory.
pub fn test_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("iosim-fsync.dat")
    } else {
        path.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_files() {
        assert_eq!(kb(8192), "8kB");
        assert_eq!(kb(2300), "2300B");
        let d = std::env::temp_dir();
        assert_eq!(test_file(&d), d.join("iosim-fsync.dat"));
        assert_eq!(test_file(Path::new("/x/wal.dat")), Path::new("/x/wal.dat"));
    }

    #[test]
    fn every_method_rewrites_the_first_blocks() {
        let cfg = FsyncConfig {
            path: "/tmp/x.dat".into(),
            sizes: vec![8192],
            duration: Duration::from_secs(1),
            allow_destroy: false,
        };
        let s = base_spec(&cfg, 8192, 2);
        assert_eq!(s.targets[0].length, Some(16384));
        assert_eq!((s.qd, s.threads, s.engine), (1, 1, EngineKind::Sync));
        s.validate().unwrap();
    }
}
