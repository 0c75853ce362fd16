//! The latency rules: each latency-bound workload's mean and tail against
//! the table, and the mean at the queue-depth sweep's knee.

use super::super::facts::{KneeFact, LatencyFact, TailFact};
use super::super::reason::{Level, Reason};
use super::super::thresholds::{RuleTable, MIN_IOS_P99, MIN_IOS_P999};
use super::bands::{banded, ms};
use crate::guidance::RuleId;
use crate::verdict::{Direction, Role};

fn dir(d: Direction) -> &'static str {
    match d {
        Direction::Read => "read",
        Direction::Write => "write",
    }
}

/// The mean-latency rule of each latency-bound workload: the log's writes
/// against the log's band, the other roles' I/O against the data's.
pub(super) fn latency_reasons(role: Role, latency: &[LatencyFact], t: &RuleTable) -> Vec<Reason> {
    let mut r = Vec::new();
    for l in latency {
        let m = l.mean_us / 1000.0;
        let measured = format!("{} {} mean {}", l.what, dir(l.direction), ms(l.mean_us));
        if role == Role::Log {
            if l.direction != Direction::Write {
                continue;
            }
            r.extend(banded(
                role,
                RuleId::LogLatency,
                m,
                measured,
                " for log writes",
                t.log_mean,
            ));
        } else {
            r.extend(banded(
                role,
                RuleId::DataLatency,
                m,
                measured,
                "",
                t.data_mean,
            ));
        }
    }
    r
}

/// The worst tail reason of one latency-bound workload: its p99, p99.9 or
/// maximum against the table, a failure before a warning before a pass,
/// p99 before p99.9 before the maximum (one line per workload, the most
/// telling; a workload that passed them all shows its p99).
pub(super) fn tail_reason(role: Role, f: &TailFact, t: &RuleTable) -> Option<Reason> {
    let (p99, p999) = if role == Role::Log {
        (t.log_p99, t.log_p999)
    } else {
        (t.data_p99, t.data_p999)
    };
    let stats = [
        (
            RuleId::TailP99,
            "p99",
            f.p99_us,
            p99,
            f.ios >= MIN_IOS_P99,
            " (1 I/O in 100)",
        ),
        (
            RuleId::TailP99_9,
            "p99.9",
            f.p999_us,
            p999,
            f.ios >= MIN_IOS_P999,
            " (1 I/O in 1000)",
        ),
        (
            RuleId::TailMax,
            "max",
            f.max_us,
            t.max,
            f.ios > 0,
            " (the slowest I/O)",
        ),
    ];
    let mut found: Vec<(Level, Reason)> = Vec::new();
    for (rule, label, us, bands, judged, what) in stats {
        if !judged {
            continue;
        }
        let measured = format!("{} {label} {}", f.what, ms(us));
        if let Some(x) = banded(role, rule, us / 1000.0, measured, what, bands) {
            found.push((x.level, x));
        }
    }
    // The first of the worst level: max_by_key keeps the last of equals.
    found.reverse();
    found.into_iter().max_by_key(|x| x.0).map(|x| x.1)
}

/// The mean latency at the queue-depth sweep's knee, against the data's band.
pub(super) fn knee_reason(role: Role, k: &KneeFact, t: &RuleTable) -> Option<Reason> {
    let m = k.mean_us / 1000.0;
    let measured = format!(
        "mean latency at the sweep's knee ({}={}, {:.0} IOPS) {}",
        k.param,
        k.at,
        k.iops,
        ms(k.mean_us)
    );
    banded(role, RuleId::KneeLatency, m, measured, "", t.data_mean)
}
