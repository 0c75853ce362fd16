//! The plain values the two sides of [`crate::platform`] share: one
//! definition each, whichever system fills them in.

use serde::{Deserialize, Serialize};

/// What an I/O does (`engine::Op`): read, write, or flush the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read into the slot's buffer.
    Read,
    /// Write from the slot's buffer.
    Write,
    /// Flush the file's data and metadata (`fsync`; `FlushFileBuffers` on
    /// Windows). Offset and length are ignored; a success transfers 0 bytes.
    Fsync,
    /// Flush the file's data (`fdatasync`; `FlushFileBuffers` on Windows,
    /// which has no data-only flush). Offset and length are ignored.
    Fdatasync,
}

impl Op {
    /// True for [`Op::Fsync`] and [`Op::Fdatasync`].
    #[inline]
    pub fn is_flush(self) -> bool {
        matches!(self, Op::Fsync | Op::Fdatasync)
    }

    /// The operation's name in messages and error records.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "fsync",
            Op::Fdatasync => "fdatasync",
        }
    }
}

/// How a process locks a target against other processes for its run
/// (`crate::targetlock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockMode {
    /// Read only: other readers may hold it too, no writer.
    Shared,
    /// Written: no other process may hold it.
    Exclusive,
}

/// How a target is opened for I/O.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenHow {
    /// Open for writing as well as reading.
    pub write: bool,
    /// Bypass the cache (Linux `O_DIRECT`; Windows `FILE_FLAG_NO_BUFFERING`, DiskSpd's `-Su`).
    pub direct: bool,
    /// Each write is durable when it completes (Linux `O_DSYNC`; Windows
    /// `FILE_FLAG_WRITE_THROUGH`, DiskSpd's `-Sw`).
    pub sync: bool,
    /// Each write is durable with the file's metadata when it completes
    /// (Linux `O_SYNC`, PostgreSQL's `open_sync`; on Windows the same as `sync`).
    pub full_sync: bool,
    /// For an engine that completes I/O asynchronously on this handle
    /// (Windows' `FILE_FLAG_OVERLAPPED`); nothing to do on Linux.
    pub overlapped: bool,
}

/// Facts about a file that its filesystem reports and sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileAttributes {
    /// Stored compressed (statx's `STATX_ATTR_COMPRESSED`; `FILE_ATTRIBUTE_COMPRESSED`).
    pub compressed: bool,
    /// Stored encrypted (`STATX_ATTR_ENCRYPTED`; `FILE_ATTRIBUTE_ENCRYPTED`).
    pub encrypted: bool,
}

/// A filesystem's size and free space (`statvfs`; on Windows
/// `GetDiskFreeSpaceExW`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Space {
    /// Fundamental block size, bytes.
    pub block_size: u64,
    /// Size, bytes.
    pub size_bytes: u64,
    /// Free, bytes.
    pub free_bytes: u64,
    /// Free for an unprivileged user, bytes.
    pub available_bytes: u64,
    /// Inodes (0 where the filesystem has no such count: Windows).
    pub inodes: u64,
    /// Free inodes.
    pub inodes_free: u64,
    /// Mounted read-only.
    pub read_only: bool,
}

/// The time one processor (or the whole machine) spent in each state since
/// boot, in Windows' unit of 100 ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcessorTimes {
    /// Processor number in the calling thread's processor group, or `None`
    /// for the machine as a whole (`GetSystemTimes`, when the per-processor
    /// query is refused).
    pub cpu: Option<usize>,
    /// Idle.
    pub idle: u64,
    /// Kernel mode, idle, DPC and interrupt time included.
    pub kernel: u64,
    /// User mode.
    pub user: u64,
    /// Deferred procedure calls (0 from `GetSystemTimes`).
    pub dpc: u64,
    /// Hardware interrupts (0 from `GetSystemTimes`).
    pub interrupt: u64,
}

/// One physical disk's counters (`IOCTL_DISK_PERFORMANCE`'s
/// `DISK_PERFORMANCE`), cumulative since the counters started; times in
/// 100 ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskPerformance {
    /// N of `\\.\PhysicalDriveN`.
    pub number: u32,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// The sum of every read's time.
    pub read_time: u64,
    /// The sum of every write's time.
    pub write_time: u64,
    /// Time with no request in flight.
    pub idle_time: u64,
    /// Reads completed (32 bits: wraps after 2^32).
    pub read_count: u32,
    /// Writes completed (32 bits: wraps after 2^32).
    pub write_count: u32,
    /// Requests in flight now.
    pub queue_depth: u32,
    /// The system time these counters were read at.
    pub query_time: u64,
}

/// The physical disk under a path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhysicalDisk {
    /// N of `\\.\PhysicalDriveN`.
    pub number: u32,
    /// Size of the whole disk, bytes (0 when Windows would not say).
    pub size_bytes: u64,
}
