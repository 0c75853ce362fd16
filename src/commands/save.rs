//! What runs after a measurement was printed: the baseline check and the
//! save, which never loses the result just measured.

use serde_json::Value;

use crate::cli::{BaselineArgs, DbArgs, SaveArgs};
use crate::document::Document;
use crate::runner::RunResult;
use crate::store::compare::{self, Side};
use crate::store::render::write_fallback;
use crate::store::RunId;

/// Stores a measured document. Never fails: on a store error it warns, writes
/// the JSON to a fallback file and says where (the result was already printed).
pub fn save_result(args: &SaveArgs, document: &Document) -> Option<RunId> {
    if args.no_save {
        return None;
    }
    let meta = crate::store::Meta::of(document);
    store_value(args, document.kind(), &document.to_value(), meta)
}

/// Stores a document with what is known of it, then records where its
/// targets live (measured right now, on the same machine).
fn store_value(
    args: &SaveArgs,
    kind: &str,
    doc: &Value,
    mut meta: crate::store::Meta,
) -> Option<RunId> {
    meta.environment = Some(crate::store::env::collect(&meta.targets));
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
            match write_fallback(doc, meta.started_at.as_deref()) {
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

/// A `--baseline` reference resolved before the measurement starts, so
/// that a missing or unusable baseline fails at once, not after the run.
pub struct Baseline {
    reference: String,
    threshold: f64,
    side: Side,
}

impl Baseline {
    /// Resolves `--baseline` (None without one). Fails when the reference
    /// names nothing stored or nothing with run results; warns when it is a
    /// single run.
    pub fn resolve(db: &DbArgs, guard: &BaselineArgs) -> anyhow::Result<Option<Baseline>> {
        let Some(reference) = &guard.baseline else {
            return Ok(None);
        };
        if !crate::mpi::is_root() {
            // Only rank 0 of a collective run prints, checks and saves.
            return Ok(None);
        }
        let store = db.open_existing()?;
        let stored = store.resolve(reference)?;
        let docs: Vec<(i64, Document)> = stored
            .iter()
            .filter_map(|r| Some((r.row.id, r.document().ok()?)))
            .collect();
        let runs: Vec<(i64, &RunResult)> = docs
            .iter()
            .filter_map(|(id, d)| Some((*id, d.runs().first()?.1)))
            .collect();
        if runs.is_empty() {
            anyhow::bail!("baseline '{reference}' holds no run results to compare with: choose a run stored by `iosim run`");
        }
        if runs.len() == 1 {
            eprintln!(
                "iosim: warning: the baseline '{reference}' is a single run, and one run cannot tell \
                 a regression from noise: store several runs under one label (iosim run ... --label base, \
                 3 times or more) and use --baseline label:base"
            );
        }
        let side = Side::new(
            &format!("baseline {reference}"),
            runs.iter().map(|(id, _)| *id).collect(),
            &runs.iter().map(|(_, r)| *r).collect::<Vec<_>>(),
        );
        Ok(Some(Baseline {
            reference: reference.clone(),
            threshold: guard.threshold,
            side,
        }))
    }

    /// Compares a measured document with the baseline, prints the verdict on
    /// stderr, and tells whether it regressed beyond the threshold.
    pub fn check(&self, doc: &Document) -> bool {
        let runs = doc.runs();
        let this = Side::new(
            "this run",
            vec![0],
            &runs
                .first()
                .map(|(_, r)| *r)
                .into_iter()
                .collect::<Vec<_>>(),
        );
        eprint!("{}", compare::table(&[self.side.clone(), this.clone()]));
        let regs = compare::regressions(&self.side, &this, self.threshold);
        if regs.is_empty() {
            eprintln!(
                "baseline check passed against '{}': no regression beyond {}% in IOPS, MiB/s or p99 latency",
                self.reference, self.threshold
            );
        } else {
            for r in &regs {
                eprintln!(
                    "REGRESSION: {} {:.1} -> {:.1} ({:+.1}%, threshold {}%)",
                    r.metric, r.base, r.value, r.rel_pct, self.threshold
                );
            }
        }
        !regs.is_empty()
    }
}

/// Everything after a measurement that was printed: the baseline check
/// (resolved before the run, so `--baseline last` means the previous run),
/// then the save. Returns true when the baseline check found a regression.
pub fn after_run(save: &SaveArgs, baseline: Option<&Baseline>, doc: &Document) -> bool {
    let regressed = baseline.is_some_and(|b| b.check(doc));
    save_result(save, doc);
    regressed
}
