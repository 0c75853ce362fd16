//! Oracle Database, modelled from its documentation only: direct
//! single-block and multiblock reads, DBWR batches, LGWR redo.

use super::{Database, ProfileFile, Provenance, SettingRow};
use crate::guidance::Source;
use crate::verdict::Role;

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

/// Oracle Database.
pub struct Oracle;

impl Database for Oracle {
    fn name(&self) -> &'static str {
        "oracle"
    }

    fn title(&self) -> &'static str {
        "Oracle Database"
    }

    fn help(&self) -> &'static str {
        "Oracle (documented only): direct single-block and multiblock reads, DBWR batches, LGWR redo"
    }

    fn role_name(&self, role: Role) -> &'static str {
        match role {
            Role::Log => "redo",
            r => r.name(),
        }
    }

    fn profile_files(&self) -> &'static [ProfileFile] {
        &[
            ("oracle-oltp", include_str!("../../profiles/oracle-oltp.toml")),
            ("oracle-scan", include_str!("../../profiles/oracle-scan.toml")),
        ]
    }

    fn profiles(&self, _has: &dyn Fn(Role) -> bool) -> Vec<(&'static str, Vec<Role>)> {
        use Role::{Data, Log};
        vec![("oracle-oltp", vec![Data, Log]), ("oracle-scan", vec![Data])]
    }

    /// A commit's few redo blocks (iosim's choice).
    fn log_write(&self) -> u64 {
        8 << 10
    }

    fn doc_sources(&self) -> &'static [Source] {
        &[ORACLE_FSIO, ORACLE_WAITS, ORACLE_MBRC]
    }

    fn settings(&self) -> &'static [SettingRow] {
        &[
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
        ]
    }

    fn provenance(&self) -> Provenance {
        Provenance::DocumentedOnly
    }
}
