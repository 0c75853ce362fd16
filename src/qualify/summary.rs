//! The rules of a qualification in words, one line each (`iosim qualify --plan`).

use super::reason::Level;
use super::sources::{cite, DISKSPD_SQL, MARKS_CACHE, MS_833, MS_IO, SELF_CHECK, SQLIOSIM};
use super::thresholds::{Band, RuleSet, RuleTable, DEEP_SHARE};
use crate::dbms::{Dbms, FlushTarget, Flushes};
use crate::guidance::RuleId;

/// The rules a qualification for `dbms` applies with the table `set`, one
/// line each: what it judges, its limits and the sources it cites (`iosim
/// qualify --plan` prints them).
pub fn summary(dbms: Dbms, set: RuleSet) -> Vec<(RuleId, String)> {
    let t = set.table();
    let limits = |bands: &[Band]| in_words(dbms, bands);
    let mut v = vec![
        (
            RuleId::DataLatency,
            format!(
                "mean latency of the data workloads whose I/O reaches the storage (direct or write-through): {}",
                limits(t.data_mean)
            ),
        ),
        (
            RuleId::LogLatency,
            format!(
                "mean write latency of the log workloads whose writes reach the storage: {}",
                limits(t.log_mean)
            ),
        ),
        (
            RuleId::TailP99,
            format!(
                "p99 (tail-p99), p99.9 (tail-p99.9) and slowest (tail-max) of the same workloads: data p99 {}; log p99 {}; slowest {}",
                limits(t.data_p99),
                limits(t.log_p99),
                limits(t.max)
            ),
        ),
    ];
    v.extend(flush_rules(dbms, t));
    v.extend(other_rules(dbms, t));
    if !matches!(dbms.flushes(), Flushes::WriteThrough) {
        v.push((
            RuleId::FlushNotMeasured,
            format!(
                "flushes a rule judges that the runner did not time: warning ({})",
                SELF_CHECK.tag
            ),
        ));
    }
    v
}

/// The sources of `bands` as `dbms` cites them, each once (`[Randal], [DiskSpd-SQL]`).
fn tags(dbms: Dbms, bands: &[Band]) -> String {
    let mut v: Vec<&str> = Vec::new();
    for b in bands {
        let tag = cite(dbms, b.2).tag;
        if !v.contains(&tag) {
            v.push(tag);
        }
    }
    v.join(", ")
}

/// A table's limits in words (`warning above 10 ms, NOT FIT above 20 ms ([Randal], [DiskSpd-SQL])`).
fn in_words(dbms: Dbms, bands: &[Band]) -> String {
    let w = bands.iter().rev().find(|b| b.1 == Level::Warning);
    let f = bands.iter().find(|b| b.1 == Level::Fail);
    let mut s = Vec::new();
    if let Some(w) = w {
        s.push(format!("warning above {} ms", w.0));
    }
    if let Some(f) = f {
        s.push(format!("NOT FIT above {} ms", f.0));
    }
    format!("{} ({})", s.join(", "), tags(dbms, bands))
}

/// The flush rules of `dbms`: none for a database whose log writes are
/// write-through (SQL Server), its own targets, the log's band for the
/// others.
fn flush_rules(dbms: Dbms, t: &RuleTable) -> Vec<(RuleId, String)> {
    match dbms.flushes() {
        Flushes::WriteThrough => Vec::new(),
        Flushes::Targets(targets) => targets
            .iter()
            .map(|x| (x.rule.clone(), target_in_words(x)))
            .collect(),
        Flushes::PerCommit => vec![(
            RuleId::FlushLatency,
            format!(
                "mean latency of the log's commit flushes (fsync/fdatasync): {}; their p99, p99.9 and slowest as the log's tails",
                in_words(dbms, t.log_mean)
            ),
        )],
    }
}

/// A database's own flush target in words, each limit with its source
/// (`p99 of ...: warning above 25 ms ([etcd-commit]), NOT FIT above 250 ms ([etcd-alerts])`).
fn target_in_words(x: &FlushTarget) -> String {
    let limits: Vec<String> = x
        .limits
        .iter()
        .rev()
        .map(|&(limit, level, source)| {
            let what = if level == Level::Fail {
                "NOT FIT"
            } else {
                "warning"
            };
            format!("{what} above {limit} ms ({})", source.tag)
        })
        .collect();
    format!("{}: {}", x.judged, limits.join(", "))
}

/// The rules after the latency and flush ones: the knee, deep-queue
/// throughput, slow I/O, the simulator's, the cache and the self-checks.
fn other_rules(dbms: Dbms, t: &RuleTable) -> Vec<(RuleId, String)> {
    let limits = |bands: &[Band]| in_words(dbms, bands);
    let mut v = Vec::new();
    v.extend([
        (
            RuleId::KneeLatency,
            format!(
                "mean latency at the queue-depth sweep's knee: {}",
                limits(t.data_mean)
            ),
        ),
        (
            RuleId::DeepThroughput,
            format!(
                "MiB/s of a deep-queue workload of 512 KiB+ blocks: warning below {:.0}% of the location's 1 MiB QD8 corner ({})",
                DEEP_SHARE * 100.0,
                cite(dbms, DISKSPD_SQL).tag
            ),
        ),
        (
            RuleId::SlowIo,
            format!(
                "I/Os and flushes over 1 s in any measurement: warning ({}); over 15 s (stalled-io): NOT FIT ({})",
                cite(dbms, MS_IO).tag,
                cite(dbms, MS_833).tag
            ),
        ),
        (
            RuleId::SimErrors,
            format!(
                "errors of the simulator's page and log checks (sim-errors), I/O errors (io-errors): NOT FIT; simulator I/Os over 1 s / 15 s (sim-slow-io, sim-long-io), no cycle completed (sim-missing) ({})",
                SQLIOSIM.tag
            ),
        ),
        (
            RuleId::CacheSizedTest,
            format!(
                "a test file or device under 3x --cache-size, or without it under this host's memory: warning ({})",
                MARKS_CACHE.tag
            ),
        ),
        (
            RuleId::Untrusted,
            format!(
                "a self-check says the numbers measure something else: warning, numbers not trustworthy ({})",
                SELF_CHECK.tag
            ),
        ),
    ]);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_database_lists_its_rules() {
        let ids = |d| {
            summary(d, RuleSet::Classic)
                .into_iter()
                .map(|x| x.0)
                .collect::<Vec<_>>()
        };
        assert!(ids(Dbms::ETCD).contains(&RuleId::EtcdWalFsync));
        assert!(!ids(Dbms::ETCD).contains(&RuleId::FlushLatency));
        assert!(ids(Dbms::POSTGRESQL).contains(&RuleId::FlushLatency));
        assert!(!ids(Dbms::SQLSERVER).contains(&RuleId::FlushNotMeasured));
        let pg = summary(Dbms::POSTGRESQL, RuleSet::Classic);
        assert!(
            pg[0]
                .1
                .ends_with("warning above 10 ms, NOT FIT above 20 ms ([iosim-bands])"),
            "{}",
            pg[0].1
        );
        let sql = summary(Dbms::SQLSERVER, RuleSet::Flash);
        assert!(
            sql[0]
                .1
                .ends_with("warning above 1 ms, NOT FIT above 5 ms ([Randal], [Dell-flash])"),
            "{}",
            sql[0].1
        );
    }
}
