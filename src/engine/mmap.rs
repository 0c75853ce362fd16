//! The `mmap` engine: memory-mapped I/O (DiskSpd `-Sm`, fio `ioengine=mmap`).
//!
//! Each target is mapped `MAP_SHARED` once; a read copies from the mapping
//! into the slot buffer and a write copies the other way, with no system call
//! per I/O once the pages are mapped. It goes through the page cache, so it
//! cannot be combined with direct I/O; with write-through, every write is
//! followed by `msync(MS_SYNC)` of the pages it touched.
//!
//! # A target truncated under the mapping
//!
//! Touching a mapped page that lies wholly beyond the end of the file raises
//! SIGBUS, which would kill the run with nothing printed. Checking the size
//! before every copy would cost a system call per I/O, the very thing this
//! engine exists to avoid; Rust cannot unwind or `longjmp` out of a signal
//! handler either. So the engine recovers *forward*:
//!
//! - every mapping is entered in a fixed, lock-free table of address ranges;
//! - a SIGBUS handler (installed once, chaining to whatever handler was there
//!   before) looks the faulting address up in the table. If it lies in one of
//!   our mappings, it marks that mapping as truncated and maps an anonymous
//!   zero page over the faulting page (`MAP_FIXED`, one system call, safe in
//!   a signal handler), then returns: the interrupted copy restarts and
//!   completes harmlessly against that page. Any other SIGBUS goes to the
//!   previous handler, or kills the process as before;
//! - after each copy the engine reads the mapping's flag (one relaxed atomic
//!   load: no system call). A flagged copy fails with EIO, as does every later
//!   I/O to that target: the data there is no longer the file's. The runner
//!   records the errors, so the run ends with what it measured, a message
//!   naming the truncated target, and the I/O-error exit code.

use crate::platform::io::RawFile as RawFd;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

use super::slots::{DoneQueue, Slots};
use super::{Capabilities, Completion, EngineConfig, IoEngine, IoReq, Op};
use crate::workload::EngineKind;

/// How many mappings can be watched at once (one per thread and target).
const MAX_MAPS: usize = 4096;

/// Bytes of a transfer [`IoEngine::will_queue`] prefetches (256 lines).
const PREFETCH_MAX: usize = 16 << 10;

/// One watched mapping: [start, end) in the address space, and whether a
/// SIGBUS hit it. `used` claims the entry; a zero `start` matches nothing.
struct Region {
    used: AtomicBool,
    start: AtomicUsize,
    end: AtomicUsize,
    faulted: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Region = Region {
    used: AtomicBool::new(false),
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    faulted: AtomicBool::new(false),
};

static REGIONS: [Region; MAX_MAPS] = [EMPTY; MAX_MAPS];

/// Page size for the handler (read before it is installed).
static PAGE: AtomicUsize = AtomicUsize::new(0);

/// The SIGBUS action that was in place before ours (to chain to).
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

/// Installs the SIGBUS handler once; an error if the kernel refuses.
fn install_handler() -> io::Result<()> {
    static INSTALLED: OnceLock<Result<(), i32>> = OnceLock::new();
    let r = INSTALLED.get_or_init(|| {
        PAGE.store(crate::buf::page_size(), Ordering::Relaxed);
        // SAFETY: a zeroed sigaction is a valid value to fill in; the handler
        // only does async-signal-safe work (atomics, mmap, sigaction).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus
                as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
                as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut sa.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            // Record the old action before ours can run.
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) != 0 {
                return Err(io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EINVAL));
            }
            let _ = PREVIOUS.set(old);
            if libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EINVAL));
            }
        }
        Ok(())
    });
    r.map_err(io::Error::from_raw_os_error)
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed).max(1);
    for r in REGIONS.iter() {
        let start = r.start.load(Ordering::Acquire);
        if start != 0 && addr >= start && addr < r.end.load(Ordering::Acquire) {
            r.faulted.store(true, Ordering::Release);
            let at = addr & !(page - 1);
            // SAFETY: replaces one page of our own mapping with anonymous
            // memory; the engine never trusts that page's contents again.
            let p = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                return;
            }
            break;
        }
    }
    // Not ours (or unrecoverable): behave as if we were not here.
    if let Some(old) = PREVIOUS.get() {
        let h = old.sa_sigaction;
        if h != libc::SIG_DFL && h != libc::SIG_IGN {
            if old.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: the previous handler was installed with SA_SIGINFO,
                // so it has this signature.
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    unsafe { std::mem::transmute(h) };
                f(sig, info, ctx);
            } else {
                // SAFETY: a plain handler takes the signal number.
                let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(h) };
                f(sig);
            }
            return;
        }
    }
    // SAFETY: restoring the default action; returning re-runs the faulting
    // access, which now terminates the process with SIGBUS as it would have.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
    }
}

/// Enters [ptr, ptr+len) in the table; its index.
fn watch(ptr: usize, len: usize) -> io::Result<usize> {
    for (i, r) in REGIONS.iter().enumerate() {
        if r.used
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            r.faulted.store(false, Ordering::Relaxed);
            r.end.store(ptr + len, Ordering::Release);
            r.start.store(ptr, Ordering::Release);
            return Ok(i);
        }
    }
    Err(io::Error::other(format!(
        "the mmap engine watches at most {MAX_MAPS} mappings at once (threads x targets): use fewer threads"
    )))
}

fn unwatch(i: usize) {
    let r = &REGIONS[i];
    r.start.store(0, Ordering::Release);
    r.end.store(0, Ordering::Release);
    r.faulted.store(false, Ordering::Relaxed);
    r.used.store(false, Ordering::Release);
}

struct Map {
    ptr: *mut u8,
    len: usize,
    fd: RawFd,
    /// Entry in `REGIONS`.
    region: usize,
    /// A SIGBUS hit this mapping: the file shrank under it.
    truncated: bool,
}

impl Map {
    /// Whether [off, off+len) lies inside the mapping.
    #[inline]
    fn holds(&self, off: usize, len: usize) -> bool {
        off.checked_add(len).is_some_and(|end| end <= self.len)
    }
}

/// Memory-mapped I/O engine.
pub struct MmapEngine {
    maps: Vec<Map>,
    slots: Slots,
    done: DoneQueue,
    sync_writes: bool,
}

// SAFETY: the mappings are private to this engine, which one thread owns.
unsafe impl Send for MmapEngine {}

impl MmapEngine {
    /// Maps every file of `cfg` whole. `writable` maps them for writing; `sync_writes` msyncs each write.
    pub fn new(cfg: &EngineConfig, writable: bool, sync_writes: bool) -> io::Result<MmapEngine> {
        install_handler()?;
        let mut engine = MmapEngine {
            maps: Vec::new(),
            slots: Slots::new(cfg)?,
            done: DoneQueue::new(cfg.slots),
            sync_writes,
        };
        for &fd in &cfg.fds {
            // SAFETY: the caller keeps the descriptors open while the engine lives.
            let len = crate::platform::io::file_len(fd)?;
            let len = usize::try_from(len).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "the file is too large to map")
            })?;
            if len == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "cannot map an empty file",
                ));
            }
            let prot = libc::PROT_READ | if writable { libc::PROT_WRITE } else { 0 };
            // SAFETY: a fresh shared mapping of an open descriptor; checked for MAP_FAILED.
            let ptr =
                unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
            if ptr == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            let region = match watch(ptr as usize, len) {
                Ok(i) => i,
                Err(e) => {
                    // SAFETY: unmapping what was just mapped.
                    unsafe { libc::munmap(ptr, len) };
                    return Err(e);
                }
            };
            // Random access: no read-ahead around each touched page.
            // SAFETY: advising our own mapping.
            unsafe { libc::madvise(ptr, len, libc::MADV_RANDOM) };
            engine.maps.push(Map {
                ptr: ptr.cast(),
                len,
                fd,
                region,
                truncated: false,
            });
        }
        Ok(engine)
    }

    /// What to tell the user about a truncated mapping.
    fn truncation_note(m: &Map) -> String {
        // SAFETY: the descriptor stays open while the engine lives.
        let now = crate::platform::io::file_len(m.fd)
            .map(|n| format!("{n} bytes"))
            .unwrap_or_else(|_| "unknown".into());
        format!(
            "the target was truncated while the mmap engine ran on it (mapped {} bytes, now {now}): I/O on it stopped; do not shrink a target during a run",
            m.len
        )
    }
}

impl Drop for MmapEngine {
    fn drop(&mut self) {
        for m in &self.maps {
            // SAFETY: unmapping what new() mapped.
            unsafe { libc::munmap(m.ptr.cast(), m.len) };
            unwatch(m.region);
        }
    }
}

impl IoEngine for MmapEngine {
    fn name(&self) -> &'static str {
        "mmap"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::of(EngineKind::Mmap)
    }

    fn notes(&self) -> Vec<String> {
        self.maps
            .iter()
            .filter(|m| m.truncated)
            .map(MmapEngine::truncation_note)
            .collect()
    }

    fn explain(&self, result: i32) -> Option<String> {
        if result != -libc::EIO {
            return None;
        }
        self.maps
            .iter()
            .find(|m| m.truncated)
            .map(MmapEngine::truncation_note)
    }

    fn slots(&self) -> usize {
        self.slots.count()
    }

    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.slots.buffer(slot)
    }

    /// Prefetches the first [`PREFETCH_MAX`] bytes of the mapped range into
    /// the cache: a 4 KiB write's copy into a page not touched lately waits
    /// for 64 lines from memory, which can arrive while the caller computes
    /// the block's crc32c. Larger transfers are left to the hardware
    /// prefetcher, which follows a sequential copy by itself.
    #[inline]
    fn will_queue(&mut self, file: u32, offset: u64, len: u32) {
        let Some(m) = self.maps.get(file as usize) else {
            return;
        };
        let off = offset as usize;
        let len = (len as usize).min(PREFETCH_MAX);
        if m.truncated || !m.holds(off, len) {
            return;
        }
        #[cfg(target_arch = "x86_64")]
        for at in (off..off + len).step_by(64) {
            // SAFETY: `at` lies inside our mapping, and a prefetch is only a
            // hint: it never faults, not even on a page a truncation removed.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    m.ptr.add(at).cast(),
                )
            };
        }
    }

    #[inline]
    fn queue(&mut self, req: IoReq) -> io::Result<()> {
        let Some(m) = self.maps.get_mut(req.file as usize) else {
            self.done.push(req.slot, -libc::EBADF);
            return Ok(());
        };
        let len = req.len as usize;
        let off = req.offset as usize;
        if m.truncated {
            self.done.push(req.slot, -libc::EIO);
            return Ok(());
        }
        if req.op.is_flush() {
            // As fio's mmap engine: msync(MS_SYNC) of the whole mapping (the
            // kernel syncs the range's data), then, for fsync, the file's
            // metadata too.
            // SAFETY: the whole mapping is ours.
            let mut r = unsafe { libc::msync(m.ptr.cast(), m.len, libc::MS_SYNC) };
            if r == 0 && req.op == Op::Fsync {
                // SAFETY: a flush touches no buffer; the fd stays open with the map.
                r = unsafe { crate::platform::io::pio(m.fd, req.op, std::ptr::null_mut(), 0, 0) };
                self.done.push(req.slot, r.min(0));
                return Ok(());
            }
            let r = if r == 0 {
                0
            } else {
                -io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO)
            };
            self.done.push(req.slot, r);
            return Ok(());
        }
        if !m.holds(off, len) || len > self.slots.size() {
            self.done.push(req.slot, -libc::EINVAL);
            return Ok(());
        }
        let buf = self.slots.ptr_mut(req.slot as usize);
        // SAFETY: off+len is inside the mapping and len fits the slot
        // buffer, which this engine owns and is borrowed mutably here. A
        // truncated file makes the copy fault; the SIGBUS handler then puts
        // a zero page in its way and flags the mapping (module docs).
        unsafe {
            let map = m.ptr.add(off);
            match req.op {
                Op::Read => std::ptr::copy_nonoverlapping(map, buf, len),
                Op::Write => std::ptr::copy_nonoverlapping(buf, map, len),
                Op::Fsync | Op::Fdatasync => unreachable!("flushes return above"),
            }
        }
        if REGIONS[m.region].faulted.load(Ordering::Relaxed) {
            m.truncated = true;
            self.done.push(req.slot, -libc::EIO);
            return Ok(());
        }
        if req.op == Op::Write && self.sync_writes {
            let page = crate::buf::page_size();
            let start = off - off % page;
            // SAFETY: the range lies inside our mapping.
            let r =
                unsafe { libc::msync(m.ptr.add(start).cast(), off + len - start, libc::MS_SYNC) };
            if r != 0 {
                let e = io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO);
                self.done.push(req.slot, -e);
                return Ok(());
            }
        }
        self.done.push(req.slot, req.len as i32);
        Ok(())
    }

    fn commit(&mut self) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    fn reap(&mut self, _min: usize, out: &mut [Completion]) -> io::Result<usize> {
        Ok(self.done.reap(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn read(e: &mut MmapEngine, offset: u64) -> i32 {
        e.queue(IoReq {
            slot: 0,
            file: 0,
            op: Op::Read,
            offset,
            len: 4096,
        })
        .unwrap();
        let mut out = [Completion::default(); 1];
        assert_eq!(e.reap(1, &mut out).unwrap(), 1);
        out[0].result
    }

    #[test]
    fn a_file_truncated_under_the_mapping_fails_its_io_instead_of_killing_us() {
        let f = tempfile::tempfile().unwrap();
        f.set_len(1 << 20).unwrap();
        let cfg = EngineConfig {
            fds: vec![f.as_raw_fd()],
            slots: 1,
            slot_size: 4096,
            ..EngineConfig::default()
        };
        let mut e = MmapEngine::new(&cfg, false, false).unwrap();
        assert_eq!(read(&mut e, 512 << 10), 4096);
        assert!(e.notes().is_empty());
        f.set_len(8192).unwrap();
        // The prefetch hint on pages the truncation removed, and past the
        // mapping's end, is harmless: a prefetch never faults.
        e.will_queue(0, 512 << 10, 4096);
        e.will_queue(0, (1 << 20) - 4096, 1 << 20);
        e.will_queue(7, 0, 4096);
        assert!(e.notes().is_empty());
        // Inside what is left: still fine until a fault is seen.
        assert_eq!(read(&mut e, 4096), 4096);
        // Beyond the new end: SIGBUS, caught, reported as EIO.
        assert_eq!(read(&mut e, 512 << 10), -libc::EIO);
        let why = e.explain(-libc::EIO).unwrap();
        assert!(
            why.contains("truncated") && why.contains("now 8192 bytes"),
            "{why}"
        );
        assert_eq!(e.notes(), vec![why]);
        // Every later I/O to that target fails too: its pages are no longer the file's.
        assert_eq!(read(&mut e, 0), -libc::EIO);
        let region = e.maps[0].region;
        drop(e);
        // The table entry is free again.
        assert_eq!(REGIONS[region].start.load(Ordering::Relaxed), 0);
    }
}
