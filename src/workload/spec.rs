//! The workload specification: targets, layout of sequential threads, and
//! [`WorkloadSpec`] with its limits and checks.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::durability::{Flush, OpenSync, SyncMethod};
use super::modes::{CacheMode, EngineKind, FillMode, RwMode};
use super::steady;
use super::{BsSplit, Distribution, Placement};
use crate::error::Error;
use crate::units::format_duration_arg;

/// One file or block device to run against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetSpec {
    /// Path of the file or block device.
    pub path: PathBuf,
    /// Size to create the file with when it is missing or too small (bytes).
    pub size: Option<u64>,
    /// First byte of the region used.
    pub offset: u64,
    /// Length of the region used (bytes); `None` means to the end of the target.
    pub length: Option<u64>,
    /// Threads for this target; `None` takes the workload's `threads`.
    #[serde(default)]
    pub threads: Option<u32>,
    /// CPUs this target's threads may run on (SQLIO's parameter-file mask); empty means any.
    #[serde(default)]
    pub cpus: Vec<usize>,
    /// Access skew on this target; `None` takes the workload's `shape.distribution`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
}

impl TargetSpec {
    /// A target at `path` using the whole file, created with `size` when missing.
    pub fn new(path: impl Into<PathBuf>, size: Option<u64>) -> TargetSpec {
        TargetSpec {
            path: path.into(),
            size,
            offset: 0,
            length: None,
            threads: None,
            cpus: Vec::new(),
            distribution: None,
        }
    }
}

/// How sequential threads share a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "bytes")]
pub enum SeqLayout {
    /// Each thread gets its own slice of the region (default): no two threads read the same block.
    Split,
    /// Thread N starts N x stride bytes into the region and wraps around it (DiskSpd -T; stride 0 = all start together).
    Stride(u64),
    /// All threads of a target take the next block from one shared offset, so
    /// the target sees one sequential stream (DiskSpd -si).
    Shared,
    /// SQLIO's stripe pattern (`-f<factor> -i<ios per run>`, its default `-f64 -i64`).
    Stripe(Stripe),
}

/// SQLIO's stripe pattern, as its readme describes it: the region is seen as
/// rows of `factor` blocks, `ios_per_run` rows deep; an "I/O run" takes one
/// column from top to bottom (blocks c, c + factor, c + 2 x factor, ...),
/// the next run the next column. Each thread of a target owns an equal share
/// of the columns (with two threads, the first takes columns 0-31 of 64, the
/// second 32-63) and starts over at its first column after its last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stripe {
    /// Blocks in a row (`-f`): the distance, in blocks, between the I/Os of a run.
    pub factor: u64,
    /// I/Os in a run (`-i`): the rows.
    pub ios_per_run: u64,
}

impl Stripe {
    /// Bytes the pattern touches from the region's start with blocks of `bs`.
    pub fn span(&self, bs: u64) -> u64 {
        self.factor
            .saturating_mul(self.ios_per_run)
            .saturating_mul(bs)
    }
}

/// Parses `--stripe FACTOR[:IOS_PER_RUN]` (SQLIO's `-f` and `-i`; 64 I/Os per run by default).
pub fn stripe_arg(s: &str) -> Result<Stripe, String> {
    let (f, i) = s.split_once(':').unwrap_or((s, "64"));
    let n = |v: &str, what: &str| -> Result<u64, String> {
        v.trim()
            .parse::<u64>()
            .ok()
            .filter(|&n| (1..=1 << 32).contains(&n))
            .ok_or_else(|| format!("'{s}': {what} must be a whole number from 1 to 4294967296, e.g. --stripe 64:64"))
    };
    Ok(Stripe {
        factor: n(f, "the stripe factor")?,
        ios_per_run: n(i, "the I/Os per run")?,
    })
}

/// A complete workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    /// Files or devices.
    pub targets: Vec<TargetSpec>,
    /// Pattern and mix.
    pub rw: RwMode,
    /// Percentage of I/Os that are writes (0..=100).
    pub write_pct: u8,
    /// Block size in bytes.
    pub bs: u64,
    /// Offsets are multiples of this (defaults to the block size for random I/O).
    pub align: Option<u64>,
    /// Threads per target.
    pub threads: u32,
    /// Outstanding I/Os per thread.
    pub qd: u32,
    /// Measured time.
    #[serde(with = "duration_secs")]
    pub duration: Duration,
    /// Time run before measuring starts; excluded from results.
    #[serde(with = "duration_secs")]
    pub warmup: Duration,
    /// Seed for random offsets and data.
    pub seed: u64,
    /// Page-cache behaviour.
    pub cache: CacheMode,
    /// I/O engine.
    pub engine: EngineKind,
    /// Content of new test files and of writes.
    pub fill: FillMode,
    /// How sequential threads share a target.
    pub seq_layout: SeqLayout,
    /// Allow writes that would destroy data iosim did not create.
    pub allow_destroy: bool,
    /// CPUs to pin worker threads to, round-robin; empty means no pinning.
    pub cpus: Vec<usize>,
    /// io_uring: use a kernel submission thread (SQPOLL).
    pub sqpoll: bool,
    /// io_uring: polled completions (IOPOLL), for NVMe with poll queues; needs direct I/O.
    pub hipri: bool,
    /// Complete this many I/Os per thread, then stop (before the duration ends).
    #[serde(default)]
    pub io_limit: Option<u64>,
    /// Stop each thread once its I/Os add up to this many times its region
    /// (fio's default for a job that is not time-based: write the size once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passes: Option<u32>,
    /// Hand queued I/Os to the kernel in groups of at most this many
    /// (fio's `iodepth_batch_submit`); 0 submits every free slot at once.
    #[serde(default)]
    pub submit_batch: u32,
    /// Rate cap per thread: at most this many I/Os per second (fio's
    /// `rate_iops`, DiskSpd's `-g<n>i`).
    #[serde(default)]
    pub rate_iops: Option<u64>,
    /// Rate cap per thread: at most this many bytes per second (fio's
    /// `rate`, DiskSpd's `-g<bytes per ms>`).
    #[serde(default)]
    pub rate_bytes: Option<u64>,
    /// Bursts: after this many I/Os a thread issues nothing for `think`
    /// (DiskSpd's `-i`); 0 = no bursts (with a think time: pause after every I/O).
    #[serde(default)]
    pub burst: u32,
    /// Think time between bursts (DiskSpd's `-j`, fio's `thinktime`).
    #[serde(default, with = "duration_secs")]
    pub think: Duration,
    /// Periodic bursts over the rate cap: every this long a thread starts a
    /// burst of `burst` I/Os at `burst_rate_iops`, then issues at its
    /// `rate_iops` (or nothing, without one) until the next: a
    /// checkpoint's writes over a database's steady load. Zero: none.
    /// Exclusive with `think`.
    #[serde(
        default,
        with = "duration_secs",
        skip_serializing_if = "Duration::is_zero"
    )]
    pub burst_every: Duration,
    /// I/Os per second per thread inside a periodic burst (`burst_every`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_rate_iops: Option<u64>,
    /// A periodic burst's I/Os are all writes (a checkpoint's), and the I/Os
    /// between bursts write less, so that `write_pct` holds over a period
    /// ([`WorkloadSpec::write_share_between_bursts`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub burst_writes: bool,
    /// Percentage of I/Os at random offsets; the others continue
    /// sequentially from the previous I/O (DiskSpd's `-rs`). `None`: as
    /// `rw` says (all random or all sequential).
    #[serde(default)]
    pub random_pct: Option<u8>,
    /// What makes the workload look like production: access skew, size
    /// mixes, data patterns, steady state (docs/workloads.md). Absent from
    /// the JSON when everything is at its default.
    #[serde(default, skip_serializing_if = "Shape::is_default")]
    pub shape: Shape,
    /// A flush after every N writes of a thread (`--fsync N`, `--fdatasync N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<Flush>,
    /// How writes are made durable, as a database's WAL does (`--sync-method`):
    /// opens the file O_DSYNC or O_SYNC, or flushes after each write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_method: Option<SyncMethod>,
    /// Writeback started after every N writes of a thread
    /// (`--sync-file-range N`): `sync_file_range(SYNC_FILE_RANGE_WRITE)`
    /// over the file sends its dirty pages to the device without waiting
    /// for them and without a cache flush, as PostgreSQL's
    /// `checkpoint_flush_after` and `backend_flush_after` do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_file_range: Option<u32>,
    /// The threads of a target commit as a group (`--group-commit`): each
    /// write's flush is shared, one flush in flight at a time, covering
    /// every write completed before it began.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub group_commit: bool,
    /// The flush after every N writes is a barrier (`--flush-barrier`): it
    /// waits for those writes to complete, and nothing is issued until it
    /// completes (a checkpoint's writes, then its fsync).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flush_barrier: bool,
    /// InnoDB's doublewrite (`--doublewrite SIZE`): each batch of N writes
    /// is first copied, one after another, to the last SIZE bytes of the
    /// region and flushed, then written in place and flushed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doublewrite: Option<u64>,
}

/// The production-like parts of a workload (issue 17), all off by default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    /// Access skew of random I/O (targets may override it).
    #[serde(default, skip_serializing_if = "Distribution::is_uniform")]
    pub distribution: Distribution,
    /// Where the hot blocks lie.
    #[serde(default)]
    pub placement: Placement,
    /// Percentage of written 4 KiB blocks that repeat an earlier one (fio's `dedupe_percentage`).
    #[serde(default)]
    pub dedupe_pct: u8,
    /// Block-size mix (fio's `bssplit`); `bs` is then the largest size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bssplit: Option<BsSplit>,
    /// Precondition until steady state (SNIA PTS) before measuring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<steady::SteadySpec>,
    /// A log's partly filled tail page written again by the next write
    /// (`--tail-rewrite`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_rewrite: Option<TailRewrite>,
    /// The database's own cache over the region (`--db-cache`): random
    /// reads of its hottest share are hits, counted and never issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_cache: Option<super::DbCache>,
}

/// A write-ahead log's tail page, written again (`--tail-rewrite
/// PAGE[:PCT]`): a commit that does not fill its last page leaves it partly
/// filled, and the next commit's write starts at that page again, as
/// PostgreSQL's WAL, InnoDB's redo log and etcd's WAL do. Sequential writes
/// then step back one `page` after `pct`% of them (the write's own length
/// is kept), so the device sees each such write overlap the one before by a
/// page. Writes of exactly one page rewrite the same page until one moves on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TailRewrite {
    /// The log's page, bytes (PostgreSQL's WAL 8 KiB, InnoDB's redo log 512 B
    /// blocks, etcd's WAL 4 KiB: the file system's page).
    pub page: u64,
    /// Of the sequential writes, the share that leaves its last page partly
    /// filled, % (1 to 100).
    pub pct: u8,
}

impl TailRewrite {
    /// Parses `PAGE[:PCT]` (`8k`, `4k:70`; PCT 100 when left out).
    pub fn parse(text: &str) -> Result<TailRewrite, String> {
        let (page, pct) = match text.split_once(':') {
            Some((p, n)) => (p, Some(n)),
            None => (text, None),
        };
        let page = crate::units::parse_size(page).map_err(|e| {
            format!("'{text}': {e}; give the log's page and the share of writes that leave it partly filled, e.g. --tail-rewrite 8k:70")
        })?;
        let pct = match pct {
            None => 100,
            Some(n) => n
                .trim_end_matches('%')
                .parse::<u8>()
                .ok()
                .filter(|p| (1..=100).contains(p))
                .ok_or_else(|| {
                    format!("'{text}': the share after the colon must be a whole percentage from 1 to 100, e.g. --tail-rewrite 8k:70")
                })?,
        };
        if page == 0 || page % 512 != 0 {
            return Err(format!(
                "'{text}': the page must be a multiple of 512 bytes (a log writes whole sectors), e.g. 4k or 8k"
            ));
        }
        Ok(TailRewrite { page, pct })
    }

    /// As [`TailRewrite::parse`] reads it: `8K` or `4K:70`.
    pub fn arg(&self) -> String {
        let page = crate::units::format_size_arg(self.page);
        if self.pct == 100 {
            page
        } else {
            format!("{page}:{}", self.pct)
        }
    }
}

impl Shape {
    /// True when nothing is asked beyond the classic uniform workload.
    pub fn is_default(&self) -> bool {
        *self == Shape::default()
    }
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            targets: Vec::new(),
            rw: RwMode::Randread,
            write_pct: 0,
            bs: 4096,
            align: None,
            threads: 1,
            qd: 1,
            duration: Duration::from_secs(10),
            warmup: Duration::ZERO,
            seed: 0x10517,
            cache: CacheMode::Direct,
            engine: EngineKind::Auto,
            fill: FillMode::Random,
            sync_file_range: None,
            group_commit: false,
            flush_barrier: false,
            doublewrite: None,
            seq_layout: SeqLayout::Split,
            allow_destroy: false,
            cpus: Vec::new(),
            sqpoll: false,
            hipri: false,
            io_limit: None,
            passes: None,
            submit_batch: 1,
            rate_iops: None,
            rate_bytes: None,
            burst: 0,
            think: Duration::ZERO,
            burst_every: Duration::ZERO,
            burst_rate_iops: None,
            burst_writes: false,
            random_pct: None,
            shape: Shape::default(),
            flush: None,
            sync_method: None,
        }
    }
}

/// Largest block size accepted (64 MiB); larger blocks only measure memory copies.
pub const MAX_BS: u64 = 64 << 20;
/// Largest number of threads per target.
pub const MAX_THREADS: u32 = 1024;
/// Largest queue depth per thread (io_uring rings are sized from it).
pub const MAX_QD: u32 = 4096;

/// [`WorkloadSpec::time_cap`] of a run that a count ends: a year.
pub const NO_TIME_CAP: Duration = Duration::from_secs(365 * 24 * 3600);

impl WorkloadSpec {
    /// The flush a thread issues after its writes, from `--fsync`/`--fdatasync` or `--sync-method`.
    pub fn effective_flush(&self) -> Option<Flush> {
        self.flush.or(self.sync_method.and_then(SyncMethod::flush))
    }

    /// The synchronous-write flag the targets are opened with (`--sync-method open_*`).
    pub fn open_sync(&self) -> OpenSync {
        match self.sync_method.map(SyncMethod::open_sync) {
            Some(o) => o,
            None if self.cache.is_sync() => OpenSync::Dsync,
            None => OpenSync::None,
        }
    }

    /// True when the workload asks for flushes or a sync method.
    fn durability_asked(&self) -> bool {
        self.flush.is_some() || self.sync_method.is_some()
    }

    /// Checks ranges and combinations that do not depend on the targets.
    pub fn validate(&self) -> Result<(), Error> {
        self.validate_counts()?;
        self.validate_durability()?;
        self.validate_engine()?;
        self.validate_shape()
    }

    /// [`validate`](Self::validate): targets, threads, queue depth, block size, write share, alignment.
    fn validate_counts(&self) -> Result<(), Error> {
        let bad = |m: String| Err(Error::BadWorkload(m));
        if self.targets.is_empty() && self.engine != EngineKind::Null {
            return bad("no target given: name a file or block device, e.g. iosim run /mnt/data/iosim.dat --size 1G".into());
        }
        if self.threads == 0 || self.threads > MAX_THREADS {
            return bad(format!(
                "--threads must be between 1 and {MAX_THREADS}, got {}",
                self.threads
            ));
        }
        for t in &self.targets {
            if t.threads == Some(0) {
                return bad(format!("target '{}' has 0 threads", t.path.display()));
            }
        }
        if self.qd == 0 || self.qd > MAX_QD {
            return bad(format!(
                "--qd must be between 1 and {MAX_QD}, got {}",
                self.qd
            ));
        }
        if self.bs == 0 || self.bs > MAX_BS {
            return bad(format!(
                "--bs must be between 1 byte and 64M, got {}",
                self.bs
            ));
        }
        if self.write_pct > 100 {
            return bad(format!(
                "--write-pct must be 0..100, got {}",
                self.write_pct
            ));
        }
        if let Some(a) = self.align {
            if a == 0 {
                return bad("--align must be at least 1 byte".into());
            }
        }
        Ok(())
    }

    /// [`validate`](Self::validate): flushes and the sync method.
    fn validate_durability(&self) -> Result<(), Error> {
        let bad = |m: String| Err(Error::BadWorkload(m));
        if let Some(f) = self.flush {
            if f.every == 0 {
                return bad(format!(
                    "--{} 0 flushes after no write: give the number of writes between flushes, e.g. --{} 1 to flush after every write (as a database commit does)",
                    f.kind.name(),
                    f.kind.name()
                ));
            }
            if let Some(m) = self.sync_method {
                return bad(format!(
                    "--{} {} and --sync-method {m} both say when writes are flushed: give one",
                    f.kind.name(),
                    f.every
                ));
            }
        }
        if self.write_pct == 0 && !self.rw.is_mixed() && self.durability_asked() {
            return bad(format!(
                "--rw {} issues no writes, so there is nothing to flush: use a pattern with writes (e.g. --rw write) or drop {}",
                self.rw.name(),
                if self.flush.is_some() { "--fsync/--fdatasync" } else { "--sync-method" }
            ));
        }
        if let Some(n) = self.sync_file_range {
            self.validate_writeback(n)?;
        }
        if self.group_commit {
            self.validate_group_commit()?;
        }
        if self.flush_barrier || self.doublewrite.is_some() {
            self.validate_ordered()?;
        }
        if self.sync_method.is_some() && self.cache.is_sync() {
            return bad(format!(
                "--sync-method decides how writes are made durable and --cache {} already opens the file O_DSYNC: use --cache direct or buffered with it",
                self.cache.name()
            ));
        }
        Ok(())
    }

    /// [`validate_durability`](Self::validate_durability): `--sync-file-range
    /// N` starts the writeback of dirty pages, so it needs writes through the
    /// page cache (on Windows, which has no such call, it does nothing, and
    /// the run's notes say so).
    fn validate_writeback(&self, n: u32) -> Result<(), Error> {
        let bad = |m: String| Err(Error::BadWorkload(m));
        if n == 0 {
            return bad("--sync-file-range 0 starts writeback after no write: give the number of writes between two, e.g. --sync-file-range 32 (PostgreSQL's checkpoint_flush_after of 256kB in 8 KiB pages)".into());
        }
        if self.cache != CacheMode::Buffered {
            return bad(format!(
                "--sync-file-range {n} starts the writeback of the page cache's dirty pages, and --cache {} leaves none: use --cache buffered",
                self.cache.name()
            ));
        }
        if self.write_pct == 0 {
            return bad(format!(
                "--sync-file-range {n}: --rw {} issues no writes, so there is nothing to write back",
                self.rw.name()
            ));
        }
        Ok(())
    }

    /// [`validate_durability`](Self::validate_durability): `--group-commit`
    /// shares each write's flush among the target's threads, so each write
    /// must be a commit (a flush after every write) and each committer
    /// waits for its commit before its next write (`--qd 1`).
    fn validate_group_commit(&self) -> Result<(), Error> {
        let bad = |m: &str| Err(Error::BadWorkload(format!("--group-commit {m}")));
        match self.effective_flush() {
            Some(f) if f.every == 1 => {}
            Some(f) => return bad(&format!("makes each write a commit that waits for a shared flush, and --{} {} flushes after every {} writes: use --{} 1", f.kind.name(), f.every, f.every, f.kind.name())),
            None => return bad("shares the flush after each write among the threads: give the flush, e.g. --fdatasync 1 or --sync-method fdatasync"),
        }
        if self.qd != 1 {
            return bad("needs --qd 1: each committer waits for its commit before it writes again");
        }
        if self.engine == EngineKind::Null {
            return bad("needs a file to flush: the null engine has none");
        }
        Ok(())
    }

    /// [`validate_durability`](Self::validate_durability): `--flush-barrier`
    /// and `--doublewrite` order a thread's batches around the flush after
    /// every N writes, so they need that flush, and one way of sharing it.
    fn validate_ordered(&self) -> Result<(), Error> {
        let what = match self.doublewrite {
            Some(d) => format!("--doublewrite {}", crate::units::format_size_arg(d)),
            None => "--flush-barrier".to_string(),
        };
        let bad = |m: &str| Err(Error::BadWorkload(format!("{what} {m}")));
        if self.effective_flush().is_none() {
            return bad("orders each batch of writes around its flush: give the flush and the batch, e.g. --fdatasync 32 (a flush after every 32 writes)");
        }
        if self.group_commit {
            return bad("and --group-commit both say how the flush is shared: give one");
        }
        if self.doublewrite == Some(0) {
            return bad("is an empty area: give its size, e.g. --doublewrite 2M (InnoDB's two blocks of 64 pages of 16 KiB)");
        }
        if self.doublewrite.is_some() && self.write_pct == 0 {
            return bad(
                "copies a batch of writes, and this workload issues none: use --rw randwrite",
            );
        }
        Ok(())
    }

    /// How long the measured window may last: `--duration`, or, when it is 0
    /// and a count ends the run (`--number-ios`, `--passes`), no cap worth
    /// the name (a year), as a fio job that is not time-based has none.
    pub fn time_cap(&self) -> Duration {
        if self.duration.is_zero() && (self.io_limit.is_some() || self.passes.is_some()) {
            NO_TIME_CAP
        } else {
            self.duration
        }
    }

    /// [`validate`](Self::validate): duration, polled I/O, engine and cache, rate caps, bursts.
    fn validate_engine(&self) -> Result<(), Error> {
        let bad = |m: String| Err(Error::BadWorkload(m));
        if self.duration.is_zero() && self.io_limit.is_none() && self.passes.is_none() {
            return bad("--duration must be more than 0".into());
        }
        if self.passes == Some(0) {
            return bad("--passes 0: give 1 or more, or leave it out to run for --duration".into());
        }
        if self.hipri && !self.cache.is_direct() {
            return bad("--hipri (polled I/O) needs direct I/O: add --cache direct".into());
        }
        if self.engine == EngineKind::Mmap && self.cache.is_direct() {
            return bad("--engine mmap goes through the page cache: use --cache buffered or --cache writethrough".into());
        }
        if self.hipri && self.engine != EngineKind::Uring {
            return bad("--hipri needs --engine uring".into());
        }
        match (self.rate_iops, self.rate_bytes) {
            (Some(_), Some(_)) => {
                return bad("give one rate cap: --rate-iops or --rate, not both".into())
            }
            (Some(0), _) | (_, Some(0)) => {
                return bad("a rate cap must be more than 0 (leave it out for no cap)".into())
            }
            _ => {}
        }
        if self.burst > 0 && self.think.is_zero() && self.burst_every.is_zero() {
            return bad(format!(
                "--burst {} needs --think TIME (the pause after each burst) or --burst-every TIME (a burst each period)",
                self.burst
            ));
        }
        self.validate_periodic_bursts()
    }

    /// [`validate`](Self::validate): `burst_every` with its burst, its rate,
    /// and room for the burst in its period.
    fn validate_periodic_bursts(&self) -> Result<(), Error> {
        let bad = |m: String| Err(Error::BadWorkload(m));
        let every = self.burst_every;
        if self.burst_writes && (every.is_zero() || self.write_pct == 0) {
            return bad(
                "--burst-writes makes a periodic burst's I/Os writes: give --burst-every TIME, and a workload that writes (--rw randrw, --write-pct)".into(),
            );
        }
        match (every.is_zero(), self.burst_rate_iops) {
            (true, None) => return Ok(()),
            (true, Some(_)) => {
                return bad(
                    "--burst-rate-iops is the rate inside a periodic burst: give --burst-every TIME and --burst N with it".into(),
                )
            }
            (false, None | Some(0)) => {
                return bad(format!(
                    "--burst-every {}: give --burst-rate-iops N, the I/Os a second per thread inside the burst",
                    format_duration_arg(every)
                ))
            }
            (false, Some(_)) => {}
        }
        if !self.think.is_zero() {
            return bad("--burst-every and --think are two ways to pause: give one".into());
        }
        if self.burst == 0 {
            return bad(format!(
                "--burst-every {}: give --burst N, the I/Os of each burst",
                format_duration_arg(every)
            ));
        }
        let lasts = Duration::from_secs_f64(self.burst_seconds());
        if lasts >= every {
            return bad(format!(
                "--burst {} at --burst-rate-iops {} lasts {}, not less than --burst-every {}: fewer I/Os, a higher rate or a longer period",
                self.burst,
                self.burst_rate_iops.unwrap_or(1),
                format_duration_arg(lasts),
                format_duration_arg(every)
            ));
        }
        Ok(())
    }

    /// [`validate`](Self::validate): the access distributions, dedupe, the block-size mix, the random share.
    fn validate_shape(&self) -> Result<(), Error> {
        let bad = |m: String| Err(Error::BadWorkload(m));
        for d in std::iter::once(&self.shape.distribution)
            .chain(self.targets.iter().filter_map(|t| t.distribution.as_ref()))
        {
            d.validate().map_err(Error::BadWorkload)?;
        }
        if self.shape.dedupe_pct > 100 {
            return bad(format!(
                "--dedupe-pct must be 0..100, got {}",
                self.shape.dedupe_pct
            ));
        }
        if let Some(b) = &self.shape.bssplit {
            let b = b.resolved(self.bs);
            for size in b.sizes() {
                if size == 0 || size > MAX_BS {
                    return bad(format!(
                        "--bssplit sizes must be between 1 byte and 64M, got {size}"
                    ));
                }
                if self.cache.is_direct() && size % 512 != 0 {
                    return bad(format!(
                        "--bssplit size {size} is not a multiple of 512 bytes, which direct I/O needs: use multiples of 4K, or --cache buffered"
                    ));
                }
            }
        }
        self.validate_tail_rewrite()?;
        self.validate_db_cache()?;
        if self.fill == FillMode::Grow && self.write_pct < 100 {
            return bad("--fill grow starts the file empty and lets the writes grow it, so a read past its end would find nothing: use it with writes only (--rw write or randwrite)".into());
        }
        if let Some(p) = self.random_pct {
            if p > 100 {
                return bad(format!("--random-pct must be 0..100, got {p}"));
            }
            if self.seq_layout == SeqLayout::Shared {
                return bad("--random-pct cannot be combined with --shared-offset: the random part would leave the shared stream".into());
            }
        }
        Ok(())
    }

    /// [`validate_shape`](Self::validate_shape): `--tail-rewrite` needs one
    /// plain sequential stream of writes only, one write at a time (a log writes
    /// its tail page again only once the write before it completed; two in
    /// flight over one page would leave it either's), and a page no larger
    /// than the smallest write.
    fn validate_tail_rewrite(&self) -> Result<(), Error> {
        let Some(t) = self.shape.tail_rewrite else {
            return Ok(());
        };
        let bad = |why: &str| {
            Err(Error::BadWorkload(format!(
                "--tail-rewrite {} {why}",
                t.arg()
            )))
        };
        if self.rw != RwMode::Write || self.random_pct.is_some_and(|p| p > 0) {
            return bad("rewrites a sequential log's tail page: use it with --rw write");
        }
        if matches!(self.seq_layout, SeqLayout::Shared | SeqLayout::Stripe(_)) {
            return bad(
                "needs each thread's own sequential stream: leave out --shared-offset and --stripe",
            );
        }
        if self.qd != 1 {
            return bad("needs --qd 1: a log writes its tail page again only once the write before it completed");
        }
        let smallest = self
            .shape
            .bssplit
            .as_ref()
            .and_then(|b| b.resolved(self.bs).sizes().first().copied())
            .unwrap_or(self.bs);
        if t.page > smallest {
            return bad(&format!(
                "is a page larger than the smallest write ({}): give a page of at most {}",
                crate::units::format_size_arg(smallest),
                crate::units::format_size_arg(smallest)
            ));
        }
        Ok(())
    }

    /// [`validate_shape`](Self::validate_shape): `--db-cache` serves the
    /// database's random page reads, so it needs some, and a pattern where
    /// every I/O is placed at random (a sequential read is a scan, which a
    /// database reads past its cache).
    fn validate_db_cache(&self) -> Result<(), Error> {
        let Some(c) = self.shape.db_cache else {
            return Ok(());
        };
        let bad = |why: String| Err(Error::BadWorkload(format!("--db-cache {c} {why}")));
        if !self.rw.is_random() || self.random_pct.is_some() {
            return bad(format!("serves random page reads, and --rw {}{} is not all random: use --rw randread or randrw", self.rw.name(), if self.random_pct.is_some() { " with --random-pct" } else { "" }));
        }
        if self.write_pct >= 100 {
            return bad("serves page reads, and this workload only writes: use --rw randread or randrw, or leave --db-cache out".into());
        }
        Ok(())
    }

    /// Resolves a block-size mix: both of its sides name their sizes (an
    /// empty side takes `bs`) and `bs` becomes the largest size, which
    /// buffers, region and size checks use. Idempotent; nothing without a mix.
    pub fn resolve_sizes(&mut self) {
        if let Some(b) = &self.shape.bssplit {
            let b = b.resolved(self.bs);
            self.bs = b.sizes().last().copied().unwrap_or(self.bs);
            self.shape.bssplit = Some(b);
        }
    }

    /// Mean bytes per I/O (`bs` without a size mix).
    pub fn mean_io_bytes(&self) -> f64 {
        match &self.shape.bssplit {
            None => self.bs as f64,
            Some(b) => {
                let w = f64::from(self.write_pct.min(100)) / 100.0;
                (1.0 - w) * b.mean(false, self.bs) + w * b.mean(true, self.bs)
            }
        }
    }

    /// True when the pattern has any random I/O.
    pub fn any_random(&self) -> bool {
        match self.random_pct {
            Some(p) => p > 0,
            None => self.rw.is_random(),
        }
    }

    /// Minimum gap between two I/O starts of one thread under the rate cap, in
    /// nanoseconds (0 = no cap).
    pub fn rate_interval_ns(&self) -> u64 {
        match (self.rate_iops, self.rate_bytes) {
            (Some(n), _) if n > 0 => (1_000_000_000 / n).max(1),
            (_, Some(b)) if b > 0 => ((self.mean_io_bytes() * 1e9 / b as f64) as u64).max(1),
            _ => 0,
        }
    }

    /// How long a periodic burst lasts: `burst` I/Os at `burst_rate_iops`.
    fn burst_seconds(&self) -> f64 {
        f64::from(self.burst) / self.burst_rate_iops.unwrap_or(1).max(1) as f64
    }

    /// With `burst_writes`: the share of writes between periodic bursts that
    /// keeps `write_pct` over a period whose burst is all writes (0 when the
    /// burst alone writes that much; 1 without I/O between bursts).
    pub fn write_share_between_bursts(&self) -> Option<f64> {
        if !self.burst_writes || self.burst_every.is_zero() {
            return None;
        }
        let burst = f64::from(self.burst);
        let rest = (self.burst_every.as_secs_f64() - self.burst_seconds()).max(0.0);
        let between = match self.rate_interval_ns() {
            0 => 0.0,
            ns => rest * 1e9 / ns as f64,
        };
        if between <= 0.0 {
            return Some(1.0);
        }
        let writes = f64::from(self.write_pct) / 100.0 * (burst + between);
        Some(((writes - burst) / between).clamp(0.0, 1.0))
    }

    /// True when the rate cap, think time or periodic bursts pace the threads.
    pub fn paced(&self) -> bool {
        self.rate_interval_ns() > 0 || !self.think.is_zero() || !self.burst_every.is_zero()
    }

    /// True when the workload issues any writes.
    pub fn writes(&self) -> bool {
        self.write_pct > 0
    }

    /// The offset alignment actually used: `--align`, else the block size
    /// (the smallest size of a size mix, as fio's `blockalign`).
    pub fn effective_align(&self) -> u64 {
        let smallest = self
            .shape
            .bssplit
            .as_ref()
            .and_then(|b| b.resolved(self.bs).sizes().first().copied());
        self.align.or(smallest).unwrap_or(self.bs).max(1)
    }

    /// The access skew of target `i`.
    pub fn distribution_for(&self, i: usize) -> Distribution {
        self.targets
            .get(i)
            .and_then(|t| t.distribution)
            .unwrap_or(self.shape.distribution)
    }

    /// Threads for target `i`.
    pub fn threads_for(&self, i: usize) -> u32 {
        self.targets
            .get(i)
            .and_then(|t| t.threads)
            .unwrap_or(self.threads)
    }

    /// A short one-line description: `randread 4KiB qd32 x1 direct uring`.
    pub fn describe(&self) -> String {
        let mix = if self.rw.is_mixed() {
            format!(" {}%w", self.write_pct)
        } else {
            String::new()
        };
        let size = match &self.shape.bssplit {
            Some(b) => format!("bssplit {b}"),
            None => crate::units::format_size(self.bs),
        };
        let size = match &self.shape.tail_rewrite {
            Some(t) => format!("{size} tail-rewrite {}", t.arg()),
            None => size,
        };
        let size = match &self.shape.db_cache {
            Some(c) => format!("{size} db-cache {c}"),
            None => size,
        };
        let mut durability = match (self.sync_method, self.flush) {
            (Some(m), _) => format!(" sync {m}"),
            (None, Some(f)) => format!(" {}/{}", f.kind.name(), f.every),
            (None, None) => String::new(),
        };
        if let Some(n) = self.sync_file_range {
            durability.push_str(&format!(" sync_file_range/{n}"));
        }
        if self.group_commit {
            durability.push_str(" group-commit");
        }
        if let Some(d) = self.doublewrite {
            durability.push_str(&format!(
                " doublewrite/{}",
                crate::units::format_size_arg(d)
            ));
        } else if self.flush_barrier {
            durability.push_str(" barrier");
        }
        format!(
            "{}{} {} qd{} x{} {}{} {}",
            self.rw.name(),
            mix,
            size,
            self.qd,
            self.threads,
            self.cache.name(),
            durability,
            self.engine.name()
        )
    }
}

/// Serde helper: durations as fractional seconds.
pub mod duration_secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    /// Serialise as seconds.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    /// Deserialise from seconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Ok(Duration::from_secs_f64(v.max(0.0)))
    }
}
