//! The qualification's result: what each stage measured, the verdicts, the comparison.

use serde::{Deserialize, Serialize};

use super::databases::Setting;
use super::plan::Location;
use super::references;
use super::rules::{RoleVerdict, RuleSet, Verdict};
use super::stage_id::StageId;
use super::system;
use crate::dbms::Dbms;
use crate::runner::RunResult;
use crate::stats::{Percentile, SlowIos};
use crate::sysmon::check::WarningCode;
use crate::sysmon::procs::CpuAttribution;
use crate::verdict::Role;
use crate::workload::{CacheMode, FlushKind};

/// One stage's time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    /// The stage (its name in documents).
    pub name: StageId,
    /// Share of the budget it was given, seconds.
    pub budget_s: f64,
    /// Time it took, seconds.
    pub elapsed_s: f64,
    /// Measurements it ran.
    pub runs: usize,
    /// What it did, in a few words.
    pub summary: String,
}

/// One measured workload, compact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    /// Name (`rand read 4K QD32`, `oltp-with-log data-8k`).
    pub name: String,
    /// Role of the location.
    pub role: Role,
    /// Path measured.
    pub path: String,
    /// The workload in words.
    pub workload: String,
    /// Block size, bytes.
    pub bs: u64,
    /// Measured seconds.
    pub duration_s: f64,
    /// IOPS.
    pub iops: f64,
    /// MiB/s.
    pub mib_per_sec: f64,
    /// Mean read latency, µs (None without reads).
    pub read_mean_us: Option<f64>,
    /// Mean write latency, µs (None without writes).
    pub write_mean_us: Option<f64>,
    /// p99 latency of all I/O, µs.
    pub p99_us: f64,
    /// p99.9 latency of all I/O, µs (0 in results from before it was kept).
    #[serde(default)]
    pub p999_us: f64,
    /// Maximum latency, µs, the I/Os in flight when the measured window
    /// closed included (0 in results from before it was kept).
    #[serde(default)]
    pub max_us: f64,
    /// I/Os that took over 1 s (those in flight when the window closed included).
    #[serde(default)]
    pub ios_over_1s: u64,
    /// I/Os that took over 15 s (SQL Server's error 833).
    #[serde(default)]
    pub ios_over_15s: u64,
    /// I/O errors.
    pub errors: u64,
    /// How it opened its file (absent in results from before it was kept:
    /// every measure was then direct).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheMode>,
    /// The flushes it asked for (`fsync`/`fdatasync` every N writes, or a
    /// sync method that flushes), with their times when the run took them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<FlushMeasure>,
    /// The run's spread over its per-interval series (standard deviation
    /// over mean of 1 s spans, %): IOPS's, then the mean latency's. What a
    /// baseline comparison takes for the noise of a figure measured once
    /// ([`crate::comparison::series_spread_pct`]); absent in results from
    /// before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread_pct: Option<[Option<f64>; 2]>,
    /// The CPU held the run (`cpu_bound_iosim`, `cpu_taken_by_others`, or a
    /// stored result's `cpu_bound`): its figures measure the CPU as much as
    /// the storage, and a baseline comparison does not call their change a
    /// regression. Absent when it did not, and in results from before it
    /// was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_held: Option<crate::sysmon::check::WarningCode>,
    /// Other processes used the device during the run
    /// (`device_used_by_others`): its figures measure the device shared, and
    /// a baseline comparison does not call their change a regression.
    /// Absent when nothing else did, and in results from before it was kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub device_shared: bool,
}

/// The flushes of a measured workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlushMeasure {
    /// `fsync` or `fdatasync`.
    pub kind: FlushKind,
    /// Writes of a thread between two flushes.
    pub every: u32,
    /// Flushes timed; 0 when the runner that measured did not time them
    /// (the rules about flushes then say so instead of judging).
    pub ios: u64,
    /// Mean flush latency, µs.
    pub mean_us: f64,
    /// p99 flush latency, µs.
    pub p99_us: f64,
    /// p99.9 flush latency, µs.
    pub p999_us: f64,
    /// Slowest flush, µs.
    pub max_us: f64,
}

impl FlushMeasure {
    /// The flushes `r` asked for and what it measured of them (None: it asked for none).
    pub fn of(r: &RunResult) -> Option<FlushMeasure> {
        let asked = r
            .config
            .flush
            .or_else(|| r.config.sync_method.and_then(|m| m.flush()))?;
        let times = r.total.flush.as_ref().filter(|f| f.ios > 0);
        let l = times.map(|f| &f.latency_us);
        Some(FlushMeasure {
            kind: asked.kind,
            every: asked.every,
            ios: times.map_or(0, |f| f.ios),
            mean_us: l.map_or(0.0, |l| l.mean),
            p99_us: l.map_or(0.0, |l| l.p(Percentile::P99)),
            p999_us: l.map_or(0.0, |l| l.p(Percentile::P99_9)),
            max_us: l.map_or(0.0, |l| l.max),
        })
    }

    /// Timed by the run.
    pub fn timed(&self) -> bool {
        self.ios > 0
    }
}

impl Measure {
    /// The corner test this is, for a measure of the quick corners
    /// ([`QualifyResult::quick`]); read from its name, so that a result
    /// read back from JSON knows it too.
    pub fn corner(&self) -> Option<crate::quick::CornerId> {
        crate::quick::CornerId::from_name(&self.name)
    }

    pub(super) fn of(name: &str, role: Role, r: &RunResult) -> Measure {
        let t = &r.total;
        let slow = run_slow_ios(r);
        Measure {
            name: name.into(),
            role,
            path: r
                .config
                .targets
                .first()
                .map(|t| t.path.display().to_string())
                .unwrap_or_default(),
            workload: r.config.describe(),
            bs: r.config.bs,
            duration_s: r.duration_s,
            iops: t.total.iops,
            mib_per_sec: t.total.mib_per_sec,
            read_mean_us: (t.read.ios > 0).then_some(t.read.latency_us.mean),
            write_mean_us: (t.write.ios > 0).then_some(t.write.latency_us.mean),
            p99_us: t.total.latency_us.p(Percentile::P99),
            p999_us: t.total.latency_us.p(Percentile::P99_9),
            max_us: run_max_us(r),
            ios_over_1s: slow.over_1s,
            ios_over_15s: slow.over_15s,
            errors: r.errors.count,
            cache: Some(r.config.cache),
            flush: FlushMeasure::of(r),
            spread_pct: Some([
                crate::comparison::run_spread_pct(r, "IOPS"),
                crate::comparison::run_spread_pct(r, "lat mean us"),
            ]),
            cpu_held: r
                .warnings
                .iter()
                .find(|w| crate::sysmon::check::CPU_LIMITED_CODES.contains(&w.code))
                .map(|w| w.code.clone()),
            device_shared: r
                .warnings
                .iter()
                .any(|w| w.code == crate::sysmon::check::WarningCode::DeviceUsedByOthers),
        }
    }

    /// Its reads reach the storage each time (direct I/O; absent in old
    /// results, which were all direct): a buffered read the page cache
    /// answers says nothing about the storage.
    pub fn reads_reach_storage(&self) -> bool {
        self.cache.is_none_or(CacheMode::is_direct)
    }

    /// Its writes reach the storage each time (direct I/O, or opened
    /// O_DSYNC by the cache mode): a buffered write waits for nothing.
    pub fn writes_reach_storage(&self) -> bool {
        self.cache.is_none_or(|c| c.is_direct() || c.is_sync())
    }

    /// I/Os it completed.
    pub fn ios(&self) -> u64 {
        (self.iops * self.duration_s).round() as u64
    }
}

/// A run's I/Os over 1 s and 15 s: its stored latency histograms (the
/// measured window; flushes count as I/Os), plus those still in flight when
/// the window closed.
fn run_slow_ios(r: &RunResult) -> SlowIos {
    let flush_max = r.total.flush.as_ref().map_or(0.0, |f| f.latency_us.max);
    let max = r.total.total.latency_us.max.max(flush_max);
    let mut s = if max > crate::stats::SLOW_IO_NS as f64 / 1000.0 {
        let mut hs = vec![r.histograms.read.as_str(), r.histograms.write.as_str()];
        hs.extend(r.histograms.flush.as_deref());
        SlowIos::of_encoded(&hs)
    } else {
        SlowIos::default()
    };
    if let Some(late) = &r.slow_after_window {
        s.add(late.ios);
    }
    s
}

/// A run's slowest I/O or flush, µs, those in flight when its window closed included.
pub(super) fn run_max_us(r: &RunResult) -> f64 {
    let late = r.slow_after_window.map_or(0.0, |l| l.max_us);
    let flush = r.total.flush.as_ref().map_or(0.0, |f| f.latency_us.max);
    r.total.total.latency_us.max.max(late).max(flush)
}

/// The slowest I/O seen on one role's location over the quick corners,
/// sweeps and profiles (the simulator's are in [`SimSummary`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleStalls {
    /// Role.
    pub role: Role,
    /// I/Os counted.
    pub ios: u64,
    /// Of them, over 1 s.
    pub ios_over_1s: u64,
    /// Of them, over 15 s.
    pub ios_over_15s: u64,
    /// The slowest, µs.
    pub max_us: f64,
    /// The measurement it was in.
    pub max_in: String,
}

impl RoleStalls {
    pub(super) fn add(&mut self, what: &str, r: &RunResult) {
        let slow = run_slow_ios(r);
        let max = run_max_us(r);
        self.ios += r.total.total.ios;
        self.ios_over_1s += slow.over_1s;
        self.ios_over_15s += slow.over_15s;
        if max > self.max_us {
            self.max_us = max;
            self.max_in = what.to_string();
        }
    }
}

/// A profile's workload with its latency-table verdicts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileMeasure {
    /// Profile.
    pub profile: String,
    /// The measurement.
    pub measure: Measure,
    /// The latency tables' words for each direction (`read mean 0.420 ms: [Randal] Excellent; ...`).
    pub tables: Vec<String>,
    /// Judged by throughput and the knee, not by its mean (deep queue by design).
    pub deep_queue: bool,
}

/// One sweep of one role.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleSweep {
    /// Role.
    pub role: Role,
    /// The parameter swept (`qd` or `threads` in documents).
    pub param: crate::sweep::Param,
    /// The swept workload in words.
    pub workload: String,
    /// The sweep (points with mean ± sd over repetitions, knee, findings).
    pub result: crate::sweep::SweepResult,
}

/// The simulator pass, compact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimSummary {
    /// Wall time, s.
    pub duration_s: f64,
    /// Cycles completed.
    pub cycles: u64,
    /// Pages read back and checked.
    pub pages_verified: u64,
    /// Log blocks read back and checked.
    pub log_blocks_verified: u64,
    /// Errors.
    pub errors: u64,
    /// Errors by class (non-zero only).
    pub errors_by_class: Vec<(String, u64)>,
    /// Per file: (path, data|log, role, mean read µs, mean write µs, IOPS).
    pub files: Vec<SimFileSummary>,
    /// The error log, when kept (errors found).
    pub error_log: Option<String>,
    /// Interrupted.
    pub interrupted: bool,
    /// The simulator's long-I/O monitor's warnings (I/Os outstanding over 15 s).
    #[serde(default)]
    pub long_io_warnings: u64,
}

impl SimSummary {
    /// The errors by class in words (` (2 lost_write, 1 torn_page)`), or
    /// nothing without errors: the text and the HTML say it alike.
    pub fn classes_words(&self) -> String {
        if self.errors_by_class.is_empty() {
            return String::new();
        }
        let v: Vec<String> = self
            .errors_by_class
            .iter()
            .map(|(c, n)| format!("{n} {c}"))
            .collect();
        format!(" ({})", v.join(", "))
    }
}

/// One file of the simulator pass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimFileSummary {
    /// Path.
    pub path: String,
    /// `data` or `log`.
    pub kind: String,
    /// Role of its location.
    pub role: Role,
    /// IOPS.
    pub iops: f64,
    /// Mean read latency, µs.
    pub read_mean_us: f64,
    /// Mean write latency, µs.
    pub write_mean_us: f64,
    /// Errors found in it.
    pub errors: u64,
    /// Maximum latency, µs (0 in results from before it was kept).
    #[serde(default)]
    pub max_us: f64,
    /// Completed I/Os over 1 s.
    #[serde(default)]
    pub ios_over_1s: u64,
    /// Completed I/Os over 15 s.
    #[serde(default)]
    pub ios_over_15s: u64,
}

/// A self-check finding over the whole qualification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckFinding {
    /// Warning code.
    pub code: WarningCode,
    /// Role whose location it concerns.
    pub role: Role,
    /// First message seen.
    pub message: String,
    /// Measurements it was seen in.
    pub runs: usize,
    /// It makes the numbers untrustworthy.
    pub untrusted: bool,
    /// A CPU finding: who used the CPU in the longest run that showed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuAttribution>,
}

/// The comparison with an earlier qualification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BaselineComparison {
    /// Stored run id.
    pub id: i64,
    /// When it started.
    pub started_at: String,
    /// Its overall verdict.
    pub overall: Verdict,
    /// Per role: (role, then, now).
    pub roles: Vec<(Role, Verdict, Verdict)>,
    /// Each workload's figures then and now, one line per workload (from `workloads`).
    pub changes: Vec<String>,
    /// A caveat: one qualification each cannot tell a regression from noise.
    pub caveat: String,
    /// The qualification compared with it (None: the one just measured).
    #[serde(default)]
    pub now_id: Option<i64>,
    /// Its overall verdict.
    #[serde(default)]
    pub now_overall: Option<Verdict>,
    /// Each workload's IOPS and mean latency then and now, with the
    /// repetitions' confidence where there are some.
    #[serde(default)]
    pub workloads: Vec<Change>,
    /// The allowed regression, percent (`--threshold`).
    #[serde(default)]
    pub threshold_pct: Option<f64>,
    /// What regressed: a role's verdict that got worse, a figure worse beyond the threshold.
    #[serde(default)]
    pub regressions: Vec<String>,
}

/// Which measurement of a qualification a compared workload is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MeasureKind {
    /// A quick corner.
    Corner,
    /// A point of a queue-depth or thread sweep (mean of its repetitions).
    Sweep,
    /// A database profile's workload.
    Profile,
}

impl MeasureKind {
    /// As printed and in the CSV.
    pub fn name(self) -> &'static str {
        match self {
            MeasureKind::Corner => "corner",
            MeasureKind::Sweep => "sweep",
            MeasureKind::Profile => "profile",
        }
    }
}

/// A figure compared between two qualifications.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeMetric {
    /// I/Os per second: higher is better.
    Iops,
    /// Mean read latency, µs.
    ReadMeanUs,
    /// Mean write latency, µs.
    WriteMeanUs,
    /// Mean latency of all I/O (a sweep point), µs.
    MeanUs,
}

impl ChangeMetric {
    /// As printed.
    pub fn label(self) -> &'static str {
        match self {
            ChangeMetric::Iops => "IOPS",
            ChangeMetric::ReadMeanUs => "read mean us",
            ChangeMetric::WriteMeanUs => "write mean us",
            ChangeMetric::MeanUs => "mean us",
        }
    }

    /// Larger is better (throughput), not worse (latency).
    pub fn higher_is_better(self) -> bool {
        self == ChangeMetric::Iops
    }
}

/// One workload's figure in two qualifications.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Corner, sweep point or profile workload.
    pub kind: MeasureKind,
    /// Role of its location.
    pub role: Role,
    /// Its name (`rand read 4K QD32`, `qd=8`, `oltp-with-log data-8k`).
    pub name: String,
    /// The figure.
    pub metric: ChangeMetric,
    /// Then (the mean of the repetitions of a sweep point).
    pub then: f64,
    /// Now.
    pub now: f64,
    /// Half-width of the 95% confidence interval then, over the repetitions (None: one measurement).
    pub then_ci95: Option<f64>,
    /// The same, now.
    pub now_ci95: Option<f64>,
    /// (now - then) / then, percent (None when then is 0).
    pub rel_pct: Option<f64>,
    /// Welch's test of the difference, when both sides have two or more repetitions.
    pub welch: Option<crate::stats::Welch>,
    /// For the worse.
    pub worse: bool,
    /// Worse beyond the threshold, and not within the repetitions' noise.
    pub regressed: bool,
    /// The difference noise alone reaches for this figure, % of `then`
    /// ([`crate::comparison::noise_band_pct`]); absent in comparisons
    /// stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_pct: Option<f64>,
    /// Either side measured it once (a corner, a profile's workload, a
    /// sweep point without repetitions).
    #[serde(default)]
    pub single_run: bool,
    /// The CPU held a run behind either side (see [`Measure::cpu_held`]; a
    /// sweep point with a CPU-bound repetition): the change is shown, never
    /// called a regression of the storage.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cpu_held: bool,
    /// Other processes used the device during a run behind either side
    /// (see [`Measure::device_shared`]): the change is shown, never called a
    /// regression of the storage.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub device_shared: bool,
}

/// The whole qualification: the body of one stored document
/// (`Document::Qualify`, whose header says when and where).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QualifyResult {
    /// `--neighbour`: how a background workload changed each location's
    /// page reads (absent without it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub neighbours: Vec<RoleNeighbour>,
    /// Overall verdict.
    pub overall: Verdict,
    /// The latency table that judged it (`classic` in results from before there was a choice).
    #[serde(default)]
    pub rules: RuleSet,
    /// The database qualified for (`sqlserver` in results from before there was a choice).
    #[serde(default)]
    pub dbms: Dbms,
    /// The database settings its workloads assume (`wal_sync_method=fdatasync`),
    /// each with what it does and its source (empty in results from before they were kept).
    #[serde(default)]
    pub settings: Vec<Setting>,
    /// The self-checks found nothing that makes the numbers untrue.
    pub trustworthy: bool,
    /// Per role.
    pub verdicts: Vec<RoleVerdict>,
    /// Top recommendations.
    pub recommendations: Vec<String>,
    /// Budget, s.
    pub time_budget_s: f64,
    /// Set-up (the test files), s: paid from the budget since the budget
    /// is kept (`budget`), before the budget started in older results.
    pub setup_s: f64,
    /// Measuring time, s (within the budget, give or take the last run's end).
    pub measure_s: f64,
    /// Locations.
    pub locations: Vec<Location>,
    /// The system under test: host, iosim, test files, cache modes and each
    /// location's storage, gathered before the test files were made.
    #[serde(default)]
    pub system: system::SystemUnderTest,
    /// Stages.
    pub stages: Vec<StageRecord>,
    /// Quick corners per location.
    pub quick: Vec<Measure>,
    /// Sweeps.
    pub sweeps: Vec<RoleSweep>,
    /// Profiles.
    pub profiles: Vec<ProfileMeasure>,
    /// Simulator pass.
    pub sim: Option<SimSummary>,
    /// Self-check findings.
    pub checks: Vec<CheckFinding>,
    /// Per role: the slowest I/O and the I/Os over 1 s and 15 s in the measurements.
    #[serde(default)]
    pub stalls: Vec<RoleStalls>,
    /// Comparison with an earlier qualification.
    pub baseline: Option<BaselineComparison>,
    /// Notes.
    pub notes: Vec<String>,
    /// What is left on disk.
    pub left_on_disk: Vec<String>,
    /// Ctrl-C stopped it.
    pub interrupted: bool,
    /// The sources the rules and tables cite, with their addresses.
    #[serde(default)]
    pub references: Vec<references::Reference>,
    /// The budget is under [`minimum_budget`]: a first look, not a verdict to act on.
    #[serde(default)]
    pub preliminary: bool,
    /// The least budget whose measurements mean something for these roles, s ([`minimum_budget`]).
    #[serde(default)]
    pub minimum_budget_s: f64,
    /// Size of the test files created in directories (`--size`), bytes.
    #[serde(default)]
    pub test_file_size: u64,
    /// The cache in front of the disks, as given (`--cache-size`), bytes.
    #[serde(default)]
    pub cache_size: Option<u64>,
    /// This host's memory, bytes: the cache the test files are held against without `--cache-size`.
    #[serde(default)]
    pub host_memory: u64,
    /// How `--time` was kept: the wall time against it and every overrun
    /// with its cause (absent in results from before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetAccount>,
}

/// Why a stage ran past its share of the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverrunCause {
    /// An I/O in flight at the stage's deadline was waited for: an I/O
    /// cannot be abandoned, so its wait is the overrun.
    Stall,
    /// Creating the test files took more than its share of the budget.
    FileCreation,
    /// Work around the measured windows (starting runs, draining queues,
    /// the simulator's files) that slow storage made slow.
    Overhead,
    /// Outside `--time` by design (the noisy-neighbour stage).
    OutsideBudget,
}

/// A stage (or the set-up) that ended after its share of the budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Overrun {
    /// The stage (`set-up`, `sweeps`, `neighbour`...).
    pub stage: StageId,
    /// Its share of the budget, s.
    pub planned_s: f64,
    /// What it took, s.
    pub took_s: f64,
    /// By how much it overran, s.
    pub over_s: f64,
    /// The cause's kind.
    pub cause: OverrunCause,
    /// The cause in words (`a stall: an I/O took 8.0 s (sweep ...)`).
    pub why: String,
}

/// How the budget was kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BudgetAccount {
    /// `--time`, s.
    pub planned_s: f64,
    /// The qualification's wall time, set-up to clean-up (the neighbour
    /// stage included, when given), s.
    pub wall_s: f64,
    /// How far `wall_s` went past `planned_s` (0 within it), s.
    pub overrun_s: f64,
    /// The slowest I/O waited for in any stage, s: the budgeted stages end
    /// within `planned_s` plus this (plus a set-up overrun).
    pub longest_stall_s: f64,
    /// Where that I/O was.
    pub longest_stall_in: String,
    /// Stages that started with nothing left of the budget and did not run.
    pub skipped: Vec<StageId>,
    /// Each stage that overran, with its cause.
    pub overruns: Vec<Overrun>,
}

impl QualifyResult {
    /// The overall verdict as the first line, the history and the report's
    /// title say it: `NOT FIT`, or `PRELIMINARY NOT FIT` under the minimum budget.
    pub fn headline(&self) -> String {
        format!(
            "{}{}",
            if self.preliminary { "PRELIMINARY " } else { "" },
            self.overall.label()
        )
    }

    /// Size of the test files it created in directories (None when it
    /// measured devices only, or an older iosim did not record it).
    pub fn file_size(&self) -> Option<u64> {
        (self.test_file_size > 0 && self.locations.iter().any(|l| !l.device))
            .then_some(self.test_file_size)
    }

    /// Budget and test-file size in a few words, for listings
    /// (`budget 10m, files 1GiB`, `budget 30m, devices`).
    pub fn limits_line(&self) -> String {
        let budget = crate::units::format_duration_arg(std::time::Duration::from_secs_f64(
            self.time_budget_s,
        ));
        match self.file_size() {
            Some(sz) => format!("budget {budget}, files {}", crate::units::format_size(sz)),
            None if self.locations.iter().all(|l| l.device) && !self.locations.is_empty() => {
                format!("budget {budget}, devices")
            }
            None => format!("budget {budget}"),
        }
    }
}

/// The noisy-neighbour study of one location.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleNeighbour {
    /// The role whose location it ran on.
    pub role: Role,
    /// The study.
    pub report: crate::workload::neighbour::NeighbourReport,
}
