//! MySQL and MariaDB with InnoDB: O_DIRECT 16 KiB pages, the doublewrite
//! buffer, redo and binary log flushed per commit.

use super::{Database, ProfileFile, SettingRow};
use crate::guidance::Source;
use crate::verdict::Role;

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

/// MySQL/MariaDB (InnoDB).
pub struct MySql;

impl Database for MySql {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn title(&self) -> &'static str {
        "MySQL/MariaDB (InnoDB)"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["mariadb", "innodb"]
    }

    fn help(&self) -> &'static str {
        "MySQL/MariaDB InnoDB: O_DIRECT 16 KiB pages, doublewrite, redo and binary log flushed per commit"
    }

    fn role_name(&self, role: Role) -> &'static str {
        match role {
            Role::Log => "redo",
            r => r.name(),
        }
    }

    fn profile_files(&self) -> &'static [ProfileFile] {
        &[
            ("mysql-oltp", include_str!("../../profiles/mysql-oltp.toml")),
            (
                "mysql-doublewrite",
                include_str!("../../profiles/mysql-doublewrite.toml"),
            ),
        ]
    }

    fn profiles(&self, _has: &dyn Fn(Role) -> bool) -> Vec<(&'static str, Vec<Role>)> {
        use Role::{Data, Log};
        vec![
            ("mysql-oltp", vec![Data, Data, Log, Log]),
            ("mysql-doublewrite", vec![Data, Data]),
        ]
    }

    /// InnoDB's default page.
    fn page_size(&self) -> u64 {
        16 << 10
    }

    fn doc_sources(&self) -> &'static [Source] {
        &[INNODB_PARAMS, INNODB_DOUBLEWRITE, MYSQL_BINLOG]
    }

    fn settings(&self) -> &'static [SettingRow] {
        &[
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
        ]
    }

    fn knee_advice(&self, role: Role, _at: f64, what: &str) -> Option<String> {
        (role == Role::Data).then(|| {
            format!("innodb_io_capacity_max and more I/O threads buy nothing past {what} here")
        })
    }
}
