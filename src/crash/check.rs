//! `iosim crash verify`: reads every page back after the crash and judges it
//! against the acknowledgement log.
//!
//! For every page with an acknowledged write, the newest acknowledged
//! generation (or a newer one: a write in flight at the crash may have landed)
//! must be there, intact:
//!
//! - an older generation, zeros or another run's image: **lost** acknowledged write;
//! - a checksum failure: **corruption**;
//! - another page's identity: **misdirected**;
//! - a log block missing while a later log block survived: **ordering violation**;
//! - sectors of two writes: **torn**, always reported; a failure when the
//!   writer claimed torn-write protection, or when part of the page is older
//!   than the acknowledged write (then the acknowledged write was lost).

use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::acklog::{
    self, AckHeader, AckLog, AckRecord, AckTarget, Mechanism, StopReason, WriteKind,
};
use crate::engine::pipeline::{Buffers, Done, Driver, Io, Next, Pipeline, Transfer};
use crate::engine::{self, EngineConfig, EngineRequest, Op};
use crate::target;
use crate::verify::{self, ErrorClass, PageId, PAGE_MAGIC, PAGE_SIZE};
use crate::workload::{CacheMode, EngineKind};

/// Bytes read per request.
const CHUNK: usize = 1 << 20;
/// Reads in flight during the verification, in all (as `iosim run --bs 1M --qd 8`).
const DEPTH: usize = 8;
/// Threads reading and checking, each with its own engine and [`DEPTH`] /
/// READERS of the reads (fio's `verify_async` in spirit): while one checks
/// the chunks it got, the other's reads keep the device busy, and on a
/// machine busy with other work two threads get more CPU time than one.
const READERS: usize = 2;
/// Buffers beyond those in flight, per reader: the chunks being checked. As
/// many as it has in flight, because a virtual disk often completes all its
/// reads at once (one interrupt for the batch): with fewer, fewer new reads
/// could be issued before the batch is checked, and the device would wait.
const SPARE: usize = DEPTH / READERS;

/// What is wrong with a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// An acknowledged write is not there (an older image, zeros, another run's data).
    Lost,
    /// The page fails its checksum.
    Corruption,
    /// The page holds another page.
    Misdirected,
    /// A log block is missing while a later one survived.
    OrderingViolation,
    /// The page mixes sectors of two writes, all at least as new as the acknowledged one.
    Torn,
}

impl Failure {
    /// Name in the text report.
    pub fn label(self) -> &'static str {
        match self {
            Failure::Lost => "LOST",
            Failure::Corruption => "CORRUPTION",
            Failure::Misdirected => "MISDIRECTED",
            Failure::OrderingViolation => "ORDERING",
            Failure::Torn => "TORN",
        }
    }
}

/// One page that did not hold what was acknowledged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageFinding {
    /// What is wrong.
    pub class: Failure,
    /// Counts against the verdict (a torn page without claimed protection does not).
    pub failure: bool,
    /// Target path as verified.
    pub file: String,
    /// Byte offset.
    pub offset: u64,
    /// Page number in the region.
    pub page: u64,
    /// Data page or log block.
    pub kind: WriteKind,
    /// Newest acknowledged generation.
    pub expected_generation: u64,
    /// Generation in the page header (None when there is no valid header).
    pub found_generation: Option<u64>,
    /// Sequence number of the acknowledgement.
    pub ack_seq: u64,
    /// How it was made durable.
    pub mechanism: Mechanism,
    /// How long before the crash (the last acknowledgement) the write was acknowledged, ms.
    pub ack_age_ms: f64,
    /// Explanation.
    pub detail: String,
}

/// Totals by class.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Lost acknowledged writes.
    pub lost: u64,
    /// Corrupt pages.
    pub corruption: u64,
    /// Misdirected pages.
    pub misdirected: u64,
    /// Ordering violations.
    pub ordering_violations: u64,
    /// Torn pages (all).
    pub torn: u64,
    /// Torn pages that count as failures (protection claimed).
    pub torn_failures: u64,
}

/// Per target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetCheck {
    /// Path read.
    pub path: String,
    /// Path the writer used (when different).
    pub written_as: String,
    /// Data pages with an acknowledged write, checked.
    pub pages_checked: u64,
    /// Log slots with an acknowledged append, checked.
    pub log_blocks_checked: u64,
    /// Pages holding a newer image than acknowledged (writes in flight that landed).
    pub newer_than_acknowledged: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Seconds spent reading and checking.
    pub secs: f64,
    /// MiB/s of the verification pass.
    pub mib_s: f64,
    /// Direct I/O used for the pass.
    pub direct: bool,
}

/// About the acknowledgement log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AckSummary {
    /// Path.
    pub path: String,
    /// Intact records.
    pub records: u64,
    /// Host that wrote.
    pub host: String,
    /// Writer start, RFC 3339.
    pub writer_started: String,
    /// Seconds from the writer's start to the last acknowledgement.
    pub writer_secs: f64,
    /// The writer stopped on its own (no crash) and why: `duration`,
    /// `interrupted`, or `error: ` and the I/O error that stopped it.
    pub writer_end: Option<StopReason>,
    /// A partial last line, ignored.
    pub truncated_tail: Option<String>,
    /// Damage inside the log.
    pub damage: Vec<String>,
    /// Torn-write protection was claimed.
    pub torn_protection: bool,
    /// The mix.
    pub mix: String,
    /// The workload profile the mix came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
}

/// What `iosim crash verify` concluded: the words `PASS`, `FAIL` and
/// `INCOMPLETE` in its JSON, text and stored documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum CrashOutcome {
    /// Zero lost, corrupt, misdirected, ordering and counted torn pages.
    Pass,
    /// At least one page failed.
    Fail,
    /// No failure, but the acknowledgement log is damaged: the writes it
    /// lost could not be judged.
    Incomplete,
}

impl CrashOutcome {
    /// The word in the report and the JSON.
    pub fn label(self) -> &'static str {
        match self {
            CrashOutcome::Pass => "PASS",
            CrashOutcome::Fail => "FAIL",
            CrashOutcome::Incomplete => "INCOMPLETE",
        }
    }
}

impl std::fmt::Display for CrashOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// The verdict of `iosim crash verify` (the body of a `crash` document:
/// when, where and which iosim are in its header).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrashVerdict {
    /// PASS, FAIL, or INCOMPLETE (no failure, but the acknowledgement log is
    /// damaged: the writes it lost could not be judged).
    pub verdict: CrashOutcome,
    /// Totals.
    pub counts: Counts,
    /// The acknowledgement log.
    pub acks: AckSummary,
    /// Targets.
    pub targets: Vec<TargetCheck>,
    /// Every page that failed, then torn pages that are only reported.
    pub findings: Vec<PageFinding>,
    /// Things to know.
    pub notes: Vec<String>,
}

impl CrashVerdict {
    /// True with zero lost, corrupt, misdirected, ordering and counted torn pages.
    pub fn passed(&self) -> bool {
        self.verdict == CrashOutcome::Pass
    }

    /// True when nothing failed but the acknowledgement log is damaged.
    pub fn incomplete(&self) -> bool {
        self.verdict == CrashOutcome::Incomplete
    }
}

/// What was acknowledged for one page: newest generation and its record.
#[derive(Clone, Copy)]
struct Expect {
    generation: u64,
    rec: usize,
}

/// Verifies `targets` (the writer's paths when empty) against the log at `acks`.
pub fn verify(
    targets: &[PathBuf],
    acks: &Path,
    cache: CacheMode,
    stop: &AtomicBool,
) -> anyhow::Result<CrashVerdict> {
    let log = acklog::read(acks)?;
    let h = &log.header;
    let paths = target_paths(targets, h)?;
    let mut pass = Pass {
        log: &log,
        cache,
        stop,
        crash_us: log.records.last().map_or(h.started_us, |r| r.ts_us),
        damage: log.damage.clone(),
        notes: Vec::new(),
        findings: Vec::new(),
    };
    let mut tchecks = Vec::new();
    for (ti, (t, path)) in h.targets.iter().zip(&paths).enumerate() {
        tchecks.push(pass.target(ti as u32, t, path)?);
    }
    if stop.load(Ordering::Relaxed) {
        anyhow::bail!("interrupted: the verification did not finish, so there is no verdict; run iosim crash verify again");
    }
    let Pass {
        crash_us,
        damage,
        mut notes,
        mut findings,
        ..
    } = pass;
    findings.sort_by(|a, b| (!a.failure, &a.file, a.offset).cmp(&(!b.failure, &b.file, b.offset)));
    let counts = counts(&findings);
    let failed = findings.iter().any(|f| f.failure);
    if log.records.is_empty() {
        notes.push(
            "the log holds no acknowledged write, so nothing could be lost: the verdict proves nothing"
                .into(),
        );
    }
    let verdict = if failed {
        CrashOutcome::Fail
    } else if !damage.is_empty() {
        notes.push(
            "INCOMPLETE: the acknowledgement log is damaged (ACK LOG DAMAGED above), so the acknowledged writes it lost could not be judged; \
             none of the others failed, but this is not a PASS. Verify again with an intact copy of the log, or repeat the test"
                .into(),
        );
        CrashOutcome::Incomplete
    } else {
        CrashOutcome::Pass
    };
    Ok(CrashVerdict {
        verdict,
        counts,
        acks: AckSummary {
            path: acks.display().to_string(),
            records: log.records.len() as u64,
            host: h.host.clone(),
            writer_started: crate::clock::rfc3339(h.started_us / 1_000_000),
            writer_secs: crash_us.saturating_sub(h.started_us) as f64 / 1e6,
            writer_end: log.end.as_ref().map(|e| e.reason.clone()),
            truncated_tail: log.truncated_tail.clone(),
            damage,
            torn_protection: h.torn_protection,
            mix: h.mix.clone(),
            profile: h.profile.clone(),
        },
        targets: tchecks,
        findings,
        notes,
    })
}

/// The paths to read: those given, in the writer's order, or the writer's own.
fn target_paths(targets: &[PathBuf], h: &AckHeader) -> anyhow::Result<Vec<PathBuf>> {
    Ok(if targets.is_empty() {
        h.targets.iter().map(|t| PathBuf::from(&t.path)).collect()
    } else if targets.len() != h.targets.len() {
        anyhow::bail!(
            "the acknowledgement log names {} target(s) ({}), {} were given: give them in the writer's order, or none to use the writer's paths",
            h.targets.len(),
            h.targets.iter().map(|t| t.path.as_str()).collect::<Vec<_>>().join(", "),
            targets.len()
        );
    } else {
        targets.to_vec()
    })
}

/// Totals of `findings` by class.
fn counts(findings: &[PageFinding]) -> Counts {
    let mut counts = Counts::default();
    for f in findings {
        match f.class {
            Failure::Lost => counts.lost += 1,
            Failure::Corruption => counts.corruption += 1,
            Failure::Misdirected => counts.misdirected += 1,
            Failure::OrderingViolation => counts.ordering_violations += 1,
            Failure::Torn => {
                counts.torn += 1;
                counts.torn_failures += f.failure as u64;
            }
        }
    }
    counts
}

/// The verification pass over every target: what it needs, and what it
/// gathers (the log's damage, notes, findings) across targets.
struct Pass<'a> {
    log: &'a AckLog,
    cache: CacheMode,
    stop: &'a AtomicBool,
    /// The last acknowledgement: the crash, as near as the log knows it.
    crash_us: u64,
    damage: Vec<String>,
    notes: Vec<String>,
    findings: Vec<PageFinding>,
}

impl Pass<'_> {
    /// Reads target `ti` (`t` as the writer laid it out) at `path` and judges
    /// every page with an acknowledged write.
    fn target(&mut self, ti: u32, t: &AckTarget, path: &Path) -> anyhow::Result<TargetCheck> {
        let h = &self.log.header;
        let (data, log_exp) = expectations(self.log, ti, &mut self.damage);
        let region = Region {
            t,
            seed: h.run_seed,
            data,
            log_exp,
            judge: Judge {
                log: self.log,
                seed: h.run_seed,
                file_id: t.file_id,
                file: path.display().to_string(),
                region_start: t.region_start,
                crash_us: self.crash_us,
                torn_protection: h.torn_protection,
            },
        };
        let pages = t.data_pages + t.log_pages;
        let (f, direct) = open(path, self.cache)?;
        if !direct && self.cache.is_direct() {
            self.notes.push(format!(
                "{}: O_DIRECT is not supported here; read through the page cache",
                path.display()
            ));
        }
        let t0 = Instant::now();
        let mut tc = TargetCheck {
            path: path.display().to_string(),
            written_as: t.path.clone(),
            pages_checked: 0,
            log_blocks_checked: 0,
            newer_than_acknowledged: 0,
            bytes_read: 0,
            secs: 0.0,
            mib_s: 0.0,
            direct,
        };
        // What each reader found; log slots: what each holds (log sequence index).
        let parts = read_region(
            &f,
            direct,
            t.region_start,
            pages * PAGE_SIZE as u64,
            self.stop,
            |part: &mut Partial, first, buf| region.chunk(part, first, buf),
        )
        .map_err(|e| anyhow::anyhow!("reading '{}' failed: {e:#}", path.display()))?;
        let mut log_lost = Vec::new();
        let mut newest = None;
        for p in parts {
            tc.pages_checked += p.pages_checked;
            tc.log_blocks_checked += p.log_blocks_checked;
            tc.newer_than_acknowledged += p.newer;
            self.findings.extend(p.findings);
            log_lost.extend(p.log_lost);
            newest = newest.max(p.newest_log);
        }
        self.findings.extend(ordered(log_lost, newest, t));
        tc.secs = t0.elapsed().as_secs_f64();
        tc.bytes_read = pages * PAGE_SIZE as u64;
        tc.mib_s = tc.bytes_read as f64 / 1_048_576.0 / tc.secs.max(1e-9);
        Ok(tc)
    }
}

/// The lost log blocks of target `t`, each an ordering violation when a later
/// one (`newest`, a log sequence index) survived.
fn ordered(log_lost: Vec<PageFinding>, newest: Option<u64>, t: &AckTarget) -> Vec<PageFinding> {
    let mut out = Vec::with_capacity(log_lost.len());
    for mut f in log_lost {
        let idx = (f.expected_generation - 1) * t.log_pages + (f.page - t.data_pages);
        if f.class == Failure::Lost {
            if let Some(n) = newest.filter(|&n| n > idx) {
                f.class = Failure::OrderingViolation;
                f.detail = format!(
                    "log block {} (acknowledged) is missing while the later log block {} survived: the storage persisted writes out of order. {}",
                    idx + 1,
                    n + 1,
                    f.detail
                );
            }
        }
        out.push(f);
    }
    out
}

/// One target's region as the readers check it: what was acknowledged per
/// data page and log slot, and the judge of each page.
struct Region<'a> {
    t: &'a AckTarget,
    seed: u64,
    data: Vec<Option<Expect>>,
    log_exp: Vec<Option<Expect>>,
    judge: Judge<'a>,
}

impl Region<'_> {
    /// Checks the pages of one chunk (`buf`, from page `first`) into `part`.
    fn chunk(&self, part: &mut Partial, first: u64, buf: &[u8]) {
        let t = self.t;
        for (j, page) in buf.chunks_exact(PAGE_SIZE).enumerate() {
            let pno = first + j as u64;
            if pno < t.data_pages {
                if let Some(e) = self.data[pno as usize] {
                    part.pages_checked += 1;
                    match self.judge.page(page, pno, e, WriteKind::Page) {
                        Verdict::Ok { newer } => part.newer += newer as u64,
                        Verdict::Bad(f) => part.findings.push(f),
                    }
                }
                continue;
            }
            let slot = (pno - t.data_pages) as usize;
            if let Some(idx) = self.log_index(page, pno, slot) {
                part.newest_log = part.newest_log.max(Some(idx));
            }
            if let Some(e) = self.log_exp[slot] {
                part.log_blocks_checked += 1;
                match self.judge.page(page, pno, e, WriteKind::Log) {
                    Verdict::Ok { newer } => part.newer += newer as u64,
                    Verdict::Bad(f) => part.log_lost.push(f),
                }
            }
        }
    }

    /// The log sequence index of the intact log block in `slot` (page `pno`), if any.
    fn log_index(&self, page: &[u8], pno: u64, slot: usize) -> Option<u64> {
        let t = self.t;
        let hd = verify::read_header(page);
        let intact = hd.magic == PAGE_MAGIC
            && hd.file_id == t.file_id
            && hd.page == pno
            && hd.generation > 0
            && verify::check_page(
                page,
                self.seed,
                PageId {
                    file_id: t.file_id,
                    page: pno,
                    generation: hd.generation,
                },
            )
            .is_ok();
        intact.then(|| (hd.generation - 1) * t.log_pages + slot as u64)
    }
}

/// Newest acknowledged generation per data page and per log slot of target `ti`.
type Expectations = (Vec<Option<Expect>>, Vec<Option<Expect>>);

fn expectations(log: &AckLog, ti: u32, damage: &mut Vec<String>) -> Expectations {
    let t = &log.header.targets[ti as usize];
    let mut data: Vec<Option<Expect>> = vec![None; t.data_pages as usize];
    let mut logs: Vec<Option<Expect>> = vec![None; t.log_pages as usize];
    for (i, r) in log
        .records
        .iter()
        .enumerate()
        .filter(|(_, r)| r.target == ti)
    {
        let rel = r.offset.wrapping_sub(t.region_start);
        let pno = rel / PAGE_SIZE as u64;
        let fits = r.offset >= t.region_start
            && rel % PAGE_SIZE as u64 == 0
            && r.len as usize == PAGE_SIZE
            && pno < t.data_pages + t.log_pages
            && (r.kind == WriteKind::Log) == (pno >= t.data_pages);
        if !fits {
            damage.push(format!(
                "acknowledgement {} names offset {} ({} bytes, {:?}) outside the writer's layout: ignored",
                r.seq, r.offset, r.len, r.kind
            ));
            continue;
        }
        let slot = if pno < t.data_pages {
            &mut data[pno as usize]
        } else {
            &mut logs[(pno - t.data_pages) as usize]
        };
        if slot.is_none_or(|e| r.generation >= e.generation) {
            *slot = Some(Expect {
                generation: r.generation,
                rec: i,
            });
        }
    }
    (data, logs)
}

enum Verdict {
    Ok { newer: bool },
    Bad(PageFinding),
}

struct Judge<'a> {
    log: &'a AckLog,
    seed: u64,
    file_id: u32,
    file: String,
    region_start: u64,
    crash_us: u64,
    torn_protection: bool,
}

impl Judge<'_> {
    fn page(&self, page: &[u8], pno: u64, e: Expect, kind: WriteKind) -> Verdict {
        let h = verify::read_header(page);
        let same = h.magic == PAGE_MAGIC && h.file_id == self.file_id && h.page == pno;
        // A newer image than acknowledged is fine if intact: a write in flight landed.
        let want = if same && h.generation > e.generation {
            h.generation
        } else {
            e.generation
        };
        let id = PageId {
            file_id: self.file_id,
            page: pno,
            generation: want,
        };
        let finding = match verify::check_page(page, self.seed, id) {
            Ok(()) => {
                return Verdict::Ok {
                    newer: want > e.generation,
                }
            }
            Err(f) => f,
        };
        let (class, failure, detail) = match finding.class {
            ErrorClass::TornPage => {
                let oldest = verify::sector_generations(page)
                    .iter()
                    .flatten()
                    .min()
                    .copied()
                    .unwrap_or(0);
                if u64::from(oldest) < e.generation {
                    (
                        Failure::Lost,
                        true,
                        format!(
                            "torn, and part of the page is older than the acknowledged write: {}",
                            finding.detail
                        ),
                    )
                } else {
                    let why = if self.torn_protection {
                        "torn-write protection was claimed, so this is a failure"
                    } else {
                        "a write in flight at the crash landed in part; reported, not a failure, because torn-write protection was not claimed"
                    };
                    (
                        Failure::Torn,
                        self.torn_protection,
                        format!("{}; {why}", finding.detail),
                    )
                }
            }
            // No header and not one valid sector stamp: the page still holds what was
            // there before this run (the file's fill, another program's data).
            ErrorClass::ChecksumMismatch
                if h.magic != PAGE_MAGIC
                    && verify::sector_generations(page).iter().all(Option::is_none) =>
            {
                (
                    Failure::Lost,
                    true,
                    format!(
                        "the page holds no image written by iosim (its earlier contents), but generation {} was acknowledged: the write was lost",
                        e.generation
                    ),
                )
            }
            // (Not re-read here: a read_retry cannot come out of check_page.)
            ErrorClass::ChecksumMismatch
            | ErrorClass::ShortRead
            | ErrorClass::IoError
            | ErrorClass::ReadRetry => {
                (Failure::Corruption, true, finding.detail)
            }
            ErrorClass::Misdirected => (Failure::Misdirected, true, finding.detail),
            ErrorClass::StaleRead => (Failure::Lost, true, finding.detail),
        };
        let r: &AckRecord = &self.log.records[e.rec];
        Verdict::Bad(PageFinding {
            class,
            failure,
            file: self.file.clone(),
            offset: self.region_start + pno * PAGE_SIZE as u64,
            page: pno,
            kind,
            expected_generation: e.generation,
            found_generation: (h.magic == PAGE_MAGIC).then_some(h.generation),
            ack_seq: r.seq,
            mechanism: r.mech,
            ack_age_ms: self.crash_us.saturating_sub(r.ts_us) as f64 / 1000.0,
            detail,
        })
    }
}

fn open(path: &Path, cache: CacheMode) -> anyhow::Result<(File, bool)> {
    // A `crash write` still writing it would be reported as lost writes.
    crate::targetlock::lock(path, crate::targetlock::LockMode::Shared)?;
    if cache.is_direct() {
        if let Ok(f) = target::open_with_cache(path, CacheMode::Direct, false) {
            return Ok((f, true));
        }
    }
    let f = target::open_with_cache(path, CacheMode::Buffered, false)
        .map_err(|e| anyhow::anyhow!("cannot open '{}': {e}", path.display()))?;
    Ok((f, false))
}

/// What one reader of [`read_region`] found in its chunks.
#[derive(Default)]
struct Partial {
    pages_checked: u64,
    log_blocks_checked: u64,
    /// Pages holding an intact image newer than acknowledged.
    newer: u64,
    findings: Vec<PageFinding>,
    /// Acknowledged log blocks not found intact: lost, or out of order.
    log_lost: Vec<PageFinding>,
    /// The newest log block (log sequence index) found intact.
    newest_log: Option<u64>,
}

/// Reads `[start, start+len)` sequentially in 1 MiB requests on [`READERS`]
/// threads, each with its own I/O engine (io_uring; the sync engine where the
/// kernel refuses it) and its own share of the [`DEPTH`] reads in flight:
/// reader `i` reads chunks `i`, `i + READERS`, ... . Each calls
/// `each(its part, first_page, bytes)` on every chunk as it completes (in any
/// order) and returns its part. A reader has [`SPARE`] buffers more than
/// reads in flight: when reads complete, the next ones are issued into spare
/// buffers first, then the completed chunks are checked, so the device keeps
/// its reads while the chunks are checked.
fn read_region<P: Default + Send>(
    f: &File,
    direct: bool,
    start: u64,
    len: u64,
    stop: &AtomicBool,
    each: impl Fn(&mut P, u64, &[u8]) + Sync,
) -> anyhow::Result<Vec<P>> {
    let each = &each;
    std::thread::scope(|sc| {
        let readers: Vec<_> = (0..READERS)
            .map(|i| {
                sc.spawn(move || {
                    let mut part = P::default();
                    read_chunks(f, direct, start, len, i, stop, |first, buf| {
                        each(&mut part, first, buf)
                    })?;
                    Ok(part)
                })
            })
            .collect();
        readers
            .into_iter()
            .map(|r| {
                r.join()
                    .map_err(|_| anyhow::anyhow!("a reading thread panicked"))?
            })
            .collect()
    })
}

/// Reader `reader` of [`read_region`]: its chunks, [`DEPTH`] / [`READERS`] in flight.
fn read_chunks(
    f: &File,
    direct: bool,
    start: u64,
    len: u64,
    reader: usize,
    stop: &AtomicBool,
    each: impl FnMut(u64, &[u8]),
) -> anyhow::Result<()> {
    let depth = DEPTH / READERS;
    let req = EngineRequest {
        kind: EngineKind::Auto,
        cache: if direct {
            CacheMode::Direct
        } else {
            CacheMode::Buffered
        },
        qd: depth as u32,
        sqpoll: false,
        hipri: false,
    };
    let cfg = EngineConfig {
        fds: vec![crate::platform::io::raw_file(f)],
        slots: depth + SPARE,
        slot_size: CHUNK,
        ..EngineConfig::default()
    };
    let (mut eng, _) = engine::create(&req, &cfg)?;
    let mut q = Queue {
        f,
        start,
        len,
        next: (reader * CHUNK) as u64,
        step: (READERS * CHUNK) as u64,
        each,
    };
    // Each read submitted on its own (as `iosim run`'s default
    // `--submit-batch 1`): reads submitted together are merged by the block
    // layer into requests of up to `max_sectors_kb` (4 MiB on a virtio
    // disk), which some devices serve slower than the 1 MiB ones this pass is
    // compared with (measured here: 0.63x of `iosim run --bs 1M`). The spare
    // buffers take the next reads while completed chunks are checked.
    let slots = eng.slots();
    Pipeline::new(slots)
        .depth(depth)
        .run(eng.as_mut(), Some(stop), &mut q)?;
    Ok(())
}

/// The reads of one reader of [`read_region`]: where its next chunk starts,
/// how far apart its chunks are, and what to do with each.
struct Queue<'a, F: FnMut(u64, &[u8])> {
    f: &'a File,
    start: u64,
    len: u64,
    next: u64,
    step: u64,
    each: F,
}

impl<F: FnMut(u64, &[u8])> Driver for Queue<'_, F> {
    type Error = anyhow::Error;

    fn next(&mut self, slot: u32, bufs: &mut Buffers<'_>) -> Next {
        if self.next >= self.len {
            return Next::End;
        }
        let n = (self.len - self.next).min(CHUNK as u64) as usize;
        verify::prestamp(&mut bufs.get(slot)[..n]);
        let io = Io::new(0, Op::Read, self.start + self.next, n as u32);
        self.next += self.step;
        Next::Io(io)
    }

    fn complete(&mut self, d: &Done, bufs: &mut Buffers<'_>) -> anyhow::Result<()> {
        let n = d.len as usize;
        let done = match d.outcome() {
            Transfer::Failed(errno) => return Err(std::io::Error::from_raw_os_error(errno).into()),
            Transfer::Full => n,
            Transfer::Short(got) => got as usize,
        };
        let buf = &mut bufs.get(d.slot)[..n];
        if done < n {
            // Short (the end of a file shorter than the writer's): what
            // cannot be read keeps the pre-read marker, reported as not read.
            read_full(self.f, &mut buf[done..], d.offset + done as u64)?;
        }
        (self.each)((d.offset - self.start) / PAGE_SIZE as u64, buf);
        Ok(())
    }
}

/// Reads until `buf` is full; a short file leaves the pre-read marker (reported as not read).
fn read_full(f: &File, buf: &mut [u8], mut off: u64) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match crate::platform::fs::read_at(f, &mut buf[done..], off) {
            Ok(0) => break,
            Ok(n) => {
                done += n;
                off += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The text report.
pub fn text(v: &CrashVerdict) -> String {
    let mut s = String::new();
    let a = &v.acks;
    let _ = writeln!(s, "iosim crash verify: {}", v.verdict);
    let _ = writeln!(
        s,
        "acknowledgements: {} ({} records from host {}, writer started {}, last acknowledgement {:.1} s later; {})",
        a.path,
        a.records,
        a.host,
        a.writer_started,
        a.writer_secs,
        match &a.writer_end {
            Some(StopReason::Error(e)) => format!("the writer stopped after an I/O error: {e}"),
            Some(r) => format!("the writer stopped normally: {r}"),
            None => "the writer did not stop normally: a crash".into(),
        }
    );
    if let Some(t) = &a.truncated_tail {
        let _ = writeln!(s, "  note: {t}");
    }
    for d in &a.damage {
        let _ = writeln!(s, "  ACK LOG DAMAGED: {d}");
    }
    for t in &v.targets {
        let _ = writeln!(
            s,
            "target {}{}: {} data pages and {} log blocks with acknowledged writes checked, {} newer than acknowledged; read {} MiB in {:.2} s ({:.0} MiB/s{})",
            t.path,
            if t.path != t.written_as { format!(" (written as {})", t.written_as) } else { String::new() },
            t.pages_checked,
            t.log_blocks_checked,
            t.newer_than_acknowledged,
            t.bytes_read >> 20,
            t.secs,
            t.mib_s,
            if t.direct { ", direct" } else { ", buffered" }
        );
    }
    if !v.findings.is_empty() {
        let _ = writeln!(
            s,
            "\n{:<12} {:<30} {:>14} {:>9} {:>9} {:>9} {:>10} {:>12}",
            "problem", "file", "offset", "kind", "expected", "found", "mechanism", "ack age ms"
        );
        for f in &v.findings {
            let _ = writeln!(
                s,
                "{:<12} {:<30} {:>14} {:>9} {:>9} {:>9} {:>10} {:>12.1}",
                format!("{}{}", f.class.label(), if f.failure { "" } else { "*" }),
                f.file,
                f.offset,
                match f.kind {
                    WriteKind::Page => "page",
                    WriteKind::Log => "log",
                },
                f.expected_generation,
                f.found_generation.map_or("-".into(), |g| g.to_string()),
                f.mechanism.name(),
                f.ack_age_ms
            );
        }
        if v.findings.iter().any(|f| !f.failure) {
            let _ = writeln!(
                s,
                "* reported, not a failure (see --output json for details)"
            );
        }
    }
    let c = &v.counts;
    let _ = writeln!(
        s,
        "\nlost acknowledged writes {}, corruption {}, misdirected {}, ordering violations {}, torn pages {} ({})",
        c.lost,
        c.corruption,
        c.misdirected,
        c.ordering_violations,
        c.torn,
        if a.torn_protection {
            "torn-write protection claimed: each is a failure"
        } else {
            "torn-write protection not claimed: reported only"
        }
    );
    for n in &v.notes {
        let _ = writeln!(s, "note: {n}");
    }
    let _ = writeln!(s, "verdict: {}", v.verdict);
    s
}

#[cfg(test)]
mod tests {
    use super::super::acklog::{AckHeader, AckTarget, AckWriter};
    use super::*;
    use crate::verify::{build_page, SECTOR};

    const SEED: u64 = 99;
    const DATA: u64 = 7;
    const LOGP: u64 = 4;

    #[test]
    fn outcomes_keep_their_words() {
        for (o, word) in [
            (CrashOutcome::Pass, "PASS"),
            (CrashOutcome::Fail, "FAIL"),
            (CrashOutcome::Incomplete, "INCOMPLETE"),
        ] {
            assert_eq!(o.to_string(), word);
            let json = serde_json::to_string(&o).unwrap();
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<CrashOutcome>(&json).unwrap(), o);
        }
    }

    fn img(page: u64, generation: u64) -> Vec<u8> {
        let mut b = vec![0u8; PAGE_SIZE];
        build_page(
            &mut b,
            SEED,
            PageId {
                file_id: 1,
                page,
                generation,
            },
            0,
        );
        b
    }

    fn torn(page: u64, a: u64, b: u64) -> Vec<u8> {
        let mut x = img(page, a);
        x[8 * SECTOR..].copy_from_slice(&img(page, b)[8 * SECTOR..]);
        x
    }

    /// Every class on one small target: (page, acknowledged generation, what is on disk).
    #[test]
    fn every_class_is_found_on_the_right_page() {
        let d = tempfile::tempdir().unwrap();
        let (f, acks) = (d.path().join("f"), d.path().join("acks"));
        let mut w = AckWriter::to_file(File::create(&acks).unwrap()).unwrap();
        w.header(&AckHeader {
            run_seed: SEED,
            page_size: PAGE_SIZE as u32,
            started_us: 1_000_000,
            torn_protection: false,
            mix: "x".into(),
            profile: None,
            host: "h".into(),
            iosim_version: "0".into(),
            targets: vec![AckTarget {
                path: f.display().to_string(),
                file_id: 1,
                region_start: 0,
                data_pages: DATA,
                log_pages: LOGP,
            }],
        })
        .unwrap();
        let mut disk = vec![0u8; ((DATA + LOGP) as usize) * PAGE_SIZE];
        let mut put = |page: u64, b: &[u8]| {
            disk[page as usize * PAGE_SIZE..(page as usize + 1) * PAGE_SIZE].copy_from_slice(b)
        };
        let mut corrupt = img(5, 1);
        corrupt[3000] ^= 0x10;
        let cases: Vec<(u64, u64, Vec<u8>, WriteKind)> = vec![
            (0, 2, img(0, 2), WriteKind::Page),         // intact
            (1, 3, img(1, 2), WriteKind::Page),         // lost: older generation
            (2, 1, torn(2, 1, 2), WriteKind::Page),     // torn in flight: reported only
            (3, 1, img(0, 1), WriteKind::Page),         // misdirected
            (4, 2, torn(4, 2, 1), WriteKind::Page),     // torn with an older half: lost
            (5, 1, corrupt, WriteKind::Page),           // corruption
            (6, 1, img(6, 4), WriteKind::Page),         // newer than acknowledged: fine
            (7, 1, img(7, 1), WriteKind::Log),          // log block 1 intact
            (8, 1, vec![0; PAGE_SIZE], WriteKind::Log), // log block 2 lost, 3 survived
            (9, 1, img(9, 1), WriteKind::Log),          // log block 3
        ];
        for (i, (page, g, b, kind)) in cases.iter().enumerate() {
            put(*page, b);
            w.push(AckRecord {
                seq: 0,
                target: 0,
                kind: *kind,
                offset: page * PAGE_SIZE as u64,
                len: PAGE_SIZE as u32,
                generation: *g,
                checksum: 0,
                mech: Mechanism::Dsync,
                ts_us: 1_000_000 + i as u64 * 1000,
            });
        }
        w.commit().unwrap();
        std::fs::write(&f, &disk).unwrap();
        let v = verify(&[], &acks, CacheMode::Buffered, &AtomicBool::new(false)).unwrap();
        let got: Vec<(u64, Failure, bool)> = v
            .findings
            .iter()
            .map(|f| (f.page, f.class, f.failure))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, Failure::Lost, true),
                (3, Failure::Misdirected, true),
                (4, Failure::Lost, true),
                (5, Failure::Corruption, true),
                (8, Failure::OrderingViolation, true),
                (2, Failure::Torn, false),
            ],
            "{}",
            text(&v)
        );
        assert_eq!(v.verdict, CrashOutcome::Fail);
        assert_eq!(v.targets[0].newer_than_acknowledged, 1);
        let lost = &v.findings[0];
        assert_eq!(
            (lost.expected_generation, lost.found_generation),
            (3, Some(2))
        );
        // The last acknowledgement is the crash: page 1's was acknowledged 8 ms before it.
        assert_eq!(lost.ack_age_ms, 8.0);
        assert!(text(&v).contains("ordering violations 1"));
    }
}
