//! `iosim run`: one workload, or a database profile with `--profile`.

use super::options::run_options;
use super::{save, Ctx};
use crate::cli::{OutputFormat, RunArgs};
use crate::document::{Document, Headed, Header};
use crate::outcome::Outcome;
use crate::outfile::{self, Existing};

/// Runs the workload, prints it, checks the baseline, saves it.
pub fn run(r: &RunArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    if let Some(name) = &r.profile {
        return run_profile(name, r, ctx);
    }
    let spec = r.to_spec()?;
    let baseline = save::Baseline::resolve(&r.save.db, &r.guard)?;
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
    // Data errors found by --verify end the run as I/O errors do (exit status 3).
    let (interrupted, errors) = (
        run.result.interrupted,
        run.result.errors.count + run.result.data_errors(),
    );
    if !crate::mpi::is_root() {
        // Rank 0 prints and saves the job's result; every rank exits alike.
        return Ok(Outcome::of_run(interrupted, errors));
    }
    let text = match r.out.output {
        OutputFormat::Text => run.text(),
        OutputFormat::Json => run.json() + "\n",
        OutputFormat::Csv => crate::report::csv(&run.result),
    };
    // A reader that went away (| head) does not lose the result: it is still saved.
    let printed = ctx.out.write_all(text.as_bytes());
    let series = match &r.series {
        Some(path) => outfile::write(
            path,
            "time series",
            crate::report::series_csv(&run.result).as_bytes(),
            Existing::Replace,
        ),
        None => Ok(()),
    };
    let doc = Document::Run(Box::new(run));
    let regressed = save::after_run(&r.save, baseline.as_ref(), &doc);
    series?;
    printed?;
    Ok(Outcome::of_checked_run(interrupted, errors, regressed))
}

/// `iosim run --profile NAME PATH...`.
fn run_profile(name: &str, r: &RunArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let mut plan = crate::profile::plan(crate::profile::Profile::load(name)?, &r.to_overrides())?;
    // Under mpirun/srun each rank runs the profile on its own files (or its
    // slice of a shared device with --share-target), all in one window.
    if crate::mpi::is_collective() {
        crate::mpi::configure(&r.mpi);
        for t in &mut plan.targets {
            t.path = crate::mpi::rank_path(&t.path);
        }
        for w in &mut plan.workloads {
            for t in &mut w.spec.targets {
                t.path = crate::mpi::rank_path(&t.path);
            }
        }
    }
    if !r.out.quiet && crate::mpi::is_root() {
        for n in &plan.notes {
            eprintln!("iosim: note: {n}");
        }
    }
    let baseline = save::Baseline::resolve(&r.save.db, &r.guard)?;
    let opts = run_options(&r.out, ctx.stop.clone(), r.interval);
    let header = Header::now();
    let res = crate::profile::run(&plan, &opts)?;
    if !crate::mpi::is_root() {
        // Rank 0 prints and saves the job's result; every rank exits alike.
        return Ok(Outcome::of_run(res.interrupted, res.errors));
    }
    let (interrupted, errors) = (res.interrupted, res.errors);
    let doc = Document::Profile(Headed::new(header, res));
    let text = crate::document::render(&doc, r.out.output)?;
    let printed = ctx.out.write_all(text.as_bytes());
    let regressed = save::after_run(&r.save, baseline.as_ref(), &doc);
    printed?;
    Ok(Outcome::of_checked_run(interrupted, errors, regressed))
}
