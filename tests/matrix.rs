//! `iosim matrix`: a tiny basic and detailed matrix on a temp file write
//! ORION's three CSV grids and the summary, with the right shapes.

use crate::common;

use common::*;

fn grid(path: &std::path::Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn basic_matrix_writes_orions_files() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("t1");
    let stdout = success(
        iosim()
            .args(["matrix"])
            .arg(dir.path().join("m.dat"))
            .args([
                "--size",
                "8M",
                "--duration",
                "150ms",
                "--small-levels",
                "1,4",
                "--large-levels",
                "1,2",
                "--small-bs",
                "4K",
                "--large-bs",
                "256K",
                "--out",
            ])
            .arg(&prefix)
            .arg("-q"),
    );
    assert!(stdout.contains("Maximum Large MBPS="), "{stdout}");
    for name in ["iops", "mbps", "lat"] {
        let g = grid(&dir.path().join(format!("t1_{name}.csv")));
        // rows: header + large levels 0,1,2; columns: label + small levels 0,1,4.
        assert_eq!(g.len(), 4, "{name}: {g:?}");
        assert_eq!(g[0], vec!["Large/Small", "0", "1", "4"]);
        assert!(g.iter().all(|r| r.len() == 4), "{name}: {g:?}");
        assert_eq!(g[1][0], "0");
        // basic: combined cells are empty.
        assert_eq!(g[2][2], "");
        assert_eq!(g[3][3], "");
    }
    let iops = grid(&dir.path().join("t1_iops.csv"));
    assert!(iops[1][2].parse::<f64>().unwrap() > 0.0);
    assert!(iops[1][3].parse::<f64>().unwrap() > 0.0);
    let mbps = grid(&dir.path().join("t1_mbps.csv"));
    assert!(mbps[2][1].parse::<f64>().unwrap() > 0.0);
    assert!(mbps[3][1].parse::<f64>().unwrap() > 0.0);
    assert_eq!(mbps[1][2], "");
    let summary = std::fs::read_to_string(dir.path().join("t1_summary.txt")).unwrap();
    for needle in [
        "Maximum Large MBPS=",
        "Maximum Small IOPS=",
        "Minimum Small Latency=",
    ] {
        assert!(summary.contains(needle), "{summary}");
    }
    assert!(summary.contains("@ Small=0 and Large="), "{summary}");
}

#[test]
fn detailed_matrix_fills_every_cell_and_json_has_the_points() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("t2");
    let r: serde_json::Value = serde_json::from_str(&success(
        iosim()
            .args(["matrix"])
            .arg(dir.path().join("m.dat"))
            .args([
                "--size",
                "8M",
                "--duration",
                "100ms",
                "--small-levels",
                "2",
                "--large-levels",
                "1",
                "--large-bs",
                "128K",
                "--matrix",
                "detailed",
                "-o",
                "json",
                "-q",
                "--out",
            ])
            .arg(&prefix),
    ))
    .unwrap();
    assert_eq!(r["kind"], "matrix");
    let pts = r["points"].as_array().unwrap();
    // (2,0), (0,1), (2,1)
    assert_eq!(pts.len(), 3);
    let both = pts
        .iter()
        .find(|p| p["small"] == 2 && p["large"] == 1)
        .unwrap();
    assert!(both["small_iops"].as_f64().unwrap() > 0.0);
    assert!(both["large_mib_s"].as_f64().unwrap() > 0.0);
    let iops = grid(&dir.path().join("t2_iops.csv"));
    assert_eq!(iops.len(), 3);
    assert!(iops[2][2].parse::<f64>().unwrap() > 0.0, "{iops:?}");
    let lat = grid(&dir.path().join("t2_lat.csv"));
    assert!(lat[2][2].parse::<f64>().unwrap() > 0.0, "{lat:?}");
    let best = &r["summary"]["max_small_iops"];
    assert_eq!(best["small"], 2);
}

#[test]
fn matrix_refuses_an_empty_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let out = iosim()
        .args(["matrix"])
        .arg(dir.path().join("m.dat"))
        .args([
            "--size",
            "4M",
            "--small-levels",
            "0",
            "--large-levels",
            "0",
            "-q",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("the matrix is empty"));
}
