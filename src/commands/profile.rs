//! `iosim profile list|show` (running one is `iosim run --profile`).

use super::Ctx;
use crate::cli::{ProfileAction, ProfileArgs};
use crate::outcome::Outcome;

/// Lists the profiles or prints one's TOML.
pub fn run(p: &ProfileArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    if !ctx.is_root() {
        // Under mpirun/srun rank 0 alone prints.
        return Ok(Outcome::Success);
    }
    match &p.action {
        ProfileAction::List => write!(ctx.out, "{}", crate::profile::list_text()?)?,
        ProfileAction::Show { name } => write!(ctx.out, "{}", crate::profile::show_text(name)?)?,
    }
    Ok(Outcome::Success)
}
