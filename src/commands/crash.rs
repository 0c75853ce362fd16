//! `iosim crash write|verify`: the crash-consistency test (docs/crash.md).

use super::finish::{finish, Ending};
use super::Ctx;
use crate::cli::crash::{CrashAction, CrashArgs, CrashCache};
use crate::cli::OutputFormat;
use crate::crash::acklog::StopReason;
use crate::crash::{check, writer};
use crate::document::{Document, Headed, Header};
use crate::outcome::Outcome;
use crate::workload::CacheMode;

/// Runs `iosim crash write` or `iosim crash verify`. A FAIL verdict ends as
/// [`Outcome::IoErrors`] (exit status 3), an INCOMPLETE one (a damaged
/// acknowledgement log) as [`Outcome::Incomplete`] (5).
pub fn run(a: &CrashArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let stop = ctx.stop.clone();
    match &a.action {
        CrashAction::Write(w) => {
            let (mix, profile) = match &w.profile {
                Some(name) => {
                    let p = crate::profile::Profile::load(name)?;
                    let pm = crate::crash::profile::mix_of(&p)?;
                    if !w.quiet {
                        for line in &pm.mapping {
                            crate::say!("iosim crash write: profile {}: {line}", p.name);
                        }
                    }
                    (pm.mix, Some(p.name))
                }
                None => (w.mix, None),
            };
            let cfg = writer::WriteConfig {
                targets: w.targets.clone(),
                size: w.size,
                log_size: w.log_size,
                mix,
                profile,
                sync_batch: w.sync_batch,
                direct: w.cache == CrashCache::Direct,
                duration: w.duration,
                torn_protection: w.torn_protection,
                allow_destroy: w.allow_destroy,
                seed: w.seed,
                acks: w.acks.clone(),
                force: w.force,
                quiet: w.quiet,
            };
            // `--metrics-listen`: the targets' device counters, until the writer stops.
            let served = w.metrics.serve("crash write", w.quiet)?;
            if let Some(m) = &served {
                m.live()
                    .watch_targets(w.targets.iter().map(|p| p.as_path()));
            }
            let s = writer::run(&cfg, &stop)?;
            if !w.quiet {
                crate::say!(
                    "iosim crash write: stopped ({}) after {:.1} s: {} writes acknowledged (dsync {}, fdatasync {}, fsync {}, log {})",
                    s.reason,
                    s.secs,
                    s.acked.iter().sum::<u64>(),
                    s.acked[0],
                    s.acked[1],
                    s.acked[2],
                    s.acked[3]
                );
            }
            Ok(if s.reason == StopReason::Interrupted {
                Outcome::Interrupted
            } else {
                Outcome::Success
            })
        }
        CrashAction::Verify(v) => {
            if v.output == OutputFormat::Csv {
                anyhow::bail!(
                    "iosim crash verify prints text or json: use --output text or --output json"
                );
            }
            let cache = match v.cache {
                CrashCache::Direct => CacheMode::Direct,
                CrashCache::Buffered => CacheMode::Buffered,
            };
            let header = Header::now();
            let res = check::verify(&v.targets, &v.acks, cache, &stop)?;
            let outcome = if res.passed() {
                Outcome::Success
            } else if res.incomplete() {
                Outcome::Incomplete
            } else {
                Outcome::IoErrors
            };
            let end = Ending::new(v.output, outcome, Some(&v.save));
            finish(Document::Crash(Headed::new(header, res)), ctx, end)
        }
    }
}
