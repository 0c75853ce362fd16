//! `iosim quick` (and `iosim` with no command): the default benchmark.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::db::SaveArgs;
use super::output::OutputArgs;
use super::values::{duration_arg, size_arg};
use crate::workload::{CacheMode, EngineKind};

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
    #[arg(long, value_enum, default_value_t = EngineKind::Auto)]
    pub engine: EngineKind,

    /// Cache mode (falls back to buffered, with a notice, where direct I/O is impossible).
    #[arg(long, value_enum, default_value_t = CacheMode::Direct)]
    pub cache: CacheMode,

    /// Name of the test file inside the directory.
    #[arg(long, default_value = "iosim-testfile.dat")]
    pub file: String,

    /// Allow the test file to be a file iosim did not create (its data is overwritten), as `iosim run --allow-destroy`.
    #[arg(long)]
    pub allow_destroy: bool,

    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,

    /// History database.
    #[command(flatten)]
    pub save: SaveArgs,
}
