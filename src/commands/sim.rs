//! `iosim sim`: the database-engine I/O simulator.

use super::finish::{finish, Ending};
use super::Ctx;
use crate::cli::{OutputFormat, SimArgs};
use crate::document::{Document, Headed, Header, Ranks};
use crate::outcome::Outcome;

/// Builds the configuration, runs the simulation, prints and saves it.
pub fn run(s: &SimArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    if s.out.output == OutputFormat::Csv {
        anyhow::bail!("iosim sim prints text or json: use --output text or --output json");
    }
    // Configuration warnings are shown at once and repeated in the report.
    let (mut cfg, warnings) = s.to_config()?;
    // Under mpirun/srun each rank simulates its own database files.
    for f in &mut cfg.files {
        f.name = ctx.for_rank(&f.name);
    }
    cfg.error_file = ctx.for_rank(&cfg.error_file);
    if !s.out.quiet && ctx.is_root() {
        for w in &warnings {
            crate::say!("iosim sim: warning: {w}");
        }
    }
    let opts = crate::sim::RunOpts {
        stop: ctx.stop.clone(),
        allow_destroy: s.allow_destroy,
        faults: s.inject.clone(),
        quiet: s.out.quiet,
        long_io: std::time::Duration::from_secs(s.long_io),
        max_dumps: s.max_dumps,
    };
    // `--metrics-listen`: the database files' device counters, until this returns.
    let served = s.metrics.serve("sim", s.out.quiet)?;
    if let Some(m) = &served {
        m.live()
            .watch_targets(cfg.files.iter().map(|f| f.name.as_path()));
    }
    let header = Header::now();
    // Every rank starts its simulation together.
    if let Some(job) = &ctx.job {
        job.barrier();
    }
    let mut res = crate::sim::run(cfg, &opts)?;
    res.warnings.splice(0..0, warnings);
    let ranks = match &ctx.job {
        Some(job) => Some(
            job.solo_summary(&crate::mpi::SoloRow {
                who: crate::mpi::who(),
                duration_s: res.duration_s,
                errors: res.errors.count,
                interrupted: res.interrupted,
                targets: res
                    .config
                    .files
                    .iter()
                    .map(|f| f.name.display().to_string())
                    .collect(),
                result: res.total.clone(),
            })?,
        ),
        None => None,
    };
    // Any rank's error fails the job, on every rank.
    let outcome = match &ranks {
        Some(r) => Outcome::of_run(r.interrupted, r.errors),
        None => Outcome::of_run(res.interrupted, res.errors.count),
    };
    let doc = Document::Sim(Headed::new(header, res)).with_ranks(ranks.map(Ranks::Solo));
    finish(doc, ctx, Ending::new(s.out.output, outcome, Some(&s.save)))
}
