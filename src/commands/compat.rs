//! `iosim sqlio`, `iosim diskspd`, `iosim translate`: the legacy front ends
//! in [`crate::compat`] parse and print; this stores what they measured and
//! maps their exit status.

use super::{save, Ctx};
use crate::cli::{CompatArgs, DbArgs, SaveArgs};
use crate::compat::Measured;
use crate::document::Document;
use crate::outcome::Outcome;

/// `iosim sqlio`.
pub fn sqlio(a: &CompatArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    Ok(store(crate::compat::sqlio::main(
        &a.args,
        ctx.stop.clone(),
        ctx.out,
    )?))
}

/// `iosim diskspd`.
pub fn diskspd(a: &CompatArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    Ok(store(crate::compat::diskspd::main(
        &a.args,
        ctx.stop.clone(),
        ctx.out,
    )?))
}

/// Stores a front end's result as a run (unless `--no-save`), as `iosim run` does.
fn store(m: Measured) -> Outcome {
    if let Some(res) = m.result {
        let args = SaveArgs {
            db: DbArgs { db: m.ext.db },
            no_save: m.ext.no_save,
            label: m.ext.label,
        };
        save::save_result(&args, &Document::run(res));
    }
    Outcome::from_code(m.code)
}

/// `iosim translate`.
pub fn translate(a: &CompatArgs, _ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    Ok(Outcome::from_code(crate::compat::translate::main(&a.args)?))
}
