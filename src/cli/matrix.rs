//! `iosim matrix`: ORION's load matrix.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};

use super::db::SaveArgs;
use super::output::OutputArgs;
use super::values::{duration_arg, size_arg};
use crate::matrix::{MatrixConfig, MatrixKind};
use crate::workload::{CacheMode, EngineKind};

impl ValueEnum for MatrixKind {
    fn value_variants<'a>() -> &'a [Self] {
        &[MatrixKind::Basic, MatrixKind::Detailed]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            MatrixKind::Basic => {
                PossibleValue::new("basic").help("Small alone (row 0) and large alone (column 0)")
            }
            MatrixKind::Detailed => {
                PossibleValue::new("detailed").help("Every combination of small and large levels")
            }
        })
    }
}

/// A list of load levels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Levels(pub Vec<u32>);

/// Parses a level list for clap.
pub fn levels_value(s: &str) -> Result<Levels, String> {
    levels_arg(s).map(Levels)
}

/// Parses a comma-separated list of levels (`1,2,4,8`).
pub fn levels_arg(s: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let v: u32 = part
            .parse()
            .map_err(|_| format!("invalid level list '{s}': use whole numbers such as 0,1,2,4"))?;
        if v > crate::workload::MAX_QD {
            return Err(format!(
                "level {v} is too high: at most {}",
                crate::workload::MAX_QD
            ));
        }
        out.push(v);
    }
    if out.is_empty() {
        return Err(format!("invalid level list '{s}': it names no level"));
    }
    Ok(out)
}

/// `iosim matrix`.
#[derive(Debug, Clone, Args)]
pub struct MatrixArgs {
    /// The file or block device (a missing file is created with --size).
    pub target: PathBuf,

    /// Size of the file to create.
    #[arg(long, value_parser = size_arg)]
    pub size: Option<u64>,

    /// Small I/O size (random; ORION's -size_small).
    #[arg(long, value_parser = size_arg, default_value = "8K")]
    pub small_bs: u64,

    /// Large I/O size (sequential streams; ORION's -size_large).
    #[arg(long, value_parser = size_arg, default_value = "1M")]
    pub large_bs: u64,

    /// Small loads: outstanding random I/Os (0 is always added: large alone).
    #[arg(long, value_parser = levels_value, default_value = "1,2,4,8,16,32")]
    pub small_levels: Levels,

    /// Large loads: sequential streams of 4 outstanding I/Os each (0 is always added: small alone).
    #[arg(long, value_parser = levels_value, default_value = "0,1,2,4")]
    pub large_levels: Levels,

    /// Measured time of each point.
    #[arg(long, short = 'd', value_parser = duration_arg, default_value = "5s")]
    pub duration: Duration,

    /// Unmeasured time before each point.
    #[arg(long, value_parser = duration_arg, default_value = "0s")]
    pub warmup: Duration,

    /// basic: each load alone; detailed: every combination.
    #[arg(long, value_enum, default_value_t = MatrixKind::Basic)]
    pub matrix: MatrixKind,

    /// Percentage of writes in both loads (ORION's -write; writes destroy data on foreign files).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=100))]
    pub write_pct: u8,

    /// Output files: PREFIX_iops.csv, PREFIX_mbps.csv, PREFIX_lat.csv, PREFIX_summary.txt.
    #[arg(long, value_name = "PREFIX", default_value = "iosim-matrix")]
    pub out: PathBuf,

    /// Page-cache behaviour.
    #[arg(long, value_enum, default_value_t = CacheMode::Direct)]
    pub cache: CacheMode,

    /// I/O engine.
    #[arg(long, value_enum, default_value_t = EngineKind::Auto)]
    pub engine: EngineKind,

    /// Seed for offsets and data.
    #[arg(long, default_value_t = 0x10517)]
    pub seed: u64,

    /// Allow writing to block devices and to files iosim did not create.
    #[arg(long)]
    pub allow_destroy: bool,

    /// Output.
    #[command(flatten)]
    pub output: OutputArgs,

    /// History database (stored as kind `matrix`).
    #[command(flatten)]
    pub save: SaveArgs,
}

impl MatrixArgs {
    /// The matrix these options describe.
    pub fn to_config(&self) -> MatrixConfig {
        MatrixConfig {
            target: self.target.clone(),
            size: self.size,
            small_bs: self.small_bs,
            large_bs: self.large_bs,
            small_levels: self.small_levels.0.clone(),
            large_levels: self.large_levels.0.clone(),
            duration: self.duration,
            warmup: self.warmup,
            matrix: self.matrix,
            write_pct: self.write_pct,
            cache: self.cache,
            engine: self.engine,
            seed: self.seed,
            allow_destroy: self.allow_destroy,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_parses() {
        use clap::Parser;
        let c = crate::cli::Cli::try_parse_from([
            "iosim",
            "matrix",
            "/x",
            "--small-levels",
            "1,8",
            "--matrix",
            "detailed",
        ])
        .unwrap();
        let Some(crate::cli::Command::Matrix(m)) = c.command else {
            panic!()
        };
        assert_eq!(m.small_levels.0, vec![1, 8]);
        assert_eq!(m.large_levels.0, vec![0, 1, 2, 4]);
        assert_eq!(m.matrix, MatrixKind::Detailed);
        assert_eq!(m.small_bs, 8192);
    }

    #[test]
    fn levels_parse_and_normalise() {
        assert_eq!(levels_arg("1, 2,4").unwrap(), vec![1, 2, 4]);
        assert!(levels_arg("x").is_err());
        assert!(levels_arg("").is_err());
    }
}
