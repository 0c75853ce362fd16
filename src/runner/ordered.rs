//! Ordered phases inside one thread (`--flush-barrier`, `--doublewrite`):
//! a batch of writes, then a flush that waits for them, then the next
//! batch, as databases order their writes.
//!
//! - A checkpoint writes its pages, several at a time, then fsyncs the
//!   file once they are all written, and writes nothing more until the
//!   fsync returns: `--fdatasync N --flush-barrier` (N writes a batch).
//! - InnoDB's doublewrite buffer: each batch of dirty pages is first
//!   written, one after another, to the doublewrite area and flushed; only
//!   then are the pages written in place, and flushed:
//!   `--fdatasync N --doublewrite SIZE` (the last SIZE bytes of the region
//!   are the doublewrite area; the batch's copies are written there, from
//!   its start, before the batch's own writes).
//!
//! Plain `--fdatasync N` queues its flush right behind the Nth write and
//! goes on issuing: with several writes in flight the flush covers only
//! those that completed, and later writes overtake it.
//!
//! The worker enters [`Ordered::step`] through its flush branch (the gate,
//! [`Ordered::gate`], is closed while copies or a barrier are owed), so the
//! path of the other I/Os is unchanged. Slots are parked while a barrier
//! waits, so the issue loop finds none free.

/// Where a thread is in its batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Writing the batch's copies to the doublewrite area: how many are left.
    Copies(u64),
    /// The worker's own writes, until the batch is complete.
    InPlace,
    /// Waiting for the I/Os in flight to complete; then the flush.
    Drain(After),
    /// The flush is in flight.
    Flushing(After),
}

/// What follows a barrier's flush.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum After {
    /// The batch's writes in place (after the copies' flush).
    InPlace,
    /// The next batch.
    NextBatch,
}

/// What the worker does with a free slot while the gate is closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Queue a write of `len` bytes at `off` (a copy to the doublewrite area).
    Write {
        /// Absolute offset.
        off: u64,
        /// Bytes.
        len: u32,
    },
    /// Queue the flush in this slot and park every other free slot.
    Flush,
    /// Park this slot: I/Os in flight must complete first.
    Park,
}

/// The doublewrite area: the last bytes of the region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Area {
    start: u64,
    len: u64,
    /// Next copy's offset, relative to `start`.
    next: u64,
    /// Each copy's length (the workload's block size).
    bs: u64,
}

/// One thread's ordered batches.
#[derive(Debug)]
pub(super) struct Ordered {
    /// Writes of the thread between two flushes (the flush's N).
    batch: u64,
    area: Option<Area>,
    phase: Phase,
    /// Slots held back while a barrier waits.
    pub parked: Vec<u32>,
}

impl Ordered {
    /// Batches of `batch` writes; with `doublewrite` bytes, copied first to
    /// the end of the region `region_start..region_start + region_len` in
    /// copies of `bs` bytes. The caller's own writes stay out of that area
    /// ([`Ordered::own_len`]).
    pub fn new(
        batch: u64,
        doublewrite: Option<u64>,
        region_start: u64,
        region_len: u64,
        bs: u64,
        slots: usize,
    ) -> Result<Ordered, String> {
        let batch = batch.max(1);
        let area = match doublewrite {
            None => None,
            Some(dw) => {
                if dw < bs.saturating_mul(batch) {
                    return Err(format!(
                        "--doublewrite {} holds fewer than one batch of {batch} writes of {}: give at least {}",
                        crate::units::format_size_arg(dw),
                        crate::units::format_size_arg(bs),
                        crate::units::format_size_arg(bs * batch)
                    ));
                }
                if dw.saturating_add(bs) > region_len {
                    return Err(format!(
                        "--doublewrite {} leaves no room for the writes in place in a region of {}: give a smaller area or a larger --size",
                        crate::units::format_size_arg(dw),
                        crate::units::format_size_arg(region_len)
                    ));
                }
                Some(Area {
                    start: region_start + region_len - dw,
                    len: dw,
                    next: 0,
                    bs,
                })
            }
        };
        Ok(Ordered {
            batch,
            phase: if area.is_some() {
                Phase::Copies(batch)
            } else {
                Phase::InPlace
            },
            area,
            parked: Vec::with_capacity(slots),
        })
    }

    /// `spec`'s ordered batches (`--flush-barrier`, `--doublewrite`; the
    /// flush's N writes each) over its region, or `None`; or why the
    /// doublewrite area does not fit.
    pub fn for_spec(
        spec: &crate::workload::WorkloadSpec,
        region_start: u64,
        region_len: u64,
        slots: usize,
    ) -> Result<Option<Ordered>, String> {
        if !spec.flush_barrier && spec.doublewrite.is_none() {
            return Ok(None);
        }
        let batch = spec.effective_flush().map_or(1, |f| u64::from(f.every));
        Ordered::new(
            batch,
            spec.doublewrite,
            region_start,
            region_len,
            spec.bs,
            slots,
        )
        .map(Some)
    }

    /// The length of the region the thread's own writes may use: all of it
    /// but the doublewrite area.
    pub fn own_len(doublewrite: Option<u64>, region_len: u64) -> u64 {
        region_len.saturating_sub(doublewrite.unwrap_or(0))
    }

    /// The worker's flush gate: its own writes since the last flush at or
    /// above it send the next free slot to [`Ordered::step`]. Closed (0)
    /// while copies are owed or a barrier waits; the batch otherwise.
    pub fn gate(&self) -> u64 {
        match self.phase {
            Phase::InPlace => self.batch,
            _ => 0,
        }
    }

    /// A slot is free and the gate is closed, with `inflight` I/Os in
    /// flight: what to do with it.
    pub fn step(&mut self, inflight: usize) -> Step {
        loop {
            match self.phase {
                Phase::Copies(0) => self.phase = Phase::Drain(After::InPlace),
                Phase::Copies(left) => {
                    self.phase = Phase::Copies(left - 1);
                    let a = self.area.as_mut().expect("copies need the area");
                    if a.next + a.bs > a.len {
                        a.next = 0;
                    }
                    let off = a.start + a.next;
                    a.next += a.bs;
                    return Step::Write {
                        off,
                        len: a.bs as u32,
                    };
                }
                Phase::InPlace => self.phase = Phase::Drain(After::NextBatch),
                Phase::Drain(after) if inflight == 0 => {
                    self.phase = Phase::Flushing(after);
                    return Step::Flush;
                }
                Phase::Drain(_) | Phase::Flushing(_) => return Step::Park,
            }
        }
    }

    /// True while the barrier's flush is in flight.
    pub fn flushing(&self) -> bool {
        matches!(self.phase, Phase::Flushing(_))
    }

    /// The barrier's flush completed: the next phase begins.
    pub fn flushed(&mut self) {
        self.phase = match self.phase {
            Phase::Flushing(After::InPlace) => Phase::InPlace,
            Phase::Flushing(After::NextBatch) if self.area.is_some() => {
                // The buffer is reused: each batch's copies start at its start.
                if let Some(a) = &mut self.area {
                    a.next = 0;
                }
                Phase::Copies(self.batch)
            }
            Phase::Flushing(After::NextBatch) => Phase::InPlace,
            p => p,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a worker at `qd` does: returns the trace of I/Os issued and
    /// completed, as (event, what), with completions in issue order.
    fn drive(o: &mut Ordered, qd: usize, own_writes: u64) -> Vec<String> {
        let mut trace = Vec::new();
        let mut inflight: Vec<String> = Vec::new();
        let mut free = qd;
        let mut unflushed = 0u64;
        let mut own = 0u64;
        while own < own_writes || !inflight.is_empty() || (unflushed > 0 && unflushed >= o.gate()) {
            // Issue into every free slot.
            while free > 0 {
                if unflushed >= o.gate() {
                    match o.step(inflight.len()) {
                        Step::Write { off, .. } => {
                            free -= 1;
                            inflight.push(format!("copy@{off}"));
                        }
                        Step::Flush => {
                            free -= 1;
                            unflushed = 0;
                            inflight.push("flush".into());
                            o.parked.extend(std::iter::repeat_n(0, free));
                            free = 0;
                        }
                        Step::Park => {
                            free -= 1;
                            o.parked.push(0);
                        }
                    }
                    continue;
                }
                if own == own_writes {
                    break;
                }
                free -= 1;
                own += 1;
                unflushed += 1;
                inflight.push(format!("write{own}"));
            }
            // Complete the oldest.
            let done = inflight.remove(0);
            trace.push(done.clone());
            free += 1;
            if done == "flush" && o.flushing() {
                o.flushed();
                free += o.parked.len();
                o.parked.clear();
            }
            if inflight.is_empty() && own == own_writes && unflushed < o.gate() {
                break;
            }
        }
        trace
    }

    /// A checkpoint at QD 4 with a barrier every 3 writes: each flush comes
    /// after its three writes completed and before the next write.
    #[test]
    fn a_barrier_flush_waits_for_its_batch_and_holds_the_next() {
        let mut o = Ordered::new(3, None, 0, 1 << 20, 4096, 4).unwrap();
        let t = drive(&mut o, 4, 9);
        assert_eq!(
            t,
            [
                "write1", "write2", "write3", "flush", "write4", "write5", "write6", "flush",
                "write7", "write8", "write9", "flush"
            ]
        );
    }

    /// The doublewrite: the batch's copies at the area's start, one after
    /// another, a flush, the writes in place, a flush; the area wraps.
    #[test]
    fn a_doublewrite_batch_is_copied_flushed_written_in_place_and_flushed() {
        let mut o = Ordered::new(2, Some(3 * 4096), 0, 1 << 20, 4096, 2).unwrap();
        let t = drive(&mut o, 2, 4);
        let area = (1 << 20) - 3 * 4096;
        let c = |i: u64| format!("copy@{}", area + i * 4096);
        assert_eq!(
            t,
            [
                c(0),
                c(1),
                "flush".into(),
                "write1".into(),
                "write2".into(),
                "flush".into(),
                c(0),
                c(1),
                "flush".into(),
                "write3".into(),
                "write4".into(),
                "flush".into(),
            ]
        );
        assert_eq!(Ordered::own_len(Some(3 * 4096), 1 << 20), area);
    }

    #[test]
    fn an_area_too_small_or_too_large_is_refused() {
        let e = Ordered::new(64, Some(512 << 10), 0, 1 << 30, 16 << 10, 1).unwrap_err();
        assert!(e.contains("give at least 1M"), "{e}");
        let e = Ordered::new(1, Some(1 << 20), 0, 1 << 20, 4096, 1).unwrap_err();
        assert!(e.contains("larger --size"), "{e}");
    }
}
