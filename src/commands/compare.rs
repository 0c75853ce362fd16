//! `iosim compare`: stored runs side by side; stored qualifications verdict
//! by verdict and workload by workload; exit 4 on a regression beyond
//! `--threshold`.

use super::finish::{finish, Ending};
use super::Ctx;
use crate::cli::CompareArgs;
use crate::comparison as compare;
use crate::document::compare::{Comparison, ScopeComparison};
use crate::document::{Document, Headed, Header, Kind};
use crate::outcome::Outcome;
use crate::qualify::QualifyResult;
use crate::store::render::sides;
use crate::store::Store;

/// A stored qualification: run id, start time, result.
type StoredQualification = (i64, String, QualifyResult);

/// The qualifications the references name, when every one names exactly one
/// qualification (None when any names something else: those are compared
/// as runs). A reference naming several qualifications is an error.
fn qualifications(
    store: &Store,
    refs: &[String],
) -> anyhow::Result<Option<Vec<StoredQualification>>> {
    let mut out = Vec::new();
    for r in refs {
        let runs = store.resolve(r)?;
        let mut found = Vec::new();
        for run in runs {
            match run.document() {
                Ok(Document::Qualify(q)) => found.push((run.row.id, q.header.started_at, q.body)),
                _ => return Ok(None),
            }
        }
        if found.len() != 1 {
            anyhow::bail!(
                "'{r}' names {} qualifications: a qualification is compared with one other; give each one's id (iosim history --kind qualify)",
                found.len()
            );
        }
        out.extend(found);
    }
    Ok(Some(out))
}

/// `iosim compare`.
pub fn run(a: &CompareArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let store = a.db.open_existing()?;
    let mut comparison = Comparison {
        refs: a.runs.clone(),
        threshold_pct: a.threshold,
        ..Comparison::default()
    };
    if let Some(mut qs) = qualifications(&store, &a.runs)? {
        let (id, started, first) = qs.remove(0);
        comparison.qualifications = qs
            .iter()
            .map(|(now_id, _, now)| {
                crate::qualify::compare::compare(
                    id,
                    &started,
                    &first,
                    Some(*now_id),
                    now,
                    a.threshold,
                )
            })
            .collect();
    } else {
        let found = sides(&store, &a.runs)?;
        comparison.scopes = found
            .scopes
            .into_iter()
            .map(|(scope, sides)| ScopeComparison {
                diffs: sides.iter().map(|s| compare::diff(&sides[0], s)).collect(),
                scope,
                sides,
            })
            .collect();
        if let Some(t) = a.threshold {
            for sc in &comparison.scopes {
                let scope = if sc.scope.is_empty() {
                    String::new()
                } else {
                    format!("{}: ", sc.scope)
                };
                for s in &sc.sides[1..] {
                    for r in compare::worse_beyond(&sc.sides[0], s, t) {
                        let line = format!("{scope}{} {}", s.name, r.describe());
                        if r.regressed(t) {
                            comparison
                                .regressions
                                .push(format!("{line}, threshold {t}%"));
                        } else {
                            comparison.within_noise.push(line);
                        }
                    }
                }
            }
        }
        for run in &found.unknown {
            if run.row.kind_of() == Some(Kind::Qualify) {
                comparison.warnings.push(format!(
                    "run {} is a qualification: it is compared only with another qualification (iosim compare ID ID)",
                    run.row.id
                ));
            }
        }
        comparison.not_comparable = found.unknown.iter().map(|r| r.row.id).collect();
        comparison.warnings.extend(found.warnings);
    }
    // Also on stderr, so that they are seen when the output goes to a file.
    for w in &comparison.warnings {
        crate::say!("iosim compare: warning: {w}");
    }
    // A comparison is printed, never stored.
    let mut end = Ending::new(a.output, Outcome::Success, None);
    end.regressed = comparison.regressed();
    finish(
        Document::Compare(Headed::new(Header::now(), comparison)),
        ctx,
        end,
    )
}
