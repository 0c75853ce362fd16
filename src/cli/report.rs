//! `iosim report`: the HTML report and single charts.

use std::path::PathBuf;

use clap::Args;

use super::db::DbArgs;
use super::output::OutputFormat;

/// What `iosim report -o` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// The self-contained HTML report with its charts.
    Html,
    /// The documents themselves, in one of the result formats.
    Doc(OutputFormat),
}

/// Parses `-o`: a format, never a file name (that is `--out`).
fn report_format(s: &str) -> Result<ReportFormat, String> {
    Ok(match s {
        "html" => ReportFormat::Html,
        "json" => ReportFormat::Doc(OutputFormat::Json),
        "text" => ReportFormat::Doc(OutputFormat::Text),
        "csv" => ReportFormat::Doc(OutputFormat::Csv),
        other => {
            return Err(format!(
                "'{other}' is not a report format: -o takes html (default), json, text or csv; \
                 to write the report to a file use --out {other}"
            ))
        }
    })
}

/// `iosim report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Database.
    #[command(flatten)]
    pub db: DbArgs,
    /// Runs to show (ids, `last`, `label:NAME`, `group:N`); charts overlay them.
    #[arg(required_unless_present = "hist_log")]
    pub runs: Vec<String>,
    /// Output format: html (default), or the stored documents as json, text or csv
    /// (as `iosim show` prints them).
    #[arg(long, short = 'o', value_name = "FORMAT", default_value = "html", value_parser = report_format)]
    pub output: ReportFormat,
    /// Write the report to this file (default: stdout, unless --svg or --png is given).
    #[arg(long, value_name = "FILE")]
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
    /// Report a histogram log (iosim run --hist-log) instead of stored runs:
    /// its streams merged and latency over time (p50, p99, max per interval), as HTML.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["runs", "svg", "png"])]
    pub hist_log: Option<PathBuf>,
}
