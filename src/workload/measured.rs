//! What a run measured of its workload's shape (issue 17): latency and
//! throughput per block size of a `--bssplit` mix, latency from each I/O's
//! scheduled start under pacing (open loop, without coordinated omission),
//! and the achieved access skew.
//!
//! Each worker keeps a [`ShapeStats`] next to its ordinary statistics and
//! records into it in the same place, on the same completions (the measured
//! window only); the runner merges the workers' exactly and turns them into
//! the result's [`ShapeResult`].

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::stats::{DirResult, LatencySummary, Percentile, RwResult, RwStats};

use super::distribution::SkewReport;
use super::WorkloadSpec;

/// One worker's (or the merged run's) shape measurements.
#[derive(Clone, Debug, Default)]
pub struct ShapeStats {
    /// Per size class of the mix (empty without `--bssplit`).
    pub by_size: Vec<RwStats>,
    /// Latency from each I/O's scheduled start (`None` when not paced).
    pub intended: Option<RwStats>,
}

impl ShapeStats {
    /// Empty statistics for `spec` (sizes resolved): per-size histograms
    /// only with a mix, intended-start histograms only when paced.
    pub fn new(spec: &WorkloadSpec) -> ShapeStats {
        let classes = spec
            .shape
            .bssplit
            .as_ref()
            .map_or(0, |b| b.resolved(spec.bs).sizes().len());
        ShapeStats {
            by_size: (0..classes).map(|_| RwStats::default()).collect(),
            intended: spec.paced().then(RwStats::default),
        }
    }

    /// Records one completed I/O of size class `class`: `lat` from its
    /// submission, `intended_lat` from its scheduled start. No allocation.
    /// Always inlined: the worker's `complete` calls it per I/O, and the
    /// compiler's choice flips with unrelated changes there (17 instructions
    /// per I/O when it is called, bench/instructions.py).
    #[inline(always)]
    pub fn record(&mut self, write: bool, class: u8, len: u64, lat: u64, intended_lat: u64) {
        if let Some(s) = self.by_size.get_mut(class as usize) {
            let d = if write { &mut s.write } else { &mut s.read };
            d.record(lat, len);
        }
        if let Some(s) = &mut self.intended {
            let d = if write { &mut s.write } else { &mut s.read };
            d.record(intended_lat, len);
        }
    }

    /// Adds `other` into `self` (the same spec, so the same classes).
    pub fn merge(&mut self, other: &ShapeStats) {
        if self.by_size.len() < other.by_size.len() {
            self.by_size
                .resize_with(other.by_size.len(), RwStats::default);
        }
        for (a, b) in self.by_size.iter_mut().zip(&other.by_size) {
            a.merge(b);
        }
        match (&mut self.intended, &other.intended) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => self.intended = Some(b.clone()),
            _ => {}
        }
    }

    /// The result over `secs` measured seconds; `submitted` is the run's
    /// ordinary (from-submission) statistics, shown beside the open-loop ones.
    pub fn result(
        &self,
        spec: &WorkloadSpec,
        secs: f64,
        submitted: &RwStats,
        skew: Vec<TargetSkew>,
    ) -> ShapeResult {
        let classes = spec
            .shape
            .bssplit
            .as_ref()
            .map(|b| b.resolved(spec.bs).sizes())
            .unwrap_or_default();
        let all: u64 = self.by_size.iter().map(|s| s.read.ios + s.write.ios).sum();
        let by_size = classes
            .iter()
            .zip(&self.by_size)
            .map(|(&bs, st)| {
                let result = st.summarize(secs);
                SizeResult {
                    bs,
                    share_pct: if all == 0 {
                        0.0
                    } else {
                        100.0 * result.total.ios as f64 / all as f64
                    },
                    result,
                }
            })
            .collect();
        let open_loop = self.intended.as_ref().map(|i| OpenLoop {
            intended: LatencySet::of(i),
            submitted: LatencySet::of(submitted),
        });
        ShapeResult {
            by_size,
            open_loop,
            skew,
            db_cache: None,
        }
    }
}

/// Latency and throughput of one block size of a mix.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SizeResult {
    /// Block size, bytes.
    pub bs: u64,
    /// Share of all measured I/Os at this size, percent.
    pub share_pct: f64,
    /// Read, write and total at this size.
    #[serde(flatten)]
    pub result: RwResult,
}

/// Latency summaries of reads, writes and both (microseconds).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySet {
    /// Reads.
    pub read: LatencySummary,
    /// Writes.
    pub write: LatencySummary,
    /// Both.
    pub total: LatencySummary,
}

impl LatencySet {
    fn of(s: &RwStats) -> LatencySet {
        LatencySet {
            read: s.read.latency(),
            write: s.write.latency(),
            total: s.total().latency(),
        }
    }
}

/// Open-loop latency of a paced run: from each I/O's scheduled start (what a
/// client arriving on schedule waits, queueing behind a stall included) and
/// from its actual submission (what the storage took).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenLoop {
    /// From the scheduled start, µs.
    pub intended: LatencySet,
    /// From submission, µs (the same as the run's ordinary latency).
    pub submitted: LatencySet,
}

/// The achieved skew of one target.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetSkew {
    /// Target index.
    pub target: usize,
    /// What was asked and what was hit.
    #[serde(flatten)]
    pub report: SkewReport,
}

/// Everything measured of the workload's shape; in the JSON result as `shape`,
/// absent when the run had no size mix, no pacing and no skew.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShapeResult {
    /// Per block size of a `--bssplit` mix, smallest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_size: Vec<SizeResult>,
    /// Latency from scheduled start and from submission, when paced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoop>,
    /// Achieved skew per skewed target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skew: Vec<TargetSkew>,
    /// What the database's cache served (`--db-cache`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_cache: Option<super::dbcache::DbCacheResult>,
}

impl ShapeResult {
    /// True when there is nothing to show.
    pub fn is_empty(&self) -> bool {
        self.by_size.is_empty()
            && self.open_loop.is_none()
            && self.skew.is_empty()
            && self.db_cache.is_none()
    }

    /// The human report's section (empty when there is nothing to show).
    pub fn text(&self) -> String {
        let mut s = String::new();
        if !self.by_size.is_empty() {
            let _ = writeln!(
                s,
                "{:<14}{:>7}{:>12}{:>11}{:>12}{:>10}{:>10}{:>10}{:>11}",
                "by size", "share", "IOPS", "MiB/s", "mean(us)", "p50", "p99", "p99.9", "max"
            );
            for z in &self.by_size {
                let size = crate::units::format_size_arg(z.bs);
                for (dir, d) in [("read", &z.result.read), ("write", &z.result.write)] {
                    if d.ios == 0 {
                        continue;
                    }
                    size_row(&mut s, &format!("{size} {dir}"), z.share_pct, d, &z.result);
                }
            }
            s.push('\n');
        }
        if let Some(o) = &self.open_loop {
            let _ = writeln!(
                s,
                "open-loop latency (us): from each I/O's scheduled start vs from its submission"
            );
            let _ = writeln!(
                s,
                "{:<14}{:>12}{:>10}{:>10}{:>10}{:>11}",
                "", "mean", "p50", "p99", "p99.9", "max"
            );
            for (name, l) in [
                ("scheduled", &o.intended.total),
                ("submitted", &o.submitted.total),
            ] {
                let _ = writeln!(
                    s,
                    "  {:<12}{:>12.1}{:>10.1}{:>10.1}{:>10.1}{:>11.1}",
                    name,
                    l.mean,
                    l.p(Percentile::P50),
                    l.p(Percentile::P99),
                    l.p(Percentile::P99_9),
                    l.max
                );
            }
            s.push('\n');
        }
        if let Some(c) = &self.db_cache {
            s.push_str(&c.text());
        }
        for k in &self.skew {
            let r = &k.report;
            let _ = writeln!(
                s,
                "skew: target {} {} ({} placement): the hottest 1% of blocks took {:.1}% of {} random I/Os (expected {:.1}%), the hottest 10% took {:.1}% (expected {:.1}%)",
                k.target,
                r.distribution,
                match r.placement {
                    super::Placement::Random => "random",
                    super::Placement::Start => "start",
                },
                100.0 * r.hottest_1pct,
                r.ios,
                100.0 * r.expected_1pct,
                100.0 * r.hottest_10pct,
                100.0 * r.expected_10pct
            );
        }
        if !self.skew.is_empty() {
            s.push('\n');
        }
        s
    }
}

fn size_row(s: &mut String, name: &str, size_share: f64, d: &DirResult, all: &RwResult) {
    // The share is of this direction's I/O at this size among all I/O.
    let share = if all.total.ios == 0 {
        0.0
    } else {
        size_share * d.ios as f64 / all.total.ios as f64
    };
    let _ = writeln!(
        s,
        "  {:<12}{:>6.1}%{:>12.1}{:>11.2}{:>12.1}{:>10.1}{:>10.1}{:>10.1}{:>11.1}",
        name,
        share,
        d.iops,
        d.mib_per_sec,
        d.latency_us.mean,
        d.latency_us.p(Percentile::P50),
        d.latency_us.p(Percentile::P99),
        d.latency_us.p(Percentile::P99_9),
        d.latency_us.max
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_and_summarises_per_size_and_open_loop() {
        let spec = WorkloadSpec {
            rw: super::super::RwMode::Randrw,
            write_pct: 50,
            rate_iops: Some(100),
            shape: super::super::Shape {
                bssplit: Some("4K/50:64K/50".parse().unwrap()),
                ..Default::default()
            },
            ..Default::default()
        };
        let mut a = ShapeStats::new(&spec);
        let mut b = ShapeStats::new(&spec);
        assert_eq!(a.by_size.len(), 2);
        a.record(false, 0, 4096, 1_000, 5_000);
        b.record(true, 1, 65536, 2_000, 300_000_000);
        b.record(true, 1, 65536, 2_000, 2_000);
        a.merge(&b);
        let mut submitted = RwStats::default();
        submitted.read.record(1_000, 4096);
        let r = a.result(&spec, 1.0, &submitted, Vec::new());
        assert_eq!(r.by_size[0].bs, 4096);
        assert_eq!(r.by_size[0].result.read.ios, 1);
        assert_eq!(r.by_size[1].result.write.bytes, 2 * 65536);
        assert!((r.by_size[1].share_pct - 200.0 / 3.0).abs() < 1e-9);
        let o = r.open_loop.as_ref().unwrap();
        assert!((o.intended.write.max - 300_000.0).abs() < 1.0);
        assert_eq!(o.submitted.total.max, 1.0);
        let t = r.text();
        assert!(t.contains("64K write"), "{t}");
        assert!(t.contains("scheduled"), "{t}");
        // Nothing asked, nothing kept or shown.
        let plain = ShapeStats::new(&WorkloadSpec::default());
        assert!(plain.by_size.is_empty() && plain.intended.is_none());
        assert!(plain
            .result(&WorkloadSpec::default(), 1.0, &submitted, Vec::new())
            .is_empty());
    }
}
