//! `iosim show`: reprint stored runs.

use serde_json::Value;

use super::Ctx;
use crate::cli::{OutputFormat, ShowArgs};
use crate::outcome::Outcome;
use crate::store::render::render;

/// `iosim show`.
pub fn run(a: &ShowArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let out = &mut *ctx.out;
    let store = a.db.open_existing()?;
    let runs = store.resolve(&a.run)?;
    if runs.len() > 1 && a.output == OutputFormat::Json {
        // Several runs (a label or group): one JSON array of their documents.
        let docs: Vec<&Value> = runs.iter().map(|r| &r.doc).collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&docs)?)?;
        return Ok(Outcome::Success);
    }
    for (i, r) in runs.iter().enumerate() {
        if runs.len() > 1 && a.output == OutputFormat::Text {
            writeln!(
                out,
                "{}=== run {} ===",
                if i > 0 { "\n" } else { "" },
                r.row.id
            )?;
        }
        if a.output == OutputFormat::Text && r.document().is_err() {
            eprintln!(
                "iosim: run {} is a '{}' document this iosim cannot read: shown as stored, in JSON",
                r.row.id, r.row.kind
            );
        }
        write!(out, "{}", render(r, a.output)?)?;
    }
    Ok(Outcome::Success)
}
