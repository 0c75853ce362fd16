//! Streams: which part of a trace each I/O belongs to. The whole trace is
//! one stream (`all`) unless `--region NAME=START..END` splits the offsets
//! (a WAL's region and the data's on one device; I/Os in none go to
//! `other`; a name given again adds a range to its stream), or a fio
//! iolog names several files (one stream per file; with regions too,
//! `FILE:REGION`). A file map (`--file-map`, [`FileMap`]) names the parts
//! of the device over time: maps of the files' extents taken during the
//! capture, so that an I/O counts for the file that held its blocks when it
//! was made (a log rotated, an AOF rewritten, SST files compacted away:
//! blocks freed by one file and given to another in the same capture).
//!
//! An empty flush has no offset: it counts for the stream that the last
//! write before it by the same process (of its device or file) went to, as
//! a flush follows the writes it makes durable (bench/dbengines.py's rule:
//! a database's WAL writer flushes the WAL it wrote, though the checkpointer
//! wrote a table since); without one (the trace does not say who, or that
//! process wrote nothing), the last write of anyone's. By process only where
//! the process is the submitter's (`by_process`: the queue layer); requests
//! are dispatched by whichever task runs the queue (a kworker dispatches
//! the WAL's flush and a table's write alike).
//!
//! With `--journal`, a journal commit record (a journal write with preflush
//! or FUA) counts for the workload stream whose write it serves: of the
//! streams with writes not flushed since, the one whose first such write came
//! last before the journal's first write since its previous commit (an
//! fdatasync that needs the journal
//! commits it instead of flushing the file; a log that flushed its own
//! writes, as InnoDB's preallocated redo log does, needed no commit, and a
//! write that came while jbd2 wrote the transaction did not start it), or,
//! failing that, the last to start among those not flushed, or the last
//! workload stream written.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{FingerprintError, LayerIo};
use crate::replay::events::EventOp;
use crate::replay::TraceFormat;

/// The stream name of the file system's journal (`--journal`).
pub const JOURNAL: &str = "journal";

/// A named range of byte offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// Its name (`wal`).
    pub name: String,
    /// First byte.
    pub start: u64,
    /// First byte past it.
    pub end: u64,
    /// The file system's journal (`--journal`), not a workload's.
    pub journal: bool,
}

/// Where the files lay on the traced device while it was captured
/// (`--file-map FILE`, JSON): maps of their extents, each taken at a time
/// of the trace. Made by whoever knows the files (bench/dbengines.py maps
/// them with FIEMAP once a second during its capture).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileMap {
    /// The maps, in any order.
    pub maps: Vec<FileMapAt>,
}

/// One map of a [`FileMap`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileMapAt {
    /// When it was taken: seconds from the trace's first event.
    pub at: f64,
    /// The extents then: byte ranges on the traced device, each with the
    /// stream it belongs to (a file, or a class of files under one name).
    pub extents: Vec<FileExtent>,
}

/// A range of bytes on the traced device that a stream's file held.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileExtent {
    /// The stream (`wal`, `sst`).
    pub name: String,
    /// First byte.
    pub start: u64,
    /// First byte past it.
    pub end: u64,
}

impl FileMap {
    /// Reads a file map (JSON) and checks it: names as `--region` takes
    /// them, each extent's end past its start, no two extents of one map
    /// overlapping, times finite and not negative.
    pub fn load(path: &Path) -> Result<FileMap, FingerprintError> {
        let bad = |reason: String| FingerprintError::BadFileMap {
            path: path.to_path_buf(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let map: FileMap = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        map.check().map_err(bad)?;
        Ok(map)
    }

    fn check(&self) -> Result<(), String> {
        for m in &self.maps {
            if !(m.at.is_finite() && m.at >= 0.0) {
                return Err(format!(
                    "a map's time {} is not seconds from the trace's start",
                    m.at
                ));
            }
            let mut sorted: Vec<&FileExtent> = m.extents.iter().collect();
            sorted.sort_by_key(|e| e.start);
            for e in &sorted {
                let reserved = (e.name == JOURNAL).then_some(
                    "'journal' is the stream of --journal, the file system's journal: give its extents with --journal",
                );
                if let Some(why) = name_problem(&e.name).or(reserved) {
                    return Err(format!("the name '{}' (at {} s): {why}", e.name, m.at));
                }
                if e.end <= e.start {
                    return Err(format!(
                        "the extent {}..{} of '{}' (at {} s) ends before it starts",
                        e.start, e.end, e.name, m.at
                    ));
                }
            }
            for w in sorted.windows(2) {
                if w[1].start < w[0].end {
                    return Err(format!(
                        "'{}' and '{}' overlap in the map at {} s ({}..{} and {}..{})",
                        w[0].name, w[1].name, m.at, w[0].start, w[0].end, w[1].start, w[1].end
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Which stream an I/O belongs to, by its offset and time: the `--region`s
/// and `--journal`s (fixed), then a [`FileMap`]'s extents.
///
/// An I/O at time t is looked up in the last map taken at or before t (a
/// block a file already had is still that file's unless it was freed
/// since), then in the maps taken after t, earliest first (blocks allocated
/// at writeback appear in the next map), then in the older maps, latest
/// first. An offset in no region and no map is `other`.
#[derive(Clone, Debug, Default)]
pub struct StreamMap {
    /// The streams, by name in the order first named, and whether each is
    /// the journal.
    streams: Vec<(String, bool)>,
    /// The fixed regions, in the order given.
    fixed: Vec<Extent>,
    /// The maps: (ns from the trace's start, extents sorted by start).
    maps: Vec<(u64, Vec<Extent>)>,
    /// Every byte any map gives a stream, as merged sorted ranges: an I/O
    /// outside them is looked up in no map.
    mapped: Vec<(u64, u64)>,
}

impl StreamMap {
    /// The fixed regions alone.
    pub fn fixed(regions: &[Region]) -> StreamMap {
        StreamMap::new(regions, None)
    }

    /// The fixed regions, and a file map's.
    pub fn new(regions: &[Region], file_map: Option<&FileMap>) -> StreamMap {
        let mut m = StreamMap::default();
        for r in regions {
            let i = m.stream(&r.name, r.journal);
            m.fixed.push((r.start, r.end, i));
        }
        let mut all = Vec::new();
        for at in file_map.map_or(&[][..], |f| &f.maps) {
            let mut extents: Vec<Extent> = at
                .extents
                .iter()
                .map(|e| (e.start, e.end, m.stream(&e.name, false)))
                .collect();
            extents.sort_unstable();
            all.extend(extents.iter().map(|&(a, b, _)| (a, b)));
            m.maps.push(((at.at * 1e9) as u64, extents));
        }
        m.maps.sort_by_key(|(t, _)| *t);
        all.sort_unstable();
        for (a, b) in all {
            match m.mapped.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => m.mapped.push((a, b)),
            }
        }
        m
    }

    fn stream(&mut self, name: &str, journal: bool) -> usize {
        self.streams
            .iter()
            .position(|(n, _)| n == name)
            .unwrap_or_else(|| {
                self.streams.push((name.to_string(), journal));
                self.streams.len() - 1
            })
    }

    /// Nothing splits the trace: one stream, `all`.
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    /// The index of `other`, the stream of I/Os in no region or map.
    pub fn other(&self) -> usize {
        self.streams.len()
    }

    /// The stream's name (`other` past the last).
    pub fn name(&self, stream: usize) -> &str {
        self.streams.get(stream).map_or(OTHER, |(n, _)| n.as_str())
    }

    /// The stream is the file system's journal.
    pub fn is_journal(&self, stream: usize) -> bool {
        self.streams.get(stream).is_some_and(|(_, j)| *j)
    }

    /// The stream of the byte at `offset` at `at_ns` from the trace's start.
    pub fn stream_of(&self, offset: u64, at_ns: u64) -> usize {
        if let Some(&(_, _, i)) = self
            .fixed
            .iter()
            .find(|(a, b, _)| offset >= *a && offset < *b)
        {
            return i;
        }
        if !within(&self.mapped, offset) {
            return self.other();
        }
        let after = self.maps.partition_point(|(t, _)| *t <= at_ns);
        let order = (after.saturating_sub(1)..after)
            .chain(after..self.maps.len())
            .chain((0..after.saturating_sub(1)).rev());
        for k in order {
            let extents = &self.maps[k].1;
            let i = extents.partition_point(|(a, _, _)| *a <= offset);
            if let Some(&(_, b, s)) = i.checked_sub(1).map(|i| &extents[i]) {
                if offset < b {
                    return s;
                }
            }
        }
        self.other()
    }
}

/// The stream of I/O in no region and no map.
const OTHER: &str = "other";

/// What is wrong with a stream's name, for `--region` and `--file-map`
/// alike: empty, a `:` (the separator of `FILE:REGION`), or `other`.
fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() || name.contains(':') {
        Some("the name is empty or holds a ':'")
    } else if name == OTHER {
        Some("'other' is the name of the I/O in no region: choose another")
    } else {
        None
    }
}

/// A range of bytes and its stream: (start, end, stream index).
type Extent = (u64, u64, usize);

/// `offset` lies in one of the sorted, disjoint `ranges`.
fn within(ranges: &[(u64, u64)], offset: u64) -> bool {
    let i = ranges.partition_point(|(a, _)| *a <= offset);
    i > 0 && offset < ranges[i - 1].1
}

/// One stream of a layer: its I/Os and what the split learnt of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    /// `all`, a region's name, an iolog's file, or `FILE:REGION`.
    pub name: String,
    /// The file system's journal (`--journal`).
    pub journal: bool,
    /// Journal commit records that followed this stream's writes (`None`:
    /// no journal given, or this is the journal).
    pub journal_commits: Option<u64>,
    /// Its I/Os, in time order.
    pub ios: Vec<LayerIo>,
}

impl Region {
    /// Parses `NAME=START..END` (`wal=0..512M`; sizes as `--size` takes them).
    pub fn parse(text: &str) -> Result<Region, FingerprintError> {
        let bad = |reason: &str| FingerprintError::BadRegion {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        let (name, range) = text
            .split_once('=')
            .ok_or_else(|| bad("it has no '=' between the name and the range"))?;
        let name = name.trim();
        if let Some(why) = name_problem(name) {
            return Err(bad(why));
        }
        let (a, b) = range
            .split_once("..")
            .ok_or_else(|| bad("the range has no '..' between its start and its end"))?;
        let size = |s: &str| {
            crate::units::parse_size(s).map_err(|_| {
                bad(&format!(
                    "'{s}' is not a byte offset (e.g. 0, 4096, 512M, 8G)"
                ))
            })
        };
        let (start, end) = (size(a)?, size(b)?);
        if end <= start {
            return Err(bad("the end is not past the start"));
        }
        Ok(Region {
            name: name.to_string(),
            start,
            end,
            journal: false,
        })
    }

    /// Parses `START..END`, a range of the file system's journal (`--journal`).
    pub fn parse_journal(text: &str) -> Result<Region, FingerprintError> {
        let r = Region::parse(&format!("{JOURNAL}={text}")).map_err(|e| match e {
            FingerprintError::BadRegion { reason, .. } => FingerprintError::BadRegion {
                text: text.to_string(),
                reason: format!("{reason} (--journal takes START..END, e.g. --journal 1G..1152M)"),
            },
            e => e,
        })?;
        Ok(Region { journal: true, ..r })
    }

    /// Checks a set of regions: none named `other`, no overlap. A name
    /// given more than once gathers its ranges into one stream (a file's
    /// extents: PostgreSQL's WAL segments).
    pub fn check_all(regions: &[Region]) -> Result<(), FingerprintError> {
        for (k, a) in regions.iter().enumerate() {
            let text = format!("{}={}..{}", a.name, a.start, a.end);
            let bad = |reason: String| FingerprintError::BadRegion {
                text: text.clone(),
                reason,
            };
            if let Some(why) = name_problem(&a.name) {
                return Err(bad(why.into()));
            }
            if a.name == JOURNAL && !a.journal && regions.iter().any(|r| r.journal) {
                return Err(bad(format!(
                    "'{JOURNAL}' is the stream of --journal, the file system's journal: choose another name"
                )));
            }
            for b in &regions[..k] {
                if a.start < b.end && b.start < a.end {
                    return Err(bad(format!("it overlaps the region '{}'", b.name)));
                }
            }
        }
        Ok(())
    }
}

/// Splits a layer's I/Os into named streams, in order: by file (an iolog
/// naming several), then by region or file map (`other` last).
pub fn split(
    ios: &[LayerIo],
    map: &StreamMap,
    sources: &[String],
    format: TraceFormat,
    by_process: bool,
) -> Vec<Split> {
    let by_file =
        matches!(format, TraceFormat::FioIologV2 | TraceFormat::FioIologV3) && sources.len() > 1;
    let journaled = (0..map.other()).any(|i| map.is_journal(i));
    // Key: (file or 0, stream index, map.other() for none).
    let mut out: BTreeMap<(u32, usize), Vec<LayerIo>> = BTreeMap::new();
    let mut commits = Commits::default();
    let mut last_write: HashMap<u32, usize> = HashMap::new();
    let mut last_write_of: HashMap<(u32, u32), usize> = HashMap::new();
    for (seq, io) in ios.iter().enumerate() {
        let region = if map.is_empty() {
            0
        } else if io.op == EventOp::Flush {
            (by_process && io.pid != 0)
                .then(|| last_write_of.get(&(io.source, io.pid)))
                .flatten()
                .or_else(|| last_write.get(&io.source))
                .copied()
                .unwrap_or_else(|| map.stream_of(io.offset, io.at_ns))
        } else {
            map.stream_of(io.offset, io.at_ns)
        };
        let file = if by_file { io.source } else { 0 };
        if io.op == EventOp::Write {
            last_write.insert(io.source, region);
            if io.pid != 0 {
                last_write_of.insert((io.source, io.pid), region);
            }
        }
        commits.see(io, (file, region), map.is_journal(region), seq);
        out.entry((file, region)).or_default().push(*io);
    }
    out.into_iter()
        .map(|((file, region), ios)| {
            let region_name = (!map.is_empty()).then(|| map.name(region));
            let file_name = by_file.then(|| {
                sources
                    .get(file as usize)
                    .map_or("?", String::as_str)
                    .to_string()
            });
            let name = match (file_name, region_name) {
                (Some(f), Some(r)) => format!("{f}:{r}"),
                (Some(f), None) => f,
                (None, Some(r)) => r.to_string(),
                (None, None) => "all".to_string(),
            };
            let journal = map.is_journal(region);
            Split {
                name,
                journal,
                journal_commits: (journaled && !journal)
                    .then(|| commits.served.get(&(file, region)).copied().unwrap_or(0)),
                ios,
            }
        })
        .collect()
}

/// A stream's key in [`split`]: (file or 0, region index).
type StreamKey = (u32, usize);

/// Journal commits by the workload stream each served (module docs).
#[derive(Default)]
struct Commits {
    /// Commit records counted per stream.
    served: HashMap<StreamKey, u64>,
    /// The last workload (not journal) stream written, per source.
    last_workload_write: HashMap<u32, StreamKey>,
    /// Per source, the workload streams written since their own last flush,
    /// with when the first of those writes came (the I/O's index): the
    /// writes a commit may be serving.
    unflushed: HashMap<u32, HashMap<StreamKey, usize>>,
    /// Per source, when the journal's first write since its last commit
    /// record came: a commit serves writes from before it began.
    journal_began: HashMap<u32, usize>,
}

impl Commits {
    /// Takes the I/O at index `seq`, counted for stream `key`.
    fn see(&mut self, io: &LayerIo, key: StreamKey, journal: bool, seq: usize) {
        let pending = self.unflushed.entry(io.source).or_default();
        if io.op == EventOp::Flush {
            pending.remove(&key);
            return;
        }
        if io.op != EventOp::Write {
            return;
        }
        if !journal {
            self.last_workload_write.insert(io.source, key);
            if io.flags.fua {
                pending.remove(&key);
            } else {
                pending.entry(key).or_insert(seq);
            }
        } else {
            let began = *self.journal_began.entry(io.source).or_insert(seq);
            if !(io.flags.preflush || io.flags.fua) {
                return;
            }
            // The stream last to start writing unflushed before the journal
            // began (a redo log written while jbd2 wrote its descriptor
            // blocks asked for nothing), or the last to start at all.
            let last = |before: usize| {
                pending
                    .iter()
                    .filter(|(_, at)| **at < before)
                    .max_by_key(|(_, at)| **at)
                    .map(|(key, _)| *key)
            };
            let served = last(began)
                .or_else(|| last(usize::MAX))
                .or_else(|| self.last_workload_write.get(&io.source).copied());
            if let Some(key) = served {
                *self.served.entry(key).or_default() += 1;
            }
            // The commit made every file's metadata in it durable.
            pending.clear();
            self.journal_began.remove(&io.source);
        }
    }
}
