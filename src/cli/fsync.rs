//! `iosim fsync`: how fast each sync method makes a WAL write durable (pg_test_fsync's question).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::db::SaveArgs;
use super::output::OutputArgs;
use super::values::{duration_arg, size_arg};

/// `iosim fsync`.
#[derive(Debug, Clone, Args)]
pub struct FsyncArgs {
    /// Where to test: a directory (the test file iosim-fsync.dat is created
    /// in it and removed at the end) or a file path (default: the current directory).
    pub path: Option<PathBuf>,

    /// WAL write size(s) to compare the methods with, comma-separated
    /// (8K: PostgreSQL's WAL block; 16K for InnoDB's redo log pages, 2300 for etcd).
    #[arg(long, value_parser = size_arg, value_delimiter = ',', default_value = "8K")]
    pub bs: Vec<u64>,

    /// Time of each test (pg_test_fsync's --secs-per-test; it defaults to 5s).
    #[arg(long, short = 's', value_parser = duration_arg, default_value = "2s")]
    pub duration: Duration,

    /// Keep the test file after the run.
    #[arg(long)]
    pub keep_file: bool,

    /// Allow the test file to be a file iosim did not create (its first 16 MiB are overwritten).
    #[arg(long)]
    pub allow_destroy: bool,

    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,

    /// History database.
    #[command(flatten)]
    pub save: SaveArgs,
}
