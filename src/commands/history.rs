//! `iosim history`: list stored runs.

use std::fmt::Write as _;

use serde_json::Value;

use super::Ctx;
use crate::cli::{HistoryArgs, OutputFormat};
use crate::document::Document;
use crate::outcome::Outcome;
use crate::store::render::{csv_field, summary};
use crate::store::{Filter, RunRow};

/// What a listing shows of a stored document: IOPS, MiB/s and p99 of a
/// single run, a verdict, a qualification's limits.
type RowFacts = ([Option<f64>; 3], Option<String>, Option<Qualified>);

/// What the history lists of a qualification besides its verdict.
#[derive(Clone)]
struct Qualified {
    /// `PRELIMINARY NOT FIT`, `FIT`.
    headline: String,
    /// `budget 10m, files 1GiB`.
    limits: String,
    budget_s: f64,
    file_size: Option<u64>,
    preliminary: bool,
}

fn qualified(d: &Document) -> Option<Qualified> {
    let Document::Qualify(q) = d else {
        return None;
    };
    let r = &q.body;
    Some(Qualified {
        headline: r.headline(),
        limits: r.limits_line(),
        budget_s: r.time_budget_s,
        file_size: r.file_size(),
        preliminary: r.preliminary,
    })
}

/// `iosim history delete ID...`: deletes the runs, says which.
fn delete(d: &crate::cli::history::HistoryDeleteArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let store = d.db.open_existing()?;
    let rows = store.delete(&d.ids)?;
    for r in &rows {
        writeln!(
            ctx.out,
            "deleted run {} ({}, {}{}) from {}",
            r.id,
            r.kind,
            r.started_at,
            r.label
                .as_deref()
                .map(|l| format!(", label {l}"))
                .unwrap_or_default(),
            store.path().display()
        )?;
    }
    Ok(Outcome::Success)
}

/// Whose runs a listing shows, said where it is not obvious: as root under
/// sudo the default database is the one under root's $HOME (or the HOME
/// sudo kept), shared by everyone who runs iosim as root there.
fn whose(a: &HistoryArgs) -> Option<String> {
    if a.db.db.is_some() || !crate::platform::process::is_root() {
        return None;
    }
    let user = std::env::var("SUDO_USER").ok().filter(|u| !u.is_empty())?;
    Some(format!(
        "iosim: note: running as root under sudo (user {user}): the runs listed are all those stored in {}, by everyone who ran iosim as root with HOME={}, not only {user}'s; keep your own with --db PATH or XDG_DATA_HOME (docs/history.md)",
        a.db.path().display(),
        std::env::var("HOME").unwrap_or_default()
    ))
}

/// `iosim history`, and `iosim history delete`.
pub fn run(a: &HistoryArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    if let Some(crate::cli::history::HistoryAction::Delete(d)) = &a.action {
        return delete(d, ctx);
    }
    if let Some(note) = whose(a) {
        crate::say!("{note}");
    }
    list(a, ctx)
}

/// Lists the stored runs.
fn list(a: &HistoryArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let out = &mut *ctx.out;
    let store = match a.db.open_existing() {
        Ok(s) => s,
        Err(e @ crate::store::StoreError::Missing(_)) => {
            // Nothing stored yet is not a failure: say so, list nothing.
            crate::say!("iosim: {e}");
            if a.output == OutputFormat::Json {
                writeln!(out, "[]")?;
            }
            return Ok(Outcome::Success);
        }
        Err(e) => return Err(e.into()),
    };
    let rows = store.list(&filter(a))?;
    // From each typed document: IOPS, MiB/s and p99 of a single run, the
    // verdict of a kind that judges (qualify), and a qualification's budget,
    // test-file size and whether it was PRELIMINARY.
    let facts: Vec<RowFacts> = rows
        .iter()
        .map(|r| {
            store.get(r.id).map(|s| {
                s.document().map_or(([None; 3], None, None), |d| {
                    (summary(&d), d.verdict(), qualified(&d))
                })
            })
        })
        .collect::<Result<_, _>>()?;
    let text = match a.output {
        OutputFormat::Json => json_list(&rows, &facts)?,
        OutputFormat::Csv => csv_list(&rows, &facts),
        OutputFormat::Text => {
            if rows.is_empty() {
                crate::say!("no stored runs match in {}", store.path().display());
                return Ok(Outcome::Success);
            }
            text_list(&rows, &facts)
        }
    };
    out.write_all(text.as_bytes())?;
    Ok(Outcome::Success)
}

/// The store's filter for the listing's options.
fn filter(a: &HistoryArgs) -> Filter {
    Filter {
        kind: a.kind,
        // A path that exists is matched as the history keeps it (canonical);
        // anything else as a substring of the stored paths.
        target: a.target.as_deref().map(|t| {
            if std::path::Path::new(t).exists() {
                crate::store::meta::canonical_target(std::path::Path::new(t))
            } else {
                t.to_string()
            }
        }),
        device: a.device.clone(),
        profile: a.profile.clone(),
        label: a.label.clone(),
        host: a.host.clone(),
        since: a.since.clone(),
        until: a.until.clone(),
        limit: a.limit,
    }
}

/// A figure of a listing: one decimal, or empty.
fn figure(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1}")).unwrap_or_default()
}

/// The listing as JSON: each row with its figures, verdict and limits.
fn json_list(rows: &[RunRow], facts: &[RowFacts]) -> anyhow::Result<String> {
    let items: Vec<Value> = rows
        .iter()
        .zip(facts)
        .map(|(r, (s, verdict, q))| {
            let mut v = serde_json::to_value(r).unwrap_or_default();
            v["iops"] = s[0].into();
            v["mib_per_sec"] = s[1].into();
            v["lat_p99_us"] = s[2].into();
            v["verdict"] = verdict.clone().into();
            v["budget_s"] = q.as_ref().map(|q| q.budget_s).into();
            v["test_file_size"] = q.as_ref().and_then(|q| q.file_size).into();
            v["preliminary"] = q.as_ref().map(|q| q.preliminary).into();
            v
        })
        .collect();
    Ok(serde_json::to_string_pretty(&items)? + "\n")
}

/// The listing as CSV, a header line first.
fn csv_list(rows: &[RunRow], facts: &[RowFacts]) -> String {
    let f = figure;
    let mut text = String::new();
    text.push_str("id,kind,started_at,label,host,targets,device,profile,iosim_version,group,iops,mib_s,lat_p99_us,verdict,budget_s,test_file_size,preliminary\n");
    for (r, (s, verdict, q)) in rows.iter().zip(facts) {
        let cells = [
            r.id.to_string(),
            r.kind.clone(),
            r.started_at.clone(),
            r.label.clone().unwrap_or_default(),
            r.host.clone().unwrap_or_default(),
            r.targets.join(" "),
            r.device.clone().unwrap_or_default(),
            r.profile.clone().unwrap_or_default(),
            r.iosim_version.clone().unwrap_or_default(),
            r.group.map(|g| g.to_string()).unwrap_or_default(),
            f(s[0]),
            f(s[1]),
            f(s[2]),
            verdict.clone().unwrap_or_default(),
            q.as_ref()
                .map(|q| format!("{:.0}", q.budget_s))
                .unwrap_or_default(),
            q.as_ref()
                .and_then(|q| q.file_size)
                .map(|z| z.to_string())
                .unwrap_or_default(),
            q.as_ref()
                .map(|q| q.preliminary.to_string())
                .unwrap_or_default(),
        ];
        let line: Vec<String> = cells.iter().map(|c| csv_field(c)).collect();
        text.push_str(&line.join(","));
        text.push('\n');
    }
    text
}

/// The listing as a table, one row a line.
fn text_list(rows: &[RunRow], facts: &[RowFacts]) -> String {
    let f = figure;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{:>5}  {:<7} {:<20} {:<14} {:<12} {:>10} {:>9} {:>10}  targets / device / profile",
        "id", "kind", "started (UTC)", "label", "host", "IOPS", "MiB/s", "p99 us"
    );
    for (r, (s, verdict, q)) in rows.iter().zip(facts) {
        let mut what = r.targets.join(" ");
        for x in [&r.device, &r.profile].into_iter().flatten() {
            let _ = write!(what, " [{x}]");
        }
        if let Some(g) = r.group {
            let _ = write!(what, " (group {g})");
        }
        match (verdict, q) {
            (Some(_), Some(q)) => what = format!("{} ({}): {what}", q.headline, q.limits),
            (Some(v), None) => what = format!("{v}: {what}"),
            _ => {}
        }
        let _ = writeln!(
            text,
            "{:>5}  {:<7} {:<20} {:<14} {:<12} {:>10} {:>9} {:>10}  {}",
            r.id,
            r.kind,
            r.started_at.get(..19).unwrap_or(&r.started_at),
            r.label.as_deref().unwrap_or("-"),
            r.host.as_deref().unwrap_or("-"),
            f(s[0]),
            f(s[1]),
            f(s[2]),
            what
        );
    }
    text
}
