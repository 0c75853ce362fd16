//! `iosim show`: reprint stored runs.

use super::Ctx;
use crate::cli::{OutputFormat, ShowArgs};
use crate::outcome::Outcome;
use crate::store::render::render_many;

/// `iosim show`.
pub fn run(a: &ShowArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    if let Some(p) = &a.hist_log {
        return hist_log(p, a, ctx);
    }
    let store = a.db.open_existing()?;
    let runs = store.resolve(a.run.as_deref().unwrap_or("last"))?;
    if a.output == OutputFormat::Text {
        for r in runs.iter().filter(|r| r.document().is_err()) {
            crate::say!(
                "iosim: run {} is a '{}' document this iosim cannot read: shown as stored, in JSON",
                r.row.id,
                r.row.kind
            );
        }
    }
    ctx.out
        .write_all(render_many(&runs, a.output)?.as_bytes())?;
    Ok(Outcome::Success)
}

/// `iosim show --hist-log FILE`: the log's summary (text or JSON).
fn hist_log(p: &std::path::Path, a: &ShowArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let mut s = crate::histlog::read(p)?.summary;
    let text = match a.output {
        OutputFormat::Text => crate::histlog::summary_text(&s, a.intervals),
        OutputFormat::Json => {
            if !a.intervals {
                s.points.clear();
            }
            serde_json::to_string_pretty(&s)? + "\n"
        }
        OutputFormat::Csv => anyhow::bail!(
            "iosim show --hist-log prints text or json, not csv: give -o text or -o json"
        ),
    };
    ctx.out.write_all(text.as_bytes())?;
    Ok(Outcome::Success)
}
