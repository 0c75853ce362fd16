//! Plain facts about an open file descriptor that the engines and their
//! callers share (below both, so no engine file imports the engine module for them).

use std::io;
use std::os::fd::BorrowedFd;

/// Size in bytes of the file or block device open as `fd` (the end of
/// the file, which for a block device is its capacity).
pub fn fd_len(fd: BorrowedFd<'_>) -> io::Result<u64> {
    Ok(rustix::fs::seek(fd, rustix::fs::SeekFrom::End(0))?)
}
