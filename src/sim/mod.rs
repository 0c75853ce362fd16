//! `iosim sim`: simulates a database engine's I/O (SQLIOSim's job) and
//! verifies every page it reads back.
//!
//! A run is a sequence of cycles, as in SQLIOSim: initial update (every
//! page gets a new generation, logged first), initial checkpoint, the timed
//! run (RandomUser, AuditUser, ReadAheadUser, BulkUpdateUser and ShrinkUser
//! threads, with the log writer, checkpoint, lazy writer and display monitor
//! behind them), final checkpoint, and a full audit of every data page and
//! of the log. Every user owns an I/O engine (io_uring or pread/pwrite);
//! MaxOutstandingIO is a process-wide semaphore; pages are latched while a
//! user works on them, so no page is written by two users at once and the
//! table of last acknowledged generations is exact.
//!
//! See docs/sim.md.

pub mod config;
mod config_check;
pub mod config_parse;
pub mod errorlog;
pub mod files;
pub mod io;
pub mod logwriter;
pub mod summary;
pub mod users;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::engine::faulty::{Fault, FaultPlan};
use crate::stats::RwStats;
use crate::verify::{ErrorClass, PageHeader, PageId, Settled};
use config::SimConfig;
use files::SimFile;
use io::{Inflight, Semaphore, UserIo};

/// The kinds of simulated users and engine threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum UserKind {
    /// OLTP read/modify/write.
    RandomUser,
    /// DBCC-style validation reads.
    AuditUser,
    /// Scatter reads of contiguous pages.
    ReadAheadUser,
    /// Gather writes of new pages.
    BulkUpdateUser,
    /// File growth and shrink.
    ShrinkUser,
    /// Sequential log writes.
    LogWriter,
    /// Gather writes of dirty pages (initial, periodic, final).
    Checkpoint,
    /// Gather writes of dirty pages when the buffer pool fills.
    LazyWriter,
    /// End-of-cycle audit of every page and log block.
    FullAudit,
}

impl UserKind {
    /// Name in reports.
    pub fn name(self) -> &'static str {
        match self {
            UserKind::RandomUser => "RandomUser",
            UserKind::AuditUser => "AuditUser",
            UserKind::ReadAheadUser => "ReadAheadUser",
            UserKind::BulkUpdateUser => "BulkUpdateUser",
            UserKind::ShrinkUser => "ShrinkUser",
            UserKind::LogWriter => "LogWriter",
            UserKind::Checkpoint => "Checkpoint",
            UserKind::LazyWriter => "LazyWriter",
            UserKind::FullAudit => "FullAudit",
        }
    }
}

/// One detected error (a line of the JSON-lines error log).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ErrorRecord {
    /// When (UTC).
    pub time: String,
    /// Which user saw it (`RandomUser#1`).
    pub user: String,
    /// Class (`read_retry` when a retry read the expected image).
    pub class: ErrorClass,
    /// What the first read looked like, when a retry recovered (the class
    /// is then `read_retry`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_read: Option<ErrorClass>,
    /// File path.
    pub file: String,
    /// File id ([FileN]).
    pub file_id: u32,
    /// Page number (for log files: the 512-byte sector of the block).
    pub page: u64,
    /// Byte offset in the file.
    pub offset: u64,
    /// `read` or `write`.
    pub op: String,
    /// The image the page should hold.
    pub expected: Option<PageId>,
    /// The header read back (None for I/O errors and log blocks).
    pub received: Option<PageHeader>,
    /// What was found and what it means.
    pub detail: String,
    /// Retries performed.
    pub retries: u64,
    /// A retry read the right image (the failure was transient).
    pub recovered: bool,
    /// Dump file with the expected and received images and their difference.
    pub dump: Option<String>,
}

impl ErrorRecord {
    /// The record of `s` (its class and words, retries and recovery), seen
    /// now by `user` at byte `offset` of `f` (`page` of it) on `op`; no
    /// images named.
    pub fn new(user: &str, f: &SimFile, page: u64, offset: u64, op: &str, s: Settled) -> Self {
        let recovered = s.recovered();
        ErrorRecord {
            time: crate::clock::utc_now_rfc3339(),
            user: user.to_string(),
            class: s.class,
            first_read: recovered.then_some(s.first_read),
            file: f.path.display().to_string(),
            file_id: f.id,
            page,
            offset,
            op: op.into(),
            expected: None,
            received: None,
            detail: s.detail,
            retries: s.retries,
            recovered,
            dump: None,
        }
    }
}

/// Statistics of one kind of user.
#[derive(Clone, Debug, Default)]
pub struct KindStats {
    /// Per file (engine index).
    pub per_file: Vec<RwStats>,
    /// Threads of this kind that ran (summed over cycles).
    pub threads: u64,
    /// Seconds they were active (the longest, summed over cycles).
    pub secs: f64,
}

struct ErrorLog {
    jsonl: Option<std::fs::File>,
    format: errorlog::LogFormat,
    path: PathBuf,
    /// Dump files tried (numbers their names).
    dumps: u64,
    /// Dump files written.
    dumps_written: u64,
    /// Dumps not written: the --max-dumps limit was reached.
    dumps_skipped: u64,
    first: Vec<ErrorRecord>,
    by_class: BTreeMap<ErrorClass, u64>,
}

impl Drop for ErrorLog {
    fn drop(&mut self) {
        // Closes SQLIOSim's XML document when the run ends.
        if let Some(f) = self.jsonl.as_mut() {
            let _ = f.write_all(self.format.footer().as_bytes());
        }
    }
}

/// State shared by every simulated user.
pub struct Shared {
    /// The configuration.
    pub cfg: SimConfig,
    /// The files (index = engine file index).
    pub files: Vec<SimFile>,
    /// Indices of data files.
    pub data: Vec<usize>,
    /// Indices of log files.
    pub logs: Vec<usize>,
    /// Stop everything (Ctrl-C, or an error with StopOnError).
    pub stop: Arc<AtomicBool>,
    /// Set when an error stopped the run.
    pub stopped_by_error: AtomicBool,
    /// End of the timed part of the current cycle.
    pub cycle_stop: AtomicBool,
    /// I/O bursts allowed (no throttling).
    pub burst: AtomicBool,
    /// What the users draw from (probabilities and ranges, checked).
    pub choices: config::Choices,
    /// MaxOutstandingIO.
    pub sem: Semaphore,
    errors: Mutex<ErrorLog>,
    /// Errors detected.
    pub error_count: AtomicU64,
    /// Dirty pages in the buffer pool.
    pub dirty_count: AtomicU64,
    /// Buffer pool size in pages (MaxMemoryMB).
    pub pool_pages: u64,
    /// The log.
    pub log: logwriter::LogShared,
    stats: Mutex<BTreeMap<UserKind, KindStats>>,
    /// In-flight I/O of every user, for the display monitor.
    pub inflight: Mutex<Vec<Arc<Inflight>>>,
    warnings: Mutex<Vec<String>>,
    notes: Mutex<Vec<String>>,
    /// Fault plan, when faults are injected.
    pub faults: Option<Arc<Mutex<FaultPlan>>>,
    /// Pages checked.
    pub pages_verified: AtomicU64,
    /// Pages written and acknowledged.
    pub pages_written: AtomicU64,
    /// Log blocks written.
    pub log_blocks_written: AtomicU64,
    /// Log blocks read back and checked.
    pub log_blocks_verified: AtomicU64,
    /// File growths.
    pub grows: AtomicU64,
    /// File shrinks.
    pub shrinks: AtomicU64,
    /// Long-I/O warnings issued.
    pub long_io_warnings: AtomicU64,
    quiet: bool,
    /// --allow-destroy (dump files follow the test files' ownership rules).
    allow_destroy: bool,
    /// --max-dumps: dump files written at most.
    max_dumps: u64,
}

impl Shared {
    /// Records an error: counts it, appends it to the JSON-lines log, writes
    /// a dump when images are given, prints it, and stops the run when
    /// StopOnError says so.
    pub fn report(&self, mut rec: ErrorRecord, images: Option<(&[u8], &[u8])>) {
        let mut log = self.errors.lock().expect("error log lock");
        let images = images.filter(|_| {
            if log.dumps < self.max_dumps {
                return true;
            }
            log.dumps_skipped += 1;
            if log.dumps_skipped == 1 {
                self.warn(if self.max_dumps == 0 {
                    "no dump files are written (--max-dumps 0): errors are logged without one".into()
                } else {
                    format!(
                        "{} dump files written, the most --max-dumps allows: later errors are logged without a dump file (raise --max-dumps to keep more)",
                        self.max_dumps
                    )
                });
            }
            false
        });
        if let Some((exp, got)) = images {
            log.dumps += 1;
            let stem = log
                .path
                .file_stem()
                .map_or("iosim-sim".into(), |s| s.to_string_lossy().into_owned());
            let dir = log.path.parent().map(PathBuf::from).unwrap_or_default();
            let dump = dir.join(format!("{stem}.dump{:05}.txt", log.dumps));
            let title = format!(
                "iosim sim error dump\nclass: {}{}\nfile: {} (file id {})\npage: {}  offset: {:#x}\nuser: {}\ndetail: {}\nexpected: {:?}\nreceived header: {:?}\nretries: {} recovered: {}\n(the expected image is rebuilt from the run seed; its timestamp is copied from the received header; the received image is the first read's)",
                rec.class.name(),
                rec.first_read
                    .map_or(String::new(), |c| format!(" (first read: {})", c.name())),
                rec.file,
                rec.file_id,
                rec.page,
                rec.offset,
                rec.user,
                rec.detail,
                rec.expected,
                rec.received,
                rec.retries,
                rec.recovered
            );
            let written = crate::outfile::write(
                &dump,
                "dump file",
                crate::verify::dump_text(&title, exp, got).as_bytes(),
                crate::outfile::Existing::IfIosims {
                    allow_destroy: self.allow_destroy,
                },
            );
            match written {
                Ok(()) => {
                    log.dumps_written += 1;
                    rec.dump = Some(dump.display().to_string());
                }
                Err(e) => self.warn(format!("cannot write dump file {}: {e}", dump.display())),
            }
        }
        if !self.quiet {
            crate::say!(
                "iosim sim: ERROR {} on {} page {} (offset {:#x}) by {}: {}{}",
                rec.class.name(),
                rec.file,
                rec.page,
                rec.offset,
                rec.user,
                rec.detail,
                rec.dump
                    .as_ref()
                    .map_or(String::new(), |d| format!(" [dump: {d}]"))
            );
        }
        let text = log.format.record(&rec);
        if let Some(f) = log.jsonl.as_mut() {
            let _ = f.write_all(text.as_bytes());
        }
        *log.by_class.entry(rec.class).or_default() += 1;
        if log.first.len() < 1000 {
            log.first.push(rec);
        }
        self.error_count.fetch_add(1, Ordering::AcqRel);
        if self.cfg.stop_on_error {
            self.stopped_by_error.store(true, Ordering::Release);
            self.stop.store(true, Ordering::Release);
        }
    }

    /// Writes every file's final summary into the error log, as SQLIOSim
    /// does at the end of a run (its XML only).
    fn log_summary(&self, r: &summary::SimResult) {
        let lines: Vec<String> = r.files.iter().flat_map(summary::final_summary).collect();
        let mut log = self.errors.lock().expect("error log lock");
        let text = log.format.summary(&crate::clock::utc_now_rfc3339(), &lines);
        if let Some(f) = log.jsonl.as_mut() {
            let _ = f.write_all(text.as_bytes());
        }
    }

    /// A warning for the report (also printed unless quiet).
    pub fn warn(&self, msg: String) {
        if !self.quiet {
            crate::say!("iosim sim: warning: {msg}");
        }
        self.warnings.lock().expect("warnings lock").push(msg);
    }

    /// A note, recorded once.
    pub fn note_once(&self, msg: String) {
        let mut n = self.notes.lock().expect("notes lock");
        if !n.contains(&msg) {
            n.push(msg);
        }
    }

    /// Adds a user's statistics.
    pub fn merge_stats(&self, kind: UserKind, per_file: &[RwStats], secs: f64) {
        let mut st = self.stats.lock().expect("stats lock");
        let e = st.entry(kind).or_insert_with(|| KindStats {
            per_file: (0..self.files.len()).map(|_| RwStats::default()).collect(),
            threads: 0,
            secs: 0.0,
        });
        for (a, b) in e.per_file.iter_mut().zip(per_file) {
            a.merge(b);
        }
        e.threads += 1;
        e.secs = e.secs.max(secs);
    }

    /// Milliseconds since the Unix epoch (page timestamps).
    pub fn epoch_ms(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }

    /// Counts a growth or shrink.
    pub fn bump_resize(&self, grow: bool) {
        if grow {
            self.grows.fetch_add(1, Ordering::Relaxed);
        } else {
            self.shrinks.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Dump files a run writes at most unless told otherwise (`--max-dumps`).
pub const DEFAULT_MAX_DUMPS: u64 = 20;

/// How to run besides the configuration.
#[derive(Clone, Debug)]
pub struct RunOpts {
    /// Ctrl-C flag.
    pub stop: Arc<AtomicBool>,
    /// Allow overwriting/deleting files and devices iosim did not create.
    pub allow_destroy: bool,
    /// Faults to inject (file = [FileN] number).
    pub faults: Vec<Fault>,
    /// No messages on stderr.
    pub quiet: bool,
    /// Threshold of the long-I/O warning (15 s in SQLIOSim).
    pub long_io: Duration,
    /// Dump files written at most (--max-dumps); later errors get none.
    pub max_dumps: u64,
}

/// Runs the simulation.
pub fn run(cfg: SimConfig, opts: &RunOpts) -> anyhow::Result<summary::SimResult> {
    let t0 = crate::clock::now_ns();
    // The users' choices and the faults are checked before any file is touched.
    let choices = cfg.choices()?;
    let (faults, fault_notes) = place_faults(&cfg, &opts.faults)?;
    // The error log first: refused before any data file is touched. It follows
    // the data files' rules (create new, or reuse only what iosim made).
    let error_path = cfg.error_file.clone();
    let log_existed = error_path.exists();
    let jsonl = crate::outfile::create(
        &error_path,
        "error log",
        crate::outfile::Existing::IfIosims {
            allow_destroy: opts.allow_destroy,
        },
    )?;
    let files = open_files(&cfg, opts.allow_destroy, &error_path, log_existed)?;
    let sh = Arc::new(Shared::new(
        cfg, choices, faults, files, jsonl, error_path, opts,
    )?);
    for n in fault_notes {
        if !sh.quiet {
            crate::say!("iosim sim: {n}");
        }
        sh.note_once(n);
    }
    if !sh.cfg.verify {
        sh.note_once("verification is OFF (--no-verify): pages are written and read but not checked; use this only to measure the cost of verification".into());
    }

    let writer = {
        let sh = sh.clone();
        std::thread::Builder::new()
            .name("LogWriter".into())
            .spawn(move || {
                let r = logwriter::run(sh.clone());
                // Never leave a user waiting for a log that will not be written.
                sh.log.stop();
                r
            })?
    };
    let monitor_done = Arc::new(AtomicBool::new(false));
    let monitor = {
        let (sh, done, th) = (sh.clone(), monitor_done.clone(), opts.long_io);
        std::thread::Builder::new()
            .name("DisplayMonitor".into())
            .spawn(move || users::monitor(sh, th, &done))?
    };

    let res = cycles(&sh);

    sh.log.stop();
    let wres = writer
        .join()
        .map_err(|_| anyhow::anyhow!("the log writer panicked"))?;
    monitor_done.store(true, Ordering::Release);
    let _ = monitor.join();
    // DeleteFilesAtShutdown holds whether the run ended well or not.
    let left = shutdown_files(&sh, opts.allow_destroy);
    if !sh.quiet {
        crate::say!("iosim sim: {left}");
    }
    sh.note_once(left);
    let cycles_done = res?;
    wres?;
    let duration_s = (crate::clock::now_ns() - t0) as f64 / 1e9;
    let interrupted =
        sh.stop.load(Ordering::Acquire) && !sh.stopped_by_error.load(Ordering::Acquire);
    let result = summary::build(&sh, duration_s, cycles_done, interrupted);
    sh.log_summary(&result);
    Ok(result)
}

/// Opens (creating as needed) every file of the configuration. When one
/// cannot be opened nothing was simulated: the files this run created are
/// removed, and the error log `error_path` too unless it was there before.
fn open_files(
    cfg: &SimConfig,
    allow_destroy: bool,
    error_path: &std::path::Path,
    log_existed: bool,
) -> anyhow::Result<Vec<SimFile>> {
    let mut files: Vec<SimFile> = Vec::new();
    for i in 0..cfg.files.len() {
        match files::open(cfg, i, allow_destroy) {
            Ok(f) => files.push(f),
            Err(e) => {
                // Nothing was simulated: remove what this run created, keep the rest.
                let mut removed: Vec<String> = Vec::new();
                for f in files.iter().filter(|f| f.created) {
                    if crate::targetlock::remove_file(&f.path).is_ok() {
                        removed.push(f.path.display().to_string());
                    }
                }
                if !log_existed && std::fs::remove_file(error_path).is_ok() {
                    removed.push(error_path.display().to_string());
                }
                if removed.is_empty() {
                    return Err(e);
                }
                return Err(e.context(format!(
                    "the simulation could not start; the files this run had created were removed: {}",
                    removed.join(", ")
                )));
            }
        }
    }
    Ok(files)
}

impl Shared {
    /// The state a run shares, over its opened `files` and its error log
    /// `jsonl` (at `error_path`), whose prolog it writes.
    fn new(
        cfg: SimConfig,
        choices: config::Choices,
        faults: Vec<Fault>,
        files: Vec<SimFile>,
        mut jsonl: std::fs::File,
        error_path: PathBuf,
        opts: &RunOpts,
    ) -> anyhow::Result<Shared> {
        let data: Vec<usize> = (0..files.len())
            .filter(|&i| !files[i].cfg.log_file)
            .collect();
        let logs: Vec<usize> = (0..files.len())
            .filter(|&i| files[i].cfg.log_file)
            .collect();
        // SQLIOSim's XML log starts with its prolog (JSON lines: nothing).
        let log_format = errorlog::LogFormat::for_path(&error_path);
        jsonl.write_all(log_format.header().as_bytes())?;
        let max_io = if cfg.max_outstanding_io == 0 {
            140_000
        } else {
            cfg.max_outstanding_io
        };
        let sh = Shared {
            pool_pages: cfg
                .max_memory_mb
                .saturating_mul(files::PAGES_PER_MB)
                .max(256),
            sem: Semaphore::new(max_io),
            choices,
            faults: (!faults.is_empty()).then(|| FaultPlan::new(faults, cfg.seed)),
            cfg,
            log: logwriter::LogShared::default(),
            files,
            data,
            logs,
            stop: opts.stop.clone(),
            stopped_by_error: AtomicBool::new(false),
            cycle_stop: AtomicBool::new(false),
            burst: AtomicBool::new(false),
            errors: Mutex::new(ErrorLog {
                jsonl: Some(jsonl),
                format: log_format,
                path: error_path,
                dumps: 0,
                dumps_written: 0,
                dumps_skipped: 0,
                first: Vec::new(),
                by_class: BTreeMap::new(),
            }),
            error_count: AtomicU64::new(0),
            dirty_count: AtomicU64::new(0),
            stats: Mutex::new(BTreeMap::new()),
            inflight: Mutex::new(Vec::new()),
            warnings: Mutex::new(Vec::new()),
            notes: Mutex::new(Vec::new()),
            pages_verified: AtomicU64::new(0),
            pages_written: AtomicU64::new(0),
            log_blocks_written: AtomicU64::new(0),
            log_blocks_verified: AtomicU64::new(0),
            grows: AtomicU64::new(0),
            shrinks: AtomicU64::new(0),
            long_io_warnings: AtomicU64::new(0),
            quiet: opts.quiet,
            allow_destroy: opts.allow_destroy,
            max_dumps: opts.max_dumps,
        };
        *sh.log.blocks.lock().expect("log blocks lock") = vec![BTreeMap::new(); sh.logs.len()];
        Ok(sh)
    }
}

/// Maps `--inject` faults from [FileN] numbers to file indices; a fault
/// without `file=` goes to the first data file, with a note saying so.
fn place_faults(cfg: &SimConfig, given: &[Fault]) -> anyhow::Result<(Vec<Fault>, Vec<String>)> {
    let mut faults = Vec::new();
    let mut fault_notes = Vec::new();
    for f in given {
        // Without file=: the first data file, where a fault usually is meant to go.
        let index = match f.file {
            0 => {
                let first = cfg
                    .files
                    .iter()
                    .position(|c| !c.log_file)
                    .ok_or_else(|| {
                        anyhow::anyhow!(
                            "the configuration has no data file: add a [FileN] with LogFile=FALSE"
                        )
                    })?;
                fault_notes.push(format!(
                    "--inject {}: no file= given; injecting into [File{}] {} (the first data file)",
                    f.kind.name(),
                    first + 1,
                    cfg.files[first].name.display()
                ));
                first
            }
            n if n as usize <= cfg.files.len() => n as usize - 1,
            n => anyhow::bail!(
                "fault {}: file={n} does not name a file: use the [FileN] number, 1..{} (or leave file= out for the first data file)",
                f.kind.name(),
                cfg.files.len()
            ),
        };
        faults.push(Fault {
            file: index as u32,
            ..f.clone()
        });
    }
    Ok((faults, fault_notes))
}

/// Deletes the files when DeleteFilesAtShutdown says so, and says what
/// stays on disk and where (files, error log, dump files), with sizes.
fn shutdown_files(sh: &Shared, allow_destroy: bool) -> String {
    let size = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let mut removed = Vec::new();
    let mut kept = Vec::new();
    let mut total = 0u64;
    for f in &sh.files {
        if f.is_device {
            kept.push(format!(
                "{} (block device: its contents are the simulation's)",
                f.path.display()
            ));
            continue;
        }
        if sh.cfg.delete_files_at_shutdown {
            match files::delete_file(&f.path, allow_destroy) {
                Ok(()) => {
                    removed.push(f.path.display().to_string());
                    continue;
                }
                Err(e) => sh.warn(format!("{e:#}")),
            }
        }
        let n = size(&f.path);
        total += n;
        kept.push(format!(
            "{} ({})",
            f.path.display(),
            crate::units::format_size(n)
        ));
    }
    let (log, dumps, skipped) = {
        let l = sh.errors.lock().expect("error log lock");
        (l.path.clone(), l.dumps_written, l.dumps_skipped)
    };
    if log.exists() {
        let n = size(&log);
        total += n;
        kept.push(format!(
            "error log {} ({})",
            log.display(),
            crate::units::format_size(n)
        ));
    }
    if dumps > 0 {
        kept.push(format!("{dumps} dump file(s) beside the error log"));
    }
    if skipped > 0 {
        kept.push(format!(
            "no dump file for {skipped} more error(s) (--max-dumps {})",
            sh.max_dumps
        ));
    }
    let mut s = String::new();
    if !removed.is_empty() {
        s.push_str(&format!(
            "removed at shutdown (DeleteFilesAtShutdown): {}; ",
            removed.join(", ")
        ));
    }
    s.push_str(&format!(
        "left on disk, {} in files: {}",
        crate::units::format_size(total),
        kept.join(", ")
    ));
    if !sh.cfg.delete_files_at_shutdown && sh.files.iter().any(|f| !f.is_device) {
        s.push_str(" (delete them when done, or set DeleteFilesAtShutdown=TRUE)");
    }
    s
}

fn spawn_user(
    sh: &Arc<Shared>,
    kind: UserKind,
    n: usize,
    slots: usize,
    body: impl FnOnce(UserIo) + Send + 'static,
) -> anyhow::Result<std::thread::JoinHandle<anyhow::Result<()>>> {
    let sh = sh.clone();
    Ok(std::thread::Builder::new()
        .name(format!("{}#{n}", kind.name()))
        .spawn(move || {
            let io = UserIo::new(&sh, kind, n, slots, crate::verify::PAGE_SIZE)?;
            body(io);
            Ok(())
        })?)
}

/// Runs the cycles; returns how many completed.
fn cycles(sh: &Arc<Shared>) -> anyhow::Result<u64> {
    let cfg = &sh.cfg;
    let mut done = 0u64;
    loop {
        if sh.stop.load(Ordering::Acquire) {
            break;
        }
        // Initial update and initial checkpoint (bursts allowed).
        sh.burst.store(cfg.allow_io_bursts, Ordering::Release);
        sh.cycle_stop.store(false, Ordering::Release);
        {
            let mut cp = checkpoint_io(sh)?;
            users::initial_update(&mut cp);
            users::checkpoint_all(&mut cp);
        }
        sh.burst.store(false, Ordering::Release);

        // Timed run.
        let threads = spawn_users(sh)?;
        let end = crate::clock::now_ns()
            .saturating_add(u64::try_from(cfg.test_cycle_duration.as_nanos()).unwrap_or(u64::MAX));
        while crate::clock::now_ns() < end && !sh.stop.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(20));
        }
        sh.cycle_stop.store(true, Ordering::Release);
        join_users(threads)?;

        end_of_cycle(sh)?;
        if sh.stop.load(Ordering::Acquire) {
            break;
        }
        done += 1;
        if !sh.quiet {
            crate::say!(
                "iosim sim: cycle {done} done: {} errors so far",
                sh.error_count.load(Ordering::Acquire)
            );
        }
        if cfg.test_cycles > 0 && done >= cfg.test_cycles {
            break;
        }
    }
    Ok(done)
}

/// The I/O of a checkpoint run outside the timed part (initial and final).
fn checkpoint_io(sh: &Arc<Shared>) -> anyhow::Result<UserIo> {
    UserIo::new(
        sh,
        UserKind::Checkpoint,
        0,
        config::CHECKPOINT_RUN as usize,
        crate::verify::PAGE_SIZE,
    )
}

/// A kind of simulated user of the timed run: how many of it run, the pages
/// each one's I/O holds at most, and its body (given the user's number, from 0).
struct UserSpawn {
    kind: UserKind,
    count: usize,
    slots: usize,
    body: fn(UserIo, usize),
}

/// The five kinds of simulated users, in the order they start.
fn user_kinds(cfg: &SimConfig) -> [UserSpawn; 5] {
    let count = |n: i64| n.max(0) as usize;
    [
        UserSpawn {
            kind: UserKind::RandomUser,
            count: count(cfg.random.user_count),
            slots: cfg.random.max_chain as usize,
            body: |io, _| users::random_user(io),
        },
        UserSpawn {
            kind: UserKind::AuditUser,
            count: count(cfg.audit.user_count),
            slots: cfg.audit.buffers_validated as usize,
            body: users::audit_user,
        },
        UserSpawn {
            kind: UserKind::ReadAheadUser,
            count: count(cfg.read_ahead.user_count),
            slots: cfg.read_ahead.max_pages as usize,
            body: |io, _| users::read_ahead_user(io),
        },
        UserSpawn {
            kind: UserKind::BulkUpdateUser,
            count: count(cfg.bulk.user_count),
            slots: cfg.bulk.max_pages as usize,
            body: |io, _| users::bulk_update_user(io),
        },
        UserSpawn {
            kind: UserKind::ShrinkUser,
            count: 1,
            slots: 1,
            body: |io, _| users::shrink_user(io),
        },
    ]
}

/// Starts the timed run's threads: every simulated user (named
/// `RandomUser#1`..), then the lazy writer and the periodic checkpoint.
fn spawn_users(
    sh: &Arc<Shared>,
) -> anyhow::Result<Vec<std::thread::JoinHandle<anyhow::Result<()>>>> {
    let cfg = &sh.cfg;
    let mut threads = Vec::new();
    for u in user_kinds(cfg) {
        for n in 0..u.count {
            let body = u.body;
            threads.push(spawn_user(sh, u.kind, n + 1, u.slots, move |io| {
                body(io, n)
            })?);
        }
    }
    threads.push(spawn_user(
        sh,
        UserKind::LazyWriter,
        1,
        config::CHECKPOINT_RUN as usize,
        users::lazy_writer,
    )?);
    let every =
        (cfg.test_cycle_duration / 3).clamp(Duration::from_secs(1), Duration::from_secs(60));
    threads.push(spawn_user(
        sh,
        UserKind::Checkpoint,
        1,
        config::CHECKPOINT_RUN as usize,
        move |io| users::checkpoint_thread(io, every),
    )?);
    Ok(threads)
}

/// Waits for every thread of the timed run; the first error (or panic) is
/// the result.
fn join_users(threads: Vec<std::thread::JoinHandle<anyhow::Result<()>>>) -> anyhow::Result<()> {
    let mut first_err = None;
    for t in threads {
        match t.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert(anyhow::anyhow!("a simulated user panicked"));
            }
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// The end of a cycle: the final checkpoint (bursts allowed), then the full
/// audit of every data page and of the log.
fn end_of_cycle(sh: &Arc<Shared>) -> anyhow::Result<()> {
    sh.burst.store(sh.cfg.allow_io_bursts, Ordering::Release);
    {
        let mut cp = checkpoint_io(sh)?;
        users::checkpoint_all(&mut cp);
    }
    sh.burst.store(false, Ordering::Release);
    {
        let mut au = UserIo::new(sh, UserKind::FullAudit, 0, 64, crate::verify::PAGE_SIZE)?;
        users::full_audit(&mut au);
    }
    {
        let mut la = UserIo::new(sh, UserKind::FullAudit, 1, 1, crate::verify::MAX_LOG_BLOCK)?;
        logwriter::audit(&mut la);
    }
    Ok(())
}
