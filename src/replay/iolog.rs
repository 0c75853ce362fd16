//! fio's I/O logs (`write_iolog=`, replayed by fio with `read_iolog=`).
//!
//! ```text
//! fio version 2 iolog                 fio version 3 iolog
//! /dev/sdb add                        21 /dev/sdb add
//! /dev/sdb open                       192 /dev/sdb open
//! /dev/sdb write 0 4096               200 /dev/sdb write 0 4096
//! /dev/sdb wait 1500 0                301 /dev/sdb read 4096 8192
//! /dev/sdb read 4096 8192             ...
//! /dev/sdb close                      1037840 /dev/sdb close
//! ```
//!
//! Version 3 starts each line with the microseconds since the log began
//! (fio's `utime_since_now` when it wrote the line). Version 2 has no times:
//! its `wait` lines carry a delay in microseconds (in the offset field) that
//! adds up to the times here, so a version 2 log without waits replays at
//! time 0 throughout (as fast as the queue depth allows). `trim`, `sync`,
//! `datasync` and `sync_file_range` are counted and not replayed.

use std::path::Path;

use super::events::{EventAction, EventOp, IoFlags, TraceEvent};
use super::{Op, Skipped, TraceError, TraceIo};

/// The version of an iolog from its first line, if it is one.
pub fn version(text: &str) -> Option<Result<u8, String>> {
    let first = text.lines().find(|l| !l.trim().is_empty())?.trim();
    let v = first.strip_prefix("fio version ")?.strip_suffix(" iolog")?;
    Some(match v {
        "2" => Ok(2),
        "3" => Ok(3),
        other => Err(format!(
            "fio iolog version {other} is not one iosim reads (versions 2 and 3 are)"
        )),
    })
}

/// One line of an iolog that matters to a reader.
enum Entry<'a> {
    /// A read or write.
    Io {
        /// When, nanoseconds.
        at_ns: u64,
        /// The file it names.
        file: &'a str,
        /// Read or write.
        op: Op,
        /// Byte offset.
        offset: u64,
        /// Bytes (above 0).
        len: u32,
    },
    /// A `sync`, `datasync` (`flush`: true) or `sync_file_range` (false).
    Sync {
        /// When, nanoseconds.
        at_ns: u64,
        /// The file it names.
        file: &'a str,
        /// True when it flushes the device's cache (fsync, fdatasync).
        flush: bool,
    },
}

/// Walks the lines of an iolog, handing each I/O and sync to `on`
/// (counting in `skipped` what is not replayed); returns the version.
fn walk<'a>(
    text: &'a str,
    path: &Path,
    skipped: &mut Skipped,
    mut on: impl FnMut(Entry<'a>),
) -> Result<u8, TraceError> {
    let bad = |line: usize, reason: String| TraceError::BadLine {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let ver = match version(text) {
        Some(Ok(v)) => v,
        Some(Err(e)) => return Err(bad(1, e)),
        None => {
            return Err(bad(
                1,
                "the first line is not 'fio version 2 iolog' or 'fio version 3 iolog'".into(),
            ))
        }
    };
    let mut clock_ns = 0u64;
    let mut header_seen = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.is_empty() {
            continue;
        }
        if !header_seen {
            header_seen = true;
            continue;
        }
        let (at_ns, t) = if ver == 3 {
            (timestamp_ns(t[0]).map_err(|e| bad(n, e))?, &t[1..])
        } else {
            (clock_ns, &t[..])
        };
        let (file, action) = match t {
            [file, action, ..] => (*file, *action),
            _ => return Err(bad(n, "a line needs a file name and an action".into())),
        };
        let number = |k: usize, what: &str| -> Result<u64, TraceError> {
            let s = t
                .get(k)
                .ok_or_else(|| bad(n, format!("'{action}' needs {what}")))?;
            s.parse()
                .map_err(|_| bad(n, format!("'{s}' is not {what}")))
        };
        let op = match classify(action, skipped).map_err(|e| bad(n, e))? {
            Action::Io(op) => op,
            Action::Wait => {
                if ver == 2 {
                    let us = number(2, "a delay in microseconds")?;
                    clock_ns = clock_ns.saturating_add(us.saturating_mul(1000));
                }
                continue;
            }
            Action::Sync(flush) => {
                on(Entry::Sync { at_ns, file, flush });
                continue;
            }
            Action::Skip => continue,
        };
        let offset = number(2, "a byte offset")?;
        let len = number(3, "a length in bytes")?;
        if len == 0 {
            skipped.no_data += 1;
            continue;
        }
        let len = u32::try_from(len)
            .map_err(|_| bad(n, format!("{len} bytes is larger than one I/O can be")))?;
        if offset.checked_add(u64::from(len)).is_none() {
            return Err(bad(n, format!("offset {offset} is past any file")));
        }
        on(Entry::Io {
            at_ns,
            file,
            op,
            offset,
            len,
        });
    }
    Ok(ver)
}

/// Appends the I/O of an iolog to `out` (times in nanoseconds) and the
/// names of the files it uses to `files`.
pub fn parse(
    text: &str,
    path: &Path,
    out: &mut Vec<TraceIo>,
    skipped: &mut Skipped,
    files: &mut Vec<String>,
) -> Result<u8, TraceError> {
    walk(text, path, skipped, |e| {
        if let Entry::Io {
            at_ns,
            file,
            op,
            offset,
            len,
        } = e
        {
            if !files.iter().any(|f| f == file) && files.len() < 64 {
                files.push(file.to_string());
            }
            out.push(TraceIo {
                at_ns,
                offset,
                len,
                op,
            });
        }
    })
}

/// Appends every read, write and flushing sync (`sync`, `datasync`) of an
/// iolog to `out` as events of the application's layer (for fingerprints,
/// not replay); `files` gathers the files named, and each event's `source`
/// indexes them. Returns the version.
pub fn events(
    text: &str,
    path: &Path,
    out: &mut Vec<TraceEvent>,
    files: &mut Vec<String>,
) -> Result<u8, TraceError> {
    let index = |files: &mut Vec<String>, file: &str| -> u32 {
        let k = match files.iter().position(|f| f == file) {
            Some(k) => k,
            None => {
                files.push(file.to_string());
                files.len() - 1
            }
        };
        u32::try_from(k).unwrap_or(u32::MAX)
    };
    walk(text, path, &mut Skipped::default(), |e| match e {
        Entry::Io {
            at_ns,
            file,
            op,
            offset,
            len,
        } => {
            let source = index(files, file);
            out.push(TraceEvent {
                at_ns,
                action: EventAction::Submit,
                op: if op == Op::Write {
                    EventOp::Write
                } else {
                    EventOp::Read
                },
                offset,
                len,
                flags: IoFlags::default(),
                source,
                pid: 0,
            });
        }
        Entry::Sync {
            at_ns,
            file,
            flush: true,
        } => {
            let source = index(files, file);
            out.push(TraceEvent {
                at_ns,
                action: EventAction::Submit,
                op: EventOp::Flush,
                offset: 0,
                len: 0,
                flags: IoFlags {
                    preflush: true,
                    ..IoFlags::default()
                },
                source,
                pid: 0,
            });
        }
        Entry::Sync { flush: false, .. } => {}
    })
}

/// A version 3 line's timestamp (microseconds) in nanoseconds.
fn timestamp_ns(field: &str) -> Result<u64, String> {
    let us: u64 = field
        .parse()
        .map_err(|_| format!("'{field}' is not a timestamp in microseconds"))?;
    us.checked_mul(1000)
        .ok_or_else(|| format!("timestamp {us} is too large"))
}

/// What a line's action asks of the replay.
enum Action {
    /// An I/O to replay.
    Io(Op),
    /// A delay (version 2).
    Wait,
    /// A sync (counted in `skipped`): true when it flushes (fsync, fdatasync).
    Sync(bool),
    /// Nothing: a file's add, open or close, or a trim (counted in `skipped`).
    Skip,
}

/// The action of a line; a trim or sync is counted in `skipped`.
fn classify(action: &str, skipped: &mut Skipped) -> Result<Action, String> {
    Ok(match action {
        "add" | "open" | "close" => Action::Skip,
        "read" => Action::Io(Op::Read),
        "write" => Action::Io(Op::Write),
        "trim" => {
            skipped.discards += 1;
            Action::Skip
        }
        "sync" | "datasync" | "sync_file_range" => {
            skipped.syncs += 1;
            Action::Sync(action != "sync_file_range")
        }
        "wait" => Action::Wait,
        other => {
            return Err(format!("unknown action '{other}' (fio logs read, write, trim, sync, datasync, sync_file_range, wait, add, open, close)"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_2_with_waits() {
        let log = "fio version 2 iolog\n/f add\n/f open\n/f write 0 4096\n/f wait 1500 0\n/f read 8192 8192\n/f sync 0 0\n/f trim 0 4096\n/f close\n";
        let (mut out, mut sk, mut files) = (Vec::new(), Skipped::default(), Vec::new());
        assert_eq!(
            parse(log, Path::new("l"), &mut out, &mut sk, &mut files).unwrap(),
            2
        );
        assert_eq!(
            out,
            vec![
                TraceIo {
                    at_ns: 0,
                    offset: 0,
                    len: 4096,
                    op: Op::Write
                },
                TraceIo {
                    at_ns: 1_500_000,
                    offset: 8192,
                    len: 8192,
                    op: Op::Read
                },
            ]
        );
        assert_eq!((sk.syncs, sk.discards), (1, 1));
        assert_eq!(files, vec!["/f"]);
    }

    #[test]
    fn version_3_timestamps_are_microseconds() {
        let log = "fio version 3 iolog\n21 /f add\n200 /f read 1011712 65536\n301 /f write 12419072 8192\n";
        let (mut out, mut sk, mut files) = (Vec::new(), Skipped::default(), Vec::new());
        assert_eq!(
            parse(log, Path::new("l"), &mut out, &mut sk, &mut files).unwrap(),
            3
        );
        assert_eq!(out[0].at_ns, 200_000);
        assert_eq!(
            out[1],
            TraceIo {
                at_ns: 301_000,
                offset: 12419072,
                len: 8192,
                op: Op::Write
            }
        );
    }

    #[test]
    fn bad_lines_name_the_line() {
        let run = |log: &str| {
            let (mut out, mut sk, mut files) = (Vec::new(), Skipped::default(), Vec::new());
            parse(log, Path::new("x.log"), &mut out, &mut sk, &mut files)
                .unwrap_err()
                .to_string()
        };
        let e = run("fio version 3 iolog\n10 /f read 0 4096\nabc /f read 0 4096\n");
        assert!(e.contains("'x.log' line 3") && e.contains("abc"), "{e}");
        let e = run("fio version 2 iolog\n/f frobnicate 0 1\n");
        assert!(e.contains("line 2") && e.contains("frobnicate"), "{e}");
        let e = run("fio version 2 iolog\n/f read 0\n");
        assert!(e.contains("a length"), "{e}");
        let e = run("fio version 4 iolog\n");
        assert!(e.contains("version 4"), "{e}");
        let e = run("fio version 2 iolog\n/f read 0 99999999999\n");
        assert!(e.contains("larger than one I/O"), "{e}");
        assert!(version("hello").is_none());
    }
}
