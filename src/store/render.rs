//! Stored documents rendered again: `show`'s formats, `compare`'s sides,
//! listing summaries, and the fallback file for a result that could not be stored.

use std::path::PathBuf;

use serde_json::Value;

use super::compare::{self, Side};
use super::{Store, StoredRun};
use crate::report::OutputFormat;

/// Quotes a CSV field when it needs it.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// IOPS, MiB/s and p99 latency (µs) of a one-scope document, for listings.
pub fn summary(doc: &Value) -> [Option<f64>; 3] {
    let sc = super::meta::scopes(doc);
    let (_, d) = match sc.as_slice() {
        [one] => one,
        _ => return [None; 3],
    };
    [0, 1, 4].map(|i| compare::value(d, &compare::METRICS[i]))
}

/// Renders a stored document in a format, as the command that measured it
/// printed it. Kinds this iosim cannot read are shown as stored, in JSON.
pub fn render(run: &StoredRun, format: OutputFormat) -> anyhow::Result<String> {
    match (run.document(), format) {
        (Ok(doc), _) => crate::document::render(&doc, format),
        (Err(_), OutputFormat::Json | OutputFormat::Text) => {
            Ok(serde_json::to_string_pretty(&run.doc)? + "\n")
        }
        (Err(_), OutputFormat::Csv) => anyhow::bail!(
            "run {} is a '{}' document this iosim cannot read into a result: use -o json",
            run.row.id,
            run.row.kind
        ),
    }
}

/// One scope's sides: (scope name, one side per run reference).
pub type ScopeSides = (String, Vec<Side>);

/// The sides of a comparison, one per scope name (a run has one scope, "";
/// a quick suite one per test). Runs without run-shaped parts are returned apart.
pub fn sides(store: &Store, refs: &[String]) -> anyhow::Result<(Vec<ScopeSides>, Vec<StoredRun>)> {
    let mut resolved = Vec::new();
    for r in refs {
        resolved.push((r.clone(), store.resolve(r)?));
    }
    let mut unknown = Vec::new();
    let mut scope_names: Vec<String> = Vec::new();
    for (_, runs) in &resolved {
        for run in runs {
            let sc = super::meta::scopes(&run.doc);
            if sc.is_empty() {
                unknown.push(run.clone());
            }
            for (n, _) in sc {
                if !scope_names.contains(&n) {
                    scope_names.push(n);
                }
            }
        }
    }
    let mut out = Vec::new();
    for scope in scope_names {
        let mut row = Vec::new();
        for (name, runs) in &resolved {
            let mut ids = Vec::new();
            let mut docs = Vec::new();
            for run in runs {
                if let Some((_, d)) = super::meta::scopes(&run.doc)
                    .into_iter()
                    .find(|(n, _)| *n == scope)
                {
                    ids.push(run.row.id);
                    docs.push(d);
                }
            }
            row.push(Side::new(name, ids, &docs));
        }
        out.push((scope, row));
    }
    Ok((out, unknown))
}

/// Writes a result that could not be stored to a file, in the current
/// directory if possible, else the temporary directory. Returns the path.
pub fn write_fallback(doc: &Value) -> std::io::Result<PathBuf> {
    let stamp: String = doc
        .get("started_at")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(crate::clock::utc_now_rfc3339)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let name = format!("iosim-unsaved-{stamp}-{}.json", std::process::id());
    let text = serde_json::to_string_pretty(doc).unwrap_or_default() + "\n";
    let mut last = None;
    for dir in [PathBuf::from("."), std::env::temp_dir()] {
        let p = dir.join(&name);
        match std::fs::write(&p, &text) {
            Ok(()) => return Ok(std::fs::canonicalize(&p).unwrap_or(p)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no directory to write to")))
}
