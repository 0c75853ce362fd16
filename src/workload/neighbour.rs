//! A noisy neighbour: a background workload run beside the measured one, and
//! what it did to it (`iosim run --neighbour SPEC`; docs/workloads.md
//! "Noisy neighbours").
//!
//! The study itself (the two phases through the runner) is `crate::neighbour`;
//! this module holds its result, which rides in the run's result as
//! `neighbour`, and its text.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::stats::{Percentile, RwResult};

/// What one workload did in one phase: the figures the comparison reads
/// (all targets, reads and writes together).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// I/Os completed in the measured window.
    pub ios: u64,
    /// I/Os per second.
    pub iops: f64,
    /// MiB per second.
    pub mib_per_sec: f64,
    /// Median latency, µs.
    pub lat_p50_us: f64,
    /// 99th percentile, µs.
    pub lat_p99_us: f64,
    /// 99.9th percentile, µs.
    pub lat_p99_9_us: f64,
}

impl Figures {
    /// The figures of a result's totals.
    pub fn of(r: &RwResult) -> Figures {
        let t = &r.total;
        Figures {
            ios: t.ios,
            iops: t.iops,
            mib_per_sec: t.mib_per_sec,
            lat_p50_us: t.latency_us.p(Percentile::P50),
            lat_p99_us: t.latency_us.p(Percentile::P99),
            lat_p99_9_us: t.latency_us.p(Percentile::P99_9),
        }
    }
}

/// How the foreground changed with the neighbour: throughput in percent
/// (negative: it lost), latency as a factor (2.0: twice as slow). `None`
/// where the foreground did nothing alone (nothing to compare with).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// IOPS with the neighbour against alone, percent.
    pub iops_pct: Option<f64>,
    /// MiB/s with the neighbour against alone, percent.
    pub mib_per_sec_pct: Option<f64>,
    /// Median latency with the neighbour / alone.
    pub lat_p50_x: Option<f64>,
    /// 99th percentile with the neighbour / alone.
    pub lat_p99_x: Option<f64>,
    /// 99.9th percentile with the neighbour / alone.
    pub lat_p99_9_x: Option<f64>,
}

/// The background workload: what it was and what it did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Background {
    /// The SPEC as given (`rw=write,bs=1m,qd=8`).
    pub spec: String,
    /// In words, as a run's header line describes a workload.
    pub describe: String,
    /// Its targets.
    pub targets: Vec<String>,
    /// True when iosim created its target for the study and removed it after.
    pub created: bool,
    /// What it did while the foreground ran beside it.
    pub figures: Figures,
    /// Its I/O errors.
    pub errors: u64,
}

/// The study: the foreground alone, then with the neighbour, in two measured
/// windows of the same length. The run's own figures are the first phase's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NeighbourReport {
    /// The background workload.
    pub background: Background,
    /// The foreground alone (the run's own result).
    pub alone: Figures,
    /// The foreground with the neighbour running beside it.
    pub together: Figures,
    /// `together` against `alone`.
    pub change: Change,
    /// The foreground's I/O errors in the second phase.
    pub together_errors: u64,
    /// True when either phase was stopped early.
    pub interrupted: bool,
}

/// `12300` -> `12,300`.
fn thousands(v: f64) -> String {
    let n = v.round().max(0.0) as u64;
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Latency in milliseconds, with the digits that matter.
fn ms(us: f64) -> String {
    let v = us / 1000.0;
    if v >= 10.0 {
        format!("{v:.1} ms")
    } else if v >= 1.0 {
        format!("{v:.2} ms")
    } else {
        format!("{v:.3} ms")
    }
}

fn pct(p: Option<f64>) -> String {
    p.map_or(String::new(), |p| format!(" ({p:+.0}%)"))
}

fn times(x: Option<f64>) -> String {
    x.map_or(String::new(), |x| format!(" (×{x:.1})"))
}

impl NeighbourReport {
    /// The report's "neighbour" section.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let b = &self.background;
        let _ = writeln!(
            s,
            "neighbour: {} on {}{}",
            b.describe,
            b.targets.join(", "),
            if self.interrupted {
                "  (INTERRUPTED: partial results)"
            } else {
                ""
            }
        );
        let a = &self.alone;
        let _ = writeln!(
            s,
            "  alone: {} IOPS, p50 {}, p99 {}, p99.9 {}",
            thousands(a.iops),
            ms(a.lat_p50_us),
            ms(a.lat_p99_us),
            ms(a.lat_p99_9_us)
        );
        let t = &self.together;
        let c = &self.change;
        let _ = writeln!(
            s,
            "  with neighbour ({}): {} IOPS{}, p50 {}{}, p99 {}{}, p99.9 {}{}",
            b.spec,
            thousands(t.iops),
            pct(c.iops_pct),
            ms(t.lat_p50_us),
            times(c.lat_p50_x),
            ms(t.lat_p99_us),
            times(c.lat_p99_x),
            ms(t.lat_p99_9_us),
            times(c.lat_p99_9_x)
        );
        let f = &b.figures;
        let _ = writeln!(
            s,
            "  the neighbour itself: {} IOPS, {:.1} MiB/s, p99 {}{}",
            thousands(f.iops),
            f.mib_per_sec,
            ms(f.lat_p99_us),
            if b.errors > 0 {
                format!(", {} I/O errors", b.errors)
            } else {
                String::new()
            }
        );
        if self.together_errors > 0 {
            let _ = writeln!(
                s,
                "  the foreground had {} I/O errors beside the neighbour",
                self.together_errors
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(thousands(12_300.4), "12,300");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1_234_567.0), "1,234,567");
        assert_eq!(ms(410.0), "0.410 ms");
        assert_eq!(ms(4_200.0), "4.20 ms");
        assert_eq!(ms(42_000.0), "42.0 ms");
        assert_eq!(pct(Some(-75.2)), " (-75%)");
        assert_eq!(times(Some(10.24)), " (×10.2)");
        assert_eq!(times(None), "");
    }

    #[test]
    fn the_section_shows_both_phases_and_the_change() {
        let f = |iops: f64, p99: f64| Figures {
            ios: iops as u64,
            iops,
            lat_p99_us: p99,
            ..Figures::default()
        };
        let r = NeighbourReport {
            background: Background {
                spec: "rw=write,bs=1m,qd=8".into(),
                describe: "write 1 MiB qd8 x1 direct auto".into(),
                targets: vec!["/tmp/a-neighbour.dat".into()],
                created: true,
                figures: f(800.0, 9000.0),
                errors: 0,
            },
            alone: f(12_300.0, 410.0),
            together: f(3_100.0, 4_200.0),
            change: Change {
                iops_pct: Some(-74.8),
                lat_p99_x: Some(10.24),
                ..Change::default()
            },
            together_errors: 0,
            interrupted: false,
        };
        let t = r.text();
        assert!(t.starts_with("neighbour: write 1 MiB"), "{t}");
        assert!(t.contains("alone: 12,300 IOPS"), "{t}");
        assert!(
            t.contains("with neighbour (rw=write,bs=1m,qd=8): 3,100 IOPS (-75%)"),
            "{t}"
        );
        assert!(t.contains("p99 4.20 ms (×10.2)"), "{t}");
        assert!(t.contains("the neighbour itself: 800 IOPS"), "{t}");
    }
}
