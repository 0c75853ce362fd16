//! `iosim qualify --dbms`: every database qualified on a tiny budget in a
//! temp directory (its roles, profiles, settings and rules named in the
//! JSON, the text, the CSV and the HTML; no rule citing another database's
//! sources), `--plan` for each without creating anything, and bad input
//! (an unknown database, SQL Server's roles for another) refused before
//! anything runs.
//!
//! The flush rules judge the flush latency the runner records
//! (`RwResult.flush`): where it records none, the log's verdict says
//! `flush-not-measured`; where it does, the flushes are judged instead. The
//! assertions accept either, so the test holds on both sides of the runner
//! change that times flushes.

use crate::common;

use serde_json::Value;

/// Per database: its name, a setting its report must name, the prefix of
/// its profiles, what it calls its log, and the sources of its rules that
/// no other database's report cites.
const DATABASES: [(&str, &str, &str, &str); 7] = [
    (
        "sqlserver",
        "file flags=FILE_FLAG_NO_BUFFERING|FILE_FLAG_WRITE_THROUGH",
        "",
        "log",
    ),
    (
        "postgresql",
        "wal_sync_method=fdatasync",
        "postgresql-",
        "wal",
    ),
    (
        "mysql",
        "innodb_flush_log_at_trx_commit=1",
        "mysql-",
        "redo",
    ),
    ("oracle", "filesystemio_options=SETALL", "oracle-", "redo"),
    ("etcd", "backend-batch-interval=100ms", "etcd-", "wal"),
    ("sqlite", "synchronous=FULL", "sqlite-", "wal"),
    ("rocksdb", "target_file_size_base=64 MiB", "rocksdb-", "wal"),
];

/// SQL Server's own guidance, which only a SQL Server report cites.
const SQL_SERVER_TAGS: [&str; 5] = [
    "[Randal]",
    "[DiskSpd-SQL]",
    "[MS-2012]",
    "[MS-IO]",
    "[MS-833]",
];

fn reasons(doc: &Value) -> Vec<&Value> {
    doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|v| v["reasons"].as_array().unwrap())
        .collect()
}

fn verdict<'a>(doc: &'a Value, role: &str) -> &'a Value {
    doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["role"] == role)
        .unwrap_or_else(|| panic!("no verdict for {role}: {}", doc["verdicts"]))
}

/// The seven qualifications run at once (each waits on its storage far more
/// than it computes: 0.7 s of CPU in 9 s here), so the disk is taken for one
/// qualification's time, not seven; what is checked is what each report
/// says, not how fast the storage was.
#[test]
fn every_database_is_qualified_with_its_workloads_settings_and_rules() {
    let _disk = common::disk_turn();
    let runs: Vec<_> = DATABASES
        .iter()
        .map(|&(dbms, ..)| {
            let d = tempfile::tempdir().unwrap();
            let data = d.path().join("data");
            std::fs::create_dir(&data).unwrap();
            let html = d.path().join("q.html");
            // MySQL's at twice the commits its profile was measured at
            // (170); PostgreSQL's as two clients instead of its eight.
            let commits: &[&str] = match dbms {
                "mysql" => &["--commit-rate", "340"],
                "postgresql" => &["--clients", "2"],
                _ => &[],
            };
            let child = common::iosim()
                .args(["qualify", "--dbms", dbms, "--data"])
                .arg(&data)
                .args(commits)
                .args([
                    "--time",
                    "10s",
                    "--size",
                    "16M",
                    "--no-save",
                    "-q",
                    "-o",
                    "json",
                    "--html",
                ])
                .arg(&html)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (d, data, html, child)
        })
        .collect();
    for ((dbms, setting, prefix, log), (_dir, data, html, child)) in DATABASES.into_iter().zip(runs)
    {
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "iosim qualify --dbms {dbms}: {err}"
        );
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{dbms}: not one JSON document ({e}): {err}"));

        // The database and the settings its workloads assume.
        assert_eq!(doc["dbms"], dbms);
        if dbms == "postgresql" {
            let notes = doc["notes"].to_string();
            assert!(
                notes.contains("--clients 2: postgresql-oltp measured with 8 clients, run with 2 (page-read 1 threads, wal-commit 1302 a second (1.00 commits a write, writes of 13.9 KiB on average against 20.9 KiB measured))"),
                "{notes}"
            );
        }
        if dbms == "mysql" {
            let notes = doc["notes"].to_string();
            assert!(
                notes.contains("--commit-rate 340: mysql-oltp measured at 170 commits a second, run at 340 (redo-commit 286 a second, binlog-commit 220 a second)"),
                "{notes}"
            );
        }
        let settings: Vec<String> = doc["settings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                format!(
                    "{}={}",
                    s["name"].as_str().unwrap(),
                    s["value"].as_str().unwrap()
                )
            })
            .collect();
        assert!(
            settings.iter().any(|s| s == setting),
            "{dbms}: {settings:?}"
        );

        // Every stage ran; the simulator checks pages for every database.
        let stages: Vec<&str> = doc["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            stages,
            [
                "quick corners",
                "sweeps",
                "profiles",
                "simulator",
                "self-checks"
            ]
        );
        let sim = doc["stages"][3]["summary"].as_str().unwrap();
        assert_eq!(
            sim.starts_with("page integrity"),
            dbms != "sqlserver",
            "{dbms}: {sim}"
        );

        // Its own profiles, and how they opened their files.
        let profiles = doc["profiles"].as_array().unwrap();
        assert!(!profiles.is_empty());
        for p in profiles {
            let name = p["profile"].as_str().unwrap();
            if dbms == "sqlserver" {
                assert!(
                    DATABASES[1..].iter().all(|x| !name.starts_with(x.2)),
                    "{name}"
                );
            } else {
                assert!(name.starts_with(prefix), "{dbms}: {name}");
            }
            assert!(p["measure"]["cache"].is_string(), "{p}");
        }

        // The rules applied cite this database's sources only.
        for r in reasons(&doc) {
            let tag = r["source_tag"].as_str().unwrap();
            if dbms != "sqlserver" {
                assert!(!SQL_SERVER_TAGS.contains(&tag), "{dbms}: {r}");
            }
            if dbms != "etcd" {
                assert!(!tag.starts_with("[etcd"), "{dbms}: {r}");
            }
        }
        let refs: Vec<&str> = doc["references"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["tag"].as_str().unwrap())
            .collect();
        match dbms {
            "sqlserver" => assert!(refs.contains(&"[Randal]") && !refs.contains(&"[iosim-bands]")),
            "etcd" => {
                for t in [
                    "[etcd-fio]",
                    "[etcd-commit]",
                    "[etcd-alerts]",
                    "[etcd-hardware]",
                ] {
                    assert!(refs.contains(&t), "{t}: {refs:?}");
                }
            }
            _ => assert!(
                refs.contains(&"[iosim-bands]") && !refs.contains(&"[Randal]"),
                "{dbms}: {refs:?}"
            ),
        }

        // Flushes: judged when the runner timed them, else said so.
        let flushing: Vec<&Value> = profiles
            .iter()
            .map(|p| &p["measure"])
            .filter(|m| m["flush"].is_object() && (m["role"] == "log" || dbms == "etcd"))
            .collect();
        match dbms {
            "sqlserver" | "oracle" => assert!(flushing.is_empty(), "{dbms}: {flushing:?}"),
            _ => assert!(!flushing.is_empty(), "{dbms}: its log flushes per commit"),
        }
        let untimed = flushing.iter().any(|m| m["flush"]["ios"] == 0);
        let said = verdict(&doc, "log")["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .chain(verdict(&doc, "data")["reasons"].as_array().unwrap())
            .any(|r| r["rule"] == "flush-not-measured");
        assert_eq!(untimed, said, "{dbms}: {}", doc["verdicts"]);
        if dbms == "etcd" && !untimed {
            // The WAL is judged by etcd's own rule, once per workload that
            // flushes on the log: a reason only when one of them fails (its
            // p99, or its slowest flush with fewer than 100 for a p99).
            let over: Vec<&&Value> = flushing
                .iter()
                .filter(|m| m["role"] == "log")
                .filter(|m| {
                    let f = &m["flush"];
                    let key = if f["ios"].as_u64().unwrap() >= 100 {
                        "p99_us"
                    } else {
                        "max_us"
                    };
                    f[key].as_f64().unwrap() / 1000.0 > 10.0
                })
                .collect();
            let fired = reasons(&doc).iter().any(|r| r["rule"] == "etcd-wal-fsync");
            assert_eq!(fired, !over.is_empty(), "{over:?} {}", doc["verdicts"]);
        }

        // The text names the database, its settings and its roles' names.
        let t = {
            let d = iosim::document::Document::from_value(doc.clone()).unwrap();
            iosim::document::render(&d, iosim::report::OutputFormat::Text).unwrap()
        };
        let mut lines = t.lines();
        let first = lines.next().unwrap();
        if dbms != "sqlserver" {
            assert!(
                first.contains(&format!(
                    "({}; rules: classic)",
                    iosim::dbms::Dbms::from_name(dbms).unwrap().title()
                )),
                "{first}"
            );
        }
        let second = lines.next().unwrap();
        assert!(
            second.contains("; settings assumed: ") && second.contains(setting),
            "{second}"
        );
        assert!(
            t.contains(&format!("\n  {log:<7} ")),
            "{dbms}: the {log} verdict line in\n{t}"
        );
        if dbms == "sqlite" {
            // SQLite, the database added as one file (`src/dbms/sqlite.rs`):
            // its verdict says where its latency limits come from and cites
            // SQLite's own documentation; its profile, replayed from a capture
            // of SQLite, is not called literature-based.
            assert!(
                t.contains("latency limits for SQLite (WAL): SQLite (WAL) publishes no storage latency target"),
                "{t}"
            );
            assert!(!t.contains("literature-based"), "{t}");
            for tag in ["[SQLite-WAL]", "[SQLite-pragma]", "[iosim-bands]"] {
                assert!(t.contains(tag), "{tag} in\n{t}");
            }
        }
        // The CSV names it on every row; the HTML in its verdict section.
        let csv = {
            let d = iosim::document::Document::from_value(doc.clone()).unwrap();
            iosim::document::render(&d, iosim::report::OutputFormat::Csv).unwrap()
        };
        assert!(csv.lines().next().unwrap().ends_with(",dbms,role_name"));
        assert!(
            csv.lines()
                .skip(1)
                .all(|l| l.contains(&format!(",{dbms},"))),
            "{csv}"
        );
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(
            page.contains(&format!("<p data-dbms=\"{dbms}\">Qualified for <b>")),
            "{dbms}"
        );

        // Nothing left behind.
        let left: Vec<_> = std::fs::read_dir(&data)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{dbms}: left {left:?}");
    }
}

#[test]
fn the_plan_of_each_database_creates_nothing() {
    let d = tempfile::tempdir().unwrap();
    for (dbms, setting, prefix, log) in DATABASES {
        let out = common::success(
            common::iosim()
                .args(["qualify", "--dbms", dbms, "--data"])
                .arg(d.path())
                .args(["--time", "10m", "--plan"]),
        );
        assert!(out.starts_with("iosim qualify --plan: "), "{out}");
        assert!(out.contains(&format!("(--dbms {dbms})")), "{out}");
        assert!(out.contains(&format!("  {setting} ")), "{dbms}: {out}");
        assert!(out.contains(&format!("\n  {log:<8} ")), "{dbms}: {out}");
        assert!(out.contains(&format!("\n  {prefix}")), "{dbms}: {out}");
        assert!(out.contains("Minimum budget for a verdict that is not PRELIMINARY: "));
        assert!(out.contains(&format!("Rules (--dbms {dbms}, --rules classic):")));
        if dbms == "etcd" {
            assert!(out.contains("  etcd-wal-fsync "), "{out}");
        }
    }
    // The log's other names, for the databases that call it so.
    let wal = tempfile::tempdir().unwrap();
    let out = common::success(
        common::iosim()
            .args(["qualify", "--dbms", "postgres", "--data"])
            .arg(d.path())
            .arg("--wal")
            .arg(wal.path())
            .arg("--plan"),
    );
    assert!(out.contains("PostgreSQL (--dbms postgresql)"), "{out}");
    let target = wal.path().join("iosim-qualify-log.dat");
    assert!(
        out.contains(&format!("\n  wal      {} (a test file", target.display())),
        "{out}"
    );
    for dir in [d.path(), wal.path()] {
        assert_eq!(
            std::fs::read_dir(dir).unwrap().count(),
            0,
            "--plan created nothing"
        );
    }
}

#[test]
fn an_unknown_database_or_another_databases_role_is_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let out = common::iosim()
        .args(["qualify", "--dbms", "db2", "--data"])
        .arg(d.path())
        .args(["--time", "10s", "--no-save"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let names: Vec<&str> = iosim::dbms::Dbms::ALL.iter().map(|d| d.name()).collect();
    assert!(
        err.contains("invalid value 'db2' for '--dbms <DBMS>'")
            && err.contains(&format!("[possible values: {}]", names.join(", "))),
        "{err}"
    );
    let out = common::iosim()
        .args(["qualify", "--dbms", "mysql", "--data"])
        .arg(d.path())
        .arg("--tempdb")
        .arg(d.path())
        .args(["--time", "10s", "--no-save"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--tempdb is SQL Server's tempdb: iosim models no such file for MySQL/MariaDB (InnoDB); give --data and --log (its redo)"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}
