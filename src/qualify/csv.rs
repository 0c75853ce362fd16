//! A qualification as CSV (`iosim qualify -o csv`, `iosim show ID -o csv`):
//! one row per measurement, in the order of the report: the quick corners,
//! every sweep point (the mean of its repetitions, with the 95% confidence
//! interval), every database profile workload. The verdicts and their
//! reasons are in the text and JSON outputs. The last columns give each
//! profile workload's flushes and name the database (`dbms`) and what it
//! calls the role (`role_name`: PostgreSQL's log is its `wal`).

use serde::Serialize;

use super::{Measure, MeasureKind, QualifyResult};
use crate::csvout::Fixed;
use crate::dbms::Dbms;

/// One measurement.
#[derive(Serialize)]
struct Row<'a> {
    /// `corner`, `sweep` or `profile`.
    kind: &'static str,
    role: &'static str,
    /// The corner, `qd=8` / `threads=2` for a sweep point, `profile workload`.
    name: &'a str,
    /// The workload in words (a sweep's: the base its points vary).
    workload: &'a str,
    bs: u64,
    /// Repetitions whose mean the row gives (1 but for sweep points).
    repetitions: usize,
    /// Measured time of each repetition, s.
    duration_s: Fixed<3>,
    iops: Fixed<2>,
    /// Half-width of the 95% confidence interval of the IOPS (sweep points).
    iops_ci95: Option<Fixed<2>>,
    mib_s: Fixed<3>,
    read_lat_mean_us: Option<Fixed<2>>,
    write_lat_mean_us: Option<Fixed<2>>,
    /// Mean latency of all I/O (sweep points).
    lat_mean_us: Option<Fixed<2>>,
    lat_mean_ci95_us: Option<Fixed<2>>,
    lat_p99_us: Fixed<2>,
    /// I/O errors (empty for a sweep point: its runs' errors judge the role).
    errors: Option<u64>,
    /// The sweep's knee (sweep points only).
    knee: Option<bool>,
    /// Flushes timed (profile workloads that flush; 0 when the runner did not time them).
    flush_ios: Option<u64>,
    /// Their mean latency.
    flush_lat_mean_us: Option<Fixed<2>>,
    /// Their p99.
    flush_lat_p99_us: Option<Fixed<2>>,
    /// The database qualified for.
    dbms: &'static str,
    /// What the database calls the role.
    role_name: &'static str,
}

fn measure_row(kind: MeasureKind, m: &Measure, dbms: Dbms) -> Row<'_> {
    let timed = m.flush.as_ref().filter(|f| f.timed());
    Row {
        kind: kind.name(),
        role: m.role.name(),
        name: &m.name,
        workload: &m.workload,
        bs: m.bs,
        repetitions: 1,
        duration_s: Fixed(m.duration_s),
        iops: Fixed(m.iops),
        iops_ci95: None,
        mib_s: Fixed(m.mib_per_sec),
        read_lat_mean_us: m.read_mean_us.map(Fixed),
        write_lat_mean_us: m.write_mean_us.map(Fixed),
        lat_mean_us: None,
        lat_mean_ci95_us: None,
        lat_p99_us: Fixed(m.p99_us),
        errors: Some(m.errors),
        knee: None,
        flush_ios: m.flush.as_ref().map(|f| f.ios),
        flush_lat_mean_us: timed.map(|f| Fixed(f.mean_us)),
        flush_lat_p99_us: timed.map(|f| Fixed(f.p99_us)),
        dbms: dbms.name(),
        role_name: dbms.role_name(m.role),
    }
}

/// A sweep point's name (`qd=8`) and its workload in words (the sweep's
/// base with the point's setting).
fn point(s: &super::RoleSweep, p: &crate::sweep::PointResult) -> (String, String) {
    let name = format!(
        "{}={}",
        s.param,
        p.params.get(s.param.name()).map_or("", String::as_str)
    );
    let workload = crate::sweep::parse_axis(&name)
        .ok()
        .and_then(|a| {
            Some(crate::sweep::Point::from([(
                a.param,
                a.values.first()?.clone(),
            )]))
        })
        .map_or_else(
            || s.workload.clone(),
            |pt| crate::sweep::apply(&s.result.base, &pt).describe(),
        );
    (name, workload)
}

/// The qualification's measurements as CSV, one row each, with a header.
pub fn csv(r: &QualifyResult) -> String {
    let names: Vec<Vec<(String, String)>> = r
        .sweeps
        .iter()
        .map(|s| s.result.points.iter().map(|p| point(s, p)).collect())
        .collect();
    let mut rows: Vec<Row<'_>> = r
        .quick
        .iter()
        .map(|m| measure_row(MeasureKind::Corner, m, r.dbms))
        .collect();
    for (s, names) in r.sweeps.iter().zip(&names) {
        for (i, (p, (name, workload))) in s.result.points.iter().zip(names).enumerate() {
            let ci = |st: &crate::sweep::analysis::Stat| (st.n > 1).then_some(Fixed(st.ci95));
            rows.push(Row {
                kind: MeasureKind::Sweep.name(),
                role: s.role.name(),
                name,
                workload,
                bs: s.result.base.bs,
                repetitions: p.iops.n,
                duration_s: Fixed(s.result.base.duration.as_secs_f64()),
                iops: Fixed(p.iops.mean),
                iops_ci95: ci(&p.iops),
                mib_s: Fixed(p.mib_per_sec.mean),
                read_lat_mean_us: None,
                write_lat_mean_us: None,
                lat_mean_us: Some(Fixed(p.lat_mean_us.mean)),
                lat_mean_ci95_us: ci(&p.lat_mean_us),
                lat_p99_us: Fixed(p.lat_p99_us.mean),
                errors: None,
                knee: Some(s.result.knee.as_ref().is_some_and(|k| k.index == i)),
                flush_ios: None,
                flush_lat_mean_us: None,
                flush_lat_p99_us: None,
                dbms: r.dbms.name(),
                role_name: r.dbms.role_name(s.role),
            });
        }
    }
    rows.extend(
        r.profiles
            .iter()
            .map(|p| measure_row(MeasureKind::Profile, &p.measure, r.dbms)),
    );
    crate::csvout::write(None, rows)
}
