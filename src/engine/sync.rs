//! The `sync` engine: pread/pwrite, one I/O at a time (fio's `psync`).

use crate::platform::io::RawFile;
use std::io;

use super::slots::{DoneQueue, Slots};
use super::{Capabilities, Completion, EngineConfig, IoEngine, IoReq, Op};
use crate::platform::io::{iovec, pio, piov, IoVec};
use crate::workload::EngineKind;

/// pread/pwrite engine.
pub struct SyncEngine {
    fds: Vec<RawFile>,
    slots: Slots,
    done: DoneQueue,
    /// Scratch iovecs for queue_vectored (reused, no allocation per I/O).
    iov: Vec<IoVec>,
}

// SAFETY: the iovec scratch only ever points into `slots`, owned by the engine.
unsafe impl Send for SyncEngine {}

impl SyncEngine {
    /// Creates the engine and its buffers.
    pub fn new(cfg: &EngineConfig) -> io::Result<SyncEngine> {
        Ok(SyncEngine {
            fds: cfg.fds.clone(),
            slots: Slots::new(cfg)?,
            done: DoneQueue::new(cfg.slots),
            iov: Vec::new(),
        })
    }
}

impl IoEngine for SyncEngine {
    fn name(&self) -> &'static str {
        "sync"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::of(EngineKind::Sync)
    }

    fn slots(&self) -> usize {
        self.slots.count()
    }

    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.slots.buffer(slot)
    }

    #[inline]
    fn queue(&mut self, req: IoReq) -> io::Result<()> {
        debug_assert!(req.len as usize <= self.slots.size());
        let len = (req.len as usize).min(self.slots.size());
        let ptr = self.slots.ptr_mut(req.slot as usize);
        let fd = self.fds[req.file as usize];
        // SAFETY: ptr is the slot's buffer, valid for slots.size() >= len
        // bytes and owned by this engine, which is borrowed mutably here.
        let result = unsafe { pio(fd, req.op, ptr, len, req.offset) };
        self.done.push(req.slot, result);
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
        self.slots.check_iov(iov)?;
        self.iov.clear();
        for &(s, len) in iov {
            self.iov.push(iovec(self.slots.ptr_mut(s), len));
        }
        // SAFETY: every iovec points into this engine's slots (checked above).
        let result = unsafe { piov(self.fds[file as usize], op, &self.iov, offset) };
        self.done.push(slot, result);
        Ok(())
    }

    #[inline]
    fn reap(&mut self, _min: usize, out: &mut [Completion]) -> io::Result<usize> {
        Ok(self.done.reap(out))
    }
}
