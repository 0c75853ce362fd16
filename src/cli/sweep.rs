//! `iosim sweep`: vary workload parameters and find the knee.

use std::path::PathBuf;

use clap::Args;

use super::run::RunArgs;
use super::values::{latency_arg, non_negative_arg};

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
    #[arg(long, default_value_t = crate::sweep::analysis::DEFAULT_KNEE_ELASTICITY, value_parser = non_negative_arg)]
    pub knee_threshold: f64,

    /// Also write the table as CSV to this file.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// The workload each point starts from.
    #[command(flatten)]
    pub run: RunArgs,
}
