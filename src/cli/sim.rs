//! `iosim sim` command-line options (SQLIOSim's `-cfg`, `-dir`, `-d`,
//! `-size`, `-log` become `--config`, `--dir`, `--duration`, `--size`, `--log`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use super::db::SaveArgs;
use super::output::OutputArgs;
use super::values::duration_arg;
use crate::engine::faulty::Fault;
use crate::sim::config::{self, SimConfig};
use crate::sim::config_parse;
use crate::workload::EngineKind;

/// Parses SQLIOSim's `-size`: MB as a plain number, or a size with a suffix.
pub fn size_mb_arg(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Ok(n.max(1));
    }
    crate::units::parse_size(t)
        .map(|b| (b >> 20).max(1))
        .map_err(|e| e.to_string())
}

fn fault_arg(s: &str) -> Result<Fault, String> {
    Fault::parse(s)
}

/// `iosim sim`.
#[derive(Debug, Clone, Args)]
pub struct SimArgs {
    /// Configuration: SQLIOSim INI (sqliosim.cfg.ini) or native TOML (*.toml).
    /// Without one: one data and one log file in the current directory.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Put the files in this directory, as SQLIOSim's -dir (repeatable): `--dir DATA --dir LOG`
    /// puts the data files in the first and the log in the second (with more, the last plain DIR
    /// is the log's); `data=DIR` and `log=DIR` name the role (each data directory gets every data file).
    #[arg(long, value_name = "[data=|log=]DIR")]
    pub dir: Vec<PathBuf>,

    /// Timed part of each cycle (TestCycleDuration), as SQLIOSim's -d.
    #[arg(long, short = 'd', value_parser = duration_arg)]
    pub duration: Option<Duration>,

    /// Data file size in MB (grows to twice that; the log is half, at most 50 MB), as SQLIOSim's -size.
    #[arg(long, value_parser = size_mb_arg, value_name = "MB")]
    pub size: Option<u64>,

    /// Error log (SQLIOSim's XML; JSON lines for a .jsonl name; dump files go beside it), as SQLIOSim's -log.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Cycles (TestCycles; 0 = until interrupted).
    #[arg(long)]
    pub cycles: Option<u64>,

    /// I/O engine (default: the config's Engine, else uring).
    #[arg(long, value_enum)]
    pub engine: Option<EngineKind>,

    /// Seed of page contents and user decisions.
    #[arg(long)]
    pub seed: Option<u64>,

    /// Read retries before a failed check is reported (SQLIOSim: 15); a check
    /// that a retry passes is reported as read_retry (a fault in the read path).
    #[arg(long)]
    pub retries: Option<u64>,

    /// Do not verify pages (only to measure what verification costs).
    #[arg(long)]
    pub no_verify: bool,

    /// Inject a fault to prove detection: KIND[:file=N,page=P,to=Q,skip=S,count=C,rate=R]
    /// with KIND one of bit-flip, torn, misdirect, lost-write, short-read, not-read, zero-read, eio, delay (with ms=N)
    /// (file is the [FileN] number, by default the first data file; repeatable).
    #[arg(long, value_parser = fault_arg, value_name = "FAULT")]
    pub inject: Vec<Fault>,

    /// Dump files written at most (expected and received page images, beside the error log);
    /// later errors are logged without one. 0 = none.
    #[arg(long, default_value_t = crate::sim::DEFAULT_MAX_DUMPS, value_name = "N")]
    pub max_dumps: u64,

    /// Seconds after which an outstanding I/O is reported (SQLIOSim: 15).
    #[arg(long, default_value_t = 15, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=crate::units::MAX_DURATION_S))]
    pub long_io: u64,

    /// Allow overwriting or deleting files and devices iosim did not create.
    #[arg(long)]
    pub allow_destroy: bool,

    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,

    /// Where the result is stored (history database).
    #[command(flatten)]
    pub save: SaveArgs,

    /// Live metrics.
    #[command(flatten)]
    pub metrics: super::metrics::MetricsArgs,
}

impl SimArgs {
    /// Builds the configuration: file (or defaults), then command-line overrides.
    /// Returns it with the warnings to show.
    pub fn to_config(&self) -> anyhow::Result<(SimConfig, Vec<String>)> {
        let (mut cfg, mut warnings) = match &self.config {
            Some(p) => config_parse::load(p)?,
            None => (SimConfig::default(), Vec::new()),
        };
        if cfg.files.is_empty() {
            cfg.files = config::default_files(Path::new(""), self.size);
        } else if let Some(mb) = self.size {
            for f in &mut cfg.files {
                if f.log_file {
                    f.initial_mb = (mb / 2).clamp(1, 50);
                    f.max_mb = f.initial_mb;
                } else {
                    f.initial_mb = mb;
                    f.max_mb = mb.saturating_mul(2);
                }
            }
        }
        if !self.dir.is_empty() {
            let mut dirs = Vec::new();
            for d in &self.dir {
                let (role, d) = crate::sim::files::parse_dir(&d.to_string_lossy());
                if let Err(e) = crate::target::check_directory(&d) {
                    let hint = match e {
                        crate::Error::NotADirectory { .. } => {
                            "; to name the files themselves (a file or a block device), give them as FileName= in a --config file"
                        }
                        _ => "",
                    };
                    anyhow::bail!("--dir: {e}{hint}");
                }
                dirs.push((role, d));
            }
            let (files, note) =
                crate::sim::files::place_in_dirs(&cfg.files, &dirs).map_err(anyhow::Error::msg)?;
            cfg.files = files;
            warnings.extend(note);
        }
        if let Some(d) = self.duration {
            cfg.test_cycle_duration = d;
        }
        if let Some(l) = &self.log {
            cfg.error_file = l.clone();
            warnings.retain(|w| !w.contains("ErrorFile"));
        }
        if let Some(c) = self.cycles {
            cfg.test_cycles = c;
        }
        if let Some(e) = self.engine {
            if e == EngineKind::Null {
                anyhow::bail!("--engine null cannot simulate a database: pages must really be stored; use uring or sync");
            }
            if e == EngineKind::Mmap {
                anyhow::bail!(
                    "--engine mmap cannot do the simulator's scatter/gather I/O: use uring or sync"
                );
            }
            cfg.engine = e;
        }
        if let Some(s) = self.seed {
            cfg.seed = s;
        }
        if let Some(r) = self.retries {
            cfg.read_retries = r;
        }
        if self.no_verify {
            cfg.verify = false;
        }
        warnings.extend(cfg.finalize()?);
        Ok((cfg, warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: SimArgs,
    }

    #[test]
    fn overrides_apply() {
        let t = T::try_parse_from([
            "x",
            "--size",
            "64",
            "--duration",
            "3",
            "--log",
            "/tmp/e.jsonl",
            "--cycles",
            "2",
            "--inject",
            "torn:file=1,page=3",
        ])
        .unwrap();
        let (c, _) = t.a.to_config().unwrap();
        assert_eq!(c.files[0].initial_mb, 64);
        assert_eq!(c.files[0].max_mb, 128);
        assert_eq!(c.files[1].initial_mb, 32);
        assert_eq!(c.test_cycle_duration, Duration::from_secs(3));
        assert_eq!(c.error_file, PathBuf::from("/tmp/e.jsonl"));
        assert_eq!(c.test_cycles, 2);
        assert_eq!(t.a.inject.len(), 1);
        assert_eq!(size_mb_arg("1G").unwrap(), 1024);
    }

    #[test]
    fn dirs_get_their_roles() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let t = T::try_parse_from([
            "x",
            "--dir",
            a.path().to_str().unwrap(),
            "--dir",
            b.path().to_str().unwrap(),
        ])
        .unwrap();
        let (c, _) = t.a.to_config().unwrap();
        assert_eq!(
            c.files.len(),
            2,
            "the data in the first, the log in the second"
        );
        assert!(c.files[0].name.starts_with(a.path()) && !c.files[0].log_file);
        assert!(c.files[1].name.starts_with(b.path()) && c.files[1].log_file);
        let t = T::try_parse_from([
            "x",
            "--dir",
            &format!("data={}", a.path().display()),
            "--dir",
            &format!("log={}", b.path().display()),
        ])
        .unwrap();
        let (c, _) = t.a.to_config().unwrap();
        assert_eq!(c.files.len(), 2);
        assert!(c.files[0].name.starts_with(a.path()) && !c.files[0].log_file);
        assert!(c.files[1].name.starts_with(b.path()) && c.files[1].log_file);
        let t = T::try_parse_from(["x", "--dir", "/nonexistent/zz"]).unwrap();
        assert!(t.a.to_config().is_err());
    }
}
