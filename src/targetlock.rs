//! Locks on the targets iosim uses, so that no two processes measure one
//! target (README, "Safety"): a run that writes a file or device holds an
//! exclusive lock on it, a run that only reads it a shared one, taken
//! before any I/O and held until the process ends (a profile's phases,
//! `iosim qualify`'s stages and a verify pass reuse the lock this process
//! holds). A second process is refused before it touches the target, with
//! the holder's PID and command where the system says them, so a verify
//! never reports as lost a write that another process made.
//!
//! The lock is the system's advisory file lock (`flock` on Linux, a byte
//! lock past any data with `LockFileEx` on Windows, in
//! [`crate::platform::fs::try_lock`]); other programs that do not lock are
//! not stopped by it. The ranks of one MPI job that split a target
//! (`--share-target`) hold one lock for the job: its first rank's.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use crate::platform::types::LockMode;
use crate::sysmon::locks::LockHolder;

/// Which file a lock is on: its device and inode where the system says
/// them, else its canonical path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Key {
    Inode(u64, u64),
    Path(PathBuf),
}

/// A lock this process holds: the open file that holds it, and how.
struct Held {
    key: Key,
    file: File,
    mode: LockMode,
}

/// Every lock this process holds, one per file (a second open of a file
/// would conflict with the first's lock, even in one process).
static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

/// Another process holds the target.
#[derive(Debug, thiserror::Error)]
pub enum TargetLockError {
    /// Another process holds a conflicting lock on the target.
    #[error(
        "refusing to {verb} '{path}': {who} {holds} it. Two processes on one target measure each other, \
         and a verify would blame the storage for the other's writes: wait for that run to end (or stop it), \
         or give this run another target",
        verb = if *mode == LockMode::Exclusive { "write to" } else { "read" },
        path = path.display(),
        who = describe(holders),
        holds = holds(holders)
    )]
    InUse {
        /// The target.
        path: PathBuf,
        /// The lock this run wanted.
        mode: LockMode,
        /// Who holds it, where the system says (empty: unknown).
        holders: Vec<LockHolder>,
    },
    /// The target could not be opened to lock it.
    #[error("cannot open '{path}' to lock it against other processes: {cause}: check the path and its permissions", path = path.display())]
    Open {
        /// The target.
        path: PathBuf,
        /// Why (named in the message, not a source).
        cause: io::Error,
    },
}

fn describe(holders: &[LockHolder]) -> String {
    if holders.is_empty() {
        return "another process (the system does not say which)".into();
    }
    let each: Vec<String> = holders
        .iter()
        .map(|h| match &h.command {
            Some(c) => format!("PID {} ({c})", h.pid),
            None => format!("PID {}", h.pid),
        })
        .collect();
    each.join(", ")
}

fn holds(holders: &[LockHolder]) -> &'static str {
    match holders {
        [] => "is using",
        h if h.iter().any(|h| h.writes) => "is writing",
        _ => "is reading",
    }
}

/// What [`lock`] did.
#[derive(Debug)]
pub enum Locked {
    /// This process holds the lock (taken now or earlier).
    Held,
    /// The file system (or device) has no locks: nothing keeps another
    /// process away; the error says why.
    Unsupported(io::Error),
}

fn key_of(path: &Path, meta: &std::fs::Metadata) -> Key {
    match crate::platform::fs::file_identity(meta) {
        Some((dev, ino)) => Key::Inode(dev, ino),
        None => Key::Path(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())),
    }
}

/// Locks the existing file or device `path` as `mode` for the rest of this
/// process, before any I/O on it: a lock this process already holds is
/// reused (a shared one made exclusive when a writer asks). Refused with
/// [`TargetLockError::InUse`] when another process holds a conflicting one.
pub fn lock(path: &Path, mode: LockMode) -> Result<Locked, TargetLockError> {
    let open_err = |cause| TargetLockError::Open {
        path: path.to_path_buf(),
        cause,
    };
    let meta = std::fs::metadata(path).map_err(open_err)?;
    let key = key_of(path, &meta);
    let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(h) = held.iter_mut().find(|h| h.key == key) {
        if h.mode >= mode {
            return Ok(Locked::Held);
        }
        return match crate::platform::fs::try_lock(&h.file, mode) {
            Ok(true) => {
                h.mode = mode;
                Ok(Locked::Held)
            }
            Ok(false) => Err(in_use(path, &meta, mode)),
            Err(e) => Ok(Locked::Unsupported(e)),
        };
    }
    let file = open(path, mode).map_err(open_err)?;
    match crate::platform::fs::try_lock(&file, mode) {
        Ok(true) => {
            held.push(Held { key, file, mode });
            Ok(Locked::Held)
        }
        Ok(false) => Err(in_use(path, &meta, mode)),
        Err(e) => Ok(Locked::Unsupported(e)),
    }
}

/// Opens `path` to hold its lock: for writing when the lock is exclusive
/// (NFS emulates `flock` with byte-range locks, which want it), else, or
/// where writing is not allowed, for reading.
fn open(path: &Path, mode: LockMode) -> io::Result<File> {
    if mode == LockMode::Exclusive {
        if let Ok(f) = OpenOptions::new().read(true).write(true).open(path) {
            return Ok(f);
        }
    }
    File::open(path)
}

fn in_use(path: &Path, meta: &std::fs::Metadata, mode: LockMode) -> TargetLockError {
    let holders = crate::platform::fs::file_identity(meta)
        .map(|(dev, ino)| crate::sysmon::locks::holders(dev, ino))
        .unwrap_or_default();
    TargetLockError::InUse {
        path: path.to_path_buf(),
        mode,
        holders,
    }
}

/// Lets go of this process's lock on `path`, if it holds one (before the
/// file is removed: Windows keeps the name of a file open elsewhere).
pub fn release(path: &Path) {
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    let key = key_of(path, &meta);
    let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
    held.retain(|h| h.key != key);
}

/// Removes the test file `path` that this process created, letting go of
/// its lock first.
pub fn remove_file(path: &Path) -> io::Result<()> {
    release(path);
    std::fs::remove_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_process_reuses_its_lock_and_another_open_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.dat");
        std::fs::write(&p, b"data").unwrap();
        assert!(matches!(lock(&p, LockMode::Shared).unwrap(), Locked::Held));
        // The same process again, and made exclusive: the one lock it holds.
        assert!(matches!(lock(&p, LockMode::Shared).unwrap(), Locked::Held));
        assert!(matches!(
            lock(&p, LockMode::Exclusive).unwrap(),
            Locked::Held
        ));
        // Another open file description (as another process has) is refused.
        let other = File::open(&p).unwrap();
        assert!(!crate::platform::fs::try_lock(&other, LockMode::Shared).unwrap());
        release(&p);
        assert!(crate::platform::fs::try_lock(&other, LockMode::Exclusive).unwrap());
        // Now the lock is the other's: refused, naming this process's PID
        // where the system's lock table says it.
        let e = lock(&p, LockMode::Shared).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("refusing to read"), "{m}");
        if cfg!(target_os = "linux") {
            // Windows does not say who holds a lock, nor how.
            assert!(m.contains("is writing"), "{m}");
            let TargetLockError::InUse { holders, .. } = &e else {
                panic!("{e:?}")
            };
            assert_eq!(holders[0].pid, std::process::id(), "{m}");
            assert!(m.contains(&format!("PID {}", std::process::id())), "{m}");
        }
        drop(other);
        assert!(matches!(
            lock(&p, LockMode::Exclusive).unwrap(),
            Locked::Held
        ));
        remove_file(&p).unwrap();
    }
}
