//! Error numbers as the engines report them (a completion's negated
//! result): Linux errno values, under their C names.
#![allow(missing_docs)]

pub const EPERM: i32 = libc::EPERM;
pub const EINTR: i32 = libc::EINTR;
pub const EIO: i32 = libc::EIO;
pub const EBADF: i32 = libc::EBADF;
pub const EAGAIN: i32 = libc::EAGAIN;
pub const EBUSY: i32 = libc::EBUSY;
pub const EINVAL: i32 = libc::EINVAL;
pub const ENOSPC: i32 = libc::ENOSPC;
pub const EDQUOT: i32 = libc::EDQUOT;
pub const ENOENT: i32 = libc::ENOENT;
pub const EACCES: i32 = libc::EACCES;
pub const EROFS: i32 = libc::EROFS;
pub const ENXIO: i32 = libc::ENXIO;
pub const EFAULT: i32 = libc::EFAULT;
pub const EILSEQ: i32 = libc::EILSEQ;
pub const ENOSYS: i32 = libc::ENOSYS;
pub const EOPNOTSUPP: i32 = libc::EOPNOTSUPP;

/// True when `e` says the disk or the user's quota is full.
pub fn is_no_space(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(ENOSPC | EDQUOT))
}
