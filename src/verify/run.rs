//! `iosim run --verify`: its options, the per-worker counts, the report in
//! the run's result (text and JSON) and the state file that carries a
//! generation table from one run to the next (fio's `verify_state_save` /
//! `verify_state_load`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::table::{GenTable, Judged};
use super::{ErrorClass, Retried};

/// Error records kept per worker (all errors are counted).
pub const RECORDS_PER_WORKER: usize = 32;
/// Error records kept in the report.
pub const RECORDS_KEPT: usize = 100;

/// How `iosim run` verifies data (the library's plain configuration of
/// `--verify` and its companions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyOptions {
    /// After the measured window, read back every block written (fio's `do_verify`).
    pub pass: bool,
    /// Every N writes of a worker, re-read those N blocks (fio's `verify_backlog`); 0 = off.
    pub backlog: u64,
    /// Skip the workload: only the verify pass over the blocks a state file names (fio's `verify_only`).
    pub only: bool,
    /// Load the generation tables from here when it exists, save them here at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<PathBuf>,
}

/// Where a data error was seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// A read of the workload.
    Workload,
    /// A `--verify-backlog` re-read.
    Backlog,
    /// The verify pass.
    Pass,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Workload => "workload",
            Phase::Backlog => "backlog",
            Phase::Pass => "pass",
        }
    }
}

/// One data error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifyErrorRecord {
    /// Target index.
    pub target: usize,
    /// Byte offset of the block.
    pub offset: u64,
    /// Block length.
    pub len: u64,
    /// The simulator's error class (`stale_read` a lost write, `read_retry`
    /// a read that returned wrong data and read right on a re-read).
    pub class: ErrorClass,
    /// What the first read looked like, when a re-read recovered (the class
    /// is then `read_retry`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_read: Option<ErrorClass>,
    /// Re-reads done.
    #[serde(default)]
    pub retries: u64,
    /// Generation the block had to hold (at least).
    pub expected_generation: u32,
    /// Generation its header named (0: no valid header).
    pub found_generation: u64,
    /// Where it was seen.
    pub phase: Phase,
    /// What was wrong.
    pub detail: String,
}

/// What one worker checked (merged into the report).
#[derive(Clone, Debug, Default)]
pub struct VerifyCounts {
    /// Verified writes completed.
    pub writes: u64,
    /// Reads judged (workload, backlog and pass).
    pub reads_checked: u64,
    /// Of those, intact with the expected generation.
    pub good: u64,
    /// Reads of blocks not written in this run (skipped).
    pub unwritten: u64,
    /// Reads that raced a write to the same block (old, new or torn: allowed).
    pub raced: u64,
    /// `--verify-backlog` re-reads.
    pub backlog_reads: u64,
    /// Blocks read by the verify pass.
    pub pass_blocks: u64,
    /// Nanoseconds this worker spent in the verify pass.
    pub pass_ns: u64,
    /// Data errors per class (in [`ErrorClass::ALL`] order).
    pub errors: [u64; ErrorClass::ALL.len()],
    /// The first few.
    pub records: Vec<VerifyErrorRecord>,
}

impl VerifyCounts {
    /// Counts kept by a worker (its records preallocated: no allocation per I/O).
    pub fn new() -> VerifyCounts {
        VerifyCounts {
            records: Vec::with_capacity(RECORDS_PER_WORKER),
            ..Default::default()
        }
    }

    /// Counts the judgement of one read of block `b` of `t` (target
    /// `target`), with what re-reading it showed when it was bad.
    #[inline]
    pub fn count(
        &mut self,
        j: Judged,
        retried: Retried,
        t: &GenTable,
        target: usize,
        b: usize,
        phase: Phase,
    ) {
        self.reads_checked += 1;
        match j {
            Judged::Good => self.good += 1,
            Judged::Unwritten => self.unwritten += 1,
            Judged::Raced => self.raced += 1,
            Judged::Bad {
                finding,
                expected,
                found,
            } => self.bad(
                finding.settle(retried),
                expected,
                found,
                t,
                target,
                b,
                phase,
            ),
        }
    }

    #[cold]
    #[allow(clippy::too_many_arguments)]
    fn bad(
        &mut self,
        finding: super::Settled,
        expected: u32,
        found: u64,
        t: &GenTable,
        target: usize,
        b: usize,
        phase: Phase,
    ) {
        let i = ErrorClass::ALL
            .iter()
            .position(|c| *c == finding.class)
            .unwrap_or(0);
        self.errors[i] += 1;
        if self.records.len() < RECORDS_PER_WORKER {
            self.records.push(VerifyErrorRecord {
                target,
                offset: t.offset_of(b),
                len: t.bs,
                class: finding.class,
                first_read: finding.recovered().then_some(finding.first_read),
                retries: finding.retries,
                expected_generation: expected,
                found_generation: found,
                phase,
                detail: finding.detail,
            });
        }
    }

    /// Adds `o` into `self`.
    pub fn merge(&mut self, o: &VerifyCounts) {
        self.writes += o.writes;
        self.reads_checked += o.reads_checked;
        self.good += o.good;
        self.unwritten += o.unwritten;
        self.raced += o.raced;
        self.backlog_reads += o.backlog_reads;
        self.pass_blocks += o.pass_blocks;
        self.pass_ns = self.pass_ns.max(o.pass_ns);
        for (a, b) in self.errors.iter_mut().zip(o.errors) {
            *a += b;
        }
        for r in &o.records {
            if self.records.len() < RECORDS_KEPT {
                self.records.push(r.clone());
            }
        }
    }
}

/// The verify pass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PassReport {
    /// Blocks read and judged.
    pub blocks: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Wall time of the pass (the slowest worker).
    pub seconds: f64,
    /// Bytes read per second, MiB.
    pub mib_s: f64,
}

/// Data errors, as `iosim sim` reports them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyErrors {
    /// All data errors.
    pub count: u64,
    /// Per class (every class listed, zeros included).
    pub by_class: BTreeMap<String, u64>,
    /// The first ones, with offsets.
    pub first: Vec<VerifyErrorRecord>,
}

/// The `verify` section of a run's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifyReport {
    /// The options.
    pub options: VerifyOptions,
    /// Seed of the page images.
    pub seed: u64,
    /// Blocks tracked (all targets).
    pub blocks: u64,
    /// Memory of the generation tables.
    pub table_bytes: u64,
    /// Blocks holding a generation written by this run (or a loaded state).
    pub blocks_written: u64,
    /// Verified writes completed.
    pub writes: u64,
    /// Reads judged.
    pub reads_checked: u64,
    /// Of those, intact with the expected generation.
    pub reads_good: u64,
    /// Reads of blocks never written (skipped: no generation to expect).
    pub reads_unwritten: u64,
    /// Reads that raced a write to the same block (allowed).
    pub reads_raced: u64,
    /// `--verify-backlog` re-reads.
    pub backlog_reads: u64,
    /// The verify pass, when one ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass: Option<PassReport>,
    /// Data errors.
    pub errors: VerifyErrors,
}

impl VerifyReport {
    /// The report of a run from its workers' counts and its tables.
    pub fn new(
        options: &VerifyOptions,
        tables: &[std::sync::Arc<GenTable>],
        c: &VerifyCounts,
    ) -> Self {
        let mut by_class = BTreeMap::new();
        for (cl, n) in ErrorClass::ALL.iter().zip(c.errors) {
            by_class.insert(cl.name().to_string(), n);
        }
        let pass = (options.pass || options.only).then(|| {
            let bytes: u64 = c.pass_blocks * tables.first().map_or(0, |t| t.bs);
            let seconds = c.pass_ns as f64 / 1e9;
            PassReport {
                blocks: c.pass_blocks,
                bytes,
                seconds,
                mib_s: if seconds > 0.0 {
                    bytes as f64 / seconds / 1048576.0
                } else {
                    0.0
                },
            }
        });
        VerifyReport {
            options: options.clone(),
            seed: tables.first().map_or(0, |t| t.seed),
            blocks: tables.iter().map(|t| t.blocks() as u64).sum(),
            table_bytes: tables.iter().map(|t| t.blocks() as u64 * 4).sum(),
            blocks_written: tables.iter().map(|t| t.written()).sum(),
            writes: c.writes,
            reads_checked: c.reads_checked,
            reads_good: c.good,
            reads_unwritten: c.unwritten,
            reads_raced: c.raced,
            backlog_reads: c.backlog_reads,
            pass,
            errors: VerifyErrors {
                count: c.errors.iter().sum(),
                by_class,
                first: c.records.clone(),
            },
        }
    }

    /// The text section of `iosim run` (after the table of rates).
    pub fn text(&self, paths: &[String]) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "\nverify: {} verified writes, {} blocks written of {} tracked ({} of generation table)",
            self.writes,
            self.blocks_written,
            self.blocks,
            crate::units::format_size(self.table_bytes)
        );
        let _ = writeln!(
            s,
            "  {} reads checked: {} good, {} raced a write to the same block, {} of blocks not written in this run (not checked)",
            self.reads_checked, self.reads_good, self.reads_raced, self.reads_unwritten
        );
        if self.options.backlog > 0 {
            let _ = writeln!(
                s,
                "  backlog: {} re-reads (every {} writes)",
                self.backlog_reads, self.options.backlog
            );
        }
        if let Some(p) = &self.pass {
            let _ = writeln!(
                s,
                "  verify pass: {} blocks, {} in {:.2} s ({:.0} MiB/s)",
                p.blocks,
                crate::units::format_size(p.bytes),
                p.seconds,
                p.mib_s
            );
        }
        let e = &self.errors;
        if e.count == 0 {
            let _ = writeln!(s, "  data errors: 0");
            return s;
        }
        let classes: Vec<String> = e
            .by_class
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        let _ = writeln!(s, "  DATA ERRORS: {} ({})", e.count, classes.join(", "));
        let _ = writeln!(
            s,
            "  {:<18}{:<24}{:>14}{:>10}{:>8}  {:<9}detail",
            "class", "file", "offset", "expected", "found", "seen in"
        );
        for r in &e.first {
            let _ = writeln!(
                s,
                "  {:<18}{:<24}{:>14}{:>10}{:>8}  {:<9}{}",
                r.class.name(),
                paths.get(r.target).map_or("?", |p| p.as_str()),
                r.offset,
                r.expected_generation,
                r.found_generation,
                r.phase.name(),
                r.detail
            );
        }
        if e.count > e.first.len() as u64 {
            let _ = writeln!(
                s,
                "  ... {} more (all are counted above)",
                e.count - e.first.len() as u64
            );
        }
        s
    }
}

/// Magic first line of a state file.
const STATE_MAGIC: &str = "iosim-verify-state 1";

/// The header of a state file: what the tables describe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StateHeader {
    /// Seed of the page images.
    pub seed: u64,
    /// One per target, in order.
    pub targets: Vec<StateTarget>,
}

/// One target of a state file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StateTarget {
    /// Path as given.
    pub path: String,
    /// First byte of the region.
    pub region_start: u64,
    /// Block size.
    pub bs: u64,
    /// Blocks.
    pub blocks: u64,
}

/// What went wrong with a state file.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Reading or writing failed.
    #[error("verify state file '{path}': {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        /// (Not a thiserror `source`: the message names it, and a source
        /// would be printed a second time in the error chain.)
        cause: std::io::Error,
    },
    /// Saving it failed.
    #[error(transparent)]
    Save(#[from] crate::outfile::OutFileError),
    /// The file is not a state file or is damaged.
    #[error("verify state file '{path}' is damaged or not an iosim verify state ({why}): remove it to start a new one")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// It describes other targets, regions or block sizes.
    #[error("verify state file '{path}' was saved for {saved}, this run has {now}: use the same targets, --size/--offset and --bs, or another --verify-state file")]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// What it describes.
        saved: String,
        /// What this run has.
        now: String,
    },
}

fn describe(t: &[StateTarget]) -> String {
    t.iter()
        .map(|t| {
            format!(
                "{} ({} blocks of {} from {})",
                t.path, t.blocks, t.bs, t.region_start
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes `tables` (with `paths`) to `path`: a JSON header line, then every
/// table's entries (little-endian `u32`), then the crc32c of all that.
/// Written to a temporary file and renamed, so a crash leaves the old state.
pub fn save_state(
    path: &Path,
    paths: &[String],
    tables: &[std::sync::Arc<GenTable>],
) -> Result<(), StateError> {
    let header = StateHeader {
        seed: tables.first().map_or(0, |t| t.seed),
        targets: tables
            .iter()
            .zip(paths)
            .map(|(t, p)| StateTarget {
                path: p.clone(),
                region_start: t.region_start,
                bs: t.bs,
                blocks: t.blocks() as u64,
            })
            .collect(),
    };
    let mut bytes = format!(
        "{STATE_MAGIC}\n{}\n",
        serde_json::to_string(&header).expect("state header serialises")
    )
    .into_bytes();
    for t in tables {
        for e in t.entries() {
            bytes.extend_from_slice(&e.to_le_bytes());
        }
    }
    let crc = crc32c::crc32c(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    Ok(crate::outfile::replace_atomically(
        path,
        "verify state",
        &bytes,
    )?)
}

/// Loads a state file into `tables` (which must have its shape); returns its seed.
pub fn load_state(path: &Path, paths: &[String], tables: &[GenTable]) -> Result<u64, StateError> {
    let bytes = std::fs::read(path).map_err(|cause| StateError::Io {
        path: path.to_path_buf(),
        cause,
    })?;
    let damaged = |why: &str| StateError::Damaged {
        path: path.to_path_buf(),
        why: why.into(),
    };
    if bytes.len() < 4 {
        return Err(damaged("too short"));
    }
    let (body, tail) = bytes.split_at(bytes.len() - 4);
    if crc32c::crc32c(body) != u32::from_le_bytes(tail.try_into().expect("4 bytes")) {
        return Err(damaged("checksum mismatch"));
    }
    let mut lines = body.splitn(3, |&c| c == b'\n');
    if lines.next() != Some(STATE_MAGIC.as_bytes()) {
        return Err(damaged("no 'iosim-verify-state 1' line"));
    }
    let header: StateHeader = lines
        .next()
        .and_then(|l| serde_json::from_slice(l).ok())
        .ok_or_else(|| damaged("bad header"))?;
    let data = lines.next().unwrap_or_default();
    let now: Vec<StateTarget> = tables
        .iter()
        .zip(paths)
        .map(|(t, p)| StateTarget {
            path: p.clone(),
            region_start: t.region_start,
            bs: t.bs,
            blocks: t.blocks() as u64,
        })
        .collect();
    let same = header.targets.len() == now.len()
        && header
            .targets
            .iter()
            .zip(&now)
            .all(|(a, b)| (a.region_start, a.bs, a.blocks) == (b.region_start, b.bs, b.blocks));
    if !same {
        return Err(StateError::Mismatch {
            path: path.to_path_buf(),
            saved: describe(&header.targets),
            now: describe(&now),
        });
    }
    let need: u64 = now.iter().map(|t| t.blocks * 4).sum();
    if data.len() as u64 != need {
        return Err(damaged("wrong length"));
    }
    let mut at = 0;
    for t in tables {
        let v: Vec<u32> = data[at..at + t.blocks() * 4]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        t.load_entries(&v);
        at += t.blocks() * 4;
    }
    Ok(header.seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn state_round_trips_and_refuses_damage_and_other_shapes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s");
        let t = Arc::new(GenTable::new(1, 0, 16 * 4096, 4096, 77));
        assert_eq!(t.claim(3), Some(1));
        t.complete(3, 1);
        let paths = vec!["f".to_string()];
        save_state(&p, &paths, std::slice::from_ref(&t)).unwrap();
        let u = GenTable::new(1, 0, 16 * 4096, 4096, 0);
        assert_eq!(
            load_state(&p, &paths, std::slice::from_ref(&u)).unwrap(),
            77
        );
        assert_eq!(u.entry(3), 1);
        assert_eq!(u.written(), 1);
        let other = GenTable::new(1, 0, 32 * 4096, 4096, 0);
        assert!(matches!(
            load_state(&p, &paths, &[other]),
            Err(StateError::Mismatch { .. })
        ));
        let mut b = std::fs::read(&p).unwrap();
        let n = b.len();
        b[n - 10] ^= 1;
        std::fs::write(&p, b).unwrap();
        assert!(matches!(
            load_state(&p, &paths, &[u]),
            Err(StateError::Damaged { .. })
        ));
    }

    #[test]
    fn report_counts_every_class_and_renders_errors() {
        let t = GenTable::new(1, 0, 16 * 4096, 4096, 77);
        let mut c = VerifyCounts::new();
        c.count(Judged::Good, Retried::No, &t, 0, 1, Phase::Workload);
        c.count(Judged::Unwritten, Retried::No, &t, 0, 2, Phase::Workload);
        let older = |g| Judged::Bad {
            finding: crate::verify::Finding {
                class: ErrorClass::StaleRead,
                detail: format!("generation {g} read"),
            },
            expected: 3,
            found: g,
        };
        c.count(older(2), Retried::Failed(4), &t, 0, 5, Phase::Pass);
        // The same read, right on its first re-read: a fault in the read path.
        c.count(older(1), Retried::Recovered(1), &t, 0, 6, Phase::Workload);
        let r = VerifyReport::new(
            &VerifyOptions {
                pass: true,
                ..Default::default()
            },
            &[Arc::new(t)],
            &c,
        );
        assert_eq!(r.errors.count, 2);
        assert_eq!(r.errors.by_class.len(), ErrorClass::ALL.len());
        assert_eq!(r.errors.by_class["stale_read"], 1);
        assert_eq!(r.errors.by_class["read_retry"], 1);
        let (lost, retry) = (&r.errors.first[0], &r.errors.first[1]);
        assert_eq!(lost.offset, 5 * 4096);
        assert_eq!(
            (lost.class, lost.first_read, lost.retries),
            (ErrorClass::StaleRead, None, 4)
        );
        assert_eq!(
            (retry.class, retry.first_read, retry.retries),
            (ErrorClass::ReadRetry, Some(ErrorClass::StaleRead), 1)
        );
        let txt = r.text(&["f".into()]);
        assert!(
            txt.contains("DATA ERRORS: 2 (read_retry 1, stale_read 1)"),
            "{txt}"
        );
        let line = |class: &str| {
            txt.lines()
                .find(|l| l.trim_start().starts_with(class))
                .unwrap_or_else(|| panic!("no {class} row: {txt}"))
                .to_string()
        };
        assert!(
            line("stale_read").contains("generation 2 read: lost write"),
            "{txt}"
        );
        let retry = line("read_retry");
        assert!(
            retry.contains("generation 1 read: read returned wrong data, recovered on retry 1"),
            "{txt}"
        );
        assert!(!retry.contains("lost"), "{txt}");
        // The JSON record carries the same class and words.
        let json = serde_json::to_value(&r.errors.first[1]).unwrap();
        assert_eq!(json["class"], "read_retry");
        assert_eq!(json["first_read"], "stale_read");
        assert!(json["detail"]
            .as_str()
            .unwrap()
            .contains("read returned wrong data, recovered on retry"));
    }
}
