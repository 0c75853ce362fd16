//! Readers of documents stored before they had types (history schema
//! versions 1 and 2): they find fields by JSON pointer because those
//! documents have no type to read them into. Used only by the history's
//! migrations ([`super::schema`]); everything else reads typed documents.

use serde_json::Value;

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
fn scopes(doc: &Value) -> Vec<(String, &Value)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_old_documents() {
        let d = json!({"total": {"total": {"iops": 5.0}},
            "targets": [{"path": "/a", "device": {"model": "QEMU HARDDISK"}}, {"path": "/b"}]});
        assert_eq!(device_of(&d).as_deref(), Some("QEMU HARDDISK"));
        assert_eq!(scopes(&d).len(), 1);
        let run = json!({"total": {"total": {"iops": 1.0}}, "device": {"model": "M"}});
        let q = json!({"tests": [{"name": "a", "result": run.clone()}, {"name": "b", "result": run}],
            "profile": {"name": "oltp"}});
        assert_eq!(profile_of(&q).as_deref(), Some("oltp"));
        assert_eq!(device_of(&q).as_deref(), Some("M"));
        let sc = scopes(&q);
        assert_eq!(
            sc.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        // Unknown shapes yield nothing rather than failing.
        assert!(scopes(&json!({"whatever": [1, 2]})).is_empty());
        assert_eq!(device_of(&json!(3)), None);
    }
}
