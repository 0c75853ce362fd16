//! `iosim sim`: the database-engine I/O simulator.

use super::{save, Ctx};
use crate::cli::{OutputFormat, SimArgs};
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
    let mut res = crate::sim::run(cfg, &opts)?;
    res.warnings.splice(0..0, warnings);
    let text = match s.out.output {
        OutputFormat::Json => serde_json::to_string_pretty(&res)? + "\n",
        _ => crate::sim::summary::text(&res),
    };
    let printed = ctx.out.write_all(text.as_bytes());
    save::save_result(&s.save, "sim", &serde_json::to_value(&res)?);
    printed?;
    Ok(Outcome::of_run(res.interrupted, res.errors.count))
}
