//! `iosim quick` (and `iosim` alone): the default corner-case suite.

use std::time::Duration;

use super::{run_options, save, Ctx};
use crate::cli::{OutputFormat, QuickArgs};
use crate::outcome::Outcome;

/// Runs the suite, prints it, saves it.
pub fn run(q: &QuickArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let dir = q.dir.clone().unwrap_or_else(|| ".".into());
    if !dir.is_dir() {
        return Err(crate::Error::MissingDirectory(dir).into());
    }
    let cfg = crate::quick::QuickConfig {
        path: dir.join(&q.file),
        size: q.size,
        duration: q.duration,
        engine: q.engine,
        cache: q.cache,
    };
    let opts = run_options(&q.out, ctx.stop.clone(), Duration::from_secs(1));
    let res = crate::quick::run(&cfg, &opts)?;
    let out = &mut *ctx.out;
    match q.out.output {
        OutputFormat::Text => write!(out, "{}", crate::quick::table(&res))?,
        OutputFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(&res)?)?,
        OutputFormat::Csv => {
            writeln!(out, "test,{}", crate::report::CSV_HEADER)?;
            for t in &res.tests {
                for line in crate::report::csv(&t.result)
                    .lines()
                    .skip(1)
                    .filter(|l| l.starts_with("total"))
                {
                    writeln!(out, "{},{line}", t.name)?;
                }
            }
        }
    }
    if q.out.output == OutputFormat::Text {
        eprintln!(
            "(test file kept for the next run: {}; delete it when done)",
            cfg.path.display()
        );
    }
    save::save_result(&q.save, "quick", &serde_json::to_value(&res)?);
    let interrupted = res.tests.iter().any(|t| t.result.interrupted)
        || res.tests.len() < crate::quick::SUITE.len();
    Ok(Outcome::of_run(
        interrupted,
        res.tests.iter().map(|t| t.result.errors.count).sum(),
    ))
}
