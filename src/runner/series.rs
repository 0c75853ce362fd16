//! The interval time series: workers hand in one message per interval (or
//! per run of intervals they slept through), and the main thread merges them
//! across threads into series points.
//!
//! Intervals are aligned for every worker: interval `i` is
//! `[start + i * interval, start + (i + 1) * interval)` of the shared window,
//! the last one cut at the window's end.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
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

/// Interval messages the channel from the workers to the main thread holds
/// at most, for a run of `workers` workers: two intervals' worth, so a
/// boundary's burst never waits, and a main thread that falls further
/// behind makes the workers fold their intervals (see [`IntervalMsg`])
/// instead of queueing them: the channel's memory is bounded.
pub(super) fn channel_capacity(workers: usize) -> usize {
    workers.saturating_mul(2).max(2)
}

/// Statistics the series keeps for open intervals (all scopes together)
/// before it folds the oldest open ones into one coarser point: about 32 MiB
/// of histograms, whatever a late worker or the length of the run.
const OPEN_STATS: usize = 42;

/// What the interval data of a run takes at most, (per worker, once), for
/// the memory check before it starts: per worker, its interval and whole-run
/// statistics, what it holds back and its share of the channel; once, the
/// open intervals' statistics and the series' points.
pub(super) fn memory_bound() -> (u64, u64) {
    let stats = crate::stats::rw_stats_bytes();
    let point = std::mem::size_of::<SeriesPoint>() as u64;
    let per_worker = stats * (3 + channel_capacity(1) as u64);
    let once = stats * OPEN_STATS as u64 + point * MAX_SERIES_POINTS;
    (per_worker, once)
}

/// What a worker sends when intervals close.
///
/// Not folded: `stats` are those of interval `first`; intervals
/// `first + 1 ..= through` had nothing from this worker (it slept through
/// them). Folded: the channel was full when the worker closed some of these
/// intervals, so it kept them, merged, and `stats` cover every interval
/// `first ..= through` together; the series joins them into one point.
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
    /// `stats` span `first ..= through` (the worker folded them).
    pub folded: bool,
    /// The worker found the channel full at one of these intervals' ends.
    pub full: bool,
    /// The sender's I/O errors since its run began (live metrics).
    pub errors: u64,
    /// The sender's I/Os in flight when it sent this (live metrics).
    pub in_flight: u32,
}

/// Most intervals one message may be asked to span: a point of at most
/// 1,024 intervals (10 s at the shortest interval) while the machine is busy.
const MAX_STRIDE: u32 = 1024;

/// How many intervals each worker's message spans, shared by every worker
/// of a run and set by the main thread: doubled when a worker found the
/// channel full, halved again once none has for a while. Workers send only
/// at multiples of it (folding the intervals between), so under load they
/// all fold the same intervals and the series' points stay aligned, instead
/// of each worker folding its own span and chaining every point into one.
pub(super) struct Stride {
    shared: Arc<AtomicU32>,
    interval_ns: u64,
    changed: u64,
    last_full: u64,
}

impl Stride {
    pub(super) fn new(shared: Arc<AtomicU32>, interval_ns: u64) -> Stride {
        Stride {
            shared,
            interval_ns,
            changed: 0,
            last_full: 0,
        }
    }

    fn span_ns(&self, s: u32) -> u64 {
        u64::from(s).saturating_mul(self.interval_ns)
    }

    /// A worker found the channel full: coarser, unless it just changed.
    pub(super) fn full(&mut self, now: u64) {
        self.last_full = now;
        let s = self.shared.load(Ordering::Relaxed);
        if s < MAX_STRIDE && now.saturating_sub(self.changed) >= 2 * self.span_ns(s) {
            self.shared.store(s * 2, Ordering::Relaxed);
            self.changed = now;
        }
    }

    /// Finer again after a quiet second (and four strides).
    pub(super) fn tick(&mut self, now: u64) {
        let s = self.shared.load(Ordering::Relaxed);
        let quiet = self.span_ns(s).saturating_mul(4).max(1_000_000_000);
        if s > 1
            && now.saturating_sub(self.last_full) >= quiet
            && now.saturating_sub(self.changed) >= quiet
        {
            self.shared.store(s / 2, Ordering::Relaxed);
            self.changed = now;
        }
    }
}

/// Intervals `lo ..= hi` being merged into one point: one interval, unless
/// a worker or the series folded several.
struct Group {
    lo: usize,
    hi: usize,
    /// Messages received, summed over the group's intervals (a message
    /// counts once in every interval it reports).
    received: usize,
    /// End of the group's last interval as the messages say (the window's
    /// end cuts the run's last one), ns from the window's start.
    end_ns: u64,
    /// `None` until a worker of that target sends statistics.
    per_target: Vec<Option<RwStats>>,
    /// Per thread, only when the run keeps per-thread series.
    per_thread: Vec<Option<RwStats>>,
}

impl Group {
    fn new(i: usize, ntargets: usize, nthreads: usize) -> Group {
        Group {
            lo: i,
            hi: i,
            received: 0,
            end_ns: 0,
            per_target: (0..ntargets).map(|_| None).collect(),
            per_thread: (0..nthreads).map(|_| None).collect(),
        }
    }

    /// Every worker has reported every interval of the group: no message
    /// to come can touch it.
    fn complete(&self, workers: usize) -> bool {
        self.received >= workers.saturating_mul(self.hi - self.lo + 1)
    }

    /// Statistics it holds (each a few hundred KiB of histograms).
    fn held(&self) -> usize {
        let some = |v: &Vec<Option<RwStats>>| v.iter().filter(|s| s.is_some()).count();
        some(&self.per_target) + some(&self.per_thread)
    }

    /// Joins `next`, the group right after this one, into it.
    fn absorb(&mut self, next: Group) {
        self.hi = next.hi;
        self.received += next.received;
        self.end_ns = self.end_ns.max(next.end_ns);
        for (a, b) in self.per_target.iter_mut().zip(next.per_target) {
            add_stats(a, b);
        }
        for (a, b) in self.per_thread.iter_mut().zip(next.per_thread) {
            add_stats(a, b);
        }
    }
}

/// Adds `b` into `a`.
fn add_stats(a: &mut Option<RwStats>, b: Option<RwStats>) {
    match (a.as_mut(), b) {
        (Some(a), Some(b)) => a.merge(&b),
        (None, b) => *a = b,
        (Some(_), None) => {}
    }
}

/// Merges interval messages across threads into the time series.
///
/// Only intervals still waiting for some thread hold histograms; a closed
/// interval keeps nothing but its summary point, so memory does not grow
/// with the length of the run beyond the points themselves. When a worker
/// folded intervals (its message spans several), the series joins them into
/// one longer point; when open intervals would hold more than
/// [`OPEN_STATS`] statistics (a worker far behind the others), the oldest
/// open ones are joined too. The points' lengths always add up to the
/// window, and every counted I/O is in exactly one point.
pub(super) struct IntervalAgg {
    workers: usize,
    ntargets: usize,
    interval_ns: u64,
    /// Open groups of intervals, contiguous and in order, from index `base` on.
    open: VecDeque<Group>,
    base: usize,
    total: Vec<SeriesPoint>,
    targets: Vec<Vec<SeriesPoint>>,
    /// Per thread (DiskSpd's `-D` per-thread IOPS deviation); empty unless asked for.
    threads: Vec<Vec<SeriesPoint>>,
    elapsed_ns: u64,
    /// Intervals joined into a coarser point, and the longest such point, ns.
    folded: u64,
    longest_ns: u64,
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
            folded: 0,
            longest_ns: 0,
            hist_log: None,
        }
    }

    /// Writes each interval's histograms to `log` as it closes.
    pub(super) fn with_hist_log(mut self, log: Option<SharedHistLog>) -> IntervalAgg {
        self.hist_log = log;
        self
    }

    /// Opens groups up to interval `i`, one interval each.
    fn extend_to(&mut self, i: usize) {
        let mut next = self.open.back().map_or(self.base, |g| g.hi + 1);
        while next <= i {
            let g = Group::new(next, self.ntargets, self.threads.len());
            self.open.push_back(g);
            next += 1;
        }
    }

    /// Where in `open` the group holding the open interval `i` is.
    fn position(&self, i: usize) -> usize {
        self.open.partition_point(|g| g.hi < i)
    }

    /// Joins the open groups at positions `a ..= b` into one.
    fn join(&mut self, a: usize, b: usize) {
        if a >= b || b >= self.open.len() {
            return;
        }
        let tail: Vec<Group> = self.open.drain(a + 1..=b).collect();
        for g in tail {
            self.open[a].absorb(g);
        }
    }

    /// Joins the oldest open groups while they hold more than the budget.
    fn bound(&mut self) {
        // A group must fit even when a run keeps many series.
        let budget = OPEN_STATS.max(2 * (self.ntargets + self.threads.len()));
        let mut held: usize = self.open.iter().map(Group::held).sum();
        while self.open.len() > 1 && held > budget {
            let before = self.open[0].held() + self.open[1].held();
            self.join(0, 1);
            held = held + self.open[0].held() - before;
        }
    }

    /// Adds one worker's message; returns the last total point completed by it.
    pub(super) fn add(&mut self, m: IntervalMsg) -> Option<SeriesPoint> {
        if m.first < self.base || m.through < m.first {
            // Cannot happen: a worker reports each interval once, in order.
            return None;
        }
        self.extend_to(m.through);
        let a = self.position(m.first);
        if m.folded {
            self.join(a, self.position(m.through));
        }
        let iv = self.interval_ns;
        for g in self.open.range_mut(a..) {
            if g.lo > m.through {
                break;
            }
            g.received += m.through.min(g.hi) + 1 - m.first.max(g.lo);
            let cap = (g.hi as u64 + 1).saturating_mul(iv);
            g.end_ns = g.end_ns.max(m.end_ns.min(cap));
        }
        let g = &mut self.open[a];
        if let Some(t) = g.per_thread.get_mut(m.thread) {
            add_stats(t, Some(m.stats.clone()));
        }
        add_stats(&mut g.per_target[m.target], Some(m.stats));
        self.bound();
        let mut last = None;
        while self.open.front().is_some_and(|g| g.complete(self.workers)) {
            last = self.close_front();
        }
        last
    }

    /// Closes the oldest open group into points.
    fn close_front(&mut self) -> Option<SeriesPoint> {
        let Group {
            lo,
            hi,
            end_ns,
            per_target,
            per_thread,
            ..
        } = self.open.pop_front()?;
        let start_ns = lo as u64 * self.interval_ns;
        let dur = end_ns.saturating_sub(start_ns);
        self.base = hi + 1;
        if hi > lo {
            self.folded += (hi - lo) as u64;
            self.longest_ns = self.longest_ns.max(dur);
        }
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
            folded_intervals: self.folded,
            longest_point_s: self.longest_ns as f64 / 1e9,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Thread `thread`'s message for intervals `first ..= through` of 10 ms
    /// with `ios` reads of 1 µs.
    fn msg(thread: usize, first: usize, through: usize, ios: u64, folded: bool) -> IntervalMsg {
        let mut stats = RwStats::default();
        for _ in 0..ios {
            stats.read.record(1000, 4096);
        }
        IntervalMsg {
            workload: 0,
            target: 0,
            thread,
            first,
            through,
            end_ns: (through as u64 + 1) * 10 * MS,
            stats,
            folded,
            full: false,
            errors: 0,
            in_flight: 0,
        }
    }

    fn durations(s: &Series) -> Vec<u64> {
        s.total
            .iter()
            .map(|p| (p.duration_s * 1e3).round() as u64)
            .collect()
    }

    #[test]
    fn a_folded_message_joins_its_intervals_into_one_point() {
        let mut agg = IntervalAgg::new(1, 2, 10 * MS, true);
        // Thread 0 reports 0, 1, 2, 3 one by one; thread 1 folded 1..=2.
        for m in [
            msg(0, 0, 0, 5, false),
            msg(1, 0, 0, 1, false),
            msg(0, 1, 1, 5, false),
            msg(0, 2, 2, 5, false),
            msg(1, 1, 2, 2, true),
            msg(0, 3, 3, 5, false),
            msg(1, 3, 3, 1, false),
        ] {
            agg.add(m);
        }
        let s = agg.finish();
        assert_eq!(durations(&s), [10, 20, 10]);
        let ios: Vec<u64> = s.total.iter().map(|p| p.total.ios).collect();
        assert_eq!(ios, [6, 12, 6]);
        assert_eq!(s.total[1].t_s, 0.03);
        assert_eq!(s.threads[1][1].total.ios, 2);
        assert_eq!((s.folded_intervals, s.longest_point_s), (1, 0.02));
        assert!(s.folding_note().unwrap().contains("1 of 4 intervals"));
        // Overlapping folds chain into one point.
        let mut agg = IntervalAgg::new(1, 2, 10 * MS, false);
        for m in [
            msg(0, 0, 2, 3, true),
            msg(1, 0, 0, 1, false),
            msg(1, 1, 4, 1, true),
            msg(0, 3, 5, 3, true),
            msg(1, 5, 5, 1, false),
        ] {
            agg.add(m);
        }
        let s = agg.finish();
        assert_eq!(durations(&s), [60]);
        assert_eq!(s.total[0].total.ios, 9);
        assert_eq!(s.folded_intervals, 5);
        // Nothing folded: nothing said.
        let mut agg = IntervalAgg::new(1, 1, 10 * MS, false);
        agg.add(msg(0, 0, 0, 1, false));
        assert_eq!(agg.finish().folding_note(), None);
    }

    #[test]
    fn a_late_worker_makes_the_oldest_intervals_fold_not_pile_up() {
        // Thread 1 reports nothing for 500 intervals: without a bound every
        // one of them would hold thread 0's histograms.
        let mut agg = IntervalAgg::new(1, 2, 10 * MS, false);
        for i in 0..500 {
            agg.add(msg(0, i, i, 1, false));
            let held: usize = agg.open.iter().map(Group::held).sum();
            assert!(held <= OPEN_STATS, "{held} statistics held at {i}");
        }
        agg.add(msg(1, 0, 499, 1, false));
        let s = agg.finish();
        let ms: u64 = durations(&s).iter().sum();
        assert_eq!(ms, 5000, "the points cover the window");
        let ios: u64 = s.total.iter().map(|p| p.total.ios).sum();
        assert_eq!(ios, 501);
        assert_eq!(s.folded_intervals + s.total.len() as u64, 500);
        assert!(s.total.len() > 1);
    }

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
