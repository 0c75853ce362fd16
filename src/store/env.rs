//! Where each target lives, recorded when a run is saved: filesystem, mount
//! point and options, the block device, its model and size. Read from
//! `/proc/self/mountinfo` and `/sys`; anything unreadable is left out.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde_json::{json, Map, Value};

/// One mount from `/proc/self/mountinfo`.
#[derive(Clone, Debug, PartialEq)]
pub struct Mount {
    /// `major:minor` of the filesystem's device.
    pub dev: String,
    /// Mount point.
    pub point: String,
    /// Per-mount options.
    pub options: String,
    /// Filesystem type.
    pub fstype: String,
    /// Source (device path).
    pub source: String,
    /// Superblock options.
    pub super_options: String,
}

fn unescape(s: &str) -> String {
    // mountinfo escapes space, tab, newline and backslash as \ooo (octal).
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() {
            if let Some(v) = s
                .get(i + 1..i + 4)
                .and_then(|o| u8::from_str_radix(o, 8).ok())
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses `/proc/self/mountinfo`.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let pre: Vec<&str> = pre.split(' ').collect();
            let post: Vec<&str> = post.split(' ').collect();
            Some(Mount {
                dev: pre.get(2)?.to_string(),
                point: unescape(pre.get(4)?),
                options: pre.get(5)?.to_string(),
                fstype: post.first()?.to_string(),
                source: unescape(post.get(1).unwrap_or(&"")),
                super_options: post.get(2).unwrap_or(&"").to_string(),
            })
        })
        .collect()
}

fn read(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Block device facts for `major:minor`: name, whole-disk name, model, size.
fn block_device(dev: &str, out: &mut Map<String, Value>) {
    let sys = Path::new("/sys/dev/block").join(dev);
    let Ok(real) = std::fs::canonicalize(&sys) else {
        return;
    };
    let name = real.file_name().map(|n| n.to_string_lossy().into_owned());
    // A partition's parent directory is its disk.
    let disk_dir = if real.join("partition").exists() {
        real.parent().map(Path::to_path_buf).unwrap_or(real.clone())
    } else {
        real.clone()
    };
    if let Some(n) = name {
        out.insert("device".into(), json!(format!("/dev/{n}")));
    }
    if let Some(d) = disk_dir.file_name() {
        out.insert("disk".into(), json!(d.to_string_lossy()));
    }
    if let Some(sz) = read(real.join("size")).and_then(|s| s.parse::<u64>().ok()) {
        out.insert("device_size".into(), json!(sz * 512));
    }
    let model = read(disk_dir.join("device/model")).or_else(|| {
        let driver = std::fs::read_link(disk_dir.join("device/driver")).ok()?;
        Some(driver.file_name()?.to_string_lossy().into_owned())
    });
    if let Some(m) = model {
        out.insert("model".into(), json!(m));
    }
    if let Some(v) = read(disk_dir.join("device/vendor")) {
        out.insert("vendor".into(), json!(v));
    }
    if let Some(r) = read(disk_dir.join("queue/rotational")) {
        out.insert("rotational".into(), json!(r == "1"));
    }
}

/// Facts about one target path (a file, or a block device).
pub fn target(path: &str, mounts: &[Mount]) -> Option<Value> {
    let p = Path::new(path);
    let md = std::fs::metadata(p).ok()?;
    let mut out = Map::new();
    out.insert("path".into(), json!(path));
    let is_block = {
        use std::os::unix::fs::FileTypeExt;
        md.file_type().is_block_device()
    };
    let dev = if is_block { md.rdev() } else { md.dev() };
    let majmin = format!("{}:{}", libc::major(dev), libc::minor(dev));
    if !is_block {
        let real = std::fs::canonicalize(p).ok()?;
        let real = real.to_string_lossy();
        if let Some(m) = mounts
            .iter()
            .filter(|m| {
                real.starts_with(&m.point)
                    && (m.point == "/"
                        || real.len() == m.point.len()
                        || real[m.point.len()..].starts_with('/'))
            })
            .max_by_key(|m| m.point.len())
        {
            out.insert("filesystem".into(), json!(m.fstype));
            out.insert("mount_point".into(), json!(m.point));
            out.insert(
                "mount_options".into(),
                json!(format!("{},{}", m.options, m.super_options)),
            );
            out.insert("mount_source".into(), json!(m.source));
        }
    }
    block_device(&majmin, &mut out);
    Some(Value::Object(out))
}

/// Facts about every existing target path.
pub fn collect(paths: &[String]) -> Value {
    let mounts = parse_mountinfo(&read("/proc/self/mountinfo").unwrap_or_default());
    Value::Array(paths.iter().filter_map(|p| target(p, &mounts)).collect())
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
    fn parses_mountinfo() {
        let m = parse_mountinfo(
            "27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,errors=remount-ro\n\
             40 27 7:0 / /mnt/my\\040disk rw - xfs /dev/loop0 rw,attr2\n",
        );
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].fstype, "ext4");
        assert_eq!(m[0].dev, "254:0");
        assert_eq!(m[1].point, "/mnt/my disk");
        assert_eq!(m[1].super_options, "rw,attr2");
    }

    #[test]
    fn describes_a_real_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x");
        std::fs::write(&f, b"x").unwrap();
        let v = collect(&[f.to_string_lossy().into_owned(), "/no/such/file".into()]);
        let a = v.as_array().unwrap();
        assert_eq!(a.len(), 1);
        assert!(a[0]["filesystem"].is_string(), "{v}");
        assert!(a[0]["mount_options"].as_str().unwrap().contains("r"), "{v}");
    }
}
