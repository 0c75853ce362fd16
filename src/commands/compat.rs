//! `iosim sqlio`, `iosim diskspd`, `iosim translate`: the legacy front ends
//! in [`crate::compat`] parse and print; this stores what they measured and
//! maps their exit status.

use super::{save, Ctx};
use crate::cli::{CompatArgs, DbArgs, SaveArgs};
use crate::compat::stored::FrontEnd;
use crate::compat::Measured;
use crate::document::Document;
use crate::outcome::Outcome;

/// `iosim sqlio`.
pub fn sqlio(a: &CompatArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    Ok(store(
        crate::compat::sqlio::main(&a.args, ctx.stop.clone(), ctx.out)?,
        |p| FrontEnd::Sqlio(Box::new(p)),
    ))
}

/// `iosim diskspd`.
pub fn diskspd(a: &CompatArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    Ok(store(
        crate::compat::diskspd::main(&a.args, ctx.stop.clone(), ctx.out)?,
        |p| FrontEnd::Diskspd(Box::new(p)),
    ))
}

/// Stores a front end's result as a run (unless `--no-save`), as `iosim run`
/// does, with what the front end printed it from, so that `iosim show`
/// prints the front end's output again.
fn store<P>(m: Measured<P>, front_end: fn(P) -> FrontEnd) -> Outcome {
    if let Some(res) = m.result {
        let args = SaveArgs {
            db: DbArgs { db: m.ext.db },
            no_save: m.ext.no_save,
            label: m.ext.label,
        };
        let doc = Document::run_from(res, m.printed.map(front_end));
        save::save_result(&args, &doc);
    }
    Outcome::from_code(m.code)
}

/// `iosim translate`.
pub fn translate(a: &CompatArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    Ok(Outcome::from_code(crate::compat::translate::main(
        &a.args, ctx.out,
    )?))
}
