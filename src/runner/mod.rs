//! Runs workloads: prepares the targets, starts one worker thread per
//! (workload, target, thread), and merges what they measured.
//!
//! - [`plan`]: each workload's targets, engine choice and worker plans, the threads;
//! - [`window`]: the one measured window all workers share, and the
//!   [`RunSync`] hook that lets other participants (MPI ranks) share it too;
//! - [`worker`]: one worker's set-up and hot loop;
//! - [`pacing`]: rate caps and bursts with think time;
//! - [`series`]: interval messages merged into the time series;
//! - [`progress`]: the live progress line;
//! - [`assemble`]: the workers' measurements merged into a [`RunResult`];
//! - [`result`]: the result types (the JSON schema).
//!
//! One run may carry several workloads at once ([`run_many`]: a profile
//! phase, a matrix point); [`run`] is `run_many` of one. Each worker owns its
//! engine, its offset generator and its statistics. Every worker of every
//! workload sets up, then waits at one gate; they start together (warm-up
//! included) and measure one common window `[start, end)` of absolute clock
//! times, so the aggregate rate is the I/O of all workers over that window
//! however the scheduler treats them. At every interval boundary (1 s by
//! default, aligned for all workers) a worker hands a copy of its interval
//! statistics to the main thread over the run's one channel, adds them to
//! its whole-run statistics and starts the next interval. The main thread
//! opens and closes the window, runs the one system monitor, merges
//! intervals across threads exactly (a series per workload), drives the
//! live progress line, and builds the results.

mod assemble;
mod groupcommit;
mod live;
mod ordered;
mod pacing;
mod plan;
mod progress;
mod ranks;
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
use crate::stats::RwStats;
use crate::sysmon::check;
use crate::sysmon::content::{self, TargetContent};
use crate::sysmon::mounts::{self, Resolution};
use crate::sysmon::sampler::{Monitor, MonitorReport};
use crate::target::{PreparedTarget, TargetKind};
use crate::workload::{CacheMode, WorkloadSpec};

pub use ranks::{HostRow, Joint, Overhead, RankRow, RanksReport, Skew};
pub use window::{RunPhase, RunSync};

pub use result::{
    CpuResult, ErrorSummary, HistogramSet, IoErrorRecord, MeasuredWindow, PointStats, RunResult,
    Series, SeriesPoint, TargetResult, ThreadResult, SCHEMA_VERSION,
};

use assemble::{assemble, Merged, RunFacts};
use plan::{Crew, Load};
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
    /// Other participants that share the run (e.g. the ranks of an MPI job,
    /// from `mpi::init`); `None` = a plain run.
    pub sync: Option<Arc<dyn RunSync>>,
    /// Keep an interval series per thread as well as per target (DiskSpd's `-D`).
    pub thread_series: bool,
    /// `--verify`: write verifiable blocks and check every read (`None`: no checks).
    pub verify: Option<crate::verify::run::VerifyOptions>,
    /// `--metrics-listen`: the live metrics each interval is folded into.
    pub metrics: Option<Arc<crate::metrics::Live>>,
    /// `--hist-log`: every closed interval's histograms written here (one workload only).
    pub hist_log: Option<crate::histlog::SharedHistLog>,
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
            .field("metrics", &self.metrics.is_some())
            .field("hist_log", &self.hist_log.as_ref().map(|_| "HistLog"))
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
            metrics: None,
            hist_log: None,
        }
    }
}

/// Runs `spec` and returns what it measured: [`run_many`] of one workload.
pub fn run(spec: &WorkloadSpec, opts: &RunOptions) -> anyhow::Result<RunResult> {
    let mut results = run_many(std::slice::from_ref(spec), opts)?;
    Ok(results
        .pop()
        .expect("run_many returns one result per workload"))
}

/// Runs several workloads at the same time (a profile phase, a matrix point)
/// and returns one result per workload, in `specs` order.
///
/// It is one run: every worker of every workload waits at one gate and
/// measures one window (one warm-up, one start, one end), under one stop
/// flag, one [`RunSync`] (each phase is passed once for the whole set), one
/// progress line and one system monitor over the union of the workloads'
/// devices. Each result has its own interval series, workers, CPU times and
/// notes; its `monitor` is the one monitor's report cut to the devices under
/// its own targets (the machine's CPU figures are the same in every result).
/// A device that two workloads share is reported whole in both results (its
/// counters cannot be split between them), with a note, and each workload's
/// self-checks compare it with the I/O that every workload issued to it.
///
/// The workloads must agree on `--duration` and `--warmup` (they share the
/// window); `--verify` takes one workload at a time.
///
/// A run that fails (a worker's error or panic included) removes the test
/// files it created, and says so in its error; files that existed before it
/// are never removed.
pub fn run_many(specs: &[WorkloadSpec], opts: &RunOptions) -> anyhow::Result<Vec<RunResult>> {
    Ok(run_joint(specs, opts)?
        .into_iter()
        .map(|j| j.result)
        .collect())
}

/// [`run_many`], with each result's participants: with a [`RunSync`]
/// (`opts.sync`, e.g. the ranks of an MPI job) it adapts the workloads to
/// this participant first ([`RunSync::begin`]), and what it returns is
/// every participant's results merged ([`RunSync::end`]), the same on every
/// participant.
pub fn run_joint(specs: &[WorkloadSpec], opts: &RunOptions) -> anyhow::Result<Vec<Joint>> {
    let Some(sync) = &opts.sync else {
        return Ok(run_local(specs, opts)?
            .into_iter()
            .map(Joint::from)
            .collect());
    };
    let mut specs = specs.to_vec();
    let own_stop = sync.begin(&mut specs, opts.progress, &opts.stop)?;
    let results = match own_stop {
        Some(stop) => run_local(
            &specs,
            &RunOptions {
                stop,
                ..opts.clone()
            },
        )?,
        None => run_local(&specs, opts)?,
    };
    sync.end(results, &opts.stop)
}

/// True when `e`, the error of a run under `opts`, says its stop flag was
/// raised before its measured window opened (while its targets were being
/// prepared): nothing was measured. A caller that runs a series (a suite,
/// a sweep, a profile's phases, a qualify stage under its deadline) ends
/// the series there, as at a stop between two runs; a lone run's caller
/// reports the interruption (exit 130).
pub fn stopped_before_window(e: &anyhow::Error, opts: &RunOptions) -> bool {
    opts.stop.load(std::sync::atomic::Ordering::Relaxed) && crate::target::is_interrupted(e)
}

/// [`run_many`] on this participant alone (the phases still pass through
/// `opts.sync`'s barriers).
fn run_local(specs: &[WorkloadSpec], opts: &RunOptions) -> anyhow::Result<Vec<RunResult>> {
    let mut made = Vec::new();
    run_loads(specs, opts, &mut made).map_err(|mut e| {
        for path in &made {
            if crate::targetlock::remove_file(path).is_ok() {
                e = crate::target::with_outcome(e, crate::target::FileFate::Removed, path);
            }
        }
        e
    })
}

/// [`run_many`]; the test files it creates go to `made`.
fn run_loads(
    specs: &[WorkloadSpec],
    opts: &RunOptions,
    made: &mut Vec<std::path::PathBuf>,
) -> anyhow::Result<Vec<RunResult>> {
    let Some(first) = specs.first() else {
        return Ok(Vec::new());
    };
    one_window(specs, opts)?;
    let started_at = crate::clock::utc_now_rfc3339();
    let mut loads = Vec::with_capacity(specs.len());
    for (i, s) in specs.iter().enumerate() {
        loads.push(Load::prepare(s, i, opts, made)?);
    }
    // A run a count ends, with no time cap, picks its interval as an hour's would.
    let span = first.time_cap().min(Duration::from_secs(3600));
    let (interval, raised) = run_interval(&loads, opts, span);
    let interval_ns = u64::try_from(interval.as_nanos()).unwrap_or(u64::MAX);
    let crew = Crew::spawn(&mut loads, opts, interval_ns)?;

    let resolutions: Vec<Vec<Resolution>> =
        loads.iter().map(|l| resolve_devices(&l.targets)).collect();
    let content = examine_targets(&loads, &resolutions);
    let monitor = start_monitor(resolutions.iter().flatten(), interval, opts.sync.as_deref());
    let live = start_live(opts, &loads, &resolutions);

    let aggs = loads
        .iter()
        .map(|l| IntervalAgg::new(l.targets.len(), l.workers, interval_ns, opts.thread_series))
        .enumerate()
        .map(|(i, a)| a.with_hist_log(opts.hist_log.clone().filter(|_| i == 0)))
        .collect();
    let driven = drive(&crew, monitor, aggs, &loads[0].spec, opts, live.as_ref());
    let window = (crew.window.start(), crew.window.end());
    let unix_offset_ns = unix_offset_ns();
    // A worker's failure (a panic) first: the main thread's may follow from it.
    let joined = crew.join(loads.len())?;
    let (series, mut mon) = driven?;
    let interrupted = opts.stop.load(Ordering::Relaxed);
    set_worker_waits(&mut mon, &joined);

    let merged: Vec<Merged> = loads
        .iter()
        .zip(&joined)
        .map(|(l, (outs, _))| assemble::merge(outs, l.targets.len()))
        .collect();
    let shared = shared_devices(&resolutions, &merged, loads.iter().map(|l| l.spec.cache));
    let mut results = Vec::with_capacity(loads.len());
    for (wi, ((((load, (outs, engine_notes)), series), m), (content, res))) in loads
        .into_iter()
        .zip(joined)
        .zip(series)
        .zip(merged)
        .zip(content.into_iter().zip(resolutions.iter().cloned()))
        .enumerate()
    {
        let mut notes = load.notes;
        notes.extend(raised.clone());
        notes.extend(series.folding_note());
        if let (0, Some(log)) = (wi, &opts.hist_log) {
            notes.push(log.lock().unwrap_or_else(|p| p.into_inner()).finish());
        }
        notes.extend(engine_notes);
        let elsewhere = issued_elsewhere(&shared, wi);
        notes.extend(shared_notes(&shared, wi));
        notes.sort();
        notes.dedup();
        let facts = RunFacts {
            interrupted,
            spec: load.spec,
            started_at: started_at.clone(),
            engine: load.choice.kind,
            notes,
            monitor: own_devices(&mon, &res, &resolutions),
            targets: load.targets,
            resolutions: res,
            content,
            series,
            window,
            unix_offset_ns,
            elsewhere,
        };
        let report = verify::report(
            opts,
            &load.tables,
            outs.iter().filter_map(|o| o.verify.as_ref()),
            &facts.targets,
        )?;
        let mut result = assemble(facts, &outs, m);
        result.verify = report;
        results.push(result);
    }
    if let Some(l) = &live {
        l.checked(&results);
    }
    Ok(results)
}

/// The run's interval series step: `opts.interval`, raised (with a note
/// why) when the run's workers and scopes would make too many points over
/// `duration`.
fn run_interval(
    loads: &[Load],
    opts: &RunOptions,
    duration: Duration,
) -> (Duration, Option<String>) {
    let nworkers: usize = loads.iter().map(|l| l.workers).sum();
    let scopes: usize = loads
        .iter()
        .map(|l| l.targets.len() + 1 + if opts.thread_series { l.workers } else { 0 })
        .sum();
    series::effective_interval(opts.interval, nworkers, scopes, duration)
}

/// What each workload's targets hold before the run ([`check::examine`]),
/// by workload and target.
fn examine_targets(loads: &[Load], resolutions: &[Vec<Resolution>]) -> Vec<Vec<TargetContent>> {
    loads
        .iter()
        .zip(resolutions)
        .map(|(l, res)| {
            l.targets
                .iter()
                .zip(res)
                .map(|(t, r)| content::examine(&t.region(), r))
                .collect()
        })
        .collect()
}

/// `--metrics-listen`: the run's live metrics, naming each workload and its targets.
fn start_live(
    opts: &RunOptions,
    loads: &[Load],
    resolutions: &[Vec<Resolution>],
) -> Option<live::LiveRun> {
    opts.metrics.clone().map(|m| {
        let workloads = loads.iter().map(|l| {
            let paths = l.targets.iter().map(|t| t.path.display().to_string());
            (l.spec.describe(), paths.collect())
        });
        live::LiveRun::new(m, workloads, resolutions.iter().flatten())
    })
}

/// The workers' run-queue waits into the monitor's CPU attribution (when it has one).
fn set_worker_waits(mon: &mut MonitorReport, joined: &[(Vec<worker::WorkerOut>, Vec<String>)]) {
    if let Some(a) = &mut mon.attribution {
        // Every workload's workers: the window and the machine are shared.
        let waits: Vec<Option<(u64, u64)>> = joined
            .iter()
            .flat_map(|(outs, _)| outs.iter())
            .map(|o| o.wait_ns.map(|w| (w, o.duration_ns)))
            .collect();
        a.set_workers(&waits);
    }
}

/// What the other workloads of the run issued to the devices workload `wi`
/// shares with them (for its self-checks), by device name.
fn issued_elsewhere(shared: &[SharedDevice], wi: usize) -> Vec<check::IssuedElsewhere> {
    shared
        .iter()
        .filter(|d| d.workload != wi && d.users.contains(&wi))
        .map(|d| check::IssuedElsewhere {
            device: d.name.clone(),
            issued: d.issued.clone(),
            buffered: d.buffered,
        })
        .collect()
}

/// A note for each device of workload `wi` that other workloads of the run used too.
fn shared_notes(shared: &[SharedDevice], wi: usize) -> impl Iterator<Item = String> + '_ {
    shared
        .iter()
        .filter(move |d| d.workload == wi && d.users.len() > 1)
        .map(|d| {
            format!(
                "device {} also carried {} other workload(s) of this run at the same time: its counters and the self-checks cover all of them",
                d.name,
                d.users.len() - 1
            )
        })
}

/// Workloads run together share one window: they must agree on its length.
fn one_window(specs: &[WorkloadSpec], opts: &RunOptions) -> Result<(), crate::Error> {
    let first = &specs[0];
    if let Some(s) = specs
        .iter()
        .find(|s| s.duration != first.duration || s.warmup != first.warmup)
    {
        return Err(crate::Error::WindowsDiffer {
            duration: first.duration,
            warmup: first.warmup,
            other_duration: s.duration,
            other_warmup: s.warmup,
        });
    }
    if opts.hist_log.is_some() && specs.len() > 1 {
        return Err(crate::Error::BadWorkload(
            "--hist-log logs one workload's histograms: run the workloads one at a time to log each".into(),
        ));
    }
    if opts.verify.is_some() && specs.len() > 1 {
        return Err(crate::Error::BadWorkload(
            "--verify checks one workload at a time: run the workloads one after the other".into(),
        ));
    }
    Ok(())
}

/// Wall-clock ns since the Unix epoch minus the run clock's ns ([`now_ns`]).
fn unix_offset_ns() -> i128 {
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128);
    wall - i128::from(now_ns())
}

/// One block device under the targets of one workload of a run.
struct SharedDevice {
    name: String,
    /// The workload.
    workload: usize,
    /// Every workload of the run with a target on this device.
    users: Vec<usize>,
    /// What `workload` issued to it (for the other users' self-checks).
    issued: RwStats,
    /// `workload` wrote through the page cache without O_DSYNC.
    buffered: bool,
}

/// Per device and workload, the I/O each workload issued to it; a device
/// appears once per workload using it (`workload` = that workload).
fn shared_devices(
    resolutions: &[Vec<Resolution>],
    merged: &[Merged],
    caches: impl Iterator<Item = CacheMode>,
) -> Vec<SharedDevice> {
    // Whose writes go through the page cache without O_DSYNC.
    let buffered: Vec<bool> = caches.map(|c| !c.writes_reach_device()).collect();
    let mut out: Vec<SharedDevice> = Vec::new();
    for (wi, (res, m)) in resolutions.iter().zip(merged).enumerate() {
        for (ti, r) in res.iter().enumerate() {
            let Resolution::Device(d) = r else { continue };
            match out
                .iter_mut()
                .find(|x| x.name == d.name && x.workload == wi)
            {
                Some(x) => x.issued.merge(&m.per_target[ti]),
                None => out.push(SharedDevice {
                    name: d.name.clone(),
                    workload: wi,
                    users: Vec::new(),
                    issued: m.per_target[ti].clone(),
                    buffered: buffered[wi],
                }),
            }
        }
    }
    let users: Vec<(String, usize)> = out.iter().map(|d| (d.name.clone(), d.workload)).collect();
    for d in &mut out {
        d.users = users
            .iter()
            .filter(|(n, _)| *n == d.name)
            .map(|(_, w)| *w)
            .collect();
    }
    out
}

/// The monitor's report cut to one workload: the devices under its own
/// targets, and those no workload of the run has (a [`RunSync`]'s, e.g. the
/// other MPI ranks' on this host); the CPU figures whole.
fn own_devices(mon: &MonitorReport, own: &[Resolution], all: &[Vec<Resolution>]) -> MonitorReport {
    let names = |rs: &mut dyn Iterator<Item = &Resolution>| -> Vec<String> {
        rs.filter_map(|r| r.device())
            .flat_map(|d| d.monitor_names())
            .collect()
    };
    let mine = names(&mut own.iter());
    let anyone = names(&mut all.iter().flatten());
    let keep = |n: &String| mine.contains(n) || !anyone.contains(n);
    let mut m = mon.clone();
    m.devices.retain(|d| keep(&d.name));
    m.missing.retain(|n| keep(n));
    m
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

/// The run's one monitor: of the devices under every workload's targets and
/// of the CPUs (none, or more devices, when the [`RunSync`] says so).
fn start_monitor<'a>(
    resolutions: impl Iterator<Item = &'a Resolution>,
    interval: Duration,
    sync: Option<&dyn RunSync>,
) -> Monitor {
    let mut watched: Vec<String> = Vec::new();
    for d in resolutions.filter_map(|r| r.device()) {
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

/// How [`open_gate`] opened the gate.
struct Gate {
    /// When it opened (the warm-up starts).
    t0: u64,
    /// Every worker set up (none raised the stop flag).
    set_up: bool,
    /// A [`RunSync`] phase that failed: the window is empty, the run fails.
    failure: Option<anyhow::Error>,
}

/// Waits until every worker has set up, passes the [`RunSync`]'s phases up to
/// the warm-up (and the window's start, without one), sets the window when
/// it is known in advance, and opens the gate.
fn open_gate(
    crew: &Crew,
    monitor: &Monitor,
    opts: &RunOptions,
    warmup_ns: u64,
    duration_ns: u64,
) -> Gate {
    let w = &crew.window;
    let sync = opts.sync.as_deref();
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
    Gate {
        t0,
        set_up,
        failure,
    }
}

/// A worker's interval: to the live metrics, into its workload's series
/// and (with several workloads) the series of them all; a closed point
/// updates the progress line.
fn deliver(
    msg: series::IntervalMsg,
    aggs: &mut [IntervalAgg],
    together: &mut Option<IntervalAgg>,
    progress: &Progress,
    live: Option<&live::LiveRun>,
) {
    let wi = msg.workload;
    if let Some(l) = live {
        l.interval(&msg);
    }
    if let Some(t) = together {
        let mut all = msg.clone();
        all.target = wi;
        if let Some(point) = t.add(all) {
            progress.update(&point);
        }
    }
    if let Some(point) = aggs.get_mut(wi).and_then(|a| a.add(msg)) {
        if let Some(l) = live {
            l.closed(wi, &point);
        }
        if together.is_none() {
            progress.update(&point);
        }
    }
}

/// On the main thread: opens the gate once every worker (of every workload)
/// has set up, with the [`RunSync`] hooks at each phase; then, while the
/// workers run, merges their intervals into each workload's series, drives
/// the one progress line (all workloads together), resets the monitor's
/// baseline when the window opens and ends the window early on a stop.
/// Returns once every worker has finished.
fn drive(
    crew: &Crew,
    monitor: Monitor,
    mut aggs: Vec<IntervalAgg>,
    spec: &WorkloadSpec,
    opts: &RunOptions,
    live: Option<&live::LiveRun>,
) -> anyhow::Result<(Vec<Series>, MonitorReport)> {
    let w = &crew.window;
    let sync = opts.sync.as_deref();
    let warmup_ns = u64::try_from(spec.warmup.as_nanos()).unwrap_or(u64::MAX);
    let duration_ns = u64::try_from(spec.time_cap().as_nanos()).unwrap_or(u64::MAX);
    let Gate {
        t0,
        set_up,
        mut failure,
    } = open_gate(crew, &monitor, opts, warmup_ns, duration_ns);

    let progress = Progress::new(opts.progress, spec);
    // Several workloads: the progress line shows them together (an interval
    // series over all their workers, one "target" per workload).
    let mut together = (opts.progress && aggs.len() > 1).then(|| {
        let workers = crew.handles.len();
        IntervalAgg::new(aggs.len(), workers, crew.interval_ns, false)
    });
    let mut baseline_at_start = warmup_ns == 0;
    let mut log_started = false;
    let mut stride = series::Stride::new(crew.stride.clone(), crew.interval_ns);
    loop {
        let now = now_ns();
        stride.tick(now);
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
        if let (false, Some(log)) = (start == UNSET || log_started, &opts.hist_log) {
            // The log's StartTime and BaseTime: the window's start.
            let at = crate::histlog::unix_time(unix_offset_ns() + i128::from(start));
            log.lock().unwrap_or_else(|p| p.into_inner()).start(at);
            log_started = true;
        }
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
                if msg.full {
                    stride.full(now);
                }
                deliver(msg, &mut aggs, &mut together, &progress, live);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let mon = monitor.stop();
    progress.finish();
    if let Some(l) = live {
        l.ended();
    }
    if let Some(e) = failure {
        return Err(e);
    }
    if let (Some(s), true) = (sync, set_up) {
        s.barrier(RunPhase::WindowEnd)?;
    }
    Ok((aggs.into_iter().map(IntervalAgg::finish).collect(), mon))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysmon::mounts::DeviceInfo;
    use crate::sysmon::sampler::DeviceSeries;
    use crate::workload::EngineKind;

    fn dev(name: &str) -> Resolution {
        Resolution::Device(DeviceInfo {
            name: name.into(),
            disk: name.into(),
            ..Default::default()
        })
    }

    fn did(reads: u64) -> RwStats {
        let mut s = RwStats::default();
        for _ in 0..reads {
            s.read.record(1000, 4096);
        }
        s
    }

    fn null_spec(threads: u32) -> WorkloadSpec {
        WorkloadSpec {
            engine: EngineKind::Null,
            threads,
            // Bounded by I/Os, not time: a loaded machine (Wine in CI) may
            // start a worker after a short window has closed.
            duration: Duration::from_secs(60),
            io_limit: Some(500),
            ..WorkloadSpec::default()
        }
    }

    #[test]
    fn a_device_two_workloads_share_is_checked_against_both() {
        // Workload 0 on loop1; workload 1 on loop1 and loop2.
        let res = vec![vec![dev("loop1")], vec![dev("loop1"), dev("loop2")]];
        let merged = |per: Vec<RwStats>| Merged {
            per_target: per,
            ..assemble::merge(&[], 0)
        };
        let m = vec![merged(vec![did(3)]), merged(vec![did(5), did(7)])];
        let caches = [CacheMode::Direct, CacheMode::Buffered];
        let shared = shared_devices(&res, &m, caches.into_iter());
        let find = |name: &str, w: usize| {
            shared
                .iter()
                .find(|d| d.name == name && d.workload == w)
                .unwrap()
        };
        assert_eq!(shared.len(), 3);
        assert_eq!(find("loop1", 0).users, vec![0, 1]);
        assert_eq!(find("loop1", 1).issued.read.ios, 5);
        assert_eq!(find("loop2", 1).users, vec![1]);
        // Workload 1 writes through the page cache: the others' checks know it.
        let e = issued_elsewhere(&shared, 0);
        assert_eq!(e.len(), 1);
        assert!(e[0].device == "loop1" && e[0].buffered && e[0].issued.read.ios == 5);

        let mon = MonitorReport {
            devices: ["loop1", "loop2", "sdz"]
                .iter()
                .map(|n| DeviceSeries {
                    name: n.to_string(),
                    ..Default::default()
                })
                .collect(),
            missing: vec!["loop2".into()],
            ..Default::default()
        };
        // Its own devices, and one no workload has (a RunSync's), not the other's.
        let names = |m: MonitorReport| m.devices.into_iter().map(|d| d.name).collect::<Vec<_>>();
        assert_eq!(names(own_devices(&mon, &res[0], &res)), ["loop1", "sdz"]);
        assert!(own_devices(&mon, &res[0], &res).missing.is_empty());
        assert_eq!(
            names(own_devices(&mon, &res[1], &res)),
            ["loop1", "loop2", "sdz"]
        );
    }

    #[test]
    fn workloads_run_together_share_one_window_and_one_monitor() {
        let rs = run_many(&[null_spec(1), null_spec(2)], &RunOptions::default()).unwrap();
        assert_eq!(rs.len(), 2);
        assert_eq!((rs[0].threads.len(), rs[1].threads.len()), (1, 2));
        let w = rs[0].window.expect("the window opened");
        assert!(w.end_unix_ns > w.start_unix_ns);
        assert_eq!(rs[1].window, Some(w));
        assert_eq!(rs[0].started_at, rs[1].started_at);
        // One sampler: the same CPU samples, to the nanosecond of their
        // intervals (two monitors would sample at different instants).
        assert!(!rs[0].monitor.cpu_series.is_empty());
        assert_eq!(rs[0].monitor.cpu_series, rs[1].monitor.cpu_series);
        assert_eq!(rs[0].monitor.duration_s, rs[1].monitor.duration_s);
        for r in &rs {
            assert!(r.total.total.ios > 0);
            assert_eq!(r.series.targets.len(), 1);
        }
        // `run` is `run_many` of one.
        let one = run(&null_spec(1), &RunOptions::default()).unwrap();
        assert!(one.window.is_some() && one.total.total.ios > 0);
    }

    #[test]
    fn workloads_that_cannot_share_a_window_are_refused() {
        let long = WorkloadSpec {
            duration: Duration::from_secs(120),
            ..null_spec(1)
        };
        let e = run_many(&[null_spec(1), long], &RunOptions::default()).unwrap_err();
        assert!(
            matches!(
                e.downcast_ref::<crate::Error>(),
                Some(crate::Error::WindowsDiffer { other_duration, .. })
                    if *other_duration == Duration::from_secs(120)
            ),
            "{e}"
        );
        assert!(e.to_string().contains("share one measured window"), "{e}");
        assert!(run_many(&[], &RunOptions::default()).unwrap().is_empty());
    }
}
