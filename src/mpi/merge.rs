//! Merging the ranks' results into one (on rank 0): exact aggregate counts,
//! exact merged percentiles (HDR histograms added), the per-rank and per-host
//! tables, start/stop skew and the stragglers. Plain logic, no MPI: unit-tested
//! with made-up ranks.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::rank::RankInfo;
use crate::runner::{HistogramSet, PointStats, RunResult, SeriesPoint};
pub use crate::runner::{HostRow, Overhead, RankRow, RanksReport, Skew};
use crate::stats::{self, DirResult, DirStats, Percentile, RwResult, RwStats};
use crate::sysmon::check::{self_check, CheckInput, Warning, WarningCode};
use crate::sysmon::sampler::DeviceSeries;
use crate::target::TargetKind;

/// A rank whose IOPS is below this fraction of the median rank's is a straggler.
pub const STRAGGLER_FRACTION: f64 = 0.5;
/// A rank whose p99 latency is above this multiple of the median rank's is a latency outlier.
pub const LATENCY_OUTLIER_FACTOR: f64 = 3.0;

/// What one rank sends to rank 0 after the window.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RankReport {
    /// Who sent it.
    pub who: RankInfo,
    /// Wall-clock time (Unix ns) when the rank left the window-start barrier.
    pub start_unix_ns: u64,
    /// Wall-clock time (Unix ns) when the rank's window ended.
    pub stop_unix_ns: u64,
    /// The rank's own result; its histograms are HDR V2 + deflate, base64
    /// ([`compress_histograms`]).
    pub result: RunResult,
}

/// Re-encodes a result's histograms with HDR's V2 + deflate serializer (a few
/// KB per rank instead of tens), for the gather.
pub fn compress_histograms(h: &HistogramSet) -> HistogramSet {
    HistogramSet {
        read: deflate(&h.read),
        write: deflate(&h.write),
        flush: h.flush.as_deref().map(deflate),
    }
}

fn deflate(encoded: &str) -> String {
    use base64::Engine as _;
    use hdrhistogram::serialization::Serializer as _;
    let Ok(h) = stats::decode_histogram(encoded) else {
        return encoded.to_string();
    };
    let mut buf = Vec::new();
    match hdrhistogram::serialization::V2DeflateSerializer::new().serialize(&h, &mut buf) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(buf),
        Err(_) => encoded.to_string(),
    }
}

/// Rebuilds a direction's mergeable statistics from its summary and histogram.
fn dir_stats(r: &DirResult, hist: &str) -> Result<DirStats, String> {
    let mut d = DirStats::new();
    if r.ios == 0 {
        return Ok(d);
    }
    d.ios = r.ios;
    d.bytes = r.bytes;
    d.lat_sum_ns = (r.latency_us.mean * 1000.0 * r.ios as f64).round() as u128;
    d.lat_min_ns = (r.latency_us.min * 1000.0).round() as u64;
    d.lat_max_ns = (r.latency_us.max * 1000.0).round() as u64;
    for (a, b) in d.ms_hist.iter_mut().zip(&r.sqlio_histogram_ms) {
        *a = *b;
    }
    d.hist = stats::decode_histogram(hist)?;
    Ok(d)
}

/// A rank's whole-run statistics, mergeable.
fn rank_stats(r: &RunResult) -> Result<RwStats, String> {
    let flush = match (&r.total.flush, &r.histograms.flush) {
        (Some(f), Some(h)) => dir_stats(f, h)?,
        _ => DirStats::new(),
    };
    Ok(RwStats {
        read: dir_stats(&r.total.read, &r.histograms.read)?,
        write: dir_stats(&r.total.write, &r.histograms.write)?,
        flush,
    })
}

fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Merges interval `i` of two ranks. Counts, bytes, IOPS and MiB/s are
/// sums; mean, minimum, maximum and standard deviation are exact (the
/// standard deviation pooled from the ranks' counts, means and deviations).
/// The series keeps no per-interval histogram, so an interval's p50/p99 cannot
/// be merged exactly: the merged value is the highest rank's (an upper bound);
/// the whole-run percentiles are exact.
fn add_point(a: &mut SeriesPoint, b: &SeriesPoint) {
    a.t_s = a.t_s.max(b.t_s);
    a.duration_s = a.duration_s.max(b.duration_s);
    for (x, y) in [
        (&mut a.read, &b.read),
        (&mut a.write, &b.write),
        (&mut a.total, &b.total),
    ] {
        add_stats(x, y);
    }
}

fn add_stats(x: &mut PointStats, y: &PointStats) {
    if y.ios == 0 {
        return;
    }
    if x.ios == 0 {
        *x = y.clone();
        return;
    }
    let (nx, ny) = (x.ios as f64, y.ios as f64);
    let n = nx + ny;
    let mean = (x.lat_mean_us * nx + y.lat_mean_us * ny) / n;
    // E[X^2] of each part from its mean and (population) deviation.
    let sq = |p: &PointStats| p.lat_stddev_us.powi(2) + p.lat_mean_us.powi(2);
    let var = ((sq(x) * nx + sq(y) * ny) / n - mean * mean).max(0.0);
    x.ios += y.ios;
    x.bytes += y.bytes;
    x.iops += y.iops;
    x.mib_per_sec += y.mib_per_sec;
    x.lat_mean_us = mean;
    x.lat_stddev_us = var.sqrt();
    x.lat_min_us = x.lat_min_us.min(y.lat_min_us);
    x.lat_p50_us = x.lat_p50_us.max(y.lat_p50_us);
    x.lat_p99_us = x.lat_p99_us.max(y.lat_p99_us);
    x.lat_max_us = x.lat_max_us.max(y.lat_max_us);
}

/// The self-checks that compare a device's counters with iosim's I/O: on a
/// host with several ranks the device serves all of them, so these are
/// checked again per host against the sum of the host's ranks.
const DEVICE_CHECKS: &[WarningCode] = &[
    WarningCode::CacheAnsweredReads,
    WarningCode::DeviceExtraReads,
    WarningCode::DeviceExtraWrites,
    WarningCode::DeviceUsedByOthers,
    WarningCode::WritesMissedDevice,
    WarningCode::WritesStillCached,
];

/// The job's warnings: every rank's (once each), except the device checks of
/// hosts with several ranks (and the missing-counter warnings of ranks that
/// ran no monitor), which are checked again with the host's sums.
fn merged_warnings(reports: &[RankReport]) -> Vec<Warning> {
    let ranks_on = |h: &str| reports.iter().filter(|r| r.who.host == h).count();
    let mut out: Vec<Warning> = Vec::new();
    let mut push = |w: Warning| {
        if !out.contains(&w) {
            out.push(w);
        }
    };
    for r in reports {
        let shared = ranks_on(&r.who.host) > 1;
        for w in &r.result.warnings {
            let device_check = DEVICE_CHECKS.contains(&w.code);
            let unmonitored = r.who.local_rank != 0 && w.code == WarningCode::NoDeviceCounters;
            if !(unmonitored || shared && device_check) {
                push(w.clone());
            }
        }
    }
    for r in reports.iter().filter(|r| r.who.local_rank == 0) {
        if ranks_on(&r.who.host) < 2 {
            continue;
        }
        for d in &r.result.monitor.devices {
            let mut issued = RwStats::default();
            // Only the devices the targets are on: a partition's whole disk
            // and the device under a loop device's backing file are watched
            // too, but no target's I/O is counted against them.
            let mut anyone = false;
            let host_ranks = reports.iter().filter(|x| x.who.host == r.who.host);
            for x in host_ranks {
                for (t, res) in x.result.targets.iter().zip(&x.result.devices) {
                    if res.device().is_some_and(|dev| dev.name == d.name) {
                        anyone = true;
                        let add = |s: &mut DirStats, dr: &DirResult| {
                            s.ios += dr.ios;
                            s.bytes += dr.bytes;
                        };
                        add(&mut issued.read, &t.result.read);
                        add(&mut issued.write, &t.result.write);
                    }
                }
            }
            if !anyone {
                continue;
            }
            let input = CheckInput {
                target: format!("the targets of host {}", r.who.host),
                kind: TargetKind::File,
                cache: r.result.config.cache,
                issued_reads: issued.read.ios,
                issued_read_bytes: issued.read.bytes,
                issued_writes: issued.write.ios,
                issued_write_bytes: issued.write.bytes,
                lingering_writes: 0,
                lingering_write_bytes: 0,
                device_name: Some(format!("{} on {}", d.name, r.who.host)),
                device: Some(d.whole.clone()),
                no_device_reason: None,
                target_size: 0,
                mem_total_bytes: 0,
                file_sparse: false,
                zero_filled: false,
                direct_unavailable: false,
                loop_backing: None,
                unwritten: None,
                flushes: None,
            };
            for w in self_check(&input) {
                if DEVICE_CHECKS.contains(&w.code) {
                    push(w);
                }
            }
        }
    }
    out
}

/// Merges every rank's report (any order) into one result and the per-rank
/// report. The aggregate's window is the longest rank window; counts are sums;
/// percentiles come from the ranks' histograms added together.
pub fn merge(
    mut reports: Vec<RankReport>,
    stonewall: bool,
) -> anyhow::Result<(RunResult, RanksReport)> {
    reports.sort_by_key(|r| r.who.rank);
    if reports.is_empty() {
        anyhow::bail!("no rank reported a result");
    }
    let window = reports
        .iter()
        .map(|r| r.result.duration_s)
        .fold(0.0, f64::max);
    let mut total = RwStats::default();
    let mut stats_per_rank = Vec::new();
    for r in &reports {
        let s = rank_stats(&r.result).map_err(|e| {
            anyhow::anyhow!(
                "rank {} on {} sent a result that cannot be merged: {e}",
                r.who.rank,
                r.who.host
            )
        })?;
        total.merge(&s);
        stats_per_rank.push(s);
    }
    let mut merged = merged_result(&reports, window, &total);

    let per_rank = rank_rows(&reports);
    let skew = skew(&per_rank, window);
    let per_host = host_rows(&reports, &stats_per_rank, window);
    let stragglers = stragglers(&per_rank);
    let ranks = RanksReport {
        count: reports.len(),
        hosts_count: per_host.len(),
        stonewall,
        window_s: window,
        skew,
        per_rank,
        per_host,
        stragglers,
        overhead: Overhead::default(),
    };
    merged.notes.insert(
        0,
        format!(
            "collective run: {} ranks on {} host(s); throughput is the sum over the longest rank window ({:.3} s), latency percentiles from all ranks' histograms merged",
            ranks.count, ranks.hosts_count, window
        ),
    );
    Ok((merged, ranks))
}

/// The merged result: sums, the common `window`, everything from every rank
/// (`reports` sorted by rank, at least one); `total` is every rank's I/O.
fn merged_result(reports: &[RankReport], window: f64, total: &RwStats) -> RunResult {
    let first = &reports[0];
    let mut merged = first.result.clone();
    merged.duration_s = window;
    merged.total = total.summarize(window);
    merged.histograms = HistogramSet::of(total);
    merged.interrupted = reports.iter().any(|r| r.result.interrupted);
    merged.targets.clear();
    merged.threads.clear();
    merged.errors = Default::default();
    merged.series.total.clear();
    merged.series.targets.clear();
    merged.cpu.user_s = 0.0;
    merged.cpu.sys_s = 0.0;
    for r in reports {
        append_rank(&mut merged, r, first);
    }
    // A rank that folded intervals has longer points: its points are added
    // to the others' by position all the same, and the merged series says so.
    let series = reports.iter().map(|r| &r.result.series);
    merged.series.folded_intervals = series
        .clone()
        .map(|s| s.folded_intervals)
        .max()
        .unwrap_or(0);
    merged.series.longest_point_s = series.map(|s| s.longest_point_s).fold(0.0, f64::max);
    merged.warnings = merged_warnings(reports);
    // Each rank's changes are of its own device and series: its warnings
    // (rate_limited) carry them into the merged document, ranked.
    merged.changes = Default::default();
    let mut late = stats::SlowAfterWindow::default();
    for r in reports
        .iter()
        .filter_map(|r| r.result.slow_after_window.as_ref())
    {
        late.merge(r);
    }
    merged.slow_after_window = late.if_slow();
    merged.cpu.process_pct_of_one_core = if window > 0.0 {
        100.0 * (merged.cpu.user_s + merged.cpu.sys_s) / window
    } else {
        0.0
    };
    merged
}

/// Adds rank `r`'s targets, threads, errors, CPU time, series and notes (those
/// the `first` rank does not have, named by rank) to `merged`.
fn append_rank(merged: &mut RunResult, r: &RankReport, first: &RankReport) {
    let res = &r.result;
    let thread_base = merged.threads.len();
    let target_base = merged.targets.len();
    merged.targets.extend(res.targets.iter().cloned());
    merged
        .threads
        .extend(res.threads.iter().cloned().map(|mut t| {
            t.thread += thread_base;
            t.target += target_base;
            t
        }));
    merged.errors.count += res.errors.count;
    for e in &res.errors.first {
        if merged.errors.first.len() < 100 {
            merged.errors.first.push(e.clone());
        }
    }
    merged.cpu.user_s += res.cpu.user_s;
    merged.cpu.sys_s += res.cpu.sys_s;
    for (i, p) in res.series.total.iter().enumerate() {
        match merged.series.total.get_mut(i) {
            Some(m) => add_point(m, p),
            None => merged.series.total.push(p.clone()),
        }
    }
    merged
        .series
        .targets
        .extend(res.series.targets.iter().cloned());
    if r.who.rank != first.who.rank {
        for n in res.notes.iter().filter(|n| !first.result.notes.contains(n)) {
            let n = format!("rank {} on {}: {n}", r.who.rank, r.who.host);
            if !merged.notes.contains(&n) {
                merged.notes.push(n);
            }
        }
    }
}

/// Per rank, with start/stop offsets from the earliest.
fn rank_rows(reports: &[RankReport]) -> Vec<RankRow> {
    let start0 = reports.iter().map(|r| r.start_unix_ns).min().unwrap_or(0);
    let stop0 = reports.iter().map(|r| r.stop_unix_ns).min().unwrap_or(0);
    reports
        .iter()
        .map(|r| RankRow {
            rank: r.who.rank,
            host: r.who.host.clone(),
            local_rank: r.who.local_rank,
            duration_s: r.result.duration_s,
            start_offset_ms: r.start_unix_ns.saturating_sub(start0) as f64 / 1e6,
            stop_offset_ms: r.stop_unix_ns.saturating_sub(stop0) as f64 / 1e6,
            errors: r.result.errors.count,
            interrupted: r.result.interrupted,
            targets: r.result.targets.iter().map(|t| t.path.clone()).collect(),
            result: r.result.total.clone(),
            histograms: r.result.histograms.clone(),
        })
        .collect()
}

/// How far apart the ranks started, stopped and ran; `window` is the longest run.
fn skew(per_rank: &[RankRow], window: f64) -> Skew {
    let durations: Vec<f64> = per_rank.iter().map(|r| r.duration_s).collect();
    Skew {
        start_ms: per_rank
            .iter()
            .map(|r| r.start_offset_ms)
            .fold(0.0, f64::max),
        stop_ms: per_rank
            .iter()
            .map(|r| r.stop_offset_ms)
            .fold(0.0, f64::max),
        min_duration_s: durations.iter().copied().fold(f64::INFINITY, f64::min),
        max_duration_s: window,
    }
}

/// Per host: sums over the common window; the monitor of the host's
/// lowest rank (`%l` 0, the only one that ran one).
fn host_rows(reports: &[RankReport], stats_per_rank: &[RwStats], window: f64) -> Vec<HostRow> {
    let mut per_host: Vec<HostRow> = Vec::new();
    for (r, s) in reports.iter().zip(stats_per_rank) {
        let t = s.total();
        let i = match per_host.iter().position(|h| h.host == r.who.host) {
            Some(i) => i,
            None => {
                per_host.push(host_row(r));
                per_host.len() - 1
            }
        };
        let h = &mut per_host[i];
        h.ranks.push(r.who.rank);
        h.ios += t.ios;
        h.errors += r.result.errors.count;
        if window > 0.0 {
            h.iops += t.ios as f64 / window;
            h.mib_per_sec += t.bytes as f64 / window / 1_048_576.0;
        }
    }
    per_host
}

/// A host's row before its ranks are added: the monitor of rank `r`, the
/// host's lowest, without the device series.
fn host_row(r: &RankReport) -> HostRow {
    HostRow {
        host: r.who.host.clone(),
        ranks: Vec::new(),
        ios: 0,
        iops: 0.0,
        mib_per_sec: 0.0,
        errors: 0,
        cpu: r
            .result
            .monitor
            .cpu_whole
            .iter()
            .find(|c| c.cpu.is_none())
            .cloned(),
        devices: r
            .result
            .monitor
            .devices
            .iter()
            .map(|d| DeviceSeries {
                series: Vec::new(),
                ..d.clone()
            })
            .collect(),
    }
}

/// Names the ranks far from the others: IOPS below half the median, p99
/// latency above three times the median, errors, interruptions.
pub fn stragglers(rows: &[RankRow]) -> Vec<String> {
    let mut out = Vec::new();
    if rows.len() < 2 {
        return out;
    }
    let med_iops = median(rows.iter().map(|r| r.result.total.iops).collect());
    let med_p99 = median(
        rows.iter()
            .map(|r| r.result.total.latency_us.p(Percentile::P99))
            .collect(),
    );
    for r in rows {
        let t = &r.result.total;
        if med_iops > 0.0 && t.iops < STRAGGLER_FRACTION * med_iops {
            out.push(format!(
                "rank {} on {}: {:.0} IOPS, {:.0}% of the median rank ({:.0})",
                r.rank,
                r.host,
                t.iops,
                100.0 * t.iops / med_iops,
                med_iops
            ));
        }
        let p99 = t.latency_us.p(Percentile::P99);
        if med_p99 > 0.0 && p99 > LATENCY_OUTLIER_FACTOR * med_p99 {
            out.push(format!(
                "rank {} on {}: p99 latency {:.1} us, {:.1}x the median rank's ({:.1} us)",
                r.rank,
                r.host,
                p99,
                p99 / med_p99,
                med_p99
            ));
        }
        if r.errors > 0 {
            out.push(format!(
                "rank {} on {}: {} I/O errors",
                r.rank, r.host, r.errors
            ));
        }
        // When every rank was interrupted (Ctrl-C on the launcher) the
        // result says so once; only a lone interrupted rank stands out.
        if r.interrupted && !rows.iter().all(|x| x.interrupted) {
            out.push(format!("rank {} on {}: interrupted", r.rank, r.host));
        }
    }
    out
}

impl RanksReport {
    /// The per-rank part of the text report.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "\nRanks: {} on {} host(s), window {:.3} s{}; skew: start {:.1} ms, stop {:.1} ms; rank windows {:.3}..{:.3} s",
            self.count,
            self.hosts_count,
            self.window_s,
            if self.stonewall { " (stonewall)" } else { "" },
            self.skew.start_ms,
            self.skew.stop_ms,
            self.skew.min_duration_s,
            self.skew.max_duration_s
        );
        let hw = self
            .per_rank
            .iter()
            .map(|r| r.host.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let _ = writeln!(
            s,
            "{:>5}  {:<hw$}  {:>12}  {:>9}  {:>10}  {:>10}  {:>7}",
            "rank", "host", "IOPS", "MiB/s", "mean us", "p99 us", "errors"
        );
        for r in &self.per_rank {
            let t = &r.result.total;
            let _ = writeln!(
                s,
                "{:>5}  {:<hw$}  {:>12.1}  {:>9.2}  {:>10.1}  {:>10.1}  {:>7}",
                r.rank,
                r.host,
                t.iops,
                t.mib_per_sec,
                t.latency_us.mean,
                t.latency_us.p(Percentile::P99),
                r.errors
            );
        }
        let _ = writeln!(s, "Per host:");
        let _ = writeln!(
            s,
            "{:<hw$}  {:>5}  {:>12}  {:>9}  {:>7}  {:>6}",
            "host", "ranks", "IOPS", "MiB/s", "errors", "cpu %"
        );
        for h in &self.per_host {
            let _ = writeln!(
                s,
                "{:<hw$}  {:>5}  {:>12.1}  {:>9.2}  {:>7}  {:>6}",
                h.host,
                h.ranks.len(),
                h.iops,
                h.mib_per_sec,
                h.errors,
                h.cpu
                    .as_ref()
                    .map(|c| format!("{:.0}", c.busy_pct))
                    .unwrap_or_else(|| "-".into())
            );
            for d in &h.devices {
                let w = &d.whole;
                let _ = writeln!(
                    s,
                    "  {}: {:.0} transfers/s (r {}, w {}), {:.2} MiB/s",
                    d.name,
                    w.transfers_per_sec,
                    w.reads,
                    w.writes,
                    w.bytes_per_sec / 1_048_576.0
                );
            }
        }
        let _ = writeln!(
            s,
            "Collective overhead (rank 0): start-up {:.3} s (MPI start and agreement {:.3} s), gather {:.3} s",
            self.overhead.startup_s, self.overhead.init_s, self.overhead.gather_s
        );
        if self.stragglers.is_empty() {
            let _ = writeln!(s, "Stragglers: none");
        } else {
            for l in &self.stragglers {
                let _ = writeln!(s, "Straggler: {l}");
            }
        }
        s
    }
}

/// One rank's line for a command that each rank runs on its own and that
/// only reports together (`sim`: each rank simulates its own database files).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SoloRow {
    /// Who.
    pub who: RankInfo,
    /// Its run's length, s.
    pub duration_s: f64,
    /// Its errors.
    pub errors: u64,
    /// Whether it was interrupted.
    pub interrupted: bool,
    /// Its files.
    pub targets: Vec<String>,
    /// Its reads, writes and both.
    pub result: RwResult,
}

/// Every rank's line and the job's sums (`ranks` in `sim`'s JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SoloReport {
    /// Ranks in the job.
    pub count: usize,
    /// Distinct hosts.
    pub hosts_count: usize,
    /// Errors of every rank together: any fails the job.
    pub errors: u64,
    /// Whether any rank was interrupted.
    pub interrupted: bool,
    /// I/Os of every rank together.
    pub ios: u64,
    /// Sum of the ranks' IOPS (each over its own run).
    pub iops: f64,
    /// Sum of the ranks' MiB/s.
    pub mib_per_sec: f64,
    /// One line a rank, by rank.
    pub per_rank: Vec<SoloRow>,
}

impl SoloReport {
    /// The sums of `rows`.
    pub fn new(mut rows: Vec<SoloRow>) -> SoloReport {
        rows.sort_by_key(|r| r.who.rank);
        let mut hosts: Vec<&str> = rows.iter().map(|r| r.who.host.as_str()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        SoloReport {
            count: rows.len(),
            hosts_count: hosts.len(),
            errors: rows.iter().map(|r| r.errors).sum(),
            interrupted: rows.iter().any(|r| r.interrupted),
            ios: rows.iter().map(|r| r.result.total.ios).sum(),
            iops: rows.iter().map(|r| r.result.total.iops).sum(),
            mib_per_sec: rows.iter().map(|r| r.result.total.mib_per_sec).sum(),
            per_rank: rows,
        }
    }

    /// The per-rank part of the text report.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "\nRanks: {} on {} host(s), each with its own files; together {} I/Os, {:.1} IOPS, {:.2} MiB/s, {} errors{}",
            self.count,
            self.hosts_count,
            self.ios,
            self.iops,
            self.mib_per_sec,
            self.errors,
            if self.interrupted { " (INTERRUPTED)" } else { "" }
        );
        let hw = self
            .per_rank
            .iter()
            .map(|r| r.who.host.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let _ = writeln!(
            s,
            "{:>5}  {:<hw$}  {:>9}  {:>12}  {:>9}  {:>10}  {:>10}  {:>7}",
            "rank", "host", "seconds", "IOPS", "MiB/s", "mean us", "p99 us", "errors"
        );
        for r in &self.per_rank {
            let t = &r.result.total;
            let _ = writeln!(
                s,
                "{:>5}  {:<hw$}  {:>9.1}  {:>12.1}  {:>9.2}  {:>10.1}  {:>10.1}  {:>7}",
                r.who.rank,
                r.who.host,
                r.duration_s,
                t.iops,
                t.mib_per_sec,
                t.latency_us.mean,
                t.latency_us.p(Percentile::P99),
                r.errors
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// A real (null-engine) result to fill in.
    fn template() -> RunResult {
        let spec = crate::workload::WorkloadSpec {
            engine: crate::workload::EngineKind::Null,
            duration: std::time::Duration::from_millis(20),
            ..Default::default()
        };
        crate::runner::run(&spec, &Default::default()).unwrap()
    }

    /// A rank that did `n` reads with latencies drawn from `rng`, over `secs`.
    fn fake_rank(
        base: &RunResult,
        rank: usize,
        host: &str,
        n: usize,
        secs: f64,
        rng: &mut rand::rngs::SmallRng,
        all: &mut DirStats,
    ) -> RankReport {
        let mut s = RwStats::default();
        for _ in 0..n {
            let lat = rng.gen_range(10_000u64..5_000_000);
            s.read.record(lat, 4096);
            all.record(lat, 4096);
        }
        let mut result = RunResult {
            duration_s: secs,
            total: s.summarize(secs),
            histograms: HistogramSet::of(&s),
            ..base.clone()
        };
        result.histograms = compress_histograms(&result.histograms);
        RankReport {
            who: RankInfo {
                rank,
                size: 4,
                host: host.into(),
                local_rank: rank % 2,
                local_size: 2,
            },
            start_unix_ns: 1_000_000_000 + rank as u64 * 100_000,
            stop_unix_ns: 11_000_000_000 + rank as u64 * 200_000,
            result,
        }
    }

    #[test]
    fn merged_counts_and_percentiles_are_exact() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut all = DirStats::new();
        let base = template();
        let reports: Vec<RankReport> = [
            (0, "a", 20_000),
            (1, "a", 30_000),
            (2, "b", 25_000),
            (3, "b", 2_000),
        ]
        .iter()
        .map(|&(r, h, n)| {
            fake_rank(
                &base,
                r,
                h,
                n,
                if r == 2 { 10.5 } else { 10.0 },
                &mut rng,
                &mut all,
            )
        })
        .collect();
        let (m, ranks) = merge(reports.into_iter().rev().collect(), true).unwrap();
        assert_eq!(m.total.total.ios, 77_000);
        assert_eq!(m.duration_s, 10.5);
        assert!((m.total.total.iops - 77_000.0 / 10.5).abs() < 1e-9);
        let want = all.summarize(10.5);
        assert_eq!(
            m.total.read.latency_us.percentiles,
            want.latency_us.percentiles
        );
        assert_eq!(
            stats::decode_histogram(&m.histograms.read).unwrap().len(),
            77_000
        );
        assert!((m.total.read.latency_us.mean - want.latency_us.mean).abs() < 1e-6);
        assert_eq!(
            ranks.per_rank.iter().map(|r| r.rank).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
        assert_eq!(ranks.per_host.len(), 2);
        assert_eq!(ranks.per_host[1].ios, 27_000);
        assert_eq!(ranks.skew.start_ms, 0.3);
        assert_eq!(ranks.skew.stop_ms, 0.6);
        assert_eq!(ranks.stragglers.len(), 1, "{:?}", ranks.stragglers);
        assert!(
            ranks.stragglers[0].starts_with("rank 3 on b: 200 IOPS"),
            "{:?}",
            ranks.stragglers
        );
        assert!(ranks.text().contains("Straggler: rank 3 on b"));
    }

    #[test]
    fn compressed_histograms_decode_to_the_same() {
        let mut h = stats::new_histogram();
        for v in 1..10_000u64 {
            h.record(v * 37).unwrap();
        }
        let plain = HistogramSet {
            read: stats::encode_histogram(&h),
            write: stats::encode_histogram(&stats::new_histogram()),
            flush: None,
        };
        let small = compress_histograms(&plain);
        assert!(small.read.len() < plain.read.len());
        assert_eq!(stats::decode_histogram(&small.read).unwrap(), h);
    }

    #[test]
    fn series_points_merge_sums_and_exact_spread() {
        // Two ranks' interval 0: latencies {1, 3} us and {10, 20, 30} us.
        let point = |lat: &[f64]| {
            let n = lat.len() as f64;
            let mean = lat.iter().sum::<f64>() / n;
            let sd = (lat.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
            let p = PointStats {
                ios: lat.len() as u64,
                bytes: 4096 * lat.len() as u64,
                iops: n,
                mib_per_sec: n * 4096.0 / 1_048_576.0,
                lat_mean_us: mean,
                lat_p50_us: lat[lat.len() / 2],
                lat_p99_us: *lat.last().unwrap(),
                lat_max_us: *lat.last().unwrap(),
                lat_min_us: lat[0],
                lat_stddev_us: sd,
            };
            SeriesPoint {
                t_s: 1.0,
                duration_s: 1.0,
                read: p.clone(),
                write: PointStats::default(),
                total: p,
            }
        };
        let mut a = point(&[1.0, 3.0]);
        add_point(&mut a, &point(&[10.0, 20.0, 30.0]));
        let all = point(&[1.0, 3.0, 10.0, 20.0, 30.0]);
        let (m, w) = (&a.total, &all.total);
        assert_eq!((m.ios, m.bytes), (5, 5 * 4096));
        assert_eq!(m.iops, 5.0);
        assert!((m.lat_mean_us - w.lat_mean_us).abs() < 1e-9);
        assert!((m.lat_stddev_us - w.lat_stddev_us).abs() < 1e-9);
        assert_eq!((m.lat_min_us, m.lat_max_us), (1.0, 30.0));
        // An upper bound, not the merged median (10).
        assert_eq!(m.lat_p50_us, 20.0);
        // An empty interval on one rank changes nothing.
        let before = a.clone();
        add_point(&mut a, &SeriesPoint::default());
        assert_eq!(a.total, before.total);
    }

    #[test]
    fn one_interrupted_rank_is_named_but_an_interrupted_job_is_not() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let base = template();
        let mut all = DirStats::new();
        let mut reports: Vec<RankReport> = (0..3)
            .map(|r| fake_rank(&base, r, "a", 1000, 1.0, &mut rng, &mut all))
            .collect();
        reports[1].result.interrupted = true;
        let (_, ranks) = merge(reports.clone(), false).unwrap();
        assert_eq!(
            ranks.stragglers,
            vec!["rank 1 on a: interrupted".to_string()]
        );
        for r in &mut reports {
            r.result.interrupted = true;
        }
        let (m, ranks) = merge(reports, false).unwrap();
        assert!(m.interrupted);
        assert!(ranks.stragglers.is_empty(), "{:?}", ranks.stragglers);
    }

    #[test]
    fn solo_report_sums_the_ranks_errors() {
        let row = |rank: usize, host: &str, errors: u64, ios: u64| SoloRow {
            who: RankInfo {
                rank,
                size: 3,
                host: host.into(),
                local_rank: 0,
                local_size: 1,
            },
            duration_s: 2.0,
            errors,
            interrupted: false,
            targets: vec![format!("/t/sim-{rank}.mdx")],
            result: {
                let mut s = RwStats::default();
                for _ in 0..ios {
                    s.read.record(1000, 8192);
                }
                s.summarize(2.0)
            },
        };
        let r = SoloReport::new(vec![
            row(2, "b", 0, 10),
            row(0, "a", 0, 30),
            row(1, "a", 4, 20),
        ]);
        assert_eq!((r.count, r.hosts_count, r.errors, r.ios), (3, 2, 4, 60));
        assert_eq!(r.per_rank[0].who.rank, 0);
        assert!((r.iops - 30.0).abs() < 1e-9);
        assert!(r.text().contains("together 60 I/Os"), "{}", r.text());
    }

    /// Two ranks on one host read one device; the host's one monitor (rank 0)
    /// saw both ranks' reads. Compared with one rank's reads that looks like
    /// "other processes used the device"; compared with the host's sum it is
    /// exact. Then the device sees a quarter: a cache answered the rest.
    #[test]
    fn device_checks_of_a_shared_host_use_the_hosts_sum() {
        use crate::sysmon::mounts::{DeviceInfo, Resolution};
        let base = template();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        let mut all = DirStats::new();
        let mut reports: Vec<RankReport> = (0..2)
            .map(|r| fake_rank(&base, r, "a", 1000, 1.0, &mut rng, &mut all))
            .collect();
        let per_rank_bytes = 1000 * 4096u64;
        for r in &mut reports {
            let mut t = base.targets.first().cloned().expect("a target");
            t.result = r.result.total.clone();
            r.result.targets = vec![t];
            r.result.devices = vec![Resolution::Device(DeviceInfo {
                name: "vdz".into(),
                ..Default::default()
            })];
            r.result.config.cache = crate::workload::CacheMode::Direct;
            // What each rank's own check said: the device read twice its bytes.
            r.result.warnings = vec![Warning {
                code: WarningCode::DeviceExtraReads,
                message: "vdz read twice what iosim read".into(),
            }];
        }
        let device = |bytes: u64| DeviceSeries {
            name: "vdz".into(),
            whole: crate::sysmon::diskstats::DeviceCounters {
                reads: bytes / 4096,
                read_bytes: bytes,
                ..Default::default()
            },
            series: Vec::new(),
        };
        // vdy holds a loop device's backing file (or is vdz's whole disk):
        // watched, written to, but the targets' I/O is not held against it.
        let holder = DeviceSeries {
            name: "vdy".into(),
            whole: crate::sysmon::diskstats::DeviceCounters {
                writes: 4000,
                write_bytes: 100 << 20,
                ..Default::default()
            },
            series: Vec::new(),
        };
        reports[0].result.monitor.devices = vec![device(2 * per_rank_bytes), holder];
        let w = merged_warnings(&reports);
        assert!(w.is_empty(), "{w:?}");
        reports[0].result.monitor.devices = vec![device(per_rank_bytes / 2)];
        let w = merged_warnings(&reports);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].code, WarningCode::CacheAnsweredReads);
        assert!(w[0].message.contains("vdz on a"), "{}", w[0].message);
    }
}
