//! The interval time series: workers hand in one message per interval (or
//! per run of intervals they slept through), and the main thread merges them
//! across threads into series points.
//!
//! Intervals are aligned for every worker: interval `i` is
//! `[start + i * interval, start + (i + 1) * interval)` of the shared window,
//! the last one cut at the window's end.

use std::collections::VecDeque;
use std::time::Duration;

use crate::histlog::SharedHistLog;
use crate::stats::RwStats;

use super::result::{PointStats, Series, SeriesPoint};

/// Shortest series interval: below this the per-interval work (a copy of
/// the interval's histograms, merged on the main thread) costs more than a
/// few percent of a worker's time.
pub const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// Per worker, the main thread needs about this much of every interval to
/// merge that worker's message, so a run with many workers gets a longer
/// shortest interval: 0.2 ms a worker (256 workers: 51 ms).
pub const MIN_INTERVAL_PER_WORKER: Duration = Duration::from_micros(200);

/// Most series points a run keeps (all scopes together: the total and each
/// target). A longer run gets a longer interval, so the series' memory is
/// bounded (about 200 bytes a point: 20 MB) whatever the run's length.
pub const MAX_SERIES_POINTS: u64 = 100_000;

/// The interval a run really uses for `requested`, and a note when it had to
/// be raised: at least [`MIN_INTERVAL`] and [`MIN_INTERVAL_PER_WORKER`] times
/// the workers, and long enough that `duration` needs at most
/// [`MAX_SERIES_POINTS`] points over `scopes` series.
pub fn effective_interval(
    requested: Duration,
    workers: usize,
    scopes: usize,
    duration: Duration,
) -> (Duration, Option<String>) {
    let by_workers = MIN_INTERVAL_PER_WORKER.saturating_mul(workers.min(u32::MAX as usize) as u32);
    let per_point =
        duration.as_nanos().saturating_mul(scopes.max(1) as u128) / u128::from(MAX_SERIES_POINTS);
    let by_points = Duration::from_nanos(u64::try_from(per_point).unwrap_or(u64::MAX));
    let need = MIN_INTERVAL.max(by_workers).max(by_points);
    if requested >= need {
        return (requested, None);
    }
    // Whole milliseconds, so the note and the series read plainly.
    let floor = Duration::from_millis(
        u64::try_from(need.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX),
    );
    let why = if by_points > MIN_INTERVAL.max(by_workers) {
        format!("a {duration:?} run keeps at most {MAX_SERIES_POINTS} series points")
    } else if by_workers > MIN_INTERVAL {
        format!("with {workers} workers, shorter intervals would cost the run more than they show")
    } else {
        format!("intervals shorter than {MIN_INTERVAL:?} cost the run more than they show")
    };
    (
        floor,
        Some(format!(
            "--interval {:?} raised to {:?}: {why}",
            requested, floor
        )),
    )
}

/// What a worker sends when intervals close: `stats` are those of interval
/// `first`; intervals `first + 1 ..= through` had nothing from this worker.
#[derive(Clone)]
pub(super) struct IntervalMsg {
    /// Which workload of the run the sender works for.
    pub workload: usize,
    pub target: usize,
    /// Thread number of the sender within its workload.
    pub thread: usize,
    pub first: usize,
    pub through: usize,
    /// End of interval `through`, ns from the window's start.
    pub end_ns: u64,
    pub stats: RwStats,
    /// The sender's I/O errors since its run began (live metrics).
    pub errors: u64,
    /// The sender's I/Os in flight when it sent this (live metrics).
    pub in_flight: u32,
}

/// One interval being merged: messages received, its length, per target.
struct OpenInterval {
    received: usize,
    duration_ns: u64,
    /// `None` until a worker of that target sends statistics.
    per_target: Vec<Option<RwStats>>,
    /// Per thread, only when the run keeps per-thread series.
    per_thread: Vec<Option<RwStats>>,
}

/// Merges interval messages across threads into the time series.
///
/// Only intervals still waiting for some thread hold histograms; a closed
/// interval keeps nothing but its summary point, so memory does not grow
/// with the length of the run beyond the points themselves.
pub(super) struct IntervalAgg {
    workers: usize,
    ntargets: usize,
    interval_ns: u64,
    /// Open intervals, from index `base` on.
    open: VecDeque<OpenInterval>,
    base: usize,
    total: Vec<SeriesPoint>,
    targets: Vec<Vec<SeriesPoint>>,
    /// Per thread (DiskSpd's `-D` per-thread IOPS deviation); empty unless asked for.
    threads: Vec<Vec<SeriesPoint>>,
    elapsed_ns: u64,
    /// `--hist-log`: each closed interval's histograms are written here.
    hist_log: Option<SharedHistLog>,
}

impl IntervalAgg {
    /// `per_thread` keeps a series for every worker as well (its points
    /// count against [`MAX_SERIES_POINTS`]: see [`effective_interval`]'s scopes).
    pub(super) fn new(
        ntargets: usize,
        workers: usize,
        interval_ns: u64,
        per_thread: bool,
    ) -> IntervalAgg {
        IntervalAgg {
            workers,
            ntargets,
            interval_ns,
            open: VecDeque::new(),
            base: 0,
            total: Vec::new(),
            targets: vec![Vec::new(); ntargets],
            threads: if per_thread {
                vec![Vec::new(); workers]
            } else {
                Vec::new()
            },
            elapsed_ns: 0,
            hist_log: None,
        }
    }

    /// Writes each interval's histograms to `log` as it closes.
    pub(super) fn with_hist_log(mut self, log: Option<SharedHistLog>) -> IntervalAgg {
        self.hist_log = log;
        self
    }

    /// The open interval `i` (created when first seen).
    fn slot(&mut self, i: usize) -> &mut OpenInterval {
        let ntargets = self.ntargets;
        let nthreads = self.threads.len();
        while self.base + self.open.len() <= i {
            self.open.push_back(OpenInterval {
                received: 0,
                duration_ns: 0,
                per_target: (0..ntargets).map(|_| None).collect(),
                per_thread: (0..nthreads).map(|_| None).collect(),
            });
        }
        &mut self.open[i - self.base]
    }

    /// Adds one worker's message; returns the last total point completed by it.
    pub(super) fn add(&mut self, m: IntervalMsg) -> Option<SeriesPoint> {
        if m.first < self.base {
            // Cannot happen: a worker reports each interval once, in order.
            return None;
        }
        let iv = self.interval_ns;
        for i in m.first..=m.through {
            let start = i as u64 * iv;
            let dur = m.end_ns.min(start + iv).saturating_sub(start);
            let s = self.slot(i);
            s.received += 1;
            s.duration_ns = s.duration_ns.max(dur);
        }
        let s = self.slot(m.first);
        if let Some(t) = s.per_thread.get_mut(m.thread) {
            // One message per thread and interval: no merge needed.
            *t = Some(m.stats.clone());
        }
        match &mut s.per_target[m.target] {
            Some(t) => t.merge(&m.stats),
            t @ None => *t = Some(m.stats),
        }
        let mut last = None;
        while self
            .open
            .front()
            .is_some_and(|s| s.received >= self.workers)
        {
            last = self.close_front();
        }
        last
    }

    /// Closes the oldest open interval into points.
    fn close_front(&mut self) -> Option<SeriesPoint> {
        let OpenInterval {
            duration_ns: dur,
            per_target,
            per_thread,
            ..
        } = self.open.pop_front()?;
        let start_ns = self.base as u64 * self.interval_ns;
        self.base += 1;
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
        let idle = SeriesPoint {
            t_s,
            duration_s: secs,
            ..SeriesPoint::default()
        };
        for (wi, s) in per_thread.iter().enumerate() {
            self.threads[wi].push(s.as_ref().map_or_else(|| idle.clone(), point));
        }
        let mut total: Option<RwStats> = None;
        for (ti, s) in per_target.iter().enumerate() {
            let p = s.as_ref().map_or_else(|| idle.clone(), point);
            self.targets[ti].push(p);
            if let Some(s) = s {
                match &mut total {
                    Some(t) => t.merge(s),
                    None => total = Some(s.clone()),
                }
            }
        }
        if let Some(log) = &self.hist_log {
            let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
            match &total {
                Some(t) => log.interval(start_ns, dur, t, &per_target),
                None => log.interval(start_ns, dur, &RwStats::default(), &per_target),
            }
        }
        let p = if self.ntargets == 1 {
            self.targets[0].last().cloned().unwrap_or_default()
        } else {
            point(&total.unwrap_or_default())
        };
        self.total.push(p.clone());
        Some(p)
    }

    pub(super) fn finish(mut self) -> Series {
        // Intervals that some threads never reached (they stopped earlier) close with what arrived.
        while !self.open.is_empty() {
            self.close_front();
        }
        Series {
            interval_s: self.interval_ns as f64 / 1e9,
            total: self.total,
            targets: self.targets,
            threads: self.threads,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_intervals_are_raised_with_a_reason() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        assert_eq!(effective_interval(s(1), 4, 2, s(60)), (s(1), None));
        let (i, note) = effective_interval(ms(1), 1, 2, s(10));
        assert_eq!(i, ms(10));
        assert!(note.unwrap().contains("raised to 10ms"));
        let (i, note) = effective_interval(ms(10), 256, 2, s(10));
        assert_eq!(i, ms(52));
        assert!(note.unwrap().contains("256 workers"));
        // A day at 10 ms over 3 series: 8.64 M points, raised to 2.6 s.
        let (i, note) = effective_interval(ms(10), 1, 3, s(86_400));
        assert_eq!(i, ms(2592));
        assert!(note.unwrap().contains("series points"));
        // The bound holds whatever the length.
        for d in [1u64, 100, 10_000, 1_000_000] {
            let (i, _) = effective_interval(ms(10), 1, 5, s(d));
            assert!(d as u128 * 1_000_000_000 * 5 / i.as_nanos() <= u128::from(MAX_SERIES_POINTS));
        }
    }
}
