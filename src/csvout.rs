//! The one CSV writer: the `csv` crate over serde row types, so quoting and
//! record layout are decided in one place, and a column is a named field
//! instead of a position in a format string.
//!
//! Every CSV iosim prints goes through [`write`]: the run's rows (here), the
//! interval series (here), and quick's, the sweep's, the profile's and the
//! load matrix's rows (beside their result types). Floats keep the fixed
//! number of decimals each column always had ([`Fixed`]).

use serde::{Serialize, Serializer};

use crate::runner::{PointStats, RunResult, SeriesPoint};
use crate::stats::{DirResult, Percentile};

/// A float written with `D` decimals (`{:.D}`), as the CSV columns always were.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fixed<const D: usize>(pub f64);

impl<const D: usize> Serialize for Fixed<D> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{:.*}", D, self.0))
    }
}

/// CSV text: `header` (when given; otherwise the field names of the row
/// type) and one record per row, `\n`-terminated, fields quoted only when
/// they hold a comma, a quote or a line break.
pub fn write<R: Serialize>(header: Option<&[&str]>, rows: impl IntoIterator<Item = R>) -> String {
    let mut w = csv::WriterBuilder::new()
        .has_headers(header.is_none())
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    // Writing into a Vec cannot fail; a row type csv cannot represent is a
    // programming error, caught by the unit tests of every row type.
    if let Some(h) = header {
        w.write_record(h).expect("CSV header");
    }
    for r in rows {
        w.serialize(r).expect("CSV row types are flat records");
    }
    let bytes = w.into_inner().expect("writing CSV into memory");
    String::from_utf8(bytes).expect("CSV of UTF-8 fields is UTF-8")
}

/// One row of a run's CSV: a target or the total.
#[derive(Serialize)]
pub struct RunRow<'a> {
    scope: &'a str,
    path: &'a str,
    rw: &'a str,
    write_pct: u8,
    bs: u64,
    qd: u32,
    threads: u32,
    cache: &'a str,
    engine: &'a str,
    duration_s: Fixed<3>,
    read_ios: u64,
    read_iops: Fixed<2>,
    read_mib_s: Fixed<3>,
    read_lat_mean_us: Fixed<2>,
    read_lat_p99_us: Fixed<2>,
    write_ios: u64,
    write_iops: Fixed<2>,
    write_mib_s: Fixed<3>,
    write_lat_mean_us: Fixed<2>,
    write_lat_p99_us: Fixed<2>,
    total_ios: u64,
    total_iops: Fixed<2>,
    total_mib_s: Fixed<3>,
    total_lat_min_us: Fixed<2>,
    total_lat_mean_us: Fixed<2>,
    total_lat_p50_us: Fixed<2>,
    total_lat_p99_us: Fixed<2>,
    total_lat_p999_us: Fixed<2>,
    total_lat_max_us: Fixed<2>,
    errors: u64,
    interrupted: bool,
    /// Flushes (0 when the run issued none): last, so older readers' columns stay put.
    flush_ios: u64,
    flush_per_s: Fixed<2>,
    flush_lat_mean_us: Fixed<2>,
    flush_lat_p99_us: Fixed<2>,
    flush_lat_max_us: Fixed<2>,
}

/// The run CSV's header (the field names of [`RunRow`]).
pub const RUN_HEADER: &[&str] = &[
    "scope",
    "path",
    "rw",
    "write_pct",
    "bs",
    "qd",
    "threads",
    "cache",
    "engine",
    "duration_s",
    "read_ios",
    "read_iops",
    "read_mib_s",
    "read_lat_mean_us",
    "read_lat_p99_us",
    "write_ios",
    "write_iops",
    "write_mib_s",
    "write_lat_mean_us",
    "write_lat_p99_us",
    "total_ios",
    "total_iops",
    "total_mib_s",
    "total_lat_min_us",
    "total_lat_mean_us",
    "total_lat_p50_us",
    "total_lat_p99_us",
    "total_lat_p999_us",
    "total_lat_max_us",
    "errors",
    "interrupted",
    "flush_ios",
    "flush_per_s",
    "flush_lat_mean_us",
    "flush_lat_p99_us",
    "flush_lat_max_us",
];

impl<'a> RunRow<'a> {
    fn new(scope: &'a str, path: &'a str, r: &'a RunResult, x: &DirResultSet<'a>) -> Self {
        let c = &r.config;
        let (rd, wr, t) = (x.read, x.write, x.total);
        let none = DirResult::default();
        let fl = x.flush.unwrap_or(&none);
        RunRow {
            scope,
            path,
            rw: c.rw.name(),
            write_pct: c.write_pct,
            bs: c.bs,
            qd: c.qd,
            threads: c.threads,
            cache: c.cache.name(),
            engine: &r.engine,
            duration_s: Fixed(r.duration_s),
            read_ios: rd.ios,
            read_iops: Fixed(rd.iops),
            read_mib_s: Fixed(rd.mib_per_sec),
            read_lat_mean_us: Fixed(rd.latency_us.mean),
            read_lat_p99_us: Fixed(rd.latency_us.p(Percentile::P99)),
            write_ios: wr.ios,
            write_iops: Fixed(wr.iops),
            write_mib_s: Fixed(wr.mib_per_sec),
            write_lat_mean_us: Fixed(wr.latency_us.mean),
            write_lat_p99_us: Fixed(wr.latency_us.p(Percentile::P99)),
            total_ios: t.ios,
            total_iops: Fixed(t.iops),
            total_mib_s: Fixed(t.mib_per_sec),
            total_lat_min_us: Fixed(t.latency_us.min),
            total_lat_mean_us: Fixed(t.latency_us.mean),
            total_lat_p50_us: Fixed(t.latency_us.p(Percentile::P50)),
            total_lat_p99_us: Fixed(t.latency_us.p(Percentile::P99)),
            total_lat_p999_us: Fixed(t.latency_us.p(Percentile::P99_9)),
            total_lat_max_us: Fixed(t.latency_us.max),
            errors: r.errors.count,
            interrupted: r.interrupted,
            flush_ios: fl.ios,
            flush_per_s: Fixed(fl.iops),
            flush_lat_mean_us: Fixed(fl.latency_us.mean),
            flush_lat_p99_us: Fixed(fl.latency_us.p(Percentile::P99)),
            flush_lat_max_us: Fixed(fl.latency_us.max),
        }
    }
}

/// Reads, writes and both, of a target or the total.
struct DirResultSet<'a> {
    read: &'a DirResult,
    write: &'a DirResult,
    total: &'a DirResult,
    flush: Option<&'a DirResult>,
}

/// A run's rows: one per target, one per block size of a size mix, then the total.
pub fn run_rows(r: &RunResult) -> Vec<RunRow<'_>> {
    fn set(x: &crate::stats::RwResult) -> DirResultSet<'_> {
        DirResultSet {
            read: &x.read,
            write: &x.write,
            total: &x.total,
            flush: x.flush.as_ref(),
        }
    }
    let mut rows: Vec<RunRow<'_>> = r
        .targets
        .iter()
        .map(|t| RunRow::new("target", &t.path, r, &set(&t.result)))
        .collect();
    // A --bssplit mix: one row per block size (scope `size`, its size in `bs`),
    // over all targets, before the total.
    if let Some(shape) = &r.shape {
        for z in &shape.by_size {
            let mut row = RunRow::new("size", "", r, &set(&z.result));
            row.bs = z.bs;
            rows.push(row);
        }
    }
    rows.push(RunRow::new("total", "", r, &set(&r.total)));
    rows
}

/// A run as CSV: the header, one row per target, one per block size of a
/// `--bssplit` mix, one for the total.
pub fn run(r: &RunResult) -> String {
    write(Some(RUN_HEADER), run_rows(r))
}

/// Several runs in one CSV, each row led by its run's name in a first
/// column called `key` (quick's `test`, a stored document's `part`); with
/// `only_total`, just each run's total row.
pub fn keyed_runs<'a>(
    key: &str,
    runs: impl IntoIterator<Item = (&'a str, &'a RunResult)>,
    only_total: bool,
) -> String {
    let mut header = vec![key];
    header.extend_from_slice(RUN_HEADER);
    let rows = runs.into_iter().flat_map(|(name, r)| {
        run_rows(r)
            .into_iter()
            .filter(move |row| !only_total || row.scope == "total")
            .map(move |row| (name, row))
    });
    write(Some(&header), rows)
}

/// One interval of the time series (`--series FILE`).
#[derive(Serialize)]
struct SeriesRow<'a> {
    scope: &'a str,
    target: &'a str,
    t_s: Fixed<3>,
    duration_s: Fixed<3>,
    read_ios: u64,
    read_iops: Fixed<2>,
    read_mib_s: Fixed<3>,
    read_lat_mean_us: Fixed<2>,
    read_lat_p99_us: Fixed<2>,
    write_ios: u64,
    write_iops: Fixed<2>,
    write_mib_s: Fixed<3>,
    write_lat_mean_us: Fixed<2>,
    write_lat_p99_us: Fixed<2>,
    total_ios: u64,
    total_iops: Fixed<2>,
    total_mib_s: Fixed<3>,
    total_lat_mean_us: Fixed<2>,
    total_lat_p50_us: Fixed<2>,
    total_lat_p99_us: Fixed<2>,
    total_lat_max_us: Fixed<2>,
}

/// The series CSV's header (the field names of its rows).
pub const SERIES_HEADER: &[&str] = &[
    "scope",
    "target",
    "t_s",
    "duration_s",
    "read_ios",
    "read_iops",
    "read_mib_s",
    "read_lat_mean_us",
    "read_lat_p99_us",
    "write_ios",
    "write_iops",
    "write_mib_s",
    "write_lat_mean_us",
    "write_lat_p99_us",
    "total_ios",
    "total_iops",
    "total_mib_s",
    "total_lat_mean_us",
    "total_lat_p50_us",
    "total_lat_p99_us",
    "total_lat_max_us",
];

impl<'a> SeriesRow<'a> {
    fn new(scope: &'a str, target: &'a str, p: &SeriesPoint) -> Self {
        let (r, w, t): (&PointStats, &PointStats, &PointStats) = (&p.read, &p.write, &p.total);
        SeriesRow {
            scope,
            target,
            t_s: Fixed(p.t_s),
            duration_s: Fixed(p.duration_s),
            read_ios: r.ios,
            read_iops: Fixed(r.iops),
            read_mib_s: Fixed(r.mib_per_sec),
            read_lat_mean_us: Fixed(r.lat_mean_us),
            read_lat_p99_us: Fixed(r.lat_p99_us),
            write_ios: w.ios,
            write_iops: Fixed(w.iops),
            write_mib_s: Fixed(w.mib_per_sec),
            write_lat_mean_us: Fixed(w.lat_mean_us),
            write_lat_p99_us: Fixed(w.lat_p99_us),
            total_ios: t.ios,
            total_iops: Fixed(t.iops),
            total_mib_s: Fixed(t.mib_per_sec),
            total_lat_mean_us: Fixed(t.lat_mean_us),
            total_lat_p50_us: Fixed(t.lat_p50_us),
            total_lat_p99_us: Fixed(t.lat_p99_us),
            total_lat_max_us: Fixed(t.lat_max_us),
        }
    }
}

/// The time series as CSV: one row per interval for the total, then per
/// target (numbered from 0).
pub fn series(r: &RunResult) -> String {
    let names: Vec<String> = (0..r.series.targets.len()).map(|i| i.to_string()).collect();
    let total = r
        .series
        .total
        .iter()
        .map(|p| SeriesRow::new("total", "", p));
    let targets = r
        .series
        .targets
        .iter()
        .zip(&names)
        .flat_map(|(pts, name)| pts.iter().map(move |p| SeriesRow::new("target", name, p)));
    write(Some(SERIES_HEADER), total.chain(targets))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Row<'a> {
        name: &'a str,
        x: Fixed<2>,
        n: u64,
        ok: bool,
    }

    #[test]
    fn header_from_fields_fixed_decimals_and_quoting() {
        let rows = [
            Row {
                name: "plain",
                x: Fixed(1.0),
                n: 3,
                ok: true,
            },
            Row {
                name: "a,b \"c\"",
                x: Fixed(2.345_6),
                n: 0,
                ok: false,
            },
        ];
        assert_eq!(
            write(None, &rows),
            "name,x,n,ok\nplain,1.00,3,true\n\"a,b \"\"c\"\"\",2.35,0,false\n"
        );
    }

    #[test]
    fn explicit_header_and_keyed_tuples() {
        let rows = [(
            "t1",
            Row {
                name: "n",
                x: Fixed(0.0),
                n: 1,
                ok: true,
            },
        )];
        assert_eq!(
            write(Some(&["key", "name", "x", "n", "ok"]), rows),
            "key,name,x,n,ok\nt1,n,0.00,1,true\n"
        );
        // A header alone when there are no rows.
        assert_eq!(write(Some(&["a", "b"]), Vec::<Row>::new()), "a,b\n");
    }

    #[test]
    fn headers_are_the_row_types_field_names() {
        // RUN_HEADER and SERIES_HEADER are written explicitly (so an empty
        // table still has its header); they must equal the derived ones.
        let r: RunResult =
            serde_json::from_str(include_str!("../tests/fixtures/csv/run.json")).unwrap();
        let derived = write(None, run_rows(&r));
        assert_eq!(derived.lines().next().unwrap(), RUN_HEADER.join(","));
        let p = &r.series.total[0];
        let derived = write(None, [SeriesRow::new("total", "", p)]);
        assert_eq!(derived.lines().next().unwrap(), SERIES_HEADER.join(","));
    }
}
