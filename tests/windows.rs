//! The Windows build, tested here under Wine: `iosim.exe` (cross-compiled
//! by `.ci/windows.sh`, which names it in `IOSIM_WINDOWS_EXE`) run through
//! `.ci/wine-runner`. The IOCP engine's I/O is counted against the system
//! calls Wine makes for it (Wine performs each overlapped request as one
//! `pread64`/`pwrite64`), data is checked, the seeds' SQLIO and DiskSpd
//! command lines print the layouts the Linux tests hold them to (the same
//! helpers), a short simulation verifies its pages, and the ownership guard
//! refuses a user's file. What Wine cannot show (speed, real volumes and
//! disks, disk counters) is listed in docs/windows.md.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::compat::{assert_shape, sqlio_expected, stderr, stdout, words};

/// The cross-compiled binary, or None (with a printed reason; a failure in CI).
fn exe() -> Option<PathBuf> {
    match std::env::var_os("IOSIM_WINDOWS_EXE").map(PathBuf::from) {
        Some(p) if p.exists() => Some(p),
        Some(p) => panic!(
            "IOSIM_WINDOWS_EXE names {}, which does not exist",
            p.display()
        ),
        None => {
            crate::common::skip(
                "the Windows build is not built here: run .ci/windows.sh, or set IOSIM_WINDOWS_EXE",
            );
            None
        }
    }
}

/// The Windows name of a Linux path under Wine (drive Z: is the root).
fn win(p: &Path) -> String {
    format!("Z:{}", p.display()).replace('/', "\\")
}

/// `iosim.exe ARGS` under Wine, in `dir`, with drive letters L, F, G, H and X
/// mapped to `dir` (as a Windows user's drives would be) and the history in it.
fn wine(exe: &Path, dir: &Path) -> Command {
    let mut c = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/wine-runner"));
    let d = win(dir);
    c.arg(exe)
        .current_dir(dir)
        .env("XDG_DATA_HOME", win(&dir.join("xdg")))
        .env("IOSIM_DRIVES", format!("L={d};F={d};G={d};H={d};X={d}"));
    c
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// Runs `cmd` under strace; returns its output and how many `pread64` and
/// `pwrite64` calls any of its processes made on `file`. `--seccomp-bpf`:
/// only those two calls stop the traced processes (without it every call
/// Wine makes did, and the test took 13 to over 120 s in CI; 3-4 s with it).
fn traced(mut cmd: Command, dir: &Path, file: &Path) -> (Output, u64, u64) {
    let log = dir.join("strace.log");
    let mut s = Command::new("strace");
    s.args([
        "-f",
        "--seccomp-bpf",
        "-qq",
        "-y",
        "-e",
        "trace=pread64,pwrite64",
        "-o",
    ])
    .arg(&log)
    .arg(cmd.get_program())
    .args(cmd.get_args())
    .current_dir(dir);
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            s.env(k, v);
        }
    }
    let _ = &mut cmd;
    let out = s.output().expect("strace runs");
    let text = std::fs::read_to_string(&log).unwrap();
    let name = format!("{}>", file.display());
    let count = |call: &str| {
        text.lines()
            .filter(|l| l.contains(call) && l.contains(&name) && !l.contains("= -1"))
            .count() as u64
    };
    (out, count("pread64("), count("pwrite64("))
}

/// The IOCP engine's reads and writes are the ones it reports: the
/// difference between two runs of 300 and 600 I/Os per thread is exactly
/// what Wine performed on the file (fixed costs such as iosim's own checks
/// of the file cancel out), and at queue depth 8 nothing is reported that
/// was not performed.
#[test]
fn iocp_engine_counts_every_io_it_reports() {
    let Some(exe) = exe() else { return };
    if !crate::common::have("strace") {
        crate::common::skip("strace is not installed (apt-get install strace)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("count.dat");
    let t = win(&file);
    let o = wine(&exe, dir.path())
        .args([
            "run",
            &t,
            "--size",
            "8MiB",
            "--duration",
            "1",
            "-q",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    json(&o);
    let run = |n: u64, qd: u32, rw: &str| {
        let mut c = wine(&exe, dir.path());
        c.args([
            "run", &t, "--engine", "iocp", "--cache", "direct", "--warmup", "0",
        ])
        .args([
            "--threads",
            "2",
            "--rw",
            rw,
            "--allow-destroy",
            "-q",
            "-o",
            "json",
        ])
        .args(["--qd", &qd.to_string(), "--number-ios", &n.to_string()])
        .args(["--duration", "60"]);
        let (o, reads, writes) = traced(c, dir.path(), &file);
        let v = json(&o);
        assert_eq!(v["engine"], "iocp", "{v}");
        let r = v["total"]["read"]["ios"].as_u64().unwrap();
        let w = v["total"]["write"]["ios"].as_u64().unwrap();
        (r, w, reads, writes)
    };
    let a = run(300, 1, "randrw");
    let b = run(600, 1, "randrw");
    assert_eq!(a.0 + a.1, 600, "{a:?}");
    assert_eq!(b.0 + b.1, 1200, "{b:?}");
    assert_eq!(
        (b.2 - a.2, b.3 - a.3),
        (b.0 - a.0, b.1 - a.1),
        "Wine's pread64/pwrite64 on the file against iosim's reads/writes: {a:?} {b:?}"
    );
    let (r, w, reads, writes) = run(500, 8, "randread");
    assert_eq!((r, w), (1000, 0));
    // Up to 7 more per thread were in flight when each stopped, and iosim's own checks read a few.
    assert!(
        reads >= r && reads <= r + 2 * 7 + 64,
        "{reads} performed, {r} reported"
    );
    assert_eq!(writes, 0);
}

/// Direct and buffered I/O through IOCP, and the sync engine, read back what
/// they wrote (`--verify`), and say which engine did the work. A count of
/// I/Os, not a time: a busy machine under Wine may start its worker late.
#[test]
fn engines_read_back_what_they_wrote() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    for (i, (cache, qd, engine)) in [
        ("direct", "8", "iocp"),
        ("buffered", "8", "iocp"),
        ("writethrough", "4", "iocp"),
        ("buffered", "1", "sync"),
    ]
    .into_iter()
    .enumerate()
    {
        let t = win(&dir.path().join(format!("v{i}.dat")));
        let o = wine(&exe, dir.path())
            .args([
                "run", &t, "--size", "8MiB", "--rw", "randrw", "--warmup", "0",
            ])
            .args(["--number-ios", "400", "--duration", "120"])
            .args(["--cache", cache, "--qd", qd, "--verify", "-q", "-o", "json"])
            .output()
            .unwrap();
        let v = json(&o);
        assert_eq!(v["engine"], engine, "{cache} qd {qd}: {v}");
        let ver = &v["verify"];
        assert_eq!(ver["errors"]["count"], 0, "{cache}: {ver}");
        assert!(ver["writes"].as_u64().unwrap() > 0, "{cache}: {ver}");
        assert!(ver["reads_checked"].as_u64().unwrap() > 0, "{cache}: {ver}");
    }
}

/// Seed 000's SQLIO lines: the file made from a parameter file with a drive
/// letter, then a test line, in SQLIO's layout, with the lines seed 001's
/// PowerShell reads.
#[test]
fn sqlio_seed_lines_print_sqlios_layout() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("param.txt"), "L:\\testfile.dat 2 0x0 16\n").unwrap();
    let o = wine(&exe, dir.path())
        .args(words("sqlio -kW -s1 -fsequential -o4 -b64 -Fparam.txt"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let f = format!("{}\\testfile.dat", win(dir.path()));
    assert!(out.contains(&format!("expanding {f} ... done.")), "{out}");
    assert!(out.contains("IOs/sec: "), "{out}");
    let cmd = "-kR -s1 -frandom -o8 -b8 -LS -BN";
    let o = wine(&exe, dir.path())
        .arg("sqlio")
        .args(words(cmd))
        .arg(&f)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_shape(&stdout(&o), &sqlio_expected(cmd, &f, false), cmd);
}

/// Seed 004's DiskSpd lines print DiskSpd's sections, and on Windows the
/// "using I/O Completion Ports" line is what iosim did.
#[test]
fn diskspd_seed_lines_print_diskspds_layout() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    let o = wine(&exe, dir.path())
        .args(words(
            "diskspd -c16M -b4k -r -t2 -o4 -h -L -w40 -d1 -W0 f:Testdata.mdf",
        ))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for section in [
        "Command Line: ",
        "Input parameters:",
        "\t\tusing I/O Completion Ports",
        "System information:",
        "Results for timespan 1:",
        "Total IO",
        "Read IO",
        "Write IO",
        "  %-ile |  Read (ms) | Write (ms) | Total (ms)",
    ] {
        assert!(out.contains(section), "{section:?} missing:\n{out}");
    }
    let note = stderr(&o);
    assert!(note.contains("(iocp engine)"), "{note}");
    assert!(!note.contains("stands for it"), "{note}");
}

/// A short simulation on Windows paths verifies its pages and log blocks.
#[test]
fn sim_verifies_its_pages() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = win(dir.path());
    let ini = format!(
        "[CONFIG]\nMaxMemoryMB=16\nTestCycles=1\nTestCycleDuration=2\n\
         [File1]\nFileName={d}\\sim.mdx\nInitialSize=8\nMaxSize=16\nIncrement=1\n\
         [File2]\nFileName=L:\\sim.ldx\nInitialSize=4\nMaxSize=4\nLogFile=TRUE\n"
    );
    std::fs::write(dir.path().join("sim.ini"), ini).unwrap();
    let o = wine(&exe, dir.path())
        .args(["sim", "-q", "-o", "json", "--config", "sim.ini"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&o), stderr(&o)));
    assert_eq!(v["errors"]["count"], 0, "{:#}", v["errors"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(v["pages_verified"].as_u64().unwrap() > 0, "{v}");
    assert!(v["log_blocks_verified"].as_u64().unwrap() > 0, "{v}");
}

/// A file iosim did not create is never written: refused without
/// `--allow-destroy`, and left as it was.
#[test]
fn a_users_file_is_refused() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("precious.mdf");
    std::fs::write(&p, vec![7u8; 1 << 20]).unwrap();
    let o = wine(&exe, dir.path())
        .args(["run", &win(&p), "--rw", "write", "--duration", "1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--allow-destroy"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&p).unwrap(), vec![7u8; 1 << 20]);
    // Another system's engine is refused by name.
    let o = wine(&exe, dir.path())
        .args(["run", &win(&p), "--engine", "uring", "--duration", "1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("exists on Linux only"),
        "{}",
        stderr(&o)
    );
}
