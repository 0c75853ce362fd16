//! What every engine shares: the slot buffers, and the completion list of
//! engines that finish an I/O inside `queue` (sync, mmap, null).

use super::{Completion, EngineConfig};
use crate::buf::{page_size, AlignedBuf, AllocError};

/// One page-aligned buffer per slot, carved out of one allocation.
pub(crate) struct Slots {
    buf: AlignedBuf,
    size: usize,
    count: usize,
}

impl Slots {
    /// `cfg.slots` buffers of `cfg.slot_size` bytes, rounded up to whole
    /// pages; an error (not an abort) when that is more than can be had.
    pub(crate) fn new(cfg: &EngineConfig) -> Result<Slots, AllocError> {
        let count = cfg.slots.max(1);
        let (size, total) = Slots::sizes(cfg.slots, cfg.slot_size).ok_or(AllocError {
            len: usize::MAX,
            why: "slots x slot size overflows",
        })?;
        Ok(Slots {
            buf: AlignedBuf::try_new(total)?,
            size,
            count,
        })
    }

    /// (bytes per slot, bytes in all) for `slots` slots of `slot_size`; None on overflow.
    pub(crate) fn sizes(slots: usize, slot_size: usize) -> Option<(usize, usize)> {
        let size = slot_size.max(1).checked_next_multiple_of(page_size())?;
        Some((size, size.checked_mul(slots.max(1))?))
    }

    /// Number of slots.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Bytes per slot.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Checks a vectored request's (slot, bytes) pieces against the slots.
    pub(crate) fn check_iov(&self, iov: &[(usize, usize)]) -> std::io::Result<()> {
        if iov
            .iter()
            .any(|&(s, len)| s >= self.count || len > self.size)
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "bad iovec slot",
            ));
        }
        Ok(())
    }

    /// The buffer of `slot`.
    pub(crate) fn buffer(&mut self, slot: usize) -> &mut [u8] {
        let s = self.size;
        &mut self.buf.as_mut_slice()[slot * s..(slot + 1) * s]
    }

    /// Raw pointer to the buffer of `slot` (stable for the life of `self`),
    /// for the kernel or a copy to write into; only from a unique borrow.
    #[inline]
    pub(crate) fn ptr_mut(&mut self, slot: usize) -> *mut u8 {
        assert!(slot < self.count, "slot {slot} out of range");
        // SAFETY: slot < count, so the offset is inside the allocation.
        unsafe { self.buf.as_mut_ptr().add(slot * self.size) }
    }
}

/// Completions of I/Os already done, handed out by the next `reap`.
/// Its capacity is the number of slots, so pushing never allocates.
pub(crate) struct DoneQueue {
    done: Vec<Completion>,
}

impl DoneQueue {
    /// Room for `slots` completions.
    pub(crate) fn new(slots: usize) -> DoneQueue {
        DoneQueue {
            done: Vec::with_capacity(slots.max(1)),
        }
    }

    /// Records a finished I/O.
    #[inline]
    pub(crate) fn push(&mut self, slot: u32, result: i32) {
        self.done.push(Completion { slot, result });
    }

    /// Moves up to `out.len()` completions into `out`, oldest first.
    #[inline]
    pub(crate) fn reap(&mut self, out: &mut [Completion]) -> usize {
        let n = self.done.len().min(out.len());
        // An element loop, not `copy_from_slice`: n is a handful (usually 1),
        // where a call to memcpy costs more than the copy (about 40
        // instructions per I/O on the null engine, with the drain below).
        for (o, c) in out.iter_mut().zip(&self.done[..n]) {
            *o = *c;
        }
        if n == self.done.len() {
            self.done.clear();
        } else {
            self.done.drain(..n);
        }
        n
    }
}
