//! The flush rules: which roles' flushes are judged, by the database's own
//! targets or as a commit's flush against the log's band, and the warning
//! for flushes the runner did not time.

use super::super::facts::{FlushFact, RoleFacts, TailFact};
use super::super::reason::{Level, Reason};
use super::super::sources::SELF_CHECK;
use super::super::thresholds::{RuleTable, MIN_IOS_P99};
use super::bands::{banded, ms};
use super::latency::tail_reason;
use crate::dbms::Dbms;
use crate::guidance::RuleId;
use crate::verdict::Role;

/// A role's flushes are judged: the log's (a commit waits for them) and
/// those a database has a target of its own for (etcd's backend commits);
/// a data file's other flushes are background writeback, judged only when
/// they stall.
pub fn flushes_judged(dbms: Dbms, role: Role) -> bool {
    role == Role::Log || dbms.flushes().targets().iter().any(|t| t.role == role)
}

/// The flush rules of a role whose flushes are judged ([`flushes_judged`]):
/// each timed workload's, then a warning for those the runner did not time.
pub(super) fn judged_flush_reasons(dbms: Dbms, f: &RoleFacts, t: &RuleTable) -> Vec<Reason> {
    let role = f.role;
    let mut r = Vec::new();
    for fl in &f.flushes {
        r.extend(flush_reasons(dbms, role, fl, t));
    }
    if !f.flush_untimed.is_empty() {
        r.push(Reason::new(
            role,
            Level::Warning,
            RuleId::FlushNotMeasured,
            format!(
                "{}: flushes asked for, not timed by this iosim's runner",
                f.flush_untimed.join(", ")
            ),
            "the rules about this location's flushes (commit latency) were not judged: qualify again with an iosim whose runner times flushes".into(),
            SELF_CHECK,
        ));
    }
    r
}

/// The reasons of one workload's flushes on a role whose flushes are judged
/// ([`flushes_judged`]): etcd's own targets, or for the other databases the
/// mean against the log's band and the tail as a log write's.
fn flush_reasons(dbms: Dbms, role: Role, f: &FlushFact, t: &RuleTable) -> Vec<Reason> {
    let what = format!("{} {}", f.what, f.kind.name());
    // With too few flushes for a p99 the slowest stands for it.
    let (label, us) = if f.ios >= MIN_IOS_P99 {
        ("p99", f.p99_us)
    } else {
        ("max", f.max_us)
    };
    let measured = format!(
        "{what} {label} {} ({} flushes{})",
        ms(us),
        f.ios,
        if f.ios >= MIN_IOS_P99 {
            ""
        } else {
            ": too few for a p99, the slowest stands for it"
        }
    );
    if let Some(x) = dbms.flushes().targets().iter().find(|x| x.role == role) {
        return banded(role, x.rule.clone(), us / 1000.0, measured, x.why, x.limits)
            .into_iter()
            .collect();
    }
    let mut r: Vec<Reason> = banded(
        role,
        RuleId::FlushLatency,
        f.mean_us / 1000.0,
        format!("{what} mean {}", ms(f.mean_us)),
        " for a commit's flush",
        t.log_mean,
    )
    .into_iter()
    .collect();
    r.extend(tail_reason(
        Role::Log,
        &TailFact {
            what,
            ios: f.ios,
            p99_us: f.p99_us,
            p999_us: f.p999_us,
            max_us: f.max_us,
        },
        t,
    ));
    r
}
