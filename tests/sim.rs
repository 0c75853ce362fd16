//! `iosim sim` end to end: clean runs report no errors; every fault class,
//! injected under the simulator or done to its files behind its back, is
//! detected and classified with the right file and page.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

mod common;

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

/// Runs with one injected fault; checks that errors were found, that they
/// are all of `classes`, and that each names file 1 and one of `pages`.
fn fault_case(fault: &str, classes: &[&str], pages: &[u64]) -> (tempfile::TempDir, Value) {
    let d = tempfile::tempdir().unwrap();
    let cfg = fault_cfg(d.path(), false);
    let (code, v) = run(d.path(), &cfg, &["--inject", fault, "--retries", "3"]);
    assert_eq!(code, 3, "errors must give exit code 3");
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
    }
    // The JSON-lines log holds the same errors; dumps exist for data checks.
    let log = std::fs::read_to_string(d.path().join("errors.jsonl")).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len() as u64, total);
    let first = &lines[0];
    assert!(first["expected"]["generation"].as_u64().is_some());
    if let Some(dump) = first["dump"].as_str() {
        let t = std::fs::read_to_string(dump).unwrap();
        assert!(
            t.contains("EXPECTED (WRITE) IMAGE")
                && t.contains("RECEIVED (READ) IMAGE")
                && t.contains("DIFFERENCE")
        );
    }
    (d, v)
}

#[test]
fn fault_bit_flip_is_a_checksum_mismatch() {
    let (_d, v) = fault_case(
        "bit-flip:file=1,page=300,skip=1",
        &["checksum_mismatch"],
        &[300],
    );
    let e = &v["errors"]["first"][0];
    assert_eq!(e["recovered"], false);
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
    let (_d, v) = fault_case("torn:file=1,page=300,skip=1", &["torn_page"], &[300]);
    let detail = v["errors"]["first"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("generation 1 in sector(s) 8-15"),
        "{detail}"
    );
}

#[test]
fn fault_misdirected_write_is_found_at_both_pages() {
    // Page 300's second image lands on page 2 (already rewritten this cycle).
    let (_d, v) = fault_case(
        "misdirect:file=1,page=300,to=2,skip=1",
        &["misdirected", "stale_read"],
        &[2, 300],
    );
    assert!(count(&v, "misdirected") > 0 && count(&v, "stale_read") > 0);
    let m = v["errors"]["first"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["class"] == "misdirected")
        .unwrap();
    assert_eq!(m["page"], 2);
    assert_eq!(m["received"]["page"], 300);
}

#[test]
fn fault_lost_write_is_a_stale_read() {
    let (_d, v) = fault_case("lost-write:file=1,page=300,skip=1", &["stale_read"], &[300]);
    let e = &v["errors"]["first"][0];
    assert_eq!(e["received"]["generation"], 1);
    assert_eq!(e["expected"]["generation"], 2);
}

#[test]
fn fault_short_read_and_bytes_not_read() {
    let _ = fault_case("short-read:file=1,page=300", &["short_read"], &[300]);
    let (_d, v) = fault_case("not-read:file=1,page=300", &["short_read"], &[300]);
    assert!(v["errors"]["first"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("bytes not read"));
}

#[test]
fn fault_eio_is_an_io_error() {
    // EIO on reads of page 300 (and of the multi-page reads that cover it).
    let (_d, v) = fault_case(
        "eio:file=1,page=300,skip=1",
        &["io_error"],
        &(0..1024).collect::<Vec<_>>(),
    );
    assert!(v["errors"]["first"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["page"] == 300 && e["recovered"] == false));
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
            e["recovered"].as_bool(),
            e["retries"].as_u64()
        ),
        (Some(40), Some(true), Some(1))
    );
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
    assert!(
        errs.iter().all(|e| e["page"] == 100 || e["page"] == 700),
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
    // SQLIOSim's default error log: sqliosim.log.xml, an XML document (no entries here).
    let log = std::fs::read_to_string(d.path().join("sqliosim.log.xml")).unwrap();
    let doc = roxmltree::Document::parse(&log).unwrap_or_else(|e| panic!("{e}\n{log}"));
    assert_eq!(doc.root_element().tag_name().name(), "LOG");
    assert!(log.contains("<?xml-stylesheet type=\"text/xsl\" href=\"ErrorLog.xslt\"?>"));
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
            eprintln!(
                "skipped: no loop device ({})",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            return;
        }
        Err(e) => {
            eprintln!("skipped: losetup unavailable ({e})");
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
