//! A fault-injecting engine: wraps any [`IoEngine`] and damages chosen I/Os
//! the way broken storage does, so the simulator's checks can be proved.
//!
//! Faults on writes change what reaches the file (the caller's write buffer
//! may be altered); faults on reads change what the caller receives. Each
//! fault names a file (engine file index), optionally a page (`page_size`
//! units) and a probability, and may let the first `skip` matching I/Os
//! through and stop after `count` injections. The plan is shared by all
//! engines of a run (one `Arc`), so skip/count are global, and decisions are
//! deterministic for a given seed and I/O order.
//!
//! | kind | on | effect on the storage / the reader |
//! |---|---|---|
//! | `bit-flip` | write | one bit of the page is flipped before it is written |
//! | `torn` | write | only the first half of the page is written; the rest keeps the older image |
//! | `misdirect` | write | the page's image is written at page `to` instead; its own place keeps the older image |
//! | `lost-write` | write | the write is acknowledged but the page keeps its older image |
//! | `short-read` | read | the read returns half a page fewer bytes than asked |
//! | `not-read` | read | the read reports success but the page's bytes never arrive |
//! | `zero-read` | read | the read reports success and delivers zeros in place of the page (the storage keeps it: with `count=1`, a re-read reads it right) |
//! | `eio` | read or write | the I/O fails with EIO |
//! | `delay` | read or write | the I/O is held `ms` milliseconds before it is issued (a stalled device) |

use crate::platform::io::RawFile;
use std::io;
use std::sync::{Arc, Mutex};

use super::{read_at, write_at, Capabilities, Completion, IoEngine, IoReq, Op};
use crate::buf::{wyrand, AlignedBuf};

/// Kinds of injected faults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// Flip one bit of the page on its way to the storage.
    BitFlip,
    /// Write only the first half of the page.
    Torn,
    /// Write the page's image at another page (`to`).
    Misdirect {
        /// Page that receives the image.
        to: u64,
    },
    /// Acknowledge the write without storing it.
    LostWrite,
    /// Return fewer bytes than asked on a read.
    ShortRead,
    /// Report a read as complete without delivering the page's bytes.
    NotRead,
    /// Deliver zeros in place of the page's bytes on a read (the storage keeps them).
    ZeroRead,
    /// Fail the I/O with EIO.
    Eio,
    /// Hold the I/O for `ms` milliseconds before it is issued (a stalled device).
    Delay {
        /// Milliseconds.
        ms: u64,
    },
}

impl FaultKind {
    /// The name used in `--inject`.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::BitFlip => "bit-flip",
            FaultKind::Torn => "torn",
            FaultKind::Misdirect { .. } => "misdirect",
            FaultKind::LostWrite => "lost-write",
            FaultKind::ShortRead => "short-read",
            FaultKind::NotRead => "not-read",
            FaultKind::ZeroRead => "zero-read",
            FaultKind::Eio => "eio",
            FaultKind::Delay { .. } => "delay",
        }
    }

    fn on_write(self) -> bool {
        !matches!(
            self,
            FaultKind::ShortRead | FaultKind::NotRead | FaultKind::ZeroRead
        )
    }

    fn on_read(self) -> bool {
        matches!(
            self,
            FaultKind::ShortRead | FaultKind::NotRead | FaultKind::ZeroRead | FaultKind::Eio
        )
    }
}

/// One fault to inject.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// What to do.
    pub kind: FaultKind,
    /// Engine file index.
    pub file: u32,
    /// Page (in page_size units); None = any page, subject to `rate`.
    pub page: Option<u64>,
    /// Matching I/Os let through before injecting.
    pub skip: u64,
    /// Injections at most (0 = no limit).
    pub count: u64,
    /// Probability that a matching I/O is damaged (1.0 = always).
    pub rate: f64,
}

impl Fault {
    /// Parses `KIND[:key=value,...]` with keys `file` (as given, counting
    /// from 1; 0 when not given: the caller maps it and picks the default),
    /// `page`, `to`, `skip`, `count`, `rate`. Example:
    /// `lost-write:file=1,page=300,skip=1`.
    pub fn parse(text: &str) -> Result<Fault, String> {
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        let mut f = Fault {
            kind: FaultKind::Eio,
            file: 0,
            page: None,
            skip: 0,
            count: 0,
            rate: 1.0,
        };
        let mut to = None;
        let mut ms = None;
        for kv in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("fault '{text}': '{kv}' is not key=value"))?;
            let num = || {
                v.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("fault '{text}': {k} needs a whole number, not '{v}'"))
            };
            match k.trim() {
                "file" => {
                    f.file = u32::try_from(num()?)
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| {
                            format!("fault '{text}': file= is the [FileN] number, counting from 1, not '{v}'")
                        })?
                }
                "page" => f.page = Some(num()?),
                "to" => to = Some(num()?),
                "ms" => ms = Some(num()?),
                "skip" => f.skip = num()?,
                "count" => f.count = num()?,
                "rate" => {
                    f.rate = v
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|r| (0.0..=1.0).contains(r))
                        .ok_or_else(|| format!("fault '{text}': rate must be between 0 and 1"))?
                }
                other => {
                    return Err(format!(
                    "fault '{text}': unknown key '{other}' (use file, page, to, ms, skip, count, rate)"
                ))
                }
            }
        }
        f.kind = match kind.trim() {
            "bit-flip" => FaultKind::BitFlip,
            "torn" => FaultKind::Torn,
            "misdirect" => FaultKind::Misdirect {
                to: to.ok_or_else(|| format!("fault '{text}': misdirect needs to=PAGE"))?,
            },
            "lost-write" => FaultKind::LostWrite,
            "short-read" => FaultKind::ShortRead,
            "not-read" => FaultKind::NotRead,
            "zero-read" => FaultKind::ZeroRead,
            "eio" => FaultKind::Eio,
            "delay" => FaultKind::Delay {
                ms: ms.ok_or_else(|| format!("fault '{text}': delay needs ms=MILLISECONDS"))?,
            },
            other => {
                return Err(format!(
                "unknown fault '{other}': use bit-flip, torn, misdirect, lost-write, short-read, not-read, zero-read, eio or delay"
            ))
            }
        };
        Ok(f)
    }
}

/// A record of one injected fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Injected {
    /// Fault kind name.
    pub kind: &'static str,
    /// Engine file index.
    pub file: u32,
    /// Page damaged.
    pub page: u64,
}

/// The shared plan: faults, their counters, the random state and the log of injections.
#[derive(Debug)]
pub struct FaultPlan {
    faults: Vec<(Fault, u64, u64)>,
    rng: u64,
    injected: Vec<Injected>,
}

impl FaultPlan {
    /// A plan for `faults` with a deterministic `seed`.
    pub fn new(faults: Vec<Fault>, seed: u64) -> Arc<Mutex<FaultPlan>> {
        Arc::new(Mutex::new(FaultPlan {
            faults: faults.into_iter().map(|f| (f, 0, 0)).collect(),
            rng: seed ^ 0xFA17,
            injected: Vec::new(),
        }))
    }

    /// Every injection so far.
    pub fn injected(&self) -> &[Injected] {
        &self.injected
    }

    /// Decides which pages of an I/O to damage: (fault kind, page).
    fn decide(
        &mut self,
        file: u32,
        op: Op,
        offset: u64,
        len: u64,
        page_size: u64,
    ) -> Vec<(FaultKind, u64)> {
        let mut out = Vec::new();
        let first = offset / page_size;
        let end = (offset + len).div_ceil(page_size);
        for i in 0..self.faults.len() {
            let (f, seen, done) = &mut self.faults[i];
            if f.file != file
                || op.is_flush()
                || (op == Op::Write && !f.kind.on_write())
                || (op == Op::Read && !f.kind.on_read())
            {
                continue;
            }
            let pages: Vec<u64> = match f.page {
                Some(p) if p >= first && p < end => vec![p],
                Some(_) => continue,
                None => (first..end).collect(),
            };
            for p in pages {
                if f.count > 0 && *done >= f.count {
                    break;
                }
                if f.rate < 1.0 {
                    let r = (wyrand(&mut self.rng) >> 11) as f64 / (1u64 << 53) as f64;
                    if r >= f.rate {
                        continue;
                    }
                }
                *seen += 1;
                if *seen <= f.skip {
                    continue;
                }
                *done += 1;
                out.push((f.kind, p));
                self.injected.push(Injected {
                    kind: f.kind.name(),
                    file,
                    page: p,
                });
            }
        }
        out
    }
}

/// What to do to a read's completion when it arrives.
#[derive(Clone, Copy, Debug)]
enum Post {
    /// Set the result to this many bytes.
    Result(i32),
    /// Re-mark bytes [start, start+len) of piece `piece` as not read.
    NotRead {
        slot: usize,
        start: usize,
        len: usize,
    },
    /// Zero bytes [start, start+len) of piece `piece`.
    Zeros {
        slot: usize,
        start: usize,
        len: usize,
    },
}

/// The wrapper.
pub struct FaultyEngine {
    inner: Box<dyn IoEngine>,
    fds: Vec<RawFile>,
    page_size: usize,
    plan: Arc<Mutex<FaultPlan>>,
    post: Vec<Vec<Post>>,
    scratch: AlignedBuf,
    flip: u64,
}

impl FaultyEngine {
    /// Wraps `inner`, whose files are `fds`, damaging I/Os as `plan` says.
    pub fn new(
        inner: Box<dyn IoEngine>,
        fds: Vec<RawFile>,
        page_size: usize,
        plan: Arc<Mutex<FaultPlan>>,
    ) -> FaultyEngine {
        let slots = inner.slots();
        FaultyEngine {
            inner,
            fds,
            page_size,
            plan,
            post: vec![Vec::new(); slots],
            scratch: AlignedBuf::new(page_size),
            flip: 0x9E37,
        }
    }

    /// Applies a write fault to the page image at `buf[at..at + page_size]`.
    fn damage_write(&mut self, kind: FaultKind, file: u32, page: u64, slot: usize, at: usize) {
        let ps = self.page_size;
        let fd = self.fds[file as usize];
        let page_off = page * ps as u64;
        match kind {
            FaultKind::BitFlip => {
                let bit = (wyrand(&mut self.flip) % (ps as u64 * 8)) as usize;
                self.inner.buffer(slot)[at + bit / 8] ^= 1 << (bit % 8);
            }
            FaultKind::Torn | FaultKind::LostWrite => {
                // What the storage holds now stays there (for torn: in the second half).
                let keep_from = if kind == FaultKind::Torn { ps / 2 } else { 0 };
                self.scratch.as_mut_slice()[..ps].fill(0);
                let _ = read_at(fd, &mut self.scratch.as_mut_slice()[..ps], page_off);
                let old = &self.scratch.as_slice()[keep_from..ps];
                self.inner.buffer(slot)[at + keep_from..at + ps].copy_from_slice(old);
            }
            FaultKind::Misdirect { to } => {
                let img = &self.inner.buffer(slot)[at..at + ps];
                self.scratch.as_mut_slice()[..ps].copy_from_slice(img);
                let _ = write_at(fd, &self.scratch.as_slice()[..ps], to * ps as u64);
                self.scratch.as_mut_slice()[..ps].fill(0);
                let _ = read_at(fd, &mut self.scratch.as_mut_slice()[..ps], page_off);
                let old = &self.scratch.as_slice()[..ps];
                self.inner.buffer(slot)[at..at + ps].copy_from_slice(old);
            }
            _ => {}
        }
    }

    /// Handles one request given as pieces (slot, len); returns true when the
    /// request must fail with EIO without reaching the inner engine.
    fn before(
        &mut self,
        slot: u32,
        file: u32,
        op: Op,
        offset: u64,
        pieces: &[(usize, usize)],
    ) -> bool {
        let len: u64 = pieces.iter().map(|p| p.1 as u64).sum();
        let ps = self.page_size as u64;
        let hits = self
            .plan
            .lock()
            .expect("fault plan lock")
            .decide(file, op, offset, len, ps);
        let mut eio = false;
        for (kind, page) in hits {
            // Locate the page inside the pieces.
            let want = page * ps;
            let mut pos = offset;
            let mut found = None;
            // First piece overlapping the page: (slot, start, end) in the slot's buffer.
            let mut overlap = None;
            for &(s, l) in pieces {
                if want >= pos && want + ps <= pos + l as u64 {
                    found = Some((s, (want - pos) as usize));
                }
                let (a, b) = (want.max(pos), (want + ps).min(pos + l as u64));
                if a < b && overlap.is_none() {
                    overlap = Some((s, (a - pos) as usize, (b - pos) as usize));
                }
                if found.is_some() {
                    break;
                }
                pos += l as u64;
            }
            match (kind, op) {
                (FaultKind::Eio, _) => eio = true,
                (FaultKind::Delay { ms }, _) => {
                    std::thread::sleep(std::time::Duration::from_millis(ms))
                }
                (FaultKind::BitFlip, Op::Write) if found.is_none() => {
                    // Smaller writes (log blocks): flip a bit in the part written.
                    if let Some((s, a, b)) = overlap {
                        let bit = (wyrand(&mut self.flip) % ((b - a) as u64 * 8)) as usize;
                        self.inner.buffer(s)[a + bit / 8] ^= 1 << (bit % 8);
                    }
                }
                (FaultKind::ShortRead, Op::Read) => {
                    // The read ends half-way into the damaged page.
                    let r = (want + ps / 2 - offset) as i32;
                    self.post[slot as usize].push(Post::Result(r));
                    // And the bytes past the end never arrive.
                    let cut = offset + r as u64;
                    let mut pos = offset;
                    for &(s, l) in pieces {
                        let end = pos + l as u64;
                        if end > cut {
                            let start = cut.saturating_sub(pos) as usize;
                            self.post[slot as usize].push(Post::NotRead {
                                slot: s,
                                start,
                                len: l - start,
                            });
                        }
                        pos = end;
                    }
                }
                (FaultKind::NotRead, Op::Read) => {
                    if let Some((s, at)) = found {
                        self.post[slot as usize].push(Post::NotRead {
                            slot: s,
                            start: at,
                            len: self.page_size,
                        });
                    }
                }
                (FaultKind::ZeroRead, Op::Read) => {
                    if let Some((s, at)) = found {
                        self.post[slot as usize].push(Post::Zeros {
                            slot: s,
                            start: at,
                            len: self.page_size,
                        });
                    }
                }
                (k, Op::Write) => {
                    if let Some((s, at)) = found {
                        self.damage_write(k, file, page, s, at);
                    }
                }
                _ => {}
            }
        }
        eio
    }

    fn apply_post(&mut self, c: &mut Completion) {
        let slot = c.slot as usize;
        for i in 0..self.post[slot].len() {
            match self.post[slot][i] {
                Post::Result(r) => {
                    if c.result > r {
                        c.result = r;
                    }
                }
                Post::NotRead { slot, start, len } => {
                    crate::verify::prestamp(&mut self.inner.buffer(slot)[start..start + len]);
                }
                Post::Zeros { slot, start, len } => {
                    self.inner.buffer(slot)[start..start + len].fill(0);
                }
            }
        }
        self.post[slot].clear();
    }
}

impl IoEngine for FaultyEngine {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    fn slots(&self) -> usize {
        self.inner.slots()
    }

    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.inner.buffer(slot)
    }

    fn will_queue(&mut self, file: u32, offset: u64, len: u32) {
        self.inner.will_queue(file, offset, len);
    }

    fn queue(&mut self, req: IoReq) -> io::Result<()> {
        if self.before(
            req.slot,
            req.file,
            req.op,
            req.offset,
            &[(req.slot as usize, req.len as usize)],
        ) {
            self.post[req.slot as usize].push(Post::Result(-crate::platform::errno::EIO));
        }
        self.inner.queue(req)
    }

    fn commit(&mut self) -> io::Result<()> {
        self.inner.commit()
    }

    fn reap_timeout(
        &mut self,
        min: usize,
        out: &mut [Completion],
        timeout_ns: u64,
    ) -> io::Result<usize> {
        let n = self.inner.reap_timeout(min, out, timeout_ns)?;
        for c in &mut out[..n] {
            self.apply_post(c);
        }
        Ok(n)
    }

    fn reap(&mut self, min: usize, out: &mut [Completion]) -> io::Result<usize> {
        let n = self.inner.reap(min, out)?;
        for c in &mut out[..n] {
            self.apply_post(c);
        }
        Ok(n)
    }

    fn explain(&self, result: i32) -> Option<String> {
        self.inner.explain(result)
    }

    fn notes(&self) -> Vec<String> {
        let mut n = self.inner.notes();
        n.push("fault injection is active: some I/Os are damaged on purpose".into());
        n
    }

    fn queue_vectored(
        &mut self,
        slot: u32,
        file: u32,
        op: Op,
        offset: u64,
        iov: &[(usize, usize)],
    ) -> io::Result<()> {
        if self.before(slot, file, op, offset, iov) {
            self.post[slot as usize].push(Post::Result(-crate::platform::errno::EIO));
        }
        self.inner.queue_vectored(slot, file, op, offset, iov)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{EngineConfig, SyncEngine};

    fn engine(f: &std::fs::File, faults: Vec<Fault>) -> (FaultyEngine, Arc<Mutex<FaultPlan>>) {
        let cfg = EngineConfig {
            fds: vec![crate::platform::io::raw_file(f)],
            slots: 4,
            slot_size: 4096,
            ..Default::default()
        };
        let plan = FaultPlan::new(faults, 1);
        (
            FaultyEngine::new(
                Box::new(SyncEngine::new(&cfg).unwrap()),
                cfg.fds.clone(),
                4096,
                plan.clone(),
            ),
            plan,
        )
    }

    fn write(e: &mut FaultyEngine, slot: u32, page: u64, fill: u8) -> i32 {
        e.buffer(slot as usize).fill(fill);
        e.queue(IoReq {
            slot,
            file: 0,
            op: Op::Write,
            offset: page * 4096,
            len: 4096,
        })
        .unwrap();
        let mut c = [Completion::default(); 1];
        e.reap(1, &mut c).unwrap();
        c[0].result
    }

    fn read(e: &mut FaultyEngine, page: u64) -> (i32, Vec<u8>) {
        e.queue(IoReq {
            slot: 0,
            file: 0,
            op: Op::Read,
            offset: page * 4096,
            len: 4096,
        })
        .unwrap();
        let mut c = [Completion::default(); 1];
        e.reap(1, &mut c).unwrap();
        (c[0].result, e.buffer(0).to_vec())
    }

    #[test]
    fn parse_faults() {
        let f = Fault::parse("lost-write:file=1,page=300,skip=1").unwrap();
        assert_eq!(f.kind, FaultKind::LostWrite);
        assert_eq!((f.file, f.page, f.skip, f.count), (1, Some(300), 1, 0));
        assert_eq!(
            Fault::parse("misdirect:page=5,to=2").unwrap().kind,
            FaultKind::Misdirect { to: 2 }
        );
        assert!(Fault::parse("misdirect:page=5").is_err());
        assert!(Fault::parse("melt").is_err());
        assert!(Fault::parse("eio:rate=2").is_err());
        assert!(Fault::parse("eio:colour=red").is_err());
    }

    #[test]
    fn lost_write_keeps_old_data_and_skip_count_work() {
        let f = tempfile::tempfile().unwrap();
        f.set_len(4 * 4096).unwrap();
        let (mut e, plan) = engine(
            &f,
            vec![Fault {
                kind: FaultKind::LostWrite,
                file: 0,
                page: Some(1),
                skip: 1,
                count: 1,
                rate: 1.0,
            }],
        );
        assert_eq!(write(&mut e, 0, 1, 1), 4096); // passes (skip)
        assert_eq!(write(&mut e, 0, 1, 2), 4096); // lost, but acknowledged
        assert!(read(&mut e, 1).1.iter().all(|&b| b == 1));
        assert_eq!(write(&mut e, 0, 1, 3), 4096); // count exhausted
        assert!(read(&mut e, 1).1.iter().all(|&b| b == 3));
        assert_eq!(plan.lock().unwrap().injected().len(), 1);
    }

    #[test]
    fn torn_misdirect_flip_and_read_faults() {
        let f = tempfile::tempfile().unwrap();
        f.set_len(8 * 4096).unwrap();
        let (mut e, _) = engine(
            &f,
            vec![
                Fault {
                    kind: FaultKind::Torn,
                    file: 0,
                    page: Some(1),
                    skip: 1,
                    count: 0,
                    rate: 1.0,
                },
                Fault {
                    kind: FaultKind::Misdirect { to: 5 },
                    file: 0,
                    page: Some(2),
                    skip: 0,
                    count: 0,
                    rate: 1.0,
                },
                Fault {
                    kind: FaultKind::BitFlip,
                    file: 0,
                    page: Some(3),
                    skip: 0,
                    count: 0,
                    rate: 1.0,
                },
                Fault {
                    kind: FaultKind::ShortRead,
                    file: 0,
                    page: Some(6),
                    skip: 0,
                    count: 0,
                    rate: 1.0,
                },
                Fault {
                    kind: FaultKind::NotRead,
                    file: 0,
                    page: Some(7),
                    skip: 0,
                    count: 0,
                    rate: 1.0,
                },
                Fault {
                    kind: FaultKind::Eio,
                    file: 0,
                    page: Some(4),
                    skip: 0,
                    count: 0,
                    rate: 1.0,
                },
            ],
        );
        write(&mut e, 0, 1, 1);
        write(&mut e, 0, 1, 2);
        let (_, b) = read(&mut e, 1);
        assert!(b[..2048].iter().all(|&x| x == 2) && b[2048..].iter().all(|&x| x == 1));
        write(&mut e, 0, 2, 9);
        assert!(read(&mut e, 5).1.iter().all(|&x| x == 9));
        assert!(read(&mut e, 2).1.iter().all(|&x| x == 0));
        write(&mut e, 0, 3, 0);
        assert_eq!(
            read(&mut e, 3)
                .1
                .iter()
                .map(|x| x.count_ones())
                .sum::<u32>(),
            1
        );
        let (r, b) = read(&mut e, 6);
        assert_eq!(r, 2048);
        assert_eq!(
            &b[2048..2052],
            b"NRD!",
            "bytes past a short read never arrive"
        );
        let (r, b) = read(&mut e, 7);
        assert_eq!(r, 4096);
        assert_eq!(&b[..4], b"NRD!");
        assert_eq!(write(&mut e, 0, 4, 1), -crate::platform::errno::EIO);
        assert_eq!(read(&mut e, 4).0, -crate::platform::errno::EIO);
    }

    #[test]
    fn zero_read_delivers_zeros_and_keeps_the_storage() {
        let f = tempfile::tempfile().unwrap();
        f.set_len(4 * 4096).unwrap();
        let (mut e, plan) = engine(&f, vec![Fault::parse("zero-read:page=2,count=1").unwrap()]);
        assert_eq!(write(&mut e, 0, 2, 7), 4096, "writes pass");
        let (r, b) = read(&mut e, 2);
        assert_eq!(r, 4096, "the read reports success");
        assert!(b.iter().all(|&x| x == 0), "and delivers zeros");
        assert!(
            read(&mut e, 2).1.iter().all(|&x| x == 7),
            "the storage kept the page: a re-read reads it"
        );
        assert_eq!(plan.lock().unwrap().injected().len(), 1);
    }
}
