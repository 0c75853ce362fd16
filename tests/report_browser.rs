//! The HTML report in a real headless browser (Debian's chromium): it loads
//! with no console errors, the page's own check finds every chart drawn, and
//! the screenshot is not blank. Skips, saying why, when chromium is missing.
//! Also checks `--svg`/`--png` single charts (no browser needed).

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

fn iosim(dir: &Path, args: &[&str]) -> std::process::Output {
    let o = Command::cargo_bin("iosim")
        .unwrap()
        .args(args)
        .current_dir(dir)
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "iosim {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// A history with a queue-depth sweep on the null engine and one real file run.
fn history(dir: &Path) -> (PathBuf, Vec<String>) {
    let db = dir.join("h.db");
    let dbs = db.to_str().unwrap();
    let mut ids = Vec::new();
    let mut save = |o: std::process::Output| {
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        let l = e.lines().find(|l| l.starts_with("saved as run ")).unwrap();
        ids.push(l.split_whitespace().nth(3).unwrap().to_string());
    };
    for qd in ["1", "2", "4", "8"] {
        save(iosim(
            dir,
            &[
                "run",
                "--engine",
                "null",
                "--size",
                "1M",
                "-d",
                "1s",
                "--interval",
                "250ms",
                "--qd",
                qd,
                "-q",
                "--db",
                dbs,
                "--label",
                "sweep",
            ],
        ));
    }
    let file = dir.join("t.dat");
    save(iosim(
        dir,
        &[
            "run",
            file.to_str().unwrap(),
            "--size",
            "8M",
            "--engine",
            "sync",
            "--cache",
            "buffered",
            "--rw",
            "randrw",
            "-d",
            "1s",
            "--interval",
            "250ms",
            "-q",
            "--db",
            dbs,
            "--label",
            "file",
        ],
    ));
    (db, ids)
}

fn load_png(p: &Path) -> resvg::tiny_skia::Pixmap {
    resvg::tiny_skia::Pixmap::load_png(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Share of non-white pixels and number of distinct colours.
fn ink(p: &resvg::tiny_skia::Pixmap) -> (f64, usize) {
    let mut colours = std::collections::HashSet::new();
    let mut inked = 0usize;
    for px in p.pixels() {
        let c = (px.red(), px.green(), px.blue());
        if c.0 < 235 || c.1 < 235 || c.2 < 235 {
            inked += 1;
        }
        colours.insert(c);
    }
    (inked as f64 / p.pixels().len() as f64, colours.len())
}

fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser"] {
        for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

fn browser(bin: &Path, profile: &Path) -> Command {
    let mut c = Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

fn attr<'a>(dom: &'a str, name: &str) -> Option<&'a str> {
    let i = dom.find(&format!("{name}=\""))? + name.len() + 2;
    dom[i..].split('"').next()
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some(bin) = chromium() else {
        println!("SKIPPED: chromium is not installed (apt-get install -y chromium) - the HTML report was not checked in a browser");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let (db, ids) = history(d.path());
    // A run carrying per-interval CPU and device counters (as sysmon may add them).
    let ids = {
        let s = iosim::store::Store::open(&db).unwrap();
        let mut doc = s.get(ids[4].parse().unwrap()).unwrap().doc;
        doc["series"]["cpu"] = serde_json::json!([
            {"t_s": 0.25, "busy_pct": 40.0, "iowait_pct": 12.0},
            {"t_s": 0.5, "busy_pct": 55.0, "iowait_pct": 9.0},
            {"t_s": 0.75, "busy_pct": 47.0, "iowait_pct": 10.0}]);
        doc["series"]["device"] = serde_json::json!([
            {"t_s": 0.25, "util_pct": 80.0, "queue_depth": 3.5},
            {"t_s": 0.5, "util_pct": 91.0, "queue_depth": 4.1}]);
        let id = s
            .save(
                "run",
                Some("counters"),
                &doc,
                &iosim::store::Meta::default(),
            )
            .unwrap();
        let mut ids = ids;
        ids.push(id.to_string());
        // An `iosim sweep` result: its own curve and section in the same report.
        let o = iosim(
            d.path(),
            &[
                "sweep",
                "w.dat",
                "--engine",
                "null",
                "--size",
                "1M",
                "-d",
                "200ms",
                "--vary",
                "qd=1,2,4",
                "-q",
                "--db",
                db.to_str().unwrap(),
                "--label",
                "swept",
            ],
        );
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        let l = e.lines().find(|l| l.starts_with("saved as run ")).unwrap();
        ids.push(l.split_whitespace().nth(3).unwrap().to_string());
        ids
    };
    let out = d.path().join("report.html");
    let mut args = vec![
        "report",
        "--db",
        db.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(ids.iter().map(String::as_str));
    iosim(d.path(), &args);
    let html = std::fs::read_to_string(&out).unwrap();
    // Self-contained: nothing to fetch.
    // Runs of different workloads (queue depths) are compared with a warning.
    assert!(html.contains("did not run the same workload"));
    let without_ns = html.replace("http://www.w3.org/2000/svg", "");
    assert!(!without_ns.contains("http://") && !without_ns.contains("https://"));
    assert!(!html.contains("<link") && !html.contains(" src="));
    let url = format!("file://{}", out.display());

    // 1. The DOM after scripts ran: the page's own check of every chart.
    let o = browser(&bin, &d.path().join("p1"))
        .args(["--virtual-time-budget=3000", "--dump-dom", &url])
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&o.stdout);
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "chromium failed: {log}");
    let total: usize = attr(&dom, "data-charts-total")
        .expect("the check script ran")
        .parse()
        .unwrap();
    let ok: usize = attr(&dom, "data-charts-ok").unwrap().parse().unwrap();
    assert!(
        total >= 10,
        "percentiles, histogram, iops, mibs, latency, 2 counters, 2 sweep, cpu: got {total}"
    );
    assert_eq!(
        ok,
        total,
        "charts without content: {:?}",
        attr(&dom, "data-charts-bad")
    );
    assert!(
        attr(&dom, "data-js-error").is_none(),
        "{:?}",
        attr(&dom, "data-js-error")
    );
    assert!(
        attr(&dom, "data-console-errors").is_none(),
        "console.error was called"
    );
    for id in [
        "percentiles",
        "histogram",
        "iops",
        "mibs",
        "latency",
        "sweep-iops",
        "sweep-latency",
        "cpu",
        "counters-cpu",
        "counters-device",
    ] {
        assert!(dom.contains(&format!("id=\"{id}\"")), "chart {id} missing");
    }
    // The `iosim sweep` result: its section, and its curve on the sweep charts.
    let sweep_id = ids.last().unwrap();
    assert!(
        dom.contains(&format!("<h2>Sweep #{sweep_id}")),
        "no section for the sweep result"
    );
    assert!(
        dom.contains(&format!("#{sweep_id} sweep qd")),
        "the sweep result has no curve"
    );
    // Whether this sweep has a knee depends on how the null engine scaled on
    // this machine (a curve that never flattens has none), so the knee mark is
    // not asserted here: the rule, and the report and `iosim sweep` agreeing on
    // it, are pinned on fixed data by html's unit test
    // `the_report_and_the_sweep_find_the_same_knee`.
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE(")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");

    // 2. A screenshot that is not blank.
    let shot = d.path().join("shot.png");
    let o = browser(&bin, &d.path().join("p2"))
        .args(["--window-size=1300,4200", "--virtual-time-budget=3000"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (inked, colours) = ink(&load_png(&shot));
    println!("screenshot: {:.1}% inked, {colours} colours", inked * 100.0);
    assert!(inked > 0.02, "screenshot is nearly blank ({inked})");
    assert!(colours > 30, "screenshot has only {colours} colours");
    if let Ok(keep) = std::env::var("IOSIM_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

#[test]
fn single_charts_as_svg_and_png() {
    let d = tempfile::tempdir().unwrap();
    let (db, ids) = history(d.path());
    let dbs = db.to_str().unwrap();
    for chart in [
        "percentiles",
        "histogram",
        "iops",
        "mibs",
        "latency",
        "sweep-iops",
        "sweep-latency",
        "cpu",
    ] {
        let svg = d.path().join(format!("{chart}.svg"));
        let png = d.path().join(format!("{chart}.png"));
        let mut args = vec![
            "report",
            "--db",
            dbs,
            "--chart",
            chart,
            "--svg",
            svg.to_str().unwrap(),
            "--png",
            png.to_str().unwrap(),
            "--width",
            "640",
            "--height",
            "360",
        ];
        args.extend(ids.iter().map(String::as_str));
        iosim(d.path(), &args);
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(
            text.starts_with("<?xml") && text.contains("class=\"series\""),
            "{chart}"
        );
        let p = load_png(&png);
        assert_eq!(
            (p.width(), p.height()),
            (1280, 720),
            "{chart}: rendered at 2x"
        );
        let (inked, colours) = ink(&p);
        assert!(
            inked > 0.01 && colours > 8,
            "{chart}: blank PNG ({inked}, {colours})"
        );
    }
    let o = Command::cargo_bin("iosim")
        .unwrap()
        .args([
            "report", "--db", dbs, "--chart", "nope", "--svg", "x.svg", &ids[0],
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("choose --chart from percentiles, histogram"),
        "{e}"
    );
}
