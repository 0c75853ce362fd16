//! Before a run: prepare the targets, choose the engine once, plan one worker
//! per (target, thread), open their files and start their threads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::thread::JoinHandle;

use anyhow::Context;

use crate::engine;
use crate::target::{self, PrepareOptions, PreparedTarget, TargetKind};
use crate::workload::{EngineKind, FillMode, WorkloadSpec};

use super::series::IntervalMsg;
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
        anyhow::bail!("interrupted before the run started");
    }
    Ok(targets)
}

/// Chooses the engine once, so every thread uses the same one, and notes
/// what the user should know about it and about the run's conditions.
pub(super) fn choose_engine(
    spec: &WorkloadSpec,
    notes: &mut Vec<String>,
) -> anyhow::Result<EngineKind> {
    let mut engine_kind = spec.engine;
    if engine_kind == EngineKind::Uring {
        if let Err(e) = engine::uring_available() {
            if spec.sqpoll || spec.hipri {
                anyhow::bail!("io_uring is not available here ({e}), and --sqpoll/--hipri need it");
            }
            notes.push(format!(
                "io_uring is not available here ({e}); fell back to the sync engine (pread/pwrite, queue depth 1 per thread)"
            ));
            engine_kind = EngineKind::Sync;
        }
    }
    if matches!(engine_kind, EngineKind::Sync | EngineKind::Mmap) && spec.qd > 1 {
        notes.push(format!(
            "the {} engine does one I/O at a time per thread: --qd {} acts as 1",
            engine_kind.name(),
            spec.qd
        ));
    }
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
    Ok(engine_kind)
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
    /// Every worker and the main thread: passed once set-up is done.
    pub barrier: Arc<Barrier>,
    /// Interval messages; disconnected once every worker has finished.
    pub rx: mpsc::Receiver<IntervalMsg>,
    /// Notes the engines made while setting up.
    pub engine_notes: Arc<Mutex<Vec<String>>>,
}

impl Crew {
    /// Starts one thread per plan; they set up and wait at the barrier.
    pub fn spawn(
        spec: &WorkloadSpec,
        engine_kind: EngineKind,
        targets: &[PreparedTarget],
        plans: Vec<WorkerPlan>,
        opts: &RunOptions,
    ) -> anyhow::Result<Crew> {
        let barrier = Arc::new(Barrier::new(plans.len() + 1));
        let (tx, rx) = mpsc::channel::<IntervalMsg>();
        let engine_notes = Arc::new(Mutex::new(Vec::<String>::new()));
        let shared_offsets: Vec<Arc<AtomicU64>> = targets
            .iter()
            .map(|_| Arc::new(AtomicU64::new(0)))
            .collect();
        let mut handles = Vec::new();
        for plan in plans {
            let t = &targets[plan.target];
            let ctx = WorkerCtx {
                spec: spec.clone(),
                engine: engine_kind,
                region_start: t.region_start,
                region_len: t.region_len,
                stop: opts.stop.clone(),
                barrier: barrier.clone(),
                tx: tx.clone(),
                interval_ns: opts.interval.as_nanos().max(1_000_000) as u64,
                notes: engine_notes.clone(),
                shared_offset: shared_offsets[plan.target].clone(),
            };
            let h = std::thread::Builder::new()
                .name(format!("iosim-w{}", plan.thread))
                .spawn(move || worker(ctx, plan))
                .context("cannot start a worker thread")?;
            handles.push(h);
        }
        Ok(Crew {
            handles,
            barrier,
            rx,
            engine_notes,
        })
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
