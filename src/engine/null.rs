//! The `null` engine: every I/O completes at once without touching storage
//! (fio's `null`). It measures the framework's own per-I/O cost.

use std::io;

use super::{Completion, EngineConfig, IoEngine, IoReq};
use crate::buf::AlignedBuf;

/// An engine with no storage.
pub struct NullEngine {
    buf: AlignedBuf,
    slot_size: usize,
    slots: usize,
    done: Vec<Completion>,
}

impl NullEngine {
    /// Creates the engine; buffers exist so writers can fill them as usual.
    pub fn new(cfg: &EngineConfig) -> NullEngine {
        let slot_size = cfg.slot_size.div_ceil(crate::buf::BUF_ALIGN) * crate::buf::BUF_ALIGN;
        NullEngine {
            buf: AlignedBuf::new(slot_size * cfg.slots.max(1)),
            slot_size,
            slots: cfg.slots.max(1),
            done: Vec::with_capacity(cfg.slots.max(1)),
        }
    }
}

impl IoEngine for NullEngine {
    fn name(&self) -> &'static str {
        "null"
    }

    fn is_sync(&self) -> bool {
        false
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
        self.done.push(Completion {
            slot: req.slot,
            result: req.len as i32,
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
