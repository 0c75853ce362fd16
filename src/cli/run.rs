//! `iosim run`: one workload against files or block devices.
//!
//! Option names follow fio where fio has one (`--rw`, `--bs`, `--size`,
//! `--offset`, `--numjobs` is `--threads`, `--iodepth` is `--qd`), so Linux
//! users feel at home; DiskSpd's `-w` is `--write-pct`.

use std::path::PathBuf;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args};

use super::db::{BaselineArgs, SaveArgs};
use super::output::OutputArgs;
use super::values::{cpu_list_value, duration_arg, size_arg, CpuList};
use crate::profile::RunOverrides;
use crate::workload::{
    CacheMode, EngineKind, FillMode, RwMode, SeqLayout, TargetSpec, WorkloadSpec,
};

/// `iosim run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Files or block devices. Missing files are created with --size. Under
    /// mpirun/srun, %r (rank), %n (ranks), %h (host) and %l (rank on host) expand.
    pub targets: Vec<PathBuf>,

    /// Collective-run options (under mpirun/srun).
    #[command(flatten)]
    pub mpi: super::mpi::MpiArgs,

    /// Run a database workload profile (built-in name or .toml file; see iosim profile list):
    /// its targets map to the paths in order; missing ones are created next to the first path.
    #[arg(long, value_name = "NAME|FILE")]
    pub profile: Option<String>,

    /// With --profile: the database's commits (transactions) a second. The rates of the
    /// workloads that follow the commits (the log's: per_commit) are scaled from the commit
    /// rate the profile was measured at (its commit_rate) to this one; the others keep theirs.
    #[arg(long, value_name = "N", value_parser = super::values::commit_rate_arg, requires = "profile")]
    pub commit_rate: Option<f64>,

    /// With --profile: the client sessions your database serves (pgbench -c, sysbench
    /// --threads). The workloads that follow the clients (per_client: their sessions' reads
    /// run as that many threads, a group-committed log's commits per flush) are scaled from
    /// the clients the profile was measured with (its clients key); the others keep theirs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), requires = "profile")]
    pub clients: Option<u32>,

    /// Access pattern and mix.
    #[arg(long, value_enum, default_value_t = WorkloadSpec::default().rw)]
    pub rw: RwMode,

    /// Percentage of writes for --rw readwrite/randrw (DiskSpd's -w). Default 50.
    #[arg(long, value_name = "PCT")]
    pub write_pct: Option<u8>,

    /// Block size (K/M suffixes are powers of two).
    #[arg(long, value_parser = size_arg, default_value = "4K")]
    pub bs: u64,

    /// Block-size mix in fio's notation, e.g. 8K/70:64K/25:1M/5; READS,WRITES for separate
    /// splits (8K/90:64K/10,64K/100; an empty side uses --bs). Results are also given per size.
    #[arg(long, value_name = "SPLIT", value_parser = crate::workload::bssplit::bssplit_arg)]
    pub bssplit: Option<crate::workload::BsSplit>,

    /// Offset alignment for random I/O (default: the block size, or the smallest of --bssplit).
    #[arg(long, value_parser = size_arg)]
    pub align: Option<u64>,

    /// Threads per target.
    #[arg(long, short = 't', default_value_t = WorkloadSpec::default().threads)]
    pub threads: u32,

    /// Outstanding I/Os per thread (queue depth).
    #[arg(long, default_value_t = WorkloadSpec::default().qd)]
    pub qd: u32,

    /// Measured time.
    #[arg(long, short = 'd', value_parser = duration_arg, default_value = "10s")]
    pub duration: Duration,

    /// Time run first and excluded from the results.
    #[arg(long, value_parser = duration_arg, default_value = "0s")]
    pub warmup: Duration,

    /// Seed for offsets and data (same seed, same I/O stream).
    #[arg(long, default_value_t = WorkloadSpec::default().seed)]
    pub seed: u64,

    /// Page-cache behaviour.
    #[arg(long, value_enum, default_value_t = WorkloadSpec::default().cache)]
    pub cache: CacheMode,

    /// I/O engine.
    #[arg(long, value_enum, default_value_t = WorkloadSpec::default().engine)]
    pub engine: EngineKind,

    /// An fsync after every N writes of each thread (fio's fsync=N); its
    /// latency is reported as its own distribution.
    #[arg(long, value_name = "N", conflicts_with_all = ["fdatasync", "sync_method"])]
    pub fsync: Option<u32>,

    /// An fdatasync after every N writes of each thread (fio's fdatasync=N).
    #[arg(long, value_name = "N", conflicts_with = "sync_method")]
    pub fdatasync: Option<u32>,

    /// How each write is made durable, as a database WAL does (PostgreSQL's
    /// wal_sync_method): open_datasync (O_DSYNC), open_sync (O_SYNC),
    /// fdatasync or fsync (a flush after every write).
    #[arg(long, value_name = "METHOD", value_parser = crate::workload::sync_method_arg)]
    pub sync_method: Option<crate::workload::SyncMethod>,

    /// Start writeback after every N writes of each thread:
    /// sync_file_range(SYNC_FILE_RANGE_WRITE) over the file sends its dirty
    /// pages to the device without waiting and without a cache flush
    /// (PostgreSQL's checkpoint_flush_after; --cache buffered; nothing on Windows, which has
    /// no such call).
    #[arg(long, value_name = "N")]
    pub sync_file_range: Option<u32>,

    /// The threads of each target commit as a group, as a database's log
    /// does: after its write each thread needs the flush of --fdatasync 1
    /// or --sync-method, and one flush at a time serves every write
    /// completed before it began (the others wait for it). With --qd 1.
    #[arg(long)]
    pub group_commit: bool,

    /// The flush after every N writes (--fsync N, --fdatasync N) is a barrier: it waits for
    /// those writes to complete, and the thread issues nothing until it returns (a
    /// checkpoint's writes, then its fsync).
    #[arg(long)]
    pub flush_barrier: bool,

    /// InnoDB's doublewrite: each batch of N writes (--fdatasync N) is first copied, one after
    /// another, to the last SIZE bytes of the region and flushed, then written in place and
    /// flushed (a barrier each time). E.g. --doublewrite 2M.
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    pub doublewrite: Option<u64>,

    /// Size of files to create (and of the null target).
    #[arg(long, value_parser = size_arg)]
    pub size: Option<u64>,

    /// Start of the region used in each target.
    #[arg(long, value_parser = size_arg, default_value = "0")]
    pub offset: u64,

    /// Length of the region used (default: to the end).
    #[arg(long, value_parser = size_arg)]
    pub length: Option<u64>,

    /// Data written into new test files and by writes: random, zero, sparse, pattern:HEX
    /// or compressible:N (N percent of every 4 KiB block compresses away); or how the file
    /// is laid out for a write test: allocated (unwritten extents, laid out again before each
    /// run) or grow (emptied before each run and grown by the writes, up to --size).
    #[arg(long, value_parser = crate::workload::fill_arg, default_value = "random", conflicts_with = "compress_pct")]
    pub fill: FillMode,

    /// Percentage of every written 4 KiB block that compresses away (fio buffer_compress_percentage);
    /// the same as --fill compressible:N.
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub compress_pct: Option<u8>,

    /// Percentage of written 4 KiB blocks that repeat an earlier block (fio dedupe_percentage).
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub dedupe_pct: Option<u8>,

    /// Access skew of random I/O (fio random_distribution): uniform, zipf:THETA, pareto:H,
    /// normal:SIGMA% or hotcold:HOT%/ACCESS% (e.g. hotcold:10/90). Give it once for every
    /// target or once per target, in order.
    #[arg(long, value_name = "DIST", value_parser = crate::workload::distribution::distribution_arg)]
    pub distribution: Vec<crate::workload::Distribution>,

    /// Where the hot blocks of --distribution lie: scattered at random, or packed at the start.
    #[arg(long, value_name = "WHERE", default_value = "random")]
    pub hot_placement: crate::workload::Placement,

    /// Precondition until steady state before measuring (SNIA PTS): iops|lat|bw:SLOPE%,RANGE%
    /// over a rolling window of 5 rounds, e.g. iops:10%,20%; add ,ROUND,MAX (default 60s,25).
    #[arg(long, value_name = "CRITERION", value_parser = crate::workload::steady::steady_arg)]
    pub steady_state: Option<crate::workload::steady::SteadySpec>,

    /// A log's partly filled tail page written again: after PCT% of sequential writes
    /// (default 100) the next write starts in the page the last one ended in, as a WAL
    /// commit rewrites its tail page (e.g. 8k:70). With --rw write at --qd 1.
    #[arg(long, value_name = "PAGE[:PCT]", value_parser = crate::workload::TailRewrite::parse)]
    pub tail_rewrite: Option<crate::workload::TailRewrite>,

    /// The database's own cache (buffer pool, shared_buffers) over the test
    /// region: PCT% of it, CACHE/DATA (e.g. 8G/100G: your cache against your
    /// data) or a SIZE of it. Random reads of its hottest share are hits,
    /// counted and never issued; a rate cap counts them too (the database's
    /// page requests). With --rw randread or randrw.
    #[arg(long, value_name = "PCT%|CACHE/DATA|SIZE", value_parser = crate::workload::DbCache::parse)]
    pub db_cache: Option<crate::workload::DbCache>,

    /// Sequential threads start this far apart (DiskSpd -T); default: each thread gets its own slice.
    #[arg(long, value_parser = size_arg, conflicts_with = "shared_offset")]
    pub thread_stride: Option<u64>,

    /// Sequential threads of a target share one offset and together issue one sequential stream (DiskSpd -si).
    #[arg(long)]
    pub shared_offset: bool,

    /// SQLIO's stripe pattern for sequential I/O (SQLIO -f<n> -i<n>): FACTOR[:IOS_PER_RUN],
    /// e.g. 64:64; each run reads blocks FACTOR apart, the next run one block over.
    #[arg(long, value_name = "FACTOR[:IOS]", value_parser = crate::workload::stripe_arg, conflicts_with_all = ["shared_offset", "thread_stride"])]
    pub stripe: Option<crate::workload::Stripe>,

    /// Make only this percentage of I/Os random; the others continue sequentially from the previous I/O (DiskSpd -rs).
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub random_pct: Option<u8>,

    /// Cap each thread at this many I/Os per second (fio rate_iops, DiskSpd -g<n>i).
    #[arg(long, value_name = "IOPS", conflicts_with = "rate")]
    pub rate_iops: Option<u64>,

    /// Cap each thread at this many bytes per second, e.g. 50M (fio rate, DiskSpd -g).
    #[arg(long, value_name = "BYTES", value_parser = size_arg)]
    pub rate: Option<u64>,

    /// Issue I/Os in bursts of N, with --think between bursts (DiskSpd -i), or one burst each --burst-every.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub burst: u32,

    /// Pause between bursts (DiskSpd -j, fio thinktime), e.g. 5ms; without --burst, after every I/O.
    #[arg(long, value_parser = duration_arg, value_name = "TIME", conflicts_with = "burst_every")]
    pub think: Option<Duration>,

    /// Start a burst of --burst N I/Os at --burst-rate-iops every TIME, over the --rate-iops cap (a checkpoint over a steady load), e.g. 1s.
    #[arg(long, value_parser = duration_arg, value_name = "TIME", requires_all = ["burst", "burst_rate_iops"])]
    pub burst_every: Option<Duration>,

    /// I/Os per second per thread inside a --burst-every burst.
    #[arg(long, value_name = "IOPS", requires = "burst_every")]
    pub burst_rate_iops: Option<u64>,

    /// Make each --burst-every burst all writes (a checkpoint's), with fewer writes between so --write-pct holds.
    #[arg(long, requires = "burst_every")]
    pub burst_writes: bool,

    /// Allow writing to block devices and to files iosim did not create.
    #[arg(long)]
    pub allow_destroy: bool,

    /// Pin worker threads to these CPUs, round-robin (e.g. 0,2-3).
    #[arg(long, value_parser = cpu_list_value)]
    pub cpus: Option<CpuList>,

    /// io_uring: a kernel thread per worker submits (SQPOLL); it needs a spare
    /// core, or it slows the run (docs/engines.md).
    #[arg(long)]
    pub sqpoll: bool,

    /// io_uring: polled completions (IOPOLL); needs direct I/O and a device with
    /// poll queues (/sys/block/DEV/queue/io_poll = 1, NVMe with nvme.poll_queues).
    #[arg(long)]
    pub hipri: bool,

    /// Stop each thread after this many measured I/Os.
    #[arg(long)]
    pub number_ios: Option<u64>,

    /// Stop each thread once its I/Os add up to N times its region, as fio
    /// ends a job that is not time-based after writing its size once
    /// (--passes 1); --duration still caps the run (0: no cap).
    #[arg(long, value_name = "N")]
    pub passes: Option<u32>,

    /// Submit at most N queued I/Os per system call (fio's iodepth_batch_submit).
    /// 1 hands each I/O to the device as soon as it is ready, like a database
    /// engine, SQLIO and fio do; 0 submits all free slots at once, which costs
    /// less CPU per I/O but lets the device idle while a group is prepared.
    #[arg(long, default_value_t = WorkloadSpec::default().submit_batch, value_name = "N")]
    pub submit_batch: u32,

    /// Time-series interval.
    #[arg(long, value_parser = duration_arg, default_value = "1s")]
    pub interval: Duration,

    /// Also write the time series (per interval, total and per target) to this CSV file.
    #[arg(long, value_name = "FILE")]
    pub series: Option<PathBuf>,

    /// Write every interval's latency histograms to this file as the run goes
    /// (HdrHistogram interval log: read it with iosim show --hist-log FILE;
    /// docs/long-runs.md). An existing file is refused.
    #[arg(long, value_name = "FILE")]
    pub hist_log: Option<PathBuf>,
    /// Also measure a noisy neighbour: run the workload alone, then again beside this
    /// background workload, and report the change (rw=write,bs=1m,qd=8 with a profile
    /// workload's keys, plus target=PATH and size=SIZE; default target: a file next to the
    /// first path, removed after). docs/workloads.md
    #[arg(long, value_name = "SPEC", value_parser = crate::neighbour::neighbour_arg, conflicts_with_all = ["profile", "steady_state"])]
    pub neighbour: Option<crate::neighbour::NeighbourSpec>,

    /// Shape options given on the command line (filled from clap's value
    /// sources by [`RunArgs::note_sources`]; not an option itself).
    #[arg(skip)]
    pub shape_given: Vec<&'static str>,

    /// Data verification (--verify, --verify-pass, --verify-backlog, --verify-state, --verify-only).
    #[command(flatten)]
    pub verify: super::verify::VerifyArgs,

    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,

    /// History database.
    #[command(flatten)]
    pub save: SaveArgs,

    /// Regression guard.
    #[command(flatten)]
    pub guard: BaselineArgs,

    /// Live metrics.
    #[command(flatten)]
    pub metrics: super::metrics::MetricsArgs,
}

impl RunArgs {
    /// Builds the workload these options describe.
    pub fn to_spec(&self) -> Result<WorkloadSpec, crate::Error> {
        if let Some(p) = &self.profile {
            return Err(crate::Error::BadWorkload(format!(
                "--profile {p} works with iosim run only (a profile runs several workloads)"
            )));
        }
        let write_pct = match self.write_pct {
            Some(p) if !self.rw.is_mixed() => {
                return Err(crate::Error::BadWorkload(format!(
                    "--write-pct {p} needs a mixed pattern: use --rw readwrite or --rw randrw (or --rw {} alone)",
                    self.rw.name()
                )))
            }
            Some(p) => p,
            None => self.rw.default_write_pct(),
        };
        let per_target =
            crate::workload::distribution::per_target(&self.distribution, self.targets.len())?;
        let targets = self
            .targets
            .iter()
            .enumerate()
            .map(|(i, p)| TargetSpec {
                offset: self.offset,
                length: self.length,
                distribution: per_target.get(i).copied(),
                ..TargetSpec::new(p.clone(), self.size)
            })
            .collect();
        let spec = WorkloadSpec {
            targets,
            rw: self.rw,
            write_pct,
            bs: self.bs,
            align: self.align,
            threads: self.threads,
            qd: self.qd,
            cache: self.cache,
            seq_layout: if let Some(st) = self.stripe {
                SeqLayout::Stripe(st)
            } else if self.shared_offset {
                SeqLayout::Shared
            } else {
                self.thread_stride
                    .map_or(SeqLayout::Split, SeqLayout::Stride)
            },
            random_pct: self.random_pct,
            flush: self.flush(),
            sync_method: self.sync_method,
            sync_file_range: self.sync_file_range,
            group_commit: self.group_commit,
            flush_barrier: self.flush_barrier,
            doublewrite: self.doublewrite,
            ..self.settings()
        };
        spec.validate()?;
        Ok(spec)
    }

    /// The settings that are not a workload's pattern, size or layout (how
    /// long, which engine, what the writes carry, pacing, CPUs, the shape):
    /// the one mapping `iosim run` and `iosim run --profile` share; the
    /// rest of the spec is the default.
    fn settings(&self) -> WorkloadSpec {
        WorkloadSpec {
            duration: self.duration,
            warmup: self.warmup,
            seed: self.seed,
            engine: self.engine,
            fill: self.compress_pct.map_or(self.fill, FillMode::Compressible),
            allow_destroy: self.allow_destroy,
            cpus: self.cpus.clone().map(|c| c.0).unwrap_or_default(),
            sqpoll: self.sqpoll,
            hipri: self.hipri,
            io_limit: self.number_ios,
            passes: self.passes,
            submit_batch: self.submit_batch,
            rate_iops: self.rate_iops,
            rate_bytes: self.rate,
            burst: self.burst,
            think: self.think.unwrap_or_default(),
            burst_every: self.burst_every.unwrap_or_default(),
            burst_rate_iops: self.burst_rate_iops,
            burst_writes: self.burst_writes,
            shape: self.shape(),
            ..WorkloadSpec::default()
        }
    }

    /// `--fsync N` or `--fdatasync N`.
    pub fn flush(&self) -> Option<crate::workload::Flush> {
        use crate::workload::{Flush, FlushKind};
        match (self.fsync, self.fdatasync) {
            (Some(every), _) => Some(Flush {
                kind: FlushKind::Fsync,
                every,
            }),
            (None, Some(every)) => Some(Flush {
                kind: FlushKind::Fdatasync,
                every,
            }),
            (None, None) => None,
        }
    }

    /// The production-like parts (issue 17) these options ask for.
    pub fn shape(&self) -> crate::workload::Shape {
        crate::workload::Shape {
            distribution: self.distribution.first().copied().unwrap_or_default(),
            placement: self.hot_placement,
            dedupe_pct: self.dedupe_pct.unwrap_or(0),
            bssplit: self.bssplit.clone(),
            steady_state: self.steady_state,
            tail_rewrite: self.tail_rewrite,
            db_cache: self.db_cache,
        }
    }

    /// Options of `iosim run` that set a workload's shape; with --profile the
    /// profile sets them, so giving one is an error rather than silently ignored.
    /// (argument id, option name).
    pub const SHAPE_OPTIONS: [(&'static str, &'static str); 21] = [
        ("rw", "--rw"),
        ("write_pct", "--write-pct"),
        ("bs", "--bs"),
        ("bssplit", "--bssplit"),
        ("align", "--align"),
        ("threads", "--threads"),
        ("qd", "--qd"),
        ("cache", "--cache"),
        ("thread_stride", "--thread-stride"),
        ("shared_offset", "--shared-offset"),
        ("stripe", "--stripe"),
        ("random_pct", "--random-pct"),
        ("series", "--series"),
        ("fsync", "--fsync"),
        ("fdatasync", "--fdatasync"),
        ("sync_method", "--sync-method"),
        ("sync_file_range", "--sync-file-range"),
        ("group_commit", "--group-commit"),
        ("flush_barrier", "--flush-barrier"),
        ("doublewrite", "--doublewrite"),
        ("tail_rewrite", "--tail-rewrite"),
    ];

    /// Records which shape options were given on the command line, from
    /// clap's value source (a value equal to the default still counts).
    pub fn note_sources(&mut self, m: &ArgMatches) {
        self.shape_given = Self::SHAPE_OPTIONS
            .iter()
            .filter(|(id, _)| m.value_source(id) == Some(ValueSource::CommandLine))
            .map(|(_, name)| *name)
            .collect();
    }

    /// The shape options given on the command line (see [`RunArgs::note_sources`]).
    pub fn conflicting_options(&self) -> Vec<&'static str> {
        self.shape_given.clone()
    }

    /// What `iosim run --profile` takes from these options: the paths, and
    /// every setting that is not a workload's shape.
    pub fn to_overrides(&self) -> RunOverrides {
        RunOverrides {
            paths: self.targets.clone(),
            size: self.size,
            offset: self.offset,
            length: self.length,
            conflicting: self.conflicting_options(),
            base: WorkloadSpec {
                seq_layout: SeqLayout::Split,
                // --distribution, --hot-placement, --dedupe-pct apply to every
                // workload that does not set its own.
                shape: crate::workload::Shape {
                    steady_state: None,
                    tail_rewrite: None,
                    ..self.shape()
                },
                ..self.settings()
            },
        }
    }
}
