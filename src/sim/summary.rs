//! Results of `iosim sim`: SQLIOSim's per-file final summary, and what it
//! lacks: per user type and per file IOPS, MiB/s and latency percentiles,
//! error counts by class, JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};

use super::files::SimFile;
use super::{ErrorRecord, KindStats, Shared, UserKind};
use crate::stats::{Percentile, RwResult, RwStats};
use crate::verify::ErrorClass;

fn attrs(p: &std::path::Path) -> crate::platform::fs::FileAttributes {
    crate::platform::fs::attributes(p).unwrap_or_default()
}

/// SQLIOSim's per-file counters plus iosim's statistics.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileSummary {
    /// File id ([FileN]).
    pub id: u32,
    /// Path.
    pub path: String,
    /// `data` or `log`.
    pub kind: String,
    /// Size at the end, bytes.
    pub size_bytes: u64,
    /// Compression attribute (statx STATX_ATTR_COMPRESSED: btrfs, `chattr +c`).
    #[serde(default)]
    pub compression: bool,
    /// Encryption attribute (statx STATX_ATTR_ENCRYPTED: fscrypt).
    #[serde(default)]
    pub encryption: bool,
    /// Sparse attribute.
    pub sparse: bool,
    /// Block device.
    pub device: bool,
    /// Direct-I/O alignment of the file or device, bytes (its sector size as I/O sees it).
    pub dio_align: u64,
    /// Target IO Duration (ms).
    pub target_io_duration_ms: u64,
    /// Running Average IO Duration (ms).
    pub running_average_io_duration_ms: f64,
    /// Number of times IO throttled.
    pub throttled: u64,
    /// IO request blocks (most I/Os in flight at once).
    pub io_request_blocks: u64,
    /// Reads (single buffer).
    pub reads: u64,
    /// Scatter Reads (vectored).
    pub scatter_reads: u64,
    /// Writes (single buffer).
    pub writes: u64,
    /// Gather Writes (vectored).
    pub gather_writes: u64,
    /// Total IO Time (ms).
    pub total_io_time_ms: u64,
    /// IOPS, MiB/s, latency percentiles over the whole run.
    pub stats: RwResult,
    /// Completed I/Os slower than 1 s and 15 s (SQL Server's error 833), from
    /// the latency histograms (0 in results from before they were counted).
    #[serde(default)]
    pub slow_ios: crate::stats::SlowIos,
}

/// Statistics of one kind of user.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UserSummary {
    /// User kind (`RandomUser`, ...).
    pub user: String,
    /// Threads that ran (over all cycles).
    pub threads: u64,
    /// Seconds active.
    pub seconds: f64,
    /// IOPS, MiB/s and latency over those seconds.
    pub stats: RwResult,
}

/// Errors.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ErrorsSummary {
    /// All errors.
    pub count: u64,
    /// Per class (every class listed, zeros included).
    pub by_class: BTreeMap<String, u64>,
    /// The first errors (up to 1000).
    pub first: Vec<ErrorRecord>,
    /// The JSON-lines error log.
    pub log: String,
    /// Dump files written beside the error log.
    #[serde(default)]
    pub dumps: u64,
    /// Errors with images that got no dump file: --max-dumps was reached.
    #[serde(default)]
    pub dumps_not_written: u64,
}

/// The result of a simulation (the JSON schema of `--output json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SimResult {
    /// Schema id.
    pub schema: String,
    /// Wall time, s.
    pub duration_s: f64,
    /// Ctrl-C stopped the run.
    pub interrupted: bool,
    /// An error stopped the run (StopOnError).
    pub stopped_on_error: bool,
    /// Cycles completed (initial update .. full audit).
    pub cycles: u64,
    /// Engine.
    pub engine: String,
    /// Pages were verified.
    pub verify: bool,
    /// Pages read and checked.
    pub pages_verified: u64,
    /// Pages written and acknowledged.
    pub pages_written: u64,
    /// Log blocks written.
    pub log_blocks_written: u64,
    /// Log blocks read back and checked.
    pub log_blocks_verified: u64,
    /// File growths / shrinks performed.
    pub grows: u64,
    /// Shrinks.
    pub shrinks: u64,
    /// Warnings about I/Os outstanding longer than the long-I/O threshold (15 s).
    pub long_io_warnings: u64,
    /// Per file.
    pub files: Vec<FileSummary>,
    /// Per user kind.
    pub users: Vec<UserSummary>,
    /// All I/O together.
    pub total: RwResult,
    /// Errors.
    pub errors: ErrorsSummary,
    /// Warnings (configuration, long I/Os).
    pub warnings: Vec<String>,
    /// Notes (engine fallback, fault injection).
    pub notes: Vec<String>,
    /// The configuration that ran. (Under mpirun/srun, this result is rank
    /// 0's own simulation; every rank's line and the job's sums are the
    /// document's `ranks`.)
    pub config: super::config::SimConfig,
}

/// Builds the result from the shared state at the end of a run.
pub fn build(sh: &Shared, duration_s: f64, cycles: u64, interrupted: bool) -> SimResult {
    let stats = sh.stats.lock().expect("stats lock").clone();
    let (users, per_file, total) = user_summaries(&stats, sh.files.len());
    let files = sh
        .files
        .iter()
        .zip(&per_file)
        .map(|(f, st)| file_summary(sh, f, st, duration_s))
        .collect();
    let log = sh.errors.lock().expect("error log lock");
    let mut by_class: BTreeMap<String, u64> = ErrorClass::ALL
        .iter()
        .map(|c| (c.name().to_string(), 0))
        .collect();
    for (c, n) in &log.by_class {
        by_class.insert(c.name().to_string(), *n);
    }
    let mut notes = sh.notes.lock().expect("notes lock").clone();
    notes.extend(injected_notes(sh));
    SimResult {
        schema: "iosim-sim/1".into(),
        duration_s,
        interrupted,
        stopped_on_error: sh.stopped_by_error.load(Ordering::Acquire),
        cycles,
        engine: sh.cfg.engine.name().to_string(),
        verify: sh.cfg.verify,
        pages_verified: sh.pages_verified.load(Ordering::Relaxed),
        pages_written: sh.pages_written.load(Ordering::Relaxed),
        log_blocks_written: sh.log_blocks_written.load(Ordering::Relaxed),
        log_blocks_verified: sh.log_blocks_verified.load(Ordering::Relaxed),
        grows: sh.grows.load(Ordering::Relaxed),
        shrinks: sh.shrinks.load(Ordering::Relaxed),
        long_io_warnings: sh.long_io_warnings.load(Ordering::Relaxed),
        files,
        users,
        total: total.summarize(duration_s),
        errors: ErrorsSummary {
            count: sh.error_count.load(Ordering::Acquire),
            by_class,
            first: log.first.clone(),
            log: log.path.display().to_string(),
            dumps: log.dumps_written,
            dumps_not_written: log.dumps_skipped,
        },
        warnings: sh.warnings.lock().expect("warnings lock").clone(),
        notes,
        config: sh.cfg.clone(),
    }
}

/// Every user kind's summary, and the statistics of every file (engine
/// index) and of all I/O together, over all users.
fn user_summaries(
    stats: &BTreeMap<UserKind, KindStats>,
    nf: usize,
) -> (Vec<UserSummary>, Vec<RwStats>, RwStats) {
    let mut per_file: Vec<RwStats> = (0..nf).map(|_| RwStats::default()).collect();
    let mut total = RwStats::default();
    let mut users = Vec::new();
    for (kind, ks) in stats {
        let mut k = RwStats::default();
        for (i, s) in ks.per_file.iter().enumerate() {
            per_file[i].merge(s);
            k.merge(s);
        }
        total.merge(&k);
        users.push(UserSummary {
            user: kind.name().to_string(),
            threads: ks.threads,
            seconds: ks.secs,
            stats: k.summarize(ks.secs),
        });
    }
    (users, per_file, total)
}

/// The summary of file `f`: SQLIOSim's counters, and `st`, the statistics
/// of every user's I/O to it.
fn file_summary(sh: &Shared, f: &SimFile, st: &RwStats, duration_s: f64) -> FileSummary {
    FileSummary {
        id: f.id,
        path: f.path.display().to_string(),
        kind: if f.cfg.log_file { "log" } else { "data" }.into(),
        size_bytes: f.page_count() * crate::verify::PAGE_SIZE as u64,
        compression: attrs(&f.path).compressed,
        encryption: attrs(&f.path).encrypted,
        sparse: f.cfg.sparse,
        device: f.is_device,
        dio_align: f.align,
        target_io_duration_ms: sh.cfg.target_io_duration_ms,
        running_average_io_duration_ms: f.running_average_ms(),
        throttled: f.ctr.throttled.load(Ordering::Relaxed),
        io_request_blocks: f.ctr.peak_outstanding.load(Ordering::Relaxed),
        reads: f.ctr.reads.load(Ordering::Relaxed),
        scatter_reads: f.ctr.scatter_reads.load(Ordering::Relaxed),
        writes: f.ctr.writes.load(Ordering::Relaxed),
        gather_writes: f.ctr.gather_writes.load(Ordering::Relaxed),
        total_io_time_ms: f.ctr.total_io_ns.load(Ordering::Relaxed) / 1_000_000,
        stats: st.summarize(duration_s),
        slow_ios: st.slow_ios(),
    }
}

/// A note per fault injected (kind, file and page), with how many times.
fn injected_notes(sh: &Shared) -> Vec<String> {
    let Some(plan) = &sh.faults else {
        return Vec::new();
    };
    let p = plan.lock().expect("fault plan lock");
    let mut counts: BTreeMap<(String, u32, u64), u64> = BTreeMap::new();
    for i in p.injected() {
        *counts
            .entry((i.kind.to_string(), i.file + 1, i.page))
            .or_default() += 1;
    }
    counts
        .into_iter()
        .map(|((k, f, pg), n)| format!("fault injected: {k} on file {f} page {pg} ({n} time(s))"))
        .collect()
}

/// SQLIOSim's final summary of one file, a line each, as it prints them
/// and as its error log holds them (one INFO entry a line,
/// [`super::errorlog::summary_entries`]): the title, then its fields in its
/// order, iosim's after them.
pub fn final_summary(f: &FileSummary) -> Vec<String> {
    let yn = |b: bool| if b { "Yes" } else { "No" };
    vec![
        format!("********** Final Summary for file {} **********", f.path),
        format!(
            "File Attributes: Compression = {}, Encryption = {}, Sparse = {}, Kind = {}, Device = {}",
            yn(f.compression),
            yn(f.encryption),
            yn(f.sparse),
            f.kind,
            yn(f.device)
        ),
        format!(
            "Target IO Duration (ms) = {}, Running Average IO Duration (ms) = {}, Number of times IO throttled = {}, IO request blocks = {}",
            f.target_io_duration_ms,
            f.running_average_io_duration_ms.round() as u64,
            f.throttled,
            f.io_request_blocks
        ),
        format!(
            "Reads = {}, Scatter Reads = {}, Writes = {}, Gather Writes = {}, Total IO Time (ms) = {}",
            f.reads, f.scatter_reads, f.writes, f.gather_writes, f.total_io_time_ms
        ),
        format!("DRIVE LEVEL: Direct I/O alignment (bytes) = {}", f.dio_align),
    ]
}

/// The errors' part of the text report.
fn errors_text(errors: &ErrorsSummary, s: &mut String) {
    let _ = writeln!(s, "\nErrors: {}", errors.count);
    for (c, n) in &errors.by_class {
        let _ = writeln!(s, "  {c:<18} {n}");
    }
    if errors.count > 0 {
        let _ = writeln!(s, "  error log: {}", errors.log);
        if errors.dumps + errors.dumps_not_written > 0 {
            let _ = writeln!(
                s,
                "  dump files: {} written beside the error log{}",
                errors.dumps,
                if errors.dumps_not_written > 0 {
                    format!(
                        ", {} more not written (the --max-dumps limit)",
                        errors.dumps_not_written
                    )
                } else {
                    String::new()
                }
            );
        }
        for e in errors.first.iter().take(10) {
            let _ = writeln!(
                s,
                "  {} file {} page {} offset {:#x} ({}, {}): {}",
                e.class.name(),
                e.file,
                e.page,
                e.offset,
                e.user,
                e.op,
                e.detail
            );
        }
    }
}

fn ms(us: f64) -> String {
    format!("{:.2}", us / 1000.0)
}

/// The text report: SQLIOSim's final summary per file, then iosim's tables.
pub fn text(r: &SimResult) -> String {
    let mut s = String::new();
    for f in &r.files {
        for line in final_summary(f) {
            let _ = writeln!(s, "{line}");
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "iosim sim: {} cycle(s) in {:.1} s, engine {}, verification {}{}",
        r.cycles,
        r.duration_s,
        r.engine,
        if r.verify { "on" } else { "OFF" },
        if r.interrupted {
            " (interrupted)"
        } else if r.stopped_on_error {
            " (stopped on error)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "pages written {}, pages verified {}, log blocks written {}, log blocks verified {}, grows {}, shrinks {}\n",
        r.pages_written, r.pages_verified, r.log_blocks_written, r.log_blocks_verified, r.grows, r.shrinks
    );
    let header = format!(
        "{:<16} {:>4} {:>10} {:>9} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "",
        "thr",
        "read IOPS",
        "read MiB/s",
        "write IOPS",
        "wr MiB/s",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms"
    );
    let row = |name: &str, thr: String, st: &RwResult| {
        format!(
            "{:<16} {:>4} {:>10.0} {:>9.2} {:>10.0} {:>9.2} {:>9} {:>9} {:>9} {:>9}",
            name,
            thr,
            st.read.iops,
            st.read.mib_per_sec,
            st.write.iops,
            st.write.mib_per_sec,
            ms(st.total.latency_us.p(Percentile::P50)),
            ms(st.total.latency_us.p(Percentile::P99)),
            ms(st.total.latency_us.p(Percentile::P99_9)),
            ms(st.total.latency_us.max)
        )
    };
    let _ = writeln!(
        s,
        "Per user type (rates over each type's active time; latency of reads and writes together):"
    );
    let _ = writeln!(s, "{header}");
    for u in &r.users {
        let _ = writeln!(s, "{}", row(&u.user, u.threads.to_string(), &u.stats));
    }
    let _ = writeln!(s, "\nPer file (rates over the whole run):");
    let _ = writeln!(s, "{header}");
    for f in &r.files {
        let _ = writeln!(
            s,
            "{}",
            row(&format!("File{} {}", f.id, f.kind), String::new(), &f.stats)
        );
    }
    let _ = writeln!(s, "{}", row("total", String::new(), &r.total));
    for f in r.files.iter().filter(|f| f.slow_ios.over_1s > 0) {
        let _ = writeln!(
            s,
            "File{} {}: {} I/O(s) over 1 s, {} over 15 s (SQL Server's error 833 threshold)",
            f.id, f.kind, f.slow_ios.over_1s, f.slow_ios.over_15s
        );
    }
    errors_text(&r.errors, &mut s);
    for w in &r.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    for n in &r.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}
