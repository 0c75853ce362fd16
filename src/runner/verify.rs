//! `iosim run --verify` inside a worker: which offset to write (one write
//! per block in flight), stamping each write with the verifiable page format
//! ([`crate::verify::stamp_block`]), judging each read against the target's
//! generation table ([`GenTable`]), `--verify-backlog` re-reads and the
//! verify pass. Per I/O: one compare-and-swap or atomic load, one crc32c
//! over the block, no allocation, no lock. A block that fails its check is
//! re-read (up to [`REREADS`] times, off the hot path) so that a read that
//! returned wrong data once is told from data damaged on the storage.

use crate::platform::io::RawFile;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::buf::AlignedBuf;
use crate::clock::now_ns;
use crate::engine::pipeline::{Buffers, Done, Driver, Io, Next, Pipeline};
use crate::engine::{IoEngine, Op};
use crate::error::Error;
use crate::verify::run::{Phase, VerifyCounts, VerifyOptions};
use crate::verify::table::{busy, generation, GenTable, Judged};
use crate::verify::{fill_payload, prestamp, stamp_block, ErrorClass, Finding, Retried, SECTOR};
use crate::workload::{EngineKind, OffsetGen, WorkloadSpec};

/// Offsets drawn for a write before a worker whose blocks are all busy
/// (another worker writing them) lets its slot wait.
const CLAIM_TRIES: usize = 64;

/// Re-reads of a block that failed its check (SQL Server's read-retry count).
const REREADS: u64 = 4;

/// What every worker of a target shares for `--verify`.
#[derive(Clone, Debug)]
pub(super) struct VerifyCtx {
    pub table: Arc<GenTable>,
    pub opts: VerifyOptions,
    /// Workers of the run done with the workload (the verify pass starts
    /// when all are, so it reads every block written).
    pub done: Arc<AtomicUsize>,
    /// Workers of the run.
    pub workers: usize,
}

impl VerifyCtx {
    /// This worker is done with the workload (or failed): called once per worker.
    pub fn arrive(&self) {
        self.done.fetch_add(1, Ordering::AcqRel);
    }

    /// Waits until every worker is done with the workload (or a stop).
    pub fn wait_all(&self, stop: &AtomicBool) {
        while self.done.load(Ordering::Acquire) < self.workers && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

/// Refuses workloads `--verify` cannot check.
pub(super) fn check_spec(spec: &WorkloadSpec, opts: &VerifyOptions) -> Result<(), Error> {
    let bad = |m: String| Err(Error::BadWorkload(m));
    // First: a size mix also makes --bs its largest size and offsets
    // multiples of its smallest, which the checks below would blame.
    if let Some(b) = &spec.shape.bssplit {
        let sizes: Vec<String> = b
            .sizes()
            .into_iter()
            .map(crate::units::format_size_arg)
            .collect();
        return bad(format!(
            "--verify keeps one generation per block, so it runs one block size, but --bssplit {b} asks for {}: leave out --bssplit and give one size with --bs (e.g. --bs {})",
            sizes.join(", "),
            sizes.last().map_or("4K", String::as_str)
        ));
    }
    if spec.bs < SECTOR as u64 || spec.bs % SECTOR as u64 != 0 {
        return bad(format!(
            "--verify writes a header and a stamp in every 512-byte sector: --bs must be a multiple of 512, got {}",
            spec.bs
        ));
    }
    if spec.effective_align() != spec.bs {
        return bad(format!(
            "--verify checks whole blocks, so offsets must be multiples of --bs {}, but --align is {}: leave out --align",
            crate::units::format_size_arg(spec.bs),
            crate::units::format_size_arg(spec.effective_align())
        ));
    }
    if spec.engine == EngineKind::Null {
        return bad("--verify needs storage: the null engine keeps no data".into());
    }
    if spec.doublewrite.is_some() {
        return bad("--verify keeps one generation per block, and --doublewrite writes each block twice, once in its copy area: leave out --doublewrite".into());
    }
    if let Some(c) = spec.shape.db_cache {
        return bad(format!("--verify checks every block it reads, and --db-cache {c} serves reads without reading: leave out --db-cache"));
    }
    if spec.shape.dedupe_pct > 0 {
        return bad("--verify writes its own verifiable blocks: leave out --dedupe-pct".into());
    }
    if opts.backlog > 0 && !spec.writes() {
        return bad(
            "--verify-backlog re-reads recent writes: it needs a workload that writes".into(),
        );
    }
    if opts.only && opts.state.is_none() {
        return bad("--verify-only checks the blocks a saved state names: add --verify-state FILE (written by an earlier run with --verify --verify-state FILE)".into());
    }
    Ok(())
}

/// One worker's verification state.
pub(super) struct VerifyHook {
    table: Arc<GenTable>,
    target: usize,
    /// The target, for re-reading a block that failed its check.
    fd: Option<RawFile>,
    /// The buffer of those re-reads (allocated at the first one).
    reread_buf: Option<AlignedBuf>,
    pub counts: VerifyCounts,
    /// Per slot: the generation a write claimed, or the block's entry when a read was issued.
    slot_entry: Vec<u32>,
    slot_phase: Vec<Phase>,
    /// Blocks of the last `backlog` writes (a ring), and where the next goes.
    ring: Vec<usize>,
    ring_next: usize,
    since: u64,
    /// Backlog re-reads still to issue, and the ring index of the next one.
    due: usize,
    due_at: usize,
    epoch_ms: u64,
    t0: u64,
}

impl VerifyHook {
    pub fn new(v: &VerifyCtx, target: usize, fd: Option<RawFile>, slots: usize) -> VerifyHook {
        let epoch_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        VerifyHook {
            table: v.table.clone(),
            target,
            fd,
            reread_buf: None,
            counts: VerifyCounts::new(),
            slot_entry: vec![0; slots],
            slot_phase: vec![Phase::Workload; slots],
            ring: vec![0; v.opts.backlog as usize],
            ring_next: 0,
            since: 0,
            due: 0,
            due_at: 0,
            epoch_ms,
            t0: now_ns(),
        }
    }

    /// Fills the write buffers with payload once (each write then stamps its block in place).
    pub fn fill(eng: &mut dyn IoEngine, slots: usize, thread: usize) {
        for s in 0..slots {
            fill_payload(eng.buffer(s), ((thread as u64) << 16) ^ s as u64);
        }
    }

    /// The next I/O of slot `s`: a backlog re-read when one is due, else
    /// the workload's next I/O (a write only to a block with no write in
    /// flight). `None`: every block drawn was busy; try again later.
    #[inline]
    pub fn next(&mut self, s: usize, gen: &mut OffsetGen) -> Option<(u64, bool)> {
        if self.due > 0 {
            let b = self.ring[self.due_at];
            self.due_at = (self.due_at + 1) % self.ring.len();
            self.due -= 1;
            self.slot_phase[s] = Phase::Backlog;
            return Some((self.table.offset_of(b), false));
        }
        self.slot_phase[s] = Phase::Workload;
        for _ in 0..CLAIM_TRIES {
            let (off, write) = gen.next_io();
            if !write {
                return Some((off, false));
            }
            if let Some(g) = self.table.claim(self.table.block_of(off)) {
                self.slot_entry[s] = g;
                return Some((off, true));
            }
        }
        None
    }

    /// Prepares slot `s`'s buffer: a write gets its block's image, a read
    /// the "not read" marker (and the block's entry is noted).
    #[inline]
    pub fn prepare(&mut self, s: usize, off: u64, write: bool, buf: &mut [u8], now: u64) {
        let b = self.table.block_of(off);
        if write {
            let ms = self.epoch_ms + now.saturating_sub(self.t0) / 1_000_000;
            let t = &self.table;
            stamp_block(buf, t.seed, t.id(b, self.slot_entry[s]), ms);
        } else {
            prestamp(buf);
            self.slot_entry[s] = self.table.entry(b);
        }
    }

    /// Slot `s` completed (`ok`: the whole block moved). Returns whether the
    /// I/O belongs in the workload's statistics (backlog re-reads do not).
    #[inline]
    pub fn complete(&mut self, s: usize, off: u64, write: bool, ok: bool, buf: &[u8]) -> bool {
        let b = self.table.block_of(off);
        if write {
            // A failed write leaves its block busy: what it holds is unknown.
            if ok {
                self.table.complete(b, self.slot_entry[s]);
                self.counts.writes += 1;
                self.wrote(b);
            }
            return true;
        }
        let phase = self.slot_phase[s];
        if ok {
            let e1 = self.table.entry(b);
            let j = self.table.judge(buf, b, self.slot_entry[s], e1);
            self.count(j, b, e1, phase);
        }
        if phase == Phase::Backlog {
            self.counts.backlog_reads += 1;
            return false;
        }
        true
    }

    /// Counts the judgement of a read of block `b` (whose entry was `e1`
    /// when the read completed); a bad block is re-read first.
    #[inline]
    fn count(&mut self, j: Judged, b: usize, e1: u32, phase: Phase) {
        let retried = if matches!(j, Judged::Bad { .. }) {
            self.reread(b, e1)
        } else {
            Retried::No
        };
        self.counts
            .count(j, retried, &self.table, self.target, b, phase);
    }

    /// Re-reads block `b`, which failed its check, up to [`REREADS`] times
    /// with one `pread` each, until it holds the generation of entry `e1`.
    /// A block written again meanwhile (its entry changed, or a write was in
    /// flight) cannot tell: re-reading stops there.
    #[cold]
    fn reread(&mut self, b: usize, e1: u32) -> Retried {
        let Some(fd) = self.fd else {
            return Retried::No;
        };
        if busy(e1) {
            return Retried::No;
        }
        let bs = self.table.bs as usize;
        let buf = self.reread_buf.get_or_insert_with(|| AlignedBuf::new(bs));
        let buf = &mut buf.as_mut_slice()[..bs];
        let (t, off) = (&self.table, self.table.offset_of(b));
        crate::verify::retry(REREADS, |_| {
            prestamp(buf);
            let r = crate::engine::read_at(fd, buf, off);
            if t.entry(b) != e1 {
                return None;
            }
            Some(r == bs as i32 && t.judge(buf, b, e1, e1) == Judged::Good)
        })
    }

    /// Notes a completed write for `--verify-backlog`.
    #[inline]
    fn wrote(&mut self, b: usize) {
        if self.ring.is_empty() {
            return;
        }
        self.ring[self.ring_next] = b;
        self.ring_next = (self.ring_next + 1) % self.ring.len();
        self.since += 1;
        if self.since == self.ring.len() as u64 {
            self.since = 0;
            self.due = self.ring.len();
            self.due_at = self.ring_next;
        }
    }

    /// The verify pass: reads back every written block `b` with
    /// `b % nlocal == local` (the workers of a target share the blocks out),
    /// every slot in flight, and judges each.
    pub fn pass(
        &mut self,
        eng: &mut dyn IoEngine,
        slots: usize,
        local: usize,
        nlocal: usize,
        stop: &AtomicBool,
    ) -> anyhow::Result<()> {
        let t0 = now_ns();
        // Submitted by the reap, as the workload's reads are by default.
        let mut pipe = Pipeline::new(slots).commit_every(0);
        let mut pass = Pass {
            hook: self,
            next: local,
            nlocal,
        };
        pipe.run(eng, Some(stop), &mut pass)?;
        self.counts.pass_ns = now_ns().saturating_sub(t0);
        Ok(())
    }
}

/// The verify pass as a pipeline driver: the next written block of this
/// worker's share, and the judgement of each read.
struct Pass<'a> {
    hook: &'a mut VerifyHook,
    /// The next block to look at.
    next: usize,
    nlocal: usize,
}

impl Driver for Pass<'_> {
    type Error = anyhow::Error;

    fn next(&mut self, slot: u32, bufs: &mut Buffers<'_>) -> Next {
        let t = &self.hook.table;
        let blocks = t.blocks();
        while self.next < blocks && generation(t.entry(self.next)) == 0 {
            self.next += self.nlocal;
        }
        if self.next >= blocks {
            return Next::End;
        }
        let bs = t.bs as usize;
        let b = self.next;
        prestamp(&mut bufs.get(slot)[..bs]);
        self.hook.slot_entry[slot as usize] = t.entry(b);
        self.next += self.nlocal;
        Next::Io(Io::new(0, Op::Read, t.offset_of(b), bs as u32))
    }

    fn complete(&mut self, d: &Done, bufs: &mut Buffers<'_>) -> anyhow::Result<()> {
        let h = &mut *self.hook;
        let s = d.slot as usize;
        let bs = h.table.bs as usize;
        let b = h.table.block_of(d.offset);
        h.counts.pass_blocks += 1;
        let e1 = h.table.entry(b);
        let j = if d.full() {
            h.table
                .judge(&bufs.get(d.slot)[..bs], b, h.slot_entry[s], e1)
        } else {
            io_failure(d.result, bs, h.slot_entry[s])
        };
        h.count(j, b, e1, Phase::Pass);
        Ok(())
    }
}

/// A read of the verify pass that failed or came back short.
#[cold]
fn io_failure(result: i32, bs: usize, entry: u32) -> Judged {
    let (class, detail) = if result < 0 {
        (
            ErrorClass::IoError,
            std::io::Error::from_raw_os_error(-result).to_string(),
        )
    } else {
        (
            ErrorClass::ShortRead,
            format!("short read: {result} of {bs} bytes"),
        )
    };
    Judged::Bad {
        finding: Finding { class, detail },
        expected: generation(entry),
        found: 0,
    }
}

/// The generation tables of a run with `--verify` (one per target, empty
/// without it): checked against available memory, loaded from
/// `--verify-state` when that file exists. The page images' seed is fresh
/// for every run (an image a previous run left never passes for this run's
/// write), unless a state file carries one.
pub(super) fn tables(
    spec: &WorkloadSpec,
    opts: &super::RunOptions,
    targets: &[crate::target::PreparedTarget],
) -> anyhow::Result<Vec<Arc<GenTable>>> {
    let Some(v) = &opts.verify else {
        return Ok(Vec::new());
    };
    let need: u64 = targets
        .iter()
        .map(|t| GenTable::bytes_for(t.region_len, spec.bs))
        .sum();
    for l in crate::sysmon::limits::memory_limits() {
        // Of what the machine has available, half: the run reads through the rest.
        let room = if l.kind == crate::sysmon::limits::LimitKind::Available {
            l.left / 2
        } else {
            l.left
        };
        if need > room {
            anyhow::bail!(
                "--verify needs {} of memory for its generation tables (4 bytes per block), more than the {} {}: use a larger --bs or a smaller --size",
                crate::units::format_size(need),
                crate::units::format_size(room),
                l.whose()
            );
        }
    }
    let seed = crate::verify::mix(&[spec.seed, now_ns(), u64::from(std::process::id())]);
    let mut tables: Vec<GenTable> = targets
        .iter()
        .enumerate()
        .map(|(i, t)| GenTable::new(i as u32 + 1, t.region_start, t.region_len, spec.bs, seed))
        .collect();
    if let Some(path) = v.state.as_ref().filter(|p| p.exists()) {
        let loaded = crate::verify::run::load_state(path, &paths(targets), &tables)?;
        for t in &mut tables {
            t.seed = loaded;
        }
    } else if v.only {
        anyhow::bail!(
            "--verify-only: the state file '{}' does not exist: run the workload with --verify --verify-state FILE first",
            v.state.as_ref().map_or(String::new(), |p| p.display().to_string())
        );
    }
    Ok(tables.into_iter().map(Arc::new).collect())
}

fn paths(targets: &[crate::target::PreparedTarget]) -> Vec<String> {
    targets
        .iter()
        .map(|t| t.path.display().to_string())
        .collect()
}

/// The `verify` section of the result from the workers' counts; saves the
/// state file when one was asked for.
pub(super) fn report<'a>(
    opts: &super::RunOptions,
    tables: &[Arc<GenTable>],
    counts: impl Iterator<Item = &'a VerifyCounts>,
    targets: &[crate::target::PreparedTarget],
) -> anyhow::Result<Option<crate::verify::run::VerifyReport>> {
    let Some(v) = &opts.verify else {
        return Ok(None);
    };
    let mut all = VerifyCounts::default();
    for c in counts {
        all.merge(c);
    }
    if let Some(path) = &v.state {
        crate::verify::run::save_state(path, &paths(targets), tables)?;
    }
    Ok(Some(crate::verify::run::VerifyReport::new(v, tables, &all)))
}
