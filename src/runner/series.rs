//! The interval time series: workers hand in one message per interval, and
//! the main thread merges them across threads into series points.

use crate::stats::RwStats;

use super::result::{PointStats, Series, SeriesPoint};

/// What a worker sends at each interval boundary.
pub(super) struct IntervalMsg {
    pub target: usize,
    pub index: usize,
    pub duration_ns: u64,
    pub stats: RwStats,
}

/// One interval being merged: messages received, longest duration, the total and per target.
struct OpenInterval {
    received: usize,
    duration_ns: u64,
    total: RwStats,
    per_target: Vec<RwStats>,
}

/// Merges interval messages across threads into the time series.
///
/// Only intervals still waiting for some thread hold histograms; a closed
/// interval keeps nothing but its summary point, so memory does not grow
/// with the length of the run.
pub(super) struct IntervalAgg {
    workers: usize,
    ntargets: usize,
    /// Per interval index: `None` once closed (or not yet opened).
    slots: Vec<Option<OpenInterval>>,
    total: Vec<SeriesPoint>,
    targets: Vec<Vec<SeriesPoint>>,
    elapsed_ns: u64,
    done_upto: usize,
}

impl IntervalAgg {
    pub(super) fn new(ntargets: usize, workers: usize) -> IntervalAgg {
        IntervalAgg {
            workers,
            ntargets,
            slots: Vec::new(),
            total: Vec::new(),
            targets: vec![Vec::new(); ntargets],
            elapsed_ns: 0,
            done_upto: 0,
        }
    }

    /// Adds one worker's interval; returns the total point when an interval is complete.
    pub(super) fn add(&mut self, m: IntervalMsg) -> Option<SeriesPoint> {
        while self.slots.len() <= m.index {
            self.slots.push(None);
        }
        let ntargets = self.ntargets;
        let s = self.slots[m.index].get_or_insert_with(|| OpenInterval {
            received: 0,
            duration_ns: 0,
            total: RwStats::default(),
            per_target: (0..ntargets).map(|_| RwStats::default()).collect(),
        });
        s.received += 1;
        s.duration_ns = s.duration_ns.max(m.duration_ns);
        s.total.merge(&m.stats);
        s.per_target[m.target].merge(&m.stats);
        let mut last = None;
        while self.done_upto < self.slots.len()
            && self.slots[self.done_upto]
                .as_ref()
                .is_some_and(|s| s.received == self.workers)
        {
            last = self.close(self.done_upto);
            self.done_upto += 1;
        }
        last
    }

    fn close(&mut self, i: usize) -> Option<SeriesPoint> {
        let OpenInterval {
            duration_ns: dur,
            total,
            per_target: per,
            ..
        } = self.slots[i].take()?;
        self.elapsed_ns += dur;
        let secs = dur as f64 / 1e9;
        let t_s = self.elapsed_ns as f64 / 1e9;
        let point = |s: &RwStats| SeriesPoint {
            t_s,
            duration_s: secs,
            read: PointStats::from_dir(&s.read, secs),
            write: PointStats::from_dir(&s.write, secs),
            total: PointStats::from_dir(&s.total(), secs),
        };
        let p = point(&total);
        for (ti, s) in per.iter().enumerate() {
            self.targets[ti].push(point(s));
        }
        self.total.push(p.clone());
        Some(p)
    }

    pub(super) fn finish(mut self, interval_s: f64) -> Series {
        // Intervals that some threads never reached (they stopped earlier) close with what arrived.
        for i in self.done_upto..self.slots.len() {
            self.close(i);
        }
        Series {
            interval_s,
            total: self.total,
            targets: self.targets,
        }
    }
}
