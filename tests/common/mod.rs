//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The iosim binary under test, run in [`scratch_dir`] unless the test sets
/// its own `current_dir`.
pub fn iosim() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iosim"));
    // Never write history into the real data directory from a test.
    c.env("XDG_DATA_HOME", std::env::temp_dir().join("iosim-test-xdg"));
    c.current_dir(scratch_dir());
    c
}

/// The working directory of a command whose test gives none: never the
/// checkout (cargo runs tests there), where what iosim writes to the current
/// directory by default (the simulator's `sqliosim.log.xml`, the
/// `iosim-unsaved-*.json` of a result the history could not store) would
/// land in the working tree. `.ci/run` fails when the tests leave the
/// working tree changed.
pub fn scratch_dir() -> PathBuf {
    let d = std::env::temp_dir().join("iosim-test-cwd");
    std::fs::create_dir_all(&d).unwrap();
    d
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
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let out = success(iosim().args(args).args(["--output", "json", "--quiet"]));
    serde_json::from_str(&out).unwrap()
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
            eprintln!("skipped: loop devices need root");
            return None;
        }
        if !have("losetup") {
            eprintln!("skipped: losetup is not installed");
            return None;
        }
        let Ok(dir) = tempfile::tempdir_in(parent) else {
            eprintln!("skipped: cannot make a directory in {}", parent.display());
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
            eprintln!(
                "skipped: losetup failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
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
