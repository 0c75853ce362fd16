//! What a qualification assumes of each database (`iosim qualify --dbms`):
//! the profiles it runs and on which roles, the pattern of each role's
//! sweeps, the database settings those workloads assume (named in the
//! report, each with the documentation it comes from), and what the
//! database publishes about storage latency.

use serde::{Deserialize, Serialize};

use super::rules::Source;
use crate::dbms::Dbms;
use crate::verdict::Role;
use crate::workload::RwMode;

/// A database setting the qualification's workloads assume.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    /// Its name (`wal_sync_method`).
    pub name: String,
    /// Its value (`fdatasync`).
    pub value: String,
    /// What it makes the database do to the storage.
    pub means: String,
    /// The tag of the documentation it comes from (`[PG-WAL]`).
    pub source_tag: String,
}

impl Setting {
    /// `name=value`.
    pub fn pair(&self) -> String {
        format!("{}={}", self.name, self.value)
    }
}

/// Bob Dorr's SQL Server I/O Basics.
pub const IO_BASICS: Source = Source {
    tag: "[IO-Basics]",
    title: "Bob Dorr, Microsoft SQL Server I/O Basics, chapters 1 and 2 (Microsoft white papers): SQL Server opens its files with FILE_FLAG_NO_BUFFERING and FILE_FLAG_WRITE_THROUGH",
    url: "https://technet.microsoft.com/en-us/library/cc966500.aspx",
};
/// PostgreSQL's WAL settings.
pub const PG_WAL: Source = Source {
    tag: "[PG-WAL]",
    title: "PostgreSQL documentation, Write Ahead Log (server configuration): wal_sync_method (fdatasync is Linux's default), full_page_writes, commit_delay, checkpoint_flush_after",
    url: "https://www.postgresql.org/docs/current/runtime-config-wal.html",
};
/// PostgreSQL's WAL configuration chapter.
pub const PG_WAL_CONFIG: Source = Source {
    tag: "[PG-WAL-config]",
    title: "PostgreSQL documentation, WAL Configuration: a checkpoint writes every dirty page, spread over the interval, then fsyncs the files",
    url: "https://www.postgresql.org/docs/current/wal-configuration.html",
};
/// PostgreSQL's page layout.
pub const PG_PAGES: Source = Source {
    tag: "[PG-pages]",
    title: "PostgreSQL documentation, Database Page Layout: tables and indexes are arrays of fixed-size pages, usually 8 kB",
    url: "https://www.postgresql.org/docs/current/storage-page-layout.html",
};
/// InnoDB's system variables.
pub const INNODB_PARAMS: Source = Source {
    tag: "[InnoDB-params]",
    title: "MySQL 8.0 Reference Manual, InnoDB Startup Options and System Variables: innodb_page_size, innodb_flush_method (O_DIRECT: data files O_DIRECT, fsync() for data and log), innodb_flush_log_at_trx_commit",
    url: "https://dev.mysql.com/doc/refman/8.0/en/innodb-parameters.html",
};
/// InnoDB's doublewrite buffer.
pub const INNODB_DOUBLEWRITE: Source = Source {
    tag: "[InnoDB-doublewrite]",
    title: "MySQL 8.0 Reference Manual, Doublewrite Buffer: pages are first written in a large sequential chunk with a single fsync(), then in place",
    url: "https://dev.mysql.com/doc/refman/8.0/en/innodb-doublewrite-buffer.html",
};
/// MySQL's binary log options.
pub const MYSQL_BINLOG: Source = Source {
    tag: "[MySQL-binlog]",
    title: "MySQL 8.0 Reference Manual, Binary Logging Options and Variables: sync_binlog=1 synchronizes the binary log to disk before each transaction group commits",
    url: "https://dev.mysql.com/doc/refman/8.0/en/replication-options-binary-log.html",
};
/// Oracle's FILESYSTEMIO_OPTIONS.
pub const ORACLE_FSIO: Source = Source {
    tag: "[Oracle-fsio]",
    title: "Oracle Database 19c Reference, FILESYSTEMIO_OPTIONS: SETALL enables direct and asynchronous I/O on file system files",
    url: "https://docs.oracle.com/en/database/oracle/oracle-database/19/refrn/FILESYSTEMIO_OPTIONS.html",
};
/// Oracle's wait events.
pub const ORACLE_WAITS: Source = Source {
    tag: "[Oracle-waits]",
    title: "Oracle Database 19c Reference, Descriptions of Wait Events: db file sequential read (one block), db file scattered read (multiblock), db file parallel write (DBWR), log file parallel write (LGWR)",
    url: "https://docs.oracle.com/en/database/oracle/oracle-database/19/refrn/descriptions-of-wait-events.html",
};
/// Oracle's DB_FILE_MULTIBLOCK_READ_COUNT.
pub const ORACLE_MBRC: Source = Source {
    tag: "[Oracle-mbrc]",
    title: "Oracle Database 19c Reference, DB_FILE_MULTIBLOCK_READ_COUNT: blocks per I/O of a sequential scan; by default the largest efficient I/O, 1 MB on most platforms",
    url: "https://docs.oracle.com/en/database/oracle/oracle-database/19/refrn/DB_FILE_MULTIBLOCK_READ_COUNT.html",
};
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

/// The documentation the settings of `dbms` come from.
pub fn doc_sources(dbms: Dbms) -> &'static [Source] {
    match dbms {
        Dbms::Sqlserver => &[IO_BASICS],
        Dbms::Postgresql => &[PG_WAL, PG_WAL_CONFIG, PG_PAGES],
        Dbms::Mysql => &[INNODB_PARAMS, INNODB_DOUBLEWRITE, MYSQL_BINLOG],
        Dbms::Oracle => &[ORACLE_FSIO, ORACLE_WAITS, ORACLE_MBRC],
        Dbms::Etcd => &[ETCD_HARDWARE, ETCD_BACKEND],
    }
}

/// A setting as the tables below give it: name, value, what it means, its source.
type Row = (&'static str, &'static str, &'static str, Source);

/// The settings SQL Server's workloads assume.
const SQLSERVER_SETTINGS: &[Row] = &[(
    "file flags",
    "FILE_FLAG_NO_BUFFERING|FILE_FLAG_WRITE_THROUGH",
    "data and log files unbuffered and write-through: O_DIRECT and O_DSYNC here",
    IO_BASICS,
)];

/// The settings PostgreSQL's workloads assume.
const POSTGRESQL_SETTINGS: &[Row] = &[
            (
                "wal_sync_method",
                "fdatasync",
                "each commit writes the WAL through the page cache, then fdatasync",
                PG_WAL,
            ),
            (
                "full_page_writes",
                "on",
                "after a checkpoint a page's first change puts its whole 8 kB image in the WAL: larger WAL writes",
                PG_WAL,
            ),
            (
                "synchronous_commit",
                "on",
                "a commit waits for its WAL flush",
                PG_WAL,
            ),
            (
                "block_size",
                "8kB",
                "data pages of 8 KiB, read and written through the page cache",
                PG_PAGES,
            ),
            (
                "checkpoint_flush_after",
                "256kB",
                "a checkpoint pushes its writes to the storage every 32 pages, and fsyncs each file at its end",
                PG_WAL_CONFIG,
            ),];

/// The settings MySQL's (and MariaDB's) workloads assume.
const MYSQL_SETTINGS: &[Row] = &[
    (
        "innodb_page_size",
        "16k",
        "data pages of 16 KiB",
        INNODB_PARAMS,
    ),
    (
        "innodb_flush_method",
        "O_DIRECT",
        "data files opened O_DIRECT; fsync flushes data and log files",
        INNODB_PARAMS,
    ),
    (
        "innodb_flush_log_at_trx_commit",
        "1",
        "each commit writes and flushes the redo log",
        INNODB_PARAMS,
    ),
    (
        "innodb_doublewrite",
        "ON",
        "flushed pages go first to the doublewrite buffer in ~1 MiB sequential writes and a flush",
        INNODB_DOUBLEWRITE,
    ),
    (
        "sync_binlog",
        "1",
        "each commit group writes the binary log and syncs it",
        MYSQL_BINLOG,
    ),
];

/// The settings Oracle's workloads assume.
const ORACLE_SETTINGS: &[Row] = &[
    (
        "filesystemio_options",
        "SETALL",
        "direct and asynchronous I/O on data files and redo logs",
        ORACLE_FSIO,
    ),
    (
        "db_block_size",
        "8192",
        "single-block reads and DBWR writes of 8 KiB",
        ORACLE_WAITS,
    ),
    (
        "db_file_multiblock_read_count",
        "128",
        "full scans read 128 blocks (1 MiB) per I/O",
        ORACLE_MBRC,
    ),
];

/// The settings etcd's workloads assume.
const ETCD_SETTINGS: &[Row] = &[
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
];

/// The settings the workloads of `dbms` assume.
pub fn settings(dbms: Dbms) -> Vec<Setting> {
    let rows = match dbms {
        Dbms::Sqlserver => SQLSERVER_SETTINGS,
        Dbms::Postgresql => POSTGRESQL_SETTINGS,
        Dbms::Mysql => MYSQL_SETTINGS,
        Dbms::Oracle => ORACLE_SETTINGS,
        Dbms::Etcd => ETCD_SETTINGS,
    };
    rows.iter()
        .map(|&(name, value, means, src)| Setting {
            name: name.into(),
            value: value.into(),
            means: means.into(),
            source_tag: src.tag.into(),
        })
        .collect()
}

/// What the database publishes about storage latency, and so what the
/// latency rules of its qualification cite.
pub fn latency_guidance(dbms: Dbms) -> String {
    match dbms {
        Dbms::Sqlserver => "SQL Server's published latency guidance (the --rules table)".into(),
        Dbms::Etcd => "etcd's own: the WAL's fdatasync p99 under 10 ms [etcd-fio]; the backend commit's p99 under 25 ms [etcd-commit] (etcd's alert warns at 250 ms [etcd-alerts]); everything else by iosim's general latency bands [iosim-bands]".into(),
        d => format!(
            "{} publishes no storage latency target: its latency rules use iosim's general latency bands [iosim-bands] (the --rules table's limits, drawn from SQL Server's published guidance)",
            d.title()
        ),
    }
}

/// What the report says about the simulator stage for `dbms` (None for SQL
/// Server, whose I/O the simulator models).
pub fn simulator_note(dbms: Dbms) -> Option<String> {
    (dbms != Dbms::Sqlserver).then(|| {
        format!(
            "the simulator stage checks page integrity with SQL Server's I/O (SQLIOSim's users, direct and write-through): a lost, torn or misdirected write is the storage's fault whatever the database, so it runs for {} too; its latencies are not {}'s and no latency rule judges them",
            dbms.title(),
            dbms.title()
        )
    })
}

/// Built from the documentation alone, said in the report.
pub fn documented_only_note(dbms: Dbms) -> Option<String> {
    dbms.documented_only().then(|| {
        format!(
            "{}'s workloads are built from its documentation only: it cannot be installed where iosim is tested, so they were not compared with the I/O a running {} issues",
            dbms.title(),
            dbms.title()
        )
    })
}

/// The profiles a qualification for `dbms` runs, each with the role of
/// each of its targets (in the profile's target order), given which of the
/// optional roles (`tempdb`, `backup`) are present. Targets of one profile
/// on the same role share its location, each in a slice of its own.
pub fn profiles(dbms: Dbms, has: impl Fn(Role) -> bool) -> Vec<(&'static str, Vec<Role>)> {
    use Role::{Backup, Data, Log, Tempdb};
    match dbms {
        Dbms::Sqlserver => {
            let mut v = vec![
                ("oltp-with-log", vec![Data, Log]),
                ("log-writer", vec![Log]),
                ("checkpoint", vec![Data]),
                ("read-ahead", vec![Data]),
                ("bulk-insert", vec![Data, Log]),
            ];
            if has(Tempdb) {
                v.push(("tempdb", vec![Tempdb]));
            }
            if has(Backup) {
                v.push(("backup", vec![Data, Backup]));
                v.push(("restore", vec![Data, Backup]));
            }
            v
        }
        Dbms::Postgresql => vec![
            ("postgresql-oltp", vec![Data, Log]),
            ("postgresql-checkpoint", vec![Data]),
            ("postgresql-seqscan", vec![Data]),
        ],
        Dbms::Mysql => vec![
            ("mysql-oltp", vec![Data, Data, Log, Log]),
            ("mysql-doublewrite", vec![Data, Data]),
        ],
        Dbms::Oracle => vec![
            ("oracle-oltp", vec![Data, Log]),
            ("oracle-scan", vec![Data]),
        ],
        Dbms::Etcd => vec![("etcd-wal", vec![Log, Data]), ("etcd-fio", vec![Log])],
    }
}

/// The roles `dbms` has: SQL Server's four, the others' data and log.
pub fn roles(dbms: Dbms) -> &'static [Role] {
    match dbms {
        Dbms::Sqlserver => &[Role::Data, Role::Log, Role::Tempdb, Role::Backup],
        _ => &[Role::Data, Role::Log],
    }
}

/// The sweeps of a role: the database's pattern there (its page size for
/// data's random reads; its log's write size), over queue depth and threads.
/// Every database's sweeps open their files direct and write-through: they
/// measure how the device scales, which page-cache hits would hide.
pub fn sweep_shape(dbms: Dbms, role: Role) -> (RwMode, u64, &'static str, &'static str) {
    let page: u64 = match dbms {
        Dbms::Mysql => 16 << 10,
        Dbms::Etcd => 4 << 10,
        _ => 8 << 10,
    };
    // SQL Server's largest log block (60 KiB); PostgreSQL's WAL page and
    // InnoDB's redo write-ahead block (8 KiB); a commit's few Oracle redo
    // blocks (8 KiB, iosim's choice); etcd's 2,300-byte appends rounded up
    // to the 4 KiB direct I/O writes.
    let log: u64 = match dbms {
        Dbms::Sqlserver => 60 << 10,
        Dbms::Etcd => 4 << 10,
        _ => 8 << 10,
    };
    match role {
        Role::Data => (RwMode::Randread, page, "qd=1..64x2", "threads=1..8x2"),
        Role::Log => (RwMode::Write, log, "qd=1..32x2", "threads=1..4x2"),
        Role::Tempdb => (RwMode::Randrw, page, "qd=1..64x2", "threads=1..8x2"),
        Role::Backup => (RwMode::Write, 1 << 20, "qd=1..16x2", "threads=1..4x2"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_database_runs_its_own_profiles_on_its_roles() {
        for d in Dbms::ALL {
            let list = profiles(d, |_| true);
            assert!(!list.is_empty());
            for (name, roles_of) in &list {
                let p = crate::profile::Profile::load(name).unwrap();
                assert_eq!(p.dbms, d, "{name}");
                assert_eq!(p.target_names().len(), roles_of.len(), "{name}");
                // Each target's role is the role its workloads are judged by.
                for (t, r) in p.target_names().iter().zip(roles_of) {
                    let w = p.workloads.iter().find(|w| &w.target == t).unwrap();
                    assert_eq!(w.role, *r, "{name} {t}");
                }
                assert!(roles_of.iter().all(|r| roles(d).contains(r)), "{name}");
            }
            assert!(!settings(d).is_empty());
            for s in settings(d) {
                assert!(
                    doc_sources(d).iter().any(|x| x.tag == s.source_tag),
                    "{d}: {}",
                    s.source_tag
                );
            }
        }
        // SQL Server's optional roles add theirs; the others have none.
        assert_eq!(profiles(Dbms::Sqlserver, |_| false).len(), 5);
        assert_eq!(profiles(Dbms::Sqlserver, |_| true).len(), 8);
        assert_eq!(roles(Dbms::Etcd), [Role::Data, Role::Log]);
    }

    #[test]
    fn sweeps_use_each_databases_page_and_log_write() {
        assert_eq!(sweep_shape(Dbms::Sqlserver, Role::Log).1, 60 << 10);
        assert_eq!(sweep_shape(Dbms::Postgresql, Role::Log).1, 8 << 10);
        assert_eq!(sweep_shape(Dbms::Mysql, Role::Data).1, 16 << 10);
        assert_eq!(sweep_shape(Dbms::Etcd, Role::Log).1, 4 << 10);
        assert_eq!(sweep_shape(Dbms::Sqlserver, Role::Data).1, 8 << 10);
        for d in Dbms::ALL {
            for r in roles(d) {
                // The sweeps are direct: a size direct I/O accepts.
                assert_eq!(sweep_shape(d, *r).1 % 4096, 0);
            }
        }
    }

    #[test]
    fn the_settings_and_the_guidance_name_the_database() {
        let pg: Vec<String> = settings(Dbms::Postgresql)
            .iter()
            .map(Setting::pair)
            .collect();
        assert!(pg.contains(&"wal_sync_method=fdatasync".to_string()));
        assert!(pg.contains(&"full_page_writes=on".to_string()));
        let my: Vec<String> = settings(Dbms::Mysql).iter().map(Setting::pair).collect();
        for want in [
            "innodb_flush_method=O_DIRECT",
            "innodb_flush_log_at_trx_commit=1",
            "sync_binlog=1",
        ] {
            assert!(my.contains(&want.to_string()), "{my:?}");
        }
        assert!(latency_guidance(Dbms::Postgresql).starts_with("PostgreSQL publishes no"));
        assert!(latency_guidance(Dbms::Etcd).contains("under 10 ms"));
        assert!(simulator_note(Dbms::Sqlserver).is_none());
        assert!(simulator_note(Dbms::Mysql)
            .unwrap()
            .contains("page integrity"));
        assert!(documented_only_note(Dbms::Oracle).is_some());
        assert!(documented_only_note(Dbms::Etcd).is_none());
    }
}
