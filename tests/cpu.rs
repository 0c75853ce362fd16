//! The CPU self-check end to end: a run says who used the CPU (iosim's own
//! threads, the kernel's I/O path, other processes by name) and blames the
//! CPU only when iosim itself was the limit or others took what it needed.
//!
//! The busy process beside iosim is `/bin/sh` started through a link named
//! `iosimtesthog`, spinning in `while :; do :; done`, pinned to the same CPU
//! as iosim's worker and killed when the test ends. No assertion needs a
//! quiet machine: where the machine is busy with other work, the findings
//! may say so, and the tests check what must hold either way.

use crate::common;

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

const HOG: &str = "iosimtesthog";

/// A CPU hog pinned to `cpu`, killed on drop.
struct Hog(Child);

impl Hog {
    fn start(dir: &std::path::Path, cpu: usize) -> Hog {
        // A link, not a copy: the kernel names a process after the path it
        // was started by, and a freshly written copy can fail to start
        // (ETXTBSY) while another test thread forks.
        let bin = dir.join(HOG);
        std::os::unix::fs::symlink("/bin/sh", &bin).unwrap();
        let mut cmd = Command::new(&bin);
        cmd.args(["-c", "while :; do :; done"])
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        // SAFETY: between fork and exec the closure only makes one system
        // call (sched_setaffinity) on the child's own thread; it allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                let mut set = rustix::thread::CpuSet::new();
                set.set(cpu);
                rustix::thread::sched_setaffinity(None, &set).map_err(std::io::Error::from)
            });
        }
        Hog(cmd.spawn().unwrap())
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run(extra: &[&str]) -> Value {
    let mut args = vec!["run", "--duration", "1500ms"];
    args.extend_from_slice(extra);
    common::run_json(&args)
}

fn codes(r: &Value) -> Vec<String> {
    r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap().to_string())
        .collect()
}

fn pct(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The CPU the process named `name` used, in cores (0 if not listed).
fn cores_of(a: &Value, name: &str) -> f64 {
    let pct: f64 = a["others"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter(|s| s["name"] == name)
                .map(|s| pct(&s["pct"]))
                .sum()
        })
        .unwrap_or(0.0);
    pct / 100.0 * self::pct(&a["cores"])
}

/// What must hold of any run's attribution.
fn check_attribution(r: &Value) -> &Value {
    let a = &r["cpu"]["attribution"];
    assert!(a.is_object(), "no attribution: {}", r["cpu"]);
    let cores = std::thread::available_parallelism().unwrap().get() as u64;
    assert_eq!(a["cores"].as_u64(), Some(cores));
    let busy = pct(&a["busy_pct"]);
    assert!((0.0..=100.5).contains(&busy), "{a}");
    let parts = pct(&a["iosim_pct"]) + pct(&a["io_path_pct"]) + pct(&a["others_pct"]);
    // Tick sampling counts an interrupt also to the task it interrupted.
    assert!(
        parts <= busy * 1.15 + 2.0,
        "parts {parts} > busy {busy}: {a}"
    );
    assert!(pct(&a["iosim_pct"]) > 0.0, "{a}");
    assert!(pct(&a["window_s"]) > 1.0, "{a}");
    // The one CPU warning agrees with `cause`, and `cpu_bound` with the cause.
    let cause = r["cpu"]["cause"].as_str();
    let cpu_codes: Vec<String> = codes(r)
        .into_iter()
        .filter(|c| c.starts_with("cpu_"))
        .collect();
    match cause {
        None => assert!(cpu_codes.is_empty(), "{cpu_codes:?}"),
        Some(c) => {
            let code = match c {
                "iosim" => "cpu_bound_iosim",
                "others" => "cpu_taken_by_others",
                "io_path" => "cpu_busy_io_path",
                x => panic!("unknown cause {x}"),
            };
            assert_eq!(cpu_codes, [code]);
            let w = r["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|w| w["code"] == code)
                .unwrap();
            let msg = w["message"].as_str().unwrap();
            // One line: three named processes with their shares (another
            // iosim named with its PID) and the wait fit in 260 characters.
            assert!(msg.len() < 260 && !msg.contains('\n'), "{msg}");
        }
    }
    assert_eq!(
        r["cpu"]["cpu_bound"].as_bool(),
        Some(matches!(cause, Some("iosim" | "others"))),
        "{}",
        r["cpu"]
    );
    a
}

#[test]
fn a_cpu_hog_on_the_same_core_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let _hog = Hog::start(dir.path(), 0);
    // Direct reads of a file: the hog is named whatever the storage does.
    let f = dir.path().join("t.dat");
    let r = run(&[
        f.to_str().unwrap(),
        "--size",
        "16M",
        "--qd",
        "8",
        "--cpus",
        "0",
    ]);
    let a = check_attribution(&r);
    assert!(cores_of(a, HOG) > 0.05, "{HOG} is not named: {a}");
    assert_eq!(a["workers"], 1);
    assert_ne!(r["cpu"]["cause"], "iosim", "{a}");

    // iosim's null engine needs a whole core: beside the hog on the same
    // core it cannot have it, and the run says who took it.
    let r = run(&["--engine", "null", "--size", "16M", "--cpus", "0"]);
    let a = check_attribution(&r);
    assert!(cores_of(a, HOG) > 0.05, "{HOG} is not named: {a}");
    assert_eq!(r["cpu"]["cause"], "others", "{a}");
    let msg = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "cpu_taken_by_others")
        .unwrap()["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        msg.starts_with("other processes took CPU iosim needed ("),
        "{msg}"
    );
    // Named when it is among the three busiest (it may not be, on a machine
    // busy with other work).
    let top3: Vec<&str> = a["others"]
        .as_array()
        .unwrap()
        .iter()
        .take(3)
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    if top3.contains(&HOG) {
        assert!(msg.contains(HOG), "{msg}");
    }
    if let Some(w) = a["worker_wait_pct"].as_f64() {
        assert!(
            w >= 15.0,
            "a thread that never sleeps waited only {w}%: {a}"
        );
    }
}

#[test]
fn iosim_using_a_whole_core_is_told_apart() {
    // The null engine does no I/O: its one worker is busy all the time.
    let r = run(&["--engine", "null", "--size", "16M"]);
    let a = check_attribution(&r);
    let cause = r["cpu"]["cause"].as_str();
    let others_cores = pct(&a["others_pct"]) / 100.0 * pct(&a["cores"]);
    if others_cores < 0.1 {
        // A quiet machine: iosim had the core it needed and used it all.
        assert_eq!(cause, Some("iosim"), "{a}");
    } else {
        assert!(matches!(cause, Some("iosim" | "others")), "{a}");
    }
}

#[test]
fn a_normal_run_does_not_blame_itself() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("n.dat");
    let r = run(&[f.to_str().unwrap(), "--size", "16M", "--qd", "1"]);
    let a = check_attribution(&r);
    // One thread at QD 1 waits for its reads: it never saturates a core.
    assert!(
        !codes(&r)
            .iter()
            .any(|c| c == "cpu_bound_iosim" || c == "cpu_bound"),
        "{:?}: {a}",
        codes(&r)
    );
    if r["cpu"]["cause"] == "others" {
        // Only on a machine busy with other work, which the run names.
        assert!(!a["others"].as_array().unwrap().is_empty(), "{a}");
        eprintln!(
            "note: this machine is busy: {}",
            r["cpu"]["attribution"]["others"]
        );
    }
    // The text report has the one-line summary.
    let out = common::success(common::iosim().args([
        "run",
        f.to_str().unwrap(),
        "--size",
        "16M",
        "--duration",
        "300ms",
    ]));
    assert!(out.contains("cpu use: iosim "), "{out}");
}
