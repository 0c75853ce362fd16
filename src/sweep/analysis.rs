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

/// One point of a one-dimensional series: load, throughput, latency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeriesPoint {
    /// Load (queue depth, threads, total outstanding I/O...).
    pub load: f64,
    /// Throughput (IOPS or MB/s).
    pub throughput: f64,
    /// Latency (any one metric, e.g. mean or p99).
    pub latency: f64,
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
    /// Plain words.
    pub explanation: String,
}

/// Finds the saturation knee of a series ordered by increasing load.
///
/// The elasticity between two points is (relative throughput gain) /
/// (relative load increase). The knee is the first point after which the
/// elasticity stays below `threshold` for the next step while latency keeps
/// growing (or at least does not fall). With `threshold` 0.1, a 10% rise in
/// load that buys less than 1% more throughput ends the climb.
pub fn find_knee(points: &[SeriesPoint], threshold: f64) -> Option<Knee> {
    if points.len() < 3 {
        return None;
    }
    let max_t = points.iter().map(|p| p.throughput).fold(0.0, f64::max);
    if max_t <= 0.0 {
        return None;
    }
    for i in 0..points.len() - 1 {
        let (a, b) = (points[i], points[i + 1]);
        if a.load <= 0.0 || a.throughput <= 0.0 || b.load <= a.load {
            continue;
        }
        let gain = (b.throughput - a.throughput) / a.throughput;
        let more_load = (b.load - a.load) / a.load;
        let elasticity = gain / more_load;
        let latency_not_falling = b.latency >= a.latency * 0.98;
        if elasticity < threshold && latency_not_falling {
            let last = points[points.len() - 1];
            let growth = if a.latency > 0.0 {
                last.latency / a.latency
            } else {
                1.0
            };
            return Some(Knee {
                index: i,
                load: a.load,
                throughput: a.throughput,
                share_of_max: a.throughput / max_t,
                latency_growth_after: growth,
                explanation: format!(
                    "throughput stops rising at load {}: going to {} adds {:+.1}% throughput for {:+.0}% load, while latency grows {:.2}x by the last point",
                    trim(a.load),
                    trim(b.load),
                    gain * 100.0,
                    more_load * 100.0,
                    growth
                ),
            });
        }
    }
    None
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
                SeriesPoint {
                    load,
                    throughput: t,
                    latency: load / t * 1e6,
                }
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
                SeriesPoint {
                    load: l,
                    throughput: t,
                    latency: l / t,
                }
            })
            .collect();
        let k = find_knee(&pts, DEFAULT_KNEE_ELASTICITY).unwrap();
        // 16 -> 32 adds 1.8% for +100% load (elasticity 0.018); 8 -> 16 adds 13.5% (0.135).
        assert_eq!(k.load, 16.0, "{}", k.explanation);
    }

    #[test]
    fn linear_scaling_has_no_knee() {
        let pts: Vec<SeriesPoint> = (1..=8)
            .map(|l| SeriesPoint {
                load: l as f64,
                throughput: 1000.0 * l as f64,
                latency: 1.0,
            })
            .collect();
        assert!(find_knee(&pts, DEFAULT_KNEE_ELASTICITY).is_none());
    }

    #[test]
    fn a_dip_with_falling_latency_is_not_a_knee() {
        let pts = vec![
            SeriesPoint {
                load: 1.0,
                throughput: 100.0,
                latency: 10.0,
            },
            SeriesPoint {
                load: 2.0,
                throughput: 100.0,
                latency: 5.0,
            },
            SeriesPoint {
                load: 4.0,
                throughput: 400.0,
                latency: 5.0,
            },
        ];
        assert!(find_knee(&pts, DEFAULT_KNEE_ELASTICITY).is_none());
    }

    #[test]
    fn recommendation_under_a_latency_limit() {
        let pts = vec![
            SeriesPoint {
                load: 1.0,
                throughput: 10_000.0,
                latency: 0.1,
            },
            SeriesPoint {
                load: 2.0,
                throughput: 18_000.0,
                latency: 0.2,
            },
            SeriesPoint {
                load: 4.0,
                throughput: 30_000.0,
                latency: 0.5,
            },
            SeriesPoint {
                load: 8.0,
                throughput: 30_100.0,
                latency: 1.0,
            },
            SeriesPoint {
                load: 16.0,
                throughput: 31_000.0,
                latency: 2.0,
            },
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
