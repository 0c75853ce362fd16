//! Reliability regressions (issue 12): test-file integrity, ownership of the
//! simulator's side files, concurrent first use of the history database,
//! honest out-of-space messages and resource bounds. Each test failed on the
//! code before its fix.

mod common;

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
