//! Error numbers as the engines report them (a completion's negated
//! result): on Windows, the Win32 error code nearest to each Linux errno
//! the code names, so `io::Error::from_raw_os_error` prints Windows' own text.
#![allow(missing_docs)]

pub const EPERM: i32 = 5; // ERROR_ACCESS_DENIED
pub const EINTR: i32 = 995; // ERROR_OPERATION_ABORTED
pub const EIO: i32 = 1117; // ERROR_IO_DEVICE
pub const EBADF: i32 = 6; // ERROR_INVALID_HANDLE
pub const EAGAIN: i32 = 1237; // ERROR_RETRY
pub const EBUSY: i32 = 170; // ERROR_BUSY
pub const EINVAL: i32 = 87; // ERROR_INVALID_PARAMETER
pub const ENOSYS: i32 = 1; // ERROR_INVALID_FUNCTION
pub const EOPNOTSUPP: i32 = 50; // ERROR_NOT_SUPPORTED
pub const ENOSPC: i32 = 112; // ERROR_DISK_FULL
pub const EDQUOT: i32 = 1295; // ERROR_DISK_QUOTA_EXCEEDED
pub const ENOENT: i32 = 2; // ERROR_FILE_NOT_FOUND
pub const EACCES: i32 = 65; // ERROR_NETWORK_ACCESS_DENIED (EPERM holds ERROR_ACCESS_DENIED)
pub const EROFS: i32 = 19; // ERROR_WRITE_PROTECT
pub const ENXIO: i32 = 55; // ERROR_DEV_NOT_EXIST
pub const EFAULT: i32 = 998; // ERROR_NOACCESS
pub const EILSEQ: i32 = 23; // ERROR_CRC

/// ERROR_HANDLE_DISK_FULL: the other way Windows says the disk is full.
const HANDLE_DISK_FULL: i32 = 39;

/// True when `e` says the disk or the user's quota is full.
pub fn is_no_space(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(ENOSPC | EDQUOT | HANDLE_DISK_FULL))
}
