//! Runs a workload: prepares the targets, starts one worker thread per
//! (target, thread), and merges what they measured.
//!
//! - [`plan`]: targets, engine choice, one plan per worker, the threads;
//! - [`worker`]: one worker's set-up and hot loop;
//! - [`pacing`]: rate caps and bursts with think time;
//! - [`series`]: interval messages merged into the time series;
//! - [`progress`]: the live progress line;
//! - [`assemble`]: the workers' measurements merged into a [`RunResult`];
//! - [`result`]: the result types (the JSON schema).
//!
//! Each worker owns its engine, its offset generator and its statistics. At
//! every interval boundary (1 s by default) a worker hands a copy of its
//! interval statistics to the main thread over a channel, adds them to its
//! whole-run statistics and starts the next interval. The main thread merges
//! intervals across threads exactly, drives the live progress line, and
//! builds the time series.

mod assemble;
mod pacing;
mod plan;
mod progress;
mod result;
mod series;
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

pub use result::{
    CpuResult, ErrorSummary, HistogramSet, IoErrorRecord, PointStats, RunResult, Series,
    SeriesPoint, TargetResult, ThreadResult, SCHEMA_VERSION,
};

use assemble::{assemble, RunFacts};
use plan::Crew;
use progress::Progress;
use series::IntervalAgg;

/// A worker stops after this many I/O errors.
pub const MAX_ERRORS_PER_THREAD: u64 = 1000;

/// How a run is carried out, apart from the workload itself.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Live progress and file-creation bars on stderr.
    pub progress: bool,
    /// Set by Ctrl-C/SIGTERM: stop and report what was measured.
    pub stop: Arc<AtomicBool>,
    /// Time-series interval.
    pub interval: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            progress: false,
            stop: Arc::new(AtomicBool::new(false)),
            interval: Duration::from_secs(1),
        }
    }
}

/// Runs `spec` and returns what it measured.
pub fn run(spec: &WorkloadSpec, opts: &RunOptions) -> anyhow::Result<RunResult> {
    spec.validate()?;
    let started_at = crate::clock::utc_now_rfc3339();
    let mut notes = Vec::new();
    let mut spec = spec.clone();
    if spec.engine == EngineKind::Null && spec.targets.is_empty() {
        spec.targets
            .push(crate::workload::TargetSpec::new("null", Some(1 << 30)));
    }

    let targets = plan::prepare_targets(&spec, opts, &mut notes)?;
    let engine = plan::choose_engine(&spec, &mut notes)?;
    let plans = plan::plan_workers(&spec, &targets)?;
    let nworkers = plans.len();
    let crew = Crew::spawn(&spec, engine, &targets, plans, opts)?;

    let content = content_checks(&targets);
    let resolutions = resolve_devices(&targets);
    let monitor = start_monitor(&resolutions, opts.interval);

    // Start everyone together; the monitor's baseline is the start of measuring.
    crew.barrier.wait();
    let (series, mon) = collect(&crew.rx, monitor, &spec, opts, targets.len(), nworkers);

    let (outs, engine_notes) = crew.join()?;
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
    };
    Ok(assemble(facts, &outs))
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

/// A monitor of the targets' devices and the CPUs.
fn start_monitor(resolutions: &[Resolution], interval: Duration) -> Monitor {
    let mut watched: Vec<String> = Vec::new();
    for d in resolutions.iter().filter_map(|r| r.device()) {
        for n in d.monitor_names() {
            if !watched.contains(&n) {
                watched.push(n);
            }
        }
    }
    Monitor::start(watched, interval.max(Duration::from_millis(10)))
}

/// On the main thread while the workers run: merges their intervals into
/// the series, drives the progress line, and resets the monitor's baseline
/// when warm-up ends. Returns once every worker has finished.
fn collect(
    rx: &mpsc::Receiver<series::IntervalMsg>,
    monitor: Monitor,
    spec: &WorkloadSpec,
    opts: &RunOptions,
    ntargets: usize,
    nworkers: usize,
) -> (Series, MonitorReport) {
    monitor.reset_baseline();
    let t_start = now_ns();
    let warmup_ns = spec.warmup.as_nanos() as u64;
    let progress = Progress::new(opts.progress, spec);
    let mut warm = warmup_ns == 0;
    let mut agg = IntervalAgg::new(ntargets, nworkers);
    loop {
        if !warm && now_ns() >= t_start + warmup_ns {
            monitor.reset_baseline();
            warm = true;
        }
        match rx.recv_timeout(Duration::from_millis(50)) {
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
    (agg.finish(opts.interval.as_secs_f64()), mon)
}
