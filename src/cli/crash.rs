//! `iosim crash write|verify` (docs/crash.md).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};

use super::db::SaveArgs;
use super::output::OutputFormat;
use super::values::{duration_arg, size_arg};
use crate::crash::writer;

/// `iosim crash`.
#[derive(Debug, Clone, Args)]
pub struct CrashArgs {
    /// Write, then (after the crash) verify.
    #[command(subcommand)]
    pub action: CrashAction,
}

/// `iosim crash write|verify`.
#[derive(Debug, Clone, Subcommand)]
pub enum CrashAction {
    /// Write database-shaped pages and stream an acknowledgement per durable write; run until stopped or the power is cut.
    Write(WriteArgs),
    /// After the crash and reboot: read every page back and judge it against the acknowledgements.
    ///
    /// Verdict and exit status: PASS (0) every acknowledged write is there, intact;
    /// FAIL (3) one is lost, corrupt, misdirected, out of order (or torn with
    /// --torn-protection); INCOMPLETE (5) the acknowledgement log is damaged, so
    /// the writes it lost could not be judged (none of the others failed).
    Verify(VerifyArgs),
}

/// Cache mode of the write-through writes and the verification reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CrashCache {
    /// O_DIRECT where the target allows it (O_DIRECT|O_DSYNC writes, as SQL Server opens files).
    Direct,
    /// Through the page cache (O_DSYNC writes).
    Buffered,
}

/// `iosim crash write`.
#[derive(Debug, Clone, Args)]
pub struct WriteArgs {
    /// Files (created when missing) or block devices (need --allow-destroy).
    #[arg(required = true)]
    pub targets: Vec<PathBuf>,

    /// Size of a file to create.
    #[arg(long, value_parser = size_arg, default_value = "256M")]
    pub size: u64,

    /// Bytes of each target used as the log area (default: an eighth of it).
    #[arg(long, value_parser = size_arg)]
    pub log_size: Option<u64>,

    /// Weights of the writes: dsync (O_DSYNC page writes), fdatasync and fsync (buffered page
    /// writes then a sync), log (O_DSYNC sequential log appends).
    #[arg(long, value_parser = writer::parse_mix, default_value = writer::Mix::DEFAULT)]
    pub mix: writer::Mix,

    /// Take the mix from a workload profile (a name from `iosim profile list`, or a .toml file):
    /// log workloads become log appends, write-through ones O_DSYNC page writes, others buffered
    /// writes with fdatasync (fsync for backups), weighted by threads x QD x write share.
    #[arg(long, value_name = "NAME|FILE", conflicts_with = "mix")]
    pub profile: Option<String>,

    /// Buffered writes per fdatasync/fsync.
    #[arg(long, default_value_t = 8)]
    pub sync_batch: u32,

    /// Write the acknowledgements to this file (fdatasync'ed per batch; put it on another mount
    /// or machine) instead of standard output. An existing file is refused: it may be the only
    /// record of the last power-cut test (see --force).
    #[arg(long, value_name = "PATH")]
    pub acks: Option<PathBuf>,

    /// Overwrite the file given to --acks when it exists (its acknowledgements are lost).
    #[arg(long, requires = "acks")]
    pub force: bool,

    /// Stop after this long (default: run until Ctrl-C, SIGTERM or the crash).
    #[arg(long, value_parser = duration_arg)]
    pub duration: Option<Duration>,

    /// Cache mode of the write-through writes.
    #[arg(long, value_enum, default_value_t = CrashCache::Direct)]
    pub cache: CrashCache,

    /// The storage promises atomic 8 KiB page writes: a torn page is then a failure.
    #[arg(long)]
    pub torn_protection: bool,

    /// Allow writing to block devices and to files iosim did not create.
    #[arg(long)]
    pub allow_destroy: bool,

    /// Seed of the page images and offsets (default: from the clock).
    #[arg(long)]
    pub seed: Option<u64>,

    /// No notes on standard error.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Live metrics.
    #[command(flatten)]
    pub metrics: super::metrics::MetricsArgs,
}

/// `iosim crash verify`.
#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    /// The targets, in the writer's order (default: the paths the writer used).
    pub targets: Vec<PathBuf>,

    /// The acknowledgement log the writer streamed.
    #[arg(long, value_name = "FILE")]
    pub acks: PathBuf,

    /// Cache mode of the verification reads.
    #[arg(long, value_enum, default_value_t = CrashCache::Direct)]
    pub cache: CrashCache,

    /// Output format (text or json).
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    /// History database options.
    #[command(flatten)]
    pub save: SaveArgs,
}
