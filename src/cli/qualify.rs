//! `iosim qualify`: is this storage fit for a database? One command, one verdict.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};

use super::db::SaveArgs;
use super::output::OutputArgs;
use super::values::{duration_arg, size_arg};
use crate::dbms::Dbms;
use crate::qualify::rules::RuleSet;
use crate::workload::EngineKind;

impl ValueEnum for Dbms {
    fn value_variants<'a>() -> &'a [Self] {
        Dbms::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = self.help();
        Some(
            PossibleValue::new(self.name())
                .aliases(self.aliases().iter().copied())
                .help(help),
        )
    }
}

impl ValueEnum for RuleSet {
    fn value_variants<'a>() -> &'a [Self] {
        &RuleSet::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            RuleSet::Classic => {
                "Limits any healthy array meets, disk or flash: data means 10/20 ms, log writes 2/4 ms (default)"
            }
            RuleSet::Flash => {
                "Flash-era storage: data means 1/5 ms, log writes 1/2 ms, shorter tails"
            }
        };
        Some(PossibleValue::new(self.name()).help(help))
    }
}

/// `iosim qualify`.
#[derive(Debug, Clone, Args)]
pub struct QualifyArgs {
    /// Where the data files go (etcd's backend): a directory (a test file is created in it) or a
    /// block device.
    #[arg(long, value_name = "DIR|DEV")]
    pub data: PathBuf,

    /// Where the transaction log goes: PostgreSQL's and etcd's WAL, InnoDB's and Oracle's redo
    /// (default: beside the data, which the verdict then points out).
    #[arg(long, value_name = "DIR|DEV", visible_aliases = ["wal", "redo"])]
    pub log: Option<PathBuf>,

    /// The database to qualify for: its roles, workloads, cache modes and rules
    /// (docs/qualify-storage.md). Default: the first --profile's `dbms`, else sqlserver.
    #[arg(long, value_enum)]
    pub dbms: Option<Dbms>,

    /// Judge the storage on your own workload: a profile file (`iosim fingerprint --out`
    /// writes one from a trace of your database) or a built-in profile's name, run in the
    /// profiles stage instead of the database's own; repeat for several. Each target runs
    /// on the location of its workloads' role (a role the database has not goes on --data).
    #[arg(long, value_name = "FILE|NAME")]
    pub profile: Vec<String>,

    /// Add a noisy-neighbour stage: on each location, 8 KiB random reads at QD 1 alone,
    /// then beside this background workload (run's --neighbour SPEC), 5 s each, after the
    /// budgeted stages; a p99 that grows 2x or more is a warning (docs/qualify-storage.md).
    #[arg(long, value_name = "SPEC", value_parser = crate::neighbour::neighbour_arg)]
    pub neighbour: Option<crate::neighbour::NeighbourSpec>,

    /// Print what the qualification would run (the database and its settings, the roles'
    /// test targets, the stages with their runs and share of --time, the minimum budget,
    /// the rules) and exit, without creating or measuring anything.
    #[arg(long)]
    pub plan: bool,

    /// Where tempdb goes (judged as its own role when given; SQL Server only).
    #[arg(long, value_name = "DIR|DEV")]
    pub tempdb: Option<PathBuf>,

    /// Where backups go (backup and restore are measured when given; SQL Server only).
    #[arg(long, value_name = "DIR|DEV")]
    pub backup: Option<PathBuf>,

    /// Time budget of the measurements (10m, 30m, 2h...): split across the stages in
    /// fixed proportions; creating the test files comes on top and is reported.
    #[arg(long, value_parser = duration_arg, default_value = "10m")]
    pub time: Duration,

    /// Size of each test file created in a directory, at least 1M (devices are used whole).
    #[arg(long, value_parser = size_arg, default_value = "1G")]
    pub size: u64,

    /// I/O engine.
    #[arg(long, value_enum, default_value_t = EngineKind::Auto)]
    pub engine: EngineKind,

    /// The latency table of the verdict (means, p99, p99.9, maximum; docs/qualify-storage.md).
    /// I/Os over 1 s warn and over 15 s are NOT FIT with either.
    #[arg(long, value_enum, default_value_t = RuleSet::Classic)]
    pub rules: RuleSet,
    /// The cache in front of the disks (a SAN array's, a RAID controller's): a test file or
    /// device under 3 times it gets a warning that the numbers may describe the cache
    /// (without it, the file is held against this host's memory).
    #[arg(long, value_parser = size_arg, value_name = "SIZE")]
    pub cache_size: Option<u64>,

    /// The database's own cache (buffer pool, shared_buffers) against its data, e.g. 8G/100G
    /// (or PCT%): the profiles' page reads that it would serve are not issued, as the database
    /// would not issue them (docs/workloads.md, --db-cache). Only for profiles whose workloads
    /// say the cache they were measured at.
    #[arg(long, value_name = "CACHE/DATA|PCT%", value_parser = crate::workload::DbCache::parse)]
    pub db_cache: Option<crate::workload::DbCache>,

    /// The database's commits (transactions) a second: the profiles' workloads that follow
    /// the commits (the log's) run at this rate instead of the one they were measured at.
    /// Only for profiles that say their commit rate.
    #[arg(long, value_name = "N", value_parser = super::values::commit_rate_arg)]
    pub commit_rate: Option<f64>,

    /// The client sessions your database serves (pgbench -c, sysbench --threads): the
    /// profiles' workloads that follow the clients (their sessions' reads, a group-committed
    /// log) are scaled from the clients they were measured with. Only for profiles that say
    /// their clients (postgresql-oltp).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub clients: Option<u32>,

    /// Also write a self-contained HTML report (verdict first, then the evidence with charts).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Compare with an earlier qualification: a run id, or `latest` (the newest stored
    /// qualification). Resolved before anything runs. Exit 4 if a role's verdict got worse,
    /// or a workload's IOPS or mean latency got worse by more than --threshold.
    #[arg(long, value_name = "ID|latest")]
    pub baseline: Option<String>,

    /// Allowed regression for --baseline, percent.
    #[arg(long, value_name = "PCT", default_value_t = 10.0, value_parser = super::values::non_negative_arg)]
    pub threshold: f64,

    /// Keep the test files created in the directories (default: removed at the end).
    #[arg(long)]
    pub keep_files: bool,

    /// Allow writing to block devices (every byte of a device given may be overwritten).
    #[arg(long)]
    pub allow_destroy: bool,

    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,

    /// History database.
    #[command(flatten)]
    pub save: SaveArgs,

    /// Live metrics.
    #[command(flatten)]
    pub metrics: super::metrics::MetricsArgs,
}
