//! The machine on Linux: `sysmon::host` reads `/proc` itself, so every
//! function here answers `None`.

/// The operating system's name and version: Linux's `uname -r` comes from `/proc`.
pub fn os_release() -> Option<String> {
    None
}

/// (total, available) physical memory: Linux's come from `/proc/meminfo`.
pub fn memory() -> Option<(u64, u64)> {
    None
}

/// The CPU's model name: Linux's comes from `/proc/cpuinfo`.
pub fn cpu_model() -> Option<String> {
    None
}
