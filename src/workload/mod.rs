//! What to run: the workload specification shared by every front end
//! (native `iosim run`, SQLIO, DiskSpd, profiles, sweeps), and the offset
//! generators that turn it into a stream of I/Os.
//!
//! Front ends build a [`WorkloadSpec`]; [`WorkloadSpec::validate`] checks it;
//! the runner executes it. The spec serialises into the JSON results as the
//! resolved configuration.

use std::path::PathBuf;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::error::Error;

pub mod bssplit;
pub mod data;
pub mod distribution;
pub mod measured;
pub mod steady;

pub use bssplit::BsSplit;
pub use distribution::{Distribution, Placement};

/// The access pattern and read/write mix, named as fio names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    Randread,
    /// Random writes.
    Randwrite,
    /// Sequential mixed reads and writes (`--write-pct`, default 50).
    Readwrite,
    /// Random mixed reads and writes (`--write-pct`, default 50).
    Randrw,
}

impl RwMode {
    /// Every mode, in the order the command line lists them.
    pub const ALL: [RwMode; 6] = [
        RwMode::Read,
        RwMode::Write,
        RwMode::Randread,
        RwMode::Randwrite,
        RwMode::Readwrite,
        RwMode::Randrw,
    ];

    /// The mode with this command-line name (any case).
    pub fn from_name(name: &str) -> Option<RwMode> {
        RwMode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name.trim()))
    }

    /// True for the random patterns.
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::Randread | RwMode::Randwrite | RwMode::Randrw)
    }

    /// True for the mixed patterns, which take `--write-pct`.
    pub fn is_mixed(self) -> bool {
        matches!(self, RwMode::Readwrite | RwMode::Randrw)
    }

    /// The share of writes this mode implies when no `--write-pct` is given.
    pub fn default_write_pct(self) -> u8 {
        match self {
            RwMode::Read | RwMode::Randread => 0,
            RwMode::Write | RwMode::Randwrite => 100,
            RwMode::Readwrite | RwMode::Randrw => 50,
        }
    }

    /// The mode for a given pattern and write share (as DiskSpd's `-r` and `-w` combine).
    pub fn from_parts(random: bool, write_pct: u8) -> RwMode {
        match (random, write_pct) {
            (false, 0) => RwMode::Read,
            (false, 100) => RwMode::Write,
            (false, _) => RwMode::Readwrite,
            (true, 0) => RwMode::Randread,
            (true, 100) => RwMode::Randwrite,
            (true, _) => RwMode::Randrw,
        }
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::Randread => "randread",
            RwMode::Randwrite => "randwrite",
            RwMode::Readwrite => "readwrite",
            RwMode::Randrw => "randrw",
        }
    }
}

/// How I/O meets the page cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    /// O_DIRECT: bypass the page cache (DiskSpd -Su, SQLIO's default unbuffered I/O).
    Direct,
    /// Through the page cache (SQLIO -BY, DiskSpd -Sb).
    Buffered,
    /// Page cache with O_DSYNC: each write returns once stable (DiskSpd -Sw).
    Writethrough,
    /// O_DIRECT and O_DSYNC together, as SQL Server opens its files (DiskSpd -Sh).
    DirectWritethrough,
}

impl CacheMode {
    /// Every mode, in the order the command line lists them.
    pub const ALL: [CacheMode; 4] = [
        CacheMode::Direct,
        CacheMode::Buffered,
        CacheMode::Writethrough,
        CacheMode::DirectWritethrough,
    ];

    /// True when O_DIRECT is used.
    pub fn is_direct(self) -> bool {
        matches!(self, CacheMode::Direct | CacheMode::DirectWritethrough)
    }

    /// True when O_DSYNC is used.
    pub fn is_sync(self) -> bool {
        matches!(
            self,
            CacheMode::Writethrough | CacheMode::DirectWritethrough
        )
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            CacheMode::Direct => "direct",
            CacheMode::Buffered => "buffered",
            CacheMode::Writethrough => "writethrough",
            CacheMode::DirectWritethrough => "direct-writethrough",
        }
    }
}

/// Which I/O engine carries the I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// The fastest engine for the request (default): sync through the page cache at queue depth 1, io_uring otherwise.
    Auto,
    /// io_uring with registered files and buffers and batched submission.
    Uring,
    /// pread/pwrite, one I/O at a time per thread (queue depth is 1 whatever --qd says).
    Sync,
    /// No storage at all: every I/O completes at once. Measures iosim's own overhead.
    Null,
    /// Memory-mapped I/O through the page cache (DiskSpd -Sm, fio ioengine=mmap); needs --cache buffered or writethrough.
    Mmap,
}

impl EngineKind {
    /// Every engine, in the order the command line lists them.
    pub const ALL: [EngineKind; 5] = [
        EngineKind::Auto,
        EngineKind::Uring,
        EngineKind::Sync,
        EngineKind::Null,
        EngineKind::Mmap,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Auto => "auto",
            EngineKind::Uring => "uring",
            EngineKind::Sync => "sync",
            EngineKind::Null => "null",
            EngineKind::Mmap => "mmap",
        }
    }
}

/// What a write carries, and what new test files are filled with.
///
/// Written on the command line and in JSON as `random`, `zero`, `sparse`,
/// `pattern:HEX` or `compressible:N`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FillMode {
    /// Incompressible random data (default): no compression or zero-detection artefacts.
    #[default]
    Random,
    /// Zeros, as SQLIO and `fsutil` create files. Arrays that compress or detect zeros will flatter.
    Zero,
    /// New test files are left sparse (not written at all); writes still carry random data.
    /// Reads of holes never reach the device, so only use this for write tests.
    Sparse,
    /// A byte pattern (1 to 16 bytes, e.g. `pattern:DEADBEEF`) repeated over every block.
    Pattern(data::PatternBytes),
    /// Random data of which N percent of every 4 KiB block compresses away (fio's
    /// `buffer_compress_percentage`); `compressible:50` is a 2:1 array.
    Compressible(u8),
}

impl FillMode {
    /// The name used on the command line and in JSON.
    pub fn name(self) -> String {
        match self {
            FillMode::Random => "random".into(),
            FillMode::Zero => "zero".into(),
            FillMode::Sparse => "sparse".into(),
            FillMode::Pattern(p) => format!("pattern:{p}"),
            FillMode::Compressible(n) => format!("compressible:{n}"),
        }
    }

    /// True when writes need the data generator rather than one fill per buffer
    /// and a stamp per write.
    pub fn is_generated(self) -> bool {
        matches!(self, FillMode::Compressible(_))
    }
}

impl std::str::FromStr for FillMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let usage = || {
            format!(
                "invalid fill '{s}': use random, zero, sparse, pattern:HEX (1-16 bytes, e.g. pattern:DEADBEEF) or compressible:N (0-100)"
            )
        };
        let (name, arg) = match t.split_once(':') {
            Some((n, a)) => (n.to_ascii_lowercase(), Some(a)),
            None => (t.to_ascii_lowercase(), None),
        };
        Ok(match (name.as_str(), arg) {
            ("random", None) => FillMode::Random,
            ("zero", None) => FillMode::Zero,
            ("sparse", None) => FillMode::Sparse,
            ("pattern", Some(h)) => FillMode::Pattern(h.parse().map_err(|_| usage())?),
            ("compressible", Some(n)) => {
                let n: u8 = n.trim_end_matches('%').parse().map_err(|_| usage())?;
                if n > 100 {
                    return Err(usage());
                }
                FillMode::Compressible(n)
            }
            _ => return Err(usage()),
        })
    }
}

impl std::fmt::Display for FillMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl Serialize for FillMode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for FillMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Parses a fill for clap.
pub fn fill_arg(s: &str) -> Result<FillMode, String> {
    s.parse()
}

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

/// A thread's walk through a [`Stripe`]: its columns and where it is.
#[derive(Clone, Debug)]
struct StripeWalk {
    factor: u64,
    rows: u64,
    first_col: u64,
    end_col: u64,
    col: u64,
    row: u64,
}

impl StripeWalk {
    /// The next block number, then one step on.
    #[inline]
    fn next_block(&mut self) -> u64 {
        let block = self.row * self.factor + self.col;
        self.row += 1;
        if self.row == self.rows {
            self.row = 0;
            self.col += 1;
            if self.col == self.end_col {
                self.col = self.first_col;
            }
        }
        block
    }
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
            seq_layout: SeqLayout::Split,
            allow_destroy: false,
            cpus: Vec::new(),
            sqpoll: false,
            hipri: false,
            io_limit: None,
            submit_batch: 1,
            rate_iops: None,
            rate_bytes: None,
            burst: 0,
            think: Duration::ZERO,
            random_pct: None,
            shape: Shape::default(),
        }
    }
}

/// Largest block size accepted (64 MiB); larger blocks only measure memory copies.
pub const MAX_BS: u64 = 64 << 20;
/// Largest number of threads per target.
pub const MAX_THREADS: u32 = 1024;
/// Largest queue depth per thread (io_uring rings are sized from it).
pub const MAX_QD: u32 = 4096;

impl WorkloadSpec {
    /// Checks ranges and combinations that do not depend on the targets.
    pub fn validate(&self) -> Result<(), Error> {
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
        if self.duration.is_zero() && self.io_limit.is_none() {
            return bad("--duration must be more than 0".into());
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
        if self.burst > 0 && self.think.is_zero() {
            return bad(format!(
                "--burst {} needs --think TIME: the pause after each burst",
                self.burst
            ));
        }
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

    /// True when the rate cap or think time paces the threads.
    pub fn paced(&self) -> bool {
        self.rate_interval_ns() > 0 || !self.think.is_zero()
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
        format!(
            "{}{} {} qd{} x{} {} {}",
            self.rw.name(),
            mix,
            size,
            self.qd,
            self.threads,
            self.cache.name(),
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

/// Generates the offsets and directions of one thread's I/Os over a region.
///
/// Pure and seeded, so it can be tested without any I/O. Random offsets are
/// uniform over the aligned blocks of the region; sequential offsets advance by
/// the block size and wrap at the end of the region.
#[derive(Clone, Debug)]
pub struct OffsetGen {
    base: u64,
    len: u64,
    bs: u64,
    align: u64,
    random: bool,
    /// Number of aligned start positions for random I/O.
    slots: u64,
    /// Next sequential position, relative to `base`.
    next: u64,
    /// A write happens when a random u32 is below this (0 = never, 2^32 = always).
    write_threshold: u64,
    /// Mixed random/sequential: an I/O is random when a random u32 is below this.
    random_threshold: Option<u64>,
    /// One offset shared by all threads of the target (interlocked sequential).
    shared: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Skewed random positions (`None`: uniform).
    skew: Option<distribution::SkewGen>,
    /// SQLIO's stripe pattern instead of a plain sequential stream.
    stripe: Option<StripeWalk>,
    /// Block-size mix (`None`: every I/O is `bs`, which is then the largest size).
    sizes: Option<bssplit::SizeMix>,
    rng: SmallRng,
}

/// One generated I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextIo {
    /// Absolute byte offset.
    pub offset: u64,
    /// Write (else read).
    pub write: bool,
    /// Length in bytes.
    pub len: u64,
    /// Size class (index into [`bssplit::SizeMix::classes`]; 0 without a mix).
    pub class: u8,
}

impl OffsetGen {
    /// A generator for one thread.
    ///
    /// `base..base+len` is the region; `start` is where a sequential stream begins
    /// (relative to `base`, wrapped into the region). `write_pct` is the share of writes.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        base: u64,
        len: u64,
        bs: u64,
        align: u64,
        random: bool,
        start: u64,
        write_pct: u8,
        seed: u64,
    ) -> OffsetGen {
        let align = align.max(1);
        let slots = if len >= bs { (len - bs) / align + 1 } else { 0 };
        // Sequential streams advance in whole blocks and restart at 0 when the next
        // block would not fit.
        let seq_end = if len >= bs { (len / bs) * bs } else { 0 };
        let next = if seq_end == 0 {
            0
        } else {
            crate::units::align_down(start % seq_end, bs.min(align).max(1)) % seq_end
        };
        // write_pct as a threshold on a 32-bit random number; exact at 0 and 100.
        let write_threshold = (u64::from(write_pct.min(100)) << 32) / 100;
        OffsetGen {
            base,
            len,
            bs,
            align,
            random,
            slots,
            next,
            write_threshold,
            random_threshold: None,
            shared: None,
            skew: None,
            stripe: None,
            sizes: None,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// Walks SQLIO's stripe pattern instead of a plain sequential stream:
    /// thread `thread` of `threads` on the target takes its share of the
    /// columns (at least one). Offsets past the region's end wrap around it.
    pub fn striped(mut self, s: Stripe, thread: usize, threads: usize) -> OffsetGen {
        let factor = s.factor.max(1);
        let threads = threads.max(1) as u64;
        let t = (thread as u64).min(threads - 1);
        let first_col = (factor * t / threads).min(factor - 1);
        let end_col = (factor * (t + 1) / threads).clamp(first_col + 1, factor);
        self.stripe = Some(StripeWalk {
            factor,
            rows: s.ios_per_run.max(1),
            first_col,
            end_col,
            col: first_col,
            row: 0,
        });
        self
    }

    /// Makes `random_pct` percent of the I/Os random and the others continue
    /// sequentially from the previous I/O, random or not (DiskSpd's `-rs`).
    pub fn mixed(mut self, random_pct: u8) -> OffsetGen {
        self.random_threshold = Some((u64::from(random_pct.min(100)) << 32) / 100);
        self
    }

    /// Takes sequential offsets from `counter`, shared with the target's other
    /// threads, so that together they issue one sequential stream (DiskSpd's
    /// `-si`). One atomic add per I/O; no lock.
    pub fn shared(mut self, counter: std::sync::Arc<std::sync::atomic::AtomicU64>) -> OffsetGen {
        self.shared = Some(counter);
        self
    }

    /// Applies target `target`'s access skew from `spec` (nothing for uniform).
    /// The tables are built here, before the run; the hot set is placed with a
    /// seed shared by all threads of the target, so they agree on which blocks are hot.
    pub fn shaped(mut self, spec: &WorkloadSpec, target: usize) -> OffsetGen {
        let d = spec.distribution_for(target);
        if d.is_uniform() || self.slots == 0 {
            return self;
        }
        let sampler = std::sync::Arc::new(distribution::RankSampler::new(d, self.slots));
        let scatter = match spec.shape.placement {
            Placement::Random => {
                Some(spec.seed ^ (target as u64).wrapping_mul(0xA24B_AED4_963E_E407))
            }
            Placement::Start => None,
        };
        self.skew = Some(distribution::SkewGen::new(sampler, scatter));
        self
    }

    /// Draws each I/O's size from `spec`'s block-size mix (nothing without
    /// one). `bs` given to [`OffsetGen::new`] must be the mix's largest size,
    /// so random offsets keep every size inside the region.
    pub fn sized(mut self, spec: &WorkloadSpec) -> OffsetGen {
        if let Some(b) = &spec.shape.bssplit {
            self.sizes = Some(bssplit::SizeMix::new(b, self.bs));
        }
        self
    }

    /// Hits on the hottest 1% and 10% and all skewed draws since the last
    /// [`OffsetGen::reset_counts`] (zeros when uniform).
    pub fn skew_counts(&self) -> (u64, u64, u64) {
        self.skew
            .as_ref()
            .map_or((0, 0, 0), |s| (s.hits1, s.hits10, s.draws))
    }

    /// Clears the skew counters (the end of the warmup).
    pub fn reset_counts(&mut self) {
        if let Some(s) = &mut self.skew {
            s.reset_counts();
        }
    }

    /// Number of distinct random block positions (0 when no block fits).
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// The next offset (absolute) and whether it is a write.
    #[inline]
    pub fn next_io(&mut self) -> (u64, bool) {
        let io = self.next_sized();
        (io.offset, io.write)
    }

    /// The next I/O: offset, direction, length and size class.
    #[inline(always)]
    pub fn next_sized(&mut self) -> NextIo {
        if self.sizes.is_none() {
            // Draw order kept from before size mixes: same seed, same stream.
            let random = self.pick_random();
            let offset = self.offset(random, self.bs);
            let write = self.pick_write();
            return NextIo {
                offset,
                write,
                len: self.bs,
                class: 0,
            };
        }
        let write = self.pick_write();
        let (class, len) = match &self.sizes {
            Some(m) => m.pick(write, &mut self.rng),
            None => (0, self.bs),
        };
        let random = self.pick_random();
        NextIo {
            offset: self.offset(random, len),
            write,
            len,
            class,
        }
    }

    #[inline(always)]
    fn pick_random(&mut self) -> bool {
        match self.random_threshold {
            None => self.random,
            Some(t) => u64::from(self.rng.gen::<u32>()) < t,
        }
    }

    #[inline(always)]
    fn pick_write(&mut self) -> bool {
        match self.write_threshold {
            0 => false,
            t if t > u64::from(u32::MAX) => true,
            t => u64::from(self.rng.gen::<u32>()) < t,
        }
    }

    /// The offset of an I/O of `len` bytes (at most `bs`, the largest size).
    #[inline(always)]
    fn offset(&mut self, random: bool, len: u64) -> u64 {
        if random {
            let i = if let Some(s) = &mut self.skew {
                s.next(&mut self.rng)
            } else if self.slots <= 1 {
                0
            } else {
                self.rng.gen_range(0..self.slots)
            };
            let off = i * self.align;
            if self.random_threshold.is_some() {
                // The next sequential I/O continues from here.
                self.next = off + len;
                if self.next + self.bs > self.len {
                    self.next = 0;
                }
            }
            self.base + off
        } else if let Some(c) = &self.shared {
            let seq_end = if self.len >= self.bs {
                (self.len / self.bs) * self.bs
            } else {
                0
            };
            let n = c.fetch_add(len, std::sync::atomic::Ordering::Relaxed);
            let mut off = if seq_end == 0 { 0 } else { n % seq_end };
            if off + len > self.len {
                // A mix's large block does not fit before the wrap.
                off = 0;
            }
            self.base + off
        } else if let Some(st) = &mut self.stripe {
            let seq_end = if self.len >= self.bs {
                (self.len / self.bs) * self.bs
            } else {
                0
            };
            let off = st.next_block().saturating_mul(self.bs);
            self.base + if seq_end == 0 { 0 } else { off % seq_end }
        } else {
            let off = self.next;
            self.next += len;
            if self.next + self.bs > self.len {
                self.next = 0;
            }
            self.base + off
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The readme's example: `-f64 -i64` with 2 KiB blocks; one thread reads
    /// blocks 0, 64, ..., 4032, then 1, 65, ...; with two threads the second
    /// starts at block 32 and both wrap within their half of the columns.
    #[test]
    fn sqlio_stripe_pattern_follows_the_readme() {
        let s = Stripe {
            factor: 64,
            ios_per_run: 64,
        };
        let bs = 2048;
        let blocks = |g: &mut OffsetGen, n: usize| -> Vec<u64> {
            (0..n).map(|_| g.next_io().0 / bs).collect()
        };
        let mut one = OffsetGen::new(0, s.span(bs), bs, bs, false, 0, 0, 1).striped(s, 0, 1);
        let first: Vec<u64> = blocks(&mut one, 65);
        assert_eq!(&first[..3], &[0, 64, 128]);
        assert_eq!(first[63], 4032);
        assert_eq!(first[64], 1);
        // The whole strip, then again from block 0.
        let rest = blocks(&mut one, 64 * 64 - 65);
        assert_eq!(*rest.last().unwrap(), 4095);
        assert_eq!(blocks(&mut one, 1), vec![0]);

        let mut t0 = OffsetGen::new(0, s.span(bs), bs, bs, false, 0, 0, 1).striped(s, 0, 2);
        let mut t1 = OffsetGen::new(0, s.span(bs), bs, bs, false, 0, 0, 2).striped(s, 1, 2);
        assert_eq!(blocks(&mut t1, 2), vec![32, 96]);
        let half: Vec<u64> = blocks(&mut t0, 32 * 64);
        assert_eq!(*half.last().unwrap(), 31 + 63 * 64);
        assert!(half.iter().all(|b| b % 64 < 32));
        assert_eq!(blocks(&mut t0, 1), vec![0]);
        // -f1 is sequential.
        let f1 = Stripe {
            factor: 1,
            ios_per_run: 64,
        };
        let mut seq = OffsetGen::new(0, 1 << 20, bs, bs, false, 0, 0, 1).striped(f1, 0, 1);
        assert_eq!(blocks(&mut seq, 4), vec![0, 1, 2, 3]);
    }

    #[test]
    fn random_offsets_stay_in_range_and_aligned() {
        let base = 1 << 20;
        let len = 10 << 20;
        let mut g = OffsetGen::new(base, len, 8192, 4096, true, 0, 0, 7);
        for _ in 0..100_000 {
            let (off, w) = g.next_io();
            assert!(!w);
            assert!(off >= base);
            assert!(off + 8192 <= base + len);
            assert_eq!(off % 4096, 0);
        }
    }

    #[test]
    fn mixed_stream_is_partly_random_and_continues_from_the_last_io() {
        let len = 1 << 30;
        let mut g = OffsetGen::new(0, len, 8192, 8192, true, 0, 0, 3).mixed(30);
        let mut prev = g.next_io().0;
        let (mut seq, n) = (0u32, 100_000u32);
        for _ in 0..n {
            let (off, _) = g.next_io();
            assert_eq!(off % 8192, 0);
            assert!(off + 8192 <= len);
            if off == prev + 8192 {
                seq += 1;
            }
            prev = off;
        }
        // 70% continue from the previous I/O (random jumps that happen to land
        // right after it are too rare to matter in a 1 GiB region).
        let share = f64::from(seq) / f64::from(n);
        assert!((share - 0.70).abs() < 0.01, "sequential share {share}");
        // 0 and 100 are the pure patterns.
        let mut g = OffsetGen::new(0, len, 4096, 4096, true, 0, 0, 3).mixed(0);
        let offs: Vec<u64> = (0..4).map(|_| g.next_io().0).collect();
        assert_eq!(offs, vec![0, 4096, 8192, 12288]);
    }

    #[test]
    fn shared_offset_makes_one_stream_of_all_threads() {
        let counter = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut gens: Vec<OffsetGen> = (0..4)
            .map(|t| {
                OffsetGen::new(1 << 20, 64 * 4096, 4096, 4096, false, t * 999, 0, t)
                    .shared(counter.clone())
            })
            .collect();
        let mut seen = Vec::new();
        for round in 0..32 {
            for g in gens.iter_mut() {
                let _ = round;
                seen.push(g.next_io().0);
            }
        }
        // Interleaved threads take consecutive blocks, then wrap at the end.
        let want: Vec<u64> = (0..128u64).map(|i| (1 << 20) + (i % 64) * 4096).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn random_offsets_cover_the_region() {
        let len = 256 * 4096;
        let mut g = OffsetGen::new(0, len, 4096, 4096, true, 0, 0, 1);
        let mut seen = vec![false; 256];
        for _ in 0..10_000 {
            seen[(g.next_io().0 / 4096) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "every block should be hit");
    }

    #[test]
    fn sequential_offsets_advance_and_wrap() {
        let mut g = OffsetGen::new(4096, 4 * 4096, 4096, 4096, false, 0, 100, 1);
        let offs: Vec<_> = (0..6).map(|_| g.next_io()).collect();
        let expect = [4096, 8192, 12288, 16384, 4096, 8192];
        for (i, (off, w)) in offs.iter().enumerate() {
            assert_eq!(*off, expect[i]);
            assert!(*w);
        }
    }

    #[test]
    fn sequential_start_is_wrapped_into_region() {
        let mut g = OffsetGen::new(0, 8 * 4096, 4096, 4096, false, 9 * 4096, 0, 1);
        assert_eq!(g.next_io().0, 4096);
    }

    #[test]
    fn write_share_is_close_to_requested() {
        let mut g = OffsetGen::new(0, 1 << 30, 4096, 4096, true, 0, 30, 3);
        let n = 200_000;
        let w = (0..n).filter(|_| g.next_io().1).count();
        let share = w as f64 / n as f64;
        assert!((share - 0.30).abs() < 0.01, "share {share}");
    }

    #[test]
    fn same_seed_same_stream() {
        let mut a = OffsetGen::new(0, 1 << 30, 4096, 4096, true, 0, 50, 42);
        let mut b = OffsetGen::new(0, 1 << 30, 4096, 4096, true, 0, 50, 42);
        for _ in 0..1000 {
            assert_eq!(a.next_io(), b.next_io());
        }
    }

    #[test]
    fn skewed_offsets_stay_aligned_in_range_and_hot() {
        let base = 1 << 20;
        let len = 64 << 20;
        for placement in [Placement::Random, Placement::Start] {
            let spec = WorkloadSpec {
                shape: Shape {
                    distribution: "hotcold:10/90".parse().unwrap(),
                    placement,
                    ..Default::default()
                },
                ..Default::default()
            };
            let mut g = OffsetGen::new(base, len, 8192, 4096, true, 0, 0, 7).shaped(&spec, 0);
            let slots = g.slots();
            let mut hits = vec![0u32; slots as usize];
            for _ in 0..200_000 {
                let (off, _) = g.next_io();
                assert!(off >= base && off + 8192 <= base + len);
                assert_eq!(off % 4096, 0);
                hits[((off - base) / 4096) as usize] += 1;
            }
            // The hottest 10% of the positions, whichever they are, take about 90%.
            hits.sort_unstable_by(|a, b| b.cmp(a));
            let top: u32 = hits[..(slots as usize).div_ceil(10)].iter().sum();
            let share = f64::from(top) / 200_000.0;
            assert!((share - 0.9).abs() < 0.01, "{placement:?}: {share}");
            let (_, h10, n) = g.skew_counts();
            assert!((h10 as f64 / n as f64 - 0.9).abs() < 0.01);
            if placement == Placement::Start {
                // Packed at the front: nothing hot beyond the first 10%.
                let mut g = OffsetGen::new(0, len, 4096, 4096, true, 0, 0, 1).shaped(&spec, 0);
                let front = (0..10_000).filter(|_| g.next_io().0 < len / 10).count();
                assert!((8800..9200).contains(&front), "{front}");
            }
        }
    }

    #[test]
    fn size_mixes_keep_offsets_in_range_and_sequential_streams_contiguous() {
        let mut spec = WorkloadSpec {
            shape: Shape {
                bssplit: Some("4K/50:64K/30:1M/20".parse().unwrap()),
                ..Default::default()
            },
            ..Default::default()
        };
        spec.resolve_sizes();
        assert_eq!(spec.bs, 1 << 20);
        assert_eq!(spec.effective_align(), 4096);
        let len = 8 << 20;
        let mut g = OffsetGen::new(0, len, spec.bs, 4096, true, 0, 0, 5).sized(&spec);
        let mut seen = [0u32; 3];
        for _ in 0..50_000 {
            let io = g.next_sized();
            assert!(io.offset + io.len <= len && io.offset % 4096 == 0, "{io:?}");
            assert_eq!(io.len, [4096, 65536, 1 << 20][io.class as usize]);
            seen[io.class as usize] += 1;
        }
        assert!(
            (f64::from(seen[2]) / 50_000.0 - 0.2).abs() < 0.01,
            "{seen:?}"
        );
        // Sequential: each I/O starts where the previous one ended, until the wrap.
        let mut g = OffsetGen::new(0, len, spec.bs, 4096, false, 0, 0, 5).sized(&spec);
        let mut prev = g.next_sized();
        for _ in 0..1000 {
            let io = g.next_sized();
            assert!(
                io.offset == prev.offset + prev.len || io.offset == 0,
                "{prev:?} {io:?}"
            );
            assert!(io.offset + io.len <= len);
            prev = io;
        }
        // --rate in bytes paces by the mean size: 0.5*4K + 0.3*64K + 0.2*1M.
        spec.rate_bytes = Some(1 << 20);
        let mean = 0.5 * 4096.0 + 0.3 * 65536.0 + 0.2 * 1048576.0;
        assert_eq!(spec.mean_io_bytes(), mean);
        assert_eq!(spec.rate_interval_ns(), (mean * 1e9 / 1048576.0) as u64);
        // A size direct I/O cannot use is refused before the run.
        spec.targets = vec![TargetSpec::new("/tmp/x", Some(1 << 20))];
        spec.shape.bssplit = Some("4K/50:1000/50".parse().unwrap());
        assert!(spec.validate().unwrap_err().to_string().contains("512"));
    }

    #[test]
    fn mode_parts_round_trip() {
        for m in [
            RwMode::Read,
            RwMode::Write,
            RwMode::Randread,
            RwMode::Randwrite,
            RwMode::Readwrite,
            RwMode::Randrw,
        ] {
            assert_eq!(RwMode::from_parts(m.is_random(), m.default_write_pct()), m);
        }
    }

    #[test]
    fn validation_catches_nonsense() {
        let mut s = WorkloadSpec {
            targets: vec![TargetSpec::new("/tmp/x", Some(1 << 20))],
            ..Default::default()
        };
        assert!(s.validate().is_ok());
        s.threads = 0;
        assert!(s.validate().is_err());
        s.threads = 1;
        s.qd = 0;
        assert!(s.validate().is_err());
        s.qd = 1;
        s.bs = 0;
        assert!(s.validate().is_err());
        s.bs = 4096;
        s.targets.clear();
        assert!(s.validate().is_err());
    }
}
