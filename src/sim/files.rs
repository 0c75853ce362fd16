//! The simulated database's files: creation, growth, shrink, deletion, and
//! the page-state table (last acknowledged generation, dirty generation and
//! latch of every page).

use crate::platform::io::RawFile;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use anyhow::Context;

use super::config::{FileCfg, SimConfig};
use crate::buf::{AlignedBuf, SparseTable};
use crate::verify::PAGE_SIZE;
use crate::workload::CacheMode;

/// Generation meaning "unknown content" (a write failed): not verified until rewritten.
pub const UNKNOWN_GEN: u32 = u32::MAX;
const MIB: u64 = 1 << 20;
pub use super::config::PAGES_PER_MB;

/// SQLIOSim's per-file counters, updated by every user.
#[derive(Debug, Default)]
pub struct FileCounters {
    /// Single-buffer reads.
    pub reads: AtomicU64,
    /// Vectored (scatter) reads.
    pub scatter_reads: AtomicU64,
    /// Single-buffer writes.
    pub writes: AtomicU64,
    /// Vectored (gather) writes.
    pub gather_writes: AtomicU64,
    /// Sum of I/O durations, ns.
    pub total_io_ns: AtomicU64,
    /// Times an I/O waited because the running average exceeded the target.
    pub throttled: AtomicU64,
    /// I/Os in flight now.
    pub outstanding: AtomicU64,
    /// Most I/Os in flight at once (SQLIOSim's "IO request blocks").
    pub peak_outstanding: AtomicU64,
}

/// One file of the simulated database.
pub struct SimFile {
    /// File id: its [FileN] number.
    pub id: u32,
    /// Index in every engine's file table.
    pub idx: u32,
    /// Path.
    pub path: PathBuf,
    /// Its configuration.
    pub cfg: FileCfg,
    /// Open file (O_DIRECT / O_DSYNC as configured).
    pub file: File,
    /// A block device (fixed size).
    pub is_device: bool,
    /// Created by this run.
    pub created: bool,
    /// Current size in pages.
    pub pages: AtomicU64,
    /// Largest size in pages.
    pub max_pages: u64,
    /// Last acknowledged generation of every page (0 = never written).
    pub gens: SparseTable<AtomicU32>,
    /// Generation waiting in the buffer pool (0 = clean).
    pub dirty: SparseTable<AtomicU32>,
    /// Page latches.
    latch: SparseTable<AtomicBool>,
    /// Counters.
    pub ctr: FileCounters,
    /// Running average I/O duration, ms (SQLIOSim's throttling metric).
    pub avg_ms: Mutex<f64>,
    /// Direct-I/O alignment.
    pub align: u64,
}

/// Holds latches on pages [first, first + n) of a file; releases them on drop.
pub struct Latch<'a> {
    f: &'a SimFile,
    first: u64,
    n: u64,
}

impl Drop for Latch<'_> {
    fn drop(&mut self) {
        for p in self.first..self.first + self.n {
            self.f.latch[p as usize].store(false, Ordering::Release);
        }
    }
}

impl SimFile {
    /// Raw descriptor.
    pub fn fd(&self) -> RawFile {
        crate::platform::io::raw_file(&self.file)
    }

    /// Current size in pages.
    pub fn page_count(&self) -> u64 {
        self.pages.load(Ordering::Acquire)
    }

    /// Latches pages [first, first + n) in ascending order (deadlock-free as
    /// every user latches ascending within one file at a time). Returns None
    /// when the range no longer lies inside the file (a shrink intervened).
    pub fn latch(&self, first: u64, n: u64) -> Option<Latch<'_>> {
        let end = first + n;
        if end > self.max_pages {
            return None;
        }
        let mut got = 0;
        for p in first..end {
            let l = &self.latch[p as usize];
            let mut spins = 0u32;
            while l
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                spins += 1;
                if spins < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
            got += 1;
        }
        let guard = Latch {
            f: self,
            first,
            n: got,
        };
        if end > self.page_count() {
            return None;
        }
        Some(guard)
    }

    /// Latches pages [first, first + n) whatever the current size (used by
    /// the shrink on the tail it removes). None only beyond MaxSize.
    pub fn latch_unchecked(&self, first: u64, n: u64) -> Option<Latch<'_>> {
        if first + n > self.max_pages {
            return None;
        }
        for p in first..first + n {
            let l = &self.latch[p as usize];
            while l
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                std::thread::yield_now();
            }
        }
        Some(Latch { f: self, first, n })
    }

    /// Records an I/O's start on this file.
    pub fn io_start(&self) {
        let n = self.ctr.outstanding.fetch_add(1, Ordering::AcqRel) + 1;
        self.ctr.peak_outstanding.fetch_max(n, Ordering::AcqRel);
    }

    /// Records an I/O's end: duration into the running average and totals.
    pub fn io_end(&self, ns: u64) {
        self.ctr.outstanding.fetch_sub(1, Ordering::AcqRel);
        self.ctr.total_io_ns.fetch_add(ns, Ordering::Relaxed);
        let mut avg = self.avg_ms.lock().expect("avg lock");
        *avg = running_average(*avg, ns as f64 / 1e6, AVERAGE_IOS);
    }

    /// The running average, ms.
    pub fn running_average_ms(&self) -> f64 {
        *self.avg_ms.lock().expect("avg lock")
    }
}

/// SQLIOSim's MaxIOs in its running average; its value is not documented.
pub const AVERAGE_IOS: f64 = 32.0;

/// SQLIOSim's running average: `avg = (avg x (MaxIOs - 1) + dur) / MaxIOs`.
pub fn running_average(avg: f64, dur_ms: f64, max_ios: f64) -> f64 {
    (avg * (max_ios - 1.0) + dur_ms) / max_ios
}

/// How the simulator opens its files under `cfg`.
pub fn cache_mode(cfg: &SimConfig) -> CacheMode {
    match (cfg.no_buffering, cfg.write_through) {
        (true, true) => CacheMode::DirectWritethrough,
        (true, false) => CacheMode::Direct,
        (false, true) => CacheMode::Writethrough,
        (false, false) => CacheMode::Buffered,
    }
}

/// What a `--dir` is for: both kinds of file, or only data or only log files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirRole {
    /// A plain `DIR`: data and log files when alone (SQLIOSim's `-dir`);
    /// among several, the last one without a `log=DIR` is the log's
    /// ([`place_in_dirs`]).
    Any,
    /// Data files only (`--dir data=DIR`).
    Data,
    /// Log files only (`--dir log=DIR`).
    Log,
}

/// Splits `data=DIR` / `log=DIR` / `DIR`.
pub fn parse_dir(text: &str) -> (DirRole, std::path::PathBuf) {
    if let Some(d) = text.strip_prefix("data=") {
        (DirRole::Data, d.into())
    } else if let Some(d) = text.strip_prefix("log=") {
        (DirRole::Log, d.into())
    } else {
        (DirRole::Any, text.into())
    }
}

/// Places the configured files in the directories by role, so that every
/// file is used and verified, as a DBA lays out a database:
/// - `data=DIR` gets every data file and `log=DIR` the log files;
/// - one plain `DIR` alone gets both (SQLIOSim's `-dir`);
/// - without a `log=DIR`, the last plain `DIR` is the log's and any other
///   plain `DIR` a data directory: `--dir /mnt/data --dir /mnt/log` puts the
///   data file in /mnt/data and the log in /mnt/log;
/// - with a `log=DIR`, every plain `DIR` is a data directory;
/// - with only `data=DIR`s, the log goes to the first of them (one log
///   file, not a copy per directory: the log writer fills one file before
///   the next, as SQL Server does, so copies would sit unused and unverified).
///
/// Returns the files and a note saying where the log went when that was
/// left to this rule among more than two directories.
pub fn place_in_dirs(
    base: &[FileCfg],
    dirs: &[(DirRole, PathBuf)],
) -> Result<(Vec<FileCfg>, Option<String>), String> {
    let put = |f: &FileCfg, d: &Path| {
        let name = f
            .name
            .file_name()
            .map(PathBuf::from)
            .unwrap_or_else(|| "sqliosim.mdx".into());
        FileCfg {
            name: d.join(name),
            ..f.clone()
        }
    };
    let has_log = dirs.iter().any(|(r, _)| *r == DirRole::Log);
    // Without log=DIR, the last plain DIR holds the log (and only the log)
    // when another directory holds the data.
    let log_by_position = (!has_log && dirs.len() > 1)
        .then(|| dirs.iter().rposition(|(r, _)| *r == DirRole::Any))
        .flatten();
    let data_dirs: Vec<&PathBuf> = dirs
        .iter()
        .enumerate()
        .filter(|(i, (r, _))| *r != DirRole::Log && Some(*i) != log_by_position)
        .map(|(_, (_, d))| d)
        .collect();
    if data_dirs.is_empty() {
        return Err(
            "every --dir is log=DIR: give a data=DIR (or a plain DIR) for the data files".into(),
        );
    }
    let mut note = None;
    let log_dirs: Vec<&PathBuf> = if let Some(i) = log_by_position {
        if dirs.len() > 2 {
            note = Some(format!(
                "the log file goes to {} (the last plain --dir) and the data files to the other directories: use --dir data=DIR and --dir log=DIR to place them otherwise",
                dirs[i].1.display()
            ));
        }
        vec![&dirs[i].1]
    } else if has_log {
        dirs.iter()
            .filter(|(r, _)| *r == DirRole::Log)
            .map(|(_, d)| d)
            .collect()
    } else {
        if data_dirs.len() > 1 {
            note = Some(format!(
                "the log file goes to the first directory only ({}): a log fills one file before the next, so copies in the other directories would stay unused and unverified; use --dir log=DIR to place it",
                data_dirs[0].display()
            ));
        }
        vec![data_dirs[0]]
    };
    let mut out = Vec::new();
    for d in &data_dirs {
        out.extend(base.iter().filter(|f| !f.log_file).map(|f| put(f, d)));
    }
    for d in &log_dirs {
        out.extend(base.iter().filter(|f| f.log_file).map(|f| put(f, d)));
    }
    Ok((out, note))
}

/// Deletes a file the simulator created or owns; refuses files iosim did not create.
pub fn delete_file(path: &Path, allow_destroy: bool) -> anyhow::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => {
            if !crate::target::is_iosim_file(path) && !allow_destroy {
                return Err(crate::Error::WouldDestroy(
                    path.to_path_buf(),
                    "DeleteFilesAtStartup/DeleteFilesAtShutdown would delete a file iosim did not create".into(),
                )
                .into());
            }
            // Never the file of another simulation still running.
            crate::targetlock::lock(path, crate::targetlock::LockMode::Exclusive)?;
            crate::targetlock::remove_file(path)
                .with_context(|| format!("cannot delete '{}'", path.display()))
        }
        _ => Ok(()),
    }
}

/// Opens (creating as needed) file `i` of the configuration.
pub fn open(cfg: &SimConfig, i: usize, allow_destroy: bool) -> anyhow::Result<SimFile> {
    let fc = cfg.files[i].clone();
    let path = fc.name.clone();
    if cfg.delete_files_at_startup {
        delete_file(&path, allow_destroy)?;
    }
    let meta = std::fs::metadata(&path).ok();
    if meta.is_some() {
        // Before any check or I/O: a file another process measures is refused.
        crate::targetlock::lock(&path, crate::targetlock::LockMode::Exclusive)?;
    }
    let is_device = meta
        .as_ref()
        .is_some_and(|m| crate::platform::fs::is_device(&path, m));
    let want = fc.initial_mb * MIB;
    let (initial_bytes, max_bytes, created) = if is_device {
        let size = claim_device(&path, want, allow_destroy)?;
        (size, size, false)
    } else {
        let created = claim_regular(&path, meta.as_ref(), allow_destroy)?;
        (want, fc.max_mb.max(fc.initial_mb) * MIB, created)
    };
    let file = open_for_io(cfg, &path)?;
    let max_pages = max_bytes / PAGE_SIZE as u64;
    // Sized for MaxSize, but sparse: memory only for the pages the run reaches.
    let state_pages = usize::try_from(if fc.log_file { 0 } else { max_pages }).map_err(|_| {
        anyhow::anyhow!(
            "'{}': MaxSize is too large for this machine's address space",
            path.display()
        )
    })?;
    let align = if is_device {
        crate::target::logical_block_size(&file).unwrap_or(512)
    } else {
        crate::target::dio_alignment(&path).unwrap_or(512)
    }
    .max(512);
    let sf = SimFile {
        id: i as u32 + 1,
        idx: i as u32,
        path: path.clone(),
        gens: SparseTable::new(state_pages)?,
        dirty: SparseTable::new(state_pages)?,
        latch: SparseTable::new(state_pages)?,
        cfg: fc,
        file,
        is_device,
        created,
        pages: AtomicU64::new(0),
        max_pages,
        ctr: FileCounters::default(),
        avg_ms: Mutex::new(cfg.target_io_duration_ms as f64),
        align,
    };
    if !is_device {
        start_at_initial_size(&sf, initial_bytes, cfg.stamp_files)?;
    } else {
        sf.pages
            .store(initial_bytes / PAGE_SIZE as u64, Ordering::Release);
    }
    Ok(sf)
}

/// Claims the block device `path` for the run (refused without
/// --allow-destroy, or when it is mounted or held); returns the bytes the
/// simulation uses of it: `want`, at most the device's size, in whole pages.
fn claim_device(path: &Path, want: u64, allow_destroy: bool) -> anyhow::Result<u64> {
    if !allow_destroy {
        return Err(crate::Error::WouldDestroy(
            path.to_path_buf(),
            "it is a block device and the simulation overwrites it".into(),
        )
        .into());
    }
    // O_EXCL on a block device fails with EBUSY when it is mounted or held.
    crate::platform::fs::open_exclusive(path).map_err(|e| {
        if crate::platform::fs::is_busy(&e) {
            anyhow::Error::new(crate::Error::DeviceInUse(
                path.to_path_buf(),
                "the device is mounted or held by another program".into(),
            ))
        } else {
            anyhow::Error::new(e).context(format!("cannot open '{}'", path.display()))
        }
    })?;
    let f = File::open(path)?;
    let dev = crate::target::device_size(&f)?;
    Ok(want.min(dev) / PAGE_SIZE as u64 * PAGE_SIZE as u64)
}

/// Claims the regular file `path` (`meta` when it exists) for the run: an
/// existing one only if iosim made it (or with --allow-destroy), otherwise
/// created new, locked and marked as iosim's. Returns whether it was created.
fn claim_regular(
    path: &Path,
    meta: Option<&std::fs::Metadata>,
    allow_destroy: bool,
) -> anyhow::Result<bool> {
    match meta {
        Some(m) if m.is_file() => {
            if !crate::target::is_iosim_file(path) && !allow_destroy {
                return Err(crate::Error::WouldDestroy(
                    path.to_path_buf(),
                    "the simulation overwrites it".into(),
                )
                .into());
            }
            Ok(false)
        }
        Some(_) => anyhow::bail!(
            "'{}' is neither a regular file nor a block device: choose another FileName",
            path.display()
        ),
        None => {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| {
                    if e.kind() == io::ErrorKind::NotFound {
                        anyhow::Error::new(crate::Error::MissingDirectory(
                            path.parent().unwrap_or(Path::new(".")).to_path_buf(),
                        ))
                    } else {
                        anyhow::Error::new(e).context(format!("cannot create '{}'", path.display()))
                    }
                })?;
            crate::targetlock::lock(path, crate::targetlock::LockMode::Exclusive)?;
            crate::target::mark_iosim_file(path);
            Ok(true)
        }
    }
}

/// Opens `path` for the run's I/O with the configuration's cache mode,
/// saying what to change when the file system refuses direct I/O.
fn open_for_io(cfg: &SimConfig, path: &Path) -> anyhow::Result<File> {
    let mode = cache_mode(cfg);
    crate::target::open_with_cache(path, mode, true).map_err(|e| {
        if crate::platform::fs::is_direct_refused(&e) && mode.is_direct() {
            anyhow::anyhow!(
                "direct I/O (O_DIRECT) is not supported for '{}': set NoBuffering=FALSE (and UseScatterGather=FALSE), or put the file on ext4 or xfs",
                path.display()
            )
        } else {
            anyhow::Error::new(e).context(format!("cannot open '{}'", path.display()))
        }
    })
}

/// Truncates the regular file `sf` and grows it to `initial_bytes`:
/// existing contents are never trusted. On failure the file is removed when
/// this run created it, and kept (the error says which) otherwise.
fn start_at_initial_size(sf: &SimFile, initial_bytes: u64, stamp: bool) -> anyhow::Result<()> {
    let path = &sf.path;
    let res = sf
        .file
        .set_len(0)
        .with_context(|| format!("cannot truncate '{}'", path.display()))
        .and_then(|()| resize(sf, 0, initial_bytes / PAGE_SIZE as u64, stamp));
    if let Err(e) = res {
        // Remove what this run created; keep (and say so) what it did not.
        let outcome = if sf.created && crate::targetlock::remove_file(path).is_ok() {
            crate::target::FileFate::Removed
        } else {
            crate::target::FileFate::Kept
        };
        return Err(crate::target::with_outcome(e, outcome, path));
    }
    Ok(())
}

/// Grows the file from `old` to `new` pages: sparse files by size only,
/// StampFiles by writing zeros, otherwise with fallocate (instant file
/// initialisation: the blocks are allocated but not written).
pub fn resize(f: &SimFile, old: u64, new: u64, stamp: bool) -> anyhow::Result<()> {
    let ps = PAGE_SIZE as u64;
    if new > old {
        let (off, len) = (old * ps, (new - old) * ps);
        if f.cfg.sparse {
            f.file.set_len(new * ps)?;
        } else if stamp {
            let chunk = AlignedBuf::new(1 << 20);
            let mut pos = off;
            while pos < off + len {
                let n = (off + len - pos).min(chunk.len() as u64) as usize;
                let r = crate::engine::write_at(f.fd(), &chunk.as_slice()[..n], pos);
                if r == -crate::platform::errno::ENOSPC || r == -crate::platform::errno::EDQUOT {
                    return Err(no_space(f, len).into());
                }
                if r < 0 {
                    return Err(io::Error::from_raw_os_error(-r))
                        .with_context(|| format!("cannot zero-fill '{}'", f.path.display()));
                }
                pos += r as u64;
            }
        } else {
            if let Err(e) = crate::platform::fs::preallocate(&f.file, off, len) {
                if crate::platform::errno::is_no_space(&e) {
                    return Err(no_space(f, len).into());
                }
                f.file.set_len(new * ps)?;
            }
        }
    } else if new < old {
        f.file.set_len(new * ps)?;
    }
    f.pages.store(new, Ordering::Release);
    Ok(())
}

fn no_space(f: &SimFile, len: u64) -> crate::target::Stopped {
    crate::target::Stopped::NoSpace {
        path: f.path.clone(),
        wanted: crate::units::format_size(len),
        outcome: String::new(),
        hint: "InitialSize or MaxSize",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> Vec<FileCfg> {
        super::super::config::default_files(Path::new(""), Some(64))
    }

    #[test]
    fn dirs_get_their_roles() {
        let (a, b) = (PathBuf::from("/a"), PathBuf::from("/b"));
        // One plain directory: both files, as SQLIOSim's -dir.
        let (f, note) = place_in_dirs(&pair(), &[(DirRole::Any, a.clone())]).unwrap();
        assert_eq!(f.len(), 2);
        assert!(note.is_none());
        // Where each file went: (data directories, log directories).
        let placed = |dirs: &[(DirRole, PathBuf)]| {
            let (f, note) = place_in_dirs(&pair(), dirs).unwrap();
            let of = |log: bool| -> Vec<PathBuf> {
                f.iter()
                    .filter(|x| x.log_file == log)
                    .map(|x| x.name.parent().unwrap().to_path_buf())
                    .collect()
            };
            (of(false), of(true), note)
        };
        let c = PathBuf::from("/c");
        // `--dir /a --dir /b`: data on /a, the log on /b, as a DBA reads it.
        let (data, log, note) = placed(&[(DirRole::Any, a.clone()), (DirRole::Any, b.clone())]);
        assert_eq!((data, log), (vec![a.clone()], vec![b.clone()]));
        assert!(note.is_none());
        // Three plain: data on the first two, the log on the last, said in a note.
        let (data, log, note) = placed(&[
            (DirRole::Any, a.clone()),
            (DirRole::Any, b.clone()),
            (DirRole::Any, c.clone()),
        ]);
        assert_eq!((data, log), (vec![a.clone(), b.clone()], vec![c.clone()]));
        assert!(note.unwrap().contains("log=DIR"));
        // data=/a and a plain /b: /b is the log's.
        let (data, log, _) = placed(&[(DirRole::Data, a.clone()), (DirRole::Any, b.clone())]);
        assert_eq!((data, log), (vec![a.clone()], vec![b.clone()]));
        // log=/c given: every plain directory is a data directory.
        let (data, log, _) = placed(&[
            (DirRole::Any, a.clone()),
            (DirRole::Any, b.clone()),
            (DirRole::Log, c.clone()),
        ]);
        assert_eq!((data, log), (vec![a.clone(), b.clone()], vec![c]));
        // Only data directories: the log once, in the first (every file used).
        let (data, log, note) = placed(&[(DirRole::Data, a.clone()), (DirRole::Data, b.clone())]);
        assert_eq!((data, log), (vec![a.clone(), b.clone()], vec![a.clone()]));
        assert!(note.unwrap().contains("log=DIR"));
        // Roles given: data on /a, log on /b.
        let (f, note) = place_in_dirs(
            &pair(),
            &[(DirRole::Data, a.clone()), (DirRole::Log, b.clone())],
        )
        .unwrap();
        assert!(note.is_none());
        assert_eq!(f.len(), 2);
        assert!(f
            .iter()
            .all(|x| x.name.starts_with(if x.log_file { &b } else { &a })));
        assert!(place_in_dirs(&pair(), &[(DirRole::Log, b)]).is_err());
        assert_eq!(parse_dir("log=/x").0, DirRole::Log);
        assert_eq!(parse_dir("data=/x").1, PathBuf::from("/x"));
        assert_eq!(parse_dir("/x").0, DirRole::Any);
    }

    #[test]
    fn running_average_follows_sqliosim() {
        let mut avg = 100.0;
        for _ in 0..1000 {
            avg = running_average(avg, 10.0, AVERAGE_IOS);
        }
        assert!((avg - 10.0).abs() < 0.01);
        assert_eq!(running_average(100.0, 132.0, 32.0), 101.0);
    }
}
