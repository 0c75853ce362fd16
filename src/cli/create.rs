//! `iosim create`: make a test file without running anything.

use std::path::PathBuf;

use clap::Args;

use super::values::size_arg;
use crate::workload::FillMode;

/// `iosim create`.
#[derive(Debug, Clone, Args)]
pub struct CreateArgs {
    /// The file to create (must not exist).
    pub path: PathBuf,

    /// Its size.
    #[arg(long, value_parser = size_arg)]
    pub size: u64,

    /// What to fill it with: random, zero, pattern:HEX or compressible:N (percent of each 4 KiB block that compresses away).
    #[arg(long, value_parser = crate::workload::fill_arg, default_value = "random")]
    pub fill: FillMode,

    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}
