//! `iosim sweep`: vary parameters, repeat, find the knee.

use super::finish::{finish, Ending, OutFile};
use super::{save, Ctx};
use crate::cli::SweepArgs;
use crate::document::{Document, Headed, Header};
use crate::outcome::Outcome;
use crate::sweep::{self, studies, Combine, SweepPlan};

/// Runs the sweep (or lists the studies), prints and saves it.
pub fn run(a: &SweepArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    if a.list_studies {
        for s in studies::all() {
            writeln!(
                ctx.out,
                "{:<22}{}\n{:<22}iosim sweep FILE {}",
                s.name, s.about, "", s.sweep_line
            )?;
        }
        return Ok(Outcome::Success);
    }
    if let Some(p) = &a.csv {
        // Refused before the sweep, not after it.
        crate::outfile::check(p, "CSV table")?;
    }
    let mut base = a.run.to_spec()?;
    // Run on the rank's paths; the document names them as the command line did.
    let named: Vec<std::path::PathBuf> = base.targets.iter().map(|t| t.path.clone()).collect();
    for t in &mut base.targets {
        t.path = ctx.for_rank(&t.path);
    }
    let (explicit, study) = match &a.study {
        Some(name) => {
            let s = studies::find(name).ok_or_else(|| {
                anyhow::anyhow!("no built-in study '{name}': see iosim sweep --list-studies")
            })?;
            base.rw = s.rw;
            base.write_pct = s.rw.default_write_pct();
            base.bs = s.bs;
            (s.to_points(), Some(s.name.to_string()))
        }
        None => (Vec::new(), None),
    };
    if a.vary.is_empty() && explicit.is_empty() {
        anyhow::bail!(
            "nothing to sweep: give --vary PARAM=VALUES (e.g. --vary qd=1..64x2) or --study NAME"
        );
    }
    let plan = SweepPlan {
        base,
        axes: a.vary.clone(),
        explicit,
        combine: if a.zip { Combine::Zip } else { Combine::Grid },
        repeat: a.repeat,
        max_latency_us: a.max_latency,
        use_p99: a.p99,
        knee_threshold: a.knee_threshold,
        study,
        max_repeats: crate::sweep::analysis::MAX_DECIDING_REPEATS.max(a.repeat),
    };
    let baseline = save::Baseline::resolve_sweep(&a.run.save.db, &a.run.guard, ctx.is_root())?;
    let opts = ctx.run_options(&a.run.out, a.run.interval);
    let header = Header::now();
    let mut res = sweep::run(&plan, &opts, |_, _, _| {})?;
    for (t, path) in res.base.targets.iter_mut().zip(named) {
        t.path = path;
    }
    // A sweep keeps no I/O error counts of its points.
    let mut end = Ending::new(
        a.run.out.output,
        Outcome::of_run(res.interrupted, 0),
        Some(&a.run.save),
    );
    end.baseline = baseline.as_ref();
    if let Some(path) = &a.csv {
        end.files
            .push(OutFile::new(path.clone(), "CSV table", sweep::csv(&res)));
    }
    finish(Document::Sweep(Headed::new(header, res)), ctx, end)
}
