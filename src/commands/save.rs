//! What runs after a measurement was printed: the baseline check and the
//! save, which never loses the result just measured.

use serde_json::Value;

use crate::cli::{BaselineArgs, DbArgs, SaveArgs};
use crate::comparison::{self as compare, Side};
use crate::document::Document;
use crate::runner::RunResult;
use crate::store::render::{point_name, write_fallback};
use crate::store::RunId;
use crate::sweep::{PointResult, SweepResult};

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
            crate::say!(
                "saved as run {id} in {} (iosim show {id})",
                args.db.path().display()
            );
            Some(id)
        }
        Err(e) => {
            crate::say!("iosim: warning: the result was not stored: {e}");
            match write_fallback(doc, meta.started_at.as_deref()) {
                Ok(p) => crate::say!(
                    "iosim: the result's JSON was written to {} instead",
                    p.display()
                ),
                Err(e2) => crate::say!(
                    "iosim: and writing it to a file failed too ({e2}): keep the output above"
                ),
            }
            None
        }
    }
}

/// A stored document and its run id.
type StoredDoc = (i64, Document);

/// A `--baseline` reference resolved before the measurement starts, so
/// that a missing or unusable baseline fails at once, not after the run.
pub struct Baseline {
    reference: String,
    threshold: f64,
    /// What is compared, by name: one unnamed side for a run; one side per
    /// sweep point (named by its settings, `qd=8`) for a sweep.
    sides: Vec<(String, Side)>,
}

impl Baseline {
    /// Resolves `--baseline` of a run (None without one). Fails when the
    /// reference names nothing stored or nothing with run results; warns
    /// when it is a single run.
    pub fn resolve(
        db: &DbArgs,
        guard: &BaselineArgs,
        root: bool,
    ) -> anyhow::Result<Option<Baseline>> {
        let Some((reference, docs)) = Self::stored(db, guard, root)? else {
            return Ok(None);
        };
        let runs: Vec<(i64, &RunResult)> = docs
            .iter()
            .filter_map(|(id, d)| Some((*id, d.runs().first()?.1)))
            .collect();
        if runs.is_empty() {
            anyhow::bail!("baseline '{reference}' holds no run results to compare with: choose a run stored by `iosim run`");
        }
        Self::warn_single(&reference, runs.len(), "run");
        let side = Side::new(
            &format!("baseline {reference}"),
            runs.iter().map(|(id, _)| *id).collect(),
            &runs.iter().map(|(_, r)| *r).collect::<Vec<_>>(),
        );
        Ok(Some(Baseline {
            reference,
            threshold: guard.threshold,
            sides: vec![(String::new(), side)],
        }))
    }

    /// Resolves `--baseline` of a sweep: earlier sweeps, compared point by
    /// point (the points with the same settings). Fails when the reference
    /// names nothing stored or no sweep.
    pub fn resolve_sweep(
        db: &DbArgs,
        guard: &BaselineArgs,
        root: bool,
    ) -> anyhow::Result<Option<Baseline>> {
        let Some((reference, docs)) = Self::stored(db, guard, root)? else {
            return Ok(None);
        };
        let sweeps: Vec<(i64, &SweepResult)> = docs
            .iter()
            .filter_map(|(id, d)| match d {
                Document::Sweep(s) => Some((*id, &s.body)),
                _ => None,
            })
            .collect();
        if sweeps.is_empty() {
            anyhow::bail!(
                "baseline '{reference}' holds no sweep to compare with: a sweep is compared point by point with an earlier sweep \
                 of the same points (iosim sweep ... --label before, then --baseline label:before)"
            );
        }
        Self::warn_single(&reference, sweeps.len(), "sweep");
        let mut names: Vec<String> = Vec::new();
        for (_, s) in &sweeps {
            for p in &s.points {
                let n = point_name(p);
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        let sides = names
            .into_iter()
            .map(|n| {
                let (ids, points): (Vec<i64>, Vec<&PointResult>) = sweeps
                    .iter()
                    .flat_map(|(id, s)| s.points.iter().map(move |p| (*id, p)))
                    .filter(|(_, p)| point_name(p) == n)
                    .unzip();
                let side = Side::of_points(&format!("baseline {reference}"), ids, &points);
                (n, side)
            })
            .collect();
        Ok(Some(Baseline {
            reference,
            threshold: guard.threshold,
            sides,
        }))
    }

    /// The documents `--baseline` names (None without one, or when this
    /// process is not `root`: only rank 0 of a job checks, see
    /// [`super::finish::finish`]).
    fn stored(
        db: &DbArgs,
        guard: &BaselineArgs,
        root: bool,
    ) -> anyhow::Result<Option<(String, Vec<StoredDoc>)>> {
        let Some(reference) = guard.baseline.as_ref().filter(|_| root) else {
            return Ok(None);
        };
        let store = db.open_existing()?;
        let docs = store
            .resolve(reference)?
            .iter()
            .filter_map(|r| Some((r.row.id, r.document().ok()?)))
            .collect();
        Ok(Some((reference.clone(), docs)))
    }

    fn warn_single(reference: &str, n: usize, what: &str) {
        if n == 1 {
            crate::say!(
                "iosim: warning: the baseline '{reference}' is a single {what}, and one {what} cannot tell \
                 a regression from noise: store several {what}s under one label (iosim {what} ... --label base, \
                 3 times or more) and use --baseline label:base"
            );
        }
    }

    /// Compares a measured document with the baseline (a sweep point by
    /// point), prints the comparison and the verdict on stderr, and tells
    /// whether anything regressed beyond the threshold.
    pub fn check(&self, doc: &Document) -> bool {
        let this: Vec<(String, Side)> = match doc {
            Document::Sweep(s) => s
                .body
                .points
                .iter()
                .map(|p| (point_name(p), Side::of_points("this sweep", vec![0], &[p])))
                .collect(),
            _ => {
                let runs = doc.runs();
                let first: Vec<&RunResult> = runs.first().map(|(_, r)| *r).into_iter().collect();
                vec![(String::new(), Side::new("this run", vec![0], &first))]
            }
        };
        let mut compared = 0;
        let mut regressed = false;
        for (name, this) in &this {
            let Some((_, base)) = self.sides.iter().find(|(n, _)| n == name) else {
                crate::say!(
                    "iosim: warning: point {name} is not in the baseline '{}': not compared",
                    self.reference
                );
                continue;
            };
            compared += 1;
            let point = if name.is_empty() {
                String::new()
            } else {
                format!("point {name}: ")
            };
            if !name.is_empty() {
                crate::say!("point {name}:");
            }
            crate::term::stderr_text(&compare::table(&[base.clone(), this.clone()]));
            for r in compare::worse_beyond(base, this, self.threshold) {
                if r.regressed(self.threshold) {
                    regressed = true;
                    crate::say!(
                        "REGRESSION: {point}{}, threshold {}%",
                        r.describe(),
                        self.threshold
                    );
                } else {
                    crate::say!("within noise: {point}{}", r.describe());
                }
            }
        }
        if compared == 0 {
            crate::say!(
                "iosim: warning: no point of this sweep is in the baseline '{}': nothing was compared",
                self.reference
            );
        } else if !regressed {
            crate::say!(
                "baseline check passed against '{}': no regression beyond {}% in IOPS, MiB/s or p99 latency",
                self.reference, self.threshold
            );
        }
        regressed
    }
}
