//! `iosim sim` end to end: clean runs report no errors; every fault class,
//! injected under the simulator or done to its files behind its back, is
//! detected and classified with the right file and page.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common;

/// The binary, with the history and working directory of every test's
/// (common::iosim): the default error log never lands in the checkout.
fn iosim() -> Command {
    common::iosim()
}

/// A small configuration in `dir`: 8 MiB data file, 4 MiB log.
fn ini(dir: &Path, extra_config: &str, sections: &str, data_extra: &str) -> PathBuf {
    let text = format!(
        "[CONFIG]\nMaxMemoryMB=16\nTestCycles=1\nTestCycleDuration=2\n{extra_config}\n{sections}\n\
         [File1]\nFileName={d}/sim.mdx\nInitialSize=8\nMaxSize=16\nIncrement=1\nShrinkable=TRUE\n{data_extra}\n\
         [File2]\nFileName={d}/sim.ldx\nInitialSize=4\nMaxSize=4\nLogFile=TRUE\n",
        d = dir.display()
    );
    let p = dir.join("sim.cfg.ini");
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs `iosim sim` with JSON output; returns (exit code, result).
fn run(dir: &Path, cfg: &Path, args: &[&str]) -> (i32, Value) {
    let out = iosim()
        .args(["sim", "-q", "-o", "json", "--config"])
        .arg(cfg)
        .arg("--log")
        .arg(dir.join("errors.jsonl"))
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}); stderr: {}\nstdout: {stdout}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

fn count(v: &Value, class: &str) -> u64 {
    v["errors"]["by_class"][class].as_u64().unwrap()
}

fn file(v: &Value, id: usize) -> &Value {
    &v["files"][id - 1]
}

fn assert_clean(code: i32, v: &Value) {
    assert_eq!(
        v["errors"]["count"], 0,
        "false positives: {:#}",
        v["errors"]["first"]
    );
    assert_eq!(code, 0);
    assert!(
        v["pages_verified"].as_u64().unwrap() > 1000,
        "{}",
        v["pages_verified"]
    );
    assert!(v["pages_written"].as_u64().unwrap() >= 1024);
    assert!(v["log_blocks_verified"].as_u64().unwrap() > 0);
    // The log is circular: blocks overwritten by a wrap cannot be read back.
    assert!(v["log_blocks_verified"].as_u64() <= v["log_blocks_written"].as_u64());
}

#[test]
fn clean_run_direct_scatter_gather_many_users_grow_shrink() {
    let d = tempfile::tempdir().unwrap();
    let cfg = ini(
        d.path(),
        "StopOnError=FALSE",
        "[RandomUser]\nUserCount=3\n[AuditUser]\nUserCount=1\n[ReadAheadUser]\nUserCount=1\n[BulkUpdateUser]\nUserCount=1\n[ShrinkUser]\nMinShrinkInterval=0\nMaxShrinkInterval=1\n",
        "",
    );
    let (code, v) = run(d.path(), &cfg, &[]);
    assert_clean(code, &v);
    let f = file(&v, 1);
    assert!(f["scatter_reads"].as_u64().unwrap() > 0);
    assert!(f["gather_writes"].as_u64().unwrap() > 0);
    assert!(
        v["grows"].as_u64().unwrap() + v["shrinks"].as_u64().unwrap() >= 1,
        "no grow/shrink happened"
    );
    let users: Vec<&str> = v["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["user"].as_str().unwrap())
        .collect();
    for u in [
        "RandomUser",
        "AuditUser",
        "ReadAheadUser",
        "BulkUpdateUser",
        "LogWriter",
        "Checkpoint",
        "FullAudit",
    ] {
        assert!(users.contains(&u), "{u} missing from {users:?}");
    }
    // Percentiles per user type.
    let ru = v["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["user"] == "RandomUser")
        .unwrap();
    assert!(
        ru["stats"]["read"]["latency_us"]["percentiles"]["p99"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(std::fs::read_to_string(d.path().join("errors.jsonl"))
        .unwrap()
        .is_empty());
}

#[test]
fn clean_run_buffered_single_page_io_sync_engine() {
    let d = tempfile::tempdir().unwrap();
    let cfg = ini(
        d.path(),
        "NoBuffering=FALSE\nWriteThrough=FALSE\nUseScatterGather=FALSE\nStampFiles=TRUE",
        "[RandomUser]\nUserCount=2\n[BulkUpdateUser]\nUserCount=1\n[ShrinkUser]\nMinShrinkInterval=0\nMaxShrinkInterval=1\n",
        "",
    );
    let (code, v) = run(d.path(), &cfg, &["--engine", "sync"]);
    assert_clean(code, &v);
    let f = file(&v, 1);
    assert_eq!(f["scatter_reads"], 0);
    assert_eq!(f["gather_writes"], 0);
    assert!(f["reads"].as_u64().unwrap() > 0);
    assert_eq!(v["engine"], "sync");
}

#[test]
fn clean_run_sparse_file_and_outstanding_limit() {
    let d = tempfile::tempdir().unwrap();
    let cfg = ini(
        d.path(),
        "MaxOutstandingIO=2\nTargetIODuration=1",
        "[RandomUser]\nUserCount=2\n",
        "Sparse=TRUE",
    );
    // Some I/Os stall 20 ms (a delay is no data error), so the running
    // average passes the 1 ms target on any storage and throttling must start.
    let (code, v) = run(
        d.path(),
        &cfg,
        &["--inject", "delay:file=1,ms=20,rate=0.05"],
    );
    assert_clean(code, &v);
    let f = file(&v, 1);
    assert!(
        f["io_request_blocks"].as_u64().unwrap() <= 2,
        "{}",
        f["io_request_blocks"]
    );
    assert_eq!(f["sparse"], true);
    assert!(f["throttled"].as_u64().unwrap() > 0, "{f:#}");
}

/// A read-mostly configuration for fault tests: the timed run writes
/// nothing, so with two cycles every page is written exactly twice (by the
/// two initial checkpoints, in ascending page order).
fn fault_cfg(dir: &Path, stop_on_error: bool) -> PathBuf {
    ini(
        dir,
        &format!(
            "TestCycles=2\nTestCycleDuration=1\nStopOnError={}",
            if stop_on_error { "TRUE" } else { "FALSE" }
        ),
        "[RandomUser]\nUserCount=1\nRandomUserReadWriteRatio=0\n[BulkUpdateUser]\nUserCount=0\n[ShrinkUser]\nMinShrinkInterval=600\nMaxShrinkInterval=600\n",
        "Increment=0\nShrinkable=FALSE",
    )
}

/// A run with a fault: its JSON result, the lines it printed on stderr (one
/// "ERROR" line per error) and its SQLIOSim-style XML error log.
struct Case {
    _d: tempfile::TempDir,
    v: Value,
    stderr: String,
    xml: String,
}

impl Case {
    /// Every error of `class`: its detail says each of `says` and none of
    /// `never`, in the JSON, on stderr and in the XML log alike. Returns how
    /// many there were.
    fn words(&self, class: &str, says: &[&str], never: &[&str]) -> usize {
        let errs: Vec<&Value> = self.v["errors"]["first"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["class"] == class)
            .collect();
        let doc =
            roxmltree::Document::parse(&self.xml).unwrap_or_else(|e| panic!("{e}\n{}", self.xml));
        let entries: Vec<(String, String)> = doc
            .descendants()
            .filter(|n| n.has_tag_name("ENTRY") && n.attribute("TYPE") == Some("ERROR"))
            .map(|n| {
                let desc = n
                    .children()
                    .find(|c| c.has_tag_name("EXTENDED_DESCRIPTION"))
                    .and_then(|c| c.text())
                    .unwrap_or_default();
                (
                    n.attribute("SYSTEXT").unwrap_or_default().to_string(),
                    desc.to_string(),
                )
            })
            .collect();
        for e in &errs {
            let detail = e["detail"].as_str().unwrap();
            for w in says {
                assert!(detail.contains(w), "{class}: '{w}' missing: {e:#}");
            }
            for w in never {
                assert!(!detail.contains(w), "{class}: '{w}' said: {e:#}");
            }
            let line = format!("iosim sim: ERROR {class} on ");
            assert!(
                self.stderr
                    .lines()
                    .any(|l| l.starts_with(&line) && l.contains(detail)),
                "no '{line}... {detail}' on stderr:\n{}",
                self.stderr
            );
            // SYSTEXT names the class, or the OS error of a failed read.
            let systext = class.replace('_', " ");
            let want = format!(". {detail} ({class})");
            assert!(
                entries
                    .iter()
                    .any(|(t, d)| (t == &systext || t.contains("(os error ")) && d.ends_with(&want)),
                "no XML entry '{want}':\n{}",
                self.xml
            );
        }
        errs.len()
    }
}

/// Runs with one injected fault; checks that errors were found, that they
/// are all of `classes`, and that each names file 1 and one of `pages`.
fn fault_case(fault: &str, classes: &[&str], pages: &[u64]) -> Case {
    let d = tempfile::tempdir().unwrap();
    let cfg = fault_cfg(d.path(), false);
    let log = d.path().join("sqliosim.log.xml");
    let out = iosim()
        .args(["sim", "-o", "json", "--config"])
        .arg(&cfg)
        .arg("--log")
        .arg(&log)
        .args(["--inject", fault, "--retries", "3"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}); stderr: {stderr}"));
    assert_eq!(out.status.code(), Some(3), "errors must give exit code 3");
    let total = v["errors"]["count"].as_u64().unwrap();
    assert!(total > 0, "{fault}: nothing detected");
    let matched: u64 = classes.iter().map(|c| count(&v, c)).sum();
    assert_eq!(
        matched, total,
        "{fault}: misclassified: {:#}",
        v["errors"]["by_class"]
    );
    for e in v["errors"]["first"].as_array().unwrap() {
        assert_eq!(e["file_id"], 1, "{e:#}");
        assert!(
            pages.contains(&e["page"].as_u64().unwrap()),
            "{fault}: wrong page {e:#}"
        );
        assert_eq!(
            e["offset"].as_u64().unwrap(),
            e["page"].as_u64().unwrap() * 8192
        );
        assert!(e["expected"]["generation"].as_u64().is_some());
    }
    // One line on stderr and one ERROR entry in the XML log per error; dumps
    // exist for data checks.
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.starts_with("iosim sim: ERROR "))
            .count() as u64,
        total,
        "{stderr}"
    );
    let xml = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        xml.matches("<ENTRY TYPE='ERROR'").count() as u64,
        total,
        "{xml}"
    );
    if let Some(dump) = v["errors"]["first"][0]["dump"].as_str() {
        let t = std::fs::read_to_string(dump).unwrap();
        assert!(
            t.contains("EXPECTED (WRITE) IMAGE")
                && t.contains("RECEIVED (READ) IMAGE")
                && t.contains("DIFFERENCE")
        );
    }
    Case {
        _d: d,
        v,
        stderr,
        xml,
    }
}

/// What every retry of a persistent fault adds to its words.
const RETRIES_FAILED: &str = "(every one of 3 retries failed too)";
/// Words a read-path fault must never be given.
const LOST: &[&str] = &["lost", "corruption"];

#[test]
fn fault_bit_flip_is_a_checksum_mismatch() {
    let c = fault_case(
        "bit-flip:file=1,page=300,skip=1",
        &["checksum_mismatch"],
        &[300],
    );
    let e = &c.v["errors"]["first"][0];
    assert_eq!(e["recovered"], false);
    c.words(
        "checksum_mismatch",
        &[
            "stored checksum 0x",
            ": corruption, the data changed after it was written",
            RETRIES_FAILED,
        ],
        &["recovered"],
    );
    assert!(e["dump"].as_str().is_some());
    let dump = std::fs::read_to_string(e["dump"].as_str().unwrap()).unwrap();
    assert!(
        dump.contains("1 byte(s) differ in 1 range(s)"),
        "a single flipped bit: {}",
        &dump[..600]
    );
}

#[test]
fn fault_torn_write_is_a_torn_page() {
    let c = fault_case("torn:file=1,page=300,skip=1", &["torn_page"], &[300]);
    c.words(
        "torn_page",
        &[
            "generation 1 in sector(s) 8-15",
            ": torn write, part of it is an older image",
            RETRIES_FAILED,
        ],
        &["recovered"],
    );
}

#[test]
fn fault_misdirected_write_is_found_at_both_pages() {
    // Page 300's second image lands on page 2 (already rewritten this cycle).
    let c = fault_case(
        "misdirect:file=1,page=300,to=2,skip=1",
        &["misdirected", "stale_read"],
        &[2, 300],
    );
    let v = &c.v;
    assert!(count(v, "misdirected") > 0 && count(v, "stale_read") > 0);
    let m = v["errors"]["first"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["class"] == "misdirected")
        .unwrap();
    assert_eq!(m["page"], 2);
    assert_eq!(m["received"]["page"], 300);
    c.words(
        "misdirected",
        &[
            "the page holds file 1 page 300 (generation 2), expected file 1 page 2",
            ": misdirected I/O, a write or a read went to the wrong place",
            RETRIES_FAILED,
        ],
        &["recovered"],
    );
    c.words(
        "stale_read",
        &[": lost write", RETRIES_FAILED],
        &["recovered"],
    );
}

#[test]
fn fault_lost_write_is_a_stale_read() {
    let c = fault_case("lost-write:file=1,page=300,skip=1", &["stale_read"], &[300]);
    let e = &c.v["errors"]["first"][0];
    assert_eq!(e["received"]["generation"], 1);
    assert_eq!(e["expected"]["generation"], 2);
    assert_eq!((&e["recovered"], &e["retries"]), (&false.into(), &3.into()));
    let n = c.words(
        "stale_read",
        &[
            "generation 1 read, generation 2 was the last acknowledged write (an older image)",
            ": lost write, the storage does not return the last acknowledged write",
            RETRIES_FAILED,
        ],
        &["recovered"],
    );
    assert!(n > 0);
}

#[test]
fn zeros_on_every_read_are_a_lost_write() {
    // The reader cannot tell this from a write that never landed: every
    // re-read returns zeros too.
    let c = fault_case("zero-read:file=1,page=300", &["stale_read"], &[300]);
    let n = c.words(
        "stale_read",
        &[
            "the page reads as all zeros, but generation ",
            " was written and acknowledged: lost write, the storage does not return the last acknowledged write",
            RETRIES_FAILED,
        ],
        &["recovered"],
    );
    assert!(n > 0);
    assert!(c.v["errors"]["first"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["recovered"] == false && e.get("first_read").is_none()));
}

/// Issue 23: a read that returns zeros once and reads right on its retry is a
/// fault in the read path (SQLIOSim's read-retry), not a lost write; the
/// text, the JSON and the XML log all say so.
#[test]
fn zeros_once_then_right_on_retry_is_a_read_retry_not_a_lost_write() {
    let c = fault_case("zero-read:file=1,page=40,count=1", &["read_retry"], &[40]);
    assert_eq!(c.v["errors"]["count"], 1);
    let e = &c.v["errors"]["first"][0];
    assert_eq!(
        (
            e["recovered"].as_bool(),
            e["retries"].as_u64(),
            e["first_read"].as_str()
        ),
        (Some(true), Some(1), Some("stale_read"))
    );
    assert_eq!(count(&c.v, "stale_read"), 0);
    let n = c.words(
        "read_retry",
        &[
            "the page reads as all zeros, but generation 1 was written and acknowledged: read returned wrong data, recovered on retry 1",
            "a fault in the read path",
        ],
        LOST,
    );
    assert_eq!(n, 1);
    assert!(
        !c.stderr.contains("lost") && !c.xml.contains("lost"),
        "{}\n{}",
        c.stderr,
        c.xml
    );
    // The dump file names the class and what the first read looked like.
    let dump = std::fs::read_to_string(e["dump"].as_str().unwrap()).unwrap();
    assert!(
        dump.contains("class: read_retry (first read: stale_read)"),
        "{}",
        &dump[..600]
    );
    // The text report says the same, and the JSON-lines log holds it too.
    let d = tempfile::tempdir().unwrap();
    let cfg = fault_cfg(d.path(), false);
    let out = iosim()
        .args(["sim", "-q", "--config"])
        .arg(&cfg)
        .arg("--log")
        .arg(d.path().join("errors.jsonl"))
        .args(["--inject", "zero-read:file=1,page=40,count=1"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "a recovered read is still an error"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\n  read_retry         1\n"), "{text}");
    assert!(text.contains("\n  stale_read         0\n"), "{text}");
    assert!(
        text.contains("  read_retry file ") && text.contains(" page 40 offset 0x50000 (") && text.contains("): the page reads as all zeros, but generation 1 was written and acknowledged: read returned wrong data, recovered on retry 1"),
        "{text}"
    );
    assert!(!text.contains("lost"), "{text}");
    let log = std::fs::read_to_string(d.path().join("errors.jsonl")).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert_eq!(
        (
            &lines[0]["class"],
            &lines[0]["first_read"],
            &lines[0]["recovered"]
        ),
        (&"read_retry".into(), &"stale_read".into(), &true.into())
    );
}

/// Issue 23's reproducer: the files on a FUSE file system (tests/fuse/rig.py)
/// that returns zeros on the first read of page 40, and the page itself on
/// every read after: one read_retry, no lost write.
#[test]
fn a_file_system_that_returns_zeros_once_gives_a_read_retry() {
    let d = tempfile::tempdir().unwrap();
    let (back, mnt, journal) = (
        d.path().join("back"),
        d.path().join("mnt"),
        d.path().join("journal"),
    );
    std::fs::create_dir(&back).unwrap();
    std::fs::create_dir(&mnt).unwrap();
    let zero = format!("sim.mdx:{}:8192", 40 * 8192);
    let Some(rig) = common::FuseRig::mount(
        &back,
        &mnt,
        &journal,
        &["--mode", "off", "--zero-first-read", &zero],
    ) else {
        return;
    };
    let cfg = fault_cfg(&mnt, false);
    let (code, v) = run(d.path(), &cfg, &[]);
    drop(rig);
    assert_eq!(code, 3, "{:#}", v["errors"]);
    // The rig returned zeros once, where it was told to.
    let j = std::fs::read_to_string(&journal).unwrap();
    let zeroed: Vec<Value> = j
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["ev"] == "z")
        .collect();
    assert_eq!(zeroed.len(), 1, "{j}");
    assert_eq!(
        (&zeroed[0]["p"], &zeroed[0]["o"]),
        (&"/sim.mdx".into(), &(40 * 8192).into())
    );
    assert_eq!(v["errors"]["count"], 1, "{:#}", v["errors"]);
    assert_eq!(count(&v, "read_retry"), 1);
    assert_eq!(count(&v, "stale_read"), 0);
    let e = &v["errors"]["first"][0];
    assert_eq!(
        (&e["page"], &e["recovered"], &e["first_read"]),
        (&40.into(), &true.into(), &"stale_read".into())
    );
    let detail = e["detail"].as_str().unwrap();
    assert!(
        detail.contains("read returned wrong data, recovered on retry 1")
            && !detail.contains("lost"),
        "{detail}"
    );
}

#[test]
fn fault_short_read_and_bytes_not_read() {
    let c = fault_case("short-read:file=1,page=300", &["short_read"], &[300]);
    c.words(
        "short_read",
        &[
            "the read returned ",
            ": the storage reported success without delivering the data",
            RETRIES_FAILED,
        ],
        &["recovered"],
    );
    let c = fault_case("not-read:file=1,page=300", &["short_read"], &[300]);
    c.words(
        "short_read",
        &["bytes not read", RETRIES_FAILED],
        &["recovered"],
    );
}

#[test]
fn fault_eio_is_an_io_error() {
    // EIO on writes and reads of page 300 and of the multi-page reads that cover it; such
    // a read is reported at its first page, whose read alone then succeeds (a
    // read_retry: the read failed, a retry read the page).
    let c = fault_case(
        "eio:file=1,page=300,skip=1",
        &["io_error", "read_retry"],
        &(0..1024).collect::<Vec<_>>(),
    );
    for e in c.v["errors"]["first"].as_array().unwrap() {
        let class = if e["page"] == 300 {
            "io_error"
        } else {
            "read_retry"
        };
        assert_eq!(e["class"], class, "{e:#}");
    }
    let n = c.words(
        "io_error",
        &[
            " failed: Input/output error (os error 5): the device or a layer below it failed the request",
            RETRIES_FAILED,
        ],
        &["recovered"],
    );
    assert!(n > 0);
    c.words(
        "read_retry",
        &["the read failed: Input/output error (os error 5): read failed, recovered on retry 1"],
        LOST,
    );
    assert!(c.xml.contains("HRESULT='0x80070005'"), "{}", c.xml);
}

#[test]
fn transient_fault_is_reported_as_recovered() {
    let d = tempfile::tempdir().unwrap();
    let cfg = fault_cfg(d.path(), false);
    let (_, v) = run(
        d.path(),
        &cfg,
        &["--inject", "not-read:file=1,page=40,count=1"],
    );
    assert_eq!(v["errors"]["count"], 1);
    let e = &v["errors"]["first"][0];
    assert_eq!(
        (
            e["page"].as_u64(),
            e["class"].as_str(),
            e["first_read"].as_str(),
            e["recovered"].as_bool(),
            e["retries"].as_u64()
        ),
        (
            Some(40),
            Some("read_retry"),
            Some("short_read"),
            Some(true),
            Some(1)
        )
    );
    assert!(e["detail"]
        .as_str()
        .unwrap()
        .contains("bytes not read: sector(s) 0-15 of the page still hold the pre-read marker although the read reported success: read returned wrong data, recovered on retry 1"));
}

#[test]
fn stop_on_error_stops_the_run() {
    let d = tempfile::tempdir().unwrap();
    let cfg = fault_cfg(d.path(), true);
    let (code, v) = run(
        d.path(),
        &cfg,
        &[
            "--inject",
            "bit-flip:file=1,page=10,skip=1",
            "--retries",
            "1",
        ],
    );
    assert_eq!(code, 3);
    assert_eq!(v["stopped_on_error"], true);
    assert_eq!(v["interrupted"], false);
    assert!(v["cycles"].as_u64().unwrap() < 2);
}

#[test]
fn corruption_behind_the_simulators_back_is_detected() {
    use std::os::unix::fs::FileExt;
    let d = tempfile::tempdir().unwrap();
    let cfg = ini(
        d.path(),
        "TestCycleDuration=4\nStopOnError=FALSE",
        "[RandomUser]\nUserCount=1\nRandomUserReadWriteRatio=0\n[BulkUpdateUser]\nUserCount=0\n",
        "Increment=0\nShrinkable=FALSE",
    );
    let child = iosim()
        .args(["sim", "-q", "-o", "json", "--config"])
        .arg(&cfg)
        .arg("--log")
        .arg(d.path().join("errors.jsonl"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the initial checkpoint has written every page (the page
    // images carry the magic "IOSP"), then damage pages 100 and 700.
    let data = d.path().join("sim.mdx");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let f = loop {
        std::thread::sleep(Duration::from_millis(100));
        if let Ok(f) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&data)
        {
            let mut b = [0u8; 4];
            if f.read_at(&mut b, 1023 * 8192).is_ok() && &b == b"IOSP" {
                break f;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the simulator never formatted its file"
        );
    };
    std::thread::sleep(Duration::from_millis(300));
    let mut b = [0u8; 1];
    f.read_at(&mut b, 100 * 8192 + 4000).unwrap();
    f.write_at(&[b[0] ^ 0x10], 100 * 8192 + 4000).unwrap();
    // Page 700 gets page 701's image: a misdirected write done by "the storage".
    let mut img = vec![0u8; 8192];
    f.read_at(&mut img, 701 * 8192).unwrap();
    f.write_at(&img, 700 * 8192).unwrap();
    // Page 500 gets its own image as another run (another seed) wrote it:
    // this run's write is not there.
    let id = iosim::verify::PageId {
        file_id: 1,
        page: 500,
        generation: 1,
    };
    iosim::verify::build_page(&mut img, 4242, id, 0);
    f.write_at(&img, 500 * 8192).unwrap();
    f.sync_all().unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(3));
    let errs = v["errors"]["first"].as_array().unwrap();
    assert!(
        errs.iter()
            .any(|e| e["class"] == "checksum_mismatch" && e["page"] == 100),
        "{errs:#?}"
    );
    assert!(
        errs.iter()
            .any(|e| e["class"] == "misdirected" && e["page"] == 700),
        "{errs:#?}"
    );
    let foreign: Vec<&Value> = errs.iter().filter(|e| e["page"] == 500).collect();
    assert!(!foreign.is_empty(), "{errs:#?}");
    for e in foreign {
        assert_eq!(e["class"], "stale_read", "{e:#}");
        let detail = e["detail"].as_str().unwrap();
        assert!(
            detail.starts_with("the page holds generation 1 written by another run (payload seed 0x")
                && detail.contains("): lost write, the storage does not return the last acknowledged write (every one of 15 retries failed too)"),
            "{detail}"
        );
    }
    assert!(
        errs.iter()
            .all(|e| e["page"] == 100 || e["page"] == 700 || e["page"] == 500),
        "{errs:#?}"
    );
}

#[test]
fn toml_config_and_unknown_keys() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("sim.toml");
    std::fs::write(
        &p,
        format!(
            "[config]\ntest_cycle_duration = 1\nmax_memory_mb = 16\ncache_hit_ratio = 50\nfrobnicate = 1\n\
             [random_user]\nuser_count = 1\n[[file]]\nfile_name = \"{d}/a.mdx\"\ninitial_size = 4\n\
             [[file]]\nfile_name = \"{d}/a.ldx\"\ninitial_size = 2\nlog_file = true\n",
            d = d.path().display()
        ),
    )
    .unwrap();
    let (code, v) = run(d.path(), &p, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["errors"]["count"], 0);
    assert_eq!(v["config"]["cache_hit_ratio"], 0.5);
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("frobnicate")));
}

#[test]
fn no_config_runs_the_default_in_the_current_directory_and_prints_sqliosim_summary() {
    let d = tempfile::tempdir().unwrap();
    let out = iosim()
        .current_dir(d.path())
        .args(["sim", "--size", "8", "--duration", "1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("********** Final Summary for file sqliosim.mdx **********"),
        "{text}"
    );
    assert!(text.contains("Target IO Duration (ms) = 100, Running Average IO Duration (ms) = "));
    assert!(
        text.contains("Reads = ")
            && text.contains("Scatter Reads = ")
            && text.contains("Gather Writes = ")
            && text.contains("Total IO Time (ms) = ")
    );
    assert!(text.contains("Errors: 0"));
    assert!(d.path().join("sqliosim.mdx").exists() && d.path().join("sqliosim.ldx").exists());
    // SQLIOSim's File Attributes fields in its order, iosim's after them.
    assert!(
        text.contains("File Attributes: Compression = No, Encryption = No, Sparse = No, Kind = data, Device = No"),
        "{text}"
    );
    // SQLIOSim's default error log: sqliosim.log.xml, an XML document with no
    // errors and, as SQLIOSim writes it, each file's final summary (an INFO
    // entry a line).
    let log_path = d.path().join("sqliosim.log.xml");
    let log = std::fs::read_to_string(&log_path).unwrap();
    let doc = roxmltree::Document::parse(&log).unwrap_or_else(|e| panic!("{e}\n{log}"));
    assert_eq!(doc.root_element().tag_name().name(), "LOG");
    assert!(log.contains("<?xml-stylesheet type=\"text/xsl\" href=\"ErrorLog.xslt\"?>"));
    // XenRT's reader (class SQLIOSim, method runViaDaemon, in
    // https://github.com/gagomes/xenrt's workloads), transliterated to
    // Python 3: the first EXTENDED_DESCRIPTION starting "Target IO Duration"
    // gives its average I/O duration, throttle count and request blocks,
    // then every ENTRY of TYPE ERROR fails the test.
    let xenrt = r#"
import re, sys, xml.dom.minidom
dom = xml.dom.minidom.parse(sys.argv[1])
for desc in dom.getElementsByTagName("EXTENDED_DESCRIPTION"):
    if desc.childNodes[0].data.startswith("Target IO Duration"):
        m = re.match(r"Target IO Duration \(ms\) = (\d+), Running " +
                     r"Average IO Duration \(ms\) = (\d+), Number of " +
                     r"times IO throttled = (\d+), IO request blocks " +
                     r"= (\d+)", desc.childNodes[0].data)
        print(m.group(2), m.group(3), m.group(4))
        break
errors = [e for e in dom.getElementsByTagName("ENTRY") if e.attributes['TYPE'].value == "ERROR"]
print(len(errors))
"#;
    let py = Command::new("python3")
        .arg("-c")
        .arg(xenrt)
        .arg(&log_path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&py.stdout);
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let summary_line = text
        .lines()
        .find(|l| l.starts_with("Target IO Duration (ms) = "))
        .unwrap();
    let fields: Vec<&str> = summary_line
        .split(", ")
        .map(|f| f.rsplit(" = ").next().unwrap())
        .collect();
    assert_eq!(
        said,
        format!("{} {} {}\n0\n", fields[1], fields[2], fields[3]),
        "XenRT's reader on the log, against the printed summary: {summary_line}\n{log}"
    );
    // The layout is pinned: numbers, times and thread ids vary, the rest not.
    check_snapshot("log_xml", &digits_as_n(&log));
}

/// `text` with every run of digits written `N`.
fn digits_as_n(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('N') {
            out.push('N');
        }
    }
    out
}

/// Pins `got` as tests/snapshots/sim__NAME.snap (insta: review a change with
/// `cargo insta review`; a change to SQLIOSim's log layout must be deliberate,
/// docs/sim.md says why each part is there).
fn check_snapshot(name: &str, got: &str) {
    insta::with_settings!({snapshot_path => "snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(format!("sim__{name}"), got);
    });
}

/// The error log in SQLIOSim's XML structure: one ERROR entry per error, an INFO
/// entry for each dump file, all in a well-formed document.
#[test]
fn error_log_is_sqliosims_xml() {
    let d = tempfile::tempdir().unwrap();
    let cfg = fault_cfg(d.path(), false);
    let log = d.path().join("sqliosim.log.xml");
    let out = iosim()
        .args(["sim", "-q", "-o", "json", "--config"])
        .arg(&cfg)
        .arg("--log")
        .arg(&log)
        .args([
            "--inject",
            "bit-flip:file=1,page=300,skip=1",
            "--retries",
            "3",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let total = v["errors"]["count"].as_u64().unwrap();
    assert!(total > 0);
    let text = std::fs::read_to_string(&log).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let entries: Vec<_> = doc
        .root_element()
        .children()
        .filter(|n| n.is_element() && n.has_tag_name("ENTRY"))
        .collect();
    let errors: Vec<_> = entries
        .iter()
        .filter(|e| e.attribute("TYPE") == Some("ERROR"))
        .collect();
    assert_eq!(errors.len() as u64, total, "{text}");
    for e in &errors {
        for a in [
            "TIME", "DATE", "TID", "User", "File", "Line", "Func", "HRESULT", "SYSTEXT",
        ] {
            assert!(e.attribute(a).is_some(), "{a} missing: {text}");
        }
        assert_eq!(e.attribute("HRESULT"), Some("0x80070467"));
        assert_eq!(e.attribute("Func"), Some("CBUF::ValidateBuffer"));
        let desc = e
            .children()
            .find(|c| c.has_tag_name("EXTENDED_DESCRIPTION"))
            .unwrap();
        let desc = desc.text().unwrap();
        assert!(
            desc.starts_with("Buffer validation failed on ")
                && desc.contains(" Page: 300, offset 0x"),
            "{desc}"
        );
    }
    let dumps = entries
        .iter()
        .filter(|e| e.attribute("TYPE") == Some("INFO"))
        .filter_map(|e| {
            e.children()
                .find(|c| c.has_tag_name("EXTENDED_DESCRIPTION"))
        })
        .filter_map(|c| c.text())
        .filter_map(|t| t.strip_prefix("Dump file successfully written: "))
        .collect::<Vec<_>>();
    assert!(!dumps.is_empty(), "{text}");
    assert!(Path::new(dumps[0]).exists());
    // A published consumer: XenRT, Citrix's test harness for Xen (a public copy at
    // https://github.com/gagomes/xenrt), loads VMs with SQLIOSim in its workloads
    // module (class SQLIOSim, method check), which parses the log with
    // Python's xml.dom.minidom, walks every ENTRY and fails on each TYPE='ERROR'
    // entry's EXTENDED_DESCRIPTION text. Its logic, transliterated to Python 3:
    let consumer = r#"
import sys, xml.dom.minidom
dom = xml.dom.minidom.parse(sys.argv[1])
found = []
for entry in dom.getElementsByTagName("ENTRY"):
    if entry.attributes['TYPE'].value == "ERROR":
        for child in entry.childNodes:
            if isinstance(child, xml.dom.minidom.Element):
                if child.tagName == "EXTENDED_DESCRIPTION":
                    found.append(child.firstChild.data)
print(len(found))
for f in found:
    print(f)
"#;
    let py = Command::new("python3")
        .arg("-c")
        .arg(consumer)
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let py = String::from_utf8(py.stdout).unwrap();
    let mut lines = py.lines();
    assert_eq!(lines.next().unwrap().parse::<u64>().unwrap(), total, "{py}");
    assert!(
        lines.all(|l| l.starts_with("Buffer validation failed on ")),
        "{py}"
    );
}

#[test]
fn refuses_foreign_files() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("sim.mdx"), b"precious").unwrap();
    let cfg = ini(d.path(), "DeleteFilesAtStartup=FALSE", "", "");
    let out = iosim()
        .args(["sim", "-q", "--config"])
        .arg(&cfg)
        .arg("--log")
        .arg(d.path().join("e.jsonl"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-destroy"));
    assert_eq!(
        std::fs::read(d.path().join("sim.mdx")).unwrap(),
        b"precious"
    );
}

/// Detaches a loop device on drop.
struct Loop(String);
impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
fn clean_run_and_fault_on_a_loop_device() {
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("disk.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    let out = match Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&img)
        .output()
    {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            crate::common::skip(&format!(
                "no loop device ({})",
                String::from_utf8_lossy(&o.stderr).trim()
            ));
            return;
        }
        Err(e) => {
            crate::common::skip(&format!("losetup unavailable ({e})"));
            return;
        }
    };
    let dev = Loop(String::from_utf8_lossy(&out.stdout).trim().to_string());
    let text = format!(
        "[CONFIG]\nTestCycles=1\nTestCycleDuration=1\nStopOnError=FALSE\n[RandomUser]\nUserCount=2\n\
         [File1]\nFileName={}\nInitialSize=16\nIncrement=4\n[File2]\nFileName={}/l.ldx\nInitialSize=4\nLogFile=TRUE\n",
        dev.0,
        d.path().display()
    );
    let cfg = d.path().join("loop.ini");
    std::fs::write(&cfg, text).unwrap();
    // Without --allow-destroy the device is refused.
    let refused = iosim()
        .args(["sim", "-q", "--config"])
        .arg(&cfg)
        .arg("--log")
        .arg(d.path().join("e.jsonl"))
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--allow-destroy"));
    let (code, v) = run(d.path(), &cfg, &["--allow-destroy"]);
    assert_eq!(v["errors"]["count"], 0, "{:#}", v["errors"]);
    assert_eq!(code, 0);
    assert_eq!(file(&v, 1)["device"], true);
    assert_eq!(file(&v, 1)["size_bytes"], 16 << 20);
    let (code, v) = run(
        d.path(),
        &cfg,
        &[
            "--allow-destroy",
            "--seed",
            "777",
            "--inject",
            "lost-write:file=1,page=77",
        ],
    );
    assert_eq!(code, 3);
    assert!(count(&v, "stale_read") > 0, "{:#}", v["errors"]);
    assert!(v["errors"]["first"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["page"] == 77));
    drop(dev);
}

#[test]
fn ctrl_c_ends_an_endless_run_with_a_report() {
    let d = tempfile::tempdir().unwrap();
    let cfg = ini(
        d.path(),
        "TestCycles=0\nTestCycleDuration=1",
        "[RandomUser]\nUserCount=1\n",
        "",
    );
    let child = iosim()
        .args(["sim", "-q", "-o", "json", "--config"])
        .arg(&cfg)
        .arg("--log")
        .arg(d.path().join("errors.jsonl"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(3500));
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["errors"]["count"], 0);
    assert!(v["cycles"].as_u64().unwrap() >= 1, "{}", v["cycles"]);
}

#[test]
fn fault_in_the_log_is_found_by_the_log_audit() {
    let d = tempfile::tempdir().unwrap();
    let cfg = ini(
        d.path(),
        "TestCycleDuration=1\nStopOnError=FALSE",
        "[RandomUser]\nUserCount=1\n",
        "",
    );
    let (code, v) = run(d.path(), &cfg, &["--inject", "bit-flip:file=2,count=1"]);
    assert_eq!(code, 3);
    assert_eq!(v["errors"]["count"], 1, "{:#}", v["errors"]);
    let e = &v["errors"]["first"][0];
    assert_eq!(
        (
            e["class"].as_str(),
            e["file_id"].as_u64(),
            e["user"].as_str()
        ),
        (Some("checksum_mismatch"), Some(2), Some("FullAudit#1"))
    );
    assert!(
        e["detail"].as_str().unwrap().starts_with("log block 1 "),
        "{e:#}"
    );
}

#[test]
fn stalled_io_is_reported_as_outstanding() {
    // A device that holds one I/O for 2.5 s, with the 15 s threshold lowered to 1 s.
    let d = tempfile::tempdir().unwrap();
    let cfg = fault_cfg(d.path(), false);
    let (code, v) = run(
        d.path(),
        &cfg,
        &[
            "--long-io",
            "1",
            "--inject",
            "delay:file=1,page=5,ms=2500,count=1",
        ],
    );
    assert_eq!(code, 0, "a slow I/O is not a data error");
    assert!(
        v["long_io_warnings"].as_u64().unwrap() >= 1,
        "{:#}",
        v["warnings"]
    );
    assert!(v["warnings"].as_array().unwrap().iter().any(|w| w
        .as_str()
        .unwrap()
        .contains("IO requests are outstanding for more than 1 sec.")));
    assert!(
        file(&v, 1)["stats"]["total"]["latency_us"]["max"]
            .as_f64()
            .unwrap()
            >= 2_500_000.0
    );
    // Counted from the file's latency histograms: one I/O over 1 s, none over 15 s.
    assert_eq!(file(&v, 1)["slow_ios"]["over_1s"], 1, "{:#}", file(&v, 1));
    assert_eq!(file(&v, 1)["slow_ios"]["over_15s"], 0);
    assert_eq!(file(&v, 2)["slow_ios"]["over_1s"], 0);
}

#[test]
fn simulations_are_kept_in_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    // In the temporary directory: the default error log goes to the current directory.
    let out = iosim()
        .current_dir(dir.path())
        .args(["sim", "--dir"])
        .arg(dir.path())
        .args(["--duration", "1", "--size", "8", "--quiet", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let h = iosim().args(["history", "--db"]).arg(&db).output().unwrap();
    let text = String::from_utf8_lossy(&h.stdout);
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().nth(1) == Some("sim")),
        "{text}"
    );
}

/// `--dir data=A --dir log=B`: each file in its directory, each written and
/// verified; the run says what it leaves on disk and where; with
/// DeleteFilesAtShutdown the files are gone and the report says so.
#[test]
fn dirs_take_roles_every_file_is_verified_and_the_leftovers_are_named() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let sim = |extra: &[&str]| {
        let out = iosim()
            .current_dir(a.path())
            .arg("sim")
            .arg("--dir")
            .arg(format!("data={}", a.path().display()))
            .arg("--dir")
            .arg(format!("log={}", b.path().display()))
            .args(["--duration", "1", "--size", "8", "--no-save", "-o", "json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        (v, String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (v, err) = sim(&[]);
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    let data = files.iter().find(|f| f["kind"] == "data").unwrap();
    let log = files.iter().find(|f| f["kind"] == "log").unwrap();
    assert!(data["path"]
        .as_str()
        .unwrap()
        .starts_with(a.path().to_str().unwrap()));
    assert!(log["path"]
        .as_str()
        .unwrap()
        .starts_with(b.path().to_str().unwrap()));
    assert!(log["writes"].as_u64().unwrap() + log["gather_writes"].as_u64().unwrap() > 0);
    assert!(v["log_blocks_verified"].as_u64().unwrap() > 0);
    assert!(v["pages_verified"].as_u64().unwrap() > 0);
    let note = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .find(|n| n.contains("left on disk"))
        .unwrap_or_else(|| panic!("no left-on-disk note: {}", v["notes"]));
    assert!(note.contains(data["path"].as_str().unwrap()), "{note}");
    assert!(note.contains(log["path"].as_str().unwrap()), "{note}");
    assert!(note.contains("DeleteFilesAtShutdown=TRUE"), "{note}");
    assert!(err.contains("left on disk"), "{err}");
    assert!(Path::new(data["path"].as_str().unwrap()).exists());

    // DeleteFilesAtShutdown=TRUE: the files are removed, and the note says so.
    let cfg = a.path().join("del.ini");
    std::fs::write(&cfg, "[CONFIG]\nDeleteFilesAtShutdown=TRUE\n").unwrap();
    let (v, _) = sim(&["--config", cfg.to_str().unwrap()]);
    let note = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .find(|n| n.contains("left on disk"))
        .unwrap()
        .to_string();
    assert!(note.contains("removed at shutdown"), "{note}");
    for f in v["files"].as_array().unwrap() {
        assert!(!Path::new(f["path"].as_str().unwrap()).exists(), "{f}");
    }
}

/// Runs `iosim sim ARGS` in `dir` with text output; returns (exit code, stdout, stderr).
fn sim_text(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = iosim()
        .current_dir(dir)
        .arg("sim")
        .args(args)
        .arg("--no-save")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 23: `RollbackChance=NaN` passed the parser and a RandomUser panicked
/// on it (`inf` ran as 100%). A non-finite number is refused before any file
/// is made, with the key, its line and what to give instead.
#[test]
fn non_finite_percentage_is_refused_naming_the_key() {
    for v in ["NaN", "inf", "-inf"] {
        let d = tempfile::tempdir().unwrap();
        let cfg = ini(
            d.path(),
            "",
            &format!("[RandomUser]\nUserCount=1\nRollbackChance={v}\n"),
            "",
        );
        let (code, out, err) = sim_text(d.path(), &["--config", cfg.to_str().unwrap()]);
        assert_eq!(code, 1, "{v}: {out}\n{err}");
        assert!(
            err.contains(&format!(
                "sim.cfg.ini:8: RollbackChance={v} is not a finite number: give hundredths of a percent from 0 to 10000 (100 = 1%)"
            )),
            "{v}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(out.is_empty(), "{out}");
        // Refused before anything was written: only the configuration is there.
        let left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["sim.cfg.ini"], "{v}");
    }
    // TOML (percent there): `nan` is a TOML float.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("sim.toml");
    std::fs::write(
        &p,
        format!(
            "[random_user]\nrollback_chance = nan\n[[file]]\nfile_name = \"{d}/a.mdx\"\ninitial_size = 4\n\
             [[file]]\nfile_name = \"{d}/a.ldx\"\ninitial_size = 2\nlog_file = true\n",
            d = d.path().display()
        ),
    )
    .unwrap();
    let (code, _, err) = sim_text(d.path(), &["--config", p.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("rollback_chance = NaN is not a finite number: give a percentage from 0 to 100 (in [random_user])"),
        "{err}"
    );
    assert!(!d.path().join("a.mdx").exists());
}

/// Issue 23: `--dir FILE` said the directory did not exist. It says what the
/// path is, which directory to give, and how to name files; the file is untouched.
#[test]
fn dir_that_is_a_file_says_so_and_touches_nothing() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("data.mdf");
    std::fs::write(&f, b"precious").unwrap();
    let (code, out, err) = sim_text(d.path(), &["--dir", f.to_str().unwrap(), "--size", "8"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains(&format!(
            "--dir: '{}' is a regular file, not a directory: give the directory that should hold the files, such as '{}'; to name the files themselves (a file or a block device), give them as FileName= in a --config file",
            f.display(),
            d.path().display()
        )),
        "{err}"
    );
    assert!(!err.contains("does not exist"), "{err}");
    assert_eq!(std::fs::read(&f).unwrap(), b"precious");
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["data.mdf"]);
}

/// Issue 23: `--inject bit-flip` without `file=` failed with "file=0 does not
/// name a file". Without file= the fault goes to the first data file, and the
/// run says so; an explicit file=0 is refused on the command line.
#[test]
fn inject_without_file_goes_to_the_first_data_file() {
    let d = tempfile::tempdir().unwrap();
    let cfg = fault_cfg(d.path(), false);
    let out = iosim()
        .args(["sim", "-o", "json", "--config"])
        .arg(&cfg)
        .arg("--log")
        .arg(d.path().join("errors.jsonl"))
        .args(["--inject", "bit-flip:page=300,skip=1", "--retries", "3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(count(&v, "checksum_mismatch") > 0, "{:#}", v["errors"]);
    for e in v["errors"]["first"].as_array().unwrap() {
        assert_eq!(e["file_id"], 1, "{e:#}");
        assert_eq!(e["page"], 300, "{e:#}");
    }
    let said = format!(
        "--inject bit-flip: no file= given; injecting into [File1] {}/sim.mdx (the first data file)",
        d.path().display()
    );
    assert!(err.contains(&said), "{err}");
    assert!(
        v["notes"].as_array().unwrap().iter().any(|n| n == &said),
        "{}",
        v["notes"]
    );
    // file=0 is refused by the option's parser (exit 2), before any file is made.
    let e = tempfile::tempdir().unwrap();
    let (code, _, err) = sim_text(e.path(), &["--inject", "bit-flip:file=0"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("file= is the [FileN] number, counting from 1, not '0'"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(e.path()).unwrap().count(), 0);
    // The help says what happens without file=.
    let (_, help, _) = sim_text(e.path(), &["--help"]);
    assert!(help.contains("by default the first data file"), "{help}");
}

/// Issue 23: a steady fault wrote a dump file for every error (142 in 3 s).
/// --max-dumps caps them; the run warns once and the summary counts the
/// errors that got none.
#[test]
fn dump_files_are_capped_and_the_rest_counted() {
    let d = tempfile::tempdir().unwrap();
    let cfg = fault_cfg(d.path(), false);
    let log = d.path().join("errors.jsonl");
    let out = iosim()
        .args(["sim", "--no-save", "--config"])
        .arg(&cfg)
        .arg("--log")
        .arg(&log)
        .args([
            "--inject",
            "bit-flip:file=1",
            "--retries",
            "1",
            "--max-dumps",
            "3",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let dumps: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".dump"))
        .collect();
    assert_eq!(dumps.len(), 3, "{dumps:?}");
    // Every error is still logged; three of them name a dump file.
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() > 3, "a steady fault gives many errors");
    assert_eq!(lines.iter().filter(|l| l["dump"].is_string()).count(), 3);
    let skipped = lines.len() - 3;
    assert_eq!(
        err.matches("3 dump files written, the most --max-dumps allows: later errors are logged without a dump file (raise --max-dumps to keep more)")
            .count(),
        1,
        "warned once: {err}"
    );
    assert!(
        text.contains(&format!(
            "  dump files: 3 written beside the error log, {skipped} more not written (the --max-dumps limit)"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "3 dump file(s) beside the error log, no dump file for {skipped} more error(s) (--max-dumps 3)"
        )),
        "{text}"
    );
    // --max-dumps 0: none at all.
    let e = tempfile::tempdir().unwrap();
    let cfg = fault_cfg(e.path(), true);
    let out = iosim()
        .args(["sim", "-q", "-o", "json", "--no-save", "--config"])
        .arg(&cfg)
        .arg("--log")
        .arg(e.path().join("errors.jsonl"))
        .args(["--inject", "bit-flip:file=1", "--max-dumps", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["errors"]["dumps"], 0);
    assert_eq!(v["errors"]["dumps_not_written"], v["errors"]["count"]);
    assert!(std::fs::read_dir(e.path()).unwrap().all(|f| !f
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains(".dump")));
}

/// Issue 23: huge numbers. `SleepAfter=18446744073709551615` overflowed the
/// RandomUser's nanosecond deadline (a panic in debug builds); waits are
/// capped with a warning naming the key, and the run still ends on time.
#[test]
fn huge_waits_are_capped_and_the_run_ends_on_time() {
    let d = tempfile::tempdir().unwrap();
    let cfg = ini(
        d.path(),
        "TestCycleDuration=1\nSeed=18446744073709551615",
        "[RandomUser]\nUserCount=1\nSleepAfter=18446744073709551615\nRollbackChance=-0\n\
         [AuditUser]\nAuditDelay=1e30\n[ShrinkUser]\nMinShrinkInterval=1e30\nMaxShrinkInterval=1e30\n",
        "",
    );
    let started = std::time::Instant::now();
    let (code, v) = run(d.path(), &cfg, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert!(started.elapsed() < Duration::from_secs(120));
    assert_eq!(v["errors"]["count"], 0);
    assert_eq!(v["config"]["seed"], u64::MAX);
    assert_eq!(v["config"]["random"]["rollback_chance"], 0.0);
    let warnings = v["warnings"].to_string();
    for key in ["SleepAfter", "AuditDelay", "MinShrinkInterval"] {
        assert!(
            warnings.contains(&format!("{key}=18446744073709551615"))
                && warnings.contains("is above the longest wait iosim accepts (1000000000 s"),
            "{key}: {warnings}"
        );
    }
}
