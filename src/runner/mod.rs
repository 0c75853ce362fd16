//! Runs a workload: prepares the targets, starts one worker thread per
//! (target, thread), and merges what they measured.
//!
//! - [`plan`]: targets, engine choice, one plan per worker, the threads;
//! - [`window`]: the one measured window all workers share, and the
//!   [`RunSync`] hook that lets other participants (MPI ranks) share it too;
//! - [`worker`]: one worker's set-up and hot loop;
//! - [`pacing`]: rate caps and bursts with think time;
//! - [`series`]: interval messages merged into the time series;
//! - [`progress`]: the live progress line;
//! - [`assemble`]: the workers' measurements merged into a [`RunResult`];
//! - [`result`]: the result types (the JSON schema).
//!
//! Each worker owns its engine, its offset generator and its statistics.
//! Every worker sets up, then waits at a gate; they start together (warm-up
//! included) and measure one common window `[start, end)` of absolute clock
//! times, so the aggregate rate is the I/O of all workers over that window
//! however the scheduler treats them. At every interval boundary (1 s by
//! default, aligned for all workers) a worker hands a copy of its interval
//! statistics to the main thread over a channel, adds them to its whole-run
//! statistics and starts the next interval. The main thread opens and closes
//! the window, merges intervals across threads exactly, drives the live
//! progress line, and builds the time series.

mod assemble;
mod pacing;
mod plan;
mod progress;
mod result;
mod series;
mod verify;
mod window;
mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::now_ns;
use crate::sysmon::check;
use crate::sysmon::mounts::{self, Resolution};
use crate::sysmon::sampler::{Monitor, MonitorReport};
use crate::target::{PreparedTarget, TargetKind};
use crate::workload::{EngineKind, WorkloadSpec};

pub use window::{RunPhase, RunSync};

pub use result::{
    CpuResult, ErrorSummary, HistogramSet, IoErrorRecord, PointStats, RunResult, Series,
    SeriesPoint, TargetResult, ThreadResult, SCHEMA_VERSION,
};

use assemble::{assemble, RunFacts};
use plan::Crew;
use progress::Progress;
use series::IntervalAgg;
use window::UNSET;

/// A worker stops after this many I/O errors.
pub const MAX_ERRORS_PER_THREAD: u64 = 1000;

/// How often the main thread looks at the stop flags while workers run.
const POLL: Duration = Duration::from_millis(20);

/// With a [`RunSync`] and a warm-up, the window opens this long after every
/// participant has passed [`RunPhase::WindowStart`], so every worker has
/// read its start before it arrives.
const WINDOW_LEAD_NS: u64 = 2_000_000;

/// How a run is carried out, apart from the workload itself.
#[derive(Clone)]
pub struct RunOptions {
    /// Live progress and file-creation bars on stderr.
    pub progress: bool,
    /// Set by Ctrl-C/SIGTERM: stop and report what was measured.
    pub stop: Arc<AtomicBool>,
    /// Time-series interval.
    pub interval: Duration,
    /// Other participants that share the run's phases (e.g. MPI ranks); `None` = a plain run.
    pub sync: Option<Arc<dyn RunSync>>,
    /// Keep an interval series per thread as well as per target (DiskSpd's `-D`).
    pub thread_series: bool,
    /// `--verify`: write verifiable blocks and check every read (`None`: no checks).
    pub verify: Option<crate::verify::run::VerifyOptions>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("progress", &self.progress)
            .field("stop", &self.stop)
            .field("interval", &self.interval)
            .field("sync", &self.sync.as_ref().map(|_| "RunSync"))
            .field("thread_series", &self.thread_series)
            .field("verify", &self.verify)
            .finish()
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            progress: false,
            stop: Arc::new(AtomicBool::new(false)),
            interval: Duration::from_secs(1),
            sync: None,
            thread_series: false,
            verify: None,
        }
    }
}

/// Runs `spec` and returns what it measured.
pub fn run(spec: &WorkloadSpec, opts: &RunOptions) -> anyhow::Result<RunResult> {
    spec.validate()?;
    let started_at = crate::clock::utc_now_rfc3339();
    let mut notes = Vec::new();
    let mut spec = spec.clone();
    // A --bssplit mix: buffers and checks use its largest size.
    spec.resolve_sizes();
    if spec.engine == EngineKind::Null && spec.targets.is_empty() {
        spec.targets
            .push(crate::workload::TargetSpec::new("null", Some(1 << 30)));
    }

    if let Some(v) = &opts.verify {
        verify::check_spec(&spec, v)?;
    }
    let targets = plan::prepare_targets(&spec, opts, &mut notes)?;
    let tables = verify::tables(&spec, opts, &targets)?;
    let choice = plan::choose_engine(&spec, &mut notes)?;
    // The result's config names the engine that ran (`auto` resolved).
    spec.engine = choice.kind;
    let engine = choice.kind;
    let plans = plan::plan_workers(&spec, &targets)?;
    let nworkers = plans.len();
    let scopes = targets.len() + 1 + if opts.thread_series { nworkers } else { 0 };
    let (interval, raised) =
        series::effective_interval(opts.interval, nworkers, scopes, spec.duration);
    notes.extend(raised);
    let interval_ns = u64::try_from(interval.as_nanos()).unwrap_or(u64::MAX);
    let crew = Crew::spawn(&spec, &choice, &targets, plans, opts, interval_ns, &tables)?;

    let content = content_checks(&targets);
    let resolutions = resolve_devices(&targets);
    let monitor = start_monitor(&resolutions, interval, opts.sync.as_deref());

    let agg = IntervalAgg::new(targets.len(), nworkers, interval_ns, opts.thread_series);
    let driven = drive(&crew, monitor, agg, &spec, opts);
    let window = (crew.window.start(), crew.window.end());
    let joined = crew.join();
    let (series, mon) = driven?;
    let (outs, engine_notes) = joined?;
    notes.extend(engine_notes);
    notes.sort();
    notes.dedup();
    let facts = RunFacts {
        interrupted: opts.stop.load(Ordering::Relaxed),
        spec,
        started_at,
        engine,
        notes,
        targets,
        resolutions,
        content,
        monitor: mon,
        series,
        window,
    };
    let report = verify::report(
        opts,
        &tables,
        outs.iter().filter_map(|o| o.verify.as_ref()),
        &facts.targets,
    )?;
    let mut result = assemble(facts, &outs);
    result.verify = report;
    Ok(result)
}

/// What the test files hold, checked before the run (sparse or zero-filled
/// files flatter reads): per target, (sparse, zero-filled).
fn content_checks(targets: &[PreparedTarget]) -> Vec<(bool, bool)> {
    targets
        .iter()
        .map(|t| match t.kind {
            TargetKind::File => (
                check::file_is_sparse(&t.path).unwrap_or(false),
                check::looks_zero_filled(&t.path, 16).unwrap_or(false),
            ),
            _ => (false, false),
        })
        .collect()
}

/// Which block device each target lives on (or why none).
fn resolve_devices(targets: &[PreparedTarget]) -> Vec<Resolution> {
    targets
        .iter()
        .map(|t| match t.kind {
            TargetKind::Null => Resolution::NoDevice {
                fs_type: "null".into(),
                reason: "the null engine touches no storage".into(),
            },
            _ => mounts::resolve_target(&t.path),
        })
        .collect()
}

/// A monitor of the targets' devices and the CPUs (none, or more devices,
/// when the [`RunSync`] says so).
fn start_monitor(
    resolutions: &[Resolution],
    interval: Duration,
    sync: Option<&dyn RunSync>,
) -> Monitor {
    let mut watched: Vec<String> = Vec::new();
    for d in resolutions.iter().filter_map(|r| r.device()) {
        for n in d.monitor_names() {
            if !watched.contains(&n) {
                watched.push(n);
            }
        }
    }
    let watched = match sync {
        Some(s) => match s.monitor_devices(watched) {
            Some(w) => w,
            None => return Monitor::off(),
        },
        None => watched,
    };
    Monitor::start(watched, interval.max(Duration::from_millis(10)))
}

/// On the main thread: opens the gate once every worker has set up, with
/// the [`RunSync`] hooks at each phase; then, while the workers run, merges
/// their intervals into the series, drives the progress line, resets the
/// monitor's baseline when the window opens and ends the window early on a
/// stop. Returns once every worker has finished.
fn drive(
    crew: &Crew,
    monitor: Monitor,
    mut agg: IntervalAgg,
    spec: &WorkloadSpec,
    opts: &RunOptions,
) -> anyhow::Result<(Series, MonitorReport)> {
    let w = &crew.window;
    let sync = opts.sync.as_deref();
    let warmup_ns = u64::try_from(spec.warmup.as_nanos()).unwrap_or(u64::MAX);
    let duration_ns = u64::try_from(spec.duration.as_nanos()).unwrap_or(u64::MAX);
    w.wait_arrivals();
    // A worker that could not set up has set the stop flag: the run opens an
    // empty window so that the others end at once, and fails.
    let mut failure = None;
    let set_up = !opts.stop.load(Ordering::Relaxed);
    if set_up {
        if let Some(s) = sync {
            let phases: &[RunPhase] = if warmup_ns == 0 {
                &[
                    RunPhase::Prepared,
                    RunPhase::WarmupStart,
                    RunPhase::WindowStart,
                ]
            } else {
                &[RunPhase::Prepared, RunPhase::WarmupStart]
            };
            failure = phases.iter().try_for_each(|&p| s.barrier(p)).err();
        }
    }
    let t0 = now_ns();
    if failure.is_some() || opts.stop.load(Ordering::Relaxed) {
        w.stop_at(t0);
    } else if sync.is_none() || warmup_ns == 0 {
        // Known in advance: every worker reads it before it can arrive.
        let start = t0.saturating_add(warmup_ns);
        w.set(start, start.saturating_add(duration_ns));
    }
    monitor.reset_baseline();
    w.open(t0, crew.threads());

    let progress = Progress::new(opts.progress, spec);
    let mut baseline_at_start = warmup_ns == 0;
    loop {
        let now = now_ns();
        if w.start() == UNSET && now >= t0.saturating_add(warmup_ns) {
            // A synchronised run with a warm-up: every participant opens the window together.
            match sync.map_or(Ok(()), |s| s.barrier(RunPhase::WindowStart)) {
                Ok(()) => {
                    let start = now_ns() + WINDOW_LEAD_NS;
                    w.set(start, start.saturating_add(duration_ns));
                }
                Err(e) => {
                    w.stop_at(now_ns());
                    failure = Some(e);
                }
            }
        }
        let start = w.start();
        if !baseline_at_start && now >= start {
            monitor.reset_baseline();
            baseline_at_start = true;
        }
        if start != UNSET
            && (opts.stop.load(Ordering::Relaxed) || sync.is_some_and(|s| s.stop_requested()))
        {
            w.stop_at(now);
        }
        match crew.rx.recv_timeout(POLL) {
            Ok(msg) => {
                if let Some(point) = agg.add(msg) {
                    progress.update(&point);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let mon = monitor.stop();
    progress.finish();
    if let Some(e) = failure {
        return Err(e);
    }
    if let (Some(s), true) = (sync, set_up) {
        s.barrier(RunPhase::WindowEnd)?;
    }
    Ok((agg.finish(), mon))
}
