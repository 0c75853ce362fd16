//! `iosim fsync`'s report: pg_test_fsync's sections and rows (ops/sec,
//! usecs/op), with the 99th percentile of what made each operation durable,
//! then the advice; and its CSV.

use std::fmt::Write as _;

use super::{kb, FsyncResult, FsyncTest, Section};
use crate::stats::Percentile;

/// The report, as text.
pub fn text(r: &FsyncResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "iosim {}  fsync  {}  ({} per test)",
        env!("CARGO_PKG_VERSION"),
        r.path,
        crate::units::format_duration_arg(std::time::Duration::from_secs_f64(r.secs_per_test))
    );
    let _ = writeln!(
        s,
        "ops/sec and usecs/op as pg_test_fsync prints them; p99 is the latency of what makes an operation durable (the flush, or the O_DSYNC/O_SYNC write)"
    );
    let mut last: Option<(Section, u64, u32)> = None;
    for t in &r.tests {
        let key = (t.section, t.bs, t.writes_per_op);
        let new_section = match last {
            None => true,
            Some((sec, bs, w)) => {
                sec != t.section
                    || (t.section == Section::Methods && (bs != t.bs || w != t.writes_per_op))
            }
        };
        if new_section {
            s.push('\n');
            s.push_str(&heading(t));
            let _ = writeln!(
                s,
                "{:<36}{:>14}{:>14}{:>12}",
                "", "ops/sec", "usecs/op", "p99(us)"
            );
        }
        last = Some(key);
        s.push_str(&row(t));
    }
    let a = &r.advice;
    s.push_str("\nPostgreSQL:\n");
    for l in &a.postgresql {
        let _ = writeln!(s, "  {l}");
    }
    s.push_str("MySQL / MariaDB:\n");
    for l in &a.mysql {
        let _ = writeln!(s, "  {l}");
    }
    if !a.storage.is_empty() {
        s.push_str("Storage:\n");
        for l in &a.storage {
            let _ = writeln!(s, "  {l}");
        }
    }
    s.push_str("Sources:\n");
    for (what, url) in super::advice::SOURCES {
        let _ = writeln!(s, "  {what}: {url}");
    }
    for n in &r.notes {
        let _ = writeln!(s, "note: {n}");
    }
    if r.interrupted {
        s.push_str("INTERRUPTED: not every test ran\n");
    }
    s
}

fn heading(t: &FsyncTest) -> String {
    match t.section {
        Section::Methods => format!(
            "Compare file sync methods using {} {} write{}:\n",
            if t.writes_per_op == 1 { "one" } else { "two" },
            kb(t.bs),
            if t.writes_per_op == 1 { "" } else { "s" }
        ),
        Section::OpenSyncSizes => {
            "Compare open_sync with different write sizes (16kB in each operation):\n".into()
        }
        Section::Descriptors => format!(
            "Test if fsync on non-write file descriptor is honored (one {} write):\n",
            kb(t.bs)
        ),
        Section::NonSync => format!("Non-sync'ed {} writes:\n", kb(t.bs)),
    }
}

fn row(t: &FsyncTest) -> String {
    let label = format!(
        "        {}{}",
        t.name,
        if t.buffered_fallback {
            " (buffered)"
        } else {
            ""
        }
    );
    if let Some(why) = &t.unavailable {
        return format!("{label:<36}{:>14}    {why}\n", "n/a");
    }
    let p99 = t
        .durable_latency
        .as_ref()
        .filter(|d| d.ios > 0)
        .map_or_else(
            || "-".to_string(),
            |d| format!("{:.0}", d.latency_us.p(Percentile::P99)),
        );
    format!(
        "{label:<36}{:>14.3}{:>14.3}{:>12}\n",
        t.ops_per_sec, t.usecs_per_op, p99
    )
}

/// One row per test: section, name, method, bs, writes per operation,
/// ops/s, usecs/op, the durable latency's mean, p99 and max, and why it did not run.
pub fn csv(r: &FsyncResult) -> String {
    let mut s = String::from(
        "section,test,method,bs,writes_per_op,ops_per_sec,usecs_per_op,lat_mean_us,lat_p99_us,lat_max_us,unavailable\n",
    );
    for t in &r.tests {
        let d = t.durable_latency.as_ref().filter(|d| d.ios > 0);
        let f = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.2}"));
        let section = serde_json::to_value(t.section)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "{},{},{},{},{},{:.3},{:.3},{},{},{},{}",
            section,
            crate::report::csv_field(t.name.trim()),
            t.method.map_or("", |m| m.name()),
            t.bs,
            t.writes_per_op,
            t.ops_per_sec,
            t.usecs_per_op,
            f(d.map(|d| d.latency_us.mean)),
            f(d.map(|d| d.latency_us.p(Percentile::P99))),
            f(d.map(|d| d.latency_us.max)),
            crate::report::csv_field(t.unavailable.as_deref().unwrap_or("")),
        );
    }
    s
}
