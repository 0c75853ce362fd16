//! Block-device ioctls (size, logical block size): a low module that both
//! the engines and the target code use, so neither imports the other for them.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
const BLKSSZGET: libc::c_ulong = 0x1268;

/// Size of a block device in bytes.
pub fn device_size(f: &File) -> io::Result<u64> {
    device_size_fd(f.as_raw_fd())
}

/// Size of the block device open as `fd`, in bytes.
pub fn device_size_fd(fd: std::os::fd::RawFd) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64.
    let r = unsafe { libc::ioctl(fd, BLKGETSIZE64 as _, &mut size as *mut u64) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Logical block size of a block device (its direct-I/O alignment).
pub fn logical_block_size(f: &File) -> io::Result<u64> {
    let mut v: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKSSZGET as _, &mut v as *mut libc::c_int) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(v.max(1) as u64)
}
