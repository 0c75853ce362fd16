//! Positional I/O on Linux file descriptors, for the engines that perform
//! I/O with one system call each (sync) and the callers that read or write
//! a block outside an engine.

use std::fs::File;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

use crate::platform::types::Op;

/// An open file as the engines name it: a file descriptor.
pub type RawFile = RawFd;

/// A value that names no open file.
pub const NO_FILE: RawFile = -1;

/// Starts the writeback of the dirty pages of `fd` (`sync_file_range` over
/// the whole file with `SYNC_FILE_RANGE_WRITE`): it neither waits for them
/// nor flushes the device's cache (`--sync-file-range`).
pub fn start_writeback(fd: RawFile) -> std::io::Result<()> {
    // SAFETY: sync_file_range reads and writes no memory of this process;
    // an fd that is not open fails with EBADF, which is returned.
    let r = unsafe { libc::sync_file_range(fd, 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Flushes `fd` (`op` is [`Op::Fsync`] or [`Op::Fdatasync`]) and waits;
/// returns 0 or -errno. A group commit's leader calls it outside an engine.
pub fn flush_file(fd: RawFile, op: Op) -> i32 {
    debug_assert!(op.is_flush());
    // SAFETY: a flush touches no buffer; pio refuses a negative descriptor,
    // and the caller keeps `fd` open for the call.
    unsafe { pio(fd, op, std::ptr::null_mut(), 0, 0) }
}

/// The raw descriptor of `f` (which the caller keeps open while it is used).
pub fn raw_file(f: &File) -> RawFile {
    f.as_raw_fd()
}

/// One piece of a vectored transfer.
pub type IoVec = libc::iovec;

/// A vectored-transfer piece of `len` bytes at `base`.
pub fn iovec(base: *mut u8, len: usize) -> IoVec {
    libc::iovec {
        iov_base: base.cast(),
        iov_len: len,
    }
}

/// Performs one positional read or write synchronously; returns bytes or -errno.
///
/// Through rustix's raw system calls, not libc's `pread64`/`pwrite64`: those
/// are thread-cancellation points that wrap every call in two extra
/// functions and report errors through the thread-local `errno` (measured at
/// about 4% of a verified 4 KiB write through the page cache, where the
/// system call itself is short).
///
/// # Safety
/// `buf` must be valid for `len` bytes (for writes into it, on a read), `fd`
/// must stay open for the call, and nothing else may access `buf` until the
/// call returns.
pub unsafe fn pio(fd: RawFile, op: Op, buf: *mut u8, len: usize, offset: u64) -> i32 {
    if fd < 0 {
        // Not a descriptor (BorrowedFd may not hold -1): what the kernel would say.
        return -libc::EBADF;
    }
    // SAFETY: fd is not negative and the caller keeps it open for the call.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let r = match op {
        // SAFETY: the caller guarantees buf is valid for len bytes, written
        // by nothing else during the call.
        Op::Read => rustix::io::pread(
            fd,
            unsafe { std::slice::from_raw_parts_mut(buf, len) },
            offset,
        ),
        // SAFETY: as above; the kernel only reads the buffer.
        Op::Write => {
            rustix::io::pwrite(fd, unsafe { std::slice::from_raw_parts(buf, len) }, offset)
        }
        Op::Fsync => rustix::fs::fsync(fd).map(|()| 0),
        Op::Fdatasync => rustix::fs::fdatasync(fd).map(|()| 0),
    };
    match r {
        Ok(n) => n as i32,
        Err(e) => -e.raw_os_error(),
    }
}

/// Performs one positional vectored read or write synchronously; returns bytes or -errno.
///
/// # Safety
/// Every iovec must point to memory valid for its length, not accessed by
/// anything else until the call returns.
pub unsafe fn piov(fd: RawFile, op: Op, iov: &[IoVec], offset: u64) -> i32 {
    if op.is_flush() {
        // A flush moves no data: the buffers are not used.
        // SAFETY: a flush touches no buffer.
        return unsafe { pio(fd, op, std::ptr::null_mut(), 0, offset) };
    }
    // SAFETY: the caller guarantees every iovec points to valid memory.
    let r = unsafe {
        match op {
            Op::Read => libc::preadv64(fd, iov.as_ptr(), iov.len() as i32, offset as libc::off64_t),
            Op::Write => {
                libc::pwritev64(fd, iov.as_ptr(), iov.len() as i32, offset as libc::off64_t)
            }
            Op::Fsync | Op::Fdatasync => unreachable!("flushes return above"),
        }
    };
    if r < 0 {
        -std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    } else {
        r as i32
    }
}

/// Size in bytes of the file or block device open as `fd` (its end).
pub fn file_len(fd: RawFile) -> std::io::Result<u64> {
    // SAFETY: the caller keeps `fd` open while it uses it (RawFile's contract).
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    Ok(rustix::fs::seek(fd, rustix::fs::SeekFrom::End(0))?)
}
