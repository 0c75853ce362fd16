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
pub use super::facts::*;
pub use super::reason::*;
pub use super::sources::*;
pub use super::summary::*;
pub use super::thresholds::*;
use crate::dbms::{Dbms, Guidance};
pub use crate::guidance::RuleId;
use crate::verdict::{Direction, Role};

fn ms(us: f64) -> String {
    let m = us / 1000.0;
    if m >= 10.0 {
        format!("{m:.1} ms")
    } else {
        format!("{m:.2} ms")
    }
}

fn dir(d: Direction) -> &'static str {
    match d {
        Direction::Read => "read",
        Direction::Write => "write",
    }
}

/// Judges one role by the classic table.
pub fn judge_role(f: &RoleFacts, sim_completed: Option<bool>) -> RoleVerdict {
    judge_role_with(f, sim_completed, RuleSet::Classic)
}

/// Judges one role by the table `rules`, for SQL Server.
pub fn judge_role_with(f: &RoleFacts, sim_completed: Option<bool>, rules: RuleSet) -> RoleVerdict {
    judge_role_for(f, sim_completed, rules, Dbms::SQLSERVER)
}

/// A role's flushes are judged: the log's (a commit waits for them) and
/// those a database has a target of its own for (etcd's backend commits);
/// a data file's other flushes are background writeback, judged only when
/// they stall.
pub fn flushes_judged(dbms: Dbms, role: Role) -> bool {
    role == Role::Log || dbms.flushes().targets().iter().any(|t| t.role == role)
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

/// The mean-latency rule of each latency-bound workload: the log's writes
/// against the log's band, the other roles' I/O against the data's.
fn latency_reasons(role: Role, latency: &[LatencyFact], t: &RuleTable) -> Vec<Reason> {
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

/// The flush rules of a role whose flushes are judged ([`flushes_judged`]):
/// each timed workload's, then a warning for those the runner did not time.
fn judged_flush_reasons(dbms: Dbms, f: &RoleFacts, t: &RuleTable) -> Vec<Reason> {
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

/// The mean latency at the queue-depth sweep's knee, against the data's band.
fn knee_reason(role: Role, k: &KneeFact, t: &RuleTable) -> Option<Reason> {
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

/// The warning for a test file (or device) a cache can hold, when it fires.
fn cache_reason(role: Role, c: &CacheFact) -> Option<Reason> {
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
fn neighbour_reason(role: Role, n: &NeighbourFact) -> Option<Reason> {
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

/// The deep-queue throughput rule of each measurement (pass or warning).
fn throughput_reasons(role: Role, throughput: &[ThroughputFact]) -> Vec<Reason> {
    let mut r = Vec::new();
    for t in throughput {
        if t.reference_mib_s <= 0.0 {
            continue;
        }
        let below = t.mib_s < DEEP_SHARE * t.reference_mib_s;
        r.push(Reason::new(
            role,
            if below { Level::Warning } else { Level::Pass },
            RuleId::DeepThroughput,
            format!("{} {:.1} MiB/s", t.what, t.mib_s),
            format!(
                "{} {:.0}% of this location's {} ({:.1} MiB/s){}",
                if below { "below" } else { "at or above" },
                DEEP_SHARE * 100.0,
                t.reference,
                t.reference_mib_s,
                if below {
                    ": the deep queue the database uses for this work loses throughput"
                } else {
                    ""
                }
            ),
            DISKSPD_SQL,
        ));
    }
    r
}

/// The I/O-error rule (always judged) and the simulator's checks (when it
/// completed a cycle, or found errors).
fn error_reasons(role: Role, f: &RoleFacts, sim_completed: Option<bool>) -> Vec<Reason> {
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

/// The worst tail reason of one latency-bound workload: its p99, p99.9 or
/// maximum against the table, a failure before a warning before a pass,
/// p99 before p99.9 before the maximum (one line per workload, the most
/// telling; a workload that passed them all shows its p99).
fn tail_reason(role: Role, f: &TailFact, t: &RuleTable) -> Option<Reason> {
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
fn slow_reasons(dbms: Dbms, role: Role, m: &SlowFact, sim: &SimSlowFact) -> Vec<Reason> {
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

/// The reason for a latency of `m` ms against `limits`, worst first: the
/// first limit it is above decides the level and source; below them all it
/// passed ([`Level::Pass`], against the lowest limit). `None` without limits.
fn banded(
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

#[cfg(test)]
mod tests {
    use super::super::recommend::recommendations;
    use super::*;
    use crate::sysmon::check::WarningCode;
    use crate::workload::FlushKind;

    fn role(role: Role) -> RoleFacts {
        RoleFacts {
            role,
            latency: vec![],
            knee: None,
            throughput: vec![],
            io_errors: 0,
            untrusted: vec![],
            sim_errors: 0,
            tails: vec![],
            slow: SlowFact::default(),
            sim_slow: SimSlowFact::default(),
            cache: None,
            flushes: vec![],
            flush_untimed: vec![],
            rate_limit: None,
            neighbour: None,
        }
    }

    fn lat(what: &str, d: Direction, ms: f64) -> LatencyFact {
        LatencyFact {
            what: what.into(),
            direction: d,
            mean_us: ms * 1000.0,
        }
    }

    fn facts(roles: Vec<RoleFacts>) -> Facts {
        Facts {
            roles,
            sim_completed: Some(true),
            sim_errors_by_class: vec![],
            log_shares_data: false,
            commit_alone_us: None,
            commit_with_data_us: None,
            rules: RuleSet::Classic,
            dbms: Dbms::SQLSERVER,
        }
    }

    fn tail(what: &str, ios: u64, p99_ms: f64, p999_ms: f64, max_ms: f64) -> TailFact {
        TailFact {
            what: what.into(),
            ios,
            p99_us: p99_ms * 1000.0,
            p999_us: p999_ms * 1000.0,
            max_us: max_ms * 1000.0,
        }
    }

    #[test]
    fn fast_storage_is_fit() {
        let mut d = role(Role::Data);
        d.latency.push(lat("oltp data-8k", Direction::Read, 0.4));
        let mut l = role(Role::Log);
        l.latency.push(lat("commit-4k", Direction::Write, 0.2));
        let (v, overall, trusted) = judge(&facts(vec![d, l]));
        assert!(v
            .iter()
            .all(|r| r.verdict == Verdict::Fit && r.reasons.is_empty()));
        assert_eq!(overall, Verdict::Fit);
        assert!(trusted);
    }

    #[test]
    fn data_latency_warns_then_fails() {
        let mut d = role(Role::Data);
        d.latency.push(lat("oltp data-8k", Direction::Read, 10.0));
        assert_eq!(
            judge_role(&d, None).verdict,
            Verdict::Fit,
            "10 ms is not above 10 ms"
        );
        d.latency[0].mean_us = 12_000.0;
        let v = judge_role(&d, None);
        assert_eq!(v.verdict, Verdict::FitWithWarnings);
        assert_eq!(v.reasons[0].source_tag, "[Randal]");
        assert!(
            v.reasons[0].line().contains("12.0 ms"),
            "{}",
            v.reasons[0].line()
        );
        d.latency[0].mean_us = 25_000.0;
        let v = judge_role(&d, None);
        assert_eq!(v.verdict, Verdict::NotFit);
        assert_eq!(v.reasons[0].rule, RuleId::DataLatency);
        assert_eq!(v.reasons[0].source_tag, "[DiskSpd-SQL]");
    }

    #[test]
    fn log_latency_judges_writes_only() {
        let mut l = role(Role::Log);
        l.latency
            .push(lat("log-writer commit-4k", Direction::Read, 30.0));
        assert_eq!(judge_role(&l, None).verdict, Verdict::Fit);
        l.latency
            .push(lat("log-writer commit-4k", Direction::Write, 1.9));
        assert_eq!(judge_role(&l, None).verdict, Verdict::Fit);
        l.latency[1].mean_us = 3_000.0;
        let v = judge_role(&l, None);
        assert_eq!(v.verdict, Verdict::FitWithWarnings);
        assert_eq!(v.reasons[0].source_tag, "[Log-vs-data]");
        l.latency[1].mean_us = 19_800.0;
        let v = judge_role(&l, None);
        assert_eq!(v.verdict, Verdict::NotFit);
        let line = v.reasons[0].line();
        assert!(line.contains("commit-4k write mean 19.8 ms"), "{line}");
        assert!(line.contains("above 4 ms"), "{line}");
        assert!(line.contains("[MS-2012]"), "{line}");
    }

    #[test]
    fn deep_queue_work_is_judged_at_the_knee_not_by_its_mean() {
        let mut d = role(Role::Data);
        // A 128-deep scan's mean is queueing by design: it is no latency fact.
        d.throughput.push(ThroughputFact {
            what: "read-ahead scan-512k".into(),
            mib_s: 900.0,
            reference: "seq read 1M QD8".into(),
            reference_mib_s: 1000.0,
        });
        d.knee = Some(KneeFact {
            param: crate::sweep::Param::Qd,
            at: 16.0,
            iops: 50_000.0,
            mean_us: 320.0,
            max_iops: 52_000.0,
            growth_after: 3.0,
            before_last: true,
            proven: true,
        });
        assert_eq!(judge_role(&d, None).verdict, Verdict::Fit);
        d.knee.as_mut().unwrap().mean_us = 21_000.0;
        let v = judge_role(&d, None);
        assert_eq!(v.verdict, Verdict::NotFit);
        assert_eq!(v.reasons[0].rule, RuleId::KneeLatency);
        d.knee.as_mut().unwrap().mean_us = 320.0;
        d.throughput[0].mib_s = 400.0;
        let v = judge_role(&d, None);
        assert_eq!(v.verdict, Verdict::FitWithWarnings);
        assert_eq!(v.reasons[0].rule, RuleId::DeepThroughput);
    }

    #[test]
    fn errors_make_a_role_not_fit() {
        let mut d = role(Role::Data);
        d.io_errors = 1;
        let v = judge_role(&d, Some(true));
        assert_eq!(v.verdict, Verdict::NotFit);
        assert_eq!(v.reasons[0].rule, RuleId::IoErrors);
        let mut d = role(Role::Data);
        d.sim_errors = 3;
        let v = judge_role(&d, Some(true));
        assert_eq!(v.verdict, Verdict::NotFit);
        assert_eq!(v.reasons[0].source_tag, "[SQLIOSim]");
        let d = role(Role::Data);
        assert_eq!(
            judge_role(&d, Some(false)).verdict,
            Verdict::FitWithWarnings
        );
        let b = role(Role::Backup);
        assert_eq!(judge_role(&b, Some(false)).verdict, Verdict::Fit);
    }

    #[test]
    fn self_check_failures_mark_numbers_untrustworthy() {
        let mut d = role(Role::Data);
        d.latency.push(lat("oltp data-8k", Direction::Read, 0.05));
        d.untrusted
            .push((WarningCode::CacheAnsweredReads, "a cache answered".into()));
        let f = facts(vec![d]);
        let (v, overall, trusted) = judge(&f);
        assert!(!trusted);
        assert_eq!(overall, Verdict::FitWithWarnings);
        assert!(v[0].reasons[0].line().contains("not trustworthy"));
        assert!(recommendations(&f)
            .iter()
            .any(|r| r.contains("not trustworthy")));
        // Two roles with the same finding: one recommendation.
        let mut l = role(Role::Log);
        l.untrusted
            .push((WarningCode::CacheAnsweredReads, "a cache answered".into()));
        let mut d = role(Role::Data);
        d.untrusted
            .push((WarningCode::CacheAnsweredReads, "a cache answered".into()));
        let r: Vec<String> = recommendations(&facts(vec![d, l]))
            .into_iter()
            .filter(|r| r.contains("not trustworthy"))
            .collect();
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(
            r[0].starts_with(
                "the numbers for data and log are not trustworthy (cache_answered_reads)"
            ),
            "{}",
            r[0]
        );
    }

    #[test]
    fn a_test_file_a_cache_can_hold_warns() {
        const G: u64 = 1 << 30;
        let mut d = role(Role::Data);
        d.cache = Some(CacheFact {
            size: G,
            device: false,
            given: None,
            host_memory: 24 * G,
        });
        let mut l = d.clone();
        l.role = Role::Log;
        let v = judge_role(&d, None);
        assert_eq!(v.verdict, Verdict::FitWithWarnings);
        let line = v.reasons[0].line();
        assert!(
            line.starts_with("test file of 1GiB: smaller than this host's memory (24GiB; no --cache-size given): the numbers may describe a cache"),
            "{line}"
        );
        assert!(line.contains("cache-sized-test [Marks-cache]"), "{line}");
        let rs = recommendations(&facts(vec![d.clone(), l]));
        assert_eq!(
            rs,
            ["qualify again with --size 24G or more: the data and log test files (1GiB each) are smaller than this host's memory (24GiB; no --cache-size given), or give the array's cache with --cache-size"]
        );
        // As large as the host's memory: no warning.
        d.cache.as_mut().unwrap().size = 24 * G;
        assert_eq!(judge_role(&d, None).verdict, Verdict::Fit);
        // The array's cache given: three times it, and the host's memory no longer counts.
        d.cache.as_mut().unwrap().given = Some(16 * G);
        let v = judge_role(&d, None);
        assert!(
            v.reasons[0]
                .limit
                .starts_with("smaller than 3x the 16GiB cache given with --cache-size"),
            "{:?}",
            v.reasons
        );
        assert_eq!(
            recommendations(&facts(vec![d.clone()])),
            ["qualify again with --size 48G or more: the data test file (24GiB) is smaller than 3x the 16GiB cache given with --cache-size"]
        );
        d.cache.as_mut().unwrap().size = 48 * G;
        assert_eq!(judge_role(&d, None).verdict, Verdict::Fit);
        d.cache.as_mut().unwrap().size = 100 << 20;
        d.cache.as_mut().unwrap().given = Some(0);
        assert_eq!(
            judge_role(&d, None).verdict,
            Verdict::Fit,
            "--cache-size 0: no cache"
        );
        // A device used whole.
        let c = CacheFact {
            size: 96 << 20,
            device: true,
            given: Some(64 << 20),
            host_memory: 0,
        };
        assert_eq!(c.fires().unwrap().0, 192 << 20);
        d.cache = Some(c);
        assert!(judge_role(&d, None).reasons[0]
            .measured
            .starts_with("device of 96MiB"));
    }

    #[test]
    fn overall_is_the_worst_role() {
        let d = role(Role::Data);
        let mut l = role(Role::Log);
        l.latency.push(lat("commit-4k", Direction::Write, 8.0));
        let (_, overall, _) = judge(&facts(vec![d, l]));
        assert_eq!(overall, Verdict::NotFit);
    }

    #[test]
    fn recommendations_come_from_the_measurements() {
        let mut d = role(Role::Data);
        d.knee = Some(KneeFact {
            param: crate::sweep::Param::Qd,
            at: 16.0,
            iops: 50_000.0,
            mean_us: 320.0,
            max_iops: 52_000.0,
            growth_after: 3.0,
            before_last: true,
            proven: true,
        });
        let mut f = facts(vec![d]);
        f.log_shares_data = true;
        f.commit_alone_us = Some(171.0);
        f.commit_with_data_us = Some(252.0);
        let rs = recommendations(&f);
        assert!(
            rs.iter()
                .any(|r| r.starts_with("the data's I/Os gain nothing past 16 outstanding I/Os: beyond it latency grows 3.0x for 4% more IOPS; SQL Server has no queue-depth setting")),
            "{rs:?}"
        );
        // Issue 37: a knee whose plateau the repetitions do not prove moves
        // with the spread between qualifications: no advice from it.
        f.roles[0].knee.as_mut().unwrap().proven = false;
        assert!(
            !recommendations(&f)
                .iter()
                .any(|r| r.contains("gain nothing")),
            "{rs:?}"
        );
        f.roles[0].knee.as_mut().unwrap().proven = true;
        assert!(rs.iter().any(|r| r == "put the log on its own device: commit latency 252 -> 171 us measured (beside data I/O -> alone)"), "{rs:?}");
        // Not firing: separate devices, a knee at the last point, similar commits.
        f.log_shares_data = false;
        f.roles[0].knee.as_mut().unwrap().max_iops = 120_000.0;
        assert!(
            recommendations(&f).is_empty(),
            "a knee far below the best is no plateau"
        );
        f.roles[0].knee.as_mut().unwrap().max_iops = 52_000.0;
        f.roles[0].knee.as_mut().unwrap().before_last = false;
        assert!(recommendations(&f).is_empty());
        f.log_shares_data = true;
        f.commit_with_data_us = Some(180.0);
        assert!(recommendations(&f).is_empty());
        f.sim_errors_by_class = vec![("torn_page".into(), 2)];
        assert!(recommendations(&f)[0].contains("2 torn_page"));
    }

    #[test]
    fn tails_of_data_pages_warn_then_fail_one_line_per_workload() {
        let mut d = role(Role::Data);
        // Issue 24: a 1.5 ms mean with a 482 ms maximum passes the classic means.
        d.latency.push(lat("oltp data-8k", Direction::Read, 1.5));
        d.tails.push(tail("oltp data-8k", 50_000, 4.0, 60.0, 482.0));
        assert_eq!(judge_role(&d, None).verdict, Verdict::Fit);
        // ... and not the flash table's maximum.
        let v = judge_role_with(&d, None, RuleSet::Flash);
        assert_eq!(v.verdict, Verdict::FitWithWarnings, "{v:?}");
        let r: Vec<&RuleId> = v.reasons.iter().map(|r| &r.rule).collect();
        assert_eq!(
            r,
            [&RuleId::DataLatency, &RuleId::TailP99_9],
            "p99.9 60 ms > 20 ms comes before the max"
        );
        // Classic p99 above 100 ms warns, above 500 ms fails.
        d.tails[0] = tail("oltp data-8k", 50_000, 150.0, 300.0, 480.0);
        let v = judge_role(&d, None);
        assert_eq!(v.verdict, Verdict::FitWithWarnings);
        assert_eq!(v.reasons.len(), 1, "one line per workload: {v:?}");
        assert_eq!(v.reasons[0].rule, RuleId::TailP99);
        let line = v.reasons[0].line();
        assert!(
            line.contains("oltp data-8k p99 150.0 ms: above 100 ms (1 I/O in 100)"),
            "{line}"
        );
        assert_eq!(v.reasons[0].source_tag, "[Randal]");
        d.tails[0] = tail("oltp data-8k", 50_000, 600.0, 700.0, 900.0);
        let v = judge_role(&d, None);
        assert_eq!(v.verdict, Verdict::NotFit);
        assert_eq!(v.reasons[0].rule, RuleId::TailP99);
        // p99.9 and the maximum warn on their own.
        d.tails[0] = tail("oltp data-8k", 50_000, 20.0, 520.0, 530.0);
        let v = judge_role(&d, None);
        assert_eq!(v.reasons[0].rule, RuleId::TailP99_9);
        d.tails[0] = tail("oltp data-8k", 50_000, 20.0, 90.0, 530.0);
        let v = judge_role(&d, None);
        assert_eq!(v.verdict, Verdict::FitWithWarnings);
        assert_eq!(v.reasons[0].rule, RuleId::TailMax);
        // Too few I/Os for a percentile: only the maximum is judged.
        d.tails[0] = tail("oltp data-8k", 50, 600.0, 600.0, 400.0);
        assert_eq!(judge_role(&d, None).verdict, Verdict::Fit);
    }

    #[test]
    fn tails_of_log_writes_have_their_own_limits() {
        let mut l = role(Role::Log);
        l.tails
            .push(tail("log-writer commit-4k", 5_000, 15.0, 40.0, 90.0));
        assert_eq!(judge_role(&l, None).verdict, Verdict::Fit);
        l.tails[0].p99_us = 25_000.0;
        let v = judge_role(&l, None);
        assert_eq!(v.verdict, Verdict::FitWithWarnings);
        assert_eq!(v.reasons[0].rule, RuleId::TailP99);
        assert_eq!(v.reasons[0].source_tag, "[DiskSpd-SQL]");
        l.tails[0].p99_us = 120_000.0;
        assert_eq!(judge_role(&l, None).verdict, Verdict::NotFit);
        // The same commits under the flash table.
        let mut l = role(Role::Log);
        l.tails
            .push(tail("log-writer commit-4k", 5_000, 3.0, 8.0, 90.0));
        assert_eq!(
            judge_role_with(&l, None, RuleSet::Flash).verdict,
            Verdict::Fit
        );
        l.tails[0].p99_us = 6_000.0;
        let v = judge_role_with(&l, None, RuleSet::Flash);
        assert_eq!(v.verdict, Verdict::FitWithWarnings);
        l.tails[0].p99_us = 21_000.0;
        assert_eq!(
            judge_role_with(&l, None, RuleSet::Flash).verdict,
            Verdict::NotFit
        );
    }

    #[test]
    fn the_flash_table_is_stricter_on_means() {
        let mut d = role(Role::Data);
        d.latency.push(lat("oltp data-8k", Direction::Read, 0.9));
        let mut l = role(Role::Log);
        l.latency.push(lat("commit-4k", Direction::Write, 0.9));
        for f in [&d, &l] {
            assert_eq!(
                judge_role_with(f, None, RuleSet::Flash).verdict,
                Verdict::Fit
            );
        }
        d.latency[0].mean_us = 3_000.0;
        l.latency[0].mean_us = 1_500.0;
        let (vd, vl) = (
            judge_role_with(&d, None, RuleSet::Flash),
            judge_role_with(&l, None, RuleSet::Flash),
        );
        assert_eq!(vd.verdict, Verdict::FitWithWarnings);
        assert_eq!(vd.reasons[0].source_tag, "[Dell-flash]");
        assert_eq!(vl.verdict, Verdict::FitWithWarnings);
        assert_eq!(vl.reasons[0].source_tag, "[Azure-PremiumV2]");
        // Fit by the classic table.
        assert_eq!(judge_role(&d, None).verdict, Verdict::Fit);
        assert_eq!(judge_role(&l, None).verdict, Verdict::Fit);
        d.latency[0].mean_us = 6_000.0;
        l.latency[0].mean_us = 2_500.0;
        assert_eq!(
            judge_role_with(&d, None, RuleSet::Flash).verdict,
            Verdict::NotFit
        );
        assert_eq!(
            judge_role_with(&l, None, RuleSet::Flash).verdict,
            Verdict::NotFit
        );
        // judge() uses the table the facts name.
        let mut f = facts(vec![d]);
        assert_eq!(judge(&f).1, Verdict::Fit);
        f.rules = RuleSet::Flash;
        assert_eq!(judge(&f).1, Verdict::NotFit);
    }

    #[test]
    fn slow_ios_warn_and_stalls_over_15_s_are_not_fit() {
        let mut d = role(Role::Data);
        assert!(judge_role(&d, None).reasons.is_empty());
        d.slow = SlowFact {
            over_1s: 3,
            over_15s: 0,
            max_us: 1_210_000.0,
            max_in: "quick rand read 4K QD32".into(),
        };
        let v = judge_role(&d, None);
        assert_eq!(v.verdict, Verdict::FitWithWarnings);
        assert_eq!(v.reasons[0].rule, RuleId::SlowIo);
        assert_eq!(v.reasons[0].source_tag, "[MS-IO]");
        assert_eq!(
            v.reasons[0].measured,
            "3 I/O(s) over 1 s in the measurements on this location (slowest 1.21 s, in quick rand read 4K QD32)"
        );
        d.slow.over_1s = 4;
        d.slow.over_15s = 1;
        d.slow.max_us = 16_000_000.0;
        let v = judge_role(&d, None);
        assert_eq!(v.verdict, Verdict::NotFit);
        assert_eq!(
            v.reasons.len(),
            1,
            "the stall, not also the slow I/Os: {v:?}"
        );
        assert_eq!(v.reasons[0].rule, RuleId::StalledIo);
        assert_eq!(v.reasons[0].source_tag, "[MS-833]");
        assert!(v.reasons[0].line().contains("error 833"));
        // Both tables count the same.
        assert_eq!(
            judge_role_with(&d, None, RuleSet::Flash).verdict,
            Verdict::NotFit
        );
    }

    #[test]
    fn the_simulators_long_ios_join_the_verdict() {
        let mut d = role(Role::Data);
        d.sim_slow = SimSlowFact {
            over_1s: 2,
            over_15s: 0,
            long_io_warnings: 0,
            max_us: 1_500_000.0,
        };
        let v = judge_role(&d, Some(true));
        assert_eq!(v.verdict, Verdict::FitWithWarnings);
        assert_eq!(v.reasons[0].rule, RuleId::SimSlowIo);
        d.sim_slow.over_15s = 1;
        d.sim_slow.max_us = 17_000_000.0;
        let v = judge_role(&d, Some(true));
        assert_eq!(v.verdict, Verdict::NotFit);
        assert_eq!(v.reasons.len(), 1);
        assert_eq!(v.reasons[0].rule, RuleId::SimLongIo);
        assert_eq!(v.reasons[0].source_tag, "[SQLIOSim]");
        assert!(v.reasons[0].measured.contains("slowest 17.00 s"), "{v:?}");
        // The monitor alone (an I/O outstanding over 15 s).
        let mut l = role(Role::Log);
        l.sim_slow.long_io_warnings = 2;
        let v = judge_role(&l, Some(true));
        assert_eq!(v.verdict, Verdict::NotFit);
        assert!(v.reasons[0].measured.contains("warned 2 time(s)"), "{v:?}");
    }

    fn flush(what: &str, ios: u64, mean_ms: f64, p99_ms: f64, max_ms: f64) -> FlushFact {
        FlushFact {
            what: what.into(),
            kind: FlushKind::Fdatasync,
            ios,
            mean_us: mean_ms * 1000.0,
            p99_us: p99_ms * 1000.0,
            p999_us: max_ms * 1000.0,
            max_us: max_ms * 1000.0,
        }
    }

    fn judge_etcd(f: &RoleFacts) -> RoleVerdict {
        judge_role_for(f, Some(true), RuleSet::Classic, Dbms::ETCD)
    }

    #[test]
    fn etcds_wal_fdatasync_p99_over_10_ms_is_not_fit() {
        let mut wal = role(Role::Log);
        // A fast WAL: p99 2.4 ms.
        wal.flushes
            .push(flush("etcd-wal wal-append", 20_000, 1.3, 2.4, 15.8));
        let v = judge_etcd(&wal);
        assert_eq!(v.verdict, Verdict::Fit, "{v:?}");
        // Issue 37, part 4: a passing rule states its figure and limit, and
        // the line cites the source by its tag alone (the references give
        // its title and address once).
        let pass = v
            .passed
            .iter()
            .find(|x| x.rule == RuleId::EtcdWalFsync)
            .unwrap_or_else(|| panic!("{v:?}"));
        assert_eq!(pass.level, Level::Pass);
        assert_eq!(
            format!("{} {}", pass.mark(), pass.line()),
            "pass etcd-wal wal-append fdatasync p99 2.40 ms (20000 flushes): at or below 10 ms: etcd's WAL needs its fdatasync's p99 under 10 ms (etcd-wal-fsync [etcd-fio])"
        );
        assert!(v
            .passed
            .iter()
            .any(|x| x.rule == RuleId::IoErrors && x.measured == "0 I/O errors"));
        assert!(v.passed.iter().all(|x| !x.line().contains("http")));
        // A slow one: p99 12 ms.
        wal.flushes[0].p99_us = 12_000.0;
        let v = judge_etcd(&wal);
        assert_eq!(v.verdict, Verdict::NotFit);
        assert_eq!(v.reasons.len(), 1, "{v:?}");
        let x = &v.reasons[0];
        assert_eq!(x.rule, RuleId::EtcdWalFsync);
        assert_eq!(x.source_tag, "[etcd-fio]");
        assert!(is_absolute(&x.url));
        assert_eq!(
            x.line().split(" (etcd-wal-fsync").next().unwrap(),
            "etcd-wal wal-append fdatasync p99 12.0 ms (20000 flushes): above 10 ms: etcd's WAL needs its fdatasync's p99 under 10 ms"
        );
        // Exactly 10 ms is under the limit ("less than" is met by equal within the histogram).
        wal.flushes[0].p99_us = 10_000.0;
        assert_eq!(judge_etcd(&wal).verdict, Verdict::Fit);
        // Too few flushes for a p99: the slowest stands for it.
        wal.flushes[0] = flush("etcd-wal wal-append", 40, 1.0, 2.0, 11.0);
        let v = judge_etcd(&wal);
        assert_eq!(v.verdict, Verdict::NotFit);
        assert!(v.reasons[0]
            .measured
            .contains("max 11.0 ms (40 flushes: too few for a p99"));
        // The same flushes on SQL Server's rules are not judged by etcd's target.
        let v = judge_role_for(&wal, Some(true), RuleSet::Classic, Dbms::SQLSERVER);
        assert!(v.reasons.iter().all(|x| x.rule != RuleId::EtcdWalFsync));
    }

    #[test]
    fn etcds_backend_commit_warns_over_25_ms_and_fails_over_250() {
        let mut backend = role(Role::Data);
        backend
            .flushes
            .push(flush("etcd-wal backend-commit", 3_000, 4.0, 20.0, 40.0));
        assert_eq!(judge_etcd(&backend).verdict, Verdict::Fit);
        backend.flushes[0].p99_us = 30_000.0;
        let v = judge_etcd(&backend);
        assert_eq!(v.verdict, Verdict::FitWithWarnings);
        assert_eq!(v.reasons[0].rule, RuleId::EtcdBackendCommit);
        assert_eq!(v.reasons[0].source_tag, "[etcd-commit]");
        backend.flushes[0].p99_us = 300_000.0;
        let v = judge_etcd(&backend);
        assert_eq!(v.verdict, Verdict::NotFit);
        assert_eq!(v.reasons[0].source_tag, "[etcd-alerts]");
        // A data file's flushes of another database are background writeback:
        // judged only when they stall.
        let v = judge_role_for(&backend, Some(true), RuleSet::Classic, Dbms::POSTGRESQL);
        assert_eq!(v.verdict, Verdict::Fit, "{v:?}");
    }

    #[test]
    fn a_databases_without_latency_targets_cite_iosims_general_bands() {
        // PostgreSQL's WAL: commit flushes judged against the log band.
        let mut wal = role(Role::Log);
        wal.flushes
            .push(flush("postgresql-oltp wal-commit", 9_000, 3.0, 6.0, 9.0));
        let v = judge_role_for(&wal, Some(true), RuleSet::Classic, Dbms::POSTGRESQL);
        assert_eq!(v.verdict, Verdict::FitWithWarnings, "{v:?}");
        assert_eq!(v.reasons[0].rule, RuleId::FlushLatency);
        assert_eq!(v.reasons[0].source_tag, "[iosim-bands]");
        assert!(v.reasons[0]
            .source
            .starts_with("iosim's general latency bands"));
        assert!(v.reasons[0].line().starts_with(
            "postgresql-oltp wal-commit fdatasync mean 3.00 ms: above 2 ms for a commit's flush"
        ));
        wal.flushes[0].mean_us = 5_000.0;
        assert_eq!(
            judge_role_for(&wal, Some(true), RuleSet::Classic, Dbms::POSTGRESQL).verdict,
            Verdict::NotFit
        );
        // MySQL's data pages (direct): the data band, cited through iosim's bands.
        let mut d = role(Role::Data);
        d.latency
            .push(lat("mysql-oltp pages-16k", Direction::Read, 12.0));
        d.slow.over_15s = 1;
        d.slow.max_us = 16e6;
        let v = judge_role_for(&d, Some(true), RuleSet::Classic, Dbms::MYSQL);
        let tags: Vec<&str> = v.reasons.iter().map(|x| x.source_tag.as_str()).collect();
        assert_eq!(tags, ["[iosim-bands]", "[iosim-bands]"], "{v:?}");
        assert!(v.reasons[1]
            .limit
            .contains("SQL Server's error 833 threshold"));
        // The same facts for SQL Server cite its own guidance.
        let v = judge_role_for(&d, Some(true), RuleSet::Classic, Dbms::SQLSERVER);
        let tags: Vec<&str> = v.reasons.iter().map(|x| x.source_tag.as_str()).collect();
        assert_eq!(tags, ["[Randal]", "[MS-833]"]);
        // Every source a database's rules cite is in its references list.
        let common = [
            RANDAL,
            DISKSPD_SQL,
            MS_IO,
            MS_2012,
            LOG_VS_DATA,
            MS_833,
            DELL_FLASH,
            AZURE_PV2,
            SQLIOSIM,
            MARKS_CACHE,
            SELF_CHECK,
        ];
        for &dbms in Dbms::ALL {
            let listed = sources_for(dbms);
            let mut cited: Vec<Source> = common.iter().map(|s| cite(dbms, *s)).collect();
            cited.extend(dbms.flushes().targets().iter().flat_map(|t| t.sources()));
            for c in cited {
                assert!(
                    listed.iter().any(|x| x.tag == c.tag),
                    "{dbms}: cites {} but does not list it",
                    c.tag
                );
            }
        }
    }

    #[test]
    fn flushes_a_rule_judges_but_nobody_timed_warn() {
        let mut wal = role(Role::Log);
        wal.flush_untimed.push("etcd-wal wal-append".into());
        let v = judge_etcd(&wal);
        assert_eq!(v.verdict, Verdict::FitWithWarnings);
        assert_eq!(v.reasons[0].rule, RuleId::FlushNotMeasured);
        assert!(v.reasons[0]
            .measured
            .starts_with("etcd-wal wal-append: flushes asked for, not timed"));
        // A data file's background flushes: no rule would judge them, no warning.
        let mut d = role(Role::Data);
        d.flush_untimed
            .push("postgresql-checkpoint checkpoint-8k".into());
        assert_eq!(
            judge_role_for(&d, Some(true), RuleSet::Classic, Dbms::POSTGRESQL).verdict,
            Verdict::Fit
        );
    }
}
