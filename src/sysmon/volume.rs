//! What kind of volume a target lives on, where its sysfs names or its file
//! system reveal it: a cloud's block storage (AWS EBS, Google Persistent
//! Disk, an Azure or Hyper-V virtual disk), a virtual machine's paravirtual
//! disk (virtio, Xen), network block devices (RBD, iSCSI, NVMe over
//! fabrics, NBD), stacked devices (loop, multipath) and network or FUSE
//! file systems; and a one-line hint of what that implies for the numbers
//! (docs/cloud.md says how to read each cloud's provisioned limits).
//!
//! [`classify`] is a pure function of [`VolumeFacts`] (tested on fixture
//! strings); [`facts`] reads them from sysfs.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// A kind of volume iosim recognises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VolumeKind {
    /// An AWS EBS volume (NVMe model "Amazon Elastic Block Store").
    AwsEbs,
    /// An AWS EC2 instance-store NVMe disk ("Amazon EC2 NVMe Instance Storage").
    AwsInstanceStore,
    /// A Google Compute Engine Persistent Disk (SCSI "PersistentDisk", NVMe "nvme_card-pd").
    GcpPersistentDisk,
    /// A Google Compute Engine local SSD (SCSI "EphemeralDisk", NVMe "nvme_card").
    GcpLocalSsd,
    /// A Hyper-V virtual disk, as Azure managed disks appear ("Msft" "Virtual Disk").
    AzureVirtualDisk,
    /// An Azure NVMe disk: a remote managed disk over NVMe ("MSFT NVMe
    /// Accelerator") or a local one ("Microsoft NVMe Direct Disk").
    AzureNvme,
    /// A virtio-blk disk of a virtual machine (KVM, QEMU, many clouds).
    Virtio,
    /// A Xen virtual block device (older AWS instances, Xen hosts).
    Xen,
    /// A Ceph RADOS block device.
    Rbd,
    /// An iSCSI disk.
    Iscsi,
    /// NVMe over a network fabric (TCP, RDMA, Fibre Channel).
    NvmeOverFabrics,
    /// A network block device (nbd).
    Nbd,
    /// A loop device over a file.
    Loop,
    /// A device-mapper multipath device (a shared array, usually).
    Multipath,
    /// An NFS file system.
    Nfs,
    /// An SMB/CIFS file system.
    Smb,
    /// CephFS.
    CephFs,
    /// A FUSE file system.
    Fuse,
}

impl VolumeKind {
    /// What the kind is, in words.
    pub fn title(self) -> &'static str {
        match self {
            VolumeKind::AwsEbs => "an AWS EBS volume",
            VolumeKind::AwsInstanceStore => "an AWS EC2 instance-store NVMe disk",
            VolumeKind::GcpPersistentDisk => "a Google Cloud Persistent Disk",
            VolumeKind::GcpLocalSsd => "a Google Cloud local SSD",
            VolumeKind::AzureVirtualDisk => {
                "a Hyper-V virtual disk (how Azure managed disks appear)"
            }
            VolumeKind::AzureNvme => "an Azure NVMe disk",
            VolumeKind::Virtio => "a virtio disk of a virtual machine",
            VolumeKind::Xen => "a Xen virtual disk",
            VolumeKind::Rbd => "a Ceph RBD device",
            VolumeKind::Iscsi => "an iSCSI disk",
            VolumeKind::NvmeOverFabrics => "an NVMe-over-fabrics disk",
            VolumeKind::Nbd => "a network block device (nbd)",
            VolumeKind::Loop => "a loop device over a file",
            VolumeKind::Multipath => "a multipath device",
            VolumeKind::Nfs => "an NFS file system",
            VolumeKind::Smb => "an SMB/CIFS file system",
            VolumeKind::CephFs => "a CephFS file system",
            VolumeKind::Fuse => "a FUSE file system",
        }
    }

    /// What it implies for the numbers.
    pub fn implies(self) -> &'static str {
        match self {
            VolumeKind::AwsEbs => "provisioned IOPS and throughput caps apply (and the instance's own EBS limits); gp2, st1 and sc1 volumes burst on credits and fall to their baseline when the credits run out",
            VolumeKind::AwsInstanceStore => "a local disk of the host: no provisioned caps, and its data is lost when the instance stops",
            VolumeKind::GcpPersistentDisk => "network storage: limits grow with the disk's size and the VM's vCPU count, writes share the VM's network egress",
            VolumeKind::GcpLocalSsd => "a local disk of the host: limits per device count, and its data is lost when the VM stops",
            VolumeKind::AzureVirtualDisk | VolumeKind::AzureNvme => "on Azure, the disk tier caps IOPS and MB/s (and so does the VM size); small Premium and Standard SSDs burst on credits",
            VolumeKind::Virtio => "the host decides what reaches the storage (its cache mode, its limits, other guests): a cloud may cap IOPS and throughput",
            VolumeKind::Xen => "the host decides what reaches the storage: a cloud may cap IOPS and throughput",
            VolumeKind::Rbd | VolumeKind::CephFs => "every I/O crosses the network to the Ceph cluster: latency includes replication, and other clients share it",
            VolumeKind::Iscsi | VolumeKind::NvmeOverFabrics | VolumeKind::Nbd => "every I/O crosses the network: latency includes it, and other hosts may share the array",
            VolumeKind::Loop => "what reaches a real disk depends on the backing file's file system and cache",
            VolumeKind::Multipath => "usually a shared array: other hosts' load and path failover change the numbers",
            VolumeKind::Nfs | VolumeKind::Smb => "every I/O crosses the network to a file server: latency includes it, and other clients share it",
            VolumeKind::Fuse => "every I/O passes through a user-space file system daemon",
        }
    }

    /// One line for reports: what it is, what it implies, where to read more.
    pub fn hint(self) -> String {
        let more = if self.is_cloud() || self == VolumeKind::Virtio {
            "; see docs/cloud.md"
        } else {
            ""
        };
        format!("{}: {}{more}", self.title(), self.implies())
    }

    /// A cloud provider's storage.
    pub fn is_cloud(self) -> bool {
        matches!(
            self,
            VolumeKind::AwsEbs
                | VolumeKind::AwsInstanceStore
                | VolumeKind::GcpPersistentDisk
                | VolumeKind::GcpLocalSsd
                | VolumeKind::AzureVirtualDisk
                | VolumeKind::AzureNvme
        )
    }

    /// From a file system type alone (`nfs4`, `cifs`, `fuse.sshfs`), for a
    /// target on no local block device.
    pub fn of_fs_type(fs_type: &str) -> Option<VolumeKind> {
        let base = fs_type.split('.').next().unwrap_or("");
        match base {
            "nfs" | "nfs4" => Some(VolumeKind::Nfs),
            "cifs" | "smb3" | "smbfs" => Some(VolumeKind::Smb),
            "ceph" => Some(VolumeKind::CephFs),
            "fuse" | "fuseblk" => Some(VolumeKind::Fuse),
            _ => None,
        }
    }
}

/// What sysfs says about a disk, as [`classify`] reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VolumeFacts {
    /// Kernel name of the whole disk (`nvme0n1`, `vda`, `rbd0`).
    pub disk: String,
    /// `device/model`.
    pub model: Option<String>,
    /// `device/vendor`.
    pub vendor: Option<String>,
    /// The driver's name (`virtio_blk`, `nvme`, `sd`, `vbd`).
    pub driver: Option<String>,
    /// NVMe: the controller's `transport` (`pcie`, `tcp`, `rdma`, `fc`, `loop`).
    pub transport: Option<String>,
    /// The disk's device path in sysfs passes through an iSCSI session.
    pub iscsi_session: bool,
    /// Device-mapper: `dm/uuid` (`mpath-...` for multipath).
    pub dm_uuid: Option<String>,
}

/// The kind of volume these facts reveal, when they reveal one.
pub fn classify(f: &VolumeFacts) -> Option<VolumeKind> {
    let model = f.model.as_deref().unwrap_or("").trim();
    let vendor = f.vendor.as_deref().unwrap_or("").trim();
    let driver = f.driver.as_deref().unwrap_or("");
    let by_model = match model {
        "Amazon Elastic Block Store" => Some(VolumeKind::AwsEbs),
        "Amazon EC2 NVMe Instance Storage" => Some(VolumeKind::AwsInstanceStore),
        "nvme_card-pd" | "PersistentDisk" => Some(VolumeKind::GcpPersistentDisk),
        "nvme_card" | "EphemeralDisk" => Some(VolumeKind::GcpLocalSsd),
        "Virtual Disk" if vendor.eq_ignore_ascii_case("msft") => Some(VolumeKind::AzureVirtualDisk),
        m if m.starts_with("MSFT NVMe Accelerator") || m == "Microsoft NVMe Direct Disk" => {
            Some(VolumeKind::AzureNvme)
        }
        _ => None,
    };
    if by_model.is_some() {
        return by_model;
    }
    if f.iscsi_session {
        return Some(VolumeKind::Iscsi);
    }
    if let Some(t) = f.transport.as_deref() {
        if matches!(t, "tcp" | "rdma" | "fc") {
            return Some(VolumeKind::NvmeOverFabrics);
        }
    }
    if f.dm_uuid
        .as_deref()
        .is_some_and(|u| u.starts_with("mpath-"))
    {
        return Some(VolumeKind::Multipath);
    }
    let name = f.disk.as_str();
    let numbered = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()))
    };
    if driver == "virtio_blk" || (name.starts_with("vd") && vendor == "0x1af4") {
        Some(VolumeKind::Virtio)
    } else if driver == "vbd" || name.starts_with("xvd") {
        Some(VolumeKind::Xen)
    } else if numbered("rbd") {
        Some(VolumeKind::Rbd)
    } else if numbered("nbd") {
        Some(VolumeKind::Nbd)
    } else if numbered("loop") {
        Some(VolumeKind::Loop)
    } else {
        None
    }
}

/// Reads the facts of the disk whose sysfs directory is `disk_dir`
/// (`/sys/class/block/nvme0n1`). `model`, `vendor` and `driver` are the
/// ones already read for the device's description.
pub fn facts(
    disk_dir: &Path,
    disk: &str,
    model: Option<&str>,
    vendor: Option<&str>,
    driver: Option<&str>,
) -> VolumeFacts {
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let device = disk_dir.join("device");
    let iscsi_session = std::fs::canonicalize(&device).is_ok_and(|p| {
        p.components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with("session"))
    });
    VolumeFacts {
        disk: disk.to_string(),
        model: model.map(str::to_string),
        vendor: vendor.map(str::to_string),
        driver: driver.map(str::to_string),
        transport: read(&device.join("transport")),
        iscsi_session,
        dm_uuid: read(&disk_dir.join("dm/uuid")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(disk: &str, model: &str, vendor: &str, driver: &str) -> VolumeFacts {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
        VolumeFacts {
            disk: disk.into(),
            model: some(model),
            vendor: some(vendor),
            driver: some(driver),
            ..VolumeFacts::default()
        }
    }

    #[test]
    fn cloud_model_strings_name_the_cloud() {
        let k = |disk, model, vendor| classify(&f(disk, model, vendor, "nvme"));
        assert_eq!(
            k("nvme1n1", "Amazon Elastic Block Store              ", ""),
            Some(VolumeKind::AwsEbs)
        );
        assert_eq!(
            k("nvme2n1", "Amazon EC2 NVMe Instance Storage", ""),
            Some(VolumeKind::AwsInstanceStore)
        );
        assert_eq!(
            k("nvme0n1", "nvme_card-pd", ""),
            Some(VolumeKind::GcpPersistentDisk)
        );
        assert_eq!(k("nvme0n2", "nvme_card", ""), Some(VolumeKind::GcpLocalSsd));
        assert_eq!(
            classify(&f("sdb", "PersistentDisk", "Google", "sd")),
            Some(VolumeKind::GcpPersistentDisk)
        );
        assert_eq!(
            classify(&f("sdc", "Virtual Disk", "Msft", "sd")),
            Some(VolumeKind::AzureVirtualDisk)
        );
        assert_eq!(
            k("nvme0n1", "Microsoft NVMe Direct Disk", ""),
            Some(VolumeKind::AzureNvme)
        );
        assert_eq!(k("nvme0n1", "Samsung SSD 980 PRO 1TB", ""), None);
        assert!(VolumeKind::AwsEbs.hint().contains("burst"));
        assert!(VolumeKind::AwsEbs.hint().ends_with("see docs/cloud.md"));
    }

    #[test]
    fn drivers_names_and_transports_name_the_rest() {
        assert_eq!(
            classify(&f("vda", "", "0x1af4", "virtio_blk")),
            Some(VolumeKind::Virtio)
        );
        assert_eq!(classify(&f("xvdf", "", "", "vbd")), Some(VolumeKind::Xen));
        assert_eq!(classify(&f("rbd0", "", "", "")), Some(VolumeKind::Rbd));
        assert_eq!(classify(&f("nbd3", "", "", "")), Some(VolumeKind::Nbd));
        assert_eq!(classify(&f("loop7", "", "", "")), Some(VolumeKind::Loop));
        assert_eq!(classify(&f("loopy", "", "", "")), None);
        assert_eq!(classify(&f("sda", "Samsung SSD 860", "ATA", "sd")), None);
        let iscsi = VolumeFacts {
            iscsi_session: true,
            ..f("sdd", "VIRTUAL-DISK", "LIO-ORG", "sd")
        };
        assert_eq!(classify(&iscsi), Some(VolumeKind::Iscsi));
        let tcp = VolumeFacts {
            transport: Some("tcp".into()),
            ..f("nvme3n1", "Linux", "", "nvme")
        };
        assert_eq!(classify(&tcp), Some(VolumeKind::NvmeOverFabrics));
        let pcie = VolumeFacts {
            transport: Some("pcie".into()),
            ..f("nvme0n1", "Samsung SSD 980", "", "nvme")
        };
        assert_eq!(classify(&pcie), None);
        let mpath = VolumeFacts {
            dm_uuid: Some("mpath-3600a0980383030".into()),
            ..f("dm-2", "", "", "")
        };
        assert_eq!(classify(&mpath), Some(VolumeKind::Multipath));
        let lvm = VolumeFacts {
            dm_uuid: Some("LVM-abc".into()),
            ..f("dm-0", "", "", "")
        };
        assert_eq!(classify(&lvm), None);
    }

    #[test]
    fn file_systems_name_network_and_fuse_storage() {
        assert_eq!(VolumeKind::of_fs_type("nfs4"), Some(VolumeKind::Nfs));
        assert_eq!(VolumeKind::of_fs_type("cifs"), Some(VolumeKind::Smb));
        assert_eq!(VolumeKind::of_fs_type("ceph"), Some(VolumeKind::CephFs));
        assert_eq!(VolumeKind::of_fs_type("fuse.sshfs"), Some(VolumeKind::Fuse));
        assert_eq!(VolumeKind::of_fs_type("ext4"), None);
        assert_eq!(VolumeKind::of_fs_type("tmpfs"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_iscsi_session_is_read_from_the_device_path() {
        let d = tempfile::tempdir().unwrap();
        let session = d.path().join("platform/host3/session1/target3:0:0/3:0:0:0");
        std::fs::create_dir_all(&session).unwrap();
        let disk = d.path().join("block/sdd");
        std::fs::create_dir_all(&disk).unwrap();
        std::os::unix::fs::symlink(&session, disk.join("device")).unwrap();
        assert!(facts(&disk, "sdd", None, None, Some("sd")).iscsi_session);
        let plain = d.path().join("block/sda");
        std::fs::create_dir_all(&plain).unwrap();
        assert!(!facts(&plain, "sda", None, None, Some("sd")).iscsi_session);
    }
}
