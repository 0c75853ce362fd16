//! `iosim run`: one workload, or a database profile with `--profile`.

use super::{run_options, save, Ctx};
use crate::cli::{OutputFormat, RunArgs};
use crate::outcome::Outcome;

/// Runs the workload, prints it, checks the baseline, saves it.
pub fn run(r: &RunArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    if let Some(name) = &r.profile {
        return run_profile(name, r, ctx);
    }
    let spec = r.to_spec()?;
    let opts = run_options(&r.out, ctx.stop.clone(), r.interval);
    let steady = match &spec.shape.steady_state {
        Some(ss) => Some(super::precondition::reach(&spec, ss, &opts)?),
        None => None,
    };
    let mut res = crate::runner::run(&spec, &opts)?;
    // Issue 17 reports (steady state, achieved data ratios) ride in the notes
    // until the result document has a place for them.
    if let Some(st) = &steady {
        res.notes.push(st.line());
    }
    if spec.writes() && (spec.fill.is_generated() || spec.shape.dedupe_pct > 0) {
        let d =
            crate::workload::data::measure(spec.fill, spec.shape.dedupe_pct, spec.seed, 16 << 20);
        res.notes.push(d.line());
    }
    match r.out.output {
        OutputFormat::Text => write!(ctx.out, "{}", crate::report::text(&res))?,
        OutputFormat::Json => writeln!(ctx.out, "{}", crate::report::json(&res))?,
        OutputFormat::Csv => write!(ctx.out, "{}", crate::report::csv(&res))?,
    }
    if let Some(path) = &r.series {
        std::fs::write(path, crate::report::series_csv(&res)).map_err(|e| {
            anyhow::anyhow!("cannot write the time series to '{}': {e}", path.display())
        })?;
    }
    let doc = serde_json::to_value(&res)?;
    let regressed = save::after_run(&r.save, &r.guard, "run", &doc)?;
    if regressed && !res.interrupted && res.errors.count == 0 {
        return Ok(Outcome::Regressed);
    }
    Ok(Outcome::of_run(res.interrupted, res.errors.count))
}

/// `iosim run --profile NAME PATH...`.
fn run_profile(name: &str, r: &RunArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let plan = crate::profile::plan(crate::profile::Profile::load(name)?, &r.to_overrides())?;
    if !r.out.quiet {
        for n in &plan.notes {
            eprintln!("iosim: note: {n}");
        }
    }
    let opts = run_options(&r.out, ctx.stop.clone(), r.interval);
    let res = crate::profile::run(&plan, &opts)?;
    match r.out.output {
        OutputFormat::Text => write!(ctx.out, "{}", crate::profile::text(&res))?,
        OutputFormat::Json => writeln!(ctx.out, "{}", serde_json::to_string_pretty(&res)?)?,
        OutputFormat::Csv => write!(ctx.out, "{}", crate::profile::csv(&res))?,
    }
    let doc = serde_json::to_value(&res)?;
    let regressed = save::after_run(&r.save, &r.guard, "profile", &doc)?;
    if regressed && !res.interrupted && res.errors == 0 {
        return Ok(Outcome::Regressed);
    }
    Ok(Outcome::of_run(res.interrupted, res.errors))
}
