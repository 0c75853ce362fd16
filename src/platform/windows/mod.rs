//! The Windows side of [`crate::platform`], through the Win32 API
//! (`windows-sys`). What was verified under Wine and what needs a real
//! Windows machine is listed in docs/windows.md.

pub mod clock;
pub mod counters;
pub mod errno;
pub mod fs;
pub mod host;
pub mod io;
pub mod memory;
pub mod process;
pub mod signals;

pub const OS_NAME: &str = "Windows";

/// UTF-16, NUL-terminated, for the `W` functions.
pub(crate) fn wide(s: &std::ffi::OsStr) -> Vec<u16> {
    use std::os::windows::ffi::OsStrExt;
    s.encode_wide().chain(std::iter::once(0)).collect()
}

/// `DeviceIoControl` with no input, into a zeroed `T`.
///
/// # Safety
/// `T` must be plain C data (integers and arrays of them), valid when all
/// zero, and at least as large as the output `code` writes.
pub(crate) unsafe fn ioctl_out<T: Copy>(f: &std::fs::File, code: u32) -> std::io::Result<T> {
    // SAFETY: the caller's guarantee: all zero bytes are a valid T.
    let mut out: T = unsafe { std::mem::zeroed() };
    let mut ret = 0u32;
    // SAFETY: `out` is a live, writable T of size_of::<T>() bytes; the
    // codes used here take no input buffer; `f`'s handle is open.
    let ok = unsafe {
        windows_sys::Win32::System::IO::DeviceIoControl(
            std::os::windows::io::AsRawHandle::as_raw_handle(f) as _,
            code,
            std::ptr::null(),
            0,
            (&mut out as *mut T).cast(),
            std::mem::size_of::<T>() as u32,
            &mut ret,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(out)
}
