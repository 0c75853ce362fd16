//! The Windows side of [`crate::platform`], through the Win32 API
//! (`windows-sys`). What was verified under Wine and what needs a real
//! Windows machine is listed in docs/windows.md.

pub mod clock;
pub mod counters;
pub mod errno;
pub mod fs;
pub mod io;
pub mod memory;
pub mod process;
pub mod signals;

pub const OS_NAME: &str = "Windows";

pub(crate) use io::handle;

/// UTF-16, NUL-terminated, for the `W` functions.
pub(crate) fn wide(s: &std::ffi::OsStr) -> Vec<u16> {
    use std::os::windows::ffi::OsStrExt;
    s.encode_wide().chain(std::iter::once(0)).collect()
}
