//! Targets: test files and block devices. Creating test files quickly with
//! incompressible data, opening them with the right cache flags, and the
//! safety rules that keep iosim from destroying data it did not create.
//!
//! A test file that iosim creates carries the extended attribute
//! `user.iosim` (value `testfile`). Writes go only to such files unless
//! `--allow-destroy` is given; writes to block devices always need it, and a
//! device that is mounted or held by another user (opened `O_EXCL` fails with
//! EBUSY) is always refused.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::Serialize;

use crate::buf::fill_random;
use crate::engine::pipeline::{Buffers, Done, Driver, Ended, Io, Next, Pipeline, Transfer};
use crate::engine::{self, EngineConfig, Op};
use crate::error::Error;
use crate::workload::{CacheMode, EngineKind, FillMode, OpenSync, TargetSpec, WorkloadSpec};

// The mark of iosim's files lives in `outfile` (which decides what becomes
// of a file at a path, and must not import this module back).
pub use crate::outfile::{is_iosim_file, mark_iosim_file, mark_of, Mark};
use crate::outfile::{set_mark, MARK_COMPLETE, MARK_FILLING};
use crate::targetlock::LockMode;

pub use crate::sysmon::content::TargetKind;

/// A target ready to run on.
#[derive(Debug, Serialize)]
pub struct PreparedTarget {
    /// Path as given.
    pub path: PathBuf,
    /// File, block device or null.
    pub kind: TargetKind,
    /// Size of the file or device, bytes.
    pub size: u64,
    /// First byte of the region used.
    pub region_start: u64,
    /// Length of the region used.
    pub region_len: u64,
    /// True when this run created (or extended) the file.
    pub created: bool,
    /// True when this run made the file: it did not exist (or was one an
    /// earlier iosim left incomplete, made again). A run that fails removes it.
    #[serde(skip)]
    pub made: bool,
    /// Alignment direct I/O needs on this target, bytes.
    pub dio_align: u64,
    /// Things the user should know (fallbacks, reuse).
    pub notes: Vec<String>,
    /// Exclusive open of a block device, held while writing so nobody mounts it meanwhile.
    #[serde(skip)]
    pub claim: Option<File>,
}

impl PreparedTarget {
    /// What the self-checks look at.
    pub fn region(&self) -> crate::sysmon::content::Region<'_> {
        crate::sysmon::content::Region {
            path: &self.path,
            kind: self.kind,
            start: self.region_start,
            len: self.region_len,
        }
    }
}

/// Options for [`prepare`] that are not part of the workload.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrepareOptions<'a> {
    /// Show a progress bar while creating files.
    pub progress: bool,
    /// Set on Ctrl-C; creation stops and removes the partial file.
    pub stop: Option<&'a AtomicBool>,
}

/// Prepares target `i` of `spec`: creates or checks it, applies the safety
/// rules, and works out the region and the direct-I/O alignment.
pub fn prepare(
    spec: &WorkloadSpec,
    i: usize,
    opts: PrepareOptions<'_>,
) -> anyhow::Result<PreparedTarget> {
    let t = &spec.targets[i];
    let mut notes = Vec::new();
    if spec.engine == EngineKind::Null {
        return null_target(spec, t, notes);
    }
    let path = &t.path;
    if spec.cache.is_direct() {
        // No device does direct I/O in units under 512 bytes: refuse before creating anything.
        check_direct_alignment(spec, path, t.offset, 512)?;
    }
    lock_existing(path, t.size, spec.writes(), &mut notes)?;
    let found = find_or_create(spec, t, opts, &mut notes)?;
    let (region_start, region_len) = region(path, found.size, t.offset, t.length, spec.bs)?;
    let dio_align = if found.kind == TargetKind::BlockDevice {
        File::open(path)
            .ok()
            .and_then(|f| logical_block_size(&f).ok())
            .unwrap_or(512)
    } else {
        dio_alignment(path).unwrap_or(512)
    };
    if spec.cache.is_direct() {
        check_direct_alignment(spec, path, region_start, dio_align)?;
    }
    Ok(PreparedTarget {
        path: path.clone(),
        kind: found.kind,
        size: found.size,
        region_start,
        region_len,
        created: found.created,
        made: found.made,
        dio_align,
        notes,
        claim: found.claim,
    })
}

/// The target of the null engine: nothing on the disk, only its region.
fn null_target(
    spec: &WorkloadSpec,
    t: &TargetSpec,
    notes: Vec<String>,
) -> anyhow::Result<PreparedTarget> {
    let size = t.size.unwrap_or(1 << 30);
    let (region_start, region_len) = region(&t.path, size, t.offset, t.length, spec.bs)?;
    Ok(PreparedTarget {
        path: t.path.clone(),
        kind: TargetKind::Null,
        size,
        region_start,
        region_len,
        created: false,
        made: false,
        dio_align: 1,
        notes,
        claim: None,
    })
}

/// Refuses a direct-I/O run whose `--bs`, `--align` or `offset` (its
/// region's first byte) is not a multiple of `align` on `path`.
fn check_direct_alignment(
    spec: &WorkloadSpec,
    path: &Path,
    offset: u64,
    align: u64,
) -> Result<(), Error> {
    for (what, value) in [
        ("--bs", spec.bs),
        ("--align", spec.effective_align()),
        ("--offset", offset),
    ] {
        if value % align != 0 {
            return Err(Error::Misaligned {
                what,
                value,
                align,
                path: path.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// What [`find_or_create`] found at a target's path (or made there).
struct Found {
    kind: TargetKind,
    size: u64,
    created: bool,
    made: bool,
    claim: Option<File>,
}

impl Found {
    /// A test file of `size` bytes.
    fn file(size: u64, created: bool, made: bool) -> Found {
        Found {
            kind: TargetKind::File,
            size,
            created,
            made,
            claim: None,
        }
    }
}

/// Looks at the target's path and, by what is there, creates the test file,
/// claims the block device, refills a file left incomplete or checks (and
/// grows) an existing file, applying the safety rules.
fn find_or_create(
    spec: &WorkloadSpec,
    t: &TargetSpec,
    opts: PrepareOptions<'_>,
    notes: &mut Vec<String>,
) -> anyhow::Result<Found> {
    let path = &t.path;
    if spec.sync_file_range.is_some() && !cfg!(target_os = "linux") {
        notes.push(
            "--sync-file-range does nothing here: this system has no sync_file_range, and its cache manager writes dirty pages back on its own".into(),
        );
    }
    match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let size = create_missing(spec, t, opts)?;
            Ok(Found::file(size, true, true))
        }
        Err(e) => Err(io_context(e, "cannot look at", path)),
        Ok(meta) if crate::platform::fs::is_device(path, &meta) => {
            open_device(spec, t, &meta, notes)
        }
        Ok(meta) if meta.is_file() && mark_of(path) == Mark::Incomplete => {
            let size = t.size.unwrap_or(meta.len());
            refill_incomplete(path, size, spec, opts, notes)?;
            Ok(Found::file(size, true, true))
        }
        Ok(meta) if meta.is_file() => existing_file(spec, t, meta.len(), opts, notes),
        Ok(_) => Err(Error::NotFileOrDevice {
            path: path.to_path_buf(),
        }
        .into()),
    }
}

/// Creates the missing test file of `t` (its directory must exist, and
/// `--size` say how large); returns its size.
fn create_missing(
    spec: &WorkloadSpec,
    t: &TargetSpec,
    opts: PrepareOptions<'_>,
) -> anyhow::Result<u64> {
    let path = &t.path;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(Error::MissingDirectory(dir.to_path_buf()).into());
    }
    let size = t.size.ok_or_else(|| Error::NoSizeToCreate(path.clone()))?;
    if size < spec.bs {
        return Err(Error::TooSmall {
            path: path.clone(),
            have: size,
            need: spec.bs,
        }
        .into());
    }
    create_test_file(path, size, spec.fill, opts)?;
    Ok(size)
}

/// A block device: a run that writes it needs `--allow-destroy` and claims
/// it exclusively (unless another rank of the job holds it); its size is
/// the device's.
fn open_device(
    spec: &WorkloadSpec,
    t: &TargetSpec,
    meta: &std::fs::Metadata,
    notes: &mut Vec<String>,
) -> anyhow::Result<Found> {
    let path = &t.path;
    if spec.fill == FillMode::Grow {
        return Err(Error::BadWorkload(format!(
            "--fill grow empties a file and lets the writes grow it, and {} is a block device: give a file on a file system",
            path.display()
        ))
        .into());
    }
    let claim = if spec.writes() {
        if !spec.allow_destroy {
            return Err(Error::WouldDestroy(
                path.clone(),
                "it is a block device and every byte of the region used would be overwritten"
                    .into(),
            )
            .into());
        }
        if claimed_by_job(path) {
            None
        } else {
            Some(claim_device(
                path,
                crate::platform::fs::device_number(meta),
            )?)
        }
    } else {
        None
    };
    let f = File::open(path).map_err(|e| io_context(e, "cannot open", path))?;
    let size = device_size(&f).map_err(|e| io_context(e, "cannot read the size of", path))?;
    if t.size.is_some() {
        notes.push("--size is ignored for a block device: use --length to limit the region".into());
    }
    Ok(Found {
        kind: TargetKind::BlockDevice,
        size,
        created: false,
        made: false,
        claim,
    })
}

/// An existing file of `size` bytes: a run writes it only when iosim made
/// it (or with `--allow-destroy`), and grows it to `--size` the same way.
fn existing_file(
    spec: &WorkloadSpec,
    t: &TargetSpec,
    mut size: u64,
    opts: PrepareOptions<'_>,
    notes: &mut Vec<String>,
) -> anyhow::Result<Found> {
    let path = &t.path;
    let writes = spec.writes();
    let owned = is_iosim_file(path);
    let mut created = false;
    if writes && !owned && !claimed_by_job(path) {
        // Unmarked may mean another iosim made it a moment ago and
        // has not marked it yet: its lock says so, with its PID. It takes
        // that lock just after creating the file, so a file about to be
        // refused is looked at for as long as a creator may take to lock
        // it (CI, 2026-12-02: refused as foreign in that moment; again
        // beside stress-ng --cpu 2 --hdd 1 after one look 20 ms later).
        if spec.allow_destroy {
            crate::targetlock::lock(path, LockMode::Shared)?;
        } else if let Some(held) = holder_within(path) {
            return Err(held.into());
        }
    }
    if writes && !owned && !spec.allow_destroy {
        return Err(Error::WouldDestroy(
            path.clone(),
            "it exists and was not created by iosim".into(),
        )
        .into());
    }
    if writes && spec.fill == FillMode::Grow {
        return emptied_to_grow(path, t.size.unwrap_or(size), spec, notes);
    }
    if let Some(want) = t.size {
        if want > size {
            if !owned && !spec.allow_destroy {
                return Err(Error::WouldDestroy(
                    path.clone(),
                    format!("it holds {size} bytes, --size asks for {want}, and iosim did not create it"),
                )
                .into());
            }
            extend_test_file(path, size, want, spec.fill, opts)?;
            notes.push(format!(
                "extended from {} to {}",
                crate::units::format_size(size),
                crate::units::format_size(want)
            ));
            size = want;
            created = true;
        } else if owned && want == size {
            notes.push(REUSED_NOTE.into());
        }
    }
    if writes && owned && spec.fill == FillMode::Allocated && !created {
        let f = OpenOptions::new().write(true).open(path)?;
        allocate_unwritten(&f, path, size)?;
        notes.push(ALLOCATED_AGAIN_NOTE.into());
    }
    Ok(Found::file(size, created, false))
}

/// `--fill grow`: the file is emptied (truncated to 0 bytes) for the run,
/// and its writes grow it up to `limit` (`--size`, else its size before).
fn emptied_to_grow(
    path: &Path,
    limit: u64,
    spec: &WorkloadSpec,
    notes: &mut Vec<String>,
) -> anyhow::Result<Found> {
    if limit < spec.bs {
        return Err(Error::BadWorkload(format!(
            "--fill grow empties {} and lets the writes grow it: give --size, how far it may grow (at least one block of {})",
            path.display(),
            crate::units::format_size(spec.bs)
        ))
        .into());
    }
    OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.set_len(0))
        .map_err(|e| io_context(e, "cannot empty", path))?;
    notes.push(format!(
        "emptied for this run (--fill grow): its writes grow it, up to {}",
        crate::units::format_size(limit)
    ));
    Ok(Found::file(limit, false, false))
}

/// Said when `--fill allocated` lays an existing iosim test file out unwritten for the run
/// (also a profile's file it created a moment before: the layout is then made twice).
const ALLOCATED_AGAIN_NOTE: &str =
    "its blocks are allocated and unwritten for this run (--fill allocated), as a new file of fio's or a new WAL segment is";

/// Why [`allocate_unwritten`] could not lay a file out.
#[derive(Debug, thiserror::Error)]
enum AllocateError {
    #[error("no space left to allocate '{0}'")]
    NoSpace(PathBuf),
    #[error("--fill allocated needs fallocate, and the file system of '{path}' has none ({source}): use --fill sparse (holes, no blocks allocated) or the default --fill random")]
    Unsupported { path: PathBuf, source: io::Error },
}

/// Lays out the first `len` bytes of `f` (at `path`) allocated but unwritten
/// ([`crate::platform::fs::allocate_unwritten`]).
fn allocate_unwritten(f: &File, path: &Path, len: u64) -> Result<(), AllocateError> {
    crate::platform::fs::allocate_unwritten(f, len).map_err(|e| {
        if crate::platform::errno::is_no_space(&e) {
            AllocateError::NoSpace(path.to_path_buf())
        } else {
            AllocateError::Unsupported {
                path: path.to_path_buf(),
                source: e,
            }
        }
    })
}

/// An I/O error on `path`, said as `<doing> '<path>'` (`cannot open`, ...).
fn io_context(e: io::Error, doing: &str, path: &Path) -> anyhow::Error {
    anyhow::Error::new(e).context(format!("{doing} '{}'", path.display()))
}

/// Makes again a test file left incomplete by an iosim that was killed (or
/// failed) while filling it: its data never reached the disk, so it is
/// filled again, never measured. Unless another iosim is filling it right
/// now: its lock refuses this one (naming it) before the file is removed
/// under it.
fn refill_incomplete(
    path: &Path,
    size: u64,
    spec: &WorkloadSpec,
    opts: PrepareOptions<'_>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    crate::targetlock::lock(path, LockMode::Exclusive)?;
    if size < spec.bs {
        return Err(Error::TooSmall {
            path: path.to_path_buf(),
            have: size,
            need: spec.bs,
        }
        .into());
    }
    let notice = format!(
        "'{}' was left incomplete by an earlier iosim that was stopped while filling it: it was filled again",
        path.display()
    );
    crate::say!("note: {notice}");
    notes.push(notice);
    crate::targetlock::remove_file(path)
        .map_err(|e| io_context(e, "cannot remove the incomplete", path))?;
    create_test_file(path, size, spec.fill, opts)
}

/// Locks the existing file or device `path` for this run before anything
/// reads or writes it ([`crate::targetlock`]): exclusively when the run
/// writes it, or grows or refills it (`want`, the size asked for), else
/// shared. Another rank of this job may hold the job's lock for it
/// (`--share-target`). A file system without locks gets a note.
fn lock_existing(
    path: &Path,
    want: Option<u64>,
    writes: bool,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let device = crate::platform::fs::is_device(path, &meta);
    if claimed_by_job(path) || !(meta.is_file() || device) {
        return Ok(());
    }
    let grows = meta.is_file()
        && (want.is_some_and(|w| w > meta.len()) || mark_of(path) == Mark::Incomplete);
    let mode = if writes || grows {
        LockMode::Exclusive
    } else {
        LockMode::Shared
    };
    if let crate::targetlock::Locked::Unsupported(e) = crate::targetlock::lock(path, mode)? {
        notes.push(format!(
            "'{}' could not be locked against other processes ({e}): make sure no other program writes it while iosim runs",
            path.display()
        ));
    }
    Ok(())
}

/// The region `[offset, offset+length)` clipped to `size`; errors if a block does not fit.
fn region(
    path: &Path,
    size: u64,
    offset: u64,
    length: Option<u64>,
    bs: u64,
) -> Result<(u64, u64), Error> {
    let avail = size.saturating_sub(offset);
    let len = length.map_or(avail, |l| l.min(avail));
    if len < bs {
        return Err(Error::TooSmall {
            path: path.to_path_buf(),
            have: len,
            need: bs,
        });
    }
    Ok((offset, len))
}

/// Opens a prepared target for I/O with the flags of `cache`.
pub fn open_for_io(t: &PreparedTarget, cache: CacheMode, write: bool) -> anyhow::Result<File> {
    open_checked(t, cache, OpenSync::None, write)
}

/// Opens a workload's target: `--cache` and, for `--sync-method open_*`,
/// O_DSYNC or O_SYNC.
pub fn open_for_workload(
    t: &PreparedTarget,
    spec: &WorkloadSpec,
    write: bool,
) -> anyhow::Result<File> {
    open_checked(t, spec.cache, spec.open_sync(), write)
}

fn open_checked(
    t: &PreparedTarget,
    cache: CacheMode,
    sync: OpenSync,
    write: bool,
) -> anyhow::Result<File> {
    let how = crate::platform::fs::OpenHow {
        write,
        direct: cache.is_direct(),
        sync: cache.is_sync() || sync == OpenSync::Dsync,
        full_sync: sync == OpenSync::Sync,
        overlapped: true,
    };
    crate::platform::fs::open(&t.path, how).map_err(|e| {
        if crate::platform::fs::is_direct_refused(&e) && cache.is_direct() {
            Error::DirectUnsupported(t.path.clone()).into()
        } else {
            io_context(e, "cannot open", &t.path)
        }
    })
}

/// Opens `path` for I/O with the flags of `cache`: on Linux O_DIRECT and/or
/// O_DSYNC (and O_NOATIME where allowed), on Windows
/// FILE_FLAG_NO_BUFFERING and/or FILE_FLAG_WRITE_THROUGH, as DiskSpd's
/// `-Su`, `-Sw` and `-Sh` do (`crate::platform::fs::open`). The handle is
/// opened for overlapped I/O on Windows, which every engine there uses.
pub fn open_with_cache(path: &Path, cache: CacheMode, write: bool) -> io::Result<File> {
    crate::platform::fs::open(
        path,
        crate::platform::fs::OpenHow {
            write,
            direct: cache.is_direct(),
            sync: cache.is_sync(),
            full_sync: false,
            overlapped: true,
        },
    )
}

/// True when direct I/O can be opened on `path` (an existing file).
pub fn direct_io_supported(path: &Path) -> bool {
    open_with_cache(path, CacheMode::Direct, false).is_ok()
}

/// Checks that `path` is an existing directory: a missing path is
/// [`Error::MissingDirectory`], a file or device [`Error::NotADirectory`]
/// (saying what it is and suggesting its directory).
pub fn check_directory(path: &Path) -> Result<(), Error> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(_) => return Err(Error::MissingDirectory(path.to_path_buf())),
    };
    if meta.is_dir() {
        return Ok(());
    }
    let kind = crate::platform::fs::kind_name(&meta);
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Err(Error::NotADirectory {
        path: path.to_path_buf(),
        kind,
        parent: parent.to_path_buf(),
    })
}

/// Creates a test file of `size` bytes filled as `fill` says. The file is
/// marked as iosim's but incomplete while it is filled, and complete only
/// after its data has reached the disk (fdatasync), so a creation that is
/// killed leaves a file the next run refills instead of measuring. On a
/// failure iosim sees (no space, Ctrl-C) the partial file is removed.
pub fn create_test_file(
    path: &Path,
    size: u64,
    fill: FillMode,
    opts: PrepareOptions<'_>,
) -> anyhow::Result<()> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                anyhow::Error::new(Error::MissingDirectory(
                    path.parent().unwrap_or(Path::new(".")).to_path_buf(),
                ))
            } else if e.kind() == io::ErrorKind::AlreadyExists {
                made_meanwhile(path, e)
            } else {
                io_context(e, "cannot create", path)
            }
        })?;
    drop(f);
    // Before the mark and the fill: another iosim that finds the file
    // meanwhile is refused by the lock, never refills it.
    lock_what_this_made(path)?;
    let marked = set_mark(path, MARK_FILLING);
    let res = write_fill(path, 0, size, fill, opts).and_then(|()| finish_fill(path, marked));
    if let Err(e) = res {
        let _ = crate::targetlock::remove_file(path);
        return Err(with_outcome(e, FileFate::Removed, path));
    }
    if !marked {
        crate::say!(
            "note: '{}' could not be marked as an iosim test file (this filesystem cannot hold {}); later write runs on it will need --allow-destroy",
            path.display(),
            crate::platform::fs::MARK_PLACE
        );
    }
    Ok(())
}

/// How long a process that made a test file may take to lock it, and how
/// long the one that found it made meanwhile looks for that lock, in tries
/// of [`LOCK_TRY_EVERY`] (1 s in all).
const LOCK_TRIES: u32 = 50;
/// The pause between two tries of [`LOCK_TRIES`].
const LOCK_TRY_EVERY: std::time::Duration = std::time::Duration::from_millis(20);

/// Another process made `path` between this one's look and its creation:
/// its creator locks it a moment later, so look for that lock a while, to
/// name the holder. The look asks for what this process came to do, write
/// (so the refusal says so), and lets go of its lock at once: held, it would
/// keep the creator from its own (two iosims started at once on a new file
/// both failed that way beside a loaded build).
fn made_meanwhile(path: &Path, e: io::Error) -> anyhow::Error {
    match holder_within(path) {
        Some(held) => held.into(),
        None => anyhow::Error::new(e).context(format!(
            "cannot create '{}': another program made it meanwhile",
            path.display()
        )),
    }
}

/// The lock another process holds on `path`, looked for as long as a
/// creator may take to take it ([`LOCK_TRIES`]); each look is a write lock
/// let go of at once.
fn holder_within(path: &Path) -> Option<crate::targetlock::TargetLockError> {
    for _ in 0..LOCK_TRIES {
        match crate::targetlock::lock(path, LockMode::Exclusive) {
            Err(held) => return Some(held),
            Ok(_) => {
                crate::targetlock::release(path);
                std::thread::sleep(LOCK_TRY_EVERY);
            }
        }
    }
    None
}

/// Locks the test file this process just made, exclusively. Another iosim
/// that found it made meanwhile looks for the lock with one it lets go of at
/// once ([`made_meanwhile`]): a refusal is retried for a moment, and
/// only a lock held that long is another process using the file.
fn lock_what_this_made(path: &Path) -> Result<(), crate::targetlock::TargetLockError> {
    let mut tries = 0;
    loop {
        match crate::targetlock::lock(path, LockMode::Exclusive) {
            Err(crate::targetlock::TargetLockError::InUse { .. }) if tries + 1 < LOCK_TRIES => {
                tries += 1;
                std::thread::sleep(LOCK_TRY_EVERY);
            }
            r => return r.map(drop),
        }
    }
}

/// Marks a filled file complete and makes the mark durable.
fn finish_fill(path: &Path, marked: bool) -> anyhow::Result<()> {
    // Unmarked (the filesystem cannot hold the mark): complete for this process only.
    set_mark(path, MARK_COMPLETE);
    if marked {
        OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.sync_all())
            .map_err(|e| io_context(e, "cannot sync", path))?;
    }
    Ok(())
}

/// Grows an iosim test file from `from` to `to` bytes, filling the new part.
/// Incomplete while it grows; on a failure it is cut back to `from` bytes
/// (the original bytes are untouched) and complete again.
pub fn extend_test_file(
    path: &Path,
    from: u64,
    to: u64,
    fill: FillMode,
    opts: PrepareOptions<'_>,
) -> anyhow::Result<()> {
    crate::targetlock::lock(path, LockMode::Exclusive)?;
    let was_ours = mark_of(path) == Mark::Complete;
    if was_ours {
        set_mark(path, MARK_FILLING);
    }
    let res = write_fill(path, from, to, fill, opts).and_then(|()| finish_fill(path, was_ours));
    res.map_err(|e| {
        // Give back what was added; the original bytes are untouched.
        let cut = OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(from));
        if was_ours {
            set_mark(path, MARK_COMPLETE);
        }
        let outcome = match cut {
            Ok(()) => FileFate::CutBack(from),
            Err(_) => FileFate::Kept,
        };
        with_outcome(e, outcome, path)
    })
}

/// Creating or growing a file stopped before it was filled; the message
/// says what became of the file (removed, cut back, kept).
#[derive(Debug, thiserror::Error)]
pub enum Stopped {
    /// The filesystem is full (or the quota reached).
    #[error("no space left on the device for '{path}' ({wanted} wanted){outcome}: free space, or ask for less with {hint}")]
    NoSpace {
        /// The file.
        path: PathBuf,
        /// Size asked for.
        wanted: String,
        /// `; <what became of the file>`.
        outcome: String,
        /// The option or key that sets the size.
        hint: &'static str,
    },
    /// Ctrl-C or SIGTERM.
    #[error("interrupted while creating '{path}'{outcome}")]
    Interrupted {
        /// The file.
        path: PathBuf,
        /// `; <what became of the file>`.
        outcome: String,
    },
}

/// True when `e` (or an error it wraps) is an interruption by Ctrl-C or
/// SIGTERM, which exits 130.
pub fn is_interrupted(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<Stopped>(),
            Some(Stopped::Interrupted { .. })
        ) || matches!(
            c.downcast_ref::<crate::error::Error>(),
            Some(crate::error::Error::InterruptedBeforeStart)
        )
    })
}

/// Adds what became of `path` to an error of creating or growing it.
pub fn with_outcome(mut e: anyhow::Error, outcome: FileFate, path: &Path) -> anyhow::Error {
    if let Some(Stopped::NoSpace { outcome: o, .. } | Stopped::Interrupted { outcome: o, .. }) =
        e.downcast_mut::<Stopped>()
    {
        *o = format!("; {}", outcome.describe());
        return e;
    }
    let what = format!("'{}': {}", path.display(), outcome.describe());
    e.context(what)
}

/// What became of a file after a failed creation or growth, said in the
/// error so the user knows what is on the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFate {
    /// iosim created it in this run and removed it.
    Removed,
    /// It existed before; it was cut back to its original size (bytes), its old contents intact.
    CutBack(u64),
    /// It existed before and was kept as it is now.
    Kept,
}

impl FileFate {
    /// One sentence for the user, about the file just named.
    pub fn describe(self) -> String {
        match self {
            FileFate::Removed => "it was created by this run and has been removed".into(),
            FileFate::CutBack(n) => format!(
                "it existed before this run and was kept, cut back to its original {} (its earlier contents are intact)",
                crate::units::format_size(n)
            ),
            FileFate::Kept => "it existed before this run and was kept as it is now".into(),
        }
    }
}

/// Preallocates `[from, to)` and writes it with `fill` data using large
/// sequential direct writes through the io_uring engine (sync if io_uring is
/// unavailable), so creation runs at the device's sequential write speed.
fn write_fill(
    path: &Path,
    from: u64,
    to: u64,
    fill: FillMode,
    opts: PrepareOptions<'_>,
) -> anyhow::Result<()> {
    let nospace = || Stopped::NoSpace {
        path: path.to_path_buf(),
        wanted: crate::units::format_size(to),
        outcome: String::new(),
        hint: "--size",
    };
    if fill == FillMode::Grow {
        // Made empty: the run's writes grow it.
        return Ok(());
    }
    let plain = OpenOptions::new().read(true).write(true).open(path)?;
    if fill == FillMode::Sparse {
        plain.set_len(to).map_err(|e| map_nospace(e, nospace))?;
        return Ok(());
    }
    if fill == FillMode::Allocated {
        return allocate_unwritten(&plain, path, to).map_err(|e| match e {
            AllocateError::NoSpace(_) => nospace().into(),
            other => anyhow::Error::new(other),
        });
    }
    if let Err(e) = crate::platform::fs::preallocate(&plain, from, to - from) {
        if crate::platform::errno::is_no_space(&e) {
            return Err(nospace().into());
        }
        // Filesystems without fallocate: extend, and let the writes allocate.
        plain.set_len(to).map_err(|e| map_nospace(e, nospace))?;
    }

    // The aligned body goes through O_DIRECT where possible; an unaligned head or tail through the page cache.
    let body_start = crate::units::align_up(from, 4096).min(to);
    let body_end = crate::units::align_down(to, 4096).max(body_start);
    let direct = open_with_cache(path, CacheMode::Direct, true).ok();
    let mut eng = fill_engine(direct.as_ref().unwrap_or(&plain), fill, from)?;
    // Compressible data is generated block by block as it is written.
    let gen = crate::workload::data::DataGen::for_fill(fill, 0, 0x5eed ^ from, 0);
    let pb = progress_bar(
        opts.progress,
        to - from,
        &format!("creating {}", path.display()),
    );
    let started = Instant::now();
    let seed = 0x5eed_u64 ^ from ^ (to << 17);
    let mut chunks = FillChunks {
        next: body_start,
        end: body_end,
        gen,
        fill,
        seed,
        done_bytes: 0,
        pb: &pb,
        path,
        nospace: &nospace,
    };
    // Submitted at once, not in groups: the device starts on each chunk as
    // soon as it is ready (see `--submit-batch`).
    let ended = Pipeline::new(FILL_SLOTS).run(eng.as_mut(), opts.stop, &mut chunks)?;
    if ended == Ended::Stopped {
        pb.abandon();
        return Err(Stopped::Interrupted {
            path: path.to_path_buf(),
            outcome: String::new(),
        }
        .into());
    }
    // Unaligned head and tail, buffered.
    let edge = edge_data(chunks.gen, fill, seed);
    for (start, end) in [(from, body_start), (body_end, to)] {
        if end > start {
            let n = (end - start) as usize;
            crate::platform::fs::write_all_at(&plain, &edge[..n], start)
                .map_err(|e| map_nospace(e, nospace))?;
        }
    }
    plain.sync_data().map_err(|e| map_nospace(e, nospace))?;
    pb.finish_and_clear();
    if opts.progress {
        say_created(path, to - from, fill, started);
    }
    Ok(())
}

/// Writes in flight at once in [`write_fill`].
const FILL_SLOTS: usize = 8;

/// The engine [`write_fill`] writes its body with, on `file`, its buffers
/// filled for `fill`.
fn fill_engine(
    file: &File,
    fill: FillMode,
    from: u64,
) -> anyhow::Result<Box<dyn engine::IoEngine>> {
    let cfg = EngineConfig {
        fds: vec![crate::platform::io::raw_file(file)],
        slots: FILL_SLOTS,
        slot_size: FILL_CHUNK as usize,
        ..EngineConfig::default()
    };
    let req = engine::EngineRequest {
        kind: EngineKind::native(),
        cache: CacheMode::Direct,
        qd: FILL_SLOTS as u32,
        sqpoll: false,
        hipri: false,
    };
    let (mut eng, _) = engine::create(&req, &cfg)?;
    if let FillMode::Zero | FillMode::Pattern(_) = fill {
        for s in 0..FILL_SLOTS {
            crate::workload::data::fill_fixed(eng.buffer(s), fill);
        }
    } else {
        // Random once per buffer; each write then only stamps its blocks
        // ([`FillChunks`]). The pipeline offers slot 0 first; the first chunk has
        // always been written from the buffer seeded with 7.
        for s in 0..FILL_SLOTS {
            let seed = (FILL_SLOTS - 1 - s) as u64;
            fill_random(eng.buffer(s), 0x5eed ^ from ^ (seed << 40));
        }
    }
    Ok(eng)
}

/// The data of [`write_fill`]'s unaligned head and tail.
fn edge_data(gen: Option<crate::workload::data::DataGen>, fill: FillMode, seed: u64) -> Vec<u8> {
    let mut edge = vec![0u8; 8192];
    if let Some(mut g) = gen {
        g.fill(&mut edge);
    } else if fill == FillMode::Random {
        fill_random(&mut edge, seed ^ 1);
    } else {
        crate::workload::data::fill_fixed(&mut edge, fill);
    }
    edge
}

/// Says how long creating `bytes` of `path` took, and how fast.
fn say_created(path: &Path, bytes: u64, fill: FillMode, started: Instant) {
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    crate::say!(
        "created {} ({}, {} data) in {:.1} s ({:.0} MiB/s)",
        path.display(),
        crate::units::format_size(bytes),
        match fill {
            FillMode::Sparse => "no".into(),
            FillMode::Allocated => "no data: allocated, unwritten,".into(),
            FillMode::Grow => "no data: empty, grown by the writes,".into(),
            f => f.name(),
        },
        secs,
        bytes as f64 / 1_048_576.0 / secs
    );
}

/// Bytes per write of [`write_fill`].
const FILL_CHUNK: u64 = 1 << 20;

/// The aligned body of [`write_fill`] as a pipeline driver: 1 MiB chunks in
/// order, each filled as `fill` says; a failed or short write ends it.
struct FillChunks<'a, N: Fn() -> Stopped> {
    next: u64,
    end: u64,
    gen: Option<crate::workload::data::DataGen>,
    fill: FillMode,
    seed: u64,
    done_bytes: u64,
    pb: &'a indicatif::ProgressBar,
    path: &'a Path,
    nospace: &'a N,
}

impl<N: Fn() -> Stopped> Driver for FillChunks<'_, N> {
    type Error = anyhow::Error;

    fn next(&mut self, slot: u32, bufs: &mut Buffers<'_>) -> Next {
        if self.next >= self.end {
            return Next::End;
        }
        let len = FILL_CHUNK.min(self.end - self.next) as u32;
        let buf = &mut bufs.get(slot)[..len as usize];
        if let Some(g) = &mut self.gen {
            g.fill(buf);
        } else if self.fill == FillMode::Random {
            // Like fio's scramble_buffers: the buffer stays random (incompressible) and
            // every 4 KiB block gets a unique 16-byte stamp (its offset), so no two blocks
            // of the file are equal and deduplicating storage cannot flatter the results.
            for (i, block) in buf.chunks_mut(4096).enumerate() {
                if block.len() >= 16 {
                    let off = self.next + (i as u64) * 4096;
                    block[..8].copy_from_slice(&(off ^ self.seed).to_le_bytes());
                    block[8..16]
                        .copy_from_slice(&off.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
                }
            }
        }
        let io = Io::new(0, Op::Write, self.next, len);
        self.next += u64::from(len);
        Next::Io(io)
    }

    fn complete(&mut self, d: &Done, _: &mut Buffers<'_>) -> anyhow::Result<()> {
        match d.outcome() {
            Transfer::Full => {}
            Transfer::Failed(errno) => {
                let e = io::Error::from_raw_os_error(errno);
                return Err(map_nospace(e, self.nospace)
                    .context(format!("writing '{}'", self.path.display())));
            }
            Transfer::Short(_) => {
                return Err(anyhow::anyhow!(
                    "short write while creating '{}'",
                    self.path.display()
                ))
            }
        }
        self.done_bytes += u64::from(d.len);
        self.pb.set_position(self.done_bytes);
        Ok(())
    }
}

fn map_nospace(e: io::Error, nospace: impl Fn() -> Stopped) -> anyhow::Error {
    if crate::platform::errno::is_no_space(&e) {
        nospace().into()
    } else {
        e.into()
    }
}

/// The note of a run that found its test file already made by iosim, at the size asked.
pub const REUSED_NOTE: &str = "reused the existing test file";

/// A progress bar on stderr, or a hidden one.
pub fn progress_bar(show: bool, len: u64, msg: &str) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new(len);
    // Cut to the terminal's width (crate::term): narrower terminals drop
    // the rate and time left, then the bar.
    pb.set_style(crate::term::style(&[
        (
            90,
            "{wide_msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        ),
        (50, "{wide_msg} [{bar:15}] {bytes}/{total_bytes}"),
        (0, "{wide_msg} {percent}%"),
    ]));
    pb.set_message(msg.to_string());
    pb
}

pub use crate::platform::fs::{device_size, logical_block_size};

pub use crate::platform::fs::dio_alignment;

/// Targets that another process of the same job holds for the whole run:
/// block devices an MPI rank on this host holds open exclusively, and files
/// the job's first rank naming them has locked (`--share-target`). This
/// process uses them without its own `O_EXCL` claim or lock, which would fail.
static CLAIMED_BY_JOB: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Records that `path` is claimed by another process of this job (see [`CLAIMED_BY_JOB`]).
pub fn set_claimed_by_job(path: &Path) {
    let mut v = CLAIMED_BY_JOB.lock().unwrap_or_else(|p| p.into_inner());
    if !v.iter().any(|p| p == path) {
        v.push(path.to_path_buf());
    }
}

fn claimed_by_job(path: &Path) -> bool {
    let v = CLAIMED_BY_JOB.lock().unwrap_or_else(|p| p.into_inner());
    v.iter().any(|p| p == path)
}

/// The block devices this process has claimed exclusively
/// ([`claim_device`]), by device number.
static CLAIMED_DEVICES: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

/// Opens a block device exclusively; EBUSY means it is mounted or held.
fn claim_device(path: &Path, rdev: u64) -> anyhow::Result<File> {
    let claimed = || {
        CLAIMED_DEVICES
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&rdev)
    };
    match crate::platform::fs::open_exclusive(path) {
        Ok(f) => {
            let mut v = CLAIMED_DEVICES.lock().unwrap_or_else(|p| p.into_inner());
            if !v.contains(&rdev) {
                v.push(rdev);
            }
            Ok(f)
        }
        // Workloads of one process running at once on one device (a profile
        // phase, `iosim qualify`): the claim held is this process's own. An
        // open descriptor alone proves nothing (the target's lock holds one,
        // and a mounted device is busy too): the claim must be this
        // process's exclusive open.
        Err(e)
            if crate::platform::fs::is_busy(&e)
                && claimed()
                && crate::sysmon::mounts::held_by_this_process(rdev) =>
        {
            File::open(path).map_err(|e| io_context(e, "cannot open", path))
        }
        Err(e) if crate::platform::fs::is_busy(&e) => {
            let why = crate::platform::fs::busy_reason(path).unwrap_or_else(|| why_busy(rdev));
            Err(Error::DeviceInUse(path.to_path_buf(), why).into())
        }
        Err(e) => Err(io_context(e, "cannot open", path)),
    }
}

/// Explains why a device is busy: where it is mounted, or that it is swap.
fn why_busy(rdev: u64) -> String {
    let (maj, min) = crate::platform::fs::major_minor(rdev);
    if let Some(m) = crate::sysmon::mounts::SysEnv::system()
        .mounts()
        .into_iter()
        .find(|m| (m.major, m.minor) == (maj, min))
    {
        return format!("it is mounted on {}", m.mount_point);
    }
    if crate::sysmon::mounts::is_swap(rdev) {
        return "it is used as swap".into();
    }
    "it is in use (mounted, a partition of it is mounted, or it is held by swap, LVM, RAID or device-mapper)".into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::TargetSpec;

    fn spec(path: &Path, size: Option<u64>, write_pct: u8) -> WorkloadSpec {
        WorkloadSpec {
            targets: vec![TargetSpec::new(path, size)],
            write_pct,
            cache: CacheMode::Buffered,
            ..Default::default()
        }
    }

    #[test]
    fn creates_marks_and_reuses() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.dat");
        let t = prepare(&spec(&p, Some(3 << 20), 100), 0, PrepareOptions::default()).unwrap();
        assert!(t.created);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 3 << 20);
        // Marked on the file, or (where the filesystem cannot hold the
        // mark: Wine's drives, FAT) for the rest of this process.
        assert!(is_iosim_file(&p));
        let data = std::fs::read(&p).unwrap();
        // Random fill: no long run of zeros.
        assert!(data
            .windows(64)
            .take(1000)
            .all(|w| w.iter().any(|&b| b != 0)));
        let t2 = prepare(&spec(&p, Some(3 << 20), 100), 0, PrepareOptions::default()).unwrap();
        assert!(!t2.created);
        assert_eq!(std::fs::read(&p).unwrap(), data, "reuse must not rewrite");
    }

    #[test]
    fn created_blocks_are_all_different() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("dedupe.dat");
        create_test_file(&p, 24 << 20, FillMode::Random, PrepareOptions::default()).unwrap();
        let data = std::fs::read(&p).unwrap();
        let blocks: std::collections::HashSet<&[u8]> = data.chunks(4096).collect();
        assert_eq!(
            blocks.len(),
            data.len() / 4096,
            "no two 4 KiB blocks may be equal"
        );
    }

    #[test]
    fn unaligned_size_is_filled_completely() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("odd.dat");
        create_test_file(
            &p,
            (1 << 20) + 1000,
            FillMode::Random,
            PrepareOptions::default(),
        )
        .unwrap();
        let data = std::fs::read(&p).unwrap();
        assert_eq!(data.len(), (1 << 20) + 1000);
        assert!(data[(1 << 20)..].iter().any(|&b| b != 0));
    }

    #[test]
    fn refuses_to_write_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("precious.db");
        std::fs::write(&p, vec![1u8; 1 << 16]).unwrap();
        let err = prepare(&spec(&p, None, 100), 0, PrepareOptions::default()).unwrap_err();
        assert!(err.to_string().contains("--allow-destroy"), "{err}");
        // Reading is fine.
        prepare(&spec(&p, None, 0), 0, PrepareOptions::default()).unwrap();
        let mut s = spec(&p, None, 100);
        s.allow_destroy = true;
        prepare(&s, 0, PrepareOptions::default()).unwrap();
    }

    #[test]
    fn missing_directory_and_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("nope/t.dat");
        let err = prepare(&spec(&p, Some(1 << 20), 0), 0, PrepareOptions::default()).unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        let p = dir.path().join("t.dat");
        let err = prepare(&spec(&p, None, 0), 0, PrepareOptions::default()).unwrap_err();
        assert!(err.to_string().contains("--size"), "{err}");
    }

    #[test]
    fn region_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.dat");
        let mut s = spec(&p, Some(1 << 20), 0);
        s.targets[0].offset = 64 << 10;
        s.targets[0].length = Some(128 << 10);
        let t = prepare(&s, 0, PrepareOptions::default()).unwrap();
        assert_eq!((t.region_start, t.region_len), (64 << 10, 128 << 10));
        s.targets[0].offset = (1 << 20) - 100;
        assert!(prepare(&s, 0, PrepareOptions::default()).is_err());
    }
}
