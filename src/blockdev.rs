//! Block-device ioctls (size, logical block size): a low module that both
//! the engines and the target code use, so neither imports the other for them.

use std::fs::File;
use std::io;
use std::os::fd::BorrowedFd;

/// Size of a block device in bytes.
pub fn device_size(f: &File) -> io::Result<u64> {
    use std::os::fd::AsFd;
    device_size_fd(f.as_fd())
}

/// Size of the block device open as `fd`, in bytes.
///
/// A block device's end offset is its size (what BLKGETSIZE64 returns);
/// found with `lseek`, so no raw ioctl is needed, and the file position is
/// put back where it was.
pub fn device_size_fd(fd: BorrowedFd<'_>) -> io::Result<u64> {
    use rustix::fs::{seek, SeekFrom};
    let was = seek(fd, SeekFrom::Current(0))?;
    let end = seek(fd, SeekFrom::End(0));
    seek(fd, SeekFrom::Start(was))?;
    Ok(end?)
}

/// Logical block size of a block device (its direct-I/O alignment).
pub fn logical_block_size(f: &File) -> io::Result<u64> {
    Ok(u64::from(rustix::fs::ioctl_blksszget(f)?.max(1)))
}
