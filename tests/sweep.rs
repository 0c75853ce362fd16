//! `iosim sweep` end to end on temporary files.

use crate::common;

use common::*;
use serde_json::Value;

fn sweep(args: &[&str]) -> Value {
    let out = success(
        iosim()
            .args(["sweep"])
            .args(args)
            .args(["--output", "json", "--quiet"]),
    );
    serde_json::from_str(&out).unwrap()
}

#[test]
fn qd_sweep_with_repetitions() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.dat");
    let r = sweep(&[
        p.to_str().unwrap(),
        "--size",
        "8M",
        "--vary",
        "qd=1..8x2",
        "--repeat",
        "3",
        "--duration",
        "150ms",
        "--max-latency",
        "10s",
    ]);
    let pts = r["points"].as_array().unwrap();
    assert_eq!(pts.len(), 4);
    for (p, qd) in pts.iter().zip(["1", "2", "4", "8"]) {
        assert_eq!(p["params"]["qd"], qd);
        assert_eq!(p["iops"]["n"], 3);
        assert!(p["iops"]["mean"].as_f64().unwrap() > 0.0);
        let ci = p["iops"]["ci95"].as_f64().unwrap();
        let sd = p["iops"]["sd"].as_f64().unwrap();
        // t(0.975, 2 df) = 4.302653 (tables: 4.303): ci95 = t * sd / sqrt(3).
        assert!((ci - 4.302_653 * sd / 3f64.sqrt()).abs() < 1e-6 * (1.0 + ci));
    }
    // A 10 s limit keeps every point: the best is the highest-throughput one.
    let best = r["recommended"].as_u64().unwrap() as usize;
    let max = pts
        .iter()
        .map(|p| p["iops"]["mean"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(pts[best]["iops"]["mean"].as_f64().unwrap() >= max * 0.99);
    assert_eq!(r["latency_metric"], "mean");
}

#[test]
fn grid_of_threads_and_qd_and_text_table() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("g.dat");
    let csv = dir.path().join("g.csv");
    let text = success(iosim().args([
        "sweep",
        p.to_str().unwrap(),
        "--size",
        "8M",
        "--engine",
        "null",
        "--vary",
        "threads=1,2",
        "--vary",
        "qd=1,4",
        "--duration",
        "100ms",
        "--csv",
        csv.to_str().unwrap(),
        "--quiet",
    ]));
    assert!(
        text.contains("threads") && text.contains("qd") && text.contains("IOPS"),
        "{text}"
    );
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(rows.lines().count(), 5, "{rows}");
    assert!(rows
        .lines()
        .next()
        .unwrap()
        .starts_with("qd,threads,outstanding"));
}

#[test]
fn zip_trades_threads_for_queue_depth() {
    let r = sweep(&[
        "--engine",
        "null",
        "--vary",
        "threads=1..4x2",
        "--vary",
        "qd=4..1/2",
        "--zip",
        "--duration",
        "100ms",
    ]);
    let pts = r["points"].as_array().unwrap();
    assert_eq!(pts.len(), 3);
    for p in pts {
        assert_eq!(p["outstanding"], 4, "threads x qd stays 4");
    }
}

#[test]
fn studies_are_listed_and_run() {
    let out = iosim().args(["sweep", "--list-studies"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for s in [
        "seed000-randwrite",
        "seed000-randread",
        "seed000-seqread",
        "seed000-seqwrite-8k",
        "seed001-qd",
        "seed001-tradeoff",
    ] {
        assert!(text.contains(s), "{s} missing");
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("st.dat");
    let r = sweep(&[
        p.to_str().unwrap(),
        "--size",
        "8M",
        "--study",
        "seed001-tradeoff",
        "--duration",
        "100ms",
    ]);
    assert_eq!(r["study"], "seed001-tradeoff");
    assert_eq!(r["base"]["bs"], 8192);
    assert_eq!(r["points"].as_array().unwrap().len(), 6);
}

#[test]
fn bad_sweeps_are_refused() {
    for (args, needle) in [
        (vec!["sweep", "--engine", "null"], "nothing to sweep"),
        (
            vec!["sweep", "--engine", "null", "--vary", "depth=1,2"],
            "cannot sweep",
        ),
        (
            vec!["sweep", "--engine", "null", "--study", "nope"],
            "no built-in study",
        ),
        (
            vec![
                "sweep",
                "--engine",
                "null",
                "--vary",
                "qd=1,2",
                "--vary",
                "threads=1",
                "--zip",
            ],
            "same number",
        ),
    ] {
        let out = iosim().args(&args).arg("--quiet").output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// `iosim sweep --baseline`: each point is compared with the same point of
/// an earlier sweep, and a regression exits 4 as `iosim run --baseline` does.
/// (The check compared nothing and passed, and its result was dropped: exit 0.)
#[test]
fn baseline_regression_of_a_sweep_exits_4() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.dat");
    let db = dir.path().join("h.db");
    let sweep = |extra: &[&str]| {
        iosim()
            .args(["sweep", f.to_str().unwrap(), "--db", db.to_str().unwrap()])
            .args([
                "--size",
                "4M",
                "--vary",
                "qd=1,2",
                "--duration",
                "200ms",
                "--quiet",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    // The baseline: no storage at all, far faster than any file.
    let o = sweep(&["--engine", "null", "--label", "fast"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The same points on the file: slower, so every point regressed.
    let o = sweep(&["--baseline", "label:fast"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("REGRESSION: point qd=1: IOPS"), "{err}");
    assert!(err.contains("REGRESSION: point qd=2: IOPS"), "{err}");
    // Against the file's sweep, the null engine did not regress.
    let o = sweep(&["--engine", "null", "--baseline", "last"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("baseline check passed") && !err.contains("REGRESSION"),
        "{err}"
    );
    // A run is no baseline for a sweep: refused before anything is measured.
    success(
        iosim()
            .args([
                "run", "--engine", "null", "--size", "1M", "-d", "100ms", "-q",
            ])
            .args(["--db", db.to_str().unwrap()]),
    );
    let o = sweep(&["--engine", "null", "--baseline", "last"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("holds no sweep"), "{err}");
}
