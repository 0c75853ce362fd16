//! Pure analysis of sweep results: repetition statistics, noisy points, the
//! saturation knee, and the best setting under a latency limit. No I/O here,
//! so every rule is unit-tested on series with a known answer.

use serde::{Deserialize, Serialize};

use crate::stats::{mean_sd_ci95, t_975};

/// A point is noisy when its coefficient of variation exceeds this (10%).
pub const NOISY_CV: f64 = 0.10;

/// The half-width of the 95% confidence interval aimed for when suggesting
/// more repetitions: 5% of the mean.
pub const TARGET_CI_FRACTION: f64 = 0.05;

/// Default knee threshold: throughput elasticity below 0.1 means a 10% rise in
/// load bought less than 1% more throughput.
pub const DEFAULT_KNEE_ELASTICITY: f64 = 0.10;

/// Mean, standard deviation, 95% confidence interval and coefficient of variation of repetitions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub sd: f64,
    /// Half-width of the 95% confidence interval (Student t).
    pub ci95: f64,
    /// sd / mean (0 when the mean is 0).
    pub cv: f64,
    /// Number of repetitions.
    pub n: usize,
}

impl Stat {
    /// Statistics of `xs`.
    pub fn of(xs: &[f64]) -> Stat {
        let (mean, sd, ci95) = mean_sd_ci95(xs);
        Stat {
            mean,
            sd,
            ci95,
            cv: if mean != 0.0 { sd / mean.abs() } else { 0.0 },
            n: xs.len(),
        }
    }

    /// The half-width of the 95% confidence interval as a share of the
    /// mean (`±4.2`, in percent), or `-` without repetitions.
    pub fn ci_pct(&self) -> String {
        if self.mean > 0.0 && self.n > 1 {
            format!("±{:.1}", 100.0 * self.ci95 / self.mean)
        } else {
            "-".into()
        }
    }

    /// `mean ± sd` with a precision suited to the magnitude.
    pub fn show(&self) -> String {
        // One precision for both numbers, chosen by the mean's magnitude.
        let big = self.mean.abs() >= 100.0;
        let p = |v: f64| {
            if big {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        };
        if self.n > 1 {
            format!("{} ±{}", p(self.mean), p(self.sd))
        } else {
            p(self.mean)
        }
    }
}

/// True when the repetitions disagree too much to trust the mean.
pub fn is_noisy(s: &Stat) -> bool {
    s.n >= 2 && s.cv > NOISY_CV
}

/// Repetitions needed for a 95% confidence half-width of [`TARGET_CI_FRACTION`] of the mean,
/// given the observed coefficient of variation.
pub fn suggested_repeats(s: &Stat) -> usize {
    if s.n < 2 || s.cv == 0.0 {
        return s.n.max(3);
    }
    // Solve t(n-1) * cv / sqrt(n) <= target for n, iterating because t depends on n.
    let mut n = 2usize;
    while n < 1000 {
        if t_975(n - 1) * s.cv / (n as f64).sqrt() <= TARGET_CI_FRACTION {
            break;
        }
        n += 1;
    }
    n.max(s.n + 1)
}

/// The knee margin: a point is not the knee while a later point's IOPS
/// exceeds it by more than this share (15%) beyond both confidence intervals.
/// It sits above the ±10% spread of a noisy point ([`NOISY_CV`]) and below the
/// 25% that no knee may ever leave on the table.
pub const KNEE_MARGIN: f64 = 0.15;

/// Significance level of the Welch test that decides whether the step after a
/// candidate knee gains anything (the level `iosim compare` reports against).
pub const KNEE_ALPHA: f64 = 0.05;

/// Most repetitions per point a stand-alone sweep ever suggests (the knee
/// rule's and the noisy points'); where even this many would not decide, it
/// says so instead of asking for hundreds. A caller with a time budget
/// (qualify) passes the cap its budget allows instead.
pub const MAX_DECIDING_REPEATS: usize = 10;

/// One point of a one-dimensional series: load, throughput, latency.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SeriesPoint {
    /// Load (queue depth, threads, total outstanding I/O...).
    pub load: f64,
    /// Throughput (IOPS or MB/s), the mean of the repetitions.
    pub throughput: f64,
    /// Sample standard deviation of the throughput over the repetitions.
    pub throughput_sd: f64,
    /// Repetitions behind `throughput` (1: a single run, no confidence interval).
    pub runs: usize,
    /// Latency (any one metric, e.g. mean or p99).
    pub latency: f64,
}

impl SeriesPoint {
    /// A single-run point (no repetitions, so no confidence interval).
    pub fn single(load: f64, throughput: f64, latency: f64) -> SeriesPoint {
        SeriesPoint {
            load,
            throughput,
            throughput_sd: 0.0,
            runs: 1,
            latency,
        }
    }

    /// Half-width of the 95% confidence interval of the throughput; 0 for a
    /// single run, whose interval is unknown (the rule then judges by the mean
    /// alone and marks the knee unconfirmed).
    fn ci95(&self) -> f64 {
        if self.runs < 2 {
            0.0
        } else {
            t_975(self.runs - 1) * self.throughput_sd / (self.runs as f64).sqrt()
        }
    }

    fn repeated(&self) -> bool {
        self.runs >= 2
    }
}

/// Where more load stops buying throughput.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// Index of the knee point in the series.
    pub index: usize,
    /// Its load.
    pub load: f64,
    /// Its throughput.
    pub throughput: f64,
    /// Share of the best throughput of the series it reaches.
    pub share_of_max: f64,
    /// How much latency grew from the knee to the last point (ratio; 1.0 = flat).
    pub latency_growth_after: f64,
    /// True when every point it was judged on had repetitions (confidence
    /// intervals known); false when single runs decided it by their means.
    #[serde(default = "yes")]
    pub confirmed: bool,
    /// Plain words.
    pub explanation: String,
}

fn yes() -> bool {
    true
}

/// What the knee rule concluded about a series.
#[derive(Clone, Debug, PartialEq)]
pub enum KneeVerdict {
    /// The curve flattens here.
    At(Knee),
    /// Throughput still rises beyond the margin up to the last load swept.
    StillScales {
        /// The last load swept.
        last_load: f64,
    },
    /// Noise prevents a decision: a candidate's later IOPS may or may not
    /// exceed it by more than the margin.
    Undecided {
        /// Index of the earliest undecided candidate.
        index: usize,
        /// Its load.
        load: f64,
        /// Repetitions per point that would decide it, at most
        /// `max_repeats`; `None` when even that many would not.
        repeats: Option<usize>,
        /// The cap the caller's budget allowed.
        max_repeats: usize,
    },
    /// Too few points (under three) or no throughput: nothing to judge.
    TooShort,
}

impl KneeVerdict {
    /// The knee, when there is one.
    pub fn knee(self) -> Option<Knee> {
        match self {
            KneeVerdict::At(k) => Some(k),
            _ => None,
        }
    }

    /// One plain-words line for the findings; `None` for a knee (its own
    /// explanation says it) or a series too short to judge.
    pub fn finding(&self) -> Option<String> {
        match self {
            KneeVerdict::At(_) | KneeVerdict::TooShort => None,
            KneeVerdict::StillScales { last_load } => Some(format!(
                "no knee up to load {}: the storage still scales (a later point always had over {:.0}% more throughput); extend the sweep to find where it saturates.",
                trim(*last_load),
                KNEE_MARGIN * 100.0
            )),
            KneeVerdict::Undecided {
                load,
                repeats,
                max_repeats,
                ..
            } => Some(match repeats {
                Some(n) => format!(
                    "knee undecided: the repetitions are too noisy to tell whether throughput flattens at load {}; --repeat {n} would decide it.",
                    trim(*load)
                ),
                None => format!(
                    "knee undecided: the repetitions are too noisy to tell whether throughput flattens at load {}, and even --repeat {max_repeats} would not decide it; quieten the system or run longer points.",
                    trim(*load)
                ),
            }),
        }
    }
}

/// What the knee rule concluded, as kept in a sweep's result (its JSON
/// `knee_status`), so that a report can say "still scales" or "undecided"
/// and not only show a knee or nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum KneeStatus {
    /// The curve flattens: the sweep's `knee` says where.
    Found,
    /// Throughput still rises beyond the margin up to the last load swept.
    StillScales {
        /// The last load swept.
        last_load: f64,
    },
    /// Noise prevents a decision at `load`.
    Undecided {
        /// The earliest undecided candidate's load.
        load: f64,
        /// Repetitions per point that would decide it (at most `max_repeats`).
        repeats: Option<usize>,
        /// The cap that applied.
        max_repeats: usize,
    },
    /// Too few points, no numeric load, or a sweep stored before iosim kept this.
    #[default]
    NotJudged,
}

impl From<&KneeVerdict> for KneeStatus {
    fn from(v: &KneeVerdict) -> KneeStatus {
        match v {
            KneeVerdict::At(_) => KneeStatus::Found,
            KneeVerdict::StillScales { last_load } => KneeStatus::StillScales {
                last_load: *last_load,
            },
            KneeVerdict::Undecided {
                load,
                repeats,
                max_repeats,
                ..
            } => KneeStatus::Undecided {
                load: *load,
                repeats: *repeats,
                max_repeats: *max_repeats,
            },
            KneeVerdict::TooShort => KneeStatus::NotJudged,
        }
    }
}

/// How a candidate fares against the points after it.
enum Plateau {
    /// No later mean exceeds it by more than the margin.
    Holds,
    /// A later point exceeds it by more than the margin beyond both intervals.
    Broken,
    /// A later mean exceeds it by more than the margin, but within the intervals.
    Unclear { repeats: Option<usize> },
}

fn plateau(points: &[SeriesPoint], i: usize, max_repeats: usize) -> Plateau {
    let a = points[i];
    let bar = |m: f64| m * (1.0 + KNEE_MARGIN);
    let mut worst: Option<Option<usize>> = None;
    for b in &points[i + 1..] {
        if b.throughput <= bar(a.throughput) {
            continue;
        }
        // Above the margin by the means: beyond the intervals too? (A single
        // run has no interval, so its mean decides.)
        if b.throughput - b.ci95() > bar(a.throughput + a.ci95()) {
            return Plateau::Broken;
        }
        let n = deciding_repeats(&a, b, max_repeats);
        worst = Some(match worst {
            None => n,
            Some(w) => w.zip(n).map(|(x, y)| x.max(y)),
        });
    }
    match worst {
        None => Plateau::Holds,
        Some(repeats) => Plateau::Unclear { repeats },
    }
}

/// Whether the repetitions prove the plateau after a knee at `points[i]`:
/// for every later point, the one-sided 95% upper bound of its throughput
/// gain over the knee ([`crate::stats::welch_upper_95`]) is within
/// [`KNEE_MARGIN`] of the knee's throughput. This is an equivalence test,
/// not the knee rule's "no significant gain": a knee the rule finds because
/// two repetitions cannot tell a 20% gain from noise is not proven, and no
/// advice is given from it (issue 37: in one of five identical
/// qualifications such a knee became advice). Single runs prove nothing.
pub fn plateau_proven(points: &[SeriesPoint], i: usize) -> bool {
    let Some(a) = points.get(i) else {
        return false;
    };
    let later = &points[i + 1..];
    !later.is_empty()
        && a.throughput > 0.0
        && later.iter().all(|b| {
            crate::stats::welch_upper_95(
                (a.throughput, a.throughput_sd, a.runs),
                (b.throughput, b.throughput_sd, b.runs),
            )
            .is_some_and(|up| up <= KNEE_MARGIN * a.throughput)
        })
}

/// Repetitions per point at which, with the spreads observed, `b`'s interval
/// would clear `a`'s plus the margin; `None` past `max_repeats`.
fn deciding_repeats(a: &SeriesPoint, b: &SeriesPoint, max_repeats: usize) -> Option<usize> {
    let gap = b.throughput - a.throughput * (1.0 + KNEE_MARGIN);
    let spread = a.throughput_sd * (1.0 + KNEE_MARGIN) + b.throughput_sd;
    (a.runs.max(b.runs).max(2)..=max_repeats)
        .find(|&n| t_975(n - 1) * spread / (n as f64).sqrt() < gap)
}

/// Whether the step from `a` to `b` buys nothing: its gain is not significant
/// by Welch's test (both points repeated), or its elasticity (relative gain
/// over relative load increase) is below `threshold`; and latency does not fall.
fn flat_step(a: &SeriesPoint, b: &SeriesPoint, threshold: f64) -> bool {
    let gain = (b.throughput - a.throughput) / a.throughput;
    let more_load = (b.load - a.load) / a.load;
    let negligible = gain / more_load < threshold;
    let insignificant = crate::stats::welch_summary(
        (a.throughput, a.throughput_sd, a.runs),
        (b.throughput, b.throughput_sd, b.runs),
    )
    .is_some_and(|w| w.p >= KNEE_ALPHA);
    (negligible || insignificant) && b.latency >= a.latency * 0.98
}

/// A point's 95% interval wider than this share of its mean tells nothing
/// of a knee, whatever the means say.
pub const KNEE_MAX_INTERVAL: f64 = 0.5;

/// A candidate knee at `points[i]` that the intervals hide (issue 37: two
/// repetitions at ±98% and ±244% named a knee): its own 95% interval is
/// wider than [`KNEE_MAX_INTERVAL`] of its mean; or no later point is
/// narrower than that to compare it with; or the step to the first such
/// point is flat only because the repetitions cannot tell (its elasticity
/// is not negligible and an interval is wider than [`KNEE_MARGIN`]). A
/// noisy point between two tight ones does not hide the knee the tight
/// ones show. Such a candidate is no knee; it is undecided.
fn hidden_by_noise(points: &[SeriesPoint], i: usize, threshold: f64) -> bool {
    let wider = |p: &SeriesPoint, share: f64| p.repeated() && p.ci95() > share * p.throughput;
    let a = &points[i];
    if wider(a, KNEE_MAX_INTERVAL) {
        return true;
    }
    let Some(b) = points[i + 1..]
        .iter()
        .find(|p| !wider(p, KNEE_MAX_INTERVAL))
    else {
        return true;
    };
    let gain = (b.throughput - a.throughput) / a.throughput;
    let more_load = (b.load - a.load) / a.load;
    gain / more_load >= threshold && (wider(a, KNEE_MARGIN) || wider(b, KNEE_MARGIN))
}

/// The one knee rule of iosim (the sweep, its reports and qualify all use it),
/// on a series ordered by increasing load.
///
/// Point `i` is the knee when
/// 1. the step to the next point buys nothing: its gain is not significant by
///    Welch's test at [`KNEE_ALPHA`] (both points repeated) or its elasticity
///    is below `threshold` (0.1: a 10% rise in load buys under 1% more
///    throughput), while latency does not fall; and
/// 2. no later point's throughput exceeds it by more than [`KNEE_MARGIN`]
///    (15%) beyond both 95% confidence intervals, and no later mean does either;
/// 3. the intervals of the point and the next do not hide the step
///    ([`hidden_by_noise`]): a candidate they hide is undecided.
///
/// The first such point is the knee. A later mean above the margin that the
/// intervals cannot separate leaves the candidate undecided, with the
/// repetitions that would decide it (at most `max_repeats`, what the
/// caller's budget allows: [`MAX_DECIDING_REPEATS`] for a stand-alone sweep). Single runs have no interval: their means
/// decide, and the knee is marked unconfirmed. No knee is ever placed before
/// a point with more than 15% (so never 25%) more mean throughput.
pub fn judge_knee(points: &[SeriesPoint], threshold: f64, max_repeats: usize) -> KneeVerdict {
    if points.len() < 3 {
        return KneeVerdict::TooShort;
    }
    let max_t = points.iter().map(|p| p.throughput).fold(0.0, f64::max);
    if max_t <= 0.0 {
        return KneeVerdict::TooShort;
    }
    let mut undecided = None;
    for i in 0..points.len() - 1 {
        let (a, b) = (points[i], points[i + 1]);
        if a.load <= 0.0 || a.throughput <= 0.0 || b.load <= a.load {
            continue;
        }
        if !flat_step(&a, &b, threshold) {
            continue;
        }
        if hidden_by_noise(points, i, threshold) {
            undecided.get_or_insert((i, deciding_repeats(&a, &b, max_repeats)));
            continue;
        }
        match plateau(points, i, max_repeats) {
            Plateau::Broken => continue,
            Plateau::Unclear { repeats } => {
                undecided.get_or_insert((i, repeats));
                continue;
            }
            Plateau::Holds => {}
        }
        let gain = (b.throughput - a.throughput) / a.throughput;
        let more_load = (b.load - a.load) / a.load;
        let last = points[points.len() - 1];
        let growth = if a.latency > 0.0 {
            last.latency / a.latency
        } else {
            1.0
        };
        let confirmed = points[i..].iter().all(SeriesPoint::repeated);
        return KneeVerdict::At(Knee {
            index: i,
            load: a.load,
            throughput: a.throughput,
            share_of_max: a.throughput / max_t,
            latency_growth_after: growth,
            confirmed,
            explanation: format!(
                "throughput stops rising at load {}: going to {} adds {:+.1}% throughput for {:+.0}% load, no later point has over {:.0}% more, while latency grows {:.2}x by the last point{}",
                trim(a.load),
                trim(b.load),
                gain * 100.0,
                more_load * 100.0,
                KNEE_MARGIN * 100.0,
                growth,
                if confirmed {
                    ""
                } else {
                    "; single runs, no confidence interval: --repeat 3 would confirm it"
                }
            ),
        });
    }
    match undecided {
        Some((index, repeats)) => KneeVerdict::Undecided {
            index,
            load: points[index].load,
            repeats,
            max_repeats,
        },
        None => KneeVerdict::StillScales {
            last_load: points[points.len() - 1].load,
        },
    }
}

/// The knee by [`judge_knee`] (with a stand-alone sweep's cap), when there is one.
pub fn find_knee(points: &[SeriesPoint], threshold: f64) -> Option<Knee> {
    judge_knee(points, threshold, MAX_DECIDING_REPEATS).knee()
}

fn trim(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The best setting under a latency limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    /// Index of the chosen point.
    pub index: usize,
    /// Plain words.
    pub explanation: String,
}

/// Picks the point with the highest throughput whose latency is at most
/// `max_latency`; ties (within 1%) go to the lighter load. None when no point qualifies.
pub fn recommend(points: &[SeriesPoint], max_latency: f64) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, p) in points.iter().enumerate() {
        if p.latency > max_latency {
            continue;
        }
        best = match best {
            None => Some(i),
            Some(b) => {
                let q = points[b];
                if p.throughput > q.throughput * 1.01
                    || (p.throughput >= q.throughput * 0.99 && p.load < q.load)
                {
                    Some(i)
                } else {
                    Some(b)
                }
            }
        };
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 001's queue-depth sweep (8 KiB random reads, 1 thread), IOPS for -o 1..27.
    /// The author concludes: "we seem to start losing steam at around 10 outstanding IOs".
    const SEED001_QD: [f64; 27] = [
        9446.79, 15901.80, 20758.20, 24021.20, 26047.90, 27559.10, 28666.40, 29320.90, 29733.70,
        30337.00, 30407.50, 30609.78, 30843.40, 31548.50, 30692.10, 30810.40, 31815.00, 33115.19,
        31290.40, 32430.40, 33345.60, 31634.80, 31330.50, 32769.40, 34264.30, 31679.00, 31501.60,
    ];

    fn series(tp: &[f64]) -> Vec<SeriesPoint> {
        tp.iter()
            .enumerate()
            .map(|(i, &t)| {
                let load = (i + 1) as f64;
                // Little's law: latency = outstanding / throughput.
                SeriesPoint::single(load, t, load / t * 1e6)
            })
            .collect()
    }

    #[test]
    fn seed001_knee_is_around_ten() {
        let k = find_knee(&series(&SEED001_QD), DEFAULT_KNEE_ELASTICITY).unwrap();
        assert_eq!(k.load, 10.0, "{}", k.explanation);
        assert!(k.share_of_max > 0.85);
        assert!(k.latency_growth_after > 2.0);
    }

    #[test]
    fn synthetic_saturation_curve() {
        // Throughput = 100k * (1 - exp(-load/4)): saturates; load doubles each step.
        let pts: Vec<SeriesPoint> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
            .iter()
            .map(|&l: &f64| {
                let t = 100_000.0 * (1.0 - (-l / 4.0).exp());
                SeriesPoint::single(l, t, l / t)
            })
            .collect();
        let k = find_knee(&pts, DEFAULT_KNEE_ELASTICITY).unwrap();
        // 16 -> 32 adds 1.8% for +100% load (elasticity 0.018); 8 -> 16 adds 13.5% (0.135).
        assert_eq!(k.load, 16.0, "{}", k.explanation);
    }

    #[test]
    fn linear_scaling_has_no_knee() {
        let pts: Vec<SeriesPoint> = (1..=8)
            .map(|l| SeriesPoint::single(l as f64, 1000.0 * l as f64, 1.0))
            .collect();
        assert!(find_knee(&pts, DEFAULT_KNEE_ELASTICITY).is_none());
    }

    #[test]
    fn a_dip_with_falling_latency_is_not_a_knee() {
        let pts = vec![
            SeriesPoint::single(1.0, 100.0, 10.0),
            SeriesPoint::single(2.0, 100.0, 5.0),
            SeriesPoint::single(4.0, 400.0, 5.0),
        ];
        assert!(find_knee(&pts, DEFAULT_KNEE_ELASTICITY).is_none());
    }

    /// Queue depths 1..64 with their IOPS and, when `sd` is given, three
    /// repetitions with that share of the mean as standard deviation; latency
    /// by Little's law.
    fn qd_curve(iops: &[f64], sd: Option<f64>) -> Vec<SeriesPoint> {
        iops.iter()
            .enumerate()
            .map(|(i, &t)| {
                let load = (1u32 << i) as f64;
                SeriesPoint {
                    load,
                    throughput: t,
                    throughput_sd: sd.map_or(0.0, |s| s * t),
                    runs: if sd.is_some() { 3 } else { 1 },
                    latency: load / t * 1e6,
                }
            })
            .collect()
    }

    /// Issue 24's one-minute qualification: QD 2 measured below QD 1, then
    /// IOPS rose fourfold. The old rule put the knee at QD 1.
    const ISSUE24: [f64; 7] = [
        11_700.0, 10_400.0, 19_000.0, 31_000.0, 44_900.0, 45_300.0, 45_600.0,
    ];

    fn never_before_a_quarter_more(pts: &[SeriesPoint], k: &Knee) {
        assert!(
            pts[k.index..]
                .iter()
                .all(|p| p.throughput <= k.throughput * 1.25),
            "{}",
            k.explanation
        );
    }

    #[test]
    fn issue24_dip_is_not_a_knee_single_runs() {
        // Single runs: no confidence interval, the means decide and the knee
        // is marked unconfirmed.
        let pts = qd_curve(&ISSUE24, None);
        let k = find_knee(&pts, DEFAULT_KNEE_ELASTICITY).unwrap();
        assert_eq!(k.load, 16.0, "{}", k.explanation);
        assert!(!k.confirmed);
        assert!(k.explanation.contains("--repeat 3"), "{}", k.explanation);
        never_before_a_quarter_more(&pts, &k);
    }

    #[test]
    fn issue24_dip_is_not_a_knee_with_repetitions() {
        let pts = qd_curve(&ISSUE24, Some(0.05));
        let k = find_knee(&pts, DEFAULT_KNEE_ELASTICITY).unwrap();
        assert_eq!(k.load, 16.0, "{}", k.explanation);
        assert!(k.confirmed);
        never_before_a_quarter_more(&pts, &k);
    }

    #[test]
    fn a_curve_that_flattens_has_its_knee_where_it_flattens() {
        let pts = qd_curve(
            &[10_000.0, 19_000.0, 34_000.0, 45_000.0, 46_000.0, 46_500.0],
            Some(0.02),
        );
        let k = find_knee(&pts, DEFAULT_KNEE_ELASTICITY).unwrap();
        assert_eq!(k.load, 8.0, "{}", k.explanation);
        assert!(k.confirmed);
    }

    #[test]
    fn a_linear_curve_still_scales() {
        let pts = qd_curve(
            &[1e3, 2e3, 4e3, 8e3, 16e3, 32e3, 64e3].map(|t| t * 1.0),
            Some(0.03),
        );
        let v = judge_knee(&pts, DEFAULT_KNEE_ELASTICITY, MAX_DECIDING_REPEATS);
        assert_eq!(v, KneeVerdict::StillScales { last_load: 64.0 });
        let f = v.finding().unwrap();
        assert!(
            f.contains("no knee up to load 64: the storage still scales"),
            "{f}"
        );
    }

    #[test]
    fn noise_asks_for_the_repetitions_that_decide() {
        // QD 1 to 2 gains nothing significant, but QD 4's mean is 30% over
        // QD 1 with intervals too wide to tell it from 15%.
        let mut pts = qd_curve(&[20_000.0, 21_000.0, 26_000.0], Some(0.0));
        for (p, sd) in pts.iter_mut().zip([1_000.0, 1_000.0, 1_000.0]) {
            p.throughput_sd = sd;
        }
        let v = judge_knee(&pts, DEFAULT_KNEE_ELASTICITY, MAX_DECIDING_REPEATS);
        assert_eq!(
            v,
            KneeVerdict::Undecided {
                index: 0,
                load: 1.0,
                repeats: Some(5),
                max_repeats: MAX_DECIDING_REPEATS
            }
        );
        assert!(v.finding().unwrap().contains("--repeat 5"));
        // Three times the spread: even the cap would not decide.
        for p in &mut pts {
            p.throughput_sd = 3_000.0;
        }
        let v = judge_knee(&pts, DEFAULT_KNEE_ELASTICITY, MAX_DECIDING_REPEATS);
        assert!(
            matches!(v, KneeVerdict::Undecided { repeats: None, .. }),
            "{v:?}"
        );
        let f = v.finding().unwrap();
        assert!(
            f.contains(&format!("even --repeat {MAX_DECIDING_REPEATS} would not")),
            "{f}"
        );
        // A smaller budget caps the suggestion: the first spread needs 5
        // repetitions, which a cap of 4 cannot give.
        for p in &mut pts {
            p.throughput_sd = 1_000.0;
        }
        let v = judge_knee(&pts, DEFAULT_KNEE_ELASTICITY, 4);
        assert_eq!(
            KneeStatus::from(&v),
            KneeStatus::Undecided {
                load: 1.0,
                repeats: None,
                max_repeats: 4
            }
        );
        assert!(v.finding().unwrap().contains("even --repeat 4 would not"));
    }

    #[test]
    fn the_documented_vm_sweep_has_its_knee_at_32() {
        // docs/qualify-storage.md's recorded QD sweep (3 repetitions): QD 8
        // and 16 gain little to the next step, but QD 64 has 31% and 20%
        // more IOPS; only QD 32 has nothing over 15% after it.
        let m = [
            32_075.0, 48_835.0, 60_280.0, 72_666.0, 79_534.0, 91_203.0, 95_272.0,
        ];
        let sd = [1_221.0, 687.0, 2_726.0, 3_466.0, 7_660.0, 12_643.0, 4_433.0];
        let lat = [31.05, 40.74, 66.08, 110.0, 201.0, 354.0, 668.0];
        let pts: Vec<SeriesPoint> = (0..7)
            .map(|i| SeriesPoint {
                load: (1u32 << i) as f64,
                throughput: m[i],
                throughput_sd: sd[i],
                runs: 3,
                latency: lat[i],
            })
            .collect();
        let k = find_knee(&pts, DEFAULT_KNEE_ELASTICITY).unwrap();
        assert_eq!(k.load, 32.0, "{}", k.explanation);
        assert!(k.explanation.contains("+4.5%") && k.explanation.contains("1.89x"));
        // Its 14% spread at QD 32 over three repetitions cannot rule out
        // 26% more at QD 64: a knee, but no advice from it.
        assert!(!plateau_proven(&pts, k.index));
    }

    /// Issue 37: two repetitions whose intervals reach ±67% of flat means
    /// named a knee at QD 1; such intervals overlap over any rise.
    #[test]
    fn no_knee_where_the_intervals_overlap() {
        let m = [20_000.0, 20_500.0, 20_700.0, 20_800.0];
        let pts: Vec<SeriesPoint> = (0..4)
            .map(|i| SeriesPoint {
                load: (1u32 << i) as f64,
                throughput: m[i],
                throughput_sd: 1_500.0,
                runs: 2,
                latency: 50.0 * (1u32 << i) as f64,
            })
            .collect();
        let v = judge_knee(&pts, DEFAULT_KNEE_ELASTICITY, MAX_DECIDING_REPEATS);
        assert!(matches!(v, KneeVerdict::Undecided { .. }), "{v:?}");
        assert!(v.knee().is_none());
        // Tight repetitions of the same means: the knee at QD 1 stands.
        let tight: Vec<SeriesPoint> = pts
            .iter()
            .map(|p| SeriesPoint {
                throughput_sd: 50.0,
                ..*p
            })
            .collect();
        let k = find_knee(&tight, DEFAULT_KNEE_ELASTICITY).unwrap();
        assert_eq!(k.load, 1.0);
        // ... and is proven: every later point's gain is bounded under 15%.
        assert!(plateau_proven(&tight, k.index));
    }

    /// Issue 37: knee advice only from a plateau the repetitions prove.
    #[test]
    fn a_plateau_is_proven_only_by_tight_repetitions() {
        let pts = |sd: f64, runs: usize| -> Vec<SeriesPoint> {
            [50_000.0, 51_000.0, 52_000.0]
                .iter()
                .enumerate()
                .map(|(i, &m)| SeriesPoint {
                    load: (16u32 << i) as f64,
                    throughput: m,
                    throughput_sd: sd,
                    runs,
                    latency: 300.0 * (1u32 << i) as f64,
                })
                .collect()
        };
        // 2% spread over 3 repetitions: +4%, bounded at +7.5% (one-sided 95%).
        assert!(plateau_proven(&pts(1_000.0, 3), 0));
        // 8% spread (this VM's median between runs) over 3: up to +18%.
        assert!(!plateau_proven(&pts(4_000.0, 3), 0));
        // Single runs have no interval; the last point has nothing after it.
        assert!(!plateau_proven(&pts(0.0, 1), 0));
        assert!(!plateau_proven(&pts(1_000.0, 3), 2));
        // A point 20% up, however tight, is no plateau.
        let mut up = pts(100.0, 5);
        up[2].throughput = 60_000.0;
        assert!(!plateau_proven(&up, 0));
    }

    #[test]
    fn recommendation_under_a_latency_limit() {
        let pts = vec![
            SeriesPoint::single(1.0, 10_000.0, 0.1),
            SeriesPoint::single(2.0, 18_000.0, 0.2),
            SeriesPoint::single(4.0, 30_000.0, 0.5),
            SeriesPoint::single(8.0, 30_100.0, 1.0),
            SeriesPoint::single(16.0, 31_000.0, 2.0),
        ];
        assert_eq!(recommend(&pts, 0.6), Some(2));
        // 30,100 is within 1% of 30,000: the lighter load wins.
        assert_eq!(recommend(&pts, 1.0), Some(2));
        assert_eq!(recommend(&pts, 5.0), Some(4));
        assert_eq!(recommend(&pts, 0.05), None);
    }

    #[test]
    fn repetition_statistics() {
        let s = Stat::of(&[100.0, 110.0, 90.0]);
        assert!((s.mean - 100.0).abs() < 1e-9);
        assert!((s.sd - 10.0).abs() < 1e-9);
        assert!((s.cv - 0.1).abs() < 1e-9);
        assert!(!is_noisy(&s));
        let noisy = Stat::of(&[100.0, 150.0, 60.0]);
        assert!(is_noisy(&noisy));
        let n = suggested_repeats(&noisy);
        // cv ~0.43: t * 0.43 / sqrt(n) <= 0.05 needs n around 300.
        assert!(n > 100, "{n}");
        assert_eq!(suggested_repeats(&Stat::of(&[1.0])), 3);
        assert_eq!(s.show(), "100 ±10");
    }
}
