//! `iosim capture`: record a block device's I/O as blktrace files, for
//! `iosim replay` on candidate storage.
//!
//! Two ways, one output (blktrace's per-CPU files `NAME.blktrace.N`, which
//! `blkparse -i NAME` and `iosim replay NAME` read):
//!
//! - **blktrace** (Debian's package): runs `blktrace -d DEV -w SECS`, which
//!   reads the kernel's relay files in debugfs. debugfs is mounted at
//!   `/sys/kernel/debug` first when it is not.
//! - **tracefs**: the kernel's own `blk` tracer (`/sys/block/DEV/trace/enable`,
//!   `current_tracer=blk`, option `bin`), which writes the same
//!   `struct blk_io_trace` records to `trace_pipe`; iosim splits them into
//!   per-CPU files and numbers each CPU's records as blktrace does. This is
//!   the way on kernels that lock debugfs down (`Lockdown: blktrace: debugfs
//!   access is restricted`), and needs no package.
//!
//! `auto` (the default) tries blktrace and falls back to tracefs, saying why.

use crate::platform::fs::device_number;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::replay::blktrace::{self, Records};

/// How to capture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// blktrace, else tracefs.
    #[default]
    Auto,
    /// Debian's blktrace (debugfs relay files).
    Blktrace,
    /// The kernel's blk tracer through tracefs.
    Tracefs,
}

/// What to capture.
#[derive(Clone, Debug)]
pub struct CaptureConfig {
    /// The block device.
    pub device: PathBuf,
    /// How long.
    pub duration: Duration,
    /// Output NAME: files `NAME.blktrace.N`.
    pub output: PathBuf,
    /// How.
    pub method: Method,
}

/// What was captured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaptureReport {
    /// The device.
    pub device: PathBuf,
    /// Output NAME.
    pub output: PathBuf,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Method used.
    pub method: Method,
    /// Seconds traced.
    pub seconds: f64,
    /// Records written.
    pub events: u64,
    /// Events the kernel dropped (its buffers were full).
    pub dropped: u64,
    /// Where the device starts on its disk when it is a partition, bytes
    /// (the kernel traces disk offsets: replay with `--trace-offset` this).
    pub partition_start: Option<u64>,
    /// Things the user should know.
    pub notes: Vec<String>,
}

/// Why a capture failed.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// Not a block device.
    #[error("'{0}' is not a block device: capture traces a disk or partition such as /dev/nvme0n1 or /dev/sdb1 (`df DIR` or `lsblk` shows the one under a database's files); to replay onto a file, capture its device")]
    NotBlockDevice(PathBuf),
    /// The device is missing.
    #[error("cannot look at '{0}': {1}")]
    Missing(PathBuf, std::io::Error),
    /// blktrace asked for and not installed.
    #[error("blktrace is not installed: apt-get install blktrace (or use --method tracefs, which needs no package)")]
    NoBlktrace,
    /// blktrace failed.
    #[error("blktrace failed ({status}): {stderr}")]
    Blktrace {
        /// Exit status.
        status: String,
        /// What it said.
        stderr: String,
    },
    /// Files the capture would write exist (blktrace would overwrite them).
    #[error("{} already {}: capture writes NAME.blktrace.N (one per CPU) and never replaces a file it did not create; choose another -o NAME, or move those files away first", list_paths(.0), if .0.len() == 1 { "exists" } else { "exist" })]
    OutputExists(Vec<PathBuf>),
    /// The kernel's tracer is busy.
    #[error("the kernel's tracer is in use ({0}): stop the other tracing session first (echo nop > /sys/kernel/tracing/current_tracer)")]
    TracerBusy(String),
    /// tracefs or the device's trace switch is missing or refused.
    #[error("cannot use the kernel's blk tracer: {0}")]
    Tracefs(String),
    /// Other I/O on the way.
    #[error("{0}")]
    Io(String),
    /// Not on this operating system.
    #[error("capture traces with Linux's blk tracer (blktrace or tracefs), which {0} has not: capture on Linux and replay the trace here (`iosim replay` runs on {0})")]
    NotHere(&'static str),
}

/// `'a', 'b'` for an error message.
fn list_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| format!("'{}'", p.display()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// True when `dir` is a mount point of file system type `fstype`.
fn mounted(dir: &str, fstype: &str) -> bool {
    crate::sysmon::mounts::SysEnv::system()
        .mounts()
        .iter()
        .any(|m| m.mount_point == dir && m.fs_type == fstype)
}

/// Mounts `fstype` on `dir` unless it is there; Some(note) when it mounted.
fn ensure_mounted(dir: &str, fstype: &str) -> Result<Option<String>, CaptureError> {
    if mounted(dir, fstype) {
        return Ok(None);
    }
    let out = Command::new("mount")
        .args(["-t", fstype, fstype, dir])
        .output()
        .map_err(|e| {
            CaptureError::Io(format!("cannot run mount to mount {fstype} at {dir}: {e}"))
        })?;
    if !out.status.success() {
        return Err(CaptureError::Io(format!(
            "cannot mount {fstype} at {dir} ({}): run as root, or mount it yourself: mount -t {fstype} {fstype} {dir}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(Some(format!("mounted {fstype} at {dir}")))
}

/// The sysfs directory of a block device (`/sys/dev/block/MAJ:MIN`).
fn sysfs_dir(rdev: u64) -> PathBuf {
    let (maj, min) = crate::platform::fs::major_minor(rdev);
    PathBuf::from(format!("/sys/dev/block/{maj}:{min}"))
}

/// Captures as `cfg` says; `stop` (Ctrl-C) ends it early and keeps what was traced.
pub fn capture(cfg: &CaptureConfig, stop: &AtomicBool) -> Result<CaptureReport, CaptureError> {
    if crate::platform::IS_WINDOWS {
        return Err(CaptureError::NotHere(crate::platform::OS_NAME));
    }
    let meta =
        std::fs::metadata(&cfg.device).map_err(|e| CaptureError::Missing(cfg.device.clone(), e))?;
    if !crate::platform::fs::is_device(&cfg.device, &meta) {
        return Err(CaptureError::NotBlockDevice(cfg.device.clone()));
    }
    // Every name the capture may write: blktrace opens NAME.blktrace.<cpu>
    // for each CPU, truncating what is there.
    let existing = crate::replay::blktrace_files(&cfg.output);
    if !existing.is_empty() {
        return Err(CaptureError::OutputExists(existing));
    }
    let dir = cfg
        .output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(CaptureError::Io(format!(
            "the directory '{}' of -o does not exist: create it first",
            dir.display()
        )));
    }
    let mut notes = Vec::new();
    let have_blktrace = which("blktrace");
    let method = match cfg.method {
        Method::Blktrace if !have_blktrace => return Err(CaptureError::NoBlktrace),
        Method::Auto if !have_blktrace => {
            notes.push("blktrace is not installed (apt-get install blktrace): captured with the kernel's blk tracer through tracefs instead (the same record format)".into());
            Method::Tracefs
        }
        Method::Auto => Method::Blktrace,
        m => m,
    };
    let mut report = match method {
        Method::Blktrace => match run_blktrace(cfg, stop, &mut notes) {
            Err(CaptureError::Blktrace { stderr, .. })
                if cfg.method == Method::Auto && locked_down(&stderr) =>
            {
                notes.push("the kernel forbids blktrace's debugfs files here (kernel lockdown): captured with the kernel's blk tracer through tracefs instead (the same record format)".into());
                run_tracefs(cfg, device_number(&meta), stop, &mut notes)?
            }
            r => r?,
        },
        _ => run_tracefs(cfg, device_number(&meta), stop, &mut notes)?,
    };
    // A partition's I/O is traced at disk offsets.
    let sys = sysfs_dir(device_number(&meta));
    if sys.join("partition").exists() {
        if let Some(start) = std::fs::read_to_string(sys.join("start"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
        {
            let bytes = start * 512;
            report.partition_start = Some(bytes);
            notes.push(format!(
                "{} is a partition starting at byte {bytes} of its disk, and the kernel traces disk offsets: replay with --trace-offset {bytes}",
                cfg.device.display()
            ));
        }
    }
    if report.events == 0 {
        notes.push(format!(
            "no I/O reached {} while it was traced: capture while the database is busy, or for longer",
            cfg.device.display()
        ));
    }
    if report.dropped > 0 {
        notes.push(format!(
            "{} events were dropped (the kernel's buffers were full): capture again with fewer other tasks running, or for a shorter time",
            report.dropped
        ));
    }
    report.notes = notes;
    Ok(report)
}

fn which(cmd: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(cmd).is_file()))
        .unwrap_or(false)
        || Path::new("/usr/sbin").join(cmd).is_file()
}

fn locked_down(stderr: &str) -> bool {
    stderr.contains("Operation not permitted") || stderr.contains("Permission denied")
}

/// Debian's blktrace for the duration, into the per-CPU files.
fn run_blktrace(
    cfg: &CaptureConfig,
    stop: &AtomicBool,
    notes: &mut Vec<String>,
) -> Result<CaptureReport, CaptureError> {
    if let Some(n) = ensure_mounted("/sys/kernel/debug", "debugfs")? {
        notes.push(n);
    }
    let dir = cfg
        .output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = cfg
        .output
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    let secs = cfg.duration.as_secs().max(1);
    // What was there before (nothing, as capture checked): a failed run
    // removes only the files it made.
    let before = crate::replay::blktrace_files(&cfg.output);
    let started = Instant::now();
    let mut child = Command::new("blktrace")
        .arg("-d")
        .arg(&cfg.device)
        .arg("-w")
        .arg(secs.to_string())
        .arg("-D")
        .arg(dir)
        .arg("-o")
        .arg(&name)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| CaptureError::Io(format!("cannot start blktrace: {e}")))?;
    let mut signalled = false;
    let status = loop {
        if let Some(s) = child
            .try_wait()
            .map_err(|e| CaptureError::Io(e.to_string()))?
        {
            break s;
        }
        if stop.load(Ordering::Relaxed) && !signalled {
            // blktrace stops cleanly on SIGINT and writes what it has.
            let _ = Command::new("kill")
                .arg("-INT")
                .arg(child.id().to_string())
                .status();
            signalled = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    let files = crate::replay::blktrace_files(&cfg.output);
    let failed = !status.success() || stderr.contains("FAILED") || stderr.contains("failed");
    if failed {
        for f in files.iter().filter(|f| !before.contains(f)) {
            let _ = std::fs::remove_file(f);
        }
        return Err(CaptureError::Blktrace {
            status: status.to_string(),
            stderr: stderr.trim().to_string(),
        });
    }
    let mut events = 0u64;
    for f in &files {
        let data = std::fs::read(f)
            .map_err(|e| CaptureError::Io(format!("cannot read '{}': {e}", f.display())))?;
        events += Records::new(&data, f).map_while(Result::ok).count() as u64;
    }
    Ok(CaptureReport {
        device: cfg.device.clone(),
        output: cfg.output.clone(),
        files,
        method: Method::Blktrace,
        seconds: started.elapsed().as_secs_f64(),
        events,
        dropped: dropped_of(&stderr),
        partition_start: None,
        notes: Vec::new(),
    })
}

/// Events blktrace reports as dropped: "You have N ( ... ) dropped events".
fn dropped_of(stderr: &str) -> u64 {
    stderr
        .lines()
        .filter(|l| l.contains("dropped events"))
        .filter_map(|l| l.split_whitespace().find_map(|w| w.parse::<u64>().ok()))
        .sum()
}

const TRACEFS: &str = "/sys/kernel/tracing";

fn tf(path: &str) -> PathBuf {
    Path::new(TRACEFS).join(path)
}

fn put(path: &Path, value: &str) -> Result<(), CaptureError> {
    std::fs::write(path, value).map_err(|e| {
        CaptureError::Tracefs(format!("cannot write '{value}' to {}: {e}", path.display()))
    })
}

/// Puts the kernel's tracer back as it was, whatever happened.
struct TracerGuard {
    enable: PathBuf,
    context_info: bool,
    tracing_on: String,
}

impl Drop for TracerGuard {
    fn drop(&mut self) {
        let _ = std::fs::write(tf("tracing_on"), "0");
        let _ = std::fs::write(tf("trace_options"), "nobin");
        if self.context_info {
            let _ = std::fs::write(tf("trace_options"), "context-info");
        }
        let _ = std::fs::write(tf("current_tracer"), "nop");
        let _ = std::fs::write(&self.enable, "0");
        let _ = std::fs::write(tf("tracing_on"), &self.tracing_on);
    }
}

/// The kernel's blk tracer in binary mode for the duration.
fn run_tracefs(
    cfg: &CaptureConfig,
    rdev: u64,
    stop: &AtomicBool,
    notes: &mut Vec<String>,
) -> Result<CaptureReport, CaptureError> {
    let enable = blk_tracer_free(cfg, rdev, notes)?;
    let guard = TracerGuard::start(enable)?;
    let mut pipe = crate::platform::fs::open_nonblocking(&tf("trace_pipe"))
        .map_err(|e| CaptureError::Tracefs(format!("cannot open trace_pipe: {e}")))?;
    let mut data = Vec::new();
    let mut buf = vec![0u8; 1 << 20];
    let started = Instant::now();
    put(&tf("tracing_on"), "1")?;
    while started.elapsed() < cfg.duration && !stop.load(Ordering::Relaxed) {
        if drain(&mut pipe, &mut buf, &mut data)? == 0 {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    put(&tf("tracing_on"), "0")?;
    let seconds = started.elapsed().as_secs_f64();
    drain(&mut pipe, &mut buf, &mut data)?;
    let dropped = overruns();
    // The tracer cannot be changed back while its pipe is open.
    drop(pipe);
    drop(guard);
    let (files, events) = write_per_cpu(&data, &cfg.output)?;
    if dropped > 0 {
        notes.push("raise /sys/kernel/tracing/buffer_size_kb to keep more events in the kernel between reads".into());
    }
    Ok(CaptureReport {
        device: cfg.device.clone(),
        output: cfg.output.clone(),
        files,
        method: Method::Tracefs,
        seconds,
        events,
        dropped,
        partition_start: None,
        notes: Vec::new(),
    })
}

/// Checks that the kernel has a blk tracer, nobody uses the tracer and
/// the device is not traced already (mounting tracefs if it must); returns
/// the device's `trace/enable` file.
fn blk_tracer_free(
    cfg: &CaptureConfig,
    rdev: u64,
    notes: &mut Vec<String>,
) -> Result<PathBuf, CaptureError> {
    if !Path::new(TRACEFS).join("trace_pipe").exists() {
        if let Some(n) = ensure_mounted(TRACEFS, "tracefs")? {
            notes.push(n);
        }
    }
    let tracers = std::fs::read_to_string(tf("available_tracers")).unwrap_or_default();
    if !tracers.split_whitespace().any(|t| t == "blk") {
        return Err(CaptureError::Tracefs(format!(
            "this kernel has no blk tracer (available: {}): it was built without CONFIG_BLK_DEV_IO_TRACE",
            tracers.trim()
        )));
    }
    let current = std::fs::read_to_string(tf("current_tracer")).unwrap_or_default();
    if current.trim() != "nop" {
        return Err(CaptureError::TracerBusy(format!(
            "current_tracer is {}",
            current.trim()
        )));
    }
    let enable = sysfs_dir(rdev).join("trace/enable");
    if !enable.exists() {
        return Err(CaptureError::Tracefs(format!(
            "{} does not exist",
            enable.display()
        )));
    }
    if std::fs::read_to_string(&enable).unwrap_or_default().trim() == "1" {
        return Err(CaptureError::TracerBusy(format!(
            "{} is already traced ({} is 1)",
            cfg.device.display(),
            enable.display()
        )));
    }
    Ok(enable)
}

impl TracerGuard {
    /// Sets the blk tracer up in binary mode on the device of `enable`,
    /// tracing off; what it changed is put back when the guard drops.
    fn start(enable: PathBuf) -> Result<TracerGuard, CaptureError> {
        let options = std::fs::read_to_string(tf("trace_options")).unwrap_or_default();
        let context_info = options.lines().any(|l| l.trim() == "context-info");
        let tracing_on =
            std::fs::read_to_string(tf("tracing_on")).map_or("1".into(), |s| s.trim().to_string());
        put(&tf("tracing_on"), "0")?;
        let guard = TracerGuard {
            enable: enable.clone(),
            context_info,
            tracing_on,
        };
        put(&tf("trace"), "")?;
        put(&enable, "1")?;
        put(&tf("current_tracer"), "blk")?;
        put(&tf("trace_options"), "bin")?;
        put(&tf("trace_options"), "nocontext-info")?;
        Ok(guard)
    }
}

/// Reads what `pipe` holds now into `data` (through `buf`); returns how many bytes.
fn drain(pipe: &mut File, buf: &mut [u8], data: &mut Vec<u8>) -> Result<usize, CaptureError> {
    let mut got = 0;
    loop {
        match pipe.read(buf) {
            Ok(0) => return Ok(got),
            Ok(n) => {
                data.extend_from_slice(&buf[..n]);
                got += n;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(got),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(CaptureError::Tracefs(format!(
                    "reading trace_pipe failed: {e}"
                )))
            }
        }
    }
}

/// Events the ring buffer overwrote, over all CPUs.
fn overruns() -> u64 {
    let Ok(dir) = std::fs::read_dir(tf("per_cpu")) else {
        return 0;
    };
    dir.flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stats")).ok())
        .flat_map(|s| {
            s.lines()
                .filter_map(|l| {
                    l.strip_prefix("overrun:")
                        .and_then(|v| v.trim().parse::<u64>().ok())
                })
                .collect::<Vec<_>>()
        })
        .sum()
}

/// Splits a merged record stream into `NAME.blktrace.<cpu>` files, each
/// CPU's records numbered 1, 2, 3... as blktrace's relay channels number them.
pub fn write_per_cpu(data: &[u8], output: &Path) -> Result<(Vec<PathBuf>, u64), CaptureError> {
    let name = Path::new("trace_pipe");
    let mut per_cpu: std::collections::BTreeMap<u32, (u32, Vec<u8>)> = Default::default();
    let mut events = 0u64;
    for r in Records::new(data, name) {
        let (rec, raw) = match r {
            Ok(x) => x,
            // A record cut by the end of the capture: keep what came before.
            Err(_) => break,
        };
        let e = per_cpu.entry(rec.cpu).or_default();
        e.0 += 1;
        let start = e.1.len();
        e.1.extend_from_slice(raw);
        blktrace::set_sequence(&mut e.1[start..], rec.big_endian, e.0);
        events += 1;
    }
    // blkparse reads NAME.blktrace.0 first: write it even when CPU 0 saw nothing.
    per_cpu.entry(0).or_default();
    let mut files = Vec::new();
    for (cpu, (_, bytes)) in per_cpu {
        let path = PathBuf::from(format!("{}.blktrace.{cpu}", output.display()));
        let written = crate::outfile::create(
            &path,
            "trace file",
            crate::outfile::Existing::Refuse(
                "may be an earlier capture: choose another -o NAME or move the old files away",
            ),
        )
        .map_err(|e| CaptureError::Io(e.to_string()))
        .and_then(|mut f| {
            files.push(path.clone());
            f.write_all(&bytes)
                .and_then(|_| f.sync_all())
                .map_err(|e| CaptureError::Io(format!("cannot write '{}': {e}", path.display())))
        });
        if let Err(e) = written {
            // Half a capture is no capture: remove the files made here (only those).
            for f in &files {
                let _ = std::fs::remove_file(f);
            }
            return Err(e);
        }
    }
    Ok((files, events))
}

impl CaptureReport {
    /// The text report.
    pub fn text(&self) -> String {
        let mut s = format!(
            "captured {} events from {} in {:.1} s ({}) into {}\n",
            self.events,
            self.device.display(),
            self.seconds,
            match self.method {
                Method::Blktrace => "blktrace",
                _ => "the kernel's blk tracer",
            },
            self.files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        for n in &self.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        s.push_str(&format!(
            "replay it with: iosim replay {} TARGET   (blkparse -i {} prints it)\n",
            self.output.display(),
            self.output.display()
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::blktrace::{encode, Record};

    #[test]
    fn per_cpu_files_are_numbered_like_blktrace() {
        let dir = tempfile::tempdir().unwrap();
        let mut data = Vec::new();
        for (i, cpu) in [1u32, 0, 1, 1].iter().enumerate() {
            data.extend_from_slice(&encode(&Record {
                big_endian: false,
                sequence: 0,
                time: i as u64,
                sector: 8,
                bytes: 4096,
                action: 1 | (1 << 16),
                pid: 0,
                device: 0,
                cpu: *cpu,
                pdu_len: 0,
            }));
        }
        data.extend_from_slice(&[0x07, 0x74]);
        let out = dir.path().join("t");
        let (files, events) = write_per_cpu(&data, &out).unwrap();
        assert_eq!(events, 4);
        assert_eq!(files.len(), 2);
        let one = std::fs::read(&files[1]).unwrap();
        let seqs: Vec<u32> = Records::new(&one, &files[1])
            .map(|r| r.unwrap().0.sequence)
            .collect();
        assert_eq!(seqs, vec![1, 2, 3]);
        // Writing again refuses to overwrite.
        assert!(write_per_cpu(&data, &out).is_err());
        assert_eq!(std::fs::read(&files[1]).unwrap(), one);
        // A failure part way removes what it made, and only that: the
        // user's NAME.blktrace.1 stays, the NAME.blktrace.0 made here goes.
        let other = dir.path().join("u");
        let user = dir.path().join("u.blktrace.1");
        std::fs::write(&user, b"the user's").unwrap();
        assert!(write_per_cpu(&data, &other).is_err());
        assert_eq!(std::fs::read(&user).unwrap(), b"the user's");
        assert!(!dir.path().join("u.blktrace.0").exists());
        assert_eq!(dropped_of("You have 12 (  0.0 MiB) dropped events\n"), 12);
    }
}
