//! Output: the human report, JSON and CSV.
//!
//! The JSON document is [`RunResult`] serialised as is; its fields are
//! documented there and in `docs/json-schema.md`. Text goes to stdout;
//! progress and notes go to stderr, so JSON and CSV on stdout stay clean.

use std::fmt::Write as _;

use crate::runner::RunResult;
use crate::stats::{DirResult, Percentile, RwResult};
use crate::units::format_size;

/// Output formats of the result-printing commands (`--output`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// A readable report (default).
    Text,
    /// The versioned JSON document (docs/json-schema.md).
    Json,
    /// One CSV row per target and one for the total.
    Csv,
}

/// The human report of one run.
pub fn text(r: &RunResult) -> String {
    let mut s = String::new();
    header(&mut s, r);
    s.push('\n');
    throughput_table(&mut s, r);
    s.push('\n');
    latency_table(&mut s, r);
    s.push('\n');
    s.push_str(&sqlio_histogram(&r.total.total));
    if let Some(shape) = &r.shape {
        // Per block size, open-loop latency, achieved skew (docs/workloads.md).
        s.push('\n');
        s.push_str(shape.text().trim_end());
        s.push('\n');
    }
    thread_table(&mut s, r);
    s.push('\n');
    cpu_lines(&mut s, r);
    device_lines(&mut s, r);
    closing_lines(&mut s, r);
    s
}

/// The first line (version, workload, engine, time) and one line per target.
fn header(s: &mut String, r: &RunResult) {
    let c = &r.config;
    let _ = writeln!(
        s,
        "iosim {}  {}  engine {}  {:.2} s measured{}",
        r.iosim_version,
        c.describe(),
        r.engine,
        r.duration_s,
        if r.interrupted {
            "  (INTERRUPTED: partial results)"
        } else {
            ""
        }
    );
    for t in &r.targets {
        let _ = writeln!(
            s,
            "target {} ({}, {}, region {}+{}{})",
            t.path,
            t.kind.replace('_', " "),
            format_size(t.size),
            t.region_start,
            format_size(t.region_len),
            if t.created { ", created" } else { "" }
        );
    }
}

/// IOPS, MiB/s and latency per direction, in total and per target.
fn throughput_table(s: &mut String, r: &RunResult) {
    let _ = writeln!(
        s,
        "{:<8}{:>12}{:>11}{:>12}{:>10}{:>10}{:>10}{:>11}",
        "", "IOPS", "MiB/s", "mean(us)", "p50", "p99", "p99.9", "max"
    );
    rw_rows(s, "", &r.total);
    if r.targets.len() > 1 {
        for (i, t) in r.targets.iter().enumerate() {
            let _ = writeln!(s, "target {i}: {}", t.path);
            rw_rows(s, "  ", &t.result);
        }
    }
}

/// Latency per direction (and of flushes): min, mean, stddev, max and percentiles.
fn latency_table(s: &mut String, r: &RunResult) {
    let flush = r.total.flush.clone();
    let _ = writeln!(
        s,
        "latency (us)  {:>12}{:>12}{:>12}{}",
        "read",
        "write",
        "total",
        if flush.is_some() {
            format!("{:>12}", "flush")
        } else {
            String::new()
        }
    );
    type Field = fn(&DirResult) -> f64;
    let rows: [(&str, Field); 4] = [
        ("min", |d| d.latency_us.min),
        ("mean", |d| d.latency_us.mean),
        ("stddev", |d| d.latency_us.stddev),
        ("max", |d| d.latency_us.max),
    ];
    for (name, f) in rows {
        lat_row(
            s,
            name,
            [
                f(&r.total.read),
                f(&r.total.write),
                f(&r.total.total),
                flush.as_ref().map_or(0.0, f),
            ],
            &r.total,
        );
    }
    for p in [
        Percentile::P50,
        Percentile::P90,
        Percentile::P95,
        Percentile::P99,
        Percentile::P99_9,
        Percentile::P99_99,
        Percentile::P99_999,
    ] {
        lat_row(
            s,
            p.label(),
            [
                r.total.read.latency_us.p(p),
                r.total.write.latency_us.p(p),
                r.total.total.latency_us.p(p),
                flush.as_ref().map_or(0.0, |d| d.latency_us.p(p)),
            ],
            &r.total,
        );
    }
}

/// One row per thread, when there are several.
fn thread_table(s: &mut String, r: &RunResult) {
    if r.threads.len() > 1 {
        s.push('\n');
        let _ = writeln!(
            s,
            "{:<8}{:>8}{:>12}{:>11}{:>12}{:>10}{:>9}",
            "thread", "target", "IOPS", "MiB/s", "mean(us)", "p99", "cpu%"
        );
        for t in &r.threads {
            let cpu = if t.duration_s > 0.0 {
                100.0 * (t.cpu_user_s + t.cpu_sys_s) / t.duration_s
            } else {
                0.0
            };
            let d = &t.result.total;
            let _ = writeln!(
                s,
                "{:<8}{:>8}{:>12.1}{:>11.2}{:>12.1}{:>10.1}{:>9.1}",
                t.thread,
                t.target,
                d.iops,
                d.mib_per_sec,
                d.latency_us.mean,
                d.latency_us.p(Percentile::P99),
                cpu
            );
        }
    }
}

/// CPU use of the workers and the machine, and its attribution.
fn cpu_lines(s: &mut String, r: &RunResult) {
    let _ = write!(
        s,
        "cpu: iosim workers {:.1}% of one core (user {:.2} s, system {:.2} s)",
        r.cpu.process_pct_of_one_core, r.cpu.user_s, r.cpu.sys_s
    );
    if let Some(m) = r.cpu.machine.iter().find(|c| c.cpu.is_none()) {
        let _ = write!(
            s,
            "; machine {:.1}% busy (user {:.1}, system {:.1}, irq {:.1}, iowait {:.1}); busiest core {:.1}%",
            m.busy_pct, m.user_pct, m.system_pct, m.irq_pct, m.iowait_pct, r.cpu.max_core_busy_pct
        );
    }
    s.push('\n');
    if let Some(a) = &r.cpu.attribution {
        let _ = writeln!(s, "cpu use: {}", a.summary());
    }
}

/// Each target's device and volume.
fn device_lines(s: &mut String, r: &RunResult) {
    for (t, d) in r.targets.iter().zip(&r.devices) {
        match d {
            crate::sysmon::mounts::Resolution::Device(info) => {
                let _ = writeln!(
                    s,
                    "device: {} on {}{}{}",
                    t.path,
                    info.name,
                    if info.disk != info.name {
                        format!(" (disk {})", info.disk)
                    } else {
                        String::new()
                    },
                    info.model
                        .as_ref()
                        .map(|m| format!(", {m}"))
                        .unwrap_or_default()
                );
            }
            crate::sysmon::mounts::Resolution::NoDevice { reason, .. } => {
                let _ = writeln!(s, "device: {}: {reason}", t.path);
            }
        }
        if let Some(v) = d.volume() {
            let _ = writeln!(s, "volume: {}", v.hint());
        }
    }
}

/// The monitor's lines, warnings, changes, errors, the neighbour, verification and notes.
fn closing_lines(s: &mut String, r: &RunResult) {
    let mon = r.monitor.render_text();
    if !mon.trim().is_empty() {
        s.push_str(&mon);
        if !mon.ends_with('\n') {
            s.push('\n');
        }
    }
    for w in &r.warnings {
        let _ = writeln!(s, "WARNING ({}): {}", w.code, w.message);
    }
    for c in &r.changes.events {
        let _ = writeln!(s, "change over time: {}", c.describe());
    }
    if r.errors.count > 0 {
        let _ = writeln!(s, "I/O errors: {}", r.errors.count);
        for e in r.errors.first.iter().take(10) {
            let _ = writeln!(
                s,
                "  {} at offset {} ({} bytes): {}",
                e.op, e.offset, e.len, e.message
            );
        }
    }
    if let Some(n) = &r.neighbour {
        s.push('\n');
        s.push_str(&n.text());
    }
    if let Some(v) = &r.verify {
        let paths: Vec<String> = r.targets.iter().map(|t| t.path.clone()).collect();
        s.push_str(&v.text(&paths));
    }
    for n in &r.notes {
        let _ = writeln!(s, "note: {n}");
    }
}

fn rw_rows(s: &mut String, indent: &str, r: &RwResult) {
    let none = DirResult::default();
    let flush = r.flush.as_ref().unwrap_or(&none);
    for (name, d) in [
        ("read", &r.read),
        ("write", &r.write),
        ("total", &r.total),
        // Flushes per second, and their latency (not in the total).
        ("flush", flush),
    ] {
        if d.ios == 0 && name != "total" {
            continue;
        }
        let _ = writeln!(
            s,
            "{indent}{:<w$}{:>12.1}{:>11.2}{:>12.1}{:>10.1}{:>10.1}{:>10.1}{:>11.1}",
            name,
            d.iops,
            d.mib_per_sec,
            d.latency_us.mean,
            d.latency_us.p(Percentile::P50),
            d.latency_us.p(Percentile::P99),
            d.latency_us.p(Percentile::P99_9),
            d.latency_us.max,
            w = 8 - indent.len()
        );
    }
}

/// One latency row: read, write, total and (when the run flushed) flush.
fn lat_row(s: &mut String, name: &str, [r, w, t, f]: [f64; 4], res: &RwResult) {
    let cell = |v: f64, ios: u64| {
        if ios == 0 {
            format!("{:>12}", "-")
        } else {
            format!("{v:>12.1}")
        }
    };
    let _ = writeln!(
        s,
        "  {:<12}{}{}{}{}",
        name,
        cell(r, res.read.ios),
        cell(w, res.write.ios),
        cell(t, res.total.ios),
        res.flush.as_ref().map_or(String::new(), |d| cell(f, d.ios))
    );
}

/// SQLIO's millisecond histogram as two rows, `ms:` and `%:`.
pub fn sqlio_histogram(d: &DirResult) -> String {
    let mut s = String::from("histogram (share of I/Os by whole milliseconds):\nms: ");
    for i in 0..24 {
        let _ = write!(s, "{i:>3}");
    }
    s.push_str(" 24+\n%:  ");
    for p in sqlio_percentages(d) {
        let _ = write!(s, "{p:>3}");
    }
    s.push('\n');
    s
}

/// SQLIO's histogram as whole percentages (rounded, as SQLIO prints them).
pub fn sqlio_percentages(d: &DirResult) -> Vec<u64> {
    let total: u64 = d.sqlio_histogram_ms.iter().sum();
    d.sqlio_histogram_ms
        .iter()
        .map(|&c| {
            if total == 0 {
                0
            } else {
                ((c as f64 * 100.0) / total as f64).round() as u64
            }
        })
        .collect()
}

/// The JSON document.
pub fn json(r: &RunResult) -> String {
    serde_json::to_string_pretty(r).expect("results always serialise")
}

/// CSV: a header, one row per target, one for the total (`csvout::run`).
pub fn csv(r: &RunResult) -> String {
    crate::csvout::run(r)
}

/// Quotes a CSV field when it needs it (the history listing's CSV).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The time series as CSV (`--series FILE`): one row per interval for the
/// total, then per target (`csvout::series`).
pub fn series_csv(r: &RunResult) -> String {
    crate::csvout::series(r)
}
