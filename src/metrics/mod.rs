//! Live metrics for Prometheus (`--metrics-listen`, docs/metrics.md).
//!
//! [`Live`] is the state a scrape reads: cumulative counters, latency
//! histograms and gauges per workload and target, the self-check warnings
//! known so far, and the devices under the targets (read from
//! `/proc/diskstats` at each scrape). The measuring code folds into it on the
//! main thread, once per interval message (never per I/O): the runner
//! (`runner::drive`) with each worker's interval statistics, and other
//! commands through the same calls. [`Server`] answers `GET /metrics`, a
//! thread per connection, with the OpenMetrics text (the `prometheus-client`
//! crate's encoder) or, for a scraper that prefers it, the classic
//! Prometheus text made from it, and stops when dropped.
//!
//! - [`listen`]: the `--metrics-listen` address and [`MetricsError`];
//! - [`server`]: the HTTP server;
//! - [`text`]: which format a scrape gets, and the classic text.

pub mod listen;
pub mod server;
pub mod text;

use std::sync::{Arc, Mutex, MutexGuard};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

use crate::stats::{DirStats, RwStats};
use crate::sysmon::check::WarningCode;
use crate::sysmon::diskstats::{self, DISKSTATS_SECTOR};

pub use listen::{ListenAddr, MetricsError};
pub use server::Server;

/// Upper bounds (seconds) of the latency histogram's buckets: log-spaced
/// 1-2.5-5 steps from 5 µs to 10 s, and +Inf.
pub const LATENCY_BUCKETS_S: [f64; 19] = [
    5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1,
    0.25, 0.5, 1.0, 2.5, 10.0,
];

/// The directions a workload's I/O is counted in (the `direction` label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Reads.
    Read,
    /// Writes.
    Write,
    /// fsync/fdatasync calls (`--fsync N`, `--sync-method fsync`).
    Flush,
}

impl Direction {
    /// Every direction, in the order [`Scope`] keeps them.
    pub const ALL: [Direction; 3] = [Direction::Read, Direction::Write, Direction::Flush];

    /// Its label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
            Direction::Flush => "flush",
        }
    }
}

/// One scope's handle in [`Live`]: a (workload, target) pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScopeId(usize);

/// Cumulative counts of one direction of one scope.
#[derive(Clone, Debug, Default)]
struct DirTotals {
    ios: u64,
    bytes: u64,
    lat_sum_ns: u128,
    /// Non-cumulative counts per [`LATENCY_BUCKETS_S`] bucket, +Inf last.
    buckets: [u64; LATENCY_BUCKETS_S.len() + 1],
}

impl DirTotals {
    /// Adds one interval's statistics (its histogram bucket by bucket).
    fn add(&mut self, d: &DirStats) {
        if d.ios == 0 {
            return;
        }
        self.ios += d.ios;
        self.bytes += d.bytes;
        self.lat_sum_ns += d.lat_sum_ns;
        for v in d.hist.iter_recorded() {
            let s = v.value_iterated_to() as f64 / 1e9;
            let i = LATENCY_BUCKETS_S.partition_point(|&b| b < s);
            self.buckets[i] += v.count_at_value();
        }
    }
}

/// One (workload, target) pair's state.
#[derive(Clone, Debug)]
struct Scope {
    labels: ScopeLabels,
    dirs: [DirTotals; 3],
    /// Errors of the runs that have ended.
    errors_done: u64,
    /// Per worker thread of the run going on: its errors so far, and the
    /// I/Os it had in flight, at its last interval message.
    errors: Vec<u64>,
    in_flight: Vec<u32>,
}

impl Scope {
    fn errors(&self) -> u64 {
        self.errors_done + self.errors.iter().sum::<u64>()
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ScopeLabels {
    workload: String,
    target: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DirLabels {
    workload: String,
    target: String,
    direction: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RateLabels {
    workload: String,
    direction: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeviceLabels {
    device: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabels {
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct InfoLabels {
    command: String,
    version: &'static str,
}

/// What a scrape shows; behind [`Live`]'s lock.
#[derive(Debug, Default)]
struct State {
    scopes: Vec<Scope>,
    /// Per workload label: its last closed interval's IOPS (read, write, total).
    rates: Vec<(String, [f64; 3])>,
    /// Kernel names of the block devices under the targets.
    devices: Vec<String>,
    /// Self-check warnings so far, by code, in the order first seen.
    warnings: Vec<(String, u64)>,
    /// Runs whose self-checks are in.
    checked_runs: u64,
}

/// The live metrics of one command: shared by the code that measures (which
/// folds into it on its main thread) and the [`Server`] (which reads it).
#[derive(Debug)]
pub struct Live {
    command: String,
    started_unix_s: f64,
    state: Mutex<State>,
}

impl Live {
    /// The state of `command` (`run`, `sim`...), empty.
    pub fn new(command: &str) -> Live {
        let started_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        Live {
            command: command.to_string(),
            started_unix_s,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere leaves counters that are still counters.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The scope of `target` in `workload`, added when first named. A scope
    /// is never removed: its counters go on across the runs of a command
    /// (qualify's stages, a profile's phases) as Prometheus expects.
    pub fn scope(&self, workload: &str, target: &str) -> ScopeId {
        let mut st = self.lock();
        if let Some(i) = st
            .scopes
            .iter()
            .position(|s| s.labels.workload == workload && s.labels.target == target)
        {
            return ScopeId(i);
        }
        st.scopes.push(Scope {
            labels: ScopeLabels {
                workload: workload.to_string(),
                target: target.to_string(),
            },
            dirs: Default::default(),
            errors_done: 0,
            errors: Vec::new(),
            in_flight: Vec::new(),
        });
        ScopeId(st.scopes.len() - 1)
    }

    /// Folds one interval of one worker thread into `scope`: its I/Os,
    /// bytes and latencies; the thread's errors since its run began, and the
    /// I/Os it had in flight when it closed the interval.
    pub fn add(&self, scope: ScopeId, thread: usize, stats: &RwStats, errors: u64, in_flight: u32) {
        let mut st = self.lock();
        let Some(s) = st.scopes.get_mut(scope.0) else {
            return;
        };
        for (t, d) in s
            .dirs
            .iter_mut()
            .zip([&stats.read, &stats.write, &stats.flush])
        {
            t.add(d);
        }
        if s.in_flight.len() <= thread {
            s.in_flight.resize(thread + 1, 0);
            s.errors.resize(thread + 1, 0);
        }
        s.errors[thread] = errors;
        s.in_flight[thread] = in_flight;
    }

    /// `scope`'s run ended: nothing in flight, its errors kept for good
    /// (the next run's threads count from zero again).
    pub fn end_run(&self, scope: ScopeId) {
        if let Some(s) = self.lock().scopes.get_mut(scope.0) {
            s.errors_done = s.errors();
            s.errors.clear();
            s.in_flight.clear();
        }
    }

    /// `workload`'s last closed interval ran at these read, write and total IOPS.
    pub fn set_rate(&self, workload: &str, iops: [f64; 3]) {
        let mut st = self.lock();
        match st.rates.iter_mut().find(|(w, _)| w == workload) {
            Some((_, r)) => *r = iops,
            None => st.rates.push((workload.to_string(), iops)),
        }
    }

    /// Adds block devices (kernel names) whose counters a scrape shows.
    pub fn watch_devices(&self, names: impl IntoIterator<Item = String>) {
        let mut st = self.lock();
        for n in names {
            if !st.devices.contains(&n) {
                st.devices.push(n);
            }
        }
    }

    /// Adds the block devices under `paths` (files, devices, or where a file
    /// will be created): for commands that fold no interval statistics of
    /// their own (sim, replay, crash write), the devices' counters are their
    /// live metrics.
    pub fn watch_targets<'a>(&self, paths: impl IntoIterator<Item = &'a std::path::Path>) {
        let names: Vec<String> = paths
            .into_iter()
            .map(crate::sysmon::mounts::resolve_target)
            .filter_map(|r| r.device().map(|d| d.monitor_names()))
            .flatten()
            .collect();
        self.watch_devices(names);
    }

    /// A run's self-checks are in: its warnings' codes (one count each).
    pub fn checked<'a>(&self, codes: impl IntoIterator<Item = &'a WarningCode>) {
        let mut st = self.lock();
        st.checked_runs += 1;
        for c in codes {
            match st.warnings.iter_mut().find(|(k, _)| k == c.as_str()) {
                Some((_, n)) => *n += 1,
                None => st.warnings.push((c.as_str().to_string(), 1)),
            }
        }
    }

    /// The OpenMetrics text of everything now (what `GET /metrics` answers).
    pub fn render(self: &Arc<Self>) -> String {
        let mut reg = prometheus_client::registry::Registry::default();
        reg.register_collector(Box::new(Scrape(self.clone())));
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &reg);
        out
    }
}

/// [`Live`] as a `prometheus-client` collector: encoded at each scrape.
#[derive(Debug)]
struct Scrape(Arc<Live>);

/// A metric family's descriptor.
fn family<'a>(
    enc: &'a mut DescriptorEncoder,
    name: &'a str,
    help: &str,
    unit: Option<&'a Unit>,
    kind: MetricType,
) -> Result<MetricEncoder<'a>, std::fmt::Error> {
    enc.encode_descriptor(name, help, unit, kind)
}

fn counter(e: &mut MetricEncoder, labels: &impl EncodeLabelSet, v: u64) -> std::fmt::Result {
    e.encode_family(labels)?
        .encode_counter::<NoLabelSet, _, u64>(&v, None)
}

fn gauge_f(e: &mut MetricEncoder, labels: &impl EncodeLabelSet, v: f64) -> std::fmt::Result {
    e.encode_family(labels)?.encode_gauge(&v)
}

fn gauge_i(e: &mut MetricEncoder, labels: &impl EncodeLabelSet, v: i64) -> std::fmt::Result {
    e.encode_family(labels)?.encode_gauge(&v)
}

impl Collector for Scrape {
    fn encode(&self, mut enc: DescriptorEncoder) -> std::fmt::Result {
        let live = &self.0;
        encode_process(&mut enc, live)?;
        // A copy, so the lock is not held while encoding (the measuring thread waits on it).
        let (scopes, rates, devices, warnings, checked_runs) = {
            let st = live.lock();
            (
                st.scopes.clone(),
                st.rates.clone(),
                st.devices.clone(),
                st.warnings.clone(),
                st.checked_runs,
            )
        };
        encode_counts(&mut enc, &scopes)?;
        encode_rates(&mut enc, &rates)?;
        encode_latency(&mut enc, &scopes)?;
        encode_checks(&mut enc, checked_runs, &warnings)?;
        encode_devices(&mut enc, &devices)
    }
}

/// The labels of one direction of a scope.
fn dir_labels(s: &Scope, d: Direction) -> DirLabels {
    DirLabels {
        workload: s.labels.workload.clone(),
        target: s.labels.target.clone(),
        direction: d.as_str(),
    }
}

/// The process: up, its command and when it started.
fn encode_process(enc: &mut DescriptorEncoder, live: &Live) -> std::fmt::Result {
    let info = InfoLabels {
        command: live.command.clone(),
        version: env!("CARGO_PKG_VERSION"),
    };
    let mut e = family(
        enc,
        "iosim_up",
        "1 while iosim serves metrics",
        None,
        MetricType::Gauge,
    )?;
    e.encode_gauge(&1i64)?;
    let mut e = family(
        enc,
        "iosim_command",
        "the iosim command being run",
        None,
        MetricType::Info,
    )?;
    e.encode_info(&info)?;
    let mut e = family(
        enc,
        "iosim_start_time",
        "when the command started, Unix time",
        Some(&Unit::Seconds),
        MetricType::Gauge,
    )?;
    e.encode_gauge(&live.started_unix_s)?;
    Ok(())
}

/// Each scope's I/Os, bytes, errors and I/Os in flight.
fn encode_counts(enc: &mut DescriptorEncoder, scopes: &[Scope]) -> std::fmt::Result {
    let mut e = family(
        enc,
        "iosim_ios",
        "I/Os completed in the measured window (flush: fsync/fdatasync calls)",
        None,
        MetricType::Counter,
    )?;
    for s in scopes {
        for (d, t) in Direction::ALL.iter().zip(&s.dirs) {
            counter(&mut e, &dir_labels(s, *d), t.ios)?;
        }
    }
    let mut e = family(
        enc,
        "iosim_transferred",
        "bytes transferred in the measured window",
        Some(&Unit::Bytes),
        MetricType::Counter,
    )?;
    for s in scopes {
        for (d, t) in Direction::ALL.iter().zip(&s.dirs).take(2) {
            counter(&mut e, &dir_labels(s, *d), t.bytes)?;
        }
    }
    let mut e = family(
        enc,
        "iosim_errors",
        "I/Os that failed or transferred less than asked",
        None,
        MetricType::Counter,
    )?;
    for s in scopes {
        counter(&mut e, &s.labels, s.errors())?;
    }
    let mut e = family(
        enc,
        "iosim_in_flight",
        "I/Os the workers had in flight at their last interval boundary",
        None,
        MetricType::Gauge,
    )?;
    for s in scopes {
        let n: u64 = s.in_flight.iter().map(|&n| u64::from(n)).sum();
        gauge_i(&mut e, &s.labels, i64::try_from(n).unwrap_or(i64::MAX))?;
    }
    Ok(())
}

/// Each workload's I/O rates in its last closed interval.
fn encode_rates(enc: &mut DescriptorEncoder, rates: &[(String, [f64; 3])]) -> std::fmt::Result {
    let mut e = family(
        enc,
        "iosim_current_iops",
        "I/Os per second in the workload's last closed interval",
        None,
        MetricType::Gauge,
    )?;
    for (w, r) in rates {
        for (d, v) in ["read", "write", "total"].iter().zip(r) {
            let l = RateLabels {
                workload: w.clone(),
                direction: d,
            };
            gauge_f(&mut e, &l, *v)?;
        }
    }
    Ok(())
}

/// Each scope's latency histograms, by direction.
fn encode_latency(enc: &mut DescriptorEncoder, scopes: &[Scope]) -> std::fmt::Result {
    let mut e = family(
        enc,
        "iosim_latency",
        "completion latency of the I/Os in the measured window",
        Some(&Unit::Seconds),
        MetricType::Histogram,
    )?;
    for s in scopes {
        for (d, t) in Direction::ALL.iter().zip(&s.dirs) {
            let buckets: Vec<(f64, u64)> = LATENCY_BUCKETS_S
                .iter()
                .copied()
                .chain([f64::INFINITY])
                .zip(t.buckets)
                .collect();
            e.encode_family(&dir_labels(s, *d))?
                .encode_histogram::<NoLabelSet>(t.lat_sum_ns as f64 / 1e9, t.ios, &buckets, None)?;
        }
    }
    Ok(())
}

/// The self-checks: runs checked, warnings by code.
fn encode_checks(
    enc: &mut DescriptorEncoder,
    checked_runs: u64,
    warnings: &[(String, u64)],
) -> std::fmt::Result {
    let mut e = family(
        enc,
        "iosim_self_check_runs",
        "runs whose self-checks are done (each run checks at its end)",
        None,
        MetricType::Counter,
    )?;
    e.encode_counter::<NoLabelSet, _, u64>(&checked_runs, None)?;
    let mut e = family(
        enc,
        "iosim_self_check_warnings",
        "self-check warnings raised so far, by code (docs/sysmon.md)",
        None,
        MetricType::Counter,
    )?;
    for (code, n) in warnings {
        counter(&mut e, &CodeLabels { code: code.clone() }, *n)?;
    }
    Ok(())
}

/// The block devices' own counters since boot, read now.
fn encode_devices(enc: &mut DescriptorEncoder, devices: &[String]) -> std::fmt::Result {
    if devices.is_empty() {
        return Ok(());
    }
    let stats: Vec<diskstats::DiskStat> = diskstats::read_diskstats()
        .into_iter()
        .filter(|d| devices.contains(&d.name))
        .collect();
    type Field = fn(&diskstats::DiskStat) -> u64;
    let counters: [(&str, &str, Option<Unit>, Field); 4] = [
        (
            "iosim_device_reads_completed",
            "reads the device completed (/proc/diskstats, since boot)",
            None,
            |d| d.reads,
        ),
        (
            "iosim_device_writes_completed",
            "writes the device completed (/proc/diskstats, since boot)",
            None,
            |d| d.writes,
        ),
        (
            "iosim_device_read",
            "bytes the device read (/proc/diskstats, since boot)",
            Some(Unit::Bytes),
            |d| d.sectors_read * DISKSTATS_SECTOR,
        ),
        (
            "iosim_device_written",
            "bytes the device wrote (/proc/diskstats, since boot)",
            Some(Unit::Bytes),
            |d| d.sectors_written * DISKSTATS_SECTOR,
        ),
    ];
    for (name, help, unit, f) in &counters {
        let mut e = family(enc, name, help, unit.as_ref(), MetricType::Counter)?;
        for d in &stats {
            counter(
                &mut e,
                &DeviceLabels {
                    device: d.name.clone(),
                },
                f(d),
            )?;
        }
    }
    let mut e = family(
        enc,
        "iosim_device_in_flight",
        "I/Os in flight in the device now (/proc/diskstats)",
        None,
        MetricType::Gauge,
    )?;
    for d in &stats {
        gauge_i(
            &mut e,
            &DeviceLabels {
                device: d.name.clone(),
            },
            i64::try_from(d.in_flight).unwrap_or(i64::MAX),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_fold_into_counters_and_histogram_buckets() {
        let live = Arc::new(Live::new("run"));
        let a = live.scope("randread 4KiB", "/tmp/f");
        assert_eq!(live.scope("randread 4KiB", "/tmp/f"), a);
        let mut s = RwStats::default();
        s.read.record(3_000, 4096); // 3 µs: the first bucket
        s.read.record(700_000, 4096); // 0.7 ms: le=0.001
        s.write.record(20_000_000_000, 8192); // 20 s: +Inf
        live.add(a, 0, &s, 1, 5);
        live.add(a, 0, &RwStats::default(), 2, 5);
        live.add(a, 1, &s, 0, 3);
        live.set_rate("randread 4KiB", [10.0, 0.0, 10.0]);
        live.checked([&WarningCode::CacheAnsweredReads]);
        let text = live.render();
        let has = |line: &str| text.lines().any(|l| l == line);
        let w = r#"workload="randread 4KiB",target="/tmp/f""#;
        assert!(text.ends_with("# EOF\n"), "{text}");
        assert!(has("iosim_up 1"), "{text}");
        assert!(
            has(&format!(r#"iosim_ios_total{{{w},direction="read"}} 4"#)),
            "{text}"
        );
        assert!(
            has(&format!(
                r#"iosim_transferred_bytes_total{{{w},direction="write"}} 16384"#
            )),
            "{text}"
        );
        assert!(has(&format!(r#"iosim_errors_total{{{w}}} 2"#)), "{text}");
        assert!(has(&format!(r#"iosim_in_flight{{{w}}} 8"#)), "{text}");
        let bucket = |le: &str, dir: &str, n: u64| {
            format!(r#"iosim_latency_seconds_bucket{{le="{le}",{w},direction="{dir}"}} {n}"#)
        };
        assert!(has(&bucket("0.000005", "read", 2)), "{text}");
        assert!(has(&bucket("0.001", "read", 4)), "{text}");
        assert!(has(&bucket("10.0", "write", 0)), "{text}");
        assert!(has(&bucket("+Inf", "write", 2)), "{text}");
        assert!(
            has(&format!(
                r#"iosim_latency_seconds_count{{{w},direction="write"}} 2"#
            )),
            "{text}"
        );
        assert!(
            has(r#"iosim_self_check_warnings_total{code="cache_answered_reads"} 1"#),
            "{text}"
        );
        assert!(has("iosim_self_check_runs_total 1"), "{text}");
        assert!(
            has(r#"iosim_current_iops{workload="randread 4KiB",direction="total"} 10.0"#),
            "{text}"
        );
        live.end_run(a);
        live.add(a, 0, &RwStats::default(), 1, 0);
        let text = live.render();
        assert!(
            text.contains(&format!(r#"iosim_in_flight{{{w}}} 0"#)),
            "{text}"
        );
        assert!(
            text.contains(&format!(r#"iosim_errors_total{{{w}}} 3"#)),
            "{text}"
        );
    }
}
