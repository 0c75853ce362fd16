//! Files iosim writes its results to at a path the user names (`--html`,
//! `--out`, `--svg`, `--png`, `--csv`, `--series`, `--json`, matrix's
//! `--out PREFIX`, `manpages DIR`, `--verify-state`, `crash write --acks`,
//! capture's `-o NAME`, the simulator's `--log` and dump files). The one
//! place that decides what becomes of a file already at that path
//! ([`Existing`]: never a file iosim did not write, never through a link to
//! a file, unless a forcing flag says so), and the errors that name the path
//! and say what to do (README, "Safety").

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// iosim's mark on a complete iosim file (a filled test file, or a
/// side file such as the simulator's error log).
pub(crate) const MARK_COMPLETE: &[u8] = b"testfile";
/// iosim's mark while iosim is still filling a test file: the file
/// is iosim's (it may be refilled) but its contents are not yet on the disk.
pub(crate) const MARK_FILLING: &[u8] = b"filling";

/// What iosim's mark says of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// No mark: iosim did not create it (or the filesystem cannot hold the
    /// mark: no user xattrs on Linux, no alternate data streams on Windows).
    Foreign,
    /// Created by iosim, but its fill never reached the disk (creation was
    /// killed or failed): it must be refilled before it is used.
    Incomplete,
    /// Created by iosim and completely filled (data on the disk).
    Complete,
}

/// Marks this process set on files whose filesystem cannot hold one (no
/// user xattrs; no alternate data streams on FAT, exFAT, some SMB servers
/// and Wine's drives), by canonical path: the process that created a file
/// may go on using it (`iosim qualify`'s later stages, a profile's phases),
/// while a later process, which cannot tell it from a user's file, needs
/// `--allow-destroy`, as the note at creation says.
static UNMARKABLE: std::sync::Mutex<Vec<(PathBuf, Vec<u8>)>> = std::sync::Mutex::new(Vec::new());

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Reads iosim's mark on `path`.
pub fn mark_of(path: &Path) -> Mark {
    let mut buf = [0u8; 16];
    let n = match crate::platform::fs::read_mark(path, &mut buf[..]) {
        Some(n) => n,
        None => {
            let at = canonical(path);
            let kept = UNMARKABLE.lock().unwrap_or_else(|p| p.into_inner());
            match kept.iter().find(|(p, _)| *p == at) {
                Some((_, v)) if v.len() <= buf.len() => {
                    buf[..v.len()].copy_from_slice(v);
                    v.len()
                }
                _ => return Mark::Foreign,
            }
        }
    };
    match &buf[..n] {
        v if v == MARK_COMPLETE => Mark::Complete,
        v if v == MARK_FILLING => Mark::Incomplete,
        _ => Mark::Foreign,
    }
}

/// True when `path` carries iosim's mark (complete or not): iosim created it
/// and may overwrite or delete it.
pub fn is_iosim_file(path: &Path) -> bool {
    mark_of(path) != Mark::Foreign
}

/// Marks `path` as a complete iosim file. Returns false where the filesystem cannot hold the mark.
pub fn mark_iosim_file(path: &Path) -> bool {
    set_mark(path, MARK_COMPLETE)
}

/// Sets iosim's mark on `path` to `v`; false where the filesystem cannot hold the mark.
pub(crate) fn set_mark(path: &Path, v: &[u8]) -> bool {
    if crate::platform::fs::write_mark(path, v) {
        return true;
    }
    if path.is_file() {
        let at = canonical(path);
        let mut kept = UNMARKABLE.lock().unwrap_or_else(|p| p.into_inner());
        kept.retain(|(p, _)| *p != at);
        kept.push((at, v.to_vec()));
    }
    false
}

/// iosim's mark on an output file it wrote (a report, a chart, a table, a
/// man page, a verify state): a later iosim may replace it.
pub(crate) const MARK_OUTPUT: &[u8] = b"output";

/// True when `path` is an output file iosim wrote (its mark says so).
fn is_iosim_output(path: &Path) -> bool {
    let mut buf = [0u8; 16];
    match crate::platform::fs::read_mark(path, &mut buf[..]) {
        Some(n) => &buf[..n] == MARK_OUTPUT,
        None => {
            let at = canonical(path);
            let kept = UNMARKABLE.lock().unwrap_or_else(|p| p.into_inner());
            kept.iter().any(|(p, v)| *p == at && v == MARK_OUTPUT)
        }
    }
}

/// What becomes of a file already at the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Replaced only when iosim wrote it: reports, charts, tables, man
    /// pages, a verify state. A new file is created (`O_EXCL`) and marked
    /// as iosim's output; a file there that iosim did not write, or a
    /// symbolic link to a regular file, is refused, untouched ("remove it
    /// first or choose another path"). Devices other than block devices,
    /// pipes and sockets (`/dev/stdout`, `/dev/null`, `>(gzip)`) are
    /// written as they are; a block device is refused.
    Replace,
    /// Truncated and rewritten whatever it is, as a shell's `>` does: only
    /// where the user forced it (`crash write --acks FILE --force`).
    Overwrite,
    /// Refused, untouched; the file is created with `O_EXCL` (`create_new`),
    /// so a file that appears meanwhile is refused too. The text says why the
    /// file matters and what to do instead (a flag that forces it, another name).
    Refuse(&'static str),
    /// The rule of test files, for files beside a run (the simulator's error
    /// log and dump files): a new file is created and marked as iosim's
    /// (`user.iosim`); an existing one is reused (truncated) only when iosim
    /// made it, or with `allow_destroy`.
    IfIosims {
        /// `--allow-destroy` was given.
        allow_destroy: bool,
    },
}

/// An output file that cannot be written; each message names the file and
/// what to do.
#[derive(Debug, thiserror::Error)]
pub enum OutFileError {
    /// The path exists and [`Existing::Refuse`] keeps it.
    #[error("refusing to overwrite the {what} '{path}': it exists and {why}", path = path.display())]
    Exists {
        /// What the file is ("acknowledgement log").
        what: String,
        /// The file.
        path: PathBuf,
        /// Why it is kept, and what to do instead.
        why: &'static str,
    },
    /// The directory that should hold the file does not exist.
    #[error("cannot write the {what} '{path}': the directory '{dir}' does not exist: create it first or choose another path", path = path.display(), dir = dir.display())]
    NoDirectory {
        /// What the file is.
        what: String,
        /// The file.
        path: PathBuf,
        /// Its directory.
        dir: PathBuf,
    },
    /// [`Existing::IfIosims`]: the path is a directory, device or link.
    #[error("the {what} '{path}' exists and is not a regular file: choose another path", path = path.display())]
    NotAFile {
        /// What the file is.
        what: String,
        /// The file.
        path: PathBuf,
    },
    /// [`Existing::Replace`]: a symbolic link to a regular file.
    #[error("refusing to write the {what} '{path}': it is a symbolic link to '{to}', and iosim writes through no link to a file: give the path of a new file, or remove the link first", path = path.display(), to = to.display())]
    Link {
        /// What the file is.
        what: String,
        /// The link.
        path: PathBuf,
        /// Where it points.
        to: PathBuf,
    },
    /// [`Existing::IfIosims`]: a file iosim did not create, without `--allow-destroy`.
    #[error(transparent)]
    WouldDestroy(crate::Error),
    /// Creating or writing failed.
    #[error("cannot write the {what} '{path}': {cause}: check the path, its directory's permissions and the free space", path = path.display())]
    Io {
        /// What the file is.
        what: String,
        /// The file.
        path: PathBuf,
        /// Why (not a thiserror `source`: the message names it, and a
        /// source would be printed a second time in the error chain).
        cause: io::Error,
    },
}

fn io_error(what: &str, path: &Path, cause: io::Error) -> OutFileError {
    if cause.kind() == io::ErrorKind::NotFound {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return OutFileError::NoDirectory {
                what: what.to_string(),
                path: path.to_path_buf(),
                dir: dir.to_path_buf(),
            };
        }
    }
    OutFileError::Io {
        what: what.to_string(),
        path: path.to_path_buf(),
        cause,
    }
}

/// Opens the output file `path` (`what` it is, for messages) for writing,
/// under the `existing` rule.
pub fn create(path: &Path, what: &str, existing: Existing) -> Result<File, OutFileError> {
    let err = |e| io_error(what, path, e);
    match existing {
        Existing::Replace => replace_own(path, what),
        Existing::Overwrite => File::create(path).map_err(err),
        Existing::Refuse(why) => match OpenOptions::new().write(true).create_new(true).open(path) {
            Ok(f) => Ok(f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(OutFileError::Exists {
                what: what.to_string(),
                path: path.to_path_buf(),
                why,
            }),
            Err(e) => Err(err(e)),
        },
        Existing::IfIosims { allow_destroy } => {
            match OpenOptions::new().write(true).create_new(true).open(path) {
                Ok(f) => {
                    mark_iosim_file(path);
                    Ok(f)
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let meta = std::fs::symlink_metadata(path).map_err(err)?;
                    if !meta.file_type().is_file() {
                        return Err(OutFileError::NotAFile {
                            what: what.to_string(),
                            path: path.to_path_buf(),
                        });
                    }
                    if !is_iosim_file(path) && !allow_destroy {
                        return Err(OutFileError::WouldDestroy(crate::Error::WouldDestroy(
                            path.to_path_buf(),
                            format!("it exists, was not created by iosim and would be overwritten as the {what} (or choose another path for it)"),
                        )));
                    }
                    OpenOptions::new()
                        .write(true)
                        .truncate(true)
                        .open(path)
                        .map_err(err)
                }
                Err(e) => Err(err(e)),
            }
        }
    }
}

/// Why [`Existing::Replace`] keeps a file iosim did not write.
const NOT_OURS: &str = "iosim did not write it: remove it first, or choose another path";

/// What [`Existing::Replace`] finds at a path.
enum Found {
    /// Nothing yet.
    Nothing,
    /// iosim's own earlier output: replaced.
    Ours,
    /// A pipe, a socket or a character device (`/dev/stdout`, `>(gzip)`):
    /// written as it is.
    Stream,
}

/// What is at `path`, under [`Existing::Replace`]'s rule: an error for a
/// file iosim did not write, a link to a regular file, a directory or a
/// block device.
fn inspect(path: &Path, what: &str) -> Result<Found, OutFileError> {
    let here = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Nothing),
        r => r.map_err(|e| io_error(what, path, e))?,
    };
    let Ok(meta) = std::fs::metadata(path) else {
        // A dangling link: creating the file would follow it.
        return Err(OutFileError::Link {
            what: what.to_string(),
            path: path.to_path_buf(),
            to: std::fs::read_link(path).unwrap_or_default(),
        });
    };
    if meta.is_file() {
        if here.file_type().is_symlink() {
            return Err(OutFileError::Link {
                what: what.to_string(),
                path: path.to_path_buf(),
                to: std::fs::read_link(path).unwrap_or_default(),
            });
        }
        if !is_iosim_output(path) {
            return Err(OutFileError::Exists {
                what: what.to_string(),
                path: path.to_path_buf(),
                why: NOT_OURS,
            });
        }
        return Ok(Found::Ours);
    }
    if meta.is_dir() || crate::platform::fs::is_device(path, &meta) {
        return Err(OutFileError::NotAFile {
            what: what.to_string(),
            path: path.to_path_buf(),
        });
    }
    Ok(Found::Stream)
}

/// Checks, before a command measures anything, that the output file `path`
/// (`what` it is) may be written under [`Existing::Replace`]: a command
/// that would be refused at its end is refused at its start.
pub fn check(path: &Path, what: &str) -> Result<(), OutFileError> {
    inspect(path, what).map(|_| ())
}

/// [`Existing::Replace`]: a new file, marked as iosim's output; iosim's own
/// earlier output truncated; a pipe or character device as it is; anything
/// else refused.
fn replace_own(path: &Path, what: &str) -> Result<File, OutFileError> {
    let err = |e| io_error(what, path, e);
    let create = || {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .inspect(|_| {
                set_mark(path, MARK_OUTPUT);
            })
    };
    match inspect(path, what)? {
        Found::Nothing => create().map_err(err),
        Found::Ours => OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(err),
        Found::Stream => OpenOptions::new().write(true).open(path).map_err(err),
    }
}

/// Writes `bytes` as the whole output file `path` under the `existing` rule.
pub fn write(
    path: &Path,
    what: &str,
    bytes: &[u8],
    existing: Existing,
) -> Result<(), OutFileError> {
    create(path, what, existing)?
        .write_all(bytes)
        .map_err(|e| io_error(what, path, e))
}

/// Replaces `path` with `bytes` all at once: written and synced to a new
/// file beside it, then renamed over it, so a crash or a full disk leaves
/// the old file or the new one, never half of one (a verify state).
pub fn replace_atomically(path: &Path, what: &str, bytes: &[u8]) -> Result<(), OutFileError> {
    // The rule of [`Existing::Replace`]: only iosim's own earlier file is
    // replaced, never a user's file or a link; nor a pipe, which a rename
    // would not write.
    if let Found::Stream = inspect(path, what)? {
        return Err(OutFileError::NotAFile {
            what: what.to_string(),
            path: path.to_path_buf(),
        });
    }
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.iosim-{}.tmp", std::process::id()));
    let res = create(&tmp, what, Existing::Refuse("is not iosim's: remove it"))
        .and_then(|mut f| {
            set_mark(&tmp, MARK_OUTPUT);
            f.write_all(bytes)
                .and_then(|()| f.sync_all())
                .map_err(|e| io_error(what, &tmp, e))
        })
        .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| io_error(what, path, e)))
        .map(|()| {
            // Where the file system holds no mark, this process remembers it by path.
            set_mark(path, MARK_OUTPUT);
        });
    if res.is_err() && !matches!(res, Err(OutFileError::Exists { .. })) {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEEP: Existing = Existing::Refuse("may be the only copy: choose another name");

    #[test]
    fn each_rule_on_an_existing_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.txt");
        std::fs::write(&p, "old contents\n").unwrap();
        // Replace: a user's file is kept, and the message says what to do.
        let e = write(&p, "report", b"new\n", Existing::Replace).unwrap_err();
        assert!(e.to_string().contains("remove it first"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"old contents\n");
        // Overwrite (a forcing flag): as a shell's `>`.
        write(&p, "report", b"new\n", Existing::Overwrite).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new\n");
        // Refuse: untouched, and the message names the file and what to do.
        let e = write(&p, "acknowledgement log", b"x", KEEP).unwrap_err();
        assert!(matches!(e, OutFileError::Exists { .. }));
        let m = e.to_string();
        assert!(
            m.contains(&p.display().to_string()) && m.contains("choose another name"),
            "{m}"
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"new\n");
        // A new path is created under every rule.
        let q = d.path().join("fresh");
        write(&q, "log", b"1", KEEP).unwrap();
        assert_eq!(std::fs::read(&q).unwrap(), b"1");
        // Test-file rule: a file iosim did not make is refused without --allow-destroy.
        let e = write(
            &p,
            "error log",
            b"x",
            Existing::IfIosims {
                allow_destroy: false,
            },
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("--allow-destroy") && e.contains("error log"),
            "{e}"
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"new\n");
        write(
            &p,
            "error log",
            b"y",
            Existing::IfIosims {
                allow_destroy: true,
            },
        )
        .unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"y");
        // A missing directory is named.
        let e = write(&d.path().join("no/such"), "report", b"", Existing::Replace)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("directory") && e.contains("does not exist"),
            "{e}"
        );
    }

    #[test]
    fn atomic_replacement_leaves_no_temporary_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("state");
        replace_atomically(&p, "verify state", b"old").unwrap();
        replace_atomically(&p, "verify state", b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
        // A user's file, or a link to one, is never replaced.
        let user = d.path().join("user");
        std::fs::write(&user, "mine").unwrap();
        assert!(replace_atomically(&user, "verify state", b"x").is_err());
        #[cfg(unix)]
        {
            let link = d.path().join("link");
            std::os::unix::fs::symlink(&user, &link).unwrap();
            let e = replace_atomically(&link, "verify state", b"x").unwrap_err();
            assert!(matches!(e, OutFileError::Link { .. }), "{e}");
        }
        assert_eq!(std::fs::read(&user).unwrap(), b"mine");
        // state, user, and on Unix the link.
        let files = if cfg!(unix) { 3 } else { 2 };
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), files);
    }

    #[test]
    fn replace_rewrites_only_iosims_own_output() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.html");
        write(&p, "report", b"one", Existing::Replace).unwrap();
        write(&p, "report", b"two", Existing::Replace).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        // Never marked as a test file: a run does not take it as its own.
        assert_eq!(mark_of(&p), Mark::Foreign);
        #[cfg(unix)]
        {
            // A link to a user's file, and a link to iosim's own: both refused.
            let user = d.path().join("user.csv");
            std::fs::write(&user, "mine").unwrap();
            for to in [&user, &p] {
                let link = d.path().join("link");
                let _ = std::fs::remove_file(&link);
                std::os::unix::fs::symlink(to, &link).unwrap();
                let e = write(&link, "CSV table", b"x", Existing::Replace).unwrap_err();
                let m = e.to_string();
                assert!(
                    m.contains("symbolic link") && m.contains("remove the link"),
                    "{m}"
                );
            }
            assert_eq!(std::fs::read(&user).unwrap(), b"mine");
            assert_eq!(std::fs::read(&p).unwrap(), b"two");
            // A character device is written as it is.
            write(Path::new("/dev/null"), "report", b"x", Existing::Replace).unwrap();
        }
    }
}
