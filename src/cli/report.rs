//! `iosim report`: the HTML report and single charts.

use std::path::PathBuf;

use clap::Args;

use super::db::DbArgs;

/// `iosim report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Database.
    #[command(flatten)]
    pub db: DbArgs,
    /// Runs to show (ids, `last`, `label:NAME`, `group:N`); charts overlay them.
    #[arg(required = true)]
    pub runs: Vec<String>,
    /// Write the HTML report here (default: stdout, unless --svg or --png is given).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Write one chart (--chart) as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Write one chart (--chart) as PNG.
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    /// Chart for --svg/--png: percentiles, histogram, iops, mibs, latency, cpu, sweep-iops, sweep-latency.
    #[arg(long, default_value = "percentiles")]
    pub chart: String,
    /// Chart width for --svg/--png, pixels.
    #[arg(long, default_value_t = 900)]
    pub width: u32,
    /// Chart height for --svg/--png, pixels.
    #[arg(long, default_value_t = 480)]
    pub height: u32,
}
