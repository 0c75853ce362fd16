//! What `iosim fsync` measured and concluded: the result kind, its tests
//! and the advice (filled in by [`super::advice`], printed by [`super::render`]).

use serde::{Deserialize, Serialize};

use crate::runner::RunResult;
use crate::stats::DirResult;
use crate::sysmon::mounts::MemoryBacked;
use crate::workload::SyncMethod;

/// What a test measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// Each sync method, with one or two writes per operation.
    Methods,
    /// `open_sync` with 16 KiB in writes of different sizes.
    OpenSyncSizes,
    /// An fsync on a descriptor other than the one that wrote.
    Descriptors,
    /// Writes not synced.
    NonSync,
}

/// One test: a line of the report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FsyncTest {
    /// Which part of the report.
    pub section: Section,
    /// The line's name (`fdatasync`, ` 2 *  8kB open_sync writes`, `write, close, fsync`).
    pub name: String,
    /// The sync method, for the methods' tests.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub method: Option<SyncMethod>,
    /// Bytes per write.
    pub bs: u64,
    /// Writes per operation.
    pub writes_per_op: u32,
    /// Operations (each `writes_per_op` writes and, for the flush methods, one flush) per second.
    pub ops_per_sec: f64,
    /// Mean time of an operation, microseconds (1e6 / ops_per_sec, as pg_test_fsync prints).
    pub usecs_per_op: f64,
    /// The latency of what makes an operation durable: the flush for
    /// fdatasync/fsync, the writes for `open_*`, the whole operation for the
    /// descriptor tests.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub durable_latency: Option<DirResult>,
    /// Why it could not run (the file system refused the method).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub unavailable: Option<String>,
    /// The test ran without O_DIRECT where pg_test_fsync asks for it.
    #[serde(default)]
    pub buffered_fallback: bool,
    /// The run's full result (for the tests that are iosim workloads).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub result: Option<RunResult>,
}

/// Everything `iosim fsync` measured and concluded.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FsyncResult {
    /// The test file.
    pub path: String,
    /// Time per test, seconds.
    pub secs_per_test: f64,
    /// Every test, in the report's order.
    pub tests: Vec<FsyncTest>,
    /// What the figures mean for PostgreSQL, MySQL/MariaDB and the device.
    pub advice: Advice,
    /// Things the reader should know.
    pub notes: Vec<String>,
    /// Stopped by Ctrl-C before every test ran.
    pub interrupted: bool,
    /// The test file's storage is held in memory (tmpfs, a loop device over
    /// it, a RAM disk): the figures are memory's, and no method is advised.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub memory_backed: Option<MemoryBacked>,
}

impl FsyncResult {
    /// The test of `method` with `writes` writes of `bs` bytes per operation.
    pub fn method(&self, method: SyncMethod, bs: u64, writes: u32) -> Option<&FsyncTest> {
        self.tests.iter().find(|t| {
            t.section == Section::Methods
                && t.method == Some(method)
                && t.bs == bs
                && t.writes_per_op == writes
        })
    }

    /// The test named `name` in `section`.
    pub fn named(&self, section: Section, name: &str) -> Option<&FsyncTest> {
        self.tests
            .iter()
            .find(|t| t.section == section && t.name.trim() == name.trim())
    }
}

/// pg_test_fsync's label of a size: `8kB`.
pub fn kb(bs: u64) -> String {
    if bs % 1024 == 0 {
        format!("{}kB", bs / 1024)
    } else {
        format!("{bs}B")
    }
}

/// The conclusions, one statement per line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    /// The `wal_sync_method` to use, when the figures decide it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub wal_sync_method: Option<SyncMethod>,
    /// PostgreSQL.
    pub postgresql: Vec<String>,
    /// The `innodb_flush_method` to use (`O_DIRECT` or `fsync`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub innodb_flush_method: Option<String>,
    /// MySQL and MariaDB.
    pub mysql: Vec<String>,
    /// Flushes look acknowledged without reaching stable media.
    pub flushes_look_free: bool,
    /// An fsync on another descriptor looks ignored.
    pub other_descriptor_ignored: bool,
    /// The device and the file system.
    pub storage: Vec<String>,
    /// Why no sync-method advice is given (storage held in memory, flushes
    /// that wait for nothing); the PostgreSQL and MySQL lists are empty then.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub withheld: Option<String>,
}
