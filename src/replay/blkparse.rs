//! `blkparse` text dumps in blkparse's default output format:
//!
//! ```text
//!   7,0    0        1     0.000000000  3649  Q  RS 1976 + 128 [fio]
//!   dev  cpu seq      seconds.nanos     pid act rwbs sector + sectors [command]
//! ```
//!
//! Event lines start with `MAJOR,MINOR`; everything else (the per-CPU and
//! total summaries blkparse prints at the end, blank lines) is skipped. An
//! event line that cannot be read is an error naming the file and line.

use std::path::Path;

use super::events::{EventAction, EventOp, IoFlags, TraceEvent};
use super::{BlkEvent, Op, Skipped, TraceError, TraceIo};

/// True when `line` starts like a blkparse event line (`8,16 ...`).
pub fn is_event_line(line: &str) -> bool {
    let Some(first) = line.split_whitespace().next() else {
        return false;
    };
    let mut parts = first.split(',');
    let ok =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    ok(parts.next()) && ok(parts.next()) && parts.next().is_none()
}

/// Seconds with up to 9 decimals (`12.000012345`) as nanoseconds, exactly.
fn parse_time(s: &str) -> Option<u64> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if whole.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = whole.parse().ok()?;
    let mut nanos: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..9 {
        nanos *= 10;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(nanos)
}

/// An event line split in fields, its time read (`None`: not an event line).
fn fields<'a>(
    line: &'a str,
    i: usize,
    path: &Path,
) -> Result<Option<(Vec<&'a str>, u64)>, TraceError> {
    if !is_event_line(line) {
        return Ok(None);
    }
    let bad = |reason: String| TraceError::BadLine {
        path: path.to_path_buf(),
        line: i + 1,
        reason,
    };
    let t: Vec<&str> = line.split_whitespace().collect();
    if t.len() < 7 {
        return Err(bad(format!(
            "an event line needs at least 7 fields (device cpu sequence time pid action rwbs), found {}",
            t.len()
        )));
    }
    let at_ns =
        parse_time(t[3]).ok_or_else(|| bad(format!("'{}' is not a time in seconds", t[3])))?;
    Ok(Some((t, at_ns)))
}

/// The `SECTOR + SECTORS` of an event line's fields, as numbers (`None`:
/// the line has none, as a flush or a SCSI command's line).
fn sector_fields(t: &[&str], i: usize, path: &Path) -> Result<Option<(u64, u64)>, TraceError> {
    if t.len() < 10 || t[8] != "+" {
        return Ok(None);
    }
    let bad = |reason: String| TraceError::BadLine {
        path: path.to_path_buf(),
        line: i + 1,
        reason,
    };
    let sector: u64 = t[7]
        .parse()
        .map_err(|_| bad(format!("'{}' is not a sector number", t[7])))?;
    let sectors: u64 = t[9]
        .parse()
        .map_err(|_| bad(format!("'{}' is not a sector count", t[9])))?;
    Ok(Some((sector, sectors)))
}

/// Byte offset and length of `sectors` sectors at `sector`.
fn byte_range(sector: u64, sectors: u64, i: usize, path: &Path) -> Result<(u64, u32), TraceError> {
    let bad = |reason: String| TraceError::BadLine {
        path: path.to_path_buf(),
        line: i + 1,
        reason,
    };
    let len = sectors
        .checked_mul(512)
        .and_then(|b| u32::try_from(b).ok())
        .ok_or_else(|| bad(format!("{sectors} sectors is larger than one I/O can be")))?;
    let offset = sector
        .checked_mul(512)
        .ok_or_else(|| bad(format!("sector {sector} is past any device")))?;
    Ok((offset, len))
}

/// Appends the I/O of a blkparse dump (event `want`) to `out`; returns the
/// number of event lines seen (0: this is not a blkparse dump).
pub fn parse(
    text: &str,
    path: &Path,
    want: BlkEvent,
    out: &mut Vec<TraceIo>,
    skipped: &mut Skipped,
    devices: &mut Vec<String>,
) -> Result<u64, TraceError> {
    let want_act = match want {
        BlkEvent::Queue => "Q",
        BlkEvent::Issue => "D",
    };
    let mut events = 0u64;
    for (i, line) in text.lines().enumerate() {
        let Some((t, at_ns)) = fields(line, i, path)? else {
            continue;
        };
        events += 1;
        if t[5] != want_act {
            skipped.other_events += 1;
            continue;
        }
        let rwbs = t[6];
        // blkparse prints "SECTOR + SECTORS" for block I/O; anything else
        // (a SCSI command's bytes in parentheses) moves no block data.
        let Some((sector, sectors)) = sector_fields(&t, i, path)? else {
            skipped.no_data += 1;
            continue;
        };
        let op = if rwbs.contains('D') {
            skipped.discards += 1;
            continue;
        } else if rwbs.contains('W') {
            Op::Write
        } else if rwbs.contains('R') {
            Op::Read
        } else {
            skipped.no_data += 1;
            continue;
        };
        if sectors == 0 {
            skipped.no_data += 1;
            continue;
        }
        let (offset, len) = byte_range(sector, sectors, i, path)?;
        if !devices.iter().any(|d| d == t[0]) && devices.len() < 64 {
            devices.push(t[0].to_string());
        }
        out.push(TraceIo {
            at_ns,
            offset,
            len,
            op,
        });
    }
    Ok(events)
}

/// What blktrace's RWBS letters say (`FWFS`: a preflush, a write, FUA,
/// sync): the operation and its flags. blkparse writes an `F` before the
/// direction for a preflush (REQ_PREFLUSH), then `D` (discard, `DE`
/// secure), `W`, `R` or `N` (no data), then `F` for FUA, then `A`, `S`,
/// `M`; the kernel's own tracepoints write `F` for the direction of an
/// empty flush (`FF`).
pub fn rwbs(s: &str) -> (EventOp, IoFlags) {
    let b = s.as_bytes();
    let mut k = 0;
    let mut flags = IoFlags::default();
    if b.first() == Some(&b'F') {
        flags.preflush = true;
        k = 1;
    }
    let op = match b.get(k) {
        Some(b'D') => {
            k += 1;
            if b.get(k) == Some(&b'E') {
                k += 1;
            }
            EventOp::Discard
        }
        Some(b'W') => {
            k += 1;
            EventOp::Write
        }
        Some(b'R') => {
            k += 1;
            EventOp::Read
        }
        Some(b'N') | Some(b'F') => {
            k += 1;
            EventOp::Flush
        }
        _ => EventOp::Flush,
    };
    if b.get(k) == Some(&b'F') {
        flags.fua = true;
        k += 1;
    }
    for c in &b[k.min(b.len())..] {
        match c {
            b'S' => flags.sync = true,
            b'M' => flags.meta = true,
            _ => {}
        }
    }
    (op, flags)
}

/// Appends every queue (Q), issue (D) and complete (C) event of a blkparse
/// dump to `out`, with its flags (for fingerprints, not replay); `devices`
/// gathers the devices, named as blkparse does (`8,0`), and each event's
/// `source` indexes them. Returns the number of event lines seen.
pub fn events(
    text: &str,
    path: &Path,
    out: &mut Vec<TraceEvent>,
    devices: &mut Vec<String>,
) -> Result<u64, TraceError> {
    let mut n = 0u64;
    for (i, line) in text.lines().enumerate() {
        let Some((t, at_ns)) = fields(line, i, path)? else {
            continue;
        };
        n += 1;
        let action = match t[5] {
            "Q" => EventAction::Queue,
            "D" => EventAction::Issue,
            "C" => EventAction::Complete,
            _ => continue,
        };
        let (op, flags) = rwbs(t[6]);
        let (offset, len) = match sector_fields(&t, i, path)? {
            Some((sector, sectors)) => byte_range(sector, sectors, i, path)?,
            None => (0, 0),
        };
        // A read or write without data is a flush as far as the device goes.
        let op = match op {
            EventOp::Read | EventOp::Write if len == 0 => EventOp::Flush,
            op => op,
        };
        let source = match devices.iter().position(|d| d == t[0]) {
            Some(k) => k,
            None => {
                devices.push(t[0].to_string());
                devices.len() - 1
            }
        };
        out.push(TraceEvent {
            at_ns,
            action,
            op,
            offset,
            len,
            flags,
            source: u32::try_from(source).unwrap_or(u32::MAX),
            pid: t[4].parse().unwrap_or(0),
        });
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "\
  7,0    0        1     0.000000000  3649  Q  RS 1976 + 128 [fio]
  7,0    0        2     0.000019691  3649  G  RS 1976 + 128 [fio]
  7,0    0        3     0.000021522  3649  P   N [fio]
  7,0    1        1     0.5  3649  Q  WS 8 + 8 [fio]
  7,0    1        2     0.6  3649  Q  DS 64 + 8 [fio]
  7,0    1        3     0.7  3649  Q FWS 0 + 0 [jbd2]
  7,0    1        4     1.000000001  3649  D  WS 8 + 8 [fio]
CPU0 (loopmix):
 Reads Queued:         126,     1792KiB	 Writes Queued:         114,     1788KiB
Events (loopmix): 1440 entries
";

    #[test]
    fn events_and_summaries() {
        let (mut out, mut sk, mut dev) = (Vec::new(), Skipped::default(), Vec::new());
        let n = parse(
            DUMP,
            Path::new("d.txt"),
            BlkEvent::Queue,
            &mut out,
            &mut sk,
            &mut dev,
        )
        .unwrap();
        assert_eq!(n, 7);
        assert_eq!(
            out,
            vec![
                TraceIo {
                    at_ns: 0,
                    offset: 1976 * 512,
                    len: 65536,
                    op: Op::Read
                },
                TraceIo {
                    at_ns: 500_000_000,
                    offset: 4096,
                    len: 4096,
                    op: Op::Write
                },
            ]
        );
        assert_eq!((sk.discards, sk.no_data, sk.other_events), (1, 1, 3));
        let mut out = Vec::new();
        parse(
            DUMP,
            Path::new("d.txt"),
            BlkEvent::Issue,
            &mut out,
            &mut sk,
            &mut dev,
        )
        .unwrap();
        assert_eq!(
            out,
            vec![TraceIo {
                at_ns: 1_000_000_001,
                offset: 4096,
                len: 4096,
                op: Op::Write
            }]
        );
        assert_eq!(parse_time("12"), Some(12_000_000_000));
        assert_eq!(parse_time("1.5"), Some(1_500_000_000));
        assert_eq!(parse_time("1.1234567891"), None);
        assert_eq!(parse_time("-1.0"), None);
    }

    #[test]
    fn bad_lines_name_the_line() {
        let (mut out, mut sk, mut dev) = (Vec::new(), Skipped::default(), Vec::new());
        let text = "  7,0 0 1 0.0 1 Q R 8 + 8 [a]\n  7,0 0 2 zero 1 Q R 8 + 8 [a]\n";
        let e = parse(
            text,
            Path::new("d.txt"),
            BlkEvent::Queue,
            &mut out,
            &mut sk,
            &mut dev,
        )
        .unwrap_err();
        assert!(e.to_string().contains("'d.txt' line 2"), "{e}");
        let text = "  7,0 0 1 0.0 1 Q R eight + 8 [a]\n";
        let e = parse(
            text,
            Path::new("d.txt"),
            BlkEvent::Queue,
            &mut out,
            &mut sk,
            &mut dev,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("line 1") && e.to_string().contains("eight"),
            "{e}"
        );
        let text = "  7,0 0 1\n";
        assert!(parse(
            text,
            Path::new("d.txt"),
            BlkEvent::Queue,
            &mut out,
            &mut sk,
            &mut dev
        )
        .is_err());
        assert!(!is_event_line("CPU0 (7,0):"));
        assert!(!is_event_line("7,"));
        assert!(is_event_line(" 259,1 3 4"));
    }
}
