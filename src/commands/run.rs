//! `iosim run`: one workload, or a database profile with `--profile`.

use super::finish::{finish, Ending, OutFile};
use super::{save, Ctx};
use crate::cli::RunArgs;
use crate::document::{Document, Headed, Header, Ranks};
use crate::outcome::Outcome;

/// Runs the workload, prints it, checks the baseline, saves it.
pub fn run(r: &RunArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    // `--metrics-listen`: served until this returns (dropping the server stops it).
    let served = r.metrics.serve("run", r.out.quiet)?;
    let live = served.as_ref().map(crate::metrics::Server::live);
    if let Some(name) = &r.profile {
        return run_profile(name, r, ctx, live);
    }
    let mut spec = r.to_spec()?;
    for t in &mut spec.targets {
        t.path = ctx.for_rank(&t.path);
    }
    let baseline = save::Baseline::resolve(&r.save.db, &r.guard, ctx.is_root())?;
    let mut opts = ctx.run_options(&r.out, r.interval);
    opts.verify = r.verify.options();
    opts.metrics = live;
    // The series file and the log first: one that is refused is refused
    // before any target is touched.
    if let Some(p) = &r.series {
        crate::outfile::check(p, "time series")?;
    }
    let hist_log = match &r.hist_log {
        Some(_) if ctx.job.is_some() => anyhow::bail!(
            "--hist-log is not available under mpirun/srun yet: run without it, or on one host without the launcher"
        ),
        Some(p) => Some(crate::histlog::HistLog::create(p)?.shared()),
        None => None,
    };
    let steady = match &spec.shape.steady_state {
        Some(ss) => Some(super::precondition::reach(&spec, ss, &opts)?),
        None => None,
    };
    opts.hist_log = hist_log;
    let run = match &r.neighbour {
        Some(n) if ctx.job.is_some() => {
            return Err(crate::Error::BadWorkload(format!(
                "--neighbour {} measures one host's neighbour: run it without mpirun/srun",
                n.text
            ))
            .into())
        }
        Some(n) if opts.hist_log.is_some() => {
            return Err(crate::Error::BadWorkload(format!(
            "--neighbour {} runs the workload twice and --hist-log logs one run: drop one of them",
            n.text
        ))
            .into())
        }
        Some(n) => crate::neighbour::run(&spec, n, &opts)?,
        None => crate::runner::run_joint(std::slice::from_ref(&spec), &opts)?
            .pop()
            .expect("one result per workload"),
    };
    let mut result = run.result;
    // A rate limit named is probed at twice the queue depth (one host, no
    // --verify: the probe's writes are not the verified run's).
    if ctx.job.is_none() && r.neighbour.is_none() && opts.verify.is_none() {
        crate::limitprobe::check(&spec, &mut result, &opts)?;
    }
    // Issue 17 reports (steady state, achieved data ratios) ride in the notes
    // until the result document has a place for them.
    if let Some(st) = &steady {
        result.notes.push(st.line());
    }
    if spec.writes() && (spec.fill.is_generated() || spec.shape.dedupe_pct > 0) {
        let d =
            crate::workload::data::measure(spec.fill, spec.shape.dedupe_pct, spec.seed, 16 << 20);
        result.notes.push(d.line());
    }
    // Data errors found by --verify end the run as I/O errors do (exit status 3).
    let outcome = Outcome::of_run(
        result.interrupted,
        result.errors.count + result.data_errors(),
    );
    let mut end = Ending::new(r.out.output, outcome, Some(&r.save));
    end.baseline = baseline.as_ref();
    if let Some(path) = &r.series {
        end.files.push(OutFile::new(
            path.clone(),
            "time series",
            crate::report::series_csv(&result),
        ));
    }
    let doc = Document::run(result).with_ranks(run.ranks.map(Ranks::Merged));
    finish(doc, ctx, end)
}

/// `iosim run --profile NAME PATH...`.
fn run_profile(
    name: &str,
    r: &RunArgs,
    ctx: &mut Ctx,
    live: Option<std::sync::Arc<crate::metrics::Live>>,
) -> anyhow::Result<Outcome> {
    if r.hist_log.is_some() {
        anyhow::bail!(
            "--hist-log logs one workload, and a profile runs several at once: run without --profile, or without --hist-log"
        );
    }
    let mut profile = crate::profile::Profile::load(name)?;
    let mut load_notes = Vec::new();
    if let Some(c) = r.commit_rate {
        let (p, note) = profile.at_commit_rate(c)?;
        profile = p;
        load_notes.push(note);
    }
    if let Some(n) = r.clients {
        let (p, note) = profile.at_clients(n)?;
        profile = p;
        load_notes.push(note);
    }
    let mut plan = crate::profile::plan(profile, &r.to_overrides())?;
    plan.notes.extend(load_notes);
    // Under mpirun/srun each rank runs the profile on its own files (or its
    // slice of a shared device with --share-target), all in one window.
    for t in &mut plan.targets {
        t.path = ctx.for_rank(&t.path);
    }
    for w in &mut plan.workloads {
        for t in &mut w.spec.targets {
            t.path = ctx.for_rank(&t.path);
        }
    }
    if !r.out.quiet && ctx.is_root() {
        for n in &plan.notes {
            crate::say!("iosim: note: {n}");
        }
    }
    let baseline = save::Baseline::resolve(&r.save.db, &r.guard, ctx.is_root())?;
    let mut opts = ctx.run_options(&r.out, r.interval);
    opts.metrics = live;
    let header = Header::now();
    let res = crate::profile::run(&plan, &opts)?;
    let mut end = Ending::new(
        r.out.output,
        Outcome::of_run(res.interrupted, res.errors),
        Some(&r.save),
    );
    end.baseline = baseline.as_ref();
    finish(Document::Profile(Headed::new(header, res)), ctx, end)
}
