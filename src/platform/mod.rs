//! What differs between the operating systems iosim runs on, one module per
//! concern, with the same functions on each system: the per-I/O clock,
//! error codes, file facts and opening, the ownership mark, positional I/O,
//! memory maps, the stop signals, CPU times and I/O priority, and the
//! system-wide CPU and disk counters that Linux keeps in `/proc` and `/sys`
//! (`counters`: `None` on Linux, where `sysmon` reads those files).
//!
//! `linux/` holds the Linux side (rustix and libc), `windows/` the Windows
//! side (windows-sys and the Win32 API); this file picks one, so no other
//! module needs a `#[cfg]` for the operating system. Engines that exist on
//! one system only (io_uring and mmap on Linux, IOCP and IoRing on Windows)
//! are chosen by `engine::choose`, which refuses the others with a message.
//! Like the engine and buffer code, the modules below this one hold `unsafe`
//! blocks, each with its SAFETY reason.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

pub mod types;

pub use imp::{clock, counters, errno, fs, host, io, memory, process, signals};

/// The operating system this build runs on, as the user reads it.
pub const OS_NAME: &str = imp::OS_NAME;

/// True on Windows: the features that only Linux has (io_uring, mmap,
/// blktrace, cgroups, /proc) refuse with a message there, and the reverse.
pub const IS_WINDOWS: bool = cfg!(windows);
