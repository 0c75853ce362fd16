//! Positional I/O on Windows handles, for the synchronous engine and the
//! callers that read or write a block outside an engine: `ReadFile` /
//! `WriteFile` with the offset in an `OVERLAPPED`, waited for at once.

use std::cell::Cell;
use std::fs::File;
use std::os::windows::io::AsRawHandle;

use windows_sys::Win32::Foundation::{GetLastError, ERROR_HANDLE_EOF, ERROR_IO_PENDING};
use windows_sys::Win32::Storage::FileSystem::{FlushFileBuffers, ReadFile, WriteFile};
use windows_sys::Win32::System::Threading::CreateEventW;
use windows_sys::Win32::System::IO::{GetOverlappedResult, OVERLAPPED};

use crate::platform::types::Op;

/// An open file as the engines name it: a Win32 handle, as an integer.
pub type RawFile = isize;

/// A value that names no open file (`INVALID_HANDLE_VALUE`).
pub const NO_FILE: RawFile = -1;

/// Flushes `h` (`FlushFileBuffers`, for either flush op) and waits;
/// returns 0 or -(Win32 error). A group commit's leader calls it outside an engine.
pub fn flush_file(h: RawFile, op: Op) -> i32 {
    debug_assert!(op.is_flush());
    // SAFETY: a flush touches no buffer; pio refuses a handle that names no
    // file, and the caller keeps `h` open for the call.
    unsafe { pio(h, op, std::ptr::null_mut(), 0, 0) }
}

/// Windows has no `sync_file_range`: the cache manager's lazy writer sends
/// dirty pages on its own, so `--sync-file-range` does nothing here (the
/// run's notes say so).
pub fn start_writeback(_: RawFile) -> std::io::Result<()> {
    Ok(())
}

/// A Win32 handle as the API takes it, from a [`RawFile`].
pub fn handle(h: RawFile) -> windows_sys::Win32::Foundation::HANDLE {
    h as windows_sys::Win32::Foundation::HANDLE
}

/// The raw handle of `f` (which the caller keeps open while it is used).
pub fn raw_file(f: &File) -> RawFile {
    f.as_raw_handle() as RawFile
}

/// One piece of a vectored transfer.
#[derive(Clone, Copy, Debug)]
pub struct IoVec {
    /// Start of the piece.
    pub iov_base: *mut u8,
    /// Bytes.
    pub iov_len: usize,
}

/// A vectored-transfer piece of `len` bytes at `base`.
pub fn iovec(base: *mut u8, len: usize) -> IoVec {
    IoVec {
        iov_base: base,
        iov_len: len,
    }
}

thread_local! {
    /// This thread's event for waiting on its own synchronous I/O, made
    /// once (not per I/O). Its handle is passed with the low bit set, so an
    /// I/O on a handle bound to a completion port posts no packet there.
    static EVENT: Cell<isize> = const { Cell::new(0) };
}

fn thread_event() -> isize {
    EVENT.with(|e| {
        if e.get() == 0 {
            // SAFETY: a new unnamed manual-reset event with default security.
            let h = unsafe { CreateEventW(std::ptr::null(), 1, 0, std::ptr::null()) };
            e.set(h as isize);
        }
        e.get()
    })
}

/// Performs one positional read or write and waits for it; returns bytes or
/// -(Win32 error). The end of a file reads as 0 bytes.
///
/// # Safety
/// `buf` must be valid for `len` bytes (for writes into it, on a read), `h`
/// must stay open for the call, and nothing else may access `buf` until the
/// call returns.
pub unsafe fn pio(h: RawFile, op: Op, buf: *mut u8, len: usize, offset: u64) -> i32 {
    if h == NO_FILE || h == 0 {
        return -super::errno::EBADF;
    }
    let handle = handle(h);
    if op.is_flush() {
        // Windows has one flush, for data and metadata; it waits itself.
        // SAFETY: the caller keeps the handle open for the call.
        return if unsafe { FlushFileBuffers(handle) } != 0 {
            0
        } else {
            // SAFETY: reads the calling thread's last error.
            -(unsafe { GetLastError() } as i32)
        };
    }
    // SAFETY: OVERLAPPED is plain data; all zeros is its documented initial state.
    let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
    ov.Anonymous.Anonymous.Offset = offset as u32;
    ov.Anonymous.Anonymous.OffsetHigh = (offset >> 32) as u32;
    ov.hEvent = (thread_event() | 1) as _;
    let len = len.min(u32::MAX as usize) as u32;
    let mut n = 0u32;
    // SAFETY: the caller guarantees `buf` for `len` bytes and the handle; `ov`
    // lives on this frame until the I/O is complete (waited for below).
    let ok = unsafe {
        match op {
            Op::Read => ReadFile(handle, buf, len, &mut n, &mut ov),
            Op::Write => WriteFile(handle, buf, len, &mut n, &mut ov),
            Op::Fsync | Op::Fdatasync => unreachable!("flushes return above"),
        }
    };
    if ok != 0 {
        return n as i32;
    }
    // SAFETY: reads the calling thread's last error.
    let mut err = unsafe { GetLastError() };
    if err == ERROR_IO_PENDING {
        // SAFETY: waits for the I/O that `ov` describes; both are live.
        if unsafe { GetOverlappedResult(handle, &ov, &mut n, 1) } != 0 {
            return n as i32;
        }
        // SAFETY: as above.
        err = unsafe { GetLastError() };
    }
    if err == ERROR_HANDLE_EOF {
        return 0;
    }
    -(err as i32)
}

/// Performs a vectored read or write as one positional transfer per piece,
/// in order; returns the bytes moved or -(Win32 error).
///
/// # Safety
/// As [`pio`], for every piece.
pub unsafe fn piov(h: RawFile, op: Op, iov: &[IoVec], offset: u64) -> i32 {
    if op.is_flush() {
        // SAFETY: a flush touches no buffer.
        return unsafe { pio(h, op, std::ptr::null_mut(), 0, offset) };
    }
    let mut done = 0u64;
    for v in iov {
        // SAFETY: the caller's guarantee for every piece.
        let r = unsafe { pio(h, op, v.iov_base, v.iov_len, offset + done) };
        if r < 0 {
            return r;
        }
        done += r as u64;
        if (r as usize) < v.iov_len {
            break;
        }
    }
    done as i32
}

/// Size in bytes of the file, volume or disk open as `h`.
pub fn file_len(h: RawFile) -> std::io::Result<u64> {
    use std::os::windows::io::{FromRawHandle, IntoRawHandle};
    // SAFETY: the caller keeps `h` open; the File is turned back into the
    // raw handle below, so it is never closed here.
    let f = unsafe { File::from_raw_handle(handle(h)) };
    let r = super::fs::device_size(&f);
    let _ = f.into_raw_handle();
    r
}
