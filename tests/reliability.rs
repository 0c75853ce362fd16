//! Reliability regressions (issue 12): test-file integrity, ownership of the
//! simulator's side files, concurrent first use of the history database,
//! honest out-of-space messages and resource bounds. Each test failed on the
//! code before its fix.

use crate::common;

use std::path::Path;
use std::process::Stdio;

use common::iosim;

/// Eight processes saving at once to a database that does not exist yet:
/// every one must succeed and every result must be stored.
#[test]
fn concurrent_first_use_of_history_stores_every_result() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("fresh.db");
        let children: Vec<_> = (0..8)
            .map(|i| {
                iosim()
                    .args([
                        "run", "--engine", "null", "--size", "1M", "-d", "100ms", "-q",
                    ])
                    .arg("--db")
                    .arg(&db)
                    .args(["--label", &format!("p{i}")])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let out = common::success(iosim().args(["history", "-o", "json", "--db"]).arg(&db));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let n = v
            .as_array()
            .or_else(|| v["runs"].as_array())
            .map_or(0, |a| a.len());
        assert_eq!(n, 8, "round {round}: {out}");
    }
}

/// A small simulator configuration in `dir` (8 MiB data file, 4 MiB log, 1 s).
fn sim_ini(dir: &Path, extra_config: &str, file1_extra: &str) -> std::path::PathBuf {
    let text = format!(
        "[CONFIG]\nMaxMemoryMB=16\nTestCycles=1\nTestCycleDuration=1\n{extra_config}\n\
         [File1]\nFileName={d}/sim.mdx\nInitialSize=8\nMaxSize=16\nIncrement=1\n{file1_extra}\n\
         [File2]\nFileName={d}/sim.ldx\nInitialSize=4\nMaxSize=4\nLogFile=TRUE\n",
        d = dir.display()
    );
    let p = dir.join("sim.cfg.ini");
    std::fs::write(&p, text).unwrap();
    p
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The simulator's error log never truncates a file iosim did not create:
/// neither the default `./sqliosim.log.xml` nor `--log`/ErrorFile.
#[test]
fn sim_refuses_to_truncate_a_user_file_at_its_error_log_path() {
    let d = tempfile::tempdir().unwrap();
    let precious = d.path().join("sqliosim.log.xml");
    std::fs::write(&precious, "my notes\n").unwrap();
    let out = iosim()
        .current_dir(d.path())
        .args(["sim", "-q", "--size", "8", "--duration", "1", "--no-save"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "must refuse");
    let err = stderr_of(&out);
    assert!(
        err.contains("error log") && err.contains("--allow-destroy"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "my notes\n");
    // Refused before any data file was made.
    assert!(!d.path().join("sqliosim.mdx").exists());

    // The same through ErrorFile in an INI.
    let notes = d.path().join("notes.txt");
    std::fs::write(&notes, "keep me\n").unwrap();
    let cfg = sim_ini(d.path(), &format!("ErrorFile={}", notes.display()), "");
    let out = iosim()
        .args(["sim", "-q", "--no-save", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(!out.status.success(), "must refuse");
    assert!(
        stderr_of(&out).contains("--allow-destroy"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "keep me\n");

    // A log iosim made itself is reused by the next run.
    let log = d.path().join("own.log");
    for _ in 0..2 {
        let out = iosim()
            .args(["sim", "-q", "--no-save", "--config"])
            .arg(&cfg)
            .arg("--log")
            .arg(&log)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
    }
}

/// `--dir data=d --dir data=d/../d` (one data directory twice) or one
/// FileName twice would delete and truncate files in use: refused, and
/// nothing is created.
#[test]
fn sim_refuses_duplicate_directories_and_file_names() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let alias = d.path().join("data/../data");
    let out = iosim()
        .current_dir(d.path())
        .args([
            "sim",
            "-q",
            "--size",
            "8",
            "--duration",
            "1",
            "--no-save",
            "--dir",
        ])
        .arg(format!("data={}", dir.display()))
        .arg("--dir")
        .arg(format!("data={}", alias.display()))
        .output()
        .unwrap();
    assert!(!out.status.success(), "must refuse");
    assert!(stderr_of(&out).contains("same file"), "{}", stderr_of(&out));
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing created"
    );

    let cfg = sim_ini(
        d.path(),
        "",
        &format!(
            "\n[File3]\nFileName={}/sim.mdx\nInitialSize=8\n",
            d.path().display()
        ),
    );
    let out = iosim()
        .args(["sim", "-q", "--no-save", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(!out.status.success(), "must refuse");
    let err = stderr_of(&out);
    assert!(err.contains("[File1]") && err.contains("[File3]"), "{err}");
}

/// Resource bounds of the simulator: a huge MaxSize or UserCount is refused
/// at once with the key and the limit, instead of aborting on a 2 TiB
/// allocation or starting threads until the machine dies.
#[test]
fn sim_refuses_configurations_that_cannot_fit() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        ("", "MaxSize=18446744073709551615", "MaxSize"),
        // 95 PB: its page-state tables would reserve more than 64 TiB of address space.
        ("", "MaxSize=100000000000", "MaxSize=100000000000"),
        // 100 TB from the start: 120 GB of page state in memory.
        (
            "",
            "InitialSize=104857600\nMaxSize=104857600",
            "InitialSize=104857600",
        ),
        (
            "\n[RandomUser]\nUserCount=9223372036854775807",
            "",
            "UserCount=9223372036854775807",
        ),
        (
            "\n[RandomUser]\nUserCount=1000\n[AuditUser]\nUserCount=9223372036854775807",
            "",
            "UserCount",
        ),
    ];
    for (config, file1, want) in cases {
        let cfg = sim_ini(d.path(), config, file1);
        let out = iosim()
            .args(["sim", "-q", "--no-save", "--config"])
            .arg(&cfg)
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert!(!out.status.success(), "{config}{file1}: must refuse");
        assert!(out.status.code().is_some(), "killed by a signal: {err}");
        assert!(err.contains(want), "{config}{file1}: {err}");
        assert!(
            err.contains("at most") || err.contains("limit") || err.contains("largest"),
            "{err}"
        );
        assert!(
            !d.path().join("sim.mdx").exists(),
            "refused before creating files"
        );
    }
}

/// A MaxSize far beyond the machine's memory runs: the page-state tables are
/// reserved for MaxSize but take memory only for the pages the run reaches
/// (4 PiB of MaxSize here reserves 4.5 TiB of address space; the process's
/// peak resident memory stays that of an ordinary small run).
#[test]
fn sim_page_state_is_sparse() {
    let d = tempfile::tempdir().unwrap();
    let cfg = sim_ini(d.path(), "", "MaxSize=4294967296");
    let mut child = iosim()
        .current_dir(d.path())
        .args(["sim", "-q", "--no-save", "--config"])
        .arg(&cfg)
        .arg("--log")
        .arg(d.path().join("e.xml"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    while child.try_wait().unwrap().is_none() {
        if let Some(kib) = std::fs::read_to_string(&status).ok().and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        }) {
            peak_kib = peak_kib.max(kib);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(peak_kib > 0);
    assert!(peak_kib < 512 * 1024, "peak resident memory {peak_kib} KiB");
}

/// True when no 4 KiB block of `p` is all zeros (iosim's random fill has
/// none; unwritten preallocated extents read as zeros).
fn fully_filled(p: &Path) -> bool {
    use std::io::Read;
    let mut f = std::fs::File::open(p).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            return true;
        }
        if buf[..n].chunks(4096).any(|b| b.iter().all(|&x| x == 0)) {
            return false;
        }
    }
}

/// Starts `iosim run` creating `p` and delivers `sig` while the file is being
/// filled. Returns the exit status, or None when creation finished first.
fn interrupt_creation(p: &Path, size: &str, sig: i32) -> Option<std::process::Output> {
    let child = iosim()
        .args([
            "run",
            "--size",
            size,
            "-d",
            "100ms",
            "-q",
            "--no-save",
            "--engine",
            "sync",
        ])
        .arg(p)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let t0 = std::time::Instant::now();
    loop {
        if iosim::target::mark_of(p) == iosim::target::Mark::Incomplete {
            std::thread::sleep(std::time::Duration::from_millis(30));
            // SAFETY: signalling our own child.
            unsafe { libc::kill(pid, sig) };
            break;
        }
        if iosim::target::mark_of(p) == iosim::target::Mark::Complete
            || t0.elapsed() > std::time::Duration::from_secs(60)
        {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let _ = child.wait_with_output();
            let _ = std::fs::remove_file(p);
            return None;
        }
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
    Some(child.wait_with_output().unwrap())
}

/// A creation killed mid-way (SIGKILL) leaves a file marked incomplete; the
/// next run refills it with a notice instead of measuring unwritten extents.
/// Ctrl-C (SIGINT) removes the partial file and exits 130.
#[test]
fn interrupted_creation_is_never_reused_as_complete() {
    let d = tempfile::tempdir().unwrap();
    for sig in [libc::SIGKILL, libc::SIGINT] {
        let p = d.path().join(format!("t{sig}.dat"));
        let mut got = None;
        for size in ["512M", "1G", "2G"] {
            got = interrupt_creation(&p, size, sig);
            if got.is_some() {
                break;
            }
        }
        let out = got.expect("creation always finished before it could be interrupted");
        if sig == libc::SIGINT {
            assert_eq!(out.status.code(), Some(130), "{}", stderr_of(&out));
            assert!(
                stderr_of(&out).contains("interrupted"),
                "{}",
                stderr_of(&out)
            );
            assert!(!p.exists() || iosim::target::mark_of(&p) == iosim::target::Mark::Incomplete);
        } else {
            assert!(p.exists(), "SIGKILL leaves the partial file");
            assert_eq!(
                iosim::target::mark_of(&p),
                iosim::target::Mark::Incomplete,
                "a killed creation is not complete"
            );
        }
        let len = std::fs::metadata(&p).map(|m| m.len()).ok();
        let size = len.map_or("512M".to_string(), |n| n.to_string());
        let out = iosim()
            .args([
                "run",
                "--size",
                &size,
                "-d",
                "100ms",
                "-q",
                "--no-save",
                "--engine",
                "sync",
            ])
            .arg(&p)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
        if sig == libc::SIGKILL {
            assert!(
                stderr_of(&out).contains("left incomplete"),
                "the rerun must say it refilled: {}",
                stderr_of(&out)
            );
        }
        assert_eq!(iosim::target::mark_of(&p), iosim::target::Mark::Complete);
        assert!(fully_filled(&p), "every block written after the rerun");
        std::fs::remove_file(&p).unwrap();
    }
}

/// A size-limited tmpfs mounted on a temporary directory, unmounted on drop.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    fn new(size: &str) -> Option<SmallFs> {
        if !common::is_root() {
            crate::common::skip("mounting a tmpfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "iosim-test"])
            .arg(dir.path())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            crate::common::skip("cannot mount a tmpfs");
            return None;
        }
        Some(SmallFs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
    }
}

/// Out of space: iosim removes what it created, keeps what it did not, and
/// says which happened (run and sim, new file and growing an existing one).
#[test]
fn out_of_space_says_what_became_of_the_file() {
    let Some(fs) = SmallFs::new("8M") else { return };
    let base = [
        "-d",
        "100ms",
        "-q",
        "--no-save",
        "--engine",
        "sync",
        "--cache",
        "buffered",
    ];

    // run, new file: removed.
    let p = fs.path().join("new.dat");
    let out = iosim()
        .args(["run", "--size", "16M"])
        .args(base)
        .arg(&p)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr_of(&out);
    assert!(
        err.contains("no space") && err.contains("created by this run and has been removed"),
        "{err}"
    );
    assert!(!p.exists(), "{err}");

    // run, growing an existing test file: kept at its size, contents intact.
    let p = fs.path().join("grow.dat");
    common::success(iosim().args(["create", "--size", "4M", "-q"]).arg(&p));
    let before = std::fs::read(&p).unwrap();
    let out = iosim()
        .args(["run", "--size", "16M"])
        .args(base)
        .arg(&p)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr_of(&out);
    assert!(
        err.contains("existed before this run") && err.contains("cut back"),
        "{err}"
    );
    assert!(!err.contains("has been removed"), "{err}");
    assert_eq!(
        std::fs::read(&p).unwrap(),
        before,
        "the original bytes are intact"
    );
    std::fs::remove_file(&p).unwrap();

    // sim, new files: every file this run created is removed, the error log too.
    let cfgdir = tempfile::tempdir().unwrap();
    let ini = |initial: u32, extra: &str| {
        let text = format!(
            "[CONFIG]\nMaxMemoryMB=16\nTestCycles=1\nTestCycleDuration=1\nNoBuffering=FALSE\nUseScatterGather=FALSE\n{extra}\n\
             [File1]\nFileName={d}/sim.ldx\nInitialSize=1\nMaxSize=1\nLogFile=TRUE\n\
             [File2]\nFileName={d}/sim.mdx\nInitialSize={initial}\nMaxSize={initial}\n",
            d = fs.path().display()
        );
        let p = cfgdir.path().join("c.ini");
        std::fs::write(&p, text).unwrap();
        p
    };
    let log = fs.path().join("errors.log");
    let sim = |cfg: &Path| {
        iosim()
            .args(["sim", "-q", "--no-save", "--config"])
            .arg(cfg)
            .arg("--log")
            .arg(&log)
            .output()
            .unwrap()
    };
    let out = sim(&ini(16, ""));
    assert!(!out.status.success());
    let err = stderr_of(&out);
    assert!(
        err.contains("no space") && err.contains("has been removed"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(fs.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}\n{err}");

    // sim, a data file from an earlier run (not deleted at startup): kept, and said so.
    let out = sim(&ini(2, "DeleteFilesAtStartup=FALSE"));
    assert!(out.status.success(), "{}", stderr_of(&out));
    let out = sim(&ini(16, "DeleteFilesAtStartup=FALSE"));
    assert!(!out.status.success());
    let err = stderr_of(&out);
    assert!(
        err.contains("existed before this run") && err.contains("kept"),
        "{err}"
    );
    assert!(fs.path().join("sim.mdx").exists(), "{err}");
}
