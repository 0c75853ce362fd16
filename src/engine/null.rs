//! The `null` engine: every I/O completes at once without touching storage
//! (fio's `null`). It measures the framework's own per-I/O cost.

use std::io;

use super::slots::{DoneQueue, Slots};
use super::{Capabilities, Completion, EngineConfig, IoEngine, IoReq};
use crate::workload::EngineKind;

/// An engine with no storage.
pub struct NullEngine {
    slots: Slots,
    done: DoneQueue,
}

impl NullEngine {
    /// Creates the engine; buffers exist so writers can fill them as usual.
    pub fn new(cfg: &EngineConfig) -> io::Result<NullEngine> {
        Ok(NullEngine {
            slots: Slots::new(cfg)?,
            done: DoneQueue::new(cfg.slots),
        })
    }
}

impl IoEngine for NullEngine {
    fn name(&self) -> &'static str {
        "null"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::of(EngineKind::Null)
    }

    fn slots(&self) -> usize {
        self.slots.count()
    }

    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.slots.buffer(slot)
    }

    #[inline]
    fn queue(&mut self, req: IoReq) -> io::Result<()> {
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
