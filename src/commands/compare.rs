//! `iosim compare`: stored runs side by side.

use serde_json::Value;

use super::Ctx;
use crate::cli::{CompareArgs, OutputFormat};
use crate::outcome::Outcome;
use crate::store::compare;
use crate::store::render::sides;

/// `iosim compare`.
pub fn run(a: &CompareArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let out = &mut *ctx.out;
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
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"scopes": v, "not_comparable": unknown})
            )?
        )?;
        return Ok(Outcome::Success);
    }
    if a.output == OutputFormat::Csv {
        anyhow::bail!("compare prints text or JSON: use -o text or -o json");
    }
    for (scope, sides) in &groups {
        if !scope.is_empty() {
            writeln!(out, "== {scope} ==")?;
        }
        write!(out, "{}", compare::table(sides))?;
        writeln!(out)?;
    }
    for r in &unknown {
        writeln!(
            out,
            "run {} is a '{}' document without run results to compare; its JSON:\n{}",
            r.row.id,
            r.row.kind,
            serde_json::to_string_pretty(&r.doc)?
        )?;
    }
    Ok(Outcome::Success)
}
