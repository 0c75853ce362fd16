//! What runs after a measurement was printed: the baseline check and the
//! save, which never loses the result just measured.

use serde_json::Value;

use crate::cli::{BaselineArgs, DbArgs, SaveArgs};
use crate::document::Document;
use crate::store::compare::{self, Side};
use crate::store::render::write_fallback;
use crate::store::RunId;

/// Stores a measured document. Never fails: on a store error it warns, writes
/// the JSON to a fallback file and says where (the result was already printed).
pub fn save_result(args: &SaveArgs, document: &Document) -> Option<RunId> {
    save_untyped(args, document.kind(), &document.to_value())
}

/// Stores a result of a kind that has no [`Document`] variant yet (only
/// `crash verify`'s verdict, until it gets one). New code uses [`save_result`].
pub fn save_untyped(args: &SaveArgs, kind: &str, doc: &Value) -> Option<RunId> {
    if args.no_save {
        return None;
    }
    // Saved right after measuring, on the same machine: record where the targets live.
    let meta = crate::store::Meta {
        environment: Some(crate::store::env::collect(&crate::store::meta::targets_of(
            doc,
        ))),
        ..crate::store::Meta::default()
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
        .filter_map(|r| crate::store::meta::scopes(&r.doc).first().map(|(_, d)| *d))
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
pub fn after_run(save: &SaveArgs, guard: &BaselineArgs, doc: &Document) -> anyhow::Result<bool> {
    let verdict = check_baseline(&save.db, guard, &doc.to_value());
    save_result(save, doc);
    Ok(verdict?.unwrap_or(false))
}
