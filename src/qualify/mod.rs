//! `iosim qualify`: the whole qualification of a database's storage as one
//! command, within a time budget, ending with one verdict per role and
//! overall (see docs/qualify-storage.md).
//!
//! Every stage calls the library's existing pieces: the quick corners
//! ([`crate::quick`]), queue-depth and thread sweeps with repetitions
//! ([`crate::sweep`]), the database profiles ([`crate::profile`]), the
//! simulator with page verification ([`crate::sim`]) and the self-checks the
//! runner performs on every run ([`crate::sysmon::check`]). This module only
//! binds locations to roles, splits the budget, keeps the figures the rules
//! need ([`rules`]) and renders the result ([`render`]: text; [`crate::html::qualify`]: the HTML
//! report), with the system under test ([`system`]) and the sources the rules
//! cite ([`references`]) in both.

pub mod compare;
pub mod csv;
pub mod references;
pub mod render;
pub mod rules;
pub mod system;
pub mod verdict_html;

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::runner::{RunOptions, RunResult};
use crate::stats::{Percentile, SlowIos};
use crate::sweep::analysis::{Stat, MAX_DECIDING_REPEATS};
use crate::sysmon::check::{CpuCause, WarningCode};
use crate::sysmon::procs::CpuAttribution;
use crate::verdict::{Direction, Role};
use crate::workload::{CacheMode, EngineKind, FillMode, RwMode, WorkloadSpec};
use rules::{
    Facts, KneeFact, LatencyFact, RoleFacts, RoleVerdict, RuleSet, SimSlowFact, SlowFact, TailFact,
    ThroughputFact, Verdict,
};

/// Where one role goes, as given.
#[derive(Clone, Debug)]
pub struct RoleArg {
    /// Role.
    pub role: Role,
    /// A directory or a block device.
    pub path: PathBuf,
}

/// What to qualify, and how long to take.
#[derive(Clone, Debug)]
pub struct QualifyConfig {
    /// Roles and their locations; data first. Log falls back to the data location.
    pub roles: Vec<RoleArg>,
    /// Time budget of the measurements.
    pub time: Duration,
    /// Size of the test files created in directories.
    pub size: u64,
    /// Engine.
    pub engine: EngineKind,
    /// Allow writing to block devices.
    pub allow_destroy: bool,
    /// Keep created test files.
    pub keep_files: bool,
    /// Stage lines on stderr.
    pub progress: bool,
    /// The latency table the verdict uses.
    pub rules: RuleSet,
    /// The cache in front of the disks, as the user gave it (`--cache-size`).
    pub cache_size: Option<u64>,
}

/// A role bound to its test target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Location {
    /// Role.
    pub role: Role,
    /// What was given (directory or device).
    pub given: PathBuf,
    /// The file or device measured.
    pub target: PathBuf,
    /// A block device.
    pub device: bool,
    /// Kernel name of the block device under it, when known.
    pub block_device: Option<String>,
    /// Created by this qualification.
    pub created: bool,
    /// Not given: placed beside the data.
    pub derived: bool,
    /// Size of the file or device measured, bytes (0: not known, stored by an older iosim).
    #[serde(default)]
    pub size: u64,
}

/// One stage's time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    /// Name.
    pub name: String,
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
}

impl Measure {
    fn of(name: &str, role: Role, r: &RunResult) -> Measure {
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
        }
    }

    /// I/Os it completed.
    pub fn ios(&self) -> u64 {
        (self.iops * self.duration_s).round() as u64
    }
}

/// A run's I/Os over 1 s and 15 s: its stored latency histograms (the
/// measured window), plus those still in flight when the window closed.
fn run_slow_ios(r: &RunResult) -> SlowIos {
    let mut s = if r.total.total.latency_us.max > crate::stats::SLOW_IO_NS as f64 / 1000.0 {
        SlowIos::of_encoded(&[&r.histograms.read, &r.histograms.write])
    } else {
        SlowIos::default()
    };
    if let Some(late) = &r.slow_after_window {
        s.add(late.ios);
    }
    s
}

/// A run's slowest I/O, µs, those in flight when its window closed included.
fn run_max_us(r: &RunResult) -> f64 {
    let late = r.slow_after_window.map_or(0.0, |l| l.max_us);
    r.total.total.latency_us.max.max(late)
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
    fn add(&mut self, what: &str, r: &RunResult) {
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
    /// `qd` or `threads`.
    pub param: String,
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
}

/// The whole qualification: the body of one stored document
/// (`Document::Qualify`, whose header says when and where).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QualifyResult {
    /// Overall verdict.
    pub overall: Verdict,
    /// The latency table that judged it (`classic` in results from before there was a choice).
    #[serde(default)]
    pub rules: RuleSet,
    /// The self-checks found nothing that makes the numbers untrue.
    pub trustworthy: bool,
    /// Per role.
    pub verdicts: Vec<RoleVerdict>,
    /// Top recommendations.
    pub recommendations: Vec<String>,
    /// Budget, s.
    pub time_budget_s: f64,
    /// Set-up before the budget started (test files), s.
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

/// Self-check codes that mean the numbers measure something other than the
/// storage. A CPU kept busy by the kernel's I/O path (`cpu_busy_io_path`) is
/// not one: that is part of the storage's cost.
pub const UNTRUSTED_CODES: [WarningCode; 11] = [
    WarningCode::CacheAnsweredReads,
    WarningCode::WritesMissedDevice,
    WarningCode::WritesStillCached,
    WarningCode::BufferedFitsInMemory,
    CpuCause::Iosim.code(),
    CpuCause::Others.code(),
    WarningCode::SparseTestFile,
    WarningCode::ZeroFilledTestFile,
    WarningCode::DirectIoUnavailable,
    WarningCode::LoopBackingCached,
    WarningCode::UnwrittenDevice,
];

/// The stages and their fixed shares of the budget.
pub const STAGES: [(&str, f64); 5] = [
    ("quick corners", 0.10),
    ("sweeps", 0.35),
    ("profiles", 0.30),
    ("simulator", 0.20),
    ("self-checks", 0.05),
];

/// How the quick corners open their files (the corners of `iosim quick`).
pub const QUICK_CACHE: CacheMode = CacheMode::Direct;
/// How the sweeps open their files (and the profiles, unless a workload says
/// otherwise): as SQL Server opens its files.
pub const MEASURE_CACHE: CacheMode = CacheMode::DirectWritethrough;

/// How each stage opens its files, for the report.
fn stage_caches(locs: &[Location]) -> anyhow::Result<Vec<system::StageCache>> {
    let mut profiles: Vec<CacheMode> = Vec::new();
    for (name, _) in profile_list(locs) {
        for w in &crate::profile::Profile::load(name)?.workloads {
            if !profiles.contains(&w.cache) {
                profiles.push(w.cache);
            }
        }
    }
    let sim = crate::sim::files::cache_mode(&crate::sim::config::SimConfig::default());
    Ok([
        ("quick corners", vec![QUICK_CACHE]),
        ("sweeps", vec![MEASURE_CACHE]),
        ("profiles", profiles),
        ("simulator", vec![sim]),
    ]
    .into_iter()
    .map(|(stage, cache)| system::StageCache {
        stage: stage.into(),
        cache,
    })
    .collect())
}

/// Shortest measured time of one run, whatever the budget.
pub const MIN_RUN: Duration = Duration::from_millis(100);

/// Splits the budget: each stage gets its fixed share of what is left, so an
/// early stage that overran is paid for by the later ones, and the whole ends
/// within the budget (plus at most one short run per stage).
pub struct Budget {
    start: Instant,
    total: Duration,
    shares_left: f64,
}

impl Budget {
    /// A budget of `total` starting now.
    pub fn new(total: Duration) -> Budget {
        Budget {
            start: Instant::now(),
            total,
            shares_left: STAGES.iter().map(|s| s.1).sum(),
        }
    }

    /// Time used.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Time left.
    pub fn left(&self) -> Duration {
        self.total.saturating_sub(self.elapsed())
    }

    /// The next stage's time, for a stage with `share`.
    pub fn allot(&mut self, share: f64) -> Duration {
        let left = self.left();
        self.allot_from(share, left)
    }

    fn allot_from(&mut self, share: f64, left: Duration) -> Duration {
        let d = if self.shares_left > 0.0 {
            left.mul_f64((share / self.shares_left).min(1.0))
        } else {
            Duration::ZERO
        };
        self.shares_left -= share;
        d
    }
}

/// Share of each run's slot that is measured ([`per_run`]); the rest is set-up and analysis.
const MEASURED_SHARE: f64 = 0.9;
/// Set-up and analysis kept for each run besides [`MEASURED_SHARE`], s.
const RUN_OVERHEAD_S: f64 = 0.03;

/// Measured time of each of `runs` runs sharing `slot` (some of it is set-up
/// and analysis of each run: 10% and 30 ms are kept for that).
pub fn per_run(slot: Duration, runs: usize) -> Duration {
    let each = slot.as_secs_f64() / runs.max(1) as f64;
    Duration::from_secs_f64((each * MEASURED_SHARE - RUN_OVERHEAD_S).max(0.0)).max(MIN_RUN)
}

/// The slot in which `runs` runs each measure `each`: the inverse of [`per_run`].
pub fn slot_for(each: Duration, runs: usize) -> Duration {
    Duration::from_secs_f64(runs as f64 * (each.as_secs_f64() + RUN_OVERHEAD_S) / MEASURED_SHARE)
}

/// The shortest measurement whose numbers mean something: under a second, a
/// run's start (threads, the queue filling, cold paths) is a visible part of
/// it, and what a device does every second or so (flushes, garbage
/// collection, an array destaging its cache) is not sampled.
pub const MEANINGFUL_RUN: Duration = Duration::from_secs(1);

/// The fewest repetitions of a sweep point that show its spread (a
/// confidence interval, the knee's test, `compare`'s Welch test need two).
pub const MIN_REPEAT: usize = 2;

/// The runs each measuring stage makes for these locations, with the
/// stage's share: the quick corners on each distinct target, every sweep
/// point [`MIN_REPEAT`] times, every phase of the profiles that fit the roles.
pub fn planned_runs(locs: &[Location]) -> anyhow::Result<Vec<(&'static str, f64, usize)>> {
    let mut targets: Vec<&Path> = Vec::new();
    for l in locs {
        if !targets.contains(&l.target.as_path()) {
            targets.push(&l.target);
        }
    }
    let mut points = 0;
    for l in locs {
        let (_, _, qd, threads) = sweep_shape(l.role);
        for axis in [qd, threads] {
            points += crate::sweep::parse_axis(axis)
                .map_err(anyhow::Error::msg)?
                .values
                .len();
        }
    }
    let mut phases = 0;
    for (name, _) in profile_list(locs) {
        phases += crate::profile::Profile::load(name)?.phases().len();
    }
    let share = |name: &str| STAGES.iter().find(|s| s.0 == name).map_or(0.0, |s| s.1);
    Ok(vec![
        (
            "quick corners",
            share("quick corners"),
            crate::quick::SUITE.len() * targets.len(),
        ),
        ("sweeps", share("sweeps"), points * MIN_REPEAT),
        ("profiles", share("profiles"), phases),
    ])
}

/// The least budget (whole seconds) that gives every run of
/// [`planned_runs`] [`MEANINGFUL_RUN`] of measuring, each stage within its
/// share. A qualification with less is PRELIMINARY: the simulator and the
/// self-checks are not counted (the simulator sizes its cycle to its share,
/// and `sim-missing` says when it could not complete one).
pub fn minimum_budget(planned: &[(&str, f64, usize)]) -> Duration {
    let need = planned
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|p| slot_for(MEANINGFUL_RUN, p.2).as_secs_f64() / p.1)
        .fold(0.0, f64::max);
    Duration::from_secs(need.ceil() as u64)
}

/// Why a qualification is PRELIMINARY, and what to do about it.
pub fn preliminary_note(budget: Duration, minimum: Duration) -> String {
    let arg = crate::units::format_duration_arg;
    format!(
        "PRELIMINARY: a budget of {} is under the {} these roles need for every measurement to last {} and every sweep point to be measured {} times; the verdict and recommendations are a first look: qualify again with --time {} or more before acting on them",
        arg(budget),
        arg(minimum),
        arg(MEANINGFUL_RUN),
        MIN_REPEAT,
        arg(minimum)
    )
}

/// Size of a location's file or device now (0 when it cannot be read).
fn target_size(l: &Location) -> u64 {
    if l.device {
        std::fs::File::open(&l.target)
            .and_then(|f| crate::target::device_size(&f))
            .unwrap_or(0)
    } else {
        std::fs::metadata(&l.target).map_or(0, |m| m.len())
    }
}

fn is_block_device(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device())
}

fn block_device_of(p: &Path) -> Option<String> {
    let probe = if p.exists() {
        p.to_path_buf()
    } else {
        p.parent()?.to_path_buf()
    };
    match crate::sysmon::mounts::resolve_target(&probe) {
        crate::sysmon::mounts::Resolution::Device(d) => Some(d.name),
        _ => None,
    }
}

/// Binds roles to test targets: a directory gets `iosim-qualify-ROLE.dat`, a
/// device is used whole. The log goes beside the data when not given.
pub fn locations(cfg: &QualifyConfig) -> anyhow::Result<Vec<Location>> {
    let bad = |m: String| anyhow::Error::new(crate::Error::BadWorkload(m));
    let mut out: Vec<Location> = Vec::new();
    for r in &cfg.roles {
        let device = is_block_device(&r.path);
        if device && !cfg.allow_destroy {
            return Err(crate::Error::WouldDestroy(
                r.path.clone(),
                format!(
                    "it is a block device and qualifying it as {} overwrites it: add --allow-destroy if its contents may go",
                    r.role.name()
                ),
            )
            .into());
        }
        if !device && !r.path.is_dir() {
            if !r.path.exists() {
                return Err(crate::Error::MissingDirectory(r.path.clone()).into());
            }
            return Err(bad(format!(
                "--{} {}: give a directory (a test file is created in it) or a block device",
                r.role.name(),
                r.path.display()
            )));
        }
        let target = if device {
            r.path.clone()
        } else {
            r.path.join(format!("iosim-qualify-{}.dat", r.role.name()))
        };
        if let Some(o) = out.iter().find(|o| o.target == target) {
            return Err(bad(format!(
                "--{} and --{} name the same device {}: a device holds one role; give each role its own device, or directories",
                o.role.name(),
                r.role.name(),
                target.display()
            )));
        }
        out.push(Location {
            role: r.role,
            given: r.path.clone(),
            block_device: block_device_of(&target),
            target,
            device,
            created: false,
            derived: false,
            size: 0,
        });
    }
    let data = out
        .iter()
        .find(|l| l.role == Role::Data)
        .cloned()
        .ok_or_else(|| bad("--data is required".into()))?;
    if !out.iter().any(|l| l.role == Role::Log) {
        if data.device {
            return Err(bad(format!(
                "--data {} is a device and holds the data role only: give --log DIR|DEV for the log",
                data.given.display()
            )));
        }
        let target = data.given.join("iosim-qualify-log.dat");
        out.push(Location {
            role: Role::Log,
            given: data.given.clone(),
            block_device: data.block_device.clone(),
            target,
            device: false,
            created: false,
            derived: true,
            size: 0,
        });
    }
    out.sort_by_key(|l| role_order(l.role));
    Ok(out)
}

fn role_order(r: Role) -> usize {
    match r {
        Role::Data => 0,
        Role::Log => 1,
        Role::Tempdb => 2,
        Role::Backup => 3,
    }
}

/// True when two locations share a block device (or a path).
pub fn shares_device(a: &Location, b: &Location) -> bool {
    a.given == b.given || matches!((&a.block_device, &b.block_device), (Some(x), Some(y)) if x == y)
}

struct Progress {
    on: bool,
    total: Duration,
}

impl Progress {
    fn line(&self, budget: &Budget, msg: &str) {
        if self.on {
            eprintln!(
                "[qualify {:>6.1} s | {:>6.1} s left of {}] {msg}",
                budget.elapsed().as_secs_f64(),
                budget.left().as_secs_f64(),
                crate::units::format_duration_arg(self.total)
            );
        }
    }
}

/// What the stages collect.
#[derive(Default)]
struct Collected {
    quick: Vec<Measure>,
    sweeps: Vec<RoleSweep>,
    profiles: Vec<ProfileMeasure>,
    sim: Option<SimSummary>,
    /// (role, code, message) of every run's self-check warnings.
    warnings: Vec<(Role, WarningCode, String)>,
    /// Who used the CPU in the runs with a CPU finding.
    cpu: Vec<(Role, CpuCause, CpuAttribution)>,
    /// Errors per role.
    errors: Vec<(Role, u64)>,
    /// Slow I/Os per role.
    stalls: Vec<RoleStalls>,
    notes: Vec<String>,
    left: Vec<String>,
    interrupted: bool,
}

impl Collected {
    fn cpu_of(&mut self, role: Role, cpu: &crate::runner::CpuResult) {
        if let (Some(cause), Some(a)) = (cpu.cause, &cpu.attribution) {
            self.cpu.push((role, cause, a.clone()));
        }
    }

    fn run(&mut self, role: Role, what: &str, r: &RunResult) {
        for w in &r.warnings {
            self.warnings
                .push((role, w.code.clone(), w.message.clone()));
        }
        self.cpu_of(role, &r.cpu);
        self.errors.push((role, r.errors.count));
        self.interrupted |= r.interrupted;
        self.stall(role, what, r);
    }

    fn stall(&mut self, role: Role, what: &str, r: &RunResult) {
        let i = match self.stalls.iter().position(|s| s.role == role) {
            Some(i) => i,
            None => {
                self.stalls.push(RoleStalls {
                    role,
                    ios: 0,
                    ios_over_1s: 0,
                    ios_over_15s: 0,
                    max_us: 0.0,
                    max_in: String::new(),
                });
                self.stalls.len() - 1
            }
        };
        self.stalls[i].add(what, r);
    }
}

fn base_spec(cfg: &QualifyConfig, duration: Duration) -> WorkloadSpec {
    WorkloadSpec {
        duration,
        engine: cfg.engine,
        cache: MEASURE_CACHE,
        allow_destroy: cfg.allow_destroy,
        ..WorkloadSpec::default()
    }
}

/// Each sweep point's run aims for this long when the budget gives the
/// sweeps more repetitions than three.
pub const SWEEP_RUN_TARGET: Duration = Duration::from_secs(3);

/// Repetitions per sweep point: as many as the sweeps' share of the budget
/// gives with runs of [`SWEEP_RUN_TARGET`], up to the sweep's cap
/// ([`MAX_DECIDING_REPEATS`]); at least three of a second or more, else two.
/// A larger `--time` buys repetitions, which is how a knee the noise left
/// undecided gets decided ([`knee_line`] says which budget would).
pub fn sweep_repeats(slot: Duration, points: usize) -> usize {
    let fits = |r: usize, run: Duration| per_run(slot, points * r) >= run;
    match (3..=MAX_DECIDING_REPEATS)
        .rev()
        .find(|&r| fits(r, SWEEP_RUN_TARGET))
    {
        Some(r) => r,
        None if fits(3, Duration::from_secs(1)) => 3,
        None => 2,
    }
}

/// The smallest whole-minute budget whose sweeps get `repeats` repetitions
/// of each of `points` points (by [`sweep_repeats`] on the sweeps' share).
pub fn budget_for_repeats(repeats: usize, points: usize) -> Option<Duration> {
    let share = STAGES
        .iter()
        .find(|s| s.0 == "sweeps")
        .map_or(0.35, |s| s.1);
    (1..=24 * 60)
        .map(|m| Duration::from_secs(m * 60))
        .find(|t| sweep_repeats(t.mul_f64(share), points) >= repeats)
}

/// What the knee rule concluded on one of the qualification's sweeps, in
/// words: the knee, "no knee: still scales", or undecided with the budget
/// that would decide it (qualify has no --repeat: its repetitions grow with
/// --time). `None` when the sweep was not judged.
pub fn knee_line(r: &QualifyResult, s: &RoleSweep) -> Option<String> {
    use crate::sweep::analysis::KneeStatus;
    let res = &s.result;
    let param = s.param.to_uppercase();
    let at = |load: f64| {
        res.points
            .iter()
            .find(|p| p.outstanding as f64 == load)
            .and_then(|p| p.params.get(&s.param).cloned())
            .unwrap_or_else(|| format!("{load}"))
    };
    let points: usize = r.sweeps.iter().map(|s| s.result.points.len()).sum();
    let budget = |n: usize| {
        budget_for_repeats(n, points)
            .map(|t| format!("{}m", t.as_secs() / 60))
            .unwrap_or_else(|| "more than a day".into())
    };
    Some(match &res.knee_status {
        KneeStatus::Found => {
            let k = res.knee.as_ref()?;
            let p = res.points.get(k.index)?;
            format!(
                "knee at {param} {}: {} IOPS, {:.0}% of the best; {}",
                p.params.get(&s.param).cloned().unwrap_or_default(),
                p.iops.show(),
                k.share_of_max * 100.0,
                k.explanation
            )
        }
        KneeStatus::StillScales { last_load } => format!(
            "no knee up to {param} {}: the storage still scales (a later point always had over {:.0}% more IOPS)",
            at(*last_load),
            crate::sweep::analysis::KNEE_MARGIN * 100.0
        ),
        KneeStatus::Undecided {
            load,
            repeats: Some(n),
            ..
        } => format!(
            "knee undecided at {param} {}: {} repetitions are too noisy to tell whether IOPS flattens there; --time {} gives the sweeps {n}, enough to decide it",
            at(*load),
            res.repeat,
            budget(*n)
        ),
        KneeStatus::Undecided {
            load, max_repeats, ..
        } => format!(
            "knee undecided at {param} {}: {} repetitions are too noisy to tell whether IOPS flattens there, and even {max_repeats} (--time {}) would not decide it: quieten the system and qualify again",
            at(*load),
            res.repeat,
            budget(*max_repeats)
        ),
        KneeStatus::NotJudged => return None,
    })
}

/// Worker threads per core the threads sweeps go up to. The sweeps run QD 4
/// per thread, so a thread waits for its I/O part of the time and two share a
/// core without waiting for each other; beyond that they queue for the CPU
/// and the sweep measures the machine, not the storage (on a 2-vCPU VM, 8
/// threads waited for a core about 19% of their time, 1 or 2 threads 5 to
/// 12%). Queue depths need no such cap: one thread drives any depth.
pub const SWEEP_THREADS_PER_CORE: u64 = 2;

/// Drops the values of a threads axis beyond [`SWEEP_THREADS_PER_CORE`] per
/// core of a machine with `cores` cores (keeping at least one value); the
/// note saying so when any were dropped.
pub fn fit_threads_axis(axis: &mut crate::sweep::Axis, cores: usize, role: Role) -> Option<String> {
    use crate::sweep::Value;
    let cap = SWEEP_THREADS_PER_CORE * cores.max(1) as u64;
    let before = axis.values.clone();
    axis.values
        .retain(|v| matches!(v, Value::Num(n) if *n <= cap));
    if axis.values.is_empty() {
        axis.values = before.into_iter().take(1).collect();
        return None;
    }
    if axis.values.len() == before.len() {
        return None;
    }
    let show = |v: &[Value]| match v.last() {
        Some(Value::Num(n)) => n.to_string(),
        _ => "?".into(),
    };
    Some(format!(
        "the {} threads sweep stops at {} threads, not {}: {SWEEP_THREADS_PER_CORE} per core on this {cores}-core machine (more would wait for each other's CPU and measure the machine, not the storage)",
        role.name(),
        show(&axis.values),
        show(&before),
    ))
}

/// The sweeps of a role: the pattern the database uses there, over queue depth and threads.
pub fn sweep_shape(role: Role) -> (RwMode, u64, &'static str, &'static str) {
    match role {
        Role::Data => (RwMode::Randread, 8 << 10, "qd=1..64x2", "threads=1..8x2"),
        Role::Log => (RwMode::Write, 60 << 10, "qd=1..32x2", "threads=1..4x2"),
        Role::Tempdb => (RwMode::Randrw, 8 << 10, "qd=1..64x2", "threads=1..8x2"),
        Role::Backup => (RwMode::Write, 1 << 20, "qd=1..16x2", "threads=1..4x2"),
    }
}

/// The profiles that fit the roles present, with their targets' locations.
pub fn profile_list(locs: &[Location]) -> Vec<(&'static str, Vec<Role>)> {
    let has = |r: Role| locs.iter().any(|l| l.role == r);
    let mut v = vec![
        ("oltp-with-log", vec![Role::Data, Role::Log]),
        ("log-writer", vec![Role::Log]),
        ("checkpoint", vec![Role::Data]),
        ("read-ahead", vec![Role::Data]),
        ("bulk-insert", vec![Role::Data, Role::Log]),
    ];
    if has(Role::Tempdb) {
        v.push(("tempdb", vec![Role::Tempdb]));
    }
    if has(Role::Backup) {
        v.push(("backup", vec![Role::Data, Role::Backup]));
        v.push(("restore", vec![Role::Data, Role::Backup]));
    }
    v
}

/// Workloads judged by throughput and the knee rather than their mean latency.
pub fn is_deep_queue(profile: &str, workload: &str) -> bool {
    matches!(
        (profile, workload),
        ("read-ahead", _)
            | ("backup", _)
            | ("restore", _)
            | ("bulk-insert", "eager-write-128k")
            | ("checkpoint", _)
    )
}

/// Runs the qualification. `baseline` is compared at the end (resolved by the caller before).
/// A failure removes the test files it created (unless `--keep-files`), and says so.
pub fn run(cfg: &QualifyConfig, opts: &RunOptions) -> anyhow::Result<QualifyResult> {
    let mut made = Vec::new();
    qualify(cfg, opts, &mut made).map_err(|mut e| {
        for path in made.iter().filter(|_| !cfg.keep_files) {
            if std::fs::remove_file(path).is_ok() {
                e = crate::target::with_outcome(e, crate::target::FileFate::Removed, path);
            }
        }
        e
    })
}

/// The largest block any stage issues on the test files (the quick
/// corners', the sweeps', the profiles'): each file must hold one.
fn largest_block(locs: &[Location]) -> anyhow::Result<u64> {
    let mut bs = crate::quick::SUITE.iter().map(|c| c.bs).max().unwrap_or(0);
    for l in locs {
        bs = bs.max(sweep_shape(l.role).1);
    }
    for (name, _) in profile_list(locs) {
        for w in &crate::profile::Profile::load(name)?.workloads {
            let mut spec = w.spec(&WorkloadSpec::default())?;
            spec.resolve_sizes();
            bs = bs.max(spec.bs);
        }
    }
    Ok(bs)
}

/// [`run`]; the test files it creates go to `made`.
fn qualify(
    cfg: &QualifyConfig,
    opts: &RunOptions,
    made: &mut Vec<PathBuf>,
) -> anyhow::Result<QualifyResult> {
    let mut locs = locations(cfg)?;
    if locs.iter().any(|l| !l.device) {
        let need = largest_block(&locs)?;
        if cfg.size < need {
            let arg = crate::units::format_size_arg;
            return Err(crate::Error::BadWorkload(format!(
                "--size {}: each test file qualify creates in a directory must hold its largest I/O ({}): give --size {} or more (the default is 1G)",
                arg(cfg.size),
                arg(need),
                arg(need)
            ))
            .into());
        }
    }
    let system = system::gather(&locs, cfg.size, cfg.engine, stage_caches(&locs)?);
    let quiet = RunOptions {
        progress: false,
        ..opts.clone()
    };
    let progress = Progress {
        on: cfg.progress,
        total: cfg.time,
    };
    let mut c = Collected::default();
    let minimum = minimum_budget(&planned_runs(&locs)?);
    let preliminary = cfg.time < minimum;
    if preliminary && cfg.progress {
        eprintln!("[qualify] {}", preliminary_note(cfg.time, minimum));
    }

    // Set-up: the test files, before the budget starts.
    let t_setup = Instant::now();
    for l in locs.iter_mut().filter(|l| !l.device) {
        if l.target.exists() {
            if !crate::target::is_iosim_file(&l.target) {
                return Err(crate::Error::WouldDestroy(
                    l.target.clone(),
                    "a file of that name exists and iosim did not create it: remove or rename it"
                        .into(),
                )
                .into());
            }
            continue;
        }
        if cfg.progress {
            eprintln!(
                "[qualify set-up] creating {} ({})",
                l.target.display(),
                crate::units::format_size(cfg.size)
            );
        }
        crate::target::create_test_file(
            &l.target,
            cfg.size,
            FillMode::Random,
            crate::target::PrepareOptions {
                progress: opts.progress,
                stop: Some(&opts.stop),
            },
        )?;
        made.push(l.target.clone());
        l.created = true;
    }
    let setup_s = t_setup.elapsed().as_secs_f64();
    for l in locs.iter_mut() {
        l.size = target_size(l);
    }
    let mut budget = Budget::new(cfg.time);
    let mut stages = Vec::new();
    progress.line(
        &budget,
        &format!("set-up took {setup_s:.1} s (test files); the budget starts now"),
    );

    let distinct: Vec<&Location> = {
        let mut v: Vec<&Location> = Vec::new();
        for l in &locs {
            if !v.iter().any(|x| x.target == l.target) {
                v.push(l);
            }
        }
        v
    };

    for (i, (name, share)) in STAGES.iter().enumerate() {
        let slot = budget.allot(*share);
        if opts.stop.load(Ordering::Relaxed) {
            c.interrupted = true;
            break;
        }
        progress.line(
            &budget,
            &format!(
                "stage {}/{} {name}: started ({:.1} s)",
                i + 1,
                STAGES.len(),
                slot.as_secs_f64()
            ),
        );
        let t0 = Instant::now();
        let (runs, summary) = match *name {
            "quick corners" => stage_quick(cfg, &distinct, slot, &quiet, &mut c)?,
            "sweeps" => stage_sweeps(cfg, &locs, slot, &quiet, &mut c)?,
            "profiles" => stage_profiles(cfg, &locs, slot, &quiet, &mut c)?,
            "simulator" => stage_sim(cfg, &locs, slot, &opts.stop, &mut c)?,
            _ => stage_checks(&locs, &mut c),
        };
        let elapsed = t0.elapsed().as_secs_f64();
        progress.line(
            &budget,
            &format!(
                "stage {}/{} {name}: done in {elapsed:.1} s: {summary}",
                i + 1,
                STAGES.len()
            ),
        );
        stages.push(StageRecord {
            name: name.to_string(),
            budget_s: slot.as_secs_f64(),
            elapsed_s: elapsed,
            runs,
            summary,
        });
    }
    let measure_s = budget.elapsed().as_secs_f64();

    // Clean up the test files this run created.
    for l in &locs {
        if l.device || !l.target.exists() {
            continue;
        }
        if cfg.keep_files || !l.created {
            c.left.push(format!(
                "{} ({}, kept{})",
                l.target.display(),
                crate::units::format_size(std::fs::metadata(&l.target).map_or(0, |m| m.len())),
                if l.created {
                    ": --keep-files"
                } else {
                    ": it existed before"
                }
            ));
        } else if let Err(e) = std::fs::remove_file(&l.target) {
            c.left
                .push(format!("{} (could not remove it: {e})", l.target.display()));
        }
    }

    let mut res = QualifyResult {
        overall: Verdict::Fit,
        rules: cfg.rules,
        trustworthy: true,
        verdicts: Vec::new(),
        recommendations: Vec::new(),
        time_budget_s: cfg.time.as_secs_f64(),
        setup_s,
        measure_s,
        locations: locs,
        system,
        stages,
        quick: c.quick,
        sweeps: c.sweeps,
        profiles: c.profiles,
        sim: c.sim,
        checks: Vec::new(),
        stalls: c.stalls,
        baseline: None,
        notes: c.notes,
        left_on_disk: c.left,
        interrupted: c.interrupted,
        references: Vec::new(),
        preliminary,
        minimum_budget_s: minimum.as_secs_f64(),
        test_file_size: cfg.size,
        cache_size: cfg.cache_size,
        host_memory: crate::sysmon::host::host_info().mem_total_bytes,
    };
    res.checks = findings(&c.warnings);
    attach_cpu(&mut res.checks, &c.cpu);
    let facts = facts(&res, &c.errors);
    let (verdicts, overall, trustworthy) = rules::judge(&facts);
    res.verdicts = verdicts;
    res.overall = overall;
    res.trustworthy = trustworthy;
    res.recommendations = rules::recommendations(&facts);
    res.references = references::collect(&res);
    if preliminary && !res.recommendations.is_empty() {
        let arg = crate::units::format_duration_arg;
        res.recommendations.insert(
            0,
            format!(
                "qualify again with --time {} or more before acting on the recommendations below: they come from a PRELIMINARY run of {}",
                arg(minimum),
                arg(cfg.time)
            ),
        );
    }
    if res.interrupted {
        res.notes
            .push("interrupted: the verdicts judge only what was measured before Ctrl-C".into());
    }
    Ok(res)
}

fn stage_quick(
    cfg: &QualifyConfig,
    distinct: &[&Location],
    slot: Duration,
    opts: &RunOptions,
    c: &mut Collected,
) -> anyhow::Result<(usize, String)> {
    let n = crate::quick::SUITE.len() * distinct.len();
    let duration = per_run(slot, n);
    let mut runs = 0;
    for l in distinct {
        let q = crate::quick::run(
            &crate::quick::QuickConfig {
                path: l.target.clone(),
                size: cfg.size,
                duration,
                engine: cfg.engine,
                cache: QUICK_CACHE,
                allow_destroy: cfg.allow_destroy,
            },
            opts,
        )?;
        for t in &q.tests {
            let name = format!("quick {}", t.name);
            c.run(l.role, &name, &t.result);
            c.quick.push(Measure::of(&t.name, l.role, &t.result));
            runs += 1;
        }
        for note in q.notes.iter().filter(|n| n.contains("not supported")) {
            c.notes.push(note.clone());
        }
    }
    Ok((
        runs,
        format!(
            "{runs} corner tests of {} on {} location(s)",
            crate::units::format_duration_arg(duration),
            distinct.len()
        ),
    ))
}

fn stage_sweeps(
    cfg: &QualifyConfig,
    locs: &[Location],
    slot: Duration,
    opts: &RunOptions,
    c: &mut Collected,
) -> anyhow::Result<(usize, String)> {
    let mut plans = Vec::new();
    let cores = crate::sysmon::host::host_info().cpus;
    for l in locs {
        let (rw, bs, qd, threads) = sweep_shape(l.role);
        for (axis, fixed_qd) in [(qd, 1), (threads, 4)] {
            let mut axis = crate::sweep::parse_axis(axis).map_err(anyhow::Error::msg)?;
            if axis.param == crate::sweep::Param::Threads {
                c.notes.extend(fit_threads_axis(&mut axis, cores, l.role));
            }
            plans.push((l, axis, rw, bs, fixed_qd));
        }
    }
    let points: usize = plans.iter().map(|p| p.1.values.len()).sum();
    let repeat = sweep_repeats(slot, points);
    let duration = per_run(slot, points * repeat);
    let mut runs = 0;
    for (l, axis, rw, bs, fixed_qd) in plans {
        if opts.stop.load(Ordering::Relaxed) {
            c.interrupted = true;
            break;
        }
        let param = axis.param.name().to_string();
        let mut base = base_spec(cfg, duration);
        base.targets = vec![crate::workload::TargetSpec::new(l.target.clone(), None)];
        base.rw = rw;
        base.write_pct = if rw.is_mixed() {
            50
        } else {
            rw.default_write_pct()
        };
        base.bs = bs;
        base.qd = fixed_qd;
        base.seq_layout = crate::workload::SeqLayout::Split;
        let plan = crate::sweep::SweepPlan {
            base,
            axes: vec![axis],
            explicit: Vec::new(),
            combine: crate::sweep::Combine::Grid,
            repeat,
            max_latency_us: Some(rules::DATA_WARN_MS * 1000.0),
            use_p99: false,
            knee_threshold: crate::sweep::analysis::DEFAULT_KNEE_ELASTICITY,
            study: None,
            max_repeats: MAX_DECIDING_REPEATS,
        };
        let role = l.role;
        let mut seen = Vec::new();
        let res = crate::sweep::run(&plan, opts, |_, _, r| {
            c.stall(role, &format!("sweep {}", r.config.describe()), r);
            seen.push((
                r.warnings
                    .iter()
                    .map(|w| (w.code.clone(), w.message.clone()))
                    .collect::<Vec<_>>(),
                r.errors.count,
                r.interrupted,
                r.cpu.clone(),
            ));
        })?;
        for (ws, errs, intr, cpu) in seen {
            for (code, msg) in ws {
                c.warnings.push((role, code, msg));
            }
            c.cpu_of(role, &cpu);
            c.errors.push((role, errs));
            c.interrupted |= intr;
            runs += 1;
        }
        c.sweeps.push(RoleSweep {
            role,
            workload: res.base.describe(),
            param,
            result: res,
        });
    }
    Ok((
        runs,
        format!(
            "{} sweeps, {points} points x {repeat} repetitions of {}",
            c.sweeps.len(),
            crate::units::format_duration_arg(duration)
        ),
    ))
}

fn stage_profiles(
    cfg: &QualifyConfig,
    locs: &[Location],
    slot: Duration,
    opts: &RunOptions,
    c: &mut Collected,
) -> anyhow::Result<(usize, String)> {
    let list = profile_list(locs);
    let mut loaded = Vec::new();
    for (name, roles) in &list {
        let p = crate::profile::Profile::load(name)?;
        loaded.push((p, roles.clone()));
    }
    let phases: usize = loaded.iter().map(|(p, _)| p.phases().len()).sum();
    let duration = per_run(slot, phases);
    let mut runs = 0;
    for (p, roles) in loaded {
        if opts.stop.load(Ordering::Relaxed) {
            c.interrupted = true;
            break;
        }
        let name = p.name.clone();
        let paths: Vec<PathBuf> = roles
            .iter()
            .map(|r| {
                locs.iter()
                    .find(|l| l.role == *r)
                    .map(|l| l.target.clone())
                    .expect("profile_list only names present roles")
            })
            .collect();
        let plan = crate::profile::plan(
            p,
            &crate::profile::RunOverrides {
                paths,
                base: base_spec(cfg, duration),
                ..Default::default()
            },
        )?;
        let r = crate::profile::run(&plan, opts)?;
        for o in &r.results {
            let role = locs
                .iter()
                .find(|l| Some(&l.target) == o.result.config.targets.first().map(|t| &t.path))
                .map_or(o.role, |l| l.role);
            let what = format!("{name} {}", o.name);
            c.run(role, &what, &o.result);
            c.profiles.push(ProfileMeasure {
                profile: name.clone(),
                measure: Measure::of(&what, role, &o.result),
                tables: crate::verdict::text_lines(&o.verdicts),
                deep_queue: is_deep_queue(&name, &o.name),
            });
            runs += 1;
        }
    }
    Ok((
        runs,
        format!(
            "{} profiles, {phases} phases of {}",
            list.len(),
            crate::units::format_duration_arg(duration)
        ),
    ))
}

fn stage_sim(
    cfg: &QualifyConfig,
    locs: &[Location],
    slot: Duration,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    c: &mut Collected,
) -> anyhow::Result<(usize, String)> {
    let loc = |r: Role| {
        locs.iter()
            .find(|l| l.role == r)
            .expect("data and log are bound")
    };
    let (data, log) = (loc(Role::Data), loc(Role::Log));
    // The fixed part of a cycle (initial update, checkpoint, full audit) is
    // about three passes over the data file in pages: sized at the speed of
    // the random 4 KiB writes measured here, so it takes a fifth of the slot.
    let speed = c
        .quick
        .iter()
        .filter(|m| m.role == Role::Data && m.name == "rand write 4K QD32")
        .map(|m| m.mib_per_sec)
        .fold(f64::INFINITY, f64::min);
    let seq = if speed.is_finite() && speed > 0.0 {
        speed
    } else {
        50.0
    };
    let mut data_mb = ((slot.as_secs_f64() * 0.2 * seq / 3.0) as u64).clamp(8, 1024);
    let log_mb = (data_mb / 4).clamp(4, 50);
    let file = |l: &Location, name: &str| {
        if l.device {
            l.target.clone()
        } else {
            l.given.join(name)
        }
    };
    let mut files = crate::sim::config::default_files(Path::new(""), Some(data_mb));
    files[0].name = file(data, "iosim-qualify-sim.mdx");
    files[1].name = file(log, "iosim-qualify-sim.ldx");
    files[1].initial_mb = log_mb;
    files[1].max_mb = log_mb;
    for (f, l) in files.iter_mut().zip([data, log]) {
        if l.device {
            // A device has a fixed size: no growth, no shrink.
            let dev = std::fs::File::open(&l.target)
                .and_then(|f| crate::target::device_size(&f))
                .unwrap_or(0)
                >> 20;
            f.initial_mb = f.initial_mb.min(dev.max(1));
            f.max_mb = f.initial_mb;
            f.increment_mb = 0;
            f.shrinkable = false;
        }
    }
    data_mb = files[0].initial_mb;
    let err_dir = if data.device {
        std::env::temp_dir()
    } else {
        data.given.clone()
    };
    let error_file = err_dir.join(format!("iosim-qualify-sim-{}.jsonl", std::process::id()));
    let fixed = 3.0 * (data_mb + log_mb) as f64 / seq;
    let timed = Duration::from_secs_f64((slot.as_secs_f64() * 0.85 - fixed).max(1.0));
    let mut sc = crate::sim::config::SimConfig {
        files,
        error_file: error_file.clone(),
        test_cycles: 1,
        test_cycle_duration: timed,
        delete_files_at_shutdown: true,
        engine: match cfg.engine {
            EngineKind::Sync => EngineKind::Sync,
            _ => EngineKind::Uring,
        },
        ..crate::sim::config::SimConfig::default()
    };
    sc.max_memory_mb = sc.max_memory_mb.min(1024);
    sc.finalize()?;
    let r = crate::sim::run(
        sc,
        &crate::sim::RunOpts {
            stop: stop.clone(),
            allow_destroy: cfg.allow_destroy,
            faults: Vec::new(),
            quiet: true,
            long_io: Duration::from_secs(15),
            max_dumps: crate::sim::DEFAULT_MAX_DUMPS,
        },
    )?;
    let role_of = |path: &str| {
        if Path::new(path) == file(log, "iosim-qualify-sim.ldx") {
            Role::Log
        } else {
            Role::Data
        }
    };
    let mut per_file_errors: Vec<(String, u64)> = Vec::new();
    for e in &r.errors.first {
        match per_file_errors.iter_mut().find(|x| x.0 == e.file) {
            Some(x) => x.1 += 1,
            None => per_file_errors.push((e.file.clone(), 1)),
        }
    }
    let files: Vec<SimFileSummary> = r
        .files
        .iter()
        .map(|f| SimFileSummary {
            path: f.path.clone(),
            kind: f.kind.clone(),
            role: role_of(&f.path),
            iops: f.stats.total.iops,
            read_mean_us: f.stats.read.latency_us.mean,
            write_mean_us: f.stats.write.latency_us.mean,
            errors: per_file_errors
                .iter()
                .find(|x| x.0 == f.path)
                .map_or(0, |x| x.1),
            max_us: f.stats.total.latency_us.max,
            ios_over_1s: f.slow_ios.over_1s,
            ios_over_15s: f.slow_ios.over_15s,
        })
        .collect();
    for f in r.files.iter().filter(|f| Path::new(&f.path).is_file()) {
        // DeleteFilesAtShutdown failed (the simulator warned why).
        let why = r
            .warnings
            .iter()
            .find(|w| w.contains(&f.path))
            .map_or_else(|| "not deleted".to_string(), |w| w.clone());
        c.left
            .push(format!("{} (the simulator's file: {why})", f.path));
    }
    let error_log = if r.errors.count > 0 {
        c.left.push(format!(
            "{} (the simulator's error log)",
            error_file.display()
        ));
        Some(error_file.display().to_string())
    } else {
        let _ = std::fs::remove_file(&error_file);
        None
    };
    c.interrupted |= r.interrupted;
    let summary = format!(
        "{} cycle(s), {} pages and {} log blocks verified, {} errors",
        r.cycles, r.pages_verified, r.log_blocks_verified, r.errors.count
    );
    c.sim = Some(SimSummary {
        duration_s: r.duration_s,
        cycles: r.cycles,
        pages_verified: r.pages_verified,
        log_blocks_verified: r.log_blocks_verified,
        errors: r.errors.count,
        errors_by_class: r
            .errors
            .by_class
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| (k.clone(), *n))
            .collect(),
        files,
        error_log,
        interrupted: r.interrupted,
        long_io_warnings: r.long_io_warnings,
    });
    Ok((1, summary))
}

fn stage_checks(locs: &[Location], c: &mut Collected) -> (usize, String) {
    // The runner checked every run against the device counters, CPU use and
    // the file's content; this adds the content of each test target now.
    for l in locs {
        if l.device {
            continue;
        }
        if crate::sysmon::check::file_is_sparse(&l.target).unwrap_or(false) {
            c.warnings.push((
                l.role,
                WarningCode::SparseTestFile,
                format!(
                    "{} has holes: reads of holes never reach the device",
                    l.target.display()
                ),
            ));
        }
        if crate::sysmon::check::looks_zero_filled(&l.target, 16).unwrap_or(false) {
            c.warnings.push((
                l.role,
                WarningCode::ZeroFilledTestFile,
                format!("{} reads back as zeros: storage that compresses or deduplicates serves it without real I/O", l.target.display()),
            ));
        }
    }
    let f = findings(&c.warnings);
    let bad = f.iter().filter(|x| x.untrusted).count();
    (
        0,
        format!(
            "{} finding(s) over {} run warnings; {bad} make the numbers untrustworthy",
            f.len(),
            c.warnings.len()
        ),
    )
}

/// Folds the runs' warnings into one finding per (role, code).
pub fn findings(ws: &[(Role, WarningCode, String)]) -> Vec<CheckFinding> {
    let mut out: Vec<CheckFinding> = Vec::new();
    for (role, code, msg) in ws {
        match out.iter_mut().find(|f| f.role == *role && &f.code == code) {
            Some(f) => f.runs += 1,
            None => out.push(CheckFinding {
                code: code.clone(),
                role: *role,
                message: msg.clone(),
                runs: 1,
                untrusted: UNTRUSTED_CODES.contains(code),
                cpu: None,
            }),
        }
    }
    out
}

/// Gives each CPU finding who used the CPU in the longest run of its role
/// that showed it (the shares of a short run are coarse: the kernel counts
/// CPU time in 10 ms ticks), and that run's message, so the two agree.
pub fn attach_cpu(checks: &mut [CheckFinding], cpu: &[(Role, CpuCause, CpuAttribution)]) {
    for f in checks.iter_mut() {
        let Some((_, cause, a)) = cpu
            .iter()
            .filter(|(role, c, _)| *role == f.role && c.code() == f.code)
            .max_by(|x, y| x.2.window_s.total_cmp(&y.2.window_s))
        else {
            continue;
        };
        f.message = crate::sysmon::check::cpu_warning(*cause, a).message;
        f.cpu = Some(a.clone());
    }
}

fn knee_fact(s: &RoleSweep) -> Option<KneeFact> {
    let pts = &s.result.points;
    let max_iops = pts.iter().map(|p| p.iops.mean).fold(0.0, f64::max);
    let k = s.result.knee.as_ref()?;
    let p = pts.get(k.index)?;
    Some(KneeFact {
        param: s.param.clone(),
        at: p
            .params
            .get(&s.param)
            .and_then(|v| v.parse().ok())
            .unwrap_or(k.load),
        iops: p.iops.mean,
        mean_us: p.lat_mean_us.mean,
        max_iops,
        growth_after: k.latency_growth_after,
        before_last: k.index + 1 < pts.len(),
    })
}

/// The facts the rules judge, from the measurements.
pub fn facts(r: &QualifyResult, errors: &[(Role, u64)]) -> Facts {
    let mut roles = Vec::new();
    for l in &r.locations {
        let role = l.role;
        let mut latency = Vec::new();
        let mut throughput = Vec::new();
        let mut tails = Vec::new();
        for p in r.profiles.iter().filter(|p| p.measure.role == role) {
            let m = &p.measure;
            if p.deep_queue {
                if m.bs < 512 << 10 {
                    // Small blocks are no match for the 1 MiB corner; the knee judges them.
                    continue;
                }
                let reference = if m.write_mean_us.is_some() {
                    "seq write 1M QD8"
                } else {
                    "seq read 1M QD8"
                };
                if let Some(q) = r
                    .quick
                    .iter()
                    .find(|q| q.role == role && q.name == reference)
                {
                    throughput.push(ThroughputFact {
                        what: m.name.clone(),
                        mib_s: m.mib_per_sec,
                        reference: reference.into(),
                        reference_mib_s: q.mib_per_sec,
                    });
                }
                continue;
            }
            if m.max_us > 0.0 && (role != Role::Log || m.read_mean_us.is_none()) {
                tails.push(TailFact {
                    what: m.name.clone(),
                    ios: m.ios(),
                    p99_us: m.p99_us,
                    p999_us: m.p999_us,
                    max_us: m.max_us,
                });
            }
            for (d, v) in [
                (Direction::Read, m.read_mean_us),
                (Direction::Write, m.write_mean_us),
            ] {
                if let Some(v) = v {
                    latency.push(LatencyFact {
                        what: m.name.clone(),
                        direction: d,
                        mean_us: v,
                    });
                }
            }
        }
        let knee = r
            .sweeps
            .iter()
            .find(|s| s.role == role && s.param == "qd")
            .and_then(knee_fact);
        let untrusted = r
            .checks
            .iter()
            .filter(|f| f.role == role && f.untrusted)
            .map(|f| (f.code.clone(), f.message.clone()))
            .collect();
        let sim_errors = r.sim.as_ref().map_or(0, |s| {
            s.files
                .iter()
                .filter(|f| f.role == role)
                .map(|f| f.errors)
                .sum::<u64>()
                + if role == Role::Data {
                    // Errors not tied to a file listed (should not happen) count against data.
                    s.errors
                        .saturating_sub(s.files.iter().map(|f| f.errors).sum())
                } else {
                    0
                }
        });
        let slow = r
            .stalls
            .iter()
            .find(|s| s.role == role)
            .map(|s| SlowFact {
                over_1s: s.ios_over_1s,
                over_15s: s.ios_over_15s,
                max_us: s.max_us,
                max_in: s.max_in.clone(),
            })
            .unwrap_or_default();
        roles.push(RoleFacts {
            role,
            latency,
            knee,
            throughput,
            io_errors: errors.iter().filter(|e| e.0 == role).map(|e| e.1).sum(),
            untrusted,
            sim_errors,
            tails,
            slow,
            sim_slow: sim_slow(r, role),
            cache: (l.size > 0).then_some(rules::CacheFact {
                size: l.size,
                device: l.device,
                given: r.cache_size,
                host_memory: r.host_memory,
            }),
        });
    }
    let find = |name: &str| {
        r.profiles
            .iter()
            .find(|p| p.measure.name == name)
            .and_then(|p| p.measure.write_mean_us)
    };
    let data = r.locations.iter().find(|l| l.role == Role::Data);
    let log = r.locations.iter().find(|l| l.role == Role::Log);
    Facts {
        roles,
        sim_completed: r.sim.as_ref().map(|s| s.cycles > 0),
        sim_errors_by_class: r
            .sim
            .as_ref()
            .map(|s| s.errors_by_class.clone())
            .unwrap_or_default(),
        log_shares_data: matches!((data, log), (Some(d), Some(l)) if shares_device(d, l)),
        commit_alone_us: find("log-writer commit-4k"),
        commit_with_data_us: find("oltp-with-log log-4k"),
        rules: r.rules,
    }
}

/// What the simulator saw of slow I/O on `role`'s file. Its long-I/O
/// monitor does not know which file an outstanding I/O was on: when no
/// file's completed I/Os explain its warnings (none over 15 s), they count
/// against every role the simulator ran on.
fn sim_slow(r: &QualifyResult, role: Role) -> SimSlowFact {
    let Some(s) = &r.sim else {
        return SimSlowFact::default();
    };
    let mut f = SimSlowFact::default();
    for x in s.files.iter().filter(|x| x.role == role) {
        f.over_1s += x.ios_over_1s;
        f.over_15s += x.ios_over_15s;
        f.max_us = f.max_us.max(x.max_us);
    }
    let explained = s.files.iter().any(|x| x.ios_over_15s > 0);
    if !explained && s.files.iter().any(|x| x.role == role) {
        f.long_io_warnings = s.long_io_warnings;
    }
    f
}

/// The repetitions' mean ± 95% interval, for reports.
pub fn show_stat(s: &Stat) -> String {
    s.show()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_splits_in_fixed_shares_of_what_is_left() {
        let mut b = Budget::new(Duration::from_secs(100));
        let q = b.allot_from(STAGES[0].1, Duration::from_secs(100));
        assert!((q.as_secs_f64() - 10.0).abs() < 1e-6, "{q:?}");
        // The first stage took its 10 s: the next gets its 35 of the 90 left.
        let s = b.allot_from(STAGES[1].1, Duration::from_secs(90));
        assert!((s.as_secs_f64() - 35.0).abs() < 1e-6, "{s:?}");
        // An overrun is paid for by the stages after it, in proportion.
        let p = b.allot_from(STAGES[2].1, Duration::from_secs(11));
        assert!((p.as_secs_f64() - 6.0).abs() < 1e-6, "{p:?}");
        let sum: f64 = STAGES.iter().map(|s| s.1).sum();
        assert!((sum - 1.0).abs() < 1e-9);
    }

    #[test]
    fn per_run_keeps_room_for_set_up_and_a_floor() {
        assert_eq!(per_run(Duration::ZERO, 10), MIN_RUN);
        let d = per_run(Duration::from_secs(100), 10);
        assert!((d.as_secs_f64() - 8.97).abs() < 1e-6, "{d:?}");
    }

    #[test]
    fn locations_bind_roles_and_refuse_what_they_cannot_use() {
        let a = tempfile::tempdir().unwrap();
        let cfg = QualifyConfig {
            roles: vec![RoleArg {
                role: Role::Data,
                path: a.path().into(),
            }],
            time: Duration::from_secs(60),
            size: 1 << 20,
            engine: EngineKind::Auto,
            allow_destroy: false,
            keep_files: false,
            progress: false,
            rules: RuleSet::Classic,
            cache_size: None,
        };
        let l = locations(&cfg).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[1].role, Role::Log);
        assert!(l[1].derived);
        assert!(shares_device(&l[0], &l[1]));
        assert!(l[0].target.ends_with("iosim-qualify-data.dat"));
        let mut bad = cfg.clone();
        bad.roles[0].path = a.path().join("nope");
        assert!(locations(&bad).is_err());
        let f = a.path().join("file");
        std::fs::write(&f, b"x").unwrap();
        bad.roles[0].path = f;
        assert!(locations(&bad)
            .unwrap_err()
            .to_string()
            .contains("directory"));
    }

    #[test]
    fn the_budget_buys_sweep_repetitions() {
        // 20 points (data and log, queue depth and threads) as qualify sweeps them.
        let sweeps = |t: u64| sweep_repeats(Duration::from_secs(t).mul_f64(0.35), 20);
        assert_eq!(sweeps(10), 2);
        assert_eq!(sweeps(600), 3);
        assert!(sweeps(30 * 60) > 3, "{}", sweeps(30 * 60));
        assert_eq!(sweeps(24 * 3600), MAX_DECIDING_REPEATS);
        // The budget named for n repetitions gives n, and a minute less does not.
        for n in 4..=MAX_DECIDING_REPEATS {
            let t = budget_for_repeats(n, 20).unwrap();
            assert!(sweeps(t.as_secs()) >= n);
            assert!(sweeps(t.as_secs() - 60) < n, "{n}: {t:?}");
        }
    }

    #[test]
    fn the_minimum_budget_gives_each_run_a_second_and_each_point_two_repetitions() {
        let d = Duration::from_millis(1234);
        let back = per_run(slot_for(d, 40), 40);
        assert!(
            (back.as_secs_f64() - d.as_secs_f64()).abs() < 1e-9,
            "{back:?}"
        );
        // Data and log in one directory: 2 targets x 5 corners, 20 sweep
        // points x 2, the profiles' phases. The sweeps decide: 40 runs of
        // 1 s in 35% of the budget.
        let a = tempfile::tempdir().unwrap();
        let cfg = QualifyConfig {
            roles: vec![RoleArg {
                role: Role::Data,
                path: a.path().into(),
            }],
            time: Duration::from_secs(60),
            size: 1 << 20,
            engine: EngineKind::Auto,
            allow_destroy: false,
            keep_files: false,
            progress: false,
            rules: RuleSet::Classic,
            cache_size: None,
        };
        let planned = planned_runs(&locations(&cfg).unwrap()).unwrap();
        assert_eq!(planned[0], ("quick corners", 0.10, 10));
        assert_eq!(planned[1], ("sweeps", 0.35, 40));
        let min = minimum_budget(&planned);
        assert_eq!(min, Duration::from_secs(131), "{planned:?}");
        // At the minimum every stage's runs measure a second or more; a
        // second less and the sweeps' do not.
        for (_, share, runs) in &planned {
            assert!(per_run(min.mul_f64(*share), *runs) >= MEANINGFUL_RUN);
        }
        let less = min - Duration::from_secs(1);
        assert!(per_run(less.mul_f64(0.35), 40) < MEANINGFUL_RUN);
        // More roles, more points: a larger minimum.
        let t = tempfile::tempdir().unwrap();
        let mut more = cfg.clone();
        more.roles.push(RoleArg {
            role: Role::Tempdb,
            path: t.path().into(),
        });
        assert!(minimum_budget(&planned_runs(&locations(&more).unwrap()).unwrap()) > min);
        let note = preliminary_note(Duration::from_secs(10), min);
        assert!(
            note.starts_with("PRELIMINARY: a budget of 10s is under the 131s"),
            "{note}"
        );
        assert!(note.contains("--time 131s"), "{note}");
    }

    #[test]
    fn deep_queue_workloads_are_named() {
        assert!(is_deep_queue("read-ahead", "scan-512k"));
        assert!(is_deep_queue("backup", "write-backup-1m"));
        assert!(!is_deep_queue("oltp-with-log", "data-8k"));
        assert!(!is_deep_queue("bulk-insert", "log-60k"));
    }

    #[test]
    fn threads_sweeps_fit_the_cores() {
        let axis = |role| crate::sweep::parse_axis(sweep_shape(role).3).unwrap();
        let nums = |a: &crate::sweep::Axis| {
            a.values
                .iter()
                .map(|v| match v {
                    crate::sweep::Value::Num(n) => *n,
                    _ => 0,
                })
                .collect::<Vec<_>>()
        };
        // Two cores: data's 1..8 stops at 4, and says so.
        let mut a = axis(Role::Data);
        let note = fit_threads_axis(&mut a, 2, Role::Data).unwrap();
        assert_eq!(nums(&a), [1, 2, 4]);
        assert_eq!(
            note,
            "the data threads sweep stops at 4 threads, not 8: 2 per core on this 2-core machine (more would wait for each other's CPU and measure the machine, not the storage)"
        );
        // The log's 1..4 fits two cores: no note.
        let mut a = axis(Role::Log);
        assert_eq!(fit_threads_axis(&mut a, 2, Role::Log), None);
        assert_eq!(nums(&a), [1, 2, 4]);
        // Four cores and more: the whole axis.
        let mut a = axis(Role::Data);
        assert_eq!(fit_threads_axis(&mut a, 4, Role::Data), None);
        assert_eq!(nums(&a), [1, 2, 4, 8]);
        // One core: 1 and 2.
        let mut a = axis(Role::Tempdb);
        assert!(fit_threads_axis(&mut a, 1, Role::Tempdb).is_some());
        assert_eq!(nums(&a), [1, 2]);
    }

    #[test]
    fn cpu_findings_are_untrusted_by_cause_and_carry_who_used_it() {
        let ws = vec![
            (Role::Data, WarningCode::CpuTakenByOthers, "x".to_string()),
            (Role::Data, WarningCode::CpuTakenByOthers, "y".to_string()),
            (Role::Log, WarningCode::CpuBusyIoPath, "z".to_string()),
            (Role::Log, WarningCode::CpuBoundIosim, "w".to_string()),
        ];
        let mut f = findings(&ws);
        assert_eq!(f.len(), 3);
        assert_eq!((f[0].runs, f[0].untrusted), (2, true));
        assert!(!f[1].untrusted, "the I/O path is the storage's cost");
        assert!(f[2].untrusted);
        let a = |others: f64, window_s: f64| CpuAttribution {
            others_pct: others,
            cores: 2,
            window_s,
            ..Default::default()
        };
        attach_cpu(
            &mut f,
            &[
                (Role::Data, CpuCause::Others, a(30.0, 1.0)),
                (Role::Data, CpuCause::Others, a(90.0, 0.1)),
                (Role::Log, CpuCause::Others, a(90.0, 2.0)),
            ],
        );
        assert_eq!(
            f[0].cpu.as_ref().unwrap().others_pct,
            30.0,
            "the longest run"
        );
        assert!(
            f[0].message
                .starts_with("other processes took CPU iosim needed"),
            "its message: {}",
            f[0].message
        );
        assert_eq!(f[1].message, "z", "no attribution: the run's message stays");
        assert!(f[1].cpu.is_none() && f[2].cpu.is_none());
    }

    fn measure(name: &str, role: Role) -> Measure {
        Measure {
            name: name.into(),
            role,
            path: "/x".into(),
            workload: "w".into(),
            bs: 8192,
            duration_s: 10.0,
            iops: 1000.0,
            mib_per_sec: 7.8,
            read_mean_us: Some(1500.0),
            write_mean_us: None,
            p99_us: 4000.0,
            p999_us: 60_000.0,
            max_us: 482_000.0,
            ios_over_1s: 0,
            ios_over_15s: 0,
            errors: 0,
        }
    }

    fn result() -> QualifyResult {
        let loc = |role: Role| Location {
            role,
            given: "/d".into(),
            target: format!("/d/iosim-qualify-{}.dat", role.name()).into(),
            device: false,
            block_device: None,
            created: true,
            derived: role == Role::Log,
            size: 64 << 20,
        };
        let sim_file = |kind: &str, role: Role, over_15s: u64| SimFileSummary {
            path: format!("/d/sim.{kind}"),
            kind: kind.into(),
            role,
            iops: 100.0,
            read_mean_us: 500.0,
            write_mean_us: 500.0,
            errors: 0,
            max_us: if over_15s > 0 { 16e6 } else { 2e3 },
            ios_over_1s: over_15s,
            ios_over_15s: over_15s,
        };
        QualifyResult {
            overall: Verdict::Fit,
            rules: RuleSet::Flash,
            trustworthy: true,
            verdicts: vec![],
            recommendations: vec![],
            time_budget_s: 60.0,
            setup_s: 1.0,
            measure_s: 60.0,
            locations: vec![loc(Role::Data), loc(Role::Log)],
            stages: vec![],
            quick: vec![],
            sweeps: vec![],
            profiles: vec![ProfileMeasure {
                profile: "oltp-with-log".into(),
                measure: measure("oltp-with-log data-8k", Role::Data),
                tables: vec![],
                deep_queue: false,
            }],
            sim: Some(SimSummary {
                duration_s: 10.0,
                cycles: 1,
                pages_verified: 10,
                log_blocks_verified: 10,
                errors: 0,
                errors_by_class: vec![],
                files: vec![
                    sim_file("mdx", Role::Data, 0),
                    sim_file("ldx", Role::Log, 0),
                ],
                error_log: None,
                interrupted: false,
                long_io_warnings: 0,
            }),
            checks: vec![],
            stalls: vec![RoleStalls {
                role: Role::Data,
                ios: 50_000,
                ios_over_1s: 2,
                ios_over_15s: 0,
                max_us: 1_250_000.0,
                max_in: "quick rand read 4K QD32".into(),
            }],
            baseline: None,
            notes: vec![],
            left_on_disk: vec![],
            interrupted: false,
            system: Default::default(),
            references: vec![],
            preliminary: false,
            minimum_budget_s: 0.0,
            test_file_size: 64 << 20,
            cache_size: Some(0),
            host_memory: 0,
        }
    }

    #[test]
    fn facts_carry_tails_stalls_and_the_simulators_long_ios() {
        let mut r = result();
        let f = facts(&r, &[]);
        assert_eq!(f.rules, RuleSet::Flash);
        let d = &f.roles[0];
        assert_eq!(d.role, Role::Data);
        assert_eq!(d.tails.len(), 1);
        assert_eq!(d.tails[0].ios, 10_000);
        assert_eq!(d.tails[0].max_us, 482_000.0);
        assert_eq!(d.slow.over_1s, 2);
        assert_eq!(d.slow.max_in, "quick rand read 4K QD32");
        assert_eq!(f.roles[1].slow, SlowFact::default());
        let (v, overall, _) = rules::judge(&f);
        let data: Vec<&str> = v[0].reasons.iter().map(|x| x.rule.as_str()).collect();
        assert_eq!(data, ["data-latency", "tail-p99.9", "slow-io"]);
        assert_eq!(overall, Verdict::FitWithWarnings);
        // The simulator's monitor warned, and the data file had the stall: data only.
        let sim = r.sim.as_mut().unwrap();
        sim.long_io_warnings = 3;
        sim.files[0] = SimFileSummary {
            ios_over_1s: 1,
            ios_over_15s: 1,
            max_us: 16e6,
            ..sim.files[0].clone()
        };
        let f = facts(&r, &[]);
        assert_eq!(f.roles[0].sim_slow.over_15s, 1);
        assert_eq!(
            f.roles[0].sim_slow.long_io_warnings, 0,
            "explained by the file"
        );
        assert_eq!(
            f.roles[1].sim_slow.over_1s + f.roles[1].sim_slow.long_io_warnings,
            0
        );
        let (v, overall, _) = rules::judge(&f);
        assert_eq!(overall, Verdict::NotFit);
        assert!(v[0]
            .reasons
            .iter()
            .any(|x| x.rule == rules::RuleId::SimLongIo));
        assert_eq!(v[1].verdict, Verdict::Fit);
        // Warnings no file explains count against both roles.
        r.sim.as_mut().unwrap().files[0].ios_over_15s = 0;
        let f = facts(&r, &[]);
        assert_eq!(f.roles[0].sim_slow.long_io_warnings, 3);
        assert_eq!(f.roles[1].sim_slow.long_io_warnings, 3);
    }

    #[test]
    fn documents_stored_before_the_tails_still_load() {
        let mut v = serde_json::to_value(result()).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("rules");
        o.remove("stalls");
        for k in ["p999_us", "max_us", "ios_over_1s", "ios_over_15s"] {
            o["profiles"][0]["measure"]
                .as_object_mut()
                .unwrap()
                .remove(k);
        }
        o["sim"].as_object_mut().unwrap().remove("long_io_warnings");
        for k in ["max_us", "ios_over_1s", "ios_over_15s"] {
            o["sim"]["files"][0].as_object_mut().unwrap().remove(k);
        }
        let old: QualifyResult = serde_json::from_value(v).unwrap();
        assert_eq!(old.rules, RuleSet::Classic);
        assert!(old.stalls.is_empty());
        assert_eq!(old.profiles[0].measure.max_us, 0.0);
        // Without the figures no tail rule fires.
        let f = facts(&old, &[]);
        assert!(f.roles[0].tails.is_empty());
    }
}
