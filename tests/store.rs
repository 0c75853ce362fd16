//! The run history through the real binary: store, list, show, compare and
//! the baseline guard round-trip; old schemas migrate; a corrupt or locked
//! database never loses the run just measured. Every test uses its own
//! database in a temp dir (and XDG_DATA_HOME points into it too).

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn iosim(dir: &Path, args: &[&str]) -> Out {
    let o = common::iosim()
        .args(args)
        .current_dir(dir)
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .output()
        .unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// A fast run on the null engine (no disk I/O), saved to `db`.
fn null_run(dir: &Path, db: &Path, extra: &[&str]) -> Out {
    let mut args = vec![
        "run", "--engine", "null", "--size", "1M", "-d", "300ms", "-q", "--db",
    ];
    let db = db.to_str().unwrap();
    args.push(db);
    args.extend_from_slice(extra);
    iosim(dir, &args)
}

fn saved_id(o: &Out) -> i64 {
    let line = o
        .stderr
        .lines()
        .find(|l| l.starts_with("saved as run "))
        .unwrap_or_else(|| panic!("no 'saved as run' in stderr: {}", o.stderr));
    line["saved as run ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn tmp() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h.db");
    (d, db)
}

#[test]
fn run_show_round_trip_in_every_format() {
    let (d, db) = tmp();
    let dbs = db.to_str().unwrap();
    let r = null_run(d.path(), &db, &["-o", "json", "--label", "rt"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = saved_id(&r).to_string();
    let shown = iosim(d.path(), &["show", &id, "--db", dbs, "-o", "json"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert_eq!(
        shown.stdout, r.stdout,
        "show -o json reprints the run exactly"
    );

    // Text and CSV are rendered from the stored result as from the fresh one.
    let res: iosim::runner::RunResult = serde_json::from_str(&r.stdout).unwrap();
    let text = iosim(d.path(), &["show", &id, "--db", dbs]);
    assert_eq!(text.stdout, iosim::report::text(&res));
    let csv = iosim(d.path(), &["show", &id, "--db", dbs, "-o", "csv"]);
    assert_eq!(csv.stdout, iosim::report::csv(&res));

    // The stored histogram reproduces the reported percentiles exactly.
    let doc: Value = serde_json::from_str(&shown.stdout).unwrap();
    let h = iosim::stats::decode_histogram(doc["histograms"]["read"].as_str().unwrap()).unwrap();
    assert!(h.len() > 1000);
    let lat = &doc["total"]["read"]["latency_us"];
    let min = (lat["min"].as_f64().unwrap() * 1000.0).round() as u64;
    let max = (lat["max"].as_f64().unwrap() * 1000.0).round() as u64;
    for p in iosim::stats::Percentile::ALL {
        let v = h.value_at_quantile(p.quantile()).clamp(min, max) as f64 / 1000.0;
        let label = p.label();
        assert_eq!(v, lat["percentiles"][label].as_f64().unwrap(), "{label}");
    }
}

#[test]
fn history_lists_and_filters() {
    let (d, db) = tmp();
    let dbs = db.to_str().unwrap();
    let a = saved_id(&null_run(d.path(), &db, &["--label", "before-upgrade"]));
    let b = saved_id(&null_run(
        d.path(),
        &db,
        &["--label", "after-upgrade", "--qd", "4"],
    ));
    let h = iosim(d.path(), &["history", "--db", dbs]);
    assert_eq!(h.code, 0, "{}", h.stderr);
    let lines: Vec<&str> = h.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", h.stdout);
    assert!(
        lines[1].trim_start().starts_with(&b.to_string()),
        "newest first"
    );
    let j = iosim(
        d.path(),
        &["history", "--db", dbs, "--label", "before", "-o", "json"],
    );
    let v: Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["id"], a);
    assert_eq!(v[0]["kind"], "run");
    assert!(v[0]["iops"].as_f64().unwrap() > 0.0);
    let today = &v[0]["started_at"].as_str().unwrap()[..10];
    let j = iosim(
        d.path(),
        &[
            "history", "--db", dbs, "--until", today, "--since", today, "-o", "csv",
        ],
    );
    assert_eq!(j.stdout.lines().count(), 3, "{}", j.stdout);
    let j = iosim(
        d.path(),
        &[
            "history",
            "--db",
            dbs,
            "--since",
            "2999-01-01",
            "-o",
            "json",
        ],
    );
    assert_eq!(j.stdout.trim(), "[]");
    let _ = null_run(d.path(), &db, &["--label", "before-upgrade"]);
    let j = iosim(
        d.path(),
        &["show", "label:before-upgrade", "--db", dbs, "-o", "json"],
    );
    let v: Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(
        v.as_array().map(Vec::len),
        Some(2),
        "a label's runs as one JSON array"
    );
    let j = iosim(d.path(), &["show", "label:before-upgrade", "--db", dbs]);
    assert_eq!(j.stdout.matches("=== run ").count(), 2);
    let j = iosim(
        d.path(),
        &["history", "--db", dbs, "--target", "no-such-path"],
    );
    assert!(j.stderr.contains("no stored runs match"));
}

#[test]
fn no_save_and_default_location() {
    let (d, db) = tmp();
    let r = null_run(d.path(), &db, &["--no-save"]);
    assert_eq!(r.code, 0);
    assert!(!db.exists());
    // Without --db: $XDG_DATA_HOME/iosim/history.db (the test's own temp dir).
    let r = iosim(
        d.path(),
        &[
            "run", "--engine", "null", "--size", "1M", "-d", "200ms", "-q",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        d.path().join("xdg/iosim/history.db").exists(),
        "{}",
        r.stderr
    );
    let h = iosim(d.path(), &["history", "-o", "json"]);
    assert_eq!(
        serde_json::from_str::<Value>(&h.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn compare_single_runs_and_repetitions() {
    let (d, db) = tmp();
    let dbs = db.to_str().unwrap();
    let mut ids = Vec::new();
    for (label, qd) in [
        ("a", "1"),
        ("a", "1"),
        ("a", "1"),
        ("b", "8"),
        ("b", "8"),
        ("b", "8"),
    ] {
        ids.push(saved_id(&null_run(
            d.path(),
            &db,
            &["--label", label, "--qd", qd],
        )));
    }
    let one = iosim(
        d.path(),
        &[
            "compare",
            "--db",
            dbs,
            &ids[0].to_string(),
            &ids[3].to_string(),
        ],
    );
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert!(
        one.stdout.contains("Significance needs repetitions"),
        "{}",
        one.stdout
    );
    assert!(!one.stdout.contains("Welch"));
    let reps = iosim(d.path(), &["compare", "--db", dbs, "label:a", "label:b"]);
    assert!(reps.stdout.contains("label:a (n=3)"), "{}", reps.stdout);
    assert!(reps.stdout.contains("Welch's t-test"), "{}", reps.stdout);
    assert!(reps.stdout.contains("p = "), "{}", reps.stdout);

    // JSON: the compared means are exactly the stored runs' means.
    let j = iosim(
        d.path(),
        &["compare", "--db", dbs, "label:a", "label:b", "-o", "json"],
    );
    let v: Value = serde_json::from_str(&j.stdout).unwrap();
    let iops = |id: i64| {
        let s = iosim(
            d.path(),
            &["show", &id.to_string(), "--db", dbs, "-o", "json"],
        );
        serde_json::from_str::<Value>(&s.stdout).unwrap()["total"]["total"]["iops"]
            .as_f64()
            .unwrap()
    };
    let mean_b = (iops(ids[3]) + iops(ids[4]) + iops(ids[5])) / 3.0;
    let diff = &v["scopes"][0]["diffs"][1][0];
    assert_eq!(diff["metric"], "IOPS");
    assert!((diff["value"].as_f64().unwrap() - mean_b).abs() <= mean_b * 1e-12);
    assert!(diff["welch"]["p"].as_f64().unwrap() >= 0.0);
    assert_eq!(
        v["scopes"][0]["sides"][0]["ids"],
        serde_json::json!(&ids[..3])
    );

    let bad = iosim(d.path(), &["compare", "--db", dbs, "1", "999"]);
    assert_ne!(bad.code, 0);
    assert!(
        bad.stderr.contains("no stored run matches '999'"),
        "{}",
        bad.stderr
    );
}

#[test]
fn baseline_guard_exit_codes() {
    let (d, db) = tmp();
    let dbs = db.to_str().unwrap();
    // A fast baseline (null engine) and a much slower run (sync engine, buffered file).
    let fast = saved_id(&null_run(d.path(), &db, &["--qd", "8"]));
    let file = d.path().join("t.dat");
    let slow_args = [
        "run",
        file.to_str().unwrap(),
        "--size",
        "4M",
        "--engine",
        "sync",
        "--cache",
        "buffered",
        "-d",
        "300ms",
        "-q",
        "--db",
        dbs,
    ];
    let mut args = slow_args.to_vec();
    let fast_s = fast.to_string();
    args.extend(["--baseline", &fast_s]);
    let r = iosim(d.path(), &args);
    assert_eq!(r.code, 4, "regression exits 4: {}", r.stderr);
    assert!(r.stderr.contains("REGRESSION: IOPS"), "{}", r.stderr);
    assert!(
        r.stdout.contains("IOs/sec") || !r.stdout.is_empty(),
        "the result is still printed"
    );
    let slow = saved_id(&r);
    // Faster than the baseline: no regression.
    let slow_s = slow.to_string();
    let r = null_run(d.path(), &db, &["--baseline", &slow_s, "--threshold", "5"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("baseline check passed"), "{}", r.stderr);
    // A huge threshold lets the regression pass.
    let mut args = slow_args.to_vec();
    args.extend(["--baseline", &fast_s, "--threshold", "100000"]);
    assert_eq!(iosim(d.path(), &args).code, 0);
    // A single-run baseline says one run cannot tell a regression from noise.
    assert!(
        r.stderr
            .contains("one run cannot tell a regression from noise"),
        "{}",
        r.stderr
    );
    // An unknown baseline fails at once (exit 1): nothing is measured,
    // printed or stored.
    let before = iosim(d.path(), &["history", "--db", dbs, "-o", "json"]).stdout;
    let r = null_run(d.path(), &db, &["--baseline", "777"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("no stored run matches '777'"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("saved as run"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    let after = iosim(d.path(), &["history", "--db", dbs, "-o", "json"]).stdout;
    assert_eq!(before, after, "nothing was stored");
    // A baseline of repetitions does not warn.
    for _ in 0..2 {
        null_run(d.path(), &db, &["--label", "reps"]);
    }
    let r = null_run(
        d.path(),
        &db,
        &["--baseline", "label:reps", "--threshold", "1000"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !r.stderr.contains("cannot tell a regression from noise"),
        "{}",
        r.stderr
    );
}

#[test]
fn report_output_is_a_format_and_out_is_the_file() {
    let (d, db) = tmp();
    let dbs = db.to_str().unwrap();
    let id = saved_id(&null_run(d.path(), &db, &[])).to_string();
    // -o json: the stored documents, on stdout, no file named `json`.
    let j = iosim(d.path(), &["report", "--db", dbs, &id, "-o", "json"]);
    assert_eq!(j.code, 0, "{}", j.stderr);
    let v: Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(v[0]["kind"], "run");
    assert!(!d.path().join("json").exists());
    // -o text prints what `show` prints.
    let t = iosim(d.path(), &["report", "--db", dbs, &id, "-o", "text"]);
    let s = iosim(d.path(), &["show", "--db", dbs, &id]);
    assert_eq!(t.stdout, s.stdout);
    // The default is HTML; --out names the file.
    let h = iosim(d.path(), &["report", "--db", dbs, &id, "--out", "r.html"]);
    assert_eq!(h.code, 0, "{}", h.stderr);
    assert!(h.stdout.is_empty());
    let page = std::fs::read_to_string(d.path().join("r.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..40]);
    // A file name given to -o is refused with the way to write a file.
    let bad = iosim(d.path(), &["report", "--db", dbs, &id, "-o", "r2.html"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("--out r2.html"), "{}", bad.stderr);
    assert!(!d.path().join("r2.html").exists());
}

/// The JSON written to stdout and to the fallback file are the same result.
fn check_fallback(d: &Path, r: &Out, why: &str) {
    assert_eq!(r.code, 0, "the run itself succeeded: {}", r.stderr);
    assert!(
        r.stderr.contains("warning: the result was not stored"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(why), "{}", r.stderr);
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains("JSON was written to "))
        .unwrap_or_else(|| panic!("no fallback path: {}", r.stderr));
    let path = line
        .split("written to ")
        .nth(1)
        .unwrap()
        .trim_end_matches(" instead");
    assert!(
        Path::new(path).starts_with(d.canonicalize().unwrap()),
        "{path}"
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    // The file holds the document as the history would have stored it: the
    // printed run schema plus its kind.
    let mut printed: Value = serde_json::from_str(&r.stdout).unwrap();
    printed["kind"] = "run".into();
    assert_eq!(saved, printed);
}

#[test]
fn corrupt_database_never_loses_the_run() {
    let (d, db) = tmp();
    std::fs::write(&db, vec![0x5a; 8192]).unwrap();
    let r = null_run(d.path(), &db, &["-o", "json"]);
    check_fallback(d.path(), &r, "is not a readable iosim history database");
    let h = iosim(d.path(), &["history", "--db", db.to_str().unwrap()]);
    assert_eq!(h.code, 1);
    assert!(h.stderr.contains("move it aside"), "{}", h.stderr);
}

#[test]
fn locked_database_never_loses_the_run() {
    let (d, db) = tmp();
    let _ = null_run(d.path(), &db, &[]);
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder
        .execute_batch(
            "BEGIN EXCLUSIVE; INSERT INTO runs (kind, started_at, doc) VALUES ('x', 't', '{}');",
        )
        .unwrap();
    let r = null_run(d.path(), &db, &["-o", "json"]);
    check_fallback(d.path(), &r, "is locked by another process");
    drop(holder);
    // The lock gone, the database is fine and holds the first run only.
    let h = iosim(
        d.path(),
        &["history", "--db", db.to_str().unwrap(), "-o", "json"],
    );
    assert_eq!(
        serde_json::from_str::<Value>(&h.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn version_1_database_migrates() {
    let (d, db) = tmp();
    // A real result, with a device model as sysmon will add it later.
    let r = null_run(d.path(), &db, &["-o", "json", "--no-save"]);
    let mut doc: Value = serde_json::from_str(&r.stdout).unwrap();
    doc["targets"] =
        serde_json::json!([{"path": "/dev/fixture", "device": {"model": "FIXTURE DISK 1TB"}}]);
    let old = d.path().join("v1.db");
    {
        let c = rusqlite::Connection::open(&old).unwrap();
        c.execute_batch(iosim::store::schema::V1_SQL).unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
        c.execute(
            "INSERT INTO runs (kind, started_at, label, host, targets, iosim_version, doc)
             VALUES ('run', ?1, 'old', 'oldhost', '[\"/dev/fixture\"]', '0.0.9', ?2)",
            rusqlite::params![doc["started_at"].as_str().unwrap(), doc.to_string()],
        )
        .unwrap();
    }
    let olds = old.to_str().unwrap();
    let h = iosim(
        d.path(),
        &["history", "--db", olds, "--device", "FIXTURE", "-o", "json"],
    );
    assert_eq!(h.code, 0, "{}", h.stderr);
    let v: Value = serde_json::from_str(&h.stdout).unwrap();
    assert_eq!(
        v[0]["device"], "FIXTURE DISK 1TB",
        "backfilled from the document"
    );
    assert_eq!(v[0]["label"], "old");
    let s = iosim::store::Store::open(&old).unwrap();
    assert_eq!(
        s.schema_version().unwrap(),
        iosim::store::schema::CURRENT_VERSION
    );
    let shown = iosim(d.path(), &["show", "1", "--db", olds, "-o", "json"]);
    // Migration 3 named the kind inside the document; nothing else changed.
    let mut want = doc.clone();
    want["kind"] = "run".into();
    assert_eq!(serde_json::from_str::<Value>(&shown.stdout).unwrap(), want);
    // New runs go in after the migrated one.
    assert_eq!(saved_id(&null_run(d.path(), &old, &[])), 2);

    // A database from a newer iosim is refused, not damaged.
    let newer = d.path().join("new.db");
    rusqlite::Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let h = iosim(d.path(), &["history", "--db", newer.to_str().unwrap()]);
    assert!(h.stderr.contains("newer than this iosim"), "{}", h.stderr);
}

#[test]
fn unknown_kinds_degrade_to_json() {
    let (d, db) = tmp();
    let dbs = db.to_str().unwrap();
    let run = saved_id(&null_run(d.path(), &db, &[]));
    let sim = {
        let s = iosim::store::Store::open(&db).unwrap();
        let doc = serde_json::json!({"profile": {"name": "oltp"}, "checks": {"pages": 1000, "errors": 0}});
        // A kind this iosim has no type for: its columns are the caller's.
        let meta = iosim::store::Meta {
            profile: Some("oltp".into()),
            ..iosim::store::Meta::default()
        };
        s.save("sim", Some("nightly"), &doc, &meta).unwrap()
    };
    let h = iosim(d.path(), &["history", "--db", dbs, "--profile", "oltp"]);
    assert!(
        h.stdout.contains("sim") && h.stdout.contains("[oltp]"),
        "{}",
        h.stdout
    );
    let s = iosim(d.path(), &["show", &sim.to_string(), "--db", dbs]);
    assert_eq!(s.code, 0);
    assert!(s.stdout.contains("\"pages\": 1000"), "{}", s.stdout);
    let c = iosim(
        d.path(),
        &["show", &sim.to_string(), "--db", dbs, "-o", "csv"],
    );
    assert_ne!(c.code, 0);
    assert!(c.stderr.contains("use -o json"));
    let c = iosim(
        d.path(),
        &["compare", "--db", dbs, &run.to_string(), &sim.to_string()],
    );
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(
        c.stdout.contains("without run results to compare"),
        "{}",
        c.stdout
    );
    let out = d.path().join("r.html");
    let r = iosim(
        d.path(),
        &[
            "report",
            "--db",
            dbs,
            &run.to_string(),
            &sim.to_string(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("iosim cannot chart this kind"));
    assert!(html.contains("&quot;pages&quot;: 1000"));
}

#[test]
fn quick_suite_is_stored_and_compared_per_test() {
    let (d, db) = tmp();
    let dbs = db.to_str().unwrap();
    let args = [
        "quick",
        d.path().to_str().unwrap(),
        "--size",
        "4M",
        "--duration",
        "150ms",
        "--cache",
        "buffered",
        "-q",
        "--db",
        dbs,
    ];
    let mut json_args = args.to_vec();
    json_args.extend(["-o", "json"]);
    let a = iosim(d.path(), &json_args);
    assert_eq!(a.code, 0, "{}", a.stderr);
    let a_json = a.stdout.clone();
    let b = iosim(d.path(), &args);
    let (a, b) = (saved_id(&a), saved_id(&b));
    let j = iosim(
        d.path(),
        &["show", &a.to_string(), "--db", dbs, "-o", "json"],
    );
    assert_eq!(j.stdout, a_json, "a quick suite reprints exactly");
    let s = iosim(d.path(), &["show", &a.to_string(), "--db", dbs]);
    assert!(s.stdout.contains("rand read 4K QD32"), "{}", s.stdout);
    let c = iosim(
        d.path(),
        &["compare", "--db", dbs, &a.to_string(), &b.to_string()],
    );
    assert_eq!(
        c.stdout.matches("== ").count(),
        iosim::quick::SUITE.len(),
        "{}",
        c.stdout
    );
}

#[test]
fn records_where_the_target_lives() {
    let (d, db) = tmp();
    let file = d.path().join("t.dat");
    let r = iosim(
        d.path(),
        &[
            "run",
            file.to_str().unwrap(),
            "--size",
            "1M",
            "--engine",
            "sync",
            "--cache",
            "buffered",
            "-d",
            "200ms",
            "-q",
            "--db",
            db.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let h = iosim(
        d.path(),
        &["history", "--db", db.to_str().unwrap(), "-o", "json"],
    );
    let v: Value = serde_json::from_str(&h.stdout).unwrap();
    let env = &v[0]["environment"][0];
    assert_eq!(env["path"], file.to_str().unwrap());
    assert!(!env["filesystem"].as_str().unwrap().is_empty(), "{env}");
    assert!(!env["mount_options"].as_str().unwrap().is_empty(), "{env}");
    assert_eq!(v[0]["targets"][0], file.to_str().unwrap());
}

/// Reading commands never create a database: with none yet, `history` lists
/// nothing and says why, the others fail with a message naming the path.
#[test]
fn reading_commands_do_not_create_a_database() {
    let (d, db) = tmp();
    let dbs = db.to_str().unwrap();
    let o = iosim(d.path(), &["history", "--db", dbs]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("no history database"), "{}", o.stderr);
    let o = iosim(d.path(), &["history", "--db", dbs, "--output", "json"]);
    assert_eq!(o.stdout.trim(), "[]");
    for args in [
        vec!["show", "last"],
        vec!["compare", "1", "2"],
        vec!["report", "last", "--out", "r.html"],
    ] {
        let mut a = args.clone();
        a.extend_from_slice(&["--db", dbs]);
        let o = iosim(d.path(), &a);
        assert_ne!(o.code, 0, "{args:?}");
        assert!(o.stderr.contains(dbs), "{args:?}: {}", o.stderr);
    }
    assert!(!db.exists(), "a reading command created {dbs}");
    let o = null_run(d.path(), &db, &["--baseline", "last"]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("no history database"), "{}", o.stderr);
    // The default location stays empty too.
    let o = iosim(d.path(), &["history"]);
    assert_eq!(o.code, 0);
    assert!(!d.path().join("xdg/iosim/history.db").exists());
}

#[test]
fn every_front_end_is_stored_found_by_target_and_compared() {
    let (d, db) = tmp();
    let dbs = db.to_str().unwrap();
    // SQLIO and DiskSpd command lines are kept like `iosim run`'s results.
    let s = iosim(
        d.path(),
        &[
            "sqlio", "-kR", "-s1", "-frandom", "-b8", "t.dat", "--engine", "null", "--size", "1M",
            "--quiet", "--db", dbs, "--label", "legacy",
        ],
    );
    assert_eq!(s.code, 0, "{}", s.stderr);
    let sqlio = saved_id(&s).to_string();
    let k = iosim(
        d.path(),
        &[
            "diskspd", "-c1M", "-d1", "-W0", "-b8K", "-r", "k.dat", "--engine", "null", "--quiet",
            "--db", dbs,
        ],
    );
    assert_eq!(k.code, 0, "{}", k.stderr);
    saved_id(&k);
    // --no-save opts out, as for run.
    let n = iosim(
        d.path(),
        &[
            "sqlio",
            "-kR",
            "-s1",
            "-frandom",
            "t.dat",
            "--engine",
            "null",
            "--quiet",
            "--db",
            dbs,
            "--no-save",
        ],
    );
    assert_eq!(n.code, 0, "{}", n.stderr);
    assert!(!n.stderr.contains("saved as run"), "{}", n.stderr);
    // Found by the relative path, by the absolute one, and shown as JSON on a clean stdout.
    let abs = d.path().canonicalize().unwrap().join("t.dat");
    for t in ["t.dat", "./t.dat", abs.to_str().unwrap()] {
        let h = iosim(
            d.path(),
            &["history", "--db", dbs, "--target", t, "-o", "json"],
        );
        let v: Value = serde_json::from_str(&h.stdout).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 1, "{t}: {}", h.stdout);
        assert_eq!(v[0]["id"].to_string(), sqlio);
    }
    let j = iosim(d.path(), &["show", &sqlio, "--db", dbs, "-o", "json"]);
    let v: Value = serde_json::from_str(&j.stdout).unwrap();
    assert!(v["notes"].as_array().unwrap().iter().any(|n| n
        .as_str()
        .unwrap()
        .starts_with("measured by: iosim sqlio -kR")));
    // Sweeps are found by target and compared point by point.
    let sweep = |label: &str| {
        let o = iosim(
            d.path(),
            &[
                "sweep", "w.dat", "--engine", "null", "--size", "1M", "-d", "100ms", "--vary",
                "qd=1,2", "-q", "--db", dbs, "--label", label,
            ],
        );
        assert_eq!(o.code, 0, "{}", o.stderr);
        saved_id(&o).to_string()
    };
    let (a, b) = (sweep("a"), sweep("b"));
    let h = iosim(d.path(), &["history", "--db", dbs, "--target", "w.dat"]);
    assert_eq!(h.stdout.matches("sweep").count(), 2, "{}", h.stdout);
    let c = iosim(d.path(), &["compare", "--db", dbs, &a, &b]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(c.stdout.contains("== point qd=1 =="), "{}", c.stdout);
    assert!(c.stdout.contains("== point qd=2 =="), "{}", c.stdout);
    assert!(!c.stdout.contains('{'), "no raw JSON: {}", c.stdout);
    // Different workloads are compared with a warning, never silently.
    let r1 = saved_id(&null_run(d.path(), &db, &[])).to_string();
    let r2 = saved_id(&null_run(d.path(), &db, &["--qd", "8"])).to_string();
    let c = iosim(d.path(), &["compare", "--db", dbs, &r1, &r2]);
    assert!(c.stderr.contains("different workloads"), "{}", c.stderr);
    assert!(c.stdout.contains("WARNING: "), "{}", c.stdout);
    // A sweep against a run: different kinds, said so.
    let c = iosim(d.path(), &["compare", "--db", dbs, &r1, &a]);
    assert!(
        c.stderr.contains("different kinds of result"),
        "{}",
        c.stderr
    );
}

/// `show` prints a stored `iosim sqlio`, `iosim diskspd` (text and XML) or
/// `iosim sim` result exactly as the command printed it (the same renderer
/// on the stored plan and result); `-o json` stays one clean JSON document.
#[test]
fn show_reprints_each_front_end_as_it_printed() {
    let (d, db) = tmp();
    let dbs = db.to_str().unwrap();
    let cases: [&[&str]; 4] = [
        // SQLIO: creates its file (expansion lines), latency histogram, -U CPU report.
        &[
            "sqlio", "-kR", "-s1", "-frandom", "-b8", "-o4", "-LS", "-U", "-BN", "t.dat", "--size",
            "2M", "--engine", "sync", "--quiet",
        ],
        // DiskSpd, text with latency percentiles.
        &[
            "diskspd", "-c2M", "-d1", "-W0", "-b8K", "-r", "-L", "-o2", "k.dat", "--engine",
            "sync", "--quiet",
        ],
        // DiskSpd's XML report.
        &[
            "diskspd", "-c2M", "-d1", "-W0", "-b8K", "-w50", "-Rxml", "k.dat", "--engine", "sync",
            "--quiet",
        ],
        // The simulator.
        &["sim", "-q", "--size", "8", "--duration", "1"],
    ];
    for args in cases {
        let mut a = args.to_vec();
        a.extend_from_slice(&["--db", dbs]);
        let o = iosim(d.path(), &a);
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        assert!(!o.stdout.is_empty(), "{args:?} printed nothing");
        let id = saved_id(&o).to_string();
        let shown = iosim(d.path(), &["show", &id, "--db", dbs]);
        assert_eq!(shown.code, 0, "{}", shown.stderr);
        assert_eq!(
            shown.stdout, o.stdout,
            "{args:?}: `iosim show {id}` differs from what the command printed"
        );
        let j = iosim(d.path(), &["show", &id, "--db", dbs, "-o", "json"]);
        assert!(j.stdout.starts_with('{'), "{args:?}: {}", j.stdout);
        let v: Value = serde_json::from_str(&j.stdout).unwrap();
        assert!(v.is_object(), "{args:?}");
    }
    // The stored run still compares and lists as a run.
    let h = iosim(d.path(), &["history", "--db", dbs, "--kind", "run"]);
    assert_eq!(h.stdout.lines().count(), 4, "{}", h.stdout);
}

/// A qualification is listed with its targets and verdict, and the report
/// shows its verdicts with their reasons.
#[test]
fn qualify_results_in_history_and_report() {
    let (d, db) = tmp();
    let dbs = db.to_str().unwrap();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let q = iosim(
        d.path(),
        &[
            "qualify",
            "--data",
            data.to_str().unwrap(),
            "--time",
            "10s",
            "--size",
            "16M",
            "-q",
            "--db",
            dbs,
            "-o",
            "json",
        ],
    );
    assert!(q.code == 0 || q.code == 3, "{}", q.stderr);
    let id = saved_id(&q).to_string();
    let doc: Value = serde_json::from_str(&q.stdout).unwrap();
    // FIT, FIT WITH WARNINGS or NOT FIT: whatever this machine earned.
    let label = doc["overall"].as_str().unwrap().to_string();
    let canon = data.canonicalize().unwrap();
    let h = iosim(d.path(), &["history", "--db", dbs, "-o", "json"]);
    let v: Value = serde_json::from_str(&h.stdout).unwrap();
    let row = v
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"].as_i64() == id.parse::<i64>().ok())
        .unwrap();
    assert_eq!(row["kind"], "qualify");
    assert_eq!(row["targets"][0], canon.to_str().unwrap(), "{row}");
    assert_eq!(row["verdict"], label.as_str(), "{row}");
    let t = iosim(d.path(), &["history", "--db", dbs]);
    let line = t
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{id} ")))
        .unwrap();
    // A 10 s budget is under the minimum: PRELIMINARY, with the budget and file size.
    assert!(
        line.contains(&format!(
            "PRELIMINARY {label} (budget 10s, files 16MiB): {}",
            canon.display()
        )),
        "{line}"
    );
    // Found by its target.
    let f = iosim(
        d.path(),
        &[
            "history", "--db", dbs, "--target", "data", "--kind", "qualify",
        ],
    );
    assert_eq!(f.stdout.lines().count(), 2, "{}", f.stdout);
    // The report: its verdict section, each role with its verdict.
    let out = d.path().join("r.html");
    let r = iosim(
        d.path(),
        &["report", &id, "--db", dbs, "--out", out.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(
        html.contains(&format!(
            "<h2 class=\"qualify\" data-verdict=\"{label}\">Qualification #{id}"
        )),
        "{html}"
    );
    // Its verdict and references, with ids of their own (a report may hold
    // several qualifications): each reason's source links to its reference.
    assert!(html.contains(&format!("<section id=\"q{id}-verdict\">")));
    assert!(html.contains(&format!("<section id=\"q{id}-references\">")));
    assert!(html.contains(&format!("<tr id=\"q{id}-ref-randal\">")));
    for anchor in html.split("href=\"#").skip(1) {
        let anchor = anchor.split('"').next().unwrap();
        assert!(
            html.contains(&format!(" id=\"{anchor}\"")),
            "#{anchor} names nothing in the report"
        );
    }
    assert!(!html.contains("href=\"docs/"), "no relative link");
    for v in doc["verdicts"].as_array().unwrap() {
        assert!(
            html.contains(&format!("data-role=\"{}\"", v["role"].as_str().unwrap())),
            "role {} missing",
            v["role"]
        );
    }
    assert!(
        !html.contains("iosim cannot chart this kind"),
        "not dumped as JSON"
    );
}

/// Issue 23: a NaN `--threshold` was accepted and disabled the guard (no
/// difference is ever "beyond NaN"). Every f64 option refuses NaN and
/// infinities on the command line (exit 2) with what to give instead;
/// nothing runs and nothing is stored.
#[test]
fn f64_options_refuse_nan_and_infinities() {
    let (d, db) = tmp();
    for (args, option, said) in [
        (
            vec!["run", "--baseline", "last", "--threshold", "NaN"],
            "'--threshold <PCT>'",
            "'NaN' is not a finite number of 0 or more: give e.g. 10 or 0.5",
        ),
        (
            vec!["run", "--baseline", "last", "--threshold", "inf"],
            "'--threshold <PCT>'",
            "'inf' is not a finite number of 0 or more",
        ),
        (
            vec!["sweep", "--knee-threshold=-inf"],
            "'--knee-threshold <KNEE_THRESHOLD>'",
            "'-inf' is not a finite number of 0 or more",
        ),
        (
            vec!["sweep", "--max-latency", "1e308s"],
            "'--max-latency <MAX_LATENCY>'",
            "invalid latency '1e308s': too large",
        ),
        (
            vec!["replay", "--speed", "NaNx", "t.trace"],
            "'--speed <Nx>'",
            "'NaNx': the speed factor must be above 0",
        ),
    ] {
        let mut a = args.clone();
        a.extend([
            "--engine",
            "null",
            "--size",
            "1M",
            "--db",
            db.to_str().unwrap(),
            "t.dat",
        ]);
        let r = iosim(d.path(), &a);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(option) && r.stderr.contains(said),
            "{args:?}: {}",
            r.stderr
        );
        assert!(!db.exists(), "{args:?}: nothing is stored");
        assert!(!d.path().join("t.dat").exists(), "{args:?}: nothing runs");
    }
}

/// Issue 24: `compare` of two stored qualifications printed "a document
/// without run results" and exited 0. It shows each role's verdict then and
/// now and each workload's change (with Welch's test on the sweep points'
/// repetitions), and with `--threshold` exits 4 on a regression. The second
/// qualification is the first with its log commits made twice as slow and
/// the log judged NOT FIT: an honest regression, known in advance.
#[test]
fn qualifications_are_compared_verdict_by_verdict_and_guarded() {
    use iosim::qualify::rules::Verdict;
    use iosim::verdict::Role;
    let (d, db) = tmp();
    let dbs = db.to_str().unwrap();
    // The log's runs spread by 5% over their intervals on both sides (a
    // quiet machine): -50% is beyond that noise (±24.2% for the figures compared) and the threshold.
    let quiet = |q: &mut iosim::qualify::QualifyResult| {
        for p in q.profiles.iter_mut() {
            p.measure.spread_pct = Some([Some(5.0), Some(5.0)]);
        }
    };
    let before = common::stored_qualification(&db, "before", quiet);
    let after = common::stored_qualification(&db, "after", |q| {
        quiet(q);
        for p in q
            .profiles
            .iter_mut()
            .filter(|p| p.measure.role == Role::Log)
        {
            p.measure.iops /= 2.0;
            p.measure.write_mean_us = p.measure.write_mean_us.map(|w| w * 2.0);
        }
        for v in q.verdicts.iter_mut().filter(|v| v.role == Role::Log) {
            v.verdict = Verdict::NotFit;
        }
        q.overall = Verdict::NotFit;
    });
    let (a, b) = (before.to_string(), after.to_string());

    // The history lists each qualification's budget, file size and verdict.
    let h = iosim(d.path(), &["history", "--db", dbs]);
    let line = h
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{after} ")))
        .unwrap();
    assert!(
        line.contains("PRELIMINARY NOT FIT (budget 10s, files 16MiB): /data"),
        "{line}"
    );
    let j: Value =
        serde_json::from_str(&iosim(d.path(), &["history", "--db", dbs, "-o", "json"]).stdout)
            .unwrap();
    assert_eq!(j[0]["budget_s"], 10.0);
    assert_eq!(j[0]["test_file_size"], 16 << 20);
    assert_eq!(j[0]["preliminary"], true);
    assert_eq!(j[0]["verdict"], "NOT FIT");
    let c = iosim(d.path(), &["history", "--db", dbs, "-o", "csv"]);
    let mut rows = csv::Reader::from_reader(c.stdout.as_bytes());
    let header = rows.headers().unwrap().clone();
    let row = rows.records().next().unwrap().unwrap();
    let col = |name: &str| &row[header.iter().position(|h| h == name).unwrap()];
    assert_eq!(
        (col("budget_s"), col("test_file_size"), col("preliminary")),
        ("10", "16777216", "true")
    );

    // Without --threshold: the comparison, exit 0.
    let r = iosim(d.path(), &["compare", "--db", dbs, &a, &b]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let t = &r.stdout;
    assert!(!t.contains("without run results"), "{t}");
    assert!(
        t.starts_with(&format!(
            "Qualification {after} against qualification {before} of "
        )),
        "{t}"
    );
    assert!(
        t.contains("  log     FIT WITH WARNINGS -> NOT FIT\n"),
        "{t}"
    );
    assert!(
        t.contains("  data    FIT WITH WARNINGS -> FIT WITH WARNINGS\n"),
        "{t}"
    );
    let commit = t
        .lines()
        .find(|l| l.contains("profile  log-writer commit-4k: IOPS"))
        .unwrap_or_else(|| panic!("{t}"));
    assert!(
        commit.contains("(-50.0%, beyond noise ±24.2%, single run)")
            && commit.contains("(+100.0%, beyond noise ±24.2%, single run)"),
        "{commit}"
    );
    assert!(
        t.contains("sweep    qd=8: IOPS") && t.contains("within noise") && t.contains("p = 1.00"),
        "the sweep points, unchanged, are tested on their repetitions: {t}"
    );
    assert!(t.contains("both qualifications are PRELIMINARY"), "{t}");
    assert!(!t.contains("REGRESSION"), "{t}");

    // With --threshold: exit 4, and what regressed.
    let r = iosim(
        d.path(),
        &["compare", "--db", dbs, &a, &b, "--threshold", "10"],
    );
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("REGRESSIONS beyond 10%:\n    log verdict FIT WITH WARNINGS -> NOT FIT\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("    log profile log-writer commit-4k IOPS ")
            && r.stdout
                .contains("(-50.0%, beyond noise ±24.2%, single run, threshold 10%)"),
        "{}",
        r.stdout
    );
    let j = iosim(
        d.path(),
        &[
            "compare",
            "--db",
            dbs,
            &a,
            &b,
            "--threshold",
            "10",
            "-o",
            "json",
        ],
    );
    assert_eq!(j.code, 4);
    let v: Value = serde_json::from_str(&j.stdout).unwrap();
    let q = &v["qualifications"][0];
    assert_eq!(q["id"], before);
    assert_eq!(q["now_id"], after);
    assert_eq!(q["threshold_pct"], 10.0);
    let sweep = q["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "sweep")
        .unwrap();
    assert!(
        sweep["then_ci95"].as_f64().is_some() && sweep["welch"]["p"].as_f64().is_some(),
        "{sweep}"
    );
    // Faster, or the same: no regression, exit 0.
    for (x, y) in [(&b, &a), (&a, &a)] {
        let r = iosim(
            d.path(),
            &["compare", "--db", dbs, x, y, "--threshold", "10"],
        );
        assert_eq!(r.code, 0, "{x} {y}: {}", r.stdout);
        assert!(
            r.stdout.contains("No regression beyond 10%"),
            "{}",
            r.stdout
        );
    }
    // A qualification with a run: not comparable, and said why.
    let run = saved_id(&null_run(d.path(), &db, &[])).to_string();
    let r = iosim(d.path(), &["compare", "--db", dbs, &run, &a]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "run {before} is a qualification: it is compared only with another qualification"
        )),
        "{}",
        r.stderr
    );
    // A label naming two qualifications is refused with what to give instead.
    common::stored_qualification(&db, "before", |_| {});
    let r = iosim(d.path(), &["compare", "--db", dbs, "label:before", &b]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("'label:before' names 2 qualifications"),
        "{}",
        r.stderr
    );
}

/// Issue 37: history had no way to delete a run. `iosim history delete
/// ID...` deletes by id, all or none: an unknown id deletes nothing, and
/// `last` or `label:` are refused (deleting is by id only).
#[test]
fn history_delete_removes_runs_by_id_all_or_none() {
    let (d, db) = tmp();
    let dbs = db.to_str().unwrap();
    let a = saved_id(&null_run(d.path(), &db, &[]));
    let b = saved_id(&null_run(d.path(), &db, &[]));
    let ids = |d: &Path| -> Vec<i64> {
        let j = iosim(d, &["history", "--db", dbs, "-o", "json"]);
        let v: Value = serde_json::from_str(&j.stdout).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect()
    };
    // An unknown id among known ones: refused, nothing deleted.
    let o = iosim(
        d.path(),
        &["history", "delete", "--db", dbs, &a.to_string(), "999"],
    );
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("999"), "{}", o.stderr);
    assert!(o.stderr.contains("iosim history"), "{}", o.stderr);
    assert_eq!(ids(d.path()).len(), 2);
    // By id, or references that are not ids: refused by the parser.
    let o = iosim(d.path(), &["history", "delete", "--db", dbs, "last"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("not a run id"), "{}", o.stderr);
    // The known one goes, the other stays.
    let o = iosim(
        d.path(),
        &["history", "delete", "--db", dbs, &format!("#{a}")],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains(&format!("deleted run {a} (run,")),
        "{}",
        o.stdout
    );
    assert_eq!(ids(d.path()), vec![b]);
    let o = iosim(d.path(), &["show", "--db", dbs, &a.to_string()]);
    assert_ne!(o.code, 0);
}
