//! How a workload makes its writes durable: flushes every N writes (fio's
//! `fsync=N` and `fdatasync=N`) and the WAL sync methods databases choose
//! between (PostgreSQL's `wal_sync_method`, MySQL's `innodb_flush_method`).

use serde::{Deserialize, Serialize};

/// The call that flushes a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlushKind {
    /// `fsync(2)`: the file's data and all its metadata (io_uring's
    /// `IORING_OP_FSYNC`; `FlushFileBuffers` on Windows).
    Fsync,
    /// `fdatasync(2)`: the data and the metadata needed to read it back
    /// (`IORING_OP_FSYNC` with `IORING_FSYNC_DATASYNC`).
    Fdatasync,
}

impl FlushKind {
    /// The engine operation that performs it.
    pub fn op(self) -> crate::platform::types::Op {
        match self {
            FlushKind::Fsync => crate::platform::types::Op::Fsync,
            FlushKind::Fdatasync => crate::platform::types::Op::Fdatasync,
        }
    }

    /// The call's name.
    pub fn name(self) -> &'static str {
        match self {
            FlushKind::Fsync => "fsync",
            FlushKind::Fdatasync => "fdatasync",
        }
    }
}

/// A flush of the target after every `every` writes of a thread (fio's
/// `fsync=N` / `fdatasync=N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flush {
    /// Which call.
    pub kind: FlushKind,
    /// Writes of a thread between two flushes (at least 1).
    pub every: u32,
}

impl std::fmt::Display for Flush {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} every {} write", self.kind.name(), self.every)?;
        if self.every != 1 {
            f.write_str("s")?;
        }
        Ok(())
    }
}

/// How a log's writes reach stable storage, named as PostgreSQL's
/// `wal_sync_method` names them (pg_test_fsync's rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncMethod {
    /// The file opened `O_DSYNC`: each write returns once its data is stable.
    OpenDatasync,
    /// The file opened `O_SYNC`: each write returns once data and metadata are stable.
    OpenSync,
    /// Writes through the page cache, `fdatasync` after each.
    Fdatasync,
    /// Writes through the page cache, `fsync` after each.
    Fsync,
}

impl SyncMethod {
    /// Every method, in pg_test_fsync's order.
    pub const ALL: [SyncMethod; 4] = [
        SyncMethod::OpenDatasync,
        SyncMethod::Fdatasync,
        SyncMethod::Fsync,
        SyncMethod::OpenSync,
    ];

    /// The name (PostgreSQL's `wal_sync_method` value).
    pub fn name(self) -> &'static str {
        match self {
            SyncMethod::OpenDatasync => "open_datasync",
            SyncMethod::OpenSync => "open_sync",
            SyncMethod::Fdatasync => "fdatasync",
            SyncMethod::Fsync => "fsync",
        }
    }

    /// The method named `name` (any case; `-` for `_`).
    pub fn from_name(name: &str) -> Option<SyncMethod> {
        let n = name.trim().replace('-', "_");
        SyncMethod::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(&n))
    }

    /// How the file is opened for it.
    pub fn open_sync(self) -> OpenSync {
        match self {
            SyncMethod::OpenDatasync => OpenSync::Dsync,
            SyncMethod::OpenSync => OpenSync::Sync,
            SyncMethod::Fdatasync | SyncMethod::Fsync => OpenSync::None,
        }
    }

    /// The flush after each write, for the methods that flush.
    pub fn flush(self) -> Option<Flush> {
        let kind = match self {
            SyncMethod::Fdatasync => FlushKind::Fdatasync,
            SyncMethod::Fsync => FlushKind::Fsync,
            SyncMethod::OpenDatasync | SyncMethod::OpenSync => return None,
        };
        Some(Flush { kind, every: 1 })
    }
}

impl std::fmt::Display for SyncMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses `--sync-method` (clap's value parser).
pub fn sync_method_arg(s: &str) -> Result<SyncMethod, String> {
    SyncMethod::from_name(s).ok_or_else(|| {
        format!(
            "unknown sync method '{s}': use one of {}",
            SyncMethod::ALL.map(SyncMethod::name).join(", ")
        )
    })
}

/// True for the errors a file system gives for a call or flag it does not
/// support (EINVAL, ENOSYS, EOPNOTSUPP), as opposed to the device failing.
pub fn is_refusal(errno: i32) -> bool {
    use crate::platform::errno::{EINVAL, ENOSYS, EOPNOTSUPP};
    errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP
}

/// What to tell the user when a flush failed with `errno`: a file system
/// that refuses the call (EINVAL, ENOSYS, EOPNOTSUPP) gets the method that
/// works without it; other errors are the device's and say nothing more.
pub fn flush_refused(kind: FlushKind, errno: i32) -> Option<String> {
    is_refusal(errno).then(|| {
        format!(
            "the file system refuses {} ({}): use --sync-method open_datasync (each write opened O_DSYNC, no flush call) or open_sync instead",
            kind.name(),
            std::io::Error::from_raw_os_error(errno)
        )
    })
}

/// The synchronous-write flag a file is opened with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OpenSync {
    /// Neither (what `--cache` says).
    #[default]
    None,
    /// `O_DSYNC`.
    Dsync,
    /// `O_SYNC`.
    Sync,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in SyncMethod::ALL {
            assert_eq!(SyncMethod::from_name(m.name()), Some(m));
            assert_eq!(sync_method_arg(&m.name().to_uppercase()), Ok(m));
        }
        assert_eq!(
            SyncMethod::from_name("open-datasync"),
            Some(SyncMethod::OpenDatasync)
        );
        let e = sync_method_arg("fsync_writethrough").unwrap_err();
        assert!(
            e.contains("open_datasync, fdatasync, fsync, open_sync"),
            "{e}"
        );
    }

    #[test]
    fn a_refused_flush_names_what_works() {
        let m = flush_refused(FlushKind::Fdatasync, crate::platform::errno::EINVAL).unwrap();
        assert!(m.starts_with("the file system refuses fdatasync ("), "{m}");
        assert!(m.contains("--sync-method open_datasync"), "{m}");
        assert_eq!(
            flush_refused(FlushKind::Fsync, crate::platform::errno::EIO),
            None
        );
    }

    #[test]
    fn methods_open_or_flush() {
        assert_eq!(SyncMethod::OpenSync.open_sync(), OpenSync::Sync);
        assert_eq!(SyncMethod::OpenDatasync.flush(), None);
        assert_eq!(
            SyncMethod::Fsync.flush(),
            Some(Flush {
                kind: FlushKind::Fsync,
                every: 1
            })
        );
        let f = Flush {
            kind: FlushKind::Fdatasync,
            every: 4,
        };
        assert_eq!(f.to_string(), "fdatasync every 4 writes");
    }
}
