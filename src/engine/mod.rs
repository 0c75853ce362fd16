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

use std::io;
use std::os::fd::RawFd;

use crate::workload::EngineKind;

pub mod faulty;
mod mmap;
mod null;
mod slots;
mod sync;
mod uring;

pub use mmap::MmapEngine;
pub use null::NullEngine;
pub use sync::SyncEngine;
pub use uring::UringEngine;

/// Direction of an I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read into the slot's buffer.
    Read,
    /// Write from the slot's buffer.
    Write,
}

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
    pub fds: Vec<RawFd>,
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

/// The engine contract.
pub trait IoEngine: Send {
    /// Short name (`uring`, `sync`, `null`).
    fn name(&self) -> &'static str;
    /// True when `queue` performs the I/O before returning (the caller times around it).
    fn is_sync(&self) -> bool;
    /// Number of slots.
    fn slots(&self) -> usize;
    /// The buffer of `slot` (slot_size bytes, page-aligned). Do not touch it while its I/O is in flight.
    fn buffer(&mut self, slot: usize) -> &mut [u8];
    /// Queues a request. The slot must not have an I/O in flight.
    fn queue(&mut self, req: IoReq) -> io::Result<()>;
    /// Submits queued requests without waiting.
    fn commit(&mut self) -> io::Result<()>;
    /// True when [`IoEngine::commit`] hands requests to the kernel (a system
    /// call worth timing), false when queued requests are already done and
    /// committing is free; the runner then skips per-group submission.
    fn commit_submits(&self) -> bool {
        false
    }
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
    /// Notes about how the engine was set up (fallbacks, registration), for the report.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// Queues one vectored request (preadv/pwritev; io_uring READV/WRITEV)
    /// that transfers `iov` = (slot buffer index, bytes) pieces in order,
    /// starting at `offset`. The completion carries `slot`. None of the
    /// named slots may have an I/O in flight. Engines without vectored I/O
    /// return `Unsupported`; the caller then issues one request per piece.
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

/// Creates an engine of `kind`. io_uring falls back to `sync` when the kernel
/// refuses it; the returned note says so.
pub fn create(
    kind: EngineKind,
    cfg: &EngineConfig,
) -> io::Result<(Box<dyn IoEngine>, Option<String>)> {
    match kind {
        EngineKind::Null => Ok((Box::new(NullEngine::new(cfg)), None)),
        EngineKind::Sync => Ok((Box::new(SyncEngine::new(cfg)), None)),
        EngineKind::Mmap => Ok((Box::new(MmapEngine::new(cfg, cfg.writable, cfg.sync_writes)?), None)),
        EngineKind::Uring => match UringEngine::new(cfg) {
            Ok(e) => Ok((Box::new(e), None)),
            Err(e) if cfg.hipri || cfg.sqpoll => Err(io::Error::new(
                e.kind(),
                format!("io_uring with {} could not be set up: {e}", if cfg.hipri { "--hipri" } else { "--sqpoll" }),
            )),
            Err(e) => Ok((
                Box::new(SyncEngine::new(cfg)),
                Some(format!("io_uring is not available here ({e}); using the sync engine (pread/pwrite, queue depth 1 per thread)")),
            )),
        },
    }
}

/// Checks whether io_uring can be set up at all (cheap; used for notices).
pub fn uring_available() -> Result<(), io::Error> {
    io_uring::IoUring::new(2).map(|_| ())
}

/// Performs one positional read or write synchronously; returns bytes or -errno.
pub(crate) fn pio(fd: RawFd, op: Op, buf: *mut u8, len: usize, offset: u64) -> i32 {
    // SAFETY: the caller guarantees buf is valid for len bytes.
    let r = unsafe {
        match op {
            Op::Read => libc::pread64(fd, buf.cast(), len, offset as libc::off64_t),
            Op::Write => libc::pwrite64(fd, buf.cast(), len, offset as libc::off64_t),
        }
    };
    if r < 0 {
        -io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    } else {
        r as i32
    }
}

/// Performs one positional vectored read or write synchronously; returns bytes or -errno.
pub(crate) fn piov(fd: RawFd, op: Op, iov: &[libc::iovec], offset: u64) -> i32 {
    // SAFETY: the caller guarantees every iovec points to valid memory.
    let r = unsafe {
        match op {
            Op::Read => libc::preadv64(fd, iov.as_ptr(), iov.len() as i32, offset as libc::off64_t),
            Op::Write => {
                libc::pwritev64(fd, iov.as_ptr(), iov.len() as i32, offset as libc::off64_t)
            }
        }
    };
    if r < 0 {
        -io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    } else {
        r as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    fn roundtrip(kind: EngineKind) {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![7u8; 64 * 1024]).unwrap();
        let cfg = EngineConfig {
            fds: vec![f.as_raw_fd()],
            slots: 4,
            slot_size: 4096,
            sqpoll: false,
            hipri: false,
            writable: true,
            sync_writes: false,
        };
        let (mut e, _) = create(kind, &cfg).unwrap();
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

    #[test]
    fn sync_engine_reads_what_it_wrote() {
        roundtrip(EngineKind::Sync);
    }

    #[test]
    fn uring_engine_reads_what_it_wrote() {
        if let Err(e) = uring_available() {
            eprintln!("skipped: io_uring unavailable: {e}");
            return;
        }
        roundtrip(EngineKind::Uring);
    }

    fn vectored_roundtrip(kind: EngineKind) {
        let f = tempfile::tempfile().unwrap();
        f.set_len(64 * 1024).unwrap();
        let cfg = EngineConfig {
            fds: vec![f.as_raw_fd()],
            slots: 4,
            slot_size: 4096,
            ..Default::default()
        };
        let (mut e, _) = create(kind, &cfg).unwrap();
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

    #[test]
    fn uring_engine_vectored_io() {
        if let Err(e) = uring_available() {
            eprintln!("skipped: io_uring unavailable: {e}");
            return;
        }
        vectored_roundtrip(EngineKind::Uring);
    }

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
        let mut e = SyncEngine::new(&cfg);
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
        assert_eq!(out[0].result, -libc::EBADF);
    }
}
