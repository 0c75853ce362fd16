//! `iosim compare`: stored runs side by side.

use super::Ctx;
use crate::cli::CompareArgs;
use crate::document::compare::{Comparison, ScopeComparison};
use crate::document::{Document, Headed, Header};
use crate::outcome::Outcome;
use crate::store::compare;
use crate::store::render::sides;

/// `iosim compare`.
pub fn run(a: &CompareArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let store = a.db.open_existing()?;
    let (groups, unknown) = sides(&store, &a.runs)?;
    let scopes = groups
        .into_iter()
        .map(|(scope, sides)| ScopeComparison {
            diffs: sides.iter().map(|s| compare::diff(&sides[0], s)).collect(),
            scope,
            sides,
        })
        .collect();
    let doc = Document::Compare(Headed::new(
        Header::now(),
        Comparison {
            refs: a.runs.clone(),
            scopes,
            not_comparable: unknown.iter().map(|r| r.row.id).collect(),
            warnings: Vec::new(),
        },
    ));
    ctx.out
        .write_all(crate::document::render(&doc, a.output)?.as_bytes())?;
    Ok(Outcome::Success)
}
