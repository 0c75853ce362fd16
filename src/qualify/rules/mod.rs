//! The qualification's verdict rules: measured facts in, one verdict per role
//! and overall out, each reason one line with the figure, the rule and its
//! public source (docs/references.md; [`SOURCES`] lists them all, for the
//! report's references), plus recommendations computed from the
//! measurements.
//!
//! The rules are pure functions of [`Facts`], so each one is tested on fixed
//! data (firing and not firing) without measuring anything.
//!
//! | rule | applies to | warning | NOT FIT | source |
//! |---|---|---|---|---|
//! | `data-latency` | mean latency of the latency-bound data/tempdb workloads (OLTP 8 KiB pages, tempdb pages) | above 10 ms | above 20 ms | [Randal], [DiskSpd-SQL] |
//! | `log-latency` | mean write latency of the log workloads (commits, log blocks) | above 2 ms | above 4 ms | [Log-vs-data], [MS-2012] |
//! | `knee-latency` | mean latency at the queue-depth sweep's knee (deep-queue work is judged there, not by its queueing mean) | above 10 ms | above 20 ms | [Randal], [DiskSpd-SQL] |
//! | `deep-throughput` | throughput of a deep-queue workload (read-ahead, backup, restore, bulk) against the location's own sequential corner | below half of it | - | [DiskSpd-SQL] |
//! | `tail-p99`, `tail-p99.9`, `tail-max` | p99, p99.9 and maximum latency of the latency-bound workloads (the worst one of a workload is reported) | see [`RuleTable`] | see [`RuleTable`] | [Randal], [DiskSpd-SQL] |
//! | `slow-io` | I/Os over 1 s in any measurement on the role's location | any | - | [MS-IO] |
//! | `stalled-io` | I/Os over 15 s in any measurement on the role's location | - | any | [MS-833] |
//! | `sim-slow-io` | simulator I/Os over 1 s on the role's file | any | - | [MS-IO] |
//! | `sim-long-io` | simulator I/Os over 15 s on the role's file, or its long-I/O monitor's warnings | - | any | [SQLIOSim], [MS-833] |
//! | `io-errors` | any I/O error in any run on the role's location | - | any | [SQLIOSim] |
//! | `sim-errors` | any error the simulator's page and log checks found | - | any | [SQLIOSim] |
//! | `sim-missing` | the simulator did not complete a cycle | yes | - | [SQLIOSim] |
//! | `untrusted` | a self-check says the numbers measure something else (a cache, the CPU, holes...) | yes | - | iosim self-checks |
//! | `flush-latency` | mean flush latency of the log's commits (`fsync`/`fdatasync` per commit; not SQL Server, whose log writes are write-through) | as `log-latency` | as `log-latency` | [iosim-bands] |
//! | `etcd-wal-fsync` | p99 of etcd's WAL fdatasync (the slowest with fewer than 100) | - | above 10 ms | [etcd-fio] |
//! | `etcd-backend-commit` | p99 of etcd's backend commit flush | above 25 ms | above 250 ms | [etcd-commit], [etcd-alerts] |
//! | `flush-not-measured` | a workload whose flushes a rule judges ran on a runner that did not time them | yes | - | iosim self-checks |
//! | `neighbour-impact` | `--neighbour`: p99 of 8 KiB random reads at QD 1 beside the background workload against alone | 2x or more | - | iosim self-checks |
//! | `rate-limited` | a measurement held flat at a ceiling by a rate limit in front of the device (`rate_limited`), or the queue-depth sweep's flat ceiling (docs/changes.md) | yes | - | iosim self-checks |
//!
//! Which rules and sources apply depends on the database (`--dbms`): for
//! one that publishes no latency target (PostgreSQL, MySQL/MariaDB, Oracle)
//! the latency rules cite iosim's general bands ([`GENERAL_BANDS`]) instead of
//! SQL Server's guidance; etcd's flushes are judged by its own targets. A
//! buffered read or write the page cache answers is not judged: only what
//! reaches the storage (direct I/O, O_DSYNC writes, flushes).
//!
//! The latency limits (means, tails, knee) come from one of two tables,
//! [`RuleSet::Classic`] (the default) and [`RuleSet::Flash`] (`--rules
//! flash`, stricter); the slow- and stalled-I/O counts are the same in both.
//! | `cache-sized-test` | the test file (or device) against the cache in front of the disks: under 3x `--cache-size`, or without it under this host's memory | yes | - | [Marks-cache] |

// The rules' pieces live beside this file, one concept each; they are
// re-exported here, so their users name them `rules::X`.
mod bands;
mod context;
mod flushes;
mod latency;
mod stalls;
#[cfg(test)]
mod tests;
mod throughput;

pub use super::facts::*;
pub use super::reason::*;
pub use super::sources::*;
pub use super::summary::*;
pub use super::thresholds::*;
pub use crate::guidance::RuleId;
pub use flushes::flushes_judged;

use crate::dbms::Dbms;
use crate::verdict::Role;
use context::{cache_reason, neighbour_reason};
use flushes::judged_flush_reasons;
use latency::{knee_reason, latency_reasons, tail_reason};
use stalls::{error_reasons, slow_reasons};
use throughput::throughput_reasons;

/// Judges one role by the classic table.
pub fn judge_role(f: &RoleFacts, sim_completed: Option<bool>) -> RoleVerdict {
    judge_role_with(f, sim_completed, RuleSet::Classic)
}

/// Judges one role by the table `rules`, for SQL Server.
pub fn judge_role_with(f: &RoleFacts, sim_completed: Option<bool>, rules: RuleSet) -> RoleVerdict {
    judge_role_for(f, sim_completed, rules, Dbms::SQLSERVER)
}

/// Judges one role by the table `rules` and the database's own rules.
pub fn judge_role_for(
    f: &RoleFacts,
    sim_completed: Option<bool>,
    rules: RuleSet,
    dbms: Dbms,
) -> RoleVerdict {
    let role = f.role;
    let t = rules.table();
    let mut r = latency_reasons(role, &f.latency, t);
    for tail in &f.tails {
        r.extend(tail_reason(role, tail, t));
    }
    if flushes_judged(dbms, role) {
        r.extend(judged_flush_reasons(dbms, f, t));
    }
    if let Some(k) = &f.knee {
        r.extend(knee_reason(role, k, t));
    }
    r.extend(slow_reasons(dbms, role, &f.slow, &f.sim_slow));
    r.extend(throughput_reasons(role, &f.throughput));
    r.extend(error_reasons(role, f, sim_completed));
    if sim_completed == Some(false) && matches!(role, Role::Data | Role::Log) {
        r.push(Reason::new(
            role,
            Level::Warning,
            RuleId::SimMissing,
            "the simulator did not complete a cycle".into(),
            "pages written here were not all verified".into(),
            SQLIOSIM,
        ));
    }
    r.extend(f.cache.as_ref().and_then(|c| cache_reason(role, c)));
    for (code, msg) in &f.untrusted {
        r.push(Reason::new(
            role,
            Level::Warning,
            RuleId::Untrusted,
            format!("numbers not trustworthy ({code}): {msg}"),
            "a self-check failed".into(),
            SELF_CHECK,
        ));
    }
    r.extend(f.neighbour.as_ref().and_then(|n| neighbour_reason(role, n)));
    if let Some(m) = &f.rate_limit {
        r.push(Reason::new(
            role,
            Level::Warning,
            RuleId::RateLimited,
            m.clone(),
            "the verdict describes the limit, not what the device could do without it".into(),
            SELF_CHECK,
        ));
    }
    cite_for(dbms, &mut r);
    role_verdict(role, r)
}

/// Each reason's source as `dbms` cites it ([`cite`]).
fn cite_for(dbms: Dbms, r: &mut [Reason]) {
    for x in r {
        if let Some(s) = cited_instead(dbms, &x.source_tag) {
            x.source_tag = s.tag.into();
            x.source = s.title.into();
            x.url = s.url.into();
        }
    }
}

/// A role's verdict from its reasons: the rules passed apart, the worst of
/// the others decides.
fn role_verdict(role: Role, r: Vec<Reason>) -> RoleVerdict {
    let (passed, r): (Vec<Reason>, Vec<Reason>) =
        r.into_iter().partition(|x| x.level == Level::Pass);
    let verdict = if r.iter().any(|x| x.level == Level::Fail) {
        Verdict::NotFit
    } else if r.is_empty() {
        Verdict::Fit
    } else {
        Verdict::FitWithWarnings
    };
    RoleVerdict {
        role,
        verdict,
        reasons: r,
        passed,
    }
}

/// The verdicts: per role, overall, and whether the numbers can be trusted.
pub fn judge(f: &Facts) -> (Vec<RoleVerdict>, Verdict, bool) {
    let roles: Vec<RoleVerdict> = f
        .roles
        .iter()
        .map(|r| judge_role_for(r, f.sim_completed, f.rules, f.dbms))
        .collect();
    let overall = roles
        .iter()
        .map(|r| r.verdict)
        .max()
        .unwrap_or(Verdict::Fit);
    let trustworthy = f.roles.iter().all(|r| r.untrusted.is_empty());
    (roles, overall, trustworthy)
}
