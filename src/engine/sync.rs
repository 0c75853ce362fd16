//! The `sync` engine: pread/pwrite, one I/O at a time (fio's `psync`).

use std::io;
use std::os::fd::RawFd;

use super::{pio, Completion, EngineConfig, IoEngine, IoReq};
use crate::buf::AlignedBuf;

/// pread/pwrite engine.
pub struct SyncEngine {
    fds: Vec<RawFd>,
    buf: AlignedBuf,
    slot_size: usize,
    slots: usize,
    done: Vec<Completion>,
}

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

    #[inline]
    fn reap(&mut self, _min: usize, out: &mut [Completion]) -> io::Result<usize> {
        let n = self.done.len().min(out.len());
        out[..n].copy_from_slice(&self.done[..n]);
        self.done.drain(..n);
        Ok(n)
    }
}
