//! `iosim fsync`'s report: pg_test_fsync's sections and rows, each row as
//! pg_test_fsync prints it (`ops/sec` and `usecs/op` after the number, so a
//! script that reads pg_test_fsync's lines reads iosim's), with the 99th
//! percentile of what made each operation durable after them; then the
//! advice; and its CSV.

use std::fmt::Write as _;

use super::result::{kb, FsyncResult, FsyncTest, Section};
use crate::csvout::Fixed;
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
        "each row as pg_test_fsync prints it, then p99: the latency of what makes an operation durable (the flush, or the O_DSYNC/O_SYNC write)"
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
        }
        last = Some(key);
        s.push_str(&row(t));
    }
    let a = &r.advice;
    if let Some(why) = &a.withheld {
        let _ = writeln!(s, "\nNo sync-method advice:\n  {why}");
    } else {
        s.push_str("\nPostgreSQL:\n");
        for l in &a.postgresql {
            let _ = writeln!(s, "  {l}");
        }
        s.push_str("MySQL / MariaDB:\n");
        for l in &a.mysql {
            let _ = writeln!(s, "  {l}");
        }
    }
    let storage: Vec<&String> = a
        .storage
        .iter()
        .filter(|l| Some(*l) != a.withheld.as_ref())
        .collect();
    if !storage.is_empty() {
        s.push_str("Storage:\n");
        for l in storage {
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

/// pg_test_fsync's label: eight spaces and the name in 30 columns (`LABEL_FORMAT`).
fn label(t: &FsyncTest) -> String {
    let name = format!(
        "{}{}",
        t.name,
        if t.buffered_fallback {
            " (buffered)"
        } else {
            ""
        }
    );
    format!("        {name:<30}")
}

/// One row: pg_test_fsync's `%13.3f ops/sec  %6.0f usecs/op` (`OPS_FORMAT`),
/// then iosim's p99; a test that did not run prints pg_test_fsync's `n/a`
/// (`%21s`) and why.
fn row(t: &FsyncTest) -> String {
    let label = label(t);
    if let Some(why) = &t.unavailable {
        return format!("{label}{:>21}    {why}\n", "n/a");
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
        "{label}{:13.3} ops/sec  {:6.0} usecs/op  p99 {p99:>6} usecs\n",
        t.ops_per_sec, t.usecs_per_op
    )
}

/// One CSV row: a test.
#[derive(serde::Serialize)]
struct CsvRow<'a> {
    section: Section,
    test: &'a str,
    method: &'a str,
    bs: u64,
    writes_per_op: u32,
    ops_per_sec: Fixed<3>,
    usecs_per_op: Fixed<3>,
    lat_mean_us: Option<Fixed<2>>,
    lat_p99_us: Option<Fixed<2>>,
    lat_max_us: Option<Fixed<2>>,
    unavailable: &'a str,
}

/// One row per test (the one CSV writer, `csvout`): section, name, method,
/// bs, writes per operation, ops/s, usecs/op, the durable latency's mean,
/// p99 and max (empty when none), and why it did not run.
pub fn csv(r: &FsyncResult) -> String {
    crate::csvout::write(
        None,
        r.tests.iter().map(|t| {
            let d = t.durable_latency.as_ref().filter(|d| d.ios > 0);
            CsvRow {
                section: t.section,
                test: t.name.trim(),
                method: t.method.map_or("", |m| m.name()),
                bs: t.bs,
                writes_per_op: t.writes_per_op,
                ops_per_sec: Fixed(t.ops_per_sec),
                usecs_per_op: Fixed(t.usecs_per_op),
                lat_mean_us: d.map(|d| Fixed(d.latency_us.mean)),
                lat_p99_us: d.map(|d| Fixed(d.latency_us.p(Percentile::P99))),
                lat_max_us: d.map(|d| Fixed(d.latency_us.max)),
                unavailable: t.unavailable.as_deref().unwrap_or(""),
            }
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_as_pg_test_fsyncs() {
        let mut t = FsyncTest {
            section: Section::Methods,
            name: "open_datasync".into(),
            method: Some(crate::workload::SyncMethod::OpenDatasync),
            bs: 8192,
            writes_per_op: 1,
            ops_per_sec: 13870.283,
            usecs_per_op: 72.098,
            durable_latency: None,
            unavailable: None,
            buffered_fallback: false,
            result: None,
        };
        // pg_test_fsync's own line, then iosim's column.
        assert_eq!(
            row(&t),
            "        open_datasync                     13870.283 ops/sec      72 usecs/op  p99      - usecs\n"
        );
        t.unavailable = Some("refused".into());
        assert_eq!(
            row(&t),
            "        open_datasync                                   n/a    refused\n"
        );
    }

    #[test]
    fn csv_has_a_header_and_a_row_per_test() {
        let t = FsyncTest {
            section: Section::Methods,
            name: "fdatasync".into(),
            method: Some(crate::workload::SyncMethod::Fdatasync),
            bs: 8192,
            writes_per_op: 1,
            ops_per_sec: 1000.0,
            usecs_per_op: 1000.0,
            durable_latency: None,
            unavailable: Some("refused, says the file system".into()),
            buffered_fallback: false,
            result: None,
        };
        let r = FsyncResult {
            path: "x".into(),
            secs_per_test: 1.0,
            tests: vec![t],
            advice: Default::default(),
            notes: vec![],
            interrupted: false,
            memory_backed: None,
        };
        let s = csv(&r);
        let mut lines = s.lines();
        assert_eq!(
            lines.next(),
            Some("section,test,method,bs,writes_per_op,ops_per_sec,usecs_per_op,lat_mean_us,lat_p99_us,lat_max_us,unavailable")
        );
        assert_eq!(
            lines.next(),
            Some("methods,fdatasync,fdatasync,8192,1,1000.000,1000.000,,,,\"refused, says the file system\"")
        );
        assert_eq!(lines.next(), None);
    }
}
