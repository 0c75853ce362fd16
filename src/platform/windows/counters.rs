//! System-wide CPU and disk counters on Windows, from the sources
//! Performance Monitor's Processor and PhysicalDisk objects read:
//! per-processor times from `NtQuerySystemInformation`
//! (`SystemProcessorPerformanceInformation`, or `GetSystemTimes` for the
//! machine as a whole when that is refused), each `\\.\PhysicalDriveN`'s
//! `IOCTL_DISK_PERFORMANCE`, and the physical drive under a path
//! (`GetVolumePathNameW`, `IOCTL_STORAGE_GET_DEVICE_NUMBER`). Every handle
//! is opened with no access rights, which these queries need no more than,
//! so no administrator is needed.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::path::Path;

use windows_sys::Win32::Storage::FileSystem as fsys;
use windows_sys::Win32::System::Ioctl;

use super::ioctl_out;

pub use crate::platform::types::{DiskPerformance, PhysicalDisk, ProcessorTimes};

/// `SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION` with its fields named
/// (windows-sys calls DpcTime, InterruptTime and InterruptCount
/// `Reserved1`/`Reserved2`).
#[derive(Clone, Copy, Default)]
#[repr(C)]
struct ProcessorPerformance {
    idle_time: i64,
    kernel_time: i64,
    user_time: i64,
    dpc_time: i64,
    interrupt_time: i64,
    interrupt_count: u32,
}

const _: () = assert!(std::mem::size_of::<ProcessorPerformance>() == 48);

fn nonneg(v: i64) -> u64 {
    v.max(0) as u64
}

/// Every processor's times (of the calling thread's processor group: the
/// first 64), or the whole machine's when the per-processor query is
/// refused; `None` when both are.
pub fn cpu_times() -> Option<Vec<ProcessorTimes>> {
    per_processor().or_else(machine_total)
}

fn per_processor() -> Option<Vec<ProcessorTimes>> {
    use windows_sys::Wdk::System::SystemInformation::{
        NtQuerySystemInformation, SystemProcessorPerformanceInformation,
    };
    const STATUS_INFO_LENGTH_MISMATCH: i32 = 0xC000_0004_u32 as i32;
    let each = std::mem::size_of::<ProcessorPerformance>();
    // A processor group holds at most 64; grow if Windows asks for more.
    let mut n = 64usize;
    for _ in 0..4 {
        let mut buf = vec![ProcessorPerformance::default(); n];
        let mut ret = 0u32;
        // SAFETY: `buf` is a live, writable array of `n` entries of the
        // layout this class fills, and its length in bytes is passed;
        // `ret` is a live u32.
        let status = unsafe {
            NtQuerySystemInformation(
                SystemProcessorPerformanceInformation,
                buf.as_mut_ptr().cast(),
                (n * each) as u32,
                &mut ret,
            )
        };
        if status == STATUS_INFO_LENGTH_MISMATCH {
            n = (ret as usize / each).max(n * 2);
            continue;
        }
        if status < 0 {
            return None;
        }
        let got = (ret as usize / each).min(n);
        if got == 0 {
            return None;
        }
        return Some(
            buf[..got]
                .iter()
                .enumerate()
                .map(|(i, p)| ProcessorTimes {
                    cpu: Some(i),
                    idle: nonneg(p.idle_time),
                    kernel: nonneg(p.kernel_time),
                    user: nonneg(p.user_time),
                    dpc: nonneg(p.dpc_time),
                    interrupt: nonneg(p.interrupt_time),
                })
                .collect(),
        );
    }
    None
}

fn machine_total() -> Option<Vec<ProcessorTimes>> {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::GetSystemTimes;
    let z = || FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut idle, mut kernel, mut user) = (z(), z(), z());
    // SAFETY: the three outputs are live FILETIMEs.
    if unsafe { GetSystemTimes(&mut idle, &mut kernel, &mut user) } == 0 {
        return None;
    }
    let v = |t: FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
    Some(vec![ProcessorTimes {
        cpu: None,
        idle: v(idle),
        kernel: v(kernel),
        user: v(user),
        dpc: 0,
        interrupt: 0,
    }])
}

/// Opens a volume or disk with no access rights (enough for the queries
/// here, and allowed to any user), sharing it with every reader and writer.
fn open_device(path: &str) -> io::Result<File> {
    OpenOptions::new()
        .access_mode(0)
        .share_mode(fsys::FILE_SHARE_READ | fsys::FILE_SHARE_WRITE)
        .open(path)
}

/// How many `\\.\PhysicalDriveN` in a row may fail to open before the scan
/// stops (numbers of removed disks leave gaps).
const MISSES: u32 = 4;

/// Every physical disk's counters, `\\.\PhysicalDrive0` upwards. A disk
/// that opens but refuses `IOCTL_DISK_PERFORMANCE` is left out.
pub fn disks() -> Option<Vec<DiskPerformance>> {
    let mut out = Vec::new();
    let (mut n, mut misses) = (0u32, 0u32);
    while misses < MISSES {
        match open_device(&drive_path(n)) {
            Ok(f) => {
                misses = 0;
                if let Ok(p) = disk_performance(&f) {
                    out.push(DiskPerformance { number: n, ..p });
                }
            }
            Err(_) => misses += 1,
        }
        n += 1;
    }
    Some(out)
}

fn drive_path(n: u32) -> String {
    format!(r"\\.\PhysicalDrive{n}")
}

fn disk_performance(f: &File) -> io::Result<DiskPerformance> {
    // SAFETY: DISK_PERFORMANCE is plain integers, IOCTL_DISK_PERFORMANCE's output.
    let p: Ioctl::DISK_PERFORMANCE = unsafe { ioctl_out(f, Ioctl::IOCTL_DISK_PERFORMANCE)? };
    Ok(DiskPerformance {
        number: 0,
        bytes_read: nonneg(p.BytesRead),
        bytes_written: nonneg(p.BytesWritten),
        read_time: nonneg(p.ReadTime),
        write_time: nonneg(p.WriteTime),
        idle_time: nonneg(p.IdleTime),
        read_count: p.ReadCount,
        write_count: p.WriteCount,
        queue_depth: p.QueueDepth,
        query_time: nonneg(p.QueryTime),
    })
}

/// What a path names before any volume lookup.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Named {
    /// `\\.\PhysicalDriveN`.
    Drive(u32),
    /// `\\.\X:`: a volume, to open as written.
    Volume(String),
    /// Anything else: a file or directory on some volume.
    Path,
}

pub(crate) fn named(path: &Path) -> Named {
    let Some(s) = path.to_str() else {
        return Named::Path;
    };
    let s = s.replace('/', "\\");
    let Some(rest) = s.strip_prefix(r"\\.\").or_else(|| s.strip_prefix(r"\\?\")) else {
        return Named::Path;
    };
    let lower = rest.trim_end_matches('\\').to_ascii_lowercase();
    if let Some(n) = lower
        .strip_prefix("physicaldrive")
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok())
    {
        return Named::Drive(n);
    }
    if rest.len() == 2 && rest.ends_with(':') && rest.as_bytes()[0].is_ascii_alphabetic() {
        return Named::Volume(format!(r"\\.\{rest}"));
    }
    Named::Path
}

/// The device to open for the volume whose root is `root` (`C:\`, a
/// mounted folder, `\\?\Volume{...}\`): `\\.\C:` for a drive letter, else
/// the volume's GUID name without its final backslash.
fn volume_device(root: &str) -> Option<String> {
    let r = root.strip_prefix(r"\\?\").unwrap_or(root);
    let b = r.as_bytes();
    if b.len() == 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\' {
        return Some(format!(r"\\.\{}", &r[..2]));
    }
    let w = super::wide(std::ffi::OsStr::new(root));
    let mut name = [0u16; 64];
    // SAFETY: `w` is NUL-terminated UTF-16; `name` is a live buffer of the
    // length passed (a volume GUID path is 49 characters and its NUL).
    let ok = unsafe {
        fsys::GetVolumeNameForVolumeMountPointW(w.as_ptr(), name.as_mut_ptr(), name.len() as u32)
    };
    if ok == 0 {
        return None;
    }
    let s = from_wide(&name);
    Some(s.trim_end_matches('\\').to_string())
}

fn from_wide(w: &[u16]) -> String {
    let end = w.iter().position(|&c| c == 0).unwrap_or(w.len());
    String::from_utf16_lossy(&w[..end])
}

/// The root of the volume holding `path` (`C:\`, `C:\mnt\data\`,
/// `\\server\share\`), through its nearest existing ancestor.
fn volume_root(path: &Path) -> Option<String> {
    let abs = std::path::absolute(path).ok()?;
    let existing = abs.ancestors().find(|a| a.exists()).unwrap_or(&abs);
    let w = super::wide(existing.as_os_str());
    let mut root = vec![0u16; w.len().max(261) + 1];
    // SAFETY: `w` is NUL-terminated UTF-16; `root` is a live buffer of the
    // length passed, longer than the path (its volume root is a prefix of it).
    let ok = unsafe { fsys::GetVolumePathNameW(w.as_ptr(), root.as_mut_ptr(), root.len() as u32) };
    (ok != 0).then(|| from_wide(&root))
}

/// The physical drive under `path`: `path` itself when it is
/// `\\.\PhysicalDriveN`; else the disk of its volume
/// (`IOCTL_STORAGE_GET_DEVICE_NUMBER`). `None` when there is none or
/// Windows would not say: a network share, a RAM disk, a volume spread
/// over several disks, a CD.
pub fn disk_of(path: &Path) -> Option<PhysicalDisk> {
    let number = match named(path) {
        Named::Drive(n) => n,
        Named::Volume(v) => volume_disk(&v)?,
        Named::Path => volume_disk(&volume_device(&volume_root(path)?)?)?,
    };
    let f = open_device(&drive_path(number)).ok()?;
    Some(PhysicalDisk {
        number,
        size_bytes: disk_size(&f).unwrap_or(0),
    })
}

fn volume_disk(volume: &str) -> Option<u32> {
    let f = open_device(volume).ok()?;
    // SAFETY: STORAGE_DEVICE_NUMBER is plain integers, the IOCTL's output.
    let n: Ioctl::STORAGE_DEVICE_NUMBER =
        unsafe { ioctl_out(&f, Ioctl::IOCTL_STORAGE_GET_DEVICE_NUMBER) }.ok()?;
    // A CD's or a tape's number counts CdRomN or TapeN, not PhysicalDriveN.
    (n.DeviceType == fsys::FILE_DEVICE_DISK).then_some(n.DeviceNumber)
}

/// A disk's size: `IOCTL_DISK_GET_LENGTH_INFO`, which wants read access,
/// else `IOCTL_DISK_GET_DRIVE_GEOMETRY_EX`'s, which does not.
fn disk_size(f: &File) -> Option<u64> {
    // SAFETY: GET_LENGTH_INFORMATION is one integer, the IOCTL's output.
    if let Ok(l) =
        unsafe { ioctl_out::<Ioctl::GET_LENGTH_INFORMATION>(f, Ioctl::IOCTL_DISK_GET_LENGTH_INFO) }
    {
        return Some(nonneg(l.Length));
    }
    // DISK_GEOMETRY_EX is followed by partition and detection data that
    // Windows may write too: room for them, DiskSize at byte 24.
    // SAFETY: an array of integers, larger than the IOCTL's output.
    let g: [i64; 64] = unsafe { ioctl_out(f, Ioctl::IOCTL_DISK_GET_DRIVE_GEOMETRY_EX) }.ok()?;
    Some(nonneg(g[3]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_drives_and_volumes() {
        assert_eq!(named(Path::new(r"\\.\PhysicalDrive3")), Named::Drive(3));
        assert_eq!(named(Path::new("//./physicaldrive12")), Named::Drive(12));
        assert_eq!(named(Path::new(r"\\.\E:")), Named::Volume(r"\\.\E:".into()));
        assert_eq!(named(Path::new(r"\\.\PhysicalDrive")), Named::Path);
        assert_eq!(named(Path::new(r"C:\data\file")), Named::Path);
        assert_eq!(named(Path::new(r"\\?\C:\data\file")), Named::Path);
        assert_eq!(volume_device(r"D:\").as_deref(), Some(r"\\.\D:"));
        assert_eq!(volume_device(r"\\?\D:\").as_deref(), Some(r"\\.\D:"));
    }

    /// What holds on Windows and under Wine alike (Wine 8: per-processor
    /// times with no DPC or interrupt time, `PhysicalDrive0` for C: whose
    /// `IOCTL_DISK_PERFORMANCE` is not supported, no disk for Z:).
    #[test]
    fn real_counters_are_consistent() {
        let cpus = cpu_times().expect("per-processor times or GetSystemTimes");
        assert!(!cpus.is_empty());
        for c in &cpus {
            assert!(c.kernel >= c.idle, "kernel time holds idle time: {c:?}");
        }
        let disks = disks().expect("always Some on Windows");
        let mut numbers: Vec<u32> = disks.iter().map(|d| d.number).collect();
        numbers.dedup();
        assert_eq!(numbers.len(), disks.len(), "{disks:?}");
        if let Some(d) = disk_of(Path::new(r"C:\Windows")) {
            let again = disk_of(Path::new(&drive_path(d.number)));
            assert_eq!(again, Some(d));
            assert_eq!(disk_of(Path::new(r"\\.\C:")), Some(d));
        }
        assert_eq!(disk_of(Path::new(r"\\.\PhysicalDrive4000")), None);
    }
}
