//! Before a run: prepare the targets, choose the engine once, plan one worker
//! per (target, thread), open their files and start their threads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use anyhow::Context;

use crate::engine;
use crate::target::{self, PrepareOptions, PreparedTarget, TargetKind};
use crate::workload::{FillMode, WorkloadSpec};

use super::series::IntervalMsg;
use super::window::Window;
use super::worker::{worker, WorkerCtx, WorkerOut, WorkerPlan};
use super::RunOptions;

/// Prepares every target (create, check, align); their notes go to `notes`.
pub(super) fn prepare_targets(
    spec: &WorkloadSpec,
    opts: &RunOptions,
    notes: &mut Vec<String>,
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
        targets.push(t);
    }
    if opts.stop.load(Ordering::Relaxed) {
        return Err(crate::error::Error::InterruptedBeforeStart.into());
    }
    Ok(targets)
}

/// Chooses the engine once ([`engine::choose`]), so every thread uses the
/// same one, refuses a run whose buffers would not fit in memory, and notes
/// what the user should know about the engine and the run's conditions.
pub(super) fn choose_engine(
    spec: &WorkloadSpec,
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
    engine::check_memory(spec, &choice)?;
    if let Some(cs) = crate::clock::clocksource() {
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

/// Plans the workers and opens their files (errors surface here, not in threads).
pub(super) fn plan_workers(
    spec: &WorkloadSpec,
    targets: &[PreparedTarget],
) -> anyhow::Result<Vec<WorkerPlan>> {
    let writes = spec.writes();
    let mut plans = Vec::new();
    let mut global = 0usize;
    for (ti, t) in targets.iter().enumerate() {
        let n = spec.threads_for(ti) as usize;
        for local in 0..n {
            let file = if t.kind == TargetKind::Null {
                None
            } else {
                Some(target::open_for_io(t, spec.cache, writes)?)
            };
            let cpu = if !spec.targets[ti].cpus.is_empty() {
                Some(spec.targets[ti].cpus.clone())
            } else if !spec.cpus.is_empty() {
                Some(vec![spec.cpus[global % spec.cpus.len()]])
            } else {
                None
            };
            plans.push(WorkerPlan {
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

/// The started worker threads of a run.
pub(super) struct Crew {
    pub handles: Vec<JoinHandle<anyhow::Result<WorkerOut>>>,
    /// The gate and the shared measured window.
    pub window: Arc<Window>,
    /// Interval messages; disconnected once every worker has finished.
    pub rx: mpsc::Receiver<IntervalMsg>,
    /// Notes the engines made while setting up and while running.
    pub engine_notes: Arc<Mutex<Vec<String>>>,
}

impl Crew {
    /// Starts one thread per plan; they set up and wait at the window's gate.
    pub fn spawn(
        spec: &WorkloadSpec,
        engine: &engine::EngineChoice,
        targets: &[PreparedTarget],
        plans: Vec<WorkerPlan>,
        opts: &RunOptions,
        interval_ns: u64,
        tables: &[Arc<crate::verify::table::GenTable>],
    ) -> anyhow::Result<Crew> {
        let window = Arc::new(Window::new(plans.len()));
        let (tx, rx) = mpsc::channel::<IntervalMsg>();
        let engine_notes = Arc::new(Mutex::new(Vec::<String>::new()));
        let shared_offsets: Vec<Arc<AtomicU64>> = targets
            .iter()
            .map(|_| Arc::new(AtomicU64::new(0)))
            .collect();
        let mut handles = Vec::new();
        let (nplans, verify_done) = (
            plans.len(),
            Arc::new(std::sync::atomic::AtomicUsize::new(0)),
        );
        for plan in plans {
            let t = &targets[plan.target];
            let ctx = WorkerCtx {
                spec: spec.clone(),
                engine: engine.clone(),
                region_start: t.region_start,
                region_len: t.region_len,
                stop: opts.stop.clone(),
                window: window.clone(),
                tx: tx.clone(),
                interval_ns,
                notes: engine_notes.clone(),
                shared_offset: shared_offsets[plan.target].clone(),
                verify: opts.verify.as_ref().map(|v| super::verify::VerifyCtx {
                    table: tables[plan.target].clone(),
                    opts: v.clone(),
                    done: verify_done.clone(),
                    workers: nplans,
                }),
            };
            let h = match std::thread::Builder::new()
                .name(format!("iosim-w{}", plan.thread))
                .spawn(move || worker(ctx, plan))
            {
                Ok(h) => h,
                Err(e) => {
                    // Let the workers already started end at once.
                    let now = crate::clock::now_ns();
                    window.stop_at(now);
                    window.open(now, handles.iter().map(|h: &JoinHandle<_>| h.thread()));
                    return Err(e).context("cannot start a worker thread");
                }
            };
            handles.push(h);
        }
        Ok(Crew {
            handles,
            window,
            rx,
            engine_notes,
        })
    }

    /// The worker threads (to wake them at the gate).
    pub fn threads(&self) -> impl Iterator<Item = &std::thread::Thread> {
        self.handles.iter().map(|h| h.thread())
    }

    /// Waits for every worker; the first failure is the run's.
    pub fn join(self) -> anyhow::Result<(Vec<WorkerOut>, Vec<String>)> {
        let mut outs = Vec::new();
        for h in self.handles {
            match h.join() {
                Ok(Ok(o)) => outs.push(o),
                Ok(Err(e)) => return Err(e),
                Err(_) => anyhow::bail!("a worker thread panicked; this is a bug in iosim"),
            }
        }
        let notes = self
            .engine_notes
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default();
        Ok((outs, notes))
    }
}
