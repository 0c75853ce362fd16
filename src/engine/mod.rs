//! I/O engines: one trait, in the spirit of fio's `ioengine_ops`.
//!
//! A worker thread owns one engine. The engine owns the I/O buffers (one
//! *slot* per outstanding I/O), so a buffer can never be freed or moved while
//! the kernel still uses it; all `unsafe` I/O code lives in this module.
//!
//! The cycle is: [`IoEngine::queue`] a request (no syscall for io_uring),
//! [`IoEngine::commit`] after every `--submit-batch` requests (1 by default:
//! each I/O goes to the device as soon as it is ready), then
//! [`IoEngine::reap`] with `min = 1`, which submits anything still queued and
//! waits for completions in one system call. Synchronous engines perform the
//! I/O inside `queue` and report it from the next `reap`.

use crate::platform::io::RawFile;
use std::io;

use crate::workload::{CacheMode, EngineKind};

pub mod faulty;
#[cfg(windows)]
mod iocp;
#[cfg(target_os = "linux")]
mod mmap;
mod null;
pub mod pipeline;
pub mod priority;
mod slots;
mod sync;
#[cfg(target_os = "linux")]
mod uring;

#[cfg(windows)]
pub use iocp::IocpEngine;
#[cfg(target_os = "linux")]
pub use mmap::MmapEngine;
pub use null::NullEngine;
pub use sync::SyncEngine;
#[cfg(target_os = "linux")]
pub use uring::UringEngine;

/// Direction of an I/O (declared below the engines, in `platform`, whose
/// positional I/O takes it too).
pub use crate::platform::types::Op;

/// One request: which slot (buffer), which file, where, and how much.
#[derive(Clone, Copy, Debug)]
pub struct IoReq {
    /// Buffer slot; also identifies the request in its completion.
    pub slot: u32,
    /// Index of the file in the engine's file table.
    pub file: u32,
    /// Direction.
    pub op: Op,
    /// Byte offset in the file.
    pub offset: u64,
    /// Bytes to transfer (at most the slot size).
    pub len: u32,
}

/// A finished request.
#[derive(Clone, Copy, Debug, Default)]
pub struct Completion {
    /// The slot given in the request.
    pub slot: u32,
    /// Bytes transferred, or a negated errno.
    pub result: i32,
}

/// What the engine needs to know when it is created.
#[derive(Clone, Debug, Default)]
pub struct EngineConfig {
    /// Open file descriptors; requests name them by index. The caller keeps them open.
    pub fds: Vec<RawFile>,
    /// Number of slots (outstanding I/Os).
    pub slots: usize,
    /// Bytes per slot buffer.
    pub slot_size: usize,
    /// io_uring: kernel submission-queue polling thread.
    pub sqpoll: bool,
    /// io_uring: polled completions.
    pub hipri: bool,
    /// mmap: map the files writable.
    pub writable: bool,
    /// mmap: msync each write (write-through).
    pub sync_writes: bool,
}

/// What an engine does with a request, which decides how the caller drives
/// and times it. One value per engine kind ([`Capabilities::of`]); an
/// engine reports the same from [`IoEngine::capabilities`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// [`IoEngine::queue`] performs the I/O before it returns; the next
    /// `reap` only hands the result over (sync, mmap, null).
    pub completes_in_queue: bool,
    /// [`IoEngine::commit`] hands queued requests to the kernel, a system
    /// call worth timing (io_uring); otherwise committing is free and the
    /// caller need not commit in groups.
    pub needs_commit: bool,
    /// Many requests can be in flight at once, so `--qd` slots are used;
    /// otherwise the engine does one I/O at a time per thread and gets one slot.
    pub batched: bool,
}

impl Capabilities {
    /// The capabilities of an engine kind ([`EngineKind::Auto`] has none of
    /// its own: [`choose`] turns it into a real kind first).
    pub const fn of(kind: EngineKind) -> Capabilities {
        match kind {
            EngineKind::Uring | EngineKind::Auto => Capabilities {
                completes_in_queue: false,
                needs_commit: true,
                batched: true,
            },
            // Each request goes to Windows as it is queued.
            EngineKind::Iocp => Capabilities {
                completes_in_queue: false,
                needs_commit: false,
                batched: true,
            },
            EngineKind::Null => Capabilities {
                completes_in_queue: true,
                needs_commit: false,
                batched: true,
            },
            EngineKind::Sync | EngineKind::Mmap => Capabilities {
                completes_in_queue: true,
                needs_commit: false,
                batched: false,
            },
        }
    }

    /// True when the caller should time each I/O around its `queue` call
    /// (the I/O happens there, one at a time).
    pub const fn timed_in_queue(self) -> bool {
        self.completes_in_queue && !self.batched
    }

    /// Slots (buffers, I/Os in flight) a worker uses at queue depth `qd`.
    pub fn slots_for(self, qd: u32) -> usize {
        if self.batched {
            qd.max(1) as usize
        } else {
            1
        }
    }
}

/// What the user asked for, as far as the choice of engine goes.
#[derive(Clone, Copy, Debug)]
pub struct EngineRequest {
    /// `--engine` (`auto` unless the user named one).
    pub kind: EngineKind,
    /// `--cache`.
    pub cache: CacheMode,
    /// `--qd`.
    pub qd: u32,
    /// `--sqpoll` (needs io_uring).
    pub sqpoll: bool,
    /// `--hipri` (needs io_uring).
    pub hipri: bool,
}

/// The engine a run uses, decided once by [`choose`] for every thread, with
/// the notices the user must see (fallbacks, a queue depth that acts as 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineChoice {
    /// The engine (never [`EngineKind::Auto`]).
    pub kind: EngineKind,
    /// What it does with a request.
    pub caps: Capabilities,
    /// Notices for the result and the terminal.
    pub notes: Vec<String>,
}

/// Why no engine could be chosen.
#[derive(Debug, thiserror::Error)]
pub enum ChoiceError {
    /// `--sqpoll`/`--hipri` asked for io_uring and the kernel refused it.
    #[error("io_uring is not available here ({0}), and --sqpoll/--hipri need it: drop them, or run where io_uring is allowed (a container's seccomp profile or kernel.io_uring_disabled may forbid it)")]
    UringNeeded(io::Error),
    /// The engine exists on another operating system only.
    #[error("the {engine} engine exists on {on} only, and this is {here}: use --engine {instead} (or leave --engine out)")]
    OtherSystem {
        /// The engine asked for.
        engine: &'static str,
        /// Where it exists.
        on: &'static str,
        /// This system.
        here: &'static str,
        /// This system's engine for the same job.
        instead: &'static str,
    },
}

/// Decides the engine of a run, once, in one place.
///
/// `auto` (the default) takes the engine that is fastest for the request:
/// through the page cache at queue depth 1 that is `sync` (one `pread` or
/// `pwrite` per I/O, like fio's default `psync`: a cached 4 KiB read costs
/// less that way than an io_uring submission and completion), and io_uring
/// everywhere else (direct I/O, or more than one I/O in flight per thread).
/// io_uring, asked for or chosen, falls back to `sync` with a notice where
/// the kernel refuses it, unless `--sqpoll` or `--hipri` need it.
pub fn choose(req: &EngineRequest) -> Result<EngineChoice, ChoiceError> {
    let mut notes = Vec::new();
    let needs_uring = req.sqpoll || req.hipri;
    if let Some(on) = req.kind.only_on() {
        if on != crate::platform::OS_NAME {
            let instead = match req.kind {
                EngineKind::Mmap => EngineKind::Sync,
                _ => EngineKind::native(),
            };
            return Err(ChoiceError::OtherSystem {
                engine: req.kind.name(),
                on,
                here: crate::platform::OS_NAME,
                instead: instead.name(),
            });
        }
    }
    if needs_uring && crate::platform::IS_WINDOWS {
        return Err(ChoiceError::UringNeeded(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "io_uring is Linux's, and this is {}",
                crate::platform::OS_NAME
            ),
        )));
    }
    let mut kind = match req.kind {
        EngineKind::Auto if !needs_uring && !req.cache.is_direct() && req.qd <= 1 => {
            EngineKind::Sync
        }
        EngineKind::Auto => EngineKind::native(),
        k => k,
    };
    if kind == EngineKind::Uring {
        if let Err(e) = uring_available() {
            if needs_uring {
                return Err(ChoiceError::UringNeeded(e));
            }
            notes.push(format!(
                "io_uring is not available here ({e}); fell back to the sync engine (pread/pwrite, queue depth 1 per thread)"
            ));
            kind = EngineKind::Sync;
        }
    }
    let caps = Capabilities::of(kind);
    if !caps.batched && req.qd > 1 {
        notes.push(format!(
            "the {} engine does one I/O at a time per thread: --qd {} acts as 1",
            kind.name(),
            req.qd
        ));
    }
    Ok(EngineChoice { kind, caps, notes })
}

/// The engine contract.
///
/// Dropping an engine waits for (or cancels and then waits for) every I/O
/// it still has in flight before its buffers are freed, so an early return
/// with I/Os outstanding can never let the kernel write into freed memory.
pub trait IoEngine: Send {
    /// Short name (`uring`, `sync`, `null`, `mmap`).
    fn name(&self) -> &'static str;
    /// What the engine does with a request (the same as `Capabilities::of` its kind).
    fn capabilities(&self) -> Capabilities;
    /// Number of slots.
    fn slots(&self) -> usize;
    /// The buffer of `slot` (slot_size bytes, page-aligned). Do not touch it while its I/O is in flight.
    fn buffer(&mut self, slot: usize) -> &mut [u8];
    /// Says that a request for `len` bytes at `offset` of `file` will be
    /// queued soon, once its buffer is prepared: an engine that moves the
    /// data itself can start bringing that memory in meanwhile (the mmap
    /// engine prefetches the mapped range, so a verified write's copy does
    /// not wait for memory after its crc32c). A hint only: nothing is
    /// transferred and the request may never come. The default ignores it.
    #[inline]
    fn will_queue(&mut self, file: u32, offset: u64, len: u32) {
        let _ = (file, offset, len);
    }
    /// Queues a request. The slot must not have an I/O in flight.
    fn queue(&mut self, req: IoReq) -> io::Result<()>;
    /// Submits queued requests without waiting.
    fn commit(&mut self) -> io::Result<()>;
    /// Submits queued requests and waits until at least `min` completions are
    /// available; writes up to `out.len()` of them into `out` and returns how many.
    fn reap(&mut self, min: usize, out: &mut [Completion]) -> io::Result<usize>;
    /// Like [`IoEngine::reap`], but gives up after `timeout_ns` and may then
    /// return fewer than `min` (even 0). Used when a rate cap or think time
    /// makes the caller wait for a clock as well as for completions. The
    /// default suits engines whose queued I/O is already complete.
    fn reap_timeout(
        &mut self,
        min: usize,
        out: &mut [Completion],
        timeout_ns: u64,
    ) -> io::Result<usize> {
        let _ = timeout_ns;
        self.reap(min, out)
    }
    /// Notes about the engine for the report: how it was set up (fallbacks,
    /// registration) and anything that went wrong under it since (a target
    /// truncated under the mmap engine). Asked before and after the run.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// Explains a failed completion better than its errno can, when the
    /// engine knows more (not called for successful I/O).
    fn explain(&self, result: i32) -> Option<String> {
        let _ = result;
        None
    }
    /// Queues one vectored request (preadv/pwritev; io_uring READV/WRITEV)
    /// that transfers `iov` = (slot buffer index, bytes) pieces in order,
    /// starting at `offset`. The completion carries `slot`. None of the
    /// named slots may have an I/O in flight. Engines without vectored I/O
    /// (null, mmap) return `Unsupported`, which the pipeline reports as the
    /// request's failure: a caller that sends vectored requests needs an
    /// engine that has them (sync, io_uring, iocp, faulty).
    fn queue_vectored(
        &mut self,
        slot: u32,
        file: u32,
        op: Op,
        offset: u64,
        iov: &[(usize, usize)],
    ) -> io::Result<()> {
        let _ = (slot, file, op, offset, iov);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this engine has no vectored I/O",
        ))
    }
}

impl EngineChoice {
    /// Creates the chosen engine. There is no second fallback here: if the
    /// engine chosen cannot be set up for this thread, that is an error.
    pub fn create(&self, cfg: &EngineConfig) -> io::Result<Box<dyn IoEngine>> {
        Ok(match self.kind {
            EngineKind::Null => Box::new(NullEngine::new(cfg)?),
            EngineKind::Sync => Box::new(SyncEngine::new(cfg)?),
            #[cfg(target_os = "linux")]
            EngineKind::Mmap => Box::new(MmapEngine::new(cfg, cfg.writable, cfg.sync_writes)?),
            #[cfg(windows)]
            EngineKind::Iocp | EngineKind::Auto => Box::new(IocpEngine::new(cfg).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot set up an I/O completion port for a worker ({e}): lower --threads or --qd, or use --engine sync"),
                )
            })?),
            // `choose` never picks an engine of another system.
            #[cfg(windows)]
            EngineKind::Uring | EngineKind::Mmap => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("the {} engine exists on Linux only", self.kind.name()),
                ))
            }
            #[cfg(target_os = "linux")]
            EngineKind::Iocp => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "the iocp engine exists on Windows only",
                ))
            }
            #[cfg(target_os = "linux")]
            EngineKind::Uring | EngineKind::Auto => {
                Box::new(UringEngine::new(cfg).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("cannot set up io_uring for a worker ({e}): lower --threads or --qd, raise the memlock limit (ulimit -l), or use --engine sync"),
                    )
                })?)
            }
        })
    }
}

/// Chooses (as [`choose`]) and creates an engine in one step, for callers
/// that make one engine (test-file creation, the simulator's users).
pub fn create(
    req: &EngineRequest,
    cfg: &EngineConfig,
) -> anyhow::Result<(Box<dyn IoEngine>, EngineChoice)> {
    let choice = choose(req)?;
    let engine = choice.create(cfg)?;
    Ok((engine, choice))
}

/// Bytes of I/O buffers one worker's engine allocates for `qd` slots of
/// `bs` bytes; None when the product overflows.
pub fn buffer_bytes(caps: Capabilities, qd: u32, bs: u64) -> Option<u64> {
    let bs = usize::try_from(bs).ok()?;
    let (_, total) = slots::Slots::sizes(caps.slots_for(qd), bs)?;
    let total = crate::buf::AlignedBuf::footprint(total)?;
    u64::try_from(total).ok()
}

/// Why a run would not fit in memory.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The sizes multiply past what a 64-bit number holds.
    #[error("{terms} overflows a 64-bit count of bytes (it needs more than 16EiB of memory): lower {lower}")]
    Overflow {
        /// What the run asks for (`--qd 8 x --bs 4KiB x 2 threads`...).
        terms: String,
        /// The options to lower.
        lower: &'static str,
    },
    /// More than a limit leaves: the machine's available memory, the
    /// memory cgroup's limit, the address-space limit.
    #[error("{terms} needs {} {what}, more than the {} {whose}: lower {lower}", crate::units::format_size(*need), crate::units::format_size(*avail))]
    TooLarge {
        /// What the run asks for (`--qd 8 x --bs 4KiB x 2 threads`...).
        terms: String,
        /// What the memory is for.
        what: &'static str,
        /// Bytes needed.
        need: u64,
        /// Bytes available.
        avail: u64,
        /// Whose: "this machine has available (MemAvailable...)".
        whose: String,
        /// The options to lower.
        lower: &'static str,
    },
}

/// Bytes of memory per slot besides its buffer (the worker's per-slot
/// bookkeeping: completion, timestamp, offset, direction, free list).
const PER_SLOT_OVERHEAD: u64 = 64;

/// Bytes of one `--verify-backlog` entry in each worker's ring of recent
/// writes (a block number).
pub const BACKLOG_ENTRY_BYTES: u64 = std::mem::size_of::<usize>() as u64;

/// Threads over all targets of `spec`; None if the sum overflows.
pub fn total_threads(spec: &crate::workload::WorkloadSpec) -> Option<u64> {
    (0..spec.targets.len().max(1))
        .map(|i| u64::from(spec.threads_for(i)))
        .try_fold(0u64, |a, t| a.checked_add(t))
}

/// Bytes a run of `spec` on `choice` allocates for I/O (every worker's
/// buffers and per-slot state, and its ring of `backlog` recent writes for
/// `--verify-backlog`, 0 without), computed with checked arithmetic.
pub fn memory_needed(
    spec: &crate::workload::WorkloadSpec,
    choice: &EngineChoice,
    backlog: u64,
) -> Result<u64, MemoryError> {
    let threads = total_threads(spec);
    let slots = choice.caps.slots_for(spec.qd) as u64;
    threads
        .and_then(|t| {
            buffer_bytes(choice.caps, spec.qd, spec.bs)?
                .checked_add(slots.checked_mul(PER_SLOT_OVERHEAD)?)?
                .checked_add(backlog.checked_mul(BACKLOG_ENTRY_BYTES)?)?
                .checked_mul(t)
        })
        .ok_or_else(|| {
            let (terms, _, lower) = terms(spec, backlog);
            MemoryError::Overflow { terms, lower }
        })
}

/// What a run takes besides its engines' buffers, for [`check_memory`]:
/// the caller's own per-thread and fixed memory (statistics, series), and
/// the address space each thread reserves (its stack, its malloc arena),
/// which only an address-space limit counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overheads {
    /// Memory per worker thread, bytes.
    pub per_thread: u64,
    /// Memory once per run, bytes.
    pub fixed: u64,
    /// Address space reserved per worker thread beyond its memory, bytes.
    pub reserved_per_thread: u64,
    /// Address space reserved once per run (malloc arenas), bytes.
    pub reserved_fixed: u64,
}

/// Refuses a run whose I/O buffers (and `--verify-backlog` rings, `backlog`
/// entries per worker), with the caller's `overheads`, would not fit under
/// every one of `limits` (from `crate::sysmon::limits`: MemAvailable, the
/// memory cgroup, RLIMIT_AS), before anything is allocated: allocating them
/// would abort the process or bring in the OOM killer mid-run.
pub fn check_memory(
    spec: &crate::workload::WorkloadSpec,
    choice: &EngineChoice,
    backlog: u64,
    overheads: &Overheads,
    limits: &[crate::sysmon::limits::MemoryLimit],
) -> Result<(), MemoryError> {
    let buffers = memory_needed(spec, choice, backlog)?;
    let overflow = || {
        let (terms, _, lower) = terms(spec, backlog);
        MemoryError::Overflow { terms, lower }
    };
    let threads = total_threads(spec).ok_or_else(overflow)?;
    let per = |each: u64, once: u64| {
        threads
            .checked_mul(each)
            .and_then(|t| t.checked_add(once))
            .ok_or_else(overflow)
    };
    let memory = buffers
        .checked_add(per(overheads.per_thread, overheads.fixed)?)
        .ok_or_else(overflow)?;
    let reserved = per(overheads.reserved_per_thread, overheads.reserved_fixed)?;
    for l in limits {
        let need = if l.counts_reservations() {
            memory.saturating_add(reserved)
        } else {
            memory
        };
        check_fits(spec, backlog, need, l.left, l.whose())?;
    }
    Ok(())
}

fn check_fits(
    spec: &crate::workload::WorkloadSpec,
    backlog: u64,
    need: u64,
    avail: u64,
    whose: String,
) -> Result<(), MemoryError> {
    if need <= avail {
        return Ok(());
    }
    let (terms, what, lower) = terms(spec, backlog);
    Err(MemoryError::TooLarge {
        terms,
        what,
        need,
        avail,
        whose,
        lower,
    })
}

/// For a [`MemoryError`]: what the run asks for, what the memory is for,
/// and the options to lower.
fn terms(
    spec: &crate::workload::WorkloadSpec,
    backlog: u64,
) -> (String, &'static str, &'static str) {
    let threads = total_threads(spec).unwrap_or(u64::MAX);
    let base = format!(
        "--qd {} x --bs {} x {threads} threads",
        spec.qd,
        crate::units::format_size(spec.bs)
    );
    if backlog == 0 {
        return (
            base,
            "of memory for I/O buffers and statistics",
            "--threads, --qd or --bs",
        );
    }
    (
        format!("{base}, with --verify-backlog {backlog} ({BACKLOG_ENTRY_BYTES} bytes per entry per thread),"),
        "of memory for I/O buffers, statistics and --verify-backlog rings",
        "--verify-backlog, --threads, --qd or --bs",
    )
}

/// Checks whether io_uring can be set up at all (cheap; used for notices).
#[cfg(target_os = "linux")]
pub fn uring_available() -> Result<(), io::Error> {
    io_uring::IoUring::new(2).map(|_| ())
}

/// io_uring is Linux's: never available on Windows.
#[cfg(windows)]
pub fn uring_available() -> Result<(), io::Error> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "io_uring is Linux's; Windows has the iocp engine",
    ))
}

/// Reads `buf.len()` bytes at `offset` with one `pread`; returns bytes or -errno.
pub fn read_at(fd: RawFile, buf: &mut [u8], offset: u64) -> i32 {
    // SAFETY: buf is a live, uniquely borrowed slice of buf.len() bytes.
    unsafe { crate::platform::io::pio(fd, Op::Read, buf.as_mut_ptr(), buf.len(), offset) }
}

/// Writes `buf` at `offset` with one `pwrite`; returns bytes or -errno.
pub fn write_at(fd: RawFile, buf: &[u8], offset: u64) -> i32 {
    // SAFETY: buf is a live slice of buf.len() bytes; pwrite only reads it.
    unsafe { crate::platform::io::pio(fd, Op::Write, buf.as_ptr().cast_mut(), buf.len(), offset) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make(kind: EngineKind, cfg: &EngineConfig) -> Box<dyn IoEngine> {
        let choice = EngineChoice {
            kind,
            caps: Capabilities::of(kind),
            notes: Vec::new(),
        };
        let e = choice.create(cfg).unwrap();
        assert_eq!(e.capabilities(), Capabilities::of(kind));
        e
    }

    /// A 64 KiB file of 7s, opened as the runner opens targets (shared;
    /// overlapped on Windows); the directory goes when the test ends.
    fn shared_file() -> (tempfile::TempDir, std::fs::File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("engine.dat");
        std::fs::write(&path, vec![7u8; 64 * 1024]).unwrap();
        let how = crate::platform::fs::OpenHow {
            write: true,
            overlapped: true,
            ..Default::default()
        };
        let f = crate::platform::fs::open(&path, how).unwrap();
        (dir, f)
    }

    fn roundtrip(kind: EngineKind) {
        let (_dir, f) = shared_file();
        let cfg = EngineConfig {
            fds: vec![crate::platform::io::raw_file(&f)],
            slots: 4,
            slot_size: 4096,
            sqpoll: false,
            hipri: false,
            writable: true,
            sync_writes: false,
        };
        let mut e = make(kind, &cfg);
        for s in 0..4 {
            e.buffer(s).fill(s as u8 + 1);
        }
        for s in 0..4u32 {
            e.queue(IoReq {
                slot: s,
                file: 0,
                op: Op::Write,
                offset: u64::from(s) * 4096,
                len: 4096,
            })
            .unwrap();
        }
        let mut out = [Completion::default(); 8];
        let mut done = 0;
        while done < 4 {
            let n = e.reap(1, &mut out).unwrap();
            for c in &out[..n] {
                assert_eq!(c.result, 4096);
            }
            done += n;
        }
        for s in 0..4u32 {
            e.buffer(s as usize).fill(0);
            e.queue(IoReq {
                slot: s,
                file: 0,
                op: Op::Read,
                offset: u64::from(3 - s) * 4096,
                len: 4096,
            })
            .unwrap();
        }
        let mut done = 0;
        while done < 4 {
            done += e.reap(1, &mut out).unwrap();
        }
        if kind != EngineKind::Null {
            for s in 0..4usize {
                assert!(
                    e.buffer(s).iter().all(|&b| b == (3 - s) as u8 + 1),
                    "slot {s}"
                );
            }
        }
    }

    fn request(kind: EngineKind, cache: CacheMode, qd: u32) -> EngineRequest {
        EngineRequest {
            kind,
            cache,
            qd,
            sqpoll: false,
            hipri: false,
        }
    }

    #[test]
    fn auto_takes_sync_through_the_page_cache_at_qd1() {
        for cache in [CacheMode::Buffered, CacheMode::Writethrough] {
            let c = choose(&request(EngineKind::Auto, cache, 1)).unwrap();
            assert_eq!(c.kind, EngineKind::Sync, "{cache:?}");
            assert!(c.notes.is_empty(), "{:?}", c.notes);
            assert!(c.caps.timed_in_queue());
        }
    }

    #[test]
    fn auto_takes_the_native_engine_for_direct_io_or_depth() {
        let want = if crate::platform::IS_WINDOWS {
            EngineKind::Iocp
        } else if uring_available().is_ok() {
            EngineKind::Uring
        } else {
            EngineKind::Sync
        };
        for (cache, qd) in [
            (CacheMode::Direct, 1),
            (CacheMode::DirectWritethrough, 1),
            (CacheMode::Direct, 32),
            (CacheMode::Buffered, 8),
        ] {
            let c = choose(&request(EngineKind::Auto, cache, qd)).unwrap();
            assert_eq!(c.kind, want, "{cache:?} qd {qd}");
            assert_eq!(c.caps, Capabilities::of(c.kind));
        }
        // --sqpoll needs io_uring whatever the cache mode.
        let mut r = request(EngineKind::Auto, CacheMode::Buffered, 1);
        r.sqpoll = true;
        match choose(&r) {
            Ok(c) => assert_eq!(c.kind, EngineKind::Uring),
            Err(e) => assert!(e.to_string().contains("--sqpoll"), "{e}"),
        }
    }

    #[test]
    fn explicit_engines_are_kept_and_depth_notes_given() {
        let c = choose(&request(EngineKind::Sync, CacheMode::Direct, 8)).unwrap();
        assert_eq!(c.kind, EngineKind::Sync);
        assert_eq!(
            c.notes,
            vec!["the sync engine does one I/O at a time per thread: --qd 8 acts as 1"]
        );
        let c = choose(&request(EngineKind::Null, CacheMode::Direct, 8)).unwrap();
        assert_eq!((c.kind, c.caps.slots_for(8)), (EngineKind::Null, 8));
        let mmap = choose(&request(EngineKind::Mmap, CacheMode::Buffered, 1));
        let iocp = choose(&request(EngineKind::Iocp, CacheMode::Direct, 8));
        // Each system's own engines are kept; the other's are refused, naming this one's.
        let (mine, other) = if crate::platform::IS_WINDOWS {
            (iocp, mmap)
        } else {
            (mmap, iocp)
        };
        let c = mine.unwrap();
        assert_eq!(
            c.caps.slots_for(8),
            if c.kind == EngineKind::Iocp { 8 } else { 1 }
        );
        let e = other.unwrap_err().to_string();
        assert!(
            e.contains(&format!("this is {}", crate::platform::OS_NAME)) && e.contains("--engine"),
            "{e}"
        );
    }

    #[test]
    fn every_limit_is_checked_and_named() {
        use crate::sysmon::limits::{LimitKind, MemoryLimit};
        let spec = crate::workload::WorkloadSpec {
            threads: 64,
            qd: 4096,
            ..Default::default()
        };
        let null = EngineChoice {
            kind: EngineKind::Null,
            caps: Capabilities::of(EngineKind::Null),
            notes: vec![],
        };
        let g = 1u64 << 30;
        let limit = |kind, limit, left| MemoryLimit { kind, limit, left };
        let over = Overheads {
            per_thread: 4 << 20,
            fixed: 64 << 20,
            reserved_per_thread: 2 << 20,
            reserved_fixed: 1 << 30,
        };
        let check = |l: MemoryLimit| check_memory(&spec, &null, 0, &over, &[l]);
        // 1 GiB of buffers and 320 MiB of statistics: not in a 1 GiB cgroup.
        let cg = LimitKind::Cgroup("/sys/fs/cgroup/memory/t/memory.limit_in_bytes".into());
        let e = check(limit(cg.clone(), g, g)).unwrap_err().to_string();
        assert!(
            e.contains("--qd 4096 x --bs 4KiB x 64 threads needs 1.33GiB")
                && e.contains("memory.limit_in_bytes")
                && e.contains("lower --threads, --qd or --bs"),
            "{e}"
        );
        assert!(check(limit(cg, 2 * g, 2 * g)).is_ok());
        // Stacks and arenas count against the address space only.
        let e = check(limit(LimitKind::AddressSpace, 3 * g, 2 * g))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("RLIMIT_AS") && e.contains("more than the 2GiB"),
            "{e}"
        );
        assert!(check(limit(LimitKind::Available, 2 * g, 2 * g)).is_ok());
        assert!(check(limit(LimitKind::AddressSpace, 3 * g, 3 * g)).is_ok());
    }

    #[test]
    fn memory_is_counted_with_checked_arithmetic() {
        let mut spec = crate::workload::WorkloadSpec {
            qd: 4096,
            bs: 64 << 20,
            ..Default::default()
        };
        let uring = EngineChoice {
            kind: EngineKind::Uring,
            caps: Capabilities::of(EngineKind::Uring),
            notes: vec![],
        };
        let need = memory_needed(&spec, &uring, 0).unwrap();
        assert!(need >= 256 << 30, "{need}");
        let e = check_fits(&spec, 0, need, 8 << 30, String::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--qd 4096") && e.contains("64MiB") && e.contains("8GiB"),
            "{e}"
        );
        assert!(check_fits(&spec, 0, need, need, String::new()).is_ok());
        // One slot for engines that do one I/O at a time.
        let sync = EngineChoice {
            kind: EngineKind::Sync,
            caps: Capabilities::of(EngineKind::Sync),
            notes: vec![],
        };
        assert!(memory_needed(&spec, &sync, 0).unwrap() < 65 << 20);
        // Products past 64 bits are an error, not a wrap-around.
        spec.bs = u64::MAX / 2;
        let e = memory_needed(&spec, &uring, 0).unwrap_err().to_string();
        assert!(e.contains("overflows"), "{e}");
        spec.bs = 4096;
        spec.threads = u32::MAX;
        spec.qd = u32::MAX;
        assert!(memory_needed(&spec, &uring, 0).is_err());
        // A --verify-backlog ring counts in every thread, and is named.
        spec.threads = 2;
        spec.qd = 1;
        let need = memory_needed(&spec, &uring, 1 << 32).unwrap();
        assert!(need >= 2 * (1 << 32) * BACKLOG_ENTRY_BYTES, "{need}");
        let e = check_fits(&spec, 1 << 32, need, 8 << 30, String::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--verify-backlog 4294967296")
                && e.contains("64.00GiB")
                && e.contains("lower --verify-backlog"),
            "{e}"
        );
        let e = memory_needed(&spec, &uring, u64::MAX)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--verify-backlog 18446744073709551615") && e.contains("16EiB"),
            "{e}"
        );
    }

    #[test]
    fn sync_engine_reads_what_it_wrote() {
        roundtrip(EngineKind::Sync);
    }

    #[cfg(windows)]
    #[test]
    fn iocp_engine_reads_what_it_wrote() {
        roundtrip(EngineKind::Iocp);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn uring_engine_reads_what_it_wrote() {
        if let Err(e) = uring_available() {
            crate::testkit::skip(&format!("io_uring unavailable: {e}"));
            return;
        }
        roundtrip(EngineKind::Uring);
    }

    fn vectored_roundtrip(kind: EngineKind) {
        let (_dir, f) = shared_file();
        let cfg = EngineConfig {
            fds: vec![crate::platform::io::raw_file(&f)],
            slots: 4,
            slot_size: 4096,
            ..Default::default()
        };
        let mut e = make(kind, &cfg);
        for s in 0..4 {
            e.buffer(s).fill(s as u8 + 1);
        }
        // Slots 3, 1, 2 in that order: the file gets 4s, 2s, 3s at 8 KiB.
        e.queue_vectored(3, 0, Op::Write, 8192, &[(3, 4096), (1, 4096), (2, 4096)])
            .unwrap();
        let mut out = [Completion::default(); 4];
        let n = e.reap(1, &mut out).unwrap();
        assert_eq!((n, out[0].slot, out[0].result), (1, 3, 3 * 4096));
        for s in 0..4 {
            e.buffer(s).fill(0);
        }
        e.queue_vectored(0, 0, Op::Read, 8192, &[(0, 4096), (2, 4096), (1, 4096)])
            .unwrap();
        let n = e.reap(1, &mut out).unwrap();
        assert_eq!((n, out[0].slot, out[0].result), (1, 0, 3 * 4096));
        assert!(e.buffer(0).iter().all(|&b| b == 4));
        assert!(e.buffer(2).iter().all(|&b| b == 2));
        assert!(e.buffer(1).iter().all(|&b| b == 3));
    }

    #[test]
    fn sync_engine_vectored_io() {
        vectored_roundtrip(EngineKind::Sync);
    }

    #[cfg(windows)]
    #[test]
    fn iocp_engine_vectored_io() {
        vectored_roundtrip(EngineKind::Iocp);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn uring_engine_vectored_io() {
        if let Err(e) = uring_available() {
            crate::testkit::skip(&format!("io_uring unavailable: {e}"));
            return;
        }
        vectored_roundtrip(EngineKind::Uring);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn mmap_engine_reads_what_it_wrote() {
        roundtrip(EngineKind::Mmap);
    }

    #[test]
    fn null_engine_completes_everything() {
        roundtrip(EngineKind::Null);
    }

    #[test]
    fn errors_come_back_as_negative_errno() {
        let cfg = EngineConfig {
            fds: vec![-1],
            slots: 1,
            slot_size: 4096,
            ..EngineConfig::default()
        };
        let mut e = SyncEngine::new(&cfg).unwrap();
        e.queue(IoReq {
            slot: 0,
            file: 0,
            op: Op::Read,
            offset: 0,
            len: 4096,
        })
        .unwrap();
        let mut out = [Completion::default(); 1];
        assert_eq!(e.reap(1, &mut out).unwrap(), 1);
        assert_eq!(out[0].result, -crate::platform::errno::EBADF);
    }
}
