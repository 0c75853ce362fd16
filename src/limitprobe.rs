//! The held-back probe of a rate limit `iosim run` named (issue 37): a
//! flat stretch whose latency is the queue over the ceiling can be a cap
//! (a cgroup throttle, a provisioned volume) or a device at its own limit
//! for that load. A short run of the same workload at twice the queue
//! depth tells them apart: a cap holds the same rate there, a device that
//! still had room goes past it. Run only when a limit was named, so an
//! unthrottled run pays nothing; its figures go to the result's
//! `changes.probe`, a refuted limit is dropped with a note, a confirmed
//! one's warning says so (docs/changes.md).

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::changes::Probe;
use crate::runner::{RunOptions, RunResult};
use crate::sysmon::check::WarningCode;
use crate::workload::WorkloadSpec;

/// How long the probe measures.
pub const PROBE_TIME: Duration = Duration::from_secs(2);

/// Run before the probe's measured window, not counted: the burst a token
/// bucket lets through before it holds its rate.
pub const PROBE_WARMUP: Duration = Duration::from_secs(1);

/// Most I/Os in flight per thread a probe asks for.
const MAX_PROBE_QD: u32 = 4096;

/// Probes the last rate limit `result` (a run of `spec`) named, and
/// records what the probe found in `result`. Nothing is probed when no
/// limit was named, the run was stopped, or its threads were paced
/// (`--rate-iops`, `--think`, `--burst-every`: never judged a limit).
pub fn check(spec: &WorkloadSpec, result: &mut RunResult, opts: &RunOptions) -> anyhow::Result<()> {
    let Some(limit) = result.changes.rate_limits.last().cloned() else {
        return Ok(());
    };
    if result.interrupted || spec.paced() || opts.stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    let qd = spec.qd.saturating_mul(2).min(MAX_PROBE_QD);
    if qd <= spec.qd {
        return Ok(());
    }
    if opts.progress {
        crate::say!(
            "iosim: the run named a rate limit ({}); probing it at {} I/Os in flight for {} s",
            limit.level(),
            u64::from(qd) * u64::from(spec.threads.max(1)),
            PROBE_TIME.as_secs()
        );
    }
    let mut probe_spec = spec.clone();
    probe_spec.qd = qd;
    probe_spec.duration = PROBE_TIME;
    // A token bucket lets a burst through when the probe starts (its first
    // 250 ms ran at 4,368 IOPS under a 2,000 IOPS throttle): unmeasured.
    probe_spec.warmup = PROBE_WARMUP;
    probe_spec.shape.steady_state = None;
    let probe_opts = RunOptions {
        progress: false,
        thread_series: false,
        verify: None,
        metrics: None,
        hist_log: None,
        ..opts.clone()
    };
    let r = match crate::runner::run(&probe_spec, &probe_opts) {
        Ok(r) => r,
        Err(e) if crate::runner::stopped_before_window(&e, &probe_opts) => return Ok(()),
        Err(e) => return Err(e.context("the probe of the rate limit the run named")),
    };
    if r.interrupted || r.total.total.ios == 0 {
        return Ok(());
    }
    let t = &r.total;
    let mut p = Probe {
        outstanding: f64::from(qd) * f64::from(spec.threads.max(1)),
        duration_s: r.duration_s,
        iops: t.total.iops,
        read_iops: t.read.iops,
        write_iops: t.write.iops,
        mib_per_sec: t.total.mib_per_sec,
        refuted: false,
    };
    p.refuted = p.refutes(&limit);
    let outstanding = p.outstanding;
    if p.refuted {
        result.changes.rate_limits.clear();
        result
            .warnings
            .retain(|w| w.code != WarningCode::RateLimited);
        result.notes.push(format!(
            "a rate limit at {} was named, but a {:.0} s probe at {outstanding:.0} I/Os in flight reached {}: a limit cannot be passed, so the flat stretch was this device at its own limit for the run's load, not a cap",
            limit.level(),
            p.duration_s,
            p.figure(&limit)
        ));
    } else {
        // Under the limit by more than the margin: not past it, so the limit
        // stands, but the probe did not show the same rate again.
        let what = if p.reached(&limit) {
            "held the same rate"
        } else {
            "stayed under it"
        };
        for w in result
            .warnings
            .iter_mut()
            .filter(|w| w.code == WarningCode::RateLimited)
        {
            w.message.push_str(&format!(
                " A {:.0} s probe at {outstanding:.0} I/Os in flight {what} ({}): confirmed.",
                p.duration_s,
                p.figure(&limit)
            ));
        }
    }
    result.changes.probe = Some(p);
    Ok(())
}
