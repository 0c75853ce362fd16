//! `iosim crash write|verify`: arguments and handler.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};

use super::{check, writer};
use crate::cli::{duration_arg, size_arg, OutputFormat};
use crate::workload::CacheMode;

/// Exit code of a FAIL verdict.
pub const EXIT_FAIL: u8 = 3;
/// Exit code when the acknowledgement log was damaged in the middle (the verdict may miss writes).
pub const EXIT_ACKS_DAMAGED: u8 = 5;

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

    /// Buffered writes per fdatasync/fsync.
    #[arg(long, default_value_t = 8)]
    pub sync_batch: u32,

    /// Write the acknowledgements to this file (fdatasync'ed per batch; put it on another mount
    /// or machine) instead of standard output.
    #[arg(long, value_name = "PATH")]
    pub acks: Option<PathBuf>,

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
    pub save: crate::store::cmd::SaveArgs,
}

/// Runs `iosim crash ...`; returns the exit code.
pub fn main(a: &CrashArgs, stop: &AtomicBool, out: &mut dyn Write) -> anyhow::Result<u8> {
    match &a.action {
        CrashAction::Write(w) => {
            let cfg = writer::WriteConfig {
                targets: w.targets.clone(),
                size: w.size,
                log_size: w.log_size,
                mix: w.mix,
                sync_batch: w.sync_batch,
                direct: w.cache == CrashCache::Direct,
                duration: w.duration,
                torn_protection: w.torn_protection,
                allow_destroy: w.allow_destroy,
                seed: w.seed,
                acks: w.acks.clone(),
                quiet: w.quiet,
            };
            let s = writer::run(&cfg, stop)?;
            if !w.quiet {
                eprintln!(
                    "iosim crash write: stopped ({}) after {:.1} s: {} writes acknowledged (dsync {}, fdatasync {}, fsync {}, log {})",
                    s.reason,
                    s.secs,
                    s.acked.iter().sum::<u64>(),
                    s.acked[0],
                    s.acked[1],
                    s.acked[2],
                    s.acked[3]
                );
            }
            Ok(if s.reason == "interrupted" { 130 } else { 0 })
        }
        CrashAction::Verify(v) => {
            if v.output == OutputFormat::Csv {
                anyhow::bail!(
                    "iosim crash verify prints text or json: use --output text or --output json"
                );
            }
            let cache = match v.cache {
                CrashCache::Direct => CacheMode::Direct,
                CrashCache::Buffered => CacheMode::Buffered,
            };
            let res = check::verify(&v.targets, &v.acks, cache, stop)?;
            match v.output {
                OutputFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(&res)?)?,
                _ => write!(out, "{}", check::text(&res))?,
            }
            out.flush()?;
            crate::store::cmd::save_result(&v.save, "crash", &serde_json::to_value(&res)?);
            Ok(if !res.passed() {
                EXIT_FAIL
            } else if !res.acks.damage.is_empty() {
                EXIT_ACKS_DAMAGED
            } else {
                0
            })
        }
    }
}
