//! Trace replay (issue 17.6): read a captured block trace, replay it through
//! an engine onto a target, and report how faithfully it followed the trace.
//!
//! - [`blktrace`]: blktrace's binary records (per-CPU `NAME.blktrace.N`
//!   files, `blkparse -d` dumps, the kernel blk tracer's binary output);
//! - [`blkparse`]: `blkparse` text dumps (its default output format);
//! - [`iolog`]: fio's `write_iolog` logs, versions 2 and 3;
//! - [`events`]: every queue, issue and complete event with its flags
//!   (preflush, FUA), for statistics rather than replay;
//! - [`map`]: offsets of the trace onto a target of another size;
//! - [`player`]: the replay itself and its result.
//!
//! From a blktrace the replay takes the **queue (Q)** events by default:
//! each is one bio as the filesystem or database submitted it, before this
//! device's block layer merged, split or reordered it. Replayed, those bios
//! go through the target's own block layer, which merges and splits them as
//! the target would. Issue (D) events are what the traced device's driver
//! was finally sent, after its scheduler: replaying them would carry the
//! traced device's merging onto the target. `--events issue` takes them
//! anyway (a trace filtered with `blktrace -a issue` has no Q events; the
//! replay then says so and uses D).

pub mod blkparse;
pub mod blktrace;
pub mod events;
pub mod iolog;
pub mod map;
pub mod player;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use events::{EventLog, EventOp};

pub use crate::engine::Op;
pub use map::MapMode;
pub use player::{replay, Fidelity, ReplayConfig, ReplayResult, SizeRow, Timing};

/// Largest single I/O a trace may hold (each queue slot holds one).
pub const MAX_IO_LEN: u32 = 64 << 20;

/// One I/O of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceIo {
    /// When it was submitted, nanoseconds from the trace's first I/O.
    pub at_ns: u64,
    /// Byte offset on the traced device or file.
    pub offset: u64,
    /// Bytes.
    pub len: u32,
    /// Read or write.
    pub op: Op,
}

/// Which blktrace event is the I/O stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlkEvent {
    /// Q: bios as submitted (the default; see the module documentation).
    #[default]
    Queue,
    /// D: requests as issued to the driver.
    Issue,
}

impl BlkEvent {
    fn other(self) -> BlkEvent {
        match self {
            BlkEvent::Queue => BlkEvent::Issue,
            BlkEvent::Issue => BlkEvent::Queue,
        }
    }

    /// `queue` or `issue`.
    pub fn name(self) -> &'static str {
        match self {
            BlkEvent::Queue => "queue",
            BlkEvent::Issue => "issue",
        }
    }
}

/// The format a trace was read in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// blktrace binary records.
    Blktrace,
    /// blkparse's text output.
    Blkparse,
    /// fio iolog version 2.
    FioIologV2,
    /// fio iolog version 3.
    FioIologV3,
}

impl TraceFormat {
    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Blktrace => "blktrace",
            TraceFormat::Blkparse => "blkparse text",
            TraceFormat::FioIologV2 => "fio iolog v2",
            TraceFormat::FioIologV3 => "fio iolog v3",
        }
    }
}

/// Records of a trace that are not replayed, by reason.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Discards and trims.
    pub discards: u64,
    /// Flushes and syncs.
    pub syncs: u64,
    /// Events of the kind asked for that move no data (flushes in a blktrace).
    pub no_data: u64,
    /// Other events (blktrace's G, I, D or Q, C, P, U, messages).
    pub other_events: u64,
}

/// Why a trace could not be read. Each names the file and where in it.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Nothing at the path, nor `PATH.blktrace.0`.
    #[error("no trace at '{0}': name a blktrace file (NAME.blktrace.0), the NAME of NAME.blktrace.N files (as blkparse -i takes), a blkparse text dump or a fio iolog")]
    NotFound(PathBuf),
    /// The file could not be read.
    #[error("cannot read the trace '{path}': {cause}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        /// (Not a thiserror `source`: the message names it, and a source
        /// would be printed a second time in the error chain.)
        cause: std::io::Error,
    },
    /// Not a format iosim reads.
    #[error("'{0}' is not a trace iosim reads: expected blktrace binary records (magic 0x65617407), blkparse text output (lines like '  8,0  1  1  0.000000000  123  Q  W 2048 + 8 [db]') or a fio iolog ('fio version 2 iolog' or 'fio version 3 iolog' on its first line)")]
    UnknownFormat(PathBuf),
    /// A binary record is cut short.
    #[error("'{path}': record {record} at byte {offset} is cut short ({have} of its {need} bytes are there): the capture was interrupted or the file truncated; capture again, or cut the file at byte {offset}")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// 1-based record number.
        record: u64,
        /// Byte offset of the record.
        offset: u64,
        /// Bytes the record needs.
        need: u64,
        /// Bytes left in the file.
        have: u64,
    },
    /// A binary record does not start with blktrace's magic.
    #[error("'{path}': record {record} at byte {offset} is not a blktrace record (magic {magic:#010x}, expected 0x65617407): the file is damaged or not blktrace output")]
    BadMagic {
        /// The file.
        path: PathBuf,
        /// 1-based record number.
        record: u64,
        /// Byte offset of the record.
        offset: u64,
        /// What was there.
        magic: u32,
    },
    /// A record of another format version.
    #[error("'{path}': record {record} at byte {offset} is blktrace format version {version}; iosim reads version 7 (blktrace 1.x and the kernel's blk tracer): convert it with `blkparse -i NAME -d out.bin` from a blktrace that reads it")]
    BadVersion {
        /// The file.
        path: PathBuf,
        /// 1-based record number.
        record: u64,
        /// Byte offset of the record.
        offset: u64,
        /// The version found.
        version: u8,
    },
    /// A binary record with impossible values.
    #[error("'{path}': record {record}: {reason}")]
    BadRecord {
        /// The file.
        path: PathBuf,
        /// 1-based record number.
        record: u64,
        /// What is wrong.
        reason: String,
    },
    /// A text line that cannot be read.
    #[error("'{path}' line {line}: {reason}")]
    BadLine {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// An I/O larger than iosim replays.
    #[error("'{path}' holds an I/O of {len} bytes; iosim replays I/Os of up to 64 MiB")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u32,
    },
    /// No read or write in the trace.
    #[error("'{path}' holds no read or write to replay ({what})")]
    Empty {
        /// The file.
        path: PathBuf,
        /// What it held instead.
        what: String,
    },
}

/// A trace, read and ready to replay.
#[derive(Clone, Debug)]
pub struct Trace {
    /// What the user named.
    pub path: PathBuf,
    /// The files read (several for per-CPU blktrace files).
    pub files: Vec<PathBuf>,
    /// Format.
    pub format: TraceFormat,
    /// The blktrace event taken (None for fio iologs).
    pub event: Option<BlkEvent>,
    /// The I/O, sorted by time, times from the first I/O.
    pub ios: Vec<TraceIo>,
    /// What was not replayed.
    pub skipped: Skipped,
    /// Things the user should know.
    pub notes: Vec<String>,
}

/// Counts of a trace (or of a replay) by direction and size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mix {
    /// Reads.
    pub reads: u64,
    /// Writes.
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// (reads, writes) by I/O size in bytes.
    pub sizes: BTreeMap<u32, (u64, u64)>,
}

impl Mix {
    /// Counts one I/O.
    pub fn add(&mut self, op: Op, len: u32) {
        if op.is_flush() {
            // Moves no data: not part of the mix of sizes.
            return;
        }
        let e = self.sizes.entry(len).or_default();
        match op {
            Op::Read => {
                self.reads += 1;
                self.read_bytes += u64::from(len);
                e.0 += 1;
            }
            Op::Write => {
                self.writes += 1;
                self.write_bytes += u64::from(len);
                e.1 += 1;
            }
            Op::Fsync | Op::Fdatasync => {}
        }
    }

    /// All I/Os.
    pub fn ios(&self) -> u64 {
        self.reads + self.writes
    }
}

impl Trace {
    /// Reads, writes and sizes of the trace.
    pub fn mix(&self) -> Mix {
        let mut m = Mix::default();
        for io in &self.ios {
            m.add(io.op, io.len);
        }
        m
    }

    /// Nanoseconds from the first to the last I/O.
    pub fn duration_ns(&self) -> u64 {
        self.ios.last().map_or(0, |l| l.at_ns)
    }

    /// First byte past the highest I/O.
    pub fn extent(&self) -> u64 {
        self.ios
            .iter()
            .map(|i| i.offset + u64::from(i.len))
            .max()
            .unwrap_or(0)
    }

    /// Largest I/O.
    pub fn max_len(&self) -> u32 {
        self.ios.iter().map(|i| i.len).max().unwrap_or(0)
    }

    /// True when it holds writes.
    pub fn has_writes(&self) -> bool {
        self.ios.iter().any(|i| i.op == Op::Write)
    }
}

/// The per-CPU files `NAME.blktrace.N` next to `name` (sorted by N).
pub fn blktrace_files(name: &Path) -> Vec<PathBuf> {
    let dir = name
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Some(base) = name.file_name().and_then(|b| b.to_str()) else {
        return Vec::new();
    };
    let prefix = format!("{base}.blktrace.");
    let mut found: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().into_string().ok()?;
            let cpu: u64 = n.strip_prefix(&prefix)?.parse().ok()?;
            Some((cpu, e.path()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

/// `NAME` of a `NAME.blktrace.N` path.
fn blktrace_name(path: &Path) -> Option<PathBuf> {
    let s = path.to_str()?;
    let (name, cpu) = s.rsplit_once(".blktrace.")?;
    cpu.parse::<u64>().ok()?;
    Some(PathBuf::from(name))
}

fn read(path: &Path) -> Result<Vec<u8>, TraceError> {
    std::fs::read(path).map_err(|cause| TraceError::Read {
        path: path.to_path_buf(),
        cause,
    })
}

/// The files of the trace `path` names: the file, its sibling per-CPU
/// files when it is one of `NAME.blktrace.N` (saying so in `notes`), or the
/// `NAME.blktrace.N` files of the NAME.
fn trace_files(path: &Path, notes: &mut Vec<String>) -> Result<Vec<PathBuf>, TraceError> {
    Ok(if path.is_file() {
        match blktrace_name(path) {
            Some(name) => {
                let all = blktrace_files(&name);
                if all.len() > 1 {
                    notes.push(format!(
                        "read the {} per-CPU files of '{}' ({}.blktrace.*), as blkparse -i does",
                        all.len(),
                        name.display(),
                        name.display()
                    ));
                }
                if all.is_empty() {
                    vec![path.to_path_buf()]
                } else {
                    all
                }
            }
            None => vec![path.to_path_buf()],
        }
    } else {
        let all = blktrace_files(path);
        if all.is_empty() {
            return Err(TraceError::NotFound(path.to_path_buf()));
        }
        all
    })
}

/// The files of the trace `path` names ([`trace_files`]), their bytes, and
/// the notes finding them left.
#[allow(clippy::type_complexity)]
fn read_trace(path: &Path) -> Result<(Vec<PathBuf>, Vec<Vec<u8>>, Vec<String>), TraceError> {
    let mut notes = Vec::new();
    let files = trace_files(path, &mut notes)?;
    let datas = files
        .iter()
        .map(|f| read(f))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((files, datas, notes))
}

/// Each file beside its bytes, as the parsers take them.
fn parts_of<'a>(files: &'a [PathBuf], datas: &'a [Vec<u8>]) -> Vec<(&'a Path, &'a [u8])> {
    files
        .iter()
        .map(PathBuf::as_path)
        .zip(datas.iter().map(Vec::as_slice))
        .collect()
}

/// Reads the trace `path` names: a blktrace file (its sibling per-CPU files
/// too), the NAME of `NAME.blktrace.N` files, a blkparse text dump or a fio
/// iolog, detected by content. `event` chooses blktrace's Q or D events.
pub fn load(path: &Path, event: BlkEvent) -> Result<Trace, TraceError> {
    let (files, datas, mut notes) = read_trace(path)?;
    let mut t = parse_files(path, &parts_of(&files, &datas), event)?;
    t.files = files;
    notes.append(&mut t.notes);
    t.notes = notes;
    Ok(t)
}

/// A trace whose every file is empty: nothing was traced, which a capture
/// of an idle device gives (rather than "not a trace iosim reads").
fn nothing_traced(name: &Path, first: &[u8]) -> Result<(), TraceError> {
    if first.is_empty() {
        return Err(TraceError::Empty {
            path: name.to_path_buf(),
            what: "its files are empty: nothing was traced; capture while the database or workload runs".into(),
        });
    }
    Ok(())
}

/// Parses trace bytes (one or more files of one trace; `name` is what the
/// user named). No file system access: the fuzz target calls this.
pub fn parse_files(
    name: &Path,
    parts: &[(&Path, &[u8])],
    event: BlkEvent,
) -> Result<Trace, TraceError> {
    // Per-CPU files of CPUs that saw no I/O are empty: the first with data decides.
    let lead = parts.iter().find(|p| !p.1.is_empty()).or(parts.first());
    let first = lead.map(|p| p.1).unwrap_or_default();
    let first_path = lead.map_or(name, |p| p.0);
    nothing_traced(name, first)?;
    let mut out = Parsed::default();
    let (format, used) = if blktrace::looks_like(first) {
        let used = out.blktrace(parts, event)?;
        (TraceFormat::Blktrace, Some(used))
    } else {
        if parts.len() > 1 {
            return Err(TraceError::UnknownFormat(first_path.to_path_buf()));
        }
        let text = std::str::from_utf8(first)
            .map_err(|_| TraceError::UnknownFormat(first_path.to_path_buf()))?;
        if iolog::version(text).is_some() {
            (out.iolog(text, first_path)?, None)
        } else {
            let used = out.blkparse(text, first_path, event)?;
            (TraceFormat::Blkparse, Some(used))
        }
    };
    let Parsed {
        mut ios,
        skipped,
        mut notes,
    } = out;
    if ios.is_empty() {
        return Err(TraceError::Empty {
            path: name.to_path_buf(),
            what: format!(
                "{} discards, {} syncs or flushes, {} other events",
                skipped.discards,
                skipped.syncs + skipped.no_data,
                skipped.other_events
            ),
        });
    }
    if let Some(big) = ios.iter().find(|i| i.len > MAX_IO_LEN) {
        return Err(TraceError::TooLarge {
            path: name.to_path_buf(),
            len: big.len,
        });
    }
    // Per-CPU files interleave in time: one order, stable for equal times.
    ios.sort_by_key(|i| i.at_ns);
    let t0 = ios[0].at_ns;
    for io in &mut ios {
        io.at_ns -= t0;
    }
    if skipped.discards > 0 {
        notes.push(format!(
            "{} discards (trims) in the trace are not replayed",
            skipped.discards
        ));
    }
    if skipped.syncs > 0 {
        notes.push(format!(
            "{} syncs in the trace are not replayed",
            skipped.syncs
        ));
    }
    Ok(Trace {
        path: name.to_path_buf(),
        files: parts.iter().map(|p| p.0.to_path_buf()).collect(),
        format,
        event: used,
        ios,
        skipped,
        notes,
    })
}

/// Reads every event of the trace `path` names, with its flags, for
/// statistics ([`events`]): the files [`load`] reads, detected the same way.
pub fn load_events(path: &Path) -> Result<EventLog, TraceError> {
    let (files, datas, mut notes) = read_trace(path)?;
    let mut log = parse_events(path, &parts_of(&files, &datas))?;
    log.files = files;
    notes.append(&mut log.notes);
    log.notes = notes;
    Ok(log)
}

/// Parses the events of trace bytes (one or more files of one trace; no
/// file system access).
pub fn parse_events(name: &Path, parts: &[(&Path, &[u8])]) -> Result<EventLog, TraceError> {
    let lead = parts.iter().find(|p| !p.1.is_empty()).or(parts.first());
    let first = lead.map(|p| p.1).unwrap_or_default();
    let first_path = lead.map_or(name, |p| p.0);
    nothing_traced(name, first)?;
    let mut events = Vec::new();
    let (format, sources) = if blktrace::looks_like(first) {
        let mut devices = Vec::new();
        for (p, d) in parts {
            blktrace::events(d, p, &mut events, &mut devices)?;
        }
        let names = devices.into_iter().map(blktrace::device_name).collect();
        (TraceFormat::Blktrace, names)
    } else {
        if parts.len() > 1 {
            return Err(TraceError::UnknownFormat(first_path.to_path_buf()));
        }
        let text = std::str::from_utf8(first)
            .map_err(|_| TraceError::UnknownFormat(first_path.to_path_buf()))?;
        let mut sources = Vec::new();
        if iolog::version(text).is_some() {
            let v = iolog::events(text, first_path, &mut events, &mut sources)?;
            let f = if v == 2 {
                TraceFormat::FioIologV2
            } else {
                TraceFormat::FioIologV3
            };
            (f, sources)
        } else {
            if blkparse::events(text, first_path, &mut events, &mut sources)? == 0 {
                return Err(TraceError::UnknownFormat(first_path.to_path_buf()));
            }
            (TraceFormat::Blkparse, sources)
        }
    };
    if !events
        .iter()
        .any(|e| matches!(e.op, EventOp::Read | EventOp::Write))
    {
        return Err(TraceError::Empty {
            path: name.to_path_buf(),
            what: format!("{} events without data", events.len()),
        });
    }
    events.sort_by_key(|e| e.at_ns);
    let t0 = events[0].at_ns;
    for e in &mut events {
        e.at_ns -= t0;
    }
    let mut notes = Vec::new();
    if format == TraceFormat::FioIologV2 {
        notes.push("a fio version 2 iolog has no timestamps: rates come from its 'wait' lines only (none: every I/O at time 0)".into());
    }
    Ok(EventLog {
        path: name.to_path_buf(),
        files: parts.iter().map(|p| p.0.to_path_buf()).collect(),
        format,
        sources,
        events,
        notes,
    })
}

/// What the parsers of [`parse_files`] gather: the I/O, what was skipped,
/// and notes.
#[derive(Default)]
struct Parsed {
    ios: Vec<TraceIo>,
    skipped: Skipped,
    notes: Vec<String>,
}

impl Parsed {
    /// Binary blktrace files (per CPU); the other event when the trace has
    /// none of `event`. Returns the event used.
    fn blktrace(
        &mut self,
        parts: &[(&Path, &[u8])],
        event: BlkEvent,
    ) -> Result<BlkEvent, TraceError> {
        let mut used = event;
        let mut devices = Vec::new();
        for (p, d) in parts {
            blktrace::parse(d, p, event, &mut self.ios, &mut self.skipped, &mut devices)?;
        }
        if self.ios.is_empty() {
            let other: u64 = parts
                .iter()
                .map(|(p, d)| blktrace::count(d, p, event.other()))
                .sum();
            if other > 0 {
                self.notes.push(format!(
                    "the trace has no {} events; replayed its {} events instead",
                    event.name(),
                    event.other().name()
                ));
                used = event.other();
                self.skipped = Skipped::default();
                for (p, d) in parts {
                    blktrace::parse(d, p, used, &mut self.ios, &mut self.skipped, &mut devices)?;
                }
            }
        }
        if devices.len() > 1 {
            self.notes.push(format!(
                "the trace holds I/O of {} devices; all of it is replayed onto the one target",
                devices.len()
            ));
        }
        Ok(used)
    }

    /// A fio iolog (version 2 or 3). Returns its format.
    fn iolog(&mut self, text: &str, path: &Path) -> Result<TraceFormat, TraceError> {
        let mut files = Vec::new();
        let v = iolog::parse(text, path, &mut self.ios, &mut self.skipped, &mut files)?;
        if files.len() > 1 {
            self.notes.push(format!(
                "the iolog names {} files ({}); the I/O of all of them is replayed onto the one target",
                files.len(),
                files.join(", ")
            ));
        }
        if v == 2 {
            self.notes.push("a fio version 2 iolog has no timestamps: its I/O is timed by its 'wait' lines only".into());
        }
        Ok(if v == 2 {
            TraceFormat::FioIologV2
        } else {
            TraceFormat::FioIologV3
        })
    }

    /// blkparse's text dump; the other event when the dump has none of
    /// `event`. Returns the event used.
    fn blkparse(
        &mut self,
        text: &str,
        path: &Path,
        event: BlkEvent,
    ) -> Result<BlkEvent, TraceError> {
        let mut used = event;
        let mut devices = Vec::new();
        let n = blkparse::parse(
            text,
            path,
            event,
            &mut self.ios,
            &mut self.skipped,
            &mut devices,
        )?;
        if n == 0 {
            return Err(TraceError::UnknownFormat(path.to_path_buf()));
        }
        if self.ios.is_empty() {
            let mut alt = Vec::new();
            let mut alt_skipped = Skipped::default();
            blkparse::parse(
                text,
                path,
                event.other(),
                &mut alt,
                &mut alt_skipped,
                &mut devices,
            )?;
            if !alt.is_empty() {
                self.notes.push(format!(
                    "the dump has no {} events; replayed its {} events instead",
                    event.name(),
                    event.other().name()
                ));
                used = event.other();
                self.ios = alt;
                self.skipped = alt_skipped;
            }
        }
        if devices.len() > 1 {
            self.notes.push(format!(
                "the dump holds I/O of {} devices; all of it is replayed onto the one target",
                devices.len()
            ));
        }
        Ok(used)
    }
}

/// The fuzz target's body (`fuzzing::trace`): parses `data` as one file and
/// split in two per-CPU files, with both events, and checks what parsed.
#[doc(hidden)]
pub fn fuzz_one(data: &[u8]) {
    let p = Path::new("fuzz.blktrace.0");
    let q = Path::new("fuzz.blktrace.1");
    let half = data.len() / 2;
    let splits: [&[(&Path, &[u8])]; 2] = [&[(p, data)], &[(p, &data[..half]), (q, &data[half..])]];
    for parts in splits {
        // The fingerprint's reading of every event with its flags.
        if let Ok(log) = parse_events(p, parts) {
            assert_eq!(log.events.first().map(|e| e.at_ns), Some(0));
            assert!(log.events.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
            assert!(log
                .events
                .iter()
                .all(|e| (e.source as usize) < log.sources.len()));
        }
        for event in [BlkEvent::Queue, BlkEvent::Issue] {
            let Ok(t) = parse_files(p, parts, event) else {
                continue;
            };
            assert!(!t.ios.is_empty());
            assert_eq!(t.ios[0].at_ns, 0);
            assert!(t.ios.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
            assert!(t.max_len() <= MAX_IO_LEN && t.ios.iter().all(|i| i.len > 0));
            assert_eq!(t.mix().ios(), t.ios.len() as u64);
            let region = u64::from(t.max_len()) * 4;
            for mode in [MapMode::Scale, MapMode::Wrap] {
                let m = map::Mapper::new(mode, t.extent(), t.max_len(), 4096, region, 512).unwrap();
                for io in &t.ios {
                    let o = m.map(io.offset, io.len);
                    assert!(o >= 4096 && o + u64::from(io.len) <= 4096 + region);
                }
            }
        }
    }
}
