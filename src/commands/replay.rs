//! `iosim replay TRACE TARGET`.

use super::{save, Ctx};
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
        eprintln!(
            "iosim: replaying {} I/Os ({:.1} s traced) from {} onto {}",
            trace.ios.len(),
            trace.duration_ns() as f64 / 1e9,
            a.trace.display(),
            a.target.display()
        );
    }
    let header = Header::now();
    let res = crate::replay::replay(&trace, &cfg, &ctx.stop)?;
    let outcome = Outcome::of_run(res.interrupted, res.errors);
    let doc = Document::Replay(Headed::new(header, res));
    let text = crate::document::render(&doc, a.out.output)?;
    // A reader that went away (| head) does not lose the result: it is still saved.
    let printed = ctx.out.write_all(text.as_bytes());
    save::save_result(&a.save, &doc);
    printed?;
    Ok(outcome)
}
