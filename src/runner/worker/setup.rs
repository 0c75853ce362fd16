//! What a worker does before its window opens: pins itself, sets up its
//! engine and write buffers, and builds its offset generator; and what the
//! rest of the run waits on from it ([`Waits`]), whatever way it ends.

use std::sync::atomic::Ordering;

use anyhow::Context;

use super::{WorkerCtx, WorkerPlan};
use crate::clock::now_ns;
use crate::engine::{EngineConfig, IoEngine};
use crate::runner::ordered::Ordered;
use crate::runner::verify::VerifyHook;
use crate::sysmon::cpu;
use crate::workload::data::WriteData;
use crate::workload::{OffsetGen, SeqLayout, WorkloadSpec};

/// What the rest of a run waits on from one worker: its arrival at the gate
/// (the main thread waits for every worker's) and, with `--verify`, its end
/// of the workload (the verify pass waits for every worker's). Dropped on
/// any way out of [`worker`] (an error, a panic unwinding), it arrives where
/// the worker has not yet; on a panic it also sets the stop flag and ends
/// the window, so the run ends at once and fails instead of hanging.
pub(super) struct Waits<'a> {
    pub ctx: &'a WorkerCtx,
    pub gate: bool,
    pub verify: bool,
}

impl Waits<'_> {
    pub fn arrive_gate(&mut self) {
        if !self.gate {
            self.gate = true;
            self.ctx.window.arrive();
        }
    }

    pub fn arrive_verify(&mut self) {
        if !self.verify {
            self.verify = true;
            if let Some(v) = &self.ctx.verify {
                v.arrive();
            }
        }
    }
}

impl Drop for Waits<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.ctx.stop.store(true, Ordering::Relaxed);
            self.ctx.window.stop_at(now_ns());
        }
        self.arrive_gate();
        self.arrive_verify();
    }
}

/// Where a worker panics on purpose, for the tests of what a run does when a
/// worker thread dies (`IOSIM_TEST_WORKER_PANIC=setup|run`: the first worker
/// panics after setting up, before it reaches the gate, or once the gate has
/// opened). Read once per worker before it starts; nothing per I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TestPanic {
    None,
    SetUp,
    Run,
}

impl TestPanic {
    pub fn at(self, here: TestPanic) {
        if self != TestPanic::None && self == here {
            panic!("IOSIM_TEST_WORKER_PANIC asked this worker to panic ({here:?})");
        }
    }
}

pub(super) fn test_panic(plan: &WorkerPlan) -> TestPanic {
    if plan.thread != 0 {
        return TestPanic::None;
    }
    match std::env::var("IOSIM_TEST_WORKER_PANIC").as_deref() {
        Ok("setup") => TestPanic::SetUp,
        Ok("run") => TestPanic::Run,
        _ => TestPanic::None,
    }
}

/// Pins the thread, creates the engine and fills write buffers.
pub(super) fn setup(
    ctx: &WorkerCtx,
    plan: &WorkerPlan,
) -> anyhow::Result<(Box<dyn IoEngine>, Option<usize>, usize)> {
    let spec = &ctx.spec;
    let mut cpu_used = None;
    if let Some(cpus) = &plan.cpu {
        let r = if cpus.len() == 1 {
            cpu::pin_to_cpu(cpus[0])
        } else {
            cpu::pin_to_cpus(cpus)
        };
        r.with_context(|| {
            format!("cannot pin a worker to CPU(s) {cpus:?}: check --cpus against the CPUs online")
        })?;
        if cpus.len() == 1 {
            cpu_used = Some(cpus[0]);
        }
    }
    let slots = ctx.engine.caps.slots_for(spec.qd);
    let fds = plan
        .file
        .as_ref()
        .map(|f| vec![crate::platform::io::raw_file(f)])
        .unwrap_or_default();
    let cfg = EngineConfig {
        fds,
        slots,
        slot_size: spec.bs as usize,
        sqpoll: spec.sqpoll,
        hipri: spec.hipri,
        writable: spec.writes(),
        sync_writes: spec.cache.is_sync(),
    };
    let mut eng = ctx
        .engine
        .create(&cfg)
        .context("cannot set up the I/O engine")?;
    if !eng.notes().is_empty() {
        if let Ok(mut n) = ctx.notes.lock() {
            n.extend(eng.notes());
        }
    }
    if ctx.verify.is_some() {
        VerifyHook::fill(eng.as_mut(), slots, plan.thread);
    } else if spec.writes() {
        let data = WriteData::for_thread(spec, plan.thread as u64, 0);
        for s in 0..slots {
            data.prepare(
                eng.buffer(s),
                spec.fill,
                spec.seed ^ ((plan.thread as u64) << 32) ^ s as u64,
            );
        }
    }
    Ok((eng, cpu_used, slots))
}

/// This thread's seed for offsets and write stamps.
pub(super) fn thread_seed(spec: &WorkloadSpec, plan: &WorkerPlan) -> u64 {
    spec.seed
        .wrapping_add((plan.thread as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// The I/Os one thread completes before it stops: `--number-ios`, or
/// `--passes` times its region in blocks (the region split among the
/// threads that share one sequential position), whichever is fewer.
pub(super) fn io_limit(spec: &WorkloadSpec, region_len: u64, threads_on_target: usize) -> u64 {
    let passes = spec.passes.map_or(u64::MAX, |p| {
        let region = match spec.seq_layout {
            SeqLayout::Shared => region_len / threads_on_target.max(1) as u64,
            _ => region_len,
        };
        (u64::from(p) * (region / spec.bs.max(1))).max(1)
    });
    spec.io_limit.unwrap_or(u64::MAX).min(passes)
}

/// The offset generator of one thread: its share of the region, its seed.
pub(super) fn offset_gen(ctx: &WorkerCtx, plan: &WorkerPlan) -> OffsetGen {
    let spec = &ctx.spec;
    let align = spec.effective_align();
    let start = match spec.seq_layout {
        SeqLayout::Split => {
            let share = ctx.region_len / plan.threads_on_target as u64;
            crate::units::align_down(share * plan.local as u64, spec.bs.max(align))
        }
        SeqLayout::Stride(s) => s.wrapping_mul(plan.local as u64),
        SeqLayout::Shared | SeqLayout::Stripe(_) => 0,
    };
    let mut gen = OffsetGen::new(
        ctx.region_start,
        // A doublewrite area at the region's end is the copies' alone.
        Ordered::own_len(spec.doublewrite, ctx.region_len),
        spec.bs,
        align,
        spec.rw.is_random(),
        start,
        spec.write_pct,
        thread_seed(spec, plan),
    );
    if let Some(p) = spec.random_pct {
        gen = gen.mixed(p);
    }
    gen = gen
        .shaped(spec, plan.target)
        .sized(spec)
        .tail_rewrite(spec)
        .db_cache(spec)
        .burst_writes(spec);
    match spec.seq_layout {
        SeqLayout::Shared => gen = gen.shared(ctx.shared_offset.clone()),
        SeqLayout::Stripe(s) if !spec.rw.is_random() => {
            gen = gen.striped(s, plan.local, plan.threads_on_target)
        }
        _ => {}
    }
    gen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_stop_after_the_region_in_blocks() {
        let mut spec = WorkloadSpec {
            bs: 2300,
            ..WorkloadSpec::default()
        };
        // No limit: runs for the duration.
        assert_eq!(io_limit(&spec, 22 << 20, 1), u64::MAX);
        // fio --size=22m --bs=2300 writes 10,029 blocks.
        spec.passes = Some(1);
        assert_eq!(io_limit(&spec, 22 << 20, 1), 10_029);
        spec.passes = Some(3);
        assert_eq!(io_limit(&spec, 22 << 20, 4), 30_087);
        // Threads that share one position split the region.
        spec.seq_layout = SeqLayout::Shared;
        assert_eq!(io_limit(&spec, 22 << 20, 4), 3 * ((22 << 20) / 4 / 2300));
        // --number-ios below it wins; a region under one block still does one.
        spec.io_limit = Some(100);
        assert_eq!(io_limit(&spec, 22 << 20, 1), 100);
        spec.io_limit = None;
        assert_eq!(io_limit(&spec, 1000, 1), 1);
    }
}
