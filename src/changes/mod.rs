//! How the storage behaved over a run, read from its per-interval series:
//! a rate limit in front of the device ([`RateLimit`]), and changes of
//! level over time ([`Change`]: steps down and up, drifts, periodic stalls).
//!
//! The detectors look at the series iosim already keeps (one point per
//! `--interval`) and at the device's whole-run counters; nothing here runs
//! during the measured window. The rules and their measured false-alarm
//! rates are in docs/changes.md.

pub mod segments;

use serde::{Deserialize, Serialize};

use crate::sysmon::check::{Warning, WarningCode};
use crate::units::format_count;

use segments::{median, segment, Segment};

/// One interval of a run as the detectors see it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Interval {
    /// End of the interval, seconds from the start of measuring.
    pub t_s: f64,
    /// Its length, seconds.
    pub duration_s: f64,
    /// I/Os per second.
    pub iops: f64,
    /// MiB per second.
    pub mib_per_sec: f64,
    /// Mean latency, µs.
    pub lat_mean_us: f64,
    /// Reads per second (0 in a run without reads).
    pub read_iops: f64,
    /// Writes per second.
    pub write_iops: f64,
}

/// What else the detectors need to know about the run.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// I/Os iosim kept in flight (threads × depth); `None` when the run was
    /// paced (a rate cap, think time or periodic bursts): then latency says
    /// nothing of a queue.
    pub outstanding: Option<f64>,
    /// The block device under the target, with its whole-run counters.
    pub device: Option<DeviceView>,
    /// I/Os iosim completed in the window.
    pub iosim_ios: u64,
    /// The CPU limited the run (`cpu_bound_iosim`, `cpu_taken_by_others`):
    /// a full queue then says nothing of the storage.
    pub cpu_limited: bool,
    /// The run had any CPU finding (`cpu_busy_io_path` too): its throughput
    /// followed the CPU, so its changes over time are not the storage's.
    pub cpu_finding: bool,
}

/// The device's side of the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceView {
    /// Kernel name (`loop0`, `vdb`).
    pub name: String,
    /// Mean time per request, queue included (iostat `await`), ms.
    pub await_ms: f64,
    /// Requests the device completed (reads + writes).
    pub transfers: u64,
}

/// A level must last this long (and at least
/// [`segments::MIN_SEGMENT`] intervals) to count: a storage series wanders
/// by a fifth for a second or so and comes back (a loop device in memory
/// did at 250 ms intervals), and that is no change.
pub const MIN_LEVEL_S: f64 = 2.0;

/// Fewest intervals worth looking at.
pub const MIN_INTERVALS: usize = 3;

/// A change of level smaller than this (% of the higher level) is not
/// reported: on a long run the noise estimate makes small shifts
/// significant without making them matter.
pub const MIN_CHANGE_PCT: f64 = 15.0;

/// A stretch whose throughput over spans of [`FLAT_SPAN_S`] varies
/// (standard deviation over mean) by at most this much is flat.
pub const FLAT_VARIATION_PCT: f64 = 5.0;

/// Flatness is judged over spans of at least this many seconds (whole
/// intervals)...
pub const FLAT_SPAN_S: f64 = 1.0;
/// ... of which a stretch needs at least this many.
pub const MIN_FLAT_SPANS: usize = 3;

/// Fewest I/Os in flight a limit is claimed from. At one, latency = 1 /
/// IOPS holds for every device in a closed loop (Little's law), so a flat
/// stretch whose latency is "the queue over the ceiling" proves nothing.
pub const MIN_LIMIT_OUTSTANDING: f64 = 2.0;

/// A flat stretch must last this many intervals and seconds to be a limit.
pub const MIN_FLAT_INTERVALS: usize = 3;
/// See [`MIN_FLAT_INTERVALS`].
pub const MIN_FLAT_S: f64 = 3.0;

/// The latency iosim saw must be within this factor of QD / IOPS (the
/// queue stayed full) for a flat stretch to be a queue behind a limit.
pub const LITTLE_TOLERANCE: f64 = 0.2;

/// The device answering in at most this fraction of iosim's latency: the
/// rest was spent waiting in front of it.
pub const DEVICE_SHARE_MAX: f64 = 0.5;

/// An interval below this fraction of its stretch's level is a stall.
pub const STALL_FRACTION: f64 = 0.5;

/// Stalls are periodic when there are at least this many and the gaps
/// between them vary by at most [`PERIOD_VARIATION`].
pub const MIN_PERIODIC_STALLS: usize = 4;
/// See [`MIN_PERIODIC_STALLS`].
pub const PERIOD_VARIATION: f64 = 0.25;

/// Transfers of at least this size (mean) make a flat ceiling a bandwidth
/// limit rather than an IOPS limit.
pub const BANDWIDTH_BYTES: f64 = 64.0 * 1024.0;

/// What the detectors found; empty on most runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Changes {
    /// Flat ceilings held by a rate limit, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rate_limits: Vec<RateLimit>,
    /// `iosim run`'s held-back probe of the last limit named: the same
    /// workload at twice the queue depth (absent when nothing was named or
    /// nothing could be probed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Probe>,
    /// Changes of level over time, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Change>,
}

impl Changes {
    /// Nothing found.
    pub fn is_empty(&self) -> bool {
        self.rate_limits.is_empty() && self.events.is_empty()
    }
}

/// Which rate a limit holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitMetric {
    /// I/Os per second (small transfers).
    Iops,
    /// Bytes per second (transfers of [`BANDWIDTH_BYTES`] and more).
    Bandwidth,
}

/// A stretch of the run where throughput sat flat at a ceiling while the
/// latency was the queue in front of it: QD / IOPS, with the device itself
/// answering much faster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateLimit {
    /// The rate held: IOPS or bandwidth.
    pub metric: LimitMetric,
    /// The ceiling, I/Os per second.
    pub iops: f64,
    /// The ceiling, MiB per second.
    pub mib_per_sec: f64,
    /// Start of the stretch, seconds from the start of measuring.
    pub from_s: f64,
    /// Its end.
    pub to_s: f64,
    /// How much the intervals varied (standard deviation over mean), %.
    pub variation_pct: f64,
    /// iosim's mean latency over the stretch, ms.
    pub latency_ms: f64,
    /// I/Os in flight over the ceiling (Little's law), ms.
    pub queue_ms: f64,
    /// I/Os iosim kept in flight.
    pub outstanding: f64,
    /// Reads per second over the stretch (0 without reads): under a limit
    /// of one direction, a mix's total is not the limit.
    #[serde(default)]
    pub read_iops: f64,
    /// Writes per second over the stretch.
    #[serde(default)]
    pub write_iops: f64,
    /// The device whose counters showed it answering faster.
    pub device: String,
    /// Its mean time per request (queue included), ms.
    pub device_await_ms: f64,
}

/// A probe beating a named limit by more than this (%) refutes it: a cap
/// cannot be passed (a qualification refutes a sweep's ceiling the same way).
pub const PROBE_REFUTES_PCT: f64 = 5.0;

/// What a short run of the same workload at twice the queue depth did,
/// held back until a run named a rate limit: a real IOPS or bandwidth cap
/// holds the same rate there; a device merely at its own limit for that
/// load usually gives more.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// The probe's I/Os in flight (threads × depth).
    pub outstanding: f64,
    /// How long it measured, s.
    pub duration_s: f64,
    /// Its IOPS, all directions.
    pub iops: f64,
    /// Its reads per second.
    pub read_iops: f64,
    /// Its writes per second.
    pub write_iops: f64,
    /// Its MiB/s.
    pub mib_per_sec: f64,
    /// It went past the limit ([`Probe::refutes`]): the limit was dropped.
    pub refuted: bool,
}

impl Probe {
    /// The probe went past `limit` by more than [`PROBE_REFUTES_PCT`] in
    /// what the limit held: its MiB/s for a bandwidth limit; for a mix,
    /// both directions (a cap on one direction, or on the total, holds the
    /// other behind it in a closed loop); else its IOPS.
    pub fn refutes(&self, limit: &RateLimit) -> bool {
        let past =
            |probe: f64, held: f64| held > 0.0 && probe > held * (1.0 + PROBE_REFUTES_PCT / 100.0);
        match limit.metric {
            LimitMetric::Bandwidth => past(self.mib_per_sec, limit.mib_per_sec),
            LimitMetric::Iops if limit.read_iops > 0.0 && limit.write_iops > 0.0 => {
                past(self.read_iops, limit.read_iops) && past(self.write_iops, limit.write_iops)
            }
            LimitMetric::Iops => past(self.iops, limit.iops),
        }
    }

    /// The probe reached the limit again (within [`PROBE_REFUTES_PCT`]
    /// below it, in the terms [`Probe::refutes`] uses): "held the same
    /// rate". A probe that stayed well under it (a busier machine, a
    /// device slower for the moment) does not refute the limit either, but
    /// did not show it again.
    pub fn reached(&self, limit: &RateLimit) -> bool {
        let near =
            |probe: f64, held: f64| held > 0.0 && probe >= held * (1.0 - PROBE_REFUTES_PCT / 100.0);
        match limit.metric {
            LimitMetric::Bandwidth => near(self.mib_per_sec, limit.mib_per_sec),
            LimitMetric::Iops if limit.read_iops > 0.0 && limit.write_iops > 0.0 => {
                near(self.read_iops, limit.read_iops) || near(self.write_iops, limit.write_iops)
            }
            LimitMetric::Iops => near(self.iops, limit.iops),
        }
    }

    /// The probe's figure in the limit's terms: `2,004 IOPS`, `reads 2,000
    /// and writes 857 IOPS`, `16.0 MiB/s`.
    pub fn figure(&self, limit: &RateLimit) -> String {
        match limit.metric {
            LimitMetric::Bandwidth => format!("{:.1} MiB/s", self.mib_per_sec),
            LimitMetric::Iops if limit.read_iops > 0.0 && limit.write_iops > 0.0 => format!(
                "reads {} and writes {} IOPS",
                format_count(self.read_iops.round() as u64),
                format_count(self.write_iops.round() as u64)
            ),
            LimitMetric::Iops => format!("{} IOPS", format_count(self.iops.round() as u64)),
        }
    }
}

/// What kind of change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Throughput fell to a new level and stayed there.
    StepDown,
    /// Throughput rose to a new level and stayed there.
    StepUp,
    /// Throughput moved the same way over three or more levels.
    Drift,
    /// Short stalls at a regular period.
    PeriodicStalls,
}

impl ChangeKind {
    /// What such a change usually means.
    pub fn meaning(self) -> &'static str {
        match self {
            ChangeKind::StepDown => "burst credits running out (a cloud volume), a write or SLC cache filling up, or another workload starting on the device (or on the CPUs: see the run's CPU lines)",
            ChangeKind::StepUp => "a cache warming up, a restored volume's blocks having all been read once, or another workload stopping (on the device or the CPUs)",
            ChangeKind::Drift => "an SSD's garbage collection as its free blocks run out, thermal throttling, or a file growing fragmented",
            ChangeKind::PeriodicStalls => "something on a timer: journal commits (ext4 commits every 5 s), database checkpoints, writeback, or garbage collection",
        }
    }
}

/// One change of level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// What kind.
    pub kind: ChangeKind,
    /// When it began, seconds from the start of measuring.
    pub at_s: f64,
    /// When it ended (a drift's last level, the last stall).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_s: Option<f64>,
    /// How long the level before it lasted, seconds.
    pub before_s: f64,
    /// IOPS before.
    pub before_iops: f64,
    /// IOPS after (a stall's: its mean).
    pub after_iops: f64,
    /// The change, % of the level before.
    pub change_pct: f64,
    /// Stalls: their period, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_s: Option<f64>,
    /// Stalls: how many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
}

impl Change {
    /// One line for a report.
    pub fn describe(&self) -> String {
        let iops = |v: f64| format_count(v.round() as u64);
        match self.kind {
            ChangeKind::StepDown | ChangeKind::StepUp => format!(
                "at {:.1} s, after {:.1} s at {} IOPS, throughput {} {:.0}% to {} IOPS: usually {}",
                self.at_s,
                self.before_s,
                iops(self.before_iops),
                if self.kind == ChangeKind::StepDown { "fell" } else { "rose" },
                self.change_pct.abs(),
                iops(self.after_iops),
                self.kind.meaning()
            ),
            ChangeKind::Drift => format!(
                "from {:.1} s to {:.1} s throughput drifted {} from {} to {} IOPS ({:+.0}%): usually {}",
                self.at_s,
                self.until_s.unwrap_or(self.at_s),
                if self.change_pct < 0.0 { "down" } else { "up" },
                iops(self.before_iops),
                iops(self.after_iops),
                self.change_pct,
                self.kind.meaning()
            ),
            ChangeKind::PeriodicStalls => format!(
                "{} stalls every {:.1} s from {:.1} s (throughput down to {} IOPS from {}): usually {}",
                self.count.unwrap_or(0),
                self.period_s.unwrap_or(0.0),
                self.at_s,
                iops(self.after_iops),
                iops(self.before_iops),
                self.kind.meaning()
            ),
        }
    }
}

/// Runs every detector on a run's intervals.
pub fn detect(intervals: &[Interval], ctx: &Context) -> Changes {
    let points = whole_intervals(intervals);
    if points.len() < MIN_INTERVALS {
        return Changes::default();
    }
    let iops: Vec<f64> = points.iter().map(|p| p.iops).collect();
    // Single slow intervals are stalls, not levels: they are found against
    // their neighbourhood first and replaced by it for the segmentation.
    let (smooth, mut stall_marks) = mark_stalls(&iops);
    let mut d: Vec<f64> = points.iter().map(|p| p.duration_s).collect();
    let min_len = (MIN_LEVEL_S / median(&mut d).max(1e-6)).ceil() as usize;
    let levels = merge_small(segment(&smooth, min_len), &smooth);
    let (levels, dips) = absorb_dips(levels, &smooth);
    for (m, d) in stall_marks.iter_mut().zip(dips) {
        *m |= d;
    }
    let mut events = Vec::new();
    if !ctx.cpu_finding {
        events = steps(&levels, &points);
        if let Some(s) = periodic_stalls(&levels, &iops, &points, &stall_marks) {
            events.push(s);
            events.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
        }
    }
    let rate_limits = levels
        .iter()
        .filter_map(|l| rate_limit(l, &points, ctx))
        .collect();
    Changes {
        rate_limits,
        probe: None,
        events,
    }
}

/// The intervals that ran their full length (the last one is usually cut
/// short at the window's end, and rates over a sliver are noise).
fn whole_intervals(intervals: &[Interval]) -> Vec<Interval> {
    let mut d: Vec<f64> = intervals.iter().map(|p| p.duration_s).collect();
    let typical = median(&mut d);
    intervals
        .iter()
        .filter(|p| p.duration_s >= 0.5 * typical && p.duration_s > 0.0)
        .copied()
        .collect()
}

fn mean_of(x: &[f64]) -> f64 {
    if x.is_empty() {
        0.0
    } else {
        x.iter().sum::<f64>() / x.len() as f64
    }
}

/// Relative difference of two levels, % of the higher.
fn differ_pct(a: f64, b: f64) -> f64 {
    let hi = a.abs().max(b.abs());
    if hi == 0.0 {
        0.0
    } else {
        100.0 * (a - b).abs() / hi
    }
}

/// Intervals around each interval looked at for its neighbourhood's level.
const STALL_WINDOW: usize = 7;

/// Marks the intervals below [`STALL_FRACTION`] of the median of the
/// [`STALL_WINDOW`] intervals around them (a step changes the median only
/// once most of the window is past it, so it is never a stall), and returns
/// the series with each of them replaced by that median.
fn mark_stalls(x: &[f64]) -> (Vec<f64>, Vec<bool>) {
    let half = STALL_WINDOW / 2;
    let mut smooth = x.to_vec();
    let mut marks = vec![false; x.len()];
    for i in 0..x.len() {
        let lo = i.saturating_sub(half);
        let hi = (i + half + 1).min(x.len());
        let mut w = x[lo..hi].to_vec();
        let m = median(&mut w);
        if x[i] < STALL_FRACTION * m {
            marks[i] = true;
            smooth[i] = m;
        }
    }
    (smooth, marks)
}

/// Joins neighbouring segments whose levels differ by less than
/// [`MIN_CHANGE_PCT`], smallest difference first.
fn merge_small(mut segs: Vec<Segment>, x: &[f64]) -> Vec<Segment> {
    loop {
        let pick = segs
            .windows(2)
            .enumerate()
            .map(|(i, w)| (i, differ_pct(w[0].mean, w[1].mean)))
            .filter(|&(_, d)| d < MIN_CHANGE_PCT)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((i, _)) = pick else {
            return segs;
        };
        let (a, b) = (segs[i], segs[i + 1]);
        segs[i] = Segment {
            start: a.start,
            end: b.end,
            mean: mean_of(&x[a.start..b.end]),
        };
        segs.remove(i + 1);
    }
}

/// A short low stretch between two stretches at about the same level is a
/// stall, not two steps: it is joined back into its surroundings, and its
/// points are marked as stalled.
fn absorb_dips(mut segs: Vec<Segment>, x: &[f64]) -> (Vec<Segment>, Vec<bool>) {
    let mut marks = vec![false; x.len()];
    let n = x.len();
    let mut i = 1;
    while i + 1 < segs.len() {
        let (a, d, b) = (segs[i - 1], segs[i], segs[i + 1]);
        let short = (d.end - d.start) * 5 <= n;
        let around = (a.mean + b.mean) / 2.0;
        if short && differ_pct(a.mean, b.mean) < MIN_CHANGE_PCT && d.mean < STALL_FRACTION * around
        {
            for m in &mut marks[d.start..d.end] {
                *m = true;
            }
            segs[i - 1] = Segment {
                start: a.start,
                end: b.end,
                mean: mean_of(&x[a.start..b.end]),
            };
            segs.drain(i..=i + 1);
        } else {
            i += 1;
        }
    }
    (segs, marks)
}

/// Steps between levels; three or more levels moving the same way are one
/// drift.
fn steps(levels: &[Segment], p: &[Interval]) -> Vec<Change> {
    let start_s = |s: &Segment| p[s.start].t_s - p[s.start].duration_s;
    let end_s = |s: &Segment| p[s.end - 1].t_s;
    // The level a step reports is its stretch's mean without its first and
    // last intervals: the one that straddles a change (part old level, part
    // new), which the segmenter puts on one side, moved a mean by a tenth on
    // a 5 s stretch of 250 ms intervals (a throttle dropped to 500 IOPS read
    // as 558). Not a median: a throttle's bursts make 250 ms intervals
    // alternate (400, 600), and a median picks one of them.
    let level = |s: &Segment| {
        if s.end - s.start < 4 {
            return s.mean;
        }
        let inner = &p[s.start + 1..s.end - 1];
        inner.iter().map(|i| i.iops).sum::<f64>() / inner.len() as f64
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < levels.len() {
        // The longest run of same-direction changes from i.
        let up = levels[i + 1].mean > levels[i].mean;
        let mut j = i + 1;
        while j + 1 < levels.len() && (levels[j + 1].mean > levels[j].mean) == up {
            j += 1;
        }
        let (a, b) = (&levels[i], &levels[j]);
        let (before, after) = (level(a), level(b));
        let change_pct = 100.0 * (after - before) / before.max(f64::MIN_POSITIVE);
        if j - i >= 2 {
            out.push(Change {
                kind: ChangeKind::Drift,
                at_s: start_s(&levels[i + 1]),
                until_s: Some(start_s(b)),
                before_s: end_s(a) - start_s(a),
                before_iops: before,
                after_iops: after,
                change_pct,
                period_s: None,
                count: None,
            });
            i = j;
        } else {
            out.push(Change {
                kind: if up {
                    ChangeKind::StepUp
                } else {
                    ChangeKind::StepDown
                },
                at_s: start_s(b),
                until_s: None,
                before_s: end_s(a) - start_s(a),
                before_iops: before,
                after_iops: after,
                change_pct,
                period_s: None,
                count: None,
            });
            i += 1;
        }
    }
    out
}

/// Stalls (intervals below [`STALL_FRACTION`] of their stretch's level, and
/// dips [`absorb_dips`] marked), reported when they come at a regular period.
fn periodic_stalls(
    levels: &[Segment],
    x: &[f64],
    p: &[Interval],
    marks: &[bool],
) -> Option<Change> {
    let mut stalled = marks.to_vec();
    for l in levels {
        for i in l.start..l.end {
            if x[i] < STALL_FRACTION * l.mean {
                stalled[i] = true;
            }
        }
    }
    // Runs of stalled intervals: (first index, mean IOPS).
    let mut stalls: Vec<(usize, f64)> = Vec::new();
    let mut i = 0;
    while i < x.len() {
        if stalled[i] {
            let s = i;
            while i < x.len() && stalled[i] {
                i += 1;
            }
            stalls.push((s, mean_of(&x[s..i])));
        } else {
            i += 1;
        }
    }
    if stalls.len() < MIN_PERIODIC_STALLS {
        return None;
    }
    let starts: Vec<f64> = stalls
        .iter()
        .map(|&(s, _)| p[s].t_s - p[s].duration_s)
        .collect();
    let gaps: Vec<f64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    let (period, sd, _) = crate::stats::mean_sd_ci95(&gaps);
    if period <= 0.0 || sd / period > PERIOD_VARIATION {
        return None;
    }
    let normal: Vec<f64> = (0..x.len())
        .filter(|&i| !stalled[i])
        .map(|i| x[i])
        .collect();
    let before = mean_of(&normal);
    let after = mean_of(&stalls.iter().map(|s| s.1).collect::<Vec<_>>());
    Some(Change {
        kind: ChangeKind::PeriodicStalls,
        at_s: starts[0],
        until_s: starts.last().copied(),
        before_s: starts[0] - (p[0].t_s - p[0].duration_s),
        before_iops: before,
        after_iops: after,
        change_pct: 100.0 * (after - before) / before.max(f64::MIN_POSITIVE),
        period_s: Some(period),
        count: Some(stalls.len() as u32),
    })
}

/// The mean IOPS of `pts` over spans of `per_span` intervals and their
/// variation (standard deviation over mean, %), when `pts` is long enough to
/// judge a limit on: at least [`MIN_FLAT_INTERVALS`] intervals,
/// [`MIN_FLAT_S`] seconds and [`MIN_FLAT_SPANS`] spans.
fn flat_level(pts: &[Interval], per_span: usize) -> Option<(f64, f64)> {
    let secs: f64 = pts.iter().map(|p| p.duration_s).sum();
    if pts.len() < MIN_FLAT_INTERVALS || secs < MIN_FLAT_S {
        return None;
    }
    let spans: Vec<f64> = pts
        .chunks_exact(per_span)
        .map(|c| {
            let ios: f64 = c.iter().map(|p| p.iops * p.duration_s).sum();
            ios / c.iter().map(|p| p.duration_s).sum::<f64>()
        })
        .collect();
    if spans.len() < MIN_FLAT_SPANS {
        return None;
    }
    let (mean, sd, _) = crate::stats::mean_sd_ci95(&spans);
    (mean > 0.0).then(|| (mean, 100.0 * sd / mean))
}

/// The rate limit of one stretch, if it is one: flat, its latency the
/// queue of iosim's outstanding I/Os over the ceiling, and the device
/// answering much faster than that.
fn rate_limit(l: &Segment, p: &[Interval], ctx: &Context) -> Option<RateLimit> {
    let q = ctx.outstanding?;
    let dev = ctx.device.as_ref()?;
    if ctx.cpu_limited || q < MIN_LIMIT_OUTSTANDING {
        return None;
    }
    // The interval in which the level changed belongs to neither level:
    // a stretch that borders another leaves its edge interval out.
    let first = l.start + usize::from(l.start > 0);
    let last = l.end - usize::from(l.end < p.len());
    if first >= last {
        return None;
    }
    let mut pts = &p[first..last];
    // Flat over spans of at least FLAT_SPAN_S: a throttle releases I/O in
    // slices (blk-throttle's are 100 ms), so short intervals alternate
    // around the limit (2,400 and 1,600 IOPS in 250 ms intervals under a
    // 2,000 IOPS limit) while every second holds it exactly.
    let mut d: Vec<f64> = pts.iter().map(|p| p.duration_s).collect();
    let per_span = ((FLAT_SPAN_S / median(&mut d).max(1e-6)).ceil() as usize).max(1);
    let (mut mean, mut variation_pct) = flat_level(pts, per_span)?;
    if variation_pct > FLAT_VARIATION_PCT && first == 0 {
        // A token bucket lets a burst through before it holds the rate (a
        // new blkio throttle's first slice; a cloud volume's burst): the
        // run's first span may stand above a limit the rest holds exactly.
        pts = &pts[per_span.min(pts.len())..];
        (mean, variation_pct) = flat_level(pts, per_span)?;
    }
    if variation_pct > FLAT_VARIATION_PCT {
        return None;
    }
    let secs: f64 = pts.iter().map(|p| p.duration_s).sum();
    // Latency weighted by each interval's I/Os.
    let ios: f64 = pts.iter().map(|p| p.iops * p.duration_s).sum();
    let latency_ms = pts
        .iter()
        .map(|p| p.lat_mean_us * p.iops * p.duration_s)
        .sum::<f64>()
        / ios.max(f64::MIN_POSITIVE)
        / 1000.0;
    let queue_ms = q / mean * 1000.0;
    if (latency_ms - queue_ms).abs() > LITTLE_TOLERANCE * queue_ms {
        return None;
    }
    // The device saw iosim's I/O and answered it in a fraction of the time.
    if (dev.transfers as f64) < 0.5 * ctx.iosim_ios as f64
        || dev.await_ms > DEVICE_SHARE_MAX * latency_ms
    {
        return None;
    }
    let mib = mean_of(&pts.iter().map(|p| p.mib_per_sec).collect::<Vec<_>>());
    let per_sec = |f: fn(&Interval) -> f64| {
        pts.iter().map(|p| f(p) * p.duration_s).sum::<f64>() / secs.max(f64::MIN_POSITIVE)
    };
    Some(RateLimit {
        read_iops: per_sec(|p| p.read_iops),
        write_iops: per_sec(|p| p.write_iops),
        metric: metric_of(mean, mib),
        iops: mean,
        mib_per_sec: mib,
        from_s: p[l.start].t_s - p[l.start].duration_s,
        to_s: p[l.end - 1].t_s,
        variation_pct,
        latency_ms,
        queue_ms,
        outstanding: q,
        device: dev.name.clone(),
        device_await_ms: dev.await_ms,
    })
}

impl RateLimit {
    /// The ceiling in words: `2,000 IOPS` or `50.0 MiB/s`.
    pub fn level(&self) -> String {
        level_text(self.metric, self.iops, self.mib_per_sec)
    }

    /// A mix's ceiling per direction: ` (reads held at 2,000 IOPS and
    /// writes at 852 of that total: a limit of one direction holds the
    /// other behind it in a closed loop)`; empty for one direction.
    pub fn directions(&self) -> String {
        directions_text(self.read_iops, self.write_iops)
    }
}

/// See [`RateLimit::directions`].
fn directions_text(read_iops: f64, write_iops: f64) -> String {
    if read_iops <= 0.0 || write_iops <= 0.0 {
        return String::new();
    }
    format!(
        " (the mix's total: reads held at {} IOPS and writes at {}; a limit of one direction holds the other behind it in a closed loop, so the limit is the reads' or the writes' figure, not the total)",
        format_count(read_iops.round() as u64),
        format_count(write_iops.round() as u64)
    )
}

/// `IOPS held at 2,000` or `throughput held at 50.0 MiB/s`: the rate a
/// message names first, then the value alone for IOPS.
fn held_text(metric: LimitMetric, values: &[String]) -> String {
    let what = match metric {
        LimitMetric::Iops => "IOPS",
        LimitMetric::Bandwidth => "throughput",
    };
    format!("{what} held at {}", values.join(", then "))
}

/// The value of a ceiling as a message says it after [`held_text`]'s
/// name: `2,000` (IOPS) or `50.0 MiB/s`.
fn bare_value(metric: LimitMetric, iops: f64, mib: f64) -> String {
    match metric {
        LimitMetric::Iops => format_count(iops.round() as u64),
        LimitMetric::Bandwidth => format!("{mib:.1} MiB/s"),
    }
}

/// The `rate_limited` warning for the limits found, if any.
pub fn rate_limit_warning(limits: &[RateLimit]) -> Option<Warning> {
    let first = limits.first()?;
    let held = if limits.len() == 1 {
        held_text(
            first.metric,
            &[bare_value(first.metric, first.iops, first.mib_per_sec)],
        )
    } else {
        let parts: Vec<String> = limits
            .iter()
            .map(|l| {
                format!(
                    "{} from {:.1} s to {:.1} s",
                    bare_value(first.metric, l.iops, l.mib_per_sec),
                    l.from_s,
                    l.to_s
                )
            })
            .collect();
        held_text(first.metric, &parts)
    };
    let held = format!("{held}{}", first.directions());
    Some(Warning {
        code: WarningCode::RateLimited,
        message: format!(
            "{held} with latency = QD / IOPS ({:.2} ms ≈ {:.0} / {}): a rate limit (a provisioned or throttled volume), not the device's capability; {} itself answered in {:.2} ms. Look for a cgroup throttle (io.max, blkio.throttle.*) or the volume's provisioned limits (docs/changes.md).",
            first.latency_ms,
            first.outstanding,
            format_count(first.iops.round() as u64),
            first.device,
            first.device_await_ms
        ),
    })
}

/// One point of a sweep as [`ceiling`] sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LoadPoint {
    /// I/Os kept in flight.
    pub load: f64,
    /// I/Os per second.
    pub iops: f64,
    /// MiB per second.
    pub mib_per_sec: f64,
    /// Mean latency, µs.
    pub lat_mean_us: f64,
}

/// Points of a sweep whose throughput stays within this much of their mean
/// (either way) are at one ceiling.
pub const CEILING_SPREAD_PCT: f64 = 3.0;

/// A ceiling must hold over at least this many points...
pub const CEILING_MIN_POINTS: usize = 3;
/// ... and loads at least this many times apart.
pub const CEILING_MIN_LOAD_RATIO: f64 = 4.0;

/// Latency growing with the load within this much (relative) of
/// proportionally is "latency = QD / IOPS".
pub const CEILING_LATENCY_TOLERANCE: f64 = 0.25;

/// A sweep's flat ceiling: throughput the same across loads while latency
/// grows in proportion to them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ceiling {
    /// The rate held.
    pub metric: LimitMetric,
    /// Mean IOPS over the points.
    pub iops: f64,
    /// Mean MiB/s over them.
    pub mib_per_sec: f64,
    /// Lowest load (I/Os in flight) at the ceiling.
    pub from_load: f64,
    /// Highest.
    pub to_load: f64,
    /// Largest distance of a point from the mean, %.
    pub spread_pct: f64,
    /// Points (in the order given) at the ceiling.
    pub points: Vec<usize>,
}

impl Ceiling {
    /// The ceiling in words: `2,000 IOPS` or `50.0 MiB/s`.
    pub fn level(&self) -> String {
        level_text(self.metric, self.iops, self.mib_per_sec)
    }

    /// The finding in plain words.
    pub fn describe(&self) -> String {
        format!(
            "{} (within {:.1}%) from {} to {} I/Os in flight while latency grew in proportion (latency = QD / IOPS): a rate limit (a provisioned or throttled volume), not the device's capability. Look for a cgroup throttle or the volume's provisioned limits (docs/changes.md).",
            held_text(
                self.metric,
                &[bare_value(self.metric, self.iops, self.mib_per_sec)]
            ),
            self.spread_pct,
            self.from_load,
            self.to_load
        )
    }
}

fn level_text(metric: LimitMetric, iops: f64, mib: f64) -> String {
    match metric {
        LimitMetric::Iops => format!("{} IOPS", format_count(iops.round() as u64)),
        LimitMetric::Bandwidth => format!("{mib:.1} MiB/s"),
    }
}

fn metric_of(iops: f64, mib: f64) -> LimitMetric {
    if iops > 0.0 && mib * 1024.0 * 1024.0 / iops >= BANDWIDTH_BYTES {
        LimitMetric::Bandwidth
    } else {
        LimitMetric::Iops
    }
}

/// The longest stretch of a sweep's points (in order of growing load) at
/// one throughput, within [`CEILING_SPREAD_PCT`], over loads at least
/// [`CEILING_MIN_LOAD_RATIO`] apart, with latency growing in proportion to
/// the load: the signature of a queue in front of a rate limit.
pub fn ceiling(points: &[LoadPoint]) -> Option<Ceiling> {
    let rate = |p: &LoadPoint, m: LimitMetric| match m {
        LimitMetric::Iops => p.iops,
        LimitMetric::Bandwidth => p.mib_per_sec,
    };
    let mut best: Option<Ceiling> = None;
    for i in 0..points.len() {
        let m = metric_of(points[i].iops, points[i].mib_per_sec);
        let mut found = None;
        for j in i + 1..points.len() {
            let run = &points[i..=j];
            if run.windows(2).any(|w| w[1].load <= w[0].load) {
                break;
            }
            let rates: Vec<f64> = run.iter().map(|p| rate(p, m)).collect();
            let mean = mean_of(&rates);
            let spread = rates
                .iter()
                .map(|r| 100.0 * (r - mean).abs() / mean.max(f64::MIN_POSITIVE))
                .fold(0.0, f64::max);
            let a = &points[i];
            let proportional = run.iter().all(|p| {
                let want = p.load / a.load;
                let got = p.lat_mean_us / a.lat_mean_us.max(f64::MIN_POSITIVE);
                (got / want - 1.0).abs() <= CEILING_LATENCY_TOLERANCE
            });
            if spread > CEILING_SPREAD_PCT || !proportional || mean <= 0.0 {
                break;
            }
            if run.len() >= CEILING_MIN_POINTS && points[j].load >= CEILING_MIN_LOAD_RATIO * a.load
            {
                found = Some(Ceiling {
                    metric: m,
                    iops: mean_of(&run.iter().map(|p| p.iops).collect::<Vec<_>>()),
                    mib_per_sec: mean_of(&run.iter().map(|p| p.mib_per_sec).collect::<Vec<_>>()),
                    from_load: a.load,
                    to_load: points[j].load,
                    spread_pct: spread,
                    points: (i..=j).collect(),
                });
            }
        }
        if let Some(c) = found {
            if best
                .as_ref()
                .is_none_or(|b| c.points.len() > b.points.len())
            {
                best = Some(c);
            }
        }
    }
    best
}

#[cfg(test)]
mod tests;
