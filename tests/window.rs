//! One measured window shared by every worker: more threads than cores must
//! not inflate the rate or stretch the run, and the synchronisation hook is
//! called at each phase, on the calling thread.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{iosim, success};
use iosim::runner::{self, RunOptions, RunPhase, RunSync};
use iosim::workload::{EngineKind, WorkloadSpec};

fn f(v: &serde_json::Value, path: &[&str]) -> f64 {
    path.iter().fold(v, |v, k| &v[k]).as_f64().unwrap()
}

/// Checks a run's JSON: every counted I/O lies in the one window, and the
/// total rate is the total I/O over that window.
fn check_one_window(r: &serde_json::Value, duration_s: f64) {
    let window = f(r, &["duration_s"]);
    assert!(
        (window - duration_s).abs() < duration_s * 0.01 + 0.002,
        "window {window} s, asked {duration_s} s"
    );
    let ios = f(r, &["total", "total", "ios"]);
    let iops = f(r, &["total", "total", "iops"]);
    assert!(
        (iops * window - ios).abs() <= 1.0 + ios * 1e-9,
        "{iops} IOPS x {window} s != {ios} I/Os"
    );
    let threads = r["threads"].as_array().unwrap();
    let per_thread: f64 = threads.iter().map(|t| f(t, &["total", "ios"])).sum();
    assert_eq!(per_thread, ios);
    for t in threads {
        assert!(f(t, &["duration_s"]) <= window + 1e-9, "{t}");
    }
    let in_series: f64 = r["series"]["total"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| f(p, &["total", "ios"]))
        .sum();
    assert_eq!(in_series, ios, "the series holds every counted I/O");
}

#[test]
fn threads_that_outnumber_cores_share_one_window() {
    // 256 CPU-bound threads on a machine with a few cores: before the shared
    // window each thread timed its own second from when it first ran, the run
    // took ~10 s and reported the sum of 256 one-second rates.
    let t = Instant::now();
    let out = success(iosim().args([
        "run",
        "--engine",
        "null",
        "-d",
        "1s",
        "--threads",
        "256",
        "--output",
        "json",
        "--quiet",
        "--no-save",
    ]));
    let wall = t.elapsed();
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    check_one_window(&r, 1.0);
    assert!(
        wall < Duration::from_secs(6),
        "a 1 s run took {wall:?}: the workers did not stop together"
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 256 {
        // Some of them cannot have started with the window: the run says so.
        let codes: Vec<&str> = r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|w| w["code"].as_str())
            .collect();
        assert!(codes.contains(&"workers_started_late"), "{codes:?}");
    }
}

#[test]
fn warmup_is_shared_too() {
    let r = common::run_json(&[
        "run",
        "--engine",
        "null",
        "-d",
        "500ms",
        "--warmup",
        "300ms",
        "--threads",
        "64",
        "--no-save",
    ]);
    check_one_window(&r, 0.5);
}

#[test]
fn diskspd_with_more_threads_than_cores_ends_on_time() {
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let out = success(
        iosim()
            .current_dir(dir.path())
            .args(["diskspd", "-t257", "-d1", "-W0", "-c16M", "t.dat"]),
    );
    let wall = t.elapsed();
    assert!(
        wall < Duration::from_secs(10),
        "diskspd -t257 -d1 took {wall:?}"
    );
    // total: bytes | I/Os | MiB/s | I/O per s: the rate is the I/Os over the 1 s window.
    let total = out
        .lines()
        .find(|l| l.starts_with("total:"))
        .expect("a total line");
    let cols: Vec<f64> = total
        .trim_start_matches("total:")
        .split('|')
        .map(|c| c.trim().parse().unwrap())
        .collect();
    assert!(
        (cols[3] - cols[1]).abs() <= cols[1] * 0.01 + 1.0,
        "{total}: I/O per s must be the I/Os over 1 s"
    );
}

/// Records the phases and on which thread they were called; asks for a stop
/// after a few polls when `stop_after` is set.
struct Recorder {
    phases: Mutex<Vec<(RunPhase, std::thread::ThreadId)>>,
    polls: AtomicUsize,
    stop_after: Option<usize>,
}

impl RunSync for Recorder {
    fn barrier(&self, phase: RunPhase) -> anyhow::Result<()> {
        self.phases
            .lock()
            .unwrap()
            .push((phase, std::thread::current().id()));
        Ok(())
    }
    fn stop_requested(&self) -> bool {
        let n = self.polls.fetch_add(1, Ordering::Relaxed) + 1;
        self.stop_after.is_some_and(|s| n >= s)
    }
}

fn spec(duration: Duration, warmup: Duration) -> WorkloadSpec {
    WorkloadSpec {
        engine: EngineKind::Null,
        threads: 4,
        duration,
        warmup,
        ..WorkloadSpec::default()
    }
}

fn run_with(spec: &WorkloadSpec, rec: Arc<Recorder>) -> runner::RunResult {
    let opts = RunOptions {
        sync: Some(rec),
        ..RunOptions::default()
    };
    runner::run(spec, &opts).unwrap()
}

#[test]
fn run_sync_sees_every_phase_in_order_on_the_calling_thread() {
    // I/Os over both runs: beside a build with three tests at a time, one
    // 200 ms window once passed with its four workers never scheduled.
    let mut ios = 0;
    for warmup in [Duration::ZERO, Duration::from_millis(100)] {
        let rec = Arc::new(Recorder {
            phases: Mutex::new(Vec::new()),
            polls: AtomicUsize::new(0),
            stop_after: None,
        });
        let r = run_with(&spec(Duration::from_millis(200), warmup), rec.clone());
        let phases = rec.phases.lock().unwrap().clone();
        let me = std::thread::current().id();
        assert_eq!(
            phases.iter().map(|p| p.0).collect::<Vec<_>>(),
            [
                RunPhase::Prepared,
                RunPhase::WarmupStart,
                RunPhase::WindowStart,
                RunPhase::WindowEnd
            ],
            "warm-up {warmup:?}"
        );
        assert!(phases.iter().all(|p| p.1 == me));
        assert!(
            rec.polls.load(Ordering::Relaxed) > 0,
            "stop_requested is polled"
        );
        assert!((r.duration_s - 0.2).abs() < 0.01, "{}", r.duration_s);
        ios += r.total.total.ios;
    }
    assert!(ios > 0, "no worker did an I/O in either window");
}

#[test]
fn run_sync_stop_ends_the_window_for_every_worker() {
    let rec = Arc::new(Recorder {
        phases: Mutex::new(Vec::new()),
        polls: AtomicUsize::new(0),
        stop_after: Some(3),
    });
    let t = Instant::now();
    let r = run_with(&spec(Duration::from_secs(60), Duration::ZERO), rec.clone());
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    assert!(r.duration_s < 30.0, "{}", r.duration_s);
    assert!(r.total.total.ios > 0);
    // Every worker stopped at the same end.
    for th in &r.threads {
        assert_eq!(th.duration_s, r.duration_s);
    }
    assert_eq!(
        rec.phases.lock().unwrap().last().map(|p| p.0),
        Some(RunPhase::WindowEnd)
    );
}

/// Runs iosim with `args`, reading its peak resident memory (VmHWM) every
/// 50 ms; returns (JSON result, peak RSS in KiB, wall time).
fn run_sampling_rss(args: &[&str]) -> (serde_json::Value, u64, Duration) {
    let t = Instant::now();
    let mut child = iosim()
        .args(args)
        .args(["--output", "json", "--quiet", "--no-save"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).unwrap();
        s
    });
    let mut peak = 0u64;
    while child.try_wait().unwrap().is_none() {
        if let Ok(s) = std::fs::read_to_string(&status) {
            if let Some(kb) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kb);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let wall = t.elapsed();
    let json = reader.join().unwrap();
    (serde_json::from_str(&json).unwrap(), peak, wall)
}

#[test]
fn a_short_interval_keeps_memory_flat_and_the_run_on_time() {
    // Before: 16 threads at 10 ms grew by ~300 MB a second and overran.
    let base = [
        "run",
        "--engine",
        "null",
        "--threads",
        "16",
        "--interval",
        "10ms",
        "-d",
    ];
    let (short, rss_short, wall_short) = run_sampling_rss(&[&base[..], &["2s"]].concat());
    let (long, rss_long, wall_long) = run_sampling_rss(&[&base[..], &["6s"]].concat());
    for (r, d, wall) in [(&short, 2.0, wall_short), (&long, 6.0, wall_long)] {
        check_one_window(r, d);
        assert_eq!(
            points_and_folded(r),
            (d * 100.0) as u64,
            "one point per 10 ms, or several folded into one"
        );
        assert!(
            wall < Duration::from_secs_f64(d + 4.0),
            "a {d} s run took {wall:?}"
        );
    }
    // Three times as long a run: memory does not grow with it (the series
    // points themselves are a few hundred kilobytes). Before, it grew by
    // ~300 MB a second; a loaded machine's main thread falling behind the 16
    // workers' messages holds some of them in the channel for a while (CI
    // measured 41 MB more for the longer run beside the other tests).
    assert!(
        rss_long < rss_short + 64 * 1024,
        "peak RSS {rss_short} KiB for 2 s, {rss_long} KiB for 6 s"
    );
    assert!(rss_long < 256 * 1024, "peak RSS {rss_long} KiB");
}

/// A run's series points, and the intervals folded into them: together,
/// the intervals of the window.
fn points_and_folded(r: &serde_json::Value) -> u64 {
    let points = r["series"]["total"].as_array().unwrap().len() as u64;
    points + r["series"]["folded_intervals"].as_u64().unwrap_or(0)
}

/// Busy threads on every core (twice over) until dropped: a machine whose
/// CPUs something else wants, started by the test itself.
struct CpuHog {
    stop: Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl CpuHog {
    fn start() -> CpuHog {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let n = 2 * std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                    }
                })
            })
            .collect();
        CpuHog { stop, threads }
    }
}

impl Drop for CpuHog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Issue 36: with every core busy, the main thread merging the intervals of
/// 16 workers at 10 ms fell behind and their messages queued without bound
/// (1.15 GB after 4 s, 2.4 GB for a minute with --hist-log and --series).
/// Now a worker that finds the channel full folds its intervals into one
/// longer point: memory stays bounded, the run ends on time, every I/O is
/// in the series and the log, and the result says what was folded.
#[test]
fn a_main_thread_starved_of_cpu_makes_intervals_fold_not_memory_grow() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("h.hlog");
    let csv = d.path().join("s.csv");
    let hog = CpuHog::start();
    let (r, peak_kib, wall) = run_sampling_rss(&[
        "run",
        "--engine",
        "null",
        "--threads",
        "16",
        "--qd",
        "64",
        "--interval",
        "1ms",
        "-d",
        "6s",
        "--hist-log",
        log.to_str().unwrap(),
        "--series",
        csv.to_str().unwrap(),
    ]);
    drop(hog);
    check_one_window(&r, 6.0);
    assert!(peak_kib < 256 * 1024, "peak RSS {peak_kib} KiB");
    assert!(wall < Duration::from_secs(40), "a 6 s run took {wall:?}");
    assert_eq!(points_and_folded(&r), 600);
    let points = r["series"]["total"].as_array().unwrap();
    let span: f64 = points.iter().map(|p| f(p, &["duration_s"])).sum();
    assert!((span - 6.0).abs() < 1e-6, "the points cover {span} s");
    // Folding, when there was any, is said in the result.
    let folded = r["series"]["folded_intervals"].as_u64().unwrap_or(0);
    let noted = r["notes"].to_string().contains("folded into longer points");
    assert_eq!(folded > 0, noted, "{}", r["notes"]);
    // The log holds every interval's I/O, folded or not.
    let show = success(iosim().args([
        "show",
        "--hist-log",
        log.to_str().unwrap(),
        "--output",
        "json",
    ]));
    let s: serde_json::Value = serde_json::from_str(&show).unwrap();
    assert_eq!(s["streams"][0]["ios"], r["total"]["total"]["ios"]);
    assert_eq!(s["intervals"].as_u64().unwrap(), points.len() as u64);
}

#[test]
fn an_interval_too_short_for_the_machine_is_raised_with_a_note() {
    let r = common::run_json(&[
        "run",
        "--engine",
        "null",
        "--interval",
        "1ms",
        "-d",
        "300ms",
        "--no-save",
    ]);
    assert_eq!(r["series"]["interval_s"], 0.01);
    assert_eq!(points_and_folded(&r), 30);
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("--interval 1ms raised to 10ms")),
        "{notes:?}"
    );
}

/// A stop (Ctrl-C, SIGTERM) that lands after the test file is ready but before
/// the window opens ends the run as an interruption (exit 130), not a failure.
#[test]
fn a_stop_before_the_window_opens_is_an_interruption() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.dat");
    let mut s = spec(Duration::from_millis(200), Duration::ZERO);
    s.engine = EngineKind::Auto;
    s.targets = vec![iosim::workload::TargetSpec::new(&path, Some(1 << 20))];
    // First run: creates the file.
    runner::run(&s, &RunOptions::default()).unwrap();
    let opts = RunOptions::default();
    opts.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let e = runner::run(&s, &opts).unwrap_err();
    assert!(iosim::target::is_interrupted(&e), "{e:#}");
    assert!(format!("{e:#}").contains("before the run started"), "{e:#}");
}

/// A series of runs (the quick suite, here as qualify's first stage runs
/// it) whose stop flag is raised while a run's test file is still being
/// written ends the series with what it measured: no error. A CI run of
/// `qualify --time 10s` on a loaded machine exited 130 ("interrupted before
/// the run started") when the stage's deadline passed during a run's set-up.
#[test]
fn a_stop_while_a_series_prepares_its_file_ends_the_series_not_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.dat");
    let opts = RunOptions::default();
    // Raised as soon as the file exists, while it is being filled.
    let (flag, watched) = (opts.stop.clone(), path.clone());
    let watcher = std::thread::spawn(move || {
        let t0 = std::time::Instant::now();
        while !watched.exists() && t0.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_micros(200));
        }
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let q = iosim::quick::run(
        &iosim::quick::QuickConfig {
            path: path.clone(),
            size: 256 << 20,
            duration: Duration::from_millis(100),
            engine: EngineKind::Sync,
            cache: iosim::workload::CacheMode::Buffered,
            allow_destroy: false,
        },
        &opts,
    );
    watcher.join().unwrap();
    let q = q.unwrap_or_else(|e| panic!("the suite failed instead of ending: {e:#}"));
    assert!(
        q.tests.len() < iosim::quick::SUITE.len(),
        "{}",
        q.tests.len()
    );
    // The stopped run's caller alone says it was stopped before its window.
    let mut s = spec(Duration::from_millis(100), Duration::ZERO);
    s.targets = vec![iosim::workload::TargetSpec::new(
        dir.path().join("n.dat"),
        Some(1 << 20),
    )];
    let e = runner::run(&s, &opts).unwrap_err();
    assert!(runner::stopped_before_window(&e, &opts), "{e:#}");
    assert!(!runner::stopped_before_window(&e, &RunOptions::default()));
}

/// Issue 23: a worker thread that panicked left the run hanging (the main
/// thread waited at the gate for it, the others in the verify pass) and
/// deaf to SIGTERM. Now any worker panic stops the run: it exits 1 at once
/// with what the thread said, and removes the test file it created. The
/// first worker panics before the gate (`setup`) or after it opened (`run`),
/// with other workers waiting for the verify pass.
#[test]
fn a_worker_that_panics_ends_the_run_with_an_error() {
    for at in ["setup", "run"] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.dat");
        let mut cmd = iosim();
        cmd.env("IOSIM_TEST_WORKER_PANIC", at)
            .env("RUST_BACKTRACE", "0")
            .arg("run")
            .arg(&file)
            .args(["--size", "4M", "--rw", "randrw", "--threads", "4"])
            .args(["--verify-pass", "-d", "30s", "--no-save"]);
        let (out, took) = common::output_within(&mut cmd, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{at}: still running 10 s after a worker panicked"));
        eprintln!("worker panic at {at}: the run ended in {took:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{at}: {err}");
        assert!(
            err.contains("worker thread iosim-w0 failed: it panicked with \"IOSIM_TEST_WORKER_PANIC asked this worker to panic"),
            "{at}: {err}"
        );
        assert!(err.contains("the run was stopped"), "{at}: {err}");
        assert!(
            err.contains("it was created by this run and has been removed"),
            "{at}: {err}"
        );
        assert!(!file.exists(), "{at}: the test file was left");
    }
}
