//! SQLite in WAL mode with `PRAGMA synchronous=FULL`: WAL appends synced at
//! every commit, checkpoints copying WAL pages into the database file, then
//! syncing it. Its profile replays a block-layer capture of SQLite 3.40
//! (bench/dbengines.py --engine sqlite); SQLite publishes no storage
//! latency target.

use super::{Database, ProfileFile, Provenance, SettingRow};
use crate::guidance::Source;
use crate::verdict::Role;

/// SQLite's write-ahead logging.
pub const SQLITE_WAL: Source = Source {
    tag: "[SQLite-WAL]",
    title: "SQLite documentation, Write-Ahead Logging: changes are appended to a separate WAL file; writers sync the WAL on every transaction commit when PRAGMA synchronous is FULL; a checkpoint transfers the WAL's pages back into the database file, by default when the WAL reaches 1000 pages",
    url: "https://www.sqlite.org/wal.html",
};
/// SQLite's PRAGMA statements.
pub const SQLITE_PRAGMA: Source = Source {
    tag: "[SQLite-pragma]",
    title: "SQLite documentation, Pragma statements: synchronous (FULL: the xSync method makes all content safe on the disk before continuing; in WAL mode the database file is synced after each checkpoint), wal_autocheckpoint (1000 pages by default), page_size (4096 bytes by default)",
    url: "https://www.sqlite.org/pragma.html",
};

/// SQLite (WAL mode).
pub struct Sqlite;

impl Database for Sqlite {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn title(&self) -> &'static str {
        "SQLite (WAL)"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["sqlite3"]
    }

    fn help(&self) -> &'static str {
        "SQLite WAL mode: WAL appends with fdatasync per commit (synchronous=FULL), cache-miss page reads, checkpoints into the database file"
    }

    fn role_name(&self, role: Role) -> &'static str {
        match role {
            Role::Log => "wal",
            Role::Data => "db",
            r => r.name(),
        }
    }

    fn profile_files(&self) -> &'static [ProfileFile] {
        &[("sqlite-wal", include_str!("../../profiles/sqlite-wal.toml"))]
    }

    fn profiles(&self, _has: &dyn Fn(Role) -> bool) -> Vec<(&'static str, Vec<Role>)> {
        vec![("sqlite-wal", vec![Role::Log, Role::Data])]
    }

    /// Its default page.
    fn page_size(&self) -> u64 {
        4 << 10
    }

    fn doc_sources(&self) -> &'static [Source] {
        &[SQLITE_WAL, SQLITE_PRAGMA]
    }

    fn settings(&self) -> &'static [SettingRow] {
        &[
            (
                "journal_mode",
                "WAL",
                "a commit appends its pages to the -wal file; readers read the database file and the WAL's newest frames",
                SQLITE_WAL,
            ),
            (
                "synchronous",
                "FULL",
                "the WAL is synced (fdatasync on Linux) at every commit, before the commit returns",
                SQLITE_PRAGMA,
            ),
            (
                "wal_autocheckpoint",
                "1000",
                "a checkpoint copies 1000 pages of WAL into the database file, then syncs it",
                SQLITE_PRAGMA,
            ),
            (
                "page_size",
                "4096",
                "database pages and WAL frames of 4 KiB",
                SQLITE_PRAGMA,
            ),
        ]
    }

    fn provenance(&self) -> Provenance {
        Provenance::Checked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::{Dbms, Flushes, Guidance};

    #[test]
    fn sqlite_is_registered_with_its_wal_its_settings_and_its_provenance() {
        let d = Dbms::from_name("SQLite3").unwrap();
        assert_eq!(d.name(), "sqlite");
        assert_eq!(d.role_name(Role::Log), "wal");
        assert_eq!(d.role_name(Role::Data), "db");
        assert_eq!(d.page_size(), 4096);
        // Its commits flush the WAL, judged against the log's band; it
        // publishes no latency target of its own.
        assert!(matches!(d.flushes(), Flushes::PerCommit));
        assert_eq!(d.guidance(), Guidance::GeneralBands);
        assert_eq!(d.provenance(), Provenance::Checked);
        let pairs: Vec<String> = d.settings().iter().map(|s| format!("{}={}", s.0, s.1)).collect();
        for want in ["journal_mode=WAL", "synchronous=FULL", "wal_autocheckpoint=1000"] {
            assert!(pairs.iter().any(|p| p == want), "{pairs:?}");
        }
        // Its profile says where its numbers come from, and runs on both roles.
        let (name, text) = d.profile_files()[0];
        let p = crate::profile::Profile::parse(text, name).unwrap();
        assert!(p.source.starts_with("bench/dbengines.py --engine sqlite"));
        assert_eq!(d.profiles(&|_| true), vec![(name, vec![Role::Log, Role::Data])]);
    }
}
