//! `iosim replay TRACE TARGET`.

use super::finish::{finish, Ending};
use super::Ctx;
use crate::cli::replay::ReplayArgs;
use crate::document::{Document, Headed, Header};
use crate::outcome::Outcome;
use crate::replay::{ReplayConfig, Timing};

/// Reads the trace, replays it, prints and saves the result.
pub fn run(a: &ReplayArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let trace = crate::replay::load(&a.trace, a.events)?;
    let cfg = ReplayConfig {
        target: a.target.clone(),
        size: a.size,
        trace_offset: a.trace_offset,
        map: a.map,
        timing: if a.afap {
            Timing::Afap
        } else {
            Timing::Speed(a.speed)
        },
        qd: a.qd,
        engine: a.engine,
        cache: a.cache,
        allow_destroy: a.allow_destroy,
        progress: !a.out.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()),
    };
    if !a.out.quiet {
        crate::say!(
            "iosim: replaying {} I/Os ({:.1} s traced) from {} onto {}",
            trace.ios.len(),
            trace.duration_ns() as f64 / 1e9,
            a.trace.display(),
            a.target.display()
        );
    }
    // `--metrics-listen`: the target's device counters, until this returns.
    let served = a.metrics.serve("replay", a.out.quiet)?;
    if let Some(s) = &served {
        s.live().watch_targets([a.target.as_path()]);
    }
    let header = Header::now();
    let res = crate::replay::replay(&trace, &cfg, &ctx.stop)?;
    let outcome = Outcome::of_run(res.interrupted, res.errors);
    let end = Ending::new(a.out.output, outcome, Some(&a.save));
    finish(Document::Replay(Headed::new(header, res)), ctx, end)
}
