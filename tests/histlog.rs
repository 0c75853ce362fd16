//! `iosim run --hist-log`: the interval histogram log, read back by `iosim
//! show --hist-log` and `iosim report --hist-log` (docs/long-runs.md).

use crate::common::{iosim, run_json, success};

/// A short mixed run on a page-cached temporary file, logged at 100 ms.
fn logged_run(dir: &std::path::Path, log: &std::path::Path) -> serde_json::Value {
    let target = dir.join("t.dat");
    run_json(&[
        "run",
        target.to_str().unwrap(),
        "--size",
        "4M",
        "--rw",
        "randrw",
        "--bs",
        "4K",
        "--cache",
        "buffered",
        "--rate-iops",
        "2000",
        "--duration",
        "3s",
        "--interval",
        "100ms",
        "--no-save",
        "--hist-log",
        log.to_str().unwrap(),
    ])
}

#[test]
fn the_log_merges_to_the_runs_own_percentiles() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("run.hlog");
    let r = logged_run(d.path(), &log);
    let shown: serde_json::Value = serde_json::from_str(&success(iosim().args([
        "show",
        "--hist-log",
        log.to_str().unwrap(),
        "-o",
        "json",
        "--intervals",
    ])))
    .unwrap();
    // About duration / interval intervals (a loaded machine may close the
    // window a little late, never early).
    let n = shown["intervals"].as_u64().unwrap();
    assert!((28..=31).contains(&n), "{n} intervals");
    assert_eq!(shown["points"].as_array().unwrap().len() as u64, n);
    assert!((shown["interval_s"].as_f64().unwrap() - 0.1).abs() < 1e-9);
    // Every stream merged is exactly the run's: I/Os, min, mean, max, stddev, percentiles.
    let stream = |name: &str| {
        shown["streams"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["stream"] == name)
            .unwrap_or_else(|| panic!("no {name} stream in {shown}"))
            .clone()
    };
    for (name, dir) in [("all", "total"), ("read", "read"), ("write", "write")] {
        let s = stream(name);
        assert_eq!(s["ios"], r["total"][dir]["ios"], "{name}");
        assert!(s["ios"].as_u64().unwrap() > 100, "{name}: {s}");
        assert_eq!(s["latency_us"], r["total"][dir]["latency_us"], "{name}");
    }
    // The text summary and the HTML report read the same log.
    let text = success(iosim().args(["show", "--hist-log", log.to_str().unwrap()]));
    assert!(text.contains(&format!("{n} intervals")), "{text}");
    let html = success(iosim().args(["report", "--hist-log", log.to_str().unwrap()]));
    assert!(html.contains("Latency over time") && html.contains("<svg"));
}

#[test]
fn an_existing_log_is_kept_and_a_bad_path_is_named() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("old.hlog");
    std::fs::write(&log, "earlier run\n").unwrap();
    let target = d.path().join("t.dat");
    let out = iosim()
        .args(["run", target.to_str().unwrap(), "--size", "1M"])
        .args(["--duration", "1s", "--no-save", "--quiet", "--hist-log"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("another name") && err.contains("old.hlog"),
        "{err}"
    );
    assert_eq!(std::fs::read(&log).unwrap(), b"earlier run\n");
    // Refused before any target is touched.
    assert!(!target.exists());

    let out = iosim()
        .args(["run", target.to_str().unwrap(), "--size", "1M"])
        .args(["--duration", "1s", "--no-save", "--quiet", "--hist-log"])
        .arg(d.path().join("no/such/dir/x.hlog"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not exist"), "{err}");
    assert!(!target.exists());

    // A file that is no log is refused by the reader, with its line.
    let out = iosim()
        .args(["show", "--hist-log"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 1"), "{err}");
}

/// A log line whose histogram declares `payload_len` bytes of counts (and
/// holds two), compressed as HdrHistogram's writers compress.
fn crafted_line(payload_len: u32) -> String {
    use base64::Engine as _;
    use std::io::Write as _;
    let mut plain = Vec::new();
    plain.extend(0x1c84_9313u32.to_be_bytes());
    plain.extend(payload_len.to_be_bytes());
    plain.extend(0u32.to_be_bytes());
    plain.extend(3u32.to_be_bytes());
    plain.extend(1u64.to_be_bytes());
    plain.extend(1_000_000_000_000u64.to_be_bytes());
    plain.extend(1.0f64.to_be_bytes());
    plain.extend([2, 2]);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&plain).unwrap();
    let body = z.finish().unwrap();
    let mut enc = 0x1c84_9314u32.to_be_bytes().to_vec();
    enc.extend((body.len() as u32).to_be_bytes());
    enc.extend(body);
    format!(
        "0.000,1.000,0.001,{}\n",
        base64::engine::general_purpose::STANDARD.encode(enc)
    )
}

/// Issue 36: a 2.4 KB log whose histogram header declares 2 GiB of counts
/// made `show --hist-log` and `report --hist-log` allocate 2 GiB. Every size
/// read from the file is bounded by what the file holds: refused with the
/// line and why, in little memory (under a 1 GiB address-space limit, an
/// attempt to allocate 2 GiB would abort instead).
#[test]
fn a_crafted_log_cannot_make_the_reader_allocate_gigabytes() {
    if std::process::Command::new("prlimit")
        .arg("--version")
        .output()
        .is_err()
    {
        crate::common::skip("prlimit (util-linux) is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("crafted.hlog");
    let mut text = String::from("#[StartTime: 1700000000.000 (seconds since epoch)]\n");
    while text.len() < 2300 {
        text.push_str("#padding comment line of a log that looks ordinary enough\n");
    }
    text.push_str(&crafted_line(1 << 31));
    std::fs::write(&log, &text).unwrap();
    assert!((2000..3000).contains(&text.len()), "{}", text.len());
    let html = d.path().join("r.html");
    for args in [
        vec!["show", "--hist-log", log.to_str().unwrap()],
        vec![
            "report",
            "--hist-log",
            log.to_str().unwrap(),
            "--out",
            html.to_str().unwrap(),
        ],
    ] {
        let out = std::process::Command::new("prlimit")
            .arg(format!("--as={}", 1u64 << 30))
            .arg(crate::common::bin())
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("declares 2147483648 bytes of counts but holds 2")
                && err.contains("crafted.hlog' line"),
            "{args:?}: {err}"
        );
    }
    // The same line declaring what it holds is read.
    std::fs::write(&log, crafted_line(2)).unwrap();
    success(iosim().args(["show", "--hist-log", log.to_str().unwrap()]));
}
