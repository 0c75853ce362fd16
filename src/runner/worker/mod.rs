//! One worker thread: sets up its engine and offset generator, waits at the
//! start barrier, then runs the hot loop until its window ends.
//!
//! The hot loop queues an I/O for every free slot, stamps the batch with one
//! clock read, submits and waits in one system call, stamps the completions
//! with one clock read, and records each latency into thread-private
//! statistics: no allocation, lock, formatting or extra system call per I/O.
//! At every interval boundary the worker hands a copy of its interval
//! statistics to the main thread (once per interval, not per I/O), over a
//! bounded channel: when the main thread has fallen behind and the channel
//! is full, the worker keeps the interval and folds the next ones into it
//! until there is room, so a busy machine makes the series coarser, never
//! the queue longer.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use super::ordered::{Ordered, Step};
use crate::clock::{now_ns, MAX_NAP_NS};
use crate::engine::{self, Completion, IoEngine, IoReq, Op};
use crate::stats::{RwStats, SlowAfterWindow};
use crate::sysmon::{cpu, procs};
use crate::workload::data::WriteData;
use crate::workload::measured::ShapeStats;
use crate::workload::{OffsetGen, WorkloadSpec};

mod intervals;
mod setup;

use setup::{io_limit, offset_gen, setup, test_panic, thread_seed, TestPanic, Waits};

use super::pacing::Pacer;
use super::result::IoErrorRecord;
use super::series::IntervalMsg;
use super::verify::{VerifyCtx, VerifyHook};
use super::window::Window;
use super::MAX_ERRORS_PER_THREAD;

/// Error records kept per thread (all errors are counted).
const ERROR_RECORDS_PER_THREAD: usize = 32;

/// One worker thread to start.
pub(super) struct WorkerPlan {
    /// Which workload of the run.
    pub workload: usize,
    pub target: usize,
    pub thread: usize,
    /// Thread index within its target.
    pub local: usize,
    pub threads_on_target: usize,
    pub cpu: Option<Vec<usize>>,
    pub file: Option<std::fs::File>,
}

/// What every worker of a run shares, and what is particular to its target.
pub(super) struct WorkerCtx {
    pub spec: WorkloadSpec,
    pub engine: engine::EngineChoice,
    pub region_start: u64,
    pub region_len: u64,
    /// Set when a worker cannot set up: the run will not start.
    pub stop: Arc<AtomicBool>,
    pub window: Arc<Window>,
    /// Bounded ([`super::series::channel_capacity`]).
    pub tx: mpsc::SyncSender<IntervalMsg>,
    pub interval_ns: u64,
    /// Intervals per message while the machine is busy ([`super::series::Stride`]).
    pub stride: Arc<std::sync::atomic::AtomicU32>,
    pub notes: Arc<std::sync::Mutex<Vec<String>>>,
    /// The target's shared sequential offset (`SeqLayout::Shared`).
    pub shared_offset: Arc<AtomicU64>,
    /// `--verify`: the target's generation table and the options.
    pub verify: Option<VerifyCtx>,
    /// `--group-commit`: the target's commit state.
    pub group: Option<Arc<super::groupcommit::GroupCommit>>,
}

/// What a worker returns.
pub(super) struct WorkerOut {
    pub target: usize,
    pub thread: usize,
    pub cpu: Option<usize>,
    pub duration_ns: u64,
    pub user_s: f64,
    pub sys_s: f64,
    /// Time runnable but waiting for a core while measuring, ns (`None`:
    /// the kernel does not keep it).
    pub wait_ns: Option<u64>,
    pub stats: RwStats,
    pub errors: u64,
    pub error_records: Vec<IoErrorRecord>,
    /// When the thread first ran after the gate opened.
    pub first_ts: u64,
    /// When it noticed the end of the window (0: it stopped for another reason).
    pub noticed_end_ts: u64,
    /// Per block size and from scheduled starts (issue 17).
    pub shape: ShapeStats,
    /// Skewed draws while measuring: hits on the hottest 1%, 10%, all.
    pub skew: (u64, u64, u64),
    /// Random block positions of this thread's region (what the skew ranks).
    pub slots: u64,
    /// `--db-cache`: the reads it served in the window, the share of the
    /// region it held and the hit ratio the skew predicts.
    pub cache: Option<(u64, f64, f64)>,
    /// What `--verify` checked.
    pub verify: Option<crate::verify::run::VerifyCounts>,
    /// The I/Os in flight when the window closed.
    pub late: SlowAfterWindow,
}

/// The body of a worker thread.
pub(super) fn worker(ctx: WorkerCtx, plan: WorkerPlan) -> anyhow::Result<WorkerOut> {
    // Whatever happens below (an error, a panic), the others are not left waiting.
    let mut waits = Waits {
        ctx: &ctx,
        gate: false,
        verify: ctx.verify.is_none(),
    };
    let panic_at = test_panic(&plan);
    // Everything that can fail or allocate happens before the barrier.
    let set_up = setup(&ctx, &plan).and_then(|(eng, cpu, slots)| {
        if let Some(c) = ctx.spec.shape.db_cache {
            c.fits(Ordered::own_len(ctx.spec.doublewrite, ctx.region_len))
                .map_err(|e| anyhow::Error::new(crate::Error::BadWorkload(e)))?;
        }
        let ordered = Ordered::for_spec(&ctx.spec, ctx.region_start, ctx.region_len, slots)
            .map_err(|e| anyhow::Error::new(crate::Error::BadWorkload(e)))?;
        Ok((eng, cpu, slots, ordered))
    });
    let (eng, cpu_used, slots, ordered) = match set_up {
        Ok(v) => v,
        Err(e) => {
            // The run will not start; the main thread opens an empty window.
            ctx.stop.store(true, Ordering::Relaxed);
            return Err(e);
        }
    };
    panic_at.at(TestPanic::SetUp);
    let mut w = Worker::new(&ctx, &plan, eng, slots);
    if let Some(o) = ordered {
        w.flush_every = o.gate();
        w.ordered = Some(o);
    }
    waits.arrive_gate();
    let t0 = ctx.window.wait_open();
    w.start(t0, now_ns());
    panic_at.at(TestPanic::Run);
    let only = ctx.verify.as_ref().is_some_and(|v| v.opts.only);
    let ran = if only { Ok(()) } else { w.run() };
    waits.arrive_verify();
    if let Err(e) = ran {
        // This run has failed: end the window for every other worker now.
        ctx.window.stop_at(now_ns());
        return Err(e);
    }
    if let Some(v) = ctx.verify.as_ref().filter(|v| v.opts.pass || v.opts.only) {
        v.wait_all(&ctx.stop);
        w.verify_pass()?;
    }
    Ok(w.finish(cpu_used))
}

/// Per-slot state of the requests in flight.
struct Slots {
    comps: Vec<Completion>,
    submit_ts: Vec<u64>,
    /// When each I/O was scheduled to start (paced runs; else its submission).
    intended_ts: Vec<u64>,
    off: Vec<u64>,
    op: Vec<Op>,
    len: Vec<u32>,
    class: Vec<u8>,
    free: Vec<u32>,
    /// Queued but not yet stamped (submission groups of the async engines).
    pending: Vec<u32>,
    inflight: usize,
}

impl Slots {
    fn new(n: usize) -> Slots {
        Slots {
            comps: vec![Completion::default(); n],
            submit_ts: vec![0u64; n],
            intended_ts: vec![0u64; n],
            off: vec![0u64; n],
            op: vec![Op::Read; n],
            len: vec![0u32; n],
            class: vec![0u8; n],
            free: (0..n as u32).rev().collect(),
            pending: Vec::with_capacity(n),
            inflight: 0,
        }
    }

    /// Stamps the pending group with the time just before its submission.
    #[inline]
    fn stamp_pending(&mut self) {
        let ts = now_ns();
        for &s in self.pending.iter() {
            self.submit_ts[s as usize] = ts;
        }
        self.pending.clear();
    }
}

/// Where this thread is in the shared window: warm-up, measuring, which interval.
struct Phase {
    measuring: bool,
    /// Start of the shared window (once measuring).
    start: u64,
    /// Where this thread stopped measuring (the window's end, or earlier
    /// after `--number-ios`).
    measure_end: u64,
    /// End of the shared window, as last read.
    end: u64,
    next_boundary: u64,
    interval_index: usize,
    /// Thread CPU time (user, system) when measuring started.
    ru0: (f64, f64),
    /// Run-queue wait (ns) when measuring started, and when it ended.
    wait0: Option<u64>,
    wait1: Option<u64>,
    first_ts: u64,
    noticed_end_ts: u64,
}

/// One worker's state for the hot loop.
struct Worker<'a> {
    ctx: &'a WorkerCtx,
    plan: &'a WorkerPlan,
    eng: Box<dyn IoEngine>,
    gen: OffsetGen,
    pacer: Option<Pacer>,
    io: Slots,
    /// The block size (`--verify` runs one size; a size mix is refused with it).
    bs: u32,
    sync: bool,
    /// What each write carries (a stamp per 4 KiB, generated blocks, or a fixed fill).
    data: WriteData,
    /// Queued I/Os per commit (`usize::MAX`: one commit per batch).
    submit_batch: usize,
    io_limit: u64,
    win: Phase,
    cur: RwStats,
    whole: RwStats,
    /// Per-size and open-loop statistics (empty unless asked for).
    shape: ShapeStats,
    errors: u64,
    error_records: Vec<IoErrorRecord>,
    stopping: bool,
    last_ts: u64,
    measured_ios: u64,
    /// `--verify`.
    verify: Option<VerifyHook>,
    /// Every block drawn for a write was busy: let the slot wait.
    blocked: bool,
    /// The I/Os in flight when the window closed, timed to completion.
    late: SlowAfterWindow,
    /// Intervals closed while the channel was full, folded into one
    /// message, sent at the next boundary with room (or at the end).
    held: Option<IntervalMsg>,
    /// The flush after every `flush_every` writes (`--fsync N`, `--fdatasync N`,
    /// `--sync-method fsync|fdatasync`); `flush_every` u64::MAX: none (one
    /// comparison per I/O either way).
    flush_op: Op,
    flush_every: u64,
    /// Writes issued since the last flush (u64: never wraps into a flush).
    unflushed: u64,
    /// Writeback started after every `hint_every` writes (`--sync-file-range
    /// N`; u64::MAX: never), on the thread's own file.
    hint_every: u64,
    /// Writes issued since writeback was last started.
    unhinted: u64,
    hint_file: crate::platform::io::RawFile,
    /// Reads the database's cache served in the window (`--db-cache`).
    cache_hits: u64,
    /// `--flush-barrier`, `--doublewrite`: the ordered batches.
    ordered: Option<Ordered>,
}

impl<'a> Worker<'a> {
    fn new(
        ctx: &'a WorkerCtx,
        plan: &'a WorkerPlan,
        eng: Box<dyn IoEngine>,
        slots: usize,
    ) -> Worker<'a> {
        let spec = &ctx.spec;
        // Engines whose queued I/O is already done gain nothing from committing
        // in groups: their requests are stamped once per batch, as before.
        let caps = eng.capabilities();
        let submit_batch = if spec.submit_batch == 0 || !caps.needs_commit {
            usize::MAX
        } else {
            spec.submit_batch as usize
        };
        Worker {
            ctx,
            plan,
            sync: caps.timed_in_queue(),
            eng,
            gen: offset_gen(ctx, plan),
            pacer: None,
            io: Slots::new(slots),
            bs: spec.bs as u32,
            data: WriteData::for_thread(spec, plan.thread as u64, thread_seed(spec, plan)),
            submit_batch,
            io_limit: io_limit(spec, ctx.region_len, plan.threads_on_target),
            win: Phase {
                measuring: false,
                start: 0,
                measure_end: 0,
                end: u64::MAX,
                next_boundary: u64::MAX,
                interval_index: 0,
                ru0: (0.0, 0.0),
                wait0: None,
                wait1: None,
                first_ts: 0,
                noticed_end_ts: 0,
            },
            cur: RwStats::default(),
            whole: RwStats::default(),
            shape: ShapeStats::new(spec),
            errors: 0,
            error_records: Vec::with_capacity(ERROR_RECORDS_PER_THREAD),
            stopping: false,
            last_ts: 0,
            measured_ios: 0,
            verify: ctx.verify.as_ref().map(|v| {
                let fd = plan.file.as_ref().map(crate::platform::io::raw_file);
                VerifyHook::new(v, plan.target, fd, slots)
            }),
            blocked: false,
            late: SlowAfterWindow::default(),
            held: None,
            flush_op: spec.effective_flush().map_or(Op::Fsync, |f| f.kind.op()),
            flush_every: spec
                .effective_flush()
                .map_or(u64::MAX, |f| u64::from(f.every.max(1))),
            unflushed: 0,
            hint_every: spec.sync_file_range.map_or(u64::MAX, u64::from),
            unhinted: 0,
            hint_file: plan
                .file
                .as_ref()
                .map_or(crate::platform::io::NO_FILE, crate::platform::io::raw_file),
            cache_hits: 0,
            ordered: None,
        }
    }

    /// The gate opened at `t0` (the start of warm-up); this thread runs from `now`.
    fn start(&mut self, t0: u64, now: u64) {
        self.pacer = Pacer::new(&self.ctx.spec, t0);
        self.win.first_ts = now;
        self.last_ts = now;
        // Measuring may begin at once (no warm-up, or a late thread).
        self.advance(now);
    }

    /// The hot loop: issue, wait, complete, move the window on.
    fn run(&mut self) -> anyhow::Result<()> {
        loop {
            // A slot is free but the rate cap or think time says not yet.
            let waiting = if self.stopping { false } else { self.issue()? };
            let Some(n) = self.wait(waiting)? else {
                break;
            };
            let now = now_ns();
            self.last_ts = now;
            if !self.stopping {
                // Phase and interval first: completions stamped at or past a
                // boundary belong to the next interval, past the end to none.
                self.advance(now);
            }
            self.complete(n, now);
            if self.measured_ios >= self.io_limit && !self.stopping {
                // `--number-ios` reached: stop before issuing one more, once
                // the writes' owed flush is done.
                self.flush_owed()?;
                self.close_intervals(now_ns());
            }
        }
        Ok(())
    }

    /// When a count (`--number-ios`, `--passes`) ends the run right after a
    /// write whose flush is owed (`--fdatasync N`, `--sync-method`), that
    /// flush is issued and waited for, and measured, before the window
    /// closes: the run ends durable, as a fio job does, with one flush per
    /// write (fio's etcd check counts the last write's fdatasync too).
    ///
    /// Out of line: it runs once per run.
    #[cold]
    #[inline(never)]
    fn flush_owed(&mut self) -> anyhow::Result<()> {
        if self.unflushed < self.flush_every {
            return Ok(());
        }
        // The I/Os in flight complete first: the flush covers them.
        self.drain()?;
        let Some(slot) = self.io.free.pop() else {
            return Ok(());
        };
        self.unflushed = 0;
        self.io.intended_ts[slot as usize] = self.last_ts;
        self.last_ts = now_ns();
        self.queue_one(slot, self.flush_op, 0, 0, 0)?;
        if !self.sync && !self.io.pending.is_empty() {
            self.io.stamp_pending();
            self.eng.commit()?;
        }
        self.drain()
    }

    /// `--sync-file-range N`: the writes before this one were issued, so
    /// their dirty pages go to the device now (not waited for). Out of line:
    /// once per N writes.
    #[cold]
    #[inline(never)]
    fn start_writeback(&mut self) -> anyhow::Result<()> {
        self.unhinted = 1;
        crate::platform::io::start_writeback(self.hint_file)
            .map_err(|e| anyhow::anyhow!("sync_file_range on the target failed: {e}"))
    }

    /// `--flush-barrier`, `--doublewrite`: the gate is closed, so slot
    /// `slot` takes the batch's next copy, its flush, or waits. Out of
    /// line: once per copy and barrier.
    #[cold]
    #[inline(never)]
    fn ordered_step(&mut self, slot: u32) -> anyhow::Result<()> {
        let inflight = self.io.inflight;
        let Some(o) = self.ordered.as_mut() else {
            return Ok(());
        };
        let s = slot as usize;
        match o.step(inflight) {
            Step::Park => o.parked.push(slot),
            Step::Flush => {
                // Nothing else is issued until it completes.
                o.parked.append(&mut self.io.free);
                self.unflushed = 0;
                self.io.intended_ts[s] = self.last_ts;
                self.queue_one(slot, self.flush_op, 0, 0, 0)?;
            }
            Step::Write { off, len } => {
                self.io.intended_ts[s] = self.last_ts;
                self.data.next(&mut self.eng.buffer(s)[..len as usize]);
                self.queue_one(slot, Op::Write, off, len, 0)?;
            }
        }
        self.flush_every = self
            .ordered
            .as_ref()
            .map_or(self.flush_every, Ordered::gate);
        Ok(())
    }

    /// `--group-commit`: the write just completed is made durable by a
    /// flush shared with the target's other threads (one in flight at a
    /// time); the wait is this commit's flush latency. Out of line: once
    /// per commit, which waits for a flush anyway.
    #[cold]
    #[inline(never)]
    fn commit_in_group(&mut self, slot: u32) -> anyhow::Result<()> {
        let Some(g) = self.ctx.group.clone() else {
            return Ok(());
        };
        let (op, fd) = (self.flush_op, self.hint_file);
        let t0 = now_ns();
        let c = g.commit(|| crate::platform::io::flush_file(fd, op));
        let now = now_ns();
        self.last_ts = now;
        let s = slot as usize;
        self.io.free.push(slot);
        if let super::groupcommit::Commit::Led(r) = c {
            if r < 0 {
                (self.io.op[s], self.io.off[s], self.io.len[s]) = (op, 0, 0);
                self.failed(s, r);
                return Ok(());
            }
        }
        if self.win.measuring && !self.stopping {
            self.cur.flush.record(now.saturating_sub(t0), 0);
            g.commits.fetch_add(1, Ordering::Relaxed);
            if c != super::groupcommit::Commit::Joined {
                g.flushes.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// Whether the read at `off`, just drawn, is one the database's cache
    /// serves (`--db-cache`), counted in the window. Out of line: runs
    /// without a cache never call it.
    #[cold]
    #[inline(never)]
    fn cache_hit(&mut self, off: u64) -> bool {
        if !self.gen.cached_read(off) {
            return false;
        }
        if self.win.measuring && !self.stopping && self.measured_ios < self.io_limit {
            self.cache_hits += 1;
        }
        true
    }

    /// Waits for every I/O in flight and records it. Out of line and with the
    /// one `complete` call outside the loop's, so `complete` stays inlined in
    /// the loop (a third call site made the compiler call it: 479 to 500
    /// instructions per I/O, bench/instructions.py, 2026-12-01).
    #[cold]
    #[inline(never)]
    fn drain(&mut self) -> anyhow::Result<()> {
        while self.io.inflight > 0 {
            let n = self.eng.reap(1, &mut self.io.comps)?;
            self.complete(n, now_ns());
        }
        Ok(())
    }

    /// Queues an I/O for every free slot the pacer allows; returns whether
    /// a slot is left free because the pacer said not yet.
    #[inline]
    fn issue(&mut self) -> anyhow::Result<bool> {
        let mut waiting = false;
        self.blocked = false;
        let bs = self.bs;
        while let Some(slot) = self.io.free.pop() {
            let s = slot as usize;
            if self.unflushed >= self.flush_every {
                // The writes before it are issued: flush (fio's fsync=N). Not
                // paced: a rate cap counts reads and writes.
                if self.ordered.is_some() {
                    self.ordered_step(slot)?;
                    continue;
                }
                self.unflushed = 0;
                if self.ctx.group.is_some() {
                    // At QD 1 the write is complete (its slot is free).
                    self.commit_in_group(slot)?;
                    continue;
                }
                self.io.intended_ts[s] = self.last_ts;
                self.queue_one(slot, self.flush_op, 0, 0, 0)?;
                continue;
            }
            if let Some(p) = &mut self.pacer {
                let now = now_ns();
                let due = p.due();
                if now < due {
                    self.io.free.push(slot);
                    waiting = true;
                    break;
                }
                // Open loop: latency also counts from when it should have started.
                self.io.intended_ts[s] = due;
                let burst = p.issued(now);
                self.gen.in_burst(burst);
            }
            let (off, write, len, class) = match &mut self.verify {
                None => {
                    let io = self.gen.next_sized();
                    (io.offset, io.write, io.len as u32, io.class)
                }
                // --verify runs one block size (--bssplit is refused with it).
                Some(v) => match v.next(s, &mut self.gen) {
                    Some((off, write)) => (off, write, bs, 0),
                    None => {
                        self.io.free.push(slot);
                        self.blocked = true;
                        break;
                    }
                },
            };
            let op = if write {
                self.unflushed += 1;
                self.unhinted += 1;
                if self.unhinted > self.hint_every {
                    self.start_writeback()?;
                }
                Op::Write
            } else {
                if self.gen.caches_reads() && self.cache_hit(off) {
                    // Served by the database's cache: no I/O; a rate cap
                    // counted it (the database's page requests).
                    self.io.free.push(slot);
                    continue;
                }
                Op::Read
            };
            if let Some(v) = &mut self.verify {
                // The stamp or check below is a crc32c over the block: time
                // for an engine to bring the target's memory in meanwhile.
                self.eng.will_queue(0, off, len);
                let buf = &mut self.eng.buffer(s)[..len as usize];
                v.prepare(s, off, write, buf, self.last_ts);
            } else if write {
                self.data.next(&mut self.eng.buffer(s)[..len as usize]);
            }
            self.queue_one(slot, op, off, len, class)?;
        }
        if !self.sync && !self.io.pending.is_empty() {
            // Submitted by the reap below, right after this stamp.
            self.io.stamp_pending();
        }
        Ok(waiting)
    }

    /// Hands one request in `slot` to the engine (its buffer is ready).
    #[inline(always)]
    fn queue_one(
        &mut self,
        slot: u32,
        op: Op,
        off: u64,
        len: u32,
        class: u8,
    ) -> anyhow::Result<()> {
        let s = slot as usize;
        self.io.off[s] = off;
        self.io.op[s] = op;
        self.io.len[s] = len;
        self.io.class[s] = class;
        if self.sync {
            self.io.submit_ts[s] = self.last_ts;
        }
        self.eng.queue(IoReq {
            slot,
            file: 0,
            op,
            offset: off,
            len,
        })?;
        self.io.inflight += 1;
        if !self.sync {
            self.io.pending.push(slot);
            if self.io.pending.len() >= self.submit_batch {
                // A group is full: stamp it and hand it to the kernel now.
                self.io.stamp_pending();
                self.eng.commit()?;
            }
        }
        Ok(())
    }

    /// Waits for completions (or, paced with nothing in flight, for the next
    /// start); `None` when there is nothing left to wait for.
    #[inline]
    fn wait(&mut self, waiting: bool) -> anyhow::Result<Option<usize>> {
        let paced_wait = if waiting { self.pacer.as_ref() } else { None };
        if self.io.inflight == 0 && self.blocked && !self.stopping {
            // --verify: other workers are writing every block this one drew.
            std::thread::yield_now();
            return Ok(Some(0));
        }
        if self.io.inflight == 0 {
            let Some(p) = paced_wait else {
                return Ok(None);
            };
            // Nothing in flight: sleep until the next I/O is due, the interval
            // ends or the run ends, in steps short enough to notice a stop.
            let now = now_ns();
            let until = p.due().min(self.win.next_boundary).min(self.win.end);
            let nap = until.saturating_sub(now).min(MAX_NAP_NS);
            if nap > 0 {
                std::thread::sleep(Duration::from_nanos(nap));
            }
            Ok(Some(0))
        } else if let Some(p) = paced_wait {
            let wait = p.due().saturating_sub(now_ns());
            Ok(Some(self.eng.reap_timeout(1, &mut self.io.comps, wait)?))
        } else {
            Ok(Some(self.eng.reap(1, &mut self.io.comps)?))
        }
    }

    /// Records the first `n` completions, stamped `now`. Always inlined: it
    /// is the per-I/O path, and called from the loop and from `drain` the
    /// compiler had stopped inlining it (479 to 500 instructions per I/O).
    #[inline(always)]
    fn complete(&mut self, n: usize, now: u64) {
        for i in 0..n {
            let c = self.io.comps[i];
            let s = c.slot as usize;
            self.io.inflight -= 1;
            self.io.free.push(c.slot);
            let len = self.io.len[s];
            let ok = c.result == len as i32;
            if self.io.op[s].is_flush() {
                self.flushed(s, ok, c.result, now);
                continue;
            }
            let counted = match &mut self.verify {
                None => true,
                Some(v) => {
                    let write = self.io.op[s] == Op::Write;
                    let buf = &self.eng.buffer(s)[..len as usize];
                    v.complete(s, self.io.off[s], write, ok, buf)
                }
            };
            if ok {
                // Completions past --number-ios (reaped in the same batch) are not counted.
                if counted
                    && self.win.measuring
                    && !self.stopping
                    && self.measured_ios < self.io_limit
                {
                    let lat = now.saturating_sub(self.io.submit_ts[s]);
                    let write = self.io.op[s] == Op::Write;
                    if write {
                        self.cur.write.record(lat, u64::from(len));
                    } else {
                        self.cur.read.record(lat, u64::from(len));
                    }
                    self.shape.record(
                        write,
                        self.io.class[s],
                        u64::from(len),
                        lat,
                        now.saturating_sub(self.io.intended_ts[s]),
                    );
                    self.measured_ios += 1;
                } else if self.stopping && self.win.measuring {
                    // In flight when the window closed: in no statistic, but
                    // a stall past the end is a stall (issue 24).
                    self.late.record(now.saturating_sub(self.io.submit_ts[s]));
                }
            } else {
                self.failed(s, c.result);
            }
        }
    }

    /// Records the flush in slot `s`, completed `now` (in its own
    /// distribution: not an I/O of `--number-ios`, nor of the size mix).
    /// Out of line: the loop of a workload without flushes stays as small.
    #[inline(never)]
    fn flushed(&mut self, s: usize, ok: bool, result: i32, now: u64) {
        if let Some(o) = self.ordered.as_mut().filter(|o| o.flushing()) {
            // The barrier's flush: the next phase may issue.
            o.flushed();
            self.io.free.append(&mut o.parked);
            self.flush_every = o.gate();
        }
        if !ok {
            self.failed(s, result);
        } else if self.win.measuring && !self.stopping {
            let lat = now.saturating_sub(self.io.submit_ts[s]);
            self.cur.flush.record(lat, 0);
        } else if self.stopping && self.win.measuring {
            self.late.record(now.saturating_sub(self.io.submit_ts[s]));
        }
    }

    /// A flush in slot `s` the file system refused: what works instead.
    #[cold]
    fn flush_refusal(&self, s: usize, result: i32) -> Option<String> {
        let kind = self.ctx.spec.effective_flush()?.kind;
        if self.io.op[s].is_flush() && result < 0 {
            crate::workload::flush_refused(kind, -result)
        } else {
            None
        }
    }

    /// Counts a failed or short I/O in slot `s` and keeps the first few.
    #[cold]
    fn failed(&mut self, s: usize, result: i32) {
        let bs = self.io.len[s];
        self.errors += 1;
        if self.error_records.len() < ERROR_RECORDS_PER_THREAD {
            self.error_records.push(IoErrorRecord {
                target: self.plan.target,
                thread: self.plan.thread,
                op: self.io.op[s].name().into(),
                offset: self.io.off[s],
                len: bs,
                result,
                message: if let Some(m) = self.eng.explain(result) {
                    m
                } else if let Some(m) = self.flush_refusal(s, result) {
                    m
                } else if result < 0 {
                    std::io::Error::from_raw_os_error(-result).to_string()
                } else {
                    format!("short transfer: {result} of {bs} bytes")
                },
            });
        }
        if self.errors >= MAX_ERRORS_PER_THREAD {
            self.stopping = true;
        }
    }

    /// Opens this thread's part of the shared window once its start has
    /// passed, and closes intervals and the window as time passes.
    #[inline]
    fn advance(&mut self, now: u64) {
        if !self.win.measuring {
            let start = self.ctx.window.start();
            if now < start {
                return;
            }
            self.start_measuring(start);
        }
        self.win.end = self.ctx.window.end();
        if now >= self.win.next_boundary || now >= self.win.end {
            self.close_intervals(now);
        }
    }

    /// `--verify`: reads back this worker's share of the written blocks.
    fn verify_pass(&mut self) -> anyhow::Result<()> {
        if let Some(v) = &mut self.verify {
            let slots = self.io.comps.len();
            let (local, n) = (self.plan.local, self.plan.threads_on_target);
            v.pass(self.eng.as_mut(), slots, local, n, &self.ctx.stop)?;
        }
        Ok(())
    }

    /// What this thread measured.
    fn finish(mut self, cpu_used: Option<usize>) -> WorkerOut {
        // Anything the engine learnt during the run (a target truncated under it).
        let mut late = self.eng.notes();
        if let Some(g) = &self.ctx.group {
            late.extend(g.note(self.plan.threads_on_target, self.flush_op.name()));
        }
        if !late.is_empty() {
            if let Ok(mut n) = self.ctx.notes.lock() {
                n.extend(late);
            }
        }
        let ru1 = cpu::rusage(true);
        let ru0 = if self.win.measuring {
            self.win.ru0
        } else {
            ru1
        };
        let wait_ns = if self.win.measuring {
            let end = self.win.wait1.or_else(procs::thread_run_delay_ns);
            self.win.wait0.zip(end).map(|(a, b)| b.saturating_sub(a))
        } else {
            Some(0)
        };
        if self.win.measuring && self.win.measure_end == 0 {
            // Stopped by its own errors inside the window.
            self.win.measure_end = self.last_ts.min(self.win.end).max(self.win.start);
        }
        if let Some(h) = self.held.take() {
            // Stopped by its own errors with intervals held back: the series gets them.
            let _ = self.ctx.tx.send(h);
        }
        self.whole.merge(&self.cur);
        WorkerOut {
            target: self.plan.target,
            thread: self.plan.thread,
            cpu: cpu_used,
            duration_ns: if self.win.measuring {
                self.win.measure_end - self.win.start
            } else {
                0
            },
            user_s: ru1.0 - ru0.0,
            sys_s: ru1.1 - ru0.1,
            wait_ns,
            stats: self.whole,
            errors: self.errors,
            error_records: self.error_records,
            first_ts: self.win.first_ts,
            noticed_end_ts: self.win.noticed_end_ts,
            skew: self.gen.skew_counts(),
            slots: self.gen.slots(),
            cache: self.ctx.spec.shape.db_cache.map(|c| {
                // The region the reads draw from (a doublewrite area is not theirs).
                let len = Ordered::own_len(self.ctx.spec.doublewrite, self.ctx.region_len);
                let dist = self.ctx.spec.distribution_for(self.plan.target);
                (
                    self.cache_hits,
                    c.share_of(len),
                    c.expected_hit_ratio(dist, self.gen.slots(), len),
                )
            }),
            shape: self.shape,
            verify: self.verify.map(|v| v.counts),
            late: self.late,
        }
    }
}
