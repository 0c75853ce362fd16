//! Steady state before measuring: the round loop of `iosim run
//! --steady-state` and the `iosim precondition` command (SNIA PTS: write
//! the region twice sequentially, then random writes until steady state).

use std::time::Duration;

use super::{Ctx, Outcome};
use crate::cli::precondition::PreconditionArgs;
use crate::runner::RunOptions;
use crate::workload::steady::{self, SteadyReport, SteadySpec};
use crate::workload::{RwMode, TargetSpec, WorkloadSpec};

/// Runs rounds of `spec` (its duration replaced by the round length) until
/// the criterion holds or the rounds run out. Each round is a full run, so
/// its value is measured exactly as the final result will be.
pub fn reach(
    spec: &WorkloadSpec,
    ss: &SteadySpec,
    opts: &RunOptions,
) -> anyhow::Result<SteadyReport> {
    let mut round_spec = spec.clone();
    round_spec.duration = ss.round;
    round_spec.warmup = Duration::ZERO;
    round_spec.io_limit = None;
    round_spec.shape.steady_state = None;
    let round_opts = RunOptions {
        progress: false,
        ..opts.clone()
    };
    steady::reach(ss, |i| {
        let res = crate::runner::run(&round_spec, &round_opts)?;
        if res.interrupted {
            return Ok(None);
        }
        let v = ss.metric.of(&res.total.total);
        if opts.progress {
            crate::say!(
                "steady state: round {} {} = {v:.1}",
                i + 1,
                ss.metric.name()
            );
        }
        Ok(Some(v))
    })
}

/// `iosim precondition TARGET`. A failure after it created the target
/// removes it (and says so); a target that existed before is kept.
pub fn run(a: &PreconditionArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let existed = a.target.symlink_metadata().is_ok();
    precondition(a, ctx).map_err(|e| {
        if !existed
            && crate::target::is_iosim_file(&a.target)
            && crate::targetlock::remove_file(&a.target).is_ok()
        {
            return crate::target::with_outcome(e, crate::target::FileFate::Removed, &a.target);
        }
        e
    })
}

fn precondition(a: &PreconditionArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let progress = !a.quiet;
    let opts = RunOptions {
        progress: false,
        stop: ctx.stop.clone(),
        interval: Duration::from_secs(1),
        sync: None,
        thread_series: false,
        verify: None,
        metrics: None,
        hist_log: None,
    };
    // Pass 1 and 2: the whole region, sequentially, twice (128 KiB writes, as PTS).
    let seq_bs = 128 << 10;
    let mut seq = WorkloadSpec {
        targets: vec![TargetSpec::new(a.target.clone(), a.size)],
        rw: RwMode::Write,
        write_pct: 100,
        bs: seq_bs,
        qd: a.qd,
        duration: Duration::from_secs(7 * 24 * 3600),
        allow_destroy: a.allow_destroy,
        ..WorkloadSpec::default()
    };
    let region = region_len(&a.target, a.size)?;
    seq.io_limit = Some((2 * region / seq_bs).max(1));
    seq.validate()?;
    // Both workloads are checked before anything is written.
    let rand = WorkloadSpec {
        rw: RwMode::Randwrite,
        bs: a.bs,
        io_limit: None,
        passes: None,
        duration: a.steady_state.round,
        ..seq.clone()
    };
    rand.validate()?;
    if progress {
        crate::say!(
            "precondition: writing {} twice sequentially",
            crate::units::format_size(region)
        );
    }
    let r = crate::runner::run(&seq, &opts)?;
    if r.interrupted {
        writeln!(
            ctx.out,
            "precondition interrupted during the sequential passes"
        )?;
        return Ok(Outcome::of_run(true, r.errors.count));
    }
    let rep = reach(&rand, &a.steady_state, &RunOptions { progress, ..opts })?;
    writeln!(
        ctx.out,
        "sequential passes: {} written at {:.1} MiB/s",
        crate::units::format_size(r.total.write.bytes),
        r.total.write.mib_per_sec
    )?;
    writeln!(ctx.out, "{}", rep.line())?;
    // Not reaching steady state is a finding, printed above, not a failure.
    Ok(Outcome::of_run(rep.interrupted, 0))
}

/// Bytes the passes cover: the file's or device's size, or the size to create.
fn region_len(path: &std::path::Path, size: Option<u64>) -> anyhow::Result<u64> {
    let existing = match std::fs::File::open(path) {
        Ok(f) => {
            let m = f.metadata()?;
            if m.file_type().is_file() {
                m.len()
            } else {
                crate::target::device_size(&f)?
            }
        }
        Err(_) => 0,
    };
    match (existing.max(size.unwrap_or(0)), size) {
        (0, None) => anyhow::bail!(
            "'{}' does not exist: give --size to create it (e.g. --size 10G)",
            path.display()
        ),
        (n, _) => Ok(n),
    }
}
