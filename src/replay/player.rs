//! The replay: one thread, one engine, the trace's I/O in time order.
//!
//! With the original timing (or `--speed N`), each I/O is submitted at its
//! scheduled time, `start + at / speed`, as soon as a queue slot is free;
//! the *start lag* (actual submission minus scheduled time) says how
//! faithfully the replay followed the trace: it grows when the target is
//! slower than the traced device (all slots busy) or the machine cannot keep
//! up. With `--afap` the I/O goes as fast as the queue depth allows and no
//! lag is reported.
//!
//! Per I/O the loop does no allocation, no locking and no formatting: the
//! slots' bookkeeping is allocated before the first I/O.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use super::map::{MapMode, Mapper};
use super::{Mix, Op, Skipped, Trace, TraceFormat};
use crate::clock::now_ns;
use crate::engine::pipeline::{Buffers, Done, Driver, Ended, Io, Next, Pipeline};
use crate::engine::{self, EngineConfig, EngineRequest, IoEngine};
use crate::error::Error;
use crate::stats::{DirStats, LatencySummary, Percentile, RwResult, RwStats};
use crate::target::{self, PrepareOptions, PreparedTarget, TargetKind};
use crate::workload::{CacheMode, EngineKind, RwMode, TargetSpec, WorkloadSpec};

/// When each I/O is submitted.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode", content = "speed")]
pub enum Timing {
    /// At the trace's times, divided by the factor (1.0 = as traced).
    Speed(f64),
    /// As fast as possible at the queue depth.
    Afap,
}

/// What to replay where, and how.
#[derive(Clone, Debug)]
pub struct ReplayConfig {
    /// The file or block device replayed onto.
    pub target: PathBuf,
    /// Size of a file to create (default: the trace's extent).
    pub size: Option<u64>,
    /// Bytes subtracted from every traced offset first: where a traced
    /// partition starts on its disk (the kernel traces disk offsets).
    pub trace_offset: u64,
    /// Offset mapping.
    pub map: MapMode,
    /// Timing.
    pub timing: Timing,
    /// Slots (I/Os in flight at most).
    pub qd: u32,
    /// Engine.
    pub engine: EngineKind,
    /// Page cache.
    pub cache: CacheMode,
    /// Allow writing to devices and files iosim did not create.
    pub allow_destroy: bool,
    /// Progress bar while creating a file.
    pub progress: bool,
}

/// One row of the size histogram.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeRow {
    /// I/O size, bytes.
    pub bytes: u32,
    /// Reads of this size in the trace.
    pub trace_reads: u64,
    /// Writes of this size in the trace.
    pub trace_writes: u64,
    /// Reads of this size completed by the replay.
    pub reads: u64,
    /// Writes of this size completed by the replay.
    pub writes: u64,
}

/// How faithfully the replay kept the trace's timing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fidelity {
    /// Start lag (submission minus scheduled time), microseconds.
    pub start_lag_us: LatencySummary,
    /// I/Os submitted more than 1 ms after their scheduled time.
    pub late_over_1ms: u64,
    /// Times an I/O was due while every slot was busy (raise --qd, or the target is slower).
    pub waited_for_slot: u64,
}

/// The trace as read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    /// What the user named.
    pub path: PathBuf,
    /// Files read.
    pub files: Vec<PathBuf>,
    /// Format.
    pub format: TraceFormat,
    /// blktrace event taken (`queue` or `issue`).
    pub event: Option<super::BlkEvent>,
    /// I/Os.
    pub ios: u64,
    /// Reads.
    pub reads: u64,
    /// Writes.
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// First to last I/O, seconds.
    pub duration_s: f64,
    /// Highest byte touched.
    pub extent_bytes: u64,
    /// Not replayed.
    pub skipped: Skipped,
}

/// The replay's target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetSummary {
    /// Path.
    pub path: PathBuf,
    /// File or block device.
    pub kind: String,
    /// Size, bytes.
    pub size: u64,
    /// Region used.
    pub region_start: u64,
    /// Region length.
    pub region_len: u64,
    /// Created by this replay.
    pub created: bool,
}

/// Result of `iosim replay` (document kind `replay`; the header comes from `document::Header`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    /// The trace.
    pub trace: TraceSummary,
    /// The target, as a one-element list (the history's target index reads `targets`).
    pub targets: Vec<TargetSummary>,
    /// Offset mapping used (`none`, `scale`, `wrap`).
    pub map: MapMode,
    /// Timing.
    pub timing: Timing,
    /// Engine used.
    pub engine: String,
    /// Cache mode.
    pub cache: CacheMode,
    /// Slots.
    pub qd: u32,
    /// First submission to last completion, seconds.
    pub elapsed_s: f64,
    /// Completed I/O: counts, bytes, IOPS, MiB/s, latency.
    pub result: RwResult,
    /// I/O sizes, trace against replay.
    pub sizes: Vec<SizeRow>,
    /// Timing fidelity (absent with --afap).
    pub fidelity: Option<Fidelity>,
    /// I/O errors.
    pub errors: u64,
    /// The first error.
    pub first_error: Option<String>,
    /// Stopped by Ctrl-C before the end of the trace.
    pub interrupted: bool,
    /// Notes.
    pub notes: Vec<String>,
}

/// Stop after this many I/O errors.
const MAX_ERRORS: u64 = 1000;

fn summary(trace: &Trace) -> TraceSummary {
    let m = trace.mix();
    TraceSummary {
        path: trace.path.clone(),
        files: trace.files.clone(),
        format: trace.format,
        event: trace.event,
        ios: m.ios(),
        reads: m.reads,
        writes: m.writes,
        read_bytes: m.read_bytes,
        write_bytes: m.write_bytes,
        duration_s: trace.duration_ns() as f64 / 1e9,
        extent_bytes: trace.extent(),
        skipped: trace.skipped.clone(),
    }
}

/// Replays `trace` as `cfg` says. `stop` (Ctrl-C) ends it early with what
/// was measured.
pub fn replay(
    trace: &Trace,
    cfg: &ReplayConfig,
    stop: &AtomicBool,
) -> anyhow::Result<ReplayResult> {
    let trace = &*rebase(trace, cfg.trace_offset)?;
    let writes = trace.has_writes();
    let max_len = trace.max_len();
    check_config(cfg)?;
    let prepared = prepare_target(trace, cfg, stop)?;
    let mut notes = trace.notes.clone();
    notes.extend(prepared.notes.iter().cloned());
    let align = if cfg.cache.is_direct() {
        prepared.dio_align.max(512)
    } else {
        1
    };
    let mapper = map_offsets(trace, cfg, &prepared, align, &mut notes)?;
    let file = target::open_for_io(&prepared, cfg.cache, writes)?;
    let choice = engine::choose(&EngineRequest {
        kind: cfg.engine,
        cache: cfg.cache,
        qd: cfg.qd,
        sqpoll: false,
        hipri: false,
    })?;
    notes.extend(choice.notes.iter().cloned());
    let caps = choice.caps;
    let slots = caps.slots_for(cfg.qd);
    let mut eng = choice.create(&EngineConfig {
        fds: vec![crate::platform::io::raw_file(&file)],
        slots,
        slot_size: max_len as usize,
        writable: writes,
        ..EngineConfig::default()
    })?;
    for s in 0..slots {
        crate::buf::fill_random(eng.buffer(s), 0x5eed ^ s as u64);
    }

    // A moment to start in, so the first I/O is not already late.
    let start = now_ns() + 1_000_000;
    let mut p = Player {
        ios: &trace.ios,
        i: 0,
        start,
        speed: match cfg.timing {
            Timing::Speed(s) => Some(s),
            Timing::Afap => None,
        },
        mapper: &mapper,
        stats: RwStats::default(),
        done: Mix::default(),
        lag: DirStats::new(),
        late: 0,
        waited: 0,
        errors: 0,
        first_error: None,
        last_done: start,
    };
    // Timed (the latencies), each I/O submitted as it comes; the slots'
    // bookkeeping is the pipeline's, allocated once.
    let ended = Pipeline::new(slots)
        .timed()
        .run(eng.as_mut(), Some(stop), &mut p)?;
    let played = Played {
        player: p,
        eng: eng.as_ref(),
        engine: choice.kind.name().to_string(),
        map: mapper.mode,
        slots,
        interrupted: ended == Ended::Stopped,
    };
    Ok(played.result(trace, cfg, &prepared, notes))
}

/// The trace with `offset` subtracted from every I/O's offset (the trace
/// itself when it is 0), refused when an I/O lies below it.
fn rebase(trace: &Trace, offset: u64) -> anyhow::Result<Cow<'_, Trace>> {
    if offset == 0 {
        return Ok(Cow::Borrowed(trace));
    }
    if let Some(low) = trace.ios.iter().find(|i| i.offset < offset) {
        return Err(Error::TraceBelowOffset {
            lowest: low.offset,
            trace_offset: offset,
        }
        .into());
    }
    let mut t = trace.clone();
    for io in &mut t.ios {
        io.offset -= offset;
    }
    Ok(Cow::Owned(t))
}

/// Refuses a speed that is not a positive factor, and a queue depth of 0.
fn check_config(cfg: &ReplayConfig) -> anyhow::Result<()> {
    if let Timing::Speed(s) = cfg.timing {
        if !(s.is_finite() && s > 0.0) {
            return Err(Error::BadWorkload(format!(
                "--speed {s}: give a positive factor such as 2x or 0.5x"
            ))
            .into());
        }
    }
    if cfg.qd == 0 {
        return Err(Error::BadWorkload("--qd 0: give at least 1".into()).into());
    }
    Ok(())
}

/// The target, under `run`'s rules: created when missing (as large as the
/// trace reaches), and never written unless iosim made it or --allow-destroy.
fn prepare_target(
    trace: &Trace,
    cfg: &ReplayConfig,
    stop: &AtomicBool,
) -> anyhow::Result<PreparedTarget> {
    let writes = trace.has_writes();
    // A missing file is created as large as the trace reaches (whole MiB).
    let size = if cfg.target.exists() {
        cfg.size
    } else {
        Some(
            cfg.size
                .unwrap_or_else(|| crate::units::align_up(trace.extent().max(1 << 20), 1 << 20)),
        )
    };
    let bs = u64::from(trace.max_len()).next_multiple_of(512);
    let spec = WorkloadSpec {
        targets: vec![TargetSpec::new(&cfg.target, size)],
        rw: if writes {
            RwMode::Randrw
        } else {
            RwMode::Randread
        },
        write_pct: if writes { 50 } else { 0 },
        bs,
        align: Some(512),
        qd: cfg.qd,
        cache: cfg.cache,
        engine: cfg.engine,
        allow_destroy: cfg.allow_destroy,
        ..WorkloadSpec::default()
    };
    target::prepare(
        &spec,
        0,
        PrepareOptions {
            progress: cfg.progress,
            stop: Some(stop),
        },
    )
}

/// The mapping of the trace's offsets onto the prepared region, refused when
/// direct I/O (`align` > 1) cannot do the trace's sizes or offsets.
fn map_offsets(
    trace: &Trace,
    cfg: &ReplayConfig,
    prepared: &PreparedTarget,
    align: u64,
    notes: &mut Vec<String>,
) -> anyhow::Result<Mapper> {
    if let Some(bad) = trace.ios.iter().find(|i| u64::from(i.len) % align != 0) {
        return Err(Error::TraceUnaligned {
            what: format!("of {} bytes", bad.len),
            target: cfg.target.clone(),
            align,
        }
        .into());
    }
    let mapper = Mapper::new(
        cfg.map,
        trace.extent(),
        trace.max_len(),
        prepared.region_start,
        prepared.region_len,
        align,
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "cannot replay '{}' onto '{}': {e}",
            trace.path.display(),
            cfg.target.display()
        )
    })?;
    if cfg.map == MapMode::Auto && mapper.mode == MapMode::Scale {
        notes.push(format!(
            "the trace reaches {} but the target holds {}: offsets were scaled (--map scale; --map wrap keeps sequential runs)",
            crate::units::format_size(trace.extent()),
            crate::units::format_size(prepared.region_len)
        ));
    }
    if mapper.mode == MapMode::None && align > 1 {
        if let Some(bad) = trace.ios.iter().find(|i| i.offset % align != 0) {
            return Err(Error::TraceUnaligned {
                what: format!("at byte {}", bad.offset),
                target: cfg.target.clone(),
                align,
            }
            .into());
        }
    }
    Ok(mapper)
}

/// What the pipeline left: the player's tallies and the engine that ran it.
struct Played<'a> {
    player: Player<'a>,
    eng: &'a dyn IoEngine,
    /// The engine's name.
    engine: String,
    /// The offset mapping used.
    map: MapMode,
    slots: usize,
    interrupted: bool,
}

impl Played<'_> {
    /// The result, `notes` extended with the engine's and the replay's own.
    fn result(
        self,
        trace: &Trace,
        cfg: &ReplayConfig,
        prepared: &PreparedTarget,
        mut notes: Vec<String>,
    ) -> ReplayResult {
        let Played {
            player,
            eng,
            engine,
            map,
            slots,
            interrupted,
        } = self;
        let Player {
            stats,
            done,
            lag,
            late,
            waited,
            errors,
            first_error,
            last_done,
            speed,
            start,
            ..
        } = player;
        let elapsed_s = last_done.saturating_sub(start) as f64 / 1e9;
        let first_error = first_error.map(|(res, _)| {
            let what = if res < 0 {
                std::io::Error::from_raw_os_error(-res).to_string()
            } else {
                format!("short transfer of {res} bytes")
            };
            eng.explain(res).unwrap_or(what)
        });
        notes.extend(eng.notes());
        if errors >= MAX_ERRORS {
            notes.push(format!("stopped after {MAX_ERRORS} I/O errors"));
        }
        let fidelity = speed.map(|_| Fidelity {
            start_lag_us: lag.latency(),
            late_over_1ms: late,
            waited_for_slot: waited,
        });
        if waited > 0 {
            notes.push(format!(
                "{waited} I/Os were due while all {slots} slots were busy: the target kept up less well than the traced device, or --qd is too low"
            ));
        }
        ReplayResult {
            trace: summary(trace),
            targets: vec![target_summary(prepared)],
            map,
            timing: cfg.timing,
            engine,
            cache: cfg.cache,
            qd: slots as u32,
            elapsed_s,
            result: stats.summarize(elapsed_s),
            sizes: sizes(trace, &done),
            fidelity,
            errors,
            first_error,
            interrupted,
            notes,
        }
    }
}

/// The target as the result names it.
fn target_summary(prepared: &PreparedTarget) -> TargetSummary {
    TargetSummary {
        path: prepared.path.clone(),
        kind: match prepared.kind {
            TargetKind::File => "file",
            TargetKind::BlockDevice => "block_device",
            TargetKind::Null => "null",
        }
        .into(),
        size: prepared.size,
        region_start: prepared.region_start,
        region_len: prepared.region_len,
        created: prepared.created,
    }
}

/// The size histogram: the trace's I/O sizes against the replay's, by size.
fn sizes(trace: &Trace, done: &Mix) -> Vec<SizeRow> {
    let mut sizes: Vec<SizeRow> = trace
        .mix()
        .sizes
        .iter()
        .map(|(&bytes, &(r, w))| {
            let (dr, dw) = done.sizes.get(&bytes).copied().unwrap_or_default();
            SizeRow {
                bytes,
                trace_reads: r,
                trace_writes: w,
                reads: dr,
                writes: dw,
            }
        })
        .collect();
    sizes.sort_by_key(|r| r.bytes);
    sizes
}

/// The replay as a pipeline driver: the trace's I/Os in order, each at its
/// due time; what completed, how late each started.
struct Player<'a> {
    ios: &'a [super::TraceIo],
    /// The next I/O of the trace.
    i: usize,
    start: u64,
    /// `None`: as fast as possible.
    speed: Option<f64>,
    mapper: &'a Mapper,
    stats: RwStats,
    done: Mix,
    lag: DirStats,
    late: u64,
    waited: u64,
    errors: u64,
    /// The first failed or short I/O: (result, latency).
    first_error: Option<(i32, u64)>,
    last_done: u64,
}

impl Player<'_> {
    /// When I/O `i` is due: `start + at / speed`. Saturating: a tiny
    /// --speed on a long trace puts the due time past u64 (the cast
    /// saturates, the addition must too).
    fn due(&self, i: usize) -> Option<u64> {
        let at = self.ios[i].at_ns;
        self.speed
            .map(|s| self.start.saturating_add((at as f64 / s) as u64))
    }
}

impl Driver for Player<'_> {
    type Error = anyhow::Error;

    fn next(&mut self, _slot: u32, _: &mut Buffers<'_>) -> Next {
        if self.i == self.ios.len() || self.errors >= MAX_ERRORS {
            return Next::End;
        }
        let t = now_ns();
        if let Some(due) = self.due(self.i) {
            if t < due {
                return Next::Wait(due);
            }
            let l = t - due;
            self.lag.record(l, 0);
            if l > 1_000_000 {
                self.late += 1;
            }
        }
        let io = &self.ios[self.i];
        self.i += 1;
        Next::Io(Io::new(
            0,
            io.op,
            self.mapper.map(io.offset, io.len),
            io.len,
        ))
    }

    fn complete(&mut self, d: &Done, _: &mut Buffers<'_>) -> anyhow::Result<()> {
        if d.full() {
            let dir = match d.op {
                Op::Read => &mut self.stats.read,
                Op::Write => &mut self.stats.write,
                Op::Fsync | Op::Fdatasync => &mut self.stats.flush,
            };
            dir.record(d.lat_ns, u64::from(d.len));
            self.done.add(d.op, d.len);
        } else {
            self.errors += 1;
            if self.first_error.is_none() {
                self.first_error = Some((d.result, d.lat_ns));
            }
        }
        self.last_done = d.at_ns;
        Ok(())
    }

    /// Every slot is busy: the next I/O waits for one (counted when it is
    /// already due).
    fn all_busy(&mut self) {
        if self.i < self.ios.len() && self.due(self.i).is_some_and(|d| now_ns() >= d) {
            self.waited += 1;
        }
    }
}

impl ReplayResult {
    /// CSV: one row per I/O size, trace against replay.
    pub fn csv(&self) -> String {
        let mut s = String::from("bytes,trace_reads,trace_writes,reads,writes\n");
        for r in &self.sizes {
            s.push_str(&format!(
                "{},{},{},{},{}\n",
                r.bytes, r.trace_reads, r.trace_writes, r.reads, r.writes
            ));
        }
        s
    }

    /// The text report.
    pub fn text(&self) -> String {
        let mut s = String::new();
        self.summary_lines(&mut s);
        self.size_table(&mut s);
        self.latency_table(&mut s);
        if self.interrupted {
            let _ = writeln!(
                s,
                "\ninterrupted: the replay stopped before the end of the trace"
            );
        }
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s
    }

    /// The trace, the target and the settings; the trace's and the replay's
    /// totals, throughput and errors.
    fn summary_lines(&self, s: &mut String) {
        let f = crate::units::format_size;
        let t = &self.trace;
        let tg = &self.targets[0];
        let timing = match self.timing {
            Timing::Speed(1.0) => "original timing".to_string(),
            Timing::Speed(x) => format!("{x}x speed"),
            Timing::Afap => "as fast as possible".to_string(),
        };
        let event = t
            .event
            .map(|e| format!(", {} events", e.name()))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "iosim replay: {} ({}{event}) onto {} ({}, {})",
            t.path.display(),
            t.format.name(),
            tg.path.display(),
            tg.kind.replace('_', " "),
            f(tg.size)
        );
        let _ = writeln!(
            s,
            "{timing}, engine {}, qd {}, cache {}, offsets mapped: {}",
            self.engine,
            self.qd,
            self.cache.name(),
            self.map.name()
        );
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "trace     {:>8} I/Os: {:>7} reads, {:>7} writes; {} read, {} written over {:.3} s",
            t.ios,
            t.reads,
            t.writes,
            f(t.read_bytes),
            f(t.write_bytes),
            t.duration_s
        );
        let r = &self.result;
        let _ = writeln!(
            s,
            "replayed  {:>8} I/Os: {:>7} reads, {:>7} writes; {} read, {} written in {:.3} s",
            r.total.ios,
            r.read.ios,
            r.write.ios,
            f(r.read.bytes),
            f(r.write.bytes),
            self.elapsed_s
        );
        let _ = writeln!(
            s,
            "          {:.0} IOPS ({:.0} read, {:.0} write), {:.2} MiB/s; {} errors{}",
            r.total.iops,
            r.read.iops,
            r.write.iops,
            r.total.mib_per_sec,
            self.errors,
            self.first_error
                .as_ref()
                .map(|e| format!(" (first: {e})"))
                .unwrap_or_default()
        );
    }

    /// I/O sizes, trace against replay.
    fn size_table(&self, s: &mut String) {
        let f = crate::units::format_size;
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{:>10} {:>12} {:>12} {:>12} {:>12}",
            "size", "trace reads", "trace writes", "reads", "writes"
        );
        for row in &self.sizes {
            let _ = writeln!(
                s,
                "{:>10} {:>12} {:>12} {:>12} {:>12}",
                f(u64::from(row.bytes)),
                row.trace_reads,
                row.trace_writes,
                row.reads,
                row.writes
            );
        }
    }

    /// Latency per direction, the start lag and the fidelity line.
    fn latency_table(&self, s: &mut String) {
        let r = &self.result;
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            "latency (us)", "min", "p50", "p90", "p99", "p99.9", "max"
        );
        let row = |s: &mut String, name: &str, l: &LatencySummary| {
            let _ = writeln!(
                s,
                "{:<16} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
                name,
                l.min,
                l.p(Percentile::P50),
                l.p(Percentile::P90),
                l.p(Percentile::P99),
                l.p(Percentile::P99_9),
                l.max
            );
        };
        if r.read.ios > 0 {
            row(s, "read", &r.read.latency_us);
        }
        if r.write.ios > 0 {
            row(s, "write", &r.write.latency_us);
        }
        if let Some(fd) = &self.fidelity {
            row(s, "start lag", &fd.start_lag_us);
            let _ = writeln!(
                s,
                "\nfidelity: {} of {} I/Os started more than 1 ms late; {} were due while every slot was busy",
                fd.late_over_1ms, r.total.ios, fd.waited_for_slot
            );
        }
    }
}
