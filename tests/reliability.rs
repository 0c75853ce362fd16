//! Reliability regressions (issue 12): test-file integrity, ownership of the
//! simulator's side files, concurrent first use of the history database,
//! honest out-of-space messages and resource bounds. Each test failed on the
//! code before its fix.

mod common;

use std::path::Path;
use std::process::Stdio;

use common::iosim;

/// Eight processes saving at once to a database that does not exist yet:
/// every one must succeed and every result must be stored.
#[test]
fn concurrent_first_use_of_history_stores_every_result() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("fresh.db");
        let children: Vec<_> = (0..8)
            .map(|i| {
                iosim()
                    .args([
                        "run", "--engine", "null", "--size", "1M", "-d", "100ms", "-q",
                    ])
                    .arg("--db")
                    .arg(&db)
                    .args(["--label", &format!("p{i}")])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let out = common::success(iosim().args(["history", "-o", "json", "--db"]).arg(&db));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let n = v
            .as_array()
            .or_else(|| v["runs"].as_array())
            .map_or(0, |a| a.len());
        assert_eq!(n, 8, "round {round}: {out}");
    }
}

/// A small simulator configuration in `dir` (8 MiB data file, 4 MiB log, 1 s).
fn sim_ini(dir: &Path, extra_config: &str, file1_extra: &str) -> std::path::PathBuf {
    let text = format!(
        "[CONFIG]\nMaxMemoryMB=16\nTestCycles=1\nTestCycleDuration=1\n{extra_config}\n\
         [File1]\nFileName={d}/sim.mdx\nInitialSize=8\nMaxSize=16\nIncrement=1\n{file1_extra}\n\
         [File2]\nFileName={d}/sim.ldx\nInitialSize=4\nMaxSize=4\nLogFile=TRUE\n",
        d = dir.display()
    );
    let p = dir.join("sim.cfg.ini");
    std::fs::write(&p, text).unwrap();
    p
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The simulator's error log never truncates a file iosim did not create:
/// neither the default `./iosim-sim.errors.jsonl` nor `--log`/ErrorFile.
#[test]
fn sim_refuses_to_truncate_a_user_file_at_its_error_log_path() {
    let d = tempfile::tempdir().unwrap();
    let precious = d.path().join("iosim-sim.errors.jsonl");
    std::fs::write(&precious, "my notes\n").unwrap();
    let out = iosim()
        .current_dir(d.path())
        .args(["sim", "-q", "--size", "8", "--duration", "1", "--no-save"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "must refuse");
    let err = stderr_of(&out);
    assert!(
        err.contains("error log") && err.contains("--allow-destroy"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "my notes\n");
    // Refused before any data file was made.
    assert!(!d.path().join("sqliosim.mdx").exists());

    // The same through ErrorFile in an INI.
    let notes = d.path().join("notes.txt");
    std::fs::write(&notes, "keep me\n").unwrap();
    let cfg = sim_ini(d.path(), &format!("ErrorFile={}", notes.display()), "");
    let out = iosim()
        .args(["sim", "-q", "--no-save", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(!out.status.success(), "must refuse");
    assert!(
        stderr_of(&out).contains("--allow-destroy"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "keep me\n");

    // A log iosim made itself is reused by the next run.
    let log = d.path().join("own.log");
    for _ in 0..2 {
        let out = iosim()
            .args(["sim", "-q", "--no-save", "--config"])
            .arg(&cfg)
            .arg("--log")
            .arg(&log)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
    }
}

/// `--dir d --dir d` (or one FileName twice) would delete and truncate files
/// in use: refused, and nothing is created.
#[test]
fn sim_refuses_duplicate_directories_and_file_names() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let alias = d.path().join("data/../data");
    let out = iosim()
        .current_dir(d.path())
        .args([
            "sim",
            "-q",
            "--size",
            "8",
            "--duration",
            "1",
            "--no-save",
            "--dir",
        ])
        .arg(&dir)
        .arg("--dir")
        .arg(&alias)
        .output()
        .unwrap();
    assert!(!out.status.success(), "must refuse");
    assert!(stderr_of(&out).contains("same file"), "{}", stderr_of(&out));
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing created"
    );

    let cfg = sim_ini(
        d.path(),
        "",
        &format!(
            "\n[File3]\nFileName={}/sim.mdx\nInitialSize=8\n",
            d.path().display()
        ),
    );
    let out = iosim()
        .args(["sim", "-q", "--no-save", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(!out.status.success(), "must refuse");
    let err = stderr_of(&out);
    assert!(err.contains("[File1]") && err.contains("[File3]"), "{err}");
}

/// Resource bounds of the simulator: a huge MaxSize or UserCount is refused
/// at once with the key and the limit, instead of aborting on a 2 TiB
/// allocation or starting threads until the machine dies.
#[test]
fn sim_refuses_configurations_that_cannot_fit() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        ("", "MaxSize=4294967296", "MaxSize=4294967296"),
        ("", "MaxSize=18446744073709551615", "MaxSize"),
        (
            "\n[RandomUser]\nUserCount=9223372036854775807",
            "",
            "UserCount=9223372036854775807",
        ),
        (
            "\n[RandomUser]\nUserCount=1000\n[AuditUser]\nUserCount=9223372036854775807",
            "",
            "UserCount",
        ),
    ];
    for (config, file1, want) in cases {
        let cfg = sim_ini(d.path(), config, file1);
        let out = iosim()
            .args(["sim", "-q", "--no-save", "--config"])
            .arg(&cfg)
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert!(!out.status.success(), "{config}{file1}: must refuse");
        assert!(out.status.code().is_some(), "killed by a signal: {err}");
        assert!(err.contains(want), "{config}{file1}: {err}");
        assert!(
            err.contains("at most") || err.contains("limit") || err.contains("largest"),
            "{err}"
        );
        assert!(
            !d.path().join("sim.mdx").exists(),
            "refused before creating files"
        );
    }
}
