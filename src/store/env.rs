//! Where each target lives, recorded when a run is saved: filesystem, mount
//! point and options, the block device, its model and size. Resolved by the
//! system monitor's one mount and device resolver
//! ([`crate::sysmon::mounts::resolve_target`]); anything unreadable is left out.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::sysmon::mounts::{resolve_target, Resolution};

/// Where one target lived when its result was saved (the history's
/// `environment` column holds a list of them). Fields in name order, as
/// they were stored before they had a type.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetPlace {
    /// The block device (`/dev/vda1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Size of that device, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_size: Option<u64>,
    /// Its whole disk (`vda`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<String>,
    /// Filesystem type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<String>,
    /// Device model, when the driver gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Mount options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_options: Option<String>,
    /// Mount point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_point: Option<String>,
    /// Why there is no block device (tmpfs, overlay...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_device: Option<String>,
    /// The target path, as the history keeps it.
    #[serde(default)]
    pub path: String,
    /// The kernel believes the disk spins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
}

/// Facts about one existing target path (a file, or a block device).
pub fn target(path: &str) -> Option<TargetPlace> {
    let p = Path::new(path);
    std::fs::metadata(p).ok()?;
    let mut out = TargetPlace {
        path: path.to_string(),
        ..TargetPlace::default()
    };
    match resolve_target(p) {
        Resolution::Device(d) => {
            out.filesystem = d.fs_type.clone();
            out.mount_point = d.mount_point.clone();
            out.mount_options = d.mount_options.clone();
            out.device = Some(format!("/dev/{}", d.name));
            out.disk = Some(d.disk.clone());
            out.device_size = Some(d.size_bytes);
            out.model = d.model.clone();
            out.rotational = Some(d.rotational);
        }
        Resolution::NoDevice { fs_type, reason } => {
            out.filesystem = Some(fs_type).filter(|f| !f.is_empty());
            out.no_device = Some(reason);
        }
    }
    Some(out)
}

/// Facts about every existing target path.
pub fn collect(paths: &[String]) -> Vec<TargetPlace> {
    paths.iter().filter_map(|p| target(p)).collect()
}

/// A short device description for the `device` column: model (disk), per target.
pub fn device_summary(env: &[TargetPlace]) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for t in env {
        let s = match (&t.model, &t.disk) {
            (Some(m), Some(d)) => format!("{m} ({d})"),
            (Some(m), None) => m.to_string(),
            (None, Some(d)) => d.to_string(),
            (None, None) => continue,
        };
        if !names.contains(&s) {
            names.push(s);
        }
    }
    (!names.is_empty()).then(|| names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_a_real_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x");
        std::fs::write(&f, b"x").unwrap();
        let a = collect(&[f.to_string_lossy().into_owned(), "/no/such/file".into()]);
        assert_eq!(a.len(), 1);
        // Linux names the filesystem from the mount table.
        assert!(
            a[0].filesystem.is_some() || crate::platform::IS_WINDOWS,
            "{a:?}"
        );
        // The same answer as the run's own device resolution.
        match resolve_target(&f) {
            Resolution::Device(d) => {
                assert_eq!(a[0].disk.as_deref(), Some(d.disk.as_str()), "{a:?}");
                assert!(
                    crate::platform::IS_WINDOWS
                        || a[0].mount_options.as_deref().unwrap().contains('r'),
                    "{a:?}"
                );
            }
            Resolution::NoDevice { .. } => assert!(a[0].no_device.is_some(), "{a:?}"),
        }
    }

    #[test]
    fn reads_what_earlier_versions_stored() {
        // The column as stored before it had a type: the same names.
        let v = r#"[{"device":"/dev/vda1","device_size":1024,"disk":"vda","filesystem":"ext4",
            "model":"QEMU","mount_options":"rw","mount_point":"/","path":"/x","rotational":false}]"#;
        let t: Vec<TargetPlace> = serde_json::from_str(v).unwrap();
        assert_eq!(device_summary(&t).as_deref(), Some("QEMU (vda)"));
        let back = serde_json::to_string(&t).unwrap();
        assert_eq!(back, v.split_whitespace().collect::<String>());
    }
}
