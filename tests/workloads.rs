//! Issue 17 through the real binary: skew, generated data, steady state.

mod common;

use common::{iosim, run_json, success};

#[test]
fn written_file_has_the_asked_compressibility_and_skewed_writes_stay_in_range() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("c.dat");
    let p = f.to_str().unwrap();
    success(iosim().args([
        "create",
        p,
        "--size",
        "16M",
        "--fill",
        "compressible:50",
        "-q",
    ]));
    // An outside check of the file: LZ4 on each 4 KiB block, as arrays do.
    let data = std::fs::read(&f).unwrap();
    let mut out = vec![0u8; lz4_flex::block::get_maximum_output_size(4096)];
    let compressed: usize = data
        .chunks(4096)
        .map(|b| {
            lz4_flex::block::compress_into(b, &mut out)
                .unwrap()
                .min(4096)
        })
        .sum();
    let saved: f64 = 100.0 * (1.0 - compressed as f64 / data.len() as f64);
    assert!((saved - 50.0).abs() <= 5.0, "saved {saved:.1}%");

    // Skewed compressible writes: the notes report what the data came out as.
    let j = run_json(&[
        "run",
        p,
        "--rw",
        "randwrite",
        "--bs",
        "8K",
        "--distribution",
        "zipf:1.2",
        "--hot-placement",
        "start",
        "--compress-pct",
        "50",
        "--dedupe-pct",
        "20",
        "--number-ios",
        "2000",
        "-d",
        "30s",
    ]);
    assert_eq!(j["total"]["write"]["ios"].as_u64(), Some(2000));
    assert_eq!(j["config"]["shape"]["distribution"], "zipf:1.2");
    let notes = j["notes"].to_string();
    assert!(notes.contains("compresses away"), "{notes}");
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 16 << 20);
}

#[test]
fn bad_workload_options_say_what_to_use() {
    let out = iosim()
        .args(["run", "/nonexistent/x", "--distribution", "zipf:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("zipf:THETA"));
    let out = iosim()
        .args(["run", "/nonexistent/x", "--steady-state", "iops:10"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("SLOPE%,RANGE%"));
}

#[test]
fn steady_state_rounds_run_before_the_measurement() {
    let j = run_json(&[
        "run",
        "--engine",
        "null",
        "--size",
        "64M",
        "-d",
        "200ms",
        "--steady-state",
        "iops:100,100,100ms,5",
    ]);
    // A paced run is flat: limits of 100% are met by the first full window.
    let notes = j["notes"].to_string();
    assert!(notes.contains("reached at round 5"), "{notes}");
}
