//! Comparing runs: relative differences, Welch's t-test on repetitions,
//! and the regression check behind `run --baseline`. Below `store`,
//! `document`, `qualify` and `html`, which all compare.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::runner::RunResult;
use crate::stats::{DirResult, Percentile};
use crate::sweep::PointResult;

/// A metric compared between runs.
#[derive(Clone, Copy, Debug)]
pub struct Metric {
    /// Column name.
    pub name: &'static str,
    /// Its value in a run's result (all targets, both directions).
    pub of_run: fn(&DirResult) -> Option<f64>,
    /// Its value at a sweep point (the mean over the point's repetitions).
    pub of_point: fn(&PointResult) -> Option<f64>,
    /// True when larger is better (throughput); false for latency.
    pub higher_is_better: bool,
}

/// The metrics `compare` shows, in order.
pub const METRICS: [Metric; 7] = [
    Metric {
        name: "IOPS",
        of_run: |d| Some(d.iops),
        of_point: |p| Some(p.iops.mean),
        higher_is_better: true,
    },
    Metric {
        name: "MiB/s",
        of_run: |d| Some(d.mib_per_sec),
        of_point: |p| Some(p.mib_per_sec.mean),
        higher_is_better: true,
    },
    Metric {
        name: "lat mean us",
        of_run: |d| Some(d.latency_us.mean),
        of_point: |p| Some(p.lat_mean_us.mean),
        higher_is_better: false,
    },
    Metric {
        name: "lat p50 us",
        of_run: |d| d.latency_us.get(Percentile::P50),
        of_point: |_| None,
        higher_is_better: false,
    },
    Metric {
        name: "lat p99 us",
        of_run: |d| d.latency_us.get(Percentile::P99),
        of_point: |p| Some(p.lat_p99_us.mean),
        higher_is_better: false,
    },
    Metric {
        name: "lat p99.9 us",
        of_run: |d| d.latency_us.get(Percentile::P99_9),
        of_point: |_| None,
        higher_is_better: false,
    },
    Metric {
        name: "lat max us",
        of_run: |d| Some(d.latency_us.max),
        of_point: |p| Some(p.lat_max_us.mean),
        higher_is_better: false,
    },
];

/// The metrics `run --baseline` guards: throughput and tail latency.
pub const GUARDED: [&str; 3] = ["IOPS", "MiB/s", "lat p99 us"];

pub use crate::stats::Welch;

/// Welch's t-test for a difference of means, unequal variances. Needs at
/// least two samples on each side; `None` otherwise.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    let mv = |x: &[f64]| {
        let n = x.len() as f64;
        let m = x.iter().sum::<f64>() / n;
        let v = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0);
        (m, v.sqrt(), x.len())
    };
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    crate::stats::welch_summary(mv(a), mv(b))
}

/// The run-to-run spread assumed for a figure measured once whose run kept
/// no per-interval series (stored before iosim measured it, or a run too
/// short for one): the relative standard deviation of one run's IOPS,
/// percent. Measured with bench/false_alarms.py (`iops_spread_pct`, three
/// 5 s runs of each of eight workloads, docs/changes.md): 0.1 to 18.5%
/// (median 8%) on a quiet 2-vCPU VM, 2.2 to 56% (median 12%) beside a CPU
/// hog on each core; 15% is above the quiet median and most quiet
/// workloads, below the loaded worst.
pub const DEFAULT_SPREAD_PCT: f64 = 15.0;

/// The run-to-run spread assumed for a figure measured once in a run too
/// short to measure its own (fewer than three [`SPREAD_SPAN_S`] spans: a
/// qualification's 0.8 s corners, `iosim fsync`'s 2 s tests), percent.
/// Measured with bench/false_alarms.py at `--duration 1s` (six runs of each
/// of eight workloads, a file and a loop device over /dev/shm, this
/// project's 2-vCPU VM, 2026-11-28; runs the CPU check held left out, as
/// their figures are never judged): 1.1 to 37% (median 8%) quiet, 2.1 to
/// 25% beside a CPU hog on each core. Short runs spread about twice as
/// wide as 5 s runs; 25% covers every loaded workload and all quiet ones
/// but a loop device's 4 KiB QD 1 reads (issue 37: a 0.8 s corner's +46%
/// beside a hog was called a regression against the 15% default's ±41.6%).
pub const SHORT_RUN_SPREAD_PCT: f64 = 25.0;

/// How noisy one compared figure is: the relative standard deviation of one
/// measurement of it (percent of its mean), and how many measurements its
/// value averages. Repetitions measure it directly; a figure measured once
/// takes the spread of its run's per-interval series ([`series_spread_pct`])
/// or, without one, [`DEFAULT_SPREAD_PCT`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    /// Relative standard deviation of one measurement, %.
    pub spread_pct: f64,
    /// Measurements averaged (repetitions; 1 for a single run).
    pub n: usize,
}

impl Noise {
    /// The noise of `n` repetitions of relative standard deviation
    /// `spread_pct`, or of a single run whose spread is unknown
    /// ([`DEFAULT_SPREAD_PCT`]).
    pub fn of(spread_pct: Option<f64>, n: usize) -> Noise {
        Noise {
            spread_pct: spread_pct
                .filter(|s| s.is_finite() && *s > 0.0)
                .unwrap_or(DEFAULT_SPREAD_PCT),
            n: n.max(1),
        }
    }

    /// Half-width of the 95% interval of the figure, % of its mean: Student's
    /// t over the repetitions, or about two standard deviations of one run.
    pub fn ci95_pct(&self) -> f64 {
        if self.n > 1 {
            crate::stats::t_975(self.n - 1) * self.spread_pct / (self.n as f64).sqrt()
        } else {
            1.96 * self.spread_pct
        }
    }
}

/// The difference between two figures that noise alone reaches, % of the
/// baseline: the two 95% intervals side by side (repetitions), or about two
/// standard deviations of the difference of two single runs. A difference
/// within it is "within noise", whatever the threshold.
pub fn noise_band_pct(a: Noise, b: Noise) -> f64 {
    family_noise_band_pct(a, b, 1)
}

/// [`noise_band_pct`] for one of `family` figures compared at once (a
/// qualification against its baseline compares a hundred): each band is
/// widened to the 1 - 5%/`family` level (Bonferroni), so the chance that
/// noise alone takes *any* of them past its band stays 5%. At 95% each, a
/// hundred figures would give five such differences by chance (issue 37:
/// one latency 0.1% past its band failed a comparison of unchanged
/// storage). A family of one is [`noise_band_pct`].
pub fn family_noise_band_pct(a: Noise, b: Noise, family: usize) -> f64 {
    let p = 1.0 - ALPHA / 2.0 / family.max(1) as f64;
    if a.n > 1 && b.n > 1 {
        let half =
            |x: Noise| crate::stats::t_quantile(x.n - 1, p) * x.spread_pct / (x.n as f64).sqrt();
        half(a) + half(b)
    } else {
        crate::stats::z_quantile(p) * a.spread_pct.hypot(b.spread_pct)
    }
}

/// Spans a series is cut into to measure its spread: at least this many
/// seconds (whole intervals), so a throttle's 100 ms slices and a short
/// interval's granularity are not counted as noise.
pub const SPREAD_SPAN_S: f64 = 1.0;

/// The relative standard deviation (%) of a figure over a run's
/// per-interval series, `(interval seconds, value)`, in spans of at least
/// [`SPREAD_SPAN_S`] (time-weighted means); `None` with fewer than three
/// spans. The spread iosim measures and stores for a figure run once.
pub fn series_spread_pct(points: &[(f64, f64)]) -> Option<f64> {
    let mut durations: Vec<f64> = points.iter().map(|p| p.0).filter(|d| *d > 0.0).collect();
    durations.sort_by(f64::total_cmp);
    let typical = *durations.get(durations.len() / 2)?;
    // The last interval is usually cut short at the window's end.
    let whole: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|p| p.0 >= 0.5 * typical)
        .collect();
    let per = ((SPREAD_SPAN_S / typical).ceil() as usize).max(1);
    let spans: Vec<f64> = whole
        .chunks_exact(per)
        .map(|c| c.iter().map(|p| p.0 * p.1).sum::<f64>() / c.iter().map(|p| p.0).sum::<f64>())
        .collect();
    if spans.len() < 3 {
        return None;
    }
    let (mean, sd, _) = crate::stats::mean_sd_ci95(&spans);
    (mean > 0.0).then(|| 100.0 * sd / mean)
}

/// The per-interval spread of a run's figure `metric` (one of [`METRICS`]'
/// names): IOPS and MiB/s from their own series, latencies from the mean
/// latency's (the series keeps no percentile per interval that a short
/// interval fills).
///
/// A run with a series too short to measure it (under three spans) gets
/// [`SHORT_RUN_SPREAD_PCT`]; a run without a series (stored before iosim
/// kept one) `None`, for the caller's [`DEFAULT_SPREAD_PCT`].
pub fn run_spread_pct(r: &RunResult, metric: &str) -> Option<f64> {
    let of = |f: fn(&crate::runner::PointStats) -> f64| {
        let pts: Vec<(f64, f64)> = r
            .series
            .total
            .iter()
            .map(|p| (p.duration_s, f(&p.total)))
            .collect();
        let short = !pts.is_empty() && r.duration_s < 3.0 * SPREAD_SPAN_S;
        series_spread_pct(&pts).or(short.then_some(SHORT_RUN_SPREAD_PCT))
    };
    match metric {
        "IOPS" => of(|p| p.iops),
        "MiB/s" => of(|p| p.mib_per_sec),
        _ => of(|p| p.lat_mean_us),
    }
}

/// One compared set of runs: a run, or the repetitions of one test.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Side {
    /// How the user named it (`12`, `label:before`).
    pub name: String,
    /// Stored run ids.
    pub ids: Vec<i64>,
    /// Per metric: the values of each repetition.
    pub values: Vec<Vec<f64>>,
    /// Per metric, for a side of one run: the spread of the run's
    /// per-interval series ([`run_spread_pct`]), or of a sweep point's
    /// repetitions; empty in comparisons stored before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub single_spread_pct: Vec<Option<f64>>,
}

impl Side {
    /// Collects the metrics of run results (one per repetition).
    pub fn new(name: &str, ids: Vec<i64>, runs: &[&RunResult]) -> Side {
        let values = METRICS
            .iter()
            .map(|m| {
                runs.iter()
                    .filter_map(|r| (m.of_run)(&r.total.total))
                    .collect()
            })
            .collect();
        let single_spread_pct = match runs {
            [r] => METRICS.iter().map(|m| run_spread_pct(r, m.name)).collect(),
            _ => Vec::new(),
        };
        Side {
            name: name.into(),
            ids,
            values,
            single_spread_pct,
        }
    }

    /// Collects the metrics of sweep points (one per stored sweep).
    pub fn of_points(name: &str, ids: Vec<i64>, points: &[&PointResult]) -> Side {
        let values = METRICS
            .iter()
            .map(|m| points.iter().filter_map(|p| (m.of_point)(p)).collect())
            .collect();
        // One point: the spread of its repetitions (IOPS's for throughput,
        // the mean latency's for latencies), when it had several.
        let single_spread_pct = match points {
            [p] => METRICS
                .iter()
                .map(|m| {
                    let s = match m.name {
                        "IOPS" | "MiB/s" => &p.iops,
                        _ => &p.lat_mean_us,
                    };
                    (s.n > 1).then_some(100.0 * s.cv)
                })
                .collect(),
            _ => Vec::new(),
        };
        Side {
            name: name.into(),
            ids,
            values,
            single_spread_pct,
        }
    }

    /// The noise of metric `i` on this side: its repetitions' spread, or a
    /// single run's measured spread (a sweep point's repetitions' spread
    /// counts as one run's, the wider band), or [`DEFAULT_SPREAD_PCT`].
    pub fn noise(&self, i: usize) -> Noise {
        let v = &self.values[i];
        if v.len() > 1 {
            let (mean, sd, _) = crate::stats::mean_sd_ci95(v);
            let pct = (mean != 0.0).then(|| 100.0 * sd / mean.abs());
            return Noise::of(pct, v.len());
        }
        Noise::of(self.single_spread_pct.get(i).copied().flatten(), 1)
    }

    /// Mean of a metric.
    pub fn mean(&self, i: usize) -> Option<f64> {
        let v = &self.values[i];
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// One cell of the comparison: side `b` against the first side.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Diff {
    /// Metric.
    pub metric: String,
    /// Mean of the baseline side.
    pub base: Option<f64>,
    /// Mean of this side.
    pub value: Option<f64>,
    /// (value - base) / base, percent.
    pub rel_pct: Option<f64>,
    /// Welch's test, when both sides have two or more repetitions.
    pub welch: Option<Welch>,
    /// True when the change is for the worse.
    pub worse: bool,
}

/// The change of `value` against `base`, percent (None when `base` is 0).
pub fn rel_change(base: f64, value: f64) -> Option<f64> {
    (base != 0.0).then(|| (value - base) / base * 100.0)
}

/// True when a change of `rel_pct` is for the worse: less throughput, or
/// more latency.
pub fn is_worse(rel_pct: f64, higher_is_better: bool) -> bool {
    if higher_is_better {
        rel_pct < 0.0
    } else {
        rel_pct > 0.0
    }
}

/// True when a change for the worse of `rel_pct` goes beyond `threshold_pct`
/// (the one rule of `run --baseline`, `sweep --baseline`, `qualify
/// --baseline` and `compare --threshold`).
pub fn beyond(rel_pct: f64, threshold_pct: f64) -> bool {
    rel_pct.abs() > threshold_pct
}

/// Differences of `b` against `a`, metric by metric.
pub fn diff(a: &Side, b: &Side) -> Vec<Diff> {
    METRICS
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let (base, value) = (a.mean(i), b.mean(i));
            let rel_pct = match (base, value) {
                (Some(x), Some(y)) => rel_change(x, y),
                _ => None,
            };
            let worse = rel_pct.is_some_and(|r| is_worse(r, m.higher_is_better));
            Diff {
                metric: m.name.to_string(),
                base,
                value,
                rel_pct,
                welch: welch(&a.values[i], &b.values[i]),
                worse,
            }
        })
        .collect()
}

/// Significance level of the tests.
pub const ALPHA: f64 = 0.05;

fn num(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// The side-by-side table `iosim compare` prints.
pub fn table(sides: &[Side]) -> String {
    let mut out = String::new();
    let Some(base) = sides.first() else {
        return out;
    };
    let _ = write!(out, "{:<14}", "metric");
    for s in sides {
        let label = if s.ids.len() > 1 {
            format!("{} (n={})", s.name, s.ids.len())
        } else {
            s.name.clone()
        };
        let _ = write!(out, " {label:>23}");
    }
    out.push('\n');
    let diffs: Vec<Vec<Diff>> = sides.iter().map(|s| diff(base, s)).collect();
    let mut any_welch = false;
    for (i, m) in METRICS.iter().enumerate() {
        let _ = write!(out, "{:<14}", m.name);
        for (k, s) in sides.iter().enumerate() {
            let v = num(s.mean(i));
            let cell = if k == 0 {
                format!("{v:>12}")
            } else {
                let d = &diffs[k][i];
                let rel = d.rel_pct.map(|r| format!("{r:+.1}%")).unwrap_or_default();
                let sig = match d.welch {
                    Some(w) => {
                        any_welch = true;
                        if w.p < ALPHA {
                            " *"
                        } else {
                            " ~"
                        }
                    }
                    None => "",
                };
                format!("{v:>12} {rel:>8}{sig:<2}")
            };
            let _ = write!(out, " {cell:>23}");
        }
        out.push('\n');
    }
    out.push('\n');
    if any_welch {
        let _ = writeln!(
            out,
            "* significant, ~ not significant: Welch's t-test on the repetitions, two-sided, alpha {ALPHA}."
        );
        for (k, s) in sides.iter().enumerate().skip(1) {
            for d in diffs[k].iter() {
                if let Some(w) = d.welch {
                    let _ = writeln!(
                        out,
                        "  {} vs {}: {:<13} t = {:+.2}, df = {:.1}, p = {:.4}",
                        s.name, base.name, d.metric, w.t, w.df, w.p
                    );
                }
            }
        }
    }
    let mut out: String = out
        .lines()
        .map(|l| l.trim_end().to_string() + "\n")
        .collect();
    let single: Vec<&str> = sides
        .iter()
        .filter(|s| s.ids.len() < 2)
        .map(|s| s.name.as_str())
        .collect();
    if !single.is_empty() && sides.len() > 1 {
        let _ = writeln!(
            out,
            "Significance needs repetitions: {} {} a single run, so differences are shown without a test. \
             Repeat a test with the same --label (or use a repetition group) and compare label:NAME.",
            single.join(", "),
            if single.len() == 1 { "is" } else { "are" }
        );
    }
    out
}

/// One guarded metric that got worse than allowed.
#[derive(Clone, Debug, Serialize)]
pub struct Regression {
    /// Metric.
    pub metric: String,
    /// Baseline mean.
    pub base: f64,
    /// This run.
    pub value: f64,
    /// Change in percent (negative for lost throughput, positive for slower latency).
    pub rel_pct: f64,
    /// The difference noise alone reaches for this figure, % ([`noise_band_pct`]).
    pub noise_pct: f64,
    /// Both sides were single runs (their spread is their runs' per-interval one).
    pub single_run: bool,
}

impl Regression {
    /// Beyond the threshold and beyond the noise: a regression. Otherwise
    /// "within noise".
    pub fn regressed(&self, threshold_pct: f64) -> bool {
        beyond(self.rel_pct, threshold_pct) && beyond(self.rel_pct, self.noise_pct)
    }

    /// `IOPS 1000.0 -> 800.0 (-20.0%, noise ±12.3%, single runs)`.
    pub fn describe(&self) -> String {
        format!(
            "{} {:.1} -> {:.1} ({:+.1}%, noise ±{:.1}%{})",
            self.metric,
            self.base,
            self.value,
            self.rel_pct,
            self.noise_pct,
            if self.single_run { ", single runs" } else { "" }
        )
    }
}

/// The guarded metrics (lower IOPS or MiB/s, higher p99 latency) of `run`
/// worse than `baseline` by more than `threshold_pct`, each with the noise
/// band of its figure: [`Regression::regressed`] tells a regression from a
/// difference within noise.
pub fn worse_beyond(baseline: &Side, run: &Side, threshold_pct: f64) -> Vec<Regression> {
    diff(baseline, run)
        .into_iter()
        .enumerate()
        .filter(|(_, d)| GUARDED.contains(&d.metric.as_str()) && d.worse)
        .filter_map(|(i, d)| {
            let r = d.rel_pct?;
            let (a, b) = (baseline.noise(i), run.noise(i));
            beyond(r, threshold_pct).then_some(Regression {
                metric: d.metric,
                base: d.base?,
                value: d.value?,
                rel_pct: r,
                noise_pct: noise_band_pct(a, b),
                single_run: a.n == 1 && b.n == 1,
            })
        })
        .collect()
}

/// Regressions of `run` against `baseline`: worse beyond `threshold_pct`
/// and beyond the figure's noise ([`worse_beyond`]).
pub fn regressions(baseline: &Side, run: &Side, threshold_pct: f64) -> Vec<Regression> {
    worse_beyond(baseline, run, threshold_pct)
        .into_iter()
        .filter(|r| r.regressed(threshold_pct))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::t_two_sided_p;

    #[test]
    fn p_values_match_tables() {
        // Student's t: two-sided 5% critical values.
        for (df, t) in [(1.0, 12.706), (5.0, 2.571), (10.0, 2.228), (30.0, 2.042)] {
            let p = t_two_sided_p(t, df);
            assert!((p - 0.05).abs() < 2e-4, "df {df}: p = {p}");
        }
        assert!((t_two_sided_p(0.0, 7.0) - 1.0).abs() < 1e-12);
        // Agrees with the crate's own critical values.
        let t = crate::stats::t_975(4);
        assert!((t_two_sided_p(t, 4.0) - 0.05).abs() < 1e-3);
    }

    #[test]
    fn welch_known_example() {
        // Expected values computed independently (Python: the formulas by hand
        // and the p-value by Simpson integration of Student's t density).
        let a = [19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0];
        let b = [
            28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7, 23.2, 17.5, 20.6, 18.0,
            23.9, 21.6, 24.3, 20.4, 23.9, 13.3,
        ];
        let w = welch(&a, &b).unwrap();
        assert!((w.t - 2.225512).abs() < 1e-5, "{w:?}");
        assert!((w.df - 24.524635).abs() < 1e-5, "{w:?}");
        assert!((w.p - 0.0354845).abs() < 1e-6, "{w:?}");
        assert!(welch(&a[..1], &b).is_none());
    }

    fn run(iops: f64, p99: f64) -> RunResult {
        // A real (null-engine) result, with the compared figures set.
        let spec = crate::workload::WorkloadSpec {
            engine: crate::workload::EngineKind::Null,
            duration: std::time::Duration::from_millis(20),
            ..Default::default()
        };
        let mut r = crate::runner::run(&spec, &Default::default()).unwrap();
        let t = &mut r.total.total;
        t.iops = iops;
        t.mib_per_sec = iops / 256.0;
        t.latency_us.mean = p99 / 2.0;
        t.latency_us.max = p99 * 2.0;
        t.latency_us.percentiles = [("p50".to_string(), p99 / 3.0), ("p99".to_string(), p99)]
            .into_iter()
            .collect();
        r
    }

    #[test]
    fn regression_threshold() {
        let base = [run(1000.0, 100.0)];
        let b = Side::new("b", vec![1], &base.iter().collect::<Vec<_>>());
        let same = [run(950.0, 105.0)];
        let s = Side::new("s", vec![2], &same.iter().collect::<Vec<_>>());
        assert!(regressions(&b, &s, 10.0).is_empty());
        // -50%: beyond the threshold but within a 20 ms run's noise (too
        // short to measure its own spread: SHORT_RUN_SPREAD_PCT, ±69%).
        assert_eq!(base[0].series.total.len(), 1, "one interval, no spread");
        let half = [run(500.0, 100.0)];
        let s = Side::new("s", vec![3], &half.iter().collect::<Vec<_>>());
        assert!(regressions(&b, &s, 10.0).is_empty());
        // -80%: beyond both.
        let slow = [run(200.0, 100.0)];
        let s = Side::new("s", vec![3], &slow.iter().collect::<Vec<_>>());
        let r = regressions(&b, &s, 10.0);
        assert_eq!(
            r.iter().map(|r| r.metric.as_str()).collect::<Vec<_>>(),
            ["IOPS", "MiB/s"]
        );
        let tail = [run(1200.0, 200.0)];
        let s = Side::new("s", vec![4], &tail.iter().collect::<Vec<_>>());
        let r = regressions(&b, &s, 10.0);
        assert_eq!(
            r.iter().map(|r| r.metric.as_str()).collect::<Vec<_>>(),
            ["lat p99 us"]
        );
        assert!((r[0].rel_pct - 100.0).abs() < 1e-9);
    }

    #[test]
    fn table_marks_significance() {
        let a: Vec<RunResult> = [1000.0, 1010.0, 990.0]
            .iter()
            .map(|&i| run(i, 100.0))
            .collect();
        let b: Vec<RunResult> = [1500.0, 1490.0, 1510.0]
            .iter()
            .map(|&i| run(i, 100.0))
            .collect();
        let sa = Side::new("label:a", vec![1, 2, 3], &a.iter().collect::<Vec<_>>());
        let sb = Side::new("label:b", vec![4, 5, 6], &b.iter().collect::<Vec<_>>());
        let t = table(&[sa.clone(), sb]);
        assert!(t.contains("+50.0% *"), "{t}");
        assert!(t.contains("Welch"), "{t}");
        let one = Side::new("7", vec![7], &[&a[0]]);
        let t = table(&[sa, one]);
        assert!(
            t.contains("Significance needs repetitions: 7 is a single run"),
            "{t}"
        );
    }
}
