//! The stall and error rules: I/Os over 1 s and 15 s in the measurements
//! and the simulator's, I/O errors, and the simulator's page checks.

use super::super::facts::{RoleFacts, SimSlowFact, SlowFact};
use super::super::reason::{Level, Reason};
use super::super::sources::{MS_833, MS_IO, SQLIOSIM};
use super::bands::ms;
use crate::dbms::{Dbms, Guidance};
use crate::guidance::RuleId;
use crate::verdict::Role;

fn secs(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else {
        ms(us)
    }
}

/// The slow- and stalled-I/O reasons: over 15 s fails (SQL Server's error
/// 833), over 1 s warns (Microsoft: such systems need optimization); the
/// simulator's the same, with its long-I/O monitor.
pub(super) fn slow_reasons(dbms: Dbms, role: Role, m: &SlowFact, sim: &SimSlowFact) -> Vec<Reason> {
    let mut r = Vec::new();
    let slowest = || {
        format!(
            "slowest {}{}",
            secs(m.max_us),
            if m.max_in.is_empty() {
                String::new()
            } else {
                format!(", in {}", m.max_in)
            }
        )
    };
    if m.over_15s > 0 {
        r.push(Reason::new(
            role,
            Level::Fail,
            RuleId::StalledIo,
            format!(
                "{} I/O(s) over 15 s in the measurements on this location ({})",
                m.over_15s,
                slowest()
            ),
            if dbms.guidance() == Guidance::RulesTable {
                "any I/O over 15 s: SQL Server logs error 833 for it".into()
            } else {
                "any I/O over 15 s: a stalled I/O (SQL Server's error 833 threshold)".into()
            },
            MS_833,
        ));
    } else if m.over_1s > 0 {
        r.push(Reason::new(
            role,
            Level::Warning,
            RuleId::SlowIo,
            format!(
                "{} I/O(s) over 1 s in the measurements on this location ({})",
                m.over_1s,
                slowest()
            ),
            "any I/O over 1 s: a stall the database's users wait for".into(),
            MS_IO,
        ));
    } else if m.max_us > 0.0 {
        r.push(Reason::new(
            role,
            Level::Pass,
            RuleId::SlowIo,
            format!(
                "no I/O over 1 s in the measurements on this location ({})",
                slowest()
            ),
            "none over 1 s".into(),
            MS_IO,
        ));
    }
    if sim.over_15s > 0 || sim.long_io_warnings > 0 {
        let measured = if sim.over_15s > 0 {
            format!(
                "the simulator saw {} I/O(s) over 15 s on this location's file (slowest {})",
                sim.over_15s,
                secs(sim.max_us)
            )
        } else {
            format!(
                "the simulator warned {} time(s) that I/O requests were outstanding for more than 15 s",
                sim.long_io_warnings
            )
        };
        r.push(Reason::new(
            role,
            Level::Fail,
            RuleId::SimLongIo,
            measured,
            "any I/O over 15 s (SQLIOSim's long-I/O warning; SQL Server error 833)".into(),
            SQLIOSIM,
        ));
    } else if sim.over_1s > 0 {
        r.push(Reason::new(
            role,
            Level::Warning,
            RuleId::SimSlowIo,
            format!(
                "the simulator saw {} I/O(s) over 1 s on this location's file (slowest {})",
                sim.over_1s,
                secs(sim.max_us)
            ),
            "any I/O over 1 s: a stall the database's users wait for".into(),
            MS_IO,
        ));
    }
    r
}

/// The I/O-error rule (always judged) and the simulator's checks (when it
/// completed a cycle, or found errors).
pub(super) fn error_reasons(role: Role, f: &RoleFacts, sim_completed: Option<bool>) -> Vec<Reason> {
    // Any error fails the rule; none passes it.
    let judged = |rule, count: u64, measured: String, (broken, passed): (&str, &str)| {
        let (level, limit) = if count > 0 {
            (Level::Fail, broken)
        } else {
            (Level::Pass, passed)
        };
        Reason::new(role, level, rule, measured, limit.into(), SQLIOSIM)
    };
    let mut r = vec![judged(
        RuleId::IoErrors,
        f.io_errors,
        format!("{} I/O errors", f.io_errors),
        ("any I/O error", "none allowed"),
    )];
    if f.sim_errors > 0 || sim_completed == Some(true) {
        r.push(judged(
            RuleId::SimErrors,
            f.sim_errors,
            format!(
                "simulator found {} errors in this location's files",
                f.sim_errors
            ),
            (
                "any error in the page or log checks",
                "none allowed in the page or log checks",
            ),
        ));
    }
    r
}
