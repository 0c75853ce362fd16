//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The path of the iosim binary under test: the one way the tests find it
/// (a test that needs the path itself, for mpirun or a shell, uses this; every
/// other test starts it with [`iosim`]).
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_iosim")
}

/// The iosim binary under test, run in [`scratch_dir`] unless the test sets
/// its own `current_dir`.
pub fn iosim() -> Command {
    let mut c = Command::new(bin());
    // Never write history into the real data directory from a test.
    c.env("XDG_DATA_HOME", test_data_home());
    c.current_dir(scratch_dir());
    c
}

/// This test process's own folder in Cargo's scratch folder for integration
/// tests (CARGO_TARGET_TMPDIR, target/tmp: ignored by git, gone with `cargo
/// clean`), so the tests leave nothing in /tmp. The folders of test
/// processes that have ended are removed when the next one starts, so at
/// most the last run's history (the runs it saved, megabytes) stays.
fn test_home() -> &'static Path {
    static HOME: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
        for e in std::fs::read_dir(root).into_iter().flatten().flatten() {
            let name = e.file_name();
            let pid = name.to_str().and_then(|n| n.strip_prefix("iosim-test-"));
            if pid.is_some_and(|p| !Path::new("/proc").join(p).exists()) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        let d = root.join(format!("iosim-test-{}", std::process::id()));
        std::fs::create_dir_all(d.join("cwd")).unwrap();
        d
    })
}

/// XDG_DATA_HOME of every iosim the tests start without their own: the
/// history they save goes there, never into the real data directory.
pub fn test_data_home() -> PathBuf {
    test_home().join("xdg")
}

/// The working directory of a command whose test gives none: never the
/// checkout (cargo runs tests there), where what iosim writes to the current
/// directory by default (the simulator's `sqliosim.log.xml`, the
/// `iosim-unsaved-*.json` of a result the history could not store) would
/// land in the working tree. `.ci/run` fails when the tests leave the
/// working tree changed.
pub fn scratch_dir() -> PathBuf {
    test_home().join("cwd")
}

/// Runs `cmd`; fails the test with its stderr unless it succeeded; returns its stdout.
pub fn success(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs iosim with `args`, expects success, parses the JSON on stdout.
///
/// No test that runs through here throttles its device, so none may find a
/// rate limit: every such run counts towards the detector's false alarms
/// (docs/changes.md), and one fails the test.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let out = success(iosim().args(args).args(["--output", "json", "--quiet"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    if let Some(w) = v["warnings"]
        .as_array()
        .and_then(|ws| ws.iter().find(|w| w["code"] == "rate_limited"))
    {
        panic!("a rate limit named on an unthrottled device (iosim {args:?}): {w}");
    }
    v
}

/// True when running as root.
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// True when `cmd` is on PATH.
pub fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// A loop device over a file in a temporary directory, detached on drop.
pub struct LoopDev {
    pub dev: PathBuf,
    pub name: String,
    _dir: tempfile::TempDir,
}

impl LoopDev {
    /// Creates a `size`-byte backing file and attaches it; None (with a printed reason) when impossible.
    pub fn new(size: u64) -> Option<LoopDev> {
        LoopDev::new_in(&std::env::temp_dir(), size)
    }

    /// The backing file.
    #[allow(dead_code)]
    pub fn backing(&self) -> PathBuf {
        self._dir.path().join("loop.img")
    }

    /// The device's `major:minor` (as cgroup and sysfs files name it).
    #[allow(dead_code)]
    pub fn major_minor(&self) -> String {
        use std::os::unix::fs::MetadataExt;
        let rdev = std::fs::metadata(&self.dev).unwrap().rdev();
        format!("{}:{}", libc::major(rdev), libc::minor(rdev))
    }

    /// As [`LoopDev::new`], with the backing file in a temporary directory under `parent`
    /// (e.g. /dev/shm, for a device that is fast whatever the disk does).
    #[allow(dead_code)]
    pub fn new_in(parent: &Path, size: u64) -> Option<LoopDev> {
        if !is_root() {
            skip("loop devices need root");
            return None;
        }
        if !have("losetup") {
            skip("losetup is not installed");
            return None;
        }
        let Ok(dir) = tempfile::tempdir_in(parent) else {
            skip(&format!("cannot make a directory in {}", parent.display()));
            return None;
        };
        let backing = dir.path().join("loop.img");
        let f = std::fs::File::create(&backing).unwrap();
        f.set_len(size).unwrap();
        drop(f);
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&backing)
            .output()
            .unwrap();
        if !out.status.success() {
            skip(&format!(
                "losetup failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
            return None;
        }
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_string());
        let name = dev.file_name().unwrap().to_string_lossy().to_string();
        Some(LoopDev {
            dev,
            name,
            _dir: dir,
        })
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// A blkio cgroup (v1) limiting one device (the kernel's block throttle:
/// `blkio.throttle.{read,write}_{iops,bps}_device`); removed on drop.
/// Commands started with [`Throttle::command`] run inside it.
pub struct Throttle {
    dir: PathBuf,
    dev: String,
}

impl Throttle {
    /// A cgroup limiting `dev` to `value` for `what` (`read_iops`,
    /// `write_iops`, `read_bps`, `write_bps`); None (with a printed reason)
    /// where this kernel has no cgroup v1 blkio throttle.
    pub fn new(dev: &LoopDev, what: &str, value: u64) -> Option<Throttle> {
        let root = Path::new("/sys/fs/cgroup/blkio");
        if !root.join("blkio.throttle.write_iops_device").exists() {
            skip(&format!(
                "no cgroup v1 blkio throttle at {}",
                root.display()
            ));
            return None;
        }
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let dir = root.join(format!(
            "iosim-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).ok()?;
        let t = Throttle {
            dir,
            dev: dev.major_minor(),
        };
        t.set(what, value);
        Some(t)
    }

    /// Changes a limit (0 removes it), also while a command runs.
    pub fn set(&self, what: &str, value: u64) {
        std::fs::write(
            self.dir.join(format!("blkio.throttle.{what}_device")),
            format!("{} {value}", self.dev),
        )
        .unwrap();
    }

    /// Adds a limit on another device `dev` to the same cgroup (0 removes it).
    pub fn limit(&self, dev: &LoopDev, what: &str, value: u64) {
        std::fs::write(
            self.dir.join(format!("blkio.throttle.{what}_device")),
            format!("{} {value}", dev.major_minor()),
        )
        .unwrap();
    }

    /// `iosim ARGS` started inside the cgroup.
    pub fn command<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg("echo $$ > \"$0\" && exec \"$@\"")
            .arg(self.dir.join("cgroup.procs"))
            .arg(bin())
            .args(args)
            .env("XDG_DATA_HOME", test_data_home())
            .current_dir(scratch_dir());
        c
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Tests that load the machine's disk hard (five qualifications in a row)
/// and tests that judge a disk's counters against what iosim did (a loop
/// device's holder) take turns: the counters count every process's I/O.
pub fn disk_turn() -> std::sync::MutexGuard<'static, ()> {
    static DISK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    DISK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The kernel has one blk tracer: every test that runs `iosim capture` on a
/// real device (tests/replay.rs, the README's tour) holds this while it
/// traces, so two never trace at once (all tests share one binary).
pub fn kernel_tracer() -> std::sync::MutexGuard<'static, ()> {
    static TRACER: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TRACER.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts `iosim capture DEV --duration SECS -o OUT` (with `--json` on
/// its piped stdout when `json`; stderr piped) and returns once the device
/// is traced, before the caller's I/O. The caller holds [`kernel_tracer`]
/// and waits for the child.
#[allow(dead_code)]
pub fn start_capture(dev: &Path, duration: &str, out: &Path, json: bool) -> std::process::Child {
    let mut c = iosim();
    c.arg("capture").arg(dev).args(["--duration", duration]);
    if json {
        c.arg("--json");
    }
    let child = c
        .arg("-o")
        .arg(out)
        .stdout(if json {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        })
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_tracing(dev);
    child
}

/// Waits until `dev` is traced: its `trace/enable` on and, with the
/// kernel's blk tracer, tracing on (at most 20 s: a loaded machine took 4 s
/// to start the tracer, longer than the fixed 1.5 s this used to give it).
#[allow(dead_code)]
fn wait_for_tracing(dev: &Path) {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let name = std::fs::canonicalize(dev)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().to_string()))
        .unwrap_or_default();
    let enable = format!("/sys/block/{name}/trace/enable");
    let t = std::time::Instant::now();
    while t.elapsed() < std::time::Duration::from_secs(20) {
        let traced = read(&enable) == "1";
        let tracer_on = read("/sys/kernel/tracing/current_tracer") != "blk"
            || read("/sys/kernel/tracing/tracing_on") == "1";
        if traced && tracer_on {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
}

/// Ends a test that cannot run here, with `why` printed; under CI
/// (`CI=true`) a skipped test fails instead.
pub fn skip(why: &str) {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true, and this test cannot run: {why}"
    );
    eprintln!("skipped: {why}");
}

/// Completed reads and writes of `dev` (kernel name) from /proc/diskstats.
pub fn diskstats(dev: &str) -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/diskstats").unwrap();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() > 7 && f[2] == dev {
            return (f[3].parse().unwrap(), f[7].parse().unwrap());
        }
    }
    panic!("{dev} not in /proc/diskstats");
}

/// Reads a file whole.
pub fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

/// A stdout whose reader has already gone away (`| head` after it exited):
/// every write to it fails with EPIPE, as on a pipe (a socket pair with one
/// end closed behaves the same and needs no unsafe code).
pub fn closed_pipe() -> std::process::Stdio {
    let (reader, writer) = std::os::unix::net::UnixStream::pair().unwrap();
    drop(reader);
    std::os::fd::OwnedFd::from(writer).into()
}

/// Runs `cmd` with its stdout a closed pipe; asserts it stopped quietly
/// (exit 141, as a tool killed by SIGPIPE, no panic or error message).
pub fn assert_quiet_on_closed_pipe(cmd: &mut Command) {
    let out = cmd
        .stdout(closed_pipe())
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{cmd:?}: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("error:"),
        "{cmd:?}: {err}"
    );
}

/// tests/fuse/rig.py mounted at `mnt` over the directory `back`; killed and
/// unmounted on drop.
pub struct FuseRig {
    child: std::process::Child,
    mnt: PathBuf,
}

impl FuseRig {
    /// Mounts the rig with `--mode MODE --journal FILE` and `args`; None
    /// (with a printed reason) where FUSE, fusermount3 or python3-fusepy is
    /// missing.
    pub fn mount(back: &Path, mnt: &Path, journal: &Path, args: &[&str]) -> Option<FuseRig> {
        const PY: &str = "/usr/bin/python3";
        if !Path::new("/dev/fuse").exists() {
            skip("no /dev/fuse");
            return None;
        }
        let fusepy = Command::new(PY).args(["-c", "import fusepy"]).output();
        if !fusepy.is_ok_and(|o| o.status.success()) {
            skip("Debian's python3-fusepy is not installed (apt-get install -y fuse3 python3-fusepy)");
            return None;
        }
        if !have("fusermount3") {
            skip("fusermount3 (package fuse3) is not installed");
            return None;
        }
        let child = Command::new(PY)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuse/rig.py"))
            .arg("mount")
            .args([back, mnt])
            .arg("--journal")
            .arg(journal)
            .args(args)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("start the FUSE rig");
        let rig = FuseRig {
            child,
            mnt: mnt.to_path_buf(),
        };
        let t0 = std::time::Instant::now();
        while !rig.mounted() {
            assert!(
                t0.elapsed() < std::time::Duration::from_secs(30),
                "the FUSE rig did not mount {}",
                mnt.display()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Some(rig)
    }

    /// Power loss: SIGKILL, then the mount is torn down (what the rig had
    /// not written to `back` is gone).
    pub fn crash(self) {
        drop(self)
    }

    fn mounted(&self) -> bool {
        let m = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
        let want = self.mnt.to_string_lossy();
        m.lines().any(|l| l.split(' ').nth(1) == Some(&*want))
    }
}

impl Drop for FuseRig {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if self.mounted() {
            let _ = Command::new("fusermount3")
                .arg("-u")
                .arg("-z")
                .arg(&self.mnt)
                .status();
        }
    }
}

/// Runs `cmd` (stdout and stderr captured) for at most `limit`: its output
/// and how long it ran, or None when it was still running and was killed.
pub fn output_within(
    cmd: &mut Command,
    limit: std::time::Duration,
) -> Option<(std::process::Output, std::time::Duration)> {
    use std::process::Stdio;
    let t0 = std::time::Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let took = t0.elapsed();
    Some((child.wait_with_output().unwrap(), took))
}

/// Every value of attribute `name` in an HTML text (as a browser's
/// `--dump-dom` or iosim writes it: double quotes).
pub fn html_attrs<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let key = format!(" {name}=\"");
    html.split(&key)
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap_or(""))
        .collect()
}

/// The links of a page that break when its file is moved or mailed: every
/// `href` that is neither an absolute address (`https://`, `http://`) nor
/// an in-page `#anchor` naming an element of the page, and every `src`.
pub fn broken_links(html: &str) -> Vec<String> {
    let ids = html_attrs(html, "id");
    let mut bad: Vec<String> = html_attrs(html, "href")
        .into_iter()
        .filter(|h| match h.strip_prefix('#') {
            Some(a) => !ids.contains(&a),
            None => !(h.starts_with("https://") || h.starts_with("http://")),
        })
        .map(|h| format!("href={h}"))
        .collect();
    bad.extend(
        html_attrs(html, "src")
            .into_iter()
            .map(|s| format!("src={s}")),
    );
    bad
}

/// A stored qualification: tests/fixtures/csv/qualify.json (a 10 s
/// qualification of a directory on this project's VM, PRELIMINARY, data and
/// log in `/data`), edited by `edit`, saved to the history `db` with
/// `label`. Returns its run id.
pub fn stored_qualification(
    db: &Path,
    label: &str,
    edit: impl FnOnce(&mut iosim::qualify::QualifyResult),
) -> i64 {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/csv/qualify.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let mut doc: iosim::document::Document = serde_json::from_value(v).unwrap();
    let iosim::document::Document::Qualify(q) = &mut doc else {
        panic!("the fixture is a qualification");
    };
    edit(&mut q.body);
    iosim::store::Store::open(db)
        .unwrap()
        .save_document(&doc, Some(label), None)
        .unwrap()
}
