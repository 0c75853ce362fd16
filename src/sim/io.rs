//! A simulated user's I/O: page runs read and written through the user's own
//! engine, as one vectored I/O (scatter/gather) or one I/O per page, honouring
//! MaxOutstandingIO and the throttle; every page read is verified, retried and
//! reported.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::files::{SimFile, UNKNOWN_GEN};
use super::{ErrorRecord, Shared, UserKind};
use crate::clock::now_ns;
use crate::engine::pipeline::{errno, Buffers, Done, Driver, Io, Next, Pipeline};
use crate::engine::{IoEngine, Op};
use crate::stats::RwStats;
use crate::verify::{self, ErrorClass, Finding, PageId, PAGE_SIZE};

/// What a user has in flight, for the long-I/O monitor.
#[derive(Debug, Default)]
pub struct Inflight {
    /// I/Os in flight.
    pub count: AtomicU64,
    /// Start (ns, monotonic) of the oldest I/O in flight; 0 when idle.
    pub since_ns: AtomicU64,
}

/// A process-wide counting semaphore (MaxOutstandingIO).
pub struct Semaphore {
    free: std::sync::Mutex<u64>,
    cv: std::sync::Condvar,
    /// Capacity.
    pub max: u64,
}

impl Semaphore {
    /// A semaphore of `max` permits.
    pub fn new(max: u64) -> Semaphore {
        Semaphore {
            free: std::sync::Mutex::new(max),
            cv: std::sync::Condvar::new(),
            max,
        }
    }

    /// Takes `n` permits (at most `max`), waiting as needed.
    pub fn acquire(&self, n: u64) {
        let n = n.min(self.max);
        let mut f = self.free.lock().expect("semaphore lock");
        while *f < n {
            f = self.cv.wait(f).expect("semaphore lock");
        }
        *f -= n;
    }

    /// Returns `n` permits.
    pub fn release(&self, n: u64) {
        let n = n.min(self.max);
        let mut f = self.free.lock().expect("semaphore lock");
        *f += n;
        self.cv.notify_all();
    }
}

/// One user's I/O context.
pub struct UserIo {
    /// The user's engine (owns the page buffers).
    pub engine: Box<dyn IoEngine>,
    /// Shared state.
    pub sh: Arc<Shared>,
    /// Which kind of user.
    pub kind: UserKind,
    /// Name in reports (`RandomUser#2`).
    pub name: String,
    /// Statistics per file (engine index).
    pub per_file: Vec<RwStats>,
    /// Random decisions.
    pub rng: SmallRng,
    /// Start of this user's activity (ns).
    pub started_ns: u64,
    /// The drive loop (slots held from one submission to the next, so
    /// piece `k` of a submission is in slot `k`).
    pipe: Pipeline,
    /// Per slot: the last I/O's result (bytes or -errno) and latency.
    results: Vec<i32>,
    lat: Vec<u64>,
    inflight: Arc<Inflight>,
}

/// One I/O of a batch: pages [first, first + n) of a file, from slot `slot`.
#[derive(Clone, Copy, Debug)]
struct Piece {
    slot: usize,
    first: u64,
    n: usize,
}

impl UserIo {
    /// Creates a user's engine with `slots` buffers of `slot_size` bytes.
    pub fn new(
        sh: &Arc<Shared>,
        kind: UserKind,
        n: usize,
        slots: usize,
        slot_size: usize,
    ) -> anyhow::Result<UserIo> {
        let fds = sh.files.iter().map(|f| f.fd()).collect::<Vec<_>>();
        let cfg = crate::engine::EngineConfig {
            fds: fds.clone(),
            slots,
            slot_size,
            ..Default::default()
        };
        let req = crate::engine::EngineRequest {
            kind: sh.cfg.engine,
            cache: crate::workload::CacheMode::Direct,
            qd: slots as u32,
            sqpoll: false,
            hipri: false,
        };
        let (mut engine, choice) = crate::engine::create(&req, &cfg)?;
        for note in choice.notes {
            sh.note_once(note);
        }
        if let Some(plan) = &sh.faults {
            engine = Box::new(crate::engine::faulty::FaultyEngine::new(
                engine,
                fds,
                PAGE_SIZE,
                plan.clone(),
            ));
        }
        if !sh.cfg.verify {
            // Unverified runs write whatever the buffers hold: make it incompressible once.
            for s in 0..slots {
                crate::buf::fill_random(engine.buffer(s), sh.cfg.seed ^ s as u64);
            }
        }
        let inflight = Arc::new(Inflight::default());
        sh.inflight
            .lock()
            .expect("inflight lock")
            .push(inflight.clone());
        let seed = verify::mix(&[sh.cfg.seed, kind as u64, n as u64]);
        Ok(UserIo {
            engine,
            sh: sh.clone(),
            kind,
            name: format!("{}#{n}", kind.name()),
            per_file: (0..sh.files.len()).map(|_| RwStats::default()).collect(),
            rng: SmallRng::seed_from_u64(seed),
            started_ns: now_ns(),
            pipe: Pipeline::new(slots).commit_every(0).timed().hold_slots(),
            results: vec![0; slots],
            lat: vec![0; slots],
            inflight,
        })
    }

    /// True while the current phase should go on.
    pub fn running(&self) -> bool {
        !self.sh.stop.load(Ordering::Relaxed) && !self.sh.cycle_stop.load(Ordering::Relaxed)
    }

    /// SQLIOSim's throttle for file `f` ([`throttle`]).
    fn throttle(&self, f: &SimFile) {
        throttle(&self.sh, f);
    }

    /// Issues the pieces (vectored when `vectored` and a piece has several
    /// pages), waits for all of them and records statistics. Results (bytes
    /// or -errno) land in `self.results[piece.slot]`.
    fn submit(&mut self, fi: usize, op: Op, pieces: &[Piece], vectored: bool) {
        let sh = self.sh.clone();
        let mut b = Batches {
            sh: &sh,
            fi,
            op,
            pieces,
            vectored,
            next: 0,
            start: 0,
            end: 0,
            outstanding: 0,
            t_sub: 0,
            results: &mut self.results,
            lat: &mut self.lat,
            per_file: &mut self.per_file,
            inflight: &self.inflight,
        };
        self.pipe.release_all();
        while let Err(e) = self.pipe.run(self.engine.as_mut(), None, &mut b) {
            // The engine itself failed: fail what is left of the batch, go on.
            b.fail_batch(errno(&e));
            if b.next >= pieces.len() {
                break;
            }
        }
    }

    fn pieces(&self, first: u64, n: usize, vectored: bool) -> Vec<Piece> {
        if vectored {
            vec![Piece { slot: 0, first, n }]
        } else {
            (0..n)
                .map(|k| Piece {
                    slot: k,
                    first: first + k as u64,
                    n: 1,
                })
                .collect()
        }
    }

    /// Reads pages [first, first + n) of data file `fi` (latched by the
    /// caller) and verifies each against `expect` (generation per page; 0 or
    /// UNKNOWN_GEN = not verified). Returns the number of pages that failed.
    pub fn read_pages(&mut self, fi: usize, first: u64, expect: &[u32]) -> u64 {
        let n = expect.len();
        if n == 0 {
            return 0;
        }
        let verify_on = self.sh.cfg.verify;
        if verify_on {
            for s in 0..n {
                verify::prestamp(&mut self.engine.buffer(s)[..PAGE_SIZE]);
            }
        }
        let vectored = self.sh.cfg.use_scatter_gather && n > 1;
        let pieces = self.pieces(first, n, vectored);
        self.submit(fi, Op::Read, &pieces, vectored);
        let mut failed = 0;
        for p in &pieces {
            let r = self.results[p.slot];
            // A failed or short multi-page I/O is reported once (at its first
            // affected page); its other affected pages are re-read one by one
            // and reported only when that keeps failing.
            let mut io_reported = false;
            for k in 0..p.n {
                let page = p.first + k as u64;
                let g = expect[(page - first) as usize];
                let slot = p.slot + k;
                // Bytes of this page the read delivered.
                let have = if r < 0 {
                    -1
                } else {
                    (r as i64 - (k * PAGE_SIZE) as i64).clamp(0, PAGE_SIZE as i64)
                };
                let finding = if r < 0 {
                    Some(io_finding(r, Op::Read))
                } else if have < PAGE_SIZE as i64 {
                    Some(Finding {
                        class: ErrorClass::ShortRead,
                        detail: format!(
                            "the read returned {r} bytes of {}: this page got {have} of {PAGE_SIZE}",
                            p.n * PAGE_SIZE
                        ),
                    })
                } else if verify_on && g != 0 && g != UNKNOWN_GEN {
                    self.sh.pages_verified.fetch_add(1, Ordering::Relaxed);
                    let (seed, id) = (self.sh.cfg.seed, self.page_id(fi, page, g));
                    verify::check_page(&self.engine.buffer(slot)[..PAGE_SIZE], seed, id).err()
                } else {
                    None
                };
                if let Some(fnd) = finding {
                    if !verify_on
                        && fnd.class != ErrorClass::IoError
                        && fnd.class != ErrorClass::ShortRead
                    {
                        continue;
                    }
                    let io_level = r < 0 || have < PAGE_SIZE as i64;
                    if io_level && io_reported && self.reread_ok(fi, page, g) {
                        continue;
                    }
                    io_reported |= io_level;
                    failed += 1;
                    let received = self.engine.buffer(slot)[..PAGE_SIZE].to_vec();
                    self.retry_and_report(fi, page, g, fnd, received);
                }
            }
        }
        failed
    }

    /// Re-reads one page alone and checks it.
    fn reread_ok(&mut self, fi: usize, page: u64, g: u32) -> bool {
        verify::prestamp(&mut self.engine.buffer(0)[..PAGE_SIZE]);
        self.submit(
            fi,
            Op::Read,
            &[Piece {
                slot: 0,
                first: page,
                n: 1,
            }],
            false,
        );
        let (seed, id) = (self.sh.cfg.seed, self.page_id(fi, page, g));
        self.results[0] == PAGE_SIZE as i32
            && (g == 0
                || g == UNKNOWN_GEN
                || !self.sh.cfg.verify
                || verify::check_page(&self.engine.buffer(0)[..PAGE_SIZE], seed, id).is_ok())
    }

    fn page_id(&self, fi: usize, page: u64, g: u32) -> PageId {
        PageId {
            file_id: self.sh.files[fi].id,
            page,
            generation: u64::from(g),
        }
    }

    /// SQLIOSim's read-retry: re-read the page up to ReadRetries times; report
    /// the first failure either way, as a `read_retry` when a retry read the
    /// expected image (a fault in the read path), else as what it was.
    fn retry_and_report(
        &mut self,
        fi: usize,
        page: u64,
        g: u32,
        first: Finding,
        received: Vec<u8>,
    ) {
        let retried = verify::retry(self.sh.cfg.read_retries, |attempt| {
            if attempt > 1 {
                std::thread::sleep(Duration::from_millis(1));
            }
            Some(self.reread_ok(fi, page, g))
        });
        let (seed, id) = (self.sh.cfg.seed, self.page_id(fi, page, g));
        let mut expected = vec![0u8; PAGE_SIZE];
        let rh = verify::read_header(&received);
        let ts = if rh.magic == verify::PAGE_MAGIC {
            rh.timestamp_ms
        } else {
            0
        };
        verify::build_page(&mut expected, seed, id, ts);
        let io_error = first.class == ErrorClass::IoError;
        let f = &self.sh.files[fi];
        let rec = ErrorRecord {
            expected: Some(id),
            received: (!io_error).then_some(rh),
            ..ErrorRecord::new(
                &self.name,
                f,
                page,
                page * PAGE_SIZE as u64,
                "read",
                first.settle(retried),
            )
        };
        self.sh.report(rec, Some((&expected, &received)));
    }

    /// Writes pages [first, first + gens.len()) of data file `fi` with the
    /// given generations (the caller holds the latches). Failed writes are
    /// retried; returns, per page, whether the write was acknowledged.
    pub fn write_pages(&mut self, fi: usize, first: u64, gens: &[u32]) -> Vec<bool> {
        let n = gens.len();
        let mut ok = vec![true; n];
        if n == 0 {
            return ok;
        }
        for (k, &g) in gens.iter().enumerate() {
            self.build(fi, k, first + k as u64, g);
        }
        let vectored = self.sh.cfg.use_scatter_gather && n > 1;
        let pieces = self.pieces(first, n, vectored);
        self.submit(fi, Op::Write, &pieces, vectored);
        for p in &pieces {
            let r = self.results[p.slot];
            if r == (p.n * PAGE_SIZE) as i32 {
                continue;
            }
            // Retry page by page.
            for k in 0..p.n {
                let page = p.first + k as u64;
                let idx = (page - first) as usize;
                let mut last = r;
                let retried = verify::retry(self.sh.cfg.read_retries.max(1), |_| {
                    self.build(fi, 0, page, gens[idx]);
                    self.submit(
                        fi,
                        Op::Write,
                        &[Piece {
                            slot: 0,
                            first: page,
                            n: 1,
                        }],
                        false,
                    );
                    last = self.results[0];
                    Some(last == PAGE_SIZE as i32)
                });
                if !matches!(retried, verify::Retried::Recovered(_)) {
                    ok[idx] = false;
                    let fnd = if last < 0 {
                        io_finding(last, Op::Write)
                    } else {
                        Finding {
                            class: ErrorClass::IoError,
                            detail: format!("short write: {last} of {PAGE_SIZE} bytes written"),
                        }
                    };
                    let rec = ErrorRecord {
                        expected: Some(self.page_id(fi, page, gens[idx])),
                        ..ErrorRecord::new(
                            &self.name,
                            &self.sh.files[fi],
                            page,
                            page * PAGE_SIZE as u64,
                            "write",
                            fnd.settle(retried),
                        )
                    };
                    self.sh.report(rec, None);
                }
            }
        }
        self.sh
            .pages_written
            .fetch_add(ok.iter().filter(|&&b| b).count() as u64, Ordering::Relaxed);
        ok
    }

    fn build(&mut self, fi: usize, slot: usize, page: u64, g: u32) {
        let id = self.page_id(fi, page, g);
        let buf = &mut self.engine.buffer(slot)[..PAGE_SIZE];
        if self.sh.cfg.verify {
            verify::build_page(buf, self.sh.cfg.seed, id, self.sh.epoch_ms());
        } else {
            verify::build_page_unverified(buf, id);
        }
    }

    /// Writes `len` bytes from slot 0 at `offset` of file `fi` (log blocks).
    /// Returns bytes written or -errno.
    pub fn write_raw(&mut self, fi: usize, offset: u64, len: usize) -> i32 {
        self.raw(fi, Op::Write, offset, len)
    }

    /// Reads `len` bytes into slot 0 from `offset` of file `fi`.
    pub fn read_raw(&mut self, fi: usize, offset: u64, len: usize) -> i32 {
        self.raw(fi, Op::Read, offset, len)
    }

    fn raw(&mut self, fi: usize, op: Op, offset: u64, len: usize) -> i32 {
        // Log blocks are whole sectors inside one slot: one plain I/O.
        debug_assert!(offset % PAGE_SIZE as u64 == 0 || len % 512 == 0);
        let sh = self.sh.clone();
        let f = &sh.files[fi];
        sh.sem.acquire(1);
        self.throttle(f);
        f.io_start();
        let t0 = now_ns();
        self.inflight.since_ns.store(t0, Ordering::Relaxed);
        self.inflight.count.store(1, Ordering::Relaxed);
        match op {
            Op::Read => f.ctr.reads.fetch_add(1, Ordering::Relaxed),
            Op::Write => f.ctr.writes.fetch_add(1, Ordering::Relaxed),
            // The simulator's users read and write pages; files are write-through.
            Op::Fsync | Op::Fdatasync => 0,
        };
        self.pipe.release_all();
        let mut one = One {
            io: Some(Io::new(f.idx, op, offset, len as u32)),
            result: -crate::platform::errno::EIO,
        };
        if let Err(e) = self.pipe.run(self.engine.as_mut(), None, &mut one) {
            one.result = -errno(&e);
        }
        let r = one.result;
        let lat = now_ns() - t0;
        f.io_end(lat);
        self.inflight.count.store(0, Ordering::Relaxed);
        self.inflight.since_ns.store(0, Ordering::Relaxed);
        sh.sem.release(1);
        if r > 0 {
            let st = &mut self.per_file[fi];
            let d = if op == Op::Read {
                &mut st.read
            } else {
                &mut st.write
            };
            d.record(lat, r as u64);
        }
        r
    }

    /// Sleeps `ms`, waking early when the phase ends.
    pub fn nap(&self, ms: u64) {
        let end = now_ns() + ms * 1_000_000;
        while self.running() {
            let now = now_ns();
            if now >= end {
                break;
            }
            std::thread::sleep(Duration::from_nanos((end - now).min(50_000_000)));
        }
    }

    /// A random page run of `min..=max` pages inside data file `fi`.
    pub fn random_run(&mut self, fi: usize, min: u64, max: u64) -> Option<(u64, u64)> {
        let pages = self.sh.files[fi].page_count();
        if pages == 0 {
            return None;
        }
        let len = self.rng.gen_range(min..=max).min(pages);
        let start = self.rng.gen_range(0..=pages - len);
        Some((start, len))
    }

    /// A random data file.
    pub fn random_data_file(&mut self) -> usize {
        let d = &self.sh.data;
        d[self.rng.gen_range(0..d.len())]
    }
}

impl Drop for UserIo {
    fn drop(&mut self) {
        let secs = (now_ns() - self.started_ns) as f64 / 1e9;
        self.sh.merge_stats(self.kind, &self.per_file, secs);
    }
}

/// Waits while the file's running average exceeds the target (SQLIOSim's
/// throttle): at most one I/O in flight to the file until it recovers.
fn throttle(sh: &Shared, f: &SimFile) {
    if sh.burst.load(Ordering::Relaxed) {
        return;
    }
    let target = sh.cfg.target_io_duration_ms as f64;
    if f.running_average_ms() <= target {
        return;
    }
    if f.ctr.outstanding.load(Ordering::Acquire) == 0 {
        return;
    }
    f.ctr.throttled.fetch_add(1, Ordering::Relaxed);
    let deadline = now_ns() + (target * 1e6) as u64 * 10;
    while f.ctr.outstanding.load(Ordering::Acquire) > 0
        && f.running_average_ms() > target
        && now_ns() < deadline
    {
        std::thread::sleep(Duration::from_micros(500));
    }
}

/// One submission of [`UserIo::submit`] as a pipeline driver: its pieces in
/// batches of at most MaxOutstandingIO (the semaphore's permits), each
/// batch issued whole, waited for whole and then recorded.
struct Batches<'a> {
    sh: &'a Shared,
    fi: usize,
    op: Op,
    pieces: &'a [Piece],
    vectored: bool,
    /// The next piece to issue, and the open batch `[start, end)` (`next ==
    /// end`: none open, or all of it issued).
    next: usize,
    start: usize,
    end: usize,
    /// Pieces of the open batch not yet completed.
    outstanding: usize,
    /// When the open batch started.
    t_sub: u64,
    results: &'a mut [i32],
    lat: &'a mut [u64],
    per_file: &'a mut [RwStats],
    inflight: &'a Inflight,
}

impl Batches<'_> {
    /// The batch starts at `start`: its permits, the throttle, the monitor.
    fn open(&mut self, start: usize) {
        let batch = (self.pieces.len() - start)
            .min(self.sh.sem.max as usize)
            .max(1);
        self.sh.sem.acquire(batch as u64);
        throttle(self.sh, &self.sh.files[self.fi]);
        self.t_sub = now_ns();
        self.inflight.since_ns.store(self.t_sub, Ordering::Relaxed);
        self.inflight.count.store(batch as u64, Ordering::Relaxed);
        self.start = start;
        self.end = start + batch;
        self.outstanding = batch;
    }

    /// Every piece of the open batch is done: its statistics, its permits back.
    fn close(&mut self) {
        let f = &self.sh.files[self.fi];
        for p in &self.pieces[self.start..self.end] {
            // A piece never queued took no time.
            let lat = match self.lat[p.slot] {
                u64::MAX => 0,
                l => l,
            };
            f.io_end(lat);
            if self.results[p.slot] > 0 {
                let st = &mut self.per_file[self.fi];
                let d = if self.op == Op::Read {
                    &mut st.read
                } else {
                    &mut st.write
                };
                d.record(lat, self.results[p.slot] as u64);
            }
        }
        self.inflight.count.store(0, Ordering::Relaxed);
        self.inflight.since_ns.store(0, Ordering::Relaxed);
        self.sh.sem.release((self.end - self.start) as u64);
        self.outstanding = 0;
    }

    /// One piece of the open batch is done.
    fn piece_done(&mut self) {
        self.outstanding -= 1;
        if self.outstanding == 0 && self.next == self.end {
            self.close();
        }
    }

    /// The engine failed with `errno`: every piece of the open batch that
    /// was queued fails with it; the batch closes.
    fn fail_batch(&mut self, errno: i32) {
        if self.outstanding == 0 {
            return;
        }
        let now = now_ns();
        for p in &self.pieces[self.start..self.end] {
            if self.lat[p.slot] != u64::MAX {
                self.results[p.slot] = -errno;
                self.lat[p.slot] = now.saturating_sub(self.t_sub);
            }
        }
        self.next = self.end;
        self.close();
    }
}

impl Driver for Batches<'_> {
    type Error = std::io::Error;

    fn next(&mut self, slot: u32, _: &mut Buffers<'_>) -> Next {
        if self.next == self.end {
            if self.outstanding > 0 {
                return Next::Later;
            }
            if self.next >= self.pieces.len() {
                return Next::End;
            }
            self.open(self.next);
        }
        let p = self.pieces[self.next];
        debug_assert_eq!(p.slot, slot as usize, "piece k is in slot k");
        self.next += 1;
        let f = &self.sh.files[self.fi];
        f.io_start();
        let offset = p.first * PAGE_SIZE as u64;
        // Not yet known: a queue that fails leaves u64::MAX (no latency).
        self.lat[p.slot] = 0;
        if self.vectored && p.n > 1 {
            match self.op {
                Op::Read => f.ctr.scatter_reads.fetch_add(1, Ordering::Relaxed),
                Op::Write => f.ctr.gather_writes.fetch_add(1, Ordering::Relaxed),
                Op::Fsync | Op::Fdatasync => 0,
            };
            Next::Io(Io::vectored(
                f.idx,
                self.op,
                offset,
                p.n as u32,
                PAGE_SIZE as u32,
            ))
        } else {
            match self.op {
                Op::Read => f.ctr.reads.fetch_add(1, Ordering::Relaxed),
                Op::Write => f.ctr.writes.fetch_add(1, Ordering::Relaxed),
                Op::Fsync | Op::Fdatasync => 0,
            };
            Next::Io(Io::new(f.idx, self.op, offset, (p.n * PAGE_SIZE) as u32))
        }
    }

    fn complete(&mut self, d: &Done, _: &mut Buffers<'_>) -> std::io::Result<()> {
        let s = d.slot as usize;
        self.results[s] = d.result;
        self.lat[s] = d.lat_ns;
        self.piece_done();
        Ok(())
    }

    /// Not even queued: report it as the I/O's result.
    fn queue_failed(&mut self, slot: u32, _: u64, e: std::io::Error) -> std::io::Result<()> {
        self.results[slot as usize] = -errno(&e);
        self.lat[slot as usize] = u64::MAX;
        self.piece_done();
        Ok(())
    }
}

/// One I/O of [`UserIo::raw`]: its result, or the engine's errno.
struct One {
    io: Option<Io>,
    result: i32,
}

impl Driver for One {
    type Error = std::io::Error;

    fn next(&mut self, _: u32, _: &mut Buffers<'_>) -> Next {
        self.io.take().map_or(Next::End, Next::Io)
    }

    fn complete(&mut self, d: &Done, _: &mut Buffers<'_>) -> std::io::Result<()> {
        self.result = d.result;
        Ok(())
    }

    fn queue_failed(&mut self, _: u32, _: u64, e: std::io::Error) -> std::io::Result<()> {
        self.result = -errno(&e);
        Ok(())
    }
}

fn io_finding(r: i32, op: Op) -> Finding {
    let e = std::io::Error::from_raw_os_error(-r);
    Finding {
        class: ErrorClass::IoError,
        detail: format!(
            "the {} failed: {e}",
            if op == Op::Read { "read" } else { "write" }
        ),
    }
}
