//! System monitors: CPU time from `/proc/stat` and the process's own CPU use,
//! who used the CPU (iosim, the kernel's I/O path, other processes),
//! block device counters from `/proc/diskstats`, the memory limits that apply
//! to the process ([`limits`]: cgroups, `RLIMIT_AS`), which device a target lives
//! on (and, for reports, what that storage is: [`storage`], and what kind of
//! volume: [`volume`]), a background
//! sampler, and self-checks of iosim's numbers against the kernel's.
//! On Windows the same numbers come from where Performance Monitor's
//! Processor and PhysicalDisk objects get theirs, through
//! [`crate::platform::counters`]: each processor's times from
//! `NtQuerySystemInformation` (or the machine's from `GetSystemTimes`),
//! each `\\.\PhysicalDriveN`'s `IOCTL_DISK_PERFORMANCE`, and the physical
//! drive under a target's volume (`IOCTL_STORAGE_GET_DEVICE_NUMBER`),
//! turned into the same `/proc/stat` and `/proc/diskstats` lines.
//!
//! Parsers are pure functions over the text of the `/proc` files, and
//! converters over Windows' raw numbers, tested on fixtures; sampling is done by the runner at the start and end of the
//! measured time, and by [`sampler::Monitor`]'s one background thread.

pub mod check;
pub mod content;
pub mod cpu;
pub mod diskstats;
pub mod host;
pub mod limits;
pub mod locks;
pub mod mounts;
pub mod procs;
pub mod sampler;
pub mod storage;
pub mod volume;

/// What the unit tests that attach real loop devices share (Linux's).
#[cfg(all(test, target_os = "linux"))]
pub(crate) mod test_loop {
    /// Detaches a loop device when the test ends, however it ends.
    pub(crate) struct LoopGuard(pub(crate) String);

    impl Drop for LoopGuard {
        fn drop(&mut self) {
            let _ = std::process::Command::new("losetup")
                .args(["-d", &self.0])
                .status();
        }
    }
}
