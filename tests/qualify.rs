//! `iosim qualify` end to end on two loop devices (data and log) it creates
//! and detaches: the stages ran, the JSON document's shape, the HTML report
//! in headless Chromium (verdict section and every chart), and a log device
//! slowed by the kernel's block throttle (cgroup v1 blkio, 50 writes per
//! second) turns the log verdict to NOT FIT with the log-latency reason.
//!
//! The loop devices' backing files live in /dev/shm (tmpfs): a flush costs
//! nothing there, so the unthrottled log is fast and the only slowness the
//! second run sees is the throttle. No assertion depends on elapsed time.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use common::LoopDev;

/// A loop device over a file in /dev/shm (fast whatever the disk does), detached on drop.
fn shm_loop(size: u64) -> Option<LoopDev> {
    LoopDev::new_in(Path::new("/dev/shm"), size)
}

/// A blkio cgroup (v1) limiting writes to one device; removed on drop.
struct Throttle {
    dir: PathBuf,
}

impl Throttle {
    fn new(dev: &LoopDev, write_iops: u32) -> Option<Throttle> {
        let root = Path::new("/sys/fs/cgroup/blkio");
        if !root.join("blkio.throttle.write_iops_device").exists() {
            println!("SKIPPED: no cgroup v1 blkio throttle at {}", root.display());
            return None;
        }
        let dir = root.join(format!("iosim-qualify-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        std::fs::write(
            dir.join("blkio.throttle.write_iops_device"),
            format!("{} {write_iops}", dev.major_minor()),
        )
        .ok()?;
        Some(Throttle { dir })
    }

    /// `iosim ARGS` started inside the cgroup.
    fn command(&self, args: &[String]) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg("echo $$ > \"$0\" && exec \"$@\"")
            .arg(self.dir.join("cgroup.procs"))
            .arg(env!("CARGO_BIN_EXE_iosim"))
            .args(args)
            .env("XDG_DATA_HOME", std::env::temp_dir().join("iosim-test-xdg"));
        c
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn args(data: &LoopDev, log: &LoopDev, dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "qualify",
        "--data",
        data.dev.to_str().unwrap(),
        "--log",
        log.dev.to_str().unwrap(),
        "--time",
        "30s",
        "--allow-destroy",
        "--db",
        dir.join("history.db").to_str().unwrap(),
        "-o",
        "json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn run(mut cmd: Command) -> (Value, String) {
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "iosim qualify failed: {err}");
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {err}"));
    (doc, err)
}

fn role<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["role"] == name)
        .unwrap_or_else(|| panic!("no verdict for {name}"))
}

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser"].iter().find_map(|n| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join(n))
            .find(|p| p.is_file())
    })
}

fn browser(bin: &Path, profile: &Path) -> Command {
    let mut c = Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--virtual-time-budget=3000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

const CHARTS: [&str; 7] = [
    "quick",
    "sweep-qd-iops",
    "sweep-qd-latency",
    "sweep-threads-iops",
    "sweep-threads-latency",
    "profiles",
    "sim",
];

fn check_document(doc: &Value, err: &str) {
    assert_eq!(doc["kind"], "qualify");
    assert_eq!(doc["schema_version"], 1);
    for v in ["FIT", "FIT WITH WARNINGS", "NOT FIT"] {
        if doc["overall"] == v {
            return check_stages(doc, err);
        }
    }
    panic!("overall verdict {:?}", doc["overall"]);
}

fn check_stages(doc: &Value, err: &str) {
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
    for s in &doc["stages"].as_array().unwrap()[..4] {
        assert!(s["runs"].as_u64().unwrap() > 0, "{s}");
    }
    for i in 1..=5 {
        assert!(
            err.contains(&format!("stage {i}/5")),
            "progress lines: {err}"
        );
    }
    assert!(err.contains("set-up took"), "{err}");
    assert_eq!(
        doc["quick"].as_array().unwrap().len(),
        10,
        "5 corners x 2 locations"
    );
    let sweeps = doc["sweeps"].as_array().unwrap();
    assert_eq!(sweeps.len(), 4, "qd and threads on data and log");
    for s in sweeps {
        assert!(s["result"]["repeat"].as_u64().unwrap() >= 2, "repetitions");
        assert!(s["result"]["points"].as_array().unwrap().len() >= 3);
    }
    let profiles: Vec<&str> = doc["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["profile"].as_str().unwrap())
        .collect();
    for p in [
        "oltp-with-log",
        "log-writer",
        "checkpoint",
        "read-ahead",
        "bulk-insert",
    ] {
        assert!(profiles.contains(&p), "{p} missing from {profiles:?}");
    }
    let sim = &doc["sim"];
    assert!(sim["cycles"].as_u64().unwrap() >= 1, "{sim}");
    assert!(sim["pages_verified"].as_u64().unwrap() > 0);
    assert_eq!(sim["errors"], 0);
    let kinds: Vec<(&str, &str)> = sim["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap(), f["role"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [("data", "data"), ("log", "log")],
        "data file on --data, log on --log"
    );
    for v in doc["verdicts"].as_array().unwrap() {
        for r in v["reasons"].as_array().unwrap() {
            for k in ["measured", "limit", "rule", "source_tag", "url"] {
                assert!(!r[k].as_str().unwrap().is_empty(), "{r}");
            }
        }
    }
    assert!(doc["left_on_disk"].as_array().unwrap().is_empty());
    // The threads sweeps fit the cores, and say so where they were cut.
    let cores = std::thread::available_parallelism().unwrap().get();
    let notes = doc["notes"].to_string();
    assert_eq!(
        cores < 4,
        notes.contains("the data threads sweep stops at"),
        "{cores} cores: {notes}"
    );
    // CPU findings name their cause and carry who used the CPU.
    for c in doc["checks"].as_array().unwrap() {
        let code = c["code"].as_str().unwrap();
        assert_ne!(code, "cpu_bound", "the single CPU code is gone: {c}");
        if code.starts_with("cpu_") {
            assert_eq!(c["cpu"]["cores"].as_u64(), Some(cores as u64), "{c}");
            assert_eq!(c["untrusted"], code != "cpu_busy_io_path", "{c}");
        }
    }
}

fn check_html(html: &Path, dir: &Path) {
    let text = std::fs::read_to_string(html).unwrap();
    let verdict = text.find("id=\"verdict\"").expect("verdict section");
    let evidence = text.find("id=\"evidence\"").expect("evidence section");
    assert!(verdict < evidence, "the verdict comes first");
    for id in CHARTS {
        assert!(
            text.contains(&format!("data-chart=\"{id}\"")),
            "chart {id} missing"
        );
    }
    let Some(bin) = chromium() else {
        println!("SKIPPED (browser part): chromium is not installed");
        return;
    };
    let url = format!("file://{}", html.display());
    let o = browser(&bin, &dir.join("p1"))
        .args(["--dump-dom", &url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dom = String::from_utf8_lossy(&o.stdout);
    assert!(dom.contains("id=\"verdict\""));
    for id in CHARTS {
        let at = dom
            .find(&format!("data-chart=\"{id}\""))
            .unwrap_or_else(|| panic!("chart {id} not in the DOM"));
        let fig = &dom[at..dom[at..].find("</figure>").map_or(dom.len(), |e| at + e)];
        assert!(fig.contains("class=\"series\""), "chart {id} has no data");
    }
    let shot = dir.join("shot.png");
    let o = browser(&bin, &dir.join("p2"))
        .args(["--window-size=1300,3000"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let png = resvg::tiny_skia::Pixmap::load_png(&shot).unwrap();
    let inked = png
        .pixels()
        .iter()
        .filter(|p| p.red() < 235 || p.green() < 235 || p.blue() < 235)
        .count();
    let share = inked as f64 / png.pixels().len() as f64;
    println!("screenshot: {:.1}% inked", share * 100.0);
    assert!(share > 0.02, "the screenshot is nearly blank");
    if let Ok(keep) = std::env::var("IOSIM_KEEP_QUALIFY_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

#[test]
fn qualify_two_loop_devices_and_a_throttled_log() {
    let (Some(data), Some(log)) = (shm_loop(192 << 20), shm_loop(96 << 20)) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let html = d.path().join("report.html");

    // 1. Both devices at full speed.
    let mut cmd = common::iosim();
    cmd.args(args(
        &data,
        &log,
        d.path(),
        &["--html", html.to_str().unwrap()],
    ));
    let (doc, err) = run(cmd);
    check_document(&doc, &err);
    assert!(
        role(&doc, "log")["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["rule"] != "log-latency" || r["level"] != "fail"),
        "a tmpfs-backed log is fast: {}",
        role(&doc, "log")
    );
    check_html(&html, d.path());
    let first_id = err
        .lines()
        .find_map(|l| l.strip_prefix("saved as run "))
        .and_then(|l| l.split_whitespace().next())
        .expect("stored in the history")
        .to_string();

    // 2. The log device throttled to 50 writes a second: commits wait ~20 ms.
    let Some(throttle) = Throttle::new(&log, 50) else {
        return;
    };
    let (slow, err) =
        run(throttle.command(&args(&data, &log, d.path(), &["--baseline", "latest"])));
    drop(throttle);
    check_document(&slow, &err);
    let lv = role(&slow, "log");
    assert_eq!(lv["verdict"], "NOT FIT", "{lv}");
    let reason = lv["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["rule"] == "log-latency"
                && r["level"] == "fail"
                && r["measured"]
                    .as_str()
                    .unwrap()
                    .starts_with("log-writer commit-4k write mean")
        })
        .unwrap_or_else(|| panic!("no log-latency failure of the commits: {lv}"));
    assert_eq!(reason["limit"], "above 4 ms for log writes");
    assert_eq!(reason["source_tag"], "[MS-2012]");
    assert_eq!(slow["overall"], "NOT FIT");
    // The data device was not throttled: no log rule judges it.
    assert!(role(&slow, "data")["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["rule"] != "log-latency"));
    // --baseline latest compared with the first qualification.
    assert_eq!(slow["baseline"]["id"].to_string(), first_id);
    assert!(slow["baseline"]["roles"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r[0] == "log" && r[2] == "NOT FIT"));
}

#[test]
fn bad_input_fails_before_measuring() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h.db");
    let out = common::iosim()
        .args(["qualify", "--data"])
        .arg(d.path())
        .args(["--time", "30s", "--baseline", "latest", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no history database"), "{err}");
    assert!(
        !d.path().join("iosim-qualify-data.dat").exists(),
        "nothing was created before the baseline was resolved"
    );
    let out = common::iosim()
        .args(["qualify", "--data"])
        .arg(d.path().join("missing"))
        .args(["--time", "30s", "--no-save"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing"));
    let out = common::iosim()
        .args(["qualify", "--data"])
        .arg(d.path())
        .args(["--time", "2s", "--no-save"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 10s"));
}

/// Issue 23: `--size 0` created two empty test files, left them behind and
/// then blamed "one block of 1048576 bytes" and `--length`/`--bs`, which
/// qualify does not have. It is refused before anything is created, naming
/// --size and the smallest that works.
#[test]
fn a_size_too_small_for_qualify_is_refused_before_any_file_is_made() {
    let dir = tempfile::tempdir().unwrap();
    for size in ["0", "1000K"] {
        let out = common::iosim()
            .args(["qualify", "--data"])
            .arg(dir.path())
            .args(["--size", size, "--time", "10s", "--no-save"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!("--size {size}: each test file"))
                && err.contains("give --size 1M or more"),
            "{err}"
        );
        assert!(
            !err.contains("--length") && !err.contains("1048576"),
            "{err}"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{size}: left {left:?}");
    }
}
