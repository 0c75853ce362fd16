//! `iosim sim`: the database-engine I/O simulator.

use super::{save, Ctx};
use crate::cli::{OutputFormat, SimArgs};
use crate::document::{Document, Headed, Header};
use crate::outcome::Outcome;

/// Builds the configuration, runs the simulation, prints and saves it.
pub fn run(s: &SimArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    if s.out.output == OutputFormat::Csv {
        anyhow::bail!("iosim sim prints text or json: use --output text or --output json");
    }
    // Configuration warnings are shown at once and repeated in the report.
    let (cfg, warnings) = s.to_config().map_err(anyhow::Error::msg)?;
    if !s.out.quiet {
        for w in &warnings {
            eprintln!("iosim sim: warning: {w}");
        }
    }
    let opts = crate::sim::RunOpts {
        stop: ctx.stop.clone(),
        allow_destroy: s.allow_destroy,
        faults: s.inject.clone(),
        quiet: s.out.quiet,
        long_io: std::time::Duration::from_secs(s.long_io.max(1)),
    };
    let header = Header::now();
    let mut res = crate::sim::run(cfg, &opts)?;
    res.warnings.splice(0..0, warnings);
    let outcome = Outcome::of_run(res.interrupted, res.errors.count);
    let doc = Document::Sim(Headed::new(header, res));
    let text = crate::document::render(&doc, s.out.output)?;
    let printed = ctx.out.write_all(text.as_bytes());
    save::save_result(&s.save, &doc);
    printed?;
    Ok(outcome)
}
