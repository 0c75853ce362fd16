//! `iosim history`, `iosim show`, `iosim compare`: reading the history database.

use clap::Args;

use super::db::DbArgs;
use super::output::OutputFormat;
use crate::document::Kind;

/// `iosim history`.
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HistoryArgs {
    /// `delete`; none lists the runs.
    #[command(subcommand)]
    pub action: Option<HistoryAction>,
    /// Database.
    #[command(flatten)]
    pub db: DbArgs,
    /// Only this kind of result (the command that made it).
    #[arg(long, value_enum)]
    pub kind: Option<Kind>,
    /// Target path contains.
    #[arg(long)]
    pub target: Option<String>,
    /// Device model contains.
    #[arg(long)]
    pub device: Option<String>,
    /// Profile contains.
    #[arg(long)]
    pub profile: Option<String>,
    /// Label contains.
    #[arg(long)]
    pub label: Option<String>,
    /// Host contains.
    #[arg(long)]
    pub host: Option<String>,
    /// Started on or after this date (2026-11-01, 2026-11-01T12:00).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Started on or before this date (2026-11-30 includes that day).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Newest N (0: all).
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// What `iosim history` does besides listing.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum HistoryAction {
    /// Delete stored runs by id (as `iosim history` lists them); all or
    /// none: an id that is not stored deletes nothing.
    Delete(HistoryDeleteArgs),
}

/// `iosim history delete ID...`.
#[derive(Debug, Clone, Args)]
pub struct HistoryDeleteArgs {
    /// Database.
    #[command(flatten)]
    pub db: DbArgs,
    /// Run ids (42 or #42), as `iosim history` lists them.
    #[arg(required = true, num_args = 1.., value_name = "ID", value_parser = run_id)]
    pub ids: Vec<i64>,
}

/// A run id: `42` or `#42` (not `last` or `label:`: deleting is by id only).
fn run_id(s: &str) -> Result<i64, String> {
    s.trim()
        .strip_prefix('#')
        .unwrap_or(s.trim())
        .parse::<i64>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            format!("'{s}' is not a run id: delete takes the ids `iosim history` lists (42 or #42), not last, label: or group:")
        })
}

/// `iosim show`.
#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// Database.
    #[command(flatten)]
    pub db: DbArgs,
    /// Run: an id, `last`, `label:NAME` or `group:N`.
    #[arg(required_unless_present = "hist_log")]
    pub run: Option<String>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// Read this histogram log (iosim run --hist-log) instead of a stored
    /// run: its intervals, span and every stream's merged percentiles.
    #[arg(long, value_name = "FILE", conflicts_with = "run")]
    pub hist_log: Option<std::path::PathBuf>,
    /// With --hist-log: one line per interval too (start, I/Os, p50, p99, max).
    #[arg(long, requires = "hist_log")]
    pub intervals: bool,
}

/// `iosim compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Database.
    #[command(flatten)]
    pub db: DbArgs,
    /// Two or more runs; the first is the reference. `label:NAME` or `group:N` are repetitions.
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<String>,
    /// Exit 4 if a later run regressed against the first beyond PCT percent: IOPS, MiB/s or
    /// p99 latency, as `run --baseline` checks; for qualifications, a role's verdict that got
    /// worse or a workload's IOPS or mean latency.
    #[arg(long, value_name = "PCT", value_parser = super::values::non_negative_arg)]
    pub threshold: Option<f64>,
    /// Output format (text or json).
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}
