//! The native command line: `iosim`, `iosim quick`, `iosim run`.
//!
//! Option names follow fio where fio has one (`--rw`, `--bs`, `--size`,
//! `--offset`, `--numjobs` is `--threads`, `--iodepth` is `--qd`), so Linux
//! users feel at home; DiskSpd's `-w` is `--write-pct`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::workload::{
    CacheMode, EngineKind, FillMode, RwMode, SeqLayout, TargetSpec, WorkloadSpec,
};

/// Parses a size for clap.
pub fn size_arg(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s).map_err(|e| e.to_string())
}

/// Parses a duration for clap.
pub fn duration_arg(s: &str) -> Result<Duration, String> {
    crate::units::parse_duration(s).map_err(|e| e.to_string())
}

/// A list of CPUs given as `0,2,4-7`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// Parses a CPU list for clap.
pub fn cpu_list_value(s: &str) -> Result<CpuList, String> {
    cpu_list_arg(s).map(CpuList)
}

/// Parses a CPU list such as `0,2,4-7`.
pub fn cpu_list_arg(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("invalid CPU list '{s}': use numbers and ranges such as 0,2,4-7");
        if let Some((a, b)) = part.split_once('-') {
            let a: usize = a.trim().parse().map_err(|_| bad())?;
            let b: usize = b.trim().parse().map_err(|_| bad())?;
            if b < a {
                return Err(bad());
            }
            out.extend(a..=b);
        } else {
            out.push(part.parse().map_err(|_| bad())?);
        }
    }
    if out.is_empty() {
        return Err(format!("invalid CPU list '{s}': it names no CPU"));
    }
    Ok(out)
}

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// A readable report (default).
    Text,
    /// The versioned JSON document (docs/json-schema.md).
    Json,
    /// One CSV row per target and one for the total.
    Csv,
}

/// iosim: storage benchmark and database I/O simulator.
///
/// With no command, runs the default benchmark (`iosim quick`) in the
/// current directory: a 1 GiB test file and five corner tests.
#[derive(Debug, Parser)]
#[command(name = "iosim", version, about, long_about = None, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to do; the default benchmark when absent.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Options of the default benchmark.
    #[command(flatten)]
    pub quick: QuickArgs,
}

/// Commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The default benchmark: sequential 1 MiB read/write, random 4 KiB read/write, 4 KiB QD1 latency.
    Quick(QuickArgs),
    /// Run one workload against one or more files or block devices.
    Run(RunArgs),
    /// Create a test file (preallocated, filled with random data) without running anything.
    Create(CreateArgs),
    /// Run a SQLIO 1.5 command line and print SQLIO's output (docs/sqlio.md).
    Sqlio(CompatArgs),
    /// Run a DiskSpd command line and print DiskSpd's report (docs/diskspd.md).
    Diskspd(CompatArgs),
    /// Print the native `iosim run` command for a SQLIO or DiskSpd command line.
    Translate(CompatArgs),
    /// List stored runs (filters: target, device, profile, label, date).
    History(crate::store::cmd::HistoryArgs),
    /// Reprint a stored run in any output format.
    Show(crate::store::cmd::ShowArgs),
    /// Compare stored runs side by side, with Welch's t-test on repetitions.
    Compare(crate::store::cmd::CompareArgs),
    /// Write an HTML report with charts (or one chart as SVG/PNG).
    Report(crate::html::ReportArgs),
    /// Simulate a database engine's I/O (SQLIOSim) and verify every page read back.
    Sim(crate::sim::cli::SimArgs),
    /// Vary qd, threads, bs, write-pct or rw; repeat; find the knee and the best setting.
    Sweep(SweepArgs),
    /// List or print the database workload profiles (run one with iosim run --profile NAME).
    Profile(ProfileArgs),
    /// ORION-style matrix: small random and large sequential I/O at increasing loads, alone and combined.
    Matrix(crate::matrix::MatrixArgs),
}

/// `iosim profile`.
#[derive(Debug, Clone, Args)]
pub struct ProfileArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: ProfileAction,
}

/// `iosim profile list|show`.
#[derive(Debug, Clone, Subcommand)]
pub enum ProfileAction {
    /// List the built-in profiles: name, description, source.
    List,
    /// Print a profile's TOML (copy it, edit it, run it with --profile FILE.toml).
    Show {
        /// Built-in name or path to a .toml file.
        name: String,
    },
}

/// `iosim sweep`.
#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    /// A parameter and its values: qd=1..64x2, threads=1,2,4, bs=4K,8K, write-pct=0..100:25, rw=randread,randwrite.
    /// Repeat --vary for a grid (every combination), or add --zip to pair values position by position.
    #[arg(long, value_name = "PARAM=VALUES", value_parser = crate::sweep::parse_axis)]
    pub vary: Vec<crate::sweep::Axis>,

    /// Pair the --vary values position by position instead of a grid (threads=1..32x2 with qd=32..1/2).
    #[arg(long)]
    pub zip: bool,

    /// A built-in study from the seeds (see --list-studies): seed000-randwrite, seed001-qd, ...
    #[arg(long, conflicts_with = "vary")]
    pub study: Option<String>,

    /// List the built-in studies and their equivalent --vary lines.
    #[arg(long)]
    pub list_studies: bool,

    /// Runs per point; 3 or more gives a confidence interval.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,

    /// Recommend the best throughput whose latency stays under this (e.g. 2ms, 500us).
    #[arg(long, value_parser = latency_arg)]
    pub max_latency: Option<f64>,

    /// Judge latency by p99 instead of the mean (for --max-latency and the knee).
    #[arg(long)]
    pub p99: bool,

    /// Knee threshold: throughput elasticity below which more load is not worth it.
    #[arg(long, default_value_t = crate::sweep::analysis::DEFAULT_KNEE_ELASTICITY)]
    pub knee_threshold: f64,

    /// Also write the table as CSV to this file.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// The workload each point starts from.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Parses a latency such as `2ms`, `500us` or `0.5` (milliseconds) into microseconds.
pub fn latency_arg(s: &str) -> Result<f64, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, mult) = if let Some(v) = t.strip_suffix("us") {
        (v, 1.0)
    } else if let Some(v) = t.strip_suffix("ms") {
        (v, 1000.0)
    } else if let Some(v) = t.strip_suffix('s') {
        (v, 1_000_000.0)
    } else {
        (t.as_str(), 1000.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("invalid latency '{s}': use e.g. 2ms or 500us"))?;
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("invalid latency '{s}': it must be above 0"));
    }
    Ok(v * mult)
}

/// `iosim create`.
#[derive(Debug, Clone, Args)]
pub struct CreateArgs {
    /// The file to create (must not exist).
    pub path: PathBuf,

    /// Its size.
    #[arg(long, value_parser = size_arg)]
    pub size: u64,

    /// What to fill it with: random, zero, pattern:HEX or compressible:N (percent that compresses away).
    #[arg(long, value_parser = crate::workload::fill_arg, default_value = "random")]
    pub fill: FillMode,

    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Raw arguments of `iosim sqlio`, `iosim diskspd` and `iosim translate`: the
/// legacy tools glue values to flags (`-frandom`, `-b8K`), so src/compat parses them.
#[derive(Debug, Clone, Args)]
pub struct CompatArgs {
    /// The legacy command line, unchanged (plus --drive L=PATH, --disk N=DEV, --allow-destroy, --json FILE).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Options shared by commands that print results.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Output format on stdout.
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    /// No progress bars or live statistics on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `iosim quick`.
#[derive(Debug, Clone, Args)]
pub struct QuickArgs {
    /// Directory for the test file (default: the current directory).
    pub dir: Option<PathBuf>,

    /// Size of the test file.
    #[arg(long, value_parser = size_arg, default_value = "1G")]
    pub size: u64,

    /// Measured time of each test.
    #[arg(long, value_parser = duration_arg, default_value = "5s")]
    pub duration: Duration,

    /// I/O engine.
    #[arg(long, value_enum, default_value_t = EngineKind::Uring)]
    pub engine: EngineKind,

    /// Cache mode (falls back to buffered, with a notice, where direct I/O is impossible).
    #[arg(long, value_enum, default_value_t = CacheMode::Direct)]
    pub cache: CacheMode,

    /// Name of the test file inside the directory.
    #[arg(long, default_value = "iosim-testfile.dat")]
    pub file: String,

    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,

    /// History database.
    #[command(flatten)]
    pub save: crate::store::cmd::SaveArgs,
}

/// `iosim run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Files or block devices. Missing files are created with --size.
    pub targets: Vec<PathBuf>,

    /// Run a database workload profile (built-in name or .toml file; see iosim profile list):
    /// its targets map to the paths in order; missing ones are created next to the first path.
    #[arg(long, value_name = "NAME|FILE")]
    pub profile: Option<String>,

    /// Access pattern and mix.
    #[arg(long, value_enum, default_value_t = RwMode::Randread)]
    pub rw: RwMode,

    /// Percentage of writes for --rw readwrite/randrw (DiskSpd's -w). Default 50.
    #[arg(long, value_name = "PCT")]
    pub write_pct: Option<u8>,

    /// Block size (K/M suffixes are powers of two).
    #[arg(long, value_parser = size_arg, default_value = "4K")]
    pub bs: u64,

    /// Offset alignment for random I/O (default: the block size).
    #[arg(long, value_parser = size_arg)]
    pub align: Option<u64>,

    /// Threads per target.
    #[arg(long, short = 't', default_value_t = 1)]
    pub threads: u32,

    /// Outstanding I/Os per thread (queue depth).
    #[arg(long, default_value_t = 1)]
    pub qd: u32,

    /// Measured time.
    #[arg(long, short = 'd', value_parser = duration_arg, default_value = "10s")]
    pub duration: Duration,

    /// Time run first and excluded from the results.
    #[arg(long, value_parser = duration_arg, default_value = "0s")]
    pub warmup: Duration,

    /// Seed for offsets and data (same seed, same I/O stream).
    #[arg(long, default_value_t = 0x10517)]
    pub seed: u64,

    /// Page-cache behaviour.
    #[arg(long, value_enum, default_value_t = CacheMode::Direct)]
    pub cache: CacheMode,

    /// I/O engine.
    #[arg(long, value_enum, default_value_t = EngineKind::Uring)]
    pub engine: EngineKind,

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
    /// or compressible:N (N percent of every 4 KiB block compresses away).
    #[arg(long, value_parser = crate::workload::fill_arg, default_value = "random", conflicts_with = "compress_pct")]
    pub fill: FillMode,

    /// Percentage of every written 4 KiB block that compresses away (fio buffer_compress_percentage);
    /// the same as --fill compressible:N.
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub compress_pct: Option<u8>,

    /// Percentage of written 4 KiB blocks that repeat an earlier block (fio dedupe_percentage).
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub dedupe_pct: Option<u8>,

    /// Sequential threads start this far apart (DiskSpd -T); default: each thread gets its own slice.
    #[arg(long, value_parser = size_arg, conflicts_with = "shared_offset")]
    pub thread_stride: Option<u64>,

    /// Sequential threads of a target share one offset and together issue one sequential stream (DiskSpd -si).
    #[arg(long)]
    pub shared_offset: bool,

    /// Make only this percentage of I/Os random; the others continue sequentially from the previous I/O (DiskSpd -rs).
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub random_pct: Option<u8>,

    /// Access skew of random I/O (fio random_distribution): uniform, zipf:THETA, pareto:H,
    /// normal:SIGMA% or hotcold:HOT%/ACCESS% (e.g. hotcold:10/90). Give it once for every
    /// target or once per target, in order.
    #[arg(long, value_name = "DIST", value_parser = crate::workload::distribution::distribution_arg)]
    pub distribution: Vec<crate::workload::Distribution>,

    /// Where the hot blocks of --distribution lie: scattered at random, or packed at the start.
    #[arg(long, value_enum, default_value_t = crate::workload::Placement::Random)]
    pub hot_placement: crate::workload::Placement,

    /// Precondition until steady state before measuring (SNIA PTS): iops|lat|bw:SLOPE%,RANGE%
    /// over a rolling window of 5 rounds, e.g. iops:10%,20%; add ,ROUND,MAX (default 60s,25).
    #[arg(long, value_name = "CRITERION", value_parser = crate::workload::steady::steady_arg)]
    pub steady_state: Option<crate::workload::steady::SteadySpec>,

    /// Cap each thread at this many I/Os per second (fio rate_iops, DiskSpd -g<n>i).
    #[arg(long, value_name = "IOPS", conflicts_with = "rate")]
    pub rate_iops: Option<u64>,

    /// Cap each thread at this many bytes per second, e.g. 50M (fio rate, DiskSpd -g).
    #[arg(long, value_name = "BYTES", value_parser = size_arg)]
    pub rate: Option<u64>,

    /// Issue I/Os in bursts of N, with --think between bursts (DiskSpd -i).
    #[arg(long, value_name = "N", default_value_t = 0, requires = "think")]
    pub burst: u32,

    /// Pause between bursts (DiskSpd -j, fio thinktime), e.g. 5ms; without --burst, after every I/O.
    #[arg(long, value_parser = duration_arg, value_name = "TIME")]
    pub think: Option<Duration>,

    /// Allow writing to block devices and to files iosim did not create.
    #[arg(long)]
    pub allow_destroy: bool,

    /// Pin worker threads to these CPUs, round-robin (e.g. 0,2-3).
    #[arg(long, value_parser = cpu_list_value)]
    pub cpus: Option<CpuList>,

    /// io_uring: kernel submission thread (SQPOLL).
    #[arg(long)]
    pub sqpoll: bool,

    /// io_uring: polled completions (needs direct I/O and NVMe poll queues).
    #[arg(long)]
    pub hipri: bool,

    /// Stop each thread after this many measured I/Os.
    #[arg(long)]
    pub number_ios: Option<u64>,

    /// Submit at most N queued I/Os per system call (fio's iodepth_batch_submit).
    /// 1 hands each I/O to the device as soon as it is ready, like a database
    /// engine, SQLIO and fio do; 0 submits all free slots at once, which costs
    /// less CPU per I/O but lets the device idle while a group is prepared.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub submit_batch: u32,

    /// Time-series interval.
    #[arg(long, value_parser = duration_arg, default_value = "1s")]
    pub interval: Duration,

    /// Also write the time series (per interval, total and per target) to this CSV file.
    #[arg(long, value_name = "FILE")]
    pub series: Option<PathBuf>,

    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,

    /// History database.
    #[command(flatten)]
    pub save: crate::store::cmd::SaveArgs,

    /// Regression guard.
    #[command(flatten)]
    pub guard: crate::store::cmd::BaselineArgs,
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
            duration: self.duration,
            warmup: self.warmup,
            seed: self.seed,
            cache: self.cache,
            engine: self.engine,
            fill: self.compress_pct.map_or(self.fill, FillMode::Compressible),
            seq_layout: if self.shared_offset {
                SeqLayout::Shared
            } else {
                self.thread_stride
                    .map_or(SeqLayout::Split, SeqLayout::Stride)
            },
            allow_destroy: self.allow_destroy,
            cpus: self.cpus.clone().map(|c| c.0).unwrap_or_default(),
            sqpoll: self.sqpoll,
            hipri: self.hipri,
            io_limit: self.number_ios,
            submit_batch: self.submit_batch,
            rate_iops: self.rate_iops,
            rate_bytes: self.rate,
            burst: self.burst,
            think: self.think.unwrap_or(Duration::ZERO),
            random_pct: self.random_pct,
            shape: crate::workload::Shape {
                distribution: self.distribution.first().copied().unwrap_or_default(),
                placement: self.hot_placement,
                dedupe_pct: self.dedupe_pct.unwrap_or(0),
                steady_state: self.steady_state,
            },
        };
        spec.validate()?;
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(args).unwrap()
    }

    #[test]
    fn no_arguments_is_quick() {
        let c = parse(&["iosim"]);
        assert!(c.command.is_none());
        assert_eq!(c.quick.size, 1 << 30);
    }

    #[test]
    fn run_builds_a_spec() {
        let c = parse(&[
            "iosim",
            "run",
            "/tmp/a",
            "/tmp/b",
            "--rw",
            "randrw",
            "--write-pct",
            "30",
            "--bs",
            "8K",
            "--qd",
            "16",
            "--threads",
            "4",
            "--size",
            "2G",
            "--cache",
            "direct-writethrough",
            "--cpus",
            "0-1",
        ]);
        let Some(Command::Run(r)) = c.command else {
            panic!()
        };
        let s = r.to_spec().unwrap();
        assert_eq!(s.targets.len(), 2);
        assert_eq!(s.write_pct, 30);
        assert_eq!(s.bs, 8192);
        assert_eq!(s.qd, 16);
        assert_eq!(s.threads, 4);
        assert_eq!(s.targets[1].size, Some(2 << 30));
        assert_eq!(s.cache, CacheMode::DirectWritethrough);
        assert_eq!(s.cpus, vec![0, 1]);
    }

    #[test]
    fn write_pct_needs_a_mix() {
        let c = parse(&[
            "iosim",
            "run",
            "/tmp/a",
            "--rw",
            "randread",
            "--write-pct",
            "30",
        ]);
        let Some(Command::Run(r)) = c.command else {
            panic!()
        };
        assert!(r.to_spec().unwrap_err().to_string().contains("randrw"));
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(Cli::try_parse_from(["iosim", "run", "x", "--bs", "4Q"]).is_err());
        assert!(Cli::try_parse_from(["iosim", "run", "x", "--frobnicate"]).is_err());
        assert!(Cli::try_parse_from(["iosim", "run", "x", "--duration", "forever"]).is_err());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_list_arg("0,2,4-6").unwrap(), vec![0, 2, 4, 5, 6]);
        assert!(cpu_list_arg("3-1").is_err());
        assert!(cpu_list_arg("x").is_err());
    }
}
