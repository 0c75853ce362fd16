//! System-wide CPU and disk counters that Linux keeps in `/proc` and `/sys`:
//! `sysmon` reads those files itself, so every function here answers
//! `None` and only the plain structs (the Windows side's numbers) are shared.

use std::path::Path;

pub use crate::platform::types::{DiskPerformance, PhysicalDisk, ProcessorTimes};

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
