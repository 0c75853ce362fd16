//! What a location's storage is, described for a report that must stand on
//! its own: the block device the location's I/O reaches (model, vendor,
//! size, rotational or not, scheduler: [`super::mounts::DeviceInfo`]), the
//! devices under it (a partition's whole disk, a device-mapper or md
//! device's members, the device holding a loop device's backing file), the
//! filesystem with its mount options, and the filesystem's size and free
//! space (`statvfs`).
//!
//! Everything comes from the one mount and device resolver
//! ([`super::mounts`]); the walk down the device stack is tested on the
//! fixture sysfs tree.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::mounts::{describe_name, find_mount, resolve_target_in, MountInfo, Resolution, SysEnv};

/// How a device below sits under the one above it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// The whole disk a partition is part of.
    WholeDisk,
    /// A member of a device-mapper (LVM, dm-crypt, multipath) or md RAID device.
    Member,
    /// The device holding a loop device's backing file.
    BackingFile,
}

impl Layer {
    /// In words, before the name of the device above: `whole disk of sda1`.
    pub fn words(self) -> &'static str {
        match self {
            Layer::WholeDisk => "whole disk of",
            Layer::Member => "member of",
            Layer::BackingFile => "holds the backing file of",
        }
    }
}

/// A device under another one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Underlying {
    /// How it sits under `above`.
    pub layer: Layer,
    /// Kernel name of the device above it.
    pub above: String,
    /// The loop device's backing file (for [`Layer::BackingFile`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_file: Option<String>,
    /// The device (or, for a backing file on tmpfs or NFS, why there is none).
    pub device: Resolution,
}

/// A filesystem's size and free space, as stored in results.
pub use crate::platform::types::Space as FsSpace;

/// One location's storage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StorageFacts {
    /// The path described (a directory, a file or a block device).
    pub path: String,
    /// The block device its I/O reaches, or why there is none.
    pub device: Resolution,
    /// The devices under that one, top down.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub underlying: Vec<Underlying>,
    /// The mount holding the path (None for a block device, or when unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<MountInfo>,
    /// The filesystem's size and free space (None for a block device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<FsSpace>,
}

/// Describes the storage of `path` on the running system.
pub fn describe(path: &Path) -> StorageFacts {
    describe_in(path, &SysEnv::system())
}

/// [`describe`] with an explicit sysfs root and mount table. A path that
/// does not exist yet is described through its nearest existing parent.
pub fn describe_in(path: &Path, env: &SysEnv) -> StorageFacts {
    let device = resolve_target_in(path, env);
    let mut probe = path;
    while !probe.exists() {
        match probe.parent() {
            Some(p) if !p.as_os_str().is_empty() => probe = p,
            _ => break,
        }
    }
    let meta = std::fs::metadata(probe).ok();
    let is_device = meta
        .as_ref()
        .is_some_and(|m| crate::platform::fs::is_device(probe, m));
    let (mount, space) = match meta.filter(|_| !is_device) {
        Some(m) => {
            let canon = std::fs::canonicalize(probe).unwrap_or_else(|_| probe.to_path_buf());
            let mounts = env.mounts();
            let mount = {
                let (maj, min) =
                    crate::platform::fs::major_minor(crate::platform::fs::filesystem_device(&m));
                find_mount(&mounts, maj, min, &canon).cloned()
            };
            let space = crate::platform::fs::space(probe).ok();
            (mount, space)
        }
        None => (None, None),
    };
    let underlying = match &device {
        Resolution::Device(d) => underlying(d, env, &|p| resolve_target_in(p, env)),
        Resolution::NoDevice { .. } => Vec::new(),
    };
    StorageFacts {
        path: path.display().to_string(),
        device,
        underlying,
        mount,
        space,
    }
}

/// Most devices listed under one location (a loop over a file on LVM over
/// RAID is six or seven).
const MAX_UNDERLYING: usize = 16;

/// The devices under `top`, top down: a partition's whole disk, the members
/// of a device-mapper or md device, the device holding a loop device's
/// backing file (found by `resolve_file`), and theirs in turn.
pub fn underlying(
    top: &super::mounts::DeviceInfo,
    env: &SysEnv,
    resolve_file: &dyn Fn(&Path) -> Resolution,
) -> Vec<Underlying> {
    let mut out: Vec<Underlying> = Vec::new();
    let mut seen = vec![top.name.clone()];
    let mut queue = std::collections::VecDeque::from([top.clone()]);
    while let Some(d) = queue.pop_front() {
        let mut below: Vec<(Layer, Option<String>, Resolution)> = Vec::new();
        if d.partition && !d.disk.is_empty() && d.disk != d.name {
            if let Some(w) = describe_name(&d.disk, env) {
                below.push((Layer::WholeDisk, None, Resolution::Device(w)));
            }
        }
        for s in &d.slaves {
            if let Some(m) = describe_name(s, env) {
                below.push((Layer::Member, None, Resolution::Device(m)));
            }
        }
        // A loop device's partition reads its disk's backing file too: it is
        // listed once, under the loop device itself.
        if let (false, Some(b)) = (d.partition, &d.backing_file) {
            let file = b.strip_suffix(" (deleted)").unwrap_or(b);
            let res = if Path::new(file).exists() {
                resolve_file(Path::new(file))
            } else {
                Resolution::NoDevice {
                    fs_type: String::new(),
                    reason: format!(
                        "the backing file {file} is not there (deleted, or in another mount namespace)"
                    ),
                }
            };
            below.push((Layer::BackingFile, Some(b.clone()), res));
        }
        for (layer, backing_file, res) in below {
            if out.len() >= MAX_UNDERLYING {
                return out;
            }
            if let Resolution::Device(x) = &res {
                if seen.contains(&x.name) {
                    continue;
                }
                seen.push(x.name.clone());
                queue.push_back(x.clone());
            }
            out.push(Underlying {
                layer,
                above: d.name.clone(),
                backing_file,
                device: res,
            });
        }
    }
    out
}

/// A vendor as sysfs gives it, with the name of a PCI vendor id where it is
/// one iosim knows (`0x1af4` is virtio, the paravirtual disk of KVM/QEMU).
pub fn vendor_words(raw: &str) -> String {
    let raw = raw.trim();
    let known = match raw.to_ascii_lowercase().as_str() {
        "0x1af4" => Some("virtio: the paravirtual disk of KVM/QEMU"),
        "0x1b36" => Some("QEMU"),
        "0x1d0f" => Some("Amazon"),
        "0x1414" => Some("Microsoft"),
        "0x15ad" => Some("VMware"),
        "0x8086" => Some("Intel"),
        "0x144d" => Some("Samsung"),
        _ => None,
    };
    match known {
        Some(k) => format!("{raw} ({k})"),
        None => raw.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn env() -> SysEnv {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        SysEnv {
            sys_root: root.join("sys"),
            mountinfo: root.join("proc/mountinfo_server.txt"),
        }
    }

    fn dev(r: &Resolution) -> &super::super::mounts::DeviceInfo {
        r.device()
            .unwrap_or_else(|| panic!("expected a device: {r:?}"))
    }

    fn never(_: &Path) -> Resolution {
        panic!("no backing file should be resolved here")
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_partition_names_its_whole_disk_with_model_and_vendor() {
        let e = env();
        let sda1 = describe_name("sda1", &e).unwrap();
        assert_eq!(sda1.vendor.as_deref(), Some("ATA"), "trimmed");
        assert_eq!(sda1.driver.as_deref(), Some("sd"));
        let u = underlying(&sda1, &e, &never);
        assert_eq!(u.len(), 1, "{u:#?}");
        assert_eq!(u[0].layer, Layer::WholeDisk);
        assert_eq!(u[0].above, "sda1");
        let sda = dev(&u[0].device);
        assert_eq!(sda.name, "sda");
        assert_eq!(sda.model.as_deref(), Some("Samsung SSD 860"));
        assert_eq!(sda.scheduler.as_deref(), Some("mq-deadline"));
        assert!(!sda.rotational);
    }

    #[test]
    fn device_mapper_lists_its_members_and_their_disks() {
        let e = env();
        let dm = describe_name("dm-0", &e).unwrap();
        assert_eq!(dm.dm_name.as_deref(), Some("vg0-data"));
        let u = underlying(&dm, &e, &never);
        let names: Vec<(Layer, &str, &str)> = u
            .iter()
            .map(|x| (x.layer, x.above.as_str(), dev(&x.device).name.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                (Layer::Member, "dm-0", "sda2"),
                (Layer::Member, "dm-0", "sdb"),
                (Layer::WholeDisk, "sda2", "sda"),
            ]
        );
        assert!(dev(&u[1].device).rotational, "sdb spins");
        assert_eq!(dev(&u[1].device).model.as_deref(), Some("WDC WD40EFRX-68N"));
    }

    #[test]
    fn a_loop_device_names_its_backing_file_once() {
        let e = env();
        // The fixture's backing file does not exist on this machine.
        let p1 = describe_name("loop3p1", &e).unwrap();
        let u = underlying(&p1, &e, &never);
        assert_eq!(u.len(), 2, "{u:#?}");
        assert_eq!(
            (u[0].layer, dev(&u[0].device).name.as_str()),
            (Layer::WholeDisk, "loop3")
        );
        assert_eq!(u[1].layer, Layer::BackingFile);
        assert_eq!(u[1].above, "loop3");
        assert_eq!(
            u[1].backing_file.as_deref(),
            Some("/var/tmp/disk image.img")
        );
        match &u[1].device {
            Resolution::NoDevice { reason, .. } => {
                assert!(reason.contains("is not there"), "{reason}")
            }
            d => panic!("{d:?}"),
        }
    }

    #[test]
    fn a_backing_file_that_exists_is_resolved_and_followed_down() {
        let e = env();
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut loop3 = describe_name("loop3", &e).unwrap();
        loop3.backing_file = Some(format!("{} (deleted)", file.path().display()));
        let sda1 = describe_name("sda1", &e).unwrap();
        let seen = std::cell::RefCell::new(Vec::<PathBuf>::new());
        let resolve = |p: &Path| {
            seen.borrow_mut().push(p.to_path_buf());
            Resolution::Device(sda1.clone())
        };
        let u = underlying(&loop3, &e, &resolve);
        assert_eq!(seen.borrow().as_slice(), [file.path().to_path_buf()]);
        let names: Vec<&str> = u.iter().map(|x| dev(&x.device).name.as_str()).collect();
        assert_eq!(
            names,
            ["sda1", "sda"],
            "the backing file's device, then its disk"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn statvfs_figures_become_bytes() {
        let d = tempfile::tempdir().unwrap();
        let s = describe(d.path());
        let space = s.space.expect("a directory has a filesystem");
        assert!(space.size_bytes > 0 && space.block_size > 0, "{space:?}");
        assert!(space.free_bytes <= space.size_bytes);
        assert!(s.mount.is_some(), "the mount holding a temp dir");
        // A file not created yet is described through its directory.
        let later = describe(&d.path().join("not-yet.dat"));
        assert_eq!(later.mount, s.mount);
        assert_eq!(later.device, s.device);
    }

    #[test]
    fn vendor_ids_are_named() {
        assert_eq!(
            vendor_words("0x1af4\n"),
            "0x1af4 (virtio: the paravirtual disk of KVM/QEMU)"
        );
        assert_eq!(vendor_words("NETAPP  "), "NETAPP");
    }

    #[test]
    fn facts_round_trip_through_json() {
        let e = env();
        let dm = describe_name("dm-0", &e).unwrap();
        let f = StorageFacts {
            path: "/data/x".into(),
            underlying: underlying(&dm, &e, &never),
            device: Resolution::Device(dm),
            mount: None,
            space: Some(FsSpace::default()),
        };
        let s = serde_json::to_string(&f).unwrap();
        assert!(s.contains("\"layer\":\"member\""), "{s}");
        assert_eq!(serde_json::from_str::<StorageFacts>(&s).unwrap(), f);
    }
}
