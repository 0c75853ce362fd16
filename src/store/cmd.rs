//! The history commands (`history`, `show`, `compare`), the options every
//! measuring command gets (`--db`, `--no-save`, `--label`, `--baseline`,
//! `--threshold`), and what runs after a measurement: the baseline check and
//! the save, which never loses the result just measured.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use serde_json::Value;

use super::compare::{self, Side};
use super::{Filter, RunId, Store, StoredRun};
use crate::cli::OutputFormat;

/// Exit code of `run --baseline` when throughput or tail latency regressed.
pub const EXIT_REGRESSED: u8 = 4;

/// Where the history is.
#[derive(Debug, Clone, Default, Args)]
pub struct DbArgs {
    /// History database (default: $XDG_DATA_HOME/iosim/history.db, else ~/.local/share/iosim/history.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

impl DbArgs {
    /// The database path.
    pub fn path(&self) -> PathBuf {
        self.db.clone().unwrap_or_else(super::default_path)
    }

    /// Opens the database, creating it if needed (for saving).
    pub fn open(&self) -> Result<Store, super::StoreError> {
        Store::open(&self.path())
    }

    /// Opens the database for reading: a missing one is an error, not created.
    pub fn open_existing(&self) -> Result<Store, super::StoreError> {
        let path = self.path();
        if !path.exists() {
            return Err(super::StoreError::Missing(path));
        }
        Store::open(&path)
    }
}

/// Saving options of measuring commands.
#[derive(Debug, Clone, Default, Args)]
pub struct SaveArgs {
    /// Database.
    #[command(flatten)]
    pub db: DbArgs,

    /// Do not store this run in the history database.
    #[arg(long)]
    pub no_save: bool,

    /// Label stored with the run (for `iosim history --label` and `compare label:NAME`).
    #[arg(long)]
    pub label: Option<String>,
}

/// Regression guard of `iosim run`.
#[derive(Debug, Clone, Default, Args)]
pub struct BaselineArgs {
    /// Compare with this stored run (id, `last`, `label:NAME`, `group:N`) and exit 4 if IOPS,
    /// MiB/s or p99 latency regressed beyond --threshold.
    #[arg(long, value_name = "RUN")]
    pub baseline: Option<String>,

    /// Allowed regression for --baseline, percent.
    #[arg(long, value_name = "PCT", default_value_t = 10.0)]
    pub threshold: f64,
}

/// `iosim history`.
#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    /// Database.
    #[command(flatten)]
    pub db: DbArgs,
    /// Only this kind (run, quick, sweep, sim, ...).
    #[arg(long)]
    pub kind: Option<String>,
    /// Target path contains.
    #[arg(long)]
    pub target: Option<String>,
    /// Device model contains.
    #[arg(long)]
    pub device: Option<String>,
    /// Profile contains.
    #[arg(long)]
    pub profile: Option<String>,
    /// Label contains.
    #[arg(long)]
    pub label: Option<String>,
    /// Host contains.
    #[arg(long)]
    pub host: Option<String>,
    /// Started on or after this date (2026-11-01, 2026-11-01T12:00).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Started on or before this date (2026-11-30 includes that day).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Newest N (0: all).
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// `iosim show`.
#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// Database.
    #[command(flatten)]
    pub db: DbArgs,
    /// Run: an id, `last`, `label:NAME` or `group:N`.
    pub run: String,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// `iosim compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Database.
    #[command(flatten)]
    pub db: DbArgs,
    /// Two or more runs; the first is the reference. `label:NAME` or `group:N` are repetitions.
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<String>,
    /// Output format (text or json).
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn summary(doc: &Value) -> [Option<f64>; 3] {
    let sc = super::meta::scopes(doc);
    let (_, d) = match sc.as_slice() {
        [one] => one,
        _ => return [None; 3],
    };
    [0, 1, 4].map(|i| compare::value(d, &compare::METRICS[i]))
}

/// `iosim history`.
pub fn history(a: &HistoryArgs) -> anyhow::Result<()> {
    let store = match a.db.open_existing() {
        Ok(s) => s,
        Err(e @ super::StoreError::Missing(_)) => {
            // Nothing stored yet is not a failure: say so, list nothing.
            eprintln!("iosim: {e}");
            if a.output == OutputFormat::Json {
                println!("[]");
            }
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let rows = store.list(&Filter {
        kind: a.kind.clone(),
        target: a.target.clone(),
        device: a.device.clone(),
        profile: a.profile.clone(),
        label: a.label.clone(),
        host: a.host.clone(),
        since: a.since.clone(),
        until: a.until.clone(),
        limit: a.limit,
    })?;
    let mut out = String::new();
    let sums: Vec<[Option<f64>; 3]> = rows
        .iter()
        .map(|r| store.get(r.id).map(|s| summary(&s.doc)))
        .collect::<Result<_, _>>()?;
    let f = |v: Option<f64>| v.map(|v| format!("{v:.1}")).unwrap_or_default();
    match a.output {
        OutputFormat::Json => {
            let items: Vec<Value> = rows
                .iter()
                .zip(&sums)
                .map(|(r, s)| {
                    let mut v = serde_json::to_value(r).unwrap_or_default();
                    v["iops"] = s[0].into();
                    v["mib_per_sec"] = s[1].into();
                    v["lat_p99_us"] = s[2].into();
                    v
                })
                .collect();
            out = serde_json::to_string_pretty(&items)? + "\n";
        }
        OutputFormat::Csv => {
            out.push_str("id,kind,started_at,label,host,targets,device,profile,iosim_version,group,iops,mib_s,lat_p99_us\n");
            for (r, s) in rows.iter().zip(&sums) {
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
                ];
                let line: Vec<String> = cells.iter().map(|c| csv_field(c)).collect();
                out.push_str(&line.join(","));
                out.push('\n');
            }
        }
        OutputFormat::Text => {
            if rows.is_empty() {
                eprintln!("no stored runs match in {}", store.path().display());
                return Ok(());
            }
            let _ = writeln!(
                out,
                "{:>5}  {:<6} {:<20} {:<14} {:<12} {:>10} {:>9} {:>10}  targets / device / profile",
                "id", "kind", "started (UTC)", "label", "host", "IOPS", "MiB/s", "p99 us"
            );
            for (r, s) in rows.iter().zip(&sums) {
                let mut what = r.targets.join(" ");
                for x in [&r.device, &r.profile].into_iter().flatten() {
                    let _ = write!(what, " [{x}]");
                }
                if let Some(g) = r.group {
                    let _ = write!(what, " (group {g})");
                }
                let _ = writeln!(
                    out,
                    "{:>5}  {:<6} {:<20} {:<14} {:<12} {:>10} {:>9} {:>10}  {}",
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
        }
    }
    print!("{out}");
    Ok(())
}

/// Renders a stored document in a format, as the command that measured it printed it.
/// Kinds iosim does not know are shown as JSON.
pub fn render(run: &StoredRun, format: OutputFormat) -> anyhow::Result<String> {
    use crate::quick::QuickResult;
    use crate::runner::RunResult;
    let as_run = || serde_json::from_value::<RunResult>(run.doc.clone());
    let as_quick = || serde_json::from_value::<QuickResult>(run.doc.clone());
    let pretty = || serde_json::to_string_pretty(&run.doc).map(|s| s + "\n");
    Ok(match (run.row.kind.as_str(), format) {
        ("run", OutputFormat::Text) if as_run().is_ok() => crate::report::text(&as_run()?),
        ("run", OutputFormat::Json) if as_run().is_ok() => crate::report::json(&as_run()?) + "\n",
        ("run", OutputFormat::Csv) if as_run().is_ok() => crate::report::csv(&as_run()?),
        ("quick", OutputFormat::Text) if as_quick().is_ok() => crate::quick::table(&as_quick()?),
        ("quick", OutputFormat::Json) if as_quick().is_ok() => {
            serde_json::to_string_pretty(&as_quick()?)? + "\n"
        }
        ("quick", OutputFormat::Csv) if as_quick().is_ok() => {
            let q = as_quick()?;
            let mut s = format!("test,{}\n", crate::report::CSV_HEADER);
            for t in &q.tests {
                for line in crate::report::csv(&t.result)
                    .lines()
                    .skip(1)
                    .filter(|l| l.starts_with("total"))
                {
                    let _ = writeln!(s, "{},{line}", t.name);
                }
            }
            s
        }
        (_, OutputFormat::Json) => pretty()?,
        (kind, OutputFormat::Text) => format!(
            "run {} is a '{kind}' document; iosim shows it as JSON:\n{}",
            run.row.id,
            pretty()?
        ),
        (kind, OutputFormat::Csv) => {
            // Any run-shaped parts become CSV rows; otherwise say what works.
            let mut s = String::new();
            for (name, d) in super::meta::scopes(&run.doc) {
                if let Ok(r) = serde_json::from_value::<RunResult>(d.clone()) {
                    if s.is_empty() {
                        let _ = writeln!(s, "part,{}", crate::report::CSV_HEADER);
                    }
                    for line in crate::report::csv(&r).lines().skip(1) {
                        let _ = writeln!(s, "{},{line}", csv_field(&name));
                    }
                }
            }
            if s.is_empty() {
                anyhow::bail!(
                    "run {} is a '{kind}' document with no run results to put in CSV: use -o json",
                    run.row.id
                );
            }
            s
        }
    })
}

/// `iosim show`.
pub fn show(a: &ShowArgs) -> anyhow::Result<()> {
    let store = a.db.open_existing()?;
    let runs = store.resolve(&a.run)?;
    if runs.len() > 1 && a.output == OutputFormat::Json {
        // Several runs (a label or group): one JSON array of their documents.
        let docs: Vec<&Value> = runs.iter().map(|r| &r.doc).collect();
        println!("{}", serde_json::to_string_pretty(&docs)?);
        return Ok(());
    }
    for (i, r) in runs.iter().enumerate() {
        if runs.len() > 1 && a.output == OutputFormat::Text {
            println!("{}=== run {} ===", if i > 0 { "\n" } else { "" }, r.row.id);
        }
        print!("{}", render(r, a.output)?);
    }
    Ok(())
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

/// `iosim compare`.
pub fn compare(a: &CompareArgs) -> anyhow::Result<()> {
    let store = a.db.open_existing()?;
    let (groups, unknown) = sides(&store, &a.runs)?;
    if a.output == OutputFormat::Json {
        let v: Vec<Value> = groups
            .iter()
            .map(|(scope, sides)| {
                serde_json::json!({
                    "scope": scope,
                    "sides": sides,
                    "diffs": sides.iter().map(|s| compare::diff(&sides[0], s)).collect::<Vec<_>>(),
                })
            })
            .collect();
        let unknown: Vec<i64> = unknown.iter().map(|r| r.row.id).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"scopes": v, "not_comparable": unknown})
            )?
        );
        return Ok(());
    }
    if a.output == OutputFormat::Csv {
        anyhow::bail!("compare prints text or JSON: use -o text or -o json");
    }
    for (scope, sides) in &groups {
        if !scope.is_empty() {
            println!("== {scope} ==");
        }
        print!("{}", compare::table(sides));
        println!();
    }
    for r in &unknown {
        println!(
            "run {} is a '{}' document without run results to compare; its JSON:\n{}",
            r.row.id,
            r.row.kind,
            serde_json::to_string_pretty(&r.doc)?
        );
    }
    Ok(())
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

/// Stores a measured document. Never fails: on a store error it warns, writes
/// the JSON to a fallback file and says where (the result was already printed).
pub fn save_result(args: &SaveArgs, kind: &str, doc: &Value) -> Option<RunId> {
    if args.no_save {
        return None;
    }
    // Saved right after measuring, on the same machine: record where the targets live.
    let meta = super::Meta {
        environment: Some(super::env::collect(&super::meta::targets_of(doc))),
        ..super::Meta::default()
    };
    let saved = args
        .db
        .open()
        .and_then(|s| s.save(kind, args.label.as_deref(), doc, &meta));
    match saved {
        Ok(id) => {
            eprintln!(
                "saved as run {id} in {} (iosim show {id})",
                args.db.path().display()
            );
            Some(id)
        }
        Err(e) => {
            eprintln!("iosim: warning: the result was not stored: {e}");
            match write_fallback(doc) {
                Ok(p) => eprintln!(
                    "iosim: the result's JSON was written to {} instead",
                    p.display()
                ),
                Err(e2) => eprintln!(
                    "iosim: and writing it to a file failed too ({e2}): keep the output above"
                ),
            }
            None
        }
    }
}

/// Compares a run with its baseline, prints the verdict on stderr, and tells
/// whether it regressed beyond the threshold.
pub fn check_baseline(
    db: &DbArgs,
    guard: &BaselineArgs,
    doc: &Value,
) -> anyhow::Result<Option<bool>> {
    let Some(reference) = &guard.baseline else {
        return Ok(None);
    };
    let store = db.open_existing()?;
    let base_runs = store.resolve(reference)?;
    let base_docs: Vec<&Value> = base_runs
        .iter()
        .filter_map(|r| super::meta::scopes(&r.doc).first().map(|(_, d)| *d))
        .collect();
    if base_docs.is_empty() {
        anyhow::bail!("baseline '{reference}' holds no run results to compare with: choose a run stored by `iosim run`");
    }
    let base = Side::new(
        &format!("baseline {reference}"),
        base_runs.iter().map(|r| r.row.id).collect(),
        &base_docs,
    );
    let this = Side::new("this run", vec![0], &[doc]);
    eprint!("{}", compare::table(&[base.clone(), this.clone()]));
    let regs = compare::regressions(&base, &this, guard.threshold);
    if regs.is_empty() {
        eprintln!(
            "baseline check passed: no regression beyond {}% in IOPS, MiB/s or p99 latency",
            guard.threshold
        );
    } else {
        for r in &regs {
            eprintln!(
                "REGRESSION: {} {:.1} -> {:.1} ({:+.1}%, threshold {}%)",
                r.metric, r.base, r.value, r.rel_pct, guard.threshold
            );
        }
    }
    Ok(Some(!regs.is_empty()))
}

/// Everything after a measurement that was printed: the baseline check
/// (before saving, so `--baseline last` means the previous run), then the
/// save. Returns true when the baseline check found a regression.
pub fn after_run(
    save: &SaveArgs,
    guard: &BaselineArgs,
    kind: &str,
    doc: &Value,
) -> anyhow::Result<bool> {
    let verdict = check_baseline(&save.db, guard, doc);
    save_result(save, kind, doc);
    Ok(verdict?.unwrap_or(false))
}
