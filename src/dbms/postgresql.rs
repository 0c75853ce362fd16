//! PostgreSQL: data and WAL through the page cache, an fdatasync per
//! commit; it publishes no storage latency target.

use super::{Database, ProfileFile, SettingRow};
use crate::guidance::Source;
use crate::verdict::Role;

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

/// PostgreSQL.
pub struct PostgreSql;

impl Database for PostgreSql {
    fn name(&self) -> &'static str {
        "postgresql"
    }

    fn title(&self) -> &'static str {
        "PostgreSQL"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["postgres", "pg"]
    }

    fn help(&self) -> &'static str {
        "PostgreSQL: data and WAL through the page cache, fdatasync per commit"
    }

    fn role_name(&self, role: Role) -> &'static str {
        match role {
            Role::Log => "wal",
            r => r.name(),
        }
    }

    fn profile_files(&self) -> &'static [ProfileFile] {
        &[
            ("postgresql-oltp", include_str!("../../profiles/postgresql-oltp.toml")),
            (
                "postgresql-checkpoint",
                include_str!("../../profiles/postgresql-checkpoint.toml"),
            ),
            (
                "postgresql-seqscan",
                include_str!("../../profiles/postgresql-seqscan.toml"),
            ),
        ]
    }

    fn profiles(&self, _has: &dyn Fn(Role) -> bool) -> Vec<(&'static str, Vec<Role>)> {
        use Role::{Data, Log};
        vec![
            ("postgresql-oltp", vec![Data, Log]),
            ("postgresql-checkpoint", vec![Data]),
            ("postgresql-seqscan", vec![Data]),
        ]
    }

    fn doc_sources(&self) -> &'static [Source] {
        &[PG_WAL, PG_WAL_CONFIG, PG_PAGES]
    }

    fn settings(&self) -> &'static [SettingRow] {
        &[
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
            ),
        ]
    }

    fn knee_advice(&self, role: Role, at: f64, _what: &str) -> Option<String> {
        (role == Role::Data).then(|| {
            format!(
                "effective_io_concurrency and maintenance_io_concurrency above {at} buy nothing here"
            )
        })
    }
}
