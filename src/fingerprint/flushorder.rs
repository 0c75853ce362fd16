//! How a stream's flushes are ordered against its writes and against each
//! other (issue 38: "how concurrent flushes overlap"), from each I/O's
//! submission and completion:
//!
//! - a **barrier** (a checkpoint's writes, then its fsync; iosim's
//!   `flush_barrier`): no flush is submitted while a write is in flight,
//!   and no write while the flush is;
//! - **group commit** (one flusher serves many committers; iosim's
//!   `group_commit`): writes overlap, committers keep writing while a flush
//!   is in flight, and flushes never overlap each other;
//! - **independent** flushes (several WAL writers each flushing at once, or
//!   iosim's plain `fdatasync = N` at a queue depth over 1): flushes overlap
//!   writes and, on slow storage, each other, and the kernel may merge them.
//!
//! A flush is an I/O with a preflush (an empty flush, or a write with one:
//! `FWS`); a write with a preflush counts as both. At one instant a
//! completion comes before a submission. An I/O whose completion the trace
//! lacks stays in flight to the end.

use serde::{Deserialize, Serialize};

use super::LayerIo;
use crate::replay::events::EventOp;

/// The ordering figures; each `None` where the stream has none of what it
/// divides by.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlushOrder {
    /// Share of flushes submitted while another flush of the stream was in flight.
    pub flushes_overlapping: Option<f64>,
    /// Share of flushes submitted while a write of the stream was in flight.
    pub flushes_behind_writes: Option<f64>,
    /// Share of writes submitted while a flush of the stream was in flight.
    pub writes_during_flush: Option<f64>,
    /// The most writes in flight at once (flushes apart): under group
    /// commit each committer has at most one, so at least this many commit.
    #[serde(default)]
    pub max_writes_in_flight: u64,
}

/// The least flushes the ordering is judged on: fewer tell nothing.
pub const MIN_FLUSHES: u64 = 4;
/// At or under this share a thing "does not happen" (a few stragglers of a
/// trace's first or last moments aside).
pub const NEVER: f64 = 0.05;

/// The fewest flushes per write group commit gives (at most 10 commits
/// share a flush on average): a checkpoint's or writeback's one flush per
/// hundreds of writes is not a commit's.
pub const SHARED_FLUSH: f64 = 0.1;

/// What the figures say about how the flushes are shared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// Each flush waits for the writes before it, and holds the writes after it.
    Barrier,
    /// One flush at a time, writes going on around it.
    GroupCommit,
    /// Neither (or too few flushes, or writes never overlapped).
    Independent,
}

impl FlushOrder {
    /// The sharing these figures show, for a stream of `flushes` flushes
    /// whose writes overlapped (`concurrent`: more than one in flight);
    /// with one write at a time every flush is a barrier already.
    pub fn sharing(&self, flushes: u64, concurrent: bool, per_write: f64) -> Sharing {
        let (Some(overlap), Some(behind), Some(during)) = (
            self.flushes_overlapping,
            self.flushes_behind_writes,
            self.writes_during_flush,
        ) else {
            return Sharing::Independent;
        };
        if flushes < MIN_FLUSHES || !concurrent {
            return Sharing::Independent;
        }
        if behind <= NEVER && during <= NEVER {
            Sharing::Barrier
        } else if overlap <= NEVER / 2.0
            && during > 4.0 * NEVER
            && (SHARED_FLUSH..0.9).contains(&per_write)
        {
            Sharing::GroupCommit
        } else {
            Sharing::Independent
        }
    }
}

/// The figures of `ios` (one stream, in submission order); `None` when the
/// trace has no completions.
pub fn of(ios: &[LayerIo], completions: bool) -> Option<FlushOrder> {
    if !completions {
        return None;
    }
    // (time, 0 completion | 1 submission, index)
    let mut steps: Vec<(u64, u8, usize)> = Vec::with_capacity(ios.len() * 2);
    for (k, i) in ios.iter().enumerate() {
        if !counted(i) {
            continue;
        }
        steps.push((i.at_ns, 1, k));
        steps.push((i.done_ns.unwrap_or(u64::MAX).max(i.at_ns), 0, k));
    }
    steps.sort_unstable();
    let (mut flushing, mut writing) = (0u64, 0u64);
    let (mut flushes, mut overlapping, mut behind) = (0u64, 0u64, 0u64);
    let (mut writes, mut during, mut most) = (0u64, 0u64, 0u64);
    for (_, kind, k) in steps {
        let i = &ios[k];
        let (flush, write) = (i.flags.preflush, i.op == EventOp::Write);
        if kind == 0 {
            flushing -= u64::from(flush);
            writing -= u64::from(write);
            continue;
        }
        if flush {
            flushes += 1;
            overlapping += u64::from(flushing > 0);
            behind += u64::from(writing > 0);
        }
        if write {
            writes += 1;
            during += u64::from(flushing > 0);
        }
        flushing += u64::from(flush);
        writing += u64::from(write);
        most = most.max(writing);
    }
    let share = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
    Some(FlushOrder {
        flushes_overlapping: share(overlapping, flushes),
        flushes_behind_writes: share(behind, flushes),
        writes_during_flush: share(during, writes),
        max_writes_in_flight: most,
    })
}

/// Writes and flushes (reads and discards do not order anything here).
fn counted(i: &LayerIo) -> bool {
    i.flags.preflush || i.op == EventOp::Write
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::events::IoFlags;

    fn io(at: u64, done: u64, op: EventOp) -> LayerIo {
        LayerIo {
            at_ns: at,
            done_ns: Some(done),
            op,
            offset: at * 4096,
            len: if op == EventOp::Flush { 0 } else { 4096 },
            flags: IoFlags {
                preflush: op == EventOp::Flush,
                ..IoFlags::default()
            },
            source: 0,
            pid: 0,
        }
    }

    /// Four writes in flight together, then a flush once they are done,
    /// then the next four once it is: a barrier, whatever the depth.
    #[test]
    fn a_checkpoints_batches_are_a_barrier() {
        let mut v = Vec::new();
        for b in 0..6u64 {
            let t = b * 100;
            for w in 0..4 {
                v.push(io(t + w, t + 50, EventOp::Write));
            }
            // Completed at 50, submitted at 50: not behind them.
            v.push(io(t + 50, t + 99, EventOp::Flush));
        }
        let o = of(&v, true).unwrap();
        assert_eq!(o.flushes_behind_writes, Some(0.0));
        assert_eq!(o.writes_during_flush, Some(0.0));
        assert_eq!(o.flushes_overlapping, Some(0.0));
        assert_eq!(o.max_writes_in_flight, 4);
        assert_eq!(o.sharing(6, true, 0.25), Sharing::Barrier);
        // One write at a time: nothing to tell.
        assert_eq!(o.sharing(6, false, 0.25), Sharing::Independent);
        assert_eq!(o.sharing(3, true, 0.25), Sharing::Independent);
    }

    /// Writers go on while one flush at a time is in flight: group commit.
    #[test]
    fn one_flush_at_a_time_among_writes_is_group_commit() {
        let mut v = Vec::new();
        for k in 0..40u64 {
            v.push(io(k * 10, k * 10 + 15, EventOp::Write));
        }
        for f in 0..8u64 {
            v.push(io(f * 50 + 5, f * 50 + 45, EventOp::Flush));
        }
        v.sort_by_key(|i| i.at_ns);
        let o = of(&v, true).unwrap();
        assert_eq!(o.flushes_overlapping, Some(0.0));
        assert_eq!(o.flushes_behind_writes, Some(1.0));
        assert!(o.writes_during_flush.unwrap() > 0.5, "{o:?}");
        assert_eq!(o.sharing(8, true, 0.2), Sharing::GroupCommit);
        // A flush per write is not a shared flush, nor is a checkpoint's
        // one per hundred writes.
        assert_eq!(o.sharing(8, true, 1.0), Sharing::Independent);
        assert_eq!(o.sharing(8, true, 0.011), Sharing::Independent);
    }

    /// Flushes queued behind writes and over each other: independent.
    #[test]
    fn flushes_that_overlap_are_independent() {
        let mut v = Vec::new();
        for k in 0..20u64 {
            v.push(io(k * 10, k * 10 + 30, EventOp::Write));
            v.push(io(k * 10 + 1, k * 10 + 40, EventOp::Flush));
        }
        let o = of(&v, true).unwrap();
        assert!(o.flushes_overlapping.unwrap() > 0.5, "{o:?}");
        assert_eq!(o.sharing(20, true, 1.0), Sharing::Independent);
        // A write with a preflush is both; an unfinished flush stays in flight.
        let mut fw = io(0, 10, EventOp::Write);
        fw.flags.preflush = true;
        let mut open = io(20, 0, EventOp::Flush);
        open.done_ns = None;
        let o = of(&[fw, open, io(30, 40, EventOp::Write)], true).unwrap();
        assert_eq!(o.flushes_overlapping, Some(0.0));
        assert_eq!(o.writes_during_flush, Some(0.5));
        // No completions, or nothing to divide by.
        assert_eq!(of(&v, false), None);
        let reads = [io(0, 5, EventOp::Read)];
        assert_eq!(of(&reads, true), Some(FlushOrder::default()));
    }
}
