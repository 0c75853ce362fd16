//! Microsoft SQL Server: the default database, whose own published latency
//! guidance is the `--rules` table and whose I/O the simulator issues.

use super::{Database, Flushes, Guidance, ProfileFile, SettingRow};
use crate::guidance::Source;
use crate::verdict::Role;

/// Bob Dorr's SQL Server I/O Basics.
pub const IO_BASICS: Source = Source {
    tag: "[IO-Basics]",
    title: "Bob Dorr, Microsoft SQL Server I/O Basics, chapters 1 and 2 (Microsoft white papers): SQL Server opens its files with FILE_FLAG_NO_BUFFERING and FILE_FLAG_WRITE_THROUGH",
    url: "https://technet.microsoft.com/en-us/library/cc966500.aspx",
};

/// SQL Server.
pub struct SqlServer;

impl Database for SqlServer {
    fn name(&self) -> &'static str {
        "sqlserver"
    }

    fn title(&self) -> &'static str {
        "SQL Server"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["mssql", "sql-server"]
    }

    fn help(&self) -> &'static str {
        "SQL Server: data, log (tempdb, backup); O_DIRECT and O_DSYNC as it opens its files (default)"
    }

    fn roles(&self) -> &'static [Role] {
        &[Role::Data, Role::Log, Role::Tempdb, Role::Backup]
    }

    fn profile_files(&self) -> &'static [ProfileFile] {
        &[
            ("oltp", include_str!("../../profiles/oltp.toml")),
            ("oltp-with-log", include_str!("../../profiles/oltp-with-log.toml")),
            ("log-writer", include_str!("../../profiles/log-writer.toml")),
            ("checkpoint", include_str!("../../profiles/checkpoint.toml")),
            ("read-ahead", include_str!("../../profiles/read-ahead.toml")),
            ("bulk-insert", include_str!("../../profiles/bulk-insert.toml")),
            ("dbcc-checkdb", include_str!("../../profiles/dbcc-checkdb.toml")),
            ("index-rebuild", include_str!("../../profiles/index-rebuild.toml")),
            ("backup", include_str!("../../profiles/backup.toml")),
            ("restore", include_str!("../../profiles/restore.toml")),
            ("tempdb", include_str!("../../profiles/tempdb.toml")),
        ]
    }

    fn profiles(&self, has: &dyn Fn(Role) -> bool) -> Vec<(&'static str, Vec<Role>)> {
        use Role::{Backup, Data, Log, Tempdb};
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

    /// Its largest log block.
    fn log_write(&self) -> u64 {
        60 << 10
    }

    fn doc_sources(&self) -> &'static [Source] {
        &[IO_BASICS]
    }

    fn settings(&self) -> &'static [SettingRow] {
        &[(
            "file flags",
            "FILE_FLAG_NO_BUFFERING|FILE_FLAG_WRITE_THROUGH",
            "data and log files unbuffered and write-through: O_DIRECT and O_DSYNC here",
            IO_BASICS,
        )]
    }

    fn guidance(&self) -> Guidance {
        Guidance::RulesTable
    }

    fn flushes(&self) -> Flushes {
        Flushes::WriteThrough
    }

    fn simulated(&self) -> bool {
        true
    }

    fn knee_advice(&self, _role: Role, _at: f64, _what: &str) -> Option<String> {
        Some("SQL Server has no queue-depth setting: more concurrent work on this volume (sessions, checkpoints, read-ahead) adds only latency; spread files over more volumes to gain throughput".to_string())
    }
}
