//! The acknowledgement log of `iosim crash write`: one line per write whose
//! durability point completed, streamed in order to standard output or to a
//! file on another mount, and read back by `iosim crash verify`.
//!
//! # Format (text, one record a line, every line checksummed)
//!
//! ```text
//! #iosim-acks 1 {"run_seed":...,"targets":[...],...} *1a2b3c4d
//! 1 0 p 172032 8192 1 9f0e1d2c dsync 1763820000123456 *0badf00d
//! 2 0 l 67108864 8192 1 77aa55cc dsync 1763820000124001 *cafe0123
//! #end {"records":2,...} *12345678
//! ```
//!
//! A record holds: acknowledgement sequence number (1, 2, ... with no gap),
//! target index, kind (`p` a data page, `l` a log append), byte offset,
//! length, generation, the crc32c stored in the page header, the durability
//! mechanism (`dsync` = an O_DSYNC write returned, `fdatasync`, `fsync`), and
//! the time the durability point completed (µs since the Unix epoch). The
//! last field, after ` *`, is the crc32c of everything before it in hex.
//!
//! The log is append-only. A crash of the writer itself can leave a partial
//! last line; the reader reports it and ignores it. A damaged line followed by
//! good ones (or a gap in the sequence numbers) is reported as damage: it is
//! never read as a record.

use std::fmt::Write as _;
use std::fs::File;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Version written in the header line.
pub const ACKLOG_VERSION: u32 = 1;
const HEADER_TAG: &str = "#iosim-acks";
const END_TAG: &str = "#end";
/// How the trailer's reason starts when an error stopped the writer.
const ERROR_REASON: &str = "error: ";

/// Errors reading an acknowledgement log.
#[derive(Debug, thiserror::Error)]
pub enum AckLogError {
    /// The file could not be read.
    #[error("cannot read the acknowledgement log '{path}': {cause}. Give the file `iosim crash write` streamed its acknowledgements to (--acks PATH or its redirected standard output)")]
    Read {
        /// The file.
        path: String,
        /// Why.
        /// (Not a thiserror `source`: the message names it, and a source
        /// would be printed a second time in the error chain.)
        cause: std::io::Error,
    },
    /// The first line is not an intact header.
    #[error("'{0}' is not an iosim acknowledgement log (its first line is not an intact '#iosim-acks' header): give the file `iosim crash write` wrote")]
    NoHeader(String),
    /// Written by a newer iosim.
    #[error("the acknowledgement log is format version {0}, this iosim reads version {ACKLOG_VERSION}: verify with the iosim version that wrote it")]
    Version(u32),
}

/// What a write was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteKind {
    /// A data page written in place.
    Page,
    /// A sequential log append.
    Log,
}

/// How the write was made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// The write itself was synchronous (O_DSYNC, with O_DIRECT where possible: FUA on the device).
    Dsync,
    /// A buffered write followed by a completed fdatasync.
    Fdatasync,
    /// A buffered write followed by a completed fsync.
    Fsync,
}

impl Mechanism {
    /// The name in the log and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Dsync => "dsync",
            Mechanism::Fdatasync => "fdatasync",
            Mechanism::Fsync => "fsync",
        }
    }
    fn parse(s: &str) -> Option<Mechanism> {
        Some(match s {
            "dsync" => Mechanism::Dsync,
            "fdatasync" => Mechanism::Fdatasync,
            "fsync" => Mechanism::Fsync,
            _ => return None,
        })
    }
}

/// One acknowledged write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckRecord {
    /// Acknowledgement sequence number, from 1, no gaps.
    pub seq: u64,
    /// Index of the target in the header.
    pub target: u32,
    /// Page or log append.
    pub kind: WriteKind,
    /// Byte offset in the target.
    pub offset: u64,
    /// Length in bytes.
    pub len: u32,
    /// Generation of the page image (for a log append: the lap over the log area, from 1).
    pub generation: u64,
    /// crc32c stored in the page header.
    pub checksum: u32,
    /// Durability mechanism.
    pub mech: Mechanism,
    /// When the durability point completed, µs since the Unix epoch.
    pub ts_us: u64,
}

/// A target as the writer laid it out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckTarget {
    /// Path as given to the writer.
    pub path: String,
    /// File id written into every page.
    pub file_id: u32,
    /// First byte of the region used.
    pub region_start: u64,
    /// Data pages, from `region_start`.
    pub data_pages: u64,
    /// Log pages, right after the data pages.
    pub log_pages: u64,
}

/// The header line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckHeader {
    /// Seed of every page image.
    pub run_seed: u64,
    /// Page size (8192).
    pub page_size: u32,
    /// When the writer started, µs since the epoch.
    pub started_us: u64,
    /// The workload claimed torn-write protection: a torn page is then a failure.
    pub torn_protection: bool,
    /// The mix of writes, as given (or as taken from `profile`).
    pub mix: String,
    /// The workload profile the mix was taken from (`--profile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Host that wrote.
    pub host: String,
    /// iosim version that wrote.
    pub iosim_version: String,
    /// The targets.
    pub targets: Vec<AckTarget>,
}

/// Why a writer stopped on its own. In the trailer's JSON and the
/// verdict's `writer_end` it is the text it always was: `duration`,
/// `interrupted`, or `error: ` and the I/O error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum StopReason {
    /// The duration was reached.
    Duration,
    /// Interrupted (Ctrl-C, a signal).
    Interrupted,
    /// An I/O error stopped it: the error.
    Error(String),
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Duration => f.write_str("duration"),
            StopReason::Interrupted => f.write_str("interrupted"),
            StopReason::Error(e) => write!(f, "{ERROR_REASON}{e}"),
        }
    }
}

impl From<StopReason> for String {
    fn from(r: StopReason) -> String {
        r.to_string()
    }
}

impl TryFrom<String> for StopReason {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        match s.as_str() {
            "duration" => Ok(StopReason::Duration),
            "interrupted" => Ok(StopReason::Interrupted),
            _ => match s.strip_prefix(ERROR_REASON) {
                Some(e) => Ok(StopReason::Error(e.to_string())),
                None => Err(format!(
                    "unknown stop reason '{s}': expected duration, interrupted or {ERROR_REASON}..."
                )),
            },
        }
    }
}

/// The trailer a writer that stopped on its own appends (at its duration,
/// interrupted, or after an I/O error).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckEnd {
    /// Records written.
    pub records: u64,
    /// Why the writer stopped.
    pub reason: StopReason,
}

/// A log as read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckLog {
    /// The header.
    pub header: AckHeader,
    /// Intact records, in file order.
    pub records: Vec<AckRecord>,
    /// The trailer, when the writer ended normally.
    pub end: Option<AckEnd>,
    /// A partial or damaged tail (the writer or its machine crashed mid-line), ignored: what it was.
    pub truncated_tail: Option<String>,
    /// Damage inside the log (a bad line followed by good ones, a gap in the sequence numbers).
    pub damage: Vec<String>,
}

fn seal(body: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(body.as_bytes());
    let _ = writeln!(ByteWriter(out), " *{:08x}", crc32c::crc32c(body.as_bytes()));
}

/// `fmt::Write` over a byte vector (no intermediate String).
struct ByteWriter<'a>(&'a mut Vec<u8>);
impl std::fmt::Write for ByteWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// Appends records to stdout or a file; a batch is written (and fsync'ed for
/// a file) by [`AckWriter::commit`].
pub struct AckWriter {
    out: Box<dyn Write + Send>,
    file: Option<File>,
    pending: Vec<u8>,
    line: String,
    next_seq: u64,
}

impl AckWriter {
    /// A writer to `file` (fdatasync'ed at every commit), or to `out` when `file` is None.
    pub fn new(file: Option<File>, out: Box<dyn Write + Send>) -> AckWriter {
        AckWriter {
            out,
            file,
            pending: Vec::with_capacity(1 << 16),
            line: String::with_capacity(160),
            next_seq: 1,
        }
    }

    /// A writer to the log file `f` (opened by `crate::outfile`, which
    /// decides what becomes of a file already there).
    pub fn to_file(f: File) -> std::io::Result<AckWriter> {
        let out = Box::new(f.try_clone()?);
        Ok(AckWriter::new(Some(f), out))
    }

    /// Writes the header line and commits it.
    pub fn header(&mut self, h: &AckHeader) -> std::io::Result<()> {
        let json = serde_json::to_string(h).map_err(std::io::Error::other)?;
        let body = format!("{HEADER_TAG} {ACKLOG_VERSION} {json}");
        seal(&body, &mut self.pending);
        self.commit()
    }

    /// Queues one record; its `seq` is assigned here. Returns the sequence number.
    pub fn push(&mut self, mut r: AckRecord) -> u64 {
        r.seq = self.next_seq;
        self.next_seq += 1;
        self.line.clear();
        let _ = write!(
            self.line,
            "{} {} {} {} {} {} {:08x} {} {}",
            r.seq,
            r.target,
            match r.kind {
                WriteKind::Page => 'p',
                WriteKind::Log => 'l',
            },
            r.offset,
            r.len,
            r.generation,
            r.checksum,
            r.mech.name(),
            r.ts_us
        );
        seal(&self.line, &mut self.pending);
        r.seq
    }

    /// Records pushed so far.
    pub fn records(&self) -> u64 {
        self.next_seq - 1
    }

    /// Writes the queued records and makes them durable (fdatasync for a file, flush for a pipe).
    pub fn commit(&mut self) -> std::io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.out.write_all(&self.pending)?;
        self.out.flush()?;
        if let Some(f) = &self.file {
            f.sync_data()?;
        }
        self.pending.clear();
        Ok(())
    }

    /// Appends the trailer of a writer that stopped on its own.
    pub fn end(&mut self, reason: StopReason) -> std::io::Result<()> {
        let e = AckEnd {
            records: self.records(),
            reason,
        };
        let json = serde_json::to_string(&e).map_err(std::io::Error::other)?;
        seal(&format!("{END_TAG} {json}"), &mut self.pending);
        self.commit()
    }
}

/// The body of an intact line (crc verified), or None.
fn unseal(line: &str) -> Option<&str> {
    let (body, crc) = line.rsplit_once(" *")?;
    if crc.len() != 8 {
        return None;
    }
    let crc = u32::from_str_radix(crc, 16).ok()?;
    (crc == crc32c::crc32c(body.as_bytes())).then_some(body)
}

fn parse_record(body: &str) -> Option<AckRecord> {
    let f: Vec<&str> = body.split(' ').collect();
    if f.len() != 9 {
        return None;
    }
    Some(AckRecord {
        seq: f[0].parse().ok()?,
        target: f[1].parse().ok()?,
        kind: match f[2] {
            "p" => WriteKind::Page,
            "l" => WriteKind::Log,
            _ => return None,
        },
        offset: f[3].parse().ok()?,
        len: f[4].parse().ok()?,
        generation: f[5].parse().ok()?,
        checksum: u32::from_str_radix(f[6], 16).ok()?,
        mech: Mechanism::parse(f[7])?,
        ts_us: f[8].parse().ok()?,
    })
}

/// Reads a log file.
pub fn read(path: &Path) -> Result<AckLog, AckLogError> {
    let bytes = std::fs::read(path).map_err(|cause| AckLogError::Read {
        path: path.display().to_string(),
        cause,
    })?;
    parse(&bytes, &path.display().to_string())
}

/// Parses the bytes of a log; `name` is used in messages.
pub fn parse(bytes: &[u8], name: &str) -> Result<AckLog, AckLogError> {
    // Complete lines end in '\n'; anything after the last one is a partial line.
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut lines: Vec<(usize, &[u8])> = Vec::new();
    let mut at = 0;
    for l in bytes[..complete].split(|&b| b == b'\n') {
        if at < complete {
            lines.push((at, l));
        }
        at += l.len() + 1;
    }
    let mut it = lines.iter();
    let header = parse_header(it.next().map(|(_, l)| *l), name)?;
    let mut body = Body::default();
    for (n, (off, raw)) in it.enumerate() {
        body.line(n + 2, *off, raw);
    }
    let Body {
        records,
        end,
        mut damage,
        bad,
        ..
    } = body;
    let mut tail = Vec::new();
    if let Some(&(l, o)) = bad.first() {
        tail.push(format!(
            "{} damaged line(s) from line {l} (byte {o}) to the end",
            bad.len()
        ));
    }
    if complete < bytes.len() {
        tail.push(format!(
            "a partial last line of {} byte(s) at byte {complete}",
            bytes.len() - complete
        ));
    }
    let mut truncated_tail = None;
    if let Some(e) = &end {
        // A writer that wrote its trailer stopped on its own: it was not cut
        // off mid-line, and the trailer counts what it wrote.
        if !tail.is_empty() {
            damage.push(format!(
                "{} after the writer's #end line: the log was changed after the writer stopped",
                tail.join(" and ")
            ));
        }
        let last = records.last().map_or(0, |r| r.seq);
        if e.records > last {
            damage.push(format!(
                "the writer's #end line counts {} acknowledgements, the log holds them up to {last}: records {}..{} are missing from the log",
                e.records,
                last + 1,
                e.records
            ));
        }
    } else if !tail.is_empty() {
        truncated_tail = Some(format!(
            "{}: the writer stopped in the middle of writing it (a crash of the writer or its machine); ignored",
            tail.join(" and ")
        ));
    }
    Ok(AckLog {
        header,
        records,
        end,
        truncated_tail,
        damage,
    })
}

/// The header line (`first`, the log's first complete line) of the log `name`.
fn parse_header(first: Option<&[u8]>, name: &str) -> Result<AckHeader, AckLogError> {
    let header = first
        .and_then(|l| std::str::from_utf8(l).ok())
        .and_then(unseal)
        .and_then(|b| b.strip_prefix(HEADER_TAG))
        .map(str::trim_start)
        .ok_or_else(|| AckLogError::NoHeader(name.to_string()))?;
    let (ver, json) = header
        .split_once(' ')
        .ok_or_else(|| AckLogError::NoHeader(name.to_string()))?;
    let ver: u32 = ver
        .parse()
        .map_err(|_| AckLogError::NoHeader(name.to_string()))?;
    if ver != ACKLOG_VERSION {
        return Err(AckLogError::Version(ver));
    }
    serde_json::from_str(json).map_err(|_| AckLogError::NoHeader(name.to_string()))
}

/// The lines after the header as they are read.
#[derive(Default)]
struct Body {
    records: Vec<AckRecord>,
    end: Option<AckEnd>,
    /// The line of the writer's trailer: nothing follows it in an intact log.
    end_line: Option<usize>,
    damage: Vec<String>,
    /// Bad lines seen since the last good one (line, byte): damage if a good
    /// line follows, a tail otherwise.
    bad: Vec<(usize, usize)>,
}

impl Body {
    /// Line `lineno`, at byte `off`.
    fn line(&mut self, lineno: usize, off: usize, raw: &[u8]) {
        let body = std::str::from_utf8(raw).ok().and_then(unseal);
        let rec = body.and_then(|b| {
            if let Some(j) = b.strip_prefix(END_TAG) {
                self.end = serde_json::from_str::<AckEnd>(j.trim_start()).ok();
                self.end_line = self.end.as_ref().map(|_| lineno);
                return self.end.as_ref().map(|_| None);
            }
            parse_record(b).map(Some)
        });
        let Some(r) = rec else {
            self.bad.push((lineno, off));
            return;
        };
        for (l, o) in self.bad.drain(..) {
            self.damage.push(format!(
                "line {l} (byte {o}) is damaged (its checksum does not match) and was not read; the acknowledgement it held is unknown"
            ));
        }
        if let (Some(r), Some(e)) = (r, self.end_line.filter(|&e| e < lineno)) {
            self.damage.push(format!(
                "line {lineno}: acknowledgement {} follows the writer's #end line (line {e}), after which the writer wrote nothing: not read (was another log appended?)",
                r.seq
            ));
        } else if let Some(r) = r {
            let want = self.records.last().map_or(1, |p: &AckRecord| p.seq + 1);
            if r.seq != want {
                self.damage.push(format!(
                    "line {lineno}: acknowledgement {} follows {}: records {}..{} are missing from the log",
                    r.seq,
                    want - 1,
                    want,
                    r.seq.saturating_sub(1)
                ));
            }
            self.records.push(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn header() -> AckHeader {
        AckHeader {
            run_seed: 7,
            page_size: 8192,
            started_us: 1,
            torn_protection: false,
            mix: "dsync=1".into(),
            profile: None,
            host: "h".into(),
            iosim_version: "0".into(),
            targets: vec![AckTarget {
                path: "/x y/f".into(),
                file_id: 1,
                region_start: 0,
                data_pages: 10,
                log_pages: 2,
            }],
        }
    }

    fn rec(i: u64) -> AckRecord {
        AckRecord {
            seq: 0,
            target: 0,
            kind: if i % 3 == 0 {
                WriteKind::Log
            } else {
                WriteKind::Page
            },
            offset: i * 8192,
            len: 8192,
            generation: i + 1,
            checksum: 0xdead_0000 + i as u32,
            mech: [Mechanism::Dsync, Mechanism::Fdatasync, Mechanism::Fsync][i as usize % 3],
            ts_us: 1_000_000 + i,
        }
    }

    fn log_of(n: u64, end: bool) -> Vec<u8> {
        let sink = Sink::default();
        let mut w = AckWriter::new(None, Box::new(sink.clone()));
        w.header(&header()).unwrap();
        for i in 0..n {
            w.push(rec(i));
            if i % 4 == 3 {
                w.commit().unwrap();
            }
        }
        w.commit().unwrap();
        if end {
            w.end(StopReason::Duration).unwrap();
        }
        let v = sink.0.lock().unwrap().clone();
        v
    }

    #[test]
    fn round_trip_in_order() {
        let b = log_of(10, true);
        let l = parse(&b, "t").unwrap();
        assert_eq!(l.header, header());
        assert_eq!(l.records.len(), 10);
        for (i, r) in l.records.iter().enumerate() {
            let mut want = rec(i as u64);
            want.seq = i as u64 + 1;
            assert_eq!(*r, want);
        }
        assert_eq!(l.end.as_ref().unwrap().records, 10);
        assert!(l.truncated_tail.is_none() && l.damage.is_empty());
    }

    #[test]
    fn truncated_last_record_is_reported_and_ignored() {
        let full = log_of(6, false);
        // Cut inside each byte of the last line: never misread, always reported.
        let last_start = full[..full.len() - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap()
            + 1;
        for cut in last_start + 1..full.len() {
            let l = parse(&full[..cut], "t").unwrap();
            assert_eq!(l.records.len(), 5, "cut at {cut}");
            assert!(l.truncated_tail.is_some(), "cut at {cut}");
            assert!(l.damage.is_empty());
        }
        // Cut exactly at a line end: a clean, shorter log.
        let l = parse(&full[..last_start], "t").unwrap();
        assert_eq!(l.records.len(), 5);
        assert!(l.truncated_tail.is_none());
        // Zeros after the last line (a filesystem that crashed mid-append) are a damaged tail.
        let mut z = full.clone();
        z.extend_from_slice(&[0u8; 100]);
        z.push(b'\n');
        let l = parse(&z, "t").unwrap();
        assert_eq!(l.records.len(), 6);
        assert!(l.truncated_tail.unwrap().contains("damaged line"));
    }

    #[test]
    fn corrupted_middle_record_is_damage_never_a_record() {
        let full = log_of(6, true);
        let text = String::from_utf8(full.clone()).unwrap();
        // Line 4 is record 3: change one digit of its offset.
        let lines: Vec<&str> = text.lines().collect();
        let start: usize = lines[..3].iter().map(|l| l.len() + 1).sum();
        let mut b = full.clone();
        let pos = start + lines[3].find(' ').unwrap() + 3;
        b[pos] = if b[pos] == b'9' { b'8' } else { b'9' };
        let l = parse(&b, "t").unwrap();
        assert_eq!(
            l.records.iter().map(|r| r.seq).collect::<Vec<_>>(),
            vec![1, 2, 4, 5, 6]
        );
        assert!(l.truncated_tail.is_none());
        assert_eq!(l.damage.len(), 2, "{:?}", l.damage);
        assert!(l.damage[0].contains("line 4"));
        assert!(l.damage[1].contains("records 3..3 are missing"));
        // A deleted line is a gap.
        let cut: String = lines
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 2)
            .map(|(_, l)| format!("{l}\n"))
            .collect();
        let l = parse(cut.as_bytes(), "t").unwrap();
        assert_eq!(l.damage.len(), 1);
        assert_eq!(l.records.len(), 5);
    }

    #[test]
    fn anything_after_the_trailer_is_damage() {
        let full = log_of(6, true);
        let text = String::from_utf8(full.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // The last record deleted: no gap, but the trailer counts 6.
        let cut: String = lines
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 6)
            .map(|(_, l)| format!("{l}\n"))
            .collect();
        let l = parse(cut.as_bytes(), "t").unwrap();
        assert_eq!(l.records.len(), 5);
        assert_eq!(l.damage.len(), 1, "{:?}", l.damage);
        assert!(l.damage[0].contains("records 6..6 are missing"));
        // A partial line after the trailer is damage, not a crash's tail.
        let mut b = full.clone();
        b.extend_from_slice(b"7 0 p 8192");
        let l = parse(&b, "t").unwrap();
        assert!(l.truncated_tail.is_none());
        assert!(
            l.damage[0].contains("after the writer's #end line"),
            "{:?}",
            l.damage
        );
        // A second log appended: its records are not read.
        let mut b = full.clone();
        b.extend_from_slice(&log_of(2, false));
        let l = parse(&b, "t").unwrap();
        assert_eq!(l.records.len(), 6);
        assert!(!l.damage.is_empty());
    }

    #[test]
    fn not_a_log_is_refused() {
        assert!(matches!(
            parse(b"hello\n", "x"),
            Err(AckLogError::NoHeader(_))
        ));
        assert!(matches!(parse(b"", "x"), Err(AckLogError::NoHeader(_))));
        let mut b = log_of(1, false);
        b[3] ^= 1;
        assert!(matches!(parse(&b, "x"), Err(AckLogError::NoHeader(_))));
    }

    #[test]
    fn file_writer_syncs_and_reads_back() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("acks.log");
        let mut w = AckWriter::to_file(File::create(&p).unwrap()).unwrap();
        w.header(&header()).unwrap();
        w.push(rec(1));
        w.commit().unwrap();
        let l = read(&p).unwrap();
        assert_eq!(l.records.len(), 1);
        assert!(l.end.is_none());
    }

    #[test]
    fn stop_reasons_keep_their_words() {
        for (r, word) in [
            (StopReason::Duration, "duration"),
            (StopReason::Interrupted, "interrupted"),
            (StopReason::Error("EIO".into()), "error: EIO"),
        ] {
            assert_eq!(r.to_string(), word);
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<StopReason>(&json).unwrap(), r);
        }
        assert!(serde_json::from_str::<StopReason>("\"bored\"").is_err());
        // The trailer's line is what it always was.
        let e = AckEnd {
            records: 3,
            reason: StopReason::Duration,
        };
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"records":3,"reason":"duration"}"#
        );
    }
}
