//! `iosim fingerprint` (issue 38, part 1): the statistics of a captured
//! trace that a synthetic workload must reproduce, per layer and per stream.
//!
//! - this module: the figures ([`Fingerprint`]) and their computation, pure
//!   functions over [`crate::replay::events::EventLog`] (the replay's readers);
//! - [`streams`]: which stream each I/O belongs to (`--region`, `--file-map`, an iolog's files);
//! - [`outstanding`]: I/Os in flight over time, from completions;
//! - [`flushorder`]: how flushes are ordered against writes and each other;
//! - [`render`]: the text table;
//! - [`profile_out`]: an iosim profile TOML that reproduces a fingerprint;
//! - [`compare`]: two fingerprints side by side with ratios and tolerances.
//!
//! **Layers.** A blktrace or blkparse trace gives two: `queue` (Q events,
//! bios as the file system or database submitted them) and `issue` (D
//! events, requests as dispatched to the driver after merging; a device
//! without FUA gets FUA writes as write + flush there). A fio iolog gives
//! one, `application` (what fio submitted).

pub mod compare;
pub mod flushorder;
pub mod outstanding;
pub mod profile_out;
pub mod render;
pub mod streams;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::replay::events::{EventAction, EventLog, EventOp, IoFlags};
use crate::replay::TraceError;
pub use streams::{FileMap, Region, StreamMap};

/// The largest page a tail rewrite steps back over: an I/O starting inside
/// the previous one of its direction, at most this far before its end,
/// rewrites the previous one's last page (a WAL's partly filled tail page:
/// PostgreSQL's 8 KiB, InnoDB's redo 512 bytes to 4 KiB, 16 KiB pages...).
pub const MAX_TAIL_PAGE: u64 = 64 << 10;
/// The unit of the offset skew: hot sets are counted in regions of 1 MiB.
pub const SKEW_REGION: u64 = 1 << 20;
/// The bin of the burstiness figures: 100 ms.
pub const BIN_NS: u64 = 100_000_000;

/// Why a fingerprint cannot be made; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum FingerprintError {
    /// The trace cannot be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A `--region` that cannot be read.
    #[error("--region '{text}': {reason}; write NAME=START..END with byte offsets and units, e.g. --region wal=0..512M --region data=512M..8G")]
    BadRegion {
        /// What the user wrote.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// A `--file-map` that cannot be read.
    #[error("--file-map '{path}': {reason}; it is JSON: {{\"maps\": [{{\"at\": SECONDS, \"extents\": [{{\"name\": \"wal\", \"start\": BYTE, \"end\": BYTE}}, ...]}}, ...]}} (docs/fingerprint.md, \"Files that come and go\")", path = path.display())]
    BadFileMap {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A saved fingerprint (`--json` output) that cannot be read.
    #[error("'{path}' is neither a trace nor a saved fingerprint ({cause}): give a trace, or the output of `iosim fingerprint TRACE --json > FILE`", path = path.display())]
    BadSaved {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: String,
    },
    /// The profile written would not load (a bug: say so).
    #[error("the profile written from the fingerprint does not load ({0}); please report this")]
    BadProfile(String),
}

/// The layer of a trace a figure describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// blktrace Q: bios as submitted (`iosim replay --events queue`).
    Queue,
    /// blktrace D: requests as dispatched (`iosim replay --events issue`).
    Issue,
    /// A fio iolog: I/O as fio submitted it.
    Application,
}

impl Layer {
    /// Short name (`queue`, `issue`, `application`).
    pub fn name(self) -> &'static str {
        match self {
            Layer::Queue => "queue",
            Layer::Issue => "issue",
            Layer::Application => "application",
        }
    }

    /// What it is, for a reader.
    pub fn describe(self) -> &'static str {
        match self {
            Layer::Queue => "queue (blktrace Q: bios as submitted, before merging)",
            Layer::Issue => "issue (blktrace D: requests as dispatched to the driver)",
            Layer::Application => "application (fio iolog: I/O as fio submitted it)",
        }
    }

    fn action(self) -> EventAction {
        match self {
            Layer::Queue => EventAction::Queue,
            Layer::Issue => EventAction::Issue,
            Layer::Application => EventAction::Submit,
        }
    }
}

/// A trace's fingerprint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The trace named.
    pub trace: String,
    /// Its format.
    pub format: String,
    /// Devices (`8,0`) or files (an iolog's) in the trace.
    pub sources: Vec<String>,
    /// Seconds from the first event to the last.
    pub duration_s: f64,
    /// The layers, each with its streams.
    pub layers: Vec<LayerPrint>,
    /// Things the reader should know.
    pub notes: Vec<String>,
}

/// One layer's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayerPrint {
    /// Which.
    pub layer: Layer,
    /// Per stream (one, `all`, unless regions or files split it).
    pub streams: Vec<StreamPrint>,
}

/// One stream's figures at one layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamPrint {
    /// `all`, a region's name, an iolog's file, or `FILE:REGION`.
    pub name: String,
    /// The file system's journal (`--journal`): written by the file system, not a workload.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub journal: bool,
    /// This stream's data I/Os over the layer's (the journal's: the jbd2 share).
    #[serde(default)]
    pub layer_share: f64,
    /// Reads and writes (data I/Os; discards and empty flushes apart).
    pub ios: u64,
    /// Reads.
    pub reads: u64,
    /// Writes.
    pub writes: u64,
    /// Discards (trims), not counted anywhere else.
    pub discards: u64,
    /// reads / ios.
    pub read_share: f64,
    /// Mean bytes of a data I/O.
    pub mean_size_bytes: f64,
    /// Share of data I/Os of each size, by size.
    pub sizes: Vec<SizeShare>,
    /// Sequentiality.
    pub sequential: Sequential,
    /// Flushes and FUA.
    pub flushes: Flushes,
    /// Arrival rate and burstiness.
    pub arrival: Arrival,
    /// I/Os in flight, where the trace has completions.
    pub outstanding: Option<outstanding::Outstanding>,
    /// Skew of offsets.
    pub skew: Skew,
}

impl StreamPrint {
    /// Journal commits that followed this stream's writes, per write
    /// (`None` without `--journal`, or for the journal itself).
    pub fn journal_commits_per_write(&self) -> Option<f64> {
        let c = self.flushes.journal_commits?;
        Some(if self.writes == 0 {
            0.0
        } else {
            c as f64 / self.writes as f64
        })
    }
}

/// The share of one I/O size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeShare {
    /// Bytes.
    pub bytes: u32,
    /// I/Os of this size.
    pub count: u64,
    /// count / data I/Os.
    pub share: f64,
}

/// Sequentiality: an I/O is sequential when it starts where the previous
/// I/O of the same direction (in this stream) ended; a tail rewrite starts
/// inside that I/O instead, at most [`MAX_TAIL_PAGE`] before its end.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sequential {
    /// Sequential I/Os / I/Os with a previous one of their direction.
    pub share: f64,
    /// (sequential + tail rewrites) / the same.
    pub share_with_tail_rewrites: f64,
    /// Among writes only: sequential share.
    pub write_share: f64,
    /// Among writes only: with tail rewrites.
    pub write_share_with_tail_rewrites: f64,
    /// Writes that rewrite the previous write's last page.
    pub tail_rewrites: u64,
    /// The page they rewrite: the most common step back from the previous
    /// write's end to the rewrite's start (0: none).
    #[serde(default)]
    pub tail_page_bytes: u64,
}

/// Flushes and FUA.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Flushes {
    /// Preflushes: empty flushes (`FN`) and writes with a preflush (`FW`);
    /// fio's sync and datasync.
    pub flushes: u64,
    /// Of them, empty flushes (no data).
    pub empty: u64,
    /// Writes with FUA (`WF`).
    pub fua: u64,
    /// flushes / writes.
    pub per_write: f64,
    /// fua / writes.
    pub fua_per_write: f64,
    /// Commit records of the file system's journal (`--journal`) that
    /// followed this stream's writes: its fdatasyncs that found metadata to
    /// commit (a growing file, unwritten extents written). A journal write
    /// with a preflush or FUA is a commit record; at dispatch, a device
    /// without FUA (a loop device) gets it as flush, write, flush, and there
    /// none is counted. `None`: no journal given, or the journal itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal_commits: Option<u64>,
    /// How the flushes are ordered against the writes and each other,
    /// where the trace has completions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<flushorder::FlushOrder>,
}

/// Arrival rate and burstiness of data I/Os (over the layer's whole span,
/// so that the rates of streams add up).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Arrival {
    /// Data I/Os per second (none when the trace has no time span).
    pub iops: Option<f64>,
    /// Coefficient of variation of the counts per 100 ms.
    pub cv_100ms: Option<f64>,
    /// The busiest 100 ms over the mean 100 ms.
    pub peak_over_mean_100ms: Option<f64>,
    /// How often the stream bursts: the span over the number of stretches
    /// of consecutive 100 ms bins above the mean by more than one standard
    /// deviation (the whole span for one burst; none without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_period_s: Option<f64>,
    /// The share of writes among the data I/Os of those bursting 100 ms
    /// bins (a checkpoint's bursts are writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_write_share: Option<f64>,
}

/// Skew of offsets over regions of [`SKEW_REGION`] bytes (by each data
/// I/O's start).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Skew {
    /// The unit: 1 MiB regions.
    pub region_bytes: u64,
    /// Regions touched.
    pub regions_touched: u64,
    /// Share of data I/Os on the hottest 1% of touched regions (at least one).
    pub hottest_1pct_share: f64,
    /// Share of data I/Os on the hottest 10% (at least one).
    pub hottest_10pct_share: f64,
    /// Lowest offset touched.
    pub span_start: u64,
    /// First byte past the highest I/O.
    pub span_end: u64,
}

/// One I/O of a layer, with its completion when the trace has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerIo {
    /// Submitted, ns from the trace's start.
    pub at_ns: u64,
    /// Completed (a matched C event).
    pub done_ns: Option<u64>,
    /// Read, Write or Flush (discards are kept to count them).
    pub op: EventOp,
    /// Byte offset.
    pub offset: u64,
    /// Bytes.
    pub len: u32,
    /// Flags.
    pub flags: IoFlags,
    /// Device or file.
    pub source: u32,
    /// The process that was running (0: not known).
    pub pid: u32,
}

/// Reads `path` (a trace) and fingerprints it.
pub fn of_trace(path: &Path, map: &StreamMap) -> Result<Fingerprint, FingerprintError> {
    let log = crate::replay::load_events(path)?;
    Ok(fingerprint(&log, map))
}

/// The fingerprint of a trace's events.
pub fn fingerprint(log: &EventLog, map: &StreamMap) -> Fingerprint {
    let layers: Vec<Layer> = [Layer::Queue, Layer::Issue, Layer::Application]
        .into_iter()
        .filter(|l| log.has(l.action()))
        .collect();
    let completions = log.has(EventAction::Complete);
    let mut notes = log.notes.clone();
    if !completions {
        notes.push("outstanding I/Os: not in this trace (it has no completions: blktrace C events); the arrival rate stands for it".into());
    }
    if log.format.name().starts_with("fio") {
        notes.push("a fio iolog has one layer (what fio submitted); flushes are its sync and datasync lines, and it has no FUA".into());
    } else if !layers.contains(&Layer::Issue) {
        notes.push("the trace has no issue (D) events: the dispatch layer is not in it".into());
    } else if !layers.contains(&Layer::Queue) {
        notes.push("the trace has no queue (Q) events (recorded with blktrace -a issue?): only the dispatch layer is in it".into());
    }
    let duration_ns = log.events.last().map_or(0, |e| e.at_ns);
    let layers = layers
        .into_iter()
        .map(|layer| {
            let ios = layer_ios(log, layer, completions);
            let by_process = layer == Layer::Queue;
            let split = streams::split(&ios, map, &log.sources, log.format, by_process);
            let span = layer_span(&ios);
            let mut streams: Vec<StreamPrint> = split
                .into_iter()
                .map(|x| {
                    let mut s = stream_print(x.name, &x.ios, span, completions);
                    s.journal = x.journal;
                    s.flushes.journal_commits = x.journal_commits;
                    s
                })
                .collect();
            let all: u64 = streams.iter().map(|s| s.ios).sum();
            for s in &mut streams {
                s.layer_share = if all == 0 {
                    0.0
                } else {
                    s.ios as f64 / all as f64
                };
            }
            LayerPrint { layer, streams }
        })
        .collect();
    Fingerprint {
        trace: log.path.display().to_string(),
        format: log.format.name().to_string(),
        sources: log.sources.clone(),
        duration_s: duration_ns as f64 / 1e9,
        layers,
        notes,
    }
}

/// The first and last submission of a layer, ns.
fn layer_span(ios: &[LayerIo]) -> (u64, u64) {
    let first = ios.first().map_or(0, |i| i.at_ns);
    let last = ios.last().map_or(0, |i| i.at_ns);
    (first, last)
}

/// The I/Os of one layer, in time order, each with its completion (when
/// `completions`): at issue, the C of the same device, offset and kind
/// (first in, first out); at queue, the first C whose range covers the
/// bio's start (a request completes every bio merged into it), an empty
/// flush by the next empty flush's C.
pub fn layer_ios(log: &EventLog, layer: Layer, completions: bool) -> Vec<LayerIo> {
    let want = layer.action();
    let mut out: Vec<LayerIo> = Vec::new();
    // Pending (source, offset) -> indexes into out.
    let mut pending: BTreeMap<(u32, u64), Vec<usize>> = BTreeMap::new();
    let mut flushes: HashMap<u32, std::collections::VecDeque<usize>> = HashMap::new();
    for e in &log.events {
        if e.action == want {
            let k = out.len();
            out.push(LayerIo {
                at_ns: e.at_ns,
                done_ns: None,
                op: e.op,
                offset: e.offset,
                len: e.len,
                flags: e.flags,
                source: e.source,
                pid: e.pid,
            });
            if !completions || e.op == EventOp::Discard {
                continue;
            }
            if e.op == EventOp::Flush {
                flushes.entry(e.source).or_default().push_back(k);
            } else {
                pending.entry((e.source, e.offset)).or_default().push(k);
            }
        } else if e.action == EventAction::Complete && completions && e.op != EventOp::Discard {
            complete(e, layer, &mut out, &mut pending, &mut flushes);
        }
    }
    out
}

/// Marks what the completion `c` completes.
fn complete(
    c: &crate::replay::events::TraceEvent,
    layer: Layer,
    out: &mut [LayerIo],
    pending: &mut BTreeMap<(u32, u64), Vec<usize>>,
    flushes: &mut HashMap<u32, std::collections::VecDeque<usize>>,
) {
    if c.len == 0 {
        if let Some(k) = flushes.get_mut(&c.source).and_then(|q| q.pop_front()) {
            out[k].done_ns = Some(c.at_ns);
        }
        return;
    }
    if layer == Layer::Issue {
        if let Some(v) = pending.get_mut(&(c.source, c.offset)) {
            if !v.is_empty() {
                let k = v.remove(0);
                out[k].done_ns = Some(c.at_ns);
            }
        }
        return;
    }
    let end = c.offset.saturating_add(u64::from(c.len));
    let keys: Vec<(u32, u64)> = pending
        .range((c.source, c.offset)..(c.source, end))
        .map(|(k, _)| *k)
        .collect();
    for key in keys {
        for k in pending.remove(&key).unwrap_or_default() {
            out[k].done_ns = Some(c.at_ns);
        }
    }
}

/// The figures of one stream's I/Os (`span`: the layer's first and last
/// submission, for rates).
pub fn stream_print(
    name: String,
    ios: &[LayerIo],
    span: (u64, u64),
    completions: bool,
) -> StreamPrint {
    let data: Vec<&LayerIo> = ios
        .iter()
        .filter(|i| matches!(i.op, EventOp::Read | EventOp::Write))
        .collect();
    let reads = data.iter().filter(|i| i.op == EventOp::Read).count() as u64;
    let writes = data.len() as u64 - reads;
    let n = data.len() as u64;
    let bytes: u64 = data.iter().map(|i| u64::from(i.len)).sum();
    let mut sizes: BTreeMap<u32, u64> = BTreeMap::new();
    for i in &data {
        *sizes.entry(i.len).or_default() += 1;
    }
    let share = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    StreamPrint {
        name,
        journal: false,
        layer_share: 1.0,
        ios: n,
        reads,
        writes,
        discards: ios.iter().filter(|i| i.op == EventOp::Discard).count() as u64,
        read_share: share(reads, n),
        mean_size_bytes: share(bytes, n),
        sizes: sizes
            .into_iter()
            .map(|(bytes, count)| SizeShare {
                bytes,
                count,
                share: share(count, n),
            })
            .collect(),
        sequential: sequential(&data),
        flushes: Flushes {
            order: flushorder::of(ios, completions),
            ..flushes(ios, writes)
        },
        arrival: arrival(&data, span),
        outstanding: if completions {
            Some(outstanding::of(ios))
        } else {
            None
        },
        skew: skew(&data),
    }
}

/// Sequentiality of data I/Os (in time order).
pub fn sequential(data: &[&LayerIo]) -> Sequential {
    // Per direction: the previous I/O's (offset, end).
    let mut prev: [Option<(u64, u64)>; 2] = [None, None];
    let (mut with_prev, mut seq, mut tail) = ([0u64; 2], [0u64; 2], [0u64; 2]);
    let mut steps: BTreeMap<u64, u64> = BTreeMap::new();
    for i in data {
        let d = usize::from(i.op == EventOp::Write);
        if let Some((start, end)) = prev[d] {
            with_prev[d] += 1;
            if i.offset == end {
                seq[d] += 1;
            } else if i.offset >= start && i.offset < end && end - i.offset <= MAX_TAIL_PAGE {
                tail[d] += 1;
                if d == 1 {
                    *steps.entry(end - i.offset).or_default() += 1;
                }
            }
        }
        prev[d] = Some((i.offset, i.offset + u64::from(i.len)));
    }
    let tail_page_bytes = steps
        .iter()
        .max_by_key(|(step, n)| (**n, std::cmp::Reverse(**step)))
        .map_or(0, |(step, _)| *step);
    let share = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let all = with_prev[0] + with_prev[1];
    Sequential {
        share: share(seq[0] + seq[1], all),
        share_with_tail_rewrites: share(seq[0] + seq[1] + tail[0] + tail[1], all),
        write_share: share(seq[1], with_prev[1]),
        write_share_with_tail_rewrites: share(seq[1] + tail[1], with_prev[1]),
        tail_rewrites: tail[1],
        tail_page_bytes,
    }
}

/// Flushes and FUA of a stream with `writes` data writes.
pub fn flushes(ios: &[LayerIo], writes: u64) -> Flushes {
    let flushes = ios.iter().filter(|i| i.flags.preflush).count() as u64;
    let empty = ios
        .iter()
        .filter(|i| i.flags.preflush && i.op == EventOp::Flush)
        .count() as u64;
    let fua = ios
        .iter()
        .filter(|i| i.flags.fua && i.op == EventOp::Write)
        .count() as u64;
    let per = |a: u64| {
        if writes == 0 {
            0.0
        } else {
            a as f64 / writes as f64
        }
    };
    Flushes {
        flushes,
        empty,
        fua,
        per_write: per(flushes),
        fua_per_write: per(fua),
        journal_commits: None,
        order: None,
    }
}

/// Arrival rate and burstiness of data I/Os over `span`.
pub fn arrival(data: &[&LayerIo], span: (u64, u64)) -> Arrival {
    let (first, last) = span;
    let len_ns = last.saturating_sub(first);
    if len_ns == 0 || data.is_empty() {
        return Arrival::default();
    }
    let iops = data.len() as f64 / (len_ns as f64 / 1e9);
    let bins = len_ns.div_ceil(BIN_NS).max(1);
    if bins < 2 {
        return Arrival {
            iops: Some(iops),
            ..Arrival::default()
        };
    }
    // Only the bins that saw I/O are kept (a damaged trace's times may span
    // years); the empty ones enter the sums as zeros.
    // Per bin: (data I/Os, of them writes).
    let mut counts: HashMap<u64, (u64, u64)> = HashMap::new();
    for i in data {
        let b = (i.at_ns.saturating_sub(first) / BIN_NS).min(bins - 1);
        let c = counts.entry(b).or_default();
        c.0 += 1;
        c.1 += u64::from(i.op == EventOp::Write);
    }
    let n = bins as f64;
    let mean = data.len() as f64 / n;
    let squares: f64 = counts
        .values()
        .map(|&(c, _)| (c as f64 - mean).powi(2))
        .sum();
    let empty = n - counts.len() as f64;
    let sd = ((squares + empty * mean * mean) / (n - 1.0)).sqrt();
    let peak = counts.values().map(|&(c, _)| c).max().unwrap_or(0) as f64;
    let mut busy: Vec<(u64, (u64, u64))> = counts
        .into_iter()
        .filter(|&(_, (c, _))| c as f64 > mean + sd)
        .collect();
    busy.sort_unstable();
    let stretches = busy.windows(2).filter(|w| w[1].0 != w[0].0 + 1).count() + 1;
    let (in_bursts, written) = busy
        .iter()
        .fold((0, 0), |(n, w), &(_, (c, cw))| (n + c, w + cw));
    Arrival {
        iops: Some(iops),
        cv_100ms: (mean > 0.0).then(|| sd / mean),
        peak_over_mean_100ms: (mean > 0.0).then(|| peak / mean),
        burst_period_s: (!busy.is_empty()).then(|| len_ns as f64 / 1e9 / stretches as f64),
        burst_write_share: (in_bursts > 0).then(|| written as f64 / in_bursts as f64),
    }
}

/// Offset skew of data I/Os over 1 MiB regions.
pub fn skew(data: &[&LayerIo]) -> Skew {
    let mut per: HashMap<u64, u64> = HashMap::new();
    for i in data {
        *per.entry(i.offset / SKEW_REGION).or_default() += 1;
    }
    let mut counts: Vec<u64> = per.into_values().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = counts.iter().sum();
    let top = |frac: f64| {
        if total == 0 {
            return 0.0;
        }
        let k = ((counts.len() as f64 * frac).ceil() as usize).max(1);
        counts[..k.min(counts.len())].iter().sum::<u64>() as f64 / total as f64
    };
    Skew {
        region_bytes: SKEW_REGION,
        regions_touched: counts.len() as u64,
        hottest_1pct_share: top(0.01),
        hottest_10pct_share: top(0.10),
        span_start: data.iter().map(|i| i.offset).min().unwrap_or(0),
        span_end: data
            .iter()
            .map(|i| i.offset + u64::from(i.len))
            .max()
            .unwrap_or(0),
    }
}

#[cfg(test)]
mod tests;
