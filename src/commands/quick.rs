//! `iosim quick` (and `iosim` alone): the default corner-case suite.

use std::time::Duration;

use super::finish::{finish, Ending};
use super::Ctx;
use crate::cli::{OutputFormat, QuickArgs};
use crate::document::{Document, Headed, Header};
use crate::outcome::Outcome;

/// Runs the suite, prints it, saves it.
pub fn run(q: &QuickArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let dir = q.dir.clone().unwrap_or_else(|| ".".into());
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!(crate::Error::QuickNeedsDirectory(dir));
    }
    if !dir.is_dir() {
        return Err(crate::Error::MissingDirectory(dir).into());
    }
    let cfg = crate::quick::QuickConfig {
        path: ctx.for_rank(&dir.join(&q.file)),
        size: q.size,
        duration: q.duration,
        engine: q.engine,
        cache: q.cache,
        allow_destroy: q.allow_destroy,
    };
    let opts = ctx.run_options(&q.out, Duration::from_secs(1));
    let header = Header::now();
    let res = crate::quick::run(&cfg, &opts)?;
    let interrupted = res.tests.iter().any(|t| t.result.interrupted)
        || res.tests.len() < crate::quick::SUITE.len();
    let errors = res.tests.iter().map(|t| t.result.errors.count).sum();
    let mut end = Ending::new(
        q.out.output,
        Outcome::of_run(interrupted, errors),
        Some(&q.save),
    );
    if q.out.output == OutputFormat::Text {
        end.notes.push(format!(
            "(test file kept for the next run: {}; delete it when done)",
            cfg.path.display()
        ));
    }
    finish(Document::Quick(Headed::new(header, res)), ctx, end)
}
