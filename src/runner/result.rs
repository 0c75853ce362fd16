//! The result of a run: the JSON schema of `iosim run --output json`
//! (see docs/json-schema.md).

use serde::{Deserialize, Serialize};

use crate::stats::{DirStats, RwResult};
use crate::sysmon::check::{CpuCause, Warning};
use crate::sysmon::cpu::CoreUtil;
use crate::sysmon::mounts::Resolution;
use crate::sysmon::procs::CpuAttribution;
use crate::sysmon::sampler::MonitorReport;
use crate::workload::WorkloadSpec;

/// Version of the JSON result schema (see docs/json-schema.md).
pub const SCHEMA_VERSION: u32 = 1;

/// One I/O error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoErrorRecord {
    /// Target index.
    pub target: usize,
    /// Thread index (global).
    pub thread: usize,
    /// `read` or `write`.
    pub op: String,
    /// Byte offset.
    pub offset: u64,
    /// Bytes requested.
    pub len: u32,
    /// Bytes transferred (short I/O) or -errno.
    pub result: i32,
    /// What it means.
    pub message: String,
}

/// Results of one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetResult {
    /// Path.
    pub path: String,
    /// `file`, `block_device` or `null`.
    pub kind: String,
    /// Size of the file or device.
    pub size: u64,
    /// First byte used.
    pub region_start: u64,
    /// Bytes of the region used.
    pub region_len: u64,
    /// True when this run created or extended the file.
    pub created: bool,
    /// Direct-I/O alignment of the target.
    pub dio_align: u64,
    /// Threads on this target.
    pub threads: u32,
    /// Read, write and total.
    #[serde(flatten)]
    pub result: RwResult,
}

/// Results of one worker thread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadResult {
    /// Global thread number.
    pub thread: usize,
    /// Target index.
    pub target: usize,
    /// CPU the thread was pinned to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// Measured time of this thread.
    pub duration_s: f64,
    /// User CPU seconds while measuring.
    pub cpu_user_s: f64,
    /// System CPU seconds while measuring.
    pub cpu_sys_s: f64,
    /// Read, write and total.
    #[serde(flatten)]
    pub result: RwResult,
}

/// CPU use during the measured time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuResult {
    /// User CPU seconds of the worker threads.
    pub user_s: f64,
    /// System CPU seconds of the worker threads.
    pub sys_s: f64,
    /// Worker CPU time as a percentage of one core.
    pub process_pct_of_one_core: f64,
    /// Whole machine, then each core.
    pub machine: Vec<CoreUtil>,
    /// Busiest core's busy percentage.
    pub max_core_busy_pct: f64,
    /// The CPU limited the numbers: iosim's own threads saturated the cores
    /// they could use, or other processes took CPU iosim needed (`cause`).
    /// Results stored before `cause` existed set it when any core was at
    /// least 95% busy, whoever used it.
    #[serde(default)]
    pub cpu_bound: bool,
    /// What kept the CPU busy, when it mattered (see `sysmon::check::cpu_cause`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<CpuCause>,
    /// Who used the CPU during the measured window: iosim, the kernel's I/O
    /// path, other processes by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<CpuAttribution>,
}

/// Errors seen during the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorSummary {
    /// All I/O errors and short transfers.
    pub count: u64,
    /// The first few, with offsets.
    pub first: Vec<IoErrorRecord>,
}

/// One point of the time series: one interval, one scope (a target or the total).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// End of the interval, seconds from the start of measuring.
    pub t_s: f64,
    /// Length of the interval.
    pub duration_s: f64,
    /// Reads.
    pub read: PointStats,
    /// Writes.
    pub write: PointStats,
    /// Both.
    pub total: PointStats,
}

/// Throughput and latency over one interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PointStats {
    /// I/Os completed.
    pub ios: u64,
    /// Bytes.
    pub bytes: u64,
    /// I/Os per second.
    pub iops: f64,
    /// MiB per second.
    pub mib_per_sec: f64,
    /// Mean latency, µs.
    pub lat_mean_us: f64,
    /// Median latency, µs.
    pub lat_p50_us: f64,
    /// 99th percentile, µs.
    pub lat_p99_us: f64,
    /// Maximum, µs.
    pub lat_max_us: f64,
    /// Minimum, µs (DiskSpd's per-bucket `*MinLatencyMilliseconds`).
    #[serde(default)]
    pub lat_min_us: f64,
    /// Standard deviation, µs (DiskSpd's per-bucket `*LatencyStdDev`).
    #[serde(default)]
    pub lat_stddev_us: f64,
}

impl PointStats {
    /// The summary of one interval's statistics: only what a point shows
    /// (two quantile look-ups, not every percentile of a full summary).
    pub(super) fn from_dir(d: &DirStats, secs: f64) -> PointStats {
        if d.ios == 0 {
            return PointStats::default();
        }
        let secs = if secs > 0.0 { secs } else { f64::NAN };
        let q = |q: f64| {
            d.hist
                .value_at_quantile(q)
                .clamp(d.lat_min_ns, d.lat_max_ns) as f64
                / 1000.0
        };
        PointStats {
            ios: d.ios,
            bytes: d.bytes,
            iops: d.ios as f64 / secs,
            mib_per_sec: d.bytes as f64 / secs / 1_048_576.0,
            lat_mean_us: d.lat_sum_ns as f64 / d.ios as f64 / 1000.0,
            lat_p50_us: q(0.50),
            lat_p99_us: q(0.99),
            lat_max_us: d.lat_max_ns as f64 / 1000.0,
            lat_min_us: d.lat_min_ns as f64 / 1000.0,
            lat_stddev_us: d.hist.stdev() / 1000.0,
        }
    }
}

/// Time series of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Interval length, seconds.
    pub interval_s: f64,
    /// All targets together.
    pub total: Vec<SeriesPoint>,
    /// Per target, in target order.
    pub targets: Vec<Vec<SeriesPoint>>,
    /// Per thread, by global thread number: only when the run asked for it
    /// (DiskSpd's `-D` prints each thread's IOPS deviation); absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<Vec<SeriesPoint>>,
    /// Intervals joined into a longer point because interval data came in
    /// faster than the run's main thread could merge it (or a worker fell
    /// far behind the others): each such point's `duration_s` spans several
    /// intervals. Absent when every point is one interval.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub folded_intervals: u64,
    /// The longest folded point, seconds; absent when nothing was folded.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub longest_point_s: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

impl Series {
    /// The note a run with folded intervals carries; `None` when none were.
    pub fn folding_note(&self) -> Option<String> {
        if self.folded_intervals == 0 {
            return None;
        }
        let points = self.total.len() as u64;
        Some(format!(
            "interval data came in faster than this machine merged it (a busy CPU or a late worker): \
             {} of {} intervals of {} s were folded into longer points (the longest {:.3} s), \
             so memory stayed bounded; the series has {points} points, and the run's totals and \
             percentiles are exact; a longer --interval avoids it",
            self.folded_intervals,
            self.folded_intervals + points,
            self.interval_s,
            self.longest_point_s
        ))
    }
}

/// Everything a run measured. This struct is the JSON schema (`--output json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Schema version of this document.
    pub schema_version: u32,
    /// iosim's version.
    pub iosim_version: String,
    /// When the run started (UTC).
    pub started_at: String,
    /// Host name.
    pub host: String,
    /// The resolved workload.
    pub config: WorkloadSpec,
    /// The engine actually used (after any fallback).
    pub engine: String,
    /// Notes: fallbacks, reused files, warnings.
    pub notes: Vec<String>,
    /// True when Ctrl-C or SIGTERM stopped the run early.
    pub interrupted: bool,
    /// Measured time (excluding warmup).
    pub duration_s: f64,
    /// All targets.
    pub total: RwResult,
    /// Per target.
    pub targets: Vec<TargetResult>,
    /// Per thread.
    pub threads: Vec<ThreadResult>,
    /// CPU use.
    pub cpu: CpuResult,
    /// I/O errors.
    pub errors: ErrorSummary,
    /// Time series.
    pub series: Series,
    /// Whole-run latency histograms of all targets together (HdrHistogram V2, base64).
    pub histograms: HistogramSet,
    /// The machine.
    pub environment: crate::sysmon::host::HostInfo,
    /// The block device under each target (or why there is none), in target order.
    pub devices: Vec<Resolution>,
    /// Device and CPU counters over the measured time, whole run and per interval.
    pub monitor: MonitorReport,
    /// Results checked against the kernel's counters: what may make them untrue.
    pub warnings: Vec<Warning>,
    /// Per block size, open-loop latency and achieved skew (docs/workloads.md);
    /// absent when the workload has none of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<crate::workload::measured::ShapeResult>,
    /// `--verify`: what was checked and the data errors found (absent without `--verify`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::verify::run::VerifyReport>,
    /// The measured window every worker shared (and every workload run at
    /// the same time, e.g. a profile phase); absent when it never opened and
    /// in results saved before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<MeasuredWindow>,
    /// I/Os in flight when the window closed that took over 1 s (in no
    /// statistic above); absent when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_after_window: Option<crate::stats::SlowAfterWindow>,
    /// Rate limits and changes of level over time found in the series
    /// (docs/changes.md); absent when none were.
    #[serde(default, skip_serializing_if = "crate::changes::Changes::is_empty")]
    pub changes: crate::changes::Changes,
    /// `--neighbour`: this result is the workload alone; how a background
    /// workload beside it changed it (absent without `--neighbour`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbour: Option<crate::workload::neighbour::NeighbourReport>,
}

/// The measured window `[start, end)`, wall clock, nanoseconds since the Unix
/// epoch: I/O completing inside it is counted, warm-up excluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeasuredWindow {
    /// When measuring began.
    pub start_unix_ns: u64,
    /// When it ended (the planned end, or earlier on a stop).
    pub end_unix_ns: u64,
}

impl RunResult {
    /// Data errors `--verify` found (0 without it).
    pub fn data_errors(&self) -> u64 {
        self.verify.as_ref().map_or(0, |v| v.errors.count)
    }
}

/// Latency histograms, nanoseconds, as [`crate::stats::encode_histogram`] writes them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramSet {
    /// Reads.
    pub read: String,
    /// Writes.
    pub write: String,
    /// Flushes, when the workload issued any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<String>,
}

impl HistogramSet {
    /// The histograms of `s` (the flushes' only when there were flushes).
    pub fn of(s: &crate::stats::RwStats) -> HistogramSet {
        use crate::stats::encode_histogram;
        HistogramSet {
            read: encode_histogram(&s.read.hist),
            write: encode_histogram(&s.write.hist),
            flush: (s.flush.ios > 0).then(|| encode_histogram(&s.flush.hist)),
        }
    }
}
