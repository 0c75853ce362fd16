//! System-wide CPU and disk counters that Linux keeps in `/proc` and `/sys`:
//! `sysmon` reads those files itself, so every function here answers
//! `None` and only the plain structs (the Windows side's numbers) are shared.

use std::path::Path;

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

/// Per-processor times: `None`, `sysmon::cpu` reads `/proc/stat`.
pub fn cpu_times() -> Option<Vec<ProcessorTimes>> {
    None
}

/// Per-disk counters: `None`, `sysmon::diskstats` reads `/proc/diskstats`.
pub fn disks() -> Option<Vec<DiskPerformance>> {
    None
}

/// The physical disk under `path`: `None`, `sysmon::mounts` finds it
/// through the mount table and sysfs.
pub fn disk_of(_path: &Path) -> Option<PhysicalDisk> {
    None
}
