//! Every event of a trace with its flags, for statistics (`iosim
//! fingerprint`) rather than replay: a blktrace's or blkparse dump's queue
//! (Q), issue (D) and complete (C) events with their RWBS flags (preflush,
//! FUA, sync, metadata), and a fio iolog's reads, writes and flushing syncs.
//!
//! The types; [`super::load_events`] reads them with the replay's readers
//! ([`super::blktrace`], [`super::blkparse`], [`super::iolog`]), the same
//! file discovery and errors; the replay's own [`super::Trace`] is
//! untouched by this.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::TraceFormat;

/// Where in the I/O path an event was seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventAction {
    /// blktrace Q: a bio as the file system or application submitted it.
    Queue,
    /// blktrace D: a request as dispatched to the driver.
    Issue,
    /// blktrace C: a request completed.
    Complete,
    /// A fio iolog's I/O, as fio submitted it (no block layer below).
    Submit,
}

/// What an event does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventOp {
    /// Reads data.
    Read,
    /// Writes data.
    Write,
    /// Discards (trims).
    Discard,
    /// Moves no data: an empty flush (`FN`), or a fio `sync`/`datasync`.
    Flush,
}

/// blktrace's flags of an event (the letters around RWBS's direction).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoFlags {
    /// `F` before the direction: the device's cache is flushed first
    /// (REQ_PREFLUSH; an empty flush has only this).
    pub preflush: bool,
    /// `F` after the direction: forced unit access (REQ_FUA).
    pub fua: bool,
    /// `S`: synchronous.
    pub sync: bool,
    /// `M`: metadata.
    pub meta: bool,
}

/// One event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    /// Nanoseconds (from the trace's first event once read by [`super::load_events`]).
    pub at_ns: u64,
    /// Where it was seen.
    pub action: EventAction,
    /// What it does.
    pub op: EventOp,
    /// Byte offset on the device (0 for a flush without one).
    pub offset: u64,
    /// Bytes (0 for a flush).
    pub len: u32,
    /// Flags.
    pub flags: IoFlags,
    /// Index into [`EventLog::sources`]: the device (blktrace) or file (iolog).
    pub source: u32,
    /// The process that was running when it was recorded (0: not known, as
    /// in a fio iolog).
    pub pid: u32,
}

/// Every event of a trace.
#[derive(Clone, Debug)]
pub struct EventLog {
    /// What the user named.
    pub path: PathBuf,
    /// The files read.
    pub files: Vec<PathBuf>,
    /// Format.
    pub format: TraceFormat,
    /// Devices (`8,0`) or the iolog's files, as events' `source` index them.
    pub sources: Vec<String>,
    /// The events, sorted by time (stable), times from the first event.
    pub events: Vec<TraceEvent>,
    /// Things the user should know.
    pub notes: Vec<String>,
}

impl EventLog {
    /// True when the trace has events of `action`.
    pub fn has(&self, action: EventAction) -> bool {
        self.events.iter().any(|e| e.action == action)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{blkparse, blktrace, load_events, parse_events};
    use std::path::Path;

    #[test]
    fn blkparse_flags_and_layers() {
        let dump = "\
  8,0 0 1 0.000000000 10 Q FWFS 100 + 8 [db]
  8,0 0 2 0.000001000 10 D FN [kworker]
  8,0 0 3 0.000002000 10 C FN [0]
  8,0 0 4 0.000003000 10 D WFS 100 + 8 [kworker]
  8,0 0 5 0.000004000 10 C WFS 100 + 8 [0]
  8,0 0 6 0.000005000 10 Q FWS [jbd2]
  8,0 0 7 0.000006000 10 Q RM 8 + 8 [db]
  8,0 0 8 0.000007000 10 G RM 8 + 8 [db]
";
        let log = parse_events(Path::new("d"), &[(Path::new("d"), dump.as_bytes())]).unwrap();
        assert_eq!(log.format, TraceFormat::Blkparse);
        assert_eq!(log.sources, vec!["8,0"]);
        assert_eq!(log.events.len(), 7);
        let e = log.events[0];
        assert_eq!(
            (e.action, e.op, e.offset, e.len),
            (EventAction::Queue, EventOp::Write, 51200, 4096)
        );
        assert!(e.flags.preflush && e.flags.fua && e.flags.sync);
        let f = log.events[1];
        assert_eq!((f.action, f.op), (EventAction::Issue, EventOp::Flush));
        assert!(f.flags.preflush && !f.flags.fua);
        assert_eq!(log.events[2].action, EventAction::Complete);
        let d = log.events[3];
        assert!(!d.flags.preflush && d.flags.fua);
        let j = log.events[5];
        assert_eq!((j.op, j.len), (EventOp::Flush, 0));
        assert!(j.flags.preflush);
        assert!(log.events[6].flags.meta);
        assert_eq!(blkparse::rwbs("FF").0, EventOp::Flush);
        assert_eq!(blkparse::rwbs("DS").0, EventOp::Discard);
        assert!(!blkparse::rwbs("R").1.fua);
    }

    #[test]
    fn iolog_syncs_are_flushes() {
        let log = "fio version 3 iolog\n1 /a add\n2 /a open\n10 /a write 0 4096\n11 /b read 0 8192\n12 /a datasync 0 0\n13 /a sync_file_range 0 0\n14 /b sync 0 0\n";
        let l = parse_events(Path::new("l"), &[(Path::new("l"), log.as_bytes())]).unwrap();
        assert_eq!(l.format, TraceFormat::FioIologV3);
        assert_eq!(l.sources, vec!["/a", "/b"]);
        let kinds: Vec<(EventOp, u32)> = l.events.iter().map(|e| (e.op, e.source)).collect();
        assert_eq!(
            kinds,
            vec![
                (EventOp::Write, 0),
                (EventOp::Read, 1),
                (EventOp::Flush, 0),
                (EventOp::Flush, 1)
            ]
        );
        assert_eq!(l.events[0].at_ns, 0);
        assert_eq!(l.events[3].at_ns, 4000);
    }

    #[test]
    fn blktrace_records_carry_flags() {
        use blktrace::{encode, Record};
        let rec = |time, sector, bytes, action| Record {
            big_endian: false,
            sequence: 1,
            time,
            sector,
            bytes,
            action,
            pid: 0,
            device: (8 << 20) | 16,
            cpu: 0,
            pdu_len: 0,
        };
        let mut data = Vec::new();
        for r in [
            rec(50, 8, 4096, 1 | ((2 | 4 | (1 << 15)) << 16)),
            rec(60, 0, 0, 7 | (4 << 16)),
            rec(70, 8, 4096, 8 | (2 << 16)),
            rec(80, 8, 4096, 4 | (2 << 16)),
        ] {
            data.extend_from_slice(&encode(&r));
        }
        let l = parse_events(Path::new("t"), &[(Path::new("t"), &data)]).unwrap();
        assert_eq!(l.sources, vec!["8,16"]);
        assert_eq!(l.events.len(), 3);
        let q = l.events[0];
        assert_eq!(
            (q.action, q.op, q.at_ns),
            (EventAction::Queue, EventOp::Write, 0)
        );
        assert!(q.flags.preflush && q.flags.fua);
        assert_eq!(
            (l.events[1].action, l.events[1].op),
            (EventAction::Issue, EventOp::Flush)
        );
        assert_eq!(l.events[2].action, EventAction::Complete);
    }

    #[test]
    fn empty_and_missing_traces_are_errors() {
        let e = parse_events(
            Path::new("x"),
            &[(Path::new("x"), b"  8,0 0 1 0.0 1 Q FWS [j]\n")],
        )
        .unwrap_err();
        assert!(e.to_string().contains("no read or write"), "{e}");
        // A capture of an idle device: per-CPU files, all empty.
        let e = parse_events(
            Path::new("peak"),
            &[
                (Path::new("peak.blktrace.0"), b""),
                (Path::new("peak.blktrace.1"), b""),
            ],
        )
        .unwrap_err();
        assert!(e.to_string().contains("nothing was traced"), "{e}");
        let e = crate::replay::parse_files(
            Path::new("peak"),
            &[(Path::new("peak.blktrace.0"), b"")],
            crate::replay::BlkEvent::Queue,
        )
        .unwrap_err();
        assert!(e.to_string().contains("nothing was traced"), "{e}");
        let e = load_events(Path::new("/nonexistent/trace")).unwrap_err();
        assert!(e.to_string().contains("no trace at"), "{e}");
    }
}
