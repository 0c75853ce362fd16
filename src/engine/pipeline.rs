//! The I/O pipeline: one drive loop for an engine, shared by every caller
//! that keeps I/Os in flight (the test-file fill, `run --verify`'s verify
//! pass, `crash verify`, `replay`, the simulator's users).
//!
//! The pipeline owns the slots (which are free, which carry an I/O and
//! what it asked for), the queue, commit and reap calls, the stop flag, the
//! waiting for a due time, drain-on-error and the reading of a result
//! ([`Done::outcome`]). The caller owns the policy: what to submit next and
//! what a completion means. It says so through a [`Driver`]:
//! [`Driver::next`] prepares the slot's buffer and returns the next request
//! ([`Next`]), [`Driver::complete`] gets each completion.
//!
//! # Contract
//!
//! - **Slots.** Every slot starts free. [`Driver::next`] is offered a free
//!   slot (the lowest-numbered first on a fresh pipeline, then the most
//!   recently freed); the buffer is the caller's to prepare until it returns
//!   [`Next::Io`], then the engine's until [`Driver::complete`] has returned
//!   for it. A completed slot is free again when `complete` returns, or, for
//!   a pipeline that [holds its slots](Pipeline::hold_slots), at
//!   [`Pipeline::release_all`]. At most [`Pipeline::depth`] I/Os are in
//!   flight; slots beyond the depth are spares (below).
//! - **Order.** Requests go to the engine in the order `next` returns them;
//!   completions reach `complete` in the order the engine reports them.
//!   After every queue the pipeline commits once `commit_every` requests are
//!   queued (`1`: each I/O goes to the device as soon as it is ready; `0`:
//!   never, the reap submits). On an engine that completes an I/O inside
//!   `queue` (sync, mmap, null) the completion is handed over right after
//!   its queue, so such a caller sees one I/O at a time, in order.
//! - **Spares.** With more slots than the depth, completions are reaped,
//!   the next requests issued into spare slots, and only then the
//!   completions handed over: the device keeps its queue while the caller
//!   checks what came back.
//! - **Waiting.** [`Next::Wait`] says the next I/O is due at a time: the
//!   pipeline waits for completions until then (or, with nothing in flight,
//!   sleeps), in slices of at most [`MAX_NAP_NS`], and asks again.
//!   [`Next::Later`] says nothing is to be issued until a completion comes;
//!   with nothing in flight it ends the run like [`Next::End`], as does a
//!   pipeline that holds its slots once every slot is held and none is in
//!   flight (nothing can be issued any more: give it enough slots). When it
//!   wants to issue and every slot is busy, it calls [`Driver::all_busy`]
//!   once, then waits for a completion.
//! - **Stop.** The stop flag is read before every [`Driver::next`]; once it
//!   is set (Ctrl-C, SIGTERM, another thread's error) nothing more is
//!   issued, the I/Os in flight are reaped and handed over, and the run ends
//!   with [`Ended::Stopped`]. A wait for a due time notices the flag within
//!   [`MAX_NAP_NS`]. After the driver has said [`Next::End`] the flag is no
//!   longer read: what is in flight completes and the run ends with
//!   [`Ended::Done`].
//! - **Short transfers and errors of an I/O** are completions like any
//!   other: [`Done::outcome`] tells a full transfer from a short one and
//!   from an errno; the caller decides what they mean (the pipeline never
//!   retries or resubmits the rest of a short transfer).
//! - **Errors of the engine or the driver.** A failed `queue`, `commit` or
//!   `reap`, or an error returned by [`Driver::complete`], ends the run with
//!   that error, after the I/Os still in flight have been reaped (their
//!   results are dropped), so the engine can be used again. A failed
//!   `queue` first goes to [`Driver::queue_failed`], which may instead keep
//!   the run going (the simulator reports it as that I/O's result). If the
//!   engine fails while draining, the drain stops there; drop the engine,
//!   which waits for its I/Os itself.
//! - **Drop with I/O in flight.** A panic in the driver unwinds through
//!   [`Pipeline::run`], which reaps what is in flight before the panic goes
//!   on: no slot is left with the kernel when the caller's buffers or the
//!   engine go away, and the engine holds no stale completion.
//! - **Timing** ([`Pipeline::timed`]): each completion carries its latency:
//!   the `queue` call itself on an engine that does the I/O there one at a
//!   time ([`super::Capabilities::timed_in_queue`]), else from just before
//!   its `queue` to the reap that returned it (one clock read per reap).
//!
//! # Not the runner's hot loop
//!
//! `iosim run`'s worker (`runner/worker.rs`) keeps its own loop, whose cost
//! per I/O the instruction guard pins (`bench/instructions.py`: 475
//! instructions per I/O on the null engine, 2% is about 10 instructions).
//! That loop does what no caller here needs, per I/O or per batch: one
//! clock read stamps a whole submission group between its queues and its
//! commit (`--submit-batch`); every free slot is queued before one reap,
//! also on the null engine, whose completions this pipeline hands over one
//! at a time (the guard's figure is that batched path); completions are
//! stamped once per reap for the interval statistics and the window's
//! phase moves on before they are recorded; a paced wait ends at the
//! interval boundary as well as the due time; after the window closes the
//! worker keeps reaping to time the late I/Os; and `--verify` can leave a
//! slot idle (a yield) when every block drawn is busy. Each of those would
//! be a branch or a per-slot store on every I/O of every caller here, and
//! the one-at-a-time hand-over alone changes the null engine's figure, so
//! the worker was not moved onto the pipeline (not measured: the guard's
//! release build was not run for a conversion that was not written). Move
//! it only with the guard's figure before and after.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::{Completion, IoEngine, IoReq, Op};
use crate::clock::{now_ns, MAX_NAP_NS};

/// Waits for a due time longer than this sleep (less half of it); shorter
/// ones spin, so an I/O starts on time.
const SPIN_NS: u64 = 200_000;

/// The errno of an engine's error (EIO when it carries none).
pub fn errno(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(crate::platform::errno::EIO)
}

/// One request, as [`Driver::next`] returns it (the slot is the one offered).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Io {
    /// Index of the file in the engine's file table.
    pub file: u32,
    /// Direction.
    pub op: Op,
    /// Byte offset in the file.
    pub offset: u64,
    /// Bytes to transfer.
    pub len: u32,
    /// Slots the request spans: 1 for a plain request; more for a vectored
    /// one over the offered slot and the `span - 1` after it, each carrying
    /// `len / span` bytes (they must be free and next in line, as on a
    /// fresh pipeline that holds its slots).
    pub span: u32,
}

impl Io {
    /// A plain request of `len` bytes at `offset` of `file`.
    pub fn new(file: u32, op: Op, offset: u64, len: u32) -> Io {
        Io {
            file,
            op,
            offset,
            len,
            span: 1,
        }
    }

    /// A vectored request over `span` slots of `piece` bytes each.
    pub fn vectored(file: u32, op: Op, offset: u64, span: u32, piece: u32) -> Io {
        Io {
            file,
            op,
            offset,
            len: span * piece,
            span: span.max(1),
        }
    }
}

/// What the driver wants next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Issue this request from the slot offered (its buffer is prepared).
    Io(Io),
    /// The next I/O is due at this time ([`now_ns`] clock): wait and ask again.
    Wait(u64),
    /// Nothing to issue until an I/O in flight completes.
    Later,
    /// Nothing more to issue: let what is in flight complete and end.
    End,
}

/// How an I/O ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transfer {
    /// Every byte asked for moved.
    Full,
    /// Fewer bytes than asked moved (this many).
    Short(u32),
    /// It failed with this errno.
    Failed(i32),
}

/// A completed request, with what it asked for.
#[derive(Clone, Copy, Debug)]
pub struct Done {
    /// The slot (the first of a vectored request's).
    pub slot: u32,
    /// Bytes transferred, or a negated errno, as the engine gave it.
    pub result: i32,
    /// The file.
    pub file: u32,
    /// Direction.
    pub op: Op,
    /// Byte offset.
    pub offset: u64,
    /// Bytes asked for.
    pub len: u32,
    /// Slots it spans.
    pub span: u32,
    /// Latency, ns (a [timed](Pipeline::timed) pipeline; else 0).
    pub lat_ns: u64,
    /// When it was reaped ([`now_ns`] clock; a timed pipeline, else 0).
    pub at_ns: u64,
}

impl Done {
    /// Full, short or failed.
    #[inline]
    pub fn outcome(&self) -> Transfer {
        if self.result == self.len as i32 {
            Transfer::Full
        } else if self.result < 0 {
            Transfer::Failed(-self.result)
        } else {
            Transfer::Short(self.result as u32)
        }
    }

    /// True when every byte asked for moved.
    #[inline]
    pub fn full(&self) -> bool {
        self.result == self.len as i32
    }
}

/// Why a run ended (without an error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The driver said [`Next::End`] and every I/O completed.
    Done,
    /// The stop flag was set: nothing more was issued; what was in flight completed.
    Stopped,
}

/// The engine's buffers as a driver sees them: it prepares a request's
/// buffer in [`Driver::next`] and reads a completion's in
/// [`Driver::complete`]; queueing and reaping are the pipeline's.
pub struct Buffers<'a> {
    eng: &'a mut dyn IoEngine,
}

impl Buffers<'_> {
    /// The buffer of `slot`.
    #[inline]
    pub fn get(&mut self, slot: u32) -> &mut [u8] {
        self.eng.buffer(slot as usize)
    }

    /// [`IoEngine::will_queue`].
    #[inline]
    pub fn will_queue(&mut self, file: u32, offset: u64, len: u32) {
        self.eng.will_queue(file, offset, len);
    }

    /// [`IoEngine::explain`].
    pub fn explain(&self, result: i32) -> Option<String> {
        self.eng.explain(result)
    }
}

/// The caller's side of a pipeline: what to submit, what a completion means.
pub trait Driver {
    /// What `complete` may fail with; an engine's error becomes one.
    type Error: From<io::Error>;

    /// The next request for free `slot` (prepare its buffer first), or why there is none.
    fn next(&mut self, slot: u32, bufs: &mut Buffers<'_>) -> Next;

    /// One completion. An error ends the run (after a drain).
    fn complete(&mut self, done: &Done, bufs: &mut Buffers<'_>) -> Result<(), Self::Error>;

    /// The pipeline wants to issue but every slot is busy; it waits for a
    /// completion next. Called once per such wait.
    fn all_busy(&mut self) {}

    /// `queue` refused the request of `slot` (`at_ns`: when, for a timed
    /// pipeline). An error (the default: the engine's) ends the run; `Ok`
    /// counts the request as done and goes on (the slot is free again).
    fn queue_failed(&mut self, slot: u32, at_ns: u64, e: io::Error) -> Result<(), Self::Error> {
        let _ = (slot, at_ns);
        Err(e.into())
    }
}

/// What a slot carries while its request is in flight.
#[derive(Clone, Copy, Debug)]
struct Flight {
    file: u32,
    op: Op,
    offset: u64,
    len: u32,
    span: u32,
    /// Just before its queue (timed); or, timed in queue, the queue's duration.
    t0: u64,
}

/// One engine's drive loop; see the module documentation for the contract.
/// Allocated once (per slot bookkeeping), run as often as wanted.
pub struct Pipeline {
    slots: usize,
    free: Vec<u32>,
    flight: Vec<Flight>,
    comps: Vec<Completion>,
    iov: Vec<(usize, usize)>,
    inflight: usize,
    depth: usize,
    commit_every: usize,
    queued: usize,
    hold: bool,
    timed: bool,
}

impl Pipeline {
    /// A pipeline over `slots` slots (the engine's), all of them in flight
    /// at most, committing after every request, not timed.
    pub fn new(slots: usize) -> Pipeline {
        let slots = slots.max(1);
        Pipeline {
            slots,
            free: (0..slots as u32).rev().collect(),
            flight: vec![
                Flight {
                    file: 0,
                    op: Op::Read,
                    offset: 0,
                    len: 0,
                    span: 1,
                    t0: 0,
                };
                slots
            ],
            comps: vec![Completion::default(); slots],
            iov: Vec::with_capacity(slots),
            inflight: 0,
            depth: slots,
            commit_every: 1,
            queued: 0,
            hold: false,
            timed: false,
        }
    }

    /// At most `depth` I/Os in flight (1 at least, the slots at most); the
    /// other slots are spares.
    pub fn depth(mut self, depth: usize) -> Pipeline {
        self.depth = depth.clamp(1, self.slots);
        self
    }

    /// I/Os in flight at most.
    pub fn max_in_flight(&self) -> usize {
        self.depth
    }

    /// Commits after every `n` queued requests (`0`: never; the reap submits).
    pub fn commit_every(mut self, n: usize) -> Pipeline {
        self.commit_every = n;
        self
    }

    /// Gives each completion its latency and reap time.
    pub fn timed(mut self) -> Pipeline {
        self.timed = true;
        self
    }

    /// A completed slot stays taken (its buffer untouched) until
    /// [`Pipeline::release_all`], so slots are offered in order 0, 1, ...
    /// from a release to the next.
    pub fn hold_slots(mut self) -> Pipeline {
        self.hold = true;
        self
    }

    /// Frees every slot (nothing may be in flight: none is between runs).
    pub fn release_all(&mut self) {
        debug_assert_eq!(self.inflight, 0);
        self.free.clear();
        self.free.extend((0..self.slots as u32).rev());
    }

    /// Drives `eng` with `driver` until the driver ends, the stop flag is
    /// set, or an error; see the module documentation.
    pub fn run<D: Driver>(
        &mut self,
        eng: &mut dyn IoEngine,
        stop: Option<&AtomicBool>,
        driver: &mut D,
    ) -> Result<Ended, D::Error> {
        let mut run = Run {
            eager: eng.capabilities().completes_in_queue,
            in_queue: eng.capabilities().timed_in_queue(),
            p: self,
            eng,
            stop,
        };
        run.drive(driver)
    }
}

/// What an attempt to issue came to.
enum Issued {
    /// Every slot (or the depth) is busy.
    Busy,
    Wait(u64),
    Later,
    End,
    Stopped,
}

/// One run: the pipeline and its engine. Dropped with I/O in flight (an
/// error, a panic in the driver), it reaps that I/O first.
struct Run<'a, 'e> {
    p: &'a mut Pipeline,
    eng: &'e mut dyn IoEngine,
    stop: Option<&'a AtomicBool>,
    /// The engine completes I/O inside `queue`: hand it over at once.
    eager: bool,
    /// Time the I/O around its `queue`.
    in_queue: bool,
}

impl Run<'_, '_> {
    fn drive<D: Driver>(&mut self, d: &mut D) -> Result<Ended, D::Error> {
        let (mut ended, mut stopped) = (false, false);
        loop {
            let mut due = None;
            if !ended && !stopped {
                match self.issue(d, true)? {
                    Issued::Busy | Issued::Later => {}
                    Issued::Wait(t) => due = Some(t),
                    Issued::End => ended = true,
                    Issued::Stopped => stopped = true,
                }
            }
            if self.p.inflight == 0 {
                if stopped {
                    return Ok(Ended::Stopped);
                }
                // Ended, `Later` with nothing to wait for, or (`busy`) every
                // slot held: nothing can come any more.
                let Some(t) = due else {
                    return Ok(Ended::Done);
                };
                self.nap(t);
                continue;
            }
            let n = match due {
                Some(t) => {
                    let wait = t.saturating_sub(now_ns()).min(MAX_NAP_NS);
                    self.eng.reap_timeout(1, &mut self.p.comps, wait)?
                }
                None => self.eng.reap(1, &mut self.p.comps)?,
            };
            if n == 0 {
                continue;
            }
            let at = if self.p.timed { now_ns() } else { 0 };
            self.p.inflight -= n;
            if self.p.depth < self.p.slots && !ended && !stopped {
                // Spares: the device gets its next requests before the
                // caller looks at these.
                match self.issue(d, false)? {
                    Issued::End => ended = true,
                    Issued::Stopped => stopped = true,
                    _ => {}
                }
            }
            for i in 0..n {
                let c = self.p.comps[i];
                self.hand_over(d, c, at)?;
            }
        }
    }

    /// Issues requests into free slots while the driver has them.
    #[inline]
    fn issue<D: Driver>(&mut self, d: &mut D, main: bool) -> Result<Issued, D::Error> {
        loop {
            if self.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                return Ok(Issued::Stopped);
            }
            if self.p.inflight >= self.p.depth || self.p.free.is_empty() {
                if main {
                    d.all_busy();
                }
                return Ok(Issued::Busy);
            }
            let slot = self.p.free.pop().expect("a free slot");
            let next = d.next(
                slot,
                &mut Buffers {
                    eng: &mut *self.eng,
                },
            );
            let io = match next {
                Next::Io(io) => io,
                other => {
                    self.p.free.push(slot);
                    return Ok(match other {
                        Next::Wait(t) => Issued::Wait(t),
                        Next::Later => Issued::Later,
                        _ => Issued::End,
                    });
                }
            };
            self.queue(d, slot, io)?;
        }
    }

    /// Queues (and commits, as asked) one request.
    #[inline]
    fn queue<D: Driver>(&mut self, d: &mut D, slot: u32, io: Io) -> Result<(), D::Error> {
        let s = slot as usize;
        if io.span > 1 {
            // The slots after `slot` are the request's too.
            for k in 1..io.span {
                let next = self.p.free.pop();
                assert_eq!(
                    next,
                    Some(slot + k),
                    "a vectored request needs the slots after the one offered free and next in line"
                );
            }
        }
        let t0 = if self.p.timed { now_ns() } else { 0 };
        self.p.flight[s] = Flight {
            file: io.file,
            op: io.op,
            offset: io.offset,
            len: io.len,
            span: io.span,
            t0,
        };
        let r = if io.span > 1 {
            let piece = (io.len / io.span) as usize;
            self.p.iov.clear();
            self.p
                .iov
                .extend((0..io.span as usize).map(|k| (s + k, piece)));
            self.eng
                .queue_vectored(slot, io.file, io.op, io.offset, &self.p.iov)
        } else {
            self.eng.queue(IoReq {
                slot,
                file: io.file,
                op: io.op,
                offset: io.offset,
                len: io.len,
            })
        };
        if let Err(e) = r {
            let at = if self.p.timed { now_ns() } else { 0 };
            self.free_slots(slot, io.span);
            return d.queue_failed(slot, at, e);
        }
        if self.p.timed && self.in_queue {
            self.p.flight[s].t0 = now_ns().saturating_sub(t0);
        }
        self.p.inflight += 1;
        self.p.queued += 1;
        if self.p.commit_every > 0 && self.p.queued >= self.p.commit_every {
            self.p.queued = 0;
            self.eng.commit()?;
        }
        if self.eager {
            // Done inside `queue`: hand it over now, one I/O at a time.
            let n = self.eng.reap(1, &mut self.p.comps[..1])?;
            let at = if self.p.timed { now_ns() } else { 0 };
            self.p.inflight -= n;
            if n == 1 {
                let c = self.p.comps[0];
                self.hand_over(d, c, at)?;
            }
        }
        Ok(())
    }

    /// Gives one completion (already counted out of flight) to the driver,
    /// then frees its slots.
    #[inline]
    fn hand_over<D: Driver>(&mut self, d: &mut D, c: Completion, at: u64) -> Result<(), D::Error> {
        let f = self.p.flight[c.slot as usize];
        let lat_ns = if !self.p.timed {
            0
        } else if self.in_queue {
            f.t0
        } else {
            at.saturating_sub(f.t0)
        };
        let done = Done {
            slot: c.slot,
            result: c.result,
            file: f.file,
            op: f.op,
            offset: f.offset,
            len: f.len,
            span: f.span,
            lat_ns,
            at_ns: at,
        };
        let r = d.complete(
            &done,
            &mut Buffers {
                eng: &mut *self.eng,
            },
        );
        self.free_slots(c.slot, f.span);
        r
    }

    fn free_slots(&mut self, slot: u32, span: u32) {
        if !self.p.hold {
            for k in (0..span).rev() {
                self.p.free.push(slot + k);
            }
        }
    }

    /// Nothing in flight and the next I/O due at `t`: sleeps (or spins,
    /// close to it) for one slice.
    fn nap(&self, t: u64) {
        let now = now_ns();
        if now >= t {
            return;
        }
        let wait = (t - now).min(MAX_NAP_NS);
        if wait > SPIN_NS {
            std::thread::sleep(Duration::from_nanos(wait - SPIN_NS / 2));
        } else {
            std::hint::spin_loop();
        }
    }
}

impl Drop for Run<'_, '_> {
    /// Reaps whatever is still in flight (after an error, or while a panic
    /// unwinds), dropping the results, so the engine holds no I/O of this
    /// run. An engine that fails here is left as it is.
    fn drop(&mut self) {
        while self.p.inflight > 0 {
            match self.eng.reap(1, &mut self.p.comps) {
                Ok(n) => {
                    self.p.inflight -= n.min(self.p.inflight);
                    for i in 0..n {
                        let c = self.p.comps[i];
                        let span = self.p.flight[c.slot as usize].span;
                        self.free_slots(c.slot, span);
                    }
                }
                Err(_) => {
                    self.p.inflight = 0;
                    break;
                }
            }
        }
        self.p.queued = 0;
    }
}

#[cfg(test)]
mod tests {
    //! The pipeline's contract, on a made-up engine whose I/O completes only
    //! when reaped (as io_uring's does) and on the real null and sync engines.
    use super::*;
    use crate::engine::faulty::{Fault, FaultPlan, FaultyEngine};
    use crate::engine::{Capabilities, EngineConfig, NullEngine, SyncEngine};
    use std::sync::Arc;

    /// An engine whose requests complete at the next reap, one per reap
    /// call (`per_reap`), with faults on order.
    struct Lazy {
        bufs: Vec<Vec<u8>>,
        queued: Vec<IoReq>,
        /// Requests queued and not yet reaped.
        outstanding: usize,
        most: usize,
        commits: usize,
        per_reap: usize,
        /// The `n`th queue (from 1) fails.
        fail_queue: Option<usize>,
        queues: usize,
        /// A request at this offset moves half its bytes.
        short_at: Option<u64>,
    }

    impl Lazy {
        fn new(slots: usize) -> Lazy {
            Lazy {
                bufs: vec![vec![0; 512]; slots],
                queued: Vec::new(),
                outstanding: 0,
                most: 0,
                commits: 0,
                per_reap: 1,
                fail_queue: None,
                queues: 0,
                short_at: None,
            }
        }
    }

    impl IoEngine for Lazy {
        fn name(&self) -> &'static str {
            "lazy"
        }
        fn capabilities(&self) -> Capabilities {
            Capabilities {
                completes_in_queue: false,
                needs_commit: true,
                batched: true,
            }
        }
        fn slots(&self) -> usize {
            self.bufs.len()
        }
        fn buffer(&mut self, slot: usize) -> &mut [u8] {
            &mut self.bufs[slot]
        }
        fn queue(&mut self, req: IoReq) -> io::Result<()> {
            self.queues += 1;
            if self.fail_queue == Some(self.queues) {
                return Err(io::Error::from_raw_os_error(crate::platform::errno::EAGAIN));
            }
            self.queued.push(req);
            self.outstanding += 1;
            self.most = self.most.max(self.outstanding);
            Ok(())
        }
        fn commit(&mut self) -> io::Result<()> {
            self.commits += 1;
            Ok(())
        }
        fn reap(&mut self, min: usize, out: &mut [Completion]) -> io::Result<usize> {
            assert!(
                min == 0 || self.outstanding > 0,
                "a reap that would never return"
            );
            let n = self.per_reap.min(out.len()).min(self.queued.len());
            for (o, r) in out.iter_mut().zip(self.queued.drain(..n)) {
                let short = self.short_at == Some(r.offset);
                *o = Completion {
                    slot: r.slot,
                    result: if short {
                        r.len as i32 / 2
                    } else {
                        r.len as i32
                    },
                };
            }
            self.outstanding -= n;
            Ok(n)
        }
    }

    /// What a driver saw, in order.
    #[derive(Clone, Debug, PartialEq, Eq)]
    enum Ev {
        Next(u32, u64),
        Done(u32, u64, Transfer),
        Busy,
    }

    /// Reads `count` requests of 512 bytes at 0, 512, ...; logs what it sees.
    struct Reads {
        count: u64,
        next: u64,
        log: Vec<Ev>,
        /// `complete` fails at the `n`th completion (from 1).
        fail_at: Option<usize>,
        /// `complete` panics at the `n`th completion.
        panic_at: Option<usize>,
        /// Sets this flag at the `n`th call of `next` (from 1).
        stop_at: Option<(u64, Arc<AtomicBool>)>,
        calls: u64,
        done: usize,
    }

    impl Reads {
        fn new(count: u64) -> Reads {
            Reads {
                count,
                next: 0,
                log: Vec::new(),
                fail_at: None,
                panic_at: None,
                stop_at: None,
                calls: 0,
                done: 0,
            }
        }

        fn issued(&self) -> usize {
            self.log
                .iter()
                .filter(|e| matches!(e, Ev::Next(..)))
                .count()
        }
    }

    impl Driver for Reads {
        type Error = anyhow::Error;

        fn next(&mut self, slot: u32, bufs: &mut Buffers<'_>) -> Next {
            self.calls += 1;
            if let Some((at, flag)) = &self.stop_at {
                if self.calls == *at {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            if self.next == self.count {
                return Next::End;
            }
            bufs.get(slot)[0] = 1;
            let off = self.next * 512;
            self.next += 1;
            self.log.push(Ev::Next(slot, off));
            Next::Io(Io::new(0, Op::Read, off, 512))
        }

        fn complete(&mut self, d: &Done, _: &mut Buffers<'_>) -> anyhow::Result<()> {
            self.done += 1;
            self.log.push(Ev::Done(d.slot, d.offset, d.outcome()));
            if self.panic_at == Some(self.done) {
                panic!("the driver panics on purpose");
            }
            if self.fail_at == Some(self.done) {
                anyhow::bail!("the driver fails on purpose");
            }
            Ok(())
        }

        fn all_busy(&mut self) {
            self.log.push(Ev::Busy);
        }
    }

    #[test]
    fn requests_go_in_order_through_free_slots_at_most_depth_in_flight() {
        let mut eng = Lazy::new(4);
        let mut d = Reads::new(10);
        let mut p = Pipeline::new(4);
        assert_eq!(p.run(&mut eng, None, &mut d).unwrap(), Ended::Done);
        let offsets: Vec<u64> = d
            .log
            .iter()
            .filter_map(|e| match e {
                Ev::Next(_, o) => Some(*o),
                _ => None,
            })
            .collect();
        assert_eq!(offsets, (0..10).map(|i| i * 512).collect::<Vec<_>>());
        assert_eq!((d.done, eng.most, eng.outstanding), (10, 4, 0));
        // Slots 0..3 first, then each freed slot again.
        assert_eq!(
            &d.log[..4],
            &[0, 1, 2, 3].map(|s| Ev::Next(s, s as u64 * 512))
        );
        assert_eq!(d.log[4], Ev::Busy);
        assert_eq!(d.log[5], Ev::Done(0, 0, Transfer::Full));
        assert_eq!(d.log[6], Ev::Next(0, 4 * 512));
        assert_eq!(eng.commits, 10, "a commit after every request");
        // Commits in groups, or none (the reap submits).
        let (mut eng, mut d) = (Lazy::new(4), Reads::new(10));
        Pipeline::new(4)
            .commit_every(0)
            .run(&mut eng, None, &mut d)
            .unwrap();
        assert_eq!((eng.commits, d.done), (0, 10));
        let (mut eng, mut d) = (Lazy::new(4), Reads::new(10));
        Pipeline::new(4)
            .depth(2)
            .commit_every(2)
            .run(&mut eng, None, &mut d)
            .unwrap();
        assert_eq!((eng.commits, eng.most, d.done), (5, 2, 10));
    }

    #[test]
    fn short_transfers_and_errors_are_completions() {
        // A 6 KiB file: the second 4 KiB read is short; the third fails (injected EIO).
        let f = tempfile::tempfile().unwrap();
        f.set_len(6144).unwrap();
        let cfg = EngineConfig {
            fds: vec![crate::platform::io::raw_file(&f)],
            slots: 2,
            slot_size: 4096,
            ..Default::default()
        };
        let plan = FaultPlan::new(vec![Fault::parse("eio:page=2").unwrap()], 1);
        let inner = Box::new(SyncEngine::new(&cfg).unwrap());
        let mut eng = FaultyEngine::new(inner, cfg.fds.clone(), 4096, plan);
        struct Three(u64, Vec<Transfer>);
        impl Driver for Three {
            type Error = io::Error;
            fn next(&mut self, _: u32, _: &mut Buffers<'_>) -> Next {
                if self.0 == 3 {
                    return Next::End;
                }
                self.0 += 1;
                Next::Io(Io::new(0, Op::Read, (self.0 - 1) * 4096, 4096))
            }
            fn complete(&mut self, d: &Done, _: &mut Buffers<'_>) -> io::Result<()> {
                self.1.push(d.outcome());
                Ok(())
            }
        }
        let mut d = Three(0, Vec::new());
        Pipeline::new(2).run(&mut eng, None, &mut d).unwrap();
        assert_eq!(
            d.1,
            [
                Transfer::Full,
                Transfer::Short(2048),
                Transfer::Failed(crate::platform::errno::EIO)
            ]
        );
        // The same on an engine that completes at the reap.
        let mut eng = Lazy::new(2);
        eng.short_at = Some(512);
        let mut d = Reads::new(3);
        Pipeline::new(2).run(&mut eng, None, &mut d).unwrap();
        assert!(d.log.contains(&Ev::Done(1, 512, Transfer::Short(256))));
        assert_eq!(
            errno(&io::Error::from_raw_os_error(
                crate::platform::errno::ENOSPC
            )),
            crate::platform::errno::ENOSPC
        );
        assert_eq!(
            errno(&io::Error::other("no errno")),
            crate::platform::errno::EIO
        );
    }

    #[test]
    fn a_stop_ends_issuing_and_what_is_in_flight_completes() {
        let stop = Arc::new(AtomicBool::new(false));
        let mut eng = Lazy::new(4);
        let mut d = Reads::new(1000);
        d.stop_at = Some((3, stop.clone()));
        let mut p = Pipeline::new(4);
        assert_eq!(
            p.run(&mut eng, Some(&stop), &mut d).unwrap(),
            Ended::Stopped
        );
        assert_eq!((d.issued(), d.done, eng.outstanding), (3, 3, 0));
        // Once the driver has ended, a stop is not read: the run is done.
        stop.store(false, Ordering::Relaxed);
        let mut d = Reads::new(3);
        d.stop_at = Some((4, stop.clone()));
        assert_eq!(p.run(&mut eng, Some(&stop), &mut d).unwrap(), Ended::Done);
        assert_eq!(d.done, 3);
    }

    #[test]
    fn a_stop_is_noticed_while_waiting_for_a_due_time() {
        // A replay's long gap between two traced I/Os: nothing in flight, the next due in an hour.
        struct Gap;
        impl Driver for Gap {
            type Error = io::Error;
            fn next(&mut self, _: u32, _: &mut Buffers<'_>) -> Next {
                Next::Wait(now_ns() + 3_600_000_000_000)
            }
            fn complete(&mut self, _: &Done, _: &mut Buffers<'_>) -> io::Result<()> {
                unreachable!()
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            s2.store(true, Ordering::Relaxed);
        });
        let t0 = std::time::Instant::now();
        let mut eng = Lazy::new(1);
        let r = Pipeline::new(1)
            .run(&mut eng, Some(&stop), &mut Gap)
            .unwrap();
        t.join().unwrap();
        assert_eq!(r, Ended::Stopped);
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    }

    #[test]
    fn an_error_mid_flight_drains_what_is_in_flight() {
        // The driver fails at its second completion with three more in flight.
        let mut eng = Lazy::new(4);
        let mut d = Reads::new(100);
        d.fail_at = Some(2);
        let mut p = Pipeline::new(4);
        let e = p.run(&mut eng, None, &mut d).unwrap_err();
        assert!(e.to_string().contains("on purpose"), "{e}");
        assert_eq!(eng.outstanding, 0, "nothing left in flight");
        assert_eq!(d.done, 2, "drained results are not handed over");
        // The engine refuses a request: the run ends with its error, drained.
        let mut eng = Lazy::new(4);
        eng.fail_queue = Some(3);
        let mut d = Reads::new(100);
        let e = Pipeline::new(4).run(&mut eng, None, &mut d).unwrap_err();
        let io = e.downcast_ref::<io::Error>().expect("the engine's error");
        assert_eq!(io.raw_os_error(), Some(crate::platform::errno::EAGAIN));
        assert_eq!(eng.outstanding, 0);
        // ... unless the driver takes it as that request's result.
        struct Keep(Reads, Vec<i32>);
        impl Driver for Keep {
            type Error = anyhow::Error;
            fn next(&mut self, slot: u32, b: &mut Buffers<'_>) -> Next {
                self.0.next(slot, b)
            }
            fn complete(&mut self, d: &Done, b: &mut Buffers<'_>) -> anyhow::Result<()> {
                self.0.complete(d, b)
            }
            fn queue_failed(&mut self, _: u32, _: u64, e: io::Error) -> anyhow::Result<()> {
                self.1.push(-errno(&e));
                Ok(())
            }
        }
        let mut eng = Lazy::new(4);
        eng.fail_queue = Some(3);
        let mut d = Keep(Reads::new(6), Vec::new());
        Pipeline::new(4).run(&mut eng, None, &mut d).unwrap();
        assert_eq!(
            (d.0.done, d.1.as_slice()),
            (5, &[-crate::platform::errno::EAGAIN][..])
        );
    }

    #[test]
    fn a_panic_with_io_in_flight_reaps_it_first() {
        let mut eng = Lazy::new(4);
        let mut p = Pipeline::new(4);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut d = Reads::new(100);
            d.panic_at = Some(1);
            let _ = p.run(&mut eng, None, &mut d);
        }));
        assert!(r.is_err());
        assert_eq!(eng.outstanding, 0, "no I/O left with the engine");
        // The pipeline and the engine go on: every slot is free again.
        let mut d = Reads::new(8);
        assert_eq!(p.run(&mut eng, None, &mut d).unwrap(), Ended::Done);
        assert_eq!((d.done, eng.most), (8, 4));
    }

    #[test]
    fn spare_slots_take_the_next_requests_before_completions_are_handed_over() {
        // Three slots, two in flight: the spare is issued before the first completion is seen.
        let mut eng = Lazy::new(3);
        let mut d = Reads::new(6);
        Pipeline::new(3)
            .depth(2)
            .run(&mut eng, None, &mut d)
            .unwrap();
        assert_eq!(eng.most, 2);
        assert_eq!(
            &d.log[..5],
            &[
                Ev::Next(0, 0),
                Ev::Next(1, 512),
                Ev::Busy,
                Ev::Next(2, 1024),
                Ev::Done(0, 0, Transfer::Full),
            ]
        );
        assert_eq!(d.done, 6);
    }

    #[test]
    fn engines_that_complete_in_queue_hand_each_io_over_at_once() {
        let cfg = EngineConfig {
            slots: 4,
            slot_size: 512,
            ..Default::default()
        };
        let mut eng = NullEngine::new(&cfg).unwrap();
        let mut d = Reads::new(3);
        Pipeline::new(4)
            .timed()
            .run(&mut eng, None, &mut d)
            .unwrap();
        assert_eq!(
            d.log,
            [
                Ev::Next(0, 0),
                Ev::Done(0, 0, Transfer::Full),
                Ev::Next(0, 512),
                Ev::Done(0, 512, Transfer::Full),
                Ev::Next(0, 1024),
                Ev::Done(0, 1024, Transfer::Full),
            ]
        );
    }

    #[test]
    fn held_slots_are_offered_in_order_and_vectored_requests_span_them() {
        let f = tempfile::tempfile().unwrap();
        f.set_len(8 * 4096).unwrap();
        let cfg = EngineConfig {
            fds: vec![crate::platform::io::raw_file(&f)],
            slots: 4,
            slot_size: 4096,
            ..Default::default()
        };
        let mut eng = SyncEngine::new(&cfg).unwrap();
        /// Writes pages 0-2 as one vectored request (slots 0-2), then page 3 alone.
        struct Gather(Vec<(u32, u32, Transfer)>, u32);
        impl Driver for Gather {
            type Error = io::Error;
            fn next(&mut self, slot: u32, b: &mut Buffers<'_>) -> Next {
                self.1 += 1;
                match self.1 {
                    1 => {
                        for k in 0..3 {
                            b.get(slot + k).fill(k as u8 + 1);
                        }
                        Next::Io(Io::vectored(0, Op::Write, 0, 3, 4096))
                    }
                    2 => {
                        b.get(slot).fill(9);
                        Next::Io(Io::new(0, Op::Write, 3 * 4096, 4096))
                    }
                    _ => Next::End,
                }
            }
            fn complete(&mut self, d: &Done, _: &mut Buffers<'_>) -> io::Result<()> {
                self.0.push((d.slot, d.span, d.outcome()));
                Ok(())
            }
        }
        let mut p = Pipeline::new(4).hold_slots();
        let mut d = Gather(Vec::new(), 0);
        p.run(&mut eng, None, &mut d).unwrap();
        assert_eq!(d.0, [(0, 3, Transfer::Full), (3, 1, Transfer::Full)]);
        let mut got = vec![0u8; 4 * 4096];
        assert_eq!(
            crate::platform::fs::read_at(&f, &mut got, 0).unwrap(),
            got.len()
        );
        for (page, want) in [1u8, 2, 3, 9].iter().enumerate() {
            assert!(got[page * 4096..(page + 1) * 4096]
                .iter()
                .all(|b| b == want));
        }
        // Held until released: then slot 0 first again.
        p.release_all();
        let mut d = Reads::new(1);
        p.run(&mut eng, None, &mut d).unwrap();
        assert_eq!(d.log[0], Ev::Next(0, 0));
    }

    #[test]
    fn a_timed_pipeline_gives_latencies() {
        let mut eng = Lazy::new(2);
        struct Lat(Vec<(u64, u64)>, u32);
        impl Driver for Lat {
            type Error = io::Error;
            fn next(&mut self, _: u32, _: &mut Buffers<'_>) -> Next {
                self.1 += 1;
                if self.1 > 4 {
                    return Next::End;
                }
                std::thread::sleep(Duration::from_millis(1));
                Next::Io(Io::new(0, Op::Read, 0, 512))
            }
            fn complete(&mut self, d: &Done, _: &mut Buffers<'_>) -> io::Result<()> {
                self.0.push((d.lat_ns, d.at_ns));
                Ok(())
            }
        }
        let mut d = Lat(Vec::new(), 0);
        Pipeline::new(2)
            .timed()
            .run(&mut eng, None, &mut d)
            .unwrap();
        assert_eq!(d.0.len(), 4);
        // The first request waited in the engine while the second was prepared.
        assert!(d.0[0].0 >= 1_000_000, "{:?}", d.0);
        assert!(d.0.iter().all(|&(l, at)| at > l));
    }
}
