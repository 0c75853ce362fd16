//! Which block device a target lives on: `/proc/self/mountinfo` and sysfs.
//!
//! A test file is found through its `st_dev` and the mount table; a block
//! device target through its `st_rdev`. Either way the device number leads to
//! `/sys/dev/block/MAJ:MIN`, which names the kernel device (`sda1`, `dm-0`,
//! `loop3`) whose `/proc/diskstats` line shows what the target's I/O did.
//! Partitions also name their whole disk; device-mapper devices their name and
//! the devices under them; loop devices their backing file.
//!
//! The sysfs root and the mountinfo file are injectable ([`SysEnv`]) so the
//! resolution logic is tested on fixture trees.
//!
//! On Windows a target resolves to the physical drive under its volume
//! (`PhysicalDriveN`, [`crate::platform::counters::disk_of`]), whose
//! counters [`super::diskstats::read_diskstats`] reads.

use crate::platform::fs::{device_number, is_device, major_minor};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One line of `/proc/self/mountinfo` (see `proc(5)`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountInfo {
    /// Mount id.
    pub mount_id: u32,
    /// Parent mount id.
    pub parent_id: u32,
    /// Major number of the filesystem's device (`st_dev` of its files).
    pub major: u32,
    /// Minor number.
    pub minor: u32,
    /// Directory of the filesystem that forms this mount's root.
    pub root: String,
    /// Where it is mounted (unescaped).
    pub mount_point: String,
    /// Per-mount options (`rw,relatime`).
    pub mount_options: String,
    /// Optional fields (`shared:1`, `master:2`), possibly none.
    pub optional: Vec<String>,
    /// Filesystem type (`ext4`, `xfs`, `tmpfs`, `nfs4`, `overlay`).
    pub fs_type: String,
    /// Mount source (`/dev/sda1`, `server:/export`, `tmpfs`).
    pub source: String,
    /// Superblock options (`rw,errors=remount-ro`, `upperdir=...`).
    pub super_options: String,
}

/// Undoes the kernel's octal escapes in mountinfo paths (`\040` space,
/// `\011` tab, `\012` newline, `\134` backslash).
pub fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if v <= 255 {
                out.push(v as u8);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses `/proc/self/mountinfo`. Malformed lines are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountInfo> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').filter(|s| !s.is_empty()).collect();
        let Some(sep) = f.iter().position(|&x| x == "-") else {
            continue;
        };
        if sep < 6 || f.len() < sep + 3 {
            continue;
        }
        let (Ok(mount_id), Ok(parent_id)) = (f[0].parse(), f[1].parse()) else {
            continue;
        };
        let Some((ma, mi)) = f[2].split_once(':') else {
            continue;
        };
        let (Ok(major), Ok(minor)) = (ma.parse(), mi.parse()) else {
            continue;
        };
        out.push(MountInfo {
            mount_id,
            parent_id,
            major,
            minor,
            root: unescape_octal(f[3]),
            mount_point: unescape_octal(f[4]),
            mount_options: f[5].to_string(),
            optional: f[6..sep].iter().map(|s| s.to_string()).collect(),
            fs_type: f[sep + 1].to_string(),
            source: unescape_octal(f[sep + 2]),
            super_options: f.get(sep + 3).map(|s| s.to_string()).unwrap_or_default(),
        });
    }
    out
}

/// True when one of this process's open descriptors is the block device `rdev`
/// (`/proc/self/fd`).
pub fn held_by_this_process(rdev: u64) -> bool {
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return false;
    };
    fds.flatten().any(|fd| {
        let p = fd.path();
        std::fs::metadata(&p).is_ok_and(|m| is_device(&p, &m) && device_number(&m) == rdev)
    })
}

/// True when the block device `rdev` is a swap area (`/proc/swaps`).
pub fn is_swap(rdev: u64) -> bool {
    std::fs::read_to_string("/proc/swaps").is_ok_and(|t| {
        swap_paths(&t).iter().any(|p| {
            std::fs::metadata(p)
                .is_ok_and(|m| is_device(Path::new(p), &m) && device_number(&m) == rdev)
        })
    })
}

/// The swap areas `/proc/swaps` lists (its first column, unescaped).
pub fn swap_paths(text: &str) -> Vec<PathBuf> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(|p| PathBuf::from(unescape_octal(p)))
        .collect()
}

/// Where the resolver looks: the sysfs root and the mountinfo file.
#[derive(Clone, Debug)]
pub struct SysEnv {
    /// sysfs root (`/sys`).
    pub sys_root: PathBuf,
    /// Mount table (`/proc/self/mountinfo`).
    pub mountinfo: PathBuf,
}

impl SysEnv {
    /// The running system.
    pub fn system() -> Self {
        SysEnv {
            sys_root: PathBuf::from("/sys"),
            mountinfo: PathBuf::from("/proc/self/mountinfo"),
        }
    }

    /// The mount table, parsed (empty when unreadable).
    pub fn mounts(&self) -> Vec<MountInfo> {
        std::fs::read_to_string(&self.mountinfo)
            .map(|t| parse_mountinfo(&t))
            .unwrap_or_default()
    }
}

impl Default for SysEnv {
    fn default() -> Self {
        Self::system()
    }
}

/// The block device a target's I/O reaches, as sysfs describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Kernel name whose `/proc/diskstats` line counts the target's I/O
    /// (`vda`, `vda1`, `dm-0`, `loop3`).
    pub name: String,
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
    /// Whole disk (`vda` for `vda1`; the same as `name` for a whole disk).
    pub disk: String,
    /// True when `name` is a partition of `disk`.
    pub partition: bool,
    /// Device model (`/sys/block/DISK/device/model`), when the driver gives one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model: Option<String>,
    /// Device vendor (`/sys/block/DISK/device/vendor`: `ATA`, `NETAPP`, or a
    /// PCI vendor id such as `0x1af4` for virtio), when the driver gives one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub vendor: Option<String>,
    /// Driver of the disk (`sd`, `virtio_blk`, `nvme`), when sysfs names one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub driver: Option<String>,
    /// Size of `name`, bytes.
    pub size_bytes: u64,
    /// The kernel believes the disk spins (`queue/rotational`).
    pub rotational: bool,
    /// Smallest addressable unit, bytes (`queue/logical_block_size`).
    pub logical_block_size: u64,
    /// Internal block size, bytes (`queue/physical_block_size`).
    pub physical_block_size: u64,
    /// Active I/O scheduler (`queue/scheduler`, the bracketed entry).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub scheduler: Option<String>,
    /// Device-mapper name (`vg0-data`) for `dm-N` devices.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub dm_name: Option<String>,
    /// Filesystem type of the mount holding the target (or mounted from the device).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fs_type: Option<String>,
    /// That mount's mount point.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mount_point: Option<String>,
    /// That mount's options: per-mount options, then superblock options.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mount_options: Option<String>,
    /// Devices under a device-mapper or md device (`/sys/block/X/slaves`).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub slaves: Vec<String>,
    /// File behind a loop device (`/sys/block/loopN/loop/backing_file`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub backing_file: Option<String>,
    /// How a loop device reaches its backing file (loop devices only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub loop_backing: Option<LoopBacking>,
    /// Anything a reader should know about these counters, in plain words.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub notes: Vec<String>,
    /// The kind of volume its names reveal (a cloud's block storage, virtio,
    /// iSCSI...; `sysmon::volume`), when they reveal one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub volume: Option<super::volume::VolumeKind>,
}

/// How a loop device reaches its backing file, from `/sys/block/loopN/loop/`
/// and the file's own place.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopBacking {
    /// `loop/dio`: the loop driver opens the backing file with O_DIRECT. When
    /// false (the `losetup` default), every read and write of the loop device
    /// goes through the host's page cache of that file.
    pub direct_io: bool,
    /// Where this device starts in the backing file, bytes: `loop/offset`,
    /// plus the partition's start for a partition of a loop device.
    pub offset: u64,
    /// The block device holding the backing file (its counters show what
    /// reached storage), or why there is none (a file on tmpfs lives in
    /// memory). Absent when iosim did not look (fixture trees).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub holder: Option<Box<Resolution>>,
}

impl LoopBacking {
    /// The block device holding the backing file, when there is one.
    pub fn holder_device(&self) -> Option<&DeviceInfo> {
        self.holder.as_deref().and_then(Resolution::device)
    }

    /// True when the backing file lives on a filesystem held in memory
    /// (tmpfs): nothing the loop device does reaches storage.
    pub fn in_memory(&self) -> bool {
        matches!(
            self.holder.as_deref(),
            Some(Resolution::NoDevice { fs_type, .. }) if is_memory_fs(fs_type)
        )
    }
}

impl DeviceInfo {
    /// Kernel names worth sampling: the device, then its whole disk if it is
    /// a partition, then (for a loop device) the device holding its backing
    /// file, whose counters show whether the loop device's I/O reached storage.
    pub fn monitor_names(&self) -> Vec<String> {
        let mut v = vec![self.name.clone()];
        if self.disk != self.name && !self.disk.is_empty() {
            v.push(self.disk.clone());
        }
        if let Some(h) = self.loop_backing.as_ref().and_then(|l| l.holder_device()) {
            if !v.contains(&h.name) {
                v.push(h.name.clone());
            }
        }
        v
    }
}

/// Whether a target has a block device whose counters iosim can watch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
// Built once per target, never on a hot path: no need to box the device.
#[allow(clippy::large_enum_variant)]
pub enum Resolution {
    /// The target's I/O reaches this block device.
    Device(DeviceInfo),
    /// It does not reach a local block device, and why, in plain words.
    NoDevice {
        /// Filesystem type, or empty when unknown.
        fs_type: String,
        /// Why there is no device.
        reason: String,
    },
}

impl Resolution {
    /// The device, if any.
    pub fn device(&self) -> Option<&DeviceInfo> {
        match self {
            Resolution::Device(d) => Some(d),
            Resolution::NoDevice { .. } => None,
        }
    }

    /// The kind of volume the target lives on, when its device's names or
    /// its file system reveal it (`sysmon::volume`).
    pub fn volume(&self) -> Option<super::volume::VolumeKind> {
        match self {
            Resolution::Device(d) => d.volume,
            Resolution::NoDevice { fs_type, .. } => super::volume::VolumeKind::of_fs_type(fs_type),
        }
    }
}

/// Storage held in memory under a target: nothing written there survives a
/// power cut, and a flush costs nothing, so what a run measures is memory
/// (`iosim fsync` gives no sync-method advice from it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MemoryBacked {
    /// A file system held in memory (tmpfs, ramfs).
    FileSystem {
        /// Its type.
        fs_type: String,
    },
    /// A loop device whose backing file is on such a file system.
    LoopOverMemory {
        /// The loop device (`loop0`).
        loop_device: String,
        /// Its backing file.
        backing_file: String,
    },
    /// A block device made of memory: a RAM disk (`brd`'s `ramN`) or `zramN`.
    RamDisk {
        /// The device (`ram0`).
        device: String,
    },
}

impl MemoryBacked {
    /// What it is, in words, for a sentence.
    pub fn words(&self) -> String {
        match self {
            MemoryBacked::FileSystem { fs_type } => {
                format!("a {fs_type} file system, held in memory (RAM)")
            }
            MemoryBacked::LoopOverMemory {
                loop_device,
                backing_file,
            } => format!(
                "loop device {loop_device}, whose backing file {backing_file} is in memory (tmpfs)"
            ),
            MemoryBacked::RamDisk { device } => format!("{device}, a RAM disk"),
        }
    }
}

impl Resolution {
    /// Whether the target's storage is held in memory: a memory file
    /// system, a loop device over a file on one (its whole disk's, for a
    /// partition), or a RAM disk.
    pub fn memory_backed(&self) -> Option<MemoryBacked> {
        match self {
            Resolution::NoDevice { fs_type, .. } if is_memory_fs(fs_type) => {
                Some(MemoryBacked::FileSystem {
                    fs_type: fs_type.clone(),
                })
            }
            Resolution::NoDevice { .. } => None,
            Resolution::Device(d) => {
                if d.loop_backing.as_ref().is_some_and(LoopBacking::in_memory) {
                    return Some(MemoryBacked::LoopOverMemory {
                        loop_device: d.disk.clone(),
                        backing_file: d.backing_file.clone().unwrap_or_default(),
                    });
                }
                let ram = |n: &str, prefix: &str| {
                    n.strip_prefix(prefix)
                        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
                };
                // brd's RAM disks have major 1 (RAMDISK_MAJOR); zram names itself.
                ((d.major == 1 && ram(&d.disk, "ram")) || ram(&d.disk, "zram")).then(|| {
                    MemoryBacked::RamDisk {
                        device: d.disk.clone(),
                    }
                })
            }
        }
    }
}

/// Filesystems held in memory.
const MEMORY_FS: &[&str] = &["tmpfs", "ramfs", "hugetlbfs", "devtmpfs"];

/// True for a filesystem type held in memory (`tmpfs`, `ramfs`...).
pub fn is_memory_fs(fs_type: &str) -> bool {
    MEMORY_FS.contains(&fs_type.split('.').next().unwrap_or(""))
}

/// Filesystems made up by the kernel: no storage at all.
const PSEUDO_FS: &[&str] = &[
    "proc",
    "sysfs",
    "cgroup",
    "cgroup2",
    "debugfs",
    "tracefs",
    "securityfs",
    "configfs",
    "pstore",
    "bpf",
    "devpts",
    "mqueue",
    "autofs",
    "binfmt_misc",
    "efivarfs",
    "fusectl",
    "nsfs",
];

/// Network or virtual filesystems: I/O leaves the machine or goes to another
/// filesystem, never straight to a local block device.
const NETWORK_FS: &[&str] = &[
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "ceph",
    "glusterfs",
    "9p",
    "virtiofs",
    "afs",
    "lustre",
    "gpfs",
    "beegfs",
    "fuse",
    "overlay",
    "aufs",
    "vboxsf",
    "vmhgfs",
];

/// Resolves a target path (file, directory or block device) on the running system.
pub fn resolve_target(path: &Path) -> Resolution {
    resolve_target_in(path, &SysEnv::system())
}

/// [`resolve_target`] with an explicit sysfs root and mount table. The path
/// itself is `stat`ed for real. A path that does not exist yet resolves
/// through its nearest existing parent directory (where it would be created).
pub fn resolve_target_in(path: &Path, env: &SysEnv) -> Resolution {
    resolve_depth(path, env, 0)
}

fn resolve_depth(path: &Path, env: &SysEnv, depth: u32) -> Resolution {
    if let Some(r) = resolve_physical_disk(path) {
        return r;
    }
    let mut p = path.to_path_buf();
    let meta = loop {
        match std::fs::metadata(&p) {
            Ok(m) => break m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let parent = p
                    .parent()
                    .map(Path::to_path_buf)
                    .filter(|x| !x.as_os_str().is_empty());
                match parent {
                    Some(x) if x != p => p = x,
                    _ => p = PathBuf::from("."),
                }
            }
            Err(e) => {
                return Resolution::NoDevice {
                    fs_type: String::new(),
                    reason: format!("cannot look at {}: {e}", path.display()),
                }
            }
        }
    };
    let mut r = if is_device(&p, &meta) {
        let (maj, min) = major_minor(device_number(&meta));
        resolve_block_dev(maj, min, env)
    } else {
        let (maj, min) = major_minor(crate::platform::fs::filesystem_device(&meta));
        let canon = std::fs::canonicalize(&p).unwrap_or(p);
        resolve_file_dev(maj, min, &canon, env, depth)
    };
    if depth == 0 {
        if let Resolution::Device(d) = &mut r {
            find_loop_holder(d, env, depth);
        }
    }
    r
}

/// Windows: the physical drive under `path`
/// ([`crate::platform::counters::disk_of`]), whose PhysicalDisk counters
/// show what the target's I/O did, or why there is none. `None` on Linux,
/// where the mount table and sysfs say.
fn resolve_physical_disk(path: &Path) -> Option<Resolution> {
    match crate::platform::counters::disk_of(path) {
        Some(d) => {
            let name = super::diskstats::physical_drive_name(d.number);
            Some(Resolution::Device(DeviceInfo {
                disk: name.clone(),
                name,
                size_bytes: d.size_bytes,
                ..Default::default()
            }))
        }
        None if crate::platform::IS_WINDOWS => Some(Resolution::NoDevice {
            fs_type: String::new(),
            reason: "the volume's disk could not be queried: Windows names no single physical \
                     drive under it (a network share, a RAM disk, a volume spread over several \
                     disks and a CD have none)"
                .to_string(),
        }),
        None => None,
    }
}

/// For a loop device, finds where its backing file lives (one level down:
/// a loop device over a file on another loop device names that one, not
/// what is under it) and says so in the notes.
fn find_loop_holder(d: &mut DeviceInfo, env: &SysEnv, depth: u32) {
    let (Some(file), Some(lb)) = (&d.backing_file, &mut d.loop_backing) else {
        return;
    };
    // A deleted backing file is still open: its directory shows where it was.
    let path = file.strip_suffix(" (deleted)").unwrap_or(file);
    let holder = resolve_depth(Path::new(path), env, depth + 1);
    let disk = &d.disk;
    let cache = if lb.direct_io {
        "with direct I/O (loop/dio 1)"
    } else {
        "through the host's page cache (loop/dio 0)"
    };
    d.notes.push(match &holder {
        Resolution::Device(h) => format!(
            "{disk} reads and writes its backing file {cache}; the file is on {}, whose counters are watched too",
            h.name
        ),
        Resolution::NoDevice { reason, .. } => {
            format!("{disk} reads and writes its backing file {cache}; the file has no block device: {reason}")
        }
    });
    lb.holder = Some(Box::new(holder));
}

/// Resolves a block device target from its device number: the device itself,
/// plus the mount that uses it if any.
pub fn resolve_block_dev(major: u32, minor: u32, env: &SysEnv) -> Resolution {
    let Some(dir) = block_dir(major, minor, env) else {
        return Resolution::NoDevice {
            fs_type: String::new(),
            reason: format!(
                "block device {major}:{minor} is not listed in {}/dev/block, so the kernel keeps no counters iosim can read for it",
                env.sys_root.display()
            ),
        };
    };
    let mut info = describe_block(&dir, major, minor, env);
    if let Some(m) = env
        .mounts()
        .into_iter()
        .rfind(|m| m.major == major && m.minor == minor)
    {
        set_mount(&mut info, &m);
        info.notes.push(format!(
            "the device is mounted on {} ({}): filesystem activity counts in its counters too",
            m.mount_point, m.fs_type
        ));
    }
    Resolution::Device(info)
}

/// Resolves a file whose `st_dev` is `major:minor` and whose canonical path is
/// `path` (used to find its mount).
pub fn resolve_file_dev(
    major: u32,
    minor: u32,
    path: &Path,
    env: &SysEnv,
    depth: u32,
) -> Resolution {
    let mounts = env.mounts();
    let mount = find_mount(&mounts, major, minor, path);
    let fs_type = mount.map(|m| m.fs_type.clone()).unwrap_or_default();
    if major != 0 {
        if let Some(dir) = block_dir(major, minor, env) {
            let mut info = describe_block(&dir, major, minor, env);
            if let Some(m) = mount {
                set_mount(&mut info, m);
            }
            return Resolution::Device(info);
        }
        return Resolution::NoDevice {
            fs_type,
            reason: format!(
                "the file's device {major}:{minor} is not listed in {}/dev/block",
                env.sys_root.display()
            ),
        };
    }
    // Major 0: an anonymous device number. In-memory, network and virtual
    // filesystems have no block device; btrfs (and fuseblk) use anonymous
    // numbers but name their device as the mount source.
    let base = fs_type.split('.').next().unwrap_or("");
    if is_memory_fs(base) {
        return Resolution::NoDevice {
            fs_type,
            reason: "in memory, no block device: reads and writes are served from RAM, so results show memory speed, not storage".into(),
        };
    }
    if PSEUDO_FS.contains(&base) {
        return Resolution::NoDevice {
            fs_type,
            reason: "a kernel pseudo filesystem, no block device: put the test file on a real filesystem".into(),
        };
    }
    if let Some(m) = mount {
        if let Some(dir) = source_block_dir(&m.source, env) {
            let (ma, mi) = read_devnum(&dir).unwrap_or((0, 0));
            let mut info = describe_block(&dir, ma, mi, env);
            set_mount(&mut info, m);
            info.notes.push(format!(
                "{} gives files an anonymous device number; these counters are those of its mount source {}{}",
                m.fs_type,
                m.source,
                if m.fs_type == "btrfs" {
                    ", and a btrfs filesystem may span more devices than this one"
                } else {
                    ""
                }
            ));
            return Resolution::Device(info);
        }
        if m.fs_type == "overlay" {
            return Resolution::NoDevice {
                fs_type,
                reason: overlay_reason(m, env, depth),
            };
        }
        if m.fs_type == "zfs" {
            return Resolution::NoDevice {
                fs_type,
                reason: format!(
                    "ZFS dataset {}: ZFS spreads I/O over its pool's devices and has no single block device; watch `zpool iostat -v` beside the run",
                    m.source
                ),
            };
        }
    }
    if NETWORK_FS.contains(&base) {
        return Resolution::NoDevice {
            fs_type,
            reason: "network or virtual filesystem, no local block device: its I/O goes over the network or to another filesystem, so no disk counters match it".into(),
        };
    }
    Resolution::NoDevice {
        reason: format!(
            "the {} filesystem has no block device iosim can find (anonymous device {major}:{minor})",
            if fs_type.is_empty() { "unknown" } else { &fs_type }
        ),
        fs_type,
    }
}

fn overlay_reason(m: &MountInfo, env: &SysEnv, depth: u32) -> String {
    let upper = m
        .super_options
        .split(',')
        .find_map(|o| o.strip_prefix("upperdir="))
        .map(unescape_octal);
    let mut s = String::from(
        "network or virtual filesystem, no local block device: overlay (container layers) stacks directories of other filesystems",
    );
    if let Some(u) = upper {
        let where_ = if depth == 0 {
            match resolve_depth(Path::new(&u), env, depth + 1) {
                Resolution::Device(d) => format!("device {}", d.name),
                Resolution::NoDevice { reason, .. } => format!("no device ({reason})"),
            }
        } else {
            "an unknown device".into()
        };
        s.push_str(&format!(
            "; new and changed files live in the upper dir {u}, on {where_}, while unchanged files are read from lower layers that may be elsewhere"
        ));
    }
    s.push_str("; for device counters put the test file on a volume or bind mount");
    s
}

/// The mount holding `path`: the longest mount point that is a prefix of the
/// path, preferring mounts with the file's device number; on ties the later
/// mount wins (it covers the earlier one).
pub fn find_mount<'a>(
    mounts: &'a [MountInfo],
    major: u32,
    minor: u32,
    path: &Path,
) -> Option<&'a MountInfo> {
    let best = |same_dev: bool| {
        let mut best: Option<&MountInfo> = None;
        for m in mounts {
            if same_dev && (m.major, m.minor) != (major, minor) {
                continue;
            }
            if !path.starts_with(&m.mount_point) {
                continue;
            }
            if best.is_none_or(|b| m.mount_point.len() >= b.mount_point.len()) {
                best = Some(m);
            }
        }
        best
    };
    best(true).or_else(|| best(false))
}

impl MountInfo {
    /// Its options as one list: per-mount options, then the superblock
    /// options not already among them (`rw,relatime,errors=remount-ro`).
    pub fn options(&self) -> String {
        let mut opts: Vec<&str> = self
            .mount_options
            .split(',')
            .filter(|s| !s.is_empty())
            .collect();
        for o in self.super_options.split(',') {
            if !o.is_empty() && !opts.contains(&o) {
                opts.push(o);
            }
        }
        opts.join(",")
    }
}

fn set_mount(info: &mut DeviceInfo, m: &MountInfo) {
    info.fs_type = Some(m.fs_type.clone());
    info.mount_point = Some(m.mount_point.clone());
    info.mount_options = Some(m.options());
}

/// Whether the disk under `dev` polls for completions
/// (`/sys/block/DISK/queue/io_poll`: 1 only where it has poll queues, as NVMe
/// with `nvme.poll_queues` set); None when sysfs does not say.
pub fn io_poll(dev: &DeviceInfo, env: &SysEnv) -> Option<bool> {
    let q = env
        .sys_root
        .join("class/block")
        .join(&dev.disk)
        .join("queue/io_poll");
    read_u64(&q).map(|v| v != 0)
}

/// Describes a block device by its kernel name (`sda`, `sda2`, `dm-0`), as
/// `/sys/class/block/NAME` shows it; None when sysfs does not list it.
pub fn describe_name(name: &str, env: &SysEnv) -> Option<DeviceInfo> {
    if name.is_empty() || name.contains('/') {
        return None;
    }
    let dir = std::fs::canonicalize(env.sys_root.join("class/block").join(name)).ok()?;
    let (major, minor) = read_devnum(&dir).unwrap_or((0, 0));
    Some(describe_block(&dir, major, minor, env))
}

/// Whether `disk` declares a volatile write cache (`/sys/block/DISK/queue/write_cache`
/// is `write back`): the kernel sends it flushes; for `write through` it drops them.
pub fn volatile_write_cache(disk: &str) -> Option<bool> {
    let v = read_trim(&Path::new("/sys/block").join(disk).join("queue/write_cache"))?;
    Some(v == "write back")
}

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn read_u64(p: &Path) -> Option<u64> {
    read_trim(p)?.parse().ok()
}

fn read_devnum(dir: &Path) -> Option<(u32, u32)> {
    let s = read_trim(&dir.join("dev"))?;
    let (a, b) = s.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The sysfs directory of block device `major:minor`: `/sys/dev/block/M:m`
/// followed to its real place, or a scan of `/sys/class/block/*/dev`.
pub fn block_dir(major: u32, minor: u32, env: &SysEnv) -> Option<PathBuf> {
    let link = env
        .sys_root
        .join("dev/block")
        .join(format!("{major}:{minor}"));
    if let Ok(p) = std::fs::canonicalize(&link) {
        return Some(p);
    }
    let class = env.sys_root.join("class/block");
    for e in std::fs::read_dir(&class).ok()?.flatten() {
        let p = std::fs::canonicalize(e.path()).unwrap_or(e.path());
        if read_devnum(&p) == Some((major, minor)) {
            return Some(p);
        }
    }
    None
}

/// The sysfs directory of a mount source such as `/dev/sdb`,
/// `/dev/mapper/vg0-data` or `/dev/disk/by-uuid/...`.
fn source_block_dir(source: &str, env: &SysEnv) -> Option<PathBuf> {
    let rest = source.strip_prefix("/dev/")?;
    if let Some(dm) = rest.strip_prefix("mapper/") {
        for e in std::fs::read_dir(env.sys_root.join("block"))
            .ok()?
            .flatten()
        {
            let p = std::fs::canonicalize(e.path()).unwrap_or(e.path());
            if read_trim(&p.join("dm/name")).as_deref() == Some(dm) {
                return Some(p);
            }
        }
    }
    // The kernel name (`/dev/sdb` -> `sdb`), then a real device node
    // (following `/dev/disk/by-*` and LVM links) for its number.
    let name = Path::new(rest).file_name()?.to_str()?;
    if let Ok(p) = std::fs::canonicalize(env.sys_root.join("class/block").join(name)) {
        return Some(p);
    }
    let m = std::fs::metadata(source).ok()?;
    if is_device(Path::new(source), &m) {
        let (maj, min) = major_minor(device_number(&m));
        return block_dir(maj, min, env);
    }
    None
}

/// Describes the block device whose sysfs directory is `dir`.
fn describe_block(dir: &Path, major: u32, minor: u32, _env: &SysEnv) -> DeviceInfo {
    let fname = |p: &Path| {
        p.file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let partition = dir.join("partition").exists();
    let disk_dir = if partition {
        dir.parent().unwrap_or(dir).to_path_buf()
    } else {
        dir.to_path_buf()
    };
    let q = disk_dir.join("queue");
    let scheduler = read_trim(&q.join("scheduler")).map(|s| {
        s.split_whitespace()
            .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
            .map(str::to_string)
            .unwrap_or(s)
    });
    let mut slaves: Vec<String> = std::fs::read_dir(disk_dir.join("slaves"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    slaves.sort();
    let (major, minor) = read_devnum(dir).unwrap_or((major, minor));
    let name = fname(dir);
    let disk = fname(&disk_dir);
    let mut notes = Vec::new();
    if partition {
        notes.push(format!(
            "{name} is a partition of {disk}: {name}'s counters are the target's I/O; {disk}'s also include its other partitions"
        ));
    }
    let backing_file = read_trim(&disk_dir.join("loop/backing_file"));
    let mut loop_backing = None;
    if let Some(b) = &backing_file {
        notes.push(format!(
            "{disk} is a loop device over the file {b}: what reaches the real disk depends on that file's filesystem and cache"
        ));
        let start = if partition {
            read_u64(&dir.join("start")).unwrap_or(0) * 512
        } else {
            0
        };
        loop_backing = Some(LoopBacking {
            direct_io: read_trim(&disk_dir.join("loop/dio")).as_deref() == Some("1"),
            offset: read_u64(&disk_dir.join("loop/offset")).unwrap_or(0) + start,
            holder: None,
        });
    }
    let model = read_trim(&disk_dir.join("device/model"));
    let vendor = read_trim(&disk_dir.join("device/vendor"));
    let driver = std::fs::read_link(disk_dir.join("device/driver"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let volume = super::volume::classify(&super::volume::facts(
        &disk_dir,
        &disk,
        model.as_deref(),
        vendor.as_deref(),
        driver.as_deref(),
    ));
    DeviceInfo {
        name,
        major,
        minor,
        disk,
        partition,
        model,
        vendor,
        driver,
        volume,
        size_bytes: read_u64(&dir.join("size")).unwrap_or(0) * 512,
        rotational: read_trim(&q.join("rotational")).as_deref() == Some("1"),
        logical_block_size: read_u64(&q.join("logical_block_size")).unwrap_or(0),
        physical_block_size: read_u64(&q.join("physical_block_size")).unwrap_or(0),
        scheduler,
        dm_name: read_trim(&disk_dir.join("dm/name")),
        fs_type: None,
        mount_point: None,
        mount_options: None,
        slaves,
        backing_file,
        loop_backing,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
    }

    fn env(mountinfo: &str) -> SysEnv {
        SysEnv {
            sys_root: root().join("sys"),
            mountinfo: root().join("proc").join(mountinfo),
        }
    }

    /// `queue/io_poll` of the whole disk: 1 polls, 0 does not, absent unknown.
    #[test]
    fn io_poll_reads_the_disk_queue() {
        let d = tempfile::tempdir().unwrap();
        let env = SysEnv {
            sys_root: d.path().to_path_buf(),
            mountinfo: d.path().join("mountinfo"),
        };
        let disk = |name: &str| DeviceInfo {
            name: format!("{name}p1"),
            disk: name.into(),
            ..DeviceInfo::default()
        };
        for (name, v) in [("nvme0n1", "1\n"), ("loop3", "0\n")] {
            let q = d.path().join("class/block").join(name).join("queue");
            std::fs::create_dir_all(&q).unwrap();
            std::fs::write(q.join("io_poll"), v).unwrap();
        }
        assert_eq!(io_poll(&disk("nvme0n1"), &env), Some(true));
        assert_eq!(io_poll(&disk("loop3"), &env), Some(false));
        assert_eq!(io_poll(&disk("vdb"), &env), None);
    }

    fn dev(r: Resolution) -> DeviceInfo {
        match r {
            Resolution::Device(d) => d,
            other => panic!("expected a device, got {other:?}"),
        }
    }

    fn nodev(r: Resolution) -> (String, String) {
        match r {
            Resolution::NoDevice { fs_type, reason } => (fs_type, reason),
            other => panic!("expected no device, got {other:?}"),
        }
    }

    #[test]
    fn unescapes_octal() {
        assert_eq!(unescape_octal(r"/mnt/my\040disk"), "/mnt/my disk");
        assert_eq!(unescape_octal(r"a\011b\012c\134d"), "a\tb\nc\\d");
        assert_eq!(unescape_octal(r"trailing\04"), r"trailing\04");
        assert_eq!(unescape_octal(r"\999"), r"\999");
    }

    #[test]
    fn parses_mountinfo_fixture() {
        let t = std::fs::read_to_string(root().join("proc/mountinfo_server.txt")).unwrap();
        let m = parse_mountinfo(&t);
        assert_eq!(m.len(), 9, "{m:#?}");
        let rootfs = &m[0];
        assert_eq!(rootfs.mount_point, "/");
        assert_eq!((rootfs.major, rootfs.minor), (8, 1));
        assert_eq!(rootfs.optional, vec!["shared:1".to_string()]);
        assert_eq!(rootfs.fs_type, "ext4");
        assert_eq!(rootfs.source, "/dev/sda1");
        assert_eq!(rootfs.super_options, "rw,errors=remount-ro");
        let space = m.iter().find(|x| x.fs_type == "btrfs").unwrap();
        assert_eq!(space.mount_point, "/mnt/my disk");
        assert_eq!(
            space.optional,
            vec!["shared:40".to_string(), "master:3".to_string()]
        );
        let tmp = m.iter().find(|x| x.fs_type == "tmpfs").unwrap();
        assert!(tmp.optional.is_empty());
        // A line without the " - " separator is skipped.
        assert!(parse_mountinfo("1 2 8:1 / / rw ext4 /dev/sda1 rw\n").is_empty());
    }

    #[test]
    fn partition_names_its_disk() {
        let d = dev(resolve_file_dev(
            8,
            1,
            Path::new("/var/lib/iosim/test.dat"),
            &env("mountinfo_server.txt"),
            0,
        ));
        assert_eq!(d.name, "sda1");
        assert_eq!(d.disk, "sda");
        assert!(d.partition);
        assert_eq!((d.major, d.minor), (8, 1));
        assert_eq!(d.model.as_deref(), Some("Samsung SSD 860"));
        assert_eq!(d.size_bytes, 2_097_152 * 512);
        assert!(!d.rotational);
        assert_eq!(d.logical_block_size, 512);
        assert_eq!(d.physical_block_size, 4096);
        assert_eq!(d.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(d.fs_type.as_deref(), Some("ext4"));
        assert_eq!(d.mount_point.as_deref(), Some("/"));
        assert_eq!(
            d.mount_options.as_deref(),
            Some("rw,relatime,errors=remount-ro")
        );
        assert_eq!(
            d.monitor_names(),
            vec!["sda1".to_string(), "sda".to_string()]
        );
        assert!(d.notes[0].contains("partition of sda"));
    }

    #[test]
    fn device_mapper_gives_name_and_slaves() {
        let d = dev(resolve_file_dev(
            253,
            0,
            Path::new("/data/db/file.mdf"),
            &env("mountinfo_server.txt"),
            0,
        ));
        assert_eq!(d.name, "dm-0");
        assert_eq!(d.disk, "dm-0");
        assert!(!d.partition);
        assert_eq!(d.dm_name.as_deref(), Some("vg0-data"));
        assert_eq!(d.slaves, vec!["sda2".to_string(), "sdb".to_string()]);
        assert_eq!(d.fs_type.as_deref(), Some("xfs"));
        assert_eq!(d.mount_point.as_deref(), Some("/data"));
        assert_eq!(d.scheduler.as_deref(), Some("none"));
        assert_eq!(d.monitor_names(), vec!["dm-0".to_string()]);
    }

    #[test]
    fn loop_device_gives_backing_file() {
        let d = dev(resolve_block_dev(7, 3, &env("mountinfo_server.txt")));
        assert_eq!(d.name, "loop3");
        assert_eq!(d.backing_file.as_deref(), Some("/var/tmp/disk image.img"));
        assert_eq!(d.size_bytes, 64 << 20);
        assert!(d.fs_type.is_none(), "loop3 itself is not mounted");
        // Its partition is mounted: a file there names loop3p1 and loop3.
        let p = dev(resolve_file_dev(
            259,
            0,
            Path::new("/mnt/loop/x"),
            &env("mountinfo_server.txt"),
            0,
        ));
        assert_eq!(p.name, "loop3p1");
        assert_eq!(p.disk, "loop3");
        assert_eq!(p.backing_file.as_deref(), Some("/var/tmp/disk image.img"));
        assert_eq!(p.fs_type.as_deref(), Some("ext4"));
        // loop/dio and loop/offset; the partition starts 2048 sectors in.
        let lb = d.loop_backing.as_ref().unwrap();
        assert!(!lb.direct_io);
        assert_eq!(lb.offset, 0);
        assert!(lb.holder.is_none(), "fixtures are not looked through");
        assert_eq!(p.loop_backing.as_ref().unwrap().offset, 2048 * 512);
        // Not a loop device: none.
        let sda = dev(resolve_block_dev(8, 0, &env("mountinfo_server.txt")));
        assert!(sda.loop_backing.is_none());
    }

    /// Where a loop device's backing file lives, on this machine: a file in
    /// the temp directory and one in /dev/shm (tmpfs, in memory).
    #[cfg(target_os = "linux")]
    #[test]
    fn loop_holder_is_found_and_watched() {
        let looped = |file: &Path, suffix: &str| {
            let mut d = DeviceInfo {
                name: "loop9".into(),
                disk: "loop9".into(),
                backing_file: Some(format!("{}{suffix}", file.display())),
                loop_backing: Some(LoopBacking::default()),
                ..Default::default()
            };
            find_loop_holder(&mut d, &SysEnv::system(), 0);
            d
        };
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("disk.img");
        std::fs::write(&img, b"x").unwrap();
        let d = looped(&img, "");
        let lb = d.loop_backing.as_ref().unwrap();
        match lb.holder.as_deref().unwrap() {
            Resolution::Device(h) => {
                assert_eq!(d.monitor_names(), vec!["loop9".to_string(), h.name.clone()]);
                assert!(
                    d.notes.iter().any(|n| n.contains(&format!(
                        "through the host's page cache (loop/dio 0); the file is on {}",
                        h.name
                    ))),
                    "{:?}",
                    d.notes
                );
            }
            Resolution::NoDevice { reason, .. } => {
                assert!(!reason.is_empty());
                assert_eq!(d.monitor_names(), vec!["loop9".to_string()]);
            }
        }
        // A deleted backing file is looked for where it was.
        assert_eq!(looped(&img, " (deleted)").loop_backing, d.loop_backing);
        // /dev/shm is Linux's tmpfs (Wine shows it to Windows programs as
        // Z:\dev\shm, an ordinary folder to them).
        let shm = (!crate::platform::IS_WINDOWS)
            .then(|| tempfile::tempdir_in("/dev/shm").ok())
            .flatten();
        if let Some(shm) = shm {
            let img = shm.path().join("disk.img");
            std::fs::write(&img, b"x").unwrap();
            let d = looped(&img, "");
            assert!(d.loop_backing.as_ref().unwrap().in_memory(), "{d:?}");
            assert_eq!(d.monitor_names(), vec!["loop9".to_string()]);
            assert!(d.notes[0].contains("in memory"), "{:?}", d.notes);
        }
        assert!(!LoopBacking::default().in_memory());
    }

    #[test]
    fn mounted_block_device_says_so() {
        let d = dev(resolve_block_dev(8, 1, &env("mountinfo_server.txt")));
        assert_eq!(d.mount_point.as_deref(), Some("/"));
        assert!(d.notes.iter().any(|n| n.contains("mounted on /")));
    }

    #[test]
    fn falls_back_to_class_block_scan() {
        // 8:16 (sdb) has no /sys/dev/block link in the fixture.
        let d = dev(resolve_block_dev(8, 16, &env("mountinfo_server.txt")));
        assert_eq!(d.name, "sdb");
        assert!(d.rotational);
    }

    #[test]
    fn unknown_device_number_is_explained() {
        let (_, reason) = nodev(resolve_block_dev(65, 7, &env("mountinfo_server.txt")));
        assert!(reason.contains("65:7"), "{reason}");
    }

    #[test]
    fn tmpfs_is_in_memory() {
        let (fs, reason) = nodev(resolve_file_dev(
            0,
            45,
            Path::new("/mnt/ram/f"),
            &env("mountinfo_server.txt"),
            0,
        ));
        assert_eq!(fs, "tmpfs");
        assert!(reason.starts_with("in memory, no block device"), "{reason}");
    }

    #[test]
    fn memory_backed_storage_is_named() {
        let tmp = resolve_file_dev(
            0,
            45,
            Path::new("/mnt/ram/f"),
            &env("mountinfo_server.txt"),
            0,
        );
        assert_eq!(
            tmp.memory_backed(),
            Some(MemoryBacked::FileSystem {
                fs_type: "tmpfs".into()
            })
        );
        let disk = |name: &str, major: u32| {
            Resolution::Device(DeviceInfo {
                name: name.into(),
                disk: name.into(),
                major,
                ..DeviceInfo::default()
            })
        };
        assert_eq!(
            disk("ram0", 1).memory_backed(),
            Some(MemoryBacked::RamDisk {
                device: "ram0".into()
            })
        );
        assert!(disk("zram1", 252).memory_backed().is_some());
        assert_eq!(disk("vda", 253).memory_backed(), None);
        assert_eq!(disk("ramdisk", 1).memory_backed(), None);
        let mut lo = DeviceInfo {
            name: "loop3p1".into(),
            disk: "loop3".into(),
            backing_file: Some("/dev/shm/x/disk.img".into()),
            loop_backing: Some(LoopBacking {
                holder: Some(Box::new(tmp.clone())),
                ..LoopBacking::default()
            }),
            ..DeviceInfo::default()
        };
        let m = Resolution::Device(lo.clone()).memory_backed().unwrap();
        assert!(
            m.words()
                .contains("loop3, whose backing file /dev/shm/x/disk.img is in memory"),
            "{}",
            m.words()
        );
        lo.loop_backing = Some(LoopBacking::default());
        assert_eq!(Resolution::Device(lo).memory_backed(), None);
        let nfs = resolve_file_dev(
            0,
            50,
            Path::new("/mnt/nfs/f"),
            &env("mountinfo_server.txt"),
            0,
        );
        assert_eq!(nfs.memory_backed(), None);
    }

    #[test]
    fn nfs_is_network() {
        let (fs, reason) = nodev(resolve_file_dev(
            0,
            50,
            Path::new("/mnt/nfs/f"),
            &env("mountinfo_server.txt"),
            0,
        ));
        assert_eq!(fs, "nfs4");
        assert!(
            reason.starts_with("network or virtual filesystem, no local block device"),
            "{reason}"
        );
    }

    #[test]
    fn fuse_subtype_is_network() {
        let (fs, reason) = nodev(resolve_file_dev(
            0,
            52,
            Path::new("/mnt/ssh/f"),
            &env("mountinfo_server.txt"),
            0,
        ));
        assert_eq!(fs, "fuse.sshfs");
        assert!(reason.contains("network or virtual"), "{reason}");
    }

    #[test]
    fn overlay_names_its_upper_dir() {
        let (fs, reason) = nodev(resolve_file_dev(
            0,
            60,
            Path::new("/merged/f"),
            &env("mountinfo_server.txt"),
            0,
        ));
        assert_eq!(fs, "overlay");
        assert!(
            reason.contains("upper dir /var/lib/docker/overlay2/abc/diff"),
            "{reason}"
        );
        assert!(reason.contains("network or virtual"), "{reason}");
    }

    #[test]
    fn btrfs_resolves_through_mount_source() {
        let d = dev(resolve_file_dev(
            0,
            70,
            Path::new("/mnt/my disk/f"),
            &env("mountinfo_server.txt"),
            0,
        ));
        assert_eq!(d.name, "sdb");
        assert_eq!(d.fs_type.as_deref(), Some("btrfs"));
        assert!(
            d.notes.iter().any(|n| n.contains("span more devices")),
            "{:?}",
            d.notes
        );
    }

    #[test]
    fn mapper_source_resolves_by_dm_name() {
        let e = env("mountinfo_server.txt");
        let p = source_block_dir("/dev/mapper/vg0-data", &e).unwrap();
        assert_eq!(p.file_name().unwrap(), "dm-0");
    }

    #[test]
    fn longest_mount_prefix_wins() {
        let t = std::fs::read_to_string(root().join("proc/mountinfo_server.txt")).unwrap();
        let m = parse_mountinfo(&t);
        assert_eq!(
            find_mount(&m, 253, 0, Path::new("/data/x"))
                .unwrap()
                .mount_point,
            "/data"
        );
        // "/database" is not under "/data".
        assert_eq!(
            find_mount(&m, 8, 1, Path::new("/database"))
                .unwrap()
                .mount_point,
            "/"
        );
        // Device number not in the table: longest prefix of any.
        assert_eq!(
            find_mount(&m, 9, 9, Path::new("/mnt/nfs/a"))
                .unwrap()
                .mount_point,
            "/mnt/nfs"
        );
    }

    #[test]
    fn resolves_this_machine() {
        // Whatever the machine, a real directory resolves to something with a reason.
        match resolve_target(Path::new(env!("CARGO_MANIFEST_DIR"))) {
            Resolution::Device(d) => {
                assert!(!d.name.is_empty());
                // Windows names the physical drive only, not the filesystem.
                assert!(d.fs_type.is_some() || crate::platform::IS_WINDOWS, "{d:?}");
            }
            Resolution::NoDevice { reason, .. } => assert!(!reason.is_empty()),
        }
        // A path that does not exist yet resolves through its parent.
        let a = resolve_target(Path::new(env!("CARGO_MANIFEST_DIR")));
        let b = resolve_target(&Path::new(env!("CARGO_MANIFEST_DIR")).join("no/such/file"));
        assert_eq!(a, b);
    }

    #[test]
    fn physical_disk_comes_first_on_windows_only() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let raw = crate::platform::counters::disk_of(here);
        if !crate::platform::IS_WINDOWS {
            assert_eq!(raw, None);
            assert_eq!(resolve_physical_disk(here), None);
            return;
        }
        match (raw, resolve_target(here)) {
            (Some(d), Resolution::Device(info)) => {
                assert_eq!(info.name, format!("PhysicalDrive{}", d.number));
                assert_eq!(info.disk, info.name);
                assert_eq!(info.size_bytes, d.size_bytes);
            }
            (None, Resolution::NoDevice { reason, .. }) => {
                assert!(reason.contains("could not be queried"), "{reason}");
            }
            (raw, r) => panic!("disk_of gave {raw:?}, resolve_target {r:?}"),
        }
    }

    #[test]
    fn resolution_round_trips_through_json() {
        let r = resolve_block_dev(7, 3, &env("mountinfo_server.txt"));
        let s = serde_json::to_string(&r).unwrap();
        assert!(s.contains("\"kind\":\"device\""), "{s}");
        assert_eq!(serde_json::from_str::<Resolution>(&s).unwrap(), r);
        let n = Resolution::NoDevice {
            fs_type: "tmpfs".into(),
            reason: "in memory".into(),
        };
        let s = serde_json::to_string(&n).unwrap();
        assert_eq!(serde_json::from_str::<Resolution>(&s).unwrap(), n);
    }

    #[test]
    fn swap_areas_are_listed_unescaped() {
        let t = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/dm-1                               partition\t8388604\t\t0\t\t-2\n/swap\\040file                          file\t\t1048572\t\t0\t\t-3\n";
        assert_eq!(
            swap_paths(t),
            vec![PathBuf::from("/dev/dm-1"), PathBuf::from("/swap file")]
        );
        assert!(!is_swap(u64::MAX));
    }
}
