//! Change-point segmentation of a per-interval series: PELT (Killick,
//! Fearnhead and Eckley, "Optimal detection of changepoints with a linear
//! computational cost", JASA 2012) with the squared-error cost of a change
//! in mean, its penalty scaled by a robust estimate of the series' noise.
//!
//! The series is first reduced to at most [`MAX_POINTS`] block means, so a
//! day of one-second intervals costs what 2,000 intervals do; a change is
//! then placed to within one block.

/// Longest series segmented point by point; longer ones are averaged in
/// blocks of equal length first.
pub const MAX_POINTS: usize = 2_000;

/// Fewest points a segment may have: a single slow interval is a stall
/// ([`super::stalls`]), not a new level.
pub const MIN_SEGMENT: usize = 3;

/// The penalty per change, in units of the noise variance times `ln n`:
/// the Bayesian information criterion's 2, doubled because storage series
/// are autocorrelated (a slow second is often followed by another), which
/// makes the plain criterion find changes in noise. Measured on this
/// project's quiet runs (docs/changes.md): no false step in 40 runs.
pub const PENALTY_PER_LN_N: f64 = 4.0;

/// One stretch of the series at one level: points `start..end`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// First point.
    pub start: usize,
    /// One past the last point.
    pub end: usize,
    /// The points' mean.
    pub mean: f64,
}

/// Lags (in points) over which [`noise`] looks for the series' wander.
pub const NOISE_LAGS: usize = 4;

/// The noise of `x`: the standard deviation of its points about their local
/// level, from the median absolute difference of points 1 to
/// [`NOISE_LAGS`] apart, the largest (so steps and drifts barely move it,
/// while a series that wanders for a few points before it comes back, as
/// a storage series does, counts its wander as noise). Never below 0.5% of
/// the median level, so a perfectly even series (a throttle's) does not
/// make every wobble a change.
pub fn noise(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let mut sigma: f64 = 0.0;
    // A lag of k puts k of every n - k differences across a step: lags
    // stay under an eighth of the series so the median never lands there.
    for lag in 1..=NOISE_LAGS.min(x.len() / 8).max(1) {
        let mut d: Vec<f64> = x[lag..].iter().zip(x).map(|(b, a)| (b - a).abs()).collect();
        // For Gaussian noise the median of |x_i+k - x_i| is 0.6745 * sqrt(2) * sigma.
        sigma = sigma.max(median(&mut d) / (0.674_49 * std::f64::consts::SQRT_2));
    }
    let mut v = x.to_vec();
    let level = median(&mut v).abs();
    sigma.max(0.005 * level).max(f64::MIN_POSITIVE)
}

/// The median (sorts `v`); 0 for none.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Averages `x` in blocks so at most `max` remain; returns the block means
/// and the block length (1 when `x` is short enough).
pub fn blocks(x: &[f64], max: usize) -> (Vec<f64>, usize) {
    let b = x.len().div_ceil(max.max(1)).max(1);
    if b == 1 {
        return (x.to_vec(), 1);
    }
    let means = x
        .chunks(b)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect();
    (means, b)
}

/// The segments of `x` (at most [`MAX_POINTS`] of them are looked at point
/// by point; see [`blocks`]), each at least `min_len` points (and
/// [`MIN_SEGMENT`]) long: PELT with the penalty
/// `PENALTY_PER_LN_N * noise^2 * ln n`. Segment bounds are in `x`'s indices.
pub fn segment(x: &[f64], min_len: usize) -> Vec<Segment> {
    let n_all = x.len();
    if n_all == 0 {
        return Vec::new();
    }
    let (y, b) = blocks(x, MAX_POINTS);
    let sigma = noise(&y);
    let n = y.len();
    let beta = PENALTY_PER_LN_N * sigma * sigma * (n.max(2) as f64).ln();
    let cuts = pelt(&y, beta, min_len.div_ceil(b).max(MIN_SEGMENT));
    let mut bounds = vec![0];
    bounds.extend(cuts.iter().map(|&c| (c * b).min(n_all)));
    bounds.push(n_all);
    bounds
        .windows(2)
        .filter(|w| w[1] > w[0])
        .map(|w| Segment {
            start: w[0],
            end: w[1],
            mean: x[w[0]..w[1]].iter().sum::<f64>() / (w[1] - w[0]) as f64,
        })
        .collect()
}

/// PELT: the change points (indices where a new segment starts) minimising
/// the sum of squared deviations from each segment's mean plus `beta` per
/// change, segments at least `min_len` long.
pub fn pelt(y: &[f64], beta: f64, min_len: usize) -> Vec<usize> {
    let n = y.len();
    let m = min_len.max(1);
    if n < 2 * m {
        return Vec::new();
    }
    // Prefix sums for O(1) segment costs.
    let mut s1 = vec![0.0; n + 1];
    let mut s2 = vec![0.0; n + 1];
    for (i, v) in y.iter().enumerate() {
        s1[i + 1] = s1[i] + v;
        s2[i + 1] = s2[i] + v * v;
    }
    let cost = |a: usize, b: usize| {
        let len = (b - a) as f64;
        let s = s1[b] - s1[a];
        (s2[b] - s2[a] - s * s / len).max(0.0)
    };
    let mut f = vec![f64::INFINITY; n + 1];
    let mut last = vec![0usize; n + 1];
    f[0] = -beta;
    let mut candidates: Vec<usize> = vec![0];
    for t in m..=n {
        // A segment ending at t may start at a candidate at least m earlier.
        let mut best = f64::INFINITY;
        let mut arg = 0;
        for &tau in candidates.iter().filter(|&&tau| tau + m <= t) {
            let v = f[tau] + cost(tau, t) + beta;
            if v < best {
                best = v;
                arg = tau;
            }
        }
        f[t] = best;
        last[t] = arg;
        // Prune candidates that can never be optimal again (K = 0 for this cost).
        candidates.retain(|&tau| tau + m > t || f[tau] + cost(tau, t) <= f[t]);
        // t becomes a candidate start once it can begin a segment of length m.
        if t + m <= n {
            candidates.push(t);
        }
    }
    let mut cuts = Vec::new();
    let mut t = n;
    while t > 0 {
        let s = last[t];
        if s > 0 {
            cuts.push(s);
        }
        t = s;
    }
    cuts.reverse();
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic noise of standard deviation about `sd`.
    fn noisy(levels: &[(usize, f64)], sd: f64) -> Vec<f64> {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut out = Vec::new();
        for &(n, level) in levels {
            for _ in 0..n {
                // Sum of 4 uniforms: roughly normal.
                let mut z = 0.0;
                for _ in 0..4 {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    z += (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                }
                out.push(level + z * sd * (12.0f64 / 4.0).sqrt());
            }
        }
        out
    }

    #[test]
    fn a_step_is_found_where_it_is() {
        let x = noisy(&[(20, 2000.0), (20, 500.0)], 20.0);
        let s = segment(&x, MIN_SEGMENT);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!(s[1].start, 20);
        assert!((s[0].mean - 2000.0).abs() < 20.0 && (s[1].mean - 500.0).abs() < 20.0);
    }

    #[test]
    fn noise_alone_is_one_segment() {
        for sd in [1.0, 50.0, 300.0] {
            let x = noisy(&[(300, 10_000.0)], sd);
            assert_eq!(segment(&x, MIN_SEGMENT).len(), 1, "sd {sd}");
        }
        // A perfectly even series (a throttle) too.
        assert_eq!(segment(&[2000.0; 50], MIN_SEGMENT).len(), 1);
    }

    #[test]
    fn several_steps_and_a_long_series() {
        let x = noisy(&[(30, 100.0), (40, 160.0), (30, 80.0)], 4.0);
        let s = segment(&x, MIN_SEGMENT);
        assert_eq!(
            s.iter().map(|s| s.start).collect::<Vec<_>>(),
            vec![0, 30, 70]
        );
        // 86,400 points: block means, the step placed within a block.
        // (the block that holds the change may stand alone: the detectors
        // join levels under 15% apart).
        let x = noisy(&[(50_000, 1000.0), (36_400, 700.0)], 30.0);
        let s = segment(&x, MIN_SEGMENT);
        assert!((2..=3).contains(&s.len()), "{:?}", &s[..s.len().min(5)]);
        assert!(s[1].start.abs_diff(50_000) <= 44, "{}", s[1].start);
        assert!((s[s.len() - 1].mean - 700.0).abs() < 5.0);
    }

    #[test]
    fn noise_ignores_steps() {
        let x = noisy(&[(100, 1000.0), (100, 100.0)], 10.0);
        let sd = noise(&x);
        assert!((7.0..14.0).contains(&sd), "{sd}");
        assert_eq!(median(&mut [3.0, 1.0, 2.0, 10.0]), 2.5);
        assert_eq!(blocks(&[1.0, 2.0, 3.0, 4.0, 5.0], 2), (vec![2.0, 4.5], 3));
    }
}
