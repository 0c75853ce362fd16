//! `iosim replay` and `iosim capture`: the parsers against the committed
//! captures (tests/fixtures/traces/README.md says how they were made), the
//! replay of the loop-device capture onto a new loop device checked against
//! the kernel's /proc/diskstats, a capture-then-replay round trip, the
//! target safety rules and clean errors on bad traces.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{iosim, LoopDev};
use iosim::replay::{load, BlkEvent, Op, TraceFormat};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/traces")
        .join(name)
}

/// The size histogram fio issued in the captured run (from its iolog):
/// (bytes, reads, writes).
const LOOPMIX_SIZES: [(u32, u64, u64); 15] = [
    (4096, 63, 59),
    (8192, 38, 32),
    (12288, 1, 1),
    (16384, 1, 1),
    (20480, 1, 0),
    (24576, 1, 0),
    (28672, 0, 1),
    (32768, 2, 0),
    (36864, 2, 0),
    (40960, 1, 0),
    (45056, 1, 1),
    (49152, 1, 0),
    (53248, 0, 1),
    (61440, 0, 2),
    (65536, 14, 16),
];

fn assert_loopmix(t: &iosim::replay::Trace) {
    let m = t.mix();
    assert_eq!(
        (m.ios(), m.reads, m.writes),
        (240, 126, 114),
        "{:?}",
        t.format
    );
    let sizes: Vec<(u32, u64, u64)> = m.sizes.iter().map(|(&b, &(r, w))| (b, r, w)).collect();
    assert_eq!(sizes, LOOPMIX_SIZES.to_vec(), "{:?}", t.format);
    assert_eq!(m.read_bytes, 1792 * 1024);
    assert_eq!(m.write_bytes, 1788 * 1024);
}

#[test]
fn parsers_read_the_committed_captures_exactly() {
    // blktrace's per-CPU files, named by NAME (as blkparse -i) or by one file.
    for name in ["loopmix", "loopmix.blktrace.0", "loopmix.blktrace.1"] {
        let t = load(&fixture(name), BlkEvent::Queue).unwrap();
        assert_eq!(t.format, TraceFormat::Blktrace);
        assert_eq!(t.files.len(), 2, "{name}");
        assert_eq!(t.event, Some(BlkEvent::Queue));
        assert_loopmix(&t);
        // 1440 events: Q, G, P, U, D, C for each I/O; the Q are taken.
        assert_eq!(t.skipped.other_events, 1200, "{name}");
    }
    // The issue (D) events are the same 240 on a loop device (no merges).
    let d = load(&fixture("loopmix"), BlkEvent::Issue).unwrap();
    assert_eq!(d.event, Some(BlkEvent::Issue));
    assert_loopmix(&d);

    let text = load(&fixture("loopmix.blkparse.txt"), BlkEvent::Queue).unwrap();
    assert_eq!(text.format, TraceFormat::Blkparse);
    assert_loopmix(&text);
    // The text dump and the binary files hold the same I/O at the same times.
    let bin = load(&fixture("loopmix"), BlkEvent::Queue).unwrap();
    assert_eq!(text.ios, bin.ios);

    let v3 = load(&fixture("loopmix.iolog"), BlkEvent::Queue).unwrap();
    assert_eq!(v3.format, TraceFormat::FioIologV3);
    assert_loopmix(&v3);
    assert_eq!(v3.duration_ns(), (1_114_937 - 400) * 1000);
    let v2 = load(&fixture("loopmix-v2.iolog"), BlkEvent::Queue).unwrap();
    assert_eq!(v2.format, TraceFormat::FioIologV2);
    assert_loopmix(&v2);
    assert_eq!(v2.duration_ns(), 0);
    // fio's offsets are the blktrace's sectors: the same I/O in both.
    let mut a: Vec<(u64, u32, bool)> = v3
        .ios
        .iter()
        .map(|i| (i.offset, i.len, i.op == Op::Write))
        .collect();
    let mut b: Vec<(u64, u32, bool)> = bin
        .ios
        .iter()
        .map(|i| (i.offset, i.len, i.op == Op::Write))
        .collect();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
}

#[test]
fn big_endian_records_read_like_little_endian_ones() {
    // The fuzz seeds hold the fixture's first 24 records as captured and
    // byte-swapped field by field (a big-endian machine's blktrace file).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/trace");
    let le = load(&dir.join("blktrace-le"), BlkEvent::Queue).unwrap();
    let be = load(&dir.join("blktrace-be"), BlkEvent::Queue).unwrap();
    assert_eq!(le.format, TraceFormat::Blktrace);
    assert_eq!(le.ios.len(), 5);
    assert_eq!(le.ios, be.ios);
}

/// Reads, reads merged, writes, writes merged of `dev` from /proc/diskstats.
fn diskstats(dev: &str) -> [u64; 4] {
    let text = std::fs::read_to_string("/proc/diskstats").unwrap();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() > 8 && f[2] == dev {
            let n = |i: usize| f[i].parse::<u64>().unwrap();
            return [n(3), n(4), n(7), n(8)];
        }
    }
    panic!("{dev} not in /proc/diskstats");
}

fn replay_json(args: &[&str]) -> (serde_json::Value, std::process::Output) {
    let out = iosim()
        .arg("replay")
        .args(args)
        .args(["--output", "json", "--quiet", "--no-save"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (serde_json::from_slice(&out.stdout).unwrap(), out)
}

fn assert_replayed_loopmix(doc: &serde_json::Value) {
    let r = &doc["result"];
    assert_eq!(r["total"]["ios"], 240);
    assert_eq!(r["read"]["ios"], 126);
    assert_eq!(r["write"]["ios"], 114);
    assert_eq!(doc["errors"], 0);
    let sizes: Vec<(u64, u64, u64)> = doc["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["reads"], s["trace_reads"], "{s}");
            assert_eq!(s["writes"], s["trace_writes"], "{s}");
            (
                s["bytes"].as_u64().unwrap(),
                s["reads"].as_u64().unwrap(),
                s["writes"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(u64, u64, u64)> = LOOPMIX_SIZES
        .iter()
        .map(|&(b, r, w)| (u64::from(b), r, w))
        .collect();
    assert_eq!(sizes, want);
}

#[test]
fn replay_onto_a_loop_device_matches_the_trace_and_the_kernel() {
    let Some(lo) = LoopDev::new(32 << 20) else {
        return;
    };
    let dev = lo.dev.to_str().unwrap();
    let trace = fixture("loopmix");
    // A device is never written without --allow-destroy.
    let out = iosim()
        .args(["replay", trace.to_str().unwrap(), dev, "--no-save", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-destroy"));

    let before = diskstats(&lo.name);
    let (doc, _) = replay_json(&[trace.to_str().unwrap(), dev, "--allow-destroy"]);
    let after = diskstats(&lo.name);
    assert_replayed_loopmix(&doc);
    assert_eq!(doc["map"], "none");
    assert_eq!(doc["cache"], "direct");
    assert_eq!(doc["timing"]["mode"], "speed");
    let fid = &doc["fidelity"];
    assert!(
        fid["start_lag_us"]["percentiles"]["p99"].is_number(),
        "{fid}"
    );
    // The kernel saw the same I/O: with O_DIRECT every replayed I/O is one
    // bio; the block layer may merge neighbours into one request, so the
    // requests completed plus the merges equal the trace's counts.
    let d: Vec<u64> = (0..4).map(|i| after[i] - before[i]).collect();
    assert_eq!(d[0] + d[1], 126, "reads completed + merged: {d:?}");
    assert_eq!(d[2] + d[3], 114, "writes completed + merged: {d:?}");

    // As fast as possible at a queue depth, from the text dump: the same I/O.
    let before = diskstats(&lo.name);
    let (doc, _) = replay_json(&[
        fixture("loopmix.blkparse.txt").to_str().unwrap(),
        dev,
        "--allow-destroy",
        "--afap",
        "--qd",
        "8",
    ]);
    let after = diskstats(&lo.name);
    assert_replayed_loopmix(&doc);
    assert!(doc["fidelity"].is_null());
    assert_eq!(doc["qd"], 8);
    assert_eq!((after[0] + after[1]) - (before[0] + before[1]), 126);
    assert_eq!((after[2] + after[3]) - (before[2] + before[3]), 114);
}

#[test]
fn replay_onto_files_maps_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let fs = f.to_str().unwrap();
    // A missing file is created as large as the trace reaches (16 MiB).
    let (doc, _) = replay_json(&[fixture("loopmix.iolog").to_str().unwrap(), fs, "--afap"]);
    assert_replayed_loopmix(&doc);
    assert_eq!(doc["targets"][0]["size"], 16 << 20);
    assert_eq!(doc["targets"][0]["created"], true);
    // Onto a smaller file: scaled (auto) or wrapped, every I/O still done.
    let small = dir.path().join("small.dat");
    let ss = small.to_str().unwrap();
    for (map, want) in [("auto", "scale"), ("wrap", "wrap"), ("scale", "scale")] {
        let (doc, _) = replay_json(&[
            fixture("loopmix").to_str().unwrap(),
            ss,
            "--size",
            "4M",
            "--afap",
            "--map",
            map,
        ]);
        assert_replayed_loopmix(&doc);
        assert_eq!(doc["map"], want);
    }
    let out = iosim()
        .args([
            "replay",
            fixture("loopmix").to_str().unwrap(),
            ss,
            "--map",
            "none",
            "--no-save",
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--map scale"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 4x speed, buffered through the sync engine: the same I/O.
    let (doc, _) = replay_json(&[
        fixture("loopmix").to_str().unwrap(),
        fs,
        "--speed",
        "4x",
        "--cache",
        "buffered",
        "--engine",
        "sync",
    ]);
    assert_replayed_loopmix(&doc);
    assert_eq!(doc["engine"], "sync");
    assert_eq!(doc["timing"]["speed"], 4.0);
    // A file iosim did not create is not written.
    let foreign = dir.path().join("foreign.dat");
    std::fs::write(&foreign, vec![1u8; 16 << 20]).unwrap();
    let out = iosim()
        .args([
            "replay",
            fixture("loopmix").to_str().unwrap(),
            foreign.to_str().unwrap(),
            "--no-save",
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("was not created by iosim"));
    assert!(common::read(&foreign).iter().all(|&b| b == 1));
    // Text output, and a reader that goes away.
    let text = common::success(iosim().args([
        "replay",
        fixture("loopmix").to_str().unwrap(),
        fs,
        "--afap",
        "--no-save",
        "-q",
    ]));
    assert!(
        text.contains("trace          240 I/Os:     126 reads,     114 writes"),
        "{text}"
    );
    assert!(
        text.contains("replayed       240 I/Os:     126 reads,     114 writes"),
        "{text}"
    );
    common::assert_quiet_on_closed_pipe(iosim().args([
        "replay",
        fixture("loopmix").to_str().unwrap(),
        fs,
        "--afap",
        "--no-save",
        "-q",
    ]));
}

#[test]
fn trace_offset_rebases_a_partition_trace() {
    // A partition's I/O is traced at disk offsets: here, a partition at 1 MiB.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("part.iolog");
    std::fs::write(
        &log,
        "fio version 3 iolog\n10 /dev/sda write 1048576 4096\n20 /dev/sda read 1056768 8192\n",
    )
    .unwrap();
    let f = dir.path().join("t.dat");
    let (l, fs) = (log.to_str().unwrap(), f.to_str().unwrap());
    let (doc, _) = replay_json(&[
        l,
        fs,
        "--size",
        "1M",
        "--map",
        "none",
        "--trace-offset",
        "1M",
        "--afap",
    ]);
    assert_eq!(doc["result"]["total"]["ios"], 2);
    // The extent reported is the rebased one.
    assert_eq!(doc["trace"]["extent_bytes"], 8192 + 8192);
    let out = iosim()
        .args(["replay", l, fs, "--trace-offset", "2M", "--no-save", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("below --trace-offset"));
}

/// Ctrl-C or SIGTERM in a long idle gap of the trace (999,999 s between two
/// I/Os) stops the replay at once: exit 130 with the I/O done so far printed
/// and marked interrupted (it used to sleep through the whole gap).
#[test]
fn a_signal_in_a_gap_of_the_trace_stops_the_replay() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("gap.iolog");
    std::fs::write(
        &log,
        "fio version 3 iolog\n0 /dev/sda write 0 4096\n999999000000 /dev/sda read 4096 4096\n",
    )
    .unwrap();
    // The third case: a tiny --speed puts the second I/O's due time past
    // u64 (it once overflowed: a panic in a debug build, an I/O submitted at
    // once in a release build).
    let cases: [(i32, &str, &[&str]); 3] = [
        (libc::SIGINT, "SIGINT", &[]),
        (libc::SIGTERM, "SIGTERM", &[]),
        (libc::SIGINT, "tiny-speed", &["--speed", "0.0000000001x"]),
    ];
    for (sig, name, extra) in cases {
        let target = dir.path().join(format!("{name}.dat"));
        let mut child = iosim()
            .arg("replay")
            .arg(&log)
            .arg(&target)
            .args(["--cache", "buffered", "--no-save"])
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Into the gap: the target is made, then the first I/O is due 1 ms later.
        let t0 = std::time::Instant::now();
        while !target.exists() && t0.elapsed() < std::time::Duration::from_secs(30) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        std::thread::sleep(std::time::Duration::from_millis(1500));
        // SAFETY: sending a signal to our own child.
        unsafe { libc::kill(child.id() as i32, sig) };
        let sent = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if sent.elapsed() > std::time::Duration::from_secs(10) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{name}: replay still running 10 s after the signal");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        let (text, err) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(130), "{name}: {text}{err}");
        let replayed: Vec<&str> = text
            .lines()
            .find(|l| l.starts_with("replayed "))
            .unwrap_or_else(|| panic!("{name}: no result printed: {text}{err}"))
            .split_whitespace()
            .collect();
        assert_eq!(
            replayed[1..5],
            ["1", "I/Os:", "0", "reads,"],
            "{name}: {text}"
        );
        assert!(
            text.contains("interrupted: the replay stopped before the end of the trace"),
            "{name}: {text}"
        );
    }
}

#[test]
fn bad_traces_give_clean_errors() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.dat");
    let data = common::read(&fixture("loopmix.blktrace.0"));
    let mut damaged = data.clone();
    damaged[48 * 3 + 3] ^= 0xff;
    let cases: [(&str, Vec<u8>, &[&str]); 5] = [
        (
            "garbage.bin",
            b"\x00\x01\x02 not a trace at all".to_vec(),
            &["garbage.bin", "is not a trace iosim reads"],
        ),
        // A blktrace cut in the middle of a record.
        (
            "cut.blktrace.0",
            data[..1000].to_vec(),
            &["cut.blktrace.0", "record 21 at byte 992", "cut short"],
        ),
        (
            "damaged.bin",
            damaged,
            &["record 4", "not a blktrace record"],
        ),
        (
            "bad.iolog",
            b"fio version 3 iolog\n1 /dev/sdb read 0 4096\n2 /dev/sdb write 4096\n".to_vec(),
            &["bad.iolog' line 3", "length"],
        ),
        (
            "empty.iolog",
            b"fio version 2 iolog\n/dev/sdb add\n/dev/sdb trim 0 4096\n".to_vec(),
            &["no read or write to replay"],
        ),
    ];
    let run = |trace: &Path| {
        let out = iosim()
            .args([
                "replay",
                trace.to_str().unwrap(),
                target.to_str().unwrap(),
                "--no-save",
                "-q",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        err
    };
    let e = run(&dir.path().join("nothing"));
    assert!(e.contains("no trace at") && e.contains("nothing"), "{e}");
    for (name, bytes, want) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let e = run(&p);
        assert!(want.iter().all(|w| e.contains(w)), "{name}: {e}");
    }
    assert!(!target.exists(), "nothing was created for a bad trace");
}

#[test]
fn capture_refuses_what_is_not_a_block_device() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("plain");
    std::fs::write(&f, b"x").unwrap();
    let out = iosim()
        .args(["capture", f.to_str().unwrap(), "--duration", "1s", "-o"])
        .arg(dir.path().join("cap"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a block device"), "{err}");
}

/// A `blktrace` that fails as Debian's does under kernel lockdown, after
/// making (truncating) its per-CPU files `NAME.blktrace.0` and `.1` as the
/// real one does: put first on PATH by [`with_fake_blktrace`].
const FAKE_BLKTRACE: &str = r#"#!/bin/sh
dir=.; name=trace
while [ $# -gt 0 ]; do
  case "$1" in -D) dir=$2; shift;; -o) name=$2; shift;; esac
  shift
done
for cpu in 0 1; do echo "fake blktrace" > "$dir/$name.blktrace.$cpu"; done
echo "BLKTRACESETUP(2) /dev/loop0 failed: 13/Permission denied" >&2
exit 1
"#;

/// `iosim capture` with the failing `blktrace` of [`FAKE_BLKTRACE`] first on PATH.
fn with_fake_blktrace(bin: &Path) -> Command {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(bin).unwrap();
    let script = bin.join("blktrace");
    std::fs::write(&script, FAKE_BLKTRACE).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    let mut c = iosim();
    c.env("PATH", format!("{}:{path}", bin.display()));
    c.arg("capture");
    c
}

/// Files in `dir` with their contents.
fn files_in(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// A user's NAME.blktrace.1 and .7 (no .0) and NAME.blkparse: capture
/// refuses, names the files, and leaves all three as they were (it used to
/// check only NAME.blktrace.0, run blktrace over them and, when blktrace
/// failed, delete every NAME.blktrace.N before falling back to tracefs).
#[test]
fn capture_refuses_to_touch_the_users_trace_files() {
    let Some(src) = LoopDev::new(16 << 20) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let name = out_dir.join("NAME");
    for (f, text) in [
        ("NAME.blktrace.1", "the user's CPU 1"),
        ("NAME.blktrace.7", "the user's CPU 7"),
        ("NAME.blkparse", "the user's blkparse dump"),
    ] {
        std::fs::write(out_dir.join(f), text).unwrap();
    }
    let before = files_in(&out_dir);
    let out = with_fake_blktrace(&dir.path().join("bin"))
        .arg(&src.dev)
        .args(["-d", "1s", "-o"])
        .arg(&name)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for f in [
        "NAME.blktrace.1'",
        "NAME.blktrace.7'",
        "choose another -o NAME",
    ] {
        assert!(err.contains(f), "{f}: {err}");
    }
    assert_eq!(
        files_in(&out_dir),
        before,
        "the user's files are as they were"
    );
}

/// blktrace refused (kernel lockdown) after making its files: capture falls
/// back to the kernel's blk tracer, replaces the files blktrace made with its
/// own, and leaves the user's other files in the directory alone.
#[test]
fn capture_falls_back_to_tracefs_when_blktrace_is_refused() {
    if !Path::new("/sys/kernel/tracing").exists() {
        crate::common::skip("no tracefs on this kernel");
        return;
    }
    let _turn = crate::common::kernel_tracer();
    let Some(src) = LoopDev::new(16 << 20) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let name = out_dir.join("NAME");
    for f in [
        "NAME.blkparse",
        "NAME.blktrace",
        "NAME.blktrace.0.bak",
        "NAMES.blktrace.0",
        "other.blktrace.1",
    ] {
        std::fs::write(out_dir.join(f), format!("the user's {f}")).unwrap();
    }
    let users = files_in(&out_dir);
    let out = with_fake_blktrace(&dir.path().join("bin"))
        .arg(&src.dev)
        .args(["-d", "1s", "--json", "-o"])
        .arg(&name)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("tracer is in use") {
        crate::common::skip(&format!(
            "the kernel's tracer is in use by something else: {err}"
        ));
        return;
    }
    assert!(out.status.success(), "{err}");
    let rep: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rep["method"], "tracefs", "{rep}");
    assert!(
        rep["notes"].to_string().contains("kernel lockdown"),
        "{rep}"
    );
    let after = files_in(&out_dir);
    for (f, text) in &users {
        assert_eq!(after.get(f), Some(text), "{f} survived unchanged");
    }
    // What is left of NAME.blktrace.N is the tracer's, not blktrace's.
    let ours: Vec<String> = rep["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            Path::new(f.as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .to_string()
        })
        .collect();
    let new: Vec<&String> = after.keys().filter(|f| !users.contains_key(*f)).collect();
    assert_eq!(new, ours.iter().collect::<Vec<_>>(), "{rep}");
    assert!(
        after.values().all(|v| v != b"fake blktrace\n"),
        "blktrace's files were removed"
    );
}

/// Captures a known mix of direct I/O on one loop device, checks the trace
/// holds exactly that I/O, and replays it onto another.
#[test]
fn capture_then_replay_round_trip() {
    if !std::path::Path::new("/sys/kernel/tracing").exists()
        && !std::path::Path::new("/sys/kernel/debug").exists()
    {
        crate::common::skip("no tracefs or debugfs on this kernel");
        return;
    }
    let _turn = crate::common::kernel_tracer();
    let Some(src) = LoopDev::new(16 << 20) else {
        return;
    };
    let Some(dst) = LoopDev::new(16 << 20) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let name = dir.path().join("cap");
    let cap = crate::common::start_capture(&src.dev, "4s", &name, true);
    // 40 writes of 8 KiB and 24 reads of 16 KiB, O_DIRECT (one bio each).
    let dd = |args: &[&str]| {
        let s = Command::new("dd")
            .args(args)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(s.success());
    };
    dd(&[
        "if=/dev/zero",
        &format!("of={}", src.dev.display()),
        "bs=8k",
        "count=40",
        "seek=100",
        "oflag=direct",
    ]);
    dd(&[
        &format!("if={}", src.dev.display()),
        "of=/dev/null",
        "bs=16k",
        "count=24",
        "skip=50",
        "iflag=direct",
    ]);
    let out = cap.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let rep: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(rep["events"].as_u64().unwrap() >= 64 * 2, "{rep}");

    let t = load(&name, BlkEvent::Queue).unwrap();
    let m = t.mix();
    assert_eq!(m.sizes.get(&8192), Some(&(0, 40)), "{:?}", m.sizes);
    assert_eq!(m.sizes.get(&16384), Some(&(24, 0)), "{:?}", m.sizes);
    assert_eq!(
        (m.reads, m.writes),
        (24, 40),
        "nothing else touched the new device: {:?}",
        m.sizes
    );
    // blkparse (Debian's) reads the files iosim wrote, when it is installed.
    if common::have("blkparse") {
        let out = Command::new("blkparse")
            .arg("-i")
            .arg(&name)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("Reads Queued:          24")
                && text.contains("Writes Queued:          40"),
            "{text}"
        );
    }

    let before = diskstats(&dst.name);
    let (doc, _) = replay_json(&[
        name.to_str().unwrap(),
        dst.dev.to_str().unwrap(),
        "--allow-destroy",
    ]);
    let after = diskstats(&dst.name);
    assert_eq!(
        (
            doc["result"]["read"]["ios"].as_u64(),
            doc["result"]["write"]["ios"].as_u64()
        ),
        (Some(24), Some(40))
    );
    assert_eq!(after[0] + after[1] - before[0] - before[1], 24);
    assert_eq!(after[2] + after[3] - before[2] - before[3], 40);
}
