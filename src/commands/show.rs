//! `iosim show`: reprint stored runs.

use super::Ctx;
use crate::cli::{OutputFormat, ShowArgs};
use crate::outcome::Outcome;
use crate::store::render::render_many;

/// `iosim show`.
pub fn run(a: &ShowArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let store = a.db.open_existing()?;
    let runs = store.resolve(&a.run)?;
    if a.output == OutputFormat::Text {
        for r in runs.iter().filter(|r| r.document().is_err()) {
            eprintln!(
                "iosim: run {} is a '{}' document this iosim cannot read: shown as stored, in JSON",
                r.row.id, r.row.kind
            );
        }
    }
    ctx.out
        .write_all(render_many(&runs, a.output)?.as_bytes())?;
    Ok(Outcome::Success)
}
