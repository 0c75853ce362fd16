//! Stored documents rendered again: `show`'s formats, `compare`'s sides,
//! listing summaries, and the fallback file for a result that could not be stored.

use std::path::PathBuf;

use serde_json::Value;

use super::{Store, StoredRun};
use crate::comparison::{self as compare, Side};
use crate::document::Document;
use crate::report::OutputFormat;
use crate::runner::RunResult;
use crate::sweep::PointResult;

pub use crate::report::csv_field;

/// IOPS, MiB/s and p99 latency (µs) of a document with one run result, for listings.
pub fn summary(doc: &Document) -> [Option<f64>; 3] {
    match doc.runs().as_slice() {
        [(_, r)] => [0, 1, 4].map(|i| (compare::METRICS[i].of_run)(&r.total.total)),
        _ => [None; 3],
    }
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

/// Renders several stored runs as `show` and `report -o` print them: one
/// JSON array of their documents, or each in turn (text under a
/// `=== run N ===` line when there are several).
pub fn render_many(runs: &[StoredRun], format: OutputFormat) -> anyhow::Result<String> {
    if runs.len() > 1 && format == OutputFormat::Json {
        let docs: Vec<&Value> = runs.iter().map(|r| &r.doc).collect();
        return Ok(serde_json::to_string_pretty(&docs)? + "\n");
    }
    let mut s = String::new();
    for (i, r) in runs.iter().enumerate() {
        if runs.len() > 1 && format == OutputFormat::Text {
            s.push_str(&format!(
                "{}=== run {} ===\n",
                if i > 0 { "\n" } else { "" },
                r.row.id
            ));
        }
        s.push_str(&render(r, format)?);
    }
    Ok(s)
}

/// One scope's sides: (scope name, one side per run reference).
pub type ScopeSides = (String, Vec<Side>);

/// What `compare` found in the stored runs it was given.
#[derive(Debug, Default)]
pub struct Sides {
    /// One entry per scope: a run has one (""), a quick suite one per test,
    /// a profile one per workload, a sweep one per point.
    pub scopes: Vec<ScopeSides>,
    /// Stored runs without results that can be compared.
    pub unknown: Vec<StoredRun>,
    /// Sides that did not run the same workload, or different kinds of result.
    pub warnings: Vec<String>,
}

/// A comparable part of a document.
enum Part<'a> {
    Run(&'a RunResult),
    Point(&'a PointResult),
}

impl Part<'_> {
    /// What was run, without the engine and cache (comparing those is the point of many comparisons).
    fn workload(&self) -> String {
        match self {
            Part::Run(r) => workload_key(r),
            Part::Point(p) => point_name(p),
        }
    }
}

/// What a run ran, as `compare` and the report check it before comparing:
/// pattern, mix, block size, queue depth, threads and number of targets
/// (not the engine or cache mode: comparing those is a common reason to compare).
pub fn workload_key(r: &RunResult) -> String {
    let c = &r.config;
    let mix = if c.rw.is_mixed() {
        format!(" {}%w", c.write_pct)
    } else {
        String::new()
    };
    format!(
        "{}{mix} {} qd{} x{} on {} target(s)",
        c.rw.name(),
        crate::units::format_size(c.bs),
        c.qd,
        c.threads,
        c.targets.len()
    )
}

/// A sweep point's name: its settings, `qd=8 bs=4096`.
pub fn point_name(p: &PointResult) -> String {
    p.params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn parts(doc: &Document) -> Vec<(String, Part<'_>)> {
    match doc {
        Document::Sweep(s) => s
            .body
            .points
            .iter()
            .map(|p| (format!("point {}", point_name(p)), Part::Point(p)))
            .collect(),
        _ => doc
            .runs()
            .into_iter()
            .map(|(n, r)| (n, Part::Run(r)))
            .collect(),
    }
}

/// The sides of a comparison, scope by scope, from typed documents.
pub fn sides(store: &Store, refs: &[String]) -> anyhow::Result<Sides> {
    let mut out = Sides::default();
    let mut resolved: Vec<(String, Vec<(i64, Document)>)> = Vec::new();
    for r in refs {
        let mut docs = Vec::new();
        for run in store.resolve(r)? {
            match run.document() {
                Ok(d) if !parts(&d).is_empty() => docs.push((run.row.id, d)),
                _ => out.unknown.push(run),
            }
        }
        resolved.push((r.clone(), docs));
    }
    let kinds: Vec<&str> = resolved
        .iter()
        .flat_map(|(_, ds)| ds.iter().map(|(_, d)| d.kind()))
        .collect();
    if kinds.iter().any(|k| *k != kinds[0]) {
        out.warnings.push(format!(
            "these are different kinds of result ({}): only parts with the same name are compared",
            kinds.join(", ")
        ));
    }
    let mut names: Vec<String> = Vec::new();
    for (_, docs) in &resolved {
        for (_, d) in docs {
            for (n, _) in parts(d) {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
    }
    for scope in names {
        let mut row = Vec::new();
        let mut workloads: Vec<(String, String)> = Vec::new();
        for (name, docs) in &resolved {
            let mut ids = Vec::new();
            let mut runs = Vec::new();
            let mut points = Vec::new();
            for (id, d) in docs {
                for (n, part) in parts(d) {
                    if n != scope {
                        continue;
                    }
                    let w = part.workload();
                    if !workloads.iter().any(|(_, x)| *x == w) {
                        workloads.push((name.clone(), w));
                    }
                    ids.push(*id);
                    match part {
                        Part::Run(r) => runs.push(r),
                        Part::Point(p) => points.push(p),
                    }
                }
            }
            row.push(if points.is_empty() {
                Side::new(name, ids, &runs)
            } else {
                Side::of_points(name, ids, &points)
            });
        }
        if workloads.len() > 1 {
            let list: Vec<String> = workloads.iter().map(|(n, w)| format!("{n}: {w}")).collect();
            out.warnings.push(format!(
                "{}the sides ran different workloads ({}): their numbers measure different things",
                if scope.is_empty() {
                    String::new()
                } else {
                    format!("{scope}: ")
                },
                list.join("; ")
            ));
        }
        out.scopes.push((scope, row));
    }
    Ok(out)
}

/// Writes a result that could not be stored to a file, in the current
/// directory if possible, else the temporary directory (its name carries the
/// start time, when known). Returns the path.
pub fn write_fallback(doc: &Value, started_at: Option<&str>) -> std::io::Result<PathBuf> {
    let stamp: String = started_at
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
        // Never over a file already there (the name is this process's own).
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
            .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
        match written {
            Ok(()) => return Ok(std::fs::canonicalize(&p).unwrap_or(p)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no directory to write to")))
}
