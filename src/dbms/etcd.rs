//! etcd: WAL appends with fdatasync and bbolt backend commits, judged by
//! etcd's own flush targets (the WAL fdatasync's p99 under 10 ms).

use super::{Database, FlushTarget, Flushes, Guidance, ProfileFile, SettingRow};
use crate::guidance::{Level, RuleId, Source};
use crate::verdict::Role;

/// etcd's backend batching.
pub const ETCD_BACKEND: Source = Source {
    tag: "[etcd-backend]",
    title: "etcd source, server/mvcc/backend/backend.go (release 3.5): the backend commits its batch every 100 ms or 10,000 operations",
    url: "https://github.com/etcd-io/etcd/blob/release-3.5/server/mvcc/backend/backend.go",
};
/// etcd's hardware recommendations.
pub const ETCD_HARDWARE: Source = Source {
    tag: "[etcd-hardware]",
    title: "etcd documentation, Hardware recommendations (v3.5), Disks: etcd is very sensitive to disk write latency; 50 sequential IOPS required, 500 for heavily loaded clusters; check a disk with fio",
    url: "https://etcd.io/docs/v3.5/op-guide/hardware/",
};
/// The fio check etcd's hardware page links to.
pub const ETCD_FIO: Source = Source {
    tag: "[etcd-fio]",
    title: "Matteo Olivi and Mike Spreitzer (IBM Cloud blog, 2019), Using Fio to Tell Whether Your Storage is Fast Enough for Etcd, linked from etcd's hardware recommendations: the 99th percentile of the WAL's fdatasync should be under 10 ms",
    url: "https://www.ibm.com/cloud/blog/using-fio-to-tell-whether-your-storage-is-fast-enough-for-etcd",
};
/// etcd's own alerting rules.
pub const ETCD_ALERTS: Source = Source {
    tag: "[etcd-alerts]",
    title: "etcd's alerting rules (contrib/mixin, release 3.5): etcdHighCommitDurations warns when the backend commit's p99 is over 0.25 s, etcdHighFsyncDurations when the WAL fsync's p99 is over 0.5 s",
    url: "https://github.com/etcd-io/etcd/blob/release-3.5/contrib/mixin/mixin.libsonnet",
};
/// The 25 ms backend-commit rule of thumb (no address: etcd does not publish it).
pub const ETCD_COMMIT: Source = Source {
    tag: "[etcd-commit]",
    title: "rule of thumb repeated in etcd operators' guidance, not in etcd's own documentation: the backend commit's p99 under 25 ms",
    url: "",
};

/// etcd's WAL fdatasync p99: NOT FIT above (ms) [etcd-fio].
pub const ETCD_WAL_FSYNC_MS: f64 = 10.0;
/// etcd's backend commit p99: warning above (ms) [etcd-commit].
pub const ETCD_COMMIT_WARN_MS: f64 = 25.0;
/// etcd's backend commit p99: NOT FIT above (ms), etcd's own alert [etcd-alerts].
pub const ETCD_COMMIT_FAIL_MS: f64 = 250.0;

/// etcd's flush targets: the WAL's fdatasync, the backend's commit.
const TARGETS: &[FlushTarget] = &[
    FlushTarget {
        role: Role::Log,
        rule: RuleId::EtcdWalFsync,
        judged: "p99 of the WAL's fdatasync (the slowest with fewer than 100)",
        why: ": etcd's WAL needs its fdatasync's p99 under 10 ms",
        limits: &[(ETCD_WAL_FSYNC_MS, Level::Fail, ETCD_FIO)],
    },
    FlushTarget {
        role: Role::Data,
        rule: RuleId::EtcdBackendCommit,
        judged: "p99 of the backend commit's fdatasync",
        why: " for etcd's backend commit",
        limits: &[
            (ETCD_COMMIT_FAIL_MS, Level::Fail, ETCD_ALERTS),
            (ETCD_COMMIT_WARN_MS, Level::Warning, ETCD_COMMIT),
        ],
    },
];

/// etcd.
pub struct Etcd;

impl Database for Etcd {
    fn name(&self) -> &'static str {
        "etcd"
    }

    fn title(&self) -> &'static str {
        "etcd"
    }

    fn help(&self) -> &'static str {
        "etcd: WAL appends with fdatasync, bbolt backend commits; p99 fdatasync under 10 ms"
    }

    fn role_name(&self, role: Role) -> &'static str {
        match role {
            Role::Log => "wal",
            Role::Data => "backend",
            r => r.name(),
        }
    }

    fn profile_files(&self) -> &'static [ProfileFile] {
        &[
            ("etcd-wal", include_str!("../../profiles/etcd-wal.toml")),
            ("etcd-fio", include_str!("../../profiles/etcd-fio.toml")),
        ]
    }

    fn profiles(&self, _has: &dyn Fn(Role) -> bool) -> Vec<(&'static str, Vec<Role>)> {
        use Role::{Data, Log};
        vec![("etcd-wal", vec![Log, Data]), ("etcd-fio", vec![Log])]
    }

    /// bbolt's page.
    fn page_size(&self) -> u64 {
        4 << 10
    }

    /// Its 2,300-byte appends rounded up to a 4 KiB direct write.
    fn log_write(&self) -> u64 {
        4 << 10
    }

    fn doc_sources(&self) -> &'static [Source] {
        &[ETCD_HARDWARE, ETCD_BACKEND]
    }

    fn settings(&self) -> &'static [SettingRow] {
        &[
            (
                "WAL sync",
                "fdatasync",
                "each Raft batch is appended to the WAL through the page cache, then fdatasync",
                ETCD_HARDWARE,
            ),
            (
                "backend-batch-interval",
                "100ms",
                "the bbolt backend commits its dirty pages, then fdatasync, 10 times a second",
                ETCD_BACKEND,
            ),
        ]
    }

    fn guidance(&self) -> Guidance {
        Guidance::OwnTargets {
            limits: "etcd's own: the WAL's fdatasync p99 under 10 ms [etcd-fio]; the backend commit's p99 under 25 ms [etcd-commit] (etcd's alert warns at 250 ms [etcd-alerts]); everything else by iosim's general latency bands [iosim-bands]",
            profile_note: "the latency tables are SQL Server's published guidance, applied here as general latency bands; etcd's own target is for its flushes (the p99 of the WAL's fdatasync under 10 ms), which iosim qualify --dbms etcd judges",
        }
    }

    fn flushes(&self) -> Flushes {
        Flushes::Targets(TARGETS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_targets_say_their_limits() {
        // The words name the numbers the bands hold.
        assert!(TARGETS[0].why.contains(&format!("under {ETCD_WAL_FSYNC_MS} ms")));
        assert!(TARGETS[0]
            .judged
            .contains(&format!("fewer than {}", crate::qualify::rules::MIN_IOS_P99)));
    }
}
