//! Files on Windows: drive-letter and UNC paths as they are, volumes
//! (`\\.\X:`) and disks (`\\.\PhysicalDriveN`) as devices, positional
//! reads and writes, opening with DiskSpd's cache flags, exclusive opens
//! of devices, preallocation with `SetFileValidData` where the process
//! holds `SeManageVolumePrivilege`, and iosim's ownership mark in the
//! `iosim.owner` NTFS alternate data stream.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::windows::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use windows_sys::Win32::Storage::FileSystem as fsys;

use super::counters::Named;

pub use crate::platform::types::{FileAttributes, LockMode, OpenHow, Space};

fn share_all() -> u32 {
    fsys::FILE_SHARE_READ | fsys::FILE_SHARE_WRITE | fsys::FILE_SHARE_DELETE
}

/// The `FILE_FLAG_*` bits of `how`.
pub(crate) fn flags_of(how: OpenHow) -> u32 {
    let mut flags = 0;
    if how.direct {
        flags |= fsys::FILE_FLAG_NO_BUFFERING;
    }
    if how.sync || how.full_sync {
        flags |= fsys::FILE_FLAG_WRITE_THROUGH;
    }
    if how.overlapped {
        flags |= fsys::FILE_FLAG_OVERLAPPED;
    }
    flags
}

/// Opens `path` as `how` says, sharing it with other readers and writers
/// (as DiskSpd does, so several threads and processes can test one file).
pub fn open(path: &Path, how: OpenHow) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(how.write)
        .share_mode(share_all())
        .custom_flags(flags_of(how))
        .open(path)
}

/// True when the open failed because unbuffered I/O is refused.
pub fn is_direct_refused(e: &io::Error) -> bool {
    e.raw_os_error() == Some(super::errno::EINVAL)
}

/// Opens a volume or disk to write it, refusing one in use ([`is_busy`]):
/// a volume is locked (`FSCTL_LOCK_VOLUME`, refused while a file on it is
/// open); a disk is refused while a volume on it has a drive letter (a
/// disk taken offline has none).
pub fn open_exclusive(path: &Path) -> io::Result<File> {
    if busy_reason(path).is_some() {
        return Err(io::Error::from_raw_os_error(super::errno::EBUSY));
    }
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .share_mode(fsys::FILE_SHARE_READ | fsys::FILE_SHARE_WRITE)
        .open(path)?;
    if let Named::Volume(_) = super::counters::named(path) {
        lock_volume(&f)?;
    }
    Ok(f)
}

/// Why a disk may not be written: the drive letters of its volumes
/// (`GetLogicalDrives`, each volume's disk from
/// `IOCTL_STORAGE_GET_DEVICE_NUMBER`); None for anything else.
pub fn busy_reason(path: &Path) -> Option<String> {
    let Named::Drive(n) = super::counters::named(path) else {
        return None;
    };
    // SAFETY: takes nothing, returns a bit mask.
    let mask = unsafe { fsys::GetLogicalDrives() };
    let letters: Vec<String> = (0..26u8)
        .filter(|b| mask & (1 << b) != 0)
        .map(|b| char::from(b'A' + b))
        .filter(|c| {
            super::counters::disk_of(Path::new(&format!("\\\\.\\{c}:")))
                .is_some_and(|d| d.number == n)
        })
        .map(|c| format!("{c}:"))
        .collect();
    (!letters.is_empty()).then(|| {
        format!(
            "volume {} is on it: take the disk offline first (Disk Management, or Set-Disk -Number {n} -IsOffline $true)",
            letters.join(", ")
        )
    })
}

/// `FSCTL_LOCK_VOLUME`: succeeds only when no file is open on the volume;
/// held until the handle closes.
fn lock_volume(f: &File) -> io::Result<()> {
    use windows_sys::Win32::System::Ioctl::FSCTL_LOCK_VOLUME;
    let mut ret = 0u32;
    // SAFETY: FSCTL_LOCK_VOLUME takes no buffers; `ret` is a valid u32.
    let ok = unsafe {
        windows_sys::Win32::System::IO::DeviceIoControl(
            f.as_raw_handle() as _,
            FSCTL_LOCK_VOLUME,
            std::ptr::null(),
            0,
            std::ptr::null_mut(),
            0,
            &mut ret,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(io::Error::from_raw_os_error(super::errno::EBUSY));
    }
    Ok(())
}

/// True when an open failed because the device is in use.
pub fn is_busy(e: &io::Error) -> bool {
    // ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION, ERROR_BUSY
    matches!(e.raw_os_error(), Some(32 | 33 | super::errno::EBUSY))
}

/// Locks the open file `f` against other processes, without waiting:
/// `LockFileEx` on the last byte of the 64-bit range, where no I/O goes
/// (Windows' locks are mandatory: a lock on the data would stop this
/// process's own handles too), held until `f` is closed. Ok(false) when
/// another handle holds a conflicting lock; an error where the volume or
/// device has no locks.
pub fn try_lock(f: &File, mode: LockMode) -> io::Result<bool> {
    use windows_sys::Win32::System::IO::OVERLAPPED;
    // SAFETY: OVERLAPPED is plain data; all zeros is its documented start.
    let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
    ov.Anonymous.Anonymous.Offset = 0xFFFF_FFFE;
    ov.Anonymous.Anonymous.OffsetHigh = 0xFFFF_FFFF;
    let mut flags = fsys::LOCKFILE_FAIL_IMMEDIATELY;
    if mode == LockMode::Exclusive {
        flags |= fsys::LOCKFILE_EXCLUSIVE_LOCK;
    }
    let lock = |flags: u32, ov: &mut OVERLAPPED| -> io::Result<bool> {
        // SAFETY: the handle is `f`'s, open for the call; `ov` lives across
        // it, and with LOCKFILE_FAIL_IMMEDIATELY on a synchronous handle the
        // call returns before it does.
        let ok = unsafe { fsys::LockFileEx(f.as_raw_handle() as _, flags, 0, 1, 0, ov) };
        if ok != 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        // ERROR_LOCK_VIOLATION
        if e.raw_os_error() == Some(33) {
            Ok(false)
        } else {
            Err(e)
        }
    };
    if lock(flags, &mut ov)? {
        return Ok(true);
    }
    if mode != LockMode::Exclusive {
        return Ok(false);
    }
    // Windows does not convert a lock: a shared lock this handle holds
    // refuses its own exclusive one. Let it go and ask again; when another
    // handle holds the byte too, take the shared lock back.
    // SAFETY: as above; unlocking a byte this handle does not hold fails
    // harmlessly (ERROR_NOT_LOCKED).
    let unlocked = unsafe { fsys::UnlockFileEx(f.as_raw_handle() as _, 0, 1, 0, &mut ov) } != 0;
    if !unlocked {
        return Ok(false);
    }
    if lock(flags, &mut ov)? {
        return Ok(true);
    }
    let _ = lock(fsys::LOCKFILE_FAIL_IMMEDIATELY, &mut ov);
    Ok(false)
}

/// The file `meta` describes, as a lock table names it: None on Windows,
/// where no table says who holds a lock.
pub fn file_identity(_meta: &Metadata) -> Option<(u64, u64)> {
    None
}

/// Opens a file for reading (no pipes that block on Windows' side of it).
pub fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// True when `path` is a volume (`\\.\X:`) or a disk (`\\.\PhysicalDriveN`).
pub fn is_device(path: &Path, _meta: &Metadata) -> bool {
    path_is_device(path)
}

/// True when `path` names a volume (`\\.\X:`) or a disk (`\\.\PhysicalDriveN`).
pub fn path_is_device(path: &Path) -> bool {
    !matches!(super::counters::named(path), Named::Path)
}

/// What kind of file `meta` describes, in words.
pub fn kind_name(meta: &Metadata) -> &'static str {
    if meta.is_dir() {
        "directory"
    } else if meta.is_file() {
        "regular file"
    } else {
        "special file"
    }
}

/// Device numbers are a Unix notion: 0 on Windows.
pub fn device_number(_meta: &Metadata) -> u64 {
    0
}

/// Device numbers are a Unix notion: 0 on Windows.
pub fn filesystem_device(_meta: &Metadata) -> u64 {
    0
}

/// Device numbers are a Unix notion: (0, 0) on Windows.
pub fn major_minor(_dev: u64) -> (u32, u32) {
    (0, 0)
}

/// Bytes allocated to a file: its size (sparse and compressed files are
/// not told apart on Windows yet).
pub fn allocated_bytes(meta: &Metadata) -> u64 {
    meta.len()
}

/// Reads at `offset`; returns the bytes read (0 at the end).
pub fn read_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    match f.seek_read(buf, offset) {
        // ERROR_HANDLE_EOF
        Err(e) if e.raw_os_error() == Some(38) => Ok(0),
        r => r,
    }
}

/// Writes all of `buf` at `offset`.
pub fn write_all_at(f: &File, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        let n = f.seek_write(buf, offset)?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        buf = &buf[n..];
        offset += n as u64;
    }
    Ok(())
}

/// Enables `SeManageVolumePrivilege` in the process token, once; true when held.
pub fn manage_volume_privilege() -> bool {
    static HELD: OnceLock<bool> = OnceLock::new();
    *HELD.get_or_init(enable_privilege)
}

fn enable_privilege() -> bool {
    use windows_sys::Win32::Foundation::{CloseHandle, GetLastError, LUID};
    use windows_sys::Win32::Security::{
        AdjustTokenPrivileges, LookupPrivilegeValueW, LUID_AND_ATTRIBUTES, SE_PRIVILEGE_ENABLED,
        TOKEN_ADJUST_PRIVILEGES, TOKEN_PRIVILEGES, TOKEN_QUERY,
    };
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};
    let name = super::wide(std::ffi::OsStr::new("SeManageVolumePrivilege"));
    let mut token = std::ptr::null_mut();
    // SAFETY: every pointer is to a live local of the right type; the token
    // handle is closed before returning.
    unsafe {
        if OpenProcessToken(
            GetCurrentProcess(),
            TOKEN_ADJUST_PRIVILEGES | TOKEN_QUERY,
            &mut token,
        ) == 0
        {
            return false;
        }
        let mut luid = LUID {
            LowPart: 0,
            HighPart: 0,
        };
        let mut ok = LookupPrivilegeValueW(std::ptr::null(), name.as_ptr(), &mut luid) != 0;
        if ok {
            let tp = TOKEN_PRIVILEGES {
                PrivilegeCount: 1,
                Privileges: [LUID_AND_ATTRIBUTES {
                    Luid: luid,
                    Attributes: SE_PRIVILEGE_ENABLED,
                }],
            };
            ok = AdjustTokenPrivileges(
                token,
                0,
                &tp,
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            ) != 0
                // ERROR_NOT_ALL_ASSIGNED: the account does not hold it.
                && GetLastError() != 1300;
        }
        CloseHandle(token);
        ok
    }
}

/// Makes the first `len` bytes of `f` allocated but unwritten, NTFS's way:
/// the file is cut to nothing and extended again without
/// `SetFileValidData`, so its valid data length is 0 and each write past it
/// moves it on (a metadata update the next flush must commit), as writes
/// into a freshly extended file do. Reads past it return zeros.
pub fn allocate_unwritten(f: &File, len: u64) -> io::Result<()> {
    f.set_len(0)?;
    f.set_len(len)
}

/// Extends `f` to `offset + len` bytes; with `SeManageVolumePrivilege`, also
/// marks them valid (`SetFileValidData`, as SQL Server's instant file
/// initialisation does), so writes into them do not wait for zeroing.
pub fn preallocate(f: &File, offset: u64, len: u64) -> io::Result<()> {
    let end = offset.saturating_add(len);
    if f.metadata()?.len() < end {
        f.set_len(end)?;
    }
    if manage_volume_privilege() {
        // SAFETY: a live handle of ours; SetFileValidData reads no memory of ours.
        let ok = unsafe { fsys::SetFileValidData(f.as_raw_handle() as _, end as i64) };
        if ok == 0 {
            // Not NTFS, or the file is compressed or sparse: the zeroing stays.
            return Ok(());
        }
    }
    Ok(())
}

/// Whether a place is a hole: sparse files are not inspected on Windows
/// yet, so every place counts as data.
pub fn is_hole(_f: &File, _offset: u64) -> io::Result<bool> {
    Ok(false)
}

#[derive(Clone, Copy)]
#[repr(C)]
struct LengthInfo {
    length: i64,
}

#[derive(Clone, Copy)]
#[repr(C)]
struct Geometry {
    cylinders: i64,
    media_type: u32,
    tracks_per_cylinder: u32,
    sectors_per_track: u32,
    bytes_per_sector: u32,
}

/// Size of the file, volume or disk open as `f`, in bytes
/// (`IOCTL_DISK_GET_LENGTH_INFO` for a device).
pub fn device_size(f: &File) -> io::Result<u64> {
    use windows_sys::Win32::System::Ioctl::IOCTL_DISK_GET_LENGTH_INFO;
    // SAFETY: LengthInfo is GET_LENGTH_INFORMATION: one integer, valid when zero.
    match unsafe { super::ioctl_out::<LengthInfo>(f, IOCTL_DISK_GET_LENGTH_INFO) } {
        Ok(l) => Ok(l.length as u64),
        Err(_) => Ok(f.metadata()?.len()),
    }
}

/// Sector size of a volume or disk (`IOCTL_DISK_GET_DRIVE_GEOMETRY`).
pub fn logical_block_size(f: &File) -> io::Result<u64> {
    use windows_sys::Win32::System::Ioctl::IOCTL_DISK_GET_DRIVE_GEOMETRY;
    // SAFETY: Geometry is DISK_GEOMETRY: integers only, valid when zero.
    let g = unsafe { super::ioctl_out::<Geometry>(f, IOCTL_DISK_GET_DRIVE_GEOMETRY)? };
    Ok(u64::from(g.bytes_per_sector.max(1)))
}

/// The volume root holding `path` (`F:\`, `\\server\share\`), for the
/// volume functions.
fn volume_root(path: &Path) -> Option<PathBuf> {
    let abs = std::path::absolute(path).ok()?;
    abs.ancestors().last().map(Path::to_path_buf)
}

/// Sector size of the volume holding a file: its unbuffered-I/O alignment.
pub fn dio_alignment(path: &Path) -> Option<u64> {
    let root = super::wide(volume_root(path)?.as_os_str());
    let (mut spc, mut bps, mut free, mut total) = (0u32, 0u32, 0u32, 0u32);
    // SAFETY: `root` is NUL-terminated UTF-16; the outputs are live u32s.
    let ok = unsafe {
        fsys::GetDiskFreeSpaceW(root.as_ptr(), &mut spc, &mut bps, &mut free, &mut total)
    };
    (ok != 0 && bps > 0).then_some(u64::from(bps))
}

/// The compression and encryption of a file; None when unknown.
pub fn attributes(path: &Path) -> Option<FileAttributes> {
    let a = std::fs::metadata(path).ok()?.file_attributes();
    Some(FileAttributes {
        compressed: a & fsys::FILE_ATTRIBUTE_COMPRESSED != 0,
        encrypted: a & fsys::FILE_ATTRIBUTE_ENCRYPTED != 0,
    })
}

/// Where iosim's ownership mark lives: an NTFS alternate data stream.
pub const MARK_PLACE: &str = "the iosim.owner alternate data stream";

/// True when the volume holding `path` has named streams
/// (`FILE_NAMED_STREAMS`: NTFS and ReFS; not FAT, exFAT, or Wine's mapped
/// drives, where `file:stream` would be a second, ordinary file).
fn has_streams(path: &Path) -> bool {
    let Some(root) = volume_root(path) else {
        return false;
    };
    let w = super::wide(root.as_os_str());
    let mut flags = 0u32;
    // SAFETY: `w` is NUL-terminated UTF-16; only the flags are asked for
    // (null buffers with zero sizes for the rest).
    let ok = unsafe {
        fsys::GetVolumeInformationW(
            w.as_ptr(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut flags,
            std::ptr::null_mut(),
            0,
        )
    };
    ok != 0 && flags & FILE_NAMED_STREAMS != 0
}

/// `FILE_NAMED_STREAMS` (winnt.h).
const FILE_NAMED_STREAMS: u32 = 0x0004_0000;

fn mark_stream(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(":iosim.owner");
    PathBuf::from(s)
}

/// Reads iosim's mark on `path` into `buf`; None when it has none.
pub fn read_mark(path: &Path, buf: &mut [u8]) -> Option<usize> {
    if path_is_device(path) || !has_streams(path) {
        return None;
    }
    let f = File::open(mark_stream(path)).ok()?;
    match read_at(&f, buf, 0) {
        Ok(n) if n > 0 => Some(n),
        _ => None,
    }
}

/// Sets iosim's mark on `path`; false where the filesystem has no
/// alternate data streams (FAT, exFAT, most SMB servers other than Windows).
pub fn write_mark(path: &Path, v: &[u8]) -> bool {
    if path_is_device(path) || !path.is_file() || !has_streams(path) {
        return false;
    }
    // The mark is only ever written on a file that exists: the stream must not create it.
    let Ok(f) = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(mark_stream(path))
    else {
        return false;
    };
    write_all_at(&f, v, 0).is_ok()
}

/// The size and free space of the volume holding `path` (`GetDiskFreeSpaceExW`).
pub fn space(path: &Path) -> io::Result<Space> {
    let root = volume_root(path).ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    let w = super::wide(root.as_os_str());
    let (mut avail, mut total, mut free) = (0u64, 0u64, 0u64);
    // SAFETY: `w` is NUL-terminated UTF-16; the outputs are live u64s.
    if unsafe { fsys::GetDiskFreeSpaceExW(w.as_ptr(), &mut avail, &mut total, &mut free) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let (mut spc, mut bps, mut f, mut t) = (0u32, 0u32, 0u32, 0u32);
    // SAFETY: as above.
    let cluster = if unsafe {
        fsys::GetDiskFreeSpaceW(w.as_ptr(), &mut spc, &mut bps, &mut f, &mut t)
    } != 0
    {
        u64::from(spc) * u64::from(bps)
    } else {
        4096
    };
    Ok(Space {
        block_size: cluster,
        size_bytes: total,
        free_bytes: free,
        available_bytes: avail,
        inodes: 0,
        inodes_free: 0,
        read_only: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The system disk holds C: (on Windows, and in Wine, whose C: is drive 0).
    #[test]
    fn the_system_disk_is_refused_while_it_holds_c() {
        let why = busy_reason(Path::new(r"\\.\PhysicalDrive0")).expect("drive 0 holds C:");
        assert!(why.contains("C:") && why.contains("offline"), "{why}");
        assert!(open_exclusive(Path::new(r"\\.\PhysicalDrive0")).is_err_and(|e| is_busy(&e)));
        assert_eq!(busy_reason(Path::new(r"C:\x.dat")), None);
        assert!(path_is_device(Path::new(r"\\.\PhysicalDrive12")));
        assert!(path_is_device(Path::new(r"\\.\f:")));
        assert!(!path_is_device(Path::new(r"\\server\share\x.dat")));
        assert!(!path_is_device(Path::new(r"F:\x.dat")));
    }
}
