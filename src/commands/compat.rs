//! `iosim sqlio`, `iosim diskspd`, `iosim translate`: the legacy front ends
//! in [`crate::compat`] parse, run and print as their tools did; a run ends
//! here in [`finish`], as every command's does.

use super::finish::{finish, Ending, OutFile};
use super::Ctx;
use crate::cli::{CompatArgs, DbArgs, OutputFormat, SaveArgs};
use crate::compat::stored::FrontEnd;
use crate::compat::Measured;
use crate::document::Document;
use crate::outcome::Outcome;

/// `iosim sqlio`.
pub fn sqlio(a: &CompatArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let m = crate::compat::sqlio::main(&a.args, ctx.stop.clone(), ctx.out)?;
    end(m, |p| FrontEnd::Sqlio(Box::new(p)), ctx)
}

/// `iosim diskspd`.
pub fn diskspd(a: &CompatArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let m = crate::compat::diskspd::main(&a.args, ctx.stop.clone(), ctx.out)?;
    end(m, |p| FrontEnd::Diskspd(Box::new(p)), ctx)
}

/// Ends a front end's run as `iosim run`'s ends, in [`finish`]: its
/// document (the run, with what the front end printed it from, so that
/// `iosim show` prints the front end's output again) printed as the front
/// end's text after what it printed while it ran, `--json FILE` written
/// beside it, its notes said, stored unless `--no-save`, and the run's
/// outcome (3 after I/O errors, 130 interrupted). `-?` and `-Rp` measured
/// nothing: they printed what they print, and end 0.
fn end<P>(m: Measured<P>, front_end: fn(P) -> FrontEnd, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let Some((res, printed)) = m.run else {
        return Ok(Outcome::Success);
    };
    let save = SaveArgs {
        db: DbArgs { db: m.ext.db },
        no_save: m.ext.no_save,
        label: m.ext.label,
    };
    let outcome = Outcome::of_run(res.interrupted, res.errors.count);
    let mut end = Ending::new(OutputFormat::Text, outcome, Some(&save));
    end.streamed = m.streamed;
    end.notes = m.notes;
    if let Some(path) = m.ext.json {
        end.files.push(OutFile::new(
            path,
            "JSON result",
            crate::report::json(&res) + "\n",
        ));
    }
    finish(Document::run_from(res, Some(front_end(printed))), ctx, end)
}

/// `iosim translate`.
pub fn translate(a: &CompatArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    crate::compat::translate::main(&a.args, ctx.out)?;
    Ok(Outcome::Success)
}
