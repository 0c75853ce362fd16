//! The engine contract seen from the command line: the default engine,
//! a target truncated under the mmap engine, runs too large for memory.

use crate::common;

use common::iosim;
use std::time::{Duration, Instant};

/// `--engine mmap` on a file that another process truncates mid-run: the
/// run ends with what it measured, names the truncated target and exits
/// with the I/O-error code (3), instead of dying of SIGBUS with no output.
#[test]
fn mmap_run_survives_its_target_being_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.dat");
    common::success(
        iosim()
            .args(["create", "--size", "64M", "--quiet"])
            .arg(&file),
    );
    let child = iosim()
        .args([
            "run", "--engine", "mmap", "--cache", "buffered", "--rw", "randread",
        ])
        .args(["-d", "60s", "--output", "json", "--quiet", "--no-save"])
        .arg(&file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Truncate only once the file is mapped (its path shows in the maps).
    let maps = format!("/proc/{}/maps", child.id());
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let t = Instant::now();
    while !std::fs::read_to_string(&maps)
        .unwrap_or_default()
        .contains(&name)
    {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the run never mapped the file"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(0)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "stderr: {stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["errors"]["count"].as_u64().unwrap() > 0);
    let first = v["errors"]["first"][0]["message"].as_str().unwrap();
    assert!(first.contains("truncated"), "{first}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("truncated while the mmap engine ran"),
        "{notes}"
    );
    // Whatever was measured before the truncation is kept.
    assert!(v["duration_s"].as_f64().unwrap() > 0.0);
}

/// `--qd 4096 --bs 64M` would need 256 GiB of buffers: refused before
/// anything is allocated, naming the options and the limit.
#[test]
fn a_run_larger_than_memory_is_refused_up_front() {
    let out = iosim()
        .args(["run", "--engine", "null", "--qd", "4096", "--bs", "64M"])
        .args(["-d", "1s", "--quiet", "--no-save"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(out.status.code() != Some(101), "panicked: {stderr}");
    assert!(
        stderr.contains("--qd 4096") && stderr.contains("--bs 64MiB"),
        "{stderr}"
    );
    assert!(stderr.contains("MemAvailable"), "{stderr}");
}

/// Through the page cache at queue depth 1 the default engine is sync (as
/// fio's default psync); with direct I/O it is io_uring. The result's
/// config names the engine that ran, never `auto`.
#[test]
fn the_default_engine_depends_on_cache_and_depth() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.dat");
    let file = file.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", file, "--size", "8M", "-d", "200ms", "--no-save"];
        args.extend_from_slice(extra);
        common::run_json(&args)
    };
    let v = run(&["--cache", "buffered"]);
    assert_eq!(v["engine"], "sync");
    assert_eq!(v["config"]["engine"], "sync");
    let v = run(&["--cache", "buffered", "--qd", "8"]);
    assert_ne!(v["engine"], "sync");
    let v = run(&[]);
    let uring_ok = !v["notes"].to_string().contains("io_uring is not available");
    assert_eq!(v["engine"], if uring_ok { "uring" } else { "sync" });
}

/// `--hipri` on a disk without poll queues (a loop device has none): the
/// kernel would fail every polled I/O with "operation not supported"; iosim
/// refuses before the run, names the device and says what to do.
#[test]
fn hipri_is_refused_where_the_disk_cannot_poll() {
    let Some(lo) = common::LoopDev::new(16 << 20) else {
        common::skip("needs root and losetup for a loop device");
        return;
    };
    let poll = std::fs::read_to_string(format!("/sys/block/{}/queue/io_poll", lo.name));
    assert_eq!(
        poll.unwrap().trim(),
        "0",
        "a loop device has no poll queues"
    );
    let out = iosim()
        .args([
            "run",
            lo.dev.to_str().unwrap(),
            "--rw",
            "randread",
            "--qd",
            "4",
        ])
        .args([
            "--cache",
            "direct",
            "--engine",
            "uring",
            "--hipri",
            "-d",
            "1s",
            "--no-save",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "{} (under '{}') has no poll queues",
            lo.name,
            lo.dev.display()
        )) && err.contains("drop --hipri"),
        "{err}"
    );
    assert!(!err.contains("I/O errors"), "it ran anyway: {err}");
}

/// A fast device (a loop device over /dev/shm with direct I/O): io_uring
/// runs in its fastest ring mode on this kernel (no fallback note), every
/// I/O completes, and reading the device leaves its access time alone
/// (targets are opened O_NOATIME).
#[test]
fn a_fast_device_runs_without_fallbacks_and_keeps_its_atime() {
    if !std::path::Path::new("/dev/shm").is_dir() {
        common::skip("needs /dev/shm");
        return;
    }
    let Some(lo) = common::LoopDev::new_in(std::path::Path::new("/dev/shm"), 16 << 20) else {
        common::skip("needs root and losetup for a loop device");
        return;
    };
    use std::os::unix::fs::MetadataExt;
    // An access time well in the past, so relatime would update it on a read.
    let old = libc::timespec {
        tv_sec: 1_000_000_000,
        tv_nsec: 0,
    };
    let times = [
        old,
        libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
    ];
    let c = std::ffi::CString::new(lo.dev.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string and two timespecs, as utimensat wants.
    assert_eq!(
        unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), 0) },
        0
    );
    let v = common::run_json(&[
        "run",
        lo.dev.to_str().unwrap(),
        "--rw",
        "randread",
        "--qd",
        "8",
        "--cache",
        "direct",
        "--number-ios",
        "2000",
        "-d",
        "30s",
        "--no-save",
    ]);
    if v["notes"].to_string().contains("io_uring is not available") {
        common::skip("io_uring is not available here");
        return;
    }
    assert_eq!(v["engine"], "uring");
    let notes = v["notes"].to_string();
    let ver = iosim::sysmon::host::kernel_version().unwrap();
    if ver >= (6, 1) {
        assert!(!notes.contains("completion work"), "{notes}");
    }
    assert_eq!(v["total"]["total"]["ios"], 2000, "{v}");
    assert_eq!(v["errors"].as_array().map_or(0, |e| e.len()), 0, "{v}");
    let atime = std::fs::metadata(&lo.dev).unwrap().atime();
    assert_eq!(
        atime, 1_000_000_000,
        "reading the device changed its access time"
    );
}

/// A memory cgroup for one test, removed when dropped (its processes have
/// ended by then); `None` where this machine lets no test make one.
struct MemoryCgroup {
    dir: std::path::PathBuf,
}

impl MemoryCgroup {
    /// A new cgroup v1 `memory` group limited to `bytes` (or a cgroup v2
    /// group with `memory.max`, where the unified hierarchy has the controller).
    fn new(bytes: u64) -> Option<MemoryCgroup> {
        let name = format!("iosim-test-{}", std::process::id());
        let v1 = std::path::Path::new("/sys/fs/cgroup/memory");
        let v2 = std::path::Path::new("/sys/fs/cgroup");
        let (dir, file) = if v1.join("memory.limit_in_bytes").exists() {
            (v1.join(&name), "memory.limit_in_bytes")
        } else if std::fs::read_to_string(v2.join("cgroup.subtree_control"))
            .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"))
        {
            (v2.join(&name), "memory.max")
        } else {
            return None;
        };
        std::fs::create_dir(&dir).ok()?;
        let g = MemoryCgroup { dir };
        std::fs::write(g.dir.join(file), bytes.to_string()).ok()?;
        Some(g)
    }

    /// `iosim args` run inside the group (the shell moves itself in, then
    /// becomes iosim).
    fn iosim(&self, args: &str) -> std::process::Command {
        let mut c = std::process::Command::new("sh");
        c.arg("-c").arg(format!(
            "echo $$ > {}/cgroup.procs && exec {} {args}",
            self.dir.display(),
            common::bin()
        ));
        c
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Issue 36: inside a 1 GiB memory cgroup, 64 threads at depth 4096 (1 GiB
/// of buffers alone) were accepted on the machine's MemAvailable and the
/// OOM killer ended the run (exit 137, no message). The cgroup's limit is
/// checked before the run starts: refused with the numbers and what to
/// lower; a run that fits still runs inside it.
#[test]
fn a_run_larger_than_its_memory_cgroup_is_refused_with_a_message() {
    let Some(group) = MemoryCgroup::new(1 << 30) else {
        common::skip("cannot create a memory cgroup (needs root and cgroup v1 memory or v2 with the memory controller)");
        return;
    };
    let out = group
        .iosim("run --engine null --threads 64 --qd 4096 -d 2s --quiet --no-save")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--qd 4096 x --bs 4KiB x 64 threads needs")
            && stderr.contains("memory cgroup")
            && stderr.contains("1GiB limit")
            && stderr.contains("lower --threads, --qd or --bs"),
        "{stderr}"
    );
    let out = group
        .iosim("run --engine null --threads 2 --qd 8 -d 300ms --quiet --no-save")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 36: under `prlimit --as`, `--threads 1024 --qd 4096` and
/// `--verify-backlog 600000000` passed the MemAvailable check and aborted
/// allocating (exit 134). The address-space limit is checked too: refused
/// with a message; a run that fits runs under the same limit.
#[test]
fn a_run_larger_than_its_address_space_limit_is_refused_with_a_message() {
    if std::process::Command::new("prlimit")
        .arg("--version")
        .output()
        .is_err()
    {
        common::skip("prlimit (util-linux) is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("t.dat");
    let f = f.to_str().unwrap();
    let limited = |args: &[&str]| {
        let mut c = std::process::Command::new("prlimit");
        c.arg(format!("--as={}", 4u64 << 30))
            .arg(common::bin())
            .args(args)
            .args(["--quiet", "--no-save"]);
        c.output().unwrap()
    };
    for args in [
        &[
            "run",
            "--engine",
            "null",
            "--threads",
            "1024",
            "--qd",
            "4096",
            "-d",
            "2s",
        ][..],
        &[
            "run",
            f,
            "--size",
            "1M",
            "--rw",
            "randwrite",
            "--verify-backlog",
            "600000000",
            "-d",
            "2s",
        ],
    ] {
        let out = limited(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("RLIMIT_AS") && stderr.contains("needs") && stderr.contains("lower"),
            "{args:?}: {stderr}"
        );
    }
    assert!(
        !std::path::Path::new(f).exists(),
        "the refused run created its file"
    );
    let out = limited(&["run", "--engine", "null", "--threads", "4", "-d", "300ms"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
