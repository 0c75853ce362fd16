//! The rules about what around the storage can make its numbers describe
//! something else: a cache that holds the test file, a noisy neighbour.

use super::super::facts::{CacheFact, NeighbourFact};
use super::super::reason::{Level, Reason};
use super::super::sources::{MARKS_CACHE, SELF_CHECK};
use super::super::thresholds::NEIGHBOUR_P99_FACTOR;
use crate::guidance::RuleId;
use crate::verdict::Role;

/// The warning for a test file (or device) a cache can hold, when it fires.
pub(super) fn cache_reason(role: Role, c: &CacheFact) -> Option<Reason> {
    let (_, what) = c.fires()?;
    Some(Reason::new(
        role,
        Level::Warning,
        RuleId::CacheSizedTest,
        format!(
            "{} of {}",
            if c.device { "device" } else { "test file" },
            crate::units::format_size(c.size)
        ),
        format!("smaller than {what}: the numbers may describe a cache, not the disks"),
        MARKS_CACHE,
    ))
}

/// The noisy-neighbour rule (pass or warning); none without a p99 alone.
pub(super) fn neighbour_reason(role: Role, n: &NeighbourFact) -> Option<Reason> {
    let x = n.together_p99_us / n.alone_p99_us.max(f64::MIN_POSITIVE);
    let hit = x >= NEIGHBOUR_P99_FACTOR;
    (n.alone_p99_us > 0.0).then(|| Reason::new(
        role,
        if hit { Level::Warning } else { Level::Pass },
        RuleId::NeighbourImpact,
        format!(
            "p99 of 8 KiB page reads {:.2} ms beside {} against {:.2} ms alone (x{x:.1}), IOPS {:+.0}%",
            n.together_p99_us / 1000.0,
            n.spec,
            n.alone_p99_us / 1000.0,
            n.iops_pct
        ),
        if hit {
            format!(
                "a p99 {NEIGHBOUR_P99_FACTOR:.0}x or more beside a neighbour: the storage does not keep this workload apart from others sharing it"
            )
        } else {
            format!("a p99 under {NEIGHBOUR_P99_FACTOR:.0}x its own beside a neighbour")
        },
        SELF_CHECK,
    ))
}
