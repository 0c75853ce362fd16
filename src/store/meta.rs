//! The indexed facts of a stored document, read from its JSON by lookups so
//! that documents of any kind (runs, quick suites, sweeps, simulations) and
//! fields added later (device models, profiles) are picked up when present
//! and never required.

use serde_json::Value;

/// Indexed columns stored beside a document. [`Meta::from_doc`] fills them
/// from the JSON; callers may override any field.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Meta {
    /// Start time, RFC 3339 UTC (default: the document's `started_at`, else now).
    pub started_at: Option<String>,
    /// Host name.
    pub host: Option<String>,
    /// Target paths.
    pub targets: Vec<String>,
    /// Device model (or name) the targets live on, when the document says.
    pub device: Option<String>,
    /// Workload profile name (simulator, sweeps), when the document says.
    pub profile: Option<String>,
    /// iosim version that produced the document.
    pub iosim_version: Option<String>,
    /// Repetition group: runs of one group are repetitions of one test.
    pub group: Option<i64>,
    /// Where the targets live (see [`super::env::collect`]): filesystem, mount
    /// options, device, model, size; recorded when the run is saved.
    pub environment: Option<Value>,
}

fn s(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The documents inside one stored document that are shaped like a single
/// run's result (those with `total.total.iops`), with a name each. A run is
/// one scope named ""; a quick suite has one per test; sweeps and other kinds
/// are searched one level down in their arrays (`tests`, `points`, `results`,
/// `steps`, `runs`), using each item's `name`/`label` or its `result`.
pub fn scopes(doc: &Value) -> Vec<(String, &Value)> {
    if is_run_shaped(doc) {
        return vec![(String::new(), doc)];
    }
    let mut out = Vec::new();
    if let Value::Object(map) = doc {
        for key in ["tests", "points", "results", "steps", "runs"] {
            let Some(Value::Array(items)) = map.get(key) else {
                continue;
            };
            for (i, item) in items.iter().enumerate() {
                let inner = if is_run_shaped(item) {
                    item
                } else if let Some(r) = item.get("result").filter(|r| is_run_shaped(r)) {
                    r
                } else {
                    continue;
                };
                let name = s(item.get("name"))
                    .or_else(|| s(item.get("label")))
                    .unwrap_or_else(|| format!("{key}[{i}]"));
                out.push((name, inner));
            }
        }
    }
    out
}

fn is_run_shaped(v: &Value) -> bool {
    v.pointer("/total/total/iops").is_some_and(Value::is_number)
}

/// First scope's field at `ptr`.
fn first<'a>(doc: &'a Value, ptr: &str) -> Option<&'a Value> {
    doc.pointer(ptr)
        .or_else(|| scopes(doc).into_iter().find_map(|(_, d)| d.pointer(ptr)))
}

/// Device model of the targets: `targets[].device.model`/`.name`, `device.model`
/// or `environment.device(s)`, whichever the document carries.
pub fn device_of(doc: &Value) -> Option<String> {
    let from_target = |d: &Value| -> Option<String> {
        let ts = d.get("targets")?.as_array()?;
        let mut names: Vec<String> = ts
            .iter()
            .filter_map(|t| {
                let dev = t.get("device")?;
                s(Some(dev))
                    .or_else(|| s(dev.get("model")))
                    .or_else(|| s(dev.get("name")))
            })
            .collect();
        names.dedup();
        (!names.is_empty()).then(|| names.join(", "))
    };
    let one = |d: &Value| -> Option<String> {
        from_target(d)
            .or_else(|| s(d.pointer("/device/model")))
            .or_else(|| s(d.pointer("/device/name")))
            .or_else(|| s(d.get("device")))
            .or_else(|| s(d.pointer("/environment/device/model")))
            .or_else(|| s(d.pointer("/environment/devices/0/model")))
    };
    one(doc).or_else(|| scopes(doc).into_iter().find_map(|(_, d)| one(d)))
}

/// Profile name: `profile`, `profile.name` or `config.profile`.
pub fn profile_of(doc: &Value) -> Option<String> {
    s(doc.get("profile"))
        .or_else(|| s(doc.pointer("/profile/name")))
        .or_else(|| s(doc.pointer("/config/profile")))
}

/// Target paths: `targets[].path`, else `config.targets[].path`, else `path`.
pub fn targets_of(doc: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |p: String| {
        if !out.contains(&p) {
            out.push(p)
        }
    };
    let mut scan = |d: &Value| {
        for ptr in ["/targets", "/config/targets"] {
            if let Some(Value::Array(ts)) = d.pointer(ptr) {
                ts.iter()
                    .filter_map(|t| s(t.get("path")))
                    .for_each(&mut add);
                return;
            }
        }
        if let Some(p) = s(d.get("path")) {
            add(p);
        }
    };
    scan(doc);
    for (_, d) in scopes(doc) {
        scan(d);
    }
    out
}

/// A target path as the history keeps it: absolute and canonical when it
/// exists, so `history --target` finds it whatever directory it was given
/// from; as given otherwise (the null engine's `null`, a file already gone).
pub fn canonical_target(p: &std::path::Path) -> String {
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

impl Meta {
    /// Everything a typed document says about itself.
    pub fn of(doc: &crate::document::Document) -> Meta {
        let h = doc.header();
        Meta {
            started_at: Some(h.started_at).filter(|s| !s.is_empty()),
            host: Some(h.host).filter(|s| !s.is_empty()),
            targets: doc.targets().iter().map(|p| canonical_target(p)).collect(),
            device: doc.device(),
            profile: doc.profile(),
            iosim_version: Some(h.iosim_version).filter(|s| !s.is_empty()),
            group: None,
            environment: None,
        }
    }

    /// Everything that can be read from an untyped document (a kind this
    /// iosim has no type for, and the history's migrations).
    pub fn from_doc(doc: &Value) -> Meta {
        Meta {
            started_at: s(first(doc, "/started_at")),
            host: s(first(doc, "/host")).or_else(|| s(first(doc, "/environment/host"))),
            targets: targets_of(doc),
            device: device_of(doc),
            profile: profile_of(doc),
            iosim_version: s(first(doc, "/iosim_version")),
            group: None,
            environment: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_a_run() {
        let d = json!({"started_at": "2026-01-02T03:04:05Z", "host": "h", "iosim_version": "0.1.0",
            "total": {"total": {"iops": 5.0}},
            "targets": [{"path": "/a", "device": {"model": "QEMU HARDDISK"}}, {"path": "/b"}]});
        let m = Meta::from_doc(&d);
        assert_eq!(m.started_at.as_deref(), Some("2026-01-02T03:04:05Z"));
        assert_eq!(m.targets, vec!["/a", "/b"]);
        assert_eq!(m.device.as_deref(), Some("QEMU HARDDISK"));
        assert_eq!(m.host.as_deref(), Some("h"));
        assert_eq!(scopes(&d).len(), 1);
    }

    #[test]
    fn reads_nested_kinds() {
        let run = json!({"started_at": "t0", "host": "h", "total": {"total": {"iops": 1.0}},
            "config": {"targets": [{"path": "/x"}]}});
        let q = json!({"path": "/x", "tests": [{"name": "a", "result": run.clone()}, {"name": "b", "result": run}],
            "profile": {"name": "oltp"}});
        let m = Meta::from_doc(&q);
        assert_eq!(m.started_at.as_deref(), Some("t0"));
        assert_eq!(m.targets, vec!["/x"]);
        assert_eq!(m.profile.as_deref(), Some("oltp"));
        let sc = scopes(&q);
        assert_eq!(
            sc.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        // Unknown shapes yield nothing rather than failing.
        assert!(scopes(&json!({"whatever": [1, 2]})).is_empty());
        assert_eq!(Meta::from_doc(&json!(3)), Meta::default());
    }
}
