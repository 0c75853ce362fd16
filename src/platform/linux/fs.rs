//! Files on Linux: what a path is (file, block device), device numbers,
//! positional reads and writes, opening with the cache flags, exclusive
//! claims of block devices, preallocation, statx facts, and iosim's
//! ownership mark (the `user.iosim` extended attribute).

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

pub use crate::platform::types::{FileAttributes, LockMode, OpenHow, Space};

/// Opens `path` as `how` says, with `O_NOATIME` where allowed: a
/// benchmark's reads leave the target's access time alone, and the kernel
/// skips an access-time check per read (about 2% of the CPU per 4 KiB read
/// on a fast device). Only the file's owner (or root) may ask for
/// `O_NOATIME`; anyone else's open is retried without it.
pub fn open(path: &Path, how: OpenHow) -> io::Result<File> {
    let mut flags = 0;
    if how.direct {
        flags |= libc::O_DIRECT;
    }
    if how.sync {
        flags |= libc::O_DSYNC;
    }
    if how.full_sync {
        flags |= libc::O_SYNC;
    }
    let open = |flags| {
        OpenOptions::new()
            .read(true)
            .write(how.write)
            .custom_flags(flags)
            .open(path)
    };
    match open(flags | libc::O_NOATIME) {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => open(flags),
        r => r,
    }
}

/// True when the open failed because the filesystem refuses direct I/O.
pub fn is_direct_refused(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EINVAL)
}

/// Opens a block device for reading without letting anyone else claim it
/// (`O_EXCL`): fails with [`is_busy`] when it is mounted or held.
pub fn open_exclusive(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(path)
}

/// Why a device may not be written, where this system says more than
/// "busy": None on Linux (the target module reads the mount table).
pub fn busy_reason(_path: &Path) -> Option<String> {
    None
}

/// True when an open failed because the device is in use ([`open_exclusive`]).
pub fn is_busy(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EBUSY)
}

/// Locks all of the open file `f` against other processes, without waiting:
/// `flock`, held by the open file description until it is closed (or the
/// process ends), so the kernel lists the holder's PID in `/proc/locks`.
/// Ok(false) when another open of the file holds a conflicting lock; an
/// error where the filesystem has no locks.
pub fn try_lock(f: &File, mode: LockMode) -> io::Result<bool> {
    use rustix::fs::{flock, FlockOperation};
    let op = match mode {
        LockMode::Shared => FlockOperation::NonBlockingLockShared,
        LockMode::Exclusive => FlockOperation::NonBlockingLockExclusive,
    };
    match flock(f, op) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// The file `meta` describes, as the kernel's lock table names it: the
/// filesystem's device number and the inode number.
pub fn file_identity(meta: &Metadata) -> Option<(u64, u64)> {
    Some((meta.dev(), meta.ino()))
}

/// Opens a file that may have no data yet without blocking (a pipe).
pub fn open_nonblocking(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

/// True when `path` (whose metadata is `meta`) is a block device: a disk,
/// a partition, a loop or device-mapper device.
pub fn is_device(_path: &Path, meta: &Metadata) -> bool {
    meta.file_type().is_block_device()
}

/// True when `path` names a block device (false when it cannot be looked at).
pub fn path_is_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| is_device(path, &m))
}

/// What kind of file `meta` describes, in words ("block device", "FIFO"...),
/// for a message about a path that should have been a directory.
pub fn kind_name(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        "directory"
    } else if t.is_file() {
        "regular file"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// The device number of a block device (`st_rdev`).
pub fn device_number(meta: &Metadata) -> u64 {
    meta.rdev()
}

/// The device number of the filesystem holding a file (`st_dev`).
pub fn filesystem_device(meta: &Metadata) -> u64 {
    meta.dev()
}

/// A device number's major and minor.
pub fn major_minor(dev: u64) -> (u32, u32) {
    (rustix::fs::major(dev), rustix::fs::minor(dev))
}

/// Bytes the filesystem has allocated to a file (holes excluded).
pub fn allocated_bytes(meta: &Metadata) -> u64 {
    meta.blocks().saturating_mul(512)
}

/// Reads at `offset`; returns the bytes read (0 at the end).
pub fn read_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    f.read_at(buf, offset)
}

/// Writes all of `buf` at `offset`.
pub fn write_all_at(f: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    f.write_all_at(buf, offset)
}

/// Allocates `len` bytes of `f` from `offset` (`fallocate`), so later
/// writes do not allocate; a filesystem without it returns an error.
pub fn preallocate(f: &File, offset: u64, len: u64) -> io::Result<()> {
    rustix::fs::fallocate(f, rustix::fs::FallocateFlags::empty(), offset, len)
        .map_err(io::Error::from)
}

/// Makes the first `len` bytes of `f` allocated but unwritten: the blocks
/// already there are given back (`fallocate` with `PUNCH_HOLE`) and all are
/// allocated again (`fallocate`, mode 0), as fio lays out the file of a write
/// job and as etcd preallocates a WAL segment. Reads of them return zeros
/// without device I/O; the first write into each makes the file system
/// record it as written, which the next `fdatasync` must commit (a journal
/// transaction on ext4 and XFS). A file system without `fallocate` returns
/// an error.
pub fn allocate_unwritten(f: &File, len: u64) -> io::Result<()> {
    use rustix::fs::{fallocate, FallocateFlags};
    if len == 0 {
        return Ok(());
    }
    if f.metadata()?.len() > 0 {
        fallocate(
            f,
            FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE,
            0,
            len,
        )?;
    }
    fallocate(f, FallocateFlags::empty(), 0, len).map_err(io::Error::from)
}

/// Of the places at `offsets` in `f`, whether each is a hole (or past the
/// end): found with `lseek(SEEK_DATA)`, reading nothing. A filesystem
/// without it reports every place as data.
pub fn is_hole(f: &File, offset: u64) -> io::Result<bool> {
    use rustix::fs::{seek, SeekFrom};
    match seek(f, SeekFrom::Data(offset)) {
        Ok(data) => Ok(data > offset),
        // No data at or after `offset` (or `offset` is past the end).
        Err(rustix::io::Errno::NXIO) => Ok(true),
        Err(e) => Err(e.into()),
    }
}

/// Size of the file or block device open as `f` (its end offset, which for
/// a block device is its capacity, what BLKGETSIZE64 returns); the file
/// position is put back where it was.
pub fn device_size(f: &File) -> io::Result<u64> {
    use rustix::fs::{seek, SeekFrom};
    let was = seek(f, SeekFrom::Current(0))?;
    let end = seek(f, SeekFrom::End(0));
    seek(f, SeekFrom::Start(was))?;
    Ok(end?)
}

/// Logical block size of a block device (its direct-I/O alignment).
pub fn logical_block_size(f: &File) -> io::Result<u64> {
    Ok(u64::from(rustix::fs::ioctl_blksszget(f)?.max(1)))
}

fn statx_of(path: &Path, mask: rustix::fs::StatxFlags) -> Option<rustix::fs::Statx> {
    rustix::fs::statx(rustix::fs::CWD, path, rustix::fs::AtFlags::empty(), mask).ok()
}

/// Direct-I/O offset alignment of a file, from statx (Linux 6.1+); None when unknown.
pub fn dio_alignment(path: &Path) -> Option<u64> {
    let stx = statx_of(path, rustix::fs::StatxFlags::DIOALIGN)?;
    if stx.stx_mask & rustix::fs::StatxFlags::DIOALIGN.bits() == 0 || stx.stx_dio_offset_align == 0
    {
        return None;
    }
    Some(u64::from(stx.stx_dio_offset_align))
}

/// The compression and encryption of a file (statx); None when unknown.
pub fn attributes(path: &Path) -> Option<FileAttributes> {
    let stx = statx_of(path, rustix::fs::StatxFlags::BASIC_STATS)?;
    let bits = (stx.stx_attributes & stx.stx_attributes_mask).bits();
    Some(FileAttributes {
        compressed: bits & (libc::STATX_ATTR_COMPRESSED as u64) != 0,
        encrypted: bits & (libc::STATX_ATTR_ENCRYPTED as u64) != 0,
    })
}

/// Extended attribute that marks a file as an iosim test file.
pub const OWNER_XATTR: &str = "user.iosim";

/// Where iosim's ownership mark lives: the `user.iosim` extended attribute.
pub const MARK_PLACE: &str = "the user.iosim extended attribute";

/// Reads iosim's mark on `path` into `buf`; None when it has none.
pub fn read_mark(path: &Path, buf: &mut [u8]) -> Option<usize> {
    match rustix::fs::getxattr(path, OWNER_XATTR, buf) {
        Ok(n) if n > 0 => Some(n),
        _ => None,
    }
}

/// Sets iosim's mark on `path`; false where the filesystem has no user xattrs.
pub fn write_mark(path: &Path, v: &[u8]) -> bool {
    rustix::fs::setxattr(path, OWNER_XATTR, v, rustix::fs::XattrFlags::empty()).is_ok()
}

/// The size and free space of the filesystem holding `path`.
pub fn space(path: &Path) -> io::Result<Space> {
    let v = rustix::fs::statvfs(path)?;
    let unit = if v.f_frsize > 0 {
        v.f_frsize
    } else {
        v.f_bsize
    };
    Ok(Space {
        block_size: unit,
        size_bytes: v.f_blocks.saturating_mul(unit),
        free_bytes: v.f_bfree.saturating_mul(unit),
        available_bytes: v.f_bavail.saturating_mul(unit),
        inodes: v.f_files,
        inodes_free: v.f_ffree,
        read_only: v.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY),
    })
}
