//! `iosim run --profile` and `iosim profile`: every built-in profile runs on
//! small temp files and is judged; data and log land where they are told;
//! user TOML files work; bad profiles are refused clearly.

use crate::common;

use common::*;
use serde_json::Value;

/// SQL Server's profiles, then the other databases'.
const BUILTINS: [&str; 25] = [
    "oltp",
    "oltp-with-log",
    "log-writer",
    "checkpoint",
    "read-ahead",
    "bulk-insert",
    "dbcc-checkdb",
    "index-rebuild",
    "backup",
    "restore",
    "tempdb",
    "postgresql-oltp",
    "postgresql-checkpoint",
    "postgresql-seqscan",
    "mysql-oltp",
    "mysql-doublewrite",
    "oracle-oltp",
    "oracle-scan",
    "etcd-wal",
    "etcd-fio",
    "sqlite-wal",
    "redis-aof-always",
    "redis-aof-everysec",
    "rocksdb-readwhilewriting",
    "rocksdb-fillrandom",
];

/// How many of [`BUILTINS`] are SQL Server's.
const SQL_SERVER: usize = 11;

/// The database a built-in profile models, as its JSON names it.
fn dbms_of(name: &str) -> &'static str {
    [
        "postgresql",
        "mysql",
        "oracle",
        "etcd",
        "sqlite",
        "redis",
        "rocksdb",
    ]
    .into_iter()
    .find(|d| name.starts_with(&format!("{d}-")))
    .unwrap_or("sqlserver")
}

fn run_profile(profile: &str, paths: &[&std::path::Path]) -> Value {
    run_profile_for(profile, paths, "200ms")
}

/// [`run_profile`] with its duration (split among the profile's phases).
fn run_profile_for(profile: &str, paths: &[&std::path::Path], duration: &str) -> Value {
    let mut args: Vec<String> = vec!["run".into(), "--profile".into(), profile.into()];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    args.extend(
        ["--size", "8M", "--duration", duration, "--no-save"]
            .iter()
            .map(|s| s.to_string()),
    );
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    run_json(&a)
}

#[test]
fn profile_list_names_every_builtin_with_its_source() {
    let out = iosim().args(["profile", "list"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in BUILTINS {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{name} missing from:\n{text}"
        );
    }
    assert_eq!(
        text.matches("source: SQL Server I/O patterns").count(),
        SQL_SERVER
    );
    assert_eq!(text.matches("database: SQL Server;").count(), SQL_SERVER);
    for (db, n) in [
        ("PostgreSQL", 3),
        ("MySQL/MariaDB (InnoDB)", 2),
        ("Oracle Database", 2),
        ("etcd", 2),
        ("SQLite (WAL)", 1),
        ("Redis (AOF)", 2),
        ("RocksDB", 2),
    ] {
        assert_eq!(text.matches(&format!("database: {db};")).count(), n, "{db}");
    }
}

#[test]
fn every_builtin_profile_runs_and_gets_verdicts() {
    for name in BUILTINS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.dat");
        let mut r = run_profile(name, &[&path]);
        // A write-through 60 KiB log write on a disk another process keeps
        // busy (stress-ng --hdd) can outlast its phase's share of 200 ms,
        // leaving that workload no I/O (seen 2026-12-03): such a run is
        // made again, once, for 2 s. What is asserted is that every
        // workload runs and is judged, not how soon.
        let idle = |r: &Value| {
            r["results"].as_array().is_some_and(|ws| {
                ws.iter()
                    .any(|w| w["result"]["total"]["total"]["ios"].as_u64() == Some(0))
            })
        };
        if idle(&r) {
            r = run_profile_for(name, &[&path], "2s");
        }
        assert_eq!(r["kind"], "profile");
        assert_eq!(r["profile"], name);
        assert_eq!(r["dbms"], dbms_of(name));
        assert_eq!(r["errors"], 0, "{name}");
        let results = r["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{name}");
        for w in results {
            let total = &w["result"]["total"];
            assert!(
                total["total"]["ios"].as_u64().unwrap() > 0,
                "{name}/{}: no I/O",
                w["name"]
            );
            let verdicts = w["verdicts"].as_array().unwrap();
            for dir in ["read", "write"] {
                let did = total[dir]["ios"].as_u64().unwrap() > 0;
                let judged: Vec<&Value> =
                    verdicts.iter().filter(|v| v["direction"] == dir).collect();
                assert_eq!(did, !judged.is_empty(), "{name}/{}: {dir}", w["name"]);
                for v in judged {
                    // The verdict judges exactly the measured mean.
                    let mean_ms = total[dir]["latency_us"]["mean"].as_f64().unwrap() / 1000.0;
                    assert!((v["mean_ms"].as_f64().unwrap() - mean_ms).abs() < 1e-9);
                    // Each verdict names its source by a tag of docs/references.md.
                    assert!(v["source"].as_str().unwrap().contains("]"));
                    assert!(!v["label"].as_str().unwrap().is_empty());
                }
            }
            // SQL Server opens its files write-through and unbuffered; the
            // others as their profile says (PostgreSQL's through the page cache).
            let cache = &w["result"]["config"]["cache"];
            match dbms_of(name) {
                "sqlserver" | "oracle" => assert_eq!(cache, "direct-writethrough"),
                "postgresql" | "etcd" => assert_eq!(cache, "buffered"),
                _ => assert!(cache == "direct" || cache == "buffered", "{cache}"),
            }
        }
        // Every target got its own file in the temp dir.
        for t in r["targets"].as_array().unwrap() {
            assert!(std::path::Path::new(t["path"].as_str().unwrap()).exists());
        }
    }
}

#[test]
fn phases_run_one_after_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.dat");
    let t0 = std::time::Instant::now();
    let r = run_profile("index-rebuild", &[&path]);
    let elapsed = t0.elapsed().as_secs_f64();
    let res = r["results"].as_array().unwrap();
    assert_eq!(res.len(), 2);
    assert_eq!(res[0]["phase"], 1);
    assert_eq!(res[1]["phase"], 2);
    assert_eq!(res[0]["result"]["total"]["write"]["ios"], 0);
    assert_eq!(res[1]["result"]["total"]["read"]["ios"], 0);
    // Two phases of 200 ms each, one after the other.
    let measured: f64 = res
        .iter()
        .map(|w| w["result"]["duration_s"].as_f64().unwrap())
        .sum();
    assert!(measured >= 0.38, "{measured}");
    assert!(elapsed >= measured, "{elapsed} < {measured}");
}

#[test]
fn data_and_log_go_where_they_are_told() {
    let d1 = tempfile::tempdir().unwrap();
    let d2 = tempfile::tempdir().unwrap();
    let data = d1.path().join("data.dat");
    let log = d2.path().join("log.dat");
    let r = run_profile("oltp-with-log", &[&data, &log]);
    let res = r["results"].as_array().unwrap();
    let by = |n: &str| res.iter().find(|w| w["name"] == n).unwrap().clone();
    let path_of = |w: &Value| {
        w["result"]["config"]["targets"][0]["path"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(path_of(&by("data-8k")), data.display().to_string());
    assert_eq!(path_of(&by("log-4k")), log.display().to_string());
    assert_eq!(by("log-4k")["role"], "log");
    // The log is judged by the log table, the data file by the data table.
    let ids = |w: &Value| -> Vec<String> {
        w["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["guideline"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(ids(&by("log-4k")).contains(&"log-0-2ms".to_string()));
    assert!(!ids(&by("log-4k")).contains(&"data-0-5ms".to_string()));
    assert!(ids(&by("data-8k")).contains(&"data-0-5ms".to_string()));
    // Both ran at the same time, in one phase.
    assert_eq!(by("data-8k")["phase"], by("log-4k")["phase"]);
    assert!(r["targets"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["derived"] == false));

    // One path: the log is created next to it, and a note says so.
    let d3 = tempfile::tempdir().unwrap();
    let out = iosim()
        .args(["run", "--profile", "oltp-with-log"])
        .arg(d3.path().join("db.dat"))
        .args(["--size", "8M", "--duration", "1s", "--no-save"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(d3.path().join("db-log.dat").exists());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("target 'log' was not given a path"),
        "{stderr}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Phase 1 (2 workloads at once"), "{text}");
    assert!(text.contains("[Log-vs-data] log 0-2 ms"), "{text}");
}

/// The workloads of a phase are one run of the runner: one measured window,
/// one system monitor, and a device they share shown whole in both results.
#[test]
fn a_phase_is_one_run_with_one_window_and_one_monitor() {
    let dir = tempfile::tempdir().unwrap();
    let (data, log) = (dir.path().join("data.dat"), dir.path().join("log.dat"));
    let r = run_profile("oltp-with-log", &[&data, &log]);
    let res = r["results"].as_array().unwrap();
    assert_eq!(res.len(), 2);
    let (a, b) = (&res[0]["result"], &res[1]["result"]);
    let start = a["window"]["start_unix_ns"].as_u64().expect("a window");
    assert!(a["window"]["end_unix_ns"].as_u64().unwrap() > start);
    assert_eq!(a["window"], b["window"], "one window");
    assert_eq!(a["started_at"], b["started_at"]);
    // One sampler: the very same CPU samples (two monitors would sample at
    // different instants, so their intervals' lengths would differ).
    assert!(!a["monitor"]["cpu_series"].as_array().unwrap().is_empty());
    assert_eq!(a["monitor"]["cpu_series"], b["monitor"]["cpu_series"]);
    assert_eq!(a["monitor"]["duration_s"], b["monitor"]["duration_s"]);
    // Both files are in one directory, so on one device (when there is one):
    // shown whole in both results, with a note saying so.
    if a["devices"][0]["kind"] == "device" {
        let name = a["devices"][0]["name"].as_str().unwrap();
        for r in [a, b] {
            let notes = r["notes"].as_array().unwrap();
            assert!(
                notes.iter().any(|n| n
                    .as_str()
                    .unwrap()
                    .contains(&format!("device {name} also carried 1 other workload"))),
                "{notes:?}"
            );
            assert!(r["monitor"]["devices"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["name"] == name));
        }
        assert_eq!(a["monitor"]["devices"], b["monitor"]["devices"]);
    }
}

#[test]
fn a_profile_file_works_and_csv_has_a_row_per_direction() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("mine.toml");
    std::fs::write(
        &toml,
        r#"
name = "mine"
description = "two reads on two files"
source = "a test"
[[workload]]
name = "a"
target = "one"
role = "data"
rw = "randread"
bs = "16K"
qd = 2
[[workload]]
name = "b"
target = "two"
role = "log"
rw = "randrw"
write_pct = 50
bs = "4K"
"#,
    )
    .unwrap();
    let csv = success(
        iosim()
            .args(["run", "--profile"])
            .arg(&toml)
            .arg(dir.path().join("f1"))
            .arg(dir.path().join("f2"))
            .args([
                "--size",
                "4M",
                "--duration",
                "100ms",
                "--no-save",
                "-q",
                "-o",
                "csv",
            ]),
    );
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("profile,workload,phase,target,role,path,direction"));
    // a: read only; b: read and write.
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(lines[1].starts_with("mine,a,1,one,data,"));
    assert!(lines[3].starts_with("mine,b,1,two,log,") && lines[3].contains(",write,"));
    let cols = lines[0].split(',').count();
    assert!(lines.iter().all(|l| l.split(',').count() == cols), "{csv}");
    assert!(dir.path().join("f2").exists());

    // profile show prints a file that parses back.
    let out = iosim()
        .args(["profile", "show"])
        .arg(&toml)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("name = \"mine\""));
}

#[test]
fn bad_profiles_and_options_give_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("x.dat");
    let err = |args: &[&str]| {
        let out = iosim()
            .args(args)
            .arg(&t)
            .args(["--size", "4M", "--no-save"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} should fail");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    assert!(err(&["run", "--profile", "nosuch"]).contains("no built-in profile 'nosuch'"));
    let e = err(&["run", "--profile", "oltp", "--bs", "64K"]);
    assert!(
        e.contains("--bs cannot be used with --profile") && e.contains("profile show oltp"),
        "{e}"
    );
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "name = \"b\"\ndescription = \"d\"\nsource = \"s\"\n[[workload]]\nname = \"w\"\ntarget = \"data\"\nrole = \"data\"\nrw = \"randread\"\nbs = \"8K\"\nqd = 0\n").unwrap();
    let e = err(&["run", "--profile", bad.to_str().unwrap()]);
    assert!(e.contains("bad.toml") && e.contains("workload 'w'"), "{e}");
    let e = err(&[
        "run",
        "--profile",
        dir.path().join("missing.toml").to_str().unwrap(),
    ]);
    assert!(e.contains("cannot read profile file"), "{e}");
    // No file was created by the failed runs.
    assert!(!t.exists());
    // Too many paths.
    let out = iosim()
        .args(["run", "--profile", "oltp", "a", "b", "--no-save"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("one path per target"));
}

/// The configuration workload `name` of a profile run's JSON ran with.
fn config_of<'a>(r: &'a Value, name: &str) -> &'a Value {
    let w = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == name);
    &w.unwrap_or_else(|| panic!("no workload {name}: {r}"))["result"]["config"]
}

/// `--commit-rate`: the WAL of a profile measured at 801 commits a second
/// runs at twice its rate at 1,602, its page reads and checkpoint as
/// measured; the run says so. A profile without a commit rate refuses it
/// before anything is created.
#[test]
fn a_commit_rate_scales_the_commit_workloads_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.dat");
    let p = db.to_str().unwrap();
    let r = run_json(&[
        "run",
        "--profile",
        "sqlite-wal",
        p,
        "--size",
        "8M",
        "--duration",
        "200ms",
        "--no-save",
        "--commit-rate",
        "1602",
    ]);
    let rate = |name: &str| config_of(&r, name)["rate_iops"].as_u64().unwrap();
    assert_eq!(
        (rate("wal-commit"), rate("page-read"), rate("checkpoint")),
        (1474, 292, 1345)
    );
    let notes = r["notes"].to_string();
    assert!(notes.contains("--commit-rate 1602: sqlite-wal measured at 801 commits a second, run at 1602 (wal-commit 1474 a second)"), "{notes}");

    let other = dir.path().join("etcd.dat");
    let out = iosim()
        .args(["run", "--profile", "etcd-wal"])
        .arg(&other)
        .args(["--size", "8M", "--commit-rate", "500", "--no-save"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("no commit_rate key"), "{e}");
    assert!(!other.exists());
}

/// `--clients`: PostgreSQL's profile, measured with eight clients, run as
/// two: one backend reading at the same total rate, the WAL flushed once
/// per commit (1,862 a second with `--commit-rate 1862`, as PostgreSQL did
/// at two clients); the checkpoint's writes as measured. A profile without
/// clients refuses it before anything is created.
#[test]
fn clients_scale_the_sessions_reads_and_the_wals_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pg.dat");
    let r = run_json(&[
        "run",
        "--profile",
        "postgresql-oltp",
        db.to_str().unwrap(),
        "--size",
        "8M",
        "--duration",
        "200ms",
        "--no-save",
        "--commit-rate",
        "1862",
        "--clients",
        "2",
    ]);
    let config = |name: &str| {
        let c = config_of(&r, name);
        (
            c["threads"].as_u64().unwrap(),
            c["rate_iops"].as_u64().unwrap(),
        )
    };
    assert_eq!(config("page-read"), (1, 906));
    assert_eq!(config("wal-commit"), (1, 1862));
    assert_eq!(config("page-write"), (1, 932));
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("--clients 2: postgresql-oltp measured with 8 clients, run with 2 (page-read 1 threads, wal-commit 1862 a second (1.00 commits a write, writes of 13.9 KiB on average against 20.9 KiB measured))"),
        "{notes}"
    );
    // One commit a write where eight clients put 2.2: each WAL write is its
    // 8 KiB page again and a commit's records, no longer 2.2 commits'.
    let split = config_of(&r, "wal-commit")["shape"]["bssplit"].to_string();
    assert!(split.starts_with("\"8K/46."), "{split}");

    let other = dir.path().join("my.dat");
    let out = iosim()
        .args(["run", "--profile", "mysql-oltp"])
        .arg(&other)
        .args(["--size", "8M", "--clients", "2", "--no-save"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("no clients key"), "{e}");
    assert!(!other.exists());
}

#[test]
fn ctrl_c_stops_every_workload_and_skips_later_phases() {
    let dir = tempfile::tempdir().unwrap();
    let child = iosim()
        .args(["run", "--profile", "index-rebuild"])
        .arg(dir.path().join("db.dat"))
        .args([
            "--size",
            "8M",
            "--duration",
            "60s",
            "-o",
            "json",
            "-q",
            "--no-save",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["interrupted"], true);
    let res = r["results"].as_array().unwrap();
    assert_eq!(res.len(), 1, "phase 2 must not start after Ctrl-C");
    assert!(res[0]["result"]["duration_s"].as_f64().unwrap() < 30.0);
}

#[test]
fn every_cited_source_is_in_docs_references() {
    // Profiles and verdicts cite sources by a tag such as [Randal]; each tag
    // must be an entry of docs/references.md, the list users can read.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let refs = std::fs::read_to_string(root.join("docs/references.md")).unwrap();
    let mut cited = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(root.join("profiles"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.push(root.join("src/verdict.rs"));
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for line in text
            .lines()
            .filter(|l| l.trim_start().starts_with("source"))
        {
            let mut rest = line;
            while let Some(start) = rest.find('[') {
                let Some(len) = rest[start..].find(']') else {
                    break;
                };
                cited.push((f.clone(), rest[start..start + len + 1].to_string()));
                rest = &rest[start + len + 1..];
            }
        }
    }
    assert!(cited.len() > 10, "{cited:?}");
    for (f, tag) in &cited {
        assert!(
            refs.contains(&format!("| `{tag}` |")),
            "{} cites {tag}, which docs/references.md does not list",
            f.display()
        );
    }
    // No citation of a document users do not have.
    for dir in ["src", "profiles", "docs"] {
        for e in walk(&root.join(dir)) {
            let text = std::fs::read_to_string(&e).unwrap_or_default();
            assert!(
                !text.contains("sqlserver-io.md") && !text.contains("shared/reference"),
                "{} cites a document outside the repository",
                e.display()
            );
        }
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
