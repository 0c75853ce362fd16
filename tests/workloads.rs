//! Issue 17 through the real binary: skew, generated data, steady state.

use crate::common;

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
    // The achieved skew: what the 2,000 writes hit against what zipf:1.2 predicts.
    let k = &j["shape"]["skew"][0];
    assert_eq!(k["target"], 0);
    assert_eq!(k["ios"], 2000);
    for (got, want) in [
        ("hottest_1pct", "expected_1pct"),
        ("hottest_10pct", "expected_10pct"),
    ] {
        let (g, w) = (k[got].as_f64().unwrap(), k[want].as_f64().unwrap());
        assert!((g - w).abs() < 0.05, "{got} {g} vs {want} {w}");
    }
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
        // Paced: a starved round of an unpaced null engine (a CPU hog on each
        // core) moved its IOPS more than 100% (a CI run, 2026-11-28).
        "--rate-iops",
        "2000",
    ]);
    // A paced run is flat: limits of 100% are met by the first full window.
    let notes = j["notes"].to_string();
    assert!(notes.contains("reached at round 5"), "{notes}");
}

/// Sectors read and written of `dev` (kernel name) from /proc/diskstats:
/// bytes are exact where request counts are not (the kernel may split a 1M I/O).
fn sectors(dev: &str) -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/diskstats").unwrap();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() > 9 && f[2] == dev {
            return (f[5].parse().unwrap(), f[9].parse().unwrap());
        }
    }
    panic!("{dev} not in /proc/diskstats");
}

#[test]
fn bssplit_sizes_follow_the_asked_shares_and_the_kernel_agrees() {
    let Some(lo) = common::LoopDev::new(64 << 20) else {
        return;
    };
    let dev = lo.dev.to_str().unwrap();
    // Let udev's probe of the new device finish before counting.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (r0, w0) = sectors(&lo.name);
    let j = run_json(&[
        "run",
        dev,
        "--rw",
        "randrw",
        "--write-pct",
        "30",
        "--bssplit",
        "4K/60:16K/30:64K/10,8K/50:128K/50",
        "--qd",
        "4",
        "--number-ios",
        "4000",
        "-d",
        "60s",
        "--cache",
        "direct",
        "--allow-destroy",
    ]);
    let (r1, w1) = sectors(&lo.name);
    assert_eq!(
        j["config"]["shape"]["bssplit"],
        "4K/60:16K/30:64K/10,8K/50:128K/50"
    );
    let sizes = j["shape"]["by_size"].as_array().unwrap();
    let bs: Vec<u64> = sizes.iter().map(|s| s["bs"].as_u64().unwrap()).collect();
    assert_eq!(bs, vec![4096, 8192, 16384, 65536, 131072]);
    let count = |dir: &str, size: u64| {
        sizes.iter().find(|s| s["bs"] == size).unwrap()[dir]["ios"]
            .as_u64()
            .unwrap()
    };
    let reads = j["total"]["read"]["ios"].as_u64().unwrap();
    let writes = j["total"]["write"]["ios"].as_u64().unwrap();
    assert_eq!(reads + writes, 4000);
    // Binomial standard errors here are under 1.5 points: 5 points is wide.
    for (size, pct) in [(4096, 60.0), (16384, 30.0), (65536, 10.0)] {
        let share = 100.0 * count("read", size) as f64 / reads as f64;
        assert!((share - pct).abs() < 5.0, "reads of {size}: {share:.1}%");
    }
    for (size, pct) in [(8192, 50.0), (131072, 50.0)] {
        let share = 100.0 * count("write", size) as f64 / writes as f64;
        assert!((share - pct).abs() < 5.0, "writes of {size}: {share:.1}%");
    }
    assert_eq!(count("write", 4096) + count("read", 8192), 0);
    // The sizes add up to the totals, and the kernel moved those bytes.
    let sum = |dir: &str| -> u64 {
        sizes
            .iter()
            .map(|s| s[dir]["bytes"].as_u64().unwrap())
            .sum()
    };
    let read_bytes = j["total"]["read"]["bytes"].as_u64().unwrap();
    let write_bytes = j["total"]["write"]["bytes"].as_u64().unwrap();
    assert_eq!(sum("read"), read_bytes);
    assert_eq!(sum("write"), write_bytes);
    let (kr, kw) = ((r1 - r0) * 512, (w1 - w0) * 512);
    assert!(
        kr >= read_bytes && kr <= read_bytes + (1 << 20),
        "kernel read {kr} bytes, iosim {read_bytes}"
    );
    assert!(
        kw >= write_bytes && kw <= write_bytes + (1 << 20),
        "kernel wrote {kw} bytes, iosim {write_bytes}"
    );
    // The text report has the per-size table.
    let text = success(iosim().args([
        "run",
        dev,
        "--bssplit",
        "4K/50:64K/50",
        "--number-ios",
        "200",
        "-d",
        "30s",
        "--no-save",
    ]));
    assert!(
        text.contains("by size") && text.contains("64K read"),
        "{text}"
    );
}

#[test]
fn a_stall_shows_in_latency_from_the_schedule_not_from_submission() {
    // A paced run on the null engine; the test stops the whole process for
    // 250 ms in the middle. I/Os due during the stall start late: measured
    // from their scheduled start they waited, measured from submission not.
    let stall_ms = 250.0;
    let child = iosim()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "64M",
            "--rate-iops",
            "2000",
            "-d",
            "4s",
            "--output",
            "json",
            "--quiet",
            "--no-save",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let signal = |s: &str| {
        assert!(std::process::Command::new("kill")
            .args([s, &pid])
            .status()
            .unwrap()
            .success())
    };
    signal("-STOP");
    std::thread::sleep(std::time::Duration::from_millis(stall_ms as u64));
    signal("-CONT");
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let o = &j["shape"]["open_loop"];
    let us = |which: &str, what: &str| -> f64 {
        let l = &o[which]["total"];
        if what == "max" {
            l["max"].as_f64().unwrap()
        } else {
            l["percentiles"][what].as_f64().unwrap()
        }
    };
    let stall_us = stall_ms * 1000.0;
    // The first I/O due in the stall waited nearly all of it; hundreds did,
    // so the tail (p99.9 is the 8th worst of ~8,000) is the stall too.
    assert!(us("intended", "max") >= 0.6 * stall_us, "{o}");
    assert!(us("intended", "p99.9") >= 0.4 * stall_us, "{o}");
    // From submission, the stall is nowhere in the tail.
    assert!(
        us("submitted", "p99.9") < us("intended", "p99.9") / 4.0,
        "{o}"
    );
    assert!(us("submitted", "p99.9") < 0.2 * stall_us, "{o}");
    // The submitted side is the run's ordinary latency.
    assert_eq!(o["submitted"]["total"], j["total"]["total"]["latency_us"]);
}

/// Issue 38 part 2: a database reads a page from storage only when its
/// cache (buffer pool, shared_buffers) misses. `--db-cache` serves the
/// random reads of the hottest share of the region: the loop device gets
/// exactly the misses (4,000, the `--number-ios`), and the hits are the
/// share the access skew puts on the cache (uniform: the cache's share;
/// zipf: much more).
#[test]
fn a_database_cache_keeps_its_hits_from_the_device() {
    let Some(lo) = common::LoopDev::new_in(std::path::Path::new("/dev/shm"), 64 << 20) else {
        return;
    };
    let dev = lo.dev.to_str().unwrap();
    // Let udev's probe of the new device finish before counting.
    std::thread::sleep(std::time::Duration::from_millis(500));
    for (dist, cache, expect) in [("uniform", "25%", 0.25), ("zipf:1.1", "16M/200M", 0.0)] {
        let (r0, _) = sectors(&lo.name);
        let j = run_json(&[
            "run",
            dev,
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--cache",
            "direct",
            "--distribution",
            dist,
            "--db-cache",
            cache,
            "--number-ios",
            "4000",
            "-d",
            "0",
            "--allow-destroy",
        ]);
        let (r1, _) = sectors(&lo.name);
        let c = &j["shape"]["db_cache"];
        let (reads, hits) = (c["reads"].as_u64().unwrap(), c["hits"].as_u64().unwrap());
        assert_eq!(j["total"]["read"]["ios"], 4000, "{dist}: {c}");
        assert_eq!(reads, hits + 4000, "{dist}: {c}");
        let device = (r1 - r0) * 512 / 4096;
        assert!(
            (4000..=4000 + 256).contains(&device),
            "{dist}: the device read {device} blocks of 4 KiB for 4000 misses"
        );
        let ratio = c["hit_ratio"].as_f64().unwrap();
        let predicted = c["expected_hit_ratio"].as_f64().unwrap();
        if expect > 0.0 {
            assert!((predicted - expect).abs() < 0.001, "{dist}: {c}");
        } else {
            assert!(predicted > 0.6, "{dist}: {c}");
        }
        // Binomial standard errors are under 0.7 points here: 3 is wide.
        assert!((ratio - predicted).abs() < 0.03, "{dist}: {c}");
    }
}
