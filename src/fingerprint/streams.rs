//! Streams: which part of a trace each I/O belongs to. The whole trace is
//! one stream (`all`) unless `--region NAME=START..END` splits the offsets
//! (a WAL's region and the data's on one device; I/Os in none go to
//! `other`; a name given again adds a range to its stream), or a fio
//! iolog names several files (one stream per file; with regions too,
//! `FILE:REGION`).
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
        if name.is_empty() || name.contains(':') {
            return Err(bad("the name is empty or holds a ':'"));
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
            if a.name == "other" {
                return Err(bad(
                    "'other' is the name of the I/O in no region: choose another".into(),
                ));
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
/// naming several), then by region (`other` last).
pub fn split(
    ios: &[LayerIo],
    regions: &[Region],
    sources: &[String],
    format: TraceFormat,
    by_process: bool,
) -> Vec<Split> {
    let by_file =
        matches!(format, TraceFormat::FioIologV2 | TraceFormat::FioIologV3) && sources.len() > 1;
    let journaled = regions.iter().any(|r| r.journal);
    // A region's stream is the first region of its name.
    let region_of = |offset: u64| {
        regions
            .iter()
            .find(|r| offset >= r.start && offset < r.end)
            .and_then(|r| regions.iter().position(|x| x.name == r.name))
            .unwrap_or(regions.len())
    };
    let is_journal = |region: usize| regions.get(region).is_some_and(|r| r.journal);
    // Key: (file or 0, region index or regions.len() for none/other).
    let mut out: BTreeMap<(u32, usize), Vec<LayerIo>> = BTreeMap::new();
    let mut commits = Commits::default();
    let mut last_write: HashMap<u32, usize> = HashMap::new();
    let mut last_write_of: HashMap<(u32, u32), usize> = HashMap::new();
    for (seq, io) in ios.iter().enumerate() {
        let region = if regions.is_empty() {
            0
        } else if io.op == EventOp::Flush {
            (by_process && io.pid != 0)
                .then(|| last_write_of.get(&(io.source, io.pid)))
                .flatten()
                .or_else(|| last_write.get(&io.source))
                .copied()
                .unwrap_or_else(|| region_of(io.offset))
        } else {
            region_of(io.offset)
        };
        let file = if by_file { io.source } else { 0 };
        if io.op == EventOp::Write {
            last_write.insert(io.source, region);
            if io.pid != 0 {
                last_write_of.insert((io.source, io.pid), region);
            }
        }
        commits.see(io, (file, region), is_journal(region), seq);
        out.entry((file, region)).or_default().push(*io);
    }
    out.into_iter()
        .map(|((file, region), ios)| {
            let region_name = if regions.is_empty() {
                None
            } else {
                Some(regions.get(region).map_or("other", |r| r.name.as_str()))
            };
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
            let journal = is_journal(region);
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
