//! `iosim sqlio`, `iosim diskspd`, `iosim translate`: the legacy front ends
//! in [`crate::compat`] parse and print; this maps their exit status.

use super::Ctx;
use crate::cli::CompatArgs;
use crate::outcome::Outcome;

/// `iosim sqlio`.
pub fn sqlio(a: &CompatArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    Ok(Outcome::from_code(crate::compat::sqlio::main(
        &a.args,
        ctx.stop.clone(),
        ctx.out,
    )?))
}

/// `iosim diskspd`.
pub fn diskspd(a: &CompatArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    Ok(Outcome::from_code(crate::compat::diskspd::main(
        &a.args,
        ctx.stop.clone(),
        ctx.out,
    )?))
}

/// `iosim translate`.
pub fn translate(a: &CompatArgs, _ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    Ok(Outcome::from_code(crate::compat::translate::main(&a.args)?))
}
