//! SQLIO and DiskSpd compatibility: their command lines, run on iosim's engine,
//! printed the way their own output looked, so existing scripts keep working.
//!
//! - [`sqlio`]: `iosim sqlio [SQLIO options] [file...]` (SQLIO 1.5);
//! - [`diskspd`]: `iosim diskspd [DiskSpd options] target...`;
//! - [`translate`]: `iosim translate sqlio|diskspd ...` prints the native `iosim run`.
//!
//! Both legacy tools glue values to their flags (`-frandom`, `-b8K`, `-Sh`) and
//! are case-sensitive, so each has a hand-written parser. Options that mean
//! nothing on Linux are accepted with one warning line each on stderr; options
//! iosim cannot honour are refused with an error naming them. Nothing is
//! silently misread. docs/sqlio.md and docs/diskspd.md map every option.
//!
//! Windows drive letters mean nothing on Linux: `--drive L=/mnt/data` (or the
//! environment variable `IOSIM_DRIVES="L=/mnt/data;F=/mnt/f"`) maps them, and
//! physical disk numbers (`#1` for DiskSpd, `-R1` for SQLIO) map with
//! `--disk 1=/dev/sdb` (or `IOSIM_DISKS`). Linux paths are accepted directly.

pub mod diskspd;
pub mod diskspd_args;
pub mod fio;
pub mod sqlio;
pub mod stored;
pub mod sysinfo;
pub mod translate;
pub mod xmlprofile;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::runner::{RunOptions, RunResult};
use crate::workload::EngineKind;

/// An error in a legacy command line, naming the option.
pub fn bad_option(tool: &str, opt: &str, why: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(crate::Error::BadOption {
        tool: tool.to_string(),
        option: opt.to_string(),
        why: why.to_string(),
    })
}

/// iosim's own options, accepted by both front ends (legacy tools never use `--`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extensions {
    /// Drive letter (upper case) to a Linux path.
    pub drives: BTreeMap<char, PathBuf>,
    /// Physical disk number to a block device.
    pub disks: BTreeMap<u32, PathBuf>,
    /// Allow writes to devices and files iosim did not create.
    pub allow_destroy: bool,
    /// Also write the RunResult JSON here.
    pub json: Option<PathBuf>,
    /// I/O engine (default io_uring).
    pub engine: Option<EngineKind>,
    /// SQLIO: size to create a missing test file with when no parameter file gives one.
    pub size: Option<u64>,
    /// No progress bars.
    pub quiet: bool,
    /// DiskSpd: the text layout to print (`2.2`, the default, or `2.0`).
    pub layout: Option<String>,
    /// History database (`--db PATH`; default as for `iosim run`).
    pub db: Option<PathBuf>,
    /// Do not store the result in the history (`--no-save`).
    pub no_save: bool,
    /// Label stored with the result (`--label NAME`).
    pub label: Option<String>,
}

/// What a compatibility front end measured: when it ran a workload, the
/// result with what it printed it from (`P`: the front end's own plan, so
/// that `iosim show` prints it again), and what `commands::finish` is left
/// to print and write.
pub struct Measured<P> {
    /// The run's result and what the front end prints it from (None for
    /// `-?` and DiskSpd's `-Rp`, which measure nothing).
    pub run: Option<(RunResult, P)>,
    /// What the front end printed on stdout while it ran: the beginning of
    /// `P`'s text (SQLIO's header and its files' preparation, printed as
    /// they happened); the rest is printed once the run is over.
    pub streamed: String,
    /// Said on stderr after the output (the run's notes, its self-checks,
    /// an interruption, its I/O errors).
    pub notes: Vec<String>,
    /// iosim's own options of the command line (history database, label, `--json`...).
    pub ext: Extensions,
}

impl<P> Measured<P> {
    /// Nothing was measured.
    pub fn nothing(ext: Extensions) -> Measured<P> {
        Measured {
            run: None,
            streamed: String::new(),
            notes: Vec::new(),
            ext,
        }
    }

    /// A measured run of `tool`, printed from `printed`, of which `streamed`
    /// is on stdout already; `args` are recorded in its notes, and the
    /// run's notes, self-checks, interruption and I/O errors are said on
    /// stderr after the output.
    pub fn run(
        tool: &str,
        args: &[String],
        mut res: RunResult,
        printed: P,
        streamed: String,
        ext: Extensions,
    ) -> Measured<P> {
        let mut notes: Vec<String> = res
            .notes
            .iter()
            .map(|n| format!("iosim {tool}: note: {n}"))
            .collect();
        notes.extend(
            res.warnings
                .iter()
                .map(|w| format!("iosim {tool}: WARNING ({}): {}", w.code.as_str(), w.message)),
        );
        if res.interrupted {
            notes.push(format!(
                "iosim {tool}: interrupted: the numbers cover {:.2} s",
                res.duration_s
            ));
        }
        res.notes.push(format!(
            "measured by: iosim {tool} {}",
            args.iter()
                .map(|a| shell_quote(a))
                .collect::<Vec<_>>()
                .join(" ")
        ));
        Measured {
            run: Some((res, printed)),
            streamed,
            notes,
            ext,
        }
    }
}

impl Extensions {
    /// Reads `IOSIM_DRIVES` and `IOSIM_DISKS` so unchanged scripts can run.
    pub fn from_env() -> anyhow::Result<Extensions> {
        let mut e = Extensions::default();
        if let Ok(v) = std::env::var("IOSIM_DRIVES") {
            for item in v.split([';', ',']).filter(|s| !s.trim().is_empty()) {
                e.add_drive(item.trim())?;
            }
        }
        if let Ok(v) = std::env::var("IOSIM_DISKS") {
            for item in v.split([';', ',']).filter(|s| !s.trim().is_empty()) {
                e.add_disk(item.trim())?;
            }
        }
        Ok(e)
    }

    /// Adds `L=/path`.
    pub fn add_drive(&mut self, spec: &str) -> anyhow::Result<()> {
        let bad = || anyhow::Error::new(crate::Error::BadDriveMapping(spec.to_string()));
        let (l, p) = spec.split_once('=').ok_or_else(bad)?;
        let l = l.trim().trim_end_matches(':');
        let mut chars = l.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return Err(bad());
        };
        if !c.is_ascii_alphabetic() || p.trim().is_empty() {
            return Err(bad());
        }
        self.drives
            .insert(c.to_ascii_uppercase(), PathBuf::from(p.trim()));
        Ok(())
    }

    /// Adds `N=/dev/xxx`.
    pub fn add_disk(&mut self, spec: &str) -> anyhow::Result<()> {
        let bad = || anyhow::Error::new(crate::Error::BadDiskMapping(spec.to_string()));
        let (n, p) = spec.split_once('=').ok_or_else(bad)?;
        let n: u32 = n
            .trim()
            .trim_start_matches('#')
            .parse()
            .map_err(|_| bad())?;
        if p.trim().is_empty() {
            return Err(bad());
        }
        self.disks.insert(n, PathBuf::from(p.trim()));
        Ok(())
    }

    /// Takes iosim's own `--` options out of `args`; returns the legacy arguments.
    pub fn split_args(&mut self, args: &[String]) -> anyhow::Result<Vec<String>> {
        let mut rest = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if !a.starts_with("--") {
                rest.push(a.clone());
                i += 1;
                continue;
            }
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (a.clone(), None),
            };
            let needs_value = matches!(
                name.as_str(),
                "--drive"
                    | "--disk"
                    | "--json"
                    | "--engine"
                    | "--size"
                    | "--layout"
                    | "--db"
                    | "--label"
            );
            let value = if needs_value {
                match inline {
                    Some(v) => Some(v),
                    None => {
                        i += 1;
                        Some(args.get(i).cloned().ok_or_else(|| {
                            anyhow::Error::new(crate::Error::BadWorkload(format!(
                                "{name} needs a value"
                            )))
                        })?)
                    }
                }
            } else {
                None
            };
            match (name.as_str(), value) {
                ("--drive", Some(v)) => self.add_drive(&v)?,
                ("--disk", Some(v)) => self.add_disk(&v)?,
                ("--json", Some(v)) => self.json = Some(PathBuf::from(v)),
                ("--engine", Some(v)) => {
                    self.engine = Some(match v.as_str() {
                        "uring" => EngineKind::Uring,
                        "sync" => EngineKind::Sync,
                        "null" => EngineKind::Null,
                        _ => anyhow::bail!(crate::Error::BadWorkload(format!(
                            "--engine '{v}': use uring, sync or null"
                        ))),
                    })
                }
                ("--size", Some(v)) => self.size = Some(crate::units::parse_size(&v)?),
                ("--layout", Some(v)) => self.layout = Some(v),
                ("--allow-destroy", None) => self.allow_destroy = true,
                ("--quiet", None) => self.quiet = true,
                ("--db", Some(v)) => self.db = Some(PathBuf::from(v)),
                ("--label", Some(v)) => self.label = Some(v),
                ("--no-save", None) => self.no_save = true,
                _ => anyhow::bail!(crate::Error::UnknownCompatOption(a.clone())),
            }
            i += 1;
        }
        Ok(rest)
    }

    /// Resolves a legacy target name to a Linux path.
    ///
    /// `X:\dir\file` and `X:file` use the `--drive` mapping of `X`; `X:` alone is the
    /// mapped path itself; `#N` is `--disk N`; UNC paths are refused; anything else is
    /// taken as a Linux path.
    pub fn resolve(&self, raw: &str) -> anyhow::Result<PathBuf> {
        if crate::platform::IS_WINDOWS {
            return Ok(self.resolve_native(raw));
        }
        if raw.starts_with("\\\\") {
            anyhow::bail!(crate::Error::UncPath(raw.to_string()));
        }
        if let Some(n) = raw.strip_prefix('#') {
            let n: u32 = n
                .parse()
                .map_err(|_| crate::Error::NotADiskNumber(raw.to_string()))?;
            return self.disk(n);
        }
        if let Some(rest) = raw.strip_prefix('\\') {
            // `\dir\file`: rooted on the current drive, which on Windows is the one
            // the script ran from: C: when mapped, else the only drive mapped.
            let base = match (self.drives.get(&'C'), self.drives.len()) {
                (Some(c), _) => c.clone(),
                (None, 1) => self.drives.values().next().cloned().unwrap_or_default(),
                _ => anyhow::bail!(crate::Error::RootedOnCurrentDrive(raw.to_string())),
            };
            let rest = rest.replace('\\', "/");
            return Ok(base.join(rest.trim_start_matches('/')));
        }
        let b = raw.as_bytes();
        if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
            let letter = (b[0] as char).to_ascii_uppercase();
            let base = self.drive(letter)?;
            let rest = raw[2..].replace('\\', "/");
            let rest = rest.trim_start_matches('/');
            return Ok(if rest.is_empty() {
                base
            } else {
                base.join(rest)
            });
        }
        // A relative Windows path (`DB52\\testfile.dat`): its backslashes are directory
        // separators, never part of a Linux file name.
        Ok(PathBuf::from(raw.replace('\\', "/")))
    }

    /// A Windows path on Windows: as it is (drive letters, UNC paths,
    /// `\\.\PhysicalDriveN`), except a drive letter or disk number the user
    /// mapped with `--drive`/`--disk`, and `#N` (DiskSpd's disk numbers),
    /// which is `\\.\PhysicalDriveN`.
    fn resolve_native(&self, raw: &str) -> PathBuf {
        if let Some(n) = raw.strip_prefix('#').and_then(|n| n.parse::<u32>().ok()) {
            return self
                .disks
                .get(&n)
                .cloned()
                .unwrap_or_else(|| PathBuf::from(format!("\\\\.\\PhysicalDrive{n}")));
        }
        let b = raw.as_bytes();
        if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
            if let Some(base) = self.drives.get(&(b[0] as char).to_ascii_uppercase()) {
                let rest = raw[2..].trim_start_matches(['\\', '/']);
                return if rest.is_empty() {
                    base.clone()
                } else {
                    base.join(rest)
                };
            }
        }
        PathBuf::from(raw)
    }

    /// The path a drive letter maps to.
    pub fn drive(&self, letter: char) -> anyhow::Result<PathBuf> {
        let letter = letter.to_ascii_uppercase();
        self.drives
            .get(&letter)
            .cloned()
            .ok_or_else(|| anyhow::Error::new(crate::Error::UnmappedDrive { letter }))
    }

    /// The block device a disk number maps to.
    pub fn disk(&self, n: u32) -> anyhow::Result<PathBuf> {
        self.disks
            .get(&n)
            .cloned()
            .ok_or_else(|| anyhow::Error::new(crate::Error::UnmappedDisk { disk: n }))
    }
}

/// Warnings for options accepted but ignored or approximated: one line each on stderr.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Warnings(pub Vec<String>);

impl Warnings {
    /// Adds a warning about `opt`.
    pub fn add(&mut self, opt: &str, msg: impl std::fmt::Display) {
        let line = format!("'{opt}': {msg}");
        if !self.0.contains(&line) {
            self.0.push(line);
        }
    }

    /// Prints them to stderr, prefixed with the tool name.
    pub fn print(&self, tool: &str) {
        for w in &self.0 {
            crate::say!("iosim {tool}: warning: {w}");
        }
    }
}

/// CPUs set in a mask such as `0x0F` or `15`; empty for 0 (any CPU).
pub fn mask_cpus(text: &str) -> Option<(u64, Vec<usize>)> {
    let t = text.trim();
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else {
        t.parse().ok()?
    };
    Some((v, (0..64).filter(|b| v & (1u64 << b) != 0).collect()))
}

/// CPUs this process may run on (its affinity), in order.
pub fn allowed_cpus() -> Vec<usize> {
    crate::platform::process::allowed_cpus()
}

/// Run options for a compatibility front end.
pub fn run_options(quiet: bool, stop: Arc<AtomicBool>, interval_ms: u64) -> RunOptions {
    use std::io::IsTerminal;
    RunOptions {
        progress: !quiet && std::io::stderr().is_terminal(),
        stop,
        interval: std::time::Duration::from_millis(interval_ms.max(10)),
        sync: None,
        thread_series: false,
        verify: None,
        metrics: None,
        hist_log: None,
    }
}

/// Quotes a word for a POSIX shell when it needs it.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[cfg(target_os = "linux")]
    fn ext() -> Extensions {
        let mut e = Extensions::default();
        e.add_drive("L=/mnt/data").unwrap();
        e.add_disk("1=/dev/loop7").unwrap();
        e
    }

    /// On Windows, Windows paths are used as they are; a mapped drive or
    /// disk number still maps, and `#N` is the physical drive.
    #[cfg(windows)]
    #[test]
    fn windows_paths_are_native_on_windows() {
        let mut e = Extensions::default();
        e.add_drive("L=D:\\data").unwrap();
        assert_eq!(e.resolve("F:\\x.dat").unwrap(), Path::new("F:\\x.dat"));
        assert_eq!(
            e.resolve("\\\\srv\\share\\x").unwrap(),
            Path::new("\\\\srv\\share\\x")
        );
        assert_eq!(
            e.resolve("L:\\a.dat").unwrap(),
            Path::new("D:\\data\\a.dat")
        );
        assert_eq!(e.resolve("#2").unwrap(), Path::new("\\\\.\\PhysicalDrive2"));
        assert_eq!(e.resolve("x.dat").unwrap(), Path::new("x.dat"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn windows_paths_map_through_drives() {
        let e = ext();
        assert_eq!(
            e.resolve("L:\\testfile.dat").unwrap(),
            Path::new("/mnt/data/testfile.dat")
        );
        assert_eq!(
            e.resolve("l:testfile.dat").unwrap(),
            Path::new("/mnt/data/testfile.dat")
        );
        assert_eq!(
            e.resolve("L:\\a\\b.dat").unwrap(),
            Path::new("/mnt/data/a/b.dat")
        );
        assert_eq!(e.resolve("L:").unwrap(), Path::new("/mnt/data"));
        assert_eq!(e.resolve("#1").unwrap(), Path::new("/dev/loop7"));
        assert_eq!(e.resolve("/tmp/x.dat").unwrap(), Path::new("/tmp/x.dat"));
        assert_eq!(e.resolve("x.dat").unwrap(), Path::new("x.dat"));
        let err = e.resolve("F:\\x.dat").unwrap_err().to_string();
        assert!(err.contains("--drive F="), "{err}");
        let unc = e.resolve("\\\\srv\\share\\x").unwrap_err();
        assert!(
            matches!(unc.downcast_ref(), Some(crate::Error::UncPath(_))),
            "{unc}"
        );
        assert!(e.resolve("#2").is_err());
        let not_a_disk = e.resolve("#x").unwrap_err();
        assert!(
            matches!(
                not_a_disk.downcast_ref(),
                Some(crate::Error::NotADiskNumber(_))
            ),
            "{not_a_disk}"
        );
        // Rooted and relative Windows paths never keep a backslash.
        assert_eq!(
            e.resolve("\\DB52\\testfile.dat").unwrap(),
            Path::new("/mnt/data/DB52/testfile.dat")
        );
        assert_eq!(
            e.resolve("DB52\\testfile.dat").unwrap(),
            Path::new("DB52/testfile.dat")
        );
        let mut two = e.clone();
        two.add_drive("X=/mnt/x").unwrap();
        let rooted = two.resolve("\\DB52\\t.dat").unwrap_err();
        assert!(
            matches!(
                rooted.downcast_ref(),
                Some(crate::Error::RootedOnCurrentDrive(p)) if p == "\\DB52\\t.dat"
            ),
            "{rooted}"
        );
        assert!(rooted.to_string().contains("--drive C="), "{rooted}");
        two.add_drive("C=/mnt/c").unwrap();
        assert_eq!(two.resolve("\\t.dat").unwrap(), Path::new("/mnt/c/t.dat"));
    }

    #[test]
    fn extensions_are_split_out() {
        let mut e = Extensions::default();
        let args: Vec<String> = [
            "-kR",
            "--drive",
            "X=/data",
            "-b8",
            "--json=/tmp/r.json",
            "--allow-destroy",
            "f",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let rest = e.split_args(&args).unwrap();
        assert_eq!(rest, vec!["-kR", "-b8", "f"]);
        assert_eq!(e.drives[&'X'], PathBuf::from("/data"));
        assert_eq!(e.json, Some(PathBuf::from("/tmp/r.json")));
        assert!(e.allow_destroy);
        let bogus = e.split_args(&["--bogus".to_string()]).unwrap_err();
        assert!(
            matches!(
                bogus.downcast_ref(),
                Some(crate::Error::UnknownCompatOption(o)) if o == "--bogus"
            ),
            "{bogus}"
        );
        let drive = e.add_drive("LL=/x").unwrap_err();
        assert!(
            matches!(drive.downcast_ref(), Some(crate::Error::BadDriveMapping(s)) if s == "LL=/x"),
            "{drive}"
        );
        let disk = e.add_disk("x=/dev/sdb").unwrap_err();
        assert!(
            matches!(disk.downcast_ref(), Some(crate::Error::BadDiskMapping(_))),
            "{disk}"
        );
    }

    #[test]
    fn masks() {
        assert_eq!(mask_cpus("0x0").unwrap(), (0, vec![]));
        assert_eq!(mask_cpus("0x5").unwrap(), (5, vec![0, 2]));
        assert_eq!(mask_cpus("3").unwrap(), (3, vec![0, 1]));
        assert!(mask_cpus("zz").is_none());
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/tmp/a.dat"), "/tmp/a.dat");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
