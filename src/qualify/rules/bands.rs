//! A figure against a table's bands: the reason it gets, and the figures
//! as the reasons write them.

use super::super::reason::{Level, Reason};
use super::super::thresholds::Band;
use crate::guidance::RuleId;
use crate::verdict::Role;

pub(super) fn ms(us: f64) -> String {
    let m = us / 1000.0;
    if m >= 10.0 {
        format!("{m:.1} ms")
    } else {
        format!("{m:.2} ms")
    }
}

/// The reason for a latency of `m` ms against `limits`, worst first: the
/// first limit it is above decides the level and source; below them all it
/// passed ([`Level::Pass`], against the lowest limit). `None` without limits.
pub(super) fn banded(
    role: Role,
    rule: RuleId,
    m: f64,
    measured: String,
    what: &str,
    limits: &[Band],
) -> Option<Reason> {
    if let Some(&(limit, level, source)) = limits.iter().find(|(limit, _, _)| m > *limit) {
        return Some(Reason::new(
            role,
            level,
            rule,
            measured,
            format!("above {limit} ms{what}"),
            source,
        ));
    }
    // Passed: the lowest band is the one it would have broken first.
    let &(limit, _, source) = limits.last()?;
    Some(Reason::new(
        role,
        Level::Pass,
        rule,
        measured,
        format!("at or below {limit} ms{what}"),
        source,
    ))
}
