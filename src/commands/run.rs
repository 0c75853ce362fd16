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
    let mut opts = run_options(&r.out, ctx.stop.clone(), r.interval);
    opts.verify = r.verify.options();
    let steady = match &spec.shape.steady_state {
        Some(ss) => Some(super::precondition::reach(&spec, ss, &opts)?),
        None => None,
    };
    let mut run = crate::mpi::run(&spec, &opts, &r.mpi)?;
    // Issue 17 reports (steady state, achieved data ratios) ride in the notes
    // until the result document has a place for them.
    if let Some(st) = &steady {
        run.result.notes.push(st.line());
    }
    if spec.writes() && (spec.fill.is_generated() || spec.shape.dedupe_pct > 0) {
        let d =
            crate::workload::data::measure(spec.fill, spec.shape.dedupe_pct, spec.seed, 16 << 20);
        run.result.notes.push(d.line());
    }
    let res = &run.result;
    if !crate::mpi::is_root() {
        // Rank 0 prints and saves the job's result; every rank exits alike.
        return Ok(Outcome::of_run(
            res.interrupted,
            res.errors.count + res.data_errors(),
        ));
    }
    let text = match (r.out.output, &run.ranks) {
        (OutputFormat::Text, Some(_)) => run.text(),
        (OutputFormat::Json, Some(_)) => run.json() + "\n",
        (OutputFormat::Text, None) => crate::report::text(res),
        (OutputFormat::Json, None) => crate::report::json(res) + "\n",
        (OutputFormat::Csv, _) => crate::report::csv(res),
    };
    // A reader that went away (| head) does not lose the result: it is still saved.
    let printed = ctx.out.write_all(text.as_bytes());
    let series = match &r.series {
        Some(path) => std::fs::write(path, crate::report::series_csv(res)).map_err(|e| {
            anyhow::anyhow!("cannot write the time series to '{}': {e}", path.display())
        }),
        None => Ok(()),
    };
    let doc = serde_json::to_value(&run)?;
    let regressed = save::after_run(&r.save, &r.guard, "run", &doc);
    series?;
    let regressed = regressed?;
    printed?;
    // Data errors found by --verify end the run as I/O errors do (exit status 3).
    let errors = res.errors.count + res.data_errors();
    if regressed && !res.interrupted && errors == 0 {
        return Ok(Outcome::Regressed);
    }
    Ok(Outcome::of_run(res.interrupted, errors))
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
    let text = match r.out.output {
        OutputFormat::Text => crate::profile::text(&res),
        OutputFormat::Json => serde_json::to_string_pretty(&res)? + "\n",
        OutputFormat::Csv => crate::profile::csv(&res),
    };
    let printed = ctx.out.write_all(text.as_bytes());
    let doc = serde_json::to_value(&res)?;
    let regressed = save::after_run(&r.save, &r.guard, "profile", &doc)?;
    printed?;
    if regressed && !res.interrupted && res.errors == 0 {
        return Ok(Outcome::Regressed);
    }
    Ok(Outcome::of_run(res.interrupted, res.errors))
}
