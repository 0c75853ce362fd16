//! blktrace's binary records (`struct blk_io_trace`, blktrace's public
//! format, also what the kernel's blk tracer writes in tracefs with the
//! `bin` option): 48 bytes of header, then `pdu_len` bytes of payload.
//!
//! ```text
//! offset  size  field
//!      0     4  magic     0x65617400 | version (7)
//!      4     4  sequence  per-CPU event number
//!      8     8  time      nanoseconds
//!     16     8  sector    512-byte sectors from the start of the device
//!     24     4  bytes     transfer length
//!     28     4  action    low 16 bits: what happened (Q=1 ... D=7 ...);
//!                         high 16 bits: category (READ, WRITE, DISCARD, NOTIFY...)
//!     32     4  pid
//!     36     4  device    dev_t
//!     40     4  cpu
//!     44     2  error
//!     46     2  pdu_len
//! ```
//!
//! The records are written in the tracing machine's byte order; the magic
//! tells which (blkparse does the same), so a trace taken on a big-endian
//! machine reads here too.

use std::path::Path;

use super::events::{EventAction, EventOp, IoFlags, TraceEvent};
use super::{BlkEvent, Op, Skipped, TraceError, TraceIo};

/// Bytes in a record header.
pub const HEADER: usize = 48;
/// `BLK_IO_TRACE_MAGIC` without its version byte.
pub const MAGIC: u32 = 0x6561_7400;
/// The record version blktrace 1.x and the kernel write.
pub const VERSION: u8 = 7;

/// `__BLK_TA_QUEUE`: a bio handed to the block layer.
const TA_QUEUE: u32 = 1;
/// `__BLK_TA_ISSUE`: a request sent to the driver.
const TA_ISSUE: u32 = 7;
/// `__BLK_TA_COMPLETE`: a request the driver completed.
const TA_COMPLETE: u32 = 8;
/// Category bits (action >> 16).
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_SYNC: u32 = 1 << 3;
const TC_META: u32 = 1 << 12;
const TC_FUA: u32 = 1 << 15;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;

/// One record's header, in host order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Byte order of the file (true: big-endian).
    pub big_endian: bool,
    /// Per-CPU sequence number.
    pub sequence: u32,
    /// Nanoseconds.
    pub time: u64,
    /// 512-byte sector.
    pub sector: u64,
    /// Bytes.
    pub bytes: u32,
    /// Action (low 16 bits) and category (high 16 bits).
    pub action: u32,
    /// The process that was running (blktrace's pid).
    pub pid: u32,
    /// dev_t of the traced device.
    pub device: u32,
    /// CPU the event happened on.
    pub cpu: u32,
    /// Length of the payload after the header.
    pub pdu_len: u16,
}

/// True when `data` starts with a blktrace record's magic (either byte order).
pub fn looks_like(data: &[u8]) -> bool {
    data.len() >= 4 && {
        let m = [data[0], data[1], data[2], data[3]];
        u32::from_le_bytes(m) & 0xffff_ff00 == MAGIC || u32::from_be_bytes(m) & 0xffff_ff00 == MAGIC
    }
}

/// Walks the records of one file: each header and its whole bytes (header
/// and payload), or a typed error naming the file, the record and its byte.
pub struct Records<'a> {
    data: &'a [u8],
    pos: usize,
    index: u64,
    path: &'a Path,
}

impl<'a> Records<'a> {
    /// Records of `data`, read from `path` (named in errors).
    pub fn new(data: &'a [u8], path: &'a Path) -> Records<'a> {
        Records {
            data,
            pos: 0,
            index: 0,
            path,
        }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<(Record, &'a [u8]), TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = &self.data[self.pos..];
        if rest.is_empty() {
            return None;
        }
        let index = self.index + 1;
        let offset = self.pos as u64;
        let path = self.path.to_path_buf();
        if rest.len() < HEADER {
            self.pos = self.data.len();
            return Some(Err(TraceError::Truncated {
                path,
                record: index,
                offset,
                need: HEADER as u64,
                have: rest.len() as u64,
            }));
        }
        let le_magic = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let big_endian = if le_magic & 0xffff_ff00 == MAGIC {
            false
        } else if le_magic.swap_bytes() & 0xffff_ff00 == MAGIC {
            true
        } else {
            self.pos = self.data.len();
            return Some(Err(TraceError::BadMagic {
                path,
                record: index,
                offset,
                magic: le_magic,
            }));
        };
        let u16_at = |o: usize| {
            let b = [rest[o], rest[o + 1]];
            if big_endian {
                u16::from_be_bytes(b)
            } else {
                u16::from_le_bytes(b)
            }
        };
        let u32_at = |o: usize| {
            let b = [rest[o], rest[o + 1], rest[o + 2], rest[o + 3]];
            if big_endian {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        let u64_at = |o: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&rest[o..o + 8]);
            if big_endian {
                u64::from_be_bytes(b)
            } else {
                u64::from_le_bytes(b)
            }
        };
        let version = (u32_at(0) & 0xff) as u8;
        if version != VERSION {
            self.pos = self.data.len();
            return Some(Err(TraceError::BadVersion {
                path,
                record: index,
                offset,
                version,
            }));
        }
        let rec = Record {
            big_endian,
            sequence: u32_at(4),
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            cpu: u32_at(40),
            pdu_len: u16_at(46),
        };
        let total = HEADER + usize::from(rec.pdu_len);
        if rest.len() < total {
            self.pos = self.data.len();
            return Some(Err(TraceError::Truncated {
                path,
                record: index,
                offset,
                need: total as u64,
                have: rest.len() as u64,
            }));
        }
        self.pos += total;
        self.index = index;
        Some(Ok((rec, &rest[..total])))
    }
}

/// What a record is to a replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A read or write of the event asked for.
    Io(Op),
    /// A discard of the event asked for (not replayed).
    Discard,
    /// The event asked for, but moving no data (a flush).
    NoData,
    /// Another event (G, I, C, P, U, messages...).
    Other,
}

/// Classifies a record for the event `want` (blkparse's rules: discard
/// first, then write, then read when it moves bytes).
pub fn classify(rec: &Record, want: BlkEvent) -> Kind {
    let act = rec.action & 0xff;
    let cat = rec.action >> 16;
    let want_act = match want {
        BlkEvent::Queue => TA_QUEUE,
        BlkEvent::Issue => TA_ISSUE,
    };
    if cat & TC_NOTIFY != 0 || act != want_act {
        return Kind::Other;
    }
    if cat & TC_DISCARD != 0 {
        Kind::Discard
    } else if rec.bytes == 0 {
        Kind::NoData
    } else if cat & TC_WRITE != 0 {
        Kind::Io(Op::Write)
    } else {
        Kind::Io(Op::Read)
    }
}

/// Appends the I/O of one file's records (event `want`) to `out`, with
/// times as recorded (the caller makes them relative).
pub fn parse(
    data: &[u8],
    path: &Path,
    want: BlkEvent,
    out: &mut Vec<TraceIo>,
    skipped: &mut Skipped,
    devices: &mut Vec<u32>,
) -> Result<(), TraceError> {
    for (i, r) in Records::new(data, path).enumerate() {
        let (rec, _) = r?;
        match classify(&rec, want) {
            Kind::Io(op) => {
                let offset = byte_offset(&rec, path, i)?;
                if !devices.contains(&rec.device) && devices.len() < 64 {
                    devices.push(rec.device);
                }
                out.push(TraceIo {
                    at_ns: rec.time,
                    offset,
                    len: rec.bytes,
                    op,
                });
            }
            Kind::Discard => skipped.discards += 1,
            Kind::NoData => skipped.no_data += 1,
            Kind::Other => skipped.other_events += 1,
        }
    }
    Ok(())
}

/// Appends the queue (Q), issue (D) and complete (C) records of one file to
/// `out` with their flags (for fingerprints, not replay), times as
/// recorded; `devices` gathers the dev_t of each record's device, and each
/// event's `source` indexes them.
pub fn events(
    data: &[u8],
    path: &Path,
    out: &mut Vec<TraceEvent>,
    devices: &mut Vec<u32>,
) -> Result<(), TraceError> {
    for (i, r) in Records::new(data, path).enumerate() {
        let (rec, _) = r?;
        let cat = rec.action >> 16;
        let action = match rec.action & 0xffff {
            _ if cat & TC_NOTIFY != 0 => continue,
            TA_QUEUE => EventAction::Queue,
            TA_ISSUE => EventAction::Issue,
            TA_COMPLETE => EventAction::Complete,
            _ => continue,
        };
        let op = if cat & TC_DISCARD != 0 {
            EventOp::Discard
        } else if rec.bytes == 0 {
            EventOp::Flush
        } else if cat & TC_WRITE != 0 {
            EventOp::Write
        } else {
            EventOp::Read
        };
        let flags = IoFlags {
            preflush: cat & TC_FLUSH != 0,
            fua: cat & TC_FUA != 0,
            sync: cat & TC_SYNC != 0,
            meta: cat & TC_META != 0,
        };
        let offset = byte_offset(&rec, path, i)?;
        let source = match devices.iter().position(|d| *d == rec.device) {
            Some(k) => k,
            None => {
                devices.push(rec.device);
                devices.len() - 1
            }
        };
        out.push(TraceEvent {
            at_ns: rec.time,
            action,
            op,
            offset,
            len: rec.bytes,
            flags,
            source: u32::try_from(source).unwrap_or(u32::MAX),
            pid: rec.pid,
        });
    }
    Ok(())
}

/// A dev_t as blkparse names it (`MAJOR,MINOR`; the kernel's 12/20 split).
pub fn device_name(dev: u32) -> String {
    format!("{},{}", dev >> 20, dev & 0xf_ffff)
}

/// The byte offset of record `i` (0-based) of `path`: its sector times 512.
fn byte_offset(rec: &Record, path: &Path, i: usize) -> Result<u64, TraceError> {
    rec.sector
        .checked_mul(512)
        .ok_or_else(|| TraceError::BadRecord {
            path: path.to_path_buf(),
            record: i as u64 + 1,
            reason: format!("sector {} is past any device", rec.sector),
        })
}

/// Counts the I/O events of each kind in `data`, to tell when the event
/// asked for is absent but the other is present.
pub fn count(data: &[u8], path: &Path, want: BlkEvent) -> u64 {
    Records::new(data, path)
        .map_while(Result::ok)
        .filter(|(r, _)| matches!(classify(r, want), Kind::Io(_)))
        .count() as u64
}

/// Writes a record header (for tests and the capture's renumbering).
pub fn encode(rec: &Record) -> [u8; HEADER] {
    let mut b = [0u8; HEADER];
    let be = rec.big_endian;
    let mut put = |o: usize, v: &[u8]| b[o..o + v.len()].copy_from_slice(v);
    macro_rules! bytes {
        ($v:expr) => {
            if be {
                $v.to_be_bytes()
            } else {
                $v.to_le_bytes()
            }
        };
    }
    put(0, &bytes!(MAGIC | u32::from(VERSION)));
    put(4, &bytes!(rec.sequence));
    put(8, &bytes!(rec.time));
    put(16, &bytes!(rec.sector));
    put(24, &bytes!(rec.bytes));
    put(28, &bytes!(rec.action));
    put(32, &bytes!(rec.pid));
    put(36, &bytes!(rec.device));
    put(40, &bytes!(rec.cpu));
    put(44, &bytes!(0u16));
    put(46, &bytes!(rec.pdu_len));
    b
}

/// Rewrites the sequence number of an encoded record in place.
pub fn set_sequence(raw: &mut [u8], big_endian: bool, seq: u32) {
    let b = if big_endian {
        seq.to_be_bytes()
    } else {
        seq.to_le_bytes()
    };
    raw[4..8].copy_from_slice(&b);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(be: bool, time: u64, sector: u64, bytes: u32, act: u32, cat: u32) -> Record {
        Record {
            big_endian: be,
            sequence: 1,
            time,
            sector,
            bytes,
            action: act | (cat << 16),
            pid: 4242,
            device: 7 << 20,
            cpu: 0,
            pdu_len: 0,
        }
    }

    fn stream(be: bool) -> Vec<u8> {
        let mut v = Vec::new();
        // Q read 4 KiB, G (other), Q write 8 KiB, D write (issue), Q discard,
        // Q flush with no data, a notify record with an 8-byte payload.
        for r in [
            rec(be, 100, 8, 4096, TA_QUEUE, 1 | (1 << 4)),
            rec(be, 101, 8, 4096, 4, 1),
            rec(be, 200, 16, 8192, TA_QUEUE, TC_WRITE),
            rec(be, 210, 16, 8192, TA_ISSUE, TC_WRITE),
            rec(be, 300, 64, 4096, TA_QUEUE, TC_DISCARD | TC_WRITE),
            rec(be, 400, 0, 0, TA_QUEUE, TC_WRITE | (1 << 2)),
        ] {
            v.extend_from_slice(&encode(&r));
        }
        let mut n = rec(be, 500, 0, 0, 0, TC_NOTIFY);
        n.pdu_len = 8;
        v.extend_from_slice(&encode(&n));
        v.extend_from_slice(b"kworker\0");
        v
    }

    #[test]
    fn both_byte_orders_read_the_same() {
        for be in [false, true] {
            let data = stream(be);
            assert!(looks_like(&data));
            let (mut out, mut sk, mut dev) = (Vec::new(), Skipped::default(), Vec::new());
            parse(
                &data,
                Path::new("t"),
                BlkEvent::Queue,
                &mut out,
                &mut sk,
                &mut dev,
            )
            .unwrap();
            assert_eq!(
                out,
                vec![
                    TraceIo {
                        at_ns: 100,
                        offset: 4096,
                        len: 4096,
                        op: Op::Read
                    },
                    TraceIo {
                        at_ns: 200,
                        offset: 8192,
                        len: 8192,
                        op: Op::Write
                    },
                ],
                "big-endian {be}"
            );
            assert_eq!((sk.discards, sk.no_data, sk.other_events), (1, 1, 3));
            assert_eq!(dev, vec![7 << 20]);
            let mut out = Vec::new();
            parse(
                &data,
                Path::new("t"),
                BlkEvent::Issue,
                &mut out,
                &mut sk,
                &mut dev,
            )
            .unwrap();
            assert_eq!(out.len(), 1);
            assert_eq!(count(&data, Path::new("t"), BlkEvent::Issue), 1);
            // The fingerprint's events keep who was running (blktrace's pid).
            let (mut ev, mut devs) = (Vec::new(), Vec::new());
            events(&data, Path::new("t"), &mut ev, &mut devs).unwrap();
            assert!(!ev.is_empty() && ev.iter().all(|e| e.pid == 4242), "{ev:?}");
        }
    }

    #[test]
    fn bad_records_are_typed_errors() {
        let data = stream(false);
        let p = Path::new("x.blktrace.0");
        let mut sink = (Vec::new(), Skipped::default(), Vec::new());
        let mut run = |d: &[u8]| {
            parse(d, p, BlkEvent::Queue, &mut sink.0, &mut sink.1, &mut sink.2)
                .unwrap_err()
                .to_string()
        };
        let e = run(&data[..HEADER * 2 + 10]);
        assert!(
            e.contains("x.blktrace.0") && e.contains("record 3") && e.contains("byte 96"),
            "{e}"
        );
        // The payload of the last record is cut.
        let e = run(&data[..data.len() - 3]);
        assert!(e.contains("record 7"), "{e}");
        let mut bad = data.clone();
        bad[HEADER] = 0x55;
        bad[HEADER + 3] = 0x11;
        let e = run(&bad);
        assert!(
            e.contains("record 2") && e.contains("not a blktrace record"),
            "{e}"
        );
        let mut v6 = data.clone();
        v6[0] = 6;
        let e = run(&v6);
        assert!(e.contains("version 6"), "{e}");
    }
}
