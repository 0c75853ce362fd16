//! Latency and throughput statistics.
//!
//! Each worker thread records into its own [`DirStats`] (one for reads, one
//! for writes): exact counts, byte totals, latency sum, min and max, SQLIO's
//! exact millisecond histogram, and an HDR histogram for percentiles. Nothing
//! is shared, locked or allocated per I/O. Threads' statistics merge exactly
//! (`+=` on histograms) at interval boundaries and at the end.
//!
//! Precision: the HDR histogram keeps 3 significant digits, so any percentile
//! is within 0.1% of the true value (1 ns to 1,000 s; slower I/Os are counted
//! at 1,000 s). Min, max, mean and the SQLIO histogram are exact.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Highest latency the histogram tracks: 1,000 seconds in nanoseconds.
pub const MAX_TRACKED_NS: u64 = 1_000_000_000_000;

/// Number of SQLIO histogram buckets: 0..23 ms and 24+ ms.
pub const SQLIO_BUCKETS: usize = 25;

/// A latency percentile iosim reports. Its [`label`](Percentile::label)
/// (`p99.9`) is the key of [`LatencySummary::percentiles`] in every document,
/// so a typo in a name does not compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Percentile {
    /// 25th.
    P25,
    /// Median.
    P50,
    /// 75th.
    P75,
    /// 90th.
    P90,
    /// 95th.
    P95,
    /// 99th: 1 I/O in 100.
    P99,
    /// 1 I/O in 1,000.
    P99_9,
    /// 1 I/O in 10,000.
    P99_99,
    /// 1 I/O in 100,000.
    P99_999,
    /// 1 I/O in a million.
    P99_9999,
    /// 1 I/O in 10 million.
    P99_99999,
    /// 1 I/O in 100 million.
    P99_999999,
    /// 1 I/O in a billion.
    P99_9999999,
}

impl Percentile {
    /// Every percentile reported, lowest first.
    pub const ALL: [Percentile; 13] = [
        Percentile::P25,
        Percentile::P50,
        Percentile::P75,
        Percentile::P90,
        Percentile::P95,
        Percentile::P99,
        Percentile::P99_9,
        Percentile::P99_99,
        Percentile::P99_999,
        Percentile::P99_9999,
        Percentile::P99_99999,
        Percentile::P99_999999,
        Percentile::P99_9999999,
    ];

    /// Its name in documents and tables: `p99.9`.
    pub const fn label(self) -> &'static str {
        match self {
            Percentile::P25 => "p25",
            Percentile::P50 => "p50",
            Percentile::P75 => "p75",
            Percentile::P90 => "p90",
            Percentile::P95 => "p95",
            Percentile::P99 => "p99",
            Percentile::P99_9 => "p99.9",
            Percentile::P99_99 => "p99.99",
            Percentile::P99_999 => "p99.999",
            Percentile::P99_9999 => "p99.9999",
            Percentile::P99_99999 => "p99.99999",
            Percentile::P99_999999 => "p99.999999",
            Percentile::P99_9999999 => "p99.9999999",
        }
    }

    /// The quantile, 0 to 1: 0.999 for `p99.9`.
    pub const fn quantile(self) -> f64 {
        match self {
            Percentile::P25 => 0.25,
            Percentile::P50 => 0.50,
            Percentile::P75 => 0.75,
            Percentile::P90 => 0.90,
            Percentile::P95 => 0.95,
            Percentile::P99 => 0.99,
            Percentile::P99_9 => 0.999,
            Percentile::P99_99 => 0.9999,
            Percentile::P99_999 => 0.99999,
            Percentile::P99_9999 => 0.999_999,
            Percentile::P99_99999 => 0.999_999_9,
            Percentile::P99_999999 => 0.999_999_99,
            Percentile::P99_9999999 => 0.999_999_999,
        }
    }
}

/// A new empty latency histogram (nanoseconds, 3 significant digits).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_TRACKED_NS, 3).expect("static histogram bounds are valid")
}

/// Bytes one [`RwStats`] takes: its three histograms' counts (about 250 KiB
/// each) and the rest. For memory checks: a run keeps a few per worker.
pub fn rw_stats_bytes() -> u64 {
    static BYTES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        let counts = new_histogram().distinct_values() * std::mem::size_of::<u64>();
        (3 * counts + std::mem::size_of::<RwStats>()) as u64
    })
}

/// Statistics of one direction (reads or writes) of one thread, interval or run.
#[derive(Clone, Debug)]
pub struct DirStats {
    /// Completed I/Os.
    pub ios: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Sum of latencies, ns.
    pub lat_sum_ns: u128,
    /// Smallest latency, ns (u64::MAX when empty).
    pub lat_min_ns: u64,
    /// Largest latency, ns.
    pub lat_max_ns: u64,
    /// SQLIO's histogram: I/Os whose latency in whole ms is 0..23, and 24 or more.
    pub ms_hist: [u64; SQLIO_BUCKETS],
    /// Percentile histogram.
    pub hist: Histogram<u64>,
}

impl Default for DirStats {
    fn default() -> Self {
        DirStats::new()
    }
}

impl DirStats {
    /// Empty statistics.
    pub fn new() -> DirStats {
        DirStats {
            ios: 0,
            bytes: 0,
            lat_sum_ns: 0,
            lat_min_ns: u64::MAX,
            lat_max_ns: 0,
            ms_hist: [0; SQLIO_BUCKETS],
            hist: new_histogram(),
        }
    }

    /// The statistics a histogram alone gives (a histogram log's): counts
    /// and percentiles exact, min, max and mean within the histogram's 0.1%,
    /// no bytes and no SQLIO histogram.
    pub fn from_histogram(hist: Histogram<u64>) -> DirStats {
        let ios = hist.len();
        DirStats {
            ios,
            bytes: 0,
            lat_sum_ns: (hist.mean() * ios as f64) as u128,
            lat_min_ns: if ios == 0 { u64::MAX } else { hist.min() },
            lat_max_ns: hist.max(),
            ms_hist: [0; SQLIO_BUCKETS],
            hist,
        }
    }

    /// Records one completed I/O. No allocation, no locking.
    #[inline]
    pub fn record(&mut self, lat_ns: u64, bytes: u64) {
        self.ios += 1;
        self.bytes += bytes;
        self.lat_sum_ns += u128::from(lat_ns);
        self.lat_min_ns = self.lat_min_ns.min(lat_ns);
        self.lat_max_ns = self.lat_max_ns.max(lat_ns);
        let ms = (lat_ns / 1_000_000).min(SQLIO_BUCKETS as u64 - 1) as usize;
        self.ms_hist[ms] += 1;
        self.hist.saturating_record(lat_ns.clamp(1, MAX_TRACKED_NS));
    }

    /// Adds `other` into `self` exactly.
    pub fn merge(&mut self, other: &DirStats) {
        self.ios += other.ios;
        self.bytes += other.bytes;
        self.lat_sum_ns += other.lat_sum_ns;
        self.lat_min_ns = self.lat_min_ns.min(other.lat_min_ns);
        self.lat_max_ns = self.lat_max_ns.max(other.lat_max_ns);
        for (a, b) in self.ms_hist.iter_mut().zip(other.ms_hist.iter()) {
            *a += b;
        }
        self.hist
            .add(&other.hist)
            .expect("histograms share bounds, so adding cannot fail");
    }

    /// Empties the statistics, keeping the histogram's memory.
    pub fn reset(&mut self) {
        self.ios = 0;
        self.bytes = 0;
        self.lat_sum_ns = 0;
        self.lat_min_ns = u64::MAX;
        self.lat_max_ns = 0;
        self.ms_hist = [0; SQLIO_BUCKETS];
        self.hist.reset();
    }

    /// Summary over a measured time of `secs` seconds.
    pub fn summarize(&self, secs: f64) -> DirResult {
        let secs = if secs > 0.0 { secs } else { f64::NAN };
        let iops = if self.ios == 0 {
            0.0
        } else {
            self.ios as f64 / secs
        };
        let bps = if self.ios == 0 {
            0.0
        } else {
            self.bytes as f64 / secs
        };
        DirResult {
            ios: self.ios,
            bytes: self.bytes,
            iops,
            bytes_per_sec: bps,
            mib_per_sec: bps / 1_048_576.0,
            latency_us: self.latency(),
            sqlio_histogram_ms: self.ms_hist.to_vec(),
        }
    }

    /// Latency summary in microseconds.
    pub fn latency(&self) -> LatencySummary {
        if self.ios == 0 {
            return LatencySummary::default();
        }
        let us = |ns: f64| ns / 1000.0;
        let mut percentiles = BTreeMap::new();
        for p in Percentile::ALL {
            // Never report a percentile above the exact maximum or below the exact minimum.
            let v = self
                .hist
                .value_at_quantile(p.quantile())
                .clamp(self.lat_min_ns, self.lat_max_ns);
            percentiles.insert(p.label().to_string(), us(v as f64));
        }
        LatencySummary {
            min: us(self.lat_min_ns as f64),
            mean: us(self.lat_sum_ns as f64 / self.ios as f64),
            max: us(self.lat_max_ns as f64),
            stddev: us(self.hist.stdev()),
            percentiles,
        }
    }
}

/// Read and write statistics together.
#[derive(Clone, Debug, Default)]
pub struct RwStats {
    /// Reads.
    pub read: DirStats,
    /// Writes.
    pub write: DirStats,
    /// Flushes (`--fsync`, `--fdatasync`, `--sync-method fsync|fdatasync`):
    /// their own latency distribution, in neither reads nor writes, and
    /// moving no bytes.
    pub flush: DirStats,
}

impl RwStats {
    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &RwStats) {
        self.read.merge(&other.read);
        self.write.merge(&other.write);
        self.flush.merge(&other.flush);
    }

    /// Reads and writes together.
    pub fn total(&self) -> DirStats {
        let mut t = self.read.clone();
        t.merge(&self.write);
        t
    }

    /// Empties all three.
    pub fn reset(&mut self) {
        self.read.reset();
        self.write.reset();
        self.flush.reset();
    }

    /// Reads and writes slower than 1 s and 15 s.
    pub fn slow_ios(&self) -> SlowIos {
        let mut s = SlowIos::of(&self.read.hist);
        s.add(SlowIos::of(&self.write.hist));
        s
    }

    /// Summaries for read, write and total over `secs`.
    pub fn summarize(&self, secs: f64) -> RwResult {
        RwResult {
            read: self.read.summarize(secs),
            write: self.write.summarize(secs),
            total: self.total().summarize(secs),
            flush: (self.flush.ios > 0).then(|| self.flush.summarize(secs)),
        }
    }
}

/// Latency summary, microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Exact minimum.
    pub min: f64,
    /// Exact mean.
    pub mean: f64,
    /// Exact maximum.
    pub max: f64,
    /// Standard deviation (from the histogram, within 0.1%).
    pub stddev: f64,
    /// Percentiles keyed by [`Percentile::label`], `p25` ... `p99.9999999` (within 0.1%).
    pub percentiles: BTreeMap<String, f64>,
}

impl LatencySummary {
    /// A percentile, 0 when absent.
    pub fn p(&self, p: Percentile) -> f64 {
        self.get(p).unwrap_or(0.0)
    }

    /// A percentile, `None` when absent (a document from an older iosim).
    pub fn get(&self, p: Percentile) -> Option<f64> {
        self.percentiles.get(p.label()).copied()
    }
}

/// Results of one direction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirResult {
    /// Completed I/Os.
    pub ios: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// I/Os per second.
    pub iops: f64,
    /// Bytes per second.
    pub bytes_per_sec: f64,
    /// MiB (2^20 bytes) per second, as SQLIO's MBs/sec and DiskSpd's MiB/s.
    pub mib_per_sec: f64,
    /// Latency in microseconds.
    pub latency_us: LatencySummary,
    /// SQLIO's histogram: percentage base counts of I/Os taking 0,1,...,23 and 24+ whole ms.
    pub sqlio_histogram_ms: Vec<u64>,
}

/// Results for read, write and both.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RwResult {
    /// Reads.
    pub read: DirResult,
    /// Writes.
    pub write: DirResult,
    /// Reads and writes together.
    pub total: DirResult,
    /// Flushes, when the workload issued any (`--fsync`, `--fdatasync`,
    /// `--sync-method`): their count, rate and latency (bytes are 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<DirResult>,
}

/// Mean, sample standard deviation and 95% confidence half-width of `xs`.
pub fn mean_sd_ci95(xs: &[f64]) -> (f64, f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (0.0, 0.0, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, 0.0, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let sd = var.sqrt();
    (mean, sd, t_975(n - 1) * sd / (n as f64).sqrt())
}

/// Student's t distribution with `df` degrees of freedom (statrs), the one
/// place iosim gets it from: confidence intervals (`t_975`) and Welch's test
/// in `iosim compare` (`t_two_sided_p`). `None` for `df` not above 0.
fn students_t(df: f64) -> Option<StudentsT> {
    if df.is_finite() && df > 0.0 {
        StudentsT::new(0.0, 1.0, df).ok()
    } else {
        None
    }
}

/// Two-sided 95% Student t critical value for `df` degrees of freedom
/// (the 0.975 quantile); NaN for `df` = 0.
pub fn t_975(df: usize) -> f64 {
    students_t(df as f64).map_or(f64::NAN, |t| t.inverse_cdf(0.975))
}

/// The `p` quantile of Student's t with `df` degrees of freedom; NaN for
/// `df` = 0.
pub fn t_quantile(df: usize, p: f64) -> f64 {
    students_t(df as f64).map_or(f64::NAN, |t| t.inverse_cdf(p))
}

/// The `p` quantile of the standard normal distribution.
pub fn z_quantile(p: f64) -> f64 {
    statrs::distribution::Normal::standard().inverse_cdf(p)
}

/// Two-sided p-value of Student's t statistic `t` with `df` (possibly
/// fractional, as Welch's) degrees of freedom: P(|T| >= |t|).
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    if !t.is_finite() {
        return 0.0;
    }
    students_t(df).map_or(f64::NAN, |d| (2.0 * d.sf(t.abs())).clamp(0.0, 1.0))
}

/// One-sided 95% upper confidence bound of `b`'s mean minus `a`'s, from
/// each side's (mean, sample standard deviation, count), with Welch's
/// degrees of freedom: the upper half of an equivalence test (TOST), which
/// proves a difference no larger than a margin where a plain test only
/// fails to find one. Needs at least two samples on each side; `None`
/// otherwise.
pub fn welch_upper_95(a: (f64, f64, usize), b: (f64, f64, usize)) -> Option<f64> {
    let w = welch_summary(a, b)?;
    let diff = b.0 - a.0;
    let se = (a.1 * a.1 / a.2 as f64 + b.1 * b.1 / b.2 as f64).sqrt();
    if se == 0.0 {
        return Some(diff);
    }
    Some(diff + students_t(w.df)?.inverse_cdf(0.95) * se)
}

/// Result of Welch's two-sample t-test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    /// t statistic (b minus a).
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's t-test for a difference of means, unequal variances, from each
/// side's (mean, sample standard deviation, count). Needs at least two
/// samples on each side; `None` otherwise. The one implementation behind
/// `iosim compare` and the sweep's knee.
pub fn welch_summary(a: (f64, f64, usize), b: (f64, f64, usize)) -> Option<Welch> {
    if a.2 < 2 || b.2 < 2 {
        return None;
    }
    let (ma, va, na) = (a.0, a.1 * a.1, a.2 as f64);
    let (mb, vb, nb) = (b.0, b.1 * b.1, b.2 as f64);
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    if se2 == 0.0 {
        // No variance at all: identical means are not different, distinct ones are.
        let p = if ma == mb { 1.0 } else { 0.0 };
        let t = if ma == mb {
            0.0
        } else {
            f64::INFINITY.copysign(mb - ma)
        };
        return Some(Welch {
            t,
            df: na + nb - 2.0,
            p,
        });
    }
    let t = (mb - ma) / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    Some(Welch {
        t,
        df,
        p: t_two_sided_p(t, df),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_published_tables() {
        // NIST/SEMATECH e-Handbook tables 1.3.6.7.1 and 1.3.6.7.2.
        assert!((z_quantile(0.975) - 1.960).abs() < 5e-4);
        assert!((z_quantile(0.999_75) - 3.481).abs() < 5e-3);
        assert!((t_quantile(4, 0.95) - 2.132).abs() < 5e-4);
        assert!((t_quantile(2, 0.975) - t_975(2)).abs() < 1e-12);
    }

    #[test]
    fn welch_upper_bound_is_one_sided() {
        // Equal sizes and spreads: df = 2(n-1) = 8, t_0.95(8) = 1.860 (NIST
        // table 1.3.6.7.2), se = sqrt(2 * 4 / 5).
        let u = welch_upper_95((100.0, 2.0, 5), (101.0, 2.0, 5)).unwrap();
        assert!(
            (u - (1.0 + 1.860 * (8.0f64 / 5.0).sqrt())).abs() < 2e-3,
            "{u}"
        );
        // No spread: the difference itself; one sample: no bound.
        assert_eq!(welch_upper_95((100.0, 0.0, 3), (90.0, 0.0, 3)), Some(-10.0));
        assert_eq!(welch_upper_95((100.0, 2.0, 1), (90.0, 2.0, 3)), None);
    }

    #[test]
    fn students_t_matches_published_tables() {
        // Two-sided 5% critical values (NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
        for (df, t) in [
            (1, 12.706),
            (2, 4.303),
            (5, 2.571),
            (10, 2.228),
            (30, 2.042),
            (60, 2.000),
            (120, 1.980),
        ] {
            assert!((t_975(df) - t).abs() < 5e-4, "df {df}: {}", t_975(df));
        }
        assert!((t_975(100_000) - 1.960).abs() < 1e-3);
        assert!(t_975(0).is_nan());
        // The p-value inverts the quantile, also for fractional df (Welch).
        for df in [1.0, 4.0, 24.524_635, 200.0] {
            let q = students_t(df).unwrap().inverse_cdf(0.975);
            assert!((t_two_sided_p(q, df) - 0.05).abs() < 1e-9, "df {df}");
            assert!((t_two_sided_p(-q, df) - 0.05).abs() < 1e-9, "df {df}");
        }
        // t = 2.225512 on 24.524635 df (Welch's classic example): p = 0.0354845.
        assert!((t_two_sided_p(2.225_512, 24.524_635) - 0.035_484_5).abs() < 1e-6);
        assert_eq!(t_two_sided_p(0.0, 7.0), 1.0);
        assert_eq!(t_two_sided_p(f64::INFINITY, 7.0), 0.0);
        assert!(t_two_sided_p(1.0, 0.0).is_nan());
    }

    #[test]
    fn record_and_summarize() {
        let mut s = DirStats::new();
        for us in 1..=1000u64 {
            s.record(us * 1000, 4096);
        }
        let r = s.summarize(2.0);
        assert_eq!(r.ios, 1000);
        assert_eq!(r.bytes, 4096 * 1000);
        assert!((r.iops - 500.0).abs() < 1e-9);
        assert!((r.latency_us.min - 1.0).abs() < 1e-9);
        assert!((r.latency_us.max - 1000.0).abs() < 1e-9);
        assert!((r.latency_us.mean - 500.5).abs() < 1e-9);
        let p50 = r.latency_us.p(Percentile::P50);
        assert!((p50 - 500.0).abs() / 500.0 < 0.002, "p50 {p50}");
        let p99 = r.latency_us.p(Percentile::P99);
        assert!((p99 - 990.0).abs() / 990.0 < 0.002, "p99 {p99}");
        // 1..=1000 µs: everything below 1 ms except the single 1,000 µs I/O.
        assert_eq!(r.sqlio_histogram_ms[0], 999);
        assert_eq!(r.sqlio_histogram_ms[1], 1);
    }

    #[test]
    fn merging_equals_recording_together() {
        let mut a = DirStats::new();
        let mut b = DirStats::new();
        let mut all = DirStats::new();
        for i in 0..10_000u64 {
            let lat = (i * 7919) % 5_000_000 + 1;
            if i % 3 == 0 {
                a.record(lat, 512);
            } else {
                b.record(lat, 512);
            }
            all.record(lat, 512);
        }
        a.merge(&b);
        assert_eq!(a.ios, all.ios);
        assert_eq!(a.bytes, all.bytes);
        assert_eq!(a.lat_sum_ns, all.lat_sum_ns);
        assert_eq!(a.lat_min_ns, all.lat_min_ns);
        assert_eq!(a.lat_max_ns, all.lat_max_ns);
        assert_eq!(a.ms_hist, all.ms_hist);
        assert_eq!(a.summarize(1.0), all.summarize(1.0));
    }

    #[test]
    fn slow_ios_land_in_the_last_sqlio_bucket() {
        let mut s = DirStats::new();
        s.record(30_000_000, 8192);
        s.record(23_999_999, 8192);
        assert_eq!(s.ms_hist[24], 1);
        assert_eq!(s.ms_hist[23], 1);
    }

    #[test]
    fn empty_summary_is_zero() {
        let r = DirStats::new().summarize(1.0);
        assert_eq!(r.ios, 0);
        assert_eq!(r.iops, 0.0);
        assert_eq!(r.latency_us, LatencySummary::default());
    }

    #[test]
    fn reset_empties() {
        let mut s = DirStats::new();
        s.record(5, 1);
        s.reset();
        assert_eq!(s.ios, 0);
        assert_eq!(s.hist.len(), 0);
        assert_eq!(s.lat_min_ns, u64::MAX);
    }

    #[test]
    fn confidence_interval() {
        let (m, sd, ci) = mean_sd_ci95(&[10.0, 12.0, 14.0]);
        assert!((m - 12.0).abs() < 1e-12);
        assert!((sd - 2.0).abs() < 1e-12);
        // t(0.975, 2 df) = 4.302653 (tables print 4.303).
        assert!((ci - 4.302_653 * 2.0 / 3f64.sqrt()).abs() < 1e-5);
        assert_eq!(mean_sd_ci95(&[5.0]), (5.0, 0.0, 0.0));
    }
}

/// Encodes a histogram as base64 of HdrHistogram's V2 format (portable; readable by
/// HdrHistogram libraries in other languages).
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    use base64::Engine as _;
    use hdrhistogram::serialization::Serializer as _;
    let mut buf = Vec::new();
    hdrhistogram::serialization::V2Serializer::new()
        .serialize(h, &mut buf)
        .expect("serialising into memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

/// An I/O slower than this is a slow I/O: Microsoft's support engineers
/// call systems with transfers over one second ones that "need optimization"
/// (docs/references.md, `[MS-IO]`).
pub const SLOW_IO_NS: u64 = 1_000_000_000;

/// An I/O slower than this is a stalled I/O: SQL Server's error 833 (I/O
/// requests taking longer than 15 seconds, `[MS-833]`).
pub const STALLED_IO_NS: u64 = 15_000_000_000;

/// Completed I/Os slower than [`SLOW_IO_NS`] and [`STALLED_IO_NS`], counted
/// from a latency histogram (within its 0.1% precision), never per I/O.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlowIos {
    /// I/Os over 1 s.
    pub over_1s: u64,
    /// I/Os over 15 s.
    pub over_15s: u64,
}

impl SlowIos {
    /// The counts of a histogram of nanoseconds: each bucket is judged by its
    /// middle value.
    pub fn of(h: &Histogram<u64>) -> SlowIos {
        let mut s = SlowIos::default();
        if h.max() <= SLOW_IO_NS {
            return s;
        }
        for v in h.iter_recorded() {
            s.count(
                h.median_equivalent(v.value_iterated_to()),
                v.count_at_value(),
            );
        }
        s
    }

    /// Counts `n` I/Os of `ns` nanoseconds each.
    #[inline]
    pub fn count(&mut self, ns: u64, n: u64) {
        if ns > SLOW_IO_NS {
            self.over_1s += n;
            if ns > STALLED_IO_NS {
                self.over_15s += n;
            }
        }
    }

    /// The counts of a run's stored histograms (read and write, [`encode_histogram`]'s form);
    /// a histogram that cannot be decoded counts nothing.
    pub fn of_encoded(encoded: &[&str]) -> SlowIos {
        let mut s = SlowIos::default();
        for e in encoded {
            if let Ok(h) = decode_histogram(e) {
                s.add(SlowIos::of(&h));
            }
        }
        s
    }

    /// Adds `o`'s counts.
    pub fn add(&mut self, o: SlowIos) {
        self.over_1s += o.over_1s;
        self.over_15s += o.over_15s;
    }
}

/// I/Os in flight when a run's measured window closed that took over 1 s:
/// in no statistic of the run (those describe the window), but a stall that
/// straddles the window's end is a stall all the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SlowAfterWindow {
    /// Of them, over 1 s and over 15 s.
    #[serde(flatten)]
    pub ios: SlowIos,
    /// The slowest I/O in flight when the window closed, µs.
    pub max_us: f64,
}

impl SlowAfterWindow {
    /// Times one I/O that completed after the window closed.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.ios.count(ns, 1);
        self.max_us = self.max_us.max(ns as f64 / 1000.0);
    }

    /// Adds `o` (another thread's or rank's).
    pub fn merge(&mut self, o: &SlowAfterWindow) {
        self.ios.add(o.ios);
        self.max_us = self.max_us.max(o.max_us);
    }

    /// Itself when any of them took over 1 s (what a result keeps).
    pub fn if_slow(self) -> Option<SlowAfterWindow> {
        (self.ios.over_1s > 0).then_some(self)
    }
}

/// Decodes [`encode_histogram`]'s output.
pub fn decode_histogram(s: &str) -> Result<Histogram<u64>, String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .map_err(|e| format!("histogram is not valid base64: {e}"))?;
    let mut d = hdrhistogram::serialization::Deserializer::new();
    d.deserialize(&mut std::io::Cursor::new(bytes))
        .map_err(|e| format!("histogram cannot be decoded: {e:?}"))
}

#[cfg(test)]
mod encode_tests {
    use super::*;

    #[test]
    fn slow_ios_are_counted_from_the_histogram() {
        let mut s = DirStats::new();
        for _ in 0..1000 {
            s.record(200_000, 4096);
        }
        assert_eq!(SlowIos::of(&s.hist), SlowIos::default());
        // 999 ms is not over 1 s; 1.2 s is; 16 s is over both.
        s.record(999_000_000, 4096);
        s.record(1_200_000_000, 4096);
        s.record(1_200_000_000, 4096);
        s.record(16_000_000_000, 4096);
        let slow = SlowIos::of(&s.hist);
        assert_eq!(
            slow,
            SlowIos {
                over_1s: 3,
                over_15s: 1
            }
        );
        // The stored form answers the same.
        let enc = encode_histogram(&s.hist);
        let mut twice = SlowIos::of_encoded(&[&enc, &enc, "not base64"]);
        assert_eq!(twice.over_1s, 6);
        twice.add(slow);
        assert_eq!(twice.over_15s, 3);
        // I/Os timed past a window's end: counted the same way, in the run's JSON flat.
        let mut late = SlowAfterWindow::default();
        late.record(300_000);
        assert_eq!(late.if_slow(), None);
        late.record(16_000_000_000);
        let mut other = SlowAfterWindow::default();
        other.record(1_500_000_000);
        late.merge(&other);
        assert_eq!((late.ios.over_1s, late.ios.over_15s), (2, 1));
        assert_eq!(late.max_us, 16_000_000.0);
        assert_eq!(
            serde_json::to_value(late.if_slow().unwrap()).unwrap(),
            serde_json::json!({"over_1s": 2, "over_15s": 1, "max_us": 16_000_000.0})
        );
    }

    #[test]
    fn histogram_round_trips() {
        let mut s = DirStats::new();
        for i in 1..5000u64 {
            s.record(i * 997, 4096);
        }
        let h = decode_histogram(&encode_histogram(&s.hist)).unwrap();
        assert_eq!(h.len(), s.hist.len());
        for q in [0.5, 0.9, 0.99, 0.999] {
            assert_eq!(h.value_at_quantile(q), s.hist.value_at_quantile(q));
        }
    }
}
