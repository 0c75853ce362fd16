//! The rules of a qualification in words, one line each (`iosim qualify --plan`).

use super::reason::Level;
use super::rule_id::RuleId;
use super::sources::{
    cite, DISKSPD_SQL, ETCD_ALERTS, ETCD_COMMIT, ETCD_FIO, MARKS_CACHE, MS_833, MS_IO, SELF_CHECK,
    SQLIOSIM,
};
use super::thresholds::{
    Band, RuleSet, RuleTable, DEEP_SHARE, ETCD_COMMIT_FAIL_MS, ETCD_COMMIT_WARN_MS,
    ETCD_WAL_FSYNC_MS, MIN_IOS_P99,
};
use crate::dbms::Dbms;

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
    if dbms != Dbms::Sqlserver {
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

/// The flush rules of `dbms`: etcd's own targets, none for SQL Server (its
/// log writes are write-through), the log's band for the others.
fn flush_rules(dbms: Dbms, t: &RuleTable) -> Vec<(RuleId, String)> {
    let limits = |bands: &[Band]| in_words(dbms, bands);
    let mut v = Vec::new();
    match dbms {
        Dbms::Sqlserver => {}
        Dbms::Etcd => {
            v.push((
                RuleId::EtcdWalFsync,
                format!(
                    "p99 of the WAL's fdatasync (the slowest with fewer than {MIN_IOS_P99}): NOT FIT above {ETCD_WAL_FSYNC_MS} ms ({})",
                    ETCD_FIO.tag
                ),
            ));
            v.push((
                RuleId::EtcdBackendCommit,
                format!(
                    "p99 of the backend commit's fdatasync: warning above {ETCD_COMMIT_WARN_MS} ms ({}), NOT FIT above {ETCD_COMMIT_FAIL_MS} ms ({})",
                    ETCD_COMMIT.tag, ETCD_ALERTS.tag
                ),
            ));
        }
        _ => v.push((
            RuleId::FlushLatency,
            format!(
                "mean latency of the log's commit flushes (fsync/fdatasync): {}; their p99, p99.9 and slowest as the log's tails",
                limits(t.log_mean)
            ),
        )),
    }
    v
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
        assert!(ids(Dbms::Etcd).contains(&RuleId::EtcdWalFsync));
        assert!(!ids(Dbms::Etcd).contains(&RuleId::FlushLatency));
        assert!(ids(Dbms::Postgresql).contains(&RuleId::FlushLatency));
        assert!(!ids(Dbms::Sqlserver).contains(&RuleId::FlushNotMeasured));
        let pg = summary(Dbms::Postgresql, RuleSet::Classic);
        assert!(
            pg[0]
                .1
                .ends_with("warning above 10 ms, NOT FIT above 20 ms ([iosim-bands])"),
            "{}",
            pg[0].1
        );
        let sql = summary(Dbms::Sqlserver, RuleSet::Flash);
        assert!(
            sql[0]
                .1
                .ends_with("warning above 1 ms, NOT FIT above 5 ms ([Randal], [Dell-flash])"),
            "{}",
            sql[0].1
        );
    }
}
