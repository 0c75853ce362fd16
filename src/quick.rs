//! The default benchmark: what `iosim` (and `cargo run --release`) runs with
//! no arguments. One test file, five corner tests, one compact table.

use std::fmt::Write as _;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::runner::{RunOptions, RunResult};
use crate::stats::Percentile;
use crate::workload::{CacheMode, EngineKind, RwMode, TargetSpec, WorkloadSpec};

/// Which corner test: the key other modules look a corner up by. Its JSON
/// is the corner's name in [`SUITE`] (the `name` of a quick test), so
/// documents read and write as they always did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum CornerId {
    /// Sequential 1 MiB reads, 8 in flight.
    SeqRead1M,
    /// Sequential 1 MiB writes, 8 in flight.
    SeqWrite1M,
    /// Random 4 KiB reads, 32 in flight.
    RandRead4KQd32,
    /// Random 4 KiB writes, 32 in flight.
    RandWrite4KQd32,
    /// Random 4 KiB reads, one at a time.
    RandRead4KQd1,
}

impl CornerId {
    /// The corner test in [`SUITE`].
    pub fn corner(self) -> &'static Corner {
        &SUITE[self as usize]
    }

    /// Short name shown in the table (and a quick test's `name` in JSON).
    pub fn name(self) -> &'static str {
        self.corner().name
    }

    /// The corner named `name`, if one is.
    pub fn from_name(name: &str) -> Option<CornerId> {
        SUITE.iter().find(|c| c.name == name).map(|c| c.id)
    }
}

impl std::fmt::Display for CornerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<CornerId> for &'static str {
    fn from(id: CornerId) -> &'static str {
        id.name()
    }
}

impl TryFrom<String> for CornerId {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        CornerId::from_name(&name).ok_or_else(|| format!("'{name}' is not a corner test"))
    }
}

/// One corner test.
#[derive(Clone, Copy, Debug)]
pub struct Corner {
    /// Which one.
    pub id: CornerId,
    /// Short name shown in the table.
    pub name: &'static str,
    /// Pattern.
    pub rw: RwMode,
    /// Block size.
    pub bs: u64,
    /// Queue depth.
    pub qd: u32,
}

/// The suite, in the order it runs (and of [`CornerId`]'s variants).
pub const SUITE: [Corner; 5] = [
    Corner {
        id: CornerId::SeqRead1M,
        name: "seq read 1M QD8",
        rw: RwMode::Read,
        bs: 1 << 20,
        qd: 8,
    },
    Corner {
        id: CornerId::SeqWrite1M,
        name: "seq write 1M QD8",
        rw: RwMode::Write,
        bs: 1 << 20,
        qd: 8,
    },
    Corner {
        id: CornerId::RandRead4KQd32,
        name: "rand read 4K QD32",
        rw: RwMode::Randread,
        bs: 4096,
        qd: 32,
    },
    Corner {
        id: CornerId::RandWrite4KQd32,
        name: "rand write 4K QD32",
        rw: RwMode::Randwrite,
        bs: 4096,
        qd: 32,
    },
    Corner {
        id: CornerId::RandRead4KQd1,
        name: "rand read 4K QD1",
        rw: RwMode::Randread,
        bs: 4096,
        qd: 1,
    },
];

/// Settings of the default benchmark.
#[derive(Clone, Debug)]
pub struct QuickConfig {
    /// Test file path.
    pub path: std::path::PathBuf,
    /// Test file size.
    pub size: u64,
    /// Time per test.
    pub duration: Duration,
    /// Engine.
    pub engine: EngineKind,
    /// Cache mode.
    pub cache: CacheMode,
    /// Allow writing to a block device (`iosim qualify --allow-destroy`).
    pub allow_destroy: bool,
}

/// Results of the suite.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct QuickResult {
    /// Test file.
    pub path: String,
    /// One full result per corner test, in suite order.
    pub tests: Vec<QuickTest>,
    /// Notes (fallbacks).
    pub notes: Vec<String>,
}

/// One test of the suite.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct QuickTest {
    /// Which corner (its name shown in the table; `name` in JSON).
    #[serde(rename = "name")]
    pub id: CornerId,
    /// The full result.
    pub result: RunResult,
}

/// Runs the suite. Creates the test file on first use; reuses it afterwards.
pub fn run(cfg: &QuickConfig, opts: &RunOptions) -> anyhow::Result<QuickResult> {
    let mut notes = Vec::new();
    let mut cache = cfg.cache;
    let mut tests = Vec::new();
    for (i, c) in SUITE.iter().enumerate() {
        if opts.stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let spec = WorkloadSpec {
            targets: vec![TargetSpec::new(cfg.path.clone(), Some(cfg.size))],
            rw: c.rw,
            write_pct: c.rw.default_write_pct(),
            bs: c.bs,
            qd: c.qd,
            duration: cfg.duration,
            engine: cfg.engine,
            cache,
            allow_destroy: cfg.allow_destroy,
            ..WorkloadSpec::default()
        };
        if i == 0 && cache.is_direct() {
            // Create the file first (buffered creation is fine), then check O_DIRECT.
            let probe = WorkloadSpec {
                cache: CacheMode::Buffered,
                ..spec.clone()
            };
            let t = match crate::target::prepare(
                &probe,
                0,
                crate::target::PrepareOptions {
                    progress: opts.progress,
                    stop: Some(&opts.stop),
                },
            ) {
                Ok(t) => t,
                Err(e) if crate::runner::stopped_before_window(&e, opts) => break,
                Err(e) => return Err(e),
            };
            notes.extend(
                t.notes
                    .iter()
                    .map(|n| format!("{}: {n}", cfg.path.display())),
            );
            if !crate::target::direct_io_supported(&cfg.path) {
                notes.push(format!(
                    "direct I/O is not supported on the filesystem of {}; ran with --cache buffered (results include the page cache)",
                    cfg.path.display()
                ));
                cache = CacheMode::Buffered;
            }
        }
        let spec = WorkloadSpec { cache, ..spec };
        if opts.progress {
            crate::say!("[{}/{}] {}", i + 1, SUITE.len(), c.name);
        }
        let result = match crate::runner::run(&spec, opts) {
            Ok(r) => r,
            // Stopped (a deadline, Ctrl-C) while the file was prepared.
            Err(e) if crate::runner::stopped_before_window(&e, opts) => break,
            Err(e) => return Err(e),
        };
        for n in &result.notes {
            // The first prepare above already said whether the file was created or reused.
            if !notes.contains(n) && !n.ends_with(crate::target::REUSED_NOTE) {
                notes.push(n.clone());
            }
        }
        // What held or moved the corner's numbers (docs/changes.md).
        for w in result
            .warnings
            .iter()
            .filter(|w| w.code == crate::sysmon::check::WarningCode::RateLimited)
        {
            notes.push(format!("{}: {}", c.name, w.message));
        }
        for e in &result.changes.events {
            notes.push(format!("{}: change over time: {}", c.name, e.describe()));
        }
        tests.push(QuickTest { id: c.id, result });
    }
    Ok(QuickResult {
        path: cfg.path.display().to_string(),
        tests,
        notes,
    })
}

/// The compact table.
pub fn table(q: &QuickResult) -> String {
    let mut s = String::new();
    if let Some(first) = q.tests.first() {
        let r = &first.result;
        let _ = writeln!(
            s,
            "iosim {}  {}  ({}, {} engine, {} per test)",
            r.iosim_version,
            q.path,
            r.config.cache.name(),
            r.engine,
            crate::units::format_duration_arg(r.config.duration)
        );
    }
    let _ = writeln!(
        s,
        "{:<20}{:>11}{:>12}{:>12}{:>12}",
        "test", "MiB/s", "IOPS", "mean(us)", "p99(us)"
    );
    for t in &q.tests {
        let d = &t.result.total.total;
        let _ = writeln!(
            s,
            "{:<20}{:>11.1}{:>12.0}{:>12.1}{:>12.1}{}",
            t.id.name(),
            d.mib_per_sec,
            d.iops,
            d.latency_us.mean,
            d.latency_us.p(Percentile::P99),
            if t.result.interrupted {
                "  (interrupted)"
            } else {
                ""
            }
        );
    }
    for n in &q.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

/// The suite as CSV: each test's total row, led by the test's name.
pub fn csv(r: &QuickResult) -> String {
    crate::csvout::keyed_runs(
        "test",
        r.tests.iter().map(|t| (t.id.name(), &t.result)),
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_corner_id_is_its_place_in_the_suite() {
        for (i, c) in SUITE.iter().enumerate() {
            assert_eq!(c.id as usize, i, "{}", c.name);
            assert_eq!(CornerId::from_name(c.name), Some(c.id));
            // JSON: the name, as quick tests always wrote it.
            let json = serde_json::to_string(&c.id).unwrap();
            assert_eq!(json, format!("\"{}\"", c.name));
            assert_eq!(serde_json::from_str::<CornerId>(&json).unwrap(), c.id);
        }
        assert!(serde_json::from_str::<CornerId>("\"seq read 2M QD8\"").is_err());
    }
}
