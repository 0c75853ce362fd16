//! Access skew: which blocks of a region random I/O hits, and how often.
//!
//! A [`Distribution`] is defined over *ranks* (rank 0 is the hottest block);
//! a [`Placement`] maps ranks onto the region's aligned block positions,
//! either in order from the start or scattered by a keyed permutation.
//!
//! Sampling is table driven and allocation free: the rank space is cut into
//! buckets (single ranks up to 1024, then geometrically growing by 1/256, so a
//! billion blocks need about 4,600 buckets), each bucket's probability is
//! computed once from the distribution's CDF, and a Vose alias table picks a
//! bucket with one random number and one comparison. A second random number
//! picks the rank inside the bucket, where the density varies by less than
//! half a percent.

use std::fmt;
use std::str::FromStr;

use rand::rngs::SmallRng;
use rand::{Rng, RngCore};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How random offsets are spread over a region (fio's `random_distribution`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Distribution {
    /// Every block equally likely (default).
    #[default]
    Uniform,
    /// Zipf: the block of rank k is hit in proportion to 1/k^theta (theta > 0, not 1 exactly is fine too).
    Zipf(f64),
    /// Pareto with parameter h (0 < h < 0.5): the hottest fraction h of the
    /// blocks takes the fraction 1-h of the I/O (h = 0.2 is the 80/20 rule).
    Pareto(f64),
    /// Normal: a bell of standard deviation sigma (percent of the region)
    /// centred on the hot spot.
    Normal(f64),
    /// `hot`% of the blocks take `access`% of the I/O; both uniform inside.
    HotCold {
        /// Percentage of the region that is hot.
        hot: f64,
        /// Percentage of the I/O that goes to the hot part.
        access: f64,
    },
}

impl Distribution {
    /// True for the uniform default (no tables, no counting).
    pub fn is_uniform(&self) -> bool {
        matches!(self, Distribution::Uniform)
    }

    /// Checks the parameters; the message says what to use instead.
    pub fn validate(&self) -> Result<(), String> {
        let ok = match *self {
            Distribution::Uniform => true,
            Distribution::Zipf(t) => t.is_finite() && t > 0.0 && t <= 10.0,
            Distribution::Pareto(h) => h.is_finite() && h > 0.0 && h < 0.5,
            Distribution::Normal(s) => s.is_finite() && s > 0.0 && s <= 1000.0,
            Distribution::HotCold { hot, access } => {
                hot > 0.0 && hot < 100.0 && (0.0..=100.0).contains(&access)
            }
        };
        if ok {
            Ok(())
        } else {
            Err(usage(&self.to_string()))
        }
    }

    /// The share of I/O the distribution sends to the hottest `frac` of `n` ranks.
    pub fn expected_share(&self, n: u64, frac: f64) -> f64 {
        let k = hot_count(n, frac);
        let c = Cdf::new(*self, n);
        c.at(k) / c.at(n)
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Distribution::Uniform => write!(f, "uniform"),
            Distribution::Zipf(t) => write!(f, "zipf:{t}"),
            Distribution::Pareto(h) => write!(f, "pareto:{h}"),
            Distribution::Normal(s) => write!(f, "normal:{s}"),
            Distribution::HotCold { hot, access } => write!(f, "hotcold:{hot}/{access}"),
        }
    }
}

impl FromStr for Distribution {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        let (name, arg) = match t.split_once(':') {
            Some((n, a)) => (n.trim(), Some(a.trim())),
            None => (t.as_str(), None),
        };
        let bad = || usage(s);
        let num = |a: Option<&str>| -> Result<f64, String> {
            a.ok_or_else(bad)?
                .trim_end_matches('%')
                .parse::<f64>()
                .map_err(|_| bad())
        };
        let d = match name {
            "uniform" | "random" if arg.is_none() => Distribution::Uniform,
            "zipf" => Distribution::Zipf(num(arg)?),
            "pareto" => Distribution::Pareto(num(arg)?),
            "normal" | "gauss" => Distribution::Normal(num(arg)?),
            "hotcold" => {
                let a = arg.ok_or_else(bad)?;
                let (h, x) = a.split_once('/').ok_or_else(bad)?;
                Distribution::HotCold {
                    hot: num(Some(h))?,
                    access: num(Some(x))?,
                }
            }
            _ => return Err(bad()),
        };
        d.validate()?;
        Ok(d)
    }
}

impl Serialize for Distribution {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Distribution {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The error message for a distribution that cannot be used.
fn usage(given: &str) -> String {
    format!(
        "invalid --distribution '{given}': use uniform, zipf:THETA (0 < THETA <= 10, e.g. zipf:1.1), \
         pareto:H (0 < H < 0.5, e.g. pareto:0.2), normal:SIGMA (percent of the region, e.g. normal:5) \
         or hotcold:HOT/ACCESS (percentages, e.g. hotcold:10/90)"
    )
}

/// Parses a distribution for clap.
pub fn distribution_arg(s: &str) -> Result<Distribution, String> {
    s.parse()
}

/// Spreads `--distribution` values over `targets` targets: one value (or none)
/// is the workload's and leaves the targets empty; one per target pairs them in order.
pub fn per_target(
    given: &[Distribution],
    targets: usize,
) -> Result<Vec<Distribution>, crate::Error> {
    match given.len() {
        0 | 1 => Ok(Vec::new()),
        n if n == targets => Ok(given.to_vec()),
        n => Err(crate::Error::BadWorkload(format!(
            "--distribution was given {n} times for {targets} target(s): give it once for all targets or once per target"
        ))),
    }
}

/// Where the hot blocks lie in the region.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// Scattered over the region by a seeded permutation (default; what a database's hot pages look like).
    #[default]
    Random,
    /// Packed at the start of the region, hottest first (a hot table at the front of a file).
    Start,
}

/// Number of ranks in the hottest `frac` of `n` (at least one).
pub fn hot_count(n: u64, frac: f64) -> u64 {
    ((n as f64 * frac).ceil() as u64).clamp(1, n.max(1))
}

/// Ranks below this are buckets of their own.
const EXACT_RANKS: u64 = 1024;
/// Beyond [`EXACT_RANKS`], each bucket is this fraction longer than its start rank.
const GROWTH: f64 = 1.0 / 256.0;

/// The cumulative weight of ranks `[0, k)`, unnormalised.
struct Cdf {
    d: Distribution,
    n: u64,
    /// Zipf: prefix sums of the exact head, `head[k]` = weight of ranks below k.
    head: Vec<f64>,
}

impl Cdf {
    fn new(d: Distribution, n: u64) -> Cdf {
        let mut head = Vec::new();
        if let Distribution::Zipf(theta) = d {
            let mut s = 0.0;
            head.push(0.0);
            for i in 1..=EXACT_RANKS {
                s += (i as f64).powf(-theta);
                head.push(s);
            }
        }
        Cdf { d, n, head }
    }

    /// Weight of ranks below `k` (0 <= k <= n).
    fn at(&self, k: u64) -> f64 {
        let n = self.n as f64;
        let x = k as f64;
        match self.d {
            Distribution::Uniform => x,
            Distribution::Zipf(theta) => zipf_cum(&self.head, k, theta),
            Distribution::Pareto(h) => {
                // F(u) = u^(ln(1-h)/ln h): the hottest h of the ranks get 1-h of the weight.
                let p = (1.0 - h).ln() / h.ln();
                (x / n).powf(p)
            }
            Distribution::Normal(sigma_pct) => {
                // Half-normal in rank space, truncated at n (normalised later).
                let sigma = (n * sigma_pct / 100.0).max(1e-9);
                erf(x / (sigma * std::f64::consts::SQRT_2))
            }
            Distribution::HotCold { hot, access } => {
                let h = hot_count(self.n, hot / 100.0) as f64;
                let a = access / 100.0;
                if x <= h {
                    a * x / h
                } else if n > h {
                    a + (1.0 - a) * (x - h) / (n - h)
                } else {
                    1.0
                }
            }
        }
    }
}

/// Sum of (i+1)^-theta for ranks i in [0, k): exact below [`EXACT_RANKS`],
/// then the exact head plus the midpoint integral of the tail (relative
/// error far below one part in a million there).
fn zipf_cum(head: &[f64], k: u64, theta: f64) -> f64 {
    let mut s = head[k.min(EXACT_RANKS) as usize];
    if k > EXACT_RANKS {
        let a = EXACT_RANKS as f64 + 0.5;
        let b = k as f64 + 0.5;
        s += if (theta - 1.0).abs() < 1e-12 {
            (b / a).ln()
        } else {
            (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta)
        };
    }
    s
}

/// The error function (Abramowitz and Stegun 7.1.26, absolute error under 1.5e-7).
fn erf(x: f64) -> f64 {
    let sign = if x < 0.0 { -1.0 } else { 1.0 };
    let x = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-x * x).exp();
    sign * y
}

/// A prepared sampler of ranks in `[0, n)`: read-only, shared by a target's threads.
#[derive(Clone, Debug)]
pub struct RankSampler {
    n: u64,
    /// Bucket `i` covers ranks `starts[i]..starts[i+1]`.
    starts: Vec<u64>,
    /// Alias method: keep bucket `i` when a 32-bit random number is below `keep[i]`...
    keep: Vec<u32>,
    /// ...otherwise take `alias[i]`.
    alias: Vec<u32>,
}

impl RankSampler {
    /// Tables for `d` over `n` ranks (`n` >= 1).
    pub fn new(d: Distribution, n: u64) -> RankSampler {
        let n = n.max(1);
        let starts = bucket_starts(d, n);
        let cdf = Cdf::new(d, n);
        let mut prev = 0.0;
        let mut w: Vec<f64> = starts[1..]
            .iter()
            .map(|&e| {
                let c = cdf.at(e);
                let m = (c - prev).max(0.0);
                prev = c;
                m
            })
            .collect();
        let total: f64 = w.iter().sum();
        let nb = w.len();
        if total <= 0.0 || !total.is_finite() {
            w.iter_mut().for_each(|x| *x = 1.0);
        } else {
            w.iter_mut().for_each(|x| *x *= nb as f64 / total);
        }
        // Vose's alias method.
        let mut keep = vec![u32::MAX; nb];
        let mut alias: Vec<u32> = (0..nb as u32).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..nb).partition(|&i| w[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            keep[s] = (w[s] * 4_294_967_296.0).min(u32::MAX as f64) as u32;
            alias[s] = l as u32;
            w[l] -= 1.0 - w[s];
            if w[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        RankSampler {
            n,
            starts,
            keep,
            alias,
        }
    }

    /// Number of ranks.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Always false (a sampler has at least one rank).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Number of buckets in the tables.
    pub fn buckets(&self) -> usize {
        self.keep.len()
    }

    /// One rank: two random numbers, one table look-up, no allocation.
    #[inline]
    pub fn sample(&self, rng: &mut SmallRng) -> u64 {
        let r = rng.next_u64();
        let nb = self.keep.len() as u64;
        let i = (((r >> 32) * nb) >> 32) as usize;
        let b = if (r as u32) < self.keep[i] {
            i
        } else {
            self.alias[i] as usize
        };
        let lo = self.starts[b];
        let len = self.starts[b + 1] - lo;
        if len <= 1 {
            lo
        } else {
            lo + rng.gen_range(0..len)
        }
    }
}

/// Bucket boundaries (`n+1`-terminated) for `d` over `n` ranks.
fn bucket_starts(d: Distribution, n: u64) -> Vec<u64> {
    if let Distribution::HotCold { hot, .. } = d {
        let h = hot_count(n, hot / 100.0);
        return if h >= n { vec![0, n] } else { vec![0, h, n] };
    }
    if d.is_uniform() {
        return vec![0, n];
    }
    let mut v: Vec<u64> = (0..n.min(EXACT_RANKS)).collect();
    let mut x = n.min(EXACT_RANKS);
    while x < n {
        v.push(x);
        x = (x + ((x as f64 * GROWTH) as u64).max(1)).min(n);
    }
    v.push(n);
    v
}

/// A bijection of `[0, n)` keyed by a seed: a 4-round Feistel network on the
/// smallest even number of bits that covers `n`, walking the cycle until the
/// value falls inside (at most 4 steps on average). It scatters ranks over
/// the region without a table.
#[derive(Clone, Copy, Debug)]
pub struct Scatter {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Scatter {
    /// A permutation of `[0, n)` chosen by `seed`.
    pub fn new(n: u64, seed: u64) -> Scatter {
        let bits = 64 - n.max(2).saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut s = seed ^ 0x5CA7_7E12;
        let keys = [0; 4].map(|_: u64| crate::buf::wyrand(&mut s));
        Scatter {
            n: n.max(1),
            half_bits,
            keys,
        }
    }

    /// Where rank `x` lands.
    #[inline]
    pub fn map(&self, mut x: u64) -> u64 {
        if self.n <= 1 {
            return 0;
        }
        let mask = (1u64 << self.half_bits) - 1;
        loop {
            let (mut l, mut r) = (x >> self.half_bits, x & mask);
            for k in self.keys {
                let f = (r ^ k).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let f = (f ^ (f >> 29)) & mask;
                (l, r) = (r, l ^ f);
            }
            x = (l << self.half_bits) | r;
            if x < self.n {
                return x;
            }
        }
    }
}

/// Skewed random positions for one thread: ranks from a shared sampler,
/// placed by the target's placement, with the hottest-1% and -10% hits counted.
#[derive(Clone, Debug)]
pub struct SkewGen {
    sampler: std::sync::Arc<RankSampler>,
    scatter: Option<Scatter>,
    hot1: u64,
    hot10: u64,
    /// I/Os at ranks below `hot1` (the hottest 1%).
    pub hits1: u64,
    /// I/Os at ranks below `hot10` (the hottest 10%).
    pub hits10: u64,
    /// All I/Os drawn.
    pub draws: u64,
}

impl SkewGen {
    /// A generator over the sampler's ranks; `scatter_seed` is `None` for
    /// [`Placement::Start`] and the target's seed (the same for all its threads) otherwise.
    pub fn new(sampler: std::sync::Arc<RankSampler>, scatter_seed: Option<u64>) -> SkewGen {
        let n = sampler.len();
        SkewGen {
            scatter: scatter_seed.map(|s| Scatter::new(n, s)),
            hot1: hot_count(n, 0.01),
            hot10: hot_count(n, 0.10),
            sampler,
            hits1: 0,
            hits10: 0,
            draws: 0,
        }
    }

    /// The next block position in `[0, n)`.
    #[inline]
    pub fn next(&mut self, rng: &mut SmallRng) -> u64 {
        self.next_ranked(rng).1
    }

    /// The next block's rank (0: the hottest) and its position in `[0, n)`.
    #[inline]
    pub fn next_ranked(&mut self, rng: &mut SmallRng) -> (u64, u64) {
        let r = self.sampler.sample(rng);
        self.draws += 1;
        self.hits1 += u64::from(r < self.hot1);
        self.hits10 += u64::from(r < self.hot10);
        let at = match &self.scatter {
            Some(s) => s.map(r),
            None => r,
        };
        (r, at)
    }

    /// Clears the counters (end of warmup).
    pub fn reset_counts(&mut self) {
        self.hits1 = 0;
        self.hits10 = 0;
        self.draws = 0;
    }
}

/// The achieved skew of a run: shares of I/O that hit the hottest 1% and 10%
/// of the region's blocks (counted per I/O as it was generated).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SkewReport {
    /// The distribution asked for.
    pub distribution: String,
    /// Where the hot set lies.
    pub placement: Placement,
    /// Random I/Os counted.
    pub ios: u64,
    /// Share (0..1) of them that hit the hottest 1% of the blocks.
    pub hottest_1pct: f64,
    /// Share (0..1) that hit the hottest 10%.
    pub hottest_10pct: f64,
    /// What the distribution predicts for the hottest 1%.
    pub expected_1pct: f64,
    /// What it predicts for the hottest 10%.
    pub expected_10pct: f64,
}

impl SkewReport {
    /// Folds the counts of the threads of one target into a report.
    pub fn from_counts(
        d: Distribution,
        placement: Placement,
        blocks: u64,
        counts: impl IntoIterator<Item = (u64, u64, u64)>,
    ) -> SkewReport {
        let (mut h1, mut h10, mut n) = (0u64, 0u64, 0u64);
        for (a, b, c) in counts {
            h1 += a;
            h10 += b;
            n += c;
        }
        let share = |h: u64| if n == 0 { 0.0 } else { h as f64 / n as f64 };
        SkewReport {
            distribution: d.to_string(),
            placement,
            ios: n,
            hottest_1pct: share(h1),
            hottest_10pct: share(h10),
            expected_1pct: d.expected_share(blocks, 0.01),
            expected_10pct: d.expected_share(blocks, 0.10),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Kolmogorov-Smirnov: the largest gap between the empirical CDF of
    /// `samples` ranks and the exact CDF, checked at every bucket boundary
    /// and at a fine grid (the sup over a discrete distribution is reached at ranks).
    fn ks(d: Distribution, n: u64, samples: usize, seed: u64) -> f64 {
        let s = RankSampler::new(d, n);
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut v: Vec<u64> = (0..samples).map(|_| s.sample(&mut rng)).collect();
        v.sort_unstable();
        let cdf = Cdf::new(d, n);
        let total = cdf.at(n);
        let mut points: Vec<u64> = (0..=200).map(|i| n * i / 200).collect();
        points.extend((0..64).map(|i| i as u64));
        points.extend([n / 100, n / 10]);
        let mut worst: f64 = 0.0;
        for k in points {
            // Share of samples with rank < k versus the exact weight of [0, k).
            let emp = v.partition_point(|&r| r < k) as f64 / samples as f64;
            let exact = cdf.at(k) / total;
            worst = worst.max((emp - exact).abs());
        }
        worst
    }

    /// The 1% critical value of the KS statistic.
    fn ks_limit(samples: usize) -> f64 {
        1.63 / (samples as f64).sqrt()
    }

    #[test]
    fn zipf_matches_its_cdf() {
        // Exact discrete CDF for the head; a large n exercises the geometric buckets.
        for (theta, n) in [(0.8, 1_000u64), (1.1, 1_000_000), (1.2, 1 << 30)] {
            let d = ks(Distribution::Zipf(theta), n, 200_000, 11);
            assert!(d < ks_limit(200_000), "zipf:{theta} n={n} D={d}");
        }
    }

    #[test]
    fn zipf_tail_weight_matches_a_brute_force_sum() {
        let theta = 1.1;
        let n = 200_000u64;
        let exact: f64 = (1..=n).map(|i| (i as f64).powf(-theta)).sum();
        let approx = Cdf::new(Distribution::Zipf(theta), n).at(n);
        assert!((exact - approx).abs() / exact < 1e-6, "{exact} vs {approx}");
    }

    #[test]
    fn pareto_normal_and_hotcold_match_their_cdfs() {
        for d in [
            Distribution::Pareto(0.2),
            Distribution::Normal(5.0),
            Distribution::HotCold {
                hot: 10.0,
                access: 90.0,
            },
            Distribution::Uniform,
        ] {
            let x = ks(d, 10_000_000, 200_000, 5);
            assert!(x < ks_limit(200_000), "{d} D={x}");
        }
    }

    #[test]
    fn pareto_0_2_is_the_80_20_rule_and_hotcold_is_exact() {
        let p = Distribution::Pareto(0.2).expected_share(1 << 20, 0.2);
        assert!((p - 0.8).abs() < 1e-3, "{p}");
        let h = Distribution::HotCold {
            hot: 10.0,
            access: 90.0,
        }
        .expected_share(1000, 0.1);
        assert!((h - 0.9).abs() < 1e-9);
    }

    #[test]
    fn a_sampler_that_fails_the_test_is_caught() {
        // The test has power: zipf:1.1 samples are not zipf:0.9.
        let s = RankSampler::new(Distribution::Zipf(1.1), 100_000);
        let mut rng = SmallRng::seed_from_u64(1);
        let mut v: Vec<u64> = (0..50_000).map(|_| s.sample(&mut rng)).collect();
        v.sort_unstable();
        let other = Cdf::new(Distribution::Zipf(0.9), 100_000);
        let emp = v.partition_point(|&r| r < 100) as f64 / 50_000.0;
        let want = other.at(100) / other.at(100_000);
        assert!((emp - want).abs() > ks_limit(50_000));
    }

    #[test]
    fn scatter_is_a_permutation() {
        for n in [1u64, 2, 3, 1000, 4097] {
            let s = Scatter::new(n, 9);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let j = s.map(i);
                assert!(j < n);
                assert!(!seen[j as usize], "n={n}: {j} twice");
                seen[j as usize] = true;
            }
        }
        // And it does scatter: the 10 hottest ranks do not sit together.
        let s = Scatter::new(1 << 20, 3);
        let hot: Vec<u64> = (0..10).map(|i| s.map(i)).collect();
        let spread = hot.iter().max().unwrap() - hot.iter().min().unwrap();
        assert!(spread > 1 << 16, "{hot:?}");
    }

    #[test]
    fn counts_follow_the_hot_set() {
        let s = std::sync::Arc::new(RankSampler::new(
            Distribution::HotCold {
                hot: 10.0,
                access: 90.0,
            },
            100_000,
        ));
        let mut g = SkewGen::new(s, Some(1));
        let mut rng = SmallRng::seed_from_u64(2);
        for _ in 0..100_000 {
            assert!(g.next(&mut rng) < 100_000);
        }
        let share = g.hits10 as f64 / g.draws as f64;
        assert!((share - 0.9).abs() < 0.01, "{share}");
        // 1% of the region is a tenth of the hot set: 9% of the I/O.
        let share1 = g.hits1 as f64 / g.draws as f64;
        assert!((share1 - 0.09).abs() < 0.01, "{share1}");
    }

    #[test]
    fn parse_and_print() {
        for s in [
            "uniform",
            "zipf:1.2",
            "pareto:0.2",
            "normal:5",
            "hotcold:10/90",
        ] {
            let d: Distribution = s.parse().unwrap();
            assert_eq!(d.to_string(), s);
        }
        assert_eq!(
            "hotcold:10%/90%".parse::<Distribution>().unwrap(),
            Distribution::HotCold {
                hot: 10.0,
                access: 90.0
            }
        );
        for bad in [
            "zipf",
            "zipf:0",
            "pareto:0.7",
            "hotcold:10",
            "hotcold:0/50",
            "lognormal:1",
        ] {
            let e = bad.parse::<Distribution>().unwrap_err();
            assert!(e.contains("zipf:THETA"), "{bad}: {e}");
        }
    }

    #[test]
    fn table_stays_small_for_huge_regions() {
        let s = RankSampler::new(Distribution::Zipf(1.2), 1 << 40);
        assert!(s.buckets() < 8000, "{}", s.buckets());
    }
}
