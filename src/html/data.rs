//! What the report draws: the run results of the stored documents, their
//! latency histograms, and the sweeps found among them.

use std::fmt::Write as _;

use super::kinds;
use crate::document::Document;
use crate::runner::RunResult;
use crate::stats::Percentile;
use crate::store::StoredRun;

/// One run result to draw.
pub struct Entry<'a> {
    /// Legend name.
    pub name: String,
    /// The run result.
    pub result: &'a RunResult,
    /// Colour index.
    pub color: usize,
    /// The stored run it comes from.
    pub run: &'a StoredRun,
}

/// Everything to draw from the typed documents ([`kinds::typed`]): each
/// run result they hold (a run has one, a quick suite one per test, a
/// profile one per workload).
pub fn entries<'a>(typed: &'a [(&'a StoredRun, Document)]) -> Vec<Entry<'a>> {
    let mut out = Vec::new();
    for (r, doc) in typed {
        for (scope, result) in doc.runs() {
            let mut name = format!("#{}", r.row.id);
            if let Some(l) = &r.row.label {
                let _ = write!(name, " {l}");
            }
            if !scope.is_empty() {
                let _ = write!(name, " {scope}");
            } else {
                let _ = write!(name, " {}", result.config.describe());
            }
            let color = out.len();
            out.push(Entry {
                name,
                result,
                color,
                run: r,
            });
        }
    }
    out
}

/// Read and write latency histograms merged (nanoseconds), if the result has them.
pub fn histogram(r: &RunResult) -> Option<hdrhistogram::Histogram<u64>> {
    let mut h: Option<hdrhistogram::Histogram<u64>> = None;
    for s in [&r.histograms.read, &r.histograms.write] {
        if s.is_empty() {
            continue;
        }
        let Ok(x) = crate::stats::decode_histogram(s) else {
            continue;
        };
        match &mut h {
            None => h = Some(x),
            Some(h) => {
                let _ = h.add(&x);
            }
        }
    }
    h.filter(|h| !h.is_empty())
}

/// The percentile axis position of quantile q: the number of nines, -log10(1 - q).
pub fn nines(q: f64) -> f64 {
    -(1.0 - q).log10()
}

/// One point of a [`Sweep`]'s curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepPoint {
    /// The swept setting (queue depth, threads or outstanding I/Os).
    pub load: f64,
    /// IOPS.
    pub iops: f64,
    /// Mean latency, microseconds.
    pub mean_us: f64,
    /// p99 latency, microseconds.
    pub p99_us: f64,
}

impl SweepPoint {
    /// A point from (load, IOPS, mean latency us, p99 latency us).
    pub const fn new(load: f64, iops: f64, mean_us: f64, p99_us: f64) -> SweepPoint {
        SweepPoint {
            load,
            iops,
            mean_us,
            p99_us,
        }
    }
}

/// A sweep found among the entries: same workload except queue depth (or threads).
pub struct Sweep {
    /// `qd` or `threads`.
    pub param: &'static str,
    /// Legend name.
    pub name: String,
    /// Colour.
    pub color: usize,
    /// The points, sorted by load.
    pub points: Vec<SweepPoint>,
    /// Index of the knee in `points`, if the curve flattens.
    pub knee: Option<usize>,
}

/// The saturation knee of a sweep, by the one rule `iosim sweep` uses
/// ([`crate::sweep::analysis::judge_knee`] with its default threshold, on mean
/// latency): the last point before more load stops buying throughput. The
/// points here are means without their spread, so they count as single runs:
/// the means decide. None when the curve never flattens (or has fewer than
/// three points).
pub fn knee(points: &[SweepPoint]) -> Option<usize> {
    use crate::sweep::analysis::{find_knee, SeriesPoint, DEFAULT_KNEE_ELASTICITY};
    let series: Vec<SeriesPoint> = points
        .iter()
        .map(|p| SeriesPoint::single(p.load, p.iops, p.mean_us))
        .collect();
    find_knee(&series, DEFAULT_KNEE_ELASTICITY).map(|k| k.index)
}

/// The curves of `iosim sweep` results among the typed documents, coloured
/// after the `first_color` entries.
pub fn document_sweeps(
    typed: &[(&StoredRun, crate::document::Document)],
    first_color: usize,
) -> Vec<Sweep> {
    typed
        .iter()
        .filter_map(|(r, d)| match d {
            crate::document::Document::Sweep(h) => Some((r.row.id, &h.body)),
            _ => None,
        })
        .enumerate()
        .filter_map(|(i, (id, body))| kinds::sweep_curve(id, body, first_color + i))
        .collect()
}

/// Finds sweeps: groups of entries whose workload differs only in `qd` (or only in `threads`).
pub fn sweeps(es: &[Entry]) -> Vec<Sweep> {
    let mut out = Vec::new();
    for param in ["qd", "threads"] {
        let setting = |spec: &crate::workload::WorkloadSpec| {
            f64::from(if param == "qd" { spec.qd } else { spec.threads })
        };
        // The workload without the swept setting and what does not change
        // what is measured (run time, warm-up, seed, I/O limit).
        let key = |spec: &crate::workload::WorkloadSpec| {
            let mut k = spec.clone();
            if param == "qd" {
                k.qd = 0;
            } else {
                k.threads = 0;
            }
            k.duration = Default::default();
            k.warmup = Default::default();
            k.seed = 0;
            k.io_limit = None;
            k
        };
        let mut groups: Vec<(crate::workload::WorkloadSpec, Vec<&Entry>)> = Vec::new();
        for e in es {
            let k = key(&e.result.config);
            match groups.iter_mut().find(|g| g.0 == k) {
                Some(g) => g.1.push(e),
                None => groups.push((k, vec![e])),
            }
        }
        for (_, g) in groups {
            let mut pts: Vec<SweepPoint> = g
                .iter()
                .filter_map(|e| {
                    let t = &e.result.total.total;
                    Some(SweepPoint::new(
                        setting(&e.result.config),
                        t.iops,
                        t.latency_us.mean,
                        t.latency_us.get(Percentile::P99)?,
                    ))
                })
                .collect();
            pts.sort_by(|a, b| a.load.total_cmp(&b.load));
            // Repetitions at one setting: keep their mean.
            let mut merged: Vec<(SweepPoint, f64)> = Vec::new();
            for p in pts {
                match merged.last_mut() {
                    Some((m, n)) if m.load == p.load => {
                        m.iops += p.iops;
                        m.mean_us += p.mean_us;
                        m.p99_us += p.p99_us;
                        *n += 1.0;
                    }
                    _ => merged.push((p, 1.0)),
                }
            }
            if merged.len() < 2 {
                continue;
            }
            let points: Vec<_> = merged
                .iter()
                .map(|(m, n)| SweepPoint::new(m.load, m.iops / n, m.mean_us / n, m.p99_us / n))
                .collect();
            let first = &g[0].result.config;
            let fixed = setting(first);
            let (from, to) = if param == "qd" {
                (format!(" qd{fixed} "), " qd* ".to_string())
            } else {
                (format!(" x{fixed} "), " x* ".to_string())
            };
            let desc = first.describe().replace(&from, &to);
            out.push(Sweep {
                param,
                name: desc,
                color: out.len(),
                knee: knee(&points),
                points,
            });
        }
    }
    out
}
