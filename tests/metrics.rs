//! `--metrics-listen`: live OpenMetrics during a run, scraped by hand and by
//! a real Prometheus server (Debian's `prometheus`), whose last sample must
//! agree with the run's final result within one interval.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

/// A port nobody listens on now (the kernel's pick, released at once).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` on 127.0.0.1:port (HTTP/1.0: the server closes when done):
/// the status line and headers, and the body. `None` when nothing answers.
fn get(port: u16, path: &str) -> Option<(String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n").ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    let (head, body) = raw.split_once("\r\n\r\n")?;
    Some((head.to_string(), body.to_string()))
}

/// Percent-encodes a query parameter.
fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The value of a sample line `name{labels} value` whose name and labels start with `prefix`.
fn sample(text: &str, prefix: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// Starts `iosim run` on a new 16 MiB file for `secs`, serving on `port`.
fn start_run(dir: &Path, port: u16, secs: u32) -> Child {
    let f = dir.join("metrics.dat");
    common::iosim()
        .args([
            "run",
            f.to_str().unwrap(),
            "--size",
            "16M",
            "--rw",
            "randread",
        ])
        .args(["--duration", &format!("{secs}s"), "--interval", "1s"])
        .args(["--metrics-listen", &format!("127.0.0.1:{port}")])
        .args(["--output", "json", "--quiet", "--no-save"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for the run and returns its JSON result.
fn finish(child: Child) -> serde_json::Value {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Ends a child process when dropped (a failed test leaves nothing running).
struct Reaper(Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn metrics_are_served_as_openmetrics_during_a_run_and_stop_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let child = start_run(dir.path(), port, 6);
    let read = r#"iosim_ios_total{workload="randread"#;
    // Scrape until reads are counted and the first interval has closed (the
    // current rates are the last closed interval's: none before it; a loaded
    // machine may take a while to start).
    let deadline = Instant::now() + Duration::from_secs(60);
    let (head, body) = loop {
        if let Some((h, b)) = get(port, "/metrics") {
            if sample(&b, read).is_some_and(|v| v > 0.0) && b.contains("iosim_current_iops{") {
                break (h, b);
            }
        }
        assert!(
            Instant::now() < deadline,
            "no reads counted at /metrics in 60 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
        "{head}"
    );
    assert!(head.contains("application/openmetrics-text"), "{head}");
    assert!(body.ends_with("# EOF\n"), "{body}");
    for line in [
        "# TYPE iosim_ios counter",
        "# TYPE iosim_latency_seconds histogram",
        "# TYPE iosim_in_flight gauge",
        "# TYPE iosim_self_check_warnings counter",
        "iosim_up 1",
    ] {
        assert!(body.lines().any(|l| l == line), "{line} missing:\n{body}");
    }
    for prefix in [
        r#"iosim_command_info{command="run""#,
        "iosim_latency_seconds_bucket{",
        "iosim_transferred_bytes_total{",
        "iosim_errors_total{",
        "iosim_current_iops{",
        "iosim_self_check_runs_total 0",
    ] {
        assert!(body.contains(prefix), "{prefix} missing:\n{body}");
    }
    // Anything else is not found.
    let (head, _) = get(port, "/nothing").unwrap();
    assert!(head.contains(" 404"), "{head}");
    let scraped = sample(&body, read).unwrap();
    let r = finish(child);
    let total = r["total"]["read"]["ios"].as_f64().unwrap();
    assert!(scraped <= total, "scraped {scraped} > final {total}");
    // The endpoint is gone with the command.
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn a_port_in_use_or_a_bad_address_is_refused_with_what_to_do() {
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f.dat");
    let out = common::iosim()
        .args([
            "run",
            f.to_str().unwrap(),
            "--size",
            "1M",
            "--duration",
            "1s",
        ])
        .args([
            "--metrics-listen",
            &port.to_string(),
            "--quiet",
            "--no-save",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("in use") && err.contains("choose another port"),
        "{err}"
    );
    assert!(
        !f.exists(),
        "nothing is created when the endpoint cannot start"
    );
    let out = common::iosim()
        .args(["run", f.to_str().unwrap(), "--metrics-listen", "nowhere"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("HOST:PORT"), "{err}");
}

#[test]
fn prometheus_scrapes_a_run_and_its_last_sample_agrees_with_the_result() {
    if !common::have("prometheus") {
        return common::skip("prometheus is not installed (Debian package prometheus)");
    }
    let dir = tempfile::tempdir().unwrap();
    let (iosim_port, prom_port) = (free_port(), free_port());
    let config = dir.path().join("prometheus.yml");
    // Scrapes twice an interval: the last one before iosim stops misses
    // less than one interval of I/O.
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 500ms\n  scrape_timeout: 500ms\nscrape_configs:\n  - job_name: iosim\n    static_configs:\n      - targets: ['127.0.0.1:{iosim_port}']\n"
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
    let _prom = Reaper(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(90);
    while !get(prom_port, "/-/ready").is_some_and(|(h, _)| h.contains(" 200")) {
        assert!(
            Instant::now() < deadline,
            "prometheus not ready in 90 s: {}",
            std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let r = finish(start_run(dir.path(), iosim_port, 8));
    let total = r["total"]["read"]["ios"].as_f64().unwrap();
    let one_interval = r["series"]["total"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["read"]["ios"].as_f64().unwrap())
        .fold(0.0, f64::max);
    // The series went stale when iosim stopped: the largest sample is the last.
    let q = r#"max(max_over_time(iosim_ios_total{job="iosim",direction="read"}[10m]))"#;
    let deadline = Instant::now() + Duration::from_secs(30);
    let scraped = loop {
        let (_, body) = get(prom_port, &format!("/api/v1/query?query={}", encode(q)))
            .expect("prometheus answers queries");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        if let Some(s) = v["data"]["result"][0]["value"][1].as_str() {
            break s.parse::<f64>().unwrap();
        }
        assert!(
            Instant::now() < deadline,
            "no iosim series in prometheus: {body}"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(total > 0.0 && one_interval > 0.0, "{r}");
    assert!(
        (total - scraped).abs() <= one_interval,
        "prometheus' last sample {scraped} and the result's {total} reads differ by more than one interval ({one_interval})"
    );
    // The histogram went along: its count is the counter.
    let q = r#"max(max_over_time(iosim_latency_seconds_count{job="iosim",direction="read"}[10m]))"#;
    let (_, body) = get(prom_port, &format!("/api/v1/query?query={}", encode(q))).unwrap();
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let count: f64 = v["data"]["result"][0]["value"][1]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((total - count).abs() <= one_interval, "{count} vs {total}");
}

/// Starts `iosim run` serving on `listen` (its stderr piped) and waits until
/// 127.0.0.1:port answers a scrape.
fn serving(dir: &Path, listen: &str, port: u16) -> Reaper {
    let f = dir.join("serve.dat");
    let child = common::iosim()
        .args([
            "run",
            f.to_str().unwrap(),
            "--size",
            "4M",
            "--rw",
            "randread",
        ])
        .args([
            "--duration",
            "60s",
            "--interval",
            "1s",
            "--metrics-listen",
            listen,
        ])
        .args(["--quiet", "--no-save"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while get(port, "/metrics").is_none() {
        assert!(
            Instant::now() < deadline,
            "nothing served on port {port} in 60 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    Reaper(child)
}

/// A client that pipelines requests and never reads the answers fills its
/// socket buffers; the server's write to it blocks. Before, that one write
/// held the only serving thread and every other scrape timed out until the
/// client left. Now each connection has its own thread and a write timeout:
/// another client scrapes as usual while the bad one is still connected.
#[test]
fn a_client_that_never_reads_blocks_no_other_scrape() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _run = serving(dir.path(), &format!("127.0.0.1:{port}"), port);
    // 200 requests filled the buffers where the issue was found; 2,000
    // (about 25 MB of answers) fill those of any machine.
    let bad = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let requests = format!("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").repeat(2000);
    let writer = {
        let mut bad = bad.try_clone().unwrap();
        // Its own thread: should the server stop reading, this write may block.
        std::thread::spawn(move || {
            let _ = bad.set_write_timeout(Some(Duration::from_secs(30)));
            let _ = bad.write_all(requests.as_bytes());
        })
    };
    for _ in 0..3 {
        // Give the server time to fill the bad client's buffers and block on it.
        std::thread::sleep(Duration::from_millis(500));
        let started = Instant::now();
        let (head, body) =
            get(port, "/metrics").expect("a scrape beside a client that never reads");
        assert!(head.contains(" 200"), "{head}");
        assert!(body.contains("iosim_up 1"), "{body}");
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "a scrape took {:?}",
            started.elapsed()
        );
    }
    drop(bad);
    let _ = writer.join();
}

/// `promtool check metrics` (Debian's prometheus package) reads the classic
/// text format: asked for with `Accept: text/plain;version=0.0.4`, as
/// promtool's users and older scrapers do, iosim serves it and promtool
/// passes it (OpenMetrics failed: `unknown metric type "info"`). The endpoint
/// is bound to every interface here, and iosim warns that it is open to the
/// network.
#[test]
fn promtool_checks_the_classic_text_and_an_open_address_is_warned_of() {
    if !common::have("promtool") || !common::have("curl") {
        return common::skip("needs promtool (Debian package prometheus) and curl");
    }
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut run = serving(dir.path(), &format!("0.0.0.0:{port}"), port);
    let url = format!("http://127.0.0.1:{port}/metrics");
    let check = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "curl -sS -D {h} -H 'Accept: text/plain;version=0.0.4' {url} | promtool check metrics",
            h = dir.path().join("head").display()
        ))
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(check.status.success(), "promtool: {said}");
    assert!(said.trim().is_empty(), "promtool found problems: {said}");
    let head = std::fs::read_to_string(dir.path().join("head")).unwrap();
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    // Without the header: OpenMetrics, as Prometheus asks for first.
    let (head, body) = get(port, "/metrics").unwrap();
    assert!(
        head.contains("application/openmetrics-text") && body.ends_with("# EOF\n"),
        "{head}"
    );
    let _ = run.0.kill();
    let out = std::mem::replace(&mut run.0, Command::new("true").spawn().unwrap());
    let err = String::from_utf8_lossy(&out.wait_with_output().unwrap().stderr).to_string();
    assert!(
        err.contains(&format!("--metrics-listen 0.0.0.0:{port}: the metrics endpoint is open to every network interface")),
        "{err}"
    );
}
