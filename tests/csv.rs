//! Every CSV iosim prints, pinned by insta snapshots (tests/snapshots/csv__*.snap)
//! on fixed result documents (tests/fixtures/csv/*.json, saved from real runs
//! on this project's test machine, paths rewritten to /data/). A change to a
//! CSV layout shows here as a snapshot diff: `cargo insta review`.

use iosim::runner::RunResult;

fn fixture<T: serde::de::DeserializeOwned>(name: &str) -> T {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/csv")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn check(name: &str, got: &str) {
    insta::with_settings!({snapshot_path => "snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(format!("csv__{name}"), got);
    });
}

#[test]
fn run_csv_one_row_per_target_and_the_total() {
    let r: RunResult = fixture("run");
    // One target's path holds a comma: it must come out quoted.
    assert!(r.targets.iter().any(|t| t.path.contains(',')));
    check("run", &iosim::report::csv(&r));
}

#[test]
fn run_csv_one_row_per_block_size_of_a_size_mix() {
    // `iosim run --engine null --bssplit 4k/70:64k/25:1m/5 --rw randrw`.
    let r: RunResult = fixture("run_bssplit");
    let csv = iosim::report::csv(&r);
    let sizes: Vec<&str> = csv.lines().filter(|l| l.starts_with("size,")).collect();
    assert_eq!(sizes.len(), 3, "{csv}");
    // The size rows add up to the total row's I/Os.
    let col = |l: &str, i: usize| l.split(',').nth(i).unwrap().parse::<u64>().unwrap();
    let total = csv.lines().find(|l| l.starts_with("total,")).unwrap();
    let ios = 20; // total_ios
    assert_eq!(
        sizes.iter().map(|l| col(l, ios)).sum::<u64>(),
        col(total, ios)
    );
    assert_eq!(
        sizes.iter().map(|l| col(l, 4)).collect::<Vec<_>>(),
        [4096, 65536, 1 << 20]
    );
    check("run_bssplit", &csv);
}

#[test]
fn series_csv_one_row_per_interval_and_scope() {
    let r: RunResult = fixture("run");
    assert!(!r.series.total.is_empty());
    check("series", &iosim::report::series_csv(&r));
}

#[test]
fn quick_csv_one_row_per_test() {
    let q: iosim::quick::QuickResult = fixture("quick");
    check("quick", &iosim::quick::csv(&q));
}

#[test]
fn sweep_csv_one_row_per_point() {
    let s: iosim::sweep::SweepResult = fixture("sweep");
    check("sweep", &iosim::sweep::csv(&s));
}

#[test]
fn profile_csv_one_row_per_workload_and_direction() {
    let p: iosim::profile::ProfileResult = fixture("profile");
    check("profile", &iosim::profile::csv(&p));
}

#[test]
fn matrix_grids_in_orions_layout() {
    use iosim::matrix::{grid_csv, Metric};
    let m: iosim::matrix::MatrixResult = fixture("matrix");
    check("matrix_iops", &grid_csv(&m, Metric::SmallIops));
    check("matrix_mbps", &grid_csv(&m, Metric::LargeMbps));
    check("matrix_lat", &grid_csv(&m, Metric::SmallLatency));
}

/// `iosim qualify -o csv` (issue 24: listed in --help but refused): one row
/// per measurement, the corners, every sweep point with its repetitions'
/// confidence interval and knee, every profile workload.
#[test]
fn qualify_csv_one_row_per_measurement() {
    let doc: iosim::document::Document = fixture("qualify");
    let iosim::document::Document::Qualify(q) = &doc else {
        panic!("a qualification");
    };
    let out = iosim::document::render(&doc, iosim::report::OutputFormat::Csv).unwrap();
    let mut r = csv::Reader::from_reader(out.as_bytes());
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let points: usize = q.body.sweeps.iter().map(|s| s.result.points.len()).sum();
    assert_eq!(
        rows.len(),
        q.body.quick.len() + points + q.body.profiles.len()
    );
    let sweep = rows
        .iter()
        .find(|r| &r[0] == "sweep" && &r[2] == "qd=8")
        .unwrap();
    assert!(sweep[3].starts_with("randread 8KiB qd8 "), "{sweep:?}");
    assert!(!sweep[8].is_empty(), "the IOPS confidence interval");
    assert_eq!(
        rows.iter().filter(|r| &r[16] == "true").count(),
        q.body
            .sweeps
            .iter()
            .filter(|s| s.result.knee.is_some())
            .count()
    );
    // The last columns name the database and what it calls each role.
    assert!(
        rows.iter()
            .all(|r| &r[r.len() - 2] == "sqlserver" && r[r.len() - 1] == r[1]),
        "{rows:?}"
    );
    check("qualify", &out);
}
