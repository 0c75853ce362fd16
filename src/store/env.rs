//! Where each target lives, recorded when a run is saved: filesystem, mount
//! point and options, the block device, its model and size. Resolved by the
//! system monitor's one mount and device resolver
//! ([`crate::sysmon::mounts::resolve_target`]); anything unreadable is left out.

use std::path::Path;

use serde_json::{json, Map, Value};

use crate::sysmon::mounts::{resolve_target, Resolution};

/// Facts about one existing target path (a file, or a block device).
pub fn target(path: &str) -> Option<Value> {
    let p = Path::new(path);
    std::fs::metadata(p).ok()?;
    let mut out = Map::new();
    out.insert("path".into(), json!(path));
    match resolve_target(p) {
        Resolution::Device(d) => {
            if let Some(fs) = &d.fs_type {
                out.insert("filesystem".into(), json!(fs));
            }
            if let Some(m) = &d.mount_point {
                out.insert("mount_point".into(), json!(m));
            }
            if let Some(o) = &d.mount_options {
                out.insert("mount_options".into(), json!(o));
            }
            out.insert("device".into(), json!(format!("/dev/{}", d.name)));
            out.insert("disk".into(), json!(d.disk));
            out.insert("device_size".into(), json!(d.size_bytes));
            if let Some(m) = &d.model {
                out.insert("model".into(), json!(m));
            }
            out.insert("rotational".into(), json!(d.rotational));
        }
        Resolution::NoDevice { fs_type, reason } => {
            if !fs_type.is_empty() {
                out.insert("filesystem".into(), json!(fs_type));
            }
            out.insert("no_device".into(), json!(reason));
        }
    }
    Some(Value::Object(out))
}

/// Facts about every existing target path.
pub fn collect(paths: &[String]) -> Value {
    Value::Array(paths.iter().filter_map(|p| target(p)).collect())
}

/// A short device description for the `device` column: model (disk), per target.
pub fn device_summary(env: &Value) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for t in env.as_array()? {
        let disk = t.get("disk").and_then(Value::as_str);
        let model = t.get("model").and_then(Value::as_str);
        let s = match (model, disk) {
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
        let v = collect(&[f.to_string_lossy().into_owned(), "/no/such/file".into()]);
        let a = v.as_array().unwrap();
        assert_eq!(a.len(), 1);
        assert!(a[0]["filesystem"].is_string(), "{v}");
        // The same answer as the run's own device resolution.
        match resolve_target(&f) {
            Resolution::Device(d) => {
                assert_eq!(a[0]["disk"], d.disk.as_str(), "{v}");
                assert!(a[0]["mount_options"].as_str().unwrap().contains('r'), "{v}");
            }
            Resolution::NoDevice { .. } => assert!(a[0]["no_device"].is_string(), "{v}"),
        }
    }
}
