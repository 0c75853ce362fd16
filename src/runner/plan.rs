//! Before a run: prepare each workload's targets, choose its engine once,
//! plan one worker per (target, thread), open their files, and start the
//! threads of every workload of the run behind one gate.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use anyhow::Context;

use crate::engine;
use crate::target::{self, PrepareOptions, PreparedTarget, TargetKind};
use crate::verify::table::GenTable;
use crate::workload::{EngineKind, FillMode, TargetSpec, WorkloadSpec};

use super::series::IntervalMsg;
use super::window::Window;
use super::worker::{worker, WorkerCtx, WorkerOut, WorkerPlan};
use super::RunOptions;

/// One workload of a run, ready to start: its resolved spec, targets,
/// engine and worker plans.
pub(super) struct Load {
    /// The spec as run: sizes resolved, `auto` engine resolved.
    pub spec: WorkloadSpec,
    pub choice: engine::EngineChoice,
    pub targets: Vec<PreparedTarget>,
    /// `--verify`: one generation table per target (empty without it).
    pub tables: Vec<Arc<GenTable>>,
    /// Taken by [`Crew::spawn`].
    pub plans: Vec<WorkerPlan>,
    /// Its worker threads.
    pub workers: usize,
    pub notes: Vec<String>,
}

impl Load {
    /// Checks and prepares workload number `index` of a run: targets created
    /// or checked, the engine chosen, the workers planned and their files opened.
    /// The files it creates go to `made` as they are (a run that fails removes them).
    pub fn prepare(
        spec: &WorkloadSpec,
        index: usize,
        opts: &RunOptions,
        made: &mut Vec<std::path::PathBuf>,
    ) -> anyhow::Result<Load> {
        spec.validate()?;
        let mut notes = Vec::new();
        let mut spec = spec.clone();
        // A --bssplit mix: buffers and checks use its largest size.
        spec.resolve_sizes();
        if spec.engine == EngineKind::Null && spec.targets.is_empty() {
            spec.targets.push(TargetSpec::new("null", Some(1 << 30)));
        }
        if let Some(v) = &opts.verify {
            super::verify::check_spec(&spec, v)?;
        }
        // Before any file is created: a run that cannot fit in memory creates nothing.
        let backlog = opts.verify.as_ref().map_or(0, |v| v.backlog);
        let choice = choose_engine(&spec, backlog, &mut notes)?;
        let targets = prepare_targets(&spec, opts, &mut notes, made)?;
        let tables = super::verify::tables(&spec, opts, &targets)?;
        // The result's config names the engine that ran (`auto` resolved).
        spec.engine = choice.kind;
        let plans = plan_workers(&spec, &targets, index)?;
        Ok(Load {
            workers: plans.len(),
            spec,
            choice,
            targets,
            tables,
            plans,
            notes,
        })
    }
}

/// Prepares every target (create, check, align); their notes go to
/// `notes`, the files this run made to `made`.
pub(super) fn prepare_targets(
    spec: &WorkloadSpec,
    opts: &RunOptions,
    notes: &mut Vec<String>,
    made: &mut Vec<std::path::PathBuf>,
) -> anyhow::Result<Vec<PreparedTarget>> {
    let mut targets: Vec<PreparedTarget> = Vec::new();
    for i in 0..spec.targets.len() {
        let t = target::prepare(
            spec,
            i,
            PrepareOptions {
                progress: opts.progress,
                stop: Some(&opts.stop),
            },
        )
        .with_context(|| format!("target '{}'", spec.targets[i].path.display()))?;
        for n in &t.notes {
            notes.push(format!("{}: {n}", t.path.display()));
        }
        if t.made {
            made.push(t.path.clone());
        }
        targets.push(t);
    }
    if opts.stop.load(Ordering::Relaxed) {
        return Err(crate::error::Error::InterruptedBeforeStart.into());
    }
    Ok(targets)
}

/// Chooses the engine once ([`engine::choose`]), so every thread uses the
/// same one, refuses a run whose buffers (and `--verify-backlog` rings of
/// `backlog` entries) would not fit in memory, and notes what the user
/// should know about the engine and the run's conditions.
pub(super) fn choose_engine(
    spec: &WorkloadSpec,
    backlog: u64,
    notes: &mut Vec<String>,
) -> anyhow::Result<engine::EngineChoice> {
    let choice = engine::choose(&engine::EngineRequest {
        kind: spec.engine,
        cache: spec.cache,
        qd: spec.qd,
        sqpoll: spec.sqpoll,
        hipri: spec.hipri,
    })?;
    notes.extend(choice.notes.iter().cloned());
    engine::check_memory(
        spec,
        &choice,
        backlog,
        &overheads(spec),
        &crate::sysmon::limits::memory_limits(),
    )?;
    if let Some(cs) = crate::sysmon::host::clocksource() {
        if cs != "tsc" {
            notes.push(format!(
                "clocksource is '{cs}', not 'tsc': timestamps may cost a system call each"
            ));
        }
    }
    if spec.fill == FillMode::Zero {
        notes.push("writes carry zeros: storage that compresses or detects zeros will look faster than it is".into());
    }
    Ok(choice)
}

/// Address space each thread reserves for its stack (Rust's default 2 MiB,
/// and its guard page).
const THREAD_STACK: u64 = (2 << 20) + (64 << 10);

/// Address space each malloc arena reserves (glibc's 64 MiB heaps, one per
/// thread up to 8 per CPU): counted only against an address-space limit.
const MALLOC_ARENA: u64 = 64 << 20;

/// What a run of `spec` takes besides its engines' buffers: the interval
/// data's statistics and series, and the threads' stacks and arenas.
fn overheads(spec: &WorkloadSpec) -> engine::Overheads {
    let (per_thread, fixed) = super::series::memory_bound();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    // The workers, the main thread and the monitor's.
    let threads = engine::total_threads(spec)
        .unwrap_or(u64::MAX)
        .saturating_add(2);
    engine::Overheads {
        per_thread,
        fixed,
        reserved_per_thread: THREAD_STACK,
        reserved_fixed: threads.min(8 * cpus).saturating_mul(MALLOC_ARENA),
    }
}

/// `--hipri`: refuses a target whose disk cannot poll for completions (the
/// kernel would fail every polled I/O with "operation not supported"). A
/// target whose disk sysfs does not describe is left to the kernel.
fn check_polling(path: &std::path::Path) -> Result<(), crate::error::Error> {
    let env = crate::sysmon::mounts::SysEnv::system();
    let res = crate::sysmon::mounts::resolve_target_in(path, &env);
    let Some(dev) = res.device() else {
        return Ok(());
    };
    match crate::sysmon::mounts::io_poll(dev, &env) {
        Some(false) => Err(crate::error::Error::NoPolling {
            path: path.to_path_buf(),
            device: dev.disk.clone(),
        }),
        _ => Ok(()),
    }
}

/// Plans the workers of workload `workload` and opens their files (errors
/// surface here, not in threads).
pub(super) fn plan_workers(
    spec: &WorkloadSpec,
    targets: &[PreparedTarget],
    workload: usize,
) -> anyhow::Result<Vec<WorkerPlan>> {
    if spec.hipri {
        for t in targets.iter().filter(|t| t.kind != TargetKind::Null) {
            check_polling(&t.path)?;
        }
    }
    let writes = spec.writes();
    let mut plans = Vec::new();
    let mut global = 0usize;
    for (ti, t) in targets.iter().enumerate() {
        let n = spec.threads_for(ti) as usize;
        for local in 0..n {
            let file = if t.kind == TargetKind::Null {
                None
            } else {
                Some(target::open_for_workload(t, spec, writes)?)
            };
            let cpu = if !spec.targets[ti].cpus.is_empty() {
                Some(spec.targets[ti].cpus.clone())
            } else if !spec.cpus.is_empty() {
                Some(vec![spec.cpus[global % spec.cpus.len()]])
            } else {
                None
            };
            plans.push(WorkerPlan {
                workload,
                target: ti,
                thread: global,
                local,
                threads_on_target: n,
                cpu,
                file,
            });
            global += 1;
        }
    }
    Ok(plans)
}

/// The started worker threads of a run: every workload's, behind one gate.
pub(super) struct Crew {
    /// Each worker's workload and thread.
    pub handles: Vec<(usize, JoinHandle<anyhow::Result<WorkerOut>>)>,
    /// The gate and the measured window every worker of every workload shares.
    pub window: Arc<Window>,
    /// Interval messages of every worker (a bounded channel: workers fold
    /// intervals when it is full); disconnected once all have finished.
    pub rx: mpsc::Receiver<IntervalMsg>,
    /// Per workload, the notes its engines made while setting up and while running.
    pub engine_notes: Vec<Arc<Mutex<Vec<String>>>>,
    /// The series interval every worker uses.
    pub interval_ns: u64,
    /// Intervals per message, set by the main thread ([`super::series::Stride`]).
    pub stride: Arc<std::sync::atomic::AtomicU32>,
}

impl Crew {
    /// Starts one thread per plan of every workload (taking the plans out of
    /// `loads`); they set up and wait at the one gate.
    pub fn spawn(loads: &mut [Load], opts: &RunOptions, interval_ns: u64) -> anyhow::Result<Crew> {
        let total: usize = loads.iter().map(|l| l.plans.len()).sum();
        let window = Arc::new(Window::new(total));
        let (tx, rx) = mpsc::sync_channel::<IntervalMsg>(super::series::channel_capacity(total));
        let mut crew = Crew {
            handles: Vec::with_capacity(total),
            window,
            rx,
            engine_notes: Vec::with_capacity(loads.len()),
            interval_ns,
            stride: Arc::new(std::sync::atomic::AtomicU32::new(1)),
        };
        for (wi, load) in loads.iter_mut().enumerate() {
            let notes = Arc::new(Mutex::new(Vec::<String>::new()));
            crew.engine_notes.push(notes.clone());
            if let Err(e) = crew.spawn_load(wi, load, opts, interval_ns, &tx, &notes) {
                // Let the workers already started end at once.
                let now = crate::clock::now_ns();
                crew.window.stop_at(now);
                crew.window.open(now, crew.threads());
                return Err(e);
            }
        }
        Ok(crew)
    }

    /// Starts the threads of one workload.
    fn spawn_load(
        &mut self,
        wi: usize,
        load: &mut Load,
        opts: &RunOptions,
        interval_ns: u64,
        tx: &mpsc::SyncSender<IntervalMsg>,
        notes: &Arc<Mutex<Vec<String>>>,
    ) -> anyhow::Result<()> {
        let shared_offsets: Vec<Arc<AtomicU64>> = load
            .targets
            .iter()
            .map(|_| Arc::new(AtomicU64::new(0)))
            .collect();
        let groups: Vec<Option<Arc<super::groupcommit::GroupCommit>>> = load
            .targets
            .iter()
            .map(|_| load.spec.group_commit.then(Arc::default))
            .collect();
        let plans = std::mem::take(&mut load.plans);
        let (nplans, verify_done) = (
            plans.len(),
            Arc::new(std::sync::atomic::AtomicUsize::new(0)),
        );
        for plan in plans {
            let t = &load.targets[plan.target];
            let ctx = WorkerCtx {
                spec: load.spec.clone(),
                engine: load.choice.clone(),
                region_start: t.region_start,
                region_len: t.region_len,
                stop: opts.stop.clone(),
                window: self.window.clone(),
                tx: tx.clone(),
                interval_ns,
                stride: self.stride.clone(),
                notes: notes.clone(),
                shared_offset: shared_offsets[plan.target].clone(),
                group: groups[plan.target].clone(),
                verify: opts.verify.as_ref().map(|v| super::verify::VerifyCtx {
                    table: load.tables[plan.target].clone(),
                    opts: v.clone(),
                    done: verify_done.clone(),
                    workers: nplans,
                }),
            };
            let h = std::thread::Builder::new()
                .name(format!("iosim-w{}", plan.thread))
                .spawn(move || worker(ctx, plan))
                .context("cannot start a worker thread")?;
            self.handles.push((wi, h));
        }
        Ok(())
    }

    /// The worker threads (to wake them at the gate).
    pub fn threads(&self) -> impl Iterator<Item = &std::thread::Thread> {
        self.handles.iter().map(|(_, h)| h.thread())
    }

    /// Waits for every worker; the first failure is the run's. Returns, per
    /// workload (of `loads` workloads), its workers' measurements and its engines' notes.
    pub fn join(self, loads: usize) -> anyhow::Result<Vec<(Vec<WorkerOut>, Vec<String>)>> {
        let mut out: Vec<(Vec<WorkerOut>, Vec<String>)> =
            (0..loads).map(|_| (Vec::new(), Vec::new())).collect();
        let mut first_err = None;
        let mut panicked = None;
        for (wi, h) in self.handles {
            let name = h.thread().name().unwrap_or("iosim-w?").to_string();
            match h.join() {
                Ok(Ok(o)) => out[wi].0.push(o),
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(payload) => {
                    panicked.get_or_insert(crate::error::Error::WorkerPanicked {
                        thread: name,
                        message: panic_message(payload.as_ref()),
                    });
                }
            }
        }
        // A panic first: the other workers' errors may only follow from it.
        if let Some(e) = panicked {
            return Err(e.into());
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        for (wi, notes) in self.engine_notes.iter().enumerate() {
            out[wi].1 = notes.lock().map(|v| v.clone()).unwrap_or_default();
        }
        Ok(out)
    }
}

/// What a panicking thread said (its `panic!` message), as far as it can be read.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}
