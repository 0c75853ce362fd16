//! The interval histogram log (`iosim run --hist-log FILE`): every closed
//! interval's latency histograms, written as the interval closes, in
//! HdrHistogram's standard interval log format, and read back by
//! `iosim show --hist-log` and `iosim report --hist-log`.
//!
//! The format is the one HdrHistogram's `HistogramLogWriter` writes (Java,
//! C, Python, Go and Rust readers, HistogramLogAnalyzer): `#` comment lines,
//! a `#[StartTime: ...]` and `#[BaseTime: ...]` header (the measured
//! window's start, seconds since the epoch), then one line per histogram:
//!
//! ```text
//! Tag=read,0.000,1.000,0.213,HISTFAAAAC...
//! ```
//!
//! the tag (absent for the untagged histogram), the interval's start in
//! seconds from the BaseTime, its length, the histogram's largest value (in
//! nanoseconds: the log's MaxValueDivisor is 1) and the histogram itself,
//! base64 of HdrHistogram's compressed V2 encoding. Values are nanoseconds.
//! Per interval the log has the untagged histogram (reads and writes
//! together: what a reader that ignores tags, as HistogramLogProcessor does
//! by default, merges), then `read`, `write` and `flush` when the interval
//! had any, and with more than one target the same per target
//! (`target2`, `target2.read`...; targets counted from 1). [`Stream`] names them.
//!
//! The histograms are the run's own (same precision, same bounds, see
//! [`crate::stats::new_histogram`]): merging every interval of a stream gives
//! exactly the run's whole histogram of it, so the percentiles equal the
//! result's.
//!
//! The writer streams: it holds one buffered file and one scratch
//! histogram, whatever the length of the run. It is fed on the runner's
//! main thread when an interval closes (`runner/series.rs`), never by a worker.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::Serialize;

use crate::outfile::{self, Existing, OutFileError};
use crate::stats::{new_histogram, DirStats, LatencySummary, RwStats};

/// Why an existing log is kept.
const KEPT: &str = "may hold the histograms of an earlier run: give --hist-log another name, \
                    or move that file away first";

/// Which I/Os a histogram of the log holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Reads and writes together.
    All,
    /// Reads.
    Read,
    /// Writes.
    Write,
    /// Flushes (`--fsync`, `--fdatasync`, `--sync-method`).
    Flush,
}

impl Direction {
    /// Its name in tags.
    pub const fn name(self) -> &'static str {
        match self {
            Direction::All => "all",
            Direction::Read => "read",
            Direction::Write => "write",
            Direction::Flush => "flush",
        }
    }

    fn parse(s: &str) -> Option<Direction> {
        [
            Direction::All,
            Direction::Read,
            Direction::Write,
            Direction::Flush,
        ]
        .into_iter()
        .find(|d| d.name() == s)
    }
}

/// One stream of histograms in the log: a direction of the whole run or of
/// one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stream {
    /// The target, counted from 1; `None`: all targets.
    pub target: Option<usize>,
    /// Which I/Os.
    pub dir: Direction,
}

impl Stream {
    /// The whole run's reads and writes together (the untagged histograms).
    pub const ALL: Stream = Stream {
        target: None,
        dir: Direction::All,
    };

    /// Its tag in the log (`None`: untagged): `read`, `target2`, `target2.read`.
    pub fn tag(self) -> Option<String> {
        match (self.target, self.dir) {
            (None, Direction::All) => None,
            (None, d) => Some(d.name().to_string()),
            (Some(t), Direction::All) => Some(format!("target{t}")),
            (Some(t), d) => Some(format!("target{t}.{}", d.name())),
        }
    }

    /// The stream a tag names (`None`: a tag iosim does not write).
    pub fn parse(tag: Option<&str>) -> Option<Stream> {
        let Some(tag) = tag else {
            return Some(Stream::ALL);
        };
        let (target, dir) = match tag.strip_prefix("target") {
            Some(rest) => {
                let (n, d) = rest.split_once('.').unwrap_or((rest, "all"));
                (Some(n.parse::<usize>().ok().filter(|n| *n > 0)?), d)
            }
            None => (None, tag),
        };
        match (target, Direction::parse(dir)?) {
            // `all` is written untagged, never as a tag.
            (None, Direction::All) => None,
            (target, dir) => Some(Stream { target, dir }),
        }
    }

    /// Its name in summaries: the tag, or `all`.
    pub fn label(self) -> String {
        self.tag()
            .unwrap_or_else(|| Direction::All.name().to_string())
    }
}

/// A histogram log that failed to be created or read; each message names
/// the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum HistLogError {
    /// Creating the log.
    #[error(transparent)]
    Create(#[from] OutFileError),
    /// Writing its header.
    #[error("cannot write the histogram log '{path}': {cause}: check the path, its directory's permissions and the free space", path = path.display())]
    Write {
        /// The log.
        path: PathBuf,
        /// Why.
        cause: io::Error,
    },
    /// Reading it.
    #[error("cannot read the histogram log '{path}': {cause}: check the path (a file iosim run --hist-log wrote)", path = path.display())]
    Read {
        /// The log.
        path: PathBuf,
        /// Why.
        cause: io::Error,
    },
    /// A line that is not part of an interval histogram log.
    #[error("'{path}' line {line} is not a line of an interval histogram log ({why}): give a file iosim run --hist-log (or another HdrHistogram log writer) wrote", path = path.display())]
    Parse {
        /// The log.
        path: PathBuf,
        /// Its line, from 1.
        line: usize,
        /// What is wrong.
        why: String,
    },
    /// No interval at all.
    #[error("the histogram log '{path}' holds no interval histograms: the run ended before its first interval closed; run longer than one --interval", path = path.display())]
    Empty {
        /// The log.
        path: PathBuf,
    },
}

/// The writer of one run's log.
pub struct HistLog {
    path: PathBuf,
    out: BufWriter<File>,
    ser: V2DeflateSerializer,
    /// Scratch for reads and writes together (no allocation per interval).
    scratch: Histogram<u64>,
    started: bool,
    intervals: u64,
    failed: Option<String>,
    /// Per stream, what the histograms round (0.1%): written at the end.
    exact: Vec<(Stream, Exact)>,
}

/// What a stream's histograms give only within their precision, kept exact
/// by the writer and written as a comment at the end of the log
/// (`#[Exact: ...]`), so the reader's min, mean, max and clamped percentiles
/// are the run's to the nanosecond. A log cut short has none: then they come
/// from the histograms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Exact {
    ios: u64,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u128,
}

impl Exact {
    fn of(d: &DirStats) -> Exact {
        Exact {
            ios: d.ios,
            min_ns: d.lat_min_ns,
            max_ns: d.lat_max_ns,
            sum_ns: d.lat_sum_ns,
        }
    }

    fn add(&mut self, o: Exact) {
        self.ios += o.ios;
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns += o.sum_ns;
    }

    const PREFIX: &'static str = "#[Exact: ";

    fn line(&self, s: Stream) -> String {
        format!(
            "{}stream={} ios={} min_ns={} max_ns={} sum_ns={}]\n",
            Exact::PREFIX,
            s.label(),
            self.ios,
            self.min_ns,
            self.max_ns,
            self.sum_ns
        )
    }

    fn parse(line: &str) -> Option<(String, Exact)> {
        let body = line
            .strip_prefix(Exact::PREFIX)?
            .trim_end()
            .strip_suffix(']')?;
        let mut stream = None;
        let mut e = Exact {
            ios: 0,
            min_ns: 0,
            max_ns: 0,
            sum_ns: 0,
        };
        for kv in body.split(' ') {
            let (k, v) = kv.split_once('=')?;
            match k {
                "stream" => stream = Some(v.to_string()),
                "ios" => e.ios = v.parse().ok()?,
                "min_ns" => e.min_ns = v.parse().ok()?,
                "max_ns" => e.max_ns = v.parse().ok()?,
                "sum_ns" => e.sum_ns = v.parse().ok()?,
                _ => {}
            }
        }
        Some((stream?, e))
    }
}

/// The log as the runner's options carry it (shared by clones of the options).
pub type SharedHistLog = Arc<Mutex<HistLog>>;

impl HistLog {
    /// Creates the log at `path` and writes its header comments; an existing
    /// file is refused, untouched.
    pub fn create(path: &Path) -> Result<HistLog, HistLogError> {
        let f = outfile::create(path, "histogram log", Existing::Refuse(KEPT))?;
        let mut log = HistLog {
            path: path.to_path_buf(),
            out: BufWriter::new(f),
            ser: V2DeflateSerializer::new(),
            scratch: new_histogram(),
            started: false,
            intervals: 0,
            failed: None,
            exact: Vec::new(),
        };
        let header = format!(
            "iosim {} interval histogram log (HdrHistogram interval log format, docs/long-runs.md)\n\
             Values: nanoseconds of I/O latency; untagged: reads and writes together; tags: read, write, flush,\n\
             targetN and targetN.read|write|flush (per target when the run has several)",
            env!("CARGO_PKG_VERSION")
        );
        IntervalLogWriterBuilder::new()
            .add_comment(&header)
            .begin_log_with(&mut log.out, &mut log.ser)
            .map(|_| ())
            .and_then(|()| log.out.flush())
            .map_err(|cause| HistLogError::Write {
                path: path.to_path_buf(),
                cause,
            })?;
        Ok(log)
    }

    /// The log as the runner's options carry it.
    pub fn shared(self) -> SharedHistLog {
        Arc::new(Mutex::new(self))
    }

    /// The measured window opened at `start`: the StartTime and BaseTime of
    /// the log (once; later calls do nothing).
    pub fn start(&mut self, start: SystemTime) {
        if std::mem::replace(&mut self.started, true) {
            return;
        }
        let r = IntervalLogWriterBuilder::new()
            .with_start_time(start)
            .with_base_time(start)
            .begin_log_with(&mut self.out, &mut self.ser)
            .map(|_| ());
        self.check(r.map_err(|e| e.to_string()));
    }

    /// Writes one closed interval: `start_ns` from the window's start,
    /// `dur_ns` long; `total` all targets together, `targets` each target's
    /// (`None`: that target did nothing), written per target when there are several.
    pub fn interval(
        &mut self,
        start_ns: u64,
        dur_ns: u64,
        total: &RwStats,
        targets: &[Option<RwStats>],
    ) {
        if self.failed.is_some() {
            return;
        }
        if !self.started {
            // Cannot happen (the runner starts the log when the window opens).
            self.start(SystemTime::now());
        }
        let at = Duration::from_nanos(start_ns);
        let dur = Duration::from_nanos(dur_ns);
        let mut r = self.write_scope(None, at, dur, total, true);
        if targets.len() > 1 {
            for (i, s) in targets.iter().enumerate() {
                if r.is_err() {
                    break;
                }
                if let Some(s) = s {
                    r = self.write_scope(Some(i + 1), at, dur, s, false);
                }
            }
        }
        let r = r.and_then(|()| self.out.flush().map_err(|e| e.to_string()));
        self.check(r);
        self.intervals += 1;
    }

    /// One scope's histograms: reads and writes together (always for the
    /// whole run), then each direction that had I/O.
    fn write_scope(
        &mut self,
        target: Option<usize>,
        at: Duration,
        dur: Duration,
        s: &RwStats,
        always: bool,
    ) -> Result<(), String> {
        self.scratch.reset();
        for d in [&s.read, &s.write] {
            self.scratch.add(&d.hist).map_err(|e| format!("{e:?}"))?;
        }
        let mut w = IntervalLogWriterBuilder::new()
            .begin_log_with(&mut self.out, &mut self.ser)
            .map_err(|e| e.to_string())?;
        let parts: [(Direction, &DirStats); 3] = [
            (Direction::Read, &s.read),
            (Direction::Write, &s.write),
            (Direction::Flush, &s.flush),
        ];
        let mut all = Exact::of(&s.read);
        all.add(Exact::of(&s.write));
        if always || !self.scratch.is_empty() {
            let stream = Stream {
                target,
                dir: Direction::All,
            };
            keep(&mut self.exact, stream, all);
            let tag = stream.tag();
            w.write_histogram(&self.scratch, at, dur, tag.as_deref().and_then(Tag::new))
                .map_err(|e| e.to_string())?;
        }
        for (dir, d) in parts {
            if d.ios == 0 {
                continue;
            }
            keep(&mut self.exact, Stream { target, dir }, Exact::of(d));
            let tag = Stream { target, dir }.tag();
            w.write_histogram(&d.hist, at, dur, tag.as_deref().and_then(Tag::new))
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn check(&mut self, r: Result<(), String>) {
        if let Err(e) = r {
            self.failed.get_or_insert(e);
        }
    }

    /// Writes the exact figures and flushes the log; the note the run's
    /// result carries about it.
    pub fn finish(&mut self) -> String {
        if self.failed.is_none() {
            let mut text = String::new();
            for (s, e) in &self.exact {
                text.push_str(&e.line(*s));
            }
            if let Err(e) = self.out.write_all(text.as_bytes()) {
                self.failed.get_or_insert(e.to_string());
            }
        }
        if let Err(e) = self.out.flush() {
            self.failed.get_or_insert(e.to_string());
        }
        match &self.failed {
            None => format!(
                "histogram log: {n} intervals written to {p} (iosim show --hist-log {p} reads it)",
                n = self.intervals,
                p = self.path.display()
            ),
            Some(e) => format!(
                "histogram log {}: writing failed after {} intervals ({e}): the log ends there; check the free space",
                self.path.display(),
                self.intervals
            ),
        }
    }
}

/// Adds `e` to the stream's exact figures.
fn keep(exact: &mut Vec<(Stream, Exact)>, s: Stream, e: Exact) {
    match exact.iter_mut().find(|(x, _)| *x == s) {
        Some((_, x)) => x.add(e),
        None => exact.push((s, e)),
    }
}

/// A merged stream of a log.
#[derive(Clone, Debug, Serialize)]
pub struct StreamSummary {
    /// Its name: `all`, a tag (`read`, `target2.write`).
    pub stream: String,
    /// Intervals that had a histogram of it.
    pub intervals: usize,
    /// I/Os over the whole log.
    pub ios: u64,
    /// Latency of every interval merged, µs (min, mean and max from the
    /// histogram, within its 0.1%; the percentiles as the run's result gives them).
    pub latency_us: LatencySummary,
}

/// One interval of the log's untagged stream (reads and writes together).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LogPoint {
    /// Start, seconds from the log's BaseTime (the window's start).
    pub t_s: f64,
    /// Length, seconds.
    pub duration_s: f64,
    /// I/Os.
    pub ios: u64,
    /// Median, µs.
    pub p50_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Largest, µs (the histogram's, within 0.1%).
    pub max_us: f64,
}

/// What `iosim show --hist-log` reports of a log.
#[derive(Clone, Debug, Serialize)]
pub struct LogSummary {
    /// The file.
    pub path: String,
    /// The log's StartTime (the measured window's start), seconds since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_unix_s: Option<f64>,
    /// Intervals (untagged histograms).
    pub intervals: usize,
    /// The first interval's length, seconds.
    pub interval_s: f64,
    /// From the first interval's start to the last one's end, seconds.
    pub span_s: f64,
    /// Every stream, merged: `all` first, then by target and direction.
    pub streams: Vec<StreamSummary>,
    /// Each interval of the `all` stream (empty unless asked for).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<LogPoint>,
    /// Histograms with tags iosim does not write (another tool's), left out.
    #[serde(skip_serializing_if = "is_zero")]
    pub foreign: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A log read back: its summary and each stream's merged histogram.
pub struct ReadLog {
    /// The summary (with every point of the `all` stream).
    pub summary: LogSummary,
    /// Each stream's merged histogram, in [`LogSummary::streams`] order.
    pub merged: Vec<(Stream, Histogram<u64>)>,
}

/// The latency summary of a stream (µs), computed as a run's result is:
/// from its histogram, with the exact figures where the log has them.
fn summarize(h: &Histogram<u64>, exact: Option<&Exact>) -> LatencySummary {
    let mut d = DirStats::from_histogram(h.clone());
    if let Some(e) = exact.filter(|e| e.ios == d.ios) {
        d.lat_min_ns = e.min_ns;
        d.lat_max_ns = e.max_ns;
        d.lat_sum_ns = e.sum_ns;
    }
    d.latency()
}

/// Reads the log at `path` line by line (a day's log is not held in
/// memory: only each stream's merged histogram and one point per interval).
pub fn read(path: &Path) -> Result<ReadLog, HistLogError> {
    let read_err = |cause| HistLogError::Read {
        path: path.to_path_buf(),
        cause,
    };
    let f = File::open(path).map_err(read_err)?;
    let mut lines = BufReader::new(f);
    let mut line = String::new();
    let mut n = 0;
    let mut log = Reading::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).map_err(read_err)? == 0 {
            break;
        }
        n += 1;
        if !line.ends_with('\n') {
            line.push('\n');
        }
        let bad = |why: String| HistLogError::Parse {
            path: path.to_path_buf(),
            line: n,
            why,
        };
        log.line(&line, &bad)?;
    }
    log.finish(path)
}

/// What [`read`] has gathered from the lines read so far.
struct Reading {
    start: Option<f64>,
    /// Each stream's merged histogram and its number of intervals.
    merged: Vec<(Stream, Histogram<u64>, usize)>,
    /// The `all` stream's points.
    points: Vec<LogPoint>,
    foreign: usize,
    first_start: f64,
    end: f64,
    interval_s: f64,
    de: Deserializer,
    exact: Vec<(String, Exact)>,
}

impl Reading {
    fn new() -> Reading {
        Reading {
            start: None,
            merged: Vec::new(),
            points: Vec::new(),
            foreign: 0,
            first_start: f64::NAN,
            end: f64::NAN,
            interval_s: f64::NAN,
            de: Deserializer::new(),
            exact: Vec::new(),
        }
    }

    /// One line of the log (ending in a newline): exact figures, or
    /// interval-log entries; `bad` makes the error of this line.
    fn line(
        &mut self,
        line: &str,
        bad: &impl Fn(String) -> HistLogError,
    ) -> Result<(), HistLogError> {
        if let Some(e) = Exact::parse(line) {
            self.exact.push(e);
            return Ok(());
        }
        for entry in IntervalLogIterator::new(line.as_bytes()) {
            let entry = entry.map_err(|e| bad(format!("{e:?}")))?;
            let h = match entry {
                LogEntry::StartTime(t) => {
                    self.start = Some(t.as_secs_f64());
                    continue;
                }
                LogEntry::BaseTime(_) => continue,
                LogEntry::Interval(h) => h,
            };
            let Some(stream) = Stream::parse(h.tag().map(|t| t.as_str())) else {
                self.foreign += 1;
                continue;
            };
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(h.encoded_histogram())
                .map_err(|e| bad(format!("its histogram is not base64: {e}")))?;
            let hist = decode(&bytes, &mut self.de).map_err(bad)?;
            let (t, d) = (
                h.start_timestamp().as_secs_f64(),
                h.duration().as_secs_f64(),
            );
            if stream == Stream::ALL {
                if self.points.is_empty() {
                    self.first_start = t;
                    self.interval_s = d;
                }
                self.end = t + d;
                self.points.push(point(&hist, t, d));
            }
            self.merge(stream, &hist, bad)?;
        }
        Ok(())
    }

    /// Adds an interval's histogram to its stream's.
    fn merge(
        &mut self,
        stream: Stream,
        hist: &Histogram<u64>,
        bad: &impl Fn(String) -> HistLogError,
    ) -> Result<(), HistLogError> {
        let merged = &mut self.merged;
        let slot = match merged.iter().position(|(s, _, _)| *s == stream) {
            Some(i) => i,
            None if merged.len() >= MAX_STREAMS => {
                return Err(bad(format!(
                    "its tag {} would be stream {} of the log, and iosim reads at most {MAX_STREAMS} \
                     (the whole run and {} targets, each with its directions)",
                    stream.label(),
                    MAX_STREAMS + 1,
                    MAX_STREAMS / 4 - 1
                )));
            }
            None => {
                merged.push((stream, new_histogram(), 0));
                merged.len() - 1
            }
        };
        let m = &mut merged[slot];
        m.1.add(hist).map_err(|e| {
            bad(format!(
                "its histogram does not fit iosim's bounds of 1 ns to 1,000 s: {e:?}"
            ))
        })?;
        m.2 += 1;
        Ok(())
    }

    /// The log read: its summary and each stream's merged histogram.
    fn finish(mut self, path: &Path) -> Result<ReadLog, HistLogError> {
        if self.points.is_empty() {
            return Err(HistLogError::Empty {
                path: path.to_path_buf(),
            });
        }
        self.merged.sort_by_key(|(s, _, _)| (s.target, s.dir));
        let exact = &self.exact;
        let streams = self
            .merged
            .iter()
            .map(|(s, h, k)| StreamSummary {
                stream: s.label(),
                intervals: *k,
                ios: h.len(),
                latency_us: summarize(
                    h,
                    exact.iter().find(|(n, _)| *n == s.label()).map(|(_, e)| e),
                ),
            })
            .collect();
        Ok(ReadLog {
            summary: LogSummary {
                path: path.display().to_string(),
                start_unix_s: self.start,
                intervals: self.points.len(),
                interval_s: self.interval_s,
                span_s: self.end - self.first_start,
                streams,
                points: self.points,
                foreign: self.foreign,
            },
            merged: self.merged.into_iter().map(|(s, h, _)| (s, h)).collect(),
        })
    }
}

/// Most streams a log read back may have: each is a merged histogram of
/// about 250 KiB, so a few lines naming new tags must not take gigabytes.
const MAX_STREAMS: usize = 4 * 65;

/// Most counts a histogram of a log may declare: 8 MiB of them. iosim's
/// own have 31,744; more takes 5 significant digits over a wide range,
/// precision that merging into iosim's 3-digit histograms would drop anyway.
const MAX_COUNTS: u64 = 1 << 20;

/// HdrHistogram's V2 encoding, plain and compressed, and its header's length.
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
const V2_HEADER: usize = 40;

/// Decodes one histogram of a log (`bytes`: its base64 decoded), refusing
/// one whose header declares more than the line can hold: a compressed
/// length past the line's end, a payload longer than what inflated, or more
/// counts than [`MAX_COUNTS`]. Without these checks a 2 KB line could make
/// the decoder allocate gigabytes.
fn decode(bytes: &[u8], de: &mut Deserializer) -> Result<Histogram<u64>, String> {
    use std::io::Read as _;
    let plain = match be_u32(bytes, 0) {
        Some(V2_COMPRESSED_COOKIE) => {
            let declared = be_u32(bytes, 4).ok_or("its histogram is cut short")? as usize;
            let body = &bytes[8..];
            if declared > body.len() {
                return Err(format!(
                    "its histogram declares {declared} compressed bytes but holds {}",
                    body.len()
                ));
            }
            // Inflate at most what the largest histogram allowed can encode to.
            let cap = V2_HEADER as u64 + 9 * MAX_COUNTS + 1;
            let mut out = Vec::new();
            flate2::read::ZlibDecoder::new(&body[..declared])
                .take(cap)
                .read_to_end(&mut out)
                .map_err(|e| format!("its histogram cannot be inflated: {e}"))?;
            if out.len() as u64 >= cap {
                return Err(format!(
                    "its histogram inflates past {cap} bytes, more than any histogram iosim reads"
                ));
            }
            std::borrow::Cow::Owned(out)
        }
        Some(V2_COOKIE) => std::borrow::Cow::Borrowed(bytes),
        _ => return Err("its histogram is not in HdrHistogram's V2 encoding".into()),
    };
    check_header(&plain)?;
    de.deserialize(&mut io::Cursor::new(&plain[..]))
        .map_err(|e| format!("its histogram cannot be decoded: {e:?}"))
}

/// The big-endian `u32` at `at`.
fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Checks a plain V2 histogram's header against the bytes after it.
fn check_header(b: &[u8]) -> Result<(), String> {
    let be_u64 = |at: usize| -> Option<u64> {
        Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
    };
    let (Some(V2_COOKIE), Some(payload), Some(digits), Some(low), Some(high)) = (
        be_u32(b, 0),
        be_u32(b, 4),
        be_u32(b, 12),
        be_u64(16),
        be_u64(24),
    ) else {
        return Err("its histogram's header is cut short or not HdrHistogram's".into());
    };
    let held = b.len() - V2_HEADER.min(b.len());
    if payload as usize > held {
        return Err(format!(
            "its histogram declares {payload} bytes of counts but holds {held}"
        ));
    }
    match counts_len(low, high, digits) {
        None => Err(format!(
            "its histogram's bounds ({low} to {high}, {digits} digits) are not a histogram's"
        )),
        Some(n) if n > MAX_COUNTS => Err(format!(
            "its histogram ({low} to {high}, {digits} significant digits) has {n} counts, \
             more than the {MAX_COUNTS} iosim reads"
        )),
        Some(_) => Ok(()),
    }
}

/// How many counts an HdrHistogram of these bounds has (its
/// `distinct_values`), computed as `Histogram::new_with_bounds` does,
/// without allocating them; `None` for bounds it refuses.
fn counts_len(low: u64, high: u64, digits: u32) -> Option<u64> {
    if !(1..=u64::MAX / 2).contains(&low) || high < 2 * low || digits > 5 {
        return None;
    }
    let sub_magnitude = u64::from(2 * 10u32.pow(digits))
        .next_power_of_two()
        .trailing_zeros();
    let unit_magnitude = 63 - low.leading_zeros();
    if unit_magnitude + sub_magnitude > 63 {
        return None;
    }
    let mut untrackable = 1u64 << (sub_magnitude + unit_magnitude);
    let mut buckets = 1u64;
    while untrackable <= high {
        if untrackable > u64::MAX / 2 {
            buckets += 1;
            break;
        }
        untrackable <<= 1;
        buckets += 1;
    }
    Some((buckets + 1) << (sub_magnitude - 1))
}

fn point(h: &Histogram<u64>, t_s: f64, duration_s: f64) -> LogPoint {
    let us = |ns: u64| ns as f64 / 1000.0;
    let (p50_us, p99_us, max_us) = if h.is_empty() {
        (0.0, 0.0, 0.0)
    } else {
        (
            us(h.value_at_quantile(0.5)),
            us(h.value_at_quantile(0.99)),
            us(h.max()),
        )
    };
    LogPoint {
        t_s,
        duration_s,
        ios: h.len(),
        p50_us,
        p99_us,
        max_us,
    }
}

/// `iosim show --hist-log`'s text: the span, each stream merged, and with
/// `intervals` one line per interval.
pub fn summary_text(s: &LogSummary, intervals: bool) -> String {
    use crate::stats::Percentile as P;
    let mut o = String::new();
    let _ = writeln!(o, "histogram log {}", s.path);
    let from = s.start_unix_s.map_or_else(String::new, |t| {
        format!(
            ", from {}",
            crate::clock::rfc3339((t + s.points.first().map_or(0.0, |p| p.t_s)) as u64)
        )
    });
    let _ = writeln!(
        o,
        "  {} intervals of {:.3} s over {:.3} s{from}",
        s.intervals, s.interval_s, s.span_s
    );
    if s.foreign > 0 {
        let _ = writeln!(
            o,
            "  {} histograms with tags iosim does not write were left out",
            s.foreign
        );
    }
    let _ = writeln!(
        o,
        "  {:<16} {:>12} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "stream", "I/Os", "mean us", "p50 us", "p99 us", "p99.9 us", "max us"
    );
    for st in &s.streams {
        let l = &st.latency_us;
        let _ = writeln!(
            o,
            "  {:<16} {:>12} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
            st.stream,
            st.ios,
            l.mean,
            l.p(P::P50),
            l.p(P::P99),
            l.p(P::P99_9),
            l.max
        );
    }
    if intervals {
        let _ = writeln!(
            o,
            "  {:>10} {:>9} {:>10} {:>10} {:>10} {:>10}",
            "t s", "length s", "I/Os", "p50 us", "p99 us", "max us"
        );
        for p in &s.points {
            let _ = writeln!(
                o,
                "  {:>10.3} {:>9.3} {:>10} {:>10.1} {:>10.1} {:>10.1}",
                p.t_s, p.duration_s, p.ios, p.p50_us, p.p99_us, p.max_us
            );
        }
    }
    o
}

/// Seconds since the epoch of a [`SystemTime`] given as ns since the epoch.
pub fn unix_time(ns: i128) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(u64::try_from(ns.max(0)).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::Serializer as _;

    fn stats(lats: &[u64], write: bool) -> RwStats {
        let mut s = RwStats::default();
        for &l in lats {
            if write {
                s.write.record(l, 4096);
            } else {
                s.read.record(l, 4096);
            }
        }
        s
    }

    #[test]
    fn tags_name_streams_both_ways() {
        for s in [
            Stream::ALL,
            Stream {
                target: None,
                dir: Direction::Flush,
            },
            Stream {
                target: Some(2),
                dir: Direction::All,
            },
            Stream {
                target: Some(12),
                dir: Direction::Write,
            },
        ] {
            assert_eq!(Stream::parse(s.tag().as_deref()), Some(s), "{s:?}");
            assert!(s.tag().as_deref().is_none_or(|t| Tag::new(t).is_some()));
        }
        assert_eq!(Stream::parse(Some("all")), None);
        assert_eq!(Stream::parse(Some("target0.read")), None);
        assert_eq!(Stream::parse(Some("gc-pause")), None);
    }

    #[test]
    fn merged_intervals_are_the_run_exactly() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("run.hlog");
        let mut log = HistLog::create(&p).unwrap();
        log.start(UNIX_EPOCH + Duration::from_secs(1_700_000_000));
        let mut whole = RwStats::default();
        let mut t0 = RwStats::default();
        for i in 0..50u64 {
            let a = stats(&[1000 + i * 7, 20_000 + i, 3_000_000 * (i % 3)], i % 2 == 0);
            let b = stats(&[500 + i, 9_000_000 + i * 1000], true);
            let mut total = a.clone();
            total.merge(&b);
            whole.merge(&total);
            t0.merge(&a);
            log.interval(i * 100_000_000, 100_000_000, &total, &[Some(a), Some(b)]);
        }
        assert!(log.finish().contains("50 intervals"));
        let r = read(&p).unwrap();
        assert_eq!(r.summary.intervals, 50);
        assert!((r.summary.span_s - 5.0).abs() < 1e-6);
        assert_eq!(r.summary.start_unix_s, Some(1_700_000_000.0));
        let get = |s: Stream| &r.merged.iter().find(|(x, _)| *x == s).unwrap().1;
        assert_eq!(*get(Stream::ALL), whole.total().hist);
        let read_stream = Stream {
            target: None,
            dir: Direction::Read,
        };
        assert_eq!(*get(read_stream), whole.read.hist);
        let t1 = Stream {
            target: Some(1),
            dir: Direction::All,
        };
        assert_eq!(*get(t1), t0.total().hist);
        // The percentiles are the result's.
        let all = &r.summary.streams[0];
        assert_eq!(all.stream, "all");
        let want = whole.total().latency();
        assert_eq!(all.latency_us, want);
        let w = &r
            .summary
            .streams
            .iter()
            .find(|s| s.stream == "target2.write")
            .unwrap();
        assert_eq!(w.latency_us.max, 9049.0);
        let text = summary_text(&r.summary, true);
        assert!(
            text.contains("50 intervals") && text.contains("target2.write"),
            "{text}"
        );
        // An existing log is kept.
        let e = HistLog::create(&p).err().unwrap().to_string();
        assert!(e.contains("another name"), "{e}");
    }

    #[test]
    fn counts_are_sized_as_hdrhistogram_sizes_them() {
        for (low, high, digits) in [
            (1, crate::stats::MAX_TRACKED_NS, 3),
            (1, 2, 0),
            (1, 3_600_000_000_000, 2),
            (1000, 60_000_000_000, 4),
            (1, u64::MAX, 3),
            (7, 1 << 40, 5),
            (1 << 40, 1 << 50, 1),
        ] {
            let h = Histogram::<u64>::new_with_bounds(low, high, digits as u8).unwrap();
            assert_eq!(
                counts_len(low, high, digits),
                Some(h.distinct_values() as u64),
                "{low} {high} {digits}"
            );
        }
        assert_eq!(counts_len(0, 10, 3), None);
        assert_eq!(counts_len(1, 10, 6), None);
    }

    /// A V2 histogram (plain) with the given header fields and `counts` bytes.
    fn v2(payload_len: u32, digits: u32, low: u64, high: u64, counts: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(V2_COOKIE.to_be_bytes());
        b.extend(payload_len.to_be_bytes());
        b.extend(0u32.to_be_bytes());
        b.extend(digits.to_be_bytes());
        b.extend(low.to_be_bytes());
        b.extend(high.to_be_bytes());
        b.extend(1.0f64.to_be_bytes());
        b.extend(counts);
        b
    }

    fn compressed(plain: &[u8], declared: Option<u32>) -> Vec<u8> {
        use std::io::Write as _;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(plain).unwrap();
        let body = z.finish().unwrap();
        let mut b = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        b.extend(declared.unwrap_or(body.len() as u32).to_be_bytes());
        b.extend(body);
        b
    }

    #[test]
    fn a_histogram_declaring_more_than_it_holds_is_refused() {
        let mut de = Deserializer::new();
        // A real one decodes, compressed or not.
        let mut h = new_histogram();
        h.record(1234).unwrap();
        let mut enc = Vec::new();
        V2DeflateSerializer::new().serialize(&h, &mut enc).unwrap();
        assert_eq!(decode(&enc, &mut de).unwrap(), h);
        let high = crate::stats::MAX_TRACKED_NS;
        let plain = v2(2, 3, 1, high, &[0x02, 0x02]);
        assert_eq!(decode(&plain, &mut de).unwrap().len(), 2);
        assert!(decode(&compressed(&plain, None), &mut de).is_ok());
        // 2 GiB of payload declared in a few bytes.
        let e = decode(&compressed(&v2(1 << 31, 3, 1, high, &[2]), None), &mut de).unwrap_err();
        assert!(
            e.contains("declares 2147483648 bytes of counts but holds 1"),
            "{e}"
        );
        // A compressed length past the line.
        let e = decode(&compressed(&plain, Some(1 << 30)), &mut de).unwrap_err();
        assert!(e.contains("compressed bytes"), "{e}");
        // Five digits over all of u64: 6 M counts, 50 MB.
        let e = decode(&compressed(&v2(1, 5, 1, u64::MAX, &[2]), None), &mut de).unwrap_err();
        assert!(e.contains("more than the 1048576"), "{e}");
        // A zlib bomb: zeros inflate without end.
        let e = decode(&compressed(&vec![0u8; 32 << 20], None), &mut de).unwrap_err();
        assert!(e.contains("inflates past"), "{e}");
        assert!(decode(&[1, 2, 3], &mut de).is_err());
        assert!(decode(&[], &mut de).is_err());
    }

    #[test]
    fn a_file_that_is_no_log_is_refused_with_its_line() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.hlog");
        std::fs::write(&p, "#comment\nnot,a,log\n").unwrap();
        let e = read(&p).err().unwrap().to_string();
        assert!(e.contains("line 2"), "{e}");
        std::fs::write(&p, "#only comments\n").unwrap();
        assert!(matches!(read(&p), Err(HistLogError::Empty { .. })));
    }
}
