//! The `sync` engine: pread/pwrite, one I/O at a time (fio's `psync`).

use std::io;
use std::os::fd::RawFd;

use super::{pio, piov, Completion, EngineConfig, IoEngine, IoReq, Op};
use crate::buf::AlignedBuf;

/// pread/pwrite engine.
pub struct SyncEngine {
    fds: Vec<RawFd>,
    buf: AlignedBuf,
    slot_size: usize,
    slots: usize,
    done: Vec<Completion>,
    /// Scratch iovecs for queue_vectored (reused, no allocation per I/O).
    iov: Vec<libc::iovec>,
}

// SAFETY: the iovec scratch only ever points into `buf`, owned by the engine.
unsafe impl Send for SyncEngine {}

impl SyncEngine {
    /// Creates the engine and its buffers.
    pub fn new(cfg: &EngineConfig) -> SyncEngine {
        let slot_size = cfg.slot_size.div_ceil(crate::buf::BUF_ALIGN) * crate::buf::BUF_ALIGN;
        SyncEngine {
            fds: cfg.fds.clone(),
            buf: AlignedBuf::new(slot_size * cfg.slots.max(1)),
            slot_size,
            slots: cfg.slots.max(1),
            done: Vec::with_capacity(cfg.slots.max(1)),
            iov: Vec::new(),
        }
    }
}

impl IoEngine for SyncEngine {
    fn name(&self) -> &'static str {
        "sync"
    }

    fn is_sync(&self) -> bool {
        true
    }

    fn slots(&self) -> usize {
        self.slots
    }

    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        let s = self.slot_size;
        &mut self.buf.as_mut_slice()[slot * s..(slot + 1) * s]
    }

    #[inline]
    fn queue(&mut self, req: IoReq) -> io::Result<()> {
        debug_assert!(req.len as usize <= self.slot_size);
        // SAFETY: the slot lies inside buf (checked by the slice bounds in debug builds via buffer()).
        let ptr = unsafe { self.buf.as_ptr().add(req.slot as usize * self.slot_size) };
        let fd = self.fds[req.file as usize];
        let result = pio(fd, req.op, ptr, req.len as usize, req.offset);
        self.done.push(Completion {
            slot: req.slot,
            result,
        });
        Ok(())
    }

    fn commit(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn queue_vectored(
        &mut self,
        slot: u32,
        file: u32,
        op: Op,
        offset: u64,
        iov: &[(usize, usize)],
    ) -> io::Result<()> {
        self.iov.clear();
        for &(s, len) in iov {
            if s >= self.slots || len > self.slot_size {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "bad iovec slot",
                ));
            }
            self.iov.push(libc::iovec {
                // SAFETY: s < slots, so the pointer is inside buf.
                iov_base: unsafe { self.buf.as_ptr().add(s * self.slot_size) }.cast(),
                iov_len: len,
            });
        }
        let result = piov(self.fds[file as usize], op, &self.iov, offset);
        self.done.push(Completion { slot, result });
        Ok(())
    }

    #[inline]
    fn reap(&mut self, _min: usize, out: &mut [Completion]) -> io::Result<usize> {
        let n = self.done.len().min(out.len());
        out[..n].copy_from_slice(&self.done[..n]);
        self.done.drain(..n);
        Ok(n)
    }
}
