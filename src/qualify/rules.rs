//! The qualification's verdict rules: measured facts in, one verdict per role
//! and overall out, each reason one line with the figure, the rule and its
//! public source (docs/references.md), plus recommendations computed from the
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
//! | `io-errors` | any I/O error in any run on the role's location | - | any | [SQLIOSim] |
//! | `sim-errors` | any error the simulator's page and log checks found | - | any | [SQLIOSim] |
//! | `sim-missing` | the simulator did not complete a cycle | yes | - | [SQLIOSim] |
//! | `untrusted` | a self-check says the numbers measure something else (a cache, the CPU, holes...) | yes | - | iosim self-checks |

use serde::{Deserialize, Serialize};

use crate::verdict::{Direction, Role};

/// The three answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Verdict {
    /// Every rule passed.
    #[serde(rename = "FIT")]
    Fit,
    /// Only warnings.
    #[serde(rename = "FIT WITH WARNINGS")]
    FitWithWarnings,
    /// At least one rule failed.
    #[serde(rename = "NOT FIT")]
    NotFit,
}

impl Verdict {
    /// As printed.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Fit => "FIT",
            Verdict::FitWithWarnings => "FIT WITH WARNINGS",
            Verdict::NotFit => "NOT FIT",
        }
    }
}

/// How bad a reason is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Makes the role FIT WITH WARNINGS.
    Warning,
    /// Makes the role NOT FIT.
    Fail,
}

/// A public source of a rule.
#[derive(Clone, Copy, Debug)]
pub struct Source {
    /// Tag in docs/references.md.
    pub tag: &'static str,
    /// Title and author.
    pub title: &'static str,
    /// Address.
    pub url: &'static str,
}

/// Paul Randal's latency table.
pub const RANDAL: Source = Source {
    tag: "[Randal]",
    title: "Paul Randal, Are I/O latencies killing your performance? (SQLskills): 10-20 ms poor, 20-100 ms bad",
    url: "https://www.sqlskills.com/blogs/paul/are-io-latencies-killing-your-performance/",
};
/// The DiskSpd-for-SQL white paper's table.
pub const DISKSPD_SQL: Source = Source {
    tag: "[DiskSpd-SQL]",
    title: "Robert Beene, Using DiskSpd in SQL Server environments (Microsoft): <=10 ms ideal, 11-20 ms may impact, >20 ms impacted",
    url: "https://github.com/microsoft/diskspd",
};
/// Microsoft field guidance 2012 (cached writes).
pub const MS_2012: Source = Source {
    tag: "[MS-2012]",
    title: "Microsoft field guidance 2012 (Dave Wentzel, Latency and IOPs): cached writes <1 ms excellent, <2 good, <4 fair, 4 ms and above poor",
    url: "http://davewentzel.com/content/latency-and-iops/",
};
/// The log/data rule of thumb.
pub const LOG_VS_DATA: Source = Source {
    tag: "[Log-vs-data]",
    title:
        "rule of thumb in SQL Server guidance (original not located): log files 0-2 ms acceptable",
    url: "docs/references.md",
};
/// Microsoft's SQLIOSim article.
pub const SQLIOSIM: Source = Source {
    tag: "[SQLIOSim]",
    title: "Microsoft, Use the SQLIOSim utility to simulate SQL Server activity on a disk subsystem: any error it reports is a problem of the I/O path to fix before the database goes there",
    url: "https://learn.microsoft.com/en-us/troubleshoot/sql/tools/sqliosim-utility-simulate-activity-disk-subsystem",
};
/// iosim's own self-checks.
pub const SELF_CHECK: Source = Source {
    tag: "[iosim self-check]",
    title: "iosim compares what it issued with the kernel's device counters, CPU use and the test file's content",
    url: "docs/sysmon.md",
};

/// Data-file latency: warning above (ms).
pub const DATA_WARN_MS: f64 = 10.0;
/// Data-file latency: NOT FIT above (ms).
pub const DATA_FAIL_MS: f64 = 20.0;
/// Log-write latency: warning above (ms).
pub const LOG_WARN_MS: f64 = 2.0;
/// Log-write latency: NOT FIT above (ms).
pub const LOG_FAIL_MS: f64 = 4.0;
/// Deep-queue throughput below this share of the location's sequential corner: warning.
pub const DEEP_SHARE: f64 = 0.5;
/// Commit latencies alone and beside data I/O that differ by more than this ratio differ measurably.
pub const SHARED_LOG_RATIO: f64 = 1.2;

/// One reason of a verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    /// The role it concerns.
    pub role: Role,
    /// Warning or failure.
    pub level: Level,
    /// Rule id (`log-latency`).
    pub rule: String,
    /// The measured figure, in words (`log-writer commit-4k write mean 19.8 ms`).
    pub measured: String,
    /// The rule it broke (`above 4 ms`).
    pub limit: String,
    /// Source tag.
    pub source_tag: String,
    /// Source title.
    pub source: String,
    /// Source address.
    pub url: String,
}

impl Reason {
    fn new(
        role: Role,
        level: Level,
        rule: &str,
        measured: String,
        limit: String,
        s: Source,
    ) -> Reason {
        Reason {
            role,
            level,
            rule: rule.into(),
            measured,
            limit,
            source_tag: s.tag.into(),
            source: s.title.into(),
            url: s.url.into(),
        }
    }

    /// One line: figure, rule, source.
    pub fn line(&self) -> String {
        format!(
            "{}: {} ({} {}: {} <{}>)",
            self.measured, self.limit, self.rule, self.source_tag, self.source, self.url
        )
    }
}

/// A role's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleVerdict {
    /// Role.
    pub role: Role,
    /// Verdict.
    pub verdict: Verdict,
    /// Why (empty for FIT).
    pub reasons: Vec<Reason>,
}

/// A latency-bound measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyFact {
    /// What ran (`oltp-with-log data-8k`).
    pub what: String,
    /// Direction judged.
    pub direction: Direction,
    /// Mean latency, µs.
    pub mean_us: f64,
}

/// The knee of a role's queue-depth sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct KneeFact {
    /// Swept parameter (`qd`).
    pub param: String,
    /// Its value at the knee.
    pub at: f64,
    /// IOPS at the knee.
    pub iops: f64,
    /// Mean latency at the knee, µs.
    pub mean_us: f64,
    /// Best IOPS of the sweep.
    pub max_iops: f64,
    /// Latency growth from the knee to the last point.
    pub growth_after: f64,
    /// The knee is not the last point (more load was tried).
    pub before_last: bool,
}

/// A deep-queue throughput measurement against the location's sequential corner.
#[derive(Clone, Debug, PartialEq)]
pub struct ThroughputFact {
    /// What ran.
    pub what: String,
    /// MiB/s.
    pub mib_s: f64,
    /// The corner it is held against (`seq read 1M QD8`).
    pub reference: String,
    /// Its MiB/s.
    pub reference_mib_s: f64,
}

/// What the rules look at for one role.
#[derive(Clone, Debug, PartialEq)]
pub struct RoleFacts {
    /// Role.
    pub role: Role,
    /// Latency-bound workloads.
    pub latency: Vec<LatencyFact>,
    /// Queue-depth sweep knee.
    pub knee: Option<KneeFact>,
    /// Deep-queue workloads.
    pub throughput: Vec<ThroughputFact>,
    /// I/O errors in every run on this location.
    pub io_errors: u64,
    /// Self-check findings (code, message) on this location that make the numbers untrustworthy.
    pub untrusted: Vec<(String, String)>,
    /// Simulator errors on this location's files.
    pub sim_errors: u64,
}

/// Everything the rules look at.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    /// Per role.
    pub roles: Vec<RoleFacts>,
    /// The simulator completed a cycle (None: it did not run).
    pub sim_completed: Option<bool>,
    /// Simulator errors by class.
    pub sim_errors_by_class: Vec<(String, u64)>,
    /// The log shares the data's device.
    pub log_shares_data: bool,
    /// Commit latency alone (log-writer), µs.
    pub commit_alone_us: Option<f64>,
    /// Commit latency beside data I/O (oltp-with-log), µs.
    pub commit_with_data_us: Option<f64>,
}

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

/// Judges one role.
pub fn judge_role(f: &RoleFacts, sim_completed: Option<bool>) -> RoleVerdict {
    let mut r = Vec::new();
    let role = f.role;
    for l in &f.latency {
        let m = l.mean_us / 1000.0;
        let measured = format!("{} {} mean {}", l.what, dir(l.direction), ms(l.mean_us));
        if role == Role::Log {
            if l.direction != Direction::Write {
                continue;
            }
            let limits = [
                (LOG_FAIL_MS, Level::Fail, MS_2012),
                (LOG_WARN_MS, Level::Warning, LOG_VS_DATA),
            ];
            r.extend(banded(
                role,
                "log-latency",
                m,
                measured,
                " for log writes",
                limits,
            ));
        } else {
            r.extend(banded(role, "data-latency", m, measured, "", data_limits()));
        }
    }
    if let Some(k) = &f.knee {
        let m = k.mean_us / 1000.0;
        let measured = format!(
            "mean latency at the sweep's knee ({}={}, {:.0} IOPS) {}",
            k.param,
            k.at,
            k.iops,
            ms(k.mean_us)
        );
        r.extend(banded(role, "knee-latency", m, measured, "", data_limits()));
    }
    for t in &f.throughput {
        if t.reference_mib_s > 0.0 && t.mib_s < DEEP_SHARE * t.reference_mib_s {
            r.push(Reason::new(
                role,
                Level::Warning,
                "deep-throughput",
                format!("{} {:.1} MiB/s", t.what, t.mib_s),
                format!(
                    "below {:.0}% of this location's {} ({:.1} MiB/s): the deep queue the database uses for this work loses throughput",
                    DEEP_SHARE * 100.0,
                    t.reference,
                    t.reference_mib_s
                ),
                DISKSPD_SQL,
            ));
        }
    }
    if f.io_errors > 0 {
        r.push(Reason::new(
            role,
            Level::Fail,
            "io-errors",
            format!("{} I/O errors", f.io_errors),
            "any I/O error".into(),
            SQLIOSIM,
        ));
    }
    if f.sim_errors > 0 {
        r.push(Reason::new(
            role,
            Level::Fail,
            "sim-errors",
            format!(
                "simulator found {} errors in this location's files",
                f.sim_errors
            ),
            "any error in the page or log checks".into(),
            SQLIOSIM,
        ));
    }
    if sim_completed == Some(false) && matches!(role, Role::Data | Role::Log) {
        r.push(Reason::new(
            role,
            Level::Warning,
            "sim-missing",
            "the simulator did not complete a cycle".into(),
            "pages written here were not all verified".into(),
            SQLIOSIM,
        ));
    }
    for (code, msg) in &f.untrusted {
        r.push(Reason::new(
            role,
            Level::Warning,
            "untrusted",
            format!("numbers not trustworthy ({code}): {msg}"),
            "a self-check failed".into(),
            SELF_CHECK,
        ));
    }
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
    }
}

/// The verdicts: per role, overall, and whether the numbers can be trusted.
pub fn judge(f: &Facts) -> (Vec<RoleVerdict>, Verdict, bool) {
    let roles: Vec<RoleVerdict> = f
        .roles
        .iter()
        .map(|r| judge_role(r, f.sim_completed))
        .collect();
    let overall = roles
        .iter()
        .map(|r| r.verdict)
        .max()
        .unwrap_or(Verdict::Fit);
    let trustworthy = f.roles.iter().all(|r| r.untrusted.is_empty());
    (roles, overall, trustworthy)
}

/// Top recommendations, computed from the measurements.
pub fn recommendations(f: &Facts) -> Vec<String> {
    let mut out = Vec::new();
    if !f.sim_errors_by_class.is_empty() {
        let classes: Vec<String> = f
            .sim_errors_by_class
            .iter()
            .map(|(c, n)| format!("{n} {c}"))
            .collect();
        out.push(format!(
            "do not put a database here until the simulator's errors are explained ({}): check firmware, drivers, controller cache settings and cabling, then run iosim sim on this location again",
            classes.join(", ")
        ));
    }
    if let (true, Some(alone), Some(with)) =
        (f.log_shares_data, f.commit_alone_us, f.commit_with_data_us)
    {
        if alone > 0.0 && with > alone * SHARED_LOG_RATIO {
            out.push(format!(
                "put the log on its own device: commit latency {:.0} -> {:.0} us measured (beside data I/O -> alone)",
                with, alone
            ));
        }
    }
    for r in &f.roles {
        if let Some(k) = &r.knee {
            // The knee rule's own margin (one rule): a knee the sweep found
            // always passes; one stored by an older iosim far below the best
            // IOPS is noise in the curve and recommends nothing.
            if k.before_last
                && k.iops > 0.0
                && k.max_iops <= k.iops * (1.0 + crate::sweep::analysis::KNEE_MARGIN)
            {
                out.push(format!(
                    "run with {}<={} on {}: beyond it latency grows {:.1}x for {:.0}% more IOPS",
                    k.param.to_uppercase(),
                    k.at,
                    r.role.name(),
                    k.growth_after,
                    (k.max_iops / k.iops - 1.0).max(0.0) * 100.0
                ));
            }
        }
    }
    // Once per set of findings: roles with the same ones share the line.
    let mut untrusted: Vec<(Vec<&str>, String)> = Vec::new();
    for r in &f.roles {
        let codes: Vec<&str> = r.untrusted.iter().map(|(c, _)| c.as_str()).collect();
        if codes.is_empty() {
            continue;
        }
        match untrusted.iter_mut().find(|(c, _)| *c == codes) {
            Some((_, roles)) => *roles = format!("{roles} and {}", r.role.name()),
            None => untrusted.push((codes, r.role.name().to_string())),
        }
    }
    for (codes, roles) in untrusted {
        out.push(format!(
            "the numbers for {roles} are not trustworthy ({}): fix what the self-check says and qualify again before deciding",
            codes.join(", ")
        ));
    }
    out
}

/// The data-file latency bands: fail above [`DATA_FAIL_MS`], warn above [`DATA_WARN_MS`].
fn data_limits() -> [(f64, Level, Source); 2] {
    [
        (DATA_FAIL_MS, Level::Fail, DISKSPD_SQL),
        (DATA_WARN_MS, Level::Warning, RANDAL),
    ]
}

/// The reason (if any) for a mean latency of `m` ms against `limits`,
/// worst first: the first limit it is above decides the level and source.
fn banded(
    role: Role,
    rule: &str,
    m: f64,
    measured: String,
    what: &str,
    limits: [(f64, Level, Source); 2],
) -> Option<Reason> {
    let (limit, level, source) = limits.into_iter().find(|(limit, _, _)| m > *limit)?;
    Some(Reason::new(
        role,
        level,
        rule,
        measured,
        format!("above {limit} ms{what}"),
        source,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(role: Role) -> RoleFacts {
        RoleFacts {
            role,
            latency: vec![],
            knee: None,
            throughput: vec![],
            io_errors: 0,
            untrusted: vec![],
            sim_errors: 0,
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
        assert_eq!(v.reasons[0].rule, "data-latency");
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
            param: "qd".into(),
            at: 16.0,
            iops: 50_000.0,
            mean_us: 320.0,
            max_iops: 52_000.0,
            growth_after: 3.0,
            before_last: true,
        });
        assert_eq!(judge_role(&d, None).verdict, Verdict::Fit);
        d.knee.as_mut().unwrap().mean_us = 21_000.0;
        let v = judge_role(&d, None);
        assert_eq!(v.verdict, Verdict::NotFit);
        assert_eq!(v.reasons[0].rule, "knee-latency");
        d.knee.as_mut().unwrap().mean_us = 320.0;
        d.throughput[0].mib_s = 400.0;
        let v = judge_role(&d, None);
        assert_eq!(v.verdict, Verdict::FitWithWarnings);
        assert_eq!(v.reasons[0].rule, "deep-throughput");
    }

    #[test]
    fn errors_make_a_role_not_fit() {
        let mut d = role(Role::Data);
        d.io_errors = 1;
        let v = judge_role(&d, Some(true));
        assert_eq!(v.verdict, Verdict::NotFit);
        assert_eq!(v.reasons[0].rule, "io-errors");
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
            .push(("cache_answered_reads".into(), "a cache answered".into()));
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
            .push(("cache_answered_reads".into(), "a cache answered".into()));
        let mut d = role(Role::Data);
        d.untrusted
            .push(("cache_answered_reads".into(), "a cache answered".into()));
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
            param: "qd".into(),
            at: 16.0,
            iops: 50_000.0,
            mean_us: 320.0,
            max_iops: 52_000.0,
            growth_after: 3.0,
            before_last: true,
        });
        let mut f = facts(vec![d]);
        f.log_shares_data = true;
        f.commit_alone_us = Some(171.0);
        f.commit_with_data_us = Some(252.0);
        let rs = recommendations(&f);
        assert!(
            rs.iter()
                .any(|r| r
                    == "run with QD<=16 on data: beyond it latency grows 3.0x for 4% more IOPS"),
            "{rs:?}"
        );
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
}
